//! Cline CLI's screen (a plain `capture-pane -p` capture): busy, a permission prompt, a draft in
//! the composer, and its own start-up promos, which are no draft.
//!
//! The cues come from real 3.0.65 captures (`tests/fixtures/cline/*.txt`):
//! * The composer is a line starting with `❯ ` right under a `─` rule, and closed by the next
//!   rule (`idle`, `draft`). On the start screen (`first-start`, `after-new`) the box is centred:
//!   the rule and the `❯` are indented alike. Prompts in the conversation are ` ❯ …` with no rule
//!   above them, so they never match.
//! * The empty composer shows a placeholder: `Ask anything...` in a session, `What can I do for
//!   you?` on the start screen (a fresh session or one after `/new`). Anything else is a draft,
//!   a `/` command being typed included (`slash-new-typed`).
//! * A turn in flight shows a spinner line `⠏ Thinking... (esc to cancel)` right above the
//!   composer (`busy`).
//! * With `--auto-approve false`, a tool call replaces the composer with `Cline needs
//!   permission` … `[y] Approve   [n] Deny` (`permission`).
//! * At start it may show a promo over the composer (ClinePass, then Cline Desktop: `Press Enter
//!   to open, any other key to close`; `promo-clinepass`, `promo-desktop`). The composer's line
//!   then reads `❯ Wh   Open ClinePass`: the promo's button over the placeholder, not a draft. The
//!   promo takes every key (any key closes it), so nothing can be typed behind it: the composer
//!   is taken as seen and empty.
//!
//! Errs in the safe direction: no composer and no known dialog means "cannot tell"
//! (`composer_seen == false`), which makes park refuse.

use std::sync::OnceLock;

use regex::Regex;

use crate::agents::screen::{is_blank, plain_lines, re, ScreenReading, RULE_CHAR};

/// The empty composer's placeholders (in a session; on the start screen).
const PLACEHOLDERS: &[&str] = &["Ask anything...", "What can I do for you?"];
/// The line every start-up promo ends with.
const PROMO: &str = "Press Enter to open, any other key to close";
/// How many non-empty lines above the composer the spinner line may sit.
const STATUS_REACH: usize = 3;

/// A rule, indented or not (the start screen centres its box).
fn is_rule_any(line: &str) -> bool {
    let t = line.trim();
    t.chars().count() >= 10 && t.chars().all(|c| c == RULE_CHAR)
}

/// The composer: (index of its `❯` line, the column of the `❯`).
fn composer(lines: &[String]) -> Option<(usize, usize)> {
    lines.iter().enumerate().rev().find_map(|(i, l)| {
        let col = l.find("❯ ")?;
        if !l[..col].trim().is_empty() || i == 0 || !is_rule_any(&lines[i - 1]) {
            return None;
        }
        // The rule above starts where the `❯` does.
        let above = &lines[i - 1];
        let rule_col = above.len() - above.trim_start().len();
        (rule_col == col).then_some((i, col))
    })
}

/// Whether the screen shows the start screen's empty composer (a session with nothing said in
/// it: a fresh start, or `/new`).
pub fn start_screen(plain: &str) -> bool {
    let lines = plain_lines(plain);
    composer(&lines)
        .is_some_and(|(i, col)| lines[i][col + "❯ ".len()..].trim() == "What can I do for you?")
}

pub fn read(plain: &str) -> ScreenReading {
    let lines = plain_lines(plain);
    let mut r = ScreenReading::default();
    if lines.iter().any(|l| l.contains("Cline needs permission"))
        && lines.iter().any(|l| l.contains("[y] Approve"))
    {
        r.waiting = Some("permission prompt".into());
        return r;
    }
    if lines.iter().any(|l| l.contains(PROMO)) {
        r.composer_seen = true;
        return r;
    }
    let Some((at, col)) = composer(&lines) else {
        return r;
    };
    r.composer_seen = true;
    let mut parts = vec![lines[at][col + "❯ ".len()..].trim_end().to_string()];
    for l in lines.iter().skip(at + 1) {
        if is_rule_any(l) {
            break;
        }
        let indent = col + 2;
        let body = if l.len() >= indent && l[..indent].trim().is_empty() {
            &l[indent..]
        } else {
            l.trim_start()
        };
        parts.push(body.trim_end().to_string());
    }
    let text = parts.join("\n");
    let text = text.trim();
    if !text.is_empty() && !PLACEHOLDERS.contains(&text) {
        r.draft = Some(text.to_string());
    }
    static STATUS: OnceLock<Regex> = OnceLock::new();
    let status = re(&STATUS, r"\(esc to cancel\)\s*$");
    r.busy = lines[..at.saturating_sub(1)]
        .iter()
        .rev()
        .filter(|l| !is_blank(l))
        .take(STATUS_REACH)
        .any(|l| status.is_match(l));
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fx(name: &str) -> String {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/cline")
            .join(name);
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    }

    #[test]
    fn idle_screens_have_an_empty_composer() {
        for f in [
            "idle.txt",
            "first-start.txt",
            "after-new.txt",
            "after-tool.txt",
        ] {
            let r = read(&fx(f));
            assert!(r.composer_seen, "{f}");
            assert_eq!(r.draft, None, "{f}");
            assert!(!r.busy, "{f}");
            assert_eq!(r.waiting, None, "{f}");
        }
    }

    #[test]
    fn a_draft_and_a_typed_command_are_drafts() {
        assert_eq!(
            read(&fx("draft.txt")).draft.as_deref(),
            Some("a draft not sent")
        );
        assert_eq!(
            read(&fx("slash-new-typed.txt")).draft.as_deref(),
            Some("/new")
        );
    }

    #[test]
    fn the_spinner_above_the_composer_is_busy() {
        let r = read(&fx("busy.txt"));
        assert!(r.busy && r.composer_seen);
        assert_eq!(r.draft, None);
        // The prompt echoed in the conversation (` ❯ …`, no rule above) is no composer.
        assert!(!read(&fx("idle.txt")).busy);
    }

    #[test]
    fn a_permission_prompt_is_waiting() {
        let r = read(&fx("permission.txt"));
        assert_eq!(r.waiting.as_deref(), Some("permission prompt"));
        assert!(!r.composer_seen);
    }

    /// The promo's button sits on the composer's line (`❯ Wh   Open ClinePass`): without the
    /// promo rule it reads as a draft.
    #[test]
    fn start_up_promos_are_no_draft() {
        for f in ["promo-clinepass.txt", "promo-desktop.txt"] {
            let r = read(&fx(f));
            assert!(r.composer_seen, "{f}");
            assert_eq!(r.draft, None, "{f}");
        }
    }

    #[test]
    fn the_start_screen_is_told_from_a_session() {
        assert!(start_screen(&fx("first-start.txt")));
        assert!(start_screen(&fx("after-new.txt")));
        assert!(!start_screen(&fx("idle.txt")));
        assert!(!start_screen(&fx("draft.txt")));
        assert!(!start_screen(&fx("busy.txt")));
    }

    #[test]
    fn no_composer_is_cannot_tell() {
        let r = read("root@vm:~# \n\n");
        assert!(!r.composer_seen);
        assert_eq!(r.draft, None);
    }
}
