//! Cline CLI offline recipe: where `scripts/setup` put it, a seeded HOME pointing it at the
//! mock's Chat Completions API, and the files it writes.
//!
//! What the seed settles (verified on 3.0.65): `~/.cline/data/settings/providers.json` (what
//! `cline auth -p openai -k dummy -m mock-model -b <mock>/v1` writes) makes the
//! `openai-compatible` provider with the mock the one in use, no login; `cli-notices.json` with
//! both start-up promos marked shown (ClinePass, Cline Desktop) keeps them off the first start.
//! Sessions: `~/.cline/data/sessions/<id>/<id>.json` (record: cwd, status) and
//! `<id>.messages.json` (the conversation); each TUI logs `session.started` with its pid and
//! the session id to `~/.cline/data/logs/cline.log`.

use std::io;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::harness::agents::Agents;
use crate::harness::mock::MockServer;
use crate::harness::util::{path_with_first, Env};

/// The pinned `cline` version.
pub const CLINE_VERSION: &str = "3.0.65";

/// Cline CLI as installed by `scripts/setup`.
#[derive(Debug, Clone)]
pub struct Cline {
    /// `cline` (the node script that runs the Bun binary of `@cline/cli-linux-x64`).
    pub bin: PathBuf,
}

impl Cline {
    /// Finds the pinned install; `Err` says what is missing.
    pub fn try_locate() -> Result<Cline, String> {
        let bin =
            crate::harness::agents::find(&Agents::dir(), "cline", "cline", "cline", CLINE_VERSION)?;
        Ok(Cline { bin })
    }

    /// Finds the pinned install; panics with a hint to run `scripts/setup`.
    pub fn locate() -> Cline {
        crate::harness::agents::or_setup_hint(Self::try_locate(), "Cline CLI")
    }

    /// The environment for `cline` with HOME=`home`; `path` is the pane's PATH, which gets
    /// Cline's bin dir first.
    pub fn env(&self, home: &Path, path: &str) -> Env {
        let path = path_with_first(self.bin.parent().map(Path::to_path_buf), path);
        [
            ("HOME", home.to_string_lossy().into_owned()),
            ("PATH", path),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }
}

/// `<home>/.cline/data`.
pub fn cline_data(home: &Path) -> PathBuf {
    home.join(".cline/data")
}

/// Writes the provider settings and the shown notices (see the module docs).
pub fn seed_cline_home(home: &Path, mock: &MockServer) -> io::Result<()> {
    let dir = cline_data(home).join("settings");
    std::fs::create_dir_all(&dir)?;
    let providers = json!({
        "version": 1,
        "lastUsedProvider": "openai-compatible",
        "modes": {},
        "providers": {
            "openai-compatible": {
                "settings": {
                    "provider": "openai-compatible",
                    "apiKey": "dummy",
                    "model": "mock-model",
                    "baseUrl": format!("{}/v1", mock.base_url()),
                },
                "updatedAt": "2026-12-06T19:28:32.261Z",
                "tokenSource": "manual"
            }
        }
    });
    std::fs::write(
        dir.join("providers.json"),
        serde_json::to_string_pretty(&providers)?,
    )?;
    let notices = json!({
        "shown": {"cline-cli-cline-pass-intro": true, "cline-cli-desktop-launch": true}
    });
    std::fs::write(
        dir.join("cli-notices.json"),
        serde_json::to_string_pretty(&notices)?,
    )
}

/// Session `sid`'s record, parsed (`Null` when absent).
pub fn cline_record(home: &Path, sid: &str) -> Value {
    std::fs::read(
        cline_data(home)
            .join("sessions")
            .join(sid)
            .join(format!("{sid}.json")),
    )
    .ok()
    .and_then(|b| serde_json::from_slice(&b).ok())
    .unwrap_or(Value::Null)
}

/// Session `sid`'s conversation file.
pub fn cline_messages_path(home: &Path, sid: &str) -> PathBuf {
    cline_data(home)
        .join("sessions")
        .join(sid)
        .join(format!("{sid}.messages.json"))
}

/// Session `sid`'s messages (empty when absent).
pub fn cline_messages(home: &Path, sid: &str) -> Vec<Value> {
    std::fs::read(cline_messages_path(home, sid))
        .ok()
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        .and_then(|v| v.get("messages")?.as_array().cloned())
        .unwrap_or_default()
}

/// Every session record under `home`: (id, cwd).
pub fn cline_sessions(home: &Path) -> Vec<(String, String)> {
    let Ok(rd) = std::fs::read_dir(cline_data(home).join("sessions")) else {
        return vec![];
    };
    let mut v: Vec<(String, String)> = rd
        .flatten()
        .filter_map(|d| {
            let id = d.file_name().to_string_lossy().into_owned();
            let cwd = cline_record(home, &id).get("cwd")?.as_str()?.to_string();
            Some((id, cwd))
        })
        .collect();
    v.sort();
    v
}

/// The sessions `pid` logged as started, in order (its own `cline.log` lines).
pub fn cline_logged(home: &Path, pid: u32) -> Vec<String> {
    let text = std::fs::read_to_string(cline_data(home).join("logs/cline.log")).unwrap_or_default();
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v.get("pid").and_then(Value::as_u64) == Some(pid as u64))
        .filter(|v| v.get("event").and_then(Value::as_str) == Some("session.started"))
        .filter_map(|v| Some(v.get("properties")?.get("sessionId")?.as_str()?.to_string()))
        .collect()
}
