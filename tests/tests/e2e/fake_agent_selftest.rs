//! Self-tests of the `fake-agent` binary (the deterministic Claude Code stand-in).
//!
//! Contract: every test runs the fake exactly as park's integration tests will — installed as
//! `claude` through a symlink on `PATH`, in a pane of a private tmux server (`tmux -L <unique>
//! -f /dev/null`, socket under a throwaway `TMUX_TMPDIR`) with a throwaway `HOME` — and checks what
//! park reads: the screen (composer, footer, dialog), `~/.claude/sessions/<pid>.json`, the transcript,
//! and the process tree. Every process a test starts is SIGKILLed by a Drop guard (descendants
//! included, collected before the kill), and the tmux server is killed, even when an assertion fails.
//!
//! Linux only (reads /proc). Note: in some containers PID 1 never reaps orphans, so "gone" here
//! means "no /proc entry, or a zombie".

use serde_json::Value;
use std::cell::RefCell;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const FAKE: &str = env!("CARGO_BIN_EXE_fake-agent");
const TIMEOUT: Duration = Duration::from_secs(15);
const COMPOSER: &str = "❯\u{a0}";
const IDLE_FOOTER: &str = "  ? for shortcuts · ← for agents";
const BUSY_FOOTER: &str = "  esc to interrupt · ← for agents";
const SHELL_FOOTER: &str = "  1 shell · ← for agents · ↓ to manage";

// ---------------------------------------------------------------------------------------------
// Harness: one private tmux server and one throwaway HOME per test.

struct Harness {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    label: String,
    bin: PathBuf,
    home: PathBuf,
    /// The physical project directory the agents run in (its name exercises the cwd encoding).
    work: PathBuf,
    /// pids to SIGKILL on drop (their descendants are collected at drop time).
    pids: RefCell<Vec<i32>>,
}

struct Agent {
    pane: String,
    pid: i32,
}

impl Harness {
    fn new() -> Harness {
        static N: AtomicUsize = AtomicUsize::new(0);
        let tmp = tempfile::Builder::new()
            .prefix("fa-")
            .tempdir_in("/tmp")
            .expect("tempdir");
        // The physical path: the fake records getcwd(), so compare against the same thing.
        let root = tmp.path().canonicalize().unwrap();
        let (bin, home, work) = (
            root.join("bin"),
            root.join("home"),
            root.join("work").join("proj.a_b"),
        );
        for d in [&bin, &home, &work] {
            fs::create_dir_all(d).unwrap();
        }
        std::os::unix::fs::symlink(FAKE, bin.join("claude")).unwrap();
        let label = format!(
            "fa-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        );
        let h = Harness {
            _tmp: tmp,
            root,
            label,
            bin,
            home,
            work,
            pids: RefCell::new(Vec::new()),
        };
        // A placeholder window keeps the server up between agents; remain-on-exit keeps an exited
        // agent's last screen (the resume hint) and its exit status readable.
        h.tmux(&[
            "new-session",
            "-d",
            "-s",
            "main",
            "-x",
            "120",
            "-y",
            "40",
            "sleep 1000000",
        ]);
        h.tmux(&["set-option", "-g", "remain-on-exit", "on"]);
        h
    }

    /// Runs tmux with a clean environment. tmux gives new panes the CLIENT's PATH (not the `-e`
    /// one), so the client's PATH is where the `claude` symlink is put first.
    fn tmux(&self, args: &[&str]) -> String {
        let path = format!(
            "{}:{}",
            self.bin.display(),
            std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into())
        );
        let out = Command::new("tmux")
            .env_clear()
            .env("PATH", path)
            .env("HOME", &self.home)
            .env("LC_ALL", "C.UTF-8")
            .env("TMUX_TMPDIR", &self.root)
            .args(["-u", "-L", &self.label, "-f", "/dev/null"])
            .args(args)
            .output()
            .expect("running tmux");
        assert!(
            out.status.success(),
            "tmux {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Opens a window running `claude <args>` under a small `sh` in `cwd`, as in real use: the
    /// shell stays the pty's session leader (an exiting session leader hangs the tty up, and its
    /// last output can be lost before tmux reads it), then prints `[exit N]` and keeps the pane.
    fn open(&self, cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> (String, i32) {
        let cwd = cwd.to_string_lossy().into_owned();
        let mut targs: Vec<&str> = vec![
            "new-window",
            "-d",
            "-P",
            "-F",
            "#{pane_id} #{pane_pid}",
            "-c",
            &cwd,
        ];
        let env: Vec<String> = env.iter().map(|(k, v)| format!("{k}={v}")).collect();
        for e in &env {
            targs.extend(["-e", e.as_str()]);
        }
        // Several arguments: tmux executes them directly, no quoting needed.
        targs.extend([
            "sh",
            "-c",
            r#"claude "$@"; echo "[exit $?]"; exec sleep 1000000"#,
            "sh",
        ]);
        targs.extend(args);
        let out = self.tmux(&targs);
        let (pane, shell) = out.trim().split_once(' ').expect("pane id and pid");
        let shell: i32 = shell.parse().unwrap();
        self.track(shell);
        (pane.to_string(), shell)
    }

    /// Starts `claude <args>` in `cwd` and waits for its process to exist.
    fn start_in(&self, cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> Agent {
        let (pane, shell) = self.open(cwd, args, env);
        let mut pid = 0;
        wait_for("the claude process", || {
            pid = children(shell)
                .into_iter()
                .find(|&p| cmdline(p).first().map(String::as_str) == Some("claude"))
                .unwrap_or(0);
            pid != 0
        });
        self.track(pid);
        Agent { pane, pid }
    }

    fn start(&self, args: &[&str], env: &[(&str, &str)]) -> Agent {
        self.start_in(&self.work.clone(), args, env)
    }

    /// Runs `claude <args>` in `cwd` to its exit: (screen, exit status).
    fn run_to_exit(&self, cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> (String, i32) {
        let (pane, _) = self.open(cwd, args, env);
        let a = Agent { pane, pid: 0 };
        let code = self.wait_exit(&a);
        (self.capture(&a), code)
    }

    fn track(&self, pid: i32) {
        self.pids.borrow_mut().push(pid);
    }

    fn capture(&self, a: &Agent) -> String {
        self.tmux(&["capture-pane", "-p", "-t", &a.pane])
    }

    fn wait_screen(&self, a: &Agent, what: &str, pred: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let s = self.capture(a);
            if pred(&s) {
                return s;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}; screen:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn wait_text(&self, a: &Agent, text: &str) -> String {
        self.wait_screen(a, text, |s| s.contains(text))
    }

    /// Waits for the empty composer with the idle footer.
    fn wait_idle(&self, a: &Agent) -> String {
        self.wait_screen(a, "the idle composer", |s| {
            composer_line(s).as_deref() == Some(COMPOSER)
                && footer_line(s).as_deref() == Some(IDLE_FOOTER)
        })
    }

    fn type_text(&self, a: &Agent, text: &str) {
        self.tmux(&["send-keys", "-t", &a.pane, "-l", text]);
    }

    fn submit(&self, a: &Agent, text: &str) {
        self.type_text(a, text);
        self.tmux(&["send-keys", "-t", &a.pane, "Enter"]);
    }

    /// Waits for the agent to exit and returns its status as the shell saw it (128 + signal
    /// when killed).
    fn wait_exit(&self, a: &Agent) -> i32 {
        let screen = self.wait_text(a, "[exit ");
        if a.pid != 0 {
            wait_for("the agent process to go", || !alive(a.pid));
        }
        let tail = &screen[screen.rfind("[exit ").unwrap() + 6..];
        tail[..tail.find(']').unwrap()].parse().unwrap()
    }

    fn cursor_visible(&self, a: &Agent) -> bool {
        self.tmux(&["display-message", "-p", "-t", &a.pane, "#{cursor_flag}"])
            .trim()
            == "1"
    }

    fn config(&self) -> PathBuf {
        self.home.join(".claude")
    }

    fn status_path(&self, pid: i32) -> PathBuf {
        self.config().join("sessions").join(format!("{pid}.json"))
    }

    fn status(&self, pid: i32) -> Value {
        let path = self.status_path(pid);
        let text =
            fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
        serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("parsing {}: {e}: {text}", path.display()))
    }

    fn wait_status(&self, pid: i32, want: &str) -> Value {
        wait_for(&format!("status {want}"), || {
            fs::read_to_string(self.status_path(pid))
                .ok()
                .and_then(|t| serde_json::from_str::<Value>(&t).ok())
                .is_some_and(|v| v["status"] == want)
        });
        self.status(pid)
    }

    fn transcript_path(&self, cwd: &Path, id: &str) -> PathBuf {
        // Claude's encoding for short paths: every non-alphanumeric character becomes '-'.
        let enc: String = cwd
            .to_string_lossy()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        self.config()
            .join("projects")
            .join(enc)
            .join(format!("{id}.jsonl"))
    }

    fn records(&self, id: &str) -> Vec<Value> {
        let path = self.transcript_path(&self.work, id);
        let text =
            fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
        text.lines()
            .map(|l| {
                serde_json::from_str(l).unwrap_or_else(|e| panic!("bad JSONL line {l:?}: {e}"))
            })
            .collect()
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        // Collect the whole tree first: once a parent dies its children are reparented to init.
        let mut all = Vec::new();
        for &pid in self.pids.borrow().iter() {
            all.push(pid);
            all.extend(descendants(pid));
        }
        for pid in all {
            if alive(pid) {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
        }
        let _ = Command::new("tmux")
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("TMUX_TMPDIR", &self.root)
            .args(["-L", &self.label, "kill-server"])
            .output();
    }
}

// ---------------------------------------------------------------------------------------------
// Screen and /proc helpers

/// The composer line (`❯` + NBSP + draft). Only ASCII spaces are trimmed: `trim_end` would eat
/// the NBSP, which is the very cue that tells the composer from a submitted prompt.
fn composer_line(screen: &str) -> Option<String> {
    screen
        .lines()
        .find(|l| l.starts_with(COMPOSER))
        .map(|l| l.trim_end_matches(' ').to_string())
}

/// The line after the rule that follows the composer.
fn footer_line(screen: &str) -> Option<String> {
    let lines: Vec<&str> = screen.lines().collect();
    let i = lines.iter().position(|l| l.starts_with(COMPOSER))?;
    if !lines.get(i + 1)?.starts_with("───") {
        return None;
    }
    Some(
        lines
            .get(i + 2)
            .map(|l| l.trim_end_matches(' ').to_string())
            .unwrap_or_default(),
    )
}

fn wait_for(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + TIMEOUT;
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

struct Stat {
    state: char,
    ppid: i32,
    pgid: i32,
    sid: i32,
    start: String,
    cpu_ticks: u64,
}

fn stat(pid: i32) -> Option<Stat> {
    let s = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let f: Vec<&str> = s[s.rfind(')')? + 2..].split_whitespace().collect();
    // f[0] is field 3 (state), so field N is f[N - 3].
    Some(Stat {
        state: f[0].chars().next()?,
        ppid: f[1].parse().ok()?,
        pgid: f[2].parse().ok()?,
        sid: f[3].parse().ok()?,
        cpu_ticks: f[11].parse::<u64>().ok()? + f[12].parse::<u64>().ok()?,
        start: f[22 - 3].to_string(),
    })
}

fn alive(pid: i32) -> bool {
    stat(pid).is_some_and(|s| s.state != 'Z')
}

fn cmdline(pid: i32) -> Vec<String> {
    fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| {
            b.split(|&c| c == 0)
                .filter(|p| !p.is_empty())
                .map(|p| String::from_utf8_lossy(p).into_owned())
                .collect()
        })
        .unwrap_or_default()
}

fn children(pid: i32) -> Vec<i32> {
    let Ok(dir) = fs::read_dir("/proc") else {
        return vec![];
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&p| stat(p).is_some_and(|s| s.ppid == pid))
        .collect()
}

fn descendants(pid: i32) -> Vec<i32> {
    let mut out = Vec::new();
    let mut todo = vec![pid];
    while let Some(p) = todo.pop() {
        for c in children(p) {
            out.push(c);
            todo.push(c);
        }
    }
    out
}

fn kill(pid: i32, sig: nix::sys::signal::Signal) {
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), sig).expect("kill");
}

fn is_uuid(s: &str) -> bool {
    s.len() == 36
        && s.char_indices().all(|(i, c)| {
            if matches!(i, 8 | 13 | 18 | 23) {
                c == '-'
            } else {
                c.is_ascii_hexdigit()
            }
        })
}

use nix::sys::signal::Signal::{SIGHUP, SIGKILL, SIGTERM};

// ---------------------------------------------------------------------------------------------
// Tests

/// The main life cycle park relies on: status file, lazy transcript, screen cues, draft detection,
/// graceful SIGTERM with the resume hint, then `--resume` continuing the same file.
#[test]
fn turn_draft_sigterm_and_resume() {
    let h = Harness::new();
    let a = h.start(&[], &[]);
    let screen = h.wait_idle(&a);
    assert!(
        screen
            .lines()
            .next()
            .unwrap()
            .starts_with("Fake Claude Code v2.1.197"),
        "{screen}"
    );

    // The status file exists from startup and identifies the process exactly.
    let st = h.status(a.pid);
    let id = st["sessionId"].as_str().unwrap().to_string();
    assert!(is_uuid(&id), "{st}");
    assert_eq!(st["pid"], a.pid);
    assert_eq!(st["cwd"], h.work.to_str().unwrap());
    assert_eq!(
        st["procStart"].as_str(),
        Some(stat(a.pid).unwrap().start.as_str()),
        "procStart must be field 22 of /proc/<pid>/stat"
    );
    assert_eq!(st["status"], "idle");
    assert_eq!(st["version"], "2.1.197");
    assert_eq!(st["kind"], "interactive");
    assert_eq!(st["entrypoint"], "cli");
    for k in ["startedAt", "updatedAt", "statusUpdatedAt"] {
        assert!(st[k].as_u64().is_some(), "{k} in {st}");
    }
    assert_eq!(
        fs::metadata(h.status_path(a.pid))
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o600
    );
    let transcript = h.transcript_path(&h.work, &id);
    assert!(
        !transcript.exists(),
        "the transcript must appear only at the first prompt"
    );

    // First turn.
    h.submit(&a, "hello fake ü");
    let screen = h.wait_text(&a, "PARKTEST-OK");
    assert!(
        screen.contains("❯ hello fake ü"),
        "a submitted prompt uses a normal space:\n{screen}"
    );
    assert!(screen.contains("● Fake reply #1. PARKTEST-OK"), "{screen}");
    assert_eq!(
        fs::metadata(&transcript).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let recs = h.records(&id);
    let kinds: Vec<&str> = recs.iter().map(|r| r["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["user", "assistant", "system"]);
    assert_eq!(recs[0]["message"]["content"], "hello fake ü");
    assert_eq!(recs[0]["parentUuid"], Value::Null);
    assert_eq!(recs[0]["origin"]["kind"], "human");
    assert_eq!(recs[0]["sessionId"], id.as_str());
    assert_eq!(recs[0]["cwd"], h.work.to_str().unwrap());
    assert!(recs[0]["timestamp"].as_str().unwrap().ends_with('Z'));
    assert_eq!(recs[1]["parentUuid"], recs[0]["uuid"]);
    assert_eq!(
        recs[1]["message"]["content"][0]["text"],
        "Fake reply #1. PARKTEST-OK"
    );
    assert_eq!(recs[1]["message"]["stop_reason"], "end_turn");
    assert_eq!(recs[2]["subtype"], "turn_duration");
    assert_eq!(recs[2]["parentUuid"], recs[1]["uuid"]);

    // A slow turn: busy on screen and in the status file, then idle again.
    h.submit(&a, "think [slow 2]");
    let screen = h.wait_screen(&a, "the busy footer", |s| {
        footer_line(s).as_deref() == Some(BUSY_FOOTER)
    });
    assert!(!screen.contains("Fake reply #2"), "{screen}");
    assert_eq!(h.status(a.pid)["status"], "busy");
    h.wait_text(&a, "Fake reply #2. PARKTEST-OK");
    h.wait_status(a.pid, "idle");
    h.wait_idle(&a);

    // An unsent draft: after the NBSP, and the footer goes blank.
    h.type_text(&a, "unsent draft");
    let screen = h.wait_screen(&a, "the draft", |s| {
        composer_line(s).as_deref() == Some("❯\u{a0}unsent draft")
    });
    assert_eq!(footer_line(&screen).as_deref(), Some(""), "{screen}");
    assert_eq!(
        h.status(a.pid)["status"],
        "idle",
        "a draft does not change the status file"
    );

    // Graceful SIGTERM.
    kill(a.pid, SIGTERM);
    assert_eq!(h.wait_exit(&a), 0);
    assert!(
        !h.status_path(a.pid).exists(),
        "a graceful exit removes sessions/<pid>.json"
    );
    assert!(
        h.cursor_visible(&a),
        "a graceful exit shows the cursor again"
    );
    let screen = h.capture(&a);
    assert!(
        screen.contains("Resume this session with:")
            && screen.contains(&format!("claude --resume {id}")),
        "{screen}"
    );
    let recs = h.records(&id);
    let last = recs.last().unwrap();
    assert_eq!(last["type"], "last-prompt");
    assert_eq!(last["lastPrompt"], "think [slow 2]");
    assert_eq!(last["leafUuid"], recs[recs.len() - 2]["uuid"]);
    let old_leaf = recs[recs.len() - 2]["uuid"].clone();
    let old_len = recs.len();

    // Resume: the history comes back, the flags are echoed, the same file keeps growing.
    let b = h.start(
        &[
            "--resume",
            &id,
            "--dangerously-skip-permissions",
            "--model",
            "opus",
        ],
        &[],
    );
    let screen = h.wait_idle(&b);
    assert!(
        screen.contains("Fake Claude Code v2.1.197 [--dangerously-skip-permissions --model opus]"),
        "{screen}"
    );
    assert!(
        screen.contains("❯ hello fake ü") && screen.contains("● Fake reply #2. PARKTEST-OK"),
        "{screen}"
    );
    assert_eq!(h.status(b.pid)["sessionId"], id.as_str());
    h.submit(&b, "after resume");
    h.wait_text(&b, "● Fake reply #3. PARKTEST-OK");
    let recs = h.records(&id);
    assert_eq!(recs.len(), old_len + 3);
    assert_eq!(recs[old_len]["type"], "user");
    assert_eq!(
        recs[old_len]["parentUuid"], old_leaf,
        "the first new record chains to the previous leaf"
    );
    assert_eq!(recs[old_len]["permissionMode"], "bypassPermissions");
    assert_eq!(recs[old_len + 1]["message"]["model"], "opus");
    assert_eq!(
        fs::read_dir(transcript.parent().unwrap()).unwrap().count(),
        1,
        "no second transcript"
    );

    // The id is now taken, and the transcript is keyed by the cwd.
    let (screen, code) = h.run_to_exit(&h.work, &["--session-id", &id], &[]);
    assert_eq!(code, 1);
    assert!(
        screen.contains(&format!("Error: Session ID {id} is already in use.")),
        "{screen}"
    );
    let other = h.root.join("work").join("other");
    fs::create_dir_all(&other).unwrap();
    let (screen, code) = h.run_to_exit(&other, &["--resume", &id], &[]);
    assert_eq!(code, 1);
    assert!(
        screen.contains(&format!("No conversation found with session ID: {id}")),
        "{screen}"
    );

    kill(b.pid, SIGHUP);
    assert_eq!(h.wait_exit(&b), 0);
    assert!(!h.status_path(b.pid).exists());
}

/// `--resume` of an unknown id fails like Claude; `--session-id` uses the given id; a resumed
/// transcript ending in an unanswered prompt gets Claude's synthetic reply before the next prompt.
#[test]
fn session_id_flags_and_midturn_kill() {
    let h = Harness::new();
    let unknown = "00000000-0000-4000-8000-000000000000";
    let (screen, code) = h.run_to_exit(&h.work, &["--resume", unknown], &[]);
    assert_eq!(code, 1);
    assert!(
        screen.contains(&format!("No conversation found with session ID: {unknown}")),
        "{screen}"
    );

    let id = "11111111-2222-4333-8444-555555555555";
    let b = h.start(&["--session-id", id], &[]);
    h.wait_idle(&b);
    assert_eq!(h.status(b.pid)["sessionId"], id);
    // Killed mid-turn: the user record exists, no assistant, a stale status file stays.
    h.submit(&b, "long one [slow 60]");
    h.wait_status(b.pid, "busy");
    kill(b.pid, SIGKILL);
    assert_eq!(h.wait_exit(&b), 137);
    assert!(
        h.status_path(b.pid).exists(),
        "SIGKILL leaves the status file"
    );
    let kinds: Vec<String> = h
        .records(id)
        .iter()
        .map(|r| r["type"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(kinds, ["user"]);

    let c = h.start(&["--resume", id], &[]);
    let screen = h.wait_idle(&c);
    assert!(screen.contains("❯ long one [slow 60]"), "{screen}");
    assert!(
        !h.status_path(b.pid).exists(),
        "a starting agent sweeps the stale status file of a dead pid"
    );
    h.submit(&c, "next");
    h.wait_text(&c, "PARKTEST-OK");
    let recs = h.records(id);
    let kinds: Vec<&str> = recs.iter().map(|r| r["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["user", "assistant", "user", "assistant", "system"]);
    assert_eq!(
        recs[1]["message"]["content"][0]["text"],
        "No response requested."
    );
    assert_eq!(recs[2]["parentUuid"], recs[1]["uuid"]);
}

/// `ignore-term`: SIGTERM and SIGHUP change nothing; only SIGKILL stops it (leaving its file).
#[test]
fn ignore_term_survives_sigterm() {
    let h = Harness::new();
    let a = h.start(&[], &[("FAKE_AGENT_MODE", "ignore-term")]);
    h.wait_idle(&a);
    kill(a.pid, SIGTERM);
    kill(a.pid, SIGHUP);
    std::thread::sleep(Duration::from_millis(700));
    assert!(alive(a.pid), "ignore-term must survive SIGTERM/SIGHUP");
    assert!(h.status_path(a.pid).exists());
    h.submit(&a, "still here");
    h.wait_text(&a, "PARKTEST-OK");
    assert!(!h.cursor_visible(&a), "the cursor is hidden while it runs");
    kill(a.pid, SIGKILL);
    assert_eq!(h.wait_exit(&a), 137);
    assert!(
        h.status_path(a.pid).exists(),
        "SIGKILL leaves a stale sessions file"
    );
    assert!(
        !h.cursor_visible(&a),
        "SIGKILL leaves the cursor hidden, like Claude"
    );
}

/// `setsid-child`: a `sleep 100000` in its own session, which outlives a SIGKILLed parent.
#[test]
fn setsid_child_survives_sigkill() {
    let h = Harness::new();
    let a = h.start(&[], &[("FAKE_AGENT_MODE", "setsid-child")]);
    h.wait_idle(&a);
    let kids = children(a.pid);
    let child = *kids
        .iter()
        .find(|&&p| cmdline(p) == ["sleep", "100000"])
        .unwrap_or_else(|| panic!("no `sleep 100000` child among {kids:?}"));
    h.track(child);
    let (cs, ps) = (stat(child).unwrap(), stat(a.pid).unwrap());
    assert_eq!(cs.sid, child, "the child leads its own session");
    assert_ne!(cs.sid, ps.sid);
    assert_ne!(cs.pgid, ps.pgid);

    kill(a.pid, SIGKILL);
    assert_eq!(h.wait_exit(&a), 137);
    assert!(
        alive(child),
        "the setsid child must survive the parent's SIGKILL"
    );
    assert_ne!(stat(child).unwrap().ppid, a.pid, "reparented");
    kill(child, SIGKILL);
    wait_for("the setsid child to die", || !alive(child));
}

/// `dev-server`, `zombie`, `eat-ram`, `slow-exit` and `FAKE_AGENT_CPU` together.
#[test]
fn dev_server_zombie_ram_slow_exit_and_cpu() {
    let h = Harness::new();
    let a = h.start(
        &[],
        &[
            (
                "FAKE_AGENT_MODE",
                "dev-server, zombie, eat-ram=64, slow-exit=1500",
            ),
            ("FAKE_AGENT_CPU", "1"),
        ],
    );
    h.wait_idle(&a);
    let kids = children(a.pid);
    let agent = stat(a.pid).unwrap();
    let vite = *kids
        .iter()
        .find(|&&p| cmdline(p).first().map(String::as_str) == Some("vite"))
        .unwrap_or_else(|| panic!("no vite child among {kids:?}"));
    assert_eq!(cmdline(vite), ["vite", "--port", "5173", "--strictPort"]);
    assert_eq!(
        fs::read_to_string(format!("/proc/{vite}/comm"))
            .unwrap()
            .trim(),
        "vite"
    );
    assert_eq!(
        stat(vite).unwrap().pgid,
        agent.pgid,
        "the dev server shares the agent's process group"
    );
    assert!(
        kids.iter()
            .any(|&p| stat(p).is_some_and(|s| s.state == 'Z')),
        "no zombie child among {kids:?}"
    );
    let status = fs::read_to_string(format!("/proc/{}/status", a.pid)).unwrap();
    let rss_kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .unwrap()
        .trim()
        .trim_end_matches(" kB")
        .trim()
        .parse()
        .unwrap();
    assert!(rss_kb >= 64 * 1024, "eat-ram=64 but VmRSS is {rss_kb} kB");
    let before = stat(a.pid).unwrap().cpu_ticks;
    std::thread::sleep(Duration::from_millis(1500));
    let burnt = stat(a.pid).unwrap().cpu_ticks - before;
    assert!(
        burnt >= 20,
        "FAKE_AGENT_CPU=1 burnt only {burnt} ticks in 1.5 s"
    );

    kill(a.pid, SIGTERM);
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        alive(a.pid) && h.status_path(a.pid).exists(),
        "slow-exit delays the exit"
    );
    assert_eq!(h.wait_exit(&a), 0);
    assert!(!h.status_path(a.pid).exists());
    assert!(!alive(vite), "a graceful exit kills the dev server");
    assert!(
        !h.capture(&a).contains("Resume this session with:"),
        "no transcript, no hint"
    );
}

/// `[wait]` opens the permission dialog (status `waiting`); `[bg N]` leaves a background shell
/// (status `shell`, shell footer) until it ends.
#[test]
fn permission_dialog_and_background_shell() {
    let h = Harness::new();
    let a = h.start(&[], &[]);
    h.wait_idle(&a);
    h.submit(&a, "touch it [wait]");
    let screen = h.wait_text(&a, "Do you want to proceed?");
    assert!(
        screen.contains("❯ 1. Yes") && screen.contains("  2. No"),
        "{screen}"
    );
    assert!(
        composer_line(&screen).is_none(),
        "the dialog replaces the composer:\n{screen}"
    );
    let st = h.wait_status(a.pid, "waiting");
    assert_eq!(st["waitingFor"], "permission prompt");
    h.type_text(&a, "1");
    h.wait_text(&a, "Fake reply #1. PARKTEST-OK");
    h.wait_status(a.pid, "idle");

    h.submit(&a, "job [bg 3]");
    h.wait_screen(&a, "the shell footer", |s| {
        footer_line(s).as_deref() == Some(SHELL_FOOTER)
    });
    assert_eq!(h.status(a.pid)["status"], "shell");
    let bg = children(a.pid)
        .into_iter()
        .find(|&p| cmdline(p) == ["sleep", "3"])
        .expect("the background shell");
    h.track(bg);
    assert_eq!(
        stat(bg).unwrap().sid,
        bg,
        "tool shells run in their own session"
    );
    h.wait_status(a.pid, "idle");
    h.wait_idle(&a);
}

/// `/clear` switches the session id at once (the status file follows, argv goes stale) and the next
/// prompt starts a new transcript; `--continue` then resumes the newest transcript of the cwd.
#[test]
fn clear_and_continue() {
    let h = Harness::new();
    let a = h.start(&[], &[]);
    h.wait_idle(&a);
    h.submit(&a, "first session");
    h.wait_text(&a, "PARKTEST-OK");
    let old = h.status(a.pid)["sessionId"].as_str().unwrap().to_string();
    h.submit(&a, "/clear");
    wait_for("a new session id", || {
        h.status(a.pid)["sessionId"] != old.as_str()
    });
    let new = h.status(a.pid)["sessionId"].as_str().unwrap().to_string();
    let screen = h.wait_idle(&a);
    assert!(!screen.contains("first session"), "{screen}");
    assert!(
        !h.transcript_path(&h.work, &new).exists(),
        "lazy again after /clear"
    );
    h.submit(&a, "second session");
    h.wait_text(&a, "Fake reply #1. PARKTEST-OK");
    assert_eq!(h.records(&new)[0]["message"]["content"], "second session");
    assert_eq!(h.records(&old).len(), 3, "the old transcript is left alone");
    h.submit(&a, "/exit");
    assert_eq!(h.wait_exit(&a), 0);

    let b = h.start(&["--continue"], &[]);
    let screen = h.wait_idle(&b);
    assert!(screen.contains("❯ second session"), "{screen}");
    assert_eq!(h.status(b.pid)["sessionId"], new.as_str());
}

/// `sticky-busy` pins the status file to busy; `no-status-file` never writes one.
#[test]
fn sticky_busy_and_no_status_file() {
    let h = Harness::new();
    let a = h.start(&[], &[("FAKE_AGENT_MODE", "sticky-busy")]);
    let b = h.start(&[], &[("FAKE_AGENT_MODE", "no-status-file")]);
    h.wait_idle(&a);
    h.wait_idle(&b);
    assert_eq!(h.status(a.pid)["status"], "busy");
    h.submit(&a, "hi");
    h.submit(&b, "hi");
    h.wait_text(&a, "PARKTEST-OK");
    h.wait_text(&b, "PARKTEST-OK");
    assert_eq!(h.status(a.pid)["status"], "busy");
    assert!(!h.status_path(b.pid).exists());
    // The unknown mode item is refused loudly.
    let (screen, code) = h.run_to_exit(&h.work, &[], &[("FAKE_AGENT_MODE", "no-such-mode")]);
    assert_eq!(code, 2, "{screen}");
    assert!(screen.contains("unknown FAKE_AGENT_MODE item"), "{screen}");
}
