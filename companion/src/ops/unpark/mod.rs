//! `park unpark`: bring a parked session back, exactly once (README "What happens on `park unpark`").
//!
//! Contract: one live set per batch; a session that is already running is never started again —
//! its parked state is torn down and the result is `already-running`. The resume always happens
//! *inside the pane*: `park unpark` run in the pane execs the agent (cwd first, whitelisted flags,
//! no shell); from elsewhere park hands off by typing `park unpark <entry>` at a confirmed bare shell
//! prompt, pressing Enter in the placeholder, or opening a window when the pane is gone. A detached
//! verifier confirms the agent started with that id before the entry is removed; until then the
//! entry stays, so a failed start loses nothing. Whether an unpark may go ahead is decided by
//! `guards::unpark` over the evidence `gate` gathers under the locks; this module carries it out:
//! `remote` (the sender's half, from outside the pane) and `in_pane` (the exec and its verifier).

use crate::adapters::mux::Pane;
use crate::agents::{expected_transcript, resume_argv, resume_command_line};
use crate::ctx::{Ctx, PILL_OPTION};
use crate::guards::unpark::{self as unpark_rules, OnDisk, Verdict};
use crate::model::entry::{Entry, EntryState};
use crate::ops::park::{pane_lock_key, session_lock_key, shell_prompt_ready};
pub use crate::rows::slots::{as_placed, is_placeholder, placed_for};
use crate::rows::slots::{locate, repoint_in_memory};
use crate::scan::live::LiveSet;
use crate::scan::{self, Scan};
use crate::store::lock::{self, Lock, TryLock};
use crate::store::slot::Slot;
use crate::support::fault::point;
use park_protocol::ActionResult;
use park_protocol::Outcome;
use std::path::Path;
use std::time::{Duration, Instant};

mod in_pane;
mod remote;
pub use in_pane::{config_env, exec_in_pane, verify};
pub(crate) use remote::{finish, send_resume, unpark_remote, Sent};

/// How long a remote unpark waits for the pane to confirm the agent started.
pub(crate) const HANDOFF_TIMEOUT: Duration = Duration::from_secs(60);
/// How long the verifier waits for the agent to show its session.
pub(crate) const VERIFY_TIMEOUT: Duration = Duration::from_secs(45);

fn res(target: &str, e: &Entry, outcome: Outcome, reason: Option<String>) -> ActionResult {
    ActionResult {
        target: target.into(),
        pane: Some(e.place.pane.clone()),
        session_id: Some(e.session_id.clone()),
        outcome,
        reason,
        freed_bytes: None,
    }
}

fn acquire_retry(ctx: &Ctx, key: &str, wait: Duration) -> Result<Lock, String> {
    let t0 = Instant::now();
    loop {
        match lock::try_lock(&ctx.ledger.home, key) {
            Ok(TryLock::Acquired(l)) => return Ok(l),
            Ok(TryLock::Held(owner)) if t0.elapsed() >= wait => {
                return Err(format!(
                    "another park/unpark (pid {owner}) is working on this right now"
                ))
            }
            Ok(TryLock::Held(_)) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => return Err(e.to_string()),
        }
    }
}

/// What the disk says of `e` now, for the unpark rules.
pub(crate) fn on_disk(e: &Entry) -> OnDisk {
    OnDisk {
        cwd_present: Path::new(&e.cwd).is_dir(),
        transcript: expected_transcript(e).map(|t| {
            let ok = t.is_file();
            (t, ok)
        }),
    }
}

/// Whether `e` can be resumed as recorded now (`guards::unpark::restorable` over the disk).
pub fn restorable(e: &Entry) -> Result<(), String> {
    crate::guards::unpark::restorable(e, &on_disk(e))
}

pub fn resumer_alive(ctx: &Ctx, e: &Entry) -> bool {
    e.resumer
        .is_some_and(|(pid, start)| crate::ops::kill::alive(ctx.platform.as_ref(), pid, start))
}

/// Clears what park put on the pane.
pub fn teardown(ctx: &Ctx, e: &Entry) {
    if ctx.mux.serves(&e.place.server) {
        let _ = ctx.mux.set_pane_option(&e.place.pane, PILL_OPTION, None);
        let title = if e.place.pane_title.is_empty() {
            &e.place.title
        } else {
            &e.place.pane_title
        };
        let _ = ctx.mux.restore_title(&e.place.pane, title);
        ctx.mux.checkpoint(&e.place.pane);
    }
}

/// Clears the `park unpark .` park prefilled at the entry's pane, when the pane's shell is in
/// the foreground and its last line is still that prefill (`forget`: Enter there would only say
/// "not-parked"). Anything else the user typed is left alone.
pub fn clear_prefill(ctx: &Ctx, e: &Entry) {
    if !ctx.mux.serves(&e.place.server) {
        return;
    }
    let Some(p) = ctx
        .mux
        .list_panes()
        .ok()
        .and_then(|ps| ps.into_iter().find(|p| p.id == e.place.pane))
    else {
        return;
    };
    if !crate::ops::park::shell_in_foreground(ctx, &p) {
        return;
    }
    let typed = ctx.typed_name(p.pid);
    let ours = ctx.mux.capture(&p.id, false).is_ok_and(|s| {
        s.lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .is_some_and(|l| crate::ops::park::is_our_prefill(l, &typed, &e.id))
    });
    if ours {
        let _ = ctx.mux.send_keys(&p.id, &["C-e", "C-u"]);
    }
}

/// Types the agent's attach command for `job` (Claude: `claude attach <job>`; no Enter) into the entry's pane when it shows a bare shell
/// prompt: the user's way to the session a background agent now runs.
fn offer_attach(ctx: &Ctx, e: &Entry, job: &str) -> bool {
    let Some(attach) = crate::agents::of(e.agent).spec().attach_command(job) else {
        return false;
    };
    if !ctx.mux.serves(&e.place.server) {
        return false;
    }
    let Ok(panes) = ctx.mux.list_panes() else {
        return false;
    };
    let Some(p) = panes.into_iter().find(|p| p.id == e.place.pane) else {
        return false;
    };
    if !shell_prompt_ready(ctx, &p) {
        // The `park unpark .` park prefilled at the parked pane's prompt is ours to replace.
        let ours = crate::ops::park::shell_in_foreground(ctx, &p)
            && ctx.mux.capture(&p.id, false).is_ok_and(|s| {
                s.lines()
                    .rev()
                    .find(|l| !l.trim().is_empty())
                    .is_some_and(|l| l.trim_end().ends_with(" unpark ."))
            });
        if !ours || ctx.mux.send_keys(&p.id, &["C-u"]).is_err() {
            return false;
        }
        let ready = (0..20).any(|_| {
            std::thread::sleep(Duration::from_millis(50));
            shell_prompt_ready(ctx, &p)
        });
        if !ready {
            return false;
        }
    }
    ctx.mux.send_text(&p.id, &attach).is_ok()
}

/// What a held Codex writer lock means for resuming that thread.
enum Gate {
    /// Go ahead; the note says what was done on the way (a transcript restored from the archive).
    Go(Box<Entry>, Option<String>),
    Done(ActionResult),
}

/// Shared checks under the locks: the entry's current state, and the never-two-processes rule.
fn gate(ctx: &Ctx, eid: &str, target: &str, live: &LiveSet, my_pane: Option<&str>) -> Gate {
    let e = match ctx.ledger.load(eid) {
        Ok(Some(e)) => e,
        Ok(None) => {
            return Gate::Done(ActionResult::new(
                target,
                Outcome::NotParked,
                Some("no parked entry (already unparked or forgotten)".into()),
            ))
        }
        Err(err) => {
            return Gate::Done(ActionResult::new(
                target,
                Outcome::Refused,
                Some(err.to_string()),
            ))
        }
    };
    let writer = crate::agents::of(e.agent).writer(&e, ctx.platform.as_ref());
    let verdict = unpark_rules::before_start(&unpark_rules::Evidence {
        entry: &e,
        resumer_alive: e.state == EntryState::Resuming && resumer_alive(ctx, &e),
        in_handoff_pane: my_pane.is_some() && e.handoff_pane.as_deref() == my_pane,
        live,
        writer: writer.as_ref(),
    });
    match verdict {
        Verdict::Go => {}
        Verdict::Refused(why) => return Gate::Done(res(target, &e, Outcome::Refused, Some(why))),
        Verdict::Running {
            mut why,
            background_job,
        } => {
            // Never a second process on one transcript; but do not leave the pane claiming
            // "parked".
            teardown(ctx, &e);
            let _ = ctx.ledger.remove(&e.id);
            ctx.publish_status();
            // Claude refuses `--resume` of a session a background agent holds; the way to it is
            // attaching, which park offers at the pane's prompt.
            if let Some(Some(job)) = &background_job {
                if offer_attach(ctx, &e, job) {
                    why.push_str(
                        "; `claude attach` is typed at the pane's prompt: press Enter to open it",
                    );
                }
            }
            return Gate::Done(res(target, &e, Outcome::AlreadyRunning, Some(why)));
        }
    }
    // The agent's own transcript is gone (its cleanup ran, or it was deleted): put the archived
    // copy back where the agent looks, under the session lock, when that is safe.
    let (restored, unsafe_why) = match crate::store::archive::restore(&ctx.ledger.home, &e) {
        crate::store::archive::Restore::Restored(p) => (
            Some(format!(
                "restored the transcript from the archive to {}",
                p.display()
            )),
            None,
        ),
        crate::store::archive::Restore::Unsafe(why) => (None, Some(why)),
        crate::store::archive::Restore::Present => (None, None),
    };
    let disk = on_disk(&e);
    if let Err(why) = unpark_rules::restorable_but_transcript(&e, disk.cwd_present) {
        return Gate::Done(res(target, &e, Outcome::Refused, Some(why)));
    }
    if let Err(why) = unpark_rules::transcript_present(
        &e,
        disk.transcript.as_ref().map(|(p, ok)| (p.as_path(), *ok)),
    ) {
        // The transcript is gone and the raw copy cannot go back: a fresh agent in the cwd, told
        // to read the archived conversation, is the closest thing to the session that is safe.
        let md = crate::store::archive::checked_id(&e.session_id)
            .ok()
            .map(|sid| crate::store::archive::dir(&ctx.ledger.home, &sid).join("transcript.md"))
            .filter(|p| crate::store::ledger::read_nofollow(p).is_ok_and(|b| !b.is_empty()));
        // Only an agent that takes a first prompt can be started primed to read it.
        let md = md.filter(|_| crate::agents::of(e.agent).spec().first_prompt);
        return match (unsafe_why, md) {
            (Some(u), Some(md)) => {
                let md = md.to_string_lossy().into_owned();
                let note = format!(
                    "the transcript could not be restored ({u}); started a fresh {} in {} primed to read the archived conversation {md}",
                    e.agent.as_str(),
                    e.cwd
                );
                let mut e = e;
                e.fresh_from = Some(md);
                Gate::Go(Box::new(e), Some(note))
            }
            (Some(u), _) => Gate::Done(res(
                target,
                &e,
                Outcome::Refused,
                Some(format!("{why}; the archived copy cannot be put back: {u}")),
            )),
            (None, _) => Gate::Done(res(target, &e, Outcome::Refused, Some(why))),
        };
    }
    Gate::Go(Box::new(e), restored)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::Agent;
    use proptest::prelude::*;

    fn entry(agent: Agent, cwd: &str, program: &str, flags: Vec<String>) -> Entry {
        let mut e = crate::store::ledger::tests::sample("ccb");
        e.session_id = "35c98558-0920-4e29-b81c-9304ca43fccb".into();
        e.agent = agent;
        e.cwd = cwd.into();
        e.program = program.into();
        e.flags = flags;
        e.config_dir = Some("/h/.claude".into());
        e.config_var = Some("HOME".into());
        e
    }

    #[test]
    fn resume_argv_per_agent() {
        let e = entry(
            Agent::Claude,
            "/w",
            "claude",
            vec!["--dangerously-skip-permissions".into()],
        );
        assert_eq!(
            resume_argv(&e),
            vec![
                "claude",
                "--resume",
                "35c98558-0920-4e29-b81c-9304ca43fccb",
                "--dangerously-skip-permissions"
            ]
        );
        let e = entry(
            Agent::Codex,
            "/w",
            "/n/.bin/codex",
            vec!["--no-daemon".into()],
        );
        assert_eq!(
            resume_argv(&e),
            vec![
                "/n/.bin/codex",
                "resume",
                "--no-daemon",
                "35c98558-0920-4e29-b81c-9304ca43fccb"
            ]
        );
    }

    #[test]
    fn recorded_flags_are_whitelisted_again_at_resume() {
        let e = entry(
            Agent::Claude,
            "/w",
            "claude",
            [
                "--model",
                "opus",
                "--mcp-config",
                "/tmp/evil.json",
                "--resume",
                "00000000-0000-4000-8000-000000000000",
                "--dangerously-skip-permissions",
            ]
            .map(String::from)
            .to_vec(),
        );
        assert_eq!(
            resume_argv(&e),
            [
                "claude",
                "--resume",
                "35c98558-0920-4e29-b81c-9304ca43fccb",
                "--model",
                "opus",
                "--dangerously-skip-permissions"
            ]
        );
        let e = entry(
            Agent::Codex,
            "/w",
            "codex",
            ["-c", "notify=[\"sh\"]", "--no-daemon"]
                .map(String::from)
                .to_vec(),
        );
        assert_eq!(
            resume_argv(&e),
            [
                "codex",
                "resume",
                "--no-daemon",
                "35c98558-0920-4e29-b81c-9304ca43fccb"
            ]
        );
    }

    #[test]
    fn a_recorded_program_that_is_not_the_agent_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let cwd = d.path().to_string_lossy().into_owned();
        for bad in ["/bin/sh", "vim", "codex"] {
            let e = entry(Agent::Claude, &cwd, bad, vec![]);
            assert!(
                restorable(&e).unwrap_err().contains("is not claude"),
                "{bad}"
            );
        }
        let e = entry(Agent::Claude, &cwd, "/x/node_modules/.bin/claude", vec![]);
        assert!(
            !restorable(&e).unwrap_err().contains("is not claude"),
            "a real path passes this check"
        );
    }

    #[test]
    fn hostile_values_are_quoted_not_run() {
        let e = entry(
            Agent::Claude,
            "/w/$(rm -rf ~)/a b",
            "claude",
            vec!["--model".into(), "x; touch /tmp/p`id`".into()],
        );
        let line = resume_command_line(&e);
        let words = shlex::split(&line).unwrap();
        assert_eq!(words[..4], ["cd", "--", "/w/$(rm -rf ~)/a b", "&&"]);
        assert_eq!(words.last().unwrap(), "x; touch /tmp/p`id`");
    }

    proptest! {
        /// Whatever the cwd and flag values hold, the shown command splits back into exactly
        /// `cd <cwd> && <argv…>`: nothing in a value can become shell syntax.
        #[test]
        fn command_line_round_trips(cwd in "[^\u{0}]{1,40}", val in "[^\u{0}]{1,40}") {
            let e = entry(Agent::Claude, &cwd, "claude", vec!["--model".into(), val.clone()]);
            let words = shlex::split(&resume_command_line(&e)).unwrap();
            let mut want = vec!["cd".to_string(), "--".to_string(), cwd.clone(), "&&".to_string()];
            want.extend(resume_argv(&e));
            prop_assert_eq!(words, want);
        }
    }

    #[test]
    fn config_env_restores_the_variable_the_agent_used() {
        let mut e = entry(Agent::Claude, "/w", "claude", vec![]);
        e.config_dir = Some("/nowhere-home/.claude".into());
        assert_eq!(
            config_env(&e),
            vec![("HOME".to_string(), "/nowhere-home".to_string())]
        );
        e.config_var = Some("CLAUDE_CONFIG_DIR".into());
        e.config_dir = Some("/cfg".into());
        assert_eq!(
            config_env(&e),
            vec![("CLAUDE_CONFIG_DIR".to_string(), "/cfg".to_string())]
        );
    }
}
