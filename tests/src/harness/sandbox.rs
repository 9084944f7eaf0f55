//! [`Sandbox`]: one test's private world, and the tmux pane helpers that drive agents in it.
//!
//! Layout of a sandbox (a fresh `park-sbx-*` temp dir, canonicalized so the paths the agents
//! record equal ours):
//! * `home/` — HOME for the tmux server and every pane (agents write `~/.claude*`, `~/.codex`);
//! * `work/` — project dirs go under it (seeds trust this dir);
//! * `park-home/` — `PARK_HOME`; `tmp/` — agent scratch (`CLAUDE_CODE_TMPDIR`);
//! * `logs/` — mock server logs and anything a test wants to keep next to them;
//! * `bin/` — first on the panes' PATH, for shims; then the agents' bin dirs (if installed),
//!   then the test's own PATH.
//!
//! The tmux server runs as `tmux -L park-t-<pid>-<n> -f /dev/null` with a CLEARED environment
//! (only HOME, PATH, PARK_HOME, locale, TERM, USER, SHELL), so a developer's CODEX_HOME,
//! CLAUDE_CONFIG_DIR or API keys never leak into a pane.
//!
//! Cleanup (Drop, or [`Sandbox::cleanup`] to check the result): stop a Codex app-server daemon
//! gracefully if one runs, `kill-server`, then TERM/KILL every process whose environment, cwd
//! or executable still refers to the sandbox (the daemon reparents to init, so a process-tree
//! walk from tmux would miss it), then remove the directory (kept if `PARK_KEEP_SANDBOX` is set).
//! The first sandbox of a test process also sweeps sandboxes left by test processes that died
//! before their Drop ran (their owner pid is gone).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use regex::Regex;

use crate::harness::agents::Agents;
use crate::harness::claude::claude_env;
use crate::harness::codex::{codex_daemon_pids, codex_env};
use crate::harness::copilot::Copilot;
use crate::harness::gemini::Gemini;
use crate::harness::mock::MockServer;
use crate::harness::opencode::Opencode;
use crate::harness::procs::{kill_and_reap, pid_alive, processes_referencing, start_ticks};
use crate::harness::qwen::Qwen;
use crate::harness::util::{poll, sh_quote, Env};

/// The prompt of shells started by [`Sandbox::new_shell_window`] (`PS1`), so tests can wait for
/// it with `wait_for(pane, r"park-test\$", ..)` (capture-pane drops the trailing space).
pub const SHELL_PROMPT: &str = "park-test$ ";

/// Width and height of every tmux window (the size the reference captures were taken at).
const COLS: &str = "160";
const ROWS: &str = "45";

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// `{"pid", "start", "label"}` of the test process that made the sandbox, so a later run can
/// recognise a sandbox whose test was killed before its Drop ran.
const OWNER_FILE: &str = ".park-sandbox-owner";

/// A throwaway HOME + work dir + private tmux server; see the module docs.
pub struct Sandbox {
    /// The sandbox root (canonical path).
    pub root: PathBuf,
    /// HOME of the tmux server and the agents.
    pub home: PathBuf,
    /// Parent of the project dirs; trusted by the seeds.
    pub work: PathBuf,
    /// `PARK_HOME` for park itself.
    pub park_home: PathBuf,
    /// Scratch dir for agents (`CLAUDE_CODE_TMPDIR`).
    pub tmp: PathBuf,
    /// Logs (the mock server's, typically).
    pub logs: PathBuf,
    /// First on the panes' PATH; put shims here.
    pub bin: PathBuf,
    label: String,
    path_env: String,
    codex_bin: Option<PathBuf>,
    dir: Option<tempfile::TempDir>,
    cleaned: bool,
}

impl Default for Sandbox {
    fn default() -> Self {
        Self::new()
    }
}

impl Sandbox {
    /// Creates the directories and picks a unique tmux label; the tmux server starts with the
    /// first window.
    pub fn new() -> Sandbox {
        let dir = tempfile::Builder::new()
            .prefix("park-sbx-")
            .tempdir()
            .expect("create sandbox temp dir");
        let root = dir.path().canonicalize().expect("canonicalize sandbox dir");
        let sub = |name: &str| {
            let p = root.join(name);
            std::fs::create_dir_all(&p).expect("create sandbox subdir");
            p
        };
        let (home, work, park_home, tmp, logs, bin) = (
            sub("home"),
            sub("work"),
            sub("park-home"),
            sub("tmp"),
            sub("logs"),
            sub("bin"),
        );
        let agents = Agents::try_locate().ok();
        let mut path: Vec<PathBuf> = vec![bin.clone()];
        if let Some(a) = &agents {
            path.extend(a.bin_dirs());
        }
        let inherited = std::env::var_os("PATH")
            .unwrap_or_else(|| OsString::from("/usr/local/bin:/usr/bin:/bin"));
        path.extend(std::env::split_paths(&inherited));
        let path_env = std::env::join_paths(path)
            .expect("PATH entries")
            .to_string_lossy()
            .into_owned();
        let n = COUNTER.fetch_add(1, Ordering::SeqCst);
        let label = format!("park-t-{}-{n}", std::process::id());
        let me = std::process::id();
        let owner = serde_json::json!({
            "pid": me, "start": start_ticks(me), "label": label,
        });
        std::fs::write(root.join(OWNER_FILE), owner.to_string()).expect("write sandbox owner");
        if n == 0 {
            sweep_stale_sandboxes(root.parent().unwrap_or(Path::new("/tmp")));
        }
        Sandbox {
            label,
            root,
            home,
            work,
            park_home,
            tmp,
            logs,
            bin,
            path_env,
            codex_bin: agents.map(|a| a.codex),
            dir: Some(dir),
            cleaned: false,
        }
    }

    /// The tmux socket label (`tmux -L <label>`).
    pub fn label(&self) -> &str {
        &self.label
    }

    /// Creates (if needed) and returns `work/<name>`: a project dir.
    pub fn project_dir(&self, name: &str) -> PathBuf {
        let p = self.work.join(name);
        std::fs::create_dir_all(&p).expect("create project dir");
        p
    }

    /// The whole environment the tmux server (hence every pane) starts with.
    pub fn base_env(&self) -> Env {
        let user = std::env::var("USER").unwrap_or_else(|_| "root".into());
        [
            ("HOME", self.home.to_string_lossy().into_owned()),
            ("PATH", self.path_env.clone()),
            ("PARK_HOME", self.park_home.to_string_lossy().into_owned()),
            ("LANG", "C.UTF-8".into()),
            ("LC_ALL", "C.UTF-8".into()),
            ("TERM", "xterm-256color".into()),
            ("SHELL", "/bin/bash".into()),
            ("USER", user.clone()),
            ("LOGNAME", user),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }

    /// The environment for `claude` against `mock` in this sandbox (see [`claude_env`]).
    pub fn claude_env(&self, mock: &MockServer) -> Env {
        claude_env(mock, &self.home, &self.tmp)
    }

    /// The environment for `qwen` against `mock` in this sandbox (see [`Qwen::env`]); its
    /// scratch (the registry's IPC sockets) goes to `tmp/`.
    pub fn qwen_env(&self, qwen: &Qwen, mock: &MockServer) -> Env {
        let mut env = qwen.env(mock, &self.home, &self.path_env);
        env.push(("TMPDIR".into(), self.tmp.to_string_lossy().into_owned()));
        env
    }

    /// The environment for `copilot` against `mock` in this sandbox (see [`Copilot::env`]).
    pub fn copilot_env(&self, copilot: &Copilot, mock: &MockServer) -> Env {
        let mut env = copilot.env(mock, &self.home, &self.path_env);
        env.push(("TMPDIR".into(), self.tmp.to_string_lossy().into_owned()));
        env
    }

    /// The environment for `gemini` against `mock` in this sandbox (see [`Gemini::env`]).
    pub fn gemini_env(&self, gemini: &Gemini, mock: &MockServer) -> Env {
        let mut env = gemini.env(mock, &self.home, &self.path_env);
        env.push(("TMPDIR".into(), self.tmp.to_string_lossy().into_owned()));
        env
    }

    /// The environment for `opencode` in this sandbox (see [`Opencode::env`]).
    pub fn opencode_env(&self, opencode: &Opencode) -> Env {
        let mut env = opencode.env(&self.home, &self.path_env);
        env.push(("TMPDIR".into(), self.tmp.to_string_lossy().into_owned()));
        env
    }

    /// The environment for `codex` in this sandbox (see [`codex_env`]).
    pub fn codex_env(&self) -> Env {
        codex_env(&self.home)
    }

    /// `tmux -L <label> -f /dev/null` with the sandbox's cleared environment, ready for args.
    pub fn tmux_command(&self) -> Command {
        let mut c = Command::new("tmux");
        c.env_clear()
            .envs(self.base_env())
            .args(["-L", &self.label, "-f", "/dev/null"])
            .stdin(Stdio::null());
        c
    }

    /// Runs a tmux command on the sandbox server: stdout on success, else an error with stderr.
    pub fn tmux(&self, args: &[&str]) -> Result<String, String> {
        let out: Output = self
            .tmux_command()
            .args(args)
            .output()
            .map_err(|e| format!("cannot run tmux: {e}"))?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(format!(
                "tmux {args:?} failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ))
        }
    }

    /// Makes sure `session` exists. Its first window runs only `sleep`, so the server (and the
    /// session) outlive any agent pane.
    pub fn ensure_session(&self, session: &str) {
        if self
            .tmux(&["has-session", "-t", &format!("={session}")])
            .is_ok()
        {
            return;
        }
        let work = self.work.to_string_lossy().into_owned();
        self.tmux(&[
            "new-session",
            "-d",
            "-s",
            session,
            "-x",
            COLS,
            "-y",
            ROWS,
            "-c",
            &work,
            "-n",
            "_keep",
            "exec sleep 2147483647",
        ])
        .expect("start the sandbox tmux server");
    }

    /// The PATH the sandbox's panes get (shims first).
    pub fn path_env(&self) -> &str {
        &self.path_env
    }

    /// Opens a detached window `name` in `session` running the shell command `command` (via the
    /// default shell, `bash -c`) in `cwd`, with `env` added to the pane's environment.
    /// Returns the pane id (`%N`).
    pub fn new_window<K: AsRef<str>, V: AsRef<str>>(
        &self,
        session: &str,
        name: &str,
        cwd: &Path,
        env: &[(K, V)],
        command: &str,
    ) -> String {
        self.spawn_window(session, name, cwd, env, &[command])
    }

    /// `new-window -d -P -F '#{pane_id}'`; with two or more `argv` items tmux execs them
    /// directly, with one it hands it to the default shell.
    fn spawn_window<K: AsRef<str>, V: AsRef<str>>(
        &self,
        session: &str,
        name: &str,
        cwd: &Path,
        env: &[(K, V)],
        argv: &[&str],
    ) -> String {
        self.ensure_session(session);
        let target = format!("{session}:");
        let cwd = cwd.to_string_lossy().into_owned();
        let envs: Vec<String> = env
            .iter()
            .map(|(k, v)| format!("{}={}", k.as_ref(), v.as_ref()))
            .collect();
        let mut args: Vec<&str> = vec![
            "new-window",
            "-d",
            "-P",
            "-F",
            "#{pane_id}",
            "-t",
            &target,
            "-n",
            name,
            "-c",
            &cwd,
        ];
        for e in &envs {
            args.push("-e");
            args.push(e);
        }
        // tmux gives a pane the PATH of the client that asked for it, over `-e PATH=…` (a test's
        // client is never attached), so a PATH of the caller's is set by the command itself.
        let path = env
            .iter()
            .find(|(k, _)| k.as_ref() == "PATH")
            .map(|(_, v)| v.as_ref().to_string());
        let with_path: Vec<String> = match (&path, argv) {
            (None, _) => vec![],
            (Some(p), [one]) => vec![format!("export PATH={}; {one}", sh_quote(p))],
            (Some(p), _) => ["env".to_string(), format!("PATH={p}")]
                .into_iter()
                .chain(argv.iter().map(|a| a.to_string()))
                .collect(),
        };
        if path.is_some() {
            args.extend(with_path.iter().map(String::as_str));
        } else {
            args.extend_from_slice(argv);
        }
        let out = self.tmux(&args).unwrap_or_else(|e| panic!("{e}"));
        out.trim().to_string()
    }

    /// Opens a window running an interactive `bash --norc --noprofile` whose environment holds
    /// `env` (exported) and `PS1=`[`SHELL_PROMPT`], and waits for the prompt; agents can then be
    /// typed at it, as a user would. The pane's pid is the shell's.
    pub fn new_shell_window<K: AsRef<str>, V: AsRef<str>>(
        &self,
        session: &str,
        name: &str,
        cwd: &Path,
        env: &[(K, V)],
    ) -> String {
        let mut all: Env = env
            .iter()
            .map(|(k, v)| (k.as_ref().to_string(), v.as_ref().to_string()))
            .collect();
        all.push(("PS1".into(), SHELL_PROMPT.into()));
        // Exec'd directly, not through `bash -c`: a non-interactive bash drops PS1 from the
        // environment it passes on.
        let pane = self.spawn_window(session, name, cwd, &all, &["bash", "--norc", "--noprofile"]);
        if let Err(e) = self.wait_for(&pane, r"park-test\$", Duration::from_secs(15)) {
            panic!("shell prompt did not appear: {e}");
        }
        pane
    }

    /// Opens a window whose command IS the agent: `argv` is exec'd directly (no shell), so the
    /// pane's pid is the agent's and the pane closes when it exits.
    pub fn new_agent_window<K: AsRef<str>, V: AsRef<str>>(
        &self,
        session: &str,
        name: &str,
        cwd: &Path,
        env: &[(K, V)],
        argv: &[&str],
    ) -> String {
        assert!(!argv.is_empty(), "new_agent_window needs a command");
        if argv.len() == 1 {
            // tmux would hand a lone item to the shell, which would split it: quote and exec.
            let cmd = format!("exec {}", sh_quote(argv[0]));
            self.spawn_window(session, name, cwd, env, &[&cmd])
        } else {
            self.spawn_window(session, name, cwd, env, argv)
        }
    }

    /// The visible screen of `pane` (`capture-pane -p -J`: wrapped lines joined), or an error if
    /// the pane is gone.
    pub fn try_capture(&self, pane: &str) -> Result<String, String> {
        self.tmux(&["capture-pane", "-p", "-J", "-t", pane])
    }

    /// The visible screen of `pane`; empty if the pane is gone.
    pub fn capture(&self, pane: &str) -> String {
        self.try_capture(pane).unwrap_or_default()
    }

    /// The visible screen with colours and attributes as escape sequences (`-e`), e.g. to tell a
    /// dim placeholder from typed text.
    pub fn capture_escaped(&self, pane: &str) -> String {
        self.tmux(&["capture-pane", "-p", "-J", "-e", "-t", pane])
            .unwrap_or_default()
    }

    /// Polls the screen of `pane` every 100 ms until `regex` matches; returns that screen. On
    /// timeout, or if the pane disappears, the error carries the last screen seen.
    pub fn wait_for(&self, pane: &str, regex: &str, timeout: Duration) -> Result<String, String> {
        let re = Regex::new(regex).map_err(|e| format!("bad regex {regex:?}: {e}"))?;
        let start = Instant::now();
        let mut last = String::new();
        loop {
            match self.try_capture(pane) {
                Ok(screen) => {
                    if re.is_match(&screen) {
                        return Ok(screen);
                    }
                    last = screen;
                }
                Err(e) => {
                    return Err(format!(
                    "pane {pane} is gone while waiting for /{regex}/ ({e}); last screen:\n{last}"
                ))
                }
            }
            if start.elapsed() >= timeout {
                return Err(format!(
                    "timed out after {timeout:?} waiting for /{regex}/ in pane {pane} (title {:?}); last screen:\n{last}\n{}",
                    self.pane_title(pane),
                    self.pane_processes(pane)
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// What runs in `pane` (its process and every descendant: state, age, CPU, memory, argv),
    /// and the machine's load: why a screen never came (a hung start, a dead agent, a machine
    /// too busy) is in a timeout's message.
    pub fn pane_processes(&self, pane: &str) -> String {
        let Ok(pid) = self.tmux(&["display-message", "-p", "-t", pane, "#{pane_pid}"]) else {
            return "pane processes: the pane is gone".into();
        };
        let root = pid.trim().to_string();
        let out = std::process::Command::new("ps")
            .args(["-e", "-o", "pid=,ppid=,stat=,etimes=,pcpu=,rss=,args="])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default();
        let rows: Vec<(String, String, String)> = out
            .lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                (f.len() >= 2).then(|| (f[0].to_string(), f[1].to_string(), l.trim().to_string()))
            })
            .collect();
        let mut tree = vec![root.clone()];
        let mut i = 0;
        while i < tree.len() {
            let parent = tree[i].clone();
            tree.extend(rows.iter().filter(|r| r.1 == parent).map(|r| r.0.clone()));
            i += 1;
        }
        let lines: Vec<&str> = rows
            .iter()
            .filter(|r| tree.contains(&r.0))
            .map(|r| r.2.as_str())
            .collect();
        let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
        format!(
            "pane processes (pid ppid stat age %cpu rss argv), load {}:\n{}",
            load.trim(),
            lines.join("\n")
        )
    }

    /// Like [`Sandbox::wait_for`], on the pane title (`#{pane_title}`, set by the agent).
    pub fn wait_for_title(
        &self,
        pane: &str,
        regex: &str,
        timeout: Duration,
    ) -> Result<String, String> {
        let re = Regex::new(regex).map_err(|e| format!("bad regex {regex:?}: {e}"))?;
        let mut last = String::new();
        poll(timeout, || {
            last = self.pane_title(pane);
            re.is_match(&last).then(|| last.clone())
        })
        .ok_or_else(|| {
            format!("timed out after {timeout:?} waiting for title /{regex}/ in pane {pane}; last title {last:?}")
        })
    }

    /// Types `text` literally (`send-keys -l`), then pauses 300 ms: the TUIs treat keys that
    /// arrive together as a paste, so an Enter sent at once would land inside the draft.
    pub fn type_text(&self, pane: &str, text: &str) {
        self.tmux(&["send-keys", "-t", pane, "-l", "--", text])
            .unwrap_or_else(|e| panic!("{e}"));
        std::thread::sleep(Duration::from_millis(300));
    }

    /// Presses Enter in `pane`.
    pub fn press_enter(&self, pane: &str) {
        self.send_keys(pane, &["Enter"]);
    }

    /// [`Sandbox::type_text`] then [`Sandbox::press_enter`].
    pub fn type_line(&self, pane: &str, text: &str) {
        self.type_text(pane, text);
        self.press_enter(pane);
    }

    /// Sends tmux key names (`Enter`, `Escape`, `C-c`, ...) to `pane`.
    pub fn send_keys(&self, pane: &str, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", pane];
        args.extend_from_slice(keys);
        self.tmux(&args).unwrap_or_else(|e| panic!("{e}"));
    }

    /// Expands a tmux format for `pane` (`display-message -p`); `None` if the pane is gone.
    pub fn display(&self, pane: &str, format: &str) -> Option<String> {
        self.tmux(&["display-message", "-p", "-t", pane, format])
            .ok()
            .map(|s| s.trim_end_matches('\n').to_string())
    }

    /// The pid of the pane's command (the shell, or the agent for `new_agent_window`).
    pub fn pane_pid(&self, pane: &str) -> Option<u32> {
        self.display(pane, "#{pane_pid}")?.trim().parse().ok()
    }

    /// Does the pane still exist, with its command running?
    pub fn pane_alive(&self, pane: &str) -> bool {
        // `display -t %N` falls back to the current pane when %N is gone, so compare the id.
        match self.display(pane, "#{pane_id} #{pane_dead}") {
            Some(s) => s == format!("{pane} 0"),
            None => false,
        }
    }

    /// The pane title the agent set (OSC 0/2).
    pub fn pane_title(&self, pane: &str) -> String {
        self.display(pane, "#{pane_title}").unwrap_or_default()
    }

    /// Live processes that still refer to this sandbox (environment, cwd or executable).
    pub fn processes(&self) -> Vec<u32> {
        processes_referencing(&self.root)
    }

    /// Stops everything this sandbox started and removes its directory (see the module docs).
    /// Idempotent. Returns the pids that could not be killed (normally none).
    pub fn cleanup(&mut self) -> Vec<u32> {
        if self.cleaned {
            return Vec::new();
        }
        self.cleaned = true;
        self.stop_codex_daemon();
        // tmux 3.3 leaves its socket file behind after kill-server; remove it too.
        let socket = self
            .tmux(&["display-message", "-p", "#{socket_path}"])
            .map(|s| PathBuf::from(s.trim()))
            .unwrap_or_else(|_| self.default_socket_path());
        let _ = self.tmux(&["kill-server"]);
        let mut survivors = Vec::new();
        for _ in 0..4 {
            let pids = self.processes();
            if pids.is_empty() {
                survivors.clear();
                break;
            }
            survivors = kill_and_reap(&pids, Duration::from_secs(3));
        }
        if socket.file_name() == Some(std::ffi::OsStr::new(&self.label)) {
            let _ = std::fs::remove_file(&socket);
        }
        if let Some(dir) = self.dir.take() {
            if std::env::var_os("PARK_KEEP_SANDBOX").is_some() {
                let kept = dir.keep();
                // Without an owner file the sweep of a later run leaves the dir alone.
                let _ = std::fs::remove_file(kept.join(OWNER_FILE));
                eprintln!("PARK_KEEP_SANDBOX: keeping {}", kept.display());
            } else {
                let path = dir.path().to_path_buf();
                // A dying daemon may still be writing; retry a removal that races with it.
                let mut res = dir.close();
                for _ in 0..5 {
                    if res.is_ok() || !path.exists() {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(200));
                    res = std::fs::remove_dir_all(&path);
                }
                if let Err(e) = res {
                    eprintln!("sandbox: cannot remove {}: {e}", path.display());
                }
            }
        }
        if !survivors.is_empty() {
            eprintln!("sandbox: processes survived cleanup: {survivors:?}");
        }
        survivors
    }

    /// Where tmux puts `-L <label>` with TMUX_TMPDIR unset: `/tmp/tmux-<uid>/<label>`.
    fn default_socket_path(&self) -> PathBuf {
        PathBuf::from(format!("/tmp/tmux-{}", current_uid())).join(&self.label)
    }

    /// `codex app-server daemon stop` (with the sandbox HOME), when a daemon is alive, then TERM
    /// its pid-update-loop, which `stop` leaves running. Both would also be caught by the
    /// environment scan; stopping them first lets the daemon shut down cleanly.
    fn stop_codex_daemon(&self) {
        let pids: Vec<u32> = codex_daemon_pids(&self.home)
            .into_iter()
            .filter(|&p| pid_alive(p))
            .collect();
        if pids.is_empty() {
            return;
        }
        if let Some(codex) = &self.codex_bin {
            let child = Command::new(codex)
                .args(["app-server", "daemon", "stop"])
                .env_clear()
                .envs(self.base_env())
                .current_dir(&self.home)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn();
            if let Ok(mut child) = child {
                // `stop` returns in ~0.3 s when idle, but waits for a running turn (a tool
                // still running kept it busy for 15 s+); the kill below handles that case.
                let done = poll(Duration::from_secs(3), || child.try_wait().ok().flatten());
                if done.is_none() {
                    let _ = child.kill();
                    let _ = child.wait();
                }
            }
        }
        let alive: Vec<u32> = pids.into_iter().filter(|&p| pid_alive(p)).collect();
        kill_and_reap(&alive, Duration::from_secs(3));
    }
}

/// Cleans up after test processes that died without dropping their sandboxes (SIGKILL, Ctrl-C):
/// for every `park-sbx-*` dir in `tmp` whose owner process is gone, kill what still refers to
/// it, remove its tmux socket and the dir. Sandboxes of live test processes are left alone.
fn sweep_stale_sandboxes(tmp: &Path) {
    let Ok(rd) = std::fs::read_dir(tmp) else {
        return;
    };
    for e in rd.flatten() {
        let dir = e.path();
        let is_sandbox = dir
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("park-sbx-"));
        if !is_sandbox {
            continue;
        }
        let Some(owner) = std::fs::read_to_string(dir.join(OWNER_FILE))
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        else {
            continue; // not ours, or still being created
        };
        let pid = owner["pid"].as_u64().unwrap_or(0) as u32;
        let alive = pid_alive(pid) && start_ticks(pid) == owner["start"].as_u64();
        if alive {
            continue;
        }
        let pids = processes_referencing(&dir);
        kill_and_reap(&pids, Duration::from_secs(2));
        if let Some(label) = owner["label"].as_str() {
            let socket = PathBuf::from(format!("/tmp/tmux-{}", current_uid())).join(label);
            let _ = std::fs::remove_file(socket);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// The real uid of this process (the owner of `/proc/self`).
pub fn current_uid() -> u32 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self")
        .map(|m| m.uid())
        .unwrap_or(0)
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        self.cleanup();
    }
}
