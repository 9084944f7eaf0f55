//! The autopilot's settings (`[auto]` of park's config file) as validated data, and the parsers of
//! their values: sizes (`6G`, `512M`, `1.5G`), a memory floor (`2G` or `10%`), durations.
//!
//! Contract: pure. A value that does not parse is an error naming the value and what was
//! expected; the file-level wording (file, line, key) is `store::config`'s. The defaults are the
//! safe ones: `mode = "off"`, `idle = 2h`, no budget, `per_pass = 3`, `interval = 60s`.

use std::time::Duration;

/// What the daemon's pass may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Nothing automatic (the default).
    #[default]
    Off,
    /// Decide and show, never park.
    Suggest,
    /// Park what the policy picks.
    Park,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Off => "off",
            Mode::Suggest => "suggest",
            Mode::Park => "park",
        }
    }

    pub fn parse(s: &str) -> Result<Mode, String> {
        match s {
            "off" => Ok(Mode::Off),
            "suggest" => Ok(Mode::Suggest),
            "park" => Ok(Mode::Park),
            _ => Err(format!(
                "invalid mode {s:?} (expected \"off\", \"suggest\" or \"park\")"
            )),
        }
    }
}

/// `min_available`: keep MemAvailable above a byte count or a share of MemTotal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Floor {
    Bytes(u64),
    Percent(u8),
}

impl Floor {
    /// The floor in bytes on a machine with `total` bytes of memory.
    pub fn bytes(self, total: u64) -> u64 {
        match self {
            Floor::Bytes(b) => b,
            Floor::Percent(p) => total / 100 * p as u64,
        }
    }

    pub fn text(self) -> String {
        match self {
            Floor::Bytes(b) => park_protocol::human_bytes(b),
            Floor::Percent(p) => format!("{p}%"),
        }
    }
}

pub const MIN_INTERVAL: Duration = Duration::from_secs(5);

/// `[auto]`, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Auto {
    pub mode: Mode,
    /// Minimum quiet time: since the last real turn or the agent's start (a resume), the later.
    pub idle: Duration,
    pub max_live: Option<usize>,
    pub ram_budget: Option<u64>,
    pub min_available: Option<Floor>,
    pub per_pass: usize,
    pub interval: Duration,
    /// Targets (and `@sets`) never parked automatically, as typed.
    pub exclude: Vec<String>,
    /// Park an idle agent sitting at a usage-limit screen until the reset.
    pub limit_reset: bool,
}

impl Default for Auto {
    fn default() -> Self {
        Auto {
            mode: Mode::Off,
            idle: Duration::from_secs(2 * 3600),
            max_live: None,
            ram_budget: None,
            min_available: None,
            per_pass: 3,
            interval: Duration::from_secs(60),
            exclude: vec![],
            limit_reset: false,
        }
    }
}

impl Auto {
    /// Whether any budget key is set (none set: every candidate goes, `per_pass` at a time).
    pub fn has_budget(&self) -> bool {
        self.max_live.is_some() || self.ram_budget.is_some() || self.min_available.is_some()
    }

    /// A fingerprint of these settings, stored in each pass's report: a suggestion is shown only
    /// while the config that made it is still the one in force (an edit, `mode = "off"` above
    /// all, must not leave the last pass's suggestions on the status line and in `ls`).
    pub fn stamp(&self) -> String {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in format!("{self:?}").bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        format!("{h:016x}")
    }

    /// Whether the daemon has anything automatic to do.
    pub fn active(&self) -> bool {
        self.mode != Mode::Off || self.limit_reset
    }
}

/// A byte size: `6G`, `512M`, `1.5G`, `800k`, `1024` (bytes); units are powers of 1024 and may be
/// written `G`, `GB`, `GiB` (any case).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let bad = || format!("invalid size {s:?} (expected e.g. 6G, 512M, 1.5G)");
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    if num.is_empty() || num.starts_with('.') || num.ends_with('.') {
        return Err(bad());
    }
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        _ => return Err(bad()),
    };
    let (whole, frac) = num.split_once('.').unwrap_or((num, ""));
    if frac.contains('.') {
        return Err(bad());
    }
    let w: u64 = whole.parse().map_err(|_| bad())?;
    let mut total = w.checked_mul(mult).ok_or_else(bad)?;
    if !frac.is_empty() {
        let digits = frac.len().min(9) as u32;
        let f: u64 = frac[..digits as usize].parse().map_err(|_| bad())?;
        total = total
            .checked_add(f.saturating_mul(mult) / 10u64.pow(digits))
            .ok_or_else(bad)?;
    }
    Ok(total)
}

/// `min_available`: a size or a percentage of MemTotal (`10%`, 1–99).
pub fn parse_floor(s: &str) -> Result<Floor, String> {
    let t = s.trim();
    if let Some(p) = t.strip_suffix('%') {
        return match p.trim().parse::<u8>() {
            Ok(n) if (1..=99).contains(&n) => Ok(Floor::Percent(n)),
            _ => Err(format!("invalid share {s:?} (expected 1% to 99%)")),
        };
    }
    parse_size(t).map(Floor::Bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("6G").unwrap(), 6 << 30);
        assert_eq!(parse_size("6GiB").unwrap(), 6 << 30);
        assert_eq!(parse_size("512m").unwrap(), 512 << 20);
        assert_eq!(parse_size("1.5G").unwrap(), 3 << 29);
        assert_eq!(parse_size("1024").unwrap(), 1024);
        assert_eq!(parse_size(" 2 G ").unwrap(), 2 << 30);
        for bad in [
            "",
            "G",
            "1.G",
            ".5G",
            "1.2.3G",
            "6X",
            "-1G",
            "99999999999999999999T",
        ] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn floors() {
        assert_eq!(parse_floor("10%").unwrap(), Floor::Percent(10));
        assert_eq!(parse_floor("2G").unwrap(), Floor::Bytes(2 << 30));
        assert!(parse_floor("0%").is_err());
        assert!(parse_floor("100%").is_err());
        assert_eq!(Floor::Percent(10).bytes(1000), 100);
    }

    #[test]
    fn modes() {
        assert_eq!(Mode::parse("suggest").unwrap(), Mode::Suggest);
        assert!(Mode::parse("on").unwrap_err().contains("expected"));
        assert!(!Auto::default().active());
    }
}
