//! The archive verbs: `ls --archived`, `search`, `note`, `archive`. Each reads the one accessor
//! [`graveyard::rows`], so text and `--json` show the same fields for the same tombstone.
//!
//! Contract: nothing here kills or starts anything. `note` never waits on an editor without a
//! terminal; `archive` of a live session copies and verifies its transcript and upserts the
//! tombstone, and touches the agent not at all.

use crate::ctx::Ctx;
use crate::exit::ExitStatus;
use crate::graveyard;
use crate::target;
use park_protocol::{ArchivedOutput, SearchOutput, SCHEMA_VERSION};
use std::io::IsTerminal;

pub fn ls(ctx: &Ctx, json: bool) -> ExitStatus {
    let (rows, warnings) = graveyard::rows(ctx);
    let archive_bytes = crate::protect::archive_bytes(&ctx.ledger.home);
    if json {
        let out = ArchivedOutput {
            schema: SCHEMA_VERSION,
            rows,
            warnings,
            archive_bytes,
        };
        println!("{}", serde_json::to_string(&out).expect("rows serialise"));
    } else {
        print!("{}", graveyard::render_text(&rows, None));
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
        eprintln!("park: search needs a term");
        return ExitStatus::Usage;
    }
    let (rows, warnings) = graveyard::rows(ctx);
    let hits = graveyard::search(&rows, term, full_text);
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
        print!("{}", graveyard::render_text(&rows, Some(&hits)));
    }
    ExitStatus::Success
}

/// A live session a target names, archived on the spot (so a note on a live session has a home).
fn archive_found(ctx: &Ctx, s: &crate::scan::Scan, i: usize) -> Result<String, String> {
    let f = &s.found[i];
    let (Some(pane), Some(sid)) = (f.pane.as_ref(), f.ident.session_id.as_deref()) else {
        return Err(f
            .ident
            .reason
            .clone()
            .unwrap_or_else(|| "not bound to a pane or session".into()));
    };
    let mut e = crate::park::entry_for(f, pane, &pane.server, sid, None);
    e.parked_at = String::new();
    crate::archive::archive(&ctx.ledger.home, &e, false)
        .map(|a| a.tomb.session_id)
        .map_err(|e| e.to_string())
}

pub fn archive_live(ctx: &Ctx, targets: &[String]) -> ExitStatus {
    let s = match crate::cli::do_scan(ctx, false) {
        Ok(s) => s,
        Err(c) => return c,
    };
    let here = crate::mux::here(ctx.platform.as_ref()).map(|h| h.pane);
    let mut code = ExitStatus::Success;
    for t in targets {
        let parsed = match target::parse(t) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("park: {e}");
                return ExitStatus::Usage;
            }
        };
        match target::resolve_live(&parsed, &s.found, here.as_deref(), t) {
            Ok(idx) => {
                for i in idx {
                    match archive_found(ctx, &s, i) {
                        Ok(sid) => {
                            let d = crate::archive::dir(&ctx.ledger.home, &sid);
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
fn note_target(ctx: &Ctx, raw: &str) -> Result<String, (ExitStatus, String)> {
    let parsed = target::parse(raw).map_err(|e| (ExitStatus::Usage, e))?;
    let (rows, _) = graveyard::rows(ctx);
    match graveyard::resolve(&parsed, &rows, raw) {
        Ok(hits) if hits.len() == 1 => return Ok(hits[0].session_id.clone()),
        Ok(hits) => {
            return Err((
                ExitStatus::Refused,
                format!(
                    "{raw:?} names {} sessions; a note belongs to one (name it by session id)",
                    hits.len()
                ),
            ))
        }
        Err(e) if e.contains(" matches ") => return Err((ExitStatus::Refused, e)),
        Err(_) => {}
    }
    let s = crate::cli::do_scan(ctx, false).map_err(|c| (c, "process scan failed".into()))?;
    let here = crate::mux::here(ctx.platform.as_ref()).map(|h| h.pane);
    let idx = target::resolve_live(&parsed, &s.found, here.as_deref(), raw)
        .map_err(|e| (ExitStatus::Refused, e))?;
    if idx.len() != 1 {
        return Err((
            ExitStatus::Refused,
            format!("{raw:?} names {} agents; a note belongs to one", idx.len()),
        ));
    }
    archive_found(ctx, &s, idx[0]).map_err(|e| (ExitStatus::Refused, e))
}

fn edit_in_editor(current: &str) -> Result<String, String> {
    let editor = std::env::var("VISUAL")
        .or_else(|_| std::env::var("EDITOR"))
        .unwrap_or_else(|_| "vi".into());
    let words = shlex::split(&editor)
        .filter(|w| !w.is_empty())
        .ok_or("cannot parse $EDITOR")?;
    // Edited in park's own private dir (0700), never in a shared /tmp.
    let home = crate::paths::park_home()?;
    let dir = home.join("cache");
    crate::ledger::private_dir(&dir).map_err(|e| e.to_string())?;
    let p = dir.join(format!("NOTES-{}.md", std::process::id()));
    crate::ledger::write_atomic(&p, current.as_bytes()).map_err(|e| e.to_string())?;
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
fn dated(notes: &str, text: &str) -> String {
    let stamp = jiff::Timestamp::now().strftime("%Y-%m-%d %H:%M UTC");
    let sep = if notes.trim().is_empty() { "" } else { "\n" };
    format!("{notes}{sep}## {stamp}\n{}\n", text.trim())
}

/// Appends a dated paragraph to an archived session's notes (archiving it first if needed).
pub fn append_note(ctx: &Ctx, e: &crate::ledger::Entry, text: &str) -> bool {
    let d = crate::archive::dir(&ctx.ledger.home, &e.session_id);
    let mut t = match crate::archive::read_meta(&d) {
        Ok(t) => t,
        Err(_) => match crate::archive::archive(&ctx.ledger.home, e, false) {
            Ok(a) => a.tomb,
            Err(_) => return false,
        },
    };
    t.notes = dated(&t.notes, text);
    graveyard::upsert(&ctx.ledger.home, &t).is_ok()
}

pub fn note(ctx: &Ctx, raw: &str, text: &[String]) -> ExitStatus {
    let sid = match note_target(ctx, raw) {
        Ok(s) => s,
        Err((code, why)) => {
            eprintln!("park note: {why}");
            return code;
        }
    };
    let d = crate::archive::dir(&ctx.ledger.home, &sid);
    let mut t = match crate::archive::read_meta(&d) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("park note: {e}");
            return ExitStatus::Refused;
        }
    };
    let text = text.join(" ");
    let new = if !text.trim().is_empty() {
        dated(&t.notes, &text)
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
    match graveyard::upsert(&ctx.ledger.home, &t) {
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
