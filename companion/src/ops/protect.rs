//! Protecting every transcript, not only parked ones: `park archive --all`, the daily automatic
//! run, `park archive --prune`, and the archive's size.
//!
//! Contract:
//! * **Which transcripts.** Claude deletes session files untouched for `cleanupPeriodDays` (default
//!   30, by mtime), so `--all` archives every Claude transcript (`<config>/projects/<dir>/<id>.jsonl`
//!   under every known config dir: `$CLAUDE_CONFIG_DIR`, `~/.claude`, and those recorded in the
//!   ledger and the archive) whose age is within `CLEANUP_WARN_DAYS` of that config dir's cleanup
//!   age, live or not, parked or not. An agent that keeps every transcript (Codex, Qwen Code) is
//!   archived only when asked (`--agent <name>` or `--agent all`), all of it. `--any-age` drops
//!   the age test.
//! * **Read only.** The agent's files are only read (never opened for writing, never locked), so
//!   a live writer is never blocked. Symlinks inside `projects/` are not followed.
//! * **Idempotent.** `archive/<id>/source.json` records the transcript's path, size and mtime at
//!   the last complete copy; an unchanged transcript is not copied again. Without that record, an
//!   archived copy byte-equal to the transcript counts as unchanged (the record is written then).
//! * **Never torn.** A copy is complete only when the transcript's size and mtime are the same
//!   before and after it and the copy ends on a whole line; otherwise it is retried, and after
//!   the retries it is reported `partial` and recorded incomplete (so the next run copies again).
//! * **Prune** removes an archived session only when no ledger entry names it (never a parked
//!   session), no agent runs it, the agent's transcript is gone from every place park knows
//!   (the agent's path, the recorded source path; when no place is known it is kept), and its
//!   newest time (archived, parked, last active) is older than the asked age. It is re-checked
//!   right before each removal.
//! * **Daily run.** With `[archive] auto = true` in `$PARK_HOME/config.toml` (off by default),
//!   park commands and the waker start `park archive --all` in the background at most once a day
//!   (`$PARK_HOME/auto-archive.last` holds the time of the last start; the log goes to
//!   `auto-archive.log`).

use crate::model::entry::{Entry, MuxPlace};
use crate::store::archive::{self, Tombstone};
use park_protocol::reports::{ProtectItem, ProtectOutcome, ProtectOutput, PruneItem};
use park_protocol::Agent;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// How often a copy is retried while the agent is writing the transcript.
const COPY_TRIES: u32 = 3;
/// The automatic run starts at most this often.
pub(crate) const AUTO_EVERY: Duration = Duration::from_secs(24 * 3600);
/// The tmux session a resurrected session opens in when park never saw it in a pane.
pub(crate) const RESURRECT_SESSION: &str = "park";

/// Where a session park never saw in a pane comes back: a new window of tmux session
/// [`RESURRECT_SESSION`] (the resurrect path opens it on the server park talks to).
pub(crate) fn resurrect_place() -> MuxPlace {
    MuxPlace {
        kind: crate::adapters::mux::MuxKind::Tmux.as_str().into(),
        server: String::new(),
        pane: String::new(),
        session: RESURRECT_SESSION.into(),
        window_index: 0,
        window_name: String::new(),
        pane_index: 0,
        title: String::new(),
        pane_title: String::new(),
        pane_proc: (0, 0),
    }
}

/// Which agents `--all` covers (`--agent`: an agent's name, or `all`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    /// Without `--agent`: the agents that delete their transcripts by themselves.
    Deleting,
    Agent(Agent),
    All,
}

impl Which {
    fn has(self, a: Agent) -> bool {
        match self {
            Which::Deleting => crate::agents::of(a).spec().deletes_transcripts,
            Which::Agent(x) => x == a,
            Which::All => true,
        }
    }
}

/// `--agent`'s parser: every agent's name and `all`, listed for help and completions.
pub fn which_parser() -> impl clap::builder::TypedValueParser<Value = Which> {
    use clap::builder::TypedValueParser;
    let names: Vec<&'static str> = crate::agents::all()
        .iter()
        .map(|k| k.spec().agent.as_str())
        .chain(["all"])
        .collect();
    clap::builder::PossibleValuesParser::new(names).map(|name| {
        crate::agents::all()
            .iter()
            .map(|k| k.spec().agent)
            .find(|a| a.as_str() == name)
            .map_or(Which::All, Which::Agent)
    })
}

/// One transcript found on disk.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Source {
    pub agent: Agent,
    pub session_id: String,
    pub path: PathBuf,
    pub config_dir: PathBuf,
    pub config_var: String,
    /// After how many days the agent deletes it (None: never).
    pub cleanup_days: Option<u64>,
}

/// What `source.json` records about the last copy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceRecord {
    pub path: String,
    pub size: u64,
    pub mtime_ns: i128,
    /// False: the transcript changed while it was copied (the copy may miss its end).
    pub complete: bool,
    pub copied_at: String,
}

/// Size and mtime of a file, as compared for idempotence and torn copies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    pub size: u64,
    pub mtime_ns: i128,
}

pub fn stamp(p: &Path) -> Option<Stamp> {
    let m = std::fs::symlink_metadata(p).ok()?;
    if !m.is_file() {
        return None;
    }
    let t = m.modified().ok()?;
    let ns = match t.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(d) => d.as_nanos() as i128,
        Err(e) => -(e.duration().as_nanos() as i128),
    };
    Some(Stamp {
        size: m.len(),
        mtime_ns: ns,
    })
}

/// Pure: does `--all` take a transcript `age_days` old whose agent deletes after `cleanup_days`?
/// `Err` says why not.
pub fn due(
    agent: Agent,
    age_days: u64,
    cleanup_days: Option<u64>,
    any_age: bool,
) -> Result<(), String> {
    if any_age || crate::support::fault::disabled("archive-all-age") {
        return Ok(());
    }
    match cleanup_days {
        // Codex never deletes: archived only when asked for by name (`--agent`), all of them.
        None => Ok(()),
        Some(limit) if age_days + crate::agents::CLEANUP_WARN_DAYS >= limit => Ok(()),
        Some(limit) => Err(format!(
            "{age_days} day(s) old; {} deletes after {limit}",
            agent.as_str()
        )),
    }
}

/// Pure: is the transcript as it is now already in the archive, completely?
pub fn unchanged(rec: Option<&SourceRecord>, path: &Path, now: Stamp) -> bool {
    if crate::support::fault::disabled("archive-all-idempotent") {
        return false;
    }
    rec.is_some_and(|r| {
        r.complete && Path::new(&r.path) == path && r.size == now.size && r.mtime_ns == now.mtime_ns
    })
}

fn record_path(home: &Path, sid: &str) -> PathBuf {
    archive::dir(home, sid).join("source.json")
}

pub fn read_record(home: &Path, sid: &str) -> Option<SourceRecord> {
    let b = crate::store::ledger::read_nofollow(&record_path(home, sid)).ok()?;
    serde_json::from_slice(&b).ok()
}

fn write_record(home: &Path, sid: &str, r: &SourceRecord) {
    let _ = crate::store::ledger::write_atomic(
        &record_path(home, sid),
        serde_json::to_string_pretty(r)
            .expect("record serialises")
            .as_bytes(),
    );
}

/// `$CLAUDE_CONFIG_DIR` / `~/.claude` (or `$CODEX_HOME` / `~/.codex`) of the invoking user, then
/// the config dirs recorded in the ledger and the archive; each once, only existing directories.
pub(crate) fn config_dirs(
    agent: Agent,
    env: &dyn Fn(&str) -> Option<String>,
    known: &[(Agent, Option<String>, Option<String>)],
) -> Vec<(PathBuf, String)> {
    let env = |k: &str| env(k).filter(|v| !v.is_empty());
    let mut out: Vec<(PathBuf, String)> = vec![];
    let kind = crate::agents::of(agent);
    let config = &kind.spec().config;
    let (var, sub) = (config.var, config.home);
    if let Some(d) = env(var) {
        // The agent's own rule for the variable (it may name the dir's parent: XDG_DATA_HOME).
        if let Some(dir) = config.dir(&[(var.to_string(), d)]) {
            out.push((dir, var.to_string()));
        }
    }
    if let Some(h) = env("HOME") {
        let v = config.default_var;
        out.push((Path::new(&h).join(sub), v.to_string()));
    }
    for (a, dir, v) in known {
        if *a == agent {
            if let Some(d) = dir {
                out.push((
                    PathBuf::from(d),
                    v.clone().unwrap_or_else(|| var.to_string()),
                ));
            }
        }
    }
    let mut seen: Vec<PathBuf> = vec![];
    out.retain(|(d, _)| {
        let key = d.canonicalize().unwrap_or_else(|_| d.clone());
        if !d.is_absolute() || !key.is_dir() || seen.contains(&key) {
            return false;
        }
        seen.push(key);
        true
    });
    out
}

/// Every transcript of one agent under a config dir, with the agent's cleanup rule.
pub(crate) fn sources(agent: Agent, dir: &Path, var: &str) -> Vec<Source> {
    let kind = crate::agents::of(agent);
    let days = kind.spec().cleanup_days(dir);
    (kind.spec().transcripts)(dir)
        .into_iter()
        .map(|(session_id, path)| Source {
            agent,
            session_id,
            path,
            config_dir: dir.to_path_buf(),
            config_var: var.to_string(),
            cleanup_days: days,
        })
        .collect()
}

/// The invoking user's environment, as [`config_dirs`] reads it.
pub fn process_env(k: &str) -> Option<String> {
    std::env::var(k).ok()
}

/// Every transcript of the asked agents, from the dirs of [`config_dirs`].
pub(crate) fn discover(
    home: &Path,
    env: &dyn Fn(&str) -> Option<String>,
    entries: &[Entry],
    which: Which,
) -> Vec<Source> {
    let (tombs, _) = crate::store::archive::index::load_tombs(home);
    let mut known: Vec<(Agent, Option<String>, Option<String>)> = entries
        .iter()
        .map(|e| (e.agent, e.config_dir.clone(), e.config_var.clone()))
        .collect();
    known.extend(
        tombs
            .iter()
            .map(|t| (t.agent, t.config_dir.clone(), t.config_var.clone())),
    );
    let mut out = vec![];
    for agent in park_protocol::Agent::ALL {
        if !which.has(agent) {
            continue;
        }
        for (dir, var) in config_dirs(agent, env, &known) {
            out.extend(sources(agent, &dir, &var));
        }
    }
    out
}

/// A ledger entry to archive `src` through the one archiving path (`archive::archive`): the
/// parked entry when there is one, else the existing tombstone's record (its place kept), else a
/// fresh record whose resurrection opens a window in the `park` tmux session.
fn entry_for(src: &Source, cwd: &str, entries: &[Entry], old: Option<&Tombstone>) -> Entry {
    let path = src.path.to_string_lossy().into_owned();
    if let Some(e) = entries
        .iter()
        .find(|e| e.agent == src.agent && e.session_id.eq_ignore_ascii_case(&src.session_id))
    {
        let mut e = e.clone();
        e.transcript = Some(path);
        return e;
    }
    let t = match old {
        Some(t) => t.clone(),
        None => Tombstone {
            schema: archive::TOMB_SCHEMA,
            agent: src.agent,
            session_id: src.session_id.clone(),
            cwd: cwd.to_string(),
            program: src.agent.as_str().to_string(),
            flags: vec![],
            config_dir: Some(src.config_dir.to_string_lossy().into_owned()),
            config_var: Some(src.config_var.clone()),
            source_transcript: None,
            place: resurrect_place(),
            ai_title: None,
            first_prompt: None,
            last_assistant: None,
            parked_at: None,
            archived_at: String::new(),
            last_active: None,
            group: None,
            notes: String::new(),
            transcript_bytes: 0,
            markdown_bytes: 0,
            turns: 0,
            prompts_only: false,
            warnings: vec![],
        },
    };
    let mut e = t.to_entry();
    e.place = t.place.clone();
    e.transcript = Some(path);
    e.config_dir = Some(src.config_dir.to_string_lossy().into_owned());
    e.config_var = Some(src.config_var.clone());
    if e.cwd.is_empty() {
        e.cwd = cwd.to_string();
    }
    e
}

fn ends_on_line(p: &Path) -> bool {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut f) = std::fs::File::open(p) else {
        return false;
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    if len == 0 {
        return true;
    }
    let mut b = [0u8; 1];
    f.seek(SeekFrom::Start(len - 1)).is_ok() && f.read_exact(&mut b).is_ok() && b[0] == b'\n'
}

/// Archives one transcript (or says why not). Pure decisions above, I/O here.
fn protect_one(
    home: &Path,
    src: &Source,
    entries: &[Entry],
    any_age: bool,
    dry_run: bool,
) -> ProtectItem {
    let item = |outcome: ProtectOutcome, reason: Option<String>, bytes: u64| ProtectItem {
        agent: src.agent,
        session_id: src.session_id.clone(),
        transcript: src.path.to_string_lossy().into_owned(),
        outcome,
        reason,
        bytes,
    };
    let Some(before) = stamp(&src.path) else {
        return item(
            ProtectOutcome::Skipped,
            Some("gone or not a regular file".into()),
            0,
        );
    };
    let age = crate::agents::age_days(&src.path).unwrap_or(0);
    if let Err(why) = due(src.agent, age, src.cleanup_days, any_age) {
        return item(ProtectOutcome::NotDue, Some(why), 0);
    }
    let rec = read_record(home, &src.session_id);
    if unchanged(rec.as_ref(), &src.path, before) {
        return item(ProtectOutcome::Unchanged, None, 0);
    }
    let adir = archive::dir(home, &src.session_id);
    let old = archive::read_meta(&adir).ok();
    // Archived before this record existed (a park): a byte-equal copy needs no new one.
    if rec.is_none() && old.is_some() && !crate::support::fault::disabled("archive-all-idempotent")
    {
        let copy = crate::store::ledger::read_nofollow(&adir.join("transcript.jsonl")).ok();
        let now = std::fs::read(&src.path).ok();
        if copy.is_some() && copy == now && stamp(&src.path) == Some(before) {
            write_record(home, &src.session_id, &record(src, before, true));
            return item(ProtectOutcome::Unchanged, None, 0);
        }
    }
    let bytes = match std::fs::read(&src.path) {
        Ok(b) => b,
        Err(e) => return item(ProtectOutcome::Skipped, Some(format!("unreadable: {e}")), 0),
    };
    let info = (crate::agents::of(src.agent).spec().parse_transcript)(&bytes);
    let Some(cwd) = info.cwd.clone().filter(|c| !c.is_empty()) else {
        return item(
            ProtectOutcome::Empty,
            Some("no conversation in it (it records no cwd)".into()),
            0,
        );
    };
    if dry_run {
        return item(ProtectOutcome::WouldArchive, None, before.size);
    }
    let mut last_err = None;
    for attempt in 0..COPY_TRIES {
        if attempt > 0 {
            std::thread::sleep(Duration::from_millis(300));
        }
        let Some(b) = stamp(&src.path) else {
            return item(
                ProtectOutcome::Skipped,
                Some("it disappeared while archiving".into()),
                0,
            );
        };
        let e = entry_for(src, &cwd, entries, old.as_ref());
        let r = archive::archive(home, &e, false);
        let a = stamp(&src.path);
        let copy = adir.join("transcript.jsonl");
        // Torn: the agent wrote while we copied, or the copy stops inside a record.
        let stable =
            (a == Some(b) && ends_on_line(&copy)) || crate::support::fault::disabled("torn-copy");
        match r {
            Ok(done) if stable => {
                write_record(home, &src.session_id, &record(src, b, true));
                return item(ProtectOutcome::Archived, None, done.tomb.transcript_bytes);
            }
            Ok(_) => last_err = Some("the agent wrote to it during every copy".to_string()),
            Err(err) if a == Some(b) => {
                return item(ProtectOutcome::Skipped, Some(err.to_string()), 0)
            }
            Err(err) => last_err = Some(err.to_string()),
        }
    }
    // Recorded incomplete: the next run copies it again.
    write_record(
        home,
        &src.session_id,
        &record(src, stamp(&src.path).unwrap_or(before), false),
    );
    item(ProtectOutcome::Partial, last_err, 0)
}

fn record(src: &Source, s: Stamp, complete: bool) -> SourceRecord {
    SourceRecord {
        path: src.path.to_string_lossy().into_owned(),
        size: s.size,
        mtime_ns: s.mtime_ns,
        complete,
        copied_at: jiff::Timestamp::now().to_string(),
    }
}

/// `park archive --all`: every source of [`discover`], each through [`protect_one`].
pub fn archive_all(
    home: &Path,
    env: &dyn Fn(&str) -> Option<String>,
    entries: &[Entry],
    which: Which,
    any_age: bool,
    dry_run: bool,
) -> ProtectOutput {
    let sources = discover(home, env, entries, which);
    let mut items: Vec<ProtectItem> = vec![];
    for s in &sources {
        // One session id found twice (two config dirs): the first is archived, the other named.
        if let Some(prev) = items.iter().find(|i| i.session_id == s.session_id) {
            let why = format!("session also found at {}", prev.transcript);
            items.push(ProtectItem {
                agent: s.agent,
                session_id: s.session_id.clone(),
                transcript: s.path.to_string_lossy().into_owned(),
                outcome: ProtectOutcome::Skipped,
                reason: Some(why),
                bytes: 0,
            });
            continue;
        }
        items.push(protect_one(home, s, entries, any_age, dry_run));
    }
    let n = |o: ProtectOutcome| items.iter().filter(|i| i.outcome == o).count();
    ProtectOutput {
        schema: park_protocol::SCHEMA_VERSION,
        dry_run,
        archived: n(ProtectOutcome::Archived) + n(ProtectOutcome::WouldArchive),
        unchanged: n(ProtectOutcome::Unchanged),
        skipped: n(ProtectOutcome::Skipped),
        partial: n(ProtectOutcome::Partial),
        not_due: n(ProtectOutcome::NotDue),
        empty: n(ProtectOutcome::Empty),
        bytes: items.iter().map(|i| i.bytes).sum(),
        archive_bytes: archive_bytes(home),
        items,
    }
}

pub fn render_protect(o: &ProtectOutput) -> String {
    let mut t = String::new();
    for i in &o.items {
        let line = match i.outcome {
            ProtectOutcome::Archived | ProtectOutcome::WouldArchive => format!(
                "{} {} {} ({})\n",
                i.outcome,
                i.agent.as_str(),
                i.session_id,
                park_protocol::human_bytes(i.bytes)
            ),
            ProtectOutcome::Skipped | ProtectOutcome::Partial => format!(
                "{} {} {}: {} ({})\n",
                i.outcome,
                i.agent.as_str(),
                i.session_id,
                i.reason.as_deref().unwrap_or(""),
                i.transcript
            ),
            _ => continue,
        };
        t.push_str(&line);
    }
    t.push_str(&format!(
        "{} {}, unchanged {}, skipped {}, partial {}, not near cleanup {}; {} copied; archive {}\n",
        if o.dry_run {
            "would archive"
        } else {
            "archived"
        },
        o.archived,
        o.unchanged,
        o.skipped,
        o.partial,
        o.not_due,
        park_protocol::human_bytes(o.bytes),
        park_protocol::human_bytes(o.archive_bytes),
    ));
    t
}

/// Total bytes under `$PARK_HOME/archive` (symlinks counted as themselves, never followed).
pub fn archive_bytes(home: &Path) -> u64 {
    fn walk(p: &Path, depth: u32) -> u64 {
        let Ok(m) = std::fs::symlink_metadata(p) else {
            return 0;
        };
        if !m.is_dir() || depth > 8 {
            return m.len();
        }
        std::fs::read_dir(p)
            .map(|rd| rd.flatten().map(|e| walk(&e.path(), depth + 1)).sum())
            .unwrap_or(0)
    }
    walk(&archive::root(home), 0)
}

// --------------------------------------------------------------------------------------------
// Prune

/// Is the agent's own transcript still somewhere park knows?
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Presence {
    Present,
    Gone,
    /// No place is known to look: treated as present (never delete when unsure).
    Unknown,
}

/// What prune knows about one archived session.
#[derive(Debug, Clone)]
pub struct PruneFacts {
    pub session_id: String,
    pub has_entry: bool,
    pub running: bool,
    pub transcript: Presence,
    /// Newest of archived / parked / last active.
    pub newest: Option<jiff::Timestamp>,
    pub bytes: u64,
}

/// Pure: remove (Ok) or keep (Err: why).
pub(crate) fn prune_verdict(
    f: &PruneFacts,
    now: jiff::Timestamp,
    older_than: Duration,
) -> Result<(), String> {
    if f.has_entry && !crate::support::fault::disabled("prune-parked") {
        return Err("parked (a ledger entry names it)".into());
    }
    if f.running && !crate::support::fault::disabled("prune-running") {
        return Err("an agent runs it".into());
    }
    match f.transcript {
        _ if crate::support::fault::disabled("prune-present") => {}
        Presence::Present => return Err("the agent's transcript still exists".into()),
        Presence::Unknown => {
            return Err("no known place to check for the agent's transcript".into())
        }
        Presence::Gone => {}
    }
    let Some(newest) = f.newest else {
        return Err("no time recorded".into());
    };
    let age = now.as_second() - newest.as_second();
    if age < older_than.as_secs() as i64 {
        return Err(format!("newer than {}s", older_than.as_secs()));
    }
    Ok(())
}

/// Where the agent's transcript of `t` could be, and whether any is there.
pub(crate) fn presence(t: &Tombstone, entry: Option<&Entry>) -> Presence {
    let e = entry.cloned().unwrap_or_else(|| t.to_entry());
    let mut places: Vec<PathBuf> = vec![];
    // Claude's path is derived from the cwd: without one it names nothing.
    if !t.cwd.is_empty() || !crate::agents::of(t.agent).spec().transcript_needs_cwd {
        if let Some(p) = crate::agents::expected_transcript(&e) {
            places.push(p);
        }
    }
    if let Some(s) = &t.source_transcript {
        places.push(PathBuf::from(s));
    }
    if places.is_empty() {
        return if t.prompts_only {
            Presence::Gone
        } else {
            Presence::Unknown
        };
    }
    if places.iter().any(|p| p.is_file()) {
        Presence::Present
    } else {
        Presence::Gone
    }
}

fn newest(t: &Tombstone) -> Option<jiff::Timestamp> {
    [
        Some(t.archived_at.as_str()),
        t.parked_at.as_deref(),
        t.last_active.as_deref(),
    ]
    .into_iter()
    .flatten()
    .filter_map(|s| s.parse::<jiff::Timestamp>().ok())
    .max()
}

fn dir_bytes(d: &Path) -> u64 {
    std::fs::read_dir(d)
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| std::fs::symlink_metadata(e.path()).ok())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

pub fn prune_facts(
    home: &Path,
    t: &Tombstone,
    entries: &[Entry],
    live: &crate::scan::live::LiveSet,
) -> PruneFacts {
    let entry = entries
        .iter()
        .find(|e| e.session_id.eq_ignore_ascii_case(&t.session_id));
    let mut p = presence(t, entry);
    if let Some(r) = read_record(home, &t.session_id) {
        if Path::new(&r.path).is_file() {
            p = Presence::Present;
        }
    }
    PruneFacts {
        session_id: t.session_id.clone(),
        has_entry: entry.is_some(),
        running: live.contains(&t.session_id),
        transcript: p,
        newest: newest(t),
        bytes: dir_bytes(&archive::dir(home, &t.session_id)),
    }
}

/// The plan: (would remove, kept with reasons).
pub fn prune_plan(
    home: &Path,
    entries: &[Entry],
    live: &crate::scan::live::LiveSet,
    older_than: Duration,
) -> (Vec<PruneItem>, Vec<PruneItem>) {
    let (tombs, _) = crate::store::archive::index::load_tombs(home);
    let now = jiff::Timestamp::now();
    let (mut go, mut keep) = (vec![], vec![]);
    for t in &tombs {
        let f = prune_facts(home, t, entries, live);
        let it = |reason| PruneItem {
            session_id: t.session_id.clone(),
            bytes: f.bytes,
            reason,
        };
        match prune_verdict(&f, now, older_than) {
            Ok(()) => go.push(it(None)),
            Err(why) => keep.push(it(Some(why))),
        }
    }
    (go, keep)
}

/// Removes one archived session after checking again that it may go. `Err`: kept, why.
pub fn prune_one(
    home: &Path,
    ledger: &crate::store::ledger::Ledger,
    live: &crate::scan::live::LiveSet,
    sid: &str,
    older_than: Duration,
) -> Result<(), String> {
    let sid = archive::checked_id(sid).map_err(|e| e.to_string())?;
    let d = archive::dir(home, &sid);
    let t = archive::read_meta(&d).map_err(|e| e.to_string())?;
    let (entries, _) = ledger.all();
    prune_verdict(
        &prune_facts(home, &t, &entries, live),
        jiff::Timestamp::now(),
        older_than,
    )?;
    if !std::fs::symlink_metadata(&d).is_ok_and(|m| m.is_dir()) {
        return Err(format!("{} is not a directory", d.display()));
    }
    std::fs::remove_dir_all(&d).map_err(|e| format!("cannot remove {}: {e}", d.display()))
}

// --------------------------------------------------------------------------------------------
// The daily automatic run

fn auto_stamp(home: &Path) -> PathBuf {
    home.join("auto-archive.last")
}

/// Pure: is a run due, the last one having started at `last`?
pub(crate) fn auto_due(last: Option<SystemTime>, now: SystemTime) -> bool {
    match last {
        None => true,
        // A last run "in the future" (a clock set back) waits a day from now, never loops.
        Some(l) => now.duration_since(l).is_ok_and(|d| d >= AUTO_EVERY),
    }
}

/// Starts `park archive --all --auto` in the background when `[archive] auto` is on and the last
/// start is a day old. Cheap otherwise (one file read). Never waits for the run.
pub fn ensure_auto(ctx: &crate::ctx::Ctx) {
    let home = &ctx.ledger.home;
    if !crate::store::config::load(home).is_ok_and(|c| c.archive_auto) {
        return;
    }
    let last = || {
        std::fs::metadata(auto_stamp(home))
            .and_then(|m| m.modified())
            .ok()
    };
    if !auto_due(last(), SystemTime::now()) {
        return;
    }
    let key = crate::store::lock::key(&["auto-archive"]);
    let Ok(crate::store::lock::TryLock::Acquired(_l)) = crate::store::lock::try_lock(home, &key)
    else {
        return;
    };
    // Under the lock: another park may have started it a moment ago.
    if !auto_due(last(), SystemTime::now()) {
        return;
    }
    let now = jiff::Timestamp::now().to_string();
    if crate::store::ledger::write_atomic(&auto_stamp(home), format!("{now}\n").as_bytes()).is_err()
    {
        return;
    }
    let Ok(log) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(home.join("auto-archive.log"))
    else {
        return;
    };
    let mut cmd = std::process::Command::new(&ctx.exe);
    cmd.args(["archive", "--all"])
        .stdin(std::process::Stdio::null())
        .stdout(
            log.try_clone()
                .map(Into::into)
                .unwrap_or(std::process::Stdio::null()),
        )
        .stderr(log)
        .envs(ctx.park_env());
    use std::os::unix::process::CommandExt;
    cmd.process_group(0);
    let _ = cmd.spawn();
}

// --------------------------------------------------------------------------------------------
// The verbs

/// The sessions an agent runs now, from one process scan (no screens); `None`: unknown.
pub fn live_now(ctx: &crate::ctx::Ctx) -> Option<crate::scan::live::LiveSet> {
    crate::scan::scan(ctx.platform.as_ref(), ctx.mux.as_ref(), false)
        .ok()
        .map(|s| crate::scan::live::LiveSet::from_scan(&s))
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "11111111-1111-4111-8111-111111111111";

    #[test]
    fn selection_by_age_follows_the_agents_cleanup() {
        // Claude default 30 days, warned 7 days ahead: 23 days old is due, 22 is not.
        assert!(due(Agent::Claude, 23, Some(30), false).is_ok());
        assert!(due(Agent::Claude, 40, Some(30), false).is_ok());
        let why = due(Agent::Claude, 22, Some(30), false).unwrap_err();
        assert!(
            why.contains("22 day(s) old") && why.contains("after 30"),
            "{why}"
        );
        assert!(due(Agent::Claude, 0, Some(30), true).is_ok());
        // cleanupPeriodDays 0 or tiny: everything is due.
        assert!(due(Agent::Claude, 0, Some(0), false).is_ok());
        assert!(due(Agent::Claude, 0, Some(5), false).is_ok());
        // Codex never deletes: when asked for, every rollout is taken.
        assert!(due(Agent::Codex, 400, None, false).is_ok());
    }

    #[test]
    fn an_unchanged_transcript_is_not_copied_again_but_any_change_is() {
        let p = Path::new("/h/.claude/projects/-x/a.jsonl");
        let s = Stamp {
            size: 10,
            mtime_ns: 5,
        };
        let rec = SourceRecord {
            path: p.to_string_lossy().into_owned(),
            size: 10,
            mtime_ns: 5,
            complete: true,
            copied_at: String::new(),
        };
        assert!(unchanged(Some(&rec), p, s));
        assert!(!unchanged(None, p, s));
        assert!(!unchanged(Some(&rec), p, Stamp { size: 11, ..s }));
        assert!(!unchanged(Some(&rec), p, Stamp { mtime_ns: 6, ..s }));
        assert!(!unchanged(Some(&rec), Path::new("/other.jsonl"), s));
        // A partial copy is never "unchanged": the next run copies again.
        let partial = SourceRecord {
            complete: false,
            ..rec
        };
        assert!(!unchanged(Some(&partial), p, s));
    }

    fn facts() -> PruneFacts {
        PruneFacts {
            session_id: A.into(),
            has_entry: false,
            running: false,
            transcript: Presence::Gone,
            newest: Some("2026-01-01T00:00:00Z".parse().unwrap()),
            bytes: 0,
        }
    }

    #[test]
    fn prune_never_picks_a_parked_running_present_or_recent_session() {
        let now: jiff::Timestamp = "2026-06-01T00:00:00Z".parse().unwrap();
        let day = Duration::from_secs(86_400);
        assert!(prune_verdict(&facts(), now, 30 * day).is_ok());
        let keep = |f: PruneFacts| prune_verdict(&f, now, 30 * day).unwrap_err();
        assert!(keep(PruneFacts {
            has_entry: true,
            ..facts()
        })
        .contains("parked"));
        assert!(keep(PruneFacts {
            running: true,
            ..facts()
        })
        .contains("runs it"));
        assert!(keep(PruneFacts {
            transcript: Presence::Present,
            ..facts()
        })
        .contains("still exists"));
        assert!(keep(PruneFacts {
            transcript: Presence::Unknown,
            ..facts()
        })
        .contains("no known place"));
        assert!(keep(PruneFacts {
            newest: None,
            ..facts()
        })
        .contains("no time"));
        assert!(prune_verdict(&facts(), now, 400 * day)
            .unwrap_err()
            .contains("newer"));
    }

    #[test]
    fn the_daily_run_is_due_once_a_day() {
        let now = SystemTime::now();
        assert!(auto_due(None, now));
        assert!(!auto_due(Some(now - Duration::from_secs(3600)), now));
        assert!(auto_due(Some(now - AUTO_EVERY), now));
        assert!(!auto_due(Some(now + Duration::from_secs(3600)), now));
    }

    #[test]
    fn config_dirs_are_the_users_then_the_recorded_ones_each_once() {
        let d = tempfile::tempdir().unwrap();
        let home = d.path().join("h");
        let other = d.path().join("other");
        std::fs::create_dir_all(home.join(".claude")).unwrap();
        std::fs::create_dir_all(&other).unwrap();
        let h = home.to_string_lossy().into_owned();
        let env = move |k: &str| (k == "HOME").then(|| h.clone());
        let known = vec![
            (
                Agent::Claude,
                Some(other.to_string_lossy().into_owned()),
                Some("CLAUDE_CONFIG_DIR".into()),
            ),
            (
                Agent::Claude,
                Some(home.join(".claude").to_string_lossy().into_owned()),
                None,
            ),
            (
                Agent::Codex,
                Some(d.path().to_string_lossy().into_owned()),
                None,
            ),
            (Agent::Claude, Some("relative".into()), None),
        ];
        let got = config_dirs(Agent::Claude, &env, &known);
        assert_eq!(
            got,
            vec![
                (home.join(".claude"), "HOME".to_string()),
                (other, "CLAUDE_CONFIG_DIR".to_string())
            ]
        );
    }

    /// Claude's first write of a session holds only bookkeeping records (title, modes: no cwd,
    /// no conversation) and the turn lands a moment later (2.1.197: ~70 ms after the reply is
    /// on screen; e2e_protect aged the file in between). Such a transcript is reported empty
    /// and not recorded, so the next run archives it once the turn is there.
    #[test]
    fn a_transcript_before_its_first_turn_is_empty_and_the_next_run_takes_it() {
        let d = tempfile::tempdir().unwrap();
        let park_home = d.path().join("park");
        let home = d.path().join("h");
        let proj = home.join(".claude/projects/-w");
        std::fs::create_dir_all(&proj).unwrap();
        std::fs::create_dir_all(&park_home).unwrap();
        let h = home.to_string_lossy().into_owned();
        let env = move |k: &str| (k == "HOME").then(|| h.clone());
        let t = proj.join(format!("{A}.jsonl"));
        let bookkeeping = [
            format!(r#"{{"type":"ai-title","aiTitle":"Quokka","sessionId":"{A}"}}"#),
            format!(r#"{{"type":"mode","mode":"default","sessionId":"{A}"}}"#),
            format!(r#"{{"type":"permission-mode","permissionMode":"default","sessionId":"{A}"}}"#),
        ];
        std::fs::write(&t, bookkeeping.join("\n") + "\n").unwrap();
        let run = || archive_all(&park_home, &env, &[], Which::Deleting, true, false);
        let o = run();
        assert_eq!((o.archived, o.empty), (0, 1), "{:?}", o.items);
        let turn = [
            format!(
                r#"{{"type":"user","message":{{"role":"user","content":"recover the quokka prompt"}},"uuid":"u1","parentUuid":null,"sessionId":"{A}","cwd":"/w","timestamp":"2026-12-06T07:00:00.000Z"}}"#
            ),
            format!(
                r#"{{"type":"assistant","message":{{"role":"assistant","content":[{{"type":"text","text":"PARKTEST-OK"}}]}},"uuid":"a1","parentUuid":"u1","sessionId":"{A}","cwd":"/w","timestamp":"2026-12-06T07:00:01.000Z"}}"#
            ),
        ];
        let mut f = std::fs::OpenOptions::new().append(true).open(&t).unwrap();
        std::io::Write::write_all(&mut f, (turn.join("\n") + "\n").as_bytes()).unwrap();
        drop(f);
        let o = run();
        assert_eq!((o.archived, o.empty), (1, 0), "{:?}", o.items);
        let o = run();
        assert_eq!((o.archived, o.unchanged), (0, 1), "{:?}", o.items);
    }
}
