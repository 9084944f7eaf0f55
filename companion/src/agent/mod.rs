//! Agent definitions: how to recognise each agent's process, find its session id, and rebuild the
//! command that resumes it. Adding an agent means one module here.
//!
//! Contract: identity comes from the process itself (status file checked against the process start
//! time, argv, open files), never from "newest transcript in the folder". Anything ambiguous yields
//! `Identity::untargetable(reason)`.

pub mod claude;
pub mod codex;

use crate::platform::{env_get, Platform};
use crate::proctree::{program_of, ProcTable};
pub use park_protocol::Agent;
use std::path::PathBuf;

/// How the session id was found (recorded in rows and ledger entries).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub session_id: Option<String>,
    pub source: &'static str,
    pub transcript: Option<PathBuf>,
    /// Set when there is no exact id: why the row is untargetable.
    pub reason: Option<String>,
    /// Claude status file `status` when one was found and matched the process.
    pub status_file: Option<String>,
    /// The authoritative cwd for the session (status file / records), when known.
    pub cwd: Option<String>,
    /// A Claude background session's short id (its status file's `jobId`).
    pub job: Option<String>,
}

impl Identity {
    pub fn untargetable(reason: impl Into<String>) -> Self {
        Identity {
            session_id: None,
            source: "none",
            transcript: None,
            reason: Some(reason.into()),
            status_file: None,
            cwd: None,
            job: None,
        }
    }
}

/// A running agent found in the process table.
#[derive(Debug, Clone)]
pub struct AgentProc {
    pub agent: Agent,
    /// Topmost process of the agent (what the pane runs; the kill starts here).
    pub root: u32,
    /// The process that holds the agent's state (Claude: the claude process; Codex: the native TUI).
    pub main: u32,
    /// Index in the root's argv of the program token (`codex` after `node`).
    pub prog_index: usize,
    pub argv: Vec<String>,
    pub env: Vec<(String, String)>,
    /// Run by Claude's background supervisor, not in a pane: listed, never bound, never parked.
    pub background: bool,
}

impl AgentProc {
    pub fn home(&self) -> Option<PathBuf> {
        env_get(&self.env, "HOME").map(PathBuf::from)
    }
}

/// Which agent (if any) an argv runs, and the program index.
pub fn classify(argv: &[String]) -> Option<(Agent, usize)> {
    let (prog, idx) = program_of(argv)?;
    let rest = &argv[idx + 1..];
    match prog.as_str() {
        "claude" if claude::interactive(rest) => Some((Agent::Claude, idx)),
        "cli" if argv[idx].contains("/@anthropic-ai/claude-code/") && claude::interactive(rest) => {
            Some((Agent::Claude, idx))
        }
        "codex" if codex::interactive(rest) => Some((Agent::Codex, idx)),
        _ => None,
    }
}

/// Finds every agent root in the table: an agent process whose parent is not the same agent
/// (the Codex node wrapper and its native child are one agent).
pub fn find_agents(table: &ProcTable, platform: &dyn Platform) -> Vec<AgentProc> {
    let mut out = vec![];
    for p in table.all() {
        let Some((agent, idx)) = classify(&p.argv) else {
            continue;
        };
        if let Some(parent) = table.get(p.ppid) {
            if classify(&parent.argv).map(|(a, _)| a) == Some(agent) {
                continue;
            }
        }
        let main = match agent {
            Agent::Claude => p.pid,
            Agent::Codex => codex::native_pid(table, p.pid),
        };
        let env = match platform.environ(p.pid) {
            Some(env) if !env.is_empty() => env,
            // Unreadable or empty: the process is exiting (or is not ours). A process that is
            // already gone is not an agent; one that is still there stays, unidentifiable.
            _ if platform
                .process(p.pid)
                .is_none_or(|q| q.start_ticks != p.start_ticks || q.state == 'Z') =>
            {
                continue
            }
            _ => vec![],
        };
        let args = &p.argv[idx + 1..];
        let background = agent == Agent::Claude && claude::background(args, &env);
        // A spare the supervisor keeps ready runs no session until it is claimed.
        if background
            && claude::config_dir(&env).is_some_and(|c| {
                !c.join("sessions").join(format!("{}.json", p.pid)).is_file()
                    && !claude::spare_claimed(&c, args, p.ppid)
            })
        {
            continue;
        }
        out.push(AgentProc {
            agent,
            root: p.pid,
            main,
            prog_index: idx,
            argv: p.argv.clone(),
            env,
            background,
        });
    }
    out
}

/// A whitelisted launch flag with its value, as recorded in the ledger and replayed on resume.
pub type Flags = Vec<String>;

/// Values replayed into argv must be plain: no control characters, bounded length.
pub fn plain_value(v: &str) -> bool {
    !v.is_empty()
        && v.len() <= 256
        && !v.chars().any(|c| c.is_control() || invisible(c))
        && !v.starts_with('-')
}

/// Format characters that change how text displays without being seen: bidi overrides and
/// isolates, zero-width characters, the BOM. A replayed value must read as what it is.
fn invisible(c: char) -> bool {
    matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{FEFF}')
}

/// Extracts whitelisted flags from argv (after the program token). `bools` take no value, `valued`
/// take one (`--f v` or `--f=v`). Everything else is dropped and listed in the second return value.
pub fn whitelist(
    args: &[String],
    bools: &[&str],
    valued: &[&str],
    skip_valued: &[&str],
    skip_positional: usize,
) -> (Flags, Vec<String>) {
    let mut keep = vec![];
    let mut dropped = vec![];
    let mut positional_skipped = 0;
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        let (name, inline) = match a.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v.to_string())),
            _ => (a, None),
        };
        if bools.contains(&name) && inline.is_none() {
            if !keep.iter().any(|k: &String| k == name) {
                keep.push(name.to_string());
            }
            i += 1;
        } else if valued.contains(&name) || skip_valued.contains(&name) {
            let (val, step) = match inline {
                Some(v) => (Some(v), 1),
                None => (args.get(i + 1).cloned(), 2),
            };
            if valued.contains(&name) {
                match val {
                    Some(v) if plain_value(&v) => {
                        keep.push(name.to_string());
                        keep.push(v);
                    }
                    _ => dropped.push(a.to_string()),
                }
            }
            i += step;
        } else if !a.starts_with('-') && positional_skipped < skip_positional {
            positional_skipped += 1;
            i += 1;
        } else {
            dropped.push(a.to_string());
            i += 1;
        }
    }
    (keep, dropped)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn classify_agents_and_non_agents() {
        assert_eq!(classify(&v(&["claude"])), Some((Agent::Claude, 0)));
        assert_eq!(
            classify(&v(&["node", "/n/.bin/codex"])),
            Some((Agent::Codex, 1))
        );
        assert_eq!(
            classify(&v(&[
                "/x/codex",
                "resume",
                "01a23717-ebd6-78b3-92d8-1c871b3cf6cc"
            ])),
            Some((Agent::Codex, 0))
        );
        assert_eq!(
            classify(&v(&["/x/codex", "app-server", "--listen", "unix://"])),
            None
        );
        assert_eq!(classify(&v(&["/x/codex", "exec", "hi"])), None);
        assert_eq!(classify(&v(&["claude", "-p", "say hi"])), None);
        assert_eq!(classify(&v(&["claude", "mcp", "list"])), None);
        assert_eq!(classify(&v(&["vim", "/tmp/claude"])), None);
    }

    #[test]
    fn whitelist_keeps_known_flags_only() {
        let (k, d) = whitelist(
            &v(&[
                "--dangerously-skip-permissions",
                "--model=opus",
                "--resume",
                "x",
                "--evil",
                "$(rm -rf /)",
                "--permission-mode",
                "plan",
            ]),
            &["--dangerously-skip-permissions"],
            &["--model", "--permission-mode"],
            &["--resume"],
            0,
        );
        assert_eq!(
            k,
            v(&[
                "--dangerously-skip-permissions",
                "--model",
                "opus",
                "--permission-mode",
                "plan"
            ])
        );
        assert_eq!(d, v(&["--evil", "$(rm -rf /)"]));
    }

    #[test]
    fn whitelist_rejects_control_characters_in_values() {
        let (k, d) = whitelist(&v(&["--model", "a\nb"]), &[], &["--model"], &[], 0);
        assert!(k.is_empty());
        assert_eq!(d, v(&["--model"]));
    }
}
