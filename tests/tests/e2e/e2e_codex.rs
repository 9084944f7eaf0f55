//! End-to-end tests of park with the REAL Codex CLI (0.171.0, installed by `scripts/setup`) in a
//! private tmux server, talking to the local `mock-llm` server.
//!
//! What is tested, and why (the plain `--no-daemon` TUI's round trip, its guards against losing
//! work — a draft, a turn in flight, an approval prompt — two threads in one cwd and the `/new`
//! rollback are `contract::codex::*` in `contract.rs`, as for every agent; here is what only Codex
//! does):
//! * a rollout Codex's cleanup deleted while parked is restored from park's archive;
//! * daemon mode with `thread-id` in the pane title (`title-id`): parking kills the TUI but never
//!   the shared `codex app-server` daemon, and `codex resume <id>` re-attaches to the same thread.
//! * daemon mode with the DEFAULT config and two threads with the same name: park must never guess
//!   (untargetable, or an exact id per pane), and parking an untargetable row kills nothing.
//! * a uuid in text the user controls — a directory named after
//!   another thread, a draft quoting an id — must not become the pane's thread id.
//!
//! Every test starts Codex from a bash prompt in a pane (as a user would), owns a [`Sandbox`] and
//! a [`MockServer`], and checks at the end that nothing refers to its sandbox any more.
//!
//! Run: `bash scripts/setup && cargo build -p park && cargo test -p park-e2e --test e2e e2e_codex:: -- --nocapture`
//!

use crate::common::*;
use park_e2e::*;
use park_protocol::{Row, RowState, Status};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A `--no-daemon` TUI start (node wrapper + native binary, no daemon copy).
const START: Duration = Duration::from_secs(90);
/// The first daemon-mode start of a HOME copies ~424 MB into `~/.codex/packages` first.
const DAEMON_START: Duration = Duration::from_secs(180);
/// A model reply from the mock (Codex adds its own latency; tests may run in parallel).
const REPLY: Duration = Duration::from_secs(90);
/// How long to keep retrying a park the CPU guard refuses (a TUI just after a reply or start).
const CPU_SETTLE: Duration = Duration::from_secs(60);
/// The canned reply of the mock.
const REPLY_RE: &str = r"canned reply #\d+\)\. PARKTEST-OK";
/// The empty composer's placeholder: the TUI is up and accepts input.
const READY_RE: &str = "Ask Codex to do anything";

/// One test's world: sandbox, mock server, seeded Codex home, `park` on the panes' PATH.
struct World {
    sb: Sandbox,
    mock: MockServer,
    t0: Instant,
}

impl World {
    fn new(seed: &CodexSeed) -> World {
        Agents::locate();
        let sb = Sandbox::new();
        let mock = mock_server!(&sb.logs);
        seed_codex_home(&sb.home, &sb.work, &mock, seed).expect("seed codex home");
        install_shims(&sb, None);
        World {
            sb,
            mock,
            t0: Instant::now(),
        }
    }

    fn log(&self, what: &str) {
        eprintln!("[{:>6.1}s] {what}", self.t0.elapsed().as_secs_f64());
    }

    /// A shell pane in `work/<proj>` with the codex environment; `codex <args>` typed at its
    /// prompt; waits for the TUI's empty composer.
    fn codex_in_shell(&self, window: &str, proj: &str, args: &str, start: Duration) -> String {
        let dir = self.sb.project_dir(proj);
        let pane = self
            .sb
            .new_shell_window("w", window, &dir, &self.sb.codex_env());
        let cmd = if args.is_empty() {
            "codex".to_string()
        } else {
            format!("codex {args}")
        };
        self.sb.type_line(&pane, &cmd);
        ok(self.sb.wait_for(&pane, READY_RE, start));
        self.log(&format!("{pane}: `{cmd}` is ready"));
        pane
    }

    /// Sends `prompt` and waits for the `n`-th canned reply on the screen.
    fn prompt(&self, pane: &str, prompt: &str, nth: usize) {
        // A TUI that just drew its composer can still drop the first keys (seen once under CI
        // load): type until the text shows in the composer, then submit.
        let shown = format!("› {}", regex::escape(prompt));
        for attempt in 0..3 {
            self.sb.type_text(pane, prompt);
            if self
                .sb
                .wait_for(pane, &shown, Duration::from_secs(5))
                .is_ok()
            {
                break;
            }
            self.log(&format!(
                "{pane}: prompt not echoed (attempt {attempt}), retyping"
            ));
            self.sb.send_keys(pane, &["C-u"]);
        }
        self.sb.press_enter(pane);
        let re = format!("(?s){}", vec![REPLY_RE; nth].join(".*"));
        ok(self.sb.wait_for(pane, &re, REPLY));
        self.log(&format!("{pane}: reply to {prompt:?}"));
    }

    /// Prints the pane (screen and title) to the test output, for the record.
    fn show(&self, pane: &str, what: &str) {
        let screen = self.sb.capture(pane);
        let lines: Vec<&str> = screen.lines().filter(|l| !l.trim().is_empty()).collect();
        eprintln!(
            "--- {what}: pane {pane}, title {:?}, alternate_on {:?} ---\n{}\n---",
            self.sb.pane_title(pane),
            self.sb.display(pane, "#{alternate_on}"),
            lines.join("\n")
        );
    }

    /// Tears the world down and asserts nothing survived (processes, tmux server, dir, mock).
    fn finish(self, also_dead: &[u32]) {
        let World { mut sb, mock, t0 } = self;
        let root = sb.root.clone();
        let label = sb.label().to_string();
        let survivors = sb.cleanup();
        assert!(survivors.is_empty(), "survived cleanup: {survivors:?}");
        let left = processes_referencing(&root);
        assert!(
            left.is_empty(),
            "processes still refer to the sandbox: {left:?}"
        );
        for &p in also_dead {
            assert!(!pid_alive(p), "pid {p} still alive after cleanup");
        }
        if std::env::var_os("PARK_KEEP_SANDBOX").is_none() {
            assert!(!root.exists(), "{} was not removed", root.display());
        }
        let socket = format!("/tmp/tmux-{}/{label}", current_uid());
        assert!(!Path::new(&socket).exists(), "{socket} left behind");
        drop(sb);
        let mock_pid = mock.pid();
        drop(mock);
        assert!(!pid_alive(mock_pid), "mock-llm {mock_pid} still alive");
        eprintln!("[{:>6.1}s] cleaned up", t0.elapsed().as_secs_f64());
    }
}

/// `park park <pane>`, retried while only the CPU guard refuses (a TUI that just started or
/// replied still burns CPU for a moment; under parallel load for longer).
fn park_when_quiet(sb: &Sandbox, pane: &str) -> (i32, String, Option<String>) {
    park_when_settled(sb, pane, CPU_SETTLE, SETTLING)
}

/// Waits for the pane's row to be live, idle and identified by `source`.
fn wait_live_idle(sb: &Sandbox, pane: &str, source: &str, timeout: Duration) -> Row {
    let r = wait_row(sb, pane, timeout, |r| {
        r.state == RowState::Live
            && r.status == Status::Idle
            && r.session_source.as_deref() == Some(source)
            && r.session_id.is_some()
    });
    assert_pinned_version(&r);
    r
}

/// Rollout files of thread `sid`.
fn rollouts_of(home: &Path, sid: &str) -> Vec<PathBuf> {
    codex_rollouts(home)
        .into_iter()
        .filter(|p| p.to_string_lossy().contains(sid))
        .collect()
}

/// Waits until the rollout holds `needle` and at least `turns` completed turns.
fn wait_rollout(path: &Path, needle: &str, turns: usize, timeout: Duration) {
    poll(timeout, || {
        let s = read_text(path);
        (s.contains(needle) && s.matches("\"task_complete\"").count() >= turns).then_some(())
    })
    .unwrap_or_else(|| {
        let s = read_text(path);
        panic!(
            "{} never held {needle:?} with {turns} completed turns (has needle: {}, turns: {})",
            path.display(),
            s.contains(needle),
            s.matches("\"task_complete\"").count()
        )
    });
}

/// Live daemon pids (app-server and its pid-update-loop) of the sandbox's Codex home.
fn live_daemons(home: &Path) -> Vec<u32> {
    codex_daemon_pids(home)
        .into_iter()
        .filter(|&p| pid_alive(p))
        .collect()
}

/// `(id, thread_name)` of every line of `session_index.jsonl`.
fn session_index(home: &Path) -> Vec<(String, String)> {
    read_text(&home.join(".codex/session_index.jsonl"))
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| {
            Some((
                v.get("id")?.as_str()?.to_string(),
                v.get("thread_name")?.as_str()?.to_string(),
            ))
        })
        .collect()
}

/// The shared checks after a park: outcome, the whole tree gone, the pane kept and usable, one
/// ledger entry, a parked row with freed bytes.
fn assert_parked(w: &World, pane: &str, sid: &str, tree: &[u32]) -> Row {
    let sb = &w.sb;
    for &p in tree {
        assert!(
            wait_gone(p, Duration::from_secs(5)),
            "pid {p} of the TUI tree survived the park: {:?}",
            argvs(&[p])
        );
    }
    assert!(sb.pane_alive(pane), "the pane must stay");
    let es = entries(sb);
    assert_eq!(es.len(), 1, "one ledger entry: {es:?}");
    let parked = row(sb, pane).expect("a row for the parked pane");
    assert_eq!(parked.state, RowState::Parked, "{parked:?}");
    assert_eq!(parked.session_id.as_deref(), Some(sid));
    assert!(
        parked.freed_bytes.is_some_and(|b| b > 0),
        "freed bytes recorded: {parked:?}"
    );
    // The pane is usable: off the alternate screen, at the shell prompt, the way back typed.
    ok(sb.wait_for(
        pane,
        r"park-test\$ park unpark \.\s*$",
        Duration::from_secs(10),
    ));
    assert_eq!(
        sb.display(pane, "#{alternate_on}").as_deref(),
        Some("0"),
        "the pane is left on the alternate screen"
    );
    w.show(pane, "parked");
    parked
}

/// After an unpark: the same thread is live again in the same pane; returns its row.
fn assert_back(w: &World, pane: &str, sid: &str, source: &str) -> Row {
    let sb = &w.sb;
    let back = wait_row(sb, pane, Duration::from_secs(60), |r| {
        r.state == RowState::Live && r.session_id.is_some()
    });
    assert_eq!(
        back.session_id.as_deref(),
        Some(sid),
        "the same thread in the same pane: {back:?}"
    );
    ok(sb.wait_for(pane, READY_RE, START));
    let back = wait_live_idle(sb, pane, source, Duration::from_secs(60));
    poll(Duration::from_secs(10), || {
        entries(sb).is_empty().then_some(())
    })
    .unwrap_or_else(|| panic!("the verifier did not clear the entry: {:?}", entries(sb)));
    assert_eq!(
        sb.tmux(&["show", "-p", "-q", "-t", pane, "-v", "@park_pill"])
            .unwrap()
            .trim(),
        "",
        "the pill is cleared"
    );
    w.show(pane, "unparked");
    back
}

#[test]
fn codex_rollout_deleted_after_park_is_restored_from_the_archive() {
    let w = World::new(&CodexSeed::default());
    let sb = &w.sb;
    let pane = w.codex_in_shell("gy", "gy", "--no-daemon", START);
    w.prompt(&pane, "codex graveyard walrus prompt", 1);
    let live = wait_live_idle(sb, &pane, "rollout-fd", Duration::from_secs(30));
    let sid = live.session_id.clone().unwrap();
    let tree = tree_of(live.pid.expect("row pid"));
    let rollout = rollouts_of(&sb.home, &sid).remove(0);
    let (c, oc, why) = park_when_quiet(sb, &pane);
    assert_eq!((c, oc.as_str()), (0, "parked"), "{why:?}");
    let adir = sb.park_home.join("archive").join(&sid);
    let md = std::fs::read_to_string(adir.join("transcript.md")).unwrap();
    assert!(md.contains("codex graveyard walrus prompt"), "{md}");
    eprintln!(
        "MEASURE codex archive: rollout {} B, archived raw {} B, markdown {} B",
        std::fs::metadata(&rollout).unwrap().len(),
        std::fs::metadata(adir.join("transcript.jsonl"))
            .unwrap()
            .len(),
        md.len()
    );
    // Codex's cleanup (or a person) removes the rollout: unpark puts the archived copy back at
    // the recorded path and the thread resumes from it.
    std::fs::remove_file(&rollout).unwrap();
    let (c, oc, why) = outcome(sb, &["unpark", &pane]);
    assert_eq!(
        (c, oc.as_str()),
        (0, "unparked"),
        "{why:?}\n{}",
        sb.capture(&pane)
    );
    assert!(
        why.as_deref()
            .is_some_and(|x| x.contains("restored the transcript")),
        "unpark says what it did: {why:?}"
    );
    let back = assert_back(&w, &pane, &sid, "rollout-fd");
    assert!(rollout.is_file());
    sb.type_line(&pane, "after the codex restore");
    wait_rollout(&rollout, "after the codex restore", 2, REPLY);
    assert!(
        read_text(&rollout).contains("codex graveyard walrus prompt"),
        "history kept"
    );
    let mut dead = tree;
    dead.extend(tree_of(back.pid.expect("row pid")));
    w.finish(&dead);
}

#[test]
fn codex_daemon_mode_park_spares_the_daemon() {
    let w = World::new(&CodexSeed::default().thread_id_title());
    let sb = &w.sb;
    let pane = w.codex_in_shell("d", "dm", "", DAEMON_START);
    w.prompt(&pane, "hello from the daemon park test", 1);
    let daemons = live_daemons(&sb.home);
    assert!(!daemons.is_empty(), "no app-server daemon is running");
    // The title carries the thread id prefix once Codex has named the thread.
    ok(sb.wait_for_title(
        &pane,
        r"\| [0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{5}\.\.\.$",
        Duration::from_secs(30),
    ));
    let r = wait_row(sb, &pane, Duration::from_secs(30), |r| {
        r.state != RowState::Live || r.status == Status::Idle
    });
    if r.state == RowState::Untargetable {
        panic!(
            "FINDING: daemon-mode TUI with thread-id in the title is untargetable: reason {:?}, title {:?}",
            r.reason,
            sb.pane_title(&pane)
        );
    }
    let live = wait_live_idle(sb, &pane, "title-id", Duration::from_secs(30));
    let sid = live.session_id.clone().unwrap();
    let pid = live.pid.unwrap();
    // The TUI tree without the daemon (which may be its child: the first TUI spawns it).
    let tree: Vec<u32> = tree_of(pid)
        .into_iter()
        .filter(|p| !daemons.contains(p) && !daemons.iter().any(|d| descendants(*d).contains(p)))
        .collect();
    w.log(&format!(
        "live: {sid} pid {pid} tree {tree:?} daemons {daemons:?}\n{}",
        argvs(&tree_of(pid)).join("\n")
    ));
    let rollouts = rollouts_of(&sb.home, &sid);
    assert_eq!(rollouts.len(), 1, "one rollout for {sid}: {rollouts:?}");
    let rollout = rollouts[0].clone();

    let (c, oc, why) = park_when_quiet(sb, &pane);
    assert_eq!(
        (c, oc.as_str()),
        (0, "parked"),
        "{why:?}\n{}",
        sb.capture(&pane)
    );
    w.log("parked");
    assert_parked(&w, &pane, &sid, &tree);
    std::thread::sleep(Duration::from_millis(500));
    for &d in &daemons {
        assert!(
            pid_alive(d),
            "the shared daemon {d} was killed by the park ({:?})",
            argvs(&[d])
        );
    }

    let (c, oc, why) = outcome(sb, &["unpark", &pane]);
    assert_eq!(
        (c, oc.as_str()),
        (0, "unparked"),
        "{why:?}\n{}",
        sb.capture(&pane)
    );
    w.log("unparked");
    let back = assert_back(&w, &pane, &sid, "title-id");
    let new_pid = back.pid.unwrap();
    let argv = argv_of(new_pid);
    assert!(
        argv.iter().any(|a| a == "resume") && argv.contains(&sid),
        "resume argv: {argv:?}"
    );
    assert_eq!(
        live_daemons(&sb.home),
        daemons,
        "the resumed TUI uses the same daemon"
    );

    sb.type_line(&pane, "second prompt after the daemon unpark");
    wait_rollout(&rollout, "second prompt after the daemon unpark", 2, REPLY);
    ok(sb.wait_for(&pane, &format!("(?s){REPLY_RE}.*{REPLY_RE}"), REPLY));
    assert_eq!(rollouts_of(&sb.home, &sid), vec![rollout.clone()]);
    let mut dead = tree;
    dead.extend(tree_of(new_pid));
    dead.extend(daemons);
    w.finish(&dead);
}

#[test]
fn codex_daemon_default_title_without_unique_name_is_untargetable_or_exact() {
    let w = World::new(&CodexSeed::default());
    let sb = &w.sb;
    const PROMPT: &str = "same prompt in both panes";
    // Pane A first, to the end of its turn; then pane B: A's thread is the older one.
    let a = w.codex_in_shell("a", "same", "", DAEMON_START);
    w.prompt(&a, PROMPT, 1);
    let b = w.codex_in_shell("b", "same", "", START);
    w.prompt(&b, PROMPT, 1);
    ok(sb.wait_for_title(&a, "^Mock same prompt", Duration::from_secs(30)));
    ok(sb.wait_for_title(&b, "^Mock same prompt", Duration::from_secs(30)));
    let (ta, tb) = (sb.pane_title(&a), sb.pane_title(&b));
    eprintln!("titles: {ta:?} / {tb:?}");
    assert_eq!(ta, tb, "the mock names both threads alike");

    // Ground truth: both threads, named alike in session_index.jsonl, ordered by id (UUIDv7,
    // time-ordered): A's thread was started first.
    let name = ta.rsplit_once(" | ").map(|(n, _)| n.to_string()).unwrap();
    let mut named: Vec<String> = poll(Duration::from_secs(30), || {
        let ids: Vec<String> = session_index(&sb.home)
            .into_iter()
            .filter(|(_, n)| *n == name)
            .map(|(id, _)| id)
            .collect();
        (ids.len() >= 2).then_some(ids)
    })
    .unwrap_or_else(|| panic!("two threads named {name:?}: {:?}", session_index(&sb.home)));
    named.sort();
    named.dedup();
    assert_eq!(named.len(), 2, "{named:?}");
    let truth = [(a.clone(), named[0].clone()), (b.clone(), named[1].clone())];
    for (_, id) in &truth {
        assert_eq!(rollouts_of(&sb.home, id).len(), 1, "a rollout for {id}");
    }

    let daemons = live_daemons(&sb.home);
    assert!(!daemons.is_empty(), "no app-server daemon is running");
    let rows: Vec<Row> = ls(sb)
        .rows
        .into_iter()
        .filter(|r| r.pane == a || r.pane == b)
        .collect();
    assert_eq!(rows.len(), 2, "{rows:?}");
    let mut ids = vec![];
    for r in &rows {
        eprintln!(
            "row {}: state {:?}, source {:?}, id {:?}, reason {:?}",
            r.pane, r.state, r.session_source, r.session_id, r.reason
        );
        match r.state {
            RowState::Untargetable => {
                assert!(
                    r.reason.as_deref().is_some_and(|x| !x.is_empty()),
                    "an untargetable row says why: {r:?}"
                );
                assert!(r.session_id.is_none(), "{r:?}");
            }
            RowState::Live => {
                let want = &truth.iter().find(|(p, _)| *p == r.pane).unwrap().1;
                assert_eq!(
                    r.session_id.as_ref(),
                    Some(want),
                    "an identified row must name its own pane's thread: {r:?}"
                );
                ids.push(want.clone());
            }
            RowState::Parked => panic!("nothing was parked: {r:?}"),
            RowState::Background => panic!("Codex has no background sessions: {r:?}"),
            RowState::Lost => panic!("no tmux server died here: {r:?}"),
        }
    }
    let n = ids.len();
    ids.dedup();
    assert_eq!(ids.len(), n, "two rows with one session id: {rows:?}");

    // Parking an untargetable row is refused and kills nothing.
    let untargetable: Vec<&Row> = rows
        .iter()
        .filter(|r| r.state == RowState::Untargetable)
        .collect();
    if untargetable.is_empty() {
        eprintln!("both rows were identified exactly; no untargetable row to park");
    }
    let mut all_tui = vec![];
    for r in &rows {
        all_tui.extend(tree_of(r.pid.unwrap()));
    }
    for r in untargetable {
        let before: Vec<u32> = all_tui.iter().copied().filter(|&p| pid_alive(p)).collect();
        let (c, oc, why) = outcome(sb, &["park", &r.pane]);
        assert_eq!((c, oc.as_str()), (1, "refused"), "{why:?}");
        assert!(why.is_some_and(|x| !x.is_empty()));
        std::thread::sleep(Duration::from_millis(500));
        for &p in before.iter().chain(&daemons) {
            assert!(pid_alive(p), "pid {p} died on a refused park");
        }
        assert!(entries(sb).is_empty());
        let again = row(sb, &r.pane).unwrap();
        assert_eq!(again.state, RowState::Untargetable);
        assert!(sb.pane_alive(&r.pane));
    }
    w.show(&a, "pane A");
    w.show(&b, "pane B");
    let mut dead = all_tui;
    dead.extend(daemons);
    w.finish(&dead);
}

/// Text the user controls (a directory name, a draft) that happens to hold a thread id is not
/// that pane's thread: with the default config, a pane must be untargetable or exact.
#[test]
fn codex_daemon_uuid_text_on_screen_is_not_the_panes_thread() {
    let w = World::new(&CodexSeed::default());
    let sb = &w.sb;
    // Thread B in `plain`; its id is the ground truth to avoid.
    let b = w.codex_in_shell("b", "plain", "", DAEMON_START);
    w.prompt(&b, "thread b first prompt", 1);
    let b_id = poll(Duration::from_secs(30), || {
        codex_rollouts(&sb.home).into_iter().find_map(|p| {
            let s = read_text(&p);
            s.contains("thread b first prompt").then(|| {
                p.file_stem()
                    .unwrap()
                    .to_string_lossy()
                    .rsplit('-')
                    .take(5)
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect::<Vec<_>>()
                    .join("-")
            })
        })
    })
    .expect("thread B's rollout");
    // Thread A runs in a directory named after B's id: the title's project slot shows B's id.
    let a = w.codex_in_shell("a", &b_id, "", START);
    w.prompt(&a, "thread a first prompt", 1);
    std::thread::sleep(Duration::from_secs(2));
    let ra = row(sb, &a).expect("row for A");
    eprintln!("A: {ra:?}");
    assert_ne!(
        ra.session_id.as_deref(),
        Some(b_id.as_str()),
        "a directory name is not a thread id"
    );
    let (c, oc, why) = park_when_quiet(sb, &a);
    if oc == "parked" {
        let es = entries(sb);
        let e: serde_json::Value = serde_json::from_str(&read_text(&es[0])).unwrap();
        assert_ne!(
            e["session_id"].as_str(),
            Some(b_id.as_str()),
            "parked A under B's id: {e}"
        );
        assert_eq!(outcome(sb, &["unpark", &a]).1, "unparked");
    } else {
        assert_eq!(c, 1, "{oc} {why:?}");
    }
    // A draft quoting B's id in another pane does not make that pane B.
    let d = w.codex_in_shell("d", "draft", "", START);
    w.prompt(&d, "thread d first prompt", 1);
    sb.type_text(&d, &format!("look at {b_id}"));
    std::thread::sleep(Duration::from_secs(1));
    let rd = row(sb, &d).expect("row for D");
    assert_ne!(
        rd.session_id.as_deref(),
        Some(b_id.as_str()),
        "a draft is not a thread id: {rd:?}"
    );
    let ids: Vec<String> = ls(sb)
        .rows
        .into_iter()
        .filter_map(|r| r.session_id)
        .collect();
    let mut dedup = ids.clone();
    dedup.sort();
    dedup.dedup();
    assert_eq!(
        ids.len(),
        dedup.len(),
        "two rows with one session id: {ids:?}"
    );
    w.finish(&[]);
}

/// Issue 19 (item 2): Codex keeps `thread-writer-locks/<id>.lock` flocked by the thread's one
/// live writer. A parked thread that another process now writes (here `codex exec resume`, which
/// park does not list as an agent) is running there: unpark must not start a second writer, and
/// says why. The lock file every park leaves behind, unheld, is no problem (doctor stays quiet).
#[test]
fn codex_held_writer_lock_means_running_elsewhere_and_an_unheld_one_is_harmless() {
    let w = World::new(&CodexSeed::default());
    let sb = &w.sb;
    let pane = w.codex_in_shell("lk", "lk", "--no-daemon", START);
    w.prompt(&pane, "hello before the lock test", 1);
    let live = wait_live_idle(sb, &pane, "rollout-fd", Duration::from_secs(30));
    let sid = live.session_id.clone().unwrap();
    let tree = tree_of(live.pid.unwrap());
    let (c, oc, why) = park_when_quiet(sb, &pane);
    assert_eq!((c, oc.as_str()), (0, "parked"), "{why:?}");
    let lock = sb
        .home
        .join(".codex/thread-writer-locks")
        .join(format!("{sid}.lock"));
    assert!(lock.is_file(), "the killed writer leaves its lock file");
    let doctor = park(sb, &["doctor"]);
    let text = String::from_utf8_lossy(&doctor.stdout).into_owned();
    assert!(
        doctor.status.success() && !text.contains("writer"),
        "an unheld lock file is not a problem:\n{text}"
    );

    // Another writer takes the thread: a slow `codex exec resume` in a second pane.
    let dir = sb.project_dir("lk");
    let other = sb.new_shell_window("w", "exec", &dir, &sb.codex_env());
    sb.type_line(
        &other,
        &format!("codex exec --skip-git-repo-check resume {sid} 'keep going [slow 20]'; echo EXEC-''DONE"),
    );
    // The lock file's inode is read on every poll: a writer may create the file anew.
    let held = poll(Duration::from_secs(60), || {
        let ino = std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(&lock).ok()?);
        let locks = std::fs::read_to_string("/proc/locks").ok()?;
        locks
            .lines()
            .any(|l| l.contains(&format!(":{ino} ")))
            .then_some(())
    });
    assert!(
        held.is_some(),
        "codex exec holds the writer lock:\n{}",
        sb.capture(&other)
    );

    let (c, oc, why) = outcome(sb, &["unpark", &pane]);
    w.log(&format!("unpark while exec writes: {oc} {why:?}"));
    assert_eq!((c, oc.as_str()), (0, "already-running"), "{why:?}");
    assert!(why.unwrap_or_default().contains("writer lock"));
    std::thread::sleep(Duration::from_secs(2));
    let shell: u32 = sb.display(&pane, "#{pane_pid}").unwrap().parse().unwrap();
    let resumed = argvs(&descendants(shell));
    assert!(
        resumed.is_empty(),
        "no second writer was started: {resumed:?}"
    );
    ok(sb.wait_for(&other, "EXEC-DONE", REPLY));
    w.show(&other, "codex exec");
    assert!(
        sb.capture(&other).contains("PARKTEST-OK"),
        "the other writer's turn finished"
    );
    w.finish(&tree);
}
