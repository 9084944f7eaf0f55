//! Dev servers and test browsers parked with their window, against the real Claude Code 2.1.197
//! (local mock model server) in a real tmux server.
//!
//! The window holds: real Claude; a shell running a `vite`-named node server (an http server on a
//! port, with an `esbuild --service` child) that also launched a headless "Chromium" stand-in
//! through a shell that exited, so the browser tree (with its renderer child) was reparented to
//! init; `vim vite.config.ts`; and `rg webpack src/` (a stand-in binary named `rg`). Parking the
//! window must stop Claude, the server tree and the orphaned browser tree, leave vim and rg alone,
//! and record the server; `park unpark --with-servers` brings Claude and the server back.

use crate::common::*;
use park_e2e::*;
use park_protocol::{RowState, Status};
use std::path::Path;

const SLEEPER: &str = env!("CARGO_BIN_EXE_sleeper");

pub(crate) const VITE: &str = r#"#!/usr/bin/env node
// A dev server named like vite: serves on --port, has a child, and starts a detached test browser.
const http = require('http');
const { spawn } = require('child_process');
const path = require('path');
const port = Number(process.argv[process.argv.indexOf('--port') + 1]);
spawn(process.execPath, [path.join(__dirname, '../esbuild/bin/esbuild'), '--service=0.21.5', '--ping'], { stdio: 'ignore' });
if (process.env.START_BROWSER === '1') {
  const chrome = process.env.BROWSER_BIN;
  spawn('sh', ['-c', `"${chrome}" --headless=new --remote-debugging-port=0 about:blank >/dev/null 2>&1 &`], { stdio: 'ignore' });
}
http.createServer((q, r) => r.end('vite ok')).listen(port, '127.0.0.1', () => console.log(`VITE ready on ${port}`));
"#;

pub(crate) const ESBUILD: &str = "#!/usr/bin/env node\nsetInterval(() => {}, 1e6);\n";

const CHROME: &str = r#"#!/usr/bin/env node
// A headless Chromium stand-in: a browser process with a renderer child.
const { spawn } = require('child_process');
if (!process.argv.some(a => a.startsWith('--type='))) {
  spawn(process.execPath, [__filename, '--type=renderer', '--headless=new'], { stdio: 'ignore' });
}
setInterval(() => {}, 1e6);
"#;

pub(crate) fn write_exec(p: &Path, text: &str) {
    park_e2e::harness::util::write_exe(p, text);
}

pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub(crate) fn pids_running(sb: &Sandbox, needle: &str) -> Vec<u32> {
    sb.processes()
        .into_iter()
        .filter(|p| {
            std::fs::read(format!("/proc/{p}/cmdline"))
                .map(|c| {
                    String::from_utf8_lossy(&c)
                        .replace('\0', " ")
                        .contains(needle)
                })
                .unwrap_or(false)
        })
        .collect()
}

pub(crate) fn split(sb: &Sandbox, target: &str, dir: &Path, env: &[(String, String)]) -> String {
    let mut a: Vec<String> = vec![
        "split-window".into(),
        "-d".into(),
        "-P".into(),
        "-F".into(),
        "#{pane_id}".into(),
        "-t".into(),
        target.into(),
        "-c".into(),
        dir.to_string_lossy().into_owned(),
    ];
    for (k, v) in env {
        a.push("-e".into());
        a.push(format!("{k}={v}"));
    }
    a.push("-e".into());
    a.push(format!("PS1={SHELL_PROMPT}"));
    a.extend(["bash".into(), "--norc".into(), "--noprofile".into()]);
    let refs: Vec<&str> = a.iter().map(|s| s.as_str()).collect();
    let pane = sb.tmux(&refs).unwrap().trim().to_string();
    sb.wait_for(&pane, r"park-test\$", SECS(15)).unwrap();
    pane
}

#[test]
fn parking_a_window_stops_claude_its_dev_server_and_browser_and_with_servers_brings_them_back() {
    let sb = Sandbox::new();
    let mock = mock_server!(&sb.logs);
    seed_claude_home(&sb.home, &sb.work, CLAUDE_API_KEY).unwrap();
    install_shims(&sb, None);
    harness::util::copy_exe(std::path::Path::new(SLEEPER), &sb.bin.join("rg"));
    let dir = sb.project_dir("web");
    write_exec(&dir.join("node_modules/.bin/vite"), VITE);
    write_exec(&dir.join("node_modules/esbuild/bin/esbuild"), ESBUILD);
    let chrome = sb
        .home
        .join(".cache/ms-playwright/chromium-1140/chrome-linux/chrome");
    write_exec(&chrome, CHROME);
    std::fs::write(dir.join("vite.config.ts"), "export default {}\n").unwrap();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let env = sb.claude_env(&mock);

    let claude = sb.new_shell_window("w", "web", &dir, &env);
    // Claude first, while its pane is the whole window (its reply must fit on screen).
    sb.type_line(&claude, "claude");
    sb.wait_for(&claude, CLAUDE_READY, SECS(60)).unwrap();
    submit_prompt(&sb, &claude, "servers window prompt", "❯");
    sb.wait_for(&claude, "PARKTEST-OK", SECS(60)).unwrap();
    let sid = wait_row(&sb, &claude, SECS(30), |r| {
        r.status == Status::Idle && r.state == RowState::Live
    })
    .session_id
    .unwrap();
    let server_env: Vec<(String, String)> = env
        .iter()
        .cloned()
        .chain([
            ("START_BROWSER".to_string(), "1".to_string()),
            (
                "BROWSER_BIN".to_string(),
                chrome.to_string_lossy().into_owned(),
            ),
        ])
        .collect();
    // The other panes split each other, so Claude keeps half the window: Claude Code 2.1.332
    // does not redraw its composer into a pane shrunk to a few rows under it (park then reads the
    // pane as unknown and refuses, which is right, but not what this test is about).
    let server = split(&sb, &claude, &dir, &server_env);
    let editor = split(&sb, &server, &dir, &env);
    let search = split(&sb, &editor, &dir, &env);
    let port = free_port();
    sb.type_line(
        &server,
        &format!("PORT={port} node_modules/.bin/vite --port {port}"),
    );
    sb.wait_for(&server, &format!("VITE ready on {port}"), SECS(20))
        .unwrap();
    sb.type_line(&editor, "vim -n vite.config.ts");
    sb.wait_for(&editor, "export default", SECS(10)).unwrap();
    sb.type_line(&search, "rg webpack src/");
    // Its composer is on screen (redrawn for the half window), so park can read its state.
    sb.wait_for(&claude, CLAUDE_READY, SECS(20)).unwrap();

    let vite = pids_running(&sb, "node_modules/.bin/vite");
    let esbuild = pids_running(&sb, "esbuild --service");
    let browser = pids_running(&sb, "chrome-linux/chrome");
    let vim = pids_running(&sb, "vim -n vite.config.ts");
    let rg = pids_running(&sb, "rg webpack src/");
    assert_eq!(
        (vite.len(), esbuild.len(), vim.len(), rg.len()),
        (1, 1, 1, 1)
    );
    assert_eq!(browser.len(), 2, "browser and renderer: {browser:?}");
    let ppid = |p: u32| {
        std::fs::read_to_string(format!("/proc/{p}/stat"))
            .ok()
            .and_then(|s| {
                s.rsplit(')')
                    .next()?
                    .split_whitespace()
                    .nth(1)?
                    .parse::<u32>()
                    .ok()
            })
            .unwrap_or(0)
    };
    let orphaned = browser
        .iter()
        .any(|b| !browser.contains(&ppid(*b)) && ppid(*b) != vite[0]);
    assert!(orphaned, "the browser was reparented away from the server");

    // ls shows the server and the browser under the window, with their memory.
    let l = ls(&sb);
    let names: Vec<(&str, &str)> = l
        .servers
        .iter()
        .map(|x| (x.name.as_str(), x.state.as_str()))
        .collect();
    assert!(names.contains(&("vite", "running")), "{:?}", l.servers);
    assert!(names.contains(&("chrome", "running")), "{:?}", l.servers);
    assert!(l.servers.iter().all(|x| x.bytes > 0));
    assert_eq!(
        l.servers.len(),
        2,
        "vim and rg are not servers: {:?}",
        l.servers
    );
    let text_ls = text(&park(&sb, &["ls"]));
    assert!(
        text_ls.contains("⚙ vite") && text_ls.contains("⚙ chrome"),
        "{text_ls}"
    );

    // The dry run names both and stops nothing. Claude redraws for its half window (seen at 25%
    // CPU under CI load): its refusal for CPU is right, and the dry run is asked again, as the
    // park below is.
    let (c, plan) = action_settled(&sb, &["park", "w:web", "--dry-run"]);
    assert_eq!(c, 0, "{plan:?}\nscreen:\n{}", sb.capture(&claude));
    assert_eq!(
        plan.results
            .iter()
            .filter(|r| r.outcome.as_str() == "would-stop")
            .count(),
        2,
        "{plan:?}"
    );
    assert!(vite.iter().chain(&browser).all(|p| pid_alive(*p)));

    // Park the window.
    let (c, out) = action_settled(&sb, &["park", "w:web"]);
    assert_eq!(c, 0, "{out:?}");
    let outcomes: Vec<&str> = out.results.iter().map(|r| r.outcome.as_str()).collect();
    assert_eq!(
        outcomes.iter().filter(|o| **o == "parked").count(),
        1,
        "{out:?}"
    );
    assert_eq!(
        outcomes.iter().filter(|o| **o == "stopped").count(),
        2,
        "{out:?}"
    );
    let freed = |o: &str| -> u64 {
        out.results
            .iter()
            .filter(|r| r.outcome.as_str() == o)
            .filter_map(|r| r.freed_bytes)
            .sum()
    };
    eprintln!(
        "MEASURE window park: agent {:.1} MB, servers {:.1} MB (vite+esbuild, headless browser+renderer stand-ins)",
        freed("parked") as f64 / 1048576.0,
        freed("stopped") as f64 / 1048576.0
    );
    assert!(claude_pids_for(&sb.home, &sid).is_empty());
    for p in vite.iter().chain(&esbuild).chain(&browser) {
        assert!(wait_gone(*p, SECS(5)), "pid {p} survived the window park");
    }
    for p in vim.iter().chain(&rg) {
        assert!(pid_alive(*p), "pid {p} (vim/rg) must be left alone");
    }
    let l = ls(&sb);
    let stopped: Vec<&str> = l
        .servers
        .iter()
        .filter(|x| x.state == "stopped")
        .map(|x| x.name.as_str())
        .collect();
    assert!(stopped.contains(&"vite"), "{:?}", l.servers);
    let rec = l.servers.iter().find(|x| x.name == "vite").unwrap();
    assert!(
        rec.command.contains("node_modules/.bin/vite --port"),
        "{rec:?}"
    );
    sb.wait_for(&server, r"Terminated\s+park-test\$", SECS(10))
        .unwrap();

    // A dry run says what it would type and does nothing: no vite, the record stays (the real
    // unpark below restarts from it).
    let (_, dry) = action(&sb, &["unpark", "w:web", "--with-servers", "--dry-run"]);
    let said = |o: &str, word: &str| {
        dry.results
            .iter()
            .any(|r| r.outcome.as_str() == o && r.reason.as_deref().unwrap_or("").contains(word))
    };
    assert!(
        dry.results
            .iter()
            .any(|r| r.outcome.as_str() == "would-unpark"),
        "{dry:?}"
    );
    assert!(
        said("would-restart", "node_modules/.bin/vite --port"),
        "{dry:?}"
    );
    assert!(said("not-restarted", "chrome"), "{dry:?}");
    assert!(pids_running(&sb, "node_modules/.bin/vite").is_empty());
    assert!(claude_pids_for(&sb.home, &sid).is_empty());

    // Unpark the window with its servers: Claude resumes, vite is typed back at its prompt.
    let (c, out) = action(&sb, &["unpark", "w:web", "--with-servers"]);
    let outcomes: Vec<(&str, &str)> = out
        .results
        .iter()
        .map(|r| (r.outcome.as_str(), r.reason.as_deref().unwrap_or("")))
        .collect();
    assert!(outcomes.iter().any(|o| o.0 == "unparked"), "{out:?}");
    assert!(
        outcomes
            .iter()
            .any(|o| o.0 == "restarted" && o.1.contains("vite")),
        "{out:?}"
    );
    assert!(
        outcomes
            .iter()
            .any(|o| o.0 == "not-restarted" && o.1.contains("chrome") && o.1.contains("detached")),
        "the detached browser is reported, not restarted: {out:?}"
    );
    assert_eq!(
        c, 1,
        "a server that could not be restarted makes the exit 1"
    );
    // The pane still shows the first vite's `VITE ready` line (a park does not clear it), so the
    // sign of the restart is the port: nothing listened on it since the park killed that vite.
    poll(SECS(20), || {
        std::net::TcpStream::connect(("127.0.0.1", port)).ok()
    })
    .unwrap_or_else(|| panic!("vite never listened again:\n{}", sb.capture(&server)));
    let body = std::process::Command::new("curl")
        .args(["-s", &format!("http://127.0.0.1:{port}/")])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    assert!(body.is_empty() || body == "vite ok", "{body}");
    // Exactly one dev server once the dust settles (under CI load a process of the stopped tree
    // was once still on its way out right after the restart; a double start would stay at 2).
    let one = poll(SECS(10), || {
        let p = pids_running(&sb, "node_modules/.bin/vite");
        (p.len() == 1).then_some(p)
    });
    assert!(
        one.is_some(),
        "one vite after the restart: {:?}",
        pids_running(&sb, "node_modules/.bin/vite")
            .iter()
            .map(|p| std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default())
            .collect::<Vec<_>>()
    );
    wait_row(&sb, &claude, SECS(30), |r| {
        r.state == RowState::Live && r.session_id.as_deref() == Some(sid.as_str())
    });
    assert_eq!(claude_pids_for(&sb.home, &sid).len(), 1);
    assert!(ls(&sb).servers.iter().all(|x| x.state == "running"));
}

#[test]
fn a_busy_agent_keeps_its_windows_servers_running() {
    const FAKE: &str = env!("CARGO_BIN_EXE_fake-agent");
    let sb = Sandbox::new();
    install_shims(&sb, Some(FAKE));
    let dir = sb.project_dir("busy");
    write_exec(&dir.join("node_modules/.bin/vite"), VITE);
    write_exec(&dir.join("node_modules/esbuild/bin/esbuild"), ESBUILD);
    let agent = sb.new_shell_window("w", "busy", &dir, &[] as &[(&str, &str)]);
    let server = split(&sb, &agent, &dir, &[]);
    let port = free_port();
    sb.type_line(&server, &format!("node_modules/.bin/vite --port {port}"));
    sb.wait_for(&server, "VITE ready", SECS(20)).unwrap();
    sb.type_line(&agent, "claude");
    sb.wait_for(&agent, CLAUDE_READY, SECS(15)).unwrap();
    submit_prompt(&sb, &agent, "think [slow 30]", "❯");
    wait_row(&sb, &agent, SECS(10), |r| r.status == Status::Busy);
    let vite = pids_running(&sb, "node_modules/.bin/vite");
    let (c, out) = action(&sb, &["park", "w:busy"]);
    assert_eq!(c, 1, "{out:?}");
    assert!(
        out.results.iter().any(|r| r.outcome.as_str() == "kept"
            && r.reason.as_deref().unwrap_or("").contains("not parked")),
        "{out:?}"
    );
    assert!(
        vite.iter().all(|p| pid_alive(*p)),
        "the busy agent's server was stopped"
    );
}
