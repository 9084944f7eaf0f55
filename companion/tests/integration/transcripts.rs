//! Transcripts as real agents leave them, end to end through the library: a 60 MB transcript, a
//! last record of megabytes, lone surrogate escapes, invalid UTF-8 and a truncated last line, for
//! Claude Code and Codex. Each is read as the scan reads it (tail window), rendered to Markdown and
//! archived with verification.

use crate::shapes;

use park::agents::transcript::TranscriptInfo;
use park::model::entry::{self, Entry, EntryState, MuxPlace};
use park::store::archive;
use park_protocol::Agent;
use std::io::Write;
use std::path::Path;

const LAST_PROMPT: &str = "LAST PROMPT: now write the migration guide";
const LAST_REPLY: &str = "LAST REPLY: the migration guide is in docs/MIGRATING.md";

fn entry(agent: Agent, sid: &str, transcript: &Path) -> Entry {
    Entry {
        schema: entry::ENTRY_SCHEMA,
        id: entry::entry_id(agent, sid),
        state: EntryState::Parked,
        agent,
        session_id: sid.into(),
        session_source: "status-file".into(),
        cwd: shapes::CWD.into(),
        program: agent.as_str().into(),
        flags: vec![],
        dropped_flags: vec![],
        transcript: Some(transcript.to_string_lossy().into_owned()),
        config_dir: None,
        config_var: None,
        place: MuxPlace {
            kind: "tmux".into(),
            server: "/tmp/tmux-0/default".into(),
            pane: "%1".into(),
            session: "work".into(),
            window_index: 0,
            window_name: "w".into(),
            pane_index: 0,
            title: "t".into(),
            pane_title: "t".into(),
            pane_proc: (0, 0),
        },
        pane_owned: false,
        parked_at: "2026-12-02T00:00:00Z".into(),
        last_active: None,
        bytes: 1,
        uss_bytes: 1,
        pss_bytes: 1,
        anon_bytes: 1,
        freed_bytes: None,
        killed_pids: vec![],
        resumer: None,
        last_error: None,
        handoff_pane: None,
        worktree: None,
        group: None,
        fresh_from: None,
        wake: None,
        agent_version: None,
        shell_path: None,
    }
}

/// How the end of the generated transcript is damaged.
#[derive(Clone, Copy, Debug)]
enum End {
    /// A clean last turn.
    Clean,
    /// The last prompt has a lone surrogate escape, the last reply is 6 MB with invalid UTF-8,
    /// and a half-written record follows.
    Damaged,
}

fn write_transcript(path: &Path, codex: bool, end: End) -> u64 {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let n = shapes::write_big(
        &mut f,
        codex,
        60 << 20,
        "an earlier prompt",
        "an earlier reply",
    )
    .unwrap();
    let t = 40_000;
    let (prompt, reply): (Vec<u8>, Vec<u8>) = match end {
        End::Clean => (
            if codex {
                shapes::codex_prompt(LAST_PROMPT, &shapes::at(t))
            } else {
                shapes::claude_prompt(LAST_PROMPT, &shapes::at(t))
            }
            .into_bytes(),
            if codex {
                shapes::codex_task_complete(LAST_REPLY, &shapes::at(t + 9))
            } else {
                shapes::claude_reply(LAST_REPLY, &shapes::at(t + 9))
            }
            .into_bytes(),
        ),
        End::Damaged => {
            let p = format!("{LAST_PROMPT} SURR");
            let r = format!("{LAST_REPLY} BAD {}", "lorem ipsum ".repeat(6 << 20 >> 4));
            let (p, r) = if codex {
                (
                    shapes::codex_prompt(&p, &shapes::at(t)),
                    shapes::codex_task_complete(&r, &shapes::at(t + 9)),
                )
            } else {
                (
                    shapes::claude_prompt(&p, &shapes::at(t)),
                    shapes::claude_reply(&r, &shapes::at(t + 9)),
                )
            };
            (
                shapes::with_raw(&p, "SURR", b"\\ud83d"),
                shapes::with_raw(&r, "BAD", &[0xff, 0xfe]),
            )
        }
    };
    if codex {
        writeln!(f, "{}", shapes::codex_task_started(&shapes::at(t))).unwrap();
    }
    f.write_all(&prompt).unwrap();
    f.write_all(b"\n").unwrap();
    f.write_all(&reply).unwrap();
    f.write_all(b"\n").unwrap();
    if matches!(end, End::Damaged) {
        let next = shapes::claude_prompt("the next one", &shapes::at(t + 60));
        f.write_all(&next.as_bytes()[..next.len() / 2]).unwrap();
    }
    f.flush().unwrap();
    n
}

fn check(codex: bool, end: End) {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("t.jsonl");
    write_transcript(&src, codex, end);
    let len = std::fs::metadata(&src).unwrap().len();
    assert!(len >= 60 << 20, "{len}");
    let (agent, sid) = if codex {
        (Agent::Codex, shapes::CODEX_SID)
    } else {
        (Agent::Claude, shapes::CLAUDE_SID)
    };
    let label = format!("{agent:?} {end:?}");

    // As the scan reads it: the tail window.
    let info: TranscriptInfo = if codex {
        park::agents::codex::transcript::read_file(&src).unwrap()
    } else {
        park::agents::claude::transcript::read_file(&src).unwrap()
    };
    assert_eq!(info.unsure, None, "{label}");
    assert_eq!(info.session_id.as_deref(), Some(sid), "{label}");
    assert!(!info.turn_open, "{label}: idle, not a turn in flight");
    let last_turn = shapes::at(40_009).parse::<jiff::Timestamp>().unwrap();
    assert_eq!(
        info.last_real_turn,
        Some(last_turn),
        "{label}: idle time from the last reply"
    );
    let want_prompt = match end {
        End::Clean => LAST_PROMPT.to_string(),
        End::Damaged => format!("{LAST_PROMPT} \u{fffd}"),
    };
    assert_eq!(
        info.last_prompt.as_deref(),
        Some(want_prompt.as_str()),
        "{label}"
    );
    assert!(
        info.last_assistant
            .as_deref()
            .is_some_and(|a| a.starts_with(LAST_REPLY)),
        "{label}"
    );
    assert_eq!(
        info.truncated_last_line,
        matches!(end, End::Damaged),
        "{label}"
    );

    // Archived (renders and verifies): the Markdown holds the last prompt and reply.
    let home = dir.path().join("park");
    std::fs::create_dir_all(&home).unwrap();
    let a = archive::archive(&home, &entry(agent, sid, &src), true).expect(&label);
    let md = std::fs::read_to_string(a.dir.join("transcript.md")).unwrap();
    assert!(md.contains(&want_prompt), "{label}");
    assert!(md.contains(LAST_REPLY), "{label}");
    assert!(md.contains("an earlier reply"), "{label}");
    let copy = std::fs::read(a.dir.join("transcript.jsonl")).unwrap();
    assert!(
        copy == std::fs::read(&src).unwrap(),
        "{label}: byte-exact copy"
    );
    assert_eq!(a.tomb.transcript_bytes, len);
    assert_eq!(a.tomb.last_active, Some(last_turn.to_string()), "{label}");
    match end {
        End::Clean => assert!(a.tomb.warnings.is_empty(), "{label}: {:?}", a.tomb.warnings),
        End::Damaged => assert!(
            a.tomb.warnings.len() == 1 && a.tomb.warnings[0].contains("truncated record"),
            "{label}: {:?}",
            a.tomb.warnings
        ),
    }
}

#[test]
fn claude_sixty_mb_clean() {
    check(false, End::Clean);
}

#[test]
fn claude_sixty_mb_with_a_damaged_six_mb_last_reply() {
    check(false, End::Damaged);
}

#[test]
fn codex_sixty_mb_clean() {
    check(true, End::Clean);
}

#[test]
fn codex_sixty_mb_with_a_damaged_six_mb_last_reply() {
    check(true, End::Damaged);
}
