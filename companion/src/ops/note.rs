//! Typing a wake note into a resumed agent.
//!
//! Contract: the note is typed only into the pane running the resumed session, only once that
//! agent has read as ready for a sustained moment (idle, its composer on screen and empty, and
//! ready by its own files when it keeps any: a pane still shows the previous agent's last frame,
//! composer included, while the new one starts, and keys typed then can be lost); Enter is
//! pressed only once the composer shows the note; the note is typed again only into an empty
//! composer, so it is never sent twice. A note that cannot be delivered is appended to the
//! session's archived notes and the result says so, so it is never lost.

use crate::ctx::Ctx;
use std::time::{Duration, Instant};

/// How long the agent must read as ready before the note is typed.
const READY_HOLD: Duration = Duration::from_secs(1);
/// Typed text not in the composer after this long was lost: typed again (the composer is empty).
const LANDED_WAIT: Duration = Duration::from_secs(5);
/// How many times the note is typed at most.
const MAX_TYPES: u32 = 3;
/// How long a delivery may take in all.
const DELIVER_TIMEOUT: Duration = Duration::from_secs(90);

/// What one scan shows of the resumed agent.
#[derive(Debug, Clone, Default)]
pub(crate) struct Look {
    /// Idle with an empty composer on screen, and ready by its own files when it keeps any.
    pub ready: bool,
    /// What its composer holds.
    pub draft: Option<String>,
    /// The draft shows the note, as the agent displays a typed text.
    pub shows_note: bool,
}

/// What to do next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Step {
    /// Look again; why nothing was typed yet (or the note is not sent yet).
    Wait(String),
    /// Type the note (into an empty composer).
    Type,
    /// Press Enter: the composer shows the note.
    Enter,
}

/// The delivery's decisions, from one look at a time (pure: the I/O is in [`deliver`]).
#[derive(Debug, Default)]
pub(crate) struct Delivery {
    ready_since: Option<Instant>,
    typed_at: Option<Instant>,
    typed: u32,
}

impl Delivery {
    pub(crate) fn next(&mut self, look: Option<&Look>, now: Instant) -> Step {
        let Some(l) = look else {
            self.ready_since = None;
            return Step::Wait("the resumed agent never showed up in a pane".into());
        };
        let Some(at) = self.typed_at else {
            if !l.ready {
                self.ready_since = None;
                return Step::Wait("the agent never read as ready for input".into());
            }
            let since = *self.ready_since.get_or_insert(now);
            if now.duration_since(since) < READY_HOLD {
                return Step::Wait("the agent read as ready only for a moment".into());
            }
            self.typed_at = Some(now);
            self.typed = 1;
            return Step::Type;
        };
        if l.shows_note {
            return Step::Enter;
        }
        match &l.draft {
            // Still landing, or something else: never typed over, never sent.
            Some(d) => Step::Wait(format!(
                "the composer shows {:?}, not the note",
                d.chars().take(60).collect::<String>()
            )),
            None if l.ready && now.duration_since(at) >= LANDED_WAIT && self.typed < MAX_TYPES => {
                self.typed += 1;
                self.typed_at = Some(now);
                Step::Type
            }
            None => Step::Wait(format!(
                "typed the note {} time(s) but the composer never showed it",
                self.typed
            )),
        }
    }
}

/// Types `text` into the pane running session `sid` once its agent is ready for input (see the
/// module contract), presses Enter once the composer shows it, and checks the prompt reached the
/// transcript when it can see it.
pub(crate) fn deliver(
    ctx: &Ctx,
    sid: &str,
    text: &str,
    transcript: Option<&std::path::Path>,
) -> Result<String, String> {
    let t0 = Instant::now();
    let mut d = Delivery::default();
    let mut last = String::from("the resumed agent never showed up in a pane");
    let pane = loop {
        if t0.elapsed() >= DELIVER_TIMEOUT {
            return Err(last);
        }
        let s = crate::scan::scan(ctx.platform.as_ref(), ctx.mux.as_ref(), true)
            .map_err(|e| format!("process scan failed: {e}"))?;
        let f = s.found.iter().find(|f| {
            f.pane.is_some()
                && f.ident
                    .session_id
                    .as_deref()
                    .is_some_and(|x| x.eq_ignore_ascii_case(sid))
        });
        let look = f.map(|f| {
            let kind = crate::agents::of(f.proc.agent);
            Look {
                ready: f.status == park_protocol::Status::Idle
                    && f.draft.is_none()
                    && kind.ready_for_input(&f.ident) != Some(false),
                draft: f.draft.clone(),
                shows_note: f
                    .draft
                    .as_deref()
                    .is_some_and(|x| kind.draft_shows(x, text)),
            }
        });
        let pane = f
            .and_then(|f| f.pane.as_ref())
            .map(|p| p.id.clone())
            .unwrap_or_default();
        match d.next(look.as_ref(), Instant::now()) {
            Step::Wait(why) => {
                last = match f {
                    Some(f) if d.typed_at.is_none() && f.status != park_protocol::Status::Idle => {
                        format!("the agent is {}, not idle", f.status.as_str())
                    }
                    _ => why,
                };
            }
            Step::Type => {
                ctx.mux.send_text(&pane, text).map_err(|e| e.to_string())?;
            }
            Step::Enter => {
                ctx.mux
                    .send_keys(&pane, &["Enter"])
                    .map_err(|e| e.to_string())?;
                break pane;
            }
        }
        std::thread::sleep(Duration::from_millis(if d.typed_at.is_some() {
            250
        } else {
            500
        }));
    };
    // Typed again: its first keys were lost (said, so a lost start shows in the result).
    let again = match d.typed {
        0 | 1 => String::new(),
        n => format!(" (typed {n} times: the keys typed before never showed)"),
    };
    let Some(t) = transcript else {
        return Ok(format!("note typed into {pane}{again}"));
    };
    let needle: String = text.chars().take(60).collect();
    let seen = (0..100).any(|_| {
        let hit = std::fs::read_to_string(t).is_ok_and(|x| x.contains(&needle));
        if !hit {
            std::thread::sleep(Duration::from_millis(200));
        }
        hit
    });
    if seen {
        Ok(format!("note delivered in {pane}{again}"))
    } else {
        Err(format!(
            "typed the note into {pane} but it did not reach the transcript"
        ))
    }
}

/// After a successful unpark: deliver the wake prompt, or keep it in the archive's notes.
pub(crate) fn after_unpark(ctx: &Ctx, e: &crate::model::entry::Entry, prompt: &str) -> String {
    let transcript = crate::agents::expected_transcript(e);
    match deliver(ctx, &e.session_id, prompt, transcript.as_deref()) {
        Ok(what) => what,
        Err(why) => {
            let kept = crate::store::archive::append_note(
                &ctx.ledger.home,
                e,
                &format!("undelivered wake note: {prompt}"),
            );
            format!(
                "note not delivered ({why}); {}",
                if kept {
                    "kept in the session's archived notes"
                } else {
                    "and it could not be archived"
                }
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn look(ready: bool, draft: Option<&str>, shows_note: bool) -> Look {
        Look {
            ready,
            draft: draft.map(str::to_string),
            shows_note,
        }
    }

    /// The flake: a resumed Claude still starting (no status in its status file) under the last
    /// frame of the Claude parked there, empty composer included. Nothing is typed until the
    /// agent itself reads as ready, and then only after it stayed so for a moment.
    #[test]
    fn nothing_is_typed_until_the_agent_stays_ready() {
        let t = Instant::now();
        let mut d = Delivery::default();
        let starting = look(false, None, false);
        for i in 0..20 {
            let at = t + Duration::from_millis(500 * i);
            assert!(matches!(d.next(Some(&starting), at), Step::Wait(_)));
            assert!(matches!(d.next(None, at), Step::Wait(_)));
        }
        let ready = look(true, None, false);
        let t = t + Duration::from_secs(10);
        assert!(matches!(d.next(Some(&ready), t), Step::Wait(_)));
        // A look that is not ready in between starts the moment again.
        assert!(matches!(
            d.next(Some(&starting), t + Duration::from_millis(500)),
            Step::Wait(_)
        ));
        assert!(matches!(
            d.next(Some(&ready), t + Duration::from_millis(1000)),
            Step::Wait(_)
        ));
        assert!(matches!(
            d.next(Some(&ready), t + Duration::from_millis(1500)),
            Step::Wait(_)
        ));
        assert_eq!(
            d.next(Some(&ready), t + Duration::from_millis(2000)),
            Step::Type
        );
    }

    fn typed() -> (Delivery, Instant) {
        let t = Instant::now();
        let mut d = Delivery::default();
        let ready = look(true, None, false);
        assert!(matches!(d.next(Some(&ready), t), Step::Wait(_)));
        assert_eq!(d.next(Some(&ready), t + READY_HOLD), Step::Type);
        (d, t + READY_HOLD)
    }

    #[test]
    fn enter_only_once_the_composer_shows_the_note() {
        let (mut d, t) = typed();
        let ms = |n| t + Duration::from_millis(n);
        assert!(matches!(
            d.next(Some(&look(false, Some("[park] This sess"), false)), ms(250)),
            Step::Wait(_)
        ));
        assert_eq!(
            d.next(
                Some(&look(false, Some("[park] This session …"), true)),
                ms(500)
            ),
            Step::Enter
        );
    }

    /// Keys lost: typed again only into an empty composer, at most MAX_TYPES times in all; a
    /// composer holding anything else is never typed into (the note is never sent twice).
    #[test]
    fn the_note_is_typed_again_only_into_an_empty_composer() {
        let (mut d, t) = typed();
        let empty = look(true, None, false);
        assert!(matches!(
            d.next(Some(&empty), t + Duration::from_secs(1)),
            Step::Wait(_)
        ));
        let mut at = t + LANDED_WAIT;
        assert_eq!(d.next(Some(&empty), at), Step::Type, "lost: typed again");
        for _ in 0..10 {
            at += Duration::from_secs(1);
            assert!(matches!(
                d.next(Some(&look(false, Some("something else"), false)), at),
                Step::Wait(_)
            ));
        }
        at += LANDED_WAIT;
        assert_eq!(d.next(Some(&empty), at), Step::Type, "third and last");
        for _ in 0..10 {
            at += LANDED_WAIT;
            assert!(matches!(d.next(Some(&empty), at), Step::Wait(_)));
        }
        // An agent that is not ready (busy, a dialog) is not typed into either.
        let (mut d, t) = typed();
        assert!(matches!(
            d.next(Some(&look(false, None, false)), t + LANDED_WAIT),
            Step::Wait(_)
        ));
    }
}
