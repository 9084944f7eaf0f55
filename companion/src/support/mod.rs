//! Helpers every stage may use, with no knowledge of agents or multiplexers: private files
//! (`fs`), fault injection and the guard-mutation switch (`fault`), profiling spans (`profile`),
//! human durations (`duration`), shell quoting (`shell`), memory given back by the daemon (`mem`).
pub mod duration;
pub mod fault;
pub mod fs;
pub mod mem;
pub mod paths;
pub mod profile;
pub mod shell;
