//! The `--json` outputs of the maintenance verbs: `park doctor`, `park rebuild`,
//! `park archive --all`, `park archive --prune`, `park recover`. Like everything in this crate they
//! are a contract: fields are only ever added within one `schema` version (schema/*.json).

use crate::{Agent, Outcome};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Attention,
    Info,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Finding {
    pub level: Level,
    /// Stable machine name: `corrupt`, `foreign`, `permissions`, `symlink`, `interrupted`,
    /// `resuming`, `running-while-parked`, `unrestorable`, `duplicate`, `cleanup-age`,
    /// `cleanup-period`, `config`, `daemon-down`, `waker-down`,
    /// `worktree-drift`, `pane-lost`, `pane-moved`, `pane-unmatched`, `stale-lock`, `lock-held`, `leftover-temp`, `scan`, `untested-version`,
    /// `lost` (a session live when its multiplexer died), `journal` (the journal does not read),
    /// `resurrect-hook` (a tmux-resurrect hook is the user's), `resurrect-processes` (an agent in
    /// `@resurrect-processes`).
    pub code: String,
    /// The entry id or file the finding is about.
    pub subject: String,
    pub message: String,
    /// The command (or action) that fixes it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Report {
    pub schema: u32,
    pub ok: bool,
    pub entries: usize,
    pub findings: Vec<Finding>,
    /// Total size of `$PARK_HOME/archive` on disk.
    #[serde(default)]
    pub archive_bytes: u64,
}

#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SlotOutcome {
    pub pane_index: u32,
    pub pane: Option<String>,
    pub cwd: String,
    pub command: String,
    pub entry: Option<String>,
    pub session_id: Option<String>,
    pub agent: Option<String>,
    /// `would-rebuild`, `shell`, `unparked`, `rebuilt` (re-pointed, left parked), `refused`, `failed`.
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub outcome: SlotResult,
    pub reason: Option<String>,
}

#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WindowOutcome {
    pub group: Option<String>,
    pub session: String,
    pub window_index: u32,
    pub window_name: String,
    /// The index the window got (the recorded one unless it was taken).
    pub built_index: Option<u32>,
    pub layout: Option<String>,
    pub notes: Vec<String>,
    pub slots: Vec<SlotOutcome>,
}

#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Skipped {
    pub entry: String,
    pub server: String,
    pub reason: String,
}

/// A parked entry whose pane the multiplexer renumbered (a resurrected zellij session), found
/// again by its mark and re-pointed.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Relocated {
    pub entry: String,
    pub session_id: String,
    pub agent: String,
    pub server: String,
    /// The pane handle the entry recorded; after the renumbering it may be another pane's.
    pub from: String,
    /// The pane that carries the entry's mark (`❄ <title> · <tag>`) in the recorded tab and cwd.
    pub pane: String,
    pub session: String,
    pub tab: String,
    pub cwd: String,
    /// `would-rebuild`, `rebuilt` (re-pointed, left parked), `unparked`, `refused`, `failed`.
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub outcome: SlotResult,
    pub reason: Option<String>,
}

#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RebuildOutput {
    pub schema: u32,
    /// The tmux server rebuilt (empty when none is selected: zellij entries only).
    pub server: String,
    pub dry_run: bool,
    pub windows: Vec<WindowOutcome>,
    /// zellij entries re-pointed at their resurrected panes.
    #[serde(default)]
    pub relocated: Vec<Relocated>,
    pub skipped: Vec<Skipped>,
    pub warnings: Vec<String>,
    /// Sessions that were live when their multiplexer died (the journal): adopted into the ledger
    /// and rebuilt with the parked ones, or skipped with the reason.
    #[serde(default)]
    pub lost: Vec<LostSession>,
}

impl RebuildOutput {
    /// Of the lost sessions this rebuild dealt with: how many run again in their slots (resumed
    /// in place, or adopted and resumed in a rebuilt window), and how many do not.
    pub fn lost_back(&self) -> (usize, usize) {
        // Running already (a second rebuild after one that stopped midway) counts as back.
        let back = self
            .lost
            .iter()
            .filter(|l| {
                matches!(l.outcome, LostResult::Unpark(o) if o.reached())
                    || (l.outcome == LostResult::Journal(LostOutcome::Adopted)
                        && self.windows.iter().any(|w| {
                            w.slots.iter().any(|s| {
                                s.entry.as_deref() == Some(l.entry.as_str())
                                    && matches!(s.outcome, SlotResult::Unpark(o) if o.reached())
                            })
                        }))
            })
            .count();
        (back, self.lost.len() - back)
    }

    /// One line for people: what a rebuild of lost sessions brought back, and whether all came.
    pub fn lost_line(&self) -> (String, bool) {
        let (back, not) = self.lost_back();
        let mut s = match back {
            1 => "1 lost session is back in its pane".to_string(),
            n => format!("{n} lost sessions are back in their panes"),
        };
        if not > 0 {
            s.push_str(&format!("; {not} not (`park rebuild --dry-run` says why)"));
        }
        (s, not == 0)
    }
}

/// A journaled session found lost (its process and its multiplexer server gone), as `park
/// snapshot` and `park rebuild` report it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LostSession {
    /// The ledger entry id it gets (or got) when adopted.
    pub entry: String,
    pub agent: Agent,
    pub session_id: String,
    pub cwd: String,
    pub server: String,
    pub session: String,
    pub window_index: u32,
    pub window_name: String,
    pub pane_index: u32,
    /// When park last saw it live.
    pub last_seen: String,
    /// `lost` (listed), `would-adopt` (dry run), `adopted` (now a parked entry the rebuild resumes),
    /// `skipped` (see `reason`), or the outcome of its unpark where park resumed it in place
    /// (`unparked`, `refused`, …).
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub outcome: LostResult,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// `park snapshot --json`: what the journal holds after the pass.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SnapshotOutput {
    pub schema: u32,
    /// The journal file.
    pub journal: String,
    /// Live sessions recorded by this pass.
    pub live: Vec<JournalLive>,
    /// Sessions kept because their multiplexer died with them (`park rebuild` brings them back).
    pub lost: Vec<LostSession>,
    /// Live sessions kept as they were, and why: their process runs, but this pass did not bind
    /// it to a pane with its session id (an agent that is ending, or the pane map unavailable).
    #[serde(default)]
    pub kept: Vec<JournalLeft>,
    /// Sessions that left the journal at this pass, and why (exited, parked, running again).
    pub left: Vec<JournalLeft>,
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct JournalLive {
    pub agent: Agent,
    pub session_id: String,
    pub pane: String,
    pub session: String,
    pub window_index: u32,
    pub pane_index: u32,
    pub cwd: String,
    pub flags: Vec<String>,
    pub pid: u32,
}

/// `park resurrect save|restore --json`: what park did in a tmux-resurrect hook.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ResurrectOutput {
    pub schema: u32,
    /// `save` or `restore`.
    pub action: String,
    pub dry_run: bool,
    /// The tmux-resurrect save file (`last`) the journal copy is named by.
    pub save_file: Option<String>,
    /// park's copy of the journal for that save.
    pub copy: Option<String>,
    /// Live sessions journaled (save).
    pub recorded: u32,
    /// Each lost session and what became of it (restore): `unparked` in its restored pane,
    /// `would-adopt` (dry run), `refused` (the unpark's reason) or `skipped`.
    pub sessions: Vec<LostSession>,
    pub warnings: Vec<String>,
}

/// A session named by a journal pass with why it was not recorded live (`left`, `kept`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct JournalLeft {
    pub agent: Agent,
    pub session_id: String,
    pub reason: String,
}

/// One transcript's outcome in `park archive --all`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ProtectItem {
    pub agent: Agent,
    pub session_id: String,
    /// The agent's transcript.
    pub transcript: String,
    /// `archived`, `would-archive`, `unchanged`, `partial` (it changed during every copy; the
    /// next run copies it again), `skipped` (see `reason`; needs a look), `empty` (no
    /// conversation to keep), `not-due` (not near the agent's cleanup age).
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub outcome: ProtectOutcome,
    pub reason: Option<String>,
    /// Bytes copied (archived), or that would be (would-archive).
    pub bytes: u64,
}

/// `park archive --all --json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ProtectOutput {
    pub schema: u32,
    pub dry_run: bool,
    pub archived: usize,
    pub unchanged: usize,
    pub skipped: usize,
    pub partial: usize,
    pub not_due: usize,
    pub empty: usize,
    /// Bytes copied by this run.
    pub bytes: u64,
    /// Total size of `$PARK_HOME/archive` after the run.
    pub archive_bytes: u64,
    pub items: Vec<ProtectItem>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PruneItem {
    pub session_id: String,
    pub bytes: u64,
    /// Why it is kept (kept rows only).
    pub reason: Option<String>,
}

/// `park archive --prune --json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PruneOutput {
    pub schema: u32,
    pub dry_run: bool,
    pub older_than: String,
    /// Removed (or, with `dry_run` or unconfirmed, that would be).
    pub removed: Vec<PruneItem>,
    pub kept: Vec<PruneItem>,
    pub freed_bytes: u64,
    pub archive_bytes: u64,
}

/// One session's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RecoverItem {
    pub session_id: String,
    /// The id is synthetic (the history named no session; prompts clustered by project and time).
    pub synthetic: bool,
    pub cwd: String,
    pub prompts: usize,
    pub first_at: String,
    pub last_at: String,
    /// `recovered`, `would-recover`, `skipped` (see `reason`).
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub outcome: RecoverOutcome,
    pub reason: Option<String>,
}

/// `park recover --json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RecoverOutput {
    pub schema: u32,
    pub dry_run: bool,
    /// The history files read.
    pub history: Vec<String>,
    /// Lines that are not a prompt record (skipped).
    pub bad_lines: usize,
    pub recovered: usize,
    pub skipped: usize,
    pub items: Vec<RecoverItem>,
    pub warnings: Vec<String>,
}

/// Serialized as its kebab-case name; printed padded to a column when asked.
macro_rules! outcome_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $v:ident => $s:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum $name {
            $($(#[$vdoc])* #[serde(rename = $s)] $v),+
        }

        impl $name {
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$v => $s),+
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.pad(self.as_str())
            }
        }

        /// Compares with the JSON spelling (`outcome == "skipped"`).
        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.as_str() == *other
            }
        }
    };
}

outcome_enum! {
    /// What `park archive --all` did with one transcript (see [`ProtectItem::outcome`]).
    ProtectOutcome {
        Archived => "archived",
        WouldArchive => "would-archive",
        Unchanged => "unchanged",
        Partial => "partial",
        Skipped => "skipped",
        Empty => "empty",
        NotDue => "not-due",
    }
}

outcome_enum! {
    /// What `park recover` did with one session (see [`RecoverItem::outcome`]).
    RecoverOutcome {
        Recovered => "recovered",
        WouldRecover => "would-recover",
        Skipped => "skipped",
    }
}

outcome_enum! {
    /// What `park rebuild` did with one slot itself.
    RebuildOutcome {
        WouldRebuild => "would-rebuild",
        /// The slot held no parked agent: a shell in its cwd.
        Shell => "shell",
        /// Re-pointed to the new pane and left parked.
        Rebuilt => "rebuilt",
        Refused => "refused",
        Failed => "failed",
    }
}

outcome_enum! {
    /// What became of a session lost with its multiplexer (see [`LostSession::outcome`]).
    LostOutcome {
        Lost => "lost",
        WouldAdopt => "would-adopt",
        Adopted => "adopted",
        Skipped => "skipped",
    }
}

/// A lost session's outcome: the journal's own, or its unpark's where park resumed it in place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum LostResult {
    Journal(LostOutcome),
    Unpark(Outcome),
}

impl LostResult {
    pub fn as_str(self) -> &'static str {
        match self {
            LostResult::Journal(o) => o.as_str(),
            LostResult::Unpark(o) => o.as_str(),
        }
    }
    /// Back, or about to be (`adopted`, `would-adopt`, `unparked`, `already-running`): not
    /// something left to do.
    pub fn back(self) -> bool {
        match self {
            LostResult::Journal(o) => matches!(o, LostOutcome::Adopted | LostOutcome::WouldAdopt),
            LostResult::Unpark(o) => o.reached(),
        }
    }
}

impl From<LostOutcome> for LostResult {
    fn from(o: LostOutcome) -> Self {
        LostResult::Journal(o)
    }
}

/// Compares with the JSON spelling (`outcome == "adopted"`).
impl PartialEq<&str> for LostResult {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl std::fmt::Display for LostResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

/// One slot of a rebuilt window: rebuild's own outcome, or the outcome of the slot's unpark.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SlotResult {
    Rebuild(RebuildOutcome),
    Unpark(Outcome),
}

impl SlotResult {
    pub fn as_str(self) -> &'static str {
        match self {
            SlotResult::Rebuild(o) => o.as_str(),
            SlotResult::Unpark(o) => o.as_str(),
        }
    }
}

/// Compares with the JSON spelling (`outcome == "rebuilt"`).
impl PartialEq<&str> for SlotResult {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl std::fmt::Display for SlotResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lost(entry: &str, outcome: LostResult) -> LostSession {
        LostSession {
            entry: entry.into(),
            agent: Agent::Claude,
            session_id: "s".into(),
            cwd: "/w".into(),
            server: "default".into(),
            session: "w".into(),
            window_index: 0,
            window_name: "w".into(),
            pane_index: 0,
            last_seen: "2026-12-07T00:00:00Z".into(),
            outcome,
            reason: None,
        }
    }

    fn slot(entry: &str, outcome: SlotResult) -> SlotOutcome {
        SlotOutcome {
            pane_index: 0,
            pane: None,
            cwd: "/w".into(),
            command: String::new(),
            entry: Some(entry.into()),
            session_id: None,
            agent: None,
            outcome,
            reason: None,
        }
    }

    /// A second rebuild after one stopped midway finds the session running already: that is
    /// back, not something left to do (it would exit 1 otherwise).
    #[test]
    fn running_already_counts_as_back() {
        assert!(LostResult::Unpark(Outcome::AlreadyRunning).back());
        assert!(!LostResult::Unpark(Outcome::Refused).back());
        let out = RebuildOutput {
            schema: 1,
            server: "default".into(),
            dry_run: false,
            windows: vec![WindowOutcome {
                group: None,
                session: "w".into(),
                window_index: 0,
                window_name: "w".into(),
                built_index: Some(0),
                layout: None,
                notes: vec![],
                slots: vec![
                    slot("b", SlotResult::Unpark(Outcome::AlreadyRunning)),
                    slot("c", SlotResult::Unpark(Outcome::Failed)),
                ],
            }],
            relocated: vec![],
            skipped: vec![],
            warnings: vec![],
            lost: vec![
                lost("a", LostResult::Unpark(Outcome::AlreadyRunning)),
                lost("b", LostResult::Journal(LostOutcome::Adopted)),
                lost("c", LostResult::Journal(LostOutcome::Adopted)),
            ],
        };
        assert_eq!(out.lost_back(), (2, 1));
    }
}
