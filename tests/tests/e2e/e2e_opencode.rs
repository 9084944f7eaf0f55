//! End-to-end tests of park with the REAL OpenCode (1.18.33) and Kilo CLI (7.7.7, its fork),
//! installed by `scripts/setup`, in a private tmux server, talking to `mock-llm`'s Chat
//! Completions API through a `mock` provider. The round trip and the guards run for both.
//!
//! What is tested, and why:
//! * without park's plugin a plain `opencode` is untargetable and says `park integrate
//!   opencode`; with it, a full round trip: the process dies, the pane stays with `park unpark .`
//!   typed, the archive holds the conversation, and `opencode -s <id>` brings the same session
//!   back in the same pane with `--model` replayed; the same database session grows;
//! * two sessions in one cwd keep their own ids (the plugin's per-process records, never the
//!   newest session of the directory) and a hostile flag value is one argv element that never runs;
//! * the guards on real screens: a draft, a turn in flight and a permission prompt are refused
//!   and nothing is killed;
//! * `/new` between the scan and the kill: the re-check sees the pane's session change and rolls
//!   the claim back.
//!
//! Run: `bash scripts/setup && cargo build -p park && cargo test -p park-e2e --test e2e e2e_opencode:: -- --nocapture`

use crate::common::*;
use park_e2e::*;
use park_protocol::{Row, RowState, Status};
use std::time::{Duration, Instant};

/// The first start in a HOME npm-installs OpenCode's plugin package.
const START: Duration = Duration::from_secs(120);
const REPLY: Duration = Duration::from_secs(60);
/// How long to keep retrying a park the CPU guard refuses (OpenCode works on after a reply).
const CPU_SETTLE: Duration = Duration::from_secs(60);
const PAUSE_MS: u32 = 4000;
const REPLY_RE: &str = r"canned reply #\d+\)\. PARKTEST-OK";
/// The composer's agent and model line (`Build · …`; Kilo: `Code  · …`): the TUI is up.
const READY_RE: &str = r"┃  \w+ +· Mock Model";

struct World {
    sb: Sandbox,
    mock: MockServer,
    oc: Opencode,
    t0: Instant,
}

impl World {
    fn new(integrate: bool) -> World {
        Self::of(OcCli::Opencode, integrate)
    }

    fn of(cli: OcCli, integrate: bool) -> World {
        Agents::locate();
        let oc = Opencode::locate_cli(cli);
        let sb = Sandbox::new();
        let mock = mock_server!(&sb.logs);
        seed_opencode_home(&sb.home, &mock).expect("seed opencode home");
        install_shims(&sb, None);
        let w = World {
            sb,
            mock,
            oc,
            t0: Instant::now(),
        };
        if integrate {
            w.integrate();
        }
        w
    }

    fn integrate(&self) {
        let o = park(&self.sb, &["integrate", self.oc.cli.name()]);
        assert_eq!(code(&o), 0, "{}", text(&o));
    }

    fn db(&self) -> std::path::PathBuf {
        self.oc.db(&self.sb.home)
    }

    fn log(&self, what: &str) {
        eprintln!("[{:>6.1}s] {what}", self.t0.elapsed().as_secs_f64());
    }

    /// A shell pane in `work/<proj>` with `opencode <args>` typed; waits for its composer.
    fn opencode_in_shell(&self, window: &str, proj: &str, args: &str) -> String {
        let dir = self.sb.project_dir(proj);
        let env = self.sb.opencode_env(&self.oc);
        let pane = self.sb.new_shell_window("w", window, &dir, &env);
        let cmd = format!("{} {args}", self.oc.cli.name()).trim().to_string();
        self.sb.type_line(&pane, &cmd);
        ok(self.sb.wait_for(&pane, READY_RE, START));
        self.log(&format!("{pane}: `{cmd}` is ready"));
        pane
    }

    /// Sends `prompt` and waits until the screen shows `n` canned replies.
    fn prompt(&self, pane: &str, prompt: &str, nth: usize) {
        submit_prompt(&self.sb, pane, prompt, "┃ ");
        let re = format!("(?s){}", vec![REPLY_RE; nth].join(".*"));
        ok(self.sb.wait_for(pane, &re, REPLY));
        self.log(&format!("{pane}: reply to {prompt:?}"));
    }

    /// The first turn, and for Kilo a second: Kilo titles a session only at its second prompt,
    /// and until then its terminal title cannot confirm which session the pane shows.
    fn first_turns(&self, pane: &str, prompt: &str) {
        self.prompt(pane, prompt, 1);
        if self.oc.cli == OcCli::Kilo {
            self.prompt(pane, "and a second turn so that Kilo titles it", 2);
        }
    }

    fn finish(self, also_dead: &[u32]) {
        teardown(self.sb, self.mock, also_dead);
    }
}

fn park_when_quiet(sb: &Sandbox, pane: &str) -> (i32, String, Option<String>) {
    park_when_settled(sb, pane, CPU_SETTLE, &["CPU", "turn in flight"])
}

fn wait_live(sb: &Sandbox, pane: &str, status: Status, source: &str) -> Row {
    let r = wait_row(sb, pane, Duration::from_secs(60), |r| {
        r.state == RowState::Live
            && r.status == status
            && r.session_source.as_deref() == Some(source)
            && r.session_id.is_some()
    });
    assert_pinned_version(&r);
    r
}

#[test]
fn opencode_park_unpark_round_trip_with_the_plugin() {
    round_trip(OcCli::Opencode);
}

#[test]
fn kilo_park_unpark_round_trip_with_the_plugin() {
    round_trip(OcCli::Kilo);
}

fn round_trip(cli: OcCli) {
    let w = World::of(cli, false);
    let sb = &w.sb;
    // No integration yet: untargetable, and the reason names the fix.
    let plain = w.opencode_in_shell("plain", "rt", "");
    w.prompt(&plain, "hello before the integration", 1);
    let r = wait_row(sb, &plain, Duration::from_secs(30), |r| {
        r.state == RowState::Untargetable
    });
    let why = r.reason.clone().unwrap_or_default();
    assert!(
        why.contains(&format!("park integrate {}", cli.name())),
        "{r:?}"
    );
    let (c, oc, _) = outcome(sb, &["park", &plain]);
    assert_eq!((c, oc.as_str()), (1, "refused"));
    // Gone for good: an OpenCode that park cannot identify blocks every unpark in its data dir
    // (Kilo's first ctrl+c only clears the box).
    let plain_tree = tree_of(r.pid.expect("row pid"));
    for &p in &plain_tree {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(p as i32),
            nix::sys::signal::Signal::SIGTERM,
        );
    }
    for &p in &plain_tree {
        assert!(
            wait_gone(p, Duration::from_secs(10)),
            "{p} outlived SIGTERM"
        );
    }

    w.integrate();
    let pane = w.opencode_in_shell("rt", "rt", "--model mock/mock-model");
    w.first_turns(&pane, "hello from the opencode round trip");
    let live = wait_live(sb, &pane, Status::Idle, "plugin");
    let sid = live.session_id.clone().unwrap();
    assert!(sid.starts_with("ses_"), "{sid}");
    let pid = live.pid.expect("row pid");
    let tree = tree_of(pid);
    let before = opencode_messages(&w.db(), &sid).expect("messages in the db");
    assert!(before >= 2, "{before}");
    w.log(&format!("live: {sid} pid {pid} tree {tree:?}"));

    let (c, oc, why) = park_when_quiet(sb, &pane);
    assert_eq!(
        (c, oc.as_str()),
        (0, "parked"),
        "{why:?}\n{}",
        sb.capture(&pane)
    );
    for &p in &tree {
        assert!(
            wait_gone(p, Duration::from_secs(10)),
            "pid {p} survived: {:?}",
            argv_of(p)
        );
    }
    assert!(sb.pane_alive(&pane));
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
    assert!(md.contains("hello from the opencode round trip"), "{md}");
    show_pane(sb, &pane, "parked");

    let (c, oc, why) = outcome(sb, &["unpark", &pane]);
    assert_eq!(
        (c, oc.as_str()),
        (0, "unparked"),
        "{why:?}\n{}",
        sb.capture(&pane)
    );
    ok(sb.wait_for(&pane, READY_RE, START));
    // Resumed by argv until its first prompt, then by the plugin again.
    let back = wait_live(sb, &pane, Status::Idle, "argv");
    assert_eq!(back.session_id.as_deref(), Some(sid.as_str()), "{back:?}");
    let new_pid = back.pid.unwrap();
    let argv = argv_of(new_pid);
    assert!(
        argv.windows(2).any(|p| p[0] == "-s" && p[1] == sid),
        "{argv:?}"
    );
    assert!(
        argv.windows(2)
            .any(|p| p[0] == "--model" && p[1] == "mock/mock-model"),
        "{argv:?}"
    );
    assert!(!argv.iter().any(|a| a == "--fork"), "{argv:?}");
    poll(Duration::from_secs(15), || {
        entries(sb).is_empty().then_some(())
    })
    .unwrap_or_else(|| panic!("the verifier did not clear the entry: {:?}", entries(sb)));
    w.prompt(&pane, "second prompt after the unpark", 2);
    let back = wait_live(sb, &pane, Status::Idle, "plugin");
    assert_eq!(back.session_id.as_deref(), Some(sid.as_str()));
    let after = opencode_messages(&w.db(), &sid).unwrap();
    assert!(after > before, "the same session grew: {before} -> {after}");
    let mains: Vec<_> = opencode_sessions(&w.db())
        .into_iter()
        .filter(|(_, d, _)| d.ends_with("/rt"))
        .collect();
    assert_eq!(
        mains.len(),
        2,
        "the plain one and this one, no third: {mains:?}"
    );
    let mut dead = tree;
    dead.extend(tree_of(new_pid));
    w.finish(&dead);
}

/// Two OpenCode sessions in one cwd bind to their own ids through their own records; a hostile
/// flag value is carried as one argv element and never runs.
#[test]
fn two_opencode_sessions_in_one_cwd_keep_their_ids_and_a_hostile_value_never_runs() {
    let w = World::new(true);
    let sb = &w.sb;
    let dir = sb.project_dir("two");
    let hostile = "x$(touch PWNED)";
    let a = w.opencode_in_shell("a", "two", "");
    let b = w.opencode_in_shell("b", "two", &format!("--mdns-domain {}", sh_quote(hostile)));
    w.prompt(&a, "first session about herons", 1);
    w.prompt(&b, "second session about otters", 1);
    let ra = wait_live(sb, &a, Status::Idle, "plugin");
    let rb = wait_live(sb, &b, Status::Idle, "plugin");
    let (sa, sb_id) = (
        ra.session_id.clone().unwrap(),
        rb.session_id.clone().unwrap(),
    );
    assert_ne!(sa, sb_id);
    for pane in [&a, &b] {
        let (c, oc, why) = park_when_quiet(sb, pane);
        assert_eq!((c, oc.as_str()), (0, "parked"), "{pane}: {why:?}");
    }
    for (pane, sid) in [(&a, &sa), (&b, &sb_id)] {
        let (c, oc, why) = outcome(sb, &["unpark", pane]);
        assert_eq!((c, oc.as_str()), (0, "unparked"), "{pane}: {why:?}");
        ok(sb.wait_for(pane, READY_RE, START));
        let back = wait_live(sb, pane, Status::Idle, "argv");
        assert_eq!(back.session_id.as_deref(), Some(sid.as_str()), "{pane}");
    }
    let argv = argv_of(row(sb, &b).unwrap().pid.unwrap());
    assert!(
        argv.windows(2)
            .any(|p| p[0] == "--mdns-domain" && p[1] == hostile),
        "the value is one argv element, verbatim: {argv:?}"
    );
    let pwned: Vec<_> = [dir.clone(), sb.home.clone(), sb.work.clone()]
        .iter()
        .map(|d| d.join("PWNED"))
        .filter(|p| p.exists())
        .collect();
    assert!(pwned.is_empty(), "a flag value ran as a command: {pwned:?}");
    w.finish(&[]);
}

#[test]
fn opencode_guards_refuse_draft_busy_and_permission() {
    guards(OcCli::Opencode);
}

#[test]
fn kilo_guards_refuse_draft_busy_and_permission() {
    guards(OcCli::Kilo);
}

fn guards(cli: OcCli) {
    let w = World::of(cli, true);
    let sb = &w.sb;
    let pane = w.opencode_in_shell("g", "g", "");
    w.first_turns(&pane, "first turn so there is a session");
    let live = wait_live(sb, &pane, Status::Idle, "plugin");
    let root = live.pid.unwrap();
    let refused = |what: &str, status: Status| {
        // Refused for its state, with its session known (never only for being untargetable).
        let r = wait_row(sb, &pane, Duration::from_secs(60), |r| {
            r.status == status && r.session_id.is_some()
        });
        let (c, oc, why) = outcome(sb, &["park", &pane]);
        assert_eq!(
            (c, oc.as_str()),
            (1, "refused"),
            "{what}: {why:?} {r:?}\n{}",
            sb.capture(&pane)
        );
        assert!(pid_alive(root), "{what}: killed");
        assert!(entries(sb).is_empty(), "{what}: recorded");
        w.log(&format!("{what}: refused ({why:?})"));
    };
    sb.type_text(&pane, "an unsent thought");
    ok(sb.wait_for(&pane, "┃  an unsent thought", Duration::from_secs(10)));
    refused("draft", Status::Draft);
    sb.send_keys(&pane, &["C-u"]);

    submit_prompt(sb, &pane, "think slowly [slow 20]", "┃ ");
    ok(sb.wait_for(&pane, "esc interrupt", Duration::from_secs(30)));
    refused("turn in flight", Status::Busy);
    let n = if w.oc.cli == OcCli::Kilo { 3 } else { 2 };
    let re = format!("(?s){}", vec![REPLY_RE; n].join(".*"));
    ok(sb.wait_for(&pane, &re, REPLY));

    submit_prompt(sb, &pane, "touch it [tool touch made-by-the-agent]", "┃ ");
    ok(sb.wait_for(&pane, "Permission required", REPLY));
    refused("permission prompt", Status::Waiting);
    show_pane(sb, &pane, "permission");
    w.finish(&[]);
}

/// `/new` between the scan and the kill: the pane no longer shows the claimed session, so the
/// re-check before the kill rolls the claim back and nothing is killed.
#[test]
fn a_new_session_before_the_kill_rolls_back() {
    let w = World::new(true);
    let sb = &w.sb;
    let pane = w.opencode_in_shell("n", "n", "");
    w.prompt(&pane, "a turn before the new session", 1);
    let live = wait_live(sb, &pane, Status::Idle, "plugin");
    let root = live.pid.unwrap();
    let child = park_paused_after_claim(sb, &pane, PAUSE_MS, |m| w.log(m));
    submit_prompt(sb, &pane, "/new", "┃ ");
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("changed since the scan"), "{text}");
    assert!(pid_alive(root), "nothing was killed");
    assert!(entries(sb).is_empty(), "the claim was rolled back");
    w.finish(&[]);
}
