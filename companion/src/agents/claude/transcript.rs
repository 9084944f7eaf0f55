//! Claude Code's transcript reader: `~/.claude/projects/<enc-cwd>/<id>.jsonl` (the encoding:
//! [`project_dir_name`]) to a [`TranscriptInfo`], by the shared kit's rules
//! ([`crate::agents::transcript`]).
//!
//! `turn_open`: a user record (a real prompt, or a tool result / notification that makes the
//! model run again) is not yet answered by a final reply, a `turn_duration`, or (for a local slash
//! command) its output, a user or `local_command` system record. A reply that ends in `tool_use`
//! keeps the turn open: the agent is still working on it.

use std::io;
use std::path::Path;

use jiff::Timestamp;
use serde_json::Value;

use crate::agents::transcript::{
    bump, for_each_record, non_empty, read_file_capped, str_of, timestamp_of, valid_session_id,
    TranscriptInfo, TAIL_CAP,
};

/// An assistant message's text blocks, joined by newlines, and whether it is synthetic:
/// API errors and "No response requested." end a turn but are not the model speaking. The one
/// reading behind the parser, the renderer and the archive's raw-end check.
pub(crate) fn reply_text(msg: Option<&Value>) -> (String, bool) {
    let text = msg
        .and_then(|m| m.get("content"))
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
        .iter()
        .filter(|b| str_of(b, "type") == Some("text"))
        .filter_map(|b| str_of(b, "text"))
        .collect::<Vec<&str>>()
        .join("\n");
    let synthetic = msg.and_then(|m| str_of(m, "model")) == Some("<synthetic>")
        || text.trim() == "No response requested.";
    (text, synthetic)
}

/// User-record strings written by local commands and bash mode: no model turn follows them
/// (except slash commands that expand to a prompt, handled in `User::classify`).
const LOCAL_PREFIXES: &[&str] = &[
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
    "<user-memory-input>",
];

/// What one `user` record means for the turn.
pub(crate) enum User {
    /// A prompt the human typed (or pasted): a real turn.
    Prompt(String),
    /// Makes the model run again without being a prompt (tool results, task notifications,
    /// prompt-expanding slash commands).
    Continues,
    /// Ends the turn (`[Request interrupted by user]`, local command output).
    Closes,
    /// Meta, sidechain or unknown: no effect.
    Ignored,
}

impl User {
    pub(crate) fn classify(v: &Value) -> Self {
        // A compaction summary is written as a user record, but nobody typed it, and the model
        // already answered it (the summary is that answer): neither a prompt nor a turn.
        let flag = |k: &str| v.get(k).and_then(Value::as_bool) == Some(true);
        if flag("isMeta")
            || flag("isSidechain")
            || flag("isCompactSummary")
            || flag("isVisibleInTranscriptOnly")
        {
            return Self::Ignored;
        }
        let content = v.get("message").and_then(|m| m.get("content"));
        let (text, tool_result) = match content {
            Some(Value::String(s)) => (s.clone(), false),
            Some(Value::Array(blocks)) => {
                let texts: Vec<&str> = blocks
                    .iter()
                    .filter(|b| str_of(b, "type") == Some("text"))
                    .filter_map(|b| str_of(b, "text"))
                    .collect();
                let tool = blocks
                    .iter()
                    .any(|b| str_of(b, "type") == Some("tool_result"));
                (texts.join("\n"), tool)
            }
            _ => return Self::Ignored,
        };
        let t = text.trim_start();
        if t.starts_with("[Request interrupted by user") {
            return Self::Closes;
        }
        if t.starts_with("<local-command-stdout>") || t.starts_with("<local-command-stderr>") {
            return Self::Closes;
        }
        if LOCAL_PREFIXES.iter().any(|p| t.starts_with(p)) {
            return Self::Ignored;
        }
        if t.starts_with("<command-name>") || t.starts_with("<command-message>") {
            // A slash command: local ones are closed by their stdout record right after.
            return Self::Continues;
        }
        if tool_result {
            return Self::Continues;
        }
        // Newer records say who wrote them; anything but a human (e.g. a background-task
        // notification) is not a real prompt, though the model will answer it.
        let origin = v
            .get("origin")
            .and_then(|o| o.get("kind"))
            .and_then(Value::as_str);
        let human = match origin {
            Some(kind) => kind == "human",
            None => matches!(str_of(v, "promptSource"), None | Some("typed")),
        };
        match non_empty(&text) {
            Some(text) if human => Self::Prompt(text),
            Some(_) => Self::Continues,
            None => Self::Ignored,
        }
    }
}

#[derive(Default)]
struct State {
    info: TranscriptInfo,
    msg_session: Option<String>,
    any_session: Option<String>,
    /// Timestamp of the record that last set `turn_open`. Real Claude 2.1.197 sometimes writes a
    /// turn's records out of file order (assistant before its user prompt), so a record only moves
    /// the turn state when it is not older than the one that set it last.
    turn_ts: Option<Timestamp>,
}

fn set_turn(
    info: &mut TranscriptInfo,
    turn_ts: &mut Option<Timestamp>,
    open: bool,
    ts: Option<Timestamp>,
) {
    match (ts, *turn_ts) {
        (Some(t), Some(cur)) if t < cur => {}
        (Some(t), _) => {
            info.turn_open = open;
            *turn_ts = Some(t);
        }
        (None, _) => info.turn_open = open,
    }
}

impl State {
    fn feed(&mut self, v: &Value) {
        let ty = str_of(v, "type").unwrap_or("");
        if let Some(id) = str_of(v, "sessionId").and_then(valid_session_id) {
            // Message records name the file's session; bookkeeping records (titles, modes) may
            // name another one, so they are only a fallback.
            if matches!(ty, "user" | "assistant" | "system" | "attachment") {
                self.msg_session = Some(id);
            } else {
                self.any_session = Some(id);
            }
        }
        if let Some(cwd) = str_of(v, "cwd").filter(|c| !c.is_empty()) {
            self.info.cwd = Some(cwd.to_string());
        }
        let ts = timestamp_of(v);
        let turn_ts = &mut self.turn_ts;
        let info = &mut self.info;
        match ty {
            "ai-title" => {
                if let Some(t) = str_of(v, "aiTitle").and_then(non_empty) {
                    info.ai_title = Some(t);
                }
            }
            "user" => match User::classify(v) {
                User::Prompt(text) => {
                    set_turn(info, turn_ts, true, ts);
                    bump(&mut info.last_real_turn, timestamp_of(v));
                    info.first_prompt.get_or_insert_with(|| text.clone());
                    info.last_prompt = Some(text);
                }
                User::Continues => set_turn(info, turn_ts, true, ts),
                User::Closes => set_turn(info, turn_ts, false, ts),
                User::Ignored => {}
            },
            "assistant" => {
                if v.get("isSidechain").and_then(Value::as_bool) == Some(true) {
                    return;
                }
                let msg = v.get("message");
                let blocks: &[Value] = msg
                    .and_then(|m| m.get("content"))
                    .and_then(Value::as_array)
                    .map(Vec::as_slice)
                    .unwrap_or(&[]);
                let (text, synthetic) = reply_text(msg);
                if synthetic {
                    set_turn(info, turn_ts, false, ts);
                    return;
                }
                bump(&mut info.last_real_turn, timestamp_of(v));
                if let Some(t) = non_empty(&text) {
                    info.last_assistant = Some(t);
                }
                if blocks.iter().any(|b| str_of(b, "type") == Some("tool_use")) {
                    set_turn(info, turn_ts, true, ts); // waiting for the tool (or its permission prompt)
                } else if blocks
                    .iter()
                    .any(|b| str_of(b, "type") == Some("text") && str_of(b, "text").is_some())
                {
                    set_turn(info, turn_ts, false, ts);
                }
                // Thinking-only records are mid-stream: the turn stays as it was.
            }
            // 2.1.332 writes a local command's output (and, for some commands, its echo) as a
            // `local_command` system record where 2.1.197 wrote a `<local-command-stdout>` user
            // record: it answers the `<command-name>` record that opened the turn, and no model
            // call follows it (a command typed mid-turn is queued until the turn ends).
            "system"
                if matches!(
                    str_of(v, "subtype"),
                    Some("turn_duration" | "local_command")
                ) =>
            {
                set_turn(info, turn_ts, false, ts)
            }
            _ => {}
        }
    }

    fn finish(mut self) -> TranscriptInfo {
        self.info.session_id = self.msg_session.or(self.any_session);
        self.info
    }
}

/// Parses a transcript (JSONL bytes).
pub fn parse(bytes: &[u8]) -> TranscriptInfo {
    let mut st = State::default();
    let mut counts = TranscriptInfo::default();
    for_each_record(bytes, &mut counts, |v| st.feed(v));
    let mut info = st.finish();
    info.take_counts(&counts);
    info
}

/// Reads a transcript cheaply (the shared kit's head and tail window).
///
/// # Errors
/// Any I/O error opening or reading `path`.
pub fn read_file(path: &Path) -> io::Result<TranscriptInfo> {
    read_file_capped(path, parse, TAIL_CAP)
}

/// The project-dir encoding of a cwd: every UTF-16 code unit that is not `[A-Za-z0-9]`
/// becomes `-`; past 200 units the name is cut to 200 and `-<base36(|javaHash(cwd)|)>` appended.
/// The mapping is lossy, so it only locates a directory; the cwd itself comes from the records.
pub fn project_dir_name(cwd: &str) -> String {
    let enc: String = cwd
        .encode_utf16()
        .map(|u| match u8::try_from(u) {
            Ok(b) if b.is_ascii_alphanumeric() => char::from(b),
            _ => '-',
        })
        .collect();
    // Every unit became one ASCII char, so byte length == UTF-16 length here.
    if enc.len() <= 200 {
        return enc;
    }
    let hash = cwd.encode_utf16().fold(0i32, |h, u| {
        h.wrapping_shl(5).wrapping_sub(h).wrapping_add(i32::from(u))
    });
    // JS Math.abs works on doubles, so |i32::MIN| is 2^31, not an overflow.
    format!("{}-{}", &enc[..200], base36(i64::from(hash).unsigned_abs()))
}

fn base36(mut n: u64) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    if n == 0 {
        return "0".to_string();
    }
    let mut out = Vec::new();
    while n > 0 {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::transcript::test_kit::{b, join, jsonl_soup, lines, sample_lines, ts};
    use crate::shapes;
    use proptest::prelude::*;

    const SAMPLES: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/claude/transcript-samples.jsonl"
    ));
    /// Another agent's records: never this reader's.
    const OTHER_SAMPLES: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/codex/rollout-samples.jsonl"
    ));

    const SID: &str = "158f2a09-8e02-4cf8-bbf8-0710d4e8624e";

    fn claude_user(text: &str, at: &str) -> String {
        serde_json::json!({"type":"user","message":{"role":"user","content":text},
            "origin":{"kind":"human"},"promptSource":"typed","timestamp":at,
            "cwd":"/w/p","sessionId":SID})
        .to_string()
    }

    fn claude_assistant(blocks: Value, at: &str) -> String {
        serde_json::json!({"type":"assistant","message":{"role":"assistant","model":"claude-opus-4-8",
            "content":blocks},"timestamp":at,"cwd":"/w/p","sessionId":SID})
        .to_string()
    }

    fn claude_tool_result(at: &str) -> String {
        serde_json::json!({"type":"user","message":{"role":"user","content":[{"type":"tool_result",
            "content":"Exit code 137","tool_use_id":"t1"}]},"timestamp":at,"cwd":"/w/p","sessionId":SID})
        .to_string()
    }

    #[test]
    fn samples_parse_to_concrete_values() {
        let info = parse(SAMPLES.as_bytes());
        assert_eq!(info.records, 14);
        assert_eq!(info.bad_lines, 14, "the 14 `# kind` comment lines");
        assert_eq!(info.session_id.as_deref(), Some(SID));
        assert_eq!(info.cwd.as_deref(), Some("/tmp/lab/work/proj-a"));
        assert_eq!(
            info.ai_title.as_deref(),
            Some("Mock please refactor the parser module")
        );
        assert_eq!(
            info.first_prompt.as_deref(),
            Some("hello mock, please reply")
        );
        assert_eq!(
            info.last_assistant.as_deref(),
            Some("Hello from the mock Anthropic server (canned reply #5). PARKTEST-OK")
        );
        // The tool_use reply at 14:01:09.839 is the last model message; the tool_result at
        // 14:01:20 is not a real turn, but it does leave the model to run again.
        assert_eq!(info.last_real_turn, ts("2026-12-02T14:01:09.839Z"));
        assert!(info.turn_open);
    }

    #[test]
    fn sample_first_turn_is_closed() {
        let turn = sample_lines(
            SAMPLES,
            &[
                "mode",
                "permission-mode",
                "file-history-snapshot",
                "user",
                "attachment / agent_listing_delta",
                "attachment / skill_listing",
                "assistant",
                "system / turn_duration",
                "last-prompt",
            ],
        );
        let info = parse(turn.join("\n").as_bytes());
        assert_eq!(info.records, 9);
        assert_eq!(info.bad_lines, 0);
        assert!(!info.turn_open);
        assert_eq!(info.last_real_turn, ts("2026-12-02T13:50:53.778Z"));
        assert_eq!(info.ai_title, None);
        assert_eq!(info.session_id.as_deref(), Some(SID));
    }

    #[test]
    fn sample_tool_use_then_result_is_open() {
        let turn = sample_lines(SAMPLES, &["assistant / tool_use", "user / tool_result"]);
        let info = parse(turn.join("\n").as_bytes());
        assert!(info.turn_open);
        assert_eq!(info.first_prompt, None, "a tool_result is not a prompt");
        assert_eq!(info.last_assistant, None, "a tool_use carries no text");
        assert_eq!(info.last_real_turn, ts("2026-12-02T14:01:09.839Z"));
    }

    #[test]
    fn session_id_prefers_message_records() {
        // The sample's ai-title belongs to another session; the messages name this file's.
        let turn = sample_lines(SAMPLES, &["ai-title"]);
        let info = parse(turn.join("\n").as_bytes());
        assert_eq!(
            info.session_id.as_deref(),
            Some("f2ccbb0d-7d49-495b-b5a5-ae7dae07a6ee")
        );
    }

    #[test]
    fn out_of_order_records_use_timestamps() {
        // Real 2.1.197 file order seen in a resumed pane: the reply lands before its prompt.
        let lines = [
            r#"{"type":"assistant","timestamp":"2026-12-02T15:33:48.666Z","uuid":"a","sessionId":"096d855b-0129-4672-b940-ec6b655a668f","message":{"role":"assistant","content":[{"type":"text","text":"Hello PARKTEST-OK"}]}}"#,
            r#"{"type":"system","subtype":"turn_duration","timestamp":"2026-12-02T15:33:48.674Z","uuid":"b","sessionId":"096d855b-0129-4672-b940-ec6b655a668f"}"#,
            r#"{"type":"user","timestamp":"2026-12-02T15:33:48.334Z","uuid":"c","origin":{"kind":"human"},"promptSource":"typed","sessionId":"096d855b-0129-4672-b940-ec6b655a668f","message":{"role":"user","content":"second agent"}}"#,
        ];
        let info = parse(lines.join("\n").as_bytes());
        assert!(
            !info.turn_open,
            "the reply is newer than the prompt: the turn is closed"
        );
        assert_eq!(info.last_real_turn, ts("2026-12-02T15:33:48.666Z"));
    }

    #[test]
    fn midturn_kill_leaves_the_turn_open() {
        let info = parse(&lines(&[
            claude_user("first", "2026-12-02T10:00:00Z"),
            claude_assistant(
                serde_json::json!([{"type":"text","text":"reply one"}]),
                "2026-12-02T10:00:05Z",
            ),
            serde_json::json!({"type":"system","subtype":"turn_duration","timestamp":"2026-12-02T10:00:05Z"}).to_string(),
            claude_user("second, killed mid-turn", "2026-12-02T10:05:00Z"),
        ]));
        assert!(info.turn_open);
        assert_eq!(info.last_real_turn, ts("2026-12-02T10:05:00Z"));
        assert_eq!(info.first_prompt.as_deref(), Some("first"));
        assert_eq!(info.last_assistant.as_deref(), Some("reply one"));
        assert_eq!(info.cwd.as_deref(), Some("/w/p"));
    }

    #[test]
    fn tool_results_are_not_real_turns() {
        let info = parse(&lines(&[
            claude_user("run it", "2026-12-02T10:00:00Z"),
            claude_assistant(
                serde_json::json!([{"type":"tool_use","id":"t1","name":"Bash","input":{}}]),
                "2026-12-02T10:00:01Z",
            ),
            claude_tool_result("2026-12-02T10:09:00Z"),
            claude_assistant(
                serde_json::json!([{"type":"text","text":"done"},{"type":"text","text":"really"}]),
                "2026-12-02T10:09:01Z",
            ),
            claude_tool_result("2026-12-02T11:00:00Z"),
        ]));
        // The last real turn is the reply, not the later tool_result.
        assert_eq!(info.last_real_turn, ts("2026-12-02T10:09:01Z"));
        assert_eq!(info.last_assistant.as_deref(), Some("done\nreally"));
        assert_eq!(info.first_prompt.as_deref(), Some("run it"));
    }

    #[test]
    fn turn_state_through_tools_and_interrupts() {
        let base = [
            claude_user("go", "2026-12-02T10:00:00Z"),
            claude_assistant(
                serde_json::json!([{"type":"tool_use","id":"t1","name":"Bash","input":{}}]),
                "2026-12-02T10:00:01Z",
            ),
        ];
        // Waiting on a tool: open.
        assert!(parse(&lines(&base)).turn_open);
        // Interrupted by the user: closed.
        let mut v = base.to_vec();
        v.push(claude_user(
            "[Request interrupted by user for tool use]",
            "2026-12-02T10:00:02Z",
        ));
        let info = parse(&lines(&v));
        assert!(!info.turn_open);
        assert_eq!(info.last_real_turn, ts("2026-12-02T10:00:01Z"));
        // A synthetic reply closes but is not the model speaking.
        let mut v = base.to_vec();
        v.push(claude_tool_result("2026-12-02T10:00:03Z"));
        v.push(
            serde_json::json!({"type":"assistant","message":{"model":"<synthetic>","content":[
                {"type":"text","text":"No response requested."}]},"timestamp":"2026-12-02T10:00:04Z"})
            .to_string(),
        );
        let info = parse(&lines(&v));
        assert!(!info.turn_open);
        assert_eq!(info.last_assistant, None);
        assert_eq!(info.last_real_turn, ts("2026-12-02T10:00:01Z"));
    }

    #[test]
    fn meta_local_and_notification_records_are_not_prompts() {
        let meta = serde_json::json!({"type":"user","isMeta":true,"message":{"content":"<local-command-caveat>x</local-command-caveat>"},
            "timestamp":"2026-12-02T10:00:00Z"}).to_string();
        let cmd = claude_user(
            "<command-name>/model</command-name>\n<command-args></command-args>",
            "2026-12-02T10:00:01Z",
        );
        let out = claude_user(
            "<local-command-stdout>Set model to opus</local-command-stdout>",
            "2026-12-02T10:00:02Z",
        );
        let note = serde_json::json!({"type":"user","origin":{"kind":"task-notification"},
            "message":{"content":"<task-notification>done</task-notification>"},"timestamp":"2026-12-02T10:00:03Z"}).to_string();
        // A local command closes itself.
        let info = parse(&lines(&[meta.clone(), cmd.clone(), out.clone()]));
        assert_eq!(info.first_prompt, None);
        assert_eq!(info.last_real_turn, None);
        assert!(!info.turn_open);
        // A background-task notification makes the model run, but is nobody's prompt.
        let info = parse(&lines(&[meta, cmd, out, note]));
        assert_eq!(info.first_prompt, None);
        assert_eq!(info.last_real_turn, None);
        assert!(info.turn_open);
    }

    /// Real Claude Code 2.1.332 transcripts, captured offline against mock-llm (see
    /// `tests/fixtures/claude/README.md`).
    const C332_CLEAR: &[u8] = include_bytes!("../../../tests/fixtures/claude/clear-2.1.332.jsonl");
    const C332_COMMANDS: &[u8] =
        include_bytes!("../../../tests/fixtures/claude/commands-2.1.332.jsonl");
    const C332_RESUMED_AFTER_CLEAR: &[u8] =
        include_bytes!("../../../tests/fixtures/claude/resumed-after-clear-2.1.332.jsonl");
    const C332_PROMPT_COMMAND: &[u8] =
        include_bytes!("../../../tests/fixtures/claude/prompt-command-2.1.332.jsonl");

    /// `bytes` through the end of the first line containing `needle`: the file as it was when
    /// that record had just been written.
    fn through(bytes: &[u8], needle: &str) -> Vec<u8> {
        let text = std::str::from_utf8(bytes).unwrap();
        let at = text.find(needle).unwrap_or_else(|| panic!("{needle:?}"));
        let end = text[at..].find('\n').map_or(text.len(), |nl| at + nl + 1);
        bytes[..end].to_vec()
    }

    #[test]
    fn v2_1_332_clear_is_at_rest_at_once() {
        // /clear starts a new file: its `<command-name>` user record, then the output as a
        // `local_command` system record. Claude's own status file says idle right away.
        let info = parse(C332_CLEAR);
        assert_eq!((info.records, info.bad_lines), (5, 0));
        assert!(!info.turn_open, "the command's output closes it");
        assert_eq!(info.last_real_turn, None);
        assert_eq!(info.first_prompt, None);
        assert_eq!(
            info.session_id.as_deref(),
            Some("f913b9d2-1562-4e78-9512-276dccfa487a")
        );
        // Until the output record is written, the command is in flight.
        assert!(parse(&through(C332_CLEAR, "<command-name>/clear")).turn_open);
    }

    /// Issue 34 (item 4): within the fresh-write window after `/clear`, with Claude's status file
    /// saying idle and an empty composer on screen, the row read busy from the transcript.
    #[test]
    fn v2_1_332_clear_reads_idle_while_the_file_is_fresh() {
        let screen = crate::agents::screen::test_kit::idle();
        for t in [C332_CLEAR, C332_RESUMED_AFTER_CLEAR] {
            let info = parse(t);
            let verdict = crate::scan::derive_status(
                crate::agents::Agent::Claude,
                Some("idle"),
                Some(&screen),
                Some(&info),
                true,
                true,
            );
            assert_eq!(verdict, (park_protocol::Status::Idle, None));
        }
    }

    #[test]
    fn v2_1_332_session_resumed_after_clear_is_at_rest() {
        // The cleared session, exited and resumed: the resume appends bookkeeping only.
        let info = parse(C332_RESUMED_AFTER_CLEAR);
        assert_eq!(info.bad_lines, 0);
        assert!(!info.turn_open);
        assert_eq!(info.last_real_turn, None);
        assert_eq!(
            info.session_id.as_deref(),
            Some("7a3344d2-ec76-4de9-94e0-b8b5cce284e2")
        );
    }

    #[test]
    fn v2_1_332_local_commands_leave_no_turn_open() {
        // One session: /clear, a prompt, /compact, /model, /rename, shift+tab to manual mode (its
        // `permission-mode` record comes with the next prompt) and a prompt, /context. After
        // each command's last record, nothing is in flight.
        for needle in [
            "Compacted (ctrl+o to see full summary)",
            "Set model to",
            "Session renamed to: my-renamed-session",
            "canned reply #5", // the reply to the prompt typed in manual mode
            "## Context Usage",
        ] {
            let info = parse(&through(C332_COMMANDS, needle));
            assert_eq!(info.bad_lines, 0, "{needle}");
            assert!(!info.turn_open, "after {needle}");
        }
        let info = parse(C332_COMMANDS);
        assert!(!info.turn_open);
        assert_eq!(info.unsure, None);
        assert_eq!(
            info.first_prompt.as_deref(),
            Some("second prompt before compact")
        );
        assert_eq!(info.last_prompt.as_deref(), Some("a prompt in manual mode"));
        assert_eq!(info.last_real_turn, ts("2026-12-06T07:27:28.748Z"));
        assert_eq!(info.ai_title, None);
    }

    #[test]
    fn compact_summary_is_nobodys_prompt() {
        // /compact writes its summary as a user record with no origin: it is not the last prompt,
        // and the conversation's last real turn stays the reply before it.
        let info = parse(&through(C332_COMMANDS, "Compacted (ctrl+o"));
        assert_eq!(
            info.last_prompt.as_deref(),
            Some("second prompt before compact")
        );
        assert_eq!(info.last_real_turn, ts("2026-12-06T07:27:12.432Z"));
        assert!(!info.turn_open);
    }

    #[test]
    fn v2_1_332_prompt_command_stays_open_until_its_reply() {
        // A custom command that expands to a prompt: `<command-message>` then its meta
        // expansion, and the model runs; no local_command record answers it.
        let expanded = through(C332_PROMPT_COMMAND, "Please greet the user warmly.");
        assert!(parse(&expanded).turn_open);
        let info = parse(C332_PROMPT_COMMAND);
        assert!(!info.turn_open);
        assert_eq!(info.last_prompt.as_deref(), Some("hi"));
    }

    #[test]
    fn array_prompts_and_sidechains() {
        let pasted = serde_json::json!({"type":"user","message":{"content":[{"type":"text","text":"look at this"},
            {"type":"image","source":{}}]},"timestamp":"2026-12-02T10:00:00Z"}).to_string();
        let side = serde_json::json!({"type":"user","isSidechain":true,"message":{"content":"subagent task"},
            "timestamp":"2026-12-02T10:01:00Z"}).to_string();
        let info = parse(&lines(&[pasted, side]));
        assert_eq!(info.first_prompt.as_deref(), Some("look at this"));
        assert_eq!(info.last_real_turn, ts("2026-12-02T10:00:00Z"));
    }

    #[test]
    fn truncated_last_line_and_garbage() {
        let full = claude_user("hello", "2026-12-02T10:00:00Z");
        let partial = &full[..full.len() / 2];
        let bytes = format!("not json\n{{\"a\":1}}\n[1,2]\n\n  \n{full}\n\u{0}\u{1}\n{partial}");
        let mut bytes = bytes.into_bytes();
        bytes.extend_from_slice(b"\n\xff\xfe{\"type\":\"user\"}\n");
        let info = parse(&bytes);
        assert_eq!(info.records, 2, "{{\"a\":1}} and the full user line");
        assert_eq!(info.bad_lines, 5);
        assert_eq!(info.first_prompt.as_deref(), Some("hello"));
        assert!(info.turn_open);
    }

    #[test]
    fn malformed_session_ids_are_ignored() {
        let bad = serde_json::json!({"type":"user","sessionId":"../../etc/passwd","message":{"content":"x"}}).to_string();
        assert_eq!(parse(bad.as_bytes()).session_id, None);
        let upper =
            serde_json::json!({"type":"mode","sessionId":"158F2A09-8E02-4CF8-BBF8-0710D4E8624E"})
                .to_string();
        assert_eq!(parse(upper.as_bytes()).session_id.as_deref(), Some(SID));
    }

    #[test]
    fn java_hash_matches_java_string_hashcode() {
        // Java: "hello".hashCode() == 99162322; a 201-char path made of it must end in base36 of that.
        let hash = |s: &str| {
            s.encode_utf16().fold(0i32, |h, u| {
                h.wrapping_shl(5).wrapping_sub(h).wrapping_add(i32::from(u))
            })
        };
        assert_eq!(hash("hello"), 99_162_322);
        assert_eq!(base36(99_162_322), "1n1e4y");
        assert_eq!(base36(0), "0");
        assert_eq!(base36(35), "z");
        assert_eq!(base36(36), "10");
    }

    #[test]
    fn project_dir_table_from_formats() {
        assert_eq!(
            project_dir_name("/tmp/lab/work/proj-a"),
            "-tmp-lab-work-proj-a"
        );
        assert_eq!(
            project_dir_name("/tmp/lab/work/My Proj.v2_ü"),
            "-tmp-lab-work-My-Proj-v2--"
        );
        assert_eq!(
            project_dir_name("/tmp/lab/work/real-b"),
            "-tmp-lab-work-real-b"
        );
    }

    #[test]
    fn project_dir_counts_utf16_units() {
        // An astral char is two UTF-16 units, so two dashes.
        assert_eq!(project_dir_name("/a🚀b"), "-a--b");
        assert_eq!(project_dir_name("/日本"), "---");
        assert_eq!(project_dir_name(""), "");
    }

    #[test]
    fn long_paths_get_the_hash_suffix() {
        // Expectations computed independently (Python: UTF-16 units, h=(h<<5)-h+u as int32,
        // abs, base36).
        let p254 = format!("/tmp/lab/work/{}", "a".repeat(240));
        assert_eq!(p254.len(), 254);
        let enc = project_dir_name(&p254);
        assert_eq!(enc.len(), 200 + 1 + "y29h8r".len());
        assert_eq!(
            &enc[..200],
            &format!("-tmp-lab-work-{}", "a".repeat(186))[..]
        );
        assert_eq!(&enc[200..], "-y29h8r");
        let long = format!("/home/u/{}", "dir/".repeat(60));
        assert_eq!(&project_dir_name(&long)[200..], "-8k2kt");
        let exact = format!("/{}", "b".repeat(199));
        assert_eq!(project_dir_name(&exact), format!("-{}", "b".repeat(199)));
        let astral = format!("/{}🚀", "c".repeat(198));
        assert_eq!(&project_dir_name(&astral)[200..], "-558zpq");
    }

    #[test]
    fn empty_input_is_empty_info() {
        assert_eq!(parse(b""), TranscriptInfo::default());
        assert_eq!(parse(b"\n\n\r\n"), TranscriptInfo::default());
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
        assert!(read_file(&dir.path().join("nope.jsonl")).is_err());
    }

    #[test]
    fn clean_lines_take_the_fast_path() {
        // No repair is counted (and none attempted: the repaired count is the evidence).
        assert_eq!(parse(SAMPLES.as_bytes()).repaired_lines, 0);
    }

    #[test]
    fn lone_surrogates_are_replaced_and_counted_never_skipped() {
        // Claude: the last prompt carries a lone high surrogate (an emoji cut in half).
        let prompt = shapes::with_raw(
            &shapes::claude_prompt("fix the parser SURR please", "2026-12-02T11:00:00Z"),
            "SURR",
            b"\\ud83d",
        );
        assert!(
            serde_json::from_slice::<Value>(&prompt).is_err(),
            "serde rejects it"
        );
        let reply = shapes::with_raw(
            &shapes::claude_reply("done SURR", "2026-12-02T11:00:05Z"),
            "SURR",
            b"\\ude00 and a pair \\ud83d\\ude00 and \\\\ud83d",
        );
        let t = join(&[
            b(shapes::claude_prompt("first", "2026-12-02T10:00:00Z")),
            prompt,
            reply,
        ]);
        let info = parse(&t);
        assert_eq!(
            (info.records, info.bad_lines, info.repaired_lines),
            (3, 0, 2)
        );
        assert_eq!(
            info.last_prompt.as_deref(),
            Some("fix the parser \u{fffd} please")
        );
        assert_eq!(
            info.last_assistant.as_deref(),
            Some("done \u{fffd} and a pair 😀 and \\ud83d"),
            "pairs and escaped backslashes are kept"
        );
        assert_eq!(info.last_real_turn, ts("2026-12-02T11:00:05Z"));
        assert!(!info.turn_open);
        assert_eq!(info.unsure, None);
    }

    #[test]
    fn invalid_utf8_is_replaced() {
        let prompt = shapes::with_raw(
            &shapes::claude_prompt("héllo BAD world", "2026-12-02T11:00:00Z"),
            "BAD",
            &[0xff, 0xfe, 0xc3],
        );
        let info = parse(&join(&[prompt]));
        assert_eq!((info.records, info.repaired_lines), (1, 1));
        assert_eq!(
            info.last_prompt.as_deref(),
            Some("héllo \u{fffd}\u{fffd}\u{fffd} world")
        );
        assert!(info.turn_open);
    }

    #[test]
    fn a_truncated_last_line_is_flagged_and_a_glued_record_salvaged() {
        let mut t = join(&[
            b(shapes::claude_prompt("q", "2026-12-02T11:00:00Z")),
            b(shapes::claude_reply("a", "2026-12-02T11:00:01Z")),
        ]);
        let half = shapes::claude_prompt("the next prompt", "2026-12-02T11:05:00Z");
        t.extend_from_slice(&half.as_bytes()[..half.len() / 2]);
        let info = parse(&t);
        assert!(info.truncated_last_line);
        assert_eq!(info.bad_lines, 1);
        assert_eq!(
            info.unsure, None,
            "the record being written is not the last complete one"
        );
        assert_eq!(info.last_prompt.as_deref(), Some("q"));
        // The agent was killed mid-write and resumed: its next record is glued to the half one.
        t.extend_from_slice(
            shapes::claude_prompt("after resume", "2026-12-02T12:00:00Z").as_bytes(),
        );
        t.push(b'\n');
        let info = parse(&t);
        assert!(!info.truncated_last_line);
        assert_eq!((info.bad_lines, info.repaired_lines), (0, 1));
        assert_eq!(info.last_prompt.as_deref(), Some("after resume"));
        assert!(info.turn_open);
    }

    #[test]
    fn an_unreadable_last_complete_record_makes_the_read_unsure() {
        let t = join(&[
            b(shapes::claude_prompt("q", "2026-12-02T11:00:00Z")),
            b(shapes::claude_reply("a", "2026-12-02T11:00:01Z")),
            b"{\"type\":\"user\",\"message\":{\"content\":\"lost prompt\"}, garbage".to_vec(),
        ]);
        let info = parse(&t);
        assert!(!info.turn_open, "as far as the readable records go");
        let why = info.unsure.expect("the latest turn may be hidden");
        assert!(why.contains("cannot be parsed"), "{why}");
        // Garbage before the last record is only a bad line.
        let t = join(&[
            b"garbage".to_vec(),
            b(shapes::claude_prompt("q", "2026-12-02T11:00:00Z")),
        ]);
        assert_eq!(parse(&t).unsure, None);
    }

    /// A session whose last record (the final reply, or a tool result) is far bigger than the old
    /// 256 KiB tail window: idle time and turn state come from the records at the end.
    #[test]
    fn the_tail_window_grows_to_hold_a_last_record_of_megabytes() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        let huge = "z".repeat(5 << 20);
        // Claude: an old first turn, 1 MB of filler turns, then a 5 MB final answer.
        let mut lines = shapes::claude_turn("first prompt", "first reply", 200 * 1024, 0);
        for k in 0..5 {
            lines.extend(shapes::claude_turn(
                "mid",
                "mid reply",
                200 * 1024,
                100 + k * 10,
            ));
        }
        lines.push(shapes::claude_prompt(
            "write the report",
            "2026-12-02T15:00:00Z",
        ));
        lines.push(shapes::claude_reply(&huge, "2026-12-02T15:10:00Z"));
        lines.push(shapes::claude_turn_done("2026-12-02T15:10:01Z"));
        lines.push(shapes::claude_last_prompt("write the report"));
        std::fs::write(&p, lines.join("\n") + "\n").unwrap();
        let info = read_file(&p).unwrap();
        assert_eq!(info.unsure, None);
        assert!(!info.turn_open);
        assert_eq!(
            info.last_real_turn,
            ts("2026-12-02T15:10:00Z"),
            "from the 5 MB reply"
        );
        assert_eq!(info.last_prompt.as_deref(), Some("write the report"));
        assert_eq!(info.session_id.as_deref(), Some(shapes::CLAUDE_SID));
        assert_eq!(
            info.last_assistant.as_ref().map(String::len),
            Some(huge.len())
        );
    }

    proptest! {
        #[test]
        fn never_panics_on_arbitrary_bytes(b in prop::collection::vec(any::<u8>(), 0..4096)) {
            let c = parse(&b);
            prop_assert!(c.session_id.iter().all(|s| valid_session_id(s).as_deref() == Some(s.as_str())));
        }

        #[test]
        fn never_panics_on_cut_up_records(b in jsonl_soup(&[SAMPLES, OTHER_SAMPLES])) {
            let c = parse(&b);
            let nonempty = b.split(|&c| c == b'\n').filter(|l| !l.trim_ascii().is_empty()).count();
            prop_assert_eq!(c.records + c.bad_lines, nonempty);
        }

        #[test]
        fn project_dir_names_are_safe(s in any::<String>()) {
            let d = project_dir_name(&s);
            prop_assert!(d.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'));
            prop_assert!(d.len() <= 200 + 1 + 7);
        }
    }
}
