//! What an agent *is*, as plain data: one static [`Spec`] in each agent's folder (`SPEC`). Every
//! fact that is a constant (names, release, config dir rule, flag whitelist, resume shape, how its
//! state reads) lives here, and so do its pure readers, as plain function pointers. Behaviour that
//! needs more than data (whether a process runs a session, where a transcript goes back, …) is a
//! hook of [`super::AgentKind`]; everything that is the same for every agent but for data is one
//! function here, driven by the spec.
//!
//! Contract: a spec is `'static` data, built at compile time; nothing here does I/O but what the
//! agent's own function pointers do.

use super::{limit, render, screen, transcript, AgentProc, Flags, Identity, Integration};
use crate::adapters::platform::proctree::{program_of, ProcTable};
use crate::adapters::platform::{env_get, Platform, ProcInfo};
use park_protocol::Agent;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A process's environment, as the platform reads it.
pub type Env = [(String, String)];

/// Rewrites an argv tail (see [`Whitelist::prepare`]).
pub type Prepare = fn(&[String]) -> Vec<String>;

/// One agent, as data.
pub struct Spec {
    pub agent: Agent,
    /// How reasons name it.
    pub name: &'static str,
    /// Its packages and the versions park was tested with.
    pub release: super::release::Release,
    /// Program names of its processes (a wrapper's and the native binary's).
    pub programs: &'static [&'static str],
    /// A node entry point (`cli.js`) counts as the agent when its path holds this (its npm
    /// package's folder).
    pub entry_script: Option<&'static str>,
    /// Whether an argv tail starts its interactive TUI (not a subcommand, help or a one-shot).
    pub interactive: fn(&[String]) -> bool,
    /// Which process of its tree holds the session.
    pub main: Main,
    pub config: ConfigDir,
    /// The launch flags that survive a resume.
    pub flags: Whitelist,
    pub resume: Resume,
    /// How its process is identified.
    pub identify: Identify,
    /// Every transcript under a config dir: (session id, path).
    pub transcripts: fn(&Path) -> Vec<(String, PathBuf)>,
    /// Where a session's transcript lies, from the config dir, the cwd and the id, for agents
    /// whose layout says it (the default of `expected_transcript` and `restore_path`).
    pub transcript_at: Option<fn(&Path, &str, &str) -> PathBuf>,
    /// Whether the transcript's place is derived from the cwd (then no cwd names no place).
    pub transcript_needs_cwd: bool,
    pub parse_transcript: fn(&[u8]) -> transcript::TranscriptInfo,
    /// Reads a transcript file cheaply for a scan; `None` for agents whose sessions live in a
    /// database (they read by id: `AgentKind::read_transcript`).
    pub read_transcript_file: Option<fn(&Path) -> std::io::Result<transcript::TranscriptInfo>>,
    pub markdown: fn(&[u8]) -> render::Conversation,
    /// The prompt or reply one transcript record holds, as its renderer reads it (the archive's
    /// raw-end check walks records back with this).
    pub message_of: fn(&serde_json::Value) -> Option<render::Message>,
    /// Reads a capture of its pane (with escapes when `screen_escapes`).
    pub read_screen: fn(&str) -> screen::ScreenReading,
    /// Whether its screen is read with escape sequences (Codex marks its composer with styles).
    pub screen_escapes: bool,
    /// The usage-limit screen it shows in a plain capture, with its reset.
    pub limit_screen: Option<fn(&str, &jiff::Zoned) -> Option<limit::LimitScreen>>,
    /// Whether a pane title is its generic one (the product's name behind a spinner), which names
    /// no conversation: the session's own name is shown instead.
    pub generic_title: Option<fn(&str) -> bool>,
    /// Whether it writes a status (file or record) whose `status` park trusts.
    pub has_status_file: bool,
    /// Whether an open turn in its transcript means busy even without a fresh write (its
    /// transcript records every turn's end reliably).
    pub open_turn_is_busy: bool,
    /// Its own cleanup of old transcripts, when it has one.
    pub cleanup: Option<Cleanup>,
    /// Whether it deletes transcripts by itself (then `park archive --all` takes it without
    /// `--agent`).
    pub deletes_transcripts: bool,
    /// The file (relative to a config dir) of its prompt history, when it keeps one in the JSONL
    /// shape `park recover` reads (`{display, timestamp, project, sessionId}` per prompt).
    pub prompt_history: Option<&'static str>,
    /// Variables it sets for the commands its tools run, naming its own session: park run from
    /// such a command (even detached from the agent's tree) is that session's caller.
    pub caller_session_vars: &'static [&'static str],
    /// How long `runs_session` must hold before a resumed start counts: zero when its own file
    /// confirms it, a moment for an agent that only shows its id in argv.
    pub settle: Duration,
    /// Whether a running process of it that could not be identified could be running any session
    /// of its config dir (then an unpark cannot rule out a second writer).
    pub unidentified_blocks_unpark: bool,
    /// A process it shares between its sessions (a daemon): never killed with a session's tree,
    /// never its main process.
    pub shared_process: Option<fn(&ProcInfo) -> bool>,
    /// Its own supervisor of background sessions, in no pane (Claude's Agent View).
    pub supervisor: Option<Supervisor>,
    /// The opt-in integration park can install into its config so it tells park its session.
    pub integration: Option<&'static dyn Integration>,
    /// Whether its TUI takes a first prompt as a positional argument (a fresh start primed to read
    /// an archived conversation needs one; without, a session whose transcript is gone is refused).
    pub first_prompt: bool,
    /// The title its process sets over its argv, when it does (then argv names neither the
    /// program nor a flag).
    pub process_title: Option<ProcessTitle>,
}

/// A process title an agent writes over its argv (Kimi Code's `kimi-code`).
pub struct ProcessTitle {
    /// What `/proc/<pid>/cmdline` then holds.
    pub title: &'static str,
    /// The program that starts it (what a resume runs).
    pub program: &'static str,
    /// Which launch flags are lost on resume, said by `park show`.
    pub lost_flags: &'static str,
}

/// Which process of an agent's tree runs the session.
pub enum Main {
    /// The root itself.
    Root,
    /// The innermost descendant that is the agent too (a node wrapper's native child, a
    /// relaunched child), never a shared process.
    Innermost,
    /// Down through launchers and wrappers to the first process that runs the agent's own binary
    /// (argv[0] is the program), and no deeper: a binary that spawns copies of itself as workers
    /// for a turn (Kilo's `.kilo` under `.kilo`, seen for a moment after a prompt) has its session
    /// in the outer one. `Innermost` took the worker, which was gone by the time it was read.
    Native,
}

/// Where its config dir is: `$var` (or `$var/<under_var>`), else `~/<home>`.
pub struct ConfigDir {
    /// The variable that names it (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`).
    pub var: &'static str,
    /// Set when the variable names the dir's parent: the dir's name under it (`.gemini`).
    pub under_var: Option<&'static str>,
    /// Whether the variable counts only when absolute (the XDG rule).
    pub absolute_var: bool,
    /// Its place under `HOME` when the variable is unset (`.claude`).
    pub home: &'static str,
    /// What to record as having named the dir when the variable is unset: `HOME` when the agent
    /// also keeps state beside the dir (Claude's `~/.claude.json`), else the variable.
    pub default_var: &'static str,
    /// A variable that moves the dir park reads away from the config dir (Qwen's runtime dir).
    pub runtime_var: Option<&'static str>,
}

/// A launch-flag whitelist (see [`super::whitelist`]).
pub struct Whitelist {
    pub bools: &'static [&'static str],
    pub valued: &'static [&'static str],
    /// Valued flags dropped with their value (the session, rebuilt from the id).
    pub skip_valued: &'static [&'static str],
    /// Positional arguments dropped (a project path).
    pub skip_positional: usize,
    /// Rewrites the argv tail before the whitelist reads it, for agents whose argv has a shape of
    /// its own (a `resume <id>` subcommand, a flag repeated per value).
    pub prepare: Option<Prepare>,
}

/// How its resume command line is shaped.
pub enum Resume {
    /// `<program> <flag> <id> <flags…>`.
    Flag(&'static str),
    /// `<program> <subcommand> <flags…> <id>`.
    Subcommand(&'static str),
    /// `<program> <flags…> <flag>`, for an agent with no session id whose flags name the session
    /// (aider: its `--chat-history-file`, then `--restore-chat-history`). `id_in_flags` reads the
    /// id the flags name; a resume whose flags name no id, or another one, has no argv.
    Restore {
        flag: &'static str,
        id_in_flags: fn(&[String]) -> Option<String>,
    },
}

/// How its process is identified.
pub enum Identify {
    /// From the process and its files alone (a status file, a registry, argv), at scan time.
    Files(fn(&AgentProc, u64, &dyn Platform) -> Identity),
    /// From the pane too, once bound: its title and plain screen.
    Pane(fn(&AgentProc, &str, &str, &dyn Platform) -> Identity),
}

/// An agent's own deletion of old transcripts.
pub struct Cleanup {
    /// After how many days when its settings say nothing.
    pub default_days: u64,
    /// The period as the user wrote it in a config dir's settings (doctor warns about a period
    /// too short to come back in).
    pub setting: fn(&Path) -> Option<i64>,
}

/// An agent's supervisor of background sessions.
pub struct Supervisor {
    /// Whether a process (its argv tail and environment) is a background session.
    pub runs: fn(&[String], &Env) -> bool,
    /// Whether a background process (pid, parent pid) is a spare the supervisor keeps ready,
    /// running no session.
    pub unclaimed_spare: fn(&[String], &Env, u32, u32) -> bool,
    /// What a background session is and how the user reaches it (its job id when known).
    pub note: fn(Option<&str>) -> String,
    /// The command that opens background job `job` in a terminal, when there is one.
    pub attach_command: fn(&str) -> Option<String>,
}

impl Whitelist {
    /// Flags kept as they are, no positional dropped, no rewriting.
    pub const fn of(
        bools: &'static [&'static str],
        valued: &'static [&'static str],
        skip_valued: &'static [&'static str],
    ) -> Self {
        Whitelist {
            bools,
            valued,
            skip_valued,
            skip_positional: 0,
            prepare: None,
        }
    }
}

impl Spec {
    /// Whether a process whose program is `program` (its path `path`) is this agent's.
    pub fn is_program(&self, program: &str, path: &str) -> bool {
        self.programs.contains(&program)
            || self
                .entry_script
                .is_some_and(|s| program == "cli" && path.contains(s))
    }

    /// Whether that process with arguments `rest` is its interactive session (not a subcommand,
    /// a helper or a daemon).
    pub fn runs(&self, program: &str, path: &str, rest: &[String]) -> bool {
        self.is_program(program, path) && (self.interactive)(rest)
    }

    /// The program that starts a process whose argv's program token is `token`: the token, or
    /// the agent's own program when the token is its process title.
    pub fn program_for(&self, token: &str) -> String {
        match &self.process_title {
            Some(t) if token == t.title => t.program.to_string(),
            _ => token.to_string(),
        }
    }

    /// Whether it shares process `p` between its sessions.
    pub fn shares(&self, p: &ProcInfo) -> bool {
        self.shared_process.is_some_and(|f| f(p))
    }

    /// A process of its own (not a process it shares between sessions).
    fn is_own(&self, p: &ProcInfo) -> bool {
        !self.shares(p) && program_of(&p.argv).is_some_and(|(n, i)| self.is_program(&n, &p.argv[i]))
    }

    /// The process that runs the session, from the agent's root process.
    pub fn main_pid(&self, table: &ProcTable, root: u32) -> u32 {
        match self.main {
            Main::Root => root,
            Main::Innermost => table.innermost(root, |p| self.is_own(p)),
            Main::Native => {
                let native = |p: &ProcInfo| program_of(&p.argv).is_some_and(|(_, i)| i == 0);
                let mut cur = root;
                // Bounded: a ppid loop in a corrupt table never hangs a scan.
                for _ in 0..64 {
                    if table.get(cur).is_some_and(native) {
                        break;
                    }
                    match table
                        .children(cur)
                        .iter()
                        .copied()
                        .find(|c| table.get(*c).is_some_and(|p| self.is_own(p)))
                    {
                        Some(n) => cur = n,
                        None => break,
                    }
                }
                cur
            }
        }
    }

    /// Whether the process is a background session run by the agent's own supervisor.
    pub fn background(&self, args: &[String], env: &[(String, String)]) -> bool {
        self.supervisor
            .as_ref()
            .is_some_and(|s| (s.runs)(args, env))
    }

    /// Whether a background process is a spare its supervisor keeps ready, running no session.
    pub fn unclaimed_spare(
        &self,
        args: &[String],
        env: &[(String, String)],
        pid: u32,
        ppid: u32,
    ) -> bool {
        self.supervisor
            .as_ref()
            .is_some_and(|s| (s.unclaimed_spare)(args, env, pid, ppid))
    }

    /// What a background session is, and how the user reaches it.
    pub fn background_note(&self, job: Option<&str>) -> String {
        match &self.supervisor {
            Some(s) => (s.note)(job),
            None => "a background session, run by the agent's supervisor in no pane: park never parks it".into(),
        }
    }

    /// The command that opens background job `job` in a terminal, when there is one.
    pub fn attach_command(&self, job: &str) -> Option<String> {
        self.supervisor
            .as_ref()
            .and_then(|s| (s.attach_command)(job))
    }

    /// The argv tail's flags that survive a resume (kept, dropped).
    pub fn flags(&self, args: &[String]) -> (Flags, Vec<String>) {
        let w = &self.flags;
        let prepared;
        let args = match w.prepare {
            Some(f) => {
                prepared = f(args);
                &prepared[..]
            }
            None => args,
        };
        super::whitelist(args, w.bools, w.valued, w.skip_valued, w.skip_positional)
    }

    /// The argv that resumes session `id` with these (already whitelisted) flags.
    pub fn resume_argv(&self, program: &str, id: &str, flags: &[String]) -> Vec<String> {
        let mut v = vec![program.to_string()];
        match self.resume {
            Resume::Flag(f) => {
                v.extend([f.to_string(), id.to_string()]);
                v.extend(flags.iter().cloned());
            }
            Resume::Subcommand(s) => {
                v.push(s.to_string());
                v.extend(flags.iter().cloned());
                v.push(id.to_string());
            }
            Resume::Restore { flag, id_in_flags } => {
                if id_in_flags(flags).as_deref() != Some(id) {
                    return vec![];
                }
                v.extend(flags.iter().cloned());
                v.push(flag.to_string());
            }
        }
        v
    }

    /// The argv of a fresh agent standing in for a session whose transcript is gone: the flags,
    /// then the first prompt pointing at the archived conversation `md`. An agent whose resume
    /// is [`Resume::Restore`] takes no prompt in argv (aider reads a word there as a file): it
    /// gets the archived conversation as a read-only file instead.
    pub fn fresh_argv(
        &self,
        program: &str,
        flags: &[String],
        prompt: String,
        md: &str,
    ) -> Vec<String> {
        let mut argv = vec![program.to_string()];
        argv.extend(flags.iter().cloned());
        match self.resume {
            Resume::Restore { .. } => argv.extend(["--read".to_string(), md.to_string()]),
            _ => argv.push(prompt),
        }
        argv
    }

    /// After how many days the agent deletes transcripts of this config dir (`None`: never).
    pub fn cleanup_days(&self, config_dir: &Path) -> Option<u64> {
        let c = self.cleanup.as_ref()?;
        Some(
            (c.setting)(config_dir)
                .map(|d| d.max(0) as u64)
                .unwrap_or(c.default_days),
        )
    }

    /// The cleanup period as the user wrote it in the config dir's settings.
    pub fn cleanup_setting(&self, config_dir: &Path) -> Option<i64> {
        (self.cleanup.as_ref()?.setting)(config_dir)
    }
}

impl ConfigDir {
    /// `$var` names the dir, else `~/<home>`; the variable is what a process records.
    pub const fn var_or_home(var: &'static str, home: &'static str) -> Self {
        ConfigDir {
            var,
            under_var: None,
            absolute_var: false,
            home,
            default_var: var,
            runtime_var: None,
        }
    }

    /// The XDG data dir's `<dir>` (`$XDG_DATA_HOME/<dir>`, else `~/.local/share/<dir>`).
    pub const fn xdg_data(dir: &'static str, home: &'static str) -> Self {
        ConfigDir {
            under_var: Some(dir),
            absolute_var: true,
            ..ConfigDir::var_or_home("XDG_DATA_HOME", home)
        }
    }

    fn var_dir(&self, env: &[(String, String)]) -> Option<PathBuf> {
        let v = env_get(env, self.var)
            .filter(|v| !v.is_empty() && (!self.absolute_var || v.starts_with('/')))?;
        Some(match self.under_var {
            Some(sub) => Path::new(v).join(sub),
            None => PathBuf::from(v),
        })
    }

    /// The config dir a process with this environment uses (the variable's, else `~/<home>`),
    /// whatever its runtime dir.
    pub fn named(&self, env: &[(String, String)]) -> Option<PathBuf> {
        self.var_dir(env)
            .or_else(|| env_get(env, "HOME").map(|h| Path::new(h).join(self.home)))
    }

    /// The dir park reads and restores transcripts in for a process with this environment (the
    /// "config dir" it records).
    pub fn dir(&self, env: &[(String, String)]) -> Option<PathBuf> {
        self.runtime_var
            .and_then(|r| env_get(env, r).filter(|v| !v.is_empty()))
            .map(PathBuf::from)
            .or_else(|| self.named(env))
    }

    /// The variable to record for a process with this environment (see `default_var`).
    pub fn var_of(&self, env: &[(String, String)]) -> &'static str {
        let set = |v: &str| env_get(env, v).is_some_and(|x| !x.is_empty());
        match self.runtime_var {
            Some(r) if set(r) => r,
            _ if set(self.var) => self.var,
            _ => self.default_var,
        }
    }

    /// The value `var` takes to make the agent use config dir `dir` (the dir itself, unless the
    /// variable names its parent).
    pub fn var_value(&self, dir: &Path) -> Option<PathBuf> {
        match self.under_var {
            Some(_) => dir.parent().map(Path::to_path_buf),
            None => Some(dir.to_path_buf()),
        }
    }
}

/// The common shape of [`Spec::interactive`]: an argv tail starts the TUI unless it holds a
/// one-shot flag of `non_interactive` (as `--flag` or `--flag=value`) or starts with one of
/// `subcommands`.
pub fn tui_argv(args: &[String], non_interactive: &[&str], subcommands: &[&str]) -> bool {
    !args.iter().any(|a| {
        let name = a.split_once('=').map_or(a.as_str(), |(n, _)| n);
        non_interactive.contains(&name)
    }) && !matches!(args.first(), Some(a) if subcommands.contains(&a.as_str()))
}

#[cfg(test)]
mod tests {
    use super::tui_argv;

    #[test]
    fn a_one_shot_flag_in_either_form_or_a_leading_subcommand_is_not_the_tui() {
        let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let (flags, subs) = (&["-p", "--prompt"][..], &["mcp", "login"][..]);
        assert!(tui_argv(&v(&[]), flags, subs));
        assert!(
            tui_argv(&v(&["--model", "x", "mcp"]), flags, subs),
            "a value, not a subcommand"
        );
        assert!(!tui_argv(&v(&["--prompt=hi"]), flags, subs));
        assert!(!tui_argv(&v(&["--model", "x", "-p", "hi"]), flags, subs));
        assert!(!tui_argv(&v(&["login"]), flags, subs));
        assert!(tui_argv(&v(&["--prompter"]), flags, subs), "another flag");
    }
}
