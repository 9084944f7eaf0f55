//! Wake-ups: what a parked entry waits for (a time, or a command/URL probe with matchers and a
//! deadline), the note the agent gets when it wakes, and the pure scheduling rules the waker
//! follows.
//!
//! Contract:
//! * A [`Wake`] lives in its ledger entry (`Entry.wake`), so it survives the waker, a crash and a
//!   reboot; the waker keeps no state of its own. A wake is *pending* while the entry is parked, it
//!   has a time or a probe, and no outcome is recorded.
//! * [`due`] is pure: a time in the past fires once (missed timers fire on the next start); a probe
//!   runs when its next check is due; a deadline that passed ends the wait (`timed out`).
//! * [`after_probe`] is pure: a match fires; a probe that ran but did not match checks again after
//!   `every`; a probe that could not run at all backs off exponentially (up to 10 min), so it is
//!   never retried in a tight loop, and says why in `last`.
//! * Parsing (`--wake-at`, `--wake-in`, `--deadline`, `--every`) refuses what it cannot read, past
//!   times, and waits beyond 14 days.

use crate::model::probe::{self, Matcher, Probe, ProbeResult};
use jiff::{civil, tz::TimeZone, Timestamp, ToSpan};
use serde::{Deserialize, Serialize};
use std::time::Duration;

pub const SCHEMA: u32 = 1;
pub(crate) const MAX_WAIT: Duration = Duration::from_secs(14 * 86_400);
pub(crate) const MIN_EVERY: Duration = Duration::from_secs(5);
pub const DEFAULT_EVERY: Duration = Duration::from_secs(30);
const MAX_BACKOFF_SECS: u64 = 600;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnDeadline {
    /// Record "timed out" and leave the session parked.
    #[default]
    Stay,
    /// Resume it anyway, with a note saying the wait timed out.
    Resume,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Wake {
    pub schema: u32,
    pub created_at: String,
    /// A timer: wake at this time (RFC 3339).
    #[serde(default)]
    pub at: Option<String>,
    #[serde(default)]
    pub probe: Option<Probe>,
    #[serde(default)]
    pub when: Vec<Matcher>,
    #[serde(default)]
    pub every_secs: u64,
    #[serde(default)]
    pub deadline: Option<String>,
    #[serde(default)]
    pub on_deadline: OnDeadline,
    /// Typed into the agent (prefixed) as its first prompt after it wakes.
    #[serde(default)]
    pub notes: Vec<String>,
    #[serde(default)]
    pub next_check: Option<String>,
    #[serde(default)]
    pub runs: u32,
    /// Consecutive probe runs that could not run at all (drives the back-off).
    #[serde(default)]
    pub failures: u32,
    /// What the last probe run said.
    #[serde(default)]
    pub last: Option<String>,
    /// Set once the wait is over without a wake-up: `timed out …`, `could not wake: …`.
    #[serde(default)]
    pub outcome: Option<String>,
}

impl Wake {
    pub fn new(now: Timestamp) -> Wake {
        Wake {
            schema: SCHEMA,
            created_at: now.to_string(),
            at: None,
            probe: None,
            when: vec![],
            every_secs: 0,
            deadline: None,
            on_deadline: OnDeadline::Stay,
            notes: vec![],
            next_check: None,
            runs: 0,
            failures: 0,
            last: None,
            outcome: None,
        }
    }

    /// Waiting for something (a time or a probe), with no outcome yet.
    pub fn pending(&self) -> bool {
        self.outcome.is_none() && (self.at.is_some() || self.probe.is_some())
    }

    /// One line for `park ls`: the condition, then when it is next looked at.
    pub fn describe(&self, now: Timestamp) -> String {
        let mut s = match (&self.at, &self.probe) {
            (Some(at), _) => format!("at {}", local(at)),
            (None, Some(p)) => probe::describe(p, &self.when),
            (None, None) => "note only".to_string(),
        };
        if self.probe.is_some() {
            s.push_str(&format!(" every {}", human(self.every_secs)));
        }
        if let Some(d) = &self.deadline {
            s.push_str(&format!(", deadline {}", local(d)));
        }
        if let Some(o) = &self.outcome {
            s.push_str(&format!(" — {o}"));
        } else if let Some(n) = self.next_due() {
            let left = n.as_second() - now.as_second();
            s.push_str(&if left <= 0 {
                " — due now".to_string()
            } else {
                format!(" — next in {}", human(left as u64))
            });
        }
        if let Some(l) = &self.last {
            s.push_str(&format!(" (last: {l})"));
        }
        s
    }

    /// When the waker next has something to do for this wake.
    pub fn next_due(&self) -> Option<Timestamp> {
        if !self.pending() {
            return None;
        }
        let ts = |s: &Option<String>| s.as_deref().and_then(|x| x.parse::<Timestamp>().ok());
        let mut next = ts(&self.at);
        if self.probe.is_some() {
            next = ts(&self.next_check).or(Some(Timestamp::UNIX_EPOCH));
        }
        match (next, ts(&self.deadline)) {
            (Some(n), Some(d)) => Some(n.min(d)),
            (n, d) => n.or(d),
        }
    }
}

fn local(ts: &str) -> String {
    ts.parse::<Timestamp>()
        .map(|t| {
            t.to_zoned(TimeZone::system())
                .strftime("%Y-%m-%d %H:%M:%S")
                .to_string()
        })
        .unwrap_or_else(|_| ts.to_string())
}

fn human(secs: u64) -> String {
    match secs {
        s if s < 120 => format!("{s}s"),
        s if s < 7200 => format!("{}m", s / 60),
        s if s < 172_800 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86_400),
    }
}

/// What the waker does now for a wake.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Due {
    /// Unpark now; the reason goes into the note.
    Fire(String),
    /// Run the probe.
    Probe,
    /// The deadline passed before the condition held.
    TimedOut(String),
    /// Nothing until then.
    Sleep(Timestamp),
    /// Not waiting for anything.
    Nothing,
}

pub fn due(w: &Wake, now: Timestamp) -> Due {
    if !w.pending() {
        return Due::Nothing;
    }
    let ts = |s: &Option<String>| s.as_deref().and_then(|x| x.parse::<Timestamp>().ok());
    if let Some(at) = ts(&w.at) {
        if at <= now {
            return Due::Fire(format!(
                "the wake-up time came ({})",
                local(&at.to_string())
            ));
        }
        return Due::Sleep(at);
    }
    let Some(p) = &w.probe else {
        return Due::Nothing;
    };
    if let Some(d) = ts(&w.deadline) {
        if d <= now {
            return Due::TimedOut(format!(
                "timed out at {} waiting for {}",
                local(&d.to_string()),
                probe::describe(p, &w.when)
            ));
        }
    }
    match ts(&w.next_check) {
        Some(n) if n > now => Due::Sleep(w.next_due().unwrap_or(n)),
        _ => Due::Probe,
    }
}

/// Records a probe run; returns the reason to fire when it matched.
pub(crate) fn after_probe(w: &mut Wake, r: &ProbeResult, now: Timestamp) -> Option<String> {
    let p = w.probe.clone()?;
    w.runs += 1;
    w.last = Some(probe::summary(r));
    if probe::matches(&w.when, &p, r) {
        w.failures = 0;
        return Some(format!(
            "{} held ({}, run {})",
            probe::describe(&p, &w.when),
            probe::summary(r),
            w.runs
        ));
    }
    let every = w.every_secs.max(MIN_EVERY.as_secs());
    let wait = if r.error.is_some() {
        w.failures += 1;
        every
            .saturating_mul(1u64 << w.failures.min(16))
            .min(MAX_BACKOFF_SECS.max(every))
    } else {
        w.failures = 0;
        every
    };
    w.next_check = Some((now + (wait as i64).seconds()).to_string());
    None
}

/// The first prompt a woken agent gets: why it was parked and woken, then the notes. One line,
/// so a TUI composer never submits half of it.
pub fn prompt(parked_at: &str, reason: &str, notes: &[String]) -> String {
    let mut s = format!(
        "[park] This session was parked at {} and resumed because {reason}.",
        local(parked_at)
    );
    let notes: Vec<String> = notes
        .iter()
        .map(|n| n.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|n| !n.is_empty())
        .collect();
    if !notes.is_empty() {
        s.push_str(" Note: ");
        s.push_str(&notes.join(" | "));
    }
    s.chars().filter(|c| !c.is_control()).collect()
}

/// `--wake-at`: RFC 3339, `YYYY-MM-DD HH:MM[:SS]` (local time), or `HH:MM` (today, or tomorrow
/// when that has passed). Must be in the future and within 14 days.
pub fn parse_at(s: &str, now: Timestamp) -> Result<Timestamp, String> {
    let t = s.trim();
    let bad = || format!("invalid time {s:?} (expected RFC 3339, `YYYY-MM-DD HH:MM`, or `HH:MM`)");
    let tz = TimeZone::system();
    let at = if let Ok(ts) = t.parse::<Timestamp>() {
        ts
    } else if let Ok(dt) = t.parse::<civil::DateTime>() {
        dt.to_zoned(tz.clone()).map_err(|_| bad())?.timestamp()
    } else if let Ok(tm) = t.parse::<civil::Time>() {
        if t.len() > 8 {
            return Err(bad());
        }
        let today = now.to_zoned(tz.clone()).date();
        let z = today
            .to_datetime(tm)
            .to_zoned(tz.clone())
            .map_err(|_| bad())?;
        if z.timestamp() > now {
            z.timestamp()
        } else {
            today
                .tomorrow()
                .map_err(|_| bad())?
                .to_datetime(tm)
                .to_zoned(tz)
                .map_err(|_| bad())?
                .timestamp()
        }
    } else {
        return Err(bad());
    };
    if at <= now {
        return Err(format!("{s:?} is in the past"));
    }
    if at.as_second() - now.as_second() > MAX_WAIT.as_secs() as i64 {
        return Err(format!("{s:?} is more than 14 days away"));
    }
    Ok(at)
}

/// `--wake-in`: a duration from now, at most 14 days.
pub fn parse_in(s: &str, now: Timestamp) -> Result<Timestamp, String> {
    let d = crate::support::duration::parse(s)?;
    if d.is_zero() {
        return Err(format!("--wake-in {s:?}: must be more than 0s"));
    }
    if d > MAX_WAIT {
        return Err(format!("--wake-in {s:?}: at most 14 days"));
    }
    Ok(now + (d.as_secs() as i64).seconds())
}

/// `--deadline`: a duration from now or a time, as `--wake-in` / `--wake-at`.
pub fn parse_deadline(s: &str, now: Timestamp) -> Result<Timestamp, String> {
    if crate::support::duration::parse(s).is_ok() {
        return parse_in(s, now).map_err(|e| e.replace("--wake-in", "--deadline"));
    }
    parse_at(s, now)
}

/// `--every`: at least 5 s.
pub fn parse_every(s: &str) -> Result<u64, String> {
    let d = crate::support::duration::parse(s)?;
    if d < MIN_EVERY {
        return Err(format!("--every {s:?}: at least 5s"));
    }
    if d > MAX_WAIT {
        return Err(format!("--every {s:?}: at most 14 days"));
    }
    Ok(d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> Timestamp {
        "2026-12-03T12:00:00Z".parse().unwrap()
    }

    fn probe_wake() -> Wake {
        let mut w = Wake::new(now());
        w.probe = Some(Probe::Cmd {
            argv: vec!["true".into()],
            shell: false,
        });
        w.every_secs = 10;
        w
    }

    fn ran(exit: i32) -> ProbeResult {
        ProbeResult {
            exit: Some(exit),
            ..Default::default()
        }
    }

    #[test]
    fn a_timer_sleeps_until_due_and_a_missed_one_fires_once() {
        let mut w = Wake::new(now());
        w.at = Some("2026-12-03T12:00:30Z".into());
        assert_eq!(
            due(&w, now()),
            Due::Sleep("2026-12-03T12:00:30Z".parse().unwrap())
        );
        // The waker was down at the due time: the next look fires.
        let later: Timestamp = "2026-12-04T08:00:00Z".parse().unwrap();
        assert!(matches!(due(&w, later), Due::Fire(_)));
        // Once an outcome is recorded it never fires again.
        w.outcome = Some("could not wake: x".into());
        assert_eq!(due(&w, later), Due::Nothing);
        assert!(!w.pending());
    }

    #[test]
    fn a_probe_runs_when_due_rechecks_after_every_and_fires_on_a_match() {
        let mut w = probe_wake();
        assert_eq!(due(&w, now()), Due::Probe, "first check at once");
        assert_eq!(after_probe(&mut w, &ran(1), now()), None);
        assert_eq!(w.next_check.as_deref(), Some("2026-12-03T12:00:10Z"));
        assert!(matches!(due(&w, now()), Due::Sleep(_)));
        let t = now() + 10.seconds();
        assert_eq!(due(&w, t), Due::Probe);
        let why = after_probe(&mut w, &ran(0), t).expect("exit 0 matches");
        assert!(why.contains("run 2"), "{why}");
    }

    #[test]
    fn a_probe_that_cannot_run_backs_off_never_in_a_tight_loop() {
        let mut w = probe_wake();
        let broken = ProbeResult {
            error: Some("cannot run nope: No such file".into()),
            ..Default::default()
        };
        let mut t = now();
        let mut waits = vec![];
        for _ in 0..8 {
            assert_eq!(after_probe(&mut w, &broken, t), None);
            let n: Timestamp = w.next_check.as_deref().unwrap().parse().unwrap();
            waits.push(n.as_second() - t.as_second());
            t = n;
        }
        assert_eq!(waits[..4], [20, 40, 80, 160]);
        assert_eq!(*waits.last().unwrap(), 600, "capped at 10 min: {waits:?}");
        assert!(w.last.as_deref().unwrap().contains("cannot run"));
        // A run that works again resets the back-off.
        after_probe(&mut w, &ran(1), t);
        assert_eq!(w.failures, 0);
    }

    #[test]
    fn a_deadline_ends_the_wait_with_timed_out() {
        let mut w = probe_wake();
        w.deadline = Some("2026-12-03T12:01:00Z".into());
        w.next_check = Some("2026-12-03T12:05:00Z".into());
        assert_eq!(
            due(&w, now()),
            Due::Sleep("2026-12-03T12:01:00Z".parse().unwrap()),
            "the deadline is the next thing to look at"
        );
        let t = now() + 61.seconds();
        assert!(matches!(due(&w, t), Due::TimedOut(why) if why.contains("timed out")));
    }

    #[test]
    fn times_parse_in_every_form_and_refuse_the_past_and_far_future() {
        let n = now();
        assert_eq!(
            parse_at("2026-12-03T13:00:00Z", n).unwrap(),
            "2026-12-03T13:00:00Z".parse::<Timestamp>().unwrap()
        );
        let hm = parse_at("23:59", n).unwrap();
        assert!(hm > n && hm.as_second() - n.as_second() <= 86_400);
        let again = parse_at("00:01", n).unwrap();
        assert!(
            again > n && again.as_second() - n.as_second() <= 86_400,
            "HH:MM passed today → tomorrow"
        );
        assert!(parse_at("2026-12-04 09:30", n).is_ok());
        assert!(parse_at("2026-12-01T00:00:00Z", n)
            .unwrap_err()
            .contains("past"));
        assert!(parse_at("2027-06-01 10:00", n)
            .unwrap_err()
            .contains("14 days"));
        assert!(parse_at("tomorrow", n).is_err());
        assert_eq!(parse_in("3s", n).unwrap(), n + 3.seconds());
        assert!(parse_in("15d", n).is_err());
        assert!(parse_in("0s", n).is_err());
        assert!(parse_every("4s").is_err());
        assert_eq!(parse_every("5m").unwrap(), 300);
        assert_eq!(parse_deadline("1h", n).unwrap(), n + 1.hours());
        assert!(parse_deadline("2026-12-03 11:00", n).is_err());
    }

    #[test]
    fn the_prompt_is_one_line_and_carries_reason_and_notes() {
        let e = crate::store::ledger::tests::sample("a");
        let p = prompt(
            &e.parked_at,
            "CI went green",
            &["check PR 42\nthen\tmerge".into(), " ".into()],
        );
        assert!(p.starts_with("[park] This session was parked at"));
        assert!(p.contains("CI went green") && p.contains("check PR 42 then merge"));
        assert!(!p.contains('\n') && !p.contains('\t'));
    }
}
