//! `park recover`: for Claude sessions whose transcript the agent already deleted, rebuild what
//! can be rebuilt from Claude's prompt history (`<config>/history.jsonl`) as archived tombstones
//! marked *recovered (prompts only)*.
//!
//! `history.jsonl` as the real Claude Code 2.1.197 writes it, one line per submitted prompt:
//! `{"display":"<prompt>","pastedContents":{},"timestamp":1796421018294,"project":"/abs/cwd",
//! "sessionId":"<uuid>"}` (`timestamp` in milliseconds; older lines have no `sessionId`).
//!
//! Contract:
//! * Read only: the history file and the agent's transcripts are only read.
//! * One tombstone per session id; lines without one are grouped per project into clusters of
//!   prompts less than [`CLUSTER_GAP`] apart, each named by a synthetic id derived from the
//!   project and its first time (stable across runs, version nibble `0`, so it can never equal a
//!   real (v4) Claude session id).
//! * Skipped, never overwritten: a session whose transcript still exists in any known config dir,
//!   one already in the archive (recovered or really archived), one an agent runs now, and a
//!   malformed line (counted, reported).
//! * A recovered tombstone has `prompts_only` set and no `transcript.jsonl`: it lists and searches
//!   like any other, and `park unpark` of it refuses (there is no transcript to resume) and points
//!   at its `transcript.md`, which lists the prompts with their times.

use crate::store::archive::{self, Tombstone};
use crate::store::ledger::{private_dir, write_atomic};
use park_protocol::reports::{RecoverItem, RecoverOutcome, RecoverOutput};
use park_protocol::Agent;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Prompts of one project without a session id further apart than this start another session.
pub(crate) const CLUSTER_GAP_MS: i64 = 3600 * 1000;
pub const CLUSTER_GAP: std::time::Duration =
    std::time::Duration::from_millis(CLUSTER_GAP_MS as u64);

/// One line of `history.jsonl`.
#[derive(Debug, Clone, PartialEq)]
pub struct Prompt {
    pub display: String,
    pub timestamp_ms: i64,
    pub project: String,
    pub session_id: Option<String>,
}

/// Pure: the well-formed prompts of a history file, and how many lines were not.
pub(crate) fn parse_history(bytes: &[u8]) -> (Vec<Prompt>, usize) {
    let mut out = vec![];
    let mut bad = 0;
    for line in bytes.split(|b| *b == b'\n') {
        if line.iter().all(|b| b.is_ascii_whitespace()) {
            continue;
        }
        let Ok(v) = serde_json::from_slice::<serde_json::Value>(line) else {
            bad += 1;
            continue;
        };
        let display = v.get("display").and_then(|d| d.as_str());
        let ts = v.get("timestamp").and_then(|t| {
            t.as_i64()
                .or_else(|| t.as_f64().map(|f| f as i64))
                .or_else(|| {
                    // Tolerate an RFC 3339 string, should a version write one.
                    t.as_str()?
                        .parse::<jiff::Timestamp>()
                        .ok()
                        .map(|x| x.as_millisecond())
                })
        });
        let project = v
            .get("project")
            .and_then(|p| p.as_str())
            .filter(|p| p.starts_with('/'));
        let (Some(display), Some(ts), Some(project)) = (display, ts, project) else {
            bad += 1;
            continue;
        };
        // A session id that is not one is dropped (the line still counts, clustered by time).
        let sid = v
            .get("sessionId")
            .and_then(|s| s.as_str())
            .and_then(crate::agents::transcript::valid_session_id);
        out.push(Prompt {
            display: display.to_string(),
            timestamp_ms: ts,
            project: project.to_string(),
            session_id: sid,
        });
    }
    (out, bad)
}

/// The prompts of one session (or one cluster).
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    pub session_id: String,
    /// The id is synthetic (no `sessionId` in the history).
    pub synthetic: bool,
    pub project: String,
    /// Oldest first.
    pub prompts: Vec<Prompt>,
}

/// A stable UUID-shaped id for a cluster (version nibble `0`: never a real v4 id).
pub(crate) fn synthetic_id(project: &str, first_ms: i64) -> String {
    let fnv = |seed: u64| {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ seed;
        for b in project.bytes().chain(first_ms.to_le_bytes()) {
            h ^= b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        h
    };
    let (a, b) = (fnv(1), fnv(2));
    let hex = format!("{a:016x}{b:016x}");
    format!(
        "{}-{}-0{}-0{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[13..16],
        &hex[17..20],
        &hex[20..32]
    )
}

/// Pure: prompts grouped by session id, the rest clustered per project by time.
pub fn group(prompts: &[Prompt]) -> Vec<Group> {
    let mut by_id: BTreeMap<String, Vec<Prompt>> = BTreeMap::new();
    let mut loose: BTreeMap<String, Vec<Prompt>> = BTreeMap::new();
    for p in prompts {
        match &p.session_id {
            Some(id) => by_id.entry(id.clone()).or_default().push(p.clone()),
            None => loose.entry(p.project.clone()).or_default().push(p.clone()),
        }
    }
    let mut out = vec![];
    for (id, mut ps) in by_id {
        ps.sort_by_key(|p| p.timestamp_ms);
        out.push(Group {
            session_id: id,
            synthetic: false,
            project: ps[0].project.clone(),
            prompts: ps,
        });
    }
    for (project, mut ps) in loose {
        ps.sort_by_key(|p| p.timestamp_ms);
        let mut cur: Vec<Prompt> = vec![];
        let mut flush = |cur: &mut Vec<Prompt>| {
            if let Some(first) = cur.first() {
                out.push(Group {
                    session_id: synthetic_id(&project, first.timestamp_ms),
                    synthetic: true,
                    project: project.clone(),
                    prompts: std::mem::take(cur),
                });
            }
        };
        for p in ps {
            if cur
                .last()
                .is_some_and(|l| p.timestamp_ms - l.timestamp_ms > CLUSTER_GAP_MS)
            {
                flush(&mut cur);
            }
            cur.push(p);
        }
        flush(&mut cur);
    }
    out.sort_by_key(|g| g.prompts[0].timestamp_ms);
    out
}

fn rfc3339(ms: i64) -> String {
    jiff::Timestamp::from_millisecond(ms)
        .map(|t| t.to_string())
        .unwrap_or_default()
}

/// Pure: the Markdown of a recovered session (its prompts, with times).
pub fn markdown(g: &Group, history: &Path) -> String {
    let mut md = format!(
        "# Recovered (prompts only)\n\n- agent: claude\n- session: `{}`{}\n- cwd: `{}`\n- recovered from: `{}`\n- recovered: {}\n\nThe agent's transcript was deleted; only the prompts you typed survive (no replies, no tool calls). There is nothing to resume.\n\n---\n\n",
        g.session_id,
        if g.synthetic {
            " (synthetic: the history named no session)"
        } else {
            ""
        },
        g.project,
        history.display(),
        jiff::Timestamp::now(),
    );
    for p in &g.prompts {
        md.push_str(&format!(
            "## {}\n\n{}\n\n",
            rfc3339(p.timestamp_ms),
            p.display.trim_end()
        ));
    }
    md
}

/// Pure: the tombstone of a recovered session.
pub fn tombstone(agent: Agent, g: &Group, cfg: &Path, var: &str, markdown_bytes: u64) -> Tombstone {
    Tombstone {
        schema: archive::TOMB_SCHEMA,
        agent,
        session_id: g.session_id.clone(),
        cwd: g.project.clone(),
        program: agent.as_str().into(),
        flags: vec![],
        config_dir: Some(cfg.to_string_lossy().into_owned()),
        config_var: Some(var.to_string()),
        source_transcript: None,
        place: crate::ops::protect::resurrect_place(),
        ai_title: None,
        first_prompt: g
            .prompts
            .iter()
            .map(|p| p.display.trim())
            .find(|d| !d.is_empty())
            .map(|d| archive::cut(d, 600)),
        last_assistant: None,
        parked_at: None,
        archived_at: jiff::Timestamp::now().to_string(),
        last_active: g.prompts.last().map(|p| rfc3339(p.timestamp_ms)),
        group: None,
        notes: String::new(),
        transcript_bytes: 0,
        markdown_bytes,
        turns: g.prompts.len() as u64,
        prompts_only: true,
        warnings: vec![],
    }
}

/// Pure: why a group is not recovered (`None`: recover it).
pub(crate) fn skip_reason(
    g: &Group,
    present: &BTreeSet<String>,
    archived: &BTreeSet<String>,
    live: &crate::scan::live::LiveSet,
) -> Option<String> {
    if present.contains(&g.session_id) && !crate::support::fault::disabled("recover-present") {
        return Some("its transcript still exists (`park archive --all` archives it)".into());
    }
    if archived.contains(&g.session_id) && !crate::support::fault::disabled("recover-archived") {
        return Some("already in the archive".into());
    }
    if live.contains(&g.session_id) {
        return Some("an agent runs it now".into());
    }
    None
}

pub fn run(
    home: &Path,
    env: &dyn Fn(&str) -> Option<String>,
    entries: &[crate::model::entry::Entry],
    live: &crate::scan::live::LiveSet,
    dry_run: bool,
) -> RecoverOutput {
    let (tombs, mut warnings) = crate::store::archive::index::load_tombs(home);
    let archived: BTreeSet<String> = tombs.iter().map(|t| t.session_id.clone()).collect();
    let mut known: Vec<_> = entries
        .iter()
        .map(|e| (e.agent, e.config_dir.clone(), e.config_var.clone()))
        .collect();
    known.extend(
        tombs
            .iter()
            .map(|t| (t.agent, t.config_dir.clone(), t.config_var.clone())),
    );
    let mut out = RecoverOutput {
        schema: park_protocol::SCHEMA_VERSION,
        dry_run,
        history: vec![],
        bad_lines: 0,
        recovered: 0,
        skipped: 0,
        items: vec![],
        warnings: vec![],
    };
    let mut done: BTreeSet<String> = BTreeSet::new();
    // Agents that keep a prompt history recover read (today Claude's `history.jsonl`).
    for kind in crate::agents::all() {
        let agent = kind.spec().agent;
        let Some(history) = kind.spec().prompt_history else {
            continue;
        };
        let dirs = crate::ops::protect::config_dirs(agent, env, &known);
        // A transcript anywhere (any project dir of any config dir) means the session is not lost.
        let present: BTreeSet<String> = dirs
            .iter()
            .flat_map(|(d, v)| crate::ops::protect::sources(agent, d, v))
            .map(|s| s.session_id)
            .collect();
        for (cfg, var) in &dirs {
            let hist = cfg.join(history);
            let bytes = match crate::store::ledger::read_nofollow(&hist) {
                Ok(b) => b,
                Err(_) if !hist.exists() => continue,
                Err(e) => {
                    warnings.push(format!("{}: {e}", hist.display()));
                    continue;
                }
            };
            out.history.push(hist.to_string_lossy().into_owned());
            let (prompts, bad) = parse_history(&bytes);
            out.bad_lines += bad;
            for g in group(&prompts) {
                let mut item = RecoverItem {
                    session_id: g.session_id.clone(),
                    synthetic: g.synthetic,
                    cwd: g.project.clone(),
                    prompts: g.prompts.len(),
                    first_at: rfc3339(g.prompts[0].timestamp_ms),
                    last_at: rfc3339(g.prompts[g.prompts.len() - 1].timestamp_ms),
                    outcome: RecoverOutcome::Skipped,
                    reason: None,
                };
                let reason = skip_reason(&g, &present, &archived, live).or_else(|| {
                    (!done.insert(g.session_id.clone()))
                        .then(|| "already recovered from another history file".to_string())
                });
                if let Some(why) = reason {
                    item.reason = Some(why);
                    out.items.push(item);
                    continue;
                }
                if dry_run {
                    item.outcome = RecoverOutcome::WouldRecover;
                    out.items.push(item);
                    continue;
                }
                match write_one(home, agent, &g, cfg, var, &hist) {
                    Ok(()) => item.outcome = RecoverOutcome::Recovered,
                    Err(e) => item.reason = Some(e),
                }
                out.items.push(item);
            }
        }
    }
    out.recovered = out
        .items
        .iter()
        .filter(|i| i.outcome != RecoverOutcome::Skipped)
        .count();
    out.skipped = out.items.len() - out.recovered;
    out.warnings = warnings;
    out
}

fn write_one(
    home: &Path,
    agent: Agent,
    g: &Group,
    cfg: &Path,
    var: &str,
    hist: &Path,
) -> Result<(), String> {
    let sid = archive::checked_id(&g.session_id).map_err(|e| e.to_string())?;
    private_dir(home).map_err(|e| e.to_string())?;
    private_dir(&archive::root(home)).map_err(|e| e.to_string())?;
    let d = archive::dir(home, &sid);
    // Never over an archive that appeared meanwhile (a park, another recover).
    if d.join("meta.json").exists() && !crate::support::fault::disabled("recover-archived") {
        return Err("already in the archive".into());
    }
    private_dir(&d).map_err(|e| e.to_string())?;
    let md = markdown(g, hist);
    write_atomic(&d.join("transcript.md"), md.as_bytes()).map_err(|e| e.to_string())?;
    crate::store::archive::index::upsert(home, &tombstone(agent, g, cfg, var, md.len() as u64))
        .map_err(|e| e.to_string())
}

pub fn render(o: &RecoverOutput) -> String {
    let mut t = String::new();
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    for i in &o.items {
        if i.outcome == RecoverOutcome::Skipped {
            *reasons
                .entry(i.reason.clone().unwrap_or_default())
                .or_default() += 1;
            continue;
        }
        t.push_str(&format!(
            "{} {}{}  {} prompt(s) {} … {}  {}\n",
            i.outcome,
            i.session_id,
            if i.synthetic { " (synthetic id)" } else { "" },
            i.prompts,
            i.first_at.get(..16).unwrap_or(""),
            i.last_at.get(..16).unwrap_or(""),
            i.cwd
        ));
    }
    for (why, n) in &reasons {
        t.push_str(&format!("skipped {n}: {why}\n"));
    }
    if o.history.is_empty() {
        t.push_str("no Claude history.jsonl found; nothing to recover\n");
    }
    if o.bad_lines > 0 {
        t.push_str(&format!(
            "{} malformed history line(s) skipped\n",
            o.bad_lines
        ));
    }
    t.push_str(&format!(
        "{} {} session(s) as prompts only (listed by `park ls --archived`, never resumable), skipped {}\n",
        if o.dry_run { "would recover" } else { "recovered" },
        o.recovered,
        o.skipped
    ));
    for w in &o.warnings {
        t.push_str(&format!("warning: {w}\n"));
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "4da92b6e-b399-4524-94c2-d55c1670357a";

    /// A line as the real Claude Code 2.1.197 wrote it (captured by tests/tests/e2e/e2e_protect.rs).
    const REAL: &str = r#"{"display":"recover the quokka prompt","pastedContents":{},"timestamp":1796421018294,"project":"/tmp/park-sbx-5Uokg4/work/hist","sessionId":"4da92b6e-b399-4524-94c2-d55c1670357a"}"#;

    #[test]
    fn history_lines_parse_and_malformed_ones_are_counted_not_fatal() {
        let text = format!(
            "{REAL}\nnot json\n{{\"display\":\"no time\",\"project\":\"/p\"}}\n\n{{\"display\":\"rel\",\"timestamp\":1,\"project\":\"rel/dir\"}}\n{{\"display\":\"old\",\"timestamp\":1700000000000,\"project\":\"/p\"}}\n{{\"display\":\"bad id\",\"timestamp\":1700000001000,\"project\":\"/p\",\"sessionId\":\"../x\"}}\n\u{0}\u{ff}garbage\n{{\"display\":\"cut"
        );
        let (ps, bad) = parse_history(text.as_bytes());
        assert_eq!(bad, 5, "{ps:?}");
        assert_eq!(ps.len(), 3);
        assert_eq!(ps[0].display, "recover the quokka prompt");
        assert_eq!(ps[0].timestamp_ms, 1796421018294);
        assert_eq!(ps[0].project, "/tmp/park-sbx-5Uokg4/work/hist");
        assert_eq!(ps[0].session_id.as_deref(), Some(A));
        assert_eq!(ps[1].session_id, None);
        // An id that is not a session id is dropped; the prompt is kept.
        assert_eq!(
            (ps[2].display.as_str(), ps[2].session_id.as_deref()),
            ("bad id", None)
        );
    }

    fn p(display: &str, ts: i64, project: &str, sid: Option<&str>) -> Prompt {
        Prompt {
            display: display.into(),
            timestamp_ms: ts,
            project: project.into(),
            session_id: sid.map(Into::into),
        }
    }

    #[test]
    fn prompts_group_by_session_id_else_by_project_and_time() {
        let h = 3600 * 1000;
        let ps = vec![
            p("b2", 5 * h, "/a", Some(A)),
            p("b1", h, "/a", Some(A)),
            p("x1", 0, "/p", None),
            p("x2", h / 2, "/p", None),
            p("x3", 10 * h, "/p", None),
            p("y1", h / 4, "/q", None),
        ];
        let g = group(&ps);
        let shape: Vec<(bool, &str, usize)> = g
            .iter()
            .map(|g| (g.synthetic, g.project.as_str(), g.prompts.len()))
            .collect();
        assert_eq!(
            shape,
            [
                (true, "/p", 2),
                (true, "/q", 1),
                (false, "/a", 2),
                (true, "/p", 1)
            ]
        );
        assert_eq!(g[2].session_id, A);
        assert_eq!(g[2].prompts[0].display, "b1");
        // Synthetic ids are stable, valid, distinct, and never a v4 id.
        assert_eq!(group(&ps)[0].session_id, g[0].session_id);
        for x in g.iter().filter(|g| g.synthetic) {
            assert!(crate::agents::transcript::valid_session_id(&x.session_id).is_some());
            assert_eq!(&x.session_id[14..15], "0");
        }
        assert_ne!(g[0].session_id, g[3].session_id);
    }

    #[test]
    fn present_archived_or_running_sessions_are_skipped() {
        let g = &group(&[p("hi", 1, "/a", Some(A))])[0];
        let none = BTreeSet::new();
        let one: BTreeSet<String> = [A.to_string()].into();
        let live = crate::scan::live::LiveSet::default();
        assert_eq!(skip_reason(g, &none, &none, &live), None);
        assert!(skip_reason(g, &one, &none, &live)
            .unwrap()
            .contains("still exists"));
        assert!(skip_reason(g, &none, &one, &live)
            .unwrap()
            .contains("already"));
        let running = crate::scan::live::LiveSet {
            ids: [A.to_string()].into_iter().collect(),
            ..Default::default()
        };
        assert!(skip_reason(g, &none, &none, &running)
            .unwrap()
            .contains("runs it"));
    }

    #[test]
    fn a_recovered_tombstone_is_prompts_only_with_the_prompts_in_its_markdown() {
        let g = &group(&[
            p("first ask", 1_000, "/a", Some(A)),
            p("second", 2_000, "/a", Some(A)),
        ])[0];
        let md = markdown(g, Path::new("/h/.claude/history.jsonl"));
        assert!(md.contains("first ask") && md.contains("second") && md.contains("prompts only"));
        let t = tombstone(
            Agent::Claude,
            g,
            Path::new("/h/.claude"),
            "HOME",
            md.len() as u64,
        );
        assert!(t.prompts_only);
        assert_eq!(t.source_transcript, None);
        assert_eq!(t.first_prompt.as_deref(), Some("first ask"));
        assert_eq!(t.turns, 2);
        assert_eq!(t.cwd, "/a");
    }
}
