//! Where Gemini's chats are, as park needs them beyond reading one: whether a path is a chat of a
//! session inside a config dir (a recorded or hook-given path is never trusted outside it), a
//! path to restore a chat to, and which sessions began in a project after a time.
//!
//! Also where a session's chats are: `projects.json` slugs, `.project_root` markers, the legacy
//! sha256 dir; the real chat of a session and the orphan stubs a resume leaves beside it.
//!
//! Contract: pure over the file system, never follows a path out of `<config>/tmp/*/chats/`.

use std::path::{Component, Path, PathBuf};

use std::collections::HashMap;
use std::io::{self, BufRead, BufReader, Read};

use jiff::Timestamp;
use serde_json::Value;

use crate::agents::transcript::{parse_line, str_of, valid_session_id};

/// Bounds for the small files read here (a first line, `projects.json`, a marker, a stub).
const FIRST_LINE_CAP: u64 = 1024 * 1024;
const REGISTRY_CAP: u64 = 4 * 1024 * 1024;
const MARKER_CAP: u64 = 64 * 1024;
/// An orphan stub is a few KiB (the context message lists up to 200 paths); a bigger file is
/// never one.
const STUB_CAP: u64 = 1024 * 1024;

/// Node's `path.resolve` of an absolute path (lexical: `.`, `..`, repeated and trailing slashes);
/// `None` for a relative one.
fn resolve(cwd: &str) -> Option<String> {
    if !cwd.starts_with('/') {
        return None;
    }
    let mut parts: Vec<&str> = vec![];
    for p in cwd.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    Some(format!("/{}", parts.join("/")))
}

/// A registry slug (`^[a-z0-9-]+$`, as Gemini's schema requires): never a path piece.
fn is_slug(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 255
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

fn read_capped(path: &Path, cap: u64) -> Option<Vec<u8>> {
    let f = std::fs::File::open(path).ok()?;
    let mut out = Vec::new();
    f.take(cap + 1).read_to_end(&mut out).ok()?;
    (out.len() as u64 <= cap).then_some(out)
}

/// A real directory (not a symlink to one).
fn is_real_dir(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_dir())
}

/// Who `<dir>/.project_root` names: `Some(None)` when there is no marker.
fn marker_owner(dir: &Path) -> Option<Option<String>> {
    let p = dir.join(".project_root");
    match std::fs::symlink_metadata(&p) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Some(None),
        Ok(m) if m.file_type().is_file() => {
            let b = read_capped(&p, MARKER_CAP)?;
            let owner = String::from_utf8_lossy(&b).trim().to_string();
            // A marker that is not an absolute path names no cwd park could match.
            Some(Some(resolve(&owner).unwrap_or(owner)))
        }
        _ => None,
    }
}

/// The project dirs of `cwd` under `<config>/tmp`, best first: the registry's slug (unless its
/// marker names another cwd), else the dir whose marker names `cwd`, then the legacy sha256 dir.
fn project_dirs(config: &Path, cwd: &str) -> Vec<PathBuf> {
    let Some(cwd) = resolve(cwd) else {
        return vec![];
    };
    let tmp = config.join("tmp");
    let mut out: Vec<PathBuf> = vec![];
    let registered = read_capped(&config.join("projects.json"), REGISTRY_CAP)
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        .and_then(|v| {
            v.get("projects")?
                .get(&cwd)?
                .as_str()
                .filter(|s| is_slug(s))
                .map(str::to_string)
        });
    if let Some(slug) = registered {
        let dir = tmp.join(slug);
        let linked = std::fs::symlink_metadata(&dir).is_ok_and(|m| !m.file_type().is_dir());
        if !linked && marker_owner(&dir).is_some_and(|o| o.is_none_or(|o| o == cwd)) {
            out.push(dir);
        }
    }
    if out.is_empty() {
        if let Ok(rd) = std::fs::read_dir(&tmp) {
            let mut names: Vec<String> = rd
                .flatten()
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| is_slug(n))
                .collect();
            names.sort();
            if let Some(n) = names
                .into_iter()
                .find(|n| marker_owner(&tmp.join(n)) == Some(Some(cwd.clone())))
            {
                out.push(tmp.join(n));
            }
        }
    }
    let legacy = tmp.join(sha256_hex(cwd.as_bytes()));
    if is_real_dir(&legacy) && !out.contains(&legacy) {
        out.push(legacy);
    }
    out
}

/// The chats dir of `cwd` under config dir `config` (its slug from `projects.json`; else the
/// slug dir whose `.project_root` names `cwd`; else an existing legacy `<sha256 of cwd>` dir).
/// The registry's dir is returned even before Gemini created it.
pub fn chats_dir(config: &Path, cwd: &str) -> Option<PathBuf> {
    project_dirs(config, cwd)
        .into_iter()
        .next()
        .map(|d| d.join("chats"))
}

/// The session chats in a chats dir: regular files `session-….jsonl` (sorted, no symlinks).
fn chat_files(chats: &Path) -> Vec<PathBuf> {
    if !is_real_dir(chats) {
        return vec![];
    }
    let Ok(rd) = std::fs::read_dir(chats) else {
        return vec![];
    };
    let mut out: Vec<PathBuf> = rd
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter(|e| {
            let n = e.file_name();
            let n = n.to_string_lossy();
            n.starts_with("session-") && n.ends_with(".jsonl")
        })
        .map(|e| e.path())
        .collect();
    out.sort();
    out
}

/// The file is named after session `sid` (its `-<first 8 chars>.jsonl` suffix).
fn named_for(path: &Path, sid: &str) -> bool {
    let suffix = format!("-{}.jsonl", &sid[..8]);
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.to_ascii_lowercase().ends_with(&suffix))
}

/// The first line's session id and start time.
fn head_of(path: &Path) -> Option<(String, Option<Timestamp>)> {
    let f = std::fs::File::open(path).ok()?;
    let mut line = Vec::new();
    BufReader::new(f)
        .take(FIRST_LINE_CAP)
        .read_until(b'\n', &mut line)
        .ok()?;
    let (v, _) = parse_line(line.trim_ascii())?;
    let sid = str_of(&v, "sessionId").and_then(valid_session_id)?;
    let start = str_of(&v, "startTime").and_then(|s| s.parse().ok());
    Some((sid, start))
}

/// A `<session_context>`-only user message: what a stub's message list holds.
fn is_context_only(m: &Value) -> bool {
    let ctx = |t: &str| t.trim_start().starts_with("<session_context>");
    str_of(m, "type") == Some("user")
        && match m.get("content") {
            Some(Value::String(s)) => ctx(s),
            Some(Value::Array(parts)) => {
                !parts.is_empty()
                    && parts.iter().all(|p| match p {
                        Value::Object(o) => {
                            o.len() == 1 && o.get("text").and_then(Value::as_str).is_some_and(ctx)
                        }
                        _ => false,
                    })
            }
            _ => false,
        }
}

/// A record a stub may hold after its first line: `{"$set": {…}}` alone, whose `messages` (if
/// any) are only `<session_context>` user messages.
fn is_stub_record(v: &Value) -> bool {
    let Some(o) = v.as_object().filter(|o| o.len() == 1) else {
        return false;
    };
    match o.get("$set") {
        Some(Value::Object(s)) => match s.get("messages") {
            None => true,
            Some(Value::Array(ms)) => ms.iter().all(is_context_only),
            Some(_) => false,
        },
        _ => false,
    }
}

/// How many records after the first line are conversation (anything but a stub record, an
/// unreadable line included), counting up to `stop_at`.
fn conversation_records(path: &Path, stop_at: usize) -> usize {
    let Ok(f) = std::fs::File::open(path) else {
        return 0;
    };
    let mut r = BufReader::new(f);
    let mut line = Vec::new();
    let mut first = true;
    let mut n = 0;
    while n < stop_at {
        line.clear();
        match r.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let l = line.trim_ascii();
        if l.is_empty() {
            continue;
        }
        if std::mem::take(&mut first) {
            continue;
        }
        if !serde_json::from_slice::<Value>(l).is_ok_and(|v| is_stub_record(&v)) {
            n += 1;
        }
    }
    n
}

/// Whether `path` is a stub of session `sid`: small, every line readable, the first line naming
/// `sid`, every other line a stub record.
fn is_stub(path: &Path, sid: &str) -> bool {
    let Some(bytes) = read_capped(path, STUB_CAP) else {
        return false;
    };
    let mut lines = bytes
        .split(|&b| b == b'\n')
        .map(<[u8]>::trim_ascii)
        .filter(|l| !l.is_empty());
    let Some(first) = lines.next() else {
        return false;
    };
    let head_ok = serde_json::from_slice::<Value>(first).is_ok_and(|v| {
        v.get("$set").is_none()
            && v.get("id").is_none()
            && str_of(&v, "sessionId")
                .and_then(valid_session_id)
                .as_deref()
                == Some(sid)
    });
    head_ok && lines.all(|l| serde_json::from_slice::<Value>(l).is_ok_and(|v| is_stub_record(&v)))
}

/// The real chat among the files of one session: the only one holding conversation, else the one
/// holding the most, else (none holds any) the one started first.
fn choose(mut files: Vec<(PathBuf, Option<Timestamp>)>) -> Option<PathBuf> {
    // Earliest start first (a file without one last); ties keep the given order (the registry's
    // dir before a legacy copy).
    files.sort_by_key(|f| (f.1.is_none(), f.1));
    if files.len() <= 1 {
        return files.pop().map(|f| f.0);
    }
    let talking: Vec<&PathBuf> = files
        .iter()
        .map(|f| &f.0)
        .filter(|p| conversation_records(p, 1) > 0)
        .collect();
    match talking.as_slice() {
        [] => files.first().map(|f| f.0.clone()),
        [one] => Some((*one).clone()),
        many => {
            let mut best: Option<(usize, &PathBuf)> = None;
            for p in many {
                let n = conversation_records(p, usize::MAX);
                if best.is_none_or(|(m, _)| n > m) {
                    best = Some((n, p));
                }
            }
            best.map(|(_, p)| p.clone())
        }
    }
}

/// The real transcript of session `id` in `cwd`'s project (never an orphan stub while a file of
/// the session holds conversation; see the module doc).
pub fn find(config: &Path, cwd: &str, id: &str) -> Option<PathBuf> {
    let sid = valid_session_id(id)?;
    let mut files = vec![];
    for dir in project_dirs(config, cwd) {
        for f in chat_files(&dir.join("chats")) {
            if !named_for(&f, &sid) {
                continue;
            }
            if let Some((s, start)) = head_of(&f) {
                if s == sid {
                    files.push((f, start));
                }
            }
        }
    }
    choose(files)
}

/// Orphan stubs of session `id` beside `real`: same session id, another file, no conversation
/// (only the first line and `$set` records whose messages are `<session_context>` ones).
pub fn orphans(real: &Path, id: &str) -> Vec<PathBuf> {
    let Some(sid) = valid_session_id(id) else {
        return vec![];
    };
    let Some(dir) = real.parent() else {
        return vec![];
    };
    chat_files(dir)
        .into_iter()
        .filter(|f| f.file_name() != real.file_name())
        .filter(|f| named_for(f, &sid) && is_stub(f, &sid))
        .collect()
}

/// Every real transcript under `config`: one per session id, as [`find`] would choose it (orphan
/// stubs skipped), sorted by path.
pub fn all(config: &Path) -> Vec<(String, PathBuf)> {
    let mut by_id: HashMap<String, Vec<(PathBuf, Option<Timestamp>)>> = HashMap::new();
    let Ok(rd) = std::fs::read_dir(config.join("tmp")) else {
        return vec![];
    };
    let mut dirs: Vec<PathBuf> = rd
        .flatten()
        .filter(|d| d.file_type().is_ok_and(|t| t.is_dir()))
        .map(|d| d.path())
        .collect();
    // A legacy `<sha256>` dir after the registry's slugs: on a tie its copy of a chat loses.
    let legacy = |p: &PathBuf| {
        p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.len() == 64 && n.bytes().all(|b| b.is_ascii_hexdigit()))
    };
    dirs.sort_by_key(|p| (legacy(p), p.clone()));
    for d in dirs {
        for f in chat_files(&d.join("chats")) {
            if let Some((sid, start)) = head_of(&f) {
                if named_for(&f, &sid) {
                    by_id.entry(sid).or_default().push((f, start));
                }
            }
        }
    }
    let mut out: Vec<(String, PathBuf)> = by_id
        .into_iter()
        .filter_map(|(sid, files)| choose(files).map(|p| (sid, p)))
        .collect();
    out.sort_by(|a, b| a.1.cmp(&b.1));
    out
}

/// The legacy project dir name: the sha256 of the cwd, in hex.
pub(crate) fn sha256_hex(data: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

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
    let dir = chats_dir(config, cwd)?;
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
    let Some(dir) = chats_dir(config, cwd) else {
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
