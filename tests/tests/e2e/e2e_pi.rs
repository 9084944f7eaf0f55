//! End-to-end tests of park with the REAL pi (1.6.0), installed by `scripts/setup`, in a private
//! tmux server, talking to `mock-llm`'s Chat Completions API through a `mock` provider: what is
//! pi's own. The contract every agent keeps (the round trip in tmux and zellij, two sessions in one
//! cwd, a hostile flag value, the guards, `/new` rolling back) runs in `contract.rs`, with park's
//! extension installed.
//!
//! What is tested, and why:
//! * pi overwrites its argv with its title, so without park's extension nothing outside the
//!   process names its session: a plain `pi` (even one started with `--session <id>`, which is
//!   how park resumes it) is untargetable and says `park integrate pi`; nothing is killed or
//!   recorded, although its session file is the directory's only one.
//!
//! Run: `bash scripts/setup && cargo build -p park && cargo test -p park-e2e --test e2e e2e_pi:: -- --nocapture`

use crate::common::*;
use park_e2e::harness::real_agent::{tree, PiAgent};
use park_e2e::*;
use park_protocol::RowState;
use std::time::Duration;

#[test]
fn without_the_extension_pi_is_untargetable_and_the_reason_names_it() {
    Agents::locate();
    let agent = PiAgent(Pi::locate());
    let s = agent.spec();
    let sb = Sandbox::new();
    let mock = mock_server!(&sb.logs);
    agent.seed(&sb, &mock);
    install_shims(&sb, None);
    let dir = sb.project_dir("plain");
    let plain = sb.new_shell_window("w", "plain", &dir, &agent.env(&sb, &mock));
    sb.type_line(&plain, s.program);
    ok(sb.wait_for(&plain, s.ready, s.start));
    agent.prompt(&sb, &plain, "hello before the integration", 1);
    let sessions = pi_sessions(&sb.home, &dir);
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    let sid = sessions[0].1.clone();
    let untargetable = |pane: &str| {
        let r = wait_row(&sb, pane, Duration::from_secs(30), |r| {
            r.state == RowState::Untargetable
        });
        let why = r.reason.clone().unwrap_or_default();
        assert!(why.contains("park integrate pi"), "{r:?}");
        assert_eq!(r.session_id, None, "{r:?}");
        let keep = tree(r.pid.expect("row pid"));
        let (c, oc, _) = outcome(&sb, &["park", pane]);
        assert_eq!((c, oc.as_str()), (1, "refused"));
        assert!(keep.iter().all(|&p| pid_alive(p)), "nothing killed");
        assert!(entries(&sb).is_empty(), "nothing recorded");
    };
    untargetable(&plain);
    // Started on its session by id, the way park resumes it: argv still says nothing outside.
    sb.send_keys(&plain, &["C-d"]);
    ok(sb.wait_for(&plain, r"park-test\$\s*$", Duration::from_secs(20)));
    sb.type_line(&plain, &format!("{} --session {sid}", s.program));
    ok(sb.wait_for(&plain, s.ready, s.start));
    untargetable(&plain);
    assert_eq!(pi_sessions(&sb.home, &dir).len(), 1, "no other session");
    teardown(sb, mock, &[]);
}
