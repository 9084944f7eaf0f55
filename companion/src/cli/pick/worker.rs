//! Runs the picker's toggles off the UI thread, as subprocesses of the park binary itself.
//!
//! Contract: a kill never runs in the picker's process and the picker is never in an agent's
//! tree: every toggle is `park park|unpark <target> --json` (bulk adds `--yes`; the lost
//! sessions' rebuild is `park rebuild --as-before --json`), started in its own
//! process group (closing the popup does not signal a park in progress) with stdin closed and its
//! output captured, and without `TMUX_PANE` (so an unpark never takes the picker's own pane for the
//! pane it runs in). Each job reports exactly one [`Done`] on the channel.

use super::app::{JobResult, Op};
use park_protocol::ActionOutput;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc::Sender;

/// A finished job: what the picker passes to `App::done`.
#[derive(Debug)]
pub struct Done {
    pub job: String,
    pub panes: Vec<String>,
    pub op: Op,
    pub res: JobResult,
}

/// The argv (after the binary) for a job; the autopilot's suggestions are parked as the panes
/// they are (`panes`).
pub fn args(op: Op, target: &str, panes: &[String], bulk: bool) -> Vec<String> {
    if op == Op::Rebuild {
        return ["rebuild", "--as-before", "--json"]
            .map(String::from)
            .to_vec();
    }
    let mut a = vec![op.verb().to_string()];
    if target == super::app::SUGGESTED {
        a.extend(panes.iter().cloned());
    } else {
        a.push(target.to_string());
    }
    if bulk {
        a.push("--yes".into());
    }
    a.push("--json".into());
    a
}

/// Runs one job to completion (blocking) and reads its `--json` document.
pub fn run_job(exe: &Path, op: Op, target: &str, panes: &[String], bulk: bool) -> JobResult {
    let out = Command::new(exe)
        .args(args(op, target, panes, bulk))
        .env_remove("TMUX_PANE")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .output();
    let out = match out {
        Ok(o) => o,
        Err(e) => return JobResult::Error(format!("cannot run {}: {e}", exe.display())),
    };
    let doc = if op == Op::Rebuild {
        serde_json::from_slice::<park_protocol::reports::RebuildOutput>(&out.stdout)
            .map(|r| {
                let (line, ok) = r.lost_line();
                JobResult::Said(line, ok)
            })
            .ok()
    } else {
        serde_json::from_slice::<ActionOutput>(&out.stdout)
            .map(JobResult::Output)
            .ok()
    };
    match doc {
        Some(doc) => doc,
        None => {
            let err = String::from_utf8_lossy(&out.stderr);
            let msg = err
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("")
                .trim()
                .to_string();
            JobResult::Error(if msg.is_empty() {
                format!("park exited with {}", out.status)
            } else {
                msg
            })
        }
    }
}

/// Starts a job on its own thread; its [`Done`] arrives on `tx`.
pub fn spawn(exe: PathBuf, op: Op, job: String, panes: Vec<String>, bulk: bool, tx: Sender<Done>) {
    std::thread::spawn(move || {
        let res = run_job(&exe, op, &job, &panes, bulk);
        let _ = tx.send(Done {
            job,
            panes,
            op,
            res,
        });
    });
}

/// The leading tmux args selecting the server (the adapter owns the rule).
pub fn tmux_server_args() -> Vec<String> {
    park::adapters::mux::tmux::server_args()
}

/// Brings `pane` to the front: `tmux select-window -t <pane>` then `select-pane -t <pane>`.
pub fn focus(pane: &str) -> Result<(), String> {
    let sel = tmux_server_args();
    for verb in ["select-window", "select-pane"] {
        let out = Command::new("tmux")
            .args(&sel)
            .args([verb, "-t", pane])
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run tmux: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "tmux {verb}: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
    }
    Ok(())
}

/// `park pin|unpin <session id>`: its first line (or error), and whether it failed.
pub fn pin(exe: &Path, session_id: &str, on: bool) -> (String, bool) {
    let out = Command::new(exe)
        .args([if on { "pin" } else { "unpin" }, session_id])
        .env_remove("TMUX_PANE")
        .stdin(Stdio::null())
        .output();
    match out {
        Ok(o) if o.status.success() => (
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .next()
                .unwrap_or("")
                .to_string(),
            false,
        ),
        Ok(o) => (String::from_utf8_lossy(&o.stderr).trim().to_string(), true),
        Err(e) => (format!("cannot run {}: {e}", exe.display()), true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_argv() {
        assert_eq!(args(Op::Park, "%3", &[], false), ["park", "%3", "--json"]);
        assert_eq!(
            args(Op::Unpark, "%3", &[], false),
            ["unpark", "%3", "--json"]
        );
        assert_eq!(
            args(Op::Park, "work:1", &[], true),
            ["park", "work:1", "--yes", "--json"]
        );
        assert_eq!(
            args(Op::Rebuild, crate::cli::pick::app::LOST, &[], false),
            ["rebuild", "--as-before", "--json"],
            "lost sessions come back as before: parked ones stay parked"
        );
        let panes = ["%3".to_string(), "%5".to_string()];
        assert_eq!(
            args(Op::Park, crate::cli::pick::app::SUGGESTED, &panes, true),
            ["park", "%3", "%5", "--yes", "--json"],
            "the suggestions are parked by pane"
        );
    }

    #[test]
    fn a_binary_that_prints_no_document_is_a_failure_with_its_stderr() {
        let r = run_job(Path::new("/bin/sh"), Op::Park, "%3", &[], false);
        // `sh park %3 --json` fails to open the script `park`.
        assert!(
            matches!(r, JobResult::Error(ref e) if !e.is_empty()),
            "{r:?}"
        );
        let r = run_job(Path::new("/nonexistent/park"), Op::Park, "%3", &[], false);
        assert!(
            matches!(r, JobResult::Error(ref e) if e.starts_with("cannot run")),
            "{r:?}"
        );
    }
}
