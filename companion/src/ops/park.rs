//! `park park` of one agent: the park transaction (README "What happens on `park park`").
//!
//! Contract, per target: guards → CPU sample → lock pane and session → claim the entry (O_EXCL) →
//! archive the transcript → fresh re-scan and the same verdict again → kill the tree → finalize the
//! entry → leave the pane usable (terminal restored, pill, pinned title, `park unpark .` prefilled or a
//! placeholder that resumes on Enter). Interrupted anywhere, the session is alive or fully recorded:
//! the entry is written before the kill and only removed while the agent is provably still alive.

use crate::adapters::mux::Pane;
use crate::ctx::{Ctx, PILL_OPTION};
use crate::guards::{self, Overrides};
use crate::model::entry::{entry_id, Entry, EntryState, MuxPlace};
use crate::ops::kill::{self, Timings};
use crate::scan::{self, Found, Scan};
use crate::store::ledger::LedgerError;
use crate::store::lock::{self, TryLock};
use crate::support::fault::point;
use park_protocol::Outcome;
use park_protocol::{human_bytes, ActionResult};
use std::time::Duration;

pub const CPU_WINDOW: Duration = Duration::from_millis(400);

#[derive(Debug, Clone, Default)]
pub struct ParkOpts {
    pub dry_run: bool,
    pub overrides: Overrides,
    /// The window group this park belongs to (a whole window parked together).
    pub group: Option<String>,
    /// What the parked session waits for to wake by itself.
    pub wake: Option<crate::model::wake::Wake>,
}

fn result(
    target: &str,
    f: &Found,
    outcome: Outcome,
    reason: Option<String>,
    freed: Option<u64>,
) -> ActionResult {
    ActionResult {
        target: target.to_string(),
        pane: f.pane.as_ref().map(|p| p.id.clone()),
        session_id: f.ident.session_id.clone(),
        outcome,
        reason,
        freed_bytes: freed,
    }
}

pub fn refused(target: &str, f: &Found, why: impl Into<String>) -> ActionResult {
    result(target, f, Outcome::Refused, Some(why.into()), None)
}

fn place(server: &str, p: &Pane, title: &str) -> MuxPlace {
    MuxPlace {
        kind: crate::adapters::mux::MuxKind::of_pane(&p.id)
            .as_str()
            .into(),
        server: server.to_string(),
        pane: p.id.clone(),
        session: p.session.clone(),
        window_index: p.window_index,
        window_name: p.window_name.clone(),
        pane_index: p.pane_index,
        title: title.to_string(),
        pane_title: p.title.clone(),
        pane_proc: (p.pid, 0),
    }
}

pub fn pane_lock_key(server: &str, pane: &str) -> String {
    lock::key(&["pane", server, pane])
}

pub fn session_lock_key(session_id: &str) -> String {
    lock::key(&["session", session_id])
}

fn acquire(ctx: &Ctx, key: &str) -> Result<lock::Lock, String> {
    match lock::try_lock(&ctx.ledger.home, key) {
        Ok(TryLock::Acquired(l)) => Ok(l),
        Ok(TryLock::Held(owner)) => Err(format!(
            "another park/unpark (pid {owner}) is working on this right now"
        )),
        Err(e) => Err(e.to_string()),
    }
}

/// Whether the entry `eid` is a `Parking` claim of session `sid` left by a park that died (the
/// caller holds the session's lock and has just scanned the agent live).
fn interrupted_claim(ctx: &Ctx, eid: &str, sid: &str) -> bool {
    matches!(
        ctx.ledger.load(eid),
        Ok(Some(e)) if e.state == EntryState::Parking && e.session_id.eq_ignore_ascii_case(sid)
    )
}

/// The ledger entry (state `Parking`) that records `f` as it is now.
pub fn entry_for(f: &Found, pane: &Pane, server: &str, sid: &str, group: Option<String>) -> Entry {
    let mut e = entry_without_worktree(f, pane, server, sid, group);
    e.worktree = crate::adapters::worktree::fingerprint(&f.cwd);
    e
}

/// [`entry_for`] without the git checkout's fingerprint (a `git status` per agent: the journal,
/// which records every live agent every pass, does without it).
pub fn entry_without_worktree(
    f: &Found,
    pane: &Pane,
    server: &str,
    sid: &str,
    group: Option<String>,
) -> Entry {
    let kind = crate::agents::of(f.proc.agent);
    let program = f
        .proc
        .argv
        .get(f.proc.prog_index)
        .map(|p| kind.spec().program_for(p))
        .unwrap_or_else(|| f.proc.agent.as_str().to_string());
    let config_dir = kind.spec().config.dir(&f.proc.env);
    Entry {
        schema: crate::model::entry::ENTRY_SCHEMA,
        id: entry_id(f.proc.agent, sid),
        state: EntryState::Parking,
        agent: f.proc.agent,
        session_id: sid.to_string(),
        session_source: f.ident.source.to_string(),
        cwd: f.cwd.clone(),
        program,
        flags: f.flags.clone(),
        dropped_flags: f.dropped_flags.clone(),
        transcript: f
            .ident
            .transcript
            .as_ref()
            .map(|t| t.to_string_lossy().into_owned()),
        config_dir: config_dir.map(|d| d.to_string_lossy().into_owned()),
        config_var: Some(kind.spec().config.var_of(&f.proc.env).to_string()),
        place: place(server, pane, &f.title),
        pane_owned: f.pane_owned,
        parked_at: jiff::Timestamp::now().to_string(),
        last_active: f
            .tinfo
            .as_ref()
            .and_then(|t| t.last_real_turn)
            .map(|t| t.to_string()),
        bytes: f.mem.rss,
        uss_bytes: f.mem.uss,
        pss_bytes: f.mem.pss,
        anon_bytes: f.mem.anon,
        freed_bytes: None,
        killed_pids: vec![],
        resumer: None,
        last_error: None,
        handoff_pane: None,
        worktree: None,
        group,
        fresh_from: None,
        wake: None,
        agent_version: f.version.clone(),
        shell_path: crate::adapters::platform::env_get(&f.proc.env, "PATH").map(str::to_string),
    }
}

/// What a scanned agent is bound to once the checks that need no CPU sample have passed.
pub(crate) struct Bound {
    pane: Pane,
    server: String,
    sid: String,
}

/// The checks that need no CPU sample: the guard chain on the scan, a pane and a session, and no
/// ledger entry for the session yet. A wave runs these for all its agents before one shared sample.
pub(crate) fn precheck(
    ctx: &Ctx,
    s: &Scan,
    f: &Found,
    target: &str,
    o: &ParkOpts,
) -> Result<Bound, Box<ActionResult>> {
    if let Err(r) = guards::check(f, &s.caller, s.pane_error.as_deref(), o.overrides) {
        return Err(Box::new(refused(target, f, r.why)));
    }
    let (Some(pane), Some(server), Some(sid)) = (
        f.pane.clone(),
        f.pane.as_ref().map(|p| p.server.clone()),
        f.ident.session_id.clone(),
    ) else {
        return Err(Box::new(refused(
            target,
            f,
            "not bound to a pane or session",
        )));
    };
    let eid = entry_id(f.proc.agent, &sid);
    // A `Parking` entry of this live session is a park that died before its kill (or one running
    // now): the transaction's claim, under the session lock, tells the two apart and takes over
    // only the dead one. Any other entry means the session is recorded elsewhere: refuse.
    if let Ok(Some(e)) = ctx.ledger.load(&eid) {
        if e.state != EntryState::Parking {
            return Err(Box::new(refused(target, f, format!("a ledger entry for this session already exists ({}, {:?}); `park unpark {}` cleans it", e.id, e.state, e.id))));
        }
    }
    Ok(Bound { pane, server, sid })
}

/// Parks one scanned agent. The scan must be recent; everything is re-verified before the kill.
pub fn park_one(ctx: &Ctx, s: &Scan, f: &Found, target: &str, o: ParkOpts) -> ActionResult {
    let b = match precheck(ctx, s, f, target, &o) {
        Ok(b) => b,
        Err(r) => return *r,
    };
    let cpu = kill::cpu_percent(ctx.platform.as_ref(), &f.tree, CPU_WINDOW);
    park_sampled(ctx, s, f, target, o, b, cpu)
}

/// The rest of the transaction once `precheck` passed and the tree's CPU use was sampled: CPU
/// guard, locks, claim, archive, fresh re-scan and the same verdict again, kill, finalize.
pub(crate) fn park_sampled(
    ctx: &Ctx,
    s: &Scan,
    f: &Found,
    target: &str,
    o: ParkOpts,
    b: Bound,
    cpu: Option<f64>,
) -> ActionResult {
    let Bound { pane, server, sid } = b;
    let eid = entry_id(f.proc.agent, &sid);
    if let Err(r) = guards::cpu(cpu, o.overrides) {
        return refused(target, f, r.why);
    }
    if o.dry_run {
        return result(
            target,
            f,
            Outcome::WouldPark,
            Some(format!(
                "would kill {} processes, freeing ~{}",
                f.tree.len(),
                human_bytes(f.mem.anon)
            )),
            Some(f.mem.anon),
        );
    }
    let _pane_lock = match acquire(ctx, &pane_lock_key(&server, &pane.id)) {
        Ok(l) => l,
        Err(e) => return refused(target, f, e),
    };
    let _session_lock = match acquire(ctx, &session_lock_key(&sid)) {
        Ok(l) => l,
        Err(e) => return refused(target, f, e),
    };
    let mut entry = entry_for(f, &pane, &server, &sid, o.group.clone());
    entry.wake = o.wake.clone();
    entry.place.pane_proc.1 = ctx
        .platform
        .process(pane.pid)
        .map(|p| p.start_ticks)
        .unwrap_or(0);
    match ctx.ledger.claim(&entry) {
        Ok(()) => {}
        Err(LedgerError::Exists(_)) if interrupted_claim(ctx, &eid, &sid) => {
            // A park that died before its kill (we hold the session lock, so no park is running,
            // and this agent is live): its claim is stale. Take it over; nothing else changes.
            if let Err(e) = ctx
                .ledger
                .remove(&eid)
                .and_then(|_| ctx.ledger.claim(&entry))
            {
                return refused(target, f, format!("cannot write the ledger: {e}"));
            }
        }
        Err(LedgerError::Exists(_)) => {
            return refused(target, f, "another park claimed this session first")
        }
        Err(e) => return refused(target, f, format!("cannot write the ledger: {e}")),
    }
    point("after-claim");
    let rollback = |why: String| -> ActionResult {
        let _ = ctx.ledger.remove(&eid);
        refused(target, f, why)
    };
    // What the archive could not verify (an unreadable record near the end) is said with the
    // result: the raw copy holds it, the Markdown does not.
    let archive_warnings = match crate::store::archive::archive(&ctx.ledger.home, &entry, true) {
        Ok(a) => a.tomb.warnings,
        Err(e) => return rollback(format!("cannot archive the transcript: {e}")),
    };
    point("after-archive");
    // Re-verify right before the kill: fresh screen and state, pids re-validated by start time.
    let fresh = match scan::scan(ctx.platform.as_ref(), ctx.mux.as_ref(), true) {
        Ok(s2) => s2,
        Err(e) => return rollback(format!("re-scan failed: {e}")),
    };
    let now = fresh.found.iter().find(|g| g.proc.root == f.proc.root);
    if let Err(r) = guards::same_process(f, now) {
        return rollback(format!("changed since the scan: {}", r.why));
    }
    let now = now.expect("checked by same_process");
    if let Err(r) = guards::check(now, &fresh.caller, fresh.pane_error.as_deref(), o.overrides) {
        return rollback(format!("re-check before the kill: {}", r.why));
    }
    point("before-kill");
    let remain_before = if f.pane_owned {
        let prev = ctx
            .mux
            .pane_option(&pane.id, "remain-on-exit")
            .ok()
            .flatten();
        let _ = ctx
            .mux
            .set_pane_option(&pane.id, "remain-on-exit", Some("on"));
        Some(prev)
    } else {
        None
    };
    let report = kill::kill_tree(
        ctx.platform.as_ref(),
        &now.tree,
        (now.proc.main, now.main_start),
        &Timings::default(),
    );
    let main_alive = kill::alive(ctx.platform.as_ref(), now.proc.main, now.main_start)
        || kill::alive(ctx.platform.as_ref(), now.proc.root, now.tree[0].1);
    if main_alive {
        if let Some(prev) = remain_before {
            let _ = ctx
                .mux
                .set_pane_option(&pane.id, "remain-on-exit", prev.as_deref());
        }
        return rollback(format!(
            "the agent survived SIGKILL (pids {:?}); nothing recorded",
            report.survivors
        ));
    }
    point("before-finalize");
    entry.state = EntryState::Parked;
    entry.freed_bytes = Some(now.mem.anon);
    entry.killed_pids = report.killed.clone();
    if !report.survivors.is_empty() {
        entry.last_error = Some(format!(
            "processes survived SIGKILL: {:?}",
            report.survivors
        ));
    }
    // Git is never touched; prove it: the checkout must look the same after the kill.
    let worktree_note = entry.worktree.as_ref().and_then(|before| {
        let now = crate::adapters::worktree::fingerprint(&entry.cwd)?;
        let d = crate::adapters::worktree::drift(before, &now);
        (!d.is_empty()).then(|| format!("WORKTREE CHANGED during park: {}", d.join(", ")))
    });
    if let Some(n) = &worktree_note {
        entry.last_error = Some(n.clone());
    }
    // Honest about Codex: the client's tree is what was freed; the shared daemon stays.
    let daemon_note = entry.config_dir.as_deref().and_then(|h| {
        crate::agents::of(f.proc.agent).left_running_note(&fresh.table, std::path::Path::new(h))
    });
    if let Err(e) = ctx.ledger.save(&entry) {
        // The parking-state entry from the claim still records the session: it stays resumable.
        return refused(target, f, format!("agent stopped but the entry could not be finalized ({e}); `park unpark {eid}` still works"));
    }
    point("after-finalize");
    let caller_here = s.caller.pane.as_deref() == Some(pane.id.as_str());
    leave_pane_usable(ctx, &entry, &pane, &f.proc.env, remain_before, caller_here);
    ctx.publish_status();
    if !report.survivors.is_empty() {
        return result(
            target,
            f,
            Outcome::Failed,
            Some(format!(
                "parked, but processes survived SIGKILL: {:?}",
                report.survivors
            )),
            entry.freed_bytes,
        );
    }
    let archive_note =
        (!archive_warnings.is_empty()).then(|| format!("archive: {}", archive_warnings.join("; ")));
    let notes: Vec<String> = [worktree_note, daemon_note, archive_note]
        .into_iter()
        .flatten()
        .collect();
    let note = (!notes.is_empty()).then(|| notes.join("; "));
    result(target, f, Outcome::Parked, note, entry.freed_bytes)
}

/// Environment passed to a placeholder so the resumed agent gets what the killed one had.
pub(crate) fn placeholder_env(env: &[(String, String)]) -> Vec<(String, String)> {
    const SKIP: &[&str] = &[
        "TMUX",
        "TMUX_PANE",
        "PWD",
        "OLDPWD",
        "SHLVL",
        "_",
        "COLUMNS",
        "LINES",
    ];
    env.iter()
        .filter(|(k, _)| !SKIP.contains(&k.as_str()) && !k.starts_with("PARK_FAULT"))
        .cloned()
        .collect()
}

/// Escape sequences that undo what a killed TUI leaves behind: hidden cursor, mouse and focus
/// reporting, application keypad, colours. Not the alternate screen: see [`TERMINAL_RESET`].
pub(crate) const MODES_RESET: &str =
    "\x1b[?25h\x1b[0m\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?1004l\x1b[?1l\x1b>";

/// [`MODES_RESET`] after leaving the alternate screen. Only for a pane known to be on it: tmux
/// restores the saved cursor on `?1049l` even off the alternate screen, so a TUI that drew inline
/// and saved its cursor (Qwen Code) would get the shell's prompt and the typed `park unpark .`
/// moved up onto its old lines.
pub(crate) const TERMINAL_RESET: &str = "\x1b[?1049l\x1b[?25h\x1b[0m\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?1004l\x1b[?1l\x1b>";

pub fn write_tty(tty: &str, s: &str) {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    if !tty.starts_with("/dev/") {
        return;
    }
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOCTTY | libc::O_NONBLOCK)
        .open(tty)
    {
        let _ = f.write_all(s.as_bytes());
    }
}

fn find_pane(ctx: &Ctx, id: &str) -> Option<Pane> {
    ctx.mux.list_panes().ok()?.into_iter().find(|p| p.id == id)
}

pub fn pill_text(e: &Entry) -> String {
    format!(
        "❄ {} {}",
        e.agent.as_str(),
        e.freed_bytes.map(human_bytes).unwrap_or_default()
    )
    .trim_end()
    .to_string()
}

/// The pill and the pinned `❄ <title>` that say a pane holds this parked session.
pub(crate) fn mark_parked_pane(ctx: &Ctx, e: &Entry, pane: &str) {
    let _ = ctx
        .mux
        .set_pane_option(pane, PILL_OPTION, Some(&pill_text(e)));
    // The title is the mark that survives a zellij resurrection (pane ids do not): the entry's
    // own tag in it lets `store::slot` find this pane again, never another ❄ pane.
    let _ = ctx.mux.set_title(pane, &crate::store::slot::pill_title(e));
    // zellij saves its layout only every `serialization_interval`: without this, a crash in the
    // next minute brings the pane back unmarked (`pane-unmatched`, resumed in a new pane).
    ctx.mux.checkpoint(pane);
}

/// After the kill: keep the pane, restore its terminal, pin the title, set the pill, and leave the
/// way back ready (prefilled `park unpark .` at a shell, or a placeholder that resumes on Enter).
fn leave_pane_usable(
    ctx: &Ctx,
    e: &Entry,
    pane: &Pane,
    env: &[(String, String)],
    remain_before: Option<Option<String>>,
    caller_here: bool,
) {
    mark_parked_pane(ctx, e, &pane.id);
    if e.pane_owned {
        // The pane's own process is gone: wait for tmux to mark it dead, then put the placeholder in.
        for _ in 0..40 {
            if find_pane(ctx, &pane.id).is_none_or(|p| p.dead) {
                break;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        let argv = vec![
            ctx.exe.to_string_lossy().into_owned(),
            "hold".into(),
            e.id.clone(),
        ];
        let mut penv = placeholder_env(env);
        penv.retain(|(k, _)| k != "PARK_HOME" && k != "PARK_TMUX_SOCKET");
        penv.extend(ctx.park_env());
        let _ = ctx.mux.respawn(&pane.id, &e.cwd, &penv, &argv);
        if let Some(prev) = remain_before {
            let _ = ctx
                .mux
                .set_pane_option(&pane.id, "remain-on-exit", prev.as_deref());
        }
        return;
    }
    if caller_here {
        // park itself is this pane's foreground job: the keys wait in the terminal's input and
        // land at the shell prompt once park exits.
        let _ = ctx.mux.send_text(
            &pane.id,
            &format!("{} unpark .", ctx.typed_name_seen(pane.pid, Some(env))),
        );
        return;
    }
    // Wait for the shell to take the terminal back before resetting it.
    let mut alt = pane.alternate_on;
    for _ in 0..20 {
        match find_pane(ctx, &pane.id) {
            Some(p) if p.current_command == pane.current_command && !p.dead => {
                std::thread::sleep(Duration::from_millis(25))
            }
            Some(_) => break,
            None => return,
        }
    }
    // On the alternate screen now, after the agent's last words? One that left it itself (Qwen
    // Code does on SIGTERM) must not get a second `?1049l`: see TERMINAL_RESET. The pause lets
    // tmux take in what the dead agent wrote last.
    std::thread::sleep(Duration::from_millis(50));
    if let Some(p) = find_pane(ctx, &pane.id) {
        alt = p.alternate_on;
    }
    write_tty(&pane.tty, if alt { TERMINAL_RESET } else { MODES_RESET });
    if alt {
        // The shell drew its prompt on the alternate screen the agent left on; leaving that screen
        // hid it. An empty Enter at a fresh prompt makes the shell draw it again where it shows.
        std::thread::sleep(Duration::from_millis(50));
        let _ = ctx.mux.send_keys(&pane.id, &["Enter"]);
    }
    // Prefill only at a bare shell prompt; wait briefly for the shell to redraw it.
    for _ in 0..40 {
        if let Some(p) = find_pane(ctx, &pane.id) {
            clear_late_terminal_reply(ctx, &p);
            if shell_prompt_ready(ctx, &p) {
                if p.in_mode {
                    let _ = ctx.mux.leave_mode(&p.id);
                }
                // The dead agent's last frame and its exit text would sit above the prefill
                // (zellij): the shell redraws on a clean screen first, as tmux shows it.
                if ctx.mux.leaves_last_frame(&p.id) {
                    let _ = repair_shell_screen(ctx, &p);
                }
                let _ = ctx.mux.send_text(
                    &p.id,
                    &format!("{} unpark .", ctx.typed_name_seen(p.pid, Some(env))),
                );
                return;
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    // An agent that drew inline (no alternate screen: Gemini CLI) leaves its footer under the
    // shell's new prompt: with the shell in the foreground, have it redraw on a clean screen.
    if let Some(p) = find_pane(ctx, &pane.id) {
        if repair_shell_screen(ctx, &p) {
            let _ = ctx.mux.send_text(
                &p.id,
                &format!("{} unpark .", ctx.typed_name_seen(p.pid, Some(env))),
            );
        }
    }
}

/// Whether a screen's last line ends with the line park leaves at a parked pane's prompt: the
/// `park unpark .` prefill (short or by full path: the park that typed it may have judged the
/// shell's PATH differently) or an unpark's hand-off `… unpark <entry>`.
pub fn is_our_prefill(last: &str, typed: &str, eid: &str) -> bool {
    let last = last.trim_end();
    let with = |prog: &str| {
        last.ends_with(&format!("{prog} unpark ."))
            || last.ends_with(&format!("{prog} unpark {eid}"))
    };
    with(typed) || with(" park") || last == "park unpark ." || {
        // `/any/dir/park unpark .`: the word before ` unpark` is a path to a `park`.
        last.strip_suffix(" unpark .")
            .and_then(|l| l.rsplit(' ').next())
            .is_some_and(|w| w.starts_with('/') && w.ends_with("/park"))
    }
}

/// Types `park unpark .` (not run) at the pane's prompt when it shows a bare shell prompt: the way
/// back of a parked pane whose prefill is gone (a resurrected zellij pane is a fresh shell).
pub fn prefill_at_prompt(ctx: &Ctx, pane: &str, e: &Entry) {
    for _ in 0..40 {
        if let Some(p) = find_pane(ctx, pane) {
            if shell_prompt_ready(ctx, &p) {
                let _ = ctx.mux.send_text(&p.id, &prefill_line(ctx, p.pid, e));
                return;
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The way back typed at a fresh shell of `e`'s pane (process `shell_pid`): judged by the PATH
/// the parked agent ran with, as the park's own prefill is ([`leave_pane_usable`]), since a login
/// shell's PATH cannot be read from outside it (its profile may set it afresh). An entry that
/// kept none (parked by an older park) is judged by the shell alone.
pub(crate) fn prefill_line(ctx: &Ctx, shell_pid: u32, e: &Entry) -> String {
    let seen: Option<Vec<(String, String)>> = e
        .shell_path
        .as_ref()
        .map(|p| vec![("PATH".into(), p.clone())]);
    format!(
        "{} unpark .",
        ctx.typed_name_seen(shell_pid, seen.as_deref())
    )
}

/// The pane's foreground is its interactive shell (whatever its screen shows).
pub(crate) fn shell_in_foreground(ctx: &Ctx, p: &Pane) -> bool {
    let Some(proc) = ctx.platform.process(p.pid) else {
        return false;
    };
    let shell = crate::adapters::platform::proctree::program_of(&proc.argv)
        .map(|(n, _)| n.trim_start_matches('-').to_string())
        .unwrap_or_default();
    scan::is_interactive_shell(&proc.argv) && p.current_command.trim_start_matches('-') == shell
}

/// An agent that died without cleaning up (a park interrupted after SIGTERM, a crash) can leave
/// its pane on the alternate screen, with the shell's prompt drawn where `capture` cannot tell it
/// from the agent's last frame. With the shell in the foreground: leave the alternate screen and
/// ask the shell to redraw its line (Ctrl-L: redraws, never runs what is typed). Returns whether
/// the pane is now at a bare prompt.
pub(crate) fn repair_shell_screen(ctx: &Ctx, p: &Pane) -> bool {
    if !shell_in_foreground(ctx, p) {
        return false;
    }
    // `?1049l` only for a pane known to be on the alternate screen (see [`TERMINAL_RESET`]):
    // zellij reports none, and there a stray one can bring back a stale frame over the prompt.
    write_tty(
        &p.tty,
        if p.alternate_on {
            TERMINAL_RESET
        } else {
            MODES_RESET
        },
    );
    let _ = ctx.mux.send_keys(&p.id, &["C-l"]);
    // A loaded machine redraws slowly (zellij most): wait up to 3 s for the prompt. A terminal's
    // late reply can land in the shell's line here too (the shell took the terminal back after
    // `leave_pane_usable`'s own wait, under load): cleared as there, or no prompt is ever bare.
    for _ in 0..60 {
        std::thread::sleep(Duration::from_millis(50));
        if let Some(now) = find_pane(ctx, &p.id) {
            if shell_prompt_ready(ctx, &now) {
                return true;
            }
            clear_late_terminal_reply(ctx, &now);
        }
    }
    false
}

/// The pane's foreground is its interactive shell and the screen ends at a bare prompt.
pub(crate) fn shell_prompt_ready(ctx: &Ctx, p: &Pane) -> bool {
    if !shell_in_foreground(ctx, p) {
        return false;
    }
    ctx.mux
        .capture(&p.id, false)
        .map(|s| crate::agents::screen::bare_shell_prompt(&s))
        .unwrap_or(false)
}

/// A parked pane's prompt that holds only the late reply of the terminal to a query the killed
/// agent sent (zellij answers Copilot's colour-scheme query `CSI ? 996 n` with `…997;1n`, which
/// can arrive after the agent died and land in the shell's line) has that line cleared, so the
/// prefill that waits for a bare prompt is not lost to it. Nothing else is ever cleared.
fn clear_late_terminal_reply(ctx: &Ctx, p: &Pane) {
    if !shell_in_foreground(ctx, p) {
        return;
    }
    let stray = ctx
        .mux
        .capture(&p.id, false)
        .is_ok_and(|s| crate::agents::screen::prompt_with_terminal_reply(&s));
    if stray {
        let _ = ctx.mux.send_keys(&p.id, &["C-e", "C-u"]);
    }
}

/// Records each window a window- or session-level target parks as a group (layout, every pane in
/// order with its cwd, command and session) before anything is killed, and returns the group id
/// for each agent (index into `s.found`) in those windows. The id of a group already recorded for
/// the window, or for one of its sessions, is kept. Recording is best effort: a window whose group
/// cannot be written parks ungrouped, and `rebuild` tiles it.
pub(crate) fn record_groups(
    ctx: &Ctx,
    s: &Scan,
    window_level: &[usize],
) -> (std::collections::HashMap<usize, String>, Vec<String>) {
    use crate::store::group;
    let mut out = std::collections::HashMap::new();
    let mut warnings = vec![];
    let home = &ctx.ledger.home;
    let (mut groups, _) = group::load_all(home);
    let (entries, _) = ctx.ledger.all();
    let mut windows: Vec<(String, String, u32)> = vec![];
    for i in window_level {
        if let Some(p) = &s.found[*i].pane {
            let k = (p.server.clone(), p.session.clone(), p.window_index);
            if !windows.contains(&k) {
                windows.push(k);
            }
        }
    }
    for (server, session, window_index) in windows {
        let Some(g) = window_group(
            ctx,
            s,
            &entries,
            &groups,
            &server,
            &session,
            window_index,
            None,
            None,
        ) else {
            continue;
        };
        let id = g.id.clone();
        if let Err(e) = group::save(home, &g) {
            warnings.push(format!(
                "could not record window {session}:{window_index} as a group: {e}"
            ));
            continue;
        }
        // Panes of this window that are already parked join the group too.
        for e in entries.iter().filter(|e| {
            e.place.server == server
                && g.slots.iter().any(|x| x.pane == e.place.pane)
                && e.group.as_deref() != Some(id.as_str())
        }) {
            let _ = edit_parked(ctx, &e.id, |cur| {
                cur.group = Some(id.clone());
                Ok(())
            });
        }
        for i in window_level {
            if s.found[*i].pane.as_ref().is_some_and(|p| {
                p.server == server && p.session == session && p.window_index == window_index
            }) {
                out.insert(*i, id.clone());
            }
        }
        groups.retain(|x| x.id != id);
        groups.push(g);
    }
    (out, warnings)
}

/// The window group of `server`'s window `session:window_index` as the scan `s` sees it now:
/// every pane in order, each with its cwd, command and the session it holds (a live agent's, or
/// a parked entry's of `entries`), and the window's layout. The id is `id`, else the one already
/// recorded for the window or one of its sessions in `groups`, else a new one. Nothing is saved.
#[allow(clippy::too_many_arguments)]
pub(crate) fn window_group(
    ctx: &Ctx,
    s: &Scan,
    entries: &[Entry],
    groups: &[crate::store::group::Group],
    server: &str,
    session: &str,
    window_index: u32,
    id: Option<String>,
    layouts: Option<&[crate::adapters::mux::WindowLayout]>,
) -> Option<crate::store::group::Group> {
    use crate::store::group::{self, Group, Slot};
    let mut panes: Vec<&Pane> = s
        .panes
        .iter()
        .filter(|p| p.server == server && p.session == session && p.window_index == window_index)
        .collect();
    panes.sort_by_key(|p| p.pane_index);
    let first = panes.first()?;
    let window_name = first.window_name.clone();
    let slots: Vec<Slot> = panes
        .iter()
        .map(|p| {
            let live = s
                .found
                .iter()
                .find(|f| f.pane.as_ref().is_some_and(|fp| fp.id == p.id));
            // A pane already parked keeps its session in the group.
            let parked = entries
                .iter()
                .find(|e| e.place.server == server && e.place.pane == p.id);
            Slot {
                pane_index: p.pane_index,
                pane: p.id.clone(),
                cwd: live
                    .map(|f| f.cwd.clone())
                    .or_else(|| parked.map(|e| e.cwd.clone()))
                    .unwrap_or_else(|| p.cwd.clone()),
                command: live
                    .map(|f| f.proc.agent.as_str().to_string())
                    .unwrap_or_else(|| p.current_command.clone()),
                session_id: live
                    .and_then(|f| f.ident.session_id.clone())
                    .or_else(|| parked.map(|e| e.session_id.clone())),
                agent: live
                    .map(|f| f.proc.agent.as_str().to_string())
                    .or_else(|| parked.map(|e| e.agent.as_str().to_string())),
            }
        })
        .collect();
    let members: Vec<String> = slots.iter().filter_map(|x| x.session_id.clone()).collect();
    let id = id.unwrap_or_else(|| {
        group::pick_id(
            groups,
            server,
            session,
            window_index,
            &window_name,
            &members,
        )
        .unwrap_or_else(group::new_id)
    });
    // zellij saves its own layouts (and a tmux session of the same name is another window).
    let (layout, width, height) = if crate::adapters::mux::is_zellij_server(server) {
        Default::default()
    } else if let Some(all) = layouts {
        all.iter()
            .find(|l| l.session == session && l.window_index == window_index)
            .map(|l| (l.layout.clone(), l.width, l.height))
            .unwrap_or_default()
    } else {
        ctx.mux
            .window_layout(session, window_index)
            .unwrap_or_default()
    };
    let g = Group {
        schema: group::SCHEMA,
        id: id.clone(),
        kind: if crate::adapters::mux::is_zellij_server(server) {
            crate::adapters::mux::MuxKind::Zellij
        } else {
            crate::adapters::mux::MuxKind::Tmux
        }
        .as_str()
        .into(),
        server: server.to_string(),
        session: session.to_string(),
        window_index,
        window_name,
        layout,
        width,
        height,
        recorded_at: jiff::Timestamp::now().to_string(),
        slots,
        // Servers stopped by an earlier park of this window wait for their restart.
        servers: groups
            .iter()
            .find(|x| x.id == id)
            .map(|x| x.servers.clone())
            .unwrap_or_default(),
    };
    Some(g)
}

/// Changes a parked entry in place: under its session lock, re-read, and only while it is still
/// parked — a save racing an unpark that removed the entry would bring a running session's entry
/// back. `f` may refuse (its error is returned, nothing is saved). The one way park edits an entry
/// it did not just claim (window groups, rebuild, wake-ups).
pub fn edit_parked(
    ctx: &Ctx,
    eid: &str,
    f: impl FnOnce(&mut Entry) -> Result<(), String>,
) -> Result<Entry, String> {
    let Some(e) = ctx.ledger.load(eid).map_err(|e| e.to_string())? else {
        return Err("no longer parked (unparked or forgotten meanwhile)".into());
    };
    let _l = match lock::try_lock(&ctx.ledger.home, &session_lock_key(&e.session_id)) {
        Ok(TryLock::Acquired(l)) => l,
        Ok(TryLock::Held(o)) => return Err(format!("session is locked by pid {}", o.trim())),
        Err(err) => return Err(err.to_string()),
    };
    let Some(mut e) = ctx.ledger.load(eid).map_err(|e| e.to_string())? else {
        return Err("no longer parked (unparked or forgotten meanwhile)".into());
    };
    if e.state != EntryState::Parked {
        return Err(format!("entry is {:?} now, not parked", e.state));
    }
    f(&mut e)?;
    ctx.ledger.save(&e).map_err(|x| x.to_string())?;
    Ok(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_full_reset_is_the_modes_reset_after_leaving_the_alternate_screen() {
        assert_eq!(TERMINAL_RESET, format!("\x1b[?1049l{MODES_RESET}"));
        assert!(!MODES_RESET.contains("1049"));
    }

    /// Issue 34 item 12, a rebuild's side: a pane a rebuild gives back (a revived placeholder, a
    /// resurrected zellij pane) is a fresh login shell whose PATH cannot be read from outside, so
    /// it was typed `/full/path/park unpark .` even when the parked agent's PATH, the one that
    /// shell's profile sets, finds this park. The entry keeps that PATH; the short form is typed.
    #[test]
    fn a_fresh_login_shell_is_typed_what_the_parked_agents_path_finds() {
        use std::os::unix::fs::PermissionsExt;
        use std::os::unix::process::CommandExt;
        let d = tempfile::tempdir().unwrap();
        let bin = d.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        let exe = bin.join("park");
        std::fs::write(&exe, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        let home = d.path().join("park-home");
        let ctx = Ctx {
            platform: crate::adapters::platform::native(),
            mux: Box::new(crate::adapters::mux::set::MuxSet::from_env()),
            ledger: crate::store::ledger::Ledger::new(home.clone()),
            exe: exe.clone(),
        };
        // A login shell as tmux starts one (`-sh`), whose inherited PATH, from before its
        // profile ran, does not find this park; it names this ledger.
        let mut shell = std::process::Command::new("sleep")
            .arg0("-sh")
            .arg("30")
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("PARK_HOME", &home)
            .spawn()
            .unwrap();
        let pid = shell.id();
        for _ in 0..100 {
            if ctx
                .platform
                .process(pid)
                .is_some_and(|p| p.argv.first().map(String::as_str) == Some("-sh"))
            {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let mut e = Entry::sample(
            park_protocol::Agent::Claude,
            "5b0c6a1e-2f3d-4c5b-9a8e-7d6c5b4a3f01",
        );
        e.shell_path = Some(format!("/usr/bin:{}:/bin", bin.display()));
        let short = prefill_line(&ctx, pid, &e);
        // An entry that kept no PATH (parked by an older park): the full path, as before.
        e.shell_path = None;
        let long = prefill_line(&ctx, pid, &e);
        let _ = shell.kill();
        let _ = shell.wait();
        assert_eq!(short, "park unpark .");
        assert_eq!(long, format!("{} unpark .", exe.display()));
        // The park keeps the agent's PATH in the entry for that.
        let mut f = crate::scan::tests::found_with_tree(vec![(100, 1)]);
        f.proc.env = vec![("PATH".into(), "/opt/mine/bin:/usr/bin".into())];
        let pane = Pane::default();
        let e = entry_for(&f, &pane, "", "5b0c6a1e-2f3d-4c5b-9a8e-7d6c5b4a3f01", None);
        assert_eq!(e.shell_path.as_deref(), Some("/opt/mine/bin:/usr/bin"));
    }
}
