//! End-to-end tests of park with the REAL Kimi Code (2.1.0, installed by `scripts/setup`) in a
//! private tmux server, offline against `mock-llm`'s Chat Completions API: only what is Kimi's
//! own. The contract every agent keeps (the round trip in tmux and zellij, two sessions in one cwd,
//! the guards, `/new` rolling back) runs for Kimi in `contract.rs`.
//!
//! What is tested, and why:
//! * Kimi's process titles itself `kimi-code` (no argv): without `park integrate kimi` its row is
//!   untargetable, the reason names the integration, and nothing is parked; a Kimi started before
//!   the install stays untargetable (its config was read at its start), and the reason says to
//!   restart it; `park integrate kimi` appends its two `[[hooks]]` to the user's `config.toml` and
//!   `--remove` gives the file back byte for byte;
//! * with it, `park show` says which launch flags a resume loses (the argv is gone).
//!
//! Run: `bash scripts/setup && cargo build -p park && cargo test -p park-e2e --test e2e e2e_kimi:: -- --nocapture`

use crate::common::*;
use park_e2e::harness::real_agent::KimiAgent;
use park_e2e::*;
use park_protocol::{RowState, Status};
use std::time::Duration;

#[test]
fn without_the_integration_kimi_is_untargetable_and_a_resume_loses_its_flags() {
    Agents::locate();
    let agent = KimiAgent(Kimi::locate());
    let s = agent.spec().clone();
    let sb = Sandbox::new();
    let mock = mock_server!(&sb.logs);
    agent.seed(&sb, &mock);
    install_shims(&sb, None);
    let env = agent.env(&sb, &mock);
    let config = sb.home.join(".kimi-code/config.toml");
    let users = std::fs::read(&config).unwrap();

    // No integration: untargetable, named, refused, nothing killed.
    let dir = sb.project_dir("kimi-n");
    let pane = sb.new_shell_window("w", "kimi-n", &dir, &env);
    sb.type_line(&pane, "kimi --plan");
    ok(sb.wait_for(&pane, s.ready, s.start));
    agent.first_turns(&sb, &pane, "hello without the hook");
    let r = wait_row(&sb, &pane, Duration::from_secs(30), |r| {
        r.state == RowState::Untargetable
    });
    let why = r.reason.clone().unwrap_or_default();
    assert!(why.contains("park integrate kimi"), "{r:?}");
    let tree = tree_of(r.pid.expect("row pid"));
    let (c, oc, why) = outcome(&sb, &["park", &pane]);
    assert_eq!((c, oc.as_str()), (1, "refused"), "{why:?}");
    assert!(tree.iter().all(|&p| pid_alive(p)), "nothing killed");
    assert!(entries(&sb).is_empty());

    // Installed now: this Kimi read its config before, so it stays untargetable, and says why.
    let o = park(&sb, &["integrate", "kimi"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let with = std::fs::read_to_string(&config).unwrap();
    assert!(
        with.starts_with(std::str::from_utf8(&users).unwrap()) && with.contains(" hook kimi\""),
        "{with}"
    );
    let r = wait_row(&sb, &pane, Duration::from_secs(30), |r| {
        r.reason.as_deref().is_some_and(|w| w.contains("restarted"))
    });
    assert_eq!(r.state, RowState::Untargetable, "{r:?}");

    // A Kimi started after the install is bound by its hook; `park show` names the lost flags.
    let dir2 = sb.project_dir("kimi-y");
    let pane2 = sb.new_shell_window("w", "kimi-y", &dir2, &env);
    sb.type_line(&pane2, "kimi --plan");
    ok(sb.wait_for(&pane2, s.ready, s.start));
    agent.first_turns(&sb, &pane2, "hello with the hook");
    let r2 = wait_row(&sb, &pane2, Duration::from_secs(60), |r| {
        r.state == RowState::Live && r.status == Status::Idle && r.session_id.is_some()
    });
    assert_eq!(r2.session_source.as_deref(), Some("hook"), "{r2:?}");
    assert_pinned_version(&r2);
    let o = park(&sb, &["show", &pane2]);
    let shown = text(&o);
    assert!(
        shown.contains("flags lost:") && shown.contains("--plan"),
        "{shown}"
    );

    // Removed: the user's file, byte for byte.
    let o = park(&sb, &["integrate", "--remove", "kimi"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert_eq!(std::fs::read(&config).unwrap(), users);
    teardown(sb, mock, &[]);
}
