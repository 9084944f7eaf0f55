//! The picker's footer words, mark legend and title/cwd column widths: one implementation for
//! both surfaces, the tmux picker (`park pick`, `park ls`) and the zellij plugin, so a fix to one
//! (issue 34 item 10: a footer cut at 80 columns, totals at the far edge of 200, no legend) is a
//! fix to both.
//!
//! Contract: pure. The protocol crate has no width tables (it builds for wasm with serde only), so
//! the only text measured here is the key help, whose characters are all one column wide (ASCII
//! and `↑↓⏎·`, a unit test checks it): its `chars().count()` is its width. Everything else is
//! returned for the surface to cut with its own width-aware `fit`.

use super::{Mode, SUGGESTED};
use crate::{Row, RowState};

/// Past these a title or a path only pushes the group totals away from the rows (200 columns).
pub const W_TITLE_MAX: usize = 48;
pub const W_CWD_MAX: usize = 40;

/// The widths of the title and cwd columns at `w` columns, when the columns before them take
/// `fixed`: 55/45 of what is left (two columns between them), each capped.
pub fn text_columns(w: usize, fixed: usize) -> (usize, usize) {
    let rest = w.saturating_sub(fixed);
    let t = (rest * 55 / 100).min(W_TITLE_MAX);
    (t, rest.saturating_sub(t + 2).min(W_CWD_MAX))
}

/// Where a row's text ends at `w` columns: a group header's totals are drawn up to here, beside
/// the rows rather than at the far edge of a wide terminal.
pub fn content_width(w: usize, fixed: usize) -> usize {
    let (t, c) = text_columns(w, fixed);
    w.min(fixed + t + 2 + c)
}

/// What `w` parks as a whole: a tmux window or a zellij tab.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    Window,
    Tab,
}

impl Place {
    fn word(self) -> &'static str {
        match self {
            Place::Window => "window",
            Place::Tab => "tab",
        }
    }

    /// A tmux help line said for this place (`w window`/`w win` → `w tab`).
    fn say(self, h: &str) -> String {
        match self {
            Place::Window => h.to_string(),
            Place::Tab => h.replace("w window ", "w tab ").replace("w win ", "w tab "),
        }
    }
}

/// The key help of the list, longest first: every key stays, the words shrink (80 columns cut
/// `r rescan · q quit` off the first). `⏎ park/unpark` is the last word to go: a zellij floating
/// picker is about 78 columns wide.
const NORMAL_HELP: &[&str] = &[
    "↑↓ move · ⏎ park/unpark · w window · p pin · a suggested · f focus · / filter · r rescan · q quit",
    "⏎ park/unpark · w window · p pin · a suggested · f focus · / filter · r rescan · q quit",
    "⏎ park/unpark · w window · p pin · a suggested · f focus · / find · r rescan · q quit",
    "⏎ park/unpark · w win · p pin · a sugg · f focus · / find · r scan · q quit",
    "⏎ toggle · w win · p pin · a sugg · f focus · / find · r scan · q quit",
    "⏎ toggle · w win · p pin · a sugg · f · / · r scan · q quit",
    "⏎ toggle · w · p · a · f · / · r rescan · q quit",
    "⏎ w p a f / r q",
];

/// The footer's key help in `mode` for `w` columns: in the list, the longest that fits.
pub fn help(mode: &Mode, w: usize, place: Place) -> String {
    match mode {
        Mode::Filter => "type to filter (pane, title, cwd, session) · ⏎ keep · Esc clear".into(),
        Mode::ConfirmBulk { target, .. } if target == SUGGESTED => {
            "y park the suggested agents · any other key cancels".into()
        }
        Mode::ConfirmBulk { .. } => {
            format!("y park the {} · any other key cancels", place.word())
        }
        Mode::ConfirmRebuild { .. } => {
            "y resume the lost sessions in their slots (parked ones stay parked) · any other key cancels"
                .into()
        }
        Mode::Normal => NORMAL_HELP
            .iter()
            .map(|h| place.say(h))
            .find(|h| h.chars().count() <= w)
            .unwrap_or_else(|| place.say(NORMAL_HELP[NORMAL_HELP.len() - 1])),
    }
}

/// The legend of the marks ([`super::mark`]) `rows` show, or `None` when they show none.
pub fn legend(rows: &[Row]) -> Option<String> {
    let pinned = rows.iter().any(|r| r.pinned);
    let suggested = rows
        .iter()
        .any(|r| r.suggested && !r.pinned && r.state == RowState::Live);
    let mut parts = vec![];
    if pinned {
        parts.push("📌 pinned: the autopilot never parks it");
    }
    if suggested {
        parts.push("? the autopilot suggests parking it (park auto status says why)");
    }
    (!parts.is_empty()).then(|| parts.join(" · "))
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::row;
    use super::*;

    #[test]
    fn the_help_is_one_column_a_character_and_fits_with_every_key() {
        for place in [Place::Window, Place::Tab] {
            for h in NORMAL_HELP.iter().map(|h| place.say(h)) {
                assert!(h.chars().all(|c| c.is_ascii() || "↑↓⏎·".contains(c)), "{h}");
            }
            for w in [10, 40, 60, 80, 100, 200] {
                let h = help(&Mode::Normal, w, place);
                assert!(h.chars().count() <= w.max(15), "{w}: {h}");
                assert!(h.ends_with(" q quit") || h.ends_with(" q"), "{w}: {h}");
            }
        }
        assert!(help(&Mode::Normal, 86, Place::Window).contains("r rescan · q quit"));
        for w in [75, 78, 80] {
            let h = help(&Mode::Normal, w, Place::Tab);
            assert!(h.starts_with("⏎ park/unpark · w tab ·"), "{w}: {h}");
        }
        let tab = help(&Mode::Normal, 70, Place::Tab);
        assert!(tab.contains("w tab ") && !tab.contains("win"), "{tab}");
        let bulk = Mode::ConfirmBulk {
            target: "work:1".into(),
            label: "work:1 api".into(),
            panes: vec![],
            frees: 0,
        };
        assert!(help(&bulk, 80, Place::Tab).starts_with("y park the tab "));
    }

    #[test]
    fn titles_are_capped_and_totals_stay_by_the_rows() {
        assert_eq!(text_columns(80, 49), (17, 12));
        assert_eq!(text_columns(200, 49), (W_TITLE_MAX, W_CWD_MAX));
        assert_eq!(content_width(80, 49), 80);
        assert_eq!(content_width(200, 49), 49 + W_TITLE_MAX + 2 + W_CWD_MAX);
        assert_eq!(content_width(200, 63), 63 + W_TITLE_MAX + 2 + W_CWD_MAX);
        assert_eq!(text_columns(10, 63), (0, 0));
    }

    #[test]
    fn the_legend_explains_only_the_marks_shown() {
        let mut r = row("%1", "w", 0, "a");
        assert_eq!(legend(std::slice::from_ref(&r)), None);
        r.suggested = true;
        assert!(legend(std::slice::from_ref(&r))
            .unwrap()
            .starts_with("? the autopilot suggests"));
        r.pinned = true;
        assert_eq!(
            legend(&[r]).as_deref(),
            Some("📌 pinned: the autopilot never parks it")
        );
    }
}
