//! OpenCode offline recipe: where `scripts/setup` put it, a seeded HOME whose global config
//! names a `mock` provider (`@ai-sdk/openai-compatible`) at the mock's Chat Completions API, the
//! environment that keeps it off the network, and a read of its session database.
//!
//! Measured on 1.18.33: the first start in a HOME npm-installs OpenCode's own plugin package
//! into `~/.config/opencode/node_modules` (a few seconds, the npm registry must be reachable);
//! `OPENCODE_DISABLE_MODELS_FETCH`, `…_AUTOUPDATE` and `…_LSP_DOWNLOAD` stop every other fetch.

use std::io;
use std::path::{Path, PathBuf};

use serde_json::json;

use crate::harness::agents::Agents;
use crate::harness::mock::MockServer;
use crate::harness::util::{path_with_first, Env};

/// The pinned `opencode-ai` version.
pub const OPENCODE_VERSION: &str = "1.18.33";

/// OpenCode as installed by `scripts/setup`.
#[derive(Debug, Clone)]
pub struct Opencode {
    /// `opencode` (the platform package's native binary, linked into `.bin`).
    pub bin: PathBuf,
}

impl Opencode {
    pub fn try_locate() -> Result<Opencode, String> {
        let bin = crate::harness::agents::find(
            &Agents::dir(),
            "opencode",
            "opencode-ai",
            "opencode",
            OPENCODE_VERSION,
        )?;
        Ok(Opencode { bin })
    }

    /// Finds the pinned install; panics with a hint to run `scripts/setup`.
    pub fn locate() -> Opencode {
        Self::try_locate().unwrap_or_else(|e| {
            panic!(
                "{e}\nOpenCode is missing: run `bash scripts/setup` (it installs it under {})",
                Agents::dir().display()
            )
        })
    }

    /// The environment for `opencode` with HOME=`home`; `path` is the pane's PATH, which gets
    /// OpenCode's bin dir first. Permissions for shell commands are asked (OpenCode allows them
    /// by default), so a permission prompt can be driven.
    pub fn env(&self, home: &Path, path: &str) -> Env {
        let path = path_with_first(self.bin.parent().map(Path::to_path_buf), path);
        [
            ("HOME", home.to_string_lossy().into_owned()),
            ("PATH", path),
            ("OPENCODE_DISABLE_MODELS_FETCH", "1".to_string()),
            ("OPENCODE_DISABLE_AUTOUPDATE", "1".to_string()),
            ("OPENCODE_DISABLE_LSP_DOWNLOAD", "1".to_string()),
            ("OPENCODE_PERMISSION", r#"{"bash":"ask"}"#.to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }
}

/// Writes `<home>/.config/opencode/opencode.json`: the mock provider and model, no sharing, no
/// update.
pub fn seed_opencode_home(home: &Path, mock: &MockServer) -> io::Result<()> {
    let dir = home.join(".config/opencode");
    std::fs::create_dir_all(&dir)?;
    let config = json!({
        "$schema": "https://opencode.ai/config.json",
        "autoupdate": false,
        "share": "disabled",
        "provider": {"mock": {
            "npm": "@ai-sdk/openai-compatible",
            "name": "Mock",
            "options": {"baseURL": format!("{}/v1", mock.base_url()), "apiKey": "dummy"},
            "models": {"mock-model": {"name": "Mock Model"}}
        }},
        "model": "mock/mock-model",
        "small_model": "mock/mock-model"
    });
    std::fs::write(
        dir.join("opencode.json"),
        serde_json::to_string_pretty(&config)?,
    )
}

/// `<home>/.local/share/opencode/opencode.db`.
pub fn opencode_db(home: &Path) -> PathBuf {
    home.join(".local/share/opencode/opencode.db")
}

/// How many messages the database holds for `session_id` (read-only, through `sqlite3` in
/// python3, which every test machine has; `None` when it cannot be read).
pub fn opencode_messages(home: &Path, session_id: &str) -> Option<usize> {
    let script = "import sqlite3,sys\nc=sqlite3.connect('file:'+sys.argv[1]+'?mode=ro',uri=True)\nprint(c.execute('select count(*) from message where session_id=?',(sys.argv[2],)).fetchone()[0])";
    let out = std::process::Command::new("python3")
        .args(["-c", script])
        .arg(opencode_db(home))
        .arg(session_id)
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

/// The main sessions the database holds, oldest first: `(id, directory, title)`.
pub fn opencode_sessions(home: &Path) -> Vec<(String, String, String)> {
    let script = "import sqlite3,sys,json\nc=sqlite3.connect('file:'+sys.argv[1]+'?mode=ro',uri=True)\nprint(json.dumps(c.execute('select id,directory,title from session where parent_id is null order by time_created').fetchall()))";
    let Ok(out) = std::process::Command::new("python3")
        .args(["-c", script])
        .arg(opencode_db(home))
        .output()
    else {
        return vec![];
    };
    serde_json::from_slice(&out.stdout).unwrap_or_default()
}
