//! Named fault-injection points for crash tests (issue 5 builds the full matrix on this).
//!
//! Contract: `point(name)` does nothing unless `PARK_FAULT=<name>` is set, in which case the process
//! exits at once with status 99 (as if killed), leaving whatever state exists on disk; or
//! `PARK_FAULT_PAUSE=<name>:<ms>` is set, in which case it sleeps there (so a test can change the
//! world between two steps). The variables are read only in debug builds (what the tests run) or
//! with the `fault-injection` feature; a release build compiles the points away.

pub fn point(name: &str) {
    #[cfg(any(test, debug_assertions, feature = "fault-injection"))]
    {
        if std::env::var("PARK_FAULT").is_ok_and(|v| v == name) {
            eprintln!("park: fault injected at {name}");
            std::process::exit(99);
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
