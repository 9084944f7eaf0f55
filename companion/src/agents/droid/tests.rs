use super::*;
use crate::adapters::platform::{Mem, ProcInfo};
use crate::agents::{AgentKind, Integration};

const SID: &str = "c30257e4-8604-4dae-bc9c-5ec27547822d";
const NEW: &str = "8714aa5e-1646-4558-8b79-e73667d463fd";
const ENGINE: &[&str] = &[
    "/p/bin/droid",
    "exec",
    "--input-format",
    "stream-jsonrpc",
    "--output-format",
    "stream-jsonrpc",
];

fn v(s: &[&str]) -> Vec<String> {
    s.iter().map(|x| x.to_string()).collect()
}

#[test]
fn the_tui_is_droid_and_its_engine_and_subcommands_are_not() {
    assert!(interactive(&v(&[])));
    assert!(interactive(&v(&["--resume", SID, "--auto", "high"])));
    assert!(interactive(&v(&["resume", SID])));
    assert!(interactive(&v(&["review app.tsx"])), "a first prompt");
    assert!(!interactive(&v(&ENGINE[1..])));
    assert!(!interactive(&v(&["exec", "hi"])));
    assert!(!interactive(&v(&["mcp", "list"])));
    assert!(!interactive(&v(&["--version"])));
    assert_eq!(
        crate::agents::classify(&v(&["droid", "--auto", "low"])),
        Some((Agent::Droid, 0))
    );
    assert_eq!(crate::agents::classify(&v(ENGINE)), None);
}

#[test]
fn flags_keep_the_whitelist_and_drop_sessions_prompts_and_hostile_values() {
    let (k, d) = SPEC.flags(&v(&[
        "--resume",
        SID,
        "--auto",
        "medium",
        "--append-system-prompt",
        "Be terse",
        "--use-spec",
        "--cwd",
        "/elsewhere",
        "--settings",
        "x\n$(id)",
        "--evil",
        "a positional prompt",
    ]));
    assert_eq!(
        k,
        v(&[
            "--auto",
            "medium",
            "--append-system-prompt",
            "Be terse",
            "--use-spec"
        ])
    );
    assert!(d.contains(&"--evil".to_string()), "{d:?}");
    assert!(d.contains(&"--settings".to_string()), "{d:?}");
    assert_eq!(
        SPEC.resume_argv("droid", SID, &k),
        v(&[
            "droid",
            "--resume",
            SID,
            "--auto",
            "medium",
            "--append-system-prompt",
            "Be terse",
            "--use-spec"
        ])
    );
    // `resume <id>`, a bare `--resume` (the picker), `--last`: none of them is replayed, and
    // the flag after a bare `--resume` is still read as a flag.
    let (k, _) = SPEC.flags(&v(&["resume", SID, "--auto", "low"]));
    assert_eq!(k, v(&["--auto", "low"]));
    let (k, _) = SPEC.flags(&v(&["--resume", "--last", "--auto", "high"]));
    assert_eq!(k, v(&["--auto", "high"]));
    let (k, _) = SPEC.flags(&v(&["-r", "--use-spec"]));
    assert_eq!(k, v(&["--use-spec"]));
    // A value that looks like a flag is the value (dropped with its flag when not plain).
    let (k, d) = SPEC.flags(&v(&["--auto", "--resume"]));
    assert!(k.is_empty(), "{k:?}");
    assert_eq!(d, v(&["--auto"]));
    let (k, _) = SPEC.flags(&v(&["--append-system-prompt", "--last", "--use-spec"]));
    assert_eq!(k, v(&["--use-spec"]));
}

/// 70 a shell in the pane → 71 the TUI `droid` → 72 its engine child → 73 the `sh -c` a hook
/// runs in → the test process (the hook); 80 a `droid exec` a tool of the TUI ran, under a shell
/// 79, whose hook shell is 81; 90 a `droid exec` the TUI ran itself, whose hook shell is 91.
struct Tree {
    home: PathBuf,
    me_under: u32,
}
impl Platform for Tree {
    fn processes(&self) -> std::io::Result<Vec<ProcInfo>> {
        let p = |pid: u32, ppid: u32, argv: &[&str]| ProcInfo {
            pid,
            ppid,
            pgid: 71,
            sid: 1,
            tpgid: -1,
            start_ticks: 5000 + u64::from(pid),
            state: 'S',
            cpu_ticks: 0,
            rss_bytes: 4096,
            argv: v(argv),
            comm: "droid".into(),
        };
        let mut engine = vec!["/p/bin/droid"];
        engine.extend(&ENGINE[1..]);
        Ok(vec![
            p(70, 1, &["bash"]),
            p(71, 70, &["droid", "--auto", "low"]),
            p(72, 71, &engine),
            p(73, 72, &["sh", "-c", "park hook droid"]),
            p(79, 72, &["sh", "-c", "droid exec hi"]),
            p(80, 79, &["/p/bin/droid", "exec", "hi"]),
            p(81, 80, &["sh", "-c", "park hook droid"]),
            p(
                90,
                71,
                &[
                    "/p/bin/droid",
                    "exec",
                    "--output-format",
                    "json",
                    "a subtask",
                ],
            ),
            p(91, 90, &["sh", "-c", "park hook droid"]),
            p(
                std::process::id(),
                self.me_under,
                &["park", "hook", "droid"],
            ),
        ])
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
        Some(60)
    }
}

fn input(event: &str, sid: &str) -> Vec<u8> {
    format!(
        r#"{{"session_id":"{sid}","transcript_path":"/h/.factory/sessions/-w-p/{sid}.jsonl","cwd":"/w/p","hook_event_name":"{event}","source":"startup"}}"#
    )
    .into_bytes()
}

/// The hook's record is the TUI's, whichever of its processes ran the hook (the TUI itself, its
/// engine child); a `droid exec` that a tool ran records nothing for the TUI above it; the late
/// `SessionEnd` of the session before a `/new` leaves the new one's record alone, the end of the
/// recorded one marks it ended.
#[test]
fn the_hook_records_the_tuis_session_and_follows_new() {
    let d = tempfile::tempdir().unwrap();
    let home = d.path().to_path_buf();
    let park_home = home.join("park");
    let mut p = Tree {
        home: home.clone(),
        me_under: 73,
    };
    integrate::Hook
        .record(&input("SessionStart", SID), &park_home, &p)
        .unwrap();
    let r = integrate::read_record(&park_home, 71).expect("the TUI's record");
    assert_eq!(
        (r.pid, r.start_ticks, r.session_id.as_str()),
        (71, 5071, SID)
    );
    assert!(!r.ended);
    assert!(integrate::read_record(&park_home, 72).is_none());

    // `/new`: the new engine records the new session; the old engine's late end of the old one
    // changes nothing.
    integrate::Hook
        .record(&input("SessionStart", NEW), &park_home, &p)
        .unwrap();
    integrate::Hook
        .record(&input("SessionEnd", SID), &park_home, &p)
        .unwrap();
    let r = integrate::read_record(&park_home, 71).unwrap();
    assert_eq!((r.session_id.as_str(), r.ended), (NEW, false));
    // The TUI itself runs the end of the session it holds.
    p.me_under = 71;
    integrate::Hook
        .record(&input("SessionEnd", NEW), &park_home, &p)
        .unwrap();
    assert!(integrate::read_record(&park_home, 71).unwrap().ended);

    // A `droid exec` under a tool's shell: no TUI of its own, and never the one above it.
    p.me_under = 81;
    assert!(integrate::Hook
        .record(&input("SessionStart", SID), &park_home, &p)
        .is_err());
    assert!(integrate::read_record(&park_home, 71).unwrap().ended);
    assert!(integrate::read_record(&park_home, 80).is_none());
    assert!(integrate::tui_above(&p, 80).is_none());
    // A `droid exec` the TUI itself runs (not its engine) has a session of its own.
    p.me_under = 91;
    assert!(integrate::Hook
        .record(&input("SessionStart", NEW), &park_home, &p)
        .is_err());
    assert!(integrate::tui_above(&p, 90).is_none());
    assert!(integrate::read_record(&park_home, 71).unwrap().ended);
    assert_eq!(integrate::tui_above(&p, 73).map(|t| t.pid), Some(71));
}

/// The hook's record of this very process decides; a record of a recycled pid, an ended session
/// or a hostile id does not; without one the reason names the integration.
#[test]
fn identity_comes_from_the_hook_record_only() {
    let d = tempfile::tempdir().unwrap();
    let home = d.path().to_path_buf();
    let config = home.join(".factory");
    let park_home = home.join(".local/state/park");
    let p = Tree {
        home: home.clone(),
        me_under: 73,
    };
    let a = AgentProc {
        agent: Agent::Droid,
        root: 71,
        main: 71,
        prog_index: 0,
        argv: v(&["droid", "--resume", SID]),
        env: vec![("HOME".into(), home.to_string_lossy().into())],
        background: false,
    };
    let id = identify(&a, 5071, &p);
    assert!(id.session_id.is_none(), "argv alone never binds: {id:?}");
    assert!(id.reason.unwrap().contains("park integrate droid"));

    let real = transcript::path(&config, "/w/p", SID);
    std::fs::create_dir_all(real.parent().unwrap()).unwrap();
    std::fs::write(
        &real,
        format!("{{\"type\":\"session_start\",\"id\":\"{SID}\",\"cwd\":\"/w/p\"}}\n"),
    )
    .unwrap();
    let write = |r: &integrate::Record| {
        let dir = integrate::records_dir(&park_home);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join(format!("{}.json", r.pid)),
            serde_json::to_vec(r).unwrap(),
        )
        .unwrap();
    };
    let mut rec = integrate::Record {
        pid: 71,
        start_ticks: 5071,
        session_id: SID.into(),
        transcript_path: Some(real.to_string_lossy().into()),
        cwd: Some("/w/p".into()),
        event: "SessionStart".into(),
        ended: false,
    };
    write(&rec);
    let id = identify(&a, 5071, &p);
    assert_eq!((id.session_id.as_deref(), id.source), (Some(SID), "hook"));
    assert_eq!(id.transcript.as_deref(), Some(real.as_path()));
    assert_eq!(id.cwd.as_deref(), Some("/w/p"));
    assert_eq!(id.reason, None);
    assert!(
        identify(&a, 5072, &p).session_id.is_none(),
        "a recycled pid's record"
    );
    rec.ended = true;
    write(&rec);
    assert!(
        identify(&a, 5071, &p).session_id.is_none(),
        "an ended session"
    );
    rec.ended = false;
    rec.session_id = "$(rm -rf ~)".into();
    write(&rec);
    assert!(identify(&a, 5071, &p).session_id.is_none(), "a hostile id");

    // A session with no file yet is named but has nothing to resume.
    rec.session_id = NEW.into();
    write(&rec);
    let id = identify(&a, 5071, &p);
    assert_eq!(id.session_id.as_deref(), Some(NEW));
    assert!(id.reason.unwrap().contains("nothing to resume"));

    // The verifier: the resumed TUI runs the entry's session once its hook says so.
    let mut e = crate::model::entry::Entry::sample(Agent::Droid, NEW);
    e.config_dir = Some(config.to_string_lossy().into());
    assert!(Droid.runs_session(&e, 71, 5071, &p));
    assert!(!Droid.runs_session(&e, 71, 5099, &p), "another process");
    e.session_id = SID.into();
    assert!(!Droid.runs_session(&e, 71, 5071, &p));
    assert_eq!(
        Droid.expected_transcript(&e).as_deref(),
        Some(real.as_path())
    );
}
