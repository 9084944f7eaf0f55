//! The unpark rules: pure functions of what an unpark read under its locks (the entry, who runs
//! its session now, the agent's writer lock, the disk). `ops::unpark` gathers the evidence, asks
//! here, and carries out the answer (tearing a parked state down, restoring a transcript, starting
//! the agent); nothing here reads the system.
//!
//! Order (`before_start`, then the archive restore, then `restorable`), the first answer wins:
//! **resuming → running → codex-writer-lock → unidentified-claude**, then **session-id → program →
//! cwd → transcript**. Each rule is switched off by its guard-mutation name
//! (`unpark-resuming`, `unpark-running`, `codex-writer-lock`, `unpark-unidentified`,
//! `unpark-session-id`, `unpark-program`, `unpark-cwd`, `unpark-transcript`; tests/GUARDS.md).

use crate::model::entry::{Entry, EntryState};
use crate::scan::live::LiveSet;
use crate::support::fault::disabled;
use std::path::Path;

/// What `before_start` saw, read by the unpark under the session lock.
pub(crate) struct Evidence<'a> {
    pub entry: &'a Entry,
    /// The entry's resumer (pid, start ticks) is alive.
    pub resumer_alive: bool,
    /// This unpark runs in the pane the entry was handed off to (it is that hand-off).
    pub in_handoff_pane: bool,
    pub live: &'a LiveSet,
    /// What the agent's writer lock says (`None` for agents that keep none).
    pub writer: Option<&'a WriterVerdict>,
}

/// The answer before anything is started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Go,
    /// The session runs elsewhere: never start a second process; its parked state is cleared.
    Running {
        why: String,
        /// Claude's background supervisor runs it (`Some(job)`; `Some(None)`: job unknown).
        background_job: Option<Option<String>>,
    },
    /// Not now, and nothing is changed: the entry stays.
    Refused(String),
}

/// The rules that decide whether this unpark may start the agent at all.
pub(crate) fn before_start(ev: &Evidence) -> Verdict {
    let e = ev.entry;
    if e.state == EntryState::Resuming
        && ev.resumer_alive
        && !ev.in_handoff_pane
        && !disabled("unpark-resuming")
    {
        return Verdict::Refused(format!(
            "a resume is already in progress (pid {})",
            e.resumer.map(|r| r.0).unwrap_or(0)
        ));
    }
    if ev.live.contains(&e.session_id) && !disabled("unpark-running") {
        let background_job = ev
            .live
            .background_job(&e.session_id)
            .map(|j| j.map(str::to_string));
        let why = match &background_job {
            Some(job) => format!(
                "this session is running as a background agent; cleared its parked state. {}",
                crate::agents::of(e.agent)
                    .spec()
                    .background_note(job.as_deref())
            ),
            None => "this session is already running; cleared its parked state".into(),
        };
        return Verdict::Running {
            why,
            background_job,
        };
    }
    match ev.writer {
        None | Some(WriterVerdict::Go) => {}
        Some(WriterVerdict::Running(why)) => {
            return Verdict::Running {
                why: why.clone(),
                background_job: None,
            }
        }
        Some(WriterVerdict::Refuse(why)) => return Verdict::Refused(why.clone()),
    }
    if crate::agents::of(e.agent).spec().unidentified_blocks_unpark
        && !disabled("unpark-unidentified")
    {
        let unknown: Vec<u32> = ev
            .live
            .unidentified
            .iter()
            .filter(|u| u.agent == e.agent)
            .filter(|u| u.config_dir.is_empty() || e.config_dir.as_deref() == Some(&u.config_dir))
            .map(|u| u.pid)
            .collect();
        if !unknown.is_empty() {
            return Verdict::Refused(format!("{} running {} process(es) with this config dir (pids {unknown:?}) could not be identified, so a second process on this session cannot be ruled out", unknown.len(), e.agent.as_str()));
        }
    }
    Verdict::Go
}

pub use crate::agents::WriterVerdict;

/// What the disk says of an entry, read by the unpark (after any archive restore).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OnDisk {
    /// The recorded cwd is a directory.
    pub cwd_present: bool,
    /// Where the agent will look for the transcript, and whether it is a file there.
    pub transcript: Option<(std::path::PathBuf, bool)>,
}

/// Everything [`restorable`] checks except that the transcript is there.
pub(crate) fn restorable_but_transcript(e: &Entry, cwd_present: bool) -> Result<(), String> {
    if crate::agents::transcript::valid_session_id(&e.session_id).is_none()
        && !disabled("unpark-session-id")
    {
        return Err(format!(
            "recorded session id {:?} is not a session id",
            e.session_id
        ));
    }
    // The program must still read as the agent: an edited ledger cannot make unpark run anything else.
    if crate::agents::classify(std::slice::from_ref(&e.program)).map(|(a, _)| a) != Some(e.agent)
        && !disabled("unpark-program")
    {
        return Err(format!(
            "recorded program {:?} is not {}",
            e.program,
            e.agent.as_str()
        ));
    }
    if !cwd_present && !disabled("unpark-cwd") {
        return Err(format!("recorded cwd {} no longer exists", e.cwd));
    }
    Ok(())
}

/// The transcript the agent resumes from is where it will look.
pub fn transcript_present(e: &Entry, transcript: Option<(&Path, bool)>) -> Result<(), String> {
    if disabled("unpark-transcript") {
        return Ok(());
    }
    match transcript {
        Some((_, true)) => Ok(()),
        Some((t, false)) => Err(format!("transcript {} is missing (the archive keeps a copy under $PARK_HOME/archive/{})", t.display(), e.session_id)),
        None => Err(format!("no transcript found for session {} (the archive keeps a copy under $PARK_HOME/archive/{})", e.session_id, e.session_id)),
    }
}

/// Whether the entry can be resumed as recorded: a real session id, the agent's own program, its
/// cwd, its transcript.
pub fn restorable(e: &Entry, disk: &OnDisk) -> Result<(), String> {
    restorable_but_transcript(e, disk.cwd_present)?;
    transcript_present(
        e,
        disk.transcript.as_ref().map(|(p, ok)| (p.as_path(), *ok)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::Agent;

    const SID: &str = "5b0c1f8e-2d34-4c1a-9e57-0a1b2c3d4e5f";

    fn entry(agent: Agent) -> Entry {
        Entry::sample(agent, SID)
    }

    fn ev<'a>(e: &'a Entry, live: &'a LiveSet) -> Evidence<'a> {
        Evidence {
            entry: e,
            resumer_alive: false,
            in_handoff_pane: false,
            live,
            writer: None,
        }
    }

    fn refused(v: Verdict, needle: &str) {
        match v {
            Verdict::Refused(why) => assert!(why.contains(needle), "{why:?} lacks {needle:?}"),
            other => panic!("expected a refusal with {needle:?}, got {other:?}"),
        }
    }

    #[test]
    fn a_plain_parked_entry_goes() {
        let e = entry(Agent::Claude);
        assert_eq!(before_start(&ev(&e, &LiveSet::default())), Verdict::Go);
    }

    #[test]
    fn a_live_resumer_refuses_everyone_but_its_hand_off_pane() {
        let mut e = entry(Agent::Claude);
        e.state = EntryState::Resuming;
        e.resumer = Some((4242, 7));
        let live = LiveSet::default();
        let mut x = ev(&e, &live);
        x.resumer_alive = true;
        refused(before_start(&x), "already in progress (pid 4242)");
        x.in_handoff_pane = true;
        assert_eq!(before_start(&x), Verdict::Go, "the hand-off itself goes");
        x.in_handoff_pane = false;
        x.resumer_alive = false;
        assert_eq!(
            before_start(&x),
            Verdict::Go,
            "a dead resumer holds nothing"
        );
    }

    #[test]
    fn a_running_session_is_never_started_twice() {
        let e = entry(Agent::Claude);
        let live = LiveSet {
            ids: vec![SID.to_uppercase().to_lowercase()],
            ..Default::default()
        };
        match before_start(&ev(&e, &live)) {
            Verdict::Running {
                why,
                background_job: None,
            } => assert!(why.contains("already running")),
            other => panic!("{other:?}"),
        }
        let bg = LiveSet {
            ids: vec![SID.into()],
            background: vec![(SID.into(), Some("ab12cd34".into()))],
            ..Default::default()
        };
        match before_start(&ev(&e, &bg)) {
            Verdict::Running {
                why,
                background_job: Some(Some(j)),
            } => {
                assert_eq!(j, "ab12cd34");
                assert!(why.contains("background agent"), "{why}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_unidentified_claude_on_the_same_config_dir_refuses() {
        let e = entry(Agent::Claude);
        let unidentified = |dir: &str, pid| crate::scan::live::Unidentified {
            agent: Agent::Claude,
            config_dir: dir.into(),
            pid,
        };
        let live = LiveSet {
            unidentified: vec![unidentified("/home/u/.claude", 77)],
            ..Default::default()
        };
        refused(before_start(&ev(&e, &live)), "pids [77]");
        // Another config dir cannot be running this transcript.
        let other = LiveSet {
            unidentified: vec![unidentified("/home/v/.claude", 78)],
            ..Default::default()
        };
        assert_eq!(before_start(&ev(&e, &other)), Verdict::Go);
        // A Codex entry is not judged by Claude processes.
        assert_eq!(before_start(&ev(&entry(Agent::Codex), &live)), Verdict::Go);
    }

    #[test]
    fn a_writer_elsewhere_means_running_and_a_busy_writer_refuses() {
        let e = entry(Agent::Codex);
        let live = LiveSet::default();
        let mut x = ev(&e, &live);
        let other = WriterVerdict::Running("held by pid 99".into());
        x.writer = Some(&other);
        assert!(
            matches!(before_start(&x), Verdict::Running { why, .. } if why == "held by pid 99")
        );
        let busy = WriterVerdict::Refuse("the daemon still has it loaded".into());
        x.writer = Some(&busy);
        refused(before_start(&x), "the daemon still has it loaded");
        let free = WriterVerdict::Go;
        x.writer = Some(&free);
        assert_eq!(before_start(&x), Verdict::Go);
    }

    fn disk(cwd: bool, transcript: Option<bool>) -> OnDisk {
        OnDisk {
            cwd_present: cwd,
            transcript: transcript.map(|ok| ("/t.jsonl".into(), ok)),
        }
    }

    #[test]
    fn restorable_needs_an_id_the_program_the_cwd_and_the_transcript() {
        let e = entry(Agent::Claude);
        assert_eq!(restorable(&e, &disk(true, Some(true))), Ok(()));
        let mut bad = e.clone();
        bad.session_id = "--dangerously-skip-permissions".into();
        assert!(restorable(&bad, &disk(true, Some(true)))
            .unwrap_err()
            .contains("is not a session id"));
        let mut bad = e.clone();
        bad.program = "/bin/sh".into();
        assert!(restorable(&bad, &disk(true, Some(true)))
            .unwrap_err()
            .contains("is not claude"));
        assert!(restorable(&e, &disk(false, Some(true)))
            .unwrap_err()
            .contains("no longer exists"));
        assert!(restorable(&e, &disk(true, Some(false)))
            .unwrap_err()
            .contains("is missing"));
        assert!(restorable(&e, &disk(true, None))
            .unwrap_err()
            .contains("no transcript found"));
    }
}
