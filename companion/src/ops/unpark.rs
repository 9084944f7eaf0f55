//! `park unpark`: bring a parked session back, exactly once (README "What happens on `park unpark`").
//!
//! Contract: one live set per batch; a session that is already running is never started again —
//! its parked state is torn down and the result is `already-running`. The resume always happens
//! *inside the pane*: `park unpark` run in the pane execs the agent (cwd first, whitelisted flags,
//! no shell); from elsewhere park hands off by typing `park unpark <entry>` at a confirmed bare shell
//! prompt, pressing Enter in the placeholder, or opening a window when the pane is gone. A detached
//! verifier confirms the agent started with that id before the entry is removed; until then the
//! entry stays, so a failed start loses nothing. Whether an unpark may go ahead is decided by
//! `guards::unpark` over the evidence `gate` gathers under the locks; this module carries it out.

use crate::adapters::mux::Pane;
use crate::agents::{expected_transcript, resume_argv, resume_command_line};
use crate::ctx::{Ctx, PILL_OPTION};
use crate::guards::unpark::{self as unpark_rules, OnDisk, Verdict};
use crate::model::entry::{Entry, EntryState};
use crate::ops::park::{pane_lock_key, session_lock_key, shell_prompt_ready};
pub use crate::rows::slots::{as_placed, is_placeholder, placed_for};
use crate::rows::slots::{locate, repoint_in_memory};
use crate::scan::live::LiveSet;
use crate::scan::{self, Scan};
use crate::store::lock::{self, Lock, TryLock};
use crate::store::slot::Slot;
use crate::support::fault::point;
use park_protocol::ActionResult;
use park_protocol::Outcome;
use std::path::Path;
use std::time::{Duration, Instant};

/// How long a remote unpark waits for the pane to confirm the agent started.
pub(crate) const HANDOFF_TIMEOUT: Duration = Duration::from_secs(60);
/// How long the verifier waits for the agent to show its session.
pub(crate) const VERIFY_TIMEOUT: Duration = Duration::from_secs(45);

fn res(target: &str, e: &Entry, outcome: Outcome, reason: Option<String>) -> ActionResult {
    ActionResult {
        target: target.into(),
        pane: Some(e.place.pane.clone()),
        session_id: Some(e.session_id.clone()),
        outcome,
        reason,
        freed_bytes: None,
    }
}

fn acquire_retry(ctx: &Ctx, key: &str, wait: Duration) -> Result<Lock, String> {
    let t0 = Instant::now();
    loop {
        match lock::try_lock(&ctx.ledger.home, key) {
            Ok(TryLock::Acquired(l)) => return Ok(l),
            Ok(TryLock::Held(owner)) if t0.elapsed() >= wait => {
                return Err(format!(
                    "another park/unpark (pid {owner}) is working on this right now"
                ))
            }
            Ok(TryLock::Held(_)) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => return Err(e.to_string()),
        }
    }
}

/// What the disk says of `e` now, for the unpark rules.
pub(crate) fn on_disk(e: &Entry) -> OnDisk {
    OnDisk {
        cwd_present: Path::new(&e.cwd).is_dir(),
        transcript: expected_transcript(e).map(|t| {
            let ok = t.is_file();
            (t, ok)
        }),
    }
}

/// Whether `e` can be resumed as recorded now (`guards::unpark::restorable` over the disk).
pub fn restorable(e: &Entry) -> Result<(), String> {
    crate::guards::unpark::restorable(e, &on_disk(e))
}

pub fn resumer_alive(ctx: &Ctx, e: &Entry) -> bool {
    e.resumer
        .is_some_and(|(pid, start)| crate::ops::kill::alive(ctx.platform.as_ref(), pid, start))
}

/// Clears what park put on the pane.
pub fn teardown(ctx: &Ctx, e: &Entry) {
    if ctx.mux.serves(&e.place.server) {
        let _ = ctx.mux.set_pane_option(&e.place.pane, PILL_OPTION, None);
        let title = if e.place.pane_title.is_empty() {
            &e.place.title
        } else {
            &e.place.pane_title
        };
        let _ = ctx.mux.restore_title(&e.place.pane, title);
    }
}

/// Types `claude attach <job>` (no Enter) into the entry's pane when it shows a bare shell
/// prompt: the user's way to the session a background agent now runs.
fn offer_attach(ctx: &Ctx, e: &Entry, job: &str) -> bool {
    if !crate::agents::claude::plain_job(job) || !ctx.mux.serves(&e.place.server) {
        return false;
    }
    let Ok(panes) = ctx.mux.list_panes() else {
        return false;
    };
    let Some(p) = panes.into_iter().find(|p| p.id == e.place.pane) else {
        return false;
    };
    if !shell_prompt_ready(ctx, &p) {
        // The `park unpark .` park prefilled at the parked pane's prompt is ours to replace.
        let ours = crate::ops::park::shell_in_foreground(ctx, &p)
            && ctx.mux.capture(&p.id, false).is_ok_and(|s| {
                s.lines()
                    .rev()
                    .find(|l| !l.trim().is_empty())
                    .is_some_and(|l| l.trim_end().ends_with(" unpark ."))
            });
        if !ours || ctx.mux.send_keys(&p.id, &["C-u"]).is_err() {
            return false;
        }
        let ready = (0..20).any(|_| {
            std::thread::sleep(Duration::from_millis(50));
            shell_prompt_ready(ctx, &p)
        });
        if !ready {
            return false;
        }
    }
    ctx.mux
        .send_text(&p.id, &format!("claude attach {job}"))
        .is_ok()
}

/// What a held Codex writer lock means for resuming that thread.
enum Gate {
    /// Go ahead; the note says what was done on the way (a transcript restored from the archive).
    Go(Box<Entry>, Option<String>),
    Done(ActionResult),
}

/// Shared checks under the locks: the entry's current state, and the never-two-processes rule.
fn gate(ctx: &Ctx, eid: &str, target: &str, live: &LiveSet, my_pane: Option<&str>) -> Gate {
    let e = match ctx.ledger.load(eid) {
        Ok(Some(e)) => e,
        Ok(None) => {
            return Gate::Done(ActionResult::new(
                target,
                Outcome::NotParked,
                Some("no parked entry (already unparked or forgotten)".into()),
            ))
        }
        Err(err) => {
            return Gate::Done(ActionResult::new(
                target,
                Outcome::Refused,
                Some(err.to_string()),
            ))
        }
    };
    let writer = crate::agents::of(e.agent).writer_lock(&e, ctx.platform.as_ref());
    let verdict = unpark_rules::before_start(&unpark_rules::Evidence {
        entry: &e,
        resumer_alive: e.state == EntryState::Resuming && resumer_alive(ctx, &e),
        in_handoff_pane: my_pane.is_some() && e.handoff_pane.as_deref() == my_pane,
        live,
        writer: writer.as_ref(),
    });
    match verdict {
        Verdict::Go => {}
        Verdict::Refused(why) => return Gate::Done(res(target, &e, Outcome::Refused, Some(why))),
        Verdict::Running {
            mut why,
            background_job,
        } => {
            // Never a second process on one transcript; but do not leave the pane claiming
            // "parked".
            teardown(ctx, &e);
            let _ = ctx.ledger.remove(&e.id);
            ctx.publish_status();
            // Claude refuses `--resume` of a session a background agent holds; the way to it is
            // attaching, which park offers at the pane's prompt.
            if let Some(Some(job)) = &background_job {
                if offer_attach(ctx, &e, job) {
                    why.push_str(
                        "; `claude attach` is typed at the pane's prompt: press Enter to open it",
                    );
                }
            }
            return Gate::Done(res(target, &e, Outcome::AlreadyRunning, Some(why)));
        }
    }
    // The agent's own transcript is gone (its cleanup ran, or it was deleted): put the archived
    // copy back where the agent looks, under the session lock, when that is safe.
    let (restored, unsafe_why) = match crate::store::archive::restore(&ctx.ledger.home, &e) {
        crate::store::archive::Restore::Restored(p) => (
            Some(format!(
                "restored the transcript from the archive to {}",
                p.display()
            )),
            None,
        ),
        crate::store::archive::Restore::Unsafe(why) => (None, Some(why)),
        crate::store::archive::Restore::Present => (None, None),
    };
    let disk = on_disk(&e);
    if let Err(why) = unpark_rules::restorable_but_transcript(&e, disk.cwd_present) {
        return Gate::Done(res(target, &e, Outcome::Refused, Some(why)));
    }
    if let Err(why) = unpark_rules::transcript_present(
        &e,
        disk.transcript.as_ref().map(|(p, ok)| (p.as_path(), *ok)),
    ) {
        // The transcript is gone and the raw copy cannot go back: a fresh agent in the cwd, told
        // to read the archived conversation, is the closest thing to the session that is safe.
        let md = crate::store::archive::checked_id(&e.session_id)
            .ok()
            .map(|sid| crate::store::archive::dir(&ctx.ledger.home, &sid).join("transcript.md"))
            .filter(|p| crate::store::ledger::read_nofollow(p).is_ok_and(|b| !b.is_empty()));
        return match (unsafe_why, md) {
            (Some(u), Some(md)) => {
                let md = md.to_string_lossy().into_owned();
                let note = format!(
                    "the transcript could not be restored ({u}); started a fresh {} in {} primed to read the archived conversation {md}",
                    e.agent.as_str(),
                    e.cwd
                );
                let mut e = e;
                e.fresh_from = Some(md);
                Gate::Go(Box::new(e), Some(note))
            }
            (Some(u), _) => Gate::Done(res(
                target,
                &e,
                Outcome::Refused,
                Some(format!("{why}; the archived copy cannot be put back: {u}")),
            )),
            (None, _) => Gate::Done(res(target, &e, Outcome::Refused, Some(why))),
        };
    }
    Gate::Go(Box::new(e), restored)
}

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
    let (var, now) = (kind.config_var(), kind.config_dir(&here));
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
        _ => kind
            .config_var_value(Path::new(dir))
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
                kind.settle().is_zero()
            }
            (true, Some(t)) => t.elapsed() >= kind.settle(),
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
            let _ = ctx.ledger.remove(&e.id);
            point("before-teardown");
            teardown(ctx, &e);
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

/// Unparks from outside the pane: hand the resume to the pane, then wait for the verifier's word.
pub(crate) fn unpark_remote(
    ctx: &Ctx,
    batch_scan: &Scan,
    batch_live: &LiveSet,
    eid: &str,
    target: &str,
    dry_run: bool,
) -> ActionResult {
    match send_resume(ctx, batch_scan, batch_live, eid, target, dry_run) {
        Sent::Done(r) => r,
        Sent::Started(p) => finish(ctx, &p),
    }
}

/// A resume handed to its pane (the agent is starting) whose verdict is still to be awaited.
pub struct Started {
    entry: Entry,
    target: String,
    restored: Option<String>,
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
        r.reason = p.restored.clone().or(r.reason);
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
    if dry_run {
        return Done(res(
            target,
            &e,
            Outcome::WouldUnpark,
            Some(resume_command_line(&e)),
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
        Some(p)
            if s.found
                .iter()
                .any(|f| f.pane.as_ref().is_some_and(|fp| fp.id == p.id)) =>
        {
            return Done(res(
                target,
                &e,
                Outcome::Refused,
                Some(format!(
                    "pane {} is running a live agent; never typing into it",
                    p.id
                )),
            ));
        }
        Some(p) if is_placeholder(ctx, p.pid, &e.id) => How::Enter,
        Some(p) => {
            let screen = ctx.mux.capture(&p.id, false).unwrap_or_default();
            let typed = ctx.typed_name(p.pid);
            // Our own line: the prefill park left, or the hand-off an unpark typed and was
            // killed before its Enter (a retry must not be refused by its own leftover).
            let last = last_line(&screen);
            let last = last.trim_end();
            let prefilled = last.ends_with(&format!("{typed} unpark ."))
                || last.ends_with(&format!("{typed} unpark {}", e.id));
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
                &e.cwd.clone(),
                &ctx.park_env(),
                &argv,
            ) {
                Ok(new_pane) => {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::Agent;
    use proptest::prelude::*;

    fn entry(agent: Agent, cwd: &str, program: &str, flags: Vec<String>) -> Entry {
        let mut e = crate::store::ledger::tests::sample("ccb");
        e.session_id = "35c98558-0920-4e29-b81c-9304ca43fccb".into();
        e.agent = agent;
        e.cwd = cwd.into();
        e.program = program.into();
        e.flags = flags;
        e.config_dir = Some("/h/.claude".into());
        e.config_var = Some("HOME".into());
        e
    }

    #[test]
    fn resume_argv_per_agent() {
        let e = entry(
            Agent::Claude,
            "/w",
            "claude",
            vec!["--dangerously-skip-permissions".into()],
        );
        assert_eq!(
            resume_argv(&e),
            vec![
                "claude",
                "--resume",
                "35c98558-0920-4e29-b81c-9304ca43fccb",
                "--dangerously-skip-permissions"
            ]
        );
        let e = entry(
            Agent::Codex,
            "/w",
            "/n/.bin/codex",
            vec!["--no-daemon".into()],
        );
        assert_eq!(
            resume_argv(&e),
            vec![
                "/n/.bin/codex",
                "resume",
                "--no-daemon",
                "35c98558-0920-4e29-b81c-9304ca43fccb"
            ]
        );
    }

    #[test]
    fn recorded_flags_are_whitelisted_again_at_resume() {
        let e = entry(
            Agent::Claude,
            "/w",
            "claude",
            [
                "--model",
                "opus",
                "--mcp-config",
                "/tmp/evil.json",
                "--resume",
                "00000000-0000-4000-8000-000000000000",
                "--dangerously-skip-permissions",
            ]
            .map(String::from)
            .to_vec(),
        );
        assert_eq!(
            resume_argv(&e),
            [
                "claude",
                "--resume",
                "35c98558-0920-4e29-b81c-9304ca43fccb",
                "--model",
                "opus",
                "--dangerously-skip-permissions"
            ]
        );
        let e = entry(
            Agent::Codex,
            "/w",
            "codex",
            ["-c", "notify=[\"sh\"]", "--no-daemon"]
                .map(String::from)
                .to_vec(),
        );
        assert_eq!(
            resume_argv(&e),
            [
                "codex",
                "resume",
                "--no-daemon",
                "35c98558-0920-4e29-b81c-9304ca43fccb"
            ]
        );
    }

    #[test]
    fn a_recorded_program_that_is_not_the_agent_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let cwd = d.path().to_string_lossy().into_owned();
        for bad in ["/bin/sh", "vim", "codex"] {
            let e = entry(Agent::Claude, &cwd, bad, vec![]);
            assert!(
                restorable(&e).unwrap_err().contains("is not claude"),
                "{bad}"
            );
        }
        let e = entry(Agent::Claude, &cwd, "/x/node_modules/.bin/claude", vec![]);
        assert!(
            !restorable(&e).unwrap_err().contains("is not claude"),
            "a real path passes this check"
        );
    }

    #[test]
    fn hostile_values_are_quoted_not_run() {
        let e = entry(
            Agent::Claude,
            "/w/$(rm -rf ~)/a b",
            "claude",
            vec!["--model".into(), "x; touch /tmp/p`id`".into()],
        );
        let line = resume_command_line(&e);
        let words = shlex::split(&line).unwrap();
        assert_eq!(words[..4], ["cd", "--", "/w/$(rm -rf ~)/a b", "&&"]);
        assert_eq!(words.last().unwrap(), "x; touch /tmp/p`id`");
    }

    proptest! {
        /// Whatever the cwd and flag values hold, the shown command splits back into exactly
        /// `cd <cwd> && <argv…>`: nothing in a value can become shell syntax.
        #[test]
        fn command_line_round_trips(cwd in "[^\u{0}]{1,40}", val in "[^\u{0}]{1,40}") {
            let e = entry(Agent::Claude, &cwd, "claude", vec!["--model".into(), val.clone()]);
            let words = shlex::split(&resume_command_line(&e)).unwrap();
            let mut want = vec!["cd".to_string(), "--".to_string(), cwd.clone(), "&&".to_string()];
            want.extend(resume_argv(&e));
            prop_assert_eq!(words, want);
        }
    }

    #[test]
    fn config_env_restores_the_variable_the_agent_used() {
        let mut e = entry(Agent::Claude, "/w", "claude", vec![]);
        e.config_dir = Some("/nowhere-home/.claude".into());
        assert_eq!(
            config_env(&e),
            vec![("HOME".to_string(), "/nowhere-home".to_string())]
        );
        e.config_var = Some("CLAUDE_CONFIG_DIR".into());
        e.config_dir = Some("/cfg".into());
        assert_eq!(
            config_env(&e),
            vec![("CLAUDE_CONFIG_DIR".to_string(), "/cfg".to_string())]
        );
    }
}
