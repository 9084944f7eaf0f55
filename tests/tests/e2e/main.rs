//! park-e2e's one test binary: every integration and end-to-end test of park (real tmux, real
//! zellij, the real Claude Code and Codex CLIs against `mock-llm`, the fake agent), one module per
//! former test file. One binary links once instead of nineteen times (issue 20).
//!
//! Select a module with a filter: `cargo test -p park-e2e --test e2e -- e2e_claude::`; one test
//! by (part of) its name as before: `cargo test -p park-e2e --test e2e pick_first_frame`.
//!
//! `common` drives the `park` binary (reached from the modules as `crate::common`); the harness
//! (sandbox, mock server, seeded agent homes) is the `park_e2e` library.

mod common;

mod agents_smoke;
mod bulk;
mod cli_surface;
mod contract;
mod e2e_aider;
mod e2e_auto;
mod e2e_claude;
mod e2e_claude_bg;
mod e2e_claude_modes;
mod e2e_cline;
mod e2e_codex;
mod e2e_droid;
mod e2e_faults;
mod e2e_gemini;
mod e2e_graveyard;
mod e2e_kimi;
mod e2e_opencode;
mod e2e_pi;
mod e2e_protect;
mod e2e_zellij;
mod e2e_zellij_more;
mod fake_agent_selftest;
mod install;
mod park_fake;
mod picker_tmux;
mod races;
mod rebuild;
mod release;
mod restore;
mod resurrect;
mod servers;
mod tmux_plugin;
mod tpm_one_step;
mod wake;
