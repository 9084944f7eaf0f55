//! A session's record in the archive (`archive/<id>/meta.json`, mirrored to `NOTES.md`) and where
//! it lives. The plain layer both the archive and its index stand on.

use crate::model::entry::{Entry, MuxPlace};
use crate::store::ledger::{private_dir, write_atomic, LedgerError};
use park_protocol::Agent;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

pub const TOMB_SCHEMA: u32 = 1;
/// Summaries are for listing: cut long messages (the full text is in transcript.md).
pub(crate) const SUMMARY_CHARS: usize = 600;

pub fn root(home: &Path) -> PathBuf {
    home.join("archive")
}

pub fn dir(home: &Path, session_id: &str) -> PathBuf {
    root(home).join(session_id)
}

/// A session's record in the archive: who it is, where it lived, how to bring it back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tombstone {
    pub schema: u32,
    pub agent: Agent,
    pub session_id: String,
    pub cwd: String,
    pub program: String,
    pub flags: Vec<String>,
    #[serde(default)]
    pub config_dir: Option<String>,
    #[serde(default)]
    pub config_var: Option<String>,
    /// Where the agent kept the transcript when it was archived.
    #[serde(default)]
    pub source_transcript: Option<String>,
    pub place: MuxPlace,
    #[serde(default)]
    pub ai_title: Option<String>,
    #[serde(default)]
    pub first_prompt: Option<String>,
    #[serde(default)]
    pub last_assistant: Option<String>,
    /// First time it was parked (kept across re-parks).
    #[serde(default)]
    pub parked_at: Option<String>,
    pub archived_at: String,
    #[serde(default)]
    pub last_active: Option<String>,
    #[serde(default)]
    pub group: Option<String>,
    #[serde(default)]
    pub notes: String,
    #[serde(default)]
    pub transcript_bytes: u64,
    #[serde(default)]
    pub markdown_bytes: u64,
    #[serde(default)]
    pub turns: u64,
    /// What the archive could not verify (unreadable or truncated records near the end); the raw
    /// `transcript.jsonl` holds them, `transcript.md` does not.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Rebuilt by `park recover` from the agent's prompt history: no transcript, never resumable.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub prompts_only: bool,
}

impl Tombstone {
    /// The one-line summary every view shows: the first prompt, else the last reply.
    pub fn summary(&self) -> String {
        let s = self
            .first_prompt
            .as_deref()
            .or(self.last_assistant.as_deref())
            .unwrap_or("");
        let one: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
        cut(&one, 160)
    }

    /// A ledger entry that resumes this session (for resurrecting a tombstone). The pane is left
    /// empty: a resurrected session opens a new window, it never types into whatever pane now
    /// has the old id.
    pub fn to_entry(&self) -> Entry {
        let mut place = self.place.clone();
        place.pane = String::new();
        Entry {
            schema: crate::model::entry::ENTRY_SCHEMA,
            id: crate::model::entry::entry_id(self.agent, &self.session_id),
            state: crate::model::entry::EntryState::Parked,
            agent: self.agent,
            session_id: self.session_id.clone(),
            session_source: "archive".into(),
            cwd: self.cwd.clone(),
            program: self.program.clone(),
            flags: self.flags.clone(),
            dropped_flags: vec![],
            transcript: self.source_transcript.clone(),
            config_dir: self.config_dir.clone(),
            config_var: self.config_var.clone(),
            place,
            pane_owned: false,
            parked_at: jiff::Timestamp::now().to_string(),
            last_active: self.last_active.clone(),
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
            group: self.group.clone(),
            fresh_from: None,
            wake: None,
            agent_version: None,
            shell_path: None,
        }
    }
}

pub fn cut(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        s.chars().take(n.saturating_sub(1)).collect::<String>() + "…"
    }
}

pub fn checked_id(sid: &str) -> Result<String, LedgerError> {
    // The id names a directory: only a validated session id may (never `..` or a path).
    let checked = if crate::support::fault::disabled("archive-id") {
        Some(sid.to_string())
    } else {
        crate::agents::transcript::valid_session_id(sid)
    };
    checked.ok_or_else(|| LedgerError::BadId(sid.to_string()))
}

pub fn read_meta(d: &Path) -> Result<Tombstone, LedgerError> {
    let p = d.join("meta.json");
    let b = crate::store::ledger::read_nofollow(&p)?;
    serde_json::from_slice(&b).map_err(|e| LedgerError::Corrupt(p, e.to_string()))
}

pub fn write_meta(home: &Path, t: &Tombstone) -> Result<(), LedgerError> {
    let d = dir(home, &checked_id(&t.session_id)?);
    private_dir(&root(home))?;
    private_dir(&d)?;
    write_atomic(
        &d.join("meta.json"),
        serde_json::to_string_pretty(t)
            .expect("tombstone serialises")
            .as_bytes(),
    )?;
    // NOTES.md mirrors the notes for people browsing the archive; `park note` edits them.
    let notes = d.join("NOTES.md");
    if t.notes.trim().is_empty() {
        let _ = std::fs::remove_file(&notes);
        Ok(())
    } else {
        write_atomic(&notes, t.notes.as_bytes())
    }
}
