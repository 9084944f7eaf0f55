//! `scripts/demo`: shows park working against the real Claude Code and Codex CLIs in a private tmux
//! server, offline, against the project's mock model server. No account needed.
//!
//! Contract: everything runs in a throwaway sandbox (HOME, PARK_HOME, `tmux -L park-demo-…`); at the
//! end every process it started is stopped and the sandbox removed, also on failure. With
//! `--attach` it waits (before cleaning up) so you can `tmux -L <label> attach` and look around.

use park_e2e::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn say(s: &str) {
    println!("\n\x1b[1m==> {s}\x1b[0m");
}

struct Demo {
    sb: Sandbox,
    park: PathBuf,
}

impl Demo {
    fn park(&self, args: &[&str]) -> String {
        println!("$ park {}", args.join(" "));
        let out = Command::new(&self.park)
            .env_clear()
            .envs(self.sb.base_env())
            .env("PARK_TMUX_SOCKET", self.sb.label())
            .args(args)
            .output()
            .expect("run park");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        print!("{text}");
        text
    }

    fn screen_tail(&self, pane: &str, n: usize) {
        let s = self.sb.capture(pane);
        let lines: Vec<&str> = s.lines().filter(|l| !l.trim().is_empty()).collect();
        println!("   ┌─ pane {pane} (last {n} lines)");
        for l in &lines[lines.len().saturating_sub(n)..] {
            println!("   │ {}", l.chars().take(110).collect::<String>());
        }
    }

    /// Parks, waiting out the CPU corroboration right after a reply.
    fn park_quiet(&self, pane: &str) -> String {
        let t0 = Instant::now();
        loop {
            let out = self.park(&["park", pane]);
            if !out.contains("% CPU") || t0.elapsed() > Duration::from_secs(30) {
                return out;
            }
            println!("   (agent still settling; retrying)");
            std::thread::sleep(Duration::from_secs(1));
        }
    }
}

fn sibling(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("demo exe");
    exe.parent().unwrap_or(Path::new(".")).join(name)
}

fn main() {
    let attach = std::env::args().any(|a| a == "--attach");
    let agents = match Agents::try_locate() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    let sb = Sandbox::new();
    let mock = MockServer::start_with(&sibling("mock-llm"), &sb.logs);
    seed_claude_home(&sb.home, &sb.work, CLAUDE_API_KEY).expect("seed claude home");
    seed_codex_home(&sb.home, &sb.work, &mock, &CodexSeed::default()).expect("seed codex home");
    let park = sibling("park");
    let link = sb.bin.join("park");
    let _ = std::os::unix::fs::symlink(&park, &link);
    let d = Demo { sb, park };
    println!(
        "sandbox {}  tmux -L {}  mock model server {}",
        d.sb.root.display(),
        d.sb.label(),
        mock.base_url()
    );
    println!(
        "claude {}\ncodex  {}",
        agents.claude.display(),
        agents.codex.display()
    );

    say("Start a real Claude Code in a tmux pane (from a shell) and give it one turn");
    let mut env = d.sb.claude_env(&mock);
    env.push(("DISABLE_AUTOUPDATER".into(), "1".into()));
    env.extend(d.sb.codex_env());
    let api = d.sb.project_dir("api");
    let pane = d.sb.new_shell_window("demo", "api", &api, &env);
    d.sb.type_line(&pane, "claude --dangerously-skip-permissions");
    d.sb.wait_for(&pane, CLAUDE_READY, Duration::from_secs(60))
        .expect("claude started");
    d.sb.type_line(&pane, "please refactor the parser");
    d.sb.wait_for(&pane, "PARKTEST-OK", Duration::from_secs(60))
        .expect("claude replied");
    d.screen_tail(&pane, 6);

    say("Start a real Codex (--no-daemon) in a second window");
    let web = d.sb.project_dir("web");
    let cpane = d.sb.new_shell_window("demo", "web", &web, &env);
    d.sb.type_line(&cpane, "codex --no-daemon");
    d.sb.wait_for(&cpane, "Ask Codex|for shortcuts", Duration::from_secs(60))
        .expect("codex started");
    d.sb.type_line(&cpane, "add a login page");
    d.sb.wait_for(&cpane, "PARKTEST-OK", Duration::from_secs(60))
        .expect("codex replied");
    std::thread::sleep(Duration::from_secs(2));

    say("park ls: every agent, its state, idle time and memory");
    d.park(&["ls"]);

    say("Park the Claude pane: its process tree is killed, the pane stays, the ledger records it");
    d.park_quiet(&pane);
    std::thread::sleep(Duration::from_millis(500));
    d.screen_tail(&pane, 4);
    d.park(&["status"]);

    say("Park the Codex pane too");
    d.park_quiet(&cpane);
    std::thread::sleep(Duration::from_millis(500));
    d.park(&["ls"]);

    say("The picker (what prefix P opens in the tmux plugin's popup), in a third window");
    let ctl =
        d.sb.new_shell_window("demo", "picker", &d.sb.work, &[] as &[(&str, &str)]);
    d.sb.type_line(&ctl, &format!("park pick --pane {pane}"));
    if d.sb
        .wait_for(&ctl, "q quit", Duration::from_secs(15))
        .is_ok()
    {
        d.screen_tail(&ctl, 8);
    }
    d.sb.send_keys(&ctl, &["q"]);

    say("Unpark the Claude pane from outside: the same session resumes in the same pane");
    d.park(&["unpark", &pane]);
    std::thread::sleep(Duration::from_secs(2));
    d.sb.wait_for(&pane, CLAUDE_READY, Duration::from_secs(60))
        .expect("claude resumed");
    d.screen_tail(&pane, 9);

    say("Unpark Codex by pressing Enter on the prefilled line in its pane");
    d.sb.press_enter(&cpane);
    d.sb.wait_for(&cpane, "add a login page", Duration::from_secs(60))
        .expect("codex resumed");
    std::thread::sleep(Duration::from_secs(2));
    d.screen_tail(&cpane, 6);

    say("park ls: both live again, nothing parked");
    d.park(&["ls"]);

    if attach {
        println!(
            "\nAttach with:  tmux -L {} attach    (press Enter here to clean up)",
            d.sb.label()
        );
        let mut s = String::new();
        let _ = std::io::stdin().read_line(&mut s);
    }
    say("Cleaning up: stopping every process the demo started");
    drop(mock);
    let mut sb = d.sb;
    let left = sb.cleanup();
    if left.is_empty() {
        println!("nothing left running. demo done.");
    } else {
        println!("warning: processes survived cleanup: {left:?}");
        std::process::exit(1);
    }
}
