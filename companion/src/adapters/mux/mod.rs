//! Multiplexer adapters: everything park asks of tmux and zellij goes through `Mux`.
//!
//! Contract: `list_panes` returns the whole map or an error — a failed or partial listing is never an
//! empty list, because parking from a partial map hands sessions to the wrong pane. Pane handles are
//! opaque strings outside the adapters, and say which multiplexer owns them: `%3` (tmux),
//! `terminal_3@main` (zellij pane 3 of session `main`). [`MuxSet`] puts both behind one `Mux`,
//! routing each call by its handle, so every guard, the ledger and the park/unpark code are the same
//! for both. [`here`] says which pane park itself runs in.

pub mod set;
pub mod tmux;
pub mod zellij;

pub use set::{here, Here, MuxSet};

use thiserror::Error;

#[derive(Debug, Error)]
pub enum MuxError {
    #[error("{0} is not reachable: {1}")]
    Unreachable(&'static str, String),
    /// tmux was not asked for (no `$TMUX`, no `PARK_TMUX_SOCKET`), runs no server, and zellij
    /// lists no pane either: said as [`MuxError::Unreachable`], but a view whose parked entries are
    /// all zellij ones need not say it (their sessions' state is the news).
    #[error("{0} is not reachable: {1}")]
    Absent(&'static str, String),
    #[error("pane listing is partial: {0}")]
    Partial(String),
    #[error("{0}")]
    Command(String),
}

/// A window to recreate (`park rebuild`): where, what size, and each pane's cwd in order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WindowSpec {
    pub session: String,
    pub window_index: u32,
    pub window_name: String,
    /// Recorded `#{window_layout}`; `None` tiles the panes.
    pub layout: Option<String>,
    pub width: u32,
    pub height: u32,
    pub cwds: Vec<String>,
    pub env: Vec<(String, String)>,
}

/// What [`Mux::build_window`] made: the pane handles in slot order, the index the window got, and
/// anything that did not go as recorded.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BuiltWindow {
    pub window_index: u32,
    pub panes: Vec<String>,
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Pane {
    pub id: String,
    pub pid: u32,
    pub tty: String,
    pub cwd: String,
    pub title: String,
    pub session: String,
    pub window_index: u32,
    pub window_name: String,
    pub pane_index: u32,
    pub current_command: String,
    pub dead: bool,
    pub alternate_on: bool,
    /// park's own pill option on the pane (`@park_pill`), if set.
    pub pill: String,
    /// The server this pane belongs to (tmux: socket path), same as `Mux::server_id`.
    pub server: String,
    /// The pane shows a mode (copy mode, a run-shell result): keys go to the mode, not the program.
    pub in_mode: bool,
    /// Its place among the tiled panes of its window, top to bottom then left to right (tmux:
    /// the pane index; zellij, whose ids are renumbered when it resurrects a session: from the
    /// geometry). The journal matches a resurrected pane by it.
    pub position: u32,
}

/// One window's `#{window_layout}` and size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowLayout {
    pub session: String,
    pub window_index: u32,
    pub layout: String,
    pub width: u32,
    pub height: u32,
}

/// What one scan needs from the multiplexers: the pane map and the screens of the panes asked for.
#[derive(Debug)]
pub struct Snapshot {
    /// Same contract as [`Mux::list_panes`]: the whole map or an error.
    pub panes: Result<Vec<Pane>, MuxError>,
    /// Pane handle → screen, for the requested panes that exist and could be read.
    pub screens: std::collections::HashMap<String, String>,
}

/// The screens of the `want` panes that are in `listed` (none without a map), by `capture_many`.
pub(crate) fn screens_of<M: Mux + ?Sized>(
    mux: &M,
    listed: Option<&Vec<Pane>>,
    want: &[(String, bool)],
) -> std::collections::HashMap<String, String> {
    let Some(listed) = listed else {
        return Default::default();
    };
    let want: Vec<(String, bool)> = want
        .iter()
        .filter(|(id, _)| listed.iter().any(|p| &p.id == id))
        .cloned()
        .collect();
    want.iter()
        .zip(mux.capture_many(&want))
        .filter_map(|((id, _), t)| Some((id.clone(), t?)))
        .collect()
}

pub trait Mux: Send + Sync {
    fn kind(&self) -> &'static str;
    /// Identity of the server (tmux: its socket path), matched against the `TMUX` env of processes.
    fn server_id(&self) -> Result<String, MuxError>;
    /// Whether `server` (a ledger entry's `place.server`) is one this adapter talks to now.
    fn serves(&self, server: &str) -> bool {
        self.server_id().ok().as_deref() == Some(server)
    }
    fn list_panes(&self) -> Result<Vec<Pane>, MuxError>;
    fn capture(&self, pane: &str, escapes: bool) -> Result<String, MuxError>;
    /// Several captures at once (one multiplexer call where it can); `None` for a pane that failed.
    fn capture_many(&self, reqs: &[(String, bool)]) -> Vec<Option<String>> {
        reqs.iter().map(|(p, e)| self.capture(p, *e).ok()).collect()
    }
    /// The pane map and the screens of `want` (handle, with escapes) for one scan, in as few
    /// multiplexer calls as the adapter can (tmux: one). `procs` is the process table the scan has
    /// just read, so an adapter that finds its servers there (zellij) need not read it again.
    /// Requested panes missing from the map are simply absent from `screens`.
    fn snapshot(
        &self,
        procs: &[crate::adapters::platform::ProcInfo],
        want: &[(String, bool)],
    ) -> Snapshot {
        let _ = procs;
        let panes = self.list_panes();
        let screens = screens_of(self, panes.as_ref().ok(), want);
        Snapshot { panes, screens }
    }
    /// The handles of the `panes` someone can see now: tmux, every pane of the active window of a
    /// session with an attached client; zellij, every pane of the tab a connected client has in
    /// focus. An adapter that cannot tell says so (`Err`): the autopilot then treats every pane as
    /// visible, never the other way round.
    fn visible(&self, panes: &[Pane]) -> Result<Vec<String>, MuxError> {
        let _ = panes;
        Err(MuxError::Command(format!(
            "{} cannot tell which panes are visible",
            self.kind()
        )))
    }
    /// Type text literally (no key names, no command separators), without Enter.
    fn send_text(&self, pane: &str, text: &str) -> Result<(), MuxError>;
    fn send_keys(&self, pane: &str, keys: &[&str]) -> Result<(), MuxError>;
    /// Leaves any mode the pane is in, so typed keys reach its program.
    fn leave_mode(&self, pane: &str) -> Result<(), MuxError>;
    fn set_pane_option(&self, pane: &str, key: &str, value: Option<&str>) -> Result<(), MuxError>;
    fn pane_option(&self, pane: &str, key: &str) -> Result<Option<String>, MuxError>;
    fn set_global_option(&self, key: &str, value: Option<&str>) -> Result<(), MuxError>;
    /// A global user option's value (`None` when unset or where the multiplexer has none).
    fn global_option(&self, _key: &str) -> Result<Option<String>, MuxError> {
        Ok(None)
    }
    /// Every window as (window id, session name, window index, value of user option `key`).
    fn window_option_all(&self, key: &str) -> Result<Vec<(String, String, u32, String)>, MuxError>;
    fn set_window_option(
        &self,
        window: &str,
        key: &str,
        value: Option<&str>,
    ) -> Result<(), MuxError>;
    fn set_title(&self, pane: &str, title: &str) -> Result<(), MuxError>;
    /// Puts back the title a pane had before park pinned one (`title` is what was recorded).
    fn restore_title(&self, pane: &str, title: &str) -> Result<(), MuxError> {
        self.set_title(pane, title)
    }
    /// Makes the multiplexer's own saved copy of the session show `pane` as it is now, so a crash
    /// right after park marked (or unpark cleared) it does not bring the pane back as it was.
    /// zellij: `save-session`, only for a session that saves itself (see the zellij adapter);
    /// tmux saves nothing. Best effort.
    fn checkpoint(&self, _pane: &str) {}
    /// Whether a program that exits leaves its last frame (and what it printed on the way out)
    /// above the shell's next prompt: zellij reports no alternate screen to leave, so an agent's
    /// dead TUI stays drawn; tmux's alternate screen hands the shell's screen back.
    fn leaves_last_frame(&self, _pane: &str) -> bool {
        false
    }
    /// Whether multiplexer session `session` of `server` runs now: `None` when this adapter cannot
    /// tell or does not serve `server` (tmux: a server runs or not, its sessions are the panes').
    fn session_running(&self, _server: &str, _session: &str) -> Option<bool> {
        None
    }
    /// Pushes the status summary (JSON) to plugins that render it; tmux reads user options instead.
    fn push_status(&self, _json: &str) {}
    /// Announces `text` to the people attached (tmux: `display-message` on every client unless
    /// the `@park-auto-notify` option is `off`; zellij: the park strip). Best effort, never waits.
    fn notify(&self, _text: &str) {}
    /// Asks the people attached `question`; a yes runs `yes` (argv) in the background. tmux:
    /// `confirm-before` on `client` (else the first one attached); elsewhere the question is
    /// announced with `yes` as the way to answer it. Best effort, never waits for the answer.
    fn ask(&self, _client: Option<&str>, question: &str, yes: &[String]) {
        self.notify(&format!(
            "{question}: `{}`, or Enter on a lost row of the picker",
            yes.join(" ")
        ));
    }
    /// Replace the pane's (dead) process with `argv` in `cwd` with extra `env`.
    fn respawn(
        &self,
        pane: &str,
        cwd: &str,
        env: &[(String, String)],
        argv: &[String],
    ) -> Result<(), MuxError>;
    /// Turns a held pane (zellij keeps a pane whose command exited, or one resurrected with its
    /// command suspended: "Waiting to run …") into a shell in its cwd, under the same handle,
    /// without running the held command. Returns once the pane is no longer held.
    fn revive(&self, pane: &str) -> Result<(), MuxError> {
        Err(MuxError::Command(format!(
            "{pane}: this multiplexer cannot turn a held pane into a shell"
        )))
    }
    /// Open a new window (zellij: pane) in `session` of `server` (tmux: created if missing) running
    /// argv; returns the new pane handle. `name` (tmux: the window's name, kept from automatic
    /// renaming) is the recorded window's, as `rebuild` names the windows it recreates; empty
    /// leaves the multiplexer's default.
    fn new_window(
        &self,
        server: &str,
        session: &str,
        name: &str,
        cwd: &str,
        env: &[(String, String)],
        argv: &[String],
    ) -> Result<String, MuxError>;
    /// The server this adapter talks to, even when none runs there now (tmux: the socket path it
    /// would start), so `rebuild` can tell which parked entries are its own.
    fn home_server(&self) -> Option<String> {
        self.server_id().ok()
    }
    /// The multiplexer server process that runs `pane` (its pid), from a process table already
    /// read: the journal tells a crash (server gone) from an agent that ended (server alive).
    /// tmux: the parent of the pane's process.
    fn server_process(
        &self,
        pane: &Pane,
        table: &crate::adapters::platform::proctree::ProcTable,
    ) -> Option<u32> {
        table.get(pane.pid).map(|p| p.ppid).filter(|p| *p > 1)
    }
    /// Every window's layout, in one call (the journal records them all every pass); `Err`
    /// where the multiplexer records none.
    fn window_layouts(&self) -> Result<Vec<WindowLayout>, MuxError> {
        Err(MuxError::Command(format!(
            "{} records no window layouts",
            self.kind()
        )))
    }
    /// A window's `#{window_layout}`, width and height.
    fn window_layout(
        &self,
        _session: &str,
        _window_index: u32,
    ) -> Result<(String, u32, u32), MuxError> {
        Err(MuxError::Command(format!(
            "{} records no window layouts",
            self.kind()
        )))
    }
    /// Recreates a window with one pane per `spec.cwds` entry, in that order, each running the
    /// user's shell (starting the server and the session when they are gone).
    /// The rebuild that built the window of `pane` has re-pointed its sessions there.
    fn finish_build(&self, _pane: &str) {}
    /// Windows a rebuild built and never finished (it was stopped first): (window, session,
    /// index).
    fn unfinished_builds(&self) -> Result<Vec<(String, String, u32)>, MuxError> {
        Ok(vec![])
    }
    /// Closes a window park built itself (a rebuild's half-built leftover).
    fn kill_window(&self, _window: &str) -> Result<(), MuxError> {
        Err(MuxError::Command(
            "closing a window: not supported here".into(),
        ))
    }
    fn build_window(&self, _spec: &WindowSpec) -> Result<BuiltWindow, MuxError> {
        Err(MuxError::Command(format!(
            "{} cannot recreate windows (rebuild is tmux-only)",
            self.kind()
        )))
    }
}

/// Whether a recorded server id is a zellij one (ids are opaque outside the adapters).
pub(crate) fn is_zellij_server(server: &str) -> bool {
    MuxKind::of_server(server) == MuxKind::Zellij
}

/// Which multiplexer a pane, a server or a recorded place belongs to. The adapters own the
/// spelling of handles and server ids; everything else asks here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum MuxKind {
    Tmux,
    Zellij,
}

impl MuxKind {
    /// The name recorded in ledger entries and printed in `ls --json` (`mux`).
    pub fn as_str(self) -> &'static str {
        match self {
            MuxKind::Tmux => "tmux",
            MuxKind::Zellij => "zellij",
        }
    }

    /// The kind of a pane handle: `terminal_3@main` is zellij's, `%3` tmux's.
    pub fn of_pane(pane: &str) -> MuxKind {
        if zellij::parse_handle(pane).is_some() {
            MuxKind::Zellij
        } else {
            MuxKind::Tmux
        }
    }

    /// The kind of a server id (a tmux socket path, or `zellij:<session>`).
    pub fn of_server(server: &str) -> MuxKind {
        if zellij::is_server(server) {
            MuxKind::Zellij
        } else {
            MuxKind::Tmux
        }
    }

    /// The kind a recorded name (`MuxPlace.kind`) names; `None` for anything else.
    pub fn parse(name: &str) -> Option<MuxKind> {
        match name {
            "tmux" => Some(MuxKind::Tmux),
            "zellij" => Some(MuxKind::Zellij),
            _ => None,
        }
    }
}
