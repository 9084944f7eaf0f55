//! OpenCode (and Kilo, its fork) offline recipe: where `scripts/setup` put it, a seeded HOME
//! whose global config names a `mock` provider (`@ai-sdk/openai-compatible`) at the mock's Chat
//! Completions API, the environment that keeps it off the network, and a read of its session
//! database.
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
/// The pinned `@kilocode/cli` version (7.8.1's platform package is not published).
pub const KILO_VERSION: &str = "7.7.7";

/// Which of the two CLIs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OcCli {
    Opencode,
    Kilo,
}

impl OcCli {
    /// The command, agent name and dir name (`opencode`, `kilo`).
    pub fn name(self) -> &'static str {
        match self {
            OcCli::Opencode => "opencode",
            OcCli::Kilo => "kilo",
        }
    }
}

/// OpenCode or Kilo as installed by `scripts/setup`.
#[derive(Debug, Clone)]
pub struct Opencode {
    /// `opencode` (the platform package's native binary, linked into `.bin`) or `kilo` (a node
    /// script that runs its native `.kilo`).
    pub bin: PathBuf,
    pub cli: OcCli,
}

impl Opencode {
    pub fn try_locate_cli(cli: OcCli) -> Result<Opencode, String> {
        let (package, version) = match cli {
            OcCli::Opencode => ("opencode-ai", OPENCODE_VERSION),
            OcCli::Kilo => ("@kilocode/cli", KILO_VERSION),
        };
        let bin =
            crate::harness::agents::find(&Agents::dir(), cli.name(), package, cli.name(), version)?;
        Ok(Opencode { bin, cli })
    }

    /// Finds the pinned install; panics with a hint to run `scripts/setup`.
    pub fn locate_cli(cli: OcCli) -> Opencode {
        Self::try_locate_cli(cli).unwrap_or_else(|e| {
            panic!(
                "{e}\n{} is missing: run `bash scripts/setup` (it installs it under {})",
                cli.name(),
                Agents::dir().display()
            )
        })
    }

    pub fn locate() -> Opencode {
        Self::locate_cli(OcCli::Opencode)
    }

    /// Its session database under `home`.
    pub fn db(&self, home: &Path) -> PathBuf {
        let n = self.cli.name();
        home.join(".local/share").join(n).join(format!("{n}.db"))
    }

    /// The environment for `opencode` with HOME=`home`; `path` is the pane's PATH, which gets
    /// OpenCode's bin dir first. Permissions for shell commands are asked (OpenCode allows them
    /// by default), so a permission prompt can be driven.
    pub fn env(&self, home: &Path, path: &str) -> Env {
        let path = path_with_first(self.bin.parent().map(Path::to_path_buf), path);
        let p = match self.cli {
            OcCli::Opencode => "OPENCODE",
            OcCli::Kilo => "KILO",
        };
        let mut env: Env = vec![
            ("HOME".into(), home.to_string_lossy().into_owned()),
            ("PATH".into(), path),
        ];
        for (k, v) in [
            ("DISABLE_MODELS_FETCH", "1"),
            ("DISABLE_AUTOUPDATE", "1"),
            ("DISABLE_LSP_DOWNLOAD", "1"),
            ("PERMISSION", r#"{"bash":"ask"}"#),
        ] {
            env.push((format!("{p}_{k}"), v.to_string()));
        }
        env
    }
}

/// Writes `<home>/.config/opencode/opencode.json` and `<home>/.config/kilo/kilo.json`: the mock
/// provider and model, no sharing, no update.
pub fn seed_opencode_home(home: &Path, mock: &MockServer) -> io::Result<()> {
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
    for name in ["opencode", "kilo"] {
        let dir = home.join(".config").join(name);
        std::fs::create_dir_all(&dir)?;
        std::fs::write(
            dir.join(format!("{name}.json")),
            serde_json::to_string_pretty(&config)?,
        )?;
    }
    Ok(())
}

/// How many messages database `db` holds for `session_id` (read-only, through `sqlite3` in
/// python3, which every test machine has; `None` when it cannot be read).
pub fn opencode_messages(db: &Path, session_id: &str) -> Option<usize> {
    let script = "import sqlite3,sys\nc=sqlite3.connect('file:'+sys.argv[1]+'?mode=ro',uri=True)\nprint(c.execute('select count(*) from message where session_id=?',(sys.argv[2],)).fetchone()[0])";
    let out = std::process::Command::new("python3")
        .args(["-c", script])
        .arg(db)
        .arg(session_id)
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

/// The main sessions database `db` holds, oldest first: `(id, directory, title)`.
pub fn opencode_sessions(db: &Path) -> Vec<(String, String, String)> {
    let script = "import sqlite3,sys,json\nc=sqlite3.connect('file:'+sys.argv[1]+'?mode=ro',uri=True)\nprint(json.dumps(c.execute('select id,directory,title from session where parent_id is null order by time_created').fetchall()))";
    let Ok(out) = std::process::Command::new("python3")
        .args(["-c", script])
        .arg(db)
        .output()
    else {
        return vec![];
    };
    serde_json::from_slice(&out.stdout).unwrap_or_default()
}
