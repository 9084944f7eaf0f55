//! One autopilot pass (issue 21): gather the facts of one scan, ask the pure policy
//! (`guards::auto::decide`), and park what it picked through the same guarded transaction and
//! waves as a person's `park park` (`ops::wave::park_all`, in-process, no subprocess per agent).
//!
//! Contract:
//! * `evaluate` only reads (one scan with screens, the pane visibility, pins, the machine's
//!   memory); `pass` acts only in `park` mode and only on the policy's picks, each of which the
//!   transaction judges again (guard chain, CPU sample, same-process re-check before the kill).
//! * The CPU corroboration is never waived (`force` stays off): an agent mid-tool is kept.
//! * Every automatic park is one JSON line in `$PARK_HOME/auto.log` (time, session, pane, reason,
//!   freed bytes); the pass's report goes to `$PARK_HOME/auto-status.json` (what `ls`, the status
//!   line and the pickers read for suggestions) and, when something was parked, one message to the
//!   attached tmux clients (`@park-auto-notify off` silences it) and the zellij strip.
//! * A config that does not load is an error before anything is read or done.

use crate::ctx::Ctx;
use crate::exit::Stop;
use crate::guards::auto::{self as policy, Budget, Facts, Go};
use crate::guards::Overrides;
use crate::model::auto::{Auto, Mode};
use crate::ops::park::ParkOpts;
use crate::ops::wave::{self, ParkItem};
use crate::scan::Scan;
use crate::store::config::Config;
use park_protocol::auto::{AutoAgent, AutoBudget, AutoReport, Decision};
use park_protocol::Outcome;

/// The facts of one scan and the policy's verdicts on them.
pub struct Evaluation {
    pub scan: Scan,
    pub facts: Vec<Facts>,
    pub budget: Budget,
    pub verdicts: Vec<policy::Verdict>,
    pub psi: Option<String>,
}

/// Which agents an `exclude` list names: (index into `found`, the entry that named it); an entry
/// that cannot be read (an unknown set) excludes every agent, saying why. A title several agents
/// share excludes each of them: what an exclusion list means is "leave these alone", and a title
/// that is ambiguous for a verb that acts on one is not a reason to park any of them.
fn excluded(
    home: &std::path::Path,
    found: &[crate::scan::Found],
    exclude: &[String],
) -> Vec<(usize, String)> {
    let mut out = vec![];
    for raw in exclude {
        let targets = match crate::store::sets::expand(home, std::slice::from_ref(raw)) {
            Ok(t) => t,
            Err(e) => {
                let why = format!("{raw}: {e}");
                return (0..found.len()).map(|i| (i, why.clone())).collect();
            }
        };
        for t in targets {
            let Ok(parsed) = crate::guards::target::parse(&t) else {
                continue;
            };
            if let Ok(n) = crate::guards::target::every_match(&parsed, found, &[], None) {
                out.extend(n.live.into_iter().map(|i| (i, raw.clone())));
            }
        }
    }
    out
}

/// The usage-limit reset a pane's screen shows (Unix seconds, the line), if any.
fn limit_of(ctx: &Ctx, f: &crate::scan::Found) -> Option<(i64, String)> {
    let p = f.pane.as_ref()?;
    let screen = ctx.mux.capture(&p.id, false).ok()?;
    let now = jiff::Zoned::now();
    let read = crate::agents::of(f.proc.agent).spec().limit_screen?;
    read(&screen, &now).map(|l| (l.reset.as_second(), l.text))
}

/// Reads the world once and decides. Never acts.
pub fn evaluate(ctx: &Ctx, cfg: &Auto) -> Result<Evaluation, Stop> {
    let s = ctx.scan(true)?;
    let visible = ctx.mux.visible(&s.panes);
    let pins = crate::store::pins::Pins::read(&ctx.ledger.home);
    let excl = excluded(&ctx.ledger.home, &s.found, &cfg.exclude);
    let tps = ctx.platform.clock_ticks_per_sec();
    let limit_parked = if cfg.limit_reset {
        crate::store::autolog::limit_parks(&ctx.ledger.home)
    } else {
        vec![]
    };
    let mut facts = vec![];
    let mut budget = Budget {
        memory: ctx.platform.memory_now(),
        ..Budget::default()
    };
    for (i, f) in s.found.iter().enumerate() {
        // Background sessions are not in a pane and are never park's to count or to park.
        let Some(p) = f.pane.as_ref().filter(|_| !f.proc.background) else {
            continue;
        };
        budget.live += 1;
        budget.anon += f.mem.anon;
        let age = ctx.platform.started_secs_ago(f.main_start);
        let quiet = match (f.idle_secs, age) {
            (Some(i), Some(a)) => Some(i.min(a)),
            // Without the agent's age a resume cannot be told from an old turn: unknown.
            _ => None,
        };
        let guard =
            crate::guards::check(f, &s.caller, s.pane_error.as_deref(), Overrides::default()).err();
        let mut fx = Facts {
            idx: i,
            pane: p.id.clone(),
            anon: f.mem.anon,
            quiet,
            visible: match &visible {
                Ok(v) => v.contains(&p.id),
                Err(_) => true,
            },
            pinned: pins.broken.is_some()
                || f.ident
                    .session_id
                    .as_deref()
                    .is_some_and(|id| pins.contains(id)),
            excluded: excl.iter().find(|(k, _)| *k == i).map(|(_, w)| w.clone()),
            guard,
            background: policy::background_work(f, &s.table, tps),
            limit: None,
        };
        if cfg.limit_reset
            && !fx.pinned
            && !fx.visible
            && fx.excluded.is_none()
            && fx.guard.is_none()
        {
            // One automatic park per limit message: a session resumed before the reset still
            // shows the same message in its history, and its person chose to have it back.
            fx.limit = limit_of(ctx, f).filter(|(_, text)| {
                let sid = f.ident.session_id.as_deref().unwrap_or_default();
                !limit_parked.iter().any(|(s, t)| s == sid && t == text)
            });
        }
        facts.push(fx);
    }
    let verdicts = policy::decide(cfg, budget, &facts, pins.broken.is_some());
    Ok(Evaluation {
        scan: s,
        facts,
        budget,
        verdicts,
        psi: ctx.platform.memory_pressure(),
    })
}

fn budget_of(cfg: &Auto, e: &Evaluation) -> AutoBudget {
    let b = &e.budget;
    AutoBudget {
        live: b.live,
        max_live: cfg.max_live,
        anon_bytes: b.anon,
        ram_budget: cfg.ram_budget,
        mem_available: b.memory.map(|m| m.0),
        mem_total: b.memory.map(|m| m.1),
        min_available: cfg
            .min_available
            .zip(b.memory)
            .map(|(f, (_, total))| f.bytes(total)),
        psi: e.psi.clone(),
        over: policy::over(cfg, b.live, b.anon, b.memory),
    }
}

/// The wake-up an automatic park at a usage limit carries: one minute after the reset, typing
/// `continue`.
fn limit_wake(reset: i64) -> Option<crate::model::wake::Wake> {
    let now = jiff::Timestamp::now();
    let at = jiff::Timestamp::from_second(reset + 60).ok()?;
    let mut w = crate::model::wake::Wake::new(now);
    w.at = Some(at.to_string());
    w.notes = vec!["continue".into()];
    Some(w)
}

/// One pass: evaluate, then (mode `park`) park the picks; `trigger` says why it ran. The report
/// is written to `auto-status.json` unless this is a dry `status` evaluation.
pub fn pass(ctx: &Ctx, config: &Config, trigger: &str) -> Result<AutoReport, Stop> {
    let cfg = &config.auto;
    // One acting pass at a time per $PARK_HOME (the daemon's and a `daemon --once`): the second
    // waits and then decides on what the first left.
    let _pass = if trigger == "status" {
        None
    } else {
        Some(pass_lock(ctx)?)
    };
    let e = evaluate(ctx, cfg)?;
    // Budget parks act in `park` mode; usage-limit parks whenever `limit_reset` is on, except in
    // `suggest` mode (which never parks). A dry `status` evaluation never acts.
    let acts = |go: Go| {
        trigger != "status"
            && match go {
                Go::Keep => false,
                Go::Park => cfg.mode == Mode::Park,
                Go::ParkUntil(_) => cfg.mode != Mode::Suggest,
            }
    };
    let mut items = vec![];
    let mut picked: Vec<usize> = vec![];
    for (k, v) in e.verdicts.iter().enumerate() {
        if !acts(v.go) {
            continue;
        }
        let wake = match v.go {
            Go::ParkUntil(reset) => limit_wake(reset),
            _ => None,
        };
        picked.push(k);
        items.push(ParkItem {
            target: e.facts[k].pane.clone(),
            found: e.facts[k].idx,
            opts: ParkOpts {
                dry_run: false,
                overrides: Overrides::default(),
                group: None,
                wake,
            },
        });
    }
    let results = if items.is_empty() {
        vec![]
    } else {
        wave::park_all(ctx, &e.scan, items)
    };
    let mut agents = vec![];
    for (k, (f, v)) in e.facts.iter().zip(&e.verdicts).enumerate() {
        let found = &e.scan.found[f.idx];
        let (decision, reason) = match v.go {
            Go::Keep => (Decision::Kept, v.reason.clone()),
            go if acts(go) => {
                let r = picked
                    .iter()
                    .position(|p| *p == k)
                    .and_then(|i| results.get(i));
                match r {
                    Some(r) if r.outcome == Outcome::Parked => (Decision::Parked, v.reason.clone()),
                    Some(r) => (
                        Decision::Kept,
                        format!(
                            "picked ({}), but the park said {}: {}",
                            v.reason,
                            r.outcome,
                            r.reason.clone().unwrap_or_default()
                        ),
                    ),
                    None => (Decision::Kept, v.reason.clone()),
                }
            }
            _ if cfg.mode == Mode::Off => (
                Decision::Kept,
                format!("auto mode is off (would park: {})", v.reason),
            ),
            _ => (Decision::Suggested, v.reason.clone()),
        };
        agents.push(AutoAgent {
            pane: f.pane.clone(),
            agent: found.proc.agent,
            session_id: found.ident.session_id.clone(),
            decision,
            reason,
            rank: v.rank,
            quiet_seconds: f.quiet,
            anon_bytes: f.anon,
            limit: f.limit.as_ref().map(|(_, t)| t.clone()),
        });
    }
    let report = AutoReport {
        schema: park_protocol::SCHEMA_VERSION,
        mode: cfg.mode.as_str().into(),
        at: jiff::Timestamp::now().to_string(),
        trigger: trigger.into(),
        config: config.file.as_ref().map(|p| p.display().to_string()),
        config_stamp: Some(cfg.stamp()),
        idle_seconds: cfg.idle.as_secs(),
        per_pass: cfg.per_pass,
        budget: budget_of(cfg, &e),
        agents,
        results,
        daemon_pid: crate::store::lock::holder(&ctx.ledger.home, "waker"),
    };
    if trigger != "status" {
        record(ctx, &report);
    }
    Ok(report)
}

/// Waits (up to 2 minutes) for the `auto-pass` lock.
fn pass_lock(ctx: &Ctx) -> Result<crate::store::lock::Lock, Stop> {
    use crate::store::lock::{try_lock, TryLock};
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        match try_lock(&ctx.ledger.home, "auto-pass") {
            Ok(TryLock::Acquired(l)) => return Ok(l),
            Ok(TryLock::Held(owner)) if std::time::Instant::now() >= deadline => {
                return Err(Stop::refused(format!(
                    "another autopilot pass (pid {owner}) has been running for 2 minutes"
                )))
            }
            Ok(TryLock::Held(_)) => std::thread::sleep(std::time::Duration::from_millis(100)),
            Err(e) => {
                return Err(Stop::refused(format!(
                    "cannot lock the autopilot pass: {e}"
                )))
            }
        }
    }
}

/// `auto.log`, `auto-status.json`, the status line and the announcement of a pass.
fn record(ctx: &Ctx, r: &AutoReport) {
    let home = &ctx.ledger.home;
    if ctx.ledger.ensure().is_err() {
        return;
    }
    let parked: Vec<&AutoAgent> = r
        .agents
        .iter()
        .filter(|a| a.decision == Decision::Parked)
        .collect();
    let lines: Vec<serde_json::Value> = parked
        .iter()
        .map(|a| {
            let freed = r
                .results
                .iter()
                .find(|x| x.pane.as_deref() == Some(a.pane.as_str()))
                .and_then(|x| x.freed_bytes);
            serde_json::json!({
                "at": r.at,
                "session_id": a.session_id,
                "agent": a.agent,
                "pane": a.pane,
                "reason": a.reason,
                "limit": a.limit,
                "trigger": r.trigger,
                "freed_bytes": freed,
            })
        })
        .collect();
    crate::store::autolog::append(home, &lines);
    for a in &parked {
        if let (Some(sid), Some(l)) = (&a.session_id, &a.limit) {
            crate::store::autolog::note_limit_park(home, sid, l);
        }
    }
    crate::store::autolog::save_report(home, r);
    ctx.publish_status();
    if !parked.is_empty() {
        let freed: u64 = r.results.iter().filter_map(|x| x.freed_bytes).sum();
        let panes: Vec<&str> = parked.iter().map(|a| a.pane.as_str()).collect();
        let text = format!(
            "park auto: parked {} ({}) — freed {}",
            panes.join(", "),
            parked[0].reason,
            park_protocol::human_bytes(freed)
        );
        ctx.mux.notify(&text);
    }
}

#[cfg(test)]
mod excluded_tests {
    use super::excluded;

    fn titled(pane: &str, title: &str) -> crate::scan::Found {
        let mut f = crate::scan::tests::found_with_tree(vec![(100, 1)]);
        f.title = title.into();
        f.pane = Some(crate::adapters::mux::Pane {
            id: pane.into(),
            session: "work".into(),
            title: title.into(),
            ..Default::default()
        });
        f
    }

    /// `exclude = ["<title>"]` with a title two agents share excluded neither (the target was
    /// "ambiguous"), so the autopilot parked both: it excludes every match.
    #[test]
    fn an_exclusion_title_shared_by_several_agents_excludes_them_all() {
        let home = tempfile::tempdir().unwrap();
        let found = vec![
            titled("%1", "✳ Claude Code"),
            titled("%2", "✳ Claude Code"),
            titled("%3", "api"),
        ];
        let mut got = excluded(home.path(), &found, &["Claude Code".into()]);
        got.sort();
        assert_eq!(
            got,
            vec![
                (0, "Claude Code".to_string()),
                (1, "Claude Code".to_string())
            ]
        );
        // One match, and none, as before.
        assert_eq!(
            excluded(home.path(), &found, &["api".into()]),
            vec![(2, "api".to_string())]
        );
        assert!(excluded(home.path(), &found, &["nothing-like-it".into()]).is_empty());
    }
}
