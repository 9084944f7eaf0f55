//! GitHub Copilot CLI session logs: `<config>/session-state/<session id>/events.jsonl`, one JSON
//! record per line, `{type, data, id, timestamp, parentId}` (1.0.102: every record type and its
//! `ephemeral` flag, "not persisted to the session event log on disk", are in
//! `schemas/session-events.schema.json` of the bundle the native binary unpacks under
//! `~/.cache/copilot/pkg/linux-x64/1.0.102/`; real logs are in `tests/fixtures/copilot/`). What
//! park reads, by `type`:
//! * `session.start` — `data.sessionId` and `data.context.cwd`; `session.resume` (the CLI started
//!   again with `--resume`) — `data.context.cwd`; `session.context_changed` — `data.cwd`;
//! * `user.message` — `data.content` is what the human typed. `data.transformedContent` is that
//!   text with injected context (date, reminders) and is never shown. A `data.source` other than
//!   none, `user`, `command-…`, `schedule-…` or `autopilot-…` (a hidden skill injection, an
//!   inter-agent prompt) is not a prompt, though the model runs on it (the CLI's own timeline
//!   filter, `LW` in the bundle);
//! * `assistant.message` — `data.content` (the reply text, may be empty) and `data.toolRequests`
//!   (`[{name, arguments}]`, the calls the model made); `data.reasoningText` is left out;
//! * `assistant.turn_start` / `assistant.turn_end` — one agent-loop iteration (a model call and
//!   the tools it asked for); `tool.execution_start` / `permission.requested` — a tool runs or
//!   waits for the human's approval; `abort` — Ctrl+C (or a remote stop) ended the turn;
//!   `session.error` with `data.originatingMessageId` — the request for that prompt failed;
//!   `session.shutdown` — the CLI exited;
//! * `system.message` (the system prompt), `session.usage_record`, `session.model_change`,
//!   `permission.completed`, `tool.execution_complete`, … — bookkeeping, ignored.
//!
//! Records carrying an `agentId` (top level or in `data`) or a `data.parentToolCallId` belong to
//! a sub-agent running inside a tool call of the main agent (the CLI's own test, `ds` in the
//! bundle): they never open, close or answer the main turn.
//!
//! Contract: pure over bytes and never panics (lines read as in [`crate::agents::transcript`]). A
//! turn is open after a prompt, `assistant.turn_start`, a tool request, `tool.execution_start` or
//! `permission.requested`, and closed by `assistant.turn_end`, `abort`, a prompt's
//! `session.error`, `session.shutdown`, or a `session.resume` that did not join live work. Copilot
//! ends a loop iteration after its tools ran and starts the next one a millisecond later (see
//! `events-tool-resume.jsonl`), so between those two records a working turn reads closed; a
//! prompt typed while busy is only written when its run starts. A rewind (Esc Esc) deletes the
//! withdrawn turn's records from the file (`session.snapshot_rewind.eventsRemoved`, itself not
//! written), so a log can shrink. Ids that are not session ids are ignored. There is no title
//! record: `session.title_changed` is ephemeral; the CLI keeps the name in the sibling
//! `workspace.yaml`.

use std::io;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::agents::render::{self, Conversation, Item, Log, Message};
use crate::agents::transcript::{
    for_each_record, non_empty, read_file_capped, str_of, timestamp_of, valid_session_id,
    TranscriptInfo, TAIL_CAP,
};

/// Where Copilot keeps session `id` under config dir `config`. An id that is not a session id is
/// reduced to its id characters, so the path stays inside `session-state`.
pub fn path(config: &Path, id: &str) -> PathBuf {
    let id: String = id
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect();
    let id = if id.is_empty() { "-".to_string() } else { id };
    config.join("session-state").join(id).join("events.jsonl")
}

/// Every `session-state/<id>/events.jsonl` under `config`.
pub fn all(config: &Path) -> Vec<(String, PathBuf)> {
    let mut out = vec![];
    let Ok(rd) = std::fs::read_dir(config.join("session-state")) else {
        return out;
    };
    for d in rd.flatten() {
        let name = d.file_name().to_string_lossy().into_owned();
        let Some(sid) = valid_session_id(&name).filter(|s| *s == name) else {
            continue;
        };
        let f = d.path().join("events.jsonl");
        if f.is_file() {
            out.push((sid, f));
        }
    }
    out.sort_by(|a, b| a.1.cmp(&b.1));
    out
}

fn data(v: &Value) -> &Value {
    v.get("data").unwrap_or(&Value::Null)
}

fn is_sub_agent(v: &Value) -> bool {
    let d = data(v);
    [
        str_of(v, "agentId"),
        str_of(d, "agentId"),
        str_of(d, "parentToolCallId"),
    ]
    .into_iter()
    .flatten()
    .any(|s| !s.is_empty())
}

/// What one main-agent `user.message` is.
enum User {
    Prompt(String),
    /// The model runs on it, but the human did not type it (or it is empty).
    Continues,
}

fn classify_user(v: &Value) -> User {
    let d = data(v);
    let typed = match d.get("source") {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => {
            s.is_empty()
                || s == "user"
                || ["command-", "schedule-", "autopilot-"]
                    .iter()
                    .any(|p| s.starts_with(p))
        }
        Some(_) => false,
    };
    match str_of(d, "content").and_then(non_empty) {
        Some(t) if typed => User::Prompt(t),
        _ => User::Continues,
    }
}

fn reply_text(v: &Value) -> Option<String> {
    str_of(data(v), "content").and_then(non_empty)
}

fn tool_requests(v: &Value) -> &[Value] {
    data(v)
        .get("toolRequests")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// The prompt or reply one record holds (the archive's raw-end check and the renderer agree).
pub(crate) fn message_of(v: &Value) -> Option<Message> {
    if is_sub_agent(v) {
        return None;
    }
    match str_of(v, "type")? {
        "user.message" => match classify_user(v) {
            User::Prompt(t) => Some(Message::User(t)),
            User::Continues => None,
        },
        "assistant.message" => reply_text(v).map(Message::Reply),
        _ => None,
    }
}

/// Parses a Copilot CLI `events.jsonl` (JSONL bytes).
pub fn parse(bytes: &[u8]) -> TranscriptInfo {
    let mut info = TranscriptInfo::default();
    let mut counts = TranscriptInfo::default();
    for_each_record(bytes, &mut counts, |v| {
        if is_sub_agent(v) {
            return;
        }
        let d = data(v);
        let ts = timestamp_of(v);
        let bump = |info: &mut TranscriptInfo| {
            if ts.is_some() && (info.last_real_turn.is_none() || info.last_real_turn < ts) {
                info.last_real_turn = ts;
            }
        };
        match str_of(v, "type").unwrap_or("") {
            ty @ ("session.start" | "session.resume") => {
                if let Some(id) = str_of(d, "sessionId").and_then(valid_session_id) {
                    info.session_id = Some(id);
                }
                if let Some(cwd) = d
                    .get("context")
                    .and_then(|c| str_of(c, "cwd"))
                    .filter(|c| !c.is_empty())
                {
                    info.cwd = Some(cwd.to_string());
                }
                // A new process: whatever the last one left in flight died with it, unless this
                // one joined a run still going or was told to carry on with its pending tools.
                let carries_on = ["sessionWasActive", "continuePendingWork"]
                    .iter()
                    .any(|k| d.get(*k).and_then(Value::as_bool) == Some(true));
                if ty == "session.start" || !carries_on {
                    info.turn_open = false;
                }
            }
            "session.context_changed" => {
                if let Some(cwd) = str_of(d, "cwd").filter(|c| !c.is_empty()) {
                    info.cwd = Some(cwd.to_string());
                }
            }
            "user.message" => {
                info.turn_open = true;
                if let User::Prompt(text) = classify_user(v) {
                    bump(&mut info);
                    info.first_prompt.get_or_insert_with(|| text.clone());
                    info.last_prompt = Some(text);
                }
            }
            "assistant.message" => {
                let text = reply_text(v);
                let calls = tool_requests(v).len();
                if text.is_some() || calls > 0 {
                    bump(&mut info);
                }
                if let Some(t) = text {
                    info.last_assistant = Some(t);
                }
                if calls > 0 {
                    info.turn_open = true; // the tool (or its permission prompt) comes next
                }
            }
            "assistant.turn_start" | "tool.execution_start" | "permission.requested" => {
                info.turn_open = true;
            }
            "assistant.turn_end" | "abort" | "session.shutdown" => info.turn_open = false,
            // A session-wide error (no prompt named) leaves a running turn alone.
            "session.error" if str_of(d, "originatingMessageId").is_some() => {
                info.turn_open = false;
            }
            _ => {}
        }
    });
    info.take_counts(&counts);
    info
}

/// Reads a session log cheaply (first 64 KiB and a growing tail window; see the shared reader).
///
/// # Errors
/// Any I/O error opening or reading `path`.
pub fn read_file(path: &Path) -> io::Result<TranscriptInfo> {
    read_file_capped(path, parse, TAIL_CAP)
}

fn call_line(call: &Value) -> String {
    let arg = call.get("arguments").and_then(render::tool_arg);
    render::tool_line(str_of(call, "name"), arg)
}

/// Renders a Copilot CLI session log as the shared Markdown conversation. Tool calls come from
/// the replies' `toolRequests` (as the CLI's timeline does): `tool.execution_start` repeats them,
/// and a call aborted at its permission prompt has a request but may lack a completion.
pub(crate) fn markdown(bytes: &[u8]) -> Conversation {
    let mut log = Log::default();
    for_each_record(bytes, &mut TranscriptInfo::default(), |v| {
        if is_sub_agent(v) {
            return;
        }
        let ts = timestamp_of(v);
        match str_of(v, "type") {
            Some("user.message") => {
                if let User::Prompt(t) = classify_user(v) {
                    log.last_user = Some(t.clone());
                    log.push(ts, Item::User(t));
                }
            }
            Some("assistant.message") => {
                if let Some(t) = reply_text(v) {
                    log.last_assistant = Some(t.clone());
                    log.push(ts, Item::Text(t));
                }
                for c in tool_requests(v) {
                    log.push(ts, Item::Tool(call_line(c)));
                }
            }
            Some("assistant.turn_end") => log.push(ts, Item::Break),
            Some("abort") => {
                // The reason is a fixed code (`user_initiated`, …); anything else is not shown,
                // so nothing from the bytes reaches the Markdown unescaped.
                let why = str_of(data(v), "reason").filter(|r| {
                    !r.is_empty()
                        && r.len() <= 40
                        && r.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                });
                let n = match why {
                    Some(r) => format!("Turn aborted ({r})"),
                    None => "Turn aborted".to_string(),
                };
                log.push(ts, Item::Note(n));
            }
            Some("session.compaction_complete")
                if data(v).get("success").and_then(Value::as_bool) != Some(false) =>
            {
                log.push(ts, Item::Note("Conversation compacted".into()));
            }
            _ => {}
        }
    });
    log.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real 1.0.102 session (mock model): a reply, a slow reply, a shell tool call approved at
    /// its permission prompt, `/exit`, `--resume`, one more prompt.
    const RESUME: &[u8] =
        include_bytes!("../../../tests/fixtures/copilot/events-tool-resume.jsonl");
    /// A real 1.0.102 session: a reply, a slow reply stopped with Ctrl+C, a third prompt and Esc
    /// Esc (a rewind: nothing of it is left but a `session.usage_checkpoint` naming the rewind), a
    /// tool call stopped with Esc at its permission prompt, a tool call denied with feedback (the
    /// model runs again), a prompt typed while the model was busy, `/exit`.
    const ABORTS: &[u8] =
        include_bytes!("../../../tests/fixtures/copilot/events-abort-deny-queue.jsonl");
    /// A real 1.0.102 session whose model provider is unreachable: the prompt's request fails
    /// after the CLI's retries.
    const FAILED: &[u8] =
        include_bytes!("../../../tests/fixtures/copilot/events-provider-error.jsonl");

    const SID: &str = "f5443002-e97a-4d18-9aff-94086c89b28f";

    /// The first `n` lines of `bytes`, each with its newline.
    fn lines(bytes: &[u8], n: usize) -> Vec<u8> {
        let mut out = Vec::new();
        for l in bytes.split_inclusive(|&b| b == b'\n').take(n) {
            out.extend_from_slice(l);
        }
        out
    }

    fn types(bytes: &[u8]) -> Vec<String> {
        bytes
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| {
                let v: Value = serde_json::from_slice(l).unwrap();
                str_of(&v, "type").unwrap().to_string()
            })
            .collect()
    }

    /// The state after the first `n` records, checked against the record that ends the cut.
    fn open_after(bytes: &[u8], n: usize, ty: &str) -> bool {
        assert_eq!(types(bytes)[n - 1], ty, "record {n}");
        parse(&lines(bytes, n)).turn_open
    }

    #[test]
    fn a_prompt_opens_the_turn_and_turn_end_closes_it() {
        assert!(!open_after(RESUME, 2, "session.model_change"));
        assert!(open_after(RESUME, 3, "user.message"), "a turn in flight");
        assert!(open_after(RESUME, 4, "system.message"));
        assert!(open_after(RESUME, 5, "assistant.turn_start"));
        assert!(open_after(RESUME, 7, "assistant.message"));
        assert!(!open_after(RESUME, 8, "assistant.turn_end"));
        // The slow reply: nothing but a usage record for 8 s.
        assert!(open_after(RESUME, 10, "assistant.turn_start"));
        assert!(open_after(RESUME, 11, "session.usage_record"));
        assert!(!open_after(RESUME, 13, "assistant.turn_end"));
        let i = parse(&lines(RESUME, 3));
        assert_eq!(i.first_prompt.as_deref(), Some("hello from copilot"));
        assert_eq!(i.last_assistant, None);
        assert_eq!(
            i.last_real_turn,
            Some("2026-12-05T15:40:54.211Z".parse().unwrap())
        );
    }

    #[test]
    fn a_tool_call_and_its_permission_prompt_keep_the_turn_open() {
        assert!(
            open_after(RESUME, 17, "assistant.message"),
            "a tool request"
        );
        assert!(open_after(RESUME, 18, "tool.execution_start"));
        assert!(
            open_after(RESUME, 19, "permission.requested"),
            "waits on the human"
        );
        assert!(open_after(RESUME, 20, "permission.completed"));
        assert!(open_after(RESUME, 21, "tool.execution_complete"));
        // The loop iteration ends, and the next one starts a millisecond later.
        assert!(!open_after(RESUME, 22, "assistant.turn_end"));
        assert!(open_after(RESUME, 23, "assistant.turn_start"));
        assert!(!open_after(RESUME, 26, "assistant.turn_end"));
        assert!(!open_after(RESUME, 27, "session.shutdown"));
        assert!(!open_after(RESUME, 28, "session.resume"));
        assert!(open_after(RESUME, 29, "user.message"));
    }

    #[test]
    fn the_real_session_reads_its_id_cwd_prompts_and_reply() {
        let i = parse(RESUME);
        assert_eq!(i.session_id.as_deref(), Some(SID));
        assert_eq!(i.cwd.as_deref(), Some("/tmp/cp/w/proj"));
        assert_eq!(i.first_prompt.as_deref(), Some("hello from copilot"));
        assert_eq!(i.last_prompt.as_deref(), Some("after the resume"));
        assert_eq!(
            i.last_assistant.as_deref(),
            Some("Hello from the mock OpenAI server (canned reply #5). PARKTEST-OK")
        );
        assert_eq!(
            i.last_real_turn,
            Some("2026-12-05T15:42:24.997Z".parse().unwrap())
        );
        assert!(!i.turn_open);
        assert_eq!(i.ai_title, None, "the title is not in the log");
        assert_eq!((i.records, i.bad_lines, i.repaired_lines), (33, 0, 0));
        assert!(!i.truncated_last_line && i.unsure.is_none());
        // Never the prompt with the context Copilot injected.
        assert!(!i.last_prompt.unwrap().contains("current_datetime"));
    }

    #[test]
    fn ctrl_c_esc_at_a_permission_prompt_and_a_failed_request_close_the_turn() {
        // Ctrl+C during a slow reply: `assistant.turn_end`, then `abort`.
        assert!(open_after(ABORTS, 10, "assistant.turn_start"));
        assert!(!open_after(ABORTS, 11, "assistant.turn_end"));
        assert!(!open_after(ABORTS, 12, "abort"));
        // Esc at the permission prompt: no `tool.execution_complete` ever follows.
        assert!(open_after(ABORTS, 20, "permission.requested"));
        assert!(open_after(ABORTS, 21, "permission.completed"));
        assert!(!open_after(ABORTS, 22, "assistant.turn_end"));
        assert!(!open_after(ABORTS, 23, "abort"));
        // Denied with feedback: the model runs again on the rejection.
        assert!(open_after(ABORTS, 30, "permission.completed"));
        assert!(open_after(ABORTS, 33, "assistant.turn_start"));
        let i = parse(ABORTS);
        assert!(!i.turn_open);
        assert_eq!(
            i.session_id.as_deref(),
            Some("9cb1649f-0269-4d4b-a95b-ffc8de3a15ca")
        );
        assert_eq!(i.cwd.as_deref(), Some("/tmp/cpA/proj"));
        assert_eq!(i.first_prompt.as_deref(), Some("hello then stop [slow 8]"));
        assert_eq!(i.last_prompt.as_deref(), Some("queued while busy"));
        assert_eq!(i.bad_lines, 0);

        // An unreachable provider: `assistant.turn_end`, then `session.error`.
        assert!(open_after(FAILED, 5, "assistant.turn_start"));
        assert!(!open_after(FAILED, 6, "assistant.turn_end"));
        let f = parse(FAILED);
        assert!(!f.turn_open);
        assert_eq!(f.last_prompt.as_deref(), Some("this will fail"));
        assert_eq!(f.last_assistant, None);
        // Had the failure come before the turn began, the error alone closes it.
        let recs: Vec<&[u8]> = FAILED.split_inclusive(|&b| b == b'\n').collect();
        let early = [recs[2], recs[6]].concat(); // the prompt, then its error
        assert_eq!(types(&early), ["user.message", "session.error"]);
        assert!(parse(recs[2]).turn_open);
        assert!(!parse(&early).turn_open);
    }

    fn rec(ty: &str, data: &str) -> String {
        format!(
            r#"{{"type":"{ty}","data":{data},"id":"x","timestamp":"2026-12-05T16:00:00.000Z","parentId":null}}"#
        )
    }

    fn parse_recs(recs: &[String]) -> TranscriptInfo {
        parse(
            recs.iter()
                .map(|r| format!("{r}\n"))
                .collect::<String>()
                .as_bytes(),
        )
    }

    #[test]
    fn a_new_process_ends_a_turn_its_predecessor_left_open() {
        let start = rec(
            "session.start",
            &format!(r#"{{"sessionId":"{SID}","context":{{"cwd":"/a"}}}}"#),
        );
        let prompt = rec("user.message", r#"{"content":"go"}"#);
        let begin = rec("assistant.turn_start", r#"{"turnId":"0"}"#);
        let resume = rec("session.resume", r#"{"context":{"cwd":"/b"}}"#);
        let joined = rec(
            "session.resume",
            r#"{"context":{"cwd":"/c"},"sessionWasActive":true}"#,
        );
        let pending = rec("session.resume", r#"{"continuePendingWork":true}"#);
        let moved = rec("session.context_changed", r#"{"cwd":"/d"}"#);
        let shutdown = rec("session.shutdown", r#"{"shutdownType":"routine"}"#);
        assert!(parse_recs(&[start.clone(), prompt.clone(), begin.clone()]).turn_open);
        let killed = parse_recs(&[start.clone(), prompt.clone(), begin.clone(), resume]);
        assert!(
            !killed.turn_open,
            "the killed process's turn is not running"
        );
        assert_eq!(killed.session_id.as_deref(), Some(SID));
        assert_eq!(killed.cwd.as_deref(), Some("/b"));
        let j = parse_recs(&[start.clone(), prompt.clone(), begin.clone(), joined]);
        assert!(j.turn_open, "joined a run still going");
        assert_eq!(j.cwd.as_deref(), Some("/c"));
        assert!(parse_recs(&[start.clone(), prompt.clone(), pending]).turn_open);
        let s = parse_recs(&[
            start.clone(),
            prompt.clone(),
            begin.clone(),
            moved,
            shutdown,
        ]);
        assert!(!s.turn_open);
        assert_eq!(s.cwd.as_deref(), Some("/d"));
    }

    #[test]
    fn sub_agent_records_and_hidden_messages_leave_the_main_turn_alone() {
        let prompt = rec("user.message", r#"{"content":"delegate it"}"#);
        let call = rec(
            "assistant.message",
            r#"{"content":"","toolRequests":[{"name":"task","arguments":{"prompt":"look around"}}]}"#,
        );
        let start = rec(
            "tool.execution_start",
            r#"{"toolName":"task","arguments":{}}"#,
        );
        let sub_reply = rec(
            "assistant.message",
            r#"{"content":"sub-agent says hi","parentToolCallId":"call_1"}"#,
        );
        let sub_end = r#"{"type":"assistant.turn_end","agentId":"a1","data":{"turnId":"0"},"id":"y","timestamp":"2026-12-05T16:00:01.000Z","parentId":null}"#.to_string();
        let sub_prompt = rec("user.message", r#"{"content":"sub prompt","agentId":"a1"}"#);
        let skill = rec(
            "user.message",
            r#"{"content":"hidden skill text","source":"skill-pdf"}"#,
        );
        let all = [prompt, call, start, sub_reply, sub_end, sub_prompt, skill];
        let i = parse_recs(&all);
        assert!(i.turn_open, "the main agent's tool is still running");
        assert_eq!(i.last_assistant, None);
        assert_eq!(i.last_prompt.as_deref(), Some("delegate it"));
        let bytes: String = all.iter().map(|r| format!("{r}\n")).collect();
        let md = markdown(bytes.as_bytes());
        assert!(
            !md.markdown.contains("sub-agent says hi"),
            "{}",
            md.markdown
        );
        assert!(!md.markdown.contains("hidden skill"), "{}", md.markdown);
        assert!(
            md.markdown.contains("task: `look around`"),
            "{}",
            md.markdown
        );
        assert_eq!((md.turns, md.tool_calls), (1, 1));
    }

    #[test]
    fn markdown_shows_prompts_replies_and_each_tool_call_once() {
        let md = markdown(RESUME);
        for prompt in [
            "hello from copilot",
            "now slow [slow 8]",
            "run it [tool echo hi > made.txt]",
            "after the resume",
        ] {
            assert!(md.markdown.contains(prompt), "{prompt}: {}", md.markdown);
        }
        for n in [1, 2, 4, 5] {
            let reply = format!("(canned reply #{n}). PARKTEST-OK");
            assert!(md.markdown.contains(&reply), "{reply}: {}", md.markdown);
        }
        assert_eq!(
            md.markdown
                .matches("- 🔧 bash: `echo hi > made.txt`")
                .count(),
            1,
            "{}",
            md.markdown
        );
        assert_eq!((md.turns, md.tool_calls), (4, 1));
        assert!(
            !md.markdown.contains("current_datetime"),
            "no injected context"
        );
        assert!(
            !md.markdown.contains("You are the GitHub Copilot CLI"),
            "no system prompt"
        );
        let i = parse(RESUME);
        assert_eq!(md.last_user, i.last_prompt);
        assert_eq!(md.last_assistant, i.last_assistant);

        let md = markdown(ABORTS);
        assert_eq!(
            md.markdown
                .matches("*Turn aborted (user_initiated)*")
                .count(),
            2,
            "{}",
            md.markdown
        );
        assert_eq!(md.tool_calls, 2, "{}", md.markdown);
        assert_eq!(md.last_assistant, parse(ABORTS).last_assistant);
    }

    #[test]
    fn message_of_agrees_with_the_renderer() {
        for bytes in [RESUME, ABORTS, FAILED] {
            let end = render::raw_end(bytes, message_of);
            let md = markdown(bytes);
            assert_eq!(end.last_user, md.last_user);
            assert_eq!(end.last_reply, md.last_assistant);
            assert!(end.unreadable.is_empty());
        }
    }

    #[test]
    fn hostile_session_ids_are_ignored() {
        for bad in [
            "../../etc/passwd",
            "f5443002-e97a-4d18-9aff-94086c89b28f/../x",
            "$(id)",
            "",
        ] {
            let start = rec(
                "session.start",
                &serde_json::json!({ "sessionId": bad }).to_string(),
            );
            assert_eq!(parse_recs(&[start]).session_id, None, "{bad:?}");
            let p = path(Path::new("/c"), bad);
            assert!(p.starts_with("/c/session-state"), "{p:?}");
            assert_eq!(p.components().count(), 5, "{p:?}");
        }
        let upper = rec(
            "session.start",
            r#"{"sessionId":"F5443002-E97A-4D18-9AFF-94086C89B28F"}"#,
        );
        assert_eq!(parse_recs(&[upper]).session_id.as_deref(), Some(SID));
        let not_a_string = rec("session.start", r#"{"sessionId":7,"context":"x"}"#);
        assert_eq!(parse_recs(&[not_a_string]).session_id, None);
    }

    #[test]
    fn garbage_never_panics_and_is_counted() {
        let i = parse(b"not json\n{\"type\":\"user.message\"}\n\xff\xfe\n[1]\n{\"trunc");
        assert_eq!(i.bad_lines, 4);
        assert!(i.truncated_last_line);
        assert!(
            i.turn_open,
            "a prompt record without data still makes the model run"
        );
        assert_eq!(i.first_prompt, None);
        for odd in [
            r#"{"type":"assistant.message","data":{"content":5,"toolRequests":{"name":1}}}"#,
            r#"{"type":"assistant.message","data":{"toolRequests":[1,null,{"arguments":[]}]}}"#,
            r#"{"type":"abort","data":{"reason":"`**x**`"}}"#,
            r#"{"type":7,"data":null}"#,
            r#"{"type":"user.message","data":{"content":"hi","source":3}}"#,
        ] {
            parse(odd.as_bytes());
            let md = markdown(odd.as_bytes());
            assert!(!md.markdown.contains("**x**"), "{}", md.markdown);
        }
    }

    /// The full prefix `b`: every line counted, the renderer agrees with the parser, ids valid.
    fn check_prefix(b: &[u8]) -> TranscriptInfo {
        let i = parse(b);
        let md = markdown(b);
        let nonempty = b
            .split(|&c| c == b'\n')
            .filter(|l| !l.trim_ascii().is_empty())
            .count();
        assert_eq!(i.records + i.bad_lines, nonempty, "cut {}", b.len());
        assert_eq!(md.last_assistant, i.last_assistant, "cut {}", b.len());
        assert_eq!(md.last_user, i.last_prompt, "cut {}", b.len());
        assert!(i
            .session_id
            .iter()
            .all(|s| valid_session_id(s).as_deref() == Some(s.as_str())));
        i
    }

    /// Every prefix length of every real log (a record being written, or cut by a kill). The
    /// complete lines before a cut are read once per line; at every byte the half line is read on
    /// its own, and where it still reads as a record (a repair, or a whole record without its
    /// newline) the full prefix is read again. In the middle of each line the full prefix must say
    /// what its complete lines say. The ~26 KiB system prompts (ignored records) are cut at a
    /// stride, and so are the two other logs (a debug build reads a few MB/s), the rest at every
    /// byte.
    #[test]
    fn every_truncation_of_the_real_logs_parses() {
        for (bytes, stride) in [(RESUME, 1), (ABORTS, 7), (FAILED, 5)] {
            let mut start = 0; // where the line being cut begins
            let mut end = 0; // and ends (its newline)
            let mut whole = check_prefix(b"");
            let mut cut = 0;
            while cut <= bytes.len() {
                if cut > end {
                    start = cut;
                    end = bytes[start..]
                        .iter()
                        .position(|&c| c == b'\n')
                        .map_or(bytes.len(), |p| start + p);
                    whole = check_prefix(&bytes[..start]);
                }
                let partial = &bytes[start..cut];
                let alone = parse(partial);
                assert_eq!(
                    alone.records + alone.bad_lines,
                    usize::from(!partial.trim_ascii().is_empty()),
                    "cut {cut}"
                );
                if alone.records > 0 {
                    check_prefix(&bytes[..cut]);
                } else if cut == start + (end - start) / 2 {
                    let i = check_prefix(&bytes[..cut]);
                    assert_eq!(i.turn_open, whole.turn_open, "cut {cut}");
                    assert_eq!(i.last_prompt, whole.last_prompt, "cut {cut}");
                    assert_eq!(i.last_real_turn, whole.last_real_turn, "cut {cut}");
                    assert_eq!(i.session_id, whole.session_id, "cut {cut}");
                    assert_eq!(i.cwd, whole.cwd, "cut {cut}");
                }
                let system = bytes[start..].starts_with(br#"{"type":"system.message""#);
                cut += if system && cut + 97 < end { 97 } else { stride };
            }
        }
    }
}
