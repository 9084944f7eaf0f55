//! The picker's state machine lives in the shared crate (`park_protocol::picker`) so the zellij
//! plugin runs the very same grouping, cursor and toggle rules; this module re-exports it.

pub use park_protocol::picker::*;
