//! `park rebuild`: recreate the lost windows of parked sessions and of sessions lost with their
//! multiplexer (`ops::rebuild`, `ops::journal`), then print what came back, as text or `--json`;
//! `park snapshot`: one journal pass, and what the journal holds.

use crate::cli::term::report;
use park::ctx::Ctx;
use park::exit::ExitStatus;
use park::ops::rebuild;
use park_protocol::reports::{LostSession, RebuildOutput};

pub fn snapshot_cmd(ctx: &Ctx, json: bool) -> ExitStatus {
    let out = match park::ops::journal::pass(ctx) {
        Ok(out) => out,
        Err(stop) => return report(stop),
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
        return ExitStatus::Success;
    }
    println!(
        "journal {}: {} live, {} lost",
        out.journal,
        out.live.len(),
        out.lost.len()
    );
    for l in &out.live {
        println!(
            "  live {} {} {}:{}.{} {} {}{}",
            l.agent.as_str(),
            l.session_id,
            l.session,
            l.window_index,
            l.pane_index,
            l.pane,
            l.cwd,
            if l.flags.is_empty() {
                String::new()
            } else {
                format!("  [{}]", l.flags.join(" "))
            }
        );
    }
    for l in &out.lost {
        print_lost(l);
    }
    for l in &out.kept {
        println!("  kept {} {}: {}", l.agent.as_str(), l.session_id, l.reason);
    }
    for l in &out.left {
        println!("  left {} {}: {}", l.agent.as_str(), l.session_id, l.reason);
    }
    if !out.lost.is_empty() {
        println!("`park rebuild` brings the lost sessions back (`--dry-run` shows how)");
    }
    for w in &out.warnings {
        eprintln!("park snapshot: {w}");
    }
    ExitStatus::Success
}

pub fn resurrect_cmd(ctx: &Ctx, op: crate::cli::args::ResurrectOp) -> ExitStatus {
    use crate::cli::args::ResurrectOp;
    let (r, json) = match op {
        ResurrectOp::Save { json } => (park::ops::resurrect::save(ctx), json),
        ResurrectOp::Restore { dry_run, json } => {
            (park::ops::resurrect::restore(ctx, dry_run), json)
        }
    };
    let out = match r {
        Ok(out) => out,
        Err(stop) => return report(stop),
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
    } else {
        if out.action == "save" {
            println!(
                "journaled {} live session(s){}",
                out.recorded,
                out.copy
                    .as_deref()
                    .map(|c| format!(
                        "; copy for {} in {c}",
                        out.save_file.as_deref().unwrap_or("?")
                    ))
                    .unwrap_or_default()
            );
        }
        for l in &out.sessions {
            print_lost(l);
        }
        for w in &out.warnings {
            eprintln!("park resurrect: {w}");
        }
    }
    let back = out.sessions.iter().all(|l| l.outcome.back());
    ExitStatus::from_ok(back)
}

fn print_lost(l: &LostSession) {
    println!(
        "  {} {} {} {}:{}.{} \"{}\" {} (last seen live {}){}",
        l.outcome,
        l.agent.as_str(),
        l.session_id,
        l.session,
        l.window_index,
        l.pane_index,
        l.window_name,
        l.cwd,
        l.last_seen,
        l.reason
            .as_deref()
            .map(|r| format!(": {r}"))
            .unwrap_or_default()
    );
}

/// `park rebuild --on-attach [--client C]`: `[journal] restore`'s act (see `ops::restore`).
pub fn on_attach_cmd(ctx: &Ctx, client: Option<&str>) -> ExitStatus {
    let exe = std::env::current_exe()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "park".into());
    match park::ops::restore::on_attach(ctx, &exe, client) {
        Ok(act) => {
            let (what, sessions, why) = match &act {
                park::ops::restore::Act::Nothing(why) => ("nothing", vec![], Some(*why)),
                park::ops::restore::Act::Ask(ids) => ("asked", ids.clone(), None),
                park::ops::restore::Act::Restore(ids) => ("restored", ids.clone(), None),
            };
            if let Some(why) = why {
                println!("nothing to do: {why}");
            } else {
                println!("{what}: {}", sessions.join(" "));
            }
            ExitStatus::Success
        }
        Err(stop) => report(stop),
    }
}

pub fn rebuild_cmd(ctx: &Ctx, o: rebuild::Opts) -> ExitStatus {
    match rebuild::run(ctx, &o) {
        Ok(out) => print(&out, o.json),
        Err(stop) => report(stop),
    }
}

fn print(out: &RebuildOutput, json: bool) -> ExitStatus {
    if json {
        println!("{}", serde_json::to_string_pretty(out).unwrap_or_default());
    } else {
        if !out.lost.is_empty() {
            println!("sessions lost with their multiplexer (the journal):");
            for l in &out.lost {
                print_lost(l);
            }
        }
        if out.windows.is_empty()
            && out.relocated.is_empty()
            && out.skipped.is_empty()
            && out.lost.is_empty()
        {
            if out.server.is_empty() {
                println!("nothing to rebuild: every parked zellij pane is where it was recorded");
            } else {
                println!(
                    "nothing to rebuild: every parked pane on {} is still there",
                    out.server
                );
            }
        }
        for r in &out.relocated {
            println!(
                "{} {} {}: {} → {} (tab \"{}\", {}){}",
                if out.dry_run {
                    "would re-point"
                } else {
                    "re-pointed"
                },
                r.agent,
                r.session_id.chars().take(8).collect::<String>(),
                r.from,
                r.pane,
                r.tab,
                r.outcome,
                r.reason
                    .as_deref()
                    .map(|x| format!("  ({x})"))
                    .unwrap_or_default()
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
    // A lost session that could not be adopted is not back either.
    let lost_back = out.lost.iter().all(|l| l.outcome.back());
    ExitStatus::from_ok(rebuild::all_back(out) && lost_back)
}
