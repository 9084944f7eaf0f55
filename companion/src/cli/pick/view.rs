//! Rendering of the picker: a title line, the grouped list, a prompt/result line and the key help.
//!
//! Contract: a pure function of the [`App`] state and the frame size (plus the list's scroll offset,
//! which it keeps so the cursor stays visible). Text is measured and cut by display columns
//! (unicode-width), never by bytes or chars, so `❄ ⚠ ●` and CJK titles line up; every list line is
//! padded to the full width so the cursor highlight spans it.

use super::app::{self, busy, App, Line as AppLine, Mode};
use park_protocol::picker::text;
use park_protocol::{human_bytes, Row, RowState};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

const W_MARK: usize = 2;
const W_PANE: usize = 6;
const W_AGENT: usize = 7;
const W_STATE: usize = 15;
const W_IDLE: usize = 6;
const W_MEM: usize = 13;
const FIXED: usize = W_MARK + W_PANE + W_AGENT + W_STATE + W_IDLE + W_MEM;
/// The widths of the title and cwd columns at `w` columns (shared with the zellij picker).
pub fn text_columns(w: usize) -> (usize, usize) {
    text::text_columns(w, FIXED)
}

/// Where a row's text ends at `w` columns: the group totals are drawn up to here.
pub fn content_width(w: usize) -> usize {
    text::content_width(w, FIXED)
}

/// A row's state word as both `ls` and the picker show it (the mark in front), and its colour.
pub fn state_text(r: &Row) -> (String, Color) {
    let (s, c) = match r.state {
        RowState::Parked => ("❄ parked".into(), Color::Cyan),
        RowState::Untargetable => ("⚠ untargetable".into(), Color::Red),
        RowState::Background => (format!("◌ bg {}", r.status.as_str()), Color::Blue),
        RowState::Lost => ("⚠ lost".into(), Color::Red),
        RowState::Live if busy(r) || r.reason.is_some() => {
            (format!("● {}", r.status.as_str()), Color::Yellow)
        }
        RowState::Live => (r.status.as_str().into(), Color::Green),
    };
    (format!("{}{s}", app::mark(r)), c)
}

/// What a row frees (or freed, or holds), as both views show it.
pub fn mem_text(r: &Row) -> String {
    match r.state {
        RowState::Parked => format!(
            "freed {}",
            r.freed_bytes.map(human_bytes).unwrap_or_else(|| "?".into())
        ),
        RowState::Untargetable | RowState::Background => format!("{} rss", human_bytes(r.bytes)),
        RowState::Lost => "park rebuild".into(),
        RowState::Live => format!("frees ~{}", human_bytes(r.anon_bytes)),
    }
}

pub use park_protocol::picker::text::legend;

/// Width of `park ls`'s session-id column (8 characters and a space).
pub const W_ID: usize = 9;

/// One row as plain text in the picker's columns (`park ls`), `w` columns at most; `with_id` adds
/// the session id's first 8 characters after the memory column (fixed width: nothing moves).
pub fn plain_row(r: &Row, w: usize, home: Option<&str>, with_id: bool) -> String {
    let (t, c) = text_columns(if with_id { w.saturating_sub(W_ID) } else { w });
    let pane = if r.pane.is_empty() { "-" } else { &r.pane };
    let mut s = format!(
        "  {}{}{}{}{}",
        fit(pane, W_PANE),
        fit(r.agent.as_str(), W_AGENT),
        fit(&state_text(r).0, W_STATE),
        fit(
            &right(&park::support::duration::brief(r.idle_seconds), W_IDLE - 1),
            W_IDLE
        ),
        fit(&mem_text(r), W_MEM),
    );
    if with_id {
        let sid = r.session_id.as_deref().unwrap_or("-");
        s.push_str(&fit(&sid[..8.min(sid.len())], W_ID));
    }
    if r.state == RowState::Untargetable {
        s.push_str(&fit(
            r.reason.as_deref().unwrap_or_default(),
            w.saturating_sub(FIXED + if with_id { W_ID } else { 0 }),
        ));
    } else {
        s.push_str(&fit(&r.title, t));
        s.push_str("  ");
        s.push_str(&fit_tail(&home_short(home, &r.cwd), c));
    }
    s.trim_end().to_string()
}

/// Display width of `s` (control characters count as one column: they are drawn as `?`).
pub fn width(s: &str) -> usize {
    s.chars().map(char_width).sum()
}

fn char_width(c: char) -> usize {
    if c.is_control() {
        1
    } else {
        UnicodeWidthChar::width(c).unwrap_or(0)
    }
}

fn clean(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

/// `s` cut to at most `w` columns (ending in `…` when cut) and padded with spaces to exactly `w`.
pub fn fit(s: &str, w: usize) -> String {
    let s = clean(s);
    if w == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut used = 0;
    if UnicodeWidthStr::width(s.as_str()) <= w {
        out.push_str(&s);
        used = UnicodeWidthStr::width(s.as_str());
    } else {
        for c in s.chars() {
            let cw = char_width(c);
            if used + cw > w - 1 {
                break;
            }
            out.push(c);
            used += cw;
        }
        out.push('…');
        used += 1;
    }
    out.push_str(&" ".repeat(w - used));
    out
}

/// Like [`fit`] but keeps the end of `s` (`…/src/api`): for paths.
pub fn fit_tail(s: &str, w: usize) -> String {
    let s = clean(s);
    if w == 0 {
        return String::new();
    }
    if width(&s) <= w {
        return fit(&s, w);
    }
    let mut tail: Vec<char> = vec![];
    let mut used = 1;
    for c in s.chars().rev() {
        let cw = char_width(c);
        if used + cw > w {
            break;
        }
        tail.push(c);
        used += cw;
    }
    let t: String = std::iter::once('…').chain(tail.into_iter().rev()).collect();
    fit(&t, w)
}

/// Right-aligns `s` in `w` columns (cutting it like [`fit`] when longer).
fn right(s: &str, w: usize) -> String {
    let n = width(s);
    if n >= w {
        return fit(s, w);
    }
    format!("{}{}", " ".repeat(w - n), s)
}

fn home_short(home: Option<&str>, p: &str) -> String {
    match home {
        Some(h) if !h.is_empty() && h != "/" => match p.strip_prefix(h) {
            Some(rest) if rest.is_empty() || rest.starts_with('/') => format!("~{rest}"),
            _ => p.to_string(),
        },
        _ => p.to_string(),
    }
}

fn row_line(app: &App, r: &Row, selected: bool, w: usize) -> Line<'static> {
    let rest = w.saturating_sub(FIXED);
    let (w_title, w_cwd) = text_columns(w);
    let inflight = app.inflight.get(&r.pane);
    let (state, st_style) = if let Some(f) = inflight {
        (
            format!("{}{}", app::mark(r), f.op.progress()),
            Style::default()
                .fg(Color::Magenta)
                .add_modifier(Modifier::BOLD),
        )
    } else {
        let (s, c) = state_text(r);
        (s, Style::default().fg(c))
    };
    let mem = mem_text(r);
    let pane = if r.pane.is_empty() { "-" } else { &r.pane };
    let mut spans = vec![
        Span::raw(if selected { "▶ " } else { "  " }),
        Span::styled(
            fit(pane, W_PANE),
            Style::default().add_modifier(Modifier::BOLD),
        ),
        Span::raw(fit(r.agent.as_str(), W_AGENT)),
        Span::styled(fit(&state, W_STATE), st_style),
        Span::raw(fit(
            &right(&park::support::duration::brief(r.idle_seconds), W_IDLE - 1),
            W_IDLE,
        )),
        Span::raw(fit(&mem, W_MEM)),
    ];
    if r.state == RowState::Untargetable {
        let why = r.reason.clone().unwrap_or_default();
        spans.push(Span::styled(
            fit(&why, rest),
            Style::default().fg(Color::Red),
        ));
    } else {
        spans.push(Span::raw(fit(&r.title, w_title)));
        spans.push(Span::raw("  "));
        spans.push(Span::styled(
            fit_tail(&home_short(app.home.as_deref(), &r.cwd), w_cwd),
            Style::default().fg(Color::DarkGray),
        ));
    }
    let used: usize = spans.iter().map(|s| width(&s.content)).sum();
    if used < w {
        spans.push(Span::raw(" ".repeat(w - used)));
    }
    let line = Line::from(spans);
    if selected {
        line.style(Style::default().add_modifier(Modifier::REVERSED))
    } else {
        line
    }
}

fn header_line(app: &App, gi: usize, w: usize) -> Line<'static> {
    let g = &app.groups[gi];
    let label = g.label();
    let total = if g.parkable > 0 {
        format!("parkable {}", human_bytes(g.parkable))
    } else {
        String::new()
    };
    // Beside the rows' text, not at the far edge of a wide terminal.
    let lw = content_width(w).saturating_sub(width(&total) + 1);
    Line::from(vec![
        Span::styled(
            fit(&label, lw),
            Style::default()
                .fg(Color::Blue)
                .add_modifier(Modifier::BOLD),
        ),
        Span::styled(total, Style::default().fg(Color::Green)),
    ])
}

fn title_line(app: &App, w: usize) -> Line<'static> {
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
    let parkable: u64 = app.groups.iter().map(|g| g.parkable).sum();
    let mut t = format!(" park · {live} running · {} parked", parked.len());
    if freed > 0 {
        t.push_str(&format!(" (freed {})", human_bytes(freed)));
    }
    if parkable > 0 {
        t.push_str(&format!(" · parkable {}", human_bytes(parkable)));
    }
    let f = if !app.filter.is_empty() && app.mode != Mode::Filter {
        format!("filter: {} ", app.filter)
    } else {
        String::new()
    };
    let tw = w.saturating_sub(width(&f));
    Line::from(vec![
        Span::styled(fit(&t, tw), Style::default().add_modifier(Modifier::BOLD)),
        Span::styled(fit(&f, w - tw), Style::default().fg(Color::Yellow)),
    ])
}

fn prompt_line(app: &App, w: usize) -> Line<'static> {
    match &app.mode {
        Mode::Filter => Line::from(vec![
            Span::styled("/", Style::default().fg(Color::Yellow)),
            Span::raw(fit(&format!("{}█", app.filter), w.saturating_sub(1))),
        ]),
        m @ (Mode::ConfirmBulk { .. } | Mode::ConfirmRebuild { .. }) => Line::from(Span::styled(
            fit(&m.question().unwrap_or_default(), w),
            Style::default()
                .fg(Color::Yellow)
                .add_modifier(Modifier::BOLD),
        )),
        Mode::Normal => {
            if let Some(m) = &app.message {
                let st = if app.message_bad {
                    Style::default().fg(Color::Red)
                } else {
                    Style::default().fg(Color::Green)
                };
                Line::from(Span::styled(fit(m, w), st))
            } else if let Some(why) = app.current().and_then(|r| r.reason.clone()) {
                Line::from(Span::styled(
                    fit(&format!("↳ {why}"), w),
                    Style::default().fg(Color::DarkGray),
                ))
            } else if let Some(l) = app.current().and_then(|r| legend(std::slice::from_ref(r))) {
                // The cursor row's mark, spelled out.
                Line::from(Span::styled(
                    fit(&format!("↳ {l}"), w),
                    Style::default().fg(Color::DarkGray),
                ))
            } else if let Some(wn) = app.warnings.first() {
                Line::from(Span::styled(
                    fit(&format!("warning: {wn}"), w),
                    Style::default().fg(Color::DarkGray),
                ))
            } else {
                Line::from("")
            }
        }
    }
}

fn help_line(app: &App, w: usize) -> Line<'static> {
    Line::from(Span::styled(
        fit(&text::help(&app.mode, w, text::Place::Window), w),
        Style::default().fg(Color::DarkGray),
    ))
}

/// Keeps the cursor line inside `[offset, offset + h)`, showing its group header when it can.
pub fn scroll(offset: usize, cursor: Option<usize>, total: usize, h: usize) -> usize {
    if h == 0 || total <= h {
        return 0;
    }
    let mut off = offset.min(total - h);
    if let Some(c) = cursor {
        let top = c.saturating_sub(1); // the header just above a group's first row
        if top < off {
            off = top;
        }
        if c >= off + h {
            off = c + 1 - h;
        }
    }
    off
}

/// Draws the whole picker into `f`; `offset` is the list's scroll position, kept across frames.
/// `NO_COLOR` (https://no-color.org): no colours, anywhere. What a colour marked (the cursor
/// row, a selection) is kept as reverse video.
pub fn strip_colors(buf: &mut ratatui::buffer::Buffer) {
    for cell in buf.content.iter_mut() {
        if cell.bg != Color::Reset {
            cell.modifier.insert(Modifier::REVERSED);
        }
        cell.fg = Color::Reset;
        cell.bg = Color::Reset;
    }
}

/// Whether the user asked for no colours (`NO_COLOR` set and not empty).
pub fn no_color() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

pub fn draw(f: &mut Frame, app: &App, offset: &mut usize) {
    let area = f.area();
    let [top, list, prompt, help] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(area);
    let w = area.width as usize;
    f.render_widget(Paragraph::new(title_line(app, w)), top);
    draw_list(f, app, offset, list);
    f.render_widget(Paragraph::new(prompt_line(app, w)), prompt);
    f.render_widget(Paragraph::new(help_line(app, w)), help);
}

fn draw_list(f: &mut Frame, app: &App, offset: &mut usize, area: Rect) {
    let w = area.width as usize;
    let h = area.height as usize;
    // Only the first scan blanks the list; a rescan keeps the rows on screen until new ones arrive.
    if app.scanning && app.rows.is_empty() {
        f.render_widget(Paragraph::new(" scanning…"), area);
        return;
    }
    if app.lines.is_empty() {
        let t = if app.rows.is_empty() {
            " no agents found in tmux panes, nothing parked"
        } else {
            " no rows match the filter"
        };
        f.render_widget(Paragraph::new(t), area);
        return;
    }
    *offset = scroll(*offset, app.cursor, app.lines.len(), h);
    let lines: Vec<Line> = app
        .lines
        .iter()
        .enumerate()
        .skip(*offset)
        .take(h)
        .map(|(i, l)| match l {
            AppLine::Header(g) => header_line(app, *g, w),
            AppLine::Row(r) => row_line(app, &app.rows[*r], app.cursor == Some(i), w),
        })
        .collect();
    f.render_widget(Paragraph::new(lines), area);
}

#[cfg(test)]
mod tests {
    use super::super::app::{JobResult, Key, Op};
    use super::*;
    use park_protocol::picker::fixtures::{busy_row, fixture, parked_row, row, untargetable_row};
    use park_protocol::{ActionOutput, ActionResult, Status, SCHEMA_VERSION};
    use ratatui::backend::TestBackend;
    use ratatui::Terminal;

    fn render(app: &App, w: u16, h: u16) -> String {
        let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
        let mut off = 0;
        t.draw(|f| draw(f, app, &mut off)).unwrap();
        t.backend().to_string()
    }

    fn mixed() -> Vec<Row> {
        let mut a = row("%1", "work", 1, "api");
        a.title = "Fix the parser bug in the tokenizer".into();
        a.cwd = "/srv/projects/api".into();
        let mut b = busy_row("%2", "work", 1, "api");
        b.title = "Writing integration tests".into();
        let mut c = row("%6", "work", 1, "api");
        c.title = "修复登录页面的样式问题和布局错误".into();
        c.anon_bytes = 1181116006;
        c.idle_seconds = Some(7200);
        let mut d = parked_row("%3", "work", 2, "web");
        d.title = "Refactor ❄ components".into();
        let e = untargetable_row("%4", "work", 2, "web");
        let mut f = row("%5", "play", 0, "notes");
        f.agent = park_protocol::Agent::Codex;
        f.status = Status::Draft;
        f.reason = Some("unsent text in the composer: \"hello\"".into());
        let mut rows = vec![a, b, c, d, e, f];
        rows.sort_by(|x, y| (&x.session, x.window_index).cmp(&(&y.session, y.window_index)));
        rows
    }

    fn app_with(rows: Vec<Row>, pane: Option<&str>) -> App {
        let mut a = App::new(None, pane);
        a.set_rows(rows, vec![]);
        a
    }

    /// Issue 34 item 10: at 80 columns the footer was cut before `r rescan · q quit`; at 200
    /// the group totals sat far right of the rows; a mark had no legend.
    #[test]
    fn the_footer_fits_totals_stay_by_the_rows_and_marks_are_explained() {
        for w in [60u16, 80, 100, 200] {
            let app = app_with(mixed(), Some("%1"));
            let screen = render(&app, w, 20);
            let help = screen.lines().last().unwrap();
            assert!(
                help.contains("q quit") && help.contains('r') && !help.contains('…'),
                "{w}: {help}"
            );
        }
        let app = app_with(mixed(), Some("%1"));
        let screen = render(&app, 200, 20);
        let header = screen.lines().find(|l| l.contains("parkable")).unwrap();
        let row = screen.lines().find(|l| l.contains("%1")).unwrap();
        let col = |l: &str, needle: &str| width(&l[..l.find(needle).unwrap()]);
        let row_end = width(row.trim_end_matches(['"', ' ']));
        assert!(
            col(header, "parkable") < row_end + 4,
            "totals beside the rows, not at column {}: {header}",
            col(header, "parkable")
        );
        let mut rows = mixed();
        rows.iter_mut().find(|r| r.pane == "%1").unwrap().suggested = true;
        let app = app_with(rows, Some("%1"));
        let screen = render(&app, 100, 20);
        assert!(screen.contains("? idle"), "{screen}");
        assert!(
            screen.contains("↳ ? the autopilot suggests parking it"),
            "the cursor row's mark is spelled out: {screen}"
        );
    }

    #[test]
    fn no_color_leaves_no_colour_and_keeps_the_cursor_visible() {
        let app = app_with(mixed(), Some("%1"));
        let mut t = Terminal::new(TestBackend::new(100, 20)).unwrap();
        let mut off = 0;
        t.draw(|f| draw(f, &app, &mut off)).unwrap();
        let coloured = |b: &ratatui::buffer::Buffer| {
            b.content
                .iter()
                .filter(|c| c.fg != Color::Reset || c.bg != Color::Reset)
                .count()
        };
        assert!(
            coloured(t.backend().buffer()) > 0,
            "the picker uses colour normally"
        );
        t.draw(|f| {
            draw(f, &app, &mut off);
            strip_colors(f.buffer_mut());
        })
        .unwrap();
        let b = t.backend().buffer();
        assert_eq!(coloured(b), 0);
        assert!(
            b.content
                .iter()
                .any(|c| c.modifier.contains(Modifier::REVERSED)),
            "the cursor row is still marked"
        );
    }

    #[test]
    fn fit_counts_columns_not_bytes() {
        assert_eq!(fit("abc", 5), "abc  ");
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(fit("修复登录", 5), "修复…");
        assert_eq!(width(&fit("修复登录", 5)), 5);
        assert_eq!(fit("修复登录", 4), "修… ");
        assert_eq!(width(&fit("❄ parked", 3)), 3);
        assert_eq!(fit_tail("/a/b/c/defg", 6), "…/defg");
        assert_eq!(fit_tail("/目录/子目录", 7), "…子目录");
        assert_eq!(fit("a\tb", 3), "a?b");
        assert_eq!(fit("x", 0), "");
    }

    #[test]
    fn scroll_keeps_the_cursor_visible() {
        assert_eq!(scroll(0, Some(3), 5, 10), 0);
        assert_eq!(scroll(0, Some(15), 20, 10), 6);
        assert_eq!(scroll(6, Some(6), 20, 10), 5);
        assert_eq!(scroll(6, Some(8), 20, 10), 6);
    }

    #[test]
    fn snapshot_mixed_screen() {
        let a = app_with(mixed(), Some("%6"));
        insta::assert_snapshot!(render(&a, 100, 20));
    }

    #[test]
    fn a_rescan_keeps_the_rows_on_screen() {
        let mut a = app_with(mixed(), Some("%6"));
        a.scanning = true;
        let out = render(&a, 100, 20);
        assert!(out.contains("%6") && !out.contains("scanning…"), "{out}");
        let first = App::new(None, None);
        assert!(
            render(&first, 100, 20).contains("scanning…"),
            "the first scan shows it"
        );
    }

    #[test]
    fn snapshot_in_flight_toggle() {
        let mut a = app_with(mixed(), Some("%1"));
        a.key(Key::Enter);
        a.key(Key::Char('j'));
        a.key(Key::Char('j'));
        a.key(Key::Char('j'));
        a.key(Key::Enter);
        insta::assert_snapshot!(render(&a, 100, 20));
        a.key(Key::Char('q'));
        insta::assert_snapshot!("in_flight_quit_refused", render(&a, 100, 20));
    }

    #[test]
    fn snapshot_filter_prompt() {
        let mut a = app_with(mixed(), None);
        a.key(Key::Char('/'));
        for c in "api".chars() {
            a.key(Key::Char(c));
        }
        insta::assert_snapshot!(render(&a, 100, 20));
        a.key(Key::Enter);
        insta::assert_snapshot!("filter_applied", render(&a, 100, 20));
    }

    #[test]
    fn snapshot_bulk_confirm() {
        let mut a = app_with(mixed(), Some("%2"));
        a.key(Key::Char('w'));
        insta::assert_snapshot!(render(&a, 100, 20));
    }

    #[test]
    fn snapshot_refusal_in_footer() {
        let mut a = app_with(mixed(), Some("%1"));
        a.key(Key::Enter);
        a.done(
            "%1",
            &["%1".into()],
            Op::Park,
            JobResult::Output(ActionOutput {
                schema: SCHEMA_VERSION,
                results: vec![ActionResult::new(
                    "%1",
                    park_protocol::Outcome::Refused,
                    Some("unsent text in the composer: \"please also upd…\"".into()),
                )],
            }),
        );
        insta::assert_snapshot!(render(&a, 100, 20));
    }

    #[test]
    fn snapshot_narrow_and_scrolled() {
        let mut rows = fixture();
        for i in 10..30 {
            rows.push(row(&format!("%{i}"), "zz", i, "many"));
        }
        let a = app_with(rows, Some("%25"));
        insta::assert_snapshot!(render(&a, 60, 12));
    }

    /// Render cost of a 50-row screen (the scan dominates a real first frame; see the e2e test).
    #[test]
    #[ignore]
    fn time_first_frame_with_50_rows() {
        let rows: Vec<Row> = (0..50)
            .map(|i| row(&format!("%{i}"), &format!("s{}", i / 10), i % 10, "w"))
            .collect();
        let t0 = std::time::Instant::now();
        let a = app_with(rows, None);
        let mut t = Terminal::new(TestBackend::new(120, 60)).unwrap();
        let mut off = 0;
        t.draw(|f| draw(f, &a, &mut off)).unwrap();
        eprintln!("50 rows: state + first frame in {:?}", t0.elapsed());
    }
}
