//! What only aider has (the contract cases are in `contract`): no session id, one chat history
//! file per repo unless each aider names its own, and a chat's files that a resume must carry.
//! Real aider 0.86.2 against `mock-llm`, in tmux.
//!
//! * `two_aiders_on_the_repo_history_are_untargetable`: two aiders started plainly in one
//!   project write one `.aider.chat.history.md`: both rows are untargetable with the way out
//!   (`--chat-history-file`), a park of either is refused and kills nothing; once the second
//!   exits, the first stays untargetable (the second's start is in its history, and which start
//!   was the first one's cannot be told).
//! * `files_added_in_the_chat_come_back`: `/add` and `/read-only` in a parked aider come back
//!   as `--file` / `--read` of the resume, which shows them in the chat again.

use crate::common::*;
use park_e2e::harness::real_agent::{tree, RealAgent};
use park_e2e::*;
use park_protocol::{RowState, Status};
use std::time::Duration;

const SECS: fn(u64) -> Duration = Duration::from_secs;

fn world() -> (Sandbox, MockServer, Box<dyn RealAgent>) {
    Agents::locate();
    let agent = park_e2e::harness::real_agent::real_agent("aider");
    let sb = Sandbox::new();
    let mock = mock_server!(&sb.logs);
    agent.seed(&sb, &mock);
    install_shims(&sb, None);
    (sb, mock, agent)
}

fn start(
    sb: &Sandbox,
    mock: &MockServer,
    a: &dyn RealAgent,
    name: &str,
    dir: &std::path::Path,
    cmd: &str,
) -> String {
    let pane = sb.new_shell_window("w", name, dir, &a.env(sb, mock));
    sb.type_line(&pane, cmd);
    ok(sb.wait_for(&pane, a.spec().ready, a.spec().start));
    pane
}

#[test]
fn two_aiders_on_the_repo_history_are_untargetable() {
    let (sb, mock, a) = world();
    let dir = sb.project_dir("aider-shared");
    let one = start(&sb, &mock, a.as_ref(), "one", &dir, "aider");
    a.prompt(&sb, &one, "the first aider speaks", 1);
    let live = wait_row(&sb, &one, SECS(60), |r| {
        r.state == RowState::Live && r.status == Status::Idle && r.session_id.is_some()
    });
    assert_eq!(
        live.session_source.as_deref(),
        Some("history-file"),
        "{live:?}"
    );
    let pid = live.pid.unwrap();
    let two = start(&sb, &mock, a.as_ref(), "two", &dir, "aider");
    for pane in [&one, &two] {
        let r = wait_row(&sb, pane, SECS(60), |r| r.state == RowState::Untargetable);
        assert!(
            r.reason
                .as_deref()
                .is_some_and(|w| w.contains("--chat-history-file")),
            "{pane}: {r:?}"
        );
        let (c, oc, why) = outcome(&sb, &["park", pane]);
        assert_eq!((c, oc.as_str()), (1, "refused"), "{pane}: {why:?}");
    }
    assert!(tree(pid).iter().all(|&p| pid_alive(p)), "nothing killed");
    assert!(entries(&sb).is_empty(), "nothing recorded");
    // The second one goes; its start stays in the history the first one writes.
    sb.type_line(&two, "/exit");
    let r = wait_row(&sb, &one, SECS(60), |r| {
        r.state == RowState::Untargetable
            && r.reason
                .as_deref()
                .is_some_and(|w| w.contains("another aider"))
    });
    assert!(r.session_id.is_none());
    teardown(sb, mock, &[]);
}

#[test]
fn files_added_in_the_chat_come_back() {
    let (sb, mock, a) = world();
    let dir = sb.project_dir("aider-files");
    std::fs::write(dir.join("notes.txt"), "notes\n").unwrap();
    std::fs::write(dir.join("spec.txt"), "spec\n").unwrap();
    let pane = start(
        &sb,
        &mock,
        a.as_ref(),
        "files",
        &dir,
        "aider --chat-history-file .aider.chat.files.md",
    );
    a.prompt(&sb, &pane, "a turn before the files", 1);
    sb.type_line(&pane, "/add notes.txt");
    ok(sb.wait_for(&pane, "Added notes.txt to the chat", SECS(30)));
    ok(sb.wait_for(&pane, a.spec().ready, SECS(30)));
    sb.type_line(&pane, "/read-only spec.txt");
    ok(sb.wait_for(&pane, "to read-only files", SECS(30)));
    ok(sb.wait_for(&pane, a.spec().ready, SECS(30)));
    let live = wait_row(&sb, &pane, SECS(60), |r| {
        r.state == RowState::Live && r.status == Status::Idle && r.session_id.is_some()
    });
    let sid = live.session_id.clone().unwrap();
    let pid = live.pid.unwrap();
    let (c, oc, why) = park_when_settled(&sb, &pane, SECS(60), a.spec().settling);
    assert_eq!(
        (c, oc.as_str()),
        (0, "parked"),
        "{why:?}\n{}",
        sb.capture(&pane)
    );
    let (c, oc, why) = outcome(&sb, &["unpark", &pane]);
    assert_eq!(
        (c, oc.as_str()),
        (0, "unparked"),
        "{why:?}\n{}",
        sb.capture(&pane)
    );
    ok(sb.wait_for(&pane, a.spec().ready, a.spec().start));
    let back = wait_row(&sb, &pane, SECS(60), |r| {
        r.state == RowState::Live && r.status == Status::Idle && r.session_id.is_some()
    });
    assert_eq!(back.session_id.as_deref(), Some(sid.as_str()));
    let argv = argv_of(back.pid.unwrap());
    let canon = std::fs::canonicalize(&dir).unwrap();
    let pair = |f: &str, name: &str| {
        let want = canon.join(name).to_string_lossy().into_owned();
        argv.windows(2).any(|w| w[0] == f && w[1] == want)
    };
    assert!(pair("--file", "notes.txt"), "{argv:?}");
    assert!(pair("--read", "spec.txt"), "{argv:?}");
    assert!(a.resumes(&argv, &sid), "{argv:?}");
    // aider shows them in the chat again (editable, and under `Readonly:`).
    let screen = sb.capture(&pane);
    assert!(
        screen.contains("notes.txt") && screen.contains("Readonly:"),
        "{screen}"
    );
    teardown(sb, mock, &[pid]);
}
