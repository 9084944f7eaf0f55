//! park's own files under `$PARK_HOME`: the ledger of parked sessions (`ledger`), per-session locks
//! (`lock`), window groups (`group`), which pane is a parked entry's slot (`slot`), named sets (`sets`), pins (`pins`), the autopilot's report and log (`autolog`), the archive of transcripts and its index
//! (`archive`, `archive::index`) and `config.toml` (`config`); where they live is
//! `support::paths`. Every write is atomic and private; a corrupt file is reported, never
//! overwritten.
pub mod archive;
pub mod autolog;
pub mod config;
pub mod group;
pub mod journal;
pub mod ledger;
pub mod lock;
pub mod pins;
pub mod sets;
pub mod slot;
