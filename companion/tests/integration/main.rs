//! park's one integration-test binary: the library driven from outside, one module per area
//! (issue 20: one link instead of six). Select a module with a filter:
//! `cargo test -p park --test integration injection::`.
//!
//! `shapes` (transcripts in the shapes real agents leave) lives in `tests/support/shapes.rs`,
//! where the library's own unit tests include it by `#[path]` too; the modules reach it as
//! `crate::shapes`. Fixtures are read from `$CARGO_MANIFEST_DIR/tests/fixtures/<agent>/`.

#[path = "../support/shapes.rs"]
mod shapes;

mod cli_checks;
mod fuzz;
mod fuzz_deep;
mod guards;
mod injection;
mod protect;
mod transcripts;
