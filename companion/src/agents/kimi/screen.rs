//! Kimi Code's screen (a plain `capture-pane -p` capture; escapes, if any, are stripped first):
//! busy, a dialog, a draft in the composer.
//!
//! The cues come from real 2.1.0 captures (`tests/fixtures/kimi/screen-*.txt`):
//! * The composer is a rounded box: `╭───╮`, then `│ > <text> │` (continuation lines `│   …  │`),
//!   then `╰───╯`, with the footer (model, cwd, a tip, `context: n%`) below it. The empty
//!   composer is `│ >` and blanks; anything else in the box is a draft (a slash command being
//!   typed included: its menu is drawn under the box).
//! * A turn in flight shows a moon-phase spinner line above the box (`🌑 · Tip: …`, one of
//!   🌑🌒🌓🌔🌕🌖🌗🌘 at the start of a line); the box stays (the user may type ahead).
//! * A tool approval replaces the box with `▶ Run this command?` … `▶ 1. Approve once` between
//!   two rules; the folder-trust dialog of a first start is `Trust this folder?` with a `❯`
//!   chooser. Neither is a draft: no box is on screen.
//! * Kimi's notices (the welcome box, `No session yet — …`, `tmux extended-keys is off …`,
//!   `Ask When Needed mode: OFF`, `Started a new session (…)`) sit above the box and are never
//!   read as a draft.
//!
//! Errs in the safe direction as every classifier does: no box and no known dialog means "cannot
//! tell" (`composer_seen == false`), which makes park refuse.

use crate::agents::screen::{has_chooser, is_blank, last_nonempty, plain_lines, ScreenReading};

/// The prompt signs the composer's first line starts with (`>`; `!` in shell mode).
const PREFIXES: &[&str] = &[">", "!", "$"];
/// The spinner's frames.
const MOONS: &[char] = &['🌑', '🌒', '🌓', '🌔', '🌕', '🌖', '🌗', '🌘'];
/// How many non-empty lines above the box the spinner line may sit.
const SPINNER_REACH: usize = 4;
/// When no composer is found, dialogs are searched in this many trailing non-empty lines.
const BOTTOM_LINES: usize = 20;

pub fn read(plain: &str) -> ScreenReading {
    let lines = plain_lines(plain);
    let mut reading = ScreenReading::default();
    // The last box on screen, when it is the composer (the welcome box above an approval is
    // not: then the dialog decides).
    let Some((top, rest, inner)) = composer(&lines) else {
        let tail = last_nonempty(&lines, BOTTOM_LINES);
        reading.waiting = dialog(&tail);
        return reading;
    };
    reading.composer_seen = true;
    let mut parts = vec![rest.trim().to_string()];
    parts.extend(inner[1..].iter().map(|l| l.trim().to_string()));
    let draft = parts
        .iter()
        .filter(|p| !p.is_empty())
        .cloned()
        .collect::<Vec<_>>()
        .join("\n");
    if !draft.is_empty() {
        reading.draft = Some(draft);
    }
    reading.busy = lines[..top]
        .iter()
        .rev()
        .filter(|l| !is_blank(l))
        .take(SPINNER_REACH)
        .any(|l| l.trim_start().starts_with(MOONS));
    reading
}

/// The text between the box's side bars of one line, or `None` when the line is no box line.
fn box_inner(line: &str) -> Option<&str> {
    let t = line.trim();
    let t = t.strip_prefix('│')?;
    Some(t.strip_suffix('│').unwrap_or(t))
}

/// The last box on screen whose first inner line is the composer: the row of its `╭`, the text
/// after the prompt sign and the inner lines.
fn composer(lines: &[String]) -> Option<(usize, &str, Vec<&str>)> {
    let bottom = (0..lines.len())
        .rev()
        .find(|&i| lines[i].trim_start().starts_with('╰'))?;
    let top = (0..bottom)
        .rev()
        .find(|&i| lines[i].trim_start().starts_with('╭'))?;
    let inner: Vec<&str> = lines[top + 1..bottom]
        .iter()
        .map(|l| box_inner(l))
        .collect::<Option<_>>()?;
    let rest = PREFIXES.iter().find_map(|p| {
        inner
            .first()?
            .trim_start()
            .strip_prefix(p)
            .filter(|r| r.is_empty() || r.starts_with(' '))
    })?;
    Some((top, rest, inner))
}

/// Names the Kimi dialog visible in `lines`, if any.
fn dialog(lines: &[&str]) -> Option<String> {
    if lines.iter().any(|l| l.contains("Run this command?"))
        || lines.iter().any(|l| l.contains("1. Approve once"))
    {
        return Some("tool approval".into());
    }
    if lines.iter().any(|l| l.trim() == "Trust this folder?") {
        return Some("folder-trust dialog".into());
    }
    if lines.iter().any(|l| l.trim_start().starts_with('▶')) && has_numbered(lines) {
        return Some("dialog open".into());
    }
    has_chooser(lines).then(|| "dialog open".into())
}

fn has_numbered(lines: &[&str]) -> bool {
    lines.iter().any(|l| {
        let t = l.trim_start().trim_start_matches('▶').trim_start();
        t.split_once(". ")
            .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::screen::test_kit::{
        busy, fixture, idle, screenish, unknown, waiting, with_draft,
    };
    use proptest::prelude::*;

    #[test]
    fn idle_screens_read_idle() {
        for (name, s) in [
            (
                "fresh start, no session yet",
                fixture!("kimi/screen-idle.txt"),
            ),
            ("after turns", fixture!("kimi/screen-idle2.txt")),
            ("after /new", fixture!("kimi/screen-after-new.txt")),
            ("resumed, plan mode", fixture!("kimi/screen-resumed.txt")),
        ] {
            assert_eq!(read(s), idle(), "{name}");
        }
    }

    #[test]
    fn drafts_are_quoted_back_and_notices_are_not_drafts() {
        assert_eq!(
            read(fixture!("kimi/screen-draft.txt")),
            with_draft("hello there")
        );
        assert_eq!(
            read(fixture!("kimi/screen-draft-after-turns.txt")),
            with_draft("a draft")
        );
        assert_eq!(
            read(fixture!("kimi/screen-draft-wrapped.txt")),
            with_draft(
                "this is a long unsent draft that should wrap over\nmore than one line of the composer box"
            )
        );
        // A slash command being typed, its menu under the box: a draft.
        assert_eq!(
            read(fixture!("kimi/screen-slash-menu.txt")),
            with_draft("/new")
        );
    }

    #[test]
    fn the_moon_spinner_is_busy() {
        assert_eq!(read(fixture!("kimi/screen-busy.txt")), busy());
        assert_eq!(read(fixture!("kimi/screen-busy-escapes.txt")), busy());
    }

    /// The approval and the folder-trust dialog: waiting, and neither is a draft.
    #[test]
    fn dialogs_are_waiting_never_a_draft() {
        assert_eq!(
            read(fixture!("kimi/screen-permission.txt")),
            waiting("tool approval")
        );
        assert_eq!(
            read(fixture!("kimi/screen-trust.txt")),
            waiting("folder-trust dialog")
        );
        // A tall pane: the welcome box is still on screen above the approval, and it is no
        // composer (the e2e guards case, 2.1.0).
        assert_eq!(
            read(fixture!("kimi/screen-permission-tall.txt")),
            waiting("tool approval")
        );
    }

    #[test]
    fn no_composer_cannot_tell() {
        assert_eq!(read(""), unknown());
        assert_eq!(read("root@vm:/tmp# \n"), unknown());
        // The welcome box alone (the composer not drawn yet).
        let welcome: String = fixture!("kimi/screen-idle.txt")
            .lines()
            .take(12)
            .collect::<Vec<_>>()
            .join("\n");
        assert_eq!(read(&welcome), unknown());
    }

    proptest! {
        #[test]
        fn never_panics(s in screenish()) {
            let _ = read(&s);
        }
    }
}
