//! Claude Code's usage-limit screen: the message it prints when a plan's usage limit stops a turn,
//! and its reset (what counts, and how times are read: [`crate::agents::limit`]).
//!
//! # The wordings, and where they come from
//!
//! **Claude Code 2.1.197** (the installed native binary,
//! `C=~/.cache/park/agents/claude/node_modules/@anthropic-ai/claude-code-linux-x64/claude`):
//! * `xfp`/`kfp` build the error of a rejected request with `hJ(kind, tail)` =
//!   ``You've hit your ${kind}${tail}``, `kind` one of `session limit` (five_hour), `weekly limit`
//!   (seven_day), `Opus limit`, `Sonnet limit`, `Fable 5 limit`, `usage limit`, `limit`, `org's
//!   monthly usage limit`, and `tail` = `` · resets ${Vee(resetsAt, true)}`` (U+00B7); the
//!   overage variant is ``You're out of usage credits · resets …``. Spend limits (`You've hit your
//!   monthly spend limit · raise it at …`) carry no reset and are not parked.
//!   `grep -ao 'function xfp(e,t){.\{1500\}' $C`, `grep -ao 'function kfp(e,t,n){[^}]*}' $C`,
//!   `grep -ao 'function hJ(e,t,n){[^}]*}' $C`.
//! * `Vee(secs, true)`: within 24 h `toLocaleTimeString("en-US", {hour: "numeric", minute: 0 ?
//!   undefined : "2-digit", hour12: true})` (`3pm`, `8:43am`), else `toLocaleString` with
//!   `month: "short", day: "numeric"` and `year` only when it is not this year (`Dec 7, 8:12am`,
//!   `Jan 2, 2027, 12am`); ` AM`/` PM` after a plain space become `am`/`pm` (a newer ICU puts
//!   U+202F there, which the regex misses: `8:43 AM`), then ` (${IANA zone of the CLI})`.
//!   Minutes are truncated, not rounded. `grep -ao 'function Vee(e,t=!1,n=!0,r=!1){.\{900\}' $C`.
//! * Seen for real (captures below): `  ⎿  You've hit your session limit · resets 8:43am
//!   (Europe/Berlin)`, the same with `     /upgrade to increase your usage limit.` under it on a
//!   repeat, and Claude opening `/rate-limit-options` ("Stop and wait for limit to reset").
//!
//! **Older versions** (not installed here; wordings from GitHub issues, kept because a user's CLI
//! may lag): Claude Code 1.0.x `Claude usage limit reached. Your limit will reset at 9am
//! (America/Chicago).` (anthropics/claude-code #15064 v1.0.58, #5085 v1.0.67, #2087 `(Etc/GMT+5)`,
//! #8638 `at Oct 6, 6pm.`, #9236 wrapped before `at`), its raw form `Claude AI usage limit
//! reached|1760004000` (#8835); Claude Code 1.0.8x–2.0.x `5-hour limit reached ∙ resets 5am` (U+2219;
//! #6392 v1.0.89, #7892 v1.0.119), `Opus weekly limit reached ∙ resets Oct 31, 9am` (#10333),
//! `Session limit reached ∙ resets 8pm` (#11577).
//!
//! The fixtures `companion/tests/fixtures/claude/limit/*` are `tmux capture-pane -p -J` of the real
//! CLI above, signed in with a dummy `CLAUDE_CODE_OAUTH_TOKEN` (which is what makes it read the
//! `anthropic-ratelimit-unified-*` headers; a local mock answered `429` with
//! `anthropic-ratelimit-unified-status: rejected`, `…-reset`, `…-representative-claim`), except
//! the two `*legacy*` ones, which put the issues' wordings into such a frame.

use jiff::{Timestamp, Zoned};
use park_protocol::Agent;

use crate::agents::limit::{digits, find, when, LimitScreen};

/// `You've hit your <limit> · resets <time> (<zone>)` and the older wordings.
pub(crate) fn read(screen: &str, now: &Zoned) -> Option<LimitScreen> {
    find(screen, now, Agent::Claude, &['●', '⏺'], opens, reset)
}

fn opens(s: &str) -> bool {
    if let Some(kind) = s.strip_prefix("You've hit your ") {
        // The fast-mode cooldown (`You've hit your fast limit · resets in 4m`) falls back to the
        // normal speed: no stop.
        return !kind.starts_with("fast ");
    }
    if s.starts_with("You're out of usage credits")
        || s.starts_with("Claude AI usage limit reached|")
    {
        return true;
    }
    // `5-hour limit reached`, `Session limit reached`, `Opus weekly limit reached`, `Claude usage
    // limit reached`: a short name of words, then `limit reached`.
    let Some(i) = s.find("limit reached") else {
        return false;
    };
    let name = &s[..i];
    let first = name.split(' ').next().unwrap_or_default();
    i <= 32
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == ' ' || c == '-')
        && !["fast", "context", "subagent"].contains(&first.to_ascii_lowercase().as_str())
}

fn reset(msg: &str, now: &Zoned) -> Option<(Timestamp, usize)> {
    if let Some(rest) = msg.strip_prefix("Claude AI usage limit reached|") {
        let (secs, _) = digits(rest);
        let secs = secs.get(..secs.len().min(12))?;
        let used = msg.len() - rest.len() + secs.len();
        return Some((Timestamp::from_second(secs.parse().ok()?).ok()?, used));
    }
    // The reset follows the limit's name closely (`· resets`, `. Your limit will reset at`).
    let head = msg.char_indices().nth(120).map_or(msg, |(i, _)| &msg[..i]);
    let at = ["resets ", "reset at ", "will reset "]
        .iter()
        .filter_map(|k| head.find(k).map(|i| i + k.len()))
        .min()?;
    let (reset, left) = when(&msg[at..], now)?;
    Some((reset, msg.len() - left.len()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::limit::test_kit::{at, ts};
    use crate::agents::limit::BOTTOM;
    use crate::agents::screen::test_kit::fixture;

    // Real captures (see the module doc): Claude Code 2.1.197, 2026-12-05 ~05:40 UTC.
    const SESSION_DIALOG: &str = fixture!("claude/limit/session-limit-dialog.txt");
    const SESSION_WAITED: &str = fixture!("claude/limit/session-limit-waited.txt");
    const WEEKLY_DATE: &str = fixture!("claude/limit/weekly-limit-date.txt");
    const OPUS_UTC: &str = fixture!("claude/limit/opus-limit-utc.txt");
    const THEN_ANSWER: &str = fixture!("claude/limit/limit-then-answer.txt");
    const WEEKLY_50COL: &str = fixture!("claude/limit/weekly-limit-50col.txt");
    // Older wordings from GitHub issues in a real frame.
    const LEGACY_REACHED: &str = fixture!("claude/limit/legacy-usage-limit-reached.txt");
    const LEGACY_5_HOUR: &str = fixture!("claude/limit/legacy-5-hour-limit.txt");
    // A screen without a limit, and another agent's limit.
    const IDLE: &str = fixture!("claude/idle-after-2.txt");
    const OTHER_IDLE: &str = fixture!("codex/idle-after-2.txt");
    const OTHER_LIMIT: &str = fixture!("codex/limit/plus-limit.txt");

    #[test]
    fn session_limit_with_its_dialog_and_after_it() {
        let now = at("2026-12-05T05:38:30+00:00[UTC]");
        for screen in [SESSION_DIALOG, SESSION_WAITED] {
            let l = read(screen, &now).expect("a limit");
            assert_eq!(l.agent, Agent::Claude);
            assert_eq!(l.reset, ts("2026-12-05T08:43:00+01:00[Europe/Berlin]"));
            assert_eq!(
                l.text,
                "You've hit your session limit \u{b7} resets 8:43am (Europe/Berlin)"
            );
        }
        // The named zone wins over now's: the same instant from New York.
        let ny = at("2026-12-05T00:38:30-05:00[America/New_York]");
        assert_eq!(
            read(SESSION_WAITED, &ny).unwrap().reset,
            ts("2026-12-05T07:43:00+00:00[UTC]")
        );
    }

    #[test]
    fn tomorrow_roll_over_and_the_grace_minute() {
        // Past 8:43 in Berlin: tomorrow's 8:43.
        let late = at("2026-12-05T08:30:00+00:00[UTC]");
        assert_eq!(
            read(SESSION_WAITED, &late).unwrap().reset,
            ts("2026-12-06T08:43:00+01:00[Europe/Berlin]")
        );
        // Inside the printed minute (the CLI truncates 8:43:21 to 8:43): still today's.
        let inside = at("2026-12-05T08:43:40+01:00[Europe/Berlin]");
        assert_eq!(
            read(SESSION_WAITED, &inside).unwrap().reset,
            ts("2026-12-05T08:43:00+01:00[Europe/Berlin]")
        );
        // Berlin's today, not now's: 23:30 in New York is already the 6th in Berlin.
        let ny_night = at("2026-12-05T23:30:00-05:00[America/New_York]");
        assert_eq!(
            read(SESSION_WAITED, &ny_night).unwrap().reset,
            ts("2026-12-06T08:43:00+01:00[Europe/Berlin]")
        );
    }

    #[test]
    fn weekly_limit_with_a_date_in_new_york() {
        let now = at("2026-12-05T00:39:00-05:00[America/New_York]");
        let l = read(WEEKLY_DATE, &now).expect("a limit");
        assert_eq!(l.reset, ts("2026-12-07T08:12:00-05:00[America/New_York]"));
        assert_eq!(
            l.text,
            "You've hit your weekly limit \u{b7} resets Dec 7, 8:12am (America/New_York)"
        );
        // Read from Berlin the instant is the same.
        let berlin = at("2026-12-05T06:39:00+01:00[Europe/Berlin]");
        assert_eq!(read(WEEKLY_DATE, &berlin).unwrap().reset, l.reset);
    }

    #[test]
    fn limit_wrapped_in_a_narrow_pane_under_a_wrapped_footer() {
        // 50 columns: the date wraps onto the next line, and the footer's `● high · /effort`
        // (under the input box) leads a line of its own.
        let now = at("2026-12-05T06:54:19+01:00[Europe/Berlin]");
        let l = read(WEEKLY_50COL, &now).expect("a limit");
        assert_eq!(l.reset, ts("2026-12-07T14:27:00+01:00[Europe/Berlin]"));
        assert_eq!(
            l.text,
            "You've hit your weekly limit \u{b7} resets Dec 7, 2:27pm (Europe/Berlin)"
        );
    }

    #[test]
    fn warnings_while_working_are_not_limits() {
        let now = at("2026-12-05T10:00:00+00:00[UTC]");
        for line in [
            "You've used 90% of your weekly limit \u{b7} resets Dec 7, 8am (UTC)",
            "Approaching usage limit \u{b7} resets at 10am",
            "You're now using usage credits \u{b7} Your session limit resets 3pm (UTC)",
        ] {
            let screen = format!("  ⎿  {line}\n\n❯ \n");
            assert_eq!(read(&screen, &now), None, "{line}");
        }
    }

    #[test]
    fn opus_limit_in_utc() {
        let now = at("2026-12-05T05:39:00+00:00[UTC]");
        let l = read(OPUS_UTC, &now).expect("a limit");
        assert_eq!(l.reset, ts("2026-12-05T06:46:00+00:00[UTC]"));
        assert!(l.text.contains("Opus limit"), "{}", l.text);
    }

    #[test]
    fn older_wordings() {
        let chicago = at("2026-12-05T05:00:00-06:00[America/Chicago]");
        let l = read(LEGACY_REACHED, &chicago).expect("1.0.x wording");
        assert_eq!(l.reset, ts("2026-12-05T09:00:00-06:00[America/Chicago]"));
        assert_eq!(
            l.text,
            "Claude usage limit reached. Your limit will reset at 9am (America/Chicago)."
        );
        // No zone: now's; 5am already passed in Berlin → tomorrow's.
        let berlin = at("2026-12-05T06:40:00+01:00[Europe/Berlin]");
        let l = read(LEGACY_5_HOUR, &berlin).expect("1.0.8x wording");
        assert_eq!(l.reset, ts("2026-12-06T05:00:00+01:00[Europe/Berlin]"));
        assert_eq!(l.text, "5-hour limit reached \u{2219} resets 5am");
        let one = |line: &str| read(&format!("> go on\n  ⎿  {line}\n\n❯ \n"), &berlin);
        assert_eq!(
            one("Opus weekly limit reached \u{2219} resets Oct 31, 9am").map(|l| l.reset),
            Some(ts("2026-10-31T09:00:00+01:00[Europe/Berlin]")),
            "a month and day without a year: the closest year (here a passed reset)"
        );
        assert_eq!(
            one("Claude usage limit reached. Your limit will reset at 1pm (Etc/GMT+5).")
                .map(|l| l.reset),
            Some(ts("2026-12-05T18:00:00+00:00[UTC]"))
        );
        assert_eq!(
            one("Claude AI usage limit reached|1796464800").map(|l| (l.reset, l.text)),
            Some((
                Timestamp::from_second(1_796_464_800).unwrap(),
                "Claude AI usage limit reached|1796464800".to_string()
            ))
        );
        // Wrapped before `at` (issue #9236).
        let wrapped = "  ⎿  Claude usage limit reached. Your limit will reset\n     at 3pm (America/Santiago).\n";
        assert_eq!(
            read(wrapped, &berlin).map(|l| l.reset),
            Some(ts("2026-12-05T15:00:00-03:00[America/Santiago]"))
        );
        assert_eq!(
            one("Opus weekly limit reached \u{2219} resets Oct 24"),
            None,
            "a date without a time"
        );
    }

    #[test]
    fn wordings_times_and_zones() {
        let now = at("2026-12-05T10:00:00-05:00[America/New_York]");
        let one = |line: &str| read(&format!("\n  ⎿  {line}\n\n❯ \n"), &now).map(|l| l.reset);
        assert_eq!(
            one("You've hit your usage limit \u{b7} resets 3:30pm (UTC)"),
            Some(ts("2026-12-05T15:30:00+00:00[UTC]"))
        );
        assert_eq!(
            one("You've hit your Opus limit \u{b7} resets 4\u{202f}PM"),
            Some(ts("2026-12-05T16:00:00-05:00[America/New_York]")),
            "no zone: now's; a narrow no-break space before PM (newer ICU)"
        );
        assert_eq!(
            one("You've hit your limit \u{b7} resets Jan 2, 2027, 12am (UTC)"),
            Some(ts("2027-01-02T00:00:00+00:00[UTC]"))
        );
        assert_eq!(
            one("You've hit your session limit \u{b7} resets 12pm"),
            Some(ts("2026-12-05T12:00:00-05:00[America/New_York]"))
        );
        assert_eq!(
            one("You've hit your session limit \u{b7} resets 12am"),
            Some(ts("2026-12-06T00:00:00-05:00[America/New_York]"))
        );
        assert_eq!(
            one("You're out of usage credits \u{b7} resets 11am"),
            Some(ts("2026-12-05T11:00:00-05:00[America/New_York]"))
        );
        assert_eq!(
            one("Session limit reached \u{2219} resets in 2 hours"),
            Some(ts("2026-12-05T12:00:00-05:00[America/New_York]"))
        );
        assert_eq!(
            one("You've hit your session limit \u{b7} resets 15:05"),
            Some(ts("2026-12-05T15:05:00-05:00[America/New_York]")),
            "24-hour"
        );
        for bad in [
            "You've hit your session limit \u{b7} resets 25pm (UTC)",
            "You've hit your session limit \u{b7} resets 0am",
            "You've hit your session limit \u{b7} resets 13pm",
            "You've hit your session limit \u{b7} resets 3:7pm",
            "You've hit your session limit \u{b7} resets 3pm (Mars/Base)",
            "You've hit your session limit \u{b7} resets Feb 30, 3pm",
            "You've hit your session limit \u{b7} resets 3",
            "You've hit your monthly spend limit \u{b7} raise it at claude.ai/settings/usage",
            "You've hit your fast limit \u{b7} resets in 4m 30s",
            "Context limit reached \u{b7} /compact or /clear to continue",
        ] {
            assert_eq!(one(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_quoted_or_typed_wording_is_not_a_limit() {
        let now = at("2026-12-05T10:00:00+00:00[UTC]");
        for screen in [
            "● You've hit your session limit \u{b7} resets 3pm (UTC)\n\n❯ \n",
            "⏺ I said: You've hit your session limit \u{b7} resets 3pm\n",
            "❯ You've hit your session limit \u{b7} resets 3pm (UTC)\n",
        ] {
            assert_eq!(read(screen, &now), None, "{screen}");
        }
    }

    #[test]
    fn a_later_answer_ends_the_limit() {
        let now = at("2026-12-05T05:41:30+00:00[UTC]");
        assert_eq!(read(THEN_ANSWER, &now), None);
        // Without the answer (cut before `❯ are you back again`) the last limit counts.
        let cut = THEN_ANSWER.split("❯ are you back again").next().unwrap();
        assert_eq!(
            read(cut, &now).unwrap().reset,
            ts("2026-12-05T06:41:00+01:00[Europe/Berlin]")
        );
    }

    #[test]
    fn a_limit_scrolled_far_up_is_history() {
        let now = at("2026-12-05T05:40:00+00:00[UTC]");
        let mut s = SESSION_WAITED.to_string();
        for i in 0..BOTTOM {
            s.push_str(&format!("● later answer {i}\n"));
        }
        assert_eq!(read(&s, &now), None);
        // History that is not an answer, pushed up far enough: the same.
        let mut s = String::from("  ⎿  You've hit your session limit \u{b7} resets 3pm (UTC)\n");
        for i in 0..BOTTOM {
            s.push_str(&format!("  later line {i}\n\n"));
        }
        assert_eq!(read(&s, &now), None);
    }

    #[test]
    fn ordinary_screens_show_no_limit() {
        let now = at("2026-12-05T05:40:00+00:00[UTC]");
        for screen in [IDLE, OTHER_IDLE, "", "\n\n\n", "   "] {
            assert_eq!(read(screen, &now), None);
        }
        // It reads only its own wording.
        assert_eq!(read(OTHER_LIMIT, &now), None);
    }

    #[test]
    fn trailing_spaces_and_crlf_do_not_matter() {
        let now = at("2026-12-05T05:38:30+00:00[UTC]");
        let padded: String = SESSION_WAITED
            .lines()
            .map(|l| format!("{l:<130}\r\n"))
            .collect();
        assert_eq!(
            read(&padded, &now).unwrap().reset,
            ts("2026-12-05T07:43:00+00:00[UTC]")
        );
    }

    /// Totality over any text is one test for every agent's reader (`agents::limit`); this one
    /// pins what a huge input still reads.
    #[test]
    fn huge_inputs_read_in_bounded_work() {
        let now = at("2026-12-05T10:00:00+00:00[UTC]");
        // Huge inputs: a long line, many lines.
        let long = format!(
            "You've hit your limit \u{b7} resets {}",
            "9".repeat(200_000)
        );
        assert_eq!(read(&long, &now), None);
        let many = "● answer line\n".repeat(100_000)
            + "  ⎿  You've hit your limit \u{b7} resets 3pm (UTC)\n";
        assert_eq!(
            read(&many, &now).map(|l| l.reset),
            Some(ts("2026-12-05T15:00:00+00:00[UTC]"))
        );
    }
}
