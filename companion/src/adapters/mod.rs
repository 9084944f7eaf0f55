//! The edges park talks to: the OS process table (`platform`), the multiplexers (`mux`: tmux,
//! zellij, and the set of servers park serves), wake-up probes (`probe`: commands and HTTP) and git
//! (`worktree`). Each hides its program behind a small trait or function so everything above is
//! testable with fakes; nothing outside this folder knows a tmux format string or a /proc path.
pub mod mux;
pub mod platform;
pub mod probe;
pub mod worktree;
