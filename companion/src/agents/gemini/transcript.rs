//! Gemini CLI chats: `<config>/tmp/<project>/chats/session-<YYYY-MM-DDTHH-MM>-<id8>.jsonl`, one
//! JSON record per line, appended with `appendFileSync` (`ChatRecordingService` and
//! `loadConversationRecord` in `bundle/chunk-JDPZ4CE3.js` of 0.61.0; real chats in
//! `tests/fixtures/gemini/`).
//!
//! Where: `<config>` is `$GEMINI_CLI_HOME/.gemini`, else `~/.gemini`. `<config>/projects.json` is
//! `{"projects": {"<cwd, path.resolve'd>": "<slug>"}}` (slugs match `^[a-z0-9-]+$`), and each
//! slug dir holds a `.project_root` file naming its cwd (`ProjectRegistry`). A cwd missing from
//! the registry is found by that marker; versions before the registry named the dir after the
//! sha256 hex of the cwd (`Storage.performMigration` copies it to the slug dir, so both may exist).
//! Sub-agent chats live one level deeper (`chats/<parent id>/<id>.jsonl`) and are not sessions.
//!
//! Records (Gemini's own reader tells them apart in this order):
//! * `{"$rewindTo": id}` — `/rewind`: the messages from `id` on are withdrawn (they stay in the
//!   file above it). The UI is idle; a `$set.messages` follows.
//! * a message, `{id, timestamp, type, content, …}`; a later record with the same `id` replaces
//!   the earlier one (a reply gets its `tokens`, then its `toolCalls`). By `type`:
//!   - `user` — `content` is a list of parts. `[{text}]` is a prompt (with `displayContent`, what
//!     the human typed, when `@file` expanded it); `[{functionResponse}]` carries tool results
//!     back, and the model runs again. Parts starting `<session_context>` (the context Gemini
//!     sends first) or `<hook_context>` (hook output) are not the human's, nor is a shell-mode
//!     `!cmd` (`I ran the following shell command:` …) or a manual Plan Mode exit, after which
//!     the model does not run.
//!   - `gemini` — `content` is the reply text (a string; a list of parts when synthetic), with
//!     `thoughts`, `tokens` and `model`. The tool calls are only written when they completed:
//!     the reply is re-pushed with `toolCalls: [{id, name, args, result, status, …}]`, `status`
//!     one of `success`, `error`, `cancelled`. A reply whose calls all were cancelled (Esc at the
//!     permission prompt, Ctrl+C while a tool ran) ends the turn, and the answers to cancelled
//!     calls written after it are not sent to the model.
//!   - `info` / `warning` / `error` — UI notes (`content` a string). `info` "Request cancelled."
//!     (or "User cancelled the request.") and any `error` (a failed request) end the turn.
//! * `{"$set": {…}}` — metadata: `lastUpdated`; `summary`, the one-line title the *next* Gemini
//!   start writes into the previous session's file (read as `ai_title`); `sessionId` (a resume,
//!   or the new chat a compression starts); `memoryScratchpad`, `directories`; and `messages`, a
//!   full replacement of the message list. A new chat's first one holds only the
//!   `<session_context>` message; a failed or cancelled request writes the list rolled back to
//!   before its prompt.
//! * the first line, `{sessionId, projectHash (sha256 of the cwd), startTime, lastUpdated, kind}`.
//!
//! Two ways a chat restates history without anything new happening, which park never shows or
//! counts twice: a `$set.messages` list (its messages are never prompts or replies here; the turn
//! state is re-read from it), and a *replay*: when every tool call of a turn was cancelled, Gemini
//! rewrites its history through `setHistory` of id-less contents, so each message is written again
//! under a new id (replies without `model`, the first prompt merged into the context message),
//! right before the `$set.messages` naming them. Such a run of records, ending in that list, is
//! recognised as a replay when it holds a reply and all its replies lack `model`.
//!
//! The resume bug (gemini-cli #27368/#29198, reproduced on 0.61.0): `gemini --resume <id>` also
//! writes an orphan stub, `session-<new minute>-<same id8>.jsonl` holding only the first line and
//! a `$set.messages` with the `<session_context>` message, while the conversation goes on in the
//! real file (which gets `$set.sessionId` and a full `$set.messages`). The next Gemini start in
//! the project deletes every file with that suffix, the real chat included. [`find`] never returns
//! a stub while a file of the session holds conversation; [`orphans`] lists only files that hold
//! nothing but the first line and such `$set` records.
//!
//! Contract: `parse`, `markdown` and `message_of` are pure over bytes and never panic (lines read
//! as in [`crate::agents::transcript`]); session ids in results have passed `valid_session_id`; no
//! path built here leaves `<config>/tmp/<dir>/chats/`, and no symlink is followed there. The cwd
//! is not in the records (`cwd` stays `None`). A turn is open after a prompt, a tool call that was
//! not all cancelled, or a tool result going back to the model (calls written after a
//! cancellation, and their results, leave it closed); it is closed by a reply with text and no
//! tool call, an `error`, a cancellation, a rewind, or a `$set.messages` whose list ends closed.
//! Prompts, replies and `last_real_turn` come from the message records in file order (a re-push
//! counted once, a replay not at all), so a rewound prompt stays the last one. Limit: a reply that says something *and* asks for a tool is written before the call
//! (which is written only once done), so while such a call waits for approval or runs, the chat
//! reads closed.

use std::collections::hash_map::DefaultHasher;
use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use std::io;
use std::path::Path;

use jiff::Timestamp;
use serde_json::Value;

pub use super::files::{all, chats_dir, find, orphans};
use crate::agents::render::{self, Conversation, Item, Log, Message};
use crate::agents::transcript::{
    for_each_record, non_empty, read_file_capped, str_of, timestamp_of, valid_session_id,
    TranscriptInfo, TAIL_CAP,
};

// ---------------------------------------------------------------------------------------------
// Records
// ---------------------------------------------------------------------------------------------

/// What a message does to the turn.
#[derive(Debug, Clone, PartialEq)]
enum Effect {
    /// A prompt: the model runs.
    Prompt,
    /// Tool results going back (their call ids): the model runs again, unless every one answers a
    /// call of a cancelled turn.
    Results(Vec<String>),
    /// Completed tool calls (id, cancelled): their results go back, unless all were cancelled
    /// (which ends the turn), or some were and the turn already ended (Esc while they ran).
    Calls(Vec<(String, bool)>),
    /// A reply with text and no tool call.
    Reply,
    /// A cancellation or a failed request.
    Ends,
    Neutral,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Note {
    Cancelled,
    Failed,
}

/// One message record as park reads it.
#[derive(Debug)]
struct Msg {
    id: Option<String>,
    ts: Option<Timestamp>,
    prompt: Option<String>,
    reply: Option<String>,
    /// (call id, tool line)
    calls: Vec<(Option<String>, String)>,
    /// A shell-mode command the human ran (`!cmd`).
    shell: Option<String>,
    note: Option<Note>,
    effect: Effect,
    gemini: bool,
    /// A reply without `model`: written by `recordSyntheticMessage`, as a replay does.
    synthetic: bool,
}

enum Rec {
    /// The first line (or any line with `sessionId` and `projectHash`).
    Head(Option<String>),
    Msg(Box<Msg>),
    Set {
        /// The ids of a `messages` list and whether it leaves the turn open.
        list: Option<(Vec<String>, bool)>,
        only_last_updated: bool,
        summary: Option<String>,
        sid: Option<String>,
    },
    Rewind,
    Other,
}

/// Content as a list of parts (a string is one text part).
fn parts(v: Option<&Value>) -> Vec<&Value> {
    match v {
        Some(Value::Array(a)) => a.iter().collect(),
        Some(s @ Value::String(_)) => vec![s],
        Some(o @ Value::Object(_)) => vec![o],
        _ => vec![],
    }
}

fn part_text(p: &Value) -> Option<&str> {
    match p {
        Value::String(s) => Some(s),
        Value::Object(o) if o.get("thought").and_then(Value::as_bool) != Some(true) => {
            o.get("text").and_then(Value::as_str)
        }
        _ => None,
    }
}

const SHELL_MODE: &str = "I ran the following shell command:\n```sh\n";
const PLAN_EXIT: &str = "User has manually exited Plan Mode.";

/// A text part that is not the human's prompt: context Gemini or a hook adds, shell-mode output,
/// a Plan Mode exit.
fn injected(t: &str) -> bool {
    let t = t.trim_start();
    t.starts_with("<session_context>")
        || t.starts_with("<hook_context>")
        || t.starts_with(SHELL_MODE)
        || t.starts_with(PLAN_EXIT)
}

/// The prompt text of a list of parts: its text parts minus injected ones, joined as Gemini joins
/// them.
fn prompt_text(ps: &[&Value]) -> Option<String> {
    let texts: Vec<&str> = ps
        .iter()
        .filter_map(|p| part_text(p))
        .filter(|t| !injected(t))
        .collect();
    non_empty(&texts.concat())
}

fn shell_command(ps: &[&Value]) -> Option<String> {
    ps.iter().filter_map(|p| part_text(p)).find_map(|t| {
        let rest = t.trim_start().strip_prefix(SHELL_MODE)?;
        let end = rest.find("\n```").unwrap_or(rest.len());
        non_empty(&rest[..end])
    })
}

fn call_line(name: Option<&str>, args: Option<&Value>) -> String {
    render::tool_line(name, args.and_then(render::tool_arg))
}

/// Reads one message (a record with a string `id`, or an element of a `messages` list).
fn message(v: &Value) -> Msg {
    let mut m = Msg {
        id: str_of(v, "id").map(str::to_string),
        ts: timestamp_of(v),
        prompt: None,
        reply: None,
        calls: vec![],
        shell: None,
        note: None,
        effect: Effect::Neutral,
        gemini: false,
        synthetic: false,
    };
    let content = parts(v.get("content"));
    match str_of(v, "type").unwrap_or("") {
        "user" => {
            let results: Vec<String> = content
                .iter()
                .filter_map(|p| p.get("functionResponse"))
                .map(|r| str_of(r, "id").unwrap_or("").to_string())
                .collect();
            if !results.is_empty() {
                m.effect = Effect::Results(results);
                return m;
            }
            let shown = parts(v.get("displayContent"));
            m.prompt = prompt_text(&shown).or_else(|| prompt_text(&content));
            m.shell = shell_command(&content);
            if m.prompt.is_some() {
                m.effect = Effect::Prompt;
            }
        }
        "gemini" => {
            m.gemini = true;
            m.synthetic = v.get("model").is_none();
            let texts: Vec<&str> = content.iter().filter_map(|p| part_text(p)).collect();
            m.reply = non_empty(&texts.concat());
            let tool_calls: Vec<&Value> = v
                .get("toolCalls")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter(|c| c.is_object()).collect())
                .unwrap_or_default();
            if tool_calls.is_empty() {
                for c in content.iter().filter_map(|p| p.get("functionCall")) {
                    let id = str_of(c, "id").map(str::to_string);
                    m.calls
                        .push((id, call_line(str_of(c, "name"), c.get("args"))));
                }
                if !m.calls.is_empty() {
                    let ids = m
                        .calls
                        .iter()
                        .map(|(id, _)| (id.clone().unwrap_or_default(), false));
                    m.effect = Effect::Calls(ids.collect());
                }
            } else {
                let mut ids = vec![];
                for c in &tool_calls {
                    let id = str_of(c, "id").map(str::to_string);
                    let cancelled = str_of(c, "status") == Some("cancelled");
                    ids.push((id.clone().unwrap_or_default(), cancelled));
                    m.calls
                        .push((id, call_line(str_of(c, "name"), c.get("args"))));
                }
                m.effect = Effect::Calls(ids);
            }
            if m.effect == Effect::Neutral && m.reply.is_some() {
                m.effect = Effect::Reply;
            }
        }
        "info" => {
            let t = str_of(v, "content").unwrap_or("").trim();
            if t == "Request cancelled." || t == "User cancelled the request." {
                m.effect = Effect::Ends;
                m.note = Some(Note::Cancelled);
            }
        }
        "error" => {
            m.effect = Effect::Ends;
            m.note = Some(Note::Failed);
        }
        _ => {}
    }
    m
}

/// The turn as a run of messages leaves it.
#[derive(Default)]
struct Turn {
    open: bool,
    /// Calls whose results are not sent to the model (cancelled, or of a cancelled turn).
    dead: HashSet<String>,
}

impl Turn {
    fn apply(&mut self, e: &Effect) {
        match e {
            Effect::Prompt => self.open = true,
            Effect::Results(ids) => {
                let dead = !ids.is_empty() && ids.iter().all(|i| self.dead.contains(i));
                if !dead {
                    self.open = true;
                }
            }
            Effect::Calls(calls) => {
                let all = calls.iter().all(|c| c.1);
                let any = calls.iter().any(|c| c.1);
                // Some cancelled after the turn ended: Esc while they ran, nothing goes back.
                let opens = !all && (self.open || !any);
                for (id, cancelled) in calls {
                    if (*cancelled || !opens) && !id.is_empty() {
                        self.dead.insert(id.clone());
                    }
                }
                self.open = opens;
            }
            Effect::Reply | Effect::Ends => self.open = false,
            Effect::Neutral => {}
        }
    }
}

fn record(v: &Value) -> Rec {
    if str_of(v, "$rewindTo").is_some() {
        return Rec::Rewind;
    }
    if str_of(v, "id").is_some() {
        return Rec::Msg(Box::new(message(v)));
    }
    if let Some(s) = v.get("$set").and_then(Value::as_object) {
        let list = s.get("messages").and_then(Value::as_array).map(|ms| {
            let mut turn = Turn::default();
            let mut ids = vec![];
            for m in ms.iter().filter(|m| str_of(m, "id").is_some()) {
                let msg = message(m);
                turn.apply(&msg.effect);
                ids.extend(msg.id);
            }
            (ids, turn.open)
        });
        return Rec::Set {
            list,
            only_last_updated: s.len() == 1 && s.contains_key("lastUpdated"),
            summary: s.get("summary").and_then(Value::as_str).and_then(non_empty),
            sid: s
                .get("sessionId")
                .and_then(Value::as_str)
                .and_then(valid_session_id),
        };
    }
    if str_of(v, "sessionId").is_some() && str_of(v, "projectHash").is_some() {
        return Rec::Head(str_of(v, "sessionId").and_then(valid_session_id));
    }
    Rec::Other
}

/// The records of a chat, the line counts, and which records are a replay (see the module doc).
fn read(bytes: &[u8]) -> (Vec<Rec>, TranscriptInfo, Vec<bool>) {
    let mut counts = TranscriptInfo::default();
    let mut recs = vec![];
    for_each_record(bytes, &mut counts, |v| recs.push(record(v)));
    let mut replay = vec![false; recs.len()];
    for (k, r) in recs.iter().enumerate() {
        let Rec::Set {
            list: Some((ids, _)),
            ..
        } = r
        else {
            continue;
        };
        let ids: HashSet<&str> = ids.iter().map(String::as_str).collect();
        let mut run = vec![];
        for (j, r) in recs[..k].iter().enumerate().rev() {
            match r {
                Rec::Msg(m) if m.id.as_deref().is_some_and(|i| ids.contains(i)) => run.push(j),
                Rec::Set {
                    list: None,
                    only_last_updated: true,
                    ..
                } => {}
                _ => break,
            }
        }
        let msg = |j: &usize| match &recs[*j] {
            Rec::Msg(m) => Some(&**m),
            _ => None,
        };
        let replies: Vec<&Msg> = run.iter().filter_map(msg).filter(|m| m.gemini).collect();
        if !replies.is_empty() && replies.iter().all(|m| m.synthetic) {
            for j in run {
                replay[j] = true;
            }
        }
    }
    (recs, counts, replay)
}

/// A message text already taken from an earlier record of the same id (a re-push).
#[derive(Default)]
struct Seen(HashSet<u64>);

impl Seen {
    fn first(&mut self, id: Option<&str>, kind: &str, text: &str) -> bool {
        let Some(id) = id else { return true };
        let mut h = DefaultHasher::new();
        (id, kind, text).hash(&mut h);
        self.0.insert(h.finish())
    }
}

/// The prompt or reply one record holds (the archive's raw-end check and the renderer agree).
/// A replayed record repeats an earlier message, whose text the rendering holds.
pub(crate) fn message_of(v: &Value) -> Option<Message> {
    let Rec::Msg(m) = record(v) else {
        return None;
    };
    match (m.prompt, m.reply) {
        (Some(p), _) => Some(Message::User(p)),
        (None, Some(r)) => Some(Message::Reply(r)),
        _ => None,
    }
}

/// Parses a Gemini CLI chat (JSONL bytes).
pub fn parse(bytes: &[u8]) -> TranscriptInfo {
    let (recs, counts, replay) = read(bytes);
    let mut info = TranscriptInfo::default();
    let mut turn = Turn::default();
    let mut seen = Seen::default();
    for (r, replayed) in recs.iter().zip(replay) {
        match r {
            Rec::Head(sid) => {
                if info.session_id.is_none() {
                    info.session_id.clone_from(sid);
                }
            }
            Rec::Set {
                list, summary, sid, ..
            } => {
                if info.session_id.is_none() {
                    info.session_id.clone_from(sid);
                }
                if summary.is_some() {
                    info.ai_title.clone_from(summary);
                }
                if let Some((_, open)) = list {
                    turn.open = *open;
                    turn.dead.clear();
                }
            }
            Rec::Rewind => turn.open = false,
            Rec::Msg(m) if !replayed => {
                turn.apply(&m.effect);
                let mut real = !m.calls.is_empty();
                if let Some(p) = m.prompt.as_ref() {
                    real = true;
                    if seen.first(m.id.as_deref(), "user", p) {
                        info.first_prompt.get_or_insert_with(|| p.clone());
                        info.last_prompt = Some(p.clone());
                    }
                }
                if let Some(t) = m.reply.as_ref() {
                    real = true;
                    if seen.first(m.id.as_deref(), "gemini", t) {
                        info.last_assistant = Some(t.clone());
                    }
                }
                if real && m.ts.is_some() && (info.last_real_turn < m.ts) {
                    info.last_real_turn = m.ts;
                }
            }
            Rec::Msg(_) | Rec::Other => {}
        }
    }
    info.turn_open = turn.open;
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

/// Free text for inside a note's `*…*`: its first line, cut, Markdown punctuation escaped.
fn note_text(s: &str) -> String {
    let line = s
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let mut cut: String = line.chars().take(160).collect();
    if cut.len() < line.len() {
        cut.push('…');
    }
    let mut out = String::with_capacity(cut.len());
    for c in cut.chars() {
        if matches!(c, '\\' | '*' | '_' | '`' | '<' | '[' | ']') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Renders a Gemini CLI chat as the shared Markdown conversation: prompts, replies, one line per
/// tool call (each once, however often its reply was re-pushed), shell-mode commands,
/// cancellations, failures and rewinds as notes. Replays and `$set.messages` lists are not shown.
pub(crate) fn markdown(bytes: &[u8]) -> Conversation {
    let (recs, _, replay) = read(bytes);
    let mut log = Log::default();
    let mut seen = Seen::default();
    let mut calls_shown: HashSet<(String, String)> = HashSet::new();
    for (r, replayed) in recs.into_iter().zip(replay) {
        match r {
            Rec::Rewind => log.push(None, Item::Note("Conversation rewound".into())),
            Rec::Msg(m) if !replayed => {
                let Msg {
                    id,
                    ts,
                    prompt,
                    reply,
                    calls,
                    shell,
                    note,
                    effect,
                    ..
                } = *m;
                if let Some(p) = prompt {
                    if seen.first(id.as_deref(), "user", &p) {
                        log.last_user = Some(p.clone());
                        log.push(ts, Item::User(p));
                    }
                }
                if let Some(cmd) = shell {
                    let n = format!("Shell command run by the user: {}", note_text(&cmd));
                    log.push(ts, Item::Note(n));
                }
                if let Some(t) = reply {
                    if seen.first(id.as_deref(), "gemini", &t) {
                        log.last_assistant = Some(t.clone());
                        log.push(ts, Item::Text(t));
                    }
                }
                for (call, line) in calls {
                    let key = (
                        id.clone().unwrap_or_default(),
                        call.unwrap_or_else(|| line.clone()),
                    );
                    if id.is_none() || calls_shown.insert(key) {
                        log.push(ts, Item::Tool(line));
                    }
                }
                match note {
                    Some(Note::Cancelled) => log.push(ts, Item::Note("Request cancelled".into())),
                    Some(Note::Failed) => log.push(ts, Item::Note("Request failed".into())),
                    None => {}
                }
                let ends = match &effect {
                    Effect::Reply => true,
                    Effect::Calls(c) => c.iter().all(|c| c.1),
                    _ => false,
                };
                if ends {
                    log.push(ts, Item::Break);
                }
            }
            _ => {}
        }
    }
    log.finish()
}

#[cfg(test)]
mod tests {
    use super::super::files::sha256_hex;
    use super::*;
    use crate::agents::render::normalize;
    use std::path::PathBuf;

    /// A real 0.61.0 chat (mock model, recorded by an earlier session): a reply, a slow reply, a
    /// shell tool call approved at its permission prompt.
    const CHAT_TOOL: &[u8] = include_bytes!("../../../tests/fixtures/gemini/chat-tool.jsonl");
    /// A real 0.61.0 chat, then `gemini --resume` of it: a reply; a slow reply cancelled with Esc;
    /// a tool call approved; a tool call cancelled with Esc at its permission prompt (Gemini then
    /// replays its whole history under new ids); an `@file` prompt; a shell-mode `!echo`; the
    /// process killed; the resume (`$set.sessionId`, a full `$set.messages`); one more prompt.
    const RESUMED: &[u8] = include_bytes!("../../../tests/fixtures/gemini/resumed-real.jsonl");
    /// The orphan stub that resume wrote beside it (same session id, new minute).
    const ORPHAN: &[u8] = include_bytes!("../../../tests/fixtures/gemini/resumed-orphan.jsonl");
    /// Two prompts, then `/rewind` to the second one (`$rewindTo`, a rolled-back list).
    const REWIND: &[u8] = include_bytes!("../../../tests/fixtures/gemini/rewind.jsonl");
    /// One exchange, then the next Gemini start wrote its `$set.summary`.
    const SUMMARIZED: &[u8] = include_bytes!("../../../tests/fixtures/gemini/summarized.jsonl");
    /// A prompt the API refused (HTTP 400): the list rolled back, an `error`, an `info`.
    const API_ERROR: &[u8] = include_bytes!("../../../tests/fixtures/gemini/api-error.jsonl");
    /// A tool call approved, then Esc while it ran: `info` first, then the call (cancelled) and
    /// its answer, which is not sent to the model.
    const CANCEL_RUNNING: &[u8] =
        include_bytes!("../../../tests/fixtures/gemini/cancel-running-tool.jsonl");

    const FIXTURES: [&[u8]; 7] = [
        CHAT_TOOL,
        RESUMED,
        ORPHAN,
        REWIND,
        SUMMARIZED,
        API_ERROR,
        CANCEL_RUNNING,
    ];

    const SID: &str = "c49bc043-e6f8-46a8-8830-c518a0f646f4";
    const CWD: &str = "/tmp/gt/proj";

    /// The first `n` lines of `bytes`, each with its newline.
    fn lines(bytes: &[u8], n: usize) -> Vec<u8> {
        bytes
            .split_inclusive(|&b| b == b'\n')
            .take(n)
            .flatten()
            .copied()
            .collect()
    }

    /// What record `n` (1-based) is: a message's `type`, `$set`, `$set.messages`, `$rewindTo`,
    /// or `meta` (the first line).
    fn kind(bytes: &[u8], n: usize) -> String {
        let line = bytes.split(|&b| b == b'\n').nth(n - 1).unwrap();
        let v: Value = serde_json::from_slice(line).unwrap();
        if v.get("$rewindTo").is_some() {
            "$rewindTo".into()
        } else if let Some(t) = str_of(&v, "type") {
            t.into()
        } else if let Some(s) = v.get("$set") {
            if s.get("messages").is_some() {
                "$set.messages".into()
            } else {
                "$set".into()
            }
        } else {
            "meta".into()
        }
    }

    /// The state after the first `n` records, checked against the record that ends the cut.
    fn open_after(bytes: &[u8], n: usize, what: &str) -> bool {
        assert_eq!(kind(bytes, n), what, "record {n}");
        parse(&lines(bytes, n)).turn_open
    }

    fn ts(s: &str) -> Option<Timestamp> {
        Some(s.parse().unwrap())
    }

    #[test]
    fn a_prompt_opens_the_turn_a_tool_call_keeps_it_open_and_a_reply_closes_it() {
        let b = CHAT_TOOL;
        assert!(!open_after(b, 1, "meta"));
        assert!(!open_after(b, 2, "$set.messages"), "the context message");
        assert!(open_after(b, 3, "user"));
        assert!(open_after(b, 4, "$set"));
        assert!(!open_after(b, 5, "gemini"));
        assert!(open_after(b, 7, "user"), "the slow one");
        assert!(!open_after(b, 9, "gemini"));
        assert!(open_after(b, 11, "user"));
        // The model asked for a tool: an empty reply while the permission prompt is up.
        assert!(open_after(b, 13, "gemini"));
        assert!(open_after(b, 15, "gemini"), "the call, completed");
        assert!(open_after(b, 16, "user"), "its result goes back");
        assert!(!open_after(b, 18, "gemini"));
        let i = parse(&lines(b, 13));
        assert_eq!(i.last_prompt.as_deref(), Some("[tool touch x.txt]"));
        assert_eq!(i.last_real_turn, ts("2026-12-05T15:57:26.666Z"));
    }

    #[test]
    fn cancellations_failures_and_rewinds_close_the_turn() {
        let b = RESUMED;
        // Esc during a slow reply: `info`, then the list rolled back to before the prompt.
        assert!(open_after(b, 7, "user"));
        assert!(!open_after(b, 9, "info"));
        assert!(!open_after(b, 11, "$set.messages"));
        // Esc at a permission prompt: the call is re-pushed cancelled, then `info`.
        assert!(open_after(b, 21, "user"));
        assert!(open_after(b, 23, "gemini"));
        assert!(!open_after(b, 25, "gemini"));
        assert!(!open_after(b, 26, "info"));
        assert!(!open_after(b, 40, "$set.messages"), "after the replay");
        assert!(open_after(b, 41, "user"), "an @file prompt");
        assert!(!open_after(b, 43, "gemini"));
        assert!(
            !open_after(b, 45, "user"),
            "shell mode: the model does not run"
        );
        assert!(!open_after(b, 47, "$set"), "the resume");
        assert!(!open_after(b, 48, "$set.messages"));
        assert!(open_after(b, 49, "user"));
        assert!(!open_after(b, 51, "gemini"));

        // Esc while the tool ran: `info` first, then the cancelled call and its answer.
        let c = CANCEL_RUNNING;
        assert!(open_after(c, 3, "user"));
        assert!(open_after(c, 5, "gemini"));
        assert!(!open_after(c, 7, "info"));
        assert!(!open_after(c, 9, "gemini"));
        assert!(!open_after(c, 10, "user"), "answers a cancelled call");
        assert!(!parse(c).turn_open);

        // A refused request: the list rolled back, then `error`.
        let e = API_ERROR;
        assert!(open_after(e, 3, "user"));
        assert!(!open_after(e, 5, "$set.messages"));
        assert!(!open_after(e, 6, "error"));
        let recs: Vec<&[u8]> = e.split_inclusive(|&b| b == b'\n').collect();
        assert!(
            !parse(&[recs[0], recs[2], recs[5]].concat()).turn_open,
            "error alone"
        );

        // `/rewind`: `$rewindTo`, then the list.
        let r = REWIND;
        assert!(open_after(r, 7, "user"));
        assert!(!open_after(r, 9, "gemini"));
        assert!(!open_after(r, 11, "$rewindTo"));
        assert!(!open_after(r, 12, "$set.messages"));
        let recs: Vec<&[u8]> = r.split_inclusive(|&b| b == b'\n').collect();
        let cut = [recs[0], recs[6], recs[10]].concat();
        assert!(!parse(&cut).turn_open, "a rewind alone closes a turn");
    }

    #[test]
    fn the_real_chats_read_their_ids_prompts_replies_and_titles() {
        let i = parse(RESUMED);
        assert_eq!(i.session_id.as_deref(), Some(SID));
        assert_eq!(i.cwd, None, "not in the records");
        assert_eq!(i.first_prompt.as_deref(), Some("hello there"));
        assert_eq!(i.last_prompt.as_deref(), Some("after the resume"));
        assert_eq!(
            i.last_assistant.as_deref(),
            Some("Hello from the mock Gemini server (canned reply #30). PARKTEST-OK")
        );
        assert_eq!(i.last_real_turn, ts("2026-12-05T16:23:12.507Z"));
        assert_eq!(i.ai_title, None);
        assert!(!i.turn_open);
        assert_eq!((i.records, i.bad_lines, i.repaired_lines), (52, 0, 0));
        assert!(!i.truncated_last_line && i.unsure.is_none());

        let c = parse(CHAT_TOOL);
        assert_eq!(
            c.session_id.as_deref(),
            Some("c3c7b841-2547-4b1f-b7b3-d91104676d61")
        );
        assert_eq!(c.first_prompt.as_deref(), Some("say hello to the mock"));
        assert_eq!(c.last_prompt.as_deref(), Some("[tool touch x.txt]"));
        assert!(c
            .last_assistant
            .as_deref()
            .is_some_and(|a| a.starts_with("Tool finished.")));
        assert_eq!(c.last_real_turn, ts("2026-12-05T15:57:30.321Z"));

        // The next Gemini start titled the previous session.
        let s = parse(SUMMARIZED);
        assert_eq!(
            s.ai_title.as_deref(),
            Some("Mock a session to be summarized")
        );
        assert_eq!(
            s.first_prompt.as_deref(),
            Some("a session to be summarized")
        );
        assert!(!s.turn_open);

        let o = parse(ORPHAN);
        assert_eq!(o.session_id.as_deref(), Some(SID));
        assert_eq!(
            (o.first_prompt, o.last_assistant, o.last_real_turn),
            (None, None, None),
            "the context message is no prompt"
        );

        let e = parse(API_ERROR);
        assert_eq!(e.last_prompt.as_deref(), Some("this will fail fast"));
        assert_eq!(e.last_assistant, None, "an error is no reply");

        let r = parse(REWIND);
        assert_eq!(
            r.last_prompt.as_deref(),
            Some("second of two"),
            "file order"
        );
    }

    #[test]
    fn markdown_shows_prompts_replies_tools_and_notes_once() {
        let md = markdown(RESUMED);
        for prompt in [
            "hello there",
            "think long [slow 20]",
            "make it [tool touch x.txt]",
            "again [tool touch y.txt]",
            "read @notes.txt please",
            "after the resume",
        ] {
            assert_eq!(
                md.markdown.matches(prompt).count(),
                1,
                "{prompt}: {}",
                md.markdown
            );
        }
        for n in [7, 16, 26, 30] {
            let reply = format!("(canned reply #{n}). PARKTEST-OK");
            assert_eq!(
                md.markdown.matches(&reply).count(),
                1,
                "{reply}: {}",
                md.markdown
            );
        }
        assert_eq!((md.turns, md.tool_calls), (6, 2), "{}", md.markdown);
        assert_eq!(
            md.markdown
                .matches("- 🔧 run_shell_command: `touch x.txt`")
                .count(),
            1
        );
        assert!(md.markdown.contains("run_shell_command: `touch y.txt`"));
        assert_eq!(md.markdown.matches("*Request cancelled*").count(), 2);
        assert!(md
            .markdown
            .contains("*Shell command run by the user: echo shellmode*"));
        for hidden in [
            "session_context",
            "some notes here", // the @file content Gemini sent
            "I ran the following shell command",
            "Process Group PGID", // tool output
        ] {
            assert!(!md.markdown.contains(hidden), "{hidden}: {}", md.markdown);
        }
        let i = parse(RESUMED);
        assert_eq!(md.last_user, i.last_prompt);
        assert_eq!(md.last_assistant, i.last_assistant);

        let md = markdown(CHAT_TOOL);
        assert_eq!((md.turns, md.tool_calls), (3, 1), "{}", md.markdown);
        assert!(md
            .markdown
            .contains("- 🔧 run_shell_command: `touch x.txt`"));

        assert!(markdown(REWIND).markdown.contains("*Conversation rewound*"));
        let md = markdown(API_ERROR);
        assert!(md.markdown.contains("*Request failed*"), "{}", md.markdown);
        assert!(!md.markdown.contains("PARK-ERR"), "UI text is not shown");
        assert_eq!(markdown(ORPHAN).markdown, "");
        let md = markdown(CANCEL_RUNNING);
        assert!(
            md.markdown.contains("`sleep 6; touch z.txt`"),
            "{}",
            md.markdown
        );
    }

    #[test]
    fn a_replayed_history_is_not_shown_or_counted_again() {
        let (recs, _, replay) = read(RESUMED);
        let replayed: Vec<usize> = (0..recs.len())
            .filter(|&j| replay[j])
            .map(|j| j + 1)
            .collect();
        assert_eq!(
            replayed,
            [28, 30, 32, 34, 36, 38],
            "the message records of the replay"
        );
        // Up to the replay's list: the last prompt is the cancelled one, not its replayed elder.
        let upto = lines(RESUMED, 40);
        let i = parse(&upto);
        assert_eq!(i.last_prompt.as_deref(), Some("again [tool touch y.txt]"));
        assert_eq!(i.first_prompt.as_deref(), Some("hello there"));
        assert_eq!(
            i.last_real_turn,
            ts("2026-12-05T16:21:02.861Z"),
            "the cancelled call"
        );
        assert_eq!(markdown(&upto).turns, 4);

        // Replies that carry `model` (a chat Gemini rewrote whole) are not a replay.
        let meta = format!(
            r#"{{"sessionId":"{SID}","projectHash":"x","startTime":"2026-12-05T16:00:00.000Z","lastUpdated":"2026-12-05T16:00:00.000Z","kind":"main"}}"#
        );
        let p = r#"{"id":"a","timestamp":"2026-12-05T16:00:01.000Z","type":"user","content":[{"text":"kept prompt"}]}"#;
        let r = r#"{"id":"b","timestamp":"2026-12-05T16:00:02.000Z","type":"gemini","content":"kept reply","model":"m"}"#;
        let list = r#"{"$set":{"messages":[{"id":"a","type":"user","content":[{"text":"kept prompt"}]},{"id":"b","type":"gemini","content":[{"text":"kept reply"}]}]}}"#;
        let b = format!("{meta}\n{p}\n{r}\n{list}\n");
        let i = parse(b.as_bytes());
        assert_eq!(i.last_prompt.as_deref(), Some("kept prompt"));
        assert_eq!(i.last_assistant.as_deref(), Some("kept reply"));
        // Without `model` the same run is a replay.
        let b = b.replace(r#","model":"m""#, "");
        let i = parse(b.as_bytes());
        assert_eq!((i.last_prompt, i.last_assistant), (None, None));
    }

    #[test]
    fn a_list_re_reads_the_turn_and_a_text_reply_with_a_pending_call_reads_closed() {
        let meta = format!(
            r#"{{"sessionId":"{SID}","projectHash":"x","startTime":"2026-12-05T16:00:00.000Z"}}"#
        );
        let prompt = r#"{"id":"p","timestamp":"2026-12-05T16:00:01.000Z","type":"user","content":[{"text":"go"}]}"#;
        let call_list = r#"{"$set":{"messages":[{"id":"p","type":"user","content":[{"text":"go"}]},{"id":"c","type":"gemini","content":[{"functionCall":{"name":"run_shell_command","args":{"command":"ls"}}}]}]}}"#;
        let hook = r#"{"id":"h","timestamp":"2026-12-05T16:00:02.000Z","type":"user","content":[{"text":"<hook_context>x</hook_context>"}]}"#;
        let hinted = r#"{"id":"q","timestamp":"2026-12-05T16:00:03.000Z","type":"user","content":[{"text":"real"},{"text":"\n\n<hook_context>x</hook_context>"}]}"#;
        let talk = r#"{"id":"t","timestamp":"2026-12-05T16:00:04.000Z","type":"gemini","content":"Let me look.","model":"m"}"#;
        let t = |recs: &[&str]| {
            let mut s = format!("{meta}\n");
            for r in recs {
                s.push_str(r);
                s.push('\n');
            }
            parse(s.as_bytes())
        };
        assert!(t(&[call_list]).turn_open, "a list ending in a call");
        assert_eq!(t(&[prompt, hook]).last_prompt.as_deref(), Some("go"));
        assert!(!t(&[hook]).turn_open, "hook context is not a prompt");
        assert_eq!(t(&[hook]).first_prompt, None);
        assert_eq!(t(&[hinted]).last_prompt.as_deref(), Some("real"));
        // Esc while two tools ran, one done: `info`, then the calls (one cancelled) and their
        // results, none sent to the model. In a running turn the same calls go back.
        let cancel = r#"{"id":"i","timestamp":"2026-12-05T16:00:05.000Z","type":"info","content":"Request cancelled."}"#;
        let mixed = r#"{"id":"m","timestamp":"2026-12-05T16:00:06.000Z","type":"gemini","content":"","model":"m","toolCalls":[{"id":"c1","name":"run_shell_command","args":{"command":"ls"},"status":"success"},{"id":"c2","name":"run_shell_command","args":{"command":"sleep 9"},"status":"cancelled"}]}"#;
        let results = r#"{"id":"r","timestamp":"2026-12-05T16:00:07.000Z","type":"user","content":[{"functionResponse":{"id":"c1","name":"run_shell_command","response":{}}},{"functionResponse":{"id":"c2","name":"run_shell_command","response":{}}}]}"#;
        assert!(!t(&[prompt, cancel, mixed]).turn_open);
        assert!(!t(&[prompt, cancel, mixed, results]).turn_open);
        assert!(t(&[prompt, mixed]).turn_open);
        assert!(t(&[prompt, mixed, results]).turn_open);
        // Gemini writes a call only once it completed: a reply with text reads closed meanwhile.
        assert!(!t(&[prompt, talk]).turn_open);
    }

    #[test]
    fn message_of_agrees_with_the_renderer() {
        for bytes in FIXTURES {
            let n = bytes.split_inclusive(|&b| b == b'\n').count();
            for k in 0..=n {
                let b = lines(bytes, k);
                let end = render::raw_end(&b, message_of);
                let md = markdown(&b);
                let norm = normalize(&md.markdown);
                for m in [&end.last_user, &end.last_reply].into_iter().flatten() {
                    assert!(
                        norm.contains(&normalize(m)),
                        "cut {k}: {m}\n{}",
                        md.markdown
                    );
                }
                assert!(end.unreadable.is_empty());
            }
            let end = render::raw_end(bytes, message_of);
            let md = markdown(bytes);
            assert_eq!(end.last_reply, md.last_assistant);
        }
    }

    /// A config dir holding `RESUMED` and its `ORPHAN` under the registry's slug, and `CHAT_TOOL`.
    fn config_with_chats() -> (tempfile::TempDir, PathBuf, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join(".gemini");
        let proj = config.join("tmp/proj");
        std::fs::create_dir_all(proj.join("chats")).unwrap();
        std::fs::write(
            config.join("projects.json"),
            r#"{"projects":{"/tmp/gt/proj":"proj"}}"#,
        )
        .unwrap();
        std::fs::write(proj.join(".project_root"), CWD).unwrap();
        let real = proj.join("chats/session-2026-12-05T16-20-c49bc043.jsonl");
        let orphan = proj.join("chats/session-2026-12-05T16-22-c49bc043.jsonl");
        let other = proj.join("chats/session-2026-12-05T15-57-c3c7b841.jsonl");
        std::fs::write(&real, RESUMED).unwrap();
        std::fs::write(&orphan, ORPHAN).unwrap();
        std::fs::write(&other, CHAT_TOOL).unwrap();
        (dir, config, real, orphan)
    }

    #[test]
    fn find_returns_the_real_chat_and_orphans_lists_only_the_stub() {
        let (_d, config, real, orphan) = config_with_chats();
        assert_eq!(find(&config, CWD, SID).as_ref(), Some(&real));
        assert_eq!(
            find(&config, CWD, &SID.to_uppercase()).as_ref(),
            Some(&real)
        );
        assert_eq!(find(&config, "/tmp/gt/proj/", SID).as_ref(), Some(&real));
        assert_eq!(find(&config, "/tmp/gt/other", SID), None, "another project");
        assert_eq!(orphans(&real, SID), vec![orphan.clone()]);
        assert_eq!(
            orphans(&real, "c3c7b841-2547-4b1f-b7b3-d91104676d61"),
            Vec::<PathBuf>::new()
        );
        assert_eq!(read_file(&real).unwrap(), parse(RESUMED));

        let listed = all(&config);
        let ids: Vec<&str> = listed.iter().map(|(s, _)| s.as_str()).collect();
        assert_eq!(ids, ["c3c7b841-2547-4b1f-b7b3-d91104676d61", SID]);
        assert_eq!(listed[1].1, real, "never the orphan");

        // A stub that holds a prompt is never an orphan; nor one whose list holds a reply.
        let dir = real.parent().unwrap();
        let talked = dir.join("session-2026-12-05T16-40-c49bc043.jsonl");
        let prompt = r#"{"id":"x","timestamp":"2026-12-05T16:40:00.000Z","type":"user","content":[{"text":"hi"}]}"#;
        std::fs::write(&talked, [ORPHAN, prompt.as_bytes(), b"\n"].concat()).unwrap();
        let listed_reply = dir.join("session-2026-12-05T16-41-c49bc043.jsonl");
        let list =
            r#"{"$set":{"messages":[{"id":"y","type":"gemini","content":[{"text":"hello"}]}]}}"#;
        std::fs::write(&listed_reply, [ORPHAN, list.as_bytes(), b"\n"].concat()).unwrap();
        let garbled = dir.join("session-2026-12-05T16-42-c49bc043.jsonl");
        std::fs::write(&garbled, [ORPHAN, b"{not json\n"].concat()).unwrap();
        assert_eq!(orphans(&real, SID), vec![orphan.clone()]);
        assert_eq!(
            find(&config, CWD, SID).as_ref(),
            Some(&real),
            "the most conversation"
        );
        assert_eq!(all(&config)[1].1, real);

        // The real chat gone (Gemini's cleanup): the one that talked, never the stub.
        std::fs::remove_file(&real).unwrap();
        std::fs::remove_file(&listed_reply).unwrap();
        std::fs::remove_file(&garbled).unwrap();
        assert_eq!(find(&config, CWD, SID).as_ref(), Some(&talked));
        assert_eq!(orphans(&talked, SID), vec![orphan.clone()]);

        // No conversation anywhere: the earliest start.
        std::fs::remove_file(&talked).unwrap();
        let later = dir.join("session-2026-12-05T17-00-c49bc043.jsonl");
        let s = String::from_utf8(ORPHAN.to_vec())
            .unwrap()
            .replace("2026-12-05T16:22:59.942Z", "2026-12-05T17:00:00.000Z");
        std::fs::write(&later, s).unwrap();
        assert_eq!(find(&config, CWD, SID).as_ref(), Some(&orphan));
        assert_eq!(orphans(&orphan, SID), vec![later.clone()]);
        assert_eq!(all(&config)[1].1, orphan);
    }

    #[test]
    fn chats_dir_follows_the_registry_then_the_marker_then_the_legacy_hash() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path();
        assert_eq!(chats_dir(config, CWD), None);
        std::fs::create_dir_all(config.join("tmp")).unwrap();
        // The registry's shape, as 0.61.0 writes it.
        std::fs::write(
            config.join("projects.json"),
            "{\n  \"projects\": {\n    \"/tmp/gt/proj\": \"proj\"\n  }\n}",
        )
        .unwrap();
        let slug = config.join("tmp/proj/chats");
        assert_eq!(
            chats_dir(config, CWD),
            Some(slug.clone()),
            "before Gemini made it"
        );
        assert_eq!(chats_dir(config, "/tmp/gt/x/../proj/."), Some(slug.clone()));
        assert_eq!(chats_dir(config, "tmp/gt/proj"), None, "relative");
        // A marker naming another cwd voids the mapping; a marker naming this one is found.
        std::fs::create_dir_all(config.join("tmp/proj")).unwrap();
        std::fs::write(config.join("tmp/proj/.project_root"), "/elsewhere").unwrap();
        assert_eq!(chats_dir(config, CWD), None);
        std::fs::create_dir_all(config.join("tmp/proj-1")).unwrap();
        std::fs::write(config.join("tmp/proj-1/.project_root"), "/tmp/gt/proj\n").unwrap();
        assert_eq!(
            chats_dir(config, CWD),
            Some(config.join("tmp/proj-1/chats"))
        );
        std::fs::write(config.join("tmp/proj/.project_root"), "tmp/gt/proj").unwrap();
        assert_eq!(
            chats_dir(config, CWD),
            Some(config.join("tmp/proj-1/chats"))
        );
        std::fs::write(config.join("tmp/proj/.project_root"), CWD).unwrap();
        assert_eq!(chats_dir(config, CWD), Some(slug.clone()));
        // Before the registry: the sha256 of the cwd (the chats' `projectHash`).
        let other = "/tmp/gm/proj";
        let hash = "456ec1b6068dbb0ce61c4f2c1942de9d8a6a734726bdc71d4cc1c1008bc5bedb";
        assert_eq!(chats_dir(config, other), None);
        std::fs::create_dir_all(config.join("tmp").join(hash).join("chats")).unwrap();
        let legacy = config.join("tmp").join(hash).join("chats");
        assert_eq!(chats_dir(config, other), Some(legacy.clone()));
        let chat = legacy.join("session-2026-12-05T15-57-c3c7b841.jsonl");
        std::fs::write(&chat, CHAT_TOOL).unwrap();
        assert_eq!(
            find(config, other, "c3c7b841-2547-4b1f-b7b3-d91104676d61"),
            Some(chat)
        );
        // A chat copied to the registry's dir by Gemini's migration: the copy there wins a tie.
        std::fs::write(
            config.join("projects.json"),
            r#"{"projects":{"/tmp/gm/proj":"gm"}}"#,
        )
        .unwrap();
        let copy = config.join("tmp/gm/chats/session-2026-12-05T15-57-C3C7B841.jsonl");
        std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
        std::fs::write(&copy, CHAT_TOOL).unwrap();
        let sid = "c3c7b841-2547-4b1f-b7b3-d91104676d61";
        assert_eq!(find(config, other, sid).as_ref(), Some(&copy));
        assert!(all(config).contains(&(sid.to_string(), copy)));
        // A garbled registry is no registry.
        std::fs::write(config.join("projects.json"), "{garbage").unwrap();
        assert_eq!(chats_dir(config, CWD), Some(slug));
    }

    #[test]
    fn sha256_matches_known_digests() {
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let long = [b'a'; 1000];
        assert_eq!(
            sha256_hex(&long),
            "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3"
        );
        // The chats' `projectHash` is this hash of the cwd.
        let head: Value =
            serde_json::from_slice(CHAT_TOOL.split(|&b| b == b'\n').next().unwrap()).unwrap();
        assert_eq!(
            str_of(&head, "projectHash"),
            Some(sha256_hex(b"/tmp/gm/proj").as_str())
        );
        let head: Value =
            serde_json::from_slice(RESUMED.split(|&b| b == b'\n').next().unwrap()).unwrap();
        assert_eq!(
            str_of(&head, "projectHash"),
            Some(sha256_hex(CWD.as_bytes()).as_str())
        );
    }

    #[test]
    fn hostile_ids_and_paths_never_leave_the_config_dir() {
        let (_d, config, real, _orphan) = config_with_chats();
        for bad in [
            "../../etc/passwd",
            "c49bc043-e6f8-46a8-8830-c518a0f646f4/../x",
            "c49bc043",
            "$(id)",
            "",
        ] {
            assert_eq!(find(&config, CWD, bad), None, "{bad:?}");
            assert!(orphans(&real, bad).is_empty(), "{bad:?}");
        }
        // A registry slug that is a path piece is ignored.
        std::fs::write(
            config.join("projects.json"),
            r#"{"projects":{"/w":"../../etc","/v":"..","/u":"a/b"}}"#,
        )
        .unwrap();
        for cwd in ["/w", "/v", "/u"] {
            assert_eq!(chats_dir(&config, cwd), None, "{cwd}");
        }
        for cwd in ["/../../etc", "/tmp/gt/proj/../../../..", "/w/../../../x"] {
            let p = chats_dir(&config, cwd).unwrap_or_else(|| config.join("tmp/x/chats"));
            assert!(p.starts_with(config.join("tmp")), "{p:?}");
            assert_eq!(
                p.components().count(),
                config.components().count() + 3,
                "{p:?}"
            );
        }
        // Symlinks are not followed: a linked chat, a linked chats dir, a linked project dir.
        let dir = real.parent().unwrap();
        let link = dir.join("session-2026-12-05T18-00-c49bc043.jsonl");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let other = "dddddddd-2547-4b1f-b7b3-d91104676d61";
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(outside.path().join("chats")).unwrap();
        std::fs::write(
            outside
                .path()
                .join("chats/session-2026-12-05T18-01-dddddddd.jsonl"),
            String::from_utf8(CHAT_TOOL.to_vec())
                .unwrap()
                .replace("c3c7b841-2547-4b1f-b7b3-d91104676d61", other),
        )
        .unwrap();
        std::fs::create_dir_all(config.join("tmp/evil")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("chats"), config.join("tmp/evil/chats"))
            .unwrap();
        std::os::unix::fs::symlink(outside.path(), config.join("tmp/evil2")).unwrap();
        std::fs::write(
            config.join("projects.json"),
            r#"{"projects":{"/tmp/gt/proj":"proj","/e":"evil","/e2":"evil2"}}"#,
        )
        .unwrap();
        assert_eq!(find(&config, CWD, SID).as_ref(), Some(&real));
        assert!(!orphans(&real, SID).contains(&link));
        for cwd in ["/e", "/e2"] {
            assert_eq!(find(&config, cwd, other), None, "{cwd}");
        }
        let listed = all(&config);
        assert_eq!(listed.len(), 2, "{listed:?}");
        for (sid, p) in listed {
            assert!(p.starts_with(config.join("tmp/proj/chats")), "{p:?}");
            assert_ne!(p, link);
            assert_ne!(sid, other);
        }
        // Ids in records are gated.
        for bad in [
            "../../etc/passwd",
            "$(id)",
            "C49BC043-E6F8-46A8-8830-C518A0F646F4x",
        ] {
            let meta = serde_json::json!({"sessionId": bad, "projectHash": "x"}).to_string();
            assert_eq!(parse(meta.as_bytes()).session_id, None, "{bad:?}");
        }
        let upper = r#"{"sessionId":"C49BC043-E6F8-46A8-8830-C518A0F646F4","projectHash":"x"}"#;
        assert_eq!(parse(upper.as_bytes()).session_id.as_deref(), Some(SID));
    }

    #[test]
    fn garbage_never_panics_and_is_counted() {
        let i = parse(b"not json\n{\"type\":\"user\"}\n\xff\xfe\n[1]\n{\"trunc");
        assert_eq!(i.bad_lines, 4);
        assert!(i.truncated_last_line);
        assert!(!i.turn_open);
        for odd in [
            r#"{"id":"a","type":"gemini","content":5,"toolCalls":{"name":1}}"#,
            r#"{"id":"a","type":"gemini","content":[1,null,{"functionCall":7}],"toolCalls":[1,null,{"args":[]}]}"#,
            r#"{"id":"a","type":"user","content":{"text":"obj"},"displayContent":null}"#,
            r#"{"id":"a","type":"user","content":[{"functionResponse":null}]}"#,
            r#"{"id":7,"type":"info","content":["Request cancelled."]}"#,
            r#"{"$set":{"messages":"no","summary":7,"sessionId":null}}"#,
            r#"{"$set":[1]}"#,
            r#"{"$rewindTo":5}"#,
            r#"{"id":"a","type":"error","content":"`**x**`"}"#,
            r#"{"id":"a","type":"user","content":[{"text":"I ran the following shell command:\n```sh\n`**x**` <b>\n```"}]}"#,
        ] {
            parse(odd.as_bytes());
            let md = markdown(odd.as_bytes());
            assert!(!md.markdown.contains("**x**"), "{}", md.markdown);
            message_of(&serde_json::from_str(odd).unwrap());
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

    /// Every prefix length of every real chat (a record being written, or cut by a kill): the
    /// complete lines before a cut are read once per line; at every byte the half line is read on
    /// its own, and where it still reads as a record the full prefix is read again. In the middle
    /// of each line the full prefix must say what its complete lines say.
    #[test]
    fn every_truncation_of_the_real_chats_parses() {
        for bytes in FIXTURES {
            let mut start = 0; // where the line being cut begins
            let mut end = 0; // and ends (its newline)
            let mut whole = check_prefix(b"");
            for cut in 0..=bytes.len() {
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
                markdown(partial);
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
                }
            }
        }
    }
}
