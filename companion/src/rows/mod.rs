//! The annotated accessors every view reads (`ls`, the picker, the zellij plugin through
//! `--json`): live and parked rows (`ls`) and the servers of their windows (`servers`), and where each parked entry's pane is now (`slots`). Reads only:
//! nothing here kills, types or writes.
pub mod archived;
pub mod ls;
pub mod servers;
pub mod slots;
