//! Named sets of targets (issue 9 item 3): `park set add <name> <target>…`, `park set rm`,
//! `park set ls`, and `@<name>` anywhere `park park` / `park unpark` take a target.
//!
//! Contract: sets live in `$PARK_HOME/sets.json` (`{"schema":1,"sets":{name:[target,…]}}`,
//! written atomically, 0600). A name is 1–64 of `[A-Za-z0-9_.-]`; every member is a target that
//! parses (validated when added, so a hostile string never reaches the multiplexer later). A set
//! names targets, not panes: `@api` means whatever `w:api` and `%7` name when it is used. An
//! unknown `@name` is a usage error, and a corrupt file is reported, never rewritten over.

use crate::store::ledger::write_atomic;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Debug, Default, Serialize, Deserialize)]
struct File {
    schema: u32,
    sets: BTreeMap<String, Vec<String>>,
}

fn path(home: &Path) -> std::path::PathBuf {
    home.join("sets.json")
}

fn valid_name(n: &str) -> bool {
    !n.is_empty()
        && n.len() <= 64
        && n.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

fn load(home: &Path) -> Result<File, String> {
    match std::fs::read(path(home)) {
        Ok(b) => serde_json::from_slice(&b).map_err(|e| {
            format!(
                "{} is not a valid sets file ({e}); fix or remove it",
                path(home).display()
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(File {
            schema: 1,
            ..File::default()
        }),
        Err(e) => Err(format!("cannot read {}: {e}", path(home).display())),
    }
}

fn save(home: &Path, f: &File) -> Result<(), String> {
    crate::store::ledger::private_dir(home).map_err(|e| e.to_string())?;
    let json = serde_json::to_vec_pretty(f).expect("sets serialise");
    write_atomic(&path(home), &json).map_err(|e| e.to_string())
}

/// Adds `targets` to set `name` (created if new); returns the set's members.
pub fn add(home: &Path, name: &str, targets: &[String]) -> Result<Vec<String>, String> {
    if !valid_name(name) {
        return Err(format!(
            "{name:?} is not a set name (1-64 letters, digits, _ . -)"
        ));
    }
    for t in targets {
        if t.starts_with('@') {
            return Err(format!("{t}: a set holds targets, not other sets"));
        }
        crate::guards::target::parse(t).map_err(|e| format!("{t}: {e}"))?;
    }
    let mut f = load(home)?;
    let members = f.sets.entry(name.to_string()).or_default();
    for t in targets {
        if !members.contains(t) {
            members.push(t.clone());
        }
    }
    let out = members.clone();
    save(home, &f)?;
    Ok(out)
}

/// Removes `targets` from set `name`, or the whole set when none are given.
pub fn remove(home: &Path, name: &str, targets: &[String]) -> Result<(), String> {
    let mut f = load(home)?;
    let Some(members) = f.sets.get_mut(name) else {
        return Err(format!("no set named {name:?}"));
    };
    if targets.is_empty() {
        f.sets.remove(name);
    } else {
        members.retain(|m| !targets.contains(m));
        if members.is_empty() {
            f.sets.remove(name);
        }
    }
    save(home, &f)
}

pub fn list(home: &Path) -> Result<BTreeMap<String, Vec<String>>, String> {
    Ok(load(home)?.sets)
}

/// Replaces each `@name` by its members (in order, once each); other targets pass through.
pub fn expand(home: &Path, targets: &[String]) -> Result<Vec<String>, String> {
    if !targets.iter().any(|t| t.starts_with('@')) {
        return Ok(targets.to_vec());
    }
    let f = load(home)?;
    let mut out: Vec<String> = vec![];
    for t in targets {
        let items = match t.strip_prefix('@') {
            Some(n) => f
                .sets
                .get(n)
                .cloned()
                .ok_or_else(|| format!("no set named {n:?} (see `park set ls`)"))?,
            None => vec![t.clone()],
        };
        for i in items {
            if !out.contains(&i) {
                out.push(i);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn add_expand_remove_and_bad_input() {
        let d = tempfile::tempdir().unwrap();
        let h = d.path();
        assert_eq!(
            add(h, "api", &v(&["w:api", "%3"])).unwrap(),
            v(&["w:api", "%3"])
        );
        assert_eq!(
            add(h, "api", &v(&["%3", "%4"])).unwrap(),
            v(&["w:api", "%3", "%4"])
        );
        assert_eq!(
            expand(h, &v(&["%9", "@api", "%3"])).unwrap(),
            v(&["%9", "w:api", "%3", "%4"])
        );
        assert!(expand(h, &v(&["@nope"])).unwrap_err().contains("no set"));
        for bad in ["", "a b", "x/y", "@x", &"n".repeat(65)] {
            assert!(add(h, bad, &v(&["%1"])).is_err(), "{bad:?}");
        }
        assert!(add(h, "s", &v(&["@api"])).is_err());
        assert!(add(h, "s", &v(&["%1; rm -rf /"])).is_err());
        remove(h, "api", &v(&["%3"])).unwrap();
        assert_eq!(list(h).unwrap()["api"], v(&["w:api", "%4"]));
        remove(h, "api", &[]).unwrap();
        assert!(list(h).unwrap().is_empty());
        // A corrupt file is reported and left as it is.
        std::fs::write(h.join("sets.json"), b"{not json").unwrap();
        assert!(add(h, "api", &v(&["%1"]))
            .unwrap_err()
            .contains("not a valid sets file"));
        assert_eq!(std::fs::read(h.join("sets.json")).unwrap(), b"{not json");
    }
}
