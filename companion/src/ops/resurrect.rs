//! tmux-resurrect (and tmux-continuum, whose autosave calls it): `park resurrect save` runs as its
//! `@resurrect-hook-post-save-all`, `park resurrect restore` as its
//! `@resurrect-hook-post-restore-all` (the tmux plugin sets both where the user has not).
//!
//! Contract:
//! * save: one journal pass, then a copy of the journal named by the save file resurrect's `last`
//!   link points to (`$PARK_HOME/resurrect/<save file>.journal.json`, the newest 20 kept): the
//!   pane map as resurrect saved it, with the sessions in it.
//! * restore: resurrect has recreated the saved sessions, windows and panes (same names, window
//!   numbers, pane indices, cwds). Each lost session of this server (the journal, and the copy for
//!   the save being restored; the later sighting of a slot wins) is resumed in the pane resurrect
//!   restored at its session:window.pane, only when that pane is in its cwd and shows a shell:
//!   never a pane where resurrect restarted a fresh agent (`@resurrect-processes`), never a
//!   window made (resurrect made them; `park rebuild` makes what it did not). It goes through
//!   [`crate::ops::journal::refuse`] (running again, in the ledger, written after, same slot) and
//!   the normal unpark path, every guard applying.

use crate::ctx::Ctx;
use crate::exit::Stop;
use crate::model::entry::entry_id;
use crate::ops::journal::{claim_lost, ident, lost_session, refuse, same_dir};
use crate::scan::{self, SHELLS};
use crate::store::journal::{self, Journal, Record};
use park_protocol::reports::{LostOutcome, LostResult, LostSession, ResurrectOutput};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// How many journal copies are kept (continuum saves every 15 minutes by default: five hours).
const KEEP: usize = 20;

/// resurrect's save directory: `@resurrect-dir` (with `$HOME`, `$HOSTNAME` and `~` expanded, as
/// resurrect does), else `~/.tmux/resurrect` when it exists, else
/// `${XDG_DATA_HOME:-~/.local/share}/tmux/resurrect`.
fn resurrect_dir(ctx: &Ctx) -> Option<PathBuf> {
    let home = std::env::var("HOME").ok()?;
    if let Ok(Some(d)) = ctx.mux.global_option("@resurrect-dir") {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
        return Some(PathBuf::from(
            d.replace("$HOME", &home)
                .replace("$HOSTNAME", host.trim())
                .replace('~', &home),
        ));
    }
    let old = Path::new(&home).join(".tmux/resurrect");
    if old.is_dir() {
        return Some(old);
    }
    let data = std::env::var("XDG_DATA_HOME")
        .ok()
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| format!("{home}/.local/share"));
    Some(Path::new(&data).join("tmux/resurrect"))
}

/// The save file `last` points to (its file name), if it is one of resurrect's.
fn last_save(dir: &Path) -> Option<String> {
    let target = std::fs::read_link(dir.join("last")).ok()?;
    let name = target.file_name()?.to_str()?.to_string();
    (name.starts_with("tmux_resurrect_") && !name.contains('/')).then_some(name)
}

fn copies_dir(home: &Path) -> PathBuf {
    home.join("resurrect")
}

fn copy_path(home: &Path, save: &str) -> PathBuf {
    copies_dir(home).join(format!("{save}.journal.json"))
}

/// Keeps the newest [`KEEP`] copies.
fn prune(home: &Path) {
    let Ok(rd) = std::fs::read_dir(copies_dir(home)) else {
        return;
    };
    let mut files: Vec<(std::time::SystemTime, PathBuf)> = rd
        .flatten()
        .filter(|d| d.file_name().to_string_lossy().ends_with(".journal.json"))
        .filter_map(|d| Some((d.metadata().ok()?.modified().ok()?, d.path())))
        .collect();
    files.sort();
    let n = files.len().saturating_sub(KEEP);
    for (_, p) in files.into_iter().take(n) {
        let _ = std::fs::remove_file(p);
    }
}

fn output(action: &str, dry_run: bool) -> ResurrectOutput {
    ResurrectOutput {
        schema: park_protocol::SCHEMA_VERSION,
        action: action.into(),
        dry_run,
        save_file: None,
        copy: None,
        recorded: 0,
        sessions: vec![],
        warnings: vec![],
    }
}

/// `park resurrect save`: a journal pass and its copy for the save resurrect just wrote.
pub fn save(ctx: &Ctx) -> Result<ResurrectOutput, Stop> {
    let snap = crate::ops::journal::pass(ctx).map_err(|s| s.of("resurrect"))?;
    let mut out = output("save", false);
    out.recorded = snap.live.len() as u32;
    out.warnings = snap.warnings;
    let Some(dir) = resurrect_dir(ctx) else {
        out.warnings
            .push("HOME is not set: no resurrect directory".into());
        return Ok(out);
    };
    let Some(name) = last_save(&dir) else {
        out.warnings.push(format!(
            "no tmux-resurrect save in {} (`last` is missing): the journal is kept, no copy made",
            dir.display()
        ));
        return Ok(out);
    };
    let home = &ctx.ledger.home;
    let bytes = std::fs::read(journal::path(home)).unwrap_or_default();
    let copy = copy_path(home, &name);
    crate::store::ledger::private_dir(&copies_dir(home))
        .and_then(|_| crate::store::ledger::write_atomic(&copy, &bytes))
        .map_err(|e| Stop::refused(format!("cannot copy the journal: {e}")).of("resurrect"))?;
    prune(home);
    out.save_file = Some(dir.join(&name).to_string_lossy().into_owned());
    out.copy = Some(copy.to_string_lossy().into_owned());
    Ok(out)
}

/// Where lost record `r` may have been restored: its slot in the journal, then its slot in the
/// copy made at the save being restored (windows rearranged after that save). Only the journal
/// says what is lost: a session that left it after the save (an exit, a park) is not in it, and
/// the copy never brings it back.
fn slots(r: &Record, saved: Option<&Journal>) -> Vec<(String, u32, u32)> {
    let mut out = vec![(
        r.entry.place.session.clone(),
        r.entry.place.window_index,
        r.entry.place.pane_index,
    )];
    if let Some(c) = saved.and_then(|j| j.sessions.iter().find(|x| x.entry.id == r.entry.id)) {
        let s = (
            c.entry.place.session.clone(),
            c.entry.place.window_index,
            c.entry.place.pane_index,
        );
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

/// `park resurrect restore`: resumes each lost session in the pane resurrect restored for it.
pub fn restore(ctx: &Ctx, dry_run: bool) -> Result<ResurrectOutput, Stop> {
    let home = &ctx.ledger.home;
    let mut out = output("restore", dry_run);
    let server = ctx.mux.home_server();
    let j = journal::load(home).map_err(|e| Stop::refused(e.to_string()).of("resurrect"))?;
    let dir = resurrect_dir(ctx);
    let save = dir.as_deref().and_then(last_save);
    let copy: Option<Journal> = save.as_deref().and_then(|name| {
        let p = copy_path(home, name);
        out.copy = Some(p.to_string_lossy().into_owned());
        let c: Option<Journal> = std::fs::read(&p)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok());
        if c.is_none() {
            out.warnings.push(format!(
                "no journal copy for {name} (saved before park's hook was set?): the journal alone is used"
            ));
        }
        c
    });
    out.save_file = match (&dir, &save) {
        (Some(d), Some(n)) => Some(d.join(n).to_string_lossy().into_owned()),
        _ => None,
    };
    let s = scan::scan(ctx.platform.as_ref(), ctx.mux.as_ref(), false)
        .map_err(|e| Stop::refused(format!("process scan failed: {e}")).of("resurrect"))?;
    if let Some(e) = &s.pane_error {
        return Err(
            Stop::refused(format!("pane map unavailable ({e}): nothing restored")).of("resurrect"),
        );
    }
    let (ledger, _) = ctx.ledger.all();
    let running: HashSet<String> = s
        .found
        .iter()
        .filter_map(|f| Some(entry_id(f.proc.agent, f.ident.session_id.as_ref()?)))
        .collect();
    let in_ledger: HashSet<String> = ledger.iter().map(|e| e.id.clone()).collect();
    let lost: Vec<Record> = journal::lost_now(&j, &s.table, &running, &in_ledger)
        .into_iter()
        .cloned()
        .collect();
    let mut adopted: Vec<String> = vec![];
    for r in &lost {
        let place = &r.entry.place;
        if server.as_deref() != Some(place.server.as_str()) {
            continue;
        }
        let at = format!(
            "{}:{}.{}",
            place.session, place.window_index, place.pane_index
        );
        let skip = |why: String| lost_session(r, LostOutcome::Skipped, Some(why));
        if let Some(why) = refuse(r, &j, &s, &ledger) {
            out.sessions.push(skip(why));
            continue;
        }
        let restored = |(session, w, i): &(String, u32, u32)| {
            s.panes
                .iter()
                .find(|p| p.session == *session && p.window_index == *w && p.pane_index == *i)
        };
        let here = slots(r, copy.as_ref());
        // The first slot with a pane in the session's cwd, else the first with a pane at all
        // (whose cwd is then said to differ).
        let Some(p) = here
            .iter()
            .filter_map(restored)
            .find(|p| same_dir(&p.cwd, &r.entry.cwd))
            .or_else(|| here.iter().find_map(restored))
        else {
            out.sessions.push(skip(format!(
                "tmux-resurrect restored no pane at {at}: `park rebuild` makes its window"
            )));
            continue;
        };
        if let Some(f) = s
            .found
            .iter()
            .find(|f| f.pane.as_ref().is_some_and(|fp| fp.id == p.id))
        {
            out.sessions.push(skip(format!(
                "a fresh {} runs in the restored pane {} ({at}): tmux-resurrect restarted it (@resurrect-processes); park never types into it — remove the agent from @resurrect-processes",
                f.proc.agent.as_str(),
                p.id
            )));
            continue;
        }
        if !same_dir(&p.cwd, &r.entry.cwd) {
            out.sessions.push(skip(format!(
                "the restored pane {} ({at}) is in {}, not {}: not guessing",
                p.id, p.cwd, r.entry.cwd
            )));
            continue;
        }
        if !SHELLS.contains(&p.current_command.as_str()) {
            out.sessions.push(skip(format!(
                "the restored pane {} ({at}) runs {}, not a shell",
                p.id, p.current_command
            )));
            continue;
        }
        if dry_run {
            out.sessions
                .push(lost_session(r, LostOutcome::WouldAdopt, None));
            continue;
        }
        if let Err(why) = claim_lost(ctx, r, None, Some((p, ident(&s, p.pid))), &mut out.warnings) {
            out.sessions.push(skip(why));
            continue;
        }
        adopted.push(r.entry.id.clone());
        let u = crate::ops::rebuild::resume_in(ctx, &s, &p.id, &r.entry.id);
        let mut l: LostSession = lost_session(r, LostResult::Unpark(u.outcome), u.reason);
        l.session = p.session.clone();
        out.sessions.push(l);
    }
    if !adopted.is_empty() {
        let mut j =
            journal::load(home).map_err(|e| Stop::refused(e.to_string()).of("resurrect"))?;
        j.sessions.retain(|r| !adopted.contains(&r.entry.id));
        let keep: HashSet<String> = j.sessions.iter().filter_map(|r| r.window.clone()).collect();
        j.windows.retain(|g| keep.contains(&g.id));
        if let Err(e) = journal::save(home, &j) {
            out.warnings.push(format!("journal: {e}"));
        }
    }
    ctx.publish_status();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use park_protocol::Agent;

    fn rec(sid: &str, pane_index: u32, seen: &str) -> Record {
        let mut e = crate::model::entry::Entry::sample(Agent::Claude, sid);
        e.place.pane_index = pane_index;
        Record {
            entry: e,
            process: (1, 1),
            server_process: (2, 2),
            first_seen: seen.into(),
            last_seen: seen.into(),
            window: None,
            lost_at: None,
            position: None,
        }
    }

    #[test]
    fn a_slot_comes_from_the_journal_then_from_the_copy_of_the_save() {
        let a = rec(
            "0b1d3c52-7a7e-4c1b-9d59-2f6f6c1e0a11",
            0,
            "2026-12-06T10:00:00Z",
        );
        assert_eq!(slots(&a, None), vec![("work".to_string(), 1, 0)]);
        let mut moved = a.clone();
        moved.entry.place.window_index = 4;
        let copy = Journal {
            sessions: vec![moved],
            ..Journal::default()
        };
        assert_eq!(
            slots(&a, Some(&copy)),
            vec![("work".to_string(), 1, 0), ("work".to_string(), 4, 0)]
        );
        // A copy that does not know it adds nothing (and never adds a session).
        assert_eq!(slots(&a, Some(&Journal::default())).len(), 1);
    }

    #[test]
    fn only_resurrect_save_files_name_a_copy() {
        let d = tempfile::tempdir().unwrap();
        assert_eq!(last_save(d.path()), None);
        std::os::unix::fs::symlink("tmux_resurrect_20261206T101500.txt", d.path().join("last"))
            .unwrap();
        assert_eq!(
            last_save(d.path()).as_deref(),
            Some("tmux_resurrect_20261206T101500.txt")
        );
        let e = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink("../../etc/passwd", e.path().join("last")).unwrap();
        assert_eq!(last_save(e.path()), None);
    }
}
