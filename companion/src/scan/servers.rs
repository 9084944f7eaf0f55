//! Dev servers and test browsers beside an agent (issue 9 item 4).
//!
//! Contract:
//! - [`classify`] is pure: it names the program an argv **really runs** (through launchers such as
//!   `node`, `npx`, `env`, `python -m`, `bundle exec`, `pnpm exec`) and says whether it is a known
//!   dev server or test browser. It matches the program, never a word appearing in arguments or
//!   paths (`rg webpack src/`, `vim vite.config.ts` are not servers), and never an editor, pager,
//!   git, a search tool or a shell. Some programs count only with their serving subcommand
//!   (`next dev`, `rails server`, `manage.py runserver`, `flask run`); a Chromium counts only when
//!   it is driven (`--headless`, `--remote-debugging-*`, a Playwright/Puppeteer install).
//! - [`find`] is pure over a process table and the panes: it returns the **units** to stop for one
//!   tmux window or zellij tab — a unit is the job a pane's shell started (`npm run dev` with its `node vite`
//!   and `esbuild` children), found from any matching process in it, or an orphan (reparented to
//!   init) attributed to the window by the `TMUX_PANE` (zellij: `ZELLIJ_PANE_ID`) it inherited, else by the longest cwd prefix
//!   among all panes (a tie between windows attributes it to none: unsure means hands off). Units
//!   inside an agent's tree are left to the agent's own park. A unit that is a pane's own process
//!   is reported, not stopped (stopping it would close the pane).
//! - The recorded [`Server`] holds what a restart needs: the unit root's argv and cwd, the
//!   environment variables that steer servers, and the pane it ran in.

use crate::adapters::platform::proctree::{program_of, ProcTable};
use crate::adapters::platform::{env_get, ProcInfo};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    DevServer,
    TestBrowser,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::DevServer => "dev server",
            Kind::TestBrowser => "test browser",
        }
    }
}

/// Dev servers whatever their arguments.
const ALWAYS: &[&str] = &[
    "vite",
    "webpack-dev-server",
    "nodemon",
    "storybook",
    "start-storybook",
    "http-server",
    "live-server",
    "browser-sync",
    "parcel",
    "ts-node-dev",
    "serve",
    "next-server",
    "uvicorn",
    "hypercorn",
    "gunicorn",
    "puma",
    "http.server",
];

/// Dev servers only with one of these subcommands (or flags) right after the program.
const WITH_SUB: &[(&str, &[&str])] = &[
    ("next", &["dev", "start"]),
    ("webpack", &["serve", "--watch", "-w"]),
    ("webpack-cli", &["serve"]),
    ("esbuild", &["--serve", "--watch"]),
    ("rails", &["server", "s"]),
    ("manage", &["runserver"]),
    ("django-admin", &["runserver"]),
    ("flask", &["run"]),
    ("astro", &["dev", "preview"]),
    ("nuxt", &["dev"]),
    ("nuxi", &["dev"]),
    ("remix", &["dev"]),
    ("react-scripts", &["start"]),
    ("ng", &["serve"]),
    ("gatsby", &["develop"]),
    ("wrangler", &["dev"]),
    ("hugo", &["server", "serve"]),
    ("jekyll", &["serve"]),
    ("vue-cli-service", &["serve"]),
    ("tsx", &["watch"]),
    ("svelte-kit", &["dev"]),
    ("playwright", &["run-driver", "run-server", "test"]),
    ("playwright-core", &["run-driver", "run-server"]),
];

const CHROMIUMS: &[&str] = &[
    "chrome",
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
    "headless_shell",
    "chrome-headless-shell",
];

/// Never a server, whatever else matches.
const NEVER: &[&str] = &[
    "vim", "nvim", "vi", "emacs", "nano", "hx", "helix", "kak", "micro", "code", "less", "more",
    "most", "man", "git", "tig", "lazygit", "rg", "grep", "ag", "ack", "fd", "find", "fzf", "bash",
    "zsh", "fish", "sh", "dash", "ksh", "tcsh", "csh", "nu", "tmux", "zellij", "ssh", "park",
];

/// Runners that take a subcommand before the program they run (`bundle exec rails s`).
const RUNNERS: &[(&str, &[&str])] = &[
    ("bundle", &["exec"]),
    ("pnpm", &["exec", "dlx"]),
    ("npm", &["exec"]),
    ("yarn", &["exec", "dlx"]),
    ("poetry", &["run"]),
    ("pipenv", &["run"]),
    ("ruby", &[]),
];

/// Entry-script names that say nothing: the package under `node_modules/` names the program.
const GENERIC: &[&str] = &["cli", "index", "bin", "main", "run", "start", "server"];

/// What a process is, when it is a known dev server or test browser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Matched {
    pub name: String,
    pub kind: Kind,
}

fn basename(s: &str) -> &str {
    s.rsplit('/').next().unwrap_or(s)
}

/// The package a `node_modules/<pkg>/…` (or `node_modules/@scope/<pkg>/…`) path belongs to.
fn package_of(path: &str) -> Option<String> {
    let after = path.rsplit_once("node_modules/")?.1;
    let mut parts = after.split('/');
    let first = parts.next()?;
    if let Some(scope) = first.strip_prefix('@') {
        let pkg = parts.next()?;
        // `@storybook/cli` is storybook; `@playwright/test` is playwright.
        return Some(match (scope, pkg) {
            ("storybook", _) => "storybook".into(),
            ("playwright", _) => "playwright".into(),
            _ => pkg.to_string(),
        });
    }
    Some(first.to_string())
}

/// The program argv really runs and the index of its token, seen through package runners too.
fn real_program(argv: &[String]) -> Option<(String, usize)> {
    let (mut prog, mut i) = program_of(argv)?;
    // `bundle exec X`, `pnpm exec X`, `ruby bin/rails s`: look one program further.
    for _ in 0..3 {
        let Some((_, subs)) = RUNNERS.iter().find(|(r, _)| *r == prog) else {
            break;
        };
        let mut j = i + 1;
        while argv.get(j).is_some_and(|a| a.starts_with('-')) {
            j += 1;
        }
        if !subs.is_empty() {
            if !argv.get(j).is_some_and(|a| subs.contains(&a.as_str())) {
                return Some((prog, i));
            }
            j += 1;
        }
        let Some(rest) = argv.get(j..).filter(|r| !r.is_empty()) else {
            return Some((prog, i));
        };
        let (p, k) = program_of(rest)?;
        prog = p;
        i = j + k;
    }
    if GENERIC.contains(&prog.as_str()) {
        if let Some(pkg) = package_of(&argv[i]) {
            prog = pkg;
        }
    }
    Some((prog, i))
}

/// Whether `p` is a known dev server or test browser (see the module contract).
pub fn classify(argv: &[String], comm: &str) -> Option<Matched> {
    // An agent is never a server (which agents there are is `agents/`'s knowledge).
    if crate::agents::classify(argv).is_some() {
        return None;
    }
    let (prog, i) = match real_program(argv) {
        Some(x) => x,
        // A process that rewrote its argv to a bare title (`next-server (v15.1.0)`).
        None => (comm.split_whitespace().next()?.to_string(), 0),
    };
    let first_word = argv
        .first()
        .map(|a| {
            basename(a)
                .split_whitespace()
                .next()
                .unwrap_or("")
                .to_string()
        })
        .unwrap_or_default();
    let prog = if prog.is_empty() { first_word } else { prog };
    if NEVER.contains(&prog.as_str()) {
        return None;
    }
    let args = argv.get(i + 1..).unwrap_or(&[]);
    let sub = args.iter().find(|a| !a.starts_with('-'));
    let dev = |name: &str| {
        Some(Matched {
            name: name.to_string(),
            kind: Kind::DevServer,
        })
    };
    if ALWAYS.contains(&prog.as_str()) {
        return dev(&prog);
    }
    if let Some((_, subs)) = WITH_SUB.iter().find(|(n, _)| *n == prog) {
        let hit = args
            .iter()
            .any(|a| a.starts_with('-') && subs.contains(&a.split('=').next().unwrap_or(a)))
            || sub.is_some_and(|s| subs.contains(&s.as_str()));
        if !hit {
            return None;
        }
        let name = if prog == "manage" {
            "manage.py runserver".to_string()
        } else {
            prog.clone()
        };
        let kind = if prog.starts_with("playwright") {
            Kind::TestBrowser
        } else {
            Kind::DevServer
        };
        return Some(Matched { name, kind });
    }
    let driven_path = argv
        .first()
        .is_some_and(|a| a.contains("ms-playwright/") || a.contains("/puppeteer/"));
    if CHROMIUMS.contains(&prog.as_str()) {
        let driven = driven_path
            || args.iter().any(|a| {
                a.starts_with("--headless")
                    || a.starts_with("--remote-debugging-port")
                    || a == "--remote-debugging-pipe"
            });
        return driven.then(|| Matched {
            name: prog.clone(),
            kind: Kind::TestBrowser,
        });
    }
    if prog == "firefox" && (driven_path || args.iter().any(|a| a.starts_with("-juggler"))) {
        return Some(Matched {
            name: prog,
            kind: Kind::TestBrowser,
        });
    }
    None
}

/// Variables that steer dev servers: recorded so a restart serves the same way.
const ENV_KEYS: &[&str] = &[
    "PORT",
    "HOST",
    "NODE_ENV",
    "NODE_OPTIONS",
    "BROWSER",
    "RAILS_ENV",
    "RACK_ENV",
    "DJANGO_SETTINGS_MODULE",
    "FLASK_APP",
    "FLASK_ENV",
    "FLASK_DEBUG",
    "DEBUG",
];
const ENV_PREFIXES: &[&str] = &["VITE_", "NEXT_PUBLIC_", "STORYBOOK_"];

pub fn relevant_env(env: &[(String, String)]) -> Vec<(String, String)> {
    env.iter()
        .filter(|(k, _)| {
            ENV_KEYS.contains(&k.as_str()) || ENV_PREFIXES.iter().any(|p| k.starts_with(p))
        })
        .cloned()
        .collect()
}

/// One unit to stop (and what a restart needs), as recorded in the window's group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Server {
    /// The matched program (`vite`, `chrome`).
    pub name: String,
    pub kind: Kind,
    /// The unit root (what the pane's shell started, or the orphan) and its start ticks.
    pub pid: u32,
    pub start: u64,
    /// Every process of the unit with its start ticks, root first.
    pub pids: Vec<(u32, u64)>,
    /// The unit root's argv and cwd: the command a restart types.
    pub argv: Vec<String>,
    pub cwd: String,
    /// The server-steering variables it ran with.
    #[serde(default)]
    pub env: Vec<(String, String)>,
    /// The pane it ran in (a shell's job) or was attributed to (an orphan).
    pub pane: Option<String>,
    /// Reparented to init: it ran detached, so it is restarted only by hand.
    pub orphan: bool,
    /// Resident memory of the unit when it was found.
    #[serde(default)]
    pub rss: u64,
    /// Why it is listed but not stopped (it is the pane's own process, …).
    #[serde(default)]
    pub keep: Option<String>,
}

/// A pane of the multiplexer as `find` needs it.
#[derive(Debug, Clone)]
pub struct PaneRef {
    pub id: String,
    pub pid: u32,
    pub cwd: String,
    /// The window this pane belongs to: (session, window index).
    pub window: (String, u32),
}

/// What `find` may ask about a process beyond the table (only for candidate orphans and units).
pub trait Facts {
    fn environ(&self, pid: u32) -> Option<Vec<(String, String)>>;
    fn cwd(&self, pid: u32) -> Option<String>;
}

fn is_shell(p: &ProcInfo) -> bool {
    crate::scan::is_interactive_shell(&p.argv)
        || program_of(&p.argv).is_some_and(|(n, _)| {
            crate::scan::SHELLS.contains(&n.trim_start_matches('-'))
                && !p.argv.iter().any(|a| a == "-c")
        })
}

/// The units to stop for the window `window` (session, index) of this tmux `server`.
/// `agent_roots` are the agents' tree roots (their trees are the agents' own parks).
pub fn find(
    table: &ProcTable,
    panes: &[PaneRef],
    window: &(String, u32),
    server: &str,
    agent_roots: &[u32],
    facts: &dyn Facts,
) -> Vec<Server> {
    find_all(table, panes, server, agent_roots, facts)
        .into_iter()
        .filter(|(w, _)| w == window)
        .map(|(_, s)| s)
        .collect()
}

/// Every unit on this server, each with the window it belongs to, in one pass over the table.
pub(crate) fn find_all(
    table: &ProcTable,
    panes: &[PaneRef],
    server: &str,
    agent_roots: &[u32],
    facts: &dyn Facts,
) -> Vec<((String, u32), Server)> {
    let pane_of_pid = |pid: u32| panes.iter().find(|p| p.pid == pid);
    let mut in_agent: std::collections::HashSet<u32> = std::collections::HashSet::new();
    for r in agent_roots {
        in_agent.extend(table.tree(*r, &|_| false));
    }
    let pids: Vec<u32> = table.all().iter().map(|p| p.pid).collect();
    let mut units: Vec<((String, u32), Server)> = vec![];
    for pid in pids {
        let Some(p) = table.get(pid) else { continue };
        if in_agent.contains(&pid) {
            continue;
        }
        let Some(m) = classify(&p.argv, &p.comm) else {
            continue;
        };
        // Walk up to the unit root: the child of a pane's shell, the pane process itself, or the
        // topmost ancestor below init (an orphan).
        let chain = table.ancestry(pid);
        let mut root = pid;
        let mut pane: Option<&PaneRef> = None;
        let mut orphan = true;
        for (k, a) in chain.iter().enumerate() {
            if let Some(pr) = pane_of_pid(*a) {
                orphan = false;
                pane = Some(pr);
                let shell = table.get(*a).is_some_and(is_shell);
                root = if shell && k > 0 { chain[k - 1] } else { *a };
                break;
            }
            if in_agent.contains(a) {
                // Started by an agent: its park takes it.
                root = 0;
                break;
            }
        }
        if orphan && root != 0 {
            // Detached: the unit is the process and the servers above it, never whatever it was
            // reparented to (init, or a subreaper such as `systemd --user`).
            root = pid;
            while let Some(up) = table
                .get(root)
                .and_then(|x| table.get(x.ppid))
                .filter(|u| u.pid > 1 && classify(&u.argv, &u.comm).is_some())
            {
                root = up.pid;
            }
        }
        if root == 0 || units.iter().any(|u| u.1.pids.iter().any(|x| x.0 == pid)) {
            continue;
        }
        let Some(rp) = table.get(root) else { continue };
        if orphan {
            pane = attribute(rp, panes, server, facts);
        }
        let Some(pane) = pane else {
            continue;
        };
        let tree: Vec<(u32, u64)> = table
            .tree(root, &|x| {
                crate::scan::NEVER_KILL.contains(
                    &program_of(&x.argv)
                        .map(|(n, _)| n)
                        .unwrap_or_default()
                        .as_str(),
                )
            })
            .into_iter()
            .filter_map(|x| table.get(x).map(|i| (x, i.start_ticks)))
            .collect();
        let keep = (root == pane.pid)
            .then(|| "it is the pane's own process: stopping it would close the pane".to_string());
        let env = facts.environ(root).unwrap_or_default();
        units.push((
            pane.window.clone(),
            Server {
                name: m.name,
                kind: m.kind,
                pid: root,
                start: rp.start_ticks,
                rss: tree
                    .iter()
                    .filter_map(|(x, _)| table.get(*x))
                    .map(|i| i.rss_bytes)
                    .sum(),
                pids: tree,
                argv: rp.argv.clone(),
                cwd: facts.cwd(root).unwrap_or_else(|| pane.cwd.clone()),
                env: relevant_env(&env),
                pane: Some(pane.id.clone()),
                orphan,
                keep,
            },
        ));
    }
    units
}

/// The pane an orphan belongs to: the `TMUX_PANE` (on this server) or zellij pane it inherited,
/// else the pane whose cwd is the longest prefix of its cwd — unless panes of two windows tie.
fn attribute<'a>(
    p: &ProcInfo,
    panes: &'a [PaneRef],
    server: &str,
    facts: &dyn Facts,
) -> Option<&'a PaneRef> {
    if let Some(env) = facts.environ(p.pid) {
        let on_server = env_get(&env, "TMUX")
            .and_then(|t| t.split(',').next())
            .is_some_and(|sock| sock == server);
        if let (true, Some(id)) = (on_server, env_get(&env, "TMUX_PANE")) {
            if let Some(pr) = panes.iter().find(|x| x.id == id) {
                return Some(pr);
            }
        }
        // A zellij pane's handle names its session; `panes` are this server's only.
        if let Some(h) = crate::adapters::mux::zellij::pane_of_env(&env) {
            if let Some(pr) = panes.iter().find(|x| x.id == h) {
                return Some(pr);
            }
        }
    }
    let cwd = facts.cwd(p.pid)?;
    let under =
        |base: &str| cwd == base || cwd.starts_with(&format!("{}/", base.trim_end_matches('/')));
    let best = panes
        .iter()
        .filter(|x| x.cwd != "/" && under(&x.cwd))
        .map(|x| x.cwd.len())
        .max()?;
    let mut at_best = panes
        .iter()
        .filter(|x| under(&x.cwd) && x.cwd.len() == best);
    let first = at_best.next()?;
    if at_best.any(|x| x.window != first.window) {
        return None;
    }
    Some(first)
}

/// The command line a restart types: the recorded server variables that the pane's shell does
/// not already have, then the argv, shell-quoted; `cd` first when the shell is elsewhere.
pub(crate) fn restart_line(s: &Server, shell_cwd: &str, shell_env: &[(String, String)]) -> String {
    let q = |a: &str| {
        shlex::try_quote(a)
            .map(|c| c.into_owned())
            .unwrap_or_else(|_| "''".into())
    };
    let mut parts: Vec<String> = vec![];
    if shell_cwd != s.cwd {
        parts.push(format!("cd {} &&", q(&s.cwd)));
    }
    for (k, v) in &s.env {
        if env_get(shell_env, k) != Some(v.as_str()) {
            parts.push(format!("{k}={}", q(v)));
        }
    }
    parts.extend(s.argv.iter().map(|a| q(a)));
    parts.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Vec<String> {
        s.split(' ').map(|x| x.to_string()).collect()
    }

    fn name(cmd: &str) -> Option<String> {
        classify(&v(cmd), "").map(|m| m.name)
    }

    #[test]
    fn known_servers_are_matched_on_the_program_really_run() {
        for (cmd, want) in [
            ("node /w/node_modules/.bin/vite --port 5173", "vite"),
            ("vite", "vite"),
            ("node /w/node_modules/vite/bin/vite.js", "vite"),
            ("npx vite", "vite"),
            ("pnpm exec vite dev", "vite"),
            ("env PORT=3000 node /w/node_modules/.bin/next dev", "next"),
            ("node /w/node_modules/next/dist/bin/next start", "next"),
            (
                "/w/node_modules/.bin/webpack serve --mode development",
                "webpack",
            ),
            ("node /w/node_modules/.bin/webpack --watch", "webpack"),
            (
                "node /w/node_modules/@storybook/cli/bin/index.cjs dev -p 6006",
                "storybook",
            ),
            ("nodemon server.js", "nodemon"),
            (
                "/w/node_modules/esbuild/bin/esbuild app.ts --serve=8000",
                "esbuild",
            ),
            (
                "python3 manage.py runserver 0.0.0.0:8000",
                "manage.py runserver",
            ),
            ("python -m flask run --debug", "flask"),
            ("flask run", "flask"),
            ("python3 -m http.server 8000", "http.server"),
            ("uvicorn app:app --reload", "uvicorn"),
            ("bundle exec rails server", "rails"),
            ("ruby bin/rails s", "rails"),
            (
                "/root/.cache/ms-playwright/chromium-1140/chrome-linux/chrome --type=renderer",
                "chrome",
            ),
            (
                "/usr/bin/chromium --headless=new --remote-debugging-port=9222 about:blank",
                "chromium",
            ),
            (
                "/opt/google/chrome/chrome --remote-debugging-pipe",
                "chrome",
            ),
            (
                "node /w/node_modules/playwright-core/cli.js run-driver",
                "playwright-core",
            ),
            ("node /w/node_modules/.bin/playwright test", "playwright"),
        ] {
            assert_eq!(name(cmd).as_deref(), Some(want), "{cmd}");
        }
        assert_eq!(
            classify(&v("/usr/bin/chromium --headless"), "")
                .unwrap()
                .kind,
            Kind::TestBrowser
        );
        // A process that renamed itself.
        assert_eq!(
            classify(&v("next-server (v15.1.0)"), "next-server (v1").map(|m| m.name),
            Some("next-server".into())
        );
    }

    #[test]
    fn words_in_arguments_and_paths_are_never_a_match() {
        for cmd in [
            "rg webpack src/",
            "grep -r vite .",
            "vim vite.config.ts",
            "nvim /w/node_modules/vite/index.js",
            "less /w/webpack.log",
            "git commit -m vite",
            "bash -c vite",
            "bash",
            "node build.js --vite",
            "cat vite",
            "next build",
            "rails console",
            "python3 manage.py migrate",
            "flask db upgrade",
            "webpack --mode production",
            "esbuild app.ts --bundle",
            "/usr/bin/chromium https://example.com",
            "google-chrome",
            "firefox",
            "node /w/node_modules/.bin/eslint --fix vite.config.ts",
            "npm run dev",
            "claude --resume x",
            "find . -name vite",
            "fd storybook",
            "man vite",
            "ssh dev-server",
            "tmux new -s vite",
        ] {
            assert_eq!(name(cmd), None, "{cmd}");
        }
    }

    type Env = Vec<(String, String)>;
    struct F(Vec<(u32, Env, String)>);
    impl Facts for F {
        fn environ(&self, pid: u32) -> Option<Vec<(String, String)>> {
            self.0.iter().find(|x| x.0 == pid).map(|x| x.1.clone())
        }
        fn cwd(&self, pid: u32) -> Option<String> {
            self.0.iter().find(|x| x.0 == pid).map(|x| x.2.clone())
        }
    }

    fn p(pid: u32, ppid: u32, argv: &str) -> ProcInfo {
        ProcInfo {
            pid,
            ppid,
            start_ticks: 100 + pid as u64,
            rss_bytes: 1 << 20,
            argv: v(argv),
            ..ProcInfo::default()
        }
    }

    fn pane(id: &str, pid: u32, cwd: &str, w: u32) -> PaneRef {
        PaneRef {
            id: id.into(),
            pid,
            cwd: cwd.into(),
            window: ("s".into(), w),
        }
    }

    #[test]
    fn units_are_shell_jobs_or_attributed_orphans_and_agent_trees_are_left_alone() {
        let t = ProcTable::new(vec![
            // %1: a shell running `npm run dev` → node vite → esbuild.
            p(10, 1, "-bash"),
            p(11, 10, "npm run dev"),
            p(12, 11, "node /w/a/node_modules/.bin/vite"),
            p(
                13,
                12,
                "/w/a/node_modules/esbuild/bin/esbuild --service=0.21.5 --ping",
            ),
            // %2: vim on vite.config.ts, rg webpack src/.
            p(20, 1, "-bash"),
            p(21, 20, "vim vite.config.ts"),
            p(22, 20, "rg webpack src/"),
            // %3: an agent with its own dev server child.
            p(30, 1, "-bash"),
            p(31, 30, "claude"),
            p(32, 31, "node /w/a/node_modules/.bin/vite"),
            // Orphans: one with TMUX_PANE=%2, one by cwd under /w/a, one ambiguous, one elsewhere.
            p(
                40,
                1,
                "/x/ms-playwright/chromium-1140/chrome-linux/chrome --headless",
            ),
            p(
                41,
                40,
                "/x/ms-playwright/chromium-1140/chrome-linux/chrome --type=renderer",
            ),
            p(50, 1, "node /w/a/node_modules/.bin/next dev"),
            p(60, 1, "nodemon /w/b/server.js"),
            p(70, 1, "uvicorn elsewhere:app"),
            // %4 in another window, same cwd as %5 in this window → ambiguity for /w/b.
            p(80, 1, "-bash"),
            p(90, 1, "-bash"),
        ]);
        let panes = vec![
            pane("%1", 10, "/w/a", 1),
            pane("%2", 20, "/w/a/src", 1),
            pane("%3", 30, "/w/c", 1),
            pane("%4", 80, "/w/b", 2),
            pane("%5", 90, "/w/b", 1),
        ];
        let tmux = |pane: &str| {
            vec![
                ("TMUX".to_string(), "/tmp/tmux-0/t,1,0".to_string()),
                ("TMUX_PANE".to_string(), pane.to_string()),
                ("PORT".to_string(), "5173".to_string()),
                ("SECRET".to_string(), "x".to_string()),
            ]
        };
        let facts = F(vec![
            (11, tmux("%1"), "/w/a".into()),
            (40, tmux("%2"), "/tmp".into()),
            (50, vec![], "/w/a/app".into()),
            (60, vec![], "/w/b".into()),
            (70, vec![], "/srv".into()),
        ]);
        let got = find(&t, &panes, &("s".into(), 1), "/tmp/tmux-0/t", &[31], &facts);
        let brief: Vec<(u32, &str, Option<&str>, bool)> = got
            .iter()
            .map(|s| (s.pid, s.name.as_str(), s.pane.as_deref(), s.orphan))
            .collect();
        assert_eq!(
            brief,
            vec![
                (11, "vite", Some("%1"), false),
                (40, "chrome", Some("%2"), true),
                (50, "next", Some("%1"), true),
            ]
        );
        assert_eq!(
            got[0].pids.iter().map(|x| x.0).collect::<Vec<_>>(),
            [11, 12, 13]
        );
        assert_eq!(got[0].argv, v("npm run dev"));
        assert_eq!(got[0].env, vec![("PORT".into(), "5173".into())]);
        assert_eq!(
            got[1].pids.iter().map(|x| x.0).collect::<Vec<_>>(),
            [40, 41]
        );
        // The other window sees only what is attributed to it.
        assert!(find(&t, &panes, &("s".into(), 2), "/tmp/tmux-0/t", &[31], &facts).is_empty());
    }

    /// zellij: an orphan is attributed to the tab of the pane it inherited (`ZELLIJ_PANE_ID` +
    /// `ZELLIJ_SESSION_NAME`), even where the cwd would tie between two tabs.
    #[test]
    fn a_zellij_orphan_goes_to_the_tab_of_the_pane_it_was_started_in() {
        let t = ProcTable::new(vec![
            p(10, 1, "-bash"),
            p(20, 1, "-bash"),
            p(50, 1, "node /w/b/node_modules/.bin/vite"),
        ]);
        let panes = vec![
            pane("terminal_0@zs", 10, "/w/b", 0),
            pane("terminal_1@zs", 20, "/w/b", 1),
        ];
        let zenv = |id: &str, session: &str| {
            vec![
                ("ZELLIJ_PANE_ID".to_string(), id.to_string()),
                ("ZELLIJ_SESSION_NAME".to_string(), session.to_string()),
            ]
        };
        let facts = F(vec![(50, zenv("1", "zs"), "/w/b".into())]);
        let got = find(&t, &panes, &("s".into(), 1), "zellij:/z", &[], &facts);
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].pane.as_deref(), Some("terminal_1@zs"));
        assert!(got[0].orphan);
        // Another session's pane id is not this one: the cwd ties, so nobody takes it.
        let facts = F(vec![(50, zenv("1", "other"), "/w/b".into())]);
        assert!(find(&t, &panes, &("s".into(), 1), "zellij:/z", &[], &facts).is_empty());
        assert!(find(&t, &panes, &("s".into(), 0), "zellij:/z", &[], &facts).is_empty());
    }

    #[test]
    fn an_orphan_under_a_subreaper_never_takes_the_subreaper_with_it() {
        let t = ProcTable::new(vec![
            p(5, 1, "/lib/systemd/systemd --user"),
            p(6, 5, "node /w/node_modules/.bin/vite"),
            p(7, 6, "/w/node_modules/esbuild/bin/esbuild --service --ping"),
        ]);
        let panes = vec![pane("%1", 9, "/w", 1)];
        let facts = F(vec![(6, vec![], "/w".into()), (7, vec![], "/w".into())]);
        let got = find(&t, &panes, &("s".into(), 1), "/t", &[], &facts);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].pid, 6);
        assert_eq!(got[0].pids.iter().map(|x| x.0).collect::<Vec<_>>(), [6, 7]);
    }

    #[test]
    fn a_server_that_is_the_pane_process_is_listed_but_kept() {
        let t = ProcTable::new(vec![p(10, 1, "node /w/node_modules/.bin/vite")]);
        let panes = vec![pane("%1", 10, "/w", 1)];
        let got = find(&t, &panes, &("s".into(), 1), "/t", &[], &F(vec![]));
        assert_eq!(got.len(), 1);
        assert!(got[0].keep.as_deref().unwrap().contains("close the pane"));
    }

    #[test]
    fn restart_line_quotes_and_adds_only_missing_variables() {
        let s = Server {
            name: "vite".into(),
            kind: Kind::DevServer,
            pid: 1,
            start: 1,
            pids: vec![],
            argv: vec!["npm".into(), "run".into(), "dev; rm -rf /".into()],
            cwd: "/w/my app".into(),
            env: vec![("PORT".into(), "5173".into()), ("HOST".into(), "0".into())],
            pane: None,
            orphan: false,
            rss: 0,
            keep: None,
        };
        let shell = vec![("HOST".to_string(), "0".to_string())];
        assert_eq!(
            restart_line(&s, "/w/my app", &shell),
            "PORT=5173 npm run 'dev; rm -rf /'"
        );
        assert_eq!(
            restart_line(&s, "/elsewhere", &shell),
            "cd '/w/my app' && PORT=5173 npm run 'dev; rm -rf /'"
        );
    }
}
