//! aider's screen (a plain `capture-pane -p` capture), read from real 0.86.2 captures
//! (`tests/fixtures/aider/*.txt`) and its `io.py` (`get_input`, `confirm_ask`):
//! * Every input starts with a full-width `─` rule, then the files in the chat (editable names,
//!   a `Readonly:` line), then the prompt at column 0: `> `, or the edit format before it when
//!   it is not the model's own (`diff> `, `architect> `, `ask> `), `multi` in multiline mode
//!   (`multi> `, `diff multi> `). Text after it is a draft. Once sent, the line stays as it is
//!   and the turn's output follows it: the spinner `Waiting for <model>` (or `Generating commit
//!   message with <model>`), then the reply; the next rule and prompt end the turn. So lines under
//!   the prompt line mean a turn in flight (busy), and the prompt as the last line means idle or
//!   a draft.
//! * A question is the last line, ending `(Y)es/(N)o… [Yes]: ` (`Run shell command?`, `Add file to
//!   the chat?`, `Attempt to fix lint errors?`), the typed answer after it: a dialog.
//! * Notices aider prints itself (a price-list fetch failing offline, `Restored previous
//!   conversation history.`, announcements) are above the rule: never a draft.
//!
//! Errs in the safe direction: no rule-and-prompt and no question means "cannot tell"
//! (`composer_seen == false`). prompt_toolkit's completion menu under a half-typed `/command`
//! reads as busy: a refusal either way.

use std::sync::OnceLock;

use regex::Regex;

use crate::agents::screen::{is_blank, is_rule, last_nonempty, plain_lines, re, ScreenReading};

pub fn read(plain: &str) -> ScreenReading {
    let lines = plain_lines(plain);
    let mut reading = ScreenReading::default();
    static QUESTION: OnceLock<Regex> = OnceLock::new();
    let question = re(&QUESTION, r"\(Y\)es/\(N\)o.*\[[^\]]*\]:");
    if let Some(last) = last_nonempty(&lines, 1).first() {
        if question.is_match(last) {
            reading.waiting = Some(last.trim().to_string());
            return reading;
        }
    }
    let Some(rule) = lines.iter().rposition(|l| is_rule(l)) else {
        return reading;
    };
    static PROMPT: OnceLock<Regex> = OnceLock::new();
    let prompt = re(&PROMPT, r"^(?:[a-z][a-z-]*(?: multi)?)?>(?: (.*))?$");
    let Some((at, text)) = lines[rule + 1..].iter().enumerate().find_map(|(i, l)| {
        prompt.captures(l).map(|c| {
            (
                rule + 1 + i,
                c.get(1).map_or("", |m| m.as_str()).to_string(),
            )
        })
    }) else {
        return reading;
    };
    reading.composer_seen = true;
    if lines[at + 1..].iter().any(|l| !is_blank(l)) {
        // Output under the prompt line: the turn it sent is running (spinner, reply, a tool).
        reading.busy = true;
        return reading;
    }
    let draft = text.trim();
    if !draft.is_empty() {
        reading.draft = Some(draft.to_string());
    }
    reading
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::screen::test_kit::{busy, idle, waiting, with_draft};

    fn fixture(name: &str) -> String {
        std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/aider")
                .join(name),
        )
        .unwrap()
    }

    #[test]
    fn real_screens() {
        assert_eq!(read(&fixture("0.86.2-idle-with-file.txt")), idle());
        assert_eq!(read(&fixture("0.86.2-idle-diff-mode.txt")), idle());
        assert_eq!(
            read(&fixture("0.86.2-draft.txt")),
            with_draft("an unsent thought")
        );
        assert_eq!(read(&fixture("0.86.2-busy.txt")), busy());
        assert_eq!(
            read(&fixture("0.86.2-run-shell-question.txt")),
            waiting("Run shell command? (Y)es/(N)o/(D)on't ask again [Yes]:")
        );
        assert_eq!(
            read(&fixture("0.86.2-lint-question.txt")),
            waiting("Attempt to fix lint errors? (Y)es/(N)o [Yes]:")
        );
    }

    #[test]
    fn modes_drafts_and_what_is_not_a_composer() {
        let rule = "─".repeat(80);
        let s = |tail: &str| format!("Aider v0.86.2\n{rule}\n{tail}\n");
        assert_eq!(read(&s("architect>")), idle());
        assert_eq!(read(&s("ask> why")), with_draft("why"));
        assert_eq!(read(&s("diff multi> x")), with_draft("x"));
        assert_eq!(read(&s("Readonly: a.py\nb.py\n> x")), with_draft("x"));
        // A sent prompt with its reply streaming under it: busy, never a draft.
        assert_eq!(read(&s("> hi\nHello from")), busy());
        // Starting: no rule and prompt yet.
        let r = read("Aider v0.86.2\nModel: x\n");
        assert!(!r.composer_seen && r.waiting.is_none(), "{r:?}");
        // A question answered in the scrollback is not one now.
        assert_eq!(
            read(&s("Run shell command? (Y)es/(N)o [Yes]: n\nx")),
            ScreenReading::default()
        );
        assert_eq!(
            read(&format!(
                "Run shell command? (Y)es/(N)o [Yes]: n\n{rule}\n>"
            )),
            idle()
        );
    }
}
