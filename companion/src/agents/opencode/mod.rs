//! OpenCode (`opencode-ai` 1.18): one Bun-compiled binary per pane, sessions in one shared
//! SQLite database (`$XDG_DATA_HOME/opencode/opencode.db`, else `~/.local/share/opencode/…`;
//! `OPENCODE_DB` overrides the file), read read-only ([`db`]).
//!
//! Identity: OpenCode keeps nothing per process, so the session comes from
//! * the record of park's opt-in plugin (`park integrate opencode`, [`integrate`]) for this pid
//!   and start time, or
//! * `-s/--session <id>` in argv (how park resumes it) while no other main session began in the
//!   session's directory since the process started (a `/new` followed by a prompt);
//!
//! and in both cases the pane's title must agree: OpenCode titles its terminal `OC | <session
//! title>` (cut to 37 characters and `…`) inside a session and `OpenCode` on its home screen
//! (after `/new`, before the first prompt: the new session does not exist yet). Switching
//! sessions with `/sessions` fires no event, so a title naming another session, or a title two
//! sessions share, leaves the row untargetable; so does a title that is off
//! (`OPENCODE_DISABLE_TERMINAL_TITLE`). Never "newest session in the directory".
//!
//! Resume: `opencode -s <id>` in the session's directory, never `--fork`. SIGTERM is graceful
//! (it prints `Continue  opencode -s <id>`). OpenCode never deletes sessions by itself.

pub mod db;
pub mod integrate;
pub mod screen;
pub mod transcript;

use super::{AgentProc, Flags, Identity};
use crate::adapters::platform::{env_get, Platform};
use crate::model::entry::Entry;
use std::path::{Path, PathBuf};

const SUBCOMMANDS: &[&str] = &[
    "completion",
    "acp",
    "mcp",
    "attach",
    "run",
    "debug",
    "providers",
    "auth",
    "agent",
    "upgrade",
    "uninstall",
    "serve",
    "web",
    "models",
    "stats",
    "export",
    "import",
    "github",
    "pr",
    "session",
    "plugin",
    "plug",
    "db",
];
const NON_INTERACTIVE: &[&str] = &["-h", "--help", "-v", "--version"];

pub const BOOL_FLAGS: &[&str] = &[
    "--pure",
    "--auto",
    "--mini",
    "--no-replay",
    "--mdns",
    "--print-logs",
];
pub const VALUED_FLAGS: &[&str] = &[
    "-m",
    "--model",
    "--agent",
    "--port",
    "--hostname",
    "--mdns-domain",
    "--cors",
    "--log-level",
    "--replay-limit",
];
/// Flags that carry the session or a first prompt (rebuilt from the id, never replayed).
const SESSION_FLAGS: &[&str] = &["-s", "--session", "--prompt"];

/// How long a session title shows in the terminal title before OpenCode cuts it with `…`.
const TITLE_CHARS: usize = 37;

pub(crate) const SETUP_HINT: &str =
    "run `park integrate opencode` (a plugin that tells park its session) and restart this OpenCode, or start it with -s <id>";

pub fn is_opencode(program: &str) -> bool {
    matches!(program, "opencode" | "opencode.exe")
}

/// Whether `args` start the TUI (not a subcommand, help or version).
pub fn interactive(args: &[String]) -> bool {
    if args.iter().any(|a| NON_INTERACTIVE.contains(&a.as_str())) {
        return false;
    }
    // The first word that is not a flag or a flag's value: a subcommand, or the project path.
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if a.starts_with('-') {
            let valued = VALUED_FLAGS.contains(&a) || SESSION_FLAGS.contains(&a);
            i += if valued { 2 } else { 1 };
            continue;
        }
        return !SUBCOMMANDS.contains(&a);
    }
    true
}

/// An OpenCode session id: `ses_` and 20 to 40 letters or digits (case kept).
pub fn valid_id(s: &str) -> Option<String> {
    s.starts_with("ses_")
        .then(|| crate::agents::transcript::valid_session_id(s))
        .flatten()
}

fn env_dir(env: &[(String, String)], var: &str, home_sub: &str) -> Option<PathBuf> {
    match env_get(env, var).filter(|v| v.starts_with('/')) {
        Some(d) => Some(Path::new(d).join("opencode")),
        None => env_get(env, "HOME").map(|h| Path::new(h).join(home_sub)),
    }
}

/// OpenCode's data dir (the "config dir" park records): its database and logs.
pub fn config_dir(env: &[(String, String)]) -> Option<PathBuf> {
    env_dir(env, "XDG_DATA_HOME", ".local/share/opencode")
}

/// OpenCode's global config dir (where plugins live).
pub fn config_home(env: &[(String, String)]) -> Option<PathBuf> {
    env_dir(env, "XDG_CONFIG_HOME", ".config/opencode")
}

/// The database a process with this environment uses.
pub fn db_path(env: &[(String, String)]) -> Option<PathBuf> {
    if let Some(db) = env_get(env, "OPENCODE_DB").filter(|v| v.starts_with('/')) {
        return Some(PathBuf::from(db));
    }
    config_dir(env).map(|d| d.join("opencode.db"))
}

/// The session `-s/--session` names in argv.
pub fn argv_session(args: &[String]) -> Option<String> {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let v = match a.split_once('=') {
            Some(("--session", v)) => Some(v.to_string()),
            _ if a == "-s" || a == "--session" => it.next().cloned(),
            _ => None,
        };
        if let Some(v) = v {
            return valid_id(&v);
        }
    }
    None
}

/// Whether the terminal title `shown` (without `OC | `) is how OpenCode shows `title`.
pub fn title_shows(shown: &str, title: &str) -> bool {
    match shown.strip_suffix('…') {
        Some(head) => {
            let head = head.trim_end();
            title.chars().count() > TITLE_CHARS.min(head.chars().count()) && title.starts_with(head)
        }
        None => shown.trim() == title.trim(),
    }
}

/// What the record or argv says about a process: `(id, source, status)`.
type Claim = (String, &'static str, Option<String>);

fn claim(a: &AgentProc, start_ticks: u64) -> Result<Claim, String> {
    let home = crate::support::paths::park_home_from(|k| env_get(&a.env, k).map(str::to_string));
    if let Ok(home) = &home {
        if let Some(r) = integrate::read_record(home, a.main) {
            if r.start_ticks == start_ticks {
                let id = r.session_id.ok_or("OpenCode: its session was deleted")?;
                return Ok((id, "plugin", Some(r.status)));
            }
        }
    }
    let args = &a.argv[a.prog_index + 1..];
    argv_session(args)
        .map(|id| (id, "argv", None))
        .ok_or_else(|| format!("OpenCode keeps no per-process session record: {SETUP_HINT}"))
}

/// The identity of OpenCode process `a` in a pane titled `title` (see the module doc).
pub fn identify(a: &AgentProc, title: &str, platform: &dyn Platform) -> Identity {
    let Some(db) = db_path(&a.env) else {
        return Identity::untargetable(
            "OpenCode: neither XDG_DATA_HOME nor HOME in its environment",
        );
    };
    let Some(start) = platform.process(a.main).map(|p| p.start_ticks) else {
        return Identity::untargetable("OpenCode: the process is gone");
    };
    let (id, source, status) = match claim(a, start) {
        Ok(c) => c,
        Err(why) => return Identity::untargetable(why),
    };
    let row = match db::session(&db, &id) {
        Ok(Some(r)) => r,
        Ok(None) => {
            return Identity::untargetable(format!(
                "OpenCode: session {id} is not in {} (no prompt yet?)",
                db.display()
            ))
        }
        Err(why) => return Identity::untargetable(format!("OpenCode: {why}")),
    };
    if row.parent_id.is_some() {
        return Identity::untargetable("OpenCode: the recorded session is a sub-agent's");
    }
    if source == "argv" {
        let started_ms = platform
            .started_secs_ago(start)
            .map(|ago| jiff::Timestamp::now().as_millisecond() - ago as i64 * 1000 - 1000);
        match started_ms.map(|t| db::created_since(&db, &row.directory, t, &id)) {
            Some(Ok(newer)) if newer.is_empty() => {}
            Some(Ok(_)) => {
                return Identity::untargetable(format!(
                    "OpenCode: another session began in {} after this process started (a /new, or another OpenCode there): argv no longer tells; {SETUP_HINT}",
                    row.directory
                ))
            }
            Some(Err(why)) => return Identity::untargetable(format!("OpenCode: {why}")),
            None => return Identity::untargetable("OpenCode: its start time is unreadable"),
        }
    }
    if let Err(why) = title_agrees(title, &row, &db) {
        return Identity::untargetable(why);
    }
    Identity {
        session_id: Some(id),
        source,
        transcript: Some(db),
        reason: None,
        status_file: status,
        cwd: Some(row.directory),
        job: None,
    }
}

/// The pane's title must show `row`'s session and no other's.
fn title_agrees(title: &str, row: &db::SessionRow, db: &Path) -> Result<(), String> {
    if title == "OpenCode" {
        return Err("OpenCode shows its home screen (a new session without a prompt yet): nothing there to resume".into());
    }
    let Some(shown) = title.strip_prefix("OC | ") else {
        return Err(format!(
            "OpenCode's terminal title ({title:?}) does not name a session (OPENCODE_DISABLE_TERMINAL_TITLE?): park cannot confirm which session the pane shows"
        ));
    };
    if !title_shows(shown, &row.title) {
        return Err(format!(
            "the pane shows the OpenCode session {shown:?}, not {:?} (switched with /sessions?): park will not guess",
            row.title
        ));
    }
    let twins = db::titled(db, &row.id)
        .map_err(|why| format!("OpenCode: {why}"))?
        .into_iter()
        .filter(|t| title_shows(shown, t))
        .count();
    if twins > 0 {
        return Err(format!(
            "two OpenCode sessions show as {shown:?}: park cannot tell which one the pane shows"
        ));
    }
    Ok(())
}

pub fn flags(args: &[String]) -> (Flags, Vec<String>) {
    // One positional: the project path (the session's directory is where it resumes).
    super::whitelist(args, BOOL_FLAGS, VALUED_FLAGS, SESSION_FLAGS, 1)
}

pub fn resume_argv(program: &str, id: &str, flags: &[String]) -> Vec<String> {
    let mut v = vec![program.to_string(), "-s".to_string(), id.to_string()];
    v.extend(flags.iter().cloned());
    v
}

fn entry_db(e: &Entry) -> Option<PathBuf> {
    e.transcript.as_deref().map(PathBuf::from).or_else(|| {
        e.config_dir
            .as_deref()
            .map(|d| Path::new(d).join("opencode.db"))
    })
}

/// OpenCode behind the [`super::AgentKind`] dispatch.
pub struct Opencode;

impl super::AgentKind for Opencode {
    fn agent(&self) -> super::Agent {
        super::Agent::Opencode
    }
    fn runs(&self, program: &str, _path: &str, rest: &[String]) -> bool {
        is_opencode(program) && interactive(rest)
    }
    fn config_var(&self) -> &'static str {
        "XDG_DATA_HOME"
    }
    fn config_home_dir(&self) -> &'static str {
        ".local/share/opencode"
    }
    fn default_config_var(&self) -> &'static str {
        "XDG_DATA_HOME"
    }
    fn config_dir(&self, env: &[(String, String)]) -> Option<PathBuf> {
        config_dir(env)
    }
    fn config_var_value(&self, dir: &Path) -> Option<PathBuf> {
        dir.parent().map(Path::to_path_buf)
    }
    fn flags(&self, args: &[String]) -> (Flags, Vec<String>) {
        flags(args)
    }
    fn resume_argv(&self, program: &str, id: &str, flags: &[String]) -> Vec<String> {
        resume_argv(program, id, flags)
    }
    fn expected_transcript(&self, e: &Entry) -> Option<PathBuf> {
        let db = entry_db(e)?;
        db::session(&db, &e.session_id).ok()??;
        Some(db)
    }
    fn restore_path(&self, _e: &Entry, _config_dir: &Path, sid: &str) -> Result<PathBuf, String> {
        Err(format!(
            "OpenCode keeps sessions in its database, which park never writes: put it back with `jq -s '{{info: .[0].info, messages: [.[1:][] | {{info, parts}}]}}' transcript.jsonl > {sid}.json && opencode import {sid}.json` in park's archive of it"
        ))
    }
    fn transcript_needs_cwd(&self) -> bool {
        false
    }
    fn transcripts(&self, config_dir: &Path) -> Vec<(String, PathBuf)> {
        let db = config_dir.join("opencode.db");
        db::all(&db)
            .unwrap_or_default()
            .into_iter()
            .map(|(id, _)| (id, db.clone()))
            .collect()
    }
    fn transcript_bytes(&self, path: &Path, session_id: &str) -> std::io::Result<Vec<u8>> {
        db::export(path, session_id, None).map_err(std::io::Error::other)
    }
    fn read_transcript(&self, ident: &Identity) -> Option<super::transcript::TranscriptInfo> {
        let (db, id) = (ident.transcript.as_deref()?, ident.session_id.as_deref()?);
        // A scan reads the session's first and latest messages only.
        let bytes = db::export(db, id, Some(SCAN_MESSAGES)).ok()?;
        Some(transcript::parse(&bytes))
    }
    fn parse_transcript(&self, bytes: &[u8]) -> super::transcript::TranscriptInfo {
        transcript::parse(bytes)
    }
    fn message_of(&self, v: &serde_json::Value) -> Option<super::render::Message> {
        transcript::message_of(v)
    }
    fn markdown(&self, bytes: &[u8]) -> super::render::Conversation {
        transcript::markdown(bytes)
    }
    fn read_screen(&self, capture: &str) -> super::screen::ScreenReading {
        screen::read(capture)
    }
    fn cleanup_days(&self, _config_dir: &Path) -> Option<u64> {
        None
    }
    fn runs_session(&self, e: &Entry, pid: u32, start: u64, platform: &dyn Platform) -> bool {
        let Some(p) = platform.process(pid) else {
            return false;
        };
        let Some((_, idx)) = crate::adapters::platform::proctree::program_of(&p.argv) else {
            return false;
        };
        let a = AgentProc {
            agent: super::Agent::Opencode,
            root: pid,
            main: pid,
            prog_index: idx,
            argv: p.argv.clone(),
            env: platform.environ(pid).unwrap_or_default(),
            background: false,
        };
        claim(&a, start).is_ok_and(|(id, ..)| e.fresh_from.is_some() || id == e.session_id)
    }
    fn settle(&self) -> std::time::Duration {
        // Only argv names the session until the first prompt: alive with it for 2 s.
        std::time::Duration::from_secs(2)
    }
    fn identify_by_files(
        &self,
        _a: &AgentProc,
        _main_start: u64,
        _platform: &dyn Platform,
    ) -> Option<Identity> {
        None
    }
    fn identify_in_pane(
        &self,
        a: &AgentProc,
        title: &str,
        _screen_plain: &str,
        platform: &dyn Platform,
    ) -> Option<Identity> {
        Some(identify(a, title, platform))
    }
    fn read_transcript_file(
        &self,
        _path: &Path,
    ) -> std::io::Result<super::transcript::TranscriptInfo> {
        Err(std::io::Error::other(
            "an OpenCode session is read from its database by id",
        ))
    }
    fn has_status_file(&self) -> bool {
        // The plugin's record carries busy / idle / waiting.
        true
    }
    fn open_turn_is_busy(&self) -> bool {
        false
    }
    fn integration(&self) -> Option<&'static dyn super::Integration> {
        Some(&integrate::Plugin)
    }
}

/// How many of a session's latest messages a scan reads (besides its first).
const SCAN_MESSAGES: usize = 12;

#[cfg(test)]
mod tests;
