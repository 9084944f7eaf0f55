//! Gemini CLI's screen (a plain `capture-pane -p` capture; escapes, if any, are stripped first):
//! busy, waiting on a tool confirmation or dialog, a draft in the composer, background processes.
//!
//! The cues come from real 0.61.0 captures (`tests/fixtures/gemini/*.txt`) and its bundle
//! (`interactiveCli-*.js`: `Composer`, `StatusRow`, `InputPrompt`, `LoadingIndicator`,
//! `computeTerminalTitle`):
//! * Below the history the composer area is: a toast line (`Press Ctrl+C again to exit.`),
//!   status row 1 (the spinner, or the `? for shortcuts` hint), a dim full-width `─` rule at
//!   column 0, status row 2 (`Shift+Tab to accept edits`, `auto-accept edits …`, `plan …`,
//!   `YOLO Ctrl+Y`, `shell mode enabled (esc to disable)`, and the context summary such as
//!   `1 GEMINI.md file · 1 Background process`; on narrow panes in a column), then the prompt
//!   line, then the footer (`workspace (/directory) … sandbox … /model`) or the `/` and `@`
//!   menus. The prompt line sits at column 1: ` > ` (` * ` in YOLO mode, ` ! ` in shell mode,
//!   ` (r:)  ` during ctrl+r), then the text; continuation lines (ctrl+j, `\` + Enter, soft
//!   wraps) are indented to the text's column, blank lines stay blank. It is padded by blank
//!   lines (no true colour: `idle`, `draft-*`), by `▄▄▄`/`▀▀▀` lines (`COLORTERM=truecolor`:
//!   `tc-*`), or fenced by its own `─` rules (`NO_COLOR`: `nocolor-*`; per the bundle also
//!   `ui.useBackgroundColor: false`); with `ui.useAlternateBuffer` the `/` menu opens between row 2 and the
//!   prompt (`alt-*`). The composer is recognised only when its prompt line has such a
//!   full-width rule above it, with only indented lines, blanks, `▄▄▄` and the composer's own
//!   fence in between, and with nothing from a later frame below it (a box, a `✦` reply, another
//!   rule): a pane narrowed while Gemini ran keeps old rules and prompts above the live screen
//!   (`permission-80`, `idle-50-resized`, `draft-long-50-resized`). Submitted prompts in the
//!   scrollback look exactly like the prompt line (` > hello`; `> hello` under `NO_COLOR`), but
//!   never with the status rule above them.
//! * The empty composer shows a placeholder two columns further right (`>   Type your message or
//!   @path/to/file`, in shell mode `Type your shell command`, vim-mode variants), wrapped on
//!   narrow panes (`idle-30`); anything else is a draft (`draft`, `draft-multiline`,
//!   `draft-long*`, `draft-50`, `yolo-draft`, `auto-edit-draft`, `shell-mode-draft` → `!ls -la`,
//!   `slash-menu` and `alt-slash` → `/`, `at-menu`). Reverse search is always reported as a
//!   draft (`(r:)`, `(r:) tool`: `reverse-search*`).
//! * A turn in flight: status row 1, right above the rule, starts with the braille `dots`
//!   spinner and says `(esc to cancel, 2s)` (`busy*`, `tc-busy-*`, `nocolor-busy-80`,
//!   `yolo-busy-tool`, `alt-busy`; cut to `(esc to can` at 26 columns: `busy-26`), or `Executing
//!   Hook: …`, or `! Shell awaiting input` while an interactive command runs. Queued prompts
//!   (`Queued (press ↑ to edit):`) sit above it and are not a draft (`busy-queued-80`). The
//!   exit warning toast (`ctrl-c-once*`) and the `?` shortcuts help (`shortcuts-help`) above an
//!   idle composer are idle.
//! * A tool confirmation (`Allow execution of [Shell]?`, `Apply this change?`, `Do you want to
//!   proceed?`, …) is a round box with a chooser (`● 1. Allow once`, `  2. …`); by default it
//!   replaces the composer (`permission*`, `tc-permission-80`, `alt-permission`), with
//!   `ui.collapseDrawerDuringApproval: false` it sits above a live composer
//!   (`nocollapse-permission*`). Other dialogs also replace the composer: a box whose chooser has
//!   `●` (`model-dialog`, `settings-dialog`, `double-esc` rewind) or which says `Esc to close`,
//!   named by the box's first line; the `/resume` picker (`Chat Sessions (1 total)`).
//! * Background processes: `N Background process(es)` in status row 2 (`bg-shell`); their view
//!   (ctrl+b) focused above the composer takes the keyboard: waiting (`bg-view`).
//! * Focus UI (tab twice; persisted) drops the rule and the footer: an empty composer is
//!   recognised by `press tab twice for more` in row 1 right above it with nothing below it
//!   (`focus-mode`, `focus-busy`); a draft there hides that hint and cannot be told
//!   (`focus-draft`).
//! * After Gemini exits or is killed the last frame stays: the shell prompt printed over the
//!   empty composer's placeholder (`after-sigterm`: `> bash-5.2# r message or @path/to/file`)
//!   cannot be told; printed after a draft it reads as that draft (`tc-after-sigterm-80`), which
//!   refuses too; `/quit` and ctrl+c twice leave the session summary (`after-quit`,
//!   `after-ctrl-c-exit`). `--screen-reader` draws no rules at all (`sr-idle`): cannot tell.
//!
//! Pane titles (`computeTerminalTitle`, padded to 80 columns): `◇  Ready (proj)` idle,
//! `✦  Working… (proj)` or `✦  <thought subject> (proj)` busy, `⏲  Working… (proj)` busy with no
//! output for a while, `✋  Action Required (proj)` waiting on a confirmation; `Gemini CLI
//! (proj)` when dynamic titles are off, empty after exit. Dialogs opened by slash commands keep
//! `◇  Ready`.
//!
//! Errs in the safe direction as every classifier does: no composer and no known dialog means
//! "cannot tell" (`composer_seen == false`), which makes park refuse.

use std::sync::OnceLock;

use regex::Regex;
use unicode_width::UnicodeWidthStr;

use crate::agents::screen::{is_blank, is_rule, parse_count, plain_lines, re, ScreenReading};

/// The empty composer's placeholders (`InputPrompt`'s `placeholder` prop), whitespace-normalised.
const PLACEHOLDERS: &[&str] = &[
    "Type your message or @path/to/file",
    "Type your shell command",
    "Press 'Esc' for NORMAL mode.",
    "Press 'i' for INSERT mode.",
];
/// Row 1's hint in focus UI (clean UI details hidden).
const FOCUS_HINT: &str = "press tab twice for more";
/// How many lines the status rule may sit above the prompt line (row 2 in a column on narrow
/// panes, padding, the `/` menu in the alternate buffer).
const STATUS_REACH: usize = 16;
/// How many non-empty lines status row 1 (with the toast) may take right above the rule.
const ROW1_LINES: usize = 2;
/// How many indented lines (queued prompts, toast, row 1) may lie between a pending box and the
/// status rule.
const PENDING_REACH: usize = 12;
/// When no composer is found, dialogs are searched in this many trailing non-empty lines.
const BOTTOM_LINES: usize = 40;
/// A placeholder whose head was overwritten keeps at least this many of its last chars.
const OVERWRITE_MIN: usize = 10;
/// Longest dialog title quoted back, in chars.
const MAX_TITLE: usize = 60;

/// Reads a plain capture.
pub fn read(capture: &str) -> ScreenReading {
    let lines = plain_lines(capture);
    let mut reading = ScreenReading::default();

    let Some(composer) = composer(&lines) else {
        reading.waiting = dialog(&lines);
        return reading;
    };
    if composer.overwritten {
        // A shell prompt printed over the placeholder: Gemini is gone.
        return reading;
    }
    reading.composer_seen = true;
    reading.draft = composer.draft;

    // Row 1 of a turn in flight: the `dots` spinner (braille), `(esc to cancel, 2s)` (cut to
    // `(esc to can` on narrow panes), a running hook, an interactive command waiting for input.
    static BUSY: OnceLock<Regex> = OnceLock::new();
    let busy = re(
        &BUSY,
        r"^\s*[\u{2801}-\u{28FF}]\s|\(esc to ca|Shell awaiting input|Executing Hooks?:",
    );
    reading.busy = composer.row1.iter().any(|&j| busy.is_match(&lines[j]));

    static PROCESSES: OnceLock<Regex> = OnceLock::new();
    let processes = re(&PROCESSES, r"\b(\d{1,10}) Background process(?:es)?\b");
    reading.bg_shells = composer
        .row2
        .iter()
        .find_map(|&j| processes.captures(&lines[j]))
        .map(|c| parse_count(&c[1]))
        .unwrap_or(0);

    if let Some(rule) = composer.rule {
        reading.waiting = pending_dialog(&lines, rule);
    }
    reading
}

/// What the pane title says: `Some(true)` busy or waiting, `Some(false)` ready, `None` unknown.
pub fn title_busy(title: &str) -> Option<bool> {
    let t = title.trim();
    let mut chars = t.chars();
    let glyph = chars.next()?;
    let rest = chars.as_str();
    if !rest.starts_with(char::is_whitespace) {
        return None;
    }
    match glyph {
        '◇' if rest.trim_start().starts_with("Ready") => Some(false),
        '✦' | '⏲' | '✋' if !rest.trim().is_empty() => Some(true),
        _ => None,
    }
}

/// How the prompt line starts.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// `>` or YOLO's `*`.
    Normal,
    /// `!`: a shell command.
    Shell,
    /// `(r:)`: ctrl+r reverse search; always a draft.
    Search,
}

/// The prompt of a prompt line, the text after it and the column of that text (where
/// continuation lines start).
fn prompt(line: &str) -> Option<(Mode, &str, usize)> {
    let rest = line.strip_prefix(' ')?;
    for (glyph, mode) in [('>', Mode::Normal), ('*', Mode::Normal), ('!', Mode::Shell)] {
        if let Some(r) = rest.strip_prefix(glyph) {
            if r.is_empty() {
                return Some((mode, "", 3));
            }
            return r.strip_prefix(' ').map(|text| (mode, text, 3));
        }
    }
    let r = rest.strip_prefix("(r:)")?;
    if r.is_empty() {
        return Some((Mode::Search, "", 7));
    }
    r.strip_prefix("  ").map(|text| (Mode::Search, text, 7))
}

/// What the composer block says.
struct Composer {
    draft: Option<String>,
    /// The placeholder with its head overwritten (a shell prompt after Gemini exited).
    overwritten: bool,
    /// The status rule (or the composer's own fence standing in for it).
    rule: Option<usize>,
    /// Status row 1 (and the toast): the non-empty lines right above the rule.
    row1: Vec<usize>,
    /// The lines between the rule and the prompt line (status row 2).
    row2: Vec<usize>,
}

/// A `─` rule at column 0 as wide as the widest line on screen (the status rule and the
/// `NO_COLOR` composer fence span the pane).
fn is_full_rule(line: &str, widest: usize) -> bool {
    is_rule(line) && line.trim_end().width() >= widest
}

/// A line of one repeated half block: the true-colour composer padding (`▄▄▄` above, `▀▀▀`
/// below).
fn is_half_blocks(line: &str, block: char) -> bool {
    let t = line.trim_end();
    !t.is_empty() && t.chars().all(|c| c == block)
}

/// The last composer on screen: the last prompt line with the status rule above it, or the
/// focus-UI composer.
fn composer(lines: &[String]) -> Option<Composer> {
    let widest = lines
        .iter()
        .map(|l| l.trim_end().width())
        .max()
        .unwrap_or(0);
    (0..lines.len())
        .rev()
        .find_map(|i| composer_at(lines, i, widest))
}

/// The composer whose prompt line is line `i`, if it is one.
fn composer_at(lines: &[String], i: usize, widest: usize) -> Option<Composer> {
    let (mode, first, indent) = prompt(&lines[i])?;

    // The text block: continuation lines indented to the text, blank lines inside it.
    let pad = " ".repeat(indent);
    let mut parts = vec![first.trim_end().to_string()];
    for line in &lines[i + 1..] {
        if is_blank(line) {
            parts.push(String::new());
        } else if let Some(text) = line.strip_prefix(pad.as_str()) {
            parts.push(text.trim_end().to_string());
        } else {
            break;
        }
    }
    while parts.len() > 1 && parts.last().is_some_and(|p| p.is_empty()) {
        parts.pop();
    }
    let end = i + parts.len();
    let placeholder = is_placeholder(first, &parts);
    if newer_frame_below(lines, i, end, widest) {
        return None;
    }

    let (rule, row1, row2) = match status_rule(lines, i, end, widest) {
        Some(rule) => {
            let row1: Vec<usize> = (0..rule)
                .rev()
                .take_while(|&j| !is_blank(&lines[j]))
                .take(ROW1_LINES)
                .collect();
            (Some(rule), row1, (rule + 1..i).collect())
        }
        None => {
            // Focus UI: no rule and no footer; the hint in row 1 marks the empty composer.
            let row1 = focus_row1(lines, i)?;
            let below_clear = lines[end..]
                .iter()
                .all(|l| is_blank(l) || is_half_blocks(l, '▀'));
            if !placeholder || !below_clear {
                return None;
            }
            (None, vec![row1], Vec::new())
        }
    };

    let text = parts.join("\n");
    let text = text.trim();
    let draft = match mode {
        Mode::Search if placeholder || text.is_empty() => Some("(r:)".to_string()),
        Mode::Search => Some(format!("(r:) {text}")),
        _ if placeholder || text.is_empty() => None,
        Mode::Shell => Some(format!("!{text}")),
        Mode::Normal => Some(text.to_string()),
    };
    Some(Composer {
        draft,
        overwritten: !placeholder && overwritten_placeholder(first),
        rule,
        row1,
        row2,
    })
}

/// The status rule above the prompt line `i` (whose text block ends before line `end`): the
/// nearest full-width rule within reach, with only status row 2, padding and menu lines (all
/// indented) in between. A rule right above the prompt line is the composer's own `NO_COLOR`
/// fence; the status rule is then further up, and without one the fence stands in for it when
/// the lower fence closes the text block.
fn status_rule(lines: &[String], i: usize, end: usize, widest: usize) -> Option<usize> {
    let lo = i.saturating_sub(STATUS_REACH);
    let mut fence = None;
    for j in (lo..i).rev() {
        let line = &lines[j];
        if is_full_rule(line, widest) {
            if j + 1 == i {
                fence = Some(j);
                continue;
            }
            return Some(j);
        }
        let allowed = is_blank(line)
            || (j + 1 == i && is_half_blocks(line, '▄'))
            || (line.starts_with(' ') && prompt(line).is_none());
        if !allowed {
            break;
        }
    }
    let closed = lines.get(end).is_some_and(|l| is_full_rule(l, widest));
    fence.filter(|_| closed)
}

/// True when something below the text block of the prompt line `i` (ending before line `end`)
/// belongs to a later frame than the composer: a box, a reply, or a rule other than the lower
/// half of a `NO_COLOR` fence. A stale composer left in the scrollback (a pane narrowed while
/// Gemini ran) sits above the live screen, which may be a dialog.
fn newer_frame_below(lines: &[String], i: usize, end: usize, widest: usize) -> bool {
    let fenced = i > 0 && is_full_rule(&lines[i - 1], widest);
    lines.iter().enumerate().skip(end).any(|(j, l)| {
        l.starts_with(['╭', '╰', '│', '┌', '└', '✦'])
            || (is_full_rule(l, widest) && !(fenced && j == end))
    })
}

/// Focus UI's row 1 above the prompt line `i`: the nearest non-empty line (past the padding),
/// ending in the focus hint.
fn focus_row1(lines: &[String], i: usize) -> Option<usize> {
    let j = (0..i)
        .rev()
        .take(3)
        .find(|&j| !is_blank(&lines[j]) && !is_half_blocks(&lines[j], '▄'))?;
    lines[j].trim_end().ends_with(FOCUS_HINT).then_some(j)
}

/// The placeholder starts two columns after the prompt (where a draft starts right after it)
/// and may wrap.
fn is_placeholder(first: &str, parts: &[String]) -> bool {
    if !first.starts_with("  ") {
        return false;
    }
    let text = parts.join(" ");
    let words: Vec<&str> = text.split_whitespace().collect();
    PLACEHOLDERS.iter().any(|p| {
        let want: Vec<&str> = p.split_whitespace().collect();
        words == want
    })
}

/// True when `first` (the prompt line's text) is a placeholder whose head was overwritten in
/// place (`bash-5.2# r message or @path/to/file`): same length, a long common tail at the same
/// columns, a different head.
fn overwritten_placeholder(first: &str) -> bool {
    let got: Vec<char> = first.trim_end().chars().collect();
    PLACEHOLDERS.iter().any(|p| {
        let want: Vec<char> = format!("  {p}").chars().collect();
        if got.is_empty() || got.len() > want.len() {
            return false;
        }
        let want = &want[..got.len()];
        let tail = got
            .iter()
            .rev()
            .zip(want.iter().rev())
            .take_while(|(a, b)| a == b)
            .count();
        tail >= OVERWRITE_MIN && tail < got.len()
    })
}

// ---------------------------------------------------------------------------------------------
// Dialogs
// ---------------------------------------------------------------------------------------------

/// A screen line without the box sides around it (`│ ● 1. Allow once   │` → ` ● 1. Allow
/// once`), keeping the indent inside the innermost box.
fn unboxed(line: &str) -> &str {
    let mut s = line;
    while let Some(rest) = s.trim_start().strip_prefix('│') {
        s = rest;
    }
    s.trim_end_matches(|c: char| c == '│' || c.is_whitespace())
}

/// The selected option of a chooser: `● 1. Allow once`, `●  9. …`.
fn selected_option_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(&R, r"^\s*●\s*\d+\.\s")
}

/// Another option of a chooser: `  2. Allow for this session`.
fn other_option_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(&R, r"^\s+\d+\.\s")
}

/// Names the dialog in `body` (unboxed lines) when it holds a chooser or a key hint; `title`
/// names it when no permission question does.
fn classify(body: &[&str], title: Option<String>) -> Option<String> {
    let chooser = body.iter().any(|l| selected_option_re().is_match(l))
        && body
            .iter()
            .any(|l| other_option_re().is_match(l) && !selected_option_re().is_match(l));
    // Lists without numbers (settings, rewind) say how to close them. The spinner's `(esc to
    // cancel, 2s)` is no hint.
    static HINT: OnceLock<Regex> = OnceLock::new();
    let hint = re(
        &HINT,
        r"(?i)\besc to close\b|\besc to cancel(?:$|[^,])|\(press esc\b",
    );
    if !chooser && !body.iter().any(|l| hint.is_match(l)) {
        return None;
    }
    static QUESTION: OnceLock<Regex> = OnceLock::new();
    let question = re(
        &QUESTION,
        r"^(?:Allow execution of .{1,200}\?|Apply this change\?|Do you want to proceed\?|Ready to start implementation\?)$",
    );
    if let Some(q) = body.iter().map(|l| l.trim()).find(|l| question.is_match(l)) {
        return Some(format!("permission prompt: {q}"));
    }
    if chooser && body.iter().any(|l| l.trim_start().starts_with("? ")) {
        // A tool awaiting approval (`? Shell  touch x.txt`) whose question wrapped.
        return Some("permission prompt".into());
    }
    Some(match title {
        Some(t) => format!("dialog: {t}"),
        None => "dialog open".into(),
    })
}

/// The first non-empty line inside the box `body` (without a `> ` or `? ` marker).
fn box_title(body: &[&str]) -> Option<String> {
    let t = body.iter().map(|l| l.trim()).find(|l| !l.is_empty())?;
    let t = t
        .strip_prefix("> ")
        .or_else(|| t.strip_prefix("? "))
        .unwrap_or(t)
        .trim();
    if t.is_empty() || t.chars().all(|c| "─┌┐╭╮".contains(c)) {
        return None;
    }
    Some(t.chars().take(MAX_TITLE).collect())
}

/// The box whose bottom edge is line `bottom` (`╰…╯` or `└…┘` at column 0): its first line
/// (the top edge, or the screen's first line when the top scrolled away).
fn box_top(lines: &[String], bottom: usize) -> usize {
    let mut top = bottom;
    while top > 0 && lines[top - 1].starts_with('│') {
        top -= 1;
    }
    if top > 0 && lines[top - 1].starts_with(['╭', '┌']) {
        top -= 1;
    }
    top
}

/// Names what the box `lines[top..=bottom]` asks of the user, if anything.
fn box_dialog(lines: &[String], top: usize, bottom: usize) -> Option<String> {
    let inner: Vec<&str> = lines[top..=bottom]
        .iter()
        .filter(|l| !l.starts_with(['╭', '┌', '╰', '└']))
        .map(|l| unboxed(l))
        .collect();
    if inner
        .iter()
        .any(|l| l.contains("(Focused)") && l.contains("Close (Ctrl+B)"))
    {
        return Some("background process view focused".into());
    }
    classify(&inner, box_title(&inner))
}

/// A dialog still pending above a live composer (`ui.collapseDrawerDuringApproval: false`):
/// a box right above the status rows, with only indented lines (queued prompts, the toast,
/// row 1) between.
fn pending_dialog(lines: &[String], rule: usize) -> Option<String> {
    let mut j = rule;
    let mut walked = 0;
    while j > 0 {
        j -= 1;
        let line = &lines[j];
        if is_blank(line) {
            continue;
        }
        if line.starts_with(['╰', '└']) {
            let top = box_top(lines, j);
            if let Some(w) = box_dialog(lines, top, j) {
                return Some(w);
            }
            j = top;
            continue;
        }
        walked += 1;
        // Narrow panes draw the toast at column 0 (`Press Ctrl+C again to exit.`).
        let indented = line.starts_with(' ') || line.starts_with("Press ");
        if walked > PENDING_REACH || !indented || prompt(line).is_some() {
            break;
        }
    }
    None
}

/// Names the Gemini dialog at the bottom of `lines` (the composer is gone), if any.
fn dialog(lines: &[String]) -> Option<String> {
    let last = (0..lines.len()).rev().find(|&j| !is_blank(&lines[j]))?;
    if lines[last].starts_with(['╰', '└']) {
        let top = box_top(lines, last);
        if let Some(w) = box_dialog(lines, top, last) {
            return Some(w);
        }
    }
    let tail: Vec<&str> = lines
        .iter()
        .rev()
        .filter(|l| !is_blank(l))
        .take(BOTTOM_LINES)
        .map(|l| unboxed(l))
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    static PICKER: OnceLock<Regex> = OnceLock::new();
    if tail
        .iter()
        .any(|l| re(&PICKER, r"^\s*Chat Sessions \(\d+ total\)").is_match(l))
    {
        return Some("resume picker".into());
    }
    classify(&tail, None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    use crate::agents::screen::test_kit::{busy, idle, reads, unknown, waiting, with_draft};

    const SHELL_PERMISSION: &str = "permission prompt: Allow execution of [Shell]?";

    reads! {
        // Captures from the session that set Gemini up (160x45, no true colour).
        idle_start, "gemini/idle.txt", idle();
        draft, "gemini/draft.txt", with_draft("a draft not sent yet");
        after_first_reply, "gemini/after-first-reply.txt", idle();
        busy_thinking, "gemini/busy.txt", busy();
        permission, "gemini/permission.txt", waiting(SHELL_PERMISSION);
        after_tool, "gemini/after-tool.txt", idle();
        after_clear, "gemini/after-clear.txt", idle();
        resumed, "gemini/resumed.txt", idle();
        resumed_after_prompt, "gemini/resumed-after-prompt.txt", idle();
        // The shell prompt printed over the empty composer: Gemini is gone.
        after_sigterm, "gemini/after-sigterm.txt", unknown();

        // Idle at every width and in every mode.
        idle_80, "gemini/idle-80.txt", idle();
        idle_50_fresh, "gemini/idle-50-fresh.txt", idle();
        idle_50_after_resize, "gemini/idle-50-resized.txt", idle();
        idle_30_wrapped_placeholder, "gemini/idle-30.txt", idle();
        idle_after_queued_prompt, "gemini/after-queued-80.txt", idle();
        idle_after_tool_80, "gemini/after-tool-80.txt", idle();
        idle_after_deny_truecolor, "gemini/tc-after-deny-80.txt", idle();
        idle_truecolor, "gemini/tc-idle-80.txt", idle();
        idle_no_color, "gemini/nocolor-idle-80.txt", idle();
        idle_alternate_buffer, "gemini/alt-idle.txt", idle();
        idle_auto_edit, "gemini/auto-edit.txt", idle();
        idle_plan_mode, "gemini/plan-mode.txt", idle();
        idle_yolo_toggled, "gemini/yolo-idle.txt", idle();
        idle_yolo_started, "gemini/yolo-start.txt", idle();
        idle_shell_mode_placeholder, "gemini/shell-mode.txt", idle();
        idle_exit_warning, "gemini/ctrl-c-once.txt", idle();
        idle_exit_warning_50, "gemini/ctrl-c-once-50.txt", idle();
        idle_shortcuts_help, "gemini/shortcuts-help.txt", idle();
        idle_focus_ui, "gemini/focus-mode.txt", idle();
        idle_with_a_background_process, "gemini/bg-shell.txt", ScreenReading {
            bg_shells: 1,
            ..idle()
        };

        // Drafts.
        draft_multiline, "gemini/draft-multiline.txt", with_draft(
            "first line of a draft\nsecond line\n\n  indented after blank\nfourth via backslash-enter");
        draft_long, "gemini/draft-long.txt", with_draft(
            "this is a very long draft that keeps going and going past the right edge of the pane \
             so that the composer has to wrap it onto a second and maybe even a\nthird row of text, \
             which is what we want to see here in order to check the joining of continuation lines");
        draft_long_80, "gemini/draft-long-80.txt", with_draft(
            "this is a very long draft that keeps going and going past the right edge\n\
             of the pane so that the composer has to wrap it onto a second and maybe\n\
             even a third row of text, which is what we want to see here in order to\n\
             check the joining of continuation lines");
        draft_long_50_after_resize, "gemini/draft-long-50-resized.txt", with_draft(
            "this is a very long draft that keeps going\n\
             and going past the right edge of the pane\n\
             so that the composer has to wrap it onto a\n\
             second and maybe even a third row of text,\n\
             which is what we want to see here in order\n\
             to check the joining of continuation lines");
        draft_50, "gemini/draft-50.txt",
            with_draft("a narrow draft that wraps several times in\nthe composer");
        draft_truecolor, "gemini/tc-draft-after-80.txt", with_draft("line one\nline two");
        draft_no_color, "gemini/nocolor-draft-80.txt", with_draft("draft one\ndraft two");
        draft_yolo, "gemini/yolo-draft.txt", with_draft("yolo draft text");
        draft_auto_edit, "gemini/auto-edit-draft.txt", with_draft("auto edit draft");
        draft_shell_mode, "gemini/shell-mode-draft.txt", with_draft("!ls -la");
        draft_slash_menu, "gemini/slash-menu.txt", with_draft("/");
        draft_slash_menu_alternate_buffer, "gemini/alt-slash.txt", with_draft("/");
        draft_at_menu, "gemini/at-menu.txt", with_draft("look at @");
        reverse_search_empty, "gemini/reverse-search.txt", with_draft("(r:)");
        reverse_search_typed, "gemini/reverse-search-typed.txt", with_draft("(r:) tool");
        // The shell prompt printed after a draft: read as (part of) the draft, which refuses.
        draft_after_sigterm_truecolor, "gemini/tc-after-sigterm-80.txt",
            with_draft("an unsent draft before the killbash-5.2#");
        // Focus UI hides the hint when there is text: cannot tell.
        draft_focus_ui, "gemini/focus-draft.txt", unknown();

        // A turn in flight.
        busy_80, "gemini/busy-80.txt", busy();
        busy_50, "gemini/busy-50.txt", busy();
        busy_26_cut_short, "gemini/busy-26.txt", busy();
        busy_tool, "gemini/busy-tool.txt", busy();
        busy_shell_command, "gemini/busy-shell-command.txt", busy();
        busy_yolo_tool, "gemini/yolo-busy-tool.txt", busy();
        busy_truecolor, "gemini/tc-busy-80.txt", busy();
        busy_no_color, "gemini/nocolor-busy-80.txt", busy();
        busy_alternate_buffer, "gemini/alt-busy.txt", busy();
        busy_focus_ui, "gemini/focus-busy.txt", busy();
        busy_queued_prompt, "gemini/busy-queued-80.txt", busy();
        busy_with_a_draft, "gemini/busy-draft-80.txt", ScreenReading {
            draft: Some("a queued draft while busy".into()),
            ..busy()
        };
        busy_with_a_draft_truecolor, "gemini/tc-busy-draft-80.txt", ScreenReading {
            draft: Some("line one\nline two".into()),
            ..busy()
        };

        // Tool confirmations and dialogs.
        permission_80, "gemini/permission-80.txt", waiting(SHELL_PERMISSION);
        permission_80_second_selected, "gemini/permission-80-second.txt", waiting(SHELL_PERMISSION);
        permission_50, "gemini/permission-50.txt", waiting(SHELL_PERMISSION);
        permission_truecolor, "gemini/tc-permission-80.txt", waiting(SHELL_PERMISSION);
        permission_alternate_buffer, "gemini/alt-permission.txt", waiting(SHELL_PERMISSION);
        permission_above_a_live_composer, "gemini/nocollapse-permission.txt", ScreenReading {
            waiting: Some(SHELL_PERMISSION.into()),
            ..idle()
        };
        permission_above_a_queued_prompt, "gemini/nocollapse-permission-queued.txt", ScreenReading {
            waiting: Some(SHELL_PERMISSION.into()),
            ..idle()
        };
        permission_above_a_draft, "gemini/nocollapse-permission-draft.txt", ScreenReading {
            waiting: Some(SHELL_PERMISSION.into()),
            ..with_draft("1")
        };
        model_dialog, "gemini/model-dialog.txt", waiting("dialog: Select Model");
        settings_dialog, "gemini/settings-dialog.txt", waiting("dialog: Settings");
        rewind_dialog, "gemini/double-esc.txt", waiting("dialog: Rewind");
        resume_picker, "gemini/resume-picker.txt", waiting("resume picker");
        background_view_focused, "gemini/bg-view.txt", ScreenReading {
            waiting: Some("background process view focused".into()),
            bg_shells: 1,
            ..idle()
        };

        // Gone or unreadable.
        after_quit, "gemini/after-quit.txt", unknown();
        after_ctrl_c_exit, "gemini/after-ctrl-c-exit.txt", unknown();
        screen_reader, "gemini/sr-idle.txt", unknown();
    }

    // ---- synthetic edge cases -----------------------------------------------------------

    fn rule(width: usize) -> String {
        "─".repeat(width)
    }

    const ROW2: &str = " Shift+Tab to accept edits";
    const FOOTER: &str =
        " workspace (/directory)     sandbox     /model\n /tmp/p     no sandbox     Auto";

    /// A screen: `body`, row 1, the status rule, row 2, the composer lines, the footer (80
    /// columns).
    fn screen(body: &str, row1: &str, composer: &str) -> String {
        format!(
            "{body}\n\n{row1}\n{}\n{ROW2}\n\n{composer}\n\n{FOOTER}\n",
            rule(80)
        )
    }

    const EMPTY: &str = " >   Type your message or @path/to/file";

    #[test]
    fn scrollback_prompts_are_never_drafts() {
        let body = " > hello there\n\n✦ Hello.\n\n > another one with (esc to cancel, 2s)";
        assert_eq!(read(&screen(body, "", EMPTY)), idle());
        // The scrollback alone, without the status rule, is nothing.
        assert_eq!(read(" > hello there\n\n✦ Hello.\n\n > run it\n"), unknown());
        // Nor is a scrollback prompt under some other rule or box.
        let s = format!("{}\n > hello\n\n✦ Hi.\n", rule(60));
        assert_eq!(read(&s), unknown());
        let s = format!("{}\n > hello\n{FOOTER}\n", rule(60));
        assert_eq!(read(&s), unknown());
        let s = format!("{}\n✦ reply\n > hello\n{FOOTER}\n", rule(60));
        assert_eq!(read(&s), unknown());
        // With padding below the rule it is the structure of a composer.
        let s = format!("{}\n\n > hello\n\n{FOOTER}\n", rule(60));
        assert_eq!(read(&s), with_draft("hello"));
    }

    #[test]
    fn a_draft_mentioning_esc_to_cancel_is_a_draft_not_busy() {
        let s = screen(
            "",
            "",
            " > ⠸ Thinking... (esc to cancel, 2s)\n   ! Shell awaiting input (Tab to focus)",
        );
        assert_eq!(
            read(&s),
            with_draft("⠸ Thinking... (esc to cancel, 2s)\n! Shell awaiting input (Tab to focus)")
        );
    }

    #[test]
    fn busy_only_from_row_one_right_above_the_rule() {
        let spinner = " ⠸ Thinking... (esc to cancel, 1m 5s)";
        assert_eq!(read(&screen("", spinner, EMPTY)), busy());
        for row1 in [
            " ⠏ ! Shell awaiting input (Tab to focus)",
            " Executing Hook: lint (esc to cancel, 4s)",
            "⠋ Reading files",
            " ⠙ Thinking... (esc to ca",
        ] {
            assert_eq!(read(&screen("", row1, EMPTY)), busy(), "{row1:?}");
        }
        // Idle row 1: the hint, a tip, the exit warning above it.
        for row1 in [
            "                 ? for shortcuts",
            " Press Ctrl+C again to exit.\n   Tip: Use /settings…",
            "⠿",
        ] {
            assert_eq!(read(&screen("", row1, EMPTY)), idle(), "{row1:?}");
        }
        // The same words further up (a blank line away) are history.
        let s = screen(spinner, "", EMPTY);
        assert_eq!(read(&s), idle());
    }

    #[test]
    fn a_rule_less_screen_cannot_be_told() {
        for s in [
            "",
            "\n\n",
            "bash-5.2# ",
            " >   Type your message or @path/to/file\n",
            " > a draft\n\n workspace (/directory)\n",
            " ⠸ Thinking... (esc to cancel, 2s)\n\n > a draft\n",
            // A short rule is text, not the status rule.
            "──────\n Shift+Tab to accept edits\n\n > a draft\n",
        ] {
            assert_eq!(read(s), unknown(), "{s:?}");
        }
    }

    #[test]
    fn the_status_rule_must_span_the_screen() {
        let wide = format!("{}x", " ".repeat(90));
        assert_eq!(read(&screen(&wide, "", " > a draft")), unknown());
    }

    #[test]
    fn prompt_glyphs_glued_to_text_are_not_composers() {
        for c in [
            " >x",
            " *x",
            " !x",
            " (r:)x",
            ">  Type your message or @path/to/file",
        ] {
            assert_eq!(read(&screen("", "", c)), unknown(), "{c:?}");
        }
    }

    #[test]
    fn the_placeholder_is_only_empty_where_gemini_draws_it() {
        // Typed text spelling the placeholder starts right after the prompt: a draft.
        let s = screen("", "", " > Type your message or @path/to/file");
        assert_eq!(read(&s), with_draft("Type your message or @path/to/file"));
        // The placeholder followed by more text is a draft.
        let s = screen("", "", " >   Type your message or @path/to/file\n   more");
        assert_eq!(
            read(&s),
            with_draft("Type your message or @path/to/file\nmore")
        );
        // Vim mode's placeholders are empty.
        let s = screen("", "", " >   Press 'i' for INSERT mode.");
        assert_eq!(read(&s), idle());
        // Shell mode typed text keeps the `!`.
        let s = screen("", "", " ! Type your shell command");
        assert_eq!(read(&s), with_draft("!Type your shell command"));
    }

    #[test]
    fn a_placeholder_overwritten_by_a_shell_prompt_cannot_be_told() {
        let over = |prompt: &str, placeholder: &str| {
            let full = format!("  {placeholder}");
            format!("{prompt}{}", &full[prompt.len()..])
        };
        for c in [
            format!(" > {}", over("$ ", PLACEHOLDERS[0])),
            format!(" > {}", over("user@host:~/p$ ", PLACEHOLDERS[0])),
            format!(" ! {}", over("% ", PLACEHOLDERS[1])),
        ] {
            assert_eq!(read(&screen("", "", &c)), unknown(), "{c:?}");
        }
        // A short shared tail is not enough.
        let s = screen("", "", " > see the file");
        assert_eq!(read(&s), with_draft("see the file"));
    }

    #[test]
    fn cjk_and_emoji_drafts_are_quoted_back() {
        let s = screen("", "", " > 第一行 🚀\n   second");
        assert_eq!(read(&s), with_draft("第一行 🚀\nsecond"));
    }

    #[test]
    fn escapes_are_stripped_first() {
        let s = format!(
            "\x1b[2m{}\x1b[0m\n \x1b[33mShift+Tab to accept edits\x1b[0m\n\n \x1b[36m>\x1b[0m hi\n",
            rule(40)
        );
        let s = format!(" \x1b[35m⠸\x1b[0m Thinking... (esc to cancel, 3s)\n{s}");
        assert_eq!(
            read(&s),
            ScreenReading {
                draft: Some("hi".into()),
                ..busy()
            }
        );
    }

    #[test]
    fn background_process_counts() {
        let s = screen("", "", EMPTY).replace(
            ROW2,
            &format!("{ROW2}   1 GEMINI.md file · 3 Background processes"),
        );
        assert_eq!(
            read(&s),
            ScreenReading {
                bg_shells: 3,
                ..idle()
            }
        );
    }

    #[test]
    fn the_last_composer_wins() {
        let first = screen("", "", " > old frame");
        let s = format!("{first}{}", screen("", "", EMPTY));
        assert_eq!(read(&s), idle());
    }

    #[test]
    fn a_stale_composer_above_a_newer_frame_is_not_the_composer() {
        // A pane narrowed while Gemini ran keeps an old rule and prompt above the live screen.
        let permission =
            "╭──╮\n│ Allow execution of [Shell]? │\n│ ● 1. Allow once │\n│   2. No │\n╰──╯";
        let stale = format!("{}\n\n{EMPTY}\n", rule(80));
        assert_eq!(
            read(&format!("{stale}\n✦ reply\n\n{permission}\n")),
            waiting(SHELL_PERMISSION)
        );
        // A later status rule below is a newer frame too.
        let s = format!("{stale}{}\n", rule(80));
        assert_eq!(read(&s), unknown());
        // The NO_COLOR lower fence is part of the composer.
        let s = format!(
            "{}\n{ROW2}\n{}\n{EMPTY}\n{}\n{FOOTER}\n",
            rule(80),
            rule(80),
            rule(80)
        );
        assert_eq!(read(&s), idle());
    }

    #[test]
    fn a_history_box_is_not_a_pending_dialog() {
        // A finished confirmation is a plain tool box; an old chooser behind a reply is history.
        let chooser =
            "╭──────╮\n│ Allow execution of [Shell]? │\n│ ● 1. Allow once │\n│   2. No │\n╰──────╯";
        let s = screen(&format!("{chooser}\n\n✦ done"), "", EMPTY);
        assert_eq!(read(&s), idle());
        let pending = ScreenReading {
            waiting: Some(SHELL_PERMISSION.into()),
            ..idle()
        };
        assert_eq!(read(&screen(chooser, "", EMPTY)), pending);
        // Queued prompts and the toast may lie between.
        let queued = format!(
            "{chooser}\n\n  Queued (press ↑ to edit):\n    next\n\nPress Ctrl+C again to exit."
        );
        assert_eq!(read(&screen(&queued, "", EMPTY)), pending);
    }

    #[test]
    fn generic_dialogs() {
        let s = " Pick one\n\n ● 1. Alpha\n   2. Beta\n";
        assert_eq!(read(s), waiting("dialog open"));
        let s = "╭────╮\n│ Theme │\n│ ● Dark │\n│ (Press Esc to close) │\n╰────╯\n";
        assert_eq!(read(s), waiting("dialog: Theme"));
        // One option alone, or a bullet without a hint, is nothing.
        assert_eq!(read(" ● 1. Alpha\n"), unknown());
        assert_eq!(read("╭──╮\n│ ● Dark │\n╰──╯\n"), unknown());
        // A wrapped question still names a permission prompt.
        let s = "╭──╮\n│ ? Shell  rm -rf build │\n│ Allow execution of │\n│ [Shell]? │\n│ ● 1. Allow once │\n│   2. No │\n╰──╯\n";
        assert_eq!(read(s), waiting("permission prompt"));
    }

    #[test]
    fn no_color_fence_stands_in_for_the_status_rule() {
        // Focus UI under NO_COLOR: the composer's own fence, no status rule.
        let s = format!(
            "\n{}\n >   Type your message or @path/to/file\n{}\n",
            rule(40),
            rule(40)
        );
        assert_eq!(read(&s), idle());
    }

    #[test]
    fn title_busy_cases() {
        let pad = |t: &str| format!("{t:<80}");
        assert_eq!(title_busy(&pad("◇  Ready (proj)")), Some(false));
        assert_eq!(title_busy(&pad("✦  Working… (proj)")), Some(true));
        assert_eq!(title_busy(&pad("✦  Reading the parser (proj)")), Some(true));
        assert_eq!(
            title_busy(&pad("✦  A very long thought subject that does not fit…")),
            Some(true)
        );
        assert_eq!(title_busy(&pad("⏲  Working… (proj)")), Some(true));
        assert_eq!(title_busy(&pad("✋  Action Required (proj)")), Some(true));
        for t in [
            "",
            "    ",
            "Gemini CLI (proj)",
            "bash",
            "◇",
            "◇  Something (proj)",
            "✦",
            "✦Working",
            "root@vm:/tmp/gs/proj",
            "❯ claude",
        ] {
            assert_eq!(title_busy(t), None, "{t:?}");
        }
    }

    #[test]
    fn fixture_titles() {
        // Titles noted with the captures.
        assert_eq!(
            title_busy(
                "◇  Ready (proj)                                                                 "
            ),
            Some(false)
        );
        assert_eq!(
            title_busy(
                "✦  Working… (proj)                                                              "
            ),
            Some(true)
        );
        assert_eq!(
            title_busy(
                "✋  Action Required (proj)                                                       "
            ),
            Some(true)
        );
    }

    fn screenish() -> impl Strategy<Value = String> {
        let token = prop_oneof![
            Just(" > ".to_string()),
            Just(" >   Type your message or @path/to/file".to_string()),
            Just(" * ".to_string()),
            Just(" ! ".to_string()),
            Just(" (r:)  ".to_string()),
            Just(rule(12)),
            Just("▄▄▄▄".to_string()),
            Just("▀▀▀▀".to_string()),
            Just("\n".to_string()),
            Just("   ".to_string()),
            Just("│".to_string()),
            Just("╭──╮".to_string()),
            Just("╰──╯".to_string()),
            Just("└──┘".to_string()),
            Just("● 1. ".to_string()),
            Just("  2. ".to_string()),
            Just("Allow execution of [Shell]?".to_string()),
            Just("(esc to cancel, 2s)".to_string()),
            Just("press tab twice for more".to_string()),
            Just("99999999999 Background processes".to_string()),
            Just("Chat Sessions (1 total)".to_string()),
            Just("\x1b[2m".to_string()),
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
            prop_assert!(r.bg_shells == 0 || r.composer_seen);
        }

        #[test]
        fn never_panics_on_arbitrary_unicode(s in any::<String>()) {
            let _ = read(&s);
            let _ = title_busy(&s);
        }
    }
}
