//! The `park` companion library: scanning, guards, ledger, kill and resume.
pub mod screen;
pub mod transcript;
