//! Claude Code offline recipe: a seeded HOME, the environment pointing it at the mock, and the
//! on-disk paths it writes (transcripts, live-session files).
//!
//! What the seed skips, in the order Claude would ask (verified on 2.1.197):
//! * `hasCompletedOnboarding`: the onboarding and its connectivity preflight to
//!   api.anthropic.com, which ignores `ANTHROPIC_BASE_URL` and exits offline;
//! * `projects[<dir>].hasTrustDialogAccepted`: the folder-trust dialog (inherited by subdirs);
//! * `customApiKeyResponses.approved` holding the LAST 20 chars of the key: "use this API key?"
//!   (default answer No);
//! * `bypassPermissionsModeAccepted` / `skipDangerousModePermissionPrompt`: the warning shown by
//!   `--dangerously-skip-permissions`. As root that flag also needs `IS_SANDBOX=1`.

use std::io;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::harness::agents::CLAUDE_VERSION;
use crate::harness::mock::MockServer;
use crate::harness::util::Env;

/// The dummy key the tests use; any string works, the mock does not check it.
pub const CLAUDE_API_KEY: &str = "sk-ant-dummy-key-000";

/// Writes `<home>/.claude.json` and `<home>/.claude/settings.json` so an interactive `claude`
/// started in `trusted_dir` (or below) goes straight to the REPL, using `api_key`.
pub fn seed_claude_home(home: &Path, trusted_dir: &Path, api_key: &str) -> io::Result<()> {
    std::fs::create_dir_all(home.join(".claude"))?;
    let tail: String = {
        let chars: Vec<char> = api_key.chars().collect();
        chars[chars.len().saturating_sub(20)..].iter().collect()
    };
    let mut projects = serde_json::Map::new();
    projects.insert(
        trusted_dir.to_string_lossy().into_owned(),
        json!({"hasTrustDialogAccepted": true, "allowedTools": []}),
    );
    let cfg = json!({
        "hasCompletedOnboarding": true,
        "lastOnboardingVersion": CLAUDE_VERSION,
        "theme": "dark",
        "customApiKeyResponses": {"approved": [tail], "rejected": []},
        "projects": projects,
        "bypassPermissionsModeAccepted": true,
    });
    std::fs::write(
        home.join(".claude.json"),
        serde_json::to_string_pretty(&cfg)?,
    )?;
    let settings = json!({"env": {}, "skipDangerousModePermissionPrompt": true});
    std::fs::write(
        home.join(".claude/settings.json"),
        serde_json::to_string_pretty(&settings)?,
    )?;
    Ok(())
}

/// Claude Code's composer is up: the footer under it names the permission mode (`⏵⏵ bypass
/// permissions on`, `⏵⏵ auto mode on`, `manual mode on`, each `(shift+tab to cycle)`), or reads
/// `? for shortcuts` (older versions, and park's fake agent).
pub const CLAUDE_READY: &str =
    r"for shortcuts|shift\+tab to cycle|bypass permissions on|auto mode on|manual mode on";

/// The environment for running `claude` against `mock` with HOME=`home`; `tmpdir` receives
/// Claude's scratch files (`CLAUDE_CODE_TMPDIR`, else it creates `/tmp/claude-<uid>`).
/// `IS_SANDBOX=1` lets `--dangerously-skip-permissions` run as root (CI runs as root).
/// `DISABLE_AUTOUPDATER=1`: 2.1.332's updater spins on the closed network and trips the CPU guard.
/// `Sandbox::claude_env` fills in the sandbox's own dirs.
pub fn claude_env(mock: &MockServer, home: &Path, tmpdir: &Path) -> Env {
    [
        ("HOME", home.to_string_lossy().into_owned()),
        ("ANTHROPIC_API_KEY", CLAUDE_API_KEY.to_string()),
        ("ANTHROPIC_BASE_URL", mock.base_url()),
        ("DISABLE_TELEMETRY", "1".to_string()),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".to_string()),
        ("CLAUDE_CODE_TMPDIR", tmpdir.to_string_lossy().into_owned()),
        ("IS_SANDBOX", "1".to_string()),
        ("DISABLE_AUTOUPDATER", "1".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// Claude's project-directory name for `cwd`: every UTF-16 unit that is not `[A-Za-z0-9]`
/// becomes `-`; past 200 chars it keeps the first 200 and appends `-<base36 |javaHash(cwd)|>`.
pub fn claude_encode_cwd(cwd: &str) -> String {
    let units: Vec<u16> = cwd.encode_utf16().collect();
    let enc: String = units
        .iter()
        .map(|&u| {
            if u < 128 && (u as u8).is_ascii_alphanumeric() {
                u as u8 as char
            } else {
                '-'
            }
        })
        .collect();
    if enc.len() <= 200 {
        return enc;
    }
    let mut h: i32 = 0;
    for &u in &units {
        h = h.wrapping_shl(5).wrapping_sub(h).wrapping_add(u as i32);
    }
    format!("{}-{}", &enc[..200], base36((h as i64).unsigned_abs()))
}

fn base36(mut n: u64) -> String {
    if n == 0 {
        return "0".into();
    }
    let digits = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    while n > 0 {
        out.push(digits[(n % 36) as usize]);
        n /= 36;
    }
    out.reverse();
    String::from_utf8(out).unwrap()
}

/// `<home>/.claude/projects/<enc cwd>/<session_id>.jsonl`: the transcript (created lazily, at
/// the first prompt). `cwd` must be the physical path.
pub fn claude_transcript(home: &Path, cwd: &Path, session_id: &str) -> PathBuf {
    home.join(".claude/projects")
        .join(claude_encode_cwd(&cwd.to_string_lossy()))
        .join(format!("{session_id}.jsonl"))
}

/// Every `<home>/.claude/sessions/<pid>.json` (one per live interactive process) as
/// `(pid, parsed content)`, sorted by pid; unreadable files are skipped.
pub fn claude_session_files(home: &Path) -> Vec<(u32, Value)> {
    super::util::pid_json_files(&home.join(".claude/sessions"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_like_claude() {
        assert_eq!(
            claude_encode_cwd("/tmp/lab/work/proj-a"),
            "-tmp-lab-work-proj-a"
        );
        assert_eq!(
            claude_encode_cwd("/tmp/lab/work/My Proj.v2_ü"),
            "-tmp-lab-work-My-Proj-v2--"
        );
        let long = format!("/tmp/{}", "a".repeat(250));
        let enc = claude_encode_cwd(&long);
        assert!(enc.starts_with("-tmp-aaa"));
        assert!(enc.len() > 201);
        assert_eq!(enc.as_bytes()[200], b'-');
    }

    #[test]
    fn seed_uses_key_tail() {
        let d = tempfile::tempdir().unwrap();
        seed_claude_home(
            d.path(),
            Path::new("/w"),
            "0123456789abcdefghijKLMNOPQRSTUVWXYZ",
        )
        .unwrap();
        let v: Value =
            serde_json::from_str(&std::fs::read_to_string(d.path().join(".claude.json")).unwrap())
                .unwrap();
        assert_eq!(
            v["customApiKeyResponses"]["approved"][0],
            "ghijKLMNOPQRSTUVWXYZ"
        );
        assert_eq!(v["projects"]["/w"]["hasTrustDialogAccepted"], true);
    }
}
