//! `park integrate droid`: a `SessionStart` and a `SessionEnd` hook in Droid's user hooks file
//! (`<config>/hooks.json`, `~/.factory/hooks.json`: an object of event → hook groups, the shape
//! Droid 0.225.2 reads and writes there) that run `<park> hook droid`. Droid gives each hook its
//! session on stdin (`session_id`, `transcript_path`, `cwd`, `hook_event_name`,
//! `source`/`reason`; measured on 0.225.2, again after `/new` and on `--resume`) and runs it
//! from the TUI process or from its engine child (`droid exec --input-format stream-jsonrpc …`);
//! `park hook droid` writes `$PARK_HOME/integrations/droid/<pid>.json` for the TUI process (the
//! pane's `droid`), with its start time.
//!
//! Order of events (measured on `/new`): the TUI runs `SessionEnd` of the old session, the new
//! engine child runs `SessionStart` of the new one, and the old engine child, exiting, may run
//! `SessionEnd` of the old session once more AFTER that. So a `SessionEnd` only marks the record
//! ended when it names the session the record holds; an end of another session says nothing.
//!
//! Contract:
//! * install merges: only `SessionStart` / `SessionEnd` get one group each whose command ends in
//!   ` hook droid`; everything else in the file is kept as it was (key order too); a file that is
//!   not a JSON object is never rewritten. The file is replaced atomically.
//! * install refuses where its file would hide the user's hooks: Droid reads `hooks.json`, else
//!   the legacy `hooks/hooks.json`, and lets `hooks.json`'s events replace those of
//!   `settings.json`'s `hooks` (a shallow merge): with a legacy file and no `hooks.json`, or with
//!   `SessionStart`/`SessionEnd` hooks in `settings.json` that `hooks.json` lacks, it says so and
//!   changes nothing.
//! * remove takes out exactly those entries (and an event list it leaves empty).
//! * the hook never fails Droid: `park hook droid` prints nothing and exits 0 whatever happens
//!   (the CLI layer), and a record is written atomically.

use super::super::{Integration, IntegrationState};
use crate::adapters::platform::proctree::program_of;
use crate::adapters::platform::{Platform, ProcInfo};
use crate::agents::transcript::valid_session_id;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};

const EVENTS: &[&str] = &["SessionStart", "SessionEnd"];
const SUFFIX: &str = " hook droid";

/// One `integrations/droid/<pid>.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// The TUI process (the pane's `droid`).
    pub pid: u32,
    pub start_ticks: u64,
    pub session_id: String,
    pub transcript_path: Option<String>,
    pub cwd: Option<String>,
    pub event: String,
    /// The session ended (`SessionEnd`): the process is exiting or about to start another.
    #[serde(default)]
    pub ended: bool,
}

pub fn records_dir(home: &Path) -> PathBuf {
    home.join("integrations").join("droid")
}

pub fn read_record(home: &Path, pid: u32) -> Option<Record> {
    crate::agents::records::read(&records_dir(home), pid).filter(|r: &Record| r.pid == pid)
}

/// Droid's user hooks file for `env`.
pub fn hooks_file(env: &[(String, String)]) -> Option<PathBuf> {
    super::SPEC.config.dir(env).map(|d| d.join("hooks.json"))
}

fn is_ours(hook: &Value) -> bool {
    hook.get("command")
        .and_then(Value::as_str)
        .is_some_and(|c| c.ends_with(SUFFIX))
}

/// The park binary a hook command runs (`'<path>' hook droid`).
fn command_exe(cmd: &str) -> Option<PathBuf> {
    let head = cmd.strip_suffix(SUFFIX)?;
    let words = shlex::split(head)?;
    match words.as_slice() {
        [exe] => Some(PathBuf::from(exe)),
        _ => None,
    }
}

fn command_for(park_exe: &Path) -> String {
    let exe = park_exe.to_string_lossy();
    format!(
        "{}{SUFFIX}",
        shlex::try_quote(&exe).map_or_else(|_| exe.to_string(), |q| q.into_owned())
    )
}

/// Reads a JSON object file (`Ok(None)`: no file).
fn load(path: &Path) -> Result<Option<Map<String, Value>>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    if text.trim().is_empty() {
        return Ok(Some(Map::new()));
    }
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(m)) => Ok(Some(m)),
        Ok(_) => Err(format!("{} is not a JSON object; not touching it", path.display())),
        Err(e) => Err(format!(
            "{} is not plain JSON ({e}; comments?); not touching it: add the hooks by hand (see `park integrate --help`)",
            path.display()
        )),
    }
}

fn save(path: &Path, m: &Map<String, Value>) -> Result<(), String> {
    let dir = path.parent().ok_or("hooks file has no directory")?;
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let text =
        serde_json::to_string_pretty(&Value::Object(m.clone())).map_err(|e| e.to_string())?;
    crate::support::fs::write_atomic(path, format!("{text}\n").as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Our hook commands per event in the hooks object.
fn ours(m: &Map<String, Value>) -> Vec<(String, String)> {
    let mut out = vec![];
    for ev in EVENTS {
        for group in m.get(*ev).and_then(Value::as_array).into_iter().flatten() {
            for h in group
                .get("hooks")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if is_ours(h) {
                    let c = h.get("command").and_then(Value::as_str).unwrap_or_default();
                    out.push((ev.to_string(), c.to_string()));
                }
            }
        }
    }
    out
}

/// Installs into the hooks object `m` (pure): returns whether anything changed.
pub fn merge(m: &mut Map<String, Value>, park_exe: &Path) -> Result<bool, String> {
    let cmd = command_for(park_exe);
    let mut changed = false;
    for ev in EVENTS {
        let list = m
            .entry(ev.to_string())
            .or_insert_with(|| Value::Array(vec![]))
            .as_array_mut()
            .ok_or_else(|| {
                format!("`{ev}` in Droid's hooks.json is not a list; not touching it")
            })?;
        let mut found = false;
        for group in list.iter_mut() {
            for h in group
                .get_mut("hooks")
                .and_then(Value::as_array_mut)
                .into_iter()
                .flatten()
            {
                if is_ours(h) {
                    found = true;
                    if h.get("command").and_then(Value::as_str) != Some(cmd.as_str()) {
                        h["command"] = Value::String(cmd.clone());
                        changed = true;
                    }
                }
            }
        }
        if !found {
            list.push(json!({"hooks": [{"type": "command", "command": cmd}]}));
            changed = true;
        }
    }
    Ok(changed)
}

/// Removes ours from the hooks object `m` (pure): returns whether anything changed.
pub fn unmerge(m: &mut Map<String, Value>) -> bool {
    let mut changed = false;
    for ev in EVENTS {
        let Some(list) = m.get_mut(*ev).and_then(Value::as_array_mut) else {
            continue;
        };
        for group in list.iter_mut() {
            if let Some(hs) = group.get_mut("hooks").and_then(Value::as_array_mut) {
                let before = hs.len();
                hs.retain(|h| !is_ours(h));
                changed |= hs.len() != before;
            }
        }
        let before = list.len();
        list.retain(|g| {
            g.get("hooks")
                .and_then(Value::as_array)
                .is_none_or(|hs| !hs.is_empty())
        });
        changed |= list.len() != before;
        if list.is_empty() {
            m.remove(*ev);
        }
    }
    changed
}

/// The state of the hooks object `m` (pure; `exists` tells whether a park binary is there).
pub fn state_of(m: &Map<String, Value>, exists: impl Fn(&Path) -> bool) -> IntegrationState {
    let ours = ours(m);
    if ours.is_empty() {
        return IntegrationState::Missing;
    }
    let missing: Vec<&str> = EVENTS
        .iter()
        .copied()
        .filter(|ev| !ours.iter().any(|(e, _)| e == ev))
        .collect();
    if !missing.is_empty() {
        return IntegrationState::Broken(format!(
            "the {} hook is gone: run `park integrate droid` again",
            missing.join(" and ")
        ));
    }
    for (ev, c) in &ours {
        match command_exe(c) {
            Some(exe) if exists(&exe) => {}
            Some(exe) => {
                return IntegrationState::Broken(format!(
                    "the {ev} hook runs {}, which is not there any more: run `park integrate droid` again",
                    exe.display()
                ))
            }
            None => {
                return IntegrationState::Broken(format!(
                    "the {ev} hook's command is not park's: {c}"
                ))
            }
        }
    }
    IntegrationState::Installed
}

/// Why writing `hooks.json` in `config` would hide hooks of the user's (see the module doc).
fn shadows(config: &Path, hooks_json_exists: bool) -> Result<(), String> {
    let legacy = config.join("hooks").join("hooks.json");
    if !hooks_json_exists && legacy.is_file() {
        return Err(format!(
            "Droid reads your hooks from {} while there is no {}: a new hooks.json would hide them; move them there (Droid's /hooks does) and run `park integrate droid` again",
            legacy.display(),
            config.join("hooks.json").display()
        ));
    }
    let settings = config.join("settings.json");
    if let Ok(Some(s)) = load(&settings) {
        let theirs: Vec<&str> = EVENTS
            .iter()
            .copied()
            .filter(|ev| s.get("hooks").and_then(|h| h.get(*ev)).is_some())
            .collect();
        if !theirs.is_empty() {
            return Err(format!(
                "{} has {} hooks, which Droid replaces by hooks.json's: move them into {} and run `park integrate droid` again",
                settings.display(),
                theirs.join(" and "),
                config.join("hooks.json").display()
            ));
        }
    }
    Ok(())
}

/// The hook input Droid writes on stdin.
#[derive(Debug, Deserialize)]
struct Input {
    session_id: Option<String>,
    transcript_path: Option<String>,
    cwd: Option<String>,
    hook_event_name: Option<String>,
}

fn droid_args(p: &ProcInfo) -> Option<&[String]> {
    let (name, i) = program_of(&p.argv)?;
    super::SPEC
        .is_program(&name, &p.argv[i])
        .then(|| &p.argv[i + 1..])
}

/// The TUI engine child's argv tail (`exec --input-format stream-jsonrpc …`).
fn is_engine(args: &[String]) -> bool {
    args.first().is_some_and(|a| a == "exec")
        && args
            .windows(2)
            .any(|w| w[0] == "--input-format" && w[1] == "stream-jsonrpc")
}

/// The Droid TUI a hook run from `from` (its parent) belongs to: the nearest Droid process above
/// it (a shell may sit between) when that is the TUI, or the TUI right above it when that is its
/// engine child. Any other Droid (a `droid exec` someone ran, even from a TUI's tool) has none.
pub(crate) fn tui_above(platform: &dyn Platform, from: u32) -> Option<ProcInfo> {
    let mut pid = from;
    for _ in 0..4 {
        let p = platform.process(pid)?;
        if let Some(args) = droid_args(&p) {
            if (super::SPEC.interactive)(args) {
                return Some(p);
            }
            if !is_engine(args) {
                return None;
            }
            let parent = platform.process(p.ppid)?;
            return droid_args(&parent)
                .is_some_and(super::SPEC.interactive)
                .then_some(parent);
        }
        pid = p.ppid;
    }
    None
}

/// Droid's hook integration.
pub struct Hook;

impl Integration for Hook {
    fn file(&self, env: &[(String, String)]) -> Option<PathBuf> {
        hooks_file(env)
    }
    fn state(&self, env: &[(String, String)]) -> IntegrationState {
        let Some(path) = hooks_file(env) else {
            return IntegrationState::Unreadable(
                "neither FACTORY_HOME_OVERRIDE nor HOME is set".into(),
            );
        };
        match load(&path) {
            Ok(None) => IntegrationState::Missing,
            Ok(Some(m)) => state_of(&m, |p| p.is_file()),
            Err(e) => IntegrationState::Unreadable(e),
        }
    }
    fn install(&self, env: &[(String, String)], park_exe: &Path) -> Result<String, String> {
        let path = hooks_file(env).ok_or("HOME is not set")?;
        let loaded = load(&path)?;
        if let Some(config) = path.parent() {
            shadows(config, loaded.is_some())?;
        }
        let mut m = loaded.unwrap_or_default();
        if !merge(&mut m, park_exe)? {
            return Ok(format!("already in {}", path.display()));
        }
        save(&path, &m)?;
        Ok(format!(
            "added SessionStart and SessionEnd hooks running `{}` to {}; restart running Droids to pick them up",
            command_for(park_exe),
            path.display()
        ))
    }
    fn remove(&self, env: &[(String, String)]) -> Result<String, String> {
        let path = hooks_file(env).ok_or("HOME is not set")?;
        let Some(mut m) = load(&path)? else {
            return Ok(format!("nothing to remove: no {}", path.display()));
        };
        if !unmerge(&mut m) {
            return Ok(format!("nothing to remove in {}", path.display()));
        }
        save(&path, &m)?;
        Ok(format!("removed park's hooks from {}", path.display()))
    }
    fn record(&self, input: &[u8], home: &Path, platform: &dyn Platform) -> Result<(), String> {
        let inp: Input = serde_json::from_slice(input).map_err(|e| format!("hook input: {e}"))?;
        let sid = inp
            .session_id
            .as_deref()
            .and_then(valid_session_id)
            .ok_or("hook input holds no valid session id")?;
        let me = platform
            .process(std::process::id())
            .ok_or("own process unreadable")?;
        let tui = tui_above(platform, me.ppid).ok_or("no Droid TUI above this hook")?;
        let event = inp.hook_event_name.unwrap_or_default();
        let ended = event == "SessionEnd";
        let current = read_record(home, tui.pid).filter(|r| r.start_ticks == tui.start_ticks);
        let rec = if ended {
            // Only the end of the session the record holds counts (see the module doc).
            match current {
                Some(r) if r.session_id == sid => Record {
                    ended: true,
                    event,
                    ..r
                },
                _ => return Ok(()),
            }
        } else {
            Record {
                pid: tui.pid,
                start_ticks: tui.start_ticks,
                session_id: sid,
                transcript_path: inp.transcript_path.filter(|p| p.starts_with('/')),
                cwd: inp.cwd.filter(|p| p.starts_with('/')),
                ended: false,
                event,
            }
        };
        let bytes = serde_json::to_vec(&rec).map_err(|e| e.to_string())?;
        crate::agents::records::write(&records_dir(home), rec.pid, &bytes, |pid| {
            read_record(home, pid).is_none_or(|r| {
                platform
                    .process(pid)
                    .is_none_or(|p| p.start_ticks != r.start_ticks)
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => panic!(),
        }
    }

    /// Install merges into the user's hooks and keeps everything else, in its order; installing
    /// twice changes nothing; remove takes out exactly ours.
    #[test]
    fn install_merges_and_remove_undoes_exactly_it() {
        let user = json!({
            "SessionStart": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}],
            "PreToolUse": [{"matcher": "Execute", "hooks": [{"type": "command", "command": "audit"}]}],
        });
        let mut m = obj(user.clone());
        let exe = Path::new("/opt/my park/park");
        assert!(merge(&mut m, exe).unwrap());
        let keys: Vec<&String> = m.keys().collect();
        assert_eq!(keys, ["SessionStart", "PreToolUse", "SessionEnd"]);
        let ss = m["SessionStart"].as_array().unwrap();
        assert_eq!(ss.len(), 2, "the user's hook stays: {ss:?}");
        assert_eq!(
            ss[1]["hooks"][0]["command"],
            "'/opt/my park/park' hook droid"
        );
        assert_eq!(state_of(&m, |_| true), IntegrationState::Installed);
        assert!(
            matches!(state_of(&m, |_| false), IntegrationState::Broken(w) if w.contains("not there any more"))
        );
        assert!(!merge(&mut m, exe).unwrap(), "idempotent");
        assert!(unmerge(&mut m));
        assert_eq!(
            Value::Object(m.clone()),
            user,
            "exactly the user's hooks again"
        );
        assert!(!unmerge(&mut m));
        assert_eq!(state_of(&m, |_| true), IntegrationState::Missing);
        let mut bad = obj(json!({"SessionStart": {"x": 1}}));
        assert!(merge(&mut bad, exe).is_err());
    }

    /// A hooks.json park would create must not hide the user's hooks: not the legacy
    /// `hooks/hooks.json` Droid reads without one, nor `settings.json`'s session hooks, which
    /// hooks.json's replace.
    #[test]
    fn install_refuses_to_hide_the_users_hooks() {
        let d = tempfile::tempdir().unwrap();
        let env = vec![("HOME".to_string(), d.path().to_string_lossy().into_owned())];
        let config = d.path().join(".factory");
        let park = Path::new("/usr/bin/park");
        std::fs::create_dir_all(config.join("hooks")).unwrap();
        let legacy = r#"{"SessionStart":[{"hooks":[{"type":"command","command":"mine"}]}]}"#;
        std::fs::write(config.join("hooks/hooks.json"), legacy).unwrap();
        let err = Hook.install(&env, park).unwrap_err();
        assert!(err.contains("would hide them"), "{err}");
        assert!(!config.join("hooks.json").exists());
        std::fs::remove_file(config.join("hooks/hooks.json")).unwrap();

        let settings =
            r#"{"hooks":{"SessionEnd":[{"hooks":[{"type":"command","command":"mine"}]}]}}"#;
        std::fs::write(config.join("settings.json"), settings).unwrap();
        let err = Hook.install(&env, park).unwrap_err();
        assert!(err.contains("SessionEnd"), "{err}");
        assert!(!config.join("hooks.json").exists());
        std::fs::write(config.join("settings.json"), r#"{"logoAnimation":"off"}"#).unwrap();

        Hook.install(&env, park).unwrap();
        assert!(matches!(
            Hook.state(&env),
            IntegrationState::Installed | IntegrationState::Broken(_)
        ));
        let v: Value =
            serde_json::from_str(&std::fs::read_to_string(config.join("hooks.json")).unwrap())
                .unwrap();
        assert_eq!(
            v["SessionStart"][0]["hooks"][0]["command"],
            "/usr/bin/park hook droid"
        );
        Hook.remove(&env).unwrap();
        assert_eq!(
            std::fs::read_to_string(config.join("hooks.json"))
                .unwrap()
                .trim(),
            "{}"
        );
        std::fs::write(config.join("hooks.json"), "// mine\n{}").unwrap();
        assert!(Hook.install(&env, park).is_err());
        assert!(matches!(Hook.state(&env), IntegrationState::Unreadable(_)));
    }
}
