//! Human durations for `--idle` (and later wake-ups): `0s`, `90s`, `30m`, `6h`, `3d`, `2w`, and
//! sums like `1h30m`.
//!
//! Contract: pure; an empty string, a missing unit, an unknown unit, or an overflow is an error
//! naming the input. No fractional or negative values.

use std::time::Duration;

/// An idle time in its largest whole unit (`42s`, `5m`, `3h`, `2d`; `-` when unknown), as `ls`,
/// `candidates`, the picker and the `--idle` plan show it.
pub fn brief(secs: Option<u64>) -> String {
    match secs {
        None => "-".into(),
        Some(s) if s < 60 => format!("{s}s"),
        Some(s) if s < 3600 => format!("{}m", s / 60),
        Some(s) if s < 86400 => format!("{}h", s / 3600),
        Some(s) => format!("{}d", s / 86400),
    }
}

pub fn parse(s: &str) -> Result<Duration, String> {
    let bad = || format!("invalid duration {s:?} (expected e.g. 30s, 30m, 6h, 3d, 2w, 1h30m)");
    let t = s.trim();
    if t.is_empty() {
        return Err(bad());
    }
    let mut total: u64 = 0;
    let mut num = String::new();
    for c in t.chars() {
        if c.is_ascii_digit() {
            num.push(c);
            continue;
        }
        let unit: u64 = match c {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            'w' => 7 * 86_400,
            _ => return Err(bad()),
        };
        let n: u64 = num.parse().map_err(|_| bad())?;
        num.clear();
        total = n
            .checked_mul(unit)
            .and_then(|v| total.checked_add(v))
            .ok_or_else(bad)?;
    }
    if !num.is_empty() {
        return Err(bad());
    }
    Ok(Duration::from_secs(total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_and_sums() {
        for (s, secs) in [
            ("0s", 0),
            ("90s", 90),
            ("30m", 1800),
            ("6h", 21_600),
            ("3d", 259_200),
            ("2w", 1_209_600),
            ("1h30m", 5400),
        ] {
            assert_eq!(parse(s).unwrap(), Duration::from_secs(secs), "{s}");
        }
    }

    #[test]
    fn garbage_is_refused_with_the_input_named() {
        for s in [
            "",
            "30",
            "m",
            "5y",
            "-5m",
            "1.5h",
            "5 m",
            "99999999999999999999w",
            "$(id)",
        ] {
            let e = parse(s).unwrap_err();
            assert!(e.contains("invalid duration"), "{s}: {e}");
        }
    }
}
