//! Which sessions are running right now, from one scan: the set every unpark and archive
//! decision checks so a session never gets a second process.

use super::Scan;
use crate::agents::Agent;

/// A running agent process whose session could not be identified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unidentified {
    pub agent: Agent,
    /// Its config dir (empty when unknown: then it could be any).
    pub config_dir: String,
    pub pid: u32,
}

/// Session ids running right now, lowercased, plus how many agents could not be identified.
#[derive(Debug, Default, Clone)]
pub struct LiveSet {
    pub ids: Vec<String>,
    /// Running processes whose session could not be identified, of agents for which that means
    /// any session of their config dir could be theirs (`AgentKind::unidentified_blocks_unpark`).
    pub unidentified: Vec<Unidentified>,
    /// How many other agents' processes are not identified yet (they block nothing).
    pub unidentified_other: usize,
    /// Ids (lowercased) run by Claude's background supervisor, with their job (`claude attach`).
    pub background: Vec<(String, Option<String>)>,
}

impl LiveSet {
    pub fn from_scan(s: &Scan) -> Self {
        let mut l = LiveSet::default();
        for f in &s.found {
            match &f.ident.session_id {
                Some(id) => {
                    l.ids.push(id.to_lowercase());
                    if f.proc.background {
                        l.background.push((id.to_lowercase(), f.ident.job.clone()));
                    }
                }
                None if crate::agents::of(f.proc.agent)
                    .spec()
                    .unidentified_blocks_unpark =>
                {
                    l.unidentified.push(Unidentified {
                        agent: f.proc.agent,
                        config_dir: crate::agents::of(f.proc.agent)
                            .spec()
                            .config
                            .dir(&f.proc.env)
                            .map(|d| d.to_string_lossy().into_owned())
                            .unwrap_or_default(),
                        pid: f.proc.root,
                    });
                }
                None => l.unidentified_other += 1,
            }
        }
        l
    }

    pub fn contains(&self, id: &str) -> bool {
        self.ids.iter().any(|i| i.eq_ignore_ascii_case(id))
    }

    /// The background job running `id`, when Claude's supervisor runs it (`Some(None)`: a
    /// background session whose job id is unknown).
    pub fn background_job(&self, id: &str) -> Option<Option<&str>> {
        self.background
            .iter()
            .find(|(i, _)| i.eq_ignore_ascii_case(id))
            .map(|(_, j)| j.as_deref())
    }
}
