//! Usage-limit screens (issue 21 item 6): the kit each agent's reader
//! (`agents/<name>/limit.rs`) uses to recognise the message its CLI prints when a plan's usage
//! limit stops a turn, and to read the time the limit resets. The wordings, and where they come
//! from, are documented with each agent's reader.
//!
//! # What counts
//!
//! Pure and total: any text, never a panic. Only the last [`BOTTOM`] non-empty lines of a capture
//! are searched, bottom up, and the lowest line that opens a limit message decides: a message
//! scrolled far up is history, and one whose reset cannot be read (`Try again later.`) is a limit
//! park cannot wait for, so `None` (an older message above it is not used). A message opens a line
//! (after glyphs like `⎿`, `■`), never in the middle of text, nor on a line led by one of the
//! agent's answer bullets or a prompt (`❯`, `›`, `>`): a model quoting the wording is not a limit.
//! It may wrap over the next few lines. A message followed lower down, above an input box's `───`
//! rule, by a model answer or tool call (a line led by one of the agent's answer bullets, which may
//! also lead its working status) is over: a later turn went through. A new prompt still waiting
//! for its answer is not noticed.
//!
//! Times: a time with no zone is read in `now`'s zone; a named IANA zone in parentheses wins. A
//! wall time without a date is today's, or tomorrow's when it is more than [`GRACE`] earlier than
//! now (the CLIs truncate to the minute, so a reset inside the current minute is still today's). A
//! month and day without a year take the year that puts them closest to now. A date without a
//! time (`resets Oct 24`, seen in an old issue) is `None`: the hour is unknown. `in 2 hours 5
//! minutes`, `in 4h 59m`, `in 30 seconds`, `in less than a minute` count from `now` (from when park
//! reads the screen, not when the CLI printed it). A 24-hour `15:05` is read too, though no CLI
//! prints one. Weekday names (`on Monday`) are not read: no CLI prints them.

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

/// Leads a user's prompt line, never a limit message.
const PROMPTS: [char; 3] = ['❯', '›', '>'];

/// The lowest limit message of `agent` on `screen`: a line whose text (after its glyphs, not led
/// by one of `answers` or a prompt) `opens` says starts one, with the reset `reset` reads from it
/// (and how many bytes of the message it used).
pub(crate) fn find(
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
    // A later answer above the input box: the limit is over. (The box opens with a rule, and under
    // it a narrow pane may wrap a footer led by an answer bullet onto a line of its own.)
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

/// A horizontal rule across the pane (an input box's border).
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
pub(crate) fn strip_ci<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    s.get(..prefix.len())
        .filter(|h| h.eq_ignore_ascii_case(prefix))
        .and_then(|_| s.get(prefix.len()..))
}

/// The byte offset just past the first ASCII-case-insensitive `needle` in `s`.
pub(crate) fn after_ci(s: &str, needle: &str) -> Option<usize> {
    let hay = s.to_ascii_lowercase();
    hay.find(&needle.to_ascii_lowercase())
        .map(|i| i + needle.len())
}

/// The leading ASCII digits of `s`, and the rest.
pub(crate) fn digits(s: &str) -> (&str, &str) {
    let n = s.bytes().take_while(u8::is_ascii_digit).count();
    s.split_at(n)
}

/// The leading ASCII letters of `s`, and the rest.
fn letters(s: &str) -> (&str, &str) {
    let n = s.bytes().take_while(u8::is_ascii_alphabetic).count();
    s.split_at(n)
}

/// A reset written after `resets` / `try again`: `in <duration>`, or `[<date>[,]] <clock>
/// [(<zone>)]`, read against `now`. Also returns what follows it.
pub(crate) fn when<'a>(s: &'a str, now: &Zoned) -> Option<(Timestamp, &'a str)> {
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

/// What the agents' limit-reader tests share.
#[cfg(test)]
pub(crate) mod test_kit {
    use jiff::{Timestamp, Zoned};

    pub(crate) fn at(s: &str) -> Zoned {
        s.parse().unwrap()
    }

    pub(crate) fn ts(s: &str) -> Timestamp {
        s.parse::<Zoned>().unwrap().timestamp()
    }
}

/// Every agent's limit reader is total: any text — the phrasing of every agent's limit screen cut
/// and shuffled, garbled bytes, the far ends of time — reads to a limit or to none, never a panic.
/// One test over [`park_protocol::Agent::ALL`], so a new agent's reader is fuzzed by being listed.
#[cfg(test)]
mod totality {
    use super::test_kit::at;
    use jiff::tz::TimeZone;
    use jiff::Timestamp;

    const PIECES: &[&str] = &[
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

    /// Each agent's limit line up to where its reset is read (what the fuzz appends to).
    const PREFIXES: &[&str] = &[
        "  ⎿  You've hit your session limit \u{b7} resets ",
        "You've hit your limit \u{b7} resets ",
        "■ You've hit your usage limit. Try again ",
        "You've hit your usage limit. Try again at ",
    ];

    /// Whole lines at the edges of what a reset can say.
    const EDGES: &[&str] = &[
        "  ⎿  You've hit your limit \u{b7} resets 11:59pm",
        "  ⎿  You've hit your limit \u{b7} resets 12am (Pacific/Kiritimati)",
        "  ⎿  You've hit your limit \u{b7} resets Dec 31, 11pm",
        "  ⎿  Claude AI usage limit reached|999999999999",
        "You've hit your usage limit. Try again in 999999 days.",
        "You've hit your usage limit. Try again at Dec 31st, 9999 11:59 PM.",
    ];

    #[test]
    fn every_agents_limit_reader_is_total_on_any_text() {
        let readers: Vec<_> = crate::agents::all()
            .iter()
            .filter_map(|k| k.spec().limit_screen.map(|r| (k.spec().name, r)))
            .collect();
        assert!(readers.len() >= 2, "no limit readers found");
        let now = at("2026-12-05T10:00:00+00:00[UTC]");
        for (name, read) in readers {
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
                    s.push_str(PIECES[next() % PIECES.len()]);
                }
                let _ = read(&s, &now);
                // Garbled bytes, as a lossy decode would hand them over.
                let bytes: Vec<u8> = (0..next() % 64).map(|_| next() as u8).collect();
                let g = String::from_utf8_lossy(&bytes);
                for p in PREFIXES {
                    let _ = read(&format!("{p}{s}"), &now);
                    let _ = read(&format!("{p}{g}"), &now);
                }
            }
            // The far ends of jiff's range must not overflow into a panic.
            for edge in [Timestamp::MIN, Timestamp::MAX] {
                let now = edge.to_zoned(TimeZone::UTC);
                for line in EDGES {
                    let _ = read(line, &now);
                }
            }
            let long = format!("{}{}", PREFIXES[1], "9".repeat(200_000));
            assert_eq!(read(&long, &now), None, "{name}");
        }
    }
}
