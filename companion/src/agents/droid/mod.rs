//! Factory Droid (`@factory/cli` 0.225, one native binary from `@factory/cli-linux-x64`): a
//! session is bound only from what Droid itself says, and from outside it says nothing (measured
//! on 0.225.2): no per-process file, no open transcript fd (it appends and closes), no session
//! variable in its environment, and argv names a session only at a `--resume <id>` start, which a
//! `/new` makes stale. So the one exact source is the opt-in integration ([`integrate`], `park
//! integrate droid`): a `SessionStart`/`SessionEnd` hook in `~/.factory/hooks.json` runs `park
//! hook droid`, which records the hook input's `session_id` for the pane's `droid` process (its
//! start time checked), under `$PARK_HOME/integrations/droid/<pid>.json`. `/new` ends one session
//! and starts another: the record follows. Without it every row is untargetable, and the reason
//! names `park integrate droid`. Never "the newest session of the folder", never mtimes.
//!
//! The process chain is the TUI `droid [flags]` (what the pane runs; the record is keyed by it)
//! and its engine child `droid exec --input-format stream-jsonrpc --output-format
//! stream-jsonrpc`, which `/new` replaces; both are killed with the tree.
//!
//! Sessions live in `<config>/sessions/<project key>/<id>.jsonl` ([`transcript`]); `<config>` is
//! `$FACTORY_HOME_OVERRIDE/.factory`, else `~/.factory`. Resume is `droid --resume <id>` in the
//! session's cwd (Droid finds the session from any folder, and runs it in its own cwd).
//! Offline (tests): `FACTORY_API_KEY=<any> FACTORY_AIRGAP_ENABLED=true` and a `customModels`
//! entry in `~/.factory/settings.json`.

pub mod integrate;
pub mod screen;
pub mod transcript;

use super::release::Release;
use super::spec::{ConfigDir, Identify, Main, Resume, Spec, Whitelist};
use super::{Agent, AgentProc, Identity};
use crate::adapters::platform::{env_get, Platform};
use crate::agents::transcript::valid_session_id;
use std::path::{Path, PathBuf};

/// Subcommands (0.225.2 `droid --help`); `resume [id]` is the TUI.
const SUBCOMMANDS: &[&str] = &[
    "exec", "daemon", "search", "find", "update", "mcp", "plugin", "computer", "doctor", "help",
];
const NON_INTERACTIVE: &[&str] = &["-v", "--version", "-h", "--help"];

pub const BOOL_FLAGS: &[&str] = &["--use-spec", "--disable-builtin-skills"];
pub const VALUED_FLAGS: &[&str] = &[
    "--auto",
    "--append-system-prompt",
    "--append-system-prompt-file",
    "--settings",
];
/// Flags that carry the session or where it runs (rebuilt from the id and the recorded cwd,
/// never replayed): `--cwd` is the session's cwd, which the resume runs in anyway; a worktree
/// flag would make another one.
const SESSION_FLAGS: &[&str] = &[
    "--resume",
    "-r",
    "--fork",
    "--cwd",
    "--worktree-dir",
    "-w",
    "--worktree",
];

pub fn interactive(args: &[String]) -> bool {
    super::spec::tui_argv(args, NON_INTERACTIVE, SUBCOMMANDS)
}

/// `droid resume <id>` is `droid --resume <id>`: the whitelist reads the flag form. `--resume`,
/// `-r`, `-w` and `--worktree` take an optional value: a bare one gets an empty value, so the flag
/// after it stays a flag; `--last` (with `--resume`) takes none and is left out. A flag's value is
/// passed as it is, whatever it looks like.
fn prepare(args: &[String]) -> Vec<String> {
    const OPTIONAL: &[&str] = &["--resume", "-r", "-w", "--worktree"];
    let mut v = args.to_vec();
    if v.first().is_some_and(|a| a == "resume") {
        v[0] = "--resume".into();
    }
    let mut out = Vec::with_capacity(v.len() + 1);
    let mut i = 0;
    while i < v.len() {
        let a = v[i].as_str();
        i += 1;
        if a == "--last" {
            continue;
        }
        out.push(a.to_string());
        if OPTIONAL.contains(&a) {
            match v.get(i) {
                Some(n) if !n.starts_with('-') => {
                    out.push(n.clone());
                    i += 1;
                }
                _ => out.push(String::new()),
            }
        } else if VALUED_FLAGS.contains(&a) || SESSION_FLAGS.contains(&a) {
            if let Some(n) = v.get(i) {
                out.push(n.clone());
                i += 1;
            }
        }
    }
    out
}

pub(crate) const SETUP_HINT: &str =
    "run `park integrate droid` (a SessionStart hook) and restart this Droid";

/// The session the integration recorded for Droid TUI `pid` (started at `start`), with the
/// transcript and cwd the hook named.
fn recorded(
    env: &[(String, String)],
    pid: u32,
    start: u64,
) -> Result<(String, Option<PathBuf>, Option<String>), String> {
    let home = crate::support::paths::park_home_from(|k| env_get(env, k).map(str::to_string))
        .map_err(|e| format!("Droid: {e}"))?;
    match integrate::read_record(&home, pid) {
        // A record of an earlier process with this pid says nothing.
        Some(r) if r.start_ticks == start => {
            if r.ended {
                return Err("Droid: its session ended (exiting, or starting another)".into());
            }
            let id = valid_session_id(&r.session_id)
                .ok_or("Droid: the hook recorded no valid session id")?;
            Ok((id, r.transcript_path.map(PathBuf::from), r.cwd))
        }
        _ => Err(format!(
            "Droid keeps no session record park can read from outside (no per-process file, no open transcript, argv goes stale after /new): {SETUP_HINT}"
        )),
    }
}

/// Whether `p` is a session file of `id` inside `config`'s sessions.
fn is_session_of(config: &Path, p: &Path, id: &str) -> bool {
    p.starts_with(config.join("sessions"))
        && p.file_name()
            .is_some_and(|n| n.to_string_lossy() == format!("{id}.jsonl"))
        && !p.components().any(|c| c.as_os_str() == "..")
}

pub fn identify(a: &AgentProc, main_start: u64, platform: &dyn Platform) -> Identity {
    let Some(config) = SPEC.config.dir(&a.env) else {
        return Identity::untargetable(
            "Droid: neither FACTORY_HOME_OVERRIDE nor HOME in the process environment",
        );
    };
    let (id, path, cwd) = match recorded(&a.env, a.main, main_start) {
        Ok(s) => s,
        Err(why) => return Identity::untargetable(why),
    };
    let cwd = cwd.or_else(|| {
        platform
            .cwd(a.main)
            .map(|p| p.to_string_lossy().into_owned())
    });
    let Some(cwd) = cwd else {
        return Identity::untargetable("Droid: cwd unreadable");
    };
    let transcript = transcript::find(&config, &id)
        .or_else(|| path.filter(|p| is_session_of(&config, p, &id) && p.is_file()));
    let reason = transcript
        .is_none()
        .then(|| "no conversation yet (transcript not found): nothing to resume".to_string());
    Identity {
        session_id: Some(id),
        source: "hook",
        transcript: transcript.or_else(|| Some(config.join("sessions"))),
        reason,
        status_file: None,
        cwd: Some(cwd),
        job: None,
        name: None,
    }
}

/// Factory Droid behind the [`super::AgentKind`] dispatch.
pub struct Droid;

/// Factory Droid, as data.
pub static SPEC: Spec = Spec {
    agent: Agent::Droid,
    name: "Droid",
    // Its npm packages and the versions park's e2e contract passed on (move with the pin in
    // `scripts/setup`, which installs the platform package: the wrapper's postinstall does not
    // run under npm 11).
    release: Release {
        name: "Factory Droid",
        packages: &["@factory/cli", "@factory/cli-linux-x64"],
        tested: ("0.225.2", "0.225.2"),
    },
    programs: &["droid"],
    entry_script: None,
    interactive,
    // The record is the TUI's; its engine child is replaced by `/new`.
    main: Main::Root,
    config: ConfigDir {
        // FACTORY_HOME_OVERRIDE stands for HOME: it names the directory that holds `.factory`.
        under_var: Some(".factory"),
        ..ConfigDir::var_or_home("FACTORY_HOME_OVERRIDE", ".factory")
    },
    flags: Whitelist {
        prepare: Some(prepare),
        ..Whitelist::of(BOOL_FLAGS, VALUED_FLAGS, SESSION_FLAGS)
    },
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
    // The empty composer's placeholder is told from a typed draft by its DIM style.
    screen_escapes: true,
    limit_screen: None,
    generic_title: None,
    has_status_file: false,
    open_turn_is_busy: false,
    // Droid keeps sessions until the user deletes them (none of its settings expire them).
    cleanup: None,
    deletes_transcripts: false,
    prompt_history: None,
    caller_session_vars: &[],
    // The SessionStart hook's record confirms a resumed start.
    settle: std::time::Duration::ZERO,
    // Any unidentified Droid of the same config dir could be running the session.
    unidentified_blocks_unpark: true,
    shared_process: None,
    supervisor: None,
    integration: Some(&integrate::Hook),
    first_prompt: true,
    process_title: None,
};

impl super::AgentKind for Droid {
    fn spec(&self) -> &'static Spec {
        &SPEC
    }
    fn expected_transcript(&self, e: &crate::model::entry::Entry) -> Option<PathBuf> {
        let config = Path::new(e.config_dir.as_deref()?);
        transcript::find(config, &e.session_id)
            .or_else(|| Some(transcript::path(config, &e.cwd, &e.session_id)))
    }
    fn restore_path(
        &self,
        e: &crate::model::entry::Entry,
        config_dir: &Path,
        sid: &str,
    ) -> Result<PathBuf, String> {
        // Back where it was, inside this config's sessions, else where the cwd puts it.
        Ok(e.transcript
            .as_deref()
            .map(PathBuf::from)
            .filter(|p| is_session_of(config_dir, p, sid))
            .unwrap_or_else(|| transcript::path(config_dir, &e.cwd, sid)))
    }
    fn runs_session(
        &self,
        e: &crate::model::entry::Entry,
        pid: u32,
        start: u64,
        platform: &dyn Platform,
    ) -> bool {
        // `pid` is the resumed TUI; its SessionStart hook records the session it runs.
        let env = platform.environ(pid).unwrap_or_default();
        recorded(&env, pid, start)
            .is_ok_and(|(id, ..)| e.fresh_from.is_some() || id.eq_ignore_ascii_case(&e.session_id))
    }
}

#[cfg(test)]
mod tests;
