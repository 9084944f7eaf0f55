//! Codex CLI: identity from the rollout / writer lock the TUI holds open (`--no-daemon`, or any
//! config override, which forces the embedded server), else from a thread id the pane shows because
//! the user opted into `thread-id` in `[tui] terminal_title`/`status_line`, else from a thread name in
//! the pane title that is unique among every thread this CODEX_HOME knows. Otherwise untargetable:
//! in daemon mode the TUI holds no session file and the daemon exposes no client-to-thread mapping.
//! The shared `codex app-server` daemon belongs to no pane and is never killed.

pub(crate) mod limit;
pub(crate) mod render;
pub mod screen;
pub mod transcript;

use super::release::Release;
use super::spec::{ConfigDir, Identify, Main, Resume, Spec, Whitelist};
use super::{Agent, AgentProc, Identity};
use crate::adapters::platform::proctree::{program_of, ProcTable};
use crate::adapters::platform::{Platform, ProcInfo};
use crate::agents::transcript::valid_session_id;
use std::path::{Path, PathBuf};

const SUBCOMMANDS: &[&str] = &[
    "exec",
    "e",
    "app-server",
    "login",
    "logout",
    "mcp",
    "mcp-server",
    "proto",
    "completion",
    "debug",
    "apply",
    "a",
    "cloud",
    "sandbox",
    "features",
    "agents",
    "help",
    "generate-ts",
    "responses-api-proxy",
    "stdio-to-uds",
];
pub const BOOL_FLAGS: &[&str] = &[
    "--no-daemon",
    "--full-auto",
    "--dangerously-bypass-approvals-and-sandbox",
    "--search",
    "--no-alt-screen",
    "--oss",
];
/// Valued flags that name a place or a config override for this run only: dropped.
const SKIP_VALUED: &[&str] = &["-C", "--cd", "-c", "--config"];
pub const VALUED_FLAGS: &[&str] = &[
    "--model",
    "-m",
    "--sandbox",
    "-s",
    "--ask-for-approval",
    "-a",
    "--profile",
    "-p",
    "--add-dir",
];

pub fn interactive(args: &[String]) -> bool {
    if args
        .iter()
        .any(|a| a == "--version" || a == "-V" || a == "--help" || a == "-h")
    {
        return false;
    }
    // A first positional that is not a subcommand is the initial prompt of an interactive TUI.
    match args.iter().find(|a| !a.starts_with('-')) {
        Some(first) => first == "resume" || !SUBCOMMANDS.contains(&first.as_str()),
        None => true,
    }
}

/// True for the shared daemon and its helpers, which must never be killed with a TUI's tree.
pub(crate) fn is_daemon(p: &ProcInfo) -> bool {
    match program_of(&p.argv) {
        Some((prog, i)) if prog == "codex" => p.argv.get(i + 1).is_some_and(|a| a == "app-server"),
        _ => false,
    }
}

/// The shared app-server daemon processes of a Codex home that are alive in `table`, with their
/// RSS: the pids its `app-server-daemon/daemon.pid` and `daemon-updater.pid` record (each a JSON
/// object `{"pid": N, ...}`, or a bare number), kept only when the process is a daemon.
pub fn daemons(
    table: &crate::adapters::platform::proctree::ProcTable,
    home: &std::path::Path,
) -> Vec<(u32, u64)> {
    ["daemon.pid", "daemon-updater.pid"]
        .iter()
        .filter_map(|f| {
            let text = std::fs::read_to_string(home.join("app-server-daemon").join(f)).ok()?;
            let pid = match serde_json::from_str::<serde_json::Value>(&text).ok()? {
                serde_json::Value::Object(o) => o.get("pid")?.as_u64()?,
                serde_json::Value::Number(n) => n.as_u64()?,
                _ => return None,
            } as u32;
            let p = table.get(pid).filter(|p| is_daemon(p))?;
            Some((pid, p.rss_bytes))
        })
        .collect()
}

/// Who holds thread `id`'s writer lock right now. Codex 0.171 keeps
/// `<home>/thread-writer-locks/<id>.lock` exclusively flocked by the thread's one live writer and
/// refuses a second ("already has an active writer"); the file itself stays after every exit, so
/// only a *held* lock means anything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Writer {
    /// No lock file, or nobody holds it: no writer.
    None,
    /// This home's shared app-server daemon: the thread is loaded there (a client is attached,
    /// a turn still runs, or it is within the ~60 s the daemon keeps an idle thread after its
    /// last client left). A resume through the daemon attaches to it; an embedded one is refused.
    Daemon(u32),
    /// Any other process (a `--no-daemon` TUI, `codex exec`, another app's app-server); 0 when
    /// the kernel does not name it.
    Other(u32),
}

/// The never-two-writers rule for Codex, from the thread's writer lock. `flags` are the entry's
/// recorded flags: `--no-daemon` resumes with an embedded server, which Codex refuses while the
/// shared daemon still has the thread loaded; any other resume attaches to the daemon.
pub fn writer_verdict(flags: &[String], writer: &Writer) -> super::WriterVerdict {
    use super::WriterVerdict;
    if crate::support::fault::disabled("codex-writer-lock") {
        return WriterVerdict::Go;
    }
    match writer {
        Writer::None => WriterVerdict::Go,
        Writer::Other(pid) => WriterVerdict::Running(format!(
            "another process ({}) holds this thread's Codex writer lock: it is running there; cleared its parked state",
            if *pid == 0 { "pid unknown".to_string() } else { format!("pid {pid}") }
        )),
        Writer::Daemon(pid) if flags.iter().any(|f| f == "--no-daemon") => {
            WriterVerdict::Refuse(format!(
                "the shared Codex daemon (pid {pid}) still has this thread loaded, so a --no-daemon resume would be refused (\"already has an active writer\"); the daemon unloads an idle thread about a minute after its last client leaves: try again then"
            ))
        }
        Writer::Daemon(_) => WriterVerdict::Go,
    }
}

/// The writer of thread `id` under `home` (see [`Writer`]).
pub fn writer(home: &Path, id: &str, platform: &dyn Platform) -> Writer {
    let Some(id) = valid_session_id(id) else {
        return Writer::None;
    };
    let lock = home.join("thread-writer-locks").join(format!("{id}.lock"));
    let holders = platform.write_lock_holders(&lock);
    let Some(&first) = holders.first() else {
        return Writer::None;
    };
    let daemon = std::fs::read_to_string(home.join("app-server-daemon").join("daemon.pid"))
        .ok()
        .and_then(
            |t| match serde_json::from_str::<serde_json::Value>(&t).ok()? {
                serde_json::Value::Object(o) => o.get("pid")?.as_u64(),
                serde_json::Value::Number(n) => n.as_u64(),
                _ => None,
            },
        )
        .and_then(|p| u32::try_from(p).ok())
        .filter(|&p| platform.process(p).is_some_and(|q| is_daemon(&q)));
    match holders.iter().find(|&&h| Some(h) != daemon) {
        Some(&other) => Writer::Other(other),
        None => Writer::Daemon(first),
    }
}

/// The uuid at the end of `rollout-YYYY-MM-DDTHH-MM-SS-<uuid>.jsonl`.
pub fn rollout_id(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let stem = name.strip_prefix("rollout-")?.strip_suffix(".jsonl")?;
    // By bytes, but never inside a character: a non-ASCII name is simply not a rollout.
    valid_session_id(stem.get(stem.len().checked_sub(36)?..)?)
}

/// Ids named by files a process holds open under `home`: rollouts and writer locks.
pub(crate) fn ids_from_open_files(
    files: &[PathBuf],
    home: &Path,
) -> (Vec<String>, Option<PathBuf>) {
    let mut ids = vec![];
    let mut rollout = None;
    for f in files {
        if !f.starts_with(home) {
            continue;
        }
        let id = if f.starts_with(home.join("sessions")) {
            let id = rollout_id(f);
            if id.is_some() {
                rollout = Some(f.clone());
            }
            id
        } else if f.starts_with(home.join("thread-writer-locks")) {
            f.file_stem()
                .and_then(|s| s.to_str())
                .and_then(valid_session_id)
        } else {
            None
        };
        if let Some(id) = id {
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
    }
    (ids, rollout)
}

/// Every rollout under `home/sessions/YYYY/MM/DD/`, as (id, path).
pub fn all_rollouts(home: &Path) -> Vec<(String, PathBuf)> {
    let mut out = vec![];
    let mut stack = vec![(home.join("sessions"), 0)];
    while let Some((dir, depth)) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            // Do not follow symlinks out of the sessions tree.
            let Ok(ft) = e.file_type() else { continue };
            if ft.is_dir() && depth < 3 {
                stack.push((p, depth + 1));
            } else if ft.is_file() {
                if let Some(id) = rollout_id(&p) {
                    out.push((id, p));
                }
            }
        }
    }
    out
}

/// Which `[tui]` items of `config.toml` show the thread id: (`terminal_title`, `status_line`).
/// Only an opted-in slot is ever read for an id: a uuid elsewhere on screen (a draft, a cwd named
/// after another thread) says nothing about which thread this pane runs.
pub fn thread_id_slots(config_toml: &str) -> (bool, bool) {
    let mut in_tui = false;
    let (mut title, mut status) = (false, false);
    for raw in config_toml.lines() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.starts_with('[') {
            in_tui = line == "[tui]";
            continue;
        }
        let (key, value) = match line.split_once('=') {
            Some((k, v)) => (k.trim(), v),
            None => continue,
        };
        let has_id = value.contains("\"thread-id\"") || value.contains("'thread-id'");
        match (in_tui, key) {
            (true, "terminal_title") => title |= has_id,
            (true, "status_line") => status |= has_id,
            (false, "tui.terminal_title") => title |= has_id,
            (false, "tui.status_line") => status |= has_id,
            _ => {}
        }
    }
    (title, status)
}

fn uuid_re() -> &'static regex::Regex {
    static UUID: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    UUID.get_or_init(|| {
        regex::Regex::new(r"(?i)^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
            .unwrap()
    })
}

/// The known thread one slot's text names: a full uuid, or Codex's 29-char prefix plus `...`.
fn known_id(slot: &str, known: &[(String, PathBuf)]) -> Option<String> {
    let slot = slot
        .trim()
        .trim_start_matches(|c: char| !c.is_ascii_hexdigit())
        .to_lowercase();
    if uuid_re().is_match(&slot) {
        return known
            .iter()
            .find(|(id, _)| *id == slot)
            .map(|(id, _)| id.clone());
    }
    let prefix = slot.strip_suffix("...")?;
    if prefix.len() < 13 || !prefix.chars().all(|c| c.is_ascii_hexdigit() || c == '-') {
        return None;
    }
    let hits: Vec<&String> = known
        .iter()
        .map(|(id, _)| id)
        .filter(|id| id.starts_with(prefix))
        .collect();
    match hits.as_slice() {
        [one] => Some((*one).clone()),
        _ => None,
    }
}

/// A thread id the pane shows in an opted-in slot: a `" | "`-separated title segment (never the
/// one equal to the project name), or a `" · "`-separated status-line item (never the cwd, never
/// the composer). Every candidate must be a known thread, and all candidates must agree.
pub fn id_from_text(
    title: &str,
    status_line: &str,
    cwd: &str,
    slots: (bool, bool),
    known: &[(String, PathBuf)],
) -> Option<String> {
    let project = cwd.rsplit('/').next().unwrap_or(cwd);
    let mut found: Vec<String> = vec![];
    if slots.0 {
        found.extend(
            title
                .split(" | ")
                .skip(1)
                .filter(|seg| seg.trim() != project)
                .filter_map(|seg| known_id(seg, known)),
        );
    }
    if slots.1 {
        found.extend(
            status_line
                .split(" · ")
                .filter(|item| item.trim() != cwd)
                .filter_map(|item| known_id(item, known)),
        );
    }
    found.dedup();
    match found.as_slice() {
        [one] => Some(one.clone()),
        _ => None,
    }
}

/// The TUI's status line: the last non-empty line under the composer that has `·`-separated items.
pub fn status_line_of(screen: &str) -> &str {
    screen
        .lines()
        .rev()
        .filter(|l| !l.trim().is_empty())
        .take(4)
        .map(str::trim)
        .find(|l| {
            !l.starts_with('›')
                && l.contains(" · ")
                && !l.contains("for shortcuts")
                && !l.contains("esc to interrupt")
        })
        .unwrap_or("")
}

/// Thread names from `session_index.jsonl` (`{"id","thread_name","updated_at"}` per naming).
pub(crate) fn ids_named(home: &Path, name: &str) -> Vec<String> {
    let Ok(s) = std::fs::read_to_string(home.join("session_index.jsonl")) else {
        return vec![];
    };
    let mut ids = vec![];
    for line in s.lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if v.get("thread_name").and_then(|n| n.as_str()) == Some(name) {
            if let Some(id) = v
                .get("id")
                .and_then(|i| i.as_str())
                .and_then(valid_session_id)
            {
                if !ids.contains(&id) {
                    ids.push(id);
                }
            }
        }
    }
    ids
}

pub fn identify(
    a: &AgentProc,
    pane_title: &str,
    screen: &str,
    platform: &dyn Platform,
) -> Identity {
    let Some(home) = SPEC.config.dir(&a.env) else {
        return Identity::untargetable(
            "Codex: neither CODEX_HOME nor HOME in the process environment",
        );
    };
    let proc_cwd = platform
        .cwd(a.main)
        .map(|p| p.to_string_lossy().into_owned());
    let mut files = platform.open_files(a.main);
    if a.main != a.root {
        files.extend(platform.open_files(a.root));
    }
    let (ids, rollout) = ids_from_open_files(&files, &home);
    let found = |id: String, source: &'static str, transcript: Option<PathBuf>| {
        let transcript = transcript.or_else(|| {
            all_rollouts(&home)
                .into_iter()
                .find(|(i, _)| *i == id)
                .map(|(_, p)| p)
        });
        let reason = if transcript.is_some() {
            None
        } else {
            Some("no conversation yet (rollout not written): nothing to resume".to_string())
        };
        Identity {
            session_id: Some(id),
            source,
            transcript,
            reason,
            status_file: None,
            cwd: proc_cwd.clone(),
            job: None,
            name: None,
        }
    };
    match ids.len() {
        1 => return found(ids[0].clone(), "rollout-fd", rollout),
        n if n > 1 => {
            return Identity::untargetable(format!(
                "Codex TUI holds {n} different threads open; cannot tell which is on screen"
            ))
        }
        _ => {}
    }
    let known = all_rollouts(&home);
    let slots =
        thread_id_slots(&std::fs::read_to_string(home.join("config.toml")).unwrap_or_default());
    let cwd = proc_cwd.clone().unwrap_or_default();
    if let Some(id) = id_from_text(pane_title, status_line_of(screen), &cwd, slots, &known) {
        return found(id, "title-id", None);
    }
    // Default title is `<thread name> | <cwd basename>`; a spinner may prefix it while busy.
    if let Some((name, _)) = pane_title.rsplit_once(" | ") {
        let name = name
            .trim_start_matches(|c: char| !c.is_alphanumeric())
            .trim();
        if !name.is_empty() {
            let ids = ids_named(&home, name);
            if ids.len() == 1 {
                return found(ids[0].clone(), "title-name", None);
            }
            if ids.len() > 1 {
                return Identity::untargetable(format!(
                    "Codex daemon mode: {} threads are named {name:?}, so the pane title does not identify this one (add \"thread-id\" to [tui] terminal_title in config.toml, or run codex --no-daemon)",
                    ids.len()
                ));
            }
        }
    }
    Identity::untargetable(
        "Codex daemon mode: the thread runs inside the shared codex app-server, the TUI holds no session file, and the pane shows no unique thread name or id (add \"thread-id\" to [tui] terminal_title in config.toml, or run codex --no-daemon)",
    )
}

/// The argv tail without `resume <id>`: the session, rebuilt from the id, never replayed.
fn without_resume(args: &[String]) -> Vec<String> {
    // The subcommand is a positional `resume`, not the value of a flag (`-m resume` is a model).
    let mut sub = None;
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if a == "resume" {
            sub = Some(i);
            break;
        }
        let takes_value = VALUED_FLAGS.contains(&a) || SKIP_VALUED.contains(&a);
        i += if takes_value { 2 } else { 1 };
    }
    match sub {
        Some(i) => args[..i]
            .iter()
            .chain(
                args[i + 1..]
                    .iter()
                    .filter(|a| valid_session_id(a).is_none() && *a != "--last"),
            )
            .cloned()
            .collect(),
        None => args.to_vec(),
    }
}

/// Codex behind the [`super::AgentKind`] dispatch.
pub struct Codex;

/// Codex, as data.
pub static SPEC: Spec = Spec {
    agent: Agent::Codex,
    name: "Codex",
    // Its npm package and the versions park's e2e contract passed on (move with the pin in
    // `scripts/setup`).
    release: Release {
        name: "Codex",
        packages: &["@openai/codex"],
        tested: ("0.171.0", "0.171.0"),
    },
    programs: &["codex"],
    entry_script: None,
    interactive,
    // The node wrapper runs the native TUI as its child.
    main: Main::Innermost,
    config: ConfigDir::var_or_home("CODEX_HOME", ".codex"),
    flags: Whitelist {
        prepare: Some(without_resume),
        ..Whitelist::of(BOOL_FLAGS, VALUED_FLAGS, SKIP_VALUED)
    },
    resume: Resume::Subcommand("resume"),
    identify: Identify::Pane(identify),
    transcripts: |dir| {
        all_rollouts(dir)
            .into_iter()
            .filter_map(|(id, p)| Some((valid_session_id(&id)?, p)))
            .collect()
    },
    transcript_at: None,
    transcript_needs_cwd: false,
    parse_transcript: transcript::parse,
    read_transcript_file: Some(transcript::read_file),
    markdown: render::markdown,
    message_of: render::message_of,
    read_screen: screen::read,
    screen_escapes: true,
    limit_screen: Some(limit::read),
    generic_title: None,
    has_status_file: false,
    open_turn_is_busy: true,
    // Codex has no automatic cleanup.
    cleanup: None,
    deletes_transcripts: false,
    prompt_history: None,
    // Read for the same reason wherever a Codex build sets them.
    caller_session_vars: &["CODEX_THREAD_ID", "CODEX_SESSION_ID"],
    // Codex has no status file: alive with the id for 2 s is a started TUI.
    settle: std::time::Duration::from_secs(2),
    unidentified_blocks_unpark: false,
    shared_process: Some(is_daemon),
    supervisor: None,
    integration: None,
    first_prompt: true,
    process_title: None,
};

impl super::AgentKind for Codex {
    fn spec(&self) -> &'static Spec {
        &SPEC
    }
    fn expected_transcript(&self, e: &crate::model::entry::Entry) -> Option<PathBuf> {
        let home = Path::new(e.config_dir.as_deref()?);
        // The recorded path counts only when it is this session's rollout under CODEX_HOME.
        if let Some(t) = e
            .transcript
            .as_deref()
            .map(PathBuf::from)
            .filter(|t| {
                t.is_file()
                    && t.starts_with(home)
                    && !t.components().any(|c| c == std::path::Component::ParentDir)
            })
            .filter(|t| rollout_id(t).is_some_and(|id| id.eq_ignore_ascii_case(&e.session_id)))
        {
            return Some(t);
        }
        all_rollouts(home)
            .into_iter()
            .find(|(id, _)| *id == e.session_id)
            .map(|(_, p)| p)
    }
    fn restore_path(
        &self,
        e: &crate::model::entry::Entry,
        config_dir: &Path,
        sid: &str,
    ) -> Result<PathBuf, String> {
        // The rollout's own path is where Codex's thread table points; only under sessions/.
        let Some(t) = e.transcript.as_deref().map(PathBuf::from) else {
            return Err("no recorded rollout path".into());
        };
        let ok = t.starts_with(config_dir.join("sessions"))
            && !t.components().any(|c| c == std::path::Component::ParentDir)
            && rollout_id(&t).as_deref() == Some(sid);
        if !ok {
            return Err(format!(
                "recorded rollout {} is not this session's file under {}/sessions",
                t.display(),
                config_dir.display()
            ));
        }
        Ok(t)
    }
    fn writer(
        &self,
        e: &crate::model::entry::Entry,
        platform: &dyn Platform,
    ) -> Option<super::WriterVerdict> {
        let lock = e.config_dir.as_deref().map_or(Writer::None, |home| {
            writer(Path::new(home), &e.session_id, platform)
        });
        Some(writer_verdict(&e.flags, &lock))
    }
    fn runs_session(
        &self,
        e: &crate::model::entry::Entry,
        pid: u32,
        _start: u64,
        platform: &dyn Platform,
    ) -> bool {
        let table = ProcTable::new(platform.processes().unwrap_or_default());
        table
            .tree(pid, &|p| is_daemon(p))
            .iter()
            .filter_map(|p| table.get(*p))
            .any(|p| {
                super::classify(&p.argv).is_some_and(|(a, _)| a == super::Agent::Codex)
                    && (e.fresh_from.is_some()
                        || p.argv.iter().any(|a| a.eq_ignore_ascii_case(&e.session_id)))
            })
    }
    fn left_running_note(&self, table: &ProcTable, config_dir: &Path) -> Option<String> {
        // Honest about Codex: the client's tree is what was freed; the shared daemon stays.
        let d = daemons(table, config_dir);
        (!d.is_empty()).then(|| {
            format!(
                "the shared Codex daemon keeps running (pid {}, {}): only this client's tree was freed",
                d.iter().map(|x| x.0.to_string()).collect::<Vec<_>>().join(", "),
                park_protocol::human_bytes(d.iter().map(|x| x.1).sum())
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn daemons_are_the_recorded_pids_that_really_are_daemons() {
        use crate::adapters::platform::ProcInfo;
        let pi = |pid, argv: &[&str], rss| ProcInfo {
            pid,
            ppid: 1,
            argv: v(argv),
            rss_bytes: rss,
            ..ProcInfo::default()
        };
        let t = crate::adapters::platform::proctree::ProcTable::new(vec![
            pi(
                40,
                &["/h/.codex/bin/codex", "app-server", "--listen", "unix://"],
                180 << 20,
            ),
            pi(
                41,
                &[
                    "/h/.codex/bin/codex",
                    "app-server",
                    "daemon",
                    "pid-update-loop",
                ],
                5 << 20,
            ),
            pi(42, &["sleep", "100"], 1 << 20),
        ]);
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("app-server-daemon");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("daemon.pid"),
            r#"{"pid":40,"processStartTime":"x"}"#,
        )
        .unwrap();
        std::fs::write(dir.join("daemon-updater.pid"), "41\n").unwrap();
        assert_eq!(daemons(&t, d.path()), vec![(40, 180 << 20), (41, 5 << 20)]);
        // A recycled pid that is not a daemon any more, a dead one, garbage: none counted.
        std::fs::write(dir.join("daemon.pid"), r#"{"pid":42}"#).unwrap();
        std::fs::write(dir.join("daemon-updater.pid"), "not json").unwrap();
        assert!(daemons(&t, d.path()).is_empty());
        std::fs::write(dir.join("daemon.pid"), r#"{"pid":99}"#).unwrap();
        assert!(daemons(&t, d.path()).is_empty());
    }

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn a_flag_value_named_resume_is_not_the_subcommand() {
        // Found by the fuzz target `flags`: `-m resume` lost the model.
        assert_eq!(SPEC.flags(&v(&["-m", "resume"])).0, v(&["-m", "resume"]));
        assert_eq!(
            SPEC.flags(&v(&[
                "resume",
                "-m",
                "resume",
                "35c98558-0920-4e29-b81c-9304ca43fccb"
            ]))
            .0,
            v(&["-m", "resume"])
        );
    }

    #[test]
    fn rollout_names() {
        let p = Path::new("/h/.codex/sessions/2026/12/02/rollout-2026-12-02T14-10-44-01a23717-ebd6-78b3-92d8-1c871b3cf6cc.jsonl");
        assert_eq!(
            rollout_id(p).as_deref(),
            Some("01a23717-ebd6-78b3-92d8-1c871b3cf6cc")
        );
        assert_eq!(rollout_id(Path::new("/x/rollout-.jsonl")), None);
    }

    #[test]
    fn open_files_pick_the_rollout_under_this_home_only() {
        let home = Path::new("/h/.codex");
        let files = vec![
            PathBuf::from("/other/.codex/sessions/2026/12/02/rollout-2026-12-02T14-10-44-11111111-ebd6-78b3-92d8-1c871b3cf6cc.jsonl"),
            PathBuf::from("/h/.codex/sessions/2026/12/02/rollout-2026-12-02T14-10-44-01a23717-ebd6-78b3-92d8-1c871b3cf6cc.jsonl"),
            PathBuf::from("/h/.codex/thread-writer-locks/01a23717-ebd6-78b3-92d8-1c871b3cf6cc.lock"),
            PathBuf::from("/h/.codex/state_5.sqlite"),
        ];
        let (ids, rollout) = ids_from_open_files(&files, home);
        assert_eq!(ids, v(&["01a23717-ebd6-78b3-92d8-1c871b3cf6cc"]));
        assert!(rollout.unwrap().to_string_lossy().contains("01a23717"));
    }

    #[test]
    fn title_prefix_must_be_unique_known_and_opted_in() {
        let known = vec![
            (
                "01a2374a-cd6a-79c2-a082-438e2aaaaaaa".to_string(),
                PathBuf::new(),
            ),
            (
                "01a2374a-cd6a-79c2-a082-438e2bbbbbbb".to_string(),
                PathBuf::new(),
            ),
            (
                "01a2374b-0000-79c2-a082-438e2ccccccc".to_string(),
                PathBuf::new(),
            ),
        ];
        let on = (true, true);
        assert_eq!(
            id_from_text(
                "Mock x | same | 01a2374a-cd6a-79c2-a082-438e2...",
                "",
                "/w/same",
                on,
                &known
            ),
            None
        );
        assert_eq!(
            id_from_text(
                "Mock x | same | 01a2374b-0000-79c2-a082-438e2...",
                "",
                "/w/same",
                on,
                &known
            )
            .as_deref(),
            Some("01a2374b-0000-79c2-a082-438e2ccccccc")
        );
        assert_eq!(
            id_from_text(
                "t",
                "mock-model · /w · 01A2374B-0000-79C2-A082-438E2CCCCCCC",
                "/w",
                on,
                &known
            )
            .as_deref(),
            Some("01a2374b-0000-79c2-a082-438e2ccccccc")
        );
        // Not opted in: nothing on screen is read as an id.
        assert_eq!(
            id_from_text(
                "Mock x | same | 01a2374b-0000-79c2-a082-438e2...",
                "",
                "/w/same",
                (false, false),
                &known
            ),
            None
        );
        // A cwd named after another thread is the project slot, never the id.
        let other = "01a2374b-0000-79c2-a082-438e2ccccccc";
        assert_eq!(
            id_from_text(
                &format!("Mock x | {other}"),
                "",
                &format!("/w/{other}"),
                on,
                &known
            ),
            None
        );
        assert_eq!(
            id_from_text(
                "t",
                &format!("mock-model · /w/{other}"),
                &format!("/w/{other}"),
                on,
                &known
            ),
            None
        );
        // An unknown uuid is not a thread.
        assert_eq!(
            id_from_text(
                "Mock x | p | 99999999-0000-4000-8000-000000000000",
                "",
                "/w/p",
                on,
                &known
            ),
            None
        );
        // Two different known ids disagree: nothing.
        assert_eq!(
            id_from_text(
                "x | 01a2374b-0000-79c2-a082-438e2...",
                "m · 01a2374a-cd6a-79c2-a082-438e2aaaaaaa",
                "/w",
                on,
                &known
            ),
            None
        );
        assert_eq!(
            id_from_text("hello codex mock | cx-a", "", "/w/cx-a", on, &known),
            None
        );
    }

    #[test]
    fn thread_id_opt_in_is_read_from_the_tui_table_only() {
        assert_eq!(
            thread_id_slots(
                "[tui]\nterminal_title = [\"thread-title\", \"project\", \"thread-id\"]\n"
            ),
            (true, false)
        );
        assert_eq!(
            thread_id_slots("[tui]\nstatus_line = ['model', 'thread-id']\n"),
            (false, true)
        );
        assert_eq!(
            thread_id_slots("[other]\nterminal_title = [\"thread-id\"]\n"),
            (false, false)
        );
        assert_eq!(
            thread_id_slots("# terminal_title = [\"thread-id\"]\n[tui]\n"),
            (false, false)
        );
        assert_eq!(
            thread_id_slots("tui.terminal_title = [\"thread-id\"]"),
            (true, false)
        );
    }

    #[test]
    fn status_line_skips_the_composer_and_footer() {
        let screen = "› a draft · with 01a2374b-0000-79c2-a082-438e2ccccccc\n  mock-model default · /w/p · name · 01a2374b-0000-79c2-a082-438e2ccccccc\n  ← for agents · ? for shortcuts\n";
        assert!(status_line_of(screen).starts_with("mock-model default"));
    }

    #[test]
    fn interactive_and_flags() {
        assert!(interactive(&v(&[])));
        assert!(interactive(&v(&["--no-daemon"])));
        assert!(interactive(&v(&[
            "resume",
            "01a23717-ebd6-78b3-92d8-1c871b3cf6cc"
        ])));
        assert!(!interactive(&v(&["exec", "x"])));
        assert!(!interactive(&v(&["app-server", "daemon", "stop"])));
        let (k, d) = SPEC.flags(&v(&[
            "resume",
            "--no-daemon",
            "01a23717-ebd6-78b3-92d8-1c871b3cf6cc",
            "-s",
            "read-only",
            "-c",
            "notify=[\"sh\"]",
        ]));
        assert_eq!(k, v(&["--no-daemon", "-s", "read-only"]));
        assert!(d.is_empty());
        assert_eq!(
            SPEC.resume_argv("codex", "id", &k),
            v(&["codex", "resume", "--no-daemon", "-s", "read-only", "id"])
        );
    }
}
