//! A Cline CLI session as park reads and archives it. Cline 3.0.65 keeps a session in
//! `<data>/sessions/<id>/<id>.json` (its record: cwd, status, title, …) and the conversation in
//! `<data>/sessions/<id>/<id>.messages.json`: one pretty-printed JSON document
//! `{version, sessionId, messages: [{id, role, content: [blocks], ts}], system_prompt}` whose
//! blocks are Anthropic-shaped (`text`, `tool_use {name, input}`, `tool_result`). A user prompt's
//! text is wrapped as `<user_input mode="act">…</user_input>`.
//!
//! park reads and archives it as JSONL ([`export`]): line 1 `{"type":"session", "sessionId",
//! "cwd", "title"}`, then each message as it is, one per line, so the archive's raw-end check
//! walks it back line by line. `jq -s '{version: 1, sessionId: .[0].sessionId, messages: .[1:]}'`
//! turns an archived copy back into a messages file.
//!
//! Contract (pure over bytes, never panics): a prompt is a user message's text blocks (the
//! `<user_input>` wrapper taken off); a user message of tool results only is no prompt; a reply
//! is an assistant message's text blocks; `tool_use` blocks are calls. A turn is open while the
//! last message is a prompt or a tool result, or an assistant message that calls tools.

use crate::agents::render::{self, Conversation, Item, Log, Message};
use crate::agents::transcript::{for_each_record, str_of, TranscriptInfo};
use jiff::Timestamp;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// Where session `id`'s conversation lies under data dir `data`.
pub fn path(data: &Path, _cwd: &str, id: &str) -> PathBuf {
    data.join("sessions")
        .join(id)
        .join(format!("{id}.messages.json"))
}

/// Session `id`'s record (`<id>.json`) under data dir `data`.
pub fn record_path(data: &Path, id: &str) -> PathBuf {
    data.join("sessions").join(id).join(format!("{id}.json"))
}

/// Every conversation under data dir `data`: (session id, path).
pub fn all(data: &Path) -> Vec<(String, PathBuf)> {
    let Ok(rd) = std::fs::read_dir(data.join("sessions")) else {
        return vec![];
    };
    let mut v: Vec<(String, PathBuf)> = rd
        .flatten()
        .filter_map(|d| {
            let id = d.file_name().to_string_lossy().into_owned();
            super::valid_id(&id)?;
            let p = path(data, "", &id);
            p.is_file().then_some((id, p))
        })
        .collect();
    v.sort();
    v
}

/// The messages file `messages` (with its session record beside it, when there is one) as
/// park's JSONL.
pub fn export(messages: &Path) -> std::io::Result<Vec<u8>> {
    let doc: Value = serde_json::from_slice(&std::fs::read(messages)?)
        .map_err(|e| std::io::Error::other(format!("{}: {e}", messages.display())))?;
    let record = messages
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_suffix(".messages.json"))
        .map(|id| messages.with_file_name(format!("{id}.json")))
        .and_then(|p| std::fs::read(p).ok())
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok());
    Ok(to_jsonl(&doc, record.as_ref()))
}

/// The messages document (and the session record) as park's JSONL.
pub fn to_jsonl(doc: &Value, record: Option<&Value>) -> Vec<u8> {
    let title = record
        .and_then(|r| r.get("metadata"))
        .and_then(|m| str_of(m, "title"));
    let head = json!({
        "type": "session",
        "sessionId": str_of(doc, "sessionId"),
        "cwd": record.and_then(|r| str_of(r, "cwd")),
        "title": title,
    });
    let mut out = serde_json::to_vec(&head).unwrap_or_default();
    out.push(b'\n');
    for m in doc
        .get("messages")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice)
    {
        if let Ok(line) = serde_json::to_vec(m) {
            out.extend(line);
            out.push(b'\n');
        }
    }
    out
}

fn blocks(v: &Value) -> &[Value] {
    v.get("content")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The `<user_input mode="…">…</user_input>` wrapper taken off a prompt.
fn unwrap_input(t: &str) -> &str {
    let t = t.trim();
    match t.strip_prefix("<user_input") {
        Some(rest) => match (rest.find('>'), rest.rfind("</user_input>")) {
            (Some(open), Some(close)) if open < close => rest[open + 1..close].trim(),
            _ => t,
        },
        None => t,
    }
}

fn texts(v: &Value, user: bool) -> Option<String> {
    let t: Vec<&str> = blocks(v)
        .iter()
        .filter(|b| str_of(b, "type") == Some("text"))
        .filter_map(|b| str_of(b, "text"))
        .map(|t| if user { unwrap_input(t) } else { t.trim() })
        .filter(|s| !s.is_empty())
        .collect();
    (!t.is_empty()).then(|| t.join("\n\n"))
}

fn has_block(v: &Value, kind: &str) -> bool {
    blocks(v).iter().any(|b| str_of(b, "type") == Some(kind))
}

fn ts(v: &Value) -> Option<Timestamp> {
    Timestamp::from_millisecond(v.get("ts")?.as_i64()?).ok()
}

fn role(v: &Value) -> Option<&str> {
    str_of(v, "role").filter(|_| v.get("content").is_some())
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
            out.session_id = str_of(v, "sessionId").map(str::to_string);
            out.cwd = str_of(v, "cwd").map(str::to_string);
            out.ai_title = str_of(v, "title").map(str::to_string);
            return;
        }
        let at = ts(v);
        match role(v) {
            Some("user") => {
                out.turn_open = true;
                if let Some(t) = texts(v, true) {
                    out.first_prompt.get_or_insert_with(|| t.clone());
                    out.last_prompt = Some(t);
                    out.last_real_turn = at.or(out.last_real_turn);
                }
            }
            Some("assistant") => {
                if let Some(t) = texts(v, false) {
                    out.last_assistant = Some(t);
                    out.last_real_turn = at.or(out.last_real_turn);
                }
                out.turn_open = has_block(v, "tool_use");
            }
            _ => {}
        }
    });
    out.take_counts(&counts);
    out
}

fn call_line(b: &Value) -> String {
    let input = b.get("input");
    // `run_commands {commands: [...]}`: the command lines.
    let arg = input
        .and_then(|i| i.get("commands"))
        .and_then(Value::as_array)
        .map(|c| {
            c.iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join("; ")
        })
        .filter(|s| !s.is_empty())
        .map(|s| render::code_span(&s))
        .or_else(|| input.and_then(render::tool_arg));
    render::tool_line(str_of(b, "name"), arg)
}

/// Renders the session as the shared Markdown conversation.
pub fn markdown(bytes: &[u8]) -> Conversation {
    let mut log = Log::default();
    for_each_record(bytes, &mut TranscriptInfo::default(), |v| {
        let at = ts(v);
        match role(v) {
            Some("user") => {
                if let Some(t) = texts(v, true) {
                    log.last_user = Some(t.clone());
                    log.push(at, Item::User(t));
                }
            }
            Some("assistant") => {
                for b in blocks(v) {
                    match str_of(b, "type") {
                        Some("text") => {
                            if let Some(t) =
                                str_of(b, "text").map(str::trim).filter(|t| !t.is_empty())
                            {
                                log.push(at, Item::Text(t.to_string()));
                            }
                        }
                        Some("tool_use") => log.push(at, Item::Tool(call_line(b))),
                        _ => {}
                    }
                }
                if let Some(t) = texts(v, false) {
                    log.last_assistant = Some(t);
                }
                log.push(at, Item::Break);
            }
            _ => {}
        }
    });
    log.finish()
}

/// Reads a messages file for a scan.
pub fn read_file(p: &Path) -> std::io::Result<TranscriptInfo> {
    export(p).map(|b| parse(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> Vec<u8> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cline");
        let doc: Value =
            serde_json::from_slice(&std::fs::read(dir.join("tool.messages.json")).unwrap())
                .unwrap();
        let rec: Value =
            serde_json::from_slice(&std::fs::read(dir.join("tool.session.json")).unwrap()).unwrap();
        to_jsonl(&doc, Some(&rec))
    }

    #[test]
    fn a_real_session_reads_its_id_prompts_replies_tools_and_a_closed_turn() {
        let b = fixture();
        let i = parse(&b);
        assert_eq!(i.session_id.as_deref(), Some("1796585523333_z9qm9"));
        assert_eq!(i.cwd.as_deref(), Some("/tmp/cl/proj"));
        assert_eq!(i.first_prompt.as_deref(), Some("[tool echo hi-from-tool]"));
        assert_eq!(i.last_prompt.as_deref(), Some("[tool echo hi-from-tool]"));
        assert!(i
            .last_assistant
            .as_deref()
            .unwrap()
            .starts_with("Tool finished."));
        assert!(!i.turn_open);
        assert_eq!(i.bad_lines, 0);
        let md = markdown(&b);
        assert_eq!(md.turns, 2);
        assert!(md.markdown.contains("echo hi-from-tool"), "{}", md.markdown);
        assert!(!md.markdown.contains("user_input"), "{}", md.markdown);
        assert_eq!(md.last_assistant, i.last_assistant);
        let raw = render::raw_end(&b, message_of);
        assert_eq!(raw.last_reply, i.last_assistant);
        assert_eq!(raw.last_user, i.last_prompt);
    }

    #[test]
    fn a_prompt_or_a_tool_call_without_its_answer_keeps_the_turn_open() {
        let b = fixture();
        let lines: Vec<&[u8]> = b.split(|&c| c == b'\n').filter(|l| !l.is_empty()).collect();
        let upto = |n: usize| lines[..n].join(&b'\n');
        // Session line and the first prompt.
        assert!(parse(&upto(2)).turn_open);
        assert!(!parse(&upto(3)).turn_open);
        // The tool call, then its result.
        assert!(parse(&upto(5)).turn_open);
        assert!(parse(&upto(6)).turn_open);
        assert!(!parse(&upto(7)).turn_open);
    }

    #[test]
    fn the_user_input_wrapper_comes_off() {
        assert_eq!(
            unwrap_input("<user_input mode=\"plan\">hi</user_input>"),
            "hi"
        );
        assert_eq!(unwrap_input("plain"), "plain");
        assert_eq!(unwrap_input("<user_input broken"), "<user_input broken");
    }
}
