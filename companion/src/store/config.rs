//! park's settings file: `$PARK_CONFIG`, else `$XDG_CONFIG_HOME/park/config.toml`, else
//! `~/.config/park/config.toml` (and, when none of those exists, the older `$PARK_HOME/config.toml`).
//!
//! ```toml
//! [archive]
//! auto = true          # run `park archive --all` at most once a day (default false)
//!
//! [journal]
//! enabled = true       # keep journal.json, the live sessions a crash would lose (default true)
//! restore = "off"      # after a crash: "off" (`park rebuild` by hand), "ask" or "auto"
//!
//! [auto]               # the autopilot (model::auto): off until `mode` says otherwise
//! mode = "suggest"     # "off" | "suggest" | "park"
//! idle = "2h"
//! max_live = 8
//! ram_budget = "6G"
//! min_available = "10%"
//! per_pass = 3
//! interval = "60s"
//! exclude = ["work:0", "@keep"]
//! limit_reset = false
//! ```
//!
//! Contract: a missing file is the defaults (`PARK_CONFIG` naming a missing file is an error: it
//! was asked for). An unreadable or invalid file — bad TOML, a value of the wrong type or out of
//! range, an unknown key in `[auto]` (a typo there would silently change what the autopilot does)
//! — is an error naming the file, the line and the key; callers that run in the background treat
//! it as "off" (a broken config never starts or parks anything), `park config` and `park doctor`
//! report it. An unknown table or key anywhere is such an error too: `[atuo]`, or `mode = "park"`
//! above any table header, read as "off" while the user believed the autopilot on.
//! [`Config::origins`] says where each effective value came from, for `park config`.

use crate::model::auto::{self, Auto, Mode};
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Config {
    /// `[archive] auto`: the daily `park archive --all` (off by default).
    pub archive_auto: bool,
    /// `[auto]`: the autopilot.
    pub auto: Auto,
    /// `[journal]`: the journal of live sessions.
    pub journal: Journal,
    /// The file read, if any.
    pub file: Option<PathBuf>,
    /// (key, line in `file`) of every value the file set; the rest are defaults.
    pub origins: Vec<(String, usize)>,
}

impl Config {
    /// Where `key` (`auto.idle`) came from: `file:line` or `default`.
    pub fn origin(&self, key: &str) -> String {
        match (
            &self.file,
            self.origins.iter().find(|(k, _)| k == key).map(|(_, l)| *l),
        ) {
            (Some(f), Some(line)) => format!("{}:{line}", f.display()),
            _ => "default".into(),
        }
    }
}

/// `[journal]`: the daemon records the live sessions a crash would lose (read-only but for
/// `journal.json`, so on by default); bringing them back is the user's act unless `restore` says
/// otherwise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Journal {
    pub enabled: bool,
    pub restore: Restore,
}

impl Default for Journal {
    fn default() -> Self {
        Journal {
            enabled: true,
            restore: Restore::Off,
        }
    }
}

/// `[journal] restore`: what happens when a client attaches to a multiplexer after sessions were
/// lost with the previous one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Restore {
    /// Nothing: the status line counts them, `park rebuild` (or Enter in the picker) brings them
    /// back.
    #[default]
    Off,
    /// The client is asked once per set of lost sessions (y/n).
    Ask,
    /// `park rebuild --as-before` runs: the lost sessions resume in their slots, parked ones come
    /// back parked.
    Auto,
}

impl Restore {
    pub fn as_str(self) -> &'static str {
        match self {
            Restore::Off => "off",
            Restore::Ask => "ask",
            Restore::Auto => "auto",
        }
    }
}

/// The older location, read only when the new one has no file.
pub fn path(home: &Path) -> PathBuf {
    home.join("config.toml")
}

/// The config file this environment names, and how it was named.
pub fn locate_from(get: impl Fn(&str) -> Option<String>) -> Option<(PathBuf, &'static str)> {
    let get = |k: &str| get(k).filter(|v| !v.is_empty());
    if let Some(p) = get("PARK_CONFIG") {
        return Some((PathBuf::from(p), "PARK_CONFIG"));
    }
    if let Some(x) = get("XDG_CONFIG_HOME").filter(|x| x.starts_with('/')) {
        return Some((PathBuf::from(x).join("park/config.toml"), "XDG_CONFIG_HOME"));
    }
    get("HOME")
        .filter(|h| h.starts_with('/'))
        .map(|h| (PathBuf::from(h).join(".config/park/config.toml"), "HOME"))
}

/// The config for this process's environment and `$PARK_HOME`.
pub fn load(home: &Path) -> Result<Config, String> {
    load_from(locate_from(|k| std::env::var(k).ok()), &path(home))
}

/// Reads the located file, else the older `legacy` one, else the defaults.
pub fn load_from(
    located: Option<(PathBuf, &'static str)>,
    legacy: &Path,
) -> Result<Config, String> {
    let read = |p: &Path| -> Result<Option<Config>, String> {
        match std::fs::read_to_string(p) {
            Ok(t) => parse(&t)
                .map(|mut c| {
                    c.file = Some(p.to_path_buf());
                    Some(c)
                })
                .map_err(|e| format!("{}: {e}", p.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!("{}: {e}", p.display())),
        }
    };
    if let Some((p, how)) = &located {
        match read(p)? {
            Some(c) => return Ok(c),
            None if *how == "PARK_CONFIG" => {
                return Err(format!("PARK_CONFIG={}: no such file", p.display()))
            }
            None => {}
        }
    }
    Ok(read(legacy)?.unwrap_or_default())
}

fn line_of(text: &str, span: Option<std::ops::Range<usize>>) -> usize {
    span.map(|r| text[..r.start.min(text.len())].matches('\n').count() + 1)
        .unwrap_or(0)
}

/// The tables a config file may have, and the keys of `[archive]`.
const TABLES: &[&str] = &["archive", "auto", "journal"];
const ARCHIVE_KEYS: &[&str] = &["auto"];
const JOURNAL_KEYS: &[&str] = &["enabled", "restore"];

const AUTO_KEYS: &[&str] = &[
    "mode",
    "idle",
    "max_live",
    "ram_budget",
    "min_available",
    "per_pass",
    "interval",
    "exclude",
    "limit_reset",
];

/// The table `name` of a config file, with every key checked against `keys`.
fn small_table<'a>(
    text: &str,
    root: &'a toml_edit::Table,
    name: &str,
    keys: &[&str],
) -> Result<Option<&'a dyn toml_edit::TableLike>, String> {
    let Some(item) = root.get(name) else {
        return Ok(None);
    };
    let t = item.as_table_like().ok_or(format!(
        "line {}: [{name}] must be a table",
        line_of(text, item.span())
    ))?;
    for (k, v) in t.iter() {
        if !keys.contains(&k) {
            let line = line_of(text, t.key(k).and_then(|k| k.span()).or_else(|| v.span()));
            return Err(format!(
                "line {line}: [{name}] {k}: unknown key (known: {})",
                keys.join(", ")
            ));
        }
    }
    Ok(Some(t))
}

/// Parses the text of a config file.
pub fn parse(text: &str) -> Result<Config, String> {
    let doc = toml_edit::Document::parse(text).map_err(|e| {
        let line = line_of(text, e.span());
        format!("line {line}: invalid TOML: {}", e.message())
    })?;
    let root = doc.as_table();
    let mut c = Config::default();
    for (k, item) in root.iter() {
        if TABLES.contains(&k) {
            continue;
        }
        let line = line_of(
            text,
            root.key(k).and_then(|k| k.span()).or_else(|| item.span()),
        );
        let known = TABLES
            .iter()
            .map(|t| format!("[{t}]"))
            .collect::<Vec<_>>()
            .join(", ");
        return Err(if item.is_table_like() && !item.is_inline_table() {
            format!("line {line}: unknown table [{k}] (known tables: {known})")
        } else {
            let hint = TABLES
                .iter()
                .filter(|t| match **t {
                    "auto" => AUTO_KEYS.contains(&k),
                    "journal" => JOURNAL_KEYS.contains(&k),
                    _ => ARCHIVE_KEYS.contains(&k),
                })
                .map(|t| format!("; it belongs under [{t}]"))
                .next()
                .unwrap_or_default();
            format!("line {line}: unknown key {k} outside any table (known tables: {known}){hint}")
        });
    }
    if let Some(t) = small_table(text, root, "archive", ARCHIVE_KEYS)? {
        if let Some(v) = t.get("auto") {
            c.archive_auto = v.as_bool().ok_or(format!(
                "line {}: [archive] auto must be true or false",
                line_of(text, v.span())
            ))?;
            c.origins
                .push(("archive.auto".into(), line_of(text, v.span())));
        }
    }
    if let Some(t) = small_table(text, root, "journal", JOURNAL_KEYS)? {
        if let Some(v) = t.get("enabled") {
            c.journal.enabled = v.as_bool().ok_or(format!(
                "line {}: [journal] enabled must be true or false",
                line_of(text, v.span())
            ))?;
            c.origins
                .push(("journal.enabled".into(), line_of(text, v.span())));
        }
        if let Some(v) = t.get("restore") {
            c.journal.restore = match v.as_str() {
                Some("off") => Restore::Off,
                Some("ask") => Restore::Ask,
                Some("auto") => Restore::Auto,
                _ => {
                    return Err(format!(
                        "line {}: [journal] restore must be \"off\", \"ask\" or \"auto\"",
                        line_of(text, v.span())
                    ))
                }
            };
            c.origins
                .push(("journal.restore".into(), line_of(text, v.span())));
        }
    }
    if let Some(item) = root.get("auto") {
        let t = item.as_table_like().ok_or(format!(
            "line {}: [auto] must be a table",
            line_of(text, item.span())
        ))?;
        c.auto = parse_auto(text, t, &mut c.origins)?;
    }
    Ok(c)
}

fn parse_auto(
    text: &str,
    t: &dyn toml_edit::TableLike,
    origins: &mut Vec<(String, usize)>,
) -> Result<Auto, String> {
    let mut a = Auto::default();
    for (k, v) in t.iter() {
        let line = line_of(text, t.key(k).and_then(|k| k.span()).or_else(|| v.span()));
        let err = |why: String| format!("line {line}: [auto] {k}: {why}");
        if !AUTO_KEYS.contains(&k) {
            return Err(err(format!(
                "unknown key (known: {})",
                AUTO_KEYS.join(", ")
            )));
        }
        let str_of = |v: &toml_edit::Item| -> Result<String, String> {
            v.as_str()
                .map(str::to_string)
                .ok_or_else(|| err("must be a string".into()))
        };
        let count_of = |v: &toml_edit::Item, min: i64| -> Result<usize, String> {
            match v.as_integer() {
                Some(n) if n >= min && n <= 10_000 => Ok(n as usize),
                Some(n) => Err(err(format!("{n} is out of range ({min} to 10000)"))),
                None => Err(err("must be a whole number".into())),
            }
        };
        let duration_of = |v: &toml_edit::Item| -> Result<Duration, String> {
            crate::support::duration::parse(&str_of(v)?).map_err(&err)
        };
        match k {
            "mode" => a.mode = Mode::parse(&str_of(v)?).map_err(&err)?,
            "idle" => a.idle = duration_of(v)?,
            "max_live" => a.max_live = Some(count_of(v, 0)?),
            "ram_budget" => a.ram_budget = Some(auto::parse_size(&str_of(v)?).map_err(&err)?),
            "min_available" => {
                a.min_available = Some(auto::parse_floor(&str_of(v)?).map_err(&err)?)
            }
            "per_pass" => a.per_pass = count_of(v, 1)?,
            "interval" => {
                a.interval = duration_of(v)?;
                if a.interval < auto::MIN_INTERVAL {
                    return Err(err(format!(
                        "must be at least {}s",
                        auto::MIN_INTERVAL.as_secs()
                    )));
                }
            }
            "exclude" => {
                let arr = v
                    .as_array()
                    .ok_or_else(|| err("must be a list of targets".into()))?;
                for x in arr.iter() {
                    let s = x
                        .as_str()
                        .ok_or_else(|| err("must be a list of strings".into()))?;
                    if !s.starts_with('@') {
                        crate::guards::target::parse(s).map_err(&err)?;
                    }
                    a.exclude.push(s.to_string());
                }
            }
            "limit_reset" => {
                a.limit_reset = v
                    .as_bool()
                    .ok_or_else(|| err("must be true or false".into()))?
            }
            _ => unreachable!("checked against AUTO_KEYS"),
        }
        origins.push((format!("auto.{k}"), line));
    }
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_by_default_on_when_asked_and_bad_values_are_errors() {
        assert_eq!(parse("").unwrap(), Config::default());
        assert!(parse("[archive]\nauto = true\n").unwrap().archive_auto);
        assert!(!parse("[archive]\nauto = false\n").unwrap().archive_auto);
        assert!(parse("archive = { auto = true }").unwrap().archive_auto);
        assert!(parse("[archive]\nauto = \"yes\"\n")
            .unwrap_err()
            .contains("true or false"));
        assert!(parse("[archive\n").unwrap_err().contains("invalid TOML"));
        assert!(
            parse("").unwrap().journal.enabled,
            "the journal is on by default"
        );
        assert!(
            !parse("[journal]\nenabled = false\n")
                .unwrap()
                .journal
                .enabled
        );
        assert!(parse("[journal]\nenabled = 0\n")
            .unwrap_err()
            .contains("[journal] enabled must be true or false"));
        assert!(parse("[journal]\nenable = false\n")
            .unwrap_err()
            .contains("[journal] enable: unknown key"));
        assert_eq!(
            parse("").unwrap().journal.restore,
            Restore::Off,
            "restoring is the user's act unless asked for"
        );
        for (v, want) in [
            ("off", Restore::Off),
            ("ask", Restore::Ask),
            ("auto", Restore::Auto),
        ] {
            let c = parse(&format!("[journal]\nrestore = \"{v}\"\n")).unwrap();
            assert_eq!(c.journal.restore, want);
            assert_eq!(c.journal.restore.as_str(), v);
        }
        assert!(parse("[journal]\nrestore = true\n")
            .unwrap_err()
            .contains("line 2: [journal] restore must be \"off\", \"ask\" or \"auto\""));
        let d = tempfile::tempdir().unwrap();
        assert_eq!(load_from(None, &path(d.path())).unwrap(), Config::default());
        std::fs::write(path(d.path()), "[archive]\nauto = 3\n").unwrap();
        assert!(load_from(None, &path(d.path()))
            .unwrap_err()
            .contains("config.toml"));
    }

    #[test]
    fn auto_section_values_lines_and_origins() {
        let text = "# park\n[auto]\nmode = \"suggest\"\nidle = \"30m\"\nmax_live = 2\nram_budget = \"6G\"\nmin_available = \"10%\"\nper_pass = 1\ninterval = \"5s\"\nexclude = [\"work:0\", \"@keep\"]\nlimit_reset = true\n";
        let c = parse(text).unwrap();
        let a = &c.auto;
        assert_eq!(a.mode, Mode::Suggest);
        assert_eq!(a.idle, Duration::from_secs(1800));
        assert_eq!(a.max_live, Some(2));
        assert_eq!(a.ram_budget, Some(6 << 30));
        assert_eq!(a.min_available, Some(auto::Floor::Percent(10)));
        assert_eq!(a.per_pass, 1);
        assert_eq!(a.interval, Duration::from_secs(5));
        assert_eq!(a.exclude, vec!["work:0".to_string(), "@keep".into()]);
        assert!(a.limit_reset);
        assert!(c.origins.contains(&("auto.max_live".into(), 5)));
        assert_eq!(c.origin("auto.idle"), "default", "no file: defaults");
        assert_eq!(parse("").unwrap().auto, Auto::default());
    }

    #[test]
    fn auto_errors_name_the_line_and_key() {
        let cases = [
            ("[auto]\nmode = \"on\"\n", "line 2: [auto] mode"),
            ("[auto]\n\nidle = \"2x\"\n", "line 3: [auto] idle"),
            (
                "[auto]\nmax_lives = 2\n",
                "line 2: [auto] max_lives: unknown key",
            ),
            (
                "[auto]\nper_pass = 0\n",
                "[auto] per_pass: 0 is out of range",
            ),
            (
                "[auto]\ninterval = \"1s\"\n",
                "[auto] interval: must be at least 5s",
            ),
            (
                "[auto]\nram_budget = 6\n",
                "[auto] ram_budget: must be a string",
            ),
            ("[auto]\nexclude = [\"%1;x\"]\n", "[auto] exclude"),
            ("[auto]\nmode = \n", "line 2: invalid TOML"),
            ("auto = 3\n", "line 1: [auto] must be a table"),
            // Typos outside [auto] are errors too: each of these read as "off" before.
            (
                "[atuo]\nmode = \"park\"\n",
                "line 1: unknown table [atuo] (known tables: [archive], [auto], [journal])",
            ),
            (
                "mode = \"park\"\n",
                "line 1: unknown key mode outside any table (known tables: [archive], [auto], [journal]); it belongs under [auto]",
            ),
            (
                "# hi\n[auto]\nmode = \"off\"\n[auto.x]\n",
                "line 4: [auto] x: unknown key",
            ),
            ("[archive]\nauot = true\n", "line 2: [archive] auot: unknown key"),
            ("[auto]\nmode = \"off\"\n\n[zellij]\n", "line 4: unknown table [zellij]"),
        ];
        for (text, want) in cases {
            let e = parse(text).unwrap_err();
            assert!(e.contains(want), "{text:?}: {e}");
        }
    }

    #[test]
    fn locations_in_order_and_legacy_fallback() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(a, _)| *a == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        let at = |pairs| locate_from(env(pairs)).map(|(p, _)| p);
        assert_eq!(
            at(&[("PARK_CONFIG", "/c.toml"), ("HOME", "/h")]),
            Some(PathBuf::from("/c.toml"))
        );
        assert_eq!(
            at(&[("XDG_CONFIG_HOME", "/x"), ("HOME", "/h")]),
            Some(PathBuf::from("/x/park/config.toml"))
        );
        assert_eq!(
            at(&[("HOME", "/h")]),
            Some(PathBuf::from("/h/.config/park/config.toml"))
        );
        let d = tempfile::tempdir().unwrap();
        let new = d.path().join("new.toml");
        let legacy = d.path().join("legacy.toml");
        std::fs::write(&legacy, "[archive]\nauto = true\n").unwrap();
        let c = load_from(Some((new.clone(), "HOME")), &legacy).unwrap();
        assert!(c.archive_auto, "no new file: the legacy one is read");
        std::fs::write(&new, "[auto]\nmode = \"park\"\n").unwrap();
        let c = load_from(Some((new.clone(), "HOME")), &legacy).unwrap();
        assert!(!c.archive_auto, "the new file wins whole");
        assert_eq!(c.auto.mode, Mode::Park);
        assert!(
            c.origin("auto.mode").ends_with("new.toml:2"),
            "{}",
            c.origin("auto.mode")
        );
        let missing = d.path().join("nope.toml");
        assert!(load_from(Some((missing, "PARK_CONFIG")), &legacy)
            .unwrap_err()
            .contains("no such file"));
    }
}
