//! The journal of live sessions (`store::journal`): the pass that keeps it (`park snapshot`, and the
//! daemon every [`INTERVAL`]) and the adoption of lost sessions by `park rebuild`.
//!
//! Contract:
//! * A pass is read-only but for `journal.json`: one scan, and for every live agent bound to a pane
//!   with an exact session id (and no ledger entry) the park entry a park would write now. A record
//!   the scan did not refresh meets its [`journal::fate`]: kept while its process runs, dropped
//!   when the agent ended while its server lived, kept as lost when the server died with it.
//! * `[journal] enabled = false` turns the pass off (nothing written); a config that does not load
//!   records nothing either (the daemon's rule for everything automatic).
//! * [`adopt`] runs under the rebuild lock: each lost record of the server being rebuilt becomes a
//!   parked ledger entry (its window recorded as a window group first), so the rebuild recreates
//!   its window and resumes it through the normal unpark path, every guard applying. A lost
//!   zellij record is re-pointed instead at the pane at its place in its tab of the session
//!   zellij resurrected (`Pane::position`), never a pane an agent runs in; `rebuild` marks that
//!   pane and resumes it there. It is never
//!   adopted when the session runs again anywhere, the ledger already has it, its transcript was
//!   written after park last saw it live (another process may hold it), or another lost record
//!   claims the same slot: each is skipped with the reason.

use crate::ctx::Ctx;
use crate::exit::Stop;
use crate::model::entry::{entry_id, Entry, EntryState};
use crate::scan::{self, Scan};
use crate::store::group;
use crate::store::journal::{self, Facts, Fate, Journal, Record};
use park_protocol::reports::{
    JournalLeft, JournalLive, LostOutcome, LostResult, LostSession, SnapshotOutput,
};
use std::collections::{HashMap, HashSet};
use std::time::Duration;

/// How often the daemon journals: a session started, switched or ended is in the journal within
/// this (and a scan's time).
pub const INTERVAL: Duration = Duration::from_secs(10);

/// How long after park last saw a session live its transcript may still change before a crash
/// (the agent finishing a reply between two passes): later than that, another process wrote it.
const WRITE_SLACK: Duration = Duration::from_secs(30);

/// Whether the journal is kept (`[journal] enabled`, default on; a broken config: off).
pub fn enabled(home: &std::path::Path) -> bool {
    crate::store::config::load(home).is_ok_and(|c| c.journal.enabled)
}

pub(crate) fn alive(s: &Scan, p: (u32, u64)) -> bool {
    journal::alive(&s.table, p)
}

pub(crate) fn ident(s: &Scan, pid: u32) -> (u32, u64) {
    s.table
        .get(pid)
        .map(|p| (p.pid, p.start_ticks))
        .unwrap_or((pid, 0))
}

pub fn lost_session(
    r: &Record,
    outcome: impl Into<LostResult>,
    reason: Option<String>,
) -> LostSession {
    entry_lost(&r.entry, &r.last_seen, outcome, reason)
}

/// The [`LostSession`] of an entry (an adopted one: its `parked_at` is when it was last seen).
pub fn entry_lost(
    e: &Entry,
    last_seen: &str,
    outcome: impl Into<LostResult>,
    reason: Option<String>,
) -> LostSession {
    LostSession {
        entry: e.id.clone(),
        agent: e.agent,
        session_id: e.session_id.clone(),
        cwd: e.cwd.clone(),
        server: e.place.server.clone(),
        session: e.place.session.clone(),
        window_index: e.place.window_index,
        window_name: e.place.window_name.clone(),
        pane_index: e.place.pane_index,
        last_seen: last_seen.to_string(),
        outcome: outcome.into(),
        reason,
    }
}

/// The journal as the scan `s` sees things now, from `prev` (pure but for the window layouts
/// [`crate::ops::park::window_group`] asks the multiplexer for).
fn next_journal(
    ctx: &Ctx,
    s: &Scan,
    prev: &Journal,
    ledger: &[Entry],
    now: &str,
) -> (
    Journal,
    Vec<JournalLive>,
    Vec<JournalLeft>,
    Vec<JournalLeft>,
) {
    let in_ledger: HashSet<&str> = ledger.iter().map(|e| e.id.as_str()).collect();
    let mut next = Journal {
        schema: journal::SCHEMA,
        written_by: format!("park {}", env!("CARGO_PKG_VERSION")),
        written_at: now.to_string(),
        sessions: vec![],
        windows: vec![],
    };
    let mut live = vec![];
    // Windows by (server, session, index): the id a window had in the journal is kept.
    let mut window_ids: HashMap<(String, String, u32), String> = HashMap::new();
    // Every window's layout in one multiplexer call, fetched once a window needs it.
    let mut layouts: Option<Vec<crate::adapters::mux::WindowLayout>> = None;
    for f in &s.found {
        let (Some(pane), Some(sid)) = (&f.pane, &f.ident.session_id) else {
            continue;
        };
        if f.proc.background {
            continue;
        }
        let eid = entry_id(f.proc.agent, sid);
        if in_ledger.contains(eid.as_str()) || next.sessions.iter().any(|r| r.entry.id == eid) {
            continue;
        }
        let mut e = crate::ops::park::entry_without_worktree(f, pane, &pane.server, sid, None);
        e.state = EntryState::Parked;
        e.parked_at = now.to_string();
        e.session_source = format!("{}{})", crate::model::entry::FROM_JOURNAL, e.session_source);
        e.place.pane_proc = ident(s, pane.pid);
        let key = (pane.server.clone(), pane.session.clone(), pane.window_index);
        let gid = match window_ids.get(&key) {
            Some(id) => Some(id.clone()),
            None => {
                let was = prev
                    .windows
                    .iter()
                    .find(|g| {
                        g.server == key.0
                            && g.session == key.1
                            && g.window_index == key.2
                            && g.window_name == pane.window_name
                    })
                    .map(|g| g.id.clone());
                let all =
                    layouts.get_or_insert_with(|| ctx.mux.window_layouts().unwrap_or_default());
                crate::ops::park::window_group(
                    ctx,
                    s,
                    ledger,
                    &prev.windows,
                    &key.0,
                    &key.1,
                    key.2,
                    Some(was.unwrap_or_else(group::new_id)),
                    Some(all),
                )
                .map(|g| {
                    let id = g.id.clone();
                    next.windows.push(g);
                    window_ids.insert(key.clone(), id.clone());
                    id
                })
            }
        };
        e.group = gid.clone();
        let server = ctx
            .mux
            .server_process(pane, &s.table)
            .map(|p| ident(s, p))
            .unwrap_or((0, 0));
        let first_seen = prev
            .sessions
            .iter()
            .find(|r| r.entry.id == eid)
            .map(|r| r.first_seen.clone())
            .unwrap_or_else(|| now.to_string());
        live.push(JournalLive {
            agent: e.agent,
            session_id: e.session_id.clone(),
            pane: pane.id.clone(),
            session: pane.session.clone(),
            window_index: pane.window_index,
            pane_index: pane.pane_index,
            cwd: e.cwd.clone(),
            flags: e.flags.clone(),
            pid: f.proc.main,
        });
        next.sessions.push(Record {
            entry: e,
            process: (f.proc.main, f.main_start),
            server_process: server,
            first_seen,
            last_seen: now.to_string(),
            window: gid,
            lost_at: None,
            position: Some(pane.position),
        });
    }
    let settled = settle(&prev.sessions, &next.sessions, s, &in_ledger, now);
    next.sessions.extend(settled.keep);
    // Windows of the records kept as they were.
    for r in &next.sessions {
        if let Some(w) = r.window.as_deref() {
            if !next.windows.iter().any(|g| g.id == w) {
                if let Some(g) = prev.window(w) {
                    next.windows.push(g.clone());
                }
            }
        }
    }
    (next, live, settled.kept, settled.left)
}

/// What becomes of the records of `prev` that this pass did not record afresh (`fresh`).
struct Settled {
    /// Records that stay in the journal: kept live or lost.
    keep: Vec<Record>,
    /// The live ones kept as they were, and why (the output's `kept`).
    kept: Vec<JournalLeft>,
    /// Records that leave, and why.
    left: Vec<JournalLeft>,
}

/// Each record of `prev` that `fresh` lacks meets its [`journal::fate`] with the facts of the scan
/// `s` (pure). A record kept live is said, with why: its process runs, but the scan did not bind
/// it to a pane with its session id (an agent ending removes its status file before its process
/// ends; a pane map that failed binds nothing), so it is neither in the pass's `live` nor gone.
fn settle(
    prev: &[Record],
    fresh: &[Record],
    s: &Scan,
    in_ledger: &HashSet<&str>,
    now: &str,
) -> Settled {
    // Every session the scan sees running, bound or not, and which session each process runs.
    let running: HashMap<String, u32> = s
        .found
        .iter()
        .filter_map(|f| {
            let sid = f.ident.session_id.as_ref()?;
            Some((entry_id(f.proc.agent, sid), f.proc.main))
        })
        .collect();
    let runs: HashMap<(u32, u64), String> = s
        .found
        .iter()
        .filter_map(|f| {
            let sid = f.ident.session_id.as_ref()?;
            Some(((f.proc.main, f.main_start), entry_id(f.proc.agent, sid)))
        })
        .collect();
    let mut out = Settled {
        keep: vec![],
        kept: vec![],
        left: vec![],
    };
    for r in prev {
        if fresh.iter().any(|n| n.entry.id == r.entry.id) {
            continue;
        }
        let process_alive = alive(s, r.process);
        let superseded = process_alive
            && runs
                .get(&r.process)
                .is_some_and(|other| *other != r.entry.id);
        let facts = Facts {
            process_alive: process_alive && !superseded,
            // A server park could not name cannot be shown dead: the record leaves with its agent.
            server_alive: r.server_process.0 == 0 || alive(s, r.server_process),
            running_now: running.contains_key(&r.entry.id),
            in_ledger: in_ledger.contains(r.entry.id.as_str()),
        };
        let why = || {
            if facts.in_ledger {
                "parked: the ledger has it".to_string()
            } else if superseded {
                "its process runs another session now (/clear, /new or /resume)".into()
            } else if let Some(pid) = running.get(&r.entry.id) {
                format!("running again (pid {pid})")
            } else {
                "ended while its multiplexer ran (an exit, a park or a closed pane)".into()
            }
        };
        let note = |reason: String| JournalLeft {
            agent: r.entry.agent,
            session_id: r.entry.session_id.clone(),
            reason,
        };
        match journal::fate(facts) {
            Fate::Live => {
                out.kept.push(note(format!(
                    "kept as it was: its process (pid {}) runs, but this pass did not see it in a pane with its session id (ending, or the pane map unavailable)",
                    r.process.0
                )));
                out.keep.push(r.clone());
            }
            Fate::Leaves => out.left.push(note(why())),
            Fate::Lost => {
                let mut r = r.clone();
                r.lost_at.get_or_insert_with(|| now.to_string());
                out.keep.push(r);
            }
        }
    }
    out
}

/// One journal pass: scan, update `journal.json`, say what it holds.
pub fn pass(ctx: &Ctx) -> Result<SnapshotOutput, Stop> {
    pass_seeing(ctx).map(|p| p.out)
}

/// A pass as the daemon sees it.
pub struct Pass {
    pub out: SnapshotOutput,
    /// The scan saw a pane (the daemon stays while there is one to watch).
    pub saw_panes: bool,
    /// The processes of every record the journal now holds as live, bound this pass or kept as
    /// it was: one that ends brings the next pass forward.
    pub watch: Vec<u32>,
}

/// [`pass`], with what the daemon watches until the next one.
pub fn pass_seeing(ctx: &Ctx) -> Result<Pass, Stop> {
    let home = &ctx.ledger.home;
    let file = journal::path(home).to_string_lossy().into_owned();
    if !enabled(home) {
        return Err(Stop::refused(match crate::store::config::load(home) {
            Err(e) => format!("the config does not load, so nothing is recorded: {e}"),
            Ok(_) => "the journal is off ([journal] enabled = false in config.toml)".into(),
        })
        .of("snapshot"));
    }
    let prev = journal::load(home).map_err(|e| Stop::refused(e.to_string()).of("snapshot"))?;
    let s = scan::scan(ctx.platform.as_ref(), ctx.mux.as_ref(), false)
        .map_err(|e| Stop::refused(format!("process scan failed: {e}")).of("snapshot"))?;
    let mut warnings = s.warnings.clone();
    if let Some(e) = &s.pane_error {
        if !s.tmux_absent {
            warnings.push(format!(
                "pane map unavailable ({e}): live records kept as they were"
            ));
        }
    }
    let (ledger, _) = ctx.ledger.all();
    let now = jiff::Timestamp::now().to_string();
    let (next, live, kept, left) = next_journal(ctx, &s, &prev, &ledger, &now);
    journal::save(home, &next).map_err(|e| Stop::refused(e.to_string()).of("snapshot"))?;
    let out = SnapshotOutput {
        schema: park_protocol::SCHEMA_VERSION,
        journal: file,
        live,
        lost: next
            .lost()
            .map(|r| lost_session(r, LostOutcome::Lost, None))
            .collect(),
        kept,
        left,
        warnings,
    };
    Ok(Pass {
        out,
        saw_panes: !s.panes.is_empty(),
        watch: watch_of(&next),
    })
}

/// The processes of the records `j` holds as live (bound by the pass or kept as they were): a
/// lost record's process is gone already.
fn watch_of(j: &Journal) -> Vec<u32> {
    j.sessions
        .iter()
        .filter(|r| r.lost_at.is_none())
        .map(|r| r.process.0)
        .collect()
}

/// The journal's sessions lost as of the scan `s` (no pass, no write): `park doctor`.
pub fn lost_as_of(ctx: &Ctx, s: &Scan) -> Result<Vec<LostSession>, String> {
    let j = journal::load(&ctx.ledger.home).map_err(|e| e.to_string())?;
    let running: HashSet<String> = s
        .found
        .iter()
        .filter_map(|f| Some(entry_id(f.proc.agent, f.ident.session_id.as_ref()?)))
        .collect();
    let ledger: HashSet<String> = ctx.ledger.all().0.into_iter().map(|e| e.id).collect();
    Ok(journal::lost_now(&j, &s.table, &running, &ledger)
        .into_iter()
        .map(|r| lost_session(r, LostOutcome::Lost, None))
        .collect())
}

/// What a verb on parked sessions (unpark, wake, a wake note) says when its target names, by
/// session id or entry id, a session lost with its multiplexer as of the scan `s`: such a session
/// has no ledger entry yet, and its way back is its slot, which `park rebuild` recreates (resuming
/// it from the archive elsewhere would leave the slot to a later rebuild's guess). A pane handle or
/// a title never names a lost session: the handle may be another pane's on the new server. `None`
/// when the target names no lost session, or the journal does not read (the caller's own answer
/// stands).
pub fn lost_named(ctx: &Ctx, s: &Scan, t: &crate::guards::target::Target) -> Option<String> {
    use crate::guards::target::Target;
    let lost = lost_as_of(ctx, s).ok()?;
    let hits: Vec<&LostSession> = lost
        .iter()
        .filter(|l| match t {
            Target::SessionId(id) => l.session_id == *id,
            Target::Word(w) => l.entry == *w,
            _ => false,
        })
        .collect();
    if hits.is_empty() {
        return None;
    }
    Some(
        hits.iter()
            .map(|l| {
                format!(
                    "{} was lost when its multiplexer died (last seen live {} in {}:{}.{}): `park rebuild` brings it back in its slot (`--dry-run` shows the plan)",
                    l.entry, l.last_seen, l.session, l.window_index, l.pane_index
                )
            })
            .collect::<Vec<_>>()
            .join("; "),
    )
}

/// Why a lost record must not be adopted now, if it must not (see the module's contract): the
/// facts are gathered by [`refuse`], the decision is pure. `running` names the process (and pane)
/// that runs the session now; `written` is when its transcript was last written.
fn refusal(
    r: &Record,
    j: &Journal,
    in_ledger: bool,
    running: Option<String>,
    written: Option<jiff::Timestamp>,
) -> Option<String> {
    use crate::support::fault::disabled;
    if in_ledger && !disabled("journal-in-ledger") {
        return Some("the ledger already has it (`park unpark` brings it back)".into());
    }
    if let Some(who) = running.filter(|_| !disabled("journal-running")) {
        return Some(format!("running again ({who}): one process per transcript"));
    }
    let others: Vec<String> = j
        .lost()
        .filter(|o| {
            o.entry.id != r.entry.id
                && o.entry.place.server == r.entry.place.server
                && o.entry.place.session == r.entry.place.session
                && o.entry.place.window_index == r.entry.place.window_index
                && o.entry.place.pane_index == r.entry.place.pane_index
        })
        .map(|o| o.entry.id.clone())
        .collect();
    if !others.is_empty() && !disabled("journal-same-slot") {
        return Some(format!(
            "{} claim the same pane ({}:{}.{}) too; not guessing which was there last (`park snapshot` lists them)",
            others.join(", "),
            r.entry.place.session,
            r.entry.place.window_index,
            r.entry.place.pane_index
        ));
    }
    let seen: Option<jiff::Timestamp> = r.last_seen.parse().ok();
    if let (Some(seen), Some(written)) = (seen, written) {
        let slack = jiff::SignedDuration::try_from(WRITE_SLACK).unwrap_or_default();
        if written > seen.checked_add(slack).unwrap_or(seen) && !disabled("journal-written-after") {
            return Some(format!(
                "its transcript was written at {written}, after park last saw the session live ({seen}): another process may have resumed it; check, then `park snapshot` and resume it by hand"
            ));
        }
    }
    None
}

/// [`refusal`] with the facts of now: the ledger, the scan, the transcript's mtime.
pub(crate) fn refuse(r: &Record, j: &Journal, s: &Scan, ledger: &[Entry]) -> Option<String> {
    let running = s
        .found
        .iter()
        .find(|f| {
            f.ident
                .session_id
                .as_deref()
                .is_some_and(|sid| entry_id(f.proc.agent, sid) == r.entry.id)
        })
        .map(|f| {
            format!(
                "pid {}{}",
                f.proc.main,
                f.pane
                    .as_ref()
                    .map(|p| format!(" in pane {}", p.id))
                    .unwrap_or_default()
            )
        });
    let written = r
        .entry
        .transcript
        .as_deref()
        .and_then(|t| std::fs::metadata(t).and_then(|m| m.modified()).ok())
        .and_then(|m| jiff::Timestamp::try_from(m).ok());
    refusal(
        r,
        j,
        ledger.iter().any(|e| e.id == r.entry.id),
        running,
        written,
    )
}

/// Makes lost record `r` a parked ledger entry, under its session's lock as a park's claim is
/// (never beside a park or unpark of it): its window recorded as a group first, and, with
/// `place`, pointed at that pane (pane handle, the pane process's pid and start time) instead of
/// the one it had.
pub(crate) fn claim_lost(
    ctx: &Ctx,
    r: &Record,
    window: Option<&group::Group>,
    place: Option<(&crate::adapters::mux::Pane, (u32, u64))>,
    warnings: &mut Vec<String>,
) -> Result<(), String> {
    let home = &ctx.ledger.home;
    let _l = match crate::store::lock::try_lock(
        home,
        &crate::ops::park::session_lock_key(&r.entry.session_id),
    ) {
        Ok(crate::store::lock::TryLock::Acquired(l)) => l,
        Ok(crate::store::lock::TryLock::Held(o)) => {
            return Err(format!("its session is locked by pid {}", o.trim()))
        }
        Err(err) => return Err(err.to_string()),
    };
    let mut e = r.entry.clone();
    e.parked_at = r.last_seen.clone();
    e.last_error = Some(format!(
        "lost when its multiplexer died (last seen live {})",
        r.last_seen
    ));
    if let Some((p, proc_)) = place {
        e.place.pane = p.id.clone();
        e.place.session = p.session.clone();
        e.place.window_index = p.window_index;
        e.place.window_name = p.window_name.clone();
        e.place.pane_index = p.pane_index;
        e.place.pane_proc = proc_;
        e.pane_owned = false;
        e.group = None;
    } else if let Some(g) = window {
        if let Err(err) = group::save(home, g) {
            warnings.push(format!(
                "could not record window {}:{} as a group ({err}); it is tiled",
                g.session, g.window_index
            ));
            e.group = None;
        }
    }
    ctx.ledger.claim(&e).map_err(|e| e.to_string())
}

/// Whether two recorded directories are the same one.
pub(crate) fn same_dir(a: &str, b: &str) -> bool {
    let canon = |p: &str| std::fs::canonicalize(p).unwrap_or_else(|_| std::path::PathBuf::from(p));
    canon(a) == canon(b)
}

/// The pane a lost zellij session goes back into: in its resurrected session, the pane at its
/// place in its tab (same tab position and name), in its cwd, running no agent; else why not.
fn zellij_slot<'a>(
    ctx: &Ctx,
    s: &'a Scan,
    r: &Record,
) -> Result<&'a crate::adapters::mux::Pane, String> {
    let place = &r.entry.place;
    if !ctx.mux.serves(&place.server) {
        return Err(format!(
            "lost under zellij {}, which park does not reach now; set ZELLIJ_SOCKET_DIR",
            place.server
        ));
    }
    let mine =
        |p: &&crate::adapters::mux::Pane| p.server == place.server && p.session == place.session;
    if !s.panes.iter().any(|p| mine(&p)) {
        return Err(format!(
            "zellij session {:?} is not running: `zellij attach {}` resurrects it, then `park rebuild`",
            place.session, place.session
        ));
    }
    let pos = r
        .position
        .ok_or("journaled without its place in the tab (an older park): not guessing")?;
    let p = s
        .panes
        .iter()
        .filter(mine)
        .find(|p| {
            p.window_index == place.window_index
                && p.window_name == place.window_name
                && p.position == pos
        })
        .ok_or_else(|| {
            format!(
                "no pane at place {pos} of tab {:?} (position {}): not guessing",
                place.window_name, place.window_index
            )
        })?;
    if let Some(f) = s
        .found
        .iter()
        .find(|f| f.pane.as_ref().is_some_and(|fp| fp.id == p.id))
    {
        return Err(format!(
            "a fresh {} runs in its resurrected pane {}: never typed into",
            f.proc.agent.as_str(),
            p.id
        ));
    }
    // No cwd check: zellij (0.45, measured) resurrects a pane in the directory it was opened in,
    // not the one its shell had `cd`-ed into before starting the agent. The place in the tab is
    // the evidence, and the resume command changes to the session's directory itself.
    Ok(p)
}

/// Adopts the lost sessions of `server` into the ledger (nothing written with `dry_run`); returns
/// one [`LostSession`] per lost record of any server, with its outcome.
pub fn adopt(ctx: &Ctx, server: Option<&str>, dry_run: bool) -> (Vec<LostSession>, Vec<String>) {
    let home = &ctx.ledger.home;
    let mut warnings = vec![];
    let j0 = match journal::load(home) {
        Ok(j) => j,
        Err(e) => {
            warnings.push(format!("journal: {e}"));
            return (vec![], warnings);
        }
    };
    if j0.sessions.is_empty() {
        return (vec![], warnings);
    }
    let s = match scan::scan(ctx.platform.as_ref(), ctx.mux.as_ref(), false) {
        Ok(s) => s,
        Err(e) => {
            warnings.push(format!(
                "journal: process scan failed ({e}); no lost session adopted"
            ));
            return (
                j0.lost()
                    .map(|r| {
                        lost_session(r, LostOutcome::Skipped, Some("process scan failed".into()))
                    })
                    .collect(),
                warnings,
            );
        }
    };
    let (ledger, _) = ctx.ledger.all();
    // The fates as of now: the daemon may not have run a pass between the crash and this rebuild.
    let now = jiff::Timestamp::now().to_string();
    let (mut j, ..) = next_journal(ctx, &s, &j0, &ledger, &now);
    let mut out = vec![];
    // Lost with its server, but running again now (resumed by hand, by a background agent), or
    // in the ledger now: the pass made it a live record or dropped it; it is said here, never
    // adopted.
    for r in &j0.sessions {
        let was_lost = !alive(&s, r.process) && !alive(&s, r.server_process);
        if was_lost && !j.lost().any(|x| x.entry.id == r.entry.id) {
            // Adopted by a rebuild that stopped before it dropped the record: the ledger's entry
            // is that adoption, and this rebuild brings it back like one it adopts itself.
            if ledger
                .iter()
                .any(|e| e.id == r.entry.id && e.from_journal())
            {
                out.push(lost_session(
                    r,
                    LostOutcome::Adopted,
                    Some("adopted by an earlier rebuild that stopped midway".into()),
                ));
            } else if let Some(why) = refuse(r, &j0, &s, &ledger) {
                out.push(lost_session(r, LostOutcome::Skipped, Some(why)));
            }
        }
    }
    let mut adopted: Vec<String> = vec![];
    let lost: Vec<Record> = j.lost().cloned().collect();
    for r in &lost {
        // zellij resurrects its sessions itself: a lost zellij session goes back into the pane
        // at its place in its resurrected tab (re-pointed and marked here, resumed by `rebuild`).
        if crate::adapters::mux::is_zellij_server(&r.entry.place.server) {
            let slot = refuse(r, &j, &s, &ledger).map_or_else(|| zellij_slot(ctx, &s, r), Err);
            match slot {
                Err(why) => out.push(lost_session(r, LostOutcome::Skipped, Some(why))),
                Ok(_) if dry_run => out.push(lost_session(r, LostOutcome::WouldAdopt, None)),
                Ok(p) => match claim_lost(ctx, r, None, Some((p, (0, 0))), &mut warnings) {
                    Ok(()) => {
                        adopted.push(r.entry.id.clone());
                        let mut l = lost_session(r, LostOutcome::Adopted, None);
                        l.session = p.session.clone();
                        out.push(l);
                    }
                    Err(why) => out.push(lost_session(r, LostOutcome::Skipped, Some(why))),
                },
            }
            continue;
        }
        if server != Some(r.entry.place.server.as_str()) {
            out.push(lost_session(
                r,
                LostOutcome::Skipped,
                Some(format!(
                    "lost with tmux server {}; run `PARK_TMUX_SOCKET={} park rebuild` for it",
                    r.entry.place.server, r.entry.place.server
                )),
            ));
            continue;
        }
        if let Some(why) = refuse(r, &j, &s, &ledger) {
            out.push(lost_session(r, LostOutcome::Skipped, Some(why)));
            continue;
        }
        if dry_run {
            out.push(lost_session(r, LostOutcome::WouldAdopt, None));
            continue;
        }
        match claim_lost(
            ctx,
            r,
            r.window.as_deref().and_then(|w| j.window(w)),
            None,
            &mut warnings,
        ) {
            Ok(()) => {
                adopted.push(r.entry.id.clone());
                out.push(lost_session(r, LostOutcome::Adopted, None));
                // In the ledger, still lost in the journal: the next rebuild must not adopt it
                // twice (the ledger has it) and must still bring it back.
                crate::support::fault::point("after-adopt");
            }
            Err(why) => out.push(lost_session(r, LostOutcome::Skipped, Some(why))),
        }
    }
    if !dry_run && (!adopted.is_empty() || j.sessions != j0.sessions) {
        j.sessions.retain(|r| !adopted.contains(&r.entry.id));
        let keep: HashSet<String> = j.sessions.iter().filter_map(|r| r.window.clone()).collect();
        j.windows.retain(|g| keep.contains(&g.id));
        if let Err(e) = journal::save(home, &j) {
            warnings.push(format!(
                "journal: {e} (the adopted sessions are in the ledger; the next pass drops them)"
            ));
        }
    }
    (out, warnings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use park_protocol::Agent;

    fn record(sid: &str, pane_index: u32) -> Record {
        let mut e = Entry::sample(Agent::Claude, sid);
        e.place.pane_index = pane_index;
        Record {
            entry: e,
            process: (10, 20),
            server_process: (1, 2),
            first_seen: "2026-12-06T10:00:00Z".into(),
            last_seen: "2026-12-06T10:00:00Z".into(),
            window: None,
            lost_at: Some("2026-12-06T10:01:00Z".into()),
            position: None,
        }
    }

    const A: &str = "0b1d3c52-7a7e-4c1b-9d59-2f6f6c1e0a11";
    const B: &str = "6f2e9a4b-1c3d-4e5f-8a9b-0c1d2e3f4a5b";

    fn journal(rs: &[Record]) -> Journal {
        Journal {
            sessions: rs.to_vec(),
            ..Journal::default()
        }
    }

    #[test]
    fn a_lost_session_is_adopted_only_when_nothing_says_otherwise() {
        let a = record(A, 0);
        let j = journal(&[a.clone(), record(B, 1)]);
        assert_eq!(refusal(&a, &j, false, None, None), None);
        // Written within the slack after park last saw it live: the reply it was finishing.
        let late = "2026-12-06T10:00:20Z".parse().ok();
        assert_eq!(refusal(&a, &j, false, None, late), None);
    }

    #[test]
    fn a_session_in_the_ledger_or_running_again_is_never_adopted() {
        let a = record(A, 0);
        let j = journal(std::slice::from_ref(&a));
        let why = refusal(&a, &j, true, None, None).expect("the ledger has it");
        assert!(why.contains("ledger"), "{why}");
        let why =
            refusal(&a, &j, false, Some("pid 42 in pane %7".into()), None).expect("running again");
        assert!(why.contains("running again (pid 42 in pane %7)"), "{why}");
    }

    #[test]
    fn two_lost_sessions_in_one_slot_are_both_refused() {
        let (a, b) = (record(A, 0), record(B, 0));
        let j = journal(&[a.clone(), b.clone()]);
        let why = refusal(&a, &j, false, None, None).expect("same slot");
        assert!(
            why.contains(&b.entry.id) && why.contains("same pane"),
            "{why}"
        );
        assert!(refusal(&b, &j, false, None, None).is_some());
    }

    fn proc(pid: u32, start_ticks: u64, state: char) -> crate::adapters::platform::ProcInfo {
        crate::adapters::platform::ProcInfo {
            pid,
            start_ticks,
            state,
            ..Default::default()
        }
    }

    fn scan_of(procs: Vec<crate::adapters::platform::ProcInfo>) -> Scan {
        Scan {
            table: crate::adapters::platform::proctree::ProcTable::new(procs),
            panes: vec![],
            pane_error: None,
            tmux_absent: false,
            server: None,
            found: vec![],
            caller: Default::default(),
            warnings: vec![],
        }
    }

    /// Each record the pass did not refresh is kept, left or lost, and a kept live one is said
    /// (an `/exit` seen between Claude removing its status file and its process ending was in
    /// neither `live` nor `left`: the output lost sight of a session the journal still held).
    #[test]
    fn records_the_pass_did_not_refresh_are_kept_said_left_or_lost() {
        const C: &str = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d";
        const D: &str = "1f2e3d4c-5b6a-4978-8695-a4b3c2d1e0f9";
        let with = |sid: &str, process: (u32, u64), server: (u32, u64)| {
            let mut r = record(sid, 0);
            r.process = process;
            r.server_process = server;
            r.lost_at = None;
            r
        };
        let ending = with(A, (10, 20), (1, 2));
        let exited = with(B, (11, 21), (1, 2));
        let zombie = with(C, (12, 22), (1, 2));
        let crashed = with(D, (13, 23), (3, 4));
        let s = scan_of(vec![proc(1, 2, 'S'), proc(10, 20, 'S'), proc(12, 22, 'Z')]);
        let prev = [ending.clone(), exited, zombie, crashed];
        let out = settle(&prev, &[], &s, &HashSet::new(), "2026-12-07T10:00:00Z");

        let ids = |v: &[JournalLeft]| v.iter().map(|l| l.session_id.clone()).collect::<Vec<_>>();
        assert_eq!(
            ids(&out.kept),
            vec![A.to_string()],
            "the ending one is said"
        );
        assert!(out.kept[0].reason.contains("pid 10"), "{:?}", out.kept);
        assert_eq!(ids(&out.left), vec![B.to_string(), C.to_string()]);
        let keep: Vec<&str> = out
            .keep
            .iter()
            .map(|r| r.entry.session_id.as_str())
            .collect();
        assert_eq!(keep, vec![A, D], "kept live, and lost");
        assert_eq!(out.keep[0], ending, "kept as it was");
        assert_eq!(out.keep[1].lost_at.as_deref(), Some("2026-12-07T10:00:00Z"));

        // The daemon watches the kept one's process, never the lost one's.
        let j = journal(&out.keep);
        assert_eq!(watch_of(&j), vec![10]);

        // A record the pass recorded afresh is not settled again.
        let out = settle(
            &prev,
            &[ending],
            &s,
            &HashSet::new(),
            "2026-12-07T10:00:00Z",
        );
        assert!(out.kept.is_empty(), "{:?}", out.kept);
        assert!(!out.keep.iter().any(|r| r.entry.session_id == A));
    }

    #[test]
    fn a_transcript_written_after_the_crash_means_another_process() {
        let a = record(A, 0);
        let j = journal(std::slice::from_ref(&a));
        let later = "2026-12-06T10:05:00Z".parse().ok();
        let why = refusal(&a, &j, false, None, later).expect("written after");
        assert!(why.contains("another process may have resumed it"), "{why}");
    }
}
