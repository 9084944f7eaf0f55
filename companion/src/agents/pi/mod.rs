//! pi (`@earendil-works/pi-coding-agent`, formerly `@mariozechner/pi-coding-agent`; 1.6.0): one
//! node process per pane, sessions in `<agent dir>/sessions/--<cwd>--/<time>_<id>.jsonl`
//! ([`transcript`]); the agent dir is `$PI_CODING_AGENT_DIR`, else `~/.pi/agent`.
//!
//! pi sets `process.title = "pi"` first thing, which overwrites its argv: `/proc/<pid>/cmdline`
//! is `pi` and nothing else (measured on 1.6.0), so neither the session nor a launch flag can be
//! read from outside, not even the `--session <id>` of park's own resume. It keeps no file per
//! process, holds no session file open, and puts no session in its environment. The one exact
//! source is park's opt-in extension (`park integrate pi`, [`integrate`]): its record for this
//! pid and start time names the session, its file, its cwd, whether a run is in flight, and the
//! launch arguments pi still has in `process.argv`. Without it the row is untargetable and says
//! how to set it up. Never "the newest file of the folder", never the time in a file's name.
//!
//! Resume: `pi --session <id>` in the session's cwd, with the whitelisted launch flags from the
//! record. SIGTERM: pi ends its session and exits (1.6.0); its children (`PI_CODING_AGENT=true`)
//! die with the tree. pi never deletes sessions by itself.

pub mod integrate;
pub mod screen;
pub mod transcript;

use super::release::Release;
use super::spec::{ConfigDir, Identify, Main, Resume, Spec, Whitelist};
use super::{Agent, AgentProc, Flags, Identity};
use crate::adapters::platform::proctree::ProcTable;
use crate::adapters::platform::{env_get, Platform};
use crate::model::entry::Entry;
use std::path::{Path, PathBuf};

/// Subcommands (`pi <command>`), which run no session.
const SUBCOMMANDS: &[&str] = &[
    "install",
    "remove",
    "uninstall",
    "update",
    "list",
    "config",
    "auth",
    "mcp",
];
/// Flags of the modes that run no interactive session.
const NON_INTERACTIVE: &[&str] = &[
    "-p",
    "--print",
    "--mode",
    "--export",
    "--list-models",
    "-h",
    "--help",
    "-v",
    "--version",
];

pub const BOOL_FLAGS: &[&str] = &[
    "--no-tools",
    "-nt",
    "--no-builtin-tools",
    "-nbt",
    "--no-extensions",
    "-ne",
    "--no-mcp",
    "--no-skills",
    "-ns",
    "--no-prompt-templates",
    "-np",
    "--no-themes",
    "--no-context-files",
    "-nc",
    "--approve",
    "-a",
    "--no-approve",
    "-na",
    "--offline",
];
pub const VALUED_FLAGS: &[&str] = &[
    "--provider",
    "--model",
    "--models",
    "--thinking",
    "--tools",
    "-t",
    "--exclude-tools",
    "-xt",
    "--extension",
    "-e",
    "--skill",
    "--prompt-template",
    "--theme",
    "--use-theme",
    "--system-prompt",
    "--append-system-prompt",
    "--tui-mode",
];
/// Flags that carry the session, a place for sessions or a first prompt's setting (rebuilt from
/// the id, never replayed): a replayed `--session-dir` would look for the session elsewhere, an
/// `--api-key` is a secret park never writes down.
const SESSION_FLAGS: &[&str] = &[
    "--session",
    "--session-id",
    "--fork",
    "--session-dir",
    "--name",
    "-n",
    "--api-key",
];

/// Whether `args` start the interactive TUI (pi's argv as read before it sets its title, or as
/// its extension recorded it).
pub fn interactive(args: &[String]) -> bool {
    super::spec::tui_argv(args, NON_INTERACTIVE, SUBCOMMANDS)
}

pub(crate) const SETUP_HINT: &str =
    "run `park integrate pi` (an extension that tells park its session) and restart this pi";

/// The record park's extension wrote for process `a` (started at `main_start`).
fn record(a: &AgentProc, main_start: u64) -> Option<integrate::Record> {
    let home =
        crate::support::paths::park_home_from(|k| env_get(&a.env, k).map(str::to_string)).ok()?;
    integrate::read_record(&home, a.main).filter(|r| r.start_ticks == main_start)
}

/// The identity of pi process `a` (see the module doc).
pub fn identify(a: &AgentProc, main_start: u64, _platform: &dyn Platform) -> Identity {
    let Some(config) = SPEC.config.dir(&a.env) else {
        return Identity::untargetable(
            "pi: neither PI_CODING_AGENT_DIR nor HOME in the process environment",
        );
    };
    let Some(r) = record(a, main_start) else {
        return Identity::untargetable(format!(
            "pi hides its arguments (its title overwrites them) and keeps no per-process session record: {SETUP_HINT}"
        ));
    };
    let id = r.session_id;
    let Some(cwd) = r.cwd else {
        return Identity::untargetable("pi: its record names no cwd");
    };
    let Some(file) = r.session_file.map(PathBuf::from) else {
        return Identity::untargetable(
            "pi runs this session without saving it (--no-session): nothing to resume",
        );
    };
    // Only a file where `pi --session <id>` run in the cwd finds it: inside this agent dir's
    // sessions of the cwd (a --session-dir or PI_CODING_AGENT_SESSION_DIR elsewhere is not
    // replayed), named by the id.
    let at_home = file.parent()
        == Some(
            &config
                .join("sessions")
                .join(transcript::project_dir_name(&cwd)),
        )
        && file
            .file_name()
            .and_then(|n| transcript::id_of_name(&n.to_string_lossy()))
            .as_deref()
            == Some(id.as_str());
    let mut ident = Identity {
        session_id: Some(id.clone()),
        source: "extension",
        transcript: Some(file.clone()),
        reason: None,
        status_file: Some(r.status),
        cwd: Some(cwd),
        job: None,
        name: None,
    };
    ident.reason = if !at_home {
        Some(format!(
            "pi keeps this session at {}, outside {} (--session-dir or PI_CODING_AGENT_SESSION_DIR): `pi --session` would not find it there",
            file.display(),
            config.join("sessions").display()
        ))
    } else if !file.is_file() {
        Some("no conversation yet (pi writes its session file at the first prompt): nothing to resume".into())
    } else if transcript::header_id(&file).as_deref() != Some(id.as_str()) {
        Some(format!(
            "pi's session file {} does not start with session {id}'s header",
            file.display()
        ))
    } else {
        None
    };
    ident
}

/// pi behind the [`super::AgentKind`] dispatch.
pub struct Pi;

/// pi, as data.
pub static SPEC: Spec = Spec {
    agent: Agent::Pi,
    name: "pi",
    // Its npm packages and the versions park's e2e contract passed on (move with the pin in
    // `scripts/setup`).
    release: Release {
        name: "pi",
        packages: &[
            "@earendil-works/pi-coding-agent",
            "@mariozechner/pi-coding-agent",
        ],
        tested: ("1.6.0", "1.6.0"),
    },
    programs: &["pi"],
    entry_script: None,
    interactive,
    main: Main::Root,
    config: ConfigDir::var_or_home("PI_CODING_AGENT_DIR", ".pi/agent"),
    flags: Whitelist::of(BOOL_FLAGS, VALUED_FLAGS, SESSION_FLAGS),
    resume: Resume::Flag("--session"),
    identify: Identify::Files(identify),
    transcripts: transcript::all,
    // The file's name carries its creation time: found by id, never derived.
    transcript_at: None,
    transcript_needs_cwd: true,
    parse_transcript: transcript::parse,
    read_transcript_file: Some(transcript::read_file),
    markdown: transcript::markdown,
    message_of: transcript::message_of,
    read_screen: screen::read,
    screen_escapes: false,
    limit_screen: None,
    // `π - <dir>`: names the directory, not the conversation.
    generic_title: Some(|t| t.starts_with("π - ")),
    // The extension's record carries busy / idle / waiting.
    has_status_file: true,
    open_turn_is_busy: false,
    // pi never deletes sessions by itself.
    cleanup: None,
    deletes_transcripts: false,
    prompt_history: None,
    caller_session_vars: &[],
    // The extension's record confirms a resumed session itself.
    settle: std::time::Duration::ZERO,
    unidentified_blocks_unpark: true,
    shared_process: None,
    supervisor: None,
    integration: Some(&integrate::Extension),
    first_prompt: true,
    process_title: None,
};

/// Whether `p` is a session file of session `sid` inside `config`'s sessions.
fn is_session_of(config: &Path, p: &Path, sid: &str) -> bool {
    p.starts_with(config.join("sessions"))
        && p.parent().and_then(Path::parent) == Some(&config.join("sessions"))
        && p.file_name()
            .and_then(|n| transcript::id_of_name(&n.to_string_lossy()))
            .as_deref()
            == Some(sid)
}

impl super::AgentKind for Pi {
    fn spec(&self) -> &'static Spec {
        &SPEC
    }
    fn expected_transcript(&self, e: &Entry) -> Option<PathBuf> {
        transcript::find(Path::new(e.config_dir.as_deref()?), &e.cwd, &e.session_id)
    }
    fn restore_path(&self, e: &Entry, config_dir: &Path, sid: &str) -> Result<PathBuf, String> {
        // Back where it was (its name carries its creation time), inside the cwd's folder.
        let dir = config_dir
            .join("sessions")
            .join(transcript::project_dir_name(&e.cwd));
        e.transcript
            .as_deref()
            .map(PathBuf::from)
            .filter(|p| is_session_of(config_dir, p, sid) && p.parent() == Some(&dir))
            .ok_or_else(|| {
                format!(
                    "pi: the entry names no session file of {sid} under {}",
                    dir.display()
                )
            })
    }
    fn runs_session(&self, e: &Entry, pid: u32, start: u64, platform: &dyn Platform) -> bool {
        let table = ProcTable::new(platform.processes().unwrap_or_default());
        let Some(p) = table.get(pid) else {
            return false;
        };
        let a = AgentProc {
            agent: Agent::Pi,
            root: pid,
            main: pid,
            prog_index: 0,
            argv: p.argv.clone(),
            env: platform.environ(pid).unwrap_or_default(),
            background: false,
        };
        let _ = start;
        record(&a, p.start_ticks)
            .is_some_and(|r| e.fresh_from.is_some() || r.session_id == e.session_id)
    }
    fn launch_flags(
        &self,
        a: &AgentProc,
        main_start: u64,
        _platform: &dyn Platform,
    ) -> (Flags, Vec<String>) {
        match record(a, main_start) {
            Some(r) => SPEC.flags(&r.argv),
            None => SPEC.flags(&a.argv[a.prog_index + 1..]),
        }
    }
}

#[cfg(test)]
mod tests;
