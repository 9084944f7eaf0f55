//! pi's screen (1.6.0, its default full-screen TUI): the conversation, then the editor between two
//! full-width `─` rules, then a footer (the cwd, then the context use and the model), with a
//! command popup between the lower rule and the footer while a `/` command is typed. A run in
//! flight labels the upper rule: `── ⠹ Working ───…` (an extension's custom editor, and pi 0.73,
//! show it as a row of its own above the editor: `⠼ Working`; a custom editor may label its lower
//! rule with its mode: `───… INSERT`). pi has no permission prompts; an
//! extension's dialog takes the editor's place, and a screen without the editor reads as unknown.
//!
//! Contract: pure, never panics. The editor is the last full-width rule with the nearest rule
//! (plain or labelled) above it, at most [`MAX_EDITOR_LINES`] apart; its text is the draft (a
//! draft typed while busy is still one); a labelled upper rule means busy.

use crate::agents::screen::{is_rule, plain_lines, ScreenReading, RULE_CHAR};

/// The most lines the editor grows to before it scrolls (more: not pi's editor).
const MAX_EDITOR_LINES: usize = 30;
/// The most lines between the lower rule and the end of the screen: the popup and the footer.
const MAX_BELOW: usize = 14;

/// The longest label a rule carries (`⠹ Working`, a custom editor's mode such as `INSERT`).
const MAX_LABEL: usize = 40;

/// An editor rule: full-width `─`, `── <label> ───…` (pi's working label on the upper rule) or
/// `───… <label>` (a custom editor's mode on the lower one). Returns its label.
fn rule(line: &str) -> Option<String> {
    let t = line.trim_end();
    if is_rule(t) {
        return Some(String::new());
    }
    let dashes = t.chars().filter(|&c| c == RULE_CHAR).count();
    let label = t.trim_matches(RULE_CHAR).trim();
    let ok = dashes >= 20
        && (t.starts_with("──") || t.ends_with("──"))
        && !label.is_empty()
        && label.chars().count() <= MAX_LABEL
        && !label.contains(RULE_CHAR)
        && t.contains(&format!(" {label}"));
    ok.then(|| label.to_string())
}

/// An upper rule and its label: a label there means pi is working.
fn upper_rule(line: &str) -> Option<String> {
    rule(line)
}

/// A standalone working row (`⠙ Working...`): a braille spinner, then a word.
fn working_row(line: &str) -> bool {
    let mut c = line.trim_start().chars();
    matches!(c.next(), Some('\u{2801}'..='\u{28FF}')) && c.next() == Some(' ')
}

/// Reads a plain capture of pi's pane.
pub fn read(capture: &str) -> ScreenReading {
    let lines = plain_lines(capture);
    let end = lines
        .iter()
        .rposition(|l| !l.trim().is_empty())
        .map_or(0, |i| i + 1);
    let Some(lower) = lines[..end].iter().rposition(|l| rule(l).is_some()) else {
        return ScreenReading::default();
    };
    if end - lower - 1 > MAX_BELOW || end - lower - 1 == 0 {
        return ScreenReading::default();
    }
    let Some((upper, label)) = lines[..lower]
        .iter()
        .enumerate()
        .rev()
        .take(MAX_EDITOR_LINES + 1)
        .find_map(|(i, l)| upper_rule(l).map(|label| (i, label)))
    else {
        return ScreenReading::default();
    };
    let text: Vec<&str> = lines[upper + 1..lower]
        .iter()
        .map(|l| l.trim_end())
        .collect();
    let draft = text.join("\n").trim().to_string();
    // A custom editor (an extension's) keeps the working row on its own line above the editor.
    let row_above = lines[..upper].iter().rev().take(3).any(|l| working_row(l));
    ScreenReading {
        busy: !label.is_empty() || row_above,
        waiting: None,
        draft: (!draft.is_empty()).then_some(draft),
        bg_shells: 0,
        composer_seen: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::screen::test_kit;

    fn fixture(name: &str) -> String {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/pi")
            .join(name);
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    }

    #[test]
    fn real_screens_read_as_what_they_show() {
        for f in ["idle-1.6.0.txt", "idle-after-turns-1.6.0.txt"] {
            let r = read(&fixture(f));
            assert_eq!(r, test_kit::idle(), "{f}");
        }
        assert_eq!(
            read(&fixture("draft-1.6.0.txt")),
            test_kit::with_draft("an unsent thought")
        );
        let busy = read(&fixture("busy-1.6.0.txt"));
        assert!(
            busy.busy && busy.composer_seen && busy.draft.is_none(),
            "{busy:?}"
        );
        let both = read(&fixture("busy-draft-1.6.0.txt"));
        assert!(both.busy, "{both:?}");
        assert_eq!(both.draft.as_deref(), Some("queued words"));
        // The command popup under the editor: the typed command is a draft.
        let popup = read(&fixture("slash-popup-1.6.0.txt"));
        assert_eq!(popup.draft.as_deref(), Some("/ne"), "{popup:?}");
        assert!(!popup.busy);
        // An extension's custom editor (pi's own `modal-editor.ts` example): its mode on the
        // lower rule, the working row on a line of its own above the editor.
        assert_eq!(
            read(&fixture("custom-editor-idle-1.6.0.txt")),
            test_kit::idle()
        );
        assert_eq!(
            read(&fixture("custom-editor-draft-1.6.0.txt")),
            test_kit::with_draft("typed into the modal editor")
        );
        let custom = read(&fixture("custom-editor-busy-1.6.0.txt"));
        assert!(custom.busy && custom.draft.is_none(), "{custom:?}");
    }

    /// Only the upper rule's label makes the screen busy: a rule in the conversation or the
    /// scrollback, far from the footer, is no editor.
    #[test]
    fn the_working_label_is_busy_and_no_editor_is_unknown() {
        let idle = fixture("idle-1.6.0.txt");
        let dashes = "─".repeat(40);
        let working = idle.replacen(&dashes, &format!("── ⠹ Working {}", "─".repeat(27)), 1);
        assert_ne!(working, idle);
        assert!(read(&working).busy);
        // The editor gone (an extension's dialog in its place): unknown, never idle.
        let gone: String = idle
            .lines()
            .filter(|l| !is_rule(l))
            .map(|l| format!("{l}\n"))
            .collect();
        assert!(!read(&gone).composer_seen);
        assert!(!read("").composer_seen);
        assert!(
            !read(&format!("{dashes}\n{dashes}\n")).composer_seen,
            "no footer"
        );
        // The working row of its own above a custom editor (pi 0.73's place for it).
        let above = idle.replacen(&dashes, &format!(" ⠙ Working...\n{dashes}"), 1);
        assert!(read(&above).busy, "{above}");
        assert!(upper_rule("── a ─").is_none(), "too short for a rule");
        assert!(
            rule("see ──────────────────────── there").is_none(),
            "text, not a rule"
        );
        assert_eq!(
            rule(&format!("{} INSERT", "─".repeat(30))).as_deref(),
            Some("INSERT")
        );
        assert_eq!(
            upper_rule(&format!("── ⠹ Working {}", "─".repeat(30))).as_deref(),
            Some("⠹ Working")
        );
    }
}
