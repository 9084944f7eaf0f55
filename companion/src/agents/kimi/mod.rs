//! Kimi Code (`@moonshot-ai/kimi-code`, 2.1; node >= 22.19): one node process per pane, which
//! sets `process.title = "kimi-code"` as it starts: its `/proc/<pid>/cmdline` and `comm` are
//! `kimi-code` and nothing else, so its argv (a `-S <id>`, its flags) is gone (measured on 2.1.0).
//! Its sessions keep no pid and hold no open file; its welcome box shows the id, but a screen is
//! no identity. One exact source:
//!
//! * the opt-in integration ([`integrate`], `park integrate kimi`): `SessionStart`/`SessionEnd`
//!   hooks in Kimi's `config.toml` run `park hook kimi`, which records the hook input's
//!   `session_id` for the Kimi process that ran it, under `$PARK_HOME/integrations/kimi/<pid>.json`,
//!   with that process's start time (a record of a recycled pid never matches). `/new` and
//!   `/clear` end one session and start another: the record follows. A resume (`kimi -S`) fires
//!   `SessionStart` too, which is how the verifier sees park's own unpark.
//!
//! Without a record of this very process the row is untargetable, and its reason names the
//! integration (or, installed, that no session exists yet: Kimi creates one at the first prompt).
//! Never "the newest session of the folder", never a timestamp.
//!
//! Resume: `kimi -S session_<uuid>` in the session's cwd. The launch flags cannot be read back
//! (argv is the title), so none is replayed: `-m`, `-y/--yolo`, `--auto`, `--plan`, `--add-dir`,
//! `--skills-dir` are lost on resume (`park show` says so); what the session itself keeps (its
//! model binding, plan mode) comes back with it. SIGTERM ends it at once (`Terminated`) and
//! leaves the cursor hidden, which park's pane cleanup shows again.

pub mod integrate;
pub mod screen;
pub mod transcript;

use super::release::Release;
use super::spec::{ConfigDir, Identify, Main, ProcessTitle, Resume, Spec, Whitelist};
use super::{Agent, AgentProc, Identity, IntegrationState};
use crate::adapters::platform::{env_get, Platform};
use crate::agents::transcript::valid_session_id;
use std::path::{Path, PathBuf};

/// Subcommands (`kimi --help`, 2.1.0) and flags that run no interactive session.
const SUBCOMMANDS: &[&str] = &[
    "export",
    "fork",
    "provider",
    "session",
    "acp",
    "web",
    "server",
    "rc",
    "remote",
    "login",
    "doctor",
    "vis",
    "install-desktop",
    "migrate",
    "upgrade",
    "update",
    "help",
];
const NON_INTERACTIVE: &[&str] = &[
    "-p",
    "--prompt",
    "-V",
    "--version",
    "-h",
    "--help",
    "--output-format",
];

pub const BOOL_FLAGS: &[&str] = &["-y", "--yolo", "--auto", "--plan"];
pub const VALUED_FLAGS: &[&str] = &["-m", "--model", "--add-dir", "--skills-dir"];
/// Flags that carry the session or a new session's profile (`--agent` cannot be combined with
/// `--session`): rebuilt from the id, never replayed.
const SESSION_FLAGS: &[&str] = &["-S", "--session", "--agent", "--agent-file"];

/// What `park show` says of the flags: Kimi hides its argv.
pub const LOST_FLAGS: &str = "Kimi Code replaces its argv with its process title (`kimi-code`): its launch flags (-m, -y/--yolo, --auto, --plan, --add-dir, --skills-dir) cannot be read, and none is replayed on resume";

/// Whether an argv tail starts the TUI. The titled process has no tail at all (`kimi-code`).
pub fn interactive(args: &[String]) -> bool {
    super::spec::tui_argv(args, NON_INTERACTIVE, SUBCOMMANDS)
}

pub(crate) const SETUP_HINT: &str =
    "run `park integrate kimi` (a SessionStart hook in Kimi's config.toml) and restart this Kimi Code";

/// The session of Kimi process `a` (its main, started at `main_start`): `(id, cwd)` from the
/// hook's record of this very process.
fn session_of(a: &AgentProc, main_start: u64) -> Result<(String, Option<String>), String> {
    let home = crate::support::paths::park_home_from(|k| env_get(&a.env, k).map(str::to_string))
        .map_err(|e| format!("Kimi Code: park's home: {e}"))?;
    match integrate::read_record(&home, a.main) {
        Some(r) if r.start_ticks == main_start => {
            if r.ended {
                return Err("Kimi Code: its session ended (exiting)".into());
            }
            let id = valid_session_id(&r.session_id)
                .filter(|s| s.starts_with("session_"))
                .ok_or("Kimi Code: the hook recorded no valid session id")?;
            Ok((id, r.cwd))
        }
        // No record of this process (a record of an earlier process with this pid says nothing).
        _ => Err(match super::Integration::state(&integrate::Hook, &a.env) {
            IntegrationState::Installed => "Kimi Code: no session recorded for this process yet (Kimi creates one at the first prompt; a Kimi started before `park integrate kimi` must be restarted)".to_string(),
            _ => format!(
                "Kimi Code hides its argv and keeps no per-process session record: {SETUP_HINT}"
            ),
        }),
    }
}

pub fn identify(a: &AgentProc, main_start: u64, platform: &dyn Platform) -> Identity {
    let Some(config) = SPEC.config.dir(&a.env) else {
        return Identity::untargetable(
            "Kimi Code: neither KIMI_CODE_HOME nor HOME in the process environment",
        );
    };
    let (id, cwd) = match session_of(a, main_start) {
        Ok(s) => s,
        Err(why) => return Identity::untargetable(why),
    };
    let cwd = cwd.or_else(|| {
        platform
            .cwd(a.main)
            .map(|p| p.to_string_lossy().into_owned())
    });
    let Some(cwd) = cwd else {
        return Identity::untargetable("Kimi Code: cwd unreadable");
    };
    let transcript = transcript::find(&config, &id);
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

/// Kimi Code behind the [`super::AgentKind`] dispatch.
pub struct Kimi;

/// Kimi Code, as data.
pub static SPEC: Spec = Spec {
    agent: Agent::Kimi,
    name: "Kimi Code",
    // Its npm package and the versions park's e2e contract passed on (move with the pin in
    // `scripts/setup`).
    release: Release {
        name: "Kimi Code",
        packages: &["@moonshot-ai/kimi-code"],
        tested: ("2.1.0", "2.1.0"),
    },
    // `kimi-code`: the title the process runs under; `kimi`: its npm bin, for the moment before
    // the title is set.
    programs: &["kimi-code", "kimi"],
    entry_script: None,
    interactive,
    main: Main::Root,
    config: ConfigDir::var_or_home("KIMI_CODE_HOME", ".kimi-code"),
    flags: Whitelist::of(BOOL_FLAGS, VALUED_FLAGS, SESSION_FLAGS),
    resume: Resume::Flag("-S"),
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
    has_status_file: false,
    // A turn killed with its process stays open in `wire.jsonl` until the next prompt: an open
    // turn counts only with a fresh write (the spinner shows every turn in flight).
    open_turn_is_busy: false,
    cleanup: None,
    deletes_transcripts: false,
    prompt_history: None,
    caller_session_vars: &[],
    // The hook's record confirms a resume by itself.
    settle: std::time::Duration::ZERO,
    unidentified_blocks_unpark: true,
    shared_process: None,
    supervisor: None,
    integration: Some(&integrate::Hook),
    // `kimi <text>` is an unknown command (2.1.0): no first prompt, so no fresh start.
    first_prompt: false,
    process_title: Some(ProcessTitle {
        title: "kimi-code",
        program: "kimi",
        lost_flags: LOST_FLAGS,
    }),
};

impl super::AgentKind for Kimi {
    fn spec(&self) -> &'static Spec {
        &SPEC
    }
    fn expected_transcript(&self, e: &crate::model::entry::Entry) -> Option<PathBuf> {
        let config = Path::new(e.config_dir.as_deref()?);
        transcript::find(config, &e.session_id)
            .or_else(|| Some(transcript::path(config, &e.cwd, &e.session_id)))
    }
    fn runs_session(
        &self,
        e: &crate::model::entry::Entry,
        pid: u32,
        start: u64,
        platform: &dyn Platform,
    ) -> bool {
        let Some(p) = platform.process(pid).filter(|p| p.start_ticks == start) else {
            return false;
        };
        let a = AgentProc {
            agent: Agent::Kimi,
            root: pid,
            main: pid,
            prog_index: 0,
            argv: p.argv.clone(),
            env: platform.environ(pid).unwrap_or_default(),
            background: false,
        };
        session_of(&a, p.start_ticks)
            .is_ok_and(|(id, _)| e.fresh_from.is_some() || id == e.session_id)
    }
}

#[cfg(test)]
mod tests;
