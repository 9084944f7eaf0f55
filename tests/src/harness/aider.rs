//! aider offline recipe: where `scripts/setup` put it (a venv), a seeded HOME, the environment
//! pointing it at the mock's Chat Completions API, and the history files it writes.
//!
//! What the seed settles (verified on 0.86.2): `~/.aider.conf.yml` sets the mock's model (an
//! unknown model otherwise asks "Open documentation url?" at every start: `show-model-warnings:
//! false`), the `diff` edit format (aider proposes a reply's ```` ```bash ```` block as a shell
//! command only in it; the prompt then reads `diff> `), no git (the sandbox's project dirs are
//! no repos: aider would ask to create one), no update check or analytics. aider reaches the mock
//! through `OPENAI_API_BASE`; it also tries to fetch litellm's price list from GitHub once per
//! start and prints the failure (harmless, above its first prompt).

use std::io;
use std::path::{Path, PathBuf};

use crate::harness::agents::{any_version, Agents};
use crate::harness::mock::MockServer;
use crate::harness::util::{path_with_first, Env};

/// The pinned `aider-chat` version.
pub const AIDER_VERSION: &str = "0.86.2";

/// aider as installed by `scripts/setup`.
#[derive(Debug, Clone)]
pub struct Aider {
    /// `<venv>/bin/aider` (a Python script).
    pub bin: PathBuf,
}

impl Aider {
    /// Finds the pinned install; `Err` says what is missing.
    pub fn try_locate() -> Result<Aider, String> {
        let venv = Agents::dir().join("aider");
        let bin = venv.join("bin/aider");
        if !bin.exists() {
            return Err(format!("{} not found", bin.display()));
        }
        let site = std::fs::read_dir(venv.join("lib"))
            .map_err(|e| format!("{}: {e}", venv.display()))?
            .flatten()
            .map(|d| d.path().join("site-packages"))
            .find(|p| p.is_dir())
            .ok_or_else(|| format!("no site-packages in {}", venv.display()))?;
        let have: Vec<String> = std::fs::read_dir(&site)
            .map_err(|e| format!("{}: {e}", site.display()))?
            .flatten()
            .filter_map(|d| {
                let n = d.file_name().to_string_lossy().into_owned();
                n.strip_prefix("aider_chat-")?
                    .strip_suffix(".dist-info")
                    .map(str::to_string)
            })
            .collect();
        match have.first() {
            Some(v) if v == AIDER_VERSION || any_version() => Ok(Aider { bin }),
            v => Err(format!(
                "aider-chat in {} is version {v:?}, the tests pin {AIDER_VERSION}",
                venv.display()
            )),
        }
    }

    /// Finds the pinned install; panics with a hint to run `scripts/setup`.
    pub fn locate() -> Aider {
        crate::harness::agents::or_setup_hint(Self::try_locate(), "aider")
    }

    /// The environment for `aider` against `mock` with HOME=`home`; `path` is the pane's PATH,
    /// which gets the venv's bin dir first.
    pub fn env(&self, mock: &MockServer, home: &Path, path: &str) -> Env {
        let path = path_with_first(self.bin.parent().map(Path::to_path_buf), path);
        [
            ("HOME", home.to_string_lossy().into_owned()),
            ("PATH", path),
            ("OPENAI_API_KEY", "dummy".to_string()),
            ("OPENAI_API_BASE", format!("{}/v1", mock.base_url())),
            ("AIDER_CHECK_UPDATE", "false".to_string()),
            ("AIDER_ANALYTICS", "false".to_string()),
            ("AIDER_SHOW_RELEASE_NOTES", "false".to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }
}

/// Writes `<home>/.aider.conf.yml` (see the module docs).
pub fn seed_aider_home(home: &Path) -> io::Result<()> {
    std::fs::create_dir_all(home)?;
    std::fs::write(
        home.join(".aider.conf.yml"),
        "model: openai/mock-model\nedit-format: diff\nshow-model-warnings: false\ngit: false\ncheck-update: false\nanalytics: false\n",
    )
}

/// The `--chat-history-file` an aider process `pid` was started with, absolute (its cwd joined).
pub fn aider_history(pid: u32) -> Option<PathBuf> {
    let argv: Vec<String> = std::fs::read(format!("/proc/{pid}/cmdline"))
        .ok()?
        .split(|&b| b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let v = argv
        .windows(2)
        .rev()
        .find(|w| w[0] == "--chat-history-file")
        .map(|w| w[1].clone())?;
    let cwd = std::fs::read_link(format!("/proc/{pid}/cwd")).ok()?;
    Some(cwd.join(v))
}

/// The history files in `dir` (`.aider.chat*.md`).
pub fn aider_histories(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(".aider.chat") && n.ends_with(".md"))
        })
        .collect();
    v.sort();
    v
}

/// The session id park records for the history file at `path` (absolute): the first 16 bytes of
/// its SHA-256 as a UUID (`agents/aider`'s `id_of`).
pub fn aider_session_id(path: &Path) -> String {
    use sha2::Digest;
    let d = sha2::Sha256::digest(path.as_os_str().as_encoded_bytes());
    let h: String = d.iter().take(16).map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

/// The history file in `dir` whose session id is `sid`.
pub fn aider_history_of(dir: &Path, sid: &str) -> Option<PathBuf> {
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    aider_histories(&dir)
        .into_iter()
        .find(|p| aider_session_id(p) == sid)
}
