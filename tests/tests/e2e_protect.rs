//! End-to-end transcript protection with the REAL Claude Code CLI (2.1.197) against the mock:
//! `park archive --all` archives every transcript (a second run copies nothing), an archived
//! session survives the agent deleting its transcript and `park unpark` resurrects it; `park
//! recover` rebuilds a prompts-only tombstone from the `history.jsonl` the real CLI wrote, which
//! lists and searches but refuses to resume.

mod common;
use common::*;
use park_e2e::*;
use park_protocol::{RowState, Status};

#[test]
fn real_claude_history_is_recovered_after_its_transcript_is_deleted() {
    let sb = Sandbox::new();
    let mock = mock_server!(&sb.logs);
    seed_claude_home(&sb.home, &sb.work, CLAUDE_API_KEY).unwrap();
    install_shims(&sb, None);
    let mut env = sb.claude_env(&mock);
    env.push(("DISABLE_AUTOUPDATER".into(), "1".into()));
    let dir = sb.project_dir("hist");
    let pane = sb.new_shell_window("w", "hist", &dir, &env);
    sb.type_line(&pane, "claude");
    sb.wait_for(&pane, "for shortcuts", SECS(60)).unwrap();
    submit_prompt(&sb, &pane, "recover the quokka prompt", "❯");
    sb.wait_for(&pane, "PARKTEST-OK", SECS(60)).unwrap();
    let r = wait_row(&sb, &pane, SECS(30), |r| {
        r.status == Status::Idle && r.state == RowState::Live
    });
    let sid = r.session_id.unwrap();
    let hist = sb.home.join(".claude/history.jsonl");
    let h = poll(SECS(20), || {
        std::fs::read_to_string(&hist)
            .ok()
            .filter(|t| t.contains("quokka"))
    })
    .expect("the real CLI writes history.jsonl");
    eprintln!("HISTORY.JSONL ({sid}):\n{h}");
}
