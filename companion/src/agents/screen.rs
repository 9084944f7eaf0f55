//! Screen classifiers (pure): what a tmux pane's text says about the agent in it.
//!
//! Contract:
//! * Input is `tmux capture-pane -p` text (Claude) or `capture-pane -p -e` text with SGR escapes
//!   (Codex; plain text is accepted too, best effort). Nothing here does I/O, and nothing panics on
//!   any input.
//! * Every classifier errs in the safe direction for `park`: when a screen is ambiguous it reports a
//!   draft or a dialog (which makes park refuse) rather than "idle", because a wrongly parked agent
//!   loses the user's unsent text while a wrong refusal costs only a retry.
//! * `composer_seen == false` means "cannot tell": the caller must not read `draft == None` as
//!   "no draft" in that case.
//!
//! The cues come from real captures (see `tests/fixtures/` and FORMATS.md sections 5 and 7.6):
//! * Claude's composer is `❯` + U+00A0 fenced between two `─` rules; submitted prompts in the
//!   scrollback use `❯` + a normal space, and a shell prompt is never fenced by a rule.
//! * Codex's composer is a `›` line followed by its status/footer lines; the empty composer shows a
//!   DIM placeholder, which only `capture-pane -e` can tell apart from a typed draft.

use std::sync::OnceLock;

use regex::Regex;

/// What the screen says about one agent pane.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ScreenReading {
    /// A turn is in flight: footer `esc to interrupt` (Claude), `esc to interrupt` in a
    /// `• Working (…)` status line (Codex).
    pub busy: bool,
    /// A dialog or permission prompt is open; the string is a short description.
    pub waiting: Option<String>,
    /// Unsent text in the composer, quoted back (trimmed).
    pub draft: Option<String>,
    /// Background shells: Claude footer `N shell(s)`, Codex `N background terminal(s) running`.
    pub bg_shells: u32,
    /// The agent's composer was recognised at all; false = we cannot tell.
    pub composer_seen: bool,
}

const NBSP: char = '\u{a0}';
const RULE_CHAR: char = '─';
/// A `─` rule shorter than this is text, not Claude's full-width fence.
const MIN_RULE_LEN: usize = 10;
/// When no composer is found, dialogs are searched in this many trailing non-empty lines.
const BOTTOM_LINES: usize = 15;
/// How far below a Codex `›` line its status/footer lines may start.
const CODEX_FOOTER_REACH: usize = 8;
/// How far above the Codex composer the status indicator (`• Working (…)`) may sit.
const CODEX_STATUS_REACH: usize = 10;

/// Placeholders the Codex TUI shows in an empty composer. Only consulted for plain (escape-free)
/// input; with escapes the DIM attribute is the authority.
const CODEX_PLACEHOLDERS: &[&str] = &[
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

// ---------------------------------------------------------------------------------------------
// Escape handling
// ---------------------------------------------------------------------------------------------

/// One lexical piece of terminal output.
enum Piece<'a> {
    Char(char),
    /// The parameter bytes of a `CSI … m` (SGR) sequence.
    Sgr(&'a str),
}

/// Walks `s`, calling `f` for every text char and every SGR sequence; all other escape sequences
/// (CSI, OSC, DCS/SOS/PM/APC strings, two- and three-byte ESC sequences) and stray ESC bytes are
/// swallowed. Malformed sequences end at the first byte that cannot belong to them, so text after
/// a broken escape is never lost.
fn lex<'a>(s: &'a str, mut f: impl FnMut(Piece<'a>)) {
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < s.len() {
        if bytes[i] != 0x1b {
            // Not ESC: emit the char starting here (ESC is ASCII, so `i` is always a boundary).
            let c = s[i..].chars().next().unwrap_or('\u{fffd}');
            f(Piece::Char(c));
            i += c.len_utf8();
            continue;
        }
        i += 1; // the ESC itself
        match bytes.get(i) {
            Some(b'[') => {
                i += 1;
                let start = i;
                while i < bytes.len() && (0x20..=0x3f).contains(&bytes[i]) {
                    i += 1;
                }
                if i < bytes.len() && (0x40..=0x7e).contains(&bytes[i]) {
                    if bytes[i] == b'm' {
                        f(Piece::Sgr(&s[start..i]));
                    }
                    i += 1;
                }
            }
            Some(b']' | b'P' | b'X' | b'^' | b'_') => {
                // String sequences end at BEL or ST (ESC \). A newline also ends them: a capture
                // never holds a multi-line OSC, so this keeps a broken one from eating the screen.
                i += 1;
                while i < bytes.len() {
                    match bytes[i] {
                        0x07 => {
                            i += 1;
                            break;
                        }
                        0x1b if bytes.get(i + 1) == Some(&b'\\') => {
                            i += 2;
                            break;
                        }
                        0x1b | b'\n' => break,
                        _ => i += 1,
                    }
                }
            }
            Some(b'(' | b')' | b'*' | b'+' | b'-' | b'.' | b'/' | b'#' | b'%' | b' ') => {
                // Charset designation and friends: ESC, an intermediate, one final byte.
                i += 1;
                if i < bytes.len() && (0x21..=0x7e).contains(&bytes[i]) {
                    i += 1;
                }
            }
            Some(&b) if (0x21..=0x7e).contains(&b) => i += 1,
            // Lone ESC (end of input, before a newline or non-ASCII): drop just the ESC.
            _ => {}
        }
    }
}

/// Removes ANSI escape sequences. The output never contains ESC; every other character is kept.
pub fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    lex(s, |p| {
        if let Piece::Char(c) = p {
            out.push(c);
        }
    });
    out
}

/// Applies SGR parameters to the one attribute we track: DIM (faint).
fn apply_sgr(params: &str, dim: &mut bool) {
    if params.starts_with(['?', '<', '=', '>']) {
        return; // private sequence, not SGR
    }
    if params.is_empty() {
        *dim = false;
        return;
    }
    let groups: Vec<&str> = params.split(';').collect();
    let mut k = 0;
    while k < groups.len() {
        let group = groups[k];
        let lead = group.split(':').next().unwrap_or("");
        let n: u32 = if lead.is_empty() {
            0
        } else {
            lead.parse().unwrap_or(u32::MAX)
        };
        match n {
            0 | 22 => *dim = false,
            2 => *dim = true,
            // Extended colours carry their own arguments ("38;5;2" is a colour, not DIM).
            38 | 48 | 58 if !group.contains(':') => {
                k += match groups.get(k + 1).copied() {
                    Some("5") => 2,
                    Some("2") => 4,
                    _ => 0,
                };
            }
            _ => {}
        }
        k += 1;
    }
}

/// A screen line with a DIM flag per char.
#[derive(Default)]
struct StyledLine {
    text: String,
    dim: Vec<bool>,
}

/// Splits escaped screen text into lines, tracking DIM across lines (tmux `-e` output carries the
/// attribute state over newlines). Control characters other than tab are dropped.
fn styled_lines(s: &str) -> Vec<StyledLine> {
    let mut lines = vec![StyledLine::default()];
    let mut dim = false;
    lex(s, |p| match p {
        Piece::Sgr(params) => apply_sgr(params, &mut dim),
        Piece::Char('\n') => lines.push(StyledLine::default()),
        Piece::Char(c) if c.is_control() && c != '\t' => {}
        Piece::Char(c) => {
            if let Some(line) = lines.last_mut() {
                line.text.push(c);
                line.dim.push(dim);
            }
        }
    });
    lines
}

/// Plain lines of a screen; escapes are stripped first if there are any.
pub(crate) fn plain_lines(s: &str) -> Vec<String> {
    // `capture-pane -p` text (what Claude's screens are) has no control characters besides the
    // newlines, so it can be split as it is; anything else takes the escape-aware path. Both give
    // the same lines (a property test holds them equal).
    let plain = s.chars().all(|c| c == '\n' || c == '\t' || !c.is_control());
    if plain {
        return s.split('\n').map(str::to_string).collect();
    }
    styled_lines(s).into_iter().map(|l| l.text).collect()
}

// ---------------------------------------------------------------------------------------------
// Shared helpers
// ---------------------------------------------------------------------------------------------

pub(crate) fn is_blank(line: &str) -> bool {
    line.trim().is_empty()
}

/// Claude's fence: a full-width run of `─` starting at column 0.
pub(crate) fn is_rule(line: &str) -> bool {
    let t = line.trim_end();
    t.chars().all(|c| c == RULE_CHAR) && t.chars().count() >= MIN_RULE_LEN
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

/// The last `n` non-empty lines, in screen order.
pub(crate) fn last_nonempty<S: AsRef<str>>(lines: &[S], n: usize) -> Vec<&str> {
    let mut v: Vec<&str> = lines
        .iter()
        .rev()
        .map(|l| l.as_ref())
        .filter(|l| !is_blank(l))
        .take(n)
        .collect();
    v.reverse();
    v
}

pub(crate) fn re(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).expect("static regex"))
}

/// A selected numbered option (`❯ 1. Yes`, `› 1. Trust and continue`).
fn selected_option_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(&R, r"^\s*[❯›>]\s*\d+\.\s")
}

/// An unselected numbered option (`   2. No`).
fn other_option_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(&R, r"^\s+\d+\.\s")
}

/// True when `lines` hold a numbered chooser: a selected option and another option (above or
/// below it: the selection may be on any row).
pub(crate) fn has_chooser(lines: &[&str]) -> bool {
    lines.iter().any(|l| selected_option_re().is_match(l))
        && lines.iter().any(|l| other_option_re().is_match(l))
}

pub(crate) fn parse_count(digits: &str) -> u32 {
    digits.parse().unwrap_or(u32::MAX)
}

// ---------------------------------------------------------------------------------------------
// Claude
// ---------------------------------------------------------------------------------------------

/// Classifies a Claude Code pane (`capture-pane -p` text; escapes, if any, are stripped first).
pub fn read_claude(plain: &str) -> ScreenReading {
    let lines = plain_lines(plain);
    let mut reading = ScreenReading::default();

    let Some(at) = last_fenced_composer(&lines) else {
        // No composer: a dialog has replaced it, or this is not (or no longer) Claude.
        let bottom = last_nonempty(&lines, BOTTOM_LINES);
        reading.waiting = claude_dialog(&bottom);
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
    reading.waiting = claude_dialog(&footer_nonempty);
    reading
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
fn claude_dialog(lines: &[&str]) -> Option<String> {
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

// ---------------------------------------------------------------------------------------------
// Codex
// ---------------------------------------------------------------------------------------------

/// Classifies a Codex CLI pane. `escaped` is `capture-pane -p -e` output; plain text works too,
/// but then a placeholder can only be recognised by its wording.
pub fn read_codex(escaped: &str) -> ScreenReading {
    let has_escapes = escaped.contains('\x1b');
    let styled = styled_lines(escaped);
    let lines: Vec<&str> = styled.iter().map(|l| l.text.as_str()).collect();
    let mut reading = ScreenReading::default();

    let Some((at, cont)) = codex_composer(&lines) else {
        let bottom = last_nonempty(&lines, BOTTOM_LINES);
        reading.waiting = codex_dialog(&bottom);
        reading.busy = bottom.iter().any(|l| codex_status_busy(l));
        reading.bg_shells = codex_bg_terminals(&bottom);
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
        (!joined.is_empty() && !CODEX_PLACEHOLDERS.contains(&joined)).then(|| joined.to_string())
    };
    reading.draft = draft;

    // The status indicator (`• Working (3s • esc to interrupt) · 1 background terminal running`)
    // sits just above the composer; background terminals may also be listed below it.
    let above = &lines[at.saturating_sub(CODEX_STATUS_REACH)..at];
    let below = &lines[at + 1..];
    reading.busy = above.iter().any(|l| codex_status_busy(l));
    reading.bg_shells = codex_bg_terminals(above).max(codex_bg_terminals(below));
    // With a live composer no Codex dialog is open (approvals and choosers replace the composer),
    // and the status line below it shows the thread name, which is user text: searching it for
    // dialog wording would invent dialogs.
    reading
}

/// Finds the live Codex composer: the last `›` line at column 0 that is followed within a few
/// lines by a status/footer line, with no history cell in between. Returns its index and the
/// number of wrapped continuation lines that belong to it.
fn codex_composer(lines: &[&str]) -> Option<(usize, usize)> {
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
            if k >= CODEX_FOOTER_REACH {
                break;
            }
            if codex_bottom_line(line) {
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
fn codex_bottom_line(line: &str) -> bool {
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
fn codex_status_busy(line: &str) -> bool {
    let t = line.trim_start();
    (t.starts_with('•') || t.starts_with('◦')) && t.to_lowercase().contains("esc to interrupt")
}

fn codex_bg_terminals(lines: &[&str]) -> u32 {
    static R: OnceLock<Regex> = OnceLock::new();
    let r = re(&R, r"\b(\d{1,10}) background terminals? running\b");
    lines
        .iter()
        .find_map(|l| r.captures(l))
        .map(|c| parse_count(&c[1]))
        .unwrap_or(0)
}

/// Names the Codex dialog visible in `lines`, if any.
fn codex_dialog(lines: &[&str]) -> Option<String> {
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

// ---------------------------------------------------------------------------------------------
// Shell prompt
// ---------------------------------------------------------------------------------------------

/// True when the screen's last non-empty line looks like a bare interactive shell prompt with
/// nothing typed after it (e.g. `root@vm:/tmp/x# `, `$ `, `% `, `> `; `user@host:~/p$ `). Used
/// before typing into a pane, so it leans to `false`: a prompt with typed text, a stray `1;2c`
/// left by a killed TUI, or any indented TUI footer is not a bare prompt.
pub fn bare_shell_prompt(plain: &str) -> bool {
    let lines = plain_lines(plain);
    let Some(last) = lines.iter().rev().find(|l| !is_blank(l)) else {
        return false;
    };
    let t = last.trim_end();
    if t.starts_with(char::is_whitespace) || t.chars().count() > 300 {
        return false;
    }
    let Some(sigil) = t.chars().last() else {
        return false;
    };
    const SIGILS: [char; 5] = ['#', '$', '%', '>', '❯'];
    if !SIGILS.contains(&sigil) {
        return false;
    }
    let prefix = &t[..t.len() - sigil.len_utf8()];
    if prefix.contains(SIGILS) {
        // A sigil earlier on the line means a prompt followed by typed text (`$ echo $`).
        return false;
    }
    let p = prefix.trim_end();
    if p.is_empty() {
        return true;
    }
    static WORD: OnceLock<Regex> = OnceLock::new();
    // `user@host:path`, `~/p `, `[user@host dir]`, `(venv) …`, `C:\`, or one word like `bash-5.2`.
    p.contains(['@', ':', '/', '~', '\\', ']', ')']) || re(&WORD, r"^[A-Za-z][\w.-]*$").is_match(p)
}

/// What the agents' screen-reader tests share: their real captures and the idle reading.
#[cfg(test)]
pub(crate) mod test_kit {
    use super::ScreenReading;

    /// The text of `companion/tests/fixtures/<name>` (a real capture), built in.
    macro_rules! fixture {
        ($name:literal) => {
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/fixtures/",
                $name
            ))
        };
    }
    pub(crate) use fixture;

    /// An empty composer, nothing else: at rest.
    pub(crate) fn idle() -> ScreenReading {
        ScreenReading {
            composer_seen: true,
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    use super::test_kit::{fixture, idle};

    fn with_draft(d: &str) -> ScreenReading {
        ScreenReading {
            composer_seen: true,
            draft: Some(d.to_string()),
            ..Default::default()
        }
    }

    fn busy() -> ScreenReading {
        ScreenReading {
            composer_seen: true,
            busy: true,
            ..Default::default()
        }
    }

    fn waiting(w: &str) -> ScreenReading {
        ScreenReading {
            waiting: Some(w.to_string()),
            ..Default::default()
        }
    }

    fn unknown() -> ScreenReading {
        ScreenReading::default()
    }

    const RULE: &str = "────────────────────────────────────────";

    // ---- Claude captures ----------------------------------------------------------------

    #[test]
    fn claude_after_first_reply_is_idle() {
        assert_eq!(
            read_claude(fixture!("claude-after-first-reply.txt")),
            idle()
        );
    }

    #[test]
    fn claude_after_sigterm_keeps_the_last_frames_draft() {
        // The final frame before the shell took over: the (now lost) draft is still fenced.
        assert_eq!(
            read_claude(fixture!("claude-after-sigterm.txt")),
            with_draft("this is an unsent draft in the composer")
        );
        assert!(bare_shell_prompt(fixture!("claude-after-sigterm.txt")));
    }

    #[test]
    fn claude_bg_shell_counts_one_shell() {
        let r = read_claude(fixture!("claude-bg-shell.txt"));
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
    fn claude_named_sessions_are_read_like_unnamed_ones() {
        assert_eq!(read_claude(fixture!("claude-named-idle.txt")), idle());
        assert_eq!(read_claude(fixture!("claude-named-resumed.txt")), idle());
        assert_eq!(read_claude(fixture!("claude-renamed-long.txt")), idle());
        assert_eq!(read_claude(fixture!("claude-named-narrow.txt")), idle());
        // A name wider than the pane wraps: no rule characters before it.
        assert_eq!(
            read_claude(fixture!("claude-renamed-long-narrow.txt")),
            idle()
        );
        assert_eq!(
            read_claude(fixture!("claude-named-draft.txt")),
            with_draft("an unsent draft")
        );
        assert_eq!(read_claude(fixture!("claude-named-busy.txt")), busy());
        // Up-arrow history recall fills the composer: a draft (the safe reading).
        assert_eq!(
            read_claude(fixture!("claude-history-rule.txt")),
            with_draft("take your time [slow 15]")
        );
    }

    /// Fixtures of issue 19's lab run: a background session attached in a pane (`claude attach`,
    /// its footer has no `? for shortcuts`), an 80-char name wrapped at 60 columns, and the
    /// frame `/bg` leaves behind (a shell prompt below the last composer: no composer now).
    #[test]
    fn claude_attached_background_and_slash_bg_screens() {
        assert_eq!(
            read_claude(fixture!("claude-named-attached-bg.txt")),
            idle()
        );
        assert_eq!(
            read_claude(fixture!("claude-named-attached-bg-busy.txt")),
            busy()
        );
        assert_eq!(
            read_claude(fixture!("claude-named-long80-60col.txt")),
            idle()
        );
        let after = read_claude(fixture!("claude-after-slash-bg.txt"));
        assert_eq!(
            after,
            unknown(),
            "no composer left: the session went to the background"
        );
    }

    #[test]
    fn claude_titled_rules_of_every_alignment() {
        let cases = [
            format!("{RULE} my-name ──"),
            format!("─── History 3/5 {RULE}"),
            format!("{RULE} 名前 ✨ ──"),
            " a name too wide for the pane ──".to_string(),
        ];
        for top in cases {
            let screen = format!("{top}\n❯\u{a0}\n{RULE}\n  ? for shortcuts\n");
            assert_eq!(read_claude(&screen), idle(), "{top}");
        }
        // Text that merely ends in a rule character, or a rule with no title, is no titled rule.
        for not in ["some text─", "──", "   ──", "word ─x"] {
            assert!(!is_titled_rule(not), "{not:?}");
        }
        let screen = format!("some text─\n❯\u{a0}\n{RULE}\n");
        assert_eq!(read_claude(&screen), unknown());
    }

    /// Claude Code 2.1.332 (the version users run beside the 2.1.197 pin): the permission-modes
    /// notice on first start, the footer naming the mode (`⏵⏵ auto mode on (shift+tab to cycle)
    /// · ← for agents`, manual, accept edits, plan), the `◐ medium · /effort` line above the
    /// rule, a renamed session's rule ending in one `─`, a session resumed after `/clear`: at
    /// rest; the model picker and a permission prompt: dialogs; a turn in flight: busy.
    #[test]
    fn claude_2_1_332_screens_are_read_as_2_1_197_ones() {
        for (name, screen) in [
            ("first start", fixture!("claude-2.1.332-first-start.txt")),
            (
                "first reply",
                fixture!("claude-2.1.332-after-first-reply.txt"),
            ),
            ("after /clear", fixture!("claude-2.1.332-after-clear.txt")),
            ("manual mode", fixture!("claude-2.1.332-manual-mode.txt")),
            ("accept edits", fixture!("claude-2.1.332-accept-edits.txt")),
            ("plan mode", fixture!("claude-2.1.332-plan-mode.txt")),
            (
                "resumed after /clear",
                fixture!("claude-2.1.332-resumed-after-clear.txt"),
            ),
        ] {
            assert_eq!(read_claude(screen), idle(), "{name}");
            assert!(!bare_shell_prompt(screen), "{name}");
        }
        assert_eq!(
            read_claude(fixture!("claude-2.1.332-model-picker.txt")),
            waiting("dialog open")
        );
        assert_eq!(
            read_claude(fixture!("claude-2.1.332-permission.txt")),
            waiting("permission prompt")
        );
        // The footer reads `… (shift+tab to cycle) · esc to interrupt · ← for agents`.
        assert_eq!(read_claude(fixture!("claude-2.1.332-busy.txt")), busy());
        // A prompt typed mid-turn is queued; the composer then shows a hint where a draft would
        // be. The turn in flight is what counts.
        let queued = read_claude(fixture!("claude-2.1.332-busy-queued.txt"));
        assert!(queued.busy && queued.waiting.is_none(), "{queued:?}");
    }

    #[test]
    fn claude_busy_1_and_2_are_busy() {
        assert_eq!(read_claude(fixture!("claude-busy-1.txt")), busy());
        assert_eq!(read_claude(fixture!("claude-busy-2.txt")), busy());
    }

    #[test]
    fn claude_continue_is_idle() {
        assert_eq!(read_claude(fixture!("claude-continue.txt")), idle());
    }

    #[test]
    fn claude_dialog_1_is_the_trust_dialog() {
        assert_eq!(
            read_claude(fixture!("claude-dialog-1.txt")),
            waiting("trust dialog")
        );
    }

    #[test]
    fn claude_dialog_2_is_the_api_key_dialog() {
        assert_eq!(
            read_claude(fixture!("claude-dialog-2.txt")),
            waiting("API key dialog")
        );
    }

    #[test]
    fn claude_dialog_3_is_idle_after_the_dialogs() {
        assert_eq!(read_claude(fixture!("claude-dialog-3.txt")), idle());
    }

    #[test]
    fn claude_double_resume_is_idle() {
        assert_eq!(read_claude(fixture!("claude-double-resume.txt")), idle());
    }

    #[test]
    fn claude_idle_after_2_is_idle() {
        assert_eq!(read_claude(fixture!("claude-idle-after-2.txt")), idle());
    }

    #[test]
    fn claude_permission_prompt_is_waiting() {
        assert_eq!(
            read_claude(fixture!("claude-permission-prompt.txt")),
            waiting("permission prompt")
        );
    }

    #[test]
    fn claude_resume_after_midturn_kill_is_idle() {
        assert_eq!(
            read_claude(fixture!("claude-resume-after-midturn-kill.txt")),
            idle()
        );
    }

    #[test]
    fn claude_resume_picker_is_waiting_not_a_draft() {
        // `  ❯ fourth prompt…` is a picker row (normal space, indented), never a composer.
        assert_eq!(
            read_claude(fixture!("claude-resume-picker.txt")),
            waiting("resume picker")
        );
    }

    #[test]
    fn claude_error_screens_are_shells() {
        for screen in [
            fixture!("claude-resume-wrong-cwd.txt"),
            fixture!("claude-session-id-reuse.txt"),
        ] {
            assert_eq!(read_claude(screen), unknown());
            assert!(bare_shell_prompt(screen));
        }
    }

    #[test]
    fn claude_resumed_screens_are_idle() {
        assert_eq!(read_claude(fixture!("claude-resumed.txt")), idle());
        assert_eq!(
            read_claude(fixture!("claude-resumed-after-prompt.txt")),
            idle()
        );
        assert_eq!(read_claude(fixture!("demo-claude-resumed.txt")), idle());
        assert_eq!(read_claude(fixture!("rss-m-claude.txt")), idle());
    }

    #[test]
    fn claude_unsent_draft_is_quoted() {
        assert_eq!(
            read_claude(fixture!("claude-unsent-draft.txt")),
            with_draft("this is an unsent draft in the composer")
        );
    }

    #[test]
    fn claude_screens_are_not_bare_shell_prompts() {
        for screen in [
            fixture!("claude-idle-after-2.txt"),
            fixture!("claude-busy-1.txt"),
            fixture!("claude-unsent-draft.txt"),
            fixture!("claude-permission-prompt.txt"),
            fixture!("claude-dialog-1.txt"),
            fixture!("claude-resume-picker.txt"),
        ] {
            assert!(!bare_shell_prompt(screen));
        }
    }

    // ---- Claude synthetic edge cases ----------------------------------------------------

    #[test]
    fn claude_unfenced_prompt_in_scrollback_is_not_a_draft() {
        // A shell prompt (even with NBSP) and submitted prompts are not fenced by a rule.
        let screen = "user@host:~$ ls\n❯\u{a0}half-typed shell command\n❯ submitted prompt\n";
        assert_eq!(read_claude(screen), unknown());
        let screen = format!("some output\n\n❯\u{a0}not fenced\n{RULE}\n  ? for shortcuts\n");
        assert_eq!(read_claude(&screen), unknown());
    }

    #[test]
    fn claude_submitted_prompt_with_normal_space_is_not_a_composer() {
        let screen = format!("{RULE}\n❯ hello\n{RULE}\n  ? for shortcuts\n");
        assert_eq!(read_claude(&screen), unknown());
    }

    #[test]
    fn claude_draft_with_rule_chars_mid_text() {
        let screen = format!("{RULE}\n❯\u{a0}split ──── here ─\n{RULE}\n");
        assert_eq!(read_claude(&screen), with_draft("split ──── here ─"));
    }

    #[test]
    fn claude_multiline_draft_runs_to_the_lower_rule() {
        let screen = format!(
            "{RULE}\n❯\u{a0}first line\n  second line\n    indented third\n  ────────────────\n{RULE}\n  \n"
        );
        assert_eq!(
            read_claude(&screen),
            with_draft("first line\nsecond line\n  indented third\n────────────────")
        );
    }

    #[test]
    fn claude_cjk_and_emoji_drafts() {
        let screen = format!("{RULE}\n❯\u{a0}日本語の下書き 🚀 ok\n{RULE}\n");
        assert_eq!(read_claude(&screen), with_draft("日本語の下書き 🚀 ok"));
    }

    #[test]
    fn claude_two_composers_use_the_last() {
        let screen = format!(
            "{RULE}\n❯\u{a0}old frame draft\n{RULE}\n  ? for shortcuts\n\n❯ prompt\n● reply\n{RULE}\n❯\u{a0}\n{RULE}\n  ? for shortcuts\n"
        );
        assert_eq!(read_claude(&screen), idle());
        let screen = format!("{RULE}\n❯\u{a0}\n{RULE}\n\n{RULE}\n❯\u{a0}newest\n{RULE}\n");
        assert_eq!(read_claude(&screen), with_draft("newest"));
    }

    #[test]
    fn claude_trailing_whitespace_is_not_a_draft() {
        let screen = format!("{RULE}   \n❯\u{a0}   \n{RULE}  \n  ? for shortcuts   \n   \n");
        assert_eq!(read_claude(&screen), idle());
        let screen = format!("{RULE}\n❯\u{a0}  padded draft   \n{RULE}\n");
        assert_eq!(read_claude(&screen), with_draft("padded draft"));
    }

    #[test]
    fn claude_crlf_and_escapes_are_tolerated() {
        let screen =
            format!("{RULE}\r\n\x1b[1m❯\u{a0}\x1b[0mdraft\r\n{RULE}\r\n  esc to interrupt\r\n");
        assert_eq!(
            read_claude(&screen),
            ScreenReading {
                busy: true,
                ..with_draft("draft")
            }
        );
    }

    #[test]
    fn claude_two_shells_and_dialog_below_composer() {
        let screen = format!("{RULE}\n❯\u{a0}\n{RULE}\n  2 shells · ← for agents · ↓ to manage\n");
        assert_eq!(
            read_claude(&screen),
            ScreenReading {
                bg_shells: 2,
                ..idle()
            }
        );
        let screen = format!(
            "{RULE}\n❯\u{a0}\n{RULE}\n Select model\n ❯ 1. Default\n   2. Opus\n Enter to confirm · Esc to exit\n"
        );
        assert_eq!(
            read_claude(&screen),
            ScreenReading {
                waiting: Some("dialog open".into()),
                ..idle()
            }
        );
    }

    #[test]
    fn claude_bypass_permissions_warning() {
        let screen = " WARNING: Claude Code running in Bypass Permissions mode\n\n ❯ 1. No, exit\n   2. Yes, I accept\n";
        assert_eq!(read_claude(screen), waiting("Bypass Permissions warning"));
    }

    #[test]
    fn empty_screens_are_unknown() {
        for s in ["", "\n\n\n", "   \n\t\n"] {
            assert_eq!(read_claude(s), unknown());
            assert_eq!(read_codex(s), unknown());
            assert!(!bare_shell_prompt(s));
        }
    }

    // ---- Codex captures -----------------------------------------------------------------

    #[test]
    fn codex_after_ctrl_c_and_quit_are_shells() {
        for screen in [
            fixture!("codex-after-ctrl-c.txt"),
            fixture!("codex-after-quit.txt"),
        ] {
            assert_eq!(read_codex(screen), unknown());
            assert!(bare_shell_prompt(screen));
        }
    }

    #[test]
    fn codex_after_first_reply_reconnecting_is_busy() {
        // `◦ Reconnecting... 1/5 (5s • esc to interrupt)`: the turn is still in flight.
        assert_eq!(read_codex(fixture!("codex-after-first-reply.txt")), busy());
    }

    #[test]
    fn codex_after_kill_signals_leave_a_stale_composer() {
        // The shell printed `Hangup`/`Terminated` over the placeholder; plain text cannot tell
        // this from typed text, so it reads as a draft (the safe direction).
        assert_eq!(
            read_codex(fixture!("codex-after-sigHUP.txt")),
            with_draft("Hangupdex to do anything")
        );
        assert_eq!(
            read_codex(fixture!("codex-after-sigterm.txt")),
            with_draft("Terminatedto do anything")
        );
        assert_eq!(read_codex(fixture!("codex-after-sigINT.txt")), idle());
        for screen in [
            fixture!("codex-after-sigHUP.txt"),
            fixture!("codex-after-sigterm.txt"),
            fixture!("codex-after-sigINT.txt"),
        ] {
            assert!(!bare_shell_prompt(screen));
        }
    }

    #[test]
    fn codex_busy_screens() {
        assert_eq!(read_codex(fixture!("codex-busy.txt")), busy());
        assert_eq!(read_codex(fixture!("codex-no-daemon-busy.txt")), busy());
    }

    #[test]
    fn codex_draft_with_escapes() {
        assert_eq!(
            read_codex(fixture!("codex-draft-escapes.txt")),
            with_draft("a draft that is not sent")
        );
    }

    #[test]
    fn codex_draft_plain() {
        assert_eq!(
            read_codex(fixture!("codex-draft.txt")),
            with_draft("a draft that is not sent")
        );
    }

    #[test]
    fn codex_first_start_is_idle() {
        assert_eq!(read_codex(fixture!("codex-first-start.txt")), idle());
    }

    #[test]
    fn codex_idle_screens() {
        for screen in [
            fixture!("codex-idle.txt"),
            fixture!("codex-idle-after-2.txt"),
            fixture!("codex-idle-escapes.txt"),
            fixture!("codex-no-daemon.txt"),
            fixture!("codex-resumed.txt"),
            fixture!("codex-status.txt"),
            fixture!("codex-resume-after-midturn-kill.txt"),
            fixture!("codex-untrusted-first-run.txt"),
            fixture!("demo-codex-daemon-resumed.txt"),
            fixture!("demo-codex-no-daemon-resumed.txt"),
            fixture!("rss-m-codex-daemon.txt"),
            fixture!("rss-m-codex-nodaemon.txt"),
        ] {
            assert_eq!(read_codex(screen), idle());
            assert!(!bare_shell_prompt(screen));
        }
    }

    #[test]
    fn codex_resume_other_cwd_is_a_chooser() {
        assert_eq!(
            read_codex(fixture!("codex-resume-other-cwd.txt")),
            waiting("resume: choose working directory")
        );
    }

    #[test]
    fn codex_resume_picker_is_waiting() {
        assert_eq!(
            read_codex(fixture!("codex-resume-picker.txt")),
            waiting("resume picker")
        );
    }

    #[test]
    fn codex_tool_running_is_busy_with_a_background_terminal() {
        assert_eq!(
            read_codex(fixture!("codex-tool-running.txt")),
            ScreenReading {
                bg_shells: 1,
                ..busy()
            }
        );
    }

    #[test]
    fn codex_unsent_first_prompt_is_a_draft() {
        // `› hello codex mock` above the status line, before any prompt was sent.
        assert_eq!(
            read_codex(fixture!("codex-unsent-draft.txt")),
            with_draft("hello codex mock")
        );
    }

    #[test]
    fn codex_untrusted_git_first_run_is_the_trust_dialog() {
        assert_eq!(
            read_codex(fixture!("codex-untrusted-git-first-run.txt")),
            waiting("trust dialog")
        );
    }

    #[test]
    fn codex_warnings_overlay_is_waiting() {
        assert_eq!(
            read_codex(fixture!("codex-warnings.txt")),
            waiting("warnings overlay")
        );
    }

    #[test]
    fn codex_escaped_and_plain_captures_agree_on_text() {
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
        let idle_plain = norm(&strip_ansi(fixture!("codex-idle-escapes.txt")));
        assert!(idle_plain.contains("› Ask Codex to do anything"));
        assert!(!idle_plain.contains('\x1b'));
        assert_eq!(
            norm(&strip_ansi(fixture!("codex-draft-escapes.txt"))),
            norm(fixture!("codex-draft.txt"))
        );
    }

    // ---- Codex synthetic edge cases -----------------------------------------------------

    const CODEX_FOOT: &str =
        "\n\n  mock-model default · /tmp/p · title\n  ← for agents · ? for shortcuts\n";

    #[test]
    fn codex_every_known_placeholder_is_empty_in_plain_text() {
        for p in CODEX_PLACEHOLDERS {
            let screen = format!("› {p}{CODEX_FOOT}");
            assert_eq!(read_codex(&screen), idle(), "{p}");
        }
        // Not stock wording: conservatively a draft.
        let screen = format!("› Ask Codex to do anything else{CODEX_FOOT}");
        assert_eq!(
            read_codex(&screen),
            with_draft("Ask Codex to do anything else")
        );
    }

    #[test]
    fn codex_dim_text_is_placeholder_normal_text_is_draft() {
        let dim = format!("\x1b[1m›\x1b[0m \x1b[2mImplement {{feature}}\x1b[0m{CODEX_FOOT}");
        assert_eq!(read_codex(&dim), idle());
        // Typed text equal to a placeholder is still a draft when it is normal intensity.
        let typed = format!("\x1b[1m›\x1b[0m Implement {{feature}}{CODEX_FOOT}");
        assert_eq!(read_codex(&typed), with_draft("Implement {feature}"));
        // A dim ghost suggestion after typed text is not part of the draft.
        let ghost = format!("\x1b[1m›\x1b[0m fix\x1b[2m the tests\x1b[0m{CODEX_FOOT}");
        assert_eq!(read_codex(&ghost), with_draft("fix"));
        // `38;5;2` is a colour, not DIM.
        let colour = format!("\x1b[1m›\x1b[0m \x1b[38;5;2mgreen draft\x1b[39m{CODEX_FOOT}");
        assert_eq!(read_codex(&colour), with_draft("green draft"));
        // `22` ends DIM.
        let undim = format!("› \x1b[2mdim\x1b[22mtyped{CODEX_FOOT}");
        assert_eq!(read_codex(&undim), with_draft("typed"));
    }

    #[test]
    fn codex_multiline_cjk_draft() {
        let screen = format!("› 第一行 🚀\n  second line{CODEX_FOOT}");
        assert_eq!(read_codex(&screen), with_draft("第一行 🚀\nsecond line"));
    }

    #[test]
    fn codex_scrollback_prompts_without_footer_are_not_composers() {
        let screen = "› submitted prompt\n\n• reply\n\n  Worked for 1s • 13:57\n";
        assert_eq!(read_codex(screen), unknown());
    }

    #[test]
    fn codex_two_composers_use_the_last() {
        let screen = format!("› Ask Codex to do anything{CODEX_FOOT}\n› a later draft{CODEX_FOOT}");
        assert_eq!(read_codex(&screen), with_draft("a later draft"));
    }

    #[test]
    fn codex_approval_prompt_is_waiting() {
        let screen = "› run it\n\n  Would you like to run the following command?\n\n  $ rm -rf build\n\n› 1. Yes, proceed (y)\n  2. No, and tell Codex what to do differently (esc)\n\n  Press enter to confirm or esc to cancel\n";
        assert_eq!(read_codex(screen), waiting("approval prompt: command"));
    }

    #[test]
    fn codex_chooser_with_selection_on_the_last_row_is_not_a_composer() {
        let screen =
            "  Update available\n\n  1. Update now\n› 2. Skip\n\n  enter continue · esc back\n";
        assert_eq!(read_codex(screen), waiting("dialog open"));
        // A numbered draft without sibling options is still a draft.
        let screen = format!("› 1. fix the parser{CODEX_FOOT}");
        assert_eq!(read_codex(&screen), with_draft("1. fix the parser"));
        // Claude: selection below the first option.
        let screen = " Pick one\n\n   1. Alpha\n ❯ 2. Beta\n";
        assert_eq!(read_claude(screen), waiting("dialog open"));
    }

    #[test]
    fn codex_two_background_terminals() {
        let screen = format!(
            "• Working (9s • esc to interrupt) · 2 background terminals running · /ps to view\n\n› Ask Codex to do anything{CODEX_FOOT}"
        );
        assert_eq!(
            read_codex(&screen),
            ScreenReading {
                bg_shells: 2,
                ..busy()
            }
        );
    }

    #[test]
    fn codex_thread_title_never_invents_a_dialog() {
        let screen = "› Ask Codex to do anything\n\n  mock-model default · /tmp/p · Trust this folder? Would you like to\n  ← for agents · ? for shortcuts\n";
        assert_eq!(read_codex(screen), idle());
    }

    // ---- strip_ansi and bare_shell_prompt -----------------------------------------------

    #[test]
    fn strip_ansi_removes_all_kinds_of_sequences() {
        assert_eq!(strip_ansi("\x1b[1;2m› \x1b[0mhi"), "› hi");
        assert_eq!(strip_ansi("a\x1b]0;title\x07b"), "ab");
        assert_eq!(
            strip_ansi("a\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\b"),
            "alinkb"
        );
        assert_eq!(strip_ansi("\x1b(Bx\x1b=y\x1b[?25hz"), "xyz");
        assert_eq!(strip_ansi("lone\x1b"), "lone");
        assert_eq!(strip_ansi("broken\x1b[12\nnext"), "broken\nnext");
        assert_eq!(strip_ansi("\x1b\u{e9}t\u{e9}"), "\u{e9}t\u{e9}");
        assert_eq!(strip_ansi("日本\x1b[38;2;1;2;3m語"), "日本語");
    }

    #[test]
    fn bare_shell_prompt_accepts_common_prompts() {
        for p in [
            "root@vm:/tmp/x# ",
            "root@vm:/tmp/x#",
            "$ ",
            "% ",
            "> ",
            "user@host:~/p$ ",
            "user@host ~ %",
            "[user@host dir]$ ",
            "(venv) user@host:~/p$",
            "bash-5.2$ ",
            "~/proj ❯",
            "some output\n\nuser@host:~/My Proj$   \n\n",
        ] {
            assert!(bare_shell_prompt(p), "{p:?}");
        }
    }

    #[test]
    fn bare_shell_prompt_rejects_typed_text_and_tuis() {
        for p in [
            "root@vm:/tmp/x# ls",
            "root@vm:/tmp/x# 1;2c",
            "user@host:~$ echo $",
            "$ cat >",
            "costs 5$",
            "  ← for agents · ? for shortcuts",
            "  Esc to cancel",
            "claude --resume 158f2a09-8e02-4cf8-bbf8-0710d4e8624e",
            "",
        ] {
            assert!(!bare_shell_prompt(p), "{p:?}");
        }
    }

    // ---- properties ---------------------------------------------------------------------

    fn screenish() -> impl Strategy<Value = String> {
        let token = prop_oneof![
            Just("❯\u{a0}".to_string()),
            Just("❯ ".to_string()),
            Just("› ".to_string()),
            Just(RULE.to_string()),
            Just("\n".to_string()),
            Just("  ".to_string()),
            Just("\x1b[2m".to_string()),
            Just("\x1b[0m".to_string()),
            Just("\x1b[38;5;".to_string()),
            Just("\x1b".to_string()),
            Just("\x1b]0;".to_string()),
            Just("esc to interrupt".to_string()),
            Just("• Working (".to_string()),
            Just(" · ".to_string()),
            Just("? for shortcuts".to_string()),
            Just("1. ".to_string()),
            Just("3 shells".to_string()),
            Just("99999999999 background terminals running".to_string()),
            any::<String>(),
        ];
        prop::collection::vec(token, 0..40).prop_map(|v| v.concat())
    }

    proptest! {
        #[test]
        fn classifiers_never_panic_on_arbitrary_unicode(s in any::<String>()) {
            let _ = read_claude(&s);
            let _ = read_codex(&s);
            let _ = bare_shell_prompt(&s);
        }

        #[test]
        fn classifiers_never_panic_on_screen_like_input(s in screenish()) {
            let c = read_claude(&s);
            let x = read_codex(&s);
            let _ = bare_shell_prompt(&s);
            // A draft is only ever reported together with a recognised composer.
            prop_assert!(c.draft.is_none() || c.composer_seen);
            prop_assert!(x.draft.is_none() || x.composer_seen);
        }

        #[test]
        fn strip_ansi_never_leaves_esc(s in screenish()) {
            prop_assert!(!strip_ansi(&s).contains('\x1b'));
        }

        #[test]
        fn strip_ansi_never_leaves_esc_arbitrary(s in any::<String>()) {
            prop_assert!(!strip_ansi(&s).contains('\x1b'));
        }

        #[test]
        fn plain_lines_fast_path_equals_the_escape_aware_split(s in screenish()) {
            let slow: Vec<String> = styled_lines(&s).into_iter().map(|l| l.text).collect();
            prop_assert_eq!(plain_lines(&s), slow);
        }

        #[test]
        fn plain_lines_fast_path_equals_the_escape_aware_split_arbitrary(s in any::<String>()) {
            let slow: Vec<String> = styled_lines(&s).into_iter().map(|l| l.text).collect();
            prop_assert_eq!(plain_lines(&s), slow);
        }

        #[test]
        fn strip_ansi_is_identity_without_esc(s in "[^\x1b]*") {
            prop_assert_eq!(strip_ansi(&s), s);
        }
    }
}
