//! Gemini CLI chats: `<config>/tmp/<project slug>/chats/session-<time>-<id8>.jsonl`.

use std::io;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::agents::render::{Conversation, Log, Message};
use crate::agents::transcript::TranscriptInfo;

/// The chats dir of `cwd` under config dir `config` (its slug from `projects.json`).
pub fn chats_dir(_config: &Path, _cwd: &str) -> Option<PathBuf> {
    None
}

/// The real transcript of session `id` in `cwd`'s project (never an orphan stub).
pub fn find(_config: &Path, _cwd: &str, _id: &str) -> Option<PathBuf> {
    None
}

/// Orphan stubs of session `id` beside `real`: same session id, another file, no conversation.
pub fn orphans(_real: &Path, _id: &str) -> Vec<PathBuf> {
    vec![]
}

/// Every real transcript under `config`.
pub fn all(_config: &Path) -> Vec<(String, PathBuf)> {
    vec![]
}

pub fn parse(_bytes: &[u8]) -> TranscriptInfo {
    TranscriptInfo::default()
}

pub fn read_file(path: &Path) -> io::Result<TranscriptInfo> {
    Ok(parse(&std::fs::read(path)?))
}

pub(crate) fn message_of(_v: &Value) -> Option<Message> {
    None
}

pub(crate) fn markdown(_bytes: &[u8]) -> Conversation {
    Log::default().finish()
}
