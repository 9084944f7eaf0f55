//! End-to-end transcript protection with the REAL Claude Code CLI (2.1.197) against the mock:
//! `park archive --all` archives every transcript (a second run copies nothing), an archived
//! session survives the agent deleting its transcript and `park unpark` resurrects it; `park
//! recover` rebuilds a prompts-only tombstone from the `history.jsonl` the real CLI wrote, which
//! lists and searches but refuses to resume.

use crate::common::*;
use park_e2e::*;
use park_protocol::{RowState, Status};

#[test]
fn real_claude_sessions_are_archived_recovered_and_resurrected() {
    let sb = Sandbox::new();
    let mock = mock_server!(&sb.logs);
    seed_claude_home(&sb.home, &sb.work, CLAUDE_API_KEY).unwrap();
    install_shims(&sb, None);
    let env = sb.claude_env(&mock);
    let dir = sb.project_dir("hist");
    let pane = sb.new_shell_window("w", "hist", &dir, &env);
    sb.type_line(&pane, "claude");
    sb.wait_for(&pane, CLAUDE_READY, SECS(60)).unwrap();
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
    // The real format: display, pastedContents, timestamp (ms), project, sessionId.
    let line: serde_json::Value =
        serde_json::from_str(h.lines().find(|l| l.contains("quokka")).unwrap()).unwrap();
    assert_eq!(line["sessionId"], sid.as_str());
    assert_eq!(line["project"], dir.to_string_lossy().as_ref());
    assert!(line["timestamp"].as_i64().unwrap() > 1_600_000_000_000);

    // archive --all while it runs: a live session near cleanup is archived, read only.
    // Claude draws the reply before it writes the turn: its transcript holds only bookkeeping
    // records (title, modes; no cwd, no conversation) until the turn's records land together
    // (~70 ms later here). Aged before that, it reads as empty, and the write refreshes its
    // age; a transcript untouched for weeks is never in that state, so wait for the turn.
    let transcript = claude_transcript(&sb.home, &dir, &sid);
    poll(SECS(20), || {
        std::fs::read_to_string(&transcript)
            .ok()
            .filter(|t| t.contains("recover the quokka prompt") && t.contains("PARKTEST-OK"))
    })
    .expect("Claude writes the answered turn to its transcript");
    let json = |args: &[&str], env: &[(&str, &str)]| -> (i32, serde_json::Value) {
        let mut a = args.to_vec();
        a.push("--json");
        let o = park_env(&sb, &a, env);
        (code(&o), serde_json::from_slice(&o.stdout).unwrap())
    };
    // Aged, archived, archived again: the second run finds it unchanged. Claude may still append
    // a turn's closing records after the reply is on screen and in the file (seen under load:
    // the second run read the refreshed age as "not-due"); then the steps saw another file than
    // the one aged, and are taken again, on the grown transcript. The check is the file's own
    // mtime, still the aged one after both runs, never a pause.
    let aged = std::time::SystemTime::now() - SECS(25 * 86_400);
    let mut attempts = 0;
    let (first, second) = loop {
        attempts += 1;
        let f = std::fs::File::options()
            .write(true)
            .open(&transcript)
            .unwrap();
        f.set_modified(aged).unwrap();
        drop(f);
        let first = json(&["archive", "--all"], &[]);
        let second = json(&["archive", "--all"], &[]);
        let mtime = std::fs::metadata(&transcript).unwrap().modified().unwrap();
        let untouched = mtime < std::time::SystemTime::now() - SECS(86_400);
        if untouched || attempts == 5 {
            break (first, second);
        }
        eprintln!("Claude wrote its transcript during attempt {attempts}: again");
    };
    let (c, v) = first;
    assert_eq!(c, 0, "{v}");
    assert_eq!(v["archived"], 1, "{v}");
    let (_, v) = second;
    assert_eq!(
        (v["archived"].as_u64(), v["unchanged"].as_u64()),
        (Some(1 - 1), Some(1)),
        "{v}"
    );

    // The agent goes away and its cleanup deletes the transcript.
    let pids = claude_pids_for(&sb.home, &sid);
    assert_eq!(kill_and_reap(&pids, SECS(5)), Vec::<u32>::new());
    std::fs::remove_file(&transcript).unwrap();

    // recover, in a park home that never archived it: a prompts-only tombstone from the real
    // history.jsonl, listed, searchable, never resumed.
    let fresh = sb.root.join("park-home-2");
    std::fs::create_dir_all(&fresh).unwrap();
    let fresh_s = fresh.to_string_lossy().into_owned();
    let other = [("PARK_HOME", fresh_s.as_str())];
    let (c, v) = json(&["recover"], &other);
    assert_eq!(c, 0, "{v}");
    let it = v["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["session_id"] == sid.as_str())
        .unwrap()
        .clone();
    assert_eq!(it["outcome"], "recovered", "{v}");
    let (_, s) = json(&["search", "quokka"], &other);
    assert_eq!(s["rows"][0]["session_id"], sid.as_str());
    assert_eq!(s["rows"][0]["prompts_only"], true);
    let (c, v) = json(&["unpark", &sid], &other);
    assert_eq!(c, 1);
    assert!(
        v["results"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("no transcript to resume"),
        "{v}"
    );

    // In the home that archived it, recover leaves the real copy alone, and unpark resurrects it
    // (a new window, the transcript put back from the archive).
    let (_, v) = json(&["recover"], &[]);
    assert_eq!(v["recovered"], 0, "{v}");
    let (c, v) = json(&["unpark", &sid], &[]);
    let r = &v["results"][0];
    assert_eq!((c, r["outcome"].as_str()), (0, Some("unparked")), "{v}");
    let reason = r["reason"].as_str().unwrap_or("");
    assert!(
        reason.contains("resurrected") && reason.contains("restored the transcript"),
        "{reason}"
    );
    assert!(transcript.is_file());
    poll(SECS(60), || {
        (claude_pids_for(&sb.home, &sid).len() == 1).then_some(())
    })
    .expect("the resurrected session runs");
}
