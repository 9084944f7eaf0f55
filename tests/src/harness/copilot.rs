//! GitHub Copilot CLI offline recipe: where `scripts/setup` put it, a seeded HOME, the
//! environment pointing it at the mock's Chat Completions API (BYOK, `COPILOT_OFFLINE`), and the
//! files it writes.
//!
//! What the seed settles (verified on 1.0.102): `config.json` `trustedFolders` holding the
//! sandbox's work dir skips the folder-trust dialog; `COPILOT_OFFLINE=true` with a provider base
//! URL needs no GitHub login; `COPILOT_AUTO_UPDATE=false` never downloads a newer CLI.

use std::io;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::harness::agents::Agents;
use crate::harness::mock::MockServer;
use crate::harness::util::{path_with_first, Env};

/// The pinned `@github/copilot` version.
pub const COPILOT_VERSION: &str = "1.0.102";

/// Copilot CLI as installed by `scripts/setup`.
#[derive(Debug, Clone)]
pub struct Copilot {
    /// `copilot` (the npm loader, which runs the native binary).
    pub bin: PathBuf,
}

impl Copilot {
    /// Finds the pinned install; `Err` says what is missing.
    pub fn try_locate() -> Result<Copilot, String> {
        let bin = crate::harness::agents::find(
            &Agents::dir(),
            "copilot",
            "@github/copilot",
            "copilot",
            COPILOT_VERSION,
        )?;
        Ok(Copilot { bin })
    }

    /// Finds the pinned install; panics with a hint to run `scripts/setup`.
    pub fn locate() -> Copilot {
        crate::harness::agents::or_setup_hint(Self::try_locate(), "Copilot CLI")
    }

    /// The environment for `copilot` against `mock` with HOME=`home`; `path` is the pane's PATH,
    /// which gets Copilot's bin dir first.
    pub fn env(&self, mock: &MockServer, home: &Path, path: &str) -> Env {
        let path = path_with_first(self.bin.parent().map(Path::to_path_buf), path);
        [
            ("HOME", home.to_string_lossy().into_owned()),
            ("PATH", path),
            ("COPILOT_OFFLINE", "true".to_string()),
            (
                "COPILOT_PROVIDER_BASE_URL",
                format!("{}/v1", mock.base_url()),
            ),
            ("COPILOT_PROVIDER_API_KEY", "dummy".to_string()),
            ("COPILOT_MODEL", "gpt-4.1".to_string()),
            ("COPILOT_AUTO_UPDATE", "false".to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }
}

/// Writes `<home>/.copilot/config.json` trusting `trusted` (see the module docs).
pub fn seed_copilot_home(home: &Path, trusted: &Path) -> io::Result<()> {
    let dir = home.join(".copilot");
    std::fs::create_dir_all(&dir)?;
    let config = json!({ "trustedFolders": [trusted.to_string_lossy()] });
    std::fs::write(
        dir.join("config.json"),
        serde_json::to_string_pretty(&config)?,
    )
}

/// `<home>/.copilot/session-state/<session_id>/events.jsonl`.
pub fn copilot_events(home: &Path, session_id: &str) -> PathBuf {
    home.join(".copilot/session-state")
        .join(session_id)
        .join("events.jsonl")
}

/// The session ids whose `inuse.<pid>.lock` names `pid` (a live process's session lock).
pub fn copilot_locks(home: &Path, pid: u32) -> Vec<String> {
    let Ok(rd) = std::fs::read_dir(home.join(".copilot/session-state")) else {
        return vec![];
    };
    let mut out: Vec<String> = rd
        .flatten()
        .filter(|d| d.path().join(format!("inuse.{pid}.lock")).exists())
        .map(|d| d.file_name().to_string_lossy().into_owned())
        .collect();
    out.sort();
    out
}

/// `<home>/.copilot/open-sessions-state.json`, parsed (`Null` when absent).
pub fn copilot_open_sessions(home: &Path) -> Value {
    std::fs::read(home.join(".copilot/open-sessions-state.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or(Value::Null)
}
