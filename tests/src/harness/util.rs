//! Small helpers with no better home: environment lists, shell quoting, UUIDs, polling.

use std::io::Read;
use std::time::{Duration, Instant};

/// Environment variables for a pane or a process, in order (later entries win in tmux).
pub type Env = Vec<(String, String)>;

/// Quotes `s` for a POSIX shell command line (single quotes, `'` spelled `'\''`).
pub fn sh_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// A random version-4 UUID (lowercase, hyphenated), from `/dev/urandom`; used for
/// `claude --session-id`, which must be a fresh UUID.
pub fn uuid_v4() -> String {
    let mut b = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut b))
        .expect("read /dev/urandom");
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

/// Calls `f` every 100 ms until it returns `Some`, or `timeout` passes (then `None`).
/// `f` always runs at least once.
pub fn poll<T>(timeout: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let start = Instant::now();
    loop {
        if let Some(v) = f() {
            return Some(v);
        }
        if start.elapsed() >= timeout {
            return None;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A small deterministic xorshift generator for randomised test schedules. The seed comes from
/// `$<seed_var>` when set (to replay a failure), else the clock, and is printed either way;
/// `salt` gives parallel users of one seed their own streams.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed_var: &str, salt: u64) -> Rng {
        let seed = std::env::var(seed_var)
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_nanos() as u64)
                    .unwrap_or(1)
            });
        eprintln!("{seed_var}={seed} (salt {salt})");
        Rng((seed ^ salt.wrapping_mul(0x9E37_79B9_7F4A_7C15)) | 1)
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// Every `<dir>/<pid>.json` (an agent's registry of live processes) as `(pid, parsed content)`,
/// sorted by pid; unreadable or unparsable files are skipped.
pub fn pid_json_files(dir: &std::path::Path) -> Vec<(u32, serde_json::Value)> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<(u32, serde_json::Value)> = rd
        .filter_map(|e| {
            let path = e.ok()?.path();
            let pid = path
                .file_name()?
                .to_str()?
                .strip_suffix(".json")?
                .parse()
                .ok()?;
            let v = serde_json::from_str(&std::fs::read_to_string(&path).ok()?).ok()?;
            Some((pid, v))
        })
        .collect();
    out.sort_by_key(|(pid, _)| *pid);
    out
}

/// `path` (a PATH value) with `first` put in front: the PATH a pane gets for an agent's bin dir.
pub fn path_with_first(first: impl IntoIterator<Item = std::path::PathBuf>, path: &str) -> String {
    let mut dirs: Vec<std::path::PathBuf> = first.into_iter().collect();
    dirs.extend(std::env::split_paths(path));
    std::env::join_paths(dirs)
        .expect("PATH entries")
        .to_string_lossy()
        .into_owned()
}

/// Writes an executable script (0755) from a child process. A file this threaded test process
/// opened for writing would be inherited, still open, by any child another test thread forks at
/// that moment, and running the script would then fail with ETXTBSY ("Text file busy") until
/// that child execs; written by `sh`, no fd of ours ever points at it.
pub fn write_exe(p: &std::path::Path, text: &str) {
    use std::io::Write;
    use std::process::{Command, Stdio};
    if let Some(d) = p.parent() {
        std::fs::create_dir_all(d).expect("script dir");
    }
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

/// Copies a file (mode included) with `cp`, for the reason [`write_exe`] gives: the copy may be
/// run, and `std::fs::copy` would hold it open for writing in this process.
pub fn copy_exe(src: &std::path::Path, dst: &std::path::Path) {
    let s = std::process::Command::new("cp")
        .arg("-p")
        .arg("--")
        .arg(src)
        .arg(dst)
        .status()
        .expect("cp");
    assert!(s.success(), "cp {} {}", src.display(), dst.display());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(sh_quote("abc/d-e"), "abc/d-e");
        assert_eq!(sh_quote("a b"), "'a b'");
        assert_eq!(sh_quote("it's"), r"'it'\''s'");
        assert_eq!(sh_quote(""), "''");
    }

    #[test]
    fn uuid_shape() {
        let u = uuid_v4();
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "4");
        assert_ne!(u, uuid_v4());
    }
}
