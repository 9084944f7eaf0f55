//! End-to-end tests of park with the REAL OpenCode (1.18.33) and Kilo CLI (7.7.7, its fork),
//! installed by `scripts/setup`, in a private tmux server, talking to `mock-llm`'s Chat
//! Completions API through a `mock` provider: what is OpenCode's own. The contract every agent
//! keeps (the round trip in tmux and zellij, two sessions in one cwd, a hostile flag value, the
//! guards, `/new` rolling back) runs for both in `contract.rs`, with park's plugin installed.
//!
//! What is tested, and why:
//! * without park's plugin a plain `opencode` (`kilo`) is untargetable and says `park integrate
//!   opencode` (`kilo`); nothing is killed or recorded, and its session is the directory's only one.
//!
//! Run: `bash scripts/setup && cargo build -p park && cargo test -p park-e2e --test e2e e2e_opencode:: -- --nocapture`

use crate::common::*;
use park_e2e::harness::real_agent::OpencodeAgent;
use park_e2e::*;
use park_protocol::RowState;
use std::time::Duration;

#[test]
fn without_the_plugin_opencode_is_untargetable_and_the_reason_names_it() {
    untargetable(OcCli::Opencode);
}

#[test]
fn without_the_plugin_kilo_is_untargetable_and_the_reason_names_it() {
    untargetable(OcCli::Kilo);
}

fn untargetable(cli: OcCli) {
    Agents::locate();
    let agent = OpencodeAgent::new(cli);
    let s = agent.spec();
    let sb = Sandbox::new();
    let mock = mock_server!(&sb.logs);
    agent.seed(&sb, &mock);
    install_shims(&sb, None);
    let dir = sb.project_dir("rt");
    let plain = sb.new_shell_window("w", "plain", &dir, &agent.env(&sb, &mock));
    sb.type_line(&plain, s.program);
    ok(sb.wait_for(&plain, s.ready, s.start));
    agent.prompt(&sb, &plain, "hello before the integration", 1);
    let r = wait_row(&sb, &plain, Duration::from_secs(30), |r| {
        r.state == RowState::Untargetable
    });
    let why = r.reason.clone().unwrap_or_default();
    assert!(
        why.contains(&format!("park integrate {}", cli.name())),
        "{r:?}"
    );
    // Its root: the workers under it come and go by themselves.
    let keep = agent.core_tree(r.pid.expect("row pid"));
    let (c, oc, _) = outcome(&sb, &["park", &plain]);
    assert_eq!((c, oc.as_str()), (1, "refused"));
    assert!(keep.iter().all(|&p| pid_alive(p)), "nothing killed");
    assert!(entries(&sb).is_empty(), "nothing recorded");
    let mains: Vec<_> = opencode_sessions(&agent.db(&sb))
        .into_iter()
        .filter(|(_, d, _)| d.ends_with("/rt"))
        .collect();
    assert_eq!(mains.len(), 1, "the plain session, alone: {mains:?}");
    teardown(sb, mock, &[]);
}
