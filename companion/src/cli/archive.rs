//! `park archive --all`, `park archive --prune` and `park recover`: run the `ops::protect` /
//! `ops::recover` passes, confirm a prune on the terminal, print the result (text or `--json`).

use super::term::TermUi;
use crate::cli::term::report;
use park::exit::{ExitStatus, Stop};
use park::ops::protect::*;
use park::ops::recover::*;
use park_protocol::reports::{PruneItem, PruneOutput};

/// `park archive --all [--agent A] [--any-age] [--dry-run] [--json]`. Exit 1 when anything was
/// skipped for a reason that needs a look, or stayed partial.
pub fn archive_all_cmd(
    ctx: &park::ctx::Ctx,
    which: Which,
    any_age: bool,
    dry_run: bool,
    json: bool,
) -> ExitStatus {
    let (entries, _) = ctx.ledger.all();
    let o = archive_all(
        &ctx.ledger.home,
        &process_env,
        &entries,
        which,
        any_age,
        dry_run,
    );
    if json {
        println!("{}", serde_json::to_string(&o).expect("output serialises"));
    } else {
        print!("{}", render_protect(&o));
    }
    if o.skipped + o.partial > 0 {
        ExitStatus::Refused
    } else {
        ExitStatus::Success
    }
}

/// `park archive --prune --older-than DUR [--dry-run] [--yes] [--json]`.
pub fn prune_cmd(
    ctx: &park::ctx::Ctx,
    older_than: &str,
    dry_run: bool,
    yes: bool,
    json: bool,
) -> ExitStatus {
    let age = match park::support::duration::parse(older_than) {
        Ok(d) => d,
        Err(e) => {
            return report(Stop::usage(e).of("archive --prune"));
        }
    };
    let Some(live) = live_now(ctx) else {
        eprintln!("park archive --prune: cannot read the process table; nothing removed");
        return ExitStatus::Refused;
    };
    let home = &ctx.ledger.home;
    let (entries, _) = ctx.ledger.all();
    let (go, kept) = prune_plan(home, &entries, &live, age);
    let freed: u64 = go.iter().map(|i| i.bytes).sum();
    if !json {
        eprintln!(
            "park archive --prune --older-than {older_than}: {} archived session(s), {} to free",
            go.len(),
            park_protocol::human_bytes(freed)
        );
        for i in &go {
            eprintln!(
                "  {} {}",
                if dry_run { "would remove" } else { "remove" },
                i.session_id
            );
        }
    }
    let mut out = PruneOutput {
        schema: park_protocol::SCHEMA_VERSION,
        dry_run,
        older_than: older_than.to_string(),
        removed: vec![],
        kept,
        freed_bytes: 0,
        archive_bytes: 0,
    };
    let mut code = ExitStatus::Success;
    let confirmed = dry_run
        || go.is_empty()
        || yes
        || park::ops::ui::confirm_bulk(
            &TermUi { json },
            &format!("--prune removes {} archived session(s)", go.len()),
            &format!("Remove these {} archived session(s) for good?", go.len()),
        );
    if dry_run {
        out.freed_bytes = freed;
        out.removed = go;
    } else if !confirmed {
        // Nothing removed: the plan is reported as kept, with why.
        out.kept.extend(go.into_iter().map(|mut i| {
            i.reason = Some("not confirmed".into());
            i
        }));
        code = ExitStatus::Refused;
    } else {
        for i in go {
            match prune_one(home, &ctx.ledger, &live, &i.session_id, age) {
                Ok(()) => {
                    out.freed_bytes += i.bytes;
                    out.removed.push(i);
                }
                Err(why) => out.kept.push(PruneItem {
                    reason: Some(why),
                    ..i
                }),
            }
        }
    }
    out.archive_bytes = archive_bytes(home);
    if json {
        println!(
            "{}",
            serde_json::to_string(&out).expect("output serialises")
        );
    } else if !dry_run && code == ExitStatus::Success {
        println!(
            "removed {} archived session(s), freed {}; archive {}",
            out.removed.len(),
            park_protocol::human_bytes(out.freed_bytes),
            park_protocol::human_bytes(out.archive_bytes)
        );
    }
    code
}

/// `park recover [--dry-run] [--json]`.
pub fn recover_cmd(ctx: &park::ctx::Ctx, dry_run: bool, json: bool) -> ExitStatus {
    let Some(live) = park::ops::protect::live_now(ctx) else {
        eprintln!("park recover: cannot read the process table; nothing recovered");
        return ExitStatus::Refused;
    };
    let (entries, _) = ctx.ledger.all();
    let o = run(
        &ctx.ledger.home,
        &park::ops::protect::process_env,
        &entries,
        &live,
        dry_run,
    );
    if json {
        println!("{}", serde_json::to_string(&o).expect("output serialises"));
    } else {
        print!("{}", render(&o));
    }
    // A write that failed is the only thing needing attention; skips are the rules working.
    let failed = o.items.iter().any(|i| {
        i.outcome == park_protocol::reports::RecoverOutcome::Skipped
            && i.reason.as_deref().is_some_and(|r| {
                !r.contains("still exists") && !r.contains("already") && !r.contains("runs it")
            })
    });
    if failed {
        ExitStatus::Refused
    } else {
        ExitStatus::Success
    }
}
