//! The autopilot's records under `$PARK_HOME`: `auto-status.json` (the last pass's report, read by
//! `ls`, the status line and the pickers for suggestions) and `auto.log` (one JSON line per
//! automatic park).
//!
//! Contract: the report is written atomically; a missing or unreadable report is "no
//! suggestions", never an error of the reader. The log is append-only.

use park_protocol::auto::{AutoReport, Decision};
use std::path::{Path, PathBuf};

pub fn status_path(home: &Path) -> PathBuf {
    home.join("auto-status.json")
}

pub fn log_path(home: &Path) -> PathBuf {
    home.join("auto.log")
}

/// The last pass's report, if a pass wrote one.
pub fn last_report(home: &Path) -> Option<AutoReport> {
    serde_json::from_slice(&std::fs::read(status_path(home)).ok()?).ok()
}

pub fn save_report(home: &Path, r: &AutoReport) {
    if let Ok(json) = serde_json::to_vec(r) {
        let _ = crate::store::ledger::write_atomic(&status_path(home), &json);
    }
}

/// Session ids the last pass (suggest mode) would park, while the settings in force (`now`: the
/// loaded `[auto]`, `None` when the config does not load) still ask for suggestions and are the
/// ones that pass ran with. A report left by an earlier mode or an edited config suggests nothing.
pub fn suggested_ids(home: &Path, now: Option<&crate::model::auto::Auto>) -> Vec<String> {
    let Some(now) = now.filter(|a| a.mode == crate::model::auto::Mode::Suggest) else {
        return vec![];
    };
    last_report(home)
        .filter(|r| r.mode == "suggest" && r.config_stamp.as_deref() == Some(now.stamp().as_str()))
        .map(|r| {
            r.agents
                .into_iter()
                .filter(|a| a.decision == Decision::Suggested)
                .filter_map(|a| a.session_id)
                .collect()
        })
        .unwrap_or_default()
}

/// Appends lines to `auto.log`.
pub fn append(home: &Path, lines: &[serde_json::Value]) {
    if lines.is_empty() {
        return;
    }
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log_path(home))
    {
        use std::io::Write;
        for l in lines {
            let _ = writeln!(f, "{l}");
        }
    }
}

/// Every park made at a usage limit (`--wake-on-limit-reset` or `limit_reset`), one JSON line:
/// a session resumed before its reset still shows the message, and is not parked for it again.
pub fn limit_log_path(home: &Path) -> PathBuf {
    home.join("limit-parks.log")
}

pub fn note_limit_park(home: &Path, session_id: &str, text: &str) {
    let line = serde_json::json!({
        "at": jiff::Timestamp::now().to_string(),
        "session_id": session_id,
        "limit": text,
    });
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(limit_log_path(home))
    {
        use std::io::Write;
        let _ = writeln!(f, "{line}");
    }
}

/// (session id, limit message) of every park made at a usage limit.
pub fn limit_parks(home: &Path) -> Vec<(String, String)> {
    let Ok(text) = std::fs::read_to_string(limit_log_path(home)) else {
        return vec![];
    };
    text.lines()
        .filter_map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).ok()?;
            Some((
                v["session_id"].as_str()?.to_string(),
                v["limit"].as_str()?.to_string(),
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::auto::{Auto, Mode};
    use park_protocol::auto::{AutoAgent, AutoBudget};

    fn report(mode: &str, stamp: Option<String>) -> AutoReport {
        AutoReport {
            schema: 1,
            mode: mode.into(),
            at: "2026-12-06T00:00:00Z".into(),
            trigger: "interval".into(),
            config: None,
            config_stamp: stamp,
            idle_seconds: 60,
            per_pass: 3,
            budget: AutoBudget::default(),
            agents: vec![AutoAgent {
                pane: "%1".into(),
                agent: park_protocol::Agent::Claude,
                session_id: Some("s1".into()),
                decision: Decision::Suggested,
                reason: "idle".into(),
                rank: Some(1),
                quiet_seconds: Some(100),
                anon_bytes: 1,
                limit: None,
            }],
            results: vec![],
            daemon_pid: None,
        }
    }

    /// Issue 34 item 2: `mode = "suggest"` → `"off"` left `❄ 1?`, `"suggested": true` and the
    /// picker's `a` offer alive, all read from the last pass's report.
    #[test]
    fn a_suggestion_stands_only_under_the_settings_that_made_it() {
        let d = tempfile::tempdir().unwrap();
        let suggest = Auto {
            mode: Mode::Suggest,
            ..Auto::default()
        };
        save_report(d.path(), &report("suggest", Some(suggest.stamp())));
        assert_eq!(
            suggested_ids(d.path(), Some(&suggest)),
            vec!["s1".to_string()]
        );
        let off = Auto {
            mode: Mode::Off,
            ..suggest.clone()
        };
        assert!(suggested_ids(d.path(), Some(&off)).is_empty(), "mode off");
        assert!(
            suggested_ids(d.path(), None).is_empty(),
            "a config that does not load"
        );
        let edited = Auto {
            idle: std::time::Duration::from_secs(7),
            ..suggest.clone()
        };
        assert!(
            suggested_ids(d.path(), Some(&edited)).is_empty(),
            "an edited config"
        );
        // A report from an older park (no stamp) suggests nothing either.
        save_report(d.path(), &report("suggest", None));
        assert!(suggested_ids(d.path(), Some(&suggest)).is_empty());
    }
}
