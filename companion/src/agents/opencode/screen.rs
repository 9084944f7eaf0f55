//! OpenCode's screen (a plain `capture-pane -p` capture): busy, waiting on a permission prompt
//! or a dialog, a draft in the composer.
//!
//! The cues come from real 1.18.33 captures (`tests/fixtures/opencode/*.txt`):
//! * The composer is a box whose left edge is a column of `┃` closed by a `╹▀▀…` line; its last
//!   line names the agent and model (`┃  Build · Mock Model Mock`), the lines above it hold the
//!   text (`session-draft`, `draft-multiline`, `home-draft`). On the home screen an empty box shows
//!   the placeholder `Ask anything… "…"` (`home-idle`, `after-new`); in a session an empty box is
//!   blank (`session-idle`, `idle-80`). The `/` completion list sits on the box's edge, every line
//!   closed by a second `┃` on the right (`slash-new-typed`): those lines are not text.
//!   Submitted prompts in the conversation are `┃` blocks too, but never directly above `╹`.
//! * The line under the box says a turn is in flight: a progress bar of `■`/`⬝` and `esc
//!   interrupt` (`session-busy`, `busy-80`, `busy-draft`).
//! * A permission prompt replaces the box: `△ Permission required` … `Allow once   Allow always
//!   Reject` (`session-permission`). A dialog (`ctrl+p` commands, `/sessions`) is a title line
//!   ending in `esc` over a `Search` line (`palette`, `sessions-list`).

use crate::agents::screen::ScreenReading;

/// The empty box's placeholder on the home screen (`Ask anything…`; Kilo: `Ask anything...`).
const PLACEHOLDER: &str = "Ask anything";

/// The `(column, line index)` of the composer's closing `╹`, lowest on screen.
fn closing(lines: &[&str]) -> Option<(usize, usize)> {
    lines.iter().enumerate().rev().find_map(|(i, l)| {
        let col = l.chars().position(|c| c == '╹')?;
        l.chars()
            .skip(col + 1)
            .take(3)
            .all(|c| c == '▀')
            .then_some((col, i))
    })
}

/// A dialog's title: a line ending in `esc` with a `Search` line right under it (one blank
/// line may sit between).
fn dialog(lines: &[&str]) -> Option<String> {
    lines.iter().enumerate().find_map(|(i, l)| {
        let head = l.trim_end().strip_suffix("esc")?;
        let search = lines
            .iter()
            .skip(i + 1)
            .take(2)
            .any(|n| n.contains("Search"));
        if !head.ends_with("   ") || !search {
            return None;
        }
        let title = head.trim().trim_start_matches('┃').trim();
        Some(if title.is_empty() {
            "dialog open".to_string()
        } else {
            format!("{title} dialog")
        })
    })
}

pub fn read(capture: &str) -> ScreenReading {
    let lines: Vec<&str> = capture.lines().collect();
    let mut r = ScreenReading::default();
    if lines.iter().any(|l| l.contains("Permission required"))
        && lines
            .iter()
            .any(|l| l.contains("Allow once") || l.contains("Reject"))
    {
        r.waiting = Some("permission prompt".into());
    } else if let Some(d) = dialog(&lines) {
        r.waiting = Some(d);
    }
    let Some((col, end)) = closing(&lines) else {
        return r;
    };
    r.busy = lines[end + 1..]
        .iter()
        .take(2)
        .any(|l| l.contains("esc interrupt") || l.contains("esc again to interrupt"));
    // The box's lines, upwards from `╹`: `┃` in the same column.
    let mut body = vec![];
    for l in lines[..end].iter().rev() {
        let chars: Vec<char> = l.chars().collect();
        if chars.get(col) != Some(&'┃') || !chars[..col].iter().all(|c| *c == ' ') {
            break;
        }
        body.push(chars[col + 1..].iter().collect::<String>());
    }
    body.reverse();
    // The last line names agent and model; the rest is text (or the completion list's rows).
    if body.len() < 2 {
        return r;
    }
    r.composer_seen = true;
    let text: Vec<&str> = body[..body.len() - 1]
        .iter()
        .filter(|l| !l.trim_end().ends_with('┃'))
        .map(|l| l.trim())
        .filter(|l| !l.is_empty() && !l.starts_with(PLACEHOLDER))
        .collect();
    if !text.is_empty() {
        r.draft = Some(text.join("\n"));
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::screen::test_kit::{busy, fixture, idle, with_draft as draft};

    #[test]
    fn idle_screens_on_home_and_in_a_session() {
        for (name, cap) in [
            ("home-idle", fixture!("opencode/home-idle.txt")),
            ("after-new", fixture!("opencode/after-new.txt")),
            ("session-idle", fixture!("opencode/session-idle.txt")),
            ("after-tool", fixture!("opencode/after-tool.txt")),
            ("second-idle", fixture!("opencode/second-idle.txt")),
            ("switched", fixture!("opencode/switched.txt")),
            ("resumed-idle", fixture!("opencode/resumed-idle.txt")),
            ("idle-80", fixture!("opencode/idle-80.txt")),
        ] {
            assert_eq!(read(cap), idle(), "{name}");
        }
    }

    #[test]
    fn busy_screens_with_and_without_a_draft() {
        assert_eq!(read(fixture!("opencode/session-busy.txt")), busy());
        assert_eq!(read(fixture!("opencode/busy-80.txt")), busy());
        let r = read(fixture!("opencode/busy-draft.txt"));
        assert!(r.busy);
        assert_eq!(r.draft.as_deref(), Some("typed while busy"));
    }

    #[test]
    fn drafts_in_the_composer_never_the_conversation_or_the_completion_list() {
        assert_eq!(
            read(fixture!("opencode/session-draft.txt")),
            draft("a draft not sent")
        );
        assert_eq!(
            read(fixture!("opencode/home-draft.txt")),
            draft("hello first session")
        );
        assert_eq!(
            read(fixture!("opencode/draft-multiline.txt")),
            draft("line one\nline two")
        );
        assert_eq!(
            read(fixture!("opencode/slash-new-typed.txt")),
            draft("/new")
        );
    }

    #[test]
    fn permission_prompts_and_dialogs_wait() {
        let p = read(fixture!("opencode/session-permission.txt"));
        assert_eq!(p.waiting.as_deref(), Some("permission prompt"));
        let d = read(fixture!("opencode/palette.txt"));
        assert_eq!(d.waiting.as_deref(), Some("Commands dialog"));
        let s = read(fixture!("opencode/sessions-list.txt"));
        assert_eq!(s.waiting.as_deref(), Some("Sessions dialog"));
    }

    #[test]
    fn nothing_recognised_is_never_idle() {
        assert!(!read("").composer_seen);
        assert!(!read("$ ls\nfoo bar\n").composer_seen);
    }
}
