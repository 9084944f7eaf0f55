//! Transcript and rollout readers (pure over bytes, plus one cheap file reader), the Claude
//! project-directory encoding, and the session-id gate.
//!
//! Contract:
//! * `parse_claude` / `parse_codex` take JSONL bytes (a Claude transcript
//!   `~/.claude/projects/<enc-cwd>/<id>.jsonl`, a Codex rollout `rollout-….jsonl`) and never panic.
//!   Lines are read as real writers leave them ([`parse_line`]): a clean line goes straight to
//!   serde; one serde rejects is repaired where the bytes allow it and counted in `repaired_lines`
//!   (invalid UTF-8 → U+FFFD, a lone UTF-16 surrogate escape such as `\ud83d` → `\ufffd`, and a
//!   killed writer's half record with the resumed writer's next record glued to it → that record).
//!   A line still not a JSON object (garbage, a comment) is counted in `bad_lines` and skipped;
//!   empty lines are neither records nor bad. The last line without a newline that does not parse
//!   is a record being written (or cut by a kill): `truncated_last_line`, also counted bad.
//! * A skipped line never hides the latest turn silently: when the last complete line cannot be
//!   read even leniently, `unsure` says so, and callers treat the session's state as unknown.
//! * Session ids in the result have passed [`valid_session_id`] (lowercased); a record carrying a
//!   malformed id is ignored for that field, so an id from here is safe near paths and commands.
//! * `read_*_file` read the first 64 KiB and a tail window (whole file when small), cut both at
//!   line boundaries so no line is parsed twice or counted bad because of the cut. The window
//!   starts at 256 KiB and doubles until it holds the last complete record and a real turn, so a
//!   final reply or tool result of many megabytes is read whole and the idle time and turn state
//!   come from it. Past [`TAIL_CAP`] (64 MiB) it stops and sets `unsure`: park cannot tell the
//!   state, and refuses rather than guessing (never "a turn in flight" forever, never "idle").
//! * Field semantics (record shapes: FORMATS.md 4.3 and 7.3):
//!   - `last_real_turn` is the latest timestamp of a real user prompt or a model reply (Codex:
//!     also `task_complete`); tool results, meta/harness records and synthetic replies don't count.
//!   - `turn_open`: Claude — a user record (a real prompt, or a tool result / notification that
//!     makes the model run again) is not yet answered by a final reply, a `turn_duration`, or
//!     (for a local slash command) its output, a user or `local_command` system record.
//!     A reply that ends in `tool_use` keeps the turn open: the agent is still working on it.
//!     Codex — a `task_started` after the last `task_complete` / `turn_aborted`.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

use jiff::Timestamp;
use serde_json::Value;

/// What the readable part of one transcript says.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TranscriptInfo {
    /// Claude: `sessionId` of the records; Codex: `session_meta.payload.id`.
    pub session_id: Option<String>,
    /// Authoritative cwd from the records (Claude `cwd`; Codex latest `turn_context.cwd`, else
    /// `session_meta.payload.cwd`).
    pub cwd: Option<String>,
    /// Timestamp of the last real user or assistant message.
    pub last_real_turn: Option<Timestamp>,
    /// A turn is in flight (see the module doc).
    pub turn_open: bool,
    /// Claude `ai-title` record (last one wins).
    pub ai_title: Option<String>,
    /// First real user prompt text.
    pub first_prompt: Option<String>,
    /// Last real user prompt text (in file order).
    pub last_prompt: Option<String>,
    /// Last assistant text.
    pub last_assistant: Option<String>,
    /// Lines parsed as JSON objects.
    pub records: usize,
    /// Non-empty lines that failed to parse (even leniently).
    pub bad_lines: usize,
    /// Records that parsed only after a repair (see the module doc).
    pub repaired_lines: usize,
    /// The bytes end in a line without a newline that does not parse: a record still being
    /// written, or cut short by a kill. Also counted in `bad_lines`.
    pub truncated_last_line: bool,
    /// Why the latest turn cannot be told from what was read (its last complete record cannot be
    /// parsed, or is past the tail reader's bound). `turn_open` and `last_real_turn` may then be
    /// stale: the session's state is unknown, never idle.
    pub unsure: Option<String>,
}

impl TranscriptInfo {
    /// Copies the line counts and the read's flags from `counts` (filled by `for_each_record`).
    pub(crate) fn take_counts(&mut self, counts: &TranscriptInfo) {
        self.records = counts.records;
        self.bad_lines = counts.bad_lines;
        self.repaired_lines = counts.repaired_lines;
        self.truncated_last_line = counts.truncated_last_line;
        self.unsure.clone_from(&counts.unsure);
    }
}

/// Feeds every JSON-object line of `bytes` to `f`, counting records, repaired, bad and
/// truncated lines, and noting in `unsure` when the last complete line is unreadable.
pub(crate) fn for_each_record(bytes: &[u8], info: &mut TranscriptInfo, mut f: impl FnMut(&Value)) {
    // Where the last complete (newline-terminated), non-blank line ends: the record that decides
    // the latest turn when nothing follows it.
    let last_complete_end = last_complete_line(bytes).map(|(_, end)| end);
    let mut at = 0usize;
    for raw in bytes.split(|&b| b == b'\n') {
        let start = at;
        at += raw.len() + 1;
        let line = raw.trim_ascii();
        if line.is_empty() {
            continue;
        }
        match parse_line(line) {
            Some((v, repaired)) => {
                info.records += 1;
                info.repaired_lines += usize::from(repaired);
                f(&v);
            }
            None => {
                info.bad_lines += 1;
                let ends_file = start + raw.len() == bytes.len();
                if ends_file {
                    info.truncated_last_line = true;
                } else if Some(start + raw.len()) == last_complete_end
                    && !crate::support::fault::disabled("transcript-last-line-unsure")
                {
                    info.unsure = Some(format!(
                        "the transcript's last complete record ({} bytes at byte {start}) cannot be parsed, even leniently",
                        raw.len()
                    ));
                }
            }
        }
    }
}

/// The byte range (`start`, `end` excluding the newline) of the last newline-terminated line
/// that is not blank.
pub(crate) fn last_complete_line(bytes: &[u8]) -> Option<(usize, usize)> {
    let mut end = bytes.iter().rposition(|&b| b == b'\n')?;
    loop {
        let start = bytes[..end]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |p| p + 1);
        if !bytes[start..end].trim_ascii().is_empty() {
            return Some((start, end));
        }
        if start == 0 {
            return None;
        }
        end = start - 1;
    }
}

/// One JSONL line as a JSON object, leniently (see the module doc), and whether it needed a
/// repair. Clean lines cost one serde pass; only a line serde rejects is looked at again.
pub fn parse_line(line: &[u8]) -> Option<(Value, bool)> {
    if let Ok(v) = serde_json::from_slice::<Value>(line) {
        // Valid JSON that is not an object (a number, a string) needs no repair: it is bad.
        return v.is_object().then_some((v, false));
    }
    if crate::support::fault::disabled("transcript-lenient") {
        return None;
    }
    let object = |s: &str| {
        serde_json::from_str::<Value>(s)
            .ok()
            .filter(Value::is_object)
    };
    let text = String::from_utf8_lossy(line);
    let fixed = fix_surrogates(&text);
    let changed = matches!(text, std::borrow::Cow::Owned(_)) || fixed.is_some();
    let text = fixed.map_or(text, std::borrow::Cow::Owned);
    if changed {
        if let Some(v) = object(&text) {
            return Some((v, true));
        }
    }
    glued_record(&text, object).map(|v| (v, true))
}

/// A killed writer leaves half a record without a newline, and the resumed agent appends its next
/// record right after it: the line is `<half record>{…complete record…}`. The complete record is
/// the only suffix starting at `{` that parses whole (a `{` inside it leaves its parent's closing
/// braces trailing), so try the `{` positions left to right, a bounded number of them.
fn glued_record(text: &str, object: impl Fn(&str) -> Option<Value>) -> Option<Value> {
    const TRIES: usize = 64;
    // The glued record is complete, so the line ends like one; a record cut short (the usual bad
    // last line, maybe megabytes long) is not worth 64 parses.
    if !text.trim_end().ends_with('}') {
        return None;
    }
    text.match_indices("{\"")
        .skip(1) // the line's own start, which already failed
        .take(TRIES)
        .find_map(|(i, _)| object(&text[i..]))
}

/// `text` with every lone UTF-16 surrogate escape (`\ud83d` not followed by a low surrogate, or
/// a low one alone) replaced by `\ufffd`; `None` when there is none. Escapes are walked in order,
/// so `\\ud83d` (an escaped backslash, then text) is left alone.
fn fix_surrogates(text: &str) -> Option<String> {
    let b = text.as_bytes();
    let hex = |at: usize| -> Option<u16> {
        let h = b.get(at..at + 4)?;
        u16::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok()
    };
    let unit = |at: usize| -> Option<u16> {
        (b.get(at) == Some(&b'\\') && b.get(at + 1) == Some(&b'u'))
            .then(|| hex(at + 2))
            .flatten()
    };
    let mut out: Option<String> = None;
    let mut copied = 0; // bytes of `text` already in `out`
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            i += 1;
            continue;
        }
        let Some(u) = unit(i) else {
            i += 2; // any other escape, including `\\`
            continue;
        };
        let lone = match u {
            0xD800..=0xDBFF => match unit(i + 6) {
                Some(0xDC00..=0xDFFF) => {
                    i += 12; // a valid pair
                    continue;
                }
                _ => true,
            },
            0xDC00..=0xDFFF => true,
            _ => false,
        };
        if lone {
            let o = out.get_or_insert_with(|| String::with_capacity(text.len()));
            o.push_str(&text[copied..i]);
            o.push_str("\\ufffd");
            copied = i + 6;
        }
        i += 6;
    }
    out.map(|mut o| {
        o.push_str(&text[copied..]);
        o
    })
}

/// A Claude assistant message's text blocks, joined by newlines, and whether it is synthetic:
/// API errors and "No response requested." end a turn but are not the model speaking. The one
/// reading behind the parser, the renderer and the archive's raw-end check.
pub(crate) fn claude_reply_text(msg: Option<&Value>) -> (String, bool) {
    let text = msg
        .and_then(|m| m.get("content"))
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
        .iter()
        .filter(|b| str_of(b, "type") == Some("text"))
        .filter_map(|b| str_of(b, "text"))
        .collect::<Vec<&str>>()
        .join("\n");
    let synthetic = msg.and_then(|m| str_of(m, "model")) == Some("<synthetic>")
        || text.trim() == "No response requested.";
    (text, synthetic)
}

pub(crate) fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

pub(crate) fn timestamp_of(v: &Value) -> Option<Timestamp> {
    str_of(v, "timestamp").and_then(|s| s.parse::<Timestamp>().ok())
}

/// Keeps the later of two timestamps: records are appended in order, but attachments and
/// snapshots carry slightly earlier stamps, and a max is immune to that.
fn bump(slot: &mut Option<Timestamp>, ts: Option<Timestamp>) {
    if let Some(ts) = ts {
        match slot {
            Some(cur) if *cur >= ts => {}
            _ => *slot = Some(ts),
        }
    }
}

pub(crate) fn non_empty(s: &str) -> Option<String> {
    let t = s.trim();
    (!t.is_empty()).then(|| t.to_string())
}

// ---------------------------------------------------------------------------------------------
// Claude
// ---------------------------------------------------------------------------------------------

/// User-record strings written by local commands and bash mode: no model turn follows them
/// (except slash commands that expand to a prompt, handled in `ClaudeUser::classify`).
const CLAUDE_LOCAL_PREFIXES: &[&str] = &[
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
    "<user-memory-input>",
];

/// What one Claude `user` record means for the turn.
pub(crate) enum ClaudeUser {
    /// A prompt the human typed (or pasted): a real turn.
    Prompt(String),
    /// Makes the model run again without being a prompt (tool results, task notifications,
    /// prompt-expanding slash commands).
    Continues,
    /// Ends the turn (`[Request interrupted by user]`, local command output).
    Closes,
    /// Meta, sidechain or unknown: no effect.
    Ignored,
}

impl ClaudeUser {
    pub(crate) fn classify(v: &Value) -> Self {
        // A compaction summary is written as a user record, but nobody typed it, and the model
        // already answered it (the summary is that answer): neither a prompt nor a turn.
        let flag = |k: &str| v.get(k).and_then(Value::as_bool) == Some(true);
        if flag("isMeta")
            || flag("isSidechain")
            || flag("isCompactSummary")
            || flag("isVisibleInTranscriptOnly")
        {
            return Self::Ignored;
        }
        let content = v.get("message").and_then(|m| m.get("content"));
        let (text, tool_result) = match content {
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
            _ => return Self::Ignored,
        };
        let t = text.trim_start();
        if t.starts_with("[Request interrupted by user") {
            return Self::Closes;
        }
        if t.starts_with("<local-command-stdout>") || t.starts_with("<local-command-stderr>") {
            return Self::Closes;
        }
        if CLAUDE_LOCAL_PREFIXES.iter().any(|p| t.starts_with(p)) {
            return Self::Ignored;
        }
        if t.starts_with("<command-name>") || t.starts_with("<command-message>") {
            // A slash command: local ones are closed by their stdout record right after.
            return Self::Continues;
        }
        if tool_result {
            return Self::Continues;
        }
        // Newer records say who wrote them; anything but a human (e.g. a background-task
        // notification) is not a real prompt, though the model will answer it.
        let origin = v
            .get("origin")
            .and_then(|o| o.get("kind"))
            .and_then(Value::as_str);
        let human = match origin {
            Some(kind) => kind == "human",
            None => matches!(str_of(v, "promptSource"), None | Some("typed")),
        };
        match non_empty(&text) {
            Some(text) if human => Self::Prompt(text),
            Some(_) => Self::Continues,
            None => Self::Ignored,
        }
    }
}

#[derive(Default)]
struct ClaudeState {
    info: TranscriptInfo,
    msg_session: Option<String>,
    any_session: Option<String>,
    /// Timestamp of the record that last set `turn_open`. Real Claude 2.1.197 sometimes writes a
    /// turn's records out of file order (assistant before its user prompt), so a record only moves
    /// the turn state when it is not older than the one that set it last.
    turn_ts: Option<Timestamp>,
}

fn set_turn(
    info: &mut TranscriptInfo,
    turn_ts: &mut Option<Timestamp>,
    open: bool,
    ts: Option<Timestamp>,
) {
    match (ts, *turn_ts) {
        (Some(t), Some(cur)) if t < cur => {}
        (Some(t), _) => {
            info.turn_open = open;
            *turn_ts = Some(t);
        }
        (None, _) => info.turn_open = open,
    }
}

impl ClaudeState {
    fn feed(&mut self, v: &Value) {
        let ty = str_of(v, "type").unwrap_or("");
        if let Some(id) = str_of(v, "sessionId").and_then(valid_session_id) {
            // Message records name the file's session; bookkeeping records (titles, modes) may
            // name another one, so they are only a fallback.
            if matches!(ty, "user" | "assistant" | "system" | "attachment") {
                self.msg_session = Some(id);
            } else {
                self.any_session = Some(id);
            }
        }
        if let Some(cwd) = str_of(v, "cwd").filter(|c| !c.is_empty()) {
            self.info.cwd = Some(cwd.to_string());
        }
        let ts = timestamp_of(v);
        let turn_ts = &mut self.turn_ts;
        let info = &mut self.info;
        match ty {
            "ai-title" => {
                if let Some(t) = str_of(v, "aiTitle").and_then(non_empty) {
                    info.ai_title = Some(t);
                }
            }
            "user" => match ClaudeUser::classify(v) {
                ClaudeUser::Prompt(text) => {
                    set_turn(info, turn_ts, true, ts);
                    bump(&mut info.last_real_turn, timestamp_of(v));
                    info.first_prompt.get_or_insert_with(|| text.clone());
                    info.last_prompt = Some(text);
                }
                ClaudeUser::Continues => set_turn(info, turn_ts, true, ts),
                ClaudeUser::Closes => set_turn(info, turn_ts, false, ts),
                ClaudeUser::Ignored => {}
            },
            "assistant" => {
                if v.get("isSidechain").and_then(Value::as_bool) == Some(true) {
                    return;
                }
                let msg = v.get("message");
                let blocks: &[Value] = msg
                    .and_then(|m| m.get("content"))
                    .and_then(Value::as_array)
                    .map(Vec::as_slice)
                    .unwrap_or(&[]);
                let (text, synthetic) = claude_reply_text(msg);
                if synthetic {
                    set_turn(info, turn_ts, false, ts);
                    return;
                }
                bump(&mut info.last_real_turn, timestamp_of(v));
                if let Some(t) = non_empty(&text) {
                    info.last_assistant = Some(t);
                }
                if blocks.iter().any(|b| str_of(b, "type") == Some("tool_use")) {
                    set_turn(info, turn_ts, true, ts); // waiting for the tool (or its permission prompt)
                } else if blocks
                    .iter()
                    .any(|b| str_of(b, "type") == Some("text") && str_of(b, "text").is_some())
                {
                    set_turn(info, turn_ts, false, ts);
                }
                // Thinking-only records are mid-stream: the turn stays as it was.
            }
            // 2.1.332 writes a local command's output (and, for some commands, its echo) as a
            // `local_command` system record where 2.1.197 wrote a `<local-command-stdout>` user
            // record: it answers the `<command-name>` record that opened the turn, and no model
            // call follows it (a command typed mid-turn is queued until the turn ends).
            "system"
                if matches!(
                    str_of(v, "subtype"),
                    Some("turn_duration" | "local_command")
                ) =>
            {
                set_turn(info, turn_ts, false, ts)
            }
            _ => {}
        }
    }

    fn finish(mut self) -> TranscriptInfo {
        self.info.session_id = self.msg_session.or(self.any_session);
        self.info
    }
}

/// Parses a Claude Code transcript (JSONL bytes).
pub fn parse_claude(bytes: &[u8]) -> TranscriptInfo {
    let mut st = ClaudeState::default();
    let mut counts = TranscriptInfo::default();
    for_each_record(bytes, &mut counts, |v| st.feed(v));
    let mut info = st.finish();
    info.take_counts(&counts);
    info
}

// ---------------------------------------------------------------------------------------------
// Codex
// ---------------------------------------------------------------------------------------------

/// Openings of user-role items that the harness injects (environment, instructions), not the
/// human.
const CODEX_HARNESS_PREFIXES: &[&str] = &[
    "<environment_context>",
    "<user_instructions>",
    "<permissions instructions>",
    "<skills_instructions>",
    "<collaboration_mode>",
    "<turn_aborted>",
    "<user_shell_command>",
    "<subagent_notification>",
    "# AGENTS.md instructions",
];

/// The human-written text of a `response_item` user message, if any.
pub(crate) fn codex_user_text(payload: &Value) -> Option<String> {
    let items = payload.get("content")?.as_array()?;
    let provenance: Vec<Option<&str>> = payload
        .get("internal_chat_message_metadata_passthrough")
        .and_then(|m| m.get("content_item_metadata"))
        .and_then(Value::as_array)
        .map(|md| {
            md.iter()
                .map(|e| e.get("provenance").and_then(|p| str_of(p, "type")))
                .collect()
        })
        .unwrap_or_default();
    let mut texts = Vec::new();
    for (k, item) in items.iter().enumerate() {
        let Some(text) = str_of(item, "text") else {
            continue;
        };
        let harness = matches!(
            provenance.get(k).copied().flatten(),
            Some("harness" | "skills")
        ) || CODEX_HARNESS_PREFIXES
            .iter()
            .any(|p| text.trim_start().starts_with(p));
        if !harness {
            texts.push(text);
        }
    }
    non_empty(&texts.join("\n"))
}

/// Joins the `text` fields of `items` of the given `type`s.
pub(crate) fn codex_texts(items: Option<&Value>, types: &[&str]) -> Option<String> {
    let items = items?.as_array()?;
    let texts: Vec<&str> = items
        .iter()
        .filter(|i| str_of(i, "type").is_some_and(|t| types.contains(&t)))
        .filter_map(|i| str_of(i, "text"))
        .collect();
    non_empty(&texts.join("\n"))
}

#[derive(Default)]
struct CodexState {
    info: TranscriptInfo,
    meta_cwd: Option<String>,
    ctx_cwd: Option<String>,
}

impl CodexState {
    fn real_user(&mut self, ts: Option<Timestamp>, text: Option<String>) {
        bump(&mut self.info.last_real_turn, ts);
        if let Some(text) = text {
            self.info.first_prompt.get_or_insert_with(|| text.clone());
            self.info.last_prompt = Some(text);
        }
    }

    fn feed(&mut self, v: &Value) {
        let ts = timestamp_of(v);
        let payload = v.get("payload").unwrap_or(&Value::Null);
        let ptype = str_of(payload, "type").unwrap_or("");
        match str_of(v, "type").unwrap_or("") {
            "session_meta" => {
                // The first session_meta is the file's own session (a fork may copy others).
                if self.info.session_id.is_none() {
                    self.info.session_id = str_of(payload, "id")
                        .or_else(|| str_of(payload, "session_id"))
                        .and_then(valid_session_id);
                }
                if self.meta_cwd.is_none() {
                    self.meta_cwd = str_of(payload, "cwd").and_then(non_empty);
                }
            }
            "turn_context" => {
                if let Some(cwd) = str_of(payload, "cwd").and_then(non_empty) {
                    self.ctx_cwd = Some(cwd);
                }
            }
            "response_item" if ptype == "message" => match str_of(payload, "role") {
                Some("user") => {
                    if let Some(text) = codex_user_text(payload) {
                        self.real_user(ts, Some(text));
                    }
                }
                Some("assistant") => {
                    bump(&mut self.info.last_real_turn, ts);
                    if let Some(t) = codex_texts(payload.get("content"), &["output_text", "text"]) {
                        self.info.last_assistant = Some(t);
                    }
                }
                _ => {} // developer / system: harness
            },
            "event_msg" => match ptype {
                "task_started" => self.info.turn_open = true,
                "task_complete" => {
                    self.info.turn_open = false;
                    bump(&mut self.info.last_real_turn, ts);
                    if let Some(t) = str_of(payload, "last_agent_message").and_then(non_empty) {
                        self.info.last_assistant = Some(t);
                    }
                }
                "turn_aborted" => self.info.turn_open = false,
                "item_completed" => {
                    let item = payload.get("item").unwrap_or(&Value::Null);
                    if str_of(item, "type") == Some("UserMessage") {
                        let text = codex_texts(item.get("content"), &["text", "input_text"]);
                        self.real_user(ts, text);
                    }
                }
                // Older rollouts: the prompt and reply as plain event messages.
                "user_message" => {
                    let text = str_of(payload, "message").and_then(non_empty);
                    self.real_user(ts, text);
                }
                "agent_message" => {
                    bump(&mut self.info.last_real_turn, ts);
                    if let Some(t) = str_of(payload, "message").and_then(non_empty) {
                        self.info.last_assistant = Some(t);
                    }
                }
                _ => {}
            },
            _ => {}
        }
    }
}

/// Parses a Codex CLI rollout (JSONL bytes).
pub fn parse_codex(bytes: &[u8]) -> TranscriptInfo {
    let mut st = CodexState::default();
    let mut counts = TranscriptInfo::default();
    for_each_record(bytes, &mut counts, |v| st.feed(v));
    let mut info = st.info;
    info.cwd = st.ctx_cwd.or(st.meta_cwd);
    info.take_counts(&counts);
    info
}

// ---------------------------------------------------------------------------------------------
// Files
// ---------------------------------------------------------------------------------------------

const HEAD_BYTES: u64 = 64 * 1024;
const TAIL_BYTES: u64 = 256 * 1024;
/// A first line longer than the head (a Codex `session_meta` with huge instructions) is still
/// read whole, up to this much, because it carries the session id.
const HEAD_LINE_CAP: u64 = 1024 * 1024;
/// The tail window grows (doubling from `TAIL_BYTES`) up to this; past it the state is unsure.
pub(crate) const TAIL_CAP: u64 = 64 * 1024 * 1024;

/// Reads and parses what decides a transcript's state (see the module doc), with the tail window
/// bounded by `cap`.
pub(crate) fn read_file_capped(
    path: &Path,
    parse: fn(&[u8]) -> TranscriptInfo,
    cap: u64,
) -> io::Result<TranscriptInfo> {
    let mut f = File::open(path)?;
    let len = f.metadata()?.len();
    let read_all = |f: &mut File| -> io::Result<TranscriptInfo> {
        f.seek(SeekFrom::Start(0))?;
        let mut all = Vec::new();
        f.read_to_end(&mut all)?;
        Ok(parse(&all))
    };
    if len <= HEAD_BYTES + TAIL_BYTES {
        return read_all(&mut f);
    }

    let mut head = Vec::new();
    (&mut f).take(HEAD_BYTES).read_to_end(&mut head)?;
    while !head.contains(&b'\n') && (head.len() as u64) < HEAD_LINE_CAP.min(len) {
        let before = head.len();
        (&mut f).take(HEAD_BYTES).read_to_end(&mut head)?;
        if head.len() == before {
            break; // EOF (the file shrank)
        }
    }
    // Keep whole lines only; the cut-off rest of the last one is not a bad line.
    match head.iter().rposition(|&b| b == b'\n') {
        Some(nl) => head.truncate(nl + 1),
        None => head.clear(),
    }
    let head_end = head.len();
    // One buffer: the head, then the tail window read right after it (no second copy of a
    // window that may be tens of megabytes).
    let mut buf = head;

    let mut window = TAIL_BYTES.min(cap);
    loop {
        let Some(tail_start) = len.checked_sub(window).filter(|&t| t > head_end as u64) else {
            // The window reached the head: everything is read.
            drop(buf);
            return read_all(&mut f);
        };
        // Start one byte early: if that byte is a newline the tail begins on a line boundary.
        buf.truncate(head_end);
        f.seek(SeekFrom::Start(tail_start - 1))?;
        f.read_to_end(&mut buf)?;
        let cut = buf[head_end..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(buf.len(), |nl| head_end + nl + 1);
        buf.drain(head_end..cut);
        let tail = &buf[head_end..];
        // Enough when the window holds the last complete record whole (a tail starting on a line
        // boundary that has any complete line has the last one) and a real turn, so the idle time
        // and the turn state come from the latest records, not from the head.
        let holds_last = last_complete_line(tail).is_some();
        let enough = crate::support::fault::disabled("transcript-tail-grows")
            || (holds_last && parse(tail).last_real_turn.is_some());
        if enough || window >= cap {
            let mut info = parse(&buf);
            if !enough {
                let what = if holds_last {
                    "holds no real turn"
                } else {
                    "does not hold its last complete record"
                };
                info.unsure = Some(format!(
                    "the transcript's last {} MiB {what}; cannot tell whether it is idle",
                    cap / (1024 * 1024)
                ));
            }
            return Ok(info);
        }
        window = window.saturating_mul(2).min(cap);
    }
}

/// Reads a Claude transcript cheaply (see the module doc).
///
/// # Errors
/// Any I/O error opening or reading `path`.
pub fn read_claude_file(path: &Path) -> io::Result<TranscriptInfo> {
    read_file_capped(path, parse_claude, TAIL_CAP)
}

/// Reads a Codex rollout cheaply (see the module doc).
///
/// # Errors
/// Any I/O error opening or reading `path`.
pub fn read_codex_file(path: &Path) -> io::Result<TranscriptInfo> {
    read_file_capped(path, parse_codex, TAIL_CAP)
}

// ---------------------------------------------------------------------------------------------
// Names and ids
// ---------------------------------------------------------------------------------------------

/// Claude's project-dir encoding of a cwd: every UTF-16 code unit that is not `[A-Za-z0-9]`
/// becomes `-`; past 200 units the name is cut to 200 and `-<base36(|javaHash(cwd)|)>` appended.
/// The mapping is lossy, so it only locates a directory; the cwd itself comes from the records.
pub fn claude_project_dir_name(cwd: &str) -> String {
    let enc: String = cwd
        .encode_utf16()
        .map(|u| match u8::try_from(u) {
            Ok(b) if b.is_ascii_alphanumeric() => char::from(b),
            _ => '-',
        })
        .collect();
    // Every unit became one ASCII char, so byte length == UTF-16 length here.
    if enc.len() <= 200 {
        return enc;
    }
    let hash = cwd.encode_utf16().fold(0i32, |h, u| {
        h.wrapping_shl(5).wrapping_sub(h).wrapping_add(i32::from(u))
    });
    // JS Math.abs works on doubles, so |i32::MIN| is 2^31, not an overflow.
    format!("{}-{}", &enc[..200], base36(i64::from(hash).unsigned_abs()))
}

fn base36(mut n: u64) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    if n == 0 {
        return "0".to_string();
    }
    let mut out = Vec::new();
    while n > 0 {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

/// A canonical UUID (8-4-4-4-12 ASCII hex digits, any case), returned lowercased, or a prefixed
/// id `ses_` + 20 to 40 ASCII letters or digits, returned as it is (its case matters); anything
/// else (path pieces, shell metacharacters, whitespace, other lengths, non-ASCII digits) is `None`.
pub fn valid_session_id(s: &str) -> Option<String> {
    if let Some(rest) = s.strip_prefix("ses_") {
        let ok = (20..=40).contains(&rest.len()) && rest.bytes().all(|b| b.is_ascii_alphanumeric());
        return ok.then(|| s.to_string());
    }
    let b = s.as_bytes();
    if b.len() != 36 {
        return None;
    }
    let ok = b.iter().enumerate().all(|(i, &c)| match i {
        8 | 13 | 18 | 23 => c == b'-',
        _ => c.is_ascii_hexdigit(),
    });
    ok.then(|| s.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::io::Write;

    const CLAUDE_SAMPLES: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/claude-transcript-samples.jsonl"
    ));
    const CODEX_SAMPLES: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/codex-rollout-samples.jsonl"
    ));

    fn ts(s: &str) -> Option<Timestamp> {
        Some(s.parse().unwrap())
    }

    /// The sample file's lines of one record type (the samples interleave `# kind` comments).
    fn sample_lines<'a>(samples: &'a str, kinds: &[&str]) -> Vec<&'a str> {
        let mut out = Vec::new();
        let mut current = "";
        for line in samples.lines() {
            if let Some(k) = line.strip_prefix("# ") {
                current = k;
            } else if kinds.contains(&current) {
                out.push(line);
            }
        }
        out
    }

    const SID: &str = "158f2a09-8e02-4cf8-bbf8-0710d4e8624e";

    fn claude_user(text: &str, at: &str) -> String {
        serde_json::json!({"type":"user","message":{"role":"user","content":text},
            "origin":{"kind":"human"},"promptSource":"typed","timestamp":at,
            "cwd":"/w/p","sessionId":SID})
        .to_string()
    }

    fn claude_assistant(blocks: Value, at: &str) -> String {
        serde_json::json!({"type":"assistant","message":{"role":"assistant","model":"claude-opus-4-8",
            "content":blocks},"timestamp":at,"cwd":"/w/p","sessionId":SID})
        .to_string()
    }

    fn claude_tool_result(at: &str) -> String {
        serde_json::json!({"type":"user","message":{"role":"user","content":[{"type":"tool_result",
            "content":"Exit code 137","tool_use_id":"t1"}]},"timestamp":at,"cwd":"/w/p","sessionId":SID})
        .to_string()
    }

    fn lines(v: &[String]) -> Vec<u8> {
        let mut s = v.join("\n");
        s.push('\n');
        s.into_bytes()
    }

    // ---- Claude ---------------------------------------------------------------------------

    #[test]
    fn claude_samples_parse_to_concrete_values() {
        let info = parse_claude(CLAUDE_SAMPLES.as_bytes());
        assert_eq!(info.records, 14);
        assert_eq!(info.bad_lines, 14, "the 14 `# kind` comment lines");
        assert_eq!(info.session_id.as_deref(), Some(SID));
        assert_eq!(info.cwd.as_deref(), Some("/tmp/lab/work/proj-a"));
        assert_eq!(
            info.ai_title.as_deref(),
            Some("Mock please refactor the parser module")
        );
        assert_eq!(
            info.first_prompt.as_deref(),
            Some("hello mock, please reply")
        );
        assert_eq!(
            info.last_assistant.as_deref(),
            Some("Hello from the mock Anthropic server (canned reply #5). PARKTEST-OK")
        );
        // The tool_use reply at 14:01:09.839 is the last model message; the tool_result at
        // 14:01:20 is not a real turn, but it does leave the model to run again.
        assert_eq!(info.last_real_turn, ts("2026-12-02T14:01:09.839Z"));
        assert!(info.turn_open);
    }

    #[test]
    fn claude_sample_first_turn_is_closed() {
        let turn = sample_lines(
            CLAUDE_SAMPLES,
            &[
                "mode",
                "permission-mode",
                "file-history-snapshot",
                "user",
                "attachment / agent_listing_delta",
                "attachment / skill_listing",
                "assistant",
                "system / turn_duration",
                "last-prompt",
            ],
        );
        let info = parse_claude(turn.join("\n").as_bytes());
        assert_eq!(info.records, 9);
        assert_eq!(info.bad_lines, 0);
        assert!(!info.turn_open);
        assert_eq!(info.last_real_turn, ts("2026-12-02T13:50:53.778Z"));
        assert_eq!(info.ai_title, None);
        assert_eq!(info.session_id.as_deref(), Some(SID));
    }

    #[test]
    fn claude_sample_tool_use_then_result_is_open() {
        let turn = sample_lines(
            CLAUDE_SAMPLES,
            &["assistant / tool_use", "user / tool_result"],
        );
        let info = parse_claude(turn.join("\n").as_bytes());
        assert!(info.turn_open);
        assert_eq!(info.first_prompt, None, "a tool_result is not a prompt");
        assert_eq!(info.last_assistant, None, "a tool_use carries no text");
        assert_eq!(info.last_real_turn, ts("2026-12-02T14:01:09.839Z"));
    }

    #[test]
    fn claude_session_id_prefers_message_records() {
        // The sample's ai-title belongs to another session; the messages name this file's.
        let turn = sample_lines(CLAUDE_SAMPLES, &["ai-title"]);
        let info = parse_claude(turn.join("\n").as_bytes());
        assert_eq!(
            info.session_id.as_deref(),
            Some("f2ccbb0d-7d49-495b-b5a5-ae7dae07a6ee")
        );
    }

    #[test]
    fn claude_out_of_order_records_use_timestamps() {
        // Real 2.1.197 file order seen in a resumed pane: the reply lands before its prompt.
        let lines = [
            r#"{"type":"assistant","timestamp":"2026-12-02T15:33:48.666Z","uuid":"a","sessionId":"096d855b-0129-4672-b940-ec6b655a668f","message":{"role":"assistant","content":[{"type":"text","text":"Hello PARKTEST-OK"}]}}"#,
            r#"{"type":"system","subtype":"turn_duration","timestamp":"2026-12-02T15:33:48.674Z","uuid":"b","sessionId":"096d855b-0129-4672-b940-ec6b655a668f"}"#,
            r#"{"type":"user","timestamp":"2026-12-02T15:33:48.334Z","uuid":"c","origin":{"kind":"human"},"promptSource":"typed","sessionId":"096d855b-0129-4672-b940-ec6b655a668f","message":{"role":"user","content":"second agent"}}"#,
        ];
        let info = parse_claude(lines.join("\n").as_bytes());
        assert!(
            !info.turn_open,
            "the reply is newer than the prompt: the turn is closed"
        );
        assert_eq!(info.last_real_turn, ts("2026-12-02T15:33:48.666Z"));
    }

    #[test]
    fn claude_midturn_kill_leaves_the_turn_open() {
        let info = parse_claude(&lines(&[
            claude_user("first", "2026-12-02T10:00:00Z"),
            claude_assistant(
                serde_json::json!([{"type":"text","text":"reply one"}]),
                "2026-12-02T10:00:05Z",
            ),
            serde_json::json!({"type":"system","subtype":"turn_duration","timestamp":"2026-12-02T10:00:05Z"}).to_string(),
            claude_user("second, killed mid-turn", "2026-12-02T10:05:00Z"),
        ]));
        assert!(info.turn_open);
        assert_eq!(info.last_real_turn, ts("2026-12-02T10:05:00Z"));
        assert_eq!(info.first_prompt.as_deref(), Some("first"));
        assert_eq!(info.last_assistant.as_deref(), Some("reply one"));
        assert_eq!(info.cwd.as_deref(), Some("/w/p"));
    }

    #[test]
    fn claude_tool_results_are_not_real_turns() {
        let info = parse_claude(&lines(&[
            claude_user("run it", "2026-12-02T10:00:00Z"),
            claude_assistant(
                serde_json::json!([{"type":"tool_use","id":"t1","name":"Bash","input":{}}]),
                "2026-12-02T10:00:01Z",
            ),
            claude_tool_result("2026-12-02T10:09:00Z"),
            claude_assistant(
                serde_json::json!([{"type":"text","text":"done"},{"type":"text","text":"really"}]),
                "2026-12-02T10:09:01Z",
            ),
            claude_tool_result("2026-12-02T11:00:00Z"),
        ]));
        // The last real turn is the reply, not the later tool_result.
        assert_eq!(info.last_real_turn, ts("2026-12-02T10:09:01Z"));
        assert_eq!(info.last_assistant.as_deref(), Some("done\nreally"));
        assert_eq!(info.first_prompt.as_deref(), Some("run it"));
    }

    #[test]
    fn claude_turn_state_through_tools_and_interrupts() {
        let base = [
            claude_user("go", "2026-12-02T10:00:00Z"),
            claude_assistant(
                serde_json::json!([{"type":"tool_use","id":"t1","name":"Bash","input":{}}]),
                "2026-12-02T10:00:01Z",
            ),
        ];
        // Waiting on a tool: open.
        assert!(parse_claude(&lines(&base)).turn_open);
        // Interrupted by the user: closed.
        let mut v = base.to_vec();
        v.push(claude_user(
            "[Request interrupted by user for tool use]",
            "2026-12-02T10:00:02Z",
        ));
        let info = parse_claude(&lines(&v));
        assert!(!info.turn_open);
        assert_eq!(info.last_real_turn, ts("2026-12-02T10:00:01Z"));
        // A synthetic reply closes but is not the model speaking.
        let mut v = base.to_vec();
        v.push(claude_tool_result("2026-12-02T10:00:03Z"));
        v.push(
            serde_json::json!({"type":"assistant","message":{"model":"<synthetic>","content":[
                {"type":"text","text":"No response requested."}]},"timestamp":"2026-12-02T10:00:04Z"})
            .to_string(),
        );
        let info = parse_claude(&lines(&v));
        assert!(!info.turn_open);
        assert_eq!(info.last_assistant, None);
        assert_eq!(info.last_real_turn, ts("2026-12-02T10:00:01Z"));
    }

    #[test]
    fn claude_meta_local_and_notification_records_are_not_prompts() {
        let meta = serde_json::json!({"type":"user","isMeta":true,"message":{"content":"<local-command-caveat>x</local-command-caveat>"},
            "timestamp":"2026-12-02T10:00:00Z"}).to_string();
        let cmd = claude_user(
            "<command-name>/model</command-name>\n<command-args></command-args>",
            "2026-12-02T10:00:01Z",
        );
        let out = claude_user(
            "<local-command-stdout>Set model to opus</local-command-stdout>",
            "2026-12-02T10:00:02Z",
        );
        let note = serde_json::json!({"type":"user","origin":{"kind":"task-notification"},
            "message":{"content":"<task-notification>done</task-notification>"},"timestamp":"2026-12-02T10:00:03Z"}).to_string();
        // A local command closes itself.
        let info = parse_claude(&lines(&[meta.clone(), cmd.clone(), out.clone()]));
        assert_eq!(info.first_prompt, None);
        assert_eq!(info.last_real_turn, None);
        assert!(!info.turn_open);
        // A background-task notification makes the model run, but is nobody's prompt.
        let info = parse_claude(&lines(&[meta, cmd, out, note]));
        assert_eq!(info.first_prompt, None);
        assert_eq!(info.last_real_turn, None);
        assert!(info.turn_open);
    }

    /// Real Claude Code 2.1.332 transcripts, captured offline against mock-llm (see
    /// `tests/fixtures/claude/README.md`).
    const C332_CLEAR: &[u8] = include_bytes!("../../tests/fixtures/claude/clear-2.1.332.jsonl");
    const C332_COMMANDS: &[u8] =
        include_bytes!("../../tests/fixtures/claude/commands-2.1.332.jsonl");
    const C332_RESUMED_AFTER_CLEAR: &[u8] =
        include_bytes!("../../tests/fixtures/claude/resumed-after-clear-2.1.332.jsonl");
    const C332_PROMPT_COMMAND: &[u8] =
        include_bytes!("../../tests/fixtures/claude/prompt-command-2.1.332.jsonl");

    /// `bytes` through the end of the first line containing `needle`: the file as it was when
    /// that record had just been written.
    fn through(bytes: &[u8], needle: &str) -> Vec<u8> {
        let text = std::str::from_utf8(bytes).unwrap();
        let at = text.find(needle).unwrap_or_else(|| panic!("{needle:?}"));
        let end = text[at..].find('\n').map_or(text.len(), |nl| at + nl + 1);
        bytes[..end].to_vec()
    }

    #[test]
    fn claude_2_1_332_clear_is_at_rest_at_once() {
        // /clear starts a new file: its `<command-name>` user record, then the output as a
        // `local_command` system record. Claude's own status file says idle right away.
        let info = parse_claude(C332_CLEAR);
        assert_eq!((info.records, info.bad_lines), (5, 0));
        assert!(!info.turn_open, "the command's output closes it");
        assert_eq!(info.last_real_turn, None);
        assert_eq!(info.first_prompt, None);
        assert_eq!(
            info.session_id.as_deref(),
            Some("f913b9d2-1562-4e78-9512-276dccfa487a")
        );
        // Until the output record is written, the command is in flight.
        assert!(parse_claude(&through(C332_CLEAR, "<command-name>/clear")).turn_open);
    }

    /// Issue 34 (item 4): within the fresh-write window after `/clear`, with Claude's status file
    /// saying idle and an empty composer on screen, the row read busy from the transcript.
    #[test]
    fn claude_2_1_332_clear_reads_idle_while_the_file_is_fresh() {
        let screen = crate::agents::screen::test_kit::idle();
        for t in [C332_CLEAR, C332_RESUMED_AFTER_CLEAR] {
            let info = parse_claude(t);
            let verdict = crate::scan::derive_status(
                crate::agents::Agent::Claude,
                Some("idle"),
                Some(&screen),
                Some(&info),
                true,
                true,
            );
            assert_eq!(verdict, (park_protocol::Status::Idle, None));
        }
    }

    #[test]
    fn claude_2_1_332_session_resumed_after_clear_is_at_rest() {
        // The cleared session, exited and resumed: the resume appends bookkeeping only.
        let info = parse_claude(C332_RESUMED_AFTER_CLEAR);
        assert_eq!(info.bad_lines, 0);
        assert!(!info.turn_open);
        assert_eq!(info.last_real_turn, None);
        assert_eq!(
            info.session_id.as_deref(),
            Some("7a3344d2-ec76-4de9-94e0-b8b5cce284e2")
        );
    }

    #[test]
    fn claude_2_1_332_local_commands_leave_no_turn_open() {
        // One session: /clear, a prompt, /compact, /model, /rename, shift+tab to manual mode (its
        // `permission-mode` record comes with the next prompt) and a prompt, /context. After
        // each command's last record, nothing is in flight.
        for needle in [
            "Compacted (ctrl+o to see full summary)",
            "Set model to",
            "Session renamed to: my-renamed-session",
            "canned reply #5", // the reply to the prompt typed in manual mode
            "## Context Usage",
        ] {
            let info = parse_claude(&through(C332_COMMANDS, needle));
            assert_eq!(info.bad_lines, 0, "{needle}");
            assert!(!info.turn_open, "after {needle}");
        }
        let info = parse_claude(C332_COMMANDS);
        assert!(!info.turn_open);
        assert_eq!(info.unsure, None);
        assert_eq!(
            info.first_prompt.as_deref(),
            Some("second prompt before compact")
        );
        assert_eq!(info.last_prompt.as_deref(), Some("a prompt in manual mode"));
        assert_eq!(info.last_real_turn, ts("2026-12-06T07:27:28.748Z"));
        assert_eq!(info.ai_title, None);
    }

    #[test]
    fn claude_compact_summary_is_nobodys_prompt() {
        // /compact writes its summary as a user record with no origin: it is not the last prompt,
        // and the conversation's last real turn stays the reply before it.
        let info = parse_claude(&through(C332_COMMANDS, "Compacted (ctrl+o"));
        assert_eq!(
            info.last_prompt.as_deref(),
            Some("second prompt before compact")
        );
        assert_eq!(info.last_real_turn, ts("2026-12-06T07:27:12.432Z"));
        assert!(!info.turn_open);
    }

    #[test]
    fn claude_2_1_332_prompt_command_stays_open_until_its_reply() {
        // A custom command that expands to a prompt: `<command-message>` then its meta
        // expansion, and the model runs; no local_command record answers it.
        let expanded = through(C332_PROMPT_COMMAND, "Please greet the user warmly.");
        assert!(parse_claude(&expanded).turn_open);
        let info = parse_claude(C332_PROMPT_COMMAND);
        assert!(!info.turn_open);
        assert_eq!(info.last_prompt.as_deref(), Some("hi"));
    }

    #[test]
    fn claude_array_prompts_and_sidechains() {
        let pasted = serde_json::json!({"type":"user","message":{"content":[{"type":"text","text":"look at this"},
            {"type":"image","source":{}}]},"timestamp":"2026-12-02T10:00:00Z"}).to_string();
        let side = serde_json::json!({"type":"user","isSidechain":true,"message":{"content":"subagent task"},
            "timestamp":"2026-12-02T10:01:00Z"}).to_string();
        let info = parse_claude(&lines(&[pasted, side]));
        assert_eq!(info.first_prompt.as_deref(), Some("look at this"));
        assert_eq!(info.last_real_turn, ts("2026-12-02T10:00:00Z"));
    }

    #[test]
    fn claude_truncated_last_line_and_garbage() {
        let full = claude_user("hello", "2026-12-02T10:00:00Z");
        let partial = &full[..full.len() / 2];
        let bytes = format!("not json\n{{\"a\":1}}\n[1,2]\n\n  \n{full}\n\u{0}\u{1}\n{partial}");
        let mut bytes = bytes.into_bytes();
        bytes.extend_from_slice(b"\n\xff\xfe{\"type\":\"user\"}\n");
        let info = parse_claude(&bytes);
        assert_eq!(info.records, 2, "{{\"a\":1}} and the full user line");
        assert_eq!(info.bad_lines, 5);
        assert_eq!(info.first_prompt.as_deref(), Some("hello"));
        assert!(info.turn_open);
    }

    #[test]
    fn empty_input_is_empty_info() {
        assert_eq!(parse_claude(b""), TranscriptInfo::default());
        assert_eq!(parse_codex(b""), TranscriptInfo::default());
        assert_eq!(parse_claude(b"\n\n\r\n"), TranscriptInfo::default());
    }

    #[test]
    fn malformed_session_ids_are_ignored() {
        let bad = serde_json::json!({"type":"user","sessionId":"../../etc/passwd","message":{"content":"x"}}).to_string();
        assert_eq!(parse_claude(bad.as_bytes()).session_id, None);
        let upper =
            serde_json::json!({"type":"mode","sessionId":"158F2A09-8E02-4CF8-BBF8-0710D4E8624E"})
                .to_string();
        assert_eq!(
            parse_claude(upper.as_bytes()).session_id.as_deref(),
            Some(SID)
        );
    }

    // ---- Codex ----------------------------------------------------------------------------

    const CX: &str = "01a2370b-2255-7e01-9337-4598cb103ce5";

    #[test]
    fn codex_samples_parse_to_concrete_values() {
        let info = parse_codex(CODEX_SAMPLES.as_bytes());
        assert_eq!(info.records, 14);
        assert_eq!(info.bad_lines, 14, "the 14 `# kind` comment lines");
        assert_eq!(info.session_id.as_deref(), Some(CX));
        assert_eq!(info.cwd.as_deref(), Some("/tmp/lab/work/cx-a"));
        assert_eq!(info.first_prompt.as_deref(), Some("hello codex mock"));
        assert_eq!(
            info.last_assistant.as_deref(),
            Some("Hello from the mock OpenAI server (canned reply #1). PARKTEST-OK")
        );
        assert_eq!(info.last_real_turn, ts("2026-12-02T13:57:03.074Z"));
        assert!(!info.turn_open, "task_complete follows task_started");
        assert_eq!(info.ai_title, None, "the thread name is not in the rollout");
    }

    #[test]
    fn codex_environment_context_is_not_a_prompt() {
        let turn = sample_lines(
            CODEX_SAMPLES,
            &[
                "session_meta",
                "event_msg / task_started",
                "response_item / message / developer",
                "response_item / message / user",
                "turn_context",
            ],
        );
        let info = parse_codex(turn.join("\n").as_bytes());
        assert_eq!(info.first_prompt, None);
        assert_eq!(info.last_real_turn, None);
        assert!(info.turn_open, "task_started without task_complete");
        assert_eq!(info.session_id.as_deref(), Some(CX));
        assert_eq!(info.cwd.as_deref(), Some("/tmp/lab/work/cx-a"));
    }

    #[test]
    fn codex_midturn_kill_leaves_the_turn_open() {
        let mut turn = sample_lines(
            CODEX_SAMPLES,
            &[
                "session_meta",
                "event_msg / task_started",
                "event_msg / item_completed",
                "response_item / message / assistant",
                "event_msg / task_complete",
            ],
        )
        .join("\n");
        turn.push('\n');
        turn.push_str(
            &serde_json::json!({"timestamp":"2026-12-02T14:00:00Z","type":"event_msg",
            "payload":{"type":"task_started","turn_id":"t2"}})
            .to_string(),
        );
        turn.push('\n');
        turn.push_str(&serde_json::json!({"timestamp":"2026-12-02T14:00:00.010Z","type":"event_msg",
            "payload":{"type":"item_completed","item":{"type":"UserMessage","content":[{"type":"text","text":"second"}]}}}).to_string());
        let info = parse_codex(turn.as_bytes());
        assert!(info.turn_open);
        assert_eq!(info.first_prompt.as_deref(), Some("hello codex mock"));
        assert_eq!(info.last_real_turn, ts("2026-12-02T14:00:00.010Z"));
        // An abort closes it again.
        turn.push('\n');
        turn.push_str(
            &serde_json::json!({"timestamp":"2026-12-02T14:00:09Z","type":"event_msg",
            "payload":{"type":"turn_aborted","reason":"interrupted"}})
            .to_string(),
        );
        assert!(!parse_codex(turn.as_bytes()).turn_open);
    }

    #[test]
    fn codex_latest_turn_context_cwd_wins_and_function_calls_are_not_turns() {
        let mut v: Vec<String> = sample_lines(
            CODEX_SAMPLES,
            &[
                "session_meta",
                "turn_context",
                "response_item / function_call",
                "response_item / function_call_output",
            ],
        )
        .into_iter()
        .map(str::to_string)
        .collect();
        v.push(
            serde_json::json!({"timestamp":"2026-12-02T15:00:00Z","type":"turn_context",
            "payload":{"cwd":"/tmp/lab/work/cx-b"}})
            .to_string(),
        );
        let info = parse_codex(&lines(&v));
        assert_eq!(info.cwd.as_deref(), Some("/tmp/lab/work/cx-b"));
        assert_eq!(info.last_real_turn, None);
        assert_eq!(info.session_id.as_deref(), Some(CX));
    }

    #[test]
    fn codex_plain_user_response_item_counts() {
        let v = [
            serde_json::json!({"timestamp":"2026-12-02T15:00:00Z","type":"response_item",
            "payload":{"type":"message","role":"user","content":[
                {"type":"input_text","text":"<environment_context>\n</environment_context>"},
                {"type":"input_text","text":"fix the tests"}]}})
            .to_string(),
        ];
        let info = parse_codex(&lines(&v));
        assert_eq!(info.first_prompt.as_deref(), Some("fix the tests"));
        assert_eq!(info.last_real_turn, ts("2026-12-02T15:00:00Z"));
    }

    #[test]
    fn codex_truncated_last_line() {
        let mut s = CODEX_SAMPLES.to_string();
        let half = &sample_lines(CODEX_SAMPLES, &["event_msg / task_started"])[0][..40];
        s.push_str(half);
        let info = parse_codex(s.as_bytes());
        assert_eq!(info.bad_lines, 15);
        assert!(!info.turn_open);
    }

    // ---- files ----------------------------------------------------------------------------

    #[test]
    fn small_files_are_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        std::fs::write(&p, CLAUDE_SAMPLES).unwrap();
        assert_eq!(
            read_claude_file(&p).unwrap(),
            parse_claude(CLAUDE_SAMPLES.as_bytes())
        );
        std::fs::write(&p, CODEX_SAMPLES).unwrap();
        assert_eq!(
            read_codex_file(&p).unwrap(),
            parse_codex(CODEX_SAMPLES.as_bytes())
        );
    }

    #[test]
    fn missing_files_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        assert!(read_claude_file(&dir.path().join("nope.jsonl")).is_err());
        assert!(
            read_codex_file(dir.path()).is_err(),
            "a directory cannot be read"
        );
    }

    #[test]
    fn large_files_read_head_and_tail_without_double_counting() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("big.jsonl");
        let meta = sample_lines(CODEX_SAMPLES, &["session_meta"])[0];
        let prompt = serde_json::json!({"timestamp":"2026-12-02T10:00:00Z","type":"event_msg",
            "payload":{"type":"item_completed","item":{"type":"UserMessage","content":[{"type":"text","text":"the first prompt"}]}}}).to_string();
        let mut f = File::create(&p).unwrap();
        writeln!(f, "{meta}\n{prompt}").unwrap();
        let filler = format!(
            "{{\"timestamp\":\"2026-12-02T10:00:01Z\",\"type\":\"event_msg\",\"payload\":{{\"type\":\"token_count\",\"pad\":\"{}\"}}}}",
            "x".repeat(300)
        );
        let n_filler = 3000; // ~1 MB, far more than head + tail
        for _ in 0..n_filler {
            writeln!(f, "{filler}").unwrap();
        }
        // A real turn in the tail: the first window is enough (see `the_tail_window_grows…`).
        writeln!(
            f,
            "{}",
            serde_json::json!({"timestamp":"2026-12-02T10:59:00Z","type":"event_msg",
                "payload":{"type":"agent_message","message":"an earlier reply"}})
        )
        .unwrap();
        writeln!(
            f,
            "{}",
            serde_json::json!({"timestamp":"2026-12-02T11:00:00Z","type":"event_msg",
                "payload":{"type":"task_started"}})
        )
        .unwrap();
        write!(f, "{{\"timestamp\":\"2026-12-02T11:00:01Z\",\"type\":\"ev").unwrap(); // being written
        drop(f);
        let len = std::fs::metadata(&p).unwrap().len();
        assert!(len > HEAD_BYTES + TAIL_BYTES);

        let info = read_codex_file(&p).unwrap();
        assert_eq!(info.session_id.as_deref(), Some(CX), "from the head");
        assert_eq!(info.first_prompt.as_deref(), Some("the first prompt"));
        assert!(info.turn_open, "from the tail");
        assert!(info.truncated_last_line);
        assert_eq!(info.last_real_turn, ts("2026-12-02T10:59:00Z"));
        assert_eq!(
            info.bad_lines, 1,
            "only the half-written last line; the cuts are clean"
        );
        assert!(info.records < n_filler, "the middle was skipped");
        let line = filler.len() as u64 + 1;
        let expected_max = 2 + (HEAD_BYTES + TAIL_BYTES) / line + 2;
        assert!(info.records as u64 <= expected_max);
        assert!(info.records as u64 >= (HEAD_BYTES + TAIL_BYTES) / line - 4);
    }

    #[test]
    fn a_long_first_line_is_still_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("long-meta.jsonl");
        let meta = serde_json::json!({"timestamp":"2026-12-02T10:00:00Z","type":"session_meta",
            "payload":{"id":CX,"cwd":"/w/long","base_instructions":{"text":"y".repeat(100_000)}}})
        .to_string();
        let mut f = File::create(&p).unwrap();
        writeln!(f, "{meta}").unwrap();
        for _ in 0..1500 {
            writeln!(
                f,
                "{{\"type\":\"event_msg\",\"payload\":{{\"type\":\"x\",\"pad\":\"{}\"}}}}",
                "z".repeat(300)
            )
            .unwrap();
        }
        drop(f);
        let info = read_codex_file(&p).unwrap();
        assert_eq!(info.session_id.as_deref(), Some(CX));
        assert_eq!(info.cwd.as_deref(), Some("/w/long"));
        assert_eq!(info.bad_lines, 0);
    }

    // ---- transcripts as they really are ---------------------------------------------------

    use crate::shapes;

    fn join(lines: &[Vec<u8>]) -> Vec<u8> {
        let mut out = Vec::new();
        for l in lines {
            out.extend_from_slice(l);
            out.push(b'\n');
        }
        out
    }

    fn b(s: String) -> Vec<u8> {
        s.into_bytes()
    }

    #[test]
    fn lone_surrogates_are_replaced_and_counted_never_skipped() {
        // Claude: the last prompt carries a lone high surrogate (an emoji cut in half).
        let prompt = shapes::with_raw(
            &shapes::claude_prompt("fix the parser SURR please", "2026-12-02T11:00:00Z"),
            "SURR",
            b"\\ud83d",
        );
        assert!(
            serde_json::from_slice::<Value>(&prompt).is_err(),
            "serde rejects it"
        );
        let reply = shapes::with_raw(
            &shapes::claude_reply("done SURR", "2026-12-02T11:00:05Z"),
            "SURR",
            b"\\ude00 and a pair \\ud83d\\ude00 and \\\\ud83d",
        );
        let t = join(&[
            b(shapes::claude_prompt("first", "2026-12-02T10:00:00Z")),
            prompt,
            reply,
        ]);
        let info = parse_claude(&t);
        assert_eq!(
            (info.records, info.bad_lines, info.repaired_lines),
            (3, 0, 2)
        );
        assert_eq!(
            info.last_prompt.as_deref(),
            Some("fix the parser \u{fffd} please")
        );
        assert_eq!(
            info.last_assistant.as_deref(),
            Some("done \u{fffd} and a pair 😀 and \\ud83d"),
            "pairs and escaped backslashes are kept"
        );
        assert_eq!(info.last_real_turn, ts("2026-12-02T11:00:05Z"));
        assert!(!info.turn_open);
        assert_eq!(info.unsure, None);

        // Codex: the final reply.
        let done = shapes::with_raw(
            &shapes::codex_task_complete("all green SURR", "2026-12-02T11:00:09Z"),
            "SURR",
            b"\\udbff",
        );
        let t = join(&[
            b(shapes::codex_meta()),
            b(shapes::codex_task_started("2026-12-02T11:00:00Z")),
            b(shapes::codex_prompt("go", "2026-12-02T11:00:00Z")),
            done,
        ]);
        let info = parse_codex(&t);
        assert_eq!((info.bad_lines, info.repaired_lines), (0, 1));
        assert_eq!(info.last_assistant.as_deref(), Some("all green \u{fffd}"));
        assert!(!info.turn_open, "the task_complete was read");
        assert_eq!(info.session_id.as_deref(), Some(shapes::CODEX_SID));
    }

    #[test]
    fn invalid_utf8_is_replaced() {
        let prompt = shapes::with_raw(
            &shapes::claude_prompt("héllo BAD world", "2026-12-02T11:00:00Z"),
            "BAD",
            &[0xff, 0xfe, 0xc3],
        );
        let info = parse_claude(&join(&[prompt]));
        assert_eq!((info.records, info.repaired_lines), (1, 1));
        assert_eq!(
            info.last_prompt.as_deref(),
            Some("héllo \u{fffd}\u{fffd}\u{fffd} world")
        );
        assert!(info.turn_open);
        let started = shapes::with_raw(
            &shapes::codex_task_started("2026-12-02T11:00:00Z"),
            "task_started",
            b"task_started\",\"junk\":\"\xff",
        );
        let info = parse_codex(&join(&[b(shapes::codex_meta()), started]));
        assert_eq!(info.repaired_lines, 1);
        assert!(info.turn_open, "the repaired task_started counts");
    }

    #[test]
    fn a_truncated_last_line_is_flagged_and_a_glued_record_salvaged() {
        let mut t = join(&[
            b(shapes::claude_prompt("q", "2026-12-02T11:00:00Z")),
            b(shapes::claude_reply("a", "2026-12-02T11:00:01Z")),
        ]);
        let half = shapes::claude_prompt("the next prompt", "2026-12-02T11:05:00Z");
        t.extend_from_slice(&half.as_bytes()[..half.len() / 2]);
        let info = parse_claude(&t);
        assert!(info.truncated_last_line);
        assert_eq!(info.bad_lines, 1);
        assert_eq!(
            info.unsure, None,
            "the record being written is not the last complete one"
        );
        assert_eq!(info.last_prompt.as_deref(), Some("q"));
        // The agent was killed mid-write and resumed: its next record is glued to the half one.
        t.extend_from_slice(
            shapes::claude_prompt("after resume", "2026-12-02T12:00:00Z").as_bytes(),
        );
        t.push(b'\n');
        let info = parse_claude(&t);
        assert!(!info.truncated_last_line);
        assert_eq!((info.bad_lines, info.repaired_lines), (0, 1));
        assert_eq!(info.last_prompt.as_deref(), Some("after resume"));
        assert!(info.turn_open);

        // Codex: the same for a rollout.
        let mut t = join(&[
            b(shapes::codex_meta()),
            b(shapes::codex_task_started("2026-12-02T11:00:00Z")),
            b(shapes::codex_task_complete("ok", "2026-12-02T11:00:01Z")),
        ]);
        t.extend_from_slice(&shapes::codex_task_started("2026-12-02T11:05:00Z").as_bytes()[..30]);
        let info = parse_codex(&t);
        assert!(info.truncated_last_line && !info.turn_open);
    }

    #[test]
    fn an_unreadable_last_complete_record_makes_the_read_unsure() {
        let t = join(&[
            b(shapes::claude_prompt("q", "2026-12-02T11:00:00Z")),
            b(shapes::claude_reply("a", "2026-12-02T11:00:01Z")),
            b"{\"type\":\"user\",\"message\":{\"content\":\"lost prompt\"}, garbage".to_vec(),
        ]);
        let info = parse_claude(&t);
        assert!(!info.turn_open, "as far as the readable records go");
        let why = info.unsure.expect("the latest turn may be hidden");
        assert!(why.contains("cannot be parsed"), "{why}");
        // Garbage before the last record is only a bad line.
        let t = join(&[
            b"garbage".to_vec(),
            b(shapes::claude_prompt("q", "2026-12-02T11:00:00Z")),
        ]);
        assert_eq!(parse_claude(&t).unsure, None);
    }

    #[test]
    fn clean_lines_take_the_fast_path() {
        // No repair is counted (and none attempted: the repaired count is the evidence).
        let info = parse_claude(CLAUDE_SAMPLES.as_bytes());
        assert_eq!(info.repaired_lines, 0);
        assert_eq!(parse_codex(CODEX_SAMPLES.as_bytes()).repaired_lines, 0);
        assert_eq!(fix_surrogates(r#"{"a":"\ud83d\ude00 \\ud800 \n"}"#), None);
    }

    /// A session whose last record (the final reply, or a tool result) is far bigger than the old
    /// 256 KiB tail window: idle time and turn state come from the records at the end.
    #[test]
    fn the_tail_window_grows_to_hold_a_last_record_of_megabytes() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        let huge = "z".repeat(5 << 20);
        // Claude: an old first turn, 1 MB of filler turns, then a 5 MB final answer.
        let mut lines = shapes::claude_turn("first prompt", "first reply", 200 * 1024, 0);
        for k in 0..5 {
            lines.extend(shapes::claude_turn(
                "mid",
                "mid reply",
                200 * 1024,
                100 + k * 10,
            ));
        }
        lines.push(shapes::claude_prompt(
            "write the report",
            "2026-12-02T15:00:00Z",
        ));
        lines.push(shapes::claude_reply(&huge, "2026-12-02T15:10:00Z"));
        lines.push(shapes::claude_turn_done("2026-12-02T15:10:01Z"));
        lines.push(shapes::claude_last_prompt("write the report"));
        std::fs::write(&p, lines.join("\n") + "\n").unwrap();
        let info = read_claude_file(&p).unwrap();
        assert_eq!(info.unsure, None);
        assert!(!info.turn_open);
        assert_eq!(
            info.last_real_turn,
            ts("2026-12-02T15:10:00Z"),
            "from the 5 MB reply"
        );
        assert_eq!(info.last_prompt.as_deref(), Some("write the report"));
        assert_eq!(info.session_id.as_deref(), Some(shapes::CLAUDE_SID));
        assert_eq!(
            info.last_assistant.as_ref().map(String::len),
            Some(huge.len())
        );

        // Codex: a 5 MB final task_complete as the very last record.
        let mut lines = vec![shapes::codex_meta()];
        lines.extend(shapes::codex_turn("first", "first reply", 200 * 1024, 0));
        for k in 0..5 {
            lines.extend(shapes::codex_turn(
                "mid",
                "mid reply",
                200 * 1024,
                100 + k * 10,
            ));
        }
        lines.push(shapes::codex_task_started("2026-12-02T15:00:00Z"));
        lines.push(shapes::codex_prompt(
            "write the report",
            "2026-12-02T15:00:00Z",
        ));
        lines.push(shapes::codex_task_complete(&huge, "2026-12-02T15:10:00Z"));
        std::fs::write(&p, lines.join("\n") + "\n").unwrap();
        let info = read_codex_file(&p).unwrap();
        assert_eq!(info.unsure, None);
        assert!(!info.turn_open, "not a turn in flight");
        assert_eq!(info.last_real_turn, ts("2026-12-02T15:10:00Z"));
        assert_eq!(info.session_id.as_deref(), Some(shapes::CODEX_SID));
    }

    #[test]
    fn past_the_bound_the_tail_reader_says_it_cannot_tell() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        let mut lines = vec![shapes::codex_meta()];
        lines.extend(shapes::codex_turn("first", "first reply", 100 * 1024, 0));
        lines.push(shapes::codex_task_started("2026-12-02T15:00:00Z"));
        lines.push(shapes::codex_task_complete(
            &"z".repeat(3 << 20),
            "2026-12-02T15:10:00Z",
        ));
        std::fs::write(&p, lines.join("\n") + "\n").unwrap();
        // A 1 MiB bound stands for the real 64 MiB one.
        let info = read_file_capped(&p, parse_codex, 1 << 20).unwrap();
        let why = info.unsure.expect("past the bound");
        assert!(
            why.contains("does not hold its last complete record"),
            "{why}"
        );
        assert!(
            info.turn_open,
            "what the readable part says; unsure overrides it"
        );
        // Within the bound it is read.
        let info = read_file_capped(&p, parse_codex, 4 << 20).unwrap();
        assert_eq!((info.unsure, info.turn_open), (None, false));
    }

    // ---- project dir names ----------------------------------------------------------------

    #[test]
    fn project_dir_table_from_formats() {
        assert_eq!(
            claude_project_dir_name("/tmp/lab/work/proj-a"),
            "-tmp-lab-work-proj-a"
        );
        assert_eq!(
            claude_project_dir_name("/tmp/lab/work/My Proj.v2_ü"),
            "-tmp-lab-work-My-Proj-v2--"
        );
        assert_eq!(
            claude_project_dir_name("/tmp/lab/work/real-b"),
            "-tmp-lab-work-real-b"
        );
    }

    #[test]
    fn project_dir_counts_utf16_units() {
        // An astral char is two UTF-16 units, so two dashes.
        assert_eq!(claude_project_dir_name("/a🚀b"), "-a--b");
        assert_eq!(claude_project_dir_name("/日本"), "---");
        assert_eq!(claude_project_dir_name(""), "");
    }

    #[test]
    fn java_hash_matches_java_string_hashcode() {
        // Java: "hello".hashCode() == 99162322; a 201-char path made of it must end in base36 of that.
        let hash = |s: &str| {
            s.encode_utf16().fold(0i32, |h, u| {
                h.wrapping_shl(5).wrapping_sub(h).wrapping_add(i32::from(u))
            })
        };
        assert_eq!(hash("hello"), 99_162_322);
        assert_eq!(base36(99_162_322), "1n1e4y");
        assert_eq!(base36(0), "0");
        assert_eq!(base36(35), "z");
        assert_eq!(base36(36), "10");
    }

    #[test]
    fn long_paths_get_the_hash_suffix() {
        // Expectations computed independently (Python: UTF-16 units, h=(h<<5)-h+u as int32,
        // abs, base36).
        let p254 = format!("/tmp/lab/work/{}", "a".repeat(240));
        assert_eq!(p254.len(), 254);
        let enc = claude_project_dir_name(&p254);
        assert_eq!(enc.len(), 200 + 1 + "y29h8r".len());
        assert_eq!(
            &enc[..200],
            &format!("-tmp-lab-work-{}", "a".repeat(186))[..]
        );
        assert_eq!(&enc[200..], "-y29h8r");
        let long = format!("/home/u/{}", "dir/".repeat(60));
        assert_eq!(&claude_project_dir_name(&long)[200..], "-8k2kt");
        let exact = format!("/{}", "b".repeat(199));
        assert_eq!(
            claude_project_dir_name(&exact),
            format!("-{}", "b".repeat(199))
        );
        let astral = format!("/{}🚀", "c".repeat(198));
        assert_eq!(&claude_project_dir_name(&astral)[200..], "-558zpq");
    }

    // ---- session ids ----------------------------------------------------------------------

    #[test]
    fn valid_session_ids() {
        assert_eq!(valid_session_id(SID).as_deref(), Some(SID));
        assert_eq!(
            valid_session_id("158F2A09-8E02-4CF8-BBF8-0710D4E8624E").as_deref(),
            Some(SID)
        );
        assert_eq!(valid_session_id(CX).as_deref(), Some(CX));
        assert!(valid_session_id("00000000-0000-4000-8000-000000000000").is_some());
    }

    #[test]
    fn invalid_session_ids() {
        for bad in [
            "",
            "../x",
            "../../../../../../../../../../etc/pwd",
            "158f2a09-8e02-4cf8-bbf8-0710d4e8624e;",
            "158f2a09-8e02-4cf8-bbf8-0710d4e862;e",
            "$(rm -rf ~)-8e02-4cf8-bbf8-0710d4e8624",
            "158f2a09-8e02-4cf8-bbf8-$(id)0710d4e",
            " 158f2a09-8e02-4cf8-bbf8-0710d4e8624e",
            "158f2a09-8e02-4cf8-bbf8-0710d4e8624e ",
            "158f2a09-8e02-4cf8-bbf8-0710d4e862 e",
            "158f2a09-8e02-4cf8-bbf8-0710d4e8624\n",
            "158f2a09-8e02-4cf8-bbf8-0710d4e8624\0",
            "158f2a09-8e02-4cf8-bbf8-0710d4e8624",   // 35
            "158f2a09-8e02-4cf8-bbf8-0710d4e8624ee", // 37
            "158f2a098e024cf8bbf80710d4e8624e",      // no dashes
            "158f2a09-8e02-4cf8-bbf80-710d4e8624e",  // dash misplaced
            "158f2a09-8e02-4cf8-bbf8-0710d4e8624g",
            "١٥٨f2a09-8e02-4cf8-bbf8-0710d4e862", // Arabic-Indic digits
            "158f2a09-8e02-4cf8-bbf8-0710d4e86２４", // fullwidth digits
            "{158f2a09-8e02-4cf8-bbf8-0710d4e8624e}",
        ] {
            assert_eq!(valid_session_id(bad), None, "{bad:?}");
        }
    }

    // ---- properties -----------------------------------------------------------------------

    fn jsonl_soup() -> impl Strategy<Value = Vec<u8>> {
        let all: Vec<String> = CLAUDE_SAMPLES
            .lines()
            .chain(CODEX_SAMPLES.lines())
            .map(str::to_string)
            .collect();
        let line = (
            prop::sample::select(all),
            any::<prop::sample::Index>(),
            any::<bool>(),
        )
            .prop_map(|(l, cut, whole)| {
                if whole {
                    l
                } else {
                    let mut at = cut.index(l.len() + 1);
                    while !l.is_char_boundary(at) {
                        at -= 1;
                    }
                    l[..at].to_string()
                }
            });
        prop::collection::vec(line, 0..30).prop_map(|v| v.join("\n").into_bytes())
    }

    proptest! {
        #[test]
        fn parsers_never_panic_on_arbitrary_bytes(b in prop::collection::vec(any::<u8>(), 0..4096)) {
            let c = parse_claude(&b);
            let x = parse_codex(&b);
            prop_assert!(c.session_id.iter().chain(x.session_id.iter()).all(|s| valid_session_id(s).as_deref() == Some(s.as_str())));
        }

        #[test]
        fn parsers_never_panic_on_cut_up_records(b in jsonl_soup()) {
            let c = parse_claude(&b);
            let x = parse_codex(&b);
            let nonempty = b.split(|&c| c == b'\n').filter(|l| !l.trim_ascii().is_empty()).count();
            prop_assert_eq!(c.records + c.bad_lines, nonempty);
            prop_assert_eq!(x.records + x.bad_lines, nonempty);
        }

        #[test]
        fn valid_session_id_output_is_strict(s in any::<String>()) {
            if let Some(id) = valid_session_id(&s) {
                let strict = regex::Regex::new(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$").unwrap();
                prop_assert!(strict.is_match(&id));
            }
        }

        #[test]
        fn valid_session_id_accepts_every_canonical_uuid(s in "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}") {
            prop_assert_eq!(valid_session_id(&s), Some(s.to_ascii_lowercase()));
        }

        #[test]
        fn project_dir_names_are_safe(s in any::<String>()) {
            let d = claude_project_dir_name(&s);
            prop_assert!(d.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'));
            prop_assert!(d.len() <= 200 + 1 + 7);
        }
    }
}
