//! Smoke test of the end-to-end infrastructure: the REAL Claude Code and Codex CLIs (installed
//! by `scripts/setup`) run offline in a private tmux server against `mock-llm`, and each
//! sandbox leaves nothing behind.
//!
//! Run: `cargo test -p park-e2e --test e2e agents_smoke:: -- --nocapture --test-threads=1`.
//! Each test asserts, after its own cleanup, that no process refers to its sandbox any more,
//! the tmux server is gone, the directory is removed and the mock server has exited.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{ok, submit_prompt};
use park_e2e::*;

const START: Duration = Duration::from_secs(60);
/// The first daemon-mode Codex start copies ~424 MB into `~/.codex/packages` first.
const CODEX_DAEMON_START: Duration = Duration::from_secs(120);
const REPLY: Duration = Duration::from_secs(60);

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

/// Cleans `sb` up and `mock` down, then asserts that nothing survived.
fn assert_cleanup(mut sb: Sandbox, mock: MockServer, also_dead: &[u32]) {
    let t = Instant::now();
    let root = sb.root.clone();
    let label = sb.label().to_string();
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
    if std::env::var_os("PARK_KEEP_SANDBOX").is_none() {
        assert!(!root.exists(), "{} was not removed", root.display());
    }
    let socket = format!("/tmp/tmux-{}/{label}", current_uid());
    assert!(!Path::new(&socket).exists(), "{socket} left behind");
    // has-session never starts a server; it fails when none listens on the label.
    let st = Command::new("tmux")
        .args(["-L", &label, "-f", "/dev/null", "has-session"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(!st.success(), "tmux server {label} still running");
    drop(sb);
    let mock_pid = mock.pid();
    drop(mock);
    assert!(!pid_alive(mock_pid), "mock-llm {mock_pid} still alive");
    eprintln!("cleanup took {:?}", t.elapsed());
}

/// Prints the pane (screen and title) to the test output, for the record.
fn show(sb: &Sandbox, pane: &str, what: &str) {
    let screen = sb.capture(pane);
    let lines: Vec<&str> = screen.lines().filter(|l| !l.trim().is_empty()).collect();
    eprintln!(
        "--- {what}: pane {pane}, title {:?} ---\n{}\n---",
        sb.pane_title(pane),
        lines.join("\n")
    );
}

fn file_contains(path: &Path, needle: &str) -> bool {
    std::fs::read_to_string(path).is_ok_and(|s| s.contains(needle))
}

#[test]
fn claude_real_cli_in_tmux() {
    let t0 = Instant::now();
    let agents = Agents::locate();
    let sb = Sandbox::new();
    let mock = mock_server!(&sb.logs);
    let proj = sb.project_dir("claude-proj");
    seed_claude_home(&sb.home, &sb.work, CLAUDE_API_KEY).unwrap();

    let pane = sb.new_shell_window("t", "claude", &sb.work, &sb.claude_env(&mock));
    // The pane's PATH carries the pinned install, as a user's would.
    sb.type_line(&pane, "command -v claude");
    ok(sb.wait_for(
        &pane,
        &regex_escape(&agents.claude.to_string_lossy()),
        secs(10),
    ));
    let sid = uuid_v4();
    sb.type_line(
        &pane,
        &format!("cd claude-proj && claude --dangerously-skip-permissions --session-id {sid}"),
    );
    // The idle footer names the permission mode (bypass here).
    ok(sb.wait_for(&pane, r"bypass permissions on|shift\+tab to cycle", START));
    submit_prompt(&sb, &pane, "hello from the park smoke test", "❯");
    ok(sb.wait_for(&pane, r"canned reply #\d+\)\. PARKTEST-OK", REPLY));

    let transcript = claude_transcript(&sb.home, &proj, &sid);
    poll(secs(10), || {
        file_contains(&transcript, r#""type":"assistant""#).then_some(())
    })
    .unwrap_or_else(|| panic!("no assistant record in {}", transcript.display()));

    let shell = sb.pane_pid(&pane).expect("pane pid");
    let (claude_pid, status) = poll(secs(10), || {
        claude_session_files(&sb.home)
            .into_iter()
            .find(|(_, v)| v["sessionId"] == sid.as_str() && v["status"] == "idle")
    })
    .unwrap_or_else(|| {
        panic!(
            "no idle sessions/<pid>.json for {sid}: {:?}",
            claude_session_files(&sb.home)
        )
    });
    assert!(
        descendants(shell).contains(&claude_pid),
        "sessions/{claude_pid}.json is not for a process under the pane's shell {shell}"
    );
    assert_eq!(status["cwd"], proj.to_string_lossy().as_ref());

    // Claude Code 2.1.332 keeps the terminal title at `✳ Claude Code` (the session's own name is
    // in its status file, checked above).
    ok(sb.wait_for_title(&pane, "Claude Code", secs(15)));

    // [slow N]: a busy screen, then the reply.
    sb.type_line(&pane, "take your time [slow 3]");
    ok(sb.wait_for(&pane, "esc to interrupt", secs(15)));
    ok(sb.wait_for(&pane, r"(?s)PARKTEST-OK.*PARKTEST-OK", REPLY));

    // [tool CMD]: Claude runs Bash (no prompt in bypass mode), then the mock ends the turn.
    sb.type_line(&pane, "run it [tool echo PARK-TOOL-RAN]");
    ok(sb.wait_for(&pane, "Tool finished", REPLY));
    assert!(file_contains(&transcript, "PARK-TOOL-RAN"));

    let kinds: Vec<String> = mock
        .requests()
        .iter()
        .filter_map(|r| r["kind"].as_str().map(String::from))
        .collect();
    // 2.1.332 asks the model for no title (it names the session itself, in its status file).
    for k in ["text", "tool", "tool_result"] {
        assert!(kinds.iter().any(|x| x == k), "no {k} request in {kinds:?}");
    }
    show(&sb, &pane, "claude");
    eprintln!("claude smoke: agent part took {:?}", t0.elapsed());
    assert_cleanup(sb, mock, &[claude_pid]);
    eprintln!("claude smoke: total {:?}", t0.elapsed());
}

#[test]
fn codex_no_daemon_in_tmux() {
    let t0 = Instant::now();
    let agents = Agents::locate();
    let sb = Sandbox::new();
    // The runtime lookup of mock-llm (next to the test binary), instead of the macro.
    let mock = MockServer::start(&sb.logs);
    let proj = sb.project_dir("codex-nd");
    seed_codex_home(&sb.home, &sb.work, &mock, &CodexSeed::default()).unwrap();

    let codex = agents.codex.to_string_lossy().into_owned();
    let pane = sb.new_agent_window(
        "t",
        "codex-nd",
        &proj,
        &sb.codex_env(),
        &[&codex, "--no-daemon"],
    );
    ok(sb.wait_for(&pane, "Ask Codex to do anything", START));
    let pid = sb.pane_pid(&pane).expect("pane pid");
    // Retyped if Codex dropped the keys while it was still starting (seen twice in CI).
    submit_prompt(&sb, &pane, "hello codex without daemon", "›");
    ok(sb.wait_for(&pane, r"canned reply #\d+\)\. PARKTEST-OK", REPLY));

    let rollout = poll(secs(15), || {
        codex_rollouts(&sb.home)
            .into_iter()
            .find(|p| file_contains(p, "task_complete"))
    })
    .unwrap_or_else(|| panic!("no completed rollout: {:?}", codex_rollouts(&sb.home)));
    assert!(file_contains(&rollout, "hello codex without daemon"));

    // [slow N]: busy, then a second reply.
    sb.type_line(&pane, "second prompt [slow 3]");
    ok(sb.wait_for(&pane, r"Working \(", secs(15)));
    ok(sb.wait_for(&pane, r"(?s)PARKTEST-OK.*PARKTEST-OK", REPLY));

    // [tool CMD]: an exec_command call, run by Codex, then the mock ends the turn.
    sb.type_line(&pane, "run it [tool echo PARK-CODEX-TOOL]");
    ok(sb.wait_for(&pane, "Tool finished", REPLY));
    assert!(file_contains(&rollout, "PARK-CODEX-TOOL"));

    // --no-daemon: the TUI runs its own server, so no daemon was started.
    let daemons: Vec<u32> = codex_daemon_pids(&sb.home)
        .into_iter()
        .filter(|&p| pid_alive(p))
        .collect();
    assert!(daemons.is_empty(), "a daemon runs: {daemons:?}");
    let tree = descendants(pid);
    show(&sb, &pane, "codex --no-daemon");
    eprintln!("codex no-daemon smoke: agent part took {:?}", t0.elapsed());
    let mut dead = vec![pid];
    dead.extend(tree);
    assert_cleanup(sb, mock, &dead);
    eprintln!("codex no-daemon smoke: total {:?}", t0.elapsed());
}

#[test]
fn codex_daemon_with_thread_id_title() {
    let t0 = Instant::now();
    Agents::locate();
    let sb = Sandbox::new();
    let mock = mock_server!(&sb.logs);
    let proj = sb.project_dir("codex-d");
    seed_codex_home(
        &sb.home,
        &sb.work,
        &mock,
        &CodexSeed::default().thread_id_title(),
    )
    .unwrap();

    let pane = sb.new_shell_window("t", "codex-d", &proj, &sb.codex_env());
    sb.type_line(&pane, "codex");
    ok(sb.wait_for(&pane, "Ask Codex to do anything", CODEX_DAEMON_START));
    eprintln!("codex daemon smoke: TUI ready after {:?}", t0.elapsed());
    submit_prompt(&sb, &pane, "hello codex daemon", "›");
    ok(sb.wait_for(&pane, r"canned reply #\d+\)\. PARKTEST-OK", REPLY));

    let rollout = poll(secs(15), || {
        codex_rollouts(&sb.home)
            .into_iter()
            .find(|p| file_contains(p, "task_complete"))
    })
    .unwrap_or_else(|| panic!("no completed rollout: {:?}", codex_rollouts(&sb.home)));
    let name = rollout.file_name().unwrap().to_string_lossy().into_owned();
    let thread_id = &name[name.len() - ".jsonl".len() - 36..name.len() - ".jsonl".len()];

    // The title carries a prefix of the thread id (Codex cuts it to 29 chars + "...").
    let title = ok(sb.wait_for_title(
        &pane,
        r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}",
        secs(20),
    ));
    let re = regex::Regex::new(r"[0-9a-f]{8}-[0-9a-f-]+").unwrap();
    let shown = re.find(&title).unwrap().as_str().trim_end_matches('-');
    assert!(
        thread_id.starts_with(shown),
        "title {title:?} does not show a prefix of thread {thread_id}"
    );
    ok(sb.wait_for_title(&pane, "Mock hello codex", secs(20)));

    // Daemon mode: the shared app-server runs outside the pane's process tree.
    let daemons: Vec<u32> = codex_daemon_pids(&sb.home)
        .into_iter()
        .filter(|&p| pid_alive(p))
        .collect();
    assert!(!daemons.is_empty(), "no app-server daemon is running");
    let shell = sb.pane_pid(&pane).expect("pane pid");
    let mut dead = daemons.clone();
    dead.extend(descendants(shell));
    show(&sb, &pane, "codex (daemon)");
    eprintln!("codex daemon smoke: agent part took {:?}", t0.elapsed());
    assert_cleanup(sb, mock, &dead);
    eprintln!("codex daemon smoke: total {:?}", t0.elapsed());
}

/// Escapes regex metacharacters in a literal.
fn regex_escape(s: &str) -> String {
    regex::escape(s)
}
