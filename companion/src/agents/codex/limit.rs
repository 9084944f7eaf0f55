//! Codex CLI's usage-limit screen: the message it prints when a plan's usage limit stops a turn,
//! and its reset (what counts, and how times are read: [`crate::agents::limit`]). A time with no
//! zone is read in park's zone: the daemon that formats it is assumed to run in the same one.
//!
//! # The wordings, and where they come from
//!
//! **Codex 0.171.0** (the native binary,
//! `X=~/.cache/park/agents/codex/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex`;
//! the source is `codex-rs/protocol/src/error.rs`, `UsageLimitReachedError`):
//! * `You’ve hit your usage limit.` — with U+2019, not `'` (`grep -ao '.\{4\}ve hit your usage
//!   limit.\{0,120\}' $X | od -c`) — then per plan ` Upgrade to Pro (https://chatgpt.com/explore/pro),
//!   visit https://chatgpt.com/settings/usage to purchase more credits`, ` To get more access now,
//!   send a request to your admin`, ` Upgrade to Plus to continue using Codex
//!   (https://chatgpt.com/explore/plus),`, ` Visit https://chatgpt.com/settings/usage to purchase
//!   more credits`, or nothing; `You’ve hit your usage limit for {limit}. Switch to another model
//!   now,`; then ` or try again at {t}.` / ` Try again at {t}.` (` … later.` without a reset).
//!   `strings $X | grep -E 've hit your usage limit|[Tt]ry again (at|later)|%-I:%M %p'`.
//! * `{t}` = `%-I:%M %p` (`8:49 AM`) when the reset is on the local today, else
//!   `%b %-d{st|nd|rd|th}, %Y %-I:%M %p` (`Dec 6th, 2026 4:31 AM`), in the local zone of the
//!   process that formats it: with 0.171 that is the shared app-server daemon (`codex app-server`),
//!   not the TUI — seen in the lab, where a TUI under `TZ=America/New_York` printed Berlin times
//!   from a daemon started under `TZ=Europe/Berlin`.
//! * The TUI prints the message as `■ …`, wrapped by Codex itself at the pane width (even inside a
//!   URL), so `capture-pane -J` keeps the pieces on separate lines.
//!
//! **Older versions** (not installed here; wordings from GitHub issues, kept because a user's CLI
//! may lag): Codex ≤ 0.4x `You've hit your usage limit. Upgrade to Pro
//! (https://openai.com/chatgpt/pricing) or try again in 5 days 22 hours 11 minutes.` (openai/codex
//! #3899 v0.39, #3031 v0.27 `in 3 hours 2 minutes`, #3257 `Try again in 4 days 20 hours 9
//! minutes.`).
//!
//! The fixtures `companion/tests/fixtures/codex/limit/*` are `tmux capture-pane -p -J` of the real
//! CLI above (a local mock answered `429` with `{"error": {"type": "usage_limit_reached",
//! "plan_type", "resets_at"}}`), except the `*legacy*` one, which puts the issues' wording into
//! such a frame.

use jiff::{Timestamp, Zoned};
use park_protocol::Agent;

use crate::agents::limit::{after_ci, find, when, LimitScreen};

/// `You’ve hit your usage limit. … [T|t]ry again at <time>.` (or `in <duration>`).
pub(crate) fn read(screen: &str, now: &Zoned) -> Option<LimitScreen> {
    find(screen, now, Agent::Codex, &['•'], opens, reset)
}

fn opens(s: &str) -> bool {
    s.starts_with("You've hit your usage limit")
}

fn reset(msg: &str, now: &Zoned) -> Option<(Timestamp, usize)> {
    let at = after_ci(msg, "try again ")?;
    let (reset, left) = when(msg.get(at..)?, now)?;
    Some((reset, msg.len() - left.len()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::limit::test_kit::{at, ts};
    use crate::agents::limit::BOTTOM;
    use crate::agents::screen::test_kit::fixture;
    use jiff::SignedDuration;

    // Real captures (see the module doc): Codex 0.171.0, 2026-12-05 ~05:40 UTC.
    const PLUS: &str = fixture!("codex/limit/plus-limit.txt");
    const TEAM_DATE: &str = fixture!("codex/limit/team-limit-date.txt");
    const NO_PLAN: &str = fixture!("codex/limit/limit-no-plan.txt");
    const FREE_80COL: &str = fixture!("codex/limit/free-limit-80col.txt");
    const THEN_ANSWER: &str = fixture!("codex/limit/limit-then-answer.txt");
    // The older wording from GitHub issues in a real frame.
    const LEGACY_IN: &str = fixture!("codex/limit/legacy-try-again-in.txt");
    // A screen without a limit, and another agent's limit.
    const IDLE: &str = fixture!("codex/idle-after-2.txt");
    const OTHER_IDLE: &str = fixture!("claude/idle-after-2.txt");
    const OTHER_LIMIT: &str = fixture!("claude/limit/session-limit-waited.txt");

    #[test]
    fn plus_limit_today_in_its_local_zone() {
        let now = at("2026-12-05T06:43:30+01:00[Europe/Berlin]");
        let l = read(PLUS, &now).expect("a limit");
        assert_eq!(l.agent, Agent::Codex);
        assert_eq!(l.reset, ts("2026-12-05T08:49:00+01:00[Europe/Berlin]"));
        assert_eq!(
            l.text,
            "You've hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit \
             https://chatgpt.com/settings/ usage to purchase more credits or try again at 8:49 AM."
        );
        // The same screen read in UTC means 8:49 UTC (Codex prints no zone).
        let utc = at("2026-12-05T05:43:30+00:00[UTC]");
        assert_eq!(
            read(PLUS, &utc).unwrap().reset,
            ts("2026-12-05T08:49:00+00:00[UTC]")
        );
        // Past 8:49: tomorrow's.
        let late = at("2026-12-05T09:00:00+01:00[Europe/Berlin]");
        assert_eq!(
            read(PLUS, &late).unwrap().reset,
            ts("2026-12-06T08:49:00+01:00[Europe/Berlin]")
        );
    }

    #[test]
    fn team_limit_on_another_day_in_new_york() {
        let now = at("2026-12-05T00:44:00-05:00[America/New_York]");
        let l = read(TEAM_DATE, &now).expect("a limit");
        assert_eq!(l.reset, ts("2026-12-06T04:31:00-05:00[America/New_York]"));
        assert!(
            l.text.ends_with("or try again at Dec 6th, 2026 4:31 AM."),
            "{}",
            l.text
        );
    }

    #[test]
    fn other_plans_and_widths() {
        let utc = at("2026-12-05T05:45:00+00:00[UTC]");
        let l = read(NO_PLAN, &utc).expect("a limit");
        assert_eq!(l.reset, ts("2026-12-05T06:35:00+00:00[UTC]"));
        assert_eq!(l.text, "You've hit your usage limit. Try again at 6:35 AM.");
        let berlin = at("2026-12-05T06:45:30+01:00[Europe/Berlin]");
        let l = read(FREE_80COL, &berlin).expect("a limit wrapped at 80 columns");
        assert_eq!(l.reset, ts("2026-12-05T06:48:00+01:00[Europe/Berlin]"));
        let one = |msg: &str| read(&format!("■ {msg}\n\n› Ask Codex to do anything\n"), &utc);
        assert_eq!(
            one("You\u{2019}ve hit your usage limit for GPT-5.3-Codex-Spark. Switch to another model now, or try again at 11:31 PM.")
                .map(|l| l.reset),
            Some(ts("2026-12-05T23:31:00+00:00[UTC]"))
        );
        assert_eq!(
            one("You've hit your usage limit. Try again at 3:05 PM (America/Chicago).")
                .map(|l| l.reset),
            Some(ts("2026-12-05T15:05:00-06:00[America/Chicago]"))
        );
        assert_eq!(
            one("You\u{2019}ve hit your usage limit. To get more access now, send a request to your admin or try again at Jan 1st, 2027 12:00 AM.")
                .map(|l| l.reset),
            Some(ts("2027-01-01T00:00:00+00:00[UTC]"))
        );
        assert_eq!(
            one("You\u{2019}ve hit your usage limit. Try again later."),
            None
        );
        assert_eq!(
            one("You've hit your usage limit. Upgrade to Pro (https://openai.com/chatgpt/pricing), or wait for limits to reset (every 5h and every week.)."),
            None
        );
        assert_eq!(
            one("Your workspace is out of credits. Add credits to continue."),
            None
        );
        assert_eq!(
            read("■ Try again at 3:05 PM.\n", &utc),
            None,
            "no limit line"
        );
    }

    #[test]
    fn relative_durations() {
        let now = at("2026-12-05T10:00:00+00:00[UTC]");
        let l = read(LEGACY_IN, &now).expect("≤ 0.4x wording");
        assert_eq!(l.reset, ts("2026-12-11T08:11:00+00:00[UTC]"));
        assert!(
            l.text
                .ends_with("or try again in 5 days 22 hours 11 minutes."),
            "{}",
            l.text
        );
        let one = |msg: &str| {
            read(&format!("■ {msg}\n\n› Ask Codex to do anything\n"), &now).map(|l| l.reset)
        };
        for (msg, secs) in [
            (
                "You've hit your usage limit. Try again in 2 hours 5 minutes.",
                7_500,
            ),
            ("You've hit your usage limit. Try again in 4h 59m.", 17_940),
            ("You've hit your usage limit. Try again in 4h59m.", 17_940),
            ("You've hit your usage limit. Try again in 30 seconds.", 30),
            (
                "You've hit your usage limit. Try again in 1 day, 2 hours and 3 minutes.",
                93_780,
            ),
            (
                "You've hit your usage limit. Try again in less than a minute.",
                60,
            ),
        ] {
            assert_eq!(
                one(msg),
                Some(now.timestamp() + SignedDuration::from_secs(secs)),
                "{msg}"
            );
        }
        assert_eq!(
            one("You've hit your usage limit. Try again in a while."),
            None
        );
        assert_eq!(
            one("You've hit your usage limit. Try again in 9999999 days."),
            None
        );
    }

    #[test]
    fn a_quoted_or_typed_wording_is_not_a_limit() {
        let now = at("2026-12-05T10:00:00+00:00[UTC]");
        for screen in [
            "• You've hit your usage limit. Try again at 3:05 PM.\n",
            "› You've hit your usage limit. Try again at 3:05 PM.\n",
        ] {
            assert_eq!(read(screen, &now), None, "{screen}");
        }
    }

    #[test]
    fn a_later_answer_ends_the_limit() {
        let now = at("2026-12-05T05:41:30+00:00[UTC]");
        assert_eq!(read(THEN_ANSWER, &now), None);
        // Without the answer the last limit counts.
        let cut = THEN_ANSWER.split("› are you there now").next().unwrap();
        assert!(read(cut, &now).is_some());
    }

    #[test]
    fn a_limit_scrolled_far_up_is_history() {
        let now = at("2026-12-05T05:40:00+00:00[UTC]");
        let mut s = String::from("■ You've hit your usage limit. Try again at 3:05 PM.\n");
        for i in 0..BOTTOM {
            s.push_str(&format!("  later line {i}\n\n"));
        }
        assert_eq!(read(&s, &now), None);
    }

    #[test]
    fn ordinary_screens_show_no_limit() {
        let now = at("2026-12-05T05:40:00+00:00[UTC]");
        for screen in [OTHER_IDLE, IDLE, "", "\n\n\n", "   "] {
            assert_eq!(read(screen, &now), None);
        }
        // It reads only its own wording.
        assert_eq!(read(OTHER_LIMIT, &now), None);
    }

    #[test]
    fn trailing_spaces_and_crlf_do_not_matter() {
        let now = at("2026-12-05T05:38:30+00:00[UTC]");
        let trimmed: String = NO_PLAN
            .lines()
            .map(|l| format!("{}\n", l.trim_end()))
            .collect();
        assert_eq!(
            read(&trimmed, &now).unwrap().reset,
            ts("2026-12-05T06:35:00+00:00[UTC]")
        );
    }
}
