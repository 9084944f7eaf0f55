//! Where each parked entry's slot (its pane) is now, with the process table's facts: the pure
//! rule is `store::slot` (a handle alone is never evidence; zellij renumbers panes when it
//! resurrects a session), this module feeds it the pane map and the processes. Used by `ls` (a
//! parked row shows the pane its slot is in now), pane targets (`.`, handles), `unpark`,
//! `rebuild` and `doctor`. Reads only.

use crate::adapters::mux::Pane;
use crate::ctx::Ctx;
use crate::model::entry::{Entry, EntryState};
use crate::scan::Scan;
use crate::store::slot::{self, Slot};

/// Where the entry's slot is now ([`slot::find`] with the process table's facts). `all`: the
/// ledger's entries (the other parked ones decide whether an untagged mark is shared).
pub fn locate(ctx: &Ctx, e: &Entry, panes: &[Pane], all: &[Entry]) -> Slot {
    let others: Vec<Entry> = all
        .iter()
        .filter(|o| o.state == EntryState::Parked && o.id != e.id)
        .cloned()
        .collect();
    slot::find(e, panes, &others, |p| {
        crate::store::slot::is_parked_slot(
            p,
            e,
            &others,
            ctx.platform.process(p.pid).map(|x| x.start_ticks),
            is_placeholder(ctx, p.pid, &e.id),
        )
    })
}

/// Points the entry at the pane that carries its mark (the multiplexer renumbered its panes).
pub fn repoint_in_memory(e: &mut Entry, p: &Pane) {
    e.place.pane = p.id.clone();
    e.place.session = p.session.clone();
    e.place.window_index = p.window_index;
    e.place.window_name = p.window_name.clone();
    e.place.pane_index = p.pane_index;
}

/// The parked entries as pane targets (`.`, `terminal_3@s`) must see them: a zellij entry's pane
/// is where its slot is now, and an entry whose slot cannot be shown names no pane — after a
/// resurrection its stale id belongs to another pane, and `.` typed there must not resume it.
/// tmux entries keep their recorded pane unless their mark moved (unpark opens a window for a
/// lost one). Without a pane map nothing is changed.
pub fn as_placed(ctx: &Ctx, s: &Scan, entries: &[Entry]) -> Vec<Entry> {
    if s.pane_error.is_some() {
        return entries.to_vec();
    }
    place_on(ctx, &s.panes, entries)
}

/// [`as_placed`] for a command that has no scan: the pane map is read only when a target names a
/// pane (`.`, a handle) and a parked entry lives under zellij.
pub fn placed_for(
    ctx: &Ctx,
    targets: &[crate::guards::target::Target],
    entries: Vec<Entry>,
) -> Vec<Entry> {
    use crate::guards::target::Target;
    let wanted = targets
        .iter()
        .any(|t| matches!(t, Target::Here | Target::Pane(_)))
        && entries
            .iter()
            .any(|e| crate::adapters::mux::is_zellij_server(&e.place.server));
    if !wanted {
        return entries;
    }
    match ctx.mux.list_panes() {
        Ok(panes) => place_on(ctx, &panes, &entries),
        Err(_) => entries,
    }
}

fn place_on(ctx: &Ctx, panes: &[Pane], entries: &[Entry]) -> Vec<Entry> {
    entries
        .iter()
        .map(|e| {
            let mut e = e.clone();
            if e.state != EntryState::Parked || !ctx.mux.serves(&e.place.server) {
                return e;
            }
            match locate(ctx, &e, panes, entries) {
                Slot::Here(_) => {}
                Slot::Moved(p) => repoint_in_memory(&mut e, &p),
                Slot::Missing(_) => {
                    // A pane a later park took over names that one, in any multiplexer.
                    if crate::adapters::mux::is_zellij_server(&e.place.server)
                        || slot::newer_in_pane(&e, entries).is_some()
                    {
                        e.place.pane = String::new();
                    }
                }
            }
            e
        })
        .collect()
}

/// park's placeholder for `eid` runs as the pane's process `pid` (tmux respawns the pane with
/// it) or as that process's foreground job (zellij: a shell runs it, see its `respawn`).
pub fn is_placeholder(ctx: &Ctx, pid: u32, eid: &str) -> bool {
    let hold = |p: &crate::adapters::platform::ProcInfo| {
        p.argv.get(1).is_some_and(|a| a == "hold") && p.argv.get(2).is_some_and(|a| a == eid)
    };
    ctx.platform.process(pid).is_some_and(|p| {
        hold(&p)
            || (p.tpgid > 0
                && p.tpgid as u32 != pid
                && ctx
                    .platform
                    .process(p.tpgid as u32)
                    .is_some_and(|f| hold(&f)))
    })
}

/// A ledger file that does not read (`LedgerError::Corrupt`): what its name says (the entry id is
/// the file's name) and the pane that carries its mark, if one does. park never acts on such an
/// entry; it names it wherever a target or a row would otherwise meet it, so the answer is "the
/// entry is unreadable", never a wrong one ("no parked session", "already exists").
#[derive(Debug, Clone)]
pub struct Unreadable {
    pub id: String,
    pub file: std::path::PathBuf,
    pub error: String,
    pub agent: Option<park_protocol::Agent>,
    pub session_id: Option<String>,
    pub pane: Option<Pane>,
}

impl Unreadable {
    /// Whether `t` names this entry (its pane, its session id or its id).
    pub fn named_by(&self, t: &crate::guards::target::Target, here: Option<&str>) -> bool {
        use crate::guards::target::Target;
        let pane = self.pane.as_ref().map(|p| p.id.as_str());
        match t {
            Target::Here => here.is_some() && pane == here,
            Target::Pane(p) => pane == Some(p.as_str()),
            Target::SessionId(id) => self.session_id.as_deref() == Some(id.as_str()),
            Target::Word(w) => *w == self.id,
            Target::Window(..) => false,
        }
    }

    /// The refusal: what is unreadable, where, and that nothing was changed.
    pub fn refusal(&self) -> String {
        format!(
            "the ledger entry {}{} is unreadable ({}: {}); `park doctor` explains; nothing was changed",
            self.id,
            self.pane
                .as_ref()
                .map(|p| format!(" for {}", p.id))
                .unwrap_or_default(),
            self.file.display(),
            self.error
        )
    }
}

/// The unreadable ledger files among `bad`, each with the pane that carries its mark (the title's
/// tag, or park's placeholder for it).
pub fn unreadable(
    ctx: &Ctx,
    panes: &[Pane],
    bad: &[crate::store::ledger::LedgerError],
) -> Vec<Unreadable> {
    bad.iter()
        .filter_map(|b| match b {
            crate::store::ledger::LedgerError::Corrupt(file, error) => {
                let id = file.file_stem()?.to_str()?.to_string();
                let (agent, sid) = id.split_once('-').unzip();
                let agent = agent.and_then(|a| serde_json::from_value(a.into()).ok());
                let session_id = sid.and_then(crate::agents::transcript::valid_session_id);
                let tag = slot::tag(&id);
                let pane = panes
                    .iter()
                    .find(|p| {
                        p.title.ends_with(&format!(" · {tag}"))
                            || p.title == format!("❄ {tag}")
                            || is_placeholder(ctx, p.pid, &id)
                    })
                    .cloned();
                Some(Unreadable {
                    id,
                    file: file.clone(),
                    error: error.clone(),
                    agent,
                    session_id,
                    pane,
                })
            }
            _ => None,
        })
        .collect()
}

/// The multiplexer sessions of parked entries that do not run now (a zellij session that
/// crashed or was killed: its panes are gone until `zellij attach` resurrects it), each with the
/// ids of its parked entries. Only sessions the adapter can tell about.
pub fn sessions_down(ctx: &Ctx, entries: &[Entry]) -> Vec<(String, Vec<String>)> {
    // One look per (server, session): each is a read of the process table.
    let mut seen: Vec<(&str, &str, bool)> = vec![];
    let mut out: Vec<(String, Vec<String>)> = vec![];
    for e in entries.iter().filter(|e| e.state == EntryState::Parked) {
        let (server, session) = (e.place.server.as_str(), e.place.session.as_str());
        let down = match seen.iter().find(|(a, b, _)| *a == server && *b == session) {
            Some((_, _, d)) => *d,
            None => {
                let d = ctx.mux.session_running(server, session) == Some(false);
                seen.push((server, session, d));
                d
            }
        };
        if !down {
            continue;
        }
        match out.iter_mut().find(|(s, _)| s == session) {
            Some((_, ids)) => ids.push(e.id.clone()),
            None => out.push((session.to_string(), vec![e.id.clone()])),
        }
    }
    out
}

/// Why an entry of a session that does not run cannot be resumed in its pane now, and the way
/// back (zellij resurrects a session on attach, marks and parked panes included).
pub fn session_down_why(session: &str, eid: &str) -> String {
    format!(
        "its zellij session {session:?} is not running: `zellij attach {session}` brings it back with its parked panes, then `park unpark {eid}` resumes it in its pane"
    )
}
