//! One scan: the process table × the pane map × agent definitions → `Found` agents.
//!
//! Contract: one process-table pass, environ only for agent roots, then one multiplexer snapshot
//! (`Mux::snapshot`: on tmux a single client for the pane map and the screens of the panes the
//! agents inherited, read while the agents' files are parsed); a pane bound any other way is
//! captured after it. The scan only reads; it never signals, types or writes. A failed pane
//! listing is recorded in `pane_error` (reads go on, parks refuse).

pub mod live;
pub mod servers;

use crate::adapters::mux::{Mux, Pane};
use crate::adapters::platform::proctree::{program_of, ProcTable};
use crate::adapters::platform::{env_get, Mem, Platform};
use crate::agents::screen::{self, ScreenReading};
use crate::agents::transcript::TranscriptInfo;
use crate::agents::{self, Agent, AgentProc, Identity};
use park_protocol::Status;
use std::time::SystemTime;

/// A transcript written this recently while the status says idle still counts as a turn in flight.
pub(crate) const FRESH_WRITE_SECS: u64 = 20;

#[derive(Debug, Clone)]
pub struct Found {
    pub proc: AgentProc,
    pub main_start: u64,
    pub pane: Option<Pane>,
    /// How the pane was bound: `env` (TMUX_PANE / ZELLIJ_PANE_ID), `ancestry`, or `none`.
    pub bind: &'static str,
    pub ident: Identity,
    /// The kill set: (pid, start ticks), parents first; the Codex daemon and never-kill programs excluded.
    pub tree: Vec<(u32, u64)>,
    pub spared: Vec<(u32, String)>,
    pub mem: Mem,
    pub status: Status,
    pub status_why: Option<String>,
    pub draft: Option<String>,
    pub screen: Option<ScreenReading>,
    pub tinfo: Option<TranscriptInfo>,
    pub idle_secs: Option<u64>,
    pub title: String,
    pub cwd: String,
    pub flags: Vec<String>,
    pub dropped_flags: Vec<String>,
    /// The agent is the pane's own process (no interactive shell between pane and agent).
    pub pane_owned: bool,
    /// The agent's process group is its terminal's foreground group (it is not suspended or
    /// in the background).
    pub holds_terminal: bool,
    /// `ident.transcript` is a file now: read by the scan so the guards never touch the disk.
    pub transcript_present: bool,
    /// `cwd` is a directory now (same reason).
    pub cwd_present: bool,
    /// The agent's version, from the `package.json` beside its binary (`None`: not readable).
    pub version: Option<String>,
}

/// Who is running park: used by the not-self guard.
#[derive(Debug, Clone, Default)]
pub struct Caller {
    pub pid: u32,
    pub ancestry: Vec<u32>,
    /// The pane park itself runs in (`mux::here`), when park talks to that pane's server.
    pub pane: Option<String>,
    /// Session ids of agents park is running under (e.g. an agent ran `park` from its tool shell).
    pub session_ids: Vec<String>,
}

pub struct Scan {
    pub table: ProcTable,
    pub panes: Vec<Pane>,
    pub pane_error: Option<String>,
    /// The pane map failed only because tmux, never asked for, runs no server (and zellij lists
    /// no pane): see [`pane_map_is_news`].
    pub tmux_absent: bool,
    pub server: Option<String>,
    pub found: Vec<Found>,
    pub caller: Caller,
    pub warnings: Vec<String>,
}

/// Programs park never kills even inside an agent's tree: editors, pagers, git, search tools.
pub(crate) const NEVER_KILL: &[&str] = &[
    "vim", "nvim", "vi", "emacs", "nano", "hx", "helix", "kak", "micro", "less", "more", "most",
    "git", "rg", "grep", "fd", "find", "tig", "lazygit",
];
pub(crate) const SHELLS: &[&str] = &[
    "bash", "zsh", "fish", "sh", "dash", "ksh", "tcsh", "csh", "nu", "xonsh", "elvish",
];

pub fn is_interactive_shell(argv: &[String]) -> bool {
    let Some((prog, i)) = program_of(argv) else {
        return false;
    };
    let prog = prog.trim_start_matches('-');
    SHELLS.contains(&prog) && !argv[i + 1..].iter().any(|a| a == "-c")
}

pub fn scan(platform: &dyn Platform, mux: &dyn Mux, with_screens: bool) -> std::io::Result<Scan> {
    scan_with(platform, mux, with_screens, None)
}

/// `scan`, reusing USS/PSS readings younger than `MEM_CACHE_SECS` from `mem_cache` (views only;
/// the park transaction always scans fresh).
pub fn scan_with(
    platform: &dyn Platform,
    mux: &dyn Mux,
    with_screens: bool,
    mem_cache: Option<&std::path::Path>,
) -> std::io::Result<Scan> {
    let table = {
        let _t = crate::support::profile::span("scan.processes");
        ProcTable::new(platform.processes()?)
    };
    let agents = {
        let _t = crate::support::profile::span("scan.find-agents");
        agents::find_agents(&table, platform)
    };
    // The panes the agents say they run in (their inherited ids): their screens come in the same
    // multiplexer call as the pane map. A pane bound any other way is captured after.
    let want: Vec<(String, bool)> = if with_screens {
        agents.iter().flat_map(predicted_panes).collect()
    } else {
        vec![]
    };
    let me = std::process::id();
    let ancestry = table.ancestry(me);
    // The multiplexer call is mostly waiting on another process: meanwhile, everything about each
    // agent that needs no pane (its identity file, transcript, tree and memory).
    let (snapshot, mut found) = std::thread::scope(|sc| {
        let snap = sc.spawn(|| {
            let _t = crate::support::profile::span("scan.mux");
            mux.snapshot(table.all(), &want)
        });
        let _t = crate::support::profile::span("scan.agents");
        let mut found: Vec<Found> = agents
            .into_iter()
            .filter_map(|a| paneless(a, &table, &ancestry, platform))
            .collect();
        {
            let _t = crate::support::profile::span("scan.tree-memory");
            tree_memory(platform, &mut found, mem_cache);
        }
        drop(_t);
        (snap.join(), found)
    });
    let mut warnings = vec![];
    let mut tmux_absent = false;
    let (panes, pane_error, mut screens) = match snapshot {
        Ok(crate::adapters::mux::Snapshot {
            panes: Ok(p),
            screens,
        }) => (p, None, screens),
        Ok(crate::adapters::mux::Snapshot { panes: Err(e), .. }) => {
            tmux_absent = matches!(e, crate::adapters::mux::MuxError::Absent(..));
            (vec![], Some(e.to_string()), Default::default())
        }
        Err(_) => (
            vec![],
            Some("listing panes panicked".to_string()),
            Default::default(),
        ),
    };
    let server = if let Some(p) = panes.first() {
        Some(p.server.clone())
    } else if pane_error.is_none() {
        mux.server_id().ok()
    } else {
        None
    };
    // The map just read says which servers park talks to; ask the multiplexer only without one.
    let caller_pane = crate::adapters::mux::here(platform)
        .filter(|h| {
            panes.iter().any(|p| p.server == h.server)
                || (panes.is_empty() && mux.serves(&h.server))
        })
        .map(|h| h.pane);

    let _t = crate::support::profile::span("scan.screens");
    for f in found.iter_mut() {
        let (pane, bind) = bind_pane(&f.proc, &table, &panes, server.as_deref());
        f.pane = pane;
        f.bind = bind;
    }
    if with_screens {
        let missed: Vec<(String, bool)> = found
            .iter()
            .filter_map(|f| {
                f.pane
                    .as_ref()
                    .map(|p| (p, agents::of(f.proc.agent).spec().screen_escapes))
            })
            .filter(|(p, _)| !screens.contains_key(&p.id))
            .map(|(p, codex)| (p.id.clone(), codex))
            .collect();
        if !missed.is_empty() {
            for ((id, _), text) in missed.iter().zip(mux.capture_many(&missed)) {
                if let Some(t) = text {
                    screens.insert(id.clone(), t);
                }
            }
        }
    }
    if with_screens {
        reread_half_frames(mux, &found, &mut screens);
    }
    for f in found.iter_mut() {
        let screen_text = f.pane.as_ref().and_then(|p| screens.remove(&p.id));
        with_pane(f, &table, screen_text.as_deref(), with_screens, platform);
    }
    drop(_t);
    // What the guards need to know of the disk is read here, once, so they stay pure.
    let mut versions = Versions::default();
    for f in found.iter_mut() {
        f.transcript_present = f
            .ident
            .transcript
            .as_deref()
            .is_some_and(std::path::Path::is_file);
        f.cwd_present = !f.cwd.is_empty() && std::path::Path::new(&f.cwd).is_dir();
        f.version = versions.of(&f.proc, platform);
    }
    // Agents whose tree contains park itself: their sessions are the caller's own.
    let session_ids = found
        .iter()
        .filter(|f| {
            f.tree.iter().any(|(p, _)| ancestry.contains(p)) || ancestry.contains(&f.proc.root)
        })
        .filter_map(|f| f.ident.session_id.clone())
        .chain(session_ids_in_env(
            &platform.environ(me).unwrap_or_default(),
        ))
        .collect();
    if let Some(e) = &pane_error {
        warnings.push(pane_map_warning(e));
    }
    found.sort_by(|a, b| {
        pane_sort_key(a.pane.as_ref())
            .cmp(&pane_sort_key(b.pane.as_ref()))
            .then(a.proc.root.cmp(&b.proc.root))
    });
    Ok(Scan {
        table,
        panes,
        pane_error,
        tmux_absent,
        server,
        found,
        caller: Caller {
            pid: me,
            ancestry,
            pane: caller_pane,
            session_ids,
        },
        warnings,
    })
}

/// The warning a scan carries when the pane map could not be read.
pub fn pane_map_warning(error: &str) -> String {
    format!("pane map unavailable ({error}): nothing will be parked")
}

/// Whether the pane map's failure is worth a warning beside the parked entries on `servers`: not
/// when tmux was never asked for and simply runs no server while every entry is a zellij one
/// (issue 35 item 4: a dead zellij session is said with the way back; a second warning about a
/// tmux nobody uses was noise).
pub fn pane_map_is_news<'a>(tmux_absent: bool, mut servers: impl Iterator<Item = &'a str>) -> bool {
    let mut any = false;
    let all_zellij = servers.all(|s| {
        any = true;
        crate::adapters::mux::zellij::is_server(s)
    });
    !(tmux_absent && any && all_zellij)
}

/// Running agents' versions, read beside their executables or scripts (never by running them),
/// once per binary and program token in a scan: dozens of panes usually run one or two installs.
/// Across scans, `release` remembers each binary's version until the binary is written anew.
#[derive(Default)]
struct Versions(
    std::collections::HashMap<(Agent, Vec<std::path::PathBuf>, String), Option<String>>,
);

impl Versions {
    fn of(&mut self, a: &AgentProc, platform: &dyn Platform) -> Option<String> {
        let exes: Vec<std::path::PathBuf> = [a.main, a.root]
            .iter()
            .filter_map(|p| platform.exe(*p))
            .collect();
        let mut program = agents::of(a.agent)
            .spec()
            .program_for(a.argv.get(a.prog_index)?);
        // `./claude` names another file in another cwd.
        if program.contains('/') && !program.starts_with('/') {
            if let Some(cwd) = platform.cwd(a.root) {
                program = cwd.join(&program).to_string_lossy().into_owned();
            }
        }
        let path = env_get(&a.env, "PATH");
        // A bare name is looked up on the process's own PATH: part of what it names.
        let key = (
            a.agent,
            exes,
            if program.contains('/') {
                program.clone()
            } else {
                format!("{program}\0{}", path.unwrap_or_default())
            },
        );
        if let Some(v) = self.0.get(&key) {
            return v.clone();
        }
        let cands = agents::release::candidates(&key.1, &program, None, path);
        let v = agents::of(a.agent).spec().release.version_near(&cands);
        self.0.insert(key, v.clone());
        v
    }
}

/// The pane handles an agent inherited (`TMUX_PANE`; zellij's pane id and session), with
/// whether its screen is wanted with escapes (Codex).
fn predicted_panes(a: &AgentProc) -> Vec<(String, bool)> {
    let codex = agents::of(a.agent).spec().screen_escapes;
    let mut v = vec![];
    if let Some(id) = env_get(&a.env, "TMUX_PANE") {
        v.push((id.to_string(), codex));
    }
    if let (Some(id), Some(session)) = (
        env_get(&a.env, "ZELLIJ_PANE_ID").and_then(|i| i.parse::<u32>().ok()),
        env_get(&a.env, "ZELLIJ_SESSION_NAME"),
    ) {
        v.push((crate::adapters::mux::zellij::handle(id, session), codex));
    }
    v
}

/// Everything about one agent that needs neither its pane nor its screen. Claude's identity comes
/// from its files; Codex's also reads the pane's title and screen, so it waits for `with_pane`.
fn paneless(
    a: AgentProc,
    table: &ProcTable,
    ancestry: &[u32],
    platform: &dyn Platform,
) -> Option<Found> {
    // park's own ancestry chain may contain an agent (an agent ran park); it is still listed.
    let main_start = table.get(a.main)?.start_ticks;
    let holds_terminal = table
        .get(a.root)
        .is_some_and(|r| r.tpgid <= 0 || r.tpgid as u32 == r.pgid);
    let kind = agents::of(a.agent);
    let by_files = match kind.spec().identify {
        agents::spec::Identify::Files(identify) => Some(identify(&a, main_start, platform)),
        agents::spec::Identify::Pane(_) => None,
    };
    let (ident, tinfo) = match by_files {
        Some(ident) => {
            let tinfo = kind.read_transcript(&ident);
            (ident, tinfo)
        }
        None => (Identity::untargetable("not identified yet"), None),
    };
    let (tree, spared) = kill_set(table, a.root, ancestry);
    let (flags, dropped_flags) = kind.launch_flags(&a, main_start, platform);
    Some(Found {
        proc: a,
        main_start,
        pane: None,
        bind: "none",
        ident,
        tree,
        spared,
        mem: Mem::default(),
        status: Status::Unknown,
        status_why: None,
        draft: None,
        screen: None,
        tinfo,
        idle_secs: None,
        title: String::new(),
        cwd: String::new(),
        flags,
        dropped_flags,
        pane_owned: false,
        holds_terminal,
        transcript_present: false,
        cwd_present: false,
        version: None,
    })
}

/// How often, and how far apart, a screen that shows neither the agent's composer nor a dialog
/// is captured again before it counts: a TUI that redraws its whole frame (OpenCode) can be caught
/// half drawn, and that frame reads as unknown — a park refused for nothing.
const REREADS: u32 = 2;
const REREAD_GAP: std::time::Duration = std::time::Duration::from_millis(120);

/// Captures again, up to [`REREADS`] times, the screens whose reading is unknown (no composer, no
/// dialog); a later frame that shows the composer or a dialog replaces the first. A screen that
/// stays unknown stays as first read.
fn reread_half_frames(
    mux: &dyn Mux,
    found: &[Found],
    screens: &mut std::collections::HashMap<String, String>,
) {
    let unsure = |screens: &std::collections::HashMap<String, String>| -> Vec<(String, bool)> {
        found
            .iter()
            .filter_map(|f| {
                let p = f.pane.as_ref()?;
                let spec = agents::of(f.proc.agent).spec();
                let r = (spec.read_screen)(screens.get(&p.id)?);
                (!r.composer_seen && r.waiting.is_none())
                    .then(|| (p.id.clone(), spec.screen_escapes))
            })
            .collect()
    };
    let mut want = unsure(screens);
    for _ in 0..REREADS {
        if want.is_empty() {
            return;
        }
        std::thread::sleep(REREAD_GAP);
        for ((id, _), text) in want.iter().zip(mux.capture_many(&want)) {
            if let Some(t) = text {
                screens.insert(id.clone(), t);
            }
        }
        want = unsure(screens);
    }
}

/// The rest, once the agent is bound to its pane (`f.pane`) and its screen is read.
fn with_pane(
    f: &mut Found,
    table: &ProcTable,
    screen_text: Option<&str>,
    with_screens: bool,
    platform: &dyn Platform,
) {
    let a = &f.proc;
    f.pane_owned = f.pane.as_ref().is_some_and(|p| {
        let pane_proc = table.get(p.pid);
        // The agent is the pane's own process, or the pane runs a non-interactive wrapper around it.
        p.pid == a.root
            || pane_proc.is_some_and(|pp| {
                !is_interactive_shell(&pp.argv) && table.ancestry(a.root).contains(&p.pid)
            })
    });
    let kind = agents::of(a.agent);
    let title = f.pane.as_ref().map(|p| p.title.as_str()).unwrap_or("");
    if let agents::spec::Identify::Pane(identify) = kind.spec().identify {
        let ident = identify(
            a,
            title,
            &screen::strip_ansi(screen_text.unwrap_or("")),
            platform,
        );
        f.ident = ident;
        f.tinfo = kind.read_transcript(&f.ident);
    }
    let reading = screen_text.map(kind.spec().read_screen);
    let fresh_write = f
        .ident
        .transcript
        .as_ref()
        .and_then(|t| std::fs::metadata(t).ok()?.modified().ok())
        .and_then(|m| SystemTime::now().duration_since(m).ok())
        .is_some_and(|d| d.as_secs() < FRESH_WRITE_SECS);
    let (status, status_why) = derive_status(
        a.agent,
        f.ident.status_file.as_deref(),
        reading.as_ref(),
        f.tinfo.as_ref(),
        fresh_write,
        with_screens,
    );
    f.draft = reading.as_ref().and_then(|r| r.draft.clone());
    f.status = if status == Status::Idle && f.draft.is_some() {
        Status::Draft
    } else {
        status
    };
    f.status_why = status_why;
    if a.background {
        // What the guards say about it, in the agent's own words (how to reach it).
        f.status_why = Some(
            agents::of(a.agent)
                .spec()
                .background_note(f.ident.job.as_deref()),
        );
        // No screen to read: its own status file is all there is (shown, never acted on).
        f.status = match f.ident.status_file.as_deref() {
            Some("idle") => Status::Idle,
            Some("busy") => Status::Busy,
            Some("waiting") => Status::Waiting,
            _ => Status::Unknown,
        };
    }
    f.screen = reading;
    f.idle_secs = idle_secs(f.tinfo.as_ref(), jiff::Timestamp::now());
    f.cwd = f
        .ident
        .cwd
        .clone()
        .or_else(|| {
            platform
                .cwd(a.main)
                .map(|p| p.to_string_lossy().into_owned())
        })
        .unwrap_or_default();
    let kind = crate::agents::of(a.agent);
    f.title = shown_title(
        f.tinfo.as_ref().and_then(|t| t.ai_title.as_deref()),
        f.pane.as_ref().map(|p| p.title.as_str()),
        f.ident.name.as_deref(),
        |t| kind.spec().generic_title.is_some_and(|g| g(t)),
    );
}

/// The session ids that `env` names through any agent's caller variables
/// ([`agents::AgentKind::caller_session_vars`]): park run from such a tool command (even detached
/// from the agent's tree with `setsid`/`nohup`) is that session's caller.
pub fn session_ids_in_env(env: &[(String, String)]) -> Vec<String> {
    agents::all()
        .iter()
        .flat_map(|k| k.spec().caller_session_vars)
        .filter_map(|k| crate::adapters::platform::env_get(env, k))
        .filter_map(crate::agents::transcript::valid_session_id)
        .collect()
}

/// How long a process's USS/PSS from `smaps_rollup` is reused by `ls` and the picker.
pub(crate) const MEM_CACHE_SECS: i64 = 60;

/// Memory of every agent's tree. RSS and anonymous memory come from `/proc/<pid>/status` counters
/// (cheap, always fresh). USS/PSS need `smaps_rollup`, which walks the page tables (~10 ms for a
/// 280 MB agent): with a cache file they are reused for `MEM_CACHE_SECS` per (pid, start time), and
/// the reads that remain are spread over the machine's cores.
fn tree_memory(platform: &dyn Platform, found: &mut [Found], cache_file: Option<&std::path::Path>) {
    type Cache = std::collections::HashMap<String, (u64, u64, i64)>;
    let now = jiff::Timestamp::now().as_second();
    let mut cache: Cache = cache_file
        .and_then(|p| std::fs::read(p).ok())
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    let key = |pid: u32, start: u64| format!("{pid}:{start}");
    let mut misses: Vec<(u32, u64)> = vec![];
    for f in found.iter_mut() {
        for (pid, start) in &f.tree {
            if let Some((rss, anon)) = platform.status_mem(*pid) {
                f.mem.rss += rss;
                f.mem.anon += anon;
            }
            match cache.get(&key(*pid, *start)) {
                Some((pss, uss, at)) if cache_file.is_some() && now - at < MEM_CACHE_SECS => {
                    f.mem.pss += pss;
                    f.mem.uss += uss;
                }
                _ => misses.push((*pid, *start)),
            }
        }
    }
    if misses.is_empty() {
        return;
    }
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, 8);
    let chunk = misses.len().div_ceil(threads).max(1);
    let read: Vec<((u32, u64), Mem)> = std::thread::scope(|s| {
        let handles: Vec<_> = misses
            .chunks(chunk)
            .map(|part| {
                s.spawn(move || {
                    part.iter()
                        .filter_map(|k| platform.memory(k.0).map(|m| (*k, m)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    });
    for f in found.iter_mut() {
        for (k, m) in &read {
            if f.tree.contains(k) {
                f.mem.pss += m.pss;
                f.mem.uss += m.uss;
            }
        }
    }
    if let Some(path) = cache_file {
        cache.retain(|_, (_, _, at)| now - *at < MEM_CACHE_SECS);
        for ((pid, start), m) in &read {
            cache.insert(key(*pid, *start), (m.pss, m.uss, now));
        }
        if let Some(dir) = path.parent() {
            if crate::support::fs::private_dir(dir).is_ok() {
                let _ = crate::support::fs::write_atomic(
                    path,
                    serde_json::to_string(&cache).unwrap_or_default().as_bytes(),
                );
            }
        }
    }
}

fn pane_sort_key(p: Option<&Pane>) -> (bool, String, u32, u32) {
    match p {
        Some(p) => (false, p.session.clone(), p.window_index, p.pane_index),
        None => (true, String::new(), 0, 0),
    }
}

/// `TMUX` is `socket_path,server_pid,session`; a pane id only means something on its own server.
pub(crate) fn same_server(tmux_env: Option<&str>, server: Option<&str>) -> bool {
    match (tmux_env.and_then(|t| t.split(',').next()), server) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

/// Binds an agent to its pane: the pane id it inherited — `TMUX_PANE` (on this tmux server) or
/// `ZELLIJ_PANE_ID` + `ZELLIJ_SESSION_NAME` (under this zellij socket root) — then pane-pid
/// ancestry. An agent can carry both sets (zellij run inside a tmux pane leaks the outer tmux's
/// variables into every zellij pane); the multiplexer server nearest among its ancestors wins.
pub(crate) fn bind_pane(
    a: &AgentProc,
    table: &ProcTable,
    panes: &[Pane],
    server: Option<&str>,
) -> (Option<Pane>, &'static str) {
    // A background worker's pane is no pane: the supervisor that started it may still carry the
    // launching pane's TMUX_PANE, and whatever attaches to it is only a client.
    if a.background && !crate::support::fault::disabled("background-unbound") {
        return (None, "none");
    }
    let chain = table.ancestry(a.root);
    let by_tmux = || -> Option<Pane> {
        if !same_server(env_get(&a.env, "TMUX"), server) {
            return None;
        }
        let id = env_get(&a.env, "TMUX_PANE")?;
        panes.iter().find(|p| p.id == id).cloned()
    };
    let by_zellij = || -> Option<Pane> {
        let id: u32 = env_get(&a.env, "ZELLIJ_PANE_ID")?.parse().ok()?;
        let session = env_get(&a.env, "ZELLIJ_SESSION_NAME")?;
        let root = env_get(&a.env, "ZELLIJ_SOCKET_DIR")
            .filter(|d| !d.is_empty())
            .map(std::path::PathBuf::from)
            .unwrap_or_else(crate::adapters::mux::zellij::socket_root);
        let want = crate::adapters::mux::zellij::handle(id, session);
        let srv = crate::adapters::mux::zellij::server_id_for(&root);
        panes
            .iter()
            .find(|p| p.id == want && p.server == srv)
            .cloned()
    };
    let zellij_nearer = chain
        .iter()
        .filter_map(|pid| table.get(*pid))
        .find(|p| p.comm.starts_with("tmux") || p.comm == "zellij")
        .is_some_and(|p| p.comm == "zellij");
    let bound = if zellij_nearer {
        by_zellij().or_else(by_tmux)
    } else {
        by_tmux().or_else(by_zellij)
    };
    if let Some(p) = bound {
        return (Some(p), "env");
    }
    for pid in chain {
        if let Some(p) = panes.iter().find(|p| p.pid == pid) {
            return (Some(p.clone()), "ancestry");
        }
    }
    (None, "none")
}

/// (pid, start ticks), parents first.
pub(crate) type KillSet = Vec<(u32, u64)>;

/// The processes a park kills: the agent's descendants by ppid, minus the shared Codex daemon's
/// subtree, never-kill programs, and anything in park's own ancestry.
pub fn kill_set(
    table: &ProcTable,
    root: u32,
    caller_ancestry: &[u32],
) -> (KillSet, Vec<(u32, String)>) {
    let prog_of = |p: &crate::adapters::platform::ProcInfo| {
        program_of(&p.argv)
            .map(|(n, _)| n)
            .unwrap_or_else(|| p.comm.clone())
    };
    // The shared daemon and never-kill programs are pruned with their whole subtree (an editor
    // keeps its language server); the walk only reads, the spared list is built after it.
    let prune = |p: &crate::adapters::platform::ProcInfo| {
        agents::shared_process(p) || NEVER_KILL.contains(&prog_of(p).as_str())
    };
    let tree = table.tree(root, &prune);
    let mut spared: Vec<(u32, String)> = tree
        .iter()
        .flat_map(|pid| table.children(*pid).iter())
        .filter_map(|c| table.get(*c))
        .filter(|c| !agents::shared_process(c) && NEVER_KILL.contains(&prog_of(c).as_str()))
        .map(|c| (c.pid, prog_of(c)))
        .collect();
    let mut out = vec![];
    for pid in tree {
        let Some(p) = table.get(pid) else { continue };
        if caller_ancestry.contains(&pid) {
            spared.push((pid, format!("{} (runs park)", prog_of(p))));
        } else {
            out.push((pid, p.start_ticks));
        }
    }
    (out, spared)
}

/// Seconds since the last real turn; `None` when unknown, or when the read was unsure (it may
/// have missed the latest turn, and an idle time that is too long would select the session for
/// `park --idle`).
pub fn idle_secs(tinfo: Option<&TranscriptInfo>, now: jiff::Timestamp) -> Option<u64> {
    let t = tinfo?;
    if t.unsure.is_some() && !crate::support::fault::disabled("transcript-unsure-idle") {
        return None;
    }
    let ts = t.last_real_turn?;
    Some(now.as_second().saturating_sub(ts.as_second()).max(0) as u64)
}

/// The title a row shows: the transcript's, else the pane's — unless the pane's is empty or the
/// agent's generic one (Claude 2.1.332 keeps `✳ Claude Code`): then the session's own name,
/// which tells its panes apart.
pub fn shown_title(
    transcript: Option<&str>,
    pane: Option<&str>,
    name: Option<&str>,
    generic: impl Fn(&str) -> bool,
) -> String {
    let vague = pane.is_none_or(|t| t.trim().is_empty() || generic(t));
    transcript
        .or(if vague { name } else { None })
        .or(pane)
        .unwrap_or_default()
        .to_string()
}

/// The state verdict, in trust order: status file, screen, transcript tail. Unknown counts as busy.
pub fn derive_status(
    agent: Agent,
    status_file: Option<&str>,
    screen: Option<&ScreenReading>,
    tinfo: Option<&TranscriptInfo>,
    fresh_write: bool,
    screens_read: bool,
) -> (Status, Option<String>) {
    if let Some(r) = screen {
        if let Some(w) = &r.waiting {
            // The readers' generic word for an untitled dialog says nothing the prefix does not.
            let why = if w == "dialog open" {
                "screen shows a dialog".to_string()
            } else {
                format!("screen shows a dialog: {w}")
            };
            return (Status::Waiting, Some(why));
        }
        if r.busy {
            return (
                Status::Busy,
                Some("screen shows a turn in flight (esc to interrupt)".into()),
            );
        }
    }
    let kind = agents::of(agent);
    // Only an agent that writes a status file has one to trust.
    let status_file = status_file.filter(|_| kind.spec().has_status_file);
    match status_file {
        Some("busy") => return (Status::Busy, Some("status file says busy".into())),
        Some("waiting") => {
            return (
                Status::Waiting,
                Some("status file says waiting (permission prompt or dialog)".into()),
            )
        }
        Some("shell") => {
            return (
                Status::Shell,
                Some("a background shell is still running".into()),
            )
        }
        Some("idle") | None => {}
        Some(other) => return (Status::Unknown, Some(format!("status file says {other:?}"))),
    }
    if screen.is_some_and(|r| r.bg_shells > 0) {
        return (
            Status::Shell,
            Some("a background shell or terminal is still running".into()),
        );
    }
    // A transcript whose latest turn could not be read decides nothing, and must not read as idle.
    if let Some(why) = tinfo.and_then(|t| t.unsure.as_deref()) {
        if !crate::support::fault::disabled("transcript-unsure-unknown") {
            return (Status::Unknown, Some(format!("cannot tell: {why}")));
        }
    }
    if tinfo.is_some_and(|t| t.truncated_last_line) && fresh_write {
        return (
            Status::Busy,
            Some("the transcript's last record is still being written".into()),
        );
    }
    if tinfo.is_some_and(|t| t.turn_open) && (fresh_write || kind.spec().open_turn_is_busy) {
        return (
            Status::Busy,
            Some("transcript shows a turn in flight".into()),
        );
    }
    // An idle status file is trusted for the verdict only when the screen was read and its
    // composer recognised: a screen we cannot read may hide a draft.
    if status_file == Some("idle") && (!screens_read || screen.is_some_and(|r| r.composer_seen)) {
        return (Status::Idle, None);
    }
    if !screens_read {
        return (Status::Unknown, Some("state not read (no screen)".into()));
    }
    match screen {
        Some(r) if r.composer_seen => (Status::Idle, None),
        Some(_) => (
            Status::Unknown,
            Some("the agent's composer is not on screen".into()),
        ),
        None => (Status::Unknown, Some("pane screen unreadable".into())),
    }
}

#[cfg(test)]
mod caller_env_tests {
    use super::*;

    #[test]
    fn caller_session_ids_come_from_the_agents_tool_variables_validated() {
        let env = |k: &str, v: &str| vec![(k.to_string(), v.to_string())];
        assert_eq!(
            session_ids_in_env(&env(
                "CLAUDE_CODE_SESSION_ID",
                "BBFEB850-7874-4743-9eb3-8e35f2a00339"
            )),
            vec!["bbfeb850-7874-4743-9eb3-8e35f2a00339".to_string()]
        );
        assert!(session_ids_in_env(&env("CLAUDE_CODE_SESSION_ID", "$(id)")).is_empty());
        for var in ["CODEX_THREAD_ID", "QWEN_CODE_SESSION_ID"] {
            assert_eq!(
                session_ids_in_env(&env(var, "bbfeb850-7874-4743-9eb3-8e35f2a00339")).len(),
                1,
                "{var}"
            );
        }
        assert!(session_ids_in_env(&env(
            "SOME_OTHER_ID",
            "bbfeb850-7874-4743-9eb3-8e35f2a00339"
        ))
        .is_empty());
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::adapters::platform::ProcInfo;

    /// Issue 35 item 4: the pane map's tmux complaint is dropped only where tmux was not asked
    /// for, runs no server, and every parked entry is a zellij one.
    #[test]
    fn a_tmux_nobody_uses_is_no_news_beside_zellij_entries() {
        let z = "zellij:/tmp/zellij-0";
        let t = "/tmp/tmux-0/default";
        assert!(!pane_map_is_news(true, [z, z].into_iter()));
        assert!(
            pane_map_is_news(false, [z].into_iter()),
            "tmux was asked for"
        );
        assert!(pane_map_is_news(true, [z, t].into_iter()), "a tmux entry");
        assert!(pane_map_is_news(true, std::iter::empty()), "nothing parked");
    }

    fn p(pid: u32, ppid: u32, argv: &[&str]) -> ProcInfo {
        ProcInfo {
            pid,
            ppid,
            pgid: pid,
            sid: pid,
            tpgid: -1,
            start_ticks: 1000 + pid as u64,
            state: 'S',
            cpu_ticks: 0,
            rss_bytes: 4096,
            argv: argv.iter().map(|s| s.to_string()).collect(),
            comm: String::new(),
        }
    }

    #[test]
    fn kill_set_spares_the_codex_daemon_editors_and_the_caller() {
        let t = ProcTable::new(vec![
            p(10, 1, &["node", "/n/.bin/codex"]),
            p(11, 10, &["/n/vendor/codex"]),
            p(
                12,
                11,
                &[
                    "/h/.codex/packages/bin/codex",
                    "app-server",
                    "--listen",
                    "unix://",
                ],
            ),
            p(
                13,
                12,
                &[
                    "/h/.codex/packages/bin/codex",
                    "app-server",
                    "daemon",
                    "pid-update-loop",
                ],
            ),
            p(14, 11, &["vim", "notes.md"]),
            p(17, 14, &["rust-analyzer"]),
            p(15, 11, &["/bin/bash", "-c", "npm run dev"]),
            p(16, 15, &["node", "/x/node_modules/.bin/vite"]),
        ]);
        let (kill, spared) = kill_set(&t, 10, &[]);
        let pids: Vec<u32> = kill.iter().map(|k| k.0).collect();
        assert_eq!(pids, vec![10, 11, 15, 16]);
        assert_eq!(spared, vec![(14, "vim".to_string())]);
        let (kill, spared) = kill_set(&t, 10, &[16, 15, 1]);
        assert!(!kill.iter().any(|k| k.0 == 15 || k.0 == 16));
        assert_eq!(spared.len(), 3);
    }

    /// Issue 34 item 15: every Claude 2.1.332 row read `✳ Claude Code`.
    #[test]
    fn a_generic_pane_title_gives_way_to_the_sessions_name() {
        let title_of = |a: Agent, t: &str| {
            crate::agents::of(a)
                .spec()
                .generic_title
                .is_some_and(|g| g(t))
        };
        let claude = |t: &str| title_of(Agent::Claude, t);
        for t in ["✳ Claude Code", "⠂ Claude Code", "Claude Code"] {
            assert!(claude(t), "{t}");
        }
        assert!(!claude("✳ Fix the parser"));
        assert!(!title_of(Agent::Codex, "✳ Claude Code"));
        let shown = |tr, pane, name| shown_title(tr, pane, name, claude);
        assert_eq!(
            shown(None, Some("✳ Claude Code"), Some("api-fix")),
            "api-fix"
        );
        assert_eq!(
            shown(None, Some("✳ Fix the parser"), Some("api-fix")),
            "✳ Fix the parser"
        );
        assert_eq!(
            shown(Some("Parser work"), Some("✳ Claude Code"), Some("x")),
            "Parser work"
        );
        assert_eq!(shown(None, Some("✳ Claude Code"), None), "✳ Claude Code");
        assert_eq!(shown(None, None, Some("x")), "x");
    }

    /// Issue 34 item 9: "screen shows a dialog: dialog open" said it twice.
    #[test]
    fn a_dialog_is_worded_once() {
        let dialog = |w: &str| ScreenReading {
            waiting: Some(w.into()),
            composer_seen: true,
            ..Default::default()
        };
        let why = |w: &str| {
            derive_status(Agent::Claude, None, Some(&dialog(w)), None, false, true)
                .1
                .unwrap()
        };
        assert_eq!(why("dialog open"), "screen shows a dialog");
        assert_eq!(
            why("permission prompt"),
            "screen shows a dialog: permission prompt"
        );
    }

    #[test]
    fn status_trust_order() {
        let idle_screen = ScreenReading {
            composer_seen: true,
            ..Default::default()
        };
        let busy_screen = ScreenReading {
            busy: true,
            composer_seen: true,
            ..Default::default()
        };
        assert_eq!(
            derive_status(
                Agent::Claude,
                Some("idle"),
                Some(&idle_screen),
                None,
                false,
                true
            )
            .0,
            Status::Idle
        );
        assert_eq!(
            derive_status(
                Agent::Claude,
                Some("idle"),
                Some(&busy_screen),
                None,
                false,
                true
            )
            .0,
            Status::Busy
        );
        assert_eq!(
            derive_status(
                Agent::Claude,
                Some("busy"),
                Some(&idle_screen),
                None,
                false,
                true
            )
            .0,
            Status::Busy
        );
        assert_eq!(
            derive_status(
                Agent::Claude,
                Some("waiting"),
                Some(&idle_screen),
                None,
                false,
                true
            )
            .0,
            Status::Waiting
        );
        assert_eq!(
            derive_status(
                Agent::Claude,
                Some("shell"),
                Some(&idle_screen),
                None,
                false,
                true
            )
            .0,
            Status::Shell
        );
        let open = TranscriptInfo {
            turn_open: true,
            ..Default::default()
        };
        assert_eq!(
            derive_status(
                Agent::Claude,
                Some("idle"),
                Some(&idle_screen),
                Some(&open),
                true,
                true
            )
            .0,
            Status::Busy
        );
        assert_eq!(
            derive_status(
                Agent::Claude,
                Some("idle"),
                Some(&idle_screen),
                Some(&open),
                false,
                true
            )
            .0,
            Status::Idle
        );
        assert_eq!(
            derive_status(
                Agent::Codex,
                None,
                Some(&idle_screen),
                Some(&open),
                false,
                true
            )
            .0,
            Status::Busy
        );
        assert_eq!(
            derive_status(
                Agent::Codex,
                None,
                Some(&ScreenReading::default()),
                None,
                false,
                true
            )
            .0,
            Status::Unknown
        );
        assert_eq!(
            derive_status(Agent::Claude, None, None, None, false, false).0,
            Status::Unknown
        );
    }

    #[test]
    fn an_unsure_or_half_written_transcript_is_never_idle() {
        let idle_screen = ScreenReading {
            composer_seen: true,
            ..Default::default()
        };
        let at: jiff::Timestamp = "2026-12-02T10:00:00Z".parse().unwrap();
        let unsure = TranscriptInfo {
            unsure: Some(
                "the transcript's last 64 MiB does not hold its last complete record".into(),
            ),
            last_real_turn: Some(at),
            ..Default::default()
        };
        for agent in [Agent::Claude, Agent::Codex] {
            let (st, why) = derive_status(
                agent,
                Some("idle"),
                Some(&idle_screen),
                Some(&unsure),
                false,
                true,
            );
            assert_eq!(st, Status::Unknown, "{agent:?}");
            assert!(why
                .unwrap()
                .contains("cannot tell: the transcript's last 64 MiB"));
        }
        let now = at + jiff::SignedDuration::from_hours(3);
        assert_eq!(
            idle_secs(Some(&unsure), now),
            None,
            "may have missed the latest turn"
        );
        let sure = TranscriptInfo {
            unsure: None,
            ..unsure
        };
        assert_eq!(idle_secs(Some(&sure), now), Some(3 * 3600));

        // A record still being written is a turn in flight while the file is fresh.
        let writing = TranscriptInfo {
            truncated_last_line: true,
            ..Default::default()
        };
        let (st, why) = derive_status(
            Agent::Claude,
            Some("idle"),
            Some(&idle_screen),
            Some(&writing),
            true,
            true,
        );
        assert_eq!(st, Status::Busy);
        assert!(why.unwrap().contains("still being written"));
        let (st, _) = derive_status(
            Agent::Claude,
            Some("idle"),
            Some(&idle_screen),
            Some(&writing),
            false,
            true,
        );
        assert_eq!(
            st,
            Status::Idle,
            "a stale half record (cut by a kill) decides nothing"
        );
    }

    /// Counts `smaps_rollup` reads; every process has 10 MB RSS, 4 MB anon, 6 MB USS.
    struct CountingPlatform(std::sync::atomic::AtomicUsize);
    impl Platform for CountingPlatform {
        fn processes(&self) -> std::io::Result<Vec<ProcInfo>> {
            Ok(vec![])
        }
        fn process(&self, _pid: u32) -> Option<ProcInfo> {
            None
        }
        fn environ(&self, _pid: u32) -> Option<Vec<(String, String)>> {
            None
        }
        fn cwd(&self, _pid: u32) -> Option<std::path::PathBuf> {
            None
        }
        fn open_files(&self, _pid: u32) -> Vec<std::path::PathBuf> {
            vec![]
        }
        fn memory(&self, _pid: u32) -> Option<Mem> {
            self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Some(Mem {
                rss: 10 << 20,
                pss: 8 << 20,
                uss: 6 << 20,
                anon: 4 << 20,
            })
        }
        fn status_mem(&self, _pid: u32) -> Option<(u64, u64)> {
            Some((10 << 20, 4 << 20))
        }
        fn clock_ticks_per_sec(&self) -> u64 {
            100
        }
    }

    pub(crate) fn found_with_tree(tree: Vec<(u32, u64)>) -> Found {
        Found {
            proc: AgentProc {
                agent: Agent::Claude,
                root: tree[0].0,
                main: tree[0].0,
                prog_index: 0,
                argv: vec![],
                env: vec![],
                background: false,
            },
            main_start: tree[0].1,
            pane: None,
            bind: "none",
            ident: Identity::untargetable("x"),
            tree,
            spared: vec![],
            mem: Mem::default(),
            status: Status::Idle,
            status_why: None,
            draft: None,
            screen: None,
            tinfo: None,
            idle_secs: None,
            title: String::new(),
            cwd: String::new(),
            flags: vec![],
            dropped_flags: vec![],
            pane_owned: false,
            holds_terminal: true,
            transcript_present: false,
            cwd_present: false,
            version: None,
        }
    }

    #[test]
    fn uss_is_cached_per_process_identity_and_rss_is_always_fresh() {
        let d = tempfile::tempdir().unwrap();
        let cache = d.path().join("cache").join("mem.json");
        let p = CountingPlatform(Default::default());
        let mut found = vec![
            found_with_tree(vec![(10, 1), (11, 2)]),
            found_with_tree(vec![(20, 3)]),
        ];
        tree_memory(&p, &mut found, Some(&cache));
        assert_eq!(p.0.load(std::sync::atomic::Ordering::SeqCst), 3);
        assert_eq!(
            (found[0].mem.rss, found[0].mem.anon, found[0].mem.uss),
            (20 << 20, 8 << 20, 12 << 20)
        );
        let mut again = vec![
            found_with_tree(vec![(10, 1), (11, 2)]),
            found_with_tree(vec![(20, 99)]),
        ];
        tree_memory(&p, &mut again, Some(&cache));
        // Only the process whose start time changed (a reused pid) is read again.
        assert_eq!(p.0.load(std::sync::atomic::Ordering::SeqCst), 4);
        assert_eq!(again[0].mem.uss, 12 << 20);
        // Without a cache file every read is fresh.
        let mut fresh = vec![found_with_tree(vec![(10, 1)])];
        tree_memory(&p, &mut fresh, None);
        assert_eq!(p.0.load(std::sync::atomic::Ordering::SeqCst), 5);
    }

    #[test]
    fn interactive_shell_detection() {
        let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert!(is_interactive_shell(&v(&["-bash"])));
        assert!(is_interactive_shell(&v(&["/bin/bash", "--norc"])));
        assert!(!is_interactive_shell(&v(&["sh", "-c", "env A=1 claude"])));
        assert!(!is_interactive_shell(&v(&["claude"])));
    }

    fn pi(pid: u32, ppid: u32, comm: &str) -> crate::adapters::platform::ProcInfo {
        crate::adapters::platform::ProcInfo {
            pid,
            ppid,
            comm: comm.into(),
            ..Default::default()
        }
    }

    fn pane(id: &str, server: &str) -> Pane {
        Pane {
            id: id.into(),
            server: server.into(),
            ..Default::default()
        }
    }

    #[test]
    fn an_agent_with_both_multiplexers_env_binds_to_the_nearest_server() {
        let zsrv = crate::adapters::mux::zellij::server_id_for(std::path::Path::new("/z/sock"));
        let panes = vec![pane("%0", "/tmp/tmux-0/t"), pane("terminal_2@zp", &zsrv)];
        let kv = |k: &str, v: &str| (k.to_string(), v.to_string());
        let a = AgentProc {
            agent: Agent::Claude,
            root: 50,
            main: 50,
            prog_index: 0,
            argv: vec![],
            // zellij started in tmux pane %0 leaked TMUX/TMUX_PANE into its panes.
            env: vec![
                kv("TMUX", "/tmp/tmux-0/t,1,0"),
                kv("TMUX_PANE", "%0"),
                kv("ZELLIJ_PANE_ID", "2"),
                kv("ZELLIJ_SESSION_NAME", "zp"),
                kv("ZELLIJ_SOCKET_DIR", "/z/sock"),
            ],
            background: false,
        };
        // claude → bash → zellij server (a daemon, parent init); the tmux server is elsewhere.
        let in_zellij = ProcTable::new(vec![
            pi(50, 40, "claude"),
            pi(40, 30, "bash"),
            pi(30, 1, "zellij"),
            pi(20, 1, "tmux: server"),
        ]);
        let (p, how) = bind_pane(&a, &in_zellij, &panes, Some("/tmp/tmux-0/t"));
        assert_eq!(
            (p.map(|p| p.id), how),
            (Some("terminal_2@zp".into()), "env")
        );
        // tmux started from a zellij pane: the tmux server is the nearer one.
        let in_tmux = ProcTable::new(vec![
            pi(50, 40, "claude"),
            pi(40, 20, "bash"),
            pi(20, 1, "tmux: server"),
            pi(30, 1, "zellij"),
        ]);
        let (p, _) = bind_pane(&a, &in_tmux, &panes, Some("/tmp/tmux-0/t"));
        assert_eq!(p.map(|p| p.id), Some("%0".into()));
        // A zellij pane under another socket root is a different pane, never this one.
        let other = vec![pane("terminal_2@zp", "zellij:/elsewhere")];
        let (p, how) = bind_pane(&a, &in_zellij, &other, None);
        assert_eq!((p, how), (None, "none"));
    }
}
