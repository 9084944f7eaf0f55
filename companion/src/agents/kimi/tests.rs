//! Kimi Code's identity, flags and verifier rules.

use super::*;
use crate::adapters::platform::{Mem, ProcInfo};
use crate::agents::AgentKind;

const SID: &str = "session_71828f23-5b64-4e12-a5ad-e8e418559405";
const NEW: &str = "session_48759555-7c19-401c-b909-1daaed4dbc29";

fn v(s: &[&str]) -> Vec<String> {
    s.iter().map(|x| x.to_string()).collect()
}

/// 70: the shell; 77: `kimi-code` (its title is all its cmdline holds).
struct One {
    home: PathBuf,
}
impl Platform for One {
    fn processes(&self) -> std::io::Result<Vec<ProcInfo>> {
        let p = |pid: u32, ppid: u32, argv: &[&str]| ProcInfo {
            pid,
            ppid,
            pgid: 77,
            sid: 1,
            tpgid: -1,
            start_ticks: 5000 + u64::from(pid),
            state: 'S',
            cpu_ticks: 0,
            rss_bytes: 4096,
            argv: v(argv),
            comm: "kimi-code".into(),
        };
        Ok(vec![p(70, 1, &["bash"]), p(77, 70, &["kimi-code"])])
    }
    fn process(&self, pid: u32) -> Option<ProcInfo> {
        self.processes().ok()?.into_iter().find(|p| p.pid == pid)
    }
    fn environ(&self, _pid: u32) -> Option<Vec<(String, String)>> {
        Some(vec![("HOME".into(), self.home.to_string_lossy().into())])
    }
    fn cwd(&self, _pid: u32) -> Option<PathBuf> {
        Some(PathBuf::from("/tmp/kx/proj"))
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
    fn started_secs_ago(&self, _start_ticks: u64) -> Option<u64> {
        Some(60)
    }
}

#[test]
fn the_titled_process_is_kimi_and_other_modes_are_not() {
    assert_eq!(
        crate::agents::classify(&v(&["kimi-code"])),
        Some((Agent::Kimi, 0))
    );
    assert_eq!(
        crate::agents::classify(&v(&["node", "/p/.bin/kimi", "-S", SID])),
        Some((Agent::Kimi, 1))
    );
    assert!(interactive(&v(&[])));
    assert!(interactive(&v(&["-S", SID, "--plan"])));
    assert!(!interactive(&v(&["-p", "hi"])));
    assert!(!interactive(&v(&["--version"])));
    assert!(!interactive(&v(&["doctor"])));
    assert!(!interactive(&v(&["acp"])));
    assert!(!interactive(&v(&["web"])));
}

#[test]
fn flags_keep_the_whitelist_and_resume_is_dash_s() {
    let (k, d) = SPEC.flags(&v(&[
        "-S",
        SID,
        "-m",
        "k2",
        "--plan",
        "--agent",
        "coder",
        "--add-dir",
        "/w/x",
        "--evil",
    ]));
    assert_eq!(k, v(&["-m", "k2", "--plan", "--add-dir", "/w/x"]));
    assert_eq!(d, v(&["--evil"]));
    assert_eq!(SPEC.resume_argv("kimi", SID, &[]), v(&["kimi", "-S", SID]));
    // The titled process shows no flags at all: nothing is kept, and `park show` says why.
    assert_eq!(SPEC.flags(&[]), (vec![], vec![]));
    let t = SPEC.process_title.as_ref().unwrap();
    assert!(t.lost_flags.contains("--plan"));
    // The titled process is resumed by the program that starts it.
    assert_eq!(SPEC.program_for("kimi-code"), "kimi");
    assert_eq!(SPEC.program_for("/opt/bin/kimi"), "/opt/bin/kimi");
}

fn write(park_home: &Path, r: &integrate::Record) {
    let dir = integrate::records_dir(park_home);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join(format!("{}.json", r.pid)),
        serde_json::to_vec(r).unwrap(),
    )
    .unwrap();
}

/// Only the hook's record of this very process names its session: a record of a recycled pid,
/// of an ended session or with a hostile id does not; without one the reason names the
/// integration (or, installed, that no session exists yet). Never the folder's newest session.
#[test]
fn identity_comes_from_the_hook_record_of_this_process_only() {
    let d = tempfile::tempdir().unwrap();
    let home = d.path().to_path_buf();
    let config = home.join(".kimi-code");
    let park_home = home.join(".local/state/park");
    let p = One { home: home.clone() };
    let a = AgentProc {
        agent: Agent::Kimi,
        root: 77,
        main: 77,
        prog_index: 0,
        argv: v(&["kimi-code"]),
        env: vec![("HOME".into(), home.to_string_lossy().into())],
        background: false,
    };
    // A session in the folder, the only one: still not this process's without a record.
    let wire = transcript::path(&config, "/tmp/kx/proj", SID);
    std::fs::create_dir_all(wire.parent().unwrap()).unwrap();
    std::fs::write(
        &wire,
        include_str!("../../../tests/fixtures/kimi/wire.jsonl"),
    )
    .unwrap();
    let id = identify(&a, 5077, &p);
    assert!(id.session_id.is_none(), "{id:?}");
    assert!(id.reason.unwrap().contains("park integrate kimi"));

    let mut rec = integrate::Record {
        pid: 77,
        start_ticks: 5077,
        session_id: SID.into(),
        cwd: Some("/tmp/kx/proj".into()),
        event: "SessionStart".into(),
        source: None,
        ended: false,
    };
    write(&park_home, &rec);
    let id = identify(&a, 5077, &p);
    assert_eq!(
        (id.session_id.as_deref(), id.source),
        (Some(SID), "hook"),
        "{id:?}"
    );
    assert_eq!(id.transcript.as_deref(), Some(wire.as_path()));
    assert_eq!(id.cwd.as_deref(), Some("/tmp/kx/proj"));
    assert_eq!(id.reason, None);
    assert!(
        identify(&a, 5078, &p).session_id.is_none(),
        "a recycled pid's record"
    );
    rec.ended = true;
    write(&park_home, &rec);
    assert!(
        identify(&a, 5077, &p).session_id.is_none(),
        "an ended session"
    );
    rec.ended = false;
    for bad in [
        "$(rm -rf ~)",
        "71828f23-5b64-4e12-a5ad-e8e418559405",
        "ses_0123456789abcdefghij",
    ] {
        rec.session_id = bad.into();
        write(&park_home, &rec);
        assert!(identify(&a, 5077, &p).session_id.is_none(), "{bad}");
    }
    // /new: the record names the new session, which has no transcript yet.
    rec.session_id = NEW.into();
    write(&park_home, &rec);
    let id = identify(&a, 5077, &p);
    assert_eq!(id.session_id.as_deref(), Some(NEW));
    assert!(id.reason.unwrap().contains("no conversation yet"));

    // Installed but no record yet: the reason says so, not "install it".
    std::fs::remove_dir_all(integrate::records_dir(&park_home)).unwrap();
    let exe = home.join("park");
    std::fs::write(&exe, "").unwrap();
    crate::agents::Integration::install(&integrate::Hook, &a.env, &exe).unwrap();
    let id = identify(&a, 5077, &p);
    assert!(id.session_id.is_none());
    assert!(
        id.reason
            .as_deref()
            .unwrap()
            .contains("no session recorded"),
        "{id:?}"
    );
}

/// The verifier sees park's own resume only through the hook's record of the started process.
#[test]
fn the_verifier_needs_the_started_process_record_of_the_same_session() {
    let d = tempfile::tempdir().unwrap();
    let home = d.path().to_path_buf();
    let park_home = home.join(".local/state/park");
    let p = One { home: home.clone() };
    let mut e = crate::model::entry::Entry::sample(Agent::Kimi, SID);
    e.config_dir = Some(home.join(".kimi-code").to_string_lossy().into());
    assert!(!Kimi.runs_session(&e, 77, 5077, &p), "no record yet");
    let rec = integrate::Record {
        pid: 77,
        start_ticks: 5077,
        session_id: SID.into(),
        cwd: None,
        event: "SessionStart".into(),
        source: None,
        ended: false,
    };
    write(&park_home, &rec);
    assert!(Kimi.runs_session(&e, 77, 5077, &p));
    assert!(!Kimi.runs_session(&e, 77, 5099, &p), "another process");
    write(
        &park_home,
        &integrate::Record {
            session_id: NEW.into(),
            ..rec
        },
    );
    assert!(!Kimi.runs_session(&e, 77, 5077, &p), "another session");
}

/// `kimi <text>` is an unknown command: a session whose transcript is gone is never "resumed" as
/// a fresh Kimi primed with a first prompt (it would not start); the unpark refuses instead.
#[test]
fn no_fresh_start_primed_with_a_prompt() {
    let mut e = crate::model::entry::Entry::sample(Agent::Kimi, SID);
    e.program = "kimi".into();
    assert_eq!(crate::agents::resume_argv(&e), v(&["kimi", "-S", SID]));
    e.fresh_from = Some("/p/archive/x/transcript.md".into());
    assert!(crate::agents::resume_argv(&e).is_empty());
    assert!(!SPEC.first_prompt);
}
