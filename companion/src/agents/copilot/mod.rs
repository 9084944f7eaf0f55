//! GitHub Copilot CLI (`@github/copilot` 1.0+): identity from the files the session process
//! itself holds open, nothing else.
//!
//! The npm install runs `node …/bin/copilot` (a loader) which `spawnSync`s the native
//! `…/@github/copilot-linux-x64/copilot` with the same argv; standalone installs run the native
//! binary directly. The native process owns the session, so it is [`AgentProc::main`].
//!
//! Identity (measured on 1.0.102, Linux):
//! * `<config>/session-state/<id>/inuse.<pid>.hold` is held open (write fd) by the process
//!   running session `<id>`, next to `inuse.<pid>.lock` holding the pid. Both move to the new
//!   session's directory on `/clear` and go away on a clean exit. An open fd cannot belong to a
//!   recycled pid, so it is exact. A process started with `--resume <id>` has neither until its
//!   first turn in the resumed session.
//! * `logs/process-<ms>-<pid>.log` (or under `--log-dir`), also held open, says `Registering
//!   foreground session: <id>` when a session starts, is resumed or replaces another on `/clear`
//!   (`Unregistering foreground session: <id>` first). Its last such line names the session from
//!   the start, resumed or not.
//!
//! Both are read; when both name a session they must agree (a `/clear` in progress makes them
//! differ for a moment: untargetable, park refuses). Neither: untargetable. argv (`--resume`) is
//! never trusted (stale after `/clear`). `<config>` is `$COPILOT_HOME`, else `$HOME/.copilot`;
//! the transcript is `<config>/session-state/<id>/events.jsonl` ([`transcript`]).
//!
//! State: `<config>/open-sessions-state.json` maps each session id to `{"working": bool}`, true
//! while a turn runs or a permission prompt is up (it is not cleaned on exit: only read for a
//! session a live process was just bound to); the screen ([`screen`]) and the events tail do
//! the rest.

pub mod screen;
pub mod transcript;

use super::release::Release;
use super::spec::{ConfigDir, Identify, Main, Resume, Spec, Whitelist};
use super::{Agent, AgentProc, Identity};
use crate::adapters::platform::proctree::ProcTable;
use crate::adapters::platform::Platform;
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
    "--connect",
    "--remote-export",
    "--share",
    "--share-gist",
    "--output-format",
];
const SUBCOMMANDS: &[&str] = &[
    "app",
    "login",
    "help",
    "init",
    "config",
    "update",
    "version",
    "workflow",
    "sessions",
    "memories",
    "plugin",
    "mcp",
    "skill",
    "instruction",
    "lsp",
    "sandbox",
    "completion",
];

pub const BOOL_FLAGS: &[&str] = &[
    "--allow-all",
    "--yolo",
    "--allow-all-tools",
    "--allow-all-paths",
    "--allow-all-urls",
    "--autopilot",
    "--plan",
    "--experimental",
    "--no-experimental",
    "--disallow-temp-dir",
    "--enable-memory",
    "--disable-builtin-mcps",
    "--enable-all-github-mcp-tools",
    "--no-custom-instructions",
    "--no-ask-user",
    "--screen-reader",
    "--plain-diff",
    "--no-color",
    "--no-auto-update",
];
/// Flags with one value. `--allow-tool`, `--deny-tool`, `--allow-url` and `--deny-url` take
/// several: each value is kept in its own `--flag value` pair, which Copilot reads the same.
pub const VALUED_FLAGS: &[&str] = &[
    "--model",
    "--reasoning-effort",
    "--context",
    "--auto-tier",
    "--agent",
    "--mode",
    "--add-dir",
    "--disable-mcp-server",
    "--enable-mcp-server",
    "--additional-mcp-config",
    "--allow-tool",
    "--deny-tool",
    "--allow-url",
    "--deny-url",
    "--available-tools",
    "--excluded-tools",
    "--max-autopilot-continues",
    "--plugin-dir",
];
/// Flags that carry the session or the first prompt, and a resume's id: dropped with their value
/// (rebuilt from the id, never replayed).
const SKIP_VALUED: &[&str] = &[
    "--session-id",
    "-n",
    "--name",
    "-i",
    "--interactive",
    "-C",
    "--resume",
    "-r",
];
/// Flags whose values may repeat without the flag (`--allow-tool a b`).
const MULTI_FLAGS: &[&str] = &["--allow-tool", "--deny-tool", "--allow-url", "--deny-url"];

pub fn interactive(args: &[String]) -> bool {
    super::spec::tui_argv(args, NON_INTERACTIVE, SUBCOMMANDS)
}

/// What the open files of process `pid` say about its session.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Held {
    /// Sessions whose `inuse.<pid>.hold` the process holds open, with their directory.
    pub locks: Vec<(String, PathBuf)>,
    /// The process's own log (`process-<ms>-<pid>.log`), when it holds one open.
    pub log: Option<PathBuf>,
}

/// Sorts `pid`'s open files into session locks and its log (see the module doc).
pub fn held(files: &[PathBuf], pid: u32) -> Held {
    let hold = format!("inuse.{pid}.hold");
    let log_suffix = format!("-{pid}.log");
    let mut out = Held::default();
    for f in files {
        let Some(name) = f.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if name == hold {
            let Some(dir) = f.parent() else { continue };
            let in_state = dir
                .parent()
                .and_then(Path::file_name)
                .is_some_and(|n| n == "session-state");
            let Some(id) = dir
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| valid_session_id(n).filter(|s| s == n))
            else {
                continue;
            };
            if in_state && !out.locks.iter().any(|(s, _)| *s == id) {
                out.locks.push((id, dir.to_path_buf()));
            }
        } else if let Some(ms) = name
            .strip_prefix("process-")
            .and_then(|r| r.strip_suffix(&log_suffix))
        {
            if !ms.is_empty() && ms.bytes().all(|b| b.is_ascii_digit()) {
                out.log = Some(f.clone());
            }
        }
    }
    out
}

/// The session a Copilot process log says is in the foreground now: the id of its last
/// `Registering foreground session:` line, unless an `Unregistering` of it came after.
pub fn logged_session(log: &str) -> Option<String> {
    let mut cur: Option<String> = None;
    for line in log.lines() {
        if let Some((_, id)) = line.split_once("] Registering foreground session: ") {
            cur = valid_session_id(id.trim());
        } else if let Some((_, id)) = line.split_once("] Unregistering foreground session: ") {
            if cur.as_deref() == valid_session_id(id.trim()).as_deref() {
                cur = None;
            }
        }
    }
    cur
}

/// A log is read from its end in windows growing from 64 KiB to this bound, until one holds a
/// registration line: a scan reads a few KiB of a long log, not all of it.
const LOG_TAIL: u64 = 8 << 20;

fn read_log(path: &Path) -> Option<String> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = std::fs::File::open(path).ok()?;
    let len = f.metadata().ok()?.len();
    let mut window = 64 << 10;
    loop {
        let from = len.saturating_sub(window);
        f.seek(SeekFrom::Start(from)).ok()?;
        let mut buf = vec![];
        (&mut f).take(window).read_to_end(&mut buf).ok()?;
        let mut text = String::from_utf8_lossy(&buf).into_owned();
        if from > 0 {
            // The window's first line is cut: never read half a registration.
            text = text
                .split_once('\n')
                .map_or(String::new(), |(_, rest)| rest.to_string());
        }
        if from == 0 || window >= LOG_TAIL || text.contains("egistering foreground session: ") {
            return Some(text);
        }
        window *= 4;
    }
}

/// The session process `pid` runs, from its open files: `Ok((id, session dir or None, source))`
/// or why it cannot be told.
fn session_of(
    pid: u32,
    platform: &dyn Platform,
) -> Result<(String, Option<PathBuf>, &'static str), String> {
    let h = held(&platform.open_files(pid), pid);
    let logged = h
        .log
        .as_deref()
        .and_then(read_log)
        .and_then(|l| logged_session(&l));
    match (h.locks.as_slice(), logged) {
        ([(id, _)], Some(l)) if *id != l => Err(format!(
            "Copilot: its session lock names {id} but its log names {l} (a /clear in progress?)"
        )),
        ([(id, dir)], _) => Ok((id.clone(), Some(dir.clone()), "lock")),
        ([], Some(l)) => Ok((l, None, "process-log")),
        ([], None) => Err(
            "Copilot: the process holds no session lock and its log names no session (starting or exiting)"
                .into(),
        ),
        (many, _) => Err(format!(
            "Copilot: the process holds the locks of {} sessions",
            many.len()
        )),
    }
}

/// `cwd:` of a session's `workspace.yaml` (a plain or quoted YAML scalar).
pub fn workspace_cwd(yaml: &str) -> Option<String> {
    let v = yaml.lines().find_map(|l| l.strip_prefix("cwd:"))?.trim();
    let v = if let Some(q) = v.strip_prefix('"') {
        serde_json::from_str::<String>(&format!("\"{q}")).ok()?
    } else if let Some(q) = v.strip_prefix('\'').and_then(|q| q.strip_suffix('\'')) {
        q.replace("''", "'")
    } else {
        v.to_string()
    };
    (v.starts_with('/')).then_some(v)
}

/// `working` of session `id` in `<config>/open-sessions-state.json`.
fn working(config: &Path, id: &str) -> Option<bool> {
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(config.join("open-sessions-state.json")).ok()?)
            .ok()?;
    v.get(id)?.get("working")?.as_bool()
}

pub fn identify(a: &AgentProc, platform: &dyn Platform) -> Identity {
    let Some(config) = SPEC.config.dir(&a.env) else {
        return Identity::untargetable(
            "Copilot: neither COPILOT_HOME nor HOME in the process environment",
        );
    };
    let (id, dir, source) = match session_of(a.main, platform) {
        Ok(s) => s,
        Err(why) => return Identity::untargetable(why),
    };
    let dir = dir.unwrap_or_else(|| config.join("session-state").join(&id));
    let cwd = std::fs::read_to_string(dir.join("workspace.yaml"))
        .ok()
        .and_then(|y| workspace_cwd(&y))
        .or_else(|| {
            platform
                .cwd(a.main)
                .map(|p| p.to_string_lossy().into_owned())
        });
    let Some(cwd) = cwd else {
        return Identity::untargetable("Copilot: cwd unreadable");
    };
    let transcript = dir.join("events.jsonl");
    let reason = if transcript.is_file() {
        None
    } else {
        Some("no conversation yet (transcript not written): nothing to resume".to_string())
    };
    let status_file = working(&config, &id).map(|w| if w { "busy" } else { "idle" }.to_string());
    Identity {
        session_id: Some(id),
        source,
        transcript: Some(transcript),
        reason,
        status_file,
        cwd: Some(cwd),
        job: None,
        name: None,
    }
}

/// The argv tail as the whitelist reads it: a repeated flag's values paired with it, a bare
/// `--resume` dropped.
fn prepare(args: &[String]) -> Vec<String> {
    // `--allow-tool a b` repeats the flag for each extra value, so the whitelist sees pairs.
    let mut spread = vec![];
    let mut multi: Option<String> = None;
    for a in args {
        if a.starts_with('-') {
            multi = MULTI_FLAGS.contains(&a.as_str()).then(|| a.clone());
            spread.push(a.clone());
        } else if let Some(m) = &multi {
            if spread.last().is_some_and(|l| !l.starts_with('-')) {
                spread.push(m.clone());
            }
            spread.push(a.clone());
        } else {
            spread.push(a.clone());
        }
    }
    drop_bare_resume(&spread)
}

/// `-r`/`--resume` take an optional value: a bare one (the picker) is dropped before the
/// whitelist, which would take the next flag as its value.
fn drop_bare_resume(args: &[String]) -> Vec<String> {
    let mut out = vec![];
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if (a == "-r" || a == "--resume") && args.get(i + 1).is_none_or(|n| n.starts_with('-')) {
            i += 1;
            continue;
        }
        out.push(a.clone());
        i += 1;
    }
    out
}

/// GitHub Copilot CLI behind the [`super::AgentKind`] dispatch.
pub struct Copilot;

/// GitHub Copilot CLI, as data.
pub static SPEC: Spec = Spec {
    agent: Agent::Copilot,
    name: "Copilot",
    // Its npm package and the versions park's e2e contract passed on (move with the pin in
    // `scripts/setup`).
    release: Release {
        name: "Copilot CLI",
        packages: &["@github/copilot"],
        tested: ("1.0.102", "1.0.102"),
    },
    programs: &["copilot"],
    entry_script: None,
    interactive,
    // The npm loader runs the native binary, which holds the session.
    main: Main::Innermost,
    config: ConfigDir::var_or_home("COPILOT_HOME", ".copilot"),
    flags: Whitelist {
        prepare: Some(prepare),
        ..Whitelist::of(BOOL_FLAGS, VALUED_FLAGS, SKIP_VALUED)
    },
    resume: Resume::Flag("--resume"),
    identify: Identify::Files(|a, _start, platform| identify(a, platform)),
    transcripts: transcript::all,
    transcript_at: Some(|config, _cwd, id| transcript::path(config, id)),
    transcript_needs_cwd: false,
    parse_transcript: transcript::parse,
    read_transcript_file: Some(transcript::read_file),
    markdown: transcript::markdown,
    message_of: transcript::message_of,
    read_screen: screen::read,
    screen_escapes: false,
    limit_screen: None,
    generic_title: None,
    // `open-sessions-state.json`'s `working` flag, read for the bound session.
    has_status_file: true,
    open_turn_is_busy: false,
    // Copilot keeps sessions until the user deletes them (`copilot sessions`).
    cleanup: None,
    deletes_transcripts: false,
    prompt_history: None,
    // Exported to tool subprocesses by 1.0.102.
    caller_session_vars: &["COPILOT_AGENT_SESSION_ID"],
    settle: std::time::Duration::ZERO,
    // Any unidentified Copilot of the same config dir could be running the session.
    unidentified_blocks_unpark: true,
    shared_process: None,
    supervisor: None,
    integration: None,
    first_prompt: true,
    process_title: None,
};

impl super::AgentKind for Copilot {
    fn spec(&self) -> &'static Spec {
        &SPEC
    }
    fn runs_session(
        &self,
        e: &crate::model::entry::Entry,
        pid: u32,
        _start: u64,
        platform: &dyn Platform,
    ) -> bool {
        // `pid` is what the resume started (the npm loader, or the native binary itself); the
        // session is the native process's, told by its open files.
        let table = ProcTable::new(platform.processes().unwrap_or_default());
        let main = SPEC.main_pid(&table, pid);
        session_of(main, platform).is_ok_and(|(id, _, _)| {
            e.fresh_from.is_some() || id.eq_ignore_ascii_case(&e.session_id)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapters::platform::{Mem, ProcInfo};
    use crate::agents::AgentKind;

    const SID: &str = "f5443002-e97a-4d18-9aff-94086c89b28f";
    const NEW: &str = "bf16b979-0dd7-46a5-9bcb-70a46dca03cc";

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn the_loader_and_the_native_binary_are_copilot_and_other_modes_are_not() {
        assert!(SPEC.is_program("copilot", "/x/copilot"));
        assert!(!SPEC.is_program("copilot-language-server", "/x/copilot-language-server"));
        assert!(interactive(&v(&[])));
        assert!(interactive(&v(&["--resume", SID, "--yolo"])));
        assert!(interactive(&v(&["-i", "fix the bug"])));
        assert!(!interactive(&v(&["-p", "hi"])));
        assert!(!interactive(&v(&["--prompt=hi"])));
        assert!(!interactive(&v(&["mcp", "list"])));
        assert!(!interactive(&v(&["update"])));
        assert!(!interactive(&v(&["--version"])));
        assert!(!interactive(&v(&["--connect"])), "a remote session");
    }

    #[test]
    fn flags_keep_the_whitelist_spread_multi_values_and_drop_the_session() {
        let (k, d) = SPEC.flags(&v(&[
            "--resume",
            SID,
            "--model",
            "gpt-4.1",
            "--allow-tool",
            "shell(git)",
            "write",
            "--yolo",
            "-n",
            "my name",
            "-i",
            "first prompt",
            "--mode=plan",
            "--model",
            "x\n$(id)",
            "--evil",
        ]));
        assert_eq!(
            k,
            v(&[
                "--model",
                "gpt-4.1",
                "--allow-tool",
                "shell(git)",
                "--allow-tool",
                "write",
                "--yolo",
                "--mode",
                "plan"
            ])
        );
        assert!(d.contains(&"--evil".to_string()), "{d:?}");
        assert!(!k.iter().any(|a| a.contains("first prompt") || a == SID));
        // A bare `-r` (the picker) takes no value: the flag after it survives.
        let (k, _) = SPEC.flags(&v(&["-r", "--allow-all-tools"]));
        assert_eq!(k, v(&["--allow-all-tools"]));
        assert_eq!(
            SPEC.resume_argv("copilot", SID, &v(&["--yolo"])),
            v(&["copilot", "--resume", SID, "--yolo"])
        );
    }

    #[test]
    fn open_files_name_the_lock_and_the_log_of_this_pid_only() {
        let files = vec![
            PathBuf::from("/h/.cache/copilot/pkg/linux-x64/1.0.102/inuse.6649.hold"),
            PathBuf::from("/h/.copilot/logs/.copilot-log.lock"),
            PathBuf::from("/h/.copilot/logs/process-1796485243386-6649.log"),
            PathBuf::from(format!("/h/.copilot/session-state/{SID}/inuse.6649.hold")),
            PathBuf::from(format!("/h/.copilot/session-state/{NEW}/inuse.7000.hold")),
            PathBuf::from("/h/.copilot/session-state/../../etc/inuse.6649.hold"),
            PathBuf::from("/h/.copilot/logs/process-1796485243386-66490.log"),
        ];
        let h = held(&files, 6649);
        assert_eq!(
            h.locks,
            vec![(
                SID.to_string(),
                PathBuf::from(format!("/h/.copilot/session-state/{SID}"))
            )]
        );
        assert_eq!(
            h.log,
            Some(PathBuf::from(
                "/h/.copilot/logs/process-1796485243386-6649.log"
            ))
        );
    }

    #[test]
    fn the_log_names_the_last_registered_session() {
        let l = |id: &str, un: bool| {
            format!(
                "2026-12-05T15:40:43.541Z [INFO] {}egistering foreground session: {id}\n",
                if un { "Unr" } else { "R" }
            )
        };
        assert_eq!(logged_session(""), None);
        let started = l(SID, false);
        assert_eq!(logged_session(&started).as_deref(), Some(SID));
        let cleared = format!("{started}{}{}", l(SID, true), l(NEW, false));
        assert_eq!(logged_session(&cleared).as_deref(), Some(NEW));
        let exiting = format!("{cleared}{}", l(NEW, true));
        assert_eq!(logged_session(&exiting), None, "exiting: no session");
        let hostile = "x [INFO] Registering foreground session: $(rm -rf ~)\n";
        assert_eq!(logged_session(hostile), None);
    }

    /// A long log is read from its end; the registration far back is still found.
    #[test]
    fn a_long_log_is_read_from_its_end_until_a_registration() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("process-1-7.log");
        let filler = "t [INFO] something unrelated happened here\n".repeat(20_000);
        let text = format!("t [INFO] Registering foreground session: {SID}\n{filler}");
        std::fs::write(&p, &text).unwrap();
        assert_eq!(logged_session(&read_log(&p).unwrap()).as_deref(), Some(SID));
        let text = format!("{text}t [INFO] Unregistering foreground session: {SID}\nt [INFO] Registering foreground session: {NEW}\n");
        std::fs::write(&p, &text).unwrap();
        let tail = read_log(&p).unwrap();
        assert!(tail.len() < text.len(), "only a tail is read");
        assert_eq!(logged_session(&tail).as_deref(), Some(NEW));
    }

    #[test]
    fn workspace_cwd_reads_plain_and_quoted_scalars() {
        let real = include_str!("../../../tests/fixtures/copilot/workspace.yaml");
        assert_eq!(workspace_cwd(real).as_deref(), Some("/tmp/cp/w/proj"));
        assert_eq!(
            workspace_cwd("id: x\ncwd: \"/w/a b: c\\\"d\"\n").as_deref(),
            Some("/w/a b: c\"d")
        );
        assert_eq!(
            workspace_cwd("cwd: '/w/it''s'\n").as_deref(),
            Some("/w/it's")
        );
        assert_eq!(workspace_cwd("cwd: relative\n"), None);
        assert_eq!(workspace_cwd("id: x\n"), None);
    }

    /// 70 `node …/.bin/copilot` → 77 native `copilot`; open files and cwd as given.
    struct One {
        home: PathBuf,
        files: std::sync::Mutex<Vec<PathBuf>>,
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
                comm: "copilot".into(),
            };
            Ok(vec![
                p(
                    70,
                    1,
                    &["node", "/p/node_modules/.bin/copilot", "--resume", SID],
                ),
                p(
                    77,
                    70,
                    &[
                        "/p/node_modules/@github/copilot-linux-x64/copilot",
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
            Some(PathBuf::from("/w/proc-cwd"))
        }
        fn open_files(&self, pid: u32) -> Vec<PathBuf> {
            if pid == 77 {
                self.files.lock().unwrap().clone()
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
    }

    /// The lock and the log the process holds decide, and must agree; argv never does; the
    /// working flag of the bound session is its status.
    #[test]
    fn identity_comes_from_the_files_the_session_process_holds() {
        let d = tempfile::tempdir().unwrap();
        let home = d.path().to_path_buf();
        let cfg = home.join(".copilot");
        let p = One {
            home: home.clone(),
            files: Default::default(),
        };
        let a = AgentProc {
            agent: super::super::Agent::Copilot,
            root: 70,
            main: 77,
            prog_index: 1,
            argv: v(&["node", "/p/node_modules/.bin/copilot", "--resume", SID]),
            env: vec![("HOME".into(), home.to_string_lossy().into())],
            background: false,
        };
        let set = |f: Vec<PathBuf>| *p.files.lock().unwrap() = f;
        // Nothing held: argv's id is not taken.
        let id = identify(&a, &p);
        assert!(id.session_id.is_none(), "{id:?}");
        assert!(id.reason.unwrap().contains("no session lock"));

        // The log alone (a resumed process before its first turn).
        let log = cfg.join("logs/process-1796485303474-77.log");
        std::fs::create_dir_all(log.parent().unwrap()).unwrap();
        std::fs::write(
            &log,
            format!("t [INFO] Registering foreground session: {SID}\n"),
        )
        .unwrap();
        set(vec![log.clone()]);
        let id = identify(&a, &p);
        assert_eq!(id.session_id.as_deref(), Some(SID));
        assert_eq!(id.source, "process-log");
        assert_eq!(
            id.cwd.as_deref(),
            Some("/w/proc-cwd"),
            "no workspace.yaml yet"
        );
        assert!(id.reason.unwrap().contains("no conversation yet"));

        // The session dir with its transcript and workspace: targetable, cwd from the workspace.
        let dir = cfg.join("session-state").join(SID);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("events.jsonl"), "{}\n").unwrap();
        std::fs::write(dir.join("workspace.yaml"), "cwd: /w/p\n").unwrap();
        std::fs::write(
            cfg.join("open-sessions-state.json"),
            format!(r#"{{"{SID}":{{"working":true}},"{NEW}":{{"working":false}}}}"#),
        )
        .unwrap();
        let id = identify(&a, &p);
        assert_eq!(id.reason, None);
        assert_eq!(id.cwd.as_deref(), Some("/w/p"));
        assert_eq!(id.status_file.as_deref(), Some("busy"));
        assert_eq!(id.transcript, Some(dir.join("events.jsonl")));

        // Lock and log agree: the lock is the source.
        set(vec![log.clone(), dir.join("inuse.77.hold")]);
        let id = identify(&a, &p);
        assert_eq!((id.session_id.as_deref(), id.source), (Some(SID), "lock"));

        // A /clear half done: the lock moved, the log not yet (or the other way round).
        let new_dir = cfg.join("session-state").join(NEW);
        set(vec![log.clone(), new_dir.join("inuse.77.hold")]);
        let id = identify(&a, &p);
        assert!(id.session_id.is_none(), "{id:?}");
        assert!(id.reason.unwrap().contains("a /clear in progress"));

        // The lock of another pid says nothing about this one.
        set(vec![dir.join("inuse.70.hold")]);
        assert!(identify(&a, &p).session_id.is_none());

        // The verifier: asked about the loader it started, it reads the native process.
        let mut e = crate::model::entry::Entry::sample(super::super::Agent::Copilot, SID);
        set(vec![log.clone()]);
        assert!(Copilot.runs_session(&e, 70, 5070, &p));
        e.session_id = NEW.into();
        assert!(!Copilot.runs_session(&e, 70, 5070, &p), "another session");
        set(vec![]);
        e.session_id = SID.into();
        assert!(!Copilot.runs_session(&e, 70, 5070, &p), "nothing held");
    }
}
