//! `park rebuild [--dry-run] [--no-resume]`: recreate the windows and panes the multiplexer lost
//! (a killed tmux server, a closed window) from the ledger and the window groups, then resume each
//! parked session in its slot through the normal unpark path (every guard applies).
//!
//! Contract:
//! * Only entries parked on the server park talks to now are rebuilt (the recorded socket, started
//!   again when it is gone); others are listed with the variable that selects their server.
//! * zellij resurrects its own sessions but renumbers their panes: a zellij entry is never rebuilt
//!   as a tab; it is re-pointed at the one pane that carries its mark in the recorded tab and cwd
//!   (`store::slot`) and resumed there, or skipped with the reason (no such pane, or several). A
//!   held pane ("Waiting to run": Enter would start a fresh agent in the slot) is revived with ESC
//!   whether or not it kept its id; with `--no-resume` it gets its prompt and the way back typed.
//! * An entry counts as lost only when its pane is gone ([`group::lost`]); a window that still partly
//!   exists is never duplicated. The plan is computed, shown (`--dry-run` stops there), and acted on
//!   under one `rebuild` lock, so two rebuilds never make two windows for one session.
//! * Each entry is re-pointed at its new pane under its session lock, and only if it is still parked
//!   where the plan found it; its pane gets the pill, so the pane is recognisably its slot. The
//!   resume waits for the new pane's shell prompt, and a refusal leaves the entry parked in its slot.

use crate::adapters::mux::{MuxError, WindowSpec};
use crate::ctx::Ctx;
use crate::exit::Stop;
use crate::model::entry::{Entry, EntryState};
use crate::ops::park::shell_prompt_ready;
use crate::ops::unpark;
use crate::scan::live::LiveSet;
use crate::scan::{self, Scan};
use crate::store::group::{self, WindowPlan};
use crate::store::lock::{try_lock, TryLock};
use park_protocol::reports::{
    LostSession, RebuildOutcome, RebuildOutput, Relocated, Skipped, SlotOutcome, SlotResult,
    WindowOutcome,
};
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Default)]
pub struct Opts {
    pub dry_run: bool,
    pub json: bool,
    pub no_resume: bool,
    /// Things as they were before the crash: the sessions adopted from the journal (live when
    /// their multiplexer died) are resumed; parked ones come back parked in their slots. What the
    /// picker's Enter on a lost row and `[journal] restore` run.
    pub as_before: bool,
    /// Only the entries parked in this multiplexer session (the zellij plugin's call on load).
    pub session: Option<String>,
}

/// How long a rebuild waits for another one to finish before refusing: two strips of one
/// resurrected zellij session start theirs together, and the second must find the first's work
/// done rather than refuse (or act on a pane map the first is changing).
const LOCK_WAIT: Duration = Duration::from_secs(20);

fn rebuild_lock(ctx: &Ctx) -> Result<crate::store::lock::Lock, Stop> {
    let t0 = Instant::now();
    loop {
        match try_lock(&ctx.ledger.home, "rebuild") {
            Ok(TryLock::Acquired(l)) => return Ok(l),
            Ok(TryLock::Held(_)) if t0.elapsed() < LOCK_WAIT => {
                std::thread::sleep(Duration::from_millis(100))
            }
            Ok(TryLock::Held(owner)) => {
                return Err(Stop::refused(format!(
                    "another rebuild is running (pid {owner}); nothing done"
                ))
                .of("rebuild"));
            }
            Err(e) => return Err(Stop::refused(e.to_string()).of("rebuild")),
        }
    }
}

fn slot_outcome(s: &group::PlanSlot, outcome: RebuildOutcome) -> SlotOutcome {
    SlotOutcome {
        pane_index: s.pane_index,
        pane: None,
        cwd: s.cwd.clone(),
        command: s.command.clone(),
        entry: s.entry.clone(),
        session_id: s.session_id.clone(),
        agent: s.agent.clone(),
        outcome: SlotResult::Rebuild(outcome),
        reason: None,
    }
}

fn window_outcome(p: &WindowPlan, slots: Vec<SlotOutcome>) -> WindowOutcome {
    WindowOutcome {
        group: p.group.clone(),
        session: p.session.clone(),
        window_index: p.window_index,
        window_name: p.window_name.clone(),
        built_index: None,
        layout: p.layout.clone(),
        notes: vec![],
        slots,
    }
}

/// [`group::lost`] with the process table's facts about each pane's process.
pub(crate) fn lost_now(
    ctx: &Ctx,
    parked: &[Entry],
    panes: &[crate::adapters::mux::Pane],
) -> std::collections::HashSet<String> {
    group::lost(parked, panes, |pid, eid| {
        (
            ctx.platform.process(pid).map(|p| p.start_ticks),
            unpark::is_placeholder(ctx, pid, eid),
        )
    })
}

/// Rebuilds every lost window of the selected tmux server and re-points the zellij entries whose
/// session zellij resurrected; `Err` when nothing could be tried.
pub fn run(ctx: &Ctx, o: &Opts) -> Result<RebuildOutput, Stop> {
    let home = ctx.mux.home_server();
    let mut warnings = vec![];
    // Held from the plan to the last re-point: the pane map a plan is computed from is only
    // changed by the rebuild holding this lock (and lost sessions are adopted under it).
    let _lock = if o.dry_run {
        None
    } else {
        Some(rebuild_lock(ctx)?)
    };
    // Sessions live when their server died become parked entries first: the same windows,
    // groups and unpark path bring them back (a dry run only says which would).
    let (lost_sessions, jwarn) = if o.session.is_none() {
        crate::ops::journal::adopt(ctx, home.as_deref(), o.dry_run)
    } else {
        (vec![], vec![])
    };
    warnings.extend(jwarn);
    let lost_sessions = if o.dry_run || o.no_resume {
        lost_sessions
    } else {
        resume_adopted_in_place(ctx, lost_sessions)
    };
    let (mut entries, errs) = ctx.ledger.all();
    if o.dry_run {
        // What a real run would adopt, planned with the parked ones.
        entries.extend(journal_entries(ctx, &lost_sessions));
    }
    warnings.extend(errs.iter().map(|e| format!("ledger: {e}")));
    // Sessions live at the crash whose resume by an earlier rebuild was cut short after it
    // started them: the unpark path finishes them (`already-running`) or says why not.
    let resuming: Vec<Entry> = entries
        .iter()
        .filter(|e| {
            e.state == EntryState::Resuming
                && e.from_journal()
                && home.as_deref() == Some(e.place.server.as_str())
        })
        .cloned()
        .collect();
    let parked: Vec<Entry> = entries
        .into_iter()
        .filter(|e| e.state == EntryState::Parked)
        .collect();
    // `--as-before`: only the sessions live at the crash are resumed, adopted now or by an
    // earlier rebuild that stopped before resuming them (the entry says where it came from).
    let resume_only: Option<Vec<String>> = o.as_before.then(|| {
        parked
            .iter()
            .filter(|e| e.from_journal())
            .map(|e| e.id.clone())
            .collect()
    });
    let mut skipped = vec![];
    let mut mine = vec![];
    let mut zellij = vec![];
    let down = crate::rows::slots::sessions_down(ctx, &parked);
    for e in parked
        .iter()
        .filter(|e| o.session.as_ref().is_none_or(|s| *s == e.place.session))
    {
        let is_zellij = crate::adapters::mux::is_zellij_server(&e.place.server);
        if home.as_deref() == Some(e.place.server.as_str()) {
            mine.push(e.clone());
            continue;
        }
        // zellij brings a dead session back itself (on attach); until then there is no pane to
        // re-point to, and park never makes a new session in its place.
        if down.iter().any(|(_, ids)| ids.contains(&e.id)) {
            skipped.push(Skipped {
                entry: e.id.clone(),
                server: e.place.server.clone(),
                reason: crate::rows::slots::session_down_why(&e.place.session, &e.id),
            });
            continue;
        }
        if is_zellij && ctx.mux.serves(&e.place.server) {
            zellij.push(e.clone());
            continue;
        }
        let reason = if is_zellij {
            format!(
                "parked under zellij {}, which park does not reach now; set ZELLIJ_SOCKET_DIR",
                e.place.server
            )
        } else {
            format!(
                "parked on tmux server {}; run `PARK_TMUX_SOCKET={} park rebuild` for it",
                e.place.server, e.place.server
            )
        };
        skipped.push(Skipped {
            entry: e.id.clone(),
            server: e.place.server.clone(),
            reason,
        });
    }
    let relocated = if zellij.is_empty() {
        vec![]
    } else {
        // Parked zellij entries stay parked under `--as-before` (the adopted ones were resumed
        // in place above).
        relocate(
            ctx,
            &zellij,
            &parked,
            o.no_resume || o.as_before,
            o.dry_run,
            &mut skipped,
        )
    };
    // No parked pane of the selected tmux server: nothing of tmux to list or rebuild, and the
    // output names no tmux server for entries that are zellij's.
    // With `--session`, the tmux server matters only when the session has entries there.
    let home = home.filter(|_| {
        !mine.is_empty() || (o.session.is_none() && zellij.is_empty() && skipped.is_empty())
    });
    let Some(server) = home else {
        if o.session.is_none() && zellij.is_empty() && skipped.is_empty() {
            return Err(Stop::refused(
                "no tmux server is selected (set PARK_TMUX_SOCKET or run inside tmux)",
            )
            .of("rebuild"));
        }
        let out = RebuildOutput {
            schema: park_protocol::SCHEMA_VERSION,
            server: String::new(),
            dry_run: o.dry_run,
            windows: vec![],
            relocated,
            skipped,
            warnings,
            lost: lost_sessions,
        };
        if !o.dry_run {
            ctx.publish_status();
            tell_lost(ctx, o, &out);
        }
        return Ok(out);
    };
    // A server that is not running has lost every pane; any other listing failure means the map
    // cannot be trusted, and guessing which windows are gone would duplicate live ones.
    let panes = match ctx.mux.list_panes() {
        Ok(p) => p,
        Err(MuxError::Unreachable(..) | MuxError::Absent(..)) => vec![],
        Err(e) => {
            return Err(
                Stop::refused(format!("{e}; refusing to guess which windows are gone"))
                    .of("rebuild"),
            );
        }
    };
    let panes = close_unfinished(ctx, panes, o.dry_run, &mut warnings);
    let lost = lost_now(ctx, &mine, &panes);
    let (groups, gerrs) = group::load_all(&ctx.ledger.home);
    warnings.extend(gerrs.into_iter().map(|e| format!("group: {e}")));
    let plans = group::plan(&groups, &mine, &lost);
    let mut out = RebuildOutput {
        schema: park_protocol::SCHEMA_VERSION,
        server: server.clone(),
        dry_run: o.dry_run,
        windows: vec![],
        relocated,
        skipped,
        warnings,
        lost: lost_sessions,
    };
    if o.dry_run || plans.is_empty() {
        out.windows = plans
            .iter()
            .map(|p| {
                window_outcome(
                    p,
                    p.slots
                        .iter()
                        .map(|s| {
                            slot_outcome(
                                s,
                                if s.entry.is_some() {
                                    RebuildOutcome::WouldRebuild
                                } else {
                                    RebuildOutcome::Shell
                                },
                            )
                        })
                        .collect(),
                )
            })
            .collect();
        out.lost
            .extend(resume_pending(ctx, &mine, &resuming, &lost, o));
        if !o.dry_run && !out.lost.is_empty() {
            ctx.publish_status();
            tell_lost(ctx, o, &out);
        }
        return Ok(out);
    }
    for p in &plans {
        out.windows
            .push(build_one(ctx, p, o, resume_only.as_deref()));
    }
    out.lost
        .extend(resume_pending(ctx, &mine, &resuming, &lost, o));
    ctx.publish_status();
    tell_lost(ctx, o, &out);
    Ok(out)
}

/// Windows an earlier rebuild built and was stopped in before it re-pointed their sessions at
/// them (the `after-window` fault): no entry points at them, so planned from their bare shells the
/// window would be built a second time. One whose every pane still runs only a shell is closed
/// (a dry run says it would); one where anything else runs now is left as it is, with a warning.
fn close_unfinished(
    ctx: &Ctx,
    panes: Vec<crate::adapters::mux::Pane>,
    dry_run: bool,
    warnings: &mut Vec<String>,
) -> Vec<crate::adapters::mux::Pane> {
    let Ok(left) = ctx.mux.unfinished_builds() else {
        return panes;
    };
    let mut closed: Vec<(String, u32)> = vec![];
    for (window, session, index) in left {
        let inside: Vec<&crate::adapters::mux::Pane> = panes
            .iter()
            .filter(|p| p.session == session && p.window_index == index)
            .collect();
        let bare = !inside.is_empty()
            && inside
                .iter()
                .all(|p| crate::scan::SHELLS.contains(&p.current_command.as_str()));
        let what = format!("window {session}:{index}, half-built by a rebuild that was stopped");
        if !bare {
            warnings.push(format!("{what}: something runs in it now, left as it is"));
        } else if dry_run {
            warnings.push(format!("would close {what} (bare shells)"));
        } else {
            match ctx.mux.kill_window(&window) {
                Ok(()) => {
                    warnings.push(format!("closed {what} (bare shells)"));
                    closed.push((session, index));
                }
                Err(e) => warnings.push(format!("could not close {what}: {e}")),
            }
        }
    }
    panes
        .into_iter()
        .filter(|p| {
            !closed
                .iter()
                .any(|(s, i)| *s == p.session && *i == p.window_index)
        })
        .collect()
}

/// Sessions live at a crash that an earlier rebuild adopted and put back in their rebuilt panes
/// but did not resume (it was stopped, or a guard refused then): still parked in those panes,
/// from the journal; or resumed there by a rebuild stopped before it saw them run (`resuming`).
/// They are resumed (or found running) there now, through the same unpark path (`--no-resume`:
/// listed only).
fn resume_pending(
    ctx: &Ctx,
    mine: &[Entry],
    resuming: &[Entry],
    lost: &std::collections::HashSet<String>,
    o: &Opts,
) -> Vec<LostSession> {
    use park_protocol::reports::{LostOutcome, LostResult};
    let pending: Vec<&Entry> = mine
        .iter()
        .filter(|e| e.from_journal() && !lost.contains(&e.id))
        .chain(resuming)
        .collect();
    if pending.is_empty() {
        return vec![];
    }
    let lost_at = |e: &Entry, outcome: LostResult, why: Option<String>| {
        crate::ops::journal::entry_lost(e, &e.parked_at, outcome, why)
    };
    let waiting = "adopted by an earlier rebuild and parked in its rebuilt pane";
    let listed = |why: String| -> Vec<LostSession> {
        pending
            .iter()
            .map(|e| {
                lost_at(
                    e,
                    LostResult::Journal(LostOutcome::Adopted),
                    Some(why.clone()),
                )
            })
            .collect()
    };
    if o.dry_run || o.no_resume {
        return listed(waiting.into());
    }
    let s = match scan::scan(ctx.platform.as_ref(), ctx.mux.as_ref(), false) {
        Ok(s) => s,
        Err(err) => return listed(format!("{waiting}; process scan failed ({err})")),
    };
    pending
        .iter()
        .map(|e| {
            let mut u = resume_in(ctx, &s, &e.place.pane, &e.id);
            // Gone from the ledger since it was read: the stopped rebuild's resume took and its
            // entry was closed as the session came up. What runs now says so.
            if u.outcome == park_protocol::Outcome::NotParked
                && scan::scan(ctx.platform.as_ref(), ctx.mux.as_ref(), false)
                    .is_ok_and(|now| LiveSet::from_scan(&now).contains(&e.session_id))
            {
                u.outcome = park_protocol::Outcome::AlreadyRunning;
                u.reason = Some("running again (resumed by an earlier rebuild)".into());
            }
            lost_at(e, LostResult::Unpark(u.outcome), u.reason)
        })
        .collect()
}

/// `--as-before` runs from a hook or a yes to a question, where nobody reads its output: the
/// people attached are told what came back.
fn tell_lost(ctx: &Ctx, o: &Opts, out: &RebuildOutput) {
    if o.as_before && !out.lost.is_empty() {
        ctx.mux.notify(&format!("park: {}", out.lost_line().0));
    }
}

/// Lost zellij sessions adopted into the pane zellij resurrected for them: each pane gets its
/// mark (the evidence that it is the slot), then each session is resumed there through the normal
/// unpark path; the outcome becomes the unpark's.
fn resume_adopted_in_place(ctx: &Ctx, mut lost: Vec<LostSession>) -> Vec<LostSession> {
    let todo: Vec<usize> = (0..lost.len())
        .filter(|&i| {
            lost[i].outcome == "adopted" && crate::adapters::mux::is_zellij_server(&lost[i].server)
        })
        .collect();
    if todo.is_empty() {
        return lost;
    }
    let entry = |id: &str| ctx.ledger.load(id).ok().flatten();
    for &i in &todo {
        if let Some(e) = entry(&lost[i].entry) {
            crate::ops::park::mark_parked_pane(ctx, &e, &e.place.pane);
        }
    }
    let s = match scan::scan(ctx.platform.as_ref(), ctx.mux.as_ref(), false) {
        Ok(s) => s,
        Err(err) => {
            for &i in &todo {
                lost[i].reason = Some(format!(
                    "process scan failed ({err}); left parked in its pane"
                ));
            }
            return lost;
        }
    };
    for &i in &todo {
        let Some(e) = entry(&lost[i].entry) else {
            continue;
        };
        let u = resume_in(ctx, &s, &e.place.pane, &e.id);
        lost[i].outcome = park_protocol::reports::LostResult::Unpark(u.outcome);
        lost[i].reason = u.reason;
    }
    lost
}

/// The entries a dry run's `would-adopt` lost sessions would become (for the plan only).
fn journal_entries(ctx: &Ctx, lost: &[park_protocol::reports::LostSession]) -> Vec<Entry> {
    let Ok(j) = crate::store::journal::load(&ctx.ledger.home) else {
        return vec![];
    };
    lost.iter()
        .filter(|l| l.outcome == "would-adopt")
        .filter_map(|l| j.sessions.iter().find(|r| r.entry.id == l.entry))
        .map(|r| r.entry.clone())
        .collect()
}

/// Whether every agent slot that was tried came back (no `refused` or `failed` slot).
pub fn all_back(out: &RebuildOutput) -> bool {
    !out.windows
        .iter()
        .flat_map(|w| &w.slots)
        .map(|s| &s.outcome)
        .chain(out.relocated.iter().map(|r| &r.outcome))
        .any(|o| matches!(o.as_str(), "refused" | "failed"))
}

/// zellij resurrects its own sessions, renumbering every pane: each parked zellij entry whose
/// recorded pane is no longer its slot — or still is, but held ("Waiting to run") — is found by its mark ([`crate::rows::slots::locate`]), re-pointed under
/// its session lock and resumed there through the normal unpark path. One that cannot be shown to
/// be in exactly one pane is skipped with the reason, never guessed.
fn relocate(
    ctx: &Ctx,
    entries: &[Entry],
    all: &[Entry],
    no_resume: bool,
    dry_run: bool,
    skipped: &mut Vec<Skipped>,
) -> Vec<Relocated> {
    let s = match scan::scan(ctx.platform.as_ref(), ctx.mux.as_ref(), false) {
        Ok(s) if s.pane_error.is_none() => s,
        Ok(s) => {
            let why = s.pane_error.unwrap_or_default();
            skipped.extend(entries.iter().map(|e| Skipped {
                entry: e.id.clone(),
                server: e.place.server.clone(),
                reason: format!("pane map unavailable: {why}"),
            }));
            return vec![];
        }
        Err(err) => {
            skipped.extend(entries.iter().map(|e| Skipped {
                entry: e.id.clone(),
                server: e.place.server.clone(),
                reason: format!("process scan failed: {err}"),
            }));
            return vec![];
        }
    };
    let mut out = vec![];
    for e in entries {
        let (p, moved) = match crate::rows::slots::locate(ctx, e, &s.panes, all) {
            // A held pane that kept its id is still a trap: Enter runs its saved command, a fresh
            // agent in the parked slot. It is revived (or resumed) like a renumbered one.
            crate::store::slot::Slot::Here(p) if p.dead => (p, false),
            crate::store::slot::Slot::Here(_) => continue,
            crate::store::slot::Slot::Missing(why) => {
                skipped.push(Skipped {
                    entry: e.id.clone(),
                    server: e.place.server.clone(),
                    reason: format!(
                        "{why}; `park unpark {}` resumes it in a new pane of tab `{}` (session `{}`)",
                        e.id, e.place.window_name, e.place.session
                    ),
                });
                continue;
            }
            crate::store::slot::Slot::Moved(p) => (p, true),
        };
        let mut r = Relocated {
            entry: e.id.clone(),
            session_id: e.session_id.clone(),
            agent: e.agent.as_str().to_string(),
            server: e.place.server.clone(),
            from: e.place.pane.clone(),
            pane: p.id.clone(),
            session: p.session.clone(),
            tab: p.window_name.clone(),
            cwd: p.cwd.clone(),
            outcome: SlotResult::Rebuild(RebuildOutcome::WouldRebuild),
            reason: None,
        };
        if dry_run {
            out.push(r);
            continue;
        }
        if !moved {
            r.outcome = SlotResult::Rebuild(RebuildOutcome::Rebuilt);
        } else {
            match crate::ops::park::edit_parked(ctx, &e.id, |x| {
                crate::rows::slots::repoint_in_memory(x, &p);
                Ok(())
            }) {
                Ok(_) => r.outcome = SlotResult::Rebuild(RebuildOutcome::Rebuilt),
                Err(why) => {
                    r.outcome = SlotResult::Rebuild(RebuildOutcome::Refused);
                    r.reason = Some(why);
                    out.push(r);
                    continue;
                }
            }
        }
        if !no_resume {
            let u = resume_in(ctx, &s, &p.id, &e.id);
            r.outcome = SlotResult::Unpark(u.outcome);
            r.reason = u.reason;
        } else {
            // A held pane ("Waiting to run …") runs its saved command on Enter — for a pane-owned
            // agent a fresh one in the parked slot: it becomes a shell first (ESC, never Enter).
            // Then, as for a resurrected pane that came back a bare prompt, the way back is
            // typed again, as after the park.
            if p.dead {
                if let Err(why) = ctx.mux.revive(&p.id) {
                    r.reason = Some(format!("held pane not revived: {why}"));
                }
            }
            crate::ops::park::prefill_at_prompt(ctx, &p.id, e);
        }
        out.push(r);
    }
    out
}

/// Recreates one window, re-points its entries, then resumes them in slot order (only those in
/// `resume_only` when it is given; the others stay parked in their new panes).
fn build_one(ctx: &Ctx, p: &WindowPlan, o: &Opts, resume_only: Option<&[String]>) -> WindowOutcome {
    let mut w = window_outcome(p, vec![]);
    let spec = WindowSpec {
        session: p.session.clone(),
        window_index: p.window_index,
        window_name: p.window_name.clone(),
        layout: p.layout.clone(),
        width: p.width,
        height: p.height,
        cwds: p
            .slots
            .iter()
            .map(|s| usable_cwd(&s.cwd, ctx.ledger.home.as_path()))
            .collect(),
        env: ctx.park_env(),
    };
    let built = match ctx.mux.build_window(&spec) {
        Ok(b) => b,
        Err(e) => {
            w.slots = p
                .slots
                .iter()
                .map(|s| {
                    let mut x = slot_outcome(
                        s,
                        if s.entry.is_some() {
                            RebuildOutcome::Failed
                        } else {
                            RebuildOutcome::Shell
                        },
                    );
                    x.reason = Some(format!("could not recreate the window: {e}"));
                    x
                })
                .collect();
            return w;
        }
    };
    // The window stands, its entries still point at their old panes.
    crate::support::fault::point("after-window");
    w.built_index = Some(built.window_index);
    w.notes = built.notes.clone();
    let mut repointed: Vec<(usize, String)> = vec![];
    for (i, (s, pane)) in p.slots.iter().zip(built.panes.iter()).enumerate() {
        let mut x = slot_outcome(s, RebuildOutcome::Shell);
        x.pane = Some(pane.clone());
        if let Some(eid) = &s.entry {
            match repoint(ctx, eid, pane, &p.session, built.window_index, i as u32) {
                Ok(()) => {
                    x.outcome = SlotResult::Rebuild(RebuildOutcome::Rebuilt);
                    repointed.push((i, eid.clone()));
                }
                Err(why) => {
                    x.outcome = SlotResult::Rebuild(RebuildOutcome::Refused);
                    x.reason = Some(why);
                }
            }
        } else if !s.command.is_empty() && !crate::scan::SHELLS.contains(&s.command.as_str()) {
            x.reason = Some(format!(
                "was running `{}`; a shell is open in its cwd",
                s.command
            ));
        }
        if x.cwd != spec.cwds[i] {
            x.reason = Some(format!(
                "{} is gone; the pane opened in {}",
                x.cwd, spec.cwds[i]
            ));
        }
        w.slots.push(x);
    }
    ctx.mux.finish_build(&built.panes[0]);
    // Every entry points at its new pane; none is resumed yet.
    crate::support::fault::point("after-repoint");
    repointed.retain(|(_, eid)| resume_only.is_none_or(|only| only.contains(eid)));
    if o.no_resume || repointed.is_empty() {
        return w;
    }
    let fresh = scan::scan(ctx.platform.as_ref(), ctx.mux.as_ref(), false);
    let Ok(s) = fresh else {
        for (i, _) in &repointed {
            w.slots[*i].reason = Some("process scan failed; left parked in its new pane".into());
        }
        return w;
    };
    for (i, eid) in repointed {
        let pane = w.slots[i].pane.clone().unwrap_or_default();
        let r = resume_in(ctx, &s, &pane, &eid);
        w.slots[i].outcome = SlotResult::Unpark(r.outcome);
        w.slots[i].reason = r.reason;
        w.slots[i].pane = r.pane.or(w.slots[i].pane.take());
    }
    w
}

/// Resumes a re-pointed entry in its pane once the pane's shell is up (the same hand-off as
/// `park unpark <entry>`, which re-checks everything under the locks).
pub(crate) fn resume_in(ctx: &Ctx, s: &Scan, pane: &str, eid: &str) -> park_protocol::ActionResult {
    wait_for_shell(ctx, pane);
    unpark::unpark_remote(ctx, s, &LiveSet::from_scan(s), eid, eid, false, false)
}

/// The recorded cwd if it still exists, else park's home's parent (the pane must open somewhere;
/// the slot's outcome says so).
fn usable_cwd(cwd: &str, home: &std::path::Path) -> String {
    if std::path::Path::new(cwd).is_dir() {
        return cwd.to_string();
    }
    std::env::var("HOME")
        .ok()
        .filter(|h| std::path::Path::new(h).is_dir())
        .unwrap_or_else(|| home.to_string_lossy().into_owned())
}

/// Points a still-parked entry at its new pane (under its session lock) and marks the pane.
fn repoint(
    ctx: &Ctx,
    eid: &str,
    pane: &str,
    session: &str,
    window_index: u32,
    pane_index: u32,
) -> Result<(), String> {
    let e = crate::ops::park::edit_parked(ctx, eid, |e| {
        e.place.pane = pane.to_string();
        e.place.session = session.to_string();
        e.place.window_index = window_index;
        e.place.pane_index = pane_index;
        // The slot runs a shell now, whatever the pane ran before.
        e.pane_owned = false;
        Ok(())
    })?;
    crate::ops::park::mark_parked_pane(ctx, &e, pane);
    Ok(())
}

/// A new pane's shell takes a moment to print its first prompt; unpark only types at one.
fn wait_for_shell(ctx: &Ctx, pane: &str) {
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(10) {
        let p = ctx
            .mux
            .list_panes()
            .ok()
            .and_then(|ps| ps.into_iter().find(|p| p.id == pane));
        match p {
            Some(p) if shell_prompt_ready(ctx, &p) => return,
            None => return,
            _ => std::thread::sleep(Duration::from_millis(100)),
        }
    }
}
