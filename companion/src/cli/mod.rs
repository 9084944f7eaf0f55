//! The command line, compiled only into the `park` binary: clap's view of the verbs (`args`), one
//! dispatch line per verb (`run_cmd`), flags checked into the library's requests (`batch`), the
//! terminal's answers (`term`), printing (`ls`, `term::print_results`, …) and the picker TUI (`pick`).
//! Everything a verb decides or changes is the `park` library's.
//!
//! Exit codes (`park::exit`): 0 every target reached the asked state (already there counts), 1 any
//! target was refused or failed (or the environment is unusable), 2 usage errors. A command that
//! stops before acting returns a `Stop`, printed once by `term::report`.

pub mod archive;
pub mod args;
pub mod auto;
pub mod batch;
pub mod graveyard;
pub mod hold;
pub mod ls;
pub mod pick;
pub mod rebuild;
pub mod schema;
pub mod term;
pub mod wake;
pub mod zellij;

pub use args::{AutoOp, Cli, Cmd, SetOp, UnparkOpts};
use park::ctx::{status_text, Ctx};
use park::exit::{ExitStatus, Stop};
use park::guards::target;
use park::ops::unpark;
use park::rows::ls::live_row;
use std::io::Write;
use term::report;

fn set_cmd(ctx: &Ctx, op: SetOp) -> ExitStatus {
    let home = &ctx.ledger.home;
    let r = match op {
        SetOp::Add { name, targets } => {
            let (kept, later) = match set_members_exist(ctx, &targets) {
                Ok(k) => k,
                Err(stop) => return report(stop.of("set add")),
            };
            park::store::sets::add(home, &name, &kept).map(|m| {
                println!("@{name}: {}", m.join(" "));
                for t in later {
                    println!("note: {t} names nothing now; the set keeps it for when it does");
                }
            })
        }
        SetOp::Rm { name, targets } => park::store::sets::remove(home, &name, &targets),
        SetOp::Ls { json } => park::store::sets::list(home).map(|sets| {
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
        Err(e) => report(Stop::usage(e)),
    }
}

/// Sets are validated when added ([`target::set_member`]): a pane must exist, a title several
/// agents share is refused (exit 1, the matches listed, as every verb refuses it), and `.` is
/// refused (a set is used from other panes). Returns the members as the set keeps them (a bare
/// zellij `terminal_3` with this session) and those that name nothing now but may later.
fn set_members_exist(ctx: &Ctx, targets: &[String]) -> Result<(Vec<String>, Vec<String>), Stop> {
    let mut kept = vec![];
    let mut later = vec![];
    // One scan and one ledger read for all members, only when a member needs them.
    let mut world: Option<(park::scan::Scan, Vec<park::model::entry::Entry>)> = None;
    let here = park::adapters::mux::here(ctx.platform.as_ref()).map(|h| h.pane);
    for t in targets {
        let parsed = match target::parse(t) {
            Ok(target::Target::Here) => {
                return Err(Stop::usage(format!(
                    "{t}: a set is used from other panes, so `.` would name a different pane each time: name the pane (%N)"
                )))
            }
            Ok(p @ (target::Target::Pane(_) | target::Target::Window(..) | target::Target::Word(_))) => p,
            // Session ids, and strings that do not parse (the store says why).
            _ => {
                kept.push(t.clone());
                continue;
            }
        };
        if world.is_none() {
            world = Some((ctx.scan(false)?, ctx.ledger.all().0));
        }
        let (s, entries) = world.as_ref().expect("set above");
        match target::set_member(t, &parsed, &s.panes, &s.found, entries, here.as_deref()) {
            Ok(m) => {
                if !m.now {
                    later.push(m.kept.clone());
                }
                kept.push(m.kept);
            }
            Err(target::Miss::Ambiguous(why)) => {
                return Err(Stop::refused(format!("{t}: {why}; nothing was added")))
            }
            Err(target::Miss::Nothing(why)) => {
                return Err(Stop::usage(format!("{t}: {why}; nothing was added")))
            }
        }
    }
    Ok((kept, later))
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
    let ctx = match Ctx::from_env() {
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
            | Cmd::Daemon { .. }
            | Cmd::Config { .. }
            | Cmd::Set { .. }
            | Cmd::Completions { .. }
            | Cmd::Schema { .. }
            | Cmd::Man
            | Cmd::Doctor { .. }
            | Cmd::Pick { .. }
            | Cmd::Integrate { .. }
            | Cmd::Hook { .. }
            | Cmd::Zellij { .. }
    );
    let code = {
        let _t = park::support::profile::span("command");
        run_cmd(&ctx, cli.cmd)
    };
    if wants_waker {
        let _t = park::support::profile::span("ensure-waker");
        crate::cli::wake::ensure_quietly(&ctx);
        // `[archive] auto`: the daily `park archive --all`, in the background.
        park::ops::protect::ensure_auto(&ctx);
    }
    park::support::profile::report();
    code
}

fn run_cmd(ctx: &Ctx, cmd: Cmd) -> ExitStatus {
    match cmd {
        Cmd::Ls {
            json,
            archived: true,
        } => crate::cli::graveyard::ls(ctx, json),
        Cmd::Ls { json, .. } => ls::ls(ctx, json),
        Cmd::Search {
            term,
            full_text,
            json,
        } => crate::cli::graveyard::search(ctx, &term, full_text, json),
        Cmd::Note {
            target,
            text,
            wake: true,
        } => crate::cli::wake::note_wake(ctx, &target, &text),
        Cmd::Note { target, text, .. } => crate::cli::graveyard::note(ctx, &target, &text),
        Cmd::Wake {
            action,
            targets,
            json,
        } => crate::cli::wake::wake_cmd(ctx, &action, &targets, json),
        Cmd::Waker { ensure } => crate::cli::auto::daemon_cmd(ctx, false, false, ensure),
        Cmd::Daemon { once, json, ensure } => crate::cli::auto::daemon_cmd(ctx, once, json, ensure),
        Cmd::Auto {
            op: AutoOp::Status { json },
        } => crate::cli::auto::status_cmd(ctx, json),
        Cmd::Config { json } => crate::cli::auto::config_cmd(ctx, json),
        Cmd::Pin { targets } => crate::cli::auto::pin_cmd(ctx, &targets, true),
        Cmd::Unpin { targets } => crate::cli::auto::pin_cmd(ctx, &targets, false),
        Cmd::Set { op } => set_cmd(ctx, op),
        Cmd::Completions { shell } => {
            let mut c = <Cli as clap::CommandFactory>::command();
            let mut buf = vec![];
            clap_complete::generate(shell, &mut c, "park", &mut buf);
            // A closed pipe (`| head`) is not an error worth a panic.
            let _ = std::io::stdout().write_all(&buf);
            ExitStatus::Success
        }
        Cmd::Schema { name } => match crate::cli::schema::json(&name) {
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
        Cmd::Candidates { json } => ls::candidates(ctx, json),
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
            (true, _, _) => archive::archive_all_cmd(
                ctx,
                agent.unwrap_or(park::ops::protect::Which::Deleting),
                any_age,
                dry_run,
                json,
            ),
            (_, true, Some(d)) => archive::prune_cmd(ctx, &d, dry_run, yes, json),
            _ if dry_run || json => {
                report(Stop::usage("--dry-run and --json go with --all or --prune").of("archive"))
            }
            _ => crate::cli::graveyard::archive_live(ctx, &targets),
        },
        Cmd::Recover { dry_run, json } => archive::recover_cmd(ctx, dry_run, json),
        Cmd::Park { targets, o } => batch::park_cmd(ctx, &targets, &o),
        Cmd::Snapshot { json } => rebuild::snapshot_cmd(ctx, json),
        Cmd::Resurrect { op } => rebuild::resurrect_cmd(ctx, op),
        Cmd::Rebuild {
            on_attach: true,
            client,
            ..
        } => rebuild::on_attach_cmd(ctx, client.as_deref()),
        Cmd::Rebuild {
            dry_run,
            no_resume,
            as_before,
            session,
            json,
            ..
        } => rebuild::rebuild_cmd(
            ctx,
            park::ops::rebuild::Opts {
                dry_run,
                json,
                no_resume,
                as_before,
                session,
            },
        ),
        Cmd::Here { o } if o.idle.is_some() || o.all => report(Stop::usage(
            "`park .` parks this pane; --idle/--all select agents themselves",
        )),
        Cmd::Here { o } => batch::park_cmd(ctx, &[".".to_string()], &o),
        Cmd::Unpark {
            targets,
            dry_run,
            json,
            all,
            yes,
            note,
            wake_reason,
            with_servers,
            new_pane,
        } => batch::unpark_cmd(
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
                new_pane,
            },
        ),
        Cmd::Show { target } => show(ctx, &target),
        Cmd::Forget { targets } => batch::forget_cmd(ctx, &targets),
        Cmd::Status { json, tmux } => status(ctx, json, tmux),
        Cmd::Doctor { json } => doctor(ctx, json),
        Cmd::Pick { filter, pane } => {
            crate::cli::pick::run(ctx, filter.as_deref(), pane.as_deref())
        }
        Cmd::Hold { entry, now } => hold::hold(ctx, &entry, now),
        Cmd::Integrate {
            agent,
            remove,
            json,
        } => integrate(ctx, agent.as_deref(), remove, json),
        Cmd::Zellij { op } => zellij::run(op),
        Cmd::Hook { agent } => {
            // Never fails the agent: whatever goes wrong is logged under PARK_HOME, exit 0.
            let mut input = vec![];
            let _ = std::io::Read::read_to_end(
                &mut std::io::Read::take(std::io::stdin(), 1 << 20),
                &mut input,
            );
            if let Some(a) = park::ops::integrate::by_name(&agent) {
                if let Err(e) =
                    park::ops::integrate::hook(&ctx.ledger.home, a, &input, ctx.platform.as_ref())
                {
                    let _ = std::fs::create_dir_all(ctx.ledger.home.join("integrations"));
                    let _ = std::fs::write(
                        ctx.ledger.home.join("integrations").join("hook-error"),
                        format!("{agent}: {e}\n"),
                    );
                }
            }
            ExitStatus::Success
        }
        Cmd::Verify { entry, pid, start } => match unpark::verify(ctx, &entry, pid, start) {
            Ok(()) => ExitStatus::Success,
            Err(e) => {
                eprintln!("park verify {entry}: {e}");
                ExitStatus::Refused
            }
        },
    }
}

fn integrate(ctx: &Ctx, agent: Option<&str>, remove: bool, json: bool) -> ExitStatus {
    use park::agents::IntegrationState as S;
    use park::ops::integrate as i;
    let env: Vec<(String, String)> = std::env::vars().collect();
    let home = &ctx.ledger.home;
    if let Some(name) = agent {
        let Some(a) = i::by_name(name) else {
            eprintln!("park integrate: {name} has no integration");
            return ExitStatus::Usage;
        };
        let done = if remove {
            i::remove(home, &env, a)
        } else {
            match std::env::current_exe() {
                Ok(exe) => i::install(home, &env, a, &exe),
                Err(e) => Err(format!("cannot tell where park is: {e}")),
            }
        };
        return match done {
            Ok(said) => {
                println!("{name}: {said}");
                ExitStatus::Success
            }
            Err(e) => {
                eprintln!("park integrate {name}: {e}");
                ExitStatus::Refused
            }
        };
    }
    let rows = i::list(home, &env);
    let word = |r: &i::Row| -> (&'static str, String) {
        match &r.state {
            S::Installed => ("installed", String::new()),
            S::Missing => (
                "not installed",
                format!("`park integrate {}` to install", r.agent.as_str()),
            ),
            S::Broken(w) => ("broken", w.clone()),
            S::Unreadable(w) => ("unreadable", w.clone()),
        }
    };
    if json {
        let v: Vec<serde_json::Value> = rows
            .iter()
            .map(|r| {
                let (w, d) = word(r);
                serde_json::json!({
                    "agent": r.agent.as_str(),
                    "file": r.file,
                    "state": w,
                    "detail": d,
                    "installed_by_park": r.installed_by_park,
                    "problem": i::problem(r),
                })
            })
            .collect();
        println!(
            "{}",
            serde_json::json!({"schema": park_protocol::SCHEMA_VERSION, "integrations": v})
        );
    } else {
        for r in &rows {
            let (w, d) = word(r);
            let file = r
                .file
                .as_deref()
                .map(|p| p.display().to_string())
                .unwrap_or_default();
            println!("{:<9} {w:<14} {file}", r.agent.as_str());
            if !d.is_empty() {
                println!("          {d}");
            }
        }
    }
    ExitStatus::Success
}

fn doctor(ctx: &Ctx, json: bool) -> ExitStatus {
    let r = park::ops::doctor::diagnose(&park::ops::doctor::gather(ctx));
    if json {
        println!("{}", serde_json::to_string(&r).expect("report serialises"));
    } else {
        print!("{}", park::ops::doctor::render(&r));
    }
    if r.ok {
        ExitStatus::Success
    } else {
        ExitStatus::Refused
    }
}

fn show(ctx: &Ctx, t: &str) -> ExitStatus {
    let parsed = match target::parse(t) {
        Ok(p) => p,
        Err(e) => return report(Stop::usage(e)),
    };
    let here = park::adapters::mux::here(ctx.platform.as_ref()).map(|h| h.pane);
    let s = match ctx.scan(true) {
        Ok(s) => s,
        Err(stop) => return term::report(stop),
    };
    let entries = park::ops::unpark::as_placed(ctx, &s, &ctx.ledger.all().0);
    // Live and parked at once: a title both share is ambiguous, never the parked one by default.
    let named = match target::resolve(&parsed, &s.found, &entries, here.as_deref()) {
        Ok(n) => n,
        Err(why) => {
            eprintln!("park: {t}: {why}");
            return ExitStatus::Refused;
        }
    };
    let auto = park::store::config::load(&ctx.ledger.home)
        .ok()
        .map(|c| c.auto);
    let pins = park::store::pins::Pins::read(&ctx.ledger.home);
    for e in named.parked {
        println!(
            "{}",
            serde_json::to_string_pretty(e).expect("entry serialises")
        );
        println!("pinned: {}", pins.contains(&e.session_id));
        println!("resume: {}", park::agents::resume_command_line(e));
        if let Some(n) = park::agents::of(e.agent).resume_note() {
            println!("note: {n}");
        }
        if let Some(w) = &e.wake {
            println!("wakes: {}", w.describe(jiff::Timestamp::now()));
        }
        if let Err(why) = unpark::restorable(e) {
            println!("warning: not restorable now: {why}");
        }
    }
    for i in named.live {
        let f = &s.found[i];
        // The row `ls` shows, pins and suggestions included (one source for both).
        let mut r = [live_row(&s, f)];
        park::rows::ls::decorate(ctx, auto.as_ref(), &mut r);
        println!(
            "{}",
            serde_json::to_string_pretty(&r[0]).expect("row serialises")
        );
        println!(
            "processes: {:?}",
            f.tree.iter().map(|p| p.0).collect::<Vec<_>>()
        );
        if !f.spared.is_empty() {
            println!("spared: {:?}", f.spared);
        }
        println!("flags kept: {:?}  dropped: {:?}", f.flags, f.dropped_flags);
        if let Some(n) = park::agents::of(f.proc.agent).resume_note() {
            println!("note: {n}");
        }
        if let Some(t) = &park::agents::of(f.proc.agent).spec().process_title {
            println!("flags lost: {}", t.lost_flags);
        }
    }
    ExitStatus::Success
}

fn status(ctx: &Ctx, json: bool, tmux: bool) -> ExitStatus {
    // A file read only: the status line must never pay for a scan.
    let mut s: park_protocol::StatusSummary = std::fs::read(ctx.ledger.home.join("status"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    // The binary answering is the one the plugin runs: its version, whoever wrote the file.
    s.version = Some(park_protocol::VERSION.to_string());
    if tmux {
        let text = status_text(&s);
        let _ = ctx.mux.set_global_option(
            park::ctx::STATUS_OPTION,
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
