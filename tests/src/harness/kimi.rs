//! Kimi Code offline recipe: where `scripts/setup` put it (and the node >= 22.19 it needs), a
//! seeded HOME whose `config.toml` names a `mock` provider (`type = "openai"`) at the mock's Chat
//! Completions API, the environment that keeps it off the network, and the files it writes.
//!
//! What the seed settles (measured on 2.1.0): `default_model = "mock"` starts it with no login;
//! `telemetry = false`; `tui.toml` turns off the paste-burst fallback (without it, an Enter
//! arriving right after typed keys is taken for a pasted newline: the prompt stays in the
//! composer), the auto-update, notifications and the rating survey. The folder-trust dialog of a
//! first start in a directory is answered by [`accept_trust`] (Kimi remembers it per directory,
//! exactly, under `~/.kimi-code/workspace-trust/`).

use std::io;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::harness::mock::MockServer;
use crate::harness::util::{path_with_first, Env};

/// The pinned `@moonshot-ai/kimi-code` version.
pub const KIMI_VERSION: &str = "2.1.0";

/// Kimi Code as installed by `scripts/setup`.
#[derive(Debug, Clone)]
pub struct Kimi {
    /// `kimi` (a `#!/usr/bin/env node` script; the process then titles itself `kimi-code`).
    pub bin: PathBuf,
    /// The bin dir of the node >= 22.19 it must run with, when the system node is older.
    pub node_dir: Option<PathBuf>,
}

impl Kimi {
    /// Finds the pinned install. `Err` says what is missing; `scripts/setup` writes
    /// `kimi.skipped` (with its reason) where it cannot install Kimi Code, and then the error
    /// says so.
    pub fn try_locate() -> Result<Kimi, String> {
        let (bin, node_dir) = crate::harness::agents::find_on_node22(
            "kimi",
            "Kimi Code",
            "@moonshot-ai/kimi-code",
            KIMI_VERSION,
        )?;
        Ok(Kimi { bin, node_dir })
    }

    /// Finds the pinned install; panics with a hint to run `scripts/setup`.
    pub fn locate() -> Kimi {
        crate::harness::agents::or_setup_hint(Self::try_locate(), "Kimi Code")
    }

    /// The environment for `kimi` with HOME=`home`; `path` is the pane's PATH, which gets its
    /// node and its bin dir first.
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
            ("KIMI_CODE_NO_AUTO_UPDATE", "1".to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }
}

/// Writes `<home>/.kimi-code/config.toml` and `tui.toml` (see the module docs).
pub fn seed_kimi_home(home: &Path, mock: &MockServer) -> io::Result<()> {
    let dir = home.join(".kimi-code");
    std::fs::create_dir_all(&dir)?;
    std::fs::write(
        dir.join("config.toml"),
        format!(
            "default_model = \"mock\"\ntelemetry = false\n\n[providers.mock]\ntype = \"openai\"\nbase_url = \"{}/v1\"\napi_key = \"dummy\"\n\n[models.mock]\nprovider = \"mock\"\nmodel = \"mock-model\"\nmax_context_size = 128000\n",
            mock.base_url()
        ),
    )?;
    std::fs::write(
        dir.join("tui.toml"),
        "disable_paste_burst = true\ndisable_feedback_survey = true\ncache_expiry_hint = false\n\n[notifications]\nenabled = false\n\n[upgrade]\nauto_install = false\n",
    )
}

/// The folder-trust dialog of a first start in a directory is on `screen`.
pub fn trust_dialog(screen: &str) -> bool {
    screen.contains("Trust this folder?")
}

/// Every session dir under `<home>/.kimi-code/sessions/*/`, with its `state.json`.
pub fn kimi_sessions(home: &Path) -> Vec<(PathBuf, Value)> {
    let mut out = vec![];
    let Ok(buckets) = std::fs::read_dir(home.join(".kimi-code/sessions")) else {
        return out;
    };
    for b in buckets.flatten() {
        let Ok(sessions) = std::fs::read_dir(b.path()) else {
            continue;
        };
        for s in sessions.flatten() {
            let state = std::fs::read(s.path().join("state.json"))
                .ok()
                .and_then(|b| serde_json::from_slice(&b).ok())
                .unwrap_or(Value::Null);
            out.push((s.path(), state));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Session `sid`'s `wire.jsonl` (wherever its bucket is).
pub fn kimi_wire(home: &Path, sid: &str) -> Option<PathBuf> {
    kimi_sessions(home)
        .into_iter()
        .find(|(p, _)| p.file_name().is_some_and(|n| n == sid))
        .map(|(p, _)| p.join("agents/main/wire.jsonl"))
}

/// park's hook record for Kimi process `pid` (`$PARK_HOME/integrations/kimi/<pid>.json`), as
/// Kimi's own hook input made it.
pub fn kimi_hook_record(park_home: &Path, pid: u32) -> Option<Value> {
    let b = std::fs::read(park_home.join(format!("integrations/kimi/{pid}.json"))).ok()?;
    serde_json::from_slice(&b).ok()
}
