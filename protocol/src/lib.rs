//! JSON shapes that `park … --json` prints and that the multiplexer plugins parse.
//!
//! Contract: this crate is serde-only and builds for `wasm32-wasip1`, so the zellij plugin can parse
//! exactly what the companion prints. Fields are only ever added (never renamed or removed) within one
//! `SCHEMA_VERSION`; consumers must ignore fields they do not know. The companion is the only writer.

use serde::{Deserialize, Serialize};

pub mod auto;
pub mod picker;
pub mod reports;

/// Bumped when a field changes meaning or disappears. Additive changes keep the version.
pub const SCHEMA_VERSION: u32 = 1;

/// The release of park this crate was built for (the workspace version). The companion puts it in
/// every [`StatusSummary`] it sends; the zellij plugin, built from the same tree, compares it with
/// its own copy to tell a stale plugin after an upgrade.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Which coding agent a row or entry belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Agent {
    Claude,
    Codex,
    /// Qwen Code 0.24+.
    Qwen,
    /// GitHub Copilot CLI 1.0+.
    Copilot,
    /// Google Gemini CLI.
    Gemini,
    /// OpenCode (`opencode-ai`).
    Opencode,
    /// Kilo CLI (`@kilocode/cli`), a fork of OpenCode.
    Kilo,
    /// aider (`aider-chat`, Python): no session id, its chat history file is the identity.
    Aider,
    /// pi (`@earendil-works/pi-coding-agent`).
    Pi,
    /// Kimi Code (`@moonshot-ai/kimi-code`).
    Kimi,
    /// Factory Droid (`@factory/cli`).
    Droid,
    /// Cline CLI (`cline`).
    Cline,
}

impl Agent {
    /// Every agent, in declaration order: the one list everything that goes over all agents
    /// iterates (the companion's `agents::all()`, the test corpora).
    pub const ALL: [Agent; 12] = [
        Agent::Claude,
        Agent::Codex,
        Agent::Qwen,
        Agent::Copilot,
        Agent::Gemini,
        Agent::Opencode,
        Agent::Kilo,
        Agent::Aider,
        Agent::Pi,
        Agent::Kimi,
        Agent::Droid,
        Agent::Cline,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
            Agent::Qwen => "qwen",
            Agent::Copilot => "copilot",
            Agent::Gemini => "gemini",
            Agent::Opencode => "opencode",
            Agent::Kilo => "kilo",
            Agent::Aider => "aider",
            Agent::Pi => "pi",
            Agent::Kimi => "kimi",
            Agent::Droid => "droid",
            Agent::Cline => "cline",
        }
    }
}

/// Whether park can act on a row: running and targetable, parked in the ledger, or running but not
/// identifiable exactly (then `reason` says why and park refuses to touch it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum RowState {
    Live,
    Parked,
    Untargetable,
    /// A Claude background session (Agent View): run by Claude's supervisor, in no pane. Listed
    /// with its state and memory; park never parks it (`claude stop`/`attach` manage it).
    Background,
    /// Live when its multiplexer died (a crash, a `kill-server`, a reboot): in the journal, not
    /// running, its pane gone; `park rebuild` brings it back in its slot.
    Lost,
}

/// What the agent is doing, in the trust order park reads it (README "What happens on `park park`"). `Unknown` counts as busy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Idle,
    Busy,
    Waiting,
    Shell,
    Draft,
    Unknown,
    /// Parked rows: the agent is not running.
    Parked,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Idle => "idle",
            Status::Busy => "busy",
            Status::Waiting => "waiting",
            Status::Shell => "shell",
            Status::Draft => "draft",
            Status::Unknown => "unknown",
            Status::Parked => "parked",
        }
    }
}

/// One row of `park ls --json`: a live agent in a pane, or a parked ledger entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Row {
    /// Multiplexer pane handle that `park park` / `park unpark` accept back (tmux: `%3`).
    pub pane: String,
    /// `tmux` (later also `zellij`, `none`).
    pub mux: String,
    pub session: String,
    pub window_index: Option<u32>,
    pub window: String,
    pub agent: Agent,
    pub session_id: Option<String>,
    /// Where the session id came from (`status-file`, `argv`, `rollout-fd`, `title-id`, …).
    pub session_source: Option<String>,
    pub cwd: String,
    pub title: String,
    pub state: RowState,
    pub status: Status,
    /// Why a row is untargetable, or why park would refuse it right now.
    pub reason: Option<String>,
    /// Seconds since the last real user/assistant turn; `None` when not measurable.
    pub idle_seconds: Option<u64>,
    /// Resident set of the whole descendant tree now (live rows), bytes.
    pub bytes: u64,
    /// Unique set size of the tree (what a kill genuinely returns), bytes.
    pub uss_bytes: u64,
    pub pss_bytes: u64,
    /// Anonymous memory of the tree: what parking it is expected to free (the `freed` figure).
    #[serde(default)]
    pub anon_bytes: u64,
    /// Parked rows: what parking freed (USS of the killed tree), bytes.
    pub freed_bytes: Option<u64>,
    pub pid: Option<u32>,
    /// Parked rows: ledger entry id.
    pub entry: Option<String>,
    /// Parked rows: RFC 3339 time of the park.
    pub parked_at: Option<String>,
    /// A parked session's wake-up: the condition and when it is next looked at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wake: Option<String>,
    /// A Claude background session's short id (`claude attach <job>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<String>,
    /// The session is pinned (`park pin`): the autopilot never parks it.
    #[serde(default)]
    pub pinned: bool,
    /// The autopilot's last pass (suggest mode) would park it.
    #[serde(default)]
    pub suggested: bool,
    /// The agent's version (a live row: read beside its binary; a parked one: at park time), when
    /// it could be read.
    #[serde(default)]
    pub agent_version: Option<String>,
}

/// A dev server or test browser of a window: running (park would stop it with the window) or
/// stopped by a park (recorded so `park unpark --with-servers` can start it again).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ServerRow {
    pub session: String,
    pub window_index: u32,
    /// The pane it runs (ran) in, or was attributed to when it runs detached.
    pub pane: Option<String>,
    /// The matched program (`vite`, `next`, `chrome`).
    pub name: String,
    /// `dev server` or `test browser`.
    pub kind: String,
    /// `running` or `stopped`.
    pub state: String,
    pub pid: Option<u32>,
    /// The command that started it (what a restart types).
    pub command: String,
    pub cwd: String,
    /// Resident memory of its process tree (running: now; stopped: when it was stopped).
    pub bytes: u64,
    /// Reparented to init: restarted only by hand.
    pub orphan: bool,
    /// Why park leaves it alone, when it does.
    pub note: Option<String>,
}

/// The whole `park ls --json` document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LsOutput {
    pub schema: u32,
    pub rows: Vec<Row>,
    /// Dev servers and test browsers beside the agents, running or stopped by a park.
    #[serde(default)]
    pub servers: Vec<ServerRow>,
    /// Non-fatal problems met while scanning (partial pane map, unreadable ledger file, …).
    pub warnings: Vec<String>,
    /// The autopilot's mode in force (`off`, `suggest`, `park`); absent when the config does not
    /// load. Lets a picker say why nothing is suggested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_mode: Option<String>,
    /// The multiplexer session park was run from, when its environment names one (a zellij
    /// plugin's commands inherit the server's `ZELLIJ_SESSION_NAME`, kept current across a
    /// rename): a zellij picker that zellij has not yet told its session takes it from here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
}

/// The tiny summary in `$PARK_HOME/status`, rewritten after every change and read by status lines.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StatusSummary {
    pub schema: u32,
    pub parked: u32,
    pub freed_bytes: u64,
    /// Live agents the autopilot's last pass suggests parking (suggest mode).
    #[serde(default)]
    pub suggested: u32,
    /// Sessions lost with their multiplexer (the journal), waiting for `park rebuild`.
    #[serde(default)]
    pub lost: u32,
    /// Unix seconds of the last rewrite.
    pub updated: i64,
    /// The version of the park binary that sent it ([`VERSION`]); absent from older parks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

impl StatusSummary {
    /// The status-line text: `❄ 3 · 1.1G` (`· 2?` when the autopilot suggests parking two more),
    /// `❄ 2?` with only suggestions, empty when nothing is parked or suggested.
    pub fn text(&self) -> String {
        let hint = if self.suggested > 0 {
            format!(" · {}?", self.suggested)
        } else {
            String::new()
        };
        let lost = if self.lost > 0 {
            format!("⚠ {} lost", self.lost)
        } else {
            String::new()
        };
        let main = match (self.parked, self.suggested) {
            (0, 0) => String::new(),
            (0, n) => format!("❄ {n}?"),
            (p, _) => format!("❄ {p} · {}{hint}", human_bytes(self.freed_bytes)),
        };
        match (main.is_empty(), lost.is_empty()) {
            (_, true) => main,
            (true, false) => lost,
            (false, false) => format!("{main} · {lost}"),
        }
    }

    /// `Some("park 0.2.0 ≠ plugin 0.1.0: …")` when the sender's version is known and differs from
    /// `mine` (the receiving plugin's [`VERSION`]); `None` when they agree or the sender is too old
    /// to say.
    pub fn version_mismatch(&self, mine: &str) -> Option<String> {
        match self.version.as_deref() {
            Some(v) if v != mine => {
                Some(format!("park {v} ≠ plugin {mine}: run park zellij install"))
            }
            _ => None,
        }
    }
}

/// What happened to one target of `park park|unpark|forget` (and to a window's dev servers).
/// Serialized as the kebab-case strings of the JSON contract (`already-running`, `would-park`, …);
/// the schema keeps the field a string, so adding an outcome never breaks a reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    Parked,
    Unparked,
    AlreadyParked,
    AlreadyRunning,
    WouldPark,
    WouldUnpark,
    Forgotten,
    NotParked,
    Cancelled,
    Kept,
    Refused,
    Failed,
    /// Dev servers and test browsers.
    Stopped,
    WouldStop,
    Restarted,
    WouldRestart,
    NotRestarted,
}

impl Outcome {
    /// Every outcome, in the order the docs list them.
    pub const ALL: [Outcome; 17] = [
        Outcome::Parked,
        Outcome::Unparked,
        Outcome::AlreadyParked,
        Outcome::AlreadyRunning,
        Outcome::WouldPark,
        Outcome::WouldUnpark,
        Outcome::Forgotten,
        Outcome::NotParked,
        Outcome::Cancelled,
        Outcome::Kept,
        Outcome::Refused,
        Outcome::Failed,
        Outcome::Stopped,
        Outcome::WouldStop,
        Outcome::Restarted,
        Outcome::WouldRestart,
        Outcome::NotRestarted,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Parked => "parked",
            Outcome::Unparked => "unparked",
            Outcome::AlreadyParked => "already-parked",
            Outcome::AlreadyRunning => "already-running",
            Outcome::WouldPark => "would-park",
            Outcome::WouldUnpark => "would-unpark",
            Outcome::Forgotten => "forgotten",
            Outcome::NotParked => "not-parked",
            Outcome::Cancelled => "cancelled",
            Outcome::Kept => "kept",
            Outcome::Refused => "refused",
            Outcome::Failed => "failed",
            Outcome::Stopped => "stopped",
            Outcome::WouldStop => "would-stop",
            Outcome::Restarted => "restarted",
            Outcome::WouldRestart => "would-restart",
            Outcome::NotRestarted => "not-restarted",
        }
    }

    /// The target is in the state that was asked for (already being there counts).
    pub fn reached(self) -> bool {
        matches!(
            self,
            Outcome::Parked | Outcome::Unparked | Outcome::AlreadyParked | Outcome::AlreadyRunning
        )
    }

    /// Something was refused or went wrong: the command exits 1.
    pub fn is_failure(self) -> bool {
        matches!(
            self,
            Outcome::Refused | Outcome::Failed | Outcome::NotParked | Outcome::NotRestarted
        )
    }
}

impl std::str::FromStr for Outcome {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Outcome::ALL
            .into_iter()
            .find(|o| o.as_str() == s)
            .ok_or_else(|| format!("not an outcome: {s:?}"))
    }
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One line of `park park|unpark --json` output: what happened to each target, in target order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ActionResult {
    pub target: String,
    pub pane: Option<String>,
    pub session_id: Option<String>,
    /// Agents: `parked`, `unparked`, `already-parked`, `already-running`, `refused`, `would-park`,
    /// `would-unpark`, `forgotten`, `not-parked`, `cancelled`, `kept`, `failed`. Dev servers:
    /// `stopped`, `would-stop`, `restarted`, `would-restart`, `not-restarted`.
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub outcome: Outcome,
    pub reason: Option<String>,
    pub freed_bytes: Option<u64>,
}

impl ActionResult {
    /// A result that names no pane or session (yet); fill those in with struct update syntax.
    pub fn new(target: &str, outcome: Outcome, reason: Option<String>) -> Self {
        ActionResult {
            target: target.to_string(),
            pane: None,
            session_id: None,
            outcome,
            reason,
            freed_bytes: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ActionOutput {
    pub schema: u32,
    pub results: Vec<ActionResult>,
}

/// Where a tombstone's session is now, as every archive view reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum TombState {
    /// A ledger entry holds it: `park unpark` resumes it in its pane.
    Parked,
    /// An agent runs this session right now (shown `↑`: it came back).
    Running,
    /// Neither: only the archive remembers it; `park unpark` resurrects it.
    Archived,
}

impl TombState {
    pub fn marker(self) -> &'static str {
        match self {
            TombState::Parked => "❄",
            TombState::Running => "↑",
            TombState::Archived => "·",
        }
    }
}

/// One archived session (a tombstone) as `park ls --archived`, `park search` and `park show` see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ArchivedRow {
    pub agent: Agent,
    pub session_id: String,
    pub state: TombState,
    /// `❄`, `↑` (running again) or `·`.
    pub marker: String,
    pub cwd: String,
    /// The best name for it: the pane title park saw, else the agent's own title.
    pub title: String,
    pub ai_title: Option<String>,
    pub mux: String,
    pub session: String,
    pub window_index: u32,
    pub window: String,
    pub pane: String,
    /// The first real prompt, else the last assistant message (one line, cut).
    pub summary: String,
    pub first_prompt: Option<String>,
    pub last_assistant: Option<String>,
    pub parked_at: Option<String>,
    pub archived_at: String,
    pub last_active: Option<String>,
    /// Seconds between the last real turn and the park (or the archive).
    pub idle_at_park_seconds: Option<u64>,
    pub flags: Vec<String>,
    /// Window group (a whole window parked together) this session belongs to.
    pub group: Option<String>,
    pub notes: String,
    /// The agent's own transcript is still where the agent looks for it.
    pub transcript_present: bool,
    /// Days until the agent's cleanup may delete that transcript (Claude `cleanupPeriodDays`).
    pub cleanup_in_days: Option<i64>,
    pub transcript_bytes: u64,
    pub markdown_bytes: u64,
    pub turns: u64,
    /// Recovered by `park recover` from the agent's prompt history: the prompts only, no
    /// transcript; listed and searchable, never resumable.
    #[serde(default)]
    pub prompts_only: bool,
    /// Ledger entry id while parked.
    pub entry: Option<String>,
    pub archive_dir: String,
    /// What a user would type to resume it by hand.
    pub resume_command: String,
}

/// `park ls --archived --json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ArchivedOutput {
    pub schema: u32,
    /// Newest first.
    pub rows: Vec<ArchivedRow>,
    pub warnings: Vec<String>,
    /// Total size of `$PARK_HOME/archive` on disk.
    #[serde(default)]
    pub archive_bytes: u64,
}

/// Why one row matched a search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SearchHit {
    pub session_id: String,
    /// `title`, `cwd`, `summary`, `notes`, `session_id`, `window`, `conversation`.
    pub fields: Vec<String>,
    /// A line of context around the first match.
    pub snippet: String,
}

/// `park search --json`: the same rows `ls --archived` shows, only those that match.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SearchOutput {
    pub schema: u32,
    pub term: String,
    pub full_text: bool,
    pub rows: Vec<ArchivedRow>,
    pub hits: Vec<SearchHit>,
    pub warnings: Vec<String>,
}

/// A guess at where a live session stands; a ranking hint, never an action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Done,
    WaitingOnYou,
    Working,
    Unknown,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Done => "done",
            Verdict::WaitingOnYou => "waiting on you",
            Verdict::Working => "working",
            Verdict::Unknown => "unknown",
        }
    }
}

/// One row of `park candidates --json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Candidate {
    pub pane: String,
    pub agent: Agent,
    pub session_id: Option<String>,
    pub cwd: String,
    pub title: String,
    pub idle_seconds: Option<u64>,
    pub verdict: Verdict,
    /// 0.0–1.0.
    pub confidence: f32,
    /// What the verdict rests on.
    pub why: String,
    pub last_assistant: Option<String>,
    pub anon_bytes: u64,
    /// Why park would refuse it right now (the verdict never overrides a guard).
    pub refusal: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CandidatesOutput {
    pub schema: u32,
    pub rows: Vec<Candidate>,
    pub warnings: Vec<String>,
}

/// Human-readable byte size: `1.1G`, `230M`, `12K`.
pub fn human_bytes(b: u64) -> String {
    const K: f64 = 1024.0;
    let f = b as f64;
    if f >= K * K * K {
        format!("{:.1}G", f / (K * K * K))
    } else if f >= K * K {
        format!("{:.0}M", f / (K * K))
    } else if f >= K {
        format!("{:.0}K", f / K)
    } else {
        format!("{b}B")
    }
}

#[cfg(test)]
mod tests {
    /// `Agent::ALL` holds the variants in declaration order (the companion's
    /// `agents::tests::every_agent_is_in_the_one_list` checks that each has its kind and that no
    /// agent's fixtures lie outside the list).
    #[test]
    fn all_agents_in_declaration_order() {
        for (i, a) in super::Agent::ALL.iter().enumerate() {
            assert_eq!(*a as usize, i, "{a:?}");
        }
    }

    /// The JSON contract: every outcome serializes as the kebab-case string the docs list, parses
    /// back, and `ALL` holds each exactly once.
    #[test]
    fn outcomes_serialize_as_their_documented_strings() {
        let mut seen = std::collections::HashSet::new();
        for o in Outcome::ALL {
            let json = serde_json::to_string(&o).unwrap();
            assert_eq!(json, format!("\"{}\"", o.as_str()));
            assert_eq!(serde_json::from_str::<Outcome>(&json).unwrap(), o);
            assert_eq!(o.as_str().parse::<Outcome>().unwrap(), o);
            assert!(seen.insert(o.as_str()));
        }
        assert!("parked ".parse::<Outcome>().is_err());
        // Exit 1 exactly for these (what `print_results` did with its hand-written list).
        let failing: Vec<&str> = Outcome::ALL
            .into_iter()
            .filter(|o| o.is_failure())
            .map(Outcome::as_str)
            .collect();
        assert_eq!(
            failing,
            ["not-parked", "refused", "failed", "not-restarted"]
        );
    }

    use super::*;

    #[test]
    fn status_version_is_optional_both_ways_and_compared_exactly() {
        // An older park's status (no version) still reads, and says nothing about versions.
        let old: StatusSummary =
            serde_json::from_str(r#"{"schema":1,"parked":3,"freed_bytes":1181116006,"updated":1}"#)
                .unwrap();
        assert_eq!(old.version, None);
        assert_eq!(old.version_mismatch("0.1.0"), None);
        assert!(!serde_json::to_string(&old).unwrap().contains("version"));
        assert_eq!(old.text(), "❄ 3 · 1.1G");
        let new = StatusSummary {
            version: Some("0.2.0".into()),
            ..old
        };
        let back: StatusSummary =
            serde_json::from_str(&serde_json::to_string(&new).unwrap()).unwrap();
        assert_eq!(back, new);
        assert_eq!(new.version_mismatch("0.2.0"), None);
        assert_eq!(
            new.version_mismatch("0.1.0").unwrap(),
            "park 0.2.0 ≠ plugin 0.1.0: run park zellij install"
        );
        assert_eq!(StatusSummary::default().text(), "");
    }

    #[test]
    fn lost_sessions_are_counted_in_the_status_line() {
        let mut s = StatusSummary {
            parked: 3,
            freed_bytes: 1181116006,
            lost: 2,
            ..StatusSummary::default()
        };
        assert_eq!(s.text(), "❄ 3 · 1.1G · ⚠ 2 lost");
        s.parked = 0;
        assert_eq!(s.text(), "⚠ 2 lost");
        // An older park's status has no count: nothing lost.
        let old: StatusSummary =
            serde_json::from_str(r#"{"schema":1,"parked":1,"freed_bytes":0,"updated":1}"#).unwrap();
        assert_eq!(old.lost, 0);
    }

    #[test]
    fn human_bytes_units() {
        assert_eq!(human_bytes(0), "0B");
        assert_eq!(human_bytes(2048), "2K");
        assert_eq!(human_bytes(230 * 1024 * 1024), "230M");
        assert_eq!(human_bytes(1181116006), "1.1G");
    }

    #[test]
    fn row_round_trips_and_uses_lowercase_enums() {
        let r = Row {
            pane: "%3".into(),
            mux: "tmux".into(),
            session: "work".into(),
            window_index: Some(1),
            window: "api".into(),
            agent: Agent::Claude,
            session_id: Some("35c98558-0920-4e29-b81c-9304ca43fccb".into()),
            session_source: Some("status-file".into()),
            cwd: "/tmp".into(),
            title: "t".into(),
            state: RowState::Live,
            status: Status::Idle,
            reason: None,
            idle_seconds: Some(3),
            bytes: 1,
            uss_bytes: 1,
            pss_bytes: 1,
            anon_bytes: 1,
            freed_bytes: None,
            pid: Some(9),
            entry: None,
            parked_at: None,
            wake: None,
            job: None,
            pinned: false,
            suggested: false,
            agent_version: None,
        };
        let s = serde_json::to_string(&r).unwrap();
        assert!(s.contains("\"agent\":\"claude\""));
        assert!(s.contains("\"state\":\"live\""));
        assert!(s.contains("\"status\":\"idle\""));
        let back: Row = serde_json::from_str(&s).unwrap();
        assert_eq!(back, r);
    }
}
