//! `fake-agent`: a deterministic stand-in for the Claude Code REPL, for park's integration tests.
//!
//! Tests install it as `claude` (a symlink on `PATH`, so argv[0]'s basename is `claude`) and drive it
//! in a real tmux pane. It writes the same files and draws the same screen cues as Claude Code 2.1.197
//! (`shared/agents/FORMATS.md` §4–6), so park's real detection runs against it; the edge cases that
//! real Claude cannot produce on demand are switched on through the environment.
//!
//! Contract:
//! * Config dir: `$CLAUDE_CONFIG_DIR` (non-empty), else `$HOME/.claude`. The cwd is the physical one.
//! * CLI:
//!   - `--session-id <uuid>`: use that id (`Error: Session ID <id> is already in use.`, exit 1, if its
//!     transcript exists; `Error: Invalid session ID. Must be a valid UUID.`, exit 1, if malformed);
//!   - `--resume <uuid>` / `-r <uuid>` / `--resume=<uuid>`: the transcript
//!     `<config>/projects/<enc(cwd)>/<uuid>.jsonl` must exist, else
//!     `No conversation found with session ID: <uuid>` and exit 1; the history is shown again and
//!     new records are appended to the same file. `--resume` without an id (the picker) exits 1;
//!   - `--continue` / `-c`: resume the newest transcript of the cwd (same id), else exit 1;
//!   - neither: a fresh random v4 uuid;
//!   - flags park replays are accepted and echoed in the header, in argv order:
//!     `--dangerously-skip-permissions`, `--allow-dangerously-skip-permissions`, `--ide`,
//!     `--model X`, `--permission-mode X`, `--add-dir X`, `--fallback-model X`, `--effort X`
//!     (header `Fake Claude Code v2.1.197 [--dangerously-skip-permissions --model opus]`);
//!   - `-v` / `--version` prints `2.1.197 (Claude Code)`; one positional argument is submitted as
//!     the first prompt; any other option is an error (exit 1), so a mangled resume command fails
//!     loudly.
//! * Files (all 0600, directories 0700):
//!   - `<config>/sessions/<pid>.json` from startup, the real key order, rewritten atomically (tmp +
//!     rename) on every status/session change; `status` is `idle`, `busy`, `waiting` (with
//!     `"waitingFor":"permission prompt"`) or `shell`. Removed on graceful exit; left after SIGKILL.
//!     At startup stale files of dead pids (or of recycled pids, by `procStart`) are swept, as Claude does;
//!   - the transcript, created lazily at the first submitted prompt. One turn appends exactly
//!     `user` (at submit), `assistant` (text `Fake reply #N. PARKTEST-OK`, N counting the session's
//!     assistant records, so it keeps counting across resumes) and `system`/`turn_duration`. A graceful
//!     exit appends `last-prompt`. Records are chained with `uuid`/`parentUuid`; after a resume the
//!     first new record points at the old leaf. A resumed session whose last message is an unanswered
//!     prompt gets a synthetic `No response requested.` assistant before the next prompt, like Claude.
//!   - Both are written BEFORE the screen shows the change, so a test that sees the screen can read
//!     the files without racing (real Claude writes the assistant ~100 ms later).
//! * Screen (raw mode, cursor hidden while running; every change redraws with `ESC[H ESC[2J`):
//!   header, blank, the conversation blocks (`❯ <prompt>`, `● <reply>`, `✻ Brewed for Ns`, each
//!   followed by a blank line; the oldest lines scroll off), a `─` rule as wide as the terminal, the
//!   composer `❯` + U+00A0 + draft, a rule, and the footer: `  esc to interrupt · ← for agents` while
//!   busy, blank while the draft is non-empty, `  1 shell · ← for agents · ↓ to manage` while a
//!   background shell lives, else `  ? for shortcuts · ← for agents`. The pane title (OSC 0) is
//!   `✳ Claude Code`, or `⠂ Claude Code` while busy.
//! * Keys: printable UTF-8 → draft; Backspace deletes; Enter (CR or LF) submits (ignored while a turn
//!   runs); Ctrl-C clears a non-empty draft and exits gracefully on an empty one; escape sequences
//!   (arrows…) are swallowed. Prompts `/clear` (new session id at once, argv goes stale, as in Claude)
//!   and `/exit` are understood.
//! * Prompt directives: `[slow N]` busy N seconds before the reply; `[wait]` a permission dialog
//!   (`Do you want to proceed?`, ` ❯ 1. Yes`, `   2. No`; status `waiting`) until `1`, `2` or Esc;
//!   `[bg N]` a background `sleep N` in its own session, status `shell` while it lives; `[big N]`
//!   a reply record of N KiB (the screen shows only its canned last line); `[limit]` no reply, the
//!   turn ends at Claude Code's usage-limit message (`You've hit your session limit · resets 3am
//!   (UTC)`).
//! * `FAKE_AGENT_MODE` (comma-separated): `ignore-term` (SIGTERM and SIGHUP ignored), `setsid-child`
//!   (`sleep 100000` in its own session at start; survives everything, even the graceful exit),
//!   `dev-server` (a re-exec of this binary with argv `vite --port 5173 --strictPort` and comm `vite`,
//!   same process group), `zombie` (an exited `/bin/true` child that is never reaped),
//!   `eat-ram=<MB>` (that much anonymous memory touched at start), `slow-exit=<ms>` (delay before a
//!   signalled graceful exit), `sticky-busy` (the status file always says `busy`), `no-status-file`, `fail-resume` (a `--resume` start exits 1 after 300 ms, like an agent missing its API key),
//!   `slow-start=<ms>` (the status file names the session without a `status` and the screen is
//!   left untouched for that long, then the keys typed meanwhile are discarded), `late-reply` (on
//!   its way out it leaves `ESC [ ? 997 ; 1 n` in the terminal's input, through tmux: the late
//!   answer of a terminal to a colour-scheme query, as zellij gives Copilot's; the shell reads it).
//!   An unknown item exits 2. `FAKE_AGENT_CPU=1` burns one core in a thread.
//! * Graceful exit (SIGTERM, SIGHUP, stdin hang-up, Ctrl-C, `/exit`): SIGKILL and reap the tool
//!   children (`[bg]` shells, as Claude kills its tools, and the dev server), append `last-prompt`,
//!   delete the status file, show the cursor, restore the tty, print `Resume this session with:` and
//!   `claude --resume <id>` (only when a transcript exists), exit 0. The `setsid-child` is left alive
//!   on purpose: it is the leaked tool shell that park must find by walking PPIDs before killing.
//! * stdout carries only the screen; diagnostics go to stderr.

use std::fs::{self, DirBuilder, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use nix::sys::signal::{self, SaFlags, SigAction, SigHandler, SigSet, Signal};
use nix::sys::termios::{self, SetArg, Termios};
use serde_json::Value;

const VERSION: &str = "2.1.197";
const DEFAULT_MODEL: &str = "claude-opus-4-8";
const NBSP: char = '\u{a0}';
const BOOL_FLAGS: &[&str] = &[
    "--dangerously-skip-permissions",
    "--allow-dangerously-skip-permissions",
    "--ide",
];
const VALUED_FLAGS: &[&str] = &[
    "--model",
    "--permission-mode",
    "--add-dir",
    "--fallback-model",
    "--effort",
];

fn main() {
    if std::env::var_os("FAKE_AGENT_ROLE").is_some_and(|r| r == "dev-server") {
        run_dev_server();
    }
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let cli = Cli::parse(&args).unwrap_or_else(|e| fail(1, &e));
    if cli.version {
        let _ = writeln!(io::stdout(), "{VERSION} (Claude Code)");
        return;
    }
    let modes = Modes::from_env().unwrap_or_else(|e| fail(2, &e));
    let config = config_dir()
        .unwrap_or_else(|| fail(1, "fake-agent: neither CLAUDE_CONFIG_DIR nor HOME is set"));
    let cwd =
        std::env::current_dir().unwrap_or_else(|e| fail(1, &format!("fake-agent: getcwd: {e}")));
    let cwd = cwd.to_string_lossy().into_owned();
    let proj_dir = config.join("projects").join(encode_cwd(&cwd));
    let (session_id, resumed) = resolve_session(&cli, &proj_dir);
    if resumed && modes.fail_resume {
        std::thread::sleep(std::time::Duration::from_millis(300));
        fail(
            1,
            "fake-agent: fail-resume: exiting as a misconfigured agent would",
        );
    }

    let mut app = App::new(cli, modes, config, cwd, proj_dir, session_id);
    if resumed {
        app.load_history();
    }
    install_signal_handlers(app.modes.ignore_term);
    app.start_mode_children();
    if let Some(mb) = app.modes.eat_ram_mb {
        eat_ram(mb);
    }
    if std::env::var("FAKE_AGENT_CPU").is_ok_and(|v| v == "1") {
        std::thread::spawn(burn_cpu);
    }
    app.sweep_stale_status_files();
    app.start_slowly();
    app.sync_status();
    app.enter_raw_mode();
    app.redraw();
    if let Some(p) = app.cli.prompt.take() {
        app.draft = p;
        app.submit();
        app.after_event();
    }
    app.run();
}

fn fail(code: i32, msg: &str) -> ! {
    eprintln!("{msg}");
    std::process::exit(code);
}

// ---------------------------------------------------------------------------------------------
// Command line and modes

#[derive(Default)]
struct Cli {
    session_id: Option<String>,
    resume: Option<String>,
    cont: bool,
    /// The replayable flags, in argv order, as `--flag [value]` tokens (echoed in the header).
    flags: Vec<String>,
    model: Option<String>,
    permission_mode: Option<String>,
    prompt: Option<String>,
    version: bool,
}

impl Cli {
    fn parse(args: &[String]) -> Result<Cli, String> {
        let mut cli = Cli::default();
        let mut it = args.iter();
        while let Some(arg) = it.next() {
            let (name, inline) = match arg.split_once('=') {
                Some((n, v)) if n.starts_with("--") => (n, Some(v.to_string())),
                _ => (arg.as_str(), None),
            };
            let mut value = || {
                inline
                    .clone()
                    .or_else(|| it.next().cloned())
                    .ok_or_else(|| format!("error: option '{name} <value>' argument missing"))
            };
            match name {
                "-v" | "--version" => cli.version = true,
                "--session-id" => cli.session_id = Some(value()?),
                "--resume" | "-r" => match value() {
                    Ok(v) if !v.starts_with('-') => cli.resume = Some(v),
                    _ => return Err(
                        "fake-agent: --resume without a session id (the picker) is not supported"
                            .into(),
                    ),
                },
                "--continue" | "-c" => cli.cont = true,
                n if BOOL_FLAGS.contains(&n) && inline.is_none() => cli.flags.push(n.to_string()),
                n if VALUED_FLAGS.contains(&n) => {
                    let v = value()?;
                    match n {
                        "--model" => cli.model = Some(v.clone()),
                        "--permission-mode" => cli.permission_mode = Some(v.clone()),
                        _ => {}
                    }
                    cli.flags.push(n.to_string());
                    cli.flags.push(v);
                }
                n if n.starts_with('-') && n.len() > 1 => {
                    return Err(format!("error: unknown option '{arg}'"))
                }
                _ if cli.prompt.is_none() => cli.prompt = Some(arg.clone()),
                _ => {
                    return Err(format!(
                        "error: too many arguments. Expected 1 argument but got another: {arg}"
                    ))
                }
            }
        }
        if cli.session_id.is_some() && (cli.resume.is_some() || cli.cont) {
            return Err("Error: --session-id can only be used with --continue or --resume if --fork-session is also specified.".into());
        }
        Ok(cli)
    }

    fn permission_mode(&self) -> String {
        match &self.permission_mode {
            Some(m) => m.clone(),
            None if self
                .flags
                .iter()
                .any(|f| f == "--dangerously-skip-permissions") =>
            {
                "bypassPermissions".into()
            }
            None => "default".into(),
        }
    }
}

#[derive(Default)]
struct Modes {
    ignore_term: bool,
    setsid_child: bool,
    dev_server: bool,
    zombie: bool,
    eat_ram_mb: Option<u64>,
    slow_exit_ms: Option<u64>,
    sticky_busy: bool,
    no_status_file: bool,
    /// `fail-resume`: a resume starts and then dies at once (like a Claude missing its API key).
    fail_resume: bool,
    /// `slow-start=<ms>`: a start that takes this long before the screen is drawn, as Claude's
    /// does under load (see `App::start_slowly`).
    slow_start_ms: Option<u64>,
    /// `late-reply`: a terminal's reply to a query is left in the input for the shell.
    late_reply: bool,
}

impl Modes {
    fn from_env() -> Result<Modes, String> {
        let raw = std::env::var("FAKE_AGENT_MODE").unwrap_or_default();
        let mut m = Modes::default();
        for item in raw.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (key, val) = item
                .split_once('=')
                .map_or((item, None), |(k, v)| (k, Some(v)));
            let num = || {
                val.and_then(|v| v.trim().parse::<u64>().ok())
                    .ok_or_else(|| {
                        format!("fake-agent: FAKE_AGENT_MODE item {item:?} needs a number")
                    })
            };
            match key {
                "ignore-term" => m.ignore_term = true,
                "setsid-child" => m.setsid_child = true,
                "dev-server" => m.dev_server = true,
                "zombie" => m.zombie = true,
                "eat-ram" => m.eat_ram_mb = Some(num()?),
                "slow-exit" => m.slow_exit_ms = Some(num()?),
                "sticky-busy" => m.sticky_busy = true,
                "no-status-file" => m.no_status_file = true,
                "fail-resume" => m.fail_resume = true,
                "slow-start" => m.slow_start_ms = Some(num()?),
                "late-reply" => m.late_reply = true,
                _ => return Err(format!("fake-agent: unknown FAKE_AGENT_MODE item {item:?}")),
            }
        }
        Ok(m)
    }
}

fn config_dir() -> Option<PathBuf> {
    match std::env::var_os("CLAUDE_CONFIG_DIR") {
        Some(d) if !d.is_empty() => Some(PathBuf::from(d)),
        _ => std::env::var_os("HOME").map(|h| Path::new(&h).join(".claude")),
    }
}

/// The session id to run under and whether it is a resume; exits with Claude's messages on errors.
fn resolve_session(cli: &Cli, proj_dir: &Path) -> (String, bool) {
    if let Some(id) = &cli.resume {
        if !valid_uuid(id) || !proj_dir.join(format!("{id}.jsonl")).is_file() {
            fail(1, &format!("No conversation found with session ID: {id}"));
        }
        return (id.clone(), true);
    }
    if cli.cont {
        return match newest_transcript(proj_dir) {
            Some(id) => (id, true),
            None => fail(1, "No conversation found to continue"),
        };
    }
    if let Some(id) = &cli.session_id {
        if !valid_uuid(id) {
            fail(1, "Error: Invalid session ID. Must be a valid UUID.");
        }
        if proj_dir.join(format!("{id}.jsonl")).exists() {
            fail(1, &format!("Error: Session ID {id} is already in use."));
        }
        return (id.clone(), false);
    }
    (new_uuid(), false)
}

fn newest_transcript(proj_dir: &Path) -> Option<String> {
    fs::read_dir(proj_dir)
        .ok()?
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let id = name
                .strip_suffix(".jsonl")
                .filter(|id| valid_uuid(id))?
                .to_string();
            Some((e.metadata().ok()?.modified().ok()?, id))
        })
        .max()
        .map(|(_, id)| id)
}

// ---------------------------------------------------------------------------------------------
// The REPL

struct Turn {
    started: Instant,
    slow: u64,
    /// `[big N]`: the reply record carries N KiB of text before the canned line.
    big_kib: u64,
    /// `[limit]`: the turn ends at Claude Code's usage-limit message instead of a reply.
    limit: bool,
}

enum State {
    Idle,
    /// The `[wait]` permission dialog is open.
    Waiting(Turn),
    /// The model is "streaming" until the deadline.
    Busy(Turn, Instant),
}

/// What the status file last said (rewrites happen only on a change).
#[derive(PartialEq)]
struct Written {
    status: &'static str,
    waiting: bool,
    session_id: String,
}

struct App {
    cli: Cli,
    modes: Modes,
    config: PathBuf,
    cwd: String,
    proj_dir: PathBuf,
    session_id: String,
    pid: u32,
    proc_start: String,
    started_at: u64,
    name: String,
    header: String,
    /// Conversation blocks; a blank line separates them on screen.
    conv: Vec<Vec<String>>,
    draft: String,
    state: State,
    leaf: Option<String>,
    last_prompt: Option<String>,
    replies: u64,
    /// A resumed transcript ends with an unanswered prompt (killed mid-turn): Claude writes a
    /// synthetic assistant record before the next prompt.
    pending_no_response: Option<u64>,
    /// `[bg N]` shells still running.
    bg: Vec<Child>,
    dev_server: Option<Child>,
    /// Held so they are never waited for: the zombie must stay a zombie, the setsid child must outlive us.
    _zombie: Option<Child>,
    _setsid_child: Option<Child>,
    written: Option<Written>,
    status_updated_at: u64,
    saved_tty: Option<Termios>,
    size: (usize, usize),
    title: &'static str,
    stdin_open: bool,
    /// Bytes of an incomplete UTF-8 character left over from the previous read.
    pending_input: Vec<u8>,
}

impl App {
    fn new(
        cli: Cli,
        modes: Modes,
        config: PathBuf,
        cwd: String,
        proj_dir: PathBuf,
        session_id: String,
    ) -> App {
        let pid = std::process::id();
        let base = Path::new(&cwd)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let name = format!("{base}-{:02}", random_bytes::<1>()[0] % 100);
        let mut header = format!("Fake Claude Code v{VERSION}");
        if !cli.flags.is_empty() {
            header.push_str(&format!(" [{}]", cli.flags.join(" ")));
        }
        let now = now_ms();
        App {
            cli,
            modes,
            config,
            cwd,
            proj_dir,
            session_id,
            pid,
            proc_start: proc_start(pid).unwrap_or_default(),
            started_at: now,
            name,
            header,
            conv: Vec::new(),
            draft: String::new(),
            state: State::Idle,
            leaf: None,
            last_prompt: None,
            replies: 0,
            pending_no_response: None,
            bg: Vec::new(),
            dev_server: None,
            _zombie: None,
            _setsid_child: None,
            written: None,
            status_updated_at: now,
            saved_tty: None,
            size: term_size(),
            title: "",
            stdin_open: true,
            pending_input: Vec::new(),
        }
    }

    fn transcript_path(&self) -> PathBuf {
        self.proj_dir.join(format!("{}.jsonl", self.session_id))
    }

    /// Rebuilds the screen, the chain leaf and the reply counter from the transcript (`--resume`).
    fn load_history(&mut self) {
        let text = fs::read_to_string(self.transcript_path()).unwrap_or_default();
        let mut unanswered = false;
        for line in text.lines() {
            let Ok(rec) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            if let Some(u) = rec["uuid"].as_str() {
                self.leaf = Some(u.to_string());
            }
            match (rec["type"].as_str(), rec["subtype"].as_str()) {
                (Some("user"), _) => {
                    if let Some(content) = rec["message"]["content"].as_str() {
                        self.conv.push(vec![format!("❯ {content}")]);
                        self.last_prompt = Some(content.to_string());
                        unanswered = true;
                    }
                }
                (Some("assistant"), _) => {
                    let texts: Vec<&str> = rec["message"]["content"]
                        .as_array()
                        .map(|c| c.iter().filter_map(|p| p["text"].as_str()).collect())
                        .unwrap_or_default();
                    if !texts.is_empty() {
                        self.conv.push(vec![format!("● {}", texts.join(" "))]);
                        self.replies += 1;
                    }
                    unanswered = false;
                }
                (Some("system"), Some("turn_duration")) => {
                    let secs = rec["durationMs"].as_u64().unwrap_or(0) / 1000;
                    self.conv.push(vec![format!("✻ Brewed for {secs}s")]);
                }
                (Some("last-prompt"), _) => {
                    if let Some(p) = rec["lastPrompt"].as_str() {
                        self.last_prompt = Some(p.to_string());
                    }
                }
                _ => {}
            }
        }
        if unanswered {
            self.pending_no_response = Some(now_ms());
        }
    }

    fn start_mode_children(&mut self) {
        if self.modes.setsid_child {
            self._setsid_child = spawn_logged("setsid-child", sleep_cmd(100_000), true);
        }
        if self.modes.dev_server {
            match std::env::current_exe() {
                Ok(exe) => {
                    let mut cmd = Command::new(exe);
                    cmd.arg0("vite")
                        .args(["--port", "5173", "--strictPort"])
                        .env("FAKE_AGENT_ROLE", "dev-server")
                        .env_remove("FAKE_AGENT_MODE")
                        .env_remove("FAKE_AGENT_CPU");
                    self.dev_server = spawn_logged("dev-server", cmd, false);
                }
                Err(e) => eprintln!("fake-agent: dev-server: current_exe: {e}"),
            }
        }
        if self.modes.zombie {
            let prog = if Path::new("/bin/true").exists() {
                "/bin/true"
            } else {
                "true"
            };
            self._zombie = spawn_logged("zombie", Command::new(prog), false);
        }
    }

    // -- status file -----------------------------------------------------------------------

    fn status_path(&self) -> PathBuf {
        self.config
            .join("sessions")
            .join(format!("{}.json", self.pid))
    }

    fn status(&self) -> (&'static str, bool) {
        if self.modes.sticky_busy {
            return ("busy", false);
        }
        match self.state {
            State::Busy(..) => ("busy", false),
            State::Waiting(_) => ("waiting", true),
            State::Idle if !self.bg.is_empty() => ("shell", false),
            State::Idle => ("idle", false),
        }
    }

    /// Rewrites `sessions/<pid>.json` when the status or the session id changed.
    fn sync_status(&mut self) {
        if self.modes.no_status_file {
            return;
        }
        let (status, waiting) = self.status();
        let now = Written {
            status,
            waiting,
            session_id: self.session_id.clone(),
        };
        if self.written.as_ref() == Some(&now) {
            return;
        }
        let ms = now_ms();
        if self.written.as_ref().map(|w| w.status) != Some(status) {
            self.status_updated_at = ms;
        }
        let mut fields = vec![
            ("pid", js(self.pid)),
            ("sessionId", js(self.session_id.as_str())),
            ("cwd", js(self.cwd.as_str())),
            ("startedAt", js(self.started_at)),
            ("procStart", js(self.proc_start.as_str())),
            ("version", js(VERSION)),
            ("peerProtocol", js(1)),
            ("kind", js("interactive")),
            ("entrypoint", js("cli")),
            ("name", js(self.name.as_str())),
            ("nameSource", js("derived")),
            ("status", js(status)),
        ];
        if waiting {
            fields.push(("waitingFor", js("permission prompt")));
        }
        fields.push(("updatedAt", js(ms)));
        fields.push(("statusUpdatedAt", js(self.status_updated_at)));
        let path = self.status_path();
        if let Err(e) = write_atomic(&path, &ordered(&fields)) {
            eprintln!("fake-agent: writing {}: {e}", path.display());
        }
        self.written = Some(now);
    }

    /// `slow-start=<ms>`: the status file first names the session without a `status` (Claude
    /// 2.1.197 writes it so as it starts, and adds the status once its REPL reads keys), the
    /// screen is left as it was (the last frame of whatever ran in the pane before), and after
    /// the delay the keys typed meanwhile are discarded, as a TUI's terminal setup can.
    fn start_slowly(&mut self) {
        let Some(ms) = self.modes.slow_start_ms else {
            return;
        };
        if !self.modes.no_status_file {
            let fields = vec![
                ("pid", js(self.pid)),
                ("sessionId", js(self.session_id.as_str())),
                ("cwd", js(self.cwd.as_str())),
                ("startedAt", js(self.started_at)),
                ("procStart", js(self.proc_start.as_str())),
                ("version", js(VERSION)),
                ("peerProtocol", js(1)),
                ("kind", js("interactive")),
                ("entrypoint", js("cli")),
                ("name", js(self.name.as_str())),
                ("nameSource", js("derived")),
            ];
            let path = self.status_path();
            if let Err(e) = write_atomic(&path, &ordered(&fields)) {
                eprintln!("fake-agent: writing {}: {e}", path.display());
            }
        }
        std::thread::sleep(Duration::from_millis(ms));
        let _ = termios::tcflush(io::stdin(), termios::FlushArg::TCIFLUSH);
    }

    /// Claude deletes the registry files of dead processes when it starts; park must cope with the
    /// window in which a stale one exists, and with this cleanup happening behind its back.
    fn sweep_stale_status_files(&self) {
        let Ok(dir) = fs::read_dir(self.config.join("sessions")) else {
            return;
        };
        for e in dir.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(pid) = name
                .strip_suffix(".json")
                .and_then(|p| p.parse::<u32>().ok())
            else {
                continue;
            };
            if pid == self.pid {
                continue;
            }
            let dead = match signal::kill(nix::unistd::Pid::from_raw(pid as i32), None) {
                Err(nix::errno::Errno::ESRCH) => true,
                _ => {
                    let recorded = fs::read(e.path())
                        .ok()
                        .and_then(|b| serde_json::from_slice::<Value>(&b).ok());
                    let recorded = recorded
                        .as_ref()
                        .and_then(|v| v["procStart"].as_str().map(str::to_string));
                    recorded.is_some() && recorded != proc_start(pid)
                }
            };
            if dead {
                let _ = fs::remove_file(e.path());
            }
        }
    }

    // -- transcript ------------------------------------------------------------------------

    fn append(&self, line: &str) {
        let path = self.transcript_path();
        let res = mkdir_p(&self.proj_dir).and_then(|_| {
            let mut f = OpenOptions::new()
                .create(true)
                .append(true)
                .mode(0o600)
                .open(&path)?;
            f.write_all(format!("{line}\n").as_bytes())
        });
        if let Err(e) = res {
            eprintln!("fake-agent: appending to {}: {e}", path.display());
        }
    }

    /// The fields every message record ends with.
    fn common(&self) -> Vec<(&'static str, String)> {
        vec![
            ("userType", js("external")),
            ("entrypoint", js("cli")),
            ("cwd", js(self.cwd.as_str())),
            ("sessionId", js(self.session_id.as_str())),
            ("version", js(VERSION)),
            ("gitBranch", js("HEAD")),
        ]
    }

    fn append_assistant(&mut self, text: &str, model: &str, ts: u64) {
        let uuid = new_uuid();
        let message = ordered(&[
            ("id", js(format!("msg_fake_{}", hex(&random_bytes::<10>())))),
            ("type", js("message")),
            ("role", js("assistant")),
            ("model", js(model)),
            (
                "content",
                format!("[{}]", ordered(&[("type", js("text")), ("text", js(text))])),
            ),
            ("stop_reason", js("end_turn")),
            ("stop_sequence", "null".into()),
            (
                "usage",
                ordered(&[("input_tokens", js(10)), ("output_tokens", js(12))]),
            ),
        ]);
        let mut rec = vec![
            ("parentUuid", js(self.leaf.clone())),
            ("isSidechain", js(false)),
            ("message", message),
            (
                "requestId",
                js(format!("req_fake_{}", hex(&random_bytes::<6>()))),
            ),
            ("type", js("assistant")),
            ("uuid", js(uuid.as_str())),
            ("timestamp", js(rfc3339_ms(ts))),
        ];
        rec.extend(self.common());
        self.append(&ordered(&rec));
        self.leaf = Some(uuid);
    }

    fn submit(&mut self) {
        let text = std::mem::take(&mut self.draft).trim().to_string();
        if text.is_empty() {
            return;
        }
        match text.as_str() {
            "/clear" => return self.clear(),
            "/exit" | "/quit" => self.graceful_exit(false),
            _ => {}
        }
        if let Some(ts) = self.pending_no_response.take() {
            self.append_assistant("No response requested.", "<synthetic>", ts);
        }
        let uuid = new_uuid();
        let message = ordered(&[("role", js("user")), ("content", js(text.as_str()))]);
        let mut rec = vec![
            ("parentUuid", js(self.leaf.clone())),
            ("isSidechain", js(false)),
            ("promptId", js(new_uuid())),
            ("type", js("user")),
            ("message", message),
            ("uuid", js(uuid.as_str())),
            ("timestamp", js(rfc3339_ms(now_ms()))),
            ("permissionMode", js(self.cli.permission_mode())),
            ("origin", ordered(&[("kind", js("human"))])),
            ("promptSource", js("typed")),
        ];
        rec.extend(self.common());
        self.append(&ordered(&rec));
        self.leaf = Some(uuid);
        self.last_prompt = Some(text.clone());
        self.conv.push(vec![format!("❯ {text}")]);

        if let Some(secs) = directive(&text, "bg") {
            if let Some(child) = spawn_logged("bg shell", sleep_cmd(secs), true) {
                self.bg.push(child);
            }
            self.conv.push(vec![
                format!("● Bash(sleep {secs})"),
                "  ⎿  Running in the background (↓ to manage)".into(),
            ]);
        }
        let turn = Turn {
            started: Instant::now(),
            slow: directive(&text, "slow").unwrap_or(0),
            big_kib: directive(&text, "big").unwrap_or(0).min(256 * 1024),
            limit: text.contains("[limit]"),
        };
        self.state = if text.contains("[wait]") {
            State::Waiting(turn)
        } else {
            let deadline = Instant::now() + Duration::from_secs(turn.slow);
            State::Busy(turn, deadline)
        };
    }

    /// `/clear`: a new session id at once; the next prompt starts a new transcript.
    fn clear(&mut self) {
        self.session_id = new_uuid();
        self.conv.clear();
        self.leaf = None;
        self.last_prompt = None;
        self.replies = 0;
        self.pending_no_response = None;
    }

    fn answer(&mut self, yes: bool) {
        let State::Waiting(turn) = std::mem::replace(&mut self.state, State::Idle) else {
            return;
        };
        let result = if yes {
            "  ⎿  (No content)"
        } else {
            "  ⎿  User rejected the command"
        };
        self.conv.push(vec!["● Bash(true)".into(), result.into()]);
        let deadline = Instant::now() + Duration::from_secs(turn.slow);
        self.state = State::Busy(turn, deadline);
    }

    fn finish_turn(&mut self, turn: Turn) {
        if turn.limit {
            // Claude Code 2.1.197's wording (`hJ` + `Vee`, see companion/src/agents/limit.rs):
            // the API error closes the turn as a synthetic assistant record, and the screen
            // shows it under the prompt.
            let msg = "You've hit your session limit \u{b7} resets 3am (UTC)";
            self.append_assistant(msg, "<synthetic>", now_ms());
            self.conv.push(vec![
                format!("  ⎿  You've hit your session limit \u{b7} resets 3am (UTC)"),
                "     /upgrade to increase your usage limit.".into(),
            ]);
            self.state = State::Idle;
            return;
        }
        self.replies += 1;
        let canned = format!("Fake reply #{}. PARKTEST-OK", self.replies);
        let mut text = String::new();
        while (text.len() as u64) < turn.big_kib * 1024 {
            text.push_str("a long answer line — naïve café 🦊 and more words to fill it up\n");
        }
        text.push_str(&canned);
        let model = self
            .cli
            .model
            .clone()
            .unwrap_or_else(|| DEFAULT_MODEL.into());
        self.append_assistant(&text, &model, now_ms());
        let elapsed = turn.started.elapsed();
        let uuid = new_uuid();
        let mut rec = vec![
            ("parentUuid", js(self.leaf.clone())),
            ("isSidechain", js(false)),
            ("type", js("system")),
            ("subtype", js("turn_duration")),
            ("durationMs", js(elapsed.as_millis() as u64)),
            ("messageCount", js(2)),
            ("timestamp", js(rfc3339_ms(now_ms()))),
            ("uuid", js(uuid.as_str())),
            ("isMeta", js(false)),
        ];
        rec.extend(self.common());
        self.append(&ordered(&rec));
        self.leaf = Some(uuid);
        // The screen shows the canned line only: a huge answer lives in the transcript.
        self.conv.push(vec![format!("● {canned}")]);
        self.conv
            .push(vec![format!("✻ Brewed for {}s", elapsed.as_secs())]);
        self.state = State::Idle;
    }

    // -- screen ----------------------------------------------------------------------------

    fn enter_raw_mode(&mut self) {
        let stdin = io::stdin();
        let Ok(saved) = termios::tcgetattr(&stdin) else {
            return;
        };
        let mut raw = saved.clone();
        termios::cfmakeraw(&mut raw);
        if termios::tcsetattr(&stdin, SetArg::TCSANOW, &raw).is_ok() {
            self.saved_tty = Some(saved);
        }
        // Claude hides the cursor while it runs (and a SIGKILL leaves it hidden).
        out("\x1b[?25l");
    }

    fn restore_tty(&mut self) {
        out("\x1b[?25h");
        if let Some(saved) = self.saved_tty.take() {
            let _ = termios::tcsetattr(io::stdin(), SetArg::TCSANOW, &saved);
        }
    }

    fn footer(&self) -> String {
        if matches!(self.state, State::Busy(..)) {
            "  esc to interrupt · ← for agents".into()
        } else if !self.draft.is_empty() {
            String::new()
        } else if !self.bg.is_empty() {
            let n = self.bg.len();
            format!(
                "  {n} shell{} · ← for agents · ↓ to manage",
                if n == 1 { "" } else { "s" }
            )
        } else {
            "  ? for shortcuts · ← for agents".into()
        }
    }

    fn render(&self) -> String {
        let (cols, rows) = self.size;
        let rule = "─".repeat(cols);
        let top = [self.header.clone(), String::new()];
        let mut body: Vec<String> = Vec::new();
        let transient: Vec<Vec<String>> = match self.state {
            State::Busy(..) => vec![vec!["✢ Working…".into()]],
            State::Waiting(_) => vec![vec!["● Bash(true)".into(), "  ⎿  Waiting…".into()]],
            State::Idle => vec![],
        };
        for block in self.conv.iter().chain(&transient) {
            body.extend(block.iter().cloned());
            body.push(String::new());
        }
        let bottom: Vec<String> = if matches!(self.state, State::Waiting(_)) {
            [
                rule.as_str(),
                " Bash command",
                "   true",
                "   fake permission check",
                " Do you want to proceed?",
                " ❯ 1. Yes",
                "   2. No",
                " Esc to cancel · Tab to amend · ctrl+e to explain",
            ]
            .map(String::from)
            .to_vec()
        } else {
            vec![
                rule.clone(),
                format!("❯{NBSP}{}", self.draft),
                rule,
                self.footer(),
            ]
        };
        // Keep the newest conversation lines that fit, so the composer is always on screen.
        let rows_of = |l: &String| l.chars().count().div_ceil(cols).max(1);
        let fixed: usize = top.iter().chain(&bottom).map(rows_of).sum();
        let mut budget = rows.saturating_sub(fixed);
        let mut start = body.len();
        while start > 0 && rows_of(&body[start - 1]) <= budget {
            budget -= rows_of(&body[start - 1]);
            start -= 1;
        }
        let lines: Vec<&str> = top
            .iter()
            .chain(&body[start..])
            .chain(&bottom)
            .map(String::as_str)
            .collect();
        format!("\x1b[H\x1b[2J{}", lines.join("\r\n"))
    }

    fn redraw(&mut self) {
        let title = if matches!(self.state, State::Busy(..)) {
            "⠂ Claude Code"
        } else {
            "✳ Claude Code"
        };
        let mut frame = String::new();
        if title != self.title {
            frame.push_str(&format!("\x1b]0;{title}\x07"));
            self.title = title;
        }
        frame.push_str(&self.render());
        out(&frame);
    }

    // -- input -----------------------------------------------------------------------------

    fn handle_input(&mut self, chunk: &[u8]) {
        let mut buf = std::mem::take(&mut self.pending_input);
        buf.extend_from_slice(chunk);
        let mut i = 0;
        while i < buf.len() {
            let b = buf[i];
            match b {
                0x1b => {
                    // A lone ESC is the Esc key; otherwise swallow the whole sequence (arrows, focus…).
                    match buf.get(i + 1) {
                        None => self.on_esc(),
                        Some(b'[') => {
                            let mut j = i + 2;
                            while j < buf.len() && !(0x40..=0x7e).contains(&buf[j]) {
                                j += 1;
                            }
                            i = j + 1;
                            continue;
                        }
                        Some(b'O') => {
                            i += 3;
                            continue;
                        }
                        Some(_) => {
                            i += 2;
                            continue;
                        }
                    }
                    i += 1;
                }
                b'\r' | b'\n' => {
                    if matches!(self.state, State::Idle) {
                        self.submit();
                    }
                    i += 1;
                }
                0x7f | 0x08 => {
                    self.draft.pop();
                    i += 1;
                }
                0x03 => {
                    if self.draft.is_empty() {
                        self.graceful_exit(false);
                    }
                    self.draft.clear();
                    i += 1;
                }
                0x00..=0x1f => i += 1,
                _ => {
                    let len = match b {
                        0xc0..=0xdf => 2,
                        0xe0..=0xef => 3,
                        0xf0..=0xf7 => 4,
                        _ => 1,
                    };
                    if i + len > buf.len() {
                        self.pending_input = buf[i..].to_vec();
                        break;
                    }
                    if let Ok(s) = std::str::from_utf8(&buf[i..i + len]) {
                        self.on_text(s);
                    }
                    i += len;
                }
            }
        }
    }

    fn on_text(&mut self, s: &str) {
        if matches!(self.state, State::Waiting(_)) {
            match s {
                "1" => self.answer(true),
                "2" => self.answer(false),
                _ => {}
            }
            return;
        }
        self.draft.push_str(s);
    }

    fn on_esc(&mut self) {
        if matches!(self.state, State::Waiting(_)) {
            self.answer(false);
        }
    }

    // -- children and exit -----------------------------------------------------------------

    fn reap_bg(&mut self) {
        self.bg.retain_mut(|c| matches!(c.try_wait(), Ok(None)));
    }

    fn graceful_exit(&mut self, signalled: bool) -> ! {
        if signalled {
            if let Some(ms) = self.modes.slow_exit_ms {
                std::thread::sleep(Duration::from_millis(ms));
            }
        }
        // Claude SIGKILLs its tools on the way out (their results read "Exit code 137").
        for mut c in self.bg.drain(..).chain(self.dev_server.take()) {
            let _ = c.kill();
            let _ = c.wait();
        }
        let has_transcript = self.transcript_path().is_file();
        if has_transcript {
            let rec = ordered(&[
                ("type", js("last-prompt")),
                ("lastPrompt", js(self.last_prompt.clone())),
                ("leafUuid", js(self.leaf.clone())),
                ("sessionId", js(self.session_id.as_str())),
            ]);
            self.append(&rec);
        }
        if !self.modes.no_status_file {
            let _ = fs::remove_file(self.status_path());
        }
        // The final frame stays on screen; the hint goes below it (over a blank footer, as in Claude).
        out(if self.footer().is_empty() {
            "\r"
        } else {
            "\r\n"
        });
        if self.modes.late_reply {
            // Into the pane's input queue while the tty is still raw (no echo; restore_tty does
            // not flush it): nobody reads it before the shell's line editor does, as a reply that
            // arrives after the agent died.
            if let Some(pane) = std::env::var_os("TMUX_PANE") {
                let _ = std::process::Command::new("tmux")
                    .arg("send-keys")
                    .arg("-t")
                    .arg(pane)
                    .args(["-l", "\x1b[?997;1n"])
                    .status();
            }
        }
        self.restore_tty();
        if has_transcript {
            out(&format!(
                "Resume this session with:\nclaude --resume {}\n",
                self.session_id
            ));
        }
        std::process::exit(0);
    }

    // -- event loop ------------------------------------------------------------------------

    /// Everything that follows an event: timers, children, the status file, then the screen
    /// (files first, so whoever sees the screen can rely on them).
    fn after_event(&mut self) {
        if let State::Busy(_, deadline) = self.state {
            if Instant::now() >= deadline {
                if let State::Busy(turn, _) = std::mem::replace(&mut self.state, State::Idle) {
                    self.finish_turn(turn);
                }
            }
        }
        self.reap_bg();
        self.sync_status();
        self.redraw();
    }

    fn run(&mut self) -> ! {
        let sig_fd = SIG_PIPE_R.load(Ordering::Relaxed);
        loop {
            let mut timeout: i32 = -1;
            if let State::Busy(_, deadline) = self.state {
                let left = deadline.saturating_duration_since(Instant::now());
                timeout = left.as_millis().min(i32::MAX as u128) as i32 + 1;
            }
            if !self.bg.is_empty() {
                // SIGCHLD wakes us too; the tick is a safety net.
                timeout = if timeout < 0 { 250 } else { timeout.min(250) };
            }
            let mut fds = [
                libc::pollfd {
                    fd: sig_fd,
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: if self.stdin_open { 0 } else { -1 },
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            // SAFETY: `fds` is a valid array of two pollfd structs for the duration of the call.
            let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout) };
            if n < 0 && io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                eprintln!("fake-agent: poll: {}", io::Error::last_os_error());
                std::thread::sleep(Duration::from_millis(100));
            }
            if fds[0].revents != 0 {
                for sig in drain_signals(sig_fd) {
                    match sig {
                        libc::SIGTERM | libc::SIGHUP => self.graceful_exit(true),
                        libc::SIGWINCH => self.size = term_size(),
                        _ => {} // SIGCHLD: reaped in after_event
                    }
                }
            }
            if fds[1].revents != 0 {
                let mut buf = [0u8; 4096];
                // SAFETY: reading into a local buffer of the given length.
                let r = unsafe { libc::read(0, buf.as_mut_ptr().cast(), buf.len()) };
                if r > 0 {
                    self.handle_input(&buf[..r as usize]);
                } else if r == 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted
                {
                    // The terminal went away (EOF or EIO). Claude exits as on SIGHUP; with
                    // ignore-term only SIGKILL may stop us, so just stop reading.
                    if self.modes.ignore_term {
                        self.stdin_open = false;
                    } else {
                        self.graceful_exit(true);
                    }
                }
            }
            self.after_event();
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Signals

static SIG_PIPE_W: AtomicI32 = AtomicI32::new(-1);
static SIG_PIPE_R: AtomicI32 = AtomicI32::new(-1);

/// Self-pipe: the handler only writes the signal number; the event loop does the work.
extern "C" fn on_signal(sig: libc::c_int) {
    // SAFETY: write(2) and errno access are async-signal-safe; errno is preserved for the interrupted code.
    unsafe {
        let errno = *libc::__errno_location();
        let b = sig as u8;
        libc::write(
            SIG_PIPE_W.load(Ordering::Relaxed),
            (&b as *const u8).cast(),
            1,
        );
        *libc::__errno_location() = errno;
    }
}

fn install_signal_handlers(ignore_term: bool) {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills the two-element array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
        fail(
            1,
            &format!("fake-agent: pipe2: {}", io::Error::last_os_error()),
        );
    }
    SIG_PIPE_R.store(fds[0], Ordering::Relaxed);
    SIG_PIPE_W.store(fds[1], Ordering::Relaxed);
    let handle = SigAction::new(
        SigHandler::Handler(on_signal),
        SaFlags::SA_RESTART,
        SigSet::empty(),
    );
    let ignore = SigAction::new(SigHandler::SigIgn, SaFlags::empty(), SigSet::empty());
    for (sig, ignorable) in [
        (Signal::SIGTERM, true),
        (Signal::SIGHUP, true),
        (Signal::SIGWINCH, false),
        (Signal::SIGCHLD, false),
    ] {
        let action = if ignorable && ignore_term {
            &ignore
        } else {
            &handle
        };
        // SAFETY: the handler only touches async-signal-safe state.
        if let Err(e) = unsafe { signal::sigaction(sig, action) } {
            eprintln!("fake-agent: sigaction {sig}: {e}");
        }
    }
}

fn drain_signals(fd: i32) -> Vec<i32> {
    let mut sigs = Vec::new();
    let mut buf = [0u8; 64];
    loop {
        // SAFETY: reading into a local buffer from our own non-blocking pipe.
        let r = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if r <= 0 {
            return sigs;
        }
        sigs.extend(buf[..r as usize].iter().map(|&b| b as i32));
    }
}

// ---------------------------------------------------------------------------------------------
// Children, memory, CPU

fn sleep_cmd(secs: u64) -> Command {
    let prog = if Path::new("/bin/sleep").exists() {
        "/bin/sleep"
    } else {
        "sleep"
    };
    let mut cmd = Command::new(prog);
    // argv `sleep N`, as a shell would exec it, whatever the path.
    cmd.arg0("sleep").arg(secs.to_string());
    cmd
}

/// Spawns with stdio on /dev/null (tool shells talk through pipes, never the pane's tty), the
/// default SIGTERM/SIGHUP dispositions (ignore-term must not leak into children through exec),
/// and optionally in a new session, like Claude's Bash tool.
fn spawn_logged(what: &str, mut cmd: Command, new_session: bool) -> Option<Child> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: only async-signal-safe calls (signal, setsid) run between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            libc::signal(libc::SIGTERM, libc::SIG_DFL);
            libc::signal(libc::SIGHUP, libc::SIG_DFL);
            if new_session && libc::setsid() < 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd.spawn()
        .map_err(|e| eprintln!("fake-agent: spawning {what}: {e}"))
        .ok()
}

/// The `dev-server` child: argv says `vite …`, comm says `vite`, and it lives until killed.
fn run_dev_server() -> ! {
    // SAFETY: PR_SET_NAME reads a NUL-terminated string of at most 16 bytes.
    unsafe {
        libc::prctl(
            libc::PR_SET_NAME,
            c"vite".as_ptr() as libc::c_ulong,
            0,
            0,
            0,
        );
    }
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}

fn eat_ram(mb: u64) {
    let len = (mb as usize) * 1024 * 1024;
    let mut v = vec![0u8; len];
    // Touch every page so it is resident and private (counts in RSS and USS).
    for i in (0..len).step_by(4096) {
        v[i] = 1;
    }
    std::hint::black_box(&v);
    Box::leak(v.into_boxed_slice());
}

fn burn_cpu() {
    let mut x: u64 = 1;
    loop {
        x = std::hint::black_box(
            x.wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407),
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Small helpers

/// Claude's project directory name: every non-alphanumeric UTF-16 unit becomes `-`; names over 200
/// characters are cut and get `-<base36 of the Java string hash>` (FORMATS.md §4.2).
fn encode_cwd(p: &str) -> String {
    let units: Vec<u16> = p.encode_utf16().collect();
    let t: String = units
        .iter()
        .map(|&u| match u8::try_from(u) {
            Ok(b) if b.is_ascii_alphanumeric() => b as char,
            _ => '-',
        })
        .collect();
    if t.len() <= 200 {
        return t;
    }
    let h = units.iter().fold(0i32, |h, &u| {
        h.wrapping_shl(5).wrapping_sub(h).wrapping_add(u as i32)
    });
    let mut n = (h as i64).unsigned_abs();
    let mut digits = Vec::new();
    loop {
        digits.push(b"0123456789abcdefghijklmnopqrstuvwxyz"[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    digits.reverse();
    format!("{}-{}", &t[..200], String::from_utf8_lossy(&digits))
}

/// `[name N]` anywhere in the prompt.
fn directive(text: &str, name: &str) -> Option<u64> {
    let tag = format!("[{name} ");
    text.match_indices(&tag).find_map(|(i, _)| {
        let rest = &text[i + tag.len()..];
        rest.split_once(']')
            .and_then(|(n, _)| n.trim().parse().ok())
    })
}

/// Field 22 of /proc/<pid>/stat (start time in clock ticks), as Claude records it.
fn proc_start(pid: u32) -> Option<String> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_comm = &stat[stat.rfind(')')? + 1..];
    after_comm
        .split_whitespace()
        .nth(22 - 3)
        .map(str::to_string)
}

fn term_size() -> (usize, usize) {
    for fd in [1, 0, 2] {
        // SAFETY: TIOCGWINSZ fills a winsize struct.
        let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
        if unsafe { libc::ioctl(fd, libc::TIOCGWINSZ, &mut ws) } == 0
            && ws.ws_col > 0
            && ws.ws_row > 0
        {
            return (ws.ws_col as usize, ws.ws_row as usize);
        }
    }
    (80, 24)
}

/// Writes to the terminal, ignoring errors: the pane may already be gone.
fn out(s: &str) {
    let mut o = io::stdout().lock();
    let _ = o.write_all(s.as_bytes());
    let _ = o.flush();
}

fn mkdir_p(dir: &Path) -> io::Result<()> {
    DirBuilder::new().recursive(true).mode(0o700).create(dir)
}

fn write_atomic(path: &Path, content: &str) -> io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    mkdir_p(dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp"));
    let mut f = OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)?;
    f.write_all(content.as_bytes())?;
    drop(f);
    fs::rename(&tmp, path)
}

/// A JSON value as text.
fn js(v: impl Into<Value>) -> String {
    v.into().to_string()
}

/// A JSON object from already-serialised values, keeping Claude's key order.
fn ordered(fields: &[(&str, String)]) -> String {
    let body: Vec<String> = fields
        .iter()
        .map(|(k, v)| format!("{}:{v}", js(*k)))
        .collect();
    format!("{{{}}}", body.join(","))
}

fn random_bytes<const N: usize>() -> [u8; N] {
    use std::io::Read;
    let mut b = [0u8; N];
    if let Err(e) = fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut b)) {
        fail(1, &format!("fake-agent: /dev/urandom: {e}"));
    }
    b
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn new_uuid() -> String {
    let mut b = random_bytes::<16>();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h = hex(&b);
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

fn valid_uuid(s: &str) -> bool {
    s.len() == 36
        && s.char_indices().all(|(i, c)| {
            if matches!(i, 8 | 13 | 18 | 23) {
                c == '-'
            } else {
                c.is_ascii_hexdigit()
            }
        })
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// `2026-12-02T13:50:53.518Z`.
fn rfc3339_ms(ms: u64) -> String {
    let secs = ms / 1000;
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    let sod = secs % 86_400;
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        sod / 3600,
        sod / 60 % 60,
        sod % 60,
        ms % 1000
    )
}

/// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}
