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
//!
//! Forks of OpenCode that only rename it (Kilo: `agents/kilo/`) are the same [`Kind`] with their
//! own [`Flavor`]: program names, directories, database file, titles.

pub mod db;
pub mod integrate;
pub mod screen;
pub mod transcript;

use super::spec::{ConfigDir, Identify, Main, Resume, Spec, Whitelist};
use super::{AgentProc, Identity};
use crate::adapters::platform::proctree::{program_of, ProcTable};
use crate::adapters::platform::{env_get, Platform};
use crate::model::entry::Entry;
use std::path::{Path, PathBuf};

/// Subcommands of OpenCode and its forks (Kilo adds `console` … `help`).
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
    "console",
    "cloud",
    "roll-call",
    "profile",
    "remote",
    "daemon",
    "config",
    "worktree",
    "help",
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
/// Flags that carry the session, a first prompt or a place to create (rebuilt from the id and the
/// session's directory, never replayed).
const SESSION_FLAGS: &[&str] = &["-s", "--session", "--prompt", "--worktree"];

/// How long a session title shows in the terminal title before OpenCode cuts it with `…`.
const TITLE_CHARS: usize = 37;

/// What OpenCode and a fork that only renames it tell apart beyond their [`Spec`]: directories,
/// database file, titles.
pub struct Flavor {
    /// Its names, release and everything else that is data.
    pub spec: &'static Spec,
    /// Its directory under the XDG data and config dirs.
    pub dir: &'static str,
    pub db_file: &'static str,
    /// The variable that overrides the database file.
    pub db_var: &'static str,
    /// The terminal title inside a session, before the session's title.
    pub title_prefix: &'static str,
    /// The terminal title on its home screen (and for a session not titled yet).
    pub home_title: &'static str,
    pub title_var: &'static str,
}

/// OpenCode's spec, which a fork takes whole but for its names and what is bound to its
/// [`Flavor`] (`agent`, `name`, `release`, `programs`, `config`, `identify`, `transcripts`,
/// `integration`: `agents/kilo/` sets them all).
pub const SPEC_OF_OPENCODE: Spec = Spec {
    agent: super::Agent::Opencode,
    name: "OpenCode",
    release: super::release::Release {
        name: "OpenCode",
        packages: &["opencode-ai", "opencode"],
        tested: ("1.18.33", "1.18.33"),
    },
    programs: &["opencode", "opencode.exe"],
    entry_script: None,
    interactive,
    // A node wrapper (Kilo's) runs the native binary as its child; the binary spawns copies of
    // itself as workers during a turn, which are not the session.
    main: Main::Native,
    config: ConfigDir::xdg_data("opencode", ".local/share/opencode"),
    flags: Whitelist {
        // One positional: the project path (the session's directory is where it resumes).
        skip_positional: 1,
        ..Whitelist::of(BOOL_FLAGS, VALUED_FLAGS, SESSION_FLAGS)
    },
    resume: Resume::Flag("-s"),
    identify: Identify::Pane(|a, title, _screen, platform| {
        identify(&OPENCODE_FLAVOR, a, title, platform)
    }),
    transcripts: |dir| OPENCODE_FLAVOR.sessions(dir),
    // Sessions live in one database, never written by park.
    transcript_at: None,
    transcript_needs_cwd: false,
    parse_transcript: transcript::parse,
    read_transcript_file: None,
    markdown: transcript::markdown,
    message_of: transcript::message_of,
    read_screen: screen::read,
    screen_escapes: false,
    limit_screen: None,
    generic_title: None,
    // The plugin's record carries busy / idle / waiting.
    has_status_file: true,
    open_turn_is_busy: false,
    // OpenCode never deletes sessions by itself.
    cleanup: None,
    deletes_transcripts: false,
    prompt_history: None,
    caller_session_vars: &[],
    // Only argv names the session until the first prompt: alive with it for 2 s.
    settle: std::time::Duration::from_secs(2),
    unidentified_blocks_unpark: true,
    shared_process: None,
    supervisor: None,
    // Its plugin is bound to its flavor: each flavor's `SPEC` sets it (a const cannot name a
    // static that names this const back).
    integration: None,
    first_prompt: true,
    process_title: None,
};

/// OpenCode, as data.
pub static SPEC: Spec = Spec {
    integration: Some(&OPENCODE_PLUGIN),
    ..SPEC_OF_OPENCODE
};

pub static OPENCODE_FLAVOR: Flavor = Flavor {
    spec: &SPEC,
    dir: "opencode",
    db_file: "opencode.db",
    db_var: "OPENCODE_DB",
    title_prefix: "OC | ",
    home_title: "OpenCode",
    title_var: "OPENCODE_DISABLE_TERMINAL_TITLE",
};

impl Flavor {
    fn setup_hint(&self) -> String {
        format!(
            "run `park integrate {}` (a plugin that tells park its session) and restart this {}, or start it with -s <id>",
            self.spec.agent.as_str(),
            self.spec.name
        )
    }

    /// Its global config dir (where plugins live).
    pub fn config_home(&self, env: &[(String, String)]) -> Option<PathBuf> {
        match env_get(env, "XDG_CONFIG_HOME").filter(|v| v.starts_with('/')) {
            Some(d) => Some(Path::new(d).join(self.dir)),
            None => env_get(env, "HOME").map(|h| Path::new(h).join(".config").join(self.dir)),
        }
    }

    /// Every session in the database under data dir `dir`, each with the database as its place.
    pub fn sessions(&self, dir: &Path) -> Vec<(String, PathBuf)> {
        let db = dir.join(self.db_file);
        db::Db::open(&db)
            .and_then(|c| c.all())
            .unwrap_or_default()
            .into_iter()
            .map(|(id, _)| (id, db.clone()))
            .collect()
    }

    /// The database a process with this environment uses.
    pub fn db_path(&self, env: &[(String, String)]) -> Option<PathBuf> {
        if let Some(db) = env_get(env, self.db_var).filter(|v| v.starts_with('/')) {
            return Some(PathBuf::from(db));
        }
        self.spec.config.dir(env).map(|d| d.join(self.db_file))
    }
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

fn claim(f: &Flavor, a: &AgentProc, start_ticks: u64) -> Result<Claim, String> {
    let home = crate::support::paths::park_home_from(|k| env_get(&a.env, k).map(str::to_string));
    if let Ok(home) = &home {
        if let Some(r) = integrate::read_record(&integrate::records_dir(home, f), a.main) {
            if r.start_ticks == start_ticks {
                let id = r
                    .session_id
                    .ok_or_else(|| format!("{}: its session was deleted", f.spec.name))?;
                return Ok((id, "plugin", Some(r.status)));
            }
        }
    }
    let args = &a.argv[a.prog_index + 1..];
    argv_session(args)
        .map(|id| (id, "argv", None))
        .ok_or_else(|| {
            format!(
                "{} keeps no per-process session record: {}",
                f.spec.name,
                f.setup_hint()
            )
        })
}

/// The identity of OpenCode (or fork) process `a` in a pane titled `title` (see the module doc).
pub fn identify(f: &Flavor, a: &AgentProc, title: &str, platform: &dyn Platform) -> Identity {
    let name = f.spec.name;
    let Some(db) = f.db_path(&a.env) else {
        return Identity::untargetable(format!(
            "{name}: neither XDG_DATA_HOME nor HOME in its environment"
        ));
    };
    let Some(start) = platform.process(a.main).map(|p| p.start_ticks) else {
        return Identity::untargetable(format!("{name}: the process is gone"));
    };
    let (id, source, status) = match claim(f, a, start) {
        Ok(c) => c,
        Err(why) => return Identity::untargetable(why),
    };
    let conn = match db::Db::open(&db) {
        Ok(c) => c,
        Err(why) => return Identity::untargetable(format!("{name}: {why}")),
    };
    let row = match conn.session(&id) {
        Ok(Some(r)) => r,
        Ok(None) => {
            return Identity::untargetable(format!(
                "{name}: session {id} is not in {} (no prompt yet?)",
                db.display()
            ))
        }
        Err(why) => return Identity::untargetable(format!("{name}: {why}")),
    };
    if row.parent_id.is_some() {
        return Identity::untargetable(format!("{name}: the recorded session is a sub-agent's"));
    }
    if source == "argv" {
        let started_ms = platform
            .started_secs_ago(start)
            .map(|ago| jiff::Timestamp::now().as_millisecond() - ago as i64 * 1000 - 1000);
        match started_ms.map(|t| conn.created_since(&row.directory, t, &id)) {
            Some(Ok(newer)) if newer.is_empty() => {}
            Some(Ok(_)) => {
                return Identity::untargetable(format!(
                    "{name}: another session began in {} after this process started (a /new, or another {name} there): argv no longer tells; {}",
                    row.directory,
                    f.setup_hint()
                ))
            }
            Some(Err(why)) => return Identity::untargetable(format!("{name}: {why}")),
            None => {
                return Identity::untargetable(format!("{name}: its start time is unreadable"))
            }
        }
    }
    if let Err(why) = title_agrees(f, title, &row, &conn) {
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
        name: None,
    }
}

/// The pane's title must show `row`'s session and no other's.
fn title_agrees(f: &Flavor, title: &str, row: &db::SessionRow, db: &db::Db) -> Result<(), String> {
    let name = f.spec.name;
    if title == f.home_title {
        return Err(format!(
            "{name} shows its home screen (or a session not titled yet): park cannot confirm a session there"
        ));
    }
    let Some(shown) = title.strip_prefix(f.title_prefix) else {
        return Err(format!(
            "{name}'s terminal title ({title:?}) does not name a session ({}?): park cannot confirm which session the pane shows",
            f.title_var
        ));
    };
    if !title_shows(shown, &row.title) {
        return Err(format!(
            "the pane shows the {name} session {shown:?}, not {:?} (switched with /sessions?): park will not guess",
            row.title
        ));
    }
    let twins = db
        .titled(&row.id)
        .map_err(|why| format!("{name}: {why}"))?
        .into_iter()
        .filter(|t| title_shows(shown, t))
        .count();
    if twins > 0 {
        return Err(format!(
            "two {name} sessions show as {shown:?}: park cannot tell which one the pane shows"
        ));
    }
    Ok(())
}

/// OpenCode (or a fork, by its [`Flavor`]) behind the [`super::AgentKind`] dispatch.
pub struct Kind {
    pub flavor: &'static Flavor,
}

static OPENCODE_PLUGIN: integrate::Plugin = integrate::Plugin(&OPENCODE_FLAVOR);

/// OpenCode itself.
pub static OPENCODE: Kind = Kind {
    flavor: &OPENCODE_FLAVOR,
};

impl Kind {
    fn entry_db(&self, e: &Entry) -> Option<PathBuf> {
        e.transcript.as_deref().map(PathBuf::from).or_else(|| {
            e.config_dir
                .as_deref()
                .map(|d| Path::new(d).join(self.flavor.db_file))
        })
    }
}

impl super::AgentKind for Kind {
    fn spec(&self) -> &'static Spec {
        self.flavor.spec
    }
    fn expected_transcript(&self, e: &Entry) -> Option<PathBuf> {
        let db = self.entry_db(e)?;
        db::Db::open(&db).ok()?.session(&e.session_id).ok()??;
        Some(db)
    }
    fn restore_path(&self, _e: &Entry, _config_dir: &Path, sid: &str) -> Result<PathBuf, String> {
        let program = self.flavor.spec.agent.as_str();
        Err(format!(
            "{} keeps sessions in its database, which park never writes: put it back with `jq -s '{{info: .[0].info, messages: [.[1:][] | {{info, parts}}]}}' transcript.jsonl > {sid}.json && {program} import {sid}.json` in park's archive of it",
            self.flavor.spec.name
        ))
    }
    fn transcript_bytes(&self, path: &Path, session_id: &str) -> std::io::Result<Vec<u8>> {
        db::Db::open(path)
            .and_then(|c| c.export(session_id, None))
            .map_err(std::io::Error::other)
    }
    fn read_transcript(&self, ident: &Identity) -> Option<super::transcript::TranscriptInfo> {
        let (db, id) = (ident.transcript.as_deref()?, ident.session_id.as_deref()?);
        // A scan reads the session's first and latest messages only.
        let bytes = db::Db::open(db)
            .and_then(|c| c.export(id, Some(SCAN_MESSAGES)))
            .ok()?;
        Some(transcript::parse(&bytes))
    }
    fn runs_session(&self, e: &Entry, pid: u32, _start: u64, platform: &dyn Platform) -> bool {
        let table = ProcTable::new(platform.processes().unwrap_or_default());
        let Some(root) = table.get(pid) else {
            return false;
        };
        let Some((_, idx)) = program_of(&root.argv) else {
            return false;
        };
        let main = self.flavor.spec.main_pid(&table, pid);
        let Some(start) = table.get(main).map(|p| p.start_ticks) else {
            return false;
        };
        let a = AgentProc {
            agent: self.flavor.spec.agent,
            root: pid,
            main,
            prog_index: idx,
            argv: root.argv.clone(),
            env: platform.environ(main).unwrap_or_default(),
            background: false,
        };
        claim(self.flavor, &a, start)
            .is_ok_and(|(id, ..)| e.fresh_from.is_some() || id == e.session_id)
    }
}

/// How many of a session's latest messages a scan reads (besides its first).
const SCAN_MESSAGES: usize = 12;

#[cfg(test)]
mod tests;
