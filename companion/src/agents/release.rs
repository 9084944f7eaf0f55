//! What park knows of an agent's releases: the npm packages its binaries come in (so the version
//! of a running agent is read from the `package.json` beside its binary, never by running it; a
//! Python agent's from its package's `dist-info` in the venv its script is in) and
//! the versions park's end-to-end contract passed on (each agent's folder holds its
//! [`Release`]; whoever moves a pin in `scripts/setup` moves `tested` with it, and
//! `tests/src/harness` checks that every pin lies inside it).
//!
//! Contract: reading a version is a few `stat`/`read` calls per agent binary, once per binary (as
//! long as the file at its real path is not written anew) for the life of the process, and never
//! fails loudly — an unreadable
//! version is `None` and is never reported as untested. Versions compare by their
//! leading dotted numbers (`0.171.0-linux-x64` is 0.171.0).

use std::cmp::Ordering;
use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::SystemTime;

/// One agent's release facts (plain data, in the agent's folder).
#[derive(Debug)]
pub struct Release {
    /// How messages name the agent (its product name).
    pub name: &'static str,
    /// npm package names whose `package.json` carries its version; a platform package
    /// (`<name>-linux-x64`) counts as its own. A Python agent's PyPI name (`aider-chat`).
    pub packages: &'static [&'static str],
    /// The oldest and the newest version park's e2e contract passed on.
    pub tested: (&'static str, &'static str),
}

/// One binary or script as it is on disk: its real path and what changes when it is written anew.
/// The mtime alone would not do: npm extracts every file of a package with the same fixed mtime,
/// so an upgrade in place keeps it; the inode and the change time move with any new file.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Binary {
    path: PathBuf,
    mtime: Option<SystemTime>,
    ctime: (i64, i64),
    inode: u64,
}

impl Binary {
    fn of(path: &Path, m: &std::fs::Metadata) -> Self {
        Binary {
            path: path.to_path_buf(),
            mtime: m.modified().ok(),
            ctime: (m.ctime(), m.ctime_nsec()),
            inode: m.ino(),
        }
    }
}

/// Where a version lies against the tested range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fit {
    Tested,
    Newer,
    Older,
}

/// The leading dotted numbers of a version string (`2.1.332`, `v1.0.3-beta` → [1, 0, 3]).
fn numbers(v: &str) -> Vec<u64> {
    v.trim_start_matches('v')
        .split('.')
        .map_while(|p| {
            let d: String = p.chars().take_while(char::is_ascii_digit).collect();
            let n = d.parse().ok()?;
            // `3-beta`: this part counts, the next does not.
            Some(n).filter(|_| !d.is_empty())
        })
        .collect()
}

/// Compares two versions by their dotted numbers (missing parts are 0).
pub fn compare(a: &str, b: &str) -> Ordering {
    let (a, b) = (numbers(a), numbers(b));
    let n = a.len().max(b.len());
    (0..n)
        .map(|i| {
            a.get(i)
                .copied()
                .unwrap_or(0)
                .cmp(&b.get(i).copied().unwrap_or(0))
        })
        .find(|o| o.is_ne())
        .unwrap_or(Ordering::Equal)
}

impl Release {
    pub fn fit(&self, version: &str) -> Fit {
        if numbers(version).is_empty() {
            return Fit::Tested;
        }
        if compare(version, self.tested.1).is_gt() {
            Fit::Newer
        } else if compare(version, self.tested.0).is_lt() {
            Fit::Older
        } else {
            Fit::Tested
        }
    }

    /// What an untested version means, in one sentence (`None` when it was tested).
    pub fn untested(&self, version: &str) -> Option<String> {
        let (oldest, newest) = self.tested;
        match self.fit(version) {
            Fit::Tested => None,
            Fit::Newer => Some(format!(
                "{} {version} is newer than the newest version park was tested with ({newest}): \
                 if park reads its state as unknown, this is why",
                self.name
            )),
            Fit::Older => Some(format!(
                "{} {version} is older than the oldest version park was tested with ({oldest}): \
                 if park reads its state as unknown, this is why; updating it is the fix",
                self.name
            )),
        }
    }

    fn owns(&self, package: &str) -> bool {
        self.packages.iter().any(|p| {
            package == *p
                || package
                    .strip_prefix(p)
                    .is_some_and(|rest| rest.starts_with('-'))
        })
    }

    /// The version in the `package.json` of this agent's package that holds one of `paths` (a
    /// binary, a script), looking at most six directories up from each.
    pub fn version_near(&self, paths: &[PathBuf]) -> Option<String> {
        paths.iter().find_map(|p| {
            let real = std::fs::canonicalize(p).ok()?;
            let read = || {
                real.ancestors()
                    .skip(1)
                    .take(6)
                    .find_map(|d| self.package_at(d))
            };
            match std::fs::metadata(&real) {
                Ok(m) => self.remembered(Binary::of(&real, &m), read),
                Err(_) => read(),
            }
        })
    }

    /// The version read for `binary`, read once per process: a daemon scans every few seconds,
    /// and an upgrade writes a new binary.
    fn remembered(&self, binary: Binary, read: impl FnOnce() -> Option<String>) -> Option<String> {
        type Memo = HashMap<(&'static str, Binary), Option<String>>;
        static READ: Mutex<Option<Memo>> = Mutex::new(None);
        // Bounded: installs come and go over a daemon's life, a few at a time.
        const MOST: usize = 256;
        let memo = || READ.lock().unwrap_or_else(PoisonError::into_inner);
        let key = (self.name, binary);
        if let Some(v) = memo().get_or_insert_default().get(&key) {
            return v.clone();
        }
        let v = read();
        let mut m = memo();
        let m = m.get_or_insert_default();
        if m.len() >= MOST {
            m.clear();
        }
        m.insert(key, v.clone());
        v
    }

    fn package_at(&self, dir: &Path) -> Option<String> {
        #[derive(serde::Deserialize)]
        struct Pkg {
            name: String,
            version: String,
        }
        let Ok(bytes) = std::fs::read(dir.join("package.json")) else {
            return self.python_package_at(dir);
        };
        let p: Pkg = serde_json::from_slice(&bytes).ok()?;
        let n = numbers(&p.version);
        (self.owns(&p.name) && !n.is_empty())
            .then(|| n.iter().map(u64::to_string).collect::<Vec<_>>().join("."))
    }
}

impl Release {
    /// A Python package installed in the venv (or pipx venv) at `dir`: its
    /// `lib/python*/site-packages/<name>-<version>.dist-info`, the name as pip writes it
    /// (`aider-chat` → `aider_chat`).
    fn python_package_at(&self, dir: &Path) -> Option<String> {
        let lib = std::fs::read_dir(dir.join("lib")).ok()?;
        for py in lib.flatten() {
            if !py.file_name().to_string_lossy().starts_with("python") {
                continue;
            }
            let Ok(site) = std::fs::read_dir(py.path().join("site-packages")) else {
                continue;
            };
            for d in site.flatten() {
                let name = d.file_name().to_string_lossy().into_owned();
                let Some(stem) = name.strip_suffix(".dist-info") else {
                    continue;
                };
                let found = self.packages.iter().find_map(|p| {
                    let want = format!("{}-", p.to_lowercase().replace(['-', '.'], "_"));
                    stem.to_lowercase()
                        .starts_with(&want)
                        .then(|| stem[want.len()..].to_string())
                });
                if let Some(v) = found {
                    let n = numbers(&v);
                    return (!n.is_empty())
                        .then(|| n.iter().map(u64::to_string).collect::<Vec<_>>().join("."));
                }
            }
        }
        None
    }
}

/// Where an agent process's binary or script may be: its executables, and its program token
/// (a path, else looked up on the process's own `PATH`).
pub fn candidates(
    exes: &[PathBuf],
    program: &str,
    cwd: Option<&Path>,
    path_var: Option<&str>,
) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = exes.to_vec();
    if program.contains('/') {
        let p = Path::new(program);
        out.push(match cwd {
            Some(c) if p.is_relative() => c.join(p),
            _ => p.to_path_buf(),
        });
    } else if let Some(path) = path_var {
        out.extend(
            std::env::split_paths(path)
                .map(|d| d.join(program))
                .filter(|p| p.is_file())
                .take(1),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    static R: Release = Release {
        name: "Tool",
        packages: &["@org/tool", "tool-ai"],
        tested: ("1.2.0", "1.4.10"),
    };

    #[test]
    fn versions_compare_by_their_numbers() {
        assert!(compare("1.4.10", "1.4.9").is_gt());
        assert!(compare("0.171.0-linux-x64", "0.171.0").is_eq());
        assert!(compare("2", "2.0.0").is_eq());
        assert_eq!(R.fit("1.4.11"), Fit::Newer);
        assert_eq!(R.fit("1.1.9"), Fit::Older);
        assert_eq!(R.fit("1.3.0-beta.2"), Fit::Tested);
        assert_eq!(
            R.fit("garbage"),
            Fit::Tested,
            "unreadable is never untested"
        );
        let m = R.untested("1.5.0").unwrap();
        assert!(
            m.contains("Tool 1.5.0 is newer") && m.contains("(1.4.10)"),
            "{m}"
        );
        assert!(R.untested("1.4.10").is_none());
    }

    #[test]
    fn the_version_comes_from_the_agents_own_package_only() {
        let d = tempfile::tempdir().unwrap();
        let pkg = |dir: &str, name: &str, v: &str| {
            let p = d.path().join(dir);
            std::fs::create_dir_all(p.join("bin")).unwrap();
            std::fs::write(
                p.join("package.json"),
                format!(r#"{{"name":"{name}","version":"{v}"}}"#),
            )
            .unwrap();
            std::fs::write(p.join("bin/tool"), "").unwrap();
            p.join("bin/tool")
        };
        let own = pkg(
            "nm/@org/tool-linux-x64",
            "@org/tool-linux-x64",
            "1.4.2-linux-x64",
        );
        assert_eq!(R.version_near(&[own]).as_deref(), Some("1.4.2"));
        let other = pkg("nm/tooling", "tooling", "9.9.9");
        assert_eq!(
            R.version_near(&[other]),
            None,
            "a package named alike is not ours"
        );
        let link = d.path().join("tool");
        let target = pkg("nm/tool-ai", "tool-ai", "1.3.0");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let found = candidates(&[], "tool", None, Some(&d.path().display().to_string()));
        assert_eq!(
            R.version_near(&found).as_deref(),
            Some("1.3.0"),
            "via PATH and the link"
        );
        assert_eq!(R.version_near(&[d.path().join("missing")]), None);
    }

    /// A daemon reads a binary's version once: the same file is not read again, and a binary
    /// written anew is, even with the mtime it had (npm extracts packages with a fixed mtime).
    #[test]
    fn a_binary_is_read_once_until_it_is_written_anew() {
        let d = tempfile::tempdir().unwrap();
        let pkg = d.path().join("nm/tool-ai");
        std::fs::create_dir_all(pkg.join("bin")).unwrap();
        let version = |v: &str| {
            std::fs::write(
                pkg.join("package.json"),
                format!(r#"{{"name":"tool-ai","version":"{v}"}}"#),
            )
            .unwrap()
        };
        let bin = pkg.join("bin/tool");
        std::fs::write(&bin, "").unwrap();
        let at = |secs: u64| {
            let t = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(secs);
            std::fs::File::options()
                .write(true)
                .open(&bin)
                .unwrap()
                .set_modified(t)
                .unwrap();
        };
        at(1_000_000);
        version("1.3.0");
        assert_eq!(
            R.version_near(std::slice::from_ref(&bin)).as_deref(),
            Some("1.3.0")
        );
        version("1.4.0");
        assert_eq!(
            R.version_near(std::slice::from_ref(&bin)).as_deref(),
            Some("1.3.0"),
            "the same binary: not read again"
        );
        at(2_000_000);
        assert_eq!(
            R.version_near(std::slice::from_ref(&bin)).as_deref(),
            Some("1.4.0"),
            "written anew: read again"
        );
        version("1.5.0");
        std::fs::remove_file(&bin).unwrap();
        std::fs::write(&bin, "").unwrap();
        at(2_000_000);
        assert_eq!(
            R.version_near(std::slice::from_ref(&bin)).as_deref(),
            Some("1.5.0"),
            "replaced by a file of the same mtime: read again"
        );
    }

    /// A Python agent's version comes from its package's `dist-info` in the venv its script is
    /// in (pip names `aider-chat` `aider_chat`).
    #[test]
    fn a_python_agent_reads_its_version_from_its_venv() {
        static PY: Release = Release {
            name: "Py",
            packages: &["aider-chat"],
            tested: ("0.86.2", "0.86.2"),
        };
        let d = tempfile::tempdir().unwrap();
        let venv = d.path().join("venv");
        std::fs::create_dir_all(venv.join("bin")).unwrap();
        let site = venv.join("lib/python3.11/site-packages");
        std::fs::create_dir_all(site.join("other_pkg-9.9.9.dist-info")).unwrap();
        std::fs::write(venv.join("bin/aider"), "#!python").unwrap();
        assert_eq!(PY.version_near(&[venv.join("bin/aider")]), None);
        std::fs::create_dir_all(site.join("aider_chat-0.86.2.dist-info")).unwrap();
        std::fs::write(venv.join("bin/aider2"), "#!python").unwrap();
        assert_eq!(
            PY.version_near(&[venv.join("bin/aider2")]).as_deref(),
            Some("0.86.2")
        );
    }

    /// The tested range is the pins: `scripts/setup` installs each agent at the versions its
    /// contract runs on (`<AGENT>_VERSION`, `<AGENT>_NEXT_VERSION`), and each agent's range must
    /// run from the oldest pin to the newest, so moving a pin without its range fails here.
    #[test]
    fn every_agents_tested_range_is_exactly_its_pins() {
        let setup =
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/setup"))
                .unwrap();
        for k in crate::agents::all() {
            let upper = k.spec().agent.as_str().to_uppercase();
            let pins: Vec<&str> = setup
                .lines()
                .filter_map(|l| l.split_once('='))
                .filter(|(var, _)| {
                    var.starts_with(&format!("{upper}_")) && var.ends_with("VERSION")
                })
                .map(|(_, v)| v.trim_matches('"'))
                .collect();
            assert!(!pins.is_empty(), "no {upper}_VERSION in scripts/setup");
            let oldest = pins.iter().min_by(|a, b| compare(a, b)).unwrap();
            let newest = pins.iter().max_by(|a, b| compare(a, b)).unwrap();
            assert_eq!(
                k.spec().release.tested,
                (*oldest, *newest),
                "{}: the tested range must be the pins {pins:?}",
                k.spec().agent.as_str()
            );
        }
    }
}
