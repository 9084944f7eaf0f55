//! The dev servers and test browsers `ls` shows: the running units of each window (zellij: tab)
//! that holds agents (from one scan) and the units parks stopped (from the window groups). Reads
//! only.

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

fn pane_refs(s: &Scan, server: &str) -> Vec<PaneRef> {
    s.panes
        .iter()
        .filter(|p| p.server == server)
        .map(|p| PaneRef {
            id: p.id.clone(),
            pid: p.pid,
            cwd: p.cwd.clone(),
            window: (p.session.clone(), p.window_index),
        })
        .collect()
}

/// A window of one multiplexer server: (server, session, window index — zellij: tab position).
pub type Window = (String, String, u32);

/// Every running unit of the servers in `s` (the tmux server and each zellij server), with its
/// window.
pub fn running(ctx: &Ctx, s: &Scan) -> Vec<(Window, Server)> {
    let mut servers: Vec<String> = s.server.iter().cloned().collect();
    for p in &s.panes {
        if !servers.contains(&p.server) {
            servers.push(p.server.clone());
        }
    }
    let roots: Vec<u32> = s.found.iter().map(|f| f.proc.root).collect();
    let mut out = vec![];
    for server in servers {
        let panes = pane_refs(s, &server);
        if panes.is_empty() {
            continue;
        }
        out.extend(
            servers::find_all(
                &s.table,
                &panes,
                &server,
                &roots,
                &PlatformFacts(ctx.platform.as_ref()),
            )
            .into_iter()
            .map(|((session, index), sv)| ((server.clone(), session, index), sv)),
        );
    }
    out
}

pub fn command_of(sv: &Server) -> String {
    crate::support::shell::join(sv.argv.iter().map(|a| a.as_str()))
}

/// The `ls` rows: running units of windows that hold agents (live or parked), and the units parks
/// stopped (from the groups), so a window shows what it holds and what a restart would bring back.
pub fn rows(ctx: &Ctx, s: &Scan, agent_windows: &[(String, u32)]) -> Vec<ServerRow> {
    let mut out: Vec<ServerRow> = running(ctx, s)
        .into_iter()
        .filter(|((_, session, index), _)| {
            agent_windows
                .iter()
                .any(|(x, i)| x == session && i == index)
        })
        .map(|((_, session, window_index), sv)| ServerRow {
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
    for g in groups.iter().filter(|g| {
        s.server.as_deref() == Some(&g.server) || s.panes.iter().any(|p| p.server == g.server)
    }) {
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
