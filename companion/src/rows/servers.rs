//! The dev servers and test browsers `ls` shows: the running units of each window that holds
//! agents (from one scan) and the units parks stopped (from the window groups). Reads only.

use crate::adapters::platform::Platform;
use crate::ctx::Ctx;
use crate::scan::servers::{self, Facts, PaneRef, Server};
use crate::scan::Scan;
use crate::store::group;
use park_protocol::ServerRow;

struct PlatformFacts<'a>(&'a dyn Platform);

impl Facts for PlatformFacts<'_> {
    fn environ(&self, pid: u32) -> Option<Vec<(String, String)>> {
        self.0.environ(pid)
    }
    fn cwd(&self, pid: u32) -> Option<String> {
        self.0.cwd(pid).map(|p| p.to_string_lossy().into_owned())
    }
}

fn pane_refs(s: &Scan) -> Vec<PaneRef> {
    s.panes
        .iter()
        .filter(|p| !crate::adapters::mux::is_zellij_server(&p.server))
        .map(|p| PaneRef {
            id: p.id.clone(),
            pid: p.pid,
            cwd: p.cwd.clone(),
            window: (p.session.clone(), p.window_index),
        })
        .collect()
}

/// Every running unit of the tmux server in `s`, with its window.
pub fn running(ctx: &Ctx, s: &Scan) -> Vec<((String, u32), Server)> {
    let Some(server) = s
        .server
        .as_deref()
        .filter(|x| !crate::adapters::mux::is_zellij_server(x))
    else {
        return vec![];
    };
    let roots: Vec<u32> = s.found.iter().map(|f| f.proc.root).collect();
    servers::find_all(
        &s.table,
        &pane_refs(s),
        server,
        &roots,
        &PlatformFacts(ctx.platform.as_ref()),
    )
}

pub fn command_of(sv: &Server) -> String {
    crate::support::shell::join(sv.argv.iter().map(|a| a.as_str()))
}

/// The `ls` rows: running units of windows that hold agents (live or parked), and the units parks
/// stopped (from the groups), so a window shows what it holds and what a restart would bring back.
pub fn rows(ctx: &Ctx, s: &Scan, agent_windows: &[(String, u32)]) -> Vec<ServerRow> {
    let mut out: Vec<ServerRow> = running(ctx, s)
        .into_iter()
        .filter(|(w, _)| agent_windows.contains(w))
        .map(|((session, window_index), sv)| ServerRow {
            session,
            window_index,
            pane: sv.pane.clone(),
            name: sv.name.clone(),
            kind: sv.kind.as_str().into(),
            state: "running".into(),
            pid: Some(sv.pid),
            command: command_of(&sv),
            cwd: sv.cwd.clone(),
            bytes: sv.rss,
            orphan: sv.orphan,
            note: sv.keep.clone(),
        })
        .collect();
    let (groups, _) = group::load_all(&ctx.ledger.home);
    for g in groups
        .iter()
        .filter(|g| s.server.as_deref() == Some(&g.server))
    {
        for sv in &g.servers {
            out.push(ServerRow {
                session: g.session.clone(),
                window_index: g.window_index,
                pane: sv.pane.clone(),
                name: sv.name.clone(),
                kind: sv.kind.as_str().into(),
                state: "stopped".into(),
                pid: None,
                command: command_of(sv),
                cwd: sv.cwd.clone(),
                bytes: sv.rss,
                orphan: sv.orphan,
                note: sv.orphan.then(|| "ran detached: restart by hand".into()),
            });
        }
    }
    out
}
