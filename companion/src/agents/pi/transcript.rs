//! pi sessions: `<agent dir>/sessions/--<cwd>--/<ISO time>_<session id>.jsonl` (`<cwd>` without
//! its leading `/`, every `/`, `\` and `:` made `-`; `docs/session-format.md` of 1.6.0). The first
//! line is the header `{type:"session", version:3, id, timestamp, cwd}`; every other line is an
//! entry `{type, id, parentId, timestamp, …}` of a tree: `message` (`message.role` `user`,
//! `assistant` with `content` blocks `text` / `thinking` / `toolCall` and a `stopReason`,
//! `toolResult`, `system`, `bashExecution`, `custom`, …), `model_change`,
//! `thinking_level_change`, `compaction`, `branch_summary`, `session_info` (`name`), `label`,
//! `custom`, …. pi writes the file at the session's first prompt; until then the session has no
//! file and nothing to resume.
//!
//! The tree: `/tree` branches in place, so the file holds abandoned branches too. The branch pi
//! resumes is the path from the last entry (the leaf) up through `parentId` to a root: the
//! rendering shows that branch only. A scan's reading ([`parse`]) goes by file order over the
//! head and tail it reads (the leaf's branch holds the file's latest messages unless a branch
//! switch appended no message yet).
//!
//! Contract: pure over bytes and never panics (lines read as in [`crate::agents::transcript`]);
//! a turn is open after a prompt, a tool call or a tool result, and closed by an assistant message
//! whose `stopReason` is not `toolUse` (`stop`, `length`, `error`, `aborted`). The session id is
//! the header's, when it is a session id.

use std::collections::{HashMap, HashSet};
use std::io;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::agents::render::{self, Conversation, Item, Log, Message};
use crate::agents::transcript::{
    for_each_record, non_empty, read_file_capped, str_of, timestamp_of, valid_session_id,
    TranscriptInfo, TAIL_CAP,
};

/// pi's folder name for the sessions of `cwd`.
pub fn project_dir_name(cwd: &str) -> String {
    let trimmed = cwd.strip_prefix('/').unwrap_or(cwd);
    let safe: String = trimmed
        .chars()
        .map(|c| {
            if matches!(c, '/' | '\\' | ':') {
                '-'
            } else {
                c
            }
        })
        .collect();
    format!("--{safe}--")
}

/// The session id a session file's name ends with (`<time>_<id>.jsonl`).
pub fn id_of_name(name: &str) -> Option<String> {
    let stem = name.strip_suffix(".jsonl")?;
    let (_, id) = stem.rsplit_once('_')?;
    valid_session_id(id).filter(|s| s == id)
}

/// Every session file under `<agent dir>/sessions/*/` (no symlinks followed).
pub fn all(config: &Path) -> Vec<(String, PathBuf)> {
    let mut out = vec![];
    let Ok(projects) = std::fs::read_dir(config.join("sessions")) else {
        return out;
    };
    for p in projects.flatten() {
        if !p.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        out.extend(in_dir(&p.path()));
    }
    out.sort_by(|a, b| a.1.cmp(&b.1));
    out
}

fn in_dir(dir: &Path) -> Vec<(String, PathBuf)> {
    let Ok(files) = std::fs::read_dir(dir) else {
        return vec![];
    };
    files
        .flatten()
        .filter(|f| f.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|f| Some((id_of_name(&f.file_name().to_string_lossy())?, f.path())))
        .collect()
}

/// The file of session `id` in `cwd`'s folder, by its name and its header: the one pi resumes.
/// Two files of one id (never written by pi) name none.
pub fn find(config: &Path, cwd: &str, id: &str) -> Option<PathBuf> {
    let dir = config.join("sessions").join(project_dir_name(cwd));
    let mut hits: Vec<PathBuf> = in_dir(&dir)
        .into_iter()
        .filter(|(sid, p)| sid == id && header_id(p).as_deref() == Some(id))
        .map(|(_, p)| p)
        .collect();
    (hits.len() == 1).then(|| hits.remove(0))
}

/// The session id of a session file's first line (its header).
pub fn header_id(path: &Path) -> Option<String> {
    use std::io::{BufRead, Read};
    let f = std::fs::File::open(path).ok()?;
    let mut line = String::new();
    std::io::BufReader::new(f.take(64 * 1024))
        .read_line(&mut line)
        .ok()?;
    let v: Value = serde_json::from_str(line.trim()).ok()?;
    (str_of(&v, "type") == Some("session"))
        .then(|| str_of(&v, "id").and_then(valid_session_id))
        .flatten()
}

fn message(v: &Value) -> Option<&Value> {
    (str_of(v, "type") == Some("message"))
        .then(|| v.get("message"))
        .flatten()
}

fn role(v: &Value) -> Option<&str> {
    message(v).and_then(|m| str_of(m, "role"))
}

fn blocks(m: &Value) -> &[Value] {
    m.get("content")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// The text of a message's content (a string, or its `text` blocks joined by newlines; thinking
/// and images left out).
fn text_of(m: &Value) -> Option<String> {
    if let Some(s) = m.get("content").and_then(Value::as_str) {
        return non_empty(s);
    }
    let texts: Vec<&str> = blocks(m)
        .iter()
        .filter(|b| str_of(b, "type") == Some("text"))
        .filter_map(|b| str_of(b, "text"))
        .collect();
    non_empty(&texts.join("\n"))
}

fn calls(m: &Value) -> impl Iterator<Item = &Value> {
    blocks(m)
        .iter()
        .filter(|b| str_of(b, "type") == Some("toolCall"))
}

/// The prompt or reply one entry holds (the archive's raw-end check and the renderer agree).
pub(crate) fn message_of(v: &Value) -> Option<Message> {
    let m = message(v)?;
    match str_of(m, "role")? {
        "user" => text_of(m).map(Message::User),
        "assistant" => text_of(m).map(Message::Reply),
        _ => None,
    }
}

/// Parses a pi session file (JSONL bytes).
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
        match str_of(v, "type") {
            Some("session") => {
                if info.session_id.is_none() {
                    info.session_id = str_of(v, "id").and_then(valid_session_id);
                }
                if let Some(cwd) = str_of(v, "cwd").filter(|c| !c.is_empty()) {
                    info.cwd = Some(cwd.to_string());
                }
            }
            Some("session_info") => {
                if let Some(n) = str_of(v, "name").and_then(non_empty) {
                    info.ai_title = Some(n);
                }
            }
            Some("message") => {
                let Some(m) = message(v) else { return };
                match str_of(m, "role") {
                    Some("user") => {
                        info.turn_open = true;
                        bump(&mut info);
                        if let Some(t) = text_of(m) {
                            info.first_prompt.get_or_insert_with(|| t.clone());
                            info.last_prompt = Some(t);
                        }
                    }
                    Some("assistant") => {
                        bump(&mut info);
                        if let Some(t) = text_of(m) {
                            info.last_assistant = Some(t);
                        }
                        info.turn_open =
                            calls(m).next().is_some() || str_of(m, "stopReason") == Some("toolUse");
                    }
                    Some("toolResult") => info.turn_open = true,
                    _ => {}
                }
            }
            _ => {}
        }
    });
    info.take_counts(&counts);
    info
}

/// Reads a session file cheaply (first 64 KiB and a growing tail window; see the shared reader).
///
/// # Errors
/// Any I/O error opening or reading `path`.
pub fn read_file(path: &Path) -> io::Result<TranscriptInfo> {
    read_file_capped(path, parse, TAIL_CAP)
}

/// The entries on the branch pi resumes: the path from the last entry with an `id` up through
/// `parentId` (bounded: a cycle ends it).
fn current_branch(entries: &[Value]) -> HashSet<String> {
    let parent: HashMap<&str, Option<&str>> = entries
        .iter()
        .filter_map(|v| Some((str_of(v, "id")?, str_of(v, "parentId"))))
        .collect();
    let mut on = HashSet::new();
    let mut at = entries
        .iter()
        .rev()
        .filter(|v| str_of(v, "type") != Some("session"))
        .find_map(|v| str_of(v, "id"));
    while let Some(id) = at {
        if !on.insert(id.to_string()) {
            break;
        }
        at = parent.get(id).copied().flatten();
    }
    on
}

fn call_line(call: &Value) -> String {
    let arg = call.get("arguments").and_then(render::tool_arg);
    render::tool_line(str_of(call, "name"), arg)
}

/// Renders the current branch of a pi session as the shared Markdown conversation.
pub(crate) fn markdown(bytes: &[u8]) -> Conversation {
    let mut entries = vec![];
    for_each_record(bytes, &mut TranscriptInfo::default(), |v| {
        entries.push(v.clone())
    });
    let branch = current_branch(&entries);
    let mut log = Log::default();
    for v in &entries {
        let Some(id) = str_of(v, "id") else { continue };
        if str_of(v, "type") == Some("session") || !branch.contains(id) {
            continue;
        }
        let ts = timestamp_of(v);
        match (str_of(v, "type"), role(v)) {
            (Some("message"), Some("user")) => {
                if let Some(t) = message(v).and_then(text_of) {
                    log.last_user = Some(t.clone());
                    log.push(ts, Item::User(t));
                }
            }
            (Some("message"), Some("assistant")) => {
                let Some(m) = message(v) else { continue };
                if let Some(t) = text_of(m) {
                    log.last_assistant = Some(t.clone());
                    log.push(ts, Item::Text(t));
                }
                for c in calls(m) {
                    log.push(ts, Item::Tool(call_line(c)));
                }
                if str_of(m, "stopReason") == Some("aborted") {
                    log.push(ts, Item::Note("*Interrupted*".into()));
                }
            }
            (Some("compaction"), _) => log.push(ts, Item::Note("*Conversation compacted*".into())),
            (Some("branch_summary"), _) => {
                log.push(ts, Item::Note("*Branch switched (/tree)*".into()))
            }
            _ => {}
        }
    }
    log.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SID: &str = "01a24cd4-0e3c-713e-9a66-5bcd17f42c45";

    fn bytes_of(lines: &[String]) -> Vec<u8> {
        lines
            .iter()
            .map(|l| format!("{l}\n"))
            .collect::<String>()
            .into_bytes()
    }

    fn header() -> String {
        format!(
            r#"{{"type":"session","version":3,"id":"{SID}","timestamp":"2026-12-06T19:28:15.421Z","cwd":"/w/p"}}"#
        )
    }

    fn msg(id: &str, parent: Option<&str>, m: &str) -> String {
        let parent = parent.map_or("null".to_string(), |p| format!("\"{p}\""));
        format!(
            r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-12-06T19:28:25.000Z","message":{m}}}"#
        )
    }

    fn user(t: &str) -> String {
        format!(r#"{{"role":"user","content":[{{"type":"text","text":"{t}"}}]}}"#)
    }

    fn reply(t: &str) -> String {
        format!(
            r#"{{"role":"assistant","content":[{{"type":"text","text":"{t}"}}],"stopReason":"stop"}}"#
        )
    }

    #[test]
    fn the_folder_is_pis_encoded_cwd_and_the_id_ends_the_name() {
        assert_eq!(project_dir_name("/tmp/pi-x/proj"), "--tmp-pi-x-proj--");
        assert_eq!(project_dir_name("/a:b\\c"), "--a-b-c--");
        assert_eq!(
            id_of_name(&format!("2026-12-06T19-28-15-421Z_{SID}.jsonl")).as_deref(),
            Some(SID)
        );
        assert_eq!(id_of_name("2026-12-06T19-28-15-421Z_x.jsonl"), None);
        assert_eq!(id_of_name(&format!("{SID}.json")), None);
    }

    #[test]
    fn a_prompt_opens_a_turn_a_tool_call_keeps_it_open_and_a_reply_closes_it() {
        let call = r#"{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"touch x"}}],"stopReason":"toolUse"}"#;
        let result = r#"{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":"ok"}]}"#;
        let lines = [
            header(),
            msg("a", None, &user("hello")),
            msg("b", Some("a"), call),
            msg("c", Some("b"), result),
            msg("d", Some("c"), &reply("done")),
        ];
        for (n, open) in [(2, true), (3, true), (4, true), (5, false)] {
            let i = parse(&bytes_of(&lines[..n]));
            assert_eq!(i.turn_open, open, "after {n} lines");
        }
        let i = parse(&bytes_of(&lines));
        assert_eq!(i.session_id.as_deref(), Some(SID));
        assert_eq!(i.cwd.as_deref(), Some("/w/p"));
        assert_eq!(i.first_prompt.as_deref(), Some("hello"));
        assert_eq!(i.last_assistant.as_deref(), Some("done"));
        let md = markdown(&bytes_of(&lines));
        assert_eq!((md.turns, md.tool_calls), (1, 1), "{}", md.markdown);
        assert!(md.markdown.contains("bash: `touch x`"), "{}", md.markdown);
        assert_eq!(md.last_assistant, i.last_assistant);
    }

    /// `/tree` branches in place: the rendering shows the branch from the last entry up, never
    /// the abandoned one.
    #[test]
    fn only_the_current_branch_is_rendered() {
        let lines = [
            header(),
            msg("a", None, &user("first")),
            msg("b", Some("a"), &reply("one")),
            msg("c", Some("b"), &user("abandoned question")),
            msg("d", Some("c"), &reply("abandoned answer")),
            msg("e", Some("b"), &user("kept question")),
            msg("f", Some("e"), &reply("kept answer")),
        ];
        let md = markdown(&bytes_of(&lines));
        assert!(md.markdown.contains("kept answer"), "{}", md.markdown);
        assert!(!md.markdown.contains("abandoned"), "{}", md.markdown);
        assert_eq!(md.turns, 2);
        assert_eq!(md.last_user.as_deref(), Some("kept question"));
    }

    #[test]
    fn garbage_never_panics_and_is_counted() {
        let i = parse(b"not json\n{\"type\":\"message\"}\n{\"trunc");
        assert_eq!(i.bad_lines, 2);
        assert!(i.truncated_last_line);
        assert!(!i.turn_open);
        let md =
            markdown(b"{\"id\":\"a\",\"parentId\":\"a\"}\n{\"id\":\"b\",\"parentId\":\"a\"}\n");
        assert_eq!(md.turns, 0);
    }

    /// A real 1.6.0 session against mock-llm: a slow reply, a bash tool call and its result.
    #[test]
    fn a_real_session_reads_closed_and_renders() {
        let bytes = include_bytes!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/pi/session-1.6.0.jsonl"
        ));
        let i = parse(bytes);
        assert_eq!(i.session_id.as_deref(), Some(SID));
        assert!(!i.turn_open);
        assert_eq!(i.bad_lines, 0);
        assert_eq!(i.cwd.as_deref(), Some("/tmp/pi-x/proj"));
        assert_eq!(i.first_prompt.as_deref(), Some("hello there [slow 4]"));
        let md = markdown(bytes);
        assert!(md.tool_calls >= 1, "{}", md.markdown);
        assert!(
            md.markdown.contains("sleep 3; echo toolran"),
            "{}",
            md.markdown
        );
        assert_eq!(md.last_assistant, i.last_assistant);
        let end = render::raw_end(bytes, message_of);
        assert_eq!(end.last_reply, i.last_assistant);
    }
}
