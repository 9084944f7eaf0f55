//! End-to-end graveyard with the REAL Claude Code CLI: park archives the transcript (raw + rendered
//! Markdown + tombstone); after the agent's own transcript is deleted, unpark puts the archived copy
//! back and the conversation continues in it; `ls --archived` and `search` agree field by field; a
//! note without a terminal never waits; a resurrected session reads as running again (↑).

use crate::common::*;
use park_e2e::*;
use park_protocol::{ArchivedOutput, RowState, SearchOutput, Status, TombState};
use std::time::{Duration, Instant};

fn archived(sb: &Sandbox) -> ArchivedOutput {
    let o = park(sb, &["ls", "--archived", "--json"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    serde_json::from_slice(&o.stdout).expect("ls --archived --json parses")
}

fn search(sb: &Sandbox, args: &[&str]) -> SearchOutput {
    let mut a = vec!["search"];
    a.extend_from_slice(args);
    a.push("--json");
    let o = park(sb, &a);
    assert_eq!(code(&o), 0, "{}", text(&o));
    serde_json::from_slice(&o.stdout).expect("search --json parses")
}

#[test]
fn real_claude_transcript_deleted_after_park_is_restored_from_the_archive() {
    let sb = Sandbox::new();
    let mock = mock_server!(&sb.logs);
    seed_claude_home(&sb.home, &sb.work, CLAUDE_API_KEY).unwrap();
    install_shims(&sb, None);
    let env = sb.claude_env(&mock);
    let dir = sb.project_dir("gy");
    let pane = sb.new_shell_window("w", "gy", &dir, &env);
    sb.type_line(&pane, "claude");
    sb.wait_for(&pane, CLAUDE_READY, SECS(60)).unwrap();
    submit_prompt(&sb, &pane, "graveyard zebra prompt", "❯");
    sb.wait_for(&pane, "PARKTEST-OK", SECS(60)).unwrap();
    let r = wait_row(&sb, &pane, SECS(30), |r| {
        r.status == Status::Idle && r.state == RowState::Live
    });
    let sid = r.session_id.unwrap();
    let transcript = claude_transcript(&sb.home, &dir, &sid);

    // Park (retry while only the CPU corroboration refuses: Claude settles after a reply).
    let deadline = Instant::now() + SECS(30);
    let parked = loop {
        let (c, out) = action(&sb, &["park", &pane]);
        let r = out.results.into_iter().next().unwrap();
        if c == 0
            || !r.reason.as_deref().is_some_and(|w| w.contains("% CPU"))
            || Instant::now() > deadline
        {
            break r;
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    assert_eq!(parked.outcome.as_str(), "parked", "{:?}", parked.reason);

    // The archive: raw copy byte for byte, a Markdown conversation holding the prompt, a tombstone.
    let adir = sb.park_home.join("archive").join(&sid);
    let raw = std::fs::read(adir.join("transcript.jsonl")).unwrap();
    // Claude may append a record or two while it exits: the archived copy is a prefix of the file.
    let now = std::fs::read(&transcript).unwrap();
    assert!(
        raw.len() > 1000 && now.starts_with(&raw),
        "archived {} B of {} B",
        raw.len(),
        now.len()
    );
    let md = std::fs::read_to_string(adir.join("transcript.md")).unwrap();
    assert!(md.contains("graveyard zebra prompt"), "{md}");
    assert!(md.contains("PARKTEST-OK"), "the reply is rendered: {md}");
    eprintln!(
        "MEASURE archive: transcript {} B, archived raw {} B, markdown {} B",
        std::fs::metadata(&transcript).unwrap().len(),
        raw.len(),
        md.len()
    );

    // ls --archived and search read one accessor: the same row, field by field.
    let ls = archived(&sb);
    let row = ls
        .rows
        .iter()
        .find(|r| r.session_id == sid)
        .unwrap()
        .clone();
    assert_eq!(row.state, TombState::Parked);
    assert!(row.summary.contains("graveyard zebra"), "{row:?}");
    let found = search(&sb, &["ZEBRA"]);
    assert_eq!(found.rows, vec![row.clone()], "search and ls disagree");
    assert!(
        found.hits[0].fields.contains(&"summary".to_string()),
        "{:?}",
        found.hits
    );
    let full = search(&sb, &["PARKTEST-OK", "--full-text"]);
    assert_eq!(full.rows.len(), 1);
    assert!(full.hits[0].fields.contains(&"conversation".to_string()));
    assert!(search(&sb, &["no-such-word-anywhere"]).rows.is_empty());

    // A note without a terminal and without text prints the notes and returns: it never waits.
    let t0 = Instant::now();
    let o = park_env(&sb, &["note", &sid], &[("EDITOR", "sleep 600")]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(
        t0.elapsed() < SECS(20),
        "a no-tty note waited on the editor"
    );
    let o = park(&sb, &["note", &sid, "follow-up", "in", "PR 42"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let by_note = search(&sb, &["pr 42"]);
    assert_eq!(by_note.rows.len(), 1);
    assert_eq!(by_note.hits[0].fields, ["notes"]);
    assert!(std::fs::read_to_string(adir.join("NOTES.md"))
        .unwrap()
        .contains("PR 42"));

    // The agent's cleanup (or a person) deletes its transcript: unpark puts the archived copy back.
    std::fs::remove_file(&transcript).unwrap();
    let gone = archived(&sb);
    assert!(
        !gone
            .rows
            .iter()
            .find(|r| r.session_id == sid)
            .unwrap()
            .transcript_present
    );
    let (c, out) = action(&sb, &["unpark", &pane]);
    let r = &out.results[0];
    assert_eq!(
        (c, r.outcome.as_str()),
        (0, "unparked"),
        "{:?}\n{}",
        r.reason,
        sb.capture(&pane)
    );
    assert!(
        r.reason
            .as_deref()
            .is_some_and(|x| x.contains("restored the transcript")),
        "unpark says what it did: {:?}",
        r.reason
    );
    let back = wait_row(&sb, &pane, SECS(30), |r| r.state == RowState::Live);
    assert_eq!(back.session_id.as_deref(), Some(sid.as_str()));
    assert!(transcript.is_file());
    sb.wait_for(&pane, CLAUDE_READY, SECS(30)).unwrap();
    submit_prompt(&sb, &pane, "after the restore", "❯");
    poll(SECS(30), || {
        std::fs::read_to_string(&transcript)
            .ok()
            .filter(|t| t.contains("after the restore") && t.contains("graveyard zebra prompt"))
    })
    .expect("the conversation continues in the restored transcript, history included");
    assert_eq!(claude_pids_for(&sb.home, &sid).len(), 1);

    // Resurrected: every view shows it running again, notes kept.
    let up = archived(&sb);
    let r = up.rows.iter().find(|r| r.session_id == sid).unwrap();
    assert_eq!((r.state, r.marker.as_str()), (TombState::Running, "↑"));
    assert!(r.notes.contains("PR 42"));
    let s = search(&sb, &["zebra"]);
    assert_eq!(s.rows[0].state, TombState::Running);
}
