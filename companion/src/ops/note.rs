//! Typing a wake note into a resumed agent.
//!
//! Contract: the note is typed only into the pane running the resumed session, only once that
//! agent reads as idle with an empty composer, as one line followed by Enter; a note that cannot
//! be delivered is appended to the session's archived notes and the result says so, so it is
//! never lost.

use crate::ctx::Ctx;
use std::time::{Duration, Instant};

/// Types `text` into the pane running session `sid` once its agent is idle with an empty
/// composer; checks the prompt reached the transcript when it can see it.
pub(crate) fn deliver(
    ctx: &Ctx,
    sid: &str,
    text: &str,
    transcript: Option<&std::path::Path>,
) -> Result<String, String> {
    let t0 = Instant::now();
    let mut last = String::from("the resumed agent never showed up in a pane");
    while t0.elapsed() < Duration::from_secs(90) {
        let s = crate::scan::scan(ctx.platform.as_ref(), ctx.mux.as_ref(), true)
            .map_err(|e| format!("process scan failed: {e}"))?;
        let f = s.found.iter().find(|f| {
            f.pane.is_some()
                && f.ident
                    .session_id
                    .as_deref()
                    .is_some_and(|x| x.eq_ignore_ascii_case(sid))
        });
        match f {
            Some(f) if f.status == park_protocol::Status::Idle && f.draft.is_none() => {
                let pane = f.pane.as_ref().map(|p| p.id.clone()).unwrap_or_default();
                ctx.mux.send_text(&pane, text).map_err(|e| e.to_string())?;
                std::thread::sleep(Duration::from_millis(300));
                ctx.mux
                    .send_keys(&pane, &["Enter"])
                    .map_err(|e| e.to_string())?;
                let Some(t) = transcript else {
                    return Ok(format!("note typed into {pane}"));
                };
                let needle: String = text.chars().take(60).collect();
                let seen = (0..100).any(|_| {
                    let hit = std::fs::read_to_string(t).is_ok_and(|x| x.contains(&needle));
                    if !hit {
                        std::thread::sleep(Duration::from_millis(200));
                    }
                    hit
                });
                return if seen {
                    Ok(format!("note delivered in {pane}"))
                } else {
                    Err(format!(
                        "typed the note into {pane} but it did not reach the transcript"
                    ))
                };
            }
            Some(f) => last = format!("the agent is {}, not idle", f.status.as_str()),
            None => {}
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    Err(last)
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
