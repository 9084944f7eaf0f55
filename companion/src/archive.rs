//! The transcript archive: `$PARK_HOME/archive/<session id>/{transcript.jsonl, meta.json}`.
//!
//! Contract: `archive` copies the transcript before anything is killed and verifies the copy ends
//! with the same bytes as the source at the time of the copy (the latest turns are in it). Re-archiving
//! upserts. Rendering, search and resurrection build on this (issue 6).

use crate::ledger::{private_dir, write_atomic, Entry, LedgerError};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

pub fn dir(home: &Path, session_id: &str) -> PathBuf {
    home.join("archive").join(session_id)
}

fn tail(path: &Path, n: u64) -> std::io::Result<(u64, Vec<u8>)> {
    let mut f = std::fs::File::open(path)?;
    let len = f.metadata()?.len();
    let start = len.saturating_sub(n);
    f.seek(SeekFrom::Start(start))?;
    let mut b = vec![];
    f.take(n).read_to_end(&mut b)?;
    Ok((len, b))
}

pub fn archive(home: &Path, e: &Entry) -> Result<PathBuf, LedgerError> {
    // The id names a directory: only a validated session id may (never `..` or a path).
    let checked = if crate::guards::disabled("archive-id") {
        Some(e.session_id.clone())
    } else {
        crate::transcript::valid_session_id(&e.session_id)
    };
    let Some(sid) = checked else {
        return Err(LedgerError::BadId(e.session_id.clone()));
    };
    private_dir(home)?;
    let d = dir(home, &sid);
    private_dir(&home.join("archive"))?;
    private_dir(&d)?;
    let src =
        PathBuf::from(e.transcript.as_deref().ok_or_else(|| {
            LedgerError::Io(d.clone(), std::io::Error::other("no transcript path"))
        })?);
    let bytes = std::fs::read(&src).map_err(|err| LedgerError::Io(src.clone(), err))?;
    let dst = d.join("transcript.jsonl");
    write_atomic(&dst, &bytes)?;
    // The copy must hold the session's latest turns: its tail equals the source's tail as read.
    let (len, t) = tail(&dst, 4096).map_err(|err| LedgerError::Io(dst.clone(), err))?;
    let want = &bytes[bytes.len().saturating_sub(4096)..];
    if len != bytes.len() as u64 || t != want {
        return Err(LedgerError::Io(
            dst,
            std::io::Error::other("archived copy does not match the transcript"),
        ));
    }
    let meta = serde_json::json!({
        "agent": e.agent, "session_id": e.session_id, "cwd": e.cwd, "title": e.place.title,
        "parked_at": e.parked_at, "last_active": e.last_active, "flags": e.flags,
        "place": e.place, "source_transcript": src, "bytes": bytes.len(),
    });
    write_atomic(
        &d.join("meta.json"),
        serde_json::to_string_pretty(&meta)
            .unwrap_or_default()
            .as_bytes(),
    )?;
    Ok(dst)
}
