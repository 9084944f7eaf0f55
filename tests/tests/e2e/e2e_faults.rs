//! Crash tests with the REAL Claude Code and Codex CLIs: park and unpark are aborted at every named
//! step (`park::support::fault::POINTS`) and SIGKILLed from outside at random moments, and after each abort
//! the promise must hold:
//!
//! * the session is live **or** recorded and resumable — never both missing;
//! * never two processes on one transcript (Claude: live status files naming the session; Codex:
//!   processes holding the rollout open — both read from the system, not from park);
//! * the pane is still there, and after `park doctor` (which must flag the interrupted state) and
//!   one retry of `park unpark`, exactly one agent runs the same session in the same pane, the
//!   ledger is empty and `park doctor` is clean.
//!
//! Park faults use `PARK_FAULT=<point>` on the park process. Unpark faults use the one-shot file
//! `$PARK_HOME/test-fault`, because the steps after the hand-off run in processes the test does
//! not start (the `park unpark <entry>` typed into the pane, its detached verifier).
//! The self-guard test runs `env -u TMUX_PANE park park --idle 0s --yes` from Claude's own Bash tool.
//!
//! Run: `bash scripts/setup && cargo build -p park && cargo test -p park-e2e --test e2e e2e_faults:: -- --nocapture`

use crate::common::*;
use park_e2e::*;
use park_protocol::{RowState, Status};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const PARK_POINTS: &[&str] = &[
    "after-claim",
    "after-archive",
    "before-kill",
    "before-sigterm",
    "after-sigterm",
    "mid-kill",
    "before-finalize",
    "after-finalize",
];
const UNPARK_POINTS: &[&str] = &[
    "before-resume-sent",
    "after-resume-sent",
    "before-exec",
    "after-verify",
    "before-teardown",
];

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Claude,
    Codex,
    /// Claude in a pane of a real zellij session (its client in a private tmux pane).
    ClaudeZellij,
}

struct World {
    sb: Sandbox,
    _mock: MockServer,
    kind: Kind,
    pane: String,
    sid: String,
    /// Codex: the rollout file of the thread.
    rollout: Option<PathBuf>,
    t0: Instant,
    /// (point or kill, what was seen right after the abort) for the summary.
    log: Vec<String>,
    /// zellij: the session and the pane's terminal id (`self.pane` is the park handle).
    zj: Option<(Zellij, String)>,
}

impl World {
    fn claude() -> World {
        let sb = Sandbox::new();
        let mock = mock_server!(&sb.logs);
        seed_claude_home(&sb.home, &sb.work, CLAUDE_API_KEY).unwrap();
        install_shims(&sb, None);
        let dir = sb.project_dir("api");
        let pane = sb.new_shell_window("w", "api", &dir, &sb.claude_env(&mock));
        sb.type_line(&pane, "claude --dangerously-skip-permissions");
        sb.wait_for(&pane, CLAUDE_READY, SECS(60)).unwrap();
        submit_prompt(&sb, &pane, "hello from the crash tests", "❯");
        sb.wait_for(&pane, "PARKTEST-OK", SECS(60)).unwrap();
        let r = wait_row(&sb, &pane, SECS(30), |r| {
            r.status == Status::Idle && r.state == RowState::Live && r.session_id.is_some()
        });
        World {
            sid: r.session_id.unwrap(),
            sb,
            _mock: mock,
            kind: Kind::Claude,
            pane,
            rollout: None,
            t0: Instant::now(),
            log: vec![],
            zj: None,
        }
    }

    /// Claude in a zellij pane: the same matrix, through zellij's CLI (`write-chars`,
    /// `dump-screen`, `rename-pane`) instead of tmux.
    fn claude_zellij() -> World {
        let sb = Sandbox::new();
        let mock = mock_server!(&sb.logs);
        seed_claude_home(&sb.home, &sb.work, CLAUDE_API_KEY).unwrap();
        install_shims(&sb, None);
        let zj = Zellij::start(&sb, "zf", &sb.claude_env(&mock), "pane", "");
        let id = zj.terminals().into_iter().next().expect("a terminal pane");
        let dir = sb.project_dir("api");
        zj.wait_for(&id, r"park-test\$", SECS(15)).unwrap();
        zj.type_line(
            &id,
            &format!(
                "cd {} && claude --dangerously-skip-permissions",
                dir.display()
            ),
        );
        zj.wait_for(&id, CLAUDE_READY, SECS(60)).unwrap();
        for _ in 0..3 {
            zj.type_text(&id, "hello from the zellij crash tests");
            if zj
                .wait_for(&id, "❯.hello from the zellij crash tests", SECS(5))
                .is_ok()
            {
                break;
            }
            zj.cli(&["action", "write", "--pane-id", &id, "21"])
                .unwrap();
        }
        zj.press_enter(&id);
        zj.wait_for(&id, "PARKTEST-OK", SECS(60)).unwrap();
        let pane = zj.handle(&id);
        let mut w = World {
            sid: String::new(),
            sb,
            _mock: mock,
            kind: Kind::ClaudeZellij,
            pane,
            rollout: None,
            t0: Instant::now(),
            log: vec![],
            zj: Some((zj, id)),
        };
        let r = w.wait_live_idle(SECS(30));
        w.sid = r.session_id.unwrap();
        w
    }

    /// The environment park needs for this world's multiplexer (zellij: its socket and binary).
    fn mux_env(&self) -> Vec<(String, String)> {
        self.zj
            .as_ref()
            .map(|(z, _)| z.park_env())
            .unwrap_or_default()
    }

    fn park_out(&self, args: &[&str], extra: &[(&str, &str)]) -> std::process::Output {
        let env = self.mux_env();
        let mut all: Vec<(&str, &str)> =
            env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        all.extend_from_slice(extra);
        park_env(&self.sb, args, &all)
    }

    /// The first result of `park <args> --json`: (exit code, outcome, reason).
    fn outcome(&self, args: &[&str]) -> (i32, String, Option<String>) {
        let mut a = args.to_vec();
        a.push("--json");
        let o = self.park_out(&a, &[]);
        let out: park_protocol::ActionOutput = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|e| panic!("{a:?} --json did not parse ({e}): {}", text(&o)));
        let r = out.results.into_iter().next().expect("one result");
        (code(&o), r.outcome.to_string(), r.reason)
    }

    fn row(&self) -> Option<park_protocol::Row> {
        let o = self.park_out(&["ls", "--json"], &[]);
        let ls: park_protocol::LsOutput = serde_json::from_slice(&o.stdout).ok()?;
        ls.rows.into_iter().find(|r| r.pane == self.pane)
    }

    fn wait_live_idle(&self, timeout: Duration) -> park_protocol::Row {
        let mut last = None;
        poll(timeout, || {
            let r = self.row();
            last = r.clone();
            r.filter(|r| {
                r.state == RowState::Live && r.status == Status::Idle && r.session_id.is_some()
            })
        })
        .unwrap_or_else(|| {
            panic!(
                "{} never live and idle; last {last:?}\n{}",
                self.pane,
                self.capture()
            )
        })
    }

    fn pane_alive(&self) -> bool {
        match &self.zj {
            Some((z, id)) => z.terminals().contains(id),
            None => self.sb.pane_alive(&self.pane),
        }
    }

    fn capture(&self) -> String {
        match &self.zj {
            Some((z, id)) => z.dump(id),
            None => self.sb.capture(&self.pane),
        }
    }

    fn codex() -> World {
        Agents::locate();
        let sb = Sandbox::new();
        let mock = mock_server!(&sb.logs);
        seed_codex_home(&sb.home, &sb.work, &mock, &CodexSeed::default()).unwrap();
        install_shims(&sb, None);
        let dir = sb.project_dir("cx");
        let pane = sb.new_shell_window("w", "cx", &dir, &sb.codex_env());
        sb.type_line(&pane, "codex --no-daemon");
        sb.wait_for(&pane, "Ask Codex to do anything", SECS(120))
            .unwrap();
        submit_prompt(&sb, &pane, "hello from the codex crash tests", "›");
        sb.wait_for(&pane, "PARKTEST-OK", SECS(90)).unwrap();
        let r = wait_row(&sb, &pane, SECS(60), |r| {
            r.status == Status::Idle
                && r.state == RowState::Live
                && r.session_source.as_deref() == Some("rollout-fd")
        });
        let sid = r.session_id.unwrap();
        let rollout = codex_rollouts(&sb.home)
            .into_iter()
            .find(|p| p.to_string_lossy().contains(&sid))
            .expect("the thread's rollout");
        World {
            sid,
            sb,
            _mock: mock,
            kind: Kind::Codex,
            pane,
            rollout: Some(rollout),
            t0: Instant::now(),
            log: vec![],
            zj: None,
        }
    }

    fn say(&self, what: &str) {
        eprintln!(
            "[{:>6.1}s {:?}] {what}",
            self.t0.elapsed().as_secs_f64(),
            self.kind
        );
    }

    /// Processes running this session, as the system shows them (not as park reports them).
    fn live(&self) -> Vec<u32> {
        match self.kind {
            Kind::Claude | Kind::ClaudeZellij => claude_pids_for(&self.sb.home, &self.sid),
            Kind::Codex => holders_of(self.rollout.as_deref().unwrap(), &self.sb),
        }
    }

    fn transcript(&self) -> PathBuf {
        match self.kind {
            Kind::Claude | Kind::ClaudeZellij => {
                claude_transcript(&self.sb.home, &self.sb.work.join("api"), &self.sid)
            }
            Kind::Codex => self.rollout.clone().unwrap(),
        }
    }

    /// Ledger entries naming this session.
    fn entries(&self) -> Vec<serde_json::Value> {
        entries(&self.sb)
            .into_iter()
            .filter_map(|p| {
                serde_json::from_slice::<serde_json::Value>(&std::fs::read(p).ok()?).ok()
            })
            .filter(|v| {
                v.get("session_id")
                    .and_then(|s| s.as_str())
                    .is_some_and(|s| s.eq_ignore_ascii_case(&self.sid))
            })
            .collect()
    }

    /// The promise, checked right after an abort once the dust settles.
    fn invariant(&self, ctx: &str) -> String {
        // A SIGTERMed agent takes a moment to go; a typed hand-off a moment to start.
        std::thread::sleep(Duration::from_millis(1500));
        let live = self.live();
        let es = self.entries();
        assert!(
            live.len() <= 1,
            "{ctx}: two processes on one transcript: {live:?}"
        );
        assert!(es.len() <= 1, "{ctx}: two entries for one session: {es:?}");
        let recorded = !es.is_empty() && self.transcript().is_file();
        assert!(
            live.len() == 1 || recorded,
            "{ctx}: SESSION LOST: not running and not recorded (entries {es:?})\n{}",
            self.capture()
        );
        assert!(self.pane_alive(), "{ctx}: the pane is gone");
        // Never a pill without an entry: a pane says "parked" only while the ledger can bring
        // it back (the verifier once removed the entry first, then cleared the pill).
        if let Ok(pill) = self
            .sb
            .tmux(&["show", "-p", "-q", "-t", &self.pane, "-v", "@park_pill"])
        {
            assert!(
                pill.trim().is_empty() || !es.is_empty(),
                "{ctx}: the pane shows the pill {pill:?} with no entry"
            );
        }
        let state = es
            .first()
            .and_then(|e| e.get("state").and_then(|s| s.as_str()).map(String::from))
            .unwrap_or_else(|| "-".into());
        // doctor must see anything unfinished; a cleanly parked or cleanly live session is fine.
        let d = self.park_out(&["doctor", "--json"], &[]);
        // A resume still being verified (Codex: 2 s alive with the id) is in progress, not stuck.
        let verifying = state == "resuming"
            && es[0]
                .get("resumer")
                .and_then(|r| r.get(0))
                .and_then(|p| p.as_u64())
                .is_some_and(|p| pid_alive(p as u32));
        let clean = (live.len() == 1 && es.is_empty())
            || (live.is_empty() && es.len() == 1 && state == "parked")
            || verifying;
        // A verifier that confirmed the resume between the snapshot and doctor's own reading
        // (it was just exiting when its pid was checked) left a clean state behind: the same
        // single agent, no entry. Anything else unclean must be flagged.
        let settled = live.len() == 1 && state == "resuming" && self.entries().is_empty() && {
            let now = self.live();
            now == live
        };
        if !clean && !settled {
            assert_eq!(
                code(&d),
                1,
                "{ctx}: doctor must flag live={live:?} entry state {state}: {}",
                text(&d)
            );
        }
        format!("live {} entry {state}", live.len())
    }

    /// doctor + one retry: exactly one agent on the session in the same pane, ledger empty.
    fn recover(&self, ctx: &str) {
        for attempt in 0..4 {
            if self.entries().is_empty() {
                break;
            }
            let (c, oc, why) = self.outcome(&["unpark", &self.pane]);
            self.say(&format!("{ctx}: retry unpark → {c} {oc} {why:?}"));
            if matches!(oc.as_str(), "unparked" | "already-running") {
                break;
            }
            assert!(
                attempt < 3,
                "{ctx}: unpark never succeeded: {oc} {why:?}\n{}\n{ctx}: unpark never succeeded: {oc} {why:?}",
                self.capture()
            );
            std::thread::sleep(Duration::from_secs(2));
        }
        let ok = poll(SECS(60), || {
            (self.live().len() == 1 && self.entries().is_empty()).then_some(())
        });
        assert!(
            ok.is_some(),
            "{ctx}: not back to one live agent: live {:?}, entries {:?}\n{}",
            self.live(),
            self.entries(),
            self.capture()
        );
        let r = self.wait_live_idle(SECS(60));
        assert_eq!(
            r.session_id.as_deref(),
            Some(self.sid.as_str()),
            "{ctx}: the same session runs in the same pane"
        );
        let d = self.park_out(&["doctor", "--json"], &[]);
        assert_eq!(code(&d), 0, "{ctx}: doctor after recovery: {}", text(&d));
        assert_eq!(self.live().len(), 1, "{ctx}: exactly one process");
    }

    /// A clean park (the starting point of the unpark faults).
    fn park_clean(&self) {
        let deadline = Instant::now() + SECS(30);
        loop {
            let (c, oc, why) = self.outcome(&["park", &self.pane, "--force"]);
            if oc == "parked" {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "clean park failed: {c} {oc} {why:?}"
            );
            std::thread::sleep(Duration::from_millis(700));
        }
        assert!(poll(SECS(10), || self.live().is_empty().then_some(())).is_some());
    }

    fn park_faults(&mut self) {
        for p in PARK_POINTS {
            let o = self.park_out(
                &["park", &self.pane, "--force", "--json"],
                &[("PARK_FAULT", p)],
            );
            assert_eq!(code(&o), 99, "park never reached {p}: {}", text(&o));
            let seen = self.invariant(&format!("park@{p}"));
            self.say(&format!("park@{p}: {seen}"));
            self.log.push(format!("park@{p}: {seen}"));
            self.recover(&format!("park@{p}"));
        }
    }

    /// An unpark killed between typing its hand-off and pressing Enter leaves
    /// `park unpark <entry>` on the prompt line: the retry must clear its own line and go on, not
    /// refuse the pane as busy (seen under load in the random SIGKILLs).
    fn leftover_handoff(&mut self) {
        if self.kind == Kind::Codex {
            return;
        }
        self.park_clean();
        let e = self.entries();
        let id = e[0]["id"].as_str().expect("entry id").to_string();
        // Clear park's own `park unpark .` prefill first, as the killed unpark did.
        let line = format!("park unpark {id}");
        match &self.zj {
            Some((z, t)) => {
                z.cli(&["action", "write", "--pane-id", t, "5", "21"])
                    .unwrap();
                z.type_text(t, &line);
            }
            None => {
                self.sb.send_keys(&self.pane, &["C-e", "C-u"]);
                self.sb.type_text(&self.pane, &line);
            }
        }
        let ok = poll(SECS(10), || {
            self.capture()
                .lines()
                .any(|l| l.trim_end().ends_with(&line))
                .then_some(())
        });
        assert!(
            ok.is_some(),
            "the hand-off line never showed\n{}",
            self.capture()
        );
        let (c, oc, why) = self.outcome(&["unpark", &self.pane]);
        self.say(&format!("leftover hand-off: unpark → {c} {oc} {why:?}"));
        assert_eq!(
            oc,
            "unparked",
            "a leftover hand-off line of ours blocked the unpark: {why:?}\n{}",
            self.capture()
        );
        self.recover("leftover hand-off");
    }

    fn unpark_faults(&mut self) {
        for p in UNPARK_POINTS {
            self.park_clean();
            let f = self.sb.park_home.join("test-fault");
            std::fs::write(&f, p).unwrap();
            let o = self.park_out(&["unpark", &self.pane, "--json"], &[]);
            // The one-shot fault fires in whichever park process reaches the point.
            let fired = poll(SECS(30), || (!f.exists()).then_some(())).is_some();
            assert!(fired, "unpark never reached {p}: {}", text(&o));
            let seen = self.invariant(&format!("unpark@{p}"));
            let seen = format!("sender exit {}; {seen}", code(&o));
            self.say(&format!("unpark@{p}: {seen}"));
            self.log.push(format!("unpark@{p}: {seen}"));
            self.recover(&format!("unpark@{p}"));
        }
    }

    /// SIGKILL park/unpark from outside after a random delay, `n` times each.
    fn random_kills(&mut self, n: usize, rng: &mut Rng) {
        for i in 0..n * 2 {
            let unpark = i % 2 == 1;
            if unpark {
                self.park_clean();
            }
            // park finishes in ~0.6-1 s, a hand-off in ~1-3 s: kill inside those windows.
            let delay = if unpark {
                rng.below(2000)
            } else {
                rng.below(900)
            };
            let args: Vec<&str> = if unpark {
                vec!["unpark", &self.pane, "--json"]
            } else {
                vec!["park", &self.pane, "--force", "--json"]
            };
            let env = self.mux_env();
            let env: Vec<(&str, &str)> =
                env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            let mut child = park_cmd(&self.sb, &env)
                .args(&args)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap();
            std::thread::sleep(Duration::from_millis(delay));
            let _ = child.kill();
            let st = child.wait().unwrap();
            let ctx = format!("SIGKILL {} after {delay} ms (exit {st})", args[0]);
            let seen = self.invariant(&ctx);
            self.say(&format!("{ctx}: {seen}"));
            self.log.push(format!("{ctx}: {seen}"));
            self.recover(&ctx);
        }
    }

    fn summary(&self) {
        eprintln!(
            "=== {:?}: {} aborts, invariant held after each ===\n  {}",
            self.kind,
            self.log.len(),
            self.log.join("\n  ")
        );
    }
}

/// Pids (other than the Codex daemon's) with `path` open, among the sandbox's processes.
fn holders_of(path: &Path, sb: &Sandbox) -> Vec<u32> {
    let mut out = vec![];
    for pid in sb.processes() {
        let Ok(rd) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
            continue;
        };
        if !pid_alive(pid) {
            continue;
        }
        if rd
            .flatten()
            .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|l| l == path))
        {
            out.push(pid);
        }
    }
    out
}

#[test]
fn real_claude_survives_every_fault_point_and_random_sigkills() {
    let mut w = World::claude();
    w.park_faults();
    w.leftover_handoff();
    w.unpark_faults();
    let mut rng = Rng::new("PARK_CRASH_SEED", 0);
    w.random_kills(4, &mut rng);
    w.summary();
}

/// Issue 19 (item 5): the same matrix for a Claude pane inside zellij.
#[test]
fn real_claude_in_zellij_survives_every_fault_point_and_random_sigkills() {
    let mut w = World::claude_zellij();
    w.park_faults();
    w.leftover_handoff();
    w.unpark_faults();
    let mut rng = Rng::new("PARK_CRASH_SEED", 0);
    w.random_kills(2, &mut rng);
    w.summary();
}

#[test]
fn real_codex_survives_every_fault_point_and_random_sigkills() {
    let mut w = World::codex();
    w.park_faults();
    w.unpark_faults();
    let mut rng = Rng::new("PARK_CRASH_SEED", 0);
    w.random_kills(3, &mut rng);
    w.summary();
}

/// An agent runs `env -u TMUX_PANE park park --idle 0s --yes` from its own Bash tool: park must
/// not park that agent (it is in park's ancestry, and it is the caller's own session), while it
/// does park the other idle agent.
#[test]
fn an_agent_running_park_idle_never_parks_itself() {
    let sb = Sandbox::new();
    let mock = mock_server!(&sb.logs);
    seed_claude_home(&sb.home, &sb.work, CLAUDE_API_KEY).unwrap();
    install_shims(&sb, None);
    let env = sb.claude_env(&mock);
    let start = |name: &str| {
        let dir = sb.project_dir(name);
        let pane = sb.new_shell_window("w", name, &dir, &env);
        sb.type_line(&pane, "claude --dangerously-skip-permissions");
        sb.wait_for(&pane, CLAUDE_READY, SECS(60)).unwrap();
        submit_prompt(&sb, &pane, &format!("hello {name}"), "❯");
        sb.wait_for(&pane, "PARKTEST-OK", SECS(60)).unwrap();
        let r = wait_row(&sb, &pane, SECS(30), |r| {
            r.status == Status::Idle && r.session_id.is_some()
        });
        (pane, r.session_id.unwrap())
    };
    let (me, my_sid) = start("self");
    let (other, other_sid) = start("other");
    let out = sb.root.join("park-out.json");
    let envout = sb.root.join("tool-env.txt");
    // The command sits in a script so the prompt stays one short line in the composer.
    let script = sb.root.join("t.sh");
    std::fs::write(
        &script,
        format!(
            "env > {}\nenv -u TMUX_PANE park park --idle 0s --yes --force --json > {} 2>&1\n",
            envout.display(),
            out.display()
        ),
    )
    .unwrap();
    submit_prompt(&sb, &me, &format!("go [tool sh {}]", script.display()), "❯");
    let got = poll(SECS(90), || {
        let t = std::fs::read_to_string(&out).ok()?;
        t.contains("\"results\"").then_some(t)
    })
    .unwrap_or_else(|| panic!("park never reported\n{}", sb.capture(&me)));
    eprintln!("park from inside the agent:\n{got}");
    let tool_env = std::fs::read_to_string(&envout).unwrap_or_default();
    eprintln!(
        "tool env, agent-related: {:?}",
        tool_env
            .lines()
            .filter(|l| l.starts_with("CLAUDE") || l.contains("SESSION"))
            .collect::<Vec<_>>()
    );
    let json: park_protocol::ActionOutput = serde_json::from_str(
        got.lines()
            .find(|l| l.starts_with('{'))
            .expect("a JSON line"),
    )
    .unwrap();
    let mine = json
        .results
        .iter()
        .find(|r| r.session_id.as_deref() == Some(my_sid.as_str()))
        .expect("its own agent is in the plan (and refused)");
    assert_eq!(mine.outcome.as_str(), "refused", "{mine:?}");
    assert!(
        mine.reason.as_deref().is_some_and(|r| r
            .contains("park is running inside this agent's process tree")
            || r.contains("the session park is running under")),
        "refused by not-self, not by chance: {mine:?}"
    );
    let theirs = json
        .results
        .iter()
        .find(|r| r.session_id.as_deref() == Some(other_sid.as_str()))
        .expect("the other agent is in the plan");
    assert_eq!(theirs.outcome.as_str(), "parked", "{theirs:?}");
    sb.wait_for(&me, "PARKTEST-OK(.|\n)*PARKTEST-OK", SECS(60))
        .unwrap();
    assert_eq!(
        claude_pids_for(&sb.home, &my_sid).len(),
        1,
        "the agent that ran park is alive"
    );
    assert!(claude_pids_for(&sb.home, &other_sid).is_empty());
    let _ = other;

    // Detached from the agent's tree (setsid -f reparents it to init): only the session id the
    // agent put in its tool's environment tells park who is calling.
    let out2 = sb.root.join("park-out2.json");
    let script2 = sb.root.join("t2.sh");
    std::fs::write(
        &script2,
        format!(
            "setsid -f sh -c 'env -u TMUX_PANE park park --idle 0s --yes --force --json > {} 2>&1'\n",
            out2.display()
        ),
    )
    .unwrap();
    submit_prompt(
        &sb,
        &me,
        &format!("again [tool sh {}]", script2.display()),
        "❯",
    );
    let got = poll(SECS(90), || {
        let t = std::fs::read_to_string(&out2).ok()?;
        t.contains("\"results\"").then_some(t)
    })
    .unwrap_or_else(|| panic!("detached park never reported\n{}", sb.capture(&me)));
    eprintln!("detached park:\n{got}");
    let json: park_protocol::ActionOutput =
        serde_json::from_str(got.lines().find(|l| l.starts_with('{')).unwrap()).unwrap();
    let mine = json
        .results
        .iter()
        .find(|r| r.session_id.as_deref() == Some(my_sid.as_str()))
        .expect("its own agent is in the plan");
    assert_eq!(mine.outcome.as_str(), "refused", "{mine:?}");
    assert_eq!(
        mine.reason.as_deref(),
        Some("this is the session park is running under"),
        "the session-id branch of not-self refused it"
    );
    sb.wait_for(&me, "(?s)PARKTEST-OK.*PARKTEST-OK.*PARKTEST-OK", SECS(60))
        .unwrap();
    assert_eq!(claude_pids_for(&sb.home, &my_sid).len(), 1);
}
