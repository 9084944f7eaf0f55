//! The guard chain (tests/GUARDS.md): pure functions of scanned evidence, each with its own refusal.
//!
//! Contract: `check` returns the first refusal, in a fixed order, or `Ok`. Nothing here reads the
//! system; the same verdict runs before the transaction and again right before the kill. `--force`
//! waives only the CPU corroboration; `--kill-anyway` also waives busy/waiting/shell/draft. Nothing
//! waives restorable, not-self or full-map.

pub mod auto;
pub mod target;
pub mod unpark;
pub mod verdict;

use crate::scan::{Caller, Found};
use park_protocol::Status;

/// Tree CPU above this (percent of one core, over the sample window) reads as a turn in flight.
pub const CPU_BUSY_PERCENT: f64 = 20.0;

#[derive(Debug, Clone, Copy, Default)]
pub struct Overrides {
    pub force: bool,
    pub kill_anyway: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub guard: &'static str,
    pub why: String,
}

use crate::support::fault::disabled;

fn refuse(guard: &'static str, why: impl Into<String>) -> Result<(), Refusal> {
    Err(Refusal {
        guard,
        why: why.into(),
    })
}

pub fn full_map(pane_error: Option<&str>) -> Result<(), Refusal> {
    match pane_error {
        Some(e) if !disabled("full-map") => refuse(
            "full-map",
            format!("the pane map is incomplete ({e}); never parking from a partial map"),
        ),
        _ => Ok(()),
    }
}

pub fn bound(f: &Found) -> Result<(), Refusal> {
    if f.proc.background && !disabled("bound") {
        // The scan words it (with the agent's way to reach the session).
        return refuse(
            "bound",
            f.status_why.clone().unwrap_or_else(|| {
                "a background session, run by its agent's supervisor in no pane: park never parks it".into()
            }),
        );
    }
    if f.pane.is_none() && !disabled("bound") {
        return refuse(
            "bound",
            "not bound to a pane of this tmux server or zellij socket root (no TMUX_PANE / ZELLIJ_PANE_ID, no pane ancestor)",
        );
    }
    Ok(())
}

pub fn restorable(f: &Found) -> Result<(), Refusal> {
    if disabled("restorable") {
        return Ok(());
    }
    let Some(_) = &f.ident.session_id else {
        return refuse(
            "restorable",
            f.ident
                .reason
                .clone()
                .unwrap_or_else(|| "no exact session id".into()),
        );
    };
    if let Some(r) = &f.ident.reason {
        return refuse("restorable", r.clone());
    }
    match &f.ident.transcript {
        Some(_) if f.transcript_present => {}
        Some(t) => {
            return refuse(
                "restorable",
                format!("transcript {} does not exist", t.display()),
            )
        }
        None => return refuse("restorable", "no transcript to resume from"),
    }
    if f.cwd.is_empty() || !f.cwd_present {
        return refuse("restorable", format!("cwd {:?} does not exist", f.cwd));
    }
    Ok(())
}

pub fn not_self(f: &Found, c: &Caller) -> Result<(), Refusal> {
    if disabled("not-self") {
        return Ok(());
    }
    if let (Some(mine), Some(p)) = (&c.pane, &f.pane) {
        // In its own pane park may only act on an agent that does not hold the terminal (one the
        // user suspended with Ctrl-Z, or a background job); one in the foreground is the caller.
        if *mine == p.id && f.holds_terminal {
            return refuse(
                "not-self",
                format!(
                    "{} is the pane park is running in, and its agent holds the terminal",
                    p.id
                ),
            );
        }
    }
    if f.tree.iter().any(|(pid, _)| c.ancestry.contains(pid))
        || c.ancestry.contains(&f.proc.root)
        || f.spared.iter().any(|(pid, _)| c.ancestry.contains(pid))
    {
        return refuse(
            "not-self",
            "park is running inside this agent's process tree",
        );
    }
    if let Some(id) = &f.ident.session_id {
        if c.session_ids.iter().any(|s| s.eq_ignore_ascii_case(id)) {
            return refuse("not-self", "this is the session park is running under");
        }
    }
    Ok(())
}

pub fn not_busy(f: &Found, o: Overrides) -> Result<(), Refusal> {
    if o.kill_anyway || disabled("not-busy") {
        return Ok(());
    }
    let why = f.status_why.clone().unwrap_or_default();
    match f.status {
        Status::Busy => refuse("not-busy", format!("busy: {why}")),
        Status::Waiting => refuse("not-busy", format!("waiting for you: {why}")),
        Status::Shell => refuse(
            "not-busy",
            format!("{why}; it would start a turn on resume"),
        ),
        Status::Unknown => refuse(
            "not-busy",
            format!("state unknown ({why}); unknown counts as busy"),
        ),
        _ => Ok(()),
    }
}

pub fn no_draft(f: &Found, o: Overrides) -> Result<(), Refusal> {
    if o.kill_anyway || disabled("no-draft") {
        return Ok(());
    }
    match &f.draft {
        Some(d) => refuse(
            "no-draft",
            format!("unsent text in the composer: {:?}", truncate(d, 60)),
        ),
        None => Ok(()),
    }
}

pub fn cpu(percent: Option<f64>, o: Overrides) -> Result<(), Refusal> {
    if o.force || o.kill_anyway || disabled("cpu") {
        return Ok(());
    }
    match percent {
        Some(p) if p > CPU_BUSY_PERCENT => refuse("cpu", format!("the process tree is using {p:.0}% CPU (a tool may be running; --force skips this check)")),
        _ => Ok(()),
    }
}

/// The pre-kill re-check: the process we are about to kill is still the one we judged.
pub fn same_process(before: &Found, now: Option<&Found>) -> Result<(), Refusal> {
    if disabled("same-process") {
        return Ok(());
    }
    let Some(now) = now else {
        return refuse(
            "same-process",
            "the agent is gone or changed since the scan",
        );
    };
    if now.main_start != before.main_start || now.proc.main != before.proc.main {
        return refuse("same-process", "the pid now belongs to another process");
    }
    if now.ident.session_id != before.ident.session_id {
        return refuse(
            "same-process",
            format!(
                "the session changed since the scan ({:?} → {:?}, e.g. /clear)",
                before.ident.session_id, now.ident.session_id
            ),
        );
    }
    Ok(())
}

/// Every guard, in order (the CPU sample is separate: it needs a time window).
pub fn check(f: &Found, c: &Caller, pane_error: Option<&str>, o: Overrides) -> Result<(), Refusal> {
    full_map(pane_error)?;
    bound(f)?;
    not_self(f, c)?;
    restorable(f)?;
    not_busy(f, o)?;
    no_draft(f, o)?;
    Ok(())
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        s.chars().take(n).collect::<String>() + "…"
    }
}
