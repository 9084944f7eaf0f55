//! Codex CLI's screen reader (pure): a `capture-pane -p -e` capture (plain text is accepted too,
//! best effort) to a [`ScreenReading`]. Its composer is a `›` line followed by its status/footer
//! lines; the empty composer shows a DIM placeholder, which only the escapes can tell apart from a
//! typed draft (real captures: `tests/fixtures/codex/*`).

use std::sync::OnceLock;

use regex::Regex;

use crate::agents::screen::{
    has_chooser, is_blank, last_nonempty, other_option_re, parse_count, re, selected_option_re,
    styled_lines, ScreenReading, BOTTOM_LINES,
};

/// How far below a Codex `›` line its status/footer lines may start.
const FOOTER_REACH: usize = 8;
/// How far above the Codex composer the status indicator (`• Working (…)`) may sit.
const STATUS_REACH: usize = 10;

/// Placeholders the Codex TUI shows in an empty composer. Only consulted for plain (escape-free)
/// input; with escapes the DIM attribute is the authority.
const PLACEHOLDERS: &[&str] = &[
    "Ask Codex to do anything",
    "Explain this codebase",
    "Summarize recent commits",
    "Implement {feature}",
    "Find and fix a bug in @filename",
    "Write tests for @filename",
    "Improve documentation in @filename",
    "Run /review on my current changes",
    "Use /skills to list available skills",
];

/// Classifies a Codex CLI pane. `escaped` is `capture-pane -p -e` output; plain text works too,
/// but then a placeholder can only be recognised by its wording.
pub fn read(escaped: &str) -> ScreenReading {
    let has_escapes = escaped.contains('\x1b');
    let styled = styled_lines(escaped);
    let lines: Vec<&str> = styled.iter().map(|l| l.text.as_str()).collect();
    let mut reading = ScreenReading::default();

    let Some((at, cont)) = composer(&lines) else {
        let bottom = last_nonempty(&lines, BOTTOM_LINES);
        reading.waiting = dialog(&bottom);
        reading.busy = bottom.iter().any(|l| status_busy(l));
        reading.bg_shells = bg_terminals(&bottom);
        return reading;
    };
    reading.composer_seen = true;

    // Draft: the composer line after `›` plus its wrapped continuation lines.
    let draft = if has_escapes {
        // DIM text is the placeholder (or a ghost suggestion); typed text is normal intensity.
        let mut parts = Vec::new();
        for (k, line) in styled[at..=at + cont].iter().enumerate() {
            let skip = if k == 0 { 1 } else { 0 }; // the `›` glyph
            let typed: String = line
                .text
                .chars()
                .zip(line.dim.iter())
                .skip(skip)
                .filter(|(_, &dim)| !dim)
                .map(|(c, _)| c)
                .collect();
            parts.push(typed.trim_end().to_string());
        }
        let joined = parts.join("\n");
        let joined = joined.trim();
        (!joined.is_empty()).then(|| joined.to_string())
    } else {
        let mut parts = vec![lines[at]
            .strip_prefix('›')
            .unwrap_or("")
            .trim_end()
            .to_string()];
        for line in &lines[at + 1..=at + cont] {
            parts.push(
                line.strip_prefix("  ")
                    .unwrap_or(line)
                    .trim_end()
                    .to_string(),
            );
        }
        let joined = parts.join("\n");
        let joined = joined.trim();
        // Without escapes only the exact stock wording proves emptiness; anything else is
        // reported as a draft, because missing a real draft loses the user's text.
        (!joined.is_empty() && !PLACEHOLDERS.contains(&joined)).then(|| joined.to_string())
    };
    reading.draft = draft;

    // The status indicator (`• Working (3s • esc to interrupt) · 1 background terminal running`)
    // sits just above the composer; background terminals may also be listed below it.
    let above = &lines[at.saturating_sub(STATUS_REACH)..at];
    let below = &lines[at + 1..];
    reading.busy = above.iter().any(|l| status_busy(l));
    reading.bg_shells = bg_terminals(above).max(bg_terminals(below));
    // With a live composer no Codex dialog is open (approvals and choosers replace the composer),
    // and the status line below it shows the thread name, which is user text: searching it for
    // dialog wording would invent dialogs.
    reading
}

/// Finds the live Codex composer: the last `›` line at column 0 that is followed within a few
/// lines by a status/footer line, with no history cell in between. Returns its index and the
/// number of wrapped continuation lines that belong to it.
fn composer(lines: &[&str]) -> Option<(usize, usize)> {
    'candidates: for at in (0..lines.len()).rev() {
        if !lines[at].starts_with('›') {
            continue;
        }
        let near = &lines[at.saturating_sub(6)..lines.len().min(at + 7)];
        if selected_option_re().is_match(lines[at])
            && near.iter().any(|l| other_option_re().is_match(l))
        {
            continue; // the selected row of a chooser, e.g. `› 1. Use session directory`
        }
        let mut cont = 0;
        let mut in_body = true;
        for (k, line) in lines[at + 1..].iter().enumerate() {
            if k >= FOOTER_REACH {
                break;
            }
            if bottom_line(line) {
                return Some((at, cont));
            }
            if is_blank(line) {
                in_body = false;
                continue;
            }
            let lead = line.trim_start().chars().next().unwrap_or(' ');
            if matches!(lead, '•' | '◦' | '■' | '›' | '└' | '⚠' | '✔' | '✗') {
                // A history cell follows: this `›` is a submitted prompt in the scrollback.
                continue 'candidates;
            }
            if in_body && line.starts_with(char::is_whitespace) {
                cont += 1;
            } else {
                // Something else (e.g. a shell prompt printed over a killed TUI): tolerated, but
                // it ends the draft.
                in_body = false;
            }
        }
    }
    None
}

/// Codex's status line (`  mock-model default · /tmp/x · title`) or footer hints.
fn bottom_line(line: &str) -> bool {
    let l = line.to_lowercase();
    if l.contains("for shortcuts")
        || l.contains("← for agents")
        || l.contains("f2 to view")
        || l.contains("context left")
    {
        return true;
    }
    // The status line: two-column indent, then `·`-separated fields.
    line.starts_with("  ") && !line[2..].starts_with(char::is_whitespace) && line.contains(" · ")
}

/// A Codex status-indicator line for a turn in flight (`• Working (3s • esc to interrupt)`,
/// `◦ Reconnecting... 1/5 (5s • esc to interrupt)`).
fn status_busy(line: &str) -> bool {
    let t = line.trim_start();
    (t.starts_with('•') || t.starts_with('◦')) && t.to_lowercase().contains("esc to interrupt")
}

fn bg_terminals(lines: &[&str]) -> u32 {
    static R: OnceLock<Regex> = OnceLock::new();
    let r = re(&R, r"\b(\d{1,10}) background terminals? running\b");
    lines
        .iter()
        .find_map(|l| r.captures(l))
        .map(|c| parse_count(&c[1]))
        .unwrap_or(0)
}

/// Names the Codex dialog visible in `lines`, if any.
fn dialog(lines: &[&str]) -> Option<String> {
    let has = |needle: &str| lines.iter().any(|l| l.contains(needle));
    static WARNINGS: OnceLock<Regex> = OnceLock::new();
    let warnings = re(&WARNINGS, r"Warnings · \d+ of \d+");
    let label = if has("Working directory · resume") {
        "resume: choose working directory"
    } else if has("Resume a previous session") {
        "resume picker"
    } else if has("Trust this folder?")
        || has("Do you trust the files in this folder")
        || has("Folder access")
    {
        "trust dialog"
    } else if has("Would you like to run the following command?") {
        "approval prompt: command"
    } else if has("Would you like to make the following edits?") {
        "approval prompt: edits"
    } else if has("Would you like to") || has("Allow command?") || has("Yes, proceed") {
        "approval prompt"
    } else if has("Hooks need review") {
        "hooks review"
    } else if lines.iter().any(|l| warnings.is_match(l)) {
        "warnings overlay"
    } else if has_chooser(lines)
        || has("enter continue")
        || has("Press enter to confirm")
        || has("esc to cancel")
    {
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

    use crate::agents::screen::test_kit::{
        busy, fixture, idle, screenish, unknown, waiting, with_draft,
    };
    use crate::agents::screen::{bare_shell_prompt, strip_ansi};

    // ---- captures -----------------------------------------------------------------

    #[test]
    fn after_ctrl_c_and_quit_are_shells() {
        for screen in [
            fixture!("codex/after-ctrl-c.txt"),
            fixture!("codex/after-quit.txt"),
        ] {
            assert_eq!(read(screen), unknown());
            assert!(bare_shell_prompt(screen));
        }
    }

    #[test]
    fn after_first_reply_reconnecting_is_busy() {
        // `◦ Reconnecting... 1/5 (5s • esc to interrupt)`: the turn is still in flight.
        assert_eq!(read(fixture!("codex/after-first-reply.txt")), busy());
    }

    #[test]
    fn after_kill_signals_leave_a_stale_composer() {
        // The shell printed `Hangup`/`Terminated` over the placeholder; plain text cannot tell
        // this from typed text, so it reads as a draft (the safe direction).
        assert_eq!(
            read(fixture!("codex/after-sigHUP.txt")),
            with_draft("Hangupdex to do anything")
        );
        assert_eq!(
            read(fixture!("codex/after-sigterm.txt")),
            with_draft("Terminatedto do anything")
        );
        assert_eq!(read(fixture!("codex/after-sigINT.txt")), idle());
        for screen in [
            fixture!("codex/after-sigHUP.txt"),
            fixture!("codex/after-sigterm.txt"),
            fixture!("codex/after-sigINT.txt"),
        ] {
            assert!(!bare_shell_prompt(screen));
        }
    }

    #[test]
    fn busy_screens() {
        assert_eq!(read(fixture!("codex/busy.txt")), busy());
        assert_eq!(read(fixture!("codex/no-daemon-busy.txt")), busy());
    }

    #[test]
    fn draft_with_escapes() {
        assert_eq!(
            read(fixture!("codex/draft-escapes.txt")),
            with_draft("a draft that is not sent")
        );
    }

    #[test]
    fn draft_plain() {
        assert_eq!(
            read(fixture!("codex/draft.txt")),
            with_draft("a draft that is not sent")
        );
    }

    #[test]
    fn first_start_is_idle() {
        assert_eq!(read(fixture!("codex/first-start.txt")), idle());
    }

    #[test]
    fn idle_screens() {
        for screen in [
            fixture!("codex/idle.txt"),
            fixture!("codex/idle-after-2.txt"),
            fixture!("codex/idle-escapes.txt"),
            fixture!("codex/no-daemon.txt"),
            fixture!("codex/resumed.txt"),
            fixture!("codex/status.txt"),
            fixture!("codex/resume-after-midturn-kill.txt"),
            fixture!("codex/untrusted-first-run.txt"),
            fixture!("codex/demo-daemon-resumed.txt"),
            fixture!("codex/demo-no-daemon-resumed.txt"),
            fixture!("codex/rss-m-daemon.txt"),
            fixture!("codex/rss-m-nodaemon.txt"),
        ] {
            assert_eq!(read(screen), idle());
            assert!(!bare_shell_prompt(screen));
        }
    }

    #[test]
    fn resume_other_cwd_is_a_chooser() {
        assert_eq!(
            read(fixture!("codex/resume-other-cwd.txt")),
            waiting("resume: choose working directory")
        );
    }

    #[test]
    fn resume_picker_is_waiting() {
        assert_eq!(
            read(fixture!("codex/resume-picker.txt")),
            waiting("resume picker")
        );
    }

    #[test]
    fn tool_running_is_busy_with_a_background_terminal() {
        assert_eq!(
            read(fixture!("codex/tool-running.txt")),
            ScreenReading {
                bg_shells: 1,
                ..busy()
            }
        );
    }

    #[test]
    fn unsent_first_prompt_is_a_draft() {
        // `› hello codex mock` above the status line, before any prompt was sent.
        assert_eq!(
            read(fixture!("codex/unsent-draft.txt")),
            with_draft("hello codex mock")
        );
    }

    #[test]
    fn untrusted_git_first_run_is_the_trust_dialog() {
        assert_eq!(
            read(fixture!("codex/untrusted-git-first-run.txt")),
            waiting("trust dialog")
        );
    }

    #[test]
    fn warnings_overlay_is_waiting() {
        assert_eq!(
            read(fixture!("codex/warnings.txt")),
            waiting("warnings overlay")
        );
    }

    #[test]
    fn escaped_and_plain_captures_agree_on_text() {
        // The `-e` captures are the same screens as their plain twins once escapes are gone
        // (modulo trailing blanks), so stripping is faithful.
        let norm = |s: &str| {
            s.lines()
                .map(str::trim_end)
                .collect::<Vec<_>>()
                .join("\n")
                .trim()
                .to_string()
        };
        let idle_plain = norm(&strip_ansi(fixture!("codex/idle-escapes.txt")));
        assert!(idle_plain.contains("› Ask Codex to do anything"));
        assert!(!idle_plain.contains('\x1b'));
        assert_eq!(
            norm(&strip_ansi(fixture!("codex/draft-escapes.txt"))),
            norm(fixture!("codex/draft.txt"))
        );
    }

    // ---- synthetic edge cases -----------------------------------------------------------

    const FOOT: &str =
        "\n\n  mock-model default · /tmp/p · title\n  ← for agents · ? for shortcuts\n";

    #[test]
    fn every_known_placeholder_is_empty_in_plain_text() {
        for p in PLACEHOLDERS {
            let screen = format!("› {p}{FOOT}");
            assert_eq!(read(&screen), idle(), "{p}");
        }
        // Not stock wording: conservatively a draft.
        let screen = format!("› Ask Codex to do anything else{FOOT}");
        assert_eq!(read(&screen), with_draft("Ask Codex to do anything else"));
    }

    #[test]
    fn dim_text_is_placeholder_normal_text_is_draft() {
        let dim = format!("\x1b[1m›\x1b[0m \x1b[2mImplement {{feature}}\x1b[0m{FOOT}");
        assert_eq!(read(&dim), idle());
        // Typed text equal to a placeholder is still a draft when it is normal intensity.
        let typed = format!("\x1b[1m›\x1b[0m Implement {{feature}}{FOOT}");
        assert_eq!(read(&typed), with_draft("Implement {feature}"));
        // A dim ghost suggestion after typed text is not part of the draft.
        let ghost = format!("\x1b[1m›\x1b[0m fix\x1b[2m the tests\x1b[0m{FOOT}");
        assert_eq!(read(&ghost), with_draft("fix"));
        // `38;5;2` is a colour, not DIM.
        let colour = format!("\x1b[1m›\x1b[0m \x1b[38;5;2mgreen draft\x1b[39m{FOOT}");
        assert_eq!(read(&colour), with_draft("green draft"));
        // `22` ends DIM.
        let undim = format!("› \x1b[2mdim\x1b[22mtyped{FOOT}");
        assert_eq!(read(&undim), with_draft("typed"));
    }

    #[test]
    fn multiline_cjk_draft() {
        let screen = format!("› 第一行 🚀\n  second line{FOOT}");
        assert_eq!(read(&screen), with_draft("第一行 🚀\nsecond line"));
    }

    #[test]
    fn scrollback_prompts_without_footer_are_not_composers() {
        let screen = "› submitted prompt\n\n• reply\n\n  Worked for 1s • 13:57\n";
        assert_eq!(read(screen), unknown());
    }

    #[test]
    fn two_composers_use_the_last() {
        let screen = format!("› Ask Codex to do anything{FOOT}\n› a later draft{FOOT}");
        assert_eq!(read(&screen), with_draft("a later draft"));
    }

    #[test]
    fn approval_prompt_is_waiting() {
        let screen = "› run it\n\n  Would you like to run the following command?\n\n  $ rm -rf build\n\n› 1. Yes, proceed (y)\n  2. No, and tell Codex what to do differently (esc)\n\n  Press enter to confirm or esc to cancel\n";
        assert_eq!(read(screen), waiting("approval prompt: command"));
    }

    #[test]
    fn chooser_with_selection_on_the_last_row_is_not_a_composer() {
        let screen =
            "  Update available\n\n  1. Update now\n› 2. Skip\n\n  enter continue · esc back\n";
        assert_eq!(read(screen), waiting("dialog open"));
        // A numbered draft without sibling options is still a draft.
        let screen = format!("› 1. fix the parser{FOOT}");
        assert_eq!(read(&screen), with_draft("1. fix the parser"));
    }

    #[test]
    fn two_background_terminals() {
        let screen = format!(
            "• Working (9s • esc to interrupt) · 2 background terminals running · /ps to view\n\n› Ask Codex to do anything{FOOT}"
        );
        assert_eq!(
            read(&screen),
            ScreenReading {
                bg_shells: 2,
                ..busy()
            }
        );
    }

    #[test]
    fn thread_title_never_invents_a_dialog() {
        let screen = "› Ask Codex to do anything\n\n  mock-model default · /tmp/p · Trust this folder? Would you like to\n  ← for agents · ? for shortcuts\n";
        assert_eq!(read(screen), idle());
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
            let x = read(&s);
            prop_assert!(x.draft.is_none() || x.composer_seen);
        }
    }
}
