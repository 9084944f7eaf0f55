//! An OpenCode session as park reads and archives it: JSONL built from OpenCode's database by
//! [`super::db::export`]. Line 1 is `{"type":"session","info":{id, parentID, directory, title,
//! time}}`; each further line is `{"type":"message","info":<the message row's JSON, with id and
//! sessionID>,"parts":[<its parts' JSON, with id>]}` in creation order: the shape of one message
//! in `opencode export`, so `jq -s '{info: .[0].info, messages: [.[1:][] | {info, parts}]}'`
//! turns an archived copy into a file `opencode import` takes.
//!
//! Contract (pure over bytes, never panics): a user message's prompt is its text parts that are
//! not `synthetic` or `ignored`, joined by a blank line; a reply is an assistant message's text
//! parts; tool parts are calls. A turn is open while the last message is a prompt, or an
//! assistant message without `time.completed`, or one that finished to call tools.

use crate::agents::render::{self, Conversation, Item, Log, Message};
use crate::agents::transcript::{for_each_record, str_of, TranscriptInfo};
use jiff::Timestamp;
use serde_json::Value;

fn info(v: &Value) -> Option<&Value> {
    v.get("info")
}

fn role(v: &Value) -> Option<&str> {
    (str_of(v, "type") == Some("message"))
        .then(|| info(v).and_then(|i| str_of(i, "role")))
        .flatten()
}

fn parts(v: &Value) -> &[Value] {
    v.get("parts")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn texts(v: &Value, skip_synthetic: bool) -> Option<String> {
    let t: Vec<&str> = parts(v)
        .iter()
        .filter(|p| str_of(p, "type") == Some("text"))
        .filter(|p| {
            !skip_synthetic
                || !(p.get("synthetic").and_then(Value::as_bool) == Some(true)
                    || p.get("ignored").and_then(Value::as_bool) == Some(true))
        })
        .filter_map(|p| str_of(p, "text"))
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    (!t.is_empty()).then(|| t.join("\n\n"))
}

fn created(v: &Value) -> Option<Timestamp> {
    let ms = info(v)?.get("time")?.get("created")?.as_i64()?;
    Timestamp::from_millisecond(ms).ok()
}

fn call_line(p: &Value) -> String {
    let arg = p
        .get("state")
        .and_then(|s| s.get("input"))
        .and_then(render::tool_arg);
    render::tool_line(str_of(p, "tool"), arg)
}

/// The prompt or reply one line holds.
pub fn message_of(v: &Value) -> Option<Message> {
    match role(v)? {
        "user" => texts(v, true).map(Message::User),
        "assistant" => texts(v, false).map(Message::Reply),
        _ => None,
    }
}

pub fn parse(bytes: &[u8]) -> TranscriptInfo {
    let mut out = TranscriptInfo::default();
    let mut counts = TranscriptInfo::default();
    for_each_record(bytes, &mut counts, |v| {
        if str_of(v, "type") == Some("session") {
            if let Some(i) = info(v) {
                out.session_id = str_of(i, "id").map(str::to_string);
                out.cwd = str_of(i, "directory").map(str::to_string);
                out.ai_title = str_of(i, "title").map(str::to_string);
            }
            return;
        }
        let ts = created(v);
        match role(v) {
            Some("user") => {
                out.turn_open = true;
                if let Some(t) = texts(v, true) {
                    out.first_prompt.get_or_insert_with(|| t.clone());
                    out.last_prompt = Some(t);
                    out.last_real_turn = ts.or(out.last_real_turn);
                }
            }
            Some("assistant") => {
                if let Some(t) = texts(v, false) {
                    out.last_assistant = Some(t);
                    out.last_real_turn = ts.or(out.last_real_turn);
                }
                let i = info(v);
                let completed = i
                    .and_then(|i| i.get("time"))
                    .and_then(|t| t.get("completed"))
                    .is_some();
                let calls_tools = i.and_then(|i| str_of(i, "finish")) == Some("tool-calls");
                out.turn_open = !completed || calls_tools;
            }
            _ => {}
        }
    });
    out.take_counts(&counts);
    out
}

/// Renders the session as the shared Markdown conversation.
pub fn markdown(bytes: &[u8]) -> Conversation {
    let mut log = Log::default();
    for_each_record(bytes, &mut TranscriptInfo::default(), |v| {
        let ts = created(v);
        match role(v) {
            Some("user") => {
                if let Some(t) = texts(v, true) {
                    log.last_user = Some(t.clone());
                    log.push(ts, Item::User(t));
                }
            }
            Some("assistant") => {
                for p in parts(v) {
                    match str_of(p, "type") {
                        Some("text") => {
                            if let Some(t) =
                                str_of(p, "text").map(str::trim).filter(|t| !t.is_empty())
                            {
                                log.push(ts, Item::Text(t.to_string()));
                            }
                        }
                        Some("tool") => log.push(ts, Item::Tool(call_line(p))),
                        Some("compaction") => {
                            log.push(ts, Item::Note("Conversation compacted".into()))
                        }
                        _ => {}
                    }
                }
                if let Some(t) = texts(v, false) {
                    log.last_assistant = Some(t);
                }
                log.push(ts, Item::Break);
            }
            _ => {}
        }
    });
    log.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) const SAMPLE: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/opencode/session.jsonl"
    ));

    #[test]
    fn a_real_session_reads_its_id_title_prompts_replies_and_a_closed_turn() {
        let i = parse(SAMPLE.as_bytes());
        assert_eq!(
            i.session_id.as_deref(),
            Some("ses_db8655eccffeyjsoC5PJgY041b")
        );
        assert_eq!(i.cwd.as_deref(), Some("/tmp/ocp/proj/a"));
        assert_eq!(i.first_prompt.as_deref(), Some("hello first session"));
        assert_eq!(i.last_prompt.as_deref(), Some("run [tool echo PARKTOOL]"));
        assert!(i
            .last_assistant
            .as_deref()
            .unwrap()
            .starts_with("Tool finished."));
        assert!(!i.turn_open);
        assert_eq!(i.bad_lines, 0);
        let md = markdown(SAMPLE.as_bytes());
        assert_eq!(md.turns, 3);
        assert!(md.markdown.contains("echo PARKTOOL"), "{}", md.markdown);
        assert_eq!(md.last_assistant, i.last_assistant);
        let raw = render::raw_end(SAMPLE.as_bytes(), message_of);
        assert_eq!(raw.last_reply, i.last_assistant);
    }

    #[test]
    fn a_prompt_without_its_reply_or_a_tool_call_keeps_the_turn_open() {
        let lines: Vec<&str> = SAMPLE.lines().collect();
        // Session line, first prompt only.
        let cut = format!("{}\n{}\n", lines[0], lines[1]);
        assert!(parse(cut.as_bytes()).turn_open);
        let running =
            r#"{"type":"message","info":{"role":"assistant","time":{"created":1}},"parts":[]}"#;
        assert!(parse(format!("{cut}{running}\n").as_bytes()).turn_open);
        let tools = r#"{"type":"message","info":{"role":"assistant","time":{"created":1,"completed":2},"finish":"tool-calls"},"parts":[]}"#;
        assert!(parse(format!("{cut}{tools}\n").as_bytes()).turn_open);
    }
}
