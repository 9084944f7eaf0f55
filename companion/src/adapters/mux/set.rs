//! Both multiplexers behind one `Mux`: calls are routed by pane handle (or server id), listings are
//! merged. Also [`here`]: the pane park itself runs in, for the innermost multiplexer.
//!
//! Contract: the merged listing is an error when either side's listing is (a partial map is never a
//! map), with one exception kept from the tmux-only days' behaviour: when tmux was not asked for
//! explicitly (no `$TMUX`, no `PARK_TMUX_SOCKET`) and simply has no server, zellij's panes alone are
//! the map. With no zellij pane either, the error says so ([`MuxError::Absent`]).

use super::tmux::Tmux;
use super::zellij::{self, Zellij};
use super::{Mux, MuxError, Pane, Snapshot};
use crate::adapters::platform::{Platform, ProcInfo};

pub struct MuxSet {
    pub tmux: Tmux,
    pub zellij: Zellij,
}

/// The pane park runs in and the server that pane belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Here {
    pub pane: String,
    pub server: String,
}

/// park's own pane, from what it inherited: `TMUX_PANE` + `TMUX`, or `ZELLIJ_PANE_ID` +
/// `ZELLIJ_SESSION_NAME`. When both are set (zellij started inside tmux, or the reverse, leaks the
/// outer one's variables), the nearest multiplexer server among park's ancestors decides.
pub fn here(platform: &dyn Platform) -> Option<Here> {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let tmux = var("TMUX_PANE").and_then(|pane| {
        let server = var("TMUX")?.split(',').next()?.to_string();
        Some(Here { pane, server })
    });
    let zj = match (var("ZELLIJ_PANE_ID"), var("ZELLIJ_SESSION_NAME")) {
        (Some(id), Some(session)) => id.parse::<u32>().ok().map(|id| Here {
            pane: zellij::handle(id, &session),
            server: zellij::server_id_for(&zellij::socket_root()),
        }),
        _ => None,
    };
    match (tmux, zj) {
        (Some(t), Some(z)) => Some(
            if innermost_is_zellij(platform, std::os::unix::process::parent_id()) {
                z
            } else {
                t
            },
        ),
        (t, z) => t.or(z),
    }
}

/// The multiplexer session park's environment names: zellij's `ZELLIJ_SESSION_NAME`, set in its
/// panes and in the commands its plugins run (tmux would need a call to name it: none).
pub fn own_session() -> Option<String> {
    std::env::var("ZELLIJ_SESSION_NAME")
        .ok()
        .filter(|v| !v.is_empty())
}

/// Walks up from `pid`: is the first multiplexer server met a zellij server (else tmux, or none)?
pub(crate) fn innermost_is_zellij(platform: &dyn Platform, mut pid: u32) -> bool {
    for _ in 0..128 {
        let Some(p) = platform.process(pid) else {
            return false;
        };
        if p.comm.starts_with("tmux") {
            return false;
        }
        if p.comm == "zellij" {
            return true;
        }
        if p.ppid <= 1 || p.ppid == pid {
            return false;
        }
        pid = p.ppid;
    }
    false
}

impl MuxSet {
    pub fn from_env() -> Self {
        MuxSet {
            tmux: Tmux::from_env(),
            zellij: Zellij::from_env(crate::adapters::platform::native()),
        }
    }

    fn route(&self, pane: &str) -> &dyn Mux {
        if zellij::parse_handle(pane).is_some() {
            &self.zellij
        } else {
            &self.tmux
        }
    }
}

impl MuxSet {
    /// tmux's listing plus zellij's, under the module's contract.
    fn merge(
        &self,
        tmux: Result<Vec<Pane>, MuxError>,
        z: Vec<Pane>,
    ) -> Result<Vec<Pane>, MuxError> {
        match tmux {
            Ok(mut t) => {
                t.extend(z);
                Ok(t)
            }
            Err(MuxError::Unreachable(..)) if !z.is_empty() && !self.tmux.explicit() => Ok(z),
            Err(MuxError::Unreachable(m, why)) if !self.tmux.explicit() => {
                Err(MuxError::Absent(m, why))
            }
            Err(e) => Err(e),
        }
    }
}

impl Mux for MuxSet {
    fn server_process(
        &self,
        pane: &Pane,
        table: &crate::adapters::platform::proctree::ProcTable,
    ) -> Option<u32> {
        if super::is_zellij_server(&pane.server) {
            self.zellij.server_process(pane, table)
        } else {
            self.tmux.server_process(pane, table)
        }
    }

    fn kind(&self) -> &'static str {
        "tmux+zellij"
    }

    fn server_id(&self) -> Result<String, MuxError> {
        self.tmux.server_id()
    }

    fn serves(&self, server: &str) -> bool {
        if super::zellij::is_server(server) {
            self.zellij.serves(server)
        } else {
            self.tmux.serves(server)
        }
    }

    fn visible(&self, panes: &[Pane]) -> Result<Vec<String>, MuxError> {
        let (z, t): (Vec<Pane>, Vec<Pane>) = panes
            .iter()
            .cloned()
            .partition(|p| super::zellij::is_server(&p.server));
        let mut out = vec![];
        if !t.is_empty() {
            out.extend(self.tmux.visible(&t)?);
        }
        if !z.is_empty() {
            out.extend(self.zellij.visible(&z)?);
        }
        Ok(out)
    }

    fn list_panes(&self) -> Result<Vec<Pane>, MuxError> {
        let z = if self.zellij.servers().is_empty() {
            vec![]
        } else {
            self.zellij.list_panes()?
        };
        self.merge(self.tmux.list_panes(), z)
    }

    /// tmux's part in one tmux client; zellij's (only when the process table shows a zellij
    /// server) side by side with it.
    fn snapshot(&self, procs: &[ProcInfo], want: &[(String, bool)]) -> Snapshot {
        type Want = Vec<(String, bool)>;
        let (zw, tw): (Want, Want) = want
            .iter()
            .cloned()
            .partition(|(p, _)| zellij::parse_handle(p).is_some());
        let zellij_runs = !self.zellij.servers_from(procs).is_empty();
        let (t, z) = std::thread::scope(|sc| {
            let z = zellij_runs.then(|| sc.spawn(|| self.zellij.snapshot(procs, &zw)));
            let t = self.tmux.snapshot(procs, &tw);
            (t, z.map(|h| h.join()))
        });
        let (zpanes, zscreens) = match z {
            None => (vec![], Default::default()),
            Some(Ok(Snapshot {
                panes: Ok(p),
                screens,
            })) => (p, screens),
            Some(Ok(Snapshot { panes: Err(e), .. })) => {
                return Snapshot {
                    panes: Err(e),
                    screens: Default::default(),
                }
            }
            Some(Err(_)) => {
                return Snapshot {
                    panes: Err(MuxError::Partial("listing zellij panes panicked".into())),
                    screens: Default::default(),
                }
            }
        };
        let mut screens = t.screens;
        screens.extend(zscreens);
        Snapshot {
            panes: self.merge(t.panes, zpanes),
            screens,
        }
    }

    fn capture(&self, pane: &str, escapes: bool) -> Result<String, MuxError> {
        self.route(pane).capture(pane, escapes)
    }

    fn capture_many(&self, reqs: &[(String, bool)]) -> Vec<Option<String>> {
        type Part<'a> = Vec<(usize, &'a (String, bool))>;
        let (zr, tr): (Part, Part) = reqs
            .iter()
            .enumerate()
            .partition(|(_, (p, _))| zellij::parse_handle(p).is_some());
        let mut out = vec![None; reqs.len()];
        for (part, mux) in [(tr, &self.tmux as &dyn Mux), (zr, &self.zellij as &dyn Mux)] {
            if part.is_empty() {
                continue;
            }
            let sub: Vec<(String, bool)> = part.iter().map(|(_, r)| (*r).clone()).collect();
            for ((i, _), text) in part.iter().zip(mux.capture_many(&sub)) {
                out[*i] = text;
            }
        }
        out
    }

    fn send_text(&self, pane: &str, text: &str) -> Result<(), MuxError> {
        self.route(pane).send_text(pane, text)
    }

    fn send_keys(&self, pane: &str, keys: &[&str]) -> Result<(), MuxError> {
        self.route(pane).send_keys(pane, keys)
    }

    fn leave_mode(&self, pane: &str) -> Result<(), MuxError> {
        self.route(pane).leave_mode(pane)
    }

    fn set_pane_option(&self, pane: &str, key: &str, value: Option<&str>) -> Result<(), MuxError> {
        self.route(pane).set_pane_option(pane, key, value)
    }

    fn pane_option(&self, pane: &str, key: &str) -> Result<Option<String>, MuxError> {
        self.route(pane).pane_option(pane, key)
    }

    fn set_global_option(&self, key: &str, value: Option<&str>) -> Result<(), MuxError> {
        self.tmux.set_global_option(key, value)
    }

    fn global_option(&self, key: &str) -> Result<Option<String>, MuxError> {
        self.tmux.global_option(key)
    }

    fn notify(&self, text: &str) {
        self.tmux.notify(text);
        self.zellij.notify(text);
    }

    /// A named client is a tmux client (the plugin's attach hook names it); the zellij strip
    /// names none.
    fn ask(&self, client: Option<&str>, question: &str, yes: &[String]) {
        match client {
            Some(_) => self.tmux.ask(client, question, yes),
            None => self.zellij.ask(client, question, yes),
        }
    }

    fn push_status(&self, json: &str) {
        self.zellij.push_status(json)
    }

    fn window_option_all(&self, key: &str) -> Result<Vec<(String, String, u32, String)>, MuxError> {
        self.tmux.window_option_all(key)
    }

    fn home_server(&self) -> Option<String> {
        self.tmux.home_server()
    }

    fn window_layouts(&self) -> Result<Vec<super::WindowLayout>, MuxError> {
        self.tmux.window_layouts()
    }

    fn window_layout(
        &self,
        session: &str,
        window_index: u32,
    ) -> Result<(String, u32, u32), MuxError> {
        self.tmux.window_layout(session, window_index)
    }

    fn build_window(&self, spec: &super::WindowSpec) -> Result<super::BuiltWindow, MuxError> {
        self.tmux.build_window(spec)
    }

    fn kill_window(&self, window: &str) -> Result<(), MuxError> {
        self.tmux.kill_window(window)
    }

    fn finish_build(&self, pane: &str) {
        self.tmux.finish_build(pane)
    }

    fn unfinished_builds(&self) -> Result<Vec<(String, String, u32)>, MuxError> {
        self.tmux.unfinished_builds()
    }

    fn set_window_option(
        &self,
        window: &str,
        key: &str,
        value: Option<&str>,
    ) -> Result<(), MuxError> {
        self.tmux.set_window_option(window, key, value)
    }

    fn set_title(&self, pane: &str, title: &str) -> Result<(), MuxError> {
        self.route(pane).set_title(pane, title)
    }

    fn restore_title(&self, pane: &str, title: &str) -> Result<(), MuxError> {
        self.route(pane).restore_title(pane, title)
    }
    fn checkpoint(&self, pane: &str) {
        self.route(pane).checkpoint(pane)
    }
    fn leaves_last_frame(&self, pane: &str) -> bool {
        self.route(pane).leaves_last_frame(pane)
    }
    fn session_running(&self, server: &str, session: &str) -> Option<bool> {
        if super::zellij::is_server(server) {
            self.zellij.session_running(server, session)
        } else {
            self.tmux.session_running(server, session)
        }
    }

    fn respawn(
        &self,
        pane: &str,
        cwd: &str,
        env: &[(String, String)],
        argv: &[String],
    ) -> Result<(), MuxError> {
        self.route(pane).respawn(pane, cwd, env, argv)
    }

    fn revive(&self, pane: &str) -> Result<(), MuxError> {
        self.route(pane).revive(pane)
    }

    fn new_window(
        &self,
        server: &str,
        session: &str,
        name: &str,
        cwd: &str,
        env: &[(String, String)],
        argv: &[String],
    ) -> Result<String, MuxError> {
        if super::zellij::is_server(server) {
            self.zellij
                .new_window(server, session, name, cwd, env, argv)
        } else {
            self.tmux.new_window(server, session, name, cwd, env, argv)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapters::platform::{Mem, ProcInfo};
    use std::collections::HashMap;
    use std::path::PathBuf;

    struct Table(HashMap<u32, ProcInfo>);
    impl Platform for Table {
        fn processes(&self) -> std::io::Result<Vec<ProcInfo>> {
            Ok(self.0.values().cloned().collect())
        }
        fn process(&self, pid: u32) -> Option<ProcInfo> {
            self.0.get(&pid).cloned()
        }
        fn environ(&self, _: u32) -> Option<Vec<(String, String)>> {
            None
        }
        fn cwd(&self, _: u32) -> Option<PathBuf> {
            None
        }
        fn open_files(&self, _: u32) -> Vec<PathBuf> {
            vec![]
        }
        fn memory(&self, _: u32) -> Option<Mem> {
            None
        }
        fn status_mem(&self, _: u32) -> Option<(u64, u64)> {
            None
        }
        fn clock_ticks_per_sec(&self) -> u64 {
            100
        }
    }

    fn t(rows: &[(u32, u32, &str)]) -> Table {
        Table(
            rows.iter()
                .map(|&(pid, ppid, comm)| {
                    (
                        pid,
                        ProcInfo {
                            pid,
                            ppid,
                            comm: comm.into(),
                            ..Default::default()
                        },
                    )
                })
                .collect(),
        )
    }

    #[test]
    fn the_nearest_server_decides_which_pane_park_is_in() {
        // zellij inside a tmux pane: the shell's parent is the zellij server (a daemon).
        let zin = t(&[(50, 40, "bash"), (40, 1, "zellij"), (30, 1, "tmux: server")]);
        assert!(innermost_is_zellij(&zin, 50));
        // tmux started from a zellij pane: the tmux server is nearer.
        let tin = t(&[(70, 60, "bash"), (60, 1, "tmux: server"), (40, 1, "zellij")]);
        assert!(!innermost_is_zellij(&tin, 70));
        assert!(!innermost_is_zellij(&t(&[(5, 1, "bash")]), 5));
    }

    #[test]
    fn handles_name_their_multiplexer() {
        use crate::adapters::mux::MuxKind;
        assert_eq!(MuxKind::of_pane("%3"), MuxKind::Tmux);
        assert_eq!(MuxKind::of_pane("terminal_3@main"), MuxKind::Zellij);
        assert_eq!(MuxKind::of_server("zellij:main"), MuxKind::Zellij);
        assert_eq!(
            MuxKind::parse(MuxKind::Zellij.as_str()),
            Some(MuxKind::Zellij)
        );
    }

    /// Issue 35 item 4: with no tmux server nobody asked for and no zellij pane (a dead zellij
    /// session), the listing's error says tmux was absent, not asked for; asked for, it is the
    /// plain `Unreachable` a tmux user needs to see.
    #[test]
    fn an_unasked_tmux_with_no_server_is_absent_not_unreachable() {
        let set = |sel: &[&str]| MuxSet {
            tmux: Tmux::with_args(sel),
            zellij: Zellij::from_env(Box::new(t(&[]))),
        };
        let down = || Err(MuxError::Unreachable("tmux", "no server running".into()));
        let zpane = Pane {
            id: "terminal_1@s".into(),
            ..Default::default()
        };
        assert!(matches!(
            set(&[]).merge(down(), vec![]),
            Err(MuxError::Absent("tmux", _))
        ));
        assert!(matches!(
            set(&["-L", "work"]).merge(down(), vec![]),
            Err(MuxError::Unreachable("tmux", _))
        ));
        assert_eq!(
            set(&[]).merge(down(), vec![zpane.clone()]).unwrap(),
            [zpane]
        );
        assert_eq!(
            set(&[]).merge(down(), vec![]).unwrap_err().to_string(),
            "tmux is not reachable: no server running",
            "said as before"
        );
    }
}
