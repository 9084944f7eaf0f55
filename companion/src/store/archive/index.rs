//! The archive's index (`archive/index.json`): every tombstone by session id, kept in step with
//! each `meta.json`, and the archived notes appended to them.
//!
//! Contract:
//! * `archive/<sid>/meta.json` is each tombstone's truth; `archive/index.json` is a derived cache
//!   keyed by session id, upserted under a lock. A tombstone whose `meta.json` is newer than the
//!   index (a crash between the two writes) or missing from it is read from `meta.json`; a corrupt
//!   index is rebuilt from the metas on the next upsert and reported, never trusted.
//! * What the views read over it (annotated rows, search) is `rows::archived`.

use crate::store::archive::tomb::{self as archive, Tombstone};
use crate::store::ledger::{private_dir, read_nofollow, write_atomic, LedgerError};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const INDEX_SCHEMA: u32 = 1;

#[derive(Debug, Default, Serialize, Deserialize)]
struct Index {
    schema: u32,
    tombs: BTreeMap<String, Tombstone>,
}

pub(crate) fn index_path(home: &Path) -> PathBuf {
    archive::root(home).join("index.json")
}

fn read_index(home: &Path) -> Result<Option<(Index, std::time::SystemTime)>, LedgerError> {
    let p = index_path(home);
    let Ok(m) = std::fs::symlink_metadata(&p) else {
        return Ok(None);
    };
    let b = read_nofollow(&p)?;
    let idx: Index =
        serde_json::from_slice(&b).map_err(|e| LedgerError::Corrupt(p.clone(), e.to_string()))?;
    Ok(Some((idx, m.modified().unwrap_or(std::time::UNIX_EPOCH))))
}

/// Every tombstone, and what could not be read (reported, never dropped silently).
pub(crate) fn load_tombs(home: &Path) -> (Vec<Tombstone>, Vec<String>) {
    let mut warnings = vec![];
    let (mut tombs, since) = match read_index(home) {
        Ok(Some((i, t))) => (i.tombs, Some(t)),
        Ok(None) => (BTreeMap::new(), None),
        Err(e) => {
            warnings.push(format!("{e}; reading each meta.json instead"));
            (BTreeMap::new(), None)
        }
    };
    let Ok(rd) = std::fs::read_dir(archive::root(home)) else {
        return (tombs.into_values().collect(), warnings);
    };
    let mut present = std::collections::BTreeSet::new();
    for d in rd.flatten() {
        let name = d.file_name().to_string_lossy().into_owned();
        let Some(sid) = crate::agents::transcript::valid_session_id(&name).filter(|s| *s == name)
        else {
            continue;
        };
        present.insert(sid.clone());
        let meta = d.path().join("meta.json");
        let stale = match (since, std::fs::metadata(&meta).and_then(|m| m.modified())) {
            (Some(i), Ok(m)) => m > i || !tombs.contains_key(&sid),
            (None, _) => true,
            (Some(_), Err(_)) => false,
        };
        if !stale {
            continue;
        }
        match archive::read_meta(&d.path()) {
            Ok(t) if t.session_id == sid => {
                tombs.insert(sid, t);
            }
            Ok(_) => warnings.push(format!("{}: names another session", meta.display())),
            // An archive dir from before tombstones (or a half-written one) has no readable meta:
            // its transcript copy is still there; say so rather than hide it.
            Err(e) if meta.exists() => warnings.push(e.to_string()),
            Err(_) => {}
        }
    }
    // A directory removed by hand takes its tombstone with it.
    tombs.retain(|k, _| present.contains(k));
    (tombs.into_values().collect(), warnings)
}

fn lock_index(home: &Path) -> Result<crate::store::lock::Lock, LedgerError> {
    let key = crate::store::lock::key(&["archive-index"]);
    let t0 = Instant::now();
    loop {
        match crate::store::lock::try_lock(home, &key)? {
            crate::store::lock::TryLock::Acquired(l) => return Ok(l),
            crate::store::lock::TryLock::Held(owner) if t0.elapsed() > Duration::from_secs(10) => {
                return Err(LedgerError::Io(
                    index_path(home),
                    std::io::Error::other(format!("archive index locked by pid {owner}")),
                ))
            }
            crate::store::lock::TryLock::Held(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

/// Writes `t`'s meta.json and upserts it into the index (keyed by session id).
pub fn upsert(home: &Path, t: &Tombstone) -> Result<(), LedgerError> {
    let _l = lock_index(home)?;
    archive::write_meta(home, t)?;
    // The index is a cache: rebuild it from the metas when it is missing or unreadable.
    let mut idx = match read_index(home) {
        Ok(Some((i, _))) => i,
        _ => Index {
            schema: INDEX_SCHEMA,
            tombs: load_tombs(home)
                .0
                .into_iter()
                .map(|t| (t.session_id.clone(), t))
                .collect(),
        },
    };
    idx.schema = INDEX_SCHEMA;
    idx.tombs.insert(t.session_id.clone(), t.clone());
    private_dir(&archive::root(home))?;
    write_atomic(
        &index_path(home),
        serde_json::to_string(&idx)
            .expect("index serialises")
            .as_bytes(),
    )
}
