//! The `park` companion library: scanning, guards, ledger, kill and resume. The binary in `main.rs`
//! is a thin wrapper around `cli::run`.
//!
//! Layout: `platform` (OS process table seam) and `mux` (multiplexer seam) do I/O; `agent`,
//! `screen`, `transcript`, `guards`, `target` are pure decisions over what they read; `park` and
//! `unpark` are the transactions; `ledger`, `lock`, `archive` own park's files.
pub mod agent;
pub mod archive;
pub mod cli;
pub mod config;
pub mod ctx;
pub mod doctor;
pub mod duration;
pub mod exit;
pub mod fault;
pub mod fsx;
pub mod graveyard;
pub mod graveyard_cli;
pub mod group;
pub mod guards;
pub mod kill;
pub mod ledger;
pub mod lock;
pub mod mux;
pub mod park;
pub mod paths;
pub mod pick;
pub mod platform;
pub mod probe;
pub mod proctree;
pub mod profile;
pub mod protect;
pub mod rebuild;
pub mod recover;
pub mod render;
pub mod scan;
pub mod schema;
pub mod screen;
pub mod servers;
pub mod servers_cli;
pub mod sets;
pub mod target;
pub mod transcript;
pub mod unpark;
pub mod verdict;
pub mod wake;
pub mod wake_cli;
pub mod waker;
pub mod wave;
pub mod worktree;

/// Transcript shapes real agents leave (shared with the integration tests and the bench).
#[cfg(test)]
#[path = "../tests/support/shapes.rs"]
pub(crate) mod shapes;
