//! One interface to a real agent CLI for the e2e contract (`tests/tests/e2e/contract.rs`): where
//! it is, how its HOME is seeded and its pane's environment set, how it is started, prompted and
//! seen ready, busy or asking permission, and what its OWN records (never park's) say about a
//! session: which process holds it, what was said in it, how big it is.
//!
//! The screens are driven through [`Term`], which both a tmux pane ([`Sandbox`]) and a zellij pane
//! ([`Zellij`]) implement, so the same agent recipe runs in either multiplexer.
//!
//! Implemented for every agent park supports: Claude Code, Codex (its plain `--no-daemon` TUI;
//! daemon mode stays in `e2e_codex`) and every other agent of `Agent::ALL` (the `contract!` list). The
//! agents' offline recipes (seeded HOME, environment, record paths) stay in their own files
//! (`claude.rs`, `codex.rs`, ...); what a module of their own tests is only what is theirs.

use std::path::{Path, PathBuf};
use std::time::Duration;

use regex::Regex;

use crate::harness::aider::{
    aider_histories, aider_history, aider_history_of, aider_session_id, seed_aider_home, Aider,
};
use crate::harness::claude::{
    claude_session_files, claude_transcript, seed_claude_home, CLAUDE_API_KEY, CLAUDE_READY,
};
use crate::harness::cline::{
    cline_logged, cline_messages, cline_messages_path, cline_record, cline_sessions,
    seed_cline_home, Cline,
};
use crate::harness::codex::{codex_rollouts, seed_codex_home, CodexSeed};
use crate::harness::copilot::{copilot_events, copilot_locks, seed_copilot_home, Copilot};
use crate::harness::droid::{
    droid_session, droid_session_cwd, droid_sessions, seed_droid_home, Droid,
};
use crate::harness::gemini::{gemini_chat_with, gemini_chats, seed_gemini_home, Gemini};
use crate::harness::kimi::{
    kimi_hook_record, kimi_sessions, kimi_wire, seed_kimi_home, trust_dialog, Kimi,
};
use crate::harness::mock::MockServer;
use crate::harness::opencode::{
    opencode_messages, opencode_sessions, seed_opencode_home, OcCli, Opencode,
};
use crate::harness::pi::{pi_record, pi_session_files, pi_sessions, seed_pi_home, Pi};
use crate::harness::procs::descendants;
use crate::harness::qwen::{qwen_registry, qwen_transcript, seed_qwen_home, Qwen};
use crate::harness::sandbox::Sandbox;
use crate::harness::util::Env;
use crate::harness::zellij::Zellij;

/// A pane's screen and keyboard, in tmux or in zellij.
pub trait Term {
    fn type_text(&self, pane: &str, text: &str);
    fn press_enter(&self, pane: &str);
    /// Empties the composer's line (Ctrl-U).
    fn clear_line(&self, pane: &str);
    fn screen(&self, pane: &str) -> String;
    fn wait_for(&self, pane: &str, regex: &str, timeout: Duration) -> Result<String, String>;
}

impl Term for Sandbox {
    fn type_text(&self, pane: &str, text: &str) {
        Sandbox::type_text(self, pane, text)
    }
    fn press_enter(&self, pane: &str) {
        Sandbox::press_enter(self, pane)
    }
    fn clear_line(&self, pane: &str) {
        self.send_keys(pane, &["C-u"])
    }
    fn screen(&self, pane: &str) -> String {
        self.capture(pane)
    }
    fn wait_for(&self, pane: &str, regex: &str, timeout: Duration) -> Result<String, String> {
        Sandbox::wait_for(self, pane, regex, timeout)
    }
}

impl Term for Zellij {
    fn type_text(&self, pane: &str, text: &str) {
        Zellij::type_text(self, pane, text)
    }
    fn press_enter(&self, pane: &str) {
        Zellij::press_enter(self, pane)
    }
    fn clear_line(&self, pane: &str) {
        self.cli(&["action", "write", "--pane-id", pane, "21"])
            .unwrap_or_else(|e| panic!("{e}"));
    }
    fn screen(&self, pane: &str) -> String {
        self.dump(pane)
    }
    fn wait_for(&self, pane: &str, regex: &str, timeout: Duration) -> Result<String, String> {
        Zellij::wait_for(self, pane, regex, timeout)
    }
}

/// What a contract case needs to know of an agent's screens and flags (all measured on the pinned
/// versions).
#[derive(Debug, Clone)]
pub struct Spec {
    /// The agent's name in `park ls` and in test names (`qwen`, `kilo`, ...).
    pub name: &'static str,
    /// The command typed at the shell prompt.
    pub program: &'static str,
    /// The empty composer is drawn: the TUI is up and accepts input.
    pub ready: &'static str,
    /// What the composer's line starts with (typed text shows after it).
    pub echo: &'static str,
    /// Start (first start in a HOME included) and reply timeouts.
    pub start: Duration,
    pub reply: Duration,
    /// How long the rollback case's park waits between its claim and its kill.
    pub pause_ms: u32,
    /// What a draft typed into the composer shows as, before the typed text (a regex).
    pub draft: &'static str,
    /// A refused park's row is `Live` with `guard_source` as its session source; `false`: only
    /// its status and a known session are awaited (OpenCode's row can show a state other than
    /// `Live` while a dialog is up).
    pub guard_live: bool,
    pub guard_source: Option<&'static str>,
    /// After `new_session`, park's row names the new session right away (a hook records it).
    pub rebinds_on_new: bool,
    /// A turn in flight is on screen.
    pub busy: &'static str,
    /// A permission prompt for a shell command is on screen; empty: the agent has none (pi runs
    /// every tool call unasked), and the guards case checks no permission prompt.
    pub permission: &'static str,
    /// The command that starts another session in the same process (`/clear`, `/new`).
    pub new_session: &'static str,
    /// Flags park replays on unpark, as typed, and as the argv pairs they must come back as.
    pub flags: &'static str,
    pub flag_pairs: &'static [(&'static str, &'static str)],
    /// Flags without a value park replays on unpark (typed in `flags` or in `program`).
    pub flag_words: &'static [&'static str],
    /// A park frees at least this many MiB (the agent's tree's memory); any park frees some.
    pub freed_mb: u64,
    /// How the resume names the session in argv (`--resume`, `-s`).
    pub resume_flag: &'static str,
    /// A flag park replays whose value the hostile test sets to a command substitution.
    pub hostile_flag: &'static str,
    /// At least this many processes in the agent's tree (wrapper, relaunched child, ...).
    pub min_tree: usize,
    /// `session_source` of a live row bound the usual way (after a turn), and of a resumed one
    /// before its first turn; `None`: not asserted.
    pub live_source: Option<&'static str>,
    pub resumed_source: Option<&'static str>,
    /// `session_source` once the resumed session has had a turn.
    pub turn_source: Option<&'static str>,
    /// `park integrate <name>` is needed for park to bind its sessions.
    pub integrate: bool,
    /// The refusal reasons a park gives for a moment after a reply (CPU, closing records).
    pub settling: &'static [&'static str],
    /// The agent's process hides its argv (a process title over it, Kimi Code): no flag can be
    /// read back from the resumed process, and none is replayed.
    pub argv_hidden: bool,
}

/// A real agent CLI at its pinned version, run offline against the mock.
pub trait RealAgent: Send + Sync {
    fn spec(&self) -> &Spec;
    /// Writes the agent's settings into the sandbox HOME.
    fn seed(&self, sb: &Sandbox, mock: &MockServer);
    /// The environment a pane running it gets.
    fn env(&self, sb: &Sandbox, mock: &MockServer) -> Env;

    /// The first turn(s) a session needs before park can name it; returns how many replies the
    /// screen then holds.
    fn first_turns(&self, t: &dyn Term, pane: &str, prompt: &str) -> usize {
        self.prompt(t, pane, prompt, 1);
        1
    }

    /// Whether `prompt` still sits unsent in the composer of `screen` (a TUI that drops an Enter
    /// arriving with the typed keys).
    fn unsent(&self, _screen: &str, _prompt: &str) -> bool {
        false
    }

    /// Types `prompt` and submits it: retyped when the keys were dropped, Enter pressed again
    /// while the composer still holds it.
    fn send(&self, t: &dyn Term, pane: &str, prompt: &str) {
        let shown = format!("{}.{}", self.spec().echo, regex::escape(prompt));
        for _ in 0..3 {
            t.type_text(pane, prompt);
            if t.wait_for(pane, &shown, Duration::from_secs(5)).is_ok() {
                break;
            }
            t.clear_line(pane);
        }
        t.press_enter(pane);
        for _ in 0..3 {
            std::thread::sleep(Duration::from_secs(2));
            if !self.unsent(&t.screen(pane), prompt) {
                return;
            }
            t.press_enter(pane);
        }
    }

    /// Sends `prompt` and waits until the screen holds `nth` canned replies.
    fn prompt(&self, t: &dyn Term, pane: &str, prompt: &str, nth: usize) {
        self.send(t, pane, prompt);
        let re = format!("(?s){}", vec![REPLY_RE; nth].join(".*"));
        if let Err(e) = t.wait_for(pane, &re, self.spec().reply) {
            panic!(
                "{}: no reply #{nth} to {prompt:?}: {e}{}",
                self.spec().name,
                debug_tail()
            );
        }
    }

    /// The processes a park of the row's `pid` kills: its whole tree, but a daemon the agent
    /// shares between its sessions (Cline's hub, started by the first TUI as its child).
    fn parked_tree(&self, pid: u32) -> Vec<u32> {
        tree(pid)
    }

    /// The processes of the agent under the row's `pid` that a refused park must leave alive
    /// (a helper it runs for a moment after a reply ends by itself).
    fn core_tree(&self, pid: u32) -> Vec<u32> {
        tree(pid)
    }

    /// Asserts that the agent's own records bind session `sid` to the process tree under `pid`
    /// (where they name a process) and hold `said`.
    fn assert_records(&self, sb: &Sandbox, dir: &Path, pid: u32, sid: &str, said: &str);

    /// The size of session `sid`'s records (lines, messages), which a turn grows; `said` is
    /// something said in it (to tell its real file from a stub).
    fn record_len(&self, sb: &Sandbox, dir: &Path, sid: &str, said: &str) -> usize;

    /// Whether session `sid`'s records hold `text`; `None` where they cannot be read as text.
    fn record_has(
        &self,
        sb: &Sandbox,
        dir: &Path,
        sid: &str,
        said: &str,
        text: &str,
    ) -> Option<bool>;

    /// The launch arguments of process `pid` as it was started (program first): its
    /// `/proc/<pid>/cmdline`, or where the agent overwrites that (pi sets its title), what the
    /// process itself reports of them.
    fn launch_argv(&self, _sb: &Sandbox, pid: u32) -> Vec<String> {
        argv(pid)
    }

    /// Whether the resumed process's `argv` names session `sid` the way park resumes it
    /// (`--resume <sid>`, `-s <sid>`; Codex: the `resume` subcommand, the id last).
    fn resumes(&self, argv: &[String], sid: &str) -> bool {
        argv.windows(2)
            .any(|p| p[0] == self.spec().resume_flag && p[1] == sid)
    }

    /// After the resumed session's next turn: its records name no writer but the resumed process
    /// `pid` (where the records name writers), and the turn went to the session's one record file.
    fn assert_sole_writer(&self, _sb: &Sandbox, _dir: &Path, _pid: u32, _sid: &str) {}

    /// How many sessions the agent's records hold for project `dir`; `None` where not countable.
    fn sessions_in(&self, _sb: &Sandbox, _dir: &Path) -> Option<usize> {
        None
    }

    /// After a `new_session` command in the process `pid` whose session was `old`: the agent's
    /// own records name another session for it. `None` where the records cannot tell.
    fn moved_on(&self, _sb: &Sandbox, _pid: u32, _old: &str) -> Option<bool> {
        None
    }

    /// The rollback case's change of session between park's scan and its kill, for the agent
    /// running `pid` in `pane` (in `dir`): its `new_session` command, typed in the pane. An agent
    /// with no session switch changes what identifies it instead (aider: a second aider starts
    /// on the same history file).
    fn change_session(&self, sb: &Sandbox, mock: &MockServer, pane: &str, _dir: &Path, _pid: u32) {
        let _ = mock;
        self.send(sb, pane, self.spec().new_session);
    }
}

/// The mock's canned reply.
pub const REPLY_RE: &str = r"canned reply #\d+\)\. PARKTEST-OK";

/// The pid and its descendants.
pub fn tree(pid: u32) -> Vec<u32> {
    let mut v = vec![pid];
    v.extend(descendants(pid));
    v
}

fn argv(pid: u32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|raw| {
            raw.split(|&b| b == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect()
        })
        .unwrap_or_default()
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_default()
}

/// Whether the directory `recorded` (as an agent wrote it down) is `dir`.
pub fn same_dir(recorded: &str, dir: &Path) -> bool {
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    canon(Path::new(recorded)) == canon(dir)
}

thread_local! {
    /// Debug logs the agents of this test thread write (a test runs on one thread), quoted when
    /// a prompt goes unanswered: what the agent read from its terminal says why.
    static DEBUG_LOGS: std::cell::RefCell<Vec<PathBuf>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// `path` is a debug log an agent of this test writes; [`debug_tail`] quotes it.
fn note_debug_log(path: PathBuf) {
    DEBUG_LOGS.with(|l| {
        let mut l = l.borrow_mut();
        if !l.contains(&path) {
            l.push(path);
        }
    });
}

/// The last lines of every debug log of this test thread.
fn debug_tail() -> String {
    DEBUG_LOGS.with(|l| {
        l.borrow()
            .iter()
            .map(|p| {
                let text = std::fs::read_to_string(p).unwrap_or_default();
                let lines: Vec<&str> = text.lines().collect();
                let tail = lines[lines.len().saturating_sub(80)..].join("\n");
                format!("\n--- last lines of {} ---\n{tail}", p.display())
            })
            .collect()
    })
}

fn with_tmpdir(sb: &Sandbox, mut env: Env) -> Env {
    env.push(("TMPDIR".into(), sb.tmp.to_string_lossy().into_owned()));
    env
}

/// Every agent the contract runs, by name.
pub fn real_agent(name: &str) -> Box<dyn RealAgent> {
    match name {
        "claude" => Box::new(ClaudeAgent),
        "codex" => Box::new(CodexAgent),
        "qwen" => Box::new(QwenAgent(Qwen::locate())),
        "copilot" => Box::new(CopilotAgent(Copilot::locate())),
        "gemini" => Box::new(GeminiAgent(Gemini::locate())),
        "opencode" => Box::new(OpencodeAgent::new(OcCli::Opencode)),
        "kilo" => Box::new(OpencodeAgent::new(OcCli::Kilo)),
        "aider" => Box::new(AiderAgent(Aider::locate())),
        "pi" => Box::new(PiAgent(Pi::locate())),
        "kimi" => Box::new(KimiAgent(Kimi::locate())),
        "droid" => Box::new(DroidAgent(Droid::locate())),
        "cline" => Box::new(ClineAgent(Cline::locate())),
        _ => panic!("no real agent {name}"),
    }
}

/// Whether `scripts/setup` said it could not install `name` here (Qwen Code, pi: off x86_64
/// Linux without a system node new enough): the reason, after which its tests are skipped.
pub fn skipped(name: &str) -> Option<String> {
    match name {
        "qwen" => Qwen::try_locate().err().filter(|e| e.contains("skipped")),
        "pi" => Pi::try_locate().err().filter(|e| e.contains("skipped")),
        "kimi" => Kimi::try_locate().err().filter(|e| e.contains("skipped")),
        "droid" => Droid::try_locate().err().filter(|e| e.contains("skipped")),
        _ => None,
    }
}

// ---- Claude Code ----

pub struct ClaudeAgent;

/// `--permission-mode default`: 2.1.332 starts in auto mode, whose classifier would answer the
/// guards case's permission prompt itself.
static CLAUDE: Spec = Spec {
    // A no-break space after the prompt sign.
    draft: r"(?m)^❯.",
    guard_live: true,
    guard_source: Some("status-file"),
    rebinds_on_new: true,
    name: "claude",
    program: "claude --permission-mode default",
    ready: CLAUDE_READY,
    echo: "❯",
    start: Duration::from_secs(60),
    reply: Duration::from_secs(60),
    pause_ms: 4000,
    busy: "esc to interrupt",
    permission: "Do you want to proceed",
    new_session: "/clear",
    flags: "--dangerously-skip-permissions --model opus",
    flag_pairs: &[("--model", "opus"), ("--permission-mode", "default")],
    flag_words: &["--dangerously-skip-permissions"],
    freed_mb: 50,
    resume_flag: "--resume",
    hostile_flag: "--model",
    min_tree: 1,
    live_source: Some("status-file"),
    resumed_source: Some("status-file"),
    turn_source: Some("status-file"),
    integrate: false,
    settling: &["CPU", "turn in flight"],
    argv_hidden: false,
};

impl ClaudeAgent {
    /// Live processes whose status file (`~/.claude/sessions/<pid>.json`) names `sid`.
    fn holders(home: &Path, sid: &str) -> Vec<u32> {
        claude_session_files(home)
            .into_iter()
            .filter(|(p, v)| {
                crate::harness::procs::pid_alive(*p)
                    && v.get("sessionId").and_then(|s| s.as_str()) == Some(sid)
            })
            .map(|(p, _)| p)
            .collect()
    }

    fn transcript(home: &Path, dir: &Path, sid: &str) -> PathBuf {
        let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        claude_transcript(home, &dir, sid)
    }
}

impl RealAgent for ClaudeAgent {
    fn spec(&self) -> &Spec {
        &CLAUDE
    }
    fn seed(&self, sb: &Sandbox, _mock: &MockServer) {
        seed_claude_home(&sb.home, &sb.work, CLAUDE_API_KEY).expect("seed claude home");
    }
    fn env(&self, sb: &Sandbox, mock: &MockServer) -> Env {
        sb.claude_env(mock)
    }
    fn assert_records(&self, sb: &Sandbox, dir: &Path, pid: u32, sid: &str, said: &str) {
        // One live process says it runs `sid`, and it is this one's tree.
        let t = tree(pid);
        let holders = Self::holders(&sb.home, sid);
        assert!(
            holders.len() == 1 && t.contains(&holders[0]),
            "{sid}: status files of {holders:?}, tree {t:?}"
        );
        let path = Self::transcript(&sb.home, dir, sid);
        assert!(read(&path).contains(said), "{said:?} in {}", path.display());
    }
    fn assert_sole_writer(&self, sb: &Sandbox, dir: &Path, pid: u32, sid: &str) {
        self.assert_records(sb, dir, pid, sid, "");
    }
    fn record_len(&self, sb: &Sandbox, dir: &Path, sid: &str, _said: &str) -> usize {
        read(&Self::transcript(&sb.home, dir, sid)).lines().count()
    }
    fn record_has(&self, sb: &Sandbox, dir: &Path, sid: &str, _: &str, text: &str) -> Option<bool> {
        Some(read(&Self::transcript(&sb.home, dir, sid)).contains(text))
    }
    fn sessions_in(&self, sb: &Sandbox, dir: &Path) -> Option<usize> {
        let any = Self::transcript(&sb.home, dir, "x");
        let n = std::fs::read_dir(any.parent()?)
            .ok()?
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".jsonl"))
            .count();
        Some(n)
    }
    fn moved_on(&self, sb: &Sandbox, pid: u32, old: &str) -> Option<bool> {
        let t = tree(pid);
        let now: Vec<String> = claude_session_files(&sb.home)
            .into_iter()
            .filter(|(p, _)| t.contains(p))
            .filter_map(|(_, v)| v.get("sessionId")?.as_str().map(str::to_string))
            .collect();
        Some(now.len() == 1 && now[0] != old)
    }
}

// ---- Codex (the plain TUI: `--no-daemon`; daemon mode is e2e_codex's) ----

pub struct CodexAgent;

/// `-a on-request` (0.171 knows only it and `never`): Codex asks when the model asks to run a
/// command outside the sandbox, which the guards case's `[asktool …]` does.
static CODEX: Spec = Spec {
    draft: r"(?m)^› ",
    guard_live: true,
    guard_source: Some("rollout-fd"),
    rebinds_on_new: false,
    name: "codex",
    program: "codex --no-daemon -a on-request",
    ready: "Ask Codex to do anything",
    echo: "›",
    start: Duration::from_secs(90),
    reply: Duration::from_secs(90),
    pause_ms: 4000,
    busy: "esc to interrupt",
    permission: "Would you like to run the following command",
    new_session: "/new",
    flags: "-s workspace-write",
    flag_pairs: &[("-s", "workspace-write"), ("-a", "on-request")],
    flag_words: &["--no-daemon"],
    freed_mb: 0,
    resume_flag: "resume",
    hostile_flag: "-m",
    min_tree: 2,
    live_source: Some("rollout-fd"),
    resumed_source: Some("rollout-fd"),
    turn_source: Some("rollout-fd"),
    integrate: false,
    settling: &["CPU", "turn in flight"],
    argv_hidden: false,
};

impl CodexAgent {
    /// The rollout file(s) of thread `sid`.
    fn rollouts(home: &Path, sid: &str) -> Vec<PathBuf> {
        codex_rollouts(home)
            .into_iter()
            .filter(|p| p.to_string_lossy().contains(sid))
            .collect()
    }

    fn rollout_text(home: &Path, sid: &str) -> String {
        Self::rollouts(home, sid)
            .first()
            .map(|p| read(p))
            .unwrap_or_default()
    }

    /// The rollouts the processes of `pid`'s tree hold open.
    fn held(home: &Path, pid: u32) -> Vec<PathBuf> {
        let all = codex_rollouts(home);
        let mut out: Vec<PathBuf> = tree(pid)
            .into_iter()
            .flat_map(|p| {
                std::fs::read_dir(format!("/proc/{p}/fd"))
                    .into_iter()
                    .flatten()
                    .flatten()
                    .filter_map(|e| std::fs::read_link(e.path()).ok())
                    .collect::<Vec<_>>()
            })
            .filter(|l| all.contains(l))
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// The `cwd` of a rollout's `session_meta` (its first line).
    fn cwd_of(rollout: &Path) -> Option<String> {
        let text = read(rollout);
        let v: serde_json::Value = serde_json::from_str(text.lines().next()?).ok()?;
        v.pointer("/payload/cwd")?.as_str().map(str::to_string)
    }
}

impl RealAgent for CodexAgent {
    fn spec(&self) -> &Spec {
        &CODEX
    }
    fn seed(&self, sb: &Sandbox, mock: &MockServer) {
        seed_codex_home(&sb.home, &sb.work, mock, &CodexSeed::default()).expect("seed codex home");
    }
    fn env(&self, sb: &Sandbox, _mock: &MockServer) -> Env {
        sb.codex_env()
    }
    fn resumes(&self, argv: &[String], sid: &str) -> bool {
        argv.iter().any(|a| a == "resume") && argv.last().map(String::as_str) == Some(sid)
    }
    fn assert_records(&self, sb: &Sandbox, _dir: &Path, pid: u32, sid: &str, said: &str) {
        // The tree holds the thread's one rollout open, and it holds what was said.
        let mine = Self::rollouts(&sb.home, sid);
        assert_eq!(mine.len(), 1, "one rollout for {sid}: {mine:?}");
        assert_eq!(
            Self::held(&sb.home, pid),
            mine,
            "the rollout {pid}'s tree holds"
        );
        assert!(
            read(&mine[0]).contains(said),
            "{said:?} in {}",
            mine[0].display()
        );
    }
    fn assert_sole_writer(&self, sb: &Sandbox, dir: &Path, pid: u32, sid: &str) {
        self.assert_records(sb, dir, pid, sid, "");
    }
    fn record_len(&self, sb: &Sandbox, _dir: &Path, sid: &str, _said: &str) -> usize {
        Self::rollout_text(&sb.home, sid).lines().count()
    }
    fn record_has(&self, sb: &Sandbox, _: &Path, sid: &str, _: &str, text: &str) -> Option<bool> {
        Some(Self::rollout_text(&sb.home, sid).contains(text))
    }
    fn sessions_in(&self, sb: &Sandbox, dir: &Path) -> Option<usize> {
        Some(
            codex_rollouts(&sb.home)
                .iter()
                .filter(|p| Self::cwd_of(p).is_some_and(|c| same_dir(&c, dir)))
                .count(),
        )
    }
}

// ---- Qwen Code ----

pub struct QwenAgent(pub Qwen);

static QWEN: Spec = Spec {
    draft: r"(?m)^> ",
    guard_live: true,
    guard_source: Some("status-file"),
    rebinds_on_new: false,
    name: "qwen",
    program: "qwen",
    ready: r"(?m)^>   Type your message or @path/to/file",
    echo: ">",
    start: Duration::from_secs(90),
    reply: Duration::from_secs(90),
    pause_ms: 4000,
    busy: r"esc to cancel\)",
    permission: "Waiting for user confirmation",
    new_session: "/clear",
    flags: "--approval-mode default",
    flag_pairs: &[("--approval-mode", "default")],
    flag_words: &[],
    freed_mb: 0,
    resume_flag: "--resume",
    hostile_flag: "-m",
    min_tree: 3,
    live_source: Some("status-file"),
    resumed_source: Some("status-file"),
    turn_source: Some("status-file"),
    integrate: false,
    // Its reply shows on screen before the chat file closes the turn.
    settling: &["CPU", "turn in flight"],
    argv_hidden: false,
};

impl QwenAgent {
    fn registered(home: &Path, pid: u32) -> Option<String> {
        qwen_registry(home)
            .into_iter()
            .find(|(p, _)| *p == pid)
            .and_then(|(_, v)| v.get("sessionId")?.as_str().map(str::to_string))
    }
}

impl RealAgent for QwenAgent {
    fn spec(&self) -> &Spec {
        &QWEN
    }
    fn seed(&self, sb: &Sandbox, _mock: &MockServer) {
        seed_qwen_home(&sb.home).expect("seed qwen home");
    }
    fn env(&self, sb: &Sandbox, mock: &MockServer) -> Env {
        // Its scratch (the registry's IPC sockets) goes to the sandbox's tmp.
        with_tmpdir(sb, self.0.env(mock, &sb.home, sb.path_env()))
    }
    fn core_tree(&self, pid: u32) -> Vec<u32> {
        tree(pid)
            .into_iter()
            .filter(|&p| argv(p).iter().any(|a| a.contains("qwen")))
            .collect()
    }
    fn assert_records(&self, sb: &Sandbox, dir: &Path, pid: u32, sid: &str, said: &str) {
        // Exactly one process of the tree registered, and with this session.
        let t = tree(pid);
        let registered: Vec<String> = t
            .iter()
            .filter_map(|&p| Self::registered(&sb.home, p))
            .collect();
        assert_eq!(registered, vec![sid.to_string()], "registry of {t:?}");
        let chat = qwen_transcript(&sb.home, dir, sid);
        assert!(read(&chat).contains(said), "{said:?} in {}", chat.display());
    }
    fn record_len(&self, sb: &Sandbox, dir: &Path, sid: &str, _said: &str) -> usize {
        read(&qwen_transcript(&sb.home, dir, sid)).lines().count()
    }
    fn record_has(&self, sb: &Sandbox, dir: &Path, sid: &str, _: &str, text: &str) -> Option<bool> {
        Some(read(&qwen_transcript(&sb.home, dir, sid)).contains(text))
    }
    fn sessions_in(&self, sb: &Sandbox, dir: &Path) -> Option<usize> {
        let chats = qwen_transcript(&sb.home, dir, "x");
        let n = std::fs::read_dir(chats.parent()?)
            .ok()?
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".jsonl"))
            .count();
        Some(n)
    }
    fn moved_on(&self, sb: &Sandbox, pid: u32, old: &str) -> Option<bool> {
        let inner = *tree(pid).last()?;
        let now = Self::registered(&sb.home, inner);
        Some(now.is_some() && now.as_deref() != Some(old))
    }
}

// ---- Copilot CLI ----

pub struct CopilotAgent(pub Copilot);

static COPILOT: Spec = Spec {
    draft: r"(?m)^❯ ",
    guard_live: true,
    guard_source: None,
    rebinds_on_new: false,
    name: "copilot",
    program: "copilot",
    // The empty composer between its two rules, and the idle footer under them.
    ready: r"(?m)^❯\s*\n─+\n (← open sidebar|Interactive)",
    echo: "❯",
    start: Duration::from_secs(60),
    reply: Duration::from_secs(60),
    pause_ms: 4000,
    busy: "Working",
    permission: "Do you want to run this command",
    new_session: "/clear",
    flags: "--allow-tool 'shell(echo)' --model gpt-4.1",
    flag_pairs: &[("--allow-tool", "shell(echo)"), ("--model", "gpt-4.1")],
    flag_words: &[],
    freed_mb: 0,
    resume_flag: "--resume",
    hostile_flag: "--disable-mcp-server",
    min_tree: 2,
    live_source: Some("lock"),
    // Before its first turn a resumed Copilot holds no lock: its own log names the session.
    resumed_source: Some("process-log"),
    turn_source: None,
    integrate: false,
    settling: &["CPU", "turn in flight"],
    argv_hidden: false,
};

/// The native process under the loader `pid` (the last of its tree named copilot).
pub fn copilot_native(pid: u32) -> u32 {
    tree(pid)
        .into_iter()
        .rfind(|&p| {
            argv(p)
                .iter()
                .take(2)
                .any(|a| a.ends_with("copilot-linux-x64/copilot") || a.ends_with("/copilot"))
        })
        .unwrap_or(pid)
}

impl RealAgent for CopilotAgent {
    fn spec(&self) -> &Spec {
        &COPILOT
    }
    fn seed(&self, sb: &Sandbox, _mock: &MockServer) {
        seed_copilot_home(&sb.home, &sb.work).expect("seed copilot home");
    }
    fn env(&self, sb: &Sandbox, mock: &MockServer) -> Env {
        with_tmpdir(sb, self.0.env(mock, &sb.home, sb.path_env()))
    }
    fn unsent(&self, screen: &str, prompt: &str) -> bool {
        Regex::new(&format!("(?m)^❯ {}", regex::escape(prompt)))
            .unwrap()
            .is_match(screen)
    }
    fn assert_records(&self, sb: &Sandbox, _dir: &Path, pid: u32, sid: &str, said: &str) {
        let native = copilot_native(pid);
        assert_ne!(native, pid, "loader and native: {:?}", tree(pid));
        assert_eq!(copilot_locks(&sb.home, native), vec![sid.to_string()]);
        assert!(read(&copilot_events(&sb.home, sid)).contains(said));
    }
    fn record_len(&self, sb: &Sandbox, _dir: &Path, sid: &str, _said: &str) -> usize {
        read(&copilot_events(&sb.home, sid)).lines().count()
    }
    fn record_has(&self, sb: &Sandbox, _: &Path, sid: &str, _: &str, text: &str) -> Option<bool> {
        Some(read(&copilot_events(&sb.home, sid)).contains(text))
    }
    fn moved_on(&self, sb: &Sandbox, pid: u32, old: &str) -> Option<bool> {
        let now = copilot_locks(&sb.home, copilot_native(pid));
        Some(now.len() == 1 && now[0] != old)
    }
}

// ---- Gemini CLI ----

pub struct GeminiAgent(pub Gemini);

static GEMINI: Spec = Spec {
    draft: r"(?m)^ > ",
    guard_live: true,
    guard_source: None,
    rebinds_on_new: true,
    name: "gemini",
    program: "gemini",
    ready: r"(?m)^ >   Type your message or @path/to/file",
    echo: ">",
    start: Duration::from_secs(90),
    reply: Duration::from_secs(60),
    pause_ms: 5000,
    busy: "esc to cancel",
    permission: "Allow execution",
    new_session: "/clear",
    flags: "--approval-mode auto_edit",
    flag_pairs: &[("--approval-mode", "auto_edit")],
    flag_words: &[],
    freed_mb: 0,
    resume_flag: "--resume",
    hostile_flag: "--policy",
    min_tree: 2,
    live_source: Some("hook"),
    resumed_source: None,
    turn_source: None,
    integrate: true,
    settling: &["CPU", "turn in flight"],
    argv_hidden: false,
};

impl RealAgent for GeminiAgent {
    fn spec(&self) -> &Spec {
        &GEMINI
    }
    fn seed(&self, sb: &Sandbox, _mock: &MockServer) {
        seed_gemini_home(&sb.home, &sb.work).expect("seed gemini home");
    }
    fn env(&self, sb: &Sandbox, mock: &MockServer) -> Env {
        // Gemini's own debug log, with every key it read (`debugKeystrokeLogging`, seeded): an
        // unanswered prompt quotes it (a zellij round trip once saw 4 Enters ignored).
        let log = sb.tmp.join("gemini-debug.log");
        note_debug_log(log.clone());
        let mut env = with_tmpdir(sb, self.0.env(mock, &sb.home, sb.path_env()));
        env.push((
            "GEMINI_DEBUG_LOG_FILE".into(),
            log.to_string_lossy().into_owned(),
        ));
        env
    }
    fn unsent(&self, screen: &str, prompt: &str) -> bool {
        // Still in the composer: below the last full-width rule (above it, the line is the
        // scrollback's copy of a prompt that was sent; a dialog hides the composer).
        let still = Regex::new(&format!("(?m)^ > {}\\s*$", regex::escape(prompt))).unwrap();
        let lines: Vec<&str> = screen.lines().collect();
        let rule = lines.iter().rposition(|l| l.starts_with("──────────"));
        rule.is_some_and(|r| lines[r..].iter().any(|l| still.is_match(l)))
    }
    fn assert_records(&self, sb: &Sandbox, _dir: &Path, _pid: u32, sid: &str, said: &str) {
        // Gemini keeps no per-process record: its chat file headed with `sid` holds what was
        // said, and no other file does under that id (park's hook names the process).
        let chats = gemini_chats(&sb.home);
        let with: Vec<_> = chats
            .iter()
            .filter(|(p, _)| read(p).contains(said))
            .collect();
        assert_eq!(
            gemini_chat_with(&sb.home, sid, said).len(),
            1,
            "{sid} said {said:?}; chats holding it: {with:?}; all: {chats:?}"
        );
    }
    fn record_len(&self, sb: &Sandbox, _dir: &Path, sid: &str, said: &str) -> usize {
        gemini_chat_with(&sb.home, sid, said)
            .first()
            .map_or(0, |p| read(p).lines().count())
    }
    fn record_has(
        &self,
        sb: &Sandbox,
        _: &Path,
        sid: &str,
        said: &str,
        text: &str,
    ) -> Option<bool> {
        Some(
            gemini_chat_with(&sb.home, sid, said)
                .first()
                .is_some_and(|p| read(p).contains(text)),
        )
    }
}

// ---- OpenCode and Kilo ----

pub struct OpencodeAgent {
    pub oc: Opencode,
    spec: Spec,
}

impl OpencodeAgent {
    pub fn new(cli: OcCli) -> OpencodeAgent {
        let spec = Spec {
            draft: "┃  ",
            guard_live: false,
            guard_source: None,
            rebinds_on_new: false,
            name: cli.name(),
            program: cli.name(),
            // The composer's agent and model line (`Build · …`; Kilo: `Code  · …`).
            ready: r"┃  \w+ +· Mock Model",
            echo: "┃ ",
            // The first start in a HOME npm-installs OpenCode's plugin package.
            start: Duration::from_secs(120),
            reply: Duration::from_secs(60),
            pause_ms: 4000,
            busy: "esc interrupt",
            permission: "Permission required",
            new_session: "/new",
            flags: "--model mock/mock-model",
            flag_pairs: &[("--model", "mock/mock-model")],
            flag_words: &[],
            freed_mb: 0,
            resume_flag: "-s",
            hostile_flag: "--mdns-domain",
            min_tree: 1,
            live_source: Some("plugin"),
            // Resumed by argv until its first prompt, then by the plugin again.
            resumed_source: Some("argv"),
            turn_source: Some("plugin"),
            integrate: true,
            settling: &["CPU", "turn in flight"],
            argv_hidden: false,
        };
        OpencodeAgent {
            oc: Opencode::locate_cli(cli),
            spec,
        }
    }

    pub fn db(&self, sb: &Sandbox) -> PathBuf {
        self.oc.db(&sb.home)
    }
}

impl RealAgent for OpencodeAgent {
    fn spec(&self) -> &Spec {
        &self.spec
    }
    fn seed(&self, sb: &Sandbox, mock: &MockServer) {
        seed_opencode_home(&sb.home, mock).expect("seed opencode home");
    }
    fn env(&self, sb: &Sandbox, _mock: &MockServer) -> Env {
        with_tmpdir(sb, self.oc.env(&sb.home, sb.path_env()))
    }
    /// Kilo titles a session only at its second prompt, and until then its terminal title cannot
    /// confirm which session the pane shows: it gets a second turn.
    fn first_turns(&self, t: &dyn Term, pane: &str, prompt: &str) -> usize {
        self.prompt(t, pane, prompt, 1);
        if self.oc.cli == OcCli::Kilo {
            self.prompt(t, pane, "and a second turn so that Kilo titles it", 2);
            return 2;
        }
        1
    }
    /// The refusal leaves the root alive (its workers come and go by themselves).
    fn core_tree(&self, pid: u32) -> Vec<u32> {
        vec![pid]
    }
    fn assert_records(&self, sb: &Sandbox, dir: &Path, _pid: u32, sid: &str, _said: &str) {
        // The database has the session, in this directory, with the turn's messages.
        assert!(sid.starts_with("ses_"), "{sid}");
        let n = opencode_messages(&self.db(sb), sid).unwrap_or(0);
        assert!(n >= 2, "{sid}: {n} messages");
        let d = dir.to_string_lossy();
        assert!(
            opencode_sessions(&self.db(sb))
                .iter()
                .any(|(id, dd, _)| id == sid && same_dir(dd, dir)),
            "{sid} in {d}: {:?}",
            opencode_sessions(&self.db(sb))
        );
    }
    fn record_len(&self, sb: &Sandbox, _dir: &Path, sid: &str, _said: &str) -> usize {
        opencode_messages(&self.db(sb), sid).unwrap_or(0)
    }
    fn record_has(&self, _: &Sandbox, _: &Path, _: &str, _: &str, _: &str) -> Option<bool> {
        None
    }
    fn sessions_in(&self, sb: &Sandbox, dir: &Path) -> Option<usize> {
        Some(
            opencode_sessions(&self.db(sb))
                .iter()
                .filter(|(_, dd, _)| same_dir(dd, dir))
                .count(),
        )
    }
}

// ---- aider ----

pub struct AiderAgent(pub Aider);

/// Each aider gets its own history file (`$RANDOM`, expanded by the pane's shell): two aiders on
/// one file are untargetable (`e2e_aider` covers that). The seed sets the model and the `diff`
/// edit format (the prompt reads `diff> `).
static AIDER: Spec = Spec {
    draft: r"(?m)^diff> ",
    guard_live: true,
    guard_source: Some("argv"),
    rebinds_on_new: false,
    name: "aider",
    program: "aider --chat-history-file .aider.chat.$RANDOM$RANDOM.md",
    ready: r"(?m)^diff> *$",
    echo: "diff>",
    start: Duration::from_secs(120),
    reply: Duration::from_secs(60),
    pause_ms: 5000,
    busy: "Waiting for openai/mock-model",
    permission: r"Run shell command\? \(Y\)es/\(N\)o",
    new_session: "/clear",
    flags: "--model openai/mock-model --no-auto-lint",
    flag_pairs: &[("--model", "openai/mock-model")],
    flag_words: &["--no-auto-lint"],
    freed_mb: 50,
    resume_flag: "--restore-chat-history",
    hostile_flag: "--weak-model",
    min_tree: 1,
    live_source: Some("argv"),
    resumed_source: Some("argv"),
    turn_source: Some("argv"),
    integrate: false,
    settling: &["CPU", "turn in flight"],
    argv_hidden: false,
};

impl AiderAgent {
    fn text(dir: &Path, sid: &str) -> String {
        aider_history_of(dir, sid)
            .map(|p| read(&p))
            .unwrap_or_default()
    }
}

impl RealAgent for AiderAgent {
    fn spec(&self) -> &Spec {
        &AIDER
    }
    fn seed(&self, sb: &Sandbox, _mock: &MockServer) {
        seed_aider_home(&sb.home).expect("seed aider home");
    }
    /// Waits for the reply under this prompt's own line: a restored aider does not redraw the
    /// turns before it, so the screen after a resume (zellij clears it) holds only the new ones.
    fn prompt(&self, t: &dyn Term, pane: &str, prompt: &str, nth: usize) {
        self.send(t, pane, prompt);
        let re = format!("(?s)diff> {}\\s*\\n.*{REPLY_RE}", regex::escape(prompt));
        if let Err(e) = t.wait_for(pane, &re, self.spec().reply) {
            panic!("aider: no reply #{nth} to {prompt:?}: {e}");
        }
    }
    fn env(&self, sb: &Sandbox, mock: &MockServer) -> Env {
        with_tmpdir(sb, self.0.env(mock, &sb.home, sb.path_env()))
    }
    /// `--chat-history-file <the file of sid>` and `--restore-chat-history`.
    fn resumes(&self, argv: &[String], sid: &str) -> bool {
        argv.iter().any(|a| a == "--restore-chat-history")
            && argv
                .windows(2)
                .any(|w| w[0] == "--chat-history-file" && aider_session_id(Path::new(&w[1])) == sid)
    }
    fn assert_records(&self, _sb: &Sandbox, dir: &Path, pid: u32, sid: &str, said: &str) {
        // The process's own history file is the session's, and it holds what was said.
        let h = aider_history(pid).expect("--chat-history-file in argv");
        assert_eq!(aider_session_id(&h), sid, "{}", h.display());
        assert!(same_dir(&h.parent().unwrap().to_string_lossy(), dir));
        assert!(read(&h).contains(said), "{said:?} in {}", h.display());
    }
    fn record_len(&self, _sb: &Sandbox, dir: &Path, sid: &str, _said: &str) -> usize {
        Self::text(dir, sid).lines().count()
    }
    fn record_has(&self, _: &Sandbox, dir: &Path, sid: &str, _: &str, text: &str) -> Option<bool> {
        Some(Self::text(dir, sid).contains(text))
    }
    fn sessions_in(&self, _sb: &Sandbox, dir: &Path) -> Option<usize> {
        Some(aider_histories(dir).len())
    }
    /// aider has no session switch (`/clear` keeps its history file): a second aider starts on
    /// the same history file, in a window of its own, which makes the first one's identity
    /// ambiguous.
    fn change_session(&self, sb: &Sandbox, mock: &MockServer, _pane: &str, dir: &Path, pid: u32) {
        let h = aider_history(pid).expect("--chat-history-file in argv");
        let env = self.env(sb, mock);
        let second = sb.new_shell_window("w", "aider-second", dir, &env);
        sb.type_line(
            &second,
            &format!(
                "aider --chat-history-file {}",
                crate::harness::util::sh_quote(&h.to_string_lossy())
            ),
        );
    }
}

// ---- pi ----

pub struct PiAgent(pub Pi);

static PI: Spec = Spec {
    // The editor's text starts its line, under the upper rule.
    draft: r"(?m)^",
    guard_live: true,
    guard_source: Some("extension"),
    rebinds_on_new: true,
    name: "pi",
    program: "pi --model mock/mock-model",
    // The empty editor between its two rules, the cwd under them.
    ready: r"(?m)^─{20,}\n\s*\n─{20,}\n",
    echo: "(?s)─",
    start: Duration::from_secs(60),
    reply: Duration::from_secs(60),
    pause_ms: 4000,
    // The upper rule's label while a run is in flight.
    busy: "── . Working",
    // pi has no permission prompts.
    permission: "",
    new_session: "/new",
    flags: "--thinking off",
    flag_pairs: &[("--model", "mock/mock-model"), ("--thinking", "off")],
    flag_words: &[],
    freed_mb: 0,
    resume_flag: "--session",
    hostile_flag: "--append-system-prompt",
    min_tree: 1,
    live_source: Some("extension"),
    resumed_source: Some("extension"),
    turn_source: Some("extension"),
    integrate: true,
    settling: &["CPU", "turn in flight"],
    argv_hidden: false,
};

impl RealAgent for PiAgent {
    fn spec(&self) -> &Spec {
        &PI
    }
    fn seed(&self, sb: &Sandbox, mock: &MockServer) {
        seed_pi_home(&sb.home, mock).expect("seed pi home");
    }
    fn env(&self, sb: &Sandbox, _mock: &MockServer) -> Env {
        with_tmpdir(sb, self.0.env(&sb.home, sb.path_env()))
    }
    /// pi's cmdline is its title (`pi`): the arguments are those pi reports through park's
    /// extension (`process.argv`, recorded at its `session_start`).
    fn launch_argv(&self, sb: &Sandbox, pid: u32) -> Vec<String> {
        let rec = pi_record(&sb.park_home, pid).unwrap_or_default();
        let mut v = vec!["pi".to_string()];
        v.extend(
            rec.get("argv")
                .and_then(|a| a.as_array())
                .into_iter()
                .flatten()
                .filter_map(|a| a.as_str().map(str::to_string)),
        );
        v
    }
    fn assert_records(&self, sb: &Sandbox, dir: &Path, _pid: u32, sid: &str, said: &str) {
        // pi keeps no per-process record: one session file of the cwd is headed with `sid`, and
        // it holds what was said.
        let files = pi_session_files(&sb.home, dir, sid);
        assert_eq!(files.len(), 1, "{sid}: {:?}", pi_sessions(&sb.home, dir));
        assert!(
            read(&files[0]).contains(said),
            "{said:?} in {}",
            files[0].display()
        );
    }
    fn record_len(&self, sb: &Sandbox, dir: &Path, sid: &str, _said: &str) -> usize {
        pi_session_files(&sb.home, dir, sid)
            .first()
            .map_or(0, |p| read(p).lines().count())
    }
    fn record_has(&self, sb: &Sandbox, dir: &Path, sid: &str, _: &str, text: &str) -> Option<bool> {
        Some(
            pi_session_files(&sb.home, dir, sid)
                .first()
                .is_some_and(|p| read(p).contains(text)),
        )
    }
    fn sessions_in(&self, sb: &Sandbox, dir: &Path) -> Option<usize> {
        Some(pi_sessions(&sb.home, dir).len())
    }
    fn moved_on(&self, sb: &Sandbox, pid: u32, old: &str) -> Option<bool> {
        let now = pi_record(&sb.park_home, pid)?;
        let sid = now.get("session_id")?.as_str()?.to_string();
        Some(sid != old)
    }
}

// ---- Kimi Code ----

pub struct KimiAgent(pub Kimi);

static KIMI: Spec = Spec {
    draft: "│ > ",
    guard_live: true,
    guard_source: Some("hook"),
    rebinds_on_new: true,
    name: "kimi",
    program: "kimi",
    // The empty composer box; or, at a first start in a directory, the folder-trust dialog
    // (`first_turns` answers it).
    ready: r"│ > +│|Trust this folder\?",
    echo: "│ >",
    start: Duration::from_secs(60),
    reply: Duration::from_secs(60),
    pause_ms: 5000,
    busy: "[🌑🌒🌓🌔🌕🌖🌗🌘]",
    permission: r"Run this command\?",
    new_session: "/new",
    // Its argv is hidden: nothing to type that could come back.
    flags: "",
    flag_pairs: &[],
    flag_words: &[],
    freed_mb: 100,
    resume_flag: "-S",
    // `--add-dir` must name a directory that exists, or the first prompt fails.
    hostile_flag: "--skills-dir",
    min_tree: 1,
    live_source: Some("hook"),
    resumed_source: Some("hook"),
    turn_source: Some("hook"),
    integrate: true,
    settling: &["CPU", "turn in flight"],
    argv_hidden: true,
};

impl RealAgent for KimiAgent {
    fn spec(&self) -> &Spec {
        &KIMI
    }
    fn seed(&self, sb: &Sandbox, mock: &MockServer) {
        seed_kimi_home(&sb.home, mock).expect("seed kimi home");
    }
    fn env(&self, sb: &Sandbox, _mock: &MockServer) -> Env {
        with_tmpdir(sb, self.0.env(&sb.home, sb.path_env()))
    }
    /// A first start in a directory asks to trust it: Enter trusts it (Kimi remembers).
    fn first_turns(&self, t: &dyn Term, pane: &str, prompt: &str) -> usize {
        if trust_dialog(&t.screen(pane)) {
            t.press_enter(pane);
            if let Err(e) = t.wait_for(pane, r"│ > +│", Duration::from_secs(30)) {
                panic!("kimi: no composer after the trust dialog: {e}");
            }
        }
        self.prompt(t, pane, prompt, 1);
        1
    }
    fn unsent(&self, screen: &str, prompt: &str) -> bool {
        screen.contains(&format!("│ > {prompt}"))
    }
    fn assert_records(&self, sb: &Sandbox, dir: &Path, pid: u32, sid: &str, said: &str) {
        // Kimi's sessions name no process: its own hook said which session this process runs
        // (park's record of it), and the session's files hold what was said, in this directory.
        let rec = kimi_hook_record(&sb.park_home, pid).expect("the hook's record of the process");
        assert_eq!(rec["session_id"].as_str(), Some(sid), "{rec}");
        let wire = kimi_wire(&sb.home, sid).expect("the session's wire.jsonl");
        assert!(read(&wire).contains(said), "{}", wire.display());
        let state = &kimi_sessions(&sb.home)
            .into_iter()
            .find(|(p, _)| p.ends_with(sid))
            .expect("its state.json")
            .1;
        assert!(
            same_dir(state["cwd"].as_str().unwrap_or_default(), dir),
            "{state}"
        );
    }
    fn record_len(&self, sb: &Sandbox, _dir: &Path, sid: &str, _said: &str) -> usize {
        kimi_wire(&sb.home, sid).map_or(0, |p| read(&p).lines().count())
    }
    fn record_has(&self, sb: &Sandbox, _: &Path, sid: &str, _: &str, text: &str) -> Option<bool> {
        Some(kimi_wire(&sb.home, sid).is_some_and(|p| read(&p).contains(text)))
    }
    /// The title is all the resumed process shows; the session is the hook's (`back.session_id`).
    fn resumes(&self, argv: &[String], _sid: &str) -> bool {
        argv == ["kimi-code"]
    }
    fn sessions_in(&self, sb: &Sandbox, dir: &Path) -> Option<usize> {
        Some(
            kimi_sessions(&sb.home)
                .iter()
                .filter(|(_, st)| same_dir(st["cwd"].as_str().unwrap_or_default(), dir))
                .count(),
        )
    }
    /// `/new` runs the old session's `SessionEnd` hook, then the new one's `SessionStart`: the
    /// record names the new session a moment after the command.
    fn moved_on(&self, sb: &Sandbox, pid: u32, old: &str) -> Option<bool> {
        let now = || {
            kimi_hook_record(&sb.park_home, pid)
                .and_then(|r| r["session_id"].as_str().map(str::to_string))
        };
        let deadline = std::time::Instant::now() + Duration::from_secs(15);
        while std::time::Instant::now() < deadline {
            if now().is_some_and(|s| s != old) {
                return Some(true);
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        Some(false)
    }
}

// ---- Factory Droid ----

pub struct DroidAgent(pub Droid);

static DROID: Spec = Spec {
    draft: "│ > ",
    guard_live: true,
    guard_source: Some("hook"),
    rebinds_on_new: true,
    name: "droid",
    program: "droid",
    // The empty composer: a fresh session's placeholder (`Try "…"`, `Type "…"`), or nothing
    // after `> `.
    ready: r#"(?m)^│ > ((Try|Type) "| +│\s*$)"#,
    echo: "│ >",
    start: Duration::from_secs(60),
    reply: Duration::from_secs(60),
    pause_ms: 4000,
    busy: "Press ESC to stop",
    permission: "Command to approve",
    new_session: "/new",
    flags: "--auto low --append-system-prompt terse",
    flag_pairs: &[("--auto", "low"), ("--append-system-prompt", "terse")],
    flag_words: &[],
    freed_mb: 100,
    resume_flag: "--resume",
    hostile_flag: "--append-system-prompt",
    // The TUI and its engine child (`droid exec --input-format stream-jsonrpc …`); `core_tree`
    // counts the TUI alone.
    min_tree: 1,
    live_source: Some("hook"),
    resumed_source: Some("hook"),
    turn_source: Some("hook"),
    integrate: true,
    settling: &["CPU", "turn in flight"],
    argv_hidden: false,
};

impl RealAgent for DroidAgent {
    fn spec(&self) -> &Spec {
        &DROID
    }
    fn seed(&self, sb: &Sandbox, mock: &MockServer) {
        seed_droid_home(&sb.home, &sb.work, mock).expect("seed droid home");
    }
    fn env(&self, sb: &Sandbox, _mock: &MockServer) -> Env {
        with_tmpdir(sb, self.0.env(&sb.home, sb.path_env()))
    }
    /// The TUI: `/new` replaces its engine child by itself (the rollback case's refused park
    /// leaves the TUI, not that child).
    fn core_tree(&self, pid: u32) -> Vec<u32> {
        vec![pid]
    }
    fn unsent(&self, screen: &str, prompt: &str) -> bool {
        // Still in the composer box (a sent prompt shows in the scrollback, indented, unboxed).
        let still = Regex::new(&format!("(?m)^│ > {}\\s*│", regex::escape(prompt))).unwrap();
        still.is_match(screen)
    }
    fn assert_records(&self, sb: &Sandbox, dir: &Path, _pid: u32, sid: &str, said: &str) {
        // Droid keeps no per-process record (park's hook names the process): the session's file
        // holds what was said, records `dir` as its cwd, and no other session file holds it.
        let with: Vec<_> = droid_sessions(&sb.home)
            .into_iter()
            .filter(|(p, _)| read(p).contains(said))
            .collect();
        assert_eq!(
            with.iter().map(|(_, s)| s.as_str()).collect::<Vec<_>>(),
            [sid],
            "{sid} said {said:?}; sessions holding it: {with:?}"
        );
        let cwd = droid_session_cwd(&sb.home, sid).unwrap_or_default();
        assert!(same_dir(&cwd, dir), "{sid} records cwd {cwd:?}");
    }
    fn record_len(&self, sb: &Sandbox, _dir: &Path, sid: &str, _said: &str) -> usize {
        droid_session(&sb.home, sid).map_or(0, |p| read(&p).lines().count())
    }
    fn record_has(
        &self,
        sb: &Sandbox,
        _: &Path,
        sid: &str,
        _said: &str,
        text: &str,
    ) -> Option<bool> {
        Some(droid_session(&sb.home, sid).is_some_and(|p| read(&p).contains(text)))
    }
    fn sessions_in(&self, sb: &Sandbox, dir: &Path) -> Option<usize> {
        Some(
            droid_sessions(&sb.home)
                .iter()
                .filter(|(_, sid)| {
                    droid_session_cwd(&sb.home, sid).is_some_and(|c| same_dir(&c, dir))
                })
                .count(),
        )
    }
}

// ---- Cline CLI ----

pub struct ClineAgent(pub Cline);

static CLINE: Spec = Spec {
    draft: "❯ ",
    guard_live: true,
    guard_source: Some("log"),
    // `/new` logs the new session only at its first prompt: until then the row is untargetable.
    rebinds_on_new: false,
    name: "cline",
    // Auto-approve is on by default: off, a tool call asks first, so the guards case (which
    // starts the agent with no flags of `flags`) sees a permission prompt.
    program: "cline --auto-approve false",
    // The empty composer: the start screen's placeholder, or a session's.
    ready: r"❯ (What can I do for you\?|Ask anything\.\.\.)",
    echo: "❯",
    start: Duration::from_secs(90),
    reply: Duration::from_secs(60),
    pause_ms: 4000,
    busy: "esc to cancel",
    permission: "Cline needs permission",
    new_session: "/new",
    flags: "-m mock-model",
    flag_pairs: &[("--auto-approve", "false"), ("-m", "mock-model")],
    flag_words: &[],
    freed_mb: 0,
    resume_flag: "--id",
    // A system prompt: any text, and the agent still answers.
    hostile_flag: "-s",
    min_tree: 1,
    live_source: Some("log"),
    resumed_source: Some("log"),
    turn_source: Some("log"),
    integrate: false,
    settling: &["CPU", "turn in flight"],
    argv_hidden: false,
};

impl RealAgent for ClineAgent {
    fn spec(&self) -> &Spec {
        &CLINE
    }
    fn seed(&self, sb: &Sandbox, mock: &MockServer) {
        seed_cline_home(&sb.home, mock).expect("seed cline home");
    }
    fn env(&self, sb: &Sandbox, _mock: &MockServer) -> Env {
        with_tmpdir(sb, self.0.env(&sb.home, sb.path_env()))
    }
    /// The TUI drops an Enter that comes with the typed keys: the prompt still sits in the
    /// composer (a line starting `❯ ` right under a rule).
    fn unsent(&self, screen: &str, prompt: &str) -> bool {
        Regex::new(&format!("(?m)^ *❯ {}", regex::escape(prompt)))
            .unwrap()
            .is_match(screen)
            && Regex::new(&format!("(?m)─\\n *❯ {}", regex::escape(prompt)))
                .unwrap()
                .is_match(screen)
    }
    fn assert_records(&self, sb: &Sandbox, dir: &Path, pid: u32, sid: &str, said: &str) {
        // The TUI logged the session (its records name the hub, never the TUI).
        assert_eq!(
            cline_logged(&sb.home, pid).last().map(String::as_str),
            Some(sid)
        );
        assert!(read(&cline_messages_path(&sb.home, sid)).contains(said));
        let cwd = cline_record(&sb.home, sid)
            .get("cwd")
            .and_then(|c| c.as_str())
            .map(str::to_string)
            .unwrap_or_default();
        assert!(
            same_dir(&cwd, dir),
            "{sid} in {cwd:?}, not {}",
            dir.display()
        );
    }
    fn record_len(&self, sb: &Sandbox, _dir: &Path, sid: &str, _said: &str) -> usize {
        cline_messages(&sb.home, sid).len()
    }
    /// The hub daemon survives every park (it serves every TUI).
    fn parked_tree(&self, pid: u32) -> Vec<u32> {
        tree(pid)
            .into_iter()
            .filter(|&p| !argv(p).iter().any(|a| a == "--cline-hub-daemon"))
            .collect()
    }
    /// The TUI and its hub: the `git -C <cwd> rev-parse …` Cline runs every few seconds ends by
    /// itself (a full contract run once caught four such helpers in the tree, gone a moment
    /// later, and read them as killed by a refused park).
    fn core_tree(&self, pid: u32) -> Vec<u32> {
        tree(pid)
            .into_iter()
            .filter(|&p| {
                argv(p)
                    .first()
                    .is_some_and(|a0| Path::new(a0).file_name().is_some_and(|n| n == "cline"))
            })
            .collect()
    }
    fn record_has(&self, sb: &Sandbox, _: &Path, sid: &str, _: &str, text: &str) -> Option<bool> {
        Some(read(&cline_messages_path(&sb.home, sid)).contains(text))
    }
    fn sessions_in(&self, sb: &Sandbox, dir: &Path) -> Option<usize> {
        Some(
            cline_sessions(&sb.home)
                .iter()
                .filter(|(_, d)| same_dir(d, dir))
                .count(),
        )
    }
}
