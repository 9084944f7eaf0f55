//! The only code that kills, types into panes, claims ledger entries or resumes agents: one park
//! (`park`, the transaction) and a batch of them (`park_batch`: targets, window groups, servers),
//! one unpark (`unpark`) and a batch (`unpark_batch`: named, `--all`, resurrection from the
//! archive), both in waves (`wave`); the autopilot's pass (`auto`); `forget`, window rebuild (`rebuild`) and what an attach restores (`restore`), the daemon (`waker`: wake-ups and
//! autopilot passes) and its notes (`note`), dev servers (`servers`), archive protection (`protect`), recovery
//! (`recover`), the diagnosis (`doctor`) and the zellij plugin's install (`zellij_plugin`). Questions to the person go through `ui::Ui`. Every
//! decision is a guard's; every operation re-checks it under the lock.
pub mod auto;
pub mod doctor;
pub mod forget;
pub mod integrate;
pub mod journal;
pub mod kill;
pub mod note;
pub mod park;
pub mod park_batch;
pub mod protect;
pub mod rebuild;
pub mod recover;
pub mod restore;
pub mod resurrect;
pub mod servers;
pub mod ui;
pub mod unpark;
pub mod unpark_batch;
pub mod waker;
pub mod wave;
pub mod zellij_plugin;
