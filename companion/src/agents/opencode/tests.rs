use super::*;
use crate::adapters::platform::{Mem, ProcInfo};
use crate::agents::AgentKind;

const A: &str = "ses_db8655eccffeyjsoC5PJgY041b";
const B: &str = "ses_db864d926ffeK5fzeMRFCezKGJ";

fn v(s: &[&str]) -> Vec<String> {
    s.iter().map(|x| x.to_string()).collect()
}

#[test]
fn the_tui_is_opencode_and_its_subcommands_are_not() {
    let k = &SPEC;
    let runs = |args: &[&str]| k.runs("opencode", "/x/opencode", &v(args));
    assert!(runs(&[]));
    assert!(runs(&["-s", A]));
    assert!(runs(&["--model", "mock/m", "/w/proj"]));
    assert!(runs(&["-m", "run"]), "a flag's value is not a subcommand");
    for sub in [
        "run", "serve", "export", "import", "session", "db", "web", "acp",
    ] {
        assert!(!runs(&[sub]), "{sub}");
    }
    assert!(!runs(&["--help"]));
    assert!(!runs(&["-v"]));
    assert!(!k.runs("vim", "/usr/bin/vim", &v(&["opencode"])));
}

#[test]
fn flags_keep_the_whitelist_and_drop_the_session_fork_prompt_project_and_hostile_values() {
    let (keep, dropped) = SPEC.flags(&v(&[
        "-s",
        A,
        "--fork",
        "--model",
        "mock/mock-model",
        "--auto",
        "--prompt",
        "do it",
        "--agent",
        "x$(touch PWNED)",
        "/w/proj",
        "--evil",
    ]));
    assert_eq!(
        keep,
        v(&[
            "--model",
            "mock/mock-model",
            "--auto",
            "--agent",
            "x$(touch PWNED)"
        ])
    );
    assert_eq!(dropped, v(&["--fork", "--evil"]));
    assert_eq!(
        SPEC.resume_argv("opencode", A, &keep),
        v(&[
            "opencode",
            "-s",
            A,
            "--model",
            "mock/mock-model",
            "--auto",
            "--agent",
            "x$(touch PWNED)"
        ])
    );
    assert_eq!(argv_session(&v(&["--session", A])).as_deref(), Some(A));
    assert_eq!(
        argv_session(&v(&[&format!("--session={A}")])).as_deref(),
        Some(A)
    );
    assert_eq!(argv_session(&v(&["-s", "../../etc"])), None);
    assert_eq!(argv_session(&v(&["-s", "ses_x; rm -rf /"])), None);
}

#[test]
fn ids_keep_their_case_and_nothing_else_passes() {
    assert_eq!(valid_id(A).as_deref(), Some(A));
    assert_eq!(
        crate::agents::transcript::valid_session_id(B).as_deref(),
        Some(B)
    );
    for bad in [
        "ses_short",
        "ses_db8655eccffeyjsoC5PJgY04/b",
        "ses_-db8655eccffeyjsoC5PJgY041b",
        "-s",
    ] {
        assert_eq!(valid_id(bad), None, "{bad}");
    }
}

#[test]
fn titles_are_matched_as_opencode_cuts_them() {
    let long = "Hello from the mock OpenAI server (canned reply #1). PARKTEST-OK";
    assert!(title_shows("Hello from the mock OpenAI server (ca…", long));
    assert!(!title_shows(
        "Hello from the mock OpenAI server (ca…",
        "Hello from the mock"
    ));
    assert!(title_shows("Mock fix the tests", "Mock fix the tests"));
    assert!(!title_shows("Mock fix the", "Mock fix the tests"));
}

#[test]
fn the_data_dir_follows_xdg_and_the_database_opencode_db() {
    let env = |kv: &[(&str, &str)]| -> Vec<(String, String)> {
        kv.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    assert_eq!(
        SPEC.config.dir(&env(&[("HOME", "/h")])),
        Some(PathBuf::from("/h/.local/share/opencode"))
    );
    assert_eq!(
        SPEC.config
            .dir(&env(&[("HOME", "/h"), ("XDG_DATA_HOME", "/x")])),
        Some(PathBuf::from("/x/opencode"))
    );
    assert_eq!(
        OPENCODE_FLAVOR.config_home(&env(&[("HOME", "/h")])),
        Some(PathBuf::from("/h/.config/opencode"))
    );
    assert_eq!(
        OPENCODE_FLAVOR.db_path(&env(&[("HOME", "/h"), ("OPENCODE_DB", "/d/o.db")])),
        Some(PathBuf::from("/d/o.db"))
    );
    // The variable that brings a resume back to the data dir is its parent.
    assert_eq!(
        SPEC.config.var_value(Path::new("/x/opencode")),
        Some(PathBuf::from("/x"))
    );
}

/// One OpenCode process, pid 70, started `ago` seconds before now.
struct One {
    home: PathBuf,
    argv: Vec<String>,
    ago: u64,
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
            comm: "opencode".into(),
        }])
    }
    fn process(&self, pid: u32) -> Option<ProcInfo> {
        self.processes().ok()?.into_iter().find(|p| p.pid == pid)
    }
    fn environ(&self, _pid: u32) -> Option<Vec<(String, String)>> {
        Some(vec![("HOME".into(), self.home.to_string_lossy().into())])
    }
    fn cwd(&self, _pid: u32) -> Option<PathBuf> {
        Some(PathBuf::from("/w/p"))
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
        Some(self.ago)
    }
}

fn proc_of(p: &One) -> AgentProc {
    AgentProc {
        agent: super::super::Agent::Opencode,
        root: 70,
        main: 70,
        prog_index: 0,
        argv: p.argv.clone(),
        env: p.environ(70).unwrap(),
        background: false,
    }
}

fn record(park_home: &Path, r: &integrate::Record) {
    let dir = integrate::records_dir(park_home, &OPENCODE_FLAVOR);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join(format!("{}.json", r.pid)),
        serde_json::to_vec(r).unwrap(),
    )
    .unwrap();
}

/// The plugin's record of this very process, or argv while no session began since the start,
/// and in both cases a pane title showing that session and no other.
#[test]
fn identity_needs_the_record_or_a_fresh_argv_and_a_title_that_agrees() {
    let d = tempfile::tempdir().unwrap();
    let home = d.path().to_path_buf();
    let park_home = home.join(".local/state/park");
    let data = home.join(".local/share/opencode");
    std::fs::create_dir_all(&data).unwrap();
    let c = db::tests::fixture(&data.join("opencode.db"));
    let now = jiff::Timestamp::now().as_millisecond();
    db::tests::add_session(
        &c,
        A,
        None,
        "/w/p",
        "Mock fix the parser please",
        now - 3_600_000,
    );
    db::tests::add_session(
        &c,
        "ses_sub0000000000000000000000",
        Some(A),
        "/w/p",
        "Sub",
        now - 60_000,
    );
    let mut p = One {
        home: home.clone(),
        argv: v(&["opencode"]),
        ago: 600,
    };
    let t_a = "OC | Mock fix the parser please";

    let id = identify(&OPENCODE_FLAVOR, &proc_of(&p), t_a, &p);
    assert!(id.session_id.is_none());
    assert!(id.reason.unwrap().contains("park integrate opencode"));

    // The record of this process (start ticks agree) binds it, with its status.
    let mut rec = integrate::Record {
        pid: 70,
        start_ticks: 5070,
        session_id: Some(A.into()),
        status: "idle".into(),
        event: "session.status".into(),
    };
    record(&park_home, &rec);
    let id = identify(&OPENCODE_FLAVOR, &proc_of(&p), t_a, &p);
    assert_eq!(
        (id.session_id.as_deref(), id.source),
        (Some(A), "plugin"),
        "{id:?}"
    );
    assert_eq!(id.status_file.as_deref(), Some("idle"));
    assert_eq!(id.cwd.as_deref(), Some("/w/p"));
    assert_eq!(
        id.transcript.as_deref(),
        Some(data.join("opencode.db").as_path())
    );

    // The pane must show that session: the home screen, another title, no title: refused.
    for (title, why) in [
        ("OpenCode", "home screen"),
        ("OC | Mock something else", "not"),
        ("vm", "does not name a session"),
    ] {
        let id = identify(&OPENCODE_FLAVOR, &proc_of(&p), title, &p);
        assert!(id.session_id.is_none(), "{title}");
        assert!(
            id.reason.as_deref().unwrap().contains(why),
            "{title}: {id:?}"
        );
    }
    // A recycled pid's record says nothing.
    rec.start_ticks = 1;
    record(&park_home, &rec);
    assert!(identify(&OPENCODE_FLAVOR, &proc_of(&p), t_a, &p)
        .session_id
        .is_none());
    rec.start_ticks = 5070;
    // A record naming a session the database does not hold (yet).
    rec.session_id = Some(B.into());
    record(&park_home, &rec);
    assert!(identify(&OPENCODE_FLAVOR, &proc_of(&p), t_a, &p)
        .reason
        .unwrap()
        .contains("not in"));
    std::fs::remove_dir_all(integrate::records_dir(&park_home, &OPENCODE_FLAVOR)).unwrap();

    // argv: taken while no other main session began in the directory since the start.
    p.argv = v(&["opencode", "-s", A]);
    let id = identify(&OPENCODE_FLAVOR, &proc_of(&p), t_a, &p);
    assert_eq!(
        (id.session_id.as_deref(), id.source),
        (Some(A), "argv"),
        "{id:?}"
    );
    assert_eq!(id.status_file, None);
    db::tests::add_session(&c, B, None, "/w/p", "Mock another one", now - 60_000);
    let id = identify(&OPENCODE_FLAVOR, &proc_of(&p), t_a, &p);
    assert!(
        id.reason.unwrap().contains("another session began"),
        "a /new and a prompt"
    );
    // Begun before this process started: not this process's.
    p.ago = 30;
    assert_eq!(
        identify(&OPENCODE_FLAVOR, &proc_of(&p), t_a, &p)
            .session_id
            .as_deref(),
        Some(A)
    );

    // Two sessions that show the same title cannot be told apart by it.
    db::tests::add_session(
        &c,
        "ses_twin000000000000000000000",
        None,
        "/w/q",
        "Mock fix the parser please",
        now - 7_200_000,
    );
    let id = identify(&OPENCODE_FLAVOR, &proc_of(&p), t_a, &p);
    assert!(
        id.reason
            .as_deref()
            .unwrap()
            .contains("two OpenCode sessions"),
        "{id:?}"
    );
}

#[test]
fn a_resumed_process_runs_the_session_its_argv_or_record_names() {
    let d = tempfile::tempdir().unwrap();
    let p = One {
        home: d.path().to_path_buf(),
        argv: v(&["opencode", "-s", A]),
        ago: 5,
    };
    let mut e = crate::model::entry::Entry::sample(super::super::Agent::Opencode, A);
    assert!(OPENCODE.runs_session(&e, 70, 5070, &p));
    e.session_id = B.into();
    assert!(!OPENCODE.runs_session(&e, 70, 5070, &p));
}
