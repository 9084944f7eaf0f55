//! `park doctor`'s findings about the journal of live sessions and tmux-resurrect (issue 32): each
//! session lost with its multiplexer (`lost`, fixed by `park rebuild`), a journal that does not
//! read (`journal`), a tmux-resurrect hook of the user's (`resurrect-hook`) and agents in
//! `@resurrect-processes` (`resurrect-processes`). Pure, like the rest of the diagnosis.

use super::{att, info, Facts};
use park_protocol::reports::Finding;

pub(super) fn findings(f: &Facts, out: &mut Vec<Finding>) {
    for l in &f.lost {
        out.push(att(
            "lost",
            &l.entry,
            format!(
                "{} session {} was live in {}:{}.{} \"{}\" ({}) when its multiplexer died (last seen {})",
                l.agent.as_str(),
                l.session_id,
                l.session,
                l.window_index,
                l.pane_index,
                l.window_name,
                l.cwd,
                l.last_seen
            ),
            Some("park rebuild (puts it back in its slot with its flags; --dry-run shows the plan)".into()),
        ));
    }
    if let Some(e) = &f.journal_error {
        out.push(att(
            "journal",
            "journal.json",
            format!("{e}; nothing live is recorded until it reads"),
            Some("move the file aside (`park snapshot` then writes a new one), or use the park that wrote it".into()),
        ));
    }
    resurrect(f, out);
}

/// tmux-resurrect: a hook of the user's keeps park's out; an agent in `@resurrect-processes`
/// comes back as a fresh conversation.
fn resurrect(f: &Facts, out: &mut Vec<Finding>) {
    let value = |k: &str| {
        f.resurrect
            .iter()
            .find(|(o, _)| o == k)
            .map(|(_, v)| v.as_str())
    };
    for (opt, verb) in [
        ("@resurrect-hook-post-save-all", "save"),
        ("@resurrect-hook-post-restore-all", "restore"),
    ] {
        if let Some(v) = value(opt) {
            if !v.contains(&format!("resurrect {verb}")) {
                out.push(info(
                    "resurrect-hook",
                    opt,
                    format!(
                        "{opt} is yours ({v}): park's `park resurrect {verb}` does not run there; append `; park resurrect {verb}` to it"
                    ),
                ));
            }
        }
    }
    if let Some(v) = value("@resurrect-processes") {
        let words: Vec<&str> = v
            .split_whitespace()
            .map(|w| {
                w.trim_matches(|c| c == '\'' || c == '"')
                    .trim_start_matches('~')
            })
            .collect();
        let agents: Vec<&str> = crate::agents::all()
            .iter()
            .flat_map(|k| k.spec().programs.iter().copied())
            .filter(|p| {
                words
                    .iter()
                    .any(|w| w == p || w.starts_with(&format!("{p}->")))
            })
            .collect();
        if !agents.is_empty() {
            out.push(att(
                "resurrect-processes",
                "@resurrect-processes",
                format!(
                    "@resurrect-processes lists {}: tmux-resurrect restarts it in a restored pane as a fresh conversation, and park never types into a pane an agent runs in",
                    agents.join(", ")
                ),
                Some("remove the agents from @resurrect-processes: park's restore hook resumes each exact conversation in its pane".into()),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::diagnose;
    use super::super::tests::{codes, facts};
    use park_protocol::reports::Level;

    #[test]
    fn resurrect_a_users_hook_is_said_and_agents_in_its_processes_need_attention() {
        let mut f = facts(vec![]);
        f.resurrect = vec![
            (
                "@resurrect-hook-post-save-all".into(),
                "PARK_TMUX_SOCKET='/t' 'park' resurrect save".into(),
            ),
            (
                "@resurrect-hook-post-restore-all".into(),
                "my-script".into(),
            ),
            (
                "@resurrect-processes".into(),
                "'~claude' vim \"codex->codex resume\"".into(),
            ),
        ];
        let r = diagnose(&f);
        let c = codes(&r);
        assert!(c.contains(&("resurrect-hook", Level::Info)), "{c:?}");
        assert_eq!(
            c.iter().filter(|x| x.0 == "resurrect-hook").count(),
            1,
            "{c:?}"
        );
        let p = r
            .findings
            .iter()
            .find(|x| x.code == "resurrect-processes")
            .unwrap();
        assert_eq!(p.level, Level::Attention);
        assert!(
            p.message.contains("claude") && p.message.contains("codex"),
            "{}",
            p.message
        );
        f.resurrect = vec![("@resurrect-processes".into(), "vim htop".into())];
        assert!(codes(&diagnose(&f)).is_empty());
    }
}
