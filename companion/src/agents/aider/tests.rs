use super::*;
use crate::adapters::platform::{Mem, ProcInfo};
use crate::agents::AgentKind;

fn v(s: &[&str]) -> Vec<String> {
    s.iter().map(|x| x.to_string()).collect()
}

const BIN: &str = "/venv/bin/aider";

/// Aider processes (pid → argv tail, cwd), all started `age` seconds ago.
struct World {
    procs: Vec<(u32, Vec<String>, PathBuf)>,
    home: PathBuf,
    age: u64,
}

impl World {
    fn argv(tail: &[String]) -> Vec<String> {
        let mut a = v(&["/venv/bin/python3", BIN]);
        a.extend(tail.iter().cloned());
        a
    }
    fn proc_of(&self, pid: u32) -> AgentProc {
        let (_, tail, _) = self.procs.iter().find(|p| p.0 == pid).unwrap();
        AgentProc {
            agent: Agent::Aider,
            root: pid,
            main: pid,
            prog_index: 1,
            argv: Self::argv(tail),
            env: self.environ(pid).unwrap(),
            background: false,
        }
    }
}

impl Platform for World {
    fn processes(&self) -> std::io::Result<Vec<ProcInfo>> {
        Ok(self
            .procs
            .iter()
            .map(|(pid, tail, _)| ProcInfo {
                pid: *pid,
                ppid: 1,
                pgid: *pid,
                sid: *pid,
                tpgid: -1,
                start_ticks: 500,
                state: 'S',
                cpu_ticks: 0,
                rss_bytes: 1,
                argv: Self::argv(tail),
                comm: "python3".into(),
            })
            .collect())
    }
    fn process(&self, pid: u32) -> Option<ProcInfo> {
        self.processes().ok()?.into_iter().find(|p| p.pid == pid)
    }
    fn environ(&self, _pid: u32) -> Option<Vec<(String, String)>> {
        Some(vec![
            ("HOME".into(), self.home.to_string_lossy().into()),
            ("OPENAI_API_KEY".into(), "dummy".into()),
            ("TZ".into(), "UTC".into()),
        ])
    }
    fn cwd(&self, pid: u32) -> Option<PathBuf> {
        self.procs.iter().find(|p| p.0 == pid).map(|p| p.2.clone())
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
        Some(self.age)
    }
}

/// aider's start header for `tail`, written `ago` seconds ago (UTC, as `TZ=UTC` makes it).
fn header(tail: &[&str], ago: i64) -> String {
    let at = jiff::Timestamp::now()
        .checked_sub(jiff::SignedDuration::from_secs(ago))
        .unwrap()
        .to_zoned(jiff::tz::TimeZone::UTC)
        .strftime("%Y-%m-%d %H:%M:%S")
        .to_string();
    let mut line = vec![BIN];
    line.extend_from_slice(tail);
    format!(
        "\n# aider chat started at {at}\n\n> {}  \n> Aider v0.86.2  \n",
        line.join(" ").replace("dummy", "...ummy")
    )
}

/// A repo `r` (with `.git`) and an empty HOME under a temp dir.
fn repo() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let r = d.path().join("r");
    std::fs::create_dir_all(r.join(".git")).unwrap();
    std::fs::create_dir_all(r.join("sub")).unwrap();
    let home = d.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    (d, r, home)
}

#[test]
fn the_history_file_is_the_identity_argv_first_then_the_repo_default() {
    let (_d, r, home) = repo();
    std::fs::write(
        r.join(DEFAULT_HISTORY),
        header(&[], 5) + "#### hi  \n\nhello\n",
    )
    .unwrap();
    let w = World {
        procs: vec![(10, vec![], r.join("sub"))],
        home: home.clone(),
        age: 6,
    };
    let id = identify(&w.proc_of(10), 500, &w);
    let at = r.join(DEFAULT_HISTORY);
    assert_eq!(id.reason, None, "{id:?}");
    assert_eq!(
        id.transcript.as_deref(),
        Some(at.as_path()),
        "the git root's"
    );
    assert_eq!(id.session_id.as_deref(), Some(id_of(&at).as_str()));
    assert_eq!(id.source, "history-file");
    assert!(crate::agents::transcript::valid_session_id(&id_of(&at)).is_some());

    // `--chat-history-file` relative to the cwd wins.
    let tail = ["--chat-history-file", "../mine.md"];
    std::fs::write(r.join("mine.md"), header(&tail, 5)).unwrap();
    let w = World {
        procs: vec![(11, v(&tail), r.join("sub"))],
        home,
        age: 6,
    };
    let id = identify(&w.proc_of(11), 500, &w);
    assert_eq!(id.reason, None, "{id:?}");
    assert_eq!(id.transcript, Some(r.join("mine.md")));
    assert_eq!(id.source, "argv");
}

/// Two aiders writing one history file: neither is targetable, and the reason names the way
/// out. One with its own file beside them is.
#[test]
fn two_aiders_on_one_history_are_untargetable() {
    let (_d, r, home) = repo();
    let own = ["--chat-history-file", "own.md"];
    // One start header for both (each alone would match it): only the rule tells them apart.
    std::fs::write(r.join(DEFAULT_HISTORY), header(&[], 5)).unwrap();
    std::fs::write(r.join("own.md"), header(&own, 5)).unwrap();
    let w = World {
        procs: vec![
            (10, vec![], r.clone()),
            (11, vec![], r.join("sub")),
            (12, v(&own), r.clone()),
        ],
        home,
        age: 6,
    };
    for pid in [10, 11] {
        let id = identify(&w.proc_of(pid), 500, &w);
        assert!(id.session_id.is_none(), "{pid}: {id:?}");
        assert!(
            id.reason
                .as_deref()
                .unwrap()
                .contains("--chat-history-file"),
            "{id:?}"
        );
    }
    let id = identify(&w.proc_of(12), 500, &w);
    assert_eq!(id.reason, None, "its own file: {id:?}");
}

/// An aider in the same repo whose history file cannot be told (set in a config file park does
/// not read) could be writing this one.
#[test]
fn a_history_set_outside_argv_is_untargetable_and_blocks_its_repo() {
    let (_d, r, home) = repo();
    std::fs::write(r.join(DEFAULT_HISTORY), header(&[], 5)).unwrap();
    std::fs::write(r.join(".aider.conf.yml"), "chat-history-file: x.md\n").unwrap();
    let w = World {
        procs: vec![(10, vec![], r.clone())],
        home: home.clone(),
        age: 6,
    };
    let id = identify(&w.proc_of(10), 500, &w);
    assert!(id.session_id.is_none(), "{id:?}");
    assert!(id.reason.as_deref().unwrap().contains(".aider.conf.yml"));

    std::fs::remove_file(r.join(".aider.conf.yml")).unwrap();
    let own = ["--chat-history-file", "own.md"];
    std::fs::write(r.join("own.md"), header(&own, 5)).unwrap();
    let w = World {
        procs: vec![(10, v(&own), r.clone()), (11, vec![], r.clone())],
        home,
        age: 6,
    };
    assert_eq!(identify(&w.proc_of(10), 500, &w).reason, None);
    // The other one's history is named by a file park does not read: it could be own.md.
    std::fs::write(r.join(".env"), "AIDER_CHAT_HISTORY_FILE=own.md\n").unwrap();
    let id = identify(&w.proc_of(10), 500, &w);
    assert!(id.session_id.is_none(), "{id:?}");
}

/// The file must hold this process's own start (its command line, its start time) and no start
/// after it.
#[test]
fn the_history_must_hold_this_process_start_and_nothing_after_it() {
    let (_d, r, home) = repo();
    let tail = [
        "--chat-history-file",
        "h.md",
        "--model",
        "openai/mock-model",
    ];
    let w = World {
        procs: vec![(10, v(&tail), r.clone())],
        home,
        age: 30,
    };
    let write = |s: String| std::fs::write(r.join("h.md"), s).unwrap();
    // No file yet / no header of this argv / a header from before this process started.
    assert!(identify(&w.proc_of(10), 500, &w).session_id.is_none());
    write(header(&["--chat-history-file", "h.md"], 29));
    assert!(identify(&w.proc_of(10), 500, &w).session_id.is_none());
    write(header(&tail, 3600));
    assert!(identify(&w.proc_of(10), 500, &w).session_id.is_none());
    write(header(&tail, 3600) + &header(&tail, 28) + "#### hi  \n");
    assert_eq!(identify(&w.proc_of(10), 500, &w).reason, None);
    // Another aider started on it since (and is gone now): its lines are mixed with ours.
    write(header(&tail, 28) + &header(&[], 10));
    let id = identify(&w.proc_of(10), 500, &w);
    assert!(
        id.reason
            .as_deref()
            .unwrap()
            .contains("another aider started"),
        "{id:?}"
    );
}

#[test]
fn resume_replays_the_flags_the_history_file_and_the_files_in_the_chat() {
    let (_d, r, home) = repo();
    std::fs::write(r.join("a.py"), "").unwrap();
    std::fs::write(r.join("b.py"), "").unwrap();
    let tail = [
        "--model",
        "openai/mock-model",
        "a.py",
        "--chat-history-file",
        "h.md",
        "--openai-api-key",
        "sk-secret",
        "--restore-chat-history",
    ];
    let mut body = header(&tail, 5).replace("sk-secret", "...cret");
    body.push_str("> Added a.py to the chat.  \n\n#### /add b.py  \n> Added b.py to the chat  \n");
    body.push_str(
        "#### /read-only a.py  \n> Moved a.py from editable to read-only files in the chat  \n",
    );
    body.push_str("#### /add gone.py  \n> Added gone.py to the chat  \n");
    std::fs::write(r.join("h.md"), body).unwrap();
    let w = World {
        procs: vec![(10, v(&tail), r.clone())],
        home,
        age: 6,
    };
    let a = w.proc_of(10);
    let (flags, dropped) = Aider.launch_flags(&a, 500, &w);
    let h = r.join("h.md").to_string_lossy().into_owned();
    let f = |p: &str| r.join(p).to_string_lossy().into_owned();
    assert_eq!(
        flags,
        vec![
            "--model".to_string(),
            "openai/mock-model".into(),
            "--file".into(),
            f("b.py"),
            "--read".into(),
            f("a.py"),
            HISTORY_FLAG.into(),
            h.clone()
        ]
    );
    assert!(
        dropped.iter().any(|d| d == "--openai-api-key"),
        "{dropped:?}"
    );
    assert!(
        dropped.iter().any(|d| d.starts_with("gone.py")),
        "{dropped:?}"
    );
    let id = id_of(&r.join("h.md"));
    let argv = SPEC.resume_argv(BIN, &id, &flags);
    assert_eq!(argv.last().map(String::as_str), Some(RESTORE_FLAG));
    assert_eq!(argv[1..argv.len() - 1], flags[..]);
    // Flags that name another history file (a ledger edited by hand) resume nothing.
    assert!(SPEC
        .resume_argv(BIN, &id_of(Path::new("/x.md")), &flags)
        .is_empty());
    let mut other = flags.clone();
    *other.last_mut().unwrap() = "/elsewhere.md".into();
    assert!(SPEC.resume_argv(BIN, &id, &other).is_empty());
    // The flags pass the whitelist again unchanged (what resume_argv does with a ledger's).
    assert_eq!(SPEC.flags(&flags).0, flags);
    // A fresh stand-in gets the archived conversation as a read-only file, never a positional
    // word (aider reads those as files to edit).
    let fresh = SPEC.fresh_argv(BIN, &flags, "Continue an earlier".into(), "/a/t.md");
    assert_eq!(fresh[fresh.len() - 2..], v(&["--read", "/a/t.md"]));
}

#[test]
fn interactive_and_whitelist() {
    assert!(interactive(&v(&["--model", "x", "a.py"])));
    assert!(!interactive(&v(&["-m", "do it"])));
    assert!(!interactive(&v(&["--message=do it"])));
    assert!(!interactive(&v(&["--version"])));
    assert_eq!(
        crate::agents::classify(&v(&["/v/bin/python3", "/v/bin/aider", "--model", "x"])),
        Some((Agent::Aider, 1))
    );
    assert_eq!(
        crate::agents::classify(&v(&["python3", "-m", "aider", "--model", "x"])),
        Some((Agent::Aider, 2))
    );
    let (k, d) = SPEC.flags(&v(&[
        "--model",
        "x$(touch PWNED)",
        "--edit-format",
        "diff",
        "--evil",
        "--restore-chat-history",
    ]));
    assert_eq!(
        k,
        v(&["--model", "x$(touch PWNED)", "--edit-format", "diff"])
    );
    assert_eq!(d, v(&["--evil"]));
}

#[test]
fn logged_argv_scrubs_keys_as_aider_does() {
    let env = vec![("OPENAI_API_KEY".to_string(), "sk-abcdef".to_string())];
    assert_eq!(
        logged_argv(&v(&[BIN, "--x", "sk-abcdef"]), &env),
        format!("{BIN} --x ...cdef")
    );
}
