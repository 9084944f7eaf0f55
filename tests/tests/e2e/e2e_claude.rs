//! End-to-end: what only Claude Code does, with the REAL CLI (the pinned version) in a private tmux
//! server against the project's mock model server: a pane whose own command is Claude gets a
//! placeholder and comes back, a named session keeps its name, and a damaged transcript is read
//! and resumed. The round trip, the guards (draft, busy, permission), two sessions in one cwd and
//! the `/clear` rollback are `contract::claude::*` (`contract.rs`), as for every agent.

use crate::common::*;
use park_e2e::*;
use park_protocol::{ActionResult, RowState, Status};
use std::time::{Duration, Instant};

struct Claude {
    sb: Sandbox,
    mock: MockServer,
}

impl Claude {
    fn new() -> Claude {
        let sb = Sandbox::new();
        let mock = mock_server!(&sb.logs);
        seed_claude_home(&sb.home, &sb.work, CLAUDE_API_KEY).unwrap();
        install_shims(&sb, None);
        Claude { sb, mock }
    }

    fn env(&self) -> Env {
        self.sb.claude_env(&self.mock)
    }

    /// A shell pane in project `name` with `claude <args>` started at the prompt and one turn done.
    fn start(&self, name: &str, args: &str, first_prompt: &str) -> (String, String) {
        let dir = self.sb.project_dir(name);
        let pane = self.sb.new_shell_window("w", name, &dir, &self.env());
        self.sb.type_line(&pane, &format!("claude {args}"));
        self.sb.wait_for(&pane, CLAUDE_READY, SECS(60)).unwrap();
        submit_prompt(&self.sb, &pane, first_prompt, "❯");
        self.sb.wait_for(&pane, "PARKTEST-OK", SECS(60)).unwrap();
        let r = wait_row(&self.sb, &pane, SECS(30), |r| {
            r.status == Status::Idle && r.state == RowState::Live
        });
        (pane, r.session_id.expect("session id"))
    }
}

/// Parks, retrying while the refusal is one Claude gives for a moment after a reply: the CPU
/// corroboration, or a turn its transcript has not closed yet (the reply is drawn, and the status
/// file may say idle, before the closing records are written: seen under load).
fn park_when_quiet(sb: &Sandbox, pane: &str) -> (i32, ActionResult, Duration) {
    let deadline = Instant::now() + SECS(30);
    loop {
        let t0 = Instant::now();
        let (c, out) = action(sb, &["park", pane]);
        let took = t0.elapsed();
        let r = out.results.into_iter().next().unwrap();
        let settling = r
            .reason
            .as_deref()
            .is_some_and(|w| SETTLING.iter().any(|s| w.contains(s)));
        if !settling || Instant::now() > deadline {
            return (c, r, took);
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

#[test]
fn real_claude_pane_process_gets_a_placeholder_and_comes_back() {
    let c = Claude::new();
    let sb = &c.sb;
    let dir = sb.project_dir("solo");
    let claude = Agents::locate().claude;
    let pane = sb.new_agent_window(
        "w",
        "solo",
        &dir,
        &c.env(),
        &[claude.to_str().unwrap(), "--model", "opus"],
    );
    sb.wait_for(&pane, CLAUDE_READY, SECS(60)).unwrap();
    submit_prompt(sb, &pane, "own pane", "❯");
    sb.wait_for(&pane, "PARKTEST-OK", SECS(60)).unwrap();
    let sid = wait_row(sb, &pane, SECS(30), |r| r.status == Status::Idle)
        .session_id
        .unwrap();
    let (code, r, _) = park_when_quiet(sb, &pane);
    assert_eq!((code, r.outcome.as_str()), (0, "parked"), "{:?}", r.reason);
    sb.wait_for(&pane, "Press Enter to resume", SECS(10))
        .unwrap();
    let (code, out) = action(sb, &["unpark", &pane]);
    assert_eq!(code, 0, "{:?}\n{}", out.results[0], sb.capture(&pane));
    let back = wait_row(sb, &pane, SECS(30), |r| r.state == RowState::Live);
    assert_eq!(back.session_id.as_deref(), Some(sid.as_str()));
    let argv =
        String::from_utf8(std::fs::read(format!("/proc/{}/cmdline", back.pid.unwrap())).unwrap())
            .unwrap();
    assert!(argv.contains("--model\0opus"), "flag kept: {argv:?}");
}

/// Issue 19 (0a): a named session (`--name`, `/rename`) draws its name into the composer's top
/// rule. The screen reader must still see the composer: the named session parks, and comes back
/// under the same id with its name.
#[test]
fn real_claude_named_session_parks_and_comes_back_named() {
    let c = Claude::new();
    let sb = &c.sb;
    let (pane, sid) = c.start("named", "--name park-named-one", "hello named");
    let named = sb.capture(&pane);
    assert!(
        named
            .lines()
            .any(|l| l.starts_with('─') && l.contains(" park-named-one ")),
        "the name is in the rule:\n{named}"
    );
    let live = wait_row(sb, &pane, SECS(10), |r| r.status == Status::Idle);
    assert_eq!(live.session_id.as_deref(), Some(sid.as_str()));
    // /rename to a name wider than a narrow rule keeps it readable too.
    let long = "a much longer session name given with slash rename";
    submit_prompt(sb, &pane, &format!("/rename {long}"), "❯");
    sb.wait_for(&pane, &format!("{long} ─"), SECS(10)).unwrap();
    wait_row(sb, &pane, SECS(10), |r| r.status == Status::Idle);

    let (code, r, _) = park_when_quiet(sb, &pane);
    assert_eq!((code, r.outcome.as_str()), (0, "parked"), "{:?}", r.reason);
    let (code, out) = action(sb, &["unpark", &pane]);
    assert_eq!(
        (code, out.results[0].outcome.as_str()),
        (0, "unparked"),
        "{:?}\n{}",
        out.results[0].reason,
        sb.capture(&pane)
    );
    let back = wait_row(sb, &pane, SECS(30), |r| r.state == RowState::Live);
    assert_eq!(back.session_id.as_deref(), Some(sid.as_str()));
    sb.wait_for(&pane, &format!("{long} ─"), SECS(30)).unwrap();
    let back = wait_row(sb, &pane, SECS(30), |r| r.status == Status::Idle);
    assert_eq!(back.session_id.as_deref(), Some(sid.as_str()));
}

/// Issue 19 (item 3) with the real CLI: what a killed writer and Claude's own JSON writer leave in
/// a transcript. While the session is parked, a record with a lone UTF-16 surrogate escape (what
/// Claude writes when it cuts a string inside an emoji pair) and a truncated last line (a writer
/// killed mid-record) are appended. Claude resumes from it (measured: 2.1.197 starts its next
/// record on a fresh line, so the fragment stays a broken line in the middle). park must still
/// read the session as idle with the real last turn, archive it with the new prompt, and resume
/// it again.
#[test]
fn real_claude_resumes_from_a_damaged_transcript_and_park_reads_what_it_writes_after() {
    use std::io::Write;
    let c = Claude::new();
    let sb = &c.sb;
    let (pane, sid) = c.start("damaged", "", "first prompt before the damage");
    let transcript = claude_transcript(&sb.home, &sb.work.join("damaged"), &sid);
    let (code, r, _) = park_when_quiet(sb, &pane);
    assert_eq!((code, r.outcome.as_str()), (0, "parked"), "{:?}", r.reason);
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&transcript)
        .unwrap();
    write!(
        f,
        "{{\"type\":\"custom-title\",\"customTitle\":\"cut \\ud83d here\",\"sessionId\":\"{sid}\"}}\n{{\"type\":\"last-prompt\",\"lastPrompt\":\"half a rec"
    )
    .unwrap();
    drop(f);

    let (code, out) = action(sb, &["unpark", &pane]);
    assert_eq!(
        (code, out.results[0].outcome.as_str()),
        (0, "unparked"),
        "{:?}\n{}",
        out.results[0].reason,
        sb.capture(&pane)
    );
    let back = wait_row(sb, &pane, SECS(30), |r| r.state == RowState::Live);
    assert_eq!(back.session_id.as_deref(), Some(sid.as_str()));
    sb.wait_for(&pane, CLAUDE_READY, SECS(30)).unwrap();
    submit_prompt(sb, &pane, "second prompt after the damage", "❯");
    sb.wait_for(&pane, r"(?s)PARKTEST-OK.*PARKTEST-OK", SECS(60))
        .unwrap();
    let text = String::from_utf8_lossy(&std::fs::read(&transcript).unwrap()).into_owned();
    let glued = text
        .lines()
        .find(|l| l.starts_with("{\"type\":\"last-prompt\",\"lastPrompt\":\"half a rec"))
        .map(|l| l.chars().take(120).collect::<String>());
    eprintln!("after the resume, the truncated line reads: {glued:?}");
    let live = wait_row(sb, &pane, SECS(30), |r| r.status == Status::Idle);
    assert!(live.idle_seconds.is_some(), "{live:?}");

    let (code, r, _) = park_when_quiet(sb, &pane);
    assert_eq!((code, r.outcome.as_str()), (0, "parked"), "{:?}", r.reason);
    eprintln!("second park: {:?}", r.reason);
    let md = std::fs::read_to_string(
        sb.park_home
            .join("archive")
            .join(&sid)
            .join("transcript.md"),
    )
    .unwrap();
    assert!(
        md.contains("second prompt after the damage"),
        "the archive holds the turn written after the damage"
    );
    let (code, out) = action(sb, &["unpark", &pane]);
    assert_eq!(
        (code, out.results[0].outcome.as_str()),
        (0, "unparked"),
        "{:?}",
        out.results
    );
    let again = wait_row(sb, &pane, SECS(30), |r| r.state == RowState::Live);
    assert_eq!(again.session_id.as_deref(), Some(sid.as_str()));
    assert_eq!(claude_pids_for(&sb.home, &sid).len(), 1);
}
