//! End-to-end tests of park with the REAL Cline CLI (3.0.65), installed by `scripts/setup`, in a
//! private tmux server, talking to `mock-llm`'s Chat Completions API: what is Cline's own. The
//! contract every agent keeps runs for it in `contract.rs`.
//!
//! What is tested, and why:
//! * Cline's sessions run in a shared hub daemon (`cline --cline-hub-daemon`) that outlives every
//!   TUI: the first TUI starts it as its own child, so it can sit in the pane's tree; a park kills
//!   the pane's TUI and never the hub, says so with the hub's pid, and a hub serves the resumed
//!   TUI;
//! * after `/new` the pane shows a new session that Cline logs only at its first prompt: until
//!   then the row is untargetable (never the session before), then it is bound to the new one.
//!
//! Run: `bash scripts/setup && cargo build -p park && cargo test -p park-e2e --test e2e e2e_cline:: -- --nocapture`

use crate::common::*;
use park_e2e::harness::real_agent::{real_agent, tree};
use park_e2e::*;
use park_protocol::{RowState, Status};
use std::time::Duration;

fn hubs() -> Vec<u32> {
    let mut v: Vec<u32> = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|d| d.file_name().to_str()?.parse::<u32>().ok())
        .filter(|p| {
            std::fs::read(format!("/proc/{p}/cmdline"))
                .is_ok_and(|c| c.split(|&b| b == 0).any(|a| a == b"--cline-hub-daemon"))
        })
        .collect();
    v.sort();
    v
}

#[test]
fn the_hub_outlives_the_park_and_a_new_session_binds_only_at_its_first_prompt() {
    let agent = real_agent("cline");
    let s = agent.spec().clone();
    let sb = Sandbox::new();
    let mock = mock_server!(&sb.logs);
    agent.seed(&sb, &mock);
    install_shims(&sb, None);
    let dir = sb.project_dir("hub");
    let pane = sb.new_shell_window("w", "hub", &dir, &agent.env(&sb, &mock));
    sb.type_line(&pane, s.program);
    ok(sb.wait_for(&pane, s.ready, s.start));
    agent.prompt(&sb, &pane, "hello to the hub", 1);
    let live = wait_row(&sb, &pane, Duration::from_secs(60), |r| {
        r.state == RowState::Live && r.status == Status::Idle && r.session_id.is_some()
    });
    let sid = live.session_id.clone().unwrap();
    let pid = live.pid.unwrap();
    let hub = hubs();
    assert!(!hub.is_empty(), "a hub daemon serves the TUI");
    // The first TUI starts the hub as its own child (in a session of its own): it may sit in
    // the pane's process tree, and a park still never kills it.
    let whole = tree(pid);
    let pane_tree: Vec<u32> = whole.iter().copied().filter(|p| !hub.contains(p)).collect();
    // The hub this TUI started (run alone, it starts one); under a parallel run the hub may be
    // another sandbox's, which that sandbox's teardown ends at any time.
    let ours: Vec<u32> = whole.iter().copied().filter(|p| hub.contains(p)).collect();

    // Retried while the TUI settles after its reply (CPU under load).
    let (c, oc, why) = park_when_settled(&sb, &pane, Duration::from_secs(60), s.settling);
    assert_eq!((c, oc.as_str()), (0, "parked"), "{why:?}");
    let why = why.unwrap_or_default();
    // Said whenever a hub runs at park time (ours always does).
    assert!(
        ours.is_empty() || why.contains("hub daemon keeps running"),
        "{why}"
    );
    assert!(pane_tree.iter().all(|&p| !pid_alive(p)), "the TUI is gone");
    assert!(
        ours.iter().all(|&h| pid_alive(h)),
        "the hub lives: {ours:?}"
    );

    let (c, oc, why) = outcome(&sb, &["unpark", &pane]);
    assert_eq!((c, oc.as_str()), (0, "unparked"), "{why:?}");
    ok(sb.wait_for(&pane, s.ready, s.start));
    let back = wait_row(&sb, &pane, Duration::from_secs(60), |r| {
        r.state == RowState::Live && r.session_id.is_some()
    });
    assert_eq!(back.session_id.as_deref(), Some(sid.as_str()));
    // One hub serves every Cline TUI of the machine (port 25463, whatever the HOME): under a
    // parallel run another sandbox's teardown may replace it, so only its presence is asserted.
    assert!(!hubs().is_empty(), "a hub serves the resumed TUI");

    // `/new`: the start screen, the old session still in the log. Untargetable, never `sid`.
    agent.send(&sb, &pane, s.new_session);
    ok(sb.wait_for(&pane, "What can I do for you", Duration::from_secs(20)));
    let r = wait_row(&sb, &pane, Duration::from_secs(30), |r| {
        r.state == RowState::Untargetable
    });
    assert!(r.session_id.is_none(), "{r:?}");
    assert!(
        r.reason.as_deref().unwrap_or_default().contains("/new"),
        "{r:?}"
    );
    let (c, oc, _) = outcome(&sb, &["park", &pane]);
    assert_eq!((c, oc.as_str()), (1, "refused"));
    // Its first prompt logs the new session: bound to it.
    agent.prompt(&sb, &pane, "the new session speaks", 1);
    let now = wait_row(&sb, &pane, Duration::from_secs(60), |r| {
        r.state == RowState::Live && r.session_id.is_some()
    });
    assert_ne!(now.session_id.as_deref(), Some(sid.as_str()), "{now:?}");
    teardown(sb, mock, &pane_tree);
}
