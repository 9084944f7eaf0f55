//! The journal of live sessions: `$PARK_HOME/journal.json`, what park would need to bring back
//! every live, identified agent pane if the multiplexer or the machine died now.
//!
//! Contract:
//! * One file, written atomically and private (0600), holding for each journaled session the park
//!   entry a park would write for it now (agent, exact session id, cwd, whitelisted flags, config
//!   dir, place), the agent's process and the multiplexer server's process (pid and start time:
//!   identities, compared for equality only), when it was first and last seen live, and the
//!   window it sat in (the same record as a parked window group: layout and every pane in order).
//! * A file that does not parse, or that a newer park wrote (a schema above [`SCHEMA`]), is
//!   reported and never rewritten: [`save`] refuses to replace what [`load`] could not read, so
//!   nothing a newer park knows is thrown away by an older one.
//! * [`fate`] is pure: from what the scan says now about a journaled session's process and server
//!   it decides whether the record stays live, leaves (the agent ended while its server lived: an
//!   exit, a park, a closed pane) or is lost (its server died with it: the case the journal is for).
//!   A lost record is kept untouched until a rebuild adopts it or the session is seen live again.

use crate::model::entry::Entry;
use crate::store::group::Group;
use crate::store::ledger::{private_dir, read_nofollow, write_atomic};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

pub const SCHEMA: u32 = 1;
pub const FILE: &str = "journal.json";

/// One journaled session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// The entry a park of this session would write now (state `Parked`, its `parked_at` the last
    /// time it was seen live): what a rebuild puts in the ledger when the session is lost.
    pub entry: Entry,
    /// The agent's main process (pid, start time).
    pub process: (u32, u64),
    /// The multiplexer server the pane belonged to (pid, start time): a server that restarted on
    /// the same socket is another server.
    pub server_process: (u32, u64),
    pub first_seen: String,
    pub last_seen: String,
    /// The window group of `windows` it sat in.
    #[serde(default)]
    pub window: Option<String>,
    /// Set when a pass found its process and its server gone: when that was seen.
    #[serde(default)]
    pub lost_at: Option<String>,
    /// Its pane's place among the tiled panes of its window (`Pane::position`): zellij renumbers
    /// panes when it resurrects a session, so a lost zellij session's pane is found by it.
    #[serde(default)]
    pub position: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Journal {
    pub schema: u32,
    /// `park <version>` that wrote it.
    pub written_by: String,
    pub written_at: String,
    pub sessions: Vec<Record>,
    /// The windows the sessions sat in, as window groups (ids start with `j`, never a saved
    /// group's id until a rebuild adopts one).
    #[serde(default)]
    pub windows: Vec<Group>,
}

impl Default for Journal {
    fn default() -> Self {
        Journal {
            schema: SCHEMA,
            written_by: String::new(),
            written_at: String::new(),
            sessions: vec![],
            windows: vec![],
        }
    }
}

impl Journal {
    pub fn lost(&self) -> impl Iterator<Item = &Record> {
        self.sessions.iter().filter(|r| r.lost_at.is_some())
    }
    pub fn window(&self, id: &str) -> Option<&Group> {
        self.windows.iter().find(|g| g.id == id)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error("{0}: {1}")]
    Io(PathBuf, String),
    #[error(
        "corrupt journal {0}: {1} (kept as is; park records nothing until it is fixed or removed)"
    )]
    Corrupt(PathBuf, String),
    #[error("journal {0} was written by a newer park (schema {1}, this park reads {SCHEMA}); kept as is, and not updated by this park")]
    Newer(PathBuf, u32),
}

pub fn path(home: &Path) -> PathBuf {
    home.join(FILE)
}

/// The journal, or an empty one when there is none yet.
pub fn load(home: &Path) -> Result<Journal, JournalError> {
    let p = path(home);
    if std::fs::symlink_metadata(&p).is_err() {
        return Ok(Journal::default());
    }
    let bytes = read_nofollow(&p).map_err(|e| JournalError::Io(p.clone(), e.to_string()))?;
    // The schema first: a newer file may not parse as this park's records at all.
    let v: serde_json::Value = serde_json::from_slice(&bytes)
        .map_err(|e| JournalError::Corrupt(p.clone(), e.to_string()))?;
    match v.get("schema").and_then(|s| s.as_u64()) {
        Some(s) if s > SCHEMA as u64 => return Err(JournalError::Newer(p, s as u32)),
        Some(_) => {}
        None => return Err(JournalError::Corrupt(p, "no schema".into())),
    }
    serde_json::from_value(v).map_err(|e| JournalError::Corrupt(p, e.to_string()))
}

/// Writes `j` over the journal, unless the file there now is one [`load`] cannot read.
pub fn save(home: &Path, j: &Journal) -> Result<(), JournalError> {
    let p = path(home);
    if let Err(e) = load(home) {
        if !matches!(e, JournalError::Io(..))
            && !crate::support::fault::disabled("journal-corrupt-kept")
        {
            return Err(e);
        }
    }
    private_dir(home).map_err(|e| JournalError::Io(home.to_path_buf(), e.to_string()))?;
    let bytes = serde_json::to_vec_pretty(j).expect("journal serialises");
    write_atomic(&p, &bytes).map_err(|e| JournalError::Io(p, e.to_string()))
}

/// The process (pid, start time) runs in `table`: a zombie is a dead process its parent has not
/// reaped yet (a killed tmux server's agents are reparented to a subreaper that may reap them
/// late).
pub fn alive(
    table: &crate::adapters::platform::proctree::ProcTable,
    (pid, start): (u32, u64),
) -> bool {
    pid != 0
        && table.get(pid).is_some_and(|p| {
            p.start_ticks == start
                && (!matches!(p.state, 'Z' | 'X')
                    || crate::support::fault::disabled("journal-zombie"))
        })
}

/// The records of `j` lost as of now (their fate with these facts), whether or not a pass has
/// marked them yet: `running` holds the entry ids of sessions running now, `ledger` the ids the
/// ledger has.
pub fn lost_now<'a>(
    j: &'a Journal,
    table: &crate::adapters::platform::proctree::ProcTable,
    running: &std::collections::HashSet<String>,
    ledger: &std::collections::HashSet<String>,
) -> Vec<&'a Record> {
    j.sessions
        .iter()
        .filter(|r| {
            fate(Facts {
                process_alive: alive(table, r.process),
                server_alive: r.server_process.0 == 0 || alive(table, r.server_process),
                running_now: running.contains(&r.entry.id),
                in_ledger: ledger.contains(&r.entry.id),
            }) == Fate::Lost
        })
        .collect()
}

/// What the scan says now about a journaled session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Facts {
    /// The recorded process (pid and start time) still runs.
    pub process_alive: bool,
    /// The recorded server process (pid and start time) still runs.
    pub server_alive: bool,
    /// The session runs now in a process park found (here or anywhere): a record of it is made
    /// from that process instead.
    pub running_now: bool,
    /// The ledger holds an entry for the session (parked, parking or resuming): the ledger is
    /// its way back, not the journal.
    pub in_ledger: bool,
}

/// What becomes of a journaled session at a pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// Its process runs: the record is refreshed from the scan (or kept, when the scan could not
    /// bind it this time).
    Live,
    /// It ended while its server lived (an exit, a park, a closed pane), or it runs again
    /// somewhere, or the ledger has it: the record leaves.
    Leaves,
    /// Its process and its server are gone: kept for `park rebuild`.
    Lost,
}

/// The fate of a record (pure; see the module's contract).
pub fn fate(f: Facts) -> Fate {
    use crate::support::fault::disabled;
    if f.in_ledger && !disabled("journal-in-ledger") {
        return Fate::Leaves;
    }
    if f.process_alive {
        return Fate::Live;
    }
    if (f.running_now && !disabled("journal-running"))
        || (f.server_alive && !disabled("journal-server-alive"))
    {
        return Fate::Leaves;
    }
    Fate::Lost
}

#[cfg(test)]
mod tests {
    use super::*;
    use park_protocol::Agent;

    fn facts(process_alive: bool, server_alive: bool) -> Facts {
        Facts {
            process_alive,
            server_alive,
            running_now: false,
            in_ledger: false,
        }
    }

    #[test]
    fn a_session_is_lost_only_when_its_process_and_its_server_are_gone() {
        assert_eq!(fate(facts(true, true)), Fate::Live);
        // The agent exited (or was parked, or its pane closed) while tmux lived: not lost.
        assert_eq!(fate(facts(false, true)), Fate::Leaves);
        // The server died with it: a crash, a kill-server, a reboot.
        assert_eq!(fate(facts(false, false)), Fate::Lost);
        // A process that outlived its server (a detached agent) is still live.
        assert_eq!(fate(facts(true, false)), Fate::Live);
    }

    #[test]
    fn a_session_running_again_or_parked_leaves_the_journal() {
        let mut f = facts(false, false);
        f.running_now = true;
        assert_eq!(
            fate(f),
            Fate::Leaves,
            "resumed by hand: never two processes"
        );
        let mut f = facts(false, false);
        f.in_ledger = true;
        assert_eq!(fate(f), Fate::Leaves, "the ledger is its way back");
        let mut f = facts(true, true);
        f.in_ledger = true;
        assert_eq!(fate(f), Fate::Leaves);
    }

    fn sample() -> Journal {
        Journal {
            schema: SCHEMA,
            written_by: "park test".into(),
            written_at: "2026-12-06T00:00:00Z".into(),
            sessions: vec![Record {
                entry: Entry::sample(Agent::Claude, "0b1d3c52-7a7e-4c1b-9d59-2f6f6c1e0a11"),
                process: (10, 20),
                server_process: (1, 2),
                first_seen: "2026-12-06T00:00:00Z".into(),
                last_seen: "2026-12-06T00:00:00Z".into(),
                window: None,
                lost_at: None,
                position: None,
            }],
            windows: vec![],
        }
    }

    #[test]
    fn it_round_trips_privately() {
        let d = tempfile::tempdir().unwrap();
        save(d.path(), &sample()).unwrap();
        assert_eq!(load(d.path()).unwrap(), sample());
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path(d.path()))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn a_missing_journal_is_an_empty_one() {
        let d = tempfile::tempdir().unwrap();
        assert!(load(d.path()).unwrap().sessions.is_empty());
    }

    #[test]
    fn a_corrupt_or_newer_journal_is_reported_and_never_rewritten() {
        let d = tempfile::tempdir().unwrap();
        let p = path(d.path());
        std::fs::write(&p, b"{\"schema\":1,\"sessions\":[tru").unwrap();
        let e = load(d.path()).unwrap_err();
        assert!(matches!(e, JournalError::Corrupt(..)), "{e}");
        assert!(save(d.path(), &sample()).is_err());
        assert_eq!(
            std::fs::read(&p).unwrap(),
            b"{\"schema\":1,\"sessions\":[tru"
        );

        let newer = br#"{"schema":2,"sessions":[{"something":"new"}]}"#;
        std::fs::write(&p, newer).unwrap();
        let e = load(d.path()).unwrap_err();
        assert!(matches!(e, JournalError::Newer(_, 2)), "{e}");
        assert!(e.to_string().contains("newer park"), "{e}");
        assert!(save(d.path(), &sample()).is_err());
        assert_eq!(std::fs::read(&p).unwrap(), newer);
    }
}
