//! An indexed snapshot of the process table, and the program matcher.
//!
//! Contract: a `ProcTable` is taken once per command and never refreshed in place; anything that
//! mutates (kill) re-validates pids by start time first. `program_of` answers "which program does
//! this argv actually run", looking through launchers (`node`, `npx`, `bun`, `python -m`, `env`),
//! so `vim /tmp/claude` or `rg claude src/` never reads as a Claude process.

use crate::adapters::platform::ProcInfo;
use std::collections::HashMap;

#[derive(Debug, Default, Clone)]
pub struct ProcTable {
    /// Every process, by ascending pid (one entry per pid).
    procs: Vec<ProcInfo>,
    index: HashMap<u32, usize>,
    children: HashMap<u32, Vec<u32>>,
}

impl ProcTable {
    pub fn new(mut procs: Vec<ProcInfo>) -> Self {
        procs.sort_by_key(|p| p.pid);
        procs.dedup_by_key(|p| p.pid);
        let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
        let mut index = HashMap::with_capacity(procs.len());
        for (i, p) in procs.iter().enumerate() {
            children.entry(p.ppid).or_default().push(p.pid);
            index.insert(p.pid, i);
        }
        ProcTable {
            procs,
            index,
            children,
        }
    }

    /// Every process, by ascending pid.
    pub fn all(&self) -> &[ProcInfo] {
        &self.procs
    }

    pub fn get(&self, pid: u32) -> Option<&ProcInfo> {
        self.index.get(&pid).map(|&i| &self.procs[i])
    }

    pub fn children(&self, pid: u32) -> &[u32] {
        self.children.get(&pid).map(|v| v.as_slice()).unwrap_or(&[])
    }

    /// The last process of the chain from `root` down through first children that `is` accepts
    /// (a wrapper's innermost copy of the same program: the one that runs the session).
    pub fn innermost(&self, root: u32, is: impl Fn(&ProcInfo) -> bool) -> u32 {
        let mut cur = root;
        // Bounded: a ppid loop in a corrupt table never hangs a scan.
        for _ in 0..64 {
            let next = self
                .children(cur)
                .iter()
                .copied()
                .find(|c| self.get(*c).is_some_and(&is));
            match next {
                Some(n) => cur = n,
                None => break,
            }
        }
        cur
    }

    /// `pid` and every descendant by ppid links, parents before children.
    /// `prune` stops the walk at a process (it and its subtree are left out).
    pub fn tree(&self, pid: u32, prune: &dyn Fn(&ProcInfo) -> bool) -> Vec<u32> {
        let mut out = vec![];
        let mut stack = vec![pid];
        while let Some(p) = stack.pop() {
            let Some(info) = self.get(p) else { continue };
            if p != pid && prune(info) {
                continue;
            }
            out.push(p);
            for c in self.children(p).iter().rev() {
                // A pid cannot be its own descendant; guard against a corrupt table anyway.
                if !out.contains(c) {
                    stack.push(*c);
                }
            }
        }
        out
    }

    /// The chain `pid, parent, grandparent, …` up to (excluding) pid 0.
    pub fn ancestry(&self, pid: u32) -> Vec<u32> {
        let mut out = vec![];
        let mut cur = pid;
        while cur != 0 && !out.contains(&cur) {
            out.push(cur);
            match self.get(cur) {
                Some(p) => cur = p.ppid,
                None => break,
            }
        }
        out
    }
}

/// Launchers whose job is to run another program named later in argv.
const LAUNCHERS: &[&str] = &[
    "node", "nodejs", "bun", "deno", "npx", "pnpx", "bunx", "env", "python", "python3", "uv",
    "exec",
];
/// Launcher flags that take a value, so the value is not mistaken for the program.
const VALUE_FLAGS: &[&str] = &[
    "-r",
    "--require",
    "--import",
    "--loader",
    "-p",
    "--package",
    "-C",
    "--env-file",
    "-u",
    "-S",
];
const SCRIPT_EXTS: &[&str] = &[".js", ".mjs", ".cjs", ".ts", ".exe", ".py", ".sh"];

fn basename(s: &str) -> &str {
    s.rsplit('/').next().unwrap_or(s)
}

fn strip_ext(s: &str) -> &str {
    for e in SCRIPT_EXTS {
        if let Some(b) = s.strip_suffix(e) {
            if !b.is_empty() {
                return b;
            }
        }
    }
    s
}

/// The program an argv really runs, with its index in argv: the command token, or what a launcher
/// goes on to run (basename, one script extension dropped).
pub(crate) fn program_of(argv: &[String]) -> Option<(String, usize)> {
    let mut i = 0;
    while i < argv.len() {
        let tok = basename(&argv[i]);
        let prog = strip_ext(tok);
        if !LAUNCHERS.contains(&prog) {
            return Some((prog.to_string(), i));
        }
        // Skip the launcher's own flags (and their values) and env-style assignments.
        i += 1;
        if (prog == "python" || prog == "python3") && argv.get(i).map(|s| s.as_str()) == Some("-m")
        {
            return argv.get(i + 1).map(|m| (m.clone(), i + 1));
        }
        while i < argv.len() {
            let a = argv[i].as_str();
            if prog == "env" && a.contains('=') && !a.starts_with('-') {
                i += 1;
            } else if VALUE_FLAGS.contains(&a) {
                i += 2;
            } else if a.starts_with('-') && a.len() > 1 {
                i += 1;
            } else {
                break;
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    fn p(pid: u32, ppid: u32) -> ProcInfo {
        ProcInfo {
            pid,
            ppid,
            pgid: pid,
            sid: pid,
            tpgid: -1,
            start_ticks: pid as u64,
            state: 'S',
            cpu_ticks: 0,
            rss_bytes: 0,
            argv: vec![],
            comm: String::new(),
        }
    }

    #[test]
    fn program_through_launchers() {
        assert_eq!(
            program_of(&v(&["/usr/bin/claude", "--resume", "x"]))
                .unwrap()
                .0,
            "claude"
        );
        assert_eq!(
            program_of(&v(&["node", "/x/node_modules/.bin/codex", "--no-daemon"])).unwrap(),
            ("codex".into(), 1)
        );
        assert_eq!(
            program_of(&v(&["npx", "--package", "vite", "prettier"]))
                .unwrap()
                .0,
            "prettier"
        );
        assert_eq!(
            program_of(&v(&["env", "A=1", "B=2", "claude"])).unwrap().0,
            "claude"
        );
        assert_eq!(
            program_of(&v(&["python3", "-m", "http.server"])).unwrap().0,
            "http.server"
        );
        assert_eq!(program_of(&v(&["/x/claude.exe"])).unwrap().0, "claude");
    }

    #[test]
    fn words_in_arguments_are_not_programs() {
        assert_eq!(program_of(&v(&["vim", "/tmp/claude"])).unwrap().0, "vim");
        assert_eq!(program_of(&v(&["rg", "codex", "src/"])).unwrap().0, "rg");
        assert_eq!(
            program_of(&v(&["git", "commit", "-m", "claude broke"]))
                .unwrap()
                .0,
            "git"
        );
        assert!(program_of(&[]).is_none());
    }

    #[test]
    fn tree_and_ancestry() {
        let t = ProcTable::new(vec![
            p(1, 0),
            p(10, 1),
            p(11, 10),
            p(12, 11),
            p(13, 10),
            p(20, 1),
        ]);
        assert_eq!(t.tree(10, &|_| false), vec![10, 11, 12, 13]);
        assert_eq!(t.tree(10, &|x| x.pid == 11), vec![10, 13]);
        assert_eq!(t.ancestry(12), vec![12, 11, 10, 1]);
    }
}
