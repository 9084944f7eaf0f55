//! The archive verbs: `ls --archived`, `search`, `note`, `archive`. Each reads the one accessor
//! [`park::rows::archived::rows`], so text and `--json` show the same fields for the same tombstone.
//!
//! Contract: nothing here kills or starts anything. `note` never waits on an editor without a
//! terminal; `archive` of a live session copies and verifies its transcript and upserts the
//! tombstone, and touches the agent not at all.

use crate::cli::term::report;
use park::ctx::Ctx;
use park::exit::{ExitStatus, Stop};
use park::guards::target;
use park::store::archive::index;
use park_protocol::{ArchivedOutput, SearchOutput, SCHEMA_VERSION};
use std::io::IsTerminal;

pub fn ls(ctx: &Ctx, json: bool) -> ExitStatus {
    let (rows, warnings) = park::rows::archived::rows(ctx);
    let archive_bytes = park::ops::protect::archive_bytes(&ctx.ledger.home);
    if json {
        let out = ArchivedOutput {
            schema: SCHEMA_VERSION,
            rows,
            warnings,
            archive_bytes,
        };
        println!("{}", serde_json::to_string(&out).expect("rows serialise"));
    } else {
        print!("{}", park::rows::archived::render_text(&rows, None));
        println!(
            "{} session(s); the archive holds {} ($PARK_HOME/archive)",
            rows.len(),
            park_protocol::human_bytes(archive_bytes)
        );
        for w in &warnings {
            println!("warning: {w}");
        }
    }
    ExitStatus::Success
}

pub fn search(ctx: &Ctx, term: &str, full_text: bool, json: bool) -> ExitStatus {
    if term.trim().is_empty() {
        return report(Stop::usage("search needs a term"));
    }
    let (rows, warnings) = park::rows::archived::rows(ctx);
    let hits = park::rows::archived::search(&rows, term, full_text);
    let rows: Vec<_> = rows
        .into_iter()
        .filter(|r| hits.iter().any(|h| h.session_id == r.session_id))
        .collect();
    if json {
        let out = SearchOutput {
            schema: SCHEMA_VERSION,
            term: term.to_string(),
            full_text,
            rows,
            hits,
            warnings,
        };
        println!("{}", serde_json::to_string(&out).expect("rows serialise"));
    } else {
        print!("{}", park::rows::archived::render_text(&rows, Some(&hits)));
    }
    ExitStatus::Success
}

/// A live session a target names, archived on the spot (so a note on a live session has a home).
fn archive_found(ctx: &Ctx, s: &park::scan::Scan, i: usize) -> Result<String, String> {
    let f = &s.found[i];
    let (Some(pane), Some(sid)) = (f.pane.as_ref(), f.ident.session_id.as_deref()) else {
        return Err(f
            .ident
            .reason
            .clone()
            .unwrap_or_else(|| "not bound to a pane or session".into()));
    };
    let mut e = park::ops::park::entry_for(f, pane, &pane.server, sid, None);
    e.parked_at = String::new();
    park::store::archive::archive(&ctx.ledger.home, &e, false)
        .map(|a| a.tomb.session_id)
        .map_err(|e| e.to_string())
}

pub fn archive_live(ctx: &Ctx, targets: &[String]) -> ExitStatus {
    let s = match ctx.scan(false).map_err(crate::cli::term::report) {
        Ok(s) => s,
        Err(c) => return c,
    };
    let here = park::adapters::mux::here(ctx.platform.as_ref()).map(|h| h.pane);
    let mut code = ExitStatus::Success;
    for t in targets {
        let parsed = match target::parse(t) {
            Ok(p) => p,
            Err(e) => {
                return report(Stop::usage(e));
            }
        };
        match target::resolve_live(&parsed, &s.found, here.as_deref()) {
            Ok(idx) => {
                for i in idx {
                    match archive_found(ctx, &s, i) {
                        Ok(sid) => {
                            let d = park::store::archive::dir(&ctx.ledger.home, &sid);
                            println!("{t}: archived {sid} → {}", d.display());
                        }
                        Err(why) => {
                            eprintln!("{t}: refused: {why}");
                            code = ExitStatus::Refused;
                        }
                    }
                }
            }
            Err(why) => {
                eprintln!("{t}: refused: {why}");
                code = ExitStatus::Refused;
            }
        }
    }
    code
}

/// The session id a note target names: an archived/parked session, else a live one (archived now).
/// A title is a search over all of them at once, as [`target::resolve`] searches live and parked
/// agents: one that matches more than one session is refused with every match listed (a single
/// archived or parked match was taken while running agents matched the title too).
fn note_target(ctx: &Ctx, raw: &str) -> Result<String, (ExitStatus, String)> {
    let parsed = target::parse(raw).map_err(|e| (ExitStatus::Usage, e))?;
    let (rows, _) = park::rows::archived::rows(ctx);
    let archived = match park::rows::archived::resolve(&parsed, &rows, raw) {
        Ok(hits) => hits,
        Err(e) if e.contains(" matches ") => return Err((ExitStatus::Refused, e)),
        Err(_) => vec![],
    };
    if archived.len() > 1 {
        return Err((
            ExitStatus::Refused,
            format!(
                "{raw:?} names {} sessions; a note belongs to one (name it by session id)",
                archived.len()
            ),
        ));
    }
    // A pane, a window or a session id names the archived session exactly; only a title (or a
    // name that may be one) is weighed against the running agents too.
    if archived.len() == 1 && !target::needs_live(&parsed) {
        return Ok(archived[0].session_id.clone());
    }
    let s = ctx
        .scan(false)
        .map_err(|stop| (crate::cli::term::report(stop), "process scan failed".into()))?;
    let here = park::adapters::mux::here(ctx.platform.as_ref()).map(|h| h.pane);
    let entries = ctx.ledger.all().0;
    let named = match target::every_match(&parsed, &s.found, &entries, here.as_deref()) {
        Ok(n) => n,
        Err(_) if !archived.is_empty() => target::Named {
            live: vec![],
            parked: vec![],
        },
        Err(e) => return Err((ExitStatus::Refused, format!("{raw}: {e}"))),
    };
    // One session, whatever holds it: a parked session has a tombstone, and so has an agent
    // running again.
    let mut sids: Vec<String> = archived.iter().map(|r| r.session_id.clone()).collect();
    let mut list: Vec<String> = archived
        .iter()
        .map(|r| {
            format!(
                "{} {:?} ({})",
                r.entry.as_deref().unwrap_or(&r.session_id),
                r.title,
                park::rows::archived::state_word(r.state)
            )
        })
        .collect();
    let mut live = vec![];
    for i in named.live {
        let f = &s.found[i];
        if let Some(sid) = f.ident.session_id.as_deref() {
            if sids.iter().any(|x| x == sid) {
                continue;
            }
            sids.push(sid.to_string());
        }
        live.push(i);
        list.push(format!(
            "{} {:?} (running)",
            f.pane.as_ref().map(|p| p.id.as_str()).unwrap_or("?"),
            f.title
        ));
    }
    for e in named.parked {
        if !sids.contains(&e.session_id) {
            sids.push(e.session_id.clone());
            list.push(format!("{} {:?} (parked)", e.id, e.place.title));
        }
    }
    match (archived.as_slice(), live.as_slice(), list.len()) {
        ([one], [], 1) => Ok(one.session_id.clone()),
        ([], [i], 1) => archive_found(ctx, &s, *i).map_err(|e| (ExitStatus::Refused, e)),
        (_, _, 1) => Ok(sids[0].clone()),
        (_, _, 0) => Err((
            ExitStatus::Refused,
            format!("{raw}: no running agent, parked or archived session matches"),
        )),
        (_, _, n) => Err((
            ExitStatus::Refused,
            format!(
                "{raw}: matches {n} agents: {} (a note belongs to one: name it by its pane or session id)",
                list.join(", ")
            ),
        )),
    }
}

fn edit_in_editor(current: &str) -> Result<String, String> {
    let editor = std::env::var("VISUAL")
        .or_else(|_| std::env::var("EDITOR"))
        .unwrap_or_else(|_| "vi".into());
    let words = shlex::split(&editor)
        .filter(|w| !w.is_empty())
        .ok_or("cannot parse $EDITOR")?;
    // Edited in park's own private dir (0700), never in a shared /tmp.
    let home = park::support::paths::park_home()?;
    let dir = home.join("cache");
    park::store::ledger::private_dir(&dir).map_err(|e| e.to_string())?;
    let p = dir.join(format!("NOTES-{}.md", std::process::id()));
    park::store::ledger::write_atomic(&p, current.as_bytes()).map_err(|e| e.to_string())?;
    struct Rm(std::path::PathBuf);
    impl Drop for Rm {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }
    let _rm = Rm(p.clone());
    let st = std::process::Command::new(&words[0])
        .args(&words[1..])
        .arg(&p)
        .status()
        .map_err(|e| format!("cannot run {}: {e}", words[0]))?;
    if !st.success() {
        return Err(format!("{} exited with {st}; notes unchanged", words[0]));
    }
    std::fs::read_to_string(&p).map_err(|e| e.to_string())
}

/// `notes` with `text` appended as a dated paragraph.
pub fn note(ctx: &Ctx, raw: &str, text: &[String]) -> ExitStatus {
    let sid = match note_target(ctx, raw) {
        Ok(s) => s,
        Err((code, why)) => {
            eprintln!("park note: {why}");
            return code;
        }
    };
    let d = park::store::archive::dir(&ctx.ledger.home, &sid);
    let mut t = match park::store::archive::read_meta(&d) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("park note: {e}");
            return ExitStatus::Refused;
        }
    };
    let text = text.join(" ");
    let new = if !text.trim().is_empty() {
        park::store::archive::dated(&t.notes, &text)
    } else if std::io::stdin().is_terminal() && std::io::stdout().is_terminal() {
        match edit_in_editor(&t.notes) {
            Ok(n) => n,
            Err(why) => {
                eprintln!("park note: {why}");
                return ExitStatus::Refused;
            }
        }
    } else {
        // No terminal: never open an editor (it would hang whoever called us); show the notes.
        print!("{}", t.notes);
        return ExitStatus::Success;
    };
    t.notes = new;
    match index::upsert(&ctx.ledger.home, &t) {
        Ok(()) => {
            println!("{sid}: notes saved ({})", d.join("NOTES.md").display());
            ExitStatus::Success
        }
        Err(e) => {
            eprintln!("park note: {e}");
            ExitStatus::Refused
        }
    }
}
