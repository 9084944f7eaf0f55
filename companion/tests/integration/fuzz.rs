//! Fuzz targets, written as proptest properties: CI has only the stable toolchain, so cargo-fuzz
//! (nightly, libFuzzer) is impractical; proptest gives bounded, reproducible runs with shrinking.
//!
//! Every parser and classifier park feeds untrusted bytes to: the Claude transcript and Codex
//! rollout record parsers, both screen classifiers and the ANSI stripper, the flag whitelists and
//! resume argv, session-id validation, the ledger loader, the target parser, durations. Each must
//! never panic and must keep its documented property. Inputs are both arbitrary and structured
//! (plausible JSONL records, fragments of real captured screens spliced with escapes and control
//! bytes).
//!
//! Cases per target: `PARK_FUZZ_CASES` (default 2000). Each target prints `fuzz <name>: <N> cases`.
//! Longer runs: `scripts/fuzz 200000`.

use park::agents::{self, claude, Agent};
use park::model::entry::valid_entry_id;
use park::store::ledger::Ledger;
use park::{agents::screen, agents::transcript, guards::target, support::duration};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::path::Path;

fn cases() -> u32 {
    std::env::var("PARK_FUZZ_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000)
}

/// Runs `f` over `strategy` for the configured number of cases and reports the count.
fn run<S: Strategy>(name: &str, strategy: S, f: impl Fn(S::Value) -> Result<(), TestCaseError>)
where
    S::Value: std::fmt::Debug,
{
    let n = cases();
    let mut runner = TestRunner::new(Config {
        cases: n,
        failure_persistence: None,
        ..Config::default()
    });
    let count = std::sync::atomic::AtomicU64::new(0);
    let t0 = std::time::Instant::now();
    runner
        .run(&strategy, |v| {
            count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            f(v)
        })
        .unwrap_or_else(|e| panic!("fuzz {name}: {e}"));
    eprintln!(
        "fuzz {name}: {} cases in {:.2?}",
        count.load(std::sync::atomic::Ordering::Relaxed),
        t0.elapsed()
    );
}

fn hostile_char() -> impl Strategy<Value = char> {
    prop_oneof![
        any::<char>(),
        prop::sample::select(vec![
            ';', '$', '(', ')', '`', '\'', '"', '\\', '\n', '\r', '\t', '\u{1b}', '\u{7}', '\u{0}',
            '/', '.', '-', '=', '❯', '›', '─', '\u{a0}', '\u{202e}', '\u{200b}', '界', '✻', '•',
        ]),
    ]
}

fn hostile_string(max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(hostile_char(), 0..max).prop_map(|v| v.into_iter().collect())
}

/// A plausible JSONL record of either agent, with random values in the right places.
fn record() -> impl Strategy<Value = String> {
    let ty = prop::sample::select(vec![
        "user",
        "assistant",
        "system",
        "summary",
        "ai-title",
        "last-prompt",
        "session_meta",
        "turn_context",
        "response_item",
        "event_msg",
        "compacted",
    ]);
    let text = hostile_string(40);
    let id = prop_oneof![
        Just("35c98558-0920-4e29-b81c-9304ca43fccb".to_string()),
        hostile_string(40)
    ];
    let num = prop_oneof![
        any::<i64>().prop_map(|n| n.to_string()),
        Just("1e999".into())
    ];
    (ty, text, id, num, any::<bool>()).prop_map(|(ty, text, id, num, nested)| {
        let content = if nested {
            serde_json::json!([{"type": "text", "text": text}, {"type": "tool_use", "name": text, "input": {}}])
        } else {
            serde_json::json!(text)
        };
        let v = serde_json::json!({
            "type": ty, "sessionId": id, "cwd": text, "timestamp": "2026-12-02T10:00:00.000Z",
            "message": {"role": ty, "content": content},
            "payload": {"type": ty, "id": id, "cwd": text, "role": ty, "content": content},
            "title": text, "n": num,
        });
        v.to_string()
    })
}

fn jsonl() -> impl Strategy<Value = Vec<u8>> {
    (
        prop::collection::vec(record(), 0..12),
        prop::collection::vec(any::<u8>(), 0..40),
        any::<bool>(),
    )
        .prop_map(|(recs, junk, cut)| {
            let mut b = recs.join("\n").into_bytes();
            if cut && b.len() > 3 {
                let n = b.len() / 2;
                b.truncate(n);
            }
            b.push(b'\n');
            b.extend(junk);
            b
        })
}

#[test]
fn fuzz_transcript_parsers() {
    let check = |b: &[u8]| -> Result<(), TestCaseError> {
        for info in [
            park::agents::claude::transcript::parse(b),
            park::agents::codex::transcript::parse(b),
        ] {
            if let Some(id) = &info.session_id {
                // What park records as a session id is always a valid one.
                prop_assert!(transcript::valid_session_id(id).is_some(), "{id:?}");
            }
            prop_assert!(info.records + info.bad_lines <= b.split(|&c| c == b'\n').count());
        }
        // A prefix (a transcript being written) parses too.
        let _ = park::agents::claude::transcript::parse(&b[..b.len() / 2]);
        let _ = park::agents::codex::transcript::parse(&b[..b.len() / 3]);
        Ok(())
    };
    run(
        "transcript-bytes",
        prop::collection::vec(any::<u8>(), 0..2000),
        |b| check(&b),
    );
    run("transcript-jsonl", jsonl(), |b| check(&b));
}

#[test]
fn fuzz_session_ids_and_paths() {
    run("session-id", hostile_string(48), |s| {
        if let Some(id) = transcript::valid_session_id(&s) {
            prop_assert_eq!(id.len(), 36);
            prop_assert!(id.chars().all(|c| c.is_ascii_hexdigit() || c == '-'));
            prop_assert!(id.chars().all(|c| !c.is_ascii_uppercase()));
        }
        let dir = park::agents::claude::transcript::project_dir_name(&s);
        prop_assert!(!dir.contains('/') && dir != "." && dir != "..", "{dir:?}");
        // A recorded cwd is absolute (restorable refuses anything else).
        let p = claude::transcript_path(Path::new("/cfg"), &format!("/{s}"), &s);
        prop_assert!(p.starts_with("/cfg/projects"), "{p:?}");
        prop_assert!(!p.components().any(|c| c == std::path::Component::ParentDir));
        prop_assert_eq!(
            p.parent().and_then(|d| d.parent()),
            Some(Path::new("/cfg/projects"))
        );
        if valid_entry_id(&s) {
            prop_assert!(!s.contains('/') && s != "." && s != ".." && s.len() <= 128);
        }
        Ok(())
    });
}

/// Fragments of real captured screens, spliced with escapes, control bytes and wide characters.
fn screen_text() -> impl Strategy<Value = String> {
    // The screen captures and the transcript samples.
    let fixtures: Vec<String> = crate::fuzz_deep::agent_fixture_files()
        .into_iter()
        .filter(|p| {
            p.extension().is_some_and(|x| x == "txt")
                || p.to_string_lossy().ends_with("-samples.jsonl")
        })
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .flat_map(|t| t.lines().map(String::from).collect::<Vec<_>>())
        .filter(|l| !l.trim().is_empty())
        .collect();
    let frag = prop::sample::select(fixtures);
    let noise = prop_oneof![
        hostile_string(8),
        Just("\u{1b}[7m".to_string()),
        Just("\u{1b}[38;2;1;2;3m".to_string()),
        Just("\u{1b}]0;title\u{7}".to_string()),
        Just("\u{1b}[".to_string()),
        Just("\n".to_string()),
    ];
    prop::collection::vec(prop_oneof![3 => frag, 1 => noise], 0..40).prop_map(|v| v.join("\n"))
}

#[test]
fn fuzz_screen_classifiers() {
    let check = |s: String| -> Result<(), TestCaseError> {
        let plain = screen::strip_ansi(&s);
        prop_assert!(!plain.contains('\u{1b}'), "ESC survived strip_ansi");
        for r in [
            park::agents::claude::screen::read(&plain),
            park::agents::codex::screen::read(&s),
        ] {
            if let Some(d) = &r.draft {
                prop_assert!(r.composer_seen, "a draft without a composer: {d:?}");
            }
        }
        let _ = screen::bare_shell_prompt(&plain);
        Ok(())
    };
    run("screen-arbitrary", hostile_string(400), check);
    run("screen-fragments", screen_text(), check);
}

fn argv() -> impl Strategy<Value = Vec<String>> {
    let flag = prop::sample::select(vec![
        "--dangerously-skip-permissions",
        "--model",
        "--model=",
        "--permission-mode",
        "--add-dir",
        "--resume",
        "-r",
        "--session-id",
        "-c",
        "--continue",
        "-m",
        "-s",
        "--sandbox",
        "-a",
        "--search",
        "resume",
        "--no-daemon",
        "-C",
        "--config",
        "--",
    ]);
    prop::collection::vec(
        prop_oneof![flag.prop_map(String::from), hostile_string(20)],
        0..10,
    )
}

#[test]
fn fuzz_flag_whitelists_and_resume_argv() {
    let id = "35c98558-0920-4e29-b81c-9304ca43fccb";
    run("flags", argv(), |args| {
        for kind in agents::all() {
            let spec = kind.spec();
            let agent = spec.agent;
            let (kept, _dropped) = spec.flags(&args);
            // Idempotent: what was kept passes the whitelist again, unchanged.
            let again = spec.flags(&kept).0;
            prop_assert_eq!(&again, &kept);
            // No session flag survives, and every value token is plain.
            for (i, k) in kept.iter().enumerate() {
                prop_assert!(
                    !matches!(
                        k.as_str(),
                        "--resume"
                            | "-r"
                            | "--session-id"
                            | "-c"
                            | "--continue"
                            | "-s"
                            | "--session"
                            | "--fork"
                    ) || !matches!(agent, Agent::Opencode | Agent::Kilo) && k == "-s",
                    "{k}"
                );
                if !k.starts_with('-') {
                    prop_assert!(
                        agents::plain_value(k),
                        "value {k:?} (after {:?})",
                        kept.get(i.wrapping_sub(1))
                    );
                }
            }
            let argv = spec.resume_argv(agent.as_str(), id, &kept);
            match spec.resume {
                // The flags name the session (aider's history file), not the id: a resume only
                // when they name this one, the restore flag last.
                agents::spec::Resume::Restore { flag, id_in_flags } => {
                    if id_in_flags(&kept).as_deref() == Some(id) {
                        prop_assert_eq!(argv.last().map(String::as_str), Some(flag));
                    } else {
                        prop_assert!(argv.is_empty(), "{argv:?}");
                    }
                }
                _ => prop_assert_eq!(argv.iter().filter(|a| a.as_str() == id).count(), 1),
            }
        }
        let _ = agents::classify(&args);
        Ok(())
    });
}

#[test]
fn fuzz_ledger_loader() {
    let home = tempfile::tempdir().unwrap();
    let l = Ledger::new(home.path().join("h"));
    l.ensure().unwrap();
    let id = "claude-35c98558-0920-4e29-b81c-9304ca43fccb";
    let path = l.parked_dir().join(format!("{id}.json"));
    let json_like = (record(), any::<bool>()).prop_map(|(r, entry_shape)| {
        if entry_shape {
            format!(r#"{{"schema":1,"id":"{id}","state":"parked","agent":"claude","junk":{r}}}"#)
        } else {
            r
        }
    });
    let bytes = prop_oneof![
        prop::collection::vec(any::<u8>(), 0..600),
        json_like.prop_map(String::into_bytes)
    ];
    run("ledger-loader", bytes, |b| {
        std::fs::write(&path, &b).unwrap();
        let _ = l.load(id);
        let (_, _) = l.all();
        // Loading never deletes or rewrites what it could not read.
        prop_assert_eq!(std::fs::read(&path).unwrap(), b);
        Ok(())
    });
}

#[test]
fn fuzz_target_parser_and_durations() {
    run("target", hostile_string(80), |s| {
        match target::parse(&s) {
            Ok(target::Target::SessionId(id)) => {
                prop_assert!(transcript::valid_session_id(&id).is_some())
            }
            Ok(target::Target::Pane(p)) => prop_assert!(!p.chars().any(|c| c.is_control())),
            Ok(_) => prop_assert!(!s.chars().any(|c| c.is_control()) && !s.is_empty()),
            Err(_) => {}
        }
        if let Ok(d) = duration::parse(&s) {
            prop_assert!(s
                .trim()
                .chars()
                .all(|c| c.is_ascii_digit() || "smhdw".contains(c)));
            let _ = d;
        }
        Ok(())
    });
}
