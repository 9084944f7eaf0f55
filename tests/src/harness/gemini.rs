//! Gemini CLI offline recipe: where `scripts/setup` put it, a seeded HOME, the environment
//! pointing it at the mock's Gemini `v1beta` API, and the files it writes.
//!
//! What the seed settles (verified on 0.61.0): `security.auth.selectedType = "gemini-api-key"`
//! with `GEMINI_API_KEY` starts with no auth dialog; `trustedFolders.json` trusting the
//! sandbox's work dir skips the folder-trust dialog. Session retention is left at Gemini's
//! default, so its resume bug (the cleanup that deletes a resumed chat) is live in the tests.

use std::io;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::harness::agents::Agents;
use crate::harness::mock::MockServer;
use crate::harness::util::{path_with_first, Env};

/// The pinned `@google/gemini-cli` version.
pub const GEMINI_VERSION: &str = "0.61.0";

/// Gemini CLI as installed by `scripts/setup`.
#[derive(Debug, Clone)]
pub struct Gemini {
    /// `gemini` (a `#!/usr/bin/env node` script that relaunches itself once).
    pub bin: PathBuf,
}

impl Gemini {
    /// Finds the pinned install; `Err` says what is missing.
    pub fn try_locate() -> Result<Gemini, String> {
        let bin = crate::harness::agents::find(
            &Agents::dir(),
            "gemini",
            "@google/gemini-cli",
            "gemini",
            GEMINI_VERSION,
        )?;
        Ok(Gemini { bin })
    }

    /// Finds the pinned install; panics with a hint to run `scripts/setup`.
    pub fn locate() -> Gemini {
        crate::harness::agents::or_setup_hint(Self::try_locate(), "Gemini CLI")
    }

    /// The environment for `gemini` against `mock` with HOME=`home`; `path` is the pane's PATH,
    /// which gets Gemini's bin dir first.
    pub fn env(&self, mock: &MockServer, home: &Path, path: &str) -> Env {
        let path = path_with_first(self.bin.parent().map(Path::to_path_buf), path);
        [
            ("HOME", home.to_string_lossy().into_owned()),
            ("PATH", path),
            ("GOOGLE_GEMINI_BASE_URL", mock.base_url()),
            ("GEMINI_API_KEY", "dummy-key".to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }
}

/// Writes `<home>/.gemini/settings.json` and `trustedFolders.json` trusting `trusted`.
pub fn seed_gemini_home(home: &Path, trusted: &Path) -> io::Result<()> {
    let dir = home.join(".gemini");
    std::fs::create_dir_all(&dir)?;
    // Keystroke logging goes to GEMINI_DEBUG_LOG_FILE when the pane sets it (the contract does).
    let settings = json!({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "general": {"debugKeystrokeLogging": true},
    });
    std::fs::write(
        dir.join("settings.json"),
        serde_json::to_string_pretty(&settings)?,
    )?;
    let trust = json!({ trusted.to_string_lossy(): "TRUST_FOLDER" });
    std::fs::write(
        dir.join("trustedFolders.json"),
        serde_json::to_string_pretty(&trust)?,
    )
}

/// Every chat file under `<home>/.gemini/tmp/*/chats/` with its first line's `sessionId`.
pub fn gemini_chats(home: &Path) -> Vec<(PathBuf, String)> {
    let mut out = vec![];
    let Ok(projects) = std::fs::read_dir(home.join(".gemini/tmp")) else {
        return out;
    };
    for p in projects.flatten() {
        let Ok(files) = std::fs::read_dir(p.path().join("chats")) else {
            continue;
        };
        for f in files.flatten() {
            let text = std::fs::read_to_string(f.path()).unwrap_or_default();
            let sid = text
                .lines()
                .next()
                .and_then(|l| serde_json::from_str::<Value>(l).ok())
                .and_then(|v| v.get("sessionId")?.as_str().map(str::to_string))
                .unwrap_or_default();
            out.push((f.path(), sid));
        }
    }
    out.sort();
    out
}

/// The chat files of session `sid` holding `needle` (the real transcript, never a stub).
pub fn gemini_chat_with(home: &Path, sid: &str, needle: &str) -> Vec<PathBuf> {
    gemini_chats(home)
        .into_iter()
        .filter(|(p, s)| {
            s == sid
                && std::fs::read_to_string(p)
                    .unwrap_or_default()
                    .contains(needle)
        })
        .map(|(p, _)| p)
        .collect()
}
