//! Factory Droid sessions: `<config>/sessions/<project key>/<session id>.jsonl` (+ a
//! `<id>.settings.json` beside it), one JSON record per line (measured on 0.225.2, real capture
//! `tests/fixtures/droid/real-0.225.2.jsonl`):
//! * `session_start` (the first line): `{id, title, owner, version, cwd, hostId, …}`; `title` is
//!   `New Session` until Droid names the conversation;
//! * `message`: `{id, parentId, timestamp, message: {role, content: [...]}}` with `role`
//!   - `user`: a prompt (`text` parts, `userMessageSource`), the tool results sent back
//!     (`tool_result` parts: the model runs again), a hook's run (`content: []` and
//!     `hookEventName`), or the harness's context (`id` `context-…`, a `<system-reminder>`);
//!   - `assistant`: `text`, `thinking` and `tool_use` parts;
//! * `agent_turn_outcome`: `{turnId, reason, resultKind}`, written when a turn ends.
//!
//! Contract: pure over bytes and never panics (lines read as in [`crate::agents::transcript`]);
//! a turn is open after a prompt, a tool call or a tool result, and closed by a reply without a
//! tool call or an `agent_turn_outcome`. Ids that are not session ids are ignored.
//!
//! The project key is Droid's own (`vi` in the 0.225.2 binary): `-` and the cwd's real path with
//! trailing and leading slashes removed and every run of slashes made one `-`.

use std::io;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::agents::render::{self, Conversation, Item, Log, Message};
use crate::agents::transcript::{
    for_each_record, non_empty, read_file_capped, str_of, timestamp_of, valid_session_id,
    TranscriptInfo, TAIL_CAP,
};

/// Droid's project key for `cwd` (taken as it is: the recorded cwd is already the real path).
pub fn project_key(cwd: &str) -> String {
    let t = cwd.trim_end_matches('/').trim_start_matches('/');
    let mut out = String::from("-");
    let mut slash = false;
    for c in t.chars() {
        if c == '/' {
            if !slash {
                out.push('-');
            }
            slash = true;
        } else {
            out.push(c);
            slash = false;
        }
    }
    out
}

/// Where Droid keeps session `id` of `cwd` under config dir `config`. An id that is not a session
/// id is reduced to its id characters, so the path stays inside the sessions folder.
pub fn path(config: &Path, cwd: &str, id: &str) -> PathBuf {
    let id: String = id
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect();
    let id = if id.is_empty() { "-".to_string() } else { id };
    let key = project_key(cwd);
    // A key that could climb out of the sessions folder names none.
    let key = if key.split('-').any(|p| p == "..") || key.contains('\0') {
        "-".to_string()
    } else {
        key
    };
    config
        .join("sessions")
        .join(key)
        .join(format!("{id}.jsonl"))
}

/// Session `id`'s transcript under `config`, wherever its project folder is (ids are UUIDs: one
/// file at most holds one), when it is a plain file.
pub fn find(config: &Path, id: &str) -> Option<PathBuf> {
    all(config)
        .into_iter()
        .find(|(s, _)| s == id)
        .map(|(_, p)| p)
}

/// Every session under `config/sessions/*/<id>.jsonl` (no symlinks followed).
pub fn all(config: &Path) -> Vec<(String, PathBuf)> {
    crate::agents::transcript::sessions_by_project(&config.join("sessions"), "")
}

fn content(v: &Value) -> &[Value] {
    v.get("message")
        .and_then(|m| m.get("content"))
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

fn role(v: &Value) -> Option<&str> {
    v.get("message").and_then(|m| str_of(m, "role"))
}

/// The text parts of a message (thinking left out), joined by newlines; a plain string content
/// counts as one text part.
fn text_of(v: &Value) -> Option<String> {
    if let Some(s) = v
        .get("message")
        .and_then(|m| m.get("content"))
        .and_then(Value::as_str)
    {
        return non_empty(s);
    }
    let texts: Vec<&str> = content(v)
        .iter()
        .filter(|p| str_of(p, "type") == Some("text"))
        .filter_map(|p| str_of(p, "text"))
        .collect();
    non_empty(&texts.join("\n"))
}

fn calls(v: &Value) -> impl Iterator<Item = &Value> {
    content(v)
        .iter()
        .filter(|p| str_of(p, "type") == Some("tool_use"))
}

/// What one `user` message is.
enum User {
    Prompt(String),
    /// Tool results sent back: the model runs again.
    Continues,
    Ignored,
}

fn classify_user(v: &Value) -> User {
    let msg = v.get("message");
    // A hook's run, or the harness's context block: not something the human said.
    if msg.and_then(|m| m.get("hookEventName")).is_some()
        || str_of(v, "id").is_some_and(|id| id.starts_with("context-"))
    {
        return User::Ignored;
    }
    if content(v)
        .iter()
        .any(|p| str_of(p, "type") == Some("tool_result"))
    {
        return User::Continues;
    }
    match text_of(v) {
        Some(t) if t.starts_with("<system-reminder>") => User::Ignored,
        Some(t) => User::Prompt(t),
        None => User::Ignored,
    }
}

/// The prompt or reply one record holds (the archive's raw-end check and the renderer agree).
pub(crate) fn message_of(v: &Value) -> Option<Message> {
    if str_of(v, "type")? != "message" {
        return None;
    }
    match role(v)? {
        "user" => match classify_user(v) {
            User::Prompt(t) => Some(Message::User(t)),
            _ => None,
        },
        "assistant" => text_of(v).map(Message::Reply),
        _ => None,
    }
}

/// Parses a Droid session (JSONL bytes).
pub fn parse(bytes: &[u8]) -> TranscriptInfo {
    let mut info = TranscriptInfo::default();
    let mut counts = TranscriptInfo::default();
    for_each_record(bytes, &mut counts, |v| {
        let ts = timestamp_of(v);
        let bump = |info: &mut TranscriptInfo| {
            if ts.is_some() && (info.last_real_turn.is_none() || info.last_real_turn < ts) {
                info.last_real_turn = ts;
            }
        };
        match str_of(v, "type").unwrap_or("") {
            "session_start" => {
                if info.session_id.is_none() {
                    info.session_id = str_of(v, "id").and_then(valid_session_id);
                }
                if let Some(cwd) = str_of(v, "cwd").filter(|c| c.starts_with('/')) {
                    info.cwd = Some(cwd.to_string());
                }
                if let Some(t) = str_of(v, "title")
                    .and_then(non_empty)
                    .filter(|t| t != "New Session")
                {
                    info.ai_title = Some(t);
                }
            }
            "message" => match role(v) {
                Some("user") => match classify_user(v) {
                    User::Prompt(text) => {
                        info.turn_open = true;
                        bump(&mut info);
                        info.first_prompt.get_or_insert_with(|| text.clone());
                        info.last_prompt = Some(text);
                    }
                    User::Continues => info.turn_open = true,
                    User::Ignored => {}
                },
                Some("assistant") => {
                    let text = text_of(v);
                    let calls = calls(v).count();
                    if text.is_some() || calls > 0 {
                        bump(&mut info);
                    }
                    if let Some(t) = text {
                        info.last_assistant = Some(t);
                        if calls == 0 {
                            info.turn_open = false;
                        }
                    }
                    if calls > 0 {
                        info.turn_open = true; // the tool (or its permission prompt) comes next
                    }
                }
                _ => {}
            },
            "agent_turn_outcome" => info.turn_open = false,
            _ => {}
        }
    });
    info.take_counts(&counts);
    info
}

/// Reads a session cheaply (first 64 KiB and a growing tail window; see the shared reader).
///
/// # Errors
/// Any I/O error opening or reading `path`.
pub fn read_file(path: &Path) -> io::Result<TranscriptInfo> {
    read_file_capped(path, parse, TAIL_CAP)
}

/// Renders a Droid session as the shared Markdown conversation.
pub(crate) fn markdown(bytes: &[u8]) -> Conversation {
    let mut log = Log::default();
    for_each_record(bytes, &mut TranscriptInfo::default(), |v| {
        let ts = timestamp_of(v);
        match (str_of(v, "type"), role(v)) {
            (Some("message"), Some("user")) => {
                if let User::Prompt(t) = classify_user(v) {
                    log.last_user = Some(t.clone());
                    log.push(ts, Item::User(t));
                }
            }
            (Some("message"), Some("assistant")) => {
                if let Some(t) = text_of(v) {
                    log.last_assistant = Some(t.clone());
                    log.push(ts, Item::Text(t));
                }
                for c in calls(v) {
                    let arg = c.get("input").and_then(render::tool_arg);
                    log.push(ts, Item::Tool(render::tool_line(str_of(c, "name"), arg)));
                }
            }
            (Some("agent_turn_outcome"), _) => log.push(ts, Item::Break),
            _ => {}
        }
    });
    log.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SID: &str = "c30257e4-8604-4dae-bc9c-5ec27547822d";
    const REAL: &[u8] = include_bytes!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/droid/real-0.225.2.jsonl"
    ));

    #[test]
    fn the_project_key_is_droids() {
        assert_eq!(project_key("/tmp/dr/proj"), "-tmp-dr-proj");
        assert_eq!(project_key("/a//b.c_d/"), "-a-b.c_d");
        assert_eq!(project_key("/"), "-");
        let p = path(Path::new("/h/.factory"), "/w/p", "../../etc/passwd");
        assert!(p.starts_with("/h/.factory/sessions/-w-p"), "{p:?}");
        assert_eq!(p.file_name().unwrap(), "etcpasswd.jsonl");
        let p = path(Path::new("/h/.factory"), "/w/../../x", SID);
        assert!(p.starts_with("/h/.factory/sessions/-/"), "{p:?}");
    }

    /// A real 0.225.2 session: a `/new` session with a confirmed shell tool call, then a resume
    /// (whose hook runs are records too).
    #[test]
    fn a_real_session_reads_closed_with_its_prompts_and_renders() {
        let i = parse(REAL);
        assert_eq!(i.session_id.as_deref(), Some(SID));
        assert_eq!(i.cwd.as_deref(), Some("/tmp/dr/proj"));
        assert_eq!(i.bad_lines, 0);
        assert!(!i.turn_open);
        assert_eq!(i.first_prompt.as_deref(), Some("run it [tool echo hi]"));
        assert!(i
            .last_assistant
            .as_deref()
            .is_some_and(|a| a.starts_with("Tool finished.")));
        assert!(i.last_real_turn.is_some());
        let md = markdown(REAL);
        assert!(md.turns >= 1, "{}", md.markdown);
        assert!(md.tool_calls >= 1, "{}", md.markdown);
        assert!(
            md.markdown.contains("Execute: `echo hi`"),
            "{}",
            md.markdown
        );
        assert!(!md.markdown.contains("system-reminder"), "{}", md.markdown);
        assert_eq!(md.last_assistant, i.last_assistant);
    }

    #[test]
    fn a_prompt_opens_a_turn_a_tool_call_keeps_it_open_and_the_outcome_closes_it() {
        let rec = |s: &str| format!("{s}\n");
        let start = rec(&format!(
            r#"{{"type":"session_start","id":"{SID}","title":"New Session","cwd":"/w/p"}}"#
        ));
        let hook = rec(
            r#"{"type":"message","id":"h","timestamp":"2026-12-06T19:37:19.341Z","message":{"role":"user","content":[],"hookEventName":"SessionStart"}}"#,
        );
        let ctx = rec(
            r#"{"type":"message","id":"context-1","timestamp":"2026-12-06T19:37:19.341Z","message":{"role":"user","content":[{"type":"text","text":"<system-reminder>\ntools</system-reminder>"}]}}"#,
        );
        let user = rec(
            r#"{"type":"message","id":"u","timestamp":"2026-12-06T19:37:20.000Z","message":{"role":"user","content":[{"type":"text","text":"hello"}]}}"#,
        );
        let call = rec(
            r#"{"type":"message","id":"a","timestamp":"2026-12-06T19:37:21.000Z","message":{"role":"assistant","content":[{"type":"tool_use","id":"c","name":"Execute","input":{"command":"touch x"}}]}}"#,
        );
        let result = rec(
            r#"{"type":"message","id":"r","timestamp":"2026-12-06T19:37:22.000Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"c","content":"ok"}]}}"#,
        );
        let reply = rec(
            r#"{"type":"message","id":"b","timestamp":"2026-12-06T19:37:23.000Z","message":{"role":"assistant","content":[{"type":"text","text":"done"}]}}"#,
        );
        let outcome = rec(r#"{"type":"agent_turn_outcome","turnId":"u","reason":"completed"}"#);
        let t = |parts: &[&String]| {
            parse(
                parts
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<String>()
                    .as_bytes(),
            )
        };
        let i = t(&[&start, &hook, &ctx]);
        assert!(!i.turn_open, "hooks and context are no prompt");
        assert_eq!(i.first_prompt, None);
        assert_eq!(i.ai_title, None, "`New Session` is no title");
        assert!(t(&[&start, &user]).turn_open);
        assert!(t(&[&start, &user, &call]).turn_open);
        assert!(t(&[&start, &user, &call, &result]).turn_open);
        assert!(!t(&[&start, &user, &call, &result, &reply]).turn_open);
        assert!(!t(&[&start, &user, &call, &outcome]).turn_open);
        let md = markdown(
            [&start, &hook, &ctx, &user, &call, &result, &reply, &outcome]
                .iter()
                .map(|s| s.as_str())
                .collect::<String>()
                .as_bytes(),
        );
        assert_eq!(md.turns, 1, "{}", md.markdown);
        assert_eq!(md.tool_calls, 1);
        assert_eq!(md.last_user.as_deref(), Some("hello"));
        assert_eq!(md.last_assistant.as_deref(), Some("done"));
    }

    #[test]
    fn garbage_never_panics_and_is_counted() {
        let i = parse(b"not json\n{\"type\":\"message\"}\n{\"trunc");
        assert_eq!(i.bad_lines, 2);
        assert!(i.truncated_last_line);
        assert!(!i.turn_open);
    }
}
