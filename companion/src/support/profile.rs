//! Opt-in phase timings: `PARK_PROFILE=1 park ls` prints, on stderr, how long each phase of the
//! command took (`scripts/bench --profile N` uses it to show where a scan's time goes).
//!
//! Contract: when the variable is unset, a span costs one relaxed load and records nothing, and
//! nothing is ever printed. Phases may overlap (some run on threads side by side), so their sum
//! may exceed the command's wall time; each line is one phase's own wall time.
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

static STATE: AtomicU8 = AtomicU8::new(0); // 0 unknown, 1 off, 2 on
static PHASES: Mutex<Vec<(&'static str, Duration)>> = Mutex::new(Vec::new());

fn on() -> bool {
    match STATE.load(Ordering::Relaxed) {
        1 => false,
        2 => true,
        _ => {
            let v = std::env::var_os("PARK_PROFILE").is_some_and(|v| !v.is_empty() && v != "0");
            STATE.store(if v { 2 } else { 1 }, Ordering::Relaxed);
            v
        }
    }
}

/// Records its phase's wall time when dropped.
pub struct Span(Option<(&'static str, Instant)>);

impl Drop for Span {
    fn drop(&mut self) {
        if let Some((name, t0)) = self.0.take() {
            let d = t0.elapsed();
            if let Ok(mut p) = PHASES.lock() {
                p.push((name, d));
            }
        }
    }
}

/// Starts timing `name` (a static label such as `"scan.capture"`).
pub fn span(name: &'static str) -> Span {
    Span(on().then(|| (name, Instant::now())))
}

/// Prints the recorded phases, in the order they ended, when profiling is on.
pub fn report() {
    if !on() {
        return;
    }
    let phases = PHASES.lock().map(|p| p.clone()).unwrap_or_default();
    for (name, d) in phases {
        eprintln!(
            "park profile: {name:<22} {:>8.2} ms",
            d.as_secs_f64() * 1000.0
        );
    }
}
