//! The per-process records an integration writes (`$PARK_HOME/integrations/<agent>/<pid>.json`):
//! one file per agent process, replaced atomically, read back by pid.
//!
//! Contract: a record is only ever read for the pid in its name, and its writer checks the
//! process start time itself (a record of an earlier process with a recycled pid says nothing);
//! [`write`] drops records of processes that are gone, so the directory stays small.

use serde::de::DeserializeOwned;
use std::path::Path;

/// `<dir>/<pid>.json`, parsed.
pub fn read<T: DeserializeOwned>(dir: &Path, pid: u32) -> Option<T> {
    let bytes = std::fs::read(dir.join(format!("{pid}.json"))).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Writes `<dir>/<pid>.json` atomically, after removing the other records `stale` says belong to
/// processes that are gone.
pub fn write(
    dir: &Path,
    pid: u32,
    bytes: &[u8],
    stale: impl Fn(u32) -> bool,
) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    if let Ok(rd) = std::fs::read_dir(dir) {
        for f in rd.flatten() {
            let name = f.file_name().to_string_lossy().into_owned();
            let other = name
                .strip_suffix(".json")
                .and_then(|p| p.parse::<u32>().ok());
            if let Some(other) = other.filter(|p| *p != pid) {
                if stale(other) {
                    let _ = std::fs::remove_file(f.path());
                }
            }
        }
    }
    crate::support::fs::write_atomic(&dir.join(format!("{pid}.json")), bytes)
        .map_err(|e| e.to_string())
}
