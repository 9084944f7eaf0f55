//! Qwen Code's live-session registry, `<runtime>/sessions/<pid>.json` (0.24+; Claude's design):
//! one file per running interactive process, rewritten on `/clear`, removed on a clean exit.
//!
//! Contract: a record counts only when its `procStart` (`<boot id>:<start ticks>`) names this
//! boot and the start of the process that holds the pid now, and its `pid` (when present) is
//! that pid; anything else is a stale file of a recycled pid and is ignored. Pure over the
//! bytes and the two facts it compares against.

use serde::Deserialize;

/// One `sessions/<pid>.json`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Record {
    pub pid: Option<u32>,
    pub proc_start: Option<String>,
    pub session_id: Option<String>,
    pub cwd: Option<String>,
    pub qwen_version: Option<String>,
    pub kind: Option<String>,
}

/// Parses a registry file's bytes (`None`: not a registry record).
pub fn parse(bytes: &[u8]) -> Option<Record> {
    serde_json::from_slice(bytes).ok()
}

/// Whether `recorded` (`<boot id>:<ticks>`) names the process of this boot whose start is
/// `ticks_match`-ed by the platform. A record without the boot id part is not Qwen's shape
/// and never matches.
pub fn proc_start_matches(
    recorded: &str,
    boot_id: Option<&str>,
    ticks_match: impl Fn(&str) -> bool,
) -> bool {
    let Some((boot, ticks)) = recorded.rsplit_once(':') else {
        return false;
    };
    // Without a readable boot id the start ticks alone still tell processes of one boot apart;
    // a record of an earlier boot would need the same pid and the same tick to pass.
    boot_id.is_none_or(|b| b.trim().eq_ignore_ascii_case(boot)) && ticks_match(ticks)
}

impl Record {
    /// Whether this record is the live one of process `pid` (see the module doc).
    pub fn is_of(
        &self,
        pid: u32,
        boot_id: Option<&str>,
        ticks_match: impl Fn(&str) -> bool,
    ) -> bool {
        self.pid.is_none_or(|p| p == pid)
            && self
                .proc_start
                .as_deref()
                .is_some_and(|s| proc_start_matches(s, boot_id, ticks_match))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOOT: &str = "3f1c2b9e-5d1a-4c55-9a57-0b8f2d7e6a11";

    #[test]
    fn a_record_of_this_boot_and_start_matches() {
        let r = parse(
            format!(r#"{{"pid":42,"procStart":"{BOOT}:5123","sessionId":"x","kind":"tui"}}"#)
                .as_bytes(),
        )
        .unwrap();
        let ticks = |t: &str| t == "5123";
        assert!(r.is_of(42, Some(BOOT), ticks));
        assert!(!r.is_of(43, Some(BOOT), ticks), "another pid's file");
        assert!(
            !r.is_of(42, Some("00000000-0000-4000-8000-000000000000"), ticks),
            "an earlier boot"
        );
        assert!(
            !r.is_of(42, Some(BOOT), |t: &str| t == "5124"),
            "a recycled pid"
        );
        assert!(
            r.is_of(42, None, ticks),
            "no boot id readable: the ticks decide"
        );
    }

    #[test]
    fn a_start_without_the_boot_part_never_matches() {
        assert!(!proc_start_matches("5123", Some(BOOT), |_| true));
        assert!(!proc_start_matches("", None, |_| true));
        assert!(parse(b"{not json").is_none());
    }

    #[test]
    fn a_real_registry_file_parses_and_names_its_process() {
        let r = parse(include_bytes!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/qwen/registry-0.24.4.json"
        )))
        .expect("a registry record");
        assert_eq!(r.pid, Some(18729));
        assert_eq!(
            r.session_id.as_deref(),
            Some("1cfb8705-3393-4dad-9641-3c8766d7cea5")
        );
        assert_eq!(r.kind.as_deref(), Some("tui"));
        let boot = "db771d24-13ca-48b4-a659-961db97411c9";
        assert!(r.is_of(18729, Some(boot), |t| t == "74627"));
        assert!(
            !r.is_of(18729, Some(boot), |t| t == "74628"),
            "another start"
        );
        assert!(!r.is_of(18730, Some(boot), |_| true), "another pid");
        assert!(
            !r.is_of(18729, Some("00000000-13ca-48b4-a659-961db97411c9"), |_| {
                true
            }),
            "another boot"
        );
    }
}
