//! The context every command runs with: the platform seam, the multiplexer adapter, the ledger, and
//! the published status (file + tmux user options). Also the pane decorations park sets and clears,
//! how a command gets its context from the environment (`Ctx::from_env`) and its one read of the
//! world (`Ctx::scan`).

use crate::adapters::mux::Mux;
use crate::adapters::platform::Platform;
use crate::model::entry::{Entry, EntryState};
use crate::store::ledger::Ledger;
use park_protocol::{StatusSummary, SCHEMA_VERSION};
use std::path::PathBuf;

pub struct Ctx {
    pub platform: Box<dyn Platform>,
    pub mux: Box<dyn Mux>,
    pub ledger: Ledger,
    /// Absolute path of this park binary (typed into panes, run as placeholder and verifier).
    pub exe: PathBuf,
}

pub const PILL_OPTION: &str = "@park_pill";
pub const STATUS_OPTION: &str = "@park_status";
/// Window user option: how many panes of the window are parked (unset when none).
pub(crate) const WINDOW_OPTION: &str = "@park_parked";

impl Ctx {
    /// The context of a command run by a person or by park itself (the waker, a verifier): the
    /// native platform, every multiplexer server reachable from the environment, `$PARK_HOME`.
    pub fn from_env() -> Result<Ctx, String> {
        let home = crate::support::paths::park_home()?;
        let exe =
            std::env::current_exe().map_err(|e| format!("cannot locate the park binary: {e}"))?;
        Ok(Ctx {
            platform: crate::adapters::platform::native(),
            mux: Box::new(crate::adapters::mux::set::MuxSet::from_env()),
            ledger: Ledger::new(home),
            exe,
        })
    }

    /// One read of the world (processes, panes, optionally screens), with the memory cache under
    /// `$PARK_HOME`. A failure to read the process table stops the command (exit 1).
    pub fn scan(&self, screens: bool) -> Result<crate::scan::Scan, crate::exit::Stop> {
        crate::scan::scan_with(
            self.platform.as_ref(),
            self.mux.as_ref(),
            screens,
            Some(&self.ledger.home.join("cache").join("mem.json")),
        )
        .map_err(|e| crate::exit::Stop::refused(format!("cannot read the process table: {e}")))
    }

    pub fn status_summary(&self) -> StatusSummary {
        let (entries, _) = self.ledger.all();
        let parked: Vec<&Entry> = entries
            .iter()
            .filter(|e| e.state != EntryState::Parking)
            .collect();
        // Suggestions of the last pass that are still live (not parked since).
        let auto = crate::store::config::load(&self.ledger.home)
            .ok()
            .map(|c| c.auto);
        let suggested = crate::store::autolog::suggested_ids(&self.ledger.home, auto.as_ref())
            .iter()
            .filter(|id| {
                !entries
                    .iter()
                    .any(|e| e.session_id.eq_ignore_ascii_case(id))
            })
            .count() as u32;
        // Marked lost by a journal pass (a file read, like the rest: the status is never a scan).
        let lost = crate::store::journal::load(&self.ledger.home)
            .map(|j| {
                j.lost()
                    .filter(|r| !entries.iter().any(|e| e.id == r.entry.id))
                    .count() as u32
            })
            .unwrap_or(0);
        StatusSummary {
            schema: SCHEMA_VERSION,
            parked: parked.len() as u32,
            lost,
            freed_bytes: parked.iter().filter_map(|e| e.freed_bytes).sum(),
            suggested,
            updated: jiff::Timestamp::now().as_second(),
            version: Some(park_protocol::VERSION.to_string()),
        }
    }

    /// Rewrites `$PARK_HOME/status` and pushes `@park_status` to tmux (push, never poll).
    pub fn publish_status(&self) {
        let s = self.status_summary();
        let json = serde_json::to_string(&s).unwrap_or_default();
        if self.ledger.ensure().is_ok() {
            let _ = crate::store::ledger::write_atomic(
                &self.ledger.home.join("status"),
                json.as_bytes(),
            );
        }
        self.mux.push_status(&json);
        let text = status_text(&s);
        let _ = self.mux.set_global_option(
            STATUS_OPTION,
            if text.is_empty() { None } else { Some(&text) },
        );
        self.publish_windows();
    }

    /// Sets `@park_parked` (parked panes in the window) on every window of this server that has
    /// parked entries and clears it where it no longer applies. Self-healing: computed from the
    /// ledger each time, so a missed update is repaired by the next change.
    pub fn publish_windows(&self) {
        let Ok(server) = self.mux.server_id() else {
            return;
        };
        let Ok(windows) = self.mux.window_option_all(WINDOW_OPTION) else {
            return;
        };
        let (entries, _) = self.ledger.all();
        for (id, session, index, current) in windows {
            let n = entries
                .iter()
                .filter(|e| {
                    e.state != EntryState::Parking
                        && e.place.server == server
                        && e.place.session == session
                        && e.place.window_index == index
                })
                .count();
            let want = if n == 0 { String::new() } else { n.to_string() };
            if want != current {
                let _ = self.mux.set_window_option(
                    &id,
                    WINDOW_OPTION,
                    if n == 0 { None } else { Some(&want) },
                );
            }
        }
    }

    /// How park is typed into the shell of pane process `shell_pid`: `park` when that resolves to this
    /// binary on PATH, else the full path; prefixed with `PARK_HOME=…` when that shell would
    /// otherwise look at another ledger.
    pub fn typed_name(&self, shell_pid: u32) -> String {
        self.typed_name_seen(shell_pid, None)
    }

    /// [`Self::typed_name`] with the environment of a program that shell started (the agent just
    /// parked): its PATH is what the shell exports now, after a login shell's profile ran — the
    /// PATH `park` is looked up in when the user presses Enter. Without one, a login shell's
    /// PATH is unknown (its profile may set it afresh) and only a system dir is trusted.
    pub fn typed_name_seen(&self, shell_pid: u32, started: Option<&[(String, String)]>) -> String {
        let q = |s: &str| {
            shlex::try_quote(s)
                .map(|c| c.into_owned())
                .unwrap_or_else(|_| "''".into())
        };
        // A login shell (`-bash`, as tmux starts them) re-reads the profile, which may set PATH
        // afresh (Debian's /etc/profile does): there `park` is trusted only in a system dir.
        let login = self
            .platform
            .process(shell_pid)
            .and_then(|p| p.argv.first().map(|a| a.starts_with('-')))
            .unwrap_or(false);
        let system_dir = self.exe.parent().is_some_and(|d| {
            ["/usr/local/bin", "/usr/bin", "/bin"]
                .iter()
                .any(|s| d == std::path::Path::new(s))
        });
        let shell_env = self.platform.environ(shell_pid).unwrap_or_default();
        let get = |env: &[(String, String)], k: &str| {
            crate::adapters::platform::env_get(env, k).map(str::to_string)
        };
        let path = match started.and_then(|e| get(e, "PATH")) {
            Some(p) => Some(p),
            None if !login => get(&shell_env, "PATH"),
            None => None,
        };
        let short = match path {
            Some(p) => which_in(&p, "park").is_some_and(|p| same_file(&p, &self.exe)),
            None => system_dir && which("park").is_some_and(|p| same_file(&p, &self.exe)),
        };
        let prog = if short {
            "park".to_string()
        } else {
            q(&self.exe.to_string_lossy())
        };
        let theirs = crate::support::paths::park_home_from(|k| {
            crate::adapters::platform::env_get(&shell_env, k).map(str::to_string)
        });
        if theirs.as_deref().ok() == Some(self.ledger.home.as_path()) {
            prog
        } else {
            format!(
                "PARK_HOME={} {prog}",
                q(&self.ledger.home.to_string_lossy())
            )
        }
    }

    /// Variables a process park starts in a pane needs to find this ledger and this server.
    pub fn park_env(&self) -> Vec<(String, String)> {
        let mut v = vec![(
            "PARK_HOME".to_string(),
            self.ledger.home.to_string_lossy().into_owned(),
        )];
        if let Ok(s) = std::env::var("PARK_TMUX_SOCKET") {
            v.push(("PARK_TMUX_SOCKET".into(), s));
        }
        v
    }
}

pub fn status_text(s: &StatusSummary) -> String {
    s.text()
}

pub fn which(prog: &str) -> Option<PathBuf> {
    which_in(&std::env::var("PATH").ok()?, prog)
}

/// The first `prog` in the directories of `path` (a `$PATH` value) that is an executable file.
pub fn which_in(path: &str, prog: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(path)
        .filter(|d| d.is_absolute())
        .map(|d| d.join(prog))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

fn same_file(a: &std::path::Path, b: &std::path::Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}
