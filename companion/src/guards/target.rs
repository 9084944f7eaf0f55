//! Target parsing and resolution: `.`, `%3`, `session:window`, a session name, a session id, an
//! entry id, or a title substring (ambiguous → list and refuse).
//!
//! Contract: resolution is pure over a scan and the ledger's entries. A target that matches nothing,
//! or a title substring that matches more than one row, is an error with a one-line reason.

use crate::agents::transcript::valid_session_id;
use crate::model::entry::Entry;
use crate::scan::Found;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Here,
    Pane(String),
    Window(String, String),
    SessionId(String),
    Word(String),
}

pub fn parse(t: &str) -> Result<Target, String> {
    if t.is_empty() || t.len() > 512 || t.chars().any(|c| c.is_control()) {
        return Err(format!("invalid target {t:?}"));
    }
    if t == "." {
        return Ok(Target::Here);
    }
    if crate::adapters::mux::zellij::parse_handle(t).is_some() {
        return Ok(Target::Pane(t.to_string()));
    }
    if let Some(n) = t.strip_prefix('%') {
        if !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()) {
            return Ok(Target::Pane(t.to_string()));
        }
        return Err(format!("invalid pane id {t:?} (expected %N)"));
    }
    if let Some(id) = valid_session_id(t) {
        return Ok(Target::SessionId(id));
    }
    if let Some((s, w)) = t.rsplit_once(':') {
        if !s.is_empty() && !w.is_empty() {
            return Ok(Target::Window(s.to_string(), w.to_string()));
        }
    }
    Ok(Target::Word(t.to_string()))
}

fn pane_matches_window(
    f_session: &str,
    f_win_idx: u32,
    f_win_name: &str,
    s: &str,
    w: &str,
) -> bool {
    f_session == s && (w.parse::<u32>().ok() == Some(f_win_idx) || w == f_win_name)
}

/// Live agents a target names (indexes into `found`).
pub fn resolve_live(
    t: &Target,
    found: &[Found],
    here: Option<&str>,
    raw: &str,
) -> Result<Vec<usize>, String> {
    let idx: Vec<usize> = match t {
        Target::Here => {
            let Some(h) = here else {
                return Err(
                    "`.` needs TMUX_PANE or ZELLIJ_PANE_ID: run it inside a tmux or zellij pane"
                        .into(),
                );
            };
            found
                .iter()
                .enumerate()
                .filter(|(_, f)| f.pane.as_ref().is_some_and(|p| p.id == h))
                .map(|(i, _)| i)
                .collect()
        }
        Target::Pane(p) => found
            .iter()
            .enumerate()
            .filter(|(_, f)| f.pane.as_ref().is_some_and(|x| x.id == *p))
            .map(|(i, _)| i)
            .collect(),
        Target::Window(s, w) => found
            .iter()
            .enumerate()
            .filter(|(_, f)| {
                f.pane.as_ref().is_some_and(|p| {
                    pane_matches_window(&p.session, p.window_index, &p.window_name, s, w)
                })
            })
            .map(|(i, _)| i)
            .collect(),
        Target::SessionId(id) => found
            .iter()
            .enumerate()
            .filter(|(_, f)| f.ident.session_id.as_deref() == Some(id.as_str()))
            .map(|(i, _)| i)
            .collect(),
        Target::Word(w) => {
            let by_session: Vec<usize> = found
                .iter()
                .enumerate()
                .filter(|(_, f)| f.pane.as_ref().is_some_and(|p| p.session == *w))
                .map(|(i, _)| i)
                .collect();
            if !by_session.is_empty() {
                by_session
            } else {
                let lw = w.to_lowercase();
                let hits: Vec<usize> = found
                    .iter()
                    .enumerate()
                    .filter(|(_, f)| {
                        f.title.to_lowercase().contains(&lw)
                            || f.pane
                                .as_ref()
                                .is_some_and(|p| p.title.to_lowercase().contains(&lw))
                    })
                    .map(|(i, _)| i)
                    .collect();
                if hits.len() > 1 {
                    let list: Vec<String> = hits
                        .iter()
                        .map(|i| {
                            format!(
                                "{} {:?}",
                                found[*i]
                                    .pane
                                    .as_ref()
                                    .map(|p| p.id.as_str())
                                    .unwrap_or("?"),
                                found[*i].title
                            )
                        })
                        .collect();
                    return Err(format!(
                        "{raw:?} matches {} agents: {} (name one)",
                        hits.len(),
                        list.join(", ")
                    ));
                }
                hits
            }
        }
    };
    if idx.is_empty() {
        return Err(format!("{raw}: no running agent matches"));
    }
    Ok(idx)
}

/// Parked entries a target names.
pub fn resolve_entries<'a>(
    t: &Target,
    entries: &'a [Entry],
    here: Option<&str>,
    raw: &str,
) -> Result<Vec<&'a Entry>, String> {
    let hits: Vec<&Entry> = match t {
        Target::Here => {
            let Some(h) = here else {
                return Err(
                    "`.` needs TMUX_PANE or ZELLIJ_PANE_ID: run it inside a tmux or zellij pane"
                        .into(),
                );
            };
            entries.iter().filter(|e| e.place.pane == h).collect()
        }
        Target::Pane(p) => entries.iter().filter(|e| e.place.pane == *p).collect(),
        Target::Window(s, w) => entries
            .iter()
            .filter(|e| {
                pane_matches_window(
                    &e.place.session,
                    e.place.window_index,
                    &e.place.window_name,
                    s,
                    w,
                )
            })
            .collect(),
        Target::SessionId(id) => entries.iter().filter(|e| e.session_id == *id).collect(),
        Target::Word(w) => {
            let exact: Vec<&Entry> = entries
                .iter()
                .filter(|e| e.id == *w || e.place.session == *w)
                .collect();
            if !exact.is_empty() {
                exact
            } else {
                let lw = w.to_lowercase();
                let hits: Vec<&Entry> = entries
                    .iter()
                    .filter(|e| e.place.title.to_lowercase().contains(&lw))
                    .collect();
                if hits.len() > 1 {
                    let list: Vec<String> = hits
                        .iter()
                        .map(|e| format!("{} {:?}", e.id, e.place.title))
                        .collect();
                    return Err(format!(
                        "{raw:?} matches {} parked sessions: {} (name one)",
                        hits.len(),
                        list.join(", ")
                    ));
                }
                hits
            }
        }
    };
    if hits.is_empty() {
        return Err(format!("{raw}: no parked session matches"));
    }
    Ok(hits)
}

/// What `--idle`/`--all` would park: (index into `found`, why skipped if it is not selected).
pub(crate) fn bulk_selection(
    found: &[crate::scan::Found],
    min_idle: Option<std::time::Duration>,
) -> (Vec<usize>, Vec<(usize, String)>) {
    let mut pick = vec![];
    let mut skip = vec![];
    for (i, f) in found.iter().enumerate() {
        if f.pane.is_none() || f.ident.session_id.is_none() {
            skip.push((i, "untargetable".to_string()));
            continue;
        }
        match (min_idle, f.idle_secs) {
            (None, _) => pick.push(i),
            // No measurable idle time is never "idle forever".
            (Some(_), None) => skip.push((i, "no measurable idle time".to_string())),
            (Some(d), Some(x)) if x >= d.as_secs() => pick.push(i),
            (Some(_), Some(x)) => skip.push((
                i,
                format!("idle only {}", crate::support::duration::brief(Some(x))),
            )),
        }
    }
    (pick, skip)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_targets() {
        assert_eq!(parse(".").unwrap(), Target::Here);
        assert_eq!(parse("%12").unwrap(), Target::Pane("%12".into()));
        assert!(parse("%1;kill").is_err());
        assert!(parse("%").is_err());
        assert_eq!(
            parse("work:2").unwrap(),
            Target::Window("work".into(), "2".into())
        );
        assert_eq!(
            parse("35C98558-0920-4E29-B81C-9304CA43FCCB").unwrap(),
            Target::SessionId("35c98558-0920-4e29-b81c-9304ca43fccb".into())
        );
        assert_eq!(parse("api").unwrap(), Target::Word("api".into()));
        assert!(parse("a\nb").is_err());
        assert!(parse("").is_err());
    }
}
