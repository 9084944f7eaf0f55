//! GitHub Copilot CLI's screen (a plain `capture-pane -p` capture; escapes, if any, are stripped
//! first): busy, waiting on a permission prompt or dialog, a draft in the composer, background
//! shells.
//!
//! The cues come from real 1.0.102 captures (`tests/fixtures/copilot/*.txt`):
//! * The composer is a line at column 0 starting with `❯` (then a space and the text, or nothing
//!   when empty; `idle2`, `draft`) whose nearest non-empty line above is a full-width `─` rule at
//!   column 0, and which runs to the next such rule; both rules are as wide as the widest line on
//!   screen. Continuation lines (shift+enter / ctrl+j, or soft wraps) are indented two columns
//!   (`draft-multiline`, `draft-blankline`, `draft-long`, `draft-long-80`, `draft-20`).
//!   Submitted prompts in the scrollback are indented one column (` ❯ hello   15:40`) and never
//!   match. Variants of the prompt: `! ` in shell mode, whose empty composer shows the
//!   placeholder `Execute shell command` (`shell-mode`); `Start of Prompt Indicator` under
//!   `--screen-reader`, with continuations indented to line up under it (`screen-reader-*`);
//!   `(reverse-i-search)` during ctrl+r, always read as a draft (`reverse-search`).
//! * With the session sidebar open (`←` in an empty composer) the whole view is shifted right of
//!   a `│` column; lines are read after their first `│` (`sidebar`, `sidebar-draft`,
//!   `sidebar-focused`).
//! * The one footer line under the lower rule says a turn is in flight: a spinner glyph (`◎ ◉ ○
//!   ●`) with `Working`, `Executing` or `Waiting for background shells`, then `esc esc interrupt`
//!   or `esc esc edit prompt` (`busy`, `busy-tool`, `busy-shell-command`, `busy-draft`,
//!   `autopilot-busy`, `yolo-busy-tool`). Narrow panes cut it to `◉ Wo esc esc edit` or just
//!   `esc esc interrupt` (`busy-20`, `busy-shell-command-20`); `--screen-reader` drops the glyph
//!   (`screen-reader-busy`). Any of `esc esc`, a spinner glyph before a word, `Working` or
//!   `Executing` in the footer reads busy. Idle footers (`← open sidebar · Interactive · Manual
//!   Approval · …`, `Plan`, `Autopilot`, `Allow All`, `Shell`) carry none of them.
//! * `Waiting for background shells` in the footer: a shell the agent started outlived the
//!   tool's wait and the turn waits for it (`busy-bg-shells`): busy, and at least one background
//!   shell. Copilot shows no count of background shells anywhere else (a `[bgtool …]` prompt
//!   runs the same foreground `bash` tool in 1.0.102).
//! * `stashed` in the footer: a prompt was put aside with ctrl+s; it is reported as a draft
//!   (`stashed`, `stashed-80`). `any key close help` in the footer: the `?` quick help covers
//!   the timeline (`help-overlay`), reported as waiting.
//! * A permission prompt or dialog replaces the composer: a box (`╭…╮`, `│ … │`) at column 0
//!   holding a numbered chooser (`❯ 1. Yes`; `Current selection: 1. Yes` under
//!   `--screen-reader`) and/or a key hint such as `↑/↓ to navigate · enter to select · esc to
//!   cancel` or `↑↓ Navigate · Enter Select · Esc Cancel`. `Do you want to …?` names a
//!   permission prompt (`permission`, `permission-sleep`, `permission-80*`,
//!   `screen-reader-permission`); otherwise the box's title names the dialog (`trust-folder`,
//!   `autopilot-dialog`, `rewind`), and untitled pickers and panels are a `dialog open`
//!   (`model-picker`, `resume-picker`, `help-full`).
//! * The slash-command menu completes the composer to the highlighted command (`❯ /add-dir`
//!   after typing `/`): a draft (`slash-menu`, `slash-menu-80`, `screen-reader-slash`).
//! * After Copilot exits (`after-sigterm`) only the shell and Copilot's exit summary remain.
//!
//! Errs in the safe direction as every classifier does: no composer and no known dialog means
//! "cannot tell" (`composer_seen == false`), which makes park refuse.

use std::sync::OnceLock;

use regex::Regex;
use unicode_width::UnicodeWidthStr;

use crate::agents::screen::{is_blank, is_rule, parse_count, plain_lines, re, ScreenReading};

/// The prompt glyph of the composer, followed by one space when there is text.
const PROMPT: char = '❯';
/// What `--screen-reader` draws in place of `❯ ` (no space follows it).
const SCREEN_READER_PROMPT: &str = "Start of Prompt Indicator";
/// The shell-mode prompt (`!` typed into an empty composer), followed by one space.
const SHELL_PROMPT: char = '!';
/// The empty shell-mode composer's placeholder.
const SHELL_PLACEHOLDER: &str = "Execute shell command";
/// ctrl+r's prompt; whatever it shows is read as a draft.
const REVERSE_SEARCH: &str = "(reverse-i-search)";
/// The sidebar's right edge, and the side of every box.
const BAR: char = '│';
/// A heavy vertical bar (scrollbars, the slash menu's edge).
const HEAVY_BAR: char = '┃';
/// How many non-empty lines the footer may have: the footer line itself.
const FOOTER_LINES: usize = 1;
/// When no composer is found, dialogs are searched in this many trailing non-empty lines (the
/// permission box is 15 lines tall at 160 columns).
const BOTTOM_LINES: usize = 24;
/// Longest dialog title quoted back, in chars.
const MAX_TITLE: usize = 60;
/// What a stashed prompt (ctrl+s) is reported as.
const STASHED: &str = "(a prompt stashed with ctrl+s)";

/// Reads a plain capture.
pub fn read(capture: &str) -> ScreenReading {
    let lines = plain_lines(capture);
    let mut reading = ScreenReading::default();

    let Some(composer) = composer(&lines) else {
        reading.waiting = dialog(&lines);
        return reading;
    };
    reading.composer_seen = true;
    reading.draft = composer.draft;

    let footer = composer.footer.unwrap_or_default();
    static BUSY: OnceLock<Regex> = OnceLock::new();
    let busy = re(
        &BUSY,
        r"\besc esc\b|[◎◉○●]\s+\p{L}|\bWorking\b|\bExecuting\b|Waiting for background shells",
    );
    reading.busy = busy.is_match(&footer);

    static SHELLS: OnceLock<Regex> = OnceLock::new();
    let shells = re(&SHELLS, r"\b(?:(\d{1,10}) )?background shells?\b");
    reading.bg_shells = shells
        .captures(&footer)
        .map(|c| c.get(1).map_or(1, |n| parse_count(n.as_str()).max(1)))
        .unwrap_or(0);

    static STASH: OnceLock<Regex> = OnceLock::new();
    if reading.draft.is_none() && re(&STASH, r"\bstashed\b").is_match(&footer) {
        reading.draft = Some(STASHED.into());
    }
    static HELP: OnceLock<Regex> = OnceLock::new();
    if re(&HELP, r"\bany key close help\b").is_match(&footer) {
        reading.waiting = Some("quick help open".into());
    }
    reading
}

/// What the composer block says.
struct Composer {
    draft: Option<String>,
    /// The footer line under the lower rule (sidebar cut off), if any.
    footer: Option<String>,
}

/// How a composer line starts.
enum Prompt {
    /// `❯` (or its screen-reader spelling): everything typed is a draft.
    Normal,
    /// `!`: shell mode; the placeholder means empty.
    Shell,
    /// `(reverse-i-search)`: always a draft.
    Search,
}

/// The part of `line` in the main view: all of it, or with the sidebar open, what follows the
/// sidebar's edge (`None` for a line without one).
fn view(line: &str, sidebar: bool) -> Option<&str> {
    if sidebar {
        line.split_once(BAR).map(|(_, rest)| rest)
    } else {
        Some(line)
    }
}

/// The prompt of a composer line, the text after it and the indent of its continuation lines.
fn prompt(line: &str) -> Option<(Prompt, &str, usize)> {
    if let Some(rest) = line.strip_prefix(PROMPT) {
        return match rest.strip_prefix(' ') {
            Some(text) => Some((Prompt::Normal, text, 2)),
            None => rest.is_empty().then_some((Prompt::Normal, "", 2)),
        };
    }
    if let Some(text) = line.strip_prefix(SCREEN_READER_PROMPT) {
        return Some((Prompt::Normal, text, SCREEN_READER_PROMPT.width()));
    }
    if let Some(rest) = line.strip_prefix(SHELL_PROMPT) {
        return match rest.strip_prefix(' ') {
            Some(text) => Some((Prompt::Shell, text, 2)),
            None => rest.is_empty().then_some((Prompt::Shell, "", 2)),
        };
    }
    if line.starts_with(REVERSE_SEARCH) {
        return Some((Prompt::Search, line, 0));
    }
    None
}

/// The last composer on screen, read in the plain view or, failing that, the sidebar view.
fn composer(lines: &[String]) -> Option<Composer> {
    let widest = lines.iter().map(|l| l.width()).max().unwrap_or(0);
    (1..lines.len()).rev().find_map(|i| {
        composer_at(lines, i, false, widest).or_else(|| composer_at(lines, i, true, widest))
    })
}

/// A rule at column 0 of the view whose whole line is as wide as the screen.
fn is_fence(line: &str, sidebar: bool, widest: usize) -> bool {
    view(line, sidebar).is_some_and(is_rule) && line.width() >= widest
}

/// The composer whose prompt is on line `i`, if that line is one: fenced by two full-width rules
/// of the same width, with at most the footer line (and blanks) below.
fn composer_at(lines: &[String], i: usize, sidebar: bool, widest: usize) -> Option<Composer> {
    let (kind, first, indent) = prompt(view(&lines[i], sidebar)?)?;

    let upper = (0..i)
        .rev()
        .find(|&j| view(&lines[j], sidebar).is_none_or(|v| !is_blank(v)))?;
    if !is_fence(&lines[upper], sidebar, widest) {
        return None;
    }

    let mut parts = vec![first.trim_end().to_string()];
    let mut lower = None;
    for (k, line) in lines.iter().enumerate().skip(i + 1) {
        let v = view(line, sidebar)?;
        if is_rule(v) {
            lower = Some(k);
            break;
        }
        let spaces = v.len() - v.trim_start_matches(' ').len();
        parts.push(v[spaces.min(indent)..].trim_end().to_string());
    }
    let lower = lower?;
    if !is_fence(&lines[lower], sidebar, widest) || lines[lower].width() != lines[upper].width() {
        return None;
    }

    // Below the lower rule: the footer and nothing else (a shell prompt under a composer is the
    // last frame of a Copilot that is gone).
    let mut below = Vec::new();
    for line in &lines[lower + 1..] {
        match view(line, sidebar) {
            Some(v) if is_blank(v) => {}
            Some(v) => below.push(v.trim().to_string()),
            None if is_blank(line) => {}
            None => return None,
        }
    }
    if below.len() > FOOTER_LINES {
        return None;
    }

    let text = parts.join("\n");
    let text = text.trim();
    let draft = match kind {
        Prompt::Normal => (!text.is_empty()).then(|| text.to_string()),
        Prompt::Shell => {
            (!text.is_empty() && text != SHELL_PLACEHOLDER).then(|| format!("{SHELL_PROMPT}{text}"))
        }
        Prompt::Search => Some(text.to_string()),
    };
    Some(Composer {
        draft,
        footer: below.pop(),
    })
}

/// A screen line without the box sides around it (`│ ❯ 1. Yes   │` → ` ❯ 1. Yes`), keeping the
/// indent inside the innermost box.
fn unboxed(line: &str) -> &str {
    let mut s = line;
    while let Some(rest) = s.trim_start().strip_prefix([BAR, HEAVY_BAR]) {
        s = rest;
    }
    s.trim_end_matches(|c: char| c == BAR || c == HEAVY_BAR || c.is_whitespace())
}

/// A selected numbered option: `❯ 1. Yes`, `❯  1. hi there`, `Current selection: 1. Yes`.
fn selected_option_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(&R, r"^\s*(?:[❯›>]|Current selection:)\s*\d+\.\s")
}

/// An unselected numbered option: `  2. No, and tell Copilot what to do differently`.
fn other_option_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(&R, r"^\s+\d+\.\s")
}

/// A key hint of a chooser, picker or panel: `↑/↓ to navigate · … · esc to cancel`,
/// `↑↓ Navigate · Enter Select · Esc Cancel`, `↑/↓ scroll · esc close`.
fn is_key_hint(line: &str) -> bool {
    static R: OnceLock<Regex> = OnceLock::new();
    line.contains('↑') && re(&R, r"(?i)\besc\b").is_match(line)
}

/// Names the Copilot dialog at the bottom of `lines` (the composer is gone), if any.
fn dialog(lines: &[String]) -> Option<String> {
    let mut tail: Vec<(usize, &str)> = lines
        .iter()
        .enumerate()
        .rev()
        .filter(|(_, l)| !is_blank(l))
        .take(BOTTOM_LINES)
        .map(|(i, l)| (i, unboxed(l)))
        .collect();
    tail.reverse();

    let selected = tail
        .iter()
        .find(|(_, t)| selected_option_re().is_match(t))
        .map(|(i, _)| *i);
    let chooser = selected.filter(|_| {
        tail.iter()
            .any(|(_, t)| other_option_re().is_match(t) && !selected_option_re().is_match(t))
    });
    let hint = tail.iter().find(|(_, t)| is_key_hint(t)).map(|(i, _)| *i);
    let anchor = chooser.or(hint)?;

    static QUESTION: OnceLock<Regex> = OnceLock::new();
    let question = re(&QUESTION, r"^Do you want to .{1,200}\?$");
    if let Some((_, q)) = tail.iter().find(|(_, t)| question.is_match(t.trim())) {
        return Some(format!("permission prompt: {}", q.trim()));
    }
    match box_title(lines, anchor) {
        Some(title) => Some(format!("dialog: {title}")),
        None => Some("dialog open".into()),
    }
}

/// The title of the box at column 0 that holds line `anchor`: its first non-empty line.
fn box_title(lines: &[String], anchor: usize) -> Option<String> {
    let top = (0..anchor)
        .rev()
        .find(|&j| lines[j].starts_with(['╭', '╰']))?;
    if !lines[top].starts_with('╭') {
        return None; // the nearest box above closed before the anchor
    }
    let title = lines[top + 1..anchor]
        .iter()
        .map(|l| unboxed(l).trim())
        .find(|t| !t.is_empty())?;
    if title.chars().all(|c| c == '─') {
        return None;
    }
    Some(title.chars().take(MAX_TITLE).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    use crate::agents::screen::test_kit::{
        busy, fixture, idle, reads, unknown, waiting, with_draft,
    };

    const PERMISSION: &str = "permission prompt: Do you want to run this command?";

    reads! {
        // Captures from the park session that set Copilot up (160x45).
        idle2, "copilot/idle2.txt", idle();
        after_clear, "copilot/after-clear.txt", idle();
        resumed, "copilot/resumed.txt", idle();
        draft, "copilot/draft.txt", with_draft("an unsent draft line");
        busy_waiting_for_the_model, "copilot/busy.txt", busy();
        permission, "copilot/permission.txt", waiting(PERMISSION);

        // Idle at every width, in every mode.
        idle_start, "copilot/idle-start.txt", idle();
        idle_after_tool, "copilot/idle-after-tool.txt", idle();
        idle_80, "copilot/idle-80.txt", idle();
        idle_40, "copilot/idle-40.txt", idle();
        idle_20, "copilot/idle-20.txt", idle();
        idle_after_deny_80, "copilot/after-deny-80.txt", idle();
        plan_mode, "copilot/plan-mode.txt", idle();
        autopilot_idle, "copilot/autopilot-idle.txt", idle();
        yolo_idle, "copilot/yolo-idle.txt", idle();
        screen_reader_idle, "copilot/screen-reader-idle.txt", idle();
        shell_mode_placeholder, "copilot/shell-mode.txt", idle();
        sidebar_open, "copilot/sidebar.txt", idle();
        sidebar_focused, "copilot/sidebar-focused.txt", idle();

        // Drafts.
        draft_multiline, "copilot/draft-multiline.txt",
            with_draft("first line of a draft\nsecond line\nthird via ctrl-j");
        draft_blank_line, "copilot/draft-blankline.txt",
            with_draft("first line of a draft\nsecond line\nthird via ctrl-j\n\n  indented after blank");
        draft_long, "copilot/draft-long.txt", with_draft(
            "this is a very long draft that keeps going and going past the right edge of the pane \
             so that the composer has to wrap it onto a second and maybe even a\nthird row of text, \
             which is what we want to see here in order to check the joining of continuation lines");
        draft_long_80, "copilot/draft-long-80.txt", with_draft(
            "this is a very long draft that keeps going and going past the right edge\n\
             of the pane so that the composer has to wrap it onto a second and maybe\n\
             even a third row of text, which is what we want to see here in order to\n\
             check the joining of continuation lines");
        draft_20, "copilot/draft-20.txt", with_draft("a narrow draft\nthat wraps\nseveral times");
        yolo_draft, "copilot/yolo-draft.txt", with_draft("yolo draft text");
        sidebar_draft, "copilot/sidebar-draft.txt", with_draft("typed with sidebar");
        screen_reader_draft, "copilot/screen-reader-draft.txt",
            with_draft("screen reader draft\nline two");
        slash_menu, "copilot/slash-menu.txt", with_draft("/add-dir");
        slash_menu_80, "copilot/slash-menu-80.txt", with_draft("/add-dir");
        screen_reader_slash_menu, "copilot/screen-reader-slash.txt", with_draft("/add-dir");
        reverse_search, "copilot/reverse-search.txt", with_draft("(reverse-i-search)`':");
        stashed, "copilot/stashed.txt", with_draft(STASHED);
        stashed_80, "copilot/stashed-80.txt", with_draft(STASHED);

        // A turn in flight.
        busy_tool, "copilot/busy-tool.txt", busy();
        busy_tool_50, "copilot/busy-tool-50.txt", busy();
        busy_tool_30, "copilot/busy-tool-30.txt", busy();
        busy_20, "copilot/busy-20.txt", busy();
        busy_shell_command, "copilot/busy-shell-command.txt", busy();
        busy_shell_command_20, "copilot/busy-shell-command-20.txt", busy();
        busy_yolo_tool, "copilot/yolo-busy-tool.txt", busy();
        busy_autopilot, "copilot/autopilot-busy.txt", busy();
        busy_screen_reader, "copilot/screen-reader-busy.txt", busy();
        busy_with_a_draft, "copilot/busy-draft.txt", ScreenReading {
            draft: Some("a queued draft while busy".into()),
            ..busy()
        };
        busy_waiting_for_background_shells, "copilot/busy-bg-shells.txt", ScreenReading {
            bg_shells: 1,
            ..busy()
        };

        // Permission prompts and dialogs.
        permission_three_options, "copilot/permission-sleep.txt", waiting(PERMISSION);
        permission_80, "copilot/permission-80.txt", waiting(PERMISSION);
        permission_80_second_selected, "copilot/permission-80-second.txt", waiting(PERMISSION);
        permission_80_typing_feedback, "copilot/permission-80-feedback.txt", waiting(PERMISSION);
        permission_screen_reader, "copilot/screen-reader-permission.txt", waiting(PERMISSION);
        trust_folder, "copilot/trust-folder.txt", waiting("dialog: Confirm folder trust");
        autopilot_dialog, "copilot/autopilot-dialog.txt", waiting("dialog: Enable autopilot mode");
        rewind_single_option, "copilot/rewind.txt", waiting("dialog: Rewind to a previous point");
        model_picker, "copilot/model-picker.txt", waiting("dialog open");
        resume_picker, "copilot/resume-picker.txt", waiting("dialog open");
        full_help, "copilot/help-full.txt", waiting("dialog open");
        quick_help, "copilot/help-overlay.txt", ScreenReading {
            waiting: Some("quick help open".into()),
            ..idle()
        };

        // Gone.
        after_sigterm, "copilot/after-sigterm.txt", unknown();
    }

    // ---- synthetic edge cases -----------------------------------------------------------

    fn rule(width: usize) -> String {
        "─".repeat(width)
    }

    /// A screen: `body` lines, then the composer `composer` fenced by 60-column rules, then
    /// `footer`.
    fn screen(body: &str, composer: &str, footer: &str) -> String {
        let r = rule(60);
        format!("{body}\n /tmp/p\n{r}\n{composer}\n{r}\n{footer}\n")
    }

    const IDLE_FOOTER: &str = " ← open sidebar · Interactive · Manual Approval   gpt-4.1";

    #[test]
    fn scrollback_prompts_are_not_drafts() {
        let body = " ❯ hello from copilot              15:40\n\n ● Hello.\n\n ❯ run it\n";
        assert_eq!(read(&screen(body, "❯", IDLE_FOOTER)), idle());
        // Without the composer, the scrollback alone is nothing.
        let r = rule(60);
        let s = format!("{r}\n ❯ hello from copilot              15:40\n{r}\n{IDLE_FOOTER}\n");
        assert_eq!(read(&s), unknown());
    }

    #[test]
    fn a_rule_less_screen_cannot_be_told() {
        for s in [
            "",
            "\n\n",
            "bash-5.2# ",
            "❯\n",
            "❯ a draft\n ← open sidebar · Interactive\n",
            " /tmp/p\n❯ a draft\n\n ◎ Working esc esc interrupt\n",
        ] {
            assert_eq!(read(s), unknown(), "{s:?}");
        }
    }

    #[test]
    fn a_draft_mentioning_working_is_a_draft_not_busy() {
        let s = screen(
            "",
            "❯ ◎ Working esc esc interrupt\n  Waiting for background shells · stashed",
            IDLE_FOOTER,
        );
        assert_eq!(
            read(&s),
            with_draft("◎ Working esc esc interrupt\nWaiting for background shells · stashed")
        );
    }

    #[test]
    fn rules_must_be_full_width_and_equal() {
        let wide = format!("{}x", " ".repeat(60));
        // A line wider than the rules: they are not the composer's fences.
        assert_eq!(read(&screen(&wide, "❯", IDLE_FOOTER)), unknown());
        // Fences of different widths.
        let s = format!("{}\n❯\n{}\n{IDLE_FOOTER}\n", rule(60), rule(59));
        assert_eq!(read(&s), unknown());
        // A short rule is text.
        let s = format!("{}\n❯\n{}\n", rule(5), rule(5));
        assert_eq!(read(&s), unknown());
    }

    #[test]
    fn anything_but_the_footer_below_the_composer_cannot_be_told() {
        let s = format!("{}bash-5.2# \n", screen("", "❯", IDLE_FOOTER));
        assert_eq!(read(&s), unknown());
        // Blank lines below are fine, and so is a missing footer.
        let s = format!("{}\n\n", screen("", "❯", IDLE_FOOTER));
        assert_eq!(read(&s), idle());
        let s = format!("{}\n❯\n{}\n", rule(60), rule(60));
        assert_eq!(read(&s), idle());
    }

    #[test]
    fn the_last_composer_wins() {
        let first = screen("", "❯ old frame", IDLE_FOOTER);
        let s = format!("{first}{}", screen("", "❯", IDLE_FOOTER));
        assert_eq!(read(&s), idle());
    }

    #[test]
    fn a_prompt_glyph_glued_to_text_is_not_a_composer() {
        assert_eq!(read(&screen("", "❯x", IDLE_FOOTER)), unknown());
        assert_eq!(read(&screen("", "!x", IDLE_FOOTER)), unknown());
    }

    #[test]
    fn shell_mode_text_is_a_draft() {
        let s = fixture!("copilot/shell-mode.txt").replace("! Execute shell command", "! sleep 40");
        assert_eq!(read(&s), with_draft("!sleep 40"));
        // The placeholder is only empty when it is all there is.
        let s = screen("", "! Execute shell command\n  rm -rf build", IDLE_FOOTER);
        assert_eq!(read(&s), with_draft("!Execute shell command\nrm -rf build"));
    }

    #[test]
    fn cjk_and_emoji_drafts_are_quoted_back() {
        let s = screen("", "❯ 第一行 🚀\n  second", IDLE_FOOTER);
        assert_eq!(read(&s), with_draft("第一行 🚀\nsecond"));
    }

    #[test]
    fn background_shell_counts() {
        let s = screen(
            "",
            "❯",
            " ● Waiting for 3 background shells · esc esc interrupt",
        );
        assert_eq!(
            read(&s),
            ScreenReading {
                bg_shells: 3,
                ..busy()
            }
        );
    }

    #[test]
    fn escapes_are_stripped_first() {
        let r = rule(40);
        let s = format!(
            "\x1b[2m{r}\x1b[0m\n\x1b[0m\x1b[39m❯ hi\n\x1b[2m{r}\x1b[0m\n \x1b[34m●\x1b[39m Working · 57 B \x1b[1mesc esc\x1b[0m interrupt\n"
        );
        assert_eq!(
            read(&s),
            ScreenReading {
                draft: Some("hi".into()),
                ..busy()
            }
        );
    }

    #[test]
    fn a_chooser_without_a_hint_or_question_is_a_dialog() {
        let s = " Pick one\n\n ❯ 1. Alpha\n   2. Beta\n";
        assert_eq!(read(s), waiting("dialog open"));
        // One option alone needs the key hint.
        assert_eq!(read(" ❯ 1. Alpha\n"), unknown());
    }

    #[test]
    fn a_box_closed_above_the_chooser_gives_no_title() {
        let s = "╭────╮\n│ old │\n╰────╯\n ❯ 1. Alpha\n   2. Beta\n";
        assert_eq!(read(s), waiting("dialog open"));
    }

    #[test]
    fn the_sidebar_view_needs_the_sidebar_edge_on_every_line() {
        let r = rule(40);
        let side = " ".repeat(10);
        let s = format!("{side}│{r}\n{side}│❯ x\n{side}  continued\n{side}│{r}\n");
        assert_eq!(read(&s), unknown());
        let s = format!("{side}│{r}\n{side}│❯ x\n{side}│  continued\n{side}│{r}\n");
        assert_eq!(read(&s), with_draft("x\ncontinued"));
    }

    fn screenish() -> impl Strategy<Value = String> {
        let token = prop_oneof![
            Just("❯".to_string()),
            Just("❯ ".to_string()),
            Just("! ".to_string()),
            Just(SCREEN_READER_PROMPT.to_string()),
            Just(REVERSE_SEARCH.to_string()),
            Just(rule(12)),
            Just("\n".to_string()),
            Just("  ".to_string()),
            Just("│".to_string()),
            Just("╭──╮".to_string()),
            Just("╰──╯".to_string()),
            Just("1. ".to_string()),
            Just("Do you want to x?".to_string()),
            Just("↑/↓ esc".to_string()),
            Just("◎ Working esc esc interrupt".to_string()),
            Just("99999999999 background shells".to_string()),
            Just("stashed".to_string()),
            any::<String>(),
        ];
        prop::collection::vec(token, 0..40).prop_map(|v| v.concat())
    }

    proptest! {
        #[test]
        fn never_panics_and_drafts_need_a_composer(s in screenish()) {
            let r = read(&s);
            prop_assert!(r.draft.is_none() || r.composer_seen);
            prop_assert!(!r.busy || r.composer_seen);
        }

        #[test]
        fn never_panics_on_arbitrary_unicode(s in any::<String>()) {
            let _ = read(&s);
        }
    }
}
