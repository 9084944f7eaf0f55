//! Where park keeps its state: `$PARK_HOME`, else `$XDG_STATE_HOME/park`, else `~/.local/state/park`.

use std::path::PathBuf;

pub fn park_home() -> Result<PathBuf, String> {
    park_home_from(|k| std::env::var(k).ok())
}

/// The same rule over any environment (e.g. a pane shell's), so park can tell whether a command
/// typed into that shell would find this ledger.
pub(crate) fn park_home_from(get: impl Fn(&str) -> Option<String>) -> Result<PathBuf, String> {
    let get = |k: &str| get(k).filter(|v| !v.is_empty());
    if let Some(h) = get("PARK_HOME") {
        return absolute(PathBuf::from(h), "PARK_HOME");
    }
    if let Some(x) = get("XDG_STATE_HOME") {
        return absolute(PathBuf::from(x).join("park"), "XDG_STATE_HOME");
    }
    match get("HOME") {
        Some(h) => absolute(PathBuf::from(h).join(".local/state/park"), "HOME"),
        None => Err("neither PARK_HOME, XDG_STATE_HOME nor HOME is set".into()),
    }
}

fn absolute(p: PathBuf, var: &str) -> Result<PathBuf, String> {
    if p.is_absolute() {
        Ok(p)
    } else {
        Err(format!(
            "{var} must be an absolute path (got {})",
            p.display()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_and_relative_paths() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(a, _)| *a == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(
            park_home_from(env(&[("PARK_HOME", "/p"), ("HOME", "/h")])).unwrap(),
            PathBuf::from("/p")
        );
        assert_eq!(
            park_home_from(env(&[("XDG_STATE_HOME", "/x"), ("HOME", "/h")])).unwrap(),
            PathBuf::from("/x/park")
        );
        assert_eq!(
            park_home_from(env(&[("HOME", "/h")])).unwrap(),
            PathBuf::from("/h/.local/state/park")
        );
        assert!(park_home_from(env(&[("PARK_HOME", "rel")])).is_err());
        assert!(park_home_from(env(&[])).is_err());
    }
}
