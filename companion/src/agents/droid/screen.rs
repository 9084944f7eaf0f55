//! Factory Droid's screen (a `capture-pane -p -e` capture; plain text is read too, best effort):
//! busy, waiting on a dialog, a draft in the composer.
//!
//! The cues come from real 0.225.2 captures (`tests/fixtures/droid/*.txt`):
//! * The composer is a rounded box: a `╭──…──╮` line, then `│ > <text> … │` (continuation lines
//!   `│   <text> │`), then `╰──…──╯`; the autonomy line (`Auto (Off) · …`) sits above it and the
//!   footer (`? for help`) below. Messages in the scrollback are not boxed.
//! * The empty composer shows a placeholder: one of twelve example tasks (`Try "…"`, `Type
//!   "…"`) on a fresh session, `Enter to steer · Ctrl+Enter to queue` during a turn. It is drawn DIM with the cursor
//!   (reverse video, not dim) on its first character; typed text is normal intensity with the
//!   cursor after it. So with escapes the non-dim text is the draft, except a lone first
//!   character followed by dim text (the cursor on a placeholder). Without escapes only those
//!   exact wordings read as empty; anything else is a draft.
//! * A turn in flight shows `⣄ Thinking...  (Press ESC to stop)` above the autonomy line.
//! * A permission request replaces the composer with a box of choices (`Yes, allow`, `No,
//!   cancel`) under `Command to approve`, with `↑↓ navigate   Enter select   Esc cancel` below;
//!   the folder-trust dialog is a numbered chooser (`> 1. Trust this folder`).
//! * Its notices (`●  Tip: …` under the logo, `●  ✓ New session created`) are scrollback lines
//!   above the composer box, never in it.
//!
//! Errs in the safe direction as every classifier does: no composer and no known dialog means
//! "cannot tell" (`composer_seen == false`), which makes park refuse.

use crate::agents::screen::{
    has_chooser, is_blank, last_nonempty, styled_lines, ScreenReading, BOTTOM_LINES,
};

/// The placeholders the empty composer shows in 0.225.2 (English; `chatInput` and the example
/// prompts of its bundle), whitespace-normalised. Only consulted for a plain capture; with
/// escapes the DIM style is the authority.
const PLACEHOLDERS: &[&str] = &[
    "Enter to steer · Ctrl+Enter to queue",
    "Executing command...",
    r#"Try "Write unit tests for this file""#,
    r#"Try "Search the documentation for this library""#,
    r#"Try "Optimize the performance of this component""#,
    r#"Try "Debug why users can't login""#,
    r#"Try "Implement a REST endpoint for user data""#,
    r#"Try "Add proper error handling to API calls""#,
    r#"Try "Set up GitHub Actions for CI/CD""#,
    r#"Try "Fix all lint warnings""#,
    r#"Try "Create a PR with these changes""#,
    r#"Try "Review the changes in my current branch""#,
    r#"Try "Explain how the codebase is organized""#,
    r#"Type "Review this code for security issues""#,
];

fn plain_placeholder(text: &str) -> bool {
    PLACEHOLDERS.contains(&text)
}

/// How many non-empty lines above the composer box the turn's status line may sit (the autonomy
/// line and a running tool's line sit between them).
const STATUS_REACH: usize = 4;

pub fn read(escaped: &str) -> ScreenReading {
    let has_escapes = escaped.contains('\x1b');
    let styled = styled_lines(escaped);
    let lines: Vec<&str> = styled.iter().map(|l| l.text.as_str()).collect();
    let mut reading = ScreenReading::default();

    let Some((top, first, bottom)) = composer(&lines) else {
        let tail = last_nonempty(&lines, BOTTOM_LINES);
        reading.waiting = dialog(&tail);
        reading.busy = tail.iter().any(|l| busy_line(l));
        return reading;
    };
    reading.composer_seen = true;

    // The text inside the box, line by line: after `│ > ` on the first, after `│   ` below.
    let mut typed = Vec::new();
    let mut dim_after_first = false;
    let mut plain = Vec::new();
    for (k, i) in (first..bottom).enumerate() {
        let line = &styled[i];
        let chars: Vec<char> = line.text.chars().collect();
        let skip = if k == 0 { 4 } else { 2 }; // `│ > ` / `│ `
        let end = chars
            .iter()
            .rposition(|c| *c == '│')
            .filter(|e| *e >= skip)
            .unwrap_or(chars.len());
        let inner: Vec<(char, bool)> = chars
            .iter()
            .copied()
            .zip(line.dim.iter().copied().chain(std::iter::repeat(false)))
            .take(end)
            .skip(skip)
            .collect();
        plain.push(
            inner
                .iter()
                .map(|(c, _)| *c)
                .collect::<String>()
                .trim()
                .to_string(),
        );
        let t: String = inner.iter().filter(|(_, d)| !d).map(|(c, _)| *c).collect();
        typed.push(t.trim_end().to_string());
        if k == 0 {
            // The cursor on a placeholder's first character: that character, then dim text.
            let lead = inner.iter().position(|(c, _)| !c.is_whitespace());
            dim_after_first = lead.is_some_and(|p| inner.get(p + 1).is_some_and(|(_, d)| *d));
        }
    }
    let draft = if has_escapes {
        let joined = typed.join("\n");
        let joined = joined.trim();
        let lone_first =
            joined.chars().count() == 1 && typed.iter().skip(1).all(|t| t.trim().is_empty());
        let placeholder = lone_first && dim_after_first;
        (!joined.is_empty() && !placeholder).then(|| joined.to_string())
    } else {
        let joined = plain.join(" ");
        let squashed = joined.split_whitespace().collect::<Vec<_>>().join(" ");
        let joined = plain.join("\n");
        let joined = joined.trim();
        (!joined.is_empty() && !plain_placeholder(&squashed)).then(|| joined.to_string())
    };
    reading.draft = draft;
    reading.busy = lines[..top]
        .iter()
        .rev()
        .filter(|l| !is_blank(l))
        .take(STATUS_REACH)
        .any(|l| busy_line(l));
    reading
}

fn busy_line(l: &str) -> bool {
    l.contains("(Press ESC to stop)")
}

/// The last composer box: its top line, its first text line and its bottom line.
fn composer(lines: &[&str]) -> Option<(usize, usize, usize)> {
    let first = (1..lines.len())
        .rev()
        .find(|&i| lines[i].starts_with("│ > ") || lines[i].trim_end() == "│ >")?;
    let top = first - 1;
    if !lines[top].starts_with('╭') {
        return None;
    }
    let bottom = (first + 1..lines.len()).find(|&j| !lines[j].starts_with('│'))?;
    lines[bottom]
        .starts_with('╰')
        .then_some((top, first, bottom))
}

/// A dialog in place of the composer.
fn dialog(lines: &[&str]) -> Option<String> {
    if lines.iter().any(|l| l.contains("Command to approve")) {
        return Some("Droid asks to run a command".into());
    }
    if lines.iter().any(|l| l.contains("Trust this folder")) {
        return Some("Droid asks whether to trust this folder".into());
    }
    if lines
        .iter()
        .any(|l| l.contains("Enter select") || l.contains("Enter to confirm"))
        || has_chooser(lines)
    {
        return Some("a Droid dialog is open".into());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fx(name: &str) -> String {
        let p = format!("{}/tests/fixtures/droid/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
    }

    fn idle() -> ScreenReading {
        ScreenReading {
            composer_seen: true,
            ..Default::default()
        }
    }

    #[test]
    fn idle_screens_hold_no_draft() {
        for f in ["idle-after-turn.txt", "fresh.txt", "fresh-e.txt"] {
            assert_eq!(read(&fx(f)), idle(), "{f}");
        }
    }

    #[test]
    fn a_typed_draft_is_a_draft() {
        for f in ["draft.txt", "draft-e.txt"] {
            let r = read(&fx(f));
            assert_eq!(r.draft.as_deref(), Some("a draft not sent"), "{f}");
            assert!(r.composer_seen && !r.busy && r.waiting.is_none(), "{f}");
        }
    }

    /// The placeholder's wording typed by hand is a draft: with escapes it is normal text; only a
    /// plain capture must take the stock wording for empty.
    #[test]
    fn the_placeholder_wording_typed_is_a_draft_with_escapes() {
        // Plain: only the stock wordings are empty.
        let plain =
            |t: &str| format!("╭──────────────╮\n│ > {t}   │\n╰──────────────╯\n? for help\n");
        assert_eq!(
            read(&plain(r#"Type "Review this code for security issues""#)).draft,
            None
        );
        assert_eq!(
            read(&plain(r#"Try "Debug it""#)).draft.as_deref(),
            Some(r#"Try "Debug it""#)
        );
        let r = read(&fx("typed-placeholder-e.txt"));
        assert_eq!(r.draft.as_deref(), Some(r#"Try "Debug it""#));
        // A lone typed character (the cursor after it, no dim text) is a draft.
        let one = "╭────────────╮\n│\x1b[39m \x1b[38;5;172m> \x1b[39mx\x1b[7m \x1b[0m   │\n╰────────────╯\n? for help\n";
        assert_eq!(read(one).draft.as_deref(), Some("x"));
    }

    #[test]
    fn a_turn_in_flight_is_busy() {
        let r = read(&fx("busy.txt"));
        assert!(r.busy);
        assert!(r.composer_seen);
        assert_eq!(r.draft, None, "the steer placeholder is no draft");
    }

    #[test]
    fn the_permission_request_is_waiting() {
        let r = read(&fx("permission.txt"));
        assert!(!r.composer_seen);
        assert_eq!(r.waiting.as_deref(), Some("Droid asks to run a command"));
    }

    #[test]
    fn the_trust_dialog_is_waiting() {
        let r = read(&fx("trust.txt"));
        assert!(!r.composer_seen);
        assert!(r.waiting.is_some());
    }

    #[test]
    fn a_multiline_draft_is_read_whole() {
        let s =
            "╭──────────────╮\n│ > one        │\n│   two        │\n╰──────────────╯\n? for help\n";
        assert_eq!(read(s).draft.as_deref(), Some("one\ntwo"));
    }

    #[test]
    fn empty_screens_are_unknown() {
        assert_eq!(read(""), ScreenReading::default());
        assert_eq!(read("bash-5.2# "), ScreenReading::default());
    }
}
