//! `park integrate gemini`: a `SessionStart` and a `SessionEnd` hook in Gemini's user settings
//! (`<config>/settings.json`, `$GEMINI_CLI_HOME/.gemini` else `~/.gemini`) that run
//! `<park> hook gemini`. Gemini gives each hook its session on stdin (`session_id`,
//! `transcript_path`, `cwd`, `hook_event_name`, `source`/`reason`; measured on 0.61.0, again after
//! `/clear`) and runs it as a child of the session process; `park hook gemini` writes
//! `$PARK_HOME/integrations/gemini/<pid>.json` for that process, with its start time.
//!
//! Contract:
//! * install merges: only `hooks.SessionStart` / `hooks.SessionEnd` get one entry each, whose
//!   command ends in ` hook gemini`; everything else in the file is kept as it was (key order
//!   too); a file that is not a JSON object (Gemini also accepts comments) is never rewritten,
//!   and the error says why. The file is replaced atomically.
//! * remove takes out exactly those entries (and an event list or `hooks` it leaves empty).
//! * the hook never fails Gemini: `park hook gemini` prints nothing and exits 0 whatever happens
//!   (the CLI layer), and a record is written atomically.

use super::super::{Integration, IntegrationState};
use crate::adapters::platform::proctree::program_of;
use crate::adapters::platform::Platform;
use crate::agents::transcript::valid_session_id;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};

const EVENTS: &[&str] = &["SessionStart", "SessionEnd"];
const SUFFIX: &str = " hook gemini";

/// One `integrations/gemini/<pid>.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
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
    home.join("integrations").join("gemini")
}

pub fn read_record(home: &Path, pid: u32) -> Option<Record> {
    crate::agents::records::read(&records_dir(home), pid).filter(|r: &Record| r.pid == pid)
}

/// Gemini's user settings file for `env`.
pub fn settings_file(env: &[(String, String)]) -> Option<PathBuf> {
    super::SPEC.config.dir(env).map(|d| d.join("settings.json"))
}

fn is_ours(hook: &Value) -> bool {
    hook.get("command")
        .and_then(Value::as_str)
        .is_some_and(|c| c.ends_with(SUFFIX))
}

/// The park binary a hook command runs (`'<path>' hook gemini`).
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

/// Reads the settings as a JSON object (`Ok(None)`: no file yet).
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
    let dir = path.parent().ok_or("settings file has no directory")?;
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let text =
        serde_json::to_string_pretty(&Value::Object(m.clone())).map_err(|e| e.to_string())?;
    crate::support::fs::write_atomic(path, format!("{text}\n").as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Our hook commands per event in the settings.
fn ours(m: &Map<String, Value>) -> Vec<(String, String)> {
    let mut out = vec![];
    let Some(hooks) = m.get("hooks").and_then(Value::as_object) else {
        return out;
    };
    for ev in EVENTS {
        for group in hooks
            .get(*ev)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
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

/// Installs into `m` (pure): returns whether anything changed.
pub fn merge(m: &mut Map<String, Value>, park_exe: &Path) -> Result<bool, String> {
    let cmd = command_for(park_exe);
    let hooks = m
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or("`hooks` in Gemini's settings is not an object; not touching it")?;
    let mut changed = false;
    for ev in EVENTS {
        let list = hooks
            .entry(ev.to_string())
            .or_insert_with(|| Value::Array(vec![]))
            .as_array_mut()
            .ok_or_else(|| {
                format!("`hooks.{ev}` in Gemini's settings is not a list; not touching it")
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

/// Removes ours from `m` (pure): returns whether anything changed.
pub fn unmerge(m: &mut Map<String, Value>) -> bool {
    let Some(hooks) = m.get_mut("hooks").and_then(Value::as_object_mut) else {
        return false;
    };
    let mut changed = false;
    for ev in EVENTS {
        let Some(list) = hooks.get_mut(*ev).and_then(Value::as_array_mut) else {
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
            hooks.remove(*ev);
        }
    }
    if hooks.is_empty() {
        m.remove("hooks");
    }
    changed
}

/// The state of `m` (pure; `exists` tells whether a park binary is there).
pub fn state_of(m: &Map<String, Value>, exists: impl Fn(&Path) -> bool) -> IntegrationState {
    let ours = ours(m);
    let missing: Vec<&&str> = EVENTS
        .iter()
        .filter(|ev| !ours.iter().any(|(e, _)| e == **ev))
        .collect();
    if ours.is_empty() {
        return IntegrationState::Missing;
    }
    if !missing.is_empty() {
        return IntegrationState::Broken(format!(
            "the {} hook is gone: run `park integrate gemini` again",
            missing
                .iter()
                .map(|s| **s)
                .collect::<Vec<_>>()
                .join(" and ")
        ));
    }
    for (ev, c) in &ours {
        match command_exe(c) {
            Some(exe) if exists(&exe) => {}
            Some(exe) => {
                return IntegrationState::Broken(format!(
                    "the {ev} hook runs {}, which is not there any more: run `park integrate gemini` again",
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

/// The hook input Gemini writes on stdin.
#[derive(Debug, Deserialize)]
struct Input {
    session_id: Option<String>,
    transcript_path: Option<String>,
    cwd: Option<String>,
    hook_event_name: Option<String>,
}

/// The Gemini process that ran the hook: the nearest gemini ancestor of `from` (a shell Gemini
/// ran the command with may sit between).
fn gemini_ancestor(
    platform: &dyn Platform,
    from: u32,
) -> Option<crate::adapters::platform::ProcInfo> {
    let mut pid = from;
    for _ in 0..4 {
        let p = platform.process(pid)?;
        if program_of(&p.argv).is_some_and(|(n, _)| n == "gemini") {
            return Some(p);
        }
        pid = p.ppid;
    }
    None
}

/// Gemini's hook integration.
pub struct Hook;

impl Integration for Hook {
    fn file(&self, env: &[(String, String)]) -> Option<PathBuf> {
        settings_file(env)
    }
    fn state(&self, env: &[(String, String)]) -> IntegrationState {
        let Some(path) = settings_file(env) else {
            return IntegrationState::Unreadable("neither GEMINI_CLI_HOME nor HOME is set".into());
        };
        match load(&path) {
            Ok(None) => IntegrationState::Missing,
            Ok(Some(m)) => state_of(&m, |p| p.is_file()),
            Err(e) => IntegrationState::Unreadable(e),
        }
    }
    fn install(&self, env: &[(String, String)], park_exe: &Path) -> Result<String, String> {
        let path = settings_file(env).ok_or("neither GEMINI_CLI_HOME nor HOME is set")?;
        let mut m = load(&path)?.unwrap_or_default();
        if !merge(&mut m, park_exe)? {
            return Ok(format!("already in {}", path.display()));
        }
        save(&path, &m)?;
        Ok(format!(
            "added SessionStart and SessionEnd hooks running `{}` to {}; restart running Gemini CLIs to pick them up",
            command_for(park_exe),
            path.display()
        ))
    }
    fn remove(&self, env: &[(String, String)]) -> Result<String, String> {
        let path = settings_file(env).ok_or("neither GEMINI_CLI_HOME nor HOME is set")?;
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
        let g = gemini_ancestor(platform, me.ppid).ok_or("no Gemini process above this hook")?;
        let event = inp.hook_event_name.unwrap_or_default();
        let rec = Record {
            pid: g.pid,
            start_ticks: g.start_ticks,
            session_id: sid,
            transcript_path: inp.transcript_path.filter(|p| p.starts_with('/')),
            cwd: inp.cwd.filter(|p| p.starts_with('/')),
            ended: event == "SessionEnd",
            event,
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

    /// Install merges into the user's settings and keeps everything else, in its order;
    /// installing twice changes nothing; remove takes out exactly ours.
    #[test]
    fn install_merges_and_remove_undoes_exactly_it() {
        let user = json!({
            "theme": "dark",
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}],
                      "BeforeTool": [{"matcher": "x", "hooks": [{"type": "command", "command": "audit"}]}]},
            "zzz": 1
        });
        let mut m = obj(user.clone());
        let exe = Path::new("/opt/my park/park");
        assert!(merge(&mut m, exe).unwrap());
        let keys: Vec<&String> = m.keys().collect();
        assert_eq!(keys, ["theme", "security", "hooks", "zzz"], "order kept");
        let ss = m["hooks"]["SessionStart"].as_array().unwrap();
        assert_eq!(ss.len(), 2, "the user's hook stays: {ss:?}");
        assert_eq!(ss[0]["hooks"][0]["command"], "notify-send hi");
        assert_eq!(
            ss[1]["hooks"][0]["command"],
            "'/opt/my park/park' hook gemini"
        );
        assert_eq!(
            m["hooks"]["SessionEnd"][0]["hooks"][0]["command"],
            "'/opt/my park/park' hook gemini"
        );
        assert_eq!(state_of(&m, |_| true), IntegrationState::Installed);
        assert!(
            matches!(state_of(&m, |_| false), IntegrationState::Broken(w) if w.contains("not there any more"))
        );
        assert!(!merge(&mut m, exe).unwrap(), "idempotent");
        assert!(
            merge(&mut m, Path::new("/usr/bin/park")).unwrap(),
            "a moved park is updated"
        );
        assert_eq!(ours(&m).len(), 2);

        assert!(unmerge(&mut m));
        assert_eq!(
            Value::Object(m.clone()),
            user,
            "exactly the user's settings again"
        );
        assert!(!unmerge(&mut m));
        assert_eq!(state_of(&m, |_| true), IntegrationState::Missing);

        // Only ours; a hooks object it created is removed with them.
        let mut fresh = Map::new();
        merge(&mut fresh, exe).unwrap();
        unmerge(&mut fresh);
        assert!(fresh.is_empty(), "{fresh:?}");
    }

    #[test]
    fn a_half_removed_integration_is_broken_and_odd_shapes_are_never_rewritten() {
        let mut m = Map::new();
        merge(&mut m, Path::new("/usr/bin/park")).unwrap();
        m["hooks"].as_object_mut().unwrap().remove("SessionEnd");
        assert!(
            matches!(state_of(&m, |_| true), IntegrationState::Broken(w) if w.contains("SessionEnd"))
        );
        let mut bad = obj(json!({"hooks": ["not", "an", "object"]}));
        assert!(merge(&mut bad, Path::new("/p")).is_err());
        let mut bad = obj(json!({"hooks": {"SessionStart": {"x": 1}}}));
        assert!(merge(&mut bad, Path::new("/p")).is_err());
    }

    #[test]
    fn settings_with_comments_or_not_an_object_are_left_alone() {
        let d = tempfile::tempdir().unwrap();
        let home = d.path().to_string_lossy().into_owned();
        let env = vec![("HOME".to_string(), home)];
        let path = settings_file(&env).unwrap();
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let commented = "{\n  // my theme\n  \"theme\": \"dark\"\n}\n";
        std::fs::write(&path, commented).unwrap();
        let err = Hook.install(&env, Path::new("/usr/bin/park")).unwrap_err();
        assert!(err.contains("not touching it"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), commented);
        assert!(matches!(Hook.state(&env), IntegrationState::Unreadable(_)));
        std::fs::write(&path, "[1]").unwrap();
        assert!(Hook.install(&env, Path::new("/usr/bin/park")).is_err());
        // No file: created with only the hooks; removed again to an empty object.
        std::fs::remove_file(&path).unwrap();
        assert_eq!(Hook.state(&env), IntegrationState::Missing);
        Hook.install(&env, Path::new("/usr/bin/park")).unwrap();
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(
            v["hooks"]["SessionStart"][0]["hooks"][0]["command"],
            "/usr/bin/park hook gemini"
        );
        Hook.remove(&env).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap().trim(), "{}");
    }
}
