//! pi offline recipe: where `scripts/setup` put it (and the node >= 22.19 it needs), a seeded
//! HOME whose `~/.pi/agent/models.json` adds a `mock` provider speaking Chat Completions to the
//! mock's `/v1`, the environment (`PI_OFFLINE=1`: no startup downloads), and the files it writes.
//!
//! What the seed settles (verified on 1.6.0): `pi --model mock/mock-model` starts straight into
//! its editor with no login; without `fd` and `ripgrep` on PATH it warns once and goes on.

use std::io;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::harness::mock::MockServer;
use crate::harness::util::{path_with_first, Env};

/// The pinned `@earendil-works/pi-coding-agent` version.
pub const PI_VERSION: &str = "1.6.0";

/// pi as installed by `scripts/setup`.
#[derive(Debug, Clone)]
pub struct Pi {
    /// `pi` (a `#!/usr/bin/env node` script).
    pub bin: PathBuf,
    /// The bin dir of the node >= 22.19 it must run with, when the system node is older.
    pub node_dir: Option<PathBuf>,
}

impl Pi {
    /// Finds the pinned install. `Err` says what is missing; `scripts/setup` writes `pi.skipped`
    /// (with its reason) where it cannot give pi a node >= 22.19, and then the error says so.
    pub fn try_locate() -> Result<Pi, String> {
        let (bin, node_dir) = crate::harness::agents::find_on_node22(
            "pi",
            "pi",
            "@earendil-works/pi-coding-agent",
            PI_VERSION,
        )?;
        Ok(Pi { bin, node_dir })
    }

    /// Finds the pinned install; panics with a hint to run `scripts/setup`.
    pub fn locate() -> Pi {
        crate::harness::agents::or_setup_hint(Self::try_locate(), "pi")
    }

    /// The environment for `pi` with HOME=`home`; `path` is the pane's PATH, which gets pi's bin
    /// dir and its node first.
    pub fn env(&self, home: &Path, path: &str) -> Env {
        let first = self
            .node_dir
            .iter()
            .cloned()
            .chain(self.bin.parent().map(Path::to_path_buf));
        let path = path_with_first(first, path);
        [
            ("HOME", home.to_string_lossy().into_owned()),
            ("PATH", path),
            ("PI_OFFLINE", "1".to_string()),
            ("PI_TELEMETRY", "0".to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }
}

/// Writes `<home>/.pi/agent/models.json`: a `mock` provider at the mock's Chat Completions API
/// with one model, `mock-model`.
pub fn seed_pi_home(home: &Path, mock: &MockServer) -> io::Result<()> {
    let dir = home.join(".pi/agent");
    std::fs::create_dir_all(&dir)?;
    let models = json!({"providers": {"mock": {
        "baseUrl": format!("{}/v1", mock.base_url()),
        "api": "openai-completions",
        "apiKey": "dummy",
        "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false},
        "models": [{"id": "mock-model"}],
    }}});
    std::fs::write(
        dir.join("models.json"),
        serde_json::to_string_pretty(&models)?,
    )
}

/// pi's folder name for the sessions of `cwd` (the real path, as pi's `process.cwd()` has it).
pub fn pi_project_dir(cwd: &Path) -> String {
    let cwd = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
    let s = cwd.to_string_lossy();
    let s = s.strip_prefix('/').unwrap_or(&s);
    let safe: String = s
        .chars()
        .map(|c| {
            if matches!(c, '/' | '\\' | ':') {
                '-'
            } else {
                c
            }
        })
        .collect();
    format!("--{safe}--")
}

/// Every session file of `cwd` under `<home>/.pi/agent/sessions/`, with its header's `id`.
pub fn pi_sessions(home: &Path, cwd: &Path) -> Vec<(PathBuf, String)> {
    let dir = home.join(".pi/agent/sessions").join(pi_project_dir(cwd));
    let mut out = vec![];
    let Ok(files) = std::fs::read_dir(&dir) else {
        return out;
    };
    for f in files.flatten() {
        let text = std::fs::read_to_string(f.path()).unwrap_or_default();
        let sid = text
            .lines()
            .next()
            .and_then(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|v| v.get("type").and_then(Value::as_str) == Some("session"))
            .and_then(|v| v.get("id")?.as_str().map(str::to_string))
            .unwrap_or_default();
        out.push((f.path(), sid));
    }
    out.sort();
    out
}

/// The session files of `cwd` whose header is session `sid`.
pub fn pi_session_files(home: &Path, cwd: &Path, sid: &str) -> Vec<PathBuf> {
    pi_sessions(home, cwd)
        .into_iter()
        .filter(|(p, s)| {
            s == sid
                && p.file_name()
                    .is_some_and(|n| n.to_string_lossy().ends_with(&format!("_{sid}.jsonl")))
        })
        .map(|(p, _)| p)
        .collect()
}

/// What park's pi extension recorded for process `pid` under `park_home` (pi hides its argv from
/// other processes: the record is where its launch arguments and session are read back).
pub fn pi_record(park_home: &Path, pid: u32) -> Option<Value> {
    let text =
        std::fs::read_to_string(park_home.join(format!("integrations/pi/{pid}.json"))).ok()?;
    serde_json::from_str(&text).ok()
}
