//! A ledger entry: everything needed to bring one parked session back (agent, session id, cwd,
//! flags, transcript, the pane it lived in, its wake-up) and the state of its park/unpark
//! transaction. Plain data: `store::ledger` reads and writes it, the guards and the agents read it.

use park_protocol::Agent;
use serde::{Deserialize, Serialize};

pub const ENTRY_SCHEMA: u32 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EntryState {
    /// Claimed; the kill has not finished. The session may still be alive.
    Parking,
    /// The agent is gone; this entry is how to bring it back.
    Parked,
    /// An unpark started the agent and is verifying it.
    Resuming,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MuxPlace {
    pub kind: String,
    /// tmux: the server's socket path.
    pub server: String,
    pub pane: String,
    pub session: String,
    pub window_index: u32,
    pub window_name: String,
    pub pane_index: u32,
    pub title: String,
    /// The pane's own title before park pinned `❄ …` on it; restored on unpark and forget.
    #[serde(default)]
    pub pane_title: String,
    /// The pane's own process at park time (pid, start ticks; 0 = not recorded): the pane still
    /// runs it, so it is this pane even without a pill (a park interrupted before the pill was
    /// set). A server restart gives a reused `%N` another process.
    #[serde(default)]
    pub pane_proc: (u32, u64),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub schema: u32,
    pub id: String,
    pub state: EntryState,
    pub agent: Agent,
    pub session_id: String,
    pub session_source: String,
    pub cwd: String,
    /// The program token the agent was started with (`claude`, `/x/.bin/codex`).
    pub program: String,
    pub flags: Vec<String>,
    pub dropped_flags: Vec<String>,
    pub transcript: Option<String>,
    /// `CLAUDE_CONFIG_DIR` / `CODEX_HOME` in effect, so unpark can check the transcript.
    pub config_dir: Option<String>,
    /// How the agent found `config_dir`: `CLAUDE_CONFIG_DIR`, `CODEX_HOME`, or `HOME` (the default
    /// under it). Unpark sets that variable when the pane's environment would point elsewhere.
    #[serde(default)]
    pub config_var: Option<String>,
    pub place: MuxPlace,
    /// The agent was the pane's own process (a placeholder keeps the pane), not a child of a shell.
    pub pane_owned: bool,
    pub parked_at: String,
    pub last_active: Option<String>,
    pub bytes: u64,
    pub uss_bytes: u64,
    pub pss_bytes: u64,
    #[serde(default)]
    pub anon_bytes: u64,
    pub freed_bytes: Option<u64>,
    pub killed_pids: Vec<u32>,
    /// While `Resuming`: who is resuming (pid, start ticks).
    pub resumer: Option<(u32, u64)>,
    pub last_error: Option<String>,
    /// While `Resuming` by hand-off: the pane that was asked to run the resume itself.
    #[serde(default)]
    pub handoff_pane: Option<String>,
    /// The git checkout at park time (branch, HEAD, dirty count), for `doctor`'s drift report.
    #[serde(default)]
    pub worktree: Option<Fingerprint>,
    /// Window group: every pane of a window parked together shares it (`groups/<id>.json` holds
    /// the layout), and re-parking the window reuses it.
    #[serde(default)]
    pub group: Option<String>,
    /// Set while resuming a session whose transcript could not be restored: the archived
    /// Markdown a fresh agent is started with instead (`unpark` says so).
    #[serde(default)]
    pub fresh_from: Option<String>,
    /// What this parked session waits for to wake by itself, and the note it gets then.
    #[serde(default)]
    pub wake: Option<crate::model::wake::Wake>,
    /// The agent's version at park time (from its package), when it could be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_version: Option<String>,
    /// The agent's `PATH` at park time: what its shell exported after a login shell's profile
    /// ran. A shell a rebuild gives back runs that profile again, so the way back typed there is
    /// judged by it, as the park's own prefill is (`Ctx::typed_name_seen`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shell_path: Option<String>,
}

pub fn valid_entry_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && id != "."
        && id != ".."
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

pub fn entry_id(agent: Agent, session_id: &str) -> String {
    format!("{}-{}", agent.as_str(), session_id.to_lowercase())
}

/// A git checkout at park time, for `doctor`'s drift report (`adapters::worktree` reads it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprint {
    /// Branch name, or `(detached)`.
    pub branch: String,
    /// Commit id, or `(initial)` before the first commit.
    pub head: String,
    /// Changed, staged, untracked and conflicted paths.
    pub dirty: u32,
}

/// How the journal's records name where their session id came from (`journal (status-file)`).
pub const FROM_JOURNAL: &str = "journal (";

impl Entry {
    /// An entry the journal recorded for a live session, parked by a rebuild's adoption after its
    /// multiplexer died: the session was live at the crash, and `rebuild --as-before` resumes it.
    pub fn from_journal(&self) -> bool {
        self.session_source.starts_with(FROM_JOURNAL)
    }
}

#[cfg(test)]
impl Entry {
    /// A parked entry of `agent` for tests: a tmux pane `%3` in `/src/api`, nothing else set.
    pub(crate) fn sample(agent: Agent, session_id: &str) -> Entry {
        Entry {
            schema: ENTRY_SCHEMA,
            id: entry_id(agent, session_id),
            state: EntryState::Parked,
            agent,
            session_id: session_id.into(),
            session_source: "status-file".into(),
            cwd: "/src/api".into(),
            program: agent.as_str().into(),
            flags: vec![],
            dropped_flags: vec![],
            transcript: None,
            config_dir: Some("/home/u/.claude".into()),
            config_var: None,
            place: MuxPlace {
                kind: "tmux".into(),
                server: "/tmp/tmux-0/default".into(),
                pane: "%3".into(),
                session: "work".into(),
                window_index: 1,
                window_name: "api".into(),
                pane_index: 0,
                title: "t".into(),
                pane_title: String::new(),
                pane_proc: (0, 0),
            },
            pane_owned: false,
            parked_at: "2026-12-05T00:00:00Z".into(),
            last_active: None,
            bytes: 0,
            uss_bytes: 0,
            pss_bytes: 0,
            anon_bytes: 0,
            freed_bytes: None,
            killed_pids: vec![],
            resumer: None,
            last_error: None,
            handoff_pane: None,
            worktree: None,
            group: None,
            fresh_from: None,
            wake: None,
            agent_version: None,
            shell_path: None,
        }
    }
}
