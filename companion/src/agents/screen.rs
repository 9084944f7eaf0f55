//! Screen kit (pure): what every agent's screen reader (`agents/<name>/screen.rs`) shares: the
//! escape-aware lexer and line splitter, the rule and chooser cues, [`ScreenReading`], and the
//! bare-shell-prompt test.
//!
//! Contract:
//! * Input is `tmux capture-pane -p` text, or `capture-pane -p -e` text with SGR escapes for a
//!   reader that needs styles. Nothing here does I/O, and nothing panics on any input.
//! * Every classifier errs in the safe direction for `park`: when a screen is ambiguous it reports a
//!   draft or a dialog (which makes park refuse) rather than "idle", because a wrongly parked agent
//!   loses the user's unsent text while a wrong refusal costs only a retry.
//! * `composer_seen == false` means "cannot tell": the caller must not read `draft == None` as
//!   "no draft" in that case.

use std::sync::OnceLock;

use regex::Regex;

/// What the screen says about one agent pane.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ScreenReading {
    /// A turn is in flight (the agent's own cue, e.g. a footer `esc to interrupt`).
    pub busy: bool,
    /// A dialog or permission prompt is open; the string is a short description.
    pub waiting: Option<String>,
    /// Unsent text in the composer, quoted back (trimmed).
    pub draft: Option<String>,
    /// Background shells or terminals the agent's footer counts.
    pub bg_shells: u32,
    /// The agent's composer was recognised at all; false = we cannot tell.
    pub composer_seen: bool,
}

pub(crate) const RULE_CHAR: char = '─';
/// A `─` rule shorter than this is text, not a full-width fence.
const MIN_RULE_LEN: usize = 10;
/// When no composer is found, dialogs are searched in this many trailing non-empty lines.
pub(crate) const BOTTOM_LINES: usize = 15;

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
pub(crate) struct StyledLine {
    pub(crate) text: String,
    pub(crate) dim: Vec<bool>,
}

/// Splits escaped screen text into lines, tracking DIM across lines (tmux `-e` output carries the
/// attribute state over newlines). Control characters other than tab are dropped.
pub(crate) fn styled_lines(s: &str) -> Vec<StyledLine> {
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
    // `capture-pane -p` text (what most screens are) has no control characters besides the
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

/// A fence: a full-width run of `─` starting at column 0.
pub(crate) fn is_rule(line: &str) -> bool {
    let t = line.trim_end();
    t.chars().all(|c| c == RULE_CHAR) && t.chars().count() >= MIN_RULE_LEN
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
pub(crate) fn selected_option_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(&R, r"^\s*[❯›>]\s*\d+\.\s")
}

/// An unselected numbered option (`   2. No`).
pub(crate) fn other_option_re() -> &'static Regex {
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

/// True when the screen's last non-empty line is a bare shell prompt followed only by what is
/// left of a terminal's reply to a query a killed TUI sent (the shell's line editor eats the
/// `ESC [ ?` and shows the rest): `997;1n` (a colour-scheme report, zellij's answer to
/// Copilot's `CSI ? 996 n`), `1;2c` (device attributes), `12;40R` (cursor position). Nobody
/// typed it: the agent had the terminal until it died. Clearing the line (Ctrl-U) leaves the bare
/// prompt the prefill waits for.
pub fn prompt_with_terminal_reply(plain: &str) -> bool {
    let lines = plain_lines(plain);
    let Some(last) = lines.iter().rev().find(|l| !is_blank(l)) else {
        return false;
    };
    static REPLY: OnceLock<Regex> = OnceLock::new();
    let t = last.trim_end();
    let Some(m) = re(&REPLY, r"[\[?>]*\d+(;\d+)*[cnR]$").find(t) else {
        return false;
    };
    let prompt = &t[..m.start()];
    prompt.ends_with(' ') && bare_shell_prompt(prompt)
}

/// What the agents' screen-reader tests share: their real captures, the usual readings and a
/// screen-like input strategy.
#[cfg(test)]
pub(crate) mod test_kit {
    use super::ScreenReading;
    use proptest::prelude::*;

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

    /// One test per fixture: `reads!(test_name, "file", expected reading)`, each asserting the
    /// agent's `read` (in scope where the macro is used) on the capture.
    macro_rules! reads {
        ($($test:ident, $file:literal, $want:expr;)*) => {
            $(
                #[test]
                fn $test() {
                    assert_eq!(
                        read($crate::agents::screen::test_kit::fixture!($file)),
                        $want,
                        "{}",
                        $file
                    );
                }
            )*
        };
    }
    pub(crate) use reads;

    /// An empty composer, nothing else: at rest.
    pub(crate) fn idle() -> ScreenReading {
        ScreenReading {
            composer_seen: true,
            ..Default::default()
        }
    }

    pub(crate) fn with_draft(d: &str) -> ScreenReading {
        ScreenReading {
            composer_seen: true,
            draft: Some(d.to_string()),
            ..Default::default()
        }
    }

    pub(crate) fn busy() -> ScreenReading {
        ScreenReading {
            composer_seen: true,
            busy: true,
            ..Default::default()
        }
    }

    pub(crate) fn waiting(w: &str) -> ScreenReading {
        ScreenReading {
            waiting: Some(w.to_string()),
            ..Default::default()
        }
    }

    pub(crate) fn unknown() -> ScreenReading {
        ScreenReading::default()
    }

    pub(crate) const RULE: &str = "────────────────────────────────────────";

    pub(crate) fn screenish() -> impl Strategy<Value = String> {
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    use super::test_kit::screenish;

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
            "agent --resume 158f2a09-8e02-4cf8-bbf8-0710d4e8624e",
            "",
        ] {
            assert!(!bare_shell_prompt(p), "{p:?}");
        }
    }

    #[test]
    fn a_late_terminal_reply_at_the_prompt_is_told_from_typed_text() {
        for p in [
            "park-test$ 997;1n",
            "root@vm:/tmp/x# 1;2c",
            "user@host:~$ ?997;1n",
            "$ 12;40R",
        ] {
            assert!(prompt_with_terminal_reply(p), "{p:?}");
            assert!(!bare_shell_prompt(p), "{p:?}");
        }
        for p in [
            "park-test$ ",
            "park-test$ ls 1n",
            "park-test$ echo 997;1n",
            "costs 5$ 1;2c",
            "  ← for agents · ? for shortcuts",
            "997;1n",
            "",
        ] {
            assert!(!prompt_with_terminal_reply(p), "{p:?}");
        }
    }

    // ---- properties ---------------------------------------------------------------------

    proptest! {
        #[test]
        fn bare_shell_prompt_never_panics_on_arbitrary_unicode(s in any::<String>()) {
            let _ = bare_shell_prompt(&s);
        }

        #[test]
        fn bare_shell_prompt_never_panics_on_screen_like_input(s in screenish()) {
            let _ = bare_shell_prompt(&s);
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
