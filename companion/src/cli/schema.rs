//! JSON Schemas of every `--json` output, generated from the very types park serialises, so a
//! schema can never describe something park does not print. The repo publishes them under
//! `schema/<name>.schema.json`; `tests/tests/e2e/cli_surface.rs` fails when a committed file
//! differs from what the code generates (`scripts/update-schema` rewrites them), and checks real
//! outputs against them.

use schemars::schema_for;

/// The outputs, by the name `park schema <name>` takes.
pub const NAMES: [&str; 14] = [
    "ls",
    "action",
    "status",
    "archived",
    "search",
    "candidates",
    "doctor",
    "rebuild",
    "archive-all",
    "archive-prune",
    "recover",
    "auto",
    "snapshot",
    "resurrect",
];

/// Which command prints it, for the schema's description.
fn command_of(name: &str) -> &'static str {
    match name {
        "ls" => "park ls --json",
        "action" => "park park|unpark|forget|wake --json",
        "status" => "park status --json",
        "archived" => "park ls --archived --json",
        "search" => "park search TERM --json",
        "candidates" => "park candidates --json",
        "doctor" => "park doctor --json",
        "rebuild" => "park rebuild --json",
        "archive-all" => "park archive --all --json",
        "archive-prune" => "park archive --prune --older-than DUR --json",
        "recover" => "park recover --json",
        "auto" => "park auto status --json, park daemon --once --json",
        "snapshot" => "park snapshot --json",
        "resurrect" => "park resurrect save|restore --json",
        _ => "",
    }
}

pub fn json(name: &str) -> Option<String> {
    let mut s = match name {
        "ls" => schema_for!(park_protocol::LsOutput),
        "action" => schema_for!(park_protocol::ActionOutput),
        "status" => schema_for!(park_protocol::StatusSummary),
        "archived" => schema_for!(park_protocol::ArchivedOutput),
        "search" => schema_for!(park_protocol::SearchOutput),
        "candidates" => schema_for!(park_protocol::CandidatesOutput),
        "doctor" => schema_for!(park_protocol::reports::Report),
        "rebuild" => schema_for!(park_protocol::reports::RebuildOutput),
        "archive-all" => schema_for!(park_protocol::reports::ProtectOutput),
        "archive-prune" => schema_for!(park_protocol::reports::PruneOutput),
        "recover" => schema_for!(park_protocol::reports::RecoverOutput),
        "auto" => schema_for!(park_protocol::auto::AutoReport),
        "snapshot" => schema_for!(park_protocol::reports::SnapshotOutput),
        "resurrect" => schema_for!(park_protocol::reports::ResurrectOutput),
        _ => return None,
    };
    let meta = s.schema.metadata();
    meta.description = Some(format!("The output of `{}`.", command_of(name)));
    serde_json::to_string_pretty(&s).ok()
}
