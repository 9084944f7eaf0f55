//! The plugin's pure state: permissions, the picker (the shared `park_protocol::picker::App`), the
//! status strip, and the park commands to run. No zellij calls here: [`Plugin`] takes decoded
//! inputs and returns [`Cmd`]s that `main.rs` carries out, so all of it is tested on the host.
//!
//! Contract: nothing runs before permissions are granted (work is queued and replayed); a denial
//! leaves one line saying what to grant. Every park call is `park … --json`; its output is parsed
//! with the shared types, anything else becomes a readable error line.

use park_protocol::picker::{Action, App, JobResult, Key, Op};
use park_protocol::{ActionOutput, LsOutput, StatusSummary};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Picker,
    Strip,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Perm {
    Pending,
    Granted,
    Denied,
}

/// What `main.rs` must do.
#[derive(Debug, Clone, PartialEq)]
pub enum Cmd {
    /// Run `park_bin args…`; the result comes back through [`Plugin::command_done`] with `ctx`.
    Run {
        args: Vec<String>,
        ctx: BTreeMap<String, String>,
    },
    FocusTerminal(u32),
    Close,
    Timer(f64),
    Selectable(bool),
}

/// What the plugin still has to do once permissions arrive.
#[derive(Debug, Clone, PartialEq)]
enum Queued {
    Start,
    ParkFocused,
}

pub struct Plugin {
    pub mode: Mode,
    pub park_bin: String,
    pub poll_secs: f64,
    pub perm: Perm,
    pub app: App,
    pub session: Option<String>,
    /// The focused terminal pane of this client (zellij pane id).
    pub focused: Option<u32>,
    /// This instance's own tab (position) and its terminal panes, from the last pane manifest it
    /// got. zellij sends pane and tab updates only to the plugins of the active tab, so a strip
    /// in a background tab keeps the state of when its tab was last active.
    pub own_tab: Option<(usize, Vec<u32>)>,
    /// The client's focus read live when `park:park-focused` arrived: (tab position, focused
    /// terminal pane or none). The keybinding reaches every strip of every tab; only the strip
    /// whose own tab holds that pane may act.
    pub live_focus: Option<(usize, Option<u32>)>,
    pub summary: Option<StatusSummary>,
    /// A short result line the strip shows instead of the count, and how many ticks it has left.
    pub flash: Option<(String, u32)>,
    /// Whether the strip asks park, once it loads, to give this session's held parked panes back
    /// their parked prompts (config `revive_held`, on unless "false"): after a resurrection
    /// zellij shows a parked `zellij run` pane as "Waiting to run", where Enter would start a
    /// fresh agent in the parked slot.
    pub revive_held: bool,
    revive_sent: bool,
    queue: Vec<Queued>,
    since_scan: f64,
    started: bool,
}

pub const JOB: &str = "park_job";

impl Plugin {
    pub fn new(config: &BTreeMap<String, String>) -> Plugin {
        let mode = match config.get("mode").map(String::as_str) {
            Some("strip") => Mode::Strip,
            _ => Mode::Picker,
        };
        let mut app = App::new(None, None);
        // The picker's background rescan period (`rescan_secs`, at least 5 s).
        if let Some(s) = config
            .get("rescan_secs")
            .and_then(|s| s.parse::<u64>().ok())
            .filter(|s| *s >= 5)
        {
            app.background = std::time::Duration::from_secs(s);
        }
        Plugin {
            mode,
            park_bin: config
                .get("park_bin")
                .cloned()
                .unwrap_or_else(|| "park".into()),
            poll_secs: config
                .get("poll_secs")
                .and_then(|s| s.parse().ok())
                .filter(|s: &f64| *s >= 1.0)
                .unwrap_or(10.0),
            perm: Perm::Pending,
            app,
            session: None,
            focused: None,
            own_tab: None,
            live_focus: None,
            summary: None,
            flash: None,
            revive_held: config.get("revive_held").map(String::as_str) != Some("false"),
            revive_sent: false,
            queue: vec![Queued::Start],
            since_scan: 0.0,
            started: false,
        }
    }

    fn run(&self, args: &[&str], job: &str) -> Cmd {
        let mut ctx = BTreeMap::new();
        ctx.insert(JOB.to_string(), job.to_string());
        Cmd::Run {
            args: std::iter::once(self.park_bin.clone())
                .chain(args.iter().map(|s| s.to_string()))
                .collect(),
            ctx,
        }
    }

    pub fn handle(&self, id: u32) -> Option<String> {
        Some(format!("terminal_{id}@{}", self.session.as_ref()?))
    }

    pub fn permissions(&mut self, granted: bool) -> Vec<Cmd> {
        if !granted {
            self.perm = Perm::Denied;
            return vec![];
        }
        self.perm = Perm::Granted;
        let mut out = vec![];
        if self.mode == Mode::Strip {
            out.push(Cmd::Selectable(false));
        }
        for q in std::mem::take(&mut self.queue) {
            out.extend(self.replay(q));
        }
        out.extend(self.revive());
        out
    }

    /// Once per strip, as soon as it may run park and knows its session: `park rebuild
    /// --no-resume --session <s>` re-points the session's parked entries zellij renumbered and
    /// turns their held panes into their parked prompts (ESC, never Enter). It starts no agent;
    /// with nothing moved it changes nothing. Strips of other tabs run it too: park's rebuild
    /// lock makes the later ones find the work done.
    ///
    /// Then (or alone, with `revive_held` off) `park rebuild --on-attach`: what `[journal]
    /// restore` says about sessions lost with the previous zellij (nothing unless the user asked
    /// for "ask" or "auto"; park's answer reaches the strip as a notice).
    fn revive(&mut self) -> Vec<Cmd> {
        if self.mode != Mode::Strip || self.revive_sent || self.perm != Perm::Granted {
            return vec![];
        }
        let Some(s) = self.session.clone() else {
            return vec![];
        };
        self.revive_sent = true;
        if !self.revive_held {
            return vec![self.on_attach()];
        }
        vec![self.run(
            &["rebuild", "--no-resume", "--session", &s, "--json"],
            "revive",
        )]
    }

    fn on_attach(&self) -> Cmd {
        self.run(&["rebuild", "--on-attach"], "attach")
    }

    fn replay(&mut self, q: Queued) -> Vec<Cmd> {
        match q {
            Queued::Start if !self.started => {
                self.started = true;
                match self.mode {
                    Mode::Picker => vec![self.run(&["ls", "--json"], "ls"), Cmd::Timer(1.0)],
                    Mode::Strip => vec![self.run(&["status", "--json"], "status"), Cmd::Timer(1.0)],
                }
            }
            Queued::Start => vec![],
            Queued::ParkFocused => match self.target_of_key() {
                Err(None) => vec![],
                Err(Some(why)) => {
                    self.flash = Some((why, 5));
                    vec![]
                }
                Ok(id) => match self.handle(id) {
                    Some(h) => {
                        self.flash = Some((format!("❄ parking {h}…"), 30));
                        vec![self.run(&["park", &h, "--json"], &format!("park:{h}"))]
                    }
                    None => vec![],
                },
            },
        }
    }

    /// The pane `park:park-focused` asks this instance to park: `Err(None)` when it is another
    /// tab's strip's to act on (say nothing), `Err(Some(why))` when nothing can be parked.
    fn target_of_key(&self) -> Result<u32, Option<String>> {
        let none = || Some("park: no focused terminal pane".to_string());
        match (self.mode, self.live_focus.as_ref(), self.own_tab.as_ref()) {
            (Mode::Strip, Some((tab, pane)), Some((own, panes))) => {
                if tab != own {
                    return Err(None);
                }
                match pane {
                    Some(p) if panes.contains(p) => Ok(*p),
                    Some(_) => Err(None),
                    None => Err(none()),
                }
            }
            // Without the live focus (an older host) or before the first manifest, the strip
            // cannot tell whose key it was: it acts on nothing rather than on a stale pane.
            (Mode::Strip, _, _) => Err(Some(
                "park: cannot tell which pane is focused; use the picker (Alt z)".into(),
            )),
            _ => self.focused.ok_or_else(none),
        }
    }

    fn gate(&mut self, q: Queued) -> Vec<Cmd> {
        match self.perm {
            Perm::Granted => self.replay(q),
            Perm::Pending => {
                self.queue.push(q);
                vec![]
            }
            Perm::Denied => vec![],
        }
    }

    pub fn session_name(&mut self, name: Option<String>) -> Vec<Cmd> {
        if name.is_some() {
            self.session = name;
        }
        self.tell_opened_on();
        self.revive()
    }

    /// The session's name as a command this plugin ran reports it (`park ls --json`'s
    /// `session`: the zellij server's `ZELLIJ_SESSION_NAME`, which its plugins' commands
    /// inherit). zellij names the session in `ModeUpdate`, but a plugin opened under load can
    /// miss the one sent as it loads (CI: a picker never learned its session, so it neither
    /// preselected nor closed on its pane). Taken only while no `ModeUpdate` has named it.
    pub fn session_from_env(&mut self, name: Option<String>) -> Vec<Cmd> {
        match name.filter(|n| !n.is_empty()) {
            Some(n) if self.session.is_none() => self.session_name(Some(n)),
            _ => vec![],
        }
    }

    /// Where this instance is: its tab's position and terminal panes (from the pane manifest).
    pub fn own_tab(&mut self, tab: Option<(usize, Vec<u32>)>) {
        if tab.is_some() {
            self.own_tab = tab;
        }
    }

    /// The client's focused terminal pane changed (from the pane manifest).
    pub fn focus(&mut self, pane: Option<u32>) {
        if pane.is_some() {
            self.focused = pane;
            self.tell_opened_on();
        }
    }

    /// A picker's pane is the terminal focused under it when it opened; it needs both that pane
    /// and the session's name, which arrive in separate events in any order, possibly after the
    /// first scan. The first pane known wins: a later focus change (`f`) is not where it opened.
    fn tell_opened_on(&mut self) {
        if self.mode != Mode::Picker {
            return;
        }
        if let Some(h) = self.focused.and_then(|p| self.handle(p)) {
            self.app.opened_on(&h);
        }
    }

    /// A pipe message (keybinding or CLI); `None` payloads (the CLI's end-of-input) are ignored.
    pub fn pipe(&mut self, name: &str, payload: Option<&str>) -> (Vec<Cmd>, bool) {
        let Some(payload) = payload else {
            return (vec![], false);
        };
        match name {
            "park:status" => match serde_json::from_str::<StatusSummary>(payload) {
                Ok(s) => {
                    self.summary = Some(s);
                    (vec![], true)
                }
                Err(_) => (vec![], false),
            },
            // The autopilot's announcement of a pass that parked something.
            "park:notice" if self.mode == Mode::Strip => {
                self.flash = Some((payload.chars().take(200).collect(), 10));
                (vec![], true)
            }
            "park:park-focused" if self.mode == Mode::Strip => {
                (self.gate(Queued::ParkFocused), true)
            }
            _ => (vec![], false),
        }
    }

    pub fn key(&mut self, k: Key) -> Vec<Cmd> {
        if self.mode != Mode::Picker || self.perm != Perm::Granted {
            return if k == Key::Char('q') || k == Key::Esc {
                vec![Cmd::Close]
            } else {
                vec![]
            };
        }
        let a = self.app.key(k);
        self.act(a)
    }

    fn act(&mut self, a: Action) -> Vec<Cmd> {
        match a {
            Action::None => vec![],
            Action::Quit(_) => vec![Cmd::Close],
            Action::Toggle { pane, op } => {
                vec![self.run(
                    &[op.verb(), &pane, "--json"],
                    &format!("{}:{pane}", op.verb()),
                )]
            }
            Action::Rebuild => vec![self.run(
                &["rebuild", "--as-before", "--json"],
                &format!("rebuild:{}", park_protocol::picker::LOST),
            )],
            Action::Bulk { target, panes } => {
                // The suggestions are parked as the panes they are; a window by its target.
                let mut args: Vec<&str> = vec!["park"];
                if target == park_protocol::picker::SUGGESTED {
                    args.extend(panes.iter().map(String::as_str));
                } else {
                    args.push(&target);
                }
                args.extend(["--yes", "--json"]);
                vec![self.run(&args, &format!("bulk:{target}"))]
            }
            Action::Pin { session_id, on, .. } => vec![self.run(
                &[if on { "pin" } else { "unpin" }, &session_id],
                &format!("pin:{session_id}"),
            )],
            Action::Focus { pane } => {
                let here = self.session.as_deref();
                match pane
                    .strip_prefix("terminal_")
                    .and_then(|r| r.split_once('@'))
                    .filter(|(_, s)| Some(*s) == here)
                    .and_then(|(n, _)| n.parse().ok())
                {
                    Some(id) => vec![Cmd::FocusTerminal(id)],
                    None => {
                        self.app
                            .say(format!("{pane}: not a pane of this zellij session"), true);
                        vec![]
                    }
                }
            }
            Action::Rescan => {
                self.app.scanning = true;
                self.since_scan = 0.0;
                vec![self.run(&["ls", "--json"], "ls")]
            }
        }
    }

    /// The strip's revive finished: say what came back (nothing when nothing moved).
    fn revived(&mut self, stdout: &[u8], err_line: impl Fn() -> String) -> Vec<Cmd> {
        let out = match serde_json::from_slice::<park_protocol::reports::RebuildOutput>(stdout) {
            Ok(o) => o,
            Err(_) => {
                self.flash = Some((format!("park rebuild: {}", err_line()), 10));
                return vec![];
            }
        };
        let back = out
            .relocated
            .iter()
            .filter(|r| r.outcome == "rebuilt" && r.reason.is_none())
            .count();
        let trouble: Vec<String> = out
            .relocated
            .iter()
            .filter(|r| r.outcome != "rebuilt" || r.reason.is_some())
            .map(|r| {
                format!(
                    "{}: {}",
                    r.pane,
                    r.reason.as_deref().unwrap_or(r.outcome.as_str())
                )
            })
            .collect();
        let mut line = match back {
            0 => String::new(),
            1 => "❄ 1 parked pane back at its prompt".to_string(),
            n => format!("❄ {n} parked panes back at their prompts"),
        };
        if !trouble.is_empty() {
            if !line.is_empty() {
                line.push_str("; ");
            }
            line.push_str(&trouble.join("; "));
        }
        if line.is_empty() {
            return vec![];
        }
        self.flash = Some((line, 10));
        vec![self.run(&["status", "--json"], "status")]
    }

    /// One second passed (the plugin's timer).
    pub fn tick(&mut self, secs: f64) -> Vec<Cmd> {
        let mut out = vec![Cmd::Timer(1.0)];
        self.since_scan += secs;
        if let Some((_, n)) = &mut self.flash {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.flash = None;
            }
        }
        if self.perm != Perm::Granted {
            return out;
        }
        match self.mode {
            Mode::Picker => {
                let a = self
                    .app
                    .tick(std::time::Duration::from_secs_f64(self.since_scan));
                out.extend(self.act(a));
            }
            Mode::Strip => {
                if self.since_scan >= self.poll_secs {
                    self.since_scan = 0.0;
                    out.push(self.run(&["status", "--json"], "status"));
                }
            }
        }
        out
    }

    /// A park command finished.
    pub fn command_done(
        &mut self,
        ctx: &BTreeMap<String, String>,
        stdout: &[u8],
        stderr: &[u8],
    ) -> Vec<Cmd> {
        let Some(job) = ctx.get(JOB) else {
            return vec![];
        };
        let err_line = || {
            String::from_utf8_lossy(stderr)
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .map(|l| l.trim().to_string())
                .unwrap_or_else(|| "park printed nothing".into())
        };
        if job == "ls" {
            self.since_scan = 0.0;
            match serde_json::from_slice::<LsOutput>(stdout) {
                Ok(o) => {
                    let cmds = self.session_from_env(o.session.clone());
                    self.app.set_scan(o);
                    return cmds;
                }
                Err(_) => {
                    self.app.scanning = false;
                    self.app.say(format!("park ls: {}", err_line()), true);
                }
            }
            return vec![];
        }
        if job == "revive" {
            let mut cmds = self.revived(stdout, err_line);
            cmds.push(self.on_attach());
            return cmds;
        }
        if job == "attach" {
            return vec![];
        }
        if job == "status" {
            if let Ok(s) = serde_json::from_slice::<StatusSummary>(stdout) {
                self.summary = Some(s);
            }
            return vec![];
        }
        if job.starts_with("pin:") {
            let out = String::from_utf8_lossy(stdout);
            match out.lines().next().filter(|l| !l.trim().is_empty()) {
                Some(l) => self.app.say(l.trim().to_string(), false),
                None => self.app.say(format!("park pin: {}", err_line()), true),
            }
            let a = self.app.key(Key::Char('r'));
            return self.act(a);
        }
        if let Some(lost) = job.strip_prefix("rebuild:") {
            let res = match serde_json::from_slice::<park_protocol::reports::RebuildOutput>(stdout)
            {
                Ok(o) => {
                    let (line, ok) = o.lost_line();
                    JobResult::Said(line, ok)
                }
                Err(_) => JobResult::Error(err_line()),
            };
            let a = self.app.done(lost, &[lost.to_string()], Op::Rebuild, res);
            return self.act(a);
        }
        let res = match serde_json::from_slice::<ActionOutput>(stdout) {
            Ok(o) => JobResult::Output(o),
            Err(_) => JobResult::Error(err_line()),
        };
        if let Some(h) = job
            .strip_prefix("park:")
            .filter(|_| self.mode == Mode::Strip)
        {
            let (line, _) = park_protocol::picker::result_line(h, Op::Park, &res, true);
            self.flash = Some((line, 6));
            return vec![self.run(&["status", "--json"], "status")];
        }
        let (op, target) = match job.split_once(':') {
            Some(("park", t)) => (Op::Park, t),
            Some(("unpark", t)) => (Op::Unpark, t),
            Some(("bulk", t)) => (Op::Park, t),
            _ => return vec![],
        };
        let panes: Vec<String> = match &res {
            JobResult::Output(o) => o.results.iter().filter_map(|r| r.pane.clone()).collect(),
            JobResult::Error(_) | JobResult::Said(..) => vec![target.to_string()],
        };
        let a = self.app.done(target, &panes, op, res);
        self.act(a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use park_protocol::picker::fixtures::{fixture, row};
    use park_protocol::SCHEMA_VERSION;

    fn cfg(mode: &str) -> BTreeMap<String, String> {
        [("mode".to_string(), mode.to_string())]
            .into_iter()
            .collect()
    }

    fn ls_json() -> Vec<u8> {
        ls_json_from(None)
    }

    /// `park ls --json` as run from session `session` (its `session` field).
    fn ls_json_from(session: Option<&str>) -> Vec<u8> {
        serde_json::to_vec(&LsOutput {
            schema: SCHEMA_VERSION,
            rows: vec![
                row("terminal_1@zp", "zp", 0, "api"),
                row("terminal_2@zp", "zp", 1, "web"),
            ],
            servers: vec![],
            warnings: vec![],
            auto_mode: None,
            session: session.map(str::to_string),
        })
        .unwrap()
    }

    fn job(j: &str) -> BTreeMap<String, String> {
        [(JOB.to_string(), j.to_string())].into_iter().collect()
    }

    fn args(c: &Cmd) -> Vec<String> {
        match c {
            Cmd::Run { args, .. } => args.clone(),
            _ => vec![],
        }
    }

    #[test]
    fn nothing_runs_until_permissions_are_granted_then_queued_work_replays() {
        let mut p = Plugin::new(&cfg("picker"));
        assert!(p.key(Key::Enter).is_empty());
        let cmds = p.permissions(true);
        assert_eq!(args(&cmds[0]), ["park", "ls", "--json"]);
        // Granting twice does not start twice.
        assert!(p.permissions(true).iter().all(|c| args(c).is_empty()));
    }

    #[test]
    fn a_denial_runs_nothing() {
        let mut p = Plugin::new(&cfg("strip"));
        assert!(p.permissions(false).is_empty());
        assert_eq!(p.perm, Perm::Denied);
        let (c, _) = p.pipe("park:park-focused", Some("x"));
        assert!(c.is_empty());
    }

    #[test]
    fn picker_toggles_the_preselected_focused_pane() {
        let mut p = Plugin::new(&cfg("picker"));
        p.session_name(Some("zp".into()));
        p.focus(Some(2));
        p.permissions(true);
        p.command_done(&job("ls"), &ls_json(), b"");
        assert_eq!(p.app.current().unwrap().pane, "terminal_2@zp");
        let c = p.key(Key::Enter);
        assert_eq!(args(&c[0]), ["park", "park", "terminal_2@zp", "--json"]);
        let out = br#"{"schema":1,"results":[{"target":"terminal_2@zp","pane":"terminal_2@zp","session_id":"s","outcome":"parked","reason":null,"freed_bytes":1048576}]}"#;
        let Cmd::Run { ctx, .. } = &c[0] else {
            panic!()
        };
        let after = p.command_done(ctx, out, b"");
        assert!(
            p.app.message.as_deref().unwrap_or("").contains("parked"),
            "{:?}",
            p.app.message
        );
        // Like the tmux popup: the pane it was opened on is done, so the picker closes.
        assert_eq!(after, vec![Cmd::Close]);
    }

    /// zellij sends the session name, the focused pane and the first scan's result in any
    /// order. Whatever the order, the picker lands on the pane it opened on and closes once that
    /// pane is toggled (the CI failure: the focus came after the scan, the picker stayed open
    /// over the pane and the strip's Alt P found no terminal focused).
    #[test]
    fn picker_finds_its_pane_whatever_order_the_session_focus_and_scan_arrive_in() {
        type Step = fn(&mut Plugin);
        let session: Step = |p| {
            p.session_name(Some("zp".into()));
        };
        let focus: Step = |p| p.focus(Some(2));
        let scan: Step = |p| {
            p.command_done(&job("ls"), &ls_json(), b"");
        };
        let orders: [[Step; 3]; 6] = [
            [session, focus, scan],
            [session, scan, focus],
            [focus, session, scan],
            [focus, scan, session],
            [scan, session, focus],
            [scan, focus, session],
        ];
        for (i, order) in orders.iter().enumerate() {
            let mut p = Plugin::new(&cfg("picker"));
            p.permissions(true);
            for step in order {
                step(&mut p);
            }
            assert_eq!(p.app.current().unwrap().pane, "terminal_2@zp", "order {i}");
            let c = p.key(Key::Enter);
            let Cmd::Run { ctx, .. } = &c[0] else {
                panic!("order {i}: {c:?}")
            };
            let out = br#"{"schema":1,"results":[{"target":"terminal_2@zp","pane":"terminal_2@zp","session_id":"s","outcome":"parked","reason":null,"freed_bytes":1}]}"#;
            assert_eq!(p.command_done(ctx, out, b""), vec![Cmd::Close], "order {i}");
        }
    }

    /// The CI failure's cause: a picker that got no `ModeUpdate` never knew its session, so it
    /// neither preselected its pane nor closed once that pane was done. `park ls` names it (the
    /// session its commands run in); a `ModeUpdate` still wins over it.
    #[test]
    fn a_picker_with_no_mode_update_takes_its_session_from_its_scan() {
        let mut p = Plugin::new(&cfg("picker"));
        p.focus(Some(2));
        p.permissions(true);
        p.command_done(&job("ls"), &ls_json_from(Some("zp")), b"");
        assert_eq!(p.session.as_deref(), Some("zp"));
        assert_eq!(p.app.current().unwrap().pane, "terminal_2@zp");
        let c = p.key(Key::Enter);
        let Cmd::Run { ctx, .. } = &c[0] else {
            panic!("{c:?}")
        };
        let out = br#"{"schema":1,"results":[{"target":"terminal_2@zp","pane":"terminal_2@zp","session_id":"s","outcome":"parked","reason":null,"freed_bytes":1}]}"#;
        assert_eq!(p.command_done(ctx, out, b""), vec![Cmd::Close]);

        let mut q = Plugin::new(&cfg("strip"));
        q.session_name(Some("renamed".into()));
        q.session_from_env(Some("zp".into()));
        assert_eq!(q.session.as_deref(), Some("renamed"));
        q.session_from_env(Some(String::new()));
        assert_eq!(q.session.as_deref(), Some("renamed"));
        // A strip that learns its session this way revives its held panes as with a ModeUpdate.
        let mut r = Plugin::new(&cfg("strip"));
        r.permissions(true);
        let c = r.session_from_env(Some("zp".into()));
        assert!(
            c.iter().any(|c| args(c).contains(&"rebuild".to_string())),
            "{c:?}"
        );
    }

    #[test]
    fn unparseable_output_becomes_an_error_line() {
        let mut p = Plugin::new(&cfg("picker"));
        p.permissions(true);
        p.command_done(&job("ls"), b"", b"park: cannot read the ledger\n");
        assert!(p.app.message_bad);
        assert!(p
            .app
            .message
            .as_deref()
            .unwrap()
            .contains("cannot read the ledger"));
    }

    #[test]
    fn strip_takes_pushed_status_and_ignores_end_of_input() {
        let mut p = Plugin::new(&cfg("strip"));
        p.permissions(true);
        assert_eq!(p.pipe("park:status", None), (vec![], false));
        let (_, redraw) = p.pipe(
            "park:status",
            Some(r#"{"schema":1,"parked":3,"freed_bytes":1181116006,"updated":1}"#),
        );
        assert!(redraw);
        assert_eq!(p.summary.as_ref().unwrap().parked, 3);
    }

    #[test]
    fn strip_parks_the_focused_pane_on_the_keybinding() {
        let mut p = Plugin::new(&cfg("strip"));
        p.session_name(Some("zp".into()));
        p.focus(Some(4));
        p.own_tab(Some((0, vec![4])));
        p.live_focus = Some((0, Some(4)));
        let (c, _) = p.pipe("park:park-focused", Some("x"));
        assert!(c.is_empty(), "queued until granted");
        let c = p.permissions(true);
        assert!(c
            .iter()
            .any(|c| args(c) == ["park", "park", "terminal_4@zp", "--json"]));
    }

    /// Issue 35 item 1: `Alt P` reaches the strip of every tab; each background strip kept the
    /// focused pane of when its tab was last active, and parked it. Only the strip whose own tab
    /// holds the live focus acts.
    #[test]
    fn the_keybinding_parks_only_the_pane_the_client_is_on() {
        let strip = |own: usize, panes: Vec<u32>, stale_focus: u32| {
            let mut p = Plugin::new(&cfg("strip"));
            p.session_name(Some("zp".into()));
            p.own_tab(Some((own, panes)));
            p.focus(Some(stale_focus));
            p.permissions(true);
            p
        };
        let mut tab0 = strip(0, vec![1, 2], 2);
        let mut tab1 = strip(1, vec![3, 4], 4);
        for p in [&mut tab0, &mut tab1] {
            p.live_focus = Some((0, Some(2)));
        }
        let (c0, _) = tab0.pipe("park:park-focused", Some("x"));
        let (c1, _) = tab1.pipe("park:park-focused", Some("x"));
        assert!(c0
            .iter()
            .any(|c| args(c) == ["park", "park", "terminal_2@zp", "--json"]));
        assert!(c1.is_empty(), "another tab's strip parks nothing: {c1:?}");
        assert!(tab1.flash.is_none(), "and says nothing");
        // A focused plugin or floating pane (no terminal): nothing, said once.
        tab0.live_focus = Some((0, None));
        let (c, _) = tab0.pipe("park:park-focused", Some("x"));
        assert!(c.is_empty());
        assert!(tab0.flash.is_some());
        // No live focus: never the stale pane.
        let mut blind = strip(0, vec![1, 2], 2);
        let (c, _) = blind.pipe("park:park-focused", Some("x"));
        assert!(c.is_empty(), "{c:?}");
    }

    #[test]
    fn focus_only_inside_this_session() {
        let mut p = Plugin::new(&cfg("picker"));
        p.session_name(Some("zp".into()));
        p.permissions(true);
        let mut rows = fixture();
        rows[0].pane = "terminal_7@zp".into();
        p.app.set_rows(rows, vec![]);
        assert_eq!(p.key(Key::Char('f')), vec![Cmd::FocusTerminal(7)]);
    }

    /// Issue 35 item 3: a strip asks park once, when it may run park and knows its session, to
    /// give the session's held parked panes their prompts back; never in the picker, never with
    /// `revive_held "false"`, and a result with nothing moved says nothing.
    #[test]
    fn a_strip_revives_its_sessions_held_parked_panes_once_on_load() {
        let revive = [
            "park",
            "rebuild",
            "--no-resume",
            "--session",
            "zp",
            "--json",
        ];
        // Granted first, the session known later.
        let mut p = Plugin::new(&cfg("strip"));
        assert!(!p.permissions(true).iter().any(|c| args(c) == revive));
        let c = p.session_name(Some("zp".into()));
        assert_eq!(c.iter().filter(|c| args(c) == revive).count(), 1, "{c:?}");
        assert!(p.session_name(Some("zp".into())).is_empty(), "once");
        // The session known first, granted later.
        let mut q = Plugin::new(&cfg("strip"));
        assert!(
            q.session_name(Some("zp".into())).is_empty(),
            "not before the grant"
        );
        assert!(q.permissions(true).iter().any(|c| args(c) == revive));
        // Nothing moved: silent, and then `[journal] restore` has its say (once).
        let attach = ["park", "rebuild", "--on-attach"];
        let c = q.command_done(&job("revive"), br#"{"schema":1,"server":"","dry_run":false,"windows":[],"relocated":[],"skipped":[],"warnings":[]}"#, b"");
        assert_eq!(c.iter().map(args).collect::<Vec<_>>(), [attach], "{c:?}");
        assert!(q.flash.is_none());
        assert!(q
            .command_done(&job("attach"), b"nothing to do\n", b"")
            .is_empty());
        let rel = |pane: &str, outcome: &str, reason: &str| {
            format!(
                r#"{{"entry":"e","session_id":"s","agent":"claude","server":"/z","from":"terminal_1@zp","pane":"{pane}","session":"zp","tab":"t","cwd":"/w","outcome":"{outcome}","reason":{reason}}}"#
            )
        };
        let out = format!(
            r#"{{"schema":1,"server":"","dry_run":false,"windows":[],"relocated":[{},{},{}],"skipped":[],"warnings":[]}}"#,
            rel("terminal_5@zp", "rebuilt", "null"),
            rel("terminal_6@zp", "rebuilt", "null"),
            rel("terminal_7@zp", "refused", r#""moved meanwhile""#),
        );
        let c = q.command_done(&job("revive"), out.as_bytes(), b"");
        let (line, _) = q.flash.clone().expect("said");
        assert!(line.starts_with("❄ 2 parked panes back"), "{line}");
        assert!(line.contains("terminal_7@zp: moved meanwhile"), "{line}");
        assert!(c.iter().any(|c| args(c) == ["park", "status", "--json"]));
        // An error is said, not swallowed.
        q.command_done(
            &job("revive"),
            b"",
            b"park: rebuild: refused: another rebuild\n",
        );
        assert!(q.flash.unwrap().0.contains("another rebuild"));
        // Never from the picker; not when configured off.
        let mut picker = Plugin::new(&cfg("picker"));
        picker.permissions(true);
        assert!(!picker
            .session_name(Some("zp".into()))
            .iter()
            .any(|c| args(c) == revive));
        let mut off = Plugin::new(
            &[("mode", "strip"), ("revive_held", "false")]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        );
        off.permissions(true);
        let c = off.session_name(Some("zp".into()));
        assert_eq!(
            c.iter().map(args).collect::<Vec<_>>(),
            [attach],
            "no revive, but the attach still runs: {c:?}"
        );
    }

    /// Issue 32 §5: Enter on a lost row asks y/N, then runs `park rebuild --as-before`, and its
    /// result line says how many came back.
    #[test]
    fn enter_on_a_lost_row_rebuilds_the_lost_sessions_after_a_yes() {
        let mut p = Plugin::new(&cfg("picker"));
        p.session_name(Some("zp".into()));
        p.permissions(true);
        let mut rows = fixture();
        for r in rows.iter_mut().take(2) {
            r.state = park_protocol::RowState::Lost;
            r.pane = String::new();
        }
        p.app.set_rows(rows, vec![]);
        while p
            .app
            .current()
            .is_some_and(|r| r.state != park_protocol::RowState::Lost)
        {
            p.key(Key::Down);
        }
        assert!(p.key(Key::Enter).is_empty(), "asks first");
        assert!(p.key(Key::Char('n')).is_empty(), "a no does nothing");
        p.key(Key::Enter);
        let c = p.key(Key::Char('y'));
        assert_eq!(
            c.iter().map(args).collect::<Vec<_>>(),
            [["park", "rebuild", "--as-before", "--json"]],
            "{c:?}"
        );
        let out = br#"{"schema":1,"server":"/t","dry_run":false,"windows":[],"relocated":[],"skipped":[],"warnings":[],"lost":[
            {"entry":"e1","agent":"claude","session_id":"s1","cwd":"/w","server":"/z","session":"zp","window_index":0,"window_name":"a","pane_index":0,"last_seen":"t","outcome":"unparked"},
            {"entry":"e2","agent":"claude","session_id":"s2","cwd":"/w","server":"/z","session":"zp","window_index":0,"window_name":"a","pane_index":1,"last_seen":"t","outcome":"skipped","reason":"running again"}]}"#;
        let c = p.command_done(&job("rebuild:lost"), out, b"");
        assert!(
            c.iter().any(|c| args(c) == ["park", "ls", "--json"]),
            "{c:?}"
        );
        assert_eq!(
            p.app.message.as_deref(),
            Some("1 lost session is back in its pane; 1 not (`park rebuild --dry-run` says why)")
        );
        assert!(p.app.message_bad);
    }
}
