//! The transcript archive: `$PARK_HOME/archive/<session id>/{transcript.jsonl, transcript.md,
//! meta.json, NOTES.md}`, one directory per session, plus `archive/index.json` (the `index` submodule).
//!
//! Contract:
//! * `archive` copies the agent's transcript and renders it to Markdown straight from the JSONL
//!   (never by typing into the agent), then **verifies** before returning: the copy's length and
//!   tail equal the source as read, and the rendered Markdown holds the session's latest user and
//!   assistant turns (compared after `render::normalize`). Any failure is an error, and park
//!   refuses to kill on it.
//! * The latest turns are also read back from the raw bytes' end (`render::raw_end`, its own line
//!   walk), not only from what the parser and renderer kept: the Markdown must hold the prompt and
//!   reply found there. A line there that cannot be parsed even leniently (or a truncated last
//!   record) does **not** refuse the park: the raw copy is byte-exact, so nothing is lost, and a
//!   refusal would make such a session unparkable forever. It is recorded instead, in `warnings`
//!   of `meta.json` and a note at the end of `transcript.md`, so the archive never claims a
//!   verified rendering silently.
//! * The tombstone (`meta.json`, mirrored in the index) is upserted by session id: re-archiving
//!   keeps the notes, the group and the first park time, and refreshes everything else.
//! * Session ids name directories only after `valid_session_id`; nothing is written through a
//!   symlink (`private_dir`, `write_atomic`).

pub mod index;
pub mod tomb;

use tomb::SUMMARY_CHARS;
pub use tomb::{checked_id, cut, dir, read_meta, root, write_meta, Tombstone, TOMB_SCHEMA};

use crate::model::entry::Entry;
use crate::store::ledger::{private_dir, write_atomic, LedgerError};
use park_protocol::Agent;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

fn tail(path: &Path, n: u64) -> std::io::Result<(u64, Vec<u8>)> {
    let mut f = std::fs::File::open(path)?;
    let len = f.metadata()?.len();
    let start = len.saturating_sub(n);
    f.seek(SeekFrom::Start(start))?;
    let mut b = vec![];
    f.take(n).read_to_end(&mut b)?;
    Ok((len, b))
}

fn other(p: &Path, why: impl Into<String>) -> LedgerError {
    LedgerError::Io(p.to_path_buf(), std::io::Error::other(why.into()))
}

/// The rendered conversation of `bytes` for `agent`.
pub fn render(agent: Agent, bytes: &[u8]) -> crate::agents::render::Conversation {
    (crate::agents::of(agent).spec().markdown)(bytes)
}

fn header(e: &Entry, title: Option<&str>) -> String {
    let name = title
        .filter(|t| !t.is_empty())
        .unwrap_or(e.place.title.as_str());
    format!(
        "# {}\n\n- agent: {}\n- session: `{}`\n- cwd: `{}`\n- lived in: {} {}:{} {} (pane {})\n- archived: {}\n\n---\n\n",
        if name.is_empty() { "Session" } else { name },
        e.agent.as_str(),
        e.session_id,
        e.cwd,
        e.place.kind,
        e.place.session,
        e.place.window_index,
        e.place.window_name,
        e.place.pane,
        jiff::Timestamp::now(),
    )
}

/// The rendered Markdown holds the latest prompt and reply: those the renderer kept
/// (`conv`), and those read back from the raw bytes' end (`raw`), so a record the renderer
/// skipped cannot leave it verified.
pub(crate) fn verify_markdown(
    md: &str,
    conv: &crate::agents::render::Conversation,
    raw: &crate::agents::render::RawEnd,
) -> Result<(), String> {
    let norm = crate::agents::render::normalize(md);
    let lacks = |m: &str| !norm.contains(&crate::agents::render::normalize(m));
    for (what, msg) in [
        ("assistant reply", conv.last_assistant.as_deref()),
        ("prompt", conv.last_user.as_deref()),
    ] {
        if msg.is_some_and(lacks) {
            return Err(format!("the rendered conversation lacks the latest {what}"));
        }
    }
    if crate::support::fault::disabled("archive-raw-end") {
        return Ok(());
    }
    for (what, msg) in [
        ("reply", raw.last_reply.as_deref()),
        ("prompt", raw.last_user.as_deref()),
    ] {
        if msg.is_some_and(lacks) {
            return Err(format!(
                "the rendered conversation lacks the transcript's last {what}"
            ));
        }
    }
    Ok(())
}

/// What `archive` did, for reports and measurements.
#[derive(Debug, Clone)]
pub struct Archived {
    pub dir: PathBuf,
    pub tomb: Tombstone,
}

/// Archives `e`'s transcript and upserts its tombstone. `parking`: this is a park (records the
/// park time); otherwise an on-demand archive of a live session.
pub fn archive(home: &Path, e: &Entry, parking: bool) -> Result<Archived, LedgerError> {
    let sid = checked_id(&e.session_id)?;
    private_dir(home)?;
    private_dir(&root(home))?;
    let d = dir(home, &sid);
    private_dir(&d)?;
    let src = PathBuf::from(
        e.transcript
            .as_deref()
            .ok_or_else(|| other(&d, "no transcript path"))?,
    );
    let bytes = crate::agents::of(e.agent)
        .transcript_bytes(&src, &sid)
        .map_err(|err| LedgerError::Io(src.clone(), err))?;
    let dst = d.join("transcript.jsonl");
    write_atomic(&dst, &bytes)?;
    // The copy must hold the session's latest turns: its tail equals the source's tail as read.
    let (len, t) = tail(&dst, 4096).map_err(|err| LedgerError::Io(dst.clone(), err))?;
    let want = &bytes[bytes.len().saturating_sub(4096)..];
    if len != bytes.len() as u64 || t != want {
        return Err(other(&dst, "archived copy does not match the transcript"));
    }
    let info = (crate::agents::of(e.agent).spec().parse_transcript)(&bytes);
    // A transcript of another session must never be filed under this one.
    if info.session_id.as_deref().is_some_and(|s| s != sid) {
        return Err(other(
            &src,
            format!(
                "transcript belongs to session {}, not {sid}",
                info.session_id.unwrap_or_default()
            ),
        ));
    }
    // Read back from the raw end before rendering, so nothing the renderer skipped can hide it.
    let raw = crate::agents::raw_end(e.agent, &bytes);
    let mut warnings = raw.unreadable.clone();
    if let Some(why) = info.unsure.as_ref().filter(|_| warnings.is_empty()) {
        warnings.push(why.clone());
    }
    let mut conv = render(e.agent, &bytes);
    // The header goes in front of the rendering without a second copy of a large conversation.
    let mut md = header(e, info.ai_title.as_deref());
    md.reserve(conv.markdown.len() + 256);
    md.push_str(&std::mem::take(&mut conv.markdown));
    if !warnings.is_empty() {
        md.push_str("\n---\n\n*park could not render everything: ");
        md.push_str(&warnings.join("; "));
        md.push_str(". The raw transcript.jsonl next to this file has every byte.*\n");
    }
    verify_markdown(&md, &conv, &raw).map_err(|why| other(&d, why))?;
    if conv.last_assistant.is_some() && conv.last_assistant != info.last_assistant {
        return Err(other(
            &d,
            "the rendered conversation's last reply is not the transcript's",
        ));
    }
    write_atomic(&d.join("transcript.md"), md.as_bytes())?;
    let old = read_meta(&d).ok();
    let tomb = Tombstone {
        schema: TOMB_SCHEMA,
        agent: e.agent,
        session_id: sid.clone(),
        cwd: e.cwd.clone(),
        program: e.program.clone(),
        flags: e.flags.clone(),
        config_dir: e.config_dir.clone(),
        config_var: e.config_var.clone(),
        source_transcript: Some(src.to_string_lossy().into_owned()),
        place: e.place.clone(),
        ai_title: info.ai_title.clone(),
        first_prompt: info.first_prompt.as_deref().map(|s| cut(s, SUMMARY_CHARS)),
        last_assistant: info
            .last_assistant
            .as_deref()
            .map(|s| cut(s, SUMMARY_CHARS)),
        parked_at: if parking {
            Some(e.parked_at.clone())
        } else {
            old.as_ref().and_then(|o| o.parked_at.clone())
        },
        archived_at: jiff::Timestamp::now().to_string(),
        last_active: info
            .last_real_turn
            .map(|t| t.to_string())
            .or_else(|| e.last_active.clone()),
        group: e
            .group
            .clone()
            .or_else(|| old.as_ref().and_then(|o| o.group.clone())),
        notes: old.as_ref().map(|o| o.notes.clone()).unwrap_or_default(),
        transcript_bytes: bytes.len() as u64,
        markdown_bytes: md.len() as u64,
        turns: conv.turns as u64,
        warnings,
        prompts_only: false,
    };
    crate::store::archive::index::upsert(home, &tomb)?;
    Ok(Archived { dir: d, tomb })
}

/// What restoring an archived transcript for `e` did.
#[derive(Debug, Clone, PartialEq)]
pub enum Restore {
    /// The agent's transcript is where it looks: nothing to do.
    Present,
    /// The archived copy was put back at this path.
    Restored(PathBuf),
    /// It cannot be put back safely; why.
    Unsafe(String),
}

/// Puts the archived transcript back where the agent looks for it, when the agent's own copy is
/// gone (its cleanup ran, or it was deleted) and that is safe: the archived copy is this session's,
/// the destination is inside the agent's config dir, nothing is there now, and no directory on the
/// way is a symlink. Never overwrites: the copy is linked into place with `O_EXCL` semantics.
pub fn restore(home: &Path, e: &Entry) -> Restore {
    let overwrite_ok = crate::support::fault::disabled("restore-never-overwrite");
    if crate::agents::expected_transcript(e).is_some_and(|t| t.is_file()) && !overwrite_ok {
        return Restore::Present;
    }
    let Ok(sid) = checked_id(&e.session_id) else {
        return Restore::Unsafe("invalid session id".into());
    };
    let src = dir(home, &sid).join("transcript.jsonl");
    let Ok(bytes) = crate::store::ledger::read_nofollow(&src) else {
        return Restore::Unsafe(format!("no archived copy at {}", src.display()));
    };
    let info = (crate::agents::of(e.agent).spec().parse_transcript)(&bytes);
    if info.session_id.as_deref() != Some(sid.as_str())
        && !crate::support::fault::disabled("restore-names-session")
    {
        return Restore::Unsafe("the archived copy does not name this session".into());
    }
    let Some(cfg) = e.config_dir.as_deref().map(PathBuf::from) else {
        return Restore::Unsafe("the agent's config dir was not recorded".into());
    };
    let no_symlinks = !crate::support::fault::disabled("restore-no-symlink");
    if no_symlinks && !std::fs::symlink_metadata(&cfg).is_ok_and(|m| m.is_dir()) {
        return Restore::Unsafe(format!(
            "{} is not a directory (or is a symlink)",
            cfg.display()
        ));
    }
    let dst = match crate::agents::of(e.agent).restore_path(e, &cfg, &sid) {
        Ok(d) => d,
        Err(why) => return Restore::Unsafe(why),
    };
    let Some(parent) = dst.parent() else {
        return Restore::Unsafe("no parent directory".into());
    };
    // Every directory from the config dir down must be a real directory (or not exist yet).
    let mut cur = cfg.clone();
    if let Ok(rel) = parent.strip_prefix(&cfg) {
        for c in rel.components() {
            cur.push(c);
            if let Ok(m) = std::fs::symlink_metadata(&cur) {
                if !m.is_dir() && no_symlinks {
                    return Restore::Unsafe(format!("{} is not a directory", cur.display()));
                }
            }
        }
    } else {
        return Restore::Unsafe("destination outside the config dir".into());
    }
    if let Err(err) = std::fs::create_dir_all(parent) {
        return Restore::Unsafe(format!("cannot create {}: {err}", parent.display()));
    }
    let tmp = parent.join(format!(".park-restore-{}-{sid}", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .and_then(|mut f| {
            std::io::Write::write_all(&mut f, &bytes)?;
            f.sync_all()
        });
    if let Err(err) = written {
        let _ = std::fs::remove_file(&tmp);
        return Restore::Unsafe(format!("cannot write {}: {err}", tmp.display()));
    }
    // hard_link fails if the destination exists: a transcript that appeared meanwhile is kept.
    let linked = if overwrite_ok {
        std::fs::rename(&tmp, &dst)
    } else {
        std::fs::hard_link(&tmp, &dst)
    };
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => Restore::Restored(dst),
        Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => Restore::Present,
        Err(err) => Restore::Unsafe(format!("cannot place {}: {err}", dst.display())),
    }
}

pub fn dated(notes: &str, text: &str) -> String {
    let stamp = jiff::Timestamp::now().strftime("%Y-%m-%d %H:%M UTC");
    let sep = if notes.trim().is_empty() { "" } else { "\n" };
    format!("{notes}{sep}## {stamp}\n{}\n", text.trim())
}

/// Appends a dated paragraph to an archived session's notes (archiving it first if needed).
pub(crate) fn append_note(
    home: &std::path::Path,
    e: &crate::model::entry::Entry,
    text: &str,
) -> bool {
    let d = dir(home, &e.session_id);
    let mut t = match read_meta(&d) {
        Ok(t) => t,
        Err(_) => match archive(home, e, false) {
            Ok(a) => a.tomb,
            Err(_) => return false,
        },
    };
    t.notes = dated(&t.notes, text);
    index::upsert(home, &t).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SID: &str = "35c98558-0920-4e29-b81c-9304ca43fccb";

    fn setup() -> (tempfile::TempDir, Entry, PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let home = d.path().join("park");
        let cfg = d.path().join("h/.claude");
        std::fs::create_dir_all(&cfg).unwrap();
        let mut e = crate::store::ledger::tests::sample("a");
        e.agent = Agent::Claude;
        e.session_id = SID.into();
        e.cwd = d.path().to_string_lossy().into_owned();
        e.config_dir = Some(cfg.to_string_lossy().into_owned());
        let t = crate::agents::of(Agent::Claude)
            .restore_path(&e, &cfg, SID)
            .unwrap();
        std::fs::create_dir_all(t.parent().unwrap()).unwrap();
        let line = format!(
            "{{\"type\":\"user\",\"sessionId\":\"{SID}\",\"timestamp\":\"2026-12-01T10:00:00Z\",\"message\":{{\"role\":\"user\",\"content\":\"hi there\"}}}}\n"
        );
        std::fs::write(&t, line).unwrap();
        e.transcript = Some(t.to_string_lossy().into_owned());
        std::fs::create_dir_all(&home).unwrap();
        archive(&home, &e, true).unwrap();
        (d, e, home)
    }

    #[test]
    fn a_deleted_transcript_is_restored_and_a_present_one_never_overwritten() {
        let (_d, e, home) = setup();
        let t = PathBuf::from(e.transcript.clone().unwrap());
        assert_eq!(restore(&home, &e), Restore::Present);
        std::fs::remove_file(&t).unwrap();
        assert_eq!(restore(&home, &e), Restore::Restored(t.clone()));
        assert!(std::fs::read_to_string(&t).unwrap().contains("hi there"));
        // The agent wrote a newer one meanwhile: it is kept as is.
        std::fs::write(&t, "newer").unwrap();
        assert_eq!(restore(&home, &e), Restore::Present);
        assert_eq!(std::fs::read_to_string(&t).unwrap(), "newer");
    }

    #[test]
    fn a_copy_of_another_session_or_a_symlinked_dir_is_never_restored() {
        let (_d, e, home) = setup();
        let t = PathBuf::from(e.transcript.clone().unwrap());
        std::fs::remove_file(&t).unwrap();
        let copy = dir(&home, SID).join("transcript.jsonl");
        let good = std::fs::read(&copy).unwrap();
        std::fs::write(
            &copy,
            String::from_utf8(good.clone())
                .unwrap()
                .replace(SID, "00000000-0000-4000-8000-000000000000"),
        )
        .unwrap();
        assert!(matches!(restore(&home, &e), Restore::Unsafe(w) if w.contains("does not name")));
        std::fs::write(&copy, &good).unwrap();
        // The projects dir replaced by a symlink: refused, nothing written through it.
        let proj = t.parent().unwrap().to_path_buf();
        std::fs::remove_dir_all(&proj).unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), &proj).unwrap();
        assert!(matches!(restore(&home, &e), Restore::Unsafe(_)));
        assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
    }

    use crate::shapes;

    /// Archives `bytes` as `agent`'s transcript of `sid`; the archive dir and its meta.
    fn archive_bytes(
        agent: Agent,
        sid: &str,
        bytes: &[u8],
    ) -> (tempfile::TempDir, Result<Archived, LedgerError>) {
        let d = tempfile::tempdir().unwrap();
        let home = d.path().join("park");
        std::fs::create_dir_all(&home).unwrap();
        let t = d.path().join("t.jsonl");
        std::fs::write(&t, bytes).unwrap();
        let mut e = crate::store::ledger::tests::sample("a");
        e.agent = agent;
        e.session_id = sid.into();
        e.transcript = Some(t.to_string_lossy().into_owned());
        let r = archive(&home, &e, true);
        (d, r)
    }

    fn lines(v: &[Vec<u8>]) -> Vec<u8> {
        v.iter()
            .flat_map(|l| l.iter().copied().chain([b'\n']))
            .collect()
    }

    fn md_of(a: &Archived) -> String {
        normalize(&std::fs::read_to_string(a.dir.join("transcript.md")).unwrap())
    }

    use crate::agents::render::normalize;

    #[test]
    fn damaged_records_are_archived_rendered_and_verified() {
        // Claude: the last prompt has a lone surrogate, the last reply invalid UTF-8.
        let t = lines(&[
            shapes::claude_prompt("first", "2026-12-02T10:00:00Z").into_bytes(),
            shapes::claude_reply("first answer", "2026-12-02T10:00:01Z").into_bytes(),
            shapes::with_raw(
                &shapes::claude_prompt("LAST PROMPT SURR here", "2026-12-02T11:00:00Z"),
                "SURR",
                b"\\ud83d",
            ),
            shapes::with_raw(
                &shapes::claude_reply("LAST ANSWER BAD there", "2026-12-02T11:00:09Z"),
                "BAD",
                &[0xff],
            ),
            shapes::claude_turn_done("2026-12-02T11:00:10Z").into_bytes(),
        ]);
        let (_d, r) = archive_bytes(Agent::Claude, shapes::CLAUDE_SID, &t);
        let a = r.unwrap();
        let md = md_of(&a);
        assert!(md.contains("last prompt \u{fffd} here"), "{md}");
        assert!(md.contains("last answer \u{fffd} there"), "{md}");
        assert_eq!(
            std::fs::read(a.dir.join("transcript.jsonl")).unwrap(),
            t,
            "byte-exact"
        );
        assert!(a.tomb.warnings.is_empty(), "{:?}", a.tomb.warnings);
        assert_eq!(a.tomb.last_active.as_deref(), Some("2026-12-02T11:00:09Z"));

        // Codex: the last prompt with invalid UTF-8, the final answer with a lone low surrogate.
        let t = lines(&[
            shapes::codex_meta().into_bytes(),
            shapes::codex_task_started("2026-12-02T11:00:00Z").into_bytes(),
            shapes::with_raw(
                &shapes::codex_prompt("LAST PROMPT BAD", "2026-12-02T11:00:00Z"),
                "BAD",
                &[0xc3],
            ),
            shapes::with_raw(
                &shapes::codex_reply("LAST ANSWER SURR", "2026-12-02T11:00:05Z"),
                "SURR",
                b"\\udc00",
            ),
            shapes::with_raw(
                &shapes::codex_task_complete("LAST ANSWER SURR", "2026-12-02T11:00:05Z"),
                "SURR",
                b"\\udc00",
            ),
        ]);
        let (_d, r) = archive_bytes(Agent::Codex, shapes::CODEX_SID, &t);
        let a = r.unwrap();
        let md = md_of(&a);
        assert!(md.contains("last prompt \u{fffd}"), "{md}");
        assert!(md.contains("last answer \u{fffd}"), "{md}");
        assert!(a.tomb.warnings.is_empty(), "{:?}", a.tomb.warnings);
    }

    #[test]
    fn an_unreadable_or_truncated_last_record_is_recorded_never_silently_verified() {
        for codex in [false, true] {
            let (agent, sid, mut t) = if codex {
                let t = lines(&[
                    shapes::codex_meta().into_bytes(),
                    shapes::codex_task_started("2026-12-02T11:00:00Z").into_bytes(),
                    shapes::codex_prompt("q", "2026-12-02T11:00:00Z").into_bytes(),
                    shapes::codex_task_complete("a", "2026-12-02T11:00:01Z").into_bytes(),
                ]);
                (Agent::Codex, shapes::CODEX_SID, t)
            } else {
                let t = lines(&[
                    shapes::claude_prompt("q", "2026-12-02T11:00:00Z").into_bytes(),
                    shapes::claude_reply("a", "2026-12-02T11:00:01Z").into_bytes(),
                ]);
                (Agent::Claude, shapes::CLAUDE_SID, t)
            };
            let clean = t.clone();
            // The last complete record cannot be parsed even leniently.
            t.extend_from_slice(
                b"{\"type\":\"user\",\"message\":{\"content\":\"the real last prompt\"} oops\n",
            );
            let (_d, r) = archive_bytes(agent, sid, &t);
            let a = r.expect("the raw copy is byte-exact: archived, with a warning");
            assert_eq!(a.tomb.warnings.len(), 1, "{:?}", a.tomb.warnings);
            assert!(
                a.tomb.warnings[0].contains("cannot be parsed"),
                "{:?}",
                a.tomb.warnings
            );
            let meta = std::fs::read_to_string(a.dir.join("meta.json")).unwrap();
            assert!(meta.contains("\"warnings\""), "{meta}");
            assert!(md_of(&a).contains("park could not render everything"));
            assert_eq!(std::fs::read(a.dir.join("transcript.jsonl")).unwrap(), t);

            // A truncated last record (killed writer).
            let mut t = clean.clone();
            t.extend_from_slice(b"{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"half");
            let (_d, r) = archive_bytes(agent, sid, &t);
            let a = r.unwrap();
            assert!(
                a.tomb
                    .warnings
                    .iter()
                    .any(|w| w.contains("truncated record")),
                "{:?}",
                a.tomb.warnings
            );

            // Clean: no warnings, and none in meta.json.
            let (_d, r) = archive_bytes(agent, sid, &clean);
            let a = r.unwrap();
            assert!(a.tomb.warnings.is_empty());
            let meta = std::fs::read_to_string(a.dir.join("meta.json")).unwrap();
            assert!(!meta.contains("warnings"));
        }
    }

    #[test]
    fn verification_reads_the_raw_end_not_only_what_the_renderer_kept() {
        let t = lines(&[
            shapes::claude_prompt("early prompt", "2026-12-02T10:00:00Z").into_bytes(),
            shapes::claude_reply("early answer", "2026-12-02T10:00:01Z").into_bytes(),
            shapes::claude_prompt("the real last prompt", "2026-12-02T11:00:00Z").into_bytes(),
            shapes::claude_reply("the real last answer", "2026-12-02T11:00:01Z").into_bytes(),
        ]);
        let raw = crate::agents::raw_end(Agent::Claude, &t);
        assert_eq!(raw.last_user.as_deref(), Some("the real last prompt"));
        assert_eq!(raw.last_reply.as_deref(), Some("the real last answer"));
        // A renderer that lost the last turn (the old bug: serde rejected its lines) and agrees
        // with itself about what is last must not pass.
        let lost = (crate::agents::of(park_protocol::Agent::Claude)
            .spec()
            .markdown)(&t[..t.len() / 2]);
        assert!(verify_markdown(
            &lost.markdown,
            &lost,
            &crate::agents::render::RawEnd::default()
        )
        .is_ok());
        let err = verify_markdown(&lost.markdown, &lost, &raw).unwrap_err();
        assert!(err.contains("lacks the transcript's last"), "{err}");
        let full = (crate::agents::of(park_protocol::Agent::Claude)
            .spec()
            .markdown)(&t);
        assert!(verify_markdown(&full.markdown, &full, &raw).is_ok());
    }

    #[test]
    fn archive_refuses_a_transcript_of_another_session() {
        let (_d, mut e, home) = setup();
        e.session_id = "00000000-0000-4000-8000-000000000000".into();
        let err = archive(&home, &e, true).unwrap_err().to_string();
        assert!(err.contains("belongs to session"), "{err}");
    }
}
