//! The one accessor every view reads: live rows (each annotated with the refusal park would give)
//! and parked entries, grouped by session and window, with the servers of those windows.
//!
//! Contract: one scan in, rows out; nothing is changed. A row's `reason` is exactly what
//! `park park` would refuse with (the same guard chain), so a view never promises what park
//! would refuse.

use crate::ctx::Ctx;
use crate::guards::Overrides;
use crate::model::entry::{Entry, EntryState};
use crate::scan::{self, Scan};
use park_protocol::{LsOutput, Row, RowState, Status, SCHEMA_VERSION};

pub fn live_row(s: &Scan, f: &scan::Found) -> Row {
    let p = f.pane.as_ref();
    let untargetable = f.ident.session_id.is_none() || f.pane.is_none();
    let background = f.proc.background;
    let reason = if background {
        Some(
            crate::agents::of(f.proc.agent)
                .spec()
                .background_note(f.ident.job.as_deref()),
        )
    } else if untargetable {
        let unbound = f
            .pane
            .is_none()
            .then(|| "not bound to a pane of this server".to_string());
        let parts: Vec<String> = unbound.into_iter().chain(f.ident.reason.clone()).collect();
        Some(parts.join("; "))
    } else {
        crate::guards::check(f, &s.caller, s.pane_error.as_deref(), Overrides::default())
            .err()
            .map(|r| r.why)
    };
    // A state park could not read, from a version park was never tested with: say so.
    let untested = f
        .version
        .as_deref()
        .filter(|_| untargetable || f.status == Status::Unknown)
        .and_then(|v| crate::agents::of(f.proc.agent).spec().release.untested(v));
    let reason = match (reason, untested) {
        (Some(r), Some(u)) => Some(format!("{r}; {u}")),
        (r, u) => r.or(u),
    };
    Row {
        pane: p.map(|p| p.id.clone()).unwrap_or_default(),
        mux: p
            .map(|p| crate::adapters::mux::MuxKind::of_pane(&p.id).as_str())
            .unwrap_or("none")
            .into(),
        session: if background {
            BACKGROUND_GROUP.into()
        } else {
            p.map(|p| p.session.clone()).unwrap_or_default()
        },
        window_index: p.map(|p| p.window_index),
        window: p.map(|p| p.window_name.clone()).unwrap_or_default(),
        agent: f.proc.agent,
        session_id: f.ident.session_id.clone(),
        session_source: Some(f.ident.source.to_string()),
        cwd: f.cwd.clone(),
        title: f.title.clone(),
        state: if background {
            RowState::Background
        } else if untargetable {
            RowState::Untargetable
        } else {
            RowState::Live
        },
        status: f.status,
        reason,
        idle_seconds: f.idle_secs,
        bytes: f.mem.rss,
        uss_bytes: f.mem.uss,
        anon_bytes: f.mem.anon,
        pss_bytes: f.mem.pss,
        freed_bytes: None,
        pid: Some(f.proc.root),
        entry: None,
        parked_at: None,
        wake: None,
        job: f.ident.job.clone(),
        pinned: false,
        suggested: false,
        agent_version: f.version.clone(),
    }
}

/// The `ls` group of Claude's background sessions.
pub const BACKGROUND_GROUP: &str = "(background)";
/// The group `park ls` lists the sessions lost with their multiplexer under.
pub const LOST_GROUP: &str = "(lost: `park rebuild` brings them back)";

/// A parked session whose transcript the agent's own cleanup will soon delete (Claude
/// `cleanupPeriodDays`): say so in `ls`, with the fix.
fn cleanup_warning(e: &Entry) -> Option<String> {
    let t = crate::agents::expected_transcript(e);
    let left = crate::agents::cleanup_left(e, t.as_deref())?;
    (left <= crate::agents::CLEANUP_WARN_DAYS as i64).then(|| {
        format!(
            "{} may delete this transcript in {} day(s); the archive keeps a copy and unpark puts it back (or raise cleanupPeriodDays)",
            e.agent.as_str(),
            left.max(0)
        )
    })
}

fn entry_row(e: &Entry) -> Row {
    let idle = e
        .last_active
        .as_deref()
        .and_then(|t| t.parse::<jiff::Timestamp>().ok())
        .map(|t| (jiff::Timestamp::now().as_second() - t.as_second()).max(0) as u64);
    Row {
        pane: e.place.pane.clone(),
        mux: e.place.kind.clone(),
        session: e.place.session.clone(),
        window_index: Some(e.place.window_index),
        window: e.place.window_name.clone(),
        agent: e.agent,
        session_id: Some(e.session_id.clone()),
        session_source: Some(e.session_source.clone()),
        cwd: e.cwd.clone(),
        title: e.place.title.clone(),
        state: RowState::Parked,
        status: Status::Parked,
        reason: e.last_error.clone().or_else(|| match e.state {
            EntryState::Parking => {
                Some("park did not finish (interrupted?); unpark resumes or cleans it".into())
            }
            EntryState::Resuming => Some("resume in progress".into()),
            EntryState::Parked if e.place.pane.is_empty() && e.place.kind == "zellij" => {
                Some(format!(
                    "no zellij pane can be shown to be its slot (a resurrected or closed \
                     session); `park unpark {}` resumes it in a new pane of its tab",
                    e.id
                ))
            }
            EntryState::Parked => cleanup_warning(e),
        }),
        idle_seconds: idle,
        bytes: 0,
        uss_bytes: 0,
        anon_bytes: 0,
        pss_bytes: 0,
        freed_bytes: e.freed_bytes,
        pid: None,
        entry: Some(e.id.clone()),
        parked_at: Some(e.parked_at.clone()),
        wake: e.wake.as_ref().map(|w| w.describe(jiff::Timestamp::now())),
        job: None,
        pinned: false,
        suggested: false,
        agent_version: e.agent_version.clone(),
    }
}

/// The row of a session lost with its multiplexer: where it was, and the way back.
fn lost_row(r: &crate::store::journal::Record) -> Row {
    let mut row = entry_row(&r.entry);
    row.state = RowState::Lost;
    row.pane = String::new();
    row.title = format!(
        "was {}:{}.{} \"{}\"",
        r.entry.place.session,
        r.entry.place.window_index,
        r.entry.place.pane_index,
        r.entry.place.window_name
    );
    row.freed_bytes = None;
    row.parked_at = None;
    row.entry = None;
    row.reason = Some(format!(
        "lost when its multiplexer died (last seen live {}): `park rebuild` brings it back in its slot",
        r.last_seen
    ));
    row
}

/// The row of a ledger file that does not read (agent and session from its name).
fn unreadable_row(u: &crate::rows::slots::Unreadable) -> Option<Row> {
    let p = u.pane.as_ref();
    Some(Row {
        pane: p.map(|p| p.id.clone()).unwrap_or_default(),
        mux: p
            .map(|p| crate::adapters::mux::MuxKind::of_pane(&p.id).as_str())
            .unwrap_or("none")
            .into(),
        session: p.map(|p| p.session.clone()).unwrap_or_default(),
        window_index: p.map(|p| p.window_index),
        window: p.map(|p| p.window_name.clone()).unwrap_or_default(),
        agent: u.agent?,
        session_id: u.session_id.clone(),
        session_source: None,
        cwd: p.map(|p| p.cwd.clone()).unwrap_or_default(),
        title: p.map(|p| p.title.clone()).unwrap_or_default(),
        state: RowState::Parked,
        status: Status::Parked,
        reason: Some(format!(
            "its ledger entry is unreadable ({}: {}); `park doctor` explains; nothing can resume or forget it until the file is fixed or removed",
            u.file.display(),
            u.error
        )),
        idle_seconds: None,
        bytes: 0,
        uss_bytes: 0,
        anon_bytes: 0,
        pss_bytes: 0,
        freed_bytes: None,
        pid: None,
        entry: Some(u.id.clone()),
        parked_at: None,
        wake: None,
        job: None,
        pinned: false,
        suggested: false,
        agent_version: None,
    })
}

/// Pins and the autopilot's suggestions on rows: two small file reads, no extra scan. The one
/// source of both fields for `ls`, `show` and the pickers. Returns the pins file's problem, if
/// it is unreadable.
pub fn decorate(
    ctx: &Ctx,
    auto: Option<&crate::model::auto::Auto>,
    rows: &mut [Row],
) -> Option<String> {
    let pins = crate::store::pins::Pins::read(&ctx.ledger.home);
    let suggested = crate::store::autolog::suggested_ids(&ctx.ledger.home, auto);
    for r in rows.iter_mut() {
        if let Some(id) = r.session_id.as_deref() {
            r.pinned = pins.contains(id);
            r.suggested = r.state == RowState::Live && suggested.iter().any(|s| s == id);
        }
    }
    pins.broken
}

/// The one accessor every view reads: live rows and parked entries, grouped by session and window.
pub fn rows(ctx: &Ctx, s: &Scan) -> LsOutput {
    let mut warnings = s.warnings.clone();
    let mut rows: Vec<Row> = s.found.iter().map(|f| live_row(s, f)).collect();
    let (entries, bad) = {
        let _t = crate::support::profile::span("ls.ledger");
        ctx.ledger.all()
    };
    for b in &bad {
        warnings.push(b.to_string());
    }
    // An unreadable entry's pane is shown as parked, with why nothing can act on it: without the
    // row it looked like a plain pane.
    if s.pane_error.is_none() {
        rows.extend(
            crate::rows::slots::unreadable(ctx, &s.panes, &bad)
                .iter()
                .filter_map(unreadable_row),
        );
    }
    // A parked row shows the pane its slot is in now (zellij renumbers panes when it resurrects
    // a session), or none when no pane can be shown to be its slot.
    if let Some(e) = &s.pane_error {
        if !crate::scan::pane_map_is_news(
            s.tmux_absent,
            entries.iter().map(|e| e.place.server.as_str()),
        ) {
            let w = crate::scan::pane_map_warning(e);
            warnings.retain(|x| *x != w);
        }
    }
    let entries = crate::rows::slots::as_placed(ctx, s, &entries);
    let down = crate::rows::slots::sessions_down(ctx, &entries);
    // Said first: with the session gone, the pane map's own complaint (often about a tmux
    // server nobody asked for) is not the news.
    for (session, ids) in down.iter().rev() {
        warnings.insert(
            0,
            format!(
                "zellij session {session:?} is not running ({} parked pane(s)): `zellij attach {session}` brings it back",
                ids.len()
            ),
        );
    }
    rows.extend(entries.iter().map(|e| {
        let mut r = entry_row(e);
        if down.iter().any(|(_, ids)| ids.contains(&e.id)) {
            r.reason = Some(crate::rows::slots::session_down_why(
                &e.place.session,
                &e.id,
            ));
        }
        r
    }));
    // Sessions live when their multiplexer died (the journal), as of this scan.
    match crate::store::journal::load(&ctx.ledger.home) {
        Ok(j) if !j.sessions.is_empty() => {
            let running: std::collections::HashSet<String> = s
                .found
                .iter()
                .filter_map(|f| {
                    let sid = f.ident.session_id.as_ref()?;
                    Some(crate::model::entry::entry_id(f.proc.agent, sid))
                })
                .collect();
            let ledger: std::collections::HashSet<String> =
                entries.iter().map(|e| e.id.clone()).collect();
            rows.extend(
                crate::store::journal::lost_now(&j, &s.table, &running, &ledger)
                    .into_iter()
                    .map(lost_row),
            );
        }
        Ok(_) => {}
        Err(e) => warnings.push(e.to_string()),
    }
    let auto = crate::store::config::load(&ctx.ledger.home)
        .ok()
        .map(|c| c.auto);
    if let Some(e) = decorate(ctx, auto.as_ref(), &mut rows) {
        warnings.push(e);
    }
    // Pane groups first, then Claude's background sessions, then agents in no pane, then the
    // sessions lost with their multiplexer.
    let rank = |r: &Row| match (r.state, r.session.is_empty()) {
        (RowState::Lost, _) => 3,
        (RowState::Background, _) => 1,
        (_, true) => 2,
        _ => 0,
    };
    rows.sort_by(|a, b| {
        (rank(a), &a.session, a.window_index, &a.pane).cmp(&(
            rank(b),
            &b.session,
            b.window_index,
            &b.pane,
        ))
    });
    let mut windows: Vec<(String, u32)> = vec![];
    for r in &rows {
        if let Some(w) = r.window_index {
            if !windows.iter().any(|x| x.0 == r.session && x.1 == w) {
                windows.push((r.session.clone(), w));
            }
        }
    }
    let servers = {
        let _t = crate::support::profile::span("ls.servers");
        crate::rows::servers::rows(ctx, s, &windows)
    };
    LsOutput {
        schema: SCHEMA_VERSION,
        rows,
        servers,
        warnings,
        auto_mode: auto.map(|a| a.mode.as_str().to_string()),
        session: crate::adapters::mux::set::own_session(),
    }
}
