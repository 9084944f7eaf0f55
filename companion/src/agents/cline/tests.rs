use super::*;
use crate::adapters::platform::{Mem, ProcInfo};
use crate::agents::AgentKind;

fn v(s: &[&str]) -> Vec<String> {
    s.iter().map(|x| x.to_string()).collect()
}

fn fx(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/cline")
        .join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn ts(s: &str) -> jiff::Timestamp {
    s.parse().unwrap()
}

#[test]
fn the_tui_is_cline_and_daemons_subcommands_and_one_shots_are_not() {
    assert!(SPEC.is_program("cline", "/p/node_modules/.bin/cline"));
    assert!(SPEC.is_program("cline", "/p/node_modules/@cline/cli-linux-x64/bin/cline"));
    for tui in [
        v(&[]),
        v(&["--tui"]),
        v(&["--tui", "--id", "1796585412660_mt1oj"]),
        v(&["--auto-approve", "false", "-m", "mock-model"]),
        v(&["--thinking", "-m", "x"]),
        v(&["-i", "fix the bug"]),
    ] {
        assert!(interactive(&tui), "{tui:?}");
    }
    for not in [
        v(&[
            "--cline-hub-daemon",
            "--cwd",
            "/p",
            "--host",
            "127.0.0.1",
            "--port",
            "1",
        ]),
        v(&["auth", "-p", "openai"]),
        v(&["hook"]),
        v(&["fix the bug"]),
        v(&["--json", "hi"]),
        v(&["--version"]),
        v(&["--acp"]),
        v(&["-z", "hi"]),
    ] {
        assert!(!interactive(&not), "{not:?}");
    }
}

/// The hub daemon is shared between every TUI of a data dir and outlives them: never in a
/// pane's kill set, never a session's process.
#[test]
fn the_hub_daemon_is_shared() {
    let p = |argv: &[&str]| ProcInfo {
        pid: 9,
        ppid: 1,
        pgid: 9,
        sid: 9,
        tpgid: -1,
        start_ticks: 1,
        state: 'S',
        cpu_ticks: 0,
        rss_bytes: 1,
        argv: v(argv),
        comm: "cline".into(),
    };
    let hub = p(&[
        "/p/node_modules/@cline/cli-linux-x64/bin/cline",
        "--cline-hub-daemon",
        "--cwd",
        "/w",
        "--host",
        "127.0.0.1",
        "--port",
        "25463",
        "--pathname",
        "/hub",
    ]);
    assert!(is_hub(&hub));
    assert!(crate::agents::shared_process(&hub));
    assert!(!is_hub(&p(&["cline"])));
    assert!(!is_hub(&p(&[
        "cline",
        "--tui",
        "--id",
        "1796585412660_mt1oj"
    ])));
}

#[test]
fn flags_keep_the_whitelist_and_drop_the_session_the_cwd_and_the_key() {
    let id = "1796585412660_mt1oj";
    let (k, d) = SPEC.flags(&v(&[
        "--tui",
        "--id",
        id,
        "-c",
        "/elsewhere",
        "-k",
        "sk-secret",
        "-P",
        "openai",
        "-m",
        "mock-model",
        "--auto-approve",
        "false",
        "-p",
        "--thinking",
        "high",
        "--model",
        "x\n$(id)",
        "--evil",
    ]));
    assert_eq!(
        k,
        v(&[
            "--tui",
            "-P",
            "openai",
            "-m",
            "mock-model",
            "--auto-approve",
            "false",
            "-p",
            "--thinking",
            "high",
        ])
    );
    assert!(d.contains(&"--evil".to_string()));
    assert!(!d.iter().any(|x| x.contains("sk-secret")), "{d:?}");
    assert!(!k
        .iter()
        .any(|x| x.contains("sk-secret") || x == "/elsewhere"));
    assert_eq!(
        SPEC.resume_argv("cline", id, &k[..1]),
        v(&["cline", "--id", id, "--tui"])
    );
    // A bare `--thinking` before another flag is dropped, never given that flag as its level.
    let (k, d) = SPEC.flags(&v(&["--thinking", "-m", "x"]));
    assert!(
        !k.contains(&"-m".to_string()) || k != v(&["--thinking", "-m"]),
        "{k:?}"
    );
    assert!(d.contains(&"--thinking".to_string()), "{d:?}");
}

#[test]
fn session_ids_are_cline_shaped() {
    assert!(valid_id("1796585412660_mt1oj").is_some());
    for bad in [
        "",
        "1796585412660",
        "_x",
        "abc_def",
        "1796585412660_../x",
        "1796585412660_MT",
    ] {
        assert!(valid_id(bad).is_none(), "{bad}");
    }
}

/// Real 3.0.65 log lines: two TUIs in one cwd (30125, 30562), `/new` then a prompt in the first
/// (a second `session.started`), a resume with `--id` (2486), a session stopped by SIGTERM
/// (23764).
#[test]
fn the_log_names_each_processs_own_last_session() {
    let log = fx("cline.log");
    let b = log.as_bytes();
    let early = ts("2026-12-06T19:00:00Z");
    assert_eq!(
        logged_session(b, 30562, early).as_deref(),
        Ok("1796585412660_mt1oj")
    );
    // After `/new` and a prompt, the new session.
    assert_eq!(
        logged_session(b, 30125, early).as_deref(),
        Ok("1796585450059_n58yj")
    );
    assert_eq!(
        logged_session(b, 2486, early).as_deref(),
        Ok("1796585412660_mt1oj")
    );
    // Stopped: the process is exiting.
    assert!(logged_session(b, 23764, early)
        .unwrap_err()
        .contains("stopped"));
    // No line of this pid.
    assert!(logged_session(b, 4242, early).is_err());
}

/// A recycled pid: the lines an earlier process with this pid wrote before this one started
/// name nothing of it.
#[test]
fn a_recycled_pids_lines_say_nothing() {
    let log = fx("cline.log");
    let after = ts("2026-12-06T19:40:00Z");
    assert!(logged_session(log.as_bytes(), 30562, after).is_err());
    // Since the first TUI's start: its `/new` session counts, the one before it too.
    assert_eq!(
        logged_session(log.as_bytes(), 30125, ts("2026-12-06T19:30:40Z")).as_deref(),
        Ok("1796585450059_n58yj")
    );
}

/// One Cline TUI, pid 70, started `ago` seconds before now, holding `log` open when `holds`.
struct One {
    home: PathBuf,
    argv: Vec<String>,
    env: Vec<(String, String)>,
    holds: bool,
    ago: u64,
}

impl One {
    fn data(&self) -> PathBuf {
        self.home.join(".cline/data")
    }
    fn log(&self) -> PathBuf {
        self.data().join("logs/cline.log")
    }
}

impl Platform for One {
    fn processes(&self) -> std::io::Result<Vec<ProcInfo>> {
        Ok(vec![ProcInfo {
            pid: 70,
            ppid: 1,
            pgid: 70,
            sid: 1,
            tpgid: -1,
            start_ticks: 5070,
            state: 'S',
            cpu_ticks: 0,
            rss_bytes: 4096,
            argv: self.argv.clone(),
            comm: "cline".into(),
        }])
    }
    fn process(&self, pid: u32) -> Option<ProcInfo> {
        self.processes().ok()?.into_iter().find(|p| p.pid == pid)
    }
    fn environ(&self, _pid: u32) -> Option<Vec<(String, String)>> {
        let mut e = vec![("HOME".into(), self.home.to_string_lossy().into_owned())];
        e.extend(self.env.iter().cloned());
        Some(e)
    }
    fn cwd(&self, _pid: u32) -> Option<PathBuf> {
        Some(PathBuf::from("/w/p"))
    }
    fn open_files(&self, _pid: u32) -> Vec<PathBuf> {
        if self.holds {
            vec![self.log()]
        } else {
            vec![]
        }
    }
    fn memory(&self, _pid: u32) -> Option<Mem> {
        None
    }
    fn status_mem(&self, _pid: u32) -> Option<(u64, u64)> {
        None
    }
    fn clock_ticks_per_sec(&self) -> u64 {
        100
    }
    fn started_secs_ago(&self, _start_ticks: u64) -> Option<u64> {
        Some(self.ago)
    }
}

fn proc_of(p: &One) -> AgentProc {
    AgentProc {
        agent: Agent::Cline,
        root: 70,
        main: 70,
        prog_index: 0,
        argv: p.argv.clone(),
        env: p.environ(70).unwrap(),
        background: false,
    }
}

fn line(at: jiff::Timestamp, pid: u32, event: &str, id: &str) -> String {
    format!(
        r#"{{"level":30,"time":"{at}","pid":{pid},"hostname":"vm","name":"cline.cli","component":"main","event":"{event}","properties":{{"sessionId":"{id}","source":"cli"}},"msg":"telemetry.event"}}"#
    )
}

const A: &str = "1796585412660_mt1oj";
const B: &str = "1796585450059_n58yj";

fn world() -> (tempfile::TempDir, One) {
    let d = tempfile::tempdir().unwrap();
    let p = One {
        home: d.path().to_path_buf(),
        argv: v(&["cline"]),
        env: vec![],
        holds: true,
        ago: 60,
    };
    std::fs::create_dir_all(p.log().parent().unwrap()).unwrap();
    let dir = p.data().join("sessions").join(A);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join(format!("{A}.messages.json")),
        fx("tool.messages.json"),
    )
    .unwrap();
    std::fs::write(
        dir.join(format!("{A}.json")),
        fx("tool.session.json").replace("\"status\": \"idle\"", "\"status\": \"running\""),
    )
    .unwrap();
    (d, p)
}

fn write_log(p: &One, lines: &[String]) {
    std::fs::write(p.log(), lines.join("\n") + "\n").unwrap();
}

const IDLE_TITLE: &str = "> [tool echo hi-from-tool]";

#[test]
fn identity_is_the_session_the_process_logged_since_it_started() {
    let (_d, p) = world();
    let now = jiff::Timestamp::now();
    let ago = |s: i64| now.checked_sub(jiff::SignedDuration::from_secs(s)).unwrap();
    // An earlier process with pid 70 (before this one started) ran B; this one started A.
    write_log(
        &p,
        &[
            line(ago(600), 70, "session.started", B),
            line(ago(50), 70, "session.started", A),
        ],
    );
    let id = identify(&proc_of(&p), IDLE_TITLE, &fx("idle.txt"), &p);
    assert_eq!(
        (id.session_id.as_deref(), id.source),
        (Some(A), "log"),
        "{id:?}"
    );
    assert_eq!(id.reason, None);
    assert_eq!(
        id.status_file.as_deref(),
        Some("busy"),
        "running reads as busy"
    );
    assert_eq!(id.cwd.as_deref(), Some("/tmp/cl/proj"));
    assert_eq!(
        id.transcript,
        Some(p.data().join(format!("sessions/{A}/{A}.messages.json")))
    );
    assert!(Cline
        .read_transcript(&id)
        .is_some_and(|t| t.last_prompt.is_some()));

    // Only the recycled pid's line: nothing.
    write_log(&p, &[line(ago(600), 70, "session.started", A)]);
    let id = identify(&proc_of(&p), IDLE_TITLE, &fx("idle.txt"), &p);
    assert!(id.session_id.is_none(), "{id:?}");
    assert!(id.reason.unwrap().contains("still starting"));

    // Another process's line: nothing.
    write_log(&p, &[line(ago(10), 71, "session.started", A)]);
    assert!(identify(&proc_of(&p), IDLE_TITLE, &fx("idle.txt"), &p)
        .session_id
        .is_none());
}

/// `/new` shows the start screen (title `Cline`) at once, but logs the new session only at its
/// first prompt: until then the old session is not this pane's.
#[test]
fn a_new_session_without_a_prompt_is_untargetable() {
    let (_d, p) = world();
    let now = jiff::Timestamp::now();
    write_log(
        &p,
        &[line(
            now.checked_sub(jiff::SignedDuration::from_secs(5)).unwrap(),
            70,
            "session.started",
            A,
        )],
    );
    for (title, screen) in [(IDLE_TITLE, fx("after-new.txt")), ("Cline", fx("idle.txt"))] {
        let id = identify(&proc_of(&p), title, &screen, &p);
        assert!(id.session_id.is_none(), "{title}: {id:?}");
        assert!(id.reason.unwrap().contains("/new"), "{title}");
    }
}

#[test]
fn a_fresh_session_with_nothing_said_is_named_but_has_nothing_to_resume() {
    let (_d, p) = world();
    let now = jiff::Timestamp::now();
    write_log(
        &p,
        &[line(
            now.checked_sub(jiff::SignedDuration::from_secs(5)).unwrap(),
            70,
            "session.started",
            B,
        )],
    );
    let id = identify(&proc_of(&p), "Cline", &fx("first-start.txt"), &p);
    assert_eq!(id.session_id.as_deref(), Some(B));
    assert!(id.reason.unwrap().contains("no conversation yet"));
}

#[test]
fn another_data_dir_or_no_log_is_untargetable_with_the_way_forward() {
    let now = jiff::Timestamp::now();
    let fresh = line(
        now.checked_sub(jiff::SignedDuration::from_secs(5)).unwrap(),
        70,
        "session.started",
        A,
    );
    let (_d, mut p) = world();
    write_log(&p, std::slice::from_ref(&fresh));
    let why = |p: &One| {
        identify(&proc_of(p), IDLE_TITLE, &fx("idle.txt"), p)
            .reason
            .unwrap_or_default()
    };
    p.holds = false;
    assert!(why(&p).contains("does not hold its log"), "{}", why(&p));
    p.holds = true;
    p.argv = v(&["cline", "--data-dir", "/elsewhere"]);
    assert!(why(&p).contains("CLINE_DATA_DIR"), "{}", why(&p));
    p.argv = v(&["cline"]);
    p.env = v2(&[("CLINE_DIR", "/c")]);
    assert!(why(&p).contains("CLINE_DATA_DIR"), "{}", why(&p));
    p.env = v2(&[("CLINE_LOG_ENABLED", "false")]);
    assert!(why(&p).contains("CLINE_LOG_ENABLED"), "{}", why(&p));
    p.env = v2(&[("CLINE_LOG_LEVEL", "warn")]);
    assert!(why(&p).contains("CLINE_LOG_LEVEL"), "{}", why(&p));
    p.env = vec![];
    assert_eq!(why(&p), "");
}

fn v2(kv: &[(&str, &str)]) -> Vec<(String, String)> {
    kv.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn a_resume_runs_the_session_its_log_names() {
    let (_d, p) = world();
    let now = jiff::Timestamp::now();
    write_log(
        &p,
        &[line(
            now.checked_sub(jiff::SignedDuration::from_secs(5)).unwrap(),
            70,
            "session.started",
            A,
        )],
    );
    let mut e = crate::model::entry::Entry::sample(Agent::Cline, A);
    assert!(Cline.runs_session(&e, 70, 5070, &p));
    e.session_id = B.into();
    assert!(!Cline.runs_session(&e, 70, 5070, &p));
}

#[test]
fn the_archive_is_jsonl_and_restore_says_how() {
    let (_d, p) = world();
    let path = p.data().join(format!("sessions/{A}/{A}.messages.json"));
    let b = Cline.transcript_bytes(&path, A).unwrap();
    assert!(b
        .split(|&c| c == b'\n')
        .filter(|l| !l.is_empty())
        .all(|l| serde_json::from_slice::<Value>(l).is_ok()));
    let md = (SPEC.markdown)(&b);
    let raw = crate::agents::raw_end(Agent::Cline, &b);
    assert_eq!(raw.last_reply, md.last_assistant);
    let e = crate::model::entry::Entry::sample(Agent::Cline, A);
    assert!(Cline
        .restore_path(&e, &p.data(), A)
        .unwrap_err()
        .contains("jq"));
    assert_eq!(transcript::all(&p.data()), vec![(A.to_string(), path)]);
}
