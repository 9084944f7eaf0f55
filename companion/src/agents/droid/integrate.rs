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
//! * install, remove and the state are the JSON hooks kit's ([`crate::agents::hooks`]): only
//!   park's `SessionStart` / `SessionEnd` groups change, everything else in the file stays as it
//!   was (key order too), and a file that is not a JSON object is never rewritten. The file is
//!   replaced atomically.
//! * install refuses where its file would hide the user's hooks: Droid reads `hooks.json`, else
//!   the legacy `hooks/hooks.json`, and lets `hooks.json`'s events replace those of
//!   `settings.json`'s `hooks` (a shallow merge): with a legacy file and no `hooks.json`, or with
//!   `SessionStart`/`SessionEnd` hooks in `settings.json` that `hooks.json` lacks, it says so and
//!   changes nothing.
//! * the hook never fails Droid: `park hook droid` prints nothing and exits 0 whatever happens
//!   (the CLI layer), and a record is written atomically.

use super::super::{Integration, IntegrationState};
use crate::adapters::platform::proctree::program_of;
use crate::adapters::platform::{Platform, ProcInfo};
use crate::agents::hooks::{self, JsonHooks};
use crate::agents::transcript::valid_session_id;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Droid's hooks: the whole of its `hooks.json`, Claude Code's shape.
pub const HOOKS: JsonHooks = JsonHooks {
    agent: "droid",
    file: "Droid's hooks.json",
    events: &["SessionStart", "SessionEnd"],
    under: None,
};

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
    if let Ok(Some(s)) = hooks::load(&settings) {
        let theirs: Vec<&str> = HOOKS
            .events
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
        HOOKS.state_in(&path)
    }
    fn install(&self, env: &[(String, String)], park_exe: &Path) -> Result<String, String> {
        let path = hooks_file(env).ok_or("HOME is not set")?;
        let loaded = hooks::load(&path)?;
        if let Some(config) = path.parent() {
            shadows(config, loaded.is_some())?;
        }
        HOOKS.install_in(&path, loaded, park_exe, "running Droids")
    }
    fn remove(&self, env: &[(String, String)]) -> Result<String, String> {
        let path = hooks_file(env).ok_or("HOME is not set")?;
        HOOKS.remove_from(&path)
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
    use serde_json::Value;

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
