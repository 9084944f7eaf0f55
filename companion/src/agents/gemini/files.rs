//! Where Gemini's chats are, as park needs them beyond reading one: whether a path is a chat of a
//! session inside a config dir (a recorded or hook-given path is never trusted outside it), a
//! path to restore a chat to, and which sessions began in a project after a time.
//!
//! Contract: pure over the file system, never follows a path out of `<config>/tmp/*/chats/`.

use std::path::{Component, Path, PathBuf};

use super::transcript;
use crate::agents::transcript::valid_session_id;

/// The first 8 characters of a session id: the suffix of its chat files' names.
fn short(id: &str) -> Option<String> {
    valid_session_id(id).map(|s| s[..8].to_string())
}

/// `p` is `<config>/tmp/<slug>/chats/session-…-<id8>.jsonl`, with no `..` and no other shape.
pub fn is_chat_of(config: &Path, p: &Path, id: &str) -> bool {
    let Some(s) = short(id) else { return false };
    let Ok(rest) = p.strip_prefix(config.join("tmp")) else {
        return false;
    };
    let parts: Vec<_> = rest.components().collect();
    let [Component::Normal(_slug), Component::Normal(chats), Component::Normal(name)] =
        parts.as_slice()
    else {
        return false;
    };
    let name = name.to_string_lossy();
    *chats == "chats" && name.starts_with("session-") && name.ends_with(&format!("-{s}.jsonl"))
}

/// A fresh chat path for session `id` in `cwd`'s project (its name with the current minute, as
/// Gemini names them), when the project has a chats dir.
pub fn new_path(config: &Path, cwd: &str, id: &str) -> Option<PathBuf> {
    let s = short(id)?;
    let dir = transcript::chats_dir(config, cwd)?;
    let now = jiff::Timestamp::now().strftime("%Y-%m-%dT%H-%M");
    Some(dir.join(format!("session-{now}-{s}.jsonl")))
}

/// The ids of sessions other than `id` in `cwd`'s project whose `startTime` is at or after
/// `since` less 2 s (a chat is created within a second or two of its process's start).
pub fn sessions_started_after(
    config: &Path,
    cwd: &str,
    since: jiff::Timestamp,
    id: &str,
) -> Vec<String> {
    let Some(dir) = transcript::chats_dir(config, cwd) else {
        return vec![];
    };
    let Ok(rd) = std::fs::read_dir(&dir) else {
        return vec![];
    };
    let floor = since - jiff::SignedDuration::from_secs(2);
    let mut out = vec![];
    for f in rd.flatten() {
        let Some((sid, start)) = first_line(&f.path()) else {
            continue;
        };
        if !sid.eq_ignore_ascii_case(id) && start >= floor && !out.contains(&sid) {
            out.push(sid);
        }
    }
    out
}

/// The chat starts with its header line naming session `id`: what `gemini --resume` looks for.
/// Another Gemini's start in the project deletes a chat with no conversation yet, and the live
/// session's next write then creates the file again without its header (measured on 0.61.0);
/// Gemini cannot resume such a chat ("No previous sessions found for this project").
pub fn has_header(p: &Path, id: &str) -> bool {
    first_line(p).is_some_and(|(sid, _)| sid.eq_ignore_ascii_case(id))
}

/// `sessionId` and `startTime` of a chat's first line.
fn first_line(p: &Path) -> Option<(String, jiff::Timestamp)> {
    use std::io::{BufRead, Read};
    let f = std::fs::File::open(p).ok()?;
    let mut line = String::new();
    std::io::BufReader::new(f.take(64 * 1024))
        .read_line(&mut line)
        .ok()?;
    let v: serde_json::Value = serde_json::from_str(line.trim()).ok()?;
    let sid = valid_session_id(v.get("sessionId")?.as_str()?)?;
    let start = v.get("startTime")?.as_str()?.parse().ok()?;
    Some((sid, start))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SID: &str = "c3c7b841-2547-4b1f-b7b3-d91104676d61";

    #[test]
    fn a_chat_without_its_header_is_told() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("c.jsonl");
        std::fs::write(
            &p,
            format!("{{\"sessionId\":\"{SID}\",\"startTime\":\"2026-12-05T15:57:05.901Z\"}}\n"),
        )
        .unwrap();
        assert!(has_header(&p, SID));
        assert!(!has_header(&p, "d3c7b841-2547-4b1f-b7b3-d91104676d61"));
        std::fs::write(
            &p,
            "{\"id\":\"1\",\"type\":\"user\",\"content\":[{\"text\":\"hi\"}]}\n",
        )
        .unwrap();
        assert!(
            !has_header(&p, SID),
            "headless: the first record is a message"
        );
    }

    #[test]
    fn a_chat_of_a_session_is_only_inside_the_config_chats() {
        let c = Path::new("/h/.gemini");
        let ok = c.join("tmp/proj/chats/session-2026-12-05T15-57-c3c7b841.jsonl");
        assert!(is_chat_of(c, &ok, SID));
        assert!(!is_chat_of(c, &ok, "d3c7b841-2547-4b1f-b7b3-d91104676d61"));
        for bad in [
            "/h/.gemini/tmp/proj/chats/../../../../etc/session-x-c3c7b841.jsonl",
            "/h/.gemini/tmp/proj/other/session-x-c3c7b841.jsonl",
            "/h/.gemini/tmp/session-x-c3c7b841.jsonl",
            "/elsewhere/tmp/proj/chats/session-x-c3c7b841.jsonl",
            "/h/.gemini/tmp/proj/chats/notes-c3c7b841.jsonl",
        ] {
            assert!(!is_chat_of(c, Path::new(bad), SID), "{bad}");
        }
        assert!(!is_chat_of(c, &ok, "$(rm -rf ~)"));
    }
}
