//! Codex CLI's transcript reader: a rollout `rollout-….jsonl` to a [`TranscriptInfo`], by the
//! shared kit's rules ([`crate::agents::transcript`]). The session is the first
//! `session_meta.payload.id`; the cwd the latest `turn_context.cwd`, else `session_meta`'s; a
//! `task_complete` is also a real turn. `turn_open`: a `task_started` after the last
//! `task_complete` / `turn_aborted`.

use std::io;
use std::path::Path;

use jiff::Timestamp;
use serde_json::Value;

use crate::agents::transcript::{
    bump, for_each_record, non_empty, read_file_capped, str_of, timestamp_of, valid_session_id,
    TranscriptInfo, TAIL_CAP,
};

/// Openings of user-role items that the harness injects (environment, instructions), not the
/// human.
const HARNESS_PREFIXES: &[&str] = &[
    "<environment_context>",
    "<user_instructions>",
    "<permissions instructions>",
    "<skills_instructions>",
    "<collaboration_mode>",
    "<turn_aborted>",
    "<user_shell_command>",
    "<subagent_notification>",
    "# AGENTS.md instructions",
];

/// The human-written text of a `response_item` user message, if any.
pub(crate) fn user_text(payload: &Value) -> Option<String> {
    let items = payload.get("content")?.as_array()?;
    let provenance: Vec<Option<&str>> = payload
        .get("internal_chat_message_metadata_passthrough")
        .and_then(|m| m.get("content_item_metadata"))
        .and_then(Value::as_array)
        .map(|md| {
            md.iter()
                .map(|e| e.get("provenance").and_then(|p| str_of(p, "type")))
                .collect()
        })
        .unwrap_or_default();
    let mut texts = Vec::new();
    for (k, item) in items.iter().enumerate() {
        let Some(text) = str_of(item, "text") else {
            continue;
        };
        let harness = matches!(
            provenance.get(k).copied().flatten(),
            Some("harness" | "skills")
        ) || HARNESS_PREFIXES
            .iter()
            .any(|p| text.trim_start().starts_with(p));
        if !harness {
            texts.push(text);
        }
    }
    non_empty(&texts.join("\n"))
}

/// Joins the `text` fields of `items` of the given `type`s.
pub(crate) fn texts(items: Option<&Value>, types: &[&str]) -> Option<String> {
    let items = items?.as_array()?;
    let texts: Vec<&str> = items
        .iter()
        .filter(|i| str_of(i, "type").is_some_and(|t| types.contains(&t)))
        .filter_map(|i| str_of(i, "text"))
        .collect();
    non_empty(&texts.join("\n"))
}

#[derive(Default)]
struct State {
    info: TranscriptInfo,
    meta_cwd: Option<String>,
    ctx_cwd: Option<String>,
}

impl State {
    fn real_user(&mut self, ts: Option<Timestamp>, text: Option<String>) {
        bump(&mut self.info.last_real_turn, ts);
        if let Some(text) = text {
            self.info.first_prompt.get_or_insert_with(|| text.clone());
            self.info.last_prompt = Some(text);
        }
    }

    fn feed(&mut self, v: &Value) {
        let ts = timestamp_of(v);
        let payload = v.get("payload").unwrap_or(&Value::Null);
        let ptype = str_of(payload, "type").unwrap_or("");
        match str_of(v, "type").unwrap_or("") {
            "session_meta" => {
                // The first session_meta is the file's own session (a fork may copy others).
                if self.info.session_id.is_none() {
                    self.info.session_id = str_of(payload, "id")
                        .or_else(|| str_of(payload, "session_id"))
                        .and_then(valid_session_id);
                }
                if self.meta_cwd.is_none() {
                    self.meta_cwd = str_of(payload, "cwd").and_then(non_empty);
                }
            }
            "turn_context" => {
                if let Some(cwd) = str_of(payload, "cwd").and_then(non_empty) {
                    self.ctx_cwd = Some(cwd);
                }
            }
            "response_item" if ptype == "message" => match str_of(payload, "role") {
                Some("user") => {
                    if let Some(text) = user_text(payload) {
                        self.real_user(ts, Some(text));
                    }
                }
                Some("assistant") => {
                    bump(&mut self.info.last_real_turn, ts);
                    if let Some(t) = texts(payload.get("content"), &["output_text", "text"]) {
                        self.info.last_assistant = Some(t);
                    }
                }
                _ => {} // developer / system: harness
            },
            "event_msg" => match ptype {
                "task_started" => self.info.turn_open = true,
                "task_complete" => {
                    self.info.turn_open = false;
                    bump(&mut self.info.last_real_turn, ts);
                    if let Some(t) = str_of(payload, "last_agent_message").and_then(non_empty) {
                        self.info.last_assistant = Some(t);
                    }
                }
                "turn_aborted" => self.info.turn_open = false,
                "item_completed" => {
                    let item = payload.get("item").unwrap_or(&Value::Null);
                    if str_of(item, "type") == Some("UserMessage") {
                        let text = texts(item.get("content"), &["text", "input_text"]);
                        self.real_user(ts, text);
                    }
                }
                // Older rollouts: the prompt and reply as plain event messages.
                "user_message" => {
                    let text = str_of(payload, "message").and_then(non_empty);
                    self.real_user(ts, text);
                }
                "agent_message" => {
                    bump(&mut self.info.last_real_turn, ts);
                    if let Some(t) = str_of(payload, "message").and_then(non_empty) {
                        self.info.last_assistant = Some(t);
                    }
                }
                _ => {}
            },
            _ => {}
        }
    }
}

/// Parses a rollout (JSONL bytes).
pub fn parse(bytes: &[u8]) -> TranscriptInfo {
    let mut st = State::default();
    let mut counts = TranscriptInfo::default();
    for_each_record(bytes, &mut counts, |v| st.feed(v));
    let mut info = st.info;
    info.cwd = st.ctx_cwd.or(st.meta_cwd);
    info.take_counts(&counts);
    info
}

/// Reads a rollout cheaply (the shared kit's head and tail window).
///
/// # Errors
/// Any I/O error opening or reading `path`.
pub fn read_file(path: &Path) -> io::Result<TranscriptInfo> {
    read_file_capped(path, parse, TAIL_CAP)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::transcript::test_kit::{b, join, jsonl_soup, lines, sample_lines, ts};
    use crate::agents::transcript::{HEAD_BYTES, TAIL_BYTES};
    use crate::shapes;
    use proptest::prelude::*;
    use std::fs::File;
    use std::io::Write;

    const SAMPLES: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/codex/rollout-samples.jsonl"
    ));
    /// Another agent's records: never this reader's.
    const OTHER_SAMPLES: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/claude/transcript-samples.jsonl"
    ));

    const CX: &str = "01a2370b-2255-7e01-9337-4598cb103ce5";

    #[test]
    fn samples_parse_to_concrete_values() {
        let info = parse(SAMPLES.as_bytes());
        assert_eq!(info.records, 14);
        assert_eq!(info.bad_lines, 14, "the 14 `# kind` comment lines");
        assert_eq!(info.session_id.as_deref(), Some(CX));
        assert_eq!(info.cwd.as_deref(), Some("/tmp/lab/work/cx-a"));
        assert_eq!(info.first_prompt.as_deref(), Some("hello codex mock"));
        assert_eq!(
            info.last_assistant.as_deref(),
            Some("Hello from the mock OpenAI server (canned reply #1). PARKTEST-OK")
        );
        assert_eq!(info.last_real_turn, ts("2026-12-02T13:57:03.074Z"));
        assert!(!info.turn_open, "task_complete follows task_started");
        assert_eq!(info.ai_title, None, "the thread name is not in the rollout");
    }

    #[test]
    fn environment_context_is_not_a_prompt() {
        let turn = sample_lines(
            SAMPLES,
            &[
                "session_meta",
                "event_msg / task_started",
                "response_item / message / developer",
                "response_item / message / user",
                "turn_context",
            ],
        );
        let info = parse(turn.join("\n").as_bytes());
        assert_eq!(info.first_prompt, None);
        assert_eq!(info.last_real_turn, None);
        assert!(info.turn_open, "task_started without task_complete");
        assert_eq!(info.session_id.as_deref(), Some(CX));
        assert_eq!(info.cwd.as_deref(), Some("/tmp/lab/work/cx-a"));
    }

    #[test]
    fn midturn_kill_leaves_the_turn_open() {
        let mut turn = sample_lines(
            SAMPLES,
            &[
                "session_meta",
                "event_msg / task_started",
                "event_msg / item_completed",
                "response_item / message / assistant",
                "event_msg / task_complete",
            ],
        )
        .join("\n");
        turn.push('\n');
        turn.push_str(
            &serde_json::json!({"timestamp":"2026-12-02T14:00:00Z","type":"event_msg",
            "payload":{"type":"task_started","turn_id":"t2"}})
            .to_string(),
        );
        turn.push('\n');
        turn.push_str(&serde_json::json!({"timestamp":"2026-12-02T14:00:00.010Z","type":"event_msg",
            "payload":{"type":"item_completed","item":{"type":"UserMessage","content":[{"type":"text","text":"second"}]}}}).to_string());
        let info = parse(turn.as_bytes());
        assert!(info.turn_open);
        assert_eq!(info.first_prompt.as_deref(), Some("hello codex mock"));
        assert_eq!(info.last_real_turn, ts("2026-12-02T14:00:00.010Z"));
        // An abort closes it again.
        turn.push('\n');
        turn.push_str(
            &serde_json::json!({"timestamp":"2026-12-02T14:00:09Z","type":"event_msg",
            "payload":{"type":"turn_aborted","reason":"interrupted"}})
            .to_string(),
        );
        assert!(!parse(turn.as_bytes()).turn_open);
    }

    #[test]
    fn latest_turn_context_cwd_wins_and_function_calls_are_not_turns() {
        let mut v: Vec<String> = sample_lines(
            SAMPLES,
            &[
                "session_meta",
                "turn_context",
                "response_item / function_call",
                "response_item / function_call_output",
            ],
        )
        .into_iter()
        .map(str::to_string)
        .collect();
        v.push(
            serde_json::json!({"timestamp":"2026-12-02T15:00:00Z","type":"turn_context",
            "payload":{"cwd":"/tmp/lab/work/cx-b"}})
            .to_string(),
        );
        let info = parse(&lines(&v));
        assert_eq!(info.cwd.as_deref(), Some("/tmp/lab/work/cx-b"));
        assert_eq!(info.last_real_turn, None);
        assert_eq!(info.session_id.as_deref(), Some(CX));
    }

    #[test]
    fn plain_user_response_item_counts() {
        let v = [
            serde_json::json!({"timestamp":"2026-12-02T15:00:00Z","type":"response_item",
            "payload":{"type":"message","role":"user","content":[
                {"type":"input_text","text":"<environment_context>\n</environment_context>"},
                {"type":"input_text","text":"fix the tests"}]}})
            .to_string(),
        ];
        let info = parse(&lines(&v));
        assert_eq!(info.first_prompt.as_deref(), Some("fix the tests"));
        assert_eq!(info.last_real_turn, ts("2026-12-02T15:00:00Z"));
    }

    #[test]
    fn truncated_last_line() {
        let mut s = SAMPLES.to_string();
        let half = &sample_lines(SAMPLES, &["event_msg / task_started"])[0][..40];
        s.push_str(half);
        let info = parse(s.as_bytes());
        assert_eq!(info.bad_lines, 15);
        assert!(!info.turn_open);
    }

    #[test]
    fn large_files_read_head_and_tail_without_double_counting() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("big.jsonl");
        let meta = sample_lines(SAMPLES, &["session_meta"])[0];
        let prompt = serde_json::json!({"timestamp":"2026-12-02T10:00:00Z","type":"event_msg",
            "payload":{"type":"item_completed","item":{"type":"UserMessage","content":[{"type":"text","text":"the first prompt"}]}}}).to_string();
        let mut f = File::create(&p).unwrap();
        writeln!(f, "{meta}\n{prompt}").unwrap();
        let filler = format!(
            "{{\"timestamp\":\"2026-12-02T10:00:01Z\",\"type\":\"event_msg\",\"payload\":{{\"type\":\"token_count\",\"pad\":\"{}\"}}}}",
            "x".repeat(300)
        );
        let n_filler = 3000; // ~1 MB, far more than head + tail
        for _ in 0..n_filler {
            writeln!(f, "{filler}").unwrap();
        }
        // A real turn in the tail: the first window is enough (see `the_tail_window_grows…`).
        writeln!(
            f,
            "{}",
            serde_json::json!({"timestamp":"2026-12-02T10:59:00Z","type":"event_msg",
                "payload":{"type":"agent_message","message":"an earlier reply"}})
        )
        .unwrap();
        writeln!(
            f,
            "{}",
            serde_json::json!({"timestamp":"2026-12-02T11:00:00Z","type":"event_msg",
                "payload":{"type":"task_started"}})
        )
        .unwrap();
        write!(f, "{{\"timestamp\":\"2026-12-02T11:00:01Z\",\"type\":\"ev").unwrap(); // being written
        drop(f);
        let len = std::fs::metadata(&p).unwrap().len();
        assert!(len > HEAD_BYTES + TAIL_BYTES);

        let info = read_file(&p).unwrap();
        assert_eq!(info.session_id.as_deref(), Some(CX), "from the head");
        assert_eq!(info.first_prompt.as_deref(), Some("the first prompt"));
        assert!(info.turn_open, "from the tail");
        assert!(info.truncated_last_line);
        assert_eq!(info.last_real_turn, ts("2026-12-02T10:59:00Z"));
        assert_eq!(
            info.bad_lines, 1,
            "only the half-written last line; the cuts are clean"
        );
        assert!(info.records < n_filler, "the middle was skipped");
        let line = filler.len() as u64 + 1;
        let expected_max = 2 + (HEAD_BYTES + TAIL_BYTES) / line + 2;
        assert!(info.records as u64 <= expected_max);
        assert!(info.records as u64 >= (HEAD_BYTES + TAIL_BYTES) / line - 4);
    }

    #[test]
    fn a_long_first_line_is_still_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("long-meta.jsonl");
        let meta = serde_json::json!({"timestamp":"2026-12-02T10:00:00Z","type":"session_meta",
            "payload":{"id":CX,"cwd":"/w/long","base_instructions":{"text":"y".repeat(100_000)}}})
        .to_string();
        let mut f = File::create(&p).unwrap();
        writeln!(f, "{meta}").unwrap();
        for _ in 0..1500 {
            writeln!(
                f,
                "{{\"type\":\"event_msg\",\"payload\":{{\"type\":\"x\",\"pad\":\"{}\"}}}}",
                "z".repeat(300)
            )
            .unwrap();
        }
        drop(f);
        let info = read_file(&p).unwrap();
        assert_eq!(info.session_id.as_deref(), Some(CX));
        assert_eq!(info.cwd.as_deref(), Some("/w/long"));
        assert_eq!(info.bad_lines, 0);
    }

    #[test]
    fn past_the_bound_the_tail_reader_says_it_cannot_tell() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        let mut lines = vec![shapes::codex_meta()];
        lines.extend(shapes::codex_turn("first", "first reply", 100 * 1024, 0));
        lines.push(shapes::codex_task_started("2026-12-02T15:00:00Z"));
        lines.push(shapes::codex_task_complete(
            &"z".repeat(3 << 20),
            "2026-12-02T15:10:00Z",
        ));
        std::fs::write(&p, lines.join("\n") + "\n").unwrap();
        // A 1 MiB bound stands for the real 64 MiB one.
        let info = read_file_capped(&p, parse, 1 << 20).unwrap();
        let why = info.unsure.expect("past the bound");
        assert!(
            why.contains("does not hold its last complete record"),
            "{why}"
        );
        assert!(
            info.turn_open,
            "what the readable part says; unsure overrides it"
        );
        // Within the bound it is read.
        let info = read_file_capped(&p, parse, 4 << 20).unwrap();
        assert_eq!((info.unsure, info.turn_open), (None, false));
    }

    #[test]
    fn empty_input_is_empty_info() {
        assert_eq!(parse(b""), TranscriptInfo::default());
    }

    #[test]
    fn small_files_are_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        std::fs::write(&p, SAMPLES).unwrap();
        assert_eq!(read_file(&p).unwrap(), parse(SAMPLES.as_bytes()));
    }

    #[test]
    fn missing_files_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        assert!(read_file(dir.path()).is_err(), "a directory cannot be read");
    }

    #[test]
    fn clean_lines_take_the_fast_path() {
        // No repair is counted (and none attempted: the repaired count is the evidence).
        assert_eq!(parse(SAMPLES.as_bytes()).repaired_lines, 0);
    }

    #[test]
    fn lone_surrogates_are_replaced_and_counted_never_skipped() {
        // Codex: the final reply.
        let done = shapes::with_raw(
            &shapes::codex_task_complete("all green SURR", "2026-12-02T11:00:09Z"),
            "SURR",
            b"\\udbff",
        );
        let t = join(&[
            b(shapes::codex_meta()),
            b(shapes::codex_task_started("2026-12-02T11:00:00Z")),
            b(shapes::codex_prompt("go", "2026-12-02T11:00:00Z")),
            done,
        ]);
        let info = parse(&t);
        assert_eq!((info.bad_lines, info.repaired_lines), (0, 1));
        assert_eq!(info.last_assistant.as_deref(), Some("all green \u{fffd}"));
        assert!(!info.turn_open, "the task_complete was read");
        assert_eq!(info.session_id.as_deref(), Some(shapes::CODEX_SID));
    }

    #[test]
    fn invalid_utf8_is_replaced() {
        let started = shapes::with_raw(
            &shapes::codex_task_started("2026-12-02T11:00:00Z"),
            "task_started",
            b"task_started\",\"junk\":\"\xff",
        );
        let info = parse(&join(&[b(shapes::codex_meta()), started]));
        assert_eq!(info.repaired_lines, 1);
        assert!(info.turn_open, "the repaired task_started counts");
    }

    #[test]
    fn a_truncated_last_line_is_flagged() {
        // Codex: the same for a rollout.
        let mut t = join(&[
            b(shapes::codex_meta()),
            b(shapes::codex_task_started("2026-12-02T11:00:00Z")),
            b(shapes::codex_task_complete("ok", "2026-12-02T11:00:01Z")),
        ]);
        t.extend_from_slice(&shapes::codex_task_started("2026-12-02T11:05:00Z").as_bytes()[..30]);
        let info = parse(&t);
        assert!(info.truncated_last_line && !info.turn_open);
    }

    /// A session whose last record (the final reply) is far bigger than the old 256 KiB tail
    /// window: idle time and turn state come from the records at the end.
    #[test]
    fn the_tail_window_grows_to_hold_a_last_record_of_megabytes() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        let huge = "z".repeat(5 << 20);
        // Codex: a 5 MB final task_complete as the very last record.
        let mut lines = vec![shapes::codex_meta()];
        lines.extend(shapes::codex_turn("first", "first reply", 200 * 1024, 0));
        for k in 0..5 {
            lines.extend(shapes::codex_turn(
                "mid",
                "mid reply",
                200 * 1024,
                100 + k * 10,
            ));
        }
        lines.push(shapes::codex_task_started("2026-12-02T15:00:00Z"));
        lines.push(shapes::codex_prompt(
            "write the report",
            "2026-12-02T15:00:00Z",
        ));
        lines.push(shapes::codex_task_complete(&huge, "2026-12-02T15:10:00Z"));
        std::fs::write(&p, lines.join("\n") + "\n").unwrap();
        let info = read_file(&p).unwrap();
        assert_eq!(info.unsure, None);
        assert!(!info.turn_open, "not a turn in flight");
        assert_eq!(info.last_real_turn, ts("2026-12-02T15:10:00Z"));
        assert_eq!(info.session_id.as_deref(), Some(shapes::CODEX_SID));
    }

    proptest! {
        #[test]
        fn never_panics_on_arbitrary_bytes(b in prop::collection::vec(any::<u8>(), 0..4096)) {
            let x = parse(&b);
            prop_assert!(x.session_id.iter().all(|s| valid_session_id(s).as_deref() == Some(s.as_str())));
        }

        #[test]
        fn never_panics_on_cut_up_records(b in jsonl_soup(&[OTHER_SAMPLES, SAMPLES])) {
            let x = parse(&b);
            let nonempty = b.split(|&c| c == b'\n').filter(|l| !l.trim_ascii().is_empty()).count();
            prop_assert_eq!(x.records + x.bad_lines, nonempty);
        }
    }
}
