//! `park daemon` (alias `park waker`): the one small process per `$PARK_HOME` that fires the
//! wake-ups and, when the autopilot is on, runs its passes.
//!
//! Contract:
//! * One daemon per `$PARK_HOME`, held by the `waker` lock (flock, released by the kernel when it
//!   dies) with `waker.pid` beside it; a second one exits at once. It starts on demand
//!   ([`ensure`]: `park park --wake-…`, `park ls`, `park wake`, every park command, the tmux plugin
//!   at server start) when a wake-up is pending or the config turns automatic work on, and exits
//!   when neither holds.
//! * Wake-up state is in the ledger entries ([`crate::model::wake::Wake`]); the daemon re-reads
//!   them when the `parked/` directory changes. After a crash or a reboot `ensure` starts it
//!   again, and a time that passed meanwhile fires once.
//! * Waking runs `park unpark <entry> --wake-reason …` as a child process with the entry's tmux
//!   socket, so every guard applies and the note is typed by the same code a person's unpark uses;
//!   starts are at least 1 s apart (concurrent Claude starts corrupt `~/.claude.json`). The outcome
//!   goes to `wakes.log` (one JSON line per wake-up, with its latency after the due time), and a
//!   wake that could not happen is recorded in the entry (`could not wake: …`), never retried in a
//!   loop.
//! * Probes run on threads of their own with a timeout, so one slow probe never delays a timer.
//! * Progress is saved under the entry's session lock and only while the entry is still parked with
//!   the same wake: the daemon never brings back an entry an unpark just removed.
//! * Autopilot (`[auto]` of the config, re-read when the file changes): a pass (`ops::auto::pass`)
//!   every `interval`, and at once — at most one pass per [`PRESSURE_GAP`] — when MemAvailable is
//!   under `min_available` (checked every tick) or the kernel's PSI trigger on
//!   `/proc/pressure/memory` fires. A config that does not load runs nothing automatic and says so
//!   once in `waker.log`.

use crate::ctx::Ctx;
use crate::exit::ExitStatus;
use crate::model::entry::{Entry, EntryState};
use crate::model::probe::ProbeResult;
use crate::model::wake::{self, Due, OnDeadline};
use crate::store::lock::{try_lock, TryLock};
use jiff::Timestamp;
use park_protocol::Outcome;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};

const LOCK: &str = "waker";
const PROBE_TIMEOUT: Duration = Duration::from_secs(20);
const TICK: Duration = Duration::from_millis(200);
const START_GAP: Duration = Duration::from_secs(1);

fn pid_path(home: &Path) -> PathBuf {
    home.join("waker.pid")
}

/// Entries with a pending wake-up.
pub fn pending(entries: &[Entry]) -> Vec<&Entry> {
    entries
        .iter()
        .filter(|e| e.state == EntryState::Parked && e.wake.as_ref().is_some_and(|w| w.pending()))
        .collect()
}

/// The running waker's pid, if one holds the lock.
pub fn running(home: &Path) -> Option<u32> {
    crate::store::lock::holder(home, LOCK)
}

/// Whether the config asks for automatic work (a broken config asks for none).
pub fn auto_wanted(home: &Path) -> bool {
    crate::store::config::load(home).is_ok_and(|c| c.auto.active())
}

/// Starts the daemon when a wake-up is pending or the autopilot is on — or, with `journal` (the
/// explicit `park daemon --ensure` of the tmux plugin and the zellij strip), when the journal is
/// on — and none runs. Cheap when there is nothing to do (a ledger read and a config read); never
/// waits for the daemon.
pub fn ensure(ctx: &Ctx, journal: bool) -> Result<Option<u32>, String> {
    let (entries, _) = ctx.ledger.all();
    let for_journal = journal && crate::ops::journal::enabled(&ctx.ledger.home);
    if pending(&entries).is_empty() && !auto_wanted(&ctx.ledger.home) && !for_journal {
        return Ok(None);
    }
    if let Some(pid) = running(&ctx.ledger.home) {
        return Ok(Some(pid));
    }
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(ctx.ledger.home.join("waker.log"))
        .map_err(|e| format!("cannot open waker.log: {e}"))?;
    let mut cmd = std::process::Command::new(&ctx.exe);
    cmd.arg("daemon")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(log)
        .envs(ctx.park_env());
    // Its own session: closing the terminal or the popup that started it does not end it.
    use std::os::unix::process::CommandExt;
    // SAFETY: setsid is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    let child = cmd
        .spawn()
        .map_err(|e| format!("cannot start the waker: {e}"))?;
    Ok(Some(child.id()))
}

fn dir_stamp(p: &Path) -> Option<SystemTime> {
    std::fs::metadata(p).and_then(|m| m.modified()).ok()
}

/// Saves `f(wake)` into the entry if it is still parked with the wake created at `created`.
fn update(ctx: &Ctx, eid: &str, created: &str, f: impl FnOnce(&mut wake::Wake)) -> bool {
    crate::ops::park::edit_parked(ctx, eid, |e| match e.wake.as_mut() {
        Some(w) if w.created_at == created => {
            f(w);
            Ok(())
        }
        _ => Err("the wake-up changed meanwhile".into()),
    })
    .is_ok()
}

/// One line in `wakes.log`.
fn log_wake(home: &Path, e: &Entry, due: Option<Timestamp>, reason: &str, outcome: &str) {
    let now = Timestamp::now();
    let latency_ms = due.map(|d| (now.as_millisecond() - d.as_millisecond()).max(0));
    let line = serde_json::json!({
        "at": now.to_string(),
        "entry": e.id,
        "session_id": e.session_id,
        "reason": reason,
        "outcome": outcome,
        "due": due.map(|d| d.to_string()),
        "latency_ms": latency_ms,
    });
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(home.join("wakes.log"))
    {
        use std::io::Write;
        let _ = writeln!(f, "{line}");
    }
}

/// Wakes one entry through `park unpark` (all guards), typing the note once the agent is idle.
pub fn fire(
    ctx: &Ctx,
    e: &Entry,
    reason: &str,
    due: Option<Timestamp>,
    extra_note: Option<&str>,
) -> (bool, String) {
    let mut cmd = std::process::Command::new(&ctx.exe);
    cmd.args(["unpark", &e.id, "--json", "--wake-reason", reason]);
    if let Some(n) = extra_note {
        cmd.args(["--note", n]);
    }
    cmd.stdin(std::process::Stdio::null()).envs(ctx.park_env());
    if crate::adapters::mux::MuxKind::parse(&e.place.kind)
        == Some(crate::adapters::mux::MuxKind::Tmux)
        && e.place.server.starts_with('/')
    {
        cmd.env("PARK_TMUX_SOCKET", &e.place.server);
    }
    let out = cmd.output();
    let (ok, why) = match out {
        Ok(o) => {
            let parsed: Option<park_protocol::ActionOutput> =
                serde_json::from_slice(&o.stdout).ok();
            match parsed.and_then(|p| p.results.into_iter().next()) {
                Some(r) if r.outcome == Outcome::Unparked => (true, r.reason.unwrap_or_default()),
                Some(r) => (
                    false,
                    format!("{}: {}", r.outcome, r.reason.unwrap_or_default()),
                ),
                None => (
                    false,
                    format!(
                        "unpark gave no result: {}",
                        String::from_utf8_lossy(&o.stderr).trim()
                    ),
                ),
            }
        }
        Err(err) => (false, format!("cannot run park unpark: {err}")),
    };
    log_wake(
        &ctx.ledger.home,
        e,
        due,
        reason,
        if ok { "woke" } else { "could not wake" },
    );
    if !ok {
        let created = e
            .wake
            .as_ref()
            .map(|w| w.created_at.clone())
            .unwrap_or_default();
        let text = format!("could not wake: {why}");
        update(ctx, &e.id, &created, |w| w.outcome = Some(text));
    }
    (ok, why)
}

enum Msg {
    Probe(String, String, ProbeResult),
    Fired(String),
    /// The kernel's PSI trigger on memory fired (Linux only).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    Pressure,
}

type Gate = std::sync::Arc<std::sync::Mutex<Option<Instant>>>;

/// Wakes `e` on a thread of its own (an unpark plus the note can take a minute), at least
/// [`START_GAP`] after the previous start.
fn spawn_fire(
    tx: &mpsc::Sender<Msg>,
    gate: &Gate,
    e: Entry,
    reason: String,
    due: Option<Timestamp>,
    extra_note: Option<String>,
) {
    let (tx, gate) = (tx.clone(), gate.clone());
    std::thread::spawn(move || {
        {
            let mut last = gate.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(t) = *last {
                std::thread::sleep(START_GAP.saturating_sub(t.elapsed()));
            }
            *last = Some(Instant::now());
        }
        match crate::ctx::Ctx::from_env() {
            Ok(ctx) => {
                let (ok, why) = fire(&ctx, &e, &reason, due, extra_note.as_deref());
                eprintln!(
                    "park waker: {} {reason}: {}",
                    e.id,
                    if ok { "woke" } else { &why }
                );
            }
            Err(err) => eprintln!("park waker: {}: {err}", e.id),
        }
        let _ = tx.send(Msg::Fired(e.id.clone()));
    });
}

/// The waker's loop. Returns its exit code.
pub fn run(ctx: &Ctx) -> ExitStatus {
    let home = ctx.ledger.home.clone();
    // A `doctor` or `ensure` probing the lock holds it for an instant: look again before
    // concluding another waker runs.
    let mut tries = 0;
    let _lock = loop {
        match try_lock(&home, LOCK) {
            Ok(TryLock::Acquired(l)) => break l,
            Ok(TryLock::Held(_)) if tries < 10 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(100));
            }
            Ok(TryLock::Held(owner)) => {
                eprintln!("park daemon: already running (pid {})", owner.trim());
                return ExitStatus::Success;
            }
            Err(e) => {
                eprintln!("park waker: {e}");
                return ExitStatus::Refused;
            }
        }
    };
    let me = std::process::id();
    let start = ctx.platform.process(me).map(|p| p.start_ticks).unwrap_or(0);
    let _ =
        crate::store::ledger::write_atomic(&pid_path(&home), format!("{me} {start}\n").as_bytes());
    eprintln!("park daemon: pid {me} started at {}", Timestamp::now());
    let parked_dir = ctx.ledger.parked_dir();
    let (tx, rx) = mpsc::channel::<Msg>();
    psi_watch(&tx);
    let gate: Gate = Default::default();
    let mut in_flight: HashMap<String, Instant> = HashMap::new();
    let mut entries: Vec<Entry> = vec![];
    let mut stamp: Option<SystemTime> = None;
    let mut reread = Instant::now() - Duration::from_secs(3600);
    let mut stash: Option<Msg> = None;
    let mut auto = AutoState::new(ctx);
    let mut journal = JournalState::new(&home);
    loop {
        auto.reload(ctx);
        // Re-read the ledger when it changed (any claim, save or remove renames into parked/),
        // and every 30 s in case a clock or a file time lied.
        let now_stamp = dir_stamp(&parked_dir);
        if now_stamp != stamp || reread.elapsed() > Duration::from_secs(30) {
            stamp = now_stamp;
            reread = Instant::now();
            entries = ctx.ledger.all().0;
            // `[archive] auto`: the daily `park archive --all` (a no-op until a day has passed).
            crate::ops::protect::ensure_auto(ctx);
            journal.on = crate::ops::journal::enabled(&home);
        }
        journal.run_if_due(ctx);
        let todo: Vec<Entry> = pending(&entries).into_iter().cloned().collect();
        if todo.is_empty()
            && in_flight.is_empty()
            && stash.is_none()
            && !auto.on()
            && !journal.watching()
        {
            break;
        }
        if let Some(trigger) = auto.due(ctx, stash.as_ref()) {
            auto.run(ctx, trigger);
            crate::support::mem::shed();
            if matches!(stash, Some(Msg::Pressure)) {
                stash = None;
            }
            continue;
        }
        if matches!(stash, Some(Msg::Pressure)) {
            stash = None;
        }
        let now = Timestamp::now();
        let mut changed = false;
        for e in &todo {
            let Some(w) = e.wake.clone() else { continue };
            if in_flight.contains_key(&e.id) {
                continue;
            }
            match wake::due(&w, now) {
                Due::Fire(reason) => {
                    in_flight.insert(e.id.clone(), Instant::now());
                    let due = w.at.as_deref().and_then(|a| a.parse().ok());
                    spawn_fire(&tx, &gate, e.clone(), reason, due, None);
                }
                Due::TimedOut(why) => {
                    if w.on_deadline == OnDeadline::Resume {
                        in_flight.insert(e.id.clone(), Instant::now());
                        let due = w.deadline.as_deref().and_then(|a| a.parse().ok());
                        let note = format!("The wait {why}.");
                        spawn_fire(&tx, &gate, e.clone(), why, due, Some(note));
                    } else {
                        log_wake(&home, e, None, &why, "timed out");
                        update(ctx, &e.id, &w.created_at, |x| x.outcome = Some(why.clone()));
                        changed = true;
                    }
                }
                Due::Probe => {
                    let Some(p) = w.probe.clone() else { continue };
                    in_flight.insert(e.id.clone(), Instant::now());
                    let (tx, id, created, cwd) = (
                        tx.clone(),
                        e.id.clone(),
                        w.created_at.clone(),
                        e.cwd.clone(),
                    );
                    std::thread::spawn(move || {
                        let dir = if Path::new(&cwd).is_dir() {
                            cwd
                        } else {
                            "/".into()
                        };
                        let r = crate::adapters::probe::run(&p, PROBE_TIMEOUT, Path::new(&dir));
                        let _ = tx.send(Msg::Probe(id, created, r));
                    });
                }
                Due::Sleep(_) | Due::Nothing => {}
            }
        }
        let mut arrived: Vec<Msg> = stash.take().into_iter().collect();
        arrived.extend(rx.try_iter());
        for m in arrived {
            changed = true;
            let (id, created, r) = match m {
                Msg::Fired(id) => {
                    in_flight.remove(&id);
                    continue;
                }
                Msg::Pressure => {
                    stash = Some(Msg::Pressure);
                    continue;
                }
                Msg::Probe(id, created, r) => (id, created, r),
            };
            let mut fire_reason = None;
            let now = Timestamp::now();
            update(ctx, &id, &created, |w| {
                fire_reason = wake::after_probe(w, &r, now)
            });
            match (fire_reason, ctx.ledger.load(&id)) {
                (Some(reason), Ok(Some(e))) => spawn_fire(&tx, &gate, e, reason, Some(now), None),
                _ => {
                    in_flight.remove(&id);
                }
            }
        }
        if changed {
            entries = ctx.ledger.all().0;
            stamp = dir_stamp(&parked_dir);
            continue;
        }
        // Sleep to the next due time, in short steps so a new wake-up (a changed parked/) or a
        // finished probe is seen within a tick.
        let next = todo
            .iter()
            .filter(|e| !in_flight.contains_key(&e.id))
            .filter_map(|e| e.wake.as_ref()?.next_due())
            .min();
        let wait = next
            .map(|n| {
                let ms = n.as_millisecond() - Timestamp::now().as_millisecond();
                Duration::from_millis(ms.max(0) as u64)
            })
            .unwrap_or(TICK)
            .min(TICK);
        // A probe result ends the wait at once.
        if let Ok(m) = rx.recv_timeout(wait.max(Duration::from_millis(10))) {
            stash = Some(m);
        }
    }
    let _ = std::fs::remove_file(pid_path(&home));
    eprintln!(
        "park daemon: nothing pending, the autopilot is off and no multiplexer to journal; exiting"
    );
    ExitStatus::Success
}

/// Whether the journal pass is due: its time has come, or a process it watches has ended.
fn journal_due(now: Instant, next: Instant, watched: &[u32], exists: &dyn Fn(u32) -> bool) -> bool {
    now >= next || watched.iter().any(|p| !exists(*p))
}

/// The pids a pass's live records bring to watch: only those that run now (a record kept live
/// from an earlier pass whose process is gone would make every tick a pass).
fn watch_list(pids: impl Iterator<Item = u32>, exists: &dyn Fn(u32) -> bool) -> Vec<u32> {
    pids.filter(|p| *p != 0 && exists(*p)).collect()
}

/// The journal's side of the daemon loop: a pass every [`crate::ops::journal::INTERVAL`] while the
/// journal is on; the daemon stays for it while the last pass saw a multiplexer with panes (a
/// server that died leaves nothing to watch: its sessions are in the journal as lost).
struct JournalState {
    on: bool,
    next: Instant,
    /// The last pass saw panes (or has not run yet).
    saw_panes: bool,
    /// The last error logged, so a broken journal is said once, not every pass.
    said: Option<String>,
    /// Lost sessions at the last pass: the status line is pushed when the count changes.
    lost: usize,
    /// The processes of the sessions the last pass recorded live. One that ends brings the next
    /// pass forward: an `/exit` leaves the journal within a tick, not a pass, so a crash in the
    /// seconds after it does not bring the exited session back.
    watched: Vec<u32>,
}

impl JournalState {
    fn new(home: &Path) -> Self {
        JournalState {
            on: crate::ops::journal::enabled(home),
            next: Instant::now(),
            saw_panes: true,
            said: None,
            lost: 0,
            watched: vec![],
        }
    }

    fn watching(&self) -> bool {
        self.on && self.saw_panes
    }

    fn run_if_due(&mut self, ctx: &Ctx) {
        if !self.on {
            return;
        }
        if !journal_due(Instant::now(), self.next, &self.watched, &|p| {
            crate::adapters::platform::pid_exists(p)
        }) {
            return;
        }
        self.next = Instant::now() + crate::ops::journal::INTERVAL;
        let pass = crate::ops::journal::pass_seeing(ctx);
        // The pass's code and heap are not needed for the next 10 s (support::mem).
        crate::support::mem::shed();
        match pass {
            Ok(crate::ops::journal::Pass {
                out,
                saw_panes,
                watch,
            }) => {
                // Every record held live, kept ones too (an agent the pass caught ending, after
                // it removed its status file, leaves within a tick, not a pass). Only processes
                // that run now: one gone since must not bring every tick's pass.
                self.watched = watch_list(watch.into_iter(), &|p| {
                    crate::adapters::platform::pid_exists(p)
                });
                self.saw_panes = saw_panes;
                self.said = None;
                if out.lost.len() != self.lost {
                    self.lost = out.lost.len();
                    ctx.publish_status();
                }
                for w in &out.warnings {
                    eprintln!("park daemon: journal: {w}");
                }
            }
            Err(e) => {
                // A failing pass is not retried every tick: the next one is a pass away.
                self.watched.clear();
                let msg = e.to_string();
                if self.said.as_deref() != Some(msg.as_str()) {
                    eprintln!("park daemon: journal: {msg}");
                    self.said = Some(msg);
                }
                // A journal that cannot be written keeps nothing alive.
                self.saw_panes = false;
            }
        }
    }
}

/// At most one pressure-triggered pass this often: a park takes a moment to show in MemAvailable.
pub const PRESSURE_GAP: Duration = Duration::from_secs(2);

/// The autopilot's side of the daemon loop: the config (re-read when its file changes), when the
/// next pass is due, and the pressure check.
struct AutoState {
    config: Option<crate::store::config::Config>,
    stamp: Vec<Option<SystemTime>>,
    next: Instant,
    last: Option<Instant>,
}

fn config_stamp(home: &Path) -> Vec<Option<SystemTime>> {
    let mut files = vec![crate::store::config::path(home)];
    if let Some((p, _)) = crate::store::config::locate_from(|k| std::env::var(k).ok()) {
        files.push(p);
    }
    files.iter().map(|f| dir_stamp(f)).collect()
}

impl AutoState {
    fn new(ctx: &Ctx) -> AutoState {
        let mut a = AutoState {
            config: None,
            stamp: vec![],
            next: Instant::now(),
            last: None,
        };
        a.stamp = vec![Some(SystemTime::UNIX_EPOCH)];
        a.reload(ctx);
        a
    }

    fn reload(&mut self, ctx: &Ctx) {
        let now = config_stamp(&ctx.ledger.home);
        if now == self.stamp {
            return;
        }
        self.stamp = now;
        match crate::store::config::load(&ctx.ledger.home) {
            Ok(c) => {
                if c.auto.active() {
                    eprintln!(
                        "park daemon: autopilot {} (idle {}, every {}s)",
                        c.auto.mode.as_str(),
                        crate::support::duration::brief(Some(c.auto.idle.as_secs())),
                        c.auto.interval.as_secs()
                    );
                }
                // A changed config is looked at now, not an interval later.
                self.next = Instant::now();
                self.config = Some(c);
                // Suggestions stand only under the settings that made them: push the status
                // line now, so `mode = "off"` clears a `❄ 1?` at once.
                ctx.publish_status();
            }
            Err(e) => {
                eprintln!("park daemon: config: {e}; nothing automatic runs until it is fixed");
                self.config = None;
                ctx.publish_status();
            }
        }
    }

    fn on(&self) -> bool {
        self.config.as_ref().is_some_and(|c| c.auto.active())
    }

    /// Why a pass should run now, if one should.
    fn due(&self, ctx: &Ctx, stash: Option<&Msg>) -> Option<&'static str> {
        let c = self.config.as_ref().filter(|c| c.auto.active())?;
        let rested = self.last.is_none_or(|l| l.elapsed() >= PRESSURE_GAP);
        if rested {
            if matches!(stash, Some(Msg::Pressure)) {
                return Some("pressure");
            }
            if let (Some(f), Some((avail, total))) =
                (c.auto.min_available, ctx.platform.memory_now())
            {
                if avail < f.bytes(total) {
                    return Some("pressure");
                }
            }
        }
        (Instant::now() >= self.next).then_some("interval")
    }

    fn run(&mut self, ctx: &Ctx, trigger: &'static str) {
        let Some(c) = self.config.clone() else { return };
        let t0 = Instant::now();
        match crate::ops::auto::pass(ctx, &c, trigger) {
            Ok(r) => {
                let parked = r
                    .agents
                    .iter()
                    .filter(|a| a.decision == park_protocol::auto::Decision::Parked)
                    .count();
                if parked > 0 || trigger == "pressure" {
                    eprintln!(
                        "park daemon: {trigger} pass: parked {parked}, suggested {} ({} ms)",
                        r.suggested(),
                        t0.elapsed().as_millis()
                    );
                }
            }
            Err(e) => eprintln!("park daemon: {trigger} pass: {e}"),
        }
        self.last = Some(Instant::now());
        self.next = Instant::now() + c.auto.interval;
    }
}

/// Arms a PSI trigger on `/proc/pressure/memory` (some 150 ms of stall in a 2 s window) and turns
/// each event into [`Msg::Pressure`]. Where the kernel has no PSI or refuses the trigger, the
/// per-tick MemAvailable check alone drives the pressure passes.
fn psi_watch(tx: &mpsc::Sender<Msg>) {
    #[cfg(target_os = "linux")]
    {
        use std::io::Write;
        use std::os::fd::AsRawFd;
        let Ok(mut f) = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/proc/pressure/memory")
        else {
            return;
        };
        if f.write_all(b"some 150000 2000000\0").is_err() {
            return;
        }
        let tx = tx.clone();
        std::thread::spawn(move || loop {
            let mut pfd = libc::pollfd {
                fd: f.as_raw_fd(),
                events: libc::POLLPRI,
                revents: 0,
            };
            // SAFETY: one valid pollfd for the duration of the call.
            let n = unsafe { libc::poll(&mut pfd, 1, -1) };
            if n < 0 || pfd.revents & libc::POLLERR != 0 {
                return;
            }
            if pfd.revents & libc::POLLPRI != 0 && tx.send(Msg::Pressure).is_err() {
                return;
            }
        });
    }
    #[cfg(not(target_os = "linux"))]
    let _ = tx;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An exit brings the pass forward once: the dead pid is not watched again, so a pass does
    /// not run every tick.
    #[test]
    fn an_ended_process_brings_one_pass_forward_and_is_not_watched_again() {
        let now = Instant::now();
        let later = now + Duration::from_secs(10);
        let alive = |p: u32| p != 7;
        assert!(
            !journal_due(now, later, &[5, 6], &alive),
            "all running: wait"
        );
        assert!(journal_due(now, later, &[5, 7], &alive), "7 ended: now");
        assert!(journal_due(later, later, &[], &alive), "the regular pass");
        let watched = watch_list([5, 7, 0, 6].into_iter(), &alive);
        assert_eq!(watched, vec![5, 6], "dead and unknown pids are not watched");
        assert!(!journal_due(now, later, &watched, &alive));
    }
}
