//! `park rebuild [--dry-run] [--no-resume]`: recreate the windows and panes the multiplexer lost
//! (a killed tmux server, a closed window) from the ledger and the window groups, then resume each
//! parked session in its slot through the normal unpark path (every guard applies).
//!
//! Contract:
//! * Only entries parked on the server park talks to now are rebuilt (the recorded socket, started
//!   again when it is gone); others are listed with the variable that selects their server. zellij
//!   restores its own sessions, so rebuild is tmux-only and says so.
//! * An entry counts as lost only when its pane is gone ([`group::lost`]); a window that still partly
//!   exists is never duplicated. The plan is computed, shown (`--dry-run` stops there), and acted on
//!   under one `rebuild` lock, so two rebuilds never make two windows for one session.
//! * Each entry is re-pointed at its new pane under its session lock, and only if it is still parked
//!   where the plan found it; its pane gets the pill, so the pane is recognisably its slot. The
//!   resume waits for the new pane's shell prompt, and a refusal leaves the entry parked in its slot.

use crate::ctx::Ctx;
use crate::exit::ExitStatus;
use crate::group::{self, WindowPlan};
use crate::ledger::{Entry, EntryState};
use crate::lock::{try_lock, TryLock};
use crate::mux::{MuxError, WindowSpec};
use crate::park::shell_prompt_ready;
use crate::scan;
use crate::unpark::{self, LiveSet};
use serde::Serialize;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy, Default)]
pub struct Opts {
    pub dry_run: bool,
    pub json: bool,
    pub no_resume: bool,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct SlotOutcome {
    pub pane_index: u32,
    pub pane: Option<String>,
    pub cwd: String,
    pub command: String,
    pub entry: Option<String>,
    pub session_id: Option<String>,
    pub agent: Option<String>,
    /// `would-rebuild`, `shell`, `unparked`, `rebuilt` (re-pointed, left parked), `refused`, `failed`.
    pub outcome: String,
    pub reason: Option<String>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct WindowOutcome {
    pub group: Option<String>,
    pub session: String,
    pub window_index: u32,
    pub window_name: String,
    /// The index the window got (the recorded one unless it was taken).
    pub built_index: Option<u32>,
    pub layout: Option<String>,
    pub notes: Vec<String>,
    pub slots: Vec<SlotOutcome>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Skipped {
    pub entry: String,
    pub server: String,
    pub reason: String,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct RebuildOutput {
    pub schema: u32,
    pub server: String,
    pub dry_run: bool,
    pub windows: Vec<WindowOutcome>,
    pub skipped: Vec<Skipped>,
    pub warnings: Vec<String>,
}

fn slot_outcome(s: &group::PlanSlot, outcome: &str) -> SlotOutcome {
    SlotOutcome {
        pane_index: s.pane_index,
        pane: None,
        cwd: s.cwd.clone(),
        command: s.command.clone(),
        entry: s.entry.clone(),
        session_id: s.session_id.clone(),
        agent: s.agent.clone(),
        outcome: outcome.into(),
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
pub fn lost_now(
    ctx: &Ctx,
    parked: &[Entry],
    panes: &[crate::mux::Pane],
) -> std::collections::HashSet<String> {
    group::lost(parked, panes, |pid, eid| {
        (
            ctx.platform.process(pid).map(|p| p.start_ticks),
            unpark::is_placeholder(ctx, pid, eid),
        )
    })
}

pub fn run(ctx: &Ctx, o: Opts) -> ExitStatus {
    let Some(server) = ctx.mux.home_server() else {
        eprintln!(
            "park rebuild: no tmux server is selected (set PARK_TMUX_SOCKET or run inside tmux)"
        );
        return ExitStatus::Refused;
    };
    let mut warnings = vec![];
    let (entries, errs) = ctx.ledger.all();
    warnings.extend(errs.iter().map(|e| format!("ledger: {e}")));
    let parked: Vec<Entry> = entries
        .into_iter()
        .filter(|e| e.state == EntryState::Parked)
        .collect();
    let mut skipped = vec![];
    let mut mine = vec![];
    for e in parked {
        if e.place.server == server {
            mine.push(e);
            continue;
        }
        let reason = if crate::mux::is_zellij_server(&e.place.server) {
            "parked under zellij, which restores its own sessions; rebuild recreates tmux windows only".to_string()
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
    // A server that is not running has lost every pane; any other listing failure means the map
    // cannot be trusted, and guessing which windows are gone would duplicate live ones.
    let panes = match ctx.mux.list_panes() {
        Ok(p) => p,
        Err(MuxError::Unreachable(..)) => vec![],
        Err(e) => {
            eprintln!("park rebuild: {e}; refusing to guess which windows are gone");
            return ExitStatus::Refused;
        }
    };
    let lost = lost_now(ctx, &mine, &panes);
    let (groups, gerrs) = group::load_all(&ctx.ledger.home);
    warnings.extend(gerrs.into_iter().map(|e| format!("group: {e}")));
    let plans = group::plan(&groups, &mine, &lost);
    let mut out = RebuildOutput {
        schema: park_protocol::SCHEMA_VERSION,
        server: server.clone(),
        dry_run: o.dry_run,
        windows: vec![],
        skipped,
        warnings,
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
                                    "would-rebuild"
                                } else {
                                    "shell"
                                },
                            )
                        })
                        .collect(),
                )
            })
            .collect();
        return print(&out, o.json);
    }
    let _lock = match try_lock(&ctx.ledger.home, "rebuild") {
        Ok(TryLock::Acquired(l)) => l,
        Ok(TryLock::Held(owner)) => {
            eprintln!("park rebuild: another rebuild is running (pid {owner}); nothing done");
            return ExitStatus::Refused;
        }
        Err(e) => {
            eprintln!("park rebuild: {e}");
            return ExitStatus::Refused;
        }
    };
    for p in &plans {
        out.windows.push(build_one(ctx, p, o));
    }
    ctx.publish_status();
    print(&out, o.json)
}

/// Recreates one window, re-points its entries, then resumes them in slot order.
fn build_one(ctx: &Ctx, p: &WindowPlan, o: Opts) -> WindowOutcome {
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
                    let mut x = slot_outcome(s, if s.entry.is_some() { "failed" } else { "shell" });
                    x.reason = Some(format!("could not recreate the window: {e}"));
                    x
                })
                .collect();
            return w;
        }
    };
    w.built_index = Some(built.window_index);
    w.notes = built.notes.clone();
    let mut repointed: Vec<(usize, String)> = vec![];
    for (i, (s, pane)) in p.slots.iter().zip(built.panes.iter()).enumerate() {
        let mut x = slot_outcome(s, "shell");
        x.pane = Some(pane.clone());
        if let Some(eid) = &s.entry {
            match repoint(ctx, eid, pane, &p.session, built.window_index, i as u32) {
                Ok(()) => {
                    x.outcome = "rebuilt".into();
                    repointed.push((i, eid.clone()));
                }
                Err(why) => {
                    x.outcome = "refused".into();
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
    if o.no_resume {
        return w;
    }
    let fresh = scan::scan(ctx.platform.as_ref(), ctx.mux.as_ref(), false);
    let Ok(s) = fresh else {
        for (i, _) in &repointed {
            w.slots[*i].reason = Some("process scan failed; left parked in its new pane".into());
        }
        return w;
    };
    let live = LiveSet::from_scan(&s);
    for (i, eid) in repointed {
        let pane = w.slots[i].pane.clone().unwrap_or_default();
        wait_for_shell(ctx, &pane);
        let r = unpark::unpark_remote(ctx, &s, &live, &eid, &eid, false);
        w.slots[i].outcome = r.outcome.to_string();
        w.slots[i].reason = r.reason;
        w.slots[i].pane = r.pane.or(w.slots[i].pane.take());
    }
    w
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
    let e = crate::park::edit_parked(ctx, eid, |e| {
        e.place.pane = pane.to_string();
        e.place.session = session.to_string();
        e.place.window_index = window_index;
        e.place.pane_index = pane_index;
        // The slot runs a shell now, whatever the pane ran before.
        e.pane_owned = false;
        Ok(())
    })?;
    crate::park::mark_parked_pane(ctx, &e, pane);
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

fn print(out: &RebuildOutput, json: bool) -> ExitStatus {
    let bad = out
        .windows
        .iter()
        .flat_map(|w| &w.slots)
        .any(|s| matches!(s.outcome.as_str(), "refused" | "failed"));
    if json {
        println!("{}", serde_json::to_string_pretty(out).unwrap_or_default());
    } else {
        if out.windows.is_empty() {
            println!(
                "nothing to rebuild: every parked pane on {} is still there",
                out.server
            );
        }
        for w in &out.windows {
            let verb = if out.dry_run {
                "would rebuild"
            } else {
                "rebuilt"
            };
            let at = match w.built_index {
                Some(i) if i != w.window_index => format!(" (now at index {i})"),
                _ => String::new(),
            };
            println!(
                "{verb} {}:{} \"{}\"{at}: {} pane(s), {}{}",
                w.session,
                w.window_index,
                w.window_name,
                w.slots.len(),
                if w.layout.is_some() {
                    "recorded layout"
                } else {
                    "tiled"
                },
                w.group
                    .as_deref()
                    .map(|g| format!(", group {g}"))
                    .unwrap_or_default()
            );
            for s in &w.slots {
                let who = match (&s.agent, &s.session_id) {
                    (Some(a), Some(id)) => {
                        format!("{a} {}", id.chars().take(8).collect::<String>())
                    }
                    _ => format!(
                        "shell (was {})",
                        if s.command.is_empty() {
                            "?"
                        } else {
                            &s.command
                        }
                    ),
                };
                println!(
                    "  {} {:<6} {:<26} {:<14} {}{}",
                    s.pane_index,
                    s.pane.as_deref().unwrap_or("-"),
                    who,
                    s.outcome,
                    s.cwd,
                    s.reason
                        .as_deref()
                        .map(|r| format!("  ({r})"))
                        .unwrap_or_default()
                );
            }
            for n in &w.notes {
                println!("  note: {n}");
            }
        }
        for s in &out.skipped {
            println!("skipped {}: {}", s.entry, s.reason);
        }
        for x in &out.warnings {
            eprintln!("park rebuild: {x}");
        }
    }
    ExitStatus::from_ok(!bad)
}
