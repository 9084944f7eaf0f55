//! Plain data with pure rules and no I/O, shared by every stage: ledger entries (`entry`),
//! wake-ups (`wake`, `probe`), the autopilot's settings (`auto`).
pub mod auto;
pub mod entry;
pub mod probe;
pub mod wake;
