//! `park unpark` of many targets at once: named targets, `--all`, and tombstones resurrected from
//! the archive, between the validated [`Request`] and the results (printing is the caller's).
//!
//! Contract:
//! * Every target is parsed before anything is done; a target naming a running agent is
//!   `already-running`; one naming no parked entry is looked up in the archive and resurrected
//!   through the same gated unpark (a fresh entry claimed with `O_EXCL`, a **new** window in its
//!   cwd, never whatever pane now has its old id), or is `not-parked`.
//! * Each entry is unparked once per batch, in waves (`ops::wave`), results in target order.
//! * The pane park itself runs in resumes **last** and by exec, which replaces park: [`run`] hands
//!   it back as [`InPane`] and the caller prints everything else before [`resume_here`].
//! * Notes (a wake's, `--note`) are typed only when the agent is up; one that cannot be typed is
//!   kept in the session's archived notes, never lost. A hand-off already delivering the entry's
//!   notes is not given them twice.

use crate::ctx::Ctx;
use crate::exit::Stop;
use crate::guards::target::{self, Target};
use crate::model::entry::{Entry, EntryState};
use crate::ops::ui::{confirm_bulk, Ui};
use crate::ops::unpark;
use crate::ops::wave::{self, UnparkItem};
use crate::scan::live::LiveSet;
use crate::scan::Scan;
use park_protocol::{ActionResult, Outcome};

/// Which parked sessions a batch unpark takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Select {
    /// The targets as typed (`%3`, `work:2`, `@set`, an id, an entry id, a title word).
    Named(Vec<String>),
    /// `--all`: every parked entry.
    All,
}

/// A validated `park unpark`.
#[derive(Debug, Clone)]
pub struct Request {
    pub select: Select,
    pub dry_run: bool,
    /// `--all` without asking.
    pub yes: bool,
    /// `--note`: typed into the agent once it is up, after any notes its wake-up carries.
    pub notes: Vec<String>,
    /// Why it wakes, for the note's first line (`--wake-reason`; default "unparked by hand").
    pub wake_reason: Option<String>,
    /// Also restart the dev servers its window's park stopped.
    pub with_servers: bool,
    /// A slot another agent runs in now: resume in a new pane of its tab instead of refusing.
    pub new_pane: bool,
}

impl Request {
    /// A plain unpark of named targets.
    pub fn named(targets: &[&str]) -> Request {
        Request {
            select: Select::Named(targets.iter().map(|t| t.to_string()).collect()),
            dry_run: false,
            yes: false,
            notes: vec![],
            wake_reason: None,
            with_servers: false,
            new_pane: false,
        }
    }
}

/// The entry of the pane park runs in, resumed last by [`resume_here`].
#[derive(Debug, Clone)]
pub struct InPane {
    pub entry: Entry,
    pub target: String,
    /// The note to type, if any: with the exec nothing is left to type it, so it is archived.
    pub prompt: Option<String>,
}

/// What a batch unpark did, and what is left for the pane park runs in.
#[derive(Debug, Default)]
pub struct Report {
    pub results: Vec<ActionResult>,
    pub in_pane: Option<InPane>,
}

/// Runs a batch unpark; `Err` only when the request stops before anything is done.
pub fn run(ctx: &Ctx, req: &Request, ui: &dyn Ui) -> Result<Report, Stop> {
    match &req.select {
        Select::All => unpark_all(ctx, req, ui),
        Select::Named(t) => {
            let targets = crate::store::sets::expand(&ctx.ledger.home, t).map_err(Stop::usage)?;
            unpark_named(ctx, &targets, req, ui)
        }
    }
}

/// Resumes the pane park runs in: archives an undeliverable note, then execs the agent. Returns
/// only when the exec did not happen.
pub fn resume_here(ctx: &Ctx, p: &InPane) -> ActionResult {
    // Nothing is left to type the note after the exec, so it goes to the session's archived
    // notes instead of being lost.
    if let Some(prompt) = &p.prompt {
        crate::store::archive::append_note(
            &ctx.ledger.home,
            &p.entry,
            &format!("undelivered wake note (resumed in its own pane): {prompt}"),
        );
    }
    unpark::exec_in_pane(ctx, &p.entry.id, &p.target)
}

fn unpark_named(ctx: &Ctx, targets: &[String], req: &Request, ui: &dyn Ui) -> Result<Report, Stop> {
    // Every target is validated before anything is done to any of them.
    let parsed_all = crate::ops::park_batch::parse_targets(targets)?;
    let s = ctx.scan(false)?;
    let live = LiveSet::from_scan(&s);
    let (entries, bad) = ctx.ledger.all();
    for b in &bad {
        ui.warn(&format!("warning: {b}"));
    }
    // Pane targets name the pane each slot is in now, not a handle zellij may have renumbered.
    let recorded = entries.clone();
    let entries = unpark::as_placed(ctx, &s, &entries);
    let unreadable = crate::rows::slots::unreadable(ctx, &s.panes, &bad);
    let down = crate::rows::slots::sessions_down(ctx, &entries);
    let here_at = crate::adapters::mux::here(ctx.platform.as_ref());
    let here = here_at.as_ref().map(|h| h.pane.clone());
    // Slots in target order; resumes are filled in by the wave, the pane park runs in goes last.
    let mut results: Vec<Option<ActionResult>> = vec![];
    let mut batch: Vec<(usize, UnparkItem, Entry, Option<String>)> = vec![];
    let mut inside: Option<InPane> = None;
    let mut done: Vec<String> = vec![];
    for (t, parsed) in parsed_all {
        let t = &t;
        let hits = match target::resolve(&parsed, &s.found, &entries, here.as_deref()) {
            Ok(n) if !n.parked.is_empty() => n.parked,
            // Already running counts as the asked state.
            Ok(_) => {
                results.push(Some(ActionResult::new(t, Outcome::AlreadyRunning, None)));
                continue;
            }
            Err(target::Miss::Ambiguous(why)) => {
                results.push(Some(ActionResult::new(t, Outcome::Refused, Some(why))));
                continue;
            }
            // An entry that does not read is named as such; resurrecting its session from the
            // archive would meet its file ("already exists") or, worse, a second entry.
            Err(target::Miss::Nothing(_))
                if unreadable
                    .iter()
                    .any(|u| u.named_by(&parsed, here.as_deref())) =>
            {
                for u in unreadable
                    .iter()
                    .filter(|u| u.named_by(&parsed, here.as_deref()))
                {
                    results.push(Some(ActionResult::new(
                        t,
                        Outcome::Refused,
                        Some(u.refusal()),
                    )));
                }
                continue;
            }
            // The handle an entry was recorded under, which zellij renumbered: say where the
            // entry is now, rather than offer to resurrect a session that is parked (the real
            // run then met its file: "cannot claim a ledger entry … already exists").
            Err(target::Miss::Nothing(why)) => {
                if let Some(moved) = moved_from(&parsed, &recorded, &entries, here.as_deref()) {
                    results.push(Some(ActionResult::new(t, Outcome::Refused, Some(moved))));
                    continue;
                }
                // Lost with its multiplexer: its slot is the way back, not a new window.
                if let Some(lost) = crate::ops::journal::lost_named(ctx, &s, &parsed) {
                    results.push(Some(ActionResult::new(t, Outcome::Refused, Some(lost))));
                    continue;
                }
                results.extend(
                    resurrect(ctx, &s, &live, &entries, &parsed, t, req.dry_run, why)
                        .into_iter()
                        .map(Some),
                );
                continue;
            }
        };
        for e in hits {
            if done.contains(&e.id) {
                continue;
            }
            done.push(e.id.clone());
            // Its session is gone until zellij resurrects it: nothing to type into, and a new
            // tab elsewhere would leave the resurrected slot behind.
            if down.iter().any(|(_, ids)| ids.contains(&e.id)) {
                results.push(Some(ActionResult {
                    target: t.clone(),
                    pane: Some(e.place.pane.clone()),
                    session_id: Some(e.session_id.clone()),
                    outcome: Outcome::Refused,
                    reason: Some(crate::rows::slots::session_down_why(
                        &e.place.session,
                        &e.id,
                    )),
                    freed_bytes: None,
                }));
                continue;
            }
            let is_inside = here_at
                .as_ref()
                .is_some_and(|h| h.pane == e.place.pane && h.server == e.place.server)
                && !req.dry_run;
            // A hand-off: another park (the waker's, or a remote unpark) typed this command and
            // waits to deliver the entry's notes itself once the agent is up. Taking them here
            // too would record a delivered note as undelivered.
            let handed_off = is_inside
                && e.state == EntryState::Resuming
                && e.handoff_pane.as_deref() == Some(e.place.pane.as_str())
                && unpark::resumer_alive(ctx, e);
            let mut notes: Vec<String> = if handed_off {
                vec![]
            } else {
                e.wake.as_ref().map(|w| w.notes.clone()).unwrap_or_default()
            };
            notes.extend(req.notes.iter().cloned());
            // Typed only when there is something to say: a bare wake-up just resumes.
            let prompt = (!notes.is_empty()).then(|| {
                crate::model::wake::prompt(
                    &e.parked_at,
                    req.wake_reason
                        .as_deref()
                        .unwrap_or("it was unparked by hand"),
                    &notes,
                )
            });
            if is_inside {
                inside = Some(InPane {
                    entry: e.clone(),
                    target: t.clone(),
                    prompt,
                });
                continue;
            }
            batch.push((
                results.len(),
                UnparkItem {
                    entry: e.id.clone(),
                    target: t.clone(),
                    new_pane: req.new_pane,
                },
                e.clone(),
                prompt,
            ));
            results.push(None);
        }
    }
    let items: Vec<UnparkItem> = batch
        .iter()
        .map(|(_, it, _, _)| UnparkItem {
            entry: it.entry.clone(),
            target: it.target.clone(),
            new_pane: it.new_pane,
        })
        .collect();
    let out = wave::unpark_all(ctx, &s, &live, &items, req.dry_run);
    for ((slot, _, e, prompt), mut r) in batch.into_iter().zip(out) {
        if let (Some(p), Outcome::Unparked) = (&prompt, r.outcome) {
            let said = crate::ops::note::after_unpark(ctx, &e, p);
            r.reason = Some(match r.reason.take() {
                Some(x) if !x.is_empty() => format!("{x}; {said}"),
                _ => said,
            });
        }
        results[slot] = Some(r);
    }
    let mut results: Vec<ActionResult> = results.into_iter().flatten().collect();
    if req.with_servers {
        let mut hit: Vec<Entry> = entries
            .iter()
            .filter(|e| done.contains(&e.id))
            .cloned()
            .collect();
        hit.extend(inside.iter().map(|x| x.entry.clone()));
        results.extend(crate::ops::servers::restart(
            ctx,
            &group_ids(&hit),
            req.dry_run,
        ));
    }
    Ok(Report {
        results,
        in_pane: inside,
    })
}

/// Where the parked session recorded under pane handle `t` is now, worded, when its slot moved
/// (zellij renumbers panes when it resurrects a session) or cannot be shown.
fn moved_from(
    t: &Target,
    recorded: &[Entry],
    placed: &[Entry],
    here: Option<&str>,
) -> Option<String> {
    let Target::Pane(p) = t else { return None };
    let p = crate::adapters::mux::zellij::qualify(p, here).unwrap_or_else(|| p.clone());
    let was = recorded.iter().find(|e| e.place.pane == p)?;
    let now = placed.iter().find(|e| e.id == was.id)?;
    if now.place.pane == p {
        return None;
    }
    Some(if now.place.pane.is_empty() {
        format!(
            "the session parked in {p} ({}) has no pane that can be shown to be its slot now (a resurrected or closed session); `park unpark {}` resumes it in a new pane of its tab",
            was.agent.as_str(),
            was.id
        )
    } else {
        format!(
            "the session parked in {p} is in {} now (zellij renumbered its panes): `park unpark {}` (or `park unpark {}`)",
            now.place.pane, now.place.pane, was.id
        )
    })
}

/// The window groups of these entries, once each.
fn group_ids(entries: &[Entry]) -> Vec<String> {
    let mut out: Vec<String> = vec![];
    for g in entries.iter().filter_map(|e| e.group.clone()) {
        if !out.contains(&g) {
            out.push(g);
        }
    }
    out
}

/// A target naming no parked entry: a tombstone in the archive, resurrected through the same
/// gated unpark (a fresh ledger entry claimed with `O_EXCL`, then the normal hand-off into a
/// **new** window in its cwd, never into whatever pane now has its old id).
#[allow(clippy::too_many_arguments)]
fn resurrect(
    ctx: &Ctx,
    s: &Scan,
    live: &LiveSet,
    parked: &[Entry],
    parsed: &Target,
    t: &str,
    dry_run: bool,
    not_parked: String,
) -> Vec<ActionResult> {
    let (rows, _) = crate::rows::archived::rows(ctx);
    let hits = match crate::rows::archived::resolve(parsed, &rows, t) {
        Ok(h) => h,
        Err(why) if why.contains(" matches ") => {
            return vec![ActionResult::new(t, Outcome::Refused, Some(why))]
        }
        Err(_) => return vec![ActionResult::new(t, Outcome::NotParked, Some(not_parked))],
    };
    let mut out = vec![];
    for r in hits {
        let base = ActionResult {
            session_id: Some(r.session_id.clone()),
            ..ActionResult::new(t, Outcome::Failed, None)
        };
        if live.contains(&r.session_id) {
            out.push(ActionResult {
                outcome: Outcome::AlreadyRunning,
                ..base
            });
            continue;
        }
        // Parked under another handle now (a pane renumbered or re-pointed since the archive
        // saw it): resume that entry, never a second one from the archive ("already exists").
        if let Some(e) = parked.iter().find(|e| e.session_id == r.session_id) {
            out.push(ActionResult {
                outcome: Outcome::Refused,
                reason: Some(format!(
                    "this session is parked in {} now (entry {}): `park unpark {}`",
                    if e.place.pane.is_empty() {
                        "no pane that can be shown to be its slot"
                    } else {
                        e.place.pane.as_str()
                    },
                    e.id,
                    e.id
                )),
                ..base
            });
            continue;
        }
        let tomb = match crate::store::archive::read_meta(std::path::Path::new(&r.archive_dir)) {
            Ok(x) => x,
            Err(e) => {
                out.push(ActionResult {
                    outcome: Outcome::Refused,
                    reason: Some(e.to_string()),
                    ..base
                });
                continue;
            }
        };
        // Rebuilt from the prompt history: there is no conversation for an agent to resume.
        if tomb.prompts_only && !crate::support::fault::disabled("resurrect-prompts-only") {
            out.push(ActionResult {
                outcome: Outcome::Refused,
                reason: Some(format!(
                    "recovered (prompts only): there is no transcript to resume; its prompts are in {}/transcript.md",
                    r.archive_dir
                )),
                ..base
            });
            continue;
        }
        let mut e = tomb.to_entry();
        // Resurrect on a server park talks to now (the recorded one may be gone for good).
        if !ctx.mux.serves(&e.place.server) {
            if let Ok(now) = ctx.mux.server_id() {
                e.place.server = now;
                e.place.kind = crate::adapters::mux::MuxKind::Tmux.as_str().into();
            }
        }
        if dry_run {
            out.push(ActionResult {
                outcome: Outcome::WouldUnpark,
                reason: Some(format!(
                    "resurrect from the archive in a new window: {}",
                    crate::agents::resume_command_line(&e)
                )),
                ..base
            });
            continue;
        }
        match ctx.ledger.claim(&e) {
            Ok(()) => {}
            Err(err) => {
                out.push(ActionResult {
                    outcome: Outcome::Refused,
                    reason: Some(format!("cannot claim a ledger entry: {err}")),
                    ..base
                });
                continue;
            }
        }
        let mut res = unpark::unpark_remote(ctx, s, live, &e.id, t, false, false);
        // Refused before anything was started: the claimed entry was only a vehicle; drop it
        // so the tombstone does not suddenly read as parked.
        if res.outcome == Outcome::Refused {
            if let Ok(Some(cur)) = ctx.ledger.load(&e.id) {
                if cur.state == EntryState::Parked && cur.place.pane.is_empty() {
                    let _ = ctx.ledger.remove(&e.id);
                }
            }
        }
        if res.outcome == Outcome::Unparked {
            res.reason = Some(match res.reason {
                Some(r) => format!("resurrected from the archive; {r}"),
                None => "resurrected from the archive".into(),
            });
        }
        out.push(res);
    }
    out
}

/// `--all`: every parked entry, each through the normal gated unpark; the pane park runs in (if it
/// holds one) goes last, because resuming there replaces park with the agent.
fn unpark_all(ctx: &Ctx, req: &Request, ui: &dyn Ui) -> Result<Report, Stop> {
    let s = ctx.scan(false)?;
    let live = LiveSet::from_scan(&s);
    let (mut entries, bad) = ctx.ledger.all();
    for b in &bad {
        ui.warn(&format!("warning: {b}"));
    }
    let here_at = crate::adapters::mux::here(ctx.platform.as_ref());
    let is_here = |e: &Entry| {
        here_at
            .as_ref()
            .is_some_and(|h| h.pane == e.place.pane && h.server == e.place.server)
    };
    entries.sort_by_key(|e| is_here(e));
    ui.inform(&format!(
        "park unpark --all: {} parked session(s)",
        entries.len()
    ));
    for e in &entries {
        ui.inform(&format!(
            "  {:<8} {:<6} {}",
            e.place.pane,
            e.agent.as_str(),
            e.place.title.chars().take(40).collect::<String>()
        ));
    }
    if entries.is_empty() {
        return Ok(Report::default());
    }
    if !req.dry_run
        && !req.yes
        && !confirm_bulk(
            ui,
            &format!("--all resumes {} session(s)", entries.len()),
            &format!("Resume these {} session(s)?", entries.len()),
        )
    {
        return Err(Stop::declined());
    }
    let (here_entries, rest): (Vec<&Entry>, Vec<&Entry>) =
        entries.iter().partition(|e| is_here(e) && !req.dry_run);
    let items: Vec<UnparkItem> = rest
        .iter()
        .map(|e| UnparkItem {
            entry: e.id.clone(),
            target: e.id.clone(),
            new_pane: req.new_pane,
        })
        .collect();
    let mut results = wave::unpark_all(ctx, &s, &live, &items, req.dry_run);
    if req.with_servers {
        results.extend(crate::ops::servers::restart(
            ctx,
            &group_ids(&entries),
            req.dry_run,
        ));
    }
    Ok(Report {
        results,
        in_pane: here_entries.first().map(|e| InPane {
            entry: (*e).clone(),
            target: e.id.clone(),
            prompt: None,
        }),
    })
}
