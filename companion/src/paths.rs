//! Where park keeps its state: `$PARK_HOME`, else `$XDG_STATE_HOME/park`, else `~/.local/state/park`.

use std::path::PathBuf;

pub fn park_home() -> Result<PathBuf, String> {
    if let Some(h) = std::env::var_os("PARK_HOME").filter(|h| !h.is_empty()) {
        return absolute(PathBuf::from(h), "PARK_HOME");
    }
    if let Some(x) = std::env::var_os("XDG_STATE_HOME").filter(|h| !h.is_empty()) {
        return absolute(PathBuf::from(x).join("park"), "XDG_STATE_HOME");
    }
    match std::env::var_os("HOME").filter(|h| !h.is_empty()) {
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
