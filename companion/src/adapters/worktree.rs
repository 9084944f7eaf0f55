//! Worktree fingerprint: the branch, HEAD and dirty-file count of the git checkout an agent works
//! in, recorded at park time so `doctor` can say what changed while the session slept.
//!
//! Contract: read-only. One `git status --porcelain=v2 --branch` with optional locks off
//! (`GIT_OPTIONAL_LOCKS=0`: never touches the index) and a timeout; not a checkout, no git, or a
//! slow git → `None`, never an error. Git is never asked to change anything.

use crate::model::entry::Fingerprint;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const TIMEOUT: Duration = Duration::from_secs(3);

/// Parses `git status --porcelain=v2 --branch` output.
pub fn parse(out: &str) -> Option<Fingerprint> {
    let mut branch = None;
    let mut head = None;
    let mut dirty = 0u32;
    for l in out.lines() {
        if let Some(v) = l.strip_prefix("# branch.oid ") {
            head = Some(v.trim().to_string());
        } else if let Some(v) = l.strip_prefix("# branch.head ") {
            branch = Some(v.trim().to_string());
        } else if !l.starts_with('#') && !l.is_empty() {
            dirty = dirty.saturating_add(1);
        }
    }
    Some(Fingerprint {
        branch: branch?,
        head: head?,
        dirty,
    })
}

/// The fingerprint of the checkout containing `cwd`, if it is one.
pub(crate) fn fingerprint(cwd: &str) -> Option<Fingerprint> {
    let mut child = Command::new("git")
        .args(["-C", cwd, "status", "--porcelain=v2", "--branch"])
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let t0 = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(st)) if st.success() => break,
            Ok(Some(_)) | Err(_) => return None,
            Ok(None) if t0.elapsed() > TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
    let mut out = String::new();
    use std::io::Read;
    child.stdout.take()?.read_to_string(&mut out).ok()?;
    parse(&out)
}

/// What changed between two fingerprints, in words (empty when nothing did).
pub(crate) fn drift(before: &Fingerprint, now: &Fingerprint) -> Vec<String> {
    let mut d = vec![];
    if before.branch != now.branch {
        d.push(format!("branch {} → {}", before.branch, now.branch));
    }
    if before.head != now.head {
        d.push(format!(
            "HEAD {} → {}",
            short(&before.head),
            short(&now.head)
        ));
    }
    if before.dirty != now.dirty {
        d.push(format!("dirty files {} → {}", before.dirty, now.dirty));
    }
    d
}

fn short(h: &str) -> &str {
    h.get(..10).unwrap_or(h)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_branch_head_and_counts_every_change_kind() {
        let out = "# branch.oid 1234567890abcdef\n# branch.head main\n# branch.upstream origin/main\n\
                   1 .M N... 100644 100644 100644 a b src/x.rs\n2 R. N... 100644 100644 100644 a b R100 n\to\n\
                   u UU N... 1 2 3 4 a b c f\n? new.txt\n";
        let f = parse(out).unwrap();
        assert_eq!(f.branch, "main");
        assert_eq!(f.head, "1234567890abcdef");
        assert_eq!(f.dirty, 4);
    }

    #[test]
    fn drift_names_each_change_and_nothing_when_equal() {
        let a = Fingerprint {
            branch: "main".into(),
            head: "aaaaaaaaaaaaaaaa".into(),
            dirty: 0,
        };
        assert!(drift(&a, &a).is_empty());
        let b = Fingerprint {
            branch: "fix".into(),
            head: "bbbbbbbbbbbbbbbb".into(),
            dirty: 2,
        };
        let d = drift(&a, &b);
        assert_eq!(d.len(), 3, "{d:?}");
        assert!(d[0].contains("main → fix"));
        assert!(d[2].contains("0 → 2"));
    }

    #[test]
    fn a_real_checkout_and_a_plain_dir() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().to_str().unwrap();
        assert_eq!(fingerprint(p), None, "not a checkout");
        let git = |args: &[&str]| {
            Command::new("git")
                .args(["-C", p])
                .args(args)
                .env("GIT_AUTHOR_NAME", "t")
                .env("GIT_AUTHOR_EMAIL", "t@t")
                .env("GIT_COMMITTER_NAME", "t")
                .env("GIT_COMMITTER_EMAIL", "t@t")
                .output()
                .unwrap()
        };
        git(&["init", "-q", "-b", "main"]);
        std::fs::write(d.path().join("a"), "1").unwrap();
        let f0 = fingerprint(p).unwrap();
        assert_eq!(
            (f0.branch.as_str(), f0.head.as_str(), f0.dirty),
            ("main", "(initial)", 1)
        );
        git(&["add", "a"]);
        git(&["commit", "-qm", "x"]);
        let f1 = fingerprint(p).unwrap();
        assert_eq!(f1.dirty, 0);
        assert_eq!(f1.head.len(), 40);
    }
}
