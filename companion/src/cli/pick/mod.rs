//! The interactive picker (`park pick [filter] [--pane %N]`), shown in the tmux popup.
//!
//! Contract: `run` owns the terminal (raw mode + alternate screen, restored on every exit path and
//! on panic) and the event loop; it returns the exit code (0 on quit, or when the `--pane` row was
//! toggled successfully, which closes a `display-popup -E`; 1 when there is no terminal). Decisions
//! live in [`app`] (pure), drawing in [`view`], toggles run as park subprocesses in [`worker`].
//! Rows come from `rows::ls::rows` over a fresh scan: at start, on `r`, after each toggle, and every
//! 30 s in the background while nothing is in flight.

pub mod app;
pub mod view;
pub mod worker;

use app::{Action, App, Key};
use park::ctx::Ctx;
use park::exit::ExitStatus;
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
use std::io::IsTerminal;
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub fn run(ctx: &Ctx, filter: Option<&str>, pane: Option<&str>) -> ExitStatus {
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        eprintln!("park pick: needs a terminal (run it in a pane or a tmux popup)");
        return ExitStatus::Refused;
    }
    let mut term = match ratatui::try_init() {
        Ok(t) => t,
        Err(e) => {
            ratatui::restore();
            eprintln!("park pick: cannot set up the terminal: {e}");
            return ExitStatus::Refused;
        }
    };
    let code = event_loop(ctx, &mut term, filter, pane);
    ratatui::restore();
    match code {
        Ok(c) => c,
        Err(e) => {
            eprintln!("park pick: terminal error: {e}");
            ExitStatus::Refused
        }
    }
}

fn map_key(k: event::KeyEvent) -> Option<Key> {
    if k.kind != KeyEventKind::Press {
        return None;
    }
    if k.modifiers.contains(KeyModifiers::CONTROL) {
        return match k.code {
            KeyCode::Char('c') => Some(Key::CtrlC),
            KeyCode::Char('n') => Some(Key::Down),
            KeyCode::Char('p') => Some(Key::Up),
            // An Enter typed before the terminal was raw arrives as `\n` (ICRNL), which
            // crossterm reads in raw mode as Ctrl-J.
            KeyCode::Char('j') => Some(Key::Enter),
            _ => None,
        };
    }
    Some(match k.code {
        KeyCode::Char(c) => Key::Char(c),
        KeyCode::Enter => Key::Enter,
        KeyCode::Esc => Key::Esc,
        KeyCode::Backspace => Key::Backspace,
        KeyCode::Up => Key::Up,
        KeyCode::Down => Key::Down,
        KeyCode::PageUp => Key::PageUp,
        KeyCode::PageDown => Key::PageDown,
        KeyCode::Home => Key::Home,
        KeyCode::End => Key::End,
        _ => return None,
    })
}

type ScanResult = Result<park_protocol::LsOutput, String>;

/// Scans on a thread of its own (with its own context: the UI's is not `Send`), so the picker keeps
/// drawing and reading keys while `/proc`, tmux and `smaps_rollup` are read. Views may reuse
/// USS/PSS readings from the memory cache; the park itself always re-reads.
fn spawn_scan(tx: mpsc::Sender<ScanResult>) {
    std::thread::spawn(move || {
        let r = park::ctx::Ctx::from_env().and_then(|ctx| {
            let cache = ctx.ledger.home.join("cache").join("mem.json");
            let s =
                park::scan::scan_with(ctx.platform.as_ref(), ctx.mux.as_ref(), true, Some(&cache))
                    .map_err(|e| format!("cannot read the process table: {e}"))?;
            Ok(park::rows::ls::rows(&ctx, &s))
        });
        let _ = tx.send(r);
    });
}

fn event_loop(
    ctx: &Ctx,
    term: &mut ratatui::DefaultTerminal,
    filter: Option<&str>,
    pane: Option<&str>,
) -> std::io::Result<ExitStatus> {
    let mut app = App::new(filter, pane);
    app.home = std::env::var("HOME").ok();
    let mut offset = 0usize;
    let (tx, rx) = mpsc::channel::<worker::Done>();
    let (stx, srx) = mpsc::channel::<ScanResult>();
    let plain = view::no_color();
    let paint = |f: &mut ratatui::Frame, app: &App, offset: &mut usize| {
        view::draw(f, app, offset);
        if plain {
            view::strip_colors(f.buffer_mut());
        }
    };
    term.draw(|f| paint(f, &app, &mut offset))?;
    spawn_scan(stx.clone());
    let mut scan_in_flight = true;
    let mut last_scan = Instant::now();
    loop {
        term.draw(|f| paint(f, &app, &mut offset))?;
        let mut actions = vec![];
        // Short waits while a scan is out, so its rows are drawn as soon as they arrive.
        let wait = if scan_in_flight {
            Duration::from_millis(15)
        } else {
            Duration::from_millis(150)
        };
        if event::poll(wait)? {
            // Drain what is queued so a burst of keys costs one frame.
            loop {
                match event::read()? {
                    Event::Key(k) => {
                        if let Some(k) = map_key(k) {
                            actions.push(app.key(k));
                        }
                    }
                    Event::Resize(..) => term.autoresize()?,
                    _ => {}
                }
                if !event::poll(Duration::ZERO)? {
                    break;
                }
            }
        }
        while let Ok(r) = srx.try_recv() {
            scan_in_flight = false;
            last_scan = Instant::now();
            match r {
                Ok(out) => app.set_scan(out),
                Err(e) => {
                    app.scanning = false;
                    app.say(e, true);
                }
            }
        }
        while let Ok(d) = rx.try_recv() {
            actions.push(app.done(&d.job, &d.panes, d.op, d.res));
        }
        actions.push(app.tick(last_scan.elapsed()));
        for a in actions {
            match a {
                Action::None => {}
                Action::Quit(c) => return Ok(ExitStatus::from_ok(c == 0)),
                Action::Toggle { pane, op } => worker::spawn(
                    ctx.exe.clone(),
                    op,
                    pane.clone(),
                    vec![pane],
                    false,
                    tx.clone(),
                ),
                Action::Rebuild => worker::spawn(
                    ctx.exe.clone(),
                    app::Op::Rebuild,
                    app::LOST.into(),
                    vec![app::LOST.into()],
                    false,
                    tx.clone(),
                ),
                Action::Bulk { target, panes } => worker::spawn(
                    ctx.exe.clone(),
                    app::Op::Park,
                    target,
                    panes,
                    true,
                    tx.clone(),
                ),
                Action::Pin { session_id, on, .. } => {
                    // A file write behind a quick scan: run here, then show and rescan.
                    let (line, bad) = worker::pin(&ctx.exe, &session_id, on);
                    app.say(line, bad);
                    if !scan_in_flight {
                        app.scanning = true;
                        spawn_scan(stx.clone());
                        scan_in_flight = true;
                    }
                }
                Action::Focus { pane } => {
                    if let Err(e) = worker::focus(&pane) {
                        app.say(format!("{pane}: cannot focus: {e}"), true);
                    }
                }
                Action::Rescan => {
                    if !scan_in_flight {
                        app.scanning = true;
                        spawn_scan(stx.clone());
                        scan_in_flight = true;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::crossterm::event::KeyEvent;

    /// An Enter typed as the popup opens, before raw mode, is read as Ctrl-J: still Enter.
    #[test]
    fn ctrl_j_is_the_enter_typed_before_raw_mode() {
        let k = |code, m| map_key(KeyEvent::new(code, m));
        assert_eq!(
            k(KeyCode::Char('j'), KeyModifiers::CONTROL),
            Some(Key::Enter)
        );
        assert_eq!(k(KeyCode::Enter, KeyModifiers::NONE), Some(Key::Enter));
        assert_eq!(
            k(KeyCode::Char('j'), KeyModifiers::NONE),
            Some(Key::Char('j'))
        );
        assert_eq!(k(KeyCode::Char('x'), KeyModifiers::CONTROL), None);
    }
}
