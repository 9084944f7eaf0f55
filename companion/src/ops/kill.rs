//! Killing an agent's process tree.
//!
//! Contract: the caller passes a snapshot of (pid, start ticks) taken by ppid links *before* any
//! signal (tool shells run under setsid and reparent to init once the agent dies). Every signal is
//! sent only after re-checking the start time, so a recycled pid is never hit. Order: TERM the process
//! that holds the session (Claude exits cleanly in ~1 s and kills its own tools) and wait for it,
//! then TERM the root (a wrapper), then the rest, then KILL survivors.
//! A zombie counts as gone. Any survivor is reported; the caller rolls back.

use crate::adapters::platform::Platform;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KillReport {
    pub killed: Vec<u32>,
    pub needed_sigkill: Vec<u32>,
    pub survivors: Vec<u32>,
}

/// Alive = same pid, same start time, not a zombie.
pub fn alive(platform: &dyn Platform, pid: u32, start: u64) -> bool {
    match platform.process(pid) {
        Some(p) => p.start_ticks == start && p.state != 'Z' && p.state != 'X',
        None => false,
    }
}

fn signal(platform: &dyn Platform, pid: u32, start: u64, sig: Signal) {
    if alive(platform, pid, start) {
        let _ = kill(Pid::from_raw(pid as i32), sig);
    }
}

fn wait_gone(platform: &dyn Platform, set: &[(u32, u64)], timeout: Duration) -> Vec<(u32, u64)> {
    let t0 = Instant::now();
    loop {
        let left: Vec<(u32, u64)> = set
            .iter()
            .copied()
            .filter(|(p, s)| alive(platform, *p, *s))
            .collect();
        if left.is_empty() || t0.elapsed() >= timeout {
            return left;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
}

pub struct Timings {
    pub agent_term: Duration,
    pub rest_term: Duration,
    pub kill: Duration,
}

impl Default for Timings {
    fn default() -> Self {
        Timings {
            agent_term: Duration::from_millis(3000),
            rest_term: Duration::from_millis(1500),
            kill: Duration::from_millis(2000),
        }
    }
}

/// Kills `set` (the first element is the agent's root, `main` the process holding its state).
pub(crate) fn kill_tree(
    platform: &dyn Platform,
    set: &[(u32, u64)],
    main: (u32, u64),
    t: &Timings,
) -> KillReport {
    crate::support::fault::point("before-sigterm");
    let root = set.first().copied();
    // TERM the process holding the session first and let it finish: its wrappers exit after it.
    // A wrapper TERMed at the same time exits at once, the shell takes the terminal back, and
    // the agent's last words land on the shell's prompt line (Qwen Code's resume hint did).
    signal(platform, main.0, main.1, Signal::SIGTERM);
    // A suspended agent (Ctrl-Z) only acts on its TERM once it runs again.
    for (p, s) in set {
        signal(platform, *p, *s, Signal::SIGCONT);
    }
    crate::support::fault::point("after-sigterm");
    wait_gone(platform, &[main], t.agent_term);
    // Then the root, if the main's exit did not end it (a wrapper forwards the TERM to whatever
    // it still runs).
    if let Some((p, s)) = root.filter(|r| *r != main) {
        signal(platform, p, s, Signal::SIGTERM);
        wait_gone(platform, &[(p, s)], t.rest_term);
    }
    let left = wait_gone(platform, set, Duration::ZERO);
    for (p, s) in &left {
        signal(platform, *p, *s, Signal::SIGTERM);
    }
    let left = wait_gone(platform, set, t.rest_term);
    crate::support::fault::point("mid-kill");
    for (p, s) in &left {
        signal(platform, *p, *s, Signal::SIGKILL);
    }
    let survivors = wait_gone(platform, set, t.kill);
    KillReport {
        killed: set
            .iter()
            .map(|(p, _)| *p)
            .filter(|p| !survivors.iter().any(|(s, _)| s == p))
            .collect(),
        needed_sigkill: left.iter().map(|(p, _)| *p).collect(),
        survivors: survivors.iter().map(|(p, _)| *p).collect(),
    }
}

/// Tree CPU use in percent of one core over `window`.
pub fn cpu_percent(platform: &dyn Platform, set: &[(u32, u64)], window: Duration) -> Option<f64> {
    cpu_percent_many(platform, &[set], window).pop().flatten()
}

/// One shared sample for many trees: each tree's ticks are read, one `window` is slept, and they
/// are read again. A wave of N agents costs one window, not N.
pub(crate) fn cpu_percent_many(
    platform: &dyn Platform,
    sets: &[&[(u32, u64)]],
    window: Duration,
) -> Vec<Option<f64>> {
    let sample = |set: &[(u32, u64)]| -> u64 {
        set.iter()
            .filter_map(|(p, s)| platform.process(*p).filter(|i| i.start_ticks == *s))
            .map(|i| i.cpu_ticks)
            .sum()
    };
    let a: Vec<u64> = sets.iter().map(|s| sample(s)).collect();
    let t0 = Instant::now();
    std::thread::sleep(window);
    let b: Vec<u64> = sets.iter().map(|s| sample(s)).collect();
    let secs = t0.elapsed().as_secs_f64();
    a.iter()
        .zip(&b)
        .map(|(a, b)| {
            (secs > 0.0).then(|| {
                b.saturating_sub(*a) as f64 / platform.clock_ticks_per_sec() as f64 / secs * 100.0
            })
        })
        .collect()
}
