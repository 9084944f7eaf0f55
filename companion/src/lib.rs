//! The `park` companion library: one read of the world, pure decisions over it, and the few
//! operations that change it. The binary in `main.rs` is a thin wrapper around `cli::run`.
//!
//! The folders are the data flow, each depending only on the ones after it:
//!
//! ```text
//! cli → (rows | ops) → guards → scan → agents → model
//!              store/ (park's own files)   adapters/ (tmux, zellij, /proc, probes, git)
//!              support/ (fs, fault injection, profiling, durations) — usable by all
//! ```
//!
//! `ctx` (the validated context every command runs with) and `exit` (typed exit statuses) are
//! the two crate-wide seams.
pub mod adapters;
pub mod agents;
pub mod ctx;
pub mod exit;
pub mod guards;
pub mod model;
pub mod ops;
pub mod rows;
pub mod scan;
pub mod store;
pub mod support;

/// Transcript shapes real agents leave (shared with the integration tests and the bench).
#[cfg(test)]
#[path = "../tests/support/shapes.rs"]
pub(crate) mod shapes;
