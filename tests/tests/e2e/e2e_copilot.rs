//! End-to-end tests of park with the REAL GitHub Copilot CLI (1.0.102, installed by
//! `scripts/setup`) in a private tmux server, offline (`COPILOT_OFFLINE` + BYOK) against
//! `mock-llm`'s Chat Completions API.
//!
//! What is tested, and why:
//! * a full park/unpark round trip: the npm loader and the native process die, the pane stays
//!   usable with `park unpark .` typed, park names the session whose `inuse.<pid>.lock` the native
//!   process holds, the archive holds the conversation, and `copilot --resume <id>` brings the
//!   same session back with the whitelisted flags; the resumed process (no lock until its first
//!   turn) is bound through its own log, and the conversation grows the same `events.jsonl`;
//! * the guards on real Copilot screens: an unsent draft, a turn in flight and an open
//!   permission prompt are refused, and nothing is killed or recorded;
//! * two sessions in one cwd keep their own ids and a hostile flag value never runs;
//! * `/clear` between the scan and the kill rolls the claim back.
//!
//! Run: `bash scripts/setup && cargo build -p park && cargo test -p park-e2e --test e2e e2e_copilot:: -- --nocapture`

use crate::common::*;
use park_e2e::*;
use park_protocol::{Row, RowState, Status};
use std::time::{Duration, Instant};

/// The loader and the native binary start (the first time in a HOME, it writes its state).
const START: Duration = Duration::from_secs(60);
/// A model reply from the mock (tests may run in parallel).
const REPLY: Duration = Duration::from_secs(60);
/// How long to keep retrying a park the CPU guard refuses.
const CPU_SETTLE: Duration = Duration::from_secs(60);
/// How long the /clear test's park waits after its claim, before its kill.
const PAUSE_MS: u32 = 4000;
const REPLY_RE: &str = r"canned reply #\d+\)\. PARKTEST-OK";
/// The empty composer between its two rules, and the idle footer under them.
const READY_RE: &str = r"(?m)^❯\s*\n─+\n (← open sidebar|Interactive)";

/// One test's world: sandbox, mock server, seeded Copilot home, `park` on the panes' PATH.
struct World {
    sb: Sandbox,
    mock: MockServer,
    copilot: Copilot,
    t0: Instant,
}

impl World {
    fn new() -> World {
        Agents::locate();
        let copilot = Copilot::locate();
        let sb = Sandbox::new();
        let mock = mock_server!(&sb.logs);
        seed_copilot_home(&sb.home, &sb.work).expect("seed copilot home");
        install_shims(&sb, None);
        World {
            sb,
            mock,
            copilot,
            t0: Instant::now(),
        }
    }

    fn log(&self, what: &str) {
        eprintln!("[{:>6.1}s] {what}", self.t0.elapsed().as_secs_f64());
    }

    /// A shell pane in `work/<proj>` with Copilot's environment; `copilot <args>` typed at its
    /// prompt; waits for the empty composer.
    fn copilot_in_shell(&self, window: &str, proj: &str, args: &str) -> String {
        let dir = self.sb.project_dir(proj);
        let env = self.sb.copilot_env(&self.copilot, &self.mock);
        let pane = self.sb.new_shell_window("w", window, &dir, &env);
        let cmd = format!("copilot {args}").trim().to_string();
        self.sb.type_line(&pane, &cmd);
        ok(self.sb.wait_for(&pane, READY_RE, START));
        self.log(&format!("{pane}: `{cmd}` is ready"));
        pane
    }

    /// Submits `prompt`, pressing Enter again when the composer still holds it (Copilot drops
    /// an Enter that arrives with the typed keys), and waits until the screen holds `n` replies.
    fn send(&self, pane: &str, prompt: &str) {
        submit_prompt(&self.sb, pane, prompt, "❯");
        let still = format!("(?m)^❯ {}", regex::escape(prompt));
        for _ in 0..3 {
            std::thread::sleep(Duration::from_secs(2));
            let screen = self.sb.capture(pane);
            if !regex::Regex::new(&still).unwrap().is_match(&screen) {
                return;
            }
            self.sb.press_enter(pane);
        }
    }

    fn prompt(&self, pane: &str, prompt: &str, nth: usize) {
        self.send(pane, prompt);
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

fn park_when_quiet(sb: &Sandbox, pane: &str) -> (i32, String, Option<String>) {
    park_when_settled(sb, pane, CPU_SETTLE, &["CPU", "turn in flight"])
}

fn wait_live(sb: &Sandbox, pane: &str, status: Status) -> Row {
    let r = wait_row(sb, pane, Duration::from_secs(60), |r| {
        r.state == RowState::Live && r.status == status && r.session_id.is_some()
    });
    assert_pinned_version(&r);
    r
}

/// The native process under the loader `pid` (the last of its tree named copilot).
fn native_of(pid: u32) -> u32 {
    tree_of(pid)
        .into_iter()
        .rfind(|&p| {
            argv_of(p)
                .iter()
                .take(2)
                .any(|a| a.ends_with("copilot-linux-x64/copilot") || a.ends_with("/copilot"))
        })
        .unwrap_or(pid)
}

#[test]
fn copilot_park_unpark_round_trip() {
    let w = World::new();
    let sb = &w.sb;
    let pane = w.copilot_in_shell("rt", "rt", "--allow-tool 'shell(echo)' --model gpt-4.1");
    w.prompt(&pane, "hello from the copilot round trip", 1);
    let live = wait_live(sb, &pane, Status::Idle);
    let sid = live.session_id.clone().unwrap();
    assert_eq!(live.session_source.as_deref(), Some("lock"), "{live:?}");
    let pid = live.pid.expect("row pid");
    let tree = tree_of(pid);
    let native = native_of(pid);
    assert!(
        tree.len() >= 2 && native != pid,
        "loader and native: {tree:?}"
    );
    assert_eq!(copilot_locks(&sb.home, native), vec![sid.clone()]);
    assert!(live.bytes > 0, "{live:?}");
    let events = copilot_events(&sb.home, &sid);
    assert!(read_text(&events).contains("hello from the copilot round trip"));
    let lines_before = read_text(&events).lines().count();
    w.log(&format!(
        "live: {sid} pid {pid} native {native} tree {tree:?}"
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
    assert!(md.contains("hello from the copilot round trip"), "{md}");
    w.show(&pane, "parked");

    let (c, oc, why) = outcome(sb, &["unpark", &pane]);
    assert_eq!(
        (c, oc.as_str()),
        (0, "unparked"),
        "{why:?}\n{}",
        sb.capture(&pane)
    );
    ok(sb.wait_for(&pane, READY_RE, START));
    // Before its first turn a resumed Copilot holds no lock: its own log names the session.
    let back = wait_live(sb, &pane, Status::Idle);
    assert_eq!(back.session_id.as_deref(), Some(sid.as_str()), "{back:?}");
    assert_eq!(
        back.session_source.as_deref(),
        Some("process-log"),
        "{back:?}"
    );
    let new_pid = back.pid.expect("row pid");
    assert!(!tree.contains(&new_pid), "a new process runs the session");
    let argv = argv_of(new_pid);
    eprintln!("resumed argv: {argv:?}");
    for pair in [
        ["--resume", sid.as_str()],
        ["--allow-tool", "shell(echo)"],
        ["--model", "gpt-4.1"],
    ] {
        assert!(
            argv.windows(2).any(|p| p[0] == pair[0] && p[1] == pair[1]),
            "{pair:?} in the resume argv: {argv:?}"
        );
    }
    poll(Duration::from_secs(10), || {
        entries(sb).is_empty().then_some(())
    })
    .unwrap_or_else(|| panic!("the verifier did not clear the entry: {:?}", entries(sb)));
    w.show(&pane, "unparked");

    // The conversation goes on in the same events file; the lock comes back with the turn.
    w.prompt(&pane, "second prompt after the unpark", 2);
    poll(REPLY, || {
        read_text(&events)
            .contains("second prompt after the unpark")
            .then_some(())
    })
    .unwrap_or_else(|| panic!("the second turn never reached {}", events.display()));
    assert!(read_text(&events).lines().count() > lines_before);
    let again = wait_live(sb, &pane, Status::Idle);
    assert_eq!(again.session_id.as_deref(), Some(sid.as_str()));
    let mut dead = tree;
    dead.extend(tree_of(new_pid));
    w.finish(&dead);
}

#[test]
fn copilot_guards_refuse_draft_busy_and_permission() {
    let w = World::new();
    let sb = &w.sb;
    let pane = w.copilot_in_shell("g", "g", "");
    w.prompt(&pane, "first turn so there is a session", 1);
    let live = wait_live(sb, &pane, Status::Idle);
    let tree = tree_of(live.pid.expect("row pid"));
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
    ok(sb.wait_for(&pane, "(?m)^❯ an unsent thought", Duration::from_secs(10)));
    refused("draft", Status::Draft);
    sb.send_keys(&pane, &["C-u"]);
    ok(sb.wait_for(&pane, READY_RE, Duration::from_secs(10)));

    w.send(&pane, "think slowly [slow 20]");
    ok(sb.wait_for(&pane, "Working", Duration::from_secs(30)));
    refused("turn in flight", Status::Busy);
    ok(sb.wait_for(&pane, &format!("(?s){REPLY_RE}.*{REPLY_RE}"), REPLY));

    w.send(&pane, "touch it [tool touch made-by-copilot]");
    ok(sb.wait_for(&pane, "Do you want to run this command", REPLY));
    refused("permission prompt", Status::Waiting);
    w.show(&pane, "permission");
    assert!(!sb.project_dir("g").join("made-by-copilot").exists());
    w.finish(&[]);
}

/// Two Copilot sessions in one cwd bind to their own ids (each its own process's lock), park
/// and come back each to its own pane; a hostile flag value is one argv element and never runs.
#[test]
fn two_copilot_sessions_in_one_cwd_keep_their_own_ids_and_a_hostile_value_never_runs() {
    let w = World::new();
    let sb = &w.sb;
    let dir = sb.project_dir("two");
    let hostile = "srv$(touch PWNED)";
    let a = w.copilot_in_shell("a", "two", "");
    let b = w.copilot_in_shell(
        "b",
        "two",
        &format!("--disable-mcp-server {}", sh_quote(hostile)),
    );
    w.prompt(&a, "first session speaks", 1);
    w.prompt(&b, "second session speaks", 1);
    let ra = wait_live(sb, &a, Status::Idle);
    let rb = wait_live(sb, &b, Status::Idle);
    let (sa, sb_id) = (
        ra.session_id.clone().unwrap(),
        rb.session_id.clone().unwrap(),
    );
    assert_ne!(sa, sb_id, "two sessions, two ids");
    for (r, prompt) in [
        (&ra, "first session speaks"),
        (&rb, "second session speaks"),
    ] {
        let sid = r.session_id.as_deref().unwrap();
        let native = native_of(r.pid.unwrap());
        assert_eq!(copilot_locks(&sb.home, native), vec![sid.to_string()]);
        assert!(read_text(&copilot_events(&sb.home, sid)).contains(prompt));
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
        argv.windows(2)
            .any(|p| p[0] == "--disable-mcp-server" && p[1] == hostile),
        "the value is one argv element, verbatim: {argv:?}"
    );
    w.prompt(&b, "second session again", 2);
    assert!(read_text(&copilot_events(&sb.home, &sb_id)).contains("second session again"));
    assert!(!read_text(&copilot_events(&sb.home, &sa)).contains("second session again"));
    let pwned: Vec<_> = [dir.clone(), sb.home.clone(), sb.work.clone()]
        .iter()
        .map(|d| d.join("PWNED"))
        .filter(|p| p.exists())
        .collect();
    assert!(pwned.is_empty(), "a flag value ran as a command: {pwned:?}");
    w.finish(&[]);
}

/// `/clear` between the scan and the kill gives the pane a new session: the re-check before the
/// kill sees the lock and the log move, rolls the claim back and kills nothing.
#[test]
fn a_copilot_clear_before_the_kill_rolls_back() {
    let w = World::new();
    let sb = &w.sb;
    let pane = w.copilot_in_shell("c", "c", "");
    w.prompt(&pane, "a turn before the clear", 1);
    let live = wait_live(sb, &pane, Status::Idle);
    let sid = live.session_id.clone().unwrap();
    let before = tree_of(live.pid.unwrap());
    let child = park_paused_after_claim(sb, &pane, PAUSE_MS, |m| w.log(m));
    let tree: Vec<u32> = tree_of(live.pid.unwrap())
        .into_iter()
        .filter(|p| before.contains(p))
        .collect();
    let named: Vec<(u32, String)> = tree.iter().map(|&p| (p, argv_of(p).join(" "))).collect();
    submit_prompt(sb, &pane, "/clear", "❯");
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("changed since the scan"), "{text}");
    let dead: Vec<_> = named.iter().filter(|(p, _)| !pid_alive(*p)).collect();
    assert!(dead.is_empty(), "nothing was killed: {dead:?} of {named:?}");
    assert!(entries(sb).is_empty(), "the claim was rolled back");
    let native = native_of(live.pid.unwrap());
    let now = copilot_locks(&sb.home, native);
    assert!(now.len() == 1 && now[0] != sid, "{now:?}");
    w.finish(&[]);
}
