//! Session transcripts as a readable Markdown conversation (pure over bytes): the kit every
//! agent's renderer (`agents/<name>/render.rs`) builds with ([`Log`], [`Item`], [`tool_line`],
//! [`tool_arg`]), and the raw-end reader the archive checks a rendering against ([`raw_end`]).
//!
//! Contract:
//! * A renderer takes the same JSONL bytes as its agent's transcript reader, reads the lines the
//!   same way (garbage, a half-written last line, non-UTF-8: skipped) and never panics.
//! * The Markdown has no document header. A real user prompt (the transcript readers' notion: not
//!   meta, sidechain, harness, local-command output or a tool result) is
//!   `### User · YYYY-MM-DD HH:MM UTC` and its text; model text follows `### Assistant · …`, one
//!   heading per stretch of model output (a prompt, a note or the end of a turn starts a new one).
//!   Each tool call is one list line (`` - 🔧 Bash: `cargo test` ``); tool output, thinking,
//!   attachments, snapshots and token counts are left out. Interruptions, slash commands and
//!   compactions are one-line italic notes.
//! * Message text is kept as written, except what would escape its section: ATX headings outside
//!   code go down to levels 4–6, a setext underline gets a blank line above it, and a message whose
//!   fences or raw HTML could stay open (or that this module cannot be sure about) is wrapped whole
//!   in a backtick fence longer than any backtick run in it. So the only top-level headings of
//!   levels 1–3 are the turn headings, and no message can swallow the ones after it.
//! * Those changes only add `#`, backticks and whitespace, so [`normalize`] of a message is a
//!   substring of `normalize(markdown)`. `last_user` / `last_assistant` are the last prompt and
//!   reply in file order; `last_assistant` equals what the agent's transcript reader reports for
//!   the same bytes. The archive relies on both to check that it holds the latest turns.

use jiff::tz::Offset;
use jiff::Timestamp;
use serde_json::Value;

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
    /// Text of the last model reply in file order (as the agent's transcript reader reports it).
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

    /// Puts the events in timestamp order (stable: an event without a timestamp stays after the
    /// one before it), for an agent that writes records out of order.
    pub(crate) fn in_time_order(&mut self) {
        let mut at = None;
        for e in &mut self.events {
            at = e.ts.or(at);
            e.ts = at;
        }
        self.events.sort_by_key(|e| e.ts);
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
pub(crate) fn code_span(s: &str) -> String {
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
pub(crate) fn escape_inline(s: &str) -> String {
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
pub(crate) fn first_line(s: &str, max: usize) -> Option<String> {
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

pub(crate) fn note(s: &str) -> Option<Item> {
    first_line(s, 200).map(|l| Item::Note(escape_inline(&l)))
}

// ---------------------------------------------------------------------------------------------
// Tool calls
// ---------------------------------------------------------------------------------------------

pub(crate) const ARG_CHARS: usize = 160;

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
pub(crate) fn argv(words: &[Value]) -> Option<String> {
    let w: Vec<&str> = words.iter().filter_map(Value::as_str).collect();
    match w.as_slice() {
        [] => None,
        [_, flag, script, ..] if matches!(*flag, "-c" | "-lc") => Some(script.to_string()),
        ["apply_patch", patch, ..] => patch_files(patch).or_else(|| Some(patch.to_string())),
        _ => Some(w.join(" ")),
    }
}

/// The files an `apply_patch` body touches.
pub(crate) fn patch_files(patch: &str) -> Option<String> {
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

// ---------------------------------------------------------------------------------------------
// The raw end of a transcript, read back independently
// ---------------------------------------------------------------------------------------------

/// A prompt or a reply as the renderers show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    User(String),
    Reply(String),
}

/// The latest prompt and reply of a transcript read back from its raw bytes, and what could not
/// be read on the way.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RawEnd {
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

/// What the agents' renderer tests share.
#[cfg(test)]
pub(crate) mod test_kit {
    use super::{normalize, Conversation};
    use proptest::prelude::*;

    pub(crate) fn jsonl(lines: &[String]) -> Vec<u8> {
        let mut s = lines.join("\n");
        s.push('\n');
        s.into_bytes()
    }

    /// Position of `needle` in `hay`, failing the test when it is missing.
    pub(crate) fn at(hay: &str, needle: &str) -> usize {
        hay.find(needle)
            .unwrap_or_else(|| panic!("{needle:?} missing from:\n{hay}"))
    }

    /// Headings of levels 1–3 outside fenced code, by CommonMark's top-level line rules (a fence
    /// may be indented up to three spaces here, which is looser than the renderer's own scan).
    pub(crate) fn top_headings(md: &str) -> Vec<&str> {
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
    pub(crate) fn check_invariants(c: &Conversation, parsed_last_assistant: &Option<String>) {
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

    /// Text built from the pieces that make Markdown structure.
    pub(crate) fn nasty_text() -> impl Strategy<Value = String> {
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

    /// `real` lines and `made` records, whole or cut anywhere, up to 30 of them.
    pub(crate) fn jsonl_soup(
        real: Vec<String>,
        made: impl Strategy<Value = String>,
    ) -> impl Strategy<Value = Vec<u8>> {
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
}

#[cfg(test)]
mod tests {
    use super::test_kit::{nasty_text, top_headings};
    use super::*;
    use proptest::prelude::*;

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
    fn normalize_flattens_markdown() {
        assert_eq!(
            normalize("  ## **Hello**\r\n\n> `World`  |  ~~_x_~~ ΣΑΣ  "),
            "hello world x σασ"
        );
        assert_eq!(normalize(" \n*`#`*\t"), "");
    }

    proptest! {
        #[test]
        fn any_body_keeps_its_text_and_its_place(t in nasty_text()) {
            let out = body(&t);
            prop_assert!(normalize(&out).contains(&normalize(&t)));
            prop_assert!(top_headings(&out).is_empty(), "{:?} -> {:?}", t, out);
        }
    }
}
