//! Test harness shared by park's integration and end-to-end tests (the `e2e` test binary,
//! `tests/tests/e2e/`).
//!
//! It runs the REAL Claude Code, Codex and Qwen Code CLIs offline: each test gets a [`Sandbox`] (throwaway
//! HOME, work dir, PARK_HOME and a private tmux server), a [`MockServer`] (the `mock-llm` binary
//! of this package, answering both model APIs on one local port), and seeded agent homes
//! ([`seed_claude_home`], [`seed_codex_home`]) so both CLIs start straight into their REPL.
//!
//! Contract:
//! * nothing here touches the real user's `~/.claude`, `~/.codex` or tmux server: every agent and
//!   every tmux command runs with HOME inside the sandbox and `tmux -L <unique label> -f /dev/null`;
//! * dropping a [`Sandbox`] kills its tmux server and every process whose environment, cwd or
//!   executable still points into it (agents, Codex's reparented app-server daemon), then removes
//!   the directory; dropping a [`MockServer`] kills the server;
//! * the agent binaries come from `scripts/setup` ([`Agents::locate`] panics with that hint).
//!
//! Typical use (in this package's integration tests prefer `mock_server!(&sb.logs)`, which uses
//! the exact `mock-llm` path Cargo built):
//! ```no_run
//! use park_e2e::*;
//! let sb = Sandbox::new();
//! let mock = MockServer::start(&sb.logs);
//! seed_claude_home(&sb.home, &sb.work, CLAUDE_API_KEY).unwrap();
//! let pane = sb.new_shell_window("t", "claude", &sb.work, &sb.claude_env(&mock));
//! sb.type_line(&pane, "claude");
//! sb.wait_for(&pane, "for shortcuts", std::time::Duration::from_secs(30)).unwrap();
//! ```

/// The harness modules; everything public is also re-exported at the crate root.
pub mod harness {
    pub mod agents;
    pub mod aider;
    pub mod claude;
    pub mod cline;
    pub mod codex;
    pub mod copilot;
    pub mod droid;
    pub mod gemini;
    pub mod kimi;
    pub mod mock;
    pub mod opencode;
    pub mod pi;
    pub mod procs;
    pub mod qwen;
    pub mod real_agent;
    pub mod sandbox;
    pub mod util;
    pub mod zellij;
}

pub use harness::agents::{Agents, CLAUDE_VERSION, CODEX_VERSION};
pub use harness::aider::{
    aider_histories, aider_history, aider_history_of, aider_session_id, seed_aider_home, Aider,
    AIDER_VERSION,
};
pub use harness::claude::{
    claude_encode_cwd, claude_env, claude_session_files, claude_transcript, seed_claude_home,
    CLAUDE_API_KEY, CLAUDE_READY,
};
pub use harness::cline::{
    cline_logged, cline_messages, cline_record, cline_sessions, seed_cline_home, Cline,
    CLINE_VERSION,
};
pub use harness::codex::{
    codex_daemon_pids, codex_env, codex_rollouts, seed_codex_home, CodexSeed, CODEX_API_KEY,
    CODEX_API_KEY_ENV,
};
pub use harness::copilot::{
    copilot_events, copilot_locks, copilot_open_sessions, seed_copilot_home, Copilot,
    COPILOT_VERSION,
};
pub use harness::droid::{
    droid_session, droid_session_cwd, droid_sessions, seed_droid_home, Droid, DROID_VERSION,
};
pub use harness::gemini::{
    gemini_chat_with, gemini_chats, seed_gemini_home, Gemini, GEMINI_VERSION,
};
pub use harness::kimi::{
    kimi_hook_record, kimi_sessions, kimi_wire, seed_kimi_home, Kimi, KIMI_VERSION,
};
pub use harness::mock::MockServer;
pub use harness::opencode::{
    opencode_messages, opencode_sessions, seed_opencode_home, OcCli, Opencode, KILO_VERSION,
    OPENCODE_VERSION,
};
pub use harness::pi::{
    pi_project_dir, pi_record, pi_session_files, pi_sessions, seed_pi_home, Pi, PI_VERSION,
};
pub use harness::procs::{
    descendants, kill_and_reap, pid_alive, processes_referencing, wait_cpu_quiet, wait_gone,
};
pub use harness::qwen::{
    qwen_encode_cwd, qwen_registry, qwen_transcript, seed_qwen_home, Qwen, QWEN_VERSION,
};
pub use harness::real_agent::{real_agent, RealAgent, Spec, Term};
pub use harness::sandbox::{current_uid, Sandbox, SHELL_PROMPT};
pub use harness::util::{poll, sh_quote, uuid_v4, Env, Rng};
pub use harness::zellij::{env_of, layout_tab_panes, server_pid_of, zellij_bin, Zellij};

/// Starts the package's `mock-llm` binary, writing its logs under `$log_dir`.
///
/// Only usable from this package's integration tests, where Cargo sets
/// `CARGO_BIN_EXE_mock-llm` (the macro expands `env!` in the caller's crate).
#[macro_export]
macro_rules! mock_server {
    ($log_dir:expr) => {
        $crate::MockServer::start_with(
            ::std::path::Path::new(env!("CARGO_BIN_EXE_mock-llm")),
            ::std::convert::AsRef::<::std::path::Path>::as_ref($log_dir),
        )
    };
}
