//! `park park`, `park .`, `park unpark` and `park forget`: flags checked against each other into
//! an `ops::park_batch::Request` / `ops::unpark_batch::Request`, run, results printed.

use crate::cli::args::{ParkFlags, UnparkOpts};
use crate::cli::term::{print_results, report, TermUi};
use park::ctx::Ctx;
use park::exit::{ExitStatus, Stop};
use park::ops::{forget, park_batch, unpark_batch};
use std::io::{IsTerminal, Write};

/// `park park` flags → a request; every combination that cannot mean anything is a usage error.
fn park_request(targets: &[String], o: &ParkFlags) -> Result<park_batch::Request, Stop> {
    let bulk = o.idle.is_some() || o.all;
    if bulk && !targets.is_empty() {
        return Err(Stop::usage(
            "--idle/--all select the agents themselves; name no targets with them",
        ));
    }
    if bulk && o.kill_anyway {
        return Err(Stop::usage("--kill-anyway never combines with --idle/--all (it is for one agent you are looking at)"));
    }
    if bulk && o.wake.wake_on_limit_reset {
        return Err(Stop::usage("--wake-on-limit-reset takes named targets (the autopilot's `limit_reset = true` handles every agent at a limit)"));
    }
    if !bulk && targets.is_empty() {
        return Err(Stop::usage("name what to park (a pane: %3 in tmux, terminal_3 or terminal_3@session in zellij, or `.` for this one; session:window or session:tab; a session; a session or entry id; a title), or use --idle DUR / --all"));
    }
    // A wake-up is validated before anything is parked.
    let wake = crate::cli::wake::build(&o.wake, jiff::Timestamp::now()).map_err(Stop::usage)?;
    let (select, select_text) = match (&o.idle, o.all) {
        (Some(d), _) => (
            park_batch::Select::Idle(
                park::support::duration::parse(d)
                    .map_err(|e| Stop::usage(format!("--idle: {e}")))?,
            ),
            format!("--idle {d}"),
        ),
        (None, true) => (park_batch::Select::All, "--all".to_string()),
        (None, false) => (park_batch::Select::Named(targets.to_vec()), String::new()),
    };
    Ok(park_batch::Request {
        select,
        select_text,
        dry_run: o.dry_run,
        force: o.force,
        kill_anyway: o.kill_anyway,
        yes: o.yes,
        with_servers: o.with_servers,
        wake,
        limit_wake: o.wake.wake_on_limit_reset.then(|| o.wake.note.clone()),
    })
}

pub fn park_cmd(ctx: &Ctx, targets: &[String], o: &ParkFlags) -> ExitStatus {
    let ui = TermUi { json: o.json };
    let results = match park_request(targets, o).and_then(|r| park_batch::run(ctx, &r, &ui)) {
        Ok(r) => r,
        Err(stop) => return report(stop),
    };
    let code = print_results(&results, o.json);
    if o.close_popup && code != ExitStatus::Success && std::io::stdin().is_terminal() {
        eprint!("\npress Enter to close ");
        let _ = std::io::stderr().flush();
        let mut line = String::new();
        let _ = std::io::stdin().read_line(&mut line);
    }
    code
}

pub fn unpark_cmd(ctx: &Ctx, targets: &[String], o: UnparkOpts) -> ExitStatus {
    if o.all && !targets.is_empty() {
        return report(Stop::usage(
            "--all resumes every parked session; name no targets with it",
        ));
    }
    if !o.all && targets.is_empty() {
        return report(Stop::usage(
            "name what to unpark (a pane: %3 in tmux, terminal_3 or terminal_3@session in zellij, or `.` for this one; session:window or session:tab; a session; a session or entry id; a title), or use --all",
        ));
    }
    let req = unpark_batch::Request {
        select: if o.all {
            unpark_batch::Select::All
        } else {
            unpark_batch::Select::Named(targets.to_vec())
        },
        dry_run: o.dry_run,
        yes: o.yes,
        notes: o.note,
        wake_reason: o.wake_reason,
        with_servers: o.with_servers,
        new_pane: o.new_pane,
    };
    let rep = match unpark_batch::run(ctx, &req, &TermUi { json: o.json }) {
        Ok(r) => r,
        Err(stop) => return report(stop),
    };
    let Some(p) = rep.in_pane else {
        return print_results(&rep.results, o.json);
    };
    // The pane park runs in resumes last: the exec replaces this process, so everything else is
    // printed first (`--all` always prints its list, even an empty one).
    let before = if rep.results.is_empty() && !o.all {
        ExitStatus::Success
    } else {
        print_results(&rep.results, o.json)
    };
    // Returns only when the exec did not happen.
    let r = unpark_batch::resume_here(ctx, &p);
    print_results(&[r], o.json).max(before)
}

pub fn forget_cmd(ctx: &Ctx, targets: &[String]) -> ExitStatus {
    match forget::run(ctx, targets) {
        Ok(r) => print_results(&r, false),
        Err(stop) => report(stop),
    }
}
