//! The ledger: one JSON file per parked session under `$PARK_HOME/parked/`, owned by park alone.
//!
//! Contract: entries are claimed exclusively, whole (written under a temporary name, then linked
//! to theirs: two parks of one session cannot both win, and no reader meets a half-written
//! claim), rewritten
//! atomically (tmp + fsync + rename), 0600 in 0700 dirs, never through a symlink. Entry ids are
//! `<agent>-<session id>`, validated `[A-Za-z0-9._-]+`. A file that will not parse is reported with
//! its path and kept: never skipped silently, never deleted.

use crate::model::entry::{valid_entry_id, Entry, ENTRY_SCHEMA};
use std::fs;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    #[error("{0}: {1}")]
    Io(PathBuf, std::io::Error),
    #[error("corrupt ledger file {0}: {1} (kept as is; fix or remove it by hand)")]
    Corrupt(PathBuf, String),
    #[error("ledger entry {0} already exists")]
    Exists(String),
    #[error("invalid entry id {0:?}")]
    BadId(String),
    #[error("{0} is a symlink; refusing to follow it")]
    Symlink(PathBuf),
}

#[derive(Debug, Clone)]
pub struct Ledger {
    pub home: PathBuf,
}

/// park's private file helpers (`fsx`) with the ledger's error type.
pub(crate) fn read_nofollow(p: &Path) -> Result<Vec<u8>, LedgerError> {
    Ok(crate::support::fs::read_nofollow(p)?)
}

/// Creates `dir` (and parents) 0700 and refuses a symlink in its place (see `fsx`).
pub fn private_dir(dir: &Path) -> Result<(), LedgerError> {
    Ok(crate::support::fs::private_dir(dir)?)
}

/// Atomic private write (see `fsx`).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), LedgerError> {
    Ok(crate::support::fs::write_atomic(path, bytes)?)
}

impl From<crate::support::fs::FsError> for LedgerError {
    fn from(e: crate::support::fs::FsError) -> Self {
        match e {
            crate::support::fs::FsError::Io(p, e) => LedgerError::Io(p, e),
            crate::support::fs::FsError::Symlink(p) => LedgerError::Symlink(p),
        }
    }
}

impl Ledger {
    pub fn new(home: PathBuf) -> Self {
        Ledger { home }
    }

    pub fn parked_dir(&self) -> PathBuf {
        self.home.join("parked")
    }

    pub fn ensure(&self) -> Result<(), LedgerError> {
        private_dir(&self.home)?;
        private_dir(&self.parked_dir())?;
        private_dir(&self.home.join("locks"))?;
        private_dir(&self.home.join("archive"))
    }

    /// Refuses a symlink in place of `$PARK_HOME` or `parked/`: reads, writes and deletes alike
    /// stay inside park's own directories.
    fn no_symlinked_dirs(&self) -> Result<(), LedgerError> {
        if crate::support::fault::disabled("ledger-symlink") {
            return Ok(());
        }
        for d in [self.home.clone(), self.parked_dir()] {
            if fs::symlink_metadata(&d).is_ok_and(|m| m.file_type().is_symlink()) {
                return Err(LedgerError::Symlink(d));
            }
        }
        Ok(())
    }

    fn path(&self, id: &str) -> Result<PathBuf, LedgerError> {
        if !valid_entry_id(id) {
            return Err(LedgerError::BadId(id.to_string()));
        }
        self.no_symlinked_dirs()?;
        Ok(self.parked_dir().join(format!("{id}.json")))
    }

    /// An entry park would write must be one park can read back and resume from.
    fn writable(e: &Entry) -> Result<(), LedgerError> {
        if crate::support::fault::disabled("entry-session-id") {
            return Ok(());
        }
        if crate::agents::transcript::valid_session_id(&e.session_id).is_none() {
            return Err(LedgerError::BadId(e.session_id.clone()));
        }
        Ok(())
    }

    /// Claims the entry: fails with `Exists` when any entry for this id is already there. The
    /// file appears whole or not at all: a reader (`park ls`, the autopilot, another park) never
    /// meets a half-written claim and reports it corrupt.
    pub fn claim(&self, e: &Entry) -> Result<(), LedgerError> {
        Self::writable(e)?;
        self.ensure()?;
        let p = self.path(&e.id)?;
        let bytes = serde_json::to_vec_pretty(e).expect("entry serialises");
        match crate::support::fs::create_exclusive(&p, &bytes)? {
            true => Ok(()),
            false => Err(LedgerError::Exists(e.id.clone())),
        }
    }

    pub fn save(&self, e: &Entry) -> Result<(), LedgerError> {
        Self::writable(e)?;
        self.ensure()?;
        let p = self.path(&e.id)?;
        write_atomic(&p, &serde_json::to_vec_pretty(e).expect("entry serialises"))
    }

    pub fn remove(&self, id: &str) -> Result<(), LedgerError> {
        let p = self.path(id)?;
        match fs::remove_file(&p) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(LedgerError::Io(p, e)),
        }
    }

    pub fn load(&self, id: &str) -> Result<Option<Entry>, LedgerError> {
        let p = self.path(id)?;
        match fs::symlink_metadata(&p) {
            Err(_) => return Ok(None),
            Ok(m) if m.file_type().is_symlink() => return Err(LedgerError::Symlink(p)),
            Ok(_) => {}
        }
        let b = fs::read(&p).map_err(|e| LedgerError::Io(p.clone(), e))?;
        parse_entry(&p, &b).map(Some)
    }

    /// Every entry, and every file that could not be read as one (reported, never dropped).
    pub fn all(&self) -> (Vec<Entry>, Vec<LedgerError>) {
        let mut ok = vec![];
        let mut bad = vec![];
        if let Err(e) = self.no_symlinked_dirs() {
            bad.push(e);
            return (ok, bad);
        }
        let Ok(rd) = fs::read_dir(self.parked_dir()) else {
            return (ok, bad);
        };
        let mut paths: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
        paths.sort();
        for p in paths {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if name.starts_with('.') || !name.ends_with(".json") {
                continue;
            }
            match fs::symlink_metadata(&p) {
                Ok(m) if m.file_type().is_symlink() => {
                    bad.push(LedgerError::Symlink(p));
                    continue;
                }
                _ => {}
            }
            match fs::read(&p) {
                Ok(b) => match parse_entry(&p, &b) {
                    Ok(e) => ok.push(e),
                    Err(e) => bad.push(e),
                },
                Err(e) => bad.push(LedgerError::Io(p, e)),
            }
        }
        (ok, bad)
    }
}

fn parse_entry(p: &Path, b: &[u8]) -> Result<Entry, LedgerError> {
    let e: Entry = serde_json::from_slice(b)
        .map_err(|err| LedgerError::Corrupt(p.to_path_buf(), err.to_string()))?;
    let stem = p.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    if e.id != stem || !valid_entry_id(&e.id) {
        return Err(LedgerError::Corrupt(
            p.to_path_buf(),
            format!("entry id {:?} does not match its file name", e.id),
        ));
    }
    if crate::agents::transcript::valid_session_id(&e.session_id).is_none() {
        return Err(LedgerError::Corrupt(
            p.to_path_buf(),
            format!("invalid session id {:?}", e.session_id),
        ));
    }
    if e.schema > ENTRY_SCHEMA {
        return Err(LedgerError::Corrupt(
            p.to_path_buf(),
            format!(
                "schema {} is newer than this park understands ({ENTRY_SCHEMA})",
                e.schema
            ),
        ));
    }
    Ok(e)
}

#[cfg(test)]
pub mod tests {
    use super::*;
    use crate::model::entry::{entry_id, EntryState, MuxPlace};
    use park_protocol::Agent;
    use std::os::unix::fs::PermissionsExt;

    pub fn sample(id_suffix: &str) -> Entry {
        let sid = format!("35c98558-0920-4e29-b81c-9304ca43f{id_suffix}");
        Entry {
            schema: 1,
            id: entry_id(Agent::Claude, &sid),
            state: EntryState::Parked,
            agent: Agent::Claude,
            session_id: sid,
            session_source: "status-file".into(),
            cwd: "/tmp".into(),
            program: "claude".into(),
            flags: vec![],
            dropped_flags: vec![],
            transcript: None,
            config_dir: None,
            config_var: None,
            place: MuxPlace {
                kind: "tmux".into(),
                server: "/tmp/s".into(),
                pane: "%1".into(),
                session: "s".into(),
                window_index: 0,
                window_name: "w".into(),
                pane_index: 0,
                title: "t".into(),
                pane_title: "t".into(),
                pane_proc: (0, 0),
            },
            pane_owned: false,
            parked_at: "2026-12-02T00:00:00Z".into(),
            last_active: None,
            bytes: 1,
            uss_bytes: 1,
            pss_bytes: 1,
            anon_bytes: 1,
            freed_bytes: Some(1),
            killed_pids: vec![],
            resumer: None,
            last_error: None,
            handoff_pane: None,
            worktree: None,
            group: None,
            fresh_from: None,
            wake: None,
            agent_version: None,
            shell_path: None,
        }
    }

    #[test]
    fn claim_is_exclusive_and_files_are_private() {
        let d = tempfile::tempdir().unwrap();
        let l = Ledger::new(d.path().join("home"));
        let e = sample("ccb");
        l.claim(&e).unwrap();
        assert!(matches!(l.claim(&e), Err(LedgerError::Exists(_))));
        let p = l.parked_dir().join(format!("{}.json", e.id));
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(
            fs::metadata(&l.home).unwrap().permissions().mode() & 0o777,
            0o700
        );
        l.save(&e).unwrap();
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(l.load(&e.id).unwrap().unwrap(), e);
    }

    /// A claim appears whole: readers running beside many claims never meet one half-written
    /// (an `O_EXCL` create followed by a write showed them an empty file, reported as corrupt).
    #[test]
    fn readers_never_see_a_half_written_claim() {
        use std::sync::{Arc, Mutex};
        let d = tempfile::tempdir().unwrap();
        let l = Ledger::new(d.path().join("home"));
        l.ensure().unwrap();
        // The id being claimed now: the reader spins on it.
        let next: Arc<Mutex<Option<String>>> = Arc::new(Mutex::new(Some(String::new())));
        let reader = {
            let (l, next) = (Ledger::new(l.home.clone()), next.clone());
            std::thread::spawn(move || {
                let mut bad = vec![];
                while let Some(id) = next.lock().unwrap().clone() {
                    if id.is_empty() {
                        continue;
                    }
                    if let Err(e) = l.load(&id) {
                        bad.push(e.to_string());
                    }
                }
                bad
            })
        };
        for i in 0..100 {
            let mut e = sample("ccb");
            e.session_id = format!("35c98558-0920-4e29-b81c-9304ca4{i:05}");
            e.id = entry_id(Agent::Claude, &e.session_id);
            // A big entry: a write long enough for the reader to land inside it.
            e.flags = vec!["x".repeat(128 * 1024)];
            *next.lock().unwrap() = Some(e.id.clone());
            std::thread::sleep(std::time::Duration::from_micros(200));
            l.claim(&e).unwrap();
        }
        *next.lock().unwrap() = None;
        let bad = reader.join().unwrap();
        assert!(bad.is_empty(), "{} bad reads, first: {}", bad.len(), bad[0]);
        assert_eq!(l.all().0.len(), 100);
        let left: Vec<_> = fs::read_dir(l.parked_dir())
            .unwrap()
            .flatten()
            .filter(|f| f.file_name().to_string_lossy().starts_with('.'))
            .collect();
        assert!(left.is_empty(), "no temporary file is left: {left:?}");
    }

    #[test]
    fn corrupt_files_are_reported_and_kept() {
        let d = tempfile::tempdir().unwrap();
        let l = Ledger::new(d.path().to_path_buf());
        l.ensure().unwrap();
        l.save(&sample("ccb")).unwrap();
        let bad = l.parked_dir().join("claude-broken.json");
        fs::write(&bad, b"{not json").unwrap();
        let (ok, errs) = l.all();
        assert_eq!(ok.len(), 1);
        assert_eq!(errs.len(), 1);
        assert!(errs[0].to_string().contains("claude-broken.json"));
        assert!(bad.exists(), "a corrupt entry must never be deleted");
    }

    #[test]
    fn hostile_ids_and_symlinks_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let l = Ledger::new(d.path().to_path_buf());
        for id in ["../x", "a/b", "", "..", "a b", "x;rm", "$(id)"] {
            assert!(matches!(l.load(id), Err(LedgerError::BadId(_))), "{id}");
        }
        l.ensure().unwrap();
        let e = sample("ccb");
        let target = d.path().join("outside.json");
        fs::write(&target, b"x").unwrap();
        std::os::unix::fs::symlink(&target, l.parked_dir().join(format!("{}.json", e.id))).unwrap();
        assert!(l.claim(&e).is_err());
        assert!(l.save(&e).is_err());
        assert_eq!(
            fs::read(&target).unwrap(),
            b"x",
            "nothing written through a symlink"
        );
    }

    #[test]
    fn entry_with_mismatched_id_is_corrupt() {
        let d = tempfile::tempdir().unwrap();
        let l = Ledger::new(d.path().to_path_buf());
        l.ensure().unwrap();
        let mut e = sample("ccb");
        e.session_id = "not-a-uuid".into();
        fs::write(
            l.parked_dir().join(format!("{}.json", e.id)),
            serde_json::to_vec(&e).unwrap(),
        )
        .unwrap();
        let (_, errs) = l.all();
        assert!(errs[0].to_string().contains("invalid session id"));
    }
}
