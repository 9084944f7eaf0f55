//! Kimi Code's sessions: `<home>/sessions/wd_<slug>_<hash12>/session_<uuid>/` (`<home>` is
//! `$KIMI_CODE_HOME`, else `~/.kimi-code`), holding `state.json` (`{id, cwd, createdAt,
//! updatedAt, title, lastPrompt, lastTurnReason, …}`) and the event log `agents/main/wire.jsonl`,
//! the transcript park reads, archives and restores. One JSON record per line (2.1.0, protocol
//! 1.5), `type` one of
//! * `turn.prompt` — `{input:[{type:"text",text}…], origin:{kind}, turnId, time}`: a prompt
//!   (`origin.kind == "user"`: typed by the human) opens a turn;
//! * `agent.message.appended` — `{message:{message:{role, content:[{type:"text",text}…],
//!   toolCalls:[{name, arguments}…]}}}`: the conversation as the model sees it (`assistant`
//!   replies and tool calls; `user` echoes the prompt; `tool` results);
//! * `interaction.request` / `interaction.resolved` — an approval asked and answered (the turn
//!   stays open);
//! * `turn.ended` — `{turnId, reason}` closes the turn (`completed`, or why it stopped);
//! * and bookkeeping (`llm.request`, `usage.record`, `context.*`, `profile.bind`, …).
//!
//! `time` is in milliseconds since the epoch. The bucket's name is Kimi's `encodeWorkDirKey`:
//! the cwd's last component lowercased, runs outside `[a-z0-9._-]` made `-`, trimmed of `-`, cut
//! to 40 (`workspace` when nothing is left), and the first 12 hex digits of the SHA-256 of the cwd.
//!
//! Contract: pure over bytes and never panics (lines read as in [`crate::agents::transcript`]);
//! ids that are not session ids are ignored.

use std::io;
use std::path::{Path, PathBuf};

use jiff::Timestamp;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::agents::render::{self, Conversation, Item, Log, Message};
use crate::agents::transcript::{
    bump, for_each_record, non_empty, read_file_capped, str_of, valid_session_id, TranscriptInfo,
    TAIL_CAP,
};

/// Kimi's `encodeWorkDirKey` of `cwd`.
pub fn workdir_key(cwd: &str) -> String {
    let normalized = cwd.trim_end_matches('/');
    let last = normalized.rsplit('/').next().unwrap_or(normalized);
    let mut slug = String::new();
    let mut dash = false;
    for c in last.to_lowercase().chars() {
        if c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-') {
            slug.push(c);
            dash = false;
        } else if !dash {
            slug.push('-');
            dash = true;
        }
    }
    let slug: String = slug.trim_matches('-').chars().take(40).collect();
    let slug = slug.trim_matches('-');
    let slug = if matches!(slug, "" | "." | "..") {
        "workspace"
    } else {
        slug
    };
    let hash = Sha256::digest(normalized.as_bytes());
    let hex: String = hash.iter().take(6).map(|b| format!("{b:02x}")).collect();
    format!("wd_{slug}_{hex}")
}

/// The session dir of `id` for `cwd` under Kimi home `home`. An id that is not a session id is
/// reduced to its id characters, so the path stays inside the bucket.
pub fn session_dir(home: &Path, cwd: &str, id: &str) -> PathBuf {
    let id: String = id
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
        .collect();
    let id = if id.is_empty() { "-".to_string() } else { id };
    home.join("sessions").join(workdir_key(cwd)).join(id)
}

/// The transcript of session `id` for `cwd`.
pub fn path(home: &Path, cwd: &str, id: &str) -> PathBuf {
    session_dir(home, cwd, id).join("agents/main/wire.jsonl")
}

/// The transcript of session `id` wherever its bucket is (exactly that id's dir; no symlinks).
pub fn find(home: &Path, id: &str) -> Option<PathBuf> {
    let id = valid_session_id(id).filter(|s| s == id)?;
    let buckets = std::fs::read_dir(home.join("sessions")).ok()?;
    for b in buckets.flatten() {
        if !b.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let p = b.path().join(&id).join("agents/main/wire.jsonl");
        if std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_file()) {
            return Some(p);
        }
    }
    None
}

/// Every session transcript under `home/sessions/*/session_<uuid>/agents/main/wire.jsonl`.
pub fn all(home: &Path) -> Vec<(String, PathBuf)> {
    let mut out = vec![];
    let Ok(buckets) = std::fs::read_dir(home.join("sessions")) else {
        return out;
    };
    for b in buckets.flatten() {
        if !b.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let Ok(sessions) = std::fs::read_dir(b.path()) else {
            continue;
        };
        for s in sessions.flatten() {
            let name = s.file_name().to_string_lossy().into_owned();
            let Some(sid) = valid_session_id(&name).filter(|i| *i == name) else {
                continue;
            };
            let p = s.path().join("agents/main/wire.jsonl");
            if std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_file()) {
                out.push((sid, p));
            }
        }
    }
    out.sort_by(|a, b| a.1.cmp(&b.1));
    out
}

fn time_of(v: &Value) -> Option<Timestamp> {
    let ms = v.get("time").and_then(Value::as_i64)?;
    Timestamp::from_millisecond(ms).ok()
}

fn texts(content: Option<&Value>) -> Option<String> {
    let parts: Vec<&str> = content
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|p| str_of(p, "type") == Some("text"))
        .filter_map(|p| str_of(p, "text"))
        .collect();
    non_empty(&parts.join("\n"))
}

/// A prompt the human typed (`turn.prompt` from the user).
fn prompt_of(v: &Value) -> Option<String> {
    if str_of(v, "type")? != "turn.prompt" {
        return None;
    }
    let origin = v.get("origin").and_then(|o| str_of(o, "kind"));
    if origin.is_some_and(|k| k != "user") {
        return None;
    }
    texts(v.get("input"))
}

/// The model message an `agent.message.appended` record carries.
fn model_message(v: &Value) -> Option<&Value> {
    if str_of(v, "type")? != "agent.message.appended" {
        return None;
    }
    let m = v.get("message")?.get("message")?;
    (str_of(m, "role")? == "assistant").then_some(m)
}

fn calls(m: &Value) -> impl Iterator<Item = &Value> {
    m.get("toolCalls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// The prompt or reply one record holds (the archive's raw-end check and the renderer agree).
pub(crate) fn message_of(v: &Value) -> Option<Message> {
    if let Some(p) = prompt_of(v) {
        return Some(Message::User(p));
    }
    model_message(v)
        .and_then(|m| texts(m.get("content")))
        .map(Message::Reply)
}

/// Parses a Kimi Code `wire.jsonl` (bytes).
pub fn parse(bytes: &[u8]) -> TranscriptInfo {
    let mut info = TranscriptInfo::default();
    let mut counts = TranscriptInfo::default();
    for_each_record(bytes, &mut counts, |v| {
        let ts = time_of(v);
        if let Some(p) = prompt_of(v) {
            info.turn_open = true;
            bump(&mut info.last_real_turn, ts);
            info.first_prompt.get_or_insert_with(|| p.clone());
            info.last_prompt = Some(p);
            return;
        }
        if let Some(m) = model_message(v) {
            if let Some(t) = texts(m.get("content")) {
                bump(&mut info.last_real_turn, ts);
                info.last_assistant = Some(t);
            }
            return;
        }
        match str_of(v, "type") {
            Some("turn.prompt") | Some("interaction.request") => info.turn_open = true,
            Some("turn.ended") => info.turn_open = false,
            _ => {}
        }
        if let Some(id) = v
            .get("request")
            .and_then(|r| str_of(r, "sessionId"))
            .and_then(valid_session_id)
        {
            info.session_id = Some(id);
        }
    });
    info.take_counts(&counts);
    info
}

/// Reads a transcript cheaply (first 64 KiB and a growing tail window; see the shared reader).
///
/// # Errors
/// Any I/O error opening or reading `path`.
pub fn read_file(path: &Path) -> io::Result<TranscriptInfo> {
    let mut info = read_file_capped(path, parse, TAIL_CAP)?;
    // The session's own `state.json` names it and its cwd.
    if let Some(state) = path
        .parent()
        .and_then(Path::parent)
        .and_then(Path::parent)
        .and_then(|d| std::fs::read(d.join("state.json")).ok())
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
    {
        if let Some(id) = str_of(&state, "id").and_then(valid_session_id) {
            info.session_id = Some(id);
        }
        if let Some(cwd) = str_of(&state, "cwd").filter(|c| c.starts_with('/')) {
            info.cwd = Some(cwd.to_string());
        }
        if let Some(t) = str_of(&state, "title").and_then(non_empty) {
            info.ai_title = Some(t);
        }
    }
    Ok(info)
}

/// `Bash: touch x` for a tool call (`arguments` is a JSON string).
fn call_line(call: &Value) -> String {
    let args = str_of(call, "arguments")
        .and_then(|a| serde_json::from_str::<Value>(a).ok())
        .or_else(|| call.get("arguments").cloned());
    render::tool_line(
        str_of(call, "name"),
        args.as_ref().and_then(render::tool_arg),
    )
}

/// Renders a Kimi Code `wire.jsonl` as the shared Markdown conversation.
pub(crate) fn markdown(bytes: &[u8]) -> Conversation {
    let mut log = Log::default();
    for_each_record(bytes, &mut TranscriptInfo::default(), |v| {
        let ts = time_of(v);
        if let Some(p) = prompt_of(v) {
            log.last_user = Some(p.clone());
            log.push(ts, Item::User(p));
            return;
        }
        if let Some(m) = model_message(v) {
            if let Some(t) = texts(m.get("content")) {
                log.last_assistant = Some(t.clone());
                log.push(ts, Item::Text(t));
            }
            for c in calls(m) {
                log.push(ts, Item::Tool(call_line(c)));
            }
            return;
        }
        match str_of(v, "type") {
            Some("turn.ended") => {
                if let Some(r) = str_of(v, "reason").filter(|r| *r != "completed") {
                    log.push(ts, Item::Note(format!("Turn ended: {r}")));
                }
                log.push(ts, Item::Break);
            }
            Some("plan_mode.enter") => log.push(ts, Item::Note("Plan mode on".into())),
            _ => {}
        }
    });
    log.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::render::test_kit::check_invariants;
    use crate::agents::screen::test_kit::fixture;

    const WIRE: &str = fixture!("kimi/wire.jsonl");

    #[test]
    fn the_bucket_is_kimis_workdir_key() {
        // Measured: /tmp/kx/proj lives in wd_proj_8b0643dd42e2.
        assert_eq!(workdir_key("/tmp/kx/proj"), "wd_proj_8b0643dd42e2");
        assert_eq!(workdir_key("/tmp/kx/proj/"), "wd_proj_8b0643dd42e2");
        assert!(workdir_key("/w/My Proj!!").starts_with("wd_my-proj_"));
        assert!(workdir_key("/").starts_with("wd_workspace_"));
        assert!(workdir_key("/w/日本").starts_with("wd_workspace_"));
        let p = path(Path::new("/k"), "/w/p", "../../etc/passwd");
        assert!(p.starts_with("/k/sessions"), "{p:?}");
        assert_eq!(p.components().filter(|c| c.as_os_str() == "..").count(), 0);
    }

    /// The real session (2.1.0): three turns, the last one a tool call the user rejected.
    #[test]
    fn a_real_session_reads_closed_with_its_last_turn() {
        let i = parse(WIRE.as_bytes());
        assert!(!i.turn_open, "{i:?}");
        assert_eq!(i.bad_lines, 0);
        assert_eq!(i.first_prompt.as_deref(), Some("hello there"));
        assert_eq!(
            i.last_prompt.as_deref(),
            Some("touch it [asktool touch made-by-kimi]")
        );
        assert_eq!(
            i.last_assistant.as_deref(),
            Some("Tool finished. Hello from the mock OpenAI server (canned reply #4). PARKTEST-OK")
        );
        assert_eq!(
            i.session_id.as_deref(),
            Some("session_71828f23-5b64-4e12-a5ad-e8e418559405")
        );
        assert!(i.last_real_turn.is_some());
    }

    /// A prompt opens a turn, an approval keeps it open, `turn.ended` closes it.
    #[test]
    fn a_turn_is_open_from_its_prompt_to_its_end() {
        let lines: Vec<&str> = WIRE.lines().collect();
        let upto = |pred: &dyn Fn(&str) -> bool| -> String {
            let n = lines.iter().rposition(|l| pred(l)).unwrap();
            lines[..=n].join("\n") + "\n"
        };
        let at_prompt = upto(&|l| l.contains("\"type\":\"turn.prompt\""));
        assert!(parse(at_prompt.as_bytes()).turn_open);
        let at_ask = upto(&|l| l.contains("\"type\":\"interaction.request\""));
        assert!(parse(at_ask.as_bytes()).turn_open);
        let at_end = upto(&|l| l.contains("\"type\":\"turn.ended\""));
        assert!(!parse(at_end.as_bytes()).turn_open);
    }

    #[test]
    fn markdown_holds_every_prompt_reply_and_tool_call() {
        let c = markdown(WIRE.as_bytes());
        assert_eq!(c.turns, 3, "{}", c.markdown);
        assert_eq!(c.tool_calls, 1, "{}", c.markdown);
        assert!(c.markdown.contains("Bash"), "{}", c.markdown);
        assert!(c.markdown.contains("touch made-by-kimi"), "{}", c.markdown);
        check_invariants(&c, &parse(WIRE.as_bytes()).last_assistant);
        let end = render::raw_end(WIRE.as_bytes(), message_of);
        assert_eq!(end.last_user, c.last_user);
        assert_eq!(end.last_reply, c.last_assistant);
    }

    #[test]
    fn files_are_found_by_exact_id_only() {
        let d = tempfile::tempdir().unwrap();
        let sid = "session_71828f23-5b64-4e12-a5ad-e8e418559405";
        let p = path(d.path(), "/tmp/kx/proj", sid);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, WIRE).unwrap();
        std::fs::write(
            p.parent()
                .unwrap()
                .parent()
                .unwrap()
                .parent()
                .unwrap()
                .join("state.json"),
            fixture!("kimi/state.json"),
        )
        .unwrap();
        assert_eq!(find(d.path(), sid), Some(p.clone()));
        assert_eq!(
            find(d.path(), "session_00000000-0000-4000-8000-000000000000"),
            None
        );
        assert_eq!(find(d.path(), "../x"), None);
        // An id with path pieces never reaches a path, even one that leads to a real session.
        let sneaky = format!("../{}/{sid}", workdir_key("/tmp/kx/proj"));
        assert_eq!(find(d.path(), &sneaky), None);
        assert_eq!(find(d.path(), &sid.to_uppercase()), None);
        assert_eq!(all(d.path()), vec![(sid.to_string(), p.clone())]);
        let i = read_file(&p).unwrap();
        assert_eq!(i.cwd.as_deref(), Some("/tmp/kx/proj"));
        assert_eq!(i.ai_title.as_deref(), Some("hello there"));
    }
}
