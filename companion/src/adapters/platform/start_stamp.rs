//! Matching another program's record of a process start against park's `start_ticks`.
//!
//! Claude Code writes `procStart` into `sessions/<pid>.json`; park trusts that file only when
//! `procStart` names the start of the process that holds the pid now. The value is the
//! platform's own notion of a start time, so the comparison belongs to the platform:
//!
//! * Linux: field 22 of `/proc/<pid>/stat` as a decimal string, which is exactly `start_ticks`.
//! * macOS: `start_ticks` is microseconds since the epoch, and Claude Code writes a C-locale
//!   `ctime`-style UTC string, `"Fri Sep 11 09:43:48 2026"` (second precision). That format and
//!   its zone come from a third-party measurement on a real Mac, not from Claude Code's
//!   documentation: unverified here, see the README's limits.
//!
//! Pure and `cfg`-free, so both are unit-tested on Linux.

/// Linux (and the default): the recorded value is the decimal `start_ticks`.
pub fn matches_ticks(start_ticks: u64, recorded: &str) -> bool {
    recorded == start_ticks.to_string()
}

/// macOS: `start_micros` is microseconds since the epoch; `recorded` is either that number (park's
/// own spelling) or a UTC `"%a %b %e %H:%M:%S %Y"` string naming the same second.
pub fn matches_epoch_micros(start_micros: u64, recorded: &str) -> bool {
    if matches_ticks(start_micros, recorded) {
        return true;
    }
    let Ok(secs) = i64::try_from(start_micros / 1_000_000) else {
        return false;
    };
    ctime_utc_seconds(recorded) == Some(secs)
}

/// `"Fri Sep 11 09:43:48 2026"` (day space-padded or not, any run of spaces) read as UTC, in
/// seconds since the epoch. The weekday must agree with the date.
pub fn ctime_utc_seconds(s: &str) -> Option<i64> {
    let norm = s.split_whitespace().collect::<Vec<_>>().join(" ");
    let dt = jiff::civil::DateTime::strptime("%a %b %d %H:%M:%S %Y", &norm).ok()?;
    Some(
        dt.to_zoned(jiff::tz::TimeZone::UTC)
            .ok()?
            .timestamp()
            .as_second(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linux_compares_the_decimal_ticks() {
        assert!(matches_ticks(574729, "574729"));
        assert!(!matches_ticks(574729, "574730"));
        assert!(!matches_ticks(574729, " 574729"));
        assert!(!matches_ticks(574729, "Fri Sep 11 09:43:48 2026"));
    }

    #[test]
    fn ctime_strings_read_as_utc() {
        // The three values of the measurement the module doc cites.
        assert_eq!(
            ctime_utc_seconds("Fri Sep 11 09:43:48 2026"),
            Some(1789119828)
        );
        assert_eq!(
            ctime_utc_seconds("Fri Sep 11 14:05:01 2026"),
            Some(1789135501)
        );
        assert_eq!(
            ctime_utc_seconds("Sat Sep 12 11:57:33 2026"),
            Some(1789214253)
        );
        // A one-digit day is space-padded.
        assert_eq!(
            ctime_utc_seconds("Sat Aug  8 07:11:34 2026"),
            ctime_utc_seconds("Sat Aug 8 07:11:34 2026")
        );
        assert!(ctime_utc_seconds("Sat Aug  8 07:11:34 2026").is_some());
    }

    #[test]
    fn other_spellings_are_refused() {
        for s in [
            "",
            "574729",
            "Fri 11 Sep 05:43:48 2026",
            "Thu Sep 11 09:43:48 2026",
            "Fri Sep 11 09:43:48",
            "Fri Sep 31 09:43:48 2026",
            "Fri, 11 Sep 2026 09:43:48 GMT",
        ] {
            assert_eq!(ctime_utc_seconds(s), None, "{s:?}");
        }
    }

    #[test]
    fn macos_matches_the_same_second_only() {
        let start = 1789119828 * 1_000_000 + 654_321;
        assert!(matches_epoch_micros(start, "Fri Sep 11 09:43:48 2026"));
        assert!(matches_epoch_micros(start, &start.to_string()));
        assert!(!matches_epoch_micros(start, "Fri Sep 11 09:43:49 2026"));
        assert!(!matches_epoch_micros(
            start + 1_000_000,
            "Fri Sep 11 09:43:48 2026"
        ));
        assert!(!matches_epoch_micros(start, "garbage"));
        assert!(!matches_epoch_micros(u64::MAX, "Fri Sep 11 09:43:48 2026"));
    }
}
