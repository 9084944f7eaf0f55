//! aider's chat history file (`.aider.chat.history.md`, or `--chat-history-file`): Markdown that
//! aider appends to as the session goes (measured on 0.86.2, `io.py` `append_chat_history`):
//!
//! * every start writes `# aider chat started at YYYY-MM-DD HH:MM:SS` (local time, no zone), then
//!   its command line (`" ".join(sys.argv)`, API keys scrubbed to `...last4`) and its
//!   announcements as `> …  ` lines (blockquote, two trailing spaces);
//! * a prompt is `#### <text>  ` (a multi-line prompt: one `#### ` line per line), written when it
//!   is sent; a slash command is written the same way (`#### /add foo.py  `);
//! * the model's reply is written as it is, once it is complete;
//! * tool output (`> Tokens: …`, `> Added foo.py to the chat`, a question and its answer) is a
//!   `> ` line.
//!
//! The file is shared by every aider of a repo unless each is started with its own
//! `--chat-history-file`; the module doc of `agents/aider` says how park tells which start is a
//! process's own ([`starts`]).
//!
//! Contract: pure over bytes, never panics; invalid UTF-8 is read lossily. A turn is open when the
//! last prompt (not a slash command) has no reply text after it.

use crate::agents::render::{self, Item, Log, Message, RawEnd};
use crate::agents::transcript::TranscriptInfo;
use std::path::Path;

const STARTED: &str = "# aider chat started at ";
const PROMPT: &str = "#### ";

/// One piece of the file, in file order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// `# aider chat started at <ts>`, and the command line logged under it (when there is one).
    Start { at: String, argv: Option<String> },
    /// A prompt, its lines joined (a slash command too).
    Prompt(String),
    /// Reply text (model output), as written.
    Reply(String),
    /// A `> ` tool-output line, without the quote and the trailing spaces.
    Tool(String),
}

/// Reads the file into pieces.
pub fn pieces(bytes: &[u8]) -> Vec<Piece> {
    let text = String::from_utf8_lossy(bytes);
    let mut out: Vec<Piece> = vec![];
    let mut reply: Vec<&str> = vec![];
    let mut want_argv = false;
    // The line before was a prompt line: a `#### ` line right under it continues that prompt.
    let mut in_prompt = false;
    let flush = |reply: &mut Vec<&str>, out: &mut Vec<Piece>| {
        let t = reply.join("\n");
        let t = t.trim();
        if !t.is_empty() {
            out.push(Piece::Reply(t.to_string()));
        }
        reply.clear();
    };
    for line in text.lines() {
        let was_prompt = std::mem::replace(&mut in_prompt, false);
        if let Some(at) = line.strip_prefix(STARTED) {
            flush(&mut reply, &mut out);
            out.push(Piece::Start {
                at: at.trim().to_string(),
                argv: None,
            });
            want_argv = true;
            continue;
        }
        if let Some(p) = line.strip_prefix(PROMPT) {
            flush(&mut reply, &mut out);
            want_argv = false;
            let p = p.strip_suffix("  ").unwrap_or(p);
            // A multi-line prompt is one `#### ` line per line.
            in_prompt = true;
            match out.last_mut() {
                Some(Piece::Prompt(prev)) if was_prompt => {
                    prev.push('\n');
                    prev.push_str(p);
                }
                _ => out.push(Piece::Prompt(p.to_string())),
            }
            continue;
        }
        if let Some(t) = line.strip_prefix("> ").or((line == ">").then_some("")) {
            // A quote inside a reply stays in the reply unless it carries aider's two trailing
            // spaces (`tool_output` writes every line so).
            if reply.is_empty() || line.ends_with("  ") {
                flush(&mut reply, &mut out);
                let t = t.strip_suffix("  ").unwrap_or(t).to_string();
                if want_argv {
                    want_argv = false;
                    if let Some(Piece::Start { argv, .. }) = out.last_mut() {
                        *argv = Some(t);
                        continue;
                    }
                }
                out.push(Piece::Tool(t));
                continue;
            }
        }
        if line.trim().is_empty() && reply.is_empty() {
            continue;
        }
        want_argv = false;
        reply.push(line);
    }
    flush(&mut reply, &mut out);
    out
}

/// Every start in the file: (index in `pieces`, started-at text, command line).
pub fn starts(pieces: &[Piece]) -> Vec<(usize, &str, Option<&str>)> {
    pieces
        .iter()
        .enumerate()
        .filter_map(|(i, p)| match p {
            Piece::Start { at, argv } => Some((i, at.as_str(), argv.as_deref())),
            _ => None,
        })
        .collect()
}

fn is_command(p: &str) -> bool {
    p.starts_with('/') || p.starts_with('!')
}

pub fn parse(bytes: &[u8]) -> TranscriptInfo {
    let ps = pieces(bytes);
    let mut info = TranscriptInfo::default();
    let mut open = false;
    for p in &ps {
        match p {
            Piece::Prompt(t) if !is_command(t) => {
                info.records += 1;
                if info.first_prompt.is_none() {
                    info.first_prompt = Some(t.clone());
                }
                info.last_prompt = Some(t.clone());
                open = true;
            }
            Piece::Reply(t) => {
                info.records += 1;
                info.last_assistant = Some(t.clone());
                open = false;
            }
            Piece::Start { .. } => {
                info.records += 1;
                // A new start ends whatever the one before left open.
                open = false;
            }
            _ => {}
        }
    }
    info.turn_open = open;
    info
}

/// [`parse`], plus the file's write time as the latest turn's (the file has no per-turn time).
pub fn read_file(path: &Path) -> std::io::Result<TranscriptInfo> {
    let bytes = std::fs::read(path)?;
    let mut info = parse(&bytes);
    if info.last_prompt.is_some() || info.last_assistant.is_some() {
        info.last_real_turn = std::fs::metadata(path)
            .ok()
            .and_then(|m| m.modified().ok())
            .and_then(|t| jiff::Timestamp::try_from(t).ok());
    }
    Ok(info)
}

/// The conversation as park's archive shows it: prompts and replies, slash commands as notes,
/// each start as a note; tool output left out.
pub fn markdown(bytes: &[u8]) -> render::Conversation {
    let mut log = Log::default();
    for p in pieces(bytes) {
        match p {
            Piece::Start { at, .. } => {
                if let Some(n) = render::note(&format!("aider started at {at}")) {
                    log.push(None, n);
                }
            }
            Piece::Prompt(t) if is_command(&t) => {
                log.push(
                    None,
                    Item::Note(format!("command {}", render::code_span(&t))),
                );
            }
            Piece::Prompt(t) => {
                log.last_user = Some(t.clone());
                log.push(None, Item::User(t));
            }
            Piece::Reply(t) => {
                log.last_assistant = Some(t.clone());
                log.push(None, Item::Text(t));
            }
            Piece::Tool(_) => {}
        }
    }
    log.finish()
}

/// aider's history is no JSONL: no record is a message on its own.
pub fn message_of(_v: &serde_json::Value) -> Option<Message> {
    None
}

/// The latest prompt and reply, read from the pieces (the file has no records to skip: every
/// line is in some piece).
pub fn raw_end(bytes: &[u8]) -> RawEnd {
    let ps = pieces(bytes);
    let mut out = RawEnd::default();
    for p in ps.iter().rev() {
        match p {
            Piece::Prompt(t) if !is_command(t) && out.last_user.is_none() => {
                out.last_user = Some(t.clone())
            }
            Piece::Reply(t) if out.last_reply.is_none() => out.last_reply = Some(t.clone()),
            _ => {}
        }
        if out.last_user.is_some() && out.last_reply.is_some() {
            break;
        }
    }
    out
}

/// The files in the chat at the end of `pieces` (a start's own pieces, in order): (path as aider
/// wrote it, read-only). Starts from none and follows aider's own lines: `Added X to the chat.`
/// (command line), `Added X to the chat (read-only).`, `Added X to the chat` (`/add`), `Added X to
/// read-only files.` (`/read-only`), `Moved X from editable to read-only files in the chat`,
/// `Removed X from the chat`, `Removed read-only file X from the chat`, `Dropping all files from
/// the chat session.`, `All files dropped and chat history cleared.` (`/reset`).
pub fn files_in_chat(pieces: &[Piece]) -> Vec<(String, bool)> {
    let mut files: Vec<(String, bool)> = vec![];
    let put = |files: &mut Vec<(String, bool)>, f: &str, ro: bool| {
        files.retain(|(g, _)| g != f);
        files.push((f.to_string(), ro));
    };
    for p in pieces {
        let Piece::Tool(t) = p else { continue };
        let t = t.as_str();
        if t == "Dropping all files from the chat session."
            || t == "All files dropped and chat history cleared."
        {
            files.clear();
        } else if let Some(f) = t
            .strip_prefix("Added ")
            .and_then(|r| r.strip_suffix(" to the chat (read-only)."))
        {
            put(&mut files, f, true);
        } else if let Some(f) = t
            .strip_prefix("Added ")
            .and_then(|r| r.strip_suffix(" to read-only files."))
        {
            put(&mut files, f, true);
        } else if let Some(f) = t.strip_prefix("Added ").and_then(|r| {
            r.strip_suffix(" to the chat.")
                .or_else(|| r.strip_suffix(" to the chat"))
        }) {
            // `Added 3 lines of output to the chat.` adds no file.
            if !f.ends_with(" of output") {
                put(&mut files, f, false);
            }
        } else if let Some(f) = t
            .strip_prefix("Moved ")
            .and_then(|r| r.strip_suffix(" from editable to read-only files in the chat"))
        {
            put(&mut files, f, true);
        } else if let Some(f) = t
            .strip_prefix("Removed read-only file ")
            .and_then(|r| r.strip_suffix(" from the chat"))
        {
            files.retain(|(g, _)| g != f);
        } else if let Some(f) = t
            .strip_prefix("Removed ")
            .and_then(|r| r.strip_suffix(" from the chat"))
        {
            files.retain(|(g, _)| g != f);
        }
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    const HISTORY: &str = include_str!("../../../tests/fixtures/aider/0.86.2-history.md");

    #[test]
    fn the_real_history_reads_as_starts_prompts_and_replies() {
        let ps = pieces(HISTORY.as_bytes());
        let st = starts(&ps);
        assert_eq!(st.len(), 3, "{ps:#?}");
        assert_eq!(st[0].1, "2026-12-06 19:34:54");
        assert_eq!(
            st[0].2,
            Some("/root/.cache/park/agents/aider/bin/aider --model openai/mock-model")
        );
        let info = parse(HISTORY.as_bytes());
        assert_eq!(info.first_prompt.as_deref(), Some("hello there"));
        assert_eq!(
            info.last_prompt.as_deref(),
            Some("touch it [asktool touch made-by-aider]")
        );
        assert!(info
            .last_assistant
            .as_deref()
            .unwrap()
            .contains("canned reply #5"));
        assert!(!info.turn_open);
        // A prompt sent, no reply yet: open.
        let mut b = HISTORY.to_string();
        b.push_str("\n#### one more  \n");
        assert!(parse(b.as_bytes()).turn_open);
        // A slash command opens no turn.
        let mut b = HISTORY.to_string();
        b.push_str("\n#### /tokens  \n> Approximate context window usage  \n");
        assert!(!parse(b.as_bytes()).turn_open);
    }

    #[test]
    fn files_follow_adds_drops_and_read_only() {
        let ps = pieces(include_bytes!(
            "../../../tests/fixtures/aider/0.86.2-files.md"
        ));
        let st = starts(&ps);
        let mine = &ps[st.last().unwrap().0..];
        assert_eq!(
            files_in_chat(mine),
            vec![
                ("bar.py".to_string(), true),
                ("/tmp/al/repo/foo.py".to_string(), true)
            ]
        );
        let extra = [
            Piece::Tool("Added baz.py to the chat".into()),
            Piece::Tool("Added 3 lines of output to the chat.".into()),
        ];
        let mut all = mine.to_vec();
        all.extend(extra.iter().cloned());
        assert_eq!(files_in_chat(&all).len(), 3);
        all.push(Piece::Tool(
            "Dropping all files from the chat session.".into(),
        ));
        assert!(files_in_chat(&all).is_empty());
    }

    #[test]
    fn markdown_and_raw_end_agree_on_the_last_turn() {
        let c = markdown(HISTORY.as_bytes());
        assert_eq!(c.turns, 6, "{}", c.markdown);
        assert!(c.markdown.contains("### User"));
        assert!(c.markdown.contains("hello there"));
        assert!(c.markdown.contains("`/add foo.py`"));
        let end = raw_end(HISTORY.as_bytes());
        assert_eq!(end.last_user, c.last_user);
        assert_eq!(end.last_reply, c.last_assistant);
        assert_eq!(c.last_assistant, parse(HISTORY.as_bytes()).last_assistant);
        assert!(end.unreadable.is_empty());
    }

    #[test]
    fn garbage_never_panics() {
        for b in [
            &b""[..],
            b"\xff\xfe#### ",
            b"# aider chat started at \n> ",
            b"> x  \n",
        ] {
            let _ = parse(b);
            let _ = markdown(b);
            let _ = raw_end(b);
        }
    }
}
