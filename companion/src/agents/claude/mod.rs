//! Claude Code: identity from `<config>/sessions/<pid>.json` checked against the process start time,
//! then `--resume/--session-id` in argv (argv goes stale after `/clear`, so it is only a fallback).
//! `<config>` is `$CLAUDE_CONFIG_DIR`, else `$HOME/.claude`.

pub(crate) mod limit;
pub(crate) mod render;
pub mod screen;
pub mod transcript;

use super::release::Release;
use super::spec::{Cleanup, ConfigDir, Identify, Main, Resume, Spec, Supervisor, Whitelist};
use super::{Agent, AgentProc, Identity};
use crate::adapters::platform::{env_get, Platform};
use crate::agents::transcript::valid_session_id;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use transcript::project_dir_name;

const NON_INTERACTIVE: &[&str] = &["-p", "--print", "-v", "--version", "-h", "--help"];
const SUBCOMMANDS: &[&str] = &[
    "mcp",
    "config",
    "doctor",
    "update",
    "upgrade",
    "install",
    "setup-token",
    "plugin",
    "plugins",
    "migrate-installer",
    "auth",
    "auto-mode",
    "gateway",
    "project",
    "ultrareview",
    // Agent View (2.1.139+): the supervisor (`daemon run …`) and the clients that talk to it
    // (`agents`, `attach <short>`, …) run no session of their own; the session runs in a
    // background worker, which is found by itself.
    "daemon",
    "agents",
    "attach",
    "logs",
    "stop",
    "respawn",
];

/// Flags of processes that run no session: the pty host between the supervisor and a
/// background worker, and `--bg`/`--background`, which hands a new session to the supervisor
/// and returns at once.
const NO_SESSION_FLAGS: &[&str] = &["--bg-pty-host", "--bg", "--background"];

/// A background worker not yet given a session: `--bg-spare <claim socket>` (2.1.197), `bg-spare
/// --bg-spare <claim socket>` (2.1.332).
const SPARE_FLAG: &str = "--bg-spare";

/// Whether argv (after the program) is a spare worker's, in either version's form. A claimed
/// spare keeps this argv while it runs the session it was given.
fn is_spare(args: &[String]) -> bool {
    args.iter().take(2).any(|a| a == SPARE_FLAG)
}

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
    if args
        .iter()
        .any(|a| NON_INTERACTIVE.contains(&a.as_str()) || NO_SESSION_FLAGS.contains(&a.as_str()))
    {
        return false;
    }
    !matches!(args.first(), Some(a) if SUBCOMMANDS.contains(&a.as_str()))
}

/// A session run by Claude's background supervisor (Agent View): a worker started for a
/// session (its environment says `CLAUDE_CODE_SESSION_KIND=bg`) or a pre-started spare.
pub fn background(args: &[String], env: &[(String, String)]) -> bool {
    is_spare(args) || env_get(env, "CLAUDE_CODE_SESSION_KIND") == Some("bg")
}

/// Whether a spare worker (`--bg-spare`, no session in argv) has been claimed for a session:
/// its pty host (`host_pid`, the worker's parent) is a worker in the supervisor's
/// `daemon/roster.json`. An unclaimed spare runs no session at all.
pub(crate) fn spare_claimed(config: &Path, args: &[String], host_pid: u32) -> bool {
    if !is_spare(args) {
        return true;
    }
    let Ok(b) = std::fs::read(config.join("daemon").join("roster.json")) else {
        return false;
    };
    let Ok(v) = serde_json::from_slice::<serde_json::Value>(&b) else {
        // Unreadable roster: cannot tell, so keep it (an unidentified Claude is the safe side).
        return true;
    };
    v.get("workers")
        .and_then(|w| w.as_object())
        .is_some_and(|w| {
            w.values()
                .any(|x| x.get("pid").and_then(|p| p.as_u64()) == Some(u64::from(host_pid)))
        })
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
    /// `interactive` or `bg` (a background worker).
    pub kind: Option<String>,
    /// A background session's short id (`claude attach <jobId>`).
    pub job_id: Option<String>,
    /// The session's name (from `/rename`, its first prompt or its directory): 2.1.332 keeps
    /// the terminal title at `✳ Claude Code`, so this is what tells its panes apart.
    pub name: Option<String>,
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
            c.is_ascii_alphanumeric()
                || *c == '-'
                || crate::support::fault::disabled("transcript-path-id")
        })
        .collect();
    let id = if id.is_empty() { "-".to_string() } else { id };
    config
        .join("projects")
        .join(project_dir_name(cwd))
        .join(format!("{id}.jsonl"))
}

pub fn identify(a: &AgentProc, start_ticks: u64, platform: &dyn Platform) -> Identity {
    let Some(config) = SPEC.config.dir(&a.env) else {
        return Identity::untargetable(
            "Claude: neither CLAUDE_CONFIG_DIR nor HOME in the process environment",
        );
    };
    let proc_cwd = platform
        .cwd(a.main)
        .map(|p| p.to_string_lossy().into_owned());
    let args = &a.argv[a.prog_index + 1..];
    let mut job = None;
    let mut name = None;
    let (id, source, status, cwd) = match read_status_file(&config, a.main) {
        Some(sf) if sf.proc_start.as_deref().is_some_and(|s| platform.proc_start_matches(start_ticks, s)) && sf.pid.is_none_or(|p| p == a.main) => {
            if sf.kind.as_deref() == Some("bg") {
                job = sf.job_id.as_deref().filter(|j| plain_job(j)).map(str::to_string);
            }
            name = sf.name.as_deref().map(str::trim).filter(|n| !n.is_empty()).map(str::to_string);
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
        job,
        name,
    }
}

/// `✳ Claude Code` (idle) and `⠂ Claude Code` (busy): the title Claude sets when it has no topic
/// for the terminal (always, from 2.1.332 on).
pub fn generic_title(title: &str) -> bool {
    title
        .trim_start_matches(|c: char| !c.is_alphanumeric())
        .trim_end()
        == "Claude Code"
}

/// Why park leaves a background session alone, and how to reach it.
pub fn background_note(job: Option<&str>) -> String {
    match job {
        Some(j) => format!("a Claude background session, run by Claude's supervisor in no pane: park never parks it (`claude attach {j}` opens it, `claude stop {j}` stops it)"),
        None => "a Claude background session, run by Claude's supervisor in no pane: park never parks it (`claude agents` lists it)".into(),
    }
}

/// A job id fit to show and to type back (`claude attach <job>`): short, hex-ish, nothing else.
pub(crate) fn plain_job(j: &str) -> bool {
    !j.is_empty() && j.len() <= 16 && j.chars().all(|c| c.is_ascii_alphanumeric())
}

/// Claude Code deletes session files untouched for this long unless `cleanupPeriodDays` says
/// otherwise.
pub(crate) const DEFAULT_CLEANUP_DAYS: u64 = 30;

/// `cleanupPeriodDays` from the settings of config dir `dir`, as written (may be 0 or negative).
pub(crate) fn cleanup_setting(dir: &Path) -> Option<i64> {
    std::fs::read(dir.join("settings.json"))
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .and_then(|v| {
            let d = v.get("cleanupPeriodDays")?;
            d.as_i64().or_else(|| d.as_f64().map(|f| f.floor() as i64))
        })
}

/// Every Claude transcript under `cfg/projects/<dir>/<id>.jsonl` (no symlinks followed).
pub(crate) fn all_transcripts(cfg: &Path) -> Vec<(String, PathBuf)> {
    crate::agents::transcript::sessions_by_project(&cfg.join("projects"), "")
}

/// Claude Code behind the [`super::AgentKind`] dispatch.
pub struct Claude;

/// Claude Code, as data.
pub static SPEC: Spec = Spec {
    agent: Agent::Claude,
    name: "Claude",
    // Its npm package and the versions park's e2e contract passed on (move with the pin in
    // `scripts/setup`).
    release: Release {
        name: "Claude Code",
        packages: &["@anthropic-ai/claude-code"],
        tested: ("2.1.332", "2.1.332"),
    },
    programs: &["claude"],
    // The npm package's entry point runs as `node …/@anthropic-ai/claude-code/cli.js`.
    entry_script: Some("/@anthropic-ai/claude-code/"),
    interactive,
    main: Main::Root,
    config: ConfigDir {
        // `~/.claude.json` sits beside `~/.claude` by default, but inside a CLAUDE_CONFIG_DIR.
        default_var: "HOME",
        ..ConfigDir::var_or_home("CLAUDE_CONFIG_DIR", ".claude")
    },
    flags: Whitelist::of(BOOL_FLAGS, VALUED_FLAGS, SESSION_FLAGS),
    resume: Resume::Flag("--resume"),
    identify: Identify::Files(identify),
    transcripts: all_transcripts,
    transcript_at: Some(transcript_path),
    transcript_needs_cwd: true,
    parse_transcript: transcript::parse,
    read_transcript_file: Some(transcript::read_file),
    markdown: render::markdown,
    message_of: render::message_of,
    read_screen: screen::read,
    screen_escapes: false,
    limit_screen: Some(limit::read),
    generic_title: Some(generic_title),
    // Its status file's `status`: busy, waiting, shell, idle.
    has_status_file: true,
    open_turn_is_busy: false,
    // Session files untouched for `cleanupPeriodDays` (default 30).
    cleanup: Some(Cleanup {
        default_days: DEFAULT_CLEANUP_DAYS,
        setting: cleanup_setting,
    }),
    deletes_transcripts: true,
    prompt_history: Some("history.jsonl"),
    // Set by 2.1.197 for every tool command.
    caller_session_vars: &["CLAUDE_CODE_SESSION_ID"],
    // Its status file names the session and the process start: the start is confirmed.
    settle: std::time::Duration::ZERO,
    // Its identity comes from its status file; a process without one could be running any
    // session of its config dir.
    unidentified_blocks_unpark: true,
    shared_process: None,
    supervisor: Some(Supervisor {
        runs: background,
        unclaimed_spare: |args, env, pid, ppid| {
            SPEC.config.dir(env).is_some_and(|c| {
                !c.join("sessions").join(format!("{pid}.json")).is_file()
                    && !spare_claimed(&c, args, ppid)
            })
        },
        note: background_note,
        attach_command: |job| plain_job(job).then(|| format!("claude attach {job}")),
    }),
    integration: None,
    first_prompt: true,
    process_title: None,
};

impl super::AgentKind for Claude {
    fn spec(&self) -> &'static Spec {
        &SPEC
    }
    fn runs_session(
        &self,
        e: &crate::model::entry::Entry,
        pid: u32,
        start: u64,
        platform: &dyn Platform,
    ) -> bool {
        // Its status file names the session and the process start: the start is confirmed.
        e.config_dir
            .as_deref()
            .and_then(|d| read_status_file(Path::new(d), pid))
            .is_some_and(|sf| {
                (e.fresh_from.is_some()
                    || sf
                        .session_id
                        .as_deref()
                        .is_some_and(|s| s.eq_ignore_ascii_case(&e.session_id)))
                    && sf
                        .proc_start
                        .as_deref()
                        .is_some_and(|s| platform.proc_start_matches(start, s))
            })
    }
    /// Claude writes `sessions/<pid>.json` as it starts, without a `status`; the `status` comes
    /// once its REPL is up and reads keys (2.1.197: ~0.3 s later, when the screen is drawn).
    /// Until then the pane may still show the previous Claude's last frame, empty composer
    /// included.
    fn ready_for_input(&self, ident: &Identity) -> Option<bool> {
        Some(ident.source == "status-file" && ident.status_file.is_some())
    }
    fn draft_shows(&self, draft: &str, text: &str) -> bool {
        super::same_text(draft, text) || pasted_placeholder(draft.trim())
    }
}

/// The composer's stand-in for a long text typed in one burst: `[Pasted text #1]`, or
/// `[Pasted text #2 +12 lines]`.
pub(crate) fn pasted_placeholder(draft: &str) -> bool {
    let Some(rest) = draft
        .strip_prefix("[Pasted text #")
        .and_then(|r| r.strip_suffix(']'))
    else {
        return false;
    };
    let (n, lines) = rest.split_once(' ').unwrap_or((rest, ""));
    let digits = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    digits(n)
        && (lines.is_empty()
            || lines
                .strip_prefix('+')
                .and_then(|l| l.strip_suffix(" lines"))
                .is_some_and(digits))
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
        let (k, _) = SPEC.flags(&v(&[
            "--resume",
            "35c98558-0920-4e29-b81c-9304ca43fccb",
            "--dangerously-skip-permissions",
            "--model",
            "opus",
        ]));
        assert_eq!(k, v(&["--dangerously-skip-permissions", "--model", "opus"]));
    }

    /// Issue 19 (0b): Agent View's supervisor, pty hosts and clients run no session (they were
    /// counted as unidentified Claudes and blocked every unpark); workers and claimed spares do.
    /// argvs as 2.1.197 runs them (after the program token).
    #[test]
    fn agent_view_processes_that_run_no_session_are_not_agents() {
        let sid = "3d2e4341-cac4-4da5-80b7-b144e6fc0f7f";
        for args in [
            v(&[
                "daemon",
                "run",
                "--origin",
                "transient",
                "--spawned-by",
                "{\"label\":\"claude --bg\"}",
            ]),
            v(&[
                "--bg-pty-host",
                "/tmp/cc-daemon-0/7/pty/3d2e4341.sock",
                "160",
                "45",
                "--",
                "/x/claude.exe",
                "--session-id",
                sid,
                "task",
            ]),
            v(&[
                "--bg-pty-host",
                "/tmp/cc-daemon-0/7/spare/5a.pty.sock",
                "200",
                "50",
                "--",
                "/x/claude.exe",
                "--bg-spare",
                "/tmp/s.claim.sock",
            ]),
            v(&["agents"]),
            v(&["agents", "--json"]),
            v(&["attach", "3d2e4341"]),
            v(&["logs", "3d2e4341"]),
            v(&["stop", "3d2e4341"]),
            v(&["respawn", "3d2e4341"]),
            v(&["--bg", "first bg task"]),
            v(&["--background", "x"]),
        ] {
            assert!(!interactive(&args), "{args:?}");
        }
        for args in [
            v(&["--session-id", sid, "first bg task [slow 5]"]),
            v(&["--bg-spare", "/tmp/cc-daemon-0/7/spare/5a.claim.sock"]),
            v(&["--resume", sid]),
            v(&[]),
        ] {
            assert!(interactive(&args), "{args:?}");
        }
        let bg_env = vec![("CLAUDE_CODE_SESSION_KIND".to_string(), "bg".to_string())];
        assert!(background(&v(&["--session-id", sid, "t"]), &bg_env));
        assert!(background(&v(&["--bg-spare", "/s"]), &[]));
        // 2.1.332 names the spare's role first (`claude bg-spare --bg-spare <sock>`): without
        // this a claimed spare read as an interactive Claude in no pane and its background
        // session was never listed (e2e_claude_bg on the 2.1.332 pin).
        assert!(background(&v(&["bg-spare", "--bg-spare", "/s"]), &[]));
        assert!(!background(&v(&["--session-id", sid]), &[]));
    }

    #[test]
    fn a_spare_is_claimed_only_when_its_host_is_a_roster_worker() {
        let d = tempfile::tempdir().unwrap();
        let spare = v(&["--bg-spare", "/tmp/s.claim.sock"]);
        assert!(
            !spare_claimed(d.path(), &spare, 5776),
            "no roster: unclaimed"
        );
        std::fs::create_dir_all(d.path().join("daemon")).unwrap();
        std::fs::write(
            d.path().join("daemon/roster.json"),
            r#"{"proto":1,"supervisorPid":5729,"workers":{"3d2e4341":{"pid":5774,"sessionId":"3d2e4341-cac4-4da5-80b7-b144e6fc0f7f"}}}"#,
        )
        .unwrap();
        assert!(!spare_claimed(d.path(), &spare, 5776));
        assert!(spare_claimed(d.path(), &spare, 5774));
        let spare_332 = v(&["bg-spare", "--bg-spare", "/tmp/s.claim.sock"]);
        assert!(!spare_claimed(d.path(), &spare_332, 5776));
        assert!(spare_claimed(d.path(), &spare_332, 5774));
        std::fs::write(d.path().join("daemon/roster.json"), "{not json").unwrap();
        assert!(spare_claimed(d.path(), &spare, 5776), "unreadable: keep it");
        assert!(spare_claimed(d.path(), &v(&["--session-id", "x"]), 1));
    }

    #[test]
    fn background_status_file_names_its_job() {
        let s = r#"{"pid":5898,"sessionId":"3d2e4341-cac4-4da5-80b7-b144e6fc0f7f","cwd":"/w","startedAt":1796420453718,"procStart":"64116","version":"2.1.197","peerProtocol":1,"kind":"bg","entrypoint":"cli","name":"hello from the mock anthropic server (c…","jobId":"3d2e4341","status":"idle"}"#;
        let sf: StatusFile = serde_json::from_str(s).unwrap();
        assert_eq!(sf.kind.as_deref(), Some("bg"));
        assert_eq!(sf.job_id.as_deref(), Some("3d2e4341"));
        assert!(plain_job("3d2e4341"));
        assert!(!plain_job("3d2e; rm -rf /") && !plain_job("") && !plain_job(&"a".repeat(17)));
    }

    /// Claude 2.1.197 as it starts: the status file names the session at once, and gets its
    /// `status` only when the REPL reads keys (a wake note typed before that was lost).
    #[test]
    fn ready_for_input_only_once_the_status_file_has_a_status() {
        let id = |source, status: Option<&str>| Identity {
            session_id: Some("35c98558-0920-4e29-b81c-9304ca43fccb".into()),
            source,
            transcript: None,
            reason: None,
            status_file: status.map(str::to_string),
            cwd: Some("/w".into()),
            job: None,
            name: None,
        };
        use crate::agents::AgentKind;
        let ready = |i: &Identity| Claude.ready_for_input(i);
        assert_eq!(
            ready(&id("status-file", None)),
            Some(false),
            "still starting"
        );
        assert_eq!(ready(&id("status-file", Some("idle"))), Some(true));
        assert_eq!(ready(&id("status-file", Some("busy"))), Some(true));
        assert_eq!(
            ready(&id("argv", None)),
            Some(false),
            "no status file for this process yet"
        );
    }

    #[test]
    fn a_draft_shows_the_note_wrapped_or_as_a_paste_placeholder() {
        use crate::agents::AgentKind;
        let note = "[park] This session was parked at 09:00 and resumed because it was woken.";
        let wrapped = "[park] This session was parked at 09:00 and\nresumed because it was woken.";
        assert!(Claude.draft_shows(wrapped, note));
        assert!(Claude.draft_shows("[Pasted text #1]", note));
        assert!(Claude.draft_shows("[Pasted text #2 +12 lines]", note));
        assert!(
            !Claude.draft_shows("[park] This session was parked", note),
            "partial"
        );
        assert!(!Claude.draft_shows(&format!("{note}{note}"), note), "twice");
        assert!(!Claude.draft_shows("[Pasted text #x]", note));
        assert!(!Claude.draft_shows("", note));
    }

    #[test]
    fn status_file_shape_parses() {
        let s = r#"{"pid":895,"sessionId":"35c98558-0920-4e29-b81c-9304ca43fccb","cwd":"/tmp/lab/demo/claude-proj","startedAt":1796220635705,"procStart":"574729","version":"2.1.197","peerProtocol":1,"kind":"interactive","entrypoint":"cli","name":"claude-proj-56","nameSource":"derived","status":"idle","updatedAt":1796220636343,"statusUpdatedAt":1796220636343}"#;
        let sf: StatusFile = serde_json::from_str(s).unwrap();
        assert_eq!(sf.proc_start.as_deref(), Some("574729"));
        assert_eq!(sf.status.as_deref(), Some("idle"));
    }
}
