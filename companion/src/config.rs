//! park's own settings: `$PARK_HOME/config.toml`, optional, read only by park.
//!
//! ```toml
//! [archive]
//! auto = true   # run `park archive --all` at most once a day (default false)
//! ```
//!
//! Contract: a missing file is the defaults. An unreadable or invalid file (bad TOML, a key of the
//! wrong type) is an error naming the file and the key; callers that run in the background treat
//! it as "off" (a broken config never starts anything), and `park doctor` reports it. Unknown keys
//! are ignored, so a newer park's file still reads.

use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Config {
    /// `[archive] auto`: the daily `park archive --all` (off by default).
    pub archive_auto: bool,
}

pub fn path(home: &Path) -> PathBuf {
    home.join("config.toml")
}

/// Parses the text of a config file.
pub fn parse(text: &str) -> Result<Config, String> {
    let doc: toml_edit::DocumentMut = text.parse().map_err(|e| format!("invalid TOML: {e}"))?;
    let mut c = Config::default();
    if let Some(item) = doc.get("archive") {
        let t = item
            .as_table_like()
            .ok_or("[archive] must be a table".to_string())?;
        if let Some(v) = t.get("auto") {
            c.archive_auto = v
                .as_bool()
                .ok_or("[archive] auto must be true or false".to_string())?;
        }
    }
    Ok(c)
}

/// The config of `home` (defaults when there is no file).
pub fn load(home: &Path) -> Result<Config, String> {
    let p = path(home);
    match std::fs::read_to_string(&p) {
        Ok(t) => parse(&t).map_err(|e| format!("{}: {e}", p.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Config::default()),
        Err(e) => Err(format!("{}: {e}", p.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_by_default_on_when_asked_and_bad_values_are_errors() {
        assert_eq!(parse("").unwrap(), Config::default());
        assert!(parse("[archive]\nauto = true\n").unwrap().archive_auto);
        assert!(
            !parse("[archive]\nauto = false\nother = 1\n")
                .unwrap()
                .archive_auto
        );
        assert!(parse("archive = { auto = true }").unwrap().archive_auto);
        assert!(parse("[archive]\nauto = \"yes\"\n")
            .unwrap_err()
            .contains("true or false"));
        assert!(parse("[archive\n").unwrap_err().contains("invalid TOML"));
        let d = tempfile::tempdir().unwrap();
        assert_eq!(load(d.path()).unwrap(), Config::default());
        std::fs::write(path(d.path()), "[archive]\nauto = 3\n").unwrap();
        assert!(load(d.path()).unwrap_err().contains("config.toml"));
    }
}
