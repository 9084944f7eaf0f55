//! The effects around dev servers and test browsers: listing them for `ls`, stopping a window's
//! when the window is parked, recording them in the window's group, and restarting them with
//! `park unpark --with-servers` (issue 9 item 4). What counts as a server, and which window a
//! process belongs to, is decided by the pure `servers` module.
//!
//! Contract:
//! - A window's servers are stopped only when **every** agent park tried there succeeded: a
//!   refused (busy, drafting) agent may be using them, so they are left running and the result
//!   says why. A dry run says what would be stopped.
//! - Each unit is killed by (pid, start ticks) through the same tree kill as an agent; what it ran
//!   (argv, cwd, server variables, pane) is saved in the window's group before the kill.
//! - A restart types the recorded command at a **confirmed bare shell prompt** of the pane it ran
//!   in, never anywhere else; a detached (orphan) server, a pane that is gone or busy, is reported
//!   with the command to run by hand.

use crate::ctx::Ctx;
use crate::ops::kill::{self, Timings};
use crate::rows::servers::{command_of, running, Window};
use crate::scan::servers::{self, Server};
use crate::store::group;
use park_protocol::Outcome;
use park_protocol::{human_bytes, ActionResult};

fn res(
    target: &str,
    sv: &Server,
    outcome: Outcome,
    reason: String,
    freed: Option<u64>,
) -> ActionResult {
    ActionResult {
        target: target.to_string(),
        pane: sv.pane.clone(),
        session_id: None,
        outcome,
        reason: Some(reason),
        freed_bytes: freed,
    }
}

/// Stops the servers of each window in `windows` (server, session, index) whose agents all parked
/// (`blocked` names the windows where one did not, with why), and records them in the window's
/// group `gids[window]`.
pub(crate) fn stop_for_windows(
    ctx: &Ctx,
    windows: &[(Window, Option<String>)],
    blocked: &[(Window, String)],
    dry_run: bool,
) -> Vec<ActionResult> {
    let mut out = vec![];
    if windows.is_empty() {
        return out;
    }
    let s = match crate::scan::scan(ctx.platform.as_ref(), ctx.mux.as_ref(), false) {
        Ok(s) => s,
        Err(e) => {
            return vec![ActionResult::new(
                "servers",
                Outcome::Refused,
                Some(format!("cannot scan for dev servers: {e}")),
            )]
        }
    };
    let all = running(ctx, &s);
    for (w, gid) in windows {
        let target = format!("{}:{}", w.1, w.2);
        let units: Vec<&Server> = all.iter().filter(|(x, _)| x == w).map(|(_, s)| s).collect();
        if let Some((_, why)) = blocked.iter().find(|(b, _)| b == w) {
            for sv in units {
                out.push(res(
                    &target,
                    sv,
                    Outcome::Kept,
                    format!("{} left running: {why}", sv.name),
                    None,
                ));
            }
            continue;
        }
        let mut stopped: Vec<Server> = vec![];
        for sv in units {
            let what = format!("{} ({}, {})", sv.name, command_of(sv), human_bytes(sv.rss));
            if let Some(k) = &sv.keep {
                out.push(res(
                    &target,
                    sv,
                    Outcome::Kept,
                    format!("{what}: {k}"),
                    None,
                ));
                continue;
            }
            if dry_run {
                out.push(res(&target, sv, Outcome::WouldStop, what, Some(sv.rss)));
                continue;
            }
            // Recorded before the kill, so a crash between the two loses no restart recipe.
            if let Some(id) = gid {
                let _ = record(ctx, id, sv);
            }
            let freed: u64 = sv
                .pids
                .iter()
                .filter_map(|(p, _)| ctx.platform.status_mem(*p))
                .map(|m| m.1)
                .sum();
            let r = kill::kill_tree(
                ctx.platform.as_ref(),
                &sv.pids,
                (sv.pid, sv.start),
                &Timings::default(),
            );
            if kill::alive(ctx.platform.as_ref(), sv.pid, sv.start) {
                out.push(res(
                    &target,
                    sv,
                    Outcome::Failed,
                    format!("{what} survived SIGKILL: {:?}", r.survivors),
                    None,
                ));
                continue;
            }
            stopped.push(sv.clone());
            out.push(res(&target, sv, Outcome::Stopped, what, Some(freed.max(1))));
        }
        if gid.is_none() && !stopped.is_empty() {
            out.push(ActionResult::new(
                &target,
                Outcome::Failed,
                Some("stopped, but the window has no group record: restart them by hand".into()),
            ));
        }
    }
    out
}

fn record(ctx: &Ctx, gid: &str, sv: &Server) -> Result<(), String> {
    let mut g = group::load(&ctx.ledger.home, gid)?.ok_or("no such group")?;
    g.servers
        .retain(|x| !(x.pane == sv.pane && x.argv == sv.argv && x.cwd == sv.cwd));
    g.servers.push(sv.clone());
    group::save(&ctx.ledger.home, &g).map_err(|e| e.to_string())
}

/// `park unpark --with-servers`: restarts the servers recorded in the groups `gids`, each in its
/// pane at a confirmed bare shell prompt; what cannot be restarted is reported with its command.
/// With `dry_run` nothing is typed and the records stay: each server is reported as
/// `would-restart` with the line that would be typed, or `not-restarted` with the reason, judged
/// on the panes as they are now (one prompt check, no waiting).
pub fn restart(ctx: &Ctx, gids: &[String], dry_run: bool) -> Vec<ActionResult> {
    let mut out = vec![];
    for gid in gids {
        let Ok(Some(mut g)) = group::load(&ctx.ledger.home, gid) else {
            continue;
        };
        if g.servers.is_empty() {
            continue;
        }
        let target = format!("{}:{}", g.session, g.window_index);
        let mut left = vec![];
        for sv in std::mem::take(&mut g.servers) {
            let line_for =
                |cwd: &str, env: &[(String, String)]| servers::restart_line(&sv, cwd, env);
            let by_hand = format!("restart it by hand: {}", line_for("", &[]));
            if sv.orphan {
                out.push(res(
                    &target,
                    &sv,
                    Outcome::NotRestarted,
                    format!("{} ran detached (reparented to init); {by_hand}", sv.name),
                    None,
                ));
                continue;
            }
            let pane = sv.pane.as_deref().and_then(|id| {
                ctx.mux
                    .list_panes()
                    .ok()?
                    .into_iter()
                    .find(|p| p.id == id && p.server == g.server)
                    // zellij renumbers panes when it resurrects a session: the recorded id is
                    // trusted only in the recorded session and tab.
                    .filter(|p| {
                        !crate::adapters::mux::is_zellij_server(&p.server)
                            || (p.session == g.session && p.window_name == g.window_name)
                    })
            });
            let Some(p) = pane else {
                out.push(res(
                    &target,
                    &sv,
                    Outcome::NotRestarted,
                    format!("{}: its pane is gone; {by_hand}", sv.name),
                    None,
                ));
                left.push(sv);
                continue;
            };
            let mut ready = crate::ops::park::shell_prompt_ready(ctx, &p);
            for _ in 0..20 {
                if ready || dry_run {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(100));
                ready = crate::ops::park::shell_prompt_ready(ctx, &p);
            }
            if !ready {
                out.push(res(
                    &target,
                    &sv,
                    Outcome::NotRestarted,
                    format!(
                        "{}: pane {} is not at a bare shell prompt (running {}); {by_hand}",
                        sv.name, p.id, p.current_command
                    ),
                    None,
                ));
                left.push(sv);
                continue;
            }
            let shell_env = ctx.platform.environ(p.pid).unwrap_or_default();
            let shell_cwd = ctx
                .platform
                .cwd(p.pid)
                .map(|c| c.to_string_lossy().into_owned())
                .unwrap_or_else(|| p.cwd.clone());
            let line = line_for(&shell_cwd, &shell_env);
            if dry_run {
                out.push(res(
                    &target,
                    &sv,
                    Outcome::WouldRestart,
                    format!("{}: would type `{line}` in {}", sv.name, p.id),
                    None,
                ));
                left.push(sv);
                continue;
            }
            if p.in_mode {
                let _ = ctx.mux.leave_mode(&p.id);
            }
            match ctx
                .mux
                .send_text(&p.id, &line)
                .and_then(|_| ctx.mux.send_keys(&p.id, &["Enter"]))
            {
                Ok(()) => out.push(res(
                    &target,
                    &sv,
                    Outcome::Restarted,
                    format!("{}: typed `{line}` in {}", sv.name, p.id),
                    None,
                )),
                Err(e) => {
                    out.push(res(
                        &target,
                        &sv,
                        Outcome::NotRestarted,
                        format!("{}: {e}; {by_hand}", sv.name),
                        None,
                    ));
                    left.push(sv);
                }
            }
        }
        // Restarted (or detached) servers leave the record; the others stay for a later try.
        if dry_run {
            continue;
        }
        g.servers = left;
        let _ = group::save(&ctx.ledger.home, &g);
    }
    out
}
