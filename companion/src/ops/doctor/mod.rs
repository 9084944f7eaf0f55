//! `park doctor`: is everything park recorded still restorable, and is anything in the way?
//!
//! Contract: `gather` does the I/O once (ledger dir listing, one process scan without screens,
//! lock holders, git fingerprints, transcript ages); `diagnose` is a pure function of those facts
//! and returns findings. A finding is `attention` (exit 1: something can be lost, resumed twice or
//! will fail) or `info` (worth knowing, nothing to do). Doctor never changes anything: every
//! finding names the command that fixes it.

mod journal;

use crate::adapters::worktree;
use crate::model::entry::Fingerprint;
use crate::model::entry::{entry_id, Entry, EntryState};
use crate::store::ledger::{Ledger, LedgerError};
use park_protocol::reports::{Finding, Level, Report};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::agents::{age_days, CLEANUP_WARN_DAYS};
/// A `cleanupPeriodDays` below this deletes transcripts (or, at 0, stops keeping them) before
/// anyone can come back to them: doctor says so.
pub(crate) const CLEANUP_PERIOD_MIN_DAYS: i64 = 7;

/// Facts about one entry, read from the system.
#[derive(Debug, Clone)]
pub struct EntryFacts {
    /// `unpark::restorable` verdict.
    pub restorable: Result<(), String>,
    /// Some process is running this session right now (pids).
    pub running: Vec<u32>,
    /// The resumer recorded in a `resuming` entry is alive.
    pub resumer_alive: bool,
    /// Days since the transcript was last written, and after how many days the agent deletes it.
    pub transcript_age_days: Option<u64>,
    pub cleanup_days: Option<u64>,
    pub worktree_now: Option<Fingerprint>,
    /// The entry's pane is gone from the server park talks to (killed server, closed window).
    pub pane_lost: bool,
    /// zellij renumbered the entry's pane (a resurrected session): the pane carrying its mark.
    pub pane_moved: Option<String>,
    /// zellij: no pane can be shown to be the entry's slot (why).
    pub pane_unmatched: Option<String>,
    /// Another agent runs in the entry's slot: (pane, agent, its session id, pid). Enter at a
    /// resurrected zellij pane's "Waiting to run" prompt starts the pane's command afresh.
    pub slot_taken: Option<(String, String, Option<String>, u32)>,
}

impl Default for EntryFacts {
    fn default() -> Self {
        EntryFacts {
            restorable: Ok(()),
            running: vec![],
            resumer_alive: false,
            transcript_age_days: None,
            cleanup_days: None,
            worktree_now: None,
            pane_lost: false,
            pane_moved: None,
            pane_unmatched: None,
            slot_taken: None,
        }
    }
}

/// A lock file and who holds it.
#[derive(Debug, Clone)]
pub struct LockFacts {
    pub path: PathBuf,
    /// Held right now (the kernel says so).
    pub held: bool,
    /// The pid written inside by the owner.
    pub owner: Option<u32>,
    /// The owner is alive and is a park process.
    pub owner_is_park: bool,
    pub owner_alive: bool,
    pub mode_ok: bool,
    pub symlink: bool,
}

/// A file in `parked/` (or a park dir) that is not an entry park can read.
#[derive(Debug, Clone)]
pub struct FileFacts {
    pub path: PathBuf,
    pub kind: FileKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileKind {
    /// An entry file whose mode is not 0600 (or a dir not 0700): `(actual mode)`.
    BadMode(u32),
    Symlink,
    /// Not `<id>.json`, not a temp file of ours.
    Foreign,
    /// `.<name>.tmp-<pid>` left by an interrupted atomic write.
    LeftoverTemp,
}

pub struct Facts {
    pub entries: Vec<(Entry, EntryFacts)>,
    pub bad: Vec<LedgerError>,
    pub files: Vec<FileFacts>,
    pub locks: Vec<LockFacts>,
    pub scan_error: Option<String>,
    /// Whether a waker holds its lock (wake-ups are pending on entries' `wake`).
    pub waker_running: bool,
    /// Each known Claude config dir with its `cleanupPeriodDays` when set.
    pub claude_cleanup: Vec<(PathBuf, i64)>,
    pub archive_bytes: u64,
    /// `$PARK_HOME/config.toml` could not be read.
    pub config_error: Option<String>,
    /// `pins.json` could not be read (the autopilot then treats every session as pinned).
    pub pins_error: Option<String>,
    /// `sets.json` could not be read (every `@name` target fails).
    pub sets_error: Option<String>,
    /// Multiplexer sessions of parked entries that do not run now, with those entries' ids.
    pub sessions_down: Vec<(String, Vec<String>)>,
    /// The config turns automatic work on (autopilot mode, `limit_reset`).
    pub auto_on: bool,
    /// Each agent integration and its state (`park integrate`).
    pub integrations: Vec<crate::ops::integrate::Row>,
    /// Each running agent whose version could be read: (agent, version, pane or pid).
    pub versions: Vec<(crate::agents::Agent, String, String)>,
    /// Sessions lost with their multiplexer (the journal, as of this scan).
    pub lost: Vec<park_protocol::reports::LostSession>,
    /// The journal could not be read (corrupt, or written by a newer park).
    pub journal_error: Option<String>,
    /// tmux-resurrect's options as set on the server park talks to: (option, value).
    pub resurrect: Vec<(String, String)>,
}

/// Pure: the findings for a set of facts.
pub fn diagnose(f: &Facts) -> Report {
    let mut out = vec![];
    environment(f, &mut out);
    ledger_files(f, &mut out);
    let by_session = entries_by_session(f);
    for (e, x) in &f.entries {
        entry(e, x, &by_session, &mut out);
    }
    // An entry whose session is down has no pane to be lost, moved or unmatched: the session
    // finding below says what to do, not "park rebuild" (tmux) or "a new tab".
    out.retain(|x| {
        !(matches!(
            x.code.as_str(),
            "pane-lost" | "pane-moved" | "pane-unmatched"
        ) && f
            .sessions_down
            .iter()
            .any(|(_, ids)| ids.contains(&x.subject)))
    });
    locks(f, &mut out);
    settings(f, &mut out);
    journal::findings(f, &mut out);
    for (session, ids) in &f.sessions_down {
        out.push(att(
            "session-down",
            session,
            format!(
                "the zellij session {session:?} is not running: its {} parked pane(s) ({}) cannot be resumed in place until it is back (the ledger keeps them)",
                ids.len(),
                ids.join(", ")
            ),
            Some(format!(
                "`zellij attach {session}` (zellij resurrects it with its parked panes), then `park unpark <id>` — or `park rebuild` for all of them"
            )),
        ));
    }
    for r in &f.integrations {
        if let Some(why) = crate::ops::integrate::problem(r) {
            let name = r.agent.as_str();
            out.push(att(
                "integration",
                name,
                format!("the {name} integration: {why}"),
                Some(format!(
                    "`park integrate {name}` (or `park integrate --remove {name}` to stop)"
                )),
            ));
        }
    }
    untested_versions(f, &mut out);
    let ok = !out.iter().any(|x| x.level == Level::Attention);
    Report {
        schema: park_protocol::SCHEMA_VERSION,
        ok,
        entries: f.entries.len(),
        findings: out,
        archive_bytes: f.archive_bytes,
    }
}

/// A running agent at a version park was never tested with: one finding per agent and version,
/// naming where it runs. Info: park still works, but a state it cannot read has this cause.
fn untested_versions(f: &Facts, out: &mut Vec<Finding>) {
    let mut seen: Vec<(crate::agents::Agent, &str)> = vec![];
    for (agent, v, _) in &f.versions {
        if seen.contains(&(*agent, v.as_str())) {
            continue;
        }
        seen.push((*agent, v.as_str()));
        let Some(why) = crate::agents::of(*agent).spec().release.untested(v) else {
            continue;
        };
        let at: Vec<&str> = f
            .versions
            .iter()
            .filter(|(a, w, _)| a == agent && w == v)
            .map(|(_, _, at)| at.as_str())
            .collect();
        out.push(info(
            "untested-version",
            &format!("{} {v}", agent.as_str()),
            format!("{why} (running: {})", at.join(", ")),
        ));
    }
}

pub(crate) fn att(code: &str, subject: &str, message: String, fix: Option<String>) -> Finding {
    Finding {
        level: Level::Attention,
        code: code.into(),
        subject: subject.into(),
        message,
        fix,
    }
}

pub(crate) fn info(code: &str, subject: &str, message: String) -> Finding {
    Finding {
        level: Level::Info,
        code: code.into(),
        subject: subject.into(),
        message,
        fix: None,
    }
}

/// The process table could not be read; wake-ups pending with no waker.
fn environment(f: &Facts, out: &mut Vec<Finding>) {
    if let Some(e) = &f.scan_error {
        out.push(att(
            "scan",
            "process table",
            format!("cannot read the process table ({e}): running-while-parked was not checked"),
            None,
        ));
    }
    let waiting: Vec<&str> = f
        .entries
        .iter()
        .filter(|(e, _)| {
            e.state == EntryState::Parked && e.wake.as_ref().is_some_and(|w| w.pending())
        })
        .map(|(e, _)| e.id.as_str())
        .collect();
    if f.auto_on && !f.waker_running {
        out.push(att(
            "daemon-down",
            "daemon",
            "the autopilot is on in the config and no daemon is running: nothing is parked automatically".into(),
            Some("park daemon --ensure (the tmux plugin runs it at server start, every park command too)".into()),
        ));
    }
    if !waiting.is_empty() && !f.waker_running {
        out.push(att(
            "waker-down",
            "waker",
            format!(
                "{} wake-up(s) pending ({}) and no waker is running: they will not fire",
                waiting.len(),
                waiting.join(", ")
            ),
            Some(
                "park daemon --ensure (the tmux plugin runs it at server start, `park ls` too)"
                    .into(),
            ),
        ));
    }
}

/// Files in the ledger park cannot read, did not write, or left half-written.
fn ledger_files(f: &Facts, out: &mut Vec<Finding>) {
    for b in &f.bad {
        let (code, subject) = match b {
            LedgerError::Symlink(p) => ("symlink", p.display().to_string()),
            LedgerError::Corrupt(p, _) | LedgerError::Io(p, _) => {
                ("corrupt", p.display().to_string())
            }
            other => ("corrupt", other.to_string()),
        };
        out.push(att(
            code,
            &subject,
            b.to_string(),
            Some("inspect the file; fix it or move it out of the ledger by hand (park never deletes it)".into()),
        ));
    }
    for file in &f.files {
        let s = file.path.display().to_string();
        match file.kind {
            FileKind::BadMode(m) => out.push(att(
                "permissions",
                &s,
                format!("mode {m:o}; park keeps its files 0600 and its dirs 0700"),
                Some(format!("chmod go-rwx {}", crate::support::shell::quote(&s))),
            )),
            FileKind::Symlink => out.push(att(
                "symlink",
                &s,
                "a symlink inside park's home; park never follows it".into(),
                Some("replace it with the real file or directory".into()),
            )),
            FileKind::Foreign => out.push(att(
                "foreign",
                &s,
                "not a file park wrote (park reads only <agent>-<session id>.json here)".into(),
                Some("move it out of the ledger directory".into()),
            )),
            FileKind::LeftoverTemp => out.push(info(
                "leftover-temp",
                &s,
                "temp file left by an interrupted write; the entry itself is intact".into(),
            )),
        }
    }
}

/// Entry ids by `agent:session`: two entries naming one session are a finding (unpark resumes
/// it once, but the spare would claim "parked").
fn entries_by_session(f: &Facts) -> Vec<(String, Vec<&str>)> {
    let mut by_session: Vec<(String, Vec<&str>)> = vec![];
    for (e, _) in &f.entries {
        let k = format!("{}:{}", e.agent.as_str(), e.session_id.to_lowercase());
        match by_session.iter_mut().find(|(s, _)| *s == k) {
            Some((_, v)) => v.push(&e.id),
            None => by_session.push((k, vec![&e.id])),
        }
    }
    by_session
}

/// One entry: duplicate, running while parked, interrupted, unrestorable, near the agent's
/// cleanup, pane lost, checkout drifted.
fn entry(e: &Entry, x: &EntryFacts, by_session: &[(String, Vec<&str>)], out: &mut Vec<Finding>) {
    let id = e.id.as_str();
    let canonical = entry_id(e.agent, &e.session_id);
    if let Some((_, ids)) = by_session
        .iter()
        .find(|(k, _)| *k == format!("{}:{}", e.agent.as_str(), e.session_id.to_lowercase()))
    {
        if ids.len() > 1 && id != canonical {
            out.push(att(
                "duplicate",
                id,
                format!(
                    "names session {} like {}; one session must have one entry",
                    e.session_id,
                    ids.iter()
                        .filter(|i| **i != id)
                        .copied()
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                Some(format!("park forget {id}")),
            ));
        }
    }
    if !x.running.is_empty() {
        let what = match e.state {
            EntryState::Resuming if x.resumer_alive => None,
            _ => Some(()),
        };
        if what.is_some() {
            out.push(att(
                "running-while-parked",
                id,
                format!(
                    "⚠ running while parked: session {} is live (pid {:?}) but the ledger says {:?}",
                    e.session_id, x.running, e.state
                ),
                Some(format!(
                    "park unpark {id}  (sees it running and clears the parked state; starts nothing)"
                )),
            ));
            return;
        }
    }
    match e.state {
        EntryState::Parking => out.push(att(
            "interrupted",
            id,
            "park did not finish (interrupted between the claim and the finalize)".into(),
            Some(format!(
                "park unpark {id}  (resumes it, or clears it if the agent is still running)"
            )),
        )),
        EntryState::Resuming if x.resumer_alive => out.push(info(
            "resuming",
            id,
            format!(
                "a resume is in progress (verifier pid {})",
                e.resumer.map(|r| r.0).unwrap_or(0)
            ),
        )),
        EntryState::Resuming => out.push(att(
            "interrupted",
            id,
            "an unpark did not finish (its verifier is gone) and the session is not running".into(),
            Some(format!("park unpark {id}")),
        )),
        EntryState::Parked => {}
    }
    if let Err(why) = &x.restorable {
        out.push(att(
            "unrestorable",
            id,
            why.clone(),
            Some(format!("fix the cause, or `park forget {id}` to drop the entry (the archive keeps the transcript)")),
        ));
    }
    if let (Some(age), Some(limit)) = (x.transcript_age_days, x.cleanup_days) {
        if age + CLEANUP_WARN_DAYS >= limit {
            let left = limit.saturating_sub(age);
            out.push(att(
                "cleanup-age",
                id,
                format!(
                    "transcript last written {age} days ago; {} deletes sessions after {limit} days (about {left} left)",
                    e.agent.as_str()
                ),
                Some(format!(
                    "the archive keeps a copy ($PARK_HOME/archive/{}) and `park unpark {id}` puts it back if the agent deletes its own; a new turn resets the clock, or raise cleanupPeriodDays in the agent's settings.json", e.session_id
                )),
            ));
        }
    }
    if x.pane_lost && e.state == EntryState::Parked {
        out.push(att(
            "pane-lost",
            id,
            format!(
                "its pane {} ({}:{} \"{}\") is gone from {}",
                e.place.pane,
                e.place.session,
                e.place.window_index,
                e.place.window_name,
                e.place.server
            ),
            Some("park rebuild (recreates the window and resumes the session in its slot; --dry-run shows the plan)".into()),
        ));
    }
    if let Some((pane, agent, sid, pid)) = &x.slot_taken {
        out.push(att(
            "slot-taken",
            id,
            format!(
                "another {agent} runs in its slot {pane} (pid {pid}, session {}): a fresh one, started by Enter at zellij's \"Waiting to run\" prompt of a resurrected pane; this parked session is untouched",
                sid.as_deref().unwrap_or("unknown")
            ),
            Some(format!(
                "`park park {pane}` (parks the fresh one too, if you want it), then `park unpark {id}` resumes this one in a new pane; or leave both"
            )),
        ));
    }
    if e.state == EntryState::Parked {
        if let Some(to) = &x.pane_moved {
            out.push(info(
                "pane-moved",
                id,
                format!(
                    "zellij renumbered its pane: {} is now {to} (it carries the entry's mark); \
                     `park rebuild` re-points and resumes it there, `park unpark` finds it too",
                    e.place.pane
                ),
            ));
        }
        if let Some(why) = &x.pane_unmatched {
            out.push(att(
                "pane-unmatched",
                id,
                format!("zellij pane {} cannot be shown to be its slot: {why}", e.place.pane),
                Some(format!(
                    "park unpark {id} (resumes it in a new pane of its tab; park never types into a pane it cannot match)"
                )),
            ));
        }
    }
    if let (Some(before), Some(now)) = (&e.worktree, &x.worktree_now) {
        let d = worktree::drift(before, now);
        if !d.is_empty() {
            out.push(att(
                "worktree-drift",
                id,
                format!("the checkout changed since park: {}", d.join(", ")),
                Some(format!(
                    "look at {} before resuming (park never touches git)",
                    e.cwd
                )),
            ));
        }
    } else if e.worktree.is_some() && Path::new(&e.cwd).is_dir() {
        out.push(att(
            "worktree-drift",
            id,
            format!(
                "{} was a git checkout at park time and is not one now",
                e.cwd
            ),
            None,
        ));
    }
}

/// Lock files: symlinks, stale ones, held ones.
fn locks(f: &Facts, out: &mut Vec<Finding>) {
    for l in &f.locks {
        let s = l.path.display().to_string();
        if l.symlink {
            out.push(att(
                "symlink",
                &s,
                "a lock file is a symlink; park refuses to lock through it".into(),
                Some(format!("rm {}", crate::support::shell::quote(&s))),
            ));
            continue;
        }
        if !l.mode_ok {
            out.push(att(
                "permissions",
                &s,
                "lock file is not 0600".into(),
                Some(format!("chmod 600 {}", crate::support::shell::quote(&s))),
            ));
        }
        if !l.held {
            continue;
        }
        if l.owner_alive && l.owner_is_park {
            // The lock's key is its file name: name the holder's job, not a generic one.
            let job = match l.path.file_stem().and_then(|x| x.to_str()) {
                Some("waker") => "the park daemon: wake-ups and the autopilot",
                Some("auto-pass") => "an autopilot pass is running",
                _ => "a park or unpark is running",
            };
            out.push(info(
                "lock-held",
                &s,
                format!("held by park pid {} ({job})", l.owner.unwrap_or(0)),
            ));
        } else {
            out.push(att(
                "stale-lock",
                &s,
                match (l.owner, l.owner_alive) {
                    (Some(p), true) => format!("held, but its recorded owner pid {p} is not park: the lock leaked into another process"),
                    (Some(p), false) => format!("held by an inherited descriptor after its owner pid {p} exited"),
                    (None, _) => "held by an unknown process".into(),
                },
                Some("find the holder with `fuser` (or lsof) and end it; a lock dies with its holder".into()),
            ));
        }
    }
}

/// Agent settings that delete transcripts too soon; an unreadable config.toml.
fn settings(f: &Facts, out: &mut Vec<Finding>) {
    for (dir, days) in &f.claude_cleanup {
        if *days < CLEANUP_PERIOD_MIN_DAYS {
            let what = if *days <= 0 {
                "Claude then stops keeping session transcripts (nothing to resume, nothing to archive)".to_string()
            } else {
                format!("Claude deletes every session untouched for {days} day(s)")
            };
            out.push(att(
                "cleanup-period",
                &dir.join("settings.json").to_string_lossy(),
                format!("cleanupPeriodDays is {days}: {what}"),
                Some(format!(
                    "raise cleanupPeriodDays in {} (30 or more; never 0), then `park archive --all` to copy what is left",
                    dir.join("settings.json").display()
                )),
            ));
        }
    }
    if let Some(e) = &f.config_error {
        out.push(att(
            "config",
            "config.toml",
            e.clone(),
            Some("fix the file (see \"Autopilot\" and `[archive] auto` in the README); until then nothing automatic runs (autopilot, daily archive)".into()),
        ));
    }
    if let Some(e) = &f.pins_error {
        out.push(att(
            "pins",
            "pins.json",
            format!("{e}: until it reads, the autopilot treats every session as pinned (it parks nothing) and `park pin` refuses"),
            Some("fix the JSON, or move the file away and pin again with `park pin <target>` (a missing file is no pins)".into()),
        ));
    }
    if let Some(e) = &f.sets_error {
        out.push(att(
            "sets",
            "sets.json",
            format!("{e}: until it reads, every `@name` target (and `park set`) fails"),
            Some("fix the JSON, or move the file away and add the sets again with `park set add` (a missing file is no sets)".into()),
        ));
    }
}

/// After how many days the entry's agent deletes its transcript (`None`: never).
pub(crate) fn cleanup_days(e: &Entry) -> Option<u64> {
    crate::agents::cleanup_days(e)
}

fn mode_of(p: &Path) -> Option<u32> {
    std::fs::symlink_metadata(p)
        .ok()
        .map(|m| m.permissions().mode() & 0o777)
}

/// Everything in park's home that doctor judges, besides the entries themselves.
fn scan_files(ledger: &Ledger) -> Vec<FileFacts> {
    let mut out = vec![];
    for d in [
        ledger.home.clone(),
        ledger.parked_dir(),
        ledger.home.join("locks"),
        ledger.home.join("archive"),
    ] {
        match std::fs::symlink_metadata(&d) {
            Ok(m) if m.file_type().is_symlink() => out.push(FileFacts {
                path: d,
                kind: FileKind::Symlink,
            }),
            Ok(m) if m.permissions().mode() & 0o077 != 0 => out.push(FileFacts {
                path: d,
                kind: FileKind::BadMode(m.permissions().mode() & 0o777),
            }),
            _ => {}
        }
    }
    let Ok(rd) = std::fs::read_dir(ledger.parked_dir()) else {
        return out;
    };
    let mut paths: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
    paths.sort();
    for p in paths {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let is_tmp = name.starts_with('.') && name.contains(".tmp-");
        let meta = std::fs::symlink_metadata(&p);
        if is_tmp {
            out.push(FileFacts {
                path: p,
                kind: FileKind::LeftoverTemp,
            });
            continue;
        }
        if !name.ends_with(".json") || name.starts_with('.') {
            out.push(FileFacts {
                path: p,
                kind: FileKind::Foreign,
            });
            continue;
        }
        // Symlinked and unreadable entries are already reported by `Ledger::all`.
        if let Ok(m) = meta {
            if m.is_file() && m.permissions().mode() & 0o077 != 0 {
                out.push(FileFacts {
                    path: p,
                    kind: FileKind::BadMode(m.permissions().mode() & 0o777),
                });
            }
        }
    }
    out
}

/// Inodes of flock()ed files and the pid that took each lock (Linux: `/proc/locks`).
fn flocked_inodes() -> Option<Vec<u64>> {
    let s = std::fs::read_to_string("/proc/locks").ok()?;
    Some(
        s.lines()
            .filter(|l| l.contains("FLOCK"))
            .filter_map(|l| {
                let dev_ino = l.split_whitespace().find(|w| w.matches(':').count() == 2)?;
                dev_ino.rsplit(':').next()?.parse().ok()
            })
            .collect(),
    )
}

fn scan_locks(ctx: &crate::ctx::Ctx) -> Vec<LockFacts> {
    use std::os::unix::fs::MetadataExt;
    let dir = ctx.ledger.home.join("locks");
    let Ok(rd) = std::fs::read_dir(&dir) else {
        return vec![];
    };
    let held_inodes = flocked_inodes();
    let mut out = vec![];
    for p in rd.flatten().map(|e| e.path()) {
        let Ok(m) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        if m.file_type().is_symlink() {
            out.push(LockFacts {
                path: p,
                held: false,
                owner: None,
                owner_is_park: false,
                owner_alive: false,
                mode_ok: true,
                symlink: true,
            });
            continue;
        }
        let held = match &held_inodes {
            Some(inodes) => inodes.contains(&m.ino()),
            // No /proc/locks: probe with a non-blocking lock (released at once).
            None => {
                let key = p.file_stem().and_then(|s| s.to_str()).unwrap_or("");
                matches!(
                    crate::store::lock::try_lock(&ctx.ledger.home, key),
                    Ok(crate::store::lock::TryLock::Held(_))
                )
            }
        };
        let owner: Option<u32> = std::fs::read_to_string(&p)
            .ok()
            .and_then(|s| s.trim().parse().ok());
        let proc = owner.and_then(|o| ctx.platform.process(o));
        let owner_is_park = proc.as_ref().is_some_and(|p| {
            p.comm == "park"
                || p.argv.first().is_some_and(|a| {
                    Path::new(a).file_name().is_some_and(|n| {
                        n == "park" || n == ctx.exe.file_name().unwrap_or_default()
                    })
                })
        });
        out.push(LockFacts {
            path: p,
            held,
            owner,
            owner_is_park,
            owner_alive: proc.is_some_and(|p| p.state != 'Z'),
            mode_ok: m.permissions().mode() & 0o077 == 0,
            symlink: false,
        });
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

/// Reads every fact doctor judges. One process scan (no screens), no multiplexer writes.
pub fn gather(ctx: &crate::ctx::Ctx) -> Facts {
    let (entries, bad) = ctx.ledger.all();
    let (scan, scan_error) = match crate::scan::scan(ctx.platform.as_ref(), ctx.mux.as_ref(), false)
    {
        Ok(s) => (Some(s), None),
        Err(e) => (None, Some(e.to_string())),
    };
    // Which parked entries lost their pane, on the server park talks to (none is running there
    // = every pane is gone; any other listing failure = not judged).
    let home_server = ctx.mux.home_server();
    let listed = ctx.mux.list_panes();
    // zellij entries: where each slot is now (a resurrection renumbers panes), by evidence.
    let zslots: std::collections::HashMap<String, crate::store::slot::Slot> = match &listed {
        Ok(panes) => entries
            .iter()
            .filter(|e| {
                e.state == EntryState::Parked
                    && crate::adapters::mux::is_zellij_server(&e.place.server)
                    && ctx.mux.serves(&e.place.server)
            })
            .map(|e| {
                (
                    e.id.clone(),
                    crate::rows::slots::locate(ctx, e, panes, &entries),
                )
            })
            .collect(),
        Err(_) => Default::default(),
    };
    let lost = match listed {
        Ok(p) => Some(p),
        Err(
            crate::adapters::mux::MuxError::Unreachable(..)
            | crate::adapters::mux::MuxError::Absent(..),
        ) => Some(vec![]),
        Err(_) => None,
    }
    .map(|panes| {
        let mine: Vec<Entry> = entries
            .iter()
            .filter(|e| {
                e.state == EntryState::Parked && Some(&e.place.server) == home_server.as_ref()
            })
            .cloned()
            .collect();
        crate::ops::rebuild::lost_now(ctx, &mine, &panes)
    })
    .unwrap_or_default();
    let facts: Vec<(Entry, EntryFacts)> =
        entries
            .into_iter()
            .map(|e| {
                let running =
                    scan.as_ref()
                        .map(|s| {
                            s.found
                                .iter()
                                .filter(|f| {
                                    f.proc.agent == e.agent
                                        && f.ident.session_id.as_deref().is_some_and(|id| {
                                            id.eq_ignore_ascii_case(&e.session_id)
                                        })
                                })
                                .map(|f| f.proc.root)
                                .collect()
                        })
                        .unwrap_or_default();
                let resumer_alive = e.resumer.is_some_and(|(pid, st)| {
                    crate::ops::kill::alive(ctx.platform.as_ref(), pid, st)
                });
                let transcript = crate::agents::expected_transcript(&e);
                let x = EntryFacts {
                    restorable: crate::ops::unpark::restorable(&e),
                    running,
                    resumer_alive,
                    transcript_age_days: transcript.as_deref().and_then(age_days),
                    cleanup_days: cleanup_days(&e),
                    worktree_now: e
                        .worktree
                        .as_ref()
                        .and_then(|_| worktree::fingerprint(&e.cwd)),
                    pane_lost: lost.contains(&e.id),
                    pane_moved: match zslots.get(&e.id) {
                        Some(crate::store::slot::Slot::Moved(p)) => Some(p.id.clone()),
                        _ => None,
                    },
                    pane_unmatched: match zslots.get(&e.id) {
                        Some(crate::store::slot::Slot::Missing(why)) => Some(why.clone()),
                        _ => None,
                    },
                    slot_taken: {
                        // zellij slots only (found by their mark): a tmux handle after a server
                        // restart may be any pane, and tmux's placeholder resumes on Enter.
                        let slot = match zslots.get(&e.id) {
                            Some(crate::store::slot::Slot::Here(p))
                            | Some(crate::store::slot::Slot::Moved(p)) => Some(p.id.clone()),
                            _ => None,
                        };
                        scan.as_ref().zip(slot).and_then(|(s, slot)| {
                            s.found
                                .iter()
                                .find(|f| {
                                    f.pane.as_ref().is_some_and(|p| p.id == slot)
                                        && !f.ident.session_id.as_deref().is_some_and(|id| {
                                            id.eq_ignore_ascii_case(&e.session_id)
                                        })
                                })
                                .map(|f| {
                                    (
                                        slot.clone(),
                                        f.proc.agent.as_str().to_string(),
                                        f.ident.session_id.clone(),
                                        f.proc.main,
                                    )
                                })
                        })
                    },
                };
                (e, x)
            })
            .collect();
    let known: Vec<_> = facts
        .iter()
        .map(|(e, _)| (e.agent, e.config_dir.clone(), e.config_var.clone()))
        .collect();
    let env = |k: &str| std::env::var(k).ok();
    let claude_cleanup = crate::agents::all()
        .into_iter()
        .flat_map(|k| {
            crate::ops::protect::config_dirs(k.spec().agent, &env, &known)
                .into_iter()
                .filter_map(move |(d, _)| Some((d.clone(), k.spec().cleanup_setting(&d)?)))
        })
        .collect();
    let sessions_down = crate::rows::slots::sessions_down(
        ctx,
        &facts.iter().map(|(e, _)| e.clone()).collect::<Vec<_>>(),
    );
    let (lost, journal_error) = match scan
        .as_ref()
        .map(|s| crate::ops::journal::lost_as_of(ctx, s))
    {
        Some(Ok(l)) => (l, None),
        Some(Err(e)) => (vec![], Some(e)),
        None => (vec![], None),
    };
    let resurrect = [
        "@resurrect-hook-post-save-all",
        "@resurrect-hook-post-restore-all",
        "@resurrect-processes",
    ]
    .iter()
    .filter_map(|o| Some((o.to_string(), ctx.mux.global_option(o).ok()??)))
    .collect();
    Facts {
        lost,
        journal_error,
        resurrect,
        entries: facts,
        bad,
        files: scan_files(&ctx.ledger),
        locks: scan_locks(ctx),
        scan_error,
        waker_running: crate::ops::waker::running(&ctx.ledger.home).is_some(),
        claude_cleanup,
        archive_bytes: crate::ops::protect::archive_bytes(&ctx.ledger.home),
        config_error: crate::store::config::load(&ctx.ledger.home).err(),
        pins_error: crate::store::pins::Pins::read(&ctx.ledger.home).broken,
        sets_error: crate::store::sets::list(&ctx.ledger.home).err(),
        sessions_down,
        auto_on: crate::ops::waker::auto_wanted(&ctx.ledger.home),
        integrations: crate::ops::integrate::list(
            &ctx.ledger.home,
            &std::env::vars().collect::<Vec<_>>(),
        ),
        versions: scan
            .as_ref()
            .map(|s| {
                s.found
                    .iter()
                    .filter_map(|f| {
                        let at = f
                            .pane
                            .as_ref()
                            .map_or_else(|| format!("pid {}", f.proc.root), |p| p.id.clone());
                        Some((f.proc.agent, f.version.clone()?, at))
                    })
                    .collect()
            })
            .unwrap_or_default(),
    }
}

/// Text for a terminal: one line per finding, a fix under it, and a verdict.
pub fn render(r: &Report) -> String {
    let mut t = String::new();
    for f in &r.findings {
        let tag = match f.level {
            Level::Attention => "✗",
            Level::Info => "·",
        };
        t.push_str(&format!("{tag} {} {}: {}\n", f.code, f.subject, f.message));
        if let Some(fix) = &f.fix {
            t.push_str(&format!("    fix: {fix}\n"));
        }
    }
    let n = r
        .findings
        .iter()
        .filter(|f| f.level == Level::Attention)
        .count();
    if r.archive_bytes > 0 {
        t.push_str(&format!(
            "archive: {} in $PARK_HOME/archive\n",
            park_protocol::human_bytes(r.archive_bytes)
        ));
    }
    if r.ok {
        t.push_str(&format!(
            "ok: {} parked {} restorable, nothing needs attention\n",
            r.entries,
            if r.entries == 1 {
                "entry is"
            } else {
                "entries are"
            }
        ));
    } else {
        t.push_str(&format!("{n} finding(s) need attention\n"));
    }
    t
}

/// Mode check helper used by tests of the home layout.
pub fn private_mode(p: &Path) -> bool {
    mode_of(p).is_some_and(|m| m & 0o077 == 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::Agent;
    use crate::store::ledger::tests::sample;

    pub(super) fn facts(entries: Vec<(Entry, EntryFacts)>) -> Facts {
        Facts {
            entries,
            bad: vec![],
            files: vec![],
            locks: vec![],
            scan_error: None,
            waker_running: false,
            claude_cleanup: vec![],
            archive_bytes: 0,
            config_error: None,
            pins_error: None,
            sets_error: None,
            sessions_down: vec![],
            auto_on: false,
            integrations: vec![],
            versions: vec![],
            lost: vec![],
            journal_error: None,
            resurrect: vec![],
        }
    }

    /// Issue 30: a running agent newer (or older) than every version park was tested with is
    /// named once per version, with where it runs; a tested one says nothing.
    #[test]
    fn an_untested_agent_version_is_named_once_with_where_it_runs() {
        use crate::agents::Agent;
        let newest = crate::agents::of(Agent::Claude).spec().release.tested.1;
        let mut f = facts(vec![]);
        f.versions = vec![
            (Agent::Claude, newest.to_string(), "%1".into()),
            (Agent::Claude, "999.0.0".into(), "%2".into()),
            (Agent::Claude, "999.0.0".into(), "terminal_3@main".into()),
            (Agent::Codex, "0.0.1".into(), "pid 42".into()),
        ];
        let r = diagnose(&f);
        assert!(r.ok, "info only: {r:?}");
        assert_eq!(
            codes(&r),
            vec![
                ("untested-version", Level::Info),
                ("untested-version", Level::Info)
            ]
        );
        let m = &r.findings[0].message;
        assert!(
            m.contains("Claude Code 999.0.0 is newer than the newest version park was tested with")
                && m.contains(&format!("({newest})"))
                && m.contains("%2, terminal_3@main"),
            "{m}"
        );
        assert!(
            r.findings[1].message.contains("Codex 0.0.1 is older"),
            "{:?}",
            r.findings[1]
        );
    }

    #[test]
    fn a_tiny_or_zero_cleanup_period_needs_attention_and_is_never_the_fix() {
        let mut f = facts(vec![]);
        f.claude_cleanup = vec![
            (PathBuf::from("/h/.claude"), 0),
            (PathBuf::from("/c"), 3),
            (PathBuf::from("/ok"), 7),
            (PathBuf::from("/long"), 365),
        ];
        let r = diagnose(&f);
        assert!(!r.ok);
        assert_eq!(
            codes(&r),
            [
                ("cleanup-period", Level::Attention),
                ("cleanup-period", Level::Attention)
            ]
        );
        assert!(r.findings[0].message.contains("stops keeping"));
        assert!(r.findings[1].message.contains("3 day(s)"));
        for x in &r.findings {
            let fix = x.fix.as_deref().unwrap();
            assert!(fix.contains("raise cleanupPeriodDays") && fix.contains("park archive --all"));
            assert!(!fix.contains("to 0"), "{fix}");
        }
    }

    pub(super) fn codes(r: &Report) -> Vec<(&str, Level)> {
        r.findings
            .iter()
            .map(|f| (f.code.as_str(), f.level))
            .collect()
    }

    #[test]
    fn a_pending_wake_with_no_waker_is_reported() {
        let mut e = sample("ccb");
        let mut w = crate::model::wake::Wake::new(jiff::Timestamp::now());
        w.at = Some("2030-01-01T00:00:00Z".into());
        e.wake = Some(w);
        let mut f = facts(vec![(e.clone(), EntryFacts::default())]);
        let r = diagnose(&f);
        assert_eq!(codes(&r), vec![("waker-down", Level::Attention)]);
        assert!(r.findings[0]
            .fix
            .as_deref()
            .unwrap()
            .contains("park daemon --ensure"));
        f.waker_running = true;
        assert!(diagnose(&f).findings.is_empty());
        // A wake that already has an outcome is not pending.
        let mut done = e;
        done.wake.as_mut().unwrap().outcome = Some("timed out".into());
        assert!(diagnose(&facts(vec![(done, EntryFacts::default())]))
            .findings
            .is_empty());
    }

    #[test]
    fn the_autopilot_on_without_a_daemon_needs_attention() {
        let mut f = facts(vec![]);
        f.auto_on = true;
        assert_eq!(
            codes(&diagnose(&f)),
            vec![("daemon-down", Level::Attention)]
        );
        f.waker_running = true;
        assert!(diagnose(&f).findings.is_empty());
    }

    #[test]
    fn a_renumbered_zellij_pane_is_info_and_an_unmatched_one_needs_attention() {
        let moved = EntryFacts {
            pane_moved: Some("terminal_1@zr".into()),
            ..Default::default()
        };
        let r = diagnose(&facts(vec![(sample("ccb"), moved)]));
        assert_eq!(codes(&r), vec![("pane-moved", Level::Info)]);
        assert!(r.findings[0].message.contains("terminal_1@zr"));
        let unmatched = EntryFacts {
            pane_unmatched: Some("2 panes of session `zr` carry its mark".into()),
            ..Default::default()
        };
        let r = diagnose(&facts(vec![(sample("ccb"), unmatched.clone())]));
        assert_eq!(codes(&r), vec![("pane-unmatched", Level::Attention)]);
        assert!(r.findings[0]
            .fix
            .as_deref()
            .unwrap()
            .contains("park unpark"));
        // A resume in flight is neither.
        let mut e = sample("ccb");
        e.state = EntryState::Resuming;
        let r = diagnose(&facts(vec![(e, unmatched)]));
        assert!(!codes(&r).iter().any(|(c, _)| c.starts_with("pane-")));
    }

    #[test]
    fn a_parked_entry_whose_pane_is_gone_points_at_rebuild() {
        let x = EntryFacts {
            pane_lost: true,
            ..Default::default()
        };
        let r = diagnose(&facts(vec![(sample("ccb"), x.clone())]));
        assert_eq!(codes(&r), vec![("pane-lost", Level::Attention)]);
        assert!(r.findings[0]
            .fix
            .as_deref()
            .unwrap()
            .starts_with("park rebuild"));
        // A resume in flight is not "lost": it is moving.
        let mut e = sample("ccb");
        e.state = EntryState::Resuming;
        let r = diagnose(&facts(vec![(e, x)]));
        assert!(!codes(&r).iter().any(|(c, _)| *c == "pane-lost"));
    }

    /// An integration park installed and that is gone or broken since needs attention; one
    /// never installed does not.
    #[test]
    fn a_removed_or_broken_integration_needs_attention() {
        use crate::agents::{Agent, IntegrationState};
        use crate::ops::integrate::Row;
        let row = |state, by_park| Row {
            agent: Agent::Gemini,
            file: Some("/h/.gemini/settings.json".into()),
            state,
            installed_by_park: by_park,
        };
        let mut f = facts(vec![]);
        f.integrations = vec![row(IntegrationState::Missing, false)];
        assert!(diagnose(&f).ok);
        f.integrations = vec![row(IntegrationState::Installed, true)];
        assert!(diagnose(&f).ok);
        f.integrations = vec![row(IntegrationState::Missing, true)];
        let r = diagnose(&f);
        assert_eq!(codes(&r), vec![("integration", Level::Attention)]);
        assert!(r.findings[0].message.contains("no longer in"), "{r:?}");
        f.integrations = vec![row(IntegrationState::Broken("gone".into()), false)];
        assert!(!diagnose(&f).ok);
    }

    #[test]
    fn a_clean_ledger_is_ok() {
        let r = diagnose(&facts(vec![(sample("ccb"), EntryFacts::default())]));
        assert!(r.ok, "{r:?}");
        assert!(r.findings.is_empty());
        assert!(render(&r).contains("ok: 1 parked entry is restorable"));
    }

    #[test]
    fn an_unrestorable_entry_needs_attention_and_names_the_fix() {
        let x = EntryFacts {
            restorable: Err("transcript /x.jsonl is missing".into()),
            ..Default::default()
        };
        let r = diagnose(&facts(vec![(sample("ccb"), x)]));
        assert!(!r.ok);
        assert_eq!(codes(&r), vec![("unrestorable", Level::Attention)]);
        assert!(r.findings[0]
            .fix
            .as_deref()
            .unwrap()
            .contains("park forget"));
    }

    #[test]
    fn running_while_parked_is_flagged_but_a_live_resume_is_not() {
        let x = EntryFacts {
            running: vec![42],
            ..Default::default()
        };
        let r = diagnose(&facts(vec![(sample("ccb"), x.clone())]));
        assert_eq!(codes(&r), vec![("running-while-parked", Level::Attention)]);
        assert!(r.findings[0].message.contains("⚠ running while parked"));
        let mut e = sample("ccb");
        e.state = EntryState::Resuming;
        e.resumer = Some((7, 7));
        let x = EntryFacts {
            running: vec![42],
            resumer_alive: true,
            ..Default::default()
        };
        let r = diagnose(&facts(vec![(e, x)]));
        assert!(r.ok, "a resume in progress is not a problem: {r:?}");
        assert_eq!(codes(&r), vec![("resuming", Level::Info)]);
    }

    #[test]
    fn interrupted_parks_and_unparks_need_attention() {
        let mut a = sample("cca");
        a.state = EntryState::Parking;
        let mut b = sample("ccb");
        b.state = EntryState::Resuming;
        b.resumer = Some((1, 1));
        let r = diagnose(&facts(vec![
            (a, EntryFacts::default()),
            (b, EntryFacts::default()),
        ]));
        assert_eq!(
            codes(&r),
            vec![
                ("interrupted", Level::Attention),
                ("interrupted", Level::Attention)
            ]
        );
    }

    #[test]
    fn transcripts_near_the_cleanup_age_are_flagged() {
        let near = EntryFacts {
            transcript_age_days: Some(24),
            cleanup_days: Some(30),
            ..Default::default()
        };
        let r = diagnose(&facts(vec![(sample("ccb"), near)]));
        assert_eq!(codes(&r), vec![("cleanup-age", Level::Attention)]);
        assert!(r.findings[0].message.contains("about 6 left"), "{r:?}");
        let young = EntryFacts {
            transcript_age_days: Some(22),
            cleanup_days: Some(30),
            ..Default::default()
        };
        assert!(diagnose(&facts(vec![(sample("ccb"), young)])).ok);
    }

    #[test]
    fn worktree_drift_is_reported_field_by_field() {
        let mut e = sample("ccb");
        let fp = Fingerprint {
            branch: "main".into(),
            head: "a".repeat(40),
            dirty: 0,
        };
        e.worktree = Some(fp.clone());
        let same = EntryFacts {
            worktree_now: Some(fp.clone()),
            ..Default::default()
        };
        assert!(diagnose(&facts(vec![(e.clone(), same)])).ok);
        let moved = EntryFacts {
            worktree_now: Some(Fingerprint {
                branch: "other".into(),
                dirty: 3,
                ..fp
            }),
            ..Default::default()
        };
        let r = diagnose(&facts(vec![(e, moved)]));
        assert_eq!(codes(&r), vec![("worktree-drift", Level::Attention)]);
        assert!(r.findings[0].message.contains("main → other"));
        assert!(r.findings[0].message.contains("0 → 3"));
    }

    #[test]
    fn a_second_entry_for_one_session_is_a_duplicate() {
        let a = sample("ccb");
        let mut b = a.clone();
        b.id = format!("{}.bak", a.id);
        let r = diagnose(&facts(vec![
            (a, EntryFacts::default()),
            (b.clone(), EntryFacts::default()),
        ]));
        assert_eq!(codes(&r), vec![("duplicate", Level::Attention)]);
        assert_eq!(r.findings[0].subject, b.id);
    }

    #[test]
    fn files_locks_and_corrupt_entries() {
        let mut f = facts(vec![]);
        f.bad.push(LedgerError::Corrupt(
            "/h/parked/x.json".into(),
            "eof".into(),
        ));
        f.files = vec![
            FileFacts {
                path: "/h/parked/notes.txt".into(),
                kind: FileKind::Foreign,
            },
            FileFacts {
                path: "/h/parked/.x.json.tmp-9".into(),
                kind: FileKind::LeftoverTemp,
            },
            FileFacts {
                path: "/h/parked".into(),
                kind: FileKind::BadMode(0o755),
            },
        ];
        let lock = |held, alive, park| LockFacts {
            path: "/h/locks/p.lock".into(),
            held,
            owner: Some(5),
            owner_is_park: park,
            owner_alive: alive,
            mode_ok: true,
            symlink: false,
        };
        f.locks = vec![
            lock(false, false, false),
            lock(true, true, true),
            lock(true, false, false),
            lock(true, true, false),
        ];
        let r = diagnose(&f);
        assert_eq!(
            codes(&r),
            vec![
                ("corrupt", Level::Attention),
                ("foreign", Level::Attention),
                ("leftover-temp", Level::Info),
                ("permissions", Level::Attention),
                ("lock-held", Level::Info),
                ("stale-lock", Level::Attention),
                ("stale-lock", Level::Attention),
            ]
        );
        assert!(r.findings[5].message.contains("exited"));
        assert!(r.findings[6].message.contains("not park"));
        assert!(r.findings[4].message.contains("a park or unpark"));
        // The daemon's own lock is named as the daemon's (issue 34 item 6).
        f.locks = vec![LockFacts {
            path: "/h/locks/waker.lock".into(),
            ..lock(true, true, true)
        }];
        let r = diagnose(&f);
        assert!(
            r.findings.iter().any(|x| x.code == "lock-held"
                && x.message.contains("the park daemon")
                && !x.message.contains("park or unpark")),
            "{:?}",
            r.findings
        );
    }

    /// Issue 35 item 3: Enter at a resurrected held pane started a fresh agent in the parked
    /// slot, and doctor said ok.
    #[test]
    fn a_fresh_agent_in_a_parked_slot_is_named() {
        let e = sample("slot");
        let x = EntryFacts {
            slot_taken: Some((
                "terminal_1@main".into(),
                "claude".into(),
                Some("fresh-id".into()),
                42,
            )),
            ..EntryFacts::default()
        };
        let r = diagnose(&facts(vec![(e.clone(), x)]));
        assert!(!r.ok);
        assert_eq!(codes(&r), vec![("slot-taken", Level::Attention)]);
        let f = &r.findings[0];
        assert!(f.message.contains("terminal_1@main") && f.message.contains("pid 42"));
        assert!(f
            .fix
            .as_deref()
            .unwrap()
            .contains(&format!("park unpark {}", e.id)));
    }

    /// Issue 35 item 4: with the zellij session dead, doctor said "ok … restorable" (exit 0).
    #[test]
    fn a_parked_entrys_dead_zellij_session_needs_attention() {
        let mut f = facts(vec![]);
        f.sessions_down = vec![("main".into(), vec!["claude-x".into()])];
        let r = diagnose(&f);
        assert!(!r.ok);
        assert_eq!(codes(&r), vec![("session-down", Level::Attention)]);
        let fx = &r.findings[0];
        assert!(
            fx.message.contains("\"main\" is not running"),
            "{}",
            fx.message
        );
        assert!(fx.fix.as_deref().unwrap().contains("zellij attach main"));
        assert!(!fx.message.contains("tmux"));
    }

    /// Issue 34 item 6: doctor said ok while pins.json or sets.json was corrupt, although the
    /// autopilot then treats every session as pinned.
    #[test]
    fn a_corrupt_pins_or_sets_file_needs_attention() {
        let mut f = facts(vec![]);
        assert!(diagnose(&f).ok);
        f.pins_error = Some("/h/pins.json is not a valid pins file (eof)".into());
        let r = diagnose(&f);
        assert!(!r.ok);
        assert_eq!(codes(&r), vec![("pins", Level::Attention)]);
        assert!(r.findings[0].message.contains("/h/pins.json"));
        assert!(r.findings[0].message.contains("every session as pinned"));
        f.pins_error = None;
        f.sets_error = Some("/h/sets.json is not a valid sets file (eof)".into());
        let r = diagnose(&f);
        assert!(!r.ok);
        assert_eq!(codes(&r), vec![("sets", Level::Attention)]);
    }

    #[test]
    fn cleanup_days_reads_claude_settings() {
        let d = tempfile::tempdir().unwrap();
        let mut e = sample("ccb");
        e.config_dir = Some(d.path().to_string_lossy().into_owned());
        assert_eq!(cleanup_days(&e), Some(30));
        std::fs::write(
            d.path().join("settings.json"),
            r#"{"cleanupPeriodDays": 90}"#,
        )
        .unwrap();
        assert_eq!(cleanup_days(&e), Some(90));
        e.agent = Agent::Codex;
        assert_eq!(cleanup_days(&e), None);
    }
}
