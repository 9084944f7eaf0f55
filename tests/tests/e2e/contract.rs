//! The contract every real agent keeps with park (issue 30 §2), run for every agent park supports:
//! Claude Code, Codex (its plain `--no-daemon` TUI), Qwen Code, Copilot CLI, Gemini CLI, OpenCode,
//! Kilo, aider, pi, Kimi Code, Factory Droid and the rest of the `contract!` list at the end, each
//! the REAL CLI at its pinned version against `mock-llm`, driven through
//! [`RealAgent`] (`tests/src/harness/real_agent.rs`).
//!
//! The cases, one `#[test]` per agent and case (`contract::<agent>::<case>`):
//! * `two_sessions`: two sessions in one cwd keep their own ids (each its own process's records,
//!   never the newest session of the directory), park and come back each to its own pane; a
//!   hostile flag value is one argv element and never runs;
//! * `round_trip`: park kills the whole tree, frees its memory, keeps the pane usable (off the
//!   alternate screen, cursor shown, `park unpark .` typed), records one entry with the agent's
//!   version and archives the conversation; unpark resumes the same session in the same pane with
//!   the whitelisted flags replayed and the pill cleared, and the session's own records grow with
//!   the next turn, written by the resumed process alone;
//! * `guards`: a draft (quoted back), a turn in flight (busy) and a permission prompt are
//!   refused; nothing is killed or recorded;
//! * `guards`: a draft (quoted back), a turn in flight (busy) and a permission prompt (where the
//!   agent has one: pi has none) are refused; nothing is killed or recorded;
//! * `rollback`: `/clear` (Codex, OpenCode, Kilo, pi, Kimi Code, Droid: `/new`) between the scan and the kill: the re-check
//!   sees the session change, rolls the claim back, and kills nothing. aider has no session switch
//!   (`/clear` keeps its history file, which is its identity): a second aider starting on the
//!   same history file is its change, and the re-check finds the first one untargetable;
//! * `zellij_round_trip`: the round trip in a real zellij 0.45 session (`terminal_N@session`,
//!   the ❄ title, the prefill, the same session back in the same pane).
//!
//! Each case has its own [`World`] (sandbox, mock, seeded HOME, tmux server): see there why the
//! cases of one agent cannot share one. What an agent's own module (`e2e_claude*`, `e2e_codex`,
//! `e2e_gemini`, `e2e_opencode`, `e2e_zellij*`) keeps is only what is that agent's: Claude's
//! placeholder pane, named sessions, damaged transcripts and background sessions, Codex's daemon
//! mode and writer lock, Gemini's chat-file loss, ...
//!
//! Run: `bash scripts/setup && cargo test -p park-e2e --test e2e contract:: -- --test-threads=3`

use crate::common::*;
use crate::e2e_zellij::{zaction, zrow, zwait_row};
use park_e2e::harness::real_agent::{same_dir, skipped, REPLY_RE};
use park_e2e::*;
use park_protocol::{Row, RowState, Status};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A case's world: sandbox, mock, seeded HOME (with park's integration where the agent needs
/// one), `park` on the panes' PATH.
///
/// One per case, never shared between cases running at the same time: park rightly refuses to
/// unpark a session while another process of the same agent in the same config dir cannot be
/// identified (one starting, one another case drives), and agents of other cases in the same
/// HOME are exactly that; their CPU also slows a re-check past its pause (measured: sharing one
/// HOME per agent failed 7 of 25 cases this way).
struct World {
    sb: Sandbox,
    mock: MockServer,
    agent: Box<dyn RealAgent>,
    t0: Instant,
}

/// The world of agent `name` for one case. `None` (after saying why) where `scripts/setup` could
/// not install the agent here.
fn world(name: &'static str) -> Option<World> {
    if let Some(why) = skipped(name) {
        eprintln!("SKIPPED: {why}");
        return None;
    }
    Agents::locate();
    let agent = real_agent(name);
    let sb = Sandbox::new();
    let mock = mock_server!(&sb.logs);
    agent.seed(&sb, &mock);
    install_shims(&sb, None);
    if agent.spec().integrate {
        let o = park(&sb, &["integrate", name]);
        assert_eq!(code(&o), 0, "{}", text(&o));
    }
    Some(World {
        sb,
        mock,
        agent,
        t0: Instant::now(),
    })
}

impl World {
    fn spec(&self) -> &Spec {
        self.agent.spec()
    }

    fn log(&self, what: &str) {
        eprintln!(
            "[{:>6.1}s] {}: {what}",
            self.t0.elapsed().as_secs_f64(),
            self.spec().name
        );
    }

    /// A case's project dir (its own: the ledger assertions look at its entries only).
    fn dir(&self, case: &str) -> PathBuf {
        self.sb.project_dir(&format!("{}-{case}", self.spec().name))
    }

    /// A shell window in `dir` with the agent's environment, `<program> <args>` typed at its
    /// prompt; waits for the empty composer.
    fn start(&self, window: &str, dir: &Path, args: &str) -> String {
        let env = self.agent.env(&self.sb, &self.mock);
        let pane = self.sb.new_shell_window("w", window, dir, &env);
        let cmd = format!("{} {args}", self.spec().program).trim().to_string();
        self.sb.type_line(&pane, &cmd);
        ok(self
            .sb
            .wait_for(&pane, self.spec().ready, self.spec().start));
        self.log(&format!("{pane}: `{cmd}` is ready"));
        pane
    }

    fn prompt(&self, pane: &str, prompt: &str, nth: usize) {
        self.agent.prompt(&self.sb, pane, prompt, nth);
        self.log(&format!("{pane}: reply to {prompt:?}"));
    }

    /// `park park <pane>`, retried while the refusal is one the agent gives for a moment after a
    /// reply (CPU still burning, the turn's closing records not written yet).
    fn park_when_quiet(&self, pane: &str) -> (i32, String, Option<String>) {
        park_when_settled(&self.sb, pane, SECS(60), self.spec().settling)
    }

    /// The pane's row, live with `status`, a session id, and `source` when given.
    fn wait_live(&self, pane: &str, status: Status, source: Option<&str>) -> Row {
        let r = wait_row(&self.sb, pane, SECS(60), |r| {
            r.state == RowState::Live
                && r.status == status
                && r.session_id.is_some()
                && (source.is_none() || r.session_source.as_deref() == source)
        });
        assert_pinned_version(&r);
        r
    }

    /// Every ledger entry of the world (a case has it to itself), each of which must record
    /// `dir`, the case's project, as its cwd.
    fn entries_in(&self, dir: &Path) -> Vec<PathBuf> {
        let all = entries(&self.sb);
        for p in &all {
            let v: serde_json::Value = serde_json::from_str(&read_text(p)).unwrap_or_default();
            let cwd = v["cwd"].as_str().unwrap_or_default();
            assert!(same_dir(cwd, dir), "{} records cwd {cwd:?}", p.display());
        }
        all
    }

    /// Tears the world down and asserts nothing survived, `also_dead` included.
    fn finish(self, also_dead: &[u32]) {
        teardown(self.sb, self.mock, also_dead);
    }
}

fn has_pair(argv: &[String], a: &str, b: &str) -> bool {
    argv.windows(2).any(|p| p[0] == a && p[1] == b)
}

/// The resumed process `argv` names session `sid` and carries every whitelisted flag of `s`.
fn assert_resume_argv(agent: &dyn RealAgent, argv: &[String], sid: &str) {
    let s = agent.spec();
    assert!(agent.resumes(argv, sid), "resume argv: {argv:?}");
    for (f, v) in s.flag_pairs {
        assert!(has_pair(argv, f, v), "{f} {v} replayed: {argv:?}");
    }
    for f in s.flag_words {
        assert!(argv.iter().any(|a| a == f), "{f} replayed: {argv:?}");
    }
}

/// No `PWNED` file anywhere a hostile flag value could have created one.
fn assert_not_pwned(sb: &Sandbox, dir: &Path) {
    let pwned: Vec<_> = [dir.to_path_buf(), sb.home.clone(), sb.work.clone()]
        .iter()
        .map(|d| d.join("PWNED"))
        .filter(|p| p.exists())
        .collect();
    assert!(pwned.is_empty(), "a flag value ran as a command: {pwned:?}");
}

fn two_sessions(name: &'static str) {
    let Some(w) = world(name) else { return };
    let (sb, a_) = (&w.sb, &w.agent);
    let s = w.spec().clone();
    let dir = w.dir("two");
    let hostile = "x$(touch PWNED)";
    // A speaks before B starts: a Gemini start deletes the project's chats with no conversation
    // yet, a live one's too (see e2e_gemini's `a_chat_that_lost_its_header_is_never_parked`).
    let a = w.start(&format!("{name}-a"), &dir, "");
    let n = a_.first_turns(sb, &a, "first session speaks");
    let b = w.start(
        &format!("{name}-b"),
        &dir,
        &format!("{} {}", s.hostile_flag, sh_quote(hostile)),
    );
    a_.first_turns(sb, &b, "second session speaks");
    let ra = w.wait_live(&a, Status::Idle, s.live_source);
    let rb = w.wait_live(&b, Status::Idle, s.live_source);
    let (sa, sbid) = (
        ra.session_id.clone().unwrap(),
        rb.session_id.clone().unwrap(),
    );
    assert_ne!(sa, sbid, "two sessions, two ids");
    for (r, said) in [
        (&ra, "first session speaks"),
        (&rb, "second session speaks"),
    ] {
        let sid = r.session_id.as_deref().unwrap();
        a_.assert_records(sb, &dir, r.pid.unwrap(), sid, said);
    }
    let dead: Vec<u32> = [&ra, &rb]
        .iter()
        .flat_map(|r| a_.parked_tree(r.pid.unwrap()))
        .collect();
    for pane in [&a, &b] {
        let (c, oc, why) = w.park_when_quiet(pane);
        assert_eq!(
            (c, oc.as_str()),
            (0, "parked"),
            "{pane}: {why:?}\n{}",
            sb.capture(pane)
        );
    }
    assert_eq!(w.entries_in(&dir).len(), 2, "one entry per session");
    for (pane, sid) in [(&a, &sa), (&b, &sbid)] {
        let (c, oc, why) = outcome(sb, &["unpark", pane]);
        assert_eq!((c, oc.as_str()), (0, "unparked"), "{pane}: {why:?}");
        ok(sb.wait_for(pane, s.ready, s.start));
        let back = w.wait_live(pane, Status::Idle, s.resumed_source);
        assert_eq!(back.session_id.as_deref(), Some(sid.as_str()), "{pane}");
    }
    // An agent that hides its argv and records none of it (Kimi Code) replays no flag: nothing to
    // find there (the value still never ran: `assert_not_pwned`).
    let argv = a_.launch_argv(sb, row(sb, &b).unwrap().pid.unwrap());
    assert!(
        s.argv_hidden || has_pair(&argv, s.hostile_flag, hostile),
        "the value is one argv element, verbatim: {argv:?}"
    );
    // B's next turn goes to B's records, not A's (where the records read as text).
    w.prompt(&b, "second session again", n + 1);
    // OpenCode's records are a database of messages, not read as text: its two-session case
    // stops at the ids and the argv.
    let b_has = |sid: &str, said: &str| a_.record_has(sb, &dir, sid, said, "second session again");
    if b_has(&sbid, "second session speaks").is_some() {
        poll(s.reply, || {
            b_has(&sbid, "second session speaks").filter(|h| *h)
        })
        .expect("B's turn never reached B's records");
        assert_eq!(
            b_has(&sa, "first session speaks"),
            Some(false),
            "B's turn in A's records"
        );
    }
    assert_not_pwned(sb, &dir);
    w.finish(&dead);
}

fn round_trip(name: &'static str) {
    let Some(w) = world(name) else { return };
    let (sb, a_) = (&w.sb, &w.agent);
    let s = w.spec().clone();
    let dir = w.dir("rt");
    let said = "hello from the round trip";
    let pane = w.start(&format!("{name}-rt"), &dir, s.flags);
    let n = a_.first_turns(sb, &pane, said);
    let live = w.wait_live(&pane, Status::Idle, s.live_source);
    let sid = live.session_id.clone().unwrap();
    let pid = live.pid.expect("row pid");
    let tree0 = a_.parked_tree(pid);
    assert!(tree0.len() >= s.min_tree, "{name}'s processes: {tree0:?}");
    assert!(live.bytes > 0 && live.uss_bytes > 0, "{live:?}");
    a_.assert_records(sb, &dir, pid, &sid, said);
    let before = a_.record_len(sb, &dir, &sid, said);
    assert!(before > 0, "{sid}: no records");
    w.log(&format!("live: {sid} pid {pid} tree {tree0:?}"));

    // Park: the tree is gone, the pane stays with the way back typed, one entry, the archive.
    let (c, oc, why) = w.park_when_quiet(&pane);
    assert_eq!(
        (c, oc.as_str()),
        (0, "parked"),
        "{why:?}\n{}",
        sb.capture(&pane)
    );
    for &p in &tree0 {
        assert!(
            wait_gone(p, SECS(10)),
            "pid {p} survived the park: {:?}",
            argv_of(p)
        );
    }
    assert!(sb.pane_alive(&pane), "the pane must stay");
    assert_eq!(w.entries_in(&dir).len(), 1, "one ledger entry");
    let parked = row(sb, &pane).expect("a row for the parked pane");
    assert_eq!(parked.state, RowState::Parked, "{parked:?}");
    assert_eq!(parked.session_id.as_deref(), Some(sid.as_str()));
    assert_eq!(
        parked.agent_version, live.agent_version,
        "the version is recorded at park time"
    );
    assert!(
        parked
            .freed_bytes
            .is_some_and(|b| b > 0 && b >= s.freed_mb * 1024 * 1024),
        "freed at least {} MiB: {:?}",
        s.freed_mb,
        parked.freed_bytes
    );
    // The pane is usable: off the alternate screen, cursor shown, the way back typed.
    ok(sb.wait_for(&pane, r"park-test\$ park unpark \.\s*$", SECS(10)));
    assert_eq!(sb.display(&pane, "#{alternate_on}").as_deref(), Some("0"));
    assert_eq!(
        sb.display(&pane, "#{cursor_flag}").as_deref(),
        Some("1"),
        "cursor visible again"
    );
    let md = read_text(
        &sb.park_home
            .join("archive")
            .join(&sid)
            .join("transcript.md"),
    );
    assert!(md.contains(said), "{md}");
    show_pane(sb, &pane, "parked");

    // Unpark: a new process runs the same session, with the whitelisted flags.
    let (c, oc, why) = outcome(sb, &["unpark", &pane]);
    assert_eq!(
        (c, oc.as_str()),
        (0, "unparked"),
        "{why:?}\n{}",
        sb.capture(&pane)
    );
    ok(sb.wait_for(&pane, s.ready, s.start));
    let back = w.wait_live(&pane, Status::Idle, s.resumed_source);
    assert_eq!(back.session_id.as_deref(), Some(sid.as_str()), "{back:?}");
    let new_pid = back.pid.expect("row pid");
    assert!(!tree0.contains(&new_pid), "a new process runs the session");
    let argv = a_.launch_argv(sb, new_pid);
    w.log(&format!("resumed argv: {argv:?}"));
    assert_resume_argv(a_.as_ref(), &argv, &sid);
    assert!(!argv.iter().any(|a| a == "--fork"), "{argv:?}");
    poll(SECS(20), || w.entries_in(&dir).is_empty().then_some(()))
        .unwrap_or_else(|| panic!("the verifier did not clear the entry: {:?}", entries(sb)));
    let pill = sb.tmux(&["show", "-p", "-q", "-t", &pane, "-v", "@park_pill"]);
    assert_eq!(pill.unwrap().trim(), "", "the pill is cleared");
    show_pane(sb, &pane, "unparked");

    // The conversation goes on in the same records, and no other session appears.
    let next = "second prompt after the unpark";
    w.prompt(&pane, next, n + 1);
    poll(s.reply, || {
        (a_.record_len(sb, &dir, &sid, said) > before
            && a_.record_has(sb, &dir, &sid, said, next) != Some(false))
        .then_some(())
    })
    .unwrap_or_else(|| panic!("the turn after the unpark never reached {sid}'s records"));
    let again = w.wait_live(&pane, Status::Idle, s.turn_source);
    assert_eq!(again.session_id.as_deref(), Some(sid.as_str()));
    a_.assert_sole_writer(sb, &dir, new_pid, &sid);
    if let Some(k) = a_.sessions_in(sb, &dir) {
        assert_eq!(k, 1, "no second session in {}", dir.display());
    }
    w.finish(&tree0);
}

fn guards(name: &'static str) {
    let Some(w) = world(name) else { return };
    let (sb, a_) = (&w.sb, &w.agent);
    let s = w.spec().clone();
    let dir = w.dir("g");
    let pane = w.start(&format!("{name}-g"), &dir, "");
    let n = a_.first_turns(sb, &pane, "first turn so there is a session");
    let live = w.wait_live(&pane, Status::Idle, s.live_source);
    let keep = a_.core_tree(live.pid.expect("row pid"));
    assert!(keep.len() >= s.min_tree, "{name}'s processes: {keep:?}");
    // What each was, for a failure's message: a dead pid has no argv left to read.
    let was: Vec<(u32, Vec<String>)> = keep.iter().map(|&p| (p, argv_of(p))).collect();
    eprintln!("{name}'s processes: {was:?}");
    let refused = |what: &str, status: Status, because: &str| {
        let r = wait_row(sb, &pane, SECS(60), |r| {
            r.status == status
                && r.session_id.is_some()
                && (!s.guard_live || r.state == RowState::Live)
                && (s.guard_source.is_none() || r.session_source.as_deref() == s.guard_source)
        });
        let (c, oc, why) = outcome(sb, &["park", &pane]);
        assert_eq!(
            (c, oc.as_str()),
            (1, "refused"),
            "{what}: {why:?} {r:?}\n{}",
            sb.capture(&pane)
        );
        assert!(
            why.as_deref().is_some_and(|w| w.contains(because)),
            "{what}: refused for {because:?}: {why:?}"
        );
        let dead: Vec<_> = was.iter().filter(|(p, _)| !pid_alive(*p)).collect();
        assert!(dead.is_empty(), "{what}: killed {dead:?}");
        assert!(w.entries_in(&dir).is_empty(), "{what}: recorded");
        w.log(&format!("{what}: refused ({why:?})"));
    };

    sb.type_text(&pane, "an unsent thought");
    ok(sb.wait_for(&pane, &format!("{}an unsent thought", s.draft), SECS(10)));
    refused("draft", Status::Draft, "an unsent thought");
    sb.send_keys(&pane, &["C-u"]);
    ok(sb.wait_for(&pane, s.ready, SECS(10)));

    a_.send(sb, &pane, "think slowly [slow 20]");
    ok(sb.wait_for(&pane, s.busy, SECS(30)));
    refused("turn in flight", Status::Busy, "busy");
    let re = format!("(?s){}", vec![REPLY_RE; n + 1].join(".*"));
    ok(sb.wait_for(&pane, &re, s.reply));

    if s.permission.is_empty() {
        w.log("no permission prompts: nothing more to refuse");
        w.finish(&[]);
        return;
    }
    let made = format!("made-by-{name}");
    a_.send(sb, &pane, &format!("touch it [asktool touch {made}]"));
    ok(sb.wait_for(&pane, s.permission, s.reply));
    refused("permission prompt", Status::Waiting, "");
    show_pane(sb, &pane, "permission");
    assert!(!dir.join(&made).exists(), "the tool ran unconfirmed");
    w.finish(&[]);
}

fn rollback(name: &'static str) {
    let Some(w) = world(name) else { return };
    let (sb, a_) = (&w.sb, &w.agent);
    let s = w.spec().clone();
    let dir = w.dir("c");
    let pane = w.start(&format!("{name}-c"), &dir, "");
    a_.first_turns(sb, &pane, "a turn before the new session");
    let live = w.wait_live(&pane, Status::Idle, s.live_source);
    let sid = live.session_id.clone().unwrap();
    let pid = live.pid.unwrap();
    let before = a_.core_tree(pid);
    // A park refused before its claim (the CPU of an agent that just replied, under load) is
    // started again: the case needs one that has claimed the session and waits before the kill.
    let child = park_paused_after_claim(sb, &pane, s.pause_ms, |m| w.log(m));
    // The processes that lived through both snapshots (a helper run for a moment after a reply
    // ends by itself and says nothing about the park).
    let keep: Vec<u32> = a_
        .core_tree(pid)
        .into_iter()
        .filter(|p| before.contains(p))
        .collect();
    let named: Vec<(u32, String)> = keep.iter().map(|&p| (p, argv_of(p).join(" "))).collect();
    a_.change_session(sb, &w.mock, &pane, &dir, pid);
    let out = child.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("changed since the scan"), "{said}");
    let dead: Vec<_> = named.iter().filter(|(p, _)| !pid_alive(*p)).collect();
    assert!(dead.is_empty(), "nothing was killed: {dead:?} of {named:?}");
    assert!(w.entries_in(&dir).is_empty(), "the claim was rolled back");
    // The agent's own records (or, where it keeps none per process, park's row from its hook)
    // name another session now. OpenCode and Kilo: neither tells before the new session's first
    // turn; the re-check read the pane's title.
    if let Some(moved) = a_.moved_on(sb, pid, &sid) {
        assert!(moved, "{name} still records {sid} for {pid}");
    }
    if s.rebinds_on_new {
        let now = w.wait_live(&pane, Status::Idle, None);
        assert_ne!(now.session_id.as_deref(), Some(sid.as_str()), "{now:?}");
    }
    w.finish(&[]);
}

/// The round trip in real zellij: a `terminal_N@session` pane, parked (tree gone, pane kept, ❄
/// title, `park unpark .` typed) and unparked from outside zellij into the same pane and session.
fn zellij_round_trip(name: &'static str) {
    let Some(w) = world(name) else { return };
    let (sb, a_) = (&w.sb, &w.agent);
    let s = w.spec().clone();
    let dir = w.dir("zj");
    let env = a_.env(sb, &w.mock);
    let zj = Zellij::start(sb, &format!("ct-{name}"), &env, "pane", "");
    let id = zj.terminals().into_iter().next().expect("a terminal pane");
    let h = zj.handle(&id);
    ok(zj.wait_for(&id, r"park-test\$", SECS(15)));
    zj.type_line(
        &id,
        &format!("cd {} && {} {}", dir.display(), s.program, s.flags),
    );
    ok(zj.wait_for(&id, s.ready, s.start));
    let said = "hello from zellij";
    let n = a_.first_turns(&zj, &id, said);
    let live_ok = |r: &Row, status: Status, source: Option<&str>| {
        r.state == RowState::Live
            && r.status == status
            && r.session_id.is_some()
            && (source.is_none() || r.session_source.as_deref() == source)
    };
    let live = zwait_row(sb, &zj, &h, |r| live_ok(r, Status::Idle, s.live_source));
    assert_pinned_version(&live);
    assert_eq!(
        (live.mux.as_str(), live.session.as_str()),
        ("zellij", zj.session.as_str())
    );
    let sid = live.session_id.clone().unwrap();
    let pid = live.pid.unwrap();
    assert_eq!(
        env_of(pid, "ZELLIJ_PANE_ID").as_deref(),
        Some(id.trim_start_matches("terminal_"))
    );
    let tree0 = a_.parked_tree(pid);
    a_.assert_records(sb, &dir, pid, &sid, said);
    let before = a_.record_len(sb, &dir, &sid, said);

    let deadline = Instant::now() + SECS(60);
    let r = loop {
        let (_, out) = zaction(sb, &zj, &["park", &h]);
        let r = out.results.into_iter().next().expect("one result");
        let settling = r.outcome.as_str() == "refused"
            && r.reason
                .as_deref()
                .is_some_and(|w| s.settling.iter().any(|p| w.contains(p)));
        if !settling || Instant::now() > deadline {
            break r;
        }
        std::thread::sleep(Duration::from_millis(700));
    };
    assert_eq!(
        r.outcome.as_str(),
        "parked",
        "{:?}\n{}",
        r.reason,
        zj.dump(&id)
    );
    for &p in &tree0 {
        assert!(wait_gone(p, SECS(10)), "pid {p} survived: {:?}", argv_of(p));
    }
    assert!(zj.terminals().contains(&id), "the pane stays");
    let title = poll(SECS(5), || zj.title(&id).filter(|t| t.starts_with('❄'))).unwrap_or_default();
    assert!(title.starts_with('❄'), "❄ title: {title:?}");
    ok(zj.wait_for(&id, r"park unpark \.\s*$", SECS(10)));
    assert_eq!(zrow(sb, &zj, &h).unwrap().state, RowState::Parked);
    assert_eq!(w.entries_in(&dir).len(), 1, "one ledger entry");

    let (c, out) = zaction(sb, &zj, &["unpark", &h]);
    assert_eq!(
        (c, out.results[0].outcome.as_str()),
        (0, "unparked"),
        "{:?}",
        out.results[0].reason
    );
    ok(zj.wait_for(&id, s.ready, s.start));
    let back = zwait_row(sb, &zj, &h, |r| live_ok(r, Status::Idle, s.resumed_source));
    assert_eq!(
        back.session_id.as_deref(),
        Some(sid.as_str()),
        "same session, same pane"
    );
    let new_pid = back.pid.unwrap();
    let argv = a_.launch_argv(sb, new_pid);
    assert_resume_argv(a_.as_ref(), &argv, &sid);
    assert_eq!(
        env_of(new_pid, "ZELLIJ_PANE_ID").as_deref(),
        Some(id.trim_start_matches("terminal_"))
    );
    poll(SECS(20), || w.entries_in(&dir).is_empty().then_some(()))
        .unwrap_or_else(|| panic!("the verifier did not clear the entry: {:?}", entries(sb)));
    let t = poll(SECS(5), || zj.title(&id).filter(|t| !t.starts_with('❄')));
    assert!(t.is_some(), "the ❄ title is cleared: {:?}", zj.title(&id));

    let next = "second prompt in zellij";
    a_.prompt(&zj, &id, next, n + 1);
    poll(s.reply, || {
        (a_.record_len(sb, &dir, &sid, said) > before
            && a_.record_has(sb, &dir, &sid, said, next) != Some(false))
        .then_some(())
    })
    .unwrap_or_else(|| panic!("the turn after the unpark never reached {sid}'s records"));
    w.finish(&tree0);
}

/// One module per agent, one test per case: a failure names the agent and the case.
macro_rules! contract {
    ($($agent:ident),* $(,)?) => {$(
        mod $agent {
            #[test]
            fn two_sessions() {
                super::two_sessions(stringify!($agent));
            }
            #[test]
            fn round_trip() {
                super::round_trip(stringify!($agent));
            }
            #[test]
            fn guards() {
                super::guards(stringify!($agent));
            }
            #[test]
            fn rollback() {
                super::rollback(stringify!($agent));
            }
            #[test]
            fn zellij_round_trip() {
                super::zellij_round_trip(stringify!($agent));
            }
        }
    )*};
}

contract!(aider, claude, cline, codex, copilot, droid, gemini, kilo, kimi, opencode, pi, qwen);
