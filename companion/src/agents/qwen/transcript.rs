//! Qwen Code chats: `<runtime>/projects/<sanitized cwd>/chats/<session id>.jsonl`, one JSON record
//! per line (`ChatRecordingService` in the 0.24.4 bundle): `{uuid, parentUuid, sessionId,
//! timestamp, type, provenance, cwd, version, …}` with `type` one of
//! * `user` — `message: {role:"user", parts:[{text}…]}`; a prompt the human typed has
//!   `provenance:"real_user"` and no `subtype` (or `mid_turn_user_message`); notifications carry
//!   `provenance:"system"` and make the model run again;
//! * `assistant` — `message: {role:"model", parts:[{text}|{text, thought:true}|{functionCall}]}`
//!   (absent when a record only carries usage);
//! * `tool_result` — the function responses sent back: the model runs again;
//! * `system` — bookkeeping by `subtype`: `turn_result` settles a turn, `custom_title` carries
//!   `systemPayload.customTitle`, `chat_compression`, `slash_command`, ….
//!
//! Contract: pure over bytes and never panics (lines read as in [`crate::agents::transcript`]);
//! a turn is open after a prompt, a tool call or a tool result, and closed by a reply without a
//! tool call or a `turn_result`. Ids that are not session ids are ignored.

use std::io;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::agents::render::{self, Conversation, Item, Log, Message};
use crate::agents::transcript::{
    for_each_record, non_empty, read_file_capped, str_of, timestamp_of, valid_session_id,
    TranscriptInfo, TAIL_CAP,
};

/// Qwen's `sanitizeCwd`: every UTF-16 code unit that is not `[A-Za-z0-9]` becomes `-` (no length
/// cap). Lossy: it only locates the directory.
pub fn project_dir_name(cwd: &str) -> String {
    cwd.encode_utf16()
        .map(|u| match u8::try_from(u) {
            Ok(b) if b.is_ascii_alphanumeric() => char::from(b),
            _ => '-',
        })
        .collect()
}

/// Where Qwen keeps session `id` of `cwd` under runtime dir `runtime`. An id that is not a
/// session id is reduced to its id characters, so the path stays inside the chats folder.
pub fn path(runtime: &Path, cwd: &str, id: &str) -> PathBuf {
    let id: String = id
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect();
    let id = if id.is_empty() { "-".to_string() } else { id };
    runtime
        .join("projects")
        .join(project_dir_name(cwd))
        .join("chats")
        .join(format!("{id}.jsonl"))
}

/// Every chat under `runtime/projects/*/chats/<id>.jsonl` (no symlinks followed).
pub fn all(runtime: &Path) -> Vec<(String, PathBuf)> {
    crate::agents::transcript::sessions_by_project(&runtime.join("projects"), "chats")
}

fn parts(v: &Value) -> &[Value] {
    v.get("message")
        .and_then(|m| m.get("parts"))
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// The text parts of a message (thoughts left out), joined by newlines.
fn text_of(v: &Value) -> Option<String> {
    let texts: Vec<&str> = parts(v)
        .iter()
        .filter(|p| p.get("thought").and_then(Value::as_bool) != Some(true))
        .filter_map(|p| str_of(p, "text"))
        .collect();
    non_empty(&texts.join("\n"))
}

fn calls(v: &Value) -> impl Iterator<Item = &Value> {
    parts(v).iter().filter_map(|p| p.get("functionCall"))
}

/// What one `user` record is.
enum User {
    Prompt(String),
    /// Makes the model run again (a notification, a background task finishing).
    Continues,
    Ignored,
}

fn classify_user(v: &Value) -> User {
    let subtype = str_of(v, "subtype");
    let system = str_of(v, "provenance") == Some("system");
    if system {
        return User::Continues;
    }
    match subtype {
        None | Some("mid_turn_user_message") | Some("realtime_message") => match text_of(v) {
            Some(t) => User::Prompt(t),
            None if parts(v).iter().any(|p| p.get("functionResponse").is_some()) => User::Continues,
            None => User::Ignored,
        },
        _ => User::Ignored,
    }
}

/// The prompt or reply one record holds (the archive's raw-end check and the renderer agree).
pub(crate) fn message_of(v: &Value) -> Option<Message> {
    match str_of(v, "type")? {
        "user" => match classify_user(v) {
            User::Prompt(t) => Some(Message::User(t)),
            _ => None,
        },
        "assistant" => text_of(v).map(Message::Reply),
        _ => None,
    }
}

/// Parses a Qwen Code chat (JSONL bytes).
pub fn parse(bytes: &[u8]) -> TranscriptInfo {
    let mut info = TranscriptInfo::default();
    let mut counts = TranscriptInfo::default();
    let mut msg_session = None;
    for_each_record(bytes, &mut counts, |v| {
        let ty = str_of(v, "type").unwrap_or("");
        if let Some(id) = str_of(v, "sessionId").and_then(valid_session_id) {
            if matches!(ty, "user" | "assistant" | "tool_result") || msg_session.is_none() {
                msg_session = Some(id);
            }
        }
        if let Some(cwd) = str_of(v, "cwd").filter(|c| !c.is_empty()) {
            info.cwd = Some(cwd.to_string());
        }
        let ts = timestamp_of(v);
        let bump = |info: &mut TranscriptInfo| {
            if ts.is_some() && (info.last_real_turn.is_none() || info.last_real_turn < ts) {
                info.last_real_turn = ts;
            }
        };
        match ty {
            "user" => match classify_user(v) {
                User::Prompt(text) => {
                    info.turn_open = true;
                    bump(&mut info);
                    info.first_prompt.get_or_insert_with(|| text.clone());
                    info.last_prompt = Some(text);
                }
                User::Continues => info.turn_open = true,
                User::Ignored => {}
            },
            "assistant" => {
                let text = text_of(v);
                let calls = calls(v).count();
                if text.is_some() || calls > 0 {
                    bump(&mut info);
                }
                if let Some(t) = text {
                    info.last_assistant = Some(t);
                }
                if calls > 0 {
                    info.turn_open = true; // the tool (or its permission prompt) comes next
                } else if parts(v).iter().any(|p| str_of(p, "text").is_some()) {
                    info.turn_open = false;
                }
            }
            "tool_result" => info.turn_open = true,
            "system" => match str_of(v, "subtype") {
                Some("turn_result") | Some("goal_turn_end") => info.turn_open = false,
                Some("custom_title") => {
                    if let Some(t) = v
                        .get("systemPayload")
                        .and_then(|p| str_of(p, "customTitle"))
                        .and_then(non_empty)
                    {
                        info.ai_title = Some(t);
                    }
                }
                _ => {}
            },
            _ => {}
        }
    });
    info.session_id = msg_session;
    info.take_counts(&counts);
    info
}

/// Reads a chat cheaply (first 64 KiB and a growing tail window; see the shared reader).
///
/// # Errors
/// Any I/O error opening or reading `path`.
pub fn read_file(path: &Path) -> io::Result<TranscriptInfo> {
    read_file_capped(path, parse, TAIL_CAP)
}

/// The argument to show for a Gemini-style `functionCall` (`{name, args}`).
fn call_line(call: &Value) -> String {
    let arg = call.get("args").and_then(render::tool_arg);
    render::tool_line(str_of(call, "name"), arg)
}

/// Renders a Qwen Code chat as the shared Markdown conversation.
pub(crate) fn markdown(bytes: &[u8]) -> Conversation {
    let mut log = Log::default();
    for_each_record(bytes, &mut TranscriptInfo::default(), |v| {
        let ts = timestamp_of(v);
        match str_of(v, "type") {
            Some("user") => {
                if let User::Prompt(t) = classify_user(v) {
                    log.last_user = Some(t.clone());
                    log.push(ts, Item::User(t));
                }
            }
            Some("assistant") => {
                if let Some(t) = text_of(v) {
                    log.last_assistant = Some(t.clone());
                    log.push(ts, Item::Text(t));
                }
                for c in calls(v) {
                    log.push(ts, Item::Tool(call_line(c)));
                }
            }
            Some("system") => match str_of(v, "subtype") {
                Some("turn_result") => log.push(ts, Item::Break),
                Some("chat_compression") => {
                    log.push(ts, Item::Note("Conversation compacted".into()))
                }
                _ => {}
            },
            _ => {}
        }
    });
    log.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SID: &str = "5d0c1b3e-8a2f-4f7e-9c1d-2b3a4c5d6e7f";

    fn rec(ty: &str, extra: &str) -> String {
        format!(
            r#"{{"uuid":"u","parentUuid":null,"sessionId":"{SID}","timestamp":"2026-12-05T10:00:00.000Z","type":"{ty}","cwd":"/w/p","version":"0.24.4"{extra}}}"#
        )
    }

    #[test]
    fn the_project_dir_is_qwens_sanitized_cwd() {
        assert_eq!(project_dir_name("/tmp/a.b_c-d"), "-tmp-a-b-c-d");
        // A character outside the BMP is two UTF-16 units, so two dashes (JS regex, no `u`).
        assert_eq!(project_dir_name("/x😀"), "-x--");
        let p = path(Path::new("/r"), "/w/p", "../../etc/passwd");
        assert!(p.starts_with("/r/projects/-w-p/chats"), "{p:?}");
        assert_eq!(p.file_name().unwrap(), "etcpasswd.jsonl");
    }

    #[test]
    fn a_prompt_opens_a_turn_a_tool_call_keeps_it_open_and_a_reply_closes_it() {
        let user = rec(
            "user",
            r#","provenance":"real_user","message":{"role":"user","parts":[{"text":"hello"}]}"#,
        );
        let call = rec(
            "assistant",
            r#","message":{"role":"model","parts":[{"text":"thinking","thought":true},{"functionCall":{"name":"run_shell_command","args":{"command":"touch x"}}}]}"#,
        );
        let result = rec(
            "tool_result",
            r#","message":{"role":"user","parts":[{"functionResponse":{"name":"run_shell_command","response":{"output":""}}}]}"#,
        );
        let reply = rec(
            "assistant",
            r#","message":{"role":"model","parts":[{"text":"done"}]}"#,
        );
        let note = rec(
            "user",
            r#","provenance":"system","subtype":"background_task_completed","message":{"role":"user","parts":[{"text":"task finished"}]}"#,
        );
        let title = rec(
            "system",
            r#","subtype":"custom_title","systemPayload":{"customTitle":"Touch a file"}"#,
        );
        let t = |lines: &[&String]| {
            parse(
                lines
                    .iter()
                    .map(|l| format!("{l}\n"))
                    .collect::<String>()
                    .as_bytes(),
            )
        };
        let i = t(&[&user]);
        assert!(i.turn_open);
        assert_eq!(i.session_id.as_deref(), Some(SID));
        assert_eq!(i.first_prompt.as_deref(), Some("hello"));
        assert!(t(&[&user, &call]).turn_open);
        assert!(t(&[&user, &call, &result]).turn_open);
        let done = t(&[&user, &call, &result, &reply, &title]);
        assert!(!done.turn_open);
        assert_eq!(done.last_assistant.as_deref(), Some("done"));
        assert_eq!(done.ai_title.as_deref(), Some("Touch a file"));
        assert_eq!(done.cwd.as_deref(), Some("/w/p"));
        let again = t(&[&user, &reply, &note]);
        assert!(again.turn_open, "a notification makes the model run again");
        assert_eq!(again.last_prompt.as_deref(), Some("hello"), "not a prompt");

        let md = markdown(format!("{user}\n{call}\n{result}\n{reply}\n").as_bytes());
        assert_eq!(md.turns, 1);
        assert_eq!(md.tool_calls, 1);
        assert!(
            md.markdown.contains("run_shell_command: `touch x`"),
            "{}",
            md.markdown
        );
        assert!(!md.markdown.contains("thinking"), "thoughts are left out");
        assert_eq!(md.last_assistant.as_deref(), Some("done"));
    }

    #[test]
    fn garbage_never_panics_and_is_counted() {
        let i = parse(b"not json\n{\"type\":\"user\"}\n{\"trunc");
        assert_eq!(i.bad_lines, 2);
        assert!(i.truncated_last_line);
        assert!(!i.turn_open);
    }

    /// A real 0.24.4 chat (a slow reply, then a confirmed shell tool call and its result): no
    /// `turn_result` records, so the last reply is what closes the turn.
    #[test]
    fn a_real_chat_reads_closed_with_its_prompts_and_renders() {
        let bytes = include_bytes!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/qwen/real-0.24.4.jsonl"
        ));
        let i = parse(bytes);
        assert_eq!(
            i.session_id.as_deref(),
            Some("1cfb8705-3393-4dad-9641-3c8766d7cea5")
        );
        assert!(!i.turn_open);
        assert_eq!(i.bad_lines, 0);
        assert_eq!(i.cwd.as_deref(), Some("/tmp/qk/proj"));
        assert_eq!(i.first_prompt.as_deref(), Some("hello [slow 8]"));
        assert_eq!(
            i.last_prompt.as_deref(),
            Some("make it [tool touch /tmp/qk/proj/x.txt]")
        );
        assert!(i
            .last_assistant
            .as_deref()
            .is_some_and(|a| a.starts_with("Tool finished.")));
        let md = markdown(bytes);
        assert_eq!(md.turns, 2, "{}", md.markdown);
        assert_eq!(md.tool_calls, 1, "{}", md.markdown);
        assert!(
            md.markdown.contains("touch /tmp/qk/proj/x.txt"),
            "{}",
            md.markdown
        );
        assert_eq!(md.last_assistant, i.last_assistant);
        // Cut right after the tool call: the turn is open (the tool or its prompt is next).
        let upto_call: Vec<&[u8]> = bytes.split(|&b| b == b'\n').take(11).collect();
        assert!(parse(&upto_call.join(&b'\n')).turn_open);
    }
}
