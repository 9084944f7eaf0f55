//! A real zellij 0.45 session for end-to-end tests, its client running in a window of the sandbox's
//! private tmux server (a real client, so panes render and resize as for a user).
//!
//! Contract: zellij runs with the sandbox HOME (its config dir is `$HOME/.config/zellij`, which
//! must exist or `--layout` is ignored), a socket dir inside the sandbox (`ZELLIJ_SOCKET_DIR`), and
//! its cache (permissions) under the sandbox HOME; the sandbox's cleanup kills its server like any
//! other process pointing into the sandbox. No CLI call is made until the client has drawn the
//! shell prompt (CLI clients hitting a server that is still starting can kill the session), and
//! every call runs under `timeout` and is retried when zellij loses the reply.

use crate::harness::sandbox::{Sandbox, SHELL_PROMPT};
use crate::harness::util::{poll, Env};
use regex::Regex;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

/// zellij 0.45.1: `$PARK_ZELLIJ_BIN`, else where `scripts/setup` installs it, else `zellij` on PATH.
pub fn zellij_bin() -> PathBuf {
    if let Some(p) = std::env::var_os("PARK_ZELLIJ_BIN") {
        return PathBuf::from(p);
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default();
    let cached = home.join(".cache/park/zellij/bin/zellij");
    if cached.is_file() {
        return cached;
    }
    let on_path = std::env::var_os("PATH").map(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join("zellij"))
            .find(|f| f.is_file())
    });
    on_path
        .flatten()
        .unwrap_or_else(|| panic!("zellij not found: run scripts/setup (installs zellij 0.45.1)"))
}

pub struct Zellij {
    pub session: String,
    pub bin: PathBuf,
    pub sock: PathBuf,
    /// The tmux pane running the zellij client.
    pub client: String,
    env: Env,
    /// What the client (and so a server it starts) was given on top of the sandbox's env.
    client_env: Env,
    /// The server `zellij attach` started for a resurrection (diagnostics).
    resurrected: Option<u32>,
}

impl Zellij {
    /// Starts session `session` with `layout` (KDL body of a `layout { … }`), `config_extra`
    /// appended to config.kdl, and `env` added to the environment of the server (every pane).
    pub fn start(
        sb: &Sandbox,
        session: &str,
        env: &Env,
        layout: &str,
        config_extra: &str,
    ) -> Zellij {
        let bin = zellij_bin();
        let cfg = sb.home.join(".config/zellij");
        std::fs::create_dir_all(&cfg).expect("zellij config dir");
        std::fs::create_dir_all(sb.home.join(".cache/zellij")).expect("zellij cache dir");
        let sock = sb.root.join("zsock");
        std::fs::create_dir_all(&sock).expect("zellij socket dir");
        let resurrects = config_extra.contains("session_serialization");
        let shell = if resurrects {
            // zellij saves a pane whose process is not the default shell itself as a command, and
            // resurrects it held ("Waiting to run"): a session that is resurrected runs bash as
            // its default shell, as a user's would, with the prompt set from ~/.bashrc (read
            // after /etc/bash.bashrc, which would set its own).
            std::fs::write(sb.home.join(".bashrc"), format!("PS1='{SHELL_PROMPT}'\n"))
                .expect(".bashrc");
            PathBuf::from("/bin/bash")
        } else {
            let shell = sb.bin.join("zj-shell");
            crate::harness::util::write_exe(&shell, "#!/bin/sh\nexec bash --norc --noprofile\n");
            shell
        };
        std::fs::write(
            cfg.join("config.kdl"),
            format!(
                "show_startup_tips false\nshow_release_notes false\n{}\
                 default_shell \"{}\"\n{config_extra}\n",
                // A test that resurrects a session turns serialization on itself.
                if resurrects {
                    ""
                } else {
                    "session_serialization false\n"
                },
                shell.display()
            ),
        )
        .expect("config.kdl");
        let layout_file = sb.root.join(format!("layout-{session}.kdl"));
        std::fs::write(&layout_file, format!("layout {{\n{layout}\n}}\n")).expect("layout");
        let mut all: Env = env.clone();
        all.push((
            "ZELLIJ_SOCKET_DIR".into(),
            sock.to_string_lossy().into_owned(),
        ));
        all.push((
            "XDG_CACHE_HOME".into(),
            sb.home.join(".cache").to_string_lossy().into_owned(),
        ));
        all.push(("PS1".into(), SHELL_PROMPT.into()));
        let b = bin.to_string_lossy().into_owned();
        let l = layout_file.to_string_lossy().into_owned();
        let client = sb.new_agent_window(
            "zj",
            session,
            &sb.work,
            &all,
            &[&b, "-n", &l, "-s", session],
        );
        let z = Zellij {
            session: session.into(),
            bin,
            sock,
            client,
            env: sb.base_env().into_iter().chain(all.clone()).collect(),
            client_env: all,
            resurrected: None,
        };
        if let Err(e) = sb.wait_for(&z.client, r"park-test\$", Duration::from_secs(30)) {
            panic!("zellij client never showed a shell prompt: {e}");
        }
        z
    }

    /// Variables park needs to reach this session from outside it.
    pub fn park_env(&self) -> Vec<(String, String)> {
        vec![
            (
                "ZELLIJ_SOCKET_DIR".into(),
                self.sock.to_string_lossy().into_owned(),
            ),
            (
                "PARK_ZELLIJ_BIN".into(),
                self.bin.to_string_lossy().into_owned(),
            ),
        ]
    }

    /// `zellij --session <s> <args>` under a 10 s timeout: stdout, or the error with stderr.
    /// A refusal at session discovery (the CLI's socket probe lost its reply under load; nothing
    /// was sent) is retried, as park's own adapter does.
    pub fn cli(&self, args: &[&str]) -> Result<String, String> {
        let mut tries = 0;
        loop {
            match self.cli_once(args) {
                Err(e)
                    if tries < 8
                        && (e.contains("There is no active session!")
                            || e.contains("' not found. The following sessions")) =>
                {
                    tries += 1;
                    std::thread::sleep(Duration::from_millis(50 * tries));
                }
                r => return r,
            }
        }
    }

    fn cli_once(&self, args: &[&str]) -> Result<String, String> {
        let out = Command::new("timeout")
            .arg("10")
            .arg(&self.bin)
            .arg("--session")
            .arg(&self.session)
            .args(args)
            .env_clear()
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run zellij: {e}"))?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(format!(
                "zellij {args:?}: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ))
        }
    }

    /// A query whose answer is never empty, retried while zellij loses replies.
    pub fn query(&self, args: &[&str]) -> String {
        poll(Duration::from_secs(5), || {
            self.cli(args).ok().filter(|s| !s.trim().is_empty())
        })
        .unwrap_or_else(|| panic!("zellij {args:?} gave no answer"))
    }

    pub fn panes(&self) -> Vec<serde_json::Value> {
        let j = self.query(&["action", "list-panes", "--json", "--all"]);
        serde_json::from_str(&j).expect("list-panes --json parses")
    }

    /// Terminal pane ids (`terminal_N`) in listing order.
    pub fn terminals(&self) -> Vec<String> {
        self.panes()
            .iter()
            .filter(|p| p["is_plugin"] == false)
            .map(|p| format!("terminal_{}", p["id"]))
            .collect()
    }

    /// park's handle for a pane of this session.
    pub fn handle(&self, id: &str) -> String {
        format!("{id}@{}", self.session)
    }

    pub fn title(&self, id: &str) -> Option<String> {
        let n: u64 = id.trim_start_matches("terminal_").parse().ok()?;
        self.panes()
            .into_iter()
            .find(|p| p["is_plugin"] == false && p["id"] == n)
            .and_then(|p| p["title"].as_str().map(str::to_string))
    }

    pub fn dump(&self, id: &str) -> String {
        self.cli(&["action", "dump-screen", "--pane-id", id])
            .unwrap_or_default()
    }

    /// Polls the pane's screen until `regex` matches.
    pub fn wait_for(&self, id: &str, regex: &str, timeout: Duration) -> Result<String, String> {
        let re = Regex::new(regex).map_err(|e| e.to_string())?;
        let mut last = String::new();
        poll(timeout, || {
            let s = self.dump(id);
            if !s.is_empty() {
                last = s.clone();
            }
            re.is_match(&s).then_some(s)
        })
        .ok_or_else(|| format!("timed out waiting for /{regex}/ in {id}; last screen:\n{last}"))
    }

    /// Types literally, then pauses (TUIs read keys that arrive together as a paste).
    pub fn type_text(&self, id: &str, text: &str) {
        self.cli(&["action", "write-chars", "--pane-id", id, "--", text])
            .unwrap_or_else(|e| panic!("{e}"));
        std::thread::sleep(Duration::from_millis(300));
    }

    pub fn press_enter(&self, id: &str) {
        self.cli(&["action", "write", "--pane-id", id, "13"])
            .unwrap_or_else(|e| panic!("{e}"));
    }

    pub fn type_line(&self, id: &str, text: &str) {
        self.type_text(id, text);
        self.press_enter(id);
    }

    /// The saved layout zellij resurrects the session from (written every
    /// `serialization_interval` seconds while serialization is on).
    pub fn saved_layout(&self, sb: &Sandbox) -> String {
        let f = sb
            .home
            .join(".cache/zellij/contract_version_1/session_info")
            .join(&self.session)
            .join("session-layout.kdl");
        std::fs::read_to_string(f).unwrap_or_default()
    }

    /// The saved layout once `ok` holds of it and has held for 1.5 s, or `None` when that does
    /// not happen within `timeout`. Held, not seen once: right after a `save-session`, zellij
    /// 0.45.1's metadata thread (a tick every second) can put the previous save back until its
    /// next tick (`scripts/zellij-save-race`), and a crash then resurrects the older layout.
    pub fn saved_layout_when(
        &self,
        sb: &Sandbox,
        timeout: Duration,
        ok: impl Fn(&str) -> bool,
    ) -> Option<String> {
        let t0 = std::time::Instant::now();
        let mut since: Option<std::time::Instant> = None;
        while t0.elapsed() < timeout {
            let l = self.saved_layout(sb);
            if ok(&l) {
                let s = *since.get_or_insert_with(std::time::Instant::now);
                if s.elapsed() >= Duration::from_millis(1500) {
                    return Some(l);
                }
            } else {
                since = None;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        None
    }

    /// The server's pid (its argv names this session's socket).
    pub fn server_pid(&self) -> Option<u32> {
        server_pid_of(&self.sock.join("contract_version_1").join(&self.session))
    }

    /// The terminal pane lowest and rightmost in the listing's geometry (of a tab of two stacked
    /// panes: the second), as `terminal_N`.
    pub fn last_tiled_terminal(&self) -> Option<String> {
        self.panes()
            .into_iter()
            .filter(|p| p["is_plugin"] == false && p["is_floating"] != true)
            .max_by_key(|p| (p["pane_y"].as_u64(), p["pane_x"].as_u64()))
            .and_then(|p| p["id"].as_u64())
            .map(|n| format!("terminal_{n}"))
    }

    /// Kills the server with SIGKILL (a crash: nothing is saved on the way out) and waits until
    /// zellij lists the session as exited.
    pub fn kill_server(&self) {
        let pid = self.server_pid().expect("the zellij server runs");
        let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        poll(Duration::from_secs(10), || {
            (!std::path::Path::new(&format!("/proc/{pid}")).exists()).then_some(())
        })
        .expect("the zellij server died");
    }

    /// `zellij attach <session>` in a new client window: an exited session is resurrected from
    /// its saved layout (panes renumbered `0..n-1` in layout order).
    pub fn resurrect(&mut self, sb: &Sandbox) {
        self.attach_again(sb);
        if let Err(e) = sb.wait_for(&self.client, r"park-test\$", Duration::from_secs(30)) {
            panic!("the resurrected session never showed a shell prompt: {e}");
        }
    }

    /// [`Zellij::resurrect`] of a session whose focused pane may come back held ("Waiting to
    /// run" the agent it ran at the crash): waits for the server to list its terminal panes,
    /// not for a prompt.
    pub fn resurrect_held(&mut self, sb: &Sandbox) {
        self.attach_again(sb);
        // The module's rule holds here too: no CLI call before the client has drawn the session
        // (a held pane shows no prompt, but the client draws the tab and the pane's frame).
        // zellij 0.45.1's server panics when a client (the CLI's socket probe) disconnects before
        // the first client has initialised the session; polling list-panes from the moment the
        // new server existed killed it now and then: the server gone, the attach client blank,
        // "There is no active session!" for 30 s (GUARDS.md, zellij-starting).
        if let Err(e) = sb.wait_for(&self.client, r"\S", Duration::from_secs(30)) {
            panic!("the resurrected session never drew: {e}");
        }
        let mut last = String::new();
        poll(Duration::from_secs(30), || {
            let got = self.cli(&["action", "list-panes", "--json", "--all"]);
            last = match &got {
                Ok(s) => s.chars().take(2000).collect(),
                Err(e) => e.clone(),
            };
            got.ok()
                .filter(|s| s.contains("\"is_plugin\":false") || s.contains("\"is_plugin\": false"))
        })
        .unwrap_or_else(|| {
            // For the cause (seen twice, not understood yet): is the server attach started still
            // there, what do the socket dir and zellij itself say.
            let server = self.server_pid();
            let socks: Vec<String> = std::fs::read_dir(self.sock.join("contract_version_1"))
                .map(|d| {
                    d.flatten()
                        .map(|e| e.file_name().to_string_lossy().into_owned())
                        .collect()
                })
                .unwrap_or_default();
            let sessions = self.cli_once(&["list-sessions", "--no-formatting"]);
            panic!(
                "the resurrected session lists no terminal pane after 30s; last answer: {last}\nserver now: {server:?} (pid {}: {})\nsockets: {socks:?}\nlist-sessions: {sessions:?}\nclient screen:\n{}\n{}",
                self.resurrected.unwrap_or(0),
                self.resurrected
                    .map(|p| std::path::Path::new(&format!("/proc/{p}")).exists())
                    .map_or("?", |alive| if alive { "alive" } else { "gone" }),
                sb.capture(&self.client),
                sb.pane_processes(&self.client)
            )
        });
    }

    fn attach_again(&mut self, sb: &Sandbox) {
        let b = self.bin.to_string_lossy().into_owned();
        self.client = sb.new_agent_window(
            "zj",
            &format!("{}-again", self.session),
            &sb.work,
            &self.client_env,
            &[&b, "attach", &self.session],
        );
        self.resurrected = Some(
            poll(Duration::from_secs(30), || self.server_pid())
                .expect("zellij attach resurrected the session"),
        );
    }

    /// Root pid of a pane: the server's child that inherited `ZELLIJ_PANE_ID=<n>`.
    pub fn pane_pid(&self, id: &str) -> Option<u32> {
        let n = id.trim_start_matches("terminal_");
        children_with_env(self.server_pid()?, "ZELLIJ_PANE_ID", n)
    }
}

/// The pid of the zellij server whose argv names `socket`.
pub fn server_pid_of(socket: &std::path::Path) -> Option<u32> {
    let s = socket.to_string_lossy().into_owned();
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: u32 = e.file_name().to_str()?.parse().ok()?;
        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
        cmd.split(|b| *b == 0)
            .any(|a| a == s.as_bytes())
            .then_some(pid)
    })
}

fn children_with_env(ppid: u32, key: &str, val: &str) -> Option<u32> {
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: u32 = e.file_name().to_str()?.parse().ok()?;
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let after = &stat[stat.rfind(')')? + 2..];
        let pp: u32 = after.split(' ').nth(1)?.parse().ok()?;
        if pp != ppid {
            return None;
        }
        let env = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
        let want = format!("{key}={val}");
        env.split(|b| *b == 0)
            .any(|kv| kv == want.as_bytes())
            .then_some(pid)
    })
}

/// Reads `key` from a process's environment.
pub fn env_of(pid: u32, key: &str) -> Option<String> {
    let env = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    let prefix = format!("{key}=");
    env.split(|b| *b == 0).find_map(|kv| {
        let s = String::from_utf8_lossy(kv);
        s.strip_prefix(&prefix).map(str::to_string)
    })
}

/// The panes (leaves, not split containers; a plugin pane counts too) of tab `tab` in a saved layout
/// (`session-layout.kdl`), so a test can wait for a save that shows a pane closed: before a close
/// and after it, the text differs by one `pane` line and a size.
pub fn layout_tab_panes(layout: &str, tab: &str) -> usize {
    let head = format!("tab name=\"{tab}\"");
    let mut lines = layout
        .lines()
        .skip_while(|l| !l.trim_start().starts_with(&head));
    let Some(first) = lines.next() else {
        return 0;
    };
    let indent = |l: &str| l.len() - l.trim_start().len();
    let base = indent(first);
    lines
        .take_while(|l| l.trim().is_empty() || indent(l) > base)
        .map(str::trim_start)
        .filter(|l| (*l == "pane" || l.starts_with("pane ")) && !l.contains("split_direction"))
        .count()
}

#[cfg(test)]
mod tests {
    use super::layout_tab_panes;

    /// Saved by zellij 0.45.1 for a tab of three panes split vertically, before and after
    /// `close-pane` of the first.
    const BEFORE: &str = r#"layout {
    cwd "/tmp/park-sbx-3CoFQ4/work"
    tab name="work" focus=true hide_floating_panes=true {
        pane split_direction="vertical" {
            pane focus=true size="33%"
            pane size="33%"
            pane name="❄ api-d5 · fz0h2" cwd="api" size="33%"
        }
    }
    tab name="other" hide_floating_panes=true {
        pane
    }
    new_tab_template {
    }
}
"#;

    #[test]
    fn counts_the_leaf_panes_of_one_tab() {
        let after = BEFORE
            .replace("            pane focus=true size=\"33%\"\n", "")
            .replace("pane size=\"33%\"", "pane size=\"66%\"");
        assert_eq!(layout_tab_panes(BEFORE, "work"), 3);
        assert_eq!(layout_tab_panes(&after, "work"), 2);
        assert_eq!(layout_tab_panes(BEFORE, "other"), 1);
        assert_eq!(layout_tab_panes(BEFORE, "none"), 0);
    }
}
