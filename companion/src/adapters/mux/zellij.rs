//! zellij adapter (0.45). Talks to every running session whose socket lives under one socket root:
//! `$ZELLIJ_SOCKET_DIR`, else zellij's own default (`$XDG_RUNTIME_DIR/zellij`, else
//! `/tmp/zellij-<uid>`).
//!
//! Contract:
//! - Sessions are found from the process table (`zellij --server <root>/contract_version_N/<name>`),
//!   not from `zellij ls`, so a session is listed exactly when its server runs; each CLI call gets
//!   that session's socket root in `ZELLIJ_SOCKET_DIR`, which is how a call outside zellij reaches it.
//! - A pane handle is `terminal_<id>@<session>`: unique across sessions, and accepted back as a target.
//! - zellij's CLI sometimes answers nothing (~1–2 % of back-to-back calls, reply lost, exit 0): every
//!   call runs under a timeout, and a query whose answer can never be empty is retried with a short
//!   gap. An empty answer is never read as "no panes": the listing fails instead.
//! - The pane's root pid (which zellij's CLI does not report) is the server's child whose inherited
//!   `ZELLIJ_PANE_ID` names the pane; the foreground command is its terminal's foreground group.

use super::{Mux, MuxError, Pane};
use crate::adapters::platform::{env_get, Platform, ProcInfo};
use serde::Deserialize;
use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long one zellij CLI call may take before it is killed (a pipe to an unknown plugin hangs).
const CALL_TIMEOUT: Duration = Duration::from_secs(5);
/// Tries for a query whose answer is never legitimately empty, and the gap between them.
const TRIES: u32 = 6;
const GAP: Duration = Duration::from_millis(50);
/// Retries of a call the CLI refused at session discovery (see [`Zellij::call`]).
const DISCOVERY_TRIES: u32 = 8;
/// How long after a zellij server creates its socket park makes no CLI call under that socket
/// root. zellij 0.45.1's server panics when a client disconnects before the first client has
/// initialised the session (`RemoveClient` unwraps the session data: zellij-server
/// `lib.rs:1462`), and every CLI call, whatever its session, probes every socket of the socket
/// dir (`ConnStatus`) and disconnects. So one call in a new server's first milliseconds killed
/// the session being started or resurrected ("Bye from Zellij!", a blank client). Seen in CI: the
/// server `zellij attach` had started died 32 ms later, with that panic in zellij's log.
const STARTING: Duration = Duration::from_secs(2);
/// The longest a call waits for young servers (a socket whose clock is off never blocks park).
const STARTING_WAIT_MAX: Duration = Duration::from_secs(3);

/// The CLI's own refusals when its probe of the session socket got no reply: printed, and the
/// process exits, before any action reaches the server.
fn refused_before_sending(err: &str) -> bool {
    let e = err.split_once(": ").map_or(err, |(_, e)| e);
    e.starts_with("There is no active session!")
        || (e.starts_with("Session '") && e.contains("' not found."))
}

/// A running zellij session: its server process and where its socket lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Server {
    pub pid: u32,
    pub session: String,
    /// The value of `ZELLIJ_SOCKET_DIR` that reaches this session.
    pub socket_root: PathBuf,
    /// The server's own executable when its argv names it by path: the CLI that speaks its version.
    pub exe: Option<PathBuf>,
}

/// One entry of `zellij action list-panes --json --all` (only the fields park reads).
#[derive(Debug, Clone, Deserialize)]
struct ZPane {
    id: u32,
    is_plugin: bool,
    #[serde(default)]
    title: String,
    #[serde(default)]
    exited: bool,
    #[serde(default)]
    is_held: bool,
    #[serde(default)]
    tab_position: u32,
    #[serde(default)]
    tab_name: String,
    #[serde(default)]
    pane_cwd: Option<String>,
    #[serde(default)]
    is_floating: bool,
    #[serde(default)]
    pane_x: u32,
    #[serde(default)]
    pane_y: u32,
}

pub struct Zellij {
    /// `PARK_ZELLIJ_BIN`, when set: used for every session.
    bin: Option<String>,
    root: PathBuf,
    platform: Box<dyn Platform>,
    /// session → the executable its server runs (learnt from the process table).
    exes: std::sync::Mutex<HashMap<String, PathBuf>>,
}

/// The socket root park talks to: `$ZELLIJ_SOCKET_DIR`, else zellij's default.
pub(crate) fn socket_root() -> PathBuf {
    if let Some(d) = std::env::var_os("ZELLIJ_SOCKET_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    if let Some(d) = std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(d).join("zellij");
    }
    std::env::temp_dir().join(format!("zellij-{}", nix::unistd::getuid()))
}

/// How long to wait before a CLI call may probe the sockets under `root`: until the youngest
/// server's socket is [`STARTING`] old, sessions named `own` excepted (the caller runs inside
/// it, so its first client has connected). `now` and the sockets' creation times come from the
/// caller; pure, for tests.
pub(crate) fn starting_wait(
    sockets: &[(String, std::time::SystemTime)],
    own: Option<&str>,
    now: std::time::SystemTime,
) -> Duration {
    if crate::support::fault::disabled("zellij-starting") {
        return Duration::ZERO;
    }
    sockets
        .iter()
        .filter(|(name, _)| Some(name.as_str()) != own)
        .filter_map(|(_, born)| {
            // A socket "from the future" (the clock was set back) is no evidence of a start.
            let age = now.duration_since(*born).ok()?;
            STARTING.checked_sub(age).filter(|d| !d.is_zero())
        })
        .max()
        .map_or(Duration::ZERO, |d| d.min(STARTING_WAIT_MAX))
}

/// The sockets under `root` (every `contract_version_N`) with their creation times: the modified
/// time, which a socket gets when its server binds it and never changes.
fn sockets_under(root: &Path) -> Vec<(String, std::time::SystemTime)> {
    let mut v = vec![];
    for c in std::fs::read_dir(root).into_iter().flatten().flatten() {
        if !c
            .file_name()
            .to_string_lossy()
            .starts_with("contract_version_")
        {
            continue;
        }
        for e in std::fs::read_dir(c.path()).into_iter().flatten().flatten() {
            use std::os::unix::fs::FileTypeExt;
            let Ok(m) = e.metadata() else { continue };
            if !m.file_type().is_socket() {
                continue;
            }
            if let Ok(t) = m.modified() {
                v.push((e.file_name().to_string_lossy().into_owned(), t));
            }
        }
    }
    v
}

/// The server id park records for panes under `root` (compared with ledger entries).
pub(crate) fn server_id_for(root: &Path) -> String {
    format!("{SERVER_PREFIX}{}", root.display())
}

const SERVER_PREFIX: &str = "zellij:";

/// Whether a recorded server id names a zellij socket root (the only place that knows how).
pub(crate) fn is_server(server: &str) -> bool {
    server.starts_with(SERVER_PREFIX)
}

/// `terminal_<id>@<session>` → (id, session).
pub fn parse_handle(h: &str) -> Option<(u32, &str)> {
    let rest = h.strip_prefix("terminal_")?;
    let (n, session) = rest.split_once('@')?;
    if session.is_empty() || n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((n.parse().ok()?, session))
}

/// `terminal_3`, as `zellij action list-panes` prints a pane: a pane of the session park runs in.
pub fn is_bare_handle(h: &str) -> bool {
    h.strip_prefix("terminal_")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// A bare `terminal_N` qualified with the session of `here` (the handle of the pane park runs
/// in), when that is a zellij pane.
pub fn qualify(bare: &str, here: Option<&str>) -> Option<String> {
    let (_, session) = parse_handle(here?)?;
    is_bare_handle(bare).then(|| format!("{bare}@{session}"))
}

pub fn handle(id: u32, session: &str) -> String {
    format!("terminal_{id}@{session}")
}

/// The focused pane of each client in `action list-clients` output (`CLIENT_ID ZELLIJ_PANE_ID
/// RUNNING_COMMAND` header, then one line per client). Pure, for tests.
pub fn parse_clients(out: &str) -> Vec<String> {
    out.lines()
        .skip_while(|l| !l.trim_start().starts_with("CLIENT_ID"))
        .skip(1)
        .filter_map(|l| l.split_whitespace().nth(1).map(str::to_string))
        .collect()
}

/// The handles of `session`'s panes that share a tab with a client's focused pane (`terminal_N`,
/// `plugin_N`); a focus park cannot place makes every pane of the session visible.
pub fn visible_in(session: &str, focused: &[String], panes: &[Pane]) -> Vec<String> {
    let mine: Vec<&Pane> = panes.iter().filter(|p| p.session == session).collect();
    let mut tabs = vec![];
    for f in focused {
        let place = f
            .strip_prefix("terminal_")
            .and_then(|n| n.parse::<u32>().ok())
            .and_then(|n| mine.iter().find(|p| p.id == handle(n, session)));
        match place {
            Some(p) => tabs.push(p.window_index),
            None => return mine.iter().map(|p| p.id.clone()).collect(),
        }
    }
    mine.iter()
        .filter(|p| tabs.contains(&p.window_index))
        .map(|p| p.id.clone())
        .collect()
}

/// zellij's cache dir (`$XDG_CACHE_HOME/zellij`, else `~/.cache/zellij`): where it saves each
/// session's layout for resurrection.
fn cache_root() -> PathBuf {
    match std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        Some(d) => PathBuf::from(d).join("zellij"),
        None => PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/zellij"),
    }
}

/// Does the running server of `session` save its layout itself (`session_serialization`, on by
/// default)? Only then may park ask for a save: `save-session` in a session that does not
/// serialize writes a generic layout and makes the session resurrectable against the user's
/// setting (measured on 0.45.1). The evidence: the session's saved layout is newer than its
/// socket, i.e. this server wrote it. A session younger than one `serialization_interval` has
/// not saved yet and is left alone.
pub(crate) fn saves_itself(sock_root: &Path, cache: &Path, session: &str) -> bool {
    let modified = |p: PathBuf| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let contracts = |dir: &Path| -> Vec<String> {
        std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("contract_version_"))
            .collect()
    };
    contracts(sock_root).iter().any(|c| {
        let (Some(sock), Some(layout)) = (
            modified(sock_root.join(c).join(session)),
            modified(
                cache
                    .join(c)
                    .join("session_info")
                    .join(session)
                    .join("session-layout.kdl"),
            ),
        ) else {
            return false;
        };
        layout >= sock
    })
}

/// zellij servers under `root` in a process table. Pure, for tests.
pub(crate) fn servers_in(procs: &[ProcInfo], root: &Path) -> Vec<Server> {
    let mut v: Vec<Server> = procs
        .iter()
        .filter_map(|p| {
            let i = p.argv.iter().position(|a| a == "--server")?;
            let sock = Path::new(p.argv.get(i + 1)?);
            let contract = sock.parent()?;
            if !contract
                .file_name()?
                .to_string_lossy()
                .starts_with("contract_version_")
            {
                return None;
            }
            let base = Path::new(&p.argv[0]).file_name()?.to_string_lossy();
            if base != "zellij" && p.comm != "zellij" {
                return None;
            }
            let session = sock.file_name()?.to_string_lossy().into_owned();
            let exe = Some(PathBuf::from(&p.argv[0])).filter(|e| e.is_absolute());
            (contract.parent()? == root).then(|| Server {
                pid: p.pid,
                session,
                socket_root: root.to_path_buf(),
                exe,
            })
        })
        .collect();
    v.sort_by(|a, b| a.session.cmp(&b.session));
    v
}

/// Parses a `list-panes --json --all` answer into park's panes (terminal panes only). Pure.
pub fn parse_list(json: &str, session: &str, server: &str) -> Result<Vec<Pane>, String> {
    let zs: Vec<ZPane> = serde_json::from_str(json).map_err(|e| e.to_string())?;
    // A pane's place in its tab: tiled panes top to bottom, left to right, then floating ones
    // (ids are renumbered when zellij resurrects a session; the geometry is what it restores).
    let position = |z: &ZPane| {
        let mut same: Vec<&ZPane> = zs
            .iter()
            .filter(|o| !o.is_plugin && o.tab_position == z.tab_position)
            .collect();
        same.sort_by_key(|o| (o.is_floating, o.pane_y, o.pane_x, o.id));
        same.iter().position(|o| o.id == z.id).unwrap_or(0) as u32
    };
    let positions: Vec<u32> = zs.iter().map(position).collect();
    Ok(zs
        .iter()
        .cloned()
        .zip(positions)
        .filter(|(z, _)| !z.is_plugin)
        .map(|(z, position)| Pane {
            position,
            id: handle(z.id, session),
            pid: 0,
            tty: String::new(),
            cwd: z.pane_cwd.unwrap_or_default(),
            title: z.title,
            session: session.to_string(),
            window_index: z.tab_position,
            window_name: z.tab_name,
            pane_index: z.id,
            current_command: String::new(),
            dead: z.exited || z.is_held,
            alternate_on: false,
            pill: String::new(),
            server: server.to_string(),
            in_mode: false,
        })
        .collect())
}

/// The line typed into a revived pane's fresh shell to replace it by `argv` in `cwd` with `env`
/// (pure). Every word is quoted; a value that cannot be quoted (a NUL) is an error, never typed.
pub(crate) fn respawn_line(
    cwd: &str,
    env: &[(String, String)],
    argv: &[String],
) -> Result<String, MuxError> {
    let q = |s: &str| {
        shlex::try_quote(s)
            .map(|c| c.into_owned())
            .map_err(|_| MuxError::Command(format!("cannot quote {s:?} for a shell")))
    };
    let mut words = vec!["env".to_string()];
    for (k, v) in env {
        words.push(q(&format!("{k}={v}"))?);
    }
    for a in argv {
        words.push(q(a)?);
    }
    Ok(format!(" cd -- {} && {}", q(cwd)?, words.join(" ")))
}

/// The zellij pane a process was started in, from the variables it inherited
/// (`ZELLIJ_PANE_ID` + `ZELLIJ_SESSION_NAME`), as a handle. Pure.
pub fn pane_of_env(env: &[(String, String)]) -> Option<String> {
    let var = |k: &str| env.iter().find(|(x, _)| x == k).map(|(_, v)| v.as_str());
    let id: u32 = var("ZELLIJ_PANE_ID")?.parse().ok()?;
    let session = var("ZELLIJ_SESSION_NAME").filter(|s| !s.is_empty())?;
    Some(handle(id, session))
}

/// Bytes `write` sends for the tmux-style key names park uses.
pub(crate) fn key_bytes(key: &str) -> Option<u8> {
    Some(match key {
        "Enter" => 13,
        "C-u" => 21,
        "C-e" => 5,
        "C-a" => 1,
        "C-c" => 3,
        // `repair_shell_screen` has the shell redraw on a clean screen with it.
        "C-l" => 12,
        "Escape" => 27,
        _ => return None,
    })
}

/// `sh -c` body for [`Zellij::pipe_detached`]: `$1` is how long to wait first (young servers,
/// [`STARTING`]), the rest the zellij command line. Retries only the two refusals
/// [`refused_before_sending`] names (8 tries, growing pauses).
const PIPE_RETRY_SH: &str = r#"sleep "$1"; shift
i=0
while [ $i -lt 8 ]; do
  e=$(timeout 3 "$@" 2>&1 >/dev/null) && exit 0
  case $e in
    *"There is no active session!"*|*"' not found. The following sessions"*) ;;
    *) exit 1 ;;
  esac
  i=$((i + 1))
  sleep 0.$((i * 5 / 4))
done
exit 1"#;

/// The arguments of `zellij` that pipe `payload` to every plugin of `session` listening for `name`.
pub fn pipe_args<'a>(session: &'a str, name: &'a str, payload: &'a str) -> [&'a str; 7] {
    ["--session", session, "pipe", "--name", name, "--", payload]
}

/// The pipe name of the zjstatus message (zjstatus reads any CLI pipe's payload; the name only
/// tells people what it is for).
pub const ZJSTATUS_PIPE: &str = "zjstatus";

/// zjstatus's line protocol for its pipe widget: `zjstatus::pipe::pipe_park::<text>`, the text
/// `park status` prints (`❄ 3 · 1.1G`; empty when nothing is parked, which clears the widget).
/// `None` when `json` is not a status summary.
pub fn zjstatus_payload(json: &str) -> Option<String> {
    let s: park_protocol::StatusSummary = serde_json::from_str(json).ok()?;
    // `::` separates the protocol's fields and a newline ends its line: neither may be in the text.
    let text = s.text().replace("::", ":").replace('\n', " ");
    Some(format!("zjstatus::pipe::pipe_park::{text}"))
}

#[cfg(test)]
mod zjstatus_tests {
    use super::*;

    #[test]
    fn zjstatus_gets_the_status_text_in_its_pipe_protocol() {
        let j = r#"{"schema":1,"parked":3,"freed_bytes":1181116006,"updated":1,"version":"0.1.0"}"#;
        assert_eq!(
            zjstatus_payload(j).unwrap(),
            "zjstatus::pipe::pipe_park::❄ 3 · 1.1G"
        );
        let none = r#"{"schema":1,"parked":0,"freed_bytes":0,"updated":1}"#;
        assert_eq!(
            zjstatus_payload(none).unwrap(),
            "zjstatus::pipe::pipe_park::"
        );
        assert_eq!(zjstatus_payload("not json"), None);
    }

    #[test]
    fn the_pipe_command_line_names_the_session_and_the_pipe() {
        let line =
            zjstatus_payload(r#"{"schema":1,"parked":1,"freed_bytes":2048,"updated":1}"#).unwrap();
        assert_eq!(
            pipe_args("main", ZJSTATUS_PIPE, &line),
            [
                "--session",
                "main",
                "pipe",
                "--name",
                "zjstatus",
                "--",
                "zjstatus::pipe::pipe_park::❄ 1 · 2K"
            ]
        );
    }
}

impl Zellij {
    pub fn from_env(platform: Box<dyn Platform>) -> Self {
        let bin = std::env::var("PARK_ZELLIJ_BIN")
            .ok()
            .filter(|b| !b.is_empty());
        Zellij {
            bin,
            root: socket_root(),
            platform,
            exes: Default::default(),
        }
    }

    pub fn servers(&self) -> Vec<Server> {
        match self.platform.processes() {
            Ok(p) => self.servers_from(&p),
            Err(_) => vec![],
        }
    }

    /// The servers under park's socket root, found in a process table already read.
    pub fn servers_from(&self, procs: &[ProcInfo]) -> Vec<Server> {
        let v = servers_in(procs, &self.root);
        self.learn(&v);
        v
    }

    /// Every pane of every session, given a process table already read.
    pub fn list_panes_in(&self, table: &[ProcInfo]) -> Result<Vec<Pane>, MuxError> {
        let mut all = vec![];
        for s in self.servers_from(table) {
            all.extend(self.list_session(&s, table)?);
        }
        Ok(all)
    }

    fn learn(&self, servers: &[Server]) {
        if let Ok(mut m) = self.exes.lock() {
            for s in servers {
                if let Some(e) = &s.exe {
                    m.insert(s.session.clone(), e.clone());
                }
            }
        }
    }

    /// The zellij CLI for `session`: `PARK_ZELLIJ_BIN`, else the server's own executable (so a
    /// pane whose PATH lacks zellij still reaches it, and the CLI's version matches), else `zellij`.
    fn bin_for(&self, session: &str) -> PathBuf {
        if let Some(b) = &self.bin {
            return PathBuf::from(b);
        }
        let known = |z: &Self| z.exes.lock().ok()?.get(session).cloned();
        if let Some(e) = known(self) {
            return e;
        }
        self.servers();
        known(self).unwrap_or_else(|| PathBuf::from("zellij"))
    }

    fn session_of<'a>(&self, pane: &'a str) -> Result<(u32, &'a str), MuxError> {
        parse_handle(pane).ok_or_else(|| MuxError::Command(format!("not a zellij pane: {pane}")))
    }

    /// One CLI call against `session`, under the timeout. Non-zero exit is an error.
    ///
    /// The CLI first probes every socket of the socket dir (`ConnStatus`) and refuses with
    /// "There is no active session!" / "Session 'S' not found" when the probe's reply is lost,
    /// which a busy server does (seen in CI: an unpark's dev-server restart refused while the
    /// session was up). The refusal comes before the action is sent, so retrying it can never
    /// run an action twice; any other failure is returned at once.
    fn call(&self, session: &str, args: &[&str]) -> Result<String, MuxError> {
        self.call_near(session, args, None)
    }

    /// [`Zellij::call`] as if run from pane `near` (`ZELLIJ_PANE_ID`): `new-pane
    /// --near-current-pane` opens in that pane's tab, not the tab a client has focused.
    fn call_near(
        &self,
        session: &str,
        args: &[&str],
        near: Option<u32>,
    ) -> Result<String, MuxError> {
        let mut tries = 0;
        loop {
            match self.call_once(session, args, near) {
                Err(MuxError::Command(e))
                    if tries < DISCOVERY_TRIES
                        && (refused_before_sending(&e)
                            || crate::support::fault::disabled("zellij-retry-unsent")) =>
                {
                    tries += 1;
                    std::thread::sleep(GAP * tries);
                }
                r => return r,
            }
        }
    }

    fn call_once(
        &self,
        session: &str,
        args: &[&str],
        near: Option<u32>,
    ) -> Result<String, MuxError> {
        let wait = self.starting_wait_now();
        if !wait.is_zero() {
            std::thread::sleep(wait);
        }
        let mut cmd = Command::new(self.bin_for(session));
        if let Some(id) = near {
            cmd.env("ZELLIJ_PANE_ID", id.to_string());
        }
        let mut child = cmd
            .env("ZELLIJ_SOCKET_DIR", &self.root)
            .env_remove("ZELLIJ")
            .arg("--session")
            .arg(session)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| MuxError::Unreachable("zellij", e.to_string()))?;
        let mut out = child.stdout.take().expect("piped");
        let mut err = child.stderr.take().expect("piped");
        let reader = std::thread::spawn(move || {
            let mut b = vec![];
            let _ = out.read_to_end(&mut b);
            b
        });
        let ereader = std::thread::spawn(move || {
            let mut b = vec![];
            let _ = err.read_to_end(&mut b);
            b
        });
        let t0 = Instant::now();
        let status = loop {
            match child.try_wait() {
                Ok(Some(s)) => break s,
                Ok(None) if t0.elapsed() > CALL_TIMEOUT => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(MuxError::Command(format!(
                        "zellij {} timed out after {}s",
                        args.first().copied().unwrap_or(""),
                        CALL_TIMEOUT.as_secs()
                    )));
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(2)),
                Err(e) => return Err(MuxError::Command(e.to_string())),
            }
        };
        let stdout = String::from_utf8_lossy(&reader.join().unwrap_or_default()).into_owned();
        if !status.success() {
            let e = String::from_utf8_lossy(&ereader.join().unwrap_or_default())
                .trim()
                .to_string();
            return Err(MuxError::Command(format!(
                "zellij {}: {}",
                args.iter().take(2).copied().collect::<Vec<_>>().join(" "),
                if e.is_empty() { stdout.trim() } else { &e }
            )));
        }
        Ok(stdout)
    }

    /// A query whose answer is never empty: retried while zellij loses the reply.
    fn query(&self, session: &str, args: &[&str]) -> Result<String, MuxError> {
        let mut last = None;
        for i in 0..TRIES {
            if i > 0 {
                std::thread::sleep(GAP);
            }
            // `call` retries a refusal at discovery; a lost answer is retried here.
            match self.call(session, args) {
                Ok(s) if !s.trim().is_empty() => return Ok(s),
                Ok(_) => last = None,
                Err(MuxError::Command(e)) if refused_before_sending(&e) => {
                    return Err(MuxError::Command(e))
                }
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| {
            MuxError::Partial(format!(
                "zellij session {session} gave no answer to {} after {TRIES} tries",
                args.join(" ")
            ))
        }))
    }

    /// pane id → root pid, from the server's children and the `ZELLIJ_PANE_ID` they inherited.
    fn pane_pids(&self, server: &Server, table: &[ProcInfo]) -> HashMap<u32, u32> {
        let mut m = HashMap::new();
        for p in table.iter().filter(|p| p.ppid == server.pid) {
            if let Some(env) = self.platform.environ(p.pid) {
                if env_get(&env, "ZELLIJ_SESSION_NAME") == Some(server.session.as_str()) {
                    if let Some(id) = env_get(&env, "ZELLIJ_PANE_ID").and_then(|v| v.parse().ok()) {
                        m.insert(id, p.pid);
                    }
                }
            }
        }
        m
    }

    fn list_session(&self, server: &Server, table: &[ProcInfo]) -> Result<Vec<Pane>, MuxError> {
        let json = self.query(
            &server.session,
            &["action", "list-panes", "--json", "--all"],
        )?;
        let mut panes = parse_list(&json, &server.session, &self.server_id_str())
            .map_err(|e| MuxError::Partial(format!("zellij session {}: {e}", server.session)))?;
        let pids = self.pane_pids(server, table);
        for p in &mut panes {
            let Some(&pid) = pids.get(&p.pane_index) else {
                continue;
            };
            p.pid = pid;
            if let Some(tty) = self
                .platform
                .open_files(pid)
                .into_iter()
                .find(|f| f.starts_with("/dev/pts") || f.starts_with("/dev/tty"))
            {
                p.tty = tty.to_string_lossy().into_owned();
            }
            let fg = table.iter().find(|x| x.pid == pid).and_then(|root| {
                table
                    .iter()
                    .find(|x| x.tpgid > 0 && x.pid == root.tpgid as u32)
            });
            p.current_command = fg
                .or_else(|| table.iter().find(|x| x.pid == pid))
                .map(|x| x.comm.clone())
                .unwrap_or_default();
            if p.cwd.is_empty() {
                if let Some(c) = self.platform.cwd(pid) {
                    p.cwd = c.to_string_lossy().into_owned();
                }
            }
        }
        Ok(panes)
    }

    fn server_id_str(&self) -> String {
        server_id_for(&self.root)
    }

    /// Broadcasts the status summary to every session's park plugins, without waiting (a session
    /// with no plugin must not slow park down).
    fn broadcast(&self, name: &str, payload: &str) {
        // A pipe probes every socket like any call: it waits out young servers too (detached).
        let wait = self.starting_wait_now();
        for s in self.servers() {
            self.pipe_detached(&s.session, name, payload, wait);
        }
    }

    /// [`starting_wait`] for the sockets under park's root, now.
    fn starting_wait_now(&self) -> Duration {
        let own = std::env::var("ZELLIJ_SESSION_NAME").ok();
        starting_wait(
            &sockets_under(&self.root),
            own.as_deref(),
            std::time::SystemTime::now(),
        )
    }

    /// One `zellij pipe` to `session`, left running: a small `sh` loop retries the CLI's refusals
    /// at session discovery (nothing was sent, see [`Zellij::call`]), so a busy server does not
    /// lose a status push — zjstatus has no poll to heal a lost one. Any other failure, or a pipe
    /// nobody reads within 3 s, ends it.
    fn pipe_detached(&self, session: &str, name: &str, payload: &str, wait: Duration) {
        let _ = Command::new("sh")
            .arg("-c")
            .arg(PIPE_RETRY_SH)
            .arg("park-pipe")
            .arg(format!("{:.3}", wait.as_secs_f64()))
            .arg(self.bin_for(session))
            .args(pipe_args(session, name, payload))
            .env("ZELLIJ_SOCKET_DIR", &self.root)
            .env_remove("ZELLIJ")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map(|mut c| {
                // Reaped on a thread so no zombie outlives the call.
                std::thread::spawn(move || c.wait());
            });
    }
}

impl Mux for Zellij {
    fn server_process(
        &self,
        pane: &Pane,
        table: &crate::adapters::platform::proctree::ProcTable,
    ) -> Option<u32> {
        // A zellij pane has no pid of its own in the map: the session's server process.
        servers_in(table.all(), &self.root)
            .into_iter()
            .find(|s| s.session == pane.session)
            .map(|s| s.pid)
    }

    fn kind(&self) -> &'static str {
        "zellij"
    }

    fn server_id(&self) -> Result<String, MuxError> {
        Ok(self.server_id_str())
    }

    fn serves(&self, server: &str) -> bool {
        server == self.server_id_str()
    }

    fn list_panes(&self) -> Result<Vec<Pane>, MuxError> {
        let table = self
            .platform
            .processes()
            .map_err(|e| MuxError::Unreachable("zellij", e.to_string()))?;
        self.list_panes_in(&table)
    }

    fn snapshot(&self, procs: &[ProcInfo], want: &[(String, bool)]) -> super::Snapshot {
        let panes = self.list_panes_in(procs);
        let screens = super::screens_of(self, panes.as_ref().ok(), want);
        super::Snapshot { panes, screens }
    }

    /// Per session with a pane in `panes`: `action list-clients` names each client's focused
    /// pane; its tab is what the client sees. A client focused on a pane park does not list (a
    /// plugin) makes the whole session visible.
    fn visible(&self, panes: &[Pane]) -> Result<Vec<String>, MuxError> {
        let mut sessions: Vec<&str> = panes.iter().map(|p| p.session.as_str()).collect();
        sessions.sort();
        sessions.dedup();
        let mut out = vec![];
        for session in sessions {
            let listed = self.query(session, &["action", "list-clients"])?;
            out.extend(visible_in(session, &parse_clients(&listed), panes));
        }
        Ok(out)
    }

    fn capture(&self, pane: &str, escapes: bool) -> Result<String, MuxError> {
        let (id, session) = self.session_of(pane)?;
        let id = format!("terminal_{id}");
        let mut a = vec!["action", "dump-screen", "--pane-id", id.as_str()];
        if escapes {
            a.push("--ansi");
        }
        // A screen always holds something (a prompt, a border); empty means the reply was lost.
        match self.query(session, &a) {
            Ok(s) => Ok(s),
            Err(MuxError::Partial(_)) => Ok(String::new()),
            Err(e) => Err(e),
        }
    }

    fn capture_many(&self, reqs: &[(String, bool)]) -> Vec<Option<String>> {
        // One process per pane: run them side by side.
        std::thread::scope(|sc| {
            let hs: Vec<_> = reqs
                .iter()
                .map(|(p, e)| sc.spawn(move || self.capture(p, *e).ok()))
                .collect();
            hs.into_iter().map(|h| h.join().ok().flatten()).collect()
        })
    }

    fn send_text(&self, pane: &str, text: &str) -> Result<(), MuxError> {
        if text.is_empty() {
            return Ok(());
        }
        let (id, session) = self.session_of(pane)?;
        let id = format!("terminal_{id}");
        self.call(
            session,
            &["action", "write-chars", "--pane-id", &id, "--", text],
        )
        .map(|_| ())
    }

    fn send_keys(&self, pane: &str, keys: &[&str]) -> Result<(), MuxError> {
        let (id, session) = self.session_of(pane)?;
        let id = format!("terminal_{id}");
        let bytes: Vec<String> = keys
            .iter()
            .map(|k| {
                key_bytes(k)
                    .map(|b| b.to_string())
                    .ok_or_else(|| MuxError::Command(format!("no zellij byte for key {k}")))
            })
            .collect::<Result<_, _>>()?;
        let mut a = vec!["action", "write", "--pane-id", id.as_str()];
        a.extend(bytes.iter().map(|s| s.as_str()));
        self.call(session, &a).map(|_| ())
    }

    fn leave_mode(&self, _pane: &str) -> Result<(), MuxError> {
        // zellij's scroll/search modes are per client; input written to a pane reaches its program.
        Ok(())
    }

    fn set_pane_option(&self, _p: &str, _k: &str, _v: Option<&str>) -> Result<(), MuxError> {
        // No pane user options: the pill is the pane's pinned title.
        Ok(())
    }

    fn pane_option(&self, _pane: &str, _key: &str) -> Result<Option<String>, MuxError> {
        Ok(None)
    }

    fn set_global_option(&self, _key: &str, _value: Option<&str>) -> Result<(), MuxError> {
        Ok(())
    }

    fn push_status(&self, json: &str) {
        self.broadcast("park:status", json);
        // zjstatus's pipe widget (`{pipe_park}`), same fire-and-forget broadcast.
        if let Some(line) = zjstatus_payload(json) {
            self.broadcast(ZJSTATUS_PIPE, &line);
        }
    }

    fn notify(&self, text: &str) {
        self.broadcast("park:notice", text);
    }

    fn window_option_all(
        &self,
        _key: &str,
    ) -> Result<Vec<(String, String, u32, String)>, MuxError> {
        Ok(vec![])
    }

    fn set_window_option(&self, _w: &str, _k: &str, _v: Option<&str>) -> Result<(), MuxError> {
        Ok(())
    }

    /// Renames the pane and checks the listing shows it, up to three tries: the name is the
    /// parked pane's mark (`store::slot`), and zellij can lose a CLI action or let a dying
    /// program's last title land after it (seen in CI: the ❄ name missing after a park).
    fn set_title(&self, pane: &str, title: &str) -> Result<(), MuxError> {
        let (n, session) = self.session_of(pane)?;
        let id = format!("terminal_{n}");
        for _ in 0..3 {
            self.call(
                session,
                &["action", "rename-pane", "--pane-id", &id, "--", title],
            )?;
            for _ in 0..5 {
                let json = self.query(session, &["action", "list-panes", "--json", "--all"])?;
                let shown = parse_list(&json, session, "")
                    .ok()
                    .and_then(|ps| ps.into_iter().find(|p| p.pane_index == n))
                    .map(|p| p.title);
                match shown {
                    Some(t) if t == title => return Ok(()),
                    None => return Err(MuxError::Command(format!("{pane} is gone"))),
                    _ => std::thread::sleep(Duration::from_millis(40)),
                }
            }
        }
        Err(MuxError::Command(format!(
            "{pane}: zellij does not show the name {title:?} after three renames"
        )))
    }

    fn leaves_last_frame(&self, _pane: &str) -> bool {
        true
    }

    fn session_running(&self, server: &str, session: &str) -> Option<bool> {
        // A session runs while its server process does (a socket file can outlive a crash).
        self.serves(server)
            .then(|| self.servers().iter().any(|s| s.session == session))
    }

    fn checkpoint(&self, pane: &str) {
        // The save is on disk when the call returns, with one window zellij 0.45.1 leaves open:
        // its metadata thread rewrites the file every second with the last layout reported to
        // it, and a tick between the save's write and its report puts the previous layout back
        // until the next tick (≤ 1 s). A crash inside that second brings the pane back unmarked
        // (`pane-unmatched`: resumed in a new pane of its tab, never lost).
        if let Ok((_, session)) = self.session_of(pane) {
            if saves_itself(&self.root, &cache_root(), session) {
                let _ = self.call(session, &["action", "save-session"]);
            }
        }
    }

    fn restore_title(&self, pane: &str, title: &str) -> Result<(), MuxError> {
        // Give the title back to the program (a rename pins it; the agent sets its own).
        let (n, session) = self.session_of(pane)?;
        let id = format!("terminal_{n}");
        self.call(session, &["action", "undo-rename-pane", "--pane-id", &id])?;
        // A resurrected pane's name is its saved layout's — park's ❄ mark — and both undoing a
        // rename and an empty name go back to it (measured on 0.45.1). Only a new name removes
        // it: the title the pane had before park (pinned; better than a mark that says parked).
        let json = self.query(session, &["action", "list-panes", "--json", "--all"])?;
        let still = parse_list(&json, session, "")
            .ok()
            .and_then(|ps| ps.into_iter().find(|p| p.pane_index == n))
            .is_some_and(|p| p.title.starts_with('❄'));
        if still {
            let own = title.trim();
            let own = if own.is_empty() || own.starts_with('❄') {
                format!("Pane #{}", n + 1)
            } else {
                own.to_string()
            };
            self.call(
                session,
                &["action", "rename-pane", "--pane-id", &id, "--", &own],
            )?;
        }
        Ok(())
    }

    /// zellij 0.45 has no respawn: the held pane is turned into a shell under the same id
    /// ([`Mux::revive`]) and `argv` runs as that shell's foreground job (typed with a leading
    /// space so shells that ignore space-prefixed lines keep it out of their history). Not
    /// `exec`: zellij closes a shell pane whose process exits, so the shell stays the pane's
    /// process. zellij saves the pane's foreground command, so a resurrected session brings the
    /// placeholder back (suspended), never the agent.
    fn respawn(
        &self,
        pane: &str,
        cwd: &str,
        env: &[(String, String)],
        argv: &[String],
    ) -> Result<(), MuxError> {
        self.revive(pane)?;
        let line = respawn_line(cwd, env, argv)?;
        self.send_text(pane, &line)?;
        self.send_keys(pane, &["Enter"])
    }

    fn revive(&self, pane: &str) -> Result<(), MuxError> {
        let (id, session) = self.session_of(pane)?;
        let tid = format!("terminal_{id}");
        let held = |me: &Self| -> Result<bool, MuxError> {
            let json = me.query(session, &["action", "list-panes", "--json", "--all"])?;
            let panes = parse_list(&json, session, "").map_err(MuxError::Command)?;
            panes
                .iter()
                .find(|p| p.pane_index == id)
                .map(|p| p.dead)
                .ok_or_else(|| MuxError::Command(format!("{pane} is gone")))
        };
        if !held(self)? {
            return Ok(());
        }
        // ESC on a held pane: "drop to shell" (measured on 0.45.1; Enter would run the command).
        self.call(session, &["action", "write", "--pane-id", &tid, "27"])?;
        for _ in 0..50 {
            if !held(self)? {
                return Ok(());
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        Err(MuxError::Command(format!(
            "{pane} stayed held after ESC; not typing into it"
        )))
    }

    fn new_window(
        &self,
        _server: &str,
        session: &str,
        // A pane, not a tab: park names a parked pane with its ❄ mark, and a tab name here would
        // be renamed by no one. The pane opens in the tab of that name when it still exists (from
        // one of its panes: `--near-current-pane`), else in the tab a client has focused.
        tab: &str,
        cwd: &str,
        env: &[(String, String)],
        argv: &[String],
    ) -> Result<String, MuxError> {
        let listed = |me: &Self| {
            me.query(session, &["action", "list-panes", "--json", "--all"])
                .ok()
                .and_then(|json| parse_list(&json, session, "").ok())
        };
        let before = listed(self);
        let near = before
            .iter()
            .flatten()
            .find(|p| p.window_name == tab && !tab.is_empty())
            .map(|p| p.pane_index);
        let mut a: Vec<String> = vec!["action".into(), "new-pane".into()];
        if near.is_some() {
            a.push("--near-current-pane".into());
        }
        a.extend(["--cwd".into(), cwd.into(), "--".into(), "env".into()]);
        a.extend(env.iter().map(|(k, v)| format!("{k}={v}")));
        a.extend(argv.iter().cloned());
        let refs: Vec<&str> = a.iter().map(|s| s.as_str()).collect();
        // Never sent twice (a second pane would be a second resume): a lost answer (ZELLIJ-TMUX
        // §0) is read from the listing instead, the one pane that was not there before.
        let out = self.call_near(session, &refs, near)?;
        let said = out
            .trim()
            .strip_prefix("terminal_")
            .and_then(|n| n.parse::<u32>().ok());
        let id = match (said, &before) {
            (Some(id), _) => id,
            (None, Some(before)) if out.trim().is_empty() => {
                let new: Vec<u32> = listed(self)
                    .unwrap_or_default()
                    .into_iter()
                    .map(|p| p.pane_index)
                    .filter(|id| !before.iter().any(|b| b.pane_index == *id))
                    .collect();
                match new.as_slice() {
                    [one] => *one,
                    _ => {
                        return Err(MuxError::Command(format!(
                            "zellij new-pane gave no answer and {} new panes are listed",
                            new.len()
                        )))
                    }
                }
            }
            _ => {
                return Err(MuxError::Command(format!(
                    "zellij new-pane said {:?}",
                    out.trim()
                )))
            }
        };
        Ok(handle(id, session))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_panes_position_is_its_place_in_the_tab_not_its_id() {
        // Ids as zellij gives them after a later split: the new pane (id 3) sits above id 1.
        let json = r#"[
            {"id":1,"is_plugin":false,"tab_position":0,"tab_name":"a","pane_x":0,"pane_y":20},
            {"id":3,"is_plugin":false,"tab_position":0,"tab_name":"a","pane_x":0,"pane_y":0},
            {"id":0,"is_plugin":true,"tab_position":0,"tab_name":"a","pane_x":0,"pane_y":0},
            {"id":2,"is_plugin":false,"tab_position":1,"tab_name":"b","pane_x":0,"pane_y":0},
            {"id":4,"is_plugin":false,"tab_position":0,"tab_name":"a","pane_x":5,"pane_y":5,"is_floating":true}
        ]"#;
        let panes = parse_list(json, "s", "zellij:/x").unwrap();
        let pos = |id: u32| panes.iter().find(|p| p.pane_index == id).unwrap().position;
        assert_eq!((pos(3), pos(1), pos(4), pos(2)), (0, 1, 2, 0));
    }

    use super::*;

    fn proc(pid: u32, ppid: u32, argv: &[&str]) -> ProcInfo {
        ProcInfo {
            pid,
            ppid,
            argv: argv.iter().map(|s| s.to_string()).collect(),
            comm: Path::new(argv[0])
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned(),
            ..Default::default()
        }
    }

    /// A zellij CLI stand-in: counts its runs in `runs`, fails the first `fail` of them with
    /// `err` on stderr, then succeeds.
    fn stub_cli(dir: &Path, fail: u32, err: &str) -> Zellij {
        let bin = dir.join("zellij");
        let script = format!(
            "#!/bin/sh\nn=$(($(cat {d}/runs 2>/dev/null || echo 0) + 1))\necho $n > {d}/runs\n\
             if [ $n -le {fail} ]; then echo \"{err}\" >&2; exit 1; fi\necho ok\n",
            d = dir.display()
        );
        crate::support::fs::write_script(&bin, &script);
        Zellij {
            bin: Some(bin.display().to_string()),
            root: dir.to_path_buf(),
            platform: crate::adapters::platform::native(),
            exes: Default::default(),
        }
    }

    fn runs(dir: &Path) -> u32 {
        std::fs::read_to_string(dir.join("runs"))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }

    #[test]
    fn an_action_refused_at_session_discovery_is_retried_and_no_other_failure_is() {
        // Refused before sending (the probe's reply was lost): retried until it goes through.
        for err in [
            "There is no active session!",
            "Session 's' not found. The following sessions are active:",
        ] {
            let d = tempfile::tempdir().unwrap();
            let z = stub_cli(d.path(), 2, err);
            assert_eq!(
                z.send_text(&handle(3, "s"), "hi")
                    .map_err(|e| e.to_string()),
                Ok(())
            );
            assert_eq!(runs(d.path()), 3, "{err}");
        }
        // Any other failure may have reached the server: one run, the error returned.
        let d = tempfile::tempdir().unwrap();
        let z = stub_cli(d.path(), 1, "Error: no pane with id terminal_3");
        let e = z.send_text(&handle(3, "s"), "hi").unwrap_err().to_string();
        assert!(e.contains("no pane with id"), "{e}");
        assert_eq!(runs(d.path()), 1);
        // A session that stays unreachable ends in an error, not a hang.
        let d = tempfile::tempdir().unwrap();
        let z = stub_cli(d.path(), 100, "There is no active session!");
        assert!(z.send_text(&handle(3, "s"), "hi").is_err());
        assert_eq!(runs(d.path()), DISCOVERY_TRIES + 1);
    }

    #[test]
    fn a_status_push_refused_at_session_discovery_is_sent_again_in_the_background() {
        let runs_within = |d: &Path, want: u32| {
            (0..100).any(|_| {
                std::thread::sleep(std::time::Duration::from_millis(50));
                std::fs::read_to_string(d.join("runs"))
                    .is_ok_and(|r| r.trim().parse::<u32>() == Ok(want))
            })
        };
        let d = tempfile::tempdir().unwrap();
        stub_cli(d.path(), 2, "There is no active session!").pipe_detached(
            "s",
            "park:status",
            "{}",
            std::time::Duration::ZERO,
        );
        assert!(
            runs_within(d.path(), 3),
            "refused twice, sent the third time"
        );
        // Another failure may have been delivered: not sent again.
        let d = tempfile::tempdir().unwrap();
        stub_cli(d.path(), 1, "Error: something else").pipe_detached(
            "s",
            "park:status",
            "{}",
            std::time::Duration::from_millis(100),
        );
        assert!(runs_within(d.path(), 1));
        std::thread::sleep(std::time::Duration::from_millis(600));
        assert_eq!(runs(d.path()), 1);
    }

    #[test]
    fn park_asks_for_a_save_only_where_this_server_saved_its_layout_itself() {
        use std::time::{Duration, SystemTime};
        let d = tempfile::tempdir().unwrap();
        let (sock, cache) = (d.path().join("sock"), d.path().join("cache"));
        let at = |p: &Path, secs_ago: u64| {
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            let f = std::fs::File::create(p).unwrap();
            f.set_modified(SystemTime::now() - Duration::from_secs(secs_ago))
                .unwrap();
        };
        let layout = cache.join("contract_version_1/session_info/s/session-layout.kdl");
        at(&sock.join("contract_version_1/s"), 100);
        // Never saved (serialization off, or younger than one interval): no save.
        assert!(!saves_itself(&sock, &cache, "s"));
        // Saved by an earlier server of that name (before this socket): no save.
        at(&layout, 200);
        assert!(!saves_itself(&sock, &cache, "s"));
        // Saved by this server: it serializes, a save only brings the copy up to date.
        at(&layout, 10);
        assert!(saves_itself(&sock, &cache, "s"));
        assert!(!saves_itself(&sock, &cache, "other"));
    }

    #[test]
    fn a_clients_focused_tab_is_visible_and_an_unplaceable_focus_shows_all() {
        let out = "CLIENT_ID ZELLIJ_PANE_ID RUNNING_COMMAND\n1  terminal_1  N/A\n";
        assert_eq!(parse_clients(out), vec!["terminal_1".to_string()]);
        assert!(parse_clients("CLIENT_ID ZELLIJ_PANE_ID RUNNING_COMMAND\n").is_empty());
        let pane = |n: u32, tab: u32| Pane {
            id: handle(n, "s"),
            session: "s".into(),
            window_index: tab,
            ..Pane::default()
        };
        let panes = [pane(0, 0), pane(1, 0), pane(2, 1)];
        let focused = vec!["terminal_1".to_string()];
        assert_eq!(
            visible_in("s", &focused, &panes),
            vec![handle(0, "s"), handle(1, "s")]
        );
        assert!(
            visible_in("s", &[], &panes).is_empty(),
            "no client: nothing seen"
        );
        assert_eq!(
            visible_in("s", &["plugin_3".to_string()], &panes).len(),
            3,
            "a plugin in focus: the whole session counts as seen"
        );
    }

    #[test]
    fn handles_round_trip_and_reject_junk() {
        assert_eq!(parse_handle("terminal_3@main"), Some((3, "main")));
        assert_eq!(handle(3, "main"), "terminal_3@main");
        for bad in [
            "terminal_@m",
            "terminal_3@",
            "terminal_x@m",
            "plugin_2@m",
            "%3",
            "3@m",
        ] {
            assert_eq!(parse_handle(bad), None, "{bad}");
        }
        // A session name may hold '@': the id ends at the first one.
        assert_eq!(parse_handle("terminal_1@a@b"), Some((1, "a@b")));
    }

    /// A CLI call waits until every other server under the root is 2 s old: zellij 0.45.1 kills a
    /// server whose first client has not connected when any client (a CLI's socket probe)
    /// disconnects from it.
    #[test]
    fn a_cli_call_waits_for_servers_younger_than_two_seconds_but_its_own() {
        use std::time::{Duration as D, SystemTime};
        let now = SystemTime::UNIX_EPOCH + D::from_secs(1_000_000);
        let s = |n: &str, age_ms: u64| (n.to_string(), now - D::from_millis(age_ms));
        assert_eq!(starting_wait(&[], None, now), D::ZERO);
        assert_eq!(
            starting_wait(&[s("old", 60_000), s("older", 5_000)], None, now),
            D::ZERO
        );
        assert_eq!(
            starting_wait(&[s("old", 60_000), s("new", 300)], None, now),
            D::from_millis(1_700),
            "until the young one is 2 s old"
        );
        assert_eq!(
            starting_wait(&[s("a", 1_500), s("b", 100)], None, now),
            D::from_millis(1_900),
            "the youngest counts"
        );
        assert_eq!(
            starting_wait(&[s("mine", 100)], Some("mine"), now),
            D::ZERO,
            "the caller's own session has its client"
        );
        assert_eq!(
            starting_wait(&[("skewed".into(), now + D::from_secs(3600))], None, now),
            D::ZERO,
            "a socket from the future (the clock set back) never blocks"
        );
    }

    #[test]
    fn servers_come_from_the_process_table_under_one_root() {
        let root = Path::new("/tmp/zz/sock");
        let t = vec![
            proc(
                10,
                1,
                &[
                    "/opt/bin/zellij",
                    "--server",
                    "/tmp/zz/sock/contract_version_1/p1",
                ],
            ),
            proc(
                11,
                1,
                &["zellij", "--server", "/elsewhere/contract_version_1/p2"],
            ),
            proc(12, 1, &["zellij", "-s", "p3"]),
            proc(
                13,
                1,
                &["vim", "--server", "/tmp/zz/sock/contract_version_1/x"],
            ),
            proc(14, 1, &["zellij", "--server", "/tmp/zz/sock/other/p4"]),
        ];
        let s = servers_in(&t, root);
        assert_eq!(
            s,
            vec![Server {
                pid: 10,
                session: "p1".into(),
                socket_root: root.into(),
                exe: Some("/opt/bin/zellij".into()),
            }]
        );
    }

    #[test]
    fn parses_a_real_listing_keeping_terminals_only() {
        // Shape of zellij 0.45.1 `action list-panes --json --all` (trimmed fields are defaulted).
        let json = r#"[
          {"id":0,"is_plugin":true,"title":"tab-bar","exited":false,"is_held":false,"tab_id":0,"tab_position":0,"tab_name":"Tab #1"},
          {"id":0,"is_plugin":false,"is_focused":true,"title":"✳ Fix the bug","exited":false,"exit_status":null,"is_held":false,"tab_id":0,"tab_position":0,"tab_name":"Tab #1","pane_command":"bash","pane_cwd":"/work/x"},
          {"id":2,"is_plugin":false,"title":"done","exited":true,"is_held":true,"tab_id":1,"tab_position":1,"tab_name":"api"}
        ]"#;
        let p = parse_list(json, "main", "zellij:/r").unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].id, "terminal_0@main");
        assert_eq!(p[0].title, "✳ Fix the bug");
        assert_eq!(p[0].cwd, "/work/x");
        assert_eq!((p[1].window_index, p[1].window_name.as_str()), (1, "api"));
        assert!(p[1].dead && !p[0].dead);
        assert_eq!(p[0].server, "zellij:/r");
        assert!(parse_list("", "m", "s").is_err());
        assert!(parse_list("[{\"id\":\"x\"}]", "m", "s").is_err());
    }

    #[test]
    fn the_respawn_line_quotes_every_word_and_refuses_a_nul() {
        let env = vec![("PARK_HOME".to_string(), "/h/my park".to_string())];
        let argv = vec![
            "/bin/park".to_string(),
            "hold".into(),
            "claude-x$(id)".into(),
        ];
        let line = respawn_line("/w/it's", &env, &argv).unwrap();
        assert_eq!(
            line,
            " cd -- \"/w/it's\" && env 'PARK_HOME=/h/my park' /bin/park hold 'claude-x$(id)'"
        );
        let words = shlex::split(line.trim()).unwrap();
        assert!(words.contains(&"claude-x$(id)".to_string()));
        assert!(respawn_line("/w", &[], &["a\0b".to_string()]).is_err());
    }

    #[test]
    fn keys_map_to_bytes() {
        assert_eq!(key_bytes("Enter"), Some(13));
        assert_eq!(key_bytes("C-u"), Some(21));
        assert_eq!(key_bytes("C-l"), Some(12));
        assert_eq!(key_bytes("F1"), None);
    }
}
