//! tmux-resurrect's save → crash → restore cycle through park's hooks, in real tmux.
//!
//! The project cannot vendor tmux-resurrect, so [`Resurrect`] does for park what its scripts do
//! (tmux-resurrect cff343c, `scripts/save.sh`, `restore.sh`, `helpers.sh`, read for this):
//! * save: write `tmux_resurrect_<timestamp>.txt` in `${XDG_DATA_HOME:-~/.local/share}/tmux/
//!   resurrect` (one `pane` line per pane: session, window number, active, flags, pane index,
//!   title, dir, …), point the `last` symlink at it (`ln -fs <basename> last`), then
//!   `execute_hook "post-save-all"`, which is `eval "$hook"` of `@resurrect-hook-post-save-all`;
//! * restore (`main`): recreate every saved session, window (at its number) and pane (in its
//!   index order, each `-c <dir>`), start `@resurrect-processes` in their panes, then
//!   `execute_hook "post-restore-all"`.
//!   The hook runs in the server's environment, from a process that is not in a pane (no
//!   `TMUX_PANE`), which is why park writes the socket into the hook it sets.

use crate::common::*;
use crate::rebuild::{crash, login_profile, split_shell, Fake};
use park_e2e::*;
use park_protocol::RowState;
use serde_json::Value;
use std::path::PathBuf;

/// One saved pane, as resurrect's `dump_panes` writes it.
#[derive(Debug, Clone)]
struct SavedPane {
    session: String,
    window: u32,
    window_name: String,
    pane_index: u32,
    dir: String,
}

struct Resurrect<'a> {
    sb: &'a Sandbox,
}

impl Resurrect<'_> {
    fn dir(&self) -> PathBuf {
        self.sb.home.join(".local/share/tmux/resurrect")
    }

    /// Runs a resurrect hook the way `execute_hook` does: `eval "$hook"` in bash, with the
    /// server's environment (the sandbox's), outside any pane.
    fn hook(&self, kind: &str) -> std::process::Output {
        let hook = self
            .sb
            .tmux(&["show-option", "-gqv", &format!("@resurrect-hook-{kind}")])
            .unwrap();
        let hook = hook.trim_end_matches('\n');
        assert!(!hook.is_empty(), "@resurrect-hook-{kind} is not set");
        let o = std::process::Command::new("bash")
            .args(["-c", "eval \"$HOOK\""])
            .env_clear()
            .envs(self.sb.base_env())
            .env("HOOK", hook)
            .output()
            .unwrap();
        eprintln!(
            "resurrect hook {kind}: {hook}\n{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        o
    }

    /// save.sh: the save file, `last`, then the post-save-all hook.
    fn save(&self) -> Vec<SavedPane> {
        let d = '\t';
        let fmt = format!(
            "pane{d}#{{session_name}}{d}#{{window_index}}{d}#{{window_active}}{d}:#{{window_flags}}{d}#{{pane_index}}{d}#{{pane_title}}{d}:#{{pane_current_path}}{d}#{{pane_active}}{d}#{{pane_current_command}}{d}#{{pane_pid}}{d}#{{history_size}}{d}#{{window_name}}"
        );
        let out = self.sb.tmux(&["list-panes", "-a", "-F", &fmt]).unwrap();
        let panes: Vec<SavedPane> = out
            .lines()
            .map(|l| {
                let f: Vec<&str> = l.split(d).collect();
                SavedPane {
                    session: f[1].into(),
                    window: f[2].parse().unwrap(),
                    pane_index: f[5].parse().unwrap(),
                    dir: f[7].trim_start_matches(':').into(),
                    window_name: f[12].into(),
                }
            })
            .collect();
        std::fs::create_dir_all(self.dir()).unwrap();
        let name = "tmux_resurrect_20261206T231500.txt";
        let body: String = out
            .lines()
            .map(|l| l.rsplit_once(d).map(|x| x.0).unwrap_or(l).to_string() + "\n")
            .collect();
        std::fs::write(self.dir().join(name), body).unwrap();
        let last = self.dir().join("last");
        let _ = std::fs::remove_file(&last);
        std::os::unix::fs::symlink(name, &last).unwrap();
        let o = self.hook("post-save-all");
        assert!(o.status.success(), "the save hook failed");
        panes
    }

    /// restore.sh on a fresh server: every saved pane at its session, window number and index,
    /// in its dir; `fresh` panes get a fresh `claude` (as `@resurrect-processes 'claude'` would
    /// start); then park's plugin loads (TPM, before continuum's restore) and the hook runs.
    fn restore(&self, saved: &[SavedPane], fresh: &[(String, u32, u32)]) -> Vec<String> {
        let ps1 = format!("PS1={SHELL_PROMPT}");
        let mut made: Vec<String> = vec![];
        for p in saved {
            let target = format!("{}:{}", p.session, p.window);
            let have_session = self
                .sb
                .tmux(&["has-session", "-t", &format!("={}", p.session)])
                .is_ok();
            let have_window = have_session
                && self
                    .sb
                    .tmux(&[
                        "list-windows",
                        "-t",
                        &format!("={}", p.session),
                        "-F",
                        "#{window_index}",
                    ])
                    .unwrap()
                    .lines()
                    .any(|w| w == p.window.to_string());
            let id = if !have_session {
                let o = self
                    .sb
                    .tmux_command()
                    .envs(self.sb.base_env())
                    .args([
                        "new-session",
                        "-d",
                        "-s",
                        &p.session,
                        "-n",
                        &p.window_name,
                        "-x",
                        "200",
                        "-y",
                        "50",
                        "-c",
                        &p.dir,
                        "-P",
                        "-F",
                        "#{pane_id}",
                        "-e",
                        &ps1,
                        "bash",
                        "--norc",
                        "--noprofile",
                    ])
                    .output()
                    .unwrap();
                assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
                // new-session numbers its first window from base-index: move it to its number.
                let id = String::from_utf8_lossy(&o.stdout).trim().to_string();
                let at = self
                    .sb
                    .tmux(&["display-message", "-p", "-t", &id, "#{window_index}"])
                    .unwrap();
                if at.trim() != p.window.to_string() {
                    self.sb
                        .tmux(&[
                            "move-window",
                            "-s",
                            &format!("={}:{}", p.session, at.trim()),
                            "-t",
                            &target,
                        ])
                        .unwrap();
                }
                id
            } else if !have_window {
                self.sb
                    .tmux(&[
                        "new-window",
                        "-d",
                        "-t",
                        &target,
                        "-n",
                        &p.window_name,
                        "-c",
                        &p.dir,
                        "-P",
                        "-F",
                        "#{pane_id}",
                        "-e",
                        &ps1,
                        "bash",
                        "--norc",
                        "--noprofile",
                    ])
                    .unwrap()
                    .trim()
                    .to_string()
            } else {
                self.sb
                    .tmux(&[
                        "split-window",
                        "-d",
                        "-t",
                        &target,
                        "-c",
                        &p.dir,
                        "-P",
                        "-F",
                        "#{pane_id}",
                        "-e",
                        &ps1,
                        "bash",
                        "--norc",
                        "--noprofile",
                    ])
                    .unwrap()
                    .trim()
                    .to_string()
            };
            self.sb.wait_for(&id, r"park-test\$", SECS(15)).unwrap();
            if fresh.contains(&(p.session.clone(), p.window, p.pane_index)) {
                self.sb.type_line(&id, "claude");
                self.sb.wait_for(&id, CLAUDE_READY, SECS(15)).unwrap();
            }
            made.push(id);
        }
        load_park_plugin(self.sb);
        let o = self.hook("post-restore-all");
        assert!(!o.stdout.is_empty() || !o.stderr.is_empty() || o.status.success());
        made
    }
}

fn windows(sb: &Sandbox) -> Vec<String> {
    let mut w: Vec<String> = sb
        .tmux(&[
            "list-windows",
            "-a",
            "-F",
            "#{session_name}:#{window_index} #{window_name}",
        ])
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    w.sort();
    w
}

fn pane_at(sb: &Sandbox, at: &str) -> String {
    sb.tmux(&[
        "display-message",
        "-p",
        "-t",
        &format!("={at}"),
        "#{pane_id}",
    ])
    .unwrap()
    .trim()
    .to_string()
}

/// Two sessions in one cwd (one window, two panes) and one more in a second window: saved by
/// resurrect (park's hook journals and keeps a copy), the server and every agent killed, restored
/// by resurrect with a fresh `claude` started in one pane (`@resurrect-processes`): park's restore
/// hook resumes each exact session in the pane resurrect restored for it, makes no window, and
/// never types into the pane that runs a fresh agent.
#[test]
fn the_resurrect_hooks_bring_each_session_back_into_its_restored_pane() {
    let f = Fake::new();
    let sb = &f.sb;
    login_profile(sb);
    let proj = sb.project_dir("proj");
    let p0 = sb.new_shell_window("w", "pair", &proj, &[] as &[(&str, &str)]);
    let p1 = split_shell(sb, &p0, &proj, &[], &["-h"]);
    let p2 = sb.new_shell_window(
        "w",
        "other",
        &sb.project_dir("other"),
        &[] as &[(&str, &str)],
    );
    let p3 = sb.new_shell_window(
        "w",
        "third",
        &sb.project_dir("third"),
        &[] as &[(&str, &str)],
    );
    let sids: Vec<String> = [&p0, &p1, &p2, &p3].iter().map(|p| f.agent(p)).collect();
    load_park_plugin(sb);
    let hook = |k: &str| {
        sb.tmux(&[
            "show-option",
            "-gqv",
            &format!("@resurrect-hook-post-{k}-all"),
        ])
        .unwrap()
        .trim()
        .to_string()
    };
    assert!(hook("save").ends_with("resurrect save"), "{}", hook("save"));
    assert!(
        hook("restore").ends_with("resurrect restore"),
        "{}",
        hook("restore")
    );

    let r = Resurrect { sb };
    let all = r.save();
    // The sandbox's own `_keep` window is saved and restored too; the agents' panes in order.
    let saved: Vec<SavedPane> = [("pair", 0), ("pair", 1), ("other", 0), ("third", 0)]
        .iter()
        .map(|(w, i)| {
            all.iter()
                .find(|p| p.window_name == *w && p.pane_index == *i)
                .cloned()
                .unwrap_or_else(|| panic!("{w}.{i} not saved: {all:?}"))
        })
        .collect();
    let copy = sb
        .park_home
        .join("resurrect/tmux_resurrect_20261206T231500.txt.journal.json");
    let c: Value =
        serde_json::from_slice(&std::fs::read(&copy).expect("the journal copy")).unwrap();
    assert_eq!(c["sessions"].as_array().unwrap().len(), 4, "{c}");
    let before = windows(sb);

    let pids: Vec<u32> = sids
        .iter()
        .flat_map(|s| claude_pids_for(&sb.home, s))
        .collect();
    crash(sb, &pids);
    // The third window's pane comes back running a fresh agent (@resurrect-processes 'claude').
    let fresh = vec![("w".to_string(), saved[3].window, saved[3].pane_index)];
    r.restore(&all, &fresh);
    assert_eq!(windows(sb), before, "no window made or doubled");
    for (i, sid) in sids.iter().enumerate().take(3) {
        let at = format!(
            "{}:{}.{}",
            saved[i].session, saved[i].window, saved[i].pane_index
        );
        let pane = pane_at(sb, &at);
        let row = wait_row(sb, &pane, SECS(20), |r| r.state == RowState::Live);
        assert_eq!(row.session_id.as_deref(), Some(sid.as_str()), "{at}");
        assert_eq!(
            claude_pids_for(&sb.home, sid).len(),
            1,
            "one process for {sid}"
        );
    }
    // The fresh agent's pane is never typed into; its session is listed as lost, not resumed.
    let third = pane_at(
        sb,
        &format!("w:{}.{}", saved[3].window, saved[3].pane_index),
    );
    let screen = sb.capture(&third);
    assert!(
        !screen.contains("--resume"),
        "typed into a fresh agent:\n{screen}"
    );
    assert!(claude_pids_for(&sb.home, &sids[3]).is_empty());
    let rows = ls(sb).rows;
    let lost: Vec<_> = rows.iter().filter(|r| r.state == RowState::Lost).collect();
    assert_eq!(lost.len(), 1, "{rows:?}");
    assert_eq!(lost[0].session_id.as_deref(), Some(sids[3].as_str()));
    // doctor explains the setting.
    sb.tmux(&["set-option", "-g", "@resurrect-processes", "'claude'"])
        .unwrap();
    let d: Value = serde_json::from_slice(&park(sb, &["doctor", "--json"]).stdout).unwrap();
    assert!(
        d["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["code"] == "resurrect-processes"),
        "{d}"
    );
    assert!(entries(sb).is_empty(), "nothing is left parked");
}
