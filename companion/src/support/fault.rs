//! Named fault-injection points for crash tests (issue 5 builds the full matrix on this).
//!
//! Contract: `point(name)` does nothing unless `PARK_FAULT=<name>` is set, in which case the process
//! exits at once with status 99 (as if killed), leaving whatever state exists on disk; or
//! `PARK_FAULT_PAUSE=<name>:<ms>` is set, in which case it sleeps there (so a test can change the
//! world between two steps); or the file `$PARK_HOME/test-fault` holds `<name>`, in which case the
//! first park process of any kind to reach that point (a hand-off in a pane, a verifier: processes
//! a test cannot give an environment to) removes the file and exits 99 — a one-shot fault, so the
//! retry that follows runs clean. All of it is read only in debug builds (what the tests run) or
//! with the `fault-injection` feature; a release build compiles the points away.
//!
//! The points, in transaction order. park: `after-claim`, `after-archive`, `before-kill`,
//! `before-sigterm`, `after-sigterm`, `mid-kill`, `before-finalize`, `after-finalize`.
//! unpark: `before-resume-sent`, `after-resume-sent` (the sender), `before-exec` (in the pane),
//! `after-verify`, `before-teardown` (the verifier). rebuild: `after-adopt` (a lost session in the
//! ledger, still lost in the journal), `after-window` (a window rebuilt, its entries not yet
//! re-pointed), `after-repoint` (re-pointed, not yet resumed); then the unpark's.

/// Every named point, for the crash tests' matrix.
pub const POINTS: &[&str] = &[
    "after-claim",
    "after-archive",
    "before-kill",
    "before-sigterm",
    "after-sigterm",
    "mid-kill",
    "before-finalize",
    "after-finalize",
    "before-resume-sent",
    "after-resume-sent",
    "before-exec",
    "after-verify",
    "before-teardown",
    "after-adopt",
    "after-window",
    "after-repoint",
];

pub fn point(name: &str) {
    #[cfg(any(test, debug_assertions, feature = "fault-injection"))]
    {
        if std::env::var("PARK_FAULT").is_ok_and(|v| v == name) {
            eprintln!("park: fault injected at {name}");
            std::process::exit(99);
        }
        if let Ok(home) = crate::support::paths::park_home() {
            let f = home.join("test-fault");
            if std::fs::read_to_string(&f).is_ok_and(|v| v.trim() == name)
                && std::fs::remove_file(&f).is_ok()
            {
                eprintln!("park: one-shot fault injected at {name}");
                std::process::exit(99);
            }
        }
        if let Ok(v) = std::env::var("PARK_FAULT_PAUSE") {
            if let Some((n, ms)) = v.split_once(':') {
                if n == name {
                    let ms: u64 = ms.parse().unwrap_or(0);
                    std::thread::sleep(std::time::Duration::from_millis(ms));
                }
            }
        }
    }
    #[cfg(not(any(test, debug_assertions, feature = "fault-injection")))]
    {
        let _ = name;
    }
}

/// Test builds can switch one guard or safety rule off (`PARK_TEST_DISABLE_GUARD=<name>`) so the
/// mutation script can show each has a test that fails without it. Release builds never read the
/// variable. Every rule calls it as `fault::disabled("<rule>")`; it lives here, at the bottom of
/// the import graph, so a rule anywhere can be switched off without importing the guards.
pub(crate) fn disabled(name: &str) -> bool {
    #[cfg(any(test, feature = "guard-mutation"))]
    {
        std::env::var("PARK_TEST_DISABLE_GUARD").is_ok_and(|v| v.split(',').any(|g| g == name))
    }
    #[cfg(not(any(test, feature = "guard-mutation")))]
    {
        let _ = name;
        false
    }
}
