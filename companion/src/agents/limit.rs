//! Usage-limit screens (issue 21 item 6): recognise the message Claude Code and Codex print when
//! a plan's usage limit stops a turn, and read the time the limit resets.
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
//! may lag): Claude Code 1.0.x `Claude usage limit reached. Your limit will reset at 9am
//! (America/Chicago).` (anthropics/claude-code #15064 v1.0.58, #5085 v1.0.67, #2087 `(Etc/GMT+5)`,
//! #8638 `at Oct 6, 6pm.`, #9236 wrapped before `at`), its raw form `Claude AI usage limit
//! reached|1760004000` (#8835); Claude Code 1.0.8x–2.0.x `5-hour limit reached ∙ resets 5am` (U+2219;
//! #6392 v1.0.89, #7892 v1.0.119), `Opus weekly limit reached ∙ resets Oct 31, 9am` (#10333),
//! `Session limit reached ∙ resets 8pm` (#11577); Codex ≤ 0.4x `You've hit your usage limit.
//! Upgrade to Pro (https://openai.com/chatgpt/pricing) or try again in 5 days 22 hours 11 minutes.`
//! (openai/codex #3899 v0.39, #3031 v0.27 `in 3 hours 2 minutes`, #3257 `Try again in 4 days 20
//! hours 9 minutes.`).
//!
//! The fixtures in `companion/tests/fixtures/limit/` are `tmux capture-pane -p -J` of the real CLIs
//! above (Claude signed in with a dummy `CLAUDE_CODE_OAUTH_TOKEN`, which is what makes it read the
//! `anthropic-ratelimit-unified-*` headers; a local mock answered `429` with
//! `anthropic-ratelimit-unified-status: rejected`, `…-reset`, `…-representative-claim`, and
//! Codex's `{"error": {"type": "usage_limit_reached", "plan_type", "resets_at"}}`), except the three
//! `*legacy*` ones, which put the issues' wordings into such a frame.
//!
//! # What counts
//!
//! Pure and total: any text, never a panic. Only the last [`BOTTOM`] non-empty lines of a capture
//! are searched, bottom up, and the lowest line that opens a limit message decides: a message
//! scrolled far up is history, and one whose reset cannot be read (`Try again later.`) is a limit
//! park cannot wait for, so `None` (an older message above it is not used). A message opens a line
//! (after glyphs like `⎿`, `■`), never in the middle of text, nor on a line led by an answer bullet
//! or a prompt (`●`, `⏺`, `•`, `❯`, `›`): a model quoting the wording is not a limit. It may wrap
//! over the next few lines. A message followed lower down, above Claude's input box (its `───`
//! rule), by a model answer or tool call (a line led by `●`/`⏺` for Claude, `•` for Codex, which
//! also leads Codex's `Working` status) is over: a later turn went through. A new prompt still
//! waiting for its answer is not noticed.
//!
//! Times: a time with no zone is read in `now`'s zone (for Codex: the daemon's zone is assumed to
//! be the same); a named IANA zone in parentheses wins. A wall time without a date is today's,
//! or tomorrow's when it is more than [`GRACE`] earlier than now (the CLIs truncate to the
//! minute, so a reset inside the current minute is still today's). A month and day without a year
//! take the year that puts them closest to now. A date without a time (`resets Oct 24`, seen in an
//! old issue) is `None`: the hour is unknown. `in 2 hours 5 minutes`, `in 4h 59m`, `in 30 seconds`,
//! `in less than a minute` count from `now` (from when park reads the screen, not when the CLI
//! printed it). A 24-hour `15:05` is read too, though neither CLI prints one. Weekday names (`on
//! Monday`) are not read: neither CLI prints them.

use jiff::civil::{Date, Time};
use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp, Zoned};
use park_protocol::Agent;

/// How many trailing non-empty lines of a screen are searched.
pub const BOTTOM: usize = 15;

/// How far in the past a printed wall time may be and still mean today (the CLIs print whole
/// minutes, truncated).
pub const GRACE: SignedDuration = SignedDuration::from_secs(60);

/// How many lines under its first one a message may wrap over.
const WRAP: usize = 4;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitScreen {
    pub agent: Agent,
    pub reset: Timestamp,
    /// The message, from its first word to its reset time, its lines joined by one space and
    /// typographic apostrophes and odd spaces made plain.
    pub text: String,
}

/// Claude Code: `You've hit your <limit> · resets <time> (<zone>)` and the older wordings.
pub fn claude(screen: &str, now: &Zoned) -> Option<LimitScreen> {
    find(
        screen,
        now,
        Agent::Claude,
        &['●', '⏺'],
        claude_opens,
        claude_reset,
    )
}

/// Codex: `You’ve hit your usage limit. … [T|t]ry again at <time>.` (or `in <duration>`).
pub fn codex(screen: &str, now: &Zoned) -> Option<LimitScreen> {
    find(screen, now, Agent::Codex, &['•'], codex_opens, codex_reset)
}

/// Leads a user's prompt line, never a limit message.
const PROMPTS: [char; 3] = ['❯', '›', '>'];

fn find(
    screen: &str,
    now: &Zoned,
    agent: Agent,
    answers: &[char],
    opens: fn(&str) -> bool,
    reset: fn(&str, &Zoned) -> Option<(Timestamp, usize)>,
) -> Option<LimitScreen> {
    let raw: Vec<&str> = screen.lines().collect();
    let filled: Vec<usize> = (0..raw.len())
        .filter(|&i| !raw[i].trim().is_empty())
        .collect();
    let window = &filled[filled.len().saturating_sub(BOTTOM)..];
    let first = *window.first()?;
    let lines: Vec<String> = raw[first..].iter().map(|l| plain(l)).collect();
    let (top, start) = window.iter().rev().find_map(|&i| {
        let line = &lines[i - first];
        let lead = line.find(|c: char| c.is_alphanumeric())?;
        let glyphs = &line[..lead];
        let led_by = |set: &[char]| glyphs.contains(|c: char| set.contains(&c));
        (!led_by(answers) && !led_by(&PROMPTS) && opens(&line[lead..])).then_some((i - first, lead))
    })?;
    // The message and the lines it wrapped onto.
    let mut msg = lines[top][start..].to_string();
    let mut end = top;
    for line in lines.iter().skip(top + 1).take(WRAP) {
        let continues = line
            .chars()
            .next()
            .is_some_and(|c| c.is_alphanumeric() || "/(\"'".contains(c));
        if !continues {
            break;
        }
        msg.push(' ');
        msg.push_str(line);
        end += 1;
    }
    // A later answer above the input box: the limit is over. (Claude's box opens with a rule, and
    // under it a narrow pane wraps the footer's `● high · /effort` onto a line of its own.)
    if lines
        .iter()
        .skip(end + 1)
        .take_while(|l| !is_rule(l))
        .any(|l| l.starts_with(|c: char| answers.contains(&c)))
    {
        return None;
    }
    let (reset, used) = reset(&msg, now)?;
    let mut text = msg.get(..used)?.trim_end().to_string();
    if msg.get(used..).is_some_and(|r| r.starts_with('.')) {
        text.push('.');
    }
    Some(LimitScreen { agent, reset, text })
}

/// A horizontal rule across the pane (Claude's input box).
fn is_rule(line: &str) -> bool {
    line.chars().count() >= 10 && line.chars().all(|c| c == '─' || c == '━')
}

/// `line` trimmed, its runs of whitespace (NBSP, U+202F included) one space, `’` an apostrophe.
fn plain(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    for c in line.trim().chars() {
        match c {
            '\u{2019}' | '\u{2018}' | '\u{2bc}' => out.push('\''),
            c if c.is_whitespace() => {
                if !out.ends_with(' ') {
                    out.push(' ');
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// `s` without its leading `prefix`, compared ASCII-case-insensitively.
fn strip_ci<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    s.get(..prefix.len())
        .filter(|h| h.eq_ignore_ascii_case(prefix))
        .and_then(|_| s.get(prefix.len()..))
}

/// The byte offset just past the first ASCII-case-insensitive `needle` in `s`.
fn after_ci(s: &str, needle: &str) -> Option<usize> {
    let hay = s.to_ascii_lowercase();
    hay.find(&needle.to_ascii_lowercase())
        .map(|i| i + needle.len())
}

/// The leading ASCII digits of `s`, and the rest.
fn digits(s: &str) -> (&str, &str) {
    let n = s.bytes().take_while(u8::is_ascii_digit).count();
    s.split_at(n)
}

/// The leading ASCII letters of `s`, and the rest.
fn letters(s: &str) -> (&str, &str) {
    let n = s.bytes().take_while(u8::is_ascii_alphabetic).count();
    s.split_at(n)
}

fn claude_opens(s: &str) -> bool {
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

fn claude_reset(msg: &str, now: &Zoned) -> Option<(Timestamp, usize)> {
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

fn codex_opens(s: &str) -> bool {
    s.starts_with("You've hit your usage limit")
}

fn codex_reset(msg: &str, now: &Zoned) -> Option<(Timestamp, usize)> {
    let at = after_ci(msg, "try again ")?;
    let (reset, left) = when(msg.get(at..)?, now)?;
    Some((reset, msg.len() - left.len()))
}

/// A reset written after `resets` / `try again`: `in <duration>`, or `[<date>[,]] <clock>
/// [(<zone>)]`, read against `now`. Also returns what follows it.
fn when<'a>(s: &'a str, now: &Zoned) -> Option<(Timestamp, &'a str)> {
    let s = s.trim_start();
    let s = strip_ci(s, "at ").unwrap_or(s);
    if let Some(rest) = strip_ci(s, "in ") {
        let (d, left) = duration(rest)?;
        return Some((now.timestamp().checked_add(d).ok()?, left));
    }
    let (date, rest) = match month_day(s) {
        Some((m, d, y, rest)) => (Some((m, d, y)), rest.trim_start_matches([',', ' '])),
        None => (None, s),
    };
    let (time, rest) = clock(rest)?;
    let (tz, rest) = match rest.trim_start().strip_prefix('(') {
        Some(inner) => {
            let close = inner.find(')')?;
            (
                TimeZone::get(inner[..close].trim()).ok()?,
                &inner[close + 1..],
            )
        }
        None => (now.time_zone().clone(), rest),
    };
    let at = |d: Date| -> Option<Timestamp> {
        Some(d.to_datetime(time).to_zoned(tz.clone()).ok()?.timestamp())
    };
    let reset = match date {
        Some((m, d, Some(y))) => at(Date::new(y, m, d).ok()?)?,
        Some((m, d, None)) => {
            // No year: this year's, unless last or next year's is closer to now.
            let y = now.with_time_zone(tz.clone()).year();
            let now = now.timestamp();
            [y.checked_sub(1), Some(y), y.checked_add(1)]
                .into_iter()
                .flatten()
                .filter_map(|y| at(Date::new(y, m, d).ok()?))
                .min_by_key(|t| t.duration_since(now).unsigned_abs())?
        }
        None => {
            let today = now.with_time_zone(tz.clone()).date();
            let t = at(today)?;
            if t.checked_add(GRACE).ok()? < now.timestamp() {
                at(today.tomorrow().ok()?)?
            } else {
                t
            }
        }
    };
    Some((reset, rest))
}

/// `3pm`, `8:43am`, `4:31 AM`, `12 AM` (any space before am/pm), or a 24-hour `15:05`.
fn clock(s: &str) -> Option<(Time, &str)> {
    let (h, rest) = digits(s);
    if h.is_empty() || h.len() > 2 {
        return None;
    }
    let h: i8 = h.parse().ok()?;
    let (m, rest) = match rest.strip_prefix(':') {
        Some(r) => {
            let (m, r) = digits(r);
            if m.len() != 2 {
                return None;
            }
            (Some(m.parse::<i8>().ok()?), r)
        }
        None => (None, rest),
    };
    let after = rest.trim_start();
    let half = |suffix: &str| {
        strip_ci(after, suffix).filter(|r| !r.starts_with(|c: char| c.is_alphanumeric()))
    };
    let (h24, rest) = match (half("am"), half("pm")) {
        (Some(r), _) if (1..=12).contains(&h) => (h % 12, r),
        (_, Some(r)) if (1..=12).contains(&h) => (h % 12 + 12, r),
        (None, None) if m.is_some() && h <= 23 => (h, rest),
        _ => return None,
    };
    Some((Time::new(h24, m.unwrap_or(0), 0, 0).ok()?, rest))
}

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// `Dec 7`, `Dec 6th`, `December 6`, then optionally `, 2026`: (month, day, year, the rest).
fn month_day(s: &str) -> Option<(i8, i8, Option<i16>, &str)> {
    let (word, rest) = letters(s);
    let word = word.to_ascii_lowercase();
    if word.len() < 3 {
        return None;
    }
    let month = MONTHS.iter().position(|m| m.starts_with(&word))? as i8 + 1;
    let rest = rest.strip_prefix('.').unwrap_or(rest).trim_start();
    let (day, rest) = digits(rest);
    if day.is_empty() || day.len() > 2 {
        return None;
    }
    let day: i8 = day.parse().ok()?;
    let rest = ["st", "nd", "rd", "th"]
        .iter()
        .find_map(|o| strip_ci(rest, o).filter(|r| !r.starts_with(|c: char| c.is_alphabetic())))
        .unwrap_or(rest);
    let mut year = None;
    let mut rest = rest;
    if let Some(r) = rest.strip_prefix(',') {
        let (y, after) = digits(r.trim_start());
        if y.len() == 4 {
            year = y.parse().ok();
            rest = after;
        }
    }
    Some((month, day, year, rest))
}

/// `2 hours 5 minutes`, `4h 59m`, `5 days 22 hours 11 minutes`, `30 seconds`, `less than a
/// minute`: the duration, and the rest.
fn duration(s: &str) -> Option<(SignedDuration, &str)> {
    if let Some(rest) = strip_ci(s, "less than a minute") {
        return Some((SignedDuration::from_mins(1), rest));
    }
    let mut total: i64 = 0;
    let mut any = false;
    let mut rest = s;
    loop {
        let t = rest.trim_start_matches([' ', ',']);
        let t = strip_ci(t, "and ").unwrap_or(t);
        let (n, after) = digits(t);
        if n.is_empty() || n.len() > 6 {
            break;
        }
        let (unit, after) = letters(after.trim_start());
        let secs = match unit.to_ascii_lowercase().as_str() {
            "d" | "day" | "days" => 86_400,
            "h" | "hr" | "hrs" | "hour" | "hours" => 3_600,
            "m" | "min" | "mins" | "minute" | "minutes" => 60,
            "s" | "sec" | "secs" | "second" | "seconds" => 1,
            _ => break,
        };
        total = total.checked_add(n.parse::<i64>().ok()?.checked_mul(secs)?)?;
        any = true;
        rest = after;
    }
    any.then_some((SignedDuration::from_secs(total), rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> Zoned {
        s.parse().unwrap()
    }

    fn ts(s: &str) -> Timestamp {
        s.parse::<Zoned>().unwrap().timestamp()
    }

    macro_rules! fixture {
        ($name:literal) => {
            include_str!(concat!("../../tests/fixtures/limit/", $name, ".txt"))
        };
    }

    // Real captures (see the module doc): Claude Code 2.1.197, Codex 0.171.0, 2026-12-05 ~05:40 UTC.
    const CLAUDE_SESSION_DIALOG: &str = fixture!("claude-session-limit-dialog");
    const CLAUDE_SESSION_WAITED: &str = fixture!("claude-session-limit-waited");
    const CLAUDE_WEEKLY_DATE: &str = fixture!("claude-weekly-limit-date");
    const CLAUDE_OPUS_UTC: &str = fixture!("claude-opus-limit-utc");
    const CLAUDE_THEN_ANSWER: &str = fixture!("claude-limit-then-answer");
    const CLAUDE_WEEKLY_50COL: &str = fixture!("claude-weekly-limit-50col");
    const CODEX_PLUS: &str = fixture!("codex-plus-limit");
    const CODEX_TEAM_DATE: &str = fixture!("codex-team-limit-date");
    const CODEX_NO_PLAN: &str = fixture!("codex-limit-no-plan");
    const CODEX_FREE_80COL: &str = fixture!("codex-free-limit-80col");
    const CODEX_THEN_ANSWER: &str = fixture!("codex-limit-then-answer");
    // Older wordings from GitHub issues in a real frame.
    const CLAUDE_LEGACY_REACHED: &str = fixture!("claude-legacy-usage-limit-reached");
    const CLAUDE_LEGACY_5_HOUR: &str = fixture!("claude-legacy-5-hour-limit");
    const CODEX_LEGACY_IN: &str = fixture!("codex-legacy-try-again-in");
    // Screens without a limit (from the other agent fixtures).
    const CLAUDE_IDLE: &str = include_str!("../../tests/fixtures/claude-idle-after-2.txt");
    const CODEX_IDLE: &str = include_str!("../../tests/fixtures/codex-idle-after-2.txt");

    #[test]
    fn claude_session_limit_with_its_dialog_and_after_it() {
        let now = at("2026-12-05T05:38:30+00:00[UTC]");
        for screen in [CLAUDE_SESSION_DIALOG, CLAUDE_SESSION_WAITED] {
            let l = claude(screen, &now).expect("a limit");
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
            claude(CLAUDE_SESSION_WAITED, &ny).unwrap().reset,
            ts("2026-12-05T07:43:00+00:00[UTC]")
        );
    }

    #[test]
    fn claude_tomorrow_roll_over_and_the_grace_minute() {
        // Past 8:43 in Berlin: tomorrow's 8:43.
        let late = at("2026-12-05T08:30:00+00:00[UTC]");
        assert_eq!(
            claude(CLAUDE_SESSION_WAITED, &late).unwrap().reset,
            ts("2026-12-06T08:43:00+01:00[Europe/Berlin]")
        );
        // Inside the printed minute (the CLI truncates 8:43:21 to 8:43): still today's.
        let inside = at("2026-12-05T08:43:40+01:00[Europe/Berlin]");
        assert_eq!(
            claude(CLAUDE_SESSION_WAITED, &inside).unwrap().reset,
            ts("2026-12-05T08:43:00+01:00[Europe/Berlin]")
        );
        // Berlin's today, not now's: 23:30 in New York is already the 6th in Berlin.
        let ny_night = at("2026-12-05T23:30:00-05:00[America/New_York]");
        assert_eq!(
            claude(CLAUDE_SESSION_WAITED, &ny_night).unwrap().reset,
            ts("2026-12-06T08:43:00+01:00[Europe/Berlin]")
        );
    }

    #[test]
    fn claude_weekly_limit_with_a_date_in_new_york() {
        let now = at("2026-12-05T00:39:00-05:00[America/New_York]");
        let l = claude(CLAUDE_WEEKLY_DATE, &now).expect("a limit");
        assert_eq!(l.reset, ts("2026-12-07T08:12:00-05:00[America/New_York]"));
        assert_eq!(
            l.text,
            "You've hit your weekly limit \u{b7} resets Dec 7, 8:12am (America/New_York)"
        );
        // Read from Berlin the instant is the same.
        let berlin = at("2026-12-05T06:39:00+01:00[Europe/Berlin]");
        assert_eq!(claude(CLAUDE_WEEKLY_DATE, &berlin).unwrap().reset, l.reset);
    }

    #[test]
    fn claude_limit_wrapped_in_a_narrow_pane_under_a_wrapped_footer() {
        // 50 columns: the date wraps onto the next line, and the footer's `● high · /effort`
        // (under the input box) leads a line of its own.
        let now = at("2026-12-05T06:54:19+01:00[Europe/Berlin]");
        let l = claude(CLAUDE_WEEKLY_50COL, &now).expect("a limit");
        assert_eq!(l.reset, ts("2026-12-07T14:27:00+01:00[Europe/Berlin]"));
        assert_eq!(
            l.text,
            "You've hit your weekly limit \u{b7} resets Dec 7, 2:27pm (Europe/Berlin)"
        );
    }

    #[test]
    fn claude_warnings_while_working_are_not_limits() {
        let now = at("2026-12-05T10:00:00+00:00[UTC]");
        for line in [
            "You've used 90% of your weekly limit \u{b7} resets Dec 7, 8am (UTC)",
            "Approaching usage limit \u{b7} resets at 10am",
            "You're now using usage credits \u{b7} Your session limit resets 3pm (UTC)",
        ] {
            let screen = format!("  ⎿  {line}\n\n❯ \n");
            assert_eq!(claude(&screen, &now), None, "{line}");
        }
    }

    #[test]
    fn claude_opus_limit_in_utc() {
        let now = at("2026-12-05T05:39:00+00:00[UTC]");
        let l = claude(CLAUDE_OPUS_UTC, &now).expect("a limit");
        assert_eq!(l.reset, ts("2026-12-05T06:46:00+00:00[UTC]"));
        assert!(l.text.contains("Opus limit"), "{}", l.text);
    }

    #[test]
    fn claude_older_wordings() {
        let chicago = at("2026-12-05T05:00:00-06:00[America/Chicago]");
        let l = claude(CLAUDE_LEGACY_REACHED, &chicago).expect("1.0.x wording");
        assert_eq!(l.reset, ts("2026-12-05T09:00:00-06:00[America/Chicago]"));
        assert_eq!(
            l.text,
            "Claude usage limit reached. Your limit will reset at 9am (America/Chicago)."
        );
        // No zone: now's; 5am already passed in Berlin → tomorrow's.
        let berlin = at("2026-12-05T06:40:00+01:00[Europe/Berlin]");
        let l = claude(CLAUDE_LEGACY_5_HOUR, &berlin).expect("1.0.8x wording");
        assert_eq!(l.reset, ts("2026-12-06T05:00:00+01:00[Europe/Berlin]"));
        assert_eq!(l.text, "5-hour limit reached \u{2219} resets 5am");
        let one = |line: &str| claude(&format!("> go on\n  ⎿  {line}\n\n❯ \n"), &berlin);
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
            claude(wrapped, &berlin).map(|l| l.reset),
            Some(ts("2026-12-05T15:00:00-03:00[America/Santiago]"))
        );
        assert_eq!(
            one("Opus weekly limit reached \u{2219} resets Oct 24"),
            None,
            "a date without a time"
        );
    }

    #[test]
    fn claude_wordings_times_and_zones() {
        let now = at("2026-12-05T10:00:00-05:00[America/New_York]");
        let one = |line: &str| claude(&format!("\n  ⎿  {line}\n\n❯ \n"), &now).map(|l| l.reset);
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
            assert_eq!(claude(screen, &now), None, "{screen}");
        }
        for screen in [
            "• You've hit your usage limit. Try again at 3:05 PM.\n",
            "› You've hit your usage limit. Try again at 3:05 PM.\n",
        ] {
            assert_eq!(codex(screen, &now), None, "{screen}");
        }
    }

    #[test]
    fn codex_plus_limit_today_in_its_local_zone() {
        let now = at("2026-12-05T06:43:30+01:00[Europe/Berlin]");
        let l = codex(CODEX_PLUS, &now).expect("a limit");
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
            codex(CODEX_PLUS, &utc).unwrap().reset,
            ts("2026-12-05T08:49:00+00:00[UTC]")
        );
        // Past 8:49: tomorrow's.
        let late = at("2026-12-05T09:00:00+01:00[Europe/Berlin]");
        assert_eq!(
            codex(CODEX_PLUS, &late).unwrap().reset,
            ts("2026-12-06T08:49:00+01:00[Europe/Berlin]")
        );
    }

    #[test]
    fn codex_team_limit_on_another_day_in_new_york() {
        let now = at("2026-12-05T00:44:00-05:00[America/New_York]");
        let l = codex(CODEX_TEAM_DATE, &now).expect("a limit");
        assert_eq!(l.reset, ts("2026-12-06T04:31:00-05:00[America/New_York]"));
        assert!(
            l.text.ends_with("or try again at Dec 6th, 2026 4:31 AM."),
            "{}",
            l.text
        );
    }

    #[test]
    fn codex_other_plans_and_widths() {
        let utc = at("2026-12-05T05:45:00+00:00[UTC]");
        let l = codex(CODEX_NO_PLAN, &utc).expect("a limit");
        assert_eq!(l.reset, ts("2026-12-05T06:35:00+00:00[UTC]"));
        assert_eq!(l.text, "You've hit your usage limit. Try again at 6:35 AM.");
        let berlin = at("2026-12-05T06:45:30+01:00[Europe/Berlin]");
        let l = codex(CODEX_FREE_80COL, &berlin).expect("a limit wrapped at 80 columns");
        assert_eq!(l.reset, ts("2026-12-05T06:48:00+01:00[Europe/Berlin]"));
        let one = |msg: &str| codex(&format!("■ {msg}\n\n› Ask Codex to do anything\n"), &utc);
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
            codex("■ Try again at 3:05 PM.\n", &utc),
            None,
            "no limit line"
        );
    }

    #[test]
    fn codex_relative_durations() {
        let now = at("2026-12-05T10:00:00+00:00[UTC]");
        let l = codex(CODEX_LEGACY_IN, &now).expect("≤ 0.4x wording");
        assert_eq!(l.reset, ts("2026-12-11T08:11:00+00:00[UTC]"));
        assert!(
            l.text
                .ends_with("or try again in 5 days 22 hours 11 minutes."),
            "{}",
            l.text
        );
        let one = |msg: &str| {
            codex(&format!("■ {msg}\n\n› Ask Codex to do anything\n"), &now).map(|l| l.reset)
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
    fn a_later_answer_ends_the_limit() {
        let now = at("2026-12-05T05:41:30+00:00[UTC]");
        assert_eq!(claude(CLAUDE_THEN_ANSWER, &now), None);
        assert_eq!(codex(CODEX_THEN_ANSWER, &now), None);
        // Without the answer (cut before `❯ are you back again`) the last limit counts.
        let cut = CLAUDE_THEN_ANSWER
            .split("❯ are you back again")
            .next()
            .unwrap();
        assert_eq!(
            claude(cut, &now).unwrap().reset,
            ts("2026-12-05T06:41:00+01:00[Europe/Berlin]")
        );
        let cut = CODEX_THEN_ANSWER
            .split("› are you there now")
            .next()
            .unwrap();
        assert!(codex(cut, &now).is_some());
    }

    #[test]
    fn a_limit_scrolled_far_up_is_history() {
        let now = at("2026-12-05T05:40:00+00:00[UTC]");
        let mut s = CLAUDE_SESSION_WAITED.to_string();
        for i in 0..BOTTOM {
            s.push_str(&format!("● later answer {i}\n"));
        }
        assert_eq!(claude(&s, &now), None);
        // History that is not an answer, pushed up far enough: the same.
        let mut s = String::from("  ⎿  You've hit your session limit \u{b7} resets 3pm (UTC)\n");
        for i in 0..BOTTOM {
            s.push_str(&format!("  later line {i}\n\n"));
        }
        assert_eq!(claude(&s, &now), None);
        let mut s = String::from("■ You've hit your usage limit. Try again at 3:05 PM.\n");
        for i in 0..BOTTOM {
            s.push_str(&format!("  later line {i}\n\n"));
        }
        assert_eq!(codex(&s, &now), None);
    }

    #[test]
    fn ordinary_screens_show_no_limit() {
        let now = at("2026-12-05T05:40:00+00:00[UTC]");
        for screen in [CLAUDE_IDLE, CODEX_IDLE, "", "\n\n\n", "   "] {
            assert_eq!(claude(screen, &now), None);
            assert_eq!(codex(screen, &now), None);
        }
        // Each agent reads only its own wording.
        assert_eq!(codex(CLAUDE_SESSION_WAITED, &now), None);
        assert_eq!(claude(CODEX_PLUS, &now), None);
    }

    #[test]
    fn trailing_spaces_and_crlf_do_not_matter() {
        let now = at("2026-12-05T05:38:30+00:00[UTC]");
        let padded: String = CLAUDE_SESSION_WAITED
            .lines()
            .map(|l| format!("{l:<130}\r\n"))
            .collect();
        assert_eq!(
            claude(&padded, &now).unwrap().reset,
            ts("2026-12-05T07:43:00+00:00[UTC]")
        );
        let trimmed: String = CODEX_NO_PLAN
            .lines()
            .map(|l| format!("{}\n", l.trim_end()))
            .collect();
        assert_eq!(
            codex(&trimmed, &now).unwrap().reset,
            ts("2026-12-05T06:35:00+00:00[UTC]")
        );
    }

    #[test]
    fn any_text_is_total() {
        let now = at("2026-12-05T10:00:00+00:00[UTC]");
        let pieces = [
            "You've hit your ",
            "You\u{2019}ve hit your usage limit",
            "limit reached",
            "Claude AI usage limit reached|",
            "\u{b7}",
            "\u{2219}",
            " resets ",
            " reset at ",
            "ry again ",
            " in ",
            "at ",
            "Dec ",
            "31st",
            ", 2026",
            " 12",
            ":5",
            "9",
            "pm",
            "AM",
            "\u{202f}",
            " (",
            "UTC",
            "Europe/Berlin",
            ")",
            "\n",
            "\r\n",
            "  ⎿  ",
            "■ ",
            "● ",
            "❯ ",
            "\u{fffd}",
            "é",
            "🦊",
            "99999999999999999999",
            "h",
            "days",
            ".",
            ",",
        ];
        let mut seed = 7u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize
        };
        for _ in 0..800 {
            let mut s = String::new();
            for _ in 0..next() % 16 {
                s.push_str(pieces[next() % pieces.len()]);
            }
            let _ = claude(&s, &now);
            let _ = codex(&s, &now);
            let _ = claude(
                &format!("  ⎿  You've hit your session limit \u{b7} resets {s}"),
                &now,
            );
            let _ = codex(
                &format!("■ You've hit your usage limit. Try again {s}"),
                &now,
            );
            // Garbled bytes, as a lossy decode would hand them over.
            let bytes: Vec<u8> = (0..next() % 64).map(|_| next() as u8).collect();
            let g = String::from_utf8_lossy(&bytes);
            let _ = claude(&format!("You've hit your limit \u{b7} resets {g}"), &now);
            let _ = codex(
                &format!("You've hit your usage limit. Try again at {g}"),
                &now,
            );
        }
        // Extremes of time: far ends of jiff's range must not overflow into a panic.
        for edge in [Timestamp::MIN, Timestamp::MAX] {
            let now = edge.to_zoned(TimeZone::UTC);
            for line in [
                "  ⎿  You've hit your limit \u{b7} resets 11:59pm",
                "  ⎿  You've hit your limit \u{b7} resets 12am (Pacific/Kiritimati)",
                "  ⎿  You've hit your limit \u{b7} resets Dec 31, 11pm",
                "  ⎿  Claude AI usage limit reached|999999999999",
            ] {
                let _ = claude(line, &now);
            }
            let _ = codex(
                "You've hit your usage limit. Try again in 999999 days.",
                &now,
            );
            let _ = codex(
                "You've hit your usage limit. Try again at Dec 31st, 9999 11:59 PM.",
                &now,
            );
        }
        // Huge inputs: a long line, many lines.
        let long = format!(
            "You've hit your limit \u{b7} resets {}",
            "9".repeat(200_000)
        );
        assert_eq!(claude(&long, &now), None);
        let many = "● answer line\n".repeat(100_000)
            + "  ⎿  You've hit your limit \u{b7} resets 3pm (UTC)\n";
        assert_eq!(
            claude(&many, &now).map(|l| l.reset),
            Some(ts("2026-12-05T15:00:00+00:00[UTC]"))
        );
    }
}
