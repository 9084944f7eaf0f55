//! Linux process table from `/proc`. Hand-read rather than through a crate because park needs exactly
//! five small files per process and the scan is on the hot path of `ls` (see the bench).

use super::{Mem, Platform, ProcInfo};
use std::fs;
use std::path::PathBuf;

pub struct Linux {
    page_size: u64,
    ticks: u64,
}

impl Linux {
    pub fn new() -> Self {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        Linux {
            page_size: if page > 0 { page as u64 } else { 4096 },
            ticks: if ticks > 0 { ticks as u64 } else { 100 },
        }
    }
}

/// Parses `/proc/<pid>/stat`. The comm field may contain spaces and parentheses, so split at the last `)`.
/// Returns the process with an empty argv (argv comes from `cmdline`).
pub(crate) fn parse_stat(s: &str, page_size: u64) -> Option<ProcInfo> {
    let open = s.find('(')?;
    let close = s.rfind(')')?;
    let pid: u32 = s[..open].trim().parse().ok()?;
    let comm = s[open + 1..close].to_string();
    let rest: Vec<&str> = s[close + 1..].split_whitespace().collect();
    // rest[0] is field 3 (state); field N is rest[N-3].
    let state = rest.first()?.chars().next()?;
    let ppid = rest.get(1)?.parse().ok()?;
    let pgid = rest.get(2)?.parse().ok()?;
    let sid = rest.get(3)?.parse().ok()?;
    let tpgid: i32 = rest.get(5)?.parse().ok()?;
    let utime: u64 = rest.get(11)?.parse().ok()?;
    let stime: u64 = rest.get(12)?.parse().ok()?;
    let start: u64 = rest.get(19)?.parse().ok()?;
    let rss_pages: u64 = rest.get(21)?.parse().ok()?;
    Some(ProcInfo {
        pid,
        ppid,
        pgid,
        sid,
        tpgid,
        start_ticks: start,
        state,
        cpu_ticks: utime + stime,
        rss_bytes: rss_pages * page_size,
        argv: vec![],
        comm,
    })
}

fn split_nul(b: &[u8]) -> Vec<String> {
    b.split(|c| *c == 0)
        .filter(|s| !s.is_empty())
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .collect()
}

impl Platform for Linux {
    fn processes(&self) -> std::io::Result<Vec<ProcInfo>> {
        let mut out = Vec::with_capacity(512);
        for ent in fs::read_dir("/proc")? {
            let Ok(ent) = ent else { continue };
            let name = ent.file_name();
            let Some(pid) = name.to_str().and_then(|n| n.parse::<u32>().ok()) else {
                continue;
            };
            if let Some(p) = self.process(pid) {
                out.push(p);
            }
        }
        Ok(out)
    }

    fn process(&self, pid: u32) -> Option<ProcInfo> {
        let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let mut p = parse_stat(&stat, self.page_size)?;
        p.argv = fs::read(format!("/proc/{pid}/cmdline"))
            .map(|b| split_nul(&b))
            .unwrap_or_default();
        Some(p)
    }

    fn environ(&self, pid: u32) -> Option<Vec<(String, String)>> {
        let b = fs::read(format!("/proc/{pid}/environ")).ok()?;
        Some(
            split_nul(&b)
                .into_iter()
                .filter_map(|kv| {
                    let (k, v) = kv.split_once('=')?;
                    Some((k.to_string(), v.to_string()))
                })
                .collect(),
        )
    }

    fn cwd(&self, pid: u32) -> Option<PathBuf> {
        fs::read_link(format!("/proc/{pid}/cwd")).ok()
    }

    fn write_lock_holders(&self, path: &std::path::Path) -> Vec<u32> {
        use std::os::unix::fs::MetadataExt;
        let Ok(m) = fs::metadata(path) else {
            return vec![];
        };
        let (major, minor) = (libc::major(m.dev()), libc::minor(m.dev()));
        let Ok(text) = fs::read_to_string("/proc/locks") else {
            return vec![];
        };
        let mut pids: Vec<u32> = super::parse_proc_locks(&text)
            .into_iter()
            .filter(|l| l.write && l.inode == m.ino() && l.major == major && l.minor == minor)
            .map(|l| l.pid)
            .collect();
        pids.sort_unstable();
        pids.dedup();
        pids
    }

    fn exe(&self, pid: u32) -> Option<PathBuf> {
        fs::read_link(format!("/proc/{pid}/exe")).ok()
    }

    fn open_files(&self, pid: u32) -> Vec<PathBuf> {
        let Ok(rd) = fs::read_dir(format!("/proc/{pid}/fd")) else {
            return vec![];
        };
        rd.filter_map(|e| fs::read_link(e.ok()?.path()).ok())
            .filter(|p| p.is_absolute())
            .collect()
    }

    fn memory(&self, pid: u32) -> Option<Mem> {
        let s = fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok()?;
        let mut m = Mem::default();
        for line in s.lines() {
            let mut it = line.split_whitespace();
            let (Some(k), Some(v)) = (it.next(), it.next()) else {
                continue;
            };
            let Ok(kb) = v.parse::<u64>() else { continue };
            match k {
                "Rss:" => m.rss = kb * 1024,
                "Pss:" => m.pss = kb * 1024,
                "Private_Clean:" | "Private_Dirty:" => m.uss += kb * 1024,
                "Anonymous:" => m.anon = kb * 1024,
                _ => {}
            }
        }
        Some(m)
    }

    fn status_mem(&self, pid: u32) -> Option<(u64, u64)> {
        let s = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        let kb = |key: &str| -> Option<u64> {
            s.lines()
                .find(|l| l.starts_with(key))?
                .split_whitespace()
                .nth(1)?
                .parse()
                .ok()
        };
        Some((kb("VmRSS:")? * 1024, kb("RssAnon:")? * 1024))
    }

    fn clock_ticks_per_sec(&self) -> u64 {
        self.ticks
    }

    fn started_secs_ago(&self, start_ticks: u64) -> Option<u64> {
        // Field 22 of stat counts from boot; /proc/uptime's first field is seconds since boot.
        let up: f64 = fs::read_to_string("/proc/uptime")
            .ok()?
            .split_whitespace()
            .next()?
            .parse()
            .ok()?;
        let started = start_ticks as f64 / self.ticks.max(1) as f64;
        Some((up - started).max(0.0) as u64)
    }

    fn boot_id(&self) -> Option<String> {
        let id = fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
        Some(id.trim().to_string()).filter(|s| !s.is_empty())
    }

    fn memory_now(&self) -> Option<(u64, u64)> {
        super::parse_meminfo(&fs::read_to_string("/proc/meminfo").ok()?)
    }

    fn memory_pressure(&self) -> Option<String> {
        let t = fs::read_to_string("/proc/pressure/memory").ok()?;
        t.lines()
            .find(|l| l.starts_with("some"))
            .map(str::to_string)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_flock_names_its_holder_and_a_released_one_nobody() {
        use std::io::BufRead;
        use std::process::{Command, Stdio};
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("t.lock");
        let l = Linux::new();
        // The lock is taken in a child: a lock fd of this threaded test process would also be
        // held by any child another test thread forks meanwhile (until it execs), so "released"
        // could not be observed right after the drop.
        let mut holder = Command::new("flock")
            .arg("-x")
            .arg(&path)
            .args(["-c", "echo held; cat >/dev/null"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("flock(1)");
        let mut line = String::new();
        std::io::BufReader::new(holder.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line.trim(), "held");
        assert_eq!(l.write_lock_holders(&path), vec![holder.id()]);
        assert!(l
            .write_lock_holders(&d.path().join("missing.lock"))
            .is_empty());
        drop(holder.stdin.take());
        assert!(holder.wait().unwrap().success());
        assert!(path.exists(), "the file outlives its lock");
        assert!(
            l.write_lock_holders(&path).is_empty(),
            "released with its holder"
        );
    }

    #[test]
    fn stat_with_spaces_and_parens_in_comm() {
        let s = "4242 (my (odd) prog) S 1 4242 4242 34816 4242 4194560 100 0 0 0 7 3 0 0 20 0 1 0 574729 1000 25 18446744073709551615";
        let p = parse_stat(s, 4096).unwrap();
        assert_eq!(
            (p.pid, p.comm.as_str(), p.state, p.ppid, p.pgid, p.sid),
            (4242, "my (odd) prog", 'S', 1, 4242, 4242)
        );
        assert_eq!(
            (p.start_ticks, p.cpu_ticks, p.rss_bytes),
            (574729, 10, 25 * 4096)
        );
    }

    #[test]
    fn own_process_is_readable_and_start_time_is_stable() {
        let l = Linux::new();
        let me = std::process::id();
        let a = l.process(me).unwrap();
        let b = l.process(me).unwrap();
        assert_eq!(a.start_ticks, b.start_ticks);
        assert!(a.rss_bytes > 0);
        assert!(l.memory(me).unwrap().uss > 0);
        assert!(l.environ(me).is_some());
    }
}
