//! End-to-end tests of park with the REAL Gemini CLI (0.61.0, installed by `scripts/setup`) in a
//! private tmux server, offline against `mock-llm`'s Gemini `v1beta` API.
//!
//! What is tested, and why:
//! * without the integration a Gemini row is untargetable, and its reason names
//!   `park integrate gemini`; nothing is parked;
//! * with it (`park integrate gemini` merges hooks into the sandbox's `~/.gemini/settings.json`,
//!   `--remove` takes them out again), a full round trip: the session is bound from the hook's
//!   record, park kills the two node processes (the parent ignores SIGTERM), the pane keeps
//!   `park unpark .`, the unpark resumes `gemini --resume <id>` with the whitelisted flags in the
//!   recorded cwd, and the conversation grows the same chat file;
//! * Gemini's resume bug (gemini-cli #27368/#29198): the resume writes an orphan stub, and the
//!   next Gemini start in the project deletes the real chat with it. After park's unpark the stub
//!   is gone and another `gemini` start leaves the conversation intact;
//! * the guards on real Gemini screens (draft, turn in flight, permission prompt), two sessions in
//!   one cwd with a hostile flag value, and `/clear` between the scan and the kill.
//!
//! Run: `bash scripts/setup && cargo build -p park && cargo test -p park-e2e --test e2e e2e_gemini:: -- --nocapture`

use crate::common::*;
use park_e2e::*;
use park_protocol::{Row, RowState, Status};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Two node processes start (the parent relaunches itself with a bigger heap).
const START: Duration = Duration::from_secs(90);
const REPLY: Duration = Duration::from_secs(60);
const CPU_SETTLE: Duration = Duration::from_secs(60);
/// How long the /clear test's park waits after its claim, before its kill.
const PAUSE_MS: u32 = 5000;
const REPLY_RE: &str = r"canned reply #\d+\)\. PARKTEST-OK";
/// The empty composer's placeholder: the TUI is up and accepts input.
const READY_RE: &str = r"(?m)^ >   Type your message or @path/to/file";

struct World {
    sb: Sandbox,
    mock: MockServer,
    gemini: Gemini,
    t0: Instant,
}

impl World {
    /// A sandbox with a seeded Gemini home; with the integration installed when `integrate`.
    fn new(integrate: bool) -> World {
        Agents::locate();
        let gemini = Gemini::locate();
        let sb = Sandbox::new();
        let mock = mock_server!(&sb.logs);
        seed_gemini_home(&sb.home, &sb.work).expect("seed gemini home");
        install_shims(&sb, None);
        let w = World {
            sb,
            mock,
            gemini,
            t0: Instant::now(),
        };
        if integrate {
            let o = park(&w.sb, &["integrate", "gemini"]);
            assert_eq!(code(&o), 0, "{}", text(&o));
        }
        w
    }

    fn log(&self, what: &str) {
        eprintln!("[{:>6.1}s] {what}", self.t0.elapsed().as_secs_f64());
    }

    fn gemini_in_shell(&self, window: &str, proj: &str, args: &str) -> String {
        let dir = self.sb.project_dir(proj);
        let env = self.sb.gemini_env(&self.gemini, &self.mock);
        let pane = self.sb.new_shell_window("w", window, &dir, &env);
        let cmd = format!("gemini {args}").trim().to_string();
        self.sb.type_line(&pane, &cmd);
        ok(self.sb.wait_for(&pane, READY_RE, START));
        self.log(&format!("{pane}: `{cmd}` is ready"));
        pane
    }

    /// Submits `prompt`, pressing Enter again while the composer still holds it.
    fn send(&self, pane: &str, prompt: &str) {
        submit_prompt(&self.sb, pane, prompt, ">");
        let still = regex::Regex::new(&format!("(?m)^ > {}\\s*$", regex::escape(prompt))).unwrap();
        for _ in 0..3 {
            std::thread::sleep(Duration::from_secs(2));
            let screen = self.sb.capture(pane);
            // Still in the composer: below the last full-width rule (above it, the line is the
            // scrollback's copy of a prompt that was sent; a dialog hides the composer).
            let lines: Vec<&str> = screen.lines().collect();
            let rule = lines.iter().rposition(|l| l.starts_with("──────────"));
            let unsent = rule.is_some_and(|r| lines[r..].iter().any(|l| still.is_match(l)));
            if !unsent {
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
    w.finish(&[]);
}

#[test]
fn gemini_park_unpark_round_trip_survives_the_resume_bug() {
    let w = World::new(true);
    let sb = &w.sb;
    let settings = std::fs::read_to_string(sb.home.join(".gemini/settings.json")).unwrap();
    assert!(
        settings.contains("hook gemini") && settings.contains("gemini-api-key"),
        "{settings}"
    );
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
    ok(sb.wait_for(&pane, READY_RE, START));
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
        &sb.gemini_env(&w.gemini, &w.mock),
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

#[test]
fn gemini_guards_refuse_draft_busy_and_permission() {
    let w = World::new(true);
    let sb = &w.sb;
    let pane = w.gemini_in_shell("g", "g", "");
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
    ok(sb.wait_for(&pane, "(?m)^ > an unsent thought", Duration::from_secs(10)));
    refused("draft", Status::Draft);
    sb.send_keys(&pane, &["C-u"]);
    ok(sb.wait_for(&pane, READY_RE, Duration::from_secs(10)));

    w.send(&pane, "think slowly [slow 20]");
    ok(sb.wait_for(&pane, "esc to cancel", Duration::from_secs(30)));
    refused("turn in flight", Status::Busy);
    ok(sb.wait_for(&pane, &format!("(?s){REPLY_RE}.*{REPLY_RE}"), REPLY));

    w.send(&pane, "touch it [tool touch made-by-gemini]");
    ok(sb.wait_for(&pane, "Allow execution", REPLY));
    refused("permission prompt", Status::Waiting);
    assert!(!sb.project_dir("g").join("made-by-gemini").exists());
    w.finish(&[]);
}

/// Two Gemini sessions in one cwd bind to their own ids (each its own process's hook record,
/// never the newest chat), park and come back each to its own pane; a hostile flag value is one
/// argv element and never runs.
#[test]
fn two_gemini_sessions_in_one_cwd_keep_their_own_ids_and_a_hostile_value_never_runs() {
    let w = World::new(true);
    let sb = &w.sb;
    let dir = sb.project_dir("two");
    let hostile = "x$(touch PWNED)";
    // A speaks before B starts: a Gemini start deletes the project's chats with no conversation
    // yet, a live one's too (its header is then lost and park refuses it; see
    // `a_chat_that_lost_its_header_is_never_parked`).
    let a = w.gemini_in_shell("a", "two", "");
    w.prompt(&a, "first session speaks", 1);
    let b = w.gemini_in_shell("b", "two", &format!("--policy {}", sh_quote(hostile)));
    w.prompt(&b, "second session speaks", 1);
    let ra = wait_live(sb, &a, Status::Idle);
    let rb = wait_live(sb, &b, Status::Idle);
    let (sa, sbid) = (
        ra.session_id.clone().unwrap(),
        rb.session_id.clone().unwrap(),
    );
    assert_ne!(sa, sbid);
    for (sid, said) in [
        (&sa, "first session speaks"),
        (&sbid, "second session speaks"),
    ] {
        let chats = gemini_chats(&sb.home);
        let with: Vec<_> = chats
            .iter()
            .filter(|(p, _)| read_text(p).contains(said))
            .collect();
        assert_eq!(
            gemini_chat_with(&sb.home, sid, said).len(),
            1,
            "{sid} said {said:?}; chats holding it: {with:?}; all: {chats:?}; heads: {:?}",
            with.iter()
                .map(|(p, _)| read_text(p).chars().take(400).collect::<String>())
                .collect::<Vec<_>>()
        );
    }
    for pane in [&a, &b] {
        let (c, oc, why) = park_when_quiet(sb, pane);
        assert_eq!((c, oc.as_str()), (0, "parked"), "{pane}: {why:?}");
    }
    for (pane, sid) in [(&a, &sa), (&b, &sbid)] {
        let (c, oc, why) = outcome(sb, &["unpark", pane]);
        assert_eq!((c, oc.as_str()), (0, "unparked"), "{pane}: {why:?}");
        ok(sb.wait_for(pane, READY_RE, START));
        let back = wait_live(sb, pane, Status::Idle);
        assert_eq!(back.session_id.as_deref(), Some(sid.as_str()), "{pane}");
    }
    let argv = argv_of(row(sb, &b).unwrap().pid.unwrap());
    assert!(
        argv.windows(2)
            .any(|p| p[0] == "--policy" && p[1] == hostile),
        "one argv element, verbatim: {argv:?}"
    );
    let pwned: Vec<_> = [dir.clone(), sb.home.clone(), sb.work.clone()]
        .iter()
        .map(|d| d.join("PWNED"))
        .filter(|p| p.exists())
        .collect();
    assert!(pwned.is_empty(), "a flag value ran as a command: {pwned:?}");
    w.finish(&[]);
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

/// `/clear` between the scan and the kill starts another session: the hook records it, the
/// re-check before the kill sees the change, rolls the claim back and kills nothing.
#[test]
fn a_gemini_clear_before_the_kill_rolls_back() {
    let w = World::new(true);
    let sb = &w.sb;
    let pane = w.gemini_in_shell("c", "c", "");
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
    submit_prompt(sb, &pane, "/clear", ">");
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("changed since the scan"), "{text}");
    let dead: Vec<_> = named.iter().filter(|(p, _)| !pid_alive(*p)).collect();
    assert!(dead.is_empty(), "nothing was killed: {dead:?} of {named:?}");
    assert!(entries(sb).is_empty(), "the claim was rolled back");
    let now = wait_live(sb, &pane, Status::Idle);
    assert_ne!(now.session_id.as_deref(), Some(sid.as_str()), "{now:?}");
    // `--remove` takes park's hooks out of the settings again.
    let o = park(sb, &["integrate", "--remove", "gemini"]);
    assert_eq!(code(&o), 0, "{}", text_of(&o));
    let settings = std::fs::read_to_string(sb.home.join(".gemini/settings.json")).unwrap();
    assert!(
        !settings.contains("hook gemini") && settings.contains("gemini-api-key"),
        "{settings}"
    );
    w.finish(&[]);
}

fn text_of(o: &std::process::Output) -> String {
    text(o)
}
