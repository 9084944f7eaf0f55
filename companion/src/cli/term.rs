//! The terminal side of `ops::ui::Ui`: questions on stderr answered on stdin, the one place a
//! [`Stop`] is printed (`park: <why>`), and the results of `park park|unpark|forget|wake`.

use park::exit::{ExitStatus, Stop};
use park::ops::ui::Ui;
use park_protocol::{human_bytes, ActionOutput, ActionResult, Outcome, SCHEMA_VERSION};
use std::io::{IsTerminal, Write};

/// The person at the terminal; with `--json`, plans and summaries are not shown (warnings are).
pub struct TermUi {
    pub json: bool,
}

fn read_answer() -> String {
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
    line.trim().to_string()
}

impl Ui for TermUi {
    fn can_ask(&self) -> bool {
        std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
    }

    fn ask(&self, question: &str) -> bool {
        eprint!("{question} [y/N] ");
        let _ = std::io::stderr().flush();
        matches!(read_answer().as_str(), "y" | "Y" | "yes")
    }

    fn ask_typed(&self, question: &str) -> bool {
        if !self.can_ask() {
            return false;
        }
        eprint!("{question} Type yes to continue: ");
        let _ = std::io::stderr().flush();
        read_answer() == "yes"
    }

    fn warn(&self, line: &str) {
        eprintln!("{line}");
    }

    fn inform(&self, line: &str) {
        if !self.json {
            eprintln!("{line}");
        }
    }
}

/// Prints why a command stopped (once) and returns its status.
pub fn report(stop: Stop) -> ExitStatus {
    match (&stop.message, stop.verb) {
        (Some(m), Some(v)) => eprintln!("park {v}: {m}"),
        (Some(m), None) => eprintln!("park: {m}"),
        (None, _) => {}
    }
    stop.status
}

/// Prints the results of `park park|unpark|forget|wake` (text, or `--json`); exit 1 when any target
/// was refused or failed.
pub fn print_results(results: &[ActionResult], json: bool) -> ExitStatus {
    // Exit 1 when any target was refused or failed; every other outcome is the asked state.
    let ok = results.iter().all(|r| !r.outcome.is_failure());
    if json {
        println!(
            "{}",
            serde_json::to_string(&ActionOutput {
                schema: SCHEMA_VERSION,
                results: results.to_vec()
            })
            .expect("results serialise")
        );
    } else {
        for r in results {
            let what = r.pane.clone().unwrap_or_else(|| r.target.clone());
            let extra = match (&r.freed_bytes, r.outcome) {
                (Some(b), Outcome::Parked) => format!(" (freed {})", human_bytes(*b)),
                _ => String::new(),
            };
            let line = format!(
                "{what}: {}{extra}{}",
                r.outcome,
                r.reason
                    .as_ref()
                    .map(|x| format!(": {x}"))
                    .unwrap_or_default()
            );
            if matches!(
                r.outcome,
                Outcome::Refused | Outcome::Failed | Outcome::NotParked
            ) {
                eprintln!("{line}");
            } else {
                println!("{line}");
            }
        }
    }
    if ok {
        ExitStatus::Success
    } else {
        ExitStatus::Refused
    }
}
