//! The kit for `park integrate <agent>` where an agent runs shell commands on its session events:
//! the command park installs (`<park> hook <agent>`), and, for agents whose hooks live in a JSON
//! file as `event → [{matcher?, hooks: [{type, command}]}]` (the shape Claude Code made and
//! others copied), merging park's hooks in, taking them out and checking them.
//!
//! Contract:
//! * a hook is park's when its command ends in ` hook <agent>`; nothing else in the file is ever
//!   changed, and key order is kept (serde_json's `preserve_order`);
//! * install adds one group per event and updates a moved park in place; installing twice
//!   changes nothing; remove takes out exactly park's hooks, and an event list (or a `hooks`
//!   object) it leaves empty;
//! * a file that is not plain JSON holding an object, or whose events are not lists, is never
//!   rewritten, and the error says why.

use super::IntegrationState;
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};

/// The shell command a hook runs: `<park> hook <agent>`, the path quoted when it needs to be.
pub fn command_for(park_exe: &Path, agent: &str) -> String {
    let exe = park_exe.to_string_lossy();
    format!(
        "{} hook {agent}",
        shlex::try_quote(&exe).map_or_else(|_| exe.to_string(), |q| q.into_owned())
    )
}

/// Whether `cmd` is a park hook command for `agent` (whatever park binary it runs).
pub fn is_ours(cmd: &str, agent: &str) -> bool {
    cmd.strip_suffix(agent)
        .is_some_and(|h| h.ends_with(" hook "))
}

/// The park binary a hook command of `agent` runs (`'<path>' hook <agent>`): `None` when the
/// command is not one park wrote.
pub fn command_exe(cmd: &str, agent: &str) -> Option<PathBuf> {
    let head = cmd.strip_suffix(agent)?.strip_suffix(" hook ")?;
    match shlex::split(head)?.as_slice() {
        [exe] => Some(PathBuf::from(exe)),
        _ => None,
    }
}

/// One agent's JSON hooks file, as data.
pub struct JsonHooks {
    /// The agent's name in `park integrate <agent>` and `<park> hook <agent>`.
    pub agent: &'static str,
    /// What the errors call the file (`Gemini's settings`).
    pub file: &'static str,
    /// The events park hooks, one group each.
    pub events: &'static [&'static str],
    /// The key of the object that holds the events (`Some("hooks")`), or `None` when the file's
    /// top level is that object.
    pub under: Option<&'static str>,
}

impl JsonHooks {
    fn ours_in(&self, hook: &Value) -> bool {
        hook.get("command")
            .and_then(Value::as_str)
            .is_some_and(|c| is_ours(c, self.agent))
    }

    /// The object that holds the events, if there is one.
    fn events_of<'a>(&self, m: &'a Map<String, Value>) -> Option<&'a Map<String, Value>> {
        match self.under {
            Some(k) => m.get(k).and_then(Value::as_object),
            None => Some(m),
        }
    }

    /// park's hook commands in `m`, as `(event, command)`.
    pub fn ours(&self, m: &Map<String, Value>) -> Vec<(String, String)> {
        let mut out = vec![];
        let Some(events) = self.events_of(m) else {
            return out;
        };
        for ev in self.events {
            for group in events
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
                    if self.ours_in(h) {
                        let c = h.get("command").and_then(Value::as_str).unwrap_or_default();
                        out.push((ev.to_string(), c.to_string()));
                    }
                }
            }
        }
        out
    }

    /// Installs park's hooks into `m` (pure): whether anything changed.
    pub fn merge(&self, m: &mut Map<String, Value>, park_exe: &Path) -> Result<bool, String> {
        let cmd = command_for(park_exe, self.agent);
        let events = match self.under {
            Some(k) => m
                .entry(k)
                .or_insert_with(|| Value::Object(Map::new()))
                .as_object_mut()
                .ok_or_else(|| {
                    format!("`{k}` in {} is not an object; not touching it", self.file)
                })?,
            None => m,
        };
        let prefix = self.under.map(|k| format!("{k}.")).unwrap_or_default();
        let mut changed = false;
        for ev in self.events {
            let list = events
                .entry(ev.to_string())
                .or_insert_with(|| Value::Array(vec![]))
                .as_array_mut()
                .ok_or_else(|| {
                    format!(
                        "`{prefix}{ev}` in {} is not a list; not touching it",
                        self.file
                    )
                })?;
            let mut found = false;
            for group in list.iter_mut() {
                for h in group
                    .get_mut("hooks")
                    .and_then(Value::as_array_mut)
                    .into_iter()
                    .flatten()
                {
                    if self.ours_in(h) {
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

    /// Takes park's hooks out of `m` (pure): whether anything changed.
    pub fn unmerge(&self, m: &mut Map<String, Value>) -> bool {
        let events = match self.under {
            Some(k) => match m.get_mut(k).and_then(Value::as_object_mut) {
                Some(e) => e,
                None => return false,
            },
            None => &mut *m,
        };
        let mut changed = false;
        for ev in self.events {
            let Some(list) = events.get_mut(*ev).and_then(Value::as_array_mut) else {
                continue;
            };
            for group in list.iter_mut() {
                if let Some(hs) = group.get_mut("hooks").and_then(Value::as_array_mut) {
                    let before = hs.len();
                    hs.retain(|h| !self.ours_in(h));
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
                events.remove(*ev);
            }
        }
        if let Some(k) = self.under {
            if events.is_empty() {
                m.remove(k);
            }
        }
        changed
    }

    /// The state of park's hooks in the file at `path`.
    pub fn state_in(&self, path: &Path) -> IntegrationState {
        match load(path) {
            Ok(None) => IntegrationState::Missing,
            Ok(Some(m)) => self.state_of(&m, |p| p.is_file()),
            Err(e) => IntegrationState::Unreadable(e),
        }
    }

    /// Installs park's hooks into the file at `path`, whose content is `loaded` (from [`load`]);
    /// `restart` names what must restart to read them (`running Gemini CLIs`).
    pub fn install_in(
        &self,
        path: &Path,
        loaded: Option<Map<String, Value>>,
        park_exe: &Path,
        restart: &str,
    ) -> Result<String, String> {
        let mut m = loaded.unwrap_or_default();
        if !self.merge(&mut m, park_exe)? {
            return Ok(format!("already in {}", path.display()));
        }
        save(path, &m)?;
        Ok(format!(
            "added {} hooks running `{}` to {}; restart {restart} to pick them up",
            self.events.join(" and "),
            command_for(park_exe, self.agent),
            path.display()
        ))
    }

    /// Takes park's hooks out of the file at `path`.
    pub fn remove_from(&self, path: &Path) -> Result<String, String> {
        let Some(mut m) = load(path)? else {
            return Ok(format!("nothing to remove: no {}", path.display()));
        };
        if !self.unmerge(&mut m) {
            return Ok(format!("nothing to remove in {}", path.display()));
        }
        save(path, &m)?;
        Ok(format!("removed park's hooks from {}", path.display()))
    }

    /// The state of park's hooks in `m` (pure; `exists` tells whether a park binary is there).
    pub fn state_of(
        &self,
        m: &Map<String, Value>,
        exists: impl Fn(&Path) -> bool,
    ) -> IntegrationState {
        state_of_commands(self.agent, self.events, &self.ours(m), exists)
    }
}

/// The state of an integration from park's hook commands found in the agent's file, as
/// `(event, command)` (pure; `exists` tells whether a park binary is there): missing when there
/// are none, broken when an event lost its hook or a hook runs a park that is gone.
pub fn state_of_commands(
    agent: &str,
    events: &[&str],
    ours: &[(String, String)],
    exists: impl Fn(&Path) -> bool,
) -> IntegrationState {
    if ours.is_empty() {
        return IntegrationState::Missing;
    }
    let missing: Vec<&str> = events
        .iter()
        .copied()
        .filter(|ev| !ours.iter().any(|(e, _)| e == ev))
        .collect();
    if !missing.is_empty() {
        return IntegrationState::Broken(format!(
            "the {} hook is gone: run `park integrate {agent}` again",
            missing.join(" and ")
        ));
    }
    for (ev, c) in ours {
        match command_exe(c, agent) {
            Some(exe) if exists(&exe) => {}
            Some(exe) => {
                return IntegrationState::Broken(format!(
                    "the {ev} hook runs {}, which is not there any more: run `park integrate {agent}` again",
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

/// Reads a JSON object file (`Ok(None)`: no file; an empty file is an empty object).
pub fn load(path: &Path) -> Result<Option<Map<String, Value>>, String> {
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

/// Writes `m` to `path` atomically, pretty-printed, creating its folder.
pub fn save(path: &Path, m: &Map<String, Value>) -> Result<(), String> {
    let dir = path
        .parent()
        .ok_or_else(|| format!("{} has no folder", path.display()))?;
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let text =
        serde_json::to_string_pretty(&Value::Object(m.clone())).map_err(|e| e.to_string())?;
    crate::support::fs::write_atomic(path, format!("{text}\n").as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const NESTED: JsonHooks = JsonHooks {
        agent: "nested",
        file: "the settings",
        events: &["SessionStart", "SessionEnd"],
        under: Some("hooks"),
    };
    const TOP: JsonHooks = JsonHooks {
        under: None,
        agent: "top",
        ..NESTED
    };

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => panic!(),
        }
    }

    #[test]
    fn a_hook_command_quotes_its_path_and_is_read_back_only_for_its_agent() {
        let exe = Path::new("/opt/my park/park");
        let c = command_for(exe, "gem");
        assert_eq!(c, "'/opt/my park/park' hook gem");
        assert_eq!(command_exe(&c, "gem").as_deref(), Some(exe));
        assert!(is_ours(&c, "gem"));
        assert!(!is_ours(&c, "em"), "another agent's name is a suffix of it");
        assert!(!is_ours("notify hook gemx", "gem"));
        assert_eq!(command_exe("a b hook gem", "gem"), None, "two words");
        assert_eq!(
            command_for(Path::new("/usr/bin/park"), "x"),
            "/usr/bin/park hook x"
        );
    }

    /// Install merges into the user's hooks and keeps everything else in its order; installing
    /// twice changes nothing; a moved park is updated; remove takes out exactly park's, and a
    /// `hooks` object it created goes with them.
    #[test]
    fn install_merges_and_remove_undoes_exactly_it_in_both_shapes() {
        let user = json!({
            "theme": "dark",
            "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}],
                      "BeforeTool": [{"matcher": "x", "hooks": [{"type": "command", "command": "audit"}]}]},
            "zzz": 1
        });
        let exe = Path::new("/opt/my park/park");
        let mut m = obj(user.clone());
        assert!(NESTED.merge(&mut m, exe).unwrap());
        assert_eq!(m.keys().collect::<Vec<_>>(), ["theme", "hooks", "zzz"]);
        let ss = m["hooks"]["SessionStart"].as_array().unwrap();
        assert_eq!(ss.len(), 2, "the user's hook stays: {ss:?}");
        assert_eq!(ss[0]["hooks"][0]["command"], "notify-send hi");
        assert_eq!(
            ss[1]["hooks"][0]["command"],
            "'/opt/my park/park' hook nested"
        );
        assert_eq!(NESTED.state_of(&m, |_| true), IntegrationState::Installed);
        assert!(
            matches!(NESTED.state_of(&m, |_| false), IntegrationState::Broken(w) if w.contains("not there any more"))
        );
        assert!(!NESTED.merge(&mut m, exe).unwrap(), "idempotent");
        assert!(
            NESTED.merge(&mut m, Path::new("/usr/bin/park")).unwrap(),
            "moved"
        );
        assert_eq!(NESTED.ours(&m).len(), 2);
        assert!(NESTED.unmerge(&mut m));
        assert_eq!(Value::Object(m.clone()), user, "exactly the user's again");
        assert!(!NESTED.unmerge(&mut m));
        assert_eq!(NESTED.state_of(&m, |_| true), IntegrationState::Missing);
        let mut fresh = Map::new();
        NESTED.merge(&mut fresh, exe).unwrap();
        NESTED.unmerge(&mut fresh);
        assert!(fresh.is_empty(), "{fresh:?}");

        let user = json!({
            "SessionStart": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}],
            "PreToolUse": [{"matcher": "Execute", "hooks": [{"type": "command", "command": "audit"}]}],
        });
        let mut m = obj(user.clone());
        assert!(TOP.merge(&mut m, exe).unwrap());
        assert_eq!(
            m.keys().collect::<Vec<_>>(),
            ["SessionStart", "PreToolUse", "SessionEnd"]
        );
        assert_eq!(
            m["SessionEnd"][0]["hooks"][0]["command"],
            "'/opt/my park/park' hook top"
        );
        assert_eq!(TOP.state_of(&m, |_| true), IntegrationState::Installed);
        assert!(TOP.unmerge(&mut m));
        assert_eq!(Value::Object(m), user);
    }

    #[test]
    fn a_half_removed_integration_is_broken_and_odd_shapes_are_never_rewritten() {
        let mut m = Map::new();
        NESTED.merge(&mut m, Path::new("/usr/bin/park")).unwrap();
        m["hooks"].as_object_mut().unwrap().remove("SessionEnd");
        assert!(
            matches!(NESTED.state_of(&m, |_| true), IntegrationState::Broken(w) if w.contains("SessionEnd") && w.contains("integrate nested"))
        );
        let mut other = obj(
            json!({"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "/p hook top"}]}]}}),
        );
        assert_eq!(NESTED.state_of(&other, |_| true), IntegrationState::Missing);
        assert!(
            !NESTED.unmerge(&mut other),
            "another agent's hook is not ours"
        );
        for bad in [
            json!({"hooks": ["not", "an", "object"]}),
            json!({"hooks": {"SessionStart": {"x": 1}}}),
        ] {
            let mut b = obj(bad.clone());
            let e = NESTED.merge(&mut b, Path::new("/p")).unwrap_err();
            assert!(
                e.contains("not touching it") && e.contains("the settings"),
                "{e}"
            );
        }
        let mut b = obj(json!({"SessionEnd": "x"}));
        assert!(TOP
            .merge(&mut b, Path::new("/p"))
            .unwrap_err()
            .contains("`SessionEnd`"));
    }

    #[test]
    fn a_file_with_comments_or_not_an_object_is_an_error_and_none_is_none() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("s.json");
        assert_eq!(load(&p), Ok(None));
        std::fs::write(&p, "{\n // mine\n}").unwrap();
        assert!(load(&p).unwrap_err().contains("comments?"));
        std::fs::write(&p, "[1]").unwrap();
        assert!(load(&p).unwrap_err().contains("not a JSON object"));
        std::fs::write(&p, " \n").unwrap();
        assert_eq!(load(&p), Ok(Some(Map::new())));
        let q = d.path().join("new/dir/h.json");
        save(&q, &obj(json!({"a": 1}))).unwrap();
        assert_eq!(std::fs::read_to_string(&q).unwrap(), "{\n  \"a\": 1\n}\n");
    }
}
