//! macOS process table: not implemented yet (issue 8). Every read reports "unavailable", so park
//! refuses to act rather than guessing.

use super::{Mem, Platform, ProcInfo};
use std::path::PathBuf;

pub struct MacOs;

impl Platform for MacOs {
    fn processes(&self) -> std::io::Result<Vec<ProcInfo>> {
        Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "macOS process table not implemented yet",
        ))
    }
    fn process(&self, _pid: u32) -> Option<ProcInfo> {
        None
    }
    fn environ(&self, _pid: u32) -> Option<Vec<(String, String)>> {
        None
    }
    fn cwd(&self, _pid: u32) -> Option<PathBuf> {
        None
    }
    fn open_files(&self, _pid: u32) -> Vec<PathBuf> {
        vec![]
    }
    fn memory(&self, _pid: u32) -> Option<Mem> {
        None
    }
    fn status_mem(&self, _pid: u32) -> Option<(u64, u64)> {
        None
    }
    fn clock_ticks_per_sec(&self) -> u64 {
        100
    }
}
