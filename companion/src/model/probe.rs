//! What a wake-up probe is and how its answer is judged: [`Probe`] (a command or a URL),
//! [`Matcher`]s over a [`ProbeResult`], and the one-line descriptions the ledger and `ls` show.
//! Plain data and pure rules; `adapters::probe` runs probes.
//!
//! Contract: a matcher is stored in its text form and re-parsed on load, so a bad regex on disk is
//! refused rather than silently never matching; a result with `error` or `not_ready` never
//! matches; URLs are `http://` and `https://` only.

use regex::{Regex, RegexBuilder};
use serde::{Deserialize, Serialize};
use std::fmt;

/// What the waker runs to ask whether the wait is over.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Probe {
    Cmd { argv: Vec<String>, shell: bool },
    Url { url: String },
}

/// One condition on a [`ProbeResult`]. Stored in its text form (`"exit=0"`, `"status=200..299"`,
/// …) so the ledger reads like the command line, and re-parsed on load so a bad regex on disk is
/// refused rather than silently never matching.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum Matcher {
    Exit(i32),
    /// Inclusive range; `status=N` is `(N, N)`.
    Status(u16, u16),
    BodyContains(String),
    /// Regex source, validated by [`parse_matcher`].
    BodyMatches(String),
}

pub(crate) const FORMS: &str =
    "exit=N, status=N, status=LO..HI, body contains:TEXT, body matches:REGEX";

/// Keeps a hostile or accidental pattern from costing the waker real memory on every probe.
const REGEX_SIZE_LIMIT: usize = 1 << 20;

fn compile(re: &str) -> Result<Regex, regex::Error> {
    RegexBuilder::new(re).size_limit(REGEX_SIZE_LIMIT).build()
}

/// Parses one matcher. The text after `body contains:` / `body matches:` is taken verbatim (no
/// trimming) so what the user typed is exactly what is searched for.
pub fn parse_matcher(s: &str) -> Result<Matcher, String> {
    if let Some(re) = s.strip_prefix("body matches:") {
        if re.is_empty() {
            return Err(format!("empty regex in `{s}`: write body matches:REGEX"));
        }
        compile(re).map_err(|e| format!("bad regex in `{s}`: {e}"))?;
        return Ok(Matcher::BodyMatches(re.to_string()));
    }
    if let Some(text) = s.strip_prefix("body contains:") {
        if text.is_empty() {
            return Err(format!("empty text in `{s}`: write body contains:TEXT"));
        }
        return Ok(Matcher::BodyContains(text.to_string()));
    }
    let t = s.trim();
    if let Some(n) = t.strip_prefix("exit=") {
        let code = n
            .trim()
            .parse::<i32>()
            .ok()
            .filter(|c| (0..=255).contains(c))
            .ok_or_else(|| format!("bad exit code in `{s}`: expected a number 0..255"))?;
        return Ok(Matcher::Exit(code));
    }
    if let Some(v) = t.strip_prefix("status=") {
        let code = |x: &str| {
            x.trim()
                .parse::<u16>()
                .ok()
                .filter(|c| (100..=599).contains(c))
                .ok_or_else(|| format!("bad HTTP status in `{s}`: expected a number 100..599"))
        };
        return match v.split_once("..") {
            None => code(v).map(|c| Matcher::Status(c, c)),
            Some((lo, hi)) => {
                let (lo, hi) = (code(lo)?, code(hi)?);
                if lo > hi {
                    return Err(format!("bad status range in `{s}`: {lo} is above {hi}"));
                }
                Ok(Matcher::Status(lo, hi))
            }
        };
    }
    Err(format!("unknown matcher `{s}`: expected one of {FORMS}"))
}

impl fmt::Display for Matcher {
    /// The inverse of [`parse_matcher`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Matcher::Exit(n) => write!(f, "exit={n}"),
            Matcher::Status(lo, hi) if lo == hi => write!(f, "status={lo}"),
            Matcher::Status(lo, hi) => write!(f, "status={lo}..{hi}"),
            Matcher::BodyContains(s) => write!(f, "body contains:{s}"),
            Matcher::BodyMatches(r) => write!(f, "body matches:{r}"),
        }
    }
}

impl TryFrom<String> for Matcher {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        parse_matcher(&s)
    }
}

impl From<Matcher> for String {
    fn from(m: Matcher) -> String {
        m.to_string()
    }
}

/// Parses a command probe. Without `shell` the text is split like a POSIX shell would split words
/// (quotes kept whole) but nothing else of a shell applies: `;`, `|`, `$x` are plain arguments.
pub fn parse_cmd(cmd: &str, shell: bool) -> Result<Probe, String> {
    if cmd.trim().is_empty() {
        return Err("empty command".into());
    }
    // A NUL cannot reach exec; refusing it here beats a confusing spawn error at every wake-up.
    if cmd.contains('\0') {
        return Err("command contains a NUL byte".into());
    }
    let argv = if shell {
        vec!["sh".to_string(), "-c".to_string(), cmd.to_string()]
    } else {
        let argv = shlex::split(cmd)
            .ok_or_else(|| format!("cannot split `{cmd}`: unbalanced quotes or a trailing \\"))?;
        if argv.is_empty() {
            return Err(format!("empty command: `{cmd}`"));
        }
        argv
    };
    Ok(Probe::Cmd { argv, shell })
}

pub(crate) const URL_MAX: usize = 2048;

/// Parses a URL probe: http(s) only, with a host, printable, at most 2048 bytes.
pub fn parse_url(url: &str) -> Result<Probe, String> {
    if url.len() > URL_MAX {
        return Err(format!("URL longer than {URL_MAX} bytes"));
    }
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!(
            "URL contains whitespace or a control character: {:?}",
            url
        ));
    }
    let lower = url.get(..8).unwrap_or(url).to_ascii_lowercase();
    if !(lower.starts_with("http://") || lower.starts_with("https://")) {
        return Err(format!(
            "only http:// and https:// URLs can be probed: `{url}`"
        ));
    }
    // The url crate reads `http:///x` as host `x`; a URL with nothing before its path has no host.
    let authority = &url[url.find("://").map_or(0, |i| i + 3)..];
    if authority.is_empty() || authority.starts_with(['/', '?', '#']) {
        return Err(format!("URL has no host: `{url}`"));
    }
    let parsed = url::Url::parse(url).map_err(|e| format!("bad URL `{url}`: {e}"))?;
    if parsed.host_str().filter(|h| !h.is_empty()).is_none() {
        return Err(format!("URL has no host: `{url}`"));
    }
    Ok(Probe::Url {
        url: url.to_string(),
    })
}

/// What one run of a probe saw. At most one of `error` / `not_ready` is set; see the module doc.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ProbeResult {
    pub exit: Option<i32>,
    pub status: Option<u16>,
    /// stdout of a command, body of a response: at most [`BODY_CAP`] bytes, lossy UTF-8.
    pub body: String,
    pub truncated: bool,
    /// The probe could not run; the waker backs off.
    pub error: Option<String>,
    /// The probe ran but got no answer yet; the waker retries at its usual pace.
    pub not_ready: Option<String>,
    pub took_ms: u64,
}

pub const BODY_CAP: usize = 64 * 1024;

// ---- judging ----

/// Whether the result answers the wait: every matcher holds (none given: exit 0 for a command,
/// 2xx for a URL). A result that is an `error` or `not_ready` never matches.
pub fn matches(matchers: &[Matcher], p: &Probe, r: &ProbeResult) -> bool {
    if r.error.is_some() || r.not_ready.is_some() {
        return false;
    }
    let is_cmd = matches!(p, Probe::Cmd { .. });
    if matchers.is_empty() {
        return if is_cmd {
            r.exit == Some(0)
        } else {
            matches!(r.status, Some(200..=299))
        };
    }
    matchers.iter().all(|m| match m {
        Matcher::Exit(n) => is_cmd && r.exit == Some(*n),
        Matcher::Status(lo, hi) => !is_cmd && r.status.is_some_and(|s| (*lo..=*hi).contains(&s)),
        Matcher::BodyContains(s) => r.body.contains(s.as_str()),
        Matcher::BodyMatches(re) => compile(re).is_ok_and(|re| re.is_match(&r.body)),
    })
}

/// Refuses matchers that can never hold for this kind of probe.
pub fn validate_matchers(p: &Probe, ms: &[Matcher]) -> Result<(), String> {
    for m in ms {
        match (p, m) {
            (Probe::Url { .. }, Matcher::Exit(_)) => {
                return Err(format!(
                    "`{m}` applies to commands; a URL probe is judged by status=N or status=LO..HI"
                ))
            }
            (Probe::Cmd { .. }, Matcher::Status(..)) => {
                return Err(format!(
                    "`{m}` applies to URLs; a command probe is judged by exit=N"
                ))
            }
            _ => {}
        }
    }
    Ok(())
}

fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// One short line for `park ls`: what runs and what it waits for.
pub fn describe(p: &Probe, ms: &[Matcher]) -> String {
    let what = match p {
        Probe::Cmd { argv, shell } => match argv.as_slice() {
            [sh, c, text] if *shell && sh == "sh" && c == "-c" => {
                format!("sh `{}`", cut(&one_line(text), 60))
            }
            _ => {
                let text = shlex::try_join(argv.iter().map(String::as_str))
                    .unwrap_or_else(|_| argv.join(" "));
                format!("cmd `{}`", cut(&one_line(&text), 60))
            }
        },
        Probe::Url { url } => format!("url {}", cut(url, 60)),
    };
    let until = match (p, ms.is_empty()) {
        (Probe::Cmd { .. }, true) => "exit=0".to_string(),
        (Probe::Url { .. }, true) => "2xx".to_string(),
        _ => ms
            .iter()
            .map(|m| cut(&one_line(&m.to_string()), 40))
            .collect::<Vec<_>>()
            .join(" and "),
    };
    format!("{what} until {until}")
}

/// One short line for the last result.
pub fn summary(r: &ProbeResult) -> String {
    let s = if let Some(e) = &r.error {
        if e.starts_with("cannot run") {
            e.clone()
        } else {
            format!("cannot run: {e}")
        }
    } else if let Some(n) = &r.not_ready {
        format!("not ready: {n}")
    } else if let Some(code) = r.status {
        format!("HTTP {code}")
    } else if let Some(code) = r.exit {
        format!("exit {code}")
    } else {
        "no result".to_string()
    };
    let mut s = cut(&one_line(&s), 100);
    if r.truncated {
        s.push_str(" (truncated)");
    }
    s
}
