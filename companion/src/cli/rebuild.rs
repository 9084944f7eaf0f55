//! `park rebuild`: recreate the lost windows of parked sessions (`ops::rebuild`), then print what
//! came back, as text or `--json`.

use crate::cli::term::report;
use park::ctx::Ctx;
use park::exit::ExitStatus;
use park::ops::rebuild;
use park_protocol::reports::RebuildOutput;

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
        if out.windows.is_empty() && out.relocated.is_empty() && out.skipped.is_empty() {
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
    ExitStatus::from_ok(rebuild::all_back(out))
}
