//! The picker's pure state machine: rows, grouping, cursor, filter, in-flight toggles, prompts.
//! Shared by the tmux popup picker (`park pick`) and the zellij plugin, so both surfaces group, move
//! and toggle the same way.
//!
//! Contract: nothing here does I/O or reads a clock. Keys go in through [`App::key`], finished
//! subprocesses through [`App::done`], fresh scans through [`App::set_rows`], the passage of time
//! through [`App::tick`]; each returns the [`Action`] the event loop must carry out (run a toggle,
//! rescan, focus a pane, quit). Whether a row may be toggled is read from the library's verdict in
//! the row (`state`, `status`, `reason`); nothing is re-decided here.
//!
//! The cursor is a pane identity, not a screen position: a rescan or a filter change keeps it on the
//! same pane id while that pane has a visible row.

use crate::{human_bytes, ActionOutput, Row, RowState, Status};
use std::collections::BTreeMap;
use std::time::Duration;

pub mod text;

/// How often the picker rescans on its own while it runs (never while a toggle is in flight).
pub const BACKGROUND_RESCAN: Duration = Duration::from_secs(30);
/// After a toggle whose pane has no settled row yet (an agent still starting), rescan this soon;
/// each second pair of follow-ups waits twice as long, up to 8× (1, 1, 2, 2, 4, 4, 8… s).
pub const FOLLOWUP_RESCAN: Duration = Duration::from_millis(1000);
/// How many follow-up rescans a toggle may ask for: ~60 s in all with the back-off, so an agent
/// that takes long to start on a loaded machine still settles without `r`.
pub const FOLLOWUP_TRIES: u32 = 12;

/// The wait before follow-up number `done` (0-based).
fn followup_gap(done: u32) -> Duration {
    FOLLOWUP_RESCAN * (1u32 << (done / 2).min(3))
}

/// A key, already decoded from the terminal (the event loop maps crossterm keys onto this).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    Char(char),
    Enter,
    Esc,
    Backspace,
    Up,
    Down,
    PageUp,
    PageDown,
    Home,
    End,
    CtrlC,
}

/// What a toggle does to a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Park,
    Unpark,
    /// `park rebuild --as-before`: the sessions lost with their multiplexer, back in their slots.
    Rebuild,
}

impl Op {
    pub fn verb(self) -> &'static str {
        match self {
            Op::Park => "park",
            Op::Unpark => "unpark",
            Op::Rebuild => "rebuild",
        }
    }
    /// The progress text a row shows while its subprocess runs.
    pub fn progress(self) -> &'static str {
        match self {
            Op::Park => "freezing…",
            Op::Unpark => "resuming…",
            Op::Rebuild => "bringing the lost sessions back…",
        }
    }
    fn gerund(self) -> &'static str {
        match self {
            Op::Park => "parking",
            Op::Unpark => "resuming",
            Op::Rebuild => "rebuilding",
        }
    }
}

/// What the event loop must do after an event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    None,
    /// Run `park <op> <pane> --json` on a worker thread; report back through [`App::done`].
    Toggle {
        pane: String,
        op: Op,
    },
    /// Run `park park <target> --yes --json` (a whole window); report back through [`App::done`].
    Bulk {
        target: String,
        panes: Vec<String>,
    },
    /// Run `park rebuild --as-before --json`; report back through [`App::done`] with the job
    /// [`LOST`].
    Rebuild,
    /// `tmux select-window` + `select-pane` on this pane; the picker stays open.
    Focus {
        pane: String,
    },
    /// Run `park pin|unpin <session id>` (`on`: pin), then rescan.
    Pin {
        pane: String,
        session_id: String,
        on: bool,
    },
    Rescan,
    Quit(i32),
}

/// The job (and in-flight key) of a rebuild of the lost sessions: lost rows have no pane.
pub const LOST: &str = "lost";

/// What `r` says until the scan it asked for arrives.
const RESCANNING: &str = "rescanning…";

/// The bulk target of `a`: the autopilot's suggested rows, parked as named panes.
pub const SUGGESTED: &str = "suggested";

/// What the footer's prompt line is doing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    Normal,
    /// Typing a filter (`/`); the text is [`App::filter`], updated as it is typed.
    Filter,
    /// Waiting for y/N before parking a whole window.
    ConfirmBulk {
        target: String,
        label: String,
        panes: Vec<String>,
        frees: u64,
    },
    /// Waiting for y/N before bringing back the sessions lost with their multiplexer.
    ConfirmRebuild {
        sessions: usize,
    },
}

impl Mode {
    /// The y/N question a confirming mode shows in the footer.
    pub fn question(&self) -> Option<String> {
        let s = |n: usize| if n == 1 { "" } else { "s" };
        match self {
            Mode::ConfirmBulk {
                label,
                panes,
                frees,
                ..
            } => Some(format!(
                "park {} agent{} in {label} (frees ~{})? [y/N]",
                panes.len(),
                s(panes.len()),
                human_bytes(*frees)
            )),
            Mode::ConfirmRebuild { sessions } => Some(format!(
                "bring back {sessions} lost session{} in {} slot{}, as before the crash? [y/N]",
                s(*sessions),
                if *sessions == 1 { "its" } else { "their" },
                s(*sessions)
            )),
            Mode::Normal | Mode::Filter => None,
        }
    }
}

/// A job that was started and has not reported yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InFlight {
    pub op: Op,
    /// The job's target (a pane, or `session:window` for a bulk park).
    pub job: String,
}

/// How a finished job went, as the worker saw it.
#[derive(Debug, Clone, PartialEq)]
pub enum JobResult {
    /// The subprocess printed its `--json` document (whatever its exit code).
    Output(ActionOutput),
    /// A job whose document is not an [`ActionOutput`] (a rebuild): its line, and whether
    /// everything reached the asked state.
    Said(String, bool),
    /// It could not be run, or printed no parseable document (the text says what it said instead).
    Error(String),
}

/// One line of the list: a group header or an agent row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// Index into [`App::groups`].
    Header(usize),
    /// Index into [`App::rows`].
    Row(usize),
}

/// A session/window group and what parking its parkable rows would free.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    pub session: String,
    pub window_index: Option<u32>,
    pub window: String,
    /// Sum of `anon_bytes` of the group's live rows that park would take now (`reason == None`).
    pub parkable: u64,
    /// Live rows park would take now.
    pub parkable_panes: Vec<String>,
}

impl Group {
    /// `work:1 api`, or `(no pane)`.
    pub fn label(&self) -> String {
        if self.session.is_empty() {
            "(no pane)".into()
        } else {
            format!("{}:{} {}", self.session, self.index_str(), self.window)
        }
    }
    /// The bulk target park accepts: `session:window_index`.
    pub fn target(&self) -> Option<String> {
        if self.session.is_empty() || self.window_index.is_none() {
            return None;
        }
        Some(format!("{}:{}", self.session, self.index_str()))
    }
    fn index_str(&self) -> String {
        self.window_index.map(|i| i.to_string()).unwrap_or_default()
    }
}

fn group_key(r: &Row) -> (String, Option<u32>, String) {
    (r.session.clone(), r.window_index, r.window.clone())
}

/// The library's verdict on whether park would take this row now.
pub fn parkable(r: &Row) -> bool {
    r.state == RowState::Live && r.reason.is_none()
}

/// Busy in the sense of the picker's `●`: the agent is doing something (or has a draft).
pub fn busy(r: &Row) -> bool {
    r.state == RowState::Live
        && matches!(
            r.status,
            Status::Busy | Status::Waiting | Status::Shell | Status::Unknown | Status::Draft
        )
}

#[derive(Debug, Clone)]
pub struct App {
    pub rows: Vec<Row>,
    pub warnings: Vec<String>,
    pub groups: Vec<Group>,
    /// Headers and the rows that pass the filter, in display order.
    pub lines: Vec<Line>,
    /// Index into `lines` of the cursor (always a `Line::Row` when there is one), else `None`.
    pub cursor: Option<usize>,
    pub filter: String,
    pub mode: Mode,
    /// Pane id → job in flight for it.
    pub inflight: BTreeMap<String, InFlight>,
    /// The last result or message, shown in the footer.
    pub message: Option<String>,
    /// Whether `message` reports a refusal or failure (drawn as such).
    pub message_bad: bool,
    /// The pane the picker was opened for (`--pane`): toggling it successfully quits with 0.
    pub focus_pane: Option<String>,
    /// Set until the first scan arrives.
    pub scanning: bool,
    /// A rescan was asked for while a toggle was in flight; done when the last one finishes.
    pub rescan_pending: bool,
    /// Pane whose row should reappear after a toggle (quick follow-up rescans until it does).
    followup: Option<(String, u32)>,
    /// Whether the cursor has been placed from `--pane` yet (only the first scan does it).
    placed: bool,
    /// The `--pane` row was toggled while others were in flight: quit once they finish.
    quit_when_idle: bool,
    /// Enter was pressed on the pane the picker was opened for before its first scan drew it
    /// (`prefix P` then Enter at once): toggled as soon as that row is there.
    early_enter: bool,
    /// A key has been handled: the cursor is the user's now, a focus learned late leaves it.
    touched: bool,
    /// `$HOME`, shown as `~` in paths (unset in tests, so snapshots do not depend on it).
    pub home: Option<String>,
    /// The autopilot's mode from the last scan (`LsOutput::auto_mode`).
    pub auto_mode: Option<String>,
    /// How often to rescan with nothing to follow ([`BACKGROUND_RESCAN`] unless configured).
    pub background: Duration,
}

impl App {
    pub fn new(filter: Option<&str>, focus_pane: Option<&str>) -> App {
        App {
            rows: vec![],
            warnings: vec![],
            groups: vec![],
            lines: vec![],
            cursor: None,
            filter: filter.unwrap_or_default().to_string(),
            mode: Mode::Normal,
            inflight: BTreeMap::new(),
            message: None,
            message_bad: false,
            focus_pane: focus_pane.map(str::to_string),
            scanning: true,
            rescan_pending: false,
            followup: None,
            placed: false,
            quit_when_idle: false,
            early_enter: false,
            touched: false,
            background: BACKGROUND_RESCAN,
            home: None,
            auto_mode: None,
        }
    }

    /// The row under the cursor.
    pub fn current(&self) -> Option<&Row> {
        match self.cursor.and_then(|c| self.lines.get(c)) {
            Some(Line::Row(i)) => self.rows.get(*i),
            _ => None,
        }
    }

    /// The group the cursor row belongs to.
    pub fn current_group(&self) -> Option<&Group> {
        let r = self.current()?;
        let k = group_key(r);
        self.groups
            .iter()
            .find(|g| (g.session.clone(), g.window_index, g.window.clone()) == k)
    }

    fn matches(&self, r: &Row) -> bool {
        if self.filter.is_empty() {
            return true;
        }
        let f = self.filter.to_lowercase();
        [&r.pane, &r.title, &r.cwd, &r.session]
            .iter()
            .any(|s| s.to_lowercase().contains(&f))
    }

    /// Takes a fresh `park ls --json`: its rows, warnings and the autopilot's mode. The
    /// `rescanning…` that `r` said is answered by the scan itself.
    pub fn set_scan(&mut self, out: crate::LsOutput) {
        self.auto_mode = out.auto_mode;
        self.set_rows(out.rows, out.warnings);
    }

    /// Replaces the rows with a fresh scan, keeping the cursor on the same pane id.
    pub fn set_rows(&mut self, rows: Vec<Row>, warnings: Vec<String>) {
        let keep = if !self.placed {
            self.placed = true;
            self.focus_pane.clone()
        } else {
            self.current().map(|r| r.pane.clone())
        };
        let old_pos = self.cursor;
        self.rows = rows;
        self.warnings = warnings;
        self.scanning = false;
        if self.message.as_deref() == Some(RESCANNING) {
            self.message = None;
        }
        self.rebuild(keep.as_deref(), old_pos);
        if let Some((pane, tries)) = self.followup.take() {
            // Until the toggled pane's row is back and settled: a just-resumed agent reads
            // `unknown` with no title for a moment (issue 35 item 8: it stayed so until `r`).
            let settled = self.rows.iter().any(|r| {
                r.pane == pane && !(r.state == RowState::Live && r.status == Status::Unknown)
            });
            if !settled && tries > 1 {
                self.followup = Some((pane, tries - 1));
            }
        }
    }

    /// Recomputes groups and visible lines; puts the cursor on `keep` if visible, else near `old`.
    fn rebuild(&mut self, keep: Option<&str>, old: Option<usize>) {
        self.groups.clear();
        self.lines.clear();
        let mut last = None;
        for r in &self.rows {
            let k = group_key(r);
            if last.as_ref() != Some(&k) {
                self.groups.push(Group {
                    session: k.0.clone(),
                    window_index: k.1,
                    window: k.2.clone(),
                    parkable: 0,
                    parkable_panes: vec![],
                });
                last = Some(k);
            }
            let g = self.groups.last_mut().expect("group just pushed");
            if parkable(r) {
                g.parkable += r.anon_bytes;
                g.parkable_panes.push(r.pane.clone());
            }
        }
        let mut gi = None;
        let mut shown = None;
        let mut last = None;
        for (i, r) in self.rows.iter().enumerate() {
            let k = group_key(r);
            if last.as_ref() != Some(&k) {
                gi = Some(gi.map_or(0, |g| g + 1));
                last = Some(k);
            }
            if !self.matches(r) {
                continue;
            }
            let g = gi.expect("a group for every row");
            if shown != Some(g) {
                self.lines.push(Line::Header(g));
                shown = Some(g);
            }
            self.lines.push(Line::Row(i));
        }
        let by_pane = keep.and_then(|p| {
            self.lines
                .iter()
                .position(|l| matches!(l, Line::Row(i) if self.rows[*i].pane == p))
        });
        self.cursor = by_pane.or_else(|| {
            let rows: Vec<usize> = self.row_lines();
            if rows.is_empty() {
                return None;
            }
            // The row now nearest to where the cursor was, else the first.
            let at = old.unwrap_or(0);
            rows.iter()
                .copied()
                .find(|l| *l >= at)
                .or_else(|| rows.last().copied())
        });
    }

    fn row_lines(&self) -> Vec<usize> {
        self.lines
            .iter()
            .enumerate()
            .filter(|(_, l)| matches!(l, Line::Row(_)))
            .map(|(i, _)| i)
            .collect()
    }

    fn move_by(&mut self, delta: isize) {
        let rows = self.row_lines();
        if rows.is_empty() {
            self.cursor = None;
            return;
        }
        let at = self
            .cursor
            .and_then(|c| rows.iter().position(|l| *l == c))
            .unwrap_or(0) as isize;
        let to = (at + delta).clamp(0, rows.len() as isize - 1) as usize;
        self.cursor = Some(rows[to]);
    }

    pub fn say(&mut self, text: impl Into<String>, bad: bool) {
        self.message = Some(text.into());
        self.message_bad = bad;
    }

    /// `wait: parking %3…` when anything is in flight.
    pub fn wait_text(&self) -> Option<String> {
        let (pane, f) = self.inflight.iter().next()?;
        let what = if f.job != *pane { &f.job } else { pane };
        let more = self.inflight.len().saturating_sub(1);
        Some(format!(
            "wait: {} {what}…{}",
            f.op.gerund(),
            if more > 0 {
                format!(" (+{more} more)")
            } else {
                String::new()
            }
        ))
    }

    /// The pane the picker was opened on, learned after it opened. zellij tells a plugin its
    /// session, active tab and focused pane in separate events, in any order, and the first
    /// scan can arrive before the last of them: until a key is pressed, the pane is taken as if
    /// it had been known from the start: toggling it successfully closes the picker, and the
    /// cursor goes to it unless a key has moved it already. A pane already known stays.
    pub fn opened_on(&mut self, pane: &str) {
        if self.focus_pane.is_some() {
            return;
        }
        self.focus_pane = Some(pane.to_string());
        if self.placed && !self.touched {
            let old = self.cursor;
            self.rebuild(Some(pane), old);
        }
    }

    pub fn key(&mut self, k: Key) -> Action {
        // Before the first scan there is no cursor to move: the first scan places it anyway.
        if self.placed {
            self.touched = true;
        }
        match self.mode.clone() {
            Mode::Filter => self.key_filter(k),
            Mode::ConfirmBulk {
                target,
                label,
                panes,
                ..
            } => {
                self.mode = Mode::Normal;
                if matches!(k, Key::Char('y') | Key::Char('Y')) {
                    for p in &panes {
                        self.inflight.insert(
                            p.clone(),
                            InFlight {
                                op: Op::Park,
                                job: target.clone(),
                            },
                        );
                    }
                    self.say(format!("{label}: parking {} agents…", panes.len()), false);
                    Action::Bulk { target, panes }
                } else {
                    self.say(format!("{label}: not parked (not confirmed)"), false);
                    Action::None
                }
            }
            Mode::ConfirmRebuild { sessions } => {
                self.mode = Mode::Normal;
                if matches!(k, Key::Char('y') | Key::Char('Y')) {
                    self.inflight.insert(
                        LOST.into(),
                        InFlight {
                            op: Op::Rebuild,
                            job: LOST.into(),
                        },
                    );
                    self.say(format!("{}: {sessions}", Op::Rebuild.progress()), false);
                    Action::Rebuild
                } else {
                    self.say("the lost sessions stay lost (not confirmed)", false);
                    Action::None
                }
            }
            Mode::Normal => self.key_normal(k),
        }
    }

    fn key_filter(&mut self, k: Key) -> Action {
        let keep = self.current().map(|r| r.pane.clone());
        match k {
            Key::Enter => self.mode = Mode::Normal,
            Key::Esc | Key::CtrlC => {
                self.mode = Mode::Normal;
                self.filter.clear();
            }
            Key::Backspace => {
                self.filter.pop();
            }
            Key::Char(c) => self.filter.push(c),
            Key::Up => self.move_by(-1),
            Key::Down => self.move_by(1),
            _ => {}
        }
        let keep = self.current().map(|r| r.pane.clone()).or(keep);
        let old = self.cursor;
        self.rebuild(keep.as_deref(), old);
        Action::None
    }

    fn key_normal(&mut self, k: Key) -> Action {
        if matches!(k, Key::Enter | Key::Char(' ')) && !self.placed && self.focus_pane.is_some() {
            self.early_enter = true;
            return Action::None;
        }
        match k {
            Key::Up | Key::Char('k') => self.move_by(-1),
            Key::Down | Key::Char('j') => self.move_by(1),
            Key::PageUp => self.move_by(-10),
            Key::PageDown => self.move_by(10),
            Key::Home | Key::Char('g') => self.move_by(isize::MIN / 2),
            Key::End | Key::Char('G') => self.move_by(isize::MAX / 2),
            // Esc first clears a filter kept with Enter (as it clears one being typed); only
            // then does it quit, like q.
            Key::Esc if !self.filter.is_empty() => {
                let keep = self.current().map(|r| r.pane.clone());
                self.filter.clear();
                let old = self.cursor;
                self.rebuild(keep.as_deref(), old);
            }
            Key::Char('q') | Key::Esc | Key::CtrlC => {
                if let Some(w) = self.wait_text() {
                    self.say(w, true);
                    return Action::None;
                }
                return Action::Quit(0);
            }
            Key::Char('/') => {
                self.mode = Mode::Filter;
            }
            Key::Char('r') => {
                if self.inflight.is_empty() {
                    self.say(RESCANNING, false);
                    return Action::Rescan;
                }
                self.rescan_pending = true;
                self.say("rescan after the running toggle", false);
            }
            Key::Enter | Key::Char(' ') => return self.toggle(),
            Key::Char('f') => {
                return match self.current() {
                    Some(r) if !r.pane.is_empty() => {
                        let pane = r.pane.clone();
                        self.say(format!("{pane}: focused"), false);
                        Action::Focus { pane }
                    }
                    Some(_) => {
                        self.say("this agent is not in a pane", true);
                        Action::None
                    }
                    None => Action::None,
                }
            }
            Key::Char('w') => return self.bulk(),
            Key::Char('p') => return self.pin(),
            Key::Char('a') => return self.park_suggested(),
            _ => {}
        }
        Action::None
    }

    fn toggle(&mut self) -> Action {
        let Some(r) = self.current() else {
            return Action::None;
        };
        let pane = r.pane.clone();
        if let Some(f) = self.inflight.get(&pane) {
            let t = format!("{pane}: {} already", f.op.progress());
            self.say(t, true);
            return Action::None;
        }
        let op = match r.state {
            RowState::Untargetable => {
                let why = r.reason.clone().unwrap_or_else(|| "untargetable".into());
                self.say(format!("{}: untargetable: {why}", show_pane(&pane)), true);
                return Action::None;
            }
            RowState::Background => {
                let job = r.job.clone().unwrap_or_default();
                self.say(
                    format!("a Claude background session: `claude attach {job}` opens it"),
                    true,
                );
                return Action::None;
            }
            RowState::Lost => {
                if self.inflight.contains_key(LOST) {
                    self.say(Op::Rebuild.progress(), true);
                    return Action::None;
                }
                // One rebuild brings every lost session back (their windows are rebuilt whole),
                // so Enter on one asks about all of them.
                let sessions = self
                    .rows
                    .iter()
                    .filter(|r| r.state == RowState::Lost)
                    .count();
                self.mode = Mode::ConfirmRebuild { sessions };
                return Action::None;
            }
            RowState::Parked => Op::Unpark,
            RowState::Live => {
                if let Some(why) = r.reason.clone() {
                    let st = r.status.as_str();
                    self.say(format!("{pane}: {st}, not parked: {why}"), true);
                    return Action::None;
                }
                if busy(r) {
                    let st = r.status.as_str();
                    self.say(format!("{pane}: {st}, not parked"), true);
                    return Action::None;
                }
                Op::Park
            }
        };
        if pane.is_empty() {
            self.say("this agent is not in a pane", true);
            return Action::None;
        }
        self.inflight.insert(
            pane.clone(),
            InFlight {
                op,
                job: pane.clone(),
            },
        );
        self.say(format!("{pane}: {}", op.progress()), false);
        Action::Toggle { pane, op }
    }

    /// `p`: toggle the current session's pin (the autopilot never parks a pinned session).
    fn pin(&mut self) -> Action {
        let Some(r) = self.current() else {
            return Action::None;
        };
        match (&r.session_id, r.state) {
            (Some(id), RowState::Live | RowState::Parked) => {
                let (pane, session_id, on) = (r.pane.clone(), id.clone(), !r.pinned);
                let what = if on { "pinning" } else { "unpinning" };
                self.say(format!("{}: {what}…", show_pane(&pane)), false);
                Action::Pin {
                    pane,
                    session_id,
                    on,
                }
            }
            _ => {
                self.say("no exact session to pin here", true);
                Action::None
            }
        }
    }

    /// `a`: park every row the autopilot suggests, after a y/N.
    fn park_suggested(&mut self) -> Action {
        if let Some(w) = self.wait_text() {
            self.say(w, true);
            return Action::None;
        }
        let rows: Vec<&Row> = self
            .rows
            .iter()
            .filter(|r| r.suggested && r.state == RowState::Live && !r.pane.is_empty())
            .collect();
        if rows.is_empty() {
            let why = match self.auto_mode.as_deref() {
                Some("suggest") => "the autopilot suggests nothing now".to_string(),
                Some(m) => format!(
                    "nothing to suggest: the autopilot's mode is {m:?} (suggestions need [auto] mode = \"suggest\")"
                ),
                None => "nothing to suggest: the autopilot's config does not load (park config says why)"
                    .to_string(),
            };
            self.say(why, true);
            return Action::None;
        }
        self.mode = Mode::ConfirmBulk {
            target: SUGGESTED.into(),
            label: "the autopilot's suggestions".into(),
            panes: rows.iter().map(|r| r.pane.clone()).collect(),
            frees: rows.iter().map(|r| r.anon_bytes).sum(),
        };
        Action::None
    }

    fn bulk(&mut self) -> Action {
        if let Some(w) = self.wait_text() {
            self.say(w, true);
            return Action::None;
        }
        let Some(g) = self.current_group().cloned() else {
            return Action::None;
        };
        let Some(target) = g.target() else {
            self.say("these agents are not in a tmux window", true);
            return Action::None;
        };
        if g.parkable_panes.is_empty() {
            self.say(
                format!("{}: nothing parkable in this window", g.label()),
                true,
            );
            return Action::None;
        }
        self.mode = Mode::ConfirmBulk {
            target,
            label: g.label(),
            panes: g.parkable_panes.clone(),
            frees: g.parkable,
        };
        Action::None
    }

    /// A job finished. `job` is the pane (single toggle) or the bulk target; `panes` what it covered.
    pub fn done(&mut self, job: &str, panes: &[String], op: Op, res: JobResult) -> Action {
        for p in panes {
            self.inflight.remove(p);
        }
        let single = panes.len() == 1 && panes[0] == job;
        let (line, ok) = result_line(job, op, &res, single);
        self.message = Some(line);
        self.message_bad = !ok;
        if single && ok {
            if self.focus_pane.as_deref() == Some(job) {
                self.quit_when_idle = true;
            }
            self.followup = Some((job.to_string(), FOLLOWUP_TRIES));
        }
        if self.inflight.is_empty() && self.quit_when_idle {
            return Action::Quit(0);
        }
        if self.inflight.is_empty() {
            self.rescan_pending = false;
            Action::Rescan
        } else {
            self.rescan_pending = true;
            Action::None
        }
    }

    /// Time passed; `since_scan` is how long ago the last scan finished. Rescans in the background
    /// only while nothing is in flight and no prompt is open.
    pub fn tick(&mut self, since_scan: Duration) -> Action {
        if !self.inflight.is_empty() || self.mode != Mode::Normal || self.scanning {
            return Action::None;
        }
        if std::mem::take(&mut self.early_enter)
            && self.current().map(|r| &r.pane) == self.focus_pane.as_ref()
        {
            return self.toggle();
        }
        if self.rescan_pending {
            self.rescan_pending = false;
            return Action::Rescan;
        }
        let every = match &self.followup {
            Some((_, left)) => followup_gap(FOLLOWUP_TRIES - left),
            None => self.background,
        };
        if since_scan >= every {
            return Action::Rescan;
        }
        Action::None
    }
}

/// The mark a row's state column starts with in both pickers: `📌 ` pinned, `? ` suggested by
/// the autopilot (suggest mode), nothing otherwise.
pub fn mark(r: &Row) -> &'static str {
    if r.pinned {
        "📌 "
    } else if r.suggested && r.state == RowState::Live {
        "? "
    } else {
        ""
    }
}

fn show_pane(p: &str) -> &str {
    if p.is_empty() {
        "-"
    } else {
        p
    }
}

/// The footer line for a finished job, and whether everything reached the asked state.
/// `%3: parked (freed 145M)`, `%3: refused: unsent text in the composer: "…"`.
pub fn result_line(job: &str, op: Op, res: &JobResult, single: bool) -> (String, bool) {
    let out = match res {
        JobResult::Error(e) => return (format!("{job}: failed: {e}"), false),
        JobResult::Said(line, ok) => return (line.clone(), *ok),
        JobResult::Output(o) => o,
    };
    let good = |o: &crate::Outcome| o.reached();
    let one = |r: &crate::ActionResult| {
        let freed = match (r.outcome, r.freed_bytes) {
            (crate::Outcome::Parked, Some(b)) => format!(" (freed {})", human_bytes(b)),
            _ => String::new(),
        };
        let why = r
            .reason
            .as_ref()
            .map(|w| format!(": {w}"))
            .unwrap_or_default();
        format!("{}{freed}{why}", r.outcome)
    };
    if out.results.is_empty() {
        return (format!("{job}: {}: no result", op.verb()), false);
    }
    if single {
        let r = &out.results[0];
        return (format!("{job}: {}", one(r)), good(&r.outcome));
    }
    let ok = out.results.iter().all(|r| good(&r.outcome));
    let parked: Vec<_> = out.results.iter().filter(|r| good(&r.outcome)).collect();
    let freed: u64 = parked.iter().filter_map(|r| r.freed_bytes).sum();
    let mut s = format!("{job}: parked {}", parked.len());
    if freed > 0 {
        s.push_str(&format!(" (freed {})", human_bytes(freed)));
    }
    for r in out.results.iter().filter(|r| !good(&r.outcome)) {
        let who = r.pane.clone().unwrap_or_else(|| r.target.clone());
        s.push_str(&format!("; {who}: {}", one(r)));
    }
    (s, ok)
}

/// Sample rows for tests of the picker's surfaces (the tmux view, the zellij plugin).
#[doc(hidden)]
pub mod fixtures {
    use crate::{Agent, Row, RowState, Status};

    pub fn row(pane: &str, session: &str, wi: u32, window: &str) -> Row {
        Row {
            pane: pane.into(),
            mux: "tmux".into(),
            session: session.into(),
            window_index: Some(wi),
            window: window.into(),
            agent: Agent::Claude,
            session_id: Some(format!("sid-{pane}")),
            session_source: Some("status-file".into()),
            cwd: format!("/home/u/{window}"),
            title: format!("task in {window}"),
            state: RowState::Live,
            status: Status::Idle,
            reason: None,
            idle_seconds: Some(300),
            bytes: 400 << 20,
            uss_bytes: 300 << 20,
            pss_bytes: 320 << 20,
            anon_bytes: 145 << 20,
            freed_bytes: None,
            pid: Some(100),
            entry: None,
            parked_at: None,
            wake: None,
            job: None,
            pinned: false,
            suggested: false,
            agent_version: None,
        }
    }

    pub fn busy_row(pane: &str, session: &str, wi: u32, window: &str) -> Row {
        Row {
            status: Status::Busy,
            reason: Some("a turn is in flight (spinner on screen)".into()),
            ..row(pane, session, wi, window)
        }
    }

    pub fn parked_row(pane: &str, session: &str, wi: u32, window: &str) -> Row {
        Row {
            state: RowState::Parked,
            status: Status::Parked,
            freed_bytes: Some(200 << 20),
            pid: None,
            entry: Some(format!("e-{pane}")),
            ..row(pane, session, wi, window)
        }
    }

    pub fn untargetable_row(pane: &str, session: &str, wi: u32, window: &str) -> Row {
        Row {
            state: RowState::Untargetable,
            status: Status::Unknown,
            session_id: None,
            reason: Some("no exact session id (no status file, no --resume)".into()),
            ..row(pane, session, wi, window)
        }
    }

    pub fn fixture() -> Vec<Row> {
        vec![
            row("%1", "work", 1, "api"),
            busy_row("%2", "work", 1, "api"),
            parked_row("%3", "work", 2, "web"),
            untargetable_row("%4", "work", 2, "web"),
            row("%5", "play", 0, "notes"),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::*;
    use super::*;
    use crate::{ActionResult, SCHEMA_VERSION};

    fn app(pane: Option<&str>) -> App {
        let mut a = App::new(None, pane);
        a.set_rows(fixture(), vec![]);
        a
    }

    fn out(outcome: &str, reason: Option<&str>, freed: Option<u64>) -> JobResult {
        JobResult::Output(ActionOutput {
            schema: SCHEMA_VERSION,
            results: vec![ActionResult {
                freed_bytes: freed,
                ..ActionResult::new(
                    "%1",
                    outcome.parse().expect("an outcome"),
                    reason.map(str::to_string),
                )
            }],
        })
    }

    fn cur(a: &App) -> &str {
        &a.current().expect("a cursor row").pane
    }

    /// Issue 32 §5: a lost row's Enter asks about every lost session, a yes starts one rebuild
    /// (never a second while it runs), and its line is the footer's.
    #[test]
    fn enter_on_a_lost_row_asks_then_rebuilds_every_lost_session_once() {
        let mut rows = fixture();
        for (i, sid) in [(3, "l1"), (4, "l2")] {
            rows[i].state = RowState::Lost;
            rows[i].pane = String::new();
            rows[i].session = String::new();
            rows[i].session_id = Some(sid.into());
        }
        let mut a = App::new(None, None);
        a.set_rows(rows, vec![]);
        while a.current().is_some_and(|r| r.state != RowState::Lost) {
            a.key(Key::Down);
        }
        assert_eq!(a.key(Key::Enter), Action::None, "asks first");
        assert_eq!(a.mode, Mode::ConfirmRebuild { sessions: 2 });
        assert_eq!(
            a.mode.question().as_deref(),
            Some("bring back 2 lost sessions in their slots, as before the crash? [y/N]")
        );
        assert_eq!(a.key(Key::Char('n')), Action::None);
        assert_eq!(a.mode, Mode::Normal, "a no cancels");
        assert!(a.inflight.is_empty());
        a.key(Key::Enter);
        assert_eq!(a.key(Key::Char('y')), Action::Rebuild);
        assert!(a.inflight.contains_key(LOST));
        assert_eq!(a.key(Key::Enter), Action::None, "one rebuild at a time");
        assert_eq!(a.mode, Mode::Normal);
        let done = a.done(
            LOST,
            &[LOST.to_string()],
            Op::Rebuild,
            JobResult::Said("2 lost sessions are back in their panes".into(), true),
        );
        assert_eq!(done, Action::Rescan);
        assert!(a.inflight.is_empty());
        assert_eq!(
            a.message.as_deref(),
            Some("2 lost sessions are back in their panes")
        );
        assert!(!a.message_bad);
    }

    #[test]
    fn groups_and_totals() {
        let a = app(None);
        assert_eq!(a.groups.len(), 3);
        assert_eq!(a.groups[0].label(), "work:1 api");
        // Only the idle live row counts; the busy one has a reason.
        assert_eq!(a.groups[0].parkable, 145 << 20);
        assert_eq!(a.groups[1].parkable, 0);
        assert_eq!(a.lines.len(), 8);
        assert_eq!(a.lines[0], Line::Header(0));
    }

    #[test]
    fn cursor_starts_on_the_pane_given_else_the_first_row() {
        assert_eq!(cur(&app(None)), "%1");
        assert_eq!(cur(&app(Some("%4"))), "%4");
        assert_eq!(cur(&app(Some("%99"))), "%1");
    }

    #[test]
    fn moving_skips_headers_and_stops_at_the_ends() {
        let mut a = app(None);
        a.key(Key::Char('k'));
        assert_eq!(cur(&a), "%1");
        a.key(Key::Down);
        a.key(Key::Char('j'));
        assert_eq!(cur(&a), "%3");
        a.key(Key::End);
        assert_eq!(cur(&a), "%5");
        a.key(Key::Down);
        assert_eq!(cur(&a), "%5");
        a.key(Key::Home);
        assert_eq!(cur(&a), "%1");
    }

    #[test]
    fn filter_narrows_rows_and_esc_clears_it() {
        let mut a = app(None);
        assert_eq!(a.key(Key::Char('/')), Action::None);
        assert_eq!(a.mode, Mode::Filter);
        for c in "NOTES".chars() {
            a.key(Key::Char(c));
        }
        assert_eq!(a.filter, "NOTES");
        assert_eq!(a.lines, vec![Line::Header(2), Line::Row(4)]);
        assert_eq!(cur(&a), "%5");
        a.key(Key::Enter);
        assert_eq!(a.mode, Mode::Normal);
        // Typing `q` in the filter is text, not quit; Enter ended it so `q` now quits.
        assert_eq!(a.key(Key::Char('q')), Action::Quit(0));
        a.key(Key::Char('/'));
        a.key(Key::Char('q'));
        assert_eq!(a.filter, "NOTESq");
        assert!(a.current().is_none());
        a.key(Key::Backspace);
        a.key(Key::Esc);
        assert_eq!(a.filter, "");
        assert_eq!(a.lines.len(), 8);
        assert_eq!(cur(&a), "%5", "the cursor stays on its pane");
    }

    /// Issue 34 item 10: Esc after a filter kept with Enter quit instead of clearing it;
    /// `rescanning…` never cleared after `r`; `a` with the autopilot off said it "suggests
    /// nothing now".
    #[test]
    fn esc_clears_a_kept_filter_a_rescan_answers_itself_and_a_says_the_mode() {
        let mut a = App::new(None, None);
        a.set_rows(fixture(), vec![]);
        let all = a.lines.len();
        a.key(Key::Char('/'));
        for c in "web".chars() {
            a.key(Key::Char(c));
        }
        a.key(Key::Enter);
        assert!(a.lines.len() < all);
        assert_eq!(
            a.key(Key::Esc),
            Action::None,
            "Esc clears the kept filter first"
        );
        assert_eq!((a.filter.as_str(), a.lines.len()), ("", all));
        assert_eq!(a.key(Key::Esc), Action::Quit(0), "then it quits");

        let mut a = App::new(None, None);
        a.set_rows(fixture(), vec![]);
        assert_eq!(a.key(Key::Char('r')), Action::Rescan);
        assert_eq!(a.message.as_deref(), Some("rescanning…"));
        a.set_scan(crate::LsOutput {
            schema: 1,
            rows: fixture(),
            servers: vec![],
            warnings: vec![],
            auto_mode: Some("off".into()),
            session: None,
        });
        assert_eq!(a.message, None, "the scan answers `r`");

        a.key(Key::Char('a'));
        let m = a.message.clone().unwrap();
        assert!(
            m.contains("mode is \"off\"") && !m.contains("suggests nothing now"),
            "{m}"
        );
        a.auto_mode = Some("suggest".into());
        a.key(Key::Char('a'));
        assert_eq!(
            a.message.as_deref(),
            Some("the autopilot suggests nothing now")
        );
    }

    #[test]
    fn filter_matches_pane_title_cwd_and_session() {
        for (f, n) in [
            ("%3", 1),
            ("task in web", 2),
            ("/home/u/api", 2),
            ("play", 1),
        ] {
            let mut a = App::new(Some(f), None);
            a.set_rows(fixture(), vec![]);
            let rows = a.lines.iter().filter(|l| matches!(l, Line::Row(_))).count();
            assert_eq!(rows, n, "filter {f:?}");
        }
    }

    #[test]
    fn enter_parks_a_live_row_and_unparks_a_parked_one() {
        let mut a = app(None);
        assert_eq!(
            a.key(Key::Enter),
            Action::Toggle {
                pane: "%1".into(),
                op: Op::Park
            }
        );
        assert_eq!(a.inflight["%1"].op, Op::Park);
        a.key(Key::Down);
        a.key(Key::Down);
        assert_eq!(
            a.key(Key::Enter),
            Action::Toggle {
                pane: "%3".into(),
                op: Op::Unpark
            }
        );
        assert_eq!(a.inflight.len(), 2);
    }

    #[test]
    fn a_busy_row_refuses_enter_with_its_reason() {
        let mut a = app(Some("%2"));
        assert_eq!(a.key(Key::Enter), Action::None);
        assert!(a.inflight.is_empty());
        let m = a.message.clone().unwrap();
        assert!(
            m.starts_with("%2: busy, not parked: a turn is in flight"),
            "{m}"
        );
        assert!(a.message_bad);
    }

    #[test]
    fn a_draft_row_without_reason_is_still_refused() {
        let mut rows = fixture();
        rows[0].status = Status::Draft;
        let mut a = App::new(None, None);
        a.set_rows(rows, vec![]);
        assert_eq!(a.key(Key::Enter), Action::None);
        assert_eq!(a.message.as_deref(), Some("%1: draft, not parked"));
    }

    #[test]
    fn an_untargetable_row_refuses_enter() {
        let mut a = app(Some("%4"));
        assert_eq!(a.key(Key::Enter), Action::None);
        assert!(a
            .message
            .as_deref()
            .unwrap()
            .starts_with("%4: untargetable: no exact session id"));
    }

    #[test]
    fn q_is_refused_while_a_toggle_is_in_flight() {
        let mut a = app(Some("%1"));
        a.key(Key::Enter);
        assert_eq!(a.key(Key::Char('q')), Action::None);
        assert_eq!(a.message.as_deref(), Some("wait: parking %1…"));
        assert_eq!(a.key(Key::Esc), Action::None);
        assert_eq!(a.key(Key::CtrlC), Action::None);
        // It finishes (refused): the picker stays, and q quits now.
        let act = a.done(
            "%1",
            &["%1".into()],
            Op::Park,
            out("refused", Some("x"), None),
        );
        assert_eq!(act, Action::Rescan);
        assert_eq!(a.key(Key::Char('q')), Action::Quit(0));
    }

    #[test]
    fn toggling_the_popup_pane_successfully_quits() {
        let mut a = app(Some("%1"));
        a.key(Key::Enter);
        let act = a.done(
            "%1",
            &["%1".into()],
            Op::Park,
            out("parked", None, Some(145 << 20)),
        );
        assert_eq!(act, Action::Quit(0));
        // Another pane toggled from the same popup keeps it open.
        let mut a = app(Some("%1"));
        a.key(Key::End);
        a.key(Key::Enter);
        let act = a.done("%5", &["%5".into()], Op::Park, out("parked", None, None));
        assert_eq!(act, Action::Rescan);
        // The popup pane done while another toggle still runs: quit only once that one is done.
        let mut a = app(Some("%1"));
        a.key(Key::Enter);
        a.key(Key::End);
        a.key(Key::Enter);
        let act = a.done("%1", &["%1".into()], Op::Park, out("parked", None, None));
        assert_eq!(act, Action::None);
        assert_eq!(a.key(Key::Char('q')), Action::None, "still waiting for %5");
        let act = a.done(
            "%5",
            &["%5".into()],
            Op::Park,
            out("refused", Some("x"), None),
        );
        assert_eq!(act, Action::Quit(0));
    }

    #[test]
    fn a_refusal_keeps_the_popup_open_with_the_reason() {
        let mut a = app(Some("%1"));
        a.key(Key::Enter);
        let act = a.done(
            "%1",
            &["%1".into()],
            Op::Park,
            out(
                "refused",
                Some("unsent text in the composer: \"hello\""),
                None,
            ),
        );
        assert_eq!(act, Action::Rescan);
        assert_eq!(
            a.message.as_deref(),
            Some("%1: refused: unsent text in the composer: \"hello\"")
        );
        assert!(a.message_bad);
    }

    #[test]
    fn result_lines() {
        let (l, ok) = result_line("%3", Op::Park, &out("parked", None, Some(145 << 20)), true);
        assert_eq!((l.as_str(), ok), ("%3: parked (freed 145M)", true));
        let (l, ok) = result_line("%3", Op::Unpark, &out("unparked", None, None), true);
        assert_eq!((l.as_str(), ok), ("%3: unparked", true));
        let (l, ok) = result_line("%3", Op::Park, &JobResult::Error("boom".into()), true);
        assert_eq!((l.as_str(), ok), ("%3: failed: boom", false));
        let bulk = JobResult::Output(ActionOutput {
            schema: SCHEMA_VERSION,
            results: vec![
                ActionResult {
                    pane: Some("%1".into()),
                    freed_bytes: Some(100 << 20),
                    ..ActionResult::new("work:1", crate::Outcome::Parked, None)
                },
                ActionResult {
                    pane: Some("%2".into()),
                    ..ActionResult::new("work:1", crate::Outcome::Refused, Some("busy".into()))
                },
            ],
        });
        let (l, ok) = result_line("work:1", Op::Park, &bulk, false);
        assert_eq!(
            (l.as_str(), ok),
            ("work:1: parked 1 (freed 100M); %2: refused: busy", false)
        );
    }

    #[test]
    fn rescan_keeps_the_cursor_on_the_same_pane() {
        let mut a = app(None);
        a.key(Key::End);
        assert_eq!(cur(&a), "%5");
        // A new agent appears before it and another disappears: the cursor follows %5.
        let mut rows = fixture();
        rows.remove(1);
        rows.insert(0, row("%0", "aaa", 0, "new"));
        a.set_rows(rows, vec![]);
        assert_eq!(cur(&a), "%5");
        // The --pane placement happens only once: later scans keep the user's choice.
        let mut a = app(Some("%3"));
        a.key(Key::Down);
        assert_eq!(cur(&a), "%4");
        a.set_rows(fixture(), vec![]);
        assert_eq!(cur(&a), "%4");
        // If the pane went away the cursor stays near where it was.
        let mut rows = fixture();
        rows.remove(3);
        a.set_rows(rows, vec![]);
        assert_eq!(cur(&a), "%5");
    }

    #[test]
    fn background_rescan_every_30s_but_never_while_in_flight() {
        let mut a = app(None);
        assert_eq!(a.tick(Duration::from_secs(5)), Action::None);
        assert_eq!(a.tick(Duration::from_secs(30)), Action::Rescan);
        a.key(Key::Enter);
        assert_eq!(a.tick(Duration::from_secs(300)), Action::None);
        // A manual rescan asked meanwhile waits for the toggle.
        assert_eq!(a.key(Key::Char('r')), Action::None);
        assert!(a.rescan_pending);
        a.done(
            "%1",
            &["%1".into()],
            Op::Park,
            out("refused", Some("x"), None),
        );
        assert!(!a.rescan_pending);
        // No background rescan while a prompt is open either.
        a.key(Key::Char('/'));
        assert_eq!(a.tick(Duration::from_secs(300)), Action::None);
    }

    #[test]
    fn a_toggled_pane_missing_from_the_scan_gets_quick_followups() {
        let mut a = app(None);
        a.key(Key::End);
        a.key(Key::Enter);
        a.done("%5", &["%5".into()], Op::Park, out("parked", None, None));
        let mut rows = fixture();
        rows.pop();
        a.set_rows(rows.clone(), vec![]);
        assert_eq!(a.tick(FOLLOWUP_RESCAN), Action::Rescan);
        a.set_rows(fixture(), vec![]);
        assert_eq!(a.tick(FOLLOWUP_RESCAN), Action::None);
    }

    /// Issue 35 item 8: a pane unparked from the picker showed `● unknown` with a blank title
    /// until `r`: the follow-ups stopped as soon as its row was back, still starting.
    #[test]
    fn a_resumed_row_is_followed_until_it_settles() {
        let mut a = app(None);
        let pane = fixture()[0].pane.clone();
        a.done(
            &pane,
            std::slice::from_ref(&pane),
            Op::Unpark,
            out("unparked", None, None),
        );
        let mut rows = fixture();
        rows[0].status = Status::Unknown;
        rows[0].title.clear();
        a.set_rows(rows.clone(), vec![]);
        assert_eq!(a.tick(FOLLOWUP_RESCAN), Action::Rescan, "still starting");
        a.set_rows(fixture(), vec![]);
        assert_eq!(a.tick(FOLLOWUP_RESCAN), Action::None, "settled");
        // A slow start (a loaded machine): followed, backing off, for about a minute in all.
        a.done(
            &pane,
            std::slice::from_ref(&pane),
            Op::Unpark,
            out("unparked", None, None),
        );
        let mut waited = Duration::ZERO;
        let mut asked = 0;
        for _ in 0..FOLLOWUP_TRIES {
            a.set_rows(rows.clone(), vec![]);
            let gap = (1..=8)
                .map(Duration::from_secs)
                .find(|d| a.tick(*d) == Action::Rescan);
            let Some(gap) = gap else { break };
            waited += gap;
            asked += 1;
        }
        assert!(asked >= FOLLOWUP_TRIES - 1, "{asked}");
        assert!(waited >= Duration::from_secs(45), "{waited:?}");
        // Then the background period, which a picker may configure.
        assert_eq!(a.tick(Duration::from_secs(8)), Action::None);
        a.background = Duration::from_secs(3600);
        assert_eq!(a.tick(BACKGROUND_RESCAN), Action::None);
        assert_eq!(a.tick(Duration::from_secs(3600)), Action::Rescan);
    }

    /// `prefix P` then Enter at once: the Enter arrives before the first scan has drawn the
    /// pane's row. It is kept and toggles that row once it is there — never another row.
    #[test]
    fn an_enter_before_the_first_scan_toggles_the_opened_pane_once_it_is_drawn() {
        let mut a = App::new(None, Some("%1"));
        assert_eq!(a.key(Key::Enter), Action::None);
        a.set_rows(fixture(), vec![]);
        match a.tick(Duration::ZERO) {
            Action::Toggle { pane, .. } => assert_eq!(pane, "%1"),
            other => panic!("{other:?}"),
        }
        assert_eq!(a.tick(Duration::ZERO), Action::None, "once");
        // The opened pane has no row (a shell): the early Enter toggles nothing else.
        let mut b = App::new(None, Some("%99"));
        b.key(Key::Enter);
        b.set_rows(fixture(), vec![]);
        assert_eq!(b.tick(Duration::ZERO), Action::None);
        // Without a pane to open on, Enter before the scan does nothing.
        let mut c = App::new(None, None);
        assert_eq!(c.key(Key::Enter), Action::None);
        c.set_rows(fixture(), vec![]);
        assert_eq!(c.tick(Duration::ZERO), Action::None);
    }

    /// zellij: the picker learns the pane it was opened on from events that can come after its
    /// first scan (the CI failure: Enter unparked the row, the picker stayed open and held the
    /// focus, so the strip's Alt P found no terminal pane focused).
    #[test]
    fn a_pane_opened_on_learned_after_the_first_scan_is_preselected_and_closes_the_picker() {
        let mut a = App::new(None, None);
        a.set_rows(fixture(), vec![]);
        let first = a.current().map(|r| r.pane.clone());
        assert_ne!(
            first.as_deref(),
            Some("%3"),
            "the fixture's first row is another pane"
        );
        a.opened_on("%3");
        assert_eq!(a.current().map(|r| r.pane.as_str()), Some("%3"));
        a.opened_on("%1");
        assert_eq!(a.focus_pane.as_deref(), Some("%3"), "the first one stays");
        let Action::Toggle { pane, op } = a.key(Key::Enter) else {
            panic!("Enter toggles")
        };
        assert_eq!(pane, "%3");
        assert_eq!(op, Op::Unpark);
        let act = a.done(
            &pane,
            std::slice::from_ref(&pane),
            op,
            out("unparked", None, None),
        );
        assert_eq!(act, Action::Quit(0));

        // A cursor the user moved stays where they put it; the pane still closes the picker.
        let mut b = App::new(None, None);
        b.set_rows(fixture(), vec![]);
        b.key(Key::Down);
        let moved = b.current().map(|r| r.pane.clone());
        b.opened_on("%3");
        assert_eq!(b.current().map(|r| r.pane.clone()), moved);
        assert_eq!(b.focus_pane.as_deref(), Some("%3"));
    }

    #[test]
    fn bulk_asks_then_parks_the_parkable_rows_of_the_window() {
        let mut a = app(Some("%2"));
        assert_eq!(a.key(Key::Char('w')), Action::None);
        match &a.mode {
            Mode::ConfirmBulk {
                target,
                panes,
                frees,
                ..
            } => {
                assert_eq!(target, "work:1");
                assert_eq!(panes, &vec!["%1".to_string()]);
                assert_eq!(*frees, 145 << 20);
            }
            m => panic!("{m:?}"),
        }
        // Anything but y declines.
        assert_eq!(a.key(Key::Char('n')), Action::None);
        assert_eq!(a.mode, Mode::Normal);
        assert_eq!(
            a.message.as_deref(),
            Some("work:1 api: not parked (not confirmed)")
        );
        a.key(Key::Char('w'));
        assert_eq!(
            a.key(Key::Char('y')),
            Action::Bulk {
                target: "work:1".into(),
                panes: vec!["%1".into()]
            }
        );
        assert_eq!(a.inflight["%1"].job, "work:1");
        assert_eq!(a.wait_text().as_deref(), Some("wait: parking work:1…"));
        // A second bulk waits.
        assert_eq!(a.key(Key::Char('w')), Action::None);
        assert!(matches!(a.mode, Mode::Normal));
        let act = a.done(
            "work:1",
            &["%1".into()],
            Op::Park,
            out("parked", None, Some(1 << 20)),
        );
        assert_eq!(act, Action::Rescan);
        assert!(a.inflight.is_empty());
    }

    #[test]
    fn bulk_on_a_window_with_nothing_parkable_says_so() {
        let mut a = app(Some("%3"));
        assert_eq!(a.key(Key::Char('w')), Action::None);
        assert_eq!(a.mode, Mode::Normal);
        assert_eq!(
            a.message.as_deref(),
            Some("work:2 web: nothing parkable in this window")
        );
    }

    #[test]
    fn focus_keeps_the_picker_open() {
        let mut a = app(Some("%3"));
        assert_eq!(a.key(Key::Char('f')), Action::Focus { pane: "%3".into() });
    }

    #[test]
    fn p_toggles_the_pin_and_a_parks_the_suggestions_after_a_yes() {
        let mut a = App::new(None, None);
        let mut r1 = fixtures::row("%1", "w", 0, "a");
        r1.session_id = Some("4cc4dc9f-c0f8-464d-99d4-601c9c0c1a49".into());
        r1.suggested = true;
        let mut r2 = fixtures::row("%2", "w", 0, "a");
        r2.session_id = Some("01a2444b-200f-7f50-98e6-b0d086c16aa3".into());
        r2.pinned = true;
        a.set_rows(vec![r1, r2], vec![]);
        assert_eq!(mark(&a.rows[0]), "? ");
        assert_eq!(mark(&a.rows[1]), "📌 ");
        while a.current().map(|r| r.pane.as_str()) != Some("%1") {
            a.key(Key::Down);
        }
        assert_eq!(
            a.key(Key::Char('p')),
            Action::Pin {
                pane: "%1".into(),
                session_id: "4cc4dc9f-c0f8-464d-99d4-601c9c0c1a49".into(),
                on: true
            }
        );
        a.key(Key::Down);
        assert!(matches!(
            a.key(Key::Char('p')),
            Action::Pin { on: false, .. }
        ));
        assert_eq!(a.key(Key::Char('a')), Action::None);
        assert!(
            matches!(&a.mode, Mode::ConfirmBulk { target, panes, .. } if target == SUGGESTED && panes == &vec!["%1".to_string()])
        );
        assert_eq!(
            a.key(Key::Char('y')),
            Action::Bulk {
                target: SUGGESTED.into(),
                panes: vec!["%1".into()]
            }
        );
    }
}
