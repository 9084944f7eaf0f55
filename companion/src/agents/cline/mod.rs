//! Cline CLI (`cline` 3.0.x): the node script `bin/cline` runs the Bun binary
//! `@cline/cli-linux-x64/bin/cline`, which shows as `cline [--tui] [--id …]`.
//!
//! Its sessions run in a **hub daemon** (`cline --cline-hub-daemon --cwd … --host 127.0.0.1
//! --port N`, in its own session, started by the first TUI and alive after every TUI): the TUI
//! is its client. So the session's own records name the hub, not the pane's process: measured on
//! 3.0.65 with two TUIs in one cwd, `sessions.db`'s `pid` (and `sessions/<id>/<id>.json`'s) is
//! the TUI's own only for the TUI that started the hub; every other row carries the hub's pid,
//! and a row resumed with `--id` keeps its old one. Its hooks (`~/.cline/hooks/TaskStart.sh`, …)
//! run as children of the hub too, so a hook cannot tell which TUI it serves. None of these is
//! used.
//!
//! Identity comes from the TUI's own words: each TUI process logs to `<data>/logs/cline.log`
//! (pino JSON lines, the file held open by the process) a `session.started` telemetry event
//! with its `pid` and `properties.sessionId` when it opens a session: at start (a fresh one, or
//! the `--id` it resumes) and at the first prompt after `/new`. The last such line of the
//! process's pid written since the process started (a recycled pid's lines are older) names its
//! session. Before that first prompt after `/new` the log still names the session before, while
//! the pane shows the start screen (`What can I do for you?`, title `Cline`): that row is
//! untargetable, never the old session.
//!
//! `<data>` is `$CLINE_DATA_DIR`, else `~/.cline/data`. A process run with `--data-dir`,
//! `--config` or `$CLINE_DIR` (another data dir) or with its log moved or off
//! (`CLINE_LOG_PATH`, `CLINE_LOG_ENABLED=0`) is untargetable with that reason.

pub mod screen;
pub mod transcript;

use super::release::Release;
use super::spec::{ConfigDir, Identify, Main, Resume, Spec, Whitelist};
use super::{Agent, AgentProc, Identity};
use crate::adapters::platform::proctree::{program_of, ProcTable};
use crate::adapters::platform::{env_get, Platform, ProcInfo};
use crate::agents::transcript::valid_session_id;
use crate::model::entry::Entry;
use serde_json::Value;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// Subcommands (`cline --help`), none of them a TUI.
const SUBCOMMANDS: &[&str] = &[
    "auth",
    "config",
    "plugin",
    "skill",
    "connect",
    "mcp",
    "doctor",
    "history",
    "h",
    "hook",
    "schedule",
    "hub",
    "dashboard",
    "update",
    "version",
    "kanban",
];
/// Flags that make a run no interactive TUI (a daemon, a one-shot, a protocol server, help).
const NON_INTERACTIVE: &[&str] = &[
    "--cline-hub-daemon",
    "--acp",
    "--json",
    "-z",
    "--zen",
    "--kanban",
    "--update",
    "-V",
    "--version",
    "-h",
    "--help",
];
/// Flags with a value (so their value is no prompt).
const VALUED: &[&str] = &[
    "--auto-approve",
    "-c",
    "--cwd",
    "--thinking",
    "--compaction",
    "--id",
    "-P",
    "--provider",
    "-k",
    "--key",
    "-m",
    "--model",
    "-s",
    "--system",
    "--retries",
    "-t",
    "--timeout",
    "--config",
    "--data-dir",
    "--hooks-dir",
];

pub const BOOL_FLAGS: &[&str] = &["-p", "--plan", "-i", "--tui"];
pub const VALUED_FLAGS: &[&str] = &[
    "-P",
    "--provider",
    "-m",
    "--model",
    "--auto-approve",
    "--thinking",
    "-s",
    "--system",
    "--compaction",
];
/// Dropped with their value: the session (rebuilt from the id), the cwd (the pane's), and an API
/// key, which park never records.
const SKIPPED: &[&str] = &["--id", "-c", "--cwd", "-k", "--key"];
/// `--thinking`'s levels (a bare `--thinking` means `medium`).
const THINKING: &[&str] = &["none", "low", "medium", "high", "xhigh"];
/// Flags that move Cline's data dir away from the one park reads.
const OTHER_DATA_DIR: &[&str] = &["--data-dir", "--config"];

fn name_of(a: &str) -> &str {
    a.split_once('=').map_or(a, |(n, _)| n)
}

/// Whether an argv tail starts the TUI: no subcommand, no one-shot or daemon flag, and a prompt
/// only with `--tui` (a bare prompt runs it headless).
pub fn interactive(args: &[String]) -> bool {
    if matches!(args.first(), Some(a) if SUBCOMMANDS.contains(&a.as_str())) {
        return false;
    }
    let mut prompt = false;
    let mut tui = false;
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        let n = name_of(a);
        if NON_INTERACTIVE.contains(&n) {
            return false;
        }
        if n == "-i" || n == "--tui" {
            tui = true;
        }
        if VALUED.contains(&n) && !a.contains('=') {
            // `--thinking` alone takes no value.
            if n == "--thinking"
                && !args
                    .get(i + 1)
                    .is_some_and(|v| THINKING.contains(&v.as_str()))
            {
                i += 1;
                continue;
            }
            i += 2;
            continue;
        }
        if !a.starts_with('-') {
            prompt = true;
        }
        i += 1;
    }
    tui || !prompt
}

/// A Cline session id (`1796411703276_fgpt0`: milliseconds, `_`, a short lowercase tag), the
/// shape [`valid_session_id`] takes for it.
pub fn valid_id(s: &str) -> Option<String> {
    valid_session_id(s).filter(|v| v.contains('_') && !v.starts_with("ses_"))
}

/// Whether `p` is the shared hub daemon.
pub fn is_hub(p: &ProcInfo) -> bool {
    program_of(&p.argv).is_some_and(|(prog, i)| {
        prog == "cline" && p.argv[i + 1..].iter().any(|a| a == "--cline-hub-daemon")
    })
}

/// How much of the log's end is read (it grows by a few hundred bytes per turn).
const LOG_TAIL: u64 = 8 << 20;

fn read_tail(p: &Path) -> std::io::Result<Vec<u8>> {
    let mut f = std::fs::File::open(p)?;
    let len = f.metadata()?.len();
    let from = len.saturating_sub(LOG_TAIL);
    f.seek(SeekFrom::Start(from))?;
    let mut b = Vec::with_capacity((len - from) as usize);
    f.read_to_end(&mut b)?;
    Ok(b)
}

/// What the log says of process `pid` since `since`: the session it last started, `Err` when it
/// last stopped one (it is exiting; or, seen after `/new` in a resumed TUI, it left that session
/// and logs the next one only at its first prompt) or logged none.
pub fn logged_session(log: &[u8], pid: u32, since: jiff::Timestamp) -> Result<String, String> {
    let mut last: Option<Result<String, String>> = None;
    for line in log.split(|&b| b == b'\n') {
        // Cheap filter first: only this pid's telemetry lines are parsed.
        let needle = format!("\"pid\":{pid},");
        if !line.windows(needle.len()).any(|w| w == needle.as_bytes()) {
            continue;
        }
        let Ok(v) = serde_json::from_slice::<Value>(line) else {
            continue;
        };
        if v.get("pid").and_then(Value::as_u64) != Some(pid as u64) {
            continue;
        }
        let at = v
            .get("time")
            .and_then(Value::as_str)
            .and_then(|t| t.parse::<jiff::Timestamp>().ok());
        if at.is_none_or(|t| t < since) {
            continue;
        }
        let id = v
            .get("properties")
            .and_then(|p| p.get("sessionId"))
            .and_then(Value::as_str);
        match (v.get("event").and_then(Value::as_str), id) {
            (Some("session.started"), Some(id)) => {
                last = Some(
                    valid_id(id)
                        .ok_or_else(|| format!("its log names no valid session id ({id:?})")),
                );
            }
            (Some("session.stopped"), Some(id)) => {
                last = Some(Err(format!(
                    "its log says session {id} stopped: it is exiting, or it left it with /new and has not started the next one yet (its first prompt does)"
                )));
            }
            _ => {}
        }
    }
    last.unwrap_or_else(|| {
        Err("its log names no session of this process yet (it is still starting)".into())
    })
}

/// The data dir and log file of a Cline process, or why they are not where park reads.
fn data_and_log(args: &[String], env: &[(String, String)]) -> Result<(PathBuf, PathBuf), String> {
    if let Some(f) = args.iter().find(|a| OTHER_DATA_DIR.contains(&name_of(a))) {
        return Err(format!(
            "Cline runs with {f}, a data dir park does not read: run it with CLINE_DATA_DIR=<dir> instead"
        ));
    }
    if env_get(env, "CLINE_DIR").is_some_and(|v| !v.is_empty())
        && env_get(env, "CLINE_DATA_DIR").is_none_or(str::is_empty)
    {
        return Err("Cline runs with CLINE_DIR, a data dir park does not read: set CLINE_DATA_DIR=$CLINE_DIR/data too".into());
    }
    let off = env_get(env, "CLINE_LOG_ENABLED")
        .map(|v| v.trim().to_ascii_lowercase())
        .is_some_and(|v| v == "0" || v == "false");
    if off {
        return Err("Cline runs with CLINE_LOG_ENABLED off: its log is the only record of which session this process runs".into());
    }
    let level = env_get(env, "CLINE_LOG_LEVEL").map(|v| v.trim().to_ascii_lowercase());
    if level
        .as_deref()
        .is_some_and(|l| matches!(l, "warn" | "error" | "fatal" | "silent"))
    {
        return Err("Cline runs with CLINE_LOG_LEVEL above info: its log no longer says which session this process runs".into());
    }
    let Some(data) = SPEC.config.dir(env) else {
        return Err("Cline: neither CLINE_DATA_DIR nor HOME in the process environment".into());
    };
    let log = match env_get(env, "CLINE_LOG_PATH")
        .map(str::trim)
        .filter(|v| !v.is_empty())
    {
        Some(p) => PathBuf::from(p),
        None => data.join("logs").join("cline.log"),
    };
    Ok((data, log))
}

/// The session process `main` (started `start_ticks`) logged last, from its own log.
fn session_of(
    main: u32,
    start_ticks: u64,
    args: &[String],
    env: &[(String, String)],
    platform: &dyn Platform,
) -> Result<(String, PathBuf), String> {
    let (data, log) = data_and_log(args, env)?;
    // The log the process writes is the one it holds open.
    let holds = platform
        .open_files(main)
        .iter()
        .any(|f| f == &log || std::fs::canonicalize(f).ok() == std::fs::canonicalize(&log).ok());
    if !holds {
        return Err(format!(
            "Cline: the process does not hold its log {} open, the only record of which session it runs",
            log.display()
        ));
    }
    let Some(ago) = platform.started_secs_ago(start_ticks) else {
        return Err("Cline: the process's start time cannot be read, so its log lines cannot be told from a recycled pid's".into());
    };
    // Whole seconds: a second of slack before the start, never before an earlier process's.
    let since = jiff::Timestamp::now()
        .checked_sub(jiff::SignedDuration::from_secs(ago as i64 + 2))
        .map_err(|e| e.to_string())?;
    let bytes = read_tail(&log).map_err(|e| format!("Cline: {}: {e}", log.display()))?;
    let id = logged_session(&bytes, main, since).map_err(|e| format!("Cline: {e}"))?;
    Ok((id, data))
}

pub fn identify(a: &AgentProc, title: &str, screen: &str, platform: &dyn Platform) -> Identity {
    let Some(start) = platform.process(a.main).map(|p| p.start_ticks) else {
        return Identity::untargetable("Cline: the process is gone");
    };
    let args = &a.argv[a.prog_index + 1..];
    let (id, data) = match session_of(a.main, start, args, &a.env, platform) {
        Ok(x) => x,
        Err(why) => return Identity::untargetable(why),
    };
    let transcript = transcript::path(&data, "", &id);
    let record = std::fs::read(transcript::record_path(&data, &id))
        .ok()
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok());
    let cwd = record
        .as_ref()
        .and_then(|r| r.get("cwd")?.as_str().map(str::to_string))
        .or_else(|| {
            platform
                .cwd(a.main)
                .map(|p| p.to_string_lossy().into_owned())
        });
    // The record's `status` is the hub's: `running` while a turn is in flight. `idle` and
    // `completed` say nothing of this process (a resumed session keeps the `completed` its last
    // process's exit wrote until its next turn): the screen decides then.
    let status = record
        .as_ref()
        .and_then(|r| r.get("status")?.as_str())
        .filter(|s| *s == "running")
        .map(|_| "busy".to_string());
    let name = record.as_ref().and_then(|r| {
        r.get("metadata")?
            .get("title")?
            .as_str()
            .map(str::to_string)
    });
    let reason = if !transcript.is_file() {
        Some("no conversation yet (nothing said in this session): nothing to resume".to_string())
    } else if screen::start_screen(screen) || title.trim() == "Cline" {
        // `/new` shows the start screen at once but logs the new session only at its first
        // prompt: until then the log names the session before, which the pane no longer shows.
        return Identity::untargetable(format!(
            "Cline shows a new session (after /new) with no prompt yet; its log still names the one before ({id}), which this pane no longer runs"
        ));
    } else {
        None
    };
    Identity {
        session_id: Some(id),
        source: "log",
        transcript: Some(transcript),
        reason,
        status_file: status,
        cwd,
        job: None,
        name,
    }
}

/// Cline CLI behind the [`super::AgentKind`] dispatch.
pub struct Cline;

/// Cline CLI, as data.
pub static SPEC: Spec = Spec {
    agent: Agent::Cline,
    name: "Cline",
    // Its npm package and the versions park's e2e contract passed on (move with the pin in
    // `scripts/setup`).
    release: Release {
        name: "Cline CLI",
        packages: &["cline", "@cline/cli"],
        tested: ("3.0.65", "3.0.65"),
    },
    programs: &["cline"],
    entry_script: None,
    interactive,
    // The node wrapper (when one shows) runs the Bun binary, which runs the TUI.
    main: Main::Innermost,
    config: ConfigDir::var_or_home("CLINE_DATA_DIR", ".cline/data"),
    // A bare `--thinking` (its level left to the default, `medium`) is not replayed: the
    // whitelist reads `--thinking` with its value, as `--thinking medium` is written.
    flags: Whitelist::of(BOOL_FLAGS, VALUED_FLAGS, SKIPPED),
    resume: Resume::Flag("--id"),
    identify: Identify::Pane(identify),
    transcripts: transcript::all,
    transcript_at: Some(transcript::path),
    transcript_needs_cwd: false,
    parse_transcript: transcript::parse,
    read_transcript_file: None,
    markdown: transcript::markdown,
    message_of: transcript::message_of,
    read_screen: screen::read,
    screen_escapes: false,
    limit_screen: None,
    // A fresh session's title (until its first prompt sets `> <prompt>`).
    generic_title: Some(|t| t.trim() == "Cline"),
    // Its session record's `status` (`running` / `idle`).
    has_status_file: true,
    open_turn_is_busy: false,
    // Cline keeps sessions until the user deletes them.
    cleanup: None,
    deletes_transcripts: false,
    prompt_history: None,
    caller_session_vars: &[],
    // Its own log confirms the resumed session.
    settle: std::time::Duration::ZERO,
    // Any unidentified Cline could be running the session.
    unidentified_blocks_unpark: true,
    shared_process: Some(is_hub),
    supervisor: None,
    integration: None,
    // A positional prompt without `--tui` is a one-shot task, not the TUI: a fresh start primed
    // with the archived conversation is not offered.
    first_prompt: false,
    process_title: None,
};

impl super::AgentKind for Cline {
    fn spec(&self) -> &'static Spec {
        &SPEC
    }
    /// The messages file, as park's JSONL (line 1 the session, then one message a line).
    fn transcript_bytes(&self, path: &Path, _session_id: &str) -> std::io::Result<Vec<u8>> {
        transcript::export(path)
    }
    fn read_transcript(&self, ident: &Identity) -> Option<super::transcript::TranscriptInfo> {
        transcript::read_file(ident.transcript.as_ref()?).ok()
    }
    fn restore_path(&self, _e: &Entry, _config_dir: &Path, sid: &str) -> Result<PathBuf, String> {
        Err(format!(
            "Cline keeps a session as its record, its messages and a database row, which park never writes: put the messages back with `jq -s '{{version: 1, sessionId: .[0].sessionId, messages: .[1:]}}' transcript.jsonl > ~/.cline/data/sessions/{sid}/{sid}.messages.json` in park's archive of it"
        ))
    }
    fn runs_session(&self, e: &Entry, pid: u32, _start: u64, platform: &dyn Platform) -> bool {
        let table = ProcTable::new(platform.processes().unwrap_or_default());
        let main = SPEC.main_pid(&table, pid);
        let (Some(p), Some(env)) = (table.get(main), platform.environ(main)) else {
            return false;
        };
        let Some((_, idx)) = program_of(&p.argv) else {
            return false;
        };
        session_of(main, p.start_ticks, &p.argv[idx + 1..], &env, platform)
            .is_ok_and(|(id, _)| e.fresh_from.is_some() || id == e.session_id)
    }
    fn left_running_note(&self, table: &ProcTable, _config_dir: &Path) -> Option<String> {
        // Honest about Cline: the pane's tree is what was freed; the shared hub stays.
        let hubs: Vec<&ProcInfo> = table.all().iter().filter(|p| is_hub(p)).collect();
        (!hubs.is_empty()).then(|| {
            format!(
                "the shared Cline hub daemon keeps running (pid {}, {} MiB): only this pane's tree was freed",
                hubs.iter().map(|p| p.pid.to_string()).collect::<Vec<_>>().join(", "),
                hubs.iter().map(|p| p.rss_bytes).sum::<u64>() >> 20
            )
        })
    }
}

#[cfg(test)]
mod tests;
