//! `park forget`: drop parked entries without resuming them (the session stays resumable by hand).
//!
//! Contract: an entry is removed only under its session lock (a park or unpark working on it wins,
//! and the result says so); its pane decorations are cleared; the result carries the command that
//! resumes it by hand, so forgetting never loses the way back.

use crate::ctx::Ctx;
use crate::exit::Stop;
use crate::guards::target;
use crate::ops::{park, unpark};
use crate::store::lock::{self, TryLock};
use park_protocol::{ActionResult, Outcome};

pub fn run(ctx: &Ctx, targets: &[String]) -> Result<Vec<ActionResult>, Stop> {
    let here = crate::adapters::mux::here(ctx.platform.as_ref()).map(|h| h.pane);
    let mut results = vec![];
    // Every target is validated before anything is done to any of them.
    let parsed_all = crate::ops::park_batch::parse_targets(targets)?;
    let parsed: Vec<_> = parsed_all.iter().map(|(_, p)| p.clone()).collect();
    let (all, bad) = ctx.ledger.all();
    let entries = unpark::placed_for(ctx, &parsed, all);
    let found = live_for(ctx, &parsed);
    let unreadable = if bad.is_empty() {
        vec![]
    } else {
        let panes = ctx.mux.list_panes().unwrap_or_default();
        crate::rows::slots::unreadable(ctx, &panes, &bad)
    };
    for (t, parsed) in parsed_all {
        let t = &t;
        match target::resolve_parked(&parsed, &found, &entries, here.as_deref()) {
            Ok(es) => {
                for e in es {
                    let r = match lock::try_lock(
                        &ctx.ledger.home,
                        &park::session_lock_key(&e.session_id),
                    ) {
                        Ok(TryLock::Acquired(_l)) => match ctx.ledger.remove(&e.id) {
                            Ok(()) => {
                                unpark::teardown(ctx, e);
                                unpark::clear_prefill(ctx, e);
                                ActionResult {
                                    target: t.clone(),
                                    pane: Some(e.place.pane.clone()),
                                    session_id: Some(e.session_id.clone()),
                                    outcome: Outcome::Forgotten,
                                    reason: Some(format!(
                                        "resume by hand: {}",
                                        crate::agents::resume_command_line(e)
                                    )),
                                    freed_bytes: None,
                                }
                            }
                            Err(err) => {
                                ActionResult::new(t, Outcome::Failed, Some(err.to_string()))
                            }
                        },
                        _ => ActionResult::new(
                            t,
                            Outcome::Refused,
                            Some("a park/unpark is working on this session right now".into()),
                        ),
                    };
                    results.push(r);
                }
            }
            Err(target::Miss::Ambiguous(why)) => {
                results.push(ActionResult::new(t, Outcome::Refused, Some(why)))
            }
            Err(target::Miss::Nothing(why)) => {
                match unreadable
                    .iter()
                    .find(|u| u.named_by(&parsed, here.as_deref()))
                {
                    Some(u) => {
                        results.push(ActionResult::new(t, Outcome::Refused, Some(u.refusal())))
                    }
                    None => results.push(ActionResult::new(t, Outcome::NotParked, Some(why))),
                }
            }
        }
    }
    ctx.publish_status();
    Ok(results)
}

/// The live agents, only when a target is a title search (it may be ambiguous across them); a
/// scan that fails leaves the parked entries to answer alone (a dead multiplexer must not stop a
/// forget).
pub fn live_for(ctx: &Ctx, targets: &[target::Target]) -> Vec<crate::scan::Found> {
    if !targets.iter().any(target::needs_live) {
        return vec![];
    }
    ctx.scan(false).map(|s| s.found).unwrap_or_default()
}
