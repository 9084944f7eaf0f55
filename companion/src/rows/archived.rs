//! Every archived session (tombstone) as one annotated list, search over it, and target
//! resolution over it.
//!
//! Contract:
//! * [`rows`] is the **one accessor** every view reads (`ls --archived`, `search`, `show`, `note`,
//!   `unpark` of a tombstone): tombstones plus parked entries, each annotated with where the
//!   session is now (parked ❄ / running again ↑ / archived ·). Liveness comes from the process
//!   table, so it works with no multiplexer running at all.
//! * Search is case-insensitive over title, AI title, window, cwd, summary, notes and session id;
//!   `--full-text` adds the rendered conversations.

use crate::model::entry::Entry;
use crate::scan::live::LiveSet;
use crate::store::archive::index::load_tombs;
use crate::store::archive::{self, Tombstone};
use crate::support::fs::read_nofollow;
use park_protocol::{ArchivedRow, SearchHit, TombState};
use std::collections::BTreeMap;
use std::path::Path;

/// A tombstone for a parked entry that has none (parked before tombstones existed, or its
/// archive was removed): the ledger knows enough to list it.
fn from_entry(e: &Entry) -> Tombstone {
    Tombstone {
        schema: archive::TOMB_SCHEMA,
        agent: e.agent,
        session_id: e.session_id.clone(),
        cwd: e.cwd.clone(),
        program: e.program.clone(),
        flags: e.flags.clone(),
        config_dir: e.config_dir.clone(),
        config_var: e.config_var.clone(),
        source_transcript: e.transcript.clone(),
        place: e.place.clone(),
        ai_title: None,
        first_prompt: None,
        last_assistant: None,
        parked_at: Some(e.parked_at.clone()),
        archived_at: String::new(),
        last_active: e.last_active.clone(),
        group: e.group.clone(),
        notes: String::new(),
        transcript_bytes: 0,
        markdown_bytes: 0,
        turns: 0,
        warnings: vec![],
        prompts_only: false,
    }
}

fn ts(s: Option<&str>) -> Option<jiff::Timestamp> {
    s.and_then(|s| s.parse().ok())
}

/// Days left before the agent's own cleanup may delete `e`'s transcript.
fn cleanup_in_days(e: &Entry, transcript: Option<&Path>) -> Option<i64> {
    crate::agents::cleanup_left(e, transcript)
}

/// Annotates tombstones (pure but for stat calls on transcripts): the rows every view shows.
pub(crate) fn annotate(
    home: &Path,
    tombs: Vec<Tombstone>,
    entries: &[Entry],
    live: &LiveSet,
) -> Vec<ArchivedRow> {
    let mut by_sid: BTreeMap<String, Tombstone> = tombs
        .into_iter()
        .map(|t| (t.session_id.clone(), t))
        .collect();
    for e in entries {
        by_sid
            .entry(e.session_id.to_lowercase())
            .or_insert_with(|| from_entry(e));
    }
    let mut rows: Vec<ArchivedRow> = by_sid
        .into_values()
        .map(|t| {
            let entry = entries
                .iter()
                .find(|e| e.session_id.eq_ignore_ascii_case(&t.session_id));
            let state = if live.contains(&t.session_id) {
                TombState::Running
            } else if entry.is_some() {
                TombState::Parked
            } else {
                TombState::Archived
            };
            let as_entry = entry.cloned().unwrap_or_else(|| t.to_entry());
            let transcript = crate::agents::expected_transcript(&as_entry);
            let present = transcript.as_ref().is_some_and(|p| p.is_file());
            let idle = match (
                ts(t.last_active.as_deref()),
                ts(t.parked_at.as_deref()).or(ts(Some(&t.archived_at))),
            ) {
                (Some(a), Some(p)) => Some((p.as_second() - a.as_second()).max(0) as u64),
                _ => None,
            };
            let title = if !t.place.title.is_empty() {
                t.place.title.clone()
            } else {
                t.ai_title.clone().unwrap_or_default()
            };
            ArchivedRow {
                agent: t.agent,
                session_id: t.session_id.clone(),
                state,
                marker: state.marker().into(),
                cwd: t.cwd.clone(),
                title,
                ai_title: t.ai_title.clone(),
                mux: t.place.kind.clone(),
                session: t.place.session.clone(),
                window_index: t.place.window_index,
                window: t.place.window_name.clone(),
                pane: entry
                    .map(|e| e.place.pane.clone())
                    .unwrap_or_else(|| t.place.pane.clone()),
                summary: t.summary(),
                first_prompt: t.first_prompt.clone(),
                last_assistant: t.last_assistant.clone(),
                parked_at: t.parked_at.clone(),
                archived_at: t.archived_at.clone(),
                last_active: t.last_active.clone(),
                idle_at_park_seconds: idle,
                flags: t.flags.clone(),
                group: entry.and_then(|e| e.group.clone()).or(t.group.clone()),
                notes: t.notes.clone(),
                transcript_present: present,
                cleanup_in_days: if present {
                    cleanup_in_days(&as_entry, transcript.as_deref())
                } else {
                    None
                },
                transcript_bytes: t.transcript_bytes,
                markdown_bytes: t.markdown_bytes,
                turns: t.turns,
                prompts_only: t.prompts_only,
                entry: entry.map(|e| e.id.clone()),
                archive_dir: archive::dir(home, &t.session_id)
                    .to_string_lossy()
                    .into_owned(),
                resume_command: crate::agents::resume_command_line(&as_entry),
            }
        })
        .collect();
    rows.sort_by(|a, b| {
        let k = |r: &ArchivedRow| r.parked_at.clone().unwrap_or(r.archived_at.clone());
        k(b).cmp(&k(a)).then(a.session_id.cmp(&b.session_id))
    });
    rows
}

/// The one accessor: tombstones + parked entries, annotated with what runs now.
pub fn rows(ctx: &crate::ctx::Ctx) -> (Vec<ArchivedRow>, Vec<String>) {
    let (tombs, mut warnings) = load_tombs(&ctx.ledger.home);
    let (entries, bad) = ctx.ledger.all();
    warnings.extend(bad.iter().map(|b| b.to_string()));
    // Liveness needs only the process table: a dead or absent multiplexer is not an error here.
    let live = match crate::scan::scan(ctx.platform.as_ref(), ctx.mux.as_ref(), false) {
        Ok(s) => LiveSet::from_scan(&s),
        Err(e) => {
            warnings.push(format!(
                "cannot read the process table ({e}); running state unknown"
            ));
            LiveSet::default()
        }
    };
    (annotate(&ctx.ledger.home, tombs, &entries, &live), warnings)
}

fn lc_find(hay: &str, needle_lc: &str) -> Option<usize> {
    hay.to_lowercase().find(needle_lc)
}

fn snippet_at(text: &str, needle_lc: &str) -> Option<String> {
    for line in text.lines() {
        let low = line.to_lowercase();
        if let Some(i) = low.find(needle_lc) {
            // Cut by characters around the match (byte offsets of `low` may not be `line`'s).
            let chars: Vec<char> = line.chars().collect();
            let at = low[..i].chars().count().min(chars.len());
            let from = at.saturating_sub(40);
            let to = (at + needle_lc.chars().count() + 60).min(chars.len());
            let mut s: String = chars[from..to].iter().collect();
            if from > 0 {
                s.insert(0, '…');
            }
            if to < chars.len() {
                s.push('…');
            }
            return Some(s.trim().to_string());
        }
    }
    None
}

/// Which rows match `term` and why. `full_text` also reads each rendered conversation.
pub fn search(rows: &[ArchivedRow], term: &str, full_text: bool) -> Vec<SearchHit> {
    let t = term.to_lowercase();
    let mut hits = vec![];
    for r in rows {
        let fields: [(&str, &str); 9] = [
            ("title", &r.title),
            ("title", r.ai_title.as_deref().unwrap_or("")),
            ("window", &r.window),
            ("window", &r.session),
            ("cwd", &r.cwd),
            ("summary", r.first_prompt.as_deref().unwrap_or(&r.summary)),
            ("summary", r.last_assistant.as_deref().unwrap_or("")),
            ("notes", &r.notes),
            ("session_id", &r.session_id),
        ];
        let mut names: Vec<String> = vec![];
        let mut snippet = None;
        for (name, text) in fields {
            if lc_find(text, &t).is_some() {
                if !names.iter().any(|n| n == name) {
                    names.push(name.to_string());
                }
                snippet = snippet.or_else(|| snippet_at(text, &t));
            }
        }
        if full_text {
            let md = Path::new(&r.archive_dir).join("transcript.md");
            if let Ok(b) = read_nofollow(&md) {
                let text = String::from_utf8_lossy(&b);
                if let Some(s) = snippet_at(&text, &t) {
                    names.push("conversation".into());
                    snippet = snippet.or(Some(s));
                }
            }
        }
        if !names.is_empty() {
            hits.push(SearchHit {
                session_id: r.session_id.clone(),
                fields: names,
                snippet: snippet.unwrap_or_default(),
            });
        }
    }
    hits
}

/// Tombstones a target names: a session id or a prefix of one (≥ 6 characters), an entry id, a
/// pane, `session:window`, or a substring of title / AI title / window / cwd. More than one
/// match for a name is an error listing them: never a guess.
pub fn resolve<'a>(
    t: &crate::guards::target::Target,
    rows: &'a [ArchivedRow],
    raw: &str,
) -> Result<Vec<&'a ArchivedRow>, String> {
    use crate::guards::target::Target;
    let hits: Vec<&ArchivedRow> = match t {
        Target::Here => vec![],
        Target::SessionId(id) => rows.iter().filter(|r| r.session_id == *id).collect(),
        Target::Pane(p) => rows.iter().filter(|r| r.pane == *p).collect(),
        Target::Window(s, w) => rows
            .iter()
            .filter(|r| {
                r.session == *s && (w.parse::<u32>().ok() == Some(r.window_index) || r.window == *w)
            })
            .collect(),
        Target::Word(w) => {
            let lw = w.to_lowercase();
            let exact: Vec<&ArchivedRow> = rows
                .iter()
                .filter(|r| {
                    r.entry.as_deref() == Some(w.as_str())
                        || format!("{}-{}", r.agent.as_str(), r.session_id) == lw
                        || (lw.len() >= 6
                            && lw.chars().all(|c| c.is_ascii_hexdigit() || c == '-')
                            && r.session_id.starts_with(&lw))
                })
                .collect();
            if !exact.is_empty() {
                exact
            } else {
                let m: Vec<&ArchivedRow> = rows
                    .iter()
                    .filter(|r| {
                        [
                            r.title.as_str(),
                            r.ai_title.as_deref().unwrap_or(""),
                            r.window.as_str(),
                            r.cwd.as_str(),
                        ]
                        .iter()
                        .any(|f| f.to_lowercase().contains(&lw))
                    })
                    .collect();
                if m.len() > 1 {
                    let list: Vec<String> = m
                        .iter()
                        .map(|r| {
                            format!(
                                "{} {:?} ({})",
                                &r.session_id[..8],
                                r.title,
                                state_word(r.state)
                            )
                        })
                        .collect();
                    return Err(format!(
                        "{raw:?} matches {} archived sessions: {} (name one by its session id)",
                        m.len(),
                        list.join(", ")
                    ));
                }
                m
            }
        }
    };
    if hits.is_empty() {
        return Err(format!("{raw}: no archived session matches"));
    }
    Ok(hits)
}

pub fn state_word(s: TombState) -> &'static str {
    match s {
        TombState::Parked => "parked",
        TombState::Running => "running again",
        TombState::Archived => "archived",
    }
}

fn fmt_secs(s: Option<u64>) -> String {
    match s {
        None => "-".into(),
        Some(s) if s < 3600 => format!("{}m", s / 60),
        Some(s) if s < 86400 => format!("{}h", s / 3600),
        Some(s) => format!("{}d", s / 86400),
    }
}

/// Text for `ls --archived` and `search`: newest first, one block per session.
pub fn render_text(rows: &[ArchivedRow], hits: Option<&[SearchHit]>) -> String {
    let mut t = String::new();
    for r in rows {
        let when = r
            .parked_at
            .as_deref()
            .unwrap_or(&r.archived_at)
            .get(..16)
            .unwrap_or("")
            .replace('T', " ");
        t.push_str(&format!(
            "{} {:<13} {:<6} {}  {}  idle {} at park  {}\n",
            r.marker,
            state_word(r.state),
            r.agent.as_str(),
            &r.session_id[..8.min(r.session_id.len())],
            when,
            fmt_secs(r.idle_at_park_seconds),
            archive::cut(if r.title.is_empty() { "-" } else { &r.title }, 50),
        ));
        t.push_str(&format!(
            "    {}  ({}:{} {})\n",
            r.cwd, r.session, r.window_index, r.window
        ));
        if !r.summary.is_empty() {
            t.push_str(&format!("    “{}”\n", archive::cut(&r.summary, 110)));
        }
        if let Some(first) = r.notes.lines().find(|l| !l.trim().is_empty()) {
            t.push_str(&format!("    notes: {}\n", archive::cut(first.trim(), 100)));
        }
        if let Some(h) = hits.and_then(|h| h.iter().find(|h| h.session_id == r.session_id)) {
            t.push_str(&format!(
                "    matched {}: {}\n",
                h.fields.join(", "),
                archive::cut(&h.snippet, 110)
            ));
        }
        if r.prompts_only {
            t.push_str(&format!("    recovered (prompts only): no transcript to resume; the prompts: {}/transcript.md\n", r.archive_dir));
            continue;
        }
        if !r.transcript_present {
            t.push_str("    ⚠ the agent's own transcript is gone; `park unpark` restores it from the archive\n");
        } else if let Some(d) = r
            .cleanup_in_days
            .filter(|d| *d <= crate::agents::CLEANUP_WARN_DAYS as i64)
        {
            t.push_str(&format!("    ⚠ the agent's cleanup may delete its transcript in {d} day(s); the archive keeps a copy (raise cleanupPeriodDays to keep the agent's own)\n"));
        }
        match r.state {
            TombState::Running => t.push_str("    running again\n"),
            _ => t.push_str(&format!(
                "    resume: park unpark {}   ({})\n",
                r.session_id, r.resume_command
            )),
        }
    }
    if rows.is_empty() {
        t.push_str(if hits.is_some() {
            "no archived session matches\n"
        } else {
            "the archive is empty\n"
        });
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::archive::index::*;
    use park_protocol::Agent;
    use std::time::Duration;

    fn tomb(sid: &str, title: &str, notes: &str) -> Tombstone {
        let mut e = crate::store::ledger::tests::sample("x");
        e.session_id = sid.into();
        e.place.title = title.into();
        let mut t = from_entry(&e);
        t.archived_at = "2026-12-01T10:00:00Z".into();
        t.notes = notes.into();
        t.first_prompt = Some("fix the login bug".into());
        t
    }

    const A: &str = "11111111-1111-4111-8111-111111111111";
    const B: &str = "22222222-2222-4222-8222-222222222222";

    #[test]
    fn upsert_keeps_one_record_per_session() {
        let d = tempfile::tempdir().unwrap();
        let mut t = tomb(A, "api", "");
        upsert(d.path(), &t).unwrap();
        t.place.title = "api v2".into();
        upsert(d.path(), &t).unwrap();
        let (all, w) = load_tombs(d.path());
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].place.title, "api v2");
    }

    #[test]
    fn a_corrupt_index_is_reported_and_the_metas_still_read() {
        let d = tempfile::tempdir().unwrap();
        upsert(d.path(), &tomb(A, "api", "")).unwrap();
        upsert(d.path(), &tomb(B, "web", "")).unwrap();
        std::fs::write(index_path(d.path()), b"{not json").unwrap();
        let (all, w) = load_tombs(d.path());
        assert_eq!(all.len(), 2);
        assert!(w[0].contains("corrupt"), "{w:?}");
        // The next upsert rebuilds it from the metas; nothing is lost.
        upsert(d.path(), &tomb(A, "api", "n")).unwrap();
        let (all, w) = load_tombs(d.path());
        assert_eq!((all.len(), w.len()), (2, 0));
    }

    #[test]
    fn a_meta_newer_than_the_index_wins() {
        let d = tempfile::tempdir().unwrap();
        upsert(d.path(), &tomb(A, "old", "")).unwrap();
        std::thread::sleep(Duration::from_millis(20));
        // A crash between meta.json and index.json leaves the index behind.
        archive::write_meta(d.path(), &tomb(A, "new", "")).unwrap();
        let (all, _) = load_tombs(d.path());
        assert_eq!(all[0].place.title, "new");
    }

    fn rows_of(tombs: Vec<Tombstone>, entries: &[Entry], live: &[&str]) -> Vec<ArchivedRow> {
        let l = LiveSet {
            ids: live.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        };
        annotate(Path::new("/nonexistent"), tombs, entries, &l)
    }

    #[test]
    fn every_row_says_where_the_session_is_now() {
        let mut e = crate::store::ledger::tests::sample("p");
        e.session_id = B.into();
        let r = rows_of(vec![tomb(A, "api", ""), tomb(B, "web", "")], &[e], &[]);
        let st: Vec<_> = r.iter().map(|r| (&r.session_id[..1], r.state)).collect();
        assert!(st.contains(&("2", TombState::Parked)), "{st:?}");
        assert!(st.contains(&("1", TombState::Archived)), "{st:?}");
        // Running again wins over everything: the ↑ marker.
        let r = rows_of(vec![tomb(A, "api", "")], &[], &[A]);
        assert_eq!(
            (r[0].state, r[0].marker.as_str()),
            (TombState::Running, "↑")
        );
    }

    #[test]
    fn search_covers_title_cwd_summary_notes_and_ids() {
        let r = rows_of(
            vec![tomb(A, "api", "see slack thread #42"), tomb(B, "web", "")],
            &[],
            &[],
        );
        let sids = |term: &str| -> Vec<String> {
            search(&r, term, false)
                .into_iter()
                .map(|h| h.session_id[..1].to_string())
                .collect()
        };
        assert_eq!(sids("SLACK"), ["1"]);
        assert_eq!(sids("web"), ["2"]);
        assert_eq!(sids("login").len(), 2);
        assert_eq!(sids("22222222"), ["2"]);
        assert!(sids("nothing-like-this").is_empty());
        let h = search(&r, "slack", false);
        assert_eq!(h[0].fields, ["notes"]);
        assert!(h[0].snippet.contains("slack thread"));
    }

    #[test]
    fn ambiguous_names_list_and_refuse() {
        use crate::guards::target::Target;
        let r = rows_of(vec![tomb(A, "api-a", ""), tomb(B, "api-b", "")], &[], &[]);
        let err = resolve(&Target::Word("api".into()), &r, "api").unwrap_err();
        assert!(err.contains("matches 2") && err.contains("11111111") && err.contains("22222222"));
        assert_eq!(
            resolve(&Target::Word("api-b".into()), &r, "api-b")
                .unwrap()
                .len(),
            1
        );
        assert_eq!(
            resolve(&Target::Word("111111".into()), &r, "111111").unwrap()[0].session_id,
            A
        );
        assert!(resolve(&Target::Word("zzz".into()), &r, "zzz").is_err());
        let _ = Agent::Claude;
    }
}
