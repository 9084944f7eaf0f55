//! The outside half of an unpark: [`send_resume`] finds the entry's slot under the session and
//! pane locks (re-pointed when the multiplexer renumbered its panes, revived when zellij holds it)
//! and hands the resume to it — Enter in a placeholder, `park unpark <entry>` typed at a confirmed
//! bare prompt, or a new window when no pane can be shown to be the slot — then [`finish`] waits
//! for the verifier's word.

use super::*;
/// Unparks from outside the pane: hand the resume to the pane, then wait for the verifier's word.
pub(crate) fn unpark_remote(
    ctx: &Ctx,
    batch_scan: &Scan,
    batch_live: &LiveSet,
    eid: &str,
    target: &str,
    dry_run: bool,
    new_pane: bool,
) -> ActionResult {
    match send_resume(ctx, batch_scan, batch_live, eid, target, dry_run, new_pane) {
        Sent::Done(r) => r,
        Sent::Started(p) => finish(ctx, &p),
    }
}

/// A resume handed to its pane (the agent is starting) whose verdict is still to be awaited.
pub struct Started {
    entry: Entry,
    target: String,
    restored: Option<String>,
    /// The parked pane was gone (or holds something else) and the resume went to a new window:
    /// where, to say so.
    opened: Option<String>,
}

pub enum Sent {
    /// Refused, failed or dry run: nothing was started.
    Done(ActionResult),
    Started(Box<Started>),
}

/// Waits for the verifier's verdict on a resume `send_resume` started.
pub fn finish(ctx: &Ctx, p: &Started) -> ActionResult {
    let mut r = wait_for_verdict(ctx, &p.entry, &p.target);
    if r.outcome == Outcome::Unparked {
        let said: Vec<String> = [p.opened.clone(), p.restored.clone().or(r.reason.take())]
            .into_iter()
            .flatten()
            .collect();
        r.reason = (!said.is_empty()).then(|| said.join("; "));
    }
    r
}

/// The first half of `unpark_remote`: every check under the session and pane locks, then the
/// resume typed (or the placeholder's Enter, or a new window) and the locks released. A wave sends
/// these one after another, spaced, and awaits the verdicts together.
pub(crate) fn send_resume(
    ctx: &Ctx,
    // The batch's scan and live set are not trusted here: both are taken again under the locks.
    _batch_scan: &Scan,
    _batch_live: &LiveSet,
    eid: &str,
    target: &str,
    dry_run: bool,
    // A slot another agent runs in now is left to it and the session resumes in a new pane of
    // the slot's tab; without it that is a refusal naming the way.
    new_pane: bool,
) -> Sent {
    use Sent::Done;
    let key = match ctx.ledger.load(eid) {
        Ok(Some(e)) => e,
        Ok(None) => {
            return Done(ActionResult::new(
                target,
                Outcome::NotParked,
                Some("no parked entry".into()),
            ))
        }
        Err(err) => {
            return Done(ActionResult::new(
                target,
                Outcome::Refused,
                Some(err.to_string()),
            ))
        }
    };
    let session_lock = match acquire_retry(ctx, &session_lock_key(&key.session_id), Duration::ZERO)
    {
        Ok(l) => l,
        Err(why) => return Done(res(target, &key, Outcome::Refused, Some(why))),
    };
    let pane_lock = match acquire_retry(
        ctx,
        &pane_lock_key(&key.place.server, &key.place.pane),
        Duration::ZERO,
    ) {
        Ok(l) => l,
        Err(why) => return Done(res(target, &key, Outcome::Refused, Some(why))),
    };
    // Judge "already running" on what runs now, under the locks: a park that finished between
    // the batch's scan and these locks has killed the agent the old scan saw, and its entry is
    // the only record of the session left.
    let fresh = match scan::scan(ctx.platform.as_ref(), ctx.mux.as_ref(), false) {
        Ok(f) => f,
        Err(err) => {
            return Done(res(
                target,
                &key,
                Outcome::Refused,
                Some(format!("process scan failed: {err}")),
            ))
        }
    };
    let s = &fresh;
    let live = &LiveSet::from_scan(s);
    let (mut e, restored) = match gate(ctx, eid, target, live, None) {
        Gate::Go(e, note) => (*e, note),
        Gate::Done(r) => return Done(r),
    };
    if !ctx.mux.serves(&e.place.server) {
        let hint = if crate::adapters::mux::is_zellij_server(&e.place.server) {
            "set ZELLIJ_SOCKET_DIR"
        } else {
            "set PARK_TMUX_SOCKET"
        };
        return Done(res(
            target,
            &e,
            Outcome::Refused,
            Some(format!(
                "this session was parked on {}, not a server park talks to now (tmux: {}); {hint}",
                e.place.server,
                s.server.as_deref().unwrap_or("none")
            )),
        ));
    }
    if let Some(err) = &s.pane_error {
        return Done(res(
            target,
            &e,
            Outcome::Refused,
            Some(format!("pane map unavailable: {err}")),
        ));
    }
    // A pane with the recorded handle but no pill, no placeholder and not the entry's mark is
    // another pane (tmux reuses `%N` after a server restart; zellij renumbers every pane when it
    // resurrects a session): never type into it. The slot is found by its mark instead, or the
    // session gets a window of its own.
    let recorded = s.panes.iter().find(|p| p.id == e.place.pane).cloned();
    let mut _moved_lock = None;
    let pane = if recorded.is_some() && crate::support::fault::disabled("pane-is-ours") {
        recorded
    } else {
        let (all, _) = ctx.ledger.all();
        match locate(ctx, &e, &s.panes, &all) {
            Slot::Here(p) => Some(p),
            Slot::Moved(p) => {
                match acquire_retry(ctx, &pane_lock_key(&p.server, &p.id), Duration::ZERO) {
                    Ok(l) => _moved_lock = Some(l),
                    Err(why) => return Done(res(target, &e, Outcome::Refused, Some(why))),
                }
                repoint_in_memory(&mut e, &p);
                Some(p)
            }
            Slot::Missing(_) => None,
        }
    };
    // Another agent runs in the slot now (a fresh one started there: Enter at a resurrected
    // zellij pane's "Waiting to run"). Never typed into; this session is untouched. With
    // `--new-pane` the slot is left to that one and the session resumes in a new pane of its
    // tab, the slot's ❄ mark taken off; without it, the refusal names both ways forward.
    let taken = pane.as_ref().and_then(|p| {
        s.found
            .iter()
            .find(|f| f.pane.as_ref().is_some_and(|fp| fp.id == p.id))
            .map(|f| (p.clone(), f))
    });
    let mut left_to: Option<String> = None;
    let pane = match taken {
        Some((p, f)) if !new_pane => {
            return Done(res(
                target,
                &e,
                Outcome::Refused,
                Some(format!(
                    "pane {} is running another {} (pid {}, session {}); never typing into it. This session is untouched: `park unpark {} --new-pane` resumes it in a new pane of tab `{}`, or `park park {}` parks that one first",
                    p.id,
                    f.proc.agent.as_str(),
                    f.proc.main,
                    f.ident.session_id.as_deref().unwrap_or("unknown"),
                    e.id,
                    e.place.window_name,
                    p.id,
                )),
            ));
        }
        Some((p, _)) => {
            left_to = Some(p.id);
            None
        }
        None => pane,
    };
    if dry_run {
        let line = resume_command_line(&e);
        return Done(res(
            target,
            &e,
            Outcome::WouldUnpark,
            Some(match &left_to {
                Some(p) => format!(
                    "in a new pane of tab `{}` (pane {p} runs another agent): {line}",
                    e.place.window_name
                ),
                None => line,
            }),
        ));
    }
    if let Some(slot) = &left_to {
        // Its mark and pill go: the pane is the other agent's now.
        let mut old = e.clone();
        old.place.pane = slot.clone();
        teardown(ctx, &old);
    }
    enum How {
        Enter,
        Type(String),
        NewWindow,
    }
    // A held zellij slot (its command exited, or a resurrected pane waiting to run it): turned
    // into a shell in place first — Enter there would start what it holds, a fresh agent.
    let pane = match pane {
        Some(p) if p.dead && crate::adapters::mux::is_zellij_server(&p.server) => {
            match revive_slot(ctx, &p) {
                Ok(p) => {
                    e.pane_owned = false;
                    Some(p)
                }
                Err(why) => {
                    return Done(res(
                        target,
                        &e,
                        Outcome::Refused,
                        Some(format!("pane {} is held: {why}", p.id)),
                    ))
                }
            }
        }
        other => other,
    };
    // Keys sent to a pane in copy mode (or showing a run-shell result) go to the mode.
    if let Some(p) = pane.as_ref().filter(|p| p.in_mode) {
        let _ = ctx.mux.leave_mode(&p.id);
    }
    let how = match &pane {
        Some(p) if is_placeholder(ctx, p.pid, &e.id) => How::Enter,
        Some(p) => {
            let screen = ctx.mux.capture(&p.id, false).unwrap_or_default();
            let typed = ctx.typed_name(p.pid);
            // Our own line: the prefill park left, or the hand-off an unpark typed and was
            // killed before its Enter (a retry must not be refused by its own leftover).
            let last = last_line(&screen);
            let last = last.trim_end();
            let prefilled = crate::ops::park::is_our_prefill(last, &typed, &e.id);
            if prefilled
                || shell_prompt_ready(ctx, p)
                || crate::ops::park::repair_shell_screen(ctx, p)
            {
                if prefilled {
                    // Our own prefill: clear it rather than append to it.
                    let _ = ctx.mux.send_keys(&p.id, &["C-e", "C-u"]);
                }
                How::Type(format!("{typed} unpark {}", e.id))
            } else {
                return Done(res(
                    target,
                    &e,
                    Outcome::Refused,
                    Some(format!(
                        "pane {} is not at a bare shell prompt (running {}); not typing into it",
                        p.id, p.current_command
                    )),
                ));
            }
        }
        None => How::NewWindow,
    };
    point("before-resume-sent");
    let me = std::process::id();
    e.state = EntryState::Resuming;
    e.resumer = Some((
        me,
        ctx.platform.process(me).map(|p| p.start_ticks).unwrap_or(0),
    ));
    e.handoff_pane = Some(e.place.pane.clone());
    let mut opened = None;
    let delivered = match how {
        How::Enter => ctx
            .ledger
            .save(&e)
            .map_err(|x| x.to_string())
            .and_then(|_| {
                ctx.mux
                    .send_keys(&e.place.pane, &["Enter"])
                    .map_err(|x| x.to_string())
            }),
        How::Type(cmd) => ctx
            .ledger
            .save(&e)
            .map_err(|x| x.to_string())
            .and_then(|_| {
                ctx.mux
                    .send_text(&e.place.pane, &cmd)
                    .and_then(|_| ctx.mux.send_keys(&e.place.pane, &["Enter"]))
                    .map_err(|x| x.to_string())
            }),
        How::NewWindow => {
            let argv = vec![
                ctx.exe.to_string_lossy().into_owned(),
                "hold".into(),
                e.id.clone(),
                "--now".into(),
            ];
            match ctx.mux.new_window(
                &e.place.server.clone(),
                &e.place.session.clone(),
                &e.place.window_name.clone(),
                &e.cwd.clone(),
                &ctx.park_env(),
                &argv,
            ) {
                Ok(new_pane) => {
                    let at = ctx
                        .mux
                        .list_panes()
                        .ok()
                        .and_then(|ps| ps.into_iter().find(|p| p.id == new_pane))
                        .map(|p| format!("{}:{} ({})", p.session, p.window_index, p.window_name))
                        .unwrap_or_else(|| e.place.session.clone());
                    // A pane with its id may still be there, holding something else (a fresh
                    // agent parked in its slot, or a pane that reuses its id): not "gone".
                    let was = if left_to.is_some() {
                        "runs another agent"
                    } else if s.panes.iter().any(|p| p.id == e.place.pane) {
                        "holds something else now"
                    } else {
                        "was gone"
                    };
                    opened = Some(format!(
                        "its pane {} {was}: resumed in a new {} {new_pane} of {at}",
                        e.place.pane,
                        if crate::adapters::mux::is_zellij_server(&e.place.server) {
                            "pane"
                        } else {
                            "window"
                        }
                    ));
                    e.handoff_pane = Some(new_pane.clone());
                    e.place.pane = new_pane;
                    ctx.ledger.save(&e).map_err(|x| x.to_string())
                }
                Err(x) => Err(x.to_string()),
            }
        }
    };
    if let Err(why) = delivered {
        e.state = EntryState::Parked;
        e.resumer = None;
        e.handoff_pane = None;
        let _ = ctx.ledger.save(&e);
        return Done(res(
            target,
            &e,
            Outcome::Failed,
            Some(format!("could not reach the pane: {why}")),
        ));
    }
    point("after-resume-sent");
    drop(pane_lock);
    drop(session_lock);
    Sent::Started(Box::new(Started {
        entry: e,
        target: target.to_string(),
        restored,
        opened,
    }))
}

/// Turns a held pane into a shell ([`crate::adapters::mux::Mux::revive`]) and waits for its prompt;
/// the pane as listed then.
fn revive_slot(ctx: &Ctx, p: &Pane) -> Result<Pane, String> {
    ctx.mux.revive(&p.id).map_err(|e| e.to_string())?;
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(10) {
        if let Some(now) = ctx
            .mux
            .list_panes()
            .ok()
            .and_then(|ps| ps.into_iter().find(|x| x.id == p.id))
        {
            if !now.dead && shell_prompt_ready(ctx, &now) {
                return Ok(now);
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Err("its shell never showed a prompt".into())
}

fn last_line(screen: &str) -> &str {
    screen
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
}

fn wait_for_verdict(ctx: &Ctx, sent: &Entry, target: &str) -> ActionResult {
    let t0 = Instant::now();
    loop {
        match ctx.ledger.load(&sent.id) {
            Ok(None) => return res(target, sent, Outcome::Unparked, None),
            Ok(Some(cur)) => {
                if cur.state == EntryState::Parked {
                    return res(
                        target,
                        sent,
                        Outcome::Failed,
                        cur.last_error.or(Some("the resume did not start".into())),
                    );
                }
                let handed_off_only = cur.resumer.map(|r| r.0) == Some(std::process::id());
                // The pane's verifier took over and died (crash, kill): nobody will finish this
                // resume. Say so now rather than wait out the timeout; the next unpark sees
                // whether the agent runs (already-running) or resumes it.
                if !handed_off_only && cur.resumer.is_some() && !resumer_alive(ctx, &cur) {
                    return res(
                        target,
                        sent,
                        Outcome::Failed,
                        Some(format!(
                            "the verifier of this resume died; run `park unpark {}` again to finish or retry",
                            sent.id
                        )),
                    );
                }
                if t0.elapsed() > HANDOFF_TIMEOUT
                    || (handed_off_only && t0.elapsed() > Duration::from_secs(20))
                {
                    if handed_off_only {
                        let mut back = cur.clone();
                        back.state = EntryState::Parked;
                        back.resumer = None;
                        back.handoff_pane = None;
                        back.last_error = Some("the pane did not run the resume command".into());
                        let _ = ctx.ledger.save(&back);
                        return res(target, sent, Outcome::Failed, back.last_error);
                    }
                    return res(
                        target,
                        sent,
                        Outcome::Failed,
                        Some("timed out waiting for the agent to confirm its session".into()),
                    );
                }
            }
            Err(err) => return res(target, sent, Outcome::Failed, Some(err.to_string())),
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}
