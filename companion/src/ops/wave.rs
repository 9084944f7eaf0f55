//! Bulk parks and unparks in concurrent waves (issue 8 item 2, issue 9 item 5).
//!
//! Contract:
//! - **Park waves**: up to [`PARK_WAVE`] agents at a time. Each wave runs the checks that need no
//!   sample (`park::precheck`), takes **one shared CPU sample** of all its trees, then parks every
//!   agent that passed on its own thread through the same transaction as a single park (locks,
//!   claim, archive, fresh re-scan and the same verdict, kill). Agents are distinct sessions in
//!   distinct panes, so their locks never overlap.
//! - **Unpark waves**: resumes are *sent* one after another, at least [`START_GAP`] apart (Claude
//!   corrupts `~/.claude.json` when several start at once), and their verdicts are awaited
//!   concurrently, so N resumes take about N × gap, not N × (start + verify).
//! - Results come back in target order, whatever order they finished in.
//! - On a terminal, a progress line on stderr (`\r`, cleared at the end); never otherwise.

use crate::ctx::Ctx;
use crate::ops::kill;
use crate::ops::park::{self, ParkOpts};
use crate::ops::unpark::{self, Sent};
use crate::scan::live::LiveSet;
use crate::scan::Scan;
use park_protocol::ActionResult;
use park_protocol::Outcome;
use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Agents parked concurrently in one wave (the kills mostly wait; two cores are enough).
pub(crate) const PARK_WAVE: usize = 10;
/// Least time between two agent starts of one unpark wave.
pub(crate) const START_GAP: Duration = Duration::from_secs(1);

/// One agent of a park wave: its target text, its index in the scan, and its options.
pub(crate) struct ParkItem {
    pub target: String,
    pub found: usize,
    pub opts: ParkOpts,
}

/// A progress line on stderr, only on a terminal.
pub(crate) struct Progress {
    verb: &'static str,
    total: usize,
    done: Mutex<(usize, usize)>,
    on: bool,
}

impl Progress {
    pub fn new(verb: &'static str, total: usize) -> Progress {
        Progress {
            verb,
            total,
            done: Mutex::new((0, 0)),
            on: total > 1 && std::io::stderr().is_terminal(),
        }
    }

    pub fn tick(&self, r: &ActionResult) {
        let mut d = self.done.lock().unwrap_or_else(|e| e.into_inner());
        d.0 += 1;
        if matches!(
            r.outcome,
            Outcome::Parked | Outcome::Unparked | Outcome::WouldPark
        ) {
            d.1 += 1;
        }
        if self.on {
            eprint!(
                "\r\x1b[Kpark: {}/{} done, {} {}…",
                d.0, self.total, d.1, self.verb
            );
            let _ = std::io::stderr().flush();
        }
    }

    pub fn clear(&self) {
        if self.on {
            eprint!("\r\x1b[K");
            let _ = std::io::stderr().flush();
        }
    }
}

/// Parks `items` (all from scan `s`) in waves; results in the order of `items`.
pub(crate) fn park_all(ctx: &Ctx, s: &Scan, items: Vec<ParkItem>) -> Vec<ActionResult> {
    let progress = Progress::new("parked", items.len());
    let mut out: Vec<Option<ActionResult>> = (0..items.len()).map(|_| None).collect();
    let mut rest: Vec<(usize, ParkItem)> = items.into_iter().enumerate().collect();
    while !rest.is_empty() {
        let wave: Vec<(usize, ParkItem)> = rest.drain(..rest.len().min(PARK_WAVE)).collect();
        for (i, r) in park_wave(ctx, s, wave, &progress) {
            out[i] = Some(r);
        }
        ctx.publish_status();
    }
    progress.clear();
    out.into_iter().map(|r| r.expect("every item")).collect()
}

fn park_wave(
    ctx: &Ctx,
    s: &Scan,
    wave: Vec<(usize, ParkItem)>,
    progress: &Progress,
) -> Vec<(usize, ActionResult)> {
    let mut done = vec![];
    let mut ready = vec![];
    for (i, it) in wave {
        let f = &s.found[it.found];
        match park::precheck(ctx, s, f, &it.target, &it.opts) {
            Ok(b) => ready.push((i, it, b)),
            Err(r) => {
                progress.tick(&r);
                done.push((i, *r));
            }
        }
    }
    if ready.is_empty() {
        return done;
    }
    let trees: Vec<&[(u32, u64)]> = ready
        .iter()
        .map(|(_, it, _)| s.found[it.found].tree.as_slice())
        .collect();
    let cpu = kill::cpu_percent_many(ctx.platform.as_ref(), &trees, park::CPU_WINDOW);
    let parked: Vec<(usize, ActionResult)> = std::thread::scope(|sc| {
        let handles: Vec<_> = ready
            .into_iter()
            .zip(cpu)
            .map(|((i, it, b), cpu)| {
                sc.spawn(move || {
                    let f = &s.found[it.found];
                    let r = park::park_sampled(ctx, s, f, &it.target, it.opts, b, cpu);
                    progress.tick(&r);
                    (i, r)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a park thread panicked"))
            .collect()
    });
    done.extend(parked);
    done
}

/// One session of an unpark wave: its ledger entry id and the target text it was named by.
pub(crate) struct UnparkItem {
    pub entry: String,
    pub target: String,
    /// `--new-pane`: a slot another agent took is left to it (see `unpark::send_resume`).
    pub new_pane: bool,
}

/// Resumes `items` with starts at least [`START_GAP`] apart and the verdicts awaited concurrently;
/// results in the order of `items`.
pub(crate) fn unpark_all(
    ctx: &Ctx,
    s: &Scan,
    live: &LiveSet,
    items: &[UnparkItem],
    dry_run: bool,
) -> Vec<ActionResult> {
    let progress = Progress::new("resumed", items.len());
    let out = std::thread::scope(|sc| {
        let mut last_start: Option<Instant> = None;
        let mut slots: Vec<Result<ActionResult, std::thread::ScopedJoinHandle<ActionResult>>> =
            vec![];
        for it in items {
            if let Some(t) = last_start {
                let since = t.elapsed();
                if since < START_GAP {
                    std::thread::sleep(START_GAP - since);
                }
            }
            match unpark::send_resume(ctx, s, live, &it.entry, &it.target, dry_run, it.new_pane) {
                Sent::Done(r) => {
                    progress.tick(&r);
                    slots.push(Ok(r));
                }
                Sent::Started(p) => {
                    last_start = Some(Instant::now());
                    let progress = &progress;
                    slots.push(Err(sc.spawn(move || {
                        let r = unpark::finish(ctx, &p);
                        progress.tick(&r);
                        r
                    })));
                }
            }
        }
        slots
            .into_iter()
            .map(|x| match x {
                Ok(r) => r,
                Err(h) => h.join().expect("an unpark thread panicked"),
            })
            .collect::<Vec<_>>()
    });
    progress.clear();
    out
}
