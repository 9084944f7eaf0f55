//! Text rendering for the picker pane and the status strip: the same rows, columns, headers and
//! footer as the tmux picker (`companion/src/pick/view.rs`), as ANSI lines cut to the pane width.
//!
//! Contract: pure functions of the state; every line fits `cols` display columns.

use crate::state::{Mode, Perm, Plugin};
use park_protocol::picker::text::{self, Place};
use park_protocol::picker::{busy, Line, Mode as PMode};
use park_protocol::{human_bytes, Row, RowState};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

const BOLD: &str = "\u{1b}[1m";
const DIM: &str = "\u{1b}[2m";
const REV: &str = "\u{1b}[7m";
const RED: &str = "\u{1b}[31m";
const GREEN: &str = "\u{1b}[32m";
const YELLOW: &str = "\u{1b}[33m";
const BLUE: &str = "\u{1b}[34m";
const CYAN: &str = "\u{1b}[36m";
const RESET: &str = "\u{1b}[0m";

/// The columns before a row's title: cursor, pane (`terminal_12@session` is long), agent, state,
/// idle, memory.
const FIXED: usize = 2 + 18 + 7 + 16 + 6 + 14;

pub const NEEDS: &str = "park needs ReadApplicationState, ChangeApplicationState, RunCommands, ReadCliPipes: reopen the plugin and answer y (or add them to permissions.kdl)";

/// Cuts `s` to `w` display columns (with `…` when cut) and pads it to exactly `w`.
pub fn fit(s: &str, w: usize) -> String {
    let n = UnicodeWidthStr::width(s);
    if n <= w {
        return format!("{s}{}", " ".repeat(w - n));
    }
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let cw = c.width().unwrap_or(0);
        if used + cw + 1 > w {
            break;
        }
        out.push(c);
        used += cw;
    }
    if w > 0 {
        out.push('…');
        used += 1;
    }
    out.push_str(&" ".repeat(w.saturating_sub(used)));
    out
}

/// `s`, which may hold SGR escapes, cut to at most `w` display columns (escapes kept, a reset
/// after a cut): below its fixed columns' width a row would otherwise run past the pane.
fn clip(s: &str, w: usize) -> String {
    let mut out = String::new();
    let (mut used, mut esc) = (0, false);
    for c in s.chars() {
        if esc || c == '\u{1b}' {
            esc = c != 'm';
            out.push(c);
            continue;
        }
        let cw = c.width().unwrap_or(0);
        if used + cw > w {
            out.push_str(RESET);
            break;
        }
        out.push(c);
        used += cw;
    }
    out
}

fn idle(s: Option<u64>) -> String {
    match s {
        None => "-".into(),
        Some(s) if s < 60 => format!("{s}s"),
        Some(s) if s < 3600 => format!("{}m", s / 60),
        Some(s) if s < 86400 => format!("{}h", s / 3600),
        Some(s) => format!("{}d", s / 86400),
    }
}

/// The strip: `❄ 3 · 1.1G` when something is parked, `❄ 0` otherwise; a recent result instead;
/// `park 0.2.0 ≠ plugin 0.1.0: run park zellij install` (in red) while the park that sends the
/// status is another release than this plugin.
pub fn strip(p: &Plugin, cols: usize) -> String {
    if p.perm == Perm::Denied {
        return fit(NEEDS, cols);
    }
    if let Some((m, _)) = &p.flash {
        return fit(m, cols);
    }
    if let Some(m) = p
        .summary
        .as_ref()
        .and_then(|s| s.version_mismatch(park_protocol::VERSION))
    {
        return format!("{RED}{}{RESET}", fit(&m, cols));
    }
    let t = match &p.summary {
        Some(s) if s.parked > 0 && s.suggested > 0 => format!(
            "❄ {} · {} · {}?",
            s.parked,
            human_bytes(s.freed_bytes),
            s.suggested
        ),
        Some(s) if s.parked > 0 => format!("❄ {} · {}", s.parked, human_bytes(s.freed_bytes)),
        Some(s) if s.suggested > 0 => format!("❄ {}?", s.suggested),
        Some(_) => "❄ 0".to_string(),
        None => "❄ …".to_string(),
    };
    fit(&t, cols)
}

fn row_line(p: &Plugin, r: &Row, selected: bool, w: usize) -> String {
    let app = &p.app;
    let (state, color) = if let Some(f) = app.inflight.get(&r.pane) {
        (f.op.progress().to_string(), YELLOW)
    } else {
        match r.state {
            RowState::Parked => ("❄ parked".into(), CYAN),
            RowState::Untargetable => ("⚠ untargetable".into(), RED),
            RowState::Background => (format!("◌ bg {}", r.status.as_str()), CYAN),
            RowState::Lost => ("⚠ lost".into(), RED),
            RowState::Live if busy(r) || r.reason.is_some() => {
                (format!("● {}", r.status.as_str()), YELLOW)
            }
            RowState::Live => (r.status.as_str().into(), GREEN),
        }
    };
    let state = format!("{}{state}", park_protocol::picker::mark(r));
    let mem = match r.state {
        RowState::Parked => format!(
            "freed {}",
            r.freed_bytes.map(human_bytes).unwrap_or("?".into())
        ),
        RowState::Untargetable | RowState::Background => format!("{} rss", human_bytes(r.bytes)),
        RowState::Lost => "park rebuild".into(),
        RowState::Live => format!("frees ~{}", human_bytes(r.anon_bytes)),
    };
    let rest = w.saturating_sub(FIXED);
    let tail = if r.state == RowState::Untargetable {
        format!(
            "{RED}{}{RESET}",
            fit(r.reason.as_deref().unwrap_or(""), rest)
        )
    } else {
        // Capped as the tmux picker's are: past them a title only pushes the totals away.
        let (wt, wc) = text::text_columns(w, FIXED);
        format!("{}  {DIM}{}{RESET}", fit(&r.title, wt), fit(&r.cwd, wc))
    };
    let body = format!(
        "{}{BOLD}{}{RESET}{}{color}{}{RESET}{}{}{tail}",
        if selected { "▶ " } else { "  " },
        fit(&r.pane, 18),
        fit(r.agent.as_str(), 7),
        fit(&state, 16),
        fit(&format!("{:>5}", idle(r.idle_seconds)), 6),
        fit(&mem, 14),
    );
    let body = clip(&body, w);
    if selected {
        // Reverse video survives the inner resets only if re-applied after each.
        format!(
            "{REV}{}{RESET}",
            body.replace(RESET, &format!("{RESET}{REV}"))
        )
    } else {
        body
    }
}

/// The picker: title, grouped rows scrolled to keep the cursor visible, prompt and help lines.
pub fn picker(p: &Plugin, rows: usize, cols: usize) -> Vec<String> {
    let app = &p.app;
    if p.perm == Perm::Denied {
        return vec![fit(NEEDS, cols)];
    }
    if p.perm == Perm::Pending {
        return vec![fit("park: waiting for permissions…", cols)];
    }
    let live = app
        .rows
        .iter()
        .filter(|r| r.state != RowState::Parked)
        .count();
    let parked: Vec<&Row> = app
        .rows
        .iter()
        .filter(|r| r.state == RowState::Parked)
        .collect();
    let freed: u64 = parked.iter().filter_map(|r| r.freed_bytes).sum();
    let mut title = format!(" park · {live} running · {} parked", parked.len());
    if freed > 0 {
        title.push_str(&format!(" (freed {})", human_bytes(freed)));
    }
    let mut out = vec![format!("{BOLD}{}{RESET}", fit(&title, cols))];
    let list_h = rows.saturating_sub(3);
    let total = app.lines.len();
    let mut off = 0;
    if let Some(c) = app.cursor {
        if c >= list_h {
            off = c + 1 - list_h;
        }
    }
    if app.lines.is_empty() {
        let t = if app.scanning {
            "scanning…"
        } else {
            "no agents in panes, nothing parked"
        };
        out.push(fit(&format!("  {t}"), cols));
    }
    for (i, l) in app.lines.iter().enumerate().skip(off).take(list_h) {
        out.push(match l {
            Line::Header(g) => {
                let g = &app.groups[*g];
                let total = if g.parkable > 0 {
                    format!("parkable {}", human_bytes(g.parkable))
                } else {
                    String::new()
                };
                // Beside the rows' text, not at the far edge of a wide pane.
                let lw = text::content_width(cols, FIXED)
                    .saturating_sub(UnicodeWidthStr::width(total.as_str()) + 1);
                format!(
                    "{BLUE}{BOLD}{}{RESET} {GREEN}{total}{RESET}",
                    fit(&g.label(), lw)
                )
            }
            Line::Row(r) => row_line(p, &app.rows[*r], app.cursor == Some(i), cols),
        });
    }
    let _ = total;
    while out.len() < rows.saturating_sub(2) {
        out.push(String::new());
    }
    let prompt = match &app.mode {
        PMode::Filter => format!(
            "{YELLOW}/{RESET}{}",
            fit(&format!("{}█", app.filter), cols.saturating_sub(1))
        ),
        m @ (PMode::ConfirmBulk { .. } | PMode::ConfirmRebuild { .. }) => format!(
            "{YELLOW}{BOLD}{}{RESET}",
            fit(&m.question().unwrap_or_default(), cols)
        ),
        PMode::Normal => match (&app.message, app.current().and_then(|r| r.reason.clone())) {
            (Some(m), _) => format!(
                "{}{}{RESET}",
                if app.message_bad { RED } else { GREEN },
                fit(m, cols)
            ),
            (None, Some(why)) => format!("{DIM}{}{RESET}", fit(&format!("↳ {why}"), cols)),
            // The cursor row's mark, spelled out.
            (None, None) => match app
                .current()
                .and_then(|r| text::legend(std::slice::from_ref(r)))
            {
                Some(l) => format!("{DIM}{}{RESET}", fit(&format!("↳ {l}"), cols)),
                None => String::new(),
            },
        },
    };
    out.push(prompt);
    // The longest help that fits: at 80 columns the full one lost `r rescan · q quit`.
    let help = text::help(&app.mode, cols, Place::Tab);
    out.push(format!("{DIM}{}{RESET}", fit(&help, cols)));
    out.truncate(rows.max(1));
    out
}

pub fn render(p: &Plugin, rows: usize, cols: usize) -> Vec<String> {
    match p.mode {
        Mode::Strip => vec![strip(p, cols)],
        Mode::Picker => picker(p, rows, cols),
    }
}

/// A line without its escape sequences (for tests and width checks).
#[cfg(test)]
pub fn plain(s: &str) -> String {
    let mut out = String::new();
    let mut esc = false;
    for c in s.chars() {
        match (esc, c) {
            (false, '\u{1b}') => esc = true,
            (true, 'm') => esc = false,
            (true, _) => {}
            (false, c) => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use park_protocol::picker::fixtures::fixture;
    use std::collections::BTreeMap;

    fn picker_with_rows() -> Plugin {
        let mut c = BTreeMap::new();
        c.insert("mode".into(), "picker".into());
        let mut p = Plugin::new(&c);
        p.permissions(true);
        p.app.set_rows(fixture(), vec![]);
        p
    }

    #[test]
    fn picker_groups_rows_and_fits_the_width() {
        let p = picker_with_rows();
        let lines = picker(&p, 20, 100);
        let text: Vec<String> = lines.iter().map(|l| plain(l)).collect();
        assert!(text[0].contains("park · 4 running · 1 parked"), "{text:?}");
        assert!(text.iter().any(|l| l.starts_with("work:1 api")), "{text:?}");
        assert!(text.iter().any(|l| l.contains("❄ parked")));
        assert!(
            text.iter().any(|l| l.starts_with("▶ %1")),
            "cursor on the first row: {text:?}"
        );
        for l in &text {
            assert!(UnicodeWidthStr::width(l.as_str()) <= 100, "{l:?}");
        }
        assert!(text.last().unwrap().contains("⏎ park/unpark"));
    }

    /// Issue 34 item 10, as the tmux picker fixed it: at 80 columns the footer was cut before
    /// `r rescan · q quit`; at 200 the tab totals sat at the pane's far edge and titles ran on;
    /// the `?` mark had no legend.
    #[test]
    fn the_footer_fits_totals_stay_by_the_rows_titles_are_capped_and_marks_are_explained() {
        let long = "Refactor the whole tokenizer so that every error carries its span and a hint for the user";
        let mut p = picker_with_rows();
        let mut rows = fixture();
        rows[0].title = long.into();
        rows[0].cwd = "/home/u/projects/clients/acme/backend/services/api-gateway".into();
        rows[0].suggested = true;
        p.app.set_rows(rows, vec![]);
        for w in [60usize, 80, 200] {
            let text: Vec<String> = picker(&p, 20, w).iter().map(|l| plain(l)).collect();
            let help = text.last().unwrap();
            assert!(
                help.contains("q quit") && help.contains("r ") && !help.contains('…'),
                "{w}: {help}"
            );
            for l in &text {
                assert!(UnicodeWidthStr::width(l.as_str()) <= w, "{w}: {l:?}");
            }
        }
        let text: Vec<String> = picker(&p, 20, 200).iter().map(|l| plain(l)).collect();
        let header = text.iter().find(|l| l.contains("parkable")).unwrap();
        let row = text.iter().find(|l| l.contains("%1")).unwrap();
        let col = |l: &str, needle: &str| UnicodeWidthStr::width(&l[..l.find(needle).unwrap()]);
        let row_end = UnicodeWidthStr::width(row.trim_end());
        assert!(
            col(header, "parkable") < row_end + 4,
            "totals beside the rows, not at column {}: {header}",
            col(header, "parkable")
        );
        let title = &row[row.find("Refactor").unwrap()..];
        let title = &title[..title.find("  ").unwrap()];
        assert!(
            UnicodeWidthStr::width(title) <= text::W_TITLE_MAX && title.ends_with('…'),
            "the title is capped: {title:?}"
        );
        assert!(row.contains("? idle"), "{row}");
        let prompt = &text[text.len() - 2];
        assert!(
            prompt.contains("↳ ? the autopilot suggests parking it"),
            "the cursor row's mark is spelled out: {text:?}"
        );
    }

    #[test]
    fn strip_shows_count_and_size_or_the_grant_hint() {
        let mut c = BTreeMap::new();
        c.insert("mode".into(), "strip".into());
        let mut p = Plugin::new(&c);
        p.summary = Some(park_protocol::StatusSummary {
            schema: 1,
            parked: 3,
            freed_bytes: 1181116006,
            suggested: 0,
            lost: 0,
            updated: 0,
            version: Some(park_protocol::VERSION.into()),
        });
        assert_eq!(strip(&p, 12).trim_end(), "❄ 3 · 1.1G");
        if let Some(s) = p.summary.as_mut() {
            s.suggested = 2;
        }
        assert_eq!(strip(&p, 40).trim_end(), "❄ 3 · 1.1G · 2?");
        p.perm = Perm::Denied;
        assert!(strip(&p, 200).starts_with("park needs ReadApplicationState"));
    }

    #[test]
    fn strip_says_when_park_and_the_plugin_are_different_releases() {
        let mut c = BTreeMap::new();
        c.insert("mode".into(), "strip".into());
        let mut p = Plugin::new(&c);
        // A park too old to send its version: the count, no complaint.
        let (_, redraw) = p.pipe(
            "park:status",
            Some(r#"{"schema":1,"parked":3,"freed_bytes":1181116006,"updated":1}"#),
        );
        assert!(redraw);
        assert_eq!(strip(&p, 40).trim_end(), "❄ 3 · 1.1G");
        // The same release: the count.
        let same = format!(
            r#"{{"schema":1,"parked":3,"freed_bytes":1181116006,"updated":1,"version":"{}"}}"#,
            park_protocol::VERSION
        );
        p.pipe("park:status", Some(&same));
        assert_eq!(strip(&p, 40).trim_end(), "❄ 3 · 1.1G");
        // Another release: says so, and what to run.
        p.pipe(
            "park:status",
            Some(r#"{"schema":1,"parked":3,"freed_bytes":1,"updated":1,"version":"9.9.9"}"#),
        );
        let line = plain(&strip(&p, 80));
        assert_eq!(
            line.trim_end(),
            format!(
                "park 9.9.9 ≠ plugin {}: run park zellij install",
                park_protocol::VERSION
            )
        );
        assert!(strip(&p, 80).starts_with(RED));
        assert_eq!(UnicodeWidthStr::width(plain(&strip(&p, 20)).as_str()), 20);
    }

    #[test]
    fn fit_cuts_wide_text_by_columns() {
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(UnicodeWidthStr::width(fit("日本語テキスト", 7).as_str()), 7);
    }
}
