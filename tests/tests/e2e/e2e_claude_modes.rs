//! End-to-end checks of what Claude Code 2.1.332 (the pin since issue 30; these began as drift
//! checks beside 2.1.197) writes and draws unlike the versions park's readers were first built
//! on, in a private tmux server against the mock model server, with a throwaway HOME: its local
//! commands are `local_command` system records, its footer names the permission mode (`⏵⏵ auto
//! mode on (shift+tab to cycle)`, `manual mode on`), its first start shows a permission-modes
//! notice, and it keeps the terminal title at `✳ Claude Code`.

use crate::common::*;
use park_e2e::*;
use park_protocol::{Agent, Row, RowState, Status};
use std::path::Path;

struct Next {
    sb: Sandbox,
    mock: MockServer,
}

impl Next {
    fn new() -> Next {
        let sb = Sandbox::new();
        let mock = mock_server!(&sb.logs);
        seed_claude_home(&sb.home, &sb.work, CLAUDE_API_KEY).unwrap();
        install_shims(&sb, None);
        Next { sb, mock }
    }

    fn env(&self) -> Env {
        self.sb.claude_env(&self.mock)
    }

    /// A shell pane in project `name` running `claude`, one turn answered; its row is idle.
    fn start(&self, name: &str, first_prompt: &str) -> (String, String) {
        let dir = self.sb.project_dir(name);
        let pane = self.sb.new_shell_window("w", name, &dir, &self.env());
        self.sb.type_line(&pane, "claude");
        let first = self.sb.wait_for(&pane, CLAUDE_READY, SECS(60)).unwrap();
        assert!(
            first.contains(&format!("Claude Code v{CLAUDE_VERSION}")),
            "{first}"
        );
        submit_prompt(&self.sb, &pane, first_prompt, "❯");
        self.sb
            .wait_for(
                &pane,
                &format!(r"(?s){}.*PARKTEST-OK", regex::escape(first_prompt)),
                SECS(60),
            )
            .unwrap();
        let r = wait_row(&self.sb, &pane, SECS(30), |r| {
            r.status == Status::Idle && r.state == RowState::Live
        });
        (pane, r.session_id.expect("session id"))
    }
}

/// The session id Claude's live-session file names for the pane's process, once it is not `old`.
fn new_session_id(home: &Path, old: &str) -> String {
    poll(SECS(30), || {
        claude_session_files(home)
            .into_iter()
            .filter(|(pid, _)| pid_alive(*pid))
            .filter_map(|(_, v)| v.get("sessionId")?.as_str().map(str::to_string))
            .find(|s| s != old)
    })
    .unwrap_or_else(|| panic!("Claude never named a session other than {old}"))
}

/// Waits until the pane's row names `sid` and is idle. Any read in between that blames the
/// transcript for a turn in flight fails at once: nothing runs, and Claude's status file says
/// idle (issue 34, item 4: 2.1.332 read busy for the 20 s the transcript counts as fresh).
fn idle_without_a_transcript_turn(sb: &Sandbox, pane: &str, sid: &str) -> Row {
    let mut last = None;
    let got = poll(SECS(30), || {
        let r = row(sb, pane)?;
        last = Some(r.clone());
        if r.session_id.as_deref() != Some(sid) {
            return None;
        }
        let why = r.reason.as_deref().unwrap_or("");
        assert!(
            !(r.status == Status::Busy && why.contains("transcript")),
            "read busy from the transcript with nothing running: {r:?}\nstatus files: {:?}\nscreen:\n{}",
            claude_session_files(&sb.home),
            sb.capture(pane)
        );
        (r.status == Status::Idle).then_some(r)
    });
    got.unwrap_or_else(|| {
        panic!(
            "row for {pane} never idle on {sid}; last: {last:?}\nscreen:\n{}",
            sb.capture(pane)
        )
    })
}

#[test]
fn real_claude_is_idle_right_after_clear_and_when_resumed_after_it() {
    let c = Next::new();
    let sb = &c.sb;
    let (pane, before) = c.start("clear", "hello before the clear");

    submit_prompt(sb, &pane, "/clear", "❯");
    let cleared = new_session_id(&sb.home, &before);
    let transcript = claude_transcript(&sb.home, &sb.work.join("clear"), &cleared);
    // Settled: the command's output record is on disk (the new file's last message record).
    poll(SECS(30), || {
        read_text(&transcript)
            .contains("\"subtype\":\"local_command\"")
            .then_some(())
    })
    .unwrap_or_else(|| panic!("no local_command record in {}", transcript.display()));
    sb.wait_for(&pane, CLAUDE_READY, SECS(10)).unwrap();
    let r = idle_without_a_transcript_turn(sb, &pane, &cleared);
    assert_eq!(r.state, RowState::Live);

    // Exit and resume the cleared session: the transcript still ends with the /clear.
    submit_prompt(sb, &pane, "/exit", "❯");
    sb.wait_for(&pane, r"park-test\$\s*$", SECS(30)).unwrap();
    sb.type_line(&pane, &format!("claude --resume {cleared}"));
    sb.wait_for(&pane, CLAUDE_READY, SECS(60)).unwrap();
    let pid = wait_row(sb, &pane, SECS(30), |r| {
        r.state == RowState::Live && r.session_id.as_deref() == Some(cleared.as_str())
    })
    .pid
    .unwrap();
    assert!(
        argv_of(pid)
            .join(" ")
            .contains(&format!("--resume {cleared}")),
        "{:?}",
        argv_of(pid)
    );
    idle_without_a_transcript_turn(sb, &pane, &cleared);
}

/// 2.1.332's screens (the permission-modes notice on first start, the mode footer, a renamed
/// session's titled rule, manual mode after shift+tab) are read as Claude's at rest, and a
/// session parks and comes back under the same id.
#[test]
fn real_claude_parks_and_unparks_through_its_new_screens() {
    let c = Next::new();
    let sb = &c.sb;
    let (pane, sid) = c.start("modes", "hello from the newer claude");
    let live = row(sb, &pane).unwrap();
    assert_eq!(live.agent, Agent::Claude);
    assert_eq!(live.agent_version.as_deref(), Some(CLAUDE_VERSION));
    assert_eq!(live.session_source.as_deref(), Some("status-file"));
    // 2.1.332 keeps the terminal title at `✳ Claude Code`: the row shows the session's own name
    // (its status file's `name`) instead (issue 34 item 15).
    let pane_title = sb
        .tmux(&["display", "-p", "-t", &pane, "#{pane_title}"])
        .unwrap();
    assert!(pane_title.contains("Claude Code"), "{pane_title}");
    assert!(!live.title.contains("Claude Code"), "{live:?}");

    submit_prompt(sb, &pane, "/rename next-named", "❯");
    sb.wait_for(&pane, r"(?m) next-named ─\s*$", SECS(10))
        .unwrap();
    sb.send_keys(&pane, &["BTab"]);
    sb.wait_for(&pane, "manual mode on", SECS(10)).unwrap();
    let r = idle_without_a_transcript_turn(sb, &pane, &sid);
    assert!(r.title.contains("next-named"), "{r:?}");

    let (code, oc, why) = park_when_settled(sb, &pane, SECS(40), &["% CPU"]);
    assert_eq!((code, oc.as_str()), (0, "parked"), "{why:?}");
    assert_eq!(row(sb, &pane).unwrap().state, RowState::Parked);
    let (code, out) = action(sb, &["unpark", &pane]);
    assert_eq!(
        (code, out.results[0].outcome.as_str()),
        (0, "unparked"),
        "{:?}\n{}",
        out.results[0].reason,
        sb.capture(&pane)
    );
    sb.wait_for(&pane, r"(?m) next-named ─\s*$", SECS(60))
        .unwrap();
    let back = idle_without_a_transcript_turn(sb, &pane, &sid);
    assert_eq!(back.state, RowState::Live);
    assert_eq!(claude_pids_for(&sb.home, &sid).len(), 1);
    submit_prompt(sb, &pane, "after the unpark", "❯");
    sb.wait_for(&pane, r"(?s)after the unpark.*PARKTEST-OK", SECS(60))
        .unwrap();
}
