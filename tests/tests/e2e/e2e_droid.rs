//! End-to-end tests of what is Factory Droid's own (the REAL `droid` 0.225.2 against `mock-llm`);
//! everything every agent keeps is in `contract::droid`.
//!
//! * Without `park integrate droid` a Droid pane is untargetable, and the reason names the
//!   integration: Droid says nothing about its session from outside (no per-process file, no
//!   open transcript, no variable), and park never guesses it from the newest session of the
//!   folder. `park integrate droid` writes only `~/.factory/hooks.json` (the seeded
//!   `settings.json` is left as it was), and `--remove` takes exactly its hooks out again.

use crate::common::*;
use park_e2e::harness::real_agent::DroidAgent;
use park_e2e::*;
use park_protocol::RowState;
use std::time::Duration;

#[test]
fn without_the_integration_droid_is_untargetable_and_the_reason_names_it() {
    Agents::locate();
    let agent = DroidAgent(Droid::locate());
    let sb = Sandbox::new();
    let mock = mock_server!(&sb.logs);
    agent.seed(&sb, &mock);
    install_shims(&sb, None);
    let s = agent.spec();
    let dir = sb.project_dir("n");
    let pane = sb.new_shell_window("w", "n", &dir, &agent.env(&sb, &mock));
    sb.type_line(&pane, "droid");
    ok(sb.wait_for(&pane, s.ready, s.start));
    agent.prompt(&sb, &pane, "hello without the hook", 1);
    let r = wait_row(&sb, &pane, Duration::from_secs(30), |r| {
        r.state == RowState::Untargetable
    });
    let why = r.reason.clone().unwrap_or_default();
    assert!(why.contains("park integrate droid"), "{r:?}");
    assert!(r.session_id.is_none(), "{r:?}");
    let tree = tree_of(r.pid.expect("row pid"));
    let (c, oc, why) = outcome(&sb, &["park", &pane]);
    assert_eq!((c, oc.as_str()), (1, "refused"), "{why:?}");
    assert!(tree.iter().all(|&p| pid_alive(p)), "nothing killed");
    assert!(entries(&sb).is_empty());
    let o = park(&sb, &["integrate"]);
    assert!(
        text(&o).contains("droid") && text(&o).contains("not installed"),
        "{}",
        text(&o)
    );
    let read = |f: &str| std::fs::read_to_string(sb.home.join(".factory").join(f)).unwrap();
    let settings = read("settings.json");
    let o = park(&sb, &["integrate", "droid"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(read("hooks.json").contains("hook droid"));
    assert_eq!(read("settings.json"), settings, "settings.json untouched");
    let o = park(&sb, &["integrate", "--remove", "droid"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(!read("hooks.json").contains("hook droid"));
    teardown(sb, mock, &[]);
}
