//! What the autopilot prints: `park auto status --json` (a dry evaluation now) and
//! `park daemon --once --json` (one pass, with what it parked). Same contract as the rest of the
//! crate: fields are only added within one `schema`.

use crate::{ActionResult, Agent};
use serde::{Deserialize, Serialize};

/// One agent's decision in a pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum Decision {
    /// Parked by this pass.
    Parked,
    /// Suggest mode (or a dry evaluation): the pass would park it.
    Suggested,
    /// Kept live; `reason` says why.
    Kept,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AutoAgent {
    pub pane: String,
    pub agent: Agent,
    pub session_id: Option<String>,
    pub decision: Decision,
    pub reason: String,
    /// 1-based place in the least-recently-used order, for candidates.
    pub rank: Option<usize>,
    /// Seconds since the later of its last real turn and its start (a resume).
    pub quiet_seconds: Option<u64>,
    pub anon_bytes: u64,
    /// The usage-limit message its screen shows (with `limit_reset`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<String>,
}

/// The policy's figures now.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AutoBudget {
    /// Live agents in panes.
    pub live: usize,
    pub max_live: Option<usize>,
    /// Their anonymous memory, bytes.
    pub anon_bytes: u64,
    pub ram_budget: Option<u64>,
    pub mem_available: Option<u64>,
    pub mem_total: Option<u64>,
    /// `min_available` in bytes on this machine.
    pub min_available: Option<u64>,
    /// The kernel's memory pressure (`some avg10=… total=…`), where it has PSI.
    pub psi: Option<String>,
    /// The budget that is exceeded now, worded; `None` when every one holds.
    pub over: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AutoReport {
    pub schema: u32,
    /// `off`, `suggest` or `park`.
    pub mode: String,
    /// RFC 3339 time of the evaluation.
    pub at: String,
    /// Why the pass ran: `status`, `interval`, `pressure`, `once`.
    pub trigger: String,
    /// The config file read, if any.
    pub config: Option<String>,
    /// A fingerprint of the `[auto]` settings the pass ran with: its suggestions stand only while
    /// the settings in force have the same one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_stamp: Option<String>,
    pub idle_seconds: u64,
    pub per_pass: usize,
    pub budget: AutoBudget,
    pub agents: Vec<AutoAgent>,
    /// The parks this pass made (empty in a dry evaluation or suggest mode).
    #[serde(default)]
    pub results: Vec<ActionResult>,
    /// The daemon that runs passes, if one is running.
    #[serde(default)]
    pub daemon_pid: Option<u32>,
}

impl AutoReport {
    pub fn suggested(&self) -> usize {
        self.agents
            .iter()
            .filter(|a| a.decision == Decision::Suggested)
            .count()
    }
}
