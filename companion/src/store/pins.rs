//! Pinned sessions (issue 21 item 4): `park pin <target>…` / `park unpin <target>…`. A pinned
//! session is never parked by the autopilot; a person's own `park park` still parks it.
//!
//! Contract: pins live in `$PARK_HOME/pins.json` (`{"schema":1,"pins":[{agent, session_id,
//! pinned_at}]}`, written atomically, 0600) and name a **session id**, not a pane, so a pin follows
//! the conversation across parks, unparks and pane moves. A session id must be a canonical id (`valid_session_id`) before it is
//! written. A corrupt file is an error for the caller
//! to report, and is never rewritten over (pin/unpin refuse; readers that only decide, like the
//! autopilot, treat every agent as pinned: a broken pin file never lets it park one).

use crate::store::ledger::write_atomic;
use park_protocol::Agent;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pin {
    pub agent: Agent,
    pub session_id: String,
    pub pinned_at: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct File {
    schema: u32,
    pins: Vec<Pin>,
}

pub fn path(home: &Path) -> PathBuf {
    home.join("pins.json")
}

/// The pins, or an error naming the file (missing file: none).
pub fn load(home: &Path) -> Result<Vec<Pin>, String> {
    match std::fs::read(path(home)) {
        Ok(b) => serde_json::from_slice::<File>(&b)
            .map(|f| f.pins)
            .map_err(|e| {
                format!(
                    "{} is not a valid pins file ({e}); fix or remove it",
                    path(home).display()
                )
            }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(vec![]),
        Err(e) => Err(format!("cannot read {}: {e}", path(home).display())),
    }
}

/// The pin set a reader can test membership against.
#[derive(Debug, Clone, Default)]
pub struct Pins {
    ids: Vec<String>,
    /// The file could not be read: treat every session as pinned.
    pub broken: Option<String>,
}

impl Pins {
    pub fn read(home: &Path) -> Pins {
        match load(home) {
            Ok(p) => Pins {
                ids: p.into_iter().map(|p| p.session_id.to_lowercase()).collect(),
                broken: None,
            },
            Err(e) => Pins {
                ids: vec![],
                broken: Some(e),
            },
        }
    }

    pub fn contains(&self, session_id: &str) -> bool {
        self.ids.iter().any(|p| p.eq_ignore_ascii_case(session_id))
    }
}

fn save(home: &Path, pins: Vec<Pin>) -> Result<(), String> {
    crate::store::ledger::private_dir(home).map_err(|e| e.to_string())?;
    let json = serde_json::to_vec_pretty(&File { schema: 1, pins }).expect("pins serialise");
    write_atomic(&path(home), &json).map_err(|e| e.to_string())
}

/// Pins (`on`) or unpins each (agent, session id); returns how many changed. Refuses (and writes
/// nothing) when the file is corrupt or an id is not a session id park accepts.
pub fn set(home: &Path, sessions: &[(Agent, String)], on: bool) -> Result<usize, String> {
    for (_, id) in sessions {
        if crate::agents::transcript::valid_session_id(id).is_none() {
            return Err(format!("{id:?} is not a session id"));
        }
    }
    // Two pin commands at once: the second waits its turn (briefly) rather than losing a pin.
    let mut tries = 0;
    let _lock = loop {
        match crate::store::lock::try_lock(home, "pins").map_err(|e| e.to_string())? {
            crate::store::lock::TryLock::Acquired(l) => break l,
            crate::store::lock::TryLock::Held(_) if tries < 50 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            crate::store::lock::TryLock::Held(o) => {
                return Err(format!("the pins file is busy (pid {o}); try again"))
            }
        }
    };
    let mut pins = load(home)?;
    let before = pins.clone();
    let now = jiff::Timestamp::now().to_string();
    for (agent, id) in sessions {
        let id = id.to_lowercase();
        let has = pins.iter().any(|p| p.session_id.eq_ignore_ascii_case(&id));
        if on && !has {
            pins.push(Pin {
                agent: *agent,
                session_id: id,
                pinned_at: now.clone(),
            });
        } else if !on && has {
            pins.retain(|p| !p.session_id.eq_ignore_ascii_case(&id));
        }
    }
    let changed = pins.len().abs_diff(before.len());
    if pins != before {
        save(home, pins)?;
    }
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "4cc4dc9f-c0f8-464d-99d4-601c9c0c1a49";
    const B: &str = "01a2444b-200f-7f50-98e6-b0d086c16aa3";

    #[test]
    fn pin_unpin_follow_ids_and_survive_reload() {
        let d = tempfile::tempdir().unwrap();
        let h = d.path();
        assert_eq!(load(h).unwrap(), vec![]);
        assert_eq!(
            set(
                h,
                &[(Agent::Claude, A.to_uppercase()), (Agent::Codex, B.into())],
                true
            )
            .unwrap(),
            2
        );
        assert_eq!(set(h, &[(Agent::Claude, A.into())], true).unwrap(), 0);
        let p = Pins::read(h);
        assert!(p.contains(A) && p.contains(B) && !p.contains("x"));
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path(h)).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(set(h, &[(Agent::Claude, A.into())], false).unwrap(), 1);
        assert!(!Pins::read(h).contains(A));
        assert!(set(h, &[(Agent::Claude, "../x".into())], true).is_err());
    }

    #[test]
    fn a_corrupt_file_is_reported_never_rewritten_and_pins_everything() {
        let d = tempfile::tempdir().unwrap();
        let h = d.path();
        std::fs::write(path(h), b"{not json").unwrap();
        let e = set(h, &[(Agent::Claude, A.into())], true).unwrap_err();
        assert!(e.contains("not a valid pins file"), "{e}");
        assert_eq!(std::fs::read(path(h)).unwrap(), b"{not json");
        let p = Pins::read(h);
        assert!(p.broken.is_some());
    }
}
