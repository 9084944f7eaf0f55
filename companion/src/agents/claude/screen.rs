//! Claude Code's screen reader (pure): a `capture-pane -p` capture (escapes, if any, are
//! stripped first) to a [`ScreenReading`]. Its composer is `❯` + U+00A0 fenced between two `─`
//! rules; submitted prompts in the scrollback use `❯` + a normal space, and a shell prompt is never
//! fenced by a rule (real captures: `tests/fixtures/claude/*`).

use std::sync::OnceLock;

use regex::Regex;

use crate::agents::screen::{
    has_chooser, is_blank, is_rule, last_nonempty, parse_count, plain_lines, re, ScreenReading,
    BOTTOM_LINES, RULE_CHAR,
};

const NBSP: char = '\u{a0}';

/// Classifies a Claude Code pane (`capture-pane -p` text; escapes, if any, are stripped first).
pub fn read(plain: &str) -> ScreenReading {
    let lines = plain_lines(plain);
    let mut reading = ScreenReading::default();

    let Some(at) = last_fenced_composer(&lines) else {
        // No composer: a dialog has replaced it, or this is not (or no longer) Claude.
        let bottom = last_nonempty(&lines, BOTTOM_LINES);
        reading.waiting = dialog(&bottom);
        return reading;
    };
    reading.composer_seen = true;

    // The draft runs from the composer line to the next rule; continuation lines carry a
    // two-column indent that lines them up under the text after `❯ `.
    let first = lines[at].strip_prefix(['❯']).unwrap_or("");
    let first = first.strip_prefix(NBSP).unwrap_or(first);
    let mut parts = vec![first.trim_end().to_string()];
    let mut lower_rule = None;
    for (j, line) in lines.iter().enumerate().skip(at + 1) {
        if is_rule(line) {
            lower_rule = Some(j);
            break;
        }
        let body = line.strip_prefix("  ").unwrap_or(line);
        parts.push(body.trim_end().to_string());
    }
    let draft = parts.join("\n");
    let draft = draft.trim();
    if !draft.is_empty() {
        reading.draft = Some(draft.to_string());
    }

    // Footer: everything below the lower rule (busy marker, background shells, and any dialog
    // that renders under the composer).
    let footer: Vec<&str> = match lower_rule {
        Some(j) => lines[j + 1..].iter().map(String::as_str).collect(),
        None => Vec::new(),
    };
    reading.busy = footer
        .iter()
        .any(|l| l.to_lowercase().contains("esc to interrupt"));
    static SHELLS: OnceLock<Regex> = OnceLock::new();
    let shells = re(&SHELLS, r"\b(\d{1,10}) shells?\b");
    reading.bg_shells = footer
        .iter()
        .find_map(|l| shells.captures(l))
        .map(|c| parse_count(&c[1]))
        .unwrap_or(0);
    let footer_nonempty: Vec<&str> = footer.into_iter().filter(|l| !is_blank(l)).collect();
    reading.waiting = dialog(&footer_nonempty);
    reading
}

/// The composer's top fence with a text drawn into it (2.1.197 `borderText`): the session name
/// (`/rename`, `--name`, every session that ran in the background) right-aligned as
/// `───… my-name ──`, the history position left-aligned as `─── History 3/5 ───…`. A name wider
/// than the pane overflows and wraps, leaving no rule characters before it; what stays is the
/// end: a space, then the rule's last `─`s. The caller also requires the `❯`+NBSP composer line
/// right below, which only Claude's composer draws.
fn is_titled_rule(line: &str) -> bool {
    let t = line.trim_end();
    let body = t.trim_end_matches(RULE_CHAR);
    body.len() < t.len() && body.ends_with(' ') && !body.trim().is_empty()
}

/// Index of the last `❯`+NBSP line whose nearest non-empty line above is a `─` rule, plain or
/// with a title drawn into it.
fn last_fenced_composer(lines: &[String]) -> Option<usize> {
    let prefix = format!("❯{NBSP}");
    (0..lines.len()).rev().find(|&i| {
        lines[i].starts_with(&prefix)
            && lines[..i]
                .iter()
                .rev()
                .find(|l| !is_blank(l))
                .is_some_and(|l| is_rule(l) || is_titled_rule(l))
    })
}

/// Names the Claude dialog visible in `lines`, if any.
fn dialog(lines: &[&str]) -> Option<String> {
    let has = |needle: &str| lines.iter().any(|l| l.contains(needle));
    let label = if has("Detected a custom API key") || has("Do you want to use this API key?") {
        "API key dialog"
    } else if has("Yes, I trust this folder")
        || has("Do you trust the files in this folder?")
        || has("Is this a project you created or one you trust?")
    {
        "trust dialog"
    } else if has("Bypass Permissions mode") {
        "Bypass Permissions warning"
    } else if lines
        .iter()
        .any(|l| l.trim_start().starts_with("Do you want to "))
    {
        "permission prompt"
    } else if has("Resume session") && has("Esc to cancel") {
        "resume picker"
    } else if has_chooser(lines) || has("Enter to confirm") || has("Esc to cancel") {
        "dialog open"
    } else {
        return None;
    };
    Some(label.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    use crate::agents::screen::bare_shell_prompt;
    use crate::agents::screen::test_kit::{
        busy, fixture, idle, screenish, unknown, waiting, with_draft, RULE,
    };

    // ---- captures ----------------------------------------------------------------

    #[test]
    fn after_first_reply_is_idle() {
        assert_eq!(read(fixture!("claude/after-first-reply.txt")), idle());
    }

    #[test]
    fn after_sigterm_keeps_the_last_frames_draft() {
        // The final frame before the shell took over: the (now lost) draft is still fenced.
        assert_eq!(
            read(fixture!("claude/after-sigterm.txt")),
            with_draft("this is an unsent draft in the composer")
        );
        assert!(bare_shell_prompt(fixture!("claude/after-sigterm.txt")));
    }

    #[test]
    fn bg_shell_counts_one_shell() {
        let r = read(fixture!("claude/bg-shell.txt"));
        assert_eq!(
            r,
            ScreenReading {
                bg_shells: 1,
                ..idle()
            }
        );
    }

    /// Issue 19 (0a): a named session draws its name into the composer's top rule; these were
    /// read as `unknown` (no composer), which refused every park forever.
    #[test]
    fn named_sessions_are_read_like_unnamed_ones() {
        assert_eq!(read(fixture!("claude/named-idle.txt")), idle());
        assert_eq!(read(fixture!("claude/named-resumed.txt")), idle());
        assert_eq!(read(fixture!("claude/renamed-long.txt")), idle());
        assert_eq!(read(fixture!("claude/named-narrow.txt")), idle());
        // A name wider than the pane wraps: no rule characters before it.
        assert_eq!(read(fixture!("claude/renamed-long-narrow.txt")), idle());
        assert_eq!(
            read(fixture!("claude/named-draft.txt")),
            with_draft("an unsent draft")
        );
        assert_eq!(read(fixture!("claude/named-busy.txt")), busy());
        // Up-arrow history recall fills the composer: a draft (the safe reading).
        assert_eq!(
            read(fixture!("claude/history-rule.txt")),
            with_draft("take your time [slow 15]")
        );
    }

    /// Fixtures of issue 19's lab run: a background session attached in a pane (`claude attach`,
    /// its footer has no `? for shortcuts`), an 80-char name wrapped at 60 columns, and the
    /// frame `/bg` leaves behind (a shell prompt below the last composer: no composer now).
    #[test]
    fn attached_background_and_slash_bg_screens() {
        assert_eq!(read(fixture!("claude/named-attached-bg.txt")), idle());
        assert_eq!(read(fixture!("claude/named-attached-bg-busy.txt")), busy());
        assert_eq!(read(fixture!("claude/named-long80-60col.txt")), idle());
        let after = read(fixture!("claude/after-slash-bg.txt"));
        assert_eq!(
            after,
            unknown(),
            "no composer left: the session went to the background"
        );
    }

    #[test]
    fn titled_rules_of_every_alignment() {
        let cases = [
            format!("{RULE} my-name ──"),
            format!("─── History 3/5 {RULE}"),
            format!("{RULE} 名前 ✨ ──"),
            " a name too wide for the pane ──".to_string(),
        ];
        for top in cases {
            let screen = format!("{top}\n❯\u{a0}\n{RULE}\n  ? for shortcuts\n");
            assert_eq!(read(&screen), idle(), "{top}");
        }
        // Text that merely ends in a rule character, or a rule with no title, is no titled rule.
        for not in ["some text─", "──", "   ──", "word ─x"] {
            assert!(!is_titled_rule(not), "{not:?}");
        }
        let screen = format!("some text─\n❯\u{a0}\n{RULE}\n");
        assert_eq!(read(&screen), unknown());
    }

    /// Claude Code 2.1.332 (the pin since issue 30; park was first built on 2.1.197): the permission-modes
    /// notice on first start, the footer naming the mode (`⏵⏵ auto mode on (shift+tab to cycle)
    /// · ← for agents`, manual, accept edits, plan), the `◐ medium · /effort` line above the
    /// rule, a renamed session's rule ending in one `─`, a session resumed after `/clear`: at
    /// rest; the model picker and a permission prompt: dialogs; a turn in flight: busy.
    #[test]
    fn v2_1_332_screens_are_read_as_2_1_197_ones() {
        for (name, screen) in [
            ("first start", fixture!("claude/2.1.332-first-start.txt")),
            (
                "first reply",
                fixture!("claude/2.1.332-after-first-reply.txt"),
            ),
            ("after /clear", fixture!("claude/2.1.332-after-clear.txt")),
            ("manual mode", fixture!("claude/2.1.332-manual-mode.txt")),
            ("accept edits", fixture!("claude/2.1.332-accept-edits.txt")),
            ("plan mode", fixture!("claude/2.1.332-plan-mode.txt")),
            (
                "resumed after /clear",
                fixture!("claude/2.1.332-resumed-after-clear.txt"),
            ),
        ] {
            assert_eq!(read(screen), idle(), "{name}");
            assert!(!bare_shell_prompt(screen), "{name}");
        }
        assert_eq!(
            read(fixture!("claude/2.1.332-model-picker.txt")),
            waiting("dialog open")
        );
        assert_eq!(
            read(fixture!("claude/2.1.332-permission.txt")),
            waiting("permission prompt")
        );
        // The footer reads `… (shift+tab to cycle) · esc to interrupt · ← for agents`.
        assert_eq!(read(fixture!("claude/2.1.332-busy.txt")), busy());
        // A prompt typed mid-turn is queued; the composer then shows a hint where a draft would
        // be. The turn in flight is what counts.
        let queued = read(fixture!("claude/2.1.332-busy-queued.txt"));
        assert!(queued.busy && queued.waiting.is_none(), "{queued:?}");
    }

    #[test]
    fn busy_1_and_2_are_busy() {
        assert_eq!(read(fixture!("claude/busy-1.txt")), busy());
        assert_eq!(read(fixture!("claude/busy-2.txt")), busy());
    }

    #[test]
    fn continue_is_idle() {
        assert_eq!(read(fixture!("claude/continue.txt")), idle());
    }

    #[test]
    fn dialog_1_is_the_trust_dialog() {
        assert_eq!(
            read(fixture!("claude/dialog-1.txt")),
            waiting("trust dialog")
        );
    }

    #[test]
    fn dialog_2_is_the_api_key_dialog() {
        assert_eq!(
            read(fixture!("claude/dialog-2.txt")),
            waiting("API key dialog")
        );
    }

    #[test]
    fn dialog_3_is_idle_after_the_dialogs() {
        assert_eq!(read(fixture!("claude/dialog-3.txt")), idle());
    }

    #[test]
    fn double_resume_is_idle() {
        assert_eq!(read(fixture!("claude/double-resume.txt")), idle());
    }

    #[test]
    fn idle_after_2_is_idle() {
        assert_eq!(read(fixture!("claude/idle-after-2.txt")), idle());
    }

    #[test]
    fn permission_prompt_is_waiting() {
        assert_eq!(
            read(fixture!("claude/permission-prompt.txt")),
            waiting("permission prompt")
        );
    }

    #[test]
    fn resume_after_midturn_kill_is_idle() {
        assert_eq!(
            read(fixture!("claude/resume-after-midturn-kill.txt")),
            idle()
        );
    }

    #[test]
    fn resume_picker_is_waiting_not_a_draft() {
        // `  ❯ fourth prompt…` is a picker row (normal space, indented), never a composer.
        assert_eq!(
            read(fixture!("claude/resume-picker.txt")),
            waiting("resume picker")
        );
    }

    #[test]
    fn error_screens_are_shells() {
        for screen in [
            fixture!("claude/resume-wrong-cwd.txt"),
            fixture!("claude/session-id-reuse.txt"),
        ] {
            assert_eq!(read(screen), unknown());
            assert!(bare_shell_prompt(screen));
        }
    }

    #[test]
    fn resumed_screens_are_idle() {
        assert_eq!(read(fixture!("claude/resumed.txt")), idle());
        assert_eq!(read(fixture!("claude/resumed-after-prompt.txt")), idle());
        assert_eq!(read(fixture!("claude/demo-resumed.txt")), idle());
        assert_eq!(read(fixture!("claude/rss-m.txt")), idle());
    }

    #[test]
    fn unsent_draft_is_quoted() {
        assert_eq!(
            read(fixture!("claude/unsent-draft.txt")),
            with_draft("this is an unsent draft in the composer")
        );
    }

    #[test]
    fn screens_are_not_bare_shell_prompts() {
        for screen in [
            fixture!("claude/idle-after-2.txt"),
            fixture!("claude/busy-1.txt"),
            fixture!("claude/unsent-draft.txt"),
            fixture!("claude/permission-prompt.txt"),
            fixture!("claude/dialog-1.txt"),
            fixture!("claude/resume-picker.txt"),
        ] {
            assert!(!bare_shell_prompt(screen));
        }
    }

    // ---- synthetic edge cases -----------------------------------------------------------

    #[test]
    fn unfenced_prompt_in_scrollback_is_not_a_draft() {
        // A shell prompt (even with NBSP) and submitted prompts are not fenced by a rule.
        let screen = "user@host:~$ ls\n❯\u{a0}half-typed shell command\n❯ submitted prompt\n";
        assert_eq!(read(screen), unknown());
        let screen = format!("some output\n\n❯\u{a0}not fenced\n{RULE}\n  ? for shortcuts\n");
        assert_eq!(read(&screen), unknown());
    }

    #[test]
    fn submitted_prompt_with_normal_space_is_not_a_composer() {
        let screen = format!("{RULE}\n❯ hello\n{RULE}\n  ? for shortcuts\n");
        assert_eq!(read(&screen), unknown());
    }

    #[test]
    fn draft_with_rule_chars_mid_text() {
        let screen = format!("{RULE}\n❯\u{a0}split ──── here ─\n{RULE}\n");
        assert_eq!(read(&screen), with_draft("split ──── here ─"));
    }

    #[test]
    fn multiline_draft_runs_to_the_lower_rule() {
        let screen = format!(
            "{RULE}\n❯\u{a0}first line\n  second line\n    indented third\n  ────────────────\n{RULE}\n  \n"
        );
        assert_eq!(
            read(&screen),
            with_draft("first line\nsecond line\n  indented third\n────────────────")
        );
    }

    #[test]
    fn cjk_and_emoji_drafts() {
        let screen = format!("{RULE}\n❯\u{a0}日本語の下書き 🚀 ok\n{RULE}\n");
        assert_eq!(read(&screen), with_draft("日本語の下書き 🚀 ok"));
    }

    #[test]
    fn two_composers_use_the_last() {
        let screen = format!(
            "{RULE}\n❯\u{a0}old frame draft\n{RULE}\n  ? for shortcuts\n\n❯ prompt\n● reply\n{RULE}\n❯\u{a0}\n{RULE}\n  ? for shortcuts\n"
        );
        assert_eq!(read(&screen), idle());
        let screen = format!("{RULE}\n❯\u{a0}\n{RULE}\n\n{RULE}\n❯\u{a0}newest\n{RULE}\n");
        assert_eq!(read(&screen), with_draft("newest"));
    }

    #[test]
    fn trailing_whitespace_is_not_a_draft() {
        let screen = format!("{RULE}   \n❯\u{a0}   \n{RULE}  \n  ? for shortcuts   \n   \n");
        assert_eq!(read(&screen), idle());
        let screen = format!("{RULE}\n❯\u{a0}  padded draft   \n{RULE}\n");
        assert_eq!(read(&screen), with_draft("padded draft"));
    }

    #[test]
    fn crlf_and_escapes_are_tolerated() {
        let screen =
            format!("{RULE}\r\n\x1b[1m❯\u{a0}\x1b[0mdraft\r\n{RULE}\r\n  esc to interrupt\r\n");
        assert_eq!(
            read(&screen),
            ScreenReading {
                busy: true,
                ..with_draft("draft")
            }
        );
    }

    #[test]
    fn two_shells_and_dialog_below_composer() {
        let screen = format!("{RULE}\n❯\u{a0}\n{RULE}\n  2 shells · ← for agents · ↓ to manage\n");
        assert_eq!(
            read(&screen),
            ScreenReading {
                bg_shells: 2,
                ..idle()
            }
        );
        let screen = format!(
            "{RULE}\n❯\u{a0}\n{RULE}\n Select model\n ❯ 1. Default\n   2. Opus\n Enter to confirm · Esc to exit\n"
        );
        assert_eq!(
            read(&screen),
            ScreenReading {
                waiting: Some("dialog open".into()),
                ..idle()
            }
        );
    }

    #[test]
    fn bypass_permissions_warning() {
        let screen = " WARNING: Claude Code running in Bypass Permissions mode\n\n ❯ 1. No, exit\n   2. Yes, I accept\n";
        assert_eq!(read(screen), waiting("Bypass Permissions warning"));
    }

    #[test]
    fn chooser_with_selection_below_the_first_option_is_a_dialog() {
        let screen = " Pick one\n\n   1. Alpha\n ❯ 2. Beta\n";
        assert_eq!(read(screen), waiting("dialog open"));
    }

    #[test]
    fn empty_screens_are_unknown() {
        for s in ["", "\n\n\n", "   \n\t\n"] {
            assert_eq!(read(s), unknown());
        }
    }

    proptest! {
        #[test]
        fn never_panics_on_arbitrary_unicode(s in any::<String>()) {
            let _ = read(&s);
        }

        #[test]
        fn a_draft_comes_with_a_composer(s in screenish()) {
            let c = read(&s);
            prop_assert!(c.draft.is_none() || c.composer_seen);
        }
    }
}
