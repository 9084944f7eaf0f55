//! Codex CLI offline recipe: a `config.toml` with a custom model provider pointing at the mock
//! (`wire_api = "responses"`; the built-in provider ignores `OPENAI_BASE_URL`), and the paths
//! Codex writes (rollouts, the app-server daemon's pid files).
//!
//! Options go in config.toml, never `-c` on the command line: any override makes the TUI skip
//! the shared app-server daemon and run an embedded server instead.

use std::io;
use std::path::{Path, PathBuf};

use crate::harness::mock::MockServer;
use crate::harness::util::Env;

/// The env var named by the mock provider's `env_key`; Codex only needs it to be non-empty.
pub const CODEX_API_KEY_ENV: &str = "MOCK_OPENAI_KEY";
/// Its value.
pub const CODEX_API_KEY: &str = "sk-mock-000";

/// Optional parts of the seeded `config.toml`.
#[derive(Debug, Clone, Default)]
pub struct CodexSeed {
    /// `[tui] terminal_title = [...]` (the pane title items), e.g. `thread-title`, `project`,
    /// `thread-id`.
    pub terminal_title: Option<Vec<String>>,
    /// `[tui] status_line = [...]` (the footer items), e.g. `model-with-reasoning`,
    /// `current-dir`, `thread-id`.
    pub status_line: Option<Vec<String>>,
}

impl CodexSeed {
    /// Puts the thread id in the pane title (`["thread-title", "project", "thread-id"]`): Codex
    /// then shows `<title> | <project> | <first 29 chars of the id>...`, which maps a daemon-mode
    /// TUI to its thread exactly.
    pub fn thread_id_title(mut self) -> Self {
        self.terminal_title = Some(
            ["thread-title", "project", "thread-id"]
                .map(String::from)
                .to_vec(),
        );
        self
    }

    /// Puts the full thread id in the footer too (`["model-with-reasoning", "current-dir",
    /// "thread-id"]`).
    pub fn thread_id_status_line(mut self) -> Self {
        self.status_line = Some(
            ["model-with-reasoning", "current-dir", "thread-id"]
                .map(String::from)
                .to_vec(),
        );
        self
    }
}

/// A TOML basic string.
fn toml_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn toml_list(items: &[String]) -> String {
    let parts: Vec<String> = items.iter().map(|s| toml_str(s)).collect();
    format!("[{}]", parts.join(", "))
}

/// Writes `<home>/.codex/config.toml`: model `mock-model` from provider `mock` at
/// `<mock>/v1`, no update check, `trusted_dir` trusted, plus the `[tui]` items of `opts`; and
/// links the app-server daemon's package in (see [`link_daemon_package`]).
pub fn seed_codex_home(
    home: &Path,
    trusted_dir: &Path,
    mock: &MockServer,
    opts: &CodexSeed,
) -> io::Result<()> {
    let dir = home.join(".codex");
    std::fs::create_dir_all(&dir)?;
    let mut t = String::new();
    t.push_str("model = \"mock-model\"\n");
    t.push_str("model_provider = \"mock\"\n");
    t.push_str("check_for_update_on_startup = false\n\n");
    t.push_str("[model_providers.mock]\n");
    t.push_str("name = \"Mock OpenAI\"\n");
    t.push_str(&format!(
        "base_url = {}\n",
        toml_str(&format!("{}/v1", mock.base_url()))
    ));
    t.push_str("wire_api = \"responses\"\n");
    t.push_str(&format!("env_key = {}\n", toml_str(CODEX_API_KEY_ENV)));
    t.push_str("requires_openai_auth = false\n\n");
    t.push_str(&format!(
        "[projects.{}]\ntrust_level = \"trusted\"\n",
        toml_str(&trusted_dir.to_string_lossy())
    ));
    if opts.terminal_title.is_some() || opts.status_line.is_some() {
        t.push_str("\n[tui]\n");
        if let Some(items) = &opts.terminal_title {
            t.push_str(&format!("terminal_title = {}\n", toml_list(items)));
        }
        if let Some(items) = &opts.status_line {
            t.push_str(&format!("status_line = {}\n", toml_list(items)));
        }
    }
    std::fs::write(dir.join("config.toml"), t)?;
    link_daemon_package(&dir);
    Ok(())
}

/// The first daemon-mode `codex` start under a CODEX_HOME copies its whole native package
/// (424 MB for 0.171) into `packages/app-server-daemon/releases/<version>-<target>/`; a few
/// concurrent sandboxes then fill a small CI disk (seen: "No space left on device" from the
/// daemon). Codex reuses a release directory that is already there, so this pre-creates it as
/// hard links to the npm install's `vendor/<target>/` (same inodes, no bytes copied; measured:
/// the daemon starts from it and the link count stays 2). Best effort: on another filesystem,
/// or with no package found, Codex copies as before.
pub fn link_daemon_package(codex_home: &Path) {
    let Ok(agents) = crate::harness::agents::Agents::try_locate() else {
        return;
    };
    // <prefix>/node_modules/.bin/codex → <prefix>/node_modules/@openai/codex-*/vendor/<target>/
    let Some(modules) = agents.codex.parent().and_then(Path::parent) else {
        return;
    };
    let Ok(scoped) = std::fs::read_dir(modules.join("@openai")) else {
        return;
    };
    for pkg in scoped.flatten() {
        let Ok(targets) = std::fs::read_dir(pkg.path().join("vendor")) else {
            continue;
        };
        for t in targets.flatten() {
            let Some((version, target)) = package_id(&t.path().join("codex-package.json")) else {
                continue;
            };
            let releases = codex_home.join("packages/app-server-daemon/releases");
            let dest = releases.join(format!("{version}-{target}"));
            if dest.exists() || std::fs::create_dir_all(&releases).is_err() {
                return;
            }
            // Link into a staging name, then rename: Codex never sees a half-made release.
            let staging = releases.join(format!(".park-seed-{}", std::process::id()));
            if link_tree(&t.path(), &staging).is_ok() && std::fs::rename(&staging, &dest).is_ok() {
                return;
            }
            let _ = std::fs::remove_dir_all(&staging);
            return;
        }
    }
}

/// `(version, target)` from a Codex `codex-package.json`.
fn package_id(manifest: &Path) -> Option<(String, String)> {
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(manifest).ok()?).ok()?;
    let field = |k: &str| v.get(k)?.as_str().map(str::to_string);
    Some((field("version")?, field("target")?))
}

/// `cp -al from to`: directories made, files hard-linked, symlinks re-made.
fn link_tree(from: &Path, to: &Path) -> io::Result<()> {
    std::fs::create_dir(to)?;
    for e in std::fs::read_dir(from)? {
        let e = e?;
        let (src, dst) = (e.path(), to.join(e.file_name()));
        let kind = e.file_type()?;
        if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&src)?, &dst)?;
        } else if kind.is_dir() {
            link_tree(&src, &dst)?;
        } else {
            std::fs::hard_link(&src, &dst)?;
        }
    }
    Ok(())
}

/// The environment for running `codex` with HOME=`home` against the seeded provider.
/// `Sandbox::codex_env` fills in the sandbox HOME.
pub fn codex_env(home: &Path) -> Env {
    vec![
        ("HOME".to_string(), home.to_string_lossy().into_owned()),
        (CODEX_API_KEY_ENV.to_string(), CODEX_API_KEY.to_string()),
    ]
}

/// Every rollout file under `<home>/.codex/sessions/YYYY/MM/DD/`, sorted by path (so by time).
pub fn codex_rollouts(home: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, depth: u32, out: &mut Vec<PathBuf>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() && depth < 4 {
                walk(&p, depth + 1, out);
            } else if p
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("rollout-") && n.ends_with(".jsonl"))
            {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(&home.join(".codex/sessions"), 0, &mut out);
    out.sort();
    out
}

/// The pids recorded by Codex's app-server daemon (`daemon.pid`, `daemon-updater.pid`; each a
/// JSON object `{"pid": N, ...}`) under `<home>/.codex/app-server-daemon/`, alive or not.
pub fn codex_daemon_pids(home: &Path) -> Vec<u32> {
    ["daemon.pid", "daemon-updater.pid"]
        .iter()
        .filter_map(|f| {
            let text =
                std::fs::read_to_string(home.join(".codex/app-server-daemon").join(f)).ok()?;
            let v: serde_json::Value = serde_json::from_str(&text).ok()?;
            v.get("pid")?.as_u64().map(|p| p as u32)
        })
        .collect()
}
