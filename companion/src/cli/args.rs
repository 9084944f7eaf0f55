//! The command line as clap sees it: every verb, its flags and their help. Parsing only; what a
//! verb does is in the module `cli::run` dispatches it to.

use clap::{Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(
    name = "park",
    version = concat!(env!("CARGO_PKG_VERSION"), " (", env!("PARK_GIT_REV"), ")"),
    // `--version` also says which zellij plugin `park zellij install` writes (`-V`: one line).
    long_version = concat!(
        env!("CARGO_PKG_VERSION"),
        " (",
        env!("PARK_GIT_REV"),
        ")\nzellij plugin: ",
        env!("PARK_PLUGIN")
    ),
    about = "Park idle AI coding agents: free their RAM, resume the exact session later",
    disable_help_subcommand = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub cmd: Cmd,
}

#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// List agents in panes and parked sessions, grouped by session and window.
    Ls {
        #[arg(long)]
        json: bool,
        /// List the archive instead: every session park archived (parked ❄, running again ↑, or only archived ·), newest first.
        #[arg(long)]
        archived: bool,
    },
    /// Search archived sessions by title, cwd, summary, notes and id (--full-text: also the conversations).
    Search {
        term: String,
        #[arg(long)]
        full_text: bool,
        #[arg(long)]
        json: bool,
    },
    /// Add a note to a session (live, parked or archived); without text: $EDITOR on a terminal, else print the notes.
    Note {
        target: String,
        /// Text to append (a new paragraph).
        text: Vec<String>,
        /// Queue the text for a parked session's wake-up instead: typed into the agent when it is resumed.
        #[arg(long)]
        wake: bool,
    },
    /// Wake a parked session now (with its notes), or cancel its wake-up (it stays parked).
    Wake {
        #[arg(value_parser = ["now", "cancel"])]
        action: String,
        #[arg(required = true)]
        targets: Vec<String>,
        #[arg(long)]
        json: bool,
    },
    /// Named sets of targets, used as `@name` by park and unpark.
    Set {
        #[command(subcommand)]
        op: SetOp,
    },
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) to stdout.
    Completions { shell: clap_complete::Shell },
    /// Print the man page (roff) to stdout: `park man > ~/.local/share/man/man1/park.1`.
    Man,
    /// Print the JSON Schema of a `--json` output (the repo publishes them in schema/).
    Schema {
        #[arg(value_parser = crate::cli::schema::NAMES)]
        name: String,
    },
    /// The background process: fires wake-ups and, when the autopilot is on, runs its passes (started on demand).
    Daemon {
        /// Run exactly one autopilot pass in the foreground, print what it did, and exit.
        #[arg(long, conflicts_with = "ensure")]
        once: bool,
        /// With --once.
        #[arg(long, requires = "once")]
        json: bool,
        /// Start it in the background if a wake-up is pending or the autopilot is on and none runs, then return.
        #[arg(long)]
        ensure: bool,
    },
    /// Same as `park daemon` (its older name).
    #[command(hide = true)]
    Waker {
        #[arg(long)]
        ensure: bool,
    },
    /// The autopilot: `park auto status` shows its policy, budget figures and one decision per live agent.
    Auto {
        #[command(subcommand)]
        op: AutoOp,
    },
    /// Print the effective settings (config.toml) and where each came from.
    Config {
        #[arg(long)]
        json: bool,
    },
    /// Pin sessions: the autopilot never parks them (a pin follows the session id).
    Pin {
        #[arg(required = true)]
        targets: Vec<String>,
    },
    /// Remove pins.
    Unpin {
        #[arg(required = true)]
        targets: Vec<String>,
    },
    /// Live sessions sorted for parking: idle time (from real turns) and a done / waiting / working guess. Parks nothing.
    Candidates {
        #[arg(long)]
        json: bool,
    },
    /// Archive live sessions now (transcript copy + rendered Markdown + tombstone) without parking
    /// them; --all: every transcript near the agent's cleanup age; --prune: remove old archived
    /// copies of sessions gone everywhere else.
    Archive {
        #[arg(required_unless_present_any = ["all", "prune"], conflicts_with_all = ["all", "prune"])]
        targets: Vec<String>,
        /// Every session of the agents (live or not, parked or not) whose transcript is within 7
        /// days of the agent's cleanup age; unchanged ones are not copied again.
        #[arg(long, conflicts_with = "prune")]
        all: bool,
        /// With --all: which agents (default: those that delete their own transcripts; one that
        /// never does is archived only when named here, or with `all`).
        #[arg(long, value_parser = park::ops::protect::which_parser(), requires = "all")]
        agent: Option<park::ops::protect::Which>,
        /// With --all: whatever the transcript's age.
        #[arg(long, requires = "all")]
        any_age: bool,
        /// Remove archived sessions whose transcript is gone from the agent, not parked, older
        /// than --older-than (asks for a typed yes; without a terminal needs --yes).
        #[arg(long, requires = "older_than")]
        prune: bool,
        #[arg(long, value_name = "DUR", requires = "prune")]
        older_than: Option<String>,
        /// With --prune: do not ask.
        #[arg(long, requires = "prune")]
        yes: bool,
        /// With --all or --prune: show what would happen; change nothing.
        #[arg(long)]
        dry_run: bool,
        /// With --all or --prune.
        #[arg(long)]
        json: bool,
    },
    /// Rebuild Claude sessions whose transcript is already deleted from its prompt history
    /// (history.jsonl) as archived tombstones marked "recovered (prompts only)": listed and
    /// searchable, never resumable.
    Recover {
        #[arg(long)]
        dry_run: bool,
        #[arg(long)]
        json: bool,
    },
    /// tmux-resurrect's hooks (the tmux plugin sets them where unset): `save` journals and keeps
    /// a copy for the save resurrect just wrote; `restore` resumes each lost session in the pane
    /// resurrect restored for it.
    Resurrect {
        #[command(subcommand)]
        op: ResurrectOp,
    },
    /// Record every live agent pane in the journal now (what the daemon does every 10 s), so a
    /// crash, a `kill-server` or a reboot loses no conversation; print what it holds.
    Snapshot {
        #[arg(long)]
        json: bool,
    },
    /// Recreate windows and panes the multiplexer lost (tmux server killed, window closed) from the
    /// ledger and window groups, and resume each parked session in its slot; sessions that were
    /// live when the server died (the journal, `park snapshot`) come back with them.
    Rebuild {
        /// Show the plan only.
        #[arg(long)]
        dry_run: bool,
        /// Recreate the panes and leave the sessions parked in them.
        #[arg(long)]
        no_resume: bool,
        /// As before the crash: resume the sessions that were live (the journal's lost ones);
        /// parked ones come back parked in their panes.
        #[arg(long, conflicts_with = "no_resume")]
        as_before: bool,
        /// What `[journal] restore` does when a client attaches (the tmux plugin's
        /// client-attached hook, the zellij strip): nothing, ask, or `--as-before`.
        #[arg(long, conflicts_with_all = ["dry_run", "no_resume", "as_before", "session", "json"])]
        on_attach: bool,
        /// With --on-attach: the tmux client to ask.
        #[arg(long, value_name = "CLIENT", requires = "on_attach")]
        client: Option<String>,
        /// Only the entries parked in this tmux or zellij session (what the zellij plugin runs
        /// when it loads, with --no-resume: a resurrected session's held parked panes become
        /// their parked prompts again).
        #[arg(long, value_name = "NAME")]
        session: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Park targets: a pane (%3; zellij terminal_3 or terminal_3@session), session:window (or
    /// session:tab), a session name, a session or entry id, a title substring, or `.`.
    Park {
        /// What to park (none with --idle/--all).
        targets: Vec<String>,
        #[command(flatten)]
        o: ParkFlags,
    },
    /// Park the pane park runs in.
    #[command(name = ".")]
    Here {
        #[command(flatten)]
        o: ParkFlags,
    },
    /// Resume parked sessions in their panes.
    Unpark {
        /// What to resume (none with --all).
        targets: Vec<String>,
        #[arg(long)]
        dry_run: bool,
        #[arg(long)]
        json: bool,
        /// Resume every parked session.
        #[arg(long)]
        all: bool,
        /// Do not ask before --all (without a terminal, --all needs it).
        #[arg(long)]
        yes: bool,
        /// Type this into the agent (after a `[park]` line) once it is resumed and idle. Repeatable.
        #[arg(long, value_name = "TEXT")]
        note: Vec<String>,
        /// Why it is being resumed (the waker passes what fired).
        #[arg(long, hide = true)]
        wake_reason: Option<String>,
        /// Also start again the dev servers and test browsers the park of its window stopped
        /// (typed at a bare shell prompt in the pane each ran in).
        #[arg(long)]
        with_servers: bool,
        /// When its pane runs another agent now (one started in the parked slot), resume it in a
        /// new pane of the same tab (tmux: a new window, named as the old one) instead of refusing.
        #[arg(long)]
        new_pane: bool,
    },
    /// Show everything park knows about a target, and the command that resumes it.
    Show { target: String },
    /// Drop a parked entry without resuming it (the transcript and archive stay).
    Forget {
        #[arg(required = true)]
        targets: Vec<String>,
    },
    /// Check every parked entry is still restorable and nothing is in the way; exit 1 when anything needs attention.
    Doctor {
        #[arg(long)]
        json: bool,
    },
    /// Print the parked summary (`❄ 3 · 1.1G`); a file read, no process scan.
    Status {
        #[arg(long)]
        json: bool,
        /// Also push it to tmux as @park_status.
        #[arg(long)]
        tmux: bool,
    },
    /// Interactive picker (for the tmux popup): toggle agents between live and parked.
    Pick {
        /// Only rows whose pane, title, cwd or session contains this text.
        filter: Option<String>,
        /// Put the cursor on this pane's row (the popup passes the pane it was opened from).
        #[arg(long)]
        pane: Option<String>,
    },
    /// List, install or remove the opt-in integrations some agents need before park can tell
    /// their sessions apart (Gemini CLI: a SessionStart/SessionEnd hook in ~/.gemini/settings.json;
    /// OpenCode and Kilo: a plugin, ~/.config/{opencode,kilo}/plugin/park.js; pi: an extension,
    /// ~/.pi/agent/extensions/park.js; Kimi Code: a SessionStart/SessionEnd [[hooks]] pair appended
    /// to ~/.kimi-code/config.toml; Factory Droid: a SessionStart/SessionEnd hook in
    /// ~/.factory/hooks.json; each records its process's session under $PARK_HOME).
    /// Without AGENT: list each one's state.
    Integrate {
        /// The agent whose integration to install (or remove with --remove).
        #[arg(value_parser = clap::builder::PossibleValuesParser::new(park::ops::integrate::names()))]
        agent: Option<String>,
        /// Remove exactly what `park integrate AGENT` added.
        #[arg(long, requires = "agent")]
        remove: bool,
        #[arg(long)]
        json: bool,
    },
    /// The zellij plugin: `park zellij install` puts it in ~/.local/share/park/park.wasm and prints
    /// the KDL to add to your zellij config and a layout to save (never edits either); `park
    /// zellij kdl` prints them again.
    Zellij {
        #[command(subcommand)]
        op: ZellijOp,
    },
    /// Run by an agent's hook (installed by `park integrate`): records the session on stdin for
    /// the agent process that ran it. Prints nothing and always exits 0.
    #[command(hide = true)]
    Hook { agent: String },
    /// Placeholder kept in a parked pane whose agent was the pane's own process.
    #[command(hide = true)]
    Hold {
        entry: String,
        #[arg(long)]
        now: bool,
    },
    #[command(name = "__verify", hide = true)]
    Verify {
        entry: String,
        #[arg(long)]
        pid: u32,
        #[arg(long)]
        start: u64,
    },
}

#[derive(clap::Args, Debug, Clone, Default)]
pub struct ParkFlags {
    /// Show what would happen; change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Skip the CPU corroboration (the only check it waives).
    #[arg(long)]
    pub force: bool,
    /// Also waive the busy and draft guards (can lose an in-flight turn or a draft); needs a tty and a typed yes.
    #[arg(long)]
    pub kill_anyway: bool,
    /// Do not ask before parking a window or session that holds several agents (asked only on a terminal).
    #[arg(long)]
    pub yes: bool,
    #[arg(long)]
    pub json: bool,
    /// For a popup: exit at once on success; on a refusal keep the reason on screen until Enter.
    #[arg(long)]
    pub close_popup: bool,
    /// Park every agent whose last real turn is at least this old (30m, 6h, 3d, 2w; 0s = every idle one).
    #[arg(long, value_name = "DUR", conflicts_with = "all")]
    pub idle: Option<String>,
    /// Park every agent park can park (each still passes every guard).
    #[arg(long)]
    pub all: bool,
    /// With a pane target: also stop the dev servers and test browsers of its window (a window
    /// or session target always does).
    #[arg(long)]
    pub with_servers: bool,
    #[command(flatten)]
    pub wake: crate::cli::wake::WakeFlags,
}

#[derive(Debug, clap::Subcommand)]
pub enum AutoOp {
    /// The policy, the measured budget and, for every live agent, what a pass would decide and why. Parks nothing.
    Status {
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, clap::Subcommand)]
pub enum ResurrectOp {
    /// @resurrect-hook-post-save-all: a journal pass and its copy named by resurrect's save file.
    Save {
        #[arg(long)]
        json: bool,
    },
    /// @resurrect-hook-post-restore-all: resume each lost session in its restored pane.
    Restore {
        /// Say what would be resumed where; touch nothing.
        #[arg(long)]
        dry_run: bool,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, clap::Subcommand)]
pub enum ZellijOp {
    /// Write the plugin to ${XDG_DATA_HOME:-~/.local/share}/park/park.wasm (atomically; unchanged
    /// bytes are left alone) and print the KDL. The wasm is --wasm, else the one built into park,
    /// else the one shipped beside it (<prefix>/share/park/park.wasm, park.wasm).
    Install {
        /// Install this wasm instead (e.g. plugin-zellij/target/park.wasm from scripts/build-plugin).
        #[arg(long, value_name = "PATH")]
        wasm: Option<std::path::PathBuf>,
    },
    /// Print the KDL for ~/.config/zellij/config.kdl (plugin, keybindings, zjstatus) and a layout
    /// with the strip to save as ~/.config/zellij/layouts/park.kdl.
    Kdl,
}

#[derive(Debug, clap::Subcommand)]
pub enum SetOp {
    /// Add targets to a set (created if new): `park set add api w:api %7`.
    Add {
        name: String,
        #[arg(required = true)]
        targets: Vec<String>,
    },
    /// Remove targets from a set, or the whole set when none are named.
    Rm { name: String, targets: Vec<String> },
    /// List the sets and their targets.
    Ls {
        #[arg(long)]
        json: bool,
    },
}

/// `park unpark` flags, as the dispatch hands them to `cli::batch`.
pub struct UnparkOpts {
    pub dry_run: bool,
    pub json: bool,
    pub all: bool,
    pub yes: bool,
    pub note: Vec<String>,
    pub wake_reason: Option<String>,
    pub with_servers: bool,
    pub new_pane: bool,
}
