//! Everything agent-specific: how to recognise each agent's process, find its session id, read its
//! screen and transcript, render it, and rebuild the command that resumes it. An agent is a folder:
//! a static [`spec::Spec`] (everything about it that is data, and its pure readers) plus an
//! [`AgentKind`] with the hooks where its behaviour really differs. Code outside this folder asks
//! through one dispatch, [`of`]`(agent)` (and [`all`], over [`Agent::ALL`]), and never matches on
//! [`Agent`] nor names an agent's module.
//!
//! Contract: identity comes from the process itself (status file checked against the process start
//! time, argv, open files), never from "newest transcript in the folder". Anything ambiguous yields
//! `Identity::untargetable(reason)`.
//!
//! Adding an agent touches exactly these:
//! 1. `protocol/src/lib.rs`: its variant in `Agent`, its line in `Agent::ALL` and its `as_str`
//!    (the name in `--json`, the ledger and its folders' names);
//! 2. its folder `agents/<name>/`: `mod.rs` with its `SPEC` (release with the tested range, which
//!    must equal its pins in `scripts/setup`; programs, config dir, flag whitelist, resume shape,
//!    readers) and its unit struct implementing [`AgentKind`] (`spec`, `runs_session`, and only
//!    the hooks where it differs from the defaults), and its screen, transcript, render and limit
//!    readers in files of that folder; plus, in this file, its `pub mod <name>;` and its arm in
//!    [`of`] (the compiler asks for the arm);
//! 3. its fixtures, real captures and transcripts, in `companion/tests/fixtures/<name>/`;
//! 4. its e2e case: a harness module in `tests/src/harness/` with its `RealAgent` in
//!    `real_agent.rs`, its name in the `contract!` list of `tests/tests/e2e/contract.rs` (the
//!    cases every agent passes, in tmux and zellij), an e2e module only for what is its own, and
//!    its pin in `common::assert_pinned_version`;
//! 5. its pin in `scripts/setup` and its line in `scripts/agents-latest`'s table;
//! 6. the README's agent and tested-version tables;
//! 7. the two exhaustive matches of the integration corpora (`companion/tests/integration/`:
//!    `fuzz_deep.rs`'s not-the-TUI flags, `injection.rs`'s argv shapes and resume-argv shape; the
//!    compiler asks for both arms), and the regenerated `schema/` (`scripts/update-schema`: the
//!    agent enum).
//!
//! Nothing else names agents one by one. Seams an agent may need, each with a default every
//! other agent keeps: a process that hides its argv behind its title (`Spec::process_title`:
//! the program to resume and the flags lost, said by `park show`) or answers its flags from its
//! own record ([`AgentKind::launch_flags`]); a TUI that takes no first prompt
//! (`Spec::first_prompt`: a fresh start primed with an archived conversation is refused, not
//! guessed); a resume that restores rather than names a session (`Resume::Restore`, aider); a
//! transcript that is not JSONL ([`AgentKind::raw_end`]); what a resume does not bring back
//! ([`AgentKind::resume_note`]); a session id of another shape (one gate for every store:
//! [`transcript::valid_session_id`]). In the e2e harness: `RealAgent::launch_argv`,
//! `parked_tree` (a daemon the TUI started), `change_session` (an agent with no session switch),
//! `Spec::argv_hidden`.
//!
//! The shared modules (`spec`, `screen`, `transcript`, `render`, `limit`, `release`, and for
//! integrations `hooks` and `records`) hold only the kit every agent's code builds with; each agent's own parsers live in its folder and are
//! reached through its spec and kind.

pub mod aider;
pub mod claude;
pub mod cline;
pub mod codex;
pub mod copilot;
pub mod droid;
pub mod gemini;
pub mod hooks;
pub mod kilo;
pub mod kimi;
pub mod limit;
pub mod opencode;
pub mod pi;
pub mod qwen;
pub mod records;
pub mod release;
pub mod render;
pub mod screen;
pub mod spec;
pub mod transcript;

use crate::adapters::platform::proctree::{program_of, ProcTable};
use crate::adapters::platform::{env_get, Platform, ProcInfo};
use crate::model::entry::Entry;
pub use park_protocol::Agent;
use std::path::{Path, PathBuf};

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
    /// The agent's own name for the session (Claude's status file `name`): shown where the
    /// terminal title is the agent's generic one ([`AgentKind::generic_title`]).
    pub name: Option<String>,
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
            name: None,
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
    all()
        .into_iter()
        .map(|k| k.spec())
        .find(|s| s.runs(&prog, &argv[idx], rest))
        .map(|s| (s.agent, idx))
}

/// [`classify`] for a process's argv as read, and the argv its agent reads. A process that set
/// its own title shows it as its first argument (Claude Code 2.1.332's background workers:
/// `claude bg-spare`, `--bg-spare`, `<socket>`): when argv is no agent as it is, the words of a
/// first argument with spaces are tried in its place (a title carries no quoting).
pub fn classify_process(argv: &[String]) -> Option<(Agent, usize, Vec<String>)> {
    if let Some((a, i)) = classify(argv) {
        return Some((a, i, argv.to_vec()));
    }
    let (title, rest) = argv.split_first()?;
    if !title.contains(' ') {
        return None;
    }
    let words: Vec<String> = title
        .split_whitespace()
        .chain(rest.iter().map(String::as_str))
        .map(str::to_string)
        .collect();
    classify(&words).map(|(a, i)| (a, i, words))
}

/// Finds every agent root in the table: an agent process whose parent is not the same agent
/// (the Codex node wrapper and its native child are one agent).
pub(crate) fn find_agents(table: &ProcTable, platform: &dyn Platform) -> Vec<AgentProc> {
    let mut out = vec![];
    for p in table.all() {
        let Some((agent, idx, argv)) = classify_process(&p.argv) else {
            continue;
        };
        if let Some(parent) = table.get(p.ppid) {
            if classify_process(&parent.argv).map(|(a, ..)| a) == Some(agent) {
                continue;
            }
        }
        let spec = of(agent).spec();
        let main = spec.main_pid(table, p.pid);
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
        let args = &argv[idx + 1..];
        let background = spec.background(args, &env);
        // A spare the supervisor keeps ready runs no session until it is claimed.
        if background && spec.unclaimed_spare(args, &env, p.pid, p.ppid) {
            continue;
        }
        out.push(AgentProc {
            agent,
            root: p.pid,
            main,
            prog_index: idx,
            argv,
            env,
            background,
        });
    }
    out
}

/// A whitelisted launch flag with its value, as recorded in the ledger and replayed on resume.
pub(crate) type Flags = Vec<String>;

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

/// The behaviour of one agent CLI that is more than its [`spec::Spec`]: the hooks where agents
/// really differ, behind one dispatch ([`of`], [`all`]). Each default is the common case, driven by
/// the spec; an agent overrides a hook only where it behaves otherwise. Code outside `agents/`
/// asks through this trait and never matches on [`Agent`].
pub trait AgentKind: Sync {
    /// Everything about the agent that is data (its folder's `SPEC`).
    fn spec(&self) -> &'static spec::Spec;
    /// The transcript the agent will resume `e` from, if it is where the agent looks for it.
    fn expected_transcript(&self, e: &Entry) -> Option<PathBuf> {
        let at = self.spec().transcript_at?;
        Some(at(
            Path::new(e.config_dir.as_deref()?),
            &e.cwd,
            &e.session_id,
        ))
    }
    /// Where an archived copy of `e`'s transcript goes back (under `config_dir`), or why it cannot.
    fn restore_path(&self, e: &Entry, config_dir: &Path, sid: &str) -> Result<PathBuf, String> {
        match self.spec().transcript_at {
            Some(at) => Ok(at(config_dir, &e.cwd, sid)),
            None => Err(format!(
                "{}: no place to restore a transcript",
                self.spec().name
            )),
        }
    }
    /// What a scan knows of an identified session's transcript: its file, read cheaply; an
    /// agent whose sessions live in a database reads the session by id.
    fn read_transcript(&self, ident: &Identity) -> Option<transcript::TranscriptInfo> {
        let read = self.spec().read_transcript_file?;
        read(ident.transcript.as_ref()?).ok()
    }
    /// The session's transcript, whole, as the archive keeps it: the file at `path` (a database
    /// agent exports session `session_id` from the database at `path`).
    fn transcript_bytes(&self, path: &Path, _session_id: &str) -> std::io::Result<Vec<u8>> {
        std::fs::read(path)
    }
    /// Whether process `pid` (started at `start`) runs `e`'s session now, by the agent's own
    /// evidence (a fresh agent standing in for a lost transcript runs a new session: any id).
    fn runs_session(&self, e: &Entry, pid: u32, start: u64, platform: &dyn Platform) -> bool;
    /// What the agent's own writer lock says of a resume of `e` now, for agents that keep one;
    /// `None` otherwise.
    fn writer(&self, _e: &Entry, _platform: &dyn Platform) -> Option<WriterVerdict> {
        None
    }
    /// What a park of this agent leaves running on purpose (a shared daemon), said in the result;
    /// `None` when the kill freed everything.
    fn left_running_note(&self, _table: &ProcTable, _config_dir: &Path) -> Option<String> {
        None
    }
    /// Runs once the verifier saw a resumed agent running `e`'s session: an agent whose resume
    /// leaves something behind that would cost the session later cleans it up here. Returns
    /// what it did, for the log.
    fn after_resume(&self, _e: &Entry) -> Option<String> {
        None
    }
    /// Whether the agent shows, by its own files, that it reads typed input now (its startup is
    /// over): `Some(false)` while it is still starting, `None` when it keeps no such evidence
    /// (then its screen decides). A screen alone can mislead: the pane keeps the last frame of
    /// the agent that ran there before, composer included, until the new one draws.
    fn ready_for_input(&self, _ident: &Identity) -> Option<bool> {
        None
    }
    /// The launch flags of process `a` (its main process started at `main_start`) that a resume
    /// replays, and those dropped: its argv's, through the spec's whitelist. An agent that hides
    /// its argv from other processes (pi overwrites it with its title) answers from what it
    /// recorded of itself; one whose resume needs more than its argv's flags (aider: its history
    /// file made absolute, the files its chat holds now) adds them.
    fn launch_flags(
        &self,
        a: &AgentProc,
        _main_start: u64,
        _platform: &dyn Platform,
    ) -> (Flags, Vec<String>) {
        self.spec().flags(&a.argv[a.prog_index + 1..])
    }
    /// Whether the composer's `draft` (as its `read_screen` reads it) shows `text`, typed into an
    /// empty composer: the same text, wrapped or not.
    fn draft_shows(&self, draft: &str, text: &str) -> bool {
        same_text(draft, text)
    }
    /// What a resume of this agent does not bring back by itself, said by `park show` (aider's
    /// own restore summarises a long history).
    fn resume_note(&self) -> Option<&'static str> {
        None
    }
    /// The latest prompt and reply of a transcript's raw bytes, read back from the end, for the
    /// archive's check (default: JSONL records read with the spec's `message_of`).
    fn raw_end(&self, bytes: &[u8]) -> render::RawEnd {
        render::raw_end(bytes, self.spec().message_of)
    }
}

/// Whether two texts are the same but for whitespace (a composer wraps and indents a long draft).
pub(crate) fn same_text(a: &str, b: &str) -> bool {
    let squash = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
    let a = squash(a);
    !a.is_empty() && a == squash(b)
}

/// Whether an integration is in place (`park integrate`, `park doctor`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IntegrationState {
    /// In the agent's config, pointing at a park binary that exists.
    Installed,
    /// Not in the agent's config.
    Missing,
    /// In the agent's config but unusable (why: the park binary it runs is gone, …).
    Broken(String),
    /// The agent's config cannot be read (why); park will not edit it.
    Unreadable(String),
}

/// An opt-in integration: a hook or plugin park installs into an agent's config with the user's
/// consent, which records the agent process's session under `$PARK_HOME/integrations/<agent>/`.
/// `env` is the environment whose agent config is meant (park's own for `integrate`).
pub trait Integration: Sync {
    /// The agent config file it edits.
    fn file(&self, env: &[(String, String)]) -> Option<PathBuf>;
    fn state(&self, env: &[(String, String)]) -> IntegrationState;
    /// Installs it for `park_exe`, merging into the user's config; returns what changed.
    fn install(&self, env: &[(String, String)], park_exe: &Path) -> Result<String, String>;
    /// Removes exactly what `install` added; returns what changed.
    fn remove(&self, env: &[(String, String)]) -> Result<String, String>;
    /// `park hook <agent>`: records what the agent's hook input says, for the agent process
    /// that ran the hook (an ancestor of this process), under `home`.
    fn record(&self, input: &[u8], home: &Path, platform: &dyn Platform) -> Result<(), String>;
}

/// What an agent's writer lock says of a resume (see [`AgentKind::writer`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriterVerdict {
    Go,
    /// Another process writes the session: it is running elsewhere (the `already-running` rule).
    Running(String),
    /// The agent would refuse the resume now, but nothing runs it elsewhere: keep the entry.
    Refuse(String),
}

/// Whether any agent shares process `p` between its sessions ([`AgentKind::shared_process`]).
pub fn shared_process(p: &ProcInfo) -> bool {
    all().iter().any(|k| k.spec().shares(p))
}

/// The one dispatch over [`Agent`] (the compiler checks every variant has an arm).
pub fn of(a: Agent) -> &'static dyn AgentKind {
    match a {
        Agent::Claude => &claude::Claude,
        Agent::Codex => &codex::Codex,
        Agent::Qwen => &qwen::Qwen,
        Agent::Copilot => &copilot::Copilot,
        Agent::Gemini => &gemini::Gemini,
        Agent::Opencode => &opencode::OPENCODE,
        Agent::Kilo => &kilo::KILO,
        Agent::Aider => &aider::Aider,
        Agent::Pi => &pi::Pi,
        Agent::Kimi => &kimi::Kimi,
        Agent::Droid => &droid::Droid,
        Agent::Cline => &cline::Cline,
    }
}

/// Every agent park knows, in [`Agent::ALL`]'s order.
pub fn all() -> [&'static dyn AgentKind; Agent::ALL.len()] {
    Agent::ALL.map(of)
}

/// The latest prompt and reply of `agent`'s transcript bytes, read back from the end.
pub(crate) fn raw_end(agent: Agent, bytes: &[u8]) -> render::RawEnd {
    of(agent).raw_end(bytes)
}

/// The transcript the agent will resume `e` from, if it is where the agent looks for it.
pub fn expected_transcript(e: &Entry) -> Option<PathBuf> {
    of(e.agent).expected_transcript(e)
}

/// Warn this many days before an agent's own cleanup would delete a parked session's transcript.
pub(crate) const CLEANUP_WARN_DAYS: u64 = 7;

/// Whole days since `p` was last written.
pub(crate) fn age_days(p: &Path) -> Option<u64> {
    let m = std::fs::metadata(p).ok()?.modified().ok()?;
    Some(m.elapsed().ok()?.as_secs() / 86_400)
}

/// Days left before the agent's own cleanup deletes `transcript` (negative: overdue). The one
/// computation behind `ls`, `ls --archived` and `doctor`.
/// After how many days the entry's agent deletes its transcripts (its config dir's setting).
pub(crate) fn cleanup_days(e: &Entry) -> Option<u64> {
    of(e.agent)
        .spec()
        .cleanup_days(Path::new(e.config_dir.as_deref()?))
}

pub(crate) fn cleanup_left(e: &Entry, transcript: Option<&Path>) -> Option<i64> {
    let days = cleanup_days(e)?;
    Some(days as i64 - age_days(transcript?)? as i64)
}

/// What a user could type to resume `e` by hand: cwd first, every value shell-quoted.
pub fn resume_command_line(e: &Entry) -> String {
    let q = crate::support::shell::quote;
    let argv: Vec<String> = resume_argv(e).iter().map(|a| q(a)).collect();
    let dashdash = if crate::support::fault::disabled("cd-dashdash") {
        ""
    } else {
        "-- "
    };
    format!("cd {dashdash}{} && {}", q(&e.cwd), argv.join(" "))
}

/// The argv that resumes the entry. The recorded flags pass the same whitelist again: a ledger file
/// edited by hand (or by anything else) can never smuggle another flag, or a session flag, into argv.
pub fn resume_argv(e: &Entry) -> Vec<String> {
    // An id that is not a session id (e.g. `--some-flag`) never reaches argv: nothing to resume.
    if transcript::valid_session_id(&e.session_id).is_none()
        && !crate::support::fault::disabled("resume-id")
    {
        return vec![];
    }
    let spec = of(e.agent).spec();
    let flags = spec.flags(&e.flags).0;
    if let Some(md) = &e.fresh_from {
        // An agent that takes no first prompt cannot be started primed: nothing to run.
        if !spec.first_prompt {
            return vec![];
        }
        // A new session, with the same whitelisted flags, whose first prompt points at the
        // archived conversation. The prompt starts with a word, so it is never read as a flag.
        return spec.fresh_argv(&e.program, &flags, fresh_prompt(e, md), md);
    }
    spec.resume_argv(&e.program, &e.session_id, &flags)
}

/// The first prompt of a fresh agent standing in for a session whose transcript is gone.
pub(crate) fn fresh_prompt(e: &Entry, md: &str) -> String {
    format!(
        "Continue an earlier {} session ({}) that park archived: its own transcript could not be restored. Read {md} for the conversation so far, then wait for my next instruction.",
        e.agent.as_str(),
        e.session_id
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    /// One list: `Agent::ALL` holds every agent once, each with its own kind, and every fixture
    /// folder belongs to one of them (an agent added with its fixtures but left out of the list
    /// fails here).
    #[test]
    fn every_agent_is_in_the_one_list() {
        let names: Vec<&str> = Agent::ALL.iter().map(|a| a.as_str()).collect();
        for (i, a) in Agent::ALL.into_iter().enumerate() {
            assert_eq!(of(a).spec().agent, a);
            assert!(!names[..i].contains(&a.as_str()), "{a:?} twice");
        }
        assert_eq!(all().map(|k| k.spec().agent), Agent::ALL);
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        for d in std::fs::read_dir(fixtures).unwrap().flatten() {
            let name = d.file_name().to_string_lossy().into_owned();
            assert!(
                !d.path().is_dir() || names.contains(&name.as_str()),
                "fixtures/{name}/ names no agent of Agent::ALL"
            );
        }
    }

    /// Claude Code 2.1.332's supervisor runs its pty hosts and spares under a title, their first
    /// argument (/proc/<pid>/cmdline of a spare under e2e_claude_bg: `claude bg-spare`,
    /// `--bg-spare`, `<socket>`). Read as a program named `claude bg-spare`, a claimed spare was
    /// no agent at all and its background session was never listed.
    #[test]
    fn a_process_that_set_its_title_is_read_by_its_words() {
        let sock = "/tmp/cc-daemon-0/a8c7033c/spare/a953aaf4.claim.sock";
        for spare in [
            v(&["claude bg-spare", "--bg-spare", sock]),
            v(&[&format!("claude bg-spare --bg-spare {sock}")]),
        ] {
            let (agent, idx, argv) = classify_process(&spare).expect("the spare is Claude's");
            assert_eq!((agent, idx), (Agent::Claude, 0));
            assert_eq!(argv[1..], v(&["bg-spare", "--bg-spare", sock]));
            assert!(of(agent).spec().background(&argv[1..], &[]));
        }
        let host = v(&[
            "claude bg-pty-host",
            "--bg-pty-host",
            "/tmp/p.pty.sock",
            "200",
            "50",
            "--",
            "/x/claude.exe",
            "--bg-spare",
            "/tmp/s.claim.sock",
        ]);
        assert_eq!(
            classify_process(&host),
            None,
            "the pty host runs no session"
        );
        // A path with a space is a path first: read as it is.
        let (_, _, argv) = classify_process(&v(&["/opt/My Tools/claude"])).unwrap();
        assert_eq!(argv, v(&["/opt/My Tools/claude"]));
        assert_eq!(classify_process(&v(&["vim notes.md"])), None);
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
