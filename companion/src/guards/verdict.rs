//! `park candidates`: live sessions ranked for parking, each with a heuristic verdict (done /
//! waiting on you / working) and a confidence, from the agent's state and its last reply.
//!
//! Contract: `verdict` is pure over what the scan read. It is a ranking hint: nothing parks
//! because of it, and every candidate still passes the full guard chain when parked. Evidence
//! order: what the screen shows now (busy, a dialog, a draft) beats what the transcript says
//! (a turn still open), which beats the wording of the last reply. Wording that both asks and
//! reports ("done — want me to also…?", "nudge me when X and I'll do Y") reads as waiting.

use park_protocol::{Candidate, Status, Verdict};

const ASKS: &[&str] = &[
    "would you like",
    "do you want",
    "should i ",
    "shall i ",
    "let me know",
    "which one",
    "which option",
    "please confirm",
    "can you ",
    "could you ",
    "nudge me",
    "tell me when",
    "once you",
    "when you're ready",
    "waiting for you",
    "your call",
];

const DONE: &[&str] = &[
    "done",
    "complete",
    "finished",
    "all tests pass",
    "tests pass",
    "merged",
    "pushed",
    "opened a pr",
    "opened pr",
    "pull request",
    "implemented",
    "fixed",
    "is ready",
    "summary",
    "wrapped up",
    "that's it",
];

/// The verdict for one session, with a confidence (0–1) and what it rests on.
pub fn verdict(
    status: Status,
    turn_open: bool,
    last_assistant: Option<&str>,
) -> (Verdict, f32, String) {
    match status {
        Status::Busy => {
            return (
                Verdict::Working,
                0.95,
                "the screen shows a turn running".into(),
            )
        }
        Status::Waiting => {
            return (
                Verdict::WaitingOnYou,
                0.95,
                "a dialog or permission prompt is open".into(),
            )
        }
        Status::Draft => {
            return (
                Verdict::WaitingOnYou,
                0.8,
                "unsent text in the prompt".into(),
            )
        }
        _ => {}
    }
    if turn_open {
        return (
            Verdict::Working,
            0.7,
            "the transcript has a turn without its final reply".into(),
        );
    }
    let Some(text) = last_assistant.map(|t| t.trim()).filter(|t| !t.is_empty()) else {
        return (Verdict::Unknown, 0.2, "no assistant reply yet".into());
    };
    let low = text.to_lowercase();
    // The end of the reply is what the user was left with.
    let tail: String = {
        let chars: Vec<char> = low.chars().collect();
        chars[chars.len().saturating_sub(300)..].iter().collect()
    };
    let asks = tail.trim_end().ends_with('?') || ASKS.iter().any(|a| tail.contains(a));
    let done = DONE.iter().find(|d| low.contains(**d));
    match (asks, done) {
        (true, Some(d)) => (
            Verdict::WaitingOnYou,
            0.55,
            format!("reports {d:?} but ends asking you something"),
        ),
        (true, None) => (
            Verdict::WaitingOnYou,
            0.8,
            "the last reply asks you something".into(),
        ),
        (false, Some(d)) => (
            Verdict::Done,
            0.8,
            format!("the last reply says {d:?} and asks nothing"),
        ),
        (false, None) => (
            Verdict::Done,
            0.45,
            "idle, and the last reply asks nothing".into(),
        ),
    }
}

/// Confident "done" first (longest idle first), then everything else by idle time; unknown idle
/// time last.
pub fn sort(rows: &mut [Candidate]) {
    rows.sort_by(|a, b| {
        let conf = |c: &Candidate| c.verdict == Verdict::Done && c.confidence >= 0.7;
        conf(b)
            .cmp(&conf(a))
            .then(b.idle_seconds.is_some().cmp(&a.idle_seconds.is_some()))
            .then(b.idle_seconds.cmp(&a.idle_seconds))
            .then(a.pane.cmp(&b.pane))
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use park_protocol::Agent;

    #[test]
    fn the_screen_beats_the_transcript_beats_the_wording() {
        let done = Some("All done: tests pass.");
        assert_eq!(verdict(Status::Busy, false, done).0, Verdict::Working);
        assert_eq!(
            verdict(Status::Waiting, false, done).0,
            Verdict::WaitingOnYou
        );
        assert_eq!(verdict(Status::Idle, true, done).0, Verdict::Working);
        let (v, c, _) = verdict(Status::Idle, false, done);
        assert_eq!(v, Verdict::Done);
        assert!(c >= 0.7);
    }

    #[test]
    fn questions_and_nudges_read_as_waiting() {
        for t in [
            "I fixed the parser. Should I also update the docs?",
            "Done. Nudge me when CI is green and I'll merge.",
            "Which option do you prefer: A or B?",
        ] {
            assert_eq!(
                verdict(Status::Idle, false, Some(t)).0,
                Verdict::WaitingOnYou,
                "{t}"
            );
        }
        assert_eq!(verdict(Status::Idle, false, None).0, Verdict::Unknown);
    }

    fn cand(pane: &str, v: Verdict, conf: f32, idle: Option<u64>) -> Candidate {
        Candidate {
            pane: pane.into(),
            agent: Agent::Claude,
            session_id: None,
            cwd: String::new(),
            title: String::new(),
            idle_seconds: idle,
            verdict: v,
            confidence: conf,
            why: String::new(),
            last_assistant: None,
            anon_bytes: 0,
            refusal: None,
        }
    }

    #[test]
    fn confident_done_sorts_first_then_idle_time() {
        let mut v = vec![
            cand("%1", Verdict::WaitingOnYou, 0.8, Some(9000)),
            cand("%2", Verdict::Done, 0.8, Some(10)),
            cand("%3", Verdict::Done, 0.45, Some(500)),
            cand("%4", Verdict::Working, 0.9, None),
            cand("%5", Verdict::Done, 0.8, Some(100)),
        ];
        sort(&mut v);
        let order: Vec<&str> = v.iter().map(|c| c.pane.as_str()).collect();
        assert_eq!(order, ["%5", "%2", "%1", "%3", "%4"]);
    }
}
