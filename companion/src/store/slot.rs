//! Which pane is a parked entry's slot, by evidence — never by a pane handle alone.
//!
//! A pane handle does not survive its server: tmux reuses `%N` after a restart, and zellij
//! renumbers every pane `0..n-1` in layout order when it resurrects a session, so a parked pane's
//! old id can belong to another pane. What does survive a zellij resurrection is the pane's name
//! (`rename-pane`), its tab and its cwd. park therefore names a parked pane `❄ <title> · <tag>`,
//! where the tag is a short hash of the entry id ([`tag`]): the mark is the entry's own.
//!
//! Contract (all pure):
//! * [`marks`]: the pane carries this entry's mark — its tagged title, or (entries parked before
//!   the tag existed) the untagged `❄ <title>` in the recorded tab and cwd.
//! * [`find`]: the recorded pane when it still is the slot ([`is_parked_slot`]),
//!   else the one pane of the recorded multiplexer session that carries the mark, in the recorded
//!   tab name and cwd; zero or several such panes is [`Slot::Missing`] with the reason, never a
//!   guess. An untagged mark shared with another parked entry is never matched.

use crate::adapters::mux::Pane;
use crate::model::entry::Entry;

/// Five Crockford base-32 characters of an FNV-1a hash of the entry id: stable across park versions and
/// machines, short enough for a pane title.
pub fn tag(entry_id: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in entry_id.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    const ALPHABET: &[u8; 32] = b"0123456789abcdefghjkmnpqrstvwxyz";
    (0..5)
        .map(|i| ALPHABET[((h >> (i * 5)) & 31) as usize] as char)
        .collect()
}

/// The recorded title without the agent's own leading spinner or marks (`✳ `, `⠂ `), and without
/// park's own mark: a pane whose `❄ … · tag` name outlived an unpark (a resurrected zellij pane's
/// name comes from its layout, which undoing a rename does not change) recorded that name as its
/// title, and parking it again must not stack a second tag on it.
fn bare_title(e: &Entry) -> &str {
    let mut t = e
        .place
        .title
        .trim_start_matches(|c: char| !c.is_alphanumeric())
        .trim_end();
    let marked = e.place.title.trim_start().starts_with('❄');
    while let Some((rest, tag)) = t.rsplit_once(" · ").filter(|_| marked) {
        let ours = tag.len() == 5
            && tag
                .bytes()
                .all(|b| b"0123456789abcdefghjkmnpqrstvwxyz".contains(&b));
        if !ours {
            break;
        }
        t = rest.trim_end();
    }
    t
}

/// The title park pins on a parked pane: `❄ <title> · <tag>`.
pub fn pill_title(e: &Entry) -> String {
    titled(bare_title(e), e)
}

fn titled(t: &str, e: &Entry) -> String {
    if t.is_empty() {
        format!("❄ {}", tag(&e.id))
    } else {
        format!("❄ {t} · {}", tag(&e.id))
    }
}

/// The mark an older park pinned when the recorded title already carried a mark (tags stacked).
fn stacked_title(e: &Entry) -> String {
    titled(
        e.place
            .title
            .trim_start_matches(|c: char| !c.is_alphanumeric())
            .trim_end(),
        e,
    )
}

/// The title park pinned before the tag existed.
fn untagged_title(e: &Entry) -> String {
    format!("❄ {}", bare_title(e))
}

/// Same tab and cwd as recorded: corroboration for a mark that is not the entry's alone.
fn same_place(p: &Pane, e: &Entry) -> bool {
    p.window_name == e.place.window_name && p.cwd == e.cwd
}

/// The pane carries this entry's mark (see the module contract). `others` are the other parked
/// entries: an untagged mark one of them shares is nobody's.
pub fn marks(p: &Pane, e: &Entry, others: &[Entry]) -> bool {
    if p.title == pill_title(e) || p.title == stacked_title(e) {
        return true;
    }
    let old = untagged_title(e);
    p.title == old
        && same_place(p, e)
        && !others.iter().any(|o| {
            o.id != e.id
                && o.place.server == e.place.server
                && untagged_title(o) == old
                && same_place(p, o)
        })
}

/// The pane still is this parked session's pane (pure): park's placeholder for it runs there, the
/// pane's own process is the one recorded at park time (pid and start), or park's pill is set on
/// it (tmux user option, or under zellij the entry's own `❄ … · <tag>` title, [`marks`]).
/// A pane with the same handle but none of these is another pane: tmux reuses `%N` after a server
/// restart, and zellij renumbers its panes when it resurrects a session. `others`: the other
/// parked entries.
pub fn is_parked_slot(
    p: &crate::adapters::mux::Pane,
    e: &Entry,
    others: &[Entry],
    pane_start: Option<u64>,
    placeholder: bool,
) -> bool {
    let (pid, start) = e.place.pane_proc;
    let same_process = pid != 0 && start != 0 && p.pid == pid && pane_start == Some(start);
    placeholder
        || same_process
        || p.pill.starts_with('❄')
        || (p.pill.is_empty()
            && crate::adapters::mux::is_zellij_server(&p.server)
            && marks(p, e, others))
}

/// Where a parked entry's slot is now.
#[derive(Debug, Clone, PartialEq)]
pub enum Slot {
    /// The recorded pane still is the slot.
    Here(Pane),
    /// Another pane carries the entry's mark (the multiplexer renumbered its panes).
    Moved(Pane),
    /// No pane can be shown to be the slot: why.
    Missing(String),
}

/// Another parked entry parked in the same pane later (a fresh agent started in a parked slot,
/// then parked too): the pane is that one's slot now — its mark, its prefill, its placeholder —
/// and the earlier entry resumes elsewhere.
pub fn newer_in_pane<'a>(e: &Entry, others: &'a [Entry]) -> Option<&'a Entry> {
    others.iter().find(|o| {
        o.id != e.id
            && o.place.pane == e.place.pane
            && o.place.server == e.place.server
            && later(&o.parked_at, &e.parked_at)
    })
}

/// RFC 3339 times compared as times (their text differs in fractional digits).
fn later(a: &str, b: &str) -> bool {
    match (a.parse::<jiff::Timestamp>(), b.parse::<jiff::Timestamp>()) {
        (Ok(x), Ok(y)) => x > y,
        _ => a > b,
    }
}

/// Finds the entry's slot among `panes` (see the module contract). `is_slot` says whether the
/// recorded pane still is the slot ([`is_parked_slot`] with the process
/// table's facts); `others` are the other parked entries.
pub fn find(e: &Entry, panes: &[Pane], others: &[Entry], is_slot: impl Fn(&Pane) -> bool) -> Slot {
    if let Some(o) = newer_in_pane(e, others) {
        return Slot::Missing(format!(
            "its pane {} holds a session parked after it ({}); it resumes in a new pane",
            e.place.pane, o.id
        ));
    }
    if let Some(p) = panes
        .iter()
        .find(|p| p.id == e.place.pane && p.server == e.place.server)
    {
        // The mutation puts back the old exemption: any zellij pane with the recorded id.
        if is_slot(p)
            || (crate::adapters::mux::is_zellij_server(&p.server)
                && crate::support::fault::disabled("zellij-slot-evidence"))
        {
            return Slot::Here(p.clone());
        }
    }
    let found: Vec<&Pane> = panes
        .iter()
        .filter(|p| {
            // A held pane (zellij resurrects a pane's command suspended) is still the slot:
            // unpark turns it into a shell first, never running what it holds.
            p.server == e.place.server && p.session == e.place.session && marks(p, e, others)
        })
        .collect();
    let mark = pill_title(e);
    // A held pane has no process to read a cwd from: unknown, not a contradiction, for the
    // entry's own tagged mark (an untagged one needs the cwd, see `marks`).
    let placed = |p: &Pane| {
        p.window_name == e.place.window_name
            && (p.cwd == e.cwd || (p.cwd.is_empty() && p.title == pill_title(e)))
    };
    match found.as_slice() {
        [one] if placed(one) => Slot::Moved((*one).clone()),
        [one] => Slot::Missing(format!(
            "pane {} carries its mark `{mark}` but is in tab `{}` at {} (recorded: tab `{}` at {}); \
             not guessing",
            one.id, one.window_name, one.cwd, e.place.window_name, e.cwd
        )),
        [] => Slot::Missing(format!(
            "no pane of session `{}` is its slot (none carries `{mark}`)",
            e.place.session
        )),
        many => Slot::Missing(format!(
            "{} panes of session `{}` carry its mark ({}); not guessing between them",
            many.len(),
            e.place.session,
            many.iter().map(|p| p.id.as_str()).collect::<Vec<_>>().join(", ")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use park_protocol::Agent;

    fn zentry(sid: &str, pane: &str, title: &str, tab: &str, cwd: &str) -> Entry {
        let mut e = Entry::sample(Agent::Claude, sid);
        e.place.kind = "zellij".into();
        e.place.server = "zellij:/z".into();
        e.place.pane = pane.into();
        e.place.session = "zl".into();
        e.place.window_name = tab.into();
        e.place.title = title.into();
        e.cwd = cwd.into();
        e
    }

    fn zpane(id: &str, title: &str, tab: &str, cwd: &str) -> Pane {
        Pane {
            id: id.into(),
            title: title.into(),
            window_name: tab.into(),
            cwd: cwd.into(),
            session: "zl".into(),
            server: "zellij:/z".into(),
            ..Pane::default()
        }
    }

    #[test]
    fn the_tag_is_stable_short_and_differs_between_entries() {
        assert_eq!(tag("claude-a"), tag("claude-a"));
        assert_eq!(tag("claude-a").len(), 5);
        assert_ne!(tag("claude-a"), tag("claude-b"));
        let e = zentry("s1", "terminal_2@zl", "✳ Fix login", "work", "/w");
        assert_eq!(pill_title(&e), format!("❄ Fix login · {}", tag(&e.id)));
        let blank = zentry("s1", "terminal_2@zl", "✳ ", "work", "/w");
        assert_eq!(pill_title(&blank), format!("❄ {}", tag(&blank.id)));
        // Issue 35 item 2: a title that still carries a mark (one outlived an unpark) never
        // stacks a second tag (`❄ Claude Code · tkfy0 · tkfy0`); a title ending in other words
        // after ` · ` keeps them.
        let old = zentry("s0", "terminal_2@zl", "✳ Claude Code", "work", "/w");
        for marked in [
            pill_title(&old),
            format!("{} · {}", pill_title(&old), tag(&old.id)),
        ] {
            let again = zentry("s1", "terminal_2@zl", &marked, "work", "/w");
            assert_eq!(
                pill_title(&again),
                format!("❄ Claude Code · {}", tag(&again.id))
            );
            // A pane an older park named with the stacked tag is still this entry's mark.
            let p = zpane("terminal_2@zl", &stacked_title(&again), "work", "/w");
            assert!(marks(&p, &again, &[]));
        }
        for t in ["api · web", "fix · tests"] {
            let dotted = zentry("s1", "terminal_2@zl", &format!("✳ {t}"), "work", "/w");
            assert_eq!(pill_title(&dotted), format!("❄ {t} · {}", tag(&dotted.id)));
        }
    }

    /// Issue 35 item 3: a fresh agent started in a parked slot and parked too owns the pane; the
    /// earlier entry resumes elsewhere, never into the later one's slot (the pane's shell is the
    /// one both recorded, so the process evidence alone said "here" for both).
    #[test]
    fn a_pane_a_later_park_took_over_is_the_later_entrys() {
        let mut old = zentry("s-old", "terminal_0@zl", "claude", "work", "/w");
        old.parked_at = "2026-12-06T08:00:00Z".into();
        let mut new = zentry("s-new", "terminal_0@zl", "claude", "work", "/w");
        new.parked_at = "2026-12-06T08:05:00Z".into();
        let panes = vec![zpane("terminal_0@zl", &pill_title(&new), "work", "/w")];
        let all = [old.clone(), new.clone()];
        let others_of =
            |e: &Entry| -> Vec<Entry> { all.iter().filter(|x| x.id != e.id).cloned().collect() };
        // The shell is the same process for both: the evidence every pane check would accept.
        match find(&old, &panes, &others_of(&old), |_| true) {
            Slot::Missing(why) => assert!(why.contains(&new.id), "{why}"),
            x => panic!("{x:?}"),
        }
        assert!(matches!(
            find(&new, &panes, &others_of(&new), |_| true),
            Slot::Here(_)
        ));
    }

    /// The resurrection bug: pane ids renumbered, the old id now names another ❄ pane.
    #[test]
    fn a_renumbered_pane_is_found_by_its_mark_and_the_stale_id_is_never_used() {
        let a = zentry("s-a", "terminal_2@zl", "claude", "work", "/w");
        let b = zentry("s-b", "terminal_1@zl", "claude", "work", "/w");
        let panes = vec![
            zpane("terminal_0@zl", &pill_title(&a), "work", "/w"),
            zpane("terminal_1@zl", "Pane #1", "work", "/w"),
            zpane("terminal_2@zl", &pill_title(&b), "work", "/w"),
        ];
        let others = vec![a.clone(), b.clone()];
        let is_slot = |p: &Pane, e: &Entry| marks(p, e, &others);
        match find(&a, &panes, &others, |p| is_slot(p, &a)) {
            Slot::Moved(p) => assert_eq!(p.id, "terminal_0@zl"),
            x => panic!("{x:?}"),
        }
        match find(&b, &panes, &others, |p| is_slot(p, &b)) {
            Slot::Moved(p) => assert_eq!(p.id, "terminal_2@zl"),
            x => panic!("{x:?}"),
        }
    }

    #[test]
    fn twin_untagged_marks_are_nobodys_and_two_candidates_are_never_guessed() {
        // Parked before the tag: both titled `❄ claude` in the same tab and cwd.
        let a = zentry("s-a", "terminal_2@zl", "claude", "work", "/w");
        let b = zentry("s-b", "terminal_3@zl", "claude", "work", "/w");
        let panes = vec![
            zpane("terminal_0@zl", "❄ claude", "work", "/w"),
            zpane("terminal_1@zl", "❄ claude", "work", "/w"),
        ];
        let others = vec![a.clone(), b.clone()];
        assert!(matches!(
            find(&a, &panes, &others, |_| false),
            Slot::Missing(_)
        ));
        // One untagged entry alone: its mark in its tab and cwd is enough.
        let only = vec![a.clone()];
        match find(&a, &panes[..1], &only, |_| false) {
            Slot::Moved(p) => assert_eq!(p.id, "terminal_0@zl"),
            x => panic!("{x:?}"),
        }
        // Two panes carrying the same tagged mark (a copied title): refused, both named.
        let twins = vec![
            zpane("terminal_0@zl", &pill_title(&a), "work", "/w"),
            zpane("terminal_1@zl", &pill_title(&a), "work", "/w"),
        ];
        match find(&a, &twins, &only, |_| false) {
            Slot::Missing(why) => assert!(why.contains("2 panes"), "{why}"),
            x => panic!("{x:?}"),
        }
    }

    #[test]
    fn a_mark_in_another_tab_or_cwd_or_session_is_not_guessed() {
        let a = zentry("s-a", "terminal_2@zl", "claude", "work", "/w");
        let only = vec![a.clone()];
        let moved_tab = vec![zpane("terminal_0@zl", &pill_title(&a), "other", "/w")];
        match find(&a, &moved_tab, &only, |_| false) {
            Slot::Missing(why) => assert!(why.contains("tab `other`"), "{why}"),
            x => panic!("{x:?}"),
        }
        let moved_cwd = vec![zpane("terminal_0@zl", &pill_title(&a), "work", "/x")];
        assert!(matches!(
            find(&a, &moved_cwd, &only, |_| false),
            Slot::Missing(_)
        ));
        let mut other_session = zpane("terminal_0@zl2", &pill_title(&a), "work", "/w");
        other_session.session = "zl2".into();
        assert!(matches!(
            find(&a, &[other_session], &only, |_| false),
            Slot::Missing(_)
        ));
        // A held pane with the mark is the slot (unpark revives it before typing), also when
        // zellij knows no cwd for it (no process) — but not with an untagged mark.
        let mut held = zpane("terminal_0@zl", &pill_title(&a), "work", "");
        held.dead = true;
        assert!(matches!(
            find(&a, &[held.clone()], &only, |_| false),
            Slot::Moved(_)
        ));
        held.title = "❄ claude".into();
        assert!(matches!(
            find(&a, &[held], &only, |_| false),
            Slot::Missing(_)
        ));
    }

    #[test]
    fn the_recorded_pane_wins_when_it_still_is_the_slot() {
        let a = zentry("s-a", "terminal_2@zl", "claude", "work", "/w");
        let panes = vec![
            zpane("terminal_2@zl", "anything", "work", "/w"),
            zpane("terminal_5@zl", &pill_title(&a), "work", "/w"),
        ];
        match find(&a, &panes, &[], |p| p.id == "terminal_2@zl") {
            Slot::Here(p) => assert_eq!(p.id, "terminal_2@zl"),
            x => panic!("{x:?}"),
        }
    }
}
