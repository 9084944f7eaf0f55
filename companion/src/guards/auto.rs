//! The autopilot's policy (issue 21 item 3): which live agents one pass parks, and why every other
//! one is kept. Pure: the facts come from one scan (`ops::auto` gathers them), the verdicts go back
//! to the same guarded park transaction a person's `park park` runs.
//!
//! Contract, in the order a kept agent's reason is chosen (first rule that holds):
//! 1. **auto-pinned**: a pinned session (or every session while the pin file is unreadable);
//! 2. **auto-excluded**: a session `exclude` names (a target or a set);
//! 3. **auto-visible**: a pane someone can see (the active window of an attached tmux session,
//!    the focused tab of a zellij client; every pane when that cannot be told);
//! 4. **auto-guard**: refused by the park guard chain (`guards::check`: busy, waiting, a draft,
//!    not restorable, …), named by the guard;
//! 5. **auto-background**: background work in its process tree (a process it started well after
//!    it started itself, i.e. not one of its MCP servers): a background shell, a dev server;
//! 6. **auto-idle**: quiet for less than `idle` — quiet is measured from the later of the last
//!    real turn and the agent's own start, so a session just resumed or unparked by hand waits a
//!    whole `idle` again; no measurable quiet time is never quiet.
//!
//! The rest are candidates, least recently used first (longest quiet; ties by pane). They go
//! (**auto-budget**) while a budget is exceeded — more live agents than `max_live`, more anonymous
//! memory than `ram_budget`, MemAvailable under `min_available` (each park counts its agent's
//! anonymous memory as given back) — or, with no budget key set, all of them; never more than
//! `per_pass` in one pass (**auto-per-pass**). With `limit_reset`, an agent at a usage-limit screen
//! that passes rules 1–5 goes whatever its quiet time and the budget, to wake after the reset.
//! Each rule can be switched off by its name in test builds (`scripts/guard-mutation`).

use crate::guards::Refusal;
use crate::model::auto::Auto;
use crate::support::fault::disabled;
use park_protocol::human_bytes;

/// What the pass knows about one live agent (index into the scan's `found`).
#[derive(Debug, Clone)]
pub struct Facts {
    pub idx: usize,
    pub pane: String,
    /// Anonymous memory of its tree: what a park gives back.
    pub anon: u64,
    /// Seconds since the later of its last real turn and its own start; `None`: not measurable.
    pub quiet: Option<u64>,
    pub visible: bool,
    pub pinned: bool,
    /// The `exclude` entry that names it.
    pub excluded: Option<String>,
    /// The first guard of the park chain that refuses it.
    pub guard: Option<Refusal>,
    /// Background work in its tree, described.
    pub background: Option<String>,
    /// At a usage-limit screen: when the limit resets (Unix seconds) and the line that said so.
    pub limit: Option<(i64, String)>,
}

/// The machine and the agents now.
#[derive(Debug, Clone, Copy, Default)]
pub struct Budget {
    /// Live agents in panes (what `max_live` counts).
    pub live: usize,
    /// Their anonymous memory, bytes.
    pub anon: u64,
    /// (MemAvailable, MemTotal), bytes.
    pub memory: Option<(u64, u64)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Go {
    /// Park it in this pass.
    Park,
    /// Park it and wake it after its usage limit resets (Unix seconds).
    ParkUntil(i64),
    Keep,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub idx: usize,
    pub go: Go,
    pub reason: String,
    /// 1-based place in the least-recently-used order, for candidates.
    pub rank: Option<usize>,
}

/// A process an agent starts this long after itself is background work, not one of the MCP
/// servers it starts with its session (those come up within seconds).
pub const BACKGROUND_GRACE_SECS: u64 = 30;

/// Background work in `f`'s kill set: live processes other than the agent's own that started
/// [`BACKGROUND_GRACE_SECS`] or more after the agent, described (`npm run dev (pid 7)`).
pub fn background_work(
    f: &crate::scan::Found,
    table: &crate::adapters::platform::proctree::ProcTable,
    ticks_per_sec: u64,
) -> Option<String> {
    let late = f
        .main_start
        .saturating_add(BACKGROUND_GRACE_SECS.saturating_mul(ticks_per_sec));
    let found: Vec<String> = f
        .tree
        .iter()
        .filter(|(pid, start)| *pid != f.proc.root && *pid != f.proc.main && *start >= late)
        .filter_map(|(pid, _)| table.get(*pid))
        .filter(|p| p.state != 'Z')
        .map(|p| {
            let cmd: String = p.argv.join(" ").chars().take(40).collect();
            format!(
                "{} (pid {})",
                if cmd.is_empty() { p.comm.clone() } else { cmd },
                p.pid
            )
        })
        .collect();
    match found.len() {
        0 => None,
        1 => Some(found[0].clone()),
        n => Some(format!("{} and {} more", found[0], n - 1)),
    }
}

/// Which budget is exceeded now, worded; `None` when every one holds.
pub fn over(cfg: &Auto, live: usize, anon: u64, memory: Option<(u64, u64)>) -> Option<String> {
    if let Some(m) = cfg.max_live.filter(|m| live > *m) {
        return Some(format!("{live} live agents > max_live {m}"));
    }
    if let Some(b) = cfg.ram_budget.filter(|b| anon > *b) {
        return Some(format!(
            "agents hold {} > ram_budget {}",
            human_bytes(anon),
            human_bytes(b)
        ));
    }
    if let (Some(f), Some((avail, total))) = (cfg.min_available, memory) {
        let floor = f.bytes(total);
        if avail < floor {
            return Some(format!(
                "MemAvailable {} < min_available {}",
                human_bytes(avail),
                f.text()
            ));
        }
    }
    None
}

/// The kept reason from rules 1–5 (everything but quiet time and budget).
fn blocked(f: &Facts, pins_broken: bool) -> Option<String> {
    if f.pinned && !disabled("auto-pinned") {
        return Some(if pins_broken {
            "pins file unreadable: every session counts as pinned".into()
        } else {
            "pinned".into()
        });
    }
    if let Some(x) = f.excluded.as_ref().filter(|_| !disabled("auto-excluded")) {
        return Some(format!("excluded ({x})"));
    }
    if f.visible && !disabled("auto-visible") {
        return Some("visible in an attached client".into());
    }
    if let Some(r) = f.guard.as_ref().filter(|_| !disabled("auto-guard")) {
        return Some(format!("refused by guard {}: {}", r.guard, r.why));
    }
    if let Some(b) = f
        .background
        .as_ref()
        .filter(|_| !disabled("auto-background"))
    {
        return Some(format!("busy (background work: {b})"));
    }
    None
}

/// One pass's decisions, one per agent in `facts` order.
pub fn decide(cfg: &Auto, budget: Budget, facts: &[Facts], pins_broken: bool) -> Vec<Verdict> {
    let brief = |s: u64| crate::support::duration::brief(Some(s));
    let mut out: Vec<Verdict> = facts
        .iter()
        .map(|f| Verdict {
            idx: f.idx,
            go: Go::Keep,
            reason: String::new(),
            rank: None,
        })
        .collect();
    let mut candidates: Vec<usize> = vec![];
    let mut parks = 0usize;
    let (mut live, mut anon, mut memory) = (budget.live, budget.anon, budget.memory);
    let give_back =
        |f: &Facts, live: &mut usize, anon: &mut u64, memory: &mut Option<(u64, u64)>| {
            *live = live.saturating_sub(1);
            *anon = anon.saturating_sub(f.anon);
            if let Some((a, t)) = memory.as_mut() {
                *a = (*a + f.anon).min(*t);
            }
        };
    for (k, f) in facts.iter().enumerate() {
        if let Some(why) = blocked(f, pins_broken) {
            out[k].reason = why;
            continue;
        }
        if cfg.limit_reset {
            if let Some((reset, line)) = &f.limit {
                if parks < cfg.per_pass || disabled("auto-per-pass") {
                    parks += 1;
                    give_back(f, &mut live, &mut anon, &mut memory);
                    out[k].go = Go::ParkUntil(*reset);
                    out[k].reason = format!("at its usage limit ({line}); wakes after the reset");
                } else {
                    out[k].reason = format!("per_pass {} reached; next pass", cfg.per_pass);
                }
                continue;
            }
        }
        match f.quiet {
            None if !disabled("auto-idle") => {
                out[k].reason = "no measurable quiet time".into();
                continue;
            }
            Some(q) if q < cfg.idle.as_secs() && !disabled("auto-idle") => {
                out[k].reason = format!("quiet for {} < {}", brief(q), brief(cfg.idle.as_secs()));
                continue;
            }
            _ => candidates.push(k),
        }
    }
    // Least recently used first; the pane breaks ties so a pass is reproducible.
    candidates.sort_by(|a, b| {
        facts[*b]
            .quiet
            .cmp(&facts[*a].quiet)
            .then_with(|| facts[*a].pane.cmp(&facts[*b].pane))
    });
    for (rank, k) in candidates.into_iter().enumerate() {
        let f = &facts[k];
        out[k].rank = Some(rank + 1);
        let need = if cfg.has_budget() {
            over(cfg, live, anon, memory)
        } else {
            Some(format!(
                "quiet for {} (no budget set)",
                brief(f.quiet.unwrap_or(0))
            ))
        };
        let need = match need {
            Some(n) => n,
            None if disabled("auto-budget") => "budget ignored".into(),
            None => {
                out[k].reason = format!(
                    "budget already met ({} live, {}{})",
                    live,
                    human_bytes(anon),
                    memory
                        .map(|(a, _)| format!(", {} available", human_bytes(a)))
                        .unwrap_or_default()
                );
                continue;
            }
        };
        if parks >= cfg.per_pass && !disabled("auto-per-pass") {
            out[k].reason = format!("per_pass {} reached; next pass ({need})", cfg.per_pass);
            continue;
        }
        parks += 1;
        give_back(f, &mut live, &mut anon, &mut memory);
        out[k].go = Go::Park;
        out[k].reason = need;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::auto::{Floor, Mode};
    use std::time::Duration;

    const H: u64 = 3600;
    const G: u64 = 1 << 30;

    fn agent(idx: usize, quiet: u64) -> Facts {
        Facts {
            idx,
            pane: format!("%{idx}"),
            anon: G / 2,
            quiet: Some(quiet),
            visible: false,
            pinned: false,
            excluded: None,
            guard: None,
            background: None,
            limit: None,
        }
    }

    fn cfg() -> Auto {
        Auto {
            mode: Mode::Park,
            idle: Duration::from_secs(2 * H),
            per_pass: 10,
            ..Auto::default()
        }
    }

    fn parked(v: &[Verdict]) -> Vec<usize> {
        v.iter()
            .filter(|v| v.go != Go::Keep)
            .map(|v| v.idx)
            .collect()
    }

    fn budget(live: usize) -> Budget {
        Budget {
            live,
            anon: live as u64 * G / 2,
            memory: Some((8 * G, 16 * G)),
        }
    }

    #[test]
    fn max_live_parks_the_least_recently_used_first() {
        let c = Auto {
            max_live: Some(2),
            ..cfg()
        };
        let facts = [
            agent(0, 3 * H),
            agent(1, 9 * H),
            agent(2, 5 * H),
            agent(3, 4 * H),
        ];
        let v = decide(&c, budget(4), &facts, false);
        assert_eq!(parked(&v), vec![1, 2], "{v:#?}");
        assert_eq!(v[1].rank, Some(1));
        assert_eq!(v[2].rank, Some(2));
        assert!(
            v[1].reason.contains("4 live agents > max_live 2"),
            "{}",
            v[1].reason
        );
        assert!(
            v[3].reason.starts_with("budget already met"),
            "{}",
            v[3].reason
        );
    }

    #[test]
    fn never_pinned_visible_excluded_refused_or_busy_and_says_why() {
        let c = cfg();
        let mut f = vec![agent(0, 9 * H), agent(1, 9 * H), agent(2, 9 * H)];
        f.extend([agent(3, 9 * H), agent(4, 9 * H), agent(5, 9 * H)]);
        f[0].pinned = true;
        f[1].visible = true;
        f[2].excluded = Some("work:0".into());
        f[3].guard = Some(Refusal {
            guard: "not-busy",
            why: "busy: spinner".into(),
        });
        f[4].background = Some("npm run dev (pid 7)".into());
        let v = decide(&c, budget(6), &f, false);
        assert_eq!(parked(&v), vec![5], "{v:#?}");
        assert_eq!(v[0].reason, "pinned");
        assert_eq!(v[1].reason, "visible in an attached client");
        assert_eq!(v[2].reason, "excluded (work:0)");
        assert_eq!(v[3].reason, "refused by guard not-busy: busy: spinner");
        assert!(v[4]
            .reason
            .starts_with("busy (background work: npm run dev"));
    }

    #[test]
    fn quiet_time_and_unknown_quiet_keep() {
        let mut f = vec![agent(0, 12 * 60), agent(1, 0)];
        f[1].quiet = None;
        let v = decide(&cfg(), budget(2), &f, false);
        assert_eq!(parked(&v), Vec::<usize>::new());
        assert_eq!(v[0].reason, "quiet for 12m < 2h");
        assert_eq!(v[1].reason, "no measurable quiet time");
    }

    #[test]
    fn no_budget_every_candidate_goes_per_pass_at_a_time() {
        let c = Auto {
            per_pass: 2,
            ..cfg()
        };
        let f = [agent(0, 3 * H), agent(1, 4 * H), agent(2, 5 * H)];
        let v = decide(&c, budget(3), &f, false);
        assert_eq!(parked(&v), vec![1, 2]);
        assert!(
            v[0].reason.starts_with("per_pass 2 reached"),
            "{}",
            v[0].reason
        );
    }

    #[test]
    fn ram_budget_and_memory_floor_take_only_as_many_as_needed() {
        let c = Auto {
            ram_budget: Some(G),
            ..cfg()
        };
        // 4 × 0.5G = 2G held, budget 1G: two parks bring it to 1G.
        let f = [
            agent(0, 3 * H),
            agent(1, 4 * H),
            agent(2, 5 * H),
            agent(3, 6 * H),
        ];
        assert_eq!(parked(&decide(&c, budget(4), &f, false)), vec![2, 3]);
        let c = Auto {
            min_available: Some(Floor::Bytes(2 * G)),
            ..cfg()
        };
        let b = Budget {
            memory: Some((G + G / 4, 16 * G)),
            ..budget(4)
        };
        // 1.25G available, floor 2G: two parks of 0.5G each reach 2.25G.
        let v = decide(&c, b, &f, false);
        assert_eq!(parked(&v), vec![2, 3], "{v:#?}");
        assert!(v[3].reason.starts_with("MemAvailable"), "{}", v[3].reason);
        let b = Budget {
            memory: Some((10 * G, 16 * G)),
            ..budget(4)
        };
        assert_eq!(parked(&decide(&c, b, &f, false)), Vec::<usize>::new());
    }

    #[test]
    fn a_limit_screen_goes_regardless_of_quiet_with_limit_reset_only() {
        let mut f = [agent(0, 60), agent(1, 60)];
        f[0].limit = Some((1_800_000_000, "limit reached ∙ resets 3pm".into()));
        let v = decide(&cfg(), budget(2), &f, false);
        assert_eq!(parked(&v), Vec::<usize>::new(), "limit_reset off");
        let c = Auto {
            limit_reset: true,
            ..cfg()
        };
        let v = decide(&c, budget(2), &f, false);
        assert_eq!(v[0].go, Go::ParkUntil(1_800_000_000));
        assert_eq!(v[1].go, Go::Keep);
        f[0].visible = true;
        assert_eq!(decide(&c, budget(2), &f, false)[0].go, Go::Keep);
    }

    #[test]
    fn a_process_started_well_after_the_agent_is_background_work_its_mcp_servers_are_not() {
        use crate::adapters::platform::{proctree::ProcTable, ProcInfo};
        let tps = 100;
        let p = |pid: u32, ppid: u32, start: u64, state: char, argv: &[&str]| ProcInfo {
            pid,
            ppid,
            start_ticks: start,
            state,
            argv: argv.iter().map(|s| s.to_string()).collect(),
            comm: argv[0].into(),
            ..ProcInfo::default()
        };
        let table = ProcTable::new(vec![
            p(10, 1, 1000, 'S', &["claude"]),
            p(11, 10, 1200, 'S', &["node", "mcp-server.js"]),
            p(12, 10, 9000, 'S', &["npm", "run", "dev"]),
            p(13, 10, 9500, 'Z', &["sh"]),
        ]);
        let mut f = crate::scan::tests::found_with_tree(vec![(10, 1000), (11, 1200)]);
        assert_eq!(
            background_work(&f, &table, tps),
            None,
            "MCP server at start"
        );
        f.tree.push((12, 9000));
        f.tree.push((13, 9500));
        let b = background_work(&f, &table, tps).unwrap();
        assert_eq!(b, "npm run dev (pid 12)", "a zombie is not work");
    }

    #[test]
    fn a_broken_pin_file_is_named() {
        let mut f = [agent(0, 9 * H)];
        f[0].pinned = true;
        let v = decide(&cfg(), budget(1), &f, true);
        assert!(v[0].reason.contains("pins file unreadable"));
    }
}
