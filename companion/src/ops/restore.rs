//! `park rebuild --on-attach`: what `[journal] restore` does when a client attaches to a
//! multiplexer (the tmux plugin's `client-attached` hook; the zellij strip once it loads).
//!
//! Contract:
//! * Nothing happens unless sessions the journal holds as lost would be adopted by a rebuild now
//!   (a dry run of [`crate::ops::journal::adopt`]: read-only).
//! * `off` (the default) does nothing: the status line counts them and `park rebuild` or Enter on
//!   a lost row of the picker brings them back.
//! * `ask` asks the attached client once per set of lost sessions (a y/n prompt whose yes runs
//!   `park rebuild --as-before`); the set asked about is kept in `restore.asked`, so a second
//!   attach, or a second strip, does not ask again for the same sessions.
//! * `auto` runs `park rebuild --as-before` (the same lock, guards and unpark path as the user's
//!   rebuild), which tells the clients what came back.
//! * A config that does not load acts as `off` (nothing automatic runs on a broken config).

use crate::ctx::Ctx;
use crate::exit::Stop;
use crate::store::config::Restore;
use park_protocol::reports::{LostOutcome, LostResult};

/// The file that remembers the set of lost sessions a client was last asked about.
pub const ASKED: &str = "restore.asked";

/// What an attach does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Act {
    /// Nothing, and why (for `--json` and tests).
    Nothing(&'static str),
    /// Ask the client about these sessions.
    Ask(Vec<String>),
    /// Bring them back now.
    Restore(Vec<String>),
}

/// The decision, from the setting, the session ids a rebuild would adopt now, and the set last
/// asked about (`asked`, the content of [`ASKED`]).
pub fn decide(restore: Restore, lost: &[String], asked: Option<&str>) -> Act {
    if lost.is_empty() {
        return Act::Nothing("no session is lost");
    }
    let mut ids = lost.to_vec();
    ids.sort();
    use crate::support::fault::disabled;
    match restore {
        Restore::Off if !disabled("restore-off") => Act::Nothing("[journal] restore is off"),
        Restore::Off => Act::Restore(ids),
        Restore::Ask
            if asked.is_some_and(|a| a.trim() == key(&ids)) && !disabled("restore-asked-once") =>
        {
            Act::Nothing("already asked about these sessions")
        }
        Restore::Ask => Act::Ask(ids),
        Restore::Auto => Act::Restore(ids),
    }
}

fn key(ids: &[String]) -> String {
    ids.join(" ")
}

/// The question a client is asked.
pub fn question(n: usize) -> String {
    match n {
        1 => "park: 1 agent session was live when its multiplexer stopped. Bring it back?".into(),
        n => format!(
            "park: {n} agent sessions were live when their multiplexer stopped. Bring them back?"
        ),
    }
}

/// Runs the attach: decides, then asks or restores. `park` is this binary (what the question's
/// yes runs); `client` the tmux client that attached (none from the zellij strip).
pub fn on_attach(ctx: &Ctx, park: &str, client: Option<&str>) -> Result<Act, Stop> {
    let home = ctx.ledger.home.clone();
    let restore = crate::store::config::load(&home)
        .map(|c| c.journal.restore)
        .unwrap_or(Restore::Off);
    // Off needs no scan: an attach costs a config read.
    if restore == Restore::Off {
        return Ok(Act::Nothing("[journal] restore is off"));
    }
    let server = ctx.mux.home_server();
    let (lost, _) = crate::ops::journal::adopt(ctx, server.as_deref(), true);
    let ids: Vec<String> = lost
        .iter()
        .filter(|l| l.outcome == LostResult::Journal(LostOutcome::WouldAdopt))
        .map(|l| l.session_id.clone())
        .collect();
    let asked = std::fs::read_to_string(home.join(ASKED)).ok();
    let act = decide(restore, &ids, asked.as_deref());
    match &act {
        Act::Nothing(_) => {}
        Act::Ask(ids) => {
            crate::store::ledger::write_atomic(&home.join(ASKED), key(ids).as_bytes())
                .map_err(|e| Stop::refused(format!("{ASKED}: {e}; not asked")).of("rebuild"))?;
            let argv = [park.to_string(), "rebuild".into(), "--as-before".into()];
            ctx.mux.ask(client, &question(ids.len()), &argv);
        }
        Act::Restore(_) => {
            // It tells the clients what came back.
            crate::ops::rebuild::run(
                ctx,
                &crate::ops::rebuild::Opts {
                    as_before: true,
                    ..Default::default()
                },
            )?;
        }
    }
    Ok(act)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn nothing_is_restored_unless_configured_and_a_set_is_asked_about_once() {
        let lost = ids(&["b", "a"]);
        assert_eq!(
            decide(Restore::Off, &lost, None),
            Act::Nothing("[journal] restore is off"),
            "off by default: restoring is the user's act"
        );
        for r in [Restore::Ask, Restore::Auto] {
            assert_eq!(
                decide(r, &[], None),
                Act::Nothing("no session is lost"),
                "{r:?}"
            );
        }
        assert_eq!(
            decide(Restore::Auto, &lost, None),
            Act::Restore(ids(&["a", "b"]))
        );
        assert_eq!(
            decide(Restore::Ask, &lost, None),
            Act::Ask(ids(&["a", "b"]))
        );
        assert_eq!(
            decide(Restore::Ask, &lost, Some("a b\n")),
            Act::Nothing("already asked about these sessions"),
            "a second attach does not ask again"
        );
        assert_eq!(
            decide(Restore::Ask, &ids(&["a", "b", "c"]), Some("a b")),
            Act::Ask(ids(&["a", "b", "c"])),
            "a new set is asked about"
        );
        assert!(question(1).contains("1 agent session was"));
        assert!(question(3).contains("3 agent sessions were"));
    }
}
