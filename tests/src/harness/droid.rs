//! Factory Droid offline recipe: where `scripts/setup` put it, a seeded HOME, the environment that
//! runs it against the mock's Chat Completions API, and the files it writes.
//!
//! What the seed settles (verified on 0.225.2): `FACTORY_AIRGAP_ENABLED=true` with any
//! `FACTORY_API_KEY` runs the TUI with no login (without it a dummy key is rejected); a
//! `customModels` entry in `~/.factory/settings.json` (`generic-chat-completion-api`) points it at
//! the mock; `trustedFolders` holding the sandbox's work dir (a parent counts) skips the
//! folder-trust dialog; `logoAnimation: off` draws the logo at once;
//! `FACTORY_DROID_AUTO_UPDATE_ENABLED=false` never downloads a newer CLI. `scripts/setup`
//! installs the platform package `@factory/cli-linux-x64` itself (the `@factory/cli` wrapper's
//! postinstall does not run under npm 11); its `bin/droid` is the binary.

use std::io;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::harness::agents::Agents;
use crate::harness::mock::MockServer;
use crate::harness::util::{path_with_first, Env};

/// The pinned `@factory/cli-linux-x64` version.
pub const DROID_VERSION: &str = "0.225.2";
const PACKAGE: &str = "@factory/cli-linux-x64";

/// Factory Droid as installed by `scripts/setup`.
#[derive(Debug, Clone)]
pub struct Droid {
    /// `droid` (the native binary of the platform package).
    pub bin: PathBuf,
}

impl Droid {
    /// Finds the pinned install; `Err` says what is missing.
    pub fn try_locate() -> Result<Droid, String> {
        // `scripts/setup` could not install it here (not x86_64 Linux): it says why.
        if let Ok(why) = std::fs::read_to_string(Agents::dir().join("droid.skipped")) {
            return Err(format!("skipped: {}", why.trim()));
        }
        let pkg = Agents::dir().join("droid/node_modules").join(PACKAGE);
        let bin = pkg.join("bin/droid");
        if !bin.exists() {
            return Err(format!("{} not found", bin.display()));
        }
        let manifest = pkg.join("package.json");
        let v: Value = std::fs::read_to_string(&manifest)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .ok_or_else(|| format!("cannot read {}", manifest.display()))?;
        match v.get("version").and_then(Value::as_str) {
            Some(have) if have == DROID_VERSION => Ok(Droid { bin }),
            Some(_) if crate::harness::agents::any_version() => Ok(Droid { bin }),
            have => Err(format!(
                "{PACKAGE} in {} is version {have:?}, the tests pin {DROID_VERSION}",
                pkg.display()
            )),
        }
    }

    /// Finds the pinned install; panics with a hint to run `scripts/setup`.
    pub fn locate() -> Droid {
        crate::harness::agents::or_setup_hint(Self::try_locate(), "Factory Droid")
    }

    /// The environment for `droid` with HOME=`home`; `path` is the pane's PATH, which gets
    /// Droid's bin dir first.
    pub fn env(&self, home: &Path, path: &str) -> Env {
        let path = path_with_first(self.bin.parent().map(Path::to_path_buf), path);
        [
            ("HOME", home.to_string_lossy().into_owned()),
            ("PATH", path),
            ("FACTORY_API_KEY", "dummy".to_string()),
            ("FACTORY_AIRGAP_ENABLED", "true".to_string()),
            ("FACTORY_DROID_AUTO_UPDATE_ENABLED", "false".to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }
}

/// Writes `<home>/.factory/settings.json`: the mock as its one model, `trusted` trusted.
pub fn seed_droid_home(home: &Path, trusted: &Path, mock: &MockServer) -> io::Result<()> {
    let dir = home.join(".factory");
    std::fs::create_dir_all(&dir)?;
    let settings = json!({
        "customModels": [{
            "model": "mock-model",
            "displayName": "Mock",
            "baseUrl": format!("{}/v1", mock.base_url()),
            "apiKey": "dummy",
            "provider": "generic-chat-completion-api",
            "maxOutputTokens": 4096
        }],
        "logoAnimation": "off",
        "trustedFolders": { trusted.to_string_lossy(): {"trustedAt": "2026-01-01T00:00:00.000Z"} }
    });
    std::fs::write(
        dir.join("settings.json"),
        serde_json::to_string_pretty(&settings)?,
    )
}

/// Every session file under `<home>/.factory/sessions/*/` with its `session_start` id.
pub fn droid_sessions(home: &Path) -> Vec<(PathBuf, String)> {
    let mut out = vec![];
    let Ok(projects) = std::fs::read_dir(home.join(".factory/sessions")) else {
        return out;
    };
    for p in projects.flatten() {
        let Ok(files) = std::fs::read_dir(p.path()) else {
            continue;
        };
        for f in files.flatten() {
            let path = f.path();
            if path.extension().is_none_or(|e| e != "jsonl") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            let sid = text
                .lines()
                .next()
                .and_then(|l| serde_json::from_str::<Value>(l).ok())
                .and_then(|v| v.get("id")?.as_str().map(str::to_string))
                .unwrap_or_default();
            out.push((path, sid));
        }
    }
    out.sort();
    out
}

/// Session `sid`'s file, when there is one.
pub fn droid_session(home: &Path, sid: &str) -> Option<PathBuf> {
    droid_sessions(home)
        .into_iter()
        .find(|(_, s)| s == sid)
        .map(|(p, _)| p)
}

/// The `cwd` session `sid`'s first line records.
pub fn droid_session_cwd(home: &Path, sid: &str) -> Option<String> {
    let text = std::fs::read_to_string(droid_session(home, sid)?).ok()?;
    let v: Value = serde_json::from_str(text.lines().next()?).ok()?;
    v.get("cwd")?.as_str().map(str::to_string)
}
