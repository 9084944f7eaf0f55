use super::*;
use crate::adapters::platform::{Mem, ProcInfo};
use crate::agents::AgentKind;

const SID: &str = "01a24cd4-0e3c-713e-9a66-5bcd17f42c45";
const NEW: &str = "01a24cd9-1111-7222-8333-444455556666";
const CWD: &str = "/w/p";

fn v(s: &[&str]) -> Vec<String> {
    s.iter().map(|x| x.to_string()).collect()
}

#[test]
fn the_tui_is_pi_and_its_other_modes_are_not() {
    let runs = |args: &[&str]| SPEC.runs("pi", "/x/.bin/pi", &v(args));
    assert!(runs(&[]), "argv as pi leaves it: `pi` alone");
    assert!(runs(&["--session", SID, "--model", "m"]));
    assert!(runs(&["fix the bug"]), "a first prompt, interactive");
    for other in [
        &["-p", "hi"][..],
        &["--print"],
        &["--mode", "rpc"],
        &["--mode=json"],
        &["--export", "s.jsonl"],
        &["--list-models"],
        &["-v"],
        &["install", "npm:x"],
        &["auth", "status"],
        &["mcp", "list"],
    ] {
        assert!(!runs(other), "{other:?}");
    }
    assert!(!SPEC.runs("vim", "/usr/bin/vim", &v(&["pi"])));
}

#[test]
fn flags_keep_the_whitelist_and_drop_sessions_secrets_prompts_and_hostile_values() {
    let (keep, dropped) = SPEC.flags(&v(&[
        "--session",
        SID,
        "--provider",
        "mock",
        "--model",
        "mock-model",
        "--thinking=high",
        "-e",
        "./ext.ts",
        "--api-key",
        "sk-secret",
        "--session-dir",
        "/elsewhere",
        "--append-system-prompt",
        "x$(touch PWNED)",
        "--no-skills",
        "--evil",
        "first prompt",
    ]));
    assert_eq!(
        keep,
        v(&[
            "--provider",
            "mock",
            "--model",
            "mock-model",
            "--thinking",
            "high",
            "-e",
            "./ext.ts",
            "--append-system-prompt",
            "x$(touch PWNED)",
            "--no-skills",
        ])
    );
    assert_eq!(dropped, v(&["--evil", "first prompt"]));
    assert!(!keep.iter().any(|k| k.contains("secret")));
    assert_eq!(
        SPEC.resume_argv("pi", SID, &keep[..4]),
        v(&[
            "pi",
            "--session",
            SID,
            "--provider",
            "mock",
            "--model",
            "mock-model"
        ])
    );
}

/// One pi process (pid 70) with HOME and PARK_HOME under `root`.
struct One {
    root: PathBuf,
    start: u64,
}

impl One {
    fn home(&self) -> PathBuf {
        self.root.join("home")
    }
    fn park_home(&self) -> PathBuf {
        self.root.join("park")
    }
    fn config(&self) -> PathBuf {
        self.home().join(".pi/agent")
    }
    fn env(&self) -> Vec<(String, String)> {
        vec![
            ("HOME".into(), self.home().to_string_lossy().into()),
            (
                "PARK_HOME".into(),
                self.park_home().to_string_lossy().into(),
            ),
        ]
    }
    fn proc(&self) -> AgentProc {
        AgentProc {
            agent: Agent::Pi,
            root: 70,
            main: 70,
            prog_index: 0,
            argv: v(&["pi"]),
            env: self.env(),
            background: false,
        }
    }
    /// The session file of `sid` in the cwd's folder, with its header.
    fn session(&self, sid: &str) -> PathBuf {
        let dir = self
            .config()
            .join("sessions")
            .join(transcript::project_dir_name(CWD));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(format!("2026-12-06T19-28-15-421Z_{sid}.jsonl"));
        std::fs::write(
            &p,
            format!(
                "{{\"type\":\"session\",\"version\":3,\"id\":\"{sid}\",\"timestamp\":\"2026-12-06T19:28:15.421Z\",\"cwd\":\"{CWD}\"}}\n"
            ),
        )
        .unwrap();
        p
    }
    fn record(&self, sid: &str, file: &Path, start: u64, argv: &[&str]) {
        let r = integrate::Record {
            pid: 70,
            start_ticks: start,
            session_id: sid.into(),
            session_file: Some(file.to_string_lossy().into()),
            cwd: Some(CWD.into()),
            status: "idle".into(),
            argv: v(argv),
            event: "session_start".into(),
        };
        let dir = integrate::records_dir(&self.park_home());
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("70.json"), serde_json::to_vec(&r).unwrap()).unwrap();
    }
    fn identify(&self) -> Identity {
        identify(&self.proc(), self.start, self)
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
            start_ticks: self.start,
            state: 'S',
            cpu_ticks: 0,
            rss_bytes: 4096,
            argv: v(&["pi"]),
            comm: "pi".into(),
        }])
    }
    fn process(&self, pid: u32) -> Option<ProcInfo> {
        self.processes().ok()?.into_iter().find(|p| p.pid == pid)
    }
    fn environ(&self, _pid: u32) -> Option<Vec<(String, String)>> {
        Some(self.env())
    }
    fn cwd(&self, _pid: u32) -> Option<PathBuf> {
        Some(PathBuf::from(CWD))
    }
    fn open_files(&self, _pid: u32) -> Vec<PathBuf> {
        vec![]
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
}

fn one() -> (tempfile::TempDir, One) {
    let d = tempfile::tempdir().unwrap();
    let o = One {
        root: d.path().to_path_buf(),
        start: 5070,
    };
    (d, o)
}

/// Without the extension's record pi is untargetable and the reason names the way forward,
/// even with a session file of its cwd on disk (never the newest file of the folder).
#[test]
fn without_the_extension_the_row_is_untargetable_and_names_it() {
    let (_d, o) = one();
    o.session(SID);
    let i = o.identify();
    assert_eq!(i.session_id, None);
    assert!(
        i.reason
            .as_deref()
            .is_some_and(|r| r.contains("park integrate pi")),
        "{i:?}"
    );
}

#[test]
fn the_record_names_the_session_its_file_status_and_flags() {
    let (_d, o) = one();
    let f = o.session(SID);
    o.record(SID, &f, o.start, &["--model", "mock-model", "--evil"]);
    let i = o.identify();
    assert_eq!(i.session_id.as_deref(), Some(SID));
    assert_eq!(i.reason, None, "{i:?}");
    assert_eq!((i.source, i.cwd.as_deref()), ("extension", Some(CWD)));
    assert_eq!(i.transcript.as_deref(), Some(f.as_path()));
    assert_eq!(i.status_file.as_deref(), Some("idle"));
    let (keep, dropped) = Pi.launch_flags(&o.proc(), o.start, &o);
    assert_eq!(keep, v(&["--model", "mock-model"]));
    assert_eq!(dropped, v(&["--evil"]));
}

/// A record of an earlier process with the same pid says nothing.
#[test]
fn a_record_of_a_recycled_pid_is_ignored() {
    let (_d, o) = one();
    let f = o.session(SID);
    o.record(SID, &f, o.start - 1, &["--model", "m"]);
    assert_eq!(o.identify().session_id, None);
    assert!(Pi.launch_flags(&o.proc(), o.start, &o).0.is_empty());
}

/// After `/new` and before its first prompt, the new session has no file: nothing to resume.
#[test]
fn a_session_without_its_file_yet_has_nothing_to_resume() {
    let (_d, o) = one();
    let f = o.session(SID);
    let new = f.with_file_name(format!("2026-12-06T19-30-00-000Z_{NEW}.jsonl"));
    o.record(NEW, &new, o.start, &[]);
    let i = o.identify();
    assert_eq!(i.session_id.as_deref(), Some(NEW));
    assert!(
        i.reason
            .as_deref()
            .is_some_and(|r| r.contains("no conversation yet")),
        "{i:?}"
    );
}

/// A session file outside the agent dir's sessions (`--session-dir`) is not where
/// `pi --session <id>` looks; a file whose header names another session is not the session's.
#[test]
fn a_file_elsewhere_or_with_another_header_is_refused() {
    let (d, o) = one();
    let elsewhere = d.path().join("mine").join(format!("x_{SID}.jsonl"));
    std::fs::create_dir_all(elsewhere.parent().unwrap()).unwrap();
    std::fs::write(&elsewhere, "{}\n").unwrap();
    o.record(SID, &elsewhere, o.start, &[]);
    assert!(o
        .identify()
        .reason
        .is_some_and(|r| r.contains("--session-dir")));
    let f = o.session(SID);
    std::fs::write(
        &f,
        format!("{{\"type\":\"session\",\"id\":\"{NEW}\",\"cwd\":\"{CWD}\"}}\n"),
    )
    .unwrap();
    o.record(SID, &f, o.start, &[]);
    assert!(o.identify().reason.is_some_and(|r| r.contains("header")));
}

#[test]
fn runs_session_is_the_record_of_that_process_for_that_session() {
    let (_d, o) = one();
    let f = o.session(SID);
    let mut e = Entry::sample(Agent::Pi, SID);
    e.cwd = CWD.into();
    e.config_dir = Some(o.config().to_string_lossy().into());
    assert!(!Pi.runs_session(&e, 70, o.start, &o), "no record yet");
    o.record(NEW, &f, o.start, &[]);
    assert!(!Pi.runs_session(&e, 70, o.start, &o), "another session");
    o.record(SID, &f, o.start - 1, &[]);
    assert!(!Pi.runs_session(&e, 70, o.start, &o), "an earlier process");
    o.record(SID, &f, o.start, &[]);
    assert!(Pi.runs_session(&e, 70, o.start, &o));
    assert_eq!(Pi.expected_transcript(&e).as_deref(), Some(f.as_path()));
    e.transcript = Some(f.to_string_lossy().into());
    assert_eq!(
        Pi.restore_path(&e, &o.config(), SID).unwrap(),
        f,
        "back where it was"
    );
    e.transcript = Some("/etc/passwd".into());
    assert!(Pi.restore_path(&e, &o.config(), SID).is_err());
}
