//! `park integrate gemini`: a `SessionStart` and a `SessionEnd` hook in Gemini's user settings
//! (`<config>/settings.json`, `$GEMINI_CLI_HOME/.gemini` else `~/.gemini`) that run
//! `<park> hook gemini`. Gemini gives each hook its session on stdin (`session_id`,
//! `transcript_path`, `cwd`, `hook_event_name`, `source`/`reason`; measured on 0.61.0, again after
//! `/clear`) and runs it as a child of the session process; `park hook gemini` writes
//! `$PARK_HOME/integrations/gemini/<pid>.json` for that process, with its start time.
//!
//! Contract:
//! * install, remove and the state are the JSON hooks kit's ([`crate::agents::hooks`]): only
//!   park's `hooks.SessionStart` / `hooks.SessionEnd` entries change, everything else in the file
//!   stays as it was (key order too), and a file that is not a JSON object (Gemini also accepts
//!   comments) is never rewritten. The file is replaced atomically.
//! * the hook never fails Gemini: `park hook gemini` prints nothing and exits 0 whatever happens
//!   (the CLI layer), and a record is written atomically.

use super::super::{Integration, IntegrationState};
use crate::adapters::platform::proctree::program_of;
use crate::adapters::platform::Platform;
use crate::agents::hooks::{self, JsonHooks};
use crate::agents::transcript::valid_session_id;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Gemini's hooks: under `hooks` in its settings, Claude Code's shape.
pub const HOOKS: JsonHooks = JsonHooks {
    agent: "gemini",
    file: "Gemini's settings",
    events: &["SessionStart", "SessionEnd"],
    under: Some("hooks"),
};

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
        HOOKS.state_in(&path)
    }
    fn install(&self, env: &[(String, String)], park_exe: &Path) -> Result<String, String> {
        let path = settings_file(env).ok_or("neither GEMINI_CLI_HOME nor HOME is set")?;
        HOOKS.install_in(&path, hooks::load(&path)?, park_exe, "running Gemini CLIs")
    }
    fn remove(&self, env: &[(String, String)]) -> Result<String, String> {
        let path = settings_file(env).ok_or("neither GEMINI_CLI_HOME nor HOME is set")?;
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
    use serde_json::Value;

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
