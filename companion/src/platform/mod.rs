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

/// Looks up one variable in an environ list.
pub fn env_get<'a>(env: &'a [(String, String)], key: &str) -> Option<&'a str> {
    env.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}
