//! End-to-end tests of park with the REAL Qwen Code CLI (0.24.4 on node 22, installed by
//! `scripts/setup`) in a private tmux server, talking to `mock-llm`'s Chat Completions API.
//!
//! What is tested, and why:
//! * a full park/unpark round trip: the three-process node tree dies, the pane stays usable with
//!   `park unpark .` typed, the registry entry (`~/.qwen/sessions/<pid>.json`) names the session
//!   park recorded, the archive holds the conversation, and `qwen --resume <id>` brings the same
//!   session back in the same pane with the whitelisted flags, appending to the same chat file;
//! * the guards on real Qwen screens: an unsent draft, a turn in flight and an open tool
//!   confirmation are refused, and nothing is killed or recorded.
//!
//! Run: `bash scripts/setup && cargo build -p park && cargo test -p park-e2e --test e2e e2e_qwen:: -- --nocapture`

use crate::common::*;
use park_e2e::*;
use park_protocol::{Row, RowState, Status};
use std::path::Path;
use std::time::{Duration, Instant};

/// Three node processes start (and, the first time in a HOME, write their settings).
const START: Duration = Duration::from_secs(90);
/// A model reply from the mock (Qwen adds its own latency; tests may run in parallel).
const REPLY: Duration = Duration::from_secs(90);
/// How long to keep retrying a park the CPU guard refuses (node settles after a reply).
const CPU_SETTLE: Duration = Duration::from_secs(60);
/// How long the /clear test's park waits after its claim, before its kill.
const PAUSE_MS: u32 = 4000;
const REPLY_RE: &str = r"canned reply #\d+\)\. PARKTEST-OK";
/// The empty composer's placeholder: the TUI is up and accepts input.
const READY_RE: &str = r"(?m)^>   Type your message or @path/to/file";

/// One test's world: sandbox, mock server, seeded Qwen home, `park` on the panes' PATH.
struct World {
    sb: Sandbox,
    mock: MockServer,
    qwen: Qwen,
    t0: Instant,
}

impl World {
    /// `None` (after saying why) where `scripts/setup` could not install Qwen Code (not x86_64
    /// Linux and no system node 22); everywhere else a missing install fails the test.
    fn new() -> Option<World> {
        Agents::locate();
        let qwen = match Qwen::try_locate() {
            Ok(q) => q,
            Err(e) if e.contains("skipped") => {
                eprintln!("SKIPPED: {e}");
                return None;
            }
            Err(_) => Qwen::locate(),
        };
        let sb = Sandbox::new();
        let mock = mock_server!(&sb.logs);
        seed_qwen_home(&sb.home).expect("seed qwen home");
        install_shims(&sb, None);
        Some(World {
            sb,
            mock,
            qwen,
            t0: Instant::now(),
        })
    }

    fn log(&self, what: &str) {
        eprintln!("[{:>6.1}s] {what}", self.t0.elapsed().as_secs_f64());
    }

    /// A shell pane in `work/<proj>` with Qwen's environment; `qwen <args>` typed at its prompt;
    /// waits for the empty composer.
    fn qwen_in_shell(&self, window: &str, proj: &str, args: &str) -> String {
        let dir = self.sb.project_dir(proj);
        let env = self.sb.qwen_env(&self.qwen, &self.mock);
        let pane = self.sb.new_shell_window("w", window, &dir, &env);
        let cmd = format!("qwen {args}").trim().to_string();
        self.sb.type_line(&pane, &cmd);
        ok(self.sb.wait_for(&pane, READY_RE, START));
        self.log(&format!("{pane}: `{cmd}` is ready"));
        pane
    }

    /// Sends `prompt` and waits until the screen holds `n` canned replies.
    fn prompt(&self, pane: &str, prompt: &str, nth: usize) {
        submit_prompt(&self.sb, pane, prompt, ">");
        let re = format!("(?s){}", vec![REPLY_RE; nth].join(".*"));
        ok(self.sb.wait_for(pane, &re, REPLY));
        self.log(&format!("{pane}: reply to {prompt:?}"));
    }

    fn show(&self, pane: &str, what: &str) {
        show_pane(&self.sb, pane, what);
    }

    /// Tears the world down and asserts nothing survived.
    fn finish(self, also_dead: &[u32]) {
        teardown(self.sb, self.mock, also_dead);
    }
}

/// `park park <pane>`, retried while the refusal is one a Qwen that just replied gives for a
/// moment: CPU still burning, or the turn's closing records not written yet (its reply shows
/// on screen before the chat file has it).
fn park_when_quiet(sb: &Sandbox, pane: &str) -> (i32, String, Option<String>) {
    park_when_settled(sb, pane, CPU_SETTLE, &["CPU", "turn in flight"])
}

fn wait_live(sb: &Sandbox, pane: &str, status: Status) -> Row {
    let r = wait_row(sb, pane, Duration::from_secs(60), |r| {
        r.state == RowState::Live
            && r.status == status
            && r.session_source.as_deref() == Some("status-file")
            && r.session_id.is_some()
    });
    assert_pinned_version(&r);
    r
}

/// The registry's session id for `pid`, if its file is there.
fn registry_session(home: &Path, pid: u32) -> Option<String> {
    qwen_registry(home)
        .into_iter()
        .find(|(p, _)| *p == pid)
        .and_then(|(_, v)| v.get("sessionId")?.as_str().map(str::to_string))
}

#[test]
fn qwen_park_unpark_round_trip() {
    let Some(w) = World::new() else { return };
    let sb = &w.sb;
    let pane = w.qwen_in_shell("rt", "rt", "--approval-mode default");
    w.prompt(&pane, "hello from the qwen round trip", 1);
    let live = wait_live(sb, &pane, Status::Idle);
    let sid = live.session_id.clone().unwrap();
    let pid = live.pid.expect("row pid");
    let tree = tree_of(pid);
    assert!(
        tree.len() >= 3,
        "the node wrapper and its two cli.js children: {tree:?}"
    );
    assert!(live.bytes > 0, "{live:?}");
    // park names the session the agent itself registered for its innermost process.
    let inner = *tree.last().unwrap();
    let registered: Vec<String> = tree
        .iter()
        .filter_map(|&p| registry_session(&sb.home, p))
        .collect();
    assert_eq!(registered, vec![sid.clone()], "registry of {tree:?}");
    let chat = qwen_transcript(&sb.home, &sb.project_dir("rt"), &sid);
    assert!(
        read_text(&chat).contains("hello from the qwen round trip"),
        "{}",
        chat.display()
    );
    let lines_before = read_text(&chat).lines().count();
    w.log(&format!(
        "live: {sid} pid {pid} inner {inner} tree {tree:?}"
    ));

    let (c, oc, why) = park_when_quiet(sb, &pane);
    assert_eq!(
        (c, oc.as_str()),
        (0, "parked"),
        "{why:?}\n{}",
        sb.capture(&pane)
    );
    for &p in &tree {
        assert!(
            wait_gone(p, Duration::from_secs(5)),
            "pid {p} survived the park: {:?}",
            argv_of(p)
        );
    }
    assert!(sb.pane_alive(&pane), "the pane must stay");
    assert_eq!(entries(sb).len(), 1, "one ledger entry");
    let parked = row(sb, &pane).expect("a row for the parked pane");
    assert_eq!(parked.state, RowState::Parked, "{parked:?}");
    assert_eq!(parked.session_id.as_deref(), Some(sid.as_str()));
    ok(sb.wait_for(
        &pane,
        r"park-test\$ park unpark \.\s*$",
        Duration::from_secs(10),
    ));
    let md = read_text(
        &sb.park_home
            .join("archive")
            .join(&sid)
            .join("transcript.md"),
    );
    assert!(md.contains("hello from the qwen round trip"), "{md}");
    w.show(&pane, "parked");

    let (c, oc, why) = outcome(sb, &["unpark", &pane]);
    assert_eq!(
        (c, oc.as_str()),
        (0, "unparked"),
        "{why:?}\n{}",
        sb.capture(&pane)
    );
    ok(sb.wait_for(&pane, READY_RE, START));
    let back = wait_live(sb, &pane, Status::Idle);
    assert_eq!(back.session_id.as_deref(), Some(sid.as_str()), "{back:?}");
    let new_pid = back.pid.expect("row pid");
    assert!(!tree.contains(&new_pid), "a new process runs the session");
    let argv = argv_of(new_pid);
    eprintln!("resumed argv: {argv:?}");
    assert!(
        argv.windows(2).any(|p| p[0] == "--resume" && p[1] == sid),
        "resume argv: {argv:?}"
    );
    assert!(
        argv.windows(2)
            .any(|p| p[0] == "--approval-mode" && p[1] == "default"),
        "the approval mode was replayed: {argv:?}"
    );
    poll(Duration::from_secs(10), || {
        entries(sb).is_empty().then_some(())
    })
    .unwrap_or_else(|| panic!("the verifier did not clear the entry: {:?}", entries(sb)));
    w.show(&pane, "unparked");

    // The conversation goes on in the same chat file.
    w.prompt(&pane, "second prompt after the unpark", 2);
    poll(REPLY, || {
        read_text(&chat)
            .contains("second prompt after the unpark")
            .then_some(())
    })
    .unwrap_or_else(|| panic!("the second turn never reached {}", chat.display()));
    assert!(read_text(&chat).lines().count() > lines_before);
    let chats: Vec<_> = std::fs::read_dir(chat.parent().unwrap())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".jsonl"))
        .collect();
    assert_eq!(chats, vec![format!("{sid}.jsonl")], "no second chat file");
    let mut dead = tree;
    dead.extend(tree_of(new_pid));
    w.finish(&dead);
}

#[test]
fn qwen_guards_refuse_draft_busy_and_confirmation() {
    let Some(w) = World::new() else { return };
    let sb = &w.sb;
    let pane = w.qwen_in_shell("g", "g", "--approval-mode default");
    w.prompt(&pane, "first turn so there is a session", 1);
    let live = wait_live(sb, &pane, Status::Idle);
    // Qwen's own node processes: a helper it runs for a moment after a reply (longer under
    // load) ends by itself and says nothing about a refused park (CI: "draft: killed" for one).
    let tree: Vec<u32> = tree_of(live.pid.expect("row pid"))
        .into_iter()
        .filter(|&p| argv_of(p).iter().any(|a| a.contains("qwen")))
        .collect();
    assert!(tree.len() >= 3, "the wrapper and its two cli.js: {tree:?}");
    let refused = |what: &str, status: Status| {
        let r = wait_live(sb, &pane, status);
        let (c, oc, why) = outcome(sb, &["park", &pane]);
        assert_eq!(
            (c, oc.as_str()),
            (1, "refused"),
            "{what}: {why:?} {r:?}\n{}",
            sb.capture(&pane)
        );
        assert!(tree.iter().all(|&p| pid_alive(p)), "{what}: killed");
        assert!(entries(sb).is_empty(), "{what}: recorded");
        w.log(&format!("{what}: refused ({why:?})"));
    };

    sb.type_text(&pane, "an unsent thought");
    ok(sb.wait_for(&pane, "(?m)^> an unsent thought", Duration::from_secs(10)));
    refused("draft", Status::Draft);
    sb.send_keys(&pane, &["C-u"]);
    ok(sb.wait_for(&pane, READY_RE, Duration::from_secs(10)));

    submit_prompt(sb, &pane, "think slowly [slow 20]", ">");
    ok(sb.wait_for(&pane, r"esc to cancel\)", Duration::from_secs(30)));
    refused("turn in flight", Status::Busy);
    ok(sb.wait_for(&pane, &format!("(?s){REPLY_RE}.*{REPLY_RE}"), REPLY));

    submit_prompt(sb, &pane, "touch it [tool touch made-by-qwen]", ">");
    ok(sb.wait_for(&pane, "Waiting for user confirmation", REPLY));
    refused("tool confirmation", Status::Waiting);
    w.show(&pane, "confirmation");
    w.finish(&[]);
}

/// Two Qwen sessions in one cwd bind to their own ids (each its own process's registry, never
/// the newest chat of the project), park and come back each to its own pane; a hostile flag
/// value is carried as one argv element and never runs.
#[test]
fn two_sessions_in_one_cwd_keep_their_own_ids_and_a_hostile_value_never_runs() {
    let Some(w) = World::new() else { return };
    let sb = &w.sb;
    let dir = sb.project_dir("two");
    let hostile = "mock$(touch PWNED)";
    let a = w.qwen_in_shell("a", "two", "");
    let b = w.qwen_in_shell("b", "two", &format!("-m {}", sh_quote(hostile)));
    w.prompt(&a, "first session speaks", 1);
    w.prompt(&b, "second session speaks", 1);
    let ra = wait_live(sb, &a, Status::Idle);
    let rb = wait_live(sb, &b, Status::Idle);
    let (sa, sb_id) = (
        ra.session_id.clone().unwrap(),
        rb.session_id.clone().unwrap(),
    );
    assert_ne!(sa, sb_id, "two sessions, two ids");
    for (row, prompt) in [
        (&ra, "first session speaks"),
        (&rb, "second session speaks"),
    ] {
        let sid = row.session_id.as_deref().unwrap();
        let inner = *tree_of(row.pid.unwrap()).last().unwrap();
        assert_eq!(registry_session(&sb.home, inner).as_deref(), Some(sid));
        assert!(read_text(&qwen_transcript(&sb.home, &dir, sid)).contains(prompt));
    }

    for pane in [&a, &b] {
        let (c, oc, why) = park_when_quiet(sb, pane);
        assert_eq!((c, oc.as_str()), (0, "parked"), "{pane}: {why:?}");
    }
    for (pane, sid) in [(&a, &sa), (&b, &sb_id)] {
        let (c, oc, why) = outcome(sb, &["unpark", pane]);
        assert_eq!((c, oc.as_str()), (0, "unparked"), "{pane}: {why:?}");
        ok(sb.wait_for(pane, READY_RE, START));
        let back = wait_live(sb, pane, Status::Idle);
        assert_eq!(back.session_id.as_deref(), Some(sid.as_str()), "{pane}");
    }
    let argv = argv_of(row(sb, &b).unwrap().pid.unwrap());
    assert!(
        argv.windows(2).any(|p| p[0] == "-m" && p[1] == hostile),
        "the value is one argv element, verbatim: {argv:?}"
    );
    w.prompt(&b, "second session again", 2);
    assert!(read_text(&qwen_transcript(&sb.home, &dir, &sb_id)).contains("second session again"));
    assert!(!read_text(&qwen_transcript(&sb.home, &dir, &sa)).contains("second session again"));
    let pwned: Vec<_> = [dir.clone(), sb.home.clone(), sb.work.clone()]
        .iter()
        .map(|d| d.join("PWNED"))
        .filter(|p| p.exists())
        .collect();
    assert!(pwned.is_empty(), "a flag value ran as a command: {pwned:?}");
    w.finish(&[]);
}

/// `/clear` between the scan and the kill gives the pane a new session: the re-check before the
/// kill sees the registry change, rolls the claim back and kills nothing.
#[test]
fn a_clear_before_the_kill_rolls_back() {
    let Some(w) = World::new() else { return };
    let sb = &w.sb;
    let pane = w.qwen_in_shell("c", "c", "");
    w.prompt(&pane, "a turn before the clear", 1);
    let live = wait_live(sb, &pane, Status::Idle);
    let sid = live.session_id.clone().unwrap();
    let before = tree_of(live.pid.unwrap());
    // A park refused before its claim (the CPU of a Qwen that just replied, under load) is
    // started again: the test needs one that has claimed the session and waits before the kill.
    let child = park_paused_after_claim(sb, &pane, PAUSE_MS, |m| w.log(m));
    // The processes that lived through both snapshots: a helper Qwen ran for a moment after its
    // reply (longer under load) ends by itself and says nothing about the park.
    let tree: Vec<u32> = tree_of(live.pid.unwrap())
        .into_iter()
        .filter(|p| before.contains(p))
        .collect();
    let named: Vec<(u32, String)> = tree.iter().map(|&p| (p, argv_of(p).join(" "))).collect();
    submit_prompt(sb, &pane, "/clear", ">");
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("changed since the scan"), "{text}");
    let dead: Vec<_> = named.iter().filter(|(p, _)| !pid_alive(*p)).collect();
    assert!(dead.is_empty(), "nothing was killed: {dead:?} of {named:?}");
    assert!(entries(sb).is_empty(), "the claim was rolled back");
    let inner = *tree.last().unwrap();
    let now = registry_session(&sb.home, inner);
    assert!(
        now.is_some() && now.as_deref() != Some(sid.as_str()),
        "{now:?}"
    );
    w.finish(&[]);
}
