//! Qwen Code offline recipe: where `scripts/setup` put it (and the node 22 it needs), a seeded
//! HOME, the environment pointing it at the mock's Chat Completions API, and the files it writes.
//!
//! What the seed settles (verified on 0.24.4): `security.auth.selectedType = "openai"` starts
//! plain `qwen` with the `OPENAI_*` variables and no auth dialog (no `--auth-type` to carry
//! through a resume); the update check, the tips and the random "How is Qwen doing?" survey are
//! off, so screens hold only what the test drives.

use std::io;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::harness::mock::MockServer;
use crate::harness::util::{path_with_first, Env};

/// The pinned `@qwen-code/qwen-code` version.
pub const QWEN_VERSION: &str = "0.24.4";

/// Qwen Code as installed by `scripts/setup`.
#[derive(Debug, Clone)]
pub struct Qwen {
    /// `qwen` (a `#!/usr/bin/env node` script).
    pub bin: PathBuf,
    /// The bin dir of the node >= 22 it must run with, when the system node is older.
    pub node_dir: Option<PathBuf>,
}

impl Qwen {
    /// Finds the pinned install. `Err` says what is missing; `scripts/setup` writes
    /// `qwen.skipped` (with its reason) where it cannot install Qwen, and then the error says so.
    pub fn try_locate() -> Result<Qwen, String> {
        let (bin, node_dir) = crate::harness::agents::find_on_node22(
            "qwen",
            "Qwen Code",
            "@qwen-code/qwen-code",
            QWEN_VERSION,
        )?;
        Ok(Qwen { bin, node_dir })
    }

    /// Finds the pinned install; panics with a hint to run `scripts/setup`.
    pub fn locate() -> Qwen {
        crate::harness::agents::or_setup_hint(Self::try_locate(), "Qwen Code")
    }

    /// The environment for `qwen` against `mock` with HOME=`home`; `path` is the pane's PATH,
    /// which gets Qwen's bin dir and its node first.
    pub fn env(&self, mock: &MockServer, home: &Path, path: &str) -> Env {
        let first = self
            .node_dir
            .iter()
            .cloned()
            .chain(self.bin.parent().map(Path::to_path_buf));
        let path = path_with_first(first, path);
        [
            ("HOME", home.to_string_lossy().into_owned()),
            ("PATH", path),
            ("OPENAI_API_KEY", "dummy".to_string()),
            ("OPENAI_BASE_URL", format!("{}/v1", mock.base_url())),
            ("OPENAI_MODEL", "mock-model".to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }
}

/// Writes `<home>/.qwen/settings.json` (see the module docs).
pub fn seed_qwen_home(home: &Path) -> io::Result<()> {
    let dir = home.join(".qwen");
    std::fs::create_dir_all(&dir)?;
    let settings = json!({
        "security": {"auth": {"selectedType": "openai"}},
        "general": {"enableAutoUpdate": false},
        "ui": {"hideTips": true, "enableUserFeedback": false},
        "privacy": {"usageStatisticsEnabled": false},
    });
    std::fs::write(
        dir.join("settings.json"),
        serde_json::to_string_pretty(&settings)?,
    )
}

/// Qwen's project-directory name for `cwd` (`sanitizeCwd`: every UTF-16 unit outside
/// `[A-Za-z0-9]` becomes `-`).
pub fn qwen_encode_cwd(cwd: &str) -> String {
    cwd.encode_utf16()
        .map(|u| match char::from_u32(u32::from(u)) {
            Some(c) if c.is_ascii_alphanumeric() => c,
            _ => '-',
        })
        .collect()
}

/// `<home>/.qwen/projects/<enc cwd>/chats/<session_id>.jsonl`. `cwd` must be the physical path.
pub fn qwen_transcript(home: &Path, cwd: &Path, session_id: &str) -> PathBuf {
    home.join(".qwen/projects")
        .join(qwen_encode_cwd(&cwd.to_string_lossy()))
        .join("chats")
        .join(format!("{session_id}.jsonl"))
}

/// Every `<home>/.qwen/sessions/<pid>.json` (the live registry) as `(pid, content)`, by pid.
pub fn qwen_registry(home: &Path) -> Vec<(u32, Value)> {
    super::util::pid_json_files(&home.join(".qwen/sessions"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_like_qwen() {
        assert_eq!(qwen_encode_cwd("/tmp/qk/proj"), "-tmp-qk-proj");
        assert_eq!(qwen_encode_cwd("/w/My Proj.v2_ü🦊"), "-w-My-Proj-v2----");
    }
}
