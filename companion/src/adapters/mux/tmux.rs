//! tmux adapter. Talks to the server named by `PARK_TMUX_SOCKET` (a socket path, or a `-L` label),
//! else by `$TMUX` (as tmux itself does), else tmux's default server.
//!
//! Every call is a direct `Command` (no shell). Text is typed with `send-keys -H` (hex bytes), which
//! is immune to tmux's key-name parsing and its `;` command separator.

use super::{BuiltWindow, Mux, MuxError, Pane, Snapshot, WindowSpec};
use std::process::{Command, Stdio};

const SEP: char = '\u{1f}';
const FIELDS: &[&str] = &[
    "pane_id",
    "pane_pid",
    "pane_tty",
    "pane_current_path",
    "pane_title",
    "session_name",
    "window_index",
    "window_name",
    "pane_index",
    "pane_current_command",
    "pane_dead",
    "alternate_on",
    "@park_pill",
    "socket_path",
    "pane_in_mode",
];

/// The leading tmux args selecting the server: `PARK_TMUX_SOCKET` (a path → `-S`, a label → `-L`),
/// else the socket in `$TMUX` (as tmux itself does), else none (tmux's default server).
pub fn server_args() -> Vec<String> {
    if let Ok(s) = std::env::var("PARK_TMUX_SOCKET") {
        if !s.is_empty() {
            let flag = if s.contains('/') { "-S" } else { "-L" };
            return vec![flag.into(), s];
        }
    }
    if let Ok(t) = std::env::var("TMUX") {
        if let Some(path) = t.split(',').next().filter(|p| !p.is_empty()) {
            return vec!["-S".into(), path.to_string()];
        }
    }
    vec![]
}

#[derive(Debug, Clone)]
pub struct Tmux {
    /// Leading args selecting the server: `["-S", path]` or `["-L", label]` or none.
    sel: Vec<String>,
}

impl Tmux {
    pub fn from_env() -> Self {
        Tmux { sel: server_args() }
    }

    /// A tmux selected by `sel` (`["-L", label]`, or none for the default server).
    #[cfg(test)]
    pub(crate) fn with_args(sel: &[&str]) -> Self {
        Tmux {
            sel: sel.iter().map(|s| s.to_string()).collect(),
        }
    }

    /// The socket path tmux would use for this selection, whether or not a server runs there:
    /// `-S path` as is, `-L label` (or none: `default`) under `$TMUX_TMPDIR` (else `/tmp`)
    /// `/tmux-<uid>/`, resolved the way tmux resolves it.
    pub fn socket_path(&self) -> String {
        match self.sel.as_slice() {
            [f, p] if f == "-S" => p.clone(),
            sel => {
                let label = match sel {
                    [f, l] if f == "-L" => l.as_str(),
                    _ => "default",
                };
                let base = std::env::var("TMUX_TMPDIR")
                    .ok()
                    .filter(|d| !d.is_empty())
                    .unwrap_or_else(|| "/tmp".into());
                let base = std::fs::canonicalize(&base)
                    .map(|p| p.to_string_lossy().into_owned())
                    .unwrap_or(base);
                // SAFETY: getuid has no preconditions.
                let uid = unsafe { libc::getuid() };
                format!("{}/tmux-{uid}/{label}", base.trim_end_matches('/'))
            }
        }
    }

    fn run_owned(&self, a: &[String]) -> Result<String, MuxError> {
        let refs: Vec<&str> = a.iter().map(|s| s.as_str()).collect();
        self.run(&refs)
    }

    /// One tmux client for up to a batch of panes (see `capture_many`).
    fn capture_batch(&self, reqs: &[(String, bool)]) -> Vec<Option<String>> {
        if reqs.len() < 2 {
            return reqs.iter().map(|(p, e)| self.capture(p, *e).ok()).collect();
        }
        // One tmux client for every pane: captures separated by a marker line no screen contains.
        let marker = marker();
        let mut args: Vec<&str> = vec![];
        for (i, (pane, esc)) in reqs.iter().enumerate() {
            if i > 0 {
                args.extend([";", "display-message", "-p", marker.as_str()]);
                args.push(";");
            }
            args.extend(["capture-pane", "-p", "-J", "-t", pane.as_str()]);
            if *esc {
                args.push("-e");
            }
        }
        match self.run(&args) {
            Ok(out) => {
                let sep = format!("{marker}\n");
                let parts: Vec<String> = out.split(sep.as_str()).map(str::to_string).collect();
                if parts.len() == reqs.len() {
                    return parts.into_iter().map(Some).collect();
                }
                reqs.iter().map(|(p, e)| self.capture(p, *e).ok()).collect()
            }
            // A pane vanished mid-list: fall back to one call per pane.
            Err(_) => reqs.iter().map(|(p, e)| self.capture(p, *e).ok()).collect(),
        }
    }

    /// Runs a tmux command script (`source-file -`: one client, read from stdin, so no command-line
    /// size limit). A command of the script that fails does not stop the ones after it; its error
    /// goes to stderr and the exit status is 1, so only a failure to reach the server is an error.
    fn run_script(&self, script: &str) -> Result<String, MuxError> {
        use std::io::Write;
        let mut child = Command::new("tmux")
            .args(&self.sel)
            .args(["source-file", "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| MuxError::Unreachable("tmux", e.to_string()))?;
        // The script is small next to a pipe buffer, but write from a thread anyway so a tmux that
        // answers before reading everything can never deadlock us.
        let mut stdin = child.stdin.take();
        let script = script.to_string();
        let writer = std::thread::spawn(move || {
            if let Some(w) = stdin.as_mut() {
                let _ = w.write_all(script.as_bytes());
            }
        });
        let out = child
            .wait_with_output()
            .map_err(|e| MuxError::Unreachable("tmux", e.to_string()))?;
        let _ = writer.join();
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr).trim().to_string();
            if unreachable(&err) {
                return Err(MuxError::Unreachable("tmux", err));
            }
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// A server was named (`PARK_TMUX_SOCKET` or `$TMUX`), rather than tmux's default one.
    pub fn explicit(&self) -> bool {
        !self.sel.is_empty()
    }

    fn run(&self, args: &[&str]) -> Result<String, MuxError> {
        let out = Command::new("tmux")
            .args(&self.sel)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| MuxError::Unreachable("tmux", e.to_string()))?;
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr).trim().to_string();
            if unreachable(&err) {
                return Err(MuxError::Unreachable("tmux", err));
            }
            return Err(MuxError::Command(format!(
                "tmux {}: {}",
                args.first().unwrap_or(&""),
                err
            )));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

/// tmux's words for "there is no server to talk to".
fn unreachable(stderr: &str) -> bool {
    stderr.contains("no server running")
        || stderr.contains("error connecting")
        || stderr.contains("No such file")
}

fn list_format() -> String {
    let fmt: Vec<String> = FIELDS.iter().map(|f| format!("#{{{f}}}")).collect();
    fmt.join(&SEP.to_string())
}

/// Parses a whole `list-panes -F` answer: every line, or an error (a partial map is no map).
fn parse_pane_list(out: &str) -> Result<Vec<Pane>, MuxError> {
    let mut panes = vec![];
    for line in out.lines().filter(|l| !l.is_empty()) {
        // A title may contain a newline-free but separator-bearing string; anything unparsable
        // means the map is not trustworthy.
        match parse_pane_line(line) {
            Some(p) => panes.push(p),
            None => {
                return Err(MuxError::Partial(format!(
                    "unparsable list-panes line: {line:?}"
                )))
            }
        }
    }
    Ok(panes)
}

/// A tmux pane id as `TMUX_PANE` carries it (`%` and digits). Only these go into a command script:
/// the ids come from processes' environments, which anyone can set to `%1; kill-server`.
pub(crate) fn is_pane_id(s: &str) -> bool {
    s.len() > 1 && s.len() <= 11 && s.starts_with('%') && s[1..].bytes().all(|b| b.is_ascii_digit())
}

/// The `source-file` script of one scan: the pane list, then each capture after a marker line.
/// Pure. Ids that are not plain pane ids are left out (the caller captures them on their own).
pub(crate) fn snapshot_script(
    marker: &str,
    want: &[(String, bool)],
) -> (String, Vec<(String, bool)>) {
    let mut script = format!("list-panes -a -F '{}'\n", list_format());
    let mut asked = vec![];
    for (id, esc) in want.iter().filter(|(id, _)| is_pane_id(id)) {
        script.push_str(&format!("display-message -p '{marker}'\n"));
        script.push_str(&format!(
            "capture-pane -p -J{} -t '{id}'\n",
            if *esc { " -e" } else { "" }
        ));
        asked.push((id.clone(), *esc));
    }
    (script, asked)
}

/// Splits one snapshot answer: the pane-list text, then one capture per asked pane. An empty
/// capture is a pane that was gone (tmux printed its error and went on): a screen always has at
/// least one line. `None` when the answer does not have the shape asked for.
pub(crate) fn split_snapshot(
    out: &str,
    marker: &str,
    asked: usize,
) -> Option<(String, Vec<Option<String>>)> {
    let sep = format!("{marker}\n");
    let mut parts = out.split(sep.as_str());
    let list = parts.next()?.to_string();
    let caps: Vec<Option<String>> = parts
        .map(|c| Some(c.to_string()).filter(|c| !c.is_empty()))
        .collect();
    (caps.len() == asked).then_some((list, caps))
}

/// Parses one `list-panes -F` line. Pure, for tests with real captured output.
pub fn parse_pane_line(line: &str) -> Option<Pane> {
    let f: Vec<&str> = line.split(SEP).collect();
    if f.len() != FIELDS.len() || !f[0].starts_with('%') {
        return None;
    }
    Some(Pane {
        id: f[0].to_string(),
        pid: f[1].parse().ok()?,
        tty: f[2].to_string(),
        cwd: f[3].to_string(),
        title: f[4].to_string(),
        session: f[5].to_string(),
        window_index: f[6].parse().ok()?,
        window_name: f[7].to_string(),
        pane_index: f[8].parse().ok()?,
        current_command: f[9].to_string(),
        dead: f[10] == "1",
        alternate_on: f[11] == "1",
        pill: f[12].to_string(),
        server: f[13].to_string(),
        in_mode: f[14] == "1",
        position: f[8].parse().ok()?,
    })
}

/// The panes of `#{pane_id} #{window_active} #{session_attached}` lines that someone can see: the
/// active window of a session with at least one client. Pure, for tests.
pub fn parse_visible(out: &str) -> Vec<String> {
    out.lines()
        .filter_map(|l| {
            let mut f = l.split(' ');
            let (id, active, attached) = (f.next()?, f.next()?, f.next()?);
            let seen = active == "1" && attached.parse::<u32>().is_ok_and(|n| n > 0);
            (seen && is_pane_id(id)).then(|| id.to_string())
        })
        .collect()
}

/// A line no screen contains, to split one client's answer into its commands' outputs.
fn marker() -> String {
    format!(
        "park-split-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
    )
}

fn hex(text: &str) -> Vec<String> {
    text.bytes().map(|b| format!("{b:02x}")).collect()
}

/// The window option a window built by `park rebuild` carries until its sessions are re-pointed.
const BUILDING: &str = "@park-building";

/// The tmux command a `confirm-before` yes runs: `shell` in the background. tmux parses it as a
/// command (a double-quoted word: `\`, `"` and `$` escaped) and run-shell expands formats in it
/// (`#` doubled).
fn confirm_command(shell: &str) -> String {
    let mut q = String::new();
    for c in shell.chars() {
        match c {
            '\\' | '"' | '$' => {
                q.push('\\');
                q.push(c);
            }
            '#' => q.push_str("##"),
            c => q.push(c),
        }
    }
    format!("run-shell -b \"{q}\"")
}

impl Mux for Tmux {
    fn kind(&self) -> &'static str {
        "tmux"
    }

    fn server_id(&self) -> Result<String, MuxError> {
        Ok(self
            .run(&["display-message", "-p", "#{socket_path}"])?
            .trim()
            .to_string())
    }

    fn list_panes(&self) -> Result<Vec<Pane>, MuxError> {
        parse_pane_list(&self.run(&["list-panes", "-a", "-F", &list_format()])?)
    }

    fn visible(&self, _panes: &[Pane]) -> Result<Vec<String>, MuxError> {
        Ok(parse_visible(&self.run(&[
            "list-panes",
            "-a",
            "-F",
            "#{pane_id} #{window_active} #{session_attached}",
        ])?))
    }

    /// One tmux client for the whole scan: the pane list and every capture in one command script,
    /// which tmux runs in one go, so the map and the screens are of the same instant. Falls back to
    /// a list call plus capture calls when the answer is not what was asked (an older tmux).
    fn snapshot(
        &self,
        _procs: &[crate::adapters::platform::ProcInfo],
        want: &[(String, bool)],
    ) -> Snapshot {
        let marker = marker();
        let (script, asked) = snapshot_script(&marker, want);
        let split = match self.run_script(&script) {
            Ok(out) => split_snapshot(&out, &marker, asked.len()),
            Err(e) => {
                return Snapshot {
                    panes: Err(e),
                    screens: Default::default(),
                }
            }
        };
        let Some((list, caps)) = split else {
            let panes = self.list_panes();
            let screens = super::screens_of(self, panes.as_ref().ok(), want);
            return Snapshot { panes, screens };
        };
        let panes = parse_pane_list(&list);
        let mut screens: std::collections::HashMap<String, String> = asked
            .into_iter()
            .zip(caps)
            .filter_map(|((id, _), c)| Some((id, c?)))
            .collect();
        // Ids the script could not carry: on their own (they are in the map, or they are skipped).
        let rest: Vec<(String, bool)> = want
            .iter()
            .filter(|(id, _)| !is_pane_id(id))
            .cloned()
            .collect();
        if !rest.is_empty() {
            screens.extend(super::screens_of(self, panes.as_ref().ok(), &rest));
        }
        Snapshot { panes, screens }
    }

    fn capture(&self, pane: &str, escapes: bool) -> Result<String, MuxError> {
        let mut a = vec!["capture-pane", "-p", "-J", "-t", pane];
        if escapes {
            a.push("-e");
        }
        self.run(&a)
    }

    fn capture_many(&self, reqs: &[(String, bool)]) -> Vec<Option<String>> {
        // A tmux client hands its whole command line to the server in one message (at most
        // ~16 KiB): batch, or 200 panes overflow it and every capture falls back to its own call.
        const BATCH: usize = 40;
        if reqs.len() > BATCH {
            // The batches are independent tmux clients: run them side by side.
            return std::thread::scope(|sc| {
                let hs: Vec<_> = reqs
                    .chunks(BATCH)
                    .map(|c| sc.spawn(move || self.capture_batch(c)))
                    .collect();
                hs.into_iter()
                    .flat_map(|h| h.join().unwrap_or_default())
                    .collect()
            });
        }
        self.capture_batch(reqs)
    }

    fn send_text(&self, pane: &str, text: &str) -> Result<(), MuxError> {
        if text.is_empty() {
            return Ok(());
        }
        let h = hex(text);
        let mut a: Vec<&str> = vec!["send-keys", "-t", pane, "-H"];
        a.extend(h.iter().map(|s| s.as_str()));
        self.run(&a).map(|_| ())
    }

    fn send_keys(&self, pane: &str, keys: &[&str]) -> Result<(), MuxError> {
        let mut a: Vec<&str> = vec!["send-keys", "-t", pane];
        a.extend_from_slice(keys);
        self.run(&a).map(|_| ())
    }

    fn leave_mode(&self, pane: &str) -> Result<(), MuxError> {
        self.run(&["copy-mode", "-q", "-t", pane]).map(|_| ())
    }

    fn set_pane_option(&self, pane: &str, key: &str, value: Option<&str>) -> Result<(), MuxError> {
        match value {
            Some(v) => self.run(&["set-option", "-p", "-t", pane, key, v]),
            None => self.run(&["set-option", "-p", "-u", "-t", pane, key]),
        }
        .map(|_| ())
    }

    fn pane_option(&self, pane: &str, key: &str) -> Result<Option<String>, MuxError> {
        let v = self.run(&["show-options", "-p", "-q", "-v", "-t", pane, key])?;
        let v = v.trim_end_matches('\n');
        Ok(if v.is_empty() {
            None
        } else {
            Some(v.to_string())
        })
    }

    fn global_option(&self, key: &str) -> Result<Option<String>, MuxError> {
        let v = self.run(&["show-options", "-gqv", key])?;
        let v = v.trim_end_matches('\n');
        Ok((!v.is_empty()).then(|| v.to_string()))
    }

    fn set_global_option(&self, key: &str, value: Option<&str>) -> Result<(), MuxError> {
        match value {
            Some(v) => self.run(&["set-option", "-g", key, v]),
            None => self.run(&["set-option", "-g", "-u", key]),
        }
        .map(|_| ())
    }

    fn notify(&self, text: &str) {
        let off = self
            .run(&["show-options", "-gqv", "@park-auto-notify"])
            .is_ok_and(|v| v.trim() == "off");
        if off {
            return;
        }
        let Ok(clients) = self.run(&["list-clients", "-F", "#{client_name}"]) else {
            return;
        };
        // display-message expands formats: a literal `#` is `##`.
        let msg = text.replace('#', "##");
        for c in clients.lines().filter(|c| !c.is_empty()) {
            let _ = self.run(&["display-message", "-c", c, "-d", "8000", &msg]);
        }
    }

    fn ask(&self, client: Option<&str>, question: &str, yes: &[String]) {
        let client = match client {
            Some(c) => c.to_string(),
            None => match self.run(&["list-clients", "-F", "#{client_name}"]) {
                Ok(l) => match l.lines().find(|c| !c.is_empty()) {
                    Some(c) => c.to_string(),
                    None => return,
                },
                Err(_) => return,
            },
        };
        let Ok(shell) = shlex::try_join(yes.iter().map(String::as_str)) else {
            return;
        };
        // run-shell shows a command's output in the client (view mode): park tells the clients
        // itself.
        let shell = format!("{shell} >/dev/null 2>&1");
        // -b: the prompt stays up in the background; without it tmux holds this command (and
        // the park that runs it) until the person answers.
        let _ = self.run(&[
            "confirm-before",
            "-b",
            "-t",
            &client,
            "-p",
            &format!("{} (y/n) ", question.replace('#', "##")),
            &confirm_command(&shell),
        ]);
    }

    fn window_option_all(&self, key: &str) -> Result<Vec<(String, String, u32, String)>, MuxError> {
        let fmt =
            format!("#{{window_id}}{SEP}#{{session_name}}{SEP}#{{window_index}}{SEP}#{{{key}}}");
        let out = self.run(&["list-windows", "-a", "-F", &fmt])?;
        Ok(out
            .lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split(SEP).collect();
                (f.len() == 4).then(|| {
                    (
                        f[0].to_string(),
                        f[1].to_string(),
                        f[2].parse().unwrap_or(u32::MAX),
                        f[3].to_string(),
                    )
                })
            })
            .collect())
    }

    fn set_window_option(
        &self,
        window: &str,
        key: &str,
        value: Option<&str>,
    ) -> Result<(), MuxError> {
        match value {
            Some(v) => self.run(&["set-option", "-w", "-t", window, key, v]),
            None => self.run(&["set-option", "-w", "-u", "-t", window, key]),
        }
        .map(|_| ())
    }

    fn set_title(&self, pane: &str, title: &str) -> Result<(), MuxError> {
        self.run(&["select-pane", "-t", pane, "-T", title])
            .map(|_| ())
    }

    fn respawn(
        &self,
        pane: &str,
        cwd: &str,
        env: &[(String, String)],
        argv: &[String],
    ) -> Result<(), MuxError> {
        let mut a: Vec<String> = vec![
            "respawn-pane".into(),
            "-k".into(),
            "-t".into(),
            pane.into(),
            "-c".into(),
            cwd.into(),
        ];
        for (k, v) in env {
            a.push("-e".into());
            a.push(format!("{k}={v}"));
        }
        a.extend(argv.iter().cloned());
        let refs: Vec<&str> = a.iter().map(|s| s.as_str()).collect();
        self.run(&refs).map(|_| ())
    }

    fn home_server(&self) -> Option<String> {
        self.server_id().ok().or_else(|| Some(self.socket_path()))
    }

    fn window_layouts(&self) -> Result<Vec<super::WindowLayout>, MuxError> {
        let out = self.run(&[
            "list-windows",
            "-a",
            "-F",
            &format!(
                "#{{session_name}}{SEP}#{{window_index}}{SEP}#{{window_layout}}{SEP}#{{window_width}}{SEP}#{{window_height}}"
            ),
        ])?;
        Ok(out
            .lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split(SEP).collect();
                match f.as_slice() {
                    [s, i, l, w, h] => Some(super::WindowLayout {
                        session: s.to_string(),
                        window_index: i.parse().ok()?,
                        layout: l.to_string(),
                        width: w.parse().unwrap_or(0),
                        height: h.parse().unwrap_or(0),
                    }),
                    _ => None,
                }
            })
            .collect())
    }

    fn window_layout(
        &self,
        session: &str,
        window_index: u32,
    ) -> Result<(String, u32, u32), MuxError> {
        let out = self.run(&[
            "display-message",
            "-p",
            "-t",
            &format!("={session}:{window_index}"),
            &format!("#{{window_layout}}{SEP}#{{window_width}}{SEP}#{{window_height}}"),
        ])?;
        let f: Vec<&str> = out.trim_end().split(SEP).collect();
        match f.as_slice() {
            [l, w, h] if !l.is_empty() => Ok((
                l.to_string(),
                w.parse().unwrap_or(0),
                h.parse().unwrap_or(0),
            )),
            _ => Err(MuxError::Command(format!(
                "no layout for {session}:{window_index}"
            ))),
        }
    }

    fn build_window(&self, spec: &WindowSpec) -> Result<BuiltWindow, MuxError> {
        let Some((cwd0, rest)) = spec.cwds.split_first() else {
            return Err(MuxError::Command("a window needs at least one pane".into()));
        };
        let envs: Vec<String> = spec
            .env
            .iter()
            .flat_map(|(k, v)| ["-e".to_string(), format!("{k}={v}")])
            .collect();
        let fmt = format!("#{{pane_id}}{SEP}#{{window_index}}");
        let parse = |out: String| -> Result<(String, u32), MuxError> {
            let line = out.trim_end().to_string();
            let (p, i) = line
                .split_once(SEP)
                .ok_or_else(|| MuxError::Command(format!("unexpected tmux reply {line:?}")))?;
            Ok((p.to_string(), i.parse().unwrap_or(u32::MAX)))
        };
        let mut notes = vec![];
        let session_exists = self
            .run(&["has-session", "-t", &format!("={}", spec.session)])
            .is_ok();
        let (first, index) = if session_exists {
            let mut a: Vec<String> = vec![
                "new-window".into(),
                "-d".into(),
                "-t".into(),
                format!("={}:{}", spec.session, spec.window_index),
                "-n".into(),
                spec.window_name.clone(),
                "-c".into(),
                cwd0.clone(),
                "-P".into(),
                "-F".into(),
                fmt.clone(),
            ];
            a.extend(envs.iter().cloned());
            match self.run_owned(&a) {
                Ok(out) => parse(out)?,
                Err(MuxError::Command(why)) => {
                    // The index is taken (by a window made since): append instead, and say so.
                    a[3] = format!("={}:", spec.session);
                    let got = parse(self.run_owned(&a)?)?;
                    notes.push(format!(
                        "window index {} was not free ({why}); the window is at index {}",
                        spec.window_index, got.1
                    ));
                    got
                }
                Err(e) => return Err(e),
            }
        } else {
            let mut a: Vec<String> = vec![
                "new-session".into(),
                "-d".into(),
                "-s".into(),
                spec.session.clone(),
                "-n".into(),
                spec.window_name.clone(),
                "-c".into(),
                cwd0.clone(),
                "-P".into(),
                "-F".into(),
                fmt.clone(),
            ];
            if spec.width > 0 && spec.height > 0 {
                a.extend([
                    "-x".into(),
                    spec.width.to_string(),
                    "-y".into(),
                    spec.height.to_string(),
                ]);
            }
            a.extend(envs.iter().cloned());
            let (p, i) = parse(self.run_owned(&a)?)?;
            if i == spec.window_index {
                (p, i)
            } else {
                let moved = self.run(&[
                    "move-window",
                    "-s",
                    &format!("={}:{i}", spec.session),
                    "-t",
                    &format!("={}:{}", spec.session, spec.window_index),
                ]);
                match moved {
                    Ok(_) => (p, spec.window_index),
                    Err(e) => {
                        notes.push(format!(
                            "could not move the window to index {}: {e}",
                            spec.window_index
                        ));
                        (p, i)
                    }
                }
            }
        };
        // Flagged until the rebuild has re-pointed its sessions at the new panes: a rebuild
        // stopped before that leaves a window nothing points at, which the next one closes.
        let _ = self.run(&["set-option", "-w", "-t", &first, BUILDING, "1"]);
        let mut panes = vec![first.clone()];
        for cwd in rest {
            // Split the last pane: tmux puts the new pane right after its target, so the panes
            // end up in slot order; tiling after each split keeps room for the next one.
            let mut a: Vec<String> = vec![
                "split-window".into(),
                "-d".into(),
                "-t".into(),
                panes.last().cloned().unwrap_or_default(),
                "-c".into(),
                cwd.clone(),
                "-P".into(),
                "-F".into(),
                "#{pane_id}".into(),
            ];
            a.extend(envs.iter().cloned());
            let p = self.run_owned(&a)?.trim().to_string();
            panes.push(p);
            let _ = self.run(&["select-layout", "-t", &first, "tiled"]);
        }
        match &spec.layout {
            Some(l) => {
                if let Err(e) = self.run(&["select-layout", "-t", &first, l]) {
                    notes.push(format!(
                        "the recorded layout did not apply ({e}); panes are tiled"
                    ));
                }
            }
            None if panes.len() > 1 => notes.push("no layout was recorded; panes are tiled".into()),
            None => {}
        }
        // Each split went right after the pane before it, so creation order is pane order, which
        // the layout was applied to. Check it rather than assume it.
        let order = self.run(&["list-panes", "-t", &first, "-F", "#{pane_id}"])?;
        let listed: Vec<String> = order.lines().map(str::to_string).collect();
        if listed != panes {
            notes.push(format!(
                "pane order is {listed:?}, not the creation order {panes:?}; slots follow creation"
            ));
        }
        Ok(BuiltWindow {
            window_index: index,
            panes,
            notes,
        })
    }

    fn kill_window(&self, window: &str) -> Result<(), MuxError> {
        self.run(&["kill-window", "-t", window]).map(|_| ())
    }

    fn finish_build(&self, pane: &str) {
        let _ = self.run(&["set-option", "-w", "-u", "-t", pane, BUILDING]);
    }

    fn unfinished_builds(&self) -> Result<Vec<(String, String, u32)>, MuxError> {
        Ok(self
            .window_option_all(BUILDING)?
            .into_iter()
            .filter(|(_, _, _, v)| !v.is_empty())
            .map(|(w, s, i, _)| (w, s, i))
            .collect())
    }

    fn new_window(
        &self,
        _server: &str,
        session: &str,
        name: &str,
        cwd: &str,
        env: &[(String, String)],
        argv: &[String],
    ) -> Result<String, MuxError> {
        let exists = self
            .run(&["has-session", "-t", &format!("={session}")])
            .is_ok();
        let mut a: Vec<String> = if exists {
            vec![
                "new-window".into(),
                "-d".into(),
                "-t".into(),
                format!("={session}:"),
                "-P".into(),
                "-F".into(),
                "#{pane_id}".into(),
            ]
        } else {
            vec![
                "new-session".into(),
                "-d".into(),
                "-s".into(),
                session.into(),
                "-P".into(),
                "-F".into(),
                "#{pane_id}".into(),
            ]
        };
        if !name.is_empty() {
            a.push("-n".into());
            a.push(name.into());
        }
        a.push("-c".into());
        a.push(cwd.into());
        for (k, v) in env {
            a.push("-e".into());
            a.push(format!("{k}={v}"));
        }
        a.extend(argv.iter().cloned());
        let refs: Vec<&str> = a.iter().map(|s| s.as_str()).collect();
        Ok(self.run(&refs)?.trim().to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_active_window_of_an_attached_session_is_visible() {
        let out = "%1 1 1\n%2 0 1\n%3 1 0\n%4 1 2\n%x;kill 1 1\n";
        assert_eq!(parse_visible(out), vec!["%1".to_string(), "%4".to_string()]);
    }

    #[test]
    fn parses_a_real_line_and_rejects_short_ones() {
        let l = [
            "%1",
            "9351",
            "/dev/pts/6",
            "/usr/share",
            "✳ Fix: a;b",
            "t1",
            "0",
            "bash",
            "1",
            "bash",
            "0",
            "1",
            "",
            "/tmp/tmux-0/default",
            "0",
        ]
        .join("\u{1f}");
        let p = parse_pane_line(&l).unwrap();
        assert_eq!(p.id, "%1");
        assert_eq!(p.pid, 9351);
        assert_eq!(p.title, "✳ Fix: a;b");
        assert!(p.alternate_on && !p.dead);
        assert!(parse_pane_line("%1\u{1f}9351").is_none());
        assert!(parse_pane_line(&l.replace("%1", "x")).is_none());
    }

    #[test]
    fn snapshot_script_carries_only_plain_pane_ids_and_splits_back() {
        let want = vec![
            ("%3".to_string(), false),
            ("%1; kill-server".to_string(), false),
            ("%12".to_string(), true),
            ("terminal_1@main".to_string(), false),
        ];
        let (script, asked) = snapshot_script("M-1", &want);
        assert_eq!(
            asked,
            vec![("%3".to_string(), false), ("%12".to_string(), true)]
        );
        assert!(!script.contains("kill-server"), "{script}");
        assert!(
            script.contains("capture-pane -p -J -e -t '%12'"),
            "{script}"
        );
        assert_eq!(script.lines().count(), 5);
        // A vanished pane prints nothing between its markers: absent, not an empty screen.
        let (list, caps) = split_snapshot("%3 a\n%12 b\nM-1\nM-1\nscreen\n\n", "M-1", 2).unwrap();
        assert_eq!(list, "%3 a\n%12 b\n");
        assert_eq!(caps, vec![None, Some("screen\n\n".to_string())]);
        assert!(split_snapshot("%3 a\nM-1\nx\n", "M-1", 2).is_none());
        assert!(!is_pane_id("%") && !is_pane_id("3") && !is_pane_id("%3a") && is_pane_id("%0"));
    }

    #[test]
    fn hex_typing_covers_separators() {
        assert_eq!(hex("a;"), vec!["61", "3b"]);
    }
}
