//! Claude Code: identity from `<config>/sessions/<pid>.json` checked against the process start time,
//! then `--resume/--session-id` in argv (argv goes stale after `/clear`, so it is only a fallback).
//! `<config>` is `$CLAUDE_CONFIG_DIR`, else `$HOME/.claude`.

use super::{AgentProc, Flags, Identity};
use crate::platform::{env_get, Platform};
use crate::transcript::{claude_project_dir_name, valid_session_id};
use serde::Deserialize;
use std::path::{Path, PathBuf};

const NON_INTERACTIVE: &[&str] = &["-p", "--print", "-v", "--version", "-h", "--help"];
const SUBCOMMANDS: &[&str] = &[
    "mcp",
    "config",
    "doctor",
    "update",
    "install",
    "setup-token",
    "plugin",
    "migrate-installer",
    "auth",
];

pub const BOOL_FLAGS: &[&str] = &[
    "--dangerously-skip-permissions",
    "--allow-dangerously-skip-permissions",
    "--ide",
];
pub const VALUED_FLAGS: &[&str] = &[
    "--model",
    "--permission-mode",
    "--add-dir",
    "--fallback-model",
    "--effort",
];
/// Flags that carry the session (rebuilt from the id, never replayed).
const SESSION_FLAGS: &[&str] = &["--resume", "-r", "--session-id"];

pub fn interactive(args: &[String]) -> bool {
    if args.iter().any(|a| NON_INTERACTIVE.contains(&a.as_str())) {
        return false;
    }
    !matches!(args.first(), Some(a) if SUBCOMMANDS.contains(&a.as_str()))
}

pub fn config_dir(env: &[(String, String)]) -> Option<PathBuf> {
    if let Some(d) = env_get(env, "CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d));
    }
    env_get(env, "HOME").map(|h| Path::new(h).join(".claude"))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusFile {
    pub pid: Option<u32>,
    pub session_id: Option<String>,
    pub cwd: Option<String>,
    pub proc_start: Option<String>,
    pub status: Option<String>,
    pub waiting_for: Option<String>,
}

pub fn read_status_file(config: &Path, pid: u32) -> Option<StatusFile> {
    let b = std::fs::read(config.join("sessions").join(format!("{pid}.json"))).ok()?;
    serde_json::from_slice(&b).ok()
}

/// The id given on the command line (`--resume <id>`, `--resume=<id>`, `-r <id>`, `--session-id <id>`).
pub fn argv_session_id(args: &[String]) -> Option<String> {
    let mut it = args.iter().peekable();
    while let Some(a) = it.next() {
        if let Some((n, v)) = a.split_once('=') {
            if SESSION_FLAGS.contains(&n) {
                return valid_session_id(v);
            }
        }
        if SESSION_FLAGS.contains(&a.as_str()) {
            return it.peek().and_then(|v| valid_session_id(v));
        }
    }
    None
}

/// Where Claude keeps session `id` of `cwd`. An id that is not a session id (a path, `..`) is
/// reduced to its id characters, so the result always stays inside `config/projects/<dir>/`.
pub fn transcript_path(config: &Path, cwd: &str, id: &str) -> PathBuf {
    let id: String = id
        .chars()
        .filter(|c| {
            c.is_ascii_alphanumeric() || *c == '-' || crate::guards::disabled("transcript-path-id")
        })
        .collect();
    let id = if id.is_empty() { "-".to_string() } else { id };
    config
        .join("projects")
        .join(claude_project_dir_name(cwd))
        .join(format!("{id}.jsonl"))
}

pub fn identify(a: &AgentProc, start_ticks: u64, platform: &dyn Platform) -> Identity {
    let Some(config) = config_dir(&a.env) else {
        return Identity::untargetable(
            "Claude: neither CLAUDE_CONFIG_DIR nor HOME in the process environment",
        );
    };
    let proc_cwd = platform
        .cwd(a.main)
        .map(|p| p.to_string_lossy().into_owned());
    let args = &a.argv[a.prog_index + 1..];
    let (id, source, status, cwd) = match read_status_file(&config, a.main) {
        Some(sf) if sf.proc_start.as_deref().is_some_and(|s| platform.proc_start_matches(start_ticks, s)) && sf.pid.is_none_or(|p| p == a.main) => {
            match sf.session_id.as_deref().and_then(valid_session_id) {
                Some(id) => (id, "status-file", sf.status.clone(), sf.cwd.clone().or(proc_cwd)),
                None => return Identity::untargetable("Claude status file holds no valid session id"),
            }
        }
        Some(_) => match argv_session_id(args) {
            // A status file for a recycled pid: ignore it, it belongs to a dead process.
            Some(id) => (id, "argv", None, proc_cwd),
            None => return Identity::untargetable("Claude status file belongs to an earlier process with this pid, and argv names no session"),
        },
        None => match argv_session_id(args) {
            Some(id) => (id, "argv", None, proc_cwd),
            None => return Identity::untargetable(format!("Claude: no {}/sessions/{}.json and no --resume/--session-id in argv", config.display(), a.main)),
        },
    };
    let Some(cwd) = cwd else {
        return Identity::untargetable("Claude: cwd unreadable");
    };
    let transcript = transcript_path(&config, &cwd, &id);
    let reason = if transcript.is_file() {
        None
    } else {
        Some("no conversation yet (transcript not written): nothing to resume".to_string())
    };
    Identity {
        session_id: Some(id),
        source,
        transcript: Some(transcript),
        reason,
        status_file: status,
        cwd: Some(cwd),
    }
}

pub fn flags(args: &[String]) -> (Flags, Vec<String>) {
    super::whitelist(args, BOOL_FLAGS, VALUED_FLAGS, SESSION_FLAGS, 0)
}

/// argv that resumes `id` (run in the recorded cwd).
pub fn resume_argv(program: &str, id: &str, flags: &[String]) -> Vec<String> {
    let mut v = vec![program.to_string(), "--resume".to_string(), id.to_string()];
    v.extend(flags.iter().cloned());
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn argv_ids_both_flags_and_forms() {
        let id = "35c98558-0920-4e29-b81c-9304ca43fccb";
        assert_eq!(argv_session_id(&v(&["--resume", id])).as_deref(), Some(id));
        assert_eq!(
            argv_session_id(&v(&["--session-id", &id.to_uppercase()])).as_deref(),
            Some(id)
        );
        assert_eq!(
            argv_session_id(&v(&[&format!("--resume={id}")])).as_deref(),
            Some(id)
        );
        assert_eq!(argv_session_id(&v(&["--resume", "../../etc/passwd"])), None);
        assert_eq!(argv_session_id(&v(&["--continue"])), None);
    }

    #[test]
    fn flags_keep_permission_flags_and_drop_session_flags() {
        let (k, _) = flags(&v(&[
            "--resume",
            "35c98558-0920-4e29-b81c-9304ca43fccb",
            "--dangerously-skip-permissions",
            "--model",
            "opus",
        ]));
        assert_eq!(k, v(&["--dangerously-skip-permissions", "--model", "opus"]));
    }

    #[test]
    fn status_file_shape_parses() {
        let s = r#"{"pid":895,"sessionId":"35c98558-0920-4e29-b81c-9304ca43fccb","cwd":"/tmp/lab/demo/claude-proj","startedAt":1796220635705,"procStart":"574729","version":"2.1.197","peerProtocol":1,"kind":"interactive","entrypoint":"cli","name":"claude-proj-56","nameSource":"derived","status":"idle","updatedAt":1796220636343,"statusUpdatedAt":1796220636343}"#;
        let sf: StatusFile = serde_json::from_str(s).unwrap();
        assert_eq!(sf.proc_start.as_deref(), Some("574729"));
        assert_eq!(sf.status.as_deref(), Some("idle"));
    }
}
