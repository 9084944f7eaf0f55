//! The in-pane half of an unpark: `park unpark <entry>` run inside the entry's pane (typed there
//! by a hand-off, or by the user) re-checks everything under the locks, marks the entry
//! `resuming`, starts a detached verifier and execs the agent (cwd first, whitelisted flags, no
//! shell). The verifier ([`verify`]) removes the entry only once the agent runs with that session
//! id; a failed start gives the entry back (and a placeholder pane its placeholder).

use super::*;
/// Runs inside the entry's pane: exec the agent in the recorded cwd. Returns only on failure.
pub fn exec_in_pane(ctx: &Ctx, eid: &str, target: &str) -> ActionResult {
    let r = exec_in_pane_inner(ctx, eid, target);
    // A hand-off that this pane cannot complete: give the entry back at once, with the reason, so
    // the sender reports it instead of waiting for a resume that will not come.
    if let (Ok(Some(mut e)), Ok(me)) = (
        ctx.ledger.load(eid),
        crate::adapters::mux::here(ctx.platform.as_ref())
            .map(|h| h.pane)
            .ok_or(()),
    ) {
        if e.state == EntryState::Resuming && e.handoff_pane.as_deref() == Some(me.as_str()) {
            e.state = EntryState::Parked;
            e.resumer = None;
            e.handoff_pane = None;
            e.last_error = Some(format!(
                "{}: {}",
                r.outcome,
                r.reason.clone().unwrap_or_default()
            ));
            let _ = ctx.ledger.save(&e);
        }
    }
    r
}

fn exec_in_pane_inner(ctx: &Ctx, eid: &str, target: &str) -> ActionResult {
    let my_pane = crate::adapters::mux::here(ctx.platform.as_ref()).map(|h| h.pane);
    // A hand-off's sender may still hold the locks for a moment.
    let session_key = match ctx.ledger.load(eid) {
        Ok(Some(e)) => session_lock_key(&e.session_id),
        _ => {
            return ActionResult::new(
                target,
                Outcome::NotParked,
                Some(format!("no parked entry {eid}")),
            )
        }
    };
    let session_lock = match acquire_retry(ctx, &session_key, Duration::from_secs(5)) {
        Ok(l) => l,
        Err(e) => return ActionResult::new(target, Outcome::Refused, Some(e)),
    };
    let s = match scan::scan(ctx.platform.as_ref(), ctx.mux.as_ref(), false) {
        Ok(s) => s,
        Err(e) => {
            return ActionResult::new(
                target,
                Outcome::Refused,
                Some(format!("process scan failed: {e}")),
            )
        }
    };
    let live = LiveSet::from_scan(&s);
    let mut e = match gate(ctx, eid, target, &live, my_pane.as_deref()) {
        Gate::Go(e, note) => {
            if let Some(n) = note {
                eprintln!("park: {n}");
            }
            *e
        }
        Gate::Done(r) => return r,
    };
    let pane_lock = if my_pane.as_deref() == Some(e.place.pane.as_str()) {
        acquire_retry(
            ctx,
            &pane_lock_key(&e.place.server, &e.place.pane),
            Duration::from_secs(5),
        )
        .ok()
    } else {
        None
    };
    if let Err(err) = std::env::set_current_dir(&e.cwd) {
        return res(
            target,
            &e,
            Outcome::Refused,
            Some(format!("cannot enter {}: {err}", e.cwd)),
        );
    }
    let argv = resume_argv(&e);
    if argv.is_empty() {
        return res(
            target,
            &e,
            Outcome::Refused,
            Some("nothing to resume: invalid session id".into()),
        );
    }
    // The pane may have moved (pane gone → new window): record where the session now lives.
    if let Some(p) = my_pane.as_deref() {
        if ctx.mux.serves(&e.place.server) {
            if let Some(pane) = s
                .panes
                .iter()
                .find(|x| x.id == p && x.server == e.place.server)
            {
                e.place.pane = pane.id.clone();
                e.place.session = pane.session.clone();
                e.place.window_index = pane.window_index;
                e.place.window_name = pane.window_name.clone();
                e.place.pane_index = pane.pane_index;
            }
        }
    }
    let me = std::process::id();
    let my_start = ctx.platform.process(me).map(|p| p.start_ticks).unwrap_or(0);
    let verifier = match spawn_verifier(ctx, &e.id, me, my_start, &session_lock, pane_lock.as_ref())
    {
        Ok(v) => v,
        Err(err) => {
            return res(
                target,
                &e,
                Outcome::Refused,
                Some(format!("cannot start the verifier: {err}")),
            )
        }
    };
    e.state = EntryState::Resuming;
    e.resumer = Some(verifier);
    e.handoff_pane = None;
    if let Err(err) = ctx.ledger.save(&e) {
        return res(
            target,
            &e,
            Outcome::Refused,
            Some(format!("cannot update the ledger: {err}")),
        );
    }
    // The agent becomes the pane's own process: if it dies at once, keep the pane (the verifier
    // puts the placeholder back) instead of letting tmux close it.
    let keep_pane = e.pane_owned && my_pane.as_deref() == Some(e.place.pane.as_str());
    if keep_pane {
        let _ = ctx
            .mux
            .set_pane_option(&e.place.pane, "remain-on-exit", Some("on"));
    }
    point("before-exec");
    let err = exec(&argv, &config_env(&e));
    // exec failed: put the entry back; the verifier will also see us not become the agent.
    e.state = EntryState::Parked;
    e.resumer = None;
    e.last_error = Some(format!("could not start {}: {err}", argv[0]));
    let _ = ctx.ledger.save(&e);
    res(target, &e, Outcome::Failed, e.last_error.clone())
}

fn exec(argv: &[String], env: &[(String, String)]) -> std::io::Error {
    use std::os::unix::process::CommandExt;
    std::process::Command::new(&argv[0])
        .args(&argv[1..])
        .envs(env.iter().cloned())
        .exec()
}

/// The config-dir variable that makes the agent look where the session lives, when the pane's
/// environment would point it elsewhere (a new window, a shell without `CLAUDE_CONFIG_DIR`).
pub fn config_env(e: &Entry) -> Vec<(String, String)> {
    let Some(dir) = e.config_dir.as_deref() else {
        return vec![];
    };
    let here: Vec<(String, String)> = std::env::vars().collect();
    let kind = crate::agents::of(e.agent);
    let config = &kind.spec().config;
    let (var, now) = (config.var, config.dir(&here));
    if now.as_deref() == Some(Path::new(dir)) {
        return vec![];
    }
    match e.config_var.as_deref() {
        // Claude keeps `.claude.json` beside `~/.claude` by default but inside a CLAUDE_CONFIG_DIR:
        // restore the variable the agent really used.
        Some("HOME") => Path::new(dir)
            .parent()
            .map(|h| vec![("HOME".to_string(), h.to_string_lossy().into_owned())])
            .unwrap_or_default(),
        _ => config
            .var_value(Path::new(dir))
            .map(|v| vec![(var.to_string(), v.to_string_lossy().into_owned())])
            .unwrap_or_default(),
    }
}

/// Starts the detached verifier; it inherits the locks (fds 3 and 4) so they outlive our exec.
fn spawn_verifier(
    ctx: &Ctx,
    eid: &str,
    pid: u32,
    start: u64,
    l1: &Lock,
    l2: Option<&Lock>,
) -> std::io::Result<(u32, u64)> {
    use std::os::fd::AsRawFd;
    use std::os::unix::process::CommandExt;
    let fd1 = l1.file.as_raw_fd();
    let fd2 = l2.map(|l| l.file.as_raw_fd()).unwrap_or(-1);
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(ctx.ledger.home.join("verify.log"))
        .ok();
    let mut cmd = std::process::Command::new(&ctx.exe);
    cmd.args([
        "__verify",
        eid,
        "--pid",
        &pid.to_string(),
        "--start",
        &start.to_string(),
    ])
    .stdin(std::process::Stdio::null())
    .stdout(std::process::Stdio::null());
    match log {
        Some(f) => cmd.stderr(f),
        None => cmd.stderr(std::process::Stdio::null()),
    };
    // SAFETY: only async-signal-safe calls (setsid, dup2) between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            libc::setsid();
            if libc::dup2(fd1, 3) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            if fd2 >= 0 && libc::dup2(fd2, 4) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = cmd.spawn()?;
    let vpid = child.id();
    let vstart = ctx
        .platform
        .process(vpid)
        .map(|p| p.start_ticks)
        .unwrap_or(0);
    Ok((vpid, vstart))
}

/// `park __verify`: wait until `pid` is the agent running the entry's session, then clear the entry.
pub fn verify(ctx: &Ctx, eid: &str, pid: u32, start: u64) -> Result<(), String> {
    let Ok(Some(e)) = ctx.ledger.load(eid) else {
        return Err(format!("entry {eid} vanished"));
    };
    let t0 = Instant::now();
    let kind = crate::agents::of(e.agent);
    let mut seen: Option<Instant> = None;
    let outcome = loop {
        if t0.elapsed() > VERIFY_TIMEOUT {
            break Err(format!(
                "the agent did not show session {} within {}s",
                e.session_id,
                VERIFY_TIMEOUT.as_secs()
            ));
        }
        if !crate::ops::kill::alive(ctx.platform.as_ref(), pid, start) {
            break Err("the agent exited before it confirmed the session".to_string());
        }
        let running = kind.runs_session(&e, pid, start, ctx.platform.as_ref());
        // Without a status file a start is an agent that stays up with the id for a while.
        let started = match (running, seen) {
            (true, None) => {
                seen = Some(Instant::now());
                kind.spec().settle.is_zero()
            }
            (true, Some(t)) => t.elapsed() >= kind.spec().settle,
            (false, _) => {
                seen = None;
                false
            }
        };
        if started {
            break Ok(());
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    point("after-verify");
    match outcome {
        Ok(()) => {
            // The pane loses its pill and mark before the entry goes: whoever finds no entry
            // (`park ls`, a script, the contract test that caught the other order) finds a clean
            // pane too. A stop in between leaves a `resuming` entry whose session runs, which the
            // next unpark or prune closes.
            point("before-teardown");
            teardown(ctx, &e);
            let _ = ctx.ledger.remove(&e.id);
            if e.pane_owned {
                let _ = ctx
                    .mux
                    .set_pane_option(&e.place.pane, "remain-on-exit", None);
            }
            ctx.publish_status();
            // What the agent's resume leaves behind that would cost the session later (Gemini's
            // orphan stub), cleaned by this detached verifier once the session is back.
            if let Some(note) = kind.after_resume(&e) {
                eprintln!("park verify {}: {note}", e.id);
            }
            Ok(())
        }
        Err(why) => {
            if let Ok(Some(mut cur)) = ctx.ledger.load(eid) {
                cur.state = EntryState::Parked;
                cur.resumer = None;
                cur.last_error = Some(why.clone());
                let _ = ctx.ledger.save(&cur);
                if cur.pane_owned {
                    restore_placeholder(ctx, &cur);
                }
            }
            Err(why)
        }
    }
}

/// A resume in a placeholder pane failed and the pane is dead (kept by remain-on-exit): put the
/// placeholder back, with this process's environment (the placeholder's, i.e. the agent's).
fn restore_placeholder(ctx: &Ctx, e: &Entry) {
    let dead = (0..40).any(|_| {
        let d = ctx
            .mux
            .list_panes()
            .ok()
            .and_then(|ps| ps.into_iter().find(|p| p.id == e.place.pane))
            .is_some_and(|p| p.dead);
        if !d {
            std::thread::sleep(Duration::from_millis(50));
        }
        d
    });
    if !dead {
        return;
    }
    let here: Vec<(String, String)> = std::env::vars().collect();
    let mut env = crate::ops::park::placeholder_env(&here);
    env.retain(|(k, _)| k != "PARK_HOME" && k != "PARK_TMUX_SOCKET");
    env.extend(ctx.park_env());
    let argv = vec![
        ctx.exe.to_string_lossy().into_owned(),
        "hold".into(),
        e.id.clone(),
    ];
    if ctx.mux.respawn(&e.place.pane, &e.cwd, &env, &argv).is_ok() {
        let _ = ctx
            .mux
            .set_pane_option(&e.place.pane, "remain-on-exit", None);
    }
}
