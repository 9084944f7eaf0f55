//! `park ls` and `park candidates`: one scan, the `rows` accessors, printed as text or `--json`.

use crate::cli::term::report;
use park::ctx::Ctx;
use park::exit::ExitStatus;
use park::guards::Overrides;
use park::rows::ls::{rows, BACKGROUND_GROUP, LOST_GROUP};
use park_protocol::{human_bytes, LsOutput, RowState, SCHEMA_VERSION};

fn short(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        s.chars().take(n.saturating_sub(1)).collect::<String>() + "…"
    }
}

/// `park ls` as text, `w` columns wide: the picker's columns and marks (one look for both), the
/// group's parkable total beside its rows, reasons cut to the width, and a legend of the marks.
pub fn render_text(out: &LsOutput, w: usize, home: Option<&str>) -> String {
    use crate::cli::pick::view::{content_width, legend, plain_row};
    let mut t = String::new();
    let mut group = None;
    let cut = |s: &str, n: usize| crate::cli::pick::view::fit(s, n).trim_end().to_string();
    for r in &out.rows {
        // The lost sessions are one group whatever window they were in (their title says where).
        let g = if r.state == RowState::Lost {
            (String::new(), None, LOST_GROUP.to_string())
        } else {
            (r.session.clone(), r.window_index, r.window.clone())
        };
        if group.as_ref() != Some(&g) {
            let parkable: u64 = out
                .rows
                .iter()
                .filter(|x| {
                    (x.session.clone(), x.window_index, x.window.clone()) == g
                        && x.state == RowState::Live
                        && x.reason.is_none()
                })
                .map(|x| x.anon_bytes)
                .sum();
            let servers: Vec<&park_protocol::ServerRow> = out
                .servers
                .iter()
                .filter(|x| Some(x.window_index) == r.window_index && x.session == r.session)
                .collect();
            let parkable = parkable
                + servers
                    .iter()
                    .filter(|x| x.state == "running" && x.note.is_none())
                    .map(|x| x.bytes)
                    .sum::<u64>();
            let head = if r.state == RowState::Lost {
                LOST_GROUP.to_string()
            } else if r.state == RowState::Background {
                BACKGROUND_GROUP.to_string()
            } else if r.session.is_empty() {
                "(no pane)".to_string()
            } else {
                format!(
                    "{}:{} {}",
                    r.session,
                    r.window_index.map(|i| i.to_string()).unwrap_or_default(),
                    r.window
                )
            };
            let total = if parkable > 0 {
                format!("parkable {}", human_bytes(parkable))
            } else {
                String::new()
            };
            let lw = content_width(w).saturating_sub(total.chars().count() + 1);
            t.push_str(format!("{}{total}", crate::cli::pick::view::fit(&head, lw)).trim_end());
            t.push('\n');
            for x in servers {
                let line = format!(
                    "  ⚙ {:<8} {:<6} {:<8} {:>7}  {}{}",
                    short(&x.name, 8),
                    x.pane.as_deref().unwrap_or("-"),
                    x.state,
                    human_bytes(x.bytes),
                    x.command,
                    x.note
                        .as_ref()
                        .map(|n| format!("  ({n})"))
                        .or_else(|| x.orphan.then(|| "  (detached)".into()))
                        .unwrap_or_default()
                );
                t.push_str(&cut(&line, w));
                t.push('\n');
            }
            group = Some(g);
        }
        // The session id column (what `park unpark <id>` takes, by prefix in `park show`) from
        // 100 columns: at 80 the title and the cwd need the room more.
        t.push_str(&plain_row(r, w, home, w >= 100));
        t.push('\n');
        // Reasons are read whole: wrapped to the width, never cut.
        if let Some(why) = &r.reason {
            t.push_str(&wrap(&format!("↳ {why}"), w, 8));
        }
        if let Some(wk) = &r.wake {
            t.push_str(&wrap(&format!("⏰ wakes {wk}"), w, 8));
        }
    }
    if out.rows.is_empty() {
        t.push_str("no agents found in tmux or zellij panes, nothing parked\n");
    } else if let Some(l) = legend(&out.rows) {
        t.push_str(&cut(&l, w));
        t.push('\n');
    }
    // Warnings too are read whole: wrapped like the reasons.
    for wn in &out.warnings {
        t.push_str(&wrap(&format!("warning: {wn}"), w, 0));
    }
    t
}

/// `text` word-wrapped to `w` columns, every line indented by `indent` (continuations by two
/// more), each ending in a newline. A command in backticks is never split (it is copied whole);
/// a word longer than a line is cut.
fn wrap(text: &str, w: usize, indent: usize) -> String {
    use crate::cli::pick::view::{fit, width};
    let mut words: Vec<String> = vec![];
    let mut quoted = false;
    for word in text.split(' ') {
        match words.last_mut() {
            Some(last) if quoted => {
                last.push(' ');
                last.push_str(word);
            }
            _ => words.push(word.to_string()),
        }
        if word.matches('`').count() % 2 == 1 {
            quoted = !quoted;
        }
    }
    let mut out = String::new();
    let mut line = String::new();
    let mut pad = indent;
    for word in &words {
        let room = w.saturating_sub(pad).max(20);
        if !line.is_empty() && width(&line) + 1 + width(word) > room {
            out.push_str(&" ".repeat(pad));
            out.push_str(&line);
            out.push('\n');
            line.clear();
            pad = indent + 2;
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
        if width(&line) > room {
            line = fit(&line, room).trim_end().to_string();
        }
    }
    if !line.is_empty() {
        out.push_str(&" ".repeat(pad));
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// The width `park ls` lays its table out for: the terminal's, else `$COLUMNS`, else 120 (a
/// pipe: scripts read `--json`).
fn out_width() -> usize {
    #[cfg(unix)]
    {
        // SAFETY: TIOCGWINSZ fills a winsize for a terminal fd and fails otherwise.
        let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
        if unsafe { libc::ioctl(1, libc::TIOCGWINSZ, &mut ws) } == 0 && ws.ws_col > 0 {
            return ws.ws_col as usize;
        }
    }
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse::<usize>().ok())
        .filter(|c| *c > 0)
        .unwrap_or(120)
}

pub fn ls(ctx: &Ctx, json: bool) -> ExitStatus {
    let s = {
        let _t = park::support::profile::span("scan");
        match ctx.scan(true) {
            Ok(s) => s,
            Err(stop) => return report(stop),
        }
    };
    let out = {
        let _t = park::support::profile::span("ls.rows");
        rows(ctx, &s)
    };
    if json {
        println!("{}", serde_json::to_string(&out).expect("rows serialise"));
    } else {
        let home = std::env::var("HOME").ok();
        print!("{}", render_text(&out, out_width(), home.as_deref()));
    }
    ExitStatus::Success
}

/// `park candidates`: every live, bound session except park's caller, ranked (see `verdict`).
pub fn candidates(ctx: &Ctx, json: bool) -> ExitStatus {
    let s = match ctx.scan(true) {
        Ok(s) => s,
        Err(stop) => return report(stop),
    };
    let mut rows: Vec<park_protocol::Candidate> = s
        .found
        .iter()
        .filter(|f| f.pane.is_some())
        .filter(|f| park::guards::not_self(f, &s.caller).is_ok())
        .map(|f| {
            let last = f.tinfo.as_ref().and_then(|t| t.last_assistant.clone());
            let open = f.tinfo.as_ref().is_some_and(|t| t.turn_open);
            let (verdict, confidence, why) =
                park::guards::verdict::verdict(f.status, open, last.as_deref());
            park_protocol::Candidate {
                pane: f.pane.as_ref().map(|p| p.id.clone()).unwrap_or_default(),
                agent: f.proc.agent,
                session_id: f.ident.session_id.clone(),
                cwd: f.cwd.clone(),
                title: f.title.clone(),
                idle_seconds: f.idle_secs,
                verdict,
                confidence,
                why,
                last_assistant: last.map(|l| park::store::archive::cut(&l, 400)),
                anon_bytes: f.mem.anon,
                refusal: park::guards::check(
                    f,
                    &s.caller,
                    s.pane_error.as_deref(),
                    Overrides::default(),
                )
                .err()
                .map(|r| r.why),
            }
        })
        .collect();
    park::guards::verdict::sort(&mut rows);
    if json {
        let out = park_protocol::CandidatesOutput {
            schema: SCHEMA_VERSION,
            rows,
            warnings: s.warnings.clone(),
        };
        println!("{}", serde_json::to_string(&out).expect("rows serialise"));
        return ExitStatus::Success;
    }
    if rows.is_empty() {
        println!("no live agent sessions");
    }
    for r in &rows {
        println!(
            "{:<8} {:<6} idle {:>4}  {:<15} {:>3.0}%  {:>6}  {}",
            r.pane,
            r.agent.as_str(),
            park::support::duration::brief(r.idle_seconds),
            r.verdict.as_str(),
            r.confidence * 100.0,
            human_bytes(r.anon_bytes),
            short(&r.title, 40)
        );
        println!("         {}", r.why);
        if let Some(l) = &r.last_assistant {
            println!(
                "         “{}”",
                short(&l.split_whitespace().collect::<Vec<_>>().join(" "), 100)
            );
        }
        if let Some(why) = &r.refusal {
            println!("         park would refuse: {}", short(why, 120));
        }
    }
    ExitStatus::Success
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::pick::view::width;
    use park_protocol::picker::fixtures::{fixture, parked_row, row};

    fn out(rows: Vec<park_protocol::Row>) -> LsOutput {
        LsOutput {
            schema: SCHEMA_VERSION,
            rows,
            servers: vec![],
            warnings: vec![],
            auto_mode: None,
            session: None,
        }
    }

    /// Issue 34 item 15: at 80 columns every row wrapped, and the id column moved with the
    /// memory text (`freed 1.1G` vs `240M rss, frees ~151M`).
    #[test]
    fn the_table_fits_the_width_and_its_columns_stay_put() {
        let mut rows = fixture();
        let mut long = row("%9", "work", 1, "api");
        long.title =
            "A very long title that goes on and on about the parser and its tokenizer".into();
        long.cwd = "/home/u/projects/some/deeply/nested/checkout/of/the/api".into();
        long.reason = Some("unsent text in the composer: `park unpark claude-1234` and more words to wrap around the line".into());
        rows.push(long);
        for w in [80, 100, 160] {
            let t = render_text(&out(rows.clone()), w, Some("/home/u"));
            for l in t.lines() {
                assert!(width(l) <= w, "{w}: {} columns: {l:?}", width(l));
            }
            // The backticked command is never split across lines.
            assert!(t.contains("`park unpark claude-1234`"), "{t}");
        }
        // Columns by display position: a live row and a parked row put the title (and, from
        // 100 columns, the id) at the same column.
        let mut live = row("%1", "s", 1, "w");
        live.title = "LIVE-TITLE".into();
        live.session_id = Some("aaaaaaaa-live".into());
        let mut parked = parked_row("%2", "s", 1, "w");
        parked.title = "PARK-TITLE".into();
        parked.session_id = Some("bbbbbbbb-park".into());
        for w in [80, 120] {
            let t = render_text(&out(vec![live.clone(), parked.clone()]), w, None);
            let at = |needle: &str| {
                let l = t.lines().find(|l| l.contains(needle)).unwrap();
                width(&l[..l.find(needle).unwrap()])
            };
            assert_eq!(at("LIVE-TITLE"), at("PARK-TITLE"), "{w}:\n{t}");
            if w >= 100 {
                assert_eq!(at("aaaaaaaa"), at("bbbbbbbb"), "{w}:\n{t}");
            }
        }
    }

    /// `warning: …` lines ran past the terminal's width (the terminal wrapped them anywhere):
    /// wrapped like the reasons, whole and within the width.
    #[test]
    fn warnings_are_wrapped_to_the_width() {
        let mut o = out(vec![row("%1", "s", 1, "w")]);
        o.warnings = vec![
            "the ledger entry claude-5b0c6a1e-2f3d-4c5b-9a8e-7d6c5b4a3f01 is unreadable \
             (/home/u/.local/state/park/ledger/claude-5b0c6a1e.json: expected value at line 1 \
             column 1); `park doctor` explains"
                .into(),
        ];
        for w in [60, 80, 120] {
            let t = render_text(&o, w, None);
            for l in t.lines() {
                assert!(width(l) <= w, "{w}: {} columns: {l:?}", width(l));
            }
            assert!(t.contains("warning: the ledger entry"), "{t}");
            assert!(t.contains("`park doctor`") && t.contains("explains"), "{t}");
        }
    }

    /// Issue 34 item 10: `ls` showed `idle ?`, the picker `? idle`, and neither said what `?` is.
    #[test]
    fn marks_are_the_pickers_and_have_a_legend() {
        let mut a = row("%1", "s", 1, "w");
        a.suggested = true;
        let mut b = row("%2", "s", 1, "w");
        b.pinned = true;
        let t = render_text(&out(vec![a, b]), 100, None);
        assert!(t.contains("? idle"), "{t}");
        assert!(t.contains("📌 idle"), "{t}");
        assert!(t.contains("? the autopilot suggests parking it"), "{t}");
        assert!(t.contains("📌 pinned: the autopilot never parks it"), "{t}");
        let t = render_text(&out(vec![row("%1", "s", 1, "w")]), 100, None);
        assert!(!t.contains("autopilot"), "no legend without marks: {t}");
    }
}
