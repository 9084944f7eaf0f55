//! Codex CLI's renderer: a rollout as Markdown, built with the shared kit
//! ([`crate::agents::render`]), and the prompt or reply one record holds ([`message_of`]). Codex
//! writes one prompt or reply under several record types; a repeat within a turn is shown once.

use jiff::Timestamp;
use serde_json::Value;

use super::transcript::{texts, user_text};
use crate::agents::render::{
    argv, escape_inline, first_line, normalize, patch_files, tool_arg, tool_line, Conversation,
    Item, Log, Message,
};
use crate::agents::transcript::{for_each_record, non_empty, str_of, timestamp_of, TranscriptInfo};

/// A `function_call` / `custom_tool_call`: `arguments` is a JSON string, `input` the raw
/// text of a custom tool (an `apply_patch` body).
fn call(payload: &Value) -> String {
    let name = str_of(payload, "name");
    let raw = payload.get("arguments").or_else(|| payload.get("input"));
    let parsed = match raw {
        Some(Value::String(s)) => serde_json::from_str::<Value>(s).ok(),
        other => other.cloned(),
    };
    let patch = name == Some("apply_patch");
    let arg = match (&parsed, raw) {
        (Some(v @ Value::Object(o)), _) => {
            let body = ["input", "patch"]
                .iter()
                .find_map(|k| o.get(*k).and_then(Value::as_str));
            match body.filter(|_| patch).and_then(patch_files) {
                Some(files) => Some(files),
                None => tool_arg(v),
            }
        }
        (_, Some(Value::String(s))) if patch => patch_files(s).or_else(|| Some(s.clone())),
        (_, Some(Value::String(s))) => Some(s.clone()),
        _ => None,
    };
    tool_line(name, arg)
}

/// A prompt is written as a `response_item` and an event, and a reply as a `response_item`,
/// maybe an `agent_message` and the `task_complete` summary: show each once per turn.
#[derive(Default)]
struct Seen {
    user: Option<String>,
    replies: Vec<String>,
}

struct State {
    log: Log,
    seen: Seen,
}

impl State {
    fn user(&mut self, ts: Option<Timestamp>, text: Option<String>) {
        let Some(text) = text else { return };
        self.log.last_user = Some(text.clone());
        let key = normalize(&text);
        if self.seen.user.as_ref() == Some(&key) {
            return;
        }
        self.seen.user = Some(key);
        self.seen.replies.clear();
        self.log.push(ts, Item::User(text));
    }

    fn reply(&mut self, ts: Option<Timestamp>, text: Option<String>) {
        let Some(text) = text else { return };
        self.log.last_assistant = Some(text.clone());
        let key = normalize(&text);
        if self.seen.replies.contains(&key) {
            return;
        }
        // The copies come close together, and a long turn must not make this quadratic.
        if self.seen.replies.len() == 4 {
            self.seen.replies.remove(0);
        }
        self.seen.replies.push(key);
        // The same words typed again after this reply are a new prompt.
        self.seen.user = None;
        self.log.push(ts, Item::Text(text));
    }

    fn feed(&mut self, v: &Value) {
        let ts = timestamp_of(v);
        let payload = v.get("payload").unwrap_or(&Value::Null);
        let ptype = str_of(payload, "type").unwrap_or("");
        match str_of(v, "type").unwrap_or("") {
            "response_item" => match ptype {
                "message" => match str_of(payload, "role") {
                    Some("user") => self.user(ts, user_text(payload)),
                    Some("assistant") => {
                        let text = texts(payload.get("content"), &["output_text", "text"]);
                        self.reply(ts, text);
                    }
                    _ => {} // developer / system: harness
                },
                "function_call" | "custom_tool_call" => {
                    self.log.push(ts, Item::Tool(call(payload)));
                }
                "local_shell_call" => {
                    let cmd = payload
                        .get("action")
                        .and_then(|a| a.get("command"))
                        .and_then(Value::as_array)
                        .and_then(|w| argv(w));
                    self.log.push(ts, Item::Tool(tool_line(Some("shell"), cmd)));
                }
                "web_search_call" => {
                    let q = payload
                        .get("action")
                        .and_then(|a| str_of(a, "query"))
                        .map(str::to_string);
                    self.log
                        .push(ts, Item::Tool(tool_line(Some("web_search"), q)));
                }
                _ => {} // tool output, reasoning
            },
            "event_msg" => match ptype {
                "task_started" => {
                    self.seen = Seen::default();
                    self.log.push(ts, Item::Break);
                }
                "task_complete" => {
                    let text = str_of(payload, "last_agent_message").and_then(non_empty);
                    self.reply(ts, text);
                    self.log.push(ts, Item::Break);
                }
                "turn_aborted" => {
                    let why = str_of(payload, "reason").and_then(|r| first_line(r, 80));
                    let n = match why {
                        Some(r) => format!("Turn aborted ({})", escape_inline(&r)),
                        None => "Turn aborted".to_string(),
                    };
                    self.log.push(ts, Item::Note(n));
                }
                "item_completed" => {
                    let item = payload.get("item").unwrap_or(&Value::Null);
                    if str_of(item, "type") == Some("UserMessage") {
                        let text = texts(item.get("content"), &["text", "input_text"]);
                        self.user(ts, text);
                    }
                }
                "user_message" => {
                    self.user(ts, str_of(payload, "message").and_then(non_empty));
                }
                "agent_message" => {
                    self.reply(ts, str_of(payload, "message").and_then(non_empty));
                }
                _ => {}
            },
            "compacted" => self
                .log
                .push(ts, Item::Note("Conversation compacted".into())),
            _ => {}
        }
    }
}

/// Renders a rollout (JSONL bytes).
pub(crate) fn markdown(bytes: &[u8]) -> Conversation {
    let mut st = State {
        log: Log::default(),
        seen: Seen::default(),
    };
    for_each_record(bytes, &mut TranscriptInfo::default(), |v| st.feed(v));
    st.log.finish()
}

/// The prompt or reply one rollout record holds.
pub(crate) fn message_of(v: &Value) -> Option<Message> {
    {
        let payload = v.get("payload").unwrap_or(&Value::Null);
        let ptype = str_of(payload, "type").unwrap_or("");
        match (str_of(v, "type")?, ptype) {
            ("response_item", "message") => match str_of(payload, "role") {
                Some("user") => user_text(payload).map(Message::User),
                Some("assistant") => {
                    texts(payload.get("content"), &["output_text", "text"]).map(Message::Reply)
                }
                _ => None,
            },
            ("event_msg", "task_complete") => str_of(payload, "last_agent_message")
                .and_then(non_empty)
                .map(Message::Reply),
            ("event_msg", "item_completed") => {
                let item = payload.get("item").unwrap_or(&Value::Null);
                (str_of(item, "type") == Some("UserMessage"))
                    .then(|| texts(item.get("content"), &["text", "input_text"]))
                    .flatten()
                    .map(Message::User)
            }
            ("event_msg", "user_message") => str_of(payload, "message")
                .and_then(non_empty)
                .map(Message::User),
            ("event_msg", "agent_message") => str_of(payload, "message")
                .and_then(non_empty)
                .map(Message::Reply),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::codex::transcript::parse;
    use crate::agents::render::test_kit::{at, check_invariants, jsonl, jsonl_soup, nasty_text};
    use crate::agents::render::Conversation;
    use proptest::prelude::*;
    use serde_json::json;

    const SAMPLES: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/codex/rollout-samples.jsonl"
    ));
    /// Another agent's records: never this renderer's.
    const OTHER_SAMPLES: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/claude/transcript-samples.jsonl"
    ));

    #[test]
    fn fixture_renders_prompt_reply_and_tool_in_order() {
        let c = markdown(SAMPLES.as_bytes());
        let md = &c.markdown;
        let prompt = at(md, "### User · 2026-12-02 13:56 UTC\n\nhello codex mock\n");
        let reply = at(
            md,
            "### Assistant · 2026-12-02 13:57 UTC\n\n\
             Hello from the mock OpenAI server (canned reply #1). PARKTEST-OK\n",
        );
        let tool = at(
            md,
            "### Assistant · 2026-12-02 14:01 UTC\n\n- 🔧 exec_command: `sleep 45`\n",
        );
        assert!(prompt < reply && reply < tool, "{md}");
        // The reply is both a response_item and the task_complete summary.
        assert_eq!(md.matches("canned reply #1").count(), 1, "{md}");
        assert_eq!((c.turns, c.tool_calls), (1, 1));
    }

    #[test]
    fn fixture_leaves_out_harness_and_tool_output() {
        let md = markdown(SAMPLES.as_bytes()).markdown;
        for absent in [
            "environment_context",    // harness user message
            "/tmp/lab/work/cx-a",     // its cwd, and turn_context's
            "skills_instructions",    // developer message
            "Collaboration Mode",     // developer message, turn_context
            "You are a coding agent", // session_meta base instructions
            "Chunk ID",               // function_call_output
            "Wall time",              // function_call_output
            "total_tokens",           // token_count / token_usage_record
            "mock-model",             // world_state, settings
        ] {
            assert!(!md.contains(absent), "{absent:?} leaked into:\n{md}");
        }
    }

    #[test]
    fn fixture_last_messages_match_the_parser() {
        let c = markdown(SAMPLES.as_bytes());
        let info = parse(SAMPLES.as_bytes());
        assert_eq!(c.last_user.as_deref(), Some("hello codex mock"));
        assert_eq!(
            c.last_assistant.as_deref(),
            Some("Hello from the mock OpenAI server (canned reply #1). PARKTEST-OK")
        );
        check_invariants(&c, &info.last_assistant);
    }

    fn codex(at: &str, ty: &str, payload: Value) -> String {
        json!({"timestamp": at, "type": ty, "payload": payload}).to_string()
    }

    #[test]
    fn prompt_and_reply_written_twice_show_once_per_turn() {
        let user_item = |text: &str| {
            json!({"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": "<environment_context>\n<cwd>/w</cwd>\n</environment_context>"},
                {"type": "input_text", "text": text}]})
        };
        let reply_item = |text: &str| {
            json!({"type": "message", "role": "assistant",
                "content": [{"type": "output_text", "text": text}]})
        };
        let lines = [
            codex(
                "2026-12-02T10:00:00Z",
                "event_msg",
                json!({"type": "task_started"}),
            ),
            codex(
                "2026-12-02T10:00:00Z",
                "response_item",
                user_item("continue"),
            ),
            codex(
                "2026-12-02T10:00:00Z",
                "event_msg",
                json!({"type": "user_message", "message": "continue"}),
            ),
            codex(
                "2026-12-02T10:00:01Z",
                "event_msg",
                json!({"type": "agent_message", "message": "First answer."}),
            ),
            codex(
                "2026-12-02T10:00:01Z",
                "response_item",
                reply_item("First answer."),
            ),
            codex(
                "2026-12-02T10:00:02Z",
                "event_msg",
                json!({"type": "task_complete", "last_agent_message": "First answer."}),
            ),
            // The same words again, in a new turn: a new prompt.
            codex(
                "2026-12-02T10:05:00Z",
                "event_msg",
                json!({"type": "task_started"}),
            ),
            codex(
                "2026-12-02T10:05:00Z",
                "event_msg",
                json!({"type": "item_completed",
                "item": {"type": "UserMessage", "content": [{"type": "text", "text": "continue"}]}}),
            ),
            codex(
                "2026-12-02T10:05:00Z",
                "response_item",
                user_item("continue"),
            ),
            codex(
                "2026-12-02T10:05:03Z",
                "event_msg",
                json!({"type": "turn_aborted", "reason": "interrupted"}),
            ),
        ];
        let b = jsonl(&lines);
        let c = markdown(&b);
        let md = &c.markdown;
        assert_eq!(md.matches("\ncontinue\n").count(), 2, "{md}");
        assert_eq!(md.matches("First answer.").count(), 1, "{md}");
        assert!(md.ends_with("*Turn aborted (interrupted)*\n"), "{md}");
        assert!(!md.contains("environment_context"), "{md}");
        assert_eq!((c.turns, c.tool_calls), (2, 0));
        assert_eq!(c.last_user.as_deref(), Some("continue"));
        check_invariants(&c, &parse(&b).last_assistant);
    }

    #[test]
    fn tool_calls_are_one_liners() {
        let call = |name: &str, args: &str| json!({"type": "function_call", "name": name, "arguments": args, "call_id": "c"});
        let lines = [
            codex(
                "2026-12-02T10:00:00Z",
                "response_item",
                call(
                    "shell",
                    r#"{"command":["bash","-lc","cargo test --all\nsecond"],"workdir":"/w"}"#,
                ),
            ),
            codex(
                "2026-12-02T10:00:01Z",
                "response_item",
                json!({"type": "custom_tool_call",
                "name": "apply_patch", "call_id": "p",
                "input": "*** Begin Patch\n*** Update File: src/a.rs\n@@\n-PATCH-BODY\n*** Add File: b.rs\n*** End Patch"}),
            ),
            codex(
                "2026-12-02T10:00:02Z",
                "response_item",
                call("exec_command", "not json"),
            ),
            codex(
                "2026-12-02T10:00:03Z",
                "response_item",
                json!({"type": "custom_tool_call_output",
                "call_id": "p", "output": "CUSTOM-OUTPUT"}),
            ),
            codex(
                "2026-12-02T10:00:04Z",
                "response_item",
                json!({"type": "reasoning",
                "summary": [{"type": "summary_text", "text": "REASONING"}]}),
            ),
            codex(
                "2026-12-02T10:00:05Z",
                "response_item",
                call("update_plan", r#"{"plan":[]}"#),
            ),
        ];
        let c = markdown(&jsonl(&lines));
        assert_eq!(
            c.markdown,
            "### Assistant · 2026-12-02 10:00 UTC\n\n\
             - 🔧 shell: `cargo test --all`\n\
             - 🔧 apply_patch: `src/a.rs, b.rs`\n\
             - 🔧 exec_command: `not json`\n\
             - 🔧 update_plan\n"
        );
        assert_eq!((c.turns, c.tool_calls), (0, 4));
    }

    #[test]
    fn empty_and_garbage_input_render_nothing() {
        for b in [
            &b""[..],
            b"\n\n",
            b"not json\n\xff\xfe\n[1]\n{\"type\":\"user\"}",
            b"{\"type\":",
        ] {
            assert_eq!(markdown(b), Conversation::default());
        }
    }

    /// Lines of both fixtures, plus records around nasty text, whole or cut anywhere.
    fn soup() -> impl Strategy<Value = Vec<u8>> {
        let real: Vec<String> = SAMPLES
            .lines()
            .chain(OTHER_SAMPLES.lines())
            .map(str::to_string)
            .collect();
        let made = (nasty_text(), 0..5usize).prop_map(|(t, k)| {
            let at = "2026-12-02T10:00:00Z";
            match k {
                0 => codex(
                    at,
                    "response_item",
                    json!({"type": "message", "role": "user",
                    "content": [{"type": "input_text", "text": t}]}),
                ),
                1 => codex(
                    at,
                    "response_item",
                    json!({"type": "message", "role": "assistant",
                    "content": [{"type": "output_text", "text": t}]}),
                ),
                2 => codex(
                    at,
                    "event_msg",
                    json!({"type": "task_complete", "last_agent_message": t}),
                ),
                3 => codex(
                    at,
                    "response_item",
                    json!({"type": "function_call", "name": t,
                    "arguments": json!({"cmd": t}).to_string()}),
                ),
                _ => codex(
                    at,
                    "event_msg",
                    json!({"type": "agent_message", "message": t}),
                ),
            }
        });
        jsonl_soup(real, made)
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(b in prop::collection::vec(any::<u8>(), 0..4096)) {
            check_invariants(&markdown(&b), &parse(&b).last_assistant);
        }

        #[test]
        fn spliced_records_keep_the_invariants(b in soup()) {
            check_invariants(&markdown(&b), &parse(&b).last_assistant);
        }
    }
}
