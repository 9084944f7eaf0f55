//! Command-line surface: parse with clap, build a validated context, run one verb.
//!
//! Exit codes: 0 every target reached the asked state (already there counts), 1 any target was
//! refused or failed (or the environment is unusable), 2 usage errors.

use crate::ctx::{status_text, Ctx};
use crate::exit::ExitStatus;
use crate::guards::Overrides;
use crate::ledger::{Entry, EntryState, Ledger};
use crate::mux::MuxSet;
use crate::park::{self, ParkOpts};
use crate::scan::{self, Scan};
use crate::target::{self, Target};
use crate::unpark::{self, LiveSet};
use clap::{Parser, Subcommand};
use park_protocol::Outcome;
use park_protocol::{
    human_bytes, ActionOutput, ActionResult, LsOutput, Row, RowState, Status, SCHEMA_VERSION,
};
use std::io::{IsTerminal, Write};

#[derive(Parser, Debug)]
#[command(
    name = "park",
    version = concat!(env!("CARGO_PKG_VERSION"), " (", env!("PARK_GIT_REV"), ")"),
    about = "Park idle AI coding agents: free their RAM, resume the exact session later",
    disable_help_subcommand = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub cmd: Cmd,
}

#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// List agents in panes and parked sessions, grouped by session and window.
    Ls {
        #[arg(long)]
        json: bool,
        /// List the archive instead: every session park archived (parked ❄, running again ↑, or only archived ·), newest first.
        #[arg(long)]
        archived: bool,
    },
    /// Search archived sessions by title, cwd, summary, notes and id (--full-text: also the conversations).
    Search {
        term: String,
        #[arg(long)]
        full_text: bool,
        #[arg(long)]
        json: bool,
    },
    /// Add a note to a session (live, parked or archived); without text: $EDITOR on a terminal, else print the notes.
    Note {
        target: String,
        /// Text to append (a new paragraph).
        text: Vec<String>,
        /// Queue the text for a parked session's wake-up instead: typed into the agent when it is resumed.
        #[arg(long)]
        wake: bool,
    },
    /// Wake a parked session now (with its notes), or cancel its wake-up (it stays parked).
    Wake {
        #[arg(value_parser = ["now", "cancel"])]
        action: String,
        #[arg(required = true)]
        targets: Vec<String>,
        #[arg(long)]
        json: bool,
    },
    /// Named sets of targets, used as `@name` by park and unpark.
    Set {
        #[command(subcommand)]
        op: SetOp,
    },
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) to stdout.
    Completions { shell: clap_complete::Shell },
    /// Print the man page (roff) to stdout: `park man > ~/.local/share/man/man1/park.1`.
    Man,
    /// Print the JSON Schema of a `--json` output (the repo publishes them in schema/).
    Schema {
        #[arg(value_parser = crate::schema::NAMES)]
        name: String,
    },
    /// The wake-up process: sleeps until the next wake-up and runs the probes (started on demand).
    Waker {
        /// Start it in the background if a wake-up is pending and none runs, then return.
        #[arg(long)]
        ensure: bool,
    },
    /// Live sessions sorted for parking: idle time (from real turns) and a done / waiting / working guess. Parks nothing.
    Candidates {
        #[arg(long)]
        json: bool,
    },
    /// Archive live sessions now (transcript copy + rendered Markdown + tombstone) without parking
    /// them; --all: every transcript near the agent's cleanup age; --prune: remove old archived
    /// copies of sessions gone everywhere else.
    Archive {
        #[arg(required_unless_present_any = ["all", "prune"], conflicts_with_all = ["all", "prune"])]
        targets: Vec<String>,
        /// Every session of the agents (live or not, parked or not) whose transcript is within 7
        /// days of the agent's cleanup age; unchanged ones are not copied again.
        #[arg(long, conflicts_with = "prune")]
        all: bool,
        /// With --all: which agents (Codex never deletes, so it is archived only when named here).
        #[arg(long, value_enum, default_value = "claude", requires = "all")]
        agent: crate::protect::Which,
        /// With --all: whatever the transcript's age.
        #[arg(long, requires = "all")]
        any_age: bool,
        /// Remove archived sessions whose transcript is gone from the agent, not parked, older
        /// than --older-than (asks for a typed yes; without a terminal needs --yes).
        #[arg(long, requires = "older_than")]
        prune: bool,
        #[arg(long, value_name = "DUR", requires = "prune")]
        older_than: Option<String>,
        /// With --prune: do not ask.
        #[arg(long, requires = "prune")]
        yes: bool,
        /// With --all or --prune: show what would happen; change nothing.
        #[arg(long)]
        dry_run: bool,
        /// With --all or --prune.
        #[arg(long)]
        json: bool,
    },
    /// Rebuild Claude sessions whose transcript is already deleted from its prompt history
    /// (history.jsonl) as archived tombstones marked "recovered (prompts only)": listed and
    /// searchable, never resumable.
    Recover {
        #[arg(long)]
        dry_run: bool,
        #[arg(long)]
        json: bool,
    },
    /// Recreate windows and panes the multiplexer lost (tmux server killed, window closed) from the
    /// ledger and window groups, and resume each parked session in its slot.
    Rebuild {
        /// Show the plan only.
        #[arg(long)]
        dry_run: bool,
        /// Recreate the panes and leave the sessions parked in them.
        #[arg(long)]
        no_resume: bool,
        #[arg(long)]
        json: bool,
    },
    /// Park targets: %pane, session:window, session name, session id, title substring, or `.`.
    Park {
        /// What to park (none with --idle/--all).
        targets: Vec<String>,
        #[command(flatten)]
        o: ParkFlags,
    },
    /// Park the pane park runs in.
    #[command(name = ".")]
    Here {
        #[command(flatten)]
        o: ParkFlags,
    },
    /// Resume parked sessions in their panes.
    Unpark {
        /// What to resume (none with --all).
        targets: Vec<String>,
        #[arg(long)]
        dry_run: bool,
        #[arg(long)]
        json: bool,
        /// Resume every parked session.
        #[arg(long)]
        all: bool,
        /// Do not ask before --all (without a terminal, --all needs it).
        #[arg(long)]
        yes: bool,
        /// Type this into the agent (after a `[park]` line) once it is resumed and idle. Repeatable.
        #[arg(long, value_name = "TEXT")]
        note: Vec<String>,
        /// Why it is being resumed (the waker passes what fired).
        #[arg(long, hide = true)]
        wake_reason: Option<String>,
        /// Also start again the dev servers and test browsers the park of its window stopped
        /// (typed at a bare shell prompt in the pane each ran in).
        #[arg(long)]
        with_servers: bool,
    },
    /// Show everything park knows about a target, and the command that resumes it.
    Show { target: String },
    /// Drop a parked entry without resuming it (the transcript and archive stay).
    Forget {
        #[arg(required = true)]
        targets: Vec<String>,
    },
    /// Check every parked entry is still restorable and nothing is in the way; exit 1 when anything needs attention.
    Doctor {
        #[arg(long)]
        json: bool,
    },
    /// Print the parked summary (`❄ 3 · 1.1G`); a file read, no process scan.
    Status {
        #[arg(long)]
        json: bool,
        /// Also push it to tmux as @park_status.
        #[arg(long)]
        tmux: bool,
    },
    /// Interactive picker (for the tmux popup): toggle agents between live and parked.
    Pick {
        /// Only rows whose pane, title, cwd or session contains this text.
        filter: Option<String>,
        /// Put the cursor on this pane's row (the popup passes the pane it was opened from).
        #[arg(long)]
        pane: Option<String>,
    },
    /// Placeholder kept in a parked pane whose agent was the pane's own process.
    #[command(hide = true)]
    Hold {
        entry: String,
        #[arg(long)]
        now: bool,
    },
    #[command(name = "__verify", hide = true)]
    Verify {
        entry: String,
        #[arg(long)]
        pid: u32,
        #[arg(long)]
        start: u64,
    },
}

#[derive(clap::Args, Debug, Clone, Default)]
pub struct ParkFlags {
    /// Show what would happen; change nothing.
    #[arg(long)]
    dry_run: bool,
    /// Skip the CPU corroboration (the only check it waives).
    #[arg(long)]
    force: bool,
    /// Also waive the busy and draft guards (can lose an in-flight turn or a draft); needs a tty and a typed yes.
    #[arg(long)]
    kill_anyway: bool,
    /// Do not ask before parking a window or session that holds several agents (asked only on a terminal).
    #[arg(long)]
    yes: bool,
    #[arg(long)]
    json: bool,
    /// For a popup: exit at once on success; on a refusal keep the reason on screen until Enter.
    #[arg(long)]
    close_popup: bool,
    /// Park every agent whose last real turn is at least this old (30m, 6h, 3d, 2w; 0s = every idle one).
    #[arg(long, value_name = "DUR", conflicts_with = "all")]
    idle: Option<String>,
    /// Park every agent park can park (each still passes every guard).
    #[arg(long)]
    all: bool,
    /// With a pane target: also stop the dev servers and test browsers of its window (a window
    /// or session target always does).
    #[arg(long)]
    with_servers: bool,
    #[command(flatten)]
    wake: crate::wake_cli::WakeFlags,
}

#[derive(Debug, clap::Subcommand)]
pub enum SetOp {
    /// Add targets to a set (created if new): `park set add api w:api %7`.
    Add {
        name: String,
        #[arg(required = true)]
        targets: Vec<String>,
    },
    /// Remove targets from a set, or the whole set when none are named.
    Rm { name: String, targets: Vec<String> },
    /// List the sets and their targets.
    Ls {
        #[arg(long)]
        json: bool,
    },
}

fn set_cmd(ctx: &Ctx, op: SetOp) -> ExitStatus {
    let home = &ctx.ledger.home;
    let r = match op {
        SetOp::Add { name, targets } => crate::sets::add(home, &name, &targets).map(|m| {
            println!("@{name}: {}", m.join(" "));
        }),
        SetOp::Rm { name, targets } => crate::sets::remove(home, &name, &targets),
        SetOp::Ls { json } => crate::sets::list(home).map(|sets| {
            if json {
                println!("{}", serde_json::to_string(&sets).expect("sets serialise"));
            } else if sets.is_empty() {
                println!("no sets (add one: park set add <name> <target>...)");
            } else {
                for (n, m) in sets {
                    println!("@{n}: {}", m.join(" "));
                }
            }
        }),
    };
    match r {
        Ok(()) => ExitStatus::Success,
        Err(e) => {
            eprintln!("park: {e}");
            ExitStatus::Usage
        }
    }
}

pub fn build_ctx() -> Result<Ctx, String> {
    let home = crate::paths::park_home()?;
    let exe = std::env::current_exe().map_err(|e| format!("cannot locate the park binary: {e}"))?;
    Ok(Ctx {
        platform: crate::platform::native(),
        mux: Box::new(MuxSet::from_env()),
        ledger: Ledger::new(home),
        exe,
    })
}

/// `park status [--json] [--tmux]`, recognised without clap.
///
/// Status bars run this every few seconds, so it is the one command whose start-up cost is the
/// product. Building clap's whole command tree was a third of its instructions (callgrind, see
/// BENCHMARKS.md). Only the exact spellings clap would accept for `status` are taken here (each
/// flag at most once, nothing else); any other argv, `--help` included, returns `None` and goes
/// through clap as before, so behaviour and errors stay clap's.
pub fn fast_status(args: &[std::ffi::OsString]) -> Option<Cmd> {
    let (first, rest) = args.split_first()?;
    if first != "status" || rest.len() > 2 {
        return None;
    }
    let (mut json, mut tmux) = (false, false);
    for a in rest {
        let flag = if a == "--json" {
            &mut json
        } else if a == "--tmux" {
            &mut tmux
        } else {
            return None;
        };
        if *flag {
            return None;
        }
        *flag = true;
    }
    Some(Cmd::Status { json, tmux })
}

pub fn run(cli: Cli) -> ExitStatus {
    let ctx = match build_ctx() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("park: {e}");
            return ExitStatus::Refused;
        }
    };
    // Every command but the cheap or internal ones starts a waker when a wake-up is pending and
    // none runs (after a reboot or a crash). `status` stays a file read; `doctor` reports instead.
    let wants_waker = !matches!(
        cli.cmd,
        Cmd::Status { .. }
            | Cmd::Hold { .. }
            | Cmd::Verify { .. }
            | Cmd::Waker { .. }
            | Cmd::Set { .. }
            | Cmd::Completions { .. }
            | Cmd::Schema { .. }
            | Cmd::Man
            | Cmd::Doctor { .. }
            | Cmd::Pick { .. }
    );
    let code = {
        let _t = crate::profile::span("command");
        run_cmd(&ctx, cli.cmd)
    };
    if wants_waker {
        let _t = crate::profile::span("ensure-waker");
        crate::wake_cli::ensure_quietly(&ctx);
        // `[archive] auto`: the daily `park archive --all`, in the background.
        crate::protect::ensure_auto(&ctx);
    }
    crate::profile::report();
    code
}

fn run_cmd(ctx: &Ctx, cmd: Cmd) -> ExitStatus {
    match cmd {
        Cmd::Ls {
            json,
            archived: true,
        } => crate::graveyard_cli::ls(ctx, json),
        Cmd::Ls { json, .. } => ls(ctx, json),
        Cmd::Search {
            term,
            full_text,
            json,
        } => crate::graveyard_cli::search(ctx, &term, full_text, json),
        Cmd::Note {
            target,
            text,
            wake: true,
        } => crate::wake_cli::note_wake(ctx, &target, &text),
        Cmd::Note { target, text, .. } => crate::graveyard_cli::note(ctx, &target, &text),
        Cmd::Wake {
            action,
            targets,
            json,
        } => crate::wake_cli::wake_cmd(ctx, &action, &targets, json),
        Cmd::Waker { ensure } => crate::wake_cli::waker_cmd(ctx, ensure),
        Cmd::Set { op } => set_cmd(ctx, op),
        Cmd::Completions { shell } => {
            let mut c = <Cli as clap::CommandFactory>::command();
            let mut buf = vec![];
            clap_complete::generate(shell, &mut c, "park", &mut buf);
            // A closed pipe (`| head`) is not an error worth a panic.
            let _ = std::io::stdout().write_all(&buf);
            ExitStatus::Success
        }
        Cmd::Schema { name } => match crate::schema::json(&name) {
            Some(j) => {
                println!("{j}");
                ExitStatus::Success
            }
            None => ExitStatus::Usage,
        },
        Cmd::Man => {
            let c = <Cli as clap::CommandFactory>::command();
            let mut buf = vec![];
            match clap_mangen::Man::new(c).render(&mut buf) {
                Ok(()) => {
                    let _ = std::io::stdout().write_all(&buf);
                    ExitStatus::Success
                }
                Err(e) => {
                    eprintln!("park man: {e}");
                    ExitStatus::Refused
                }
            }
        }
        Cmd::Candidates { json } => candidates(ctx, json),
        Cmd::Archive {
            targets,
            all,
            agent,
            any_age,
            prune,
            older_than,
            yes,
            dry_run,
            json,
        } => match (all, prune, older_than) {
            (true, _, _) => crate::protect::archive_all_cmd(ctx, agent, any_age, dry_run, json),
            (_, true, Some(d)) => crate::protect::prune_cmd(ctx, &d, dry_run, yes, json),
            _ if dry_run || json => {
                eprintln!("park archive: --dry-run and --json go with --all or --prune");
                ExitStatus::Usage
            }
            _ => crate::graveyard_cli::archive_live(ctx, &targets),
        },
        Cmd::Recover { dry_run, json } => crate::recover::recover_cmd(ctx, dry_run, json),
        Cmd::Park { targets, o } => park_cmd(ctx, &targets, &o),
        Cmd::Rebuild {
            dry_run,
            no_resume,
            json,
        } => crate::rebuild::run(
            ctx,
            crate::rebuild::Opts {
                dry_run,
                json,
                no_resume,
            },
        ),
        Cmd::Here { o } if o.idle.is_some() || o.all => {
            eprintln!("park: `park .` parks this pane; --idle/--all select agents themselves");
            ExitStatus::Usage
        }
        Cmd::Here { o } => park_cmd(ctx, &[".".to_string()], &o),
        Cmd::Unpark {
            targets,
            dry_run,
            json,
            all,
            yes,
            note,
            wake_reason,
            with_servers,
        } => unpark_cmd(
            ctx,
            &targets,
            UnparkOpts {
                dry_run,
                json,
                all,
                yes,
                note,
                wake_reason,
                with_servers,
            },
        ),
        Cmd::Show { target } => show(ctx, &target),
        Cmd::Forget { targets } => forget(ctx, &targets),
        Cmd::Status { json, tmux } => status(ctx, json, tmux),
        Cmd::Doctor { json } => doctor(ctx, json),
        Cmd::Pick { filter, pane } => crate::pick::run(ctx, filter.as_deref(), pane.as_deref()),
        Cmd::Hold { entry, now } => hold(ctx, &entry, now),
        Cmd::Verify { entry, pid, start } => match unpark::verify(ctx, &entry, pid, start) {
            Ok(()) => ExitStatus::Success,
            Err(e) => {
                eprintln!("park verify {entry}: {e}");
                ExitStatus::Refused
            }
        },
    }
}

fn doctor(ctx: &Ctx, json: bool) -> ExitStatus {
    let r = crate::doctor::diagnose(&crate::doctor::gather(ctx));
    if json {
        println!("{}", serde_json::to_string(&r).expect("report serialises"));
    } else {
        print!("{}", crate::doctor::render(&r));
    }
    if r.ok {
        ExitStatus::Success
    } else {
        ExitStatus::Refused
    }
}

/// Parses every target; a usage error (exit 2) names the first bad one.
pub fn parse_targets(targets: &[String]) -> Result<Vec<(String, Target)>, ExitStatus> {
    targets
        .iter()
        .map(|t| {
            target::parse(t).map(|p| (t.clone(), p)).map_err(|e| {
                eprintln!("park: {e}");
                ExitStatus::Usage
            })
        })
        .collect()
}

pub(crate) fn do_scan(ctx: &Ctx, screens: bool) -> Result<Scan, ExitStatus> {
    scan::scan_with(
        ctx.platform.as_ref(),
        ctx.mux.as_ref(),
        screens,
        Some(&ctx.ledger.home.join("cache").join("mem.json")),
    )
    .map_err(|e| {
        eprintln!("park: cannot read the process table: {e}");
        ExitStatus::Refused
    })
}

fn live_row(s: &Scan, f: &scan::Found) -> Row {
    let p = f.pane.as_ref();
    let untargetable = f.ident.session_id.is_none() || f.pane.is_none();
    let background = f.proc.background;
    let reason = if background {
        Some(crate::agent::claude::background_note(
            f.ident.job.as_deref(),
        ))
    } else if untargetable {
        let unbound = f
            .pane
            .is_none()
            .then(|| "not bound to a pane of this server".to_string());
        let parts: Vec<String> = unbound.into_iter().chain(f.ident.reason.clone()).collect();
        Some(parts.join("; "))
    } else {
        crate::guards::check(f, &s.caller, s.pane_error.as_deref(), Overrides::default())
            .err()
            .map(|r| r.why)
    };
    Row {
        pane: p.map(|p| p.id.clone()).unwrap_or_default(),
        mux: p
            .map(|p| crate::mux::kind_of(&p.id))
            .unwrap_or("none")
            .into(),
        session: if background {
            BACKGROUND_GROUP.into()
        } else {
            p.map(|p| p.session.clone()).unwrap_or_default()
        },
        window_index: p.map(|p| p.window_index),
        window: p.map(|p| p.window_name.clone()).unwrap_or_default(),
        agent: f.proc.agent,
        session_id: f.ident.session_id.clone(),
        session_source: Some(f.ident.source.to_string()),
        cwd: f.cwd.clone(),
        title: f.title.clone(),
        state: if background {
            RowState::Background
        } else if untargetable {
            RowState::Untargetable
        } else {
            RowState::Live
        },
        status: f.status,
        reason,
        idle_seconds: f.idle_secs,
        bytes: f.mem.rss,
        uss_bytes: f.mem.uss,
        anon_bytes: f.mem.anon,
        pss_bytes: f.mem.pss,
        freed_bytes: None,
        pid: Some(f.proc.root),
        entry: None,
        parked_at: None,
        wake: None,
        job: f.ident.job.clone(),
    }
}

/// The `ls` group of Claude's background sessions.
pub const BACKGROUND_GROUP: &str = "(background)";

/// A parked session whose transcript the agent's own cleanup will soon delete (Claude
/// `cleanupPeriodDays`): say so in `ls`, with the fix.
fn cleanup_warning(e: &Entry) -> Option<String> {
    let t = unpark::expected_transcript(e);
    let left = crate::doctor::cleanup_left(e, t.as_deref())?;
    (left <= crate::doctor::CLEANUP_WARN_DAYS as i64).then(|| {
        format!(
            "{} may delete this transcript in {} day(s); the archive keeps a copy and unpark puts it back (or raise cleanupPeriodDays)",
            e.agent.as_str(),
            left.max(0)
        )
    })
}

fn entry_row(e: &Entry) -> Row {
    let idle = e
        .last_active
        .as_deref()
        .and_then(|t| t.parse::<jiff::Timestamp>().ok())
        .map(|t| (jiff::Timestamp::now().as_second() - t.as_second()).max(0) as u64);
    Row {
        pane: e.place.pane.clone(),
        mux: e.place.kind.clone(),
        session: e.place.session.clone(),
        window_index: Some(e.place.window_index),
        window: e.place.window_name.clone(),
        agent: e.agent,
        session_id: Some(e.session_id.clone()),
        session_source: Some(e.session_source.clone()),
        cwd: e.cwd.clone(),
        title: e.place.title.clone(),
        state: RowState::Parked,
        status: Status::Parked,
        reason: e.last_error.clone().or_else(|| match e.state {
            EntryState::Parking => {
                Some("park did not finish (interrupted?); unpark resumes or cleans it".into())
            }
            EntryState::Resuming => Some("resume in progress".into()),
            EntryState::Parked => cleanup_warning(e),
        }),
        idle_seconds: idle,
        bytes: 0,
        uss_bytes: 0,
        anon_bytes: 0,
        pss_bytes: 0,
        freed_bytes: e.freed_bytes,
        pid: None,
        entry: Some(e.id.clone()),
        parked_at: Some(e.parked_at.clone()),
        wake: e.wake.as_ref().map(|w| w.describe(jiff::Timestamp::now())),
        job: None,
    }
}

/// The one accessor every view reads: live rows and parked entries, grouped by session and window.
pub fn rows(ctx: &Ctx, s: &Scan) -> LsOutput {
    let mut warnings = s.warnings.clone();
    let mut rows: Vec<Row> = s.found.iter().map(|f| live_row(s, f)).collect();
    let (entries, bad) = {
        let _t = crate::profile::span("ls.ledger");
        ctx.ledger.all()
    };
    for b in bad {
        warnings.push(b.to_string());
    }
    rows.extend(entries.iter().map(entry_row));
    // Pane groups first, then Claude's background sessions, then agents in no pane.
    let rank = |r: &Row| match (r.state, r.session.is_empty()) {
        (RowState::Background, _) => 1,
        (_, true) => 2,
        _ => 0,
    };
    rows.sort_by(|a, b| {
        (rank(a), &a.session, a.window_index, &a.pane).cmp(&(
            rank(b),
            &b.session,
            b.window_index,
            &b.pane,
        ))
    });
    let mut windows: Vec<(String, u32)> = vec![];
    for r in &rows {
        if let Some(w) = r.window_index {
            if !windows.iter().any(|x| x.0 == r.session && x.1 == w) {
                windows.push((r.session.clone(), w));
            }
        }
    }
    let servers = {
        let _t = crate::profile::span("ls.servers");
        crate::servers_cli::rows(ctx, s, &windows)
    };
    LsOutput {
        schema: SCHEMA_VERSION,
        rows,
        servers,
        warnings,
    }
}

fn fmt_idle(s: Option<u64>) -> String {
    match s {
        None => "-".into(),
        Some(s) if s < 60 => format!("{s}s"),
        Some(s) if s < 3600 => format!("{}m", s / 60),
        Some(s) if s < 86400 => format!("{}h", s / 3600),
        Some(s) => format!("{}d", s / 86400),
    }
}

fn short(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        s.chars().take(n.saturating_sub(1)).collect::<String>() + "…"
    }
}

pub fn render_text(out: &LsOutput) -> String {
    let mut t = String::new();
    let mut group = None;
    for r in &out.rows {
        let g = (r.session.clone(), r.window_index, r.window.clone());
        if group.as_ref() != Some(&g) {
            let parkable: u64 = out
                .rows
                .iter()
                .filter(|x| {
                    (x.session.clone(), x.window_index, x.window.clone()) == g
                        && x.state == RowState::Live
                        && x.reason.is_none()
                })
                .map(|x| x.anon_bytes)
                .sum();
            let servers: Vec<&park_protocol::ServerRow> = out
                .servers
                .iter()
                .filter(|x| Some(x.window_index) == r.window_index && x.session == r.session)
                .collect();
            let parkable = parkable
                + servers
                    .iter()
                    .filter(|x| x.state == "running" && x.note.is_none())
                    .map(|x| x.bytes)
                    .sum::<u64>();
            let head = if r.state == RowState::Background {
                BACKGROUND_GROUP.to_string()
            } else if r.session.is_empty() {
                "(no pane)".to_string()
            } else {
                format!(
                    "{}:{} {}",
                    r.session,
                    r.window_index.map(|i| i.to_string()).unwrap_or_default(),
                    r.window
                )
            };
            t.push_str(&format!(
                "{head}{}\n",
                if parkable > 0 {
                    format!("  (parkable {})", human_bytes(parkable))
                } else {
                    String::new()
                }
            ));
            for x in servers {
                t.push_str(&format!(
                    "  ⚙ {:<8} {:<6} {:<8} {:>7}  {}{}\n",
                    short(&x.name, 8),
                    x.pane.as_deref().unwrap_or("-"),
                    x.state,
                    human_bytes(x.bytes),
                    short(&x.command, 60),
                    x.note
                        .as_ref()
                        .map(|n| format!("  ({})", short(n, 60)))
                        .or_else(|| x.orphan.then(|| "  (detached)".into()))
                        .unwrap_or_default()
                ));
            }
            group = Some(g);
        }
        let mem = match r.state {
            RowState::Parked => format!(
                "freed {}",
                r.freed_bytes.map(human_bytes).unwrap_or_else(|| "?".into())
            ),
            _ => format!(
                "{} rss, frees ~{}",
                human_bytes(r.bytes),
                human_bytes(r.anon_bytes)
            ),
        };
        let state = match r.state {
            RowState::Parked => "❄ parked".to_string(),
            RowState::Untargetable => "⚠ untargetable".to_string(),
            RowState::Background => format!("◌ bg {}", r.status.as_str()),
            RowState::Live => r.status.as_str().to_string(),
        };
        let sid = r
            .session_id
            .as_deref()
            .map(|s| &s[..8.min(s.len())])
            .unwrap_or("-");
        t.push_str(&format!(
            "  {:<5} {:<6} {:<14} {:>5}  {:<20} {:<8} {}  {}\n",
            r.pane,
            r.agent.as_str(),
            state,
            fmt_idle(r.idle_seconds),
            mem,
            sid,
            short(&r.title, 40),
            short(&r.cwd, 50)
        ));
        if let Some(why) = &r.reason {
            t.push_str(&format!("        ↳ {}\n", short(why, 150)));
        }
        if let Some(w) = &r.wake {
            t.push_str(&format!("        ⏰ wakes {}\n", short(w, 150)));
        }
    }
    if out.rows.is_empty() {
        t.push_str("no agents found in tmux panes, nothing parked\n");
    }
    for w in &out.warnings {
        t.push_str(&format!("warning: {w}\n"));
    }
    t
}

fn ls(ctx: &Ctx, json: bool) -> ExitStatus {
    let s = {
        let _t = crate::profile::span("scan");
        match do_scan(ctx, true) {
            Ok(s) => s,
            Err(c) => return c,
        }
    };
    let out = {
        let _t = crate::profile::span("ls.rows");
        rows(ctx, &s)
    };
    if json {
        println!("{}", serde_json::to_string(&out).expect("rows serialise"));
    } else {
        print!("{}", render_text(&out));
    }
    ExitStatus::Success
}

/// `park candidates`: every live, bound session except park's caller, ranked (see `verdict`).
fn candidates(ctx: &Ctx, json: bool) -> ExitStatus {
    let s = match do_scan(ctx, true) {
        Ok(s) => s,
        Err(c) => return c,
    };
    let mut rows: Vec<park_protocol::Candidate> = s
        .found
        .iter()
        .filter(|f| f.pane.is_some())
        .filter(|f| crate::guards::not_self(f, &s.caller).is_ok())
        .map(|f| {
            let last = f.tinfo.as_ref().and_then(|t| t.last_assistant.clone());
            let open = f.tinfo.as_ref().is_some_and(|t| t.turn_open);
            let (verdict, confidence, why) =
                crate::verdict::verdict(f.status, open, last.as_deref());
            park_protocol::Candidate {
                pane: f.pane.as_ref().map(|p| p.id.clone()).unwrap_or_default(),
                agent: f.proc.agent,
                session_id: f.ident.session_id.clone(),
                cwd: f.cwd.clone(),
                title: f.title.clone(),
                idle_seconds: f.idle_secs,
                verdict,
                confidence,
                why,
                last_assistant: last.map(|l| crate::archive::cut(&l, 400)),
                anon_bytes: f.mem.anon,
                refusal: crate::guards::check(
                    f,
                    &s.caller,
                    s.pane_error.as_deref(),
                    Overrides::default(),
                )
                .err()
                .map(|r| r.why),
            }
        })
        .collect();
    crate::verdict::sort(&mut rows);
    if json {
        let out = park_protocol::CandidatesOutput {
            schema: SCHEMA_VERSION,
            rows,
            warnings: s.warnings.clone(),
        };
        println!("{}", serde_json::to_string(&out).expect("rows serialise"));
        return ExitStatus::Success;
    }
    if rows.is_empty() {
        println!("no live agent sessions");
    }
    for r in &rows {
        println!(
            "{:<8} {:<6} idle {:>4}  {:<15} {:>3.0}%  {:>6}  {}",
            r.pane,
            r.agent.as_str(),
            fmt_idle(r.idle_seconds),
            r.verdict.as_str(),
            r.confidence * 100.0,
            human_bytes(r.anon_bytes),
            short(&r.title, 40)
        );
        println!("         {}", r.why);
        if let Some(l) = &r.last_assistant {
            println!(
                "         “{}”",
                short(&l.split_whitespace().collect::<Vec<_>>().join(" "), 100)
            );
        }
        if let Some(why) = &r.refusal {
            println!("         park would refuse: {}", short(why, 120));
        }
    }
    ExitStatus::Success
}

pub fn print_results(results: &[ActionResult], json: bool) -> ExitStatus {
    // Exit 1 when any target was refused or failed; every other outcome is the asked state.
    let ok = results.iter().all(|r| !r.outcome.is_failure());
    if json {
        println!(
            "{}",
            serde_json::to_string(&ActionOutput {
                schema: SCHEMA_VERSION,
                results: results.to_vec()
            })
            .expect("results serialise")
        );
    } else {
        for r in results {
            let what = r.pane.clone().unwrap_or_else(|| r.target.clone());
            let extra = match (&r.freed_bytes, r.outcome) {
                (Some(b), Outcome::Parked) => format!(" (freed {})", human_bytes(*b)),
                _ => String::new(),
            };
            let line = format!(
                "{what}: {}{extra}{}",
                r.outcome,
                r.reason
                    .as_ref()
                    .map(|x| format!(": {x}"))
                    .unwrap_or_default()
            );
            if matches!(
                r.outcome,
                Outcome::Refused | Outcome::Failed | Outcome::NotParked
            ) {
                eprintln!("{line}");
            } else {
                println!("{line}");
            }
        }
    }
    if ok {
        ExitStatus::Success
    } else {
        ExitStatus::Refused
    }
}

fn ask_yes(prompt: &str) -> bool {
    if !std::io::stdin().is_terminal() || !std::io::stderr().is_terminal() {
        return false;
    }
    eprint!("{prompt} Type yes to continue: ");
    let _ = std::io::stderr().flush();
    let mut line = String::new();
    std::io::stdin().read_line(&mut line).is_ok() && line.trim() == "yes"
}

fn park_cmd(ctx: &Ctx, targets: &[String], o: &ParkFlags) -> ExitStatus {
    let targets = &match crate::sets::expand(&ctx.ledger.home, targets) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("park: {e}");
            return ExitStatus::Usage;
        }
    };
    let s = match do_scan(ctx, true) {
        Ok(s) => s,
        Err(c) => return c,
    };
    let here_raw = crate::mux::here(ctx.platform.as_ref());
    let here = s
        .caller
        .pane
        .clone()
        .or_else(|| here_raw.as_ref().map(|h| h.pane.clone()));
    let mut results = vec![];
    let mut seen = vec![];
    let mut window_level: Vec<usize> = vec![];
    let bulk = o.idle.is_some() || o.all;
    if bulk && !targets.is_empty() {
        eprintln!("park: --idle/--all select the agents themselves; name no targets with them");
        return ExitStatus::Usage;
    }
    if bulk && o.kill_anyway {
        eprintln!("park: --kill-anyway never combines with --idle/--all (it is for one agent you are looking at)");
        return ExitStatus::Usage;
    }
    if !bulk && targets.is_empty() {
        eprintln!("park: name what to park (%pane, session:window, session, id, title), or use --idle DUR / --all");
        return ExitStatus::Usage;
    }
    // A wake-up is validated before anything is parked.
    let wake = match crate::wake_cli::build(&o.wake, jiff::Timestamp::now()) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("park: {e}");
            return ExitStatus::Usage;
        }
    };
    if bulk {
        let min_idle = match o.idle.as_deref().map(crate::duration::parse).transpose() {
            Ok(d) => d,
            Err(e) => {
                eprintln!("park: --idle: {e}");
                return ExitStatus::Usage;
            }
        };
        return park_bulk(ctx, &s, min_idle, o);
    }
    // Every target is validated before anything is done to any of them.
    let parsed_all = match parse_targets(targets) {
        Ok(v) => v,
        Err(c) => return c,
    };
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
        match target::resolve_live(&parsed, &s.found, here.as_deref(), t) {
            Ok(idx) => {
                // A window or session holding several agents: on a terminal, confirm the group.
                if idx.len() > 1
                    && !o.yes
                    && !o.dry_run
                    && std::io::stdin().is_terminal()
                    && std::io::stderr().is_terminal()
                {
                    let total: u64 = idx.iter().map(|i| s.found[*i].mem.anon).sum();
                    eprint!(
                        "park {} agents in {t} (frees ~{})? [y/N] ",
                        idx.len(),
                        human_bytes(total)
                    );
                    let _ = std::io::stderr().flush();
                    let mut line = String::new();
                    let _ = std::io::stdin().read_line(&mut line);
                    if !matches!(line.trim(), "y" | "Y" | "yes") {
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
            Err(why) => {
                // A target that names a parked session is already where it was asked to be.
                let (entries, _) = ctx.ledger.all();
                if let Ok(es) = target::resolve_entries(&parsed, &entries, here.as_deref(), t) {
                    for e in es {
                        results.push(ActionResult {
                            target: t.clone(),
                            pane: Some(e.place.pane.clone()),
                            session_id: Some(e.session_id.clone()),
                            outcome: Outcome::AlreadyParked,
                            reason: None,
                            freed_bytes: e.freed_bytes,
                        });
                    }
                } else {
                    results.push(ActionResult::new(t, Outcome::Refused, Some(why)));
                }
            }
        }
    }
    if o.with_servers {
        // A pane's servers are its window's: the window is recorded as a group to hold them.
        window_level.extend(seen.iter().map(|(_, i)| *i));
    }
    let mut overrides = Overrides {
        force: o.force,
        kill_anyway: false,
    };
    if o.kill_anyway && !o.dry_run {
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
        eprintln!(
            "--kill-anyway will kill, even mid-turn or with unsent text:\n  {}",
            list.join("\n  ")
        );
        if !ask_yes("An in-flight turn or draft in these panes will be lost.") {
            eprintln!("park: --kill-anyway needs a terminal and a typed yes; nothing done");
            return ExitStatus::Refused;
        }
        overrides.kill_anyway = true;
    }
    let mut opts = ParkOpts {
        dry_run: o.dry_run,
        overrides,
        group: None,
        wake: wake.clone(),
    };
    // A whole window parks as one group, recorded before anything in it is killed.
    let groups = if o.dry_run || window_level.is_empty() {
        Default::default()
    } else {
        let (g, warnings) = park::record_groups(ctx, &s, &window_level);
        for w in warnings {
            eprintln!("park: {w}");
        }
        g
    };
    let mut done: Vec<usize> = vec![];
    let mut slots: Vec<Option<ActionResult>> = results.into_iter().map(Some).collect();
    let mut items: Vec<(usize, crate::wave::ParkItem)> = vec![];
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
        items.push((
            slots.len(),
            crate::wave::ParkItem {
                target: t,
                found: i,
                opts: opts.clone(),
            },
        ));
        slots.push(None);
    }
    let (at, items): (Vec<usize>, Vec<crate::wave::ParkItem>) = items.into_iter().unzip();
    for (slot, r) in at.into_iter().zip(crate::wave::park_all(ctx, &s, items)) {
        slots[slot] = Some(r);
    }
    let mut results: Vec<ActionResult> = slots.into_iter().flatten().collect();
    results.extend(stop_servers(ctx, &s, &window_level, &groups, &results, o));
    let code = print_results(&results, o.json);
    if o.close_popup && code != ExitStatus::Success && std::io::stdin().is_terminal() {
        eprint!("\npress Enter to close ");
        let _ = std::io::stderr().flush();
        let mut line = String::new();
        let _ = std::io::stdin().read_line(&mut line);
    }
    code
}

/// After a window-level park: stop the dev servers and test browsers of each window whose agents
/// all parked, and say per window what was freed.
fn stop_servers(
    ctx: &Ctx,
    s: &Scan,
    window_level: &[usize],
    groups: &std::collections::HashMap<usize, String>,
    results: &[ActionResult],
    o: &ParkFlags,
) -> Vec<ActionResult> {
    let mut windows: Vec<((String, u32), Option<String>)> = vec![];
    let mut blocked: Vec<((String, u32), String)> = vec![];
    let ok = |r: &ActionResult| {
        matches!(
            r.outcome,
            Outcome::Parked | Outcome::AlreadyParked | Outcome::WouldPark
        )
    };
    for i in window_level {
        let f = &s.found[*i];
        let Some(p) = f
            .pane
            .as_ref()
            .filter(|p| !crate::mux::is_zellij_server(&p.server))
        else {
            continue;
        };
        let w = (p.session.clone(), p.window_index);
        if !windows.iter().any(|x| x.0 == w) {
            windows.push((w.clone(), groups.get(i).cloned()));
        }
        // Every agent of the window, targeted or not, must be parked now.
        for g in s.found.iter().filter(|g| {
            g.pane
                .as_ref()
                .is_some_and(|gp| gp.session == w.0 && gp.window_index == w.1)
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
    let out = crate::servers_cli::stop_for_windows(ctx, &windows, &blocked, o.dry_run);
    if !o.json {
        for (w, _) in &windows {
            let t = format!("{}:{}", w.0, w.1);
            let agents: u64 = results
                .iter()
                .filter(|r| {
                    r.outcome == Outcome::Parked
                        && s.panes.iter().any(|p| {
                            Some(&p.id) == r.pane.as_ref()
                                && p.session == w.0
                                && p.window_index == w.1
                        })
                })
                .filter_map(|r| r.freed_bytes)
                .sum();
            let servers: Vec<&ActionResult> = out
                .iter()
                .filter(|r| {
                    r.target == t && matches!(r.outcome, Outcome::Stopped | Outcome::WouldStop)
                })
                .collect();
            let sbytes: u64 = servers.iter().filter_map(|r| r.freed_bytes).sum();
            eprintln!(
                "window {t}: agents {}, servers {} ({}), total {}",
                human_bytes(agents),
                human_bytes(sbytes),
                servers.len(),
                human_bytes(agents + sbytes)
            );
        }
    }
    out
}

/// What `--idle`/`--all` would park: (index into `found`, why skipped if it is not selected).
pub fn bulk_selection(
    found: &[scan::Found],
    min_idle: Option<std::time::Duration>,
) -> (Vec<usize>, Vec<(usize, String)>) {
    let mut pick = vec![];
    let mut skip = vec![];
    for (i, f) in found.iter().enumerate() {
        if f.pane.is_none() || f.ident.session_id.is_none() {
            skip.push((i, "untargetable".to_string()));
            continue;
        }
        match (min_idle, f.idle_secs) {
            (None, _) => pick.push(i),
            // No measurable idle time is never "idle forever".
            (Some(_), None) => skip.push((i, "no measurable idle time".to_string())),
            (Some(d), Some(x)) if x >= d.as_secs() => pick.push(i),
            (Some(_), Some(x)) => skip.push((i, format!("idle only {}", fmt_idle(Some(x))))),
        }
    }
    (pick, skip)
}

fn plan_line(f: &scan::Found) -> String {
    format!(
        "{:<8} {:<6} {:<24} idle {:>4}  {:>7}",
        f.pane.as_ref().map(|p| p.id.as_str()).unwrap_or("-"),
        f.proc.agent.as_str(),
        f.title.chars().take(24).collect::<String>(),
        fmt_idle(f.idle_secs),
        human_bytes(f.mem.anon)
    )
}

/// A bulk action goes ahead only after a typed yes on a terminal; without one, never.
pub(crate) fn confirm_bulk(what: &str, question: &str) -> bool {
    if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
        eprintln!("park: {what}; without a terminal that needs --yes. Nothing done.");
        return false;
    }
    if !ask_yes(question) {
        eprintln!("park: not confirmed; nothing done");
        return false;
    }
    true
}

/// `park park --idle DUR` / `--all`: list the plan, confirm with a typed yes (or `--yes`), then park
/// each selected agent through the same guarded transaction as a named target.
fn park_bulk(
    ctx: &Ctx,
    s: &Scan,
    min_idle: Option<std::time::Duration>,
    o: &ParkFlags,
) -> ExitStatus {
    let (pick, skip) = bulk_selection(&s.found, min_idle);
    let what = match (&o.idle, min_idle) {
        (Some(d), _) => format!("--idle {d}"),
        _ => "--all".to_string(),
    };
    let total: u64 = pick.iter().map(|i| s.found[*i].mem.anon).sum();
    if !o.json {
        eprintln!(
            "park {what}: {} agent(s), ~{} to free",
            pick.len(),
            human_bytes(total)
        );
        for i in &pick {
            eprintln!("  {}", plan_line(&s.found[*i]));
        }
        for (i, why) in &skip {
            eprintln!("  skip {} ({why})", plan_line(&s.found[*i]));
        }
    }
    if pick.is_empty() {
        return print_results(&[], o.json);
    }
    if !o.dry_run
        && !o.yes
        && !confirm_bulk(
            &format!("{what} parks {} agent(s)", pick.len()),
            &format!("Park these {} agent(s)?", pick.len()),
        )
    {
        return ExitStatus::Refused;
    }
    let opts = ParkOpts {
        dry_run: o.dry_run,
        overrides: Overrides {
            force: o.force,
            kill_anyway: false,
        },
        group: None,
        wake: crate::wake_cli::build(&o.wake, jiff::Timestamp::now())
            .ok()
            .flatten(),
    };
    let items = pick
        .iter()
        .map(|i| crate::wave::ParkItem {
            target: s.found[*i]
                .pane
                .as_ref()
                .map(|p| p.id.clone())
                .unwrap_or_default(),
            found: *i,
            opts: opts.clone(),
        })
        .collect();
    let results = crate::wave::park_all(ctx, s, items);
    print_results(&results, o.json)
}

pub struct UnparkOpts {
    pub dry_run: bool,
    pub json: bool,
    pub all: bool,
    pub yes: bool,
    pub note: Vec<String>,
    pub wake_reason: Option<String>,
    pub with_servers: bool,
}

fn unpark_cmd(ctx: &Ctx, targets: &[String], o: UnparkOpts) -> ExitStatus {
    let targets = &match crate::sets::expand(&ctx.ledger.home, targets) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("park: {e}");
            return ExitStatus::Usage;
        }
    };
    let UnparkOpts {
        dry_run,
        json,
        all,
        yes,
        ..
    } = o;
    if all && !targets.is_empty() {
        eprintln!("park: --all resumes every parked session; name no targets with it");
        return ExitStatus::Usage;
    }
    if !all && targets.is_empty() {
        eprintln!(
            "park: name what to unpark (%pane, session:window, session, id, entry), or use --all"
        );
        return ExitStatus::Usage;
    }
    if all {
        return unpark_all(ctx, dry_run, json, yes, o.with_servers);
    }
    let s = match do_scan(ctx, false) {
        Ok(s) => s,
        Err(c) => return c,
    };
    let live = LiveSet::from_scan(&s);
    let (entries, bad) = ctx.ledger.all();
    for b in &bad {
        eprintln!("warning: {b}");
    }
    let here_at = crate::mux::here(ctx.platform.as_ref());
    let here = here_at.as_ref().map(|h| h.pane.clone());
    // Slots in target order; resumes are filled in by the wave, the pane park runs in goes last.
    let mut results: Vec<Option<ActionResult>> = vec![];
    let mut wave: Vec<(usize, crate::wave::UnparkItem, Entry, Option<String>)> = vec![];
    let mut inside: Option<(Entry, String, Option<String>)> = None;
    let mut done: Vec<String> = vec![];
    // Every target is validated before anything is done to any of them.
    let parsed_all = match parse_targets(targets) {
        Ok(v) => v,
        Err(c) => return c,
    };
    for (t, parsed) in parsed_all {
        let t = &t;
        let hits = match target::resolve_entries(&parsed, &entries, here.as_deref(), t) {
            Ok(h) => h,
            Err(why) => {
                // Already running counts as the asked state.
                if target::resolve_live(&parsed, &s.found, here.as_deref(), t).is_ok() {
                    results.push(Some(ActionResult::new(t, Outcome::AlreadyRunning, None)));
                } else {
                    results.extend(
                        resurrect(ctx, &s, &live, &parsed, t, dry_run, why)
                            .into_iter()
                            .map(Some),
                    );
                }
                continue;
            }
        };
        for e in hits {
            if done.contains(&e.id) {
                continue;
            }
            done.push(e.id.clone());
            let is_inside = here_at
                .as_ref()
                .is_some_and(|h| h.pane == e.place.pane && h.server == e.place.server)
                && !dry_run;
            // A hand-off: another park (the waker's, or a remote unpark) typed this command and
            // waits to deliver the entry's notes itself once the agent is up. Taking them here
            // too would record a delivered note as undelivered.
            let handed_off = is_inside
                && e.state == EntryState::Resuming
                && e.handoff_pane.as_deref() == Some(e.place.pane.as_str())
                && unpark::resumer_alive(ctx, e);
            let mut notes: Vec<String> = if handed_off {
                vec![]
            } else {
                e.wake.as_ref().map(|w| w.notes.clone()).unwrap_or_default()
            };
            notes.extend(o.note.iter().cloned());
            // Typed only when there is something to say: a bare wake-up just resumes.
            let prompt = (!notes.is_empty()).then(|| {
                crate::wake::prompt(
                    &e.parked_at,
                    o.wake_reason
                        .as_deref()
                        .unwrap_or("it was unparked by hand"),
                    &notes,
                )
            });
            if is_inside {
                inside = Some((e.clone(), t.clone(), prompt));
                continue;
            }
            wave.push((
                results.len(),
                crate::wave::UnparkItem {
                    entry: e.id.clone(),
                    target: t.clone(),
                },
                e.clone(),
                prompt,
            ));
            results.push(None);
        }
    }
    let items: Vec<crate::wave::UnparkItem> = wave
        .iter()
        .map(|(_, it, _, _)| crate::wave::UnparkItem {
            entry: it.entry.clone(),
            target: it.target.clone(),
        })
        .collect();
    let out = crate::wave::unpark_all(ctx, &s, &live, &items, dry_run);
    for ((slot, _, e, prompt), mut r) in wave.into_iter().zip(out) {
        if let (Some(p), Outcome::Unparked) = (&prompt, r.outcome) {
            let said = crate::wake_cli::after_unpark(ctx, &e, p);
            r.reason = Some(match r.reason.take() {
                Some(x) if !x.is_empty() => format!("{x}; {said}"),
                _ => said,
            });
        }
        results[slot] = Some(r);
    }
    let mut results: Vec<ActionResult> = results.into_iter().flatten().collect();
    if o.with_servers {
        let mut hit: Vec<Entry> = entries
            .iter()
            .filter(|e| done.contains(&e.id))
            .cloned()
            .collect();
        hit.extend(inside.iter().map(|x| x.0.clone()));
        results.extend(crate::servers_cli::restart(ctx, &group_ids(&hit), dry_run));
    }
    let Some((e, t, prompt)) = inside else {
        return print_results(&results, json);
    };
    // The pane park runs in resumes last: the exec replaces this process, so everything else is
    // done and printed first.
    let before = if results.is_empty() {
        ExitStatus::Success
    } else {
        print_results(&results, json)
    };
    // Nothing is left to type the note after the exec, so it goes to the session's archived
    // notes instead of being lost.
    if let Some(p) = &prompt {
        crate::graveyard_cli::append_note(
            ctx,
            &e,
            &format!("undelivered wake note (resumed in its own pane): {p}"),
        );
    }
    // Returns only when the exec did not happen.
    let r = unpark::exec_in_pane(ctx, &e.id, &t);
    print_results(&[r], json).max(before)
}

/// The window groups of these entries, once each.
fn group_ids(entries: &[Entry]) -> Vec<String> {
    let mut out: Vec<String> = vec![];
    for g in entries.iter().filter_map(|e| e.group.clone()) {
        if !out.contains(&g) {
            out.push(g);
        }
    }
    out
}

/// `park unpark <target>` naming no parked entry: a tombstone in the archive. It is resurrected
/// through the same gated unpark (a fresh ledger entry claimed with `O_EXCL`, then the normal
/// hand-off into a **new** window in its cwd, never into whatever pane now has its old id).
fn resurrect(
    ctx: &Ctx,
    s: &Scan,
    live: &LiveSet,
    parsed: &Target,
    t: &str,
    dry_run: bool,
    not_parked: String,
) -> Vec<ActionResult> {
    let (rows, _) = crate::graveyard::rows(ctx);
    let hits = match crate::graveyard::resolve(parsed, &rows, t) {
        Ok(h) => h,
        Err(why) if why.contains(" matches ") => {
            return vec![ActionResult::new(t, Outcome::Refused, Some(why))]
        }
        Err(_) => return vec![ActionResult::new(t, Outcome::NotParked, Some(not_parked))],
    };
    let mut out = vec![];
    for r in hits {
        let base = ActionResult {
            session_id: Some(r.session_id.clone()),
            ..ActionResult::new(t, Outcome::Failed, None)
        };
        if live.contains(&r.session_id) {
            out.push(ActionResult {
                outcome: Outcome::AlreadyRunning,
                ..base
            });
            continue;
        }
        let tomb = match crate::archive::read_meta(std::path::Path::new(&r.archive_dir)) {
            Ok(x) => x,
            Err(e) => {
                out.push(ActionResult {
                    outcome: Outcome::Refused,
                    reason: Some(e.to_string()),
                    ..base
                });
                continue;
            }
        };
        // Rebuilt from the prompt history: there is no conversation for an agent to resume.
        if tomb.prompts_only && !crate::fault::disabled("resurrect-prompts-only") {
            out.push(ActionResult {
                outcome: Outcome::Refused,
                reason: Some(format!(
                    "recovered (prompts only): there is no transcript to resume; its prompts are in {}/transcript.md",
                    r.archive_dir
                )),
                ..base
            });
            continue;
        }
        let mut e = tomb.to_entry();
        // Resurrect on a server park talks to now (the recorded one may be gone for good).
        if !ctx.mux.serves(&e.place.server) {
            if let Ok(now) = ctx.mux.server_id() {
                e.place.server = now;
                e.place.kind = "tmux".into();
            }
        }
        if dry_run {
            out.push(ActionResult {
                outcome: Outcome::WouldUnpark,
                reason: Some(format!(
                    "resurrect from the archive in a new window: {}",
                    unpark::resume_command_line(&e)
                )),
                ..base
            });
            continue;
        }
        match ctx.ledger.claim(&e) {
            Ok(()) => {}
            Err(err) => {
                out.push(ActionResult {
                    outcome: Outcome::Refused,
                    reason: Some(format!("cannot claim a ledger entry: {err}")),
                    ..base
                });
                continue;
            }
        }
        let mut res = unpark::unpark_remote(ctx, s, live, &e.id, t, false);
        // Refused before anything was started: the claimed entry was only a vehicle; drop it
        // so the tombstone does not suddenly read as parked.
        if res.outcome == Outcome::Refused {
            if let Ok(Some(cur)) = ctx.ledger.load(&e.id) {
                if cur.state == EntryState::Parked && cur.place.pane.is_empty() {
                    let _ = ctx.ledger.remove(&e.id);
                }
            }
        }
        if res.outcome == Outcome::Unparked {
            res.reason = Some(match res.reason {
                Some(r) => format!("resurrected from the archive; {r}"),
                None => "resurrected from the archive".into(),
            });
        }
        out.push(res);
    }
    out
}

/// `park unpark --all`: every parked entry, each through the normal gated unpark; the pane park runs
/// in (if it holds one) goes last, because resuming there replaces park with the agent.
fn unpark_all(ctx: &Ctx, dry_run: bool, json: bool, yes: bool, with_servers: bool) -> ExitStatus {
    let s = match do_scan(ctx, false) {
        Ok(s) => s,
        Err(c) => return c,
    };
    let live = LiveSet::from_scan(&s);
    let (mut entries, bad) = ctx.ledger.all();
    for b in &bad {
        eprintln!("warning: {b}");
    }
    let here_at = crate::mux::here(ctx.platform.as_ref());
    let is_here = |e: &Entry| {
        here_at
            .as_ref()
            .is_some_and(|h| h.pane == e.place.pane && h.server == e.place.server)
    };
    entries.sort_by_key(|e| is_here(e));
    if !json {
        eprintln!("park unpark --all: {} parked session(s)", entries.len());
        for e in &entries {
            eprintln!(
                "  {:<8} {:<6} {}",
                e.place.pane,
                e.agent.as_str(),
                e.place.title.chars().take(40).collect::<String>()
            );
        }
    }
    if entries.is_empty() {
        return print_results(&[], json);
    }
    if !dry_run
        && !yes
        && !confirm_bulk(
            &format!("--all resumes {} session(s)", entries.len()),
            &format!("Resume these {} session(s)?", entries.len()),
        )
    {
        return ExitStatus::Refused;
    }
    let (here_entries, rest): (Vec<&Entry>, Vec<&Entry>) =
        entries.iter().partition(|e| is_here(e) && !dry_run);
    let items: Vec<crate::wave::UnparkItem> = rest
        .iter()
        .map(|e| crate::wave::UnparkItem {
            entry: e.id.clone(),
            target: e.id.clone(),
        })
        .collect();
    let mut results = crate::wave::unpark_all(ctx, &s, &live, &items, dry_run);
    if with_servers {
        results.extend(crate::servers_cli::restart(
            ctx,
            &group_ids(&entries),
            dry_run,
        ));
    }
    let Some(e) = here_entries.first() else {
        return print_results(&results, json);
    };
    // Print what was done so far: a successful exec does not come back.
    let before = print_results(&results, json);
    let r = unpark::exec_in_pane(ctx, &e.id, &e.id);
    print_results(&[r], json).max(before)
}

fn show(ctx: &Ctx, t: &str) -> ExitStatus {
    let parsed = match target::parse(t) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("park: {e}");
            return ExitStatus::Usage;
        }
    };
    let here = crate::mux::here(ctx.platform.as_ref()).map(|h| h.pane);
    let (entries, _) = ctx.ledger.all();
    if let Ok(es) = target::resolve_entries(&parsed, &entries, here.as_deref(), t) {
        for e in es {
            println!(
                "{}",
                serde_json::to_string_pretty(e).expect("entry serialises")
            );
            println!("resume: {}", unpark::resume_command_line(e));
            if let Some(w) = &e.wake {
                println!("wakes: {}", w.describe(jiff::Timestamp::now()));
            }
            if let Err(why) = unpark::restorable(e) {
                println!("warning: not restorable now: {why}");
            }
        }
        return ExitStatus::Success;
    }
    let s = match do_scan(ctx, true) {
        Ok(s) => s,
        Err(c) => return c,
    };
    match target::resolve_live(&parsed, &s.found, here.as_deref(), t) {
        Ok(idx) => {
            for i in idx {
                let r = live_row(&s, &s.found[i]);
                println!(
                    "{}",
                    serde_json::to_string_pretty(&r).expect("row serialises")
                );
                let f = &s.found[i];
                println!(
                    "processes: {:?}",
                    f.tree.iter().map(|p| p.0).collect::<Vec<_>>()
                );
                if !f.spared.is_empty() {
                    println!("spared: {:?}", f.spared);
                }
                println!("flags kept: {:?}  dropped: {:?}", f.flags, f.dropped_flags);
            }
            ExitStatus::Success
        }
        Err(why) => {
            eprintln!("park: {why}");
            ExitStatus::Refused
        }
    }
}

fn forget(ctx: &Ctx, targets: &[String]) -> ExitStatus {
    let (entries, _) = ctx.ledger.all();
    let here = crate::mux::here(ctx.platform.as_ref()).map(|h| h.pane);
    let mut results = vec![];
    // Every target is validated before anything is done to any of them.
    let parsed_all = match parse_targets(targets) {
        Ok(v) => v,
        Err(c) => return c,
    };
    for (t, parsed) in parsed_all {
        let t = &t;
        match target::resolve_entries(&parsed, &entries, here.as_deref(), t) {
            Ok(es) => {
                for e in es {
                    let r = match crate::lock::try_lock(
                        &ctx.ledger.home,
                        &park::session_lock_key(&e.session_id),
                    ) {
                        Ok(crate::lock::TryLock::Acquired(_l)) => match ctx.ledger.remove(&e.id) {
                            Ok(()) => {
                                unpark::teardown(ctx, e);
                                ActionResult {
                                    target: t.clone(),
                                    pane: Some(e.place.pane.clone()),
                                    session_id: Some(e.session_id.clone()),
                                    outcome: Outcome::Forgotten,
                                    reason: Some(format!(
                                        "resume by hand: {}",
                                        unpark::resume_command_line(e)
                                    )),
                                    freed_bytes: None,
                                }
                            }
                            Err(err) => {
                                ActionResult::new(t, Outcome::Failed, Some(err.to_string()))
                            }
                        },
                        _ => ActionResult::new(
                            t,
                            Outcome::Refused,
                            Some("a park/unpark is working on this session right now".into()),
                        ),
                    };
                    results.push(r);
                }
            }
            Err(why) => results.push(ActionResult::new(t, Outcome::NotParked, Some(why))),
        }
    }
    ctx.publish_status();
    print_results(&results, false)
}

fn status(ctx: &Ctx, json: bool, tmux: bool) -> ExitStatus {
    // A file read only: the status line must never pay for a scan.
    let s: park_protocol::StatusSummary = std::fs::read(ctx.ledger.home.join("status"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    if tmux {
        let text = status_text(&s);
        let _ = ctx.mux.set_global_option(
            crate::ctx::STATUS_OPTION,
            if text.is_empty() { None } else { Some(&text) },
        );
    }
    if json {
        println!("{}", serde_json::to_string(&s).expect("status serialises"));
    } else {
        println!("{}", status_text(&s));
    }
    ExitStatus::Success
}

/// The placeholder: show what is parked here and resume on Enter; if the entry disappears (resumed
/// elsewhere, forgotten), become the user's shell so the pane stays useful.
fn hold(ctx: &Ctx, eid: &str, now: bool) -> ExitStatus {
    use std::os::unix::process::CommandExt;
    let mut first = true;
    loop {
        let e = match ctx.ledger.load(eid) {
            Ok(Some(e)) => e,
            _ => {
                let shell = std::env::var("SHELL").unwrap_or_else(|_| "/bin/sh".into());
                println!("\r\nnothing parked here any more; starting {shell}");
                let err = std::process::Command::new(&shell).exec();
                eprintln!("park: cannot start {shell}: {err}");
                std::thread::sleep(std::time::Duration::from_secs(3600));
                continue;
            }
        };
        if !(now && first) {
            print!("\x1b[?1049l\x1b[?25h\x1b[0m\x1b[H\x1b[2J");
            println!("❄ parked: {} session {}\r", e.agent.as_str(), e.session_id);
            println!("  {}\r", e.place.title);
            println!("  in {}\r", e.cwd);
            if let Some(err) = &e.last_error {
                println!("  last attempt: {err}\r");
            }
            println!("\r\n  Press Enter to resume it here.\r");
            let _ = std::io::stdout().flush();
            if !wait_enter_or_gone(ctx, eid) {
                continue;
            }
        }
        first = false;
        let r = unpark::exec_in_pane(ctx, eid, eid);
        println!("\r\n{}: {}\r", r.outcome, r.reason.unwrap_or_default());
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
}

/// Waits for a line on stdin, checking every second that the entry still exists.
fn wait_enter_or_gone(ctx: &Ctx, eid: &str) -> bool {
    use std::os::fd::AsRawFd;
    let fd = std::io::stdin().as_raw_fd();
    loop {
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let n = unsafe { libc::poll(&mut pfd, 1, 1000) };
        if n > 0 {
            let mut line = String::new();
            return match std::io::stdin().read_line(&mut line) {
                Ok(0) => {
                    std::thread::sleep(std::time::Duration::from_secs(1));
                    false
                }
                Ok(_) => true,
                Err(_) => false,
            };
        }
        if !matches!(ctx.ledger.load(eid), Ok(Some(_))) {
            return false;
        }
    }
}

#[cfg(test)]
mod fast_status_tests {
    use super::*;
    use clap::Parser;

    /// Whatever the fast path accepts, clap reads the same way; anything else it leaves to clap.
    #[test]
    fn fast_status_agrees_with_clap() {
        let words = [
            "status", "--json", "--tmux", "--help", "ls", "-h", "--", "x",
        ];
        let mut argvs: Vec<Vec<&str>> = vec![vec![]];
        for _ in 0..3 {
            let next: Vec<Vec<&str>> = argvs
                .iter()
                .flat_map(|a| {
                    words.iter().map(move |w| {
                        let mut b = a.clone();
                        b.push(*w);
                        b
                    })
                })
                .collect();
            argvs.extend(next);
        }
        argvs.sort();
        argvs.dedup();
        let mut taken = 0;
        for argv in argvs {
            let os: Vec<std::ffi::OsString> = argv.iter().map(|a| a.into()).collect();
            let Some(fast) = fast_status(&os) else {
                continue;
            };
            taken += 1;
            let slow = Cli::try_parse_from(std::iter::once("park").chain(argv.iter().copied()))
                .unwrap_or_else(|e| panic!("{argv:?}: fast path took what clap refuses: {e}"));
            assert_eq!(format!("{fast:?}"), format!("{:?}", slow.cmd), "{argv:?}");
        }
        // status, and each flag alone, both orders of both.
        assert_eq!(taken, 5);
    }
}
