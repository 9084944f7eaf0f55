//! Transcript kit (pure over bytes, plus one cheap file reader) every agent's transcript reader
//! (`agents/<name>/transcript.rs`) uses, and the session-id gate.
//!
//! Contract:
//! * The readers take JSONL bytes and never panic. Lines are read as real writers leave them
//!   ([`parse_line`]): a clean line goes straight to serde; one serde rejects is repaired where the
//!   bytes allow it and counted in `repaired_lines` (invalid UTF-8 → U+FFFD, a lone UTF-16
//!   surrogate escape such as `\ud83d` → `\ufffd`, and a killed writer's half record with the
//!   resumed writer's next record glued to it → that record). A line still not a JSON object
//!   (garbage, a comment) is counted in `bad_lines` and skipped; empty lines are neither records
//!   nor bad. The last line without a newline that does not parse is a record being written (or
//!   cut by a kill): `truncated_last_line`, also counted bad.
//! * A skipped line never hides the latest turn silently: when the last complete line cannot be
//!   read even leniently, `unsure` says so, and callers treat the session's state as unknown.
//! * Session ids in the result have passed [`valid_session_id`] (lowercased); a record carrying a
//!   malformed id is ignored for that field, so an id from here is safe near paths and commands.
//! * [`read_file_capped`] reads the first 64 KiB and a tail window (whole file when small), cut
//!   both at line boundaries so no line is parsed twice or counted bad because of the cut. The
//!   window starts at 256 KiB and doubles until it holds the last complete record and a real turn,
//!   so a final reply or tool result of many megabytes is read whole and the idle time and turn
//!   state come from it. Past [`TAIL_CAP`] (64 MiB) it stops and sets `unsure`: park cannot tell
//!   the state, and refuses rather than guessing (never "a turn in flight" forever, never "idle").
//! * Field semantics:
//!   - `last_real_turn` is the latest timestamp of a real user prompt or a model reply; tool
//!     results, meta/harness records and synthetic replies don't count.
//!   - `turn_open`: a turn is in flight; each agent's reader documents what opens and closes one.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

use jiff::Timestamp;
use serde_json::Value;

/// What the readable part of one transcript says.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TranscriptInfo {
    /// The session the records name (each agent's reader says which field).
    pub session_id: Option<String>,
    /// Authoritative cwd from the records.
    pub cwd: Option<String>,
    /// Timestamp of the last real user or assistant message.
    pub last_real_turn: Option<Timestamp>,
    /// A turn is in flight (see the module doc).
    pub turn_open: bool,
    /// The agent's own title for the conversation (last one wins).
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

pub(crate) fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

pub(crate) fn timestamp_of(v: &Value) -> Option<Timestamp> {
    str_of(v, "timestamp").and_then(|s| s.parse::<Timestamp>().ok())
}

/// Keeps the later of two timestamps: records are appended in order, but attachments and
/// snapshots carry slightly earlier stamps, and a max is immune to that.
pub(crate) fn bump(slot: &mut Option<Timestamp>, ts: Option<Timestamp>) {
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
// Files
// ---------------------------------------------------------------------------------------------

pub(crate) const HEAD_BYTES: u64 = 64 * 1024;
pub(crate) const TAIL_BYTES: u64 = 256 * 1024;
/// A first line longer than the head (a session header with huge instructions) is still
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

// ---------------------------------------------------------------------------------------------
// Ids
// ---------------------------------------------------------------------------------------------

/// Every session file `<root>/<project>/<sub>/<id>.jsonl` (`sub` empty: directly in the
/// project folder) whose stem is a valid session id as it stands, sorted by path. No symlinks are
/// followed: a linked project folder or file is not the agent's own.
pub fn sessions_by_project(root: &Path, sub: &str) -> Vec<(String, std::path::PathBuf)> {
    let mut out = vec![];
    let Ok(projects) = std::fs::read_dir(root) else {
        return out;
    };
    for p in projects.flatten() {
        if !p.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let Ok(files) = std::fs::read_dir(p.path().join(sub)) else {
            continue;
        };
        for f in files.flatten() {
            let name = f.file_name().to_string_lossy().into_owned();
            let Some(stem) = name.strip_suffix(".jsonl") else {
                continue;
            };
            let Some(sid) = valid_session_id(stem).filter(|s| s == stem) else {
                continue;
            };
            if f.file_type().is_ok_and(|t| t.is_file()) {
                out.push((sid, f.path()));
            }
        }
    }
    out.sort_by(|a, b| a.1.cmp(&b.1));
    out
}

/// A canonical UUID (8-4-4-4-12 ASCII hex digits, any case), returned lowercased; `session_` and
/// such a UUID (Kimi Code's ids), the UUID lowercased; a prefixed id `ses_` + 20 to 40 ASCII
/// letters or digits, returned as it is (its case matters); or a timestamped id (Cline's
/// `1796585412660_mt1oj`: 10 to 16 ASCII digits, `_`, 1 to 16 lowercase ASCII letters or digits);
/// anything else (path pieces, shell metacharacters, whitespace, other lengths, non-ASCII digits)
/// is `None`.
pub fn valid_session_id(s: &str) -> Option<String> {
    if let Some(rest) = s.strip_prefix("session_") {
        return valid_session_id(rest)
            .filter(|u| u.len() == 36)
            .map(|u| format!("session_{u}"));
    }
    if let Some(rest) = s.strip_prefix("ses_") {
        let ok = (20..=40).contains(&rest.len()) && rest.bytes().all(|b| b.is_ascii_alphanumeric());
        return ok.then(|| s.to_string());
    }
    if let Some((ms, tag)) = s.split_once('_') {
        let ok = (10..=16).contains(&ms.len())
            && ms.bytes().all(|b| b.is_ascii_digit())
            && (1..=16).contains(&tag.len())
            && tag
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
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

/// What the agents' transcript-reader tests share.
#[cfg(test)]
pub(crate) mod test_kit {
    use jiff::Timestamp;
    use proptest::prelude::*;

    pub(crate) fn ts(s: &str) -> Option<Timestamp> {
        Some(s.parse().unwrap())
    }

    /// The sample file's lines of one record type (the samples interleave `# kind` comments).
    pub(crate) fn sample_lines<'a>(samples: &'a str, kinds: &[&str]) -> Vec<&'a str> {
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

    pub(crate) fn lines(v: &[String]) -> Vec<u8> {
        let mut s = v.join("\n");
        s.push('\n');
        s.into_bytes()
    }

    pub(crate) fn join(lines: &[Vec<u8>]) -> Vec<u8> {
        let mut out = Vec::new();
        for l in lines {
            out.extend_from_slice(l);
            out.push(b'\n');
        }
        out
    }

    pub(crate) fn b(s: String) -> Vec<u8> {
        s.into_bytes()
    }

    /// Lines of `samples`, whole or cut anywhere, up to 30 of them.
    pub(crate) fn jsonl_soup(samples: &[&str]) -> impl Strategy<Value = Vec<u8>> {
        let all: Vec<String> = samples
            .iter()
            .flat_map(|s| s.lines())
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
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only `<project>/<sub>/<id>.jsonl` files with a valid id, never through a symlink.
    #[test]
    fn sessions_by_project_takes_real_session_files_only() {
        let d = tempfile::tempdir().unwrap();
        let id = "0b6c3a4e-7d2f-4c1a-9e8b-5f6a7b8c9d0e";
        let chats = d.path().join("proj-a/chats");
        std::fs::create_dir_all(&chats).unwrap();
        std::fs::write(chats.join(format!("{id}.jsonl")), "{}").unwrap();
        std::fs::write(chats.join("notes.jsonl"), "{}").unwrap();
        std::fs::write(chats.join("../top.jsonl"), "{}").unwrap();
        std::fs::create_dir(chats.join("a0b1c2d3-e4f5-4a6b-8c7d-9e0f1a2b3c4d.jsonl")).unwrap();
        let other = "1c7d4b5f-8e3a-4d2b-af9c-6a7b8c9d0e1f";
        std::os::unix::fs::symlink(
            chats.join(format!("{id}.jsonl")),
            chats.join(format!("{other}.jsonl")),
        )
        .unwrap();
        std::os::unix::fs::symlink(d.path().join("proj-a"), d.path().join("proj-link")).unwrap();
        let got = sessions_by_project(d.path(), "chats");
        assert_eq!(
            got,
            vec![(id.to_string(), chats.join(format!("{id}.jsonl")))]
        );
        assert!(
            sessions_by_project(d.path(), "").is_empty(),
            "{:?}",
            sessions_by_project(d.path(), "")
        );
        assert!(sessions_by_project(&d.path().join("none"), "").is_empty());
    }
    use proptest::prelude::*;

    const SID: &str = "158f2a09-8e02-4cf8-bbf8-0710d4e8624e";
    const SID7: &str = "01a2370b-2255-7e01-9337-4598cb103ce5";

    #[test]
    fn fix_surrogates_leaves_pairs_and_escaped_backslashes() {
        assert_eq!(fix_surrogates(r#"{"a":"\ud83d\ude00 \\ud800 \n"}"#), None);
    }

    #[test]
    fn valid_session_ids() {
        assert_eq!(valid_session_id(SID).as_deref(), Some(SID));
        assert_eq!(
            valid_session_id("158F2A09-8E02-4CF8-BBF8-0710D4E8624E").as_deref(),
            Some(SID)
        );
        assert_eq!(valid_session_id(SID7).as_deref(), Some(SID7));
        assert!(valid_session_id("00000000-0000-4000-8000-000000000000").is_some());
        // Kimi Code's ids: `session_` and a UUID, the UUID lowercased.
        assert_eq!(
            valid_session_id("session_71828F23-5b64-4e12-a5ad-e8e418559405").as_deref(),
            Some("session_71828f23-5b64-4e12-a5ad-e8e418559405")
        );
        for bad in [
            "session_",
            "session_../x",
            "session_session_71828f23-5b64-4e12-a5ad-e8e418559405",
            "session_ses_0123456789abcdefghij",
            "session_71828f23-5b64-4e12-a5ad-e8e41855940",
            "Session_71828f23-5b64-4e12-a5ad-e8e418559405",
        ] {
            assert_eq!(valid_session_id(bad), None, "{bad}");
        }
        // Cline's timestamped ids, as they are.
        assert_eq!(
            valid_session_id("1796585412660_mt1oj").as_deref(),
            Some("1796585412660_mt1oj")
        );
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
            "1796585412660_",
            "_mt1oj",
            "179658541_mt1oj",     // 9 digits
            "1796585412660_MT1OJ", // upper case
            "1796585412660_mt1oj/..",
            "1796585412660_mt_1oj",
            "1796585412660_$(id)",
            "-1796585412660_mt1oj",
        ] {
            assert_eq!(valid_session_id(bad), None, "{bad:?}");
        }
    }

    proptest! {
        #[test]
        fn valid_session_id_output_is_strict(s in any::<String>()) {
            if let Some(id) = valid_session_id(&s) {
                let strict = regex::Regex::new(r"^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|ses_[0-9A-Za-z]{20,40}|[0-9]{10,16}_[0-9a-z]{1,16})$").unwrap();
                prop_assert!(strict.is_match(&id));
            }
        }

        #[test]
        fn valid_session_id_accepts_every_canonical_uuid(s in "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}") {
            prop_assert_eq!(valid_session_id(&s), Some(s.to_ascii_lowercase()));
        }
    }
}
