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
    if crate::adapters::mux::zellij::parse_handle(t).is_some()
        || crate::adapters::mux::zellij::is_bare_handle(t)
    {
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

/// What a target names: live agents (indexes into `found`) and parked entries.
#[derive(Debug)]
pub struct Named<'a> {
    pub live: Vec<usize>,
    pub parked: Vec<&'a Entry>,
}

impl Named<'_> {
    pub fn is_empty(&self) -> bool {
        self.live.is_empty() && self.parked.is_empty()
    }
}

/// Why a target resolved to nothing usable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Miss {
    /// A title that matches several agents, live or parked (each listed): refuse, never pick.
    Ambiguous(String),
    /// Nothing matches (or `.` outside a pane).
    Nothing(String),
}

impl std::fmt::Display for Miss {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Miss::Ambiguous(s) | Miss::Nothing(s) => f.write_str(s),
        }
    }
}

impl From<Miss> for String {
    fn from(m: Miss) -> String {
        m.to_string()
    }
}

const NOTHING: &str = "names no running agent and no parked session";

const HERE_OUTSIDE: &str =
    "`.` needs a pane: run it inside a tmux pane (TMUX_PANE) or a zellij pane (ZELLIJ_PANE_ID)";

fn live_title_hit(f: &Found, lw: &str) -> bool {
    f.title.to_lowercase().contains(lw)
        || f.pane
            .as_ref()
            .is_some_and(|p| p.title.to_lowercase().contains(lw))
}

/// Resolves a target against the live agents and the parked entries at once. A title that
/// matches more than one of them, live or parked, is refused with every match listed: resolving
/// one set and falling back to the other on any error read an ambiguous `Claude` as the one parked
/// entry it also matched ("already-parked", exit 0, nothing parked). Reasons never repeat the
/// target: callers print it in front.
pub fn resolve<'a>(
    t: &Target,
    found: &[Found],
    entries: &'a [Entry],
    here: Option<&str>,
) -> Result<Named<'a>, Miss> {
    resolve_as(t, found, entries, here, true)
}

/// Every live agent and parked entry a target names, a title shared by several included: for
/// lists whose safe meaning is "each of these" (the autopilot's `exclude`), and for callers that
/// weigh the matches against more than these (a note also looks at archived sessions). Never for
/// a verb that acts on what a title names: that is [`resolve`], which refuses.
pub fn every_match<'a>(
    t: &Target,
    found: &[Found],
    entries: &'a [Entry],
    here: Option<&str>,
) -> Result<Named<'a>, Miss> {
    resolve_as(t, found, entries, here, false)
}

fn resolve_as<'a>(
    t: &Target,
    found: &[Found],
    entries: &'a [Entry],
    here: Option<&str>,
    refuse_ambiguous: bool,
) -> Result<Named<'a>, Miss> {
    let live_where = |keep: &dyn Fn(&Found) -> bool| -> Vec<usize> {
        found
            .iter()
            .enumerate()
            .filter(|(_, f)| keep(f))
            .map(|(i, _)| i)
            .collect()
    };
    let t = &*qualified(t, here)?;
    let named = match t {
        Target::Here => {
            let Some(h) = here else {
                return Err(Miss::Nothing(HERE_OUTSIDE.into()));
            };
            Named {
                live: live_where(&|f| f.pane.as_ref().is_some_and(|p| p.id == h)),
                parked: entries.iter().filter(|e| e.place.pane == h).collect(),
            }
        }
        Target::Pane(p) => Named {
            live: live_where(&|f| f.pane.as_ref().is_some_and(|x| x.id == *p)),
            parked: entries.iter().filter(|e| e.place.pane == *p).collect(),
        },
        Target::Window(s, w) => Named {
            live: live_where(&|f| {
                f.pane.as_ref().is_some_and(|p| {
                    pane_matches_window(&p.session, p.window_index, &p.window_name, s, w)
                })
            }),
            parked: entries
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
        },
        Target::SessionId(id) => Named {
            live: live_where(&|f| f.ident.session_id.as_deref() == Some(id.as_str())),
            parked: entries.iter().filter(|e| e.session_id == *id).collect(),
        },
        Target::Word(w) => {
            // A session name or an entry id is exact; only a title is a search.
            let exact = Named {
                live: live_where(&|f| f.pane.as_ref().is_some_and(|p| p.session == *w)),
                parked: entries
                    .iter()
                    .filter(|e| e.id == *w || e.place.session == *w)
                    .collect(),
            };
            if !exact.is_empty() {
                exact
            } else {
                let lw = w.to_lowercase();
                let hits = Named {
                    live: live_where(&|f| live_title_hit(f, &lw)),
                    // As for live rows: the title shown, or the pane's own title.
                    parked: entries
                        .iter()
                        .filter(|e| {
                            e.place.title.to_lowercase().contains(&lw)
                                || e.place.pane_title.to_lowercase().contains(&lw)
                        })
                        .collect(),
                };
                let n = hits.live.len() + hits.parked.len();
                if refuse_ambiguous && n > 1 && !crate::support::fault::disabled("target-ambiguous")
                {
                    return Err(Miss::Ambiguous(ambiguous(&hits, found)));
                }
                hits
            }
        }
    };
    if named.is_empty() {
        return Err(Miss::Nothing(match t {
            Target::Here => "no parked session and no running agent in this pane".into(),
            _ => NOTHING.into(),
        }));
    }
    Ok(named)
}

fn ambiguous(hits: &Named, found: &[Found]) -> String {
    let mut list: Vec<String> = hits
        .live
        .iter()
        .map(|i| {
            let f = &found[*i];
            format!(
                "{} {:?} (running)",
                f.pane.as_ref().map(|p| p.id.as_str()).unwrap_or("?"),
                f.title
            )
        })
        .collect();
    list.extend(hits.parked.iter().map(|e| {
        let pane = if e.place.pane.is_empty() {
            String::new()
        } else {
            format!(" in {}", e.place.pane)
        };
        format!("{} {:?} (parked{pane})", e.id, e.place.title)
    }));
    format!(
        "the title matches {} agents: {} (name one by its pane or id)",
        list.len(),
        list.join(", ")
    )
}

/// Live agents a target names (indexes into `found`); parked entries are not looked at, so use it
/// only where a parked session cannot be meant (archiving a running transcript, exclusions).
pub fn resolve_live(t: &Target, found: &[Found], here: Option<&str>) -> Result<Vec<usize>, Miss> {
    match resolve(t, found, &[], here) {
        Ok(n) => Ok(n.live),
        Err(Miss::Nothing(why)) if why == NOTHING => {
            Err(Miss::Nothing("no running agent matches".into()))
        }
        Err(m) => Err(m),
    }
}

/// The parked entries a target names, for verbs that act on parked sessions only (forget, wake,
/// show's ledger half). `found` must be the live agents when the target is a title search
/// ([`needs_live`]): a title shared by a running agent is as ambiguous as one shared by two parked
/// sessions. A target that names only running agents says so.
pub fn resolve_parked<'a>(
    t: &Target,
    found: &[Found],
    entries: &'a [Entry],
    here: Option<&str>,
) -> Result<Vec<&'a Entry>, Miss> {
    let n = resolve(t, found, entries, here)?;
    if n.parked.is_empty() {
        return Err(Miss::Nothing(format!(
            "no parked session matches ({} running: park it first)",
            n.live
                .iter()
                .map(|i| found[*i]
                    .pane
                    .as_ref()
                    .map(|p| p.id.as_str())
                    .unwrap_or("?"))
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    Ok(n.parked)
}

/// Whether resolving `t` depends on the live agents too (a title search can be ambiguous across
/// them); other targets name parked entries by exact fields.
pub fn needs_live(t: &Target) -> bool {
    matches!(t, Target::Word(_))
}

/// What a set member names when `park set add` checks it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// How the set keeps it: as given, but a bare zellij `terminal_3` with the session it meant
    /// here (a set is used from other panes, where it would mean another session's pane).
    pub kept: String,
    /// It names a pane, a window, a session or an agent now (else it is kept for later).
    pub now: bool,
}

/// `terminal_3` (zellij's own spelling) is a pane of the session park runs in: the target with
/// that session named, or why it cannot be.
fn qualified<'t>(t: &'t Target, here: Option<&str>) -> Result<std::borrow::Cow<'t, Target>, Miss> {
    use crate::adapters::mux::zellij;
    match t {
        Target::Pane(p) if zellij::is_bare_handle(p) => match zellij::qualify(p, here) {
            Some(full) => Ok(std::borrow::Cow::Owned(Target::Pane(full))),
            None => Err(Miss::Nothing(format!(
                "`{p}` means a pane of the zellij session park runs in: run it inside zellij, or name the session ({p}@<session>)"
            ))),
        },
        _ => Ok(std::borrow::Cow::Borrowed(t)),
    }
}

/// Checks one `park set add` member against the pane map, the live agents and the parked
/// entries. A pane (`%7`, `terminal_3@s`, or a bare `terminal_3` of the session park runs in)
/// must exist now: a pane id that does not exist is a typo or a pane that will never come back
/// under that id. A title that matches several agents is refused, listing them, as every verb
/// refuses it. A session, window or title that names nothing yet may be for later (`now` false).
pub fn set_member(
    raw: &str,
    t: &Target,
    panes: &[crate::adapters::mux::Pane],
    found: &[Found],
    entries: &[Entry],
    here: Option<&str>,
) -> Result<Member, Miss> {
    let t = &*qualified(t, here)?;
    let kept = match t {
        Target::Pane(p) if p != raw => p.clone(),
        _ => raw.to_string(),
    };
    let any_pane = match t {
        Target::Pane(p) => {
            panes.iter().any(|x| x.id == *p) || entries.iter().any(|e| e.place.pane == *p)
        }
        Target::Window(se, w) => panes
            .iter()
            .any(|p| pane_matches_window(&p.session, p.window_index, &p.window_name, se, w)),
        Target::Word(w) => panes.iter().any(|p| p.session == *w),
        _ => true,
    };
    if any_pane {
        return Ok(Member { kept, now: true });
    }
    match resolve(t, found, entries, here) {
        Ok(_) => Ok(Member { kept, now: true }),
        Err(m @ Miss::Ambiguous(_)) => Err(m),
        Err(_) if matches!(t, Target::Pane(_)) => Err(Miss::Nothing(
            "no such pane (not a pane of this multiplexer and no parked session's pane)".into(),
        )),
        Err(_) => Ok(Member { kept, now: false }),
    }
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
        assert_eq!(
            parse("terminal_3").unwrap(),
            Target::Pane("terminal_3".into())
        );
        assert!(parse("a\nb").is_err());
        assert!(parse("").is_err());
    }
}

#[cfg(test)]
mod resolve_tests {
    use super::*;
    use crate::adapters::mux::Pane;
    use park_protocol::Agent;

    fn live(pane: &str, session: &str, title: &str) -> Found {
        let mut f = crate::scan::tests::found_with_tree(vec![(100, 1)]);
        f.title = title.into();
        f.pane = Some(Pane {
            id: pane.into(),
            session: session.into(),
            title: title.into(),
            ..Pane::default()
        });
        f
    }

    fn parked(sfx: &str, pane: &str, title: &str) -> Entry {
        let mut e = Entry::sample(
            Agent::Claude,
            &format!("5b0c6a1e-2f3d-4c5b-9a8e-7d6c5b4a3f{sfx}"),
        );
        e.place.pane = pane.into();
        e.place.title = title.into();
        e
    }

    /// Issue 34 item 1: two live `✳ Claude Code` panes and a parked entry with that title. The
    /// old park resolved the live ones, met "ambiguous", fell back to the entries and answered
    /// "already-parked" (exit 0, nothing parked).
    #[test]
    fn a_title_shared_by_live_and_parked_agents_is_ambiguous_and_lists_them_all() {
        let found = vec![
            live("%1", "work", "✳ Claude Code"),
            live("%2", "work", "✳ Claude Code"),
        ];
        let entries = vec![parked("01", "%3", "✳ Claude Code")];
        for word in ["Claude", "Claude Code", "code"] {
            let t = parse(word).unwrap();
            match resolve(&t, &found, &entries, None) {
                Err(Miss::Ambiguous(why)) => {
                    for id in ["%1", "%2", entries[0].id.as_str()] {
                        assert!(why.contains(id), "{word}: {why}");
                    }
                    assert!(why.contains("3 agents"), "{why}");
                }
                other => panic!("{word}: {other:?}"),
            }
        }
        // One running and one parked is as ambiguous: neither verb may pick.
        let t = parse("Claude").unwrap();
        assert!(matches!(
            resolve(&t, &found[..1], &entries, None),
            Err(Miss::Ambiguous(_))
        ));
        assert!(matches!(
            resolve_parked(&t, &found[..1], &entries, None),
            Err(Miss::Ambiguous(_))
        ));
        // The same title alone on one side still resolves.
        assert_eq!(resolve(&t, &found[..1], &[], None).unwrap().live, vec![0]);
        assert_eq!(resolve(&t, &[], &entries, None).unwrap().parked.len(), 1);
        // Exact names are not searches: a session name takes every pane of it, live and parked.
        let mut e = entries.clone();
        e[0].place.session = "work".into();
        let n = resolve(&parse("work").unwrap(), &found, &e, None).unwrap();
        assert_eq!((n.live.len(), n.parked.len()), (2, 1));
        // An entry id names that entry even where its title is shared.
        let n = resolve(&parse(&e[0].id).unwrap(), &found, &e, None).unwrap();
        assert_eq!((n.live.len(), n.parked.len()), (0, 1));
    }

    /// Issue 35 item 6: `terminal_3`, as `zellij action list-panes` prints it, means a pane of the
    /// session park runs in.
    #[test]
    fn a_bare_zellij_pane_is_one_of_this_session() {
        let found = vec![
            live("terminal_3@main", "main", "a"),
            live("terminal_3@other", "other", "b"),
        ];
        let t = parse("terminal_3").unwrap();
        let n = resolve(&t, &found, &[], Some("terminal_0@main")).unwrap();
        assert_eq!(n.live, vec![0]);
        let n = resolve(&t, &found, &[], Some("terminal_9@other")).unwrap();
        assert_eq!(n.live, vec![1]);
        for here in [None, Some("%4")] {
            let Err(Miss::Nothing(why)) = resolve(&t, &found, &[], here) else {
                panic!("{here:?}")
            };
            assert!(why.contains("terminal_3@<session>"), "{why}");
        }
    }

    #[test]
    fn misses_never_repeat_the_target_and_say_what_is_running() {
        let found = vec![live("%1", "work", "api")];
        let t = parse("%2").unwrap();
        let Err(Miss::Nothing(why)) = resolve(&t, &found, &[], None) else {
            panic!()
        };
        assert!(!why.contains("%2"), "{why}");
        let t = parse("%1").unwrap();
        let Err(Miss::Nothing(why)) = resolve_parked(&t, &found, &[], None) else {
            panic!()
        };
        assert!(why.contains("1 running") && why.contains("%1"), "{why}");
        assert!(matches!(
            resolve_live(&parse(".").unwrap(), &found, None),
            Err(Miss::Nothing(w)) if w.contains("inside a tmux pane")
        ));
    }
}

#[cfg(test)]
mod set_member_tests {
    use super::*;
    use crate::adapters::mux::Pane;

    fn pane(id: &str, session: &str) -> Pane {
        Pane {
            id: id.into(),
            session: session.into(),
            ..Pane::default()
        }
    }

    fn agent(id: &str, title: &str) -> Found {
        let mut f = crate::scan::tests::found_with_tree(vec![(100, 1)]);
        f.title = title.into();
        f.pane = Some(Pane {
            title: title.into(),
            ..pane(id, "main")
        });
        f
    }

    fn check(
        raw: &str,
        panes: &[Pane],
        found: &[Found],
        here: Option<&str>,
    ) -> Result<Member, Miss> {
        set_member(raw, &parse(raw).unwrap(), panes, found, &[], here)
    }

    /// Issue 34 item 1 for `set add`: a title two agents share was kept "for later" (exit 0); it
    /// is refused with both listed, as every verb refuses it.
    #[test]
    fn a_shared_title_is_refused_and_lists_the_matches() {
        let panes = [pane("%1", "main"), pane("%2", "main")];
        let found = [agent("%1", "✳ Claude Code"), agent("%2", "✳ Claude Code")];
        match check("Claude", &panes, &found, None) {
            Err(Miss::Ambiguous(why)) => {
                assert!(why.contains("%1") && why.contains("%2"), "{why}")
            }
            other => panic!("{other:?}"),
        }
        // One match names it now; no match is kept for later; a missing pane is refused.
        assert!(check("Claude", &panes, &found[..1], None).unwrap().now);
        assert!(!check("nothing-yet", &panes, &found, None).unwrap().now);
        assert!(matches!(
            check("%9", &panes, &found, None),
            Err(Miss::Nothing(_))
        ));
    }

    /// Issue 34 item 13 in zellij: `terminal_3` (zellij's own spelling, a pane of this session)
    /// was refused as "no such pane" because it was never qualified with the session park runs in.
    #[test]
    fn a_bare_zellij_pane_of_this_session_qualifies() {
        let panes = [
            pane("terminal_3@main", "main"),
            pane("terminal_0@main", "main"),
        ];
        let m = check("terminal_3", &panes, &[], Some("terminal_0@main")).unwrap();
        assert_eq!(
            m,
            Member {
                kept: "terminal_3@main".into(),
                now: true
            }
        );
        // Not a pane of this session, or not run inside zellij: refused, saying why.
        assert!(matches!(
            check("terminal_7", &panes, &[], Some("terminal_0@main")),
            Err(Miss::Nothing(_))
        ));
        let Err(Miss::Nothing(why)) = check("terminal_3", &panes, &[], None) else {
            panic!()
        };
        assert!(why.contains("terminal_3@<session>"), "{why}");
    }
}
