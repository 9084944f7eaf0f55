//! aider (`aider-chat` 0.86, Python): it has no session id and no session store. What it has is
//! a chat history file, Markdown it appends to ([`transcript`]): `--chat-history-file` when given,
//! else `.aider.chat.history.md` at the git root of its cwd (the cwd when there is no repo),
//! shared by every aider of the repo. `--restore-chat-history` loads it back into a new start.
//!
//! Identity: the history file a process writes, and nothing else.
//! * The file comes from argv (`--chat-history-file`, relative to the cwd), else the default
//!   place; set anywhere park cannot read exactly (`AIDER_CHAT_HISTORY_FILE` in the process's
//!   environment, a `.env` or `.aider.conf.yml` aider reads, `--config`/`--env-file` files),
//!   it is untargetable.
//! * No other live aider may write the same file (their cwd, argv and environment tell theirs);
//!   one whose file cannot be told, in the same repo, counts as writing it. Two aiders on one
//!   file are untargetable ("aider keeps one history per repo: start each with
//!   --chat-history-file").
//! * The file must hold this process's own start: a `# aider chat started at <local time>`
//!   header whose logged command line is this process's argv and whose time is this process's
//!   start, and no other start after it (another aider wrote there since: which files are in
//!   this one's chat cannot be told).
//!
//! The session id park records (ledger, archive, `ls --json`) is derived from the file's absolute
//! path ([`id_of`]: a UUID-shaped digest), so the rest of park keeps one id shape; the path
//! itself is the transcript and comes back in the resume argv as `--chat-history-file <path>`,
//! which [`SPEC`]'s resume shape checks against the id.
//!
//! Resume: the same whitelisted flags, `--chat-history-file <absolute path>`, the files in the
//! chat at park time (`--file` / `--read`, from the history's own `Added … to the chat` lines of
//! this start: command line, `/add`, `/read-only`, `/drop`, `/reset`), and
//! `--restore-chat-history`. aider's restore is its own: it summarises a long history to fit the
//! model's context, and what the summary leaves out the model no longer sees (park archives the
//! whole Markdown first).
//!
//! Process: `python …/bin/aider [args]` (a venv or pipx script), argv kept; SIGTERM kills it
//! with `Terminated` (no handler).

pub mod screen;
pub mod transcript;

use super::release::Release;
use super::spec::{ConfigDir, Identify, Main, Resume, Spec, Whitelist};
use super::{classify_process, Agent, AgentProc, Flags, Identity};
use crate::adapters::platform::{env_get, Platform};
use crate::model::entry::Entry;
use std::path::{Component, Path, PathBuf};

pub const HISTORY_FLAG: &str = "--chat-history-file";
pub const RESTORE_FLAG: &str = "--restore-chat-history";
const DEFAULT_HISTORY: &str = ".aider.chat.history.md";
/// Where park's reasons send the user.
const ONE_EACH: &str =
    "aider keeps one history per repo: start each aider with --chat-history-file <file>";

/// Options after which aider does one thing and exits (no chat in a pane).
const NON_INTERACTIVE: &[&str] = &[
    "-m",
    "--message",
    "--msg",
    "-f",
    "--message-file",
    "-h",
    "--help",
    "--version",
    "--list-models",
    "--models",
    "--just-check-update",
    "--show-repo-map",
    "--show-prompts",
    "--apply",
    "--apply-clipboard-edits",
    "--commit",
    "--lint",
    "--test",
    "--exit",
    "--upgrade",
    "--update",
    "--install-main-branch",
    "--gui",
    "--browser",
];

pub const BOOL_FLAGS: &[&str] = &[
    "--yes-always",
    "--auto-commits",
    "--no-auto-commits",
    "--dirty-commits",
    "--no-dirty-commits",
    "--no-git",
    "--architect",
    "--stream",
    "--no-stream",
    "--vim",
    "--multiline",
    "--no-pretty",
    "--dark-mode",
    "--light-mode",
    "--suggest-shell-commands",
    "--no-suggest-shell-commands",
    "--cache-prompts",
    "--no-show-model-warnings",
    "--subtree-only",
    "--auto-lint",
    "--no-auto-lint",
    "--auto-test",
    "--watch-files",
    "--no-gitignore",
    "--sonnet",
    "--opus",
    "--haiku",
    "--4o",
    "--mini",
    "--deepseek",
];
pub const VALUED_FLAGS: &[&str] = &[
    "--model",
    "--weak-model",
    "--editor-model",
    "--edit-format",
    "--chat-mode",
    "--editor-edit-format",
    "--reasoning-effort",
    "--thinking-tokens",
    "--map-tokens",
    "--map-refresh",
    "--openai-api-base",
    "--input-history-file",
    HISTORY_FLAG,
    "--file",
    "--read",
];

/// Drops what park sets itself on resume (the restore flag: added once, last).
fn prepare(args: &[String]) -> Vec<String> {
    args.iter()
        .filter(|a| *a != RESTORE_FLAG && *a != "--no-restore-chat-history")
        .cloned()
        .collect()
}

pub fn interactive(args: &[String]) -> bool {
    super::spec::tui_argv(args, NON_INTERACTIVE, &[])
}

/// The session id park records for the history file at `path` (absolute): a UUID-shaped digest
/// of the path, so one file is one id and the id is safe in file names and argv.
pub fn id_of(path: &Path) -> String {
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

/// `p` made absolute against `cwd`, `.` and `..` resolved by name (the way Python's
/// `Path(p).resolve()` sees a path whose parts are no symlinks).
pub fn absolute(cwd: &Path, p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in cwd.join(p).components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

/// The git root aider sees from `cwd` (the nearest dir holding `.git`), when there is one.
pub fn git_root(cwd: &Path) -> Option<PathBuf> {
    cwd.ancestors()
        .find(|d| d.join(".git").exists())
        .map(Path::to_path_buf)
}

/// The value of the last `--flag v` / `--flag=v` in `args`.
fn last_value(args: &[String], flag: &str) -> Option<String> {
    let mut found = None;
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if a == flag {
            found = args.get(i + 1).cloned();
            i += 2;
            continue;
        }
        if let Some(v) = a.strip_prefix(flag).and_then(|r| r.strip_prefix('=')) {
            found = Some(v.to_string());
        }
        i += 1;
    }
    found
}

/// Whether any file aider reads its settings from (besides argv) could name the history file.
fn set_elsewhere(args: &[String], env: &[(String, String)], cwd: &Path) -> Option<String> {
    if env_get(env, "AIDER_CHAT_HISTORY_FILE").is_some() {
        return Some("AIDER_CHAT_HISTORY_FILE is set in its environment".into());
    }
    let home = env_get(env, "HOME").map(PathBuf::from);
    let root = git_root(cwd);
    let mut files: Vec<PathBuf> = vec![];
    for name in [".aider.conf.yml", ".env"] {
        files.extend(home.iter().map(|h| h.join(name)));
        files.extend(root.iter().map(|r| r.join(name)));
        files.push(cwd.join(name));
    }
    for f in ["--config", "-c", "--env-file"] {
        if let Some(v) = last_value(args, f) {
            files.push(absolute(cwd, Path::new(&v)));
        }
    }
    files.into_iter().find_map(|f| {
        let text = std::fs::read(&f).ok()?;
        let text = String::from_utf8_lossy(&text);
        (text.contains("chat-history-file") || text.contains("CHAT_HISTORY_FILE"))
            .then(|| format!("{} sets its history file", f.display()))
    })
}

/// The history file an aider with this argv tail, environment and cwd writes, and how it is
/// known (`argv` / `history-file`); why not, when park cannot tell exactly.
pub fn history_of(
    args: &[String],
    env: &[(String, String)],
    cwd: &Path,
) -> Result<(PathBuf, &'static str), String> {
    if let Some(v) = last_value(args, HISTORY_FLAG) {
        if v.is_empty() {
            return Err("aider: an empty --chat-history-file".into());
        }
        return Ok((absolute(cwd, Path::new(&v)), "argv"));
    }
    if let Some(why) = set_elsewhere(args, env, cwd) {
        return Err(format!(
            "aider: {why}, which park does not read; start it with --chat-history-file <file>"
        ));
    }
    if env_get(env, "GIT_DIR").is_some() || env_get(env, "GIT_WORK_TREE").is_some() {
        return Err(
            "aider: GIT_DIR/GIT_WORK_TREE move its repo; start it with --chat-history-file <file>"
                .into(),
        );
    }
    let dir = git_root(cwd).unwrap_or_else(|| cwd.to_path_buf());
    Ok((dir.join(DEFAULT_HISTORY), "history-file"))
}

/// The command line aider logs under its start header for this argv (`" ".join(sys.argv)`, the
/// API keys of its environment and argv scrubbed to `...<last 4>`).
pub fn logged_argv(argv: &[String], env: &[(String, String)]) -> String {
    let mut line = argv.join(" ");
    let args = &argv[1.min(argv.len())..];
    for (var, flag) in [
        ("OPENAI_API_KEY", "--openai-api-key"),
        ("ANTHROPIC_API_KEY", "--anthropic-api-key"),
    ] {
        let key = last_value(args, flag).or_else(|| env_get(env, var).map(str::to_string));
        if let Some(k) = key.filter(|k| !k.is_empty()) {
            let tail: String = k
                .chars()
                .rev()
                .take(4)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            line = line.replace(&k, &format!("...{tail}"));
        }
    }
    line
}

/// Seconds since the local time `at` (`YYYY-MM-DD HH:MM:SS`, aider's header) in time zone `tz`.
fn age_of(at: &str, tz: &jiff::tz::TimeZone) -> Option<i64> {
    let dt: jiff::civil::DateTime = at.trim().replace(' ', "T").parse().ok()?;
    let ts = dt.to_zoned(tz.clone()).ok()?.timestamp();
    Some(jiff::Timestamp::now().as_second() - ts.as_second())
}

/// How long after its start an aider may write its header (imports, a slow disk).
const HEADER_WITHIN_SECS: i64 = 120;

/// The index in `pieces` of this process's own start, or why there is none: the one start whose
/// command line is `logged` and whose time fits `proc_age` (when known), with no start after it.
pub fn own_start(
    pieces: &[transcript::Piece],
    logged: &str,
    proc_age: Option<u64>,
    tz: &jiff::tz::TimeZone,
) -> Result<usize, String> {
    let starts = transcript::starts(pieces);
    let fits = |at: &str| match (proc_age, age_of(at, tz)) {
        (Some(p), Some(h)) => h <= p as i64 + 2 && h + HEADER_WITHIN_SECS >= p as i64,
        (None, _) => true,
        (Some(_), None) => false,
    };
    let mine: Vec<usize> = starts
        .iter()
        .enumerate()
        .filter(|(_, (_, at, argv))| *argv == Some(logged) && fits(at))
        .map(|(k, _)| k)
        .collect();
    let k = match mine[..] {
        [] => {
            return Err(
                "aider: its history file holds no start of this process yet (still starting?)"
                    .into(),
            )
        }
        [k] => k,
        _ if proc_age.is_none() => *mine.last().expect("not empty"),
        _ => {
            return Err(format!(
                "aider: another aider with the same command line started on its history file since it started: which start is its own cannot be told; {ONE_EACH}"
            ))
        }
    };
    if k + 1 != starts.len() {
        return Err(format!(
            "aider: another aider started on its history file after it (at {}): which files are in its chat cannot be told; {ONE_EACH}",
            starts[k + 1].1
        ));
    }
    Ok(starts[k].0)
}

fn time_zone(env: &[(String, String)]) -> jiff::tz::TimeZone {
    env_get(env, "TZ")
        .and_then(|t| jiff::tz::TimeZone::get(t.trim_start_matches(':')).ok())
        .unwrap_or_else(jiff::tz::TimeZone::system)
}

/// What a scan knows of one aider process: its history file and its own start there.
struct Known {
    history: PathBuf,
    source: &'static str,
    cwd: PathBuf,
    /// This process's own part of the history (from its start).
    mine: Vec<transcript::Piece>,
}

fn know(a: &AgentProc, start_ticks: u64, platform: &dyn Platform) -> Result<Known, String> {
    let cwd = platform.cwd(a.main).ok_or("aider: its cwd is unreadable")?;
    let args = &a.argv[a.prog_index + 1..];
    let (history, source) = history_of(args, &a.env, &cwd)?;
    let root = git_root(&cwd);
    // Every other live aider: one on the same file, or one whose file cannot be told in the
    // same repo, could be writing this history too.
    for p in platform.processes().unwrap_or_default() {
        if p.pid == a.root || p.pid == a.main {
            continue;
        }
        let Some((Agent::Aider, idx, argv)) = classify_process(&p.argv) else {
            continue;
        };
        let other_cwd = platform.cwd(p.pid);
        let env = platform.environ(p.pid).unwrap_or_default();
        let theirs = other_cwd
            .as_deref()
            .ok_or_else(|| "cwd unreadable".to_string())
            .and_then(|c| history_of(&argv[idx + 1..], &env, c));
        match theirs {
            Ok((h, _)) if h == history => {
                return Err(format!(
                    "aider: another aider (pid {}) writes the same history file {}; {ONE_EACH}",
                    p.pid,
                    history.display()
                ))
            }
            Ok(_) => {}
            Err(_) if other_cwd.is_none() || other_cwd.as_deref().and_then(git_root) == root => {
                return Err(format!(
                    "aider: another aider (pid {}) in this repo writes a history file park cannot tell; {ONE_EACH}",
                    p.pid
                ))
            }
            Err(_) => {}
        }
    }
    let bytes = std::fs::read(&history).map_err(|e| {
        format!(
            "aider: its history file {} cannot be read ({e}): nothing to resume",
            history.display()
        )
    })?;
    let pieces = transcript::pieces(&bytes);
    let logged = logged_argv(&a.argv[a.prog_index..], &a.env);
    let at = own_start(
        &pieces,
        &logged,
        platform.started_secs_ago(start_ticks),
        &time_zone(&a.env),
    )?;
    Ok(Known {
        history,
        source,
        cwd,
        mine: pieces[at..].to_vec(),
    })
}

pub fn identify(a: &AgentProc, start_ticks: u64, platform: &dyn Platform) -> Identity {
    match know(a, start_ticks, platform) {
        Ok(k) => Identity {
            session_id: Some(id_of(&k.history)),
            source: k.source,
            transcript: Some(k.history),
            reason: None,
            status_file: None,
            cwd: Some(k.cwd.to_string_lossy().into_owned()),
            job: None,
            name: None,
        },
        Err(why) => Identity::untargetable(why),
    }
}

/// The flags a resume of this process replays: the whitelisted ones, its history file made
/// absolute, and the files in its chat now (each `--file` / `--read` once, absolute).
fn flags_now(
    a: &AgentProc,
    start_ticks: u64,
    platform: &dyn Platform,
) -> Option<(Flags, Vec<String>)> {
    let (kept, dropped) = SPEC.flags(&a.argv[a.prog_index + 1..]);
    let k = know(a, start_ticks, platform).ok()?;
    let mut out: Flags = vec![];
    let mut i = 0;
    while i < kept.len() {
        let f = kept[i].as_str();
        if [HISTORY_FLAG, "--file", "--read"].contains(&f) {
            i += 2;
            continue;
        }
        out.push(kept[i].clone());
        if VALUED_FLAGS.contains(&f) {
            if let Some(v) = kept.get(i + 1) {
                out.push(v.clone());
            }
            i += 2;
        } else {
            i += 1;
        }
    }
    let root = git_root(&k.cwd).unwrap_or_else(|| k.cwd.clone());
    let mut dropped = dropped;
    for (f, ro) in transcript::files_in_chat(&k.mine) {
        let p = absolute(&root, Path::new(&f));
        let v = p.to_string_lossy().into_owned();
        if p.is_file() && super::plain_value(&v) {
            out.push(if ro { "--read" } else { "--file" }.to_string());
            out.push(v);
        } else {
            dropped.push(format!("{f} (in the chat, now gone or unplayable)"));
        }
    }
    out.push(HISTORY_FLAG.to_string());
    out.push(k.history.to_string_lossy().into_owned());
    Some((out, dropped))
}

/// The id the resume flags name (their `--chat-history-file`, absolute).
fn id_in_flags(flags: &[String]) -> Option<String> {
    let v = last_value(flags, HISTORY_FLAG)?;
    let p = Path::new(&v);
    p.is_absolute().then(|| id_of(p))
}

/// aider behind the [`super::AgentKind`] dispatch.
pub struct Aider;

/// aider, as data.
pub static SPEC: Spec = Spec {
    agent: Agent::Aider,
    name: "aider",
    release: Release {
        name: "aider",
        packages: &["aider-chat"],
        tested: ("0.86.2", "0.86.2"),
    },
    programs: &["aider"],
    entry_script: None,
    interactive,
    main: Main::Root,
    // aider keeps its own state under ~/.aider (caches, OAuth keys); its history lives in the
    // repos.
    config: ConfigDir {
        var: "HOME",
        under_var: Some(".aider"),
        absolute_var: true,
        home: ".aider",
        default_var: "HOME",
        runtime_var: None,
    },
    flags: Whitelist {
        // Files named on the command line come back from the history's own lines.
        skip_positional: usize::MAX,
        prepare: Some(prepare),
        ..Whitelist::of(BOOL_FLAGS, VALUED_FLAGS, &[])
    },
    resume: Resume::Restore {
        flag: RESTORE_FLAG,
        id_in_flags,
    },
    identify: Identify::Files(identify),
    // Histories live in the repos, not under a config dir.
    transcripts: |_| vec![],
    transcript_at: None,
    transcript_needs_cwd: false,
    parse_transcript: transcript::parse,
    read_transcript_file: Some(transcript::read_file),
    markdown: transcript::markdown,
    message_of: transcript::message_of,
    read_screen: screen::read,
    screen_escapes: false,
    limit_screen: None,
    generic_title: None,
    has_status_file: false,
    // A prompt is written when sent and the reply when complete, but a reply aider could not
    // use (an edit-format error) is followed by a retry nothing marks: the screen decides.
    open_turn_is_busy: false,
    cleanup: None,
    deletes_transcripts: false,
    prompt_history: None,
    caller_session_vars: &[],
    // The header of a resumed start is written a moment after it starts.
    settle: std::time::Duration::from_secs(2),
    // An aider park cannot identify may be writing any history file.
    unidentified_blocks_unpark: true,
    shared_process: None,
    supervisor: None,
    integration: None,
    first_prompt: true,
    process_title: None,
};

impl super::AgentKind for Aider {
    fn spec(&self) -> &'static Spec {
        &SPEC
    }
    /// The history file is where aider reads it back from: the path itself.
    fn expected_transcript(&self, e: &Entry) -> Option<PathBuf> {
        e.transcript
            .as_deref()
            .map(PathBuf::from)
            .filter(|p| p.is_absolute() && id_of(p) == e.session_id)
    }
    fn restore_path(&self, _e: &Entry, _config_dir: &Path, _sid: &str) -> Result<PathBuf, String> {
        Err("aider: its history file is the user's (in the repo); park never writes it back".into())
    }
    fn launch_flags(
        &self,
        a: &AgentProc,
        start_ticks: u64,
        platform: &dyn Platform,
    ) -> (Flags, Vec<String>) {
        flags_now(a, start_ticks, platform)
            .unwrap_or_else(|| SPEC.flags(&a.argv[a.prog_index + 1..]))
    }
    fn raw_end(&self, bytes: &[u8]) -> super::render::RawEnd {
        transcript::raw_end(bytes)
    }
    fn resume_note(&self) -> Option<&'static str> {
        Some("aider restores its history with --restore-chat-history: a long one comes back summarised by the model (its own summary keeps the gist, not every turn); the whole conversation is in park's archive")
    }
    fn runs_session(&self, e: &Entry, pid: u32, start: u64, platform: &dyn Platform) -> bool {
        let Some(p) = platform.process(pid) else {
            return false;
        };
        let Some((Agent::Aider, idx, argv)) = classify_process(&p.argv) else {
            return false;
        };
        let a = AgentProc {
            agent: Agent::Aider,
            root: pid,
            main: pid,
            prog_index: idx,
            argv,
            env: platform.environ(pid).unwrap_or_default(),
            background: false,
        };
        let id = identify(&a, start, platform);
        id.session_id.is_some()
            && (e.fresh_from.is_some() || id.session_id.as_deref() == Some(e.session_id.as_str()))
    }
}

#[cfg(test)]
mod tests;
