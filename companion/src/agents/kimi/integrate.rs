//! `park integrate kimi`: a `SessionStart` and a `SessionEnd` hook in Kimi Code's config
//! (`$KIMI_CODE_HOME/config.toml`, else `~/.kimi-code/config.toml`): two `[[hooks]]` tables whose
//! `command` runs `<park> hook kimi`. Kimi runs a hook with `sh -c` as a child of its own process
//! and writes its input on stdin (measured on 2.1.0: `{hook_event_name, session_id, cwd,
//! client_type, source|reason, session_title, model, profile}`). `SessionStart` fires when a
//! session is created (the first prompt of a fresh start: Kimi creates none before), resumed
//! (`kimi -S`, `source: "resume"`) or replaced (`/new`, `/clear`: `SessionEnd` of the old one
//! first); `SessionEnd` on `/new` and on a clean exit, not on SIGTERM. `park hook kimi` writes
//! `$PARK_HOME/integrations/kimi/<pid>.json` for the Kimi process above it, with its start time.
//!
//! Contract:
//! * the config is TOML, which park never re-serialises: install appends one block (two
//!   `[[hooks]]` tables between park's marker comments) at the end, after checking the file
//!   parses and that its `hooks` is an array of tables (an inline `hooks = [...]` cannot take
//!   appended tables: refused, the error says why); the result must parse again with exactly the
//!   hooks it had plus park's, or nothing is written. The file is replaced atomically.
//! * remove takes out exactly park's tables (those whose `command` ends in ` hook kimi`, whether
//!   or not Kimi rewrote the file and dropped the markers) and the markers; everything else stays
//!   byte for byte, and the result must parse with the user's hooks intact, or nothing is written.
//! * the hook never fails Kimi: `park hook kimi` prints nothing and exits 0 whatever happens (the
//!   CLI layer), and a record is written atomically.

use super::super::{Integration, IntegrationState};
use crate::adapters::platform::proctree::program_of;
use crate::adapters::platform::Platform;
use crate::agents::hooks;
use crate::agents::transcript::valid_session_id;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

const EVENTS: &[&str] = &["SessionStart", "SessionEnd"];
/// The agent word of park's hook command (`<park> hook kimi`).
const AGENT: &str = "kimi";
const BEGIN: &str =
    "# park: session hooks (`park integrate kimi`; `park integrate --remove kimi` removes them)";
const END: &str = "# park: end of session hooks";

/// One `integrations/kimi/<pid>.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub pid: u32,
    pub start_ticks: u64,
    pub session_id: String,
    pub cwd: Option<String>,
    pub event: String,
    /// Why the session started (`startup`, `resume`), as the hook said.
    #[serde(default)]
    pub source: Option<String>,
    /// The session ended (`SessionEnd`): the process is exiting or about to start another.
    #[serde(default)]
    pub ended: bool,
}

pub fn records_dir(home: &Path) -> PathBuf {
    home.join("integrations").join("kimi")
}

pub fn read_record(home: &Path, pid: u32) -> Option<Record> {
    crate::agents::records::read(&records_dir(home), pid).filter(|r: &Record| r.pid == pid)
}

/// Kimi's config file for `env`.
pub fn config_file(env: &[(String, String)]) -> Option<PathBuf> {
    super::SPEC.config.dir(env).map(|d| d.join("config.toml"))
}

/// A TOML basic string holding `s`.
fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The block install appends.
fn block(park_exe: &Path) -> String {
    let cmd = toml_string(&command_for(park_exe));
    let mut s = format!("{BEGIN}\n");
    for ev in EVENTS {
        s.push_str(&format!(
            "[[hooks]]\nevent = \"{ev}\"\ncommand = {cmd}\ntimeout = 10\n\n"
        ));
    }
    s.pop();
    s.push_str(END);
    s.push('\n');
    s
}

/// The `(event, command)` of every hook the config declares, or why the config cannot be
/// edited.
fn hooks_of(text: &str, path: &Path) -> Result<Vec<(String, String)>, String> {
    let doc = toml_edit::Document::parse(text).map_err(|e| {
        format!(
            "{} is not valid TOML ({}); not touching it",
            path.display(),
            e.to_string().lines().next().unwrap_or_default()
        )
    })?;
    let Some(item) = doc.get("hooks") else {
        return Ok(vec![]);
    };
    let Some(tables) = item.as_array_of_tables() else {
        return Err(format!(
            "`hooks` in {} is not a list of [[hooks]] tables; not touching it: add park's hooks by hand (see `park integrate --help`)",
            path.display()
        ));
    };
    Ok(tables
        .iter()
        .map(|t| {
            let s = |k: &str| {
                t.get(k)
                    .and_then(|v| v.as_str())
                    .unwrap_or_default()
                    .to_string()
            };
            (s("event"), s("command"))
        })
        .collect())
}

fn is_ours(cmd: &str) -> bool {
    hooks::is_ours(cmd, AGENT)
}

fn command_for(park_exe: &Path) -> String {
    hooks::command_for(park_exe, AGENT)
}

/// Installs into `text` (pure): the new text, or `None` when it is already there.
pub fn merge(text: &str, park_exe: &Path, path: &Path) -> Result<Option<String>, String> {
    let hooks = hooks_of(text, path)?;
    let cmd = command_for(park_exe);
    let have = |ev: &str| hooks.iter().any(|(e, c)| e == ev && *c == cmd);
    if EVENTS.iter().all(|ev| have(ev)) {
        return Ok(None);
    }
    // Another park path (a moved binary) or a half-removed block: take ours out first.
    let base = if hooks.iter().any(|(_, c)| is_ours(c)) {
        unmerge(text, path)?.unwrap_or_else(|| text.to_string())
    } else {
        text.to_string()
    };
    let mut out = base.clone();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out.push_str(&block(park_exe));
    let mut want: Vec<(String, String)> = hooks_of(&base, path)?;
    want.extend(EVENTS.iter().map(|e| (e.to_string(), cmd.clone())));
    if hooks_of(&out, path)? != want {
        return Err(format!(
            "appending park's hooks to {} would not read back as written; not touching it: add them by hand",
            path.display()
        ));
    }
    Ok(Some(out))
}

/// Removes ours from `text` (pure): the new text, or `None` when there was nothing of ours.
pub fn unmerge(text: &str, path: &Path) -> Result<Option<String>, String> {
    let hooks = hooks_of(text, path)?;
    if !hooks.iter().any(|(_, c)| is_ours(c)) && !text.lines().any(|l| l == BEGIN || l == END) {
        return Ok(None);
    }
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let header = |l: &str| l.trim_start().starts_with('[');
    let mut keep = vec![true; lines.len()];
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i].trim_end();
        if l == BEGIN || l == END {
            keep[i] = false;
            i += 1;
            continue;
        }
        if l.trim() == "[[hooks]]" {
            let mut j = i + 1;
            while j < lines.len()
                && !header(lines[j])
                && !matches!(lines[j].trim_end(), BEGIN | END)
            {
                j += 1;
            }
            let body: String = lines[i..j].concat();
            let ours = hooks_of(&body, path)
                .ok()
                .and_then(|h| h.into_iter().next())
                .is_some_and(|(_, c)| is_ours(&c));
            if ours {
                keep[i..j].iter_mut().for_each(|k| *k = false);
            }
            i = j;
            continue;
        }
        i += 1;
    }
    let mut out: String = lines
        .iter()
        .zip(&keep)
        .filter(|(_, k)| **k)
        .map(|(l, _)| *l)
        .collect();
    // The blank line install put before its block.
    while out.ends_with("\n\n") {
        out.pop();
    }
    let want: Vec<(String, String)> = hooks.into_iter().filter(|(_, c)| !is_ours(c)).collect();
    if hooks_of(&out, path)? != want {
        return Err(format!(
            "park's hooks in {} are not where park put them; not touching it: remove them by hand",
            path.display()
        ));
    }
    Ok(Some(out))
}

/// The state of a config's text (pure; `exists` tells whether a park binary is there).
pub fn state_of(text: &str, path: &Path, exists: impl Fn(&Path) -> bool) -> IntegrationState {
    let hooks = match hooks_of(text, path) {
        Ok(h) => h,
        Err(e) => return IntegrationState::Unreadable(e),
    };
    let ours: Vec<(String, String)> = hooks.into_iter().filter(|(_, c)| is_ours(c)).collect();
    hooks::state_of_commands(AGENT, EVENTS, &ours, exists)
}

fn load(path: &Path) -> Result<Option<String>, String> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

fn save(path: &Path, text: &str) -> Result<(), String> {
    let dir = path.parent().ok_or("config file has no directory")?;
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    crate::support::fs::write_atomic(path, text.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The hook input Kimi writes on stdin.
#[derive(Debug, Deserialize)]
struct Input {
    session_id: Option<String>,
    cwd: Option<String>,
    hook_event_name: Option<String>,
    source: Option<String>,
}

/// The Kimi process that ran the hook: the nearest ancestor of `from` whose title is Kimi's
/// (`sh -c` sits between).
fn kimi_ancestor(
    platform: &dyn Platform,
    from: u32,
) -> Option<crate::adapters::platform::ProcInfo> {
    let mut pid = from;
    for _ in 0..4 {
        let p = platform.process(pid)?;
        if program_of(&p.argv).is_some_and(|(n, i)| super::SPEC.is_program(&n, &p.argv[i])) {
            return Some(p);
        }
        pid = p.ppid;
    }
    None
}

/// Kimi Code's hook integration.
pub struct Hook;

impl Integration for Hook {
    fn file(&self, env: &[(String, String)]) -> Option<PathBuf> {
        config_file(env)
    }
    fn state(&self, env: &[(String, String)]) -> IntegrationState {
        let Some(path) = config_file(env) else {
            return IntegrationState::Unreadable("neither KIMI_CODE_HOME nor HOME is set".into());
        };
        match load(&path) {
            Ok(None) => IntegrationState::Missing,
            Ok(Some(t)) => state_of(&t, &path, |p| p.is_file()),
            Err(e) => IntegrationState::Unreadable(e),
        }
    }
    fn install(&self, env: &[(String, String)], park_exe: &Path) -> Result<String, String> {
        let path = config_file(env).ok_or("neither KIMI_CODE_HOME nor HOME is set")?;
        let text = load(&path)?.unwrap_or_default();
        let Some(out) = merge(&text, park_exe, &path)? else {
            return Ok(format!("already in {}", path.display()));
        };
        save(&path, &out)?;
        Ok(format!(
            "added SessionStart and SessionEnd hooks running `{}` to {}; restart running Kimi Code CLIs (or /reload) to pick them up",
            command_for(park_exe),
            path.display()
        ))
    }
    fn remove(&self, env: &[(String, String)]) -> Result<String, String> {
        let path = config_file(env).ok_or("neither KIMI_CODE_HOME nor HOME is set")?;
        let Some(text) = load(&path)? else {
            return Ok(format!("nothing to remove: no {}", path.display()));
        };
        let Some(out) = unmerge(&text, &path)? else {
            return Ok(format!("nothing to remove in {}", path.display()));
        };
        save(&path, &out)?;
        Ok(format!("removed park's hooks from {}", path.display()))
    }
    fn record(&self, input: &[u8], home: &Path, platform: &dyn Platform) -> Result<(), String> {
        let inp: Input = serde_json::from_slice(input).map_err(|e| format!("hook input: {e}"))?;
        let sid = inp
            .session_id
            .as_deref()
            .and_then(valid_session_id)
            .filter(|s| s.starts_with("session_"))
            .ok_or("hook input holds no valid Kimi session id")?;
        let me = platform
            .process(std::process::id())
            .ok_or("own process unreadable")?;
        let k = kimi_ancestor(platform, me.ppid).ok_or("no Kimi Code process above this hook")?;
        let event = inp.hook_event_name.unwrap_or_default();
        let rec = Record {
            pid: k.pid,
            start_ticks: k.start_ticks,
            session_id: sid,
            cwd: inp.cwd.filter(|p| p.starts_with('/')),
            ended: event == "SessionEnd",
            event,
            source: inp.source.filter(|s| {
                s.len() <= 32 && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            }),
        };
        let dir = records_dir(home);
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        // The hooks of one `/new` run one after the other or at once: read, decide and write
        // under one lock.
        let _lock = lock(&dir)?;
        let Some(rec) = apply(read_record(home, rec.pid), rec) else {
            return Ok(());
        };
        let bytes = serde_json::to_vec(&rec).map_err(|e| e.to_string())?;
        crate::agents::records::write(&dir, rec.pid, &bytes, |pid| {
            read_record(home, pid).is_none_or(|r| {
                platform
                    .process(pid)
                    .is_none_or(|p| p.start_ticks != r.start_ticks)
            })
        })
    }
}

/// What to write when hook record `new` arrives over `old` (`None`: nothing). Kimi runs the old
/// session's `SessionEnd` after the new one's `SessionStart` on `/new` (2.1.0): an end of a session
/// other than the one the process's record names is that late end, and changes nothing.
pub fn apply(old: Option<Record>, new: Record) -> Option<Record> {
    match old {
        Some(o)
            if new.ended
                && o.start_ticks == new.start_ticks
                && o.session_id != new.session_id
                && !crate::support::fault::disabled("kimi-late-session-end") =>
        {
            None
        }
        _ => Some(new),
    }
}

/// An exclusive `flock` on `<dir>/.lock`, released when dropped.
fn lock(dir: &Path) -> Result<std::fs::File, String> {
    use std::os::fd::AsRawFd;
    let path = dir.join(".lock");
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    // SAFETY: flock on a valid fd owned by `f`.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } != 0 {
        return Err(format!(
            "{}: {}",
            path.display(),
            std::io::Error::last_os_error()
        ));
    }
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    const USER: &str = "# my Kimi config\ndefault_model = \"k2\" # the fast one\n\n[providers.mock]\ntype = \"openai\"\nbase_url = \"http://127.0.0.1:1/v1\"\n\n[[hooks]]\nevent = \"PreToolUse\"\nmatcher = \"Bash\"\ncommand = \"audit-tool\"\n\n[models.k2]\nprovider = \"mock\"\nmodel = \"m\"\nmax_context_size = 1000\n";

    fn p() -> &'static Path {
        Path::new("/h/.kimi-code/config.toml")
    }

    /// Install appends exactly park's block and keeps every byte of the user's file; installing
    /// twice changes nothing; remove gives back the user's file byte for byte.
    #[test]
    fn install_appends_and_remove_gives_back_the_users_file() {
        let exe = Path::new("/opt/my park/park");
        let out = merge(USER, exe, p()).unwrap().expect("changed");
        assert!(out.starts_with(USER), "the user's text is kept as it was");
        assert!(
            out.contains("command = \"'/opt/my park/park' hook kimi\""),
            "{out}"
        );
        let hooks = hooks_of(&out, p()).unwrap();
        assert_eq!(hooks.len(), 3, "{hooks:?}");
        assert_eq!(hooks[0], ("PreToolUse".into(), "audit-tool".into()));
        assert_eq!(state_of(&out, p(), |_| true), IntegrationState::Installed);
        assert!(
            matches!(state_of(&out, p(), |_| false), IntegrationState::Broken(w) if w.contains("not there any more"))
        );
        assert_eq!(merge(&out, exe, p()).unwrap(), None, "idempotent");
        // A moved park: replaced, not doubled.
        let moved = merge(&out, Path::new("/usr/bin/park"), p())
            .unwrap()
            .unwrap();
        let ours: Vec<_> = hooks_of(&moved, p())
            .unwrap()
            .into_iter()
            .filter(|(_, c)| is_ours(c))
            .collect();
        assert_eq!(ours.len(), 2, "{moved}");
        assert!(ours.iter().all(|(_, c)| c == "/usr/bin/park hook kimi"));

        assert_eq!(unmerge(&out, p()).unwrap().as_deref(), Some(USER));
        assert_eq!(unmerge(&moved, p()).unwrap().as_deref(), Some(USER));
        assert_eq!(unmerge(USER, p()).unwrap(), None, "nothing of ours");
        assert_eq!(state_of(USER, p(), |_| true), IntegrationState::Missing);

        // An empty or absent file: only the block; removed to nothing.
        let fresh = merge("", exe, p()).unwrap().unwrap();
        assert!(fresh.starts_with(BEGIN));
        assert_eq!(unmerge(&fresh, p()).unwrap().as_deref(), Some(""));
    }

    /// Kimi rewrites its config when it saves a setting, without comments: the markers go, park's
    /// tables stay, and remove still takes out exactly them.
    #[test]
    fn remove_finds_parks_tables_without_the_markers() {
        let text = "default_model = \"mock\"\n\n[[hooks]]\nevent = \"SessionStart\"\ncommand = \"/usr/bin/park hook kimi\"\n\n[[hooks]]\nevent = \"Stop\"\ncommand = \"notify-send done\"\n\n[[hooks]]\nevent = \"SessionEnd\"\ncommand = \"/usr/bin/park hook kimi\"\ntimeout = 10\n";
        let out = unmerge(text, p()).unwrap().unwrap();
        assert_eq!(
            out,
            "default_model = \"mock\"\n\n[[hooks]]\nevent = \"Stop\"\ncommand = \"notify-send done\"\n"
        );
        // Only one of the two left: broken, and named.
        let half = "[[hooks]]\nevent = \"SessionStart\"\ncommand = \"/usr/bin/park hook kimi\"\n";
        assert!(
            matches!(state_of(half, p(), |_| true), IntegrationState::Broken(w) if w.contains("SessionEnd"))
        );
    }

    #[test]
    fn a_config_park_cannot_edit_safely_is_never_rewritten() {
        let exe = Path::new("/usr/bin/park");
        for bad in [
            "default_model = \n",
            "hooks = [{event = \"Stop\", command = \"x\"}]\n",
            "[hooks]\nevent = \"Stop\"\n",
        ] {
            assert!(merge(bad, exe, p()).is_err(), "{bad}");
            assert!(unmerge(bad, p()).is_err(), "{bad}");
            assert!(matches!(
                state_of(bad, p(), |_| true),
                IntegrationState::Unreadable(_)
            ));
        }
        // A path with a quote and a backslash reads back as itself.
        let odd = Path::new("/opt/a\"b\\c/park");
        let out = merge("", odd, p()).unwrap().unwrap();
        let hooks = hooks_of(&out, p()).unwrap();
        assert_eq!(hooks::command_exe(&hooks[0].1, AGENT).as_deref(), Some(odd));
    }

    /// `/new` (2.1.0): the new session's `SessionStart`, then the old one's `SessionEnd`. The late
    /// end leaves the record on the new session; an end of the recorded session marks it ended;
    /// a record of an earlier process with the pid is replaced whatever comes.
    #[test]
    fn a_late_end_of_the_previous_session_changes_nothing() {
        let rec = |sid: &str, start: u64, ended: bool| Record {
            pid: 7,
            start_ticks: start,
            session_id: sid.into(),
            cwd: None,
            event: if ended { "SessionEnd" } else { "SessionStart" }.into(),
            source: None,
            ended,
        };
        let (a, b) = ("session_a", "session_b");
        assert_eq!(apply(Some(rec(b, 1, false)), rec(a, 1, true)), None);
        assert_eq!(
            apply(Some(rec(a, 1, false)), rec(a, 1, true)),
            Some(rec(a, 1, true))
        );
        assert_eq!(
            apply(Some(rec(a, 1, true)), rec(b, 1, false)),
            Some(rec(b, 1, false))
        );
        assert_eq!(
            apply(Some(rec(b, 0, false)), rec(a, 1, true)),
            Some(rec(a, 1, true))
        );
        assert_eq!(apply(None, rec(a, 1, true)), Some(rec(a, 1, true)));
    }

    #[test]
    fn install_and_remove_through_the_file() {
        let d = tempfile::tempdir().unwrap();
        let env = vec![("HOME".to_string(), d.path().to_string_lossy().into_owned())];
        let path = config_file(&env).unwrap();
        assert_eq!(path, d.path().join(".kimi-code/config.toml"));
        assert_eq!(Hook.state(&env), IntegrationState::Missing);
        let env2 = vec![("KIMI_CODE_HOME".to_string(), "/k".to_string())];
        assert_eq!(config_file(&env2).unwrap(), PathBuf::from("/k/config.toml"));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, USER).unwrap();
        Hook.install(&env, Path::new("/usr/bin/park")).unwrap();
        assert_eq!(Hook.state(&env), IntegrationState::Broken("the SessionStart hook runs /usr/bin/park, which is not there any more: run `park integrate kimi` again".into()));
        Hook.remove(&env).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), USER);
        std::fs::write(&path, "hooks = 3\n").unwrap();
        assert!(Hook.install(&env, Path::new("/usr/bin/park")).is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "hooks = 3\n");
    }
}
