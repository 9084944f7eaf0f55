//! End-to-end: Claude Code's background sessions (Agent View, 2.1.139+) with the REAL 2.1.197 CLI,
//! offline against the project's mock (issue 19, items 0b and 1).
//!
//! What the real CLI does (measured, see the issue note): `claude --bg` hands the session to a
//! supervisor (`claude daemon run …`, re-parented to init, keeping the launching pane's
//! `TMUX_PANE`), which runs each session in a worker under a `--bg-pty-host`, keeps a
//! `--bg-spare` ready, and writes `sessions/<pid>.json` with `"kind":"bg","jobId"` for each
//! worker. `/bg` forks the session into a new id; `claude respawn <job>` restarts the same id in
//! the background without checking for an interactive process on it.
//!
//! The contract checked here: background sessions are listed in their own `(background)` group
//! with state, id, job and memory, never bound to a pane and never parked; the supervisor, its
//! hosts and its spare are not sessions, so they neither bind to the launching pane nor block
//! unparks; a parked session that is now running in the background is reported as such (with
//! `claude attach <job>` offered at the pane's prompt) and no second writer is started.

use crate::common::*;
use park_e2e::*;
use park_protocol::{Row, RowState, Status};
use std::time::Duration;

struct World {
    sb: Sandbox,
    mock: MockServer,
}

impl World {
    fn new() -> World {
        let sb = Sandbox::new();
        let mock = mock_server!(&sb.logs);
        seed_claude_home(&sb.home, &sb.work, CLAUDE_API_KEY).unwrap();
        // The supervisor passes ANTHROPIC_API_KEY to its workers but not ANTHROPIC_BASE_URL:
        // settings.json's env reaches them.
        let settings = serde_json::json!({
            "env": {"ANTHROPIC_BASE_URL": mock.base_url()},
            "skipDangerousModePermissionPrompt": true,
        });
        std::fs::write(
            sb.home.join(".claude/settings.json"),
            serde_json::to_string_pretty(&settings).unwrap(),
        )
        .unwrap();
        install_shims(&sb, None);
        World { sb, mock }
    }

    fn env(&self) -> Env {
        self.sb.claude_env(&self.mock)
    }

    fn shell(&self, window: &str) -> String {
        let dir = self.sb.project_dir("bg");
        self.sb.new_shell_window("w", window, &dir, &self.env())
    }

    /// An interactive `claude <args>` at the prompt of a new shell pane, one turn done.
    fn interactive(&self, window: &str, args: &str, prompt: Option<&str>) -> (String, String) {
        let pane = self.shell(window);
        self.sb.type_line(&pane, &format!("claude {args}"));
        self.sb.wait_for(&pane, CLAUDE_READY, SECS(60)).unwrap();
        if let Some(p) = prompt {
            submit_prompt(&self.sb, &pane, p, "❯");
            self.sb.wait_for(&pane, "PARKTEST-OK", SECS(60)).unwrap();
        }
        let r = wait_row(&self.sb, &pane, SECS(30), |r| {
            r.status == Status::Idle && r.state == RowState::Live
        });
        (pane, r.session_id.expect("session id"))
    }

    /// Rows of this sandbox only (other tests' agents may run on the machine).
    fn mine(&self) -> Vec<Row> {
        let work = self.sb.work.to_string_lossy().into_owned();
        ls(&self.sb)
            .rows
            .into_iter()
            .filter(|r| r.cwd.starts_with(&work))
            .collect()
    }

    fn wait_background(&self, what: &str, pred: impl Fn(&Row) -> bool) -> Row {
        let mut last = vec![];
        poll(SECS(60), || {
            last = self.mine();
            last.iter()
                .find(|r| r.state == RowState::Background && pred(r))
                .cloned()
        })
        .unwrap_or_else(|| {
            let ps = std::process::Command::new("ps")
                .args(["-eo", "pid,ppid,stat,args"])
                .output()
                .unwrap();
            let ps = String::from_utf8_lossy(&ps.stdout)
                .lines()
                .filter(|l| l.contains("claude"))
                .map(str::to_string)
                .collect::<Vec<_>>()
                .join("\n");
            panic!(
                "no background row {what}; rows: {last:#?}\nall rows: {:#?}\nfiles: {:#?}\nps:\n{ps}\nscreens: {}",
                ls(&self.sb).rows.into_iter().filter(|r| r.agent == park_protocol::Agent::Claude).collect::<Vec<_>>(),
                claude_session_files(&self.sb.home),
                self.sb
                    .tmux(&["list-panes", "-a", "-F", "#{pane_id}"])
                    .unwrap_or_default()
                    .lines()
                    .map(|p| format!("{p}:\n{}", self.sb.capture(p)))
                    .collect::<Vec<_>>()
                    .join("\n")
            )
        })
    }
}

/// `backgrounded · <job>` as `claude --bg` and `/bg` print it.
fn job_on_screen(sb: &Sandbox, pane: &str) -> String {
    let screen = sb
        .wait_for(pane, r"backgrounded · [0-9a-f]{8}", SECS(60))
        .unwrap();
    let re = regex::Regex::new(r"backgrounded · ([0-9a-f]{8})").unwrap();
    re.captures_iter(&screen)
        .last()
        .map(|c| c[1].to_string())
        .expect("job id")
}

fn supervisor_alive(sb: &Sandbox) -> bool {
    let home = format!("HOME={}", sb.home.display());
    std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        let p = e.path();
        let argv = std::fs::read(p.join("cmdline")).unwrap_or_default();
        let env = std::fs::read(p.join("environ")).unwrap_or_default();
        String::from_utf8_lossy(&argv).contains("daemon\0run")
            && env.split(|b| *b == 0).any(|kv| kv == home.as_bytes())
    })
}

#[test]
fn real_claude_background_sessions_are_listed_never_parked_and_never_doubled() {
    let w = World::new();
    let sb = &w.sb;
    let (a, _) = w.interactive("a", "", Some("hello from pane a"));

    // A background session started from pane B.
    let b = w.shell("b");
    sb.type_line(&b, "claude --bg 'background task one'");
    let job = job_on_screen(sb, &b);
    let bg = w.wait_background("for the --bg job", |r| {
        r.job.as_deref() == Some(job.as_str()) && r.status == Status::Idle
    });
    let x = bg.session_id.clone().expect("the worker's session id");
    assert!(x.starts_with(&job), "the job is the id's first 8 chars");
    assert_eq!(bg.session, "(background)");
    assert!(bg.pane.is_empty() && bg.bytes > 50 << 20, "{bg:?}");
    assert!(
        supervisor_alive(sb),
        "the supervisor runs (what used to block unparks)"
    );
    let rows = w.mine();
    assert!(
        rows.iter().all(|r| r.pane != b),
        "the supervisor keeps pane B's TMUX_PANE but is no agent of pane B: {rows:#?}"
    );
    assert!(
        rows.iter().all(|r| r.state != RowState::Untargetable),
        "no unidentified Claude (supervisor, pty hosts, spare): {rows:#?}"
    );
    let text = String::from_utf8(park(sb, &["ls"]).stdout).unwrap();
    assert!(text.contains("(background)") && text.contains(&format!("claude attach {job}")));

    // Never parked: by id, nor by --all.
    let (c, out) = action(sb, &["park", &x]);
    assert_eq!(c, 1, "{:?}", out.results);
    assert!(out.results[0]
        .reason
        .as_deref()
        .is_some_and(|r| r.contains("background session")));
    assert_eq!(
        claude_pids_for(&sb.home, &x).len(),
        1,
        "the worker still runs"
    );

    // 0b: with the supervisor running, an interactive session parks and unparks.
    let (c, out) = action_settled(sb, &["park", &a]);
    assert_eq!(
        (c, out.results[0].outcome.as_str()),
        (0, "parked"),
        "{:?}",
        out.results
    );
    let (c, out) = action(sb, &["unpark", &a]);
    assert_eq!(
        (c, out.results[0].outcome.as_str()),
        (0, "unparked"),
        "{:?}",
        out.results
    );
    let back = wait_row(sb, &a, SECS(30), |r| {
        r.state == RowState::Live && r.status == Status::Idle
    });

    // /bg from pane A: the pane's row goes, the (forked) session is listed in the background.
    submit_prompt(sb, &a, "/bg", "❯");
    let job2 = job_on_screen(sb, &a);
    let forked = w.wait_background("for the /bg job", |r| {
        r.job.as_deref() == Some(job2.as_str())
    });
    assert_ne!(
        forked.session_id, back.session_id,
        "/bg forks a new session id"
    );
    poll(SECS(20), || row(sb, &a).is_none().then_some(())).expect("pane A runs no agent after /bg");

    // A parked session that is now running as a background agent: stop the job, resume its id
    // in pane C, park it, then `claude respawn` puts the same id back in the background.
    sb.type_line(&b, &format!("claude stop {job}"));
    poll(SECS(30), || {
        w.mine()
            .iter()
            .all(|r| r.session_id.as_deref() != Some(x.as_str()))
            .then_some(())
    })
    .expect("the stopped job's worker is gone");
    let (pc, sid_c) = w.interactive("c", &format!("--resume {x}"), None);
    assert_eq!(sid_c, x);
    // A Claude that just resumed is still settling: retry while only the CPU guard refuses.
    let (c, out) = action_settled(sb, &["park", &pc]);
    assert_eq!(
        (c, out.results[0].outcome.as_str()),
        (0, "parked"),
        "{:?}",
        out.results
    );
    sb.type_line(&b, &format!("claude respawn {job}"));
    w.wait_background("for the respawned job", |r| {
        r.session_id.as_deref() == Some(x.as_str())
    });
    let (c, out) = action(sb, &["unpark", &pc]);
    let r = &out.results[0];
    assert_eq!((c, r.outcome.as_str()), (0, "already-running"), "{r:?}");
    let why = r.reason.clone().unwrap_or_default();
    assert!(
        why.contains("background agent") && why.contains(&format!("claude attach {job}")),
        "{why}"
    );
    sb.wait_for(&pc, &format!("claude attach {job}"), SECS(10))
        .unwrap();
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(
        claude_pids_for(&sb.home, &x).len(),
        1,
        "one process on the session: the background worker"
    );
    assert!(entries(sb).is_empty(), "the parked state was cleared");
}
