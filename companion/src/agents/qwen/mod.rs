//! Qwen Code (`@qwen-code/qwen-code` 0.24+): identity from the live registry
//! `<config>/sessions/<pid>.json` checked against the boot id and the process start
//! ([`registry`]); nothing else (argv goes stale after `/clear`). `<config>` is `$QWEN_HOME`,
//! else `$HOME/.qwen`; transcripts live under the runtime dir (`$QWEN_RUNTIME_DIR`, else
//! `<config>`) in `projects/<encoded cwd>/chats/<id>.jsonl` ([`transcript`]); read in the
//! 0.24.4 bundle: `getSessionRegistryDir`, `Storage.getRuntimeBaseDir`, `sanitizeCwd`,
//! `readProcStartToken`. Versions before the registry (0.15 and older) leave no per-process
//! record: their rows are untargetable with that reason. Qwen writes `procStart` only on
//! Linux, so elsewhere every row is untargetable (a pid cannot be told from a recycled one).
//!
//! The process chain is three node processes, `node …/bin/qwen` → `node --expose-gc …/cli.js`
//! → `node --expose-gc …/cli.js`; the innermost runs the session and owns the registry file.

pub mod registry;
pub mod screen;
pub mod transcript;

use super::release::Release;
use super::spec::{ConfigDir, Identify, Main, Resume, Spec, Whitelist};
use super::{Agent, AgentProc, Identity};
use crate::adapters::platform::proctree::ProcTable;
use crate::adapters::platform::Platform;
use crate::agents::transcript::valid_session_id;
use std::path::Path;

const NON_INTERACTIVE: &[&str] = &[
    "-p",
    "--prompt",
    "-v",
    "--version",
    "-h",
    "--help",
    "--list-extensions",
    "--acp",
    "--experimental-acp",
];
const SUBCOMMANDS: &[&str] = &["mcp", "extensions", "extension", "auth", "channel", "hooks"];

pub const BOOL_FLAGS: &[&str] = &["-y", "--yolo", "-s", "--sandbox", "--chat-recording"];
pub const VALUED_FLAGS: &[&str] = &[
    "-m",
    "--model",
    "--approval-mode",
    "--auth-type",
    "--openai-base-url",
    "--include-directories",
    "-e",
    "--extensions",
    "--allowed-tools",
    "--exclude-tools",
];
/// Flags that carry the session (rebuilt from the id, never replayed).
const SESSION_FLAGS: &[&str] = &["--resume", "-r", "--session-id"];

pub fn interactive(args: &[String]) -> bool {
    if args.iter().any(|a| {
        let name = a.split_once('=').map_or(a.as_str(), |(n, _)| n);
        NON_INTERACTIVE.contains(&name) || a == "-c" || a == "--continue"
    }) {
        // `-c` resumes "the latest in this cwd": which one it took is not knowable from argv,
        // but the registry still names it, so only print modes are left out here.
        return args.iter().any(|a| a == "-c" || a == "--continue")
            && !args.iter().any(|a| {
                let name = a.split_once('=').map_or(a.as_str(), |(n, _)| n);
                NON_INTERACTIVE.contains(&name)
            });
    }
    !matches!(args.first(), Some(a) if SUBCOMMANDS.contains(&a.as_str()))
}

fn read_record(config: &Path, pid: u32) -> Option<registry::Record> {
    registry::parse(&std::fs::read(config.join("sessions").join(format!("{pid}.json"))).ok()?)
}

pub fn identify(a: &AgentProc, start_ticks: u64, platform: &dyn Platform) -> Identity {
    let (Some(config), Some(runtime)) = (SPEC.config.named(&a.env), SPEC.config.dir(&a.env)) else {
        return Identity::untargetable(
            "Qwen Code: neither QWEN_HOME nor HOME in the process environment",
        );
    };
    let boot = platform.boot_id();
    let matches = |t: &str| platform.proc_start_matches(start_ticks, t);
    let proc_cwd = platform
        .cwd(a.main)
        .map(|p| p.to_string_lossy().into_owned());
    let (id, source, cwd) = match read_record(&config, a.main) {
        Some(r) if r.is_of(a.main, boot.as_deref(), matches) => {
            match r.session_id.as_deref().and_then(valid_session_id) {
                Some(id) => (id, "status-file", r.cwd.clone().or(proc_cwd)),
                None => {
                    return Identity::untargetable(
                        "Qwen Code registry file holds no valid session id",
                    )
                }
            }
        }
        // A file of a recycled pid belongs to a dead process; argv is stale after `/clear`, so
        // it is not trusted while a registry exists for this config (Qwen 0.24+ always writes one).
        Some(_) => {
            return Identity::untargetable(
                "Qwen Code registry file belongs to an earlier process with this pid",
            )
        }
        None if config.join("sessions").is_dir() => {
            return Identity::untargetable(format!(
                "Qwen Code: no {}/sessions/{}.json for this process (it may be exiting)",
                config.display(),
                a.main
            ))
        }
        // Before 0.24 there is no registry, and argv names the session only until `/clear`. A
        // 0.24 that is still starting has not made the folder yet either: say both.
        None => {
            return Identity::untargetable(format!(
                "Qwen Code: no session record yet ({}/sessions/{}.json): it is still starting, or it is older than 0.24, which keeps none (upgrade: npm i -g @qwen-code/qwen-code)",
                config.display(),
                a.main
            ))
        }
    };
    let Some(cwd) = cwd else {
        return Identity::untargetable("Qwen Code: cwd unreadable");
    };
    let transcript = transcript::path(&runtime, &cwd, &id);
    let reason = if transcript.is_file() {
        None
    } else {
        Some("no conversation yet (transcript not written): nothing to resume".to_string())
    };
    Identity {
        session_id: Some(id),
        source,
        transcript: Some(transcript),
        reason,
        status_file: None,
        cwd: Some(cwd),
        job: None,
        name: None,
    }
}

/// Qwen Code behind the [`super::AgentKind`] dispatch.
pub struct Qwen;

/// Qwen Code, as data.
pub static SPEC: Spec = Spec {
    agent: Agent::Qwen,
    name: "Qwen",
    // Its npm package and the versions park's e2e contract passed on (move with the pin in
    // `scripts/setup`).
    release: Release {
        name: "Qwen Code",
        packages: &["@qwen-code/qwen-code"],
        tested: ("0.24.4", "0.24.4"),
    },
    programs: &["qwen"],
    entry_script: Some("/@qwen-code/qwen-code/"),
    interactive,
    // The `qwen` wrapper runs the innermost cli.js, which writes the registry.
    main: Main::Innermost,
    config: ConfigDir {
        // The runtime dir is where park reads and restores transcripts; the registry is read
        // from each process's own environment.
        runtime_var: Some("QWEN_RUNTIME_DIR"),
        ..ConfigDir::var_or_home("QWEN_HOME", ".qwen")
    },
    flags: Whitelist::of(BOOL_FLAGS, VALUED_FLAGS, SESSION_FLAGS),
    resume: Resume::Flag("--resume"),
    identify: Identify::Files(identify),
    transcripts: transcript::all,
    transcript_at: Some(transcript::path),
    transcript_needs_cwd: true,
    parse_transcript: transcript::parse,
    read_transcript_file: Some(transcript::read_file),
    markdown: transcript::markdown,
    message_of: transcript::message_of,
    read_screen: screen::read,
    screen_escapes: false,
    limit_screen: None,
    generic_title: None,
    // The registry names the session but carries no status: state comes from the screen and
    // the transcript.
    has_status_file: false,
    open_turn_is_busy: false,
    // Qwen Code keeps chats until the user deletes them.
    cleanup: None,
    deletes_transcripts: false,
    prompt_history: None,
    // Exported to tool subprocesses by 0.24.4.
    caller_session_vars: &["QWEN_CODE_SESSION_ID"],
    settle: std::time::Duration::ZERO,
    // Any unidentified Qwen of the same runtime dir could be running the session.
    unidentified_blocks_unpark: true,
    shared_process: None,
    supervisor: None,
    integration: None,
    first_prompt: true,
    process_title: None,
};

impl super::AgentKind for Qwen {
    fn spec(&self) -> &'static Spec {
        &SPEC
    }
    fn runs_session(
        &self,
        e: &crate::model::entry::Entry,
        pid: u32,
        start: u64,
        platform: &dyn Platform,
    ) -> bool {
        // `pid` is what the resume started (the `qwen` wrapper); the registry file is its
        // innermost cli.js's, in that process's config dir (its own environment says which).
        let table = ProcTable::new(platform.processes().unwrap_or_default());
        let main = SPEC.main_pid(&table, pid);
        let main_start = if main == pid {
            start
        } else {
            match table.get(main) {
                Some(p) => p.start_ticks,
                None => return false,
            }
        };
        let boot = platform.boot_id();
        platform
            .environ(main)
            .and_then(|env| SPEC.config.named(&env))
            .and_then(|d| read_record(&d, main))
            .is_some_and(|r| {
                (e.fresh_from.is_some()
                    || r.session_id
                        .as_deref()
                        .is_some_and(|s| s.eq_ignore_ascii_case(&e.session_id)))
                    && r.is_of(main, boot.as_deref(), |t| {
                        platform.proc_start_matches(main_start, t)
                    })
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn the_npm_chain_is_qwen_and_print_modes_are_not() {
        assert!(SPEC.is_program("qwen", "/p/node_modules/.bin/qwen"));
        assert!(SPEC.is_program("cli", "/p/node_modules/@qwen-code/qwen-code/cli.js"));
        assert!(!SPEC.is_program("cli", "/p/node_modules/@anthropic-ai/claude-code/cli.js"));
        assert!(interactive(&v(&[])));
        assert!(interactive(&v(&[
            "--resume",
            "x",
            "--approval-mode",
            "yolo"
        ])));
        assert!(interactive(&v(&["-c"])));
        assert!(!interactive(&v(&["-p", "hi"])));
        assert!(!interactive(&v(&["--prompt=hi"])));
        assert!(!interactive(&v(&["mcp", "list"])));
        assert!(!interactive(&v(&["--version"])));
    }

    #[test]
    fn flags_keep_the_whitelist_and_drop_session_and_hostile_values() {
        let id = "35c98558-0920-4e29-b81c-9304ca43fccb";
        let (k, d) = SPEC.flags(&v(&[
            "--resume",
            id,
            "--approval-mode",
            "yolo",
            "-m",
            "qwen3-coder",
            "--model",
            "x\n$(id)",
            "--evil",
        ]));
        assert_eq!(k, v(&["--approval-mode", "yolo", "-m", "qwen3-coder"]));
        assert!(d.contains(&"--evil".to_string()));
        assert_eq!(
            SPEC.resume_argv("qwen", id, &k),
            v(&[
                "qwen",
                "--resume",
                id,
                "--approval-mode",
                "yolo",
                "-m",
                "qwen3-coder"
            ])
        );
    }

    #[test]
    fn runtime_dir_prefers_its_variable_then_the_config_dir() {
        let env = |kv: &[(&str, &str)]| -> Vec<(String, String)> {
            kv.iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect()
        };
        assert_eq!(
            SPEC.config.dir(&env(&[("HOME", "/h")])),
            Some(PathBuf::from("/h/.qwen"))
        );
        assert_eq!(
            SPEC.config
                .dir(&env(&[("HOME", "/h"), ("QWEN_HOME", "/q")])),
            Some(PathBuf::from("/q"))
        );
        assert_eq!(
            SPEC.config.dir(&env(&[
                ("HOME", "/h"),
                ("QWEN_HOME", "/q"),
                ("QWEN_RUNTIME_DIR", "/r")
            ])),
            Some(PathBuf::from("/r"))
        );
    }

    /// A platform with one process (pid 77, started at tick 5123, cwd /w/p) and a boot id.
    struct One {
        home: PathBuf,
    }
    impl Platform for One {
        /// The npm chain: 70 `node …/.bin/qwen` → 74 `node cli.js` → 77 `node cli.js`.
        fn processes(&self) -> std::io::Result<Vec<crate::adapters::platform::ProcInfo>> {
            let p = |pid: u32, ppid: u32, start: u64, argv: &[&str]| {
                crate::adapters::platform::ProcInfo {
                    pid,
                    ppid,
                    pgid: 70,
                    sid: 1,
                    tpgid: -1,
                    start_ticks: start,
                    state: 'S',
                    cpu_ticks: 0,
                    rss_bytes: 4096,
                    argv: v(argv),
                    comm: "node".into(),
                }
            };
            let cli = "/p/node_modules/@qwen-code/qwen-code/cli.js";
            Ok(vec![
                p(
                    70,
                    1,
                    5100,
                    &["node", "/p/node_modules/.bin/qwen", "--resume", SID],
                ),
                p(74, 70, 5110, &["node", "--expose-gc", cli, "--resume", SID]),
                p(77, 74, 5123, &["node", "--expose-gc", cli, "--resume", SID]),
            ])
        }
        fn process(&self, pid: u32) -> Option<crate::adapters::platform::ProcInfo> {
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
        fn memory(&self, _pid: u32) -> Option<crate::adapters::platform::Mem> {
            None
        }
        fn status_mem(&self, _pid: u32) -> Option<(u64, u64)> {
            None
        }
        fn clock_ticks_per_sec(&self) -> u64 {
            100
        }
        fn boot_id(&self) -> Option<String> {
            Some(BOOT.into())
        }
    }

    const BOOT: &str = "3f1c2b9e-5d1a-4c55-9a57-0b8f2d7e6a11";
    const SID: &str = "5d0c1b3e-8a2f-4f7e-9c1d-2b3a4c5d6e7f";

    fn proc_of(home: &Path) -> AgentProc {
        AgentProc {
            agent: super::super::Agent::Qwen,
            root: 70,
            main: 77,
            prog_index: 1,
            argv: v(&["node", "/p/node_modules/.bin/qwen", "--resume", SID]),
            env: vec![("HOME".into(), home.to_string_lossy().into())],
            background: false,
        }
    }

    /// The registry decides, checked against this boot and this process start; argv (stale
    /// after `/clear`) never does, and a missing registry names the fix.
    #[test]
    fn identity_comes_from_the_registry_of_this_process_only() {
        let d = tempfile::tempdir().unwrap();
        let home = d.path().to_path_buf();
        let p = One { home: home.clone() };
        let a = proc_of(&home);
        // No registry dir at all: a Qwen still starting, or an old one; the reason says both.
        let id = identify(&a, 5123, &p);
        assert!(id.session_id.is_none());
        let why = id.reason.as_deref().unwrap();
        assert!(
            why.contains("still starting") && why.contains("older than 0.24"),
            "{id:?}"
        );

        let sessions = home.join(".qwen/sessions");
        std::fs::create_dir_all(&sessions).unwrap();
        let write = |start: &str| {
            std::fs::write(
                sessions.join("77.json"),
                format!(r#"{{"pid":77,"procStart":"{start}","sessionId":"{SID}","cwd":"/w/p","kind":"tui","qwenVersion":"0.24.4"}}"#),
            )
            .unwrap()
        };
        // The dir exists but not this pid's file: exiting, never argv's id.
        let id = identify(&a, 5123, &p);
        assert!(id.session_id.is_none(), "{id:?}");

        write(&format!("{BOOT}:5123"));
        let id = identify(&a, 5123, &p);
        assert_eq!(id.session_id.as_deref(), Some(SID));
        assert_eq!(id.source, "status-file");
        assert_eq!(id.cwd.as_deref(), Some("/w/p"));
        assert_eq!(
            id.transcript.as_deref(),
            Some(
                home.join(format!(".qwen/projects/-w-p/chats/{SID}.jsonl"))
                    .as_path()
            )
        );
        assert!(id
            .reason
            .as_deref()
            .unwrap()
            .contains("no conversation yet"));
        let t = id.transcript.unwrap();
        std::fs::create_dir_all(t.parent().unwrap()).unwrap();
        std::fs::write(&t, "{}\n").unwrap();
        assert_eq!(identify(&a, 5123, &p).reason, None, "targetable");

        // A recycled pid (another start) and a record of an earlier boot: refused.
        assert!(identify(&a, 5124, &p).session_id.is_none());
        write("00000000-0000-4000-8000-000000000000:5123");
        assert!(identify(&a, 5123, &p).session_id.is_none());
        // A hostile id in the registry is never a session id.
        std::fs::write(
            sessions.join("77.json"),
            format!(r#"{{"pid":77,"procStart":"{BOOT}:5123","sessionId":"$(rm -rf ~)"}}"#),
        )
        .unwrap();
        let id = identify(&a, 5123, &p);
        assert!(id.session_id.is_none() && id.reason.is_some(), "{id:?}");
    }

    /// The verifier of an unpark asks about the process it started, the `qwen` wrapper; the
    /// registry file is the innermost process's, and its start is that process's.
    #[test]
    fn a_resume_runs_the_session_through_its_wrapper() {
        use crate::agents::AgentKind;
        let d = tempfile::tempdir().unwrap();
        let home = d.path().to_path_buf();
        let p = One { home: home.clone() };
        let sessions = home.join(".qwen/sessions");
        std::fs::create_dir_all(&sessions).unwrap();
        let mut e = crate::model::entry::Entry::sample(super::super::Agent::Qwen, SID);
        assert!(!Qwen.runs_session(&e, 70, 5100, &p), "no registry yet");
        std::fs::write(
            sessions.join("77.json"),
            format!(r#"{{"pid":77,"procStart":"{BOOT}:5123","sessionId":"{SID}"}}"#),
        )
        .unwrap();
        assert!(Qwen.runs_session(&e, 70, 5100, &p));
        assert!(
            Qwen.runs_session(&e, 77, 5123, &p),
            "asked about the session process itself"
        );
        e.session_id = "6e1d2c4f-9b3a-4e8f-8d2e-3c4b5d6e7f80".into();
        assert!(!Qwen.runs_session(&e, 70, 5100, &p), "another session");
        e.session_id = SID.into();
        std::fs::write(
            sessions.join("77.json"),
            format!(r#"{{"pid":77,"procStart":"{BOOT}:5100","sessionId":"{SID}"}}"#),
        )
        .unwrap();
        assert!(
            !Qwen.runs_session(&e, 70, 5100, &p),
            "a record matched against the wrapper's start, not its own"
        );
    }
}
