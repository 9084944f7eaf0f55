//! End-to-end tests of park with the REAL Gemini CLI (0.61.0, installed by `scripts/setup`) in a
//! private tmux server, offline against `mock-llm`'s Gemini `v1beta` API.
//!
//! What is tested, and why:
//! * without the integration a Gemini row is untargetable, and its reason names
//!   `park integrate gemini`; nothing is parked; `park integrate gemini` merges its hooks into the
//!   settings and `--remove` takes them out again, keeping the user's own settings;
//! * with it (`park integrate gemini` merges hooks into the sandbox's `~/.gemini/settings.json`,
//!   `--remove` takes them out again), a full round trip: the session is bound from the hook's
//!   record, park kills the two node processes (the parent ignores SIGTERM), the pane keeps
//!   `park unpark .`, the unpark resumes `gemini --resume <id>` with the whitelisted flags in the
//!   recorded cwd, and the conversation grows the same chat file;
//! * Gemini's resume bug (gemini-cli #27368/#29198): the resume writes an orphan stub, and the
//!   next Gemini start in the project deletes the real chat with it. After park's unpark the stub
//!   is gone and another `gemini` start leaves the conversation intact;
//! * a chat that lost its header to Gemini's own cleanup is never parked.
//!
//! The contract every agent keeps (the round trip in tmux and zellij, two sessions in one cwd, a
//! hostile flag value, the guards, `/clear` rolling back) runs for Gemini in `contract.rs`.
//!
//! Run: `bash scripts/setup && cargo build -p park && cargo test -p park-e2e --test e2e e2e_gemini:: -- --nocapture`

use crate::common::*;
use park_e2e::harness::real_agent::GeminiAgent;
use park_e2e::*;
use park_protocol::{Row, RowState, Status};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Two node processes start (the parent relaunches itself with a bigger heap).
const START: Duration = Duration::from_secs(90);
const REPLY: Duration = Duration::from_secs(60);

/// A sandbox with a seeded Gemini home, driven through the contract's [`GeminiAgent`].
struct World {
    sb: Sandbox,
    mock: MockServer,
    agent: GeminiAgent,
    t0: Instant,
}

impl World {
    /// With park's integration installed when `integrate`.
    fn new(integrate: bool) -> World {
        Agents::locate();
        let agent = GeminiAgent(Gemini::locate());
        let sb = Sandbox::new();
        let mock = mock_server!(&sb.logs);
        agent.seed(&sb, &mock);
        install_shims(&sb, None);
        if integrate {
            let o = park(&sb, &["integrate", "gemini"]);
            assert_eq!(code(&o), 0, "{}", text(&o));
        }
        World {
            sb,
            mock,
            agent,
            t0: Instant::now(),
        }
    }

    fn log(&self, what: &str) {
        eprintln!("[{:>6.1}s] {what}", self.t0.elapsed().as_secs_f64());
    }

    fn gemini_in_shell(&self, window: &str, proj: &str, args: &str) -> String {
        let s = self.agent.spec();
        let dir = self.sb.project_dir(proj);
        let pane =
            self.sb
                .new_shell_window("w", window, &dir, &self.agent.env(&self.sb, &self.mock));
        let cmd = format!("gemini {args}").trim().to_string();
        self.sb.type_line(&pane, &cmd);
        ok(self.sb.wait_for(&pane, s.ready, s.start));
        self.log(&format!("{pane}: `{cmd}` is ready"));
        pane
    }

    fn prompt(&self, pane: &str, prompt: &str, nth: usize) {
        self.agent.prompt(&self.sb, pane, prompt, nth);
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
    park_when_settled(sb, pane, SECS(60), &["CPU", "turn in flight"])
}

fn wait_live(sb: &Sandbox, pane: &str, status: Status) -> Row {
    let r = wait_row(sb, pane, Duration::from_secs(60), |r| {
        r.state == RowState::Live && r.status == status && r.session_id.is_some()
    });
    assert_pinned_version(&r);
    r
}

/// The chat files of `sid` (real and stubs).
fn chats_of(sb: &Sandbox, sid: &str) -> Vec<PathBuf> {
    gemini_chats(&sb.home)
        .into_iter()
        .filter(|(_, s)| s == sid)
        .map(|(p, _)| p)
        .collect()
}

#[test]
fn without_the_integration_gemini_is_untargetable_and_the_reason_names_it() {
    let w = World::new(false);
    let sb = &w.sb;
    let pane = w.gemini_in_shell("n", "n", "");
    w.prompt(&pane, "hello without the hook", 1);
    let r = wait_row(sb, &pane, Duration::from_secs(30), |r| {
        r.state == RowState::Untargetable
    });
    let why = r.reason.clone().unwrap_or_default();
    assert!(why.contains("park integrate gemini"), "{r:?}");
    let tree = tree_of(r.pid.expect("row pid"));
    let (c, oc, why) = outcome(sb, &["park", &pane]);
    assert_eq!((c, oc.as_str()), (1, "refused"), "{why:?}");
    assert!(tree.iter().all(|&p| pid_alive(p)), "nothing killed");
    assert!(entries(sb).is_empty());
    // `park integrate` lists it as not installed, with the command that installs it.
    let o = park(sb, &["integrate"]);
    assert!(
        text(&o).contains("gemini") && text(&o).contains("not installed"),
        "{}",
        text(&o)
    );
    // Installed, the hooks sit beside the user's settings; `--remove` takes only them out.
    let settings = || std::fs::read_to_string(sb.home.join(".gemini/settings.json")).unwrap();
    let o = park(sb, &["integrate", "gemini"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let s = settings();
    assert!(
        s.contains("hook gemini") && s.contains("gemini-api-key"),
        "{s}"
    );
    let o = park(sb, &["integrate", "--remove", "gemini"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let s = settings();
    assert!(
        !s.contains("hook gemini") && s.contains("gemini-api-key"),
        "{s}"
    );
    w.finish(&[]);
}

#[test]
fn gemini_park_unpark_round_trip_survives_the_resume_bug() {
    let w = World::new(true);
    let sb = &w.sb;
    let pane = w.gemini_in_shell("rt", "rt", "--approval-mode auto_edit");
    w.prompt(&pane, "hello from the gemini round trip", 1);
    let live = wait_live(sb, &pane, Status::Idle);
    assert_eq!(live.session_source.as_deref(), Some("hook"), "{live:?}");
    let sid = live.session_id.clone().unwrap();
    let pid = live.pid.expect("row pid");
    let tree = tree_of(pid);
    assert!(tree.len() >= 2, "parent and relaunched child: {tree:?}");
    let real = gemini_chat_with(&sb.home, &sid, "hello from the gemini round trip");
    assert_eq!(real.len(), 1, "{:?}", gemini_chats(&sb.home));
    let real = real[0].clone();
    let lines_before = read_text(&real).lines().count();

    // The resume bug needs the resume in another minute than the chat's name.
    let name_minute = real.file_name().unwrap().to_string_lossy().into_owned();
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
    assert!(md.contains("hello from the gemini round trip"), "{md}");
    w.show(&pane, "parked");
    poll(Duration::from_secs(65), || {
        let now = jiff::Timestamp::now()
            .strftime("%Y-%m-%dT%H-%M")
            .to_string();
        (!name_minute.contains(&now)).then_some(())
    });

    let (c, oc, why) = outcome(sb, &["unpark", &pane]);
    assert_eq!(
        (c, oc.as_str()),
        (0, "unparked"),
        "{why:?}\n{}",
        sb.capture(&pane)
    );
    ok(sb.wait_for(&pane, w.agent.spec().ready, START));
    let back = wait_live(sb, &pane, Status::Idle);
    assert_eq!(back.session_id.as_deref(), Some(sid.as_str()), "{back:?}");
    let new_pid = back.pid.unwrap();
    let argv = argv_of(new_pid);
    for pair in [["--resume", sid.as_str()], ["--approval-mode", "auto_edit"]] {
        assert!(
            argv.windows(2).any(|p| p[0] == pair[0] && p[1] == pair[1]),
            "{pair:?} in {argv:?}"
        );
    }
    poll(Duration::from_secs(20), || {
        entries(sb).is_empty().then_some(())
    })
    .unwrap_or_else(|| panic!("the verifier did not clear the entry: {:?}", entries(sb)));
    // The resume writes an orphan stub (~9 s after its start), and the verifier removes it; only
    // the real chat is left. (This poll can pass before the stub is written: the proof is the
    // other Gemini start below, which deletes the conversation when the stub stays.)
    poll(Duration::from_secs(60), || {
        (chats_of(sb, &sid) == vec![real.clone()]).then_some(())
    })
    .unwrap_or_else(|| panic!("orphan stub left: {:?}", chats_of(sb, &sid)));
    w.show(&pane, "unparked");

    w.prompt(&pane, "second prompt after the unpark", 2);
    poll(REPLY, || {
        read_text(&real)
            .contains("second prompt after the unpark")
            .then_some(())
    })
    .unwrap_or_else(|| panic!("the second turn never reached {}", real.display()));
    assert!(read_text(&real).lines().count() > lines_before);

    // Another Gemini start in the project runs its session cleanup: the conversation stays.
    let other = sb.new_shell_window(
        "w",
        "other",
        &sb.project_dir("rt"),
        &w.agent.env(sb, &w.mock),
    );
    sb.type_line(&other, "gemini --list-sessions; echo LISTED-$?");
    ok(sb.wait_for(&other, r"LISTED-\d", START));
    assert!(
        read_text(&real).contains("hello from the gemini round trip"),
        "Gemini's cleanup deleted the resumed chat: {:?}",
        gemini_chats(&sb.home)
    );
    let mut dead = tree;
    dead.extend(tree_of(new_pid));
    w.finish(&dead);
}

/// Gemini's own cleanup deletes a chat with no conversation yet when another Gemini starts in the
/// project, even the chat of a live session; its next write creates the file again without its
/// header, and `gemini --resume` cannot find it any more. park refuses to park it (it would not
/// come back) and says why.
#[test]
fn a_chat_that_lost_its_header_is_never_parked() {
    let w = World::new(true);
    let sb = &w.sb;
    let a = w.gemini_in_shell("a", "hl", "");
    let b = w.gemini_in_shell("b", "hl", "");
    w.prompt(&a, "first words after the other start", 1);
    w.prompt(&b, "b speaks too", 1);
    let r = wait_row(sb, &a, Duration::from_secs(60), |r| {
        r.reason
            .as_deref()
            .is_some_and(|x| x.contains("lost its first line"))
            || r.status == Status::Idle && r.state == RowState::Live
    });
    if r.state == RowState::Live {
        // Gemini did not delete it this time (the race went the other way): nothing to show.
        w.log("the other start left A's chat alone this time");
        w.finish(&[]);
        return;
    }
    let tree = tree_of(r.pid.unwrap());
    let (c, oc, why) = outcome(sb, &["park", &a]);
    assert_eq!((c, oc.as_str()), (1, "refused"), "{why:?}");
    assert!(why.unwrap_or_default().contains("lost its first line"));
    assert!(tree.iter().all(|&p| pid_alive(p)));
    assert!(entries(sb).is_empty());
    w.finish(&[]);
}
