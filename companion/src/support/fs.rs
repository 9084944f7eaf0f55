//! park's private files, done safely (no I/O policy, no park types): create a 0700 dir and refuse
//! a symlink in its place, read without following a symlink, write atomically (tmp with `O_EXCL`,
//! 0600, no follow, fsync, rename, fsync of the dir). Everything that writes under `$PARK_HOME`
//! goes through these; they sit at the bottom of the import graph so a scan can keep a cache
//! without importing the ledger.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum FsError {
    #[error("{0}: {1}")]
    Io(PathBuf, std::io::Error),
    #[error("{0} is a symlink; refusing to follow it")]
    Symlink(PathBuf),
}

/// Reads a file park owns, refusing a symlink in its place.
pub(crate) fn read_nofollow(p: &Path) -> Result<Vec<u8>, FsError> {
    let mut f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(p)
        .map_err(|e| {
            if e.raw_os_error() == Some(libc::ELOOP) {
                FsError::Symlink(p.to_path_buf())
            } else {
                FsError::Io(p.to_path_buf(), e)
            }
        })?;
    let mut b = vec![];
    std::io::Read::read_to_end(&mut f, &mut b).map_err(|e| FsError::Io(p.to_path_buf(), e))?;
    Ok(b)
}

/// Creates `dir` (and parents) 0700 and refuses a symlink in its place.
pub fn private_dir(dir: &Path) -> Result<(), FsError> {
    if let Ok(m) = fs::symlink_metadata(dir) {
        if m.file_type().is_symlink() {
            return Err(FsError::Symlink(dir.to_path_buf()));
        }
        // A dir that already existed with group/other access (made by hand, an old umask) is
        // tightened: park's files are private however the dir came to be.
        if m.permissions().mode() & 0o077 != 0 && !crate::support::fault::disabled("tighten-dirs") {
            fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
                .map_err(|e| FsError::Io(dir.to_path_buf(), e))?;
        }
        return Ok(());
    }
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| FsError::Io(dir.to_path_buf(), e))?;
    fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
        .map_err(|e| FsError::Io(dir.to_path_buf(), e))
}

/// `bytes` written whole and synced under a private temporary name beside `path`
/// (`.<name>.tmp-<pid>-<n>`, which `park doctor` reports if a crash leaves it).
fn write_temp(path: &Path, bytes: &[u8]) -> Result<PathBuf, FsError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    // Unique per process and per write: threads of one wave may write the same file (status).
    static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let tmp = dir.join(format!(
        ".{}.tmp-{}-{}",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("x"),
        std::process::id(),
        SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    let _ = fs::remove_file(&tmp);
    let io = |e| FsError::Io(tmp.clone(), e);
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&tmp)
        .map_err(io)?;
    f.write_all(bytes).map_err(io)?;
    f.sync_all().map_err(io)?;
    Ok(tmp)
}

/// Creates `path` with `bytes`, only if nothing is there (no symlink followed): `Ok(false)` when
/// it exists. A reader sees the whole file or none (written under a temporary name, then
/// `link`ed to its name, which fails when the name exists): never the empty file an `O_EXCL`
/// create shows before its write, which readers would report as corrupt.
pub fn create_exclusive(path: &Path, bytes: &[u8]) -> Result<bool, FsError> {
    let tmp = write_temp(path, bytes)?;
    let linked = fs::hard_link(&tmp, path);
    let _ = fs::remove_file(&tmp);
    match linked {
        Ok(()) => {
            if let Ok(d) = File::open(path.parent().unwrap_or(Path::new("."))) {
                let _ = d.sync_all();
            }
            Ok(true)
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(FsError::Io(path.to_path_buf(), e)),
    }
}

/// Atomic private write: tmp (O_EXCL, 0600, no follow) + fsync + rename + fsync(dir).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), FsError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp = write_temp(path, bytes)?;
    if fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        let _ = fs::remove_file(&tmp);
        return Err(FsError::Symlink(path.to_path_buf()));
    }
    fs::rename(&tmp, path).map_err(|e| FsError::Io(path.to_path_buf(), e))?;
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Writes an executable script for a test to run, from a child process: a file this (threaded)
/// test process opened for writing would be inherited, still open, by any child another test
/// thread forks at that moment, and running the script then fails with ETXTBSY ("Text file
/// busy") until that child execs. The writer here is `sh`, so no fd of ours ever points at it.
#[cfg(test)]
pub(crate) fn write_script(p: &Path, text: &str) {
    use std::process::{Command, Stdio};
    let mut c = Command::new("sh")
        .args(["-c", "cat > \"$1\" && chmod 755 \"$1\"", "sh"])
        .arg(p)
        .stdin(Stdio::piped())
        .spawn()
        .expect("sh");
    c.stdin
        .take()
        .expect("piped")
        .write_all(text.as_bytes())
        .expect("script text");
    assert!(c.wait().expect("sh").success(), "writing {}", p.display());
}
