//! Window groups: a window parked as a whole is recorded once, under one group id, in
//! `$PARK_HOME/groups/<gid>.json` (server, session, window index and name, `#{window_layout}`, size,
//! and every pane in order with its cwd, command and session), so `park rebuild` can put the window
//! back after the multiplexer lost it.
//!
//! Contract:
//! * The group file is written before any pane of the window is killed, and lists every pane of the
//!   window, agent or not: the layout only applies to a window with the same number of panes.
//! * A group id survives re-parking: a window parked again reuses the id of the group that shares a
//!   member session with it, else of the group recorded for the same server, session, window index
//!   and name. Two different windows never share an id.
//! * [`plan`] is pure: from the groups, the parked entries and the set of entries whose pane is gone,
//!   it says which windows to recreate and which entry goes into which slot. A group is rebuilt as a
//!   window only when every parked member lost its pane (a window that still partly exists is never
//!   duplicated); other lost entries get a window per recorded (session, window), panes in their
//!   recorded order.

use crate::model::entry::Entry;
use crate::store::ledger::{private_dir, read_nofollow, write_atomic, LedgerError};
use crate::store::slot;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

pub const SCHEMA: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Slot {
    pub pane_index: u32,
    /// The pane handle when recorded (it does not survive a server restart; kept for the record).
    pub pane: String,
    pub cwd: String,
    /// What the pane ran (`#{pane_current_command}`): an agent, a shell, an editor, a dev server.
    pub command: String,
    /// The agent session this pane held, when it held one.
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub agent: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Group {
    pub schema: u32,
    pub id: String,
    pub kind: String,
    pub server: String,
    pub session: String,
    pub window_index: u32,
    pub window_name: String,
    /// `#{window_layout}`: split geometry, applied with `select-layout` to as many panes.
    pub layout: String,
    pub width: u32,
    pub height: u32,
    pub recorded_at: String,
    pub slots: Vec<Slot>,
    /// Dev servers and test browsers stopped with the window (restarted by `--with-servers`).
    #[serde(default)]
    pub servers: Vec<crate::scan::servers::Server>,
}

pub fn dir(home: &Path) -> PathBuf {
    home.join("groups")
}

pub fn valid_id(id: &str) -> bool {
    id.len() > 1
        && id.len() <= 64
        && id.starts_with('g')
        && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
}

/// A fresh id: time and pid, so two parks in the same second never collide.
pub(crate) fn new_id() -> String {
    let n = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("g{:x}-{:x}", n, std::process::id())
}

pub fn path(home: &Path, id: &str) -> Result<PathBuf, LedgerError> {
    if !valid_id(id) {
        return Err(LedgerError::BadId(id.to_string()));
    }
    Ok(dir(home).join(format!("{id}.json")))
}

pub fn save(home: &Path, g: &Group) -> Result<(), LedgerError> {
    private_dir(home)?;
    private_dir(&dir(home))?;
    let p = path(home, &g.id)?;
    let bytes = serde_json::to_vec_pretty(g).unwrap_or_default();
    write_atomic(&p, &bytes)
}

pub fn load(home: &Path, id: &str) -> Result<Option<Group>, String> {
    let p = path(home, id).map_err(|e| e.to_string())?;
    if std::fs::symlink_metadata(&p).is_err() {
        return Ok(None);
    }
    let b = read_nofollow(&p).map_err(|e| e.to_string())?;
    serde_json::from_slice::<Group>(&b)
        .map(Some)
        .map_err(|e| format!("{}: {e}", p.display()))
}

/// Every readable group, and one line per file that could not be read (never fatal).
pub(crate) fn load_all(home: &Path) -> (Vec<Group>, Vec<String>) {
    let mut out = vec![];
    let mut errs = vec![];
    let Ok(rd) = std::fs::read_dir(dir(home)) else {
        return (out, errs);
    };
    let mut names: Vec<String> = rd
        .flatten()
        .filter_map(|d| d.file_name().to_str().map(str::to_string))
        .filter(|n| n.ends_with(".json") && !n.starts_with('.'))
        .collect();
    names.sort();
    for n in names {
        let id = n.trim_end_matches(".json");
        match load(home, id) {
            Ok(Some(g)) if g.id == id => out.push(g),
            Ok(Some(g)) => errs.push(format!("group file {n} names group {}", g.id)),
            Ok(None) => {}
            Err(e) => errs.push(e),
        }
    }
    (out, errs)
}

/// The id a window being parked gets: the group sharing a member session, else the one recorded
/// for the same window, else none (make a new one). Pure.
pub(crate) fn pick_id(
    groups: &[Group],
    server: &str,
    session: &str,
    window_index: u32,
    window_name: &str,
    members: &[String],
) -> Option<String> {
    let same_server = |g: &&Group| g.server == server;
    groups
        .iter()
        .filter(same_server)
        .find(|g| {
            g.slots
                .iter()
                .any(|s| s.session_id.as_ref().is_some_and(|x| members.contains(x)))
        })
        .or_else(|| {
            groups.iter().filter(same_server).find(|g| {
                g.session == session
                    && g.window_index == window_index
                    && g.window_name == window_name
            })
        })
        .map(|g| g.id.clone())
}

/// The parked entries whose pane is gone (pure): no pane with the recorded handle on the recorded
/// server, a pane that is not its parked slot, or a pane a later park of another session claimed.
/// `probe(pid, entry id)` gives the start ticks of the pane's process and whether it is park's
/// placeholder for that entry.
pub fn lost(
    parked: &[Entry],
    panes: &[crate::adapters::mux::Pane],
    probe: impl Fn(u32, &str) -> (Option<u64>, bool),
) -> HashSet<String> {
    let mut out = HashSet::new();
    for e in parked {
        let pane = panes
            .iter()
            .find(|p| p.id == e.place.pane && p.server == e.place.server);
        let newer_claim = parked.iter().any(|o| {
            o.id != e.id
                && o.place.server == e.place.server
                && o.place.pane == e.place.pane
                && o.parked_at > e.parked_at
        });
        let gone = match pane {
            None => true,
            Some(p) => {
                let (start, placeholder) = probe(p.pid, &e.id);
                !slot::is_parked_slot(p, e, parked, start, placeholder) || newer_claim
            }
        };
        if gone {
            out.insert(e.id.clone());
        }
    }
    out
}

/// One pane of a window to recreate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanSlot {
    pub pane_index: u32,
    pub cwd: String,
    /// What the pane ran when recorded (informational: only agents are brought back).
    pub command: String,
    /// The parked entry that goes back into this slot.
    pub entry: Option<String>,
    pub session_id: Option<String>,
    pub agent: Option<String>,
}

/// One window to recreate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WindowPlan {
    pub group: Option<String>,
    pub server: String,
    pub session: String,
    pub window_index: u32,
    pub window_name: String,
    /// The recorded layout; `None` = tile the panes (no layout was recorded).
    pub layout: Option<String>,
    pub width: u32,
    pub height: u32,
    pub slots: Vec<PlanSlot>,
}

fn entry_slot(e: &Entry) -> PlanSlot {
    PlanSlot {
        pane_index: e.place.pane_index,
        cwd: e.cwd.clone(),
        command: e.agent.as_str().to_string(),
        entry: Some(e.id.clone()),
        session_id: Some(e.session_id.clone()),
        agent: Some(e.agent.as_str().to_string()),
    }
}

/// Which windows to recreate (pure). `parked` are the parked entries on the server being rebuilt,
/// `lost` the ids of those whose pane is gone.
pub fn plan(groups: &[Group], parked: &[Entry], lost: &HashSet<String>) -> Vec<WindowPlan> {
    let mut plans: Vec<WindowPlan> = vec![];
    let mut placed: HashSet<String> = HashSet::new();
    for g in groups {
        let members: Vec<&Entry> = parked
            .iter()
            .filter(|e| e.group.as_deref() == Some(g.id.as_str()) && e.place.server == g.server)
            .collect();
        if members.is_empty() || !members.iter().all(|e| lost.contains(&e.id)) {
            continue;
        }
        let mut slots: Vec<PlanSlot> = g
            .slots
            .iter()
            .map(|s| PlanSlot {
                pane_index: s.pane_index,
                cwd: s.cwd.clone(),
                command: s.command.clone(),
                entry: None,
                session_id: None,
                agent: None,
            })
            .collect();
        slots.sort_by_key(|s| s.pane_index);
        let mut unplaced = vec![];
        for e in members {
            let at = g
                .slots
                .iter()
                .find(|s| s.session_id.as_deref() == Some(e.session_id.as_str()))
                .and_then(|s| slots.iter().position(|p| p.pane_index == s.pane_index));
            match at {
                Some(i) if slots[i].entry.is_none() => {
                    slots[i].entry = Some(e.id.clone());
                    slots[i].session_id = Some(e.session_id.clone());
                    slots[i].agent = Some(e.agent.as_str().to_string());
                    placed.insert(e.id.clone());
                }
                _ => unplaced.push(e),
            }
        }
        // A member the group file does not list (parked into it later): an extra pane at the end,
        // and the recorded layout no longer fits.
        let mut layout = Some(g.layout.clone()).filter(|l| !l.is_empty());
        for e in unplaced {
            let mut s = entry_slot(e);
            s.pane_index = slots.last().map(|x| x.pane_index + 1).unwrap_or(0);
            slots.push(s);
            placed.insert(e.id.clone());
            layout = None;
        }
        plans.push(WindowPlan {
            group: Some(g.id.clone()),
            server: g.server.clone(),
            session: g.session.clone(),
            window_index: g.window_index,
            window_name: g.window_name.clone(),
            layout,
            width: g.width,
            height: g.height,
            slots,
        });
    }
    // Everything else that lost its pane: one window per recorded (server, session, window).
    let mut rest: BTreeMap<(String, String, u32, String), Vec<&Entry>> = BTreeMap::new();
    for e in parked {
        if lost.contains(&e.id) && !placed.contains(&e.id) {
            rest.entry((
                e.place.server.clone(),
                e.place.session.clone(),
                e.place.window_index,
                e.place.window_name.clone(),
            ))
            .or_default()
            .push(e);
        }
    }
    for ((server, session, window_index, window_name), mut es) in rest {
        es.sort_by_key(|e| (e.place.pane_index, e.id.clone()));
        plans.push(WindowPlan {
            group: None,
            server,
            session,
            window_index,
            window_name,
            layout: None,
            width: 0,
            height: 0,
            slots: es.into_iter().map(entry_slot).collect(),
        });
    }
    plans.sort_by(|a, b| {
        (&a.server, &a.session, a.window_index).cmp(&(&b.server, &b.session, b.window_index))
    });
    plans
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::ledger::tests::sample;

    fn member(sfx: &str, group: Option<&str>, pane_index: u32) -> Entry {
        let mut e = sample(sfx);
        e.group = group.map(str::to_string);
        e.place.pane_index = pane_index;
        e.place.session = "main".into();
        e.place.window_index = 2;
        e.place.window_name = "api".into();
        e
    }

    fn group_of(id: &str, es: &[&Entry], extra_shell_at: Option<u32>) -> Group {
        let mut slots: Vec<Slot> = es
            .iter()
            .map(|e| Slot {
                pane_index: e.place.pane_index,
                pane: e.place.pane.clone(),
                cwd: e.cwd.clone(),
                command: "claude".into(),
                session_id: Some(e.session_id.clone()),
                agent: Some("claude".into()),
            })
            .collect();
        if let Some(i) = extra_shell_at {
            slots.push(Slot {
                pane_index: i,
                pane: "%99".into(),
                cwd: "/srv".into(),
                command: "bash".into(),
                session_id: None,
                agent: None,
            });
        }
        Group {
            schema: SCHEMA,
            id: id.into(),
            kind: "tmux".into(),
            server: es[0].place.server.clone(),
            session: "main".into(),
            window_index: 2,
            window_name: "api".into(),
            layout: "abcd,160x40,0,0{80x40,0,0,0,79x40,81,0,1}".into(),
            width: 160,
            height: 40,
            recorded_at: String::new(),
            slots,
            servers: vec![],
        }
    }

    #[test]
    fn a_lost_group_comes_back_whole_with_each_session_in_its_slot() {
        let a = member("a", Some("g1"), 2);
        let b = member("b", Some("g1"), 0);
        let g = group_of("g1", &[&a, &b], Some(1));
        let lost: HashSet<String> = [a.id.clone(), b.id.clone()].into();
        let p = plan(&[g], &[a.clone(), b.clone()], &lost);
        assert_eq!(p.len(), 1);
        let w = &p[0];
        assert_eq!(w.group.as_deref(), Some("g1"));
        assert!(w.layout.is_some());
        let order: Vec<(u32, Option<String>)> = w
            .slots
            .iter()
            .map(|s| (s.pane_index, s.entry.clone()))
            .collect();
        assert_eq!(
            order,
            vec![(0, Some(b.id.clone())), (1, None), (2, Some(a.id.clone()))]
        );
        assert_eq!(w.slots[1].cwd, "/srv", "a non-agent pane keeps its cwd");
    }

    #[test]
    fn a_window_that_still_partly_exists_is_never_duplicated() {
        let a = member("a", Some("g1"), 0);
        let b = member("b", Some("g1"), 1);
        let g = group_of("g1", &[&a, &b], None);
        // Only a lost its pane: b's pane is still there, so the group's window exists.
        let lost: HashSet<String> = [a.id.clone()].into();
        let p = plan(&[g], &[a.clone(), b.clone()], &lost);
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].group, None, "not rebuilt as the whole group");
        assert_eq!(p[0].slots.len(), 1);
        assert_eq!(p[0].slots[0].entry.as_deref(), Some(a.id.as_str()));
        // Nothing lost: nothing to do.
        assert!(plan(&[], &[a, b], &HashSet::new()).is_empty());
    }

    #[test]
    fn ungrouped_lost_entries_share_a_window_in_pane_order() {
        let a = member("a", None, 3);
        let b = member("b", None, 1);
        let mut c = member("c", None, 0);
        c.place.window_index = 5;
        let lost: HashSet<String> = [a.id.clone(), b.id.clone(), c.id.clone()].into();
        let p = plan(&[], &[a.clone(), b.clone(), c.clone()], &lost);
        assert_eq!(p.len(), 2);
        let ids: Vec<_> = p[0]
            .slots
            .iter()
            .map(|s| s.entry.clone().unwrap())
            .collect();
        assert_eq!(ids, vec![b.id.clone(), a.id.clone()]);
        assert_eq!(p[1].window_index, 5);
        assert!(p[0].layout.is_none());
    }

    #[test]
    fn a_member_missing_from_the_group_file_is_appended_and_drops_the_layout() {
        let a = member("a", Some("g1"), 0);
        let b = member("b", Some("g1"), 1);
        let g = group_of("g1", &[&a], None);
        let lost: HashSet<String> = [a.id.clone(), b.id.clone()].into();
        let p = plan(&[g], &[a, b.clone()], &lost);
        assert_eq!(p[0].slots.len(), 2);
        assert_eq!(p[0].slots[1].entry.as_deref(), Some(b.id.as_str()));
        assert!(p[0].layout.is_none());
    }

    #[test]
    fn the_group_id_survives_reparking_and_never_joins_two_windows() {
        let a = member("a", Some("g1"), 0);
        let g = group_of("g1", &[&a], None);
        let srv = a.place.server.clone();
        let gs = [g];
        // Same member session, even after the window was renamed and moved.
        assert_eq!(
            pick_id(
                &gs,
                &srv,
                "other",
                9,
                "x",
                std::slice::from_ref(&a.session_id)
            )
            .as_deref(),
            Some("g1")
        );
        // Same window, new members.
        assert_eq!(
            pick_id(&gs, &srv, "main", 2, "api", &["z".into()]).as_deref(),
            Some("g1")
        );
        // Same name at another index is another window.
        assert_eq!(pick_id(&gs, &srv, "main", 3, "api", &["z".into()]), None);
        // Another server never matches.
        assert_eq!(
            pick_id(
                &gs,
                "/tmp/other",
                "main",
                2,
                "api",
                std::slice::from_ref(&a.session_id)
            ),
            None
        );
    }

    #[test]
    fn a_pane_is_lost_unless_it_still_shows_the_parked_session() {
        let mut a = member("a", None, 0);
        a.place.pane = "%3".into();
        let mut b = member("b", None, 1);
        b.place.pane = "%4".into();
        let pane = |id: &str, pill: &str| crate::adapters::mux::Pane {
            id: id.into(),
            pid: 10,
            pill: pill.into(),
            server: a.place.server.clone(),
            ..Default::default()
        };
        let none = |_: u32, _: &str| (Some(7), false);
        // Server restarted: %3 exists again, but as a fresh pane with no pill.
        let l = lost(
            &[a.clone(), b.clone()],
            &[pane("%3", ""), pane("%4", "❄ claude 1 B")],
            none,
        );
        assert_eq!(l, [a.id.clone()].into());
        // A placeholder for the entry counts even with no pill.
        let l = lost(std::slice::from_ref(&a), &[pane("%3", "")], |_, id| {
            (Some(7), id == a.id)
        });
        assert!(l.is_empty());
        // The pane still runs the process it ran at park time (a park interrupted before the
        // pill was set): the same pane. Same pid with another start time: a recycled pid.
        let mut a2 = a.clone();
        a2.place.pane_proc = (10, 7);
        assert!(lost(std::slice::from_ref(&a2), &[pane("%3", "")], none).is_empty());
        a2.place.pane_proc = (10, 8);
        assert_eq!(
            lost(std::slice::from_ref(&a2), &[pane("%3", "")], none).len(),
            1
        );
        // The same handle on another server is not this pane.
        let mut other = pane("%3", "❄ claude");
        other.server = "/tmp/elsewhere".into();
        assert_eq!(lost(std::slice::from_ref(&a), &[other], none).len(), 1);
        // Two entries claim %3: the older park lost it to the newer one.
        let mut c = member("c", None, 0);
        c.place.pane = "%3".into();
        c.parked_at = "2026-12-03T00:00:00Z".into();
        let l = lost(&[a.clone(), c.clone()], &[pane("%3", "❄ claude")], none);
        assert_eq!(l, [a.id.clone()].into());
    }

    #[test]
    fn group_files_round_trip_and_bad_ids_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let a = member("a", Some("g1"), 0);
        let g = group_of("g1", &[&a], None);
        save(d.path(), &g).unwrap();
        let (all, errs) = load_all(d.path());
        assert_eq!(all, vec![g]);
        assert!(errs.is_empty());
        assert!(path(d.path(), "../x").is_err());
        assert!(path(d.path(), "g/../../x").is_err());
        std::fs::write(dir(d.path()).join("g2.json"), b"{not json").unwrap();
        let (all, errs) = load_all(d.path());
        assert_eq!(all.len(), 1);
        assert_eq!(
            errs.len(),
            1,
            "a corrupt group file is reported, never fatal"
        );
    }
}
