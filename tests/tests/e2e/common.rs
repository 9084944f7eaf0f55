//! Driving the `park` binary from tests: run it against a sandbox's tmux server and PARK_HOME,
//! read its `--json` outputs, and wait for pane/row states.
//!
//! Contract: park always runs with the sandbox's environment (HOME, PATH with the sandbox bin dir
//! first, PARK_HOME) plus `PARK_TMUX_SOCKET=<label>`; never with the caller's TMUX or TMUX_PANE
//! unless a test passes them explicitly (to play "park runs inside that pane").
#![allow(dead_code)]

use park_e2e::*;
use park_protocol::{ActionOutput, LsOutput, Row};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The park binary built next to this test binary (`scripts/test` builds it first), or `$PARK_BIN`.
pub fn park_bin() -> PathBuf {
    if let Some(p) = std::env::var_os("PARK_BIN") {
        return PathBuf::from(p);
    }
    let exe = std::env::current_exe().expect("test exe");
    // target/<profile>/deps/<test> → target/<profile>/park
    let dir = exe.parent().and_then(Path::parent).expect("target dir");
    let p = dir.join("park");
    assert!(
        p.is_file(),
        "{} not built: run `cargo build -p park` (scripts/test does)",
        p.display()
    );
    p
}

/// Puts `park` (and, when given, the fake agent as `claude`) first on the panes' PATH.
pub fn install_shims(sb: &Sandbox, fake_agent: Option<&str>) {
    let link = |target: &Path, name: &str| {
        let l = sb.bin.join(name);
        let _ = std::fs::remove_file(&l);
        std::os::unix::fs::symlink(target, &l).expect("symlink shim");
    };
    link(&park_bin(), "park");
    if let Some(fake) = fake_agent {
        link(Path::new(fake), "claude");
    }
}

pub fn park_cmd(sb: &Sandbox, extra_env: &[(&str, &str)]) -> Command {
    let mut c = Command::new(park_bin());
    c.env_clear()
        .envs(sb.base_env())
        .env("PARK_TMUX_SOCKET", sb.label())
        .envs(extra_env.iter().copied())
        .stdin(Stdio::null());
    c
}

pub fn park(sb: &Sandbox, args: &[&str]) -> Output {
    park_env(sb, args, &[])
}

pub fn park_env(sb: &Sandbox, args: &[&str], env: &[(&str, &str)]) -> Output {
    let out = park_cmd(sb, env).args(args).output().expect("run park");
    eprintln!(
        "$ park {} -> {}\n{}{}",
        args.join(" "),
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

pub fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

pub fn ls(sb: &Sandbox) -> LsOutput {
    let o = park(sb, &["ls", "--json"]);
    assert_eq!(code(&o), 0, "park ls --json failed: {}", text(&o));
    serde_json::from_slice(&o.stdout).expect("ls --json parses as the documented shape")
}

pub fn action(sb: &Sandbox, args: &[&str]) -> (i32, ActionOutput) {
    let mut a: Vec<&str> = args.to_vec();
    a.push("--json");
    let o = park(sb, &a);
    let parsed = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{a:?} --json did not parse ({e}): {}", text(&o)));
    (code(&o), parsed)
}

/// Refusals of an agent that just replied and is still settling: its CPU has not calmed yet, or
/// its transcript has not caught up with its screen (Claude Code draws the reply and says idle in
/// its status file a moment before it writes the turn).
pub const SETTLING_REFUSALS: &[&str] = &[
    "% CPU",
    "transcript shows a turn in flight",
    "last record is still being written",
];

/// Some result of `out` is refused only because its agent is settling ([`SETTLING_REFUSALS`]).
pub fn settling(out: &ActionOutput) -> bool {
    out.results.iter().any(|r| {
        r.reason
            .as_deref()
            .is_some_and(|w| SETTLING_REFUSALS.iter().any(|s| w.contains(s)))
    })
}

/// `action(args)`, retried for up to 40 s while a refusal is only an agent settling
/// ([`SETTLING_REFUSALS`]).
#[allow(dead_code)]
pub fn action_settled(sb: &Sandbox, args: &[&str]) -> (i32, ActionOutput) {
    let deadline = std::time::Instant::now() + Duration::from_secs(40);
    loop {
        let (c, out) = action(sb, args);
        if c == 0 || !settling(&out) || std::time::Instant::now() > deadline {
            return (c, out);
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

pub fn row(sb: &Sandbox, pane: &str) -> Option<Row> {
    ls(sb).rows.into_iter().find(|r| r.pane == pane)
}

/// Polls `park ls --json` until the pane's row satisfies `pred`.
pub fn wait_row(sb: &Sandbox, pane: &str, timeout: Duration, pred: impl Fn(&Row) -> bool) -> Row {
    let mut last = None;
    let got = poll(timeout, || {
        let r = row(sb, pane);
        last = r.clone();
        r.filter(|r| pred(r))
    });
    got.unwrap_or_else(|| {
        panic!(
            "row for {pane} never matched; last: {last:?}\nscreen:\n{}",
            sb.capture(pane)
        )
    })
}

pub fn entries(sb: &Sandbox) -> Vec<PathBuf> {
    let d = sb.park_home.join("parked");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&d)
        .map(|r| {
            r.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "json"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Pids of live agent processes (by program) whose environment points into the sandbox.
pub fn agent_pids(sb: &Sandbox, session_id: &str) -> Vec<u32> {
    let mut out = vec![];
    for pid in sb.processes() {
        let Ok(cmd) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        if stat
            .rsplit(')')
            .next()
            .is_some_and(|r| r.trim_start().starts_with('Z'))
        {
            continue;
        }
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        if cmd.contains(session_id) && !cmd.contains("park") {
            out.push(pid);
        }
    }
    out
}

/// Claude processes (real or fake) whose status file names `session_id`.
pub fn claude_pids_for(home: &Path, session_id: &str) -> Vec<u32> {
    claude_session_files(home)
        .into_iter()
        .filter(|(pid, v)| {
            pid_alive(*pid) && v.get("sessionId").and_then(|s| s.as_str()) == Some(session_id)
        })
        .map(|(pid, _)| pid)
        .collect()
}

/// Runs `exit` (an `/exit` typed into the Claude of session `session_id`) and waits up to
/// `timeout` for that Claude's processes to end; true if they did. It waits for the processes,
/// not for `sessions/<pid>.json`: Claude removes that file some 25 ms (quiet machine) before its
/// process ends, and in between park still sees the process run (the journal keeps its record).
pub fn claude_exits(home: &Path, session_id: &str, timeout: Duration, exit: impl FnOnce()) -> bool {
    let pids = claude_pids_for(home, session_id);
    assert!(!pids.is_empty(), "no Claude runs session {session_id}");
    exit();
    let until = Instant::now() + timeout;
    pids.iter()
        .all(|p| wait_gone(*p, until.saturating_duration_since(Instant::now())))
}

pub const SECS: fn(u64) -> Duration = Duration::from_secs;

/// Types a prompt into an agent's composer and submits it, retyping when a TUI that just drew its
/// composer dropped the keys (seen under CI load). `echo` is the composer's prefix (`❯` or `›`).
pub fn submit_prompt(sb: &Sandbox, pane: &str, text: &str, echo: &str) {
    let shown = format!("{echo}.{}", regex::escape(text));
    for _ in 0..3 {
        sb.type_text(pane, text);
        if sb.wait_for(pane, &shown, Duration::from_secs(5)).is_ok() {
            break;
        }
        sb.send_keys(pane, &["C-u"]);
    }
    sb.press_enter(pane);
}

/// A client attached to the sandbox's server from a private outer server, so its screen (status
/// line, window list, borders, popups) can be captured.
pub struct Outer {
    label: String,
    env: Env,
}

impl Outer {
    pub fn attach(sb: &Sandbox, session: &str) -> Outer {
        Outer::attach_until(sb, session, &format!("[{session}]"))
    }

    /// Attaches and waits for `ready` (a substring) on the nested client: its status line
    /// (`[session] …`) unless a prompt covers it.
    pub fn attach_until(sb: &Sandbox, session: &str, ready: &str) -> Outer {
        sb.ensure_session(session);
        let o = Outer {
            label: format!("{}-outer", sb.label()),
            env: sb.base_env(),
        };
        let inner = format!(
            "env -u TMUX tmux -L {} -f /dev/null attach -t {}",
            sh_quote(sb.label()),
            sh_quote(&format!("={session}"))
        );
        o.tmux(&[
            "new-session",
            "-d",
            "-x",
            "160",
            "-y",
            "40",
            "-s",
            "outer",
            &inner,
        ])
        .expect("start the outer tmux server");
        o.wait(ready, SECS(10))
            .unwrap_or_else(|e| panic!("nested client did not attach: {e}"));
        o
    }

    pub fn tmux(&self, args: &[&str]) -> Result<String, String> {
        let out = Command::new("tmux")
            .env_clear()
            .envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .args(["-L", &self.label, "-f", "/dev/null"])
            .args(args)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run tmux: {e}"))?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(format!(
                "outer tmux {args:?}: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ))
        }
    }

    /// The nested client's screen: the inner window, popups, and the inner status line last.
    pub fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-t", "outer:"])
            .unwrap_or_default()
    }

    /// The inner status line (the last line of the screen).
    pub fn status_line(&self) -> String {
        self.screen()
            .trim_end_matches('\n')
            .lines()
            .last()
            .unwrap_or_default()
            .to_string()
    }

    pub fn wait(&self, needle: &str, timeout: Duration) -> Result<String, String> {
        let mut last = String::new();
        poll_fast(timeout, || {
            last = self.screen();
            last.contains(needle).then(|| last.clone())
        })
        .ok_or_else(|| format!("no {needle:?} on the nested client after {timeout:?}:\n{last}"))
    }

    /// Types keys into the nested client (they reach the inner server as typed keys: C-b is
    /// the inner prefix; the outer server does not interpret keys sent with send-keys).
    pub fn keys(&self, keys: &[&str]) {
        let mut a = vec!["send-keys", "-t", "outer:"];
        a.extend_from_slice(keys);
        self.tmux(&a).unwrap();
    }
}

impl Drop for Outer {
    fn drop(&mut self) {
        let socket = self
            .tmux(&["display-message", "-p", "#{socket_path}"])
            .map(|s| PathBuf::from(s.trim()))
            .ok();
        let _ = self.tmux(&["kill-server"]);
        if let Some(s) = socket {
            if s.file_name() == Some(std::ffi::OsStr::new(&self.label)) {
                let _ = std::fs::remove_file(s);
            }
        }
    }
}

/// Polls `f` every 10 ms (fine enough to time a redraw).
pub fn poll_fast<T>(timeout: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let start = Instant::now();
    loop {
        if let Some(v) = f() {
            return Some(v);
        }
        if start.elapsed() >= timeout {
            return None;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Unwraps a `wait_for` result, failing with the screen it carries.
pub fn ok(r: Result<String, String>) -> String {
    r.unwrap_or_else(|e| panic!("{e}"))
}

/// The first result of `park <args> --json`: (exit code, outcome, reason).
pub fn outcome(sb: &Sandbox, args: &[&str]) -> (i32, String, Option<String>) {
    let (c, out) = action(sb, args);
    let r = out.results.into_iter().next().expect("one result");
    (c, r.outcome.to_string(), r.reason)
}

/// The refusals an agent gives for a moment after a reply, which a test that parks right after
/// one waits out: CPU still burning, and a turn its records have not closed yet (Claude draws the
/// reply, and its status file may say idle, before the turn's closing records are written; seen
/// under load as "busy: transcript shows a turn in flight" right after an idle row).
pub const SETTLING: &[&str] = &["CPU", "turn in flight"];

/// `park park <pane>`, retried until `settle` passes while the refusal's reason contains one of
/// `passing` (a TUI that just started or replied still burns CPU for a moment, under parallel
/// load for longer; some agents show a reply before their transcript closes the turn).
pub fn park_when_settled(
    sb: &Sandbox,
    pane: &str,
    settle: Duration,
    passing: &[&str],
) -> (i32, String, Option<String>) {
    let deadline = Instant::now() + settle;
    loop {
        let (c, oc, why) = outcome(sb, &["park", pane]);
        let settling = oc == "refused"
            && why
                .as_deref()
                .is_some_and(|w| passing.iter().any(|p| w.contains(p)));
        if !settling || Instant::now() >= deadline {
            return (c, oc, why);
        }
        eprintln!("park refused while settling: {why:?}");
        std::thread::sleep(Duration::from_millis(700));
    }
}

/// The pid and every descendant of it.
pub fn tree_of(pid: u32) -> Vec<u32> {
    let mut v = vec![pid];
    v.extend(descendants(pid));
    v
}

/// `/proc/<pid>/cmdline` as a list.
pub fn argv_of(pid: u32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|raw| {
            raw.split(|&b| b == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// The argv of every live process in `pids`, joined, for messages and searches.
pub fn argvs(pids: &[u32]) -> Vec<String> {
    pids.iter()
        .filter(|&&p| pid_alive(p))
        .map(|&p| format!("{p}: {}", argv_of(p).join(" ")))
        .collect()
}

/// A file's text, empty when it cannot be read.
pub fn read_text(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_default()
}

/// Tears a sandbox and its mock down and asserts nothing survived: no process of the sandbox,
/// none of `also_dead`, no mock server.
pub fn teardown(mut sb: Sandbox, mock: MockServer, also_dead: &[u32]) {
    let root = sb.root.clone();
    let survivors = sb.cleanup();
    assert!(survivors.is_empty(), "survived cleanup: {survivors:?}");
    let left = processes_referencing(&root);
    assert!(
        left.is_empty(),
        "processes still refer to the sandbox: {left:?}"
    );
    for &p in also_dead {
        assert!(!pid_alive(p), "pid {p} still alive after cleanup");
    }
    let mock_pid = mock.pid();
    drop(mock);
    assert!(!pid_alive(mock_pid), "mock-llm {mock_pid} still alive");
}

/// Prints a pane's non-empty lines under a heading (what the test saw, for the log).
pub fn show_pane(sb: &Sandbox, pane: &str, what: &str) {
    let screen = sb.capture(pane);
    let lines: Vec<&str> = screen.lines().filter(|l| !l.trim().is_empty()).collect();
    eprintln!("--- {what}: pane {pane} ---\n{}\n---", lines.join("\n"));
}

/// Starts `park park <pane> --json` paused `pause_ms` after its archive
/// (`PARK_FAULT_PAUSE=after-archive:<ms>`, debug builds), again while a park is refused before
/// its claim (the CPU of an agent that just replied, under load), and returns the one that
/// claimed the session and now waits before its kill.
pub fn park_paused_after_claim(
    sb: &Sandbox,
    pane: &str,
    pause_ms: u32,
    log: impl Fn(&str),
) -> std::process::Child {
    for attempt in 0..8 {
        let pause = format!("after-archive:{pause_ms}");
        let mut child = park_cmd(sb, &[("PARK_FAULT_PAUSE", &pause)])
            .args(["park", pane, "--json"])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let got = poll(Duration::from_secs(15), || {
            if !entries(sb).is_empty() {
                Some(true)
            } else {
                child.try_wait().ok().flatten().map(|_| false)
            }
        });
        if got == Some(true) {
            return child;
        }
        let out = child.wait_with_output().unwrap();
        log(&format!(
            "attempt {attempt}: no claim: {}",
            String::from_utf8_lossy(&out.stdout)
        ));
        std::thread::sleep(Duration::from_millis(700));
    }
    panic!("no park claimed the session of {pane}");
}

/// The version park read beside a live agent's binary is the one `scripts/setup` pinned
/// (`agent_version` in `park ls --json`, issue 30).
pub fn assert_pinned_version(r: &Row) {
    use park_protocol::Agent;
    let want: &[&str] = match r.agent {
        Agent::Claude => &[CLAUDE_VERSION],
        Agent::Codex => &[CODEX_VERSION],
        Agent::Qwen => &[QWEN_VERSION],
        Agent::Copilot => &[COPILOT_VERSION],
        Agent::Gemini => &[GEMINI_VERSION],
        Agent::Opencode => &[OPENCODE_VERSION],
        Agent::Kilo => &[KILO_VERSION],
        Agent::Aider => &[AIDER_VERSION],
        Agent::Pi => &[PI_VERSION],
        Agent::Kimi => &[KIMI_VERSION],
        Agent::Droid => &[DROID_VERSION],
        Agent::Cline => &[CLINE_VERSION],
    };
    assert!(
        r.agent_version
            .as_deref()
            .is_some_and(|v| want.contains(&v) || harness::agents::any_version()),
        "{} version {:?}, pinned {want:?}",
        r.agent.as_str(),
        r.agent_version
    );
}

/// park's TPM entry point (`park.tmux` at the repo root).
pub fn park_plugin() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("repo root")
        .join("park.tmux")
}

/// Loads park's tmux plugin into the sandbox's server as TPM does, with `@park-bin` set to the
/// park under test.
pub fn load_park_plugin(sb: &Sandbox) {
    sb.tmux(&[
        "set-option",
        "-g",
        "@park-bin",
        &park_bin().to_string_lossy(),
    ])
    .unwrap();
    sb.tmux(&["run-shell", &park_plugin().to_string_lossy()])
        .unwrap_or_else(|e| panic!("loading the plugin: {e}"));
}

/// The repository's root (the tests package's parent), absolute.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("repo root")
        .canonicalize()
        .expect("repo root resolves")
}
