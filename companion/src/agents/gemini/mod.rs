//! Google Gemini CLI (`@google/gemini-cli`, 0.61): a session is bound only from what the process
//! itself says, which Gemini does not say from outside: no per-process file, no open transcript
//! fd, no session variable in its environment (measured on 0.61.0). Two exact sources:
//!
//! * the opt-in integration ([`integrate`], `park integrate gemini`): a `SessionStart`/`SessionEnd`
//!   hook in Gemini's settings runs `park hook gemini`, which records the hook input's
//!   `session_id` and `transcript_path` for the Gemini process that ran it, under
//!   `$PARK_HOME/integrations/gemini/<pid>.json`, with that process's start time (a record of a
//!   recycled pid never matches). `/clear` ends one session and starts another: the record
//!   follows.
//! * argv `--resume <uuid>` (what park's own unpark starts), trusted only while no other session
//!   began in the project after this process started: a `/clear` in this process, or another
//!   Gemini in the same cwd, makes it stale or ambiguous, and then the row is untargetable.
//!
//! Never "the newest chat of the project" nor mtimes: a new Gemini process writes a summary into
//! other sessions' files. Without either source the row is untargetable and its reason names
//! `park integrate gemini`.
//!
//! The process chain is `node …/bin/gemini` → `node --max-old-space-size=… …/bin/gemini` (the
//! relaunched child, `GEMINI_CLI_NO_RELAUNCH=true`); the child runs the session. The parent
//! ignores SIGTERM and exits with its child, which the kill order (the session process first)
//! fits. Resume is `gemini --resume <uuid>` in the recorded cwd (resume is per project).
//!
//! Gemini's resume bug (gemini-cli #27368/#29198, 0.61.0): a resume writes an orphan stub chat
//! with the same 8-character suffix, and the next Gemini start in that project deletes both the
//! stub and the real chat. park archives every transcript it parks, restores a missing one before
//! an unpark, and removes exactly the orphan once the resumed agent is up ([`Gemini`]'s
//! `after_resume`).

pub mod files;
pub mod integrate;
pub mod screen;
pub mod transcript;

use super::release::Release;
use super::spec::{ConfigDir, Identify, Main, Resume, Spec, Whitelist};
use super::{Agent, AgentProc, Identity};
use crate::adapters::platform::proctree::{program_of, ProcTable};
use crate::adapters::platform::{env_get, Platform};
use crate::agents::transcript::valid_session_id;
use std::path::{Path, PathBuf};

const NON_INTERACTIVE: &[&str] = &[
    "-p",
    "--prompt",
    "-v",
    "--version",
    "-h",
    "--help",
    "--acp",
    "--experimental-acp",
    "-l",
    "--list-extensions",
    "--list-sessions",
    "--delete-session",
    "-o",
    "--output-format",
];
const SUBCOMMANDS: &[&str] = &[
    "mcp",
    "extensions",
    "extension",
    "skills",
    "skill",
    "hooks",
    "hook",
    "gemma",
];

pub const BOOL_FLAGS: &[&str] = &[
    "-y",
    "--yolo",
    "-s",
    "--sandbox",
    "--skip-trust",
    "--screen-reader",
];
pub const VALUED_FLAGS: &[&str] = &[
    "-m",
    "--model",
    "--approval-mode",
    "--policy",
    "--admin-policy",
    "--allowed-mcp-server-names",
    "--allowed-tools",
    "-e",
    "--extensions",
    "--include-directories",
];
/// Flags that carry the session or a first prompt (rebuilt from the id, never replayed).
const SESSION_FLAGS: &[&str] = &[
    "--resume",
    "-r",
    "--session-id",
    "--session-file",
    "-i",
    "--prompt-interactive",
    "-w",
    "--worktree",
];

pub fn interactive(args: &[String]) -> bool {
    super::spec::tui_argv(args, NON_INTERACTIVE, SUBCOMMANDS)
}

/// The session id argv names (`--resume <uuid>`, `--resume=<uuid>`, `--session-id <uuid>`);
/// `latest` or an index names none.
pub fn argv_session(args: &[String]) -> Option<String> {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let (name, inline) = match a.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v.to_string())),
            _ => (a.as_str(), None),
        };
        if matches!(name, "--resume" | "-r" | "--session-id") {
            let v = inline.or_else(|| it.next().cloned())?;
            return valid_session_id(&v);
        }
    }
    None
}

/// How long the verifier waits for the orphan stub a resume writes (see `after_resume`).
const ORPHAN_WAIT: std::time::Duration = std::time::Duration::from_secs(45);

pub(crate) const SETUP_HINT: &str =
    "run `park integrate gemini` (a SessionStart hook) and restart this Gemini, or start it with --resume <id>";

/// A session bound to a process: `(id, transcript the hook named, cwd the hook named, source)`.
type Bound = (String, Option<PathBuf>, Option<String>, &'static str);

/// The session of Gemini process `a` (see the module doc).
fn session_of(a: &AgentProc, main_start: u64) -> Result<Bound, String> {
    let home = crate::support::paths::park_home_from(|k| env_get(&a.env, k).map(str::to_string));
    if let Ok(home) = &home {
        match integrate::read_record(home, a.main) {
            Some(r) if r.start_ticks == main_start => {
                if r.ended {
                    return Err("Gemini: its session ended (exiting)".into());
                }
                let id = valid_session_id(&r.session_id)
                    .ok_or("Gemini: the hook recorded no valid session id")?;
                return Ok((id, r.transcript_path.map(PathBuf::from), r.cwd, "hook"));
            }
            // A record of an earlier process with this pid says nothing.
            _ => {}
        }
    }
    let args = &a.argv[a.prog_index + 1..];
    let Some(id) = argv_session(args) else {
        return Err(format!(
            "Gemini CLI keeps no per-process session record: {SETUP_HINT}"
        ));
    };
    Ok((id, None, None, "argv"))
}

pub fn identify(a: &AgentProc, main_start: u64, platform: &dyn Platform) -> Identity {
    let Some(config) = SPEC.config.dir(&a.env) else {
        return Identity::untargetable(
            "Gemini: neither GEMINI_CLI_HOME nor HOME in the process environment",
        );
    };
    let (id, recorded, cwd, source) = match session_of(a, main_start) {
        Ok(s) => s,
        Err(why) => return Identity::untargetable(why),
    };
    let cwd = cwd.or_else(|| {
        platform
            .cwd(a.main)
            .map(|p| p.to_string_lossy().into_owned())
    });
    let Some(cwd) = cwd else {
        return Identity::untargetable("Gemini: cwd unreadable");
    };
    // The hook's path is taken only inside this config's chats; otherwise the real chat of the id.
    // The real chat of the id (never a resume's orphan stub, which the hook may name), else the
    // hook's path when it is a chat of this id inside this config.
    let transcript = transcript::find(&config, &cwd, &id)
        .or_else(|| recorded.filter(|p| files::is_chat_of(&config, p, &id) && p.is_file()));
    if source == "argv" {
        // A session that began in this project after this process started: a /clear here, or
        // another Gemini in this cwd; argv cannot tell which is this process's.
        let started = platform
            .started_secs_ago(main_start)
            .map(|ago| jiff::Timestamp::now() - jiff::SignedDuration::from_secs(ago as i64));
        let newer = started.map(|t| files::sessions_started_after(&config, &cwd, t, &id));
        match newer {
            Some(n) if n.is_empty() => {}
            Some(_) => {
                return Identity::untargetable(format!(
                    "Gemini: another session began in this project after this process started (a /clear, or another Gemini here): argv no longer tells; {SETUP_HINT}"
                ))
            }
            None => return Identity::untargetable("Gemini: its start time is unreadable"),
        }
    }
    let reason = match &transcript {
        Some(t) if !files::has_header(t, &id) => Some(format!(
            "Gemini's chat {} has lost its first line (another Gemini started in this project deleted it while it was new): `gemini --resume` could not find it, so it stays running",
            t.display()
        )),
        Some(_) => None,
        None => Some("no conversation yet (transcript not found): nothing to resume".to_string()),
    };
    Identity {
        session_id: Some(id),
        source,
        transcript: transcript.or_else(|| Some(config.join("tmp"))),
        reason,
        status_file: None,
        cwd: Some(cwd),
        job: None,
        name: None,
    }
}

/// Gemini CLI behind the [`super::AgentKind`] dispatch.
pub struct Gemini;

/// Gemini CLI, as data.
pub static SPEC: Spec = Spec {
    agent: Agent::Gemini,
    name: "Gemini",
    // Its npm package and the versions park's e2e contract passed on (move with the pin in
    // `scripts/setup`).
    release: Release {
        name: "Gemini CLI",
        packages: &["@google/gemini-cli"],
        tested: ("0.61.0", "0.61.0"),
    },
    programs: &["gemini"],
    entry_script: None,
    interactive,
    // `gemini` relaunches itself: the session runs in the child.
    main: Main::Innermost,
    config: ConfigDir {
        // GEMINI_CLI_HOME names the directory that holds `.gemini`.
        under_var: Some(".gemini"),
        ..ConfigDir::var_or_home("GEMINI_CLI_HOME", ".gemini")
    },
    flags: Whitelist::of(BOOL_FLAGS, VALUED_FLAGS, SESSION_FLAGS),
    resume: Resume::Flag("--resume"),
    identify: Identify::Files(identify),
    transcripts: transcript::all,
    transcript_at: None,
    transcript_needs_cwd: true,
    parse_transcript: transcript::parse,
    read_transcript_file: Some(transcript::read_file),
    markdown: transcript::markdown,
    message_of: transcript::message_of,
    read_screen: screen::read,
    screen_escapes: false,
    limit_screen: None,
    generic_title: None,
    has_status_file: false,
    open_turn_is_busy: false,
    // Gemini's session retention is off unless configured; its resume bug deletes chats
    // regardless, which the archive and `after_resume` cover.
    cleanup: None,
    deletes_transcripts: true,
    prompt_history: None,
    // Set for hooks and tool subprocesses by 0.61.0.
    caller_session_vars: &["GEMINI_SESSION_ID"],
    // The resume writes its orphan stub while it starts: give it time before the cleanup.
    settle: std::time::Duration::from_secs(2),
    unidentified_blocks_unpark: true,
    shared_process: None,
    supervisor: None,
    integration: Some(&integrate::Hook),
    first_prompt: true,
    process_title: None,
};

impl super::AgentKind for Gemini {
    fn spec(&self) -> &'static Spec {
        &SPEC
    }
    fn expected_transcript(&self, e: &crate::model::entry::Entry) -> Option<PathBuf> {
        let config = Path::new(e.config_dir.as_deref()?);
        transcript::find(config, &e.cwd, &e.session_id).or_else(|| {
            e.transcript
                .as_deref()
                .map(PathBuf::from)
                .filter(|p| files::is_chat_of(config, p, &e.session_id))
        })
    }
    fn restore_path(
        &self,
        e: &crate::model::entry::Entry,
        config_dir: &Path,
        sid: &str,
    ) -> Result<PathBuf, String> {
        // Back where it was (its name carries its start minute), inside this config's chats.
        e.transcript
            .as_deref()
            .map(PathBuf::from)
            .filter(|p| files::is_chat_of(config_dir, p, sid))
            .or_else(|| files::new_path(config_dir, &e.cwd, sid))
            .ok_or_else(|| {
                format!(
                    "Gemini: no chats dir for {} under {}",
                    e.cwd,
                    config_dir.display()
                )
            })
    }
    fn runs_session(
        &self,
        e: &crate::model::entry::Entry,
        pid: u32,
        _start: u64,
        platform: &dyn Platform,
    ) -> bool {
        // `pid` is what the resume started (`gemini --resume <id>`, the parent); the session
        // runs in its relaunched child, told by the hook's record or by argv as in a scan.
        let table = ProcTable::new(platform.processes().unwrap_or_default());
        let main = SPEC.main_pid(&table, pid);
        if main == pid {
            return false; // not relaunched yet
        }
        let Some(p) = table.get(main) else {
            return false;
        };
        let Some((_, idx)) = program_of(&p.argv) else {
            return false;
        };
        let a = AgentProc {
            agent: super::Agent::Gemini,
            root: pid,
            main,
            prog_index: idx,
            argv: p.argv.clone(),
            env: platform.environ(main).unwrap_or_default(),
            background: false,
        };
        session_of(&a, p.start_ticks)
            .is_ok_and(|(id, ..)| e.fresh_from.is_some() || id.eq_ignore_ascii_case(&e.session_id))
    }
    fn after_resume(&self, e: &crate::model::entry::Entry) -> Option<String> {
        let config = PathBuf::from(e.config_dir.as_deref()?);
        // The resumed Gemini writes its stub once its UI is up (~9 s after the start on a quiet
        // machine; before its SessionStart hook), which can be after the verifier saw it run the
        // session from argv: wait for it (this is the detached verifier; a resume within the
        // chat's own minute writes no separate stub, hence the bound).
        let deadline = std::time::Instant::now() + ORPHAN_WAIT;
        loop {
            if let Some(real) = transcript::find(&config, &e.cwd, &e.session_id) {
                let mut gone = vec![];
                for o in transcript::orphans(&real, &e.session_id) {
                    if std::fs::remove_file(&o).is_ok() {
                        gone.push(o.display().to_string());
                    }
                }
                if !gone.is_empty() {
                    return Some(format!(
                        "removed Gemini's orphan resume stub {}",
                        gone.join(", ")
                    ));
                }
            }
            if std::time::Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(std::time::Duration::from_millis(250));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapters::platform::{Mem, ProcInfo};
    use crate::agents::AgentKind;

    const SID: &str = "c3c7b841-2547-4b1f-b7b3-d91104676d61";
    const NEW: &str = "e2d1bfd9-c74b-4887-9125-c7d370009cf6";

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn gemini_cli_home_names_the_parent_of_the_config_dir() {
        let env = vec![("GEMINI_CLI_HOME".to_string(), "/g".to_string())];
        let dir = SPEC.config.dir(&env).unwrap();
        assert_eq!(dir, PathBuf::from("/g/.gemini"));
        assert_eq!(SPEC.config.var_value(&dir), Some(PathBuf::from("/g")));
    }

    #[test]
    fn the_relaunched_cli_is_gemini_and_other_modes_are_not() {
        assert!(interactive(&v(&[])));
        assert!(interactive(&v(&["--resume", SID, "-y"])));
        assert!(
            interactive(&v(&["fix the bug"])),
            "a first prompt, interactive"
        );
        assert!(!interactive(&v(&["-p", "hi"])));
        assert!(!interactive(&v(&["--list-sessions"])));
        assert!(!interactive(&v(&["mcp", "list"])));
        assert!(!interactive(&v(&["hooks", "migrate"])));
        assert_eq!(argv_session(&v(&["--resume", SID])).as_deref(), Some(SID));
        assert_eq!(
            argv_session(&v(&[&format!("--resume={SID}")])).as_deref(),
            Some(SID)
        );
        assert_eq!(argv_session(&v(&["--resume", "latest"])), None);
        assert_eq!(argv_session(&v(&["-r", "3"])), None);
        assert_eq!(argv_session(&v(&["--session-id", "$(id)"])), None);
    }

    #[test]
    fn flags_keep_the_whitelist_and_drop_sessions_prompts_and_hostile_values() {
        let (k, d) = SPEC.flags(&v(&[
            "--resume",
            SID,
            "--approval-mode",
            "auto_edit",
            "-m",
            "gemini-2.5-pro",
            "-i",
            "first prompt",
            "--policy",
            "x\n$(id)",
            "--evil",
            "a positional prompt",
        ]));
        assert_eq!(
            k,
            v(&["--approval-mode", "auto_edit", "-m", "gemini-2.5-pro"])
        );
        assert!(d.contains(&"--evil".to_string()));
        assert_eq!(
            SPEC.resume_argv("gemini", SID, &k),
            v(&[
                "gemini",
                "--resume",
                SID,
                "--approval-mode",
                "auto_edit",
                "-m",
                "gemini-2.5-pro"
            ])
        );
    }

    /// 70 `node …/bin/gemini` → 77 the relaunched child; the chats as given.
    struct One {
        home: PathBuf,
        ago: u64,
    }
    impl Platform for One {
        fn processes(&self) -> std::io::Result<Vec<ProcInfo>> {
            let p = |pid: u32, ppid: u32, argv: &[&str]| ProcInfo {
                pid,
                ppid,
                pgid: 70,
                sid: 1,
                tpgid: -1,
                start_ticks: 5000 + u64::from(pid),
                state: 'S',
                cpu_ticks: 0,
                rss_bytes: 4096,
                argv: v(argv),
                comm: "node".into(),
            };
            Ok(vec![
                p(70, 1, &["node", "/p/.bin/gemini", "--resume", SID]),
                p(
                    77,
                    70,
                    &[
                        "node",
                        "--max-old-space-size=8000",
                        "/p/.bin/gemini",
                        "--resume",
                        SID,
                    ],
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
            Some(self.ago)
        }
    }

    fn chat(config: &Path, name: &str, sid: &str, start: &str, body: &str) -> PathBuf {
        let dir = config.join("tmp/p/chats");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(config.join("projects.json"), r#"{"projects":{"/w/p":"p"}}"#).unwrap();
        let path = dir.join(name);
        std::fs::write(
            &path,
            format!("{{\"sessionId\":\"{sid}\",\"projectHash\":\"x\",\"startTime\":\"{start}\",\"lastUpdated\":\"{start}\",\"kind\":\"main\"}}\n{body}"),
        )
        .unwrap();
        path
    }

    /// The hook's record of this very process decides; a record of a recycled pid or an ended
    /// session does not; argv is taken only while no other session began in the project since
    /// the process started; with neither, the reason names the integration.
    #[test]
    fn identity_comes_from_the_hook_record_or_a_still_fresh_argv() {
        let d = tempfile::tempdir().unwrap();
        let home = d.path().to_path_buf();
        let config = home.join(".gemini");
        let park_home = home.join(".local/state/park");
        let mut p = One {
            home: home.clone(),
            ago: 600,
        };
        let a = AgentProc {
            agent: super::super::Agent::Gemini,
            root: 70,
            main: 77,
            prog_index: 1,
            argv: v(&["node", "--max-old-space-size=8000", "/p/.bin/gemini"]),
            env: vec![("HOME".into(), home.to_string_lossy().into())],
            background: false,
        };
        let id = identify(&a, 5077, &p);
        assert!(id.session_id.is_none());
        assert!(id.reason.unwrap().contains("park integrate gemini"));

        let two_hours_ago =
            (jiff::Timestamp::now() - jiff::SignedDuration::from_hours(2)).to_string();
        let real = chat(
            &config,
            "session-2026-12-05T15-57-c3c7b841.jsonl",
            SID,
            &two_hours_ago,
            "{\"id\":\"1\",\"timestamp\":\"2026-12-05T15:57:13.043Z\",\"type\":\"user\",\"content\":[{\"text\":\"hello\"}]}\n",
        );
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
            pid: 77,
            start_ticks: 5077,
            session_id: SID.into(),
            transcript_path: Some(real.to_string_lossy().into()),
            cwd: Some("/w/p".into()),
            event: "SessionStart".into(),
            ended: false,
        };
        write(&rec);
        let id = identify(&a, 5077, &p);
        assert_eq!(
            (id.session_id.as_deref(), id.source),
            (Some(SID), "hook"),
            "{id:?}"
        );
        assert_eq!(id.transcript.as_deref(), Some(real.as_path()));
        assert_eq!(id.reason, None);
        assert!(
            identify(&a, 5078, &p).session_id.is_none(),
            "a recycled pid's record"
        );
        rec.ended = true;
        write(&rec);
        assert!(
            identify(&a, 5077, &p).session_id.is_none(),
            "an ended session"
        );
        rec.ended = false;
        rec.session_id = "$(rm -rf ~)".into();
        write(&rec);
        assert!(identify(&a, 5077, &p).session_id.is_none(), "a hostile id");
        std::fs::remove_dir_all(integrate::records_dir(&park_home)).unwrap();

        // argv, while no other session began here since the process started (10 min ago): one
        // that began an hour ago is not in the way, one that began now is.
        let b = AgentProc {
            argv: v(&[
                "node",
                "--max-old-space-size=8000",
                "/p/.bin/gemini",
                "--resume",
                SID,
            ]),
            ..a.clone()
        };
        let hour_ago = (jiff::Timestamp::now() - jiff::SignedDuration::from_hours(1)).to_string();
        let other = chat(
            &config,
            "session-2026-12-05T16-18-e2d1bfd9.jsonl",
            NEW,
            &hour_ago,
            "",
        );
        let id = identify(&b, 5077, &p);
        assert_eq!(
            (id.session_id.as_deref(), id.source),
            (Some(SID), "argv"),
            "{id:?}"
        );
        assert_eq!(id.transcript.as_deref(), Some(real.as_path()));
        std::fs::remove_file(other).unwrap();
        let now = jiff::Timestamp::now().to_string();
        chat(
            &config,
            "session-2026-12-05T16-18-e2d1bfd9.jsonl",
            NEW,
            &now,
            "",
        );
        let id = identify(&b, 5077, &p);
        assert!(
            id.session_id.is_none(),
            "a /clear or another Gemini since: {id:?}"
        );
        assert!(id.reason.unwrap().contains("park integrate gemini"));
        p.ago = 0;

        // The verifier asks about the parent it started; the child runs the session.
        let mut e = crate::model::entry::Entry::sample(super::super::Agent::Gemini, SID);
        e.config_dir = Some(config.to_string_lossy().into());
        write(&integrate::Record {
            session_id: SID.into(),
            ..rec.clone()
        });
        assert!(Gemini.runs_session(&e, 70, 5070, &p));
        e.session_id = NEW.into();
        assert!(!Gemini.runs_session(&e, 70, 5070, &p));
    }
}
