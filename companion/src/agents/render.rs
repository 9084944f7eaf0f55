//! Session transcripts as a readable Markdown conversation (pure over bytes).
//!
//! Contract:
//! * `claude_markdown` / `codex_markdown` (and each agent folder's renderer, built with the same
//!   `Log`) take the same JSONL bytes as `transcript::parse_*`, read
//!   the lines the same way (garbage, a half-written last line, non-UTF-8: skipped) and never panic.
//! * The Markdown has no document header. A real user prompt (the `transcript` notion: not meta,
//!   sidechain, harness, local-command output or a tool result) is `### User · YYYY-MM-DD HH:MM UTC`
//!   and its text; model text follows `### Assistant · …`, one heading per stretch of model output
//!   (a prompt, a note or the end of a turn starts a new one). Each tool call is one list line
//!   (`` - 🔧 Bash: `cargo test` ``); tool output, thinking, attachments, snapshots and token
//!   counts are left out. Interruptions, slash commands and compactions are one-line italic notes.
//! * Message text is kept as written, except what would escape its section: ATX headings outside
//!   code go down to levels 4–6, a setext underline gets a blank line above it, and a message whose
//!   fences or raw HTML could stay open (or that this module cannot be sure about) is wrapped whole
//!   in a backtick fence longer than any backtick run in it. So the only top-level headings of
//!   levels 1–3 are the turn headings, and no message can swallow the ones after it.
//! * Those changes only add `#`, backticks and whitespace, so [`normalize`] of a message is a
//!   substring of `normalize(markdown)`. `last_user` / `last_assistant` are the last prompt and
//!   reply in file order; `last_assistant` equals what `parse_*` reports for the same bytes. The
//!   archive relies on both to check that it holds the latest turns.
//! * Claude events are shown in timestamp order (stable, a record without a timestamp stays after
//!   the one before it): Claude sometimes writes a turn's reply before its prompt. Codex writes one
//!   prompt or reply under several record types; a repeat within a turn is shown once.

use jiff::tz::Offset;
use jiff::Timestamp;
use serde_json::Value;

use crate::agents::claude::transcript::{reply_text as claude_reply_text, User as ClaudeUser};
use crate::agents::codex::transcript::{texts as codex_texts, user_text as codex_user_text};
use crate::agents::transcript::{for_each_record, non_empty, str_of, timestamp_of, TranscriptInfo};

/// A rendered conversation and what the caller checks it against.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Conversation {
    pub markdown: String,
    /// `### User` sections (real prompts).
    pub turns: usize,
    /// Tool-call lines.
    pub tool_calls: usize,
    /// Text of the last real prompt in file order.
    pub last_user: Option<String>,
    /// Text of the last model reply in file order (as `transcript::parse_*` reports it).
    pub last_assistant: Option<String>,
}

/// Lowercase, collapse all whitespace runs to one space, strip Markdown punctuation (`*_#>|~` and
/// backticks), trim. Used to check that the Markdown holds a given message.
pub(crate) fn normalize(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut gap = false;
    for c in s.chars() {
        if matches!(c, '*' | '_' | '`' | '#' | '>' | '|' | '~') {
            continue;
        }
        if c.is_whitespace() {
            gap = true;
            continue;
        }
        if gap && !out.is_empty() {
            out.push(' ');
        }
        gap = false;
        // Per char, not `str::to_lowercase`: its final-sigma rule looks at the neighbours, and a
        // message must normalize the same alone as inside the document.
        out.extend(c.to_lowercase());
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Events and the writer
// ---------------------------------------------------------------------------------------------

/// One thing a conversation shows, in the order a renderer pushes it (the kit an agent's own
/// renderer builds with: [`Log`], [`Item`], [`tool_line`], [`tool_arg`]).
pub(crate) enum Item {
    User(String),
    Text(String),
    /// The line after `- 🔧 `, already Markdown.
    Tool(String),
    /// Inline Markdown, already escaped.
    Note(String),
    /// The model's next output gets its own heading.
    Break,
}

struct Event {
    ts: Option<Timestamp>,
    item: Item,
}

#[derive(Default)]
pub(crate) struct Log {
    events: Vec<Event>,
    pub(crate) last_user: Option<String>,
    pub(crate) last_assistant: Option<String>,
}

impl Log {
    pub(crate) fn push(&mut self, ts: Option<Timestamp>, item: Item) {
        self.events.push(Event { ts, item });
    }

    pub(crate) fn finish(self) -> Conversation {
        let Log {
            events,
            last_user,
            last_assistant,
        } = self;
        let mut w = Writer::default();
        // By value: each message's text is freed once written, so a large conversation is not
        // held twice (events and Markdown) at the end.
        for e in events {
            w.event(&e);
        }
        let mut markdown = w.out;
        let end = markdown.trim_end().len();
        markdown.truncate(end);
        if !markdown.is_empty() {
            markdown.push('\n');
        }
        Conversation {
            markdown,
            turns: w.turns,
            tool_calls: w.tool_calls,
            last_user,
            last_assistant,
        }
    }
}

#[derive(Default)]
struct Writer {
    out: String,
    in_assistant: bool,
    in_list: bool,
    turns: usize,
    tool_calls: usize,
}

impl Writer {
    fn event(&mut self, e: &Event) {
        match &e.item {
            Item::User(text) => {
                self.end_list();
                self.heading("User", e.ts);
                self.block(&body(text));
                self.in_assistant = false;
                self.turns += 1;
            }
            Item::Text(text) => {
                self.end_list();
                self.assistant(e.ts);
                self.block(&body(text));
            }
            Item::Tool(line) => {
                if !self.in_assistant {
                    self.end_list();
                    self.assistant(e.ts);
                }
                self.out.push_str("- 🔧 ");
                self.out.push_str(line);
                self.out.push('\n');
                self.in_list = true;
                self.tool_calls += 1;
            }
            Item::Note(note) => {
                self.end_list();
                self.block(&format!("*{note}*"));
                self.in_assistant = false;
            }
            Item::Break => self.in_assistant = false,
        }
    }

    fn assistant(&mut self, ts: Option<Timestamp>) {
        if !self.in_assistant {
            self.heading("Assistant", ts);
            self.in_assistant = true;
        }
    }

    fn heading(&mut self, who: &str, ts: Option<Timestamp>) {
        self.out.push_str("### ");
        self.out.push_str(who);
        if let Some(ts) = ts {
            self.out.push_str(" · ");
            self.out.push_str(&utc_minute(ts));
        }
        self.out.push_str("\n\n");
    }

    fn block(&mut self, s: &str) {
        self.out.push_str(s);
        self.out.push_str("\n\n");
    }

    /// A blank line after the tool list, so the next block is not read as part of it.
    fn end_list(&mut self) {
        if self.in_list {
            self.out.push('\n');
            self.in_list = false;
        }
    }
}

fn utc_minute(ts: Timestamp) -> String {
    // Built by hand: jiff's strftime Display reports failures as fmt::Error, which would turn
    // into a panic in `to_string`.
    let dt = Offset::UTC.to_datetime(ts);
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02} UTC",
        dt.year(),
        dt.month(),
        dt.day(),
        dt.hour(),
        dt.minute()
    )
}

// ---------------------------------------------------------------------------------------------
// Message bodies
// ---------------------------------------------------------------------------------------------

/// A message as Markdown that cannot leak into the sections after it (see the module doc).
fn body(text: &str) -> String {
    // CommonMark ends a line at a lone CR too; the line scan below must see the same lines.
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    tame(&text).unwrap_or_else(|| wrap(&text))
}

/// The text with its headings pushed down, or `None` when its block structure is not simple
/// enough to be sure it closes: a fence left open, a fence-like line that is not a column-0 fence
/// (inside a list, a quote or indented code, CommonMark may close it elsewhere than a line scan
/// would), or a raw HTML block (some kinds run until an end marker, and they hide fences).
fn tame(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len() + 16);
    let mut fence: Option<(u8, usize)> = None;
    let mut after_paragraph = false;
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if let Some((ch, len)) = fence {
            if closes_fence(line, ch, len) {
                fence = None;
            }
            out.push_str(line);
            after_paragraph = false;
            continue;
        }
        if let Some(open) = opens_fence(line) {
            fence = Some(open);
            out.push_str(line);
            after_paragraph = false;
            continue;
        }
        if line.contains("```") || line.contains("~~~") || html_block_start(line) {
            return None;
        }
        if let Some((indent, level)) = atx_heading(line) {
            let deeper = (level + 3).min(6) - level;
            out.push_str(&line[..indent]);
            out.push_str(&"#".repeat(deeper));
            out.push_str(&line[indent..]);
            after_paragraph = false;
            continue;
        }
        if after_paragraph && setext_underline(line) {
            // Below a paragraph line this would make that line a level 1–2 heading.
            out.push('\n');
        }
        out.push_str(line);
        after_paragraph = !line.trim().is_empty();
    }
    fence.is_none().then_some(out)
}

/// The whole text in a backtick fence that nothing inside can close.
fn wrap(text: &str) -> String {
    let fence = "`".repeat(longest_run(text, '`').max(2) + 1);
    format!("{fence}\n{text}\n{fence}")
}

fn longest_run(s: &str, ch: char) -> usize {
    let (mut best, mut cur) = (0, 0);
    for c in s.chars() {
        cur = if c == ch { cur + 1 } else { 0 };
        best = best.max(cur);
    }
    best
}

/// Up to three spaces of indentation, then the rest.
fn dedent3(line: &str) -> Option<(usize, &str)> {
    let n = line.bytes().take_while(|&b| b == b' ').count();
    (n <= 3).then(|| (n, &line[n..]))
}

/// A column-0 fence opener: its character and length.
fn opens_fence(line: &str) -> Option<(u8, usize)> {
    let ch = *line.as_bytes().first()?;
    if ch != b'`' && ch != b'~' {
        return None;
    }
    let len = line.bytes().take_while(|&b| b == ch).count();
    // A backtick fence's info string cannot hold a backtick (that line is inline code).
    let ok = len >= 3 && (ch == b'~' || !line[len..].contains('`'));
    ok.then_some((ch, len))
}

fn closes_fence(line: &str, ch: u8, len: usize) -> bool {
    let Some((_, rest)) = dedent3(line) else {
        return false;
    };
    let run = rest.bytes().take_while(|&b| b == ch).count();
    run >= len && rest[run..].trim_matches([' ', '\t']).is_empty()
}

/// An ATX heading: the indentation and the level.
fn atx_heading(line: &str) -> Option<(usize, usize)> {
    let (indent, rest) = dedent3(line)?;
    let level = rest.bytes().take_while(|&b| b == b'#').count();
    let after = rest.as_bytes().get(level);
    ((1..=6).contains(&level) && matches!(after, None | Some(b' ' | b'\t')))
        .then_some((indent, level))
}

fn setext_underline(line: &str) -> bool {
    let Some((_, rest)) = dedent3(line) else {
        return false;
    };
    let rest = rest.trim_end_matches([' ', '\t']);
    let Some(first) = rest.chars().next() else {
        return false;
    };
    (first == '=' || first == '-') && rest.chars().all(|c| c == first)
}

fn html_block_start(line: &str) -> bool {
    let Some((_, rest)) = dedent3(line) else {
        return false;
    };
    let mut b = rest.bytes();
    b.next() == Some(b'<')
        && b.next()
            .is_some_and(|c| c.is_ascii_alphabetic() || b"/!?".contains(&c))
}

/// Inline code that shows `s` literally whatever backticks it holds.
fn code_span(s: &str) -> String {
    let ticks = "`".repeat(longest_run(s, '`') + 1);
    // CommonMark strips one space at each end when both are there; pad so none of `s` is lost.
    let pad = if s.starts_with(['`', ' ']) || s.ends_with(['`', ' ']) {
        " "
    } else {
        ""
    };
    format!("{ticks}{pad}{s}{pad}{ticks}")
}

/// Free text for inside a note's `*…*`.
fn escape_inline(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '\\' | '*' | '_' | '`' | '<') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The first non-blank line, trimmed and cut to `max` chars (with `…`).
fn first_line(s: &str, max: usize) -> Option<String> {
    // A lone CR ends a line in CommonMark too.
    let line = s
        .split(['\n', '\r'])
        .map(str::trim)
        .find(|l| !l.is_empty())?;
    let mut out: String = line.chars().take(max).collect();
    if out.len() < line.len() {
        out.push('…');
    }
    Some(out)
}

fn note(s: &str) -> Option<Item> {
    first_line(s, 200).map(|l| Item::Note(escape_inline(&l)))
}

// ---------------------------------------------------------------------------------------------
// Tool calls
// ---------------------------------------------------------------------------------------------

const ARG_CHARS: usize = 160;

/// Input keys worth showing, best first (`Grep` has both `pattern` and `path`).
const ARG_KEYS: &[&str] = &[
    "command",
    "cmd",
    "file_path",
    "notebook_path",
    "pattern",
    "path",
    "url",
    "query",
    "description",
    "prompt",
    "skill",
];

pub(crate) fn tool_line(name: Option<&str>, arg: Option<String>) -> String {
    let name = name
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .unwrap_or("tool");
    let plain = name.len() <= 64
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-.:".contains(c));
    let shown = if plain {
        name.to_string()
    } else {
        code_span(&first_line(name, 64).unwrap_or_default())
    };
    match arg.as_deref().and_then(|a| first_line(a, ARG_CHARS)) {
        Some(a) => format!("{shown}: {}", code_span(&a)),
        None => shown,
    }
}

/// The argument to show from a tool's input object.
pub(crate) fn tool_arg(input: &Value) -> Option<String> {
    let obj = input.as_object()?;
    for key in ARG_KEYS {
        match obj.get(*key) {
            Some(Value::String(s)) if !s.trim().is_empty() => return Some(s.clone()),
            Some(Value::Array(words)) => {
                if let Some(cmd) = argv(words) {
                    return Some(cmd);
                }
            }
            _ => {}
        }
    }
    obj.values()
        .filter_map(Value::as_str)
        .find(|s| !s.trim().is_empty())
        .map(str::to_string)
}

/// An argv as the command line a human would type: the script of `bash -lc '…'`, the files of
/// an `apply_patch`, else the words joined.
fn argv(words: &[Value]) -> Option<String> {
    let w: Vec<&str> = words.iter().filter_map(Value::as_str).collect();
    match w.as_slice() {
        [] => None,
        [_, flag, script, ..] if matches!(*flag, "-c" | "-lc") => Some(script.to_string()),
        ["apply_patch", patch, ..] => patch_files(patch).or_else(|| Some(patch.to_string())),
        _ => Some(w.join(" ")),
    }
}

/// The files an `apply_patch` body touches.
fn patch_files(patch: &str) -> Option<String> {
    let files: Vec<&str> = patch
        .lines()
        .filter_map(|l| {
            ["*** Add File: ", "*** Update File: ", "*** Delete File: "]
                .iter()
                .find_map(|p| l.strip_prefix(p))
        })
        .map(str::trim)
        .collect();
    (!files.is_empty()).then(|| files.join(", "))
}

/// A Codex `function_call` / `custom_tool_call`: `arguments` is a JSON string, `input` the raw
/// text of a custom tool (an `apply_patch` body).
fn codex_call(payload: &Value) -> String {
    let name = str_of(payload, "name");
    let raw = payload.get("arguments").or_else(|| payload.get("input"));
    let parsed = match raw {
        Some(Value::String(s)) => serde_json::from_str::<Value>(s).ok(),
        other => other.cloned(),
    };
    let patch = name == Some("apply_patch");
    let arg = match (&parsed, raw) {
        (Some(v @ Value::Object(o)), _) => {
            let body = ["input", "patch"]
                .iter()
                .find_map(|k| o.get(*k).and_then(Value::as_str));
            match body.filter(|_| patch).and_then(patch_files) {
                Some(files) => Some(files),
                None => tool_arg(v),
            }
        }
        (_, Some(Value::String(s))) if patch => patch_files(s).or_else(|| Some(s.clone())),
        (_, Some(Value::String(s))) => Some(s.clone()),
        _ => None,
    };
    tool_line(name, arg)
}

// ---------------------------------------------------------------------------------------------
// Claude
// ---------------------------------------------------------------------------------------------

fn is_true(v: &Value, key: &str) -> bool {
    v.get(key).and_then(Value::as_bool) == Some(true)
}

/// The text of a user record as `ClaudeUser::classify` reads it, and whether it holds a tool
/// result.
fn claude_user_text(v: &Value) -> (String, bool) {
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

fn claude_user(log: &mut Log, v: &Value, ts: Option<Timestamp>) {
    // A compaction summary is written as a user message but nobody typed it.
    if is_true(v, "isCompactSummary") || is_true(v, "isVisibleInTranscriptOnly") {
        return;
    }
    match ClaudeUser::classify(v) {
        ClaudeUser::Prompt(text) => {
            log.last_user = Some(text.clone());
            log.push(ts, Item::User(text));
        }
        ClaudeUser::Closes => {
            let (text, _) = claude_user_text(v);
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
        ClaudeUser::Continues => {
            let (text, tool_result) = claude_user_text(v);
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
        ClaudeUser::Ignored => {}
    }
}

fn claude_assistant(log: &mut Log, v: &Value, ts: Option<Timestamp>) {
    if is_true(v, "isSidechain") {
        return;
    }
    let msg = v.get("message");
    let blocks: &[Value] = msg
        .and_then(|m| m.get("content"))
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    // Read as `parse_claude` reads it, so `last_assistant` is the same string.
    let (text, synthetic) = claude_reply_text(msg);
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

/// Renders a Claude Code transcript (JSONL bytes).
pub(crate) fn claude_markdown(bytes: &[u8]) -> Conversation {
    let mut log = Log::default();
    for_each_record(bytes, &mut TranscriptInfo::default(), |v| {
        let ts = timestamp_of(v);
        match str_of(v, "type") {
            Some("user") => claude_user(&mut log, v, ts),
            Some("assistant") => claude_assistant(&mut log, v, ts),
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
    let mut at = None;
    for e in &mut log.events {
        at = e.ts.or(at);
        e.ts = at;
    }
    log.events.sort_by_key(|e| e.ts);
    log.finish()
}

// ---------------------------------------------------------------------------------------------
// Codex
// ---------------------------------------------------------------------------------------------

/// Codex writes a prompt as a `response_item` and an event, and a reply as a `response_item`,
/// maybe an `agent_message` and the `task_complete` summary: show each once per turn.
#[derive(Default)]
struct CodexSeen {
    user: Option<String>,
    replies: Vec<String>,
}

struct CodexLog {
    log: Log,
    seen: CodexSeen,
}

impl CodexLog {
    fn user(&mut self, ts: Option<Timestamp>, text: Option<String>) {
        let Some(text) = text else { return };
        self.log.last_user = Some(text.clone());
        let key = normalize(&text);
        if self.seen.user.as_ref() == Some(&key) {
            return;
        }
        self.seen.user = Some(key);
        self.seen.replies.clear();
        self.log.push(ts, Item::User(text));
    }

    fn reply(&mut self, ts: Option<Timestamp>, text: Option<String>) {
        let Some(text) = text else { return };
        self.log.last_assistant = Some(text.clone());
        let key = normalize(&text);
        if self.seen.replies.contains(&key) {
            return;
        }
        // The copies come close together, and a long turn must not make this quadratic.
        if self.seen.replies.len() == 4 {
            self.seen.replies.remove(0);
        }
        self.seen.replies.push(key);
        // The same words typed again after this reply are a new prompt.
        self.seen.user = None;
        self.log.push(ts, Item::Text(text));
    }

    fn feed(&mut self, v: &Value) {
        let ts = timestamp_of(v);
        let payload = v.get("payload").unwrap_or(&Value::Null);
        let ptype = str_of(payload, "type").unwrap_or("");
        match str_of(v, "type").unwrap_or("") {
            "response_item" => match ptype {
                "message" => match str_of(payload, "role") {
                    Some("user") => self.user(ts, codex_user_text(payload)),
                    Some("assistant") => {
                        let text = codex_texts(payload.get("content"), &["output_text", "text"]);
                        self.reply(ts, text);
                    }
                    _ => {} // developer / system: harness
                },
                "function_call" | "custom_tool_call" => {
                    self.log.push(ts, Item::Tool(codex_call(payload)));
                }
                "local_shell_call" => {
                    let cmd = payload
                        .get("action")
                        .and_then(|a| a.get("command"))
                        .and_then(Value::as_array)
                        .and_then(|w| argv(w));
                    self.log.push(ts, Item::Tool(tool_line(Some("shell"), cmd)));
                }
                "web_search_call" => {
                    let q = payload
                        .get("action")
                        .and_then(|a| str_of(a, "query"))
                        .map(str::to_string);
                    self.log
                        .push(ts, Item::Tool(tool_line(Some("web_search"), q)));
                }
                _ => {} // tool output, reasoning
            },
            "event_msg" => match ptype {
                "task_started" => {
                    self.seen = CodexSeen::default();
                    self.log.push(ts, Item::Break);
                }
                "task_complete" => {
                    let text = str_of(payload, "last_agent_message").and_then(non_empty);
                    self.reply(ts, text);
                    self.log.push(ts, Item::Break);
                }
                "turn_aborted" => {
                    let why = str_of(payload, "reason").and_then(|r| first_line(r, 80));
                    let n = match why {
                        Some(r) => format!("Turn aborted ({})", escape_inline(&r)),
                        None => "Turn aborted".to_string(),
                    };
                    self.log.push(ts, Item::Note(n));
                }
                "item_completed" => {
                    let item = payload.get("item").unwrap_or(&Value::Null);
                    if str_of(item, "type") == Some("UserMessage") {
                        let text = codex_texts(item.get("content"), &["text", "input_text"]);
                        self.user(ts, text);
                    }
                }
                "user_message" => {
                    self.user(ts, str_of(payload, "message").and_then(non_empty));
                }
                "agent_message" => {
                    self.reply(ts, str_of(payload, "message").and_then(non_empty));
                }
                _ => {}
            },
            "compacted" => self
                .log
                .push(ts, Item::Note("Conversation compacted".into())),
            _ => {}
        }
    }
}

/// Renders a Codex CLI rollout (JSONL bytes).
pub(crate) fn codex_markdown(bytes: &[u8]) -> Conversation {
    let mut st = CodexLog {
        log: Log::default(),
        seen: CodexSeen::default(),
    };
    for_each_record(bytes, &mut TranscriptInfo::default(), |v| st.feed(v));
    st.log.finish()
}

// ---------------------------------------------------------------------------------------------
// The raw end of a transcript, read back independently
// ---------------------------------------------------------------------------------------------

/// A prompt or a reply as this module shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    User(String),
    Reply(String),
}

/// The prompt or reply one record holds, by the rules the renderers use (a Claude compaction
/// summary, meta, sidechain, synthetic replies and tool results are neither).
pub(crate) fn claude_message_of(v: &Value) -> Option<Message> {
    match str_of(v, "type")? {
        "user" if is_true(v, "isCompactSummary") || is_true(v, "isVisibleInTranscriptOnly") => None,
        "user" => match ClaudeUser::classify(v) {
            ClaudeUser::Prompt(t) => Some(Message::User(t)),
            _ => None,
        },
        "assistant" if is_true(v, "isSidechain") => None,
        "assistant" => {
            let (text, synthetic) = claude_reply_text(v.get("message"));
            (!synthetic)
                .then(|| non_empty(&text))
                .flatten()
                .map(Message::Reply)
        }
        _ => None,
    }
}

/// The prompt or reply one Codex rollout record holds.
pub(crate) fn codex_message_of(v: &Value) -> Option<Message> {
    {
        let payload = v.get("payload").unwrap_or(&Value::Null);
        let ptype = str_of(payload, "type").unwrap_or("");
        match (str_of(v, "type")?, ptype) {
            ("response_item", "message") => match str_of(payload, "role") {
                Some("user") => codex_user_text(payload).map(Message::User),
                Some("assistant") => codex_texts(payload.get("content"), &["output_text", "text"])
                    .map(Message::Reply),
                _ => None,
            },
            ("event_msg", "task_complete") => str_of(payload, "last_agent_message")
                .and_then(non_empty)
                .map(Message::Reply),
            ("event_msg", "item_completed") => {
                let item = payload.get("item").unwrap_or(&Value::Null);
                (str_of(item, "type") == Some("UserMessage"))
                    .then(|| codex_texts(item.get("content"), &["text", "input_text"]))
                    .flatten()
                    .map(Message::User)
            }
            ("event_msg", "user_message") => str_of(payload, "message")
                .and_then(non_empty)
                .map(Message::User),
            ("event_msg", "agent_message") => str_of(payload, "message")
                .and_then(non_empty)
                .map(Message::Reply),
            _ => None,
        }
    }
}

/// The latest prompt and reply of a transcript read back from its raw bytes, and what could not
/// be read on the way.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct RawEnd {
    pub last_user: Option<String>,
    pub last_reply: Option<String>,
    /// Lines after the latest prompt (or reply) that cannot be parsed even leniently, and a
    /// truncated last line: they are in the raw copy but in no rendering.
    pub unreadable: Vec<String>,
}

/// Walks `bytes` back from the end, line by line (its own split, not `for_each_record`'s), until
/// it has the latest prompt and the latest reply, noting every line it cannot read on the way.
/// The archive checks the Markdown against this, so a line the renderer skipped cannot hide the
/// session's real last turn.
/// `message_of` is the agent's own reading of one record (`AgentKind::message_of`).
pub(crate) fn raw_end(bytes: &[u8], message_of: impl Fn(&Value) -> Option<Message>) -> RawEnd {
    const SHOWN: usize = 8;
    let mut out = RawEnd::default();
    let mut unreadable = 0usize;
    let mut end = bytes.len();
    let ends_in_newline = bytes.last() == Some(&b'\n');
    while end > 0 && (out.last_user.is_none() || out.last_reply.is_none()) {
        let start = bytes[..end]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |p| p + 1);
        let last_segment = end == bytes.len() && !ends_in_newline;
        let line = bytes[start..end].trim_ascii();
        if !line.is_empty() {
            match crate::agents::transcript::parse_line(line) {
                Some((v, _)) => match message_of(&v) {
                    Some(Message::User(t)) if out.last_user.is_none() => out.last_user = Some(t),
                    Some(Message::Reply(t)) if out.last_reply.is_none() => out.last_reply = Some(t),
                    _ => {}
                },
                None => {
                    unreadable += 1;
                    if out.unreadable.len() < SHOWN {
                        out.unreadable.push(if last_segment {
                            format!(
                                "the transcript ends in a truncated record ({} bytes at byte {start}, being written or cut by a kill)",
                                line.len()
                            )
                        } else {
                            format!(
                                "the record at byte {start} ({} bytes) cannot be parsed, even leniently",
                                line.len()
                            )
                        });
                    }
                }
            }
        }
        end = start.saturating_sub(1);
        if start == 0 {
            break;
        }
    }
    if unreadable > SHOWN {
        out.unreadable.push(format!(
            "… and {} more unreadable lines",
            unreadable - SHOWN
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::claude::transcript::parse as parse_claude;
    use crate::agents::codex::transcript::parse as parse_codex;
    use proptest::prelude::*;
    use serde_json::json;

    const CLAUDE_SAMPLES: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/claude-transcript-samples.jsonl"
    ));
    const CODEX_SAMPLES: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/codex-rollout-samples.jsonl"
    ));

    fn jsonl(lines: &[String]) -> Vec<u8> {
        let mut s = lines.join("\n");
        s.push('\n');
        s.into_bytes()
    }

    /// Position of `needle` in `hay`, failing the test when it is missing.
    fn at(hay: &str, needle: &str) -> usize {
        hay.find(needle)
            .unwrap_or_else(|| panic!("{needle:?} missing from:\n{hay}"))
    }

    /// Headings of levels 1–3 outside fenced code, by CommonMark's top-level line rules (a fence
    /// may be indented up to three spaces here, which is looser than the renderer's own scan).
    fn top_headings(md: &str) -> Vec<&str> {
        let mut out = Vec::new();
        let mut fence: Option<(char, usize)> = None;
        for line in md.split(['\n', '\r']) {
            let indent = line.len() - line.trim_start_matches(' ').len();
            let rest = &line[indent..];
            if indent > 3 {
                continue;
            }
            let first = rest.chars().next();
            let run = |c: char| rest.chars().take_while(|&x| x == c).count();
            match (fence, first) {
                (Some((c, n)), Some(f))
                    if f == c && run(c) >= n && rest.trim_start_matches(c).trim().is_empty() =>
                {
                    fence = None;
                }
                (Some(_), _) => {}
                (None, Some(c @ ('`' | '~')))
                    if run(c) >= 3 && (c == '~' || !rest.trim_start_matches('`').contains('`')) =>
                {
                    fence = Some((c, run(c)));
                }
                (None, Some('#')) => {
                    let level = run('#');
                    let after = rest[level..].chars().next();
                    if level <= 3 && matches!(after, None | Some(' ' | '\t')) {
                        out.push(line);
                    }
                }
                _ => {}
            }
        }
        out
    }

    /// What the archive relies on, for any input.
    fn check_invariants(c: &Conversation, parsed_last_assistant: &Option<String>) {
        assert_eq!(&c.last_assistant, parsed_last_assistant);
        let md = normalize(&c.markdown);
        for m in c.last_user.iter().chain(c.last_assistant.iter()) {
            assert!(
                md.contains(&normalize(m)),
                "{m:?} not in markdown:\n{}",
                c.markdown
            );
        }
        let heads = top_headings(&c.markdown);
        assert!(
            heads
                .iter()
                .all(|h| h.starts_with("### User") || h.starts_with("### Assistant")),
            "{heads:?} in:\n{}",
            c.markdown
        );
        assert_eq!(
            heads.iter().filter(|h| h.starts_with("### User")).count(),
            c.turns
        );
        assert!(!c.markdown.contains('\r'));
    }

    // ---- Claude fixture -------------------------------------------------------------------

    #[test]
    fn claude_fixture_renders_prompt_reply_and_tool_in_order() {
        let c = claude_markdown(CLAUDE_SAMPLES.as_bytes());
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
    fn claude_fixture_leaves_out_tool_output_and_bookkeeping() {
        let md = claude_markdown(CLAUDE_SAMPLES.as_bytes()).markdown;
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
    fn claude_fixture_last_messages_match_the_parser() {
        let c = claude_markdown(CLAUDE_SAMPLES.as_bytes());
        let info = parse_claude(CLAUDE_SAMPLES.as_bytes());
        assert_eq!(c.last_user.as_deref(), Some("hello mock, please reply"));
        assert_eq!(
            c.last_assistant.as_deref(),
            Some("Hello from the mock Anthropic server (canned reply #5). PARKTEST-OK")
        );
        check_invariants(&c, &info.last_assistant);
    }

    // ---- Claude records -------------------------------------------------------------------

    fn claude(ty: &str, content: Value, at: &str, extra: Value) -> String {
        let mut v = json!({"type": ty, "message": {"role": ty, "model": "claude-opus-4-8",
            "content": content}, "timestamp": at, "sessionId": "158f2a09-8e02-4cf8-bbf8-0710d4e8624e"});
        if let (Some(o), Some(e)) = (v.as_object_mut(), extra.as_object()) {
            o.extend(e.clone());
        }
        v.to_string()
    }

    #[test]
    fn claude_notes_and_skipped_records() {
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
        let c = claude_markdown(&b);
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
        check_invariants(&c, &parse_claude(&b).last_assistant);
    }

    #[test]
    fn claude_2_1_332_local_commands_are_noted_like_2_1_197_ones() {
        // Real 2.1.332: /compact and /model still echo in user records, /rename and /context in
        // `local_command` system records; outputs and the compaction summary stay out.
        let b = include_bytes!("../../tests/fixtures/claude/commands-2.1.332.jsonl");
        let c = claude_markdown(b);
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
        check_invariants(&c, &parse_claude(b).last_assistant);
    }

    #[test]
    fn claude_reply_written_before_its_prompt_follows_it() {
        // Real 2.1.197 file order (see transcript.rs): the reply lands before its prompt.
        let b = concat!(
            r#"{"type":"assistant","timestamp":"2026-12-02T15:33:48.666Z","message":{"role":"assistant","content":[{"type":"text","text":"Hello PARKTEST-OK"}]}}"#,
            "\n",
            r#"{"type":"system","subtype":"turn_duration","timestamp":"2026-12-02T15:33:48.674Z"}"#,
            "\n",
            r#"{"type":"user","timestamp":"2026-12-02T15:33:48.334Z","origin":{"kind":"human"},"promptSource":"typed","message":{"role":"user","content":"second agent"}}"#,
        );
        let c = claude_markdown(b.as_bytes());
        assert_eq!(
            c.markdown,
            "### User · 2026-12-02 15:33 UTC\n\nsecond agent\n\n\
             ### Assistant · 2026-12-02 15:33 UTC\n\nHello PARKTEST-OK\n"
        );
        check_invariants(&c, &parse_claude(b.as_bytes()).last_assistant);
    }

    // ---- Codex fixture --------------------------------------------------------------------

    #[test]
    fn codex_fixture_renders_prompt_reply_and_tool_in_order() {
        let c = codex_markdown(CODEX_SAMPLES.as_bytes());
        let md = &c.markdown;
        let prompt = at(md, "### User · 2026-12-02 13:56 UTC\n\nhello codex mock\n");
        let reply = at(
            md,
            "### Assistant · 2026-12-02 13:57 UTC\n\n\
             Hello from the mock OpenAI server (canned reply #1). PARKTEST-OK\n",
        );
        let tool = at(
            md,
            "### Assistant · 2026-12-02 14:01 UTC\n\n- 🔧 exec_command: `sleep 45`\n",
        );
        assert!(prompt < reply && reply < tool, "{md}");
        // The reply is both a response_item and the task_complete summary.
        assert_eq!(md.matches("canned reply #1").count(), 1, "{md}");
        assert_eq!((c.turns, c.tool_calls), (1, 1));
    }

    #[test]
    fn codex_fixture_leaves_out_harness_and_tool_output() {
        let md = codex_markdown(CODEX_SAMPLES.as_bytes()).markdown;
        for absent in [
            "environment_context",    // harness user message
            "/tmp/lab/work/cx-a",     // its cwd, and turn_context's
            "skills_instructions",    // developer message
            "Collaboration Mode",     // developer message, turn_context
            "You are a coding agent", // session_meta base instructions
            "Chunk ID",               // function_call_output
            "Wall time",              // function_call_output
            "total_tokens",           // token_count / token_usage_record
            "mock-model",             // world_state, settings
        ] {
            assert!(!md.contains(absent), "{absent:?} leaked into:\n{md}");
        }
    }

    #[test]
    fn codex_fixture_last_messages_match_the_parser() {
        let c = codex_markdown(CODEX_SAMPLES.as_bytes());
        let info = parse_codex(CODEX_SAMPLES.as_bytes());
        assert_eq!(c.last_user.as_deref(), Some("hello codex mock"));
        assert_eq!(
            c.last_assistant.as_deref(),
            Some("Hello from the mock OpenAI server (canned reply #1). PARKTEST-OK")
        );
        check_invariants(&c, &info.last_assistant);
    }

    // ---- Codex records --------------------------------------------------------------------

    fn codex(at: &str, ty: &str, payload: Value) -> String {
        json!({"timestamp": at, "type": ty, "payload": payload}).to_string()
    }

    #[test]
    fn codex_prompt_and_reply_written_twice_show_once_per_turn() {
        let user_item = |text: &str| {
            json!({"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": "<environment_context>\n<cwd>/w</cwd>\n</environment_context>"},
                {"type": "input_text", "text": text}]})
        };
        let reply_item = |text: &str| {
            json!({"type": "message", "role": "assistant",
                "content": [{"type": "output_text", "text": text}]})
        };
        let lines = [
            codex(
                "2026-12-02T10:00:00Z",
                "event_msg",
                json!({"type": "task_started"}),
            ),
            codex(
                "2026-12-02T10:00:00Z",
                "response_item",
                user_item("continue"),
            ),
            codex(
                "2026-12-02T10:00:00Z",
                "event_msg",
                json!({"type": "user_message", "message": "continue"}),
            ),
            codex(
                "2026-12-02T10:00:01Z",
                "event_msg",
                json!({"type": "agent_message", "message": "First answer."}),
            ),
            codex(
                "2026-12-02T10:00:01Z",
                "response_item",
                reply_item("First answer."),
            ),
            codex(
                "2026-12-02T10:00:02Z",
                "event_msg",
                json!({"type": "task_complete", "last_agent_message": "First answer."}),
            ),
            // The same words again, in a new turn: a new prompt.
            codex(
                "2026-12-02T10:05:00Z",
                "event_msg",
                json!({"type": "task_started"}),
            ),
            codex(
                "2026-12-02T10:05:00Z",
                "event_msg",
                json!({"type": "item_completed",
                "item": {"type": "UserMessage", "content": [{"type": "text", "text": "continue"}]}}),
            ),
            codex(
                "2026-12-02T10:05:00Z",
                "response_item",
                user_item("continue"),
            ),
            codex(
                "2026-12-02T10:05:03Z",
                "event_msg",
                json!({"type": "turn_aborted", "reason": "interrupted"}),
            ),
        ];
        let b = jsonl(&lines);
        let c = codex_markdown(&b);
        let md = &c.markdown;
        assert_eq!(md.matches("\ncontinue\n").count(), 2, "{md}");
        assert_eq!(md.matches("First answer.").count(), 1, "{md}");
        assert!(md.ends_with("*Turn aborted (interrupted)*\n"), "{md}");
        assert!(!md.contains("environment_context"), "{md}");
        assert_eq!((c.turns, c.tool_calls), (2, 0));
        assert_eq!(c.last_user.as_deref(), Some("continue"));
        check_invariants(&c, &parse_codex(&b).last_assistant);
    }

    #[test]
    fn codex_tool_calls_are_one_liners() {
        let call = |name: &str, args: &str| json!({"type": "function_call", "name": name, "arguments": args, "call_id": "c"});
        let lines = [
            codex(
                "2026-12-02T10:00:00Z",
                "response_item",
                call(
                    "shell",
                    r#"{"command":["bash","-lc","cargo test --all\nsecond"],"workdir":"/w"}"#,
                ),
            ),
            codex(
                "2026-12-02T10:00:01Z",
                "response_item",
                json!({"type": "custom_tool_call",
                "name": "apply_patch", "call_id": "p",
                "input": "*** Begin Patch\n*** Update File: src/a.rs\n@@\n-PATCH-BODY\n*** Add File: b.rs\n*** End Patch"}),
            ),
            codex(
                "2026-12-02T10:00:02Z",
                "response_item",
                call("exec_command", "not json"),
            ),
            codex(
                "2026-12-02T10:00:03Z",
                "response_item",
                json!({"type": "custom_tool_call_output",
                "call_id": "p", "output": "CUSTOM-OUTPUT"}),
            ),
            codex(
                "2026-12-02T10:00:04Z",
                "response_item",
                json!({"type": "reasoning",
                "summary": [{"type": "summary_text", "text": "REASONING"}]}),
            ),
            codex(
                "2026-12-02T10:00:05Z",
                "response_item",
                call("update_plan", r#"{"plan":[]}"#),
            ),
        ];
        let c = codex_markdown(&jsonl(&lines));
        assert_eq!(
            c.markdown,
            "### Assistant · 2026-12-02 10:00 UTC\n\n\
             - 🔧 shell: `cargo test --all`\n\
             - 🔧 apply_patch: `src/a.rs, b.rs`\n\
             - 🔧 exec_command: `not json`\n\
             - 🔧 update_plan\n"
        );
        assert_eq!((c.turns, c.tool_calls), (0, 4));
    }

    // ---- Tool lines -----------------------------------------------------------------------

    #[test]
    fn claude_tool_lines() {
        let long = "x".repeat(200);
        let tool = |name: &str, input: Value| {
            let b = claude(
                "assistant",
                json!([{"type": "tool_use", "id": "t", "name": name, "input": input}]),
                "2026-12-02T10:00:00Z",
                json!({}),
            );
            let md = claude_markdown(b.as_bytes()).markdown;
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

    // ---- Structure ------------------------------------------------------------------------

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
        let c = claude_markdown(&b);
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
        check_invariants(&c, &parse_claude(&b).last_assistant);
    }

    #[test]
    fn bodies_that_cannot_be_proven_closed_are_fenced() {
        for text in [
            "- item\n  ```\n  code\n```\n### x", // fence in a list item
            "<div>\n```\nfoo\n\nbar\n```",       // fence hidden in raw HTML
            "<!-- never closed\n### x",          // HTML comment
            "    ```\n    indented",             // indented code
            "a\r```\r### x",                     // lone CRs
            "> ```\n> quoted",                   // fence in a quote
            "``````\nsix\n`````",                // closed by a shorter run: open
        ] {
            let out = body(text);
            assert!(
                out.starts_with("```") && out.ends_with("```"),
                "{text:?} -> {out:?}"
            );
            let fence = out.lines().next().unwrap_or_default();
            assert!(fence.len() > longest_run(text, '`'), "{out:?}");
            assert!(out.contains(&text.replace('\r', "\n")), "verbatim: {out:?}");
        }
        assert_eq!(body("plain *text*\n\n- a list"), "plain *text*\n\n- a list");
        assert_eq!(
            body("# H1\n###### H6\n#hashtag"),
            "#### H1\n###### H6\n#hashtag"
        );
    }

    #[test]
    fn timestamps_render_in_utc_minutes() {
        let c = claude_markdown(
            claude(
                "user",
                json!("hi"),
                "2026-12-02T23:59:59.999+05:00",
                json!({"origin": {"kind": "human"}}),
            )
            .as_bytes(),
        );
        assert_eq!(c.markdown, "### User · 2026-12-02 18:59 UTC\n\nhi\n");
        let c = claude_markdown(br#"{"type":"user","message":{"content":"no time"}}"#);
        assert_eq!(c.markdown, "### User\n\nno time\n");
    }

    #[test]
    fn normalize_flattens_markdown() {
        assert_eq!(
            normalize("  ## **Hello**\r\n\n> `World`  |  ~~_x_~~ ΣΑΣ  "),
            "hello world x σασ"
        );
        assert_eq!(normalize(" \n*`#`*\t"), "");
    }

    #[test]
    fn empty_and_garbage_input_render_nothing() {
        for b in [
            &b""[..],
            b"\n\n",
            b"not json\n\xff\xfe\n[1]\n{\"type\":\"user\"}",
            b"{\"type\":",
        ] {
            assert_eq!(claude_markdown(b), Conversation::default());
            assert_eq!(codex_markdown(b), Conversation::default());
        }
    }

    // ---- Properties -----------------------------------------------------------------------

    /// Text built from the pieces that make Markdown structure.
    fn nasty_text() -> impl Strategy<Value = String> {
        let pieces = vec![
            "```",
            "~~~",
            "````",
            "`",
            "#",
            "## ",
            "### User · x",
            "\n",
            "\n",
            "\r",
            " ",
            "   ",
            "\t",
            "-",
            "---",
            "===",
            "<!--",
            "-->",
            "<div>",
            "> ",
            "- ",
            "1. ",
            "text",
            "Σ",
            "\\",
            "*",
            "No response requested.",
            "[Request interrupted by user]",
        ];
        prop::collection::vec(prop::sample::select(pieces), 0..40).prop_map(|v| v.concat())
    }

    /// Lines of both fixtures, plus records around nasty text, whole or cut anywhere.
    fn jsonl_soup() -> impl Strategy<Value = Vec<u8>> {
        let real: Vec<String> = CLAUDE_SAMPLES
            .lines()
            .chain(CODEX_SAMPLES.lines())
            .map(str::to_string)
            .collect();
        let made = (nasty_text(), 0..8usize).prop_map(|(t, k)| {
            let at = "2026-12-02T10:00:00Z";
            match k {
                0 => claude("user", json!(t), at, json!({"origin": {"kind": "human"}})),
                1 => claude(
                    "assistant",
                    json!([{"type": "text", "text": t}]),
                    at,
                    json!({}),
                ),
                2 => claude(
                    "assistant",
                    json!([{"type": "text", "text": t},
                    {"type": "tool_use", "name": t, "input": {"command": t}}]),
                    at,
                    json!({}),
                ),
                3 => codex(
                    at,
                    "response_item",
                    json!({"type": "message", "role": "user",
                    "content": [{"type": "input_text", "text": t}]}),
                ),
                4 => codex(
                    at,
                    "response_item",
                    json!({"type": "message", "role": "assistant",
                    "content": [{"type": "output_text", "text": t}]}),
                ),
                5 => codex(
                    at,
                    "event_msg",
                    json!({"type": "task_complete", "last_agent_message": t}),
                ),
                6 => codex(
                    at,
                    "response_item",
                    json!({"type": "function_call", "name": t,
                    "arguments": json!({"cmd": t}).to_string()}),
                ),
                _ => codex(
                    at,
                    "event_msg",
                    json!({"type": "agent_message", "message": t}),
                ),
            }
        });
        let line = (
            prop_oneof![prop::sample::select(real), made],
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
        fn arbitrary_bytes_never_panic(b in prop::collection::vec(any::<u8>(), 0..4096)) {
            check_invariants(&claude_markdown(&b), &parse_claude(&b).last_assistant);
            check_invariants(&codex_markdown(&b), &parse_codex(&b).last_assistant);
        }

        #[test]
        fn spliced_records_keep_the_invariants(b in jsonl_soup()) {
            check_invariants(&claude_markdown(&b), &parse_claude(&b).last_assistant);
            check_invariants(&codex_markdown(&b), &parse_codex(&b).last_assistant);
        }

        #[test]
        fn any_body_keeps_its_text_and_its_place(t in nasty_text()) {
            let out = body(&t);
            prop_assert!(normalize(&out).contains(&normalize(&t)));
            prop_assert!(top_headings(&out).is_empty(), "{:?} -> {:?}", t, out);
        }
    }
}
