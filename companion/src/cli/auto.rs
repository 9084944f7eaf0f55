//! The autopilot's surface: `park daemon [--once [--json] | --ensure]` (alias `park waker`),
//! `park auto status [--json]`, `park config`, `park pin|unpin <target>…`.
//!
//! Contract: a config that does not load is a usage error (exit 2) for every verb that needs it,
//! naming the file, line and key, and nothing automatic runs. `daemon --once` runs exactly one
//! pass in the foreground (it acts in `park` mode) and prints it; `auto status` evaluates now and
//! never acts. Pins name sessions: a target resolves to the session ids of the live agents or
//! parked entries it names.

use crate::cli::term::report;
use park::ctx::Ctx;
use park::exit::{ExitStatus, Stop};
use park::store::config::{self, Config};
use park_protocol::auto::{AutoReport, Decision};
use park_protocol::human_bytes;

fn load(ctx: &Ctx) -> Result<Config, Stop> {
    config::load(&ctx.ledger.home).map_err(|e| Stop::usage(format!("config: {e}")))
}

/// `park daemon`.
pub fn daemon_cmd(ctx: &Ctx, once: bool, json: bool, ensure: bool) -> ExitStatus {
    if once {
        let c = match load(ctx) {
            Ok(c) => c,
            Err(s) => return report(s),
        };
        return match park::ops::auto::pass(ctx, &c, "once") {
            Ok(r) => {
                print_report(&r, json);
                ExitStatus::Success
            }
            Err(s) => report(s),
        };
    }
    if ensure {
        // A broken config is said here, where a person (or the plugin's log) sees it.
        if let Err(e) = config::load(&ctx.ledger.home) {
            eprintln!("park daemon: config: {e}; nothing automatic runs");
        }
        return match park::ops::waker::ensure(ctx, true) {
            Ok(Some(pid)) => {
                println!("daemon running (pid {pid})");
                ExitStatus::Success
            }
            Ok(None) => {
                println!(
                    "nothing to do: no wake-up pending, the autopilot is off and the journal is off"
                );
                ExitStatus::Success
            }
            Err(e) => {
                eprintln!("park daemon: {e}");
                ExitStatus::Refused
            }
        };
    }
    park::ops::waker::run(ctx)
}

/// `park auto status`.
pub fn status_cmd(ctx: &Ctx, json: bool) -> ExitStatus {
    let c = match load(ctx) {
        Ok(c) => c,
        Err(s) => return report(s),
    };
    match park::ops::auto::pass(ctx, &c, "status") {
        Ok(r) => {
            print_report(&r, json);
            ExitStatus::Success
        }
        Err(s) => report(s),
    }
}

fn opt_bytes(b: Option<u64>) -> String {
    b.map(human_bytes).unwrap_or_else(|| "-".into())
}

fn print_report(r: &AutoReport, json: bool) {
    if json {
        println!("{}", serde_json::to_string(r).expect("report serialises"));
        return;
    }
    let b = &r.budget;
    println!(
        "autopilot: mode {} · idle ≥ {} · per pass {} · config {}",
        r.mode,
        park::support::duration::brief(Some(r.idle_seconds)),
        r.per_pass,
        r.config.as_deref().unwrap_or("(none: defaults)")
    );
    println!(
        "budget: live {}{} · agents' memory {}{} · available {}{}{}",
        b.live,
        b.max_live.map(|m| format!("/{m}")).unwrap_or_default(),
        human_bytes(b.anon_bytes),
        b.ram_budget
            .map(|x| format!("/{}", human_bytes(x)))
            .unwrap_or_default(),
        opt_bytes(b.mem_available),
        b.min_available
            .map(|x| format!(" (floor {})", human_bytes(x)))
            .unwrap_or_default(),
        b.psi
            .as_ref()
            .map(|p| format!(" · psi {p}"))
            .unwrap_or_default()
    );
    if let Some(o) = &b.over {
        println!("over budget: {o}");
    }
    match r.daemon_pid {
        Some(p) => println!("daemon: running (pid {p})"),
        None => println!(
            "daemon: not running (`park daemon --ensure` starts it when the mode is not off)"
        ),
    }
    for a in &r.agents {
        let d = match a.decision {
            Decision::Parked => "parked",
            Decision::Suggested => "suggest",
            Decision::Kept => "kept",
        };
        println!(
            "  {:<14} {:<6} {:<7} {:>4} {:>7}  {}{}",
            a.pane,
            a.agent.as_str(),
            d,
            park::support::duration::brief(a.quiet_seconds),
            human_bytes(a.anon_bytes),
            a.rank.map(|n| format!("#{n} ")).unwrap_or_default(),
            a.reason
        );
    }
    if r.agents.is_empty() {
        println!("  (no live agents in panes)");
    }
}

/// `park config`: every effective setting and where it came from.
pub fn config_cmd(ctx: &Ctx, json: bool) -> ExitStatus {
    let located = config::locate_from(|k| std::env::var(k).ok());
    let c = match load(ctx) {
        Ok(c) => c,
        Err(s) => return report(s),
    };
    let a = &c.auto;
    let rows: Vec<(&str, String)> = vec![
        ("archive.auto", c.archive_auto.to_string()),
        ("auto.mode", a.mode.as_str().into()),
        (
            "auto.idle",
            park::support::duration::brief(Some(a.idle.as_secs())),
        ),
        (
            "auto.max_live",
            a.max_live.map(|m| m.to_string()).unwrap_or("-".into()),
        ),
        ("auto.ram_budget", opt_bytes(a.ram_budget)),
        (
            "auto.min_available",
            a.min_available.map(|f| f.text()).unwrap_or("-".into()),
        ),
        ("auto.per_pass", a.per_pass.to_string()),
        ("auto.interval", format!("{}s", a.interval.as_secs())),
        ("auto.exclude", format!("{:?}", a.exclude)),
        ("auto.limit_reset", a.limit_reset.to_string()),
        ("journal.enabled", c.journal.enabled.to_string()),
        ("journal.restore", c.journal.restore.as_str().into()),
    ];
    if json {
        let map: serde_json::Map<String, serde_json::Value> = rows
            .iter()
            .map(|(k, v)| {
                (
                    k.to_string(),
                    serde_json::json!({"value": v, "from": c.origin(k)}),
                )
            })
            .collect();
        println!(
            "{}",
            serde_json::json!({
                "schema": 1,
                "file": c.file.as_ref().map(|f| f.display().to_string()),
                "looked_at": located.map(|(p, how)| format!("{} ({how})", p.display())),
                "settings": map,
            })
        );
        return ExitStatus::Success;
    }
    match (&c.file, &located) {
        (Some(f), _) => println!("config: {}", f.display()),
        (None, Some((p, how))) => println!(
            "config: {} (no such file: defaults; named by {how})",
            p.display()
        ),
        (None, None) => println!("config: none (no HOME): defaults"),
    }
    for (k, v) in rows {
        println!("  {k:<20} {v:<12} {}", c.origin(k));
    }
    ExitStatus::Success
}

/// `park pin|unpin <target>…`.
pub fn pin_cmd(ctx: &Ctx, targets: &[String], on: bool) -> ExitStatus {
    match pin(ctx, targets, on) {
        Ok(lines) => {
            for l in lines {
                println!("{l}");
            }
            ctx.publish_status();
            ExitStatus::Success
        }
        Err(s) => report(s),
    }
}

fn pin(ctx: &Ctx, targets: &[String], on: bool) -> Result<Vec<String>, Stop> {
    use park::guards::target;
    let expanded = park::store::sets::expand(&ctx.ledger.home, targets).map_err(Stop::usage)?;
    let parsed = park::ops::park_batch::parse_targets(&expanded)?;
    let s = ctx.scan(false)?;
    let here = s.caller.pane.clone();
    let entries = park::ops::unpark::as_placed(ctx, &s, &ctx.ledger.all().0);
    let mut sessions = vec![];
    let mut lines = vec![];
    for (raw, t) in parsed {
        let mut named = vec![];
        let hit = target::resolve(&t, &s.found, &entries, here.as_deref())
            .map_err(|why| Stop::refused(format!("{raw}: {why}")))?;
        for i in hit.live {
            let f = &s.found[i];
            match &f.ident.session_id {
                Some(id) => named.push((
                    f.proc.agent,
                    id.clone(),
                    f.pane.as_ref().map(|p| p.id.clone()).unwrap_or_default(),
                )),
                None => lines.push(format!(
                    "{raw}: {} has no exact session id to pin ({})",
                    f.pane.as_ref().map(|p| p.id.as_str()).unwrap_or("?"),
                    f.ident.reason.clone().unwrap_or_default()
                )),
            }
        }
        named.extend(
            hit.parked
                .into_iter()
                .map(|e| (e.agent, e.session_id.clone(), e.id.clone())),
        );
        for (agent, id, where_) in named {
            lines.push(format!(
                "{} {where_} ({} {id})",
                if on { "pinned" } else { "unpinned" },
                agent.as_str()
            ));
            sessions.push((agent, id));
        }
    }
    park::store::pins::set(&ctx.ledger.home, &sessions, on).map_err(Stop::refused)?;
    Ok(lines)
}
