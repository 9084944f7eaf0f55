//! Integration tests: park against the deterministic fake agent in a real tmux server.
//!
//! Each test owns a Sandbox (private tmux socket, throwaway HOME and PARK_HOME). The fake agent is
//! installed as `claude`, so park's real detection, guards, kill and resume paths all run.

use crate::common::*;
use park_e2e::*;
use park_protocol::{RowState, Status};
use std::time::Duration;

const FAKE: &str = env!("CARGO_BIN_EXE_fake-agent");

struct Setup {
    sb: Sandbox,
}

impl Setup {
    fn new() -> Setup {
        let sb = Sandbox::new();
        install_shims(&sb, Some(FAKE));
        Setup { sb }
    }

    /// A shell pane in project `proj` running `claude <args>` typed at the prompt, with one turn done.
    fn agent_in_shell(&self, name: &str, args: &str, env: &[(&str, &str)]) -> (String, String) {
        let dir = self.sb.project_dir(name);
        let pane = self.sb.new_shell_window("w", name, &dir, env);
        self.sb.type_line(&pane, &format!("claude {args}"));
        self.sb.wait_for(&pane, CLAUDE_READY, SECS(15)).unwrap();
        self.sb.type_line(&pane, "first prompt");
        self.sb.wait_for(&pane, "PARKTEST-OK", SECS(15)).unwrap();
        let r = wait_row(&self.sb, &pane, SECS(10), |r| r.status == Status::Idle);
        (pane, r.session_id.expect("session id"))
    }
}

#[test]
fn park_then_unpark_round_trip_in_a_shell_pane() {
    let s = Setup::new();
    let sb = &s.sb;
    let (pane, sid) = s.agent_in_shell("p1", "--dangerously-skip-permissions --model opus", &[]);
    let before = row(sb, &pane).unwrap();
    assert_eq!(before.state, RowState::Live);
    assert_eq!(before.session_source.as_deref(), Some("status-file"));
    let pid = before.pid.unwrap();
    assert!(before.bytes > 0 && before.uss_bytes > 0);

    let (c, oc, why) = outcome(sb, &["park", &pane]);
    assert_eq!((c, oc.as_str()), (0, "parked"), "{why:?}");
    assert!(wait_gone(pid, SECS(5)), "agent process must be gone");
    assert!(sb.pane_alive(&pane), "pane must stay");
    let es = entries(sb);
    assert_eq!(es.len(), 1);
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&es[0]).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert_eq!(
        std::fs::metadata(sb.park_home.join("parked"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o700
    );
    let parked = row(sb, &pane).unwrap();
    assert_eq!(parked.state, RowState::Parked);
    assert!(parked.freed_bytes.unwrap() > 0);
    assert_eq!(parked.session_id.as_deref(), Some(sid.as_str()));
    // The way back is typed, not run; the pill and status are pushed to tmux.
    sb.wait_for(&pane, r"park unpark \.\s*$", SECS(5)).unwrap();
    assert!(sb
        .tmux(&["show", "-p", "-q", "-t", &pane, "-v", "@park_pill"])
        .unwrap()
        .contains('❄'));
    assert!(sb
        .tmux(&["show", "-g", "-v", "@park_status"])
        .unwrap()
        .starts_with("❄ 1"));
    assert_eq!(
        text(&park(sb, &["status"])).trim_end().chars().next(),
        Some('❄')
    );
    // The archive holds the transcript before the kill.
    assert!(sb
        .park_home
        .join("archive")
        .join(&sid)
        .join("transcript.jsonl")
        .is_file());

    let (c, oc, why) = outcome(sb, &["unpark", &pane]);
    assert_eq!(
        (c, oc.as_str()),
        (0, "unparked"),
        "{why:?}\n{}",
        sb.capture(&pane)
    );
    let back = wait_row(sb, &pane, SECS(10), |r| r.state == RowState::Live);
    assert_eq!(
        back.session_id.as_deref(),
        Some(sid.as_str()),
        "same session in the same pane"
    );
    // Whitelisted flags survived the round trip (the fake echoes its flags in its header).
    sb.wait_for(
        &pane,
        r"\[--dangerously-skip-permissions --model opus\]",
        SECS(5),
    )
    .unwrap();
    assert!(entries(sb).is_empty());
    assert_eq!(
        sb.tmux(&["show", "-p", "-q", "-t", &pane, "-v", "@park_pill"])
            .unwrap()
            .trim(),
        ""
    );
    sb.type_line(&pane, "after resume");
    sb.wait_for(&pane, "Fake reply #2", SECS(10)).unwrap();
    let tr = claude_transcript(&sb.home, &sb.work.join("p1"), &sid);
    assert!(
        std::fs::read_to_string(tr)
            .unwrap()
            .contains("after resume"),
        "new prompt lands in the same transcript"
    );
    assert_eq!(claude_pids_for(&sb.home, &sid).len(), 1);
}

#[test]
fn enter_on_the_prefilled_line_resumes_in_place() {
    let s = Setup::new();
    let sb = &s.sb;
    let (pane, sid) = s.agent_in_shell("p2", "", &[]);
    assert_eq!(outcome(sb, &["park", &pane]).1, "parked");
    sb.wait_for(&pane, r"park unpark \.\s*$", SECS(5)).unwrap();
    sb.press_enter(&pane);
    wait_row(sb, &pane, SECS(10), |r| {
        r.state == RowState::Live && r.session_id.as_deref() == Some(sid.as_str())
    });
    poll(SECS(5), || entries(sb).is_empty().then_some(())).expect("verifier clears the entry");
}

#[test]
fn agent_as_the_pane_process_keeps_the_pane_with_a_placeholder() {
    let s = Setup::new();
    let sb = &s.sb;
    let dir = sb.project_dir("own");
    let pane = sb.new_agent_window(
        "w",
        "own",
        &dir,
        &[] as &[(&str, &str)],
        &["claude", "--model", "sonnet"],
    );
    sb.wait_for(&pane, CLAUDE_READY, SECS(15)).unwrap();
    sb.type_line(&pane, "hello");
    sb.wait_for(&pane, "PARKTEST-OK", SECS(15)).unwrap();
    let sid = wait_row(sb, &pane, SECS(10), |r| r.status == Status::Idle)
        .session_id
        .unwrap();
    assert_eq!(outcome(sb, &["park", &pane]).1, "parked");
    sb.wait_for(&pane, "Press Enter to resume", SECS(5))
        .unwrap();
    assert!(sb.pane_alive(&pane));
    assert_eq!(outcome(sb, &["unpark", &pane]).1, "unparked");
    let r = wait_row(sb, &pane, SECS(10), |r| r.state == RowState::Live);
    assert_eq!(r.session_id.as_deref(), Some(sid.as_str()));
    sb.wait_for(&pane, r"\[--model sonnet\]", SECS(5)).unwrap();
}

#[test]
fn a_draft_is_never_parked() {
    let s = Setup::new();
    let sb = &s.sb;
    let (pane, _) = s.agent_in_shell("d", "", &[]);
    let pid = row(sb, &pane).unwrap().pid.unwrap();
    sb.type_text(&pane, "half written thought");
    wait_row(sb, &pane, SECS(5), |r| r.status == Status::Draft);
    let (c, oc, why) = outcome(sb, &["park", &pane]);
    assert_eq!((c, oc.as_str()), (1, "refused"));
    assert!(
        why.unwrap().contains("half written thought"),
        "the draft is quoted back"
    );
    assert!(pid_alive(pid));
    assert!(entries(sb).is_empty());
}

#[test]
fn busy_waiting_and_background_shell_are_refused() {
    let s = Setup::new();
    let sb = &s.sb;
    let (pane, _) = s.agent_in_shell("b", "", &[]);
    let pid = row(sb, &pane).unwrap().pid.unwrap();
    sb.type_line(&pane, "think hard [slow 30]");
    sb.wait_for(&pane, "esc to interrupt", SECS(5)).unwrap();
    let (c, oc, why) = outcome(sb, &["park", &pane]);
    assert_eq!((c, oc.as_str()), (1, "refused"), "{why:?}");
    assert!(why.unwrap().starts_with("busy"));
    assert!(pid_alive(pid));

    let (pane2, _) = s.agent_in_shell("wt", "", &[]);
    sb.type_line(&pane2, "touch a file [wait]");
    sb.wait_for(&pane2, "Do you want to proceed", SECS(5))
        .unwrap();
    let (c, _, why) = outcome(sb, &["park", &pane2]);
    assert_eq!(c, 1);
    assert!(why.unwrap().contains("waiting"));

    let (pane3, _) = s.agent_in_shell("sh", "", &[]);
    sb.type_line(&pane3, "run in background [bg 60]");
    wait_row(sb, &pane3, SECS(10), |r| r.status == Status::Shell);
    let (c, _, why) = outcome(sb, &["park", &pane3]);
    assert_eq!(c, 1);
    assert!(why.unwrap().contains("background shell"));
    assert!(entries(sb).is_empty());
}

#[test]
fn a_sticky_busy_status_file_is_believed() {
    let s = Setup::new();
    let sb = &s.sb;
    let (pane, _) = s.agent_in_shell_mode("sticky", "sticky-busy");
    let (c, _, why) = outcome(sb, &["park", &pane]);
    assert_eq!(c, 1);
    assert!(why.unwrap().contains("status file says busy"));
}

impl Setup {
    fn agent_in_shell_mode(&self, name: &str, mode: &str) -> (String, Option<String>) {
        let dir = self.sb.project_dir(name);
        let pane = self
            .sb
            .new_shell_window("w", name, &dir, &[("FAKE_AGENT_MODE", mode)]);
        self.sb.type_line(&pane, "claude");
        self.sb.wait_for(&pane, CLAUDE_READY, SECS(15)).unwrap();
        self.sb.type_line(&pane, "first prompt");
        self.sb.wait_for(&pane, "PARKTEST-OK", SECS(15)).unwrap();
        let r = wait_row(&self.sb, &pane, SECS(10), |r| r.session_id.is_some());
        (pane, r.session_id)
    }
}

/// A terminal's late reply to a query the agent sent (zellij answers Copilot's colour-scheme
/// query with `ESC[?997;1n`, seen arriving after the park killed it) lands in the shell's line:
/// park clears it and still leaves `park unpark .` at a clean prompt.
#[test]
fn a_terminal_reply_left_for_the_shell_does_not_cost_the_prefill() {
    let s = Setup::new();
    let sb = &s.sb;
    let (pane, _) = s.agent_in_shell_mode("late", "late-reply");
    let (c, oc, why) = outcome(sb, &["park", &pane]);
    assert_eq!((c, oc.as_str()), (0, "parked"), "{why:?}");
    let screen = sb
        .wait_for(&pane, r"park-test\$ park unpark \.\s*$", SECS(10))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(!screen.contains("997"), "{screen}");
}

#[test]
fn cpu_gate_refuses_and_force_waives_only_it() {
    let s = Setup::new();
    let sb = &s.sb;
    let (pane, _) = s.agent_in_shell("cpu", "", &[("FAKE_AGENT_CPU", "1")]);
    let (c, _, why) = outcome(sb, &["park", &pane]);
    assert_eq!(c, 1);
    assert!(why.unwrap().contains("CPU"));
    sb.type_text(&pane, "draft");
    wait_row(sb, &pane, SECS(5), |r| r.status == Status::Draft);
    let (c, _, why) = outcome(sb, &["park", "--force", &pane]);
    assert_eq!(c, 1, "--force must not waive the draft guard");
    assert!(why.unwrap().contains("unsent"));
    sb.send_keys(&pane, &["BSpace", "BSpace", "BSpace", "BSpace", "BSpace"]);
    wait_row(sb, &pane, SECS(5), |r| r.status == Status::Idle);
    assert_eq!(outcome(sb, &["park", "--force", &pane]).1, "parked");
}

#[test]
fn kill_anyway_needs_a_terminal() {
    let s = Setup::new();
    let sb = &s.sb;
    let (pane, _) = s.agent_in_shell("ka", "", &[]);
    sb.type_text(&pane, "draft text");
    wait_row(sb, &pane, SECS(5), |r| r.status == Status::Draft);
    let o = park(sb, &["park", "--kill-anyway", &pane]);
    assert_eq!(code(&o), 1);
    assert!(text(&o).contains("needs a terminal"));
    assert!(entries(sb).is_empty());
    assert_eq!(row(sb, &pane).unwrap().state, RowState::Live);
}

#[test]
fn the_whole_tree_dies_even_setsid_children_and_term_ignorers() {
    let s = Setup::new();
    let sb = &s.sb;
    let (pane, _) = s.agent_in_shell_mode("tree", "ignore-term,setsid-child,dev-server,zombie");
    let r = row(sb, &pane).unwrap();
    let pid = r.pid.unwrap();
    let kids = descendants(pid);
    assert!(kids.len() >= 3, "fake spawned its children: {kids:?}");
    let (c, oc, why) = outcome(sb, &["park", &pane]);
    assert_eq!((c, oc.as_str()), (0, "parked"), "{why:?}");
    for p in std::iter::once(pid).chain(kids) {
        assert!(wait_gone(p, SECS(3)), "pid {p} survived the park");
    }
    assert!(sb.pane_alive(&pane));
}

#[test]
fn park_refuses_the_pane_it_runs_in() {
    let s = Setup::new();
    let sb = &s.sb;
    let (pane, _) = s.agent_in_shell("self", "", &[]);
    let sock = sb.tmux(&["display", "-p", "#{socket_path}"]).unwrap();
    let tmux_env = format!("{},1,0", sock.trim());
    let o = park_env(
        sb,
        &["park", ".", "--json"],
        &[("TMUX", &tmux_env), ("TMUX_PANE", &pane)],
    );
    assert_eq!(code(&o), 1);
    assert!(text(&o).contains("the pane park is running in"));
    let o = park(sb, &["park", "."]);
    assert_eq!(code(&o), 1);
    assert!(text(&o).contains("TMUX_PANE / ZELLIJ_PANE_ID is not set"));
    assert_eq!(row(sb, &pane).unwrap().state, RowState::Live);
}

#[test]
fn unpark_of_a_session_already_running_elsewhere_cleans_up_and_starts_nothing() {
    let s = Setup::new();
    let sb = &s.sb;
    let (pane, sid) = s.agent_in_shell("dup", "", &[]);
    assert_eq!(outcome(sb, &["park", &pane]).1, "parked");
    // Someone resumes it by hand in another pane.
    let other = sb.new_shell_window("w", "other", &sb.work.join("dup"), &[] as &[(&str, &str)]);
    sb.type_line(&other, &format!("claude --resume {sid}"));
    sb.wait_for(&other, CLAUDE_READY, SECS(10)).unwrap();
    let (c, oc, _) = outcome(sb, &["unpark", &pane]);
    assert_eq!((c, oc.as_str()), (0, "already-running"));
    assert!(entries(sb).is_empty(), "parked state torn down");
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(
        claude_pids_for(&sb.home, &sid).len(),
        1,
        "never two processes on one transcript"
    );
}

#[test]
fn concurrent_unparks_resume_exactly_once() {
    let s = Setup::new();
    let sb = &s.sb;
    let (pane, sid) = s.agent_in_shell("race", "", &[]);
    assert_eq!(outcome(sb, &["park", &pane]).1, "parked");
    sb.wait_for(&pane, r"park unpark \.\s*$", SECS(5)).unwrap();
    let kids: Vec<_> = (0..3)
        .map(|_| {
            park_cmd(sb, &[])
                .args(["unpark", &pane, "--json"])
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let outs: Vec<String> = kids
        .into_iter()
        .map(|k| String::from_utf8_lossy(&k.wait_with_output().unwrap().stdout).into_owned())
        .collect();
    let unparked = outs
        .iter()
        .filter(|o| o.contains("\"outcome\":\"unparked\""))
        .count();
    assert_eq!(unparked, 1, "exactly one resume: {outs:?}");
    wait_row(sb, &pane, SECS(10), |r| r.state == RowState::Live);
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(claude_pids_for(&sb.home, &sid).len(), 1);
}

#[test]
fn a_pane_that_is_gone_gets_a_new_window_in_its_session() {
    let s = Setup::new();
    let sb = &s.sb;
    let (pane, sid) = s.agent_in_shell("gone", "", &[]);
    assert_eq!(outcome(sb, &["park", &pane]).1, "parked");
    sb.tmux(&["kill-pane", "-t", &pane]).unwrap();
    let (c, oc, why) = outcome(sb, &["unpark", &pane]);
    assert_eq!((c, oc.as_str()), (0, "unparked"), "{why:?}");
    // Issue 34 item 14: it says where it went, and the window keeps the old one's name.
    let why = why.unwrap_or_default();
    assert!(
        why.contains(&format!(
            "its pane {pane} was gone: resumed in a new window"
        )) && why.contains("w:")
            && why.contains("(gone)"),
        "{why}"
    );
    let r = poll(SECS(10), || {
        ls(sb)
            .rows
            .into_iter()
            .find(|r| r.session_id.as_deref() == Some(sid.as_str()) && r.state == RowState::Live)
    })
    .unwrap();
    assert_ne!(r.pane, pane);
    assert_eq!(r.session, "w");
    assert_eq!(
        r.window, "gone",
        "named as the old window was, not after the agent"
    );
}

#[test]
fn unpark_refuses_to_type_into_a_busy_pane() {
    let s = Setup::new();
    let sb = &s.sb;
    let (pane, _) = s.agent_in_shell("typed", "", &[]);
    assert_eq!(outcome(sb, &["park", &pane]).1, "parked");
    sb.wait_for(&pane, r"park unpark \.\s*$", SECS(5)).unwrap();
    sb.send_keys(&pane, &["C-u"]);
    sb.type_line(&pane, "sleep 30");
    std::thread::sleep(Duration::from_millis(300));
    let (c, oc, why) = outcome(sb, &["unpark", &pane]);
    assert_eq!((c, oc.as_str()), (1, "refused"));
    assert!(why.unwrap().contains("not at a bare shell prompt"));
    assert_eq!(entries(sb).len(), 1, "nothing lost");
}

#[test]
fn missing_transcript_refuses_unpark_or_starts_a_fresh_agent_on_the_archived_markdown() {
    let s = Setup::new();
    let sb = &s.sb;
    let (pane, sid) = s.agent_in_shell("mt", "", &[]);
    assert_eq!(outcome(sb, &["park", &pane]).1, "parked");
    let tr = claude_transcript(&sb.home, &sb.work.join("mt"), &sid);
    std::fs::rename(&tr, tr.with_extension("moved")).unwrap();
    // With the archived copy gone too, nothing can bring it back: refuse, keep the entry.
    let copy = sb
        .park_home
        .join("archive")
        .join(&sid)
        .join("transcript.jsonl");
    std::fs::rename(&copy, copy.with_extension("moved")).unwrap();
    let md = copy.with_file_name("transcript.md");
    std::fs::rename(&md, md.with_extension("moved")).unwrap();
    let (c, oc, why) = outcome(sb, &["unpark", &pane]);
    assert_eq!((c, oc.as_str()), (1, "refused"));
    let why = why.unwrap();
    assert!(
        why.contains("missing") && why.contains("cannot be put back"),
        "{why}"
    );
    assert_eq!(entries(sb).len(), 1);
    assert!(!tr.exists(), "nothing was invented in its place");

    // With the rendered conversation still archived: a fresh agent in the cwd, told to read it,
    // and unpark says that is what it did (a new session; the old id is never reused).
    std::fs::rename(md.with_extension("moved"), &md).unwrap();
    let (c, oc, why) = outcome(sb, &["unpark", &pane]);
    assert_eq!((c, oc.as_str()), (0, "unparked"), "{why:?}");
    let why = why.unwrap_or_default();
    assert!(
        why.contains("fresh") && why.contains(&md.to_string_lossy().into_owned()),
        "{why}"
    );
    let back = wait_row(sb, &pane, SECS(10), |r| r.state == RowState::Live);
    let new_sid = back.session_id.clone().expect("the fresh agent's session");
    assert_ne!(
        new_sid, sid,
        "a fresh session, never a resume of the lost one"
    );
    let fresh_tr = claude_transcript(&sb.home, &sb.work.join("mt"), &new_sid);
    let first = poll(SECS(10), || std::fs::read_to_string(&fresh_tr).ok()).unwrap();
    assert!(
        first.contains("transcript.md") && first.contains(&sid),
        "the first prompt points at the archived conversation: {first}"
    );
    assert!(entries(sb).is_empty());
    assert!(!tr.exists(), "the lost transcript is not invented");
}

#[test]
fn corrupt_ledger_files_are_reported_never_dropped() {
    let s = Setup::new();
    let sb = &s.sb;
    let (pane, _) = s.agent_in_shell("cl", "", &[]);
    assert_eq!(outcome(sb, &["park", &pane]).1, "parked");
    let bad = sb.park_home.join("parked").join("claude-garbage.json");
    std::fs::write(&bad, b"{\"schema\": 1, \"id\": ").unwrap();
    let out = ls(sb);
    assert!(
        out.warnings
            .iter()
            .any(|w| w.contains("claude-garbage.json")),
        "{:?}",
        out.warnings
    );
    assert!(
        out.rows.iter().any(|r| r.state == RowState::Parked),
        "the good entry still shows"
    );
    let o = park(sb, &["unpark", "claude-garbage"]);
    assert_eq!(code(&o), 1);
    assert!(bad.exists());
    assert_eq!(outcome(sb, &["unpark", &pane]).1, "unparked");
    assert!(bad.exists(), "a corrupt file is never deleted");
}

#[test]
fn dead_multiplexer_and_hostile_targets_fail_clearly() {
    let s = Setup::new();
    let sb = &s.sb;
    let (pane, _) = s.agent_in_shell("h", "", &[]);
    let o = park_env(
        sb,
        &["park", &pane],
        &[("PARK_TMUX_SOCKET", "no-such-server-xyz")],
    );
    assert_eq!(code(&o), 1);
    assert!(
        text(&o).contains("names no running agent") && text(&o).contains("pane map"),
        "{}",
        text(&o)
    );
    let o = park_env(sb, &["ls"], &[("PARK_TMUX_SOCKET", "no-such-server-xyz")]);
    assert!(text(&o).contains("pane map unavailable"), "{}", text(&o));
    // A window of a session that does not exist says so (issue 35 item 9).
    let o = park(sb, &["park", "nosuch:0"]);
    assert_eq!(code(&o), 1);
    assert!(
        text(&o).contains("no session \"nosuch\"") && text(&o).contains("sessions: w"),
        "{}",
        text(&o)
    );
    for bad in ["%1;kill-server", "%", "a\nb"] {
        assert_eq!(
            code(&park(sb, &["park", bad])),
            2,
            "{bad:?} is a usage error"
        );
    }
    for bad in ["../../etc/passwd", "$(touch /tmp/pwned)", "`id`"] {
        let o = park(sb, &["unpark", bad]);
        assert_eq!(code(&o), 1);
    }
    assert!(!std::path::Path::new("/tmp/pwned").exists());
    // A bad target anywhere in the list is a usage error before anything is done.
    assert_eq!(code(&park(sb, &["park", &pane, "%2;x"])), 2);
    assert!(entries(sb).is_empty());
    assert_eq!(row(sb, &pane).unwrap().state, RowState::Live);
    assert_eq!(code(&park(sb, &["bogus-verb"])), 2);
}

#[test]
fn argv_is_the_fallback_when_there_is_no_status_file() {
    let s = Setup::new();
    let sb = &s.sb;
    let dir = sb.project_dir("argv");
    let pane = sb.new_shell_window("w", "argv", &dir, &[("FAKE_AGENT_MODE", "no-status-file")]);
    let sid = uuid_v4();
    sb.type_line(&pane, &format!("claude --session-id {sid}"));
    sb.wait_for(&pane, CLAUDE_READY, SECS(15)).unwrap();
    sb.type_line(&pane, "one");
    sb.wait_for(&pane, "PARKTEST-OK", SECS(15)).unwrap();
    let r = wait_row(sb, &pane, SECS(10), |r| r.session_id.is_some());
    assert_eq!(r.session_source.as_deref(), Some("argv"));
    assert_eq!(r.session_id.as_deref(), Some(sid.as_str()));
}

#[test]
fn targets_by_window_session_and_ambiguous_title() {
    let s = Setup::new();
    let sb = &s.sb;
    let (p1, _) = s.agent_in_shell("alpha", "", &[]);
    let (p2, _) = s.agent_in_shell("beta", "", &[]);
    // Both fake titles read "Claude Code": a title substring matching both is refused. A title
    // search sees every agent of the machine, the other tests' too: both of these are listed,
    // whatever else runs beside them.
    let o = park(sb, &["park", "--dry-run", "Claude"]);
    assert_eq!(code(&o), 1);
    assert!(
        text(&o).contains("the title matches") && text(&o).contains(&p1) && text(&o).contains(&p2),
        "{}",
        text(&o)
    );
    let (c, out) = action(sb, &["park", "--dry-run", "w:alpha"]);
    assert_eq!(c, 0);
    assert_eq!(out.results.len(), 1);
    assert_eq!(out.results[0].outcome.as_str(), "would-park");
    assert_eq!(out.results[0].pane.as_deref(), Some(p1.as_str()));
    let (c, out) = action(sb, &["park", "w"]);
    assert_eq!(c, 0, "{out:?}");
    assert_eq!(out.results.len(), 2);
    assert_eq!(
        out.results
            .iter()
            .filter(|r| r.outcome.as_str() == "parked")
            .count(),
        2
    );
    // Parking what is already parked is the asked state: exit 0.
    let (c, out) = action(sb, &["park", &p2]);
    assert_eq!((c, out.results[0].outcome.as_str()), (0, "already-parked"));
    let (c, _) = action(sb, &["unpark", "w"]);
    assert_eq!(c, 0);
}

#[test]
fn show_and_forget() {
    let s = Setup::new();
    let sb = &s.sb;
    let (pane, sid) = s.agent_in_shell("sf", "--model 'op;us'", &[]);
    assert_eq!(outcome(sb, &["park", &pane]).1, "parked");
    let o = park(sb, &["show", &pane]);
    assert_eq!(code(&o), 0);
    assert!(
        text(&o).contains(&format!("claude --resume {sid} --model 'op;us'")),
        "values are shell-quoted: {}",
        text(&o)
    );
    let o = park(sb, &["forget", &pane]);
    assert_eq!(code(&o), 0);
    assert!(entries(sb).is_empty());
    assert_eq!(
        sb.tmux(&["show", "-p", "-q", "-t", &pane, "-v", "@park_pill"])
            .unwrap()
            .trim(),
        ""
    );
    assert!(
        sb.park_home
            .join("archive")
            .join(&sid)
            .join("transcript.jsonl")
            .is_file(),
        "forget keeps the archive"
    );
}

#[test]
fn unpark_refuses_while_an_unidentifiable_claude_shares_the_config_dir() {
    let s = Setup::new();
    let sb = &s.sb;
    let (pane, _) = s.agent_in_shell("u1", "", &[]);
    assert_eq!(outcome(sb, &["park", &pane]).1, "parked");
    // A Claude with no status file and no id in argv could be running any session of this HOME.
    let dir = sb.project_dir("u2");
    let other = sb.new_shell_window("w", "u2", &dir, &[("FAKE_AGENT_MODE", "no-status-file")]);
    sb.type_line(&other, "claude");
    sb.wait_for(&other, CLAUDE_READY, SECS(15)).unwrap();
    let (c, oc, why) = outcome(sb, &["unpark", &pane]);
    assert_eq!((c, oc.as_str()), (1, "refused"));
    assert!(why.unwrap().contains("could not be identified"));
    assert_eq!(entries(sb).len(), 1, "the entry stays");
    sb.send_keys(&other, &["C-c"]);
    poll(SECS(5), || {
        ls(sb)
            .rows
            .iter()
            .all(|r| r.pane != other || r.state != RowState::Untargetable)
            .then_some(())
    })
    .unwrap();
    assert_eq!(outcome(sb, &["unpark", &pane]).1, "unparked");
}

/// park run at a real terminal (a control pane in another session) asks before the risky things.
#[test]
fn on_a_terminal_groups_ask_and_kill_anyway_needs_a_typed_yes() {
    let s = Setup::new();
    let sb = &s.sb;
    let (p1, _) = s.agent_in_shell("g1", "", &[]);
    let (p2, _) = s.agent_in_shell("g2", "", &[]);
    let ctl = sb.new_shell_window("ctl", "ctl", &sb.work, &[] as &[(&str, &str)]);
    sb.type_line(&ctl, "park park w");
    sb.wait_for(&ctl, r"park 2 agents in w .*\[y/N\]", SECS(10))
        .unwrap();
    sb.type_line(&ctl, "n");
    sb.wait_for(&ctl, "not confirmed", SECS(10)).unwrap();
    assert!(entries(sb).is_empty());
    // --kill-anyway lists what it kills and parks a pane with a draft only after a typed yes.
    sb.type_text(&p1, "precious draft");
    wait_row(sb, &p1, SECS(5), |r| r.status == Status::Draft);
    sb.type_line(&ctl, &format!("park park --kill-anyway {p1}"));
    sb.wait_for(&ctl, "Type yes to continue", SECS(10)).unwrap();
    assert!(
        sb.capture(&ctl).contains("precious draft"),
        "the draft is shown before it is lost"
    );
    sb.type_line(&ctl, "no");
    sb.wait_for(&ctl, "nothing done", SECS(10)).unwrap();
    assert!(entries(sb).is_empty());
    sb.type_line(&ctl, &format!("park park --kill-anyway {p1}"));
    sb.wait_for(&ctl, "Type yes to continue", SECS(10)).unwrap();
    sb.type_line(&ctl, "yes");
    sb.wait_for(&ctl, &format!("{p1}: parked"), SECS(15))
        .unwrap();
    assert_eq!(row(sb, &p1).unwrap().state, RowState::Parked);
    assert_eq!(row(sb, &p2).unwrap().state, RowState::Live);
}

#[test]
fn claude_config_dir_is_honoured_and_restored_in_a_new_window() {
    let s = Setup::new();
    let sb = &s.sb;
    let cfg = sb.root.join("claude-cfg");
    let cfg_s = cfg.to_string_lossy().into_owned();
    let (pane, sid) = s.agent_in_shell("cfg", "", &[("CLAUDE_CONFIG_DIR", cfg_s.as_str())]);
    assert!(
        cfg.join("sessions").is_dir(),
        "the fake used CLAUDE_CONFIG_DIR"
    );
    assert_eq!(outcome(sb, &["park", &pane]).1, "parked");
    sb.tmux(&["kill-pane", "-t", &pane]).unwrap();
    // The new window has the server's environment, without CLAUDE_CONFIG_DIR. A Claude that a
    // sibling test is starting at this moment can be unidentifiable for an instant (no status file
    // or environment yet), and unpark rightly refuses then: ask again once it has settled.
    let mut last = (0, String::new(), None);
    for _ in 0..10 {
        last = outcome(sb, &["unpark", &sid]);
        let transient = last
            .2
            .as_deref()
            .is_some_and(|w| w.contains("could not be identified"));
        if !transient {
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    let (c, oc, why) = last;
    assert_eq!((c, oc.as_str()), (0, "unparked"), "{why:?}");
    let live = poll(SECS(10), || {
        std::fs::read_dir(cfg.join("sessions"))
            .ok()?
            .flatten()
            .find_map(|e| {
                let v: serde_json::Value =
                    serde_json::from_slice(&std::fs::read(e.path()).ok()?).ok()?;
                (v["sessionId"].as_str() == Some(sid.as_str())).then_some(())
            })
    });
    assert!(
        live.is_some(),
        "the resumed agent runs under the recorded CLAUDE_CONFIG_DIR"
    );
}

/// Interrupted right after the claim: the agent is alive and the entry says "parking". The next
/// unpark sees the session running and cleans the entry; nothing was lost, nothing runs twice.
#[test]
fn a_park_killed_after_the_claim_leaves_the_agent_alive_and_is_cleaned_up() {
    let s = Setup::new();
    let sb = &s.sb;
    let (pane, sid) = s.agent_in_shell("f1", "", &[]);
    let pid = row(sb, &pane).unwrap().pid.unwrap();
    let o = park_env(sb, &["park", &pane], &[("PARK_FAULT", "after-claim")]);
    assert_eq!(code(&o), 99);
    assert!(pid_alive(pid));
    assert_eq!(entries(sb).len(), 1, "the claim is on disk");
    let rows = ls(sb).rows;
    assert!(rows.iter().any(|r| r.state == RowState::Parked
        && r.reason
            .as_deref()
            .is_some_and(|w| w.contains("did not finish"))));
    let (c, oc, _) = outcome(sb, &["unpark", &pane]);
    assert_eq!((c, oc.as_str()), (0, "already-running"));
    assert!(entries(sb).is_empty());
    assert_eq!(claude_pids_for(&sb.home, &sid), vec![pid]);
    assert_eq!(
        outcome(sb, &["park", &pane]).1,
        "parked",
        "a clean park works afterwards"
    );
}

/// Interrupted right after SIGTERM: the agent dies, the entry (still "parking") is the record;
/// unpark resumes the session from it.
#[test]
fn a_park_killed_after_sigterm_is_still_resumable() {
    let s = Setup::new();
    let sb = &s.sb;
    let (pane, sid) = s.agent_in_shell("f2", "", &[]);
    let pid = row(sb, &pane).unwrap().pid.unwrap();
    let o = park_env(sb, &["park", &pane], &[("PARK_FAULT", "after-sigterm")]);
    assert_eq!(code(&o), 99);
    assert!(wait_gone(pid, SECS(5)), "the agent got its SIGTERM");
    assert_eq!(entries(sb).len(), 1, "and the session is recorded");
    sb.wait_for(&pane, r"park-test\$\s*$", SECS(5)).unwrap();
    let (c, oc, why) = outcome(sb, &["unpark", &pane]);
    assert_eq!(
        (c, oc.as_str()),
        (0, "unparked"),
        "{why:?}\n{}",
        sb.capture(&pane)
    );
    let r = wait_row(sb, &pane, SECS(10), |r| r.state == RowState::Live);
    assert_eq!(r.session_id.as_deref(), Some(sid.as_str()));
}

/// The session changes between the scan and the kill (`/clear`): the re-check before the kill
/// sees it, rolls the claim back, and kills nothing.
#[test]
fn a_session_change_before_the_kill_rolls_back() {
    let s = Setup::new();
    let sb = &s.sb;
    let (pane, sid) = s.agent_in_shell("f3", "", &[]);
    let pid = row(sb, &pane).unwrap().pid.unwrap();
    let child = park_cmd(sb, &[("PARK_FAULT_PAUSE", "after-archive:2500")])
        .args(["park", &pane, "--json"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    poll(SECS(5), || (!entries(sb).is_empty()).then_some(())).expect("claimed");
    sb.type_line(&pane, "/clear");
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("changed since the scan"), "{text}");
    assert!(pid_alive(pid));
    assert!(entries(sb).is_empty(), "the claim was rolled back");
    let r = row(sb, &pane).unwrap();
    assert_ne!(r.session_id.as_deref(), Some(sid.as_str()));
}

/// `park .` in the pane of a suspended agent parks it (the agent no longer holds the terminal,
/// and park is not in its tree); the way back is prefilled in the same shell.
#[test]
fn park_dot_parks_a_suspended_agent_in_its_own_pane() {
    let s = Setup::new();
    let sb = &s.sb;
    let (pane, sid) = s.agent_in_shell("dot", "", &[]);
    let pid = row(sb, &pane).unwrap().pid.unwrap();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGTSTP,
    )
    .unwrap();
    sb.wait_for(&pane, "Stopped", SECS(5)).unwrap();
    sb.type_line(&pane, "park .");
    sb.wait_for(&pane, &format!("{pane}: parked"), SECS(15))
        .unwrap();
    assert!(wait_gone(pid, SECS(5)));
    let r = wait_row(sb, &pane, SECS(5), |r| r.state == RowState::Parked);
    assert_eq!(r.session_id.as_deref(), Some(sid.as_str()));
    sb.wait_for(&pane, r"park unpark \.\s*$", SECS(5)).unwrap();
    sb.press_enter(&pane);
    wait_row(sb, &pane, SECS(10), |r| {
        r.state == RowState::Live && r.session_id.as_deref() == Some(sid.as_str())
    });
}

/// An agent with no conversation yet has nothing to resume: parking it would lose nothing but
/// could never be undone, so it is refused; so is one outside any pane of this server.
#[test]
fn nothing_to_resume_or_no_pane_is_refused() {
    let s = Setup::new();
    let sb = &s.sb;
    let dir = sb.project_dir("fresh");
    let pane = sb.new_shell_window("w", "fresh", &dir, &[] as &[(&str, &str)]);
    sb.type_line(&pane, "claude");
    sb.wait_for(&pane, CLAUDE_READY, SECS(15)).unwrap();
    let r = wait_row(sb, &pane, SECS(10), |r| r.session_id.is_some());
    assert!(
        r.reason
            .as_deref()
            .unwrap_or("")
            .contains("no conversation yet"),
        "{r:?}"
    );
    let (c, oc, why) = outcome(sb, &["park", &pane]);
    assert_eq!((c, oc.as_str()), (1, "refused"));
    assert!(why.unwrap().contains("no conversation yet"));
    assert!(pid_alive(r.pid.unwrap()));
    // An agent started outside tmux (no TMUX_PANE, no pane ancestor) is listed, never targeted.
    // `script` gives it a terminal of its own, outside tmux.
    let mut orphan = std::process::Command::new("script")
        .args(["-qfec", "claude", "/dev/null"])
        .env_clear()
        .envs(sb.base_env())
        .current_dir(&dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let outside = |r: &park_protocol::Row| r.pane.is_empty() && r.cwd == dir.to_string_lossy();
    let row = poll(SECS(10), || ls(sb).rows.into_iter().find(|r| outside(r)))
        .unwrap_or_else(|| panic!("not listed: {:?}", ls(sb).rows));
    assert_eq!(row.state, RowState::Untargetable);
    assert!(row.reason.unwrap().contains("not bound to a pane"));
    let _ = orphan.kill();
    let _ = orphan.wait();
}

/// The window pill option follows the ledger, and forget restores the pane's own title.
#[test]
fn window_pill_and_title_follow_park_unpark_and_forget() {
    let s = Setup::new();
    let sb = &s.sb;
    let (pane, _) = s.agent_in_shell("pill", "", &[]);
    let win = |sb: &Sandbox| {
        sb.tmux(&["show", "-w", "-q", "-v", "-t", &pane, "@park_parked"])
            .unwrap()
            .trim()
            .to_string()
    };
    let title_before = sb.pane_title(&pane);
    assert_eq!(win(sb), "");
    assert_eq!(outcome(sb, &["park", &pane]).1, "parked");
    assert_eq!(win(sb), "1");
    assert!(
        sb.pane_title(&pane).starts_with('❄'),
        "title pinned: {}",
        sb.pane_title(&pane)
    );
    assert_eq!(outcome(sb, &["unpark", &pane]).1, "unparked");
    poll(SECS(5), || (win(sb).is_empty()).then_some(())).expect("window pill cleared on unpark");
    wait_row(sb, &pane, SECS(10), |r| r.status == Status::Idle);
    assert_eq!(outcome(sb, &["park", &pane]).1, "parked");
    assert_eq!(code(&park(sb, &["forget", &pane])), 0);
    assert_eq!(win(sb), "", "window pill cleared on forget");
    assert_eq!(
        sb.pane_title(&pane),
        title_before,
        "forget restores the pane's own title"
    );
}

/// `--close-popup`: a refusal stays on screen until Enter; success exits at once.
#[test]
fn close_popup_keeps_a_refusal_on_screen() {
    let s = Setup::new();
    let sb = &s.sb;
    let (pane, _) = s.agent_in_shell("cp", "", &[]);
    sb.type_text(&pane, "unsent");
    wait_row(sb, &pane, SECS(5), |r| r.status == Status::Draft);
    let ctl = sb.new_shell_window("ctl", "ctl", &sb.work, &[] as &[(&str, &str)]);
    sb.type_line(&ctl, &format!("park park --close-popup {pane}"));
    sb.wait_for(&ctl, "press Enter to close", SECS(10)).unwrap();
    assert!(sb.capture(&ctl).contains("unsent text"));
    sb.press_enter(&ctl);
    sb.send_keys(
        &pane,
        &["BSpace", "BSpace", "BSpace", "BSpace", "BSpace", "BSpace"],
    );
    wait_row(sb, &pane, SECS(5), |r| r.status == Status::Idle);
    sb.type_line(
        &ctl,
        &format!("clear; park park --close-popup {pane}; echo rc=$?"),
    );
    sb.wait_for(&ctl, "rc=0", SECS(15)).unwrap();
    assert!(
        !sb.capture(&ctl).contains("press Enter to close"),
        "no pause on success"
    );
}

/// A parked pane left in copy mode still unparks: park leaves the mode before typing.
#[test]
fn unpark_leaves_copy_mode_before_typing() {
    let s = Setup::new();
    let sb = &s.sb;
    let (pane, sid) = s.agent_in_shell("cm", "", &[]);
    assert_eq!(outcome(sb, &["park", &pane]).1, "parked");
    sb.wait_for(&pane, r"park unpark \.\s*$", SECS(5)).unwrap();
    sb.tmux(&["copy-mode", "-t", &pane]).unwrap();
    assert_eq!(sb.display(&pane, "#{pane_in_mode}").as_deref(), Some("1"));
    let (c, oc, why) = outcome(sb, &["unpark", &pane]);
    assert_eq!((c, oc.as_str()), (0, "unparked"), "{why:?}");
    wait_row(sb, &pane, SECS(10), |r| {
        r.state == RowState::Live && r.session_id.as_deref() == Some(sid.as_str())
    });
}

/// In a placeholder pane, a resume that starts and then dies at once does not cost the pane: the
/// entry stays parked with the error, and the placeholder comes back.
#[test]
fn a_failed_resume_in_a_placeholder_pane_keeps_the_pane_and_the_entry() {
    let s = Setup::new();
    let sb = &s.sb;
    let dir = sb.project_dir("fr");
    let pane = sb.new_agent_window(
        "w",
        "fr",
        &dir,
        &[("FAKE_AGENT_MODE", "fail-resume")],
        &["claude"],
    );
    sb.wait_for(&pane, CLAUDE_READY, SECS(15)).unwrap();
    sb.type_line(&pane, "hello");
    sb.wait_for(&pane, "PARKTEST-OK", SECS(15)).unwrap();
    wait_row(sb, &pane, SECS(10), |r| r.status == Status::Idle);
    assert_eq!(outcome(sb, &["park", &pane]).1, "parked");
    sb.wait_for(&pane, "Press Enter to resume", SECS(5))
        .unwrap();
    let (c, oc, why) = outcome(sb, &["unpark", &pane]);
    assert_eq!((c, oc.as_str()), (1, "failed"), "{why:?}");
    assert!(why.unwrap().contains("exited"));
    assert_eq!(entries(sb).len(), 1, "the session is still recorded");
    // The verdict is saved before the verifier respawns the placeholder into the (kept) pane.
    sb.wait_for(&pane, "last attempt: the agent exited", SECS(5))
        .unwrap();
    assert!(sb.pane_alive(&pane), "the pane survived the failed start");
    assert_eq!(row(sb, &pane).unwrap().state, RowState::Parked);
}

#[test]
fn candidates_rank_live_sessions_show_refusals_and_park_nothing() {
    let s = Setup::new();
    let sb = &s.sb;
    let (idle, idle_sid) = s.agent_in_shell("cand-idle", "", &[]);
    let (draft, _) = s.agent_in_shell("cand-draft", "", &[]);
    sb.type_text(&draft, "unsent candidate thought");
    wait_row(sb, &draft, SECS(5), |r| r.status == Status::Draft);
    let pids: Vec<u32> = [&idle, &draft]
        .iter()
        .map(|p| row(sb, p).unwrap().pid.unwrap())
        .collect();
    let o = park(sb, &["candidates", "--json"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let out: park_protocol::CandidatesOutput = serde_json::from_slice(&o.stdout).unwrap();
    let of = |p: &str| out.rows.iter().find(|r| r.pane == p).cloned().unwrap();
    let (a, b) = (of(&idle), of(&draft));
    assert_eq!(a.session_id.as_deref(), Some(idle_sid.as_str()));
    assert!(
        a.idle_seconds.is_some(),
        "idle time comes from real turns: {a:?}"
    );
    assert!(
        a.last_assistant
            .as_deref()
            .is_some_and(|l| l.contains("PARKTEST-OK")),
        "{a:?}"
    );
    assert!(!a.why.is_empty() && (0.0..=1.0).contains(&a.confidence));
    assert!(
        b.refusal
            .as_deref()
            .is_some_and(|r| r.contains("unsent candidate thought")),
        "what park would refuse is shown: {b:?}"
    );
    // Confident "done" first, then the longest idle.
    let done_first = out.rows.windows(2).all(|w| {
        let d = |c: &park_protocol::Candidate| {
            c.verdict == park_protocol::Verdict::Done && c.confidence >= 0.7
        };
        d(&w[0]) || !d(&w[1])
    });
    assert!(done_first, "{:?}", out.rows);
    // A verdict never parks anything.
    assert!(entries(sb).is_empty());
    assert!(pids.iter().all(|p| pid_alive(*p)));
    let t = text(&park(sb, &["candidates"]));
    assert!(t.contains(&idle) && t.contains(&draft), "{t}");
}

#[test]
fn archived_sessions_ambiguous_names_refuse_and_a_resurrection_reads_running_again() {
    let s = Setup::new();
    let sb = &s.sb;
    let (p1, sid1) = s.agent_in_shell("tomb-dup-1", "", &[]);
    let (p2, sid2) = s.agent_in_shell("tomb-dup-2", "", &[]);
    for p in [&p1, &p2] {
        assert_eq!(outcome(sb, &["park", p]).1, "parked");
        assert_eq!(code(&park(sb, &["forget", p])), 0);
    }
    assert!(entries(sb).is_empty(), "only the archive knows them now");
    let archived = || -> park_protocol::ArchivedOutput {
        serde_json::from_slice(&park(sb, &["ls", "--archived", "--json"]).stdout).unwrap()
    };
    let state_of = |sid: &str| {
        archived()
            .rows
            .into_iter()
            .find(|r| r.session_id == sid)
            .map(|r| (r.state, r.marker))
    };
    assert_eq!(
        state_of(&sid1),
        Some((park_protocol::TombState::Archived, "·".to_string()))
    );
    // Ambiguous: both cwds contain "tomb-dup". Unpark and note list both and touch nothing.
    for args in [vec!["unpark", "tomb-dup"], vec!["note", "tomb-dup", "x"]] {
        let o = park(sb, &args);
        let t = text(&o);
        assert_ne!(code(&o), 0, "{args:?}: {t}");
        assert!(
            t.contains(&sid1[..8]) && t.contains(&sid2[..8]),
            "{args:?} lists both: {t}"
        );
    }
    assert!(claude_pids_for(&sb.home, &sid1).is_empty());
    assert!(claude_pids_for(&sb.home, &sid2).is_empty());
    // One named exactly: resurrected in a new window of its session; every view says ↑.
    let (c, oc, why) = outcome(sb, &["unpark", "tomb-dup-1"]);
    assert_eq!((c, oc.as_str()), (0, "unparked"), "{why:?}");
    poll(SECS(10), || {
        (claude_pids_for(&sb.home, &sid1).len() == 1).then_some(())
    })
    .expect("one process runs the resurrected session");
    assert_eq!(
        state_of(&sid1),
        Some((park_protocol::TombState::Running, "↑".to_string()))
    );
    let found: park_protocol::SearchOutput =
        serde_json::from_slice(&park(sb, &["search", "tomb-dup", "--json"]).stdout).unwrap();
    let by = |sid: &str| {
        found
            .rows
            .iter()
            .find(|r| r.session_id == sid)
            .unwrap()
            .state
    };
    assert_eq!(by(&sid1), park_protocol::TombState::Running);
    assert_eq!(by(&sid2), park_protocol::TombState::Archived);
}

/// Issue 19 (item 3) through the real binary and a real tmux: a 60 MB transcript (old history
/// before the session's own records, with a lone UTF-16 surrogate escape and a line of invalid
/// UTF-8 in it) whose last answer is a 6 MB record. `park ls` reads it as idle with an idle time
/// (the old fixed tail window read it as a turn in flight forever), `park park` archives it
/// byte for byte with the last prompt and answer in the Markdown, and `park unpark` resumes it.
#[test]
fn a_sixty_megabyte_transcript_with_a_six_megabyte_last_answer_parks_and_comes_back() {
    use std::io::Write;
    let s = Setup::new();
    let sb = &s.sb;
    let (pane, sid) = s.agent_in_shell("big", "", &[]);
    let path = claude_transcript(&sb.home, &sb.work.join("big"), &sid);
    let own = std::fs::read(&path).unwrap();
    let filler = "older history — naïve café 🦊 ".repeat(35_000); // ~1 MB per record
    let mut pad = Vec::with_capacity(61 << 20);
    for i in 0..54 {
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        let content = if i == 8 {
            // Claude writes lone surrogates when it cuts a string inside an emoji pair.
            format!("{filler} cut here \\ud83d")
        } else {
            filler.clone()
        };
        let rec = serde_json::json!({
            "type": role, "sessionId": sid, "uuid": format!("00000000-0000-4000-8000-{i:012}"),
            "timestamp": "2026-11-01T10:00:00.000Z",
            "message": {"role": role, "content": "CONTENT"},
        })
        .to_string()
        .replace("\"CONTENT\"", &format!("\"{content}\""));
        pad.extend_from_slice(rec.as_bytes());
        pad.push(b'\n');
        if i == 20 {
            pad.extend_from_slice(b"{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"bad \xff\xfe bytes\"}}\n");
        }
    }
    // Old history first, then the session's own records (the file is the same inode: the agent
    // appends to it).
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(&path)
        .unwrap();
    f.write_all(&pad).unwrap();
    f.write_all(&own).unwrap();
    drop(f);
    sb.type_line(&pane, "the last question [big 6144]");
    sb.wait_for(&pane, r"Fake reply #2\. PARKTEST-OK", SECS(30))
        .unwrap();
    let len = std::fs::metadata(&path).unwrap().len();
    assert!(len > 60_000_000, "{len}");
    let t0 = std::time::Instant::now();
    let live = wait_row(sb, &pane, SECS(20), |r| r.status == Status::Idle);
    eprintln!(
        "MEASURE ls over a {len}-byte transcript: idle after {:?}",
        t0.elapsed()
    );
    assert!(live.idle_seconds.is_some(), "idle time measured: {live:?}");
    assert!(live.reason.is_none(), "{live:?}");

    let t0 = std::time::Instant::now();
    let (c, oc, why) = outcome(sb, &["park", &pane, "--force"]);
    eprintln!(
        "MEASURE park (archive + verify + kill) of that session: {:?}",
        t0.elapsed()
    );
    assert_eq!((c, oc.as_str()), (0, "parked"), "{why:?}");
    let arch = sb.park_home.join("archive").join(&sid);
    // Byte for byte what was there at the park (the agent appends a `last-prompt` record as it
    // exits, after the copy).
    let copy = std::fs::read(arch.join("transcript.jsonl")).unwrap();
    let now = std::fs::read(&path).unwrap();
    assert!(
        copy.len() as u64 >= len && now.starts_with(&copy),
        "the archived copy ({} bytes) is the transcript as parked ({len} bytes, now {})",
        copy.len(),
        now.len()
    );
    let md = std::fs::read_to_string(arch.join("transcript.md")).unwrap();
    assert!(md.contains("the last question") && md.contains("Fake reply #2. PARKTEST-OK"));
    let at = md
        .find("cut here")
        .map(|i| md[i..].chars().take(40).collect::<String>());
    assert!(
        md.contains("cut here \u{fffd}"),
        "the lone surrogate is rendered as U+FFFD: {at:?} (md {} bytes, {} x 'older history')",
        md.len(),
        md.matches("older history").count()
    );
    let (c, oc, why) = outcome(sb, &["unpark", &pane]);
    assert_eq!((c, oc.as_str()), (0, "unparked"), "{why:?}");
    let back = wait_row(sb, &pane, SECS(20), |r| r.state == RowState::Live);
    assert_eq!(back.session_id.as_deref(), Some(sid.as_str()));
}

/// Issue 34 item 1: two live panes titled `✳ Claude Code` (as Claude 2.1.332 keeps it) and a parked
/// entry with the same title. `park park Claude` used to resolve the live ones, meet "ambiguous",
/// fall back to the ledger and print `already-parked` (exit 0, nothing parked). Every verb that
/// resolves a target now refuses such a title and lists every match, live and parked.
#[test]
fn a_title_shared_by_live_and_parked_agents_is_refused_by_every_verb() {
    let s = Setup::new();
    let sb = &s.sb;
    let (p1, _) = s.agent_in_shell("ttlx1", "", &[]);
    let (p2, _) = s.agent_in_shell("ttlx2", "", &[]);
    let (p3, sid3) = s.agent_in_shell("ttlx3", "", &[]);
    let (c, oc, why) = outcome(sb, &["park", &p3]);
    assert_eq!((c, oc.as_str()), (0, "parked"), "{why:?}");
    let eid = entries(sb)
        .first()
        .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().to_string()))
        .expect("one entry");
    for word in ["Claude", "Claude Code"] {
        for verb in [
            vec!["park", word],
            vec!["park", word, "--dry-run"],
            vec!["unpark", word],
        ] {
            let (c, out) = action(sb, &verb);
            assert_eq!(c, 1, "{verb:?} must refuse: {out:?}");
            let r = &out.results[0];
            assert_eq!(r.outcome.to_string(), "refused", "{verb:?}: {r:?}");
            let why = r.reason.clone().unwrap_or_default();
            for id in [p1.as_str(), p2.as_str(), eid.as_str()] {
                assert!(why.contains(id), "{verb:?} must list {id}: {why}");
            }
        }
        for verb in [
            vec!["show", word],
            vec!["forget", word],
            vec!["pin", word],
            vec!["wake", "now", word],
            // A set member is checked as a target: a shared title was kept "for later" (exit 0).
            vec!["set", "add", "grp", word],
            // A note picked the one archived (parked) match without looking at the live ones.
            vec!["note", word, "a note"],
        ] {
            let o = park(sb, &verb);
            assert_eq!(code(&o), 1, "{verb:?} must refuse: {}", text(&o));
            assert!(
                // At least these three: other tests' agents beside this one may match too.
                text(&o).contains(" agents") && text(&o).contains(&p1) && text(&o).contains(&eid),
                "{verb:?}: {}",
                text(&o)
            );
        }
    }
    // `note` looked at the archived (and parked) sessions first and took a single match there
    // without looking at the running agents: `ttlx` is in the parked session's title (`ttlx3-…`)
    // and in both running ones' (`ttlx1-…`, `ttlx2-…`), and in no other test's (they run beside
    // this one, and a title search sees every agent of the machine).
    let o = park(sb, &["note", "ttlx", "a note"]);
    assert_eq!(code(&o), 1, "note must refuse: {}", text(&o));
    assert!(
        text(&o).contains(" agents") && text(&o).contains(&p1) && text(&o).contains(&eid),
        "{}",
        text(&o)
    );
    // Nothing happened: both live agents run, the parked one is still parked and unpinned.
    let rows = ls(sb).rows;
    for p in [&p1, &p2] {
        assert_eq!(row(sb, p).unwrap().state, RowState::Live);
    }
    let parked = rows
        .iter()
        .find(|r| r.session_id.as_deref() == Some(sid3.as_str()))
        .unwrap();
    assert_eq!(parked.state, RowState::Parked);
    assert!(!rows.iter().any(|r| r.pinned));
    let o = park(sb, &["set", "ls"]);
    assert!(
        !text(&o).contains("@grp"),
        "nothing was added: {}",
        text(&o)
    );
    // Named exactly, each still works: the pane, the entry id.
    let (c, oc, why) = outcome(sb, &["park", &p1, "--dry-run"]);
    assert_eq!((c, oc.as_str()), (0, "would-park"), "{why:?}");
    let (c, oc, _) = outcome(sb, &["park", &eid]);
    assert_eq!((c, oc.as_str()), (0, "already-parked"));
    // Item 5: `show` of a parked, pinned session says it is pinned, as `ls` does.
    let o = park(sb, &["pin", &eid]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let o = park(sb, &["show", &eid]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(text(&o).contains("pinned: true"), "{}", text(&o));
    assert!(ls(sb)
        .rows
        .iter()
        .any(|r| r.pinned && r.session_id.as_deref() == Some(sid3.as_str())));
    // Item 9: a miss names the target once.
    let o = park(sb, &["wake", "now", "%99"]);
    assert_eq!(code(&o), 1, "{}", text(&o));
    assert_eq!(text(&o).matches("%99").count(), 1, "{}", text(&o));
}

/// Issue 34 items 12 and 8: tmux starts login shells (`-bash`), whose profile may set PATH afresh,
/// so park used to prefill `/full/path/park unpark .` there even when `park` on PATH is this
/// binary. The agent it parks was started by that shell after its profile ran: its PATH is the
/// one Enter will search, and it resolves `park` to this binary, so the short form is typed.
/// `park forget` then clears the prefill (Enter there would only say "not-parked").
#[test]
fn a_login_shell_gets_the_short_prefill_and_forget_clears_it() {
    let s = Setup::new();
    let sb = &s.sb;
    let dir = sb.project_dir("login");
    let pane = sb.new_window(
        "w",
        "login",
        &dir,
        &[("PATH", sb.path_env())],
        r#"PS1='park-test$ ' exec perl -e 'exec {"bash"} "-bash", "--norc", "--noprofile"'"#,
    );
    sb.wait_for(&pane, r"park-test\$", SECS(15)).unwrap();
    sb.type_line(&pane, "claude");
    sb.wait_for(&pane, CLAUDE_READY, SECS(15)).unwrap();
    sb.type_line(&pane, "first prompt");
    sb.wait_for(&pane, "PARKTEST-OK", SECS(15)).unwrap();
    wait_row(sb, &pane, SECS(10), |r| r.status == Status::Idle);
    let (c, oc, why) = outcome(sb, &["park", &pane]);
    assert_eq!((c, oc.as_str()), (0, "parked"), "{why:?}");
    let screen = sb.wait_for(&pane, r"park unpark \.\s*$", SECS(5)).unwrap();
    let last = screen
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default()
        .to_string();
    assert!(
        last.trim_end().ends_with("$ park unpark ."),
        "the short form at a login shell whose PATH finds this park: {last:?}"
    );
    let o = park(sb, &["forget", &pane]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(text(&o).contains("forgotten"), "{}", text(&o));
    let cleared = poll(SECS(5), || {
        let scr = sb.capture(&pane);
        let last = scr
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())?
            .to_string();
        (last.trim_end() == SHELL_PROMPT.trim_end()).then_some(())
    });
    assert!(
        cleared.is_some(),
        "forget clears the prefill:\n{}",
        sb.capture(&pane)
    );
}

/// Issue 34 item 7: a corrupt ledger entry. `ls` dropped its row (the pane looked plain), and
/// `park unpark %N` answered "cannot claim a ledger entry … already exists". Now the pane is shown
/// parked with why, and every verb that meets the entry says it is unreadable and changes nothing.
#[test]
fn a_corrupt_entry_is_shown_and_named_and_nothing_is_changed() {
    let s = Setup::new();
    let sb = &s.sb;
    let (pane, sid) = s.agent_in_shell("bad", "", &[]);
    let (c, oc, why) = outcome(sb, &["park", &pane]);
    assert_eq!((c, oc.as_str()), (0, "parked"), "{why:?}");
    let file = entries(sb).into_iter().next().expect("one entry");
    std::fs::write(&file, b"{\"schema\": 1, \"id\": ").unwrap();
    let before = std::fs::read(&file).unwrap();
    let r = row(sb, &pane).expect("the pane of an unreadable entry has a row");
    assert_eq!(r.state, RowState::Parked);
    assert_eq!(r.session_id.as_deref(), Some(sid.as_str()));
    assert!(
        r.reason
            .as_deref()
            .is_some_and(|w| w.contains("unreadable")),
        "{r:?}"
    );
    for verb in [
        ["unpark", pane.as_str()],
        ["unpark", sid.as_str()],
        ["forget", pane.as_str()],
    ] {
        let o = park(sb, &verb);
        assert_eq!(code(&o), 1, "{verb:?}: {}", text(&o));
        let why = text(&o);
        assert!(
            why.contains("is unreadable")
                && why.contains(&file.display().to_string())
                && why.contains("park doctor")
                && why.contains("nothing was changed"),
            "{verb:?}: {why}"
        );
    }
    assert_eq!(
        std::fs::read(&file).unwrap(),
        before,
        "the file is kept as is"
    );
    assert_eq!(entries(sb).len(), 1);
}

/// Issue 35 item 9b, tmux side: `park park .` run in a pane with no agent says why once, without
/// repeating the target (`.: refused: .: no running agent matches`).
#[test]
fn park_dot_in_a_pane_with_no_agent_says_why_once() {
    let s = Setup::new();
    let sb = &s.sb;
    let pane = sb.new_shell_window("w", "empty", &sb.work, &[] as &[(&str, &str)]);
    let sock = sb.tmux(&["display", "-p", "#{socket_path}"]).unwrap();
    let tmux_env = format!("{},1,0", sock.trim());
    let o = park_env(
        sb,
        &["park", "."],
        &[("TMUX", &tmux_env), ("TMUX_PANE", &pane)],
    );
    let t = text(&o);
    assert_eq!(code(&o), 1, "{t}");
    assert_eq!(t.matches("refused").count(), 1, "said once: {t}");
    assert!(
        !t.contains(".: refused: .:") && t.contains("no running agent in this pane"),
        "the reason, once, without repeating `.`: {t}"
    );
}

/// Issue 35 item 3, tmux side: a fresh agent started in a parked pane (the prefill cleared,
/// `claude` typed) is named by `park unpark` of the parked session, which types nothing into it
/// and says the way forward; that way works: park the fresh one too, then the parked one resumes
/// in a new window, and the fresh one stays parked in the old pane.
#[test]
fn a_fresh_agent_in_a_parked_pane_is_named_and_the_way_forward_works() {
    let s = Setup::new();
    let sb = &s.sb;
    let (pane, sid) = s.agent_in_shell("slot", "", &[]);
    let (c, oc, why) = outcome(sb, &["park", &pane]);
    assert_eq!((c, oc.as_str()), (0, "parked"), "{why:?}");
    sb.wait_for(&pane, r"park unpark \.\s*$", SECS(5)).unwrap();
    sb.send_keys(&pane, &["C-u"]);
    sb.type_line(&pane, "claude");
    sb.wait_for(&pane, CLAUDE_READY, SECS(15)).unwrap();
    sb.type_line(&pane, "a fresh start");
    sb.wait_for(&pane, "PARKTEST-OK", SECS(15)).unwrap();
    let fresh = poll(SECS(10), || {
        ls(sb).rows.into_iter().find(|r| {
            r.pane == pane
                && r.state == RowState::Live
                && r.status == Status::Idle
                && r.session_id.as_deref() != Some(sid.as_str())
        })
    })
    .expect("the fresh agent's idle row");
    let fresh_sid = fresh.session_id.clone().expect("its session id");

    let (c, out) = action(sb, &["unpark", &sid]);
    let r = &out.results[0];
    let why = r.reason.clone().unwrap_or_default();
    assert_eq!((c, r.outcome.as_str()), (1, "refused"), "{why}");
    assert!(
        why.contains(&fresh_sid) && why.contains("never typing into it"),
        "names the fresh agent: {why}"
    );
    assert!(
        why.contains(&format!("park park {pane}")),
        "says the way forward: {why}"
    );
    assert_eq!(row(sb, &pane).unwrap().pid, fresh.pid, "nothing typed");

    let (c, oc, why) = outcome(sb, &["park", &pane]);
    assert_eq!((c, oc.as_str()), (0, "parked"), "the fresh one: {why:?}");
    let (c, out) = action(sb, &["unpark", &sid]);
    let r = &out.results[0];
    assert_eq!((c, r.outcome.as_str()), (0, "unparked"), "{r:?}");
    let why = r.reason.clone().unwrap_or_default();
    assert!(
        why.contains(&format!(
            "its pane {pane} holds something else now: resumed in a new window"
        )),
        "the old pane is there, not gone: {why}"
    );
    let back = poll(SECS(15), || {
        ls(sb)
            .rows
            .into_iter()
            .find(|r| r.session_id.as_deref() == Some(sid.as_str()) && r.state == RowState::Live)
    })
    .expect("the parked session runs again");
    assert_ne!(back.pane, pane, "in a new window, not the fresh one's pane");
    let rows = ls(sb).rows;
    assert!(
        rows.iter()
            .any(|r| r.session_id.as_deref() == Some(fresh_sid.as_str())
                && r.state == RowState::Parked
                && r.pane == pane),
        "the fresh one stays parked in the old pane: {rows:?}"
    );
}
