//! `park park` of many targets at once: what `park park <targets>`, `park .`, `--idle DUR` and
//! `--all` do between the validated [`Request`] and the results (printing is the caller's).
//!
//! Contract:
//! * Every target is parsed and resolved before anything is done to any of them; a target that
//!   names a parked session is `already-parked`; one that names nothing is refused with why.
//! * A window or session holding several agents is confirmed on a terminal (unless `yes` or a dry
//!   run); `--kill-anyway` lists what it will kill and needs a typed yes, and never goes with
//!   `--idle`/`--all`; `--idle`/`--all` show their plan and need a typed yes or `yes`.
//! * A whole window is recorded as one group **before** any of its agents is killed, and its dev
//!   servers are stopped only when every agent of the window parked (`stop_servers`).
//! * Each agent goes through the same guarded transaction (`ops::park`), in waves (`ops::wave`);
//!   results come back in target order.

use crate::ctx::Ctx;
use crate::exit::Stop;
use crate::guards::target::{self, Target};
use crate::guards::Overrides;
use crate::model::wake::Wake;
use crate::ops::park::{self, ParkOpts};
use crate::ops::ui::{confirm_bulk, Ui};
use crate::ops::wave::{self, ParkItem};
use crate::scan::{Found, Scan};
use park_protocol::{human_bytes, ActionResult, Outcome};
use std::collections::HashMap;
use std::time::Duration;

/// Which agents a batch park takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Select {
    /// The targets as typed (`%3`, `work:2`, `@set`, `.`, an id, a title word).
    Named(Vec<String>),
    /// `--idle DUR`: every agent whose last real turn is at least this old.
    Idle(Duration),
    /// `--all`: every agent park can park.
    All,
}

/// A validated `park park`: flags have been checked against each other (see `cli`).
#[derive(Debug, Clone)]
pub struct Request {
    pub select: Select,
    /// How `--idle`/`--all` was spelled, for the plan line (`--idle 2h`).
    pub select_text: String,
    pub dry_run: bool,
    /// Skip the CPU corroboration (the only check it waives).
    pub force: bool,
    /// Also waive the busy and draft guards, after a typed yes (named targets only).
    pub kill_anyway: bool,
    /// Do not ask before a window/session of several agents or a bulk park.
    pub yes: bool,
    /// With a pane target: also stop the dev servers of its window.
    pub with_servers: bool,
    pub wake: Option<Wake>,
    /// `--wake-on-limit-reset`: each agent wakes 1 minute after the usage limit its screen shows
    /// resets, with these notes; an agent whose screen shows no limit is refused.
    pub limit_wake: Option<Vec<String>>,
}

impl Request {
    /// A plain park of named targets, as the picker and tests ask for it.
    pub fn named(targets: &[&str]) -> Request {
        Request {
            select: Select::Named(targets.iter().map(|t| t.to_string()).collect()),
            select_text: String::new(),
            dry_run: false,
            force: false,
            kill_anyway: false,
            yes: false,
            with_servers: false,
            wake: None,
            limit_wake: None,
        }
    }
}

/// Runs a batch park; `Err` only when the request stops before anything is done.
pub fn run(ctx: &Ctx, req: &Request, ui: &dyn Ui) -> Result<Vec<ActionResult>, Stop> {
    let targets = match &req.select {
        Select::Named(t) => crate::store::sets::expand(&ctx.ledger.home, t).map_err(Stop::usage)?,
        _ => vec![],
    };
    // Every target is validated before anything is done to any of them.
    let parsed_all = parse_targets(&targets)?;
    let s = ctx.scan(true)?;
    match req.select {
        Select::Named(_) => Ok(park_named(ctx, &s, parsed_all, req, ui)?),
        Select::Idle(d) => park_bulk(ctx, &s, Some(d), req, ui),
        Select::All => park_bulk(ctx, &s, None, req, ui),
    }
}

/// Parses every target; a usage error names the first bad one.
pub fn parse_targets(targets: &[String]) -> Result<Vec<(String, Target)>, Stop> {
    targets
        .iter()
        .map(|t| {
            target::parse(t)
                .map(|p| (t.clone(), p))
                .map_err(Stop::usage)
        })
        .collect()
}

fn park_named(
    ctx: &Ctx,
    s: &Scan,
    parsed_all: Vec<(String, Target)>,
    req: &Request,
    ui: &dyn Ui,
) -> Result<Vec<ActionResult>, Stop> {
    let here_raw = crate::adapters::mux::here(ctx.platform.as_ref());
    let here = s
        .caller
        .pane
        .clone()
        .or_else(|| here_raw.as_ref().map(|h| h.pane.clone()));
    let mut results = vec![];
    let mut seen: Vec<(String, usize)> = vec![];
    let mut window_level: Vec<usize> = vec![];
    // Parked entries where their slots are now (zellij renumbers panes on a resurrection).
    let entries = crate::rows::slots::as_placed(ctx, s, &ctx.ledger.all().0);
    for (t, parsed) in parsed_all {
        let t = &t;
        if parsed == Target::Here && here_raw.is_none() {
            results.push(ActionResult::new(
                t,
                Outcome::Refused,
                Some(
                    "`.` means the pane park runs in, but TMUX_PANE / ZELLIJ_PANE_ID is not set"
                        .into(),
                ),
            ));
            continue;
        }
        match target::resolve(&parsed, &s.found, &entries, here.as_deref()) {
            Ok(named) if !named.live.is_empty() => {
                let idx = named.live;
                // A window or session holding several agents: on a terminal, confirm the group.
                if idx.len() > 1 && !req.yes && !req.dry_run && ui.can_ask() {
                    let total: u64 = idx.iter().map(|i| s.found[*i].mem.anon).sum();
                    let q = format!(
                        "park {} agents in {t} (frees ~{})?",
                        idx.len(),
                        human_bytes(total)
                    );
                    if !ui.ask(&q) {
                        results.push(ActionResult::new(
                            t,
                            Outcome::Refused,
                            Some("not confirmed".into()),
                        ));
                        continue;
                    }
                }
                let whole = match &parsed {
                    Target::Window(..) => true,
                    Target::Word(w) => s.panes.iter().any(|p| p.session == *w),
                    _ => false,
                };
                if whole {
                    window_level.extend(idx.iter().copied());
                }
                seen.extend(idx.into_iter().map(|i| (t.clone(), i)))
            }
            // A target that names only parked sessions is already where it was asked to be.
            Ok(named) => {
                for e in named.parked {
                    results.push(ActionResult {
                        target: t.clone(),
                        pane: Some(e.place.pane.clone()),
                        session_id: Some(e.session_id.clone()),
                        outcome: Outcome::AlreadyParked,
                        reason: None,
                        freed_bytes: e.freed_bytes,
                    });
                }
            }
            Err(why) => {
                // Nothing matched because no pane could be seen: say that, not only "no agent".
                let why = match (&why, &s.pane_error, &parsed) {
                    (target::Miss::Nothing(w), Some(e), _) => {
                        format!("{w}; the pane map is unavailable ({e})")
                    }
                    // `nosuch:0`: the session itself is not there, which says more.
                    (target::Miss::Nothing(_), None, Target::Window(se, w))
                        if !s.panes.iter().any(|p| p.session == *se) =>
                    {
                        let mut known: Vec<&str> =
                            s.panes.iter().map(|p| p.session.as_str()).collect();
                        known.sort_unstable();
                        known.dedup();
                        format!(
                            "no session {se:?} (to hold window {w:?}); sessions: {}",
                            if known.is_empty() {
                                "none".to_string()
                            } else {
                                known.join(", ")
                            }
                        )
                    }
                    _ => why.into(),
                };
                results.push(ActionResult::new(t, Outcome::Refused, Some(why)))
            }
        }
    }
    if req.with_servers {
        // A pane's servers are its window's: the window is recorded as a group to hold them.
        window_level.extend(seen.iter().map(|(_, i)| *i));
    }
    let mut overrides = Overrides {
        force: req.force,
        kill_anyway: false,
    };
    if req.kill_anyway && !req.dry_run {
        let list: Vec<String> = seen
            .iter()
            .map(|(_, i)| {
                let f = &s.found[*i];
                format!(
                    "{} {} ({} processes, status {}{})",
                    f.pane.as_ref().map(|p| p.id.as_str()).unwrap_or("?"),
                    f.proc.agent.as_str(),
                    f.tree.len(),
                    f.status.as_str(),
                    f.draft
                        .as_ref()
                        .map(|d| format!(", draft {d:?}"))
                        .unwrap_or_default()
                )
            })
            .collect();
        ui.warn(&format!(
            "--kill-anyway will kill, even mid-turn or with unsent text:\n  {}",
            list.join("\n  ")
        ));
        if !(ui.can_ask()
            && ui.ask_typed("An in-flight turn or draft in these panes will be lost."))
        {
            return Err(Stop::refused(
                "--kill-anyway needs a terminal and a typed yes; nothing done",
            ));
        }
        overrides.kill_anyway = true;
    }
    let mut opts = ParkOpts {
        dry_run: req.dry_run,
        overrides,
        group: None,
        wake: req.wake.clone(),
    };
    // A whole window parks as one group, recorded before anything in it is killed.
    let groups = if req.dry_run || window_level.is_empty() {
        Default::default()
    } else {
        let (g, warnings) = park::record_groups(ctx, s, &window_level);
        for w in warnings {
            ui.warn(&format!("park: {w}"));
        }
        g
    };
    let mut done: Vec<usize> = vec![];
    let mut slots: Vec<Option<ActionResult>> = results.into_iter().map(Some).collect();
    let mut items: Vec<(usize, ParkItem)> = vec![];
    for (t, i) in seen {
        if done.contains(&i) {
            continue;
        }
        done.push(i);
        let f = &s.found[i];
        if f.ident.session_id.is_none() {
            slots.push(Some(park::refused(
                &t,
                f,
                f.ident
                    .reason
                    .clone()
                    .unwrap_or_else(|| "untargetable".into()),
            )));
            continue;
        }
        opts.group = groups.get(&i).cloned();
        if let Some(notes) = &req.limit_wake {
            match limit_wake(ctx, f, notes) {
                Ok(w) => opts.wake = Some(w),
                Err(why) => {
                    slots.push(Some(park::refused(&t, f, why)));
                    continue;
                }
            }
        }
        items.push((
            slots.len(),
            ParkItem {
                target: t,
                found: i,
                opts: opts.clone(),
            },
        ));
        slots.push(None);
    }
    let (at, items): (Vec<usize>, Vec<ParkItem>) = items.into_iter().unzip();
    for (slot, r) in at.into_iter().zip(wave::park_all(ctx, s, items)) {
        slots[slot] = Some(r);
    }
    let mut results: Vec<ActionResult> = slots.into_iter().flatten().collect();
    results.extend(stop_servers(
        ctx,
        s,
        &window_level,
        &groups,
        &results,
        req.dry_run,
        ui,
    ));
    Ok(results)
}

/// After a window-level park: stop the dev servers and test browsers of each window whose agents
/// all parked, and say per window what was freed.
fn stop_servers(
    ctx: &Ctx,
    s: &Scan,
    window_level: &[usize],
    groups: &HashMap<usize, String>,
    results: &[ActionResult],
    dry_run: bool,
    ui: &dyn Ui,
) -> Vec<ActionResult> {
    let mut windows: Vec<(crate::rows::servers::Window, Option<String>)> = vec![];
    let mut blocked: Vec<(crate::rows::servers::Window, String)> = vec![];
    let ok = |r: &ActionResult| {
        matches!(
            r.outcome,
            Outcome::Parked | Outcome::AlreadyParked | Outcome::WouldPark
        )
    };
    for i in window_level {
        let f = &s.found[*i];
        let Some(p) = f.pane.as_ref() else {
            continue;
        };
        let w = (p.server.clone(), p.session.clone(), p.window_index);
        if !windows.iter().any(|x| x.0 == w) {
            windows.push((w.clone(), groups.get(i).cloned()));
        }
        // Every agent of the window, targeted or not, must be parked now.
        for g in s.found.iter().filter(|g| {
            g.pane
                .as_ref()
                .is_some_and(|gp| gp.server == w.0 && gp.session == w.1 && gp.window_index == w.2)
        }) {
            let pane = g.pane.as_ref().map(|x| x.id.clone());
            let r = results
                .iter()
                .find(|r| r.pane == pane && r.session_id == g.ident.session_id);
            if !r.is_some_and(ok) && !blocked.iter().any(|b| b.0 == w) {
                blocked.push((
                    w.clone(),
                    format!(
                        "the agent in {} was not parked ({}), and may be using it",
                        pane.unwrap_or_default(),
                        r.and_then(|r| r.reason.clone())
                            .unwrap_or_else(|| "not a target".into())
                    ),
                ));
            }
        }
    }
    let out = crate::ops::servers::stop_for_windows(ctx, &windows, &blocked, dry_run);
    for (w, _) in &windows {
        let t = format!("{}:{}", w.1, w.2);
        let agents: u64 = results
            .iter()
            // A dry run's agents count as what they would free (issue 34 item 11: the summary
            // said 0B above rows that free ~115M).
            .filter(|r| {
                matches!(r.outcome, Outcome::Parked | Outcome::WouldPark)
                    && s.panes.iter().any(|p| {
                        Some(&p.id) == r.pane.as_ref()
                            && p.server == w.0
                            && p.session == w.1
                            && p.window_index == w.2
                    })
            })
            .filter_map(|r| r.freed_bytes)
            .sum();
        let servers: Vec<&ActionResult> = out
            .iter()
            .filter(|r| r.target == t && matches!(r.outcome, Outcome::Stopped | Outcome::WouldStop))
            .collect();
        let sbytes: u64 = servers.iter().filter_map(|r| r.freed_bytes).sum();
        ui.inform(&format!(
            "window {t}{}: agents {}, servers {} ({}), total {}",
            if dry_run { " would free" } else { "" },
            human_bytes(agents),
            human_bytes(sbytes),
            servers.len(),
            human_bytes(agents + sbytes)
        ));
    }
    out
}

/// The wake-up of `--wake-on-limit-reset` for `f`: one minute after the reset its screen shows.
pub(crate) fn limit_wake(ctx: &Ctx, f: &Found, notes: &[String]) -> Result<Wake, String> {
    let p = f.pane.as_ref().ok_or("not in a pane")?;
    let screen = ctx
        .mux
        .capture(&p.id, false)
        .map_err(|e| format!("cannot read the screen of {}: {e}", p.id))?;
    let l = crate::agents::of(f.proc.agent)
        .spec()
        .limit_screen
        .and_then(|read| read(&screen, &jiff::Zoned::now()))
        .ok_or_else(|| format!("{} shows no usage-limit screen with a reset time", p.id))?;
    let now = jiff::Timestamp::now();
    let at = jiff::Timestamp::from_second(l.reset.as_second() + 60).map_err(|e| e.to_string())?;
    let mut w = Wake::new(now);
    w.at = Some(at.to_string());
    w.notes = notes.to_vec();
    // Remembered so the autopilot does not park the session again for the same message after a
    // resume before the reset (the history still shows it). Written before the park: a refused
    // park leaves a line that only ever keeps the autopilot from acting.
    if let Some(sid) = &f.ident.session_id {
        crate::store::autolog::note_limit_park(&ctx.ledger.home, sid, &l.text);
    }
    Ok(w)
}

fn plan_line(f: &Found) -> String {
    format!(
        "{:<8} {:<6} {:<24} idle {:>4}  {:>7}",
        f.pane.as_ref().map(|p| p.id.as_str()).unwrap_or("-"),
        f.proc.agent.as_str(),
        f.title.chars().take(24).collect::<String>(),
        crate::support::duration::brief(f.idle_secs),
        human_bytes(f.mem.anon)
    )
}

/// `--idle DUR` / `--all`: show the plan, confirm with a typed yes (or `yes`), then park each
/// selected agent through the same guarded transaction as a named target.
fn park_bulk(
    ctx: &Ctx,
    s: &Scan,
    min_idle: Option<Duration>,
    req: &Request,
    ui: &dyn Ui,
) -> Result<Vec<ActionResult>, Stop> {
    let (pick, skip) = target::bulk_selection(&s.found, min_idle);
    let what = &req.select_text;
    let total: u64 = pick.iter().map(|i| s.found[*i].mem.anon).sum();
    ui.inform(&format!(
        "park {what}: {} agent(s), ~{} to free",
        pick.len(),
        human_bytes(total)
    ));
    for i in &pick {
        ui.inform(&format!("  {}", plan_line(&s.found[*i])));
    }
    for (i, why) in &skip {
        ui.inform(&format!("  skip {} ({why})", plan_line(&s.found[*i])));
    }
    if pick.is_empty() {
        return Ok(vec![]);
    }
    if !req.dry_run
        && !req.yes
        && !confirm_bulk(
            ui,
            &format!("{what} parks {} agent(s)", pick.len()),
            &format!("Park these {} agent(s)?", pick.len()),
        )
    {
        return Err(Stop::declined());
    }
    let opts = ParkOpts {
        dry_run: req.dry_run,
        overrides: Overrides {
            force: req.force,
            kill_anyway: false,
        },
        group: None,
        wake: req.wake.clone(),
    };
    let items = pick
        .iter()
        .map(|i| ParkItem {
            target: s.found[*i]
                .pane
                .as_ref()
                .map(|p| p.id.clone())
                .unwrap_or_default(),
            found: *i,
            opts: opts.clone(),
        })
        .collect();
    Ok(wave::park_all(ctx, s, items))
}

#[cfg(test)]
mod tests {
    //! A batch park driven through the library with a fake `Platform` and a fake `Mux` (issue 20):
    //! two real `sleep` processes the test owns play the agents, because the kill is real
    //! (`kill(2)`, gated by each pid's start time). Everything else is the fakes': the argv,
    //! environment and cwd those processes show, the Claude files that identify them (status file
    //! `sessions/<pid>.json` naming the process start, transcript) in a temporary config dir, one
    //! tmux-like window `work:1` whose panes' own processes are the agents and whose screens are a
    //! real idle Claude screen, and every multiplexer call. Nothing here reads or touches the
    //! machine's other processes, a real tmux server, `~/.claude` or a real `$PARK_HOME`; the park
    //! binary (`ctx.exe`) is only typed into the placeholder command, never run.

    use super::*;
    use crate::adapters::mux::{Mux, MuxError, Pane};
    use crate::adapters::platform::{Mem, Platform, ProcInfo};
    use crate::model::entry::EntryState;
    use crate::ops::ui::Scripted;
    use crate::store::ledger::Ledger;
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    use std::path::{Path, PathBuf};
    use std::process::{Child, Command, Stdio};
    use std::sync::{Arc, Mutex};

    const SIDS: [&str; 2] = [
        "5b0c6a1e-2f3d-4c5b-9a8e-7d6c5b4a3f01",
        "5b0c6a1e-2f3d-4c5b-9a8e-7d6c5b4a3f02",
    ];
    const PANES: [&str; 2] = ["%1", "%2"];
    /// The fake server's id (a tmux socket path no tmux listens on: it is only ever compared).
    const SERVER: &str = "/nonexistent/park-test-tmux/default";
    const LAYOUT: &str = "b25f,160x48,0,0{80x48,0,0,1,79x48,81,0,2}";
    /// Typed into the placeholder command line only; nothing runs it.
    const EXE: &str = "/nonexistent/park";

    /// One fake agent: a real process, and what the fake platform says it is.
    struct Agent {
        child: Child,
        pane: &'static str,
        sid: &'static str,
        argv: Vec<String>,
    }

    /// The agents' processes (killed and reaped whatever the test does, even when it fails half
    /// way through building) and their temporary files.
    struct World {
        agents: Vec<Agent>,
        cfg: PathBuf,
        cwd: PathBuf,
        dir: tempfile::TempDir,
    }

    impl Drop for World {
        fn drop(&mut self) {
            for a in &mut self.agents {
                let _ = a.child.kill();
                let _ = a.child.wait();
            }
        }
    }

    impl World {
        fn new() -> World {
            let dir = tempfile::tempdir().unwrap();
            let mut w = World {
                agents: vec![],
                cfg: dir.path().join("claude-config"),
                cwd: dir.path().join("project"),
                dir,
            };
            std::fs::create_dir_all(&w.cwd).unwrap();
            std::fs::create_dir_all(w.cfg.join("sessions")).unwrap();
            let cwd = w.cwd.to_string_lossy().into_owned();
            let native = crate::adapters::platform::native();
            for (i, (pane, sid)) in PANES.into_iter().zip(SIDS).enumerate() {
                // Its own process group, as a pane's process has: no signal to the agent's group
                // could reach the test runner.
                let child = Command::new("sleep")
                    .arg("600")
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .process_group(0)
                    .spawn()
                    .expect("spawn sleep");
                let pid = child.id();
                // The first names no session on its command line (its status file alone says which
                // it runs, as after `/clear`); the second was started with `--resume`.
                let argv: Vec<String> = if i == 0 {
                    vec!["claude".into(), "--model".into(), "opus".into()]
                } else {
                    vec!["claude".into(), "--resume".into(), sid.into()]
                };
                w.agents.push(Agent {
                    child,
                    pane,
                    sid,
                    argv,
                });
                let start = native.process(pid).expect("the child runs").start_ticks;
                // The status file as Claude Code 2.1.197 writes it, naming this process's start.
                let status = serde_json::json!({
                    "pid": pid, "sessionId": sid, "cwd": cwd, "startedAt": 1796220635705u64,
                    "procStart": start.to_string(), "version": "2.1.197", "peerProtocol": 1,
                    "kind": "interactive", "entrypoint": "cli", "status": "idle",
                });
                std::fs::write(
                    w.cfg.join("sessions").join(format!("{pid}.json")),
                    status.to_string(),
                )
                .unwrap();
                // A transcript with one whole turn, as Claude writes it, under the session's id.
                let mut e = crate::model::entry::Entry::sample(park_protocol::Agent::Claude, sid);
                e.cwd = cwd.clone();
                let t = crate::agents::of(park_protocol::Agent::Claude)
                    .restore_path(&e, &w.cfg, sid)
                    .unwrap();
                std::fs::create_dir_all(t.parent().unwrap()).unwrap();
                let lines =
                    crate::shapes::claude_turn("fix the parser", "the parser is fixed", 64, 1)
                        .join("\n")
                        .replace(crate::shapes::CLAUDE_SID, sid)
                        .replace(crate::shapes::CWD, &cwd);
                std::fs::write(&t, lines + "\n").unwrap();
            }
            w
        }

        fn home(&self) -> PathBuf {
            self.dir.path().join("park-home")
        }

        fn pid(&self, i: usize) -> u32 {
            self.agents[i].child.id()
        }

        /// What each agent's process looks like from inside its pane.
        fn env(&self, a: &Agent) -> Vec<(String, String)> {
            [
                ("CLAUDE_CONFIG_DIR", self.cfg.to_string_lossy().as_ref()),
                ("HOME", "/nonexistent/home"),
                ("PATH", "/usr/bin:/bin"),
                ("TMUX", &format!("{SERVER},4242,0")),
                ("TMUX_PANE", a.pane),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
        }

        fn ctx(&self, mux: &Arc<FakeMux>) -> Ctx {
            Ctx {
                platform: Box::new(FakePlatform {
                    native: crate::adapters::platform::native(),
                    agents: self
                        .agents
                        .iter()
                        .map(|a| Dressed {
                            pid: a.child.id(),
                            argv: a.argv.clone(),
                            env: self.env(a),
                            cwd: self.cwd.clone(),
                        })
                        .collect(),
                }),
                mux: Box::new(MuxRef(mux.clone())),
                ledger: Ledger::new(self.home()),
                exe: PathBuf::from(EXE),
            }
        }

        /// One server, one session `work`, window 1 `api`, one pane per agent, the agent being
        /// the pane's own process.
        fn mux(&self) -> Arc<FakeMux> {
            Arc::new(FakeMux {
                native: crate::adapters::platform::native(),
                panes: self
                    .agents
                    .iter()
                    .enumerate()
                    .map(|(i, a)| Pane {
                        id: a.pane.to_string(),
                        pid: a.child.id(),
                        // Not under /dev: nothing can write to a real terminal through it.
                        tty: format!("fake-tty-{i}"),
                        cwd: self.cwd.to_string_lossy().into_owned(),
                        title: format!("agent {i}"),
                        session: "work".into(),
                        window_index: 1,
                        window_name: "api".into(),
                        pane_index: i as u32,
                        current_command: "claude".into(),
                        dead: false,
                        alternate_on: false,
                        pill: String::new(),
                        server: SERVER.into(),
                        in_mode: false,
                        position: i as u32,
                    })
                    .collect(),
                state: Mutex::default(),
            })
        }

        /// How each child ended, once it has (reaped here).
        fn ended(&mut self) -> Vec<Option<std::process::ExitStatus>> {
            self.agents
                .iter_mut()
                .map(|a| a.child.try_wait().unwrap())
                .collect()
        }
    }

    /// Whether `pid` has exited (gone, or a zombie its parent, the test, has not reaped yet).
    fn exited(native: &dyn Platform, pid: u32) -> bool {
        native
            .process(pid)
            .is_none_or(|p| p.state == 'Z' || p.state == 'X')
    }

    struct Dressed {
        pid: u32,
        argv: Vec<String>,
        env: Vec<(String, String)>,
        cwd: PathBuf,
    }

    /// A process table holding only the test's children, read from the real one (pids, start
    /// times, states, CPU and memory counters are the kernel's, so the kill's start-time checks are
    /// real), in which they run `claude` in the project dir with their own config dir.
    struct FakePlatform {
        native: Box<dyn Platform>,
        agents: Vec<Dressed>,
    }

    impl FakePlatform {
        fn agent(&self, pid: u32) -> Option<&Dressed> {
            self.agents.iter().find(|a| a.pid == pid)
        }
        /// What is readable only of a live process (environ, cwd): none of a zombie.
        fn live_agent(&self, pid: u32) -> Option<&Dressed> {
            self.agent(pid)
                .filter(|_| !exited(self.native.as_ref(), pid))
        }
    }

    impl Platform for FakePlatform {
        fn processes(&self) -> std::io::Result<Vec<ProcInfo>> {
            Ok(self
                .agents
                .iter()
                .filter_map(|a| self.process(a.pid))
                .collect())
        }
        fn process(&self, pid: u32) -> Option<ProcInfo> {
            let a = self.agent(pid)?;
            let mut p = self.native.process(pid)?;
            p.argv = a.argv.clone();
            p.comm = "claude".into();
            // The foreground job of its pane, as an agent at its prompt is.
            p.tpgid = p.pgid as i32;
            Some(p)
        }
        fn environ(&self, pid: u32) -> Option<Vec<(String, String)>> {
            self.live_agent(pid).map(|a| a.env.clone())
        }
        fn cwd(&self, pid: u32) -> Option<PathBuf> {
            self.live_agent(pid).map(|a| a.cwd.clone())
        }
        fn open_files(&self, _pid: u32) -> Vec<PathBuf> {
            vec![]
        }
        fn memory(&self, pid: u32) -> Option<Mem> {
            self.agent(pid).and_then(|_| self.native.memory(pid))
        }
        fn status_mem(&self, pid: u32) -> Option<(u64, u64)> {
            self.agent(pid).and_then(|_| self.native.status_mem(pid))
        }
        fn clock_ticks_per_sec(&self) -> u64 {
            self.native.clock_ticks_per_sec()
        }
        fn proc_start_matches(&self, start_ticks: u64, recorded: &str) -> bool {
            self.native.proc_start_matches(start_ticks, recorded)
        }
    }

    #[derive(Default)]
    struct MuxState {
        /// Every call that changes something, in order.
        calls: Vec<String>,
        /// Pane and window options as set: (pane or window, key) → value.
        options: HashMap<(String, String), String>,
        /// Each respawn that took.
        respawns: Vec<Respawn>,
        /// How many captures still catch a frame half drawn (the agent's output, no composer).
        half_frames: u32,
    }

    #[derive(Debug, Clone)]
    struct Respawn {
        pane: String,
        cwd: String,
        env: Vec<(String, String)>,
        argv: Vec<String>,
    }

    /// A tmux server behaving as tmux does where park relies on it: a pane whose own process
    /// exited closes, unless its `remain-on-exit` is on (then it is listed dead); only a dead pane
    /// can be respawned. Screens are a real idle Claude 2.1.197 screen.
    struct FakeMux {
        native: Box<dyn Platform>,
        panes: Vec<Pane>,
        state: Mutex<MuxState>,
    }

    impl FakeMux {
        fn st(&self) -> std::sync::MutexGuard<'_, MuxState> {
            self.state.lock().unwrap_or_else(|e| e.into_inner())
        }
        fn record(&self, s: String) {
            self.st().calls.push(s);
        }
        fn calls(&self) -> Vec<String> {
            self.st().calls.clone()
        }
        fn option(&self, target: &str, key: &str) -> Option<String> {
            self.st()
                .options
                .get(&(target.to_string(), key.to_string()))
                .cloned()
        }
        fn listing(&self) -> Vec<Pane> {
            let st = self.st();
            self.panes
                .iter()
                .filter_map(|p| {
                    let mut p = p.clone();
                    let opt = |k: &str| st.options.get(&(p.id.clone(), k.to_string())).cloned();
                    p.pill = opt(crate::ctx::PILL_OPTION).unwrap_or_default();
                    if st.respawns.iter().any(|r| r.pane == p.id) {
                        // The placeholder runs there now (no process of this world).
                        p.pid = 0;
                        p.current_command = "park".into();
                    } else if exited(self.native.as_ref(), p.pid) {
                        if opt("remain-on-exit").as_deref() != Some("on") {
                            return None;
                        }
                        p.dead = true;
                    }
                    Some(p)
                })
                .collect()
        }
    }

    /// `Ctx` owns its `Mux`; the test keeps reading the same fake.
    struct MuxRef(Arc<FakeMux>);

    impl Mux for MuxRef {
        fn kind(&self) -> &'static str {
            "tmux"
        }
        fn server_id(&self) -> Result<String, MuxError> {
            Ok(SERVER.into())
        }
        fn list_panes(&self) -> Result<Vec<Pane>, MuxError> {
            Ok(self.0.listing())
        }
        fn capture(&self, pane: &str, _escapes: bool) -> Result<String, MuxError> {
            if !self.0.listing().iter().any(|p| p.id == pane) {
                return Err(MuxError::Command(format!("can't find pane: {pane}")));
            }
            // At rest: empty composer, no turn in flight.
            let idle = include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/fixtures/claude/idle-after-2.txt"
            ));
            let mut st = self.0.st();
            if st.half_frames > 0 {
                st.half_frames -= 1;
                // The top of the frame drawn, the composer not yet.
                let lines: Vec<&str> = idle.lines().collect();
                return Ok(lines[..lines.len() / 3].join("\n"));
            }
            Ok(idle.to_string())
        }
        fn send_text(&self, pane: &str, text: &str) -> Result<(), MuxError> {
            self.0.record(format!("send-text {pane} {text}"));
            Ok(())
        }
        fn send_keys(&self, pane: &str, keys: &[&str]) -> Result<(), MuxError> {
            self.0
                .record(format!("send-keys {pane} {}", keys.join(" ")));
            Ok(())
        }
        fn leave_mode(&self, pane: &str) -> Result<(), MuxError> {
            self.0.record(format!("leave-mode {pane}"));
            Ok(())
        }
        fn set_pane_option(
            &self,
            pane: &str,
            key: &str,
            value: Option<&str>,
        ) -> Result<(), MuxError> {
            let mut st = self.0.st();
            st.calls
                .push(format!("pane-option {pane} {key}={}", value.unwrap_or("-")));
            let k = (pane.to_string(), key.to_string());
            match value {
                Some(v) => st.options.insert(k, v.to_string()),
                None => st.options.remove(&k),
            };
            Ok(())
        }
        fn pane_option(&self, pane: &str, key: &str) -> Result<Option<String>, MuxError> {
            Ok(self.0.option(pane, key))
        }
        fn set_global_option(&self, key: &str, value: Option<&str>) -> Result<(), MuxError> {
            self.0
                .record(format!("global-option {key}={}", value.unwrap_or("-")));
            Ok(())
        }
        fn window_option_all(
            &self,
            key: &str,
        ) -> Result<Vec<(String, String, u32, String)>, MuxError> {
            let v = self.0.option("@1", key).unwrap_or_default();
            Ok(vec![("@1".into(), "work".into(), 1, v)])
        }
        fn set_window_option(
            &self,
            window: &str,
            key: &str,
            value: Option<&str>,
        ) -> Result<(), MuxError> {
            let mut st = self.0.st();
            st.calls.push(format!(
                "window-option {window} {key}={}",
                value.unwrap_or("-")
            ));
            let k = (window.to_string(), key.to_string());
            match value {
                Some(v) => st.options.insert(k, v.to_string()),
                None => st.options.remove(&k),
            };
            Ok(())
        }
        fn set_title(&self, pane: &str, title: &str) -> Result<(), MuxError> {
            self.0.record(format!("title {pane} {title}"));
            Ok(())
        }
        fn respawn(
            &self,
            pane: &str,
            cwd: &str,
            env: &[(String, String)],
            argv: &[String],
        ) -> Result<(), MuxError> {
            let listed = self.0.listing().into_iter().find(|p| p.id == pane);
            let mut st = self.0.st();
            match listed {
                None => {
                    st.calls
                        .push(format!("respawn-failed {pane} (pane closed)"));
                    Err(MuxError::Command(format!("can't find pane: {pane}")))
                }
                Some(p) if !p.dead => {
                    st.calls
                        .push(format!("respawn-failed {pane} (still active)"));
                    Err(MuxError::Command(format!("pane {pane} still active")))
                }
                Some(_) => {
                    st.calls.push(format!("respawn {pane} {}", argv.join(" ")));
                    st.respawns.push(Respawn {
                        pane: pane.into(),
                        cwd: cwd.into(),
                        env: env.to_vec(),
                        argv: argv.to_vec(),
                    });
                    Ok(())
                }
            }
        }
        fn new_window(
            &self,
            _server: &str,
            _session: &str,
            _name: &str,
            _cwd: &str,
            _env: &[(String, String)],
            _argv: &[String],
        ) -> Result<String, MuxError> {
            self.0.record("new-window".into());
            Err(MuxError::Command("no new windows in this test".into()))
        }
        fn window_layout(
            &self,
            session: &str,
            window_index: u32,
        ) -> Result<(String, u32, u32), MuxError> {
            match (session, window_index) {
                ("work", 1) => Ok((LAYOUT.into(), 160, 48)),
                _ => Err(MuxError::Command(format!(
                    "can't find window: {session}:{window_index}"
                ))),
            }
        }
    }

    fn window(yes: bool, dry_run: bool) -> Request {
        Request {
            yes,
            dry_run,
            ..Request::named(&["work:1"])
        }
    }

    fn first_index(calls: &[String], prefix: &str) -> Option<usize> {
        calls.iter().position(|c| c.starts_with(prefix))
    }

    #[test]
    fn a_window_of_two_agents_parks_through_the_library() {
        let mut w = World::new();
        let mux = w.mux();
        let ctx = w.ctx(&mux);
        let ui = Scripted::default();
        let results = run(&ctx, &window(true, false), &ui).unwrap();
        let got: Vec<(&str, Option<&str>, Option<&str>, Outcome)> = results
            .iter()
            .map(|r| {
                (
                    r.target.as_str(),
                    r.pane.as_deref(),
                    r.session_id.as_deref(),
                    r.outcome,
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                ("work:1", Some("%1"), Some(SIDS[0]), Outcome::Parked),
                ("work:1", Some("%2"), Some(SIDS[1]), Outcome::Parked),
            ],
            "{results:#?}\nui: {:?}\nmux: {:#?}",
            ui.said.borrow(),
            mux.calls()
        );
        assert!(results.iter().all(|r| r.freed_bytes.is_some()));
        // The kill was real, and park's: both children are gone, ended by its SIGTERM. (A kill
        // returns once its processes are zombies, so no waiting is needed here.)
        let ended = w.ended();
        for (i, e) in ended.iter().enumerate() {
            let e = e.unwrap_or_else(|| panic!("agent {i} still runs"));
            assert_eq!(e.signal(), Some(libc::SIGTERM), "agent {i}: {e:?}");
        }

        // The ledger says how to bring each one back, where, and in one window group.
        let (mut entries, bad) = ctx.ledger.all();
        assert!(bad.is_empty(), "{bad:?}");
        entries.sort_by(|a, b| a.place.pane.cmp(&b.place.pane));
        assert_eq!(entries.len(), 2, "{entries:#?}");
        let cwd = w.cwd.to_string_lossy().into_owned();
        let cfg = w.cfg.to_string_lossy().into_owned();
        for (i, e) in entries.iter().enumerate() {
            let a = &w.agents[i];
            assert_eq!(e.state, EntryState::Parked);
            assert_eq!(
                (e.session_id.as_str(), e.session_source.as_str()),
                (a.sid, "status-file"),
                "identified by its status file, checked against the process start"
            );
            assert_eq!(e.cwd, cwd);
            assert_eq!(e.program, "claude");
            assert_eq!(e.config_dir.as_deref(), Some(cfg.as_str()));
            assert_eq!(
                (
                    e.place.server.as_str(),
                    e.place.pane.as_str(),
                    e.place.session.as_str(),
                    e.place.window_index,
                    e.place.pane_index
                ),
                (SERVER, a.pane, "work", 1, i as u32)
            );
            assert!(e.pane_owned, "the agent is the pane's own process");
            assert_eq!(e.killed_pids, vec![w.pid(i)]);
            assert_eq!(e.last_error, None);
            let t = e.transcript.as_deref().expect("transcript recorded");
            assert!(t.starts_with(&cfg) && t.ends_with(&format!("{}.jsonl", a.sid)));
        }
        assert_eq!(entries[0].flags, vec!["--model", "opus"], "flags replayed");
        assert!(entries[1].flags.is_empty(), "--resume is rebuilt, not kept");
        let gid = entries[0]
            .group
            .clone()
            .expect("a whole window parks as one group");
        assert_eq!(entries[1].group.as_ref(), Some(&gid));
        let (groups, gerr) = crate::store::group::load_all(&ctx.ledger.home);
        assert!(gerr.is_empty(), "{gerr:?}");
        assert_eq!(groups.len(), 1, "{groups:#?}");
        let g = &groups[0];
        assert_eq!(
            (
                g.id.as_str(),
                g.server.as_str(),
                g.session.as_str(),
                g.window_index,
                g.window_name.as_str(),
                g.layout.as_str(),
            ),
            (gid.as_str(), SERVER, "work", 1, "api", LAYOUT)
        );
        let slots: Vec<(&str, Option<&str>, &str)> = g
            .slots
            .iter()
            .map(|s| (s.pane.as_str(), s.session_id.as_deref(), s.cwd.as_str()))
            .collect();
        assert_eq!(
            slots,
            vec![
                ("%1", Some(SIDS[0]), cwd.as_str()),
                ("%2", Some(SIDS[1]), cwd.as_str())
            ]
        );

        // Each pane stayed open (remain-on-exit on before the kill, so tmux kept it, dead) and got
        // the placeholder that resumes on Enter, the pill and the pinned title; remain-on-exit
        // is back as it was.
        let calls = mux.calls();
        assert!(
            !calls.iter().any(|c| c.starts_with("respawn-failed")
                || c.starts_with("send-")
                || c.starts_with("new-window")),
            "{calls:#?}"
        );
        let respawns = mux.st().respawns.clone();
        assert_eq!(respawns.len(), 2, "{calls:#?}");
        for (i, e) in entries.iter().enumerate() {
            let pane = w.agents[i].pane;
            let on = first_index(&calls, &format!("pane-option {pane} remain-on-exit=on"));
            let respawn = first_index(&calls, &format!("respawn {pane} "));
            assert!(on.is_some() && on < respawn, "{calls:#?}");
            let r = respawns.iter().find(|r| r.pane == pane).unwrap();
            assert_eq!(r.argv, vec![EXE.to_string(), "hold".into(), e.id.clone()]);
            assert_eq!(r.cwd, cwd);
            let var = |k: &str| crate::adapters::platform::env_get(&r.env, k).map(str::to_string);
            assert_eq!(var("CLAUDE_CONFIG_DIR"), Some(cfg.clone()), "{r:?}");
            assert_eq!(
                var("PARK_HOME"),
                Some(ctx.ledger.home.to_string_lossy().into_owned())
            );
            assert_eq!(var("TMUX_PANE"), None, "the pane's own id is tmux's to set");
            assert_eq!(
                mux.option(pane, crate::ctx::PILL_OPTION),
                Some(park::pill_text(e)),
            );
            assert!(calls.contains(&format!(
                "title {pane} {}",
                crate::store::slot::pill_title(e)
            )));
            assert_eq!(mux.option(pane, "remain-on-exit"), None);
        }
        // The status line and the window badge count both (whichever park published last, one
        // of them saw both entries).
        assert!(
            calls
                .iter()
                .any(|c| c.starts_with("global-option @park_status=❄ 2 · ")),
            "{calls:#?}"
        );
        assert!(
            calls.contains(&"window-option @1 @park_parked=2".to_string()),
            "{calls:#?}"
        );
        // Nobody was asked anything (`yes`); the window's summary was said.
        assert!(ui.asked.borrow().is_empty());
        assert!(
            ui.said
                .borrow()
                .iter()
                .any(|l| l.starts_with("window work:1: agents ")),
            "{:?}",
            ui.said.borrow()
        );
    }

    #[test]
    fn an_unconfirmed_window_is_refused_and_a_dry_run_kills_nothing() {
        let mut w = World::new();
        let mux = w.mux();
        let ctx = w.ctx(&mux);
        let nothing_done = |w: &mut World, what: &str| {
            assert_eq!(w.ended(), [None, None], "{what}: nothing was killed");
            assert!(ctx.ledger.all().0.is_empty(), "{what}: nothing recorded");
            assert!(
                crate::store::group::load_all(&ctx.ledger.home).0.is_empty(),
                "{what}: no group recorded"
            );
            // A park wave, even a dry one, re-publishes the status (from the unchanged ledger:
            // nothing parked); nothing else may reach the multiplexer.
            let calls = mux.calls();
            assert!(
                calls.iter().all(|c| c == "global-option @park_status=-"),
                "{what}: no pane touched: {calls:#?}"
            );
        };

        // On a terminal, a window of several agents is asked about; a no parks nothing.
        let ui = Scripted {
            terminal: true,
            answer: false,
            ..Default::default()
        };
        let results = run(&ctx, &window(false, false), &ui).unwrap();
        assert_eq!(results.len(), 1, "{results:#?}");
        assert_eq!(
            (
                results[0].target.as_str(),
                results[0].outcome,
                results[0].reason.as_deref()
            ),
            ("work:1", Outcome::Refused, Some("not confirmed"))
        );
        let asked = ui.asked.borrow().clone();
        assert_eq!(asked.len(), 1, "{asked:?}");
        assert!(
            asked[0].starts_with("park 2 agents in work:1 (frees ~") && asked[0].ends_with(")?"),
            "{asked:?}"
        );
        nothing_done(&mut w, "not confirmed");

        // A dry run asks nothing and says what it would do.
        let ui = Scripted {
            terminal: true,
            answer: false,
            ..Default::default()
        };
        let dry = run(&ctx, &window(false, true), &ui).unwrap();
        let got: Vec<(Option<&str>, Outcome)> =
            dry.iter().map(|r| (r.pane.as_deref(), r.outcome)).collect();
        assert_eq!(
            got,
            vec![
                (Some("%1"), Outcome::WouldPark),
                (Some("%2"), Outcome::WouldPark)
            ],
            "{dry:#?}"
        );
        assert!(ui.asked.borrow().is_empty());
        // The window's summary counts what the dry run would free, not 0B.
        let would: u64 = dry.iter().filter_map(|r| r.freed_bytes).sum();
        assert!(would > 0, "{dry:#?}");
        let said = ui.said.borrow().clone();
        let want = format!(
            "window work:1 would free: agents {}, servers 0B (0), total {}",
            human_bytes(would),
            human_bytes(would)
        );
        assert!(said.contains(&want), "{said:#?} (want {want:?})");
        nothing_done(&mut w, "dry run");
    }

    /// The fake platform is only as good as what it hides: no process of the machine but the
    /// test's children is in its table, and none shows an environment once it has exited.
    /// A capture that caught the agent's frame half drawn (no composer yet) is taken again before
    /// it counts: read once, it was "state unknown" and the park refused for nothing (seen with
    /// OpenCode, which redraws its whole frame).
    #[test]
    fn a_half_drawn_frame_is_read_again_before_a_park_is_refused() {
        let mut w = World::new();
        let mux = w.mux();
        mux.st().half_frames = 2;
        let ctx = w.ctx(&mux);
        let results = run(&ctx, &window(true, false), &Scripted::default()).unwrap();
        let got: Vec<Outcome> = results.iter().map(|r| r.outcome).collect();
        assert_eq!(got, [Outcome::Parked, Outcome::Parked], "{results:#?}");
        assert_eq!(mux.st().half_frames, 0, "the half frames were read");
        let _ = w.ended();
    }

    #[test]
    fn the_fake_world_holds_only_the_test_children() {
        let w = World::new();
        let mux = w.mux();
        let ctx = w.ctx(&mux);
        let pids: Vec<u32> = ctx
            .platform
            .processes()
            .unwrap()
            .iter()
            .map(|p| p.pid)
            .collect();
        assert_eq!(pids, vec![w.pid(0), w.pid(1)]);
        assert!(ctx.platform.process(std::process::id()).is_none());
        assert!(ctx.platform.environ(std::process::id()).is_none());
        let s = ctx.scan(true).unwrap();
        let found: Vec<(Option<&str>, &str, Option<&str>)> = s
            .found
            .iter()
            .map(|f| {
                (
                    f.pane.as_ref().map(|p| p.id.as_str()),
                    f.bind,
                    f.ident.session_id.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            found,
            vec![
                (Some("%1"), "env", Some(SIDS[0])),
                (Some("%2"), "env", Some(SIDS[1]))
            ]
        );
        assert!(Path::new(EXE).parent().is_some_and(|d| !d.exists()));
    }
}
