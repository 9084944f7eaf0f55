//! `park integrate` and `park hook`: the opt-in integrations agents need for an exact session
//! (Gemini's hooks), listed, installed and removed with the user's consent, and the hook's side.
//!
//! Contract: nothing is installed unless asked (`park integrate <agent>`); `park integrate` alone
//! only reads. Installing leaves a marker `$PARK_HOME/integrations/<agent>/installed` (the
//! settings file it edited) so `park doctor` can tell "removed since" (an agent update rewrote its
//! settings) from "never installed"; `--remove` takes the marker away with the hooks.
//! No agent is named here: each integration is its agent's ([`crate::agents::Integration`]).

use crate::adapters::platform::Platform;
use crate::agents::{self, Agent, IntegrationState};
use std::path::{Path, PathBuf};

/// One agent's integration, as listed.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub agent: Agent,
    pub file: Option<PathBuf>,
    pub state: IntegrationState,
    /// park installed it here once (its marker is present).
    pub installed_by_park: bool,
}

fn marker(home: &Path, agent: Agent) -> PathBuf {
    home.join("integrations")
        .join(agent.as_str())
        .join("installed")
}

/// Every agent that has an integration, with its state for `env`.
pub fn list(home: &Path, env: &[(String, String)]) -> Vec<Row> {
    agents::all()
        .into_iter()
        .filter_map(|k| {
            let i = k.spec().integration?;
            Some(Row {
                agent: k.spec().agent,
                file: i.file(env),
                state: i.state(env),
                installed_by_park: marker(home, k.spec().agent).is_file(),
            })
        })
        .collect()
}

/// The agents `name` selects among those with an integration (`None`: unknown, or none there).
pub fn by_name(name: &str) -> Option<Agent> {
    agents::all()
        .into_iter()
        .map(|k| k.spec())
        .find(|s| s.agent.as_str() == name && s.integration.is_some())
        .map(|s| s.agent)
}

pub fn names() -> Vec<&'static str> {
    agents::all()
        .into_iter()
        .map(|k| k.spec())
        .filter(|s| s.integration.is_some())
        .map(|s| s.agent.as_str())
        .collect()
}

/// Installs `agent`'s integration for `park_exe`; returns what changed.
pub fn install(
    home: &Path,
    env: &[(String, String)],
    agent: Agent,
    park_exe: &Path,
) -> Result<String, String> {
    let i = agents::of(agent)
        .spec()
        .integration
        .ok_or_else(|| format!("{} needs no integration", agent.as_str()))?;
    let said = i.install(env, park_exe)?;
    let m = marker(home, agent);
    if let Some(dir) = m.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let file = i
        .file(env)
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    std::fs::write(&m, format!("{file}\n")).map_err(|e| format!("{}: {e}", m.display()))?;
    Ok(said)
}

/// Removes `agent`'s integration; returns what changed.
pub fn remove(home: &Path, env: &[(String, String)], agent: Agent) -> Result<String, String> {
    let i = agents::of(agent)
        .spec()
        .integration
        .ok_or_else(|| format!("{} has no integration", agent.as_str()))?;
    let said = i.remove(env)?;
    let _ = std::fs::remove_file(marker(home, agent));
    Ok(said)
}

/// `park hook <agent>`: records the hook input for the agent process that ran it.
pub fn hook(
    home: &Path,
    agent: Agent,
    input: &[u8],
    platform: &dyn Platform,
) -> Result<(), String> {
    let i = agents::of(agent)
        .spec()
        .integration
        .ok_or_else(|| format!("{} has no hook", agent.as_str()))?;
    i.record(input, home, platform)
}

/// Why a row is a problem for `park doctor` (`None`: fine).
pub fn problem(r: &Row) -> Option<String> {
    match &r.state {
        IntegrationState::Broken(why) => Some(why.clone()),
        IntegrationState::Missing if r.installed_by_park => Some(format!(
            "park's hooks are no longer in {} (removed by hand or by an update of {}): its sessions are untargetable again",
            r.file.as_deref().map(|p| p.display().to_string()).unwrap_or_default(),
            r.agent.as_str()
        )),
        IntegrationState::Unreadable(why) if r.installed_by_park => Some(why.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Install, list, doctor's verdict after the hooks vanished, remove: against a real
    /// settings file in a scratch HOME.
    #[test]
    fn install_list_removed_since_and_remove() {
        let d = tempfile::tempdir().unwrap();
        let home = d.path().join("park");
        let env = vec![("HOME".to_string(), d.path().to_string_lossy().into_owned())];
        let exe = std::env::current_exe().unwrap();
        let row = |rows: Vec<Row>| rows.into_iter().find(|r| r.agent == Agent::Gemini).unwrap();
        let r = row(list(&home, &env));
        assert_eq!(
            (r.state.clone(), r.installed_by_park),
            (IntegrationState::Missing, false)
        );
        assert_eq!(problem(&r), None, "never installed is no problem");
        install(&home, &env, Agent::Gemini, &exe).unwrap();
        let r = row(list(&home, &env));
        assert_eq!(
            (r.state.clone(), r.installed_by_park),
            (IntegrationState::Installed, true)
        );
        assert_eq!(problem(&r), None);
        // An update rewrote the settings without our hooks.
        std::fs::write(r.file.as_ref().unwrap(), "{\"theme\":\"x\"}").unwrap();
        let r = row(list(&home, &env));
        assert!(problem(&r).unwrap().contains("no longer in"), "{r:?}");
        install(&home, &env, Agent::Gemini, &exe).unwrap();
        remove(&home, &env, Agent::Gemini).unwrap();
        let r = row(list(&home, &env));
        assert_eq!(
            (r.state.clone(), r.installed_by_park),
            (IntegrationState::Missing, false)
        );
        assert_eq!(by_name("gemini"), Some(Agent::Gemini));
        assert_eq!(by_name("claude"), None, "Claude needs none");
        assert!(names().contains(&"gemini"));
    }
}
