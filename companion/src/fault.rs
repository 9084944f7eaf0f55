//! Named fault-injection points for crash tests (issue 5 builds the full matrix on this).
//!
//! Contract: `point(name)` does nothing unless `PARK_FAULT=<name>` is set, in which case the process
//! exits at once with status 99 (as if killed), leaving whatever state exists on disk. The variable
//! is read only when the binary was built with the `fault-injection` feature or in tests.

pub fn point(name: &str) {
    #[cfg(any(test, feature = "fault-injection"))]
    {
        if std::env::var("PARK_FAULT").is_ok_and(|v| v == name) {
            eprintln!("park: fault injected at {name}");
            std::process::exit(99);
        }
    }
    #[cfg(not(any(test, feature = "fault-injection")))]
    {
        let _ = name;
    }
}
