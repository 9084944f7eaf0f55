//! Kilo CLI (`@kilocode/cli` 7.7): a fork of OpenCode that renames it, so it is OpenCode's
//! [`Kind`] with Kilo's [`Flavor`] and OpenCode's [`Spec`] but for its names (measured on 7.7.7):
//! `kilo` is a node script that runs the native `.kilo` beside it (the session's process); data in
//! `$XDG_DATA_HOME/kilo` (database `kilo.db`, `KILO_DB` overrides), config and plugins in
//! `$XDG_CONFIG_HOME/kilo`; the terminal title is `Kilo CLI | <session title>` in a titled session
//! and `Kilo CLI` on the home screen (and before the first title); resume `kilo -s <id>`.
//! Everything else — identity, plugin, state, archive — is OpenCode's.

use super::opencode::{identify, integrate::Plugin, Flavor, Kind, SPEC_OF_OPENCODE};
use super::spec::{ConfigDir, Identify, Spec};
use super::Agent;

/// Kilo CLI, as data: OpenCode's spec with every field bound to its names or its flavor its own.
pub static SPEC: Spec = Spec {
    agent: Agent::Kilo,
    name: "Kilo",
    release: super::release::Release {
        name: "Kilo CLI",
        packages: &["@kilocode/cli"],
        tested: ("7.7.7", "7.7.7"),
    },
    programs: &["kilo", "kilocode", ".kilo"],
    config: ConfigDir::xdg_data("kilo", ".local/share/kilo"),
    identify: Identify::Pane(|a, title, _screen, platform| identify(&FLAVOR, a, title, platform)),
    transcripts: |dir| FLAVOR.sessions(dir),
    integration: Some(&PLUGIN),
    ..SPEC_OF_OPENCODE
};

pub static FLAVOR: Flavor = Flavor {
    spec: &SPEC,
    dir: "kilo",
    db_file: "kilo.db",
    db_var: "KILO_DB",
    title_prefix: "Kilo CLI | ",
    home_title: "Kilo CLI",
    title_var: "KILO_DISABLE_TERMINAL_TITLE",
};

static PLUGIN: Plugin = Plugin(&FLAVOR);

/// Kilo behind the [`super::AgentKind`] dispatch.
pub static KILO: Kind = Kind { flavor: &FLAVOR };
#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapters::platform::proctree::ProcTable;
    use crate::adapters::platform::ProcInfo;
    use crate::agents::classify;
    use std::path::PathBuf;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn kilo_is_its_node_wrapper_and_native_child_with_its_own_dirs() {
        let wrapper = v(&[
            "node",
            "/n/.bin/kilo",
            "-s",
            "ses_db8431901ffeP3ONwqWtsVIsTa",
        ]);
        assert_eq!(classify(&wrapper), Some((Agent::Kilo, 1)));
        assert_eq!(
            classify(&v(&["/n/@kilocode/cli/bin/.kilo", "-s", "x"])),
            Some((Agent::Kilo, 0))
        );
        assert_eq!(classify(&v(&["node", "/n/.bin/kilo", "daemon"])), None);
        assert_eq!(classify(&v(&["/x/opencode"])), Some((Agent::Opencode, 0)));
        let p = |pid: u32, ppid: u32, argv: &[&str]| ProcInfo {
            pid,
            ppid,
            pgid: 70,
            sid: 1,
            tpgid: -1,
            start_ticks: 1,
            state: 'S',
            cpu_ticks: 0,
            rss_bytes: 1,
            argv: v(argv),
            comm: String::new(),
        };
        let table = ProcTable::new(vec![
            p(70, 1, &["node", "/n/.bin/kilo"]),
            p(77, 70, &["/n/@kilocode/cli/bin/.kilo"]),
            // A copy of itself it runs for a moment during a turn (seen in CI): not the session.
            p(79, 77, &["/n/@kilocode/cli/bin/.kilo"]),
        ]);
        assert_eq!(
            SPEC.main_pid(&table, 70),
            77,
            "the native child runs the session, not its worker"
        );
        let env = vec![("HOME".to_string(), "/h".to_string())];
        assert_eq!(
            SPEC.config.dir(&env),
            Some(PathBuf::from("/h/.local/share/kilo"))
        );
        assert_eq!(
            FLAVOR.db_path(&env),
            Some(PathBuf::from("/h/.local/share/kilo/kilo.db"))
        );
        assert_eq!(
            super::super::opencode::integrate::plugin_file(&FLAVOR, &env),
            Some(PathBuf::from("/h/.config/kilo/plugin/park.js"))
        );
        // What its spec takes from OpenCode's must not be bound to OpenCode's flavor.
        assert_eq!(
            SPEC.integration.and_then(|i| i.file(&env)),
            Some(PathBuf::from("/h/.config/kilo/plugin/park.js")),
            "Kilo's own plugin"
        );
        assert_eq!(
            SPEC.resume_argv("kilo", "ses_x", &[]),
            v(&["kilo", "-s", "ses_x"])
        );
    }
}
