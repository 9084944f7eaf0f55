//! The one seam between park and the operating system's process table.
//!
//! Contract: `processes()` is one cheap pass over every process (no environ, no fds, no smaps);
//! the per-pid reads (`environ`, `cwd`, `open_files`, `memory`) are only called for agent roots and
//! their trees. Every read of a pid that vanished returns `None`/`Err`, never a panic. Start time
//! (`start_ticks`) is what makes a pid an identity: every kill re-checks it.

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "macos")]
mod macos;
pub mod procargs;
pub mod proctree;
pub mod start_stamp;

use std::path::PathBuf;

/// One row of the process table.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProcInfo {
    pub pid: u32,
    pub ppid: u32,
    pub pgid: u32,
    pub sid: u32,
    /// Foreground process group of the controlling terminal (`-1`/0 when none).
    pub tpgid: i32,
    /// Kernel start time: an identity, only ever compared for equality (with the same
    /// platform's value, or through [`Platform::proc_start_matches`]). Linux: clock ticks since
    /// boot (field 22 of `/proc/<pid>/stat`); macOS: microseconds since the epoch.
    pub start_ticks: u64,
    /// One-letter state (`R`, `S`, `Z`, …).
    pub state: char,
    /// utime + stime, in units of [`Platform::clock_ticks_per_sec`].
    pub cpu_ticks: u64,
    pub rss_bytes: u64,
    pub argv: Vec<String>,
    pub comm: String,
}

/// Memory of one process as the kernel accounts it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Mem {
    pub rss: u64,
    pub pss: u64,
    /// Private_Clean + Private_Dirty: what is genuinely returned when the process dies.
    pub uss: u64,
    /// Anonymous pages: what a kill really gives back to MemAvailable. USS also counts file pages
    /// mapped by this process alone (a 300 MB agent binary), which stay in the page cache.
    pub anon: u64,
}

impl std::ops::AddAssign for Mem {
    fn add_assign(&mut self, o: Mem) {
        self.rss += o.rss;
        self.pss += o.pss;
        self.uss += o.uss;
        self.anon += o.anon;
    }
}

pub trait Platform: Send + Sync {
    fn processes(&self) -> std::io::Result<Vec<ProcInfo>>;
    fn process(&self, pid: u32) -> Option<ProcInfo>;
    fn environ(&self, pid: u32) -> Option<Vec<(String, String)>>;
    fn cwd(&self, pid: u32) -> Option<PathBuf>;
    /// The process's executable (Linux: `/proc/<pid>/exe`); `None` where it cannot be read.
    fn exe(&self, _pid: u32) -> Option<PathBuf> {
        None
    }
    fn open_files(&self, pid: u32) -> Vec<PathBuf>;
    fn memory(&self, pid: u32) -> Option<Mem>;
    /// Cheap counters (no page walk): (RSS, resident anonymous) in bytes.
    fn status_mem(&self, pid: u32) -> Option<(u64, u64)>;
    /// Units per second of `cpu_ticks` (Linux: `_SC_CLK_TCK`; macOS: 1_000_000).
    fn clock_ticks_per_sec(&self) -> u64;
    /// Whether `recorded` (Claude Code's `procStart`) names the start whose `start_ticks` is given.
    fn proc_start_matches(&self, start_ticks: u64, recorded: &str) -> bool {
        start_stamp::matches_ticks(start_ticks, recorded)
    }
    /// Pids holding a write lock (`flock` or POSIX) on the file at `path` right now. A file
    /// nobody locks, or one that does not exist, gives none. The default knows no locks: it is
    /// evidence only when present, never proof of absence.
    fn write_lock_holders(&self, _path: &std::path::Path) -> Vec<u32> {
        Vec::new()
    }
    /// Seconds since the process with `start_ticks` started; `None` when the platform cannot
    /// tell (then an agent's age never makes it look quiet).
    fn started_secs_ago(&self, _start_ticks: u64) -> Option<u64> {
        None
    }
    /// This boot's id (Linux `/proc/sys/kernel/random/boot_id`), which some agents write beside
    /// a process start so a record survives no reboot; `None` where there is none.
    fn boot_id(&self) -> Option<String> {
        None
    }
    /// The machine's memory now: (MemAvailable, MemTotal) in bytes.
    fn memory_now(&self) -> Option<(u64, u64)> {
        None
    }
    /// The kernel's memory pressure line (`some avg10=… total=…`), where it has PSI.
    fn memory_pressure(&self) -> Option<String> {
        None
    }
}

/// (MemAvailable, MemTotal) in bytes from `/proc/meminfo` text. Pure, for tests.
pub fn parse_meminfo(text: &str) -> Option<(u64, u64)> {
    let field = |name: &str| {
        text.lines()
            .find_map(|l| {
                l.strip_prefix(name)?
                    .trim()
                    .strip_suffix("kB")?
                    .trim()
                    .parse::<u64>()
                    .ok()
            })
            .map(|kb| kb * 1024)
    };
    Some((field("MemAvailable:")?, field("MemTotal:")?))
}

/// One line of Linux `/proc/locks` that holds a lock (waiters, `->` lines, are skipped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldLock {
    pub pid: u32,
    /// `FLOCK`, `POSIX`, `OFDLCK`, `LEASE`…
    pub kind: String,
    pub write: bool,
    pub major: u32,
    pub minor: u32,
    pub inode: u64,
}

/// Parses `/proc/locks`: `1: FLOCK  ADVISORY  WRITE 11558 00:2f:1234 0 EOF`. The device is
/// `MAJOR:MINOR` in hex, the inode in decimal. Malformed lines are skipped.
pub fn parse_proc_locks(text: &str) -> Vec<HeldLock> {
    text.lines()
        .filter_map(|line| {
            let mut f = line.split_whitespace();
            f.next()?.strip_suffix(':')?;
            let kind = f.next()?;
            if kind == "->" {
                return None;
            }
            let _mode = f.next()?;
            let rw = f.next()?;
            // An open-file-description lock (OFDLCK) shows pid -1: held, by someone unknown (0).
            let pid: i64 = f.next()?.parse().ok()?;
            let pid = u32::try_from(pid).unwrap_or(0);
            let mut dev = f.next()?.split(':');
            let major = u32::from_str_radix(dev.next()?, 16).ok()?;
            let minor = u32::from_str_radix(dev.next()?, 16).ok()?;
            let inode: u64 = dev.next()?.parse().ok()?;
            Some(HeldLock {
                pid,
                kind: kind.to_string(),
                write: rw == "WRITE",
                major,
                minor,
                inode,
            })
        })
        .collect()
}

/// The platform park runs on.
pub fn native() -> Box<dyn Platform> {
    #[cfg(target_os = "linux")]
    {
        Box::new(linux::Linux::new())
    }
    #[cfg(target_os = "macos")]
    {
        Box::new(macos::MacOs::new())
    }
}

/// Whether a process `pid` exists (a zombie included): one `kill(pid, 0)`, the cheapest check
/// there is, for a loop that polls many pids often. A pid reused by another process reads as
/// alive; callers that need identity compare start times ([`Platform::process`]).
pub fn pid_exists(pid: u32) -> bool {
    let Ok(p) = i32::try_from(pid) else {
        return false;
    };
    p > 0
        && !matches!(
            nix::sys::signal::kill(nix::unistd::Pid::from_raw(p), None),
            Err(nix::errno::Errno::ESRCH)
        )
}

/// Looks up one variable in an environ list.
pub fn env_get<'a>(env: &'a [(String, String)], key: &str) -> Option<&'a str> {
    env.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}

#[cfg(test)]
mod lock_tests {
    use super::*;

    #[test]
    fn meminfo_available_and_total() {
        let t = "MemTotal:       24000000 kB\nMemFree:  1 kB\nMemAvailable:   2000000 kB\n";
        assert_eq!(parse_meminfo(t), Some((2_048_000_000, 24_576_000_000)));
        assert_eq!(parse_meminfo("MemTotal: 1 kB\n"), None);
    }

    #[test]
    fn proc_locks_lines_parse_and_waiters_are_skipped() {
        let text = "1: FLOCK  ADVISORY  WRITE 11558 00:2f:1234 0 EOF\n\
                    2: POSIX  ADVISORY  READ 77 fd:01:99 0 EOF\n\
                    2: -> FLOCK  ADVISORY  WRITE 12 00:2f:1234 0 EOF\n\
                    garbage\n\
                    3: OFDLCK ADVISORY  WRITE -1 00:2f:5 0 EOF\n";
        let l = parse_proc_locks(text);
        assert_eq!(l.len(), 3, "{l:?}");
        assert_eq!((l[2].pid, l[2].kind.as_str()), (0, "OFDLCK"));
        assert_eq!(
            l[0],
            HeldLock {
                pid: 11558,
                kind: "FLOCK".into(),
                write: true,
                major: 0,
                minor: 0x2f,
                inode: 1234
            }
        );
        assert_eq!((l[1].major, l[1].minor, l[1].write), (0xfd, 1, false));
    }
}
