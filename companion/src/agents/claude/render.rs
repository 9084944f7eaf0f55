//! Claude Code's renderer: a transcript as Markdown, built with the shared kit
//! ([`crate::agents::render`]), and the prompt or reply one record holds ([`message_of`]).
//! Events are shown in timestamp order (stable, a record without a timestamp stays after the one
//! before it): Claude sometimes writes a turn's reply before its prompt.

use jiff::Timestamp;
use serde_json::Value;

use super::transcript::{reply_text, User};
use crate::agents::render::{
    code_span, first_line, note, tool_arg, tool_line, Conversation, Item, Log, Message, ARG_CHARS,
};
use crate::agents::transcript::{for_each_record, non_empty, str_of, timestamp_of, TranscriptInfo};

fn is_true(v: &Value, key: &str) -> bool {
    v.get(key).and_then(Value::as_bool) == Some(true)
}

/// The text of a user record as `User::classify` reads it, and whether it holds a tool
/// result.
fn user_text(v: &Value) -> (String, bool) {
    match v.get("message").and_then(|m| m.get("content")) {
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
        _ => (String::new(), false),
    }
}

fn between<'a>(s: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let start = s.find(open)? + open.len();
    let len = s[start..].find(close)?;
    Some(s[start..start + len].trim())
}

/// The note for a slash-command record: `/name args`.
fn command_note(text: &str) -> Option<Item> {
    let name = between(text, "<command-name>", "</command-name>").filter(|n| !n.is_empty())?;
    let cmd = match between(text, "<command-args>", "</command-args>") {
        Some(args) if !args.is_empty() => format!("{name} {args}"),
        _ => name.to_string(),
    };
    let cmd = first_line(&cmd, ARG_CHARS)?;
    Some(Item::Note(format!("Command {}", code_span(&cmd))))
}

fn user(log: &mut Log, v: &Value, ts: Option<Timestamp>) {
    // A compaction summary is written as a user message but nobody typed it.
    if is_true(v, "isCompactSummary") || is_true(v, "isVisibleInTranscriptOnly") {
        return;
    }
    match User::classify(v) {
        User::Prompt(text) => {
            log.last_user = Some(text.clone());
            log.push(ts, Item::User(text));
        }
        User::Closes => {
            let (text, _) = user_text(v);
            if text
                .trim_start()
                .starts_with("[Request interrupted by user")
            {
                if let Some(n) = note(&text) {
                    log.push(ts, n);
                }
            }
            // Local command output: its command was noted already.
        }
        User::Continues => {
            let (text, tool_result) = user_text(v);
            if tool_result {
                return;
            }
            let t = text.trim_start();
            let cmd = (t.starts_with("<command-name>") || t.starts_with("<command-message>"))
                .then(|| command_note(t))
                .flatten();
            // A notification or command makes the model run again: its answer is a new stretch.
            log.push(ts, cmd.unwrap_or(Item::Break));
        }
        User::Ignored => {}
    }
}

fn assistant(log: &mut Log, v: &Value, ts: Option<Timestamp>) {
    if is_true(v, "isSidechain") {
        return;
    }
    let msg = v.get("message");
    let blocks: &[Value] = msg
        .and_then(|m| m.get("content"))
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    // Read as the transcript reader reads it, so `last_assistant` is the same string.
    let (text, synthetic) = reply_text(msg);
    if synthetic {
        // API errors and limits are worth a line; "No response requested." is not.
        if text.trim() != "No response requested." {
            if let Some(n) = note(&text) {
                log.push(ts, n);
            }
        }
        return;
    }
    if let Some(t) = non_empty(&text) {
        log.last_assistant = Some(t.clone());
        log.push(ts, Item::Text(t));
    }
    for b in blocks {
        if matches!(str_of(b, "type"), Some("tool_use" | "server_tool_use")) {
            let arg = b.get("input").and_then(tool_arg);
            log.push(ts, Item::Tool(tool_line(str_of(b, "name"), arg)));
        }
    }
}

/// Renders a transcript (JSONL bytes).
pub(crate) fn markdown(bytes: &[u8]) -> Conversation {
    let mut log = Log::default();
    for_each_record(bytes, &mut TranscriptInfo::default(), |v| {
        let ts = timestamp_of(v);
        match str_of(v, "type") {
            Some("user") => user(&mut log, v, ts),
            Some("assistant") => assistant(&mut log, v, ts),
            Some("system") => match str_of(v, "subtype") {
                Some("turn_duration") => log.push(ts, Item::Break),
                // 2.1.332 writes some local commands' echo (`/rename`, `/context`) here instead
                // of in a user record; their output, like a user record's, is left out.
                Some("local_command") => {
                    let t = str_of(v, "content").unwrap_or("").trim_start();
                    if t.starts_with("<command-name>") || t.starts_with("<command-message>") {
                        if let Some(n) = command_note(t) {
                            log.push(ts, n);
                        }
                    }
                }
                Some("compact_boundary") => {
                    log.push(ts, Item::Note("Conversation compacted".into()))
                }
                _ => {}
            },
            _ => {}
        }
    });
    log.in_time_order();
    log.finish()
}

/// The prompt or reply one record holds, by the rules the renderer uses (a compaction
/// summary, meta, sidechain, synthetic replies and tool results are neither).
pub(crate) fn message_of(v: &Value) -> Option<Message> {
    match str_of(v, "type")? {
        "user" if is_true(v, "isCompactSummary") || is_true(v, "isVisibleInTranscriptOnly") => None,
        "user" => match User::classify(v) {
            User::Prompt(t) => Some(Message::User(t)),
            _ => None,
        },
        "assistant" if is_true(v, "isSidechain") => None,
        "assistant" => {
            let (text, synthetic) = reply_text(v.get("message"));
            (!synthetic)
                .then(|| non_empty(&text))
                .flatten()
                .map(Message::Reply)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::claude::transcript::parse;
    use crate::agents::render::test_kit::{
        at, check_invariants, jsonl, jsonl_soup, nasty_text, top_headings,
    };
    use crate::agents::render::Conversation;
    use proptest::prelude::*;
    use serde_json::json;

    const SAMPLES: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/claude/transcript-samples.jsonl"
    ));
    /// Another agent's records: never this renderer's.
    const OTHER_SAMPLES: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/codex/rollout-samples.jsonl"
    ));

    #[test]
    fn fixture_renders_prompt_reply_and_tool_in_order() {
        let c = markdown(SAMPLES.as_bytes());
        let md = &c.markdown;
        let prompt = at(
            md,
            "### User · 2026-12-02 13:50 UTC\n\nhello mock, please reply\n",
        );
        let reply = at(
            md,
            "### Assistant · 2026-12-02 13:50 UTC\n\n\
             Hello from the mock Anthropic server (canned reply #5). PARKTEST-OK\n",
        );
        // The turn_duration ended that turn: the later tool call gets its own heading.
        let tool = at(
            md,
            "### Assistant · 2026-12-02 14:01 UTC\n\n- 🔧 Bash: `sleep 40`\n",
        );
        assert!(prompt < reply && reply < tool, "{md}");
        assert_eq!(c.turns, 1);
        assert_eq!(c.tool_calls, 1);
        assert_eq!(md.matches("### ").count(), 3, "{md}");
    }

    #[test]
    fn fixture_leaves_out_tool_output_and_bookkeeping() {
        let md = markdown(SAMPLES.as_bytes()).markdown;
        for absent in [
            "Exit code 137",                          // tool_result / toolUseResult
            "mock tool call",                         // the Bash description, not the command
            "Catch-all for any task",                 // attachment / agent_listing_delta
            "deep-research",                          // attachment / skill_listing
            "second prompt, take your time",          // last-prompt
            "task-notification",                      // queue-operation
            "Mock please refactor the parser module", // ai-title: the caller's header
            "trackedFileBackups",                     // file-history-snapshot
            "158f2a09",                               // ids
        ] {
            assert!(!md.contains(absent), "{absent:?} leaked into:\n{md}");
        }
    }

    #[test]
    fn fixture_last_messages_match_the_parser() {
        let c = markdown(SAMPLES.as_bytes());
        let info = parse(SAMPLES.as_bytes());
        assert_eq!(c.last_user.as_deref(), Some("hello mock, please reply"));
        assert_eq!(
            c.last_assistant.as_deref(),
            Some("Hello from the mock Anthropic server (canned reply #5). PARKTEST-OK")
        );
        check_invariants(&c, &info.last_assistant);
    }

    fn claude(ty: &str, content: Value, at: &str, extra: Value) -> String {
        let mut v = json!({"type": ty, "message": {"role": ty, "model": "claude-opus-4-8",
            "content": content}, "timestamp": at, "sessionId": "158f2a09-8e02-4cf8-bbf8-0710d4e8624e"});
        if let (Some(o), Some(e)) = (v.as_object_mut(), extra.as_object()) {
            o.extend(e.clone());
        }
        v.to_string()
    }

    #[test]
    fn notes_and_skipped_records() {
        let human = json!({"origin": {"kind": "human"}, "promptSource": "typed"});
        let none = json!({});
        let b = jsonl(&[
            claude(
                "user",
                json!("run the tests"),
                "2026-12-02T10:00:00Z",
                human.clone(),
            ),
            claude(
                "assistant",
                json!([{"type": "thinking", "thinking": "SECRET-THOUGHT"},
                    {"type": "text", "text": "Running them."},
                    {"type": "tool_use", "id": "t1", "name": "Bash",
                     "input": {"command": "cargo test\necho second-line", "description": "run"}}]),
                "2026-12-02T10:00:01Z",
                none.clone(),
            ),
            claude(
                "user",
                json!([{"type": "tool_result", "tool_use_id": "t1", "content": "TOOL-OUTPUT-LINE"}]),
                "2026-12-02T10:00:02Z",
                none.clone(),
            ),
            claude(
                "user",
                json!("[Request interrupted by user for tool use]"),
                "2026-12-02T10:00:03Z",
                none.clone(),
            ),
            claude(
                "user",
                json!("META-CAVEAT"),
                "2026-12-02T10:00:04Z",
                json!({"isMeta": true}),
            ),
            claude(
                "assistant",
                json!([{"type": "text", "text": "SIDECHAIN-REPLY"}]),
                "2026-12-02T10:00:05Z",
                json!({"isSidechain": true}),
            ),
            claude(
                "user",
                json!("<command-name>/model</command-name>\n<command-args>opus</command-args>"),
                "2026-12-02T10:01:00Z",
                human.clone(),
            ),
            claude(
                "user",
                json!("<local-command-stdout>LOCAL-STDOUT</local-command-stdout>"),
                "2026-12-02T10:01:01Z",
                human.clone(),
            ),
            claude(
                "user",
                json!("<task-notification>NOTIFICATION</task-notification>"),
                "2026-12-02T10:02:00Z",
                json!({"origin": {"kind": "task-notification"}}),
            ),
            claude(
                "assistant",
                json!([{"type": "text", "text": "API Error: 529 overloaded"}]),
                "2026-12-02T10:02:01Z",
                json!({"message": {"model": "<synthetic>",
                    "content": [{"type": "text", "text": "API Error: 529 overloaded"}]}}),
            ),
            claude(
                "assistant",
                json!([{"type": "text", "text": "No response requested."}]),
                "2026-12-02T10:02:02Z",
                none.clone(),
            ),
            claude(
                "user",
                json!("SUMMARY-OF-BEFORE"),
                "2026-12-02T10:03:00Z",
                json!({"isCompactSummary": true}),
            ),
        ]);
        let c = markdown(&b);
        let md = &c.markdown;
        let order = [
            "### User · 2026-12-02 10:00 UTC\n\nrun the tests\n",
            "### Assistant · 2026-12-02 10:00 UTC\n\nRunning them.\n\n- 🔧 Bash: `cargo test`\n",
            "*[Request interrupted by user for tool use]*",
            "*Command `/model opus`*",
            "*API Error: 529 overloaded*",
        ];
        let pos: Vec<usize> = order.iter().map(|s| at(md, s)).collect();
        assert!(pos.windows(2).all(|w| w[0] < w[1]), "{md}");
        for absent in [
            "SECRET-THOUGHT",
            "second-line",
            "TOOL-OUTPUT-LINE",
            "META-CAVEAT",
            "SIDECHAIN-REPLY",
            "LOCAL-STDOUT",
            "NOTIFICATION",
            "No response requested",
            "SUMMARY-OF-BEFORE",
        ] {
            assert!(!md.contains(absent), "{absent:?} leaked into:\n{md}");
        }
        assert_eq!((c.turns, c.tool_calls), (1, 1));
        assert_eq!(c.last_user.as_deref(), Some("run the tests"));
        assert_eq!(c.last_assistant.as_deref(), Some("Running them."));
        check_invariants(&c, &parse(&b).last_assistant);
    }

    #[test]
    fn v2_1_332_local_commands_are_noted_like_2_1_197_ones() {
        // Real 2.1.332: /compact and /model still echo in user records, /rename and /context in
        // `local_command` system records; outputs and the compaction summary stay out.
        let b = include_bytes!("../../../tests/fixtures/claude/commands-2.1.332.jsonl");
        let c = markdown(b);
        let md = &c.markdown;
        let order = [
            "*Command `/clear`*",
            "second prompt before compact",
            "*Command `/compact`*",
            "*Conversation compacted*",
            "*Command `/model`*",
            "*Command `/rename my-renamed-session`*",
            "a prompt in manual mode",
            "*Command `/context`*",
        ];
        let pos: Vec<usize> = order.iter().map(|s| at(md, s)).collect();
        assert!(pos.windows(2).all(|w| w[0] < w[1]), "{md}");
        for absent in [
            "Session renamed to",
            "Set model to",
            "Context Usage",
            "This session is being continued",
        ] {
            assert!(!md.contains(absent), "{absent:?} leaked into:\n{md}");
        }
        assert_eq!(c.turns, 2);
        check_invariants(&c, &parse(b).last_assistant);
    }

    #[test]
    fn reply_written_before_its_prompt_follows_it() {
        // Real 2.1.197 file order (see transcript.rs): the reply lands before its prompt.
        let b = concat!(
            r#"{"type":"assistant","timestamp":"2026-12-02T15:33:48.666Z","message":{"role":"assistant","content":[{"type":"text","text":"Hello PARKTEST-OK"}]}}"#,
            "\n",
            r#"{"type":"system","subtype":"turn_duration","timestamp":"2026-12-02T15:33:48.674Z"}"#,
            "\n",
            r#"{"type":"user","timestamp":"2026-12-02T15:33:48.334Z","origin":{"kind":"human"},"promptSource":"typed","message":{"role":"user","content":"second agent"}}"#,
        );
        let c = markdown(b.as_bytes());
        assert_eq!(
            c.markdown,
            "### User · 2026-12-02 15:33 UTC\n\nsecond agent\n\n\
             ### Assistant · 2026-12-02 15:33 UTC\n\nHello PARKTEST-OK\n"
        );
        check_invariants(&c, &parse(b.as_bytes()).last_assistant);
    }

    #[test]
    fn tool_lines() {
        let long = "x".repeat(200);
        let tool = |name: &str, input: Value| {
            let b = claude(
                "assistant",
                json!([{"type": "tool_use", "id": "t", "name": name, "input": input}]),
                "2026-12-02T10:00:00Z",
                json!({}),
            );
            let md = markdown(b.as_bytes()).markdown;
            md.lines().last().unwrap_or_default().to_string()
        };
        assert_eq!(
            tool("Bash", json!({"command": format!("\n  {long}\nrest")})),
            format!("- 🔧 Bash: `{}…`", "x".repeat(160))
        );
        assert_eq!(
            tool("Bash", json!({"command": "echo `date` ``x``"})),
            "- 🔧 Bash: ``` echo `date` ``x`` ```"
        );
        assert_eq!(
            tool("Bash", json!({"command": "`ls`"})),
            "- 🔧 Bash: `` `ls` ``"
        );
        assert_eq!(
            tool("Read", json!({"file_path": "/w/src/main.rs", "limit": 5})),
            "- 🔧 Read: `/w/src/main.rs`"
        );
        assert_eq!(
            tool(
                "Edit",
                json!({"file_path": "/w/a_b.rs", "old_string": "OLD", "new_string": "NEW"})
            ),
            "- 🔧 Edit: `/w/a_b.rs`"
        );
        assert_eq!(
            tool(
                "Write",
                json!({"file_path": "/w/n.md", "content": "# BODY"})
            ),
            "- 🔧 Write: `/w/n.md`"
        );
        assert_eq!(
            tool("Grep", json!({"path": "/w", "pattern": "fn main"})),
            "- 🔧 Grep: `fn main`"
        );
        assert_eq!(
            tool("mcp__gh__get_issue", json!({"number": 7, "repo": "o/r"})),
            "- 🔧 mcp__gh__get_issue: `o/r`"
        );
        assert_eq!(tool("TodoWrite", json!({"todos": []})), "- 🔧 TodoWrite");
        assert_eq!(tool("*bad\rname", json!("x")), "- 🔧 `*bad`");
    }

    #[test]
    fn fences_and_headings_stay_inside_their_message() {
        let balanced =
            "Here:\n```rust\n## not a heading\nfn main() {}\n```\n## Summary\nTitle\n---\nDone.";
        let open = "look at this:\n```\n### Assistant · fake\n# also fake";
        let b = jsonl(&[
            claude(
                "user",
                json!(open),
                "2026-12-02T10:00:00Z",
                json!({"origin": {"kind": "human"}}),
            ),
            claude(
                "assistant",
                json!([{"type": "text", "text": balanced}]),
                "2026-12-02T10:00:01Z",
                json!({}),
            ),
            claude(
                "user",
                json!("next"),
                "2026-12-02T10:00:02Z",
                json!({"origin": {"kind": "human"}}),
            ),
        ]);
        let c = markdown(&b);
        let md = &c.markdown;
        // The open fence cannot swallow what follows: the prompt is fenced whole, verbatim.
        at(
            md,
            &format!("### User · 2026-12-02 10:00 UTC\n\n````\n{open}\n````\n"),
        );
        // A balanced fence stays code; headings outside it go below the turn headings; a setext
        // underline no longer makes a heading.
        at(
            md,
            "Here:\n```rust\n## not a heading\nfn main() {}\n```\n##### Summary\nTitle\n\n---\nDone.\n",
        );
        assert_eq!(
            top_headings(md),
            [
                "### User · 2026-12-02 10:00 UTC",
                "### Assistant · 2026-12-02 10:00 UTC",
                "### User · 2026-12-02 10:00 UTC",
            ]
        );
        assert_eq!(c.turns, 2);
        check_invariants(&c, &parse(&b).last_assistant);
    }

    #[test]
    fn timestamps_render_in_utc_minutes() {
        let c = markdown(
            claude(
                "user",
                json!("hi"),
                "2026-12-02T23:59:59.999+05:00",
                json!({"origin": {"kind": "human"}}),
            )
            .as_bytes(),
        );
        assert_eq!(c.markdown, "### User · 2026-12-02 18:59 UTC\n\nhi\n");
        let c = markdown(br#"{"type":"user","message":{"content":"no time"}}"#);
        assert_eq!(c.markdown, "### User\n\nno time\n");
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
        let made = (nasty_text(), 0..3usize).prop_map(|(t, k)| {
            let at = "2026-12-02T10:00:00Z";
            match k {
                0 => claude("user", json!(t), at, json!({"origin": {"kind": "human"}})),
                1 => claude(
                    "assistant",
                    json!([{"type": "text", "text": t}]),
                    at,
                    json!({}),
                ),
                _ => claude(
                    "assistant",
                    json!([{"type": "text", "text": t},
                    {"type": "tool_use", "name": t, "input": {"command": t}}]),
                    at,
                    json!({}),
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
