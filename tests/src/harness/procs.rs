//! Process helpers over `/proc` (Linux only): liveness, descendants by PPID links, and finding
//! every process that still refers to a directory (by environment, cwd or executable).
//!
//! Descendants follow PPID links, not process groups or sessions, because agents put their tools
//! in other sessions. A zombie counts as gone: it runs nothing and holds no memory.

use std::collections::{BTreeSet, HashMap};
use std::fs;
use std::path::Path;
use std::time::Duration;

use crate::harness::util::poll;

/// Is `pid` a live (non-zombie) process?
pub fn pid_alive(pid: u32) -> bool {
    if pid == 0 {
        return false;
    }
    // SAFETY: kill with signal 0 only checks for existence and permission.
    let exists = unsafe { libc::kill(pid as libc::pid_t, 0) } == 0
        || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
    exists && !matches!(stat_fields(pid), Some((state, _)) if state == 'Z' || state == 'X')
}

/// `(state, ppid)` from `/proc/<pid>/stat`; the comm field may contain spaces and parentheses,
/// so parsing starts after the LAST `)`.
fn stat_fields(pid: u32) -> Option<(char, u32)> {
    let s = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &s[s.rfind(')')? + 1..];
    let mut it = rest.split_whitespace();
    let state = it.next()?.chars().next()?;
    let ppid = it.next()?.parse().ok()?;
    Some((state, ppid))
}

/// Start time of `pid` in clock ticks since boot (field 22 of `/proc/<pid>/stat`): with the pid,
/// it names a process unambiguously (pids get reused).
pub fn start_ticks(pid: u32) -> Option<u64> {
    let s = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &s[s.rfind(')')? + 1..];
    // `rest` starts at field 3 (state), so field 22 is the 20th item.
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// Every pid currently listed in `/proc`.
fn all_pids() -> Vec<u32> {
    let Ok(rd) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    rd.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect()
}

/// All descendants of `pid` (children, grandchildren, ...), found through PPID links; `pid`
/// itself is not included. Sorted.
pub fn descendants(pid: u32) -> Vec<u32> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for p in all_pids() {
        if let Some((_, ppid)) = stat_fields(p) {
            children.entry(ppid).or_default().push(p);
        }
    }
    let mut out = BTreeSet::new();
    let mut stack = vec![pid];
    while let Some(p) = stack.pop() {
        for &c in children.get(&p).into_iter().flatten() {
            if out.insert(c) {
                stack.push(c);
            }
        }
    }
    out.into_iter().collect()
}

/// Waits up to `timeout` for `pid` to be gone; true if it is.
pub fn wait_gone(pid: u32, timeout: Duration) -> bool {
    poll(timeout, || (!pid_alive(pid)).then_some(())).is_some()
}

/// CPU time (user + system, clock ticks) of `pid`: fields 14 and 15 of `/proc/<pid>/stat`.
fn cpu_ticks(pid: u32) -> u64 {
    let Ok(s) = fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0;
    };
    let Some(rest) = s.rfind(')').map(|i| &s[i + 1..]) else {
        return 0;
    };
    // `rest` starts at field 3, so fields 14 and 15 are items 11 and 12.
    let f: Vec<u64> = rest
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|v| v.parse().ok())
        .collect();
    f.iter().sum()
}

/// Waits up to `timeout` until `pid` and its descendants together use under `percent`% of one
/// CPU over a 500 ms window, so a guard that refuses a busy tree (park's is 20%) will not refuse
/// it; true if they did.
pub fn wait_cpu_quiet(pid: u32, percent: f64, timeout: Duration) -> bool {
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let sum = || -> u64 {
        std::iter::once(pid)
            .chain(descendants(pid))
            .map(cpu_ticks)
            .sum()
    };
    poll(timeout, || {
        let t0 = sum();
        std::thread::sleep(Duration::from_millis(500));
        let used = sum().saturating_sub(t0) as f64 / hz;
        (used / 0.5 * 100.0 < percent).then_some(())
    })
    .is_some()
}

/// The test process and its ancestors: never to be killed by a cleanup.
fn self_and_ancestors() -> BTreeSet<u32> {
    let mut set = BTreeSet::new();
    let mut p = std::process::id();
    while p > 1 && set.insert(p) {
        match stat_fields(p) {
            Some((_, ppid)) => p = ppid,
            None => break,
        }
    }
    set
}

/// Does `value` mention `root` as a path (itself, or something under it)? Catches `HOME=<root>/home`
/// and PATH-like lists, but not a sibling directory whose name merely starts with `root`.
fn mentions(value: &str, root: &str) -> bool {
    value.match_indices(root).any(|(i, _)| {
        matches!(
            value[i + root.len()..].chars().next(),
            None | Some('/') | Some(':')
        )
    })
}

/// Live processes (sorted) whose environment mentions `dir`, whose cwd or executable is inside
/// `dir`, plus all their descendants. The calling process and its ancestors are excluded.
pub fn processes_referencing(dir: &Path) -> Vec<u32> {
    let root = dir.to_string_lossy().trim_end_matches('/').to_string();
    let skip = self_and_ancestors();
    let mut hits = BTreeSet::new();
    for pid in all_pids() {
        if skip.contains(&pid) || !pid_alive(pid) {
            continue;
        }
        let in_dir = |link: &str| {
            fs::read_link(format!("/proc/{pid}/{link}"))
                .map(|p| p.starts_with(dir))
                .unwrap_or(false)
        };
        let env_hit = fs::read(format!("/proc/{pid}/environ"))
            .map(|raw| {
                raw.split(|&b| b == 0)
                    .any(|kv| mentions(&String::from_utf8_lossy(kv), &root))
            })
            .unwrap_or(false);
        if env_hit || in_dir("cwd") || in_dir("exe") {
            hits.insert(pid);
        }
    }
    let direct: Vec<u32> = hits.iter().copied().collect();
    for pid in direct {
        hits.extend(descendants(pid).into_iter().filter(|p| !skip.contains(p)));
    }
    hits.into_iter().filter(|&p| pid_alive(p)).collect()
}

/// SIGTERMs `pids`, waits up to `grace` for them to exit, then SIGKILLs the rest and waits a
/// little more. Returns the pids still alive at the end (normally none).
pub fn kill_and_reap(pids: &[u32], grace: Duration) -> Vec<u32> {
    let signal = |sig: libc::c_int| {
        for &p in pids {
            // SAFETY: plain kill(2) on a pid we chose; errors (already gone) are fine.
            unsafe { libc::kill(p as libc::pid_t, sig) };
        }
    };
    let all_gone = |t: Duration| poll(t, || pids.iter().all(|&p| !pid_alive(p)).then_some(()));
    signal(libc::SIGTERM);
    if all_gone(grace).is_none() {
        signal(libc::SIGKILL);
        all_gone(Duration::from_secs(3));
    }
    pids.iter().copied().filter(|&p| pid_alive(p)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_is_path_aware() {
        assert!(mentions("HOME=/tmp/x", "/tmp/x"));
        assert!(mentions("HOME=/tmp/x/home", "/tmp/x"));
        assert!(mentions("PATH=/a:/tmp/x/bin:/b", "/tmp/x"));
        assert!(!mentions("HOME=/tmp/xy", "/tmp/x"));
    }

    #[test]
    fn start_ticks_of_self() {
        let me = std::process::id();
        assert!(start_ticks(me).is_some());
        assert_eq!(start_ticks(me), start_ticks(me));
    }

    #[test]
    fn children_are_found() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let me = std::process::id();
        assert!(descendants(me).contains(&child.id()));
        assert!(pid_alive(child.id()));
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(!pid_alive(child.id()));
    }
}
