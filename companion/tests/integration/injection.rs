//! Injection and path corpus, at the library level.
//!
//! Every hostile string in the corpus goes through every sink park feeds such strings to: session
//! ids, entry ids, ledger paths, transcript paths, lock keys, the archive, the flag whitelists,
//! `resume_argv`, and `resume_command_line` (actually run by `sh -c` and `bash -c`). The promises
//! checked: nothing is executed (a marker file never appears), nothing is written outside
//! `$PARK_HOME` (every test walks its temp root before and after), ledger files are 0600 in 0700
//! dirs, and symlinks are not followed.
//!
//! Eight of these tests first failed on real bugs the corpus found (a symlinked `parked/` read and
//! deleted through, loose dirs kept loose, unvalidated ids joined into paths, lock files and argv,
//! `cd` without `--`); the library was fixed and they now guard those rules.

use park::agents::{self, claude, codex, Agent};
use park::model::entry::{entry_id, valid_entry_id, Entry, EntryState, MuxPlace};
use park::store::ledger::{write_atomic, Ledger, LedgerError};
use park::{agents::transcript, ops::unpark, store::archive, store::lock};
use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Component, Path, PathBuf};
use std::process::Command;

/// A real, valid session id (the baseline every hostile field is swapped into).
const SID: &str = "35c98558-0920-4e29-b81c-9304ca43fccb";

/// `{MARK}` becomes the absolute path of the marker file: if any of these ever runs, it appears.
const TEMPLATES: &[&str] = &[
    // Shell command separators and substitutions.
    "; touch {MARK}",
    "x;touch {MARK}",
    "&& touch {MARK}",
    "|| touch {MARK}",
    "| touch {MARK}",
    "& touch {MARK} &",
    "$(touch {MARK})",
    "x$(touch {MARK})y",
    "`touch {MARK}`",
    "x`touch {MARK}`y",
    "$((0))$(touch {MARK})",
    "${x:-$(touch {MARK})}",
    "${IFS}touch${IFS}{MARK}",
    "<(touch {MARK})",
    ">(touch {MARK})",
    ">{MARK}",
    ">>{MARK}",
    "2>{MARK}",
    "<<EOF\ntouch {MARK}\nEOF",
    // Quote breaking.
    "' ; touch {MARK} ; '",
    "\" ; touch {MARK} ; \"",
    "'$(touch {MARK})'",
    "\"$(touch {MARK})\"",
    "\"`touch {MARK}`\"",
    "'\"'\"'; touch {MARK}; '\"'\"'",
    "$'\\x27'; touch {MARK}",
    // Backslashes.
    "\\",
    "\\\\",
    "x\\",
    "\\'; touch {MARK}; \\'",
    "\\\"; touch {MARK}; \\\"",
    "\\; touch {MARK}",
    "\\\ntouch {MARK}",
    // Newlines and carriage returns.
    "\n touch {MARK}",
    "x\ntouch {MARK}\n",
    "\r\ntouch {MARK}",
    "\rtouch {MARK}",
    // Other shell syntax: globs, braces, tilde, history, comments, assignments.
    "*",
    "?",
    "[a-z]*",
    "{a,b}",
    "~",
    "~root",
    "!!; touch {MARK}",
    "#; touch {MARK}",
    "FOO=bar touch {MARK}",
    "%s%n%x%%",
    // Terminal escapes (OSC title, clear screen, OSC 52 clipboard, DCS, C1 CSI).
    "\x1b]0;title\x07",
    "\x1b[2J\x1b[H",
    "\x1b]52;c;dG91Y2g=\x07",
    "\x1bP+q544e\x1b\\",
    "\u{9b}31m",
    // Unicode: RTL override, emoji, combining marks, full-width, zero width, BOM, separators.
    "\u{202e}lmth.exe",
    "🦀🚀 emoji ❄",
    "e\u{301}\u{301}\u{301}",
    "ＡＢＣ；ｔｏｕｃｈ　ｘ",
    "\u{200b}zero\u{200b}width",
    "\u{feff}bom",
    "日本語のパス",
    "\u{2028}line\u{2029}sep",
    "İı",
    // Paths.
    ".",
    "..",
    "../..",
    "../../etc/passwd",
    "../../../../../../../../../../tmp/x",
    "/etc/passwd",
    "/tmp/x",
    "a/../../b",
    "./-rf",
    "~/.ssh/id_rsa",
    "//",
    // Flag smuggling.
    "-",
    "--",
    "-c",
    "-c touch {MARK}",
    "--dangerously-skip-permissions",
    "--dangerously-bypass-approvals-and-sandbox",
    "--resume",
    "--session-id=00000000-0000-4000-8000-000000000000",
    "--mcp-config=/tmp/evil.json",
    "-m",
    "--model=opus",
    "--model=--dangerously-skip-permissions",
    "--config=sandbox_mode=\"danger-full-access\"",
    // `=`-joined.
    "=",
    "a=b",
    "==",
    // Empty and whitespace.
    "",
    " ",
    "\t",
    "   \t  ",
    "a b",
    // Almost a session id.
    "35c98558-0920-4e29-b81c-9304ca43fccb; touch {MARK}",
    "35c98558-0920-4e29-b81c-9304ca43fcc;",
    " 35c98558-0920-4e29-b81c-9304ca43fcc",
    "../35c98558-0920-4e29-b81c-9304ca43",
    "35C98558-0920-4E29-B81C-9304CA43FCC\n",
];

/// The whole corpus: the templates with the marker path filled in, every control byte (no NUL),
/// and very long strings.
fn corpus(mark: &Path) -> Vec<String> {
    let m = mark.to_str().expect("utf-8 temp path");
    let mut v: Vec<String> = TEMPLATES.iter().map(|t| t.replace("{MARK}", m)).collect();
    for b in (1u8..=0x1f).chain([0x7f]) {
        v.push(format!("a{}b", char::from(b)));
    }
    v.push("x".repeat(10_000));
    v.push(format!("$(touch {m})").repeat(700));
    v.push("../".repeat(3000));
    v.push("é".repeat(5000));
    v.push(format!("-{}", "a".repeat(300)));
    v.push(format!("{}$(touch {m})", "a".repeat(250)));
    v
}

/// Every place the corpus goes (the second number in the log line).
const SINKS: &[&str] = &[
    "transcript::valid_session_id",
    "park::model::entry::entry_id + valid_entry_id",
    "Ledger::load (raw id)",
    "Ledger::remove (raw id)",
    "Ledger::claim (raw id)",
    "Ledger::save (raw id)",
    "Ledger load/claim/save/remove (entry_id of hostile session id)",
    "Ledger save/load round trip (every string field)",
    "Ledger::load (hostile session id in a file)",
    "claude::transcript_path (cwd)",
    "claude::transcript_path (validated id)",
    "claude::transcript::project_dir_name",
    "claude::flags",
    "codex::flags",
    "unpark::resume_argv (flags)",
    "unpark::resume_argv (program)",
    "unpark::resume_command_line under sh -c",
    "unpark::resume_command_line under bash -c",
    "unpark::resume_command_line shlex round trip",
    "unpark::restorable (program)",
    "unpark::restorable (cwd)",
    "unpark::expected_transcript",
    "unpark::config_env",
    "lock::key + lock::try_lock",
    "archive::archive (meta: title, cwd, flags)",
    "archive::archive (transcript file name)",
    "archive::archive (transcript path)",
];

// ---- sandbox -------------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq)]
enum Node {
    Dir(u32),
    File(u32, Vec<u8>),
    Link(PathBuf),
}

/// A temp root holding `$PARK_HOME` (`<root>/park-home`), the marker path (`<root>/MARK`, never
/// created) and the test's own fixtures. `seal` snapshots everything outside `$PARK_HOME`;
/// `verify` fails if anything there changed, appeared or vanished, or if the marker exists.
struct Sandbox {
    _dir: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    mark: PathBuf,
    corpus: Vec<String>,
    sealed: BTreeMap<PathBuf, Node>,
    /// Paths outside `$PARK_HOME` that the test's own fixtures write to (e.g. the argv recorder).
    scratch: Vec<PathBuf>,
}

impl Sandbox {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let mark = root.join("MARK");
        let mut sb = Sandbox {
            home: root.join("park-home"),
            corpus: corpus(&mark),
            mark,
            root,
            _dir: dir,
            sealed: BTreeMap::new(),
            scratch: vec![],
        };
        sb.seal();
        sb
    }

    fn ledger(&self) -> Ledger {
        Ledger::new(self.home.clone())
    }

    /// A fixture directory outside `$PARK_HOME`.
    fn fixture_dir(&self, name: &str) -> PathBuf {
        let p = self.root.join(name);
        fs::create_dir_all(&p).unwrap();
        p
    }

    fn seal(&mut self) {
        self.sealed = self.outside();
    }

    fn outside(&self) -> BTreeMap<PathBuf, Node> {
        let mut m = BTreeMap::new();
        walk(&self.root, &mut m);
        m.retain(|p, _| {
            !p.starts_with(&self.home) && !self.scratch.iter().any(|s| p.starts_with(s))
        });
        m
    }

    fn verify(&self) {
        assert!(
            fs::symlink_metadata(&self.mark).is_err(),
            "the marker {} exists: something was executed",
            self.mark.display()
        );
        let now = self.outside();
        let mut diffs = vec![];
        for (p, n) in &now {
            match self.sealed.get(p) {
                None => diffs.push(format!("created outside PARK_HOME: {}", p.display())),
                Some(o) if o != n => {
                    diffs.push(format!("changed outside PARK_HOME: {}", p.display()))
                }
                _ => {}
            }
        }
        for p in self.sealed.keys() {
            if !now.contains_key(p) {
                diffs.push(format!("removed outside PARK_HOME: {}", p.display()));
            }
        }
        assert!(diffs.is_empty(), "{}", diffs.join("\n"));
    }

    /// Every path under `$PARK_HOME` (not following symlinks).
    fn home_tree(&self) -> BTreeMap<PathBuf, Node> {
        let mut m = BTreeMap::new();
        if fs::symlink_metadata(&self.home).is_ok() {
            walk(&self.home, &mut m);
        }
        m
    }
}

fn walk(p: &Path, out: &mut BTreeMap<PathBuf, Node>) {
    let Ok(m) = fs::symlink_metadata(p) else {
        return;
    };
    let mode = m.permissions().mode() & 0o7777;
    if m.file_type().is_symlink() {
        out.insert(p.to_path_buf(), Node::Link(fs::read_link(p).unwrap()));
    } else if m.is_dir() {
        out.insert(p.to_path_buf(), Node::Dir(mode));
        for e in fs::read_dir(p).unwrap().flatten() {
            walk(&e.path(), out);
        }
    } else {
        out.insert(
            p.to_path_buf(),
            Node::File(mode, fs::read(p).unwrap_or_default()),
        );
    }
}

fn mode(p: &Path) -> u32 {
    fs::symlink_metadata(p).unwrap().permissions().mode() & 0o777
}

/// `p` with `.`/`..` resolved, its longest existing ancestor canonicalised (symlinks resolved).
fn resolved(p: &Path) -> PathBuf {
    let mut lexical = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                lexical.pop();
            }
            Component::CurDir => {}
            c => lexical.push(c),
        }
    }
    let mut existing = lexical.clone();
    let mut rest = vec![];
    while fs::symlink_metadata(&existing).is_err() {
        match (
            existing.file_name().map(|n| n.to_os_string()),
            existing.parent(),
        ) {
            (Some(n), Some(parent)) => {
                rest.push(n);
                existing = parent.to_path_buf();
            }
            _ => break,
        }
    }
    let mut out = existing.canonicalize().unwrap_or(existing);
    out.extend(rest.iter().rev());
    out
}

/// The canonical prefix check: `p` stays inside `base`.
fn inside(base: &Path, p: &Path) -> bool {
    resolved(p).starts_with(resolved(base))
}

/// A name usable as one directory entry.
fn creatable_name(s: &str) -> bool {
    !s.is_empty() && s != "." && s != ".." && !s.contains('/') && s.len() <= 255
}

fn baseline(agent: Agent) -> Entry {
    // aider's session is its history file, named in its flags.
    if agent == Agent::Aider {
        let sid = agents::aider::id_of(Path::new(AIDER_HISTORY));
        return Entry {
            id: entry_id(agent, &sid),
            agent,
            program: agent.as_str().into(),
            session_id: sid,
            flags: strs(&["--chat-history-file", AIDER_HISTORY]),
            ..baseline(Agent::Claude)
        };
    }
    Entry {
        schema: park::model::entry::ENTRY_SCHEMA,
        id: entry_id(agent, SID),
        state: EntryState::Parked,
        agent,
        session_id: SID.into(),
        session_source: "status-file".into(),
        cwd: "/".into(),
        program: agent.as_str().into(),
        flags: vec![],
        dropped_flags: vec![],
        transcript: None,
        config_dir: None,
        config_var: None,
        place: MuxPlace {
            kind: "tmux".into(),
            server: "/tmp/tmux-0/default".into(),
            pane: "%1".into(),
            session: "work".into(),
            window_index: 0,
            window_name: "w".into(),
            pane_index: 0,
            title: "t".into(),
            pane_title: "t".into(),
            pane_proc: (0, 0),
        },
        pane_owned: false,
        parked_at: "2026-12-02T00:00:00Z".into(),
        last_active: None,
        bytes: 1,
        uss_bytes: 1,
        pss_bytes: 1,
        anon_bytes: 1,
        freed_bytes: None,
        killed_pids: vec![],
        resumer: None,
        last_error: None,
        handoff_pane: None,
        worktree: None,
        group: None,
        fresh_from: None,
        wake: None,
        agent_version: None,
        shell_path: None,
    }
}

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

// ---- 5. the count --------------------------------------------------------------------------

#[test]
fn corpus_size_is_logged() {
    let sb = Sandbox::new();
    let n = sb.corpus.len();
    eprintln!("injection corpus: {n} strings × {} sinks", SINKS.len());
    assert!(n >= 60, "corpus too small: {n}");
    let mut uniq = sb.corpus.clone();
    uniq.sort();
    uniq.dedup();
    assert_eq!(uniq.len(), n, "corpus entries are distinct");
    assert!(
        sb.corpus.iter().all(|s| !s.contains('\0')),
        "no NUL: it cannot reach argv or paths"
    );
    sb.verify();
}

// ---- 2. session ids and entry ids ----------------------------------------------------------

#[test]
fn hostile_session_ids_are_rejected() {
    let sb = Sandbox::new();
    for s in &sb.corpus {
        assert_eq!(transcript::valid_session_id(s), None, "{s:?}");
        // A valid id with hostile text glued on either side is no id either.
        for glued in [format!("{SID}{s}"), format!("{s}{SID}")] {
            if !s.is_empty() {
                assert_eq!(transcript::valid_session_id(&glued), None, "{glued:?}");
            }
        }
    }
    sb.verify();
}

#[test]
fn entry_ids_of_hostile_session_ids_are_refused_or_stay_in_parked() {
    let sb = Sandbox::new();
    let l = sb.ledger();
    l.ensure().unwrap();
    let parked = l.parked_dir();
    for s in &sb.corpus {
        for agent in Agent::ALL {
            for id in [entry_id(agent, s), s.clone()] {
                if !valid_entry_id(&id) {
                    continue;
                }
                assert!(
                    id.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b)),
                    "{id:?}"
                );
                let p = parked.join(format!("{id}.json"));
                assert_eq!(p.parent(), Some(parked.as_path()), "{id:?}");
                assert!(inside(&parked, &p), "{id:?} leaves parked/");
            }
        }
    }
    sb.verify();
}

/// Raw hostile strings as entry ids, and entry ids built from hostile session ids, through every
/// ledger operation: BadId, or the operation happens at `parked/<id>.json` and nowhere else.
#[test]
fn ledger_operations_with_hostile_ids_refuse_or_stay_inside() {
    let mut sb = Sandbox::new();
    sb.seal();
    let l = sb.ledger();
    l.ensure().unwrap();
    let parked = l.parked_dir();
    let mut refused = 0;
    for s in &sb.corpus {
        for id in [
            s.clone(),
            entry_id(Agent::Claude, s),
            entry_id(Agent::Codex, s),
        ] {
            let mut e = baseline(Agent::Claude);
            e.id = id.clone();
            let ok = valid_entry_id(&id);
            let r = [
                l.load(&id).err(),
                l.claim(&e).err(),
                l.save(&e).err(),
                l.load(&id).err(),
                l.remove(&id).err(),
            ];
            if ok {
                if let Some(err) = r.iter().flatten().next() {
                    panic!("valid id {id:?} failed: {err}");
                }
            } else {
                refused += 1;
                for err in &r {
                    assert!(
                        matches!(err, Some(LedgerError::BadId(_))),
                        "{id:?}: {err:?}"
                    );
                }
            }
            // Whatever happened, parked/ holds nothing but regular files directly in it, and
            // nothing is left after remove.
            for (p, n) in sb.home_tree() {
                if p.starts_with(&parked) && p != parked {
                    panic!("{id:?} left {} ({n:?})", p.display());
                }
            }
        }
    }
    assert!(
        refused > sb.corpus.len(),
        "most hostile ids are refused ({refused})"
    );
    assert!(matches!(l.all(), (ok, bad) if ok.is_empty() && bad.is_empty()));
    sb.verify();
}

#[test]
fn claude_transcript_paths_stay_in_the_config_dir() {
    let mut sb = Sandbox::new();
    let cfg = sb.fixture_dir("claude-config");
    sb.seal();
    let projects = cfg.join("projects");
    for s in &sb.corpus {
        // The cwd only ever becomes one safe directory name.
        let enc = park::agents::claude::transcript::project_dir_name(s);
        assert!(
            enc.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'),
            "{s:?} → {enc:?}"
        );
        assert!(enc.len() <= 208, "{s:?}");
        let p = claude::transcript_path(&cfg, s, SID);
        assert!(inside(&projects, &p), "cwd {s:?} → {}", p.display());
        assert_eq!(
            p.file_name().and_then(|n| n.to_str()),
            Some(&*format!("{SID}.jsonl"))
        );
        let want_dir = if enc.is_empty() {
            projects.clone()
        } else {
            projects.join(&enc)
        };
        assert_eq!(
            resolved(p.parent().unwrap()),
            resolved(&want_dir),
            "cwd {s:?}"
        );
        // A hostile id never gets that far: the gate every caller uses refuses it.
        if let Some(id) = transcript::valid_session_id(s) {
            panic!("{s:?} passed as {id:?}");
        }
        // The expected transcript of an entry with a hostile cwd is still under the config dir.
        let mut e = baseline(Agent::Claude);
        e.cwd = s.clone();
        e.config_dir = Some(cfg.to_string_lossy().into_owned());
        let t = agents::expected_transcript(&e).unwrap();
        assert!(inside(&projects, &t), "{s:?}");
    }
    sb.verify();
}

#[test]
fn claude_transcript_path_with_a_raw_hostile_id_stays_in_the_config_dir() {
    let cfg = Path::new("/h/.claude");
    for id in ["../../../escape", "/etc/passwd"] {
        let p = claude::transcript_path(cfg, "/w", id);
        assert!(inside(cfg, &p), "id {id:?} → {}", p.display());
    }
}

// ---- 3. flags, program, cwd ----------------------------------------------------------------

fn claude_shapes(s: &str) -> Vec<Vec<String>> {
    vec![
        strs(&["--model", s]),
        vec![format!("--model={s}")],
        strs(&["--add-dir", s, "--dangerously-skip-permissions"]),
        vec![s.to_string()],
        strs(&["--permission-mode", s, "--effort", s]),
        strs(&["--resume", s, "--session-id", s, "-r", s]),
        strs(&["--ide", s, "--fallback-model", "sonnet"]),
    ]
}

fn codex_shapes(s: &str) -> Vec<Vec<String>> {
    vec![
        strs(&["-m", s]),
        vec![format!("--profile={s}")],
        strs(&["--add-dir", s, "--no-daemon"]),
        vec![s.to_string()],
        strs(&["-c", s, "-s", s, "--config", s]),
        strs(&["resume", s, "-a", s]),
        strs(&["--search", s, "-C", s, "--cd", s]),
    ]
}

fn qwen_shapes(s: &str) -> Vec<Vec<String>> {
    vec![
        strs(&["-m", s]),
        vec![format!("--model={s}")],
        strs(&["--approval-mode", s, "-y"]),
        vec![s.to_string()],
        strs(&["--include-directories", s, "--allowed-tools", s]),
        strs(&["--resume", s, "--session-id", s, "-r", s]),
        strs(&["-p", s, "--openai-base-url", s]),
    ]
}

fn copilot_shapes(s: &str) -> Vec<Vec<String>> {
    vec![
        strs(&["--model", s]),
        vec![format!("--model={s}")],
        strs(&["--allow-tool", s, s, "--yolo"]),
        vec![s.to_string()],
        strs(&["--add-dir", s, "--deny-tool", s]),
        strs(&["--resume", s, "--session-id", s, "-r", s]),
        strs(&["-i", s, "-n", s, "-C", s]),
    ]
}

fn gemini_shapes(s: &str) -> Vec<Vec<String>> {
    vec![
        strs(&["-m", s]),
        vec![format!("--model={s}")],
        strs(&["--approval-mode", s, "-y"]),
        vec![s.to_string()],
        strs(&["--include-directories", s, "--policy", s]),
        strs(&["--resume", s, "--session-id", s, "-r", s]),
        strs(&["-i", s, "-w", s, "--session-file", s]),
    ]
}

fn opencode_shapes(s: &str) -> Vec<Vec<String>> {
    vec![
        strs(&["-m", s]),
        vec![format!("--model={s}")],
        strs(&["--agent", s, "--auto"]),
        vec![s.to_string()],
        strs(&["--mdns-domain", s, "--cors", s, "--cors", s]),
        strs(&["-s", s, "--session", s, "--prompt", s, "--fork"]),
        strs(&["--port", s, "--hostname", s, "-c"]),
    ]
}

/// The history file an aider entry's flags name: its session (aider has no id; see
/// `agents/aider`).
const AIDER_HISTORY: &str = "/w/.aider.chat.history.md";

fn aider_shapes(s: &str) -> Vec<Vec<String>> {
    [
        strs(&["--model", s]),
        vec![format!("--model={s}")],
        strs(&["--edit-format", s, "--yes-always"]),
        vec![s.to_string()],
        strs(&["--file", s, "--read", s, "--weak-model", s]),
        strs(&["--chat-history-file", s, "--restore-chat-history"]),
        strs(&["-m", s, "--openai-api-key", s]),
    ]
    .into_iter()
    .map(|mut v| {
        v.extend(strs(&["--chat-history-file", AIDER_HISTORY]));
        v
    })
    .collect()
}

fn pi_shapes(s: &str) -> Vec<Vec<String>> {
    vec![
        strs(&["--model", s, "--provider", s]),
        vec![format!("--model={s}")],
        strs(&["--tools", s, "-e", s, "--no-skills"]),
        vec![s.to_string()],
        strs(&["--append-system-prompt", s, "--thinking", s]),
        strs(&["--session", s, "--session-id", s, "--fork", s]),
        strs(&["--session-dir", s, "--api-key", s, "-p", s]),
    ]
}

fn kimi_shapes(s: &str) -> Vec<Vec<String>> {
    vec![
        strs(&["-m", s]),
        vec![format!("--model={s}")],
        strs(&["--add-dir", s, "--plan", "-y"]),
        vec![s.to_string()],
        strs(&["--skills-dir", s, "--auto"]),
        strs(&["-S", s, "--session", s, "--agent", s, "--agent-file", s]),
    ]
}

fn droid_shapes(s: &str) -> Vec<Vec<String>> {
    vec![
        strs(&["--auto", s]),
        vec![format!("--auto={s}")],
        strs(&["--append-system-prompt", s, "--use-spec"]),
        vec![s.to_string()],
        strs(&["--settings", s, "--append-system-prompt-file", s]),
        strs(&["--resume", s, "-r", s, "--fork", s]),
        strs(&["resume", s, "--cwd", s, "-w", s, "--last"]),
        strs(&["--resume", "--auto", s, "-r"]),
    ]
}

fn cline_shapes(s: &str) -> Vec<Vec<String>> {
    vec![
        strs(&["-m", s]),
        vec![format!("--model={s}")],
        strs(&["--tui", "-P", s, "--auto-approve", s, "-p"]),
        vec![s.to_string()],
        strs(&["--thinking", s, "-s", s, "--compaction", s]),
        strs(&["--id", s, "-c", s, "--cwd", s, "-k", s]),
        strs(&["--config", s, "--data-dir", s, "--hooks-dir", s]),
    ]
}

fn shapes(agent: Agent, s: &str) -> Vec<Vec<String>> {
    match agent {
        Agent::Claude => claude_shapes(s),
        Agent::Codex => codex_shapes(s),
        Agent::Qwen => qwen_shapes(s),
        Agent::Copilot => copilot_shapes(s),
        Agent::Gemini => gemini_shapes(s),
        Agent::Opencode | Agent::Kilo => opencode_shapes(s),
        Agent::Aider => aider_shapes(s),
        Agent::Pi => pi_shapes(s),
        Agent::Kimi => kimi_shapes(s),
        Agent::Droid => droid_shapes(s),
        Agent::Cline => cline_shapes(s),
    }
}

fn whitelist_of(agent: Agent) -> (&'static [&'static str], &'static [&'static str]) {
    let w = &agents::of(agent).spec().flags;
    (w.bools, w.valued)
}

fn agent_flags(agent: Agent, args: &[String]) -> (Vec<String>, Vec<String>) {
    agents::of(agent).spec().flags(args)
}

/// `kept` is whitelisted flags only, every value plain, and every element came whole from `args`
/// (as an element, or as one half of a `--name=value` element): nothing split, joined or made up.
fn assert_kept_is_clean(agent: Agent, args: &[String], kept: &[String]) {
    let (bools, valued) = whitelist_of(agent);
    let whole = |x: &str| args.iter().any(|a| a == x);
    let mut i = 0;
    while i < kept.len() {
        let k = kept[i].as_str();
        if bools.contains(&k) {
            assert!(whole(k), "{args:?} → {kept:?}: {k:?} made up");
            i += 1;
        } else if valued.contains(&k) {
            let v = kept
                .get(i + 1)
                .unwrap_or_else(|| panic!("{args:?} → {kept:?}: no value"));
            assert!(
                agents::plain_value(v),
                "{args:?} → {kept:?}: value {v:?} not plain"
            );
            let joined = format!("{k}={v}");
            assert!(
                (whole(k) && whole(v)) || whole(&joined),
                "{args:?} → {kept:?}: {k:?} {v:?} were not in argv"
            );
            i += 2;
        } else {
            panic!("{args:?} → {kept:?}: {k:?} is not whitelisted");
        }
    }
}

#[test]
fn whitelists_drop_hostile_flags_and_values() {
    let sb = Sandbox::new();
    for s in &sb.corpus {
        for agent in Agent::ALL {
            let (bools, valued) = whitelist_of(agent);
            for args in shapes(agent, s) {
                let (kept, _) = agent_flags(agent, &args);
                assert_kept_is_clean(agent, &args, &kept);
            }
            // Documented: a value failing `plain_value` is dropped and its flag listed as dropped.
            for name in valued {
                let (kept, dropped) = agent_flags(agent, &strs(&[name, s]));
                let (kept_inline, _) = agent_flags(agent, &[format!("{name}={s}")]);
                if agents::plain_value(s) {
                    assert_eq!(kept, strs(&[name, s]), "{name} {s:?}");
                    assert!(dropped.is_empty(), "{name} {s:?}");
                } else {
                    assert!(kept.is_empty(), "{name} {s:?} kept {kept:?}");
                    assert_eq!(dropped, strs(&[name]), "{name} {s:?}");
                }
                if name.starts_with("--") {
                    let want = if agents::plain_value(s) {
                        strs(&[name, s])
                    } else {
                        vec![]
                    };
                    assert_eq!(kept_inline, want, "{name}={s:?}");
                }
            }
            // A bare string is kept only when it is exactly a whitelisted boolean flag, or
            // `--valued=<plain value>`.
            let (kept, _) = agent_flags(agent, std::slice::from_ref(s));
            let expected_inline = s
                .split_once('=')
                .filter(|(n, v)| {
                    n.starts_with("--") && valued.contains(n) && agents::plain_value(v)
                })
                .map(|(n, v)| strs(&[n, v]));
            if bools.contains(&s.as_str()) {
                assert_eq!(kept, vec![s.clone()], "{s:?}");
            } else if let Some(want) = expected_inline {
                assert_eq!(kept, want, "{s:?}");
            } else {
                assert!(kept.is_empty(), "{agent:?} kept bare {s:?} as {kept:?}");
            }
        }
        // Session flags and config overrides are never replayed, whatever follows them.
        for f in ["--resume", "-r", "--session-id"] {
            assert!(claude::SPEC.flags(&strs(&[f, s])).0.is_empty(), "{f} {s:?}");
            assert!(
                claude::SPEC.flags(&[format!("{f}={s}")]).0.is_empty(),
                "{f}={s:?}"
            );
        }
        for f in ["-c", "--config", "-C", "--cd"] {
            let (kept, dropped) = codex::SPEC.flags(&strs(&[f, s]));
            assert!(kept.is_empty(), "{f} {s:?} kept {kept:?}");
            assert!(!dropped.contains(s), "{f} {s:?}: the value is never echoed");
        }
    }
    // What the whitelist documents as kept, even though it sounds dangerous: the user started the
    // agent that way, and resuming it without them would change its permissions silently.
    assert_eq!(
        claude::SPEC
            .flags(&strs(&["--dangerously-skip-permissions"]))
            .0,
        strs(&["--dangerously-skip-permissions"])
    );
    assert_eq!(
        codex::SPEC
            .flags(&strs(&["--dangerously-bypass-approvals-and-sandbox"]))
            .0,
        strs(&["--dangerously-bypass-approvals-and-sandbox"])
    );
    // And what it documents as dropped.
    assert!(claude::SPEC
        .flags(&strs(&["--mcp-config", "/tmp/evil.json"]))
        .0
        .is_empty());
    assert!(codex::SPEC
        .flags(&strs(&["-c", "sandbox_mode=\"danger-full-access\""]))
        .0
        .is_empty());
    sb.verify();
}

/// The argv `resume_argv` builds: program, the session (rebuilt from the id), then the flags
/// that pass the whitelist again, each one whole.
fn assert_resume_argv_shape(e: &Entry) -> Vec<String> {
    let argv = agents::resume_argv(e);
    let (kept, _) = agent_flags(e.agent, &e.flags);
    let flags: &[String] = match e.agent {
        Agent::Claude => {
            assert_eq!(
                argv[..3],
                [e.program.clone(), "--resume".into(), SID.into()],
                "{e:?}"
            );
            &argv[3..]
        }
        Agent::Codex => {
            assert_eq!(argv[..2], [e.program.clone(), "resume".into()], "{e:?}");
            assert_eq!(argv.last().map(String::as_str), Some(SID));
            &argv[2..argv.len() - 1]
        }
        Agent::Qwen | Agent::Copilot | Agent::Gemini | Agent::Droid => {
            assert_eq!(
                argv[..3],
                [e.program.clone(), "--resume".into(), SID.into()],
                "{e:?}"
            );
            &argv[3..]
        }
        Agent::Opencode | Agent::Kilo => {
            assert_eq!(
                argv[..3],
                [e.program.clone(), "-s".into(), SID.into()],
                "{e:?}"
            );
            &argv[3..]
        }
        // The flags name the session (its history file); the restore flag comes last.
        Agent::Aider => {
            assert_eq!(argv[0], e.program, "{e:?}");
            assert_eq!(
                argv.last().map(String::as_str),
                Some("--restore-chat-history")
            );
            &argv[1..argv.len() - 1]
        }
        Agent::Pi => {
            assert_eq!(
                argv[..3],
                [e.program.clone(), "--session".into(), SID.into()],
                "{e:?}"
            );
            &argv[3..]
        }
        Agent::Kimi => {
            assert_eq!(
                argv[..3],
                [e.program.clone(), "-S".into(), SID.into()],
                "{e:?}"
            );
            &argv[3..]
        }
        Agent::Cline => {
            assert_eq!(
                argv[..3],
                [e.program.clone(), "--id".into(), SID.into()],
                "{e:?}"
            );
            &argv[3..]
        }
    };
    assert_eq!(flags, kept.as_slice());
    assert_kept_is_clean(e.agent, &e.flags, flags);
    argv
}

#[test]
fn resume_argv_keeps_every_value_whole() {
    let sb = Sandbox::new();
    for s in &sb.corpus {
        for agent in Agent::ALL {
            for flags in shapes(agent, s) {
                let mut e = baseline(agent);
                e.flags = flags;
                e.cwd = s.clone();
                e.place.title = s.clone();
                e.place.pane_title = s.clone();
                e.place.window_name = s.clone();
                e.dropped_flags = vec![s.clone()];
                assert_resume_argv_shape(&e);
            }
            // The program token is passed as it is, as one element.
            let mut e = baseline(agent);
            e.program = s.clone();
            assert_eq!(agents::resume_argv(&e)[0], *s);
        }
    }
    sb.verify();
}

#[test]
fn resume_command_line_round_trips_through_shlex() {
    let sb = Sandbox::new();
    for s in &sb.corpus {
        for agent in Agent::ALL {
            for flags in shapes(agent, s) {
                let mut e = baseline(agent);
                e.flags = flags;
                e.cwd = format!("/w/{s}");
                e.program = format!("/opt/{s}/{}", agent.as_str());
                let line = agents::resume_command_line(&e);
                let words = shlex::split(&line).unwrap_or_else(|| panic!("{line:?}"));
                let mut want = strs(&["cd", "--", &e.cwd, "&&"]);
                want.extend(agents::resume_argv(&e));
                assert_eq!(words, want, "{line:?}");
            }
        }
    }
    sb.verify();
}

/// Writes `pwd -P`, NUL, then each argument NUL-terminated, to `$PARK_TEST_OUT`.
const RECORDER: &str = "#!/bin/sh\n\
pwd -P > \"$PARK_TEST_OUT\" || exit 97\n\
printf '\\000' >> \"$PARK_TEST_OUT\"\n\
for a in \"$@\"; do printf '%s' \"$a\" >> \"$PARK_TEST_OUT\"; printf '\\000' >> \"$PARK_TEST_OUT\"; done\n";

fn shells() -> Vec<&'static str> {
    [
        "/bin/sh",
        "/bin/bash",
        "/usr/bin/bash",
        "/bin/dash",
        "/usr/bin/zsh",
        "/bin/zsh",
    ]
    .into_iter()
    .filter(|p| Path::new(p).exists())
    .fold(vec![], |mut v: Vec<&str>, p| {
        let real = fs::canonicalize(p).unwrap();
        if !v.iter().any(|q| fs::canonicalize(q).unwrap() == real) {
            v.push(p);
        }
        v
    })
}

/// The line `park show` prints, pasted into a shell: it runs the recorded program in the recorded
/// cwd with exactly `resume_argv`, and nothing else runs. The program is a recorder named like the
/// agent in a directory named by the hostile string; the cwd is a real directory named by it.
#[test]
fn resume_command_line_runs_exactly_resume_argv_in_a_shell() {
    let mut sb = Sandbox::new();
    let scratch = sb.fixture_dir("scratch");
    let out = scratch.join("argv");
    let run_dir = sb.fixture_dir("scratch/run");
    sb.scratch.push(scratch.clone());
    let cwds = sb.fixture_dir("cwds");
    let bins = sb.fixture_dir("bins");
    let plain_cwd = sb.fixture_dir("cwds-plain/plain");
    // One recorder, hard-linked under each agent's name: written by a child process, so no fd of
    // this threaded test process points at it when it runs (ETXTBSY otherwise, if another test
    // thread forks while the file is open for writing).
    let recorder = scratch.join("recorder");
    let mut w = std::process::Command::new("sh")
        .args(["-c", "cat > \"$1\" && chmod 755 \"$1\"", "sh"])
        .arg(&recorder)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut w.stdin.take().unwrap(), RECORDER.as_bytes()).unwrap();
    assert!(w.wait().unwrap().success());
    let mut named = 0;
    let mut programs = BTreeMap::new();
    let mut dirs = BTreeMap::new();
    for (i, s) in sb.corpus.iter().enumerate() {
        let (cwd, bin) = if creatable_name(s) && fs::create_dir(cwds.join(s)).is_ok() {
            named += 1;
            let bin = bins.join(s);
            fs::create_dir(&bin).unwrap();
            (cwds.join(s), bin)
        } else {
            let bin = bins.join(format!("plain-{i}"));
            fs::create_dir(&bin).unwrap();
            (plain_cwd.clone(), bin)
        };
        for agent in Agent::ALL {
            fs::hard_link(&recorder, bin.join(agent.as_str())).unwrap();
        }
        dirs.insert(s.clone(), cwd);
        programs.insert(s.clone(), bin);
    }
    assert!(
        named >= 60,
        "only {named} hostile directory names could be created"
    );
    sb.seal();
    let shells = shells();
    assert!(!shells.is_empty());
    let mut runs = 0;
    for s in &sb.corpus {
        for agent in Agent::ALL {
            for flags in shapes(agent, s) {
                let mut e = baseline(agent);
                e.flags = flags;
                e.cwd = dirs[s].to_str().unwrap().to_string();
                e.program = programs[s]
                    .join(agent.as_str())
                    .to_str()
                    .unwrap()
                    .to_string();
                e.place.title = s.clone();
                let argv = assert_resume_argv_shape(&e);
                let line = agents::resume_command_line(&e);
                for sh in &shells {
                    let _ = fs::remove_file(&out);
                    let st = Command::new(sh)
                        .arg("-c")
                        .arg(&line)
                        .env_clear()
                        .env("PATH", "/usr/bin:/bin")
                        .env("HOME", &run_dir)
                        .env("PARK_TEST_OUT", &out)
                        .current_dir(&run_dir)
                        .stdin(std::process::Stdio::null())
                        .output()
                        .unwrap();
                    assert!(
                        st.status.success(),
                        "{sh} -c {line:?}: {:?} {}",
                        st.status,
                        String::from_utf8_lossy(&st.stderr)
                    );
                    assert!(
                        fs::symlink_metadata(&sb.mark).is_err(),
                        "{sh} -c {line:?} executed something"
                    );
                    let rec = fs::read(&out)
                        .unwrap_or_else(|_| panic!("{sh}: {line:?} did not run the program"));
                    let mut parts: Vec<&[u8]> = rec.split(|&b| b == 0).collect();
                    assert_eq!(parts.pop(), Some(&b""[..]), "NUL-terminated");
                    let pwd = parts.remove(0);
                    assert_eq!(
                        pwd.strip_suffix(b"\n"),
                        Some(e.cwd.as_bytes()),
                        "{sh}: {line:?} ran elsewhere"
                    );
                    let got: Vec<&[u8]> = parts;
                    let want: Vec<&[u8]> = argv[1..].iter().map(|a| a.as_bytes()).collect();
                    assert_eq!(got, want, "{sh} -c {line:?}");
                    runs += 1;
                }
            }
        }
    }
    eprintln!(
        "resume_command_line: {runs} shell runs over {} shells, {named} hostile cwd names",
        shells.len()
    );
    let _ = fs::remove_file(&out);
    sb.verify();
}

#[test]
fn resume_argv_never_takes_a_flag_as_session_id() {
    let mut e = baseline(Agent::Codex);
    e.session_id = "--dangerously-bypass-approvals-and-sandbox".into();
    let argv = agents::resume_argv(&e);
    assert!(
        !argv.contains(&e.session_id),
        "{argv:?}: a flag never recorded in e.flags reached argv"
    );
}

#[test]
fn resume_command_line_with_a_dash_cwd_runs_in_that_cwd() {
    let sb = Sandbox::new();
    let run_dir = sb.fixture_dir("run");
    fs::create_dir(run_dir.join("-P")).unwrap();
    let mut e = baseline(Agent::Claude);
    e.cwd = "-P".into();
    e.program = "/bin/true".into();
    let full = agents::resume_command_line(&e);
    let line = format!("{} && pwd", full.split_once(" && ").unwrap().0);
    let out = Command::new("/bin/sh")
        .arg("-c")
        .arg(&line)
        .env_clear()
        .env("HOME", &sb.root)
        .env("PATH", "/usr/bin:/bin")
        .current_dir(&run_dir)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim_end(),
        run_dir.join("-P").to_str().unwrap(),
        "{line:?}"
    );
}

#[test]
fn restorable_refuses_hostile_programs_and_accepts_hostile_cwd_names() {
    let mut sb = Sandbox::new();
    let cfg = sb.fixture_dir("cfg/.claude");
    let cwds = sb.fixture_dir("cwds");
    // Real cwd directories with hostile names, each with the transcript where Claude keeps it.
    let mut cases = vec![];
    for s in &sb.corpus {
        if creatable_name(s) && fs::create_dir(cwds.join(s)).is_ok() {
            let cwd = cwds.join(s).to_str().unwrap().to_string();
            let t = claude::transcript_path(&cfg, &cwd, SID);
            fs::create_dir_all(t.parent().unwrap()).unwrap();
            fs::write(&t, b"{}\n").unwrap();
            cases.push(cwd);
        }
    }
    sb.seal();
    for s in &sb.corpus {
        for agent in Agent::ALL {
            let mut e = baseline(agent);
            e.program = s.clone();
            e.cwd = cwds.to_str().unwrap().to_string();
            e.config_dir = Some(cfg.to_str().unwrap().to_string());
            let err = unpark::restorable(&e).unwrap_err();
            assert!(
                err.contains(&format!("is not {}", agent.as_str())),
                "{s:?}: {err}"
            );
        }
        // A hostile cwd that does not exist is refused, not created.
        let mut e = baseline(Agent::Claude);
        e.cwd = s.clone();
        e.config_dir = Some(cfg.to_str().unwrap().to_string());
        if !Path::new(s).is_dir() {
            assert!(unpark::restorable(&e).is_err(), "{s:?}");
        }
    }
    for cwd in &cases {
        let mut e = baseline(Agent::Claude);
        e.cwd = cwd.clone();
        e.config_dir = Some(cfg.to_str().unwrap().to_string());
        assert_eq!(unpark::restorable(&e), Ok(()), "{cwd:?}");
        let t = agents::expected_transcript(&e).unwrap();
        assert!(inside(&cfg.join("projects"), &t), "{cwd:?}");
    }
    sb.verify();
}

#[test]
fn config_env_passes_the_recorded_dir_as_one_value() {
    let sb = Sandbox::new();
    for s in &sb.corpus {
        for (agent, var, name) in [
            (Agent::Claude, "CLAUDE_CONFIG_DIR", "CLAUDE_CONFIG_DIR"),
            (Agent::Codex, "CODEX_HOME", "CODEX_HOME"),
            (Agent::Claude, "HOME", "HOME"),
        ] {
            let mut e = baseline(agent);
            e.config_dir = Some(s.clone());
            e.config_var = Some(var.into());
            let env = unpark::config_env(&e);
            let want_value = if var == "HOME" {
                Path::new(s)
                    .parent()
                    .map(|p| p.to_string_lossy().into_owned())
            } else {
                Some(s.clone())
            };
            match env.as_slice() {
                [] => {}
                [(k, v)] => {
                    assert_eq!(k, name, "{s:?}");
                    assert_eq!(Some(v), want_value.as_ref(), "{s:?}");
                }
                more => panic!("{s:?} → {more:?}"),
            }
        }
    }
    sb.verify();
}

// ---- ledger contents -----------------------------------------------------------------------

#[test]
fn hostile_fields_round_trip_through_the_ledger_and_stay_escaped() {
    let mut sb = Sandbox::new();
    sb.seal();
    let l = sb.ledger();
    for s in &sb.corpus {
        for agent in Agent::ALL {
            let mut e = baseline(agent);
            e.session_source = s.clone();
            e.cwd = s.clone();
            e.program = s.clone();
            e.flags = vec![s.clone(), "--model".into(), s.clone()];
            e.dropped_flags = vec![s.clone()];
            e.transcript = Some(s.clone());
            e.config_dir = Some(s.clone());
            e.config_var = Some(s.clone());
            e.place.server = s.clone();
            e.place.pane = s.clone();
            e.place.session = s.clone();
            e.place.window_name = s.clone();
            e.place.title = s.clone();
            e.place.pane_title = s.clone();
            e.last_error = Some(s.clone());
            e.handoff_pane = Some(s.clone());
            l.save(&e).unwrap();
            assert_eq!(l.load(&e.id).unwrap().as_ref(), Some(&e), "{s:?}");
            let p = l.parked_dir().join(format!("{}.json", e.id));
            assert_eq!(mode(&p), 0o600);
            // Printing a ledger file cannot drive the terminal: every C0 control is escaped.
            let raw = fs::read(&p).unwrap();
            assert!(
                raw.iter().all(|&b| b >= 0x20 || b == b'\n'),
                "{s:?}: raw control byte in {}",
                p.display()
            );
        }
    }
    let (ok, bad) = l.all();
    // One entry per agent: each save of an agent replaced its previous one.
    assert_eq!((ok.len(), bad.len()), (Agent::ALL.len(), 0));
    sb.verify();
}

#[test]
fn entries_with_hostile_session_ids_do_not_load() {
    let mut sb = Sandbox::new();
    sb.seal();
    let l = sb.ledger();
    l.ensure().unwrap();
    for s in &sb.corpus {
        let mut e = baseline(Agent::Codex);
        e.session_id = s.clone();
        // Written by hand (or by anything else) under a valid entry id.
        let p = l.parked_dir().join(format!("{}.json", e.id));
        let bytes = serde_json::to_vec(&e).unwrap();
        fs::write(&p, &bytes).unwrap();
        match l.load(&e.id) {
            Err(LedgerError::Corrupt(q, why)) => {
                assert_eq!(q, p);
                assert!(why.contains("invalid session id"), "{s:?}: {why}");
            }
            other => panic!("{s:?}: {other:?}"),
        }
        let (ok, bad) = l.all();
        assert!(ok.is_empty() && bad.len() == 1, "{s:?}");
        assert_eq!(
            fs::read(&p).unwrap(),
            bytes,
            "a corrupt entry is kept as is"
        );
    }
    sb.verify();
}

// ---- 4. ledger dir hygiene -----------------------------------------------------------------

#[test]
fn ledger_dirs_are_0700_files_0600_and_no_tmp_is_left() {
    let mut sb = Sandbox::new();
    sb.seal();
    let l = sb.ledger();
    let e = baseline(Agent::Claude);
    l.claim(&e).unwrap();
    for d in [
        sb.home.clone(),
        l.parked_dir(),
        sb.home.join("locks"),
        sb.home.join("archive"),
    ] {
        assert_eq!(mode(&d), 0o700, "{}", d.display());
    }
    let p = l.parked_dir().join(format!("{}.json", e.id));
    assert_eq!(mode(&p), 0o600);
    // A world-readable entry rewritten by save comes back private.
    fs::set_permissions(&p, fs::Permissions::from_mode(0o644)).unwrap();
    for _ in 0..3 {
        l.save(&e).unwrap();
        assert_eq!(mode(&p), 0o600);
    }
    // write_atomic's tmp files are gone after success.
    let left: Vec<_> = fs::read_dir(l.parked_dir())
        .unwrap()
        .flatten()
        .map(|d| d.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp-") || n.starts_with('.'))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    // Locks and archive files are private too.
    let src = sb.home.join("src.jsonl");
    fs::write(&src, b"{\"a\":1}\n").unwrap();
    let mut e2 = e.clone();
    e2.transcript = Some(src.to_str().unwrap().into());
    let dst = archive::archive(&sb.home, &e2, true)
        .unwrap()
        .dir
        .join("transcript.jsonl");
    assert_eq!(mode(&dst), 0o600);
    assert_eq!(mode(dst.parent().unwrap()), 0o700);
    assert_eq!(mode(&dst.with_file_name("meta.json")), 0o600);
    let lk = match lock::try_lock(&sb.home, &lock::key(&["pane", "/tmp/s", "%1"])).unwrap() {
        lock::TryLock::Acquired(l) => l,
        lock::TryLock::Held(o) => panic!("held by {o}"),
    };
    assert_eq!(mode(&lk.path), 0o600);
    assert!(lk.path.starts_with(sb.home.join("locks")));
    sb.verify();
}

#[test]
fn existing_loose_ledger_dirs_are_tightened() {
    let sb = Sandbox::new();
    let l = sb.ledger();
    fs::create_dir_all(l.parked_dir()).unwrap();
    fs::set_permissions(&sb.home, fs::Permissions::from_mode(0o755)).unwrap();
    fs::set_permissions(l.parked_dir(), fs::Permissions::from_mode(0o777)).unwrap();
    l.claim(&baseline(Agent::Claude)).unwrap();
    for d in [sb.home.clone(), l.parked_dir()] {
        assert_eq!(mode(&d), 0o700, "{} is {:o}", d.display(), mode(&d));
    }
}

#[test]
fn planted_tmp_symlink_is_not_written_through() {
    let mut sb = Sandbox::new();
    let outside = sb.fixture_dir("outside");
    let victim = outside.join("victim");
    fs::write(&victim, b"untouched").unwrap();
    let l = sb.ledger();
    l.ensure().unwrap();
    let e = baseline(Agent::Claude);
    let p = l.parked_dir().join(format!("{}.json", e.id));
    // Temp names are `.<name>.tmp-<pid>-<n>` (n counts this process's writes): plant links at
    // every name the next writes can take.
    let dangling = outside.join("created-through-dangling-link");
    for n in 0..1500 {
        let pid = std::process::id();
        symlink(
            &victim,
            l.parked_dir().join(format!(".{}.json.tmp-{pid}-{n}", e.id)),
        )
        .unwrap();
        symlink(&dangling, sb.home.join(format!(".x.tmp-{pid}-{n}"))).unwrap();
    }
    sb.seal();
    l.save(&e).unwrap();
    write_atomic(&sb.home.join("x"), b"data").unwrap();
    assert_eq!(fs::read(&victim).unwrap(), b"untouched");
    assert!(fs::symlink_metadata(&dangling).is_err());
    assert_eq!(mode(&p), 0o600);
    assert!(!fs::symlink_metadata(&p).unwrap().file_type().is_symlink());
    assert_eq!(fs::read(sb.home.join("x")).unwrap(), b"data");
    sb.verify();
}

#[test]
fn symlinked_park_home_or_parked_dir_refuses_writes() {
    for link in ["home", "parked"] {
        let mut sb = Sandbox::new();
        let target = sb.fixture_dir("link-target");
        fs::write(target.join("keep"), b"k").unwrap();
        let l = sb.ledger();
        match link {
            "home" => symlink(&target, &sb.home).unwrap(),
            _ => {
                fs::create_dir_all(&sb.home).unwrap();
                symlink(&target, l.parked_dir()).unwrap();
            }
        }
        sb.seal();
        let e = baseline(Agent::Claude);
        assert!(matches!(l.ensure(), Err(LedgerError::Symlink(_))), "{link}");
        assert!(
            matches!(l.claim(&e), Err(LedgerError::Symlink(_))),
            "{link}"
        );
        assert!(matches!(l.save(&e), Err(LedgerError::Symlink(_))), "{link}");
        if link == "home" {
            assert!(matches!(
                lock::try_lock(&sb.home, "k"),
                Err(LedgerError::Symlink(_))
            ));
        }
        let mut t = BTreeMap::new();
        walk(&target, &mut t);
        assert_eq!(
            t.len(),
            2,
            "{link}: nothing written to the link target: {t:?}"
        );
        sb.verify();
    }
}

fn sandbox_with_symlinked_parked() -> (Sandbox, Ledger, PathBuf, Vec<u8>) {
    let mut sb = Sandbox::new();
    let target = sb.fixture_dir("foreign-parked");
    let e = baseline(Agent::Claude);
    let foreign = target.join(format!("{}.json", e.id));
    let bytes = serde_json::to_vec(&e).unwrap();
    fs::write(&foreign, &bytes).unwrap();
    let l = sb.ledger();
    fs::create_dir_all(&sb.home).unwrap();
    symlink(&target, l.parked_dir()).unwrap();
    sb.seal();
    (sb, l, foreign, bytes)
}

#[test]
fn load_and_all_do_not_follow_a_symlinked_parked_dir() {
    let (sb, l, _, _) = sandbox_with_symlinked_parked();
    let id = entry_id(Agent::Claude, SID);
    let r = l.load(&id);
    assert!(
        matches!(r, Err(LedgerError::Symlink(_))),
        "load read through the link: {:?}",
        r.map(|e| e.map(|e| e.id))
    );
    let (ok, _) = l.all();
    assert!(
        ok.is_empty(),
        "all() read through the link: {:?}",
        ok.iter().map(|e| &e.id).collect::<Vec<_>>()
    );
    sb.verify();
}

#[test]
fn remove_does_not_delete_through_a_symlinked_parked_dir() {
    let (sb, l, foreign, bytes) = sandbox_with_symlinked_parked();
    let _ = l.remove(&entry_id(Agent::Claude, SID));
    assert!(
        fs::read(&foreign).is_ok_and(|b| b == bytes),
        "{} (outside PARK_HOME) was deleted through the link",
        foreign.display()
    );
    sb.verify();
}

#[test]
fn symlinked_entry_file_is_refused_and_its_target_untouched() {
    let mut sb = Sandbox::new();
    let outside = sb.fixture_dir("outside");
    let l = sb.ledger();
    l.ensure().unwrap();
    let e = baseline(Agent::Claude);
    let victim = outside.join("victim.json");
    let victim_bytes = serde_json::to_vec(&e).unwrap();
    fs::write(&victim, &victim_bytes).unwrap();
    let p = l.parked_dir().join(format!("{}.json", e.id));
    symlink(&victim, &p).unwrap();
    // And a dangling one for a second id.
    let e2 = baseline(Agent::Codex);
    let never = outside.join("never-created.json");
    let p2 = l.parked_dir().join(format!("{}.json", e2.id));
    symlink(&never, &p2).unwrap();
    sb.seal();

    assert!(matches!(l.load(&e.id), Err(LedgerError::Symlink(_))));
    assert!(matches!(l.save(&e), Err(LedgerError::Symlink(_))));
    assert!(l.claim(&e).is_err());
    assert!(matches!(l.load(&e2.id), Err(LedgerError::Symlink(_))));
    assert!(matches!(l.save(&e2), Err(LedgerError::Symlink(_))));
    assert!(l.claim(&e2).is_err());
    let (ok, bad) = l.all();
    assert!(ok.is_empty());
    assert_eq!(
        bad.iter()
            .filter(|b| matches!(b, LedgerError::Symlink(_)))
            .count(),
        2
    );
    assert_eq!(fs::read(&victim).unwrap(), victim_bytes);
    assert!(
        fs::symlink_metadata(&never).is_err(),
        "nothing created through a dangling link"
    );
    // remove takes away the link, never its target.
    l.remove(&e.id).unwrap();
    assert!(fs::symlink_metadata(&p).is_err());
    assert_eq!(fs::read(&victim).unwrap(), victim_bytes);
    sb.verify();
}

#[test]
fn corrupt_entries_are_reported_and_kept_byte_identical() {
    let mut sb = Sandbox::new();
    sb.seal();
    let l = sb.ledger();
    l.ensure().unwrap();
    let mut other_id = baseline(Agent::Claude);
    other_id.id = "claude-other".into();
    let mut newer = baseline(Agent::Codex);
    newer.schema = 99;
    let files: Vec<(String, Vec<u8>)> = vec![
        ("claude-notjson".into(), b"{not json".to_vec()),
        ("claude-empty".into(), vec![]),
        ("claude-binary".into(), (0u8..=255).collect()),
        (
            "claude-escape".into(),
            b"\x1b]0;pwned\x07\x1b[2J$(touch MARK)".to_vec(),
        ),
        (
            "claude-mismatch".into(),
            serde_json::to_vec(&other_id).unwrap(),
        ),
        (newer.id.clone(), serde_json::to_vec(&newer).unwrap()),
    ];
    for (id, b) in &files {
        fs::write(l.parked_dir().join(format!("{id}.json")), b).unwrap();
    }
    for (id, b) in &files {
        let p = l.parked_dir().join(format!("{id}.json"));
        match l.load(id) {
            Err(LedgerError::Corrupt(q, _)) => assert_eq!(q, p),
            other => panic!("{id}: {other:?}"),
        }
        assert!(l
            .claim(&Entry {
                id: id.clone(),
                ..baseline(Agent::Claude)
            })
            .is_err());
        assert_eq!(&fs::read(&p).unwrap(), b, "{id} kept byte-identical");
    }
    let (ok, bad) = l.all();
    assert!(ok.is_empty());
    assert_eq!(bad.len(), files.len());
    assert!(bad.iter().all(|b| matches!(b, LedgerError::Corrupt(..))));
    for (id, b) in &files {
        assert_eq!(
            &fs::read(l.parked_dir().join(format!("{id}.json"))).unwrap(),
            b
        );
    }
    sb.verify();
}

// ---- locks ---------------------------------------------------------------------------------

#[test]
fn hostile_lock_keys_stay_in_the_locks_dir() {
    let mut sb = Sandbox::new();
    sb.seal();
    let locks = sb.home.join("locks");
    for s in &sb.corpus {
        for key in [
            lock::key(&["session", s]),
            lock::key(&["pane", s, s]),
            lock::key(&[s]),
        ] {
            assert!(!key.contains('/') && key.len() <= 120, "{s:?} → {key:?}");
            let l = match lock::try_lock(&sb.home, &key).unwrap() {
                lock::TryLock::Acquired(l) => l,
                lock::TryLock::Held(o) => panic!("{key:?} held by {o}"),
            };
            assert_eq!(l.path.parent(), Some(locks.as_path()), "{s:?}");
            assert!(inside(&locks, &l.path), "{s:?}");
            assert_eq!(mode(&l.path), 0o600);
        }
    }
    for (p, n) in sb.home_tree() {
        assert!(
            p.starts_with(&locks) || p == sb.home,
            "{} {n:?}",
            p.display()
        );
    }
    sb.verify();
}

#[test]
fn symlinked_locks_dir_or_lock_file_is_refused() {
    // locks/ itself is a link.
    let mut sb = Sandbox::new();
    let target = sb.fixture_dir("locks-target");
    fs::create_dir_all(&sb.home).unwrap();
    symlink(&target, sb.home.join("locks")).unwrap();
    sb.seal();
    assert!(matches!(
        lock::try_lock(&sb.home, "pane_x"),
        Err(LedgerError::Symlink(_))
    ));
    assert_eq!(fs::read_dir(&target).unwrap().count(), 0);
    sb.verify();

    // One lock file is a link (to a file, and dangling).
    let mut sb = Sandbox::new();
    let outside = sb.fixture_dir("outside");
    let victim = outside.join("victim");
    fs::write(&victim, b"untouched").unwrap();
    let never = outside.join("never");
    fs::create_dir_all(sb.home.join("locks")).unwrap();
    symlink(&victim, sb.home.join("locks/a.lock")).unwrap();
    symlink(&never, sb.home.join("locks/b.lock")).unwrap();
    sb.seal();
    for key in ["a", "b"] {
        match lock::try_lock(&sb.home, key) {
            Err(LedgerError::Io(_, err)) => {
                assert_eq!(err.raw_os_error(), Some(libc::ELOOP), "{key}: O_NOFOLLOW")
            }
            Err(other) => panic!("{key}: {other}"),
            Ok(_) => panic!("{key}: locked through a symlink"),
        }
    }
    assert_eq!(fs::read(&victim).unwrap(), b"untouched");
    assert!(fs::symlink_metadata(&never).is_err());
    sb.verify();
}

#[test]
fn try_lock_with_a_raw_traversal_key_stays_in_park_home() {
    let mut sb = Sandbox::new();
    sb.seal();
    let _ = lock::try_lock(&sb.home, "../../escaped");
    sb.verify();
}

// ---- archive -------------------------------------------------------------------------------

fn archive_entry(src: &Path) -> Entry {
    let mut e = baseline(Agent::Claude);
    e.transcript = Some(src.to_str().unwrap().into());
    e
}

#[test]
fn archive_meta_keeps_hostile_fields_as_data() {
    let mut sb = Sandbox::new();
    let src_dir = sb.fixture_dir("src");
    let src = src_dir.join("t.jsonl");
    fs::write(&src, b"{\"type\":\"user\"}\n").unwrap();
    sb.seal();
    for s in &sb.corpus {
        let mut e = archive_entry(&src);
        e.cwd = s.clone();
        e.place.title = s.clone();
        e.flags = vec![s.clone()];
        e.place.window_name = s.clone();
        let dst = archive::archive(&sb.home, &e, true)
            .unwrap()
            .dir
            .join("transcript.jsonl");
        assert!(inside(&sb.home.join("archive").join(SID), &dst));
        let meta: serde_json::Value =
            serde_json::from_slice(&fs::read(dst.with_file_name("meta.json")).unwrap()).unwrap();
        assert_eq!(meta["cwd"], serde_json::json!(s));
        assert_eq!(meta["place"]["title"], serde_json::json!(s));
        assert_eq!(meta["flags"], serde_json::json!([s]));
    }
    sb.verify();
}

#[test]
fn archive_reads_hostile_transcript_paths_and_writes_only_in_park_home() {
    let mut sb = Sandbox::new();
    let src_dir = sb.fixture_dir("transcripts");
    let mut named = vec![];
    for s in &sb.corpus {
        if creatable_name(s) && fs::write(src_dir.join(s), format!("{s:?}\n")).is_ok() {
            named.push(s.clone());
        }
    }
    assert!(named.len() >= 60);
    sb.seal();
    // A transcript whose file name is the hostile string is copied, byte for byte.
    for s in &named {
        let src = src_dir.join(s);
        let dst = archive::archive(&sb.home, &archive_entry(&src), true)
            .unwrap()
            .dir
            .join("transcript.jsonl");
        assert_eq!(fs::read(&dst).unwrap(), fs::read(&src).unwrap(), "{s:?}");
        assert_eq!(
            dst,
            sb.home.join("archive").join(SID).join("transcript.jsonl")
        );
    }
    // Raw hostile strings as transcript paths: read (or refused), never written.
    for s in &sb.corpus {
        let mut e = baseline(Agent::Claude);
        e.transcript = Some(s.clone());
        let _ = archive::archive(&sb.home, &e, true);
    }
    for (p, n) in sb.home_tree() {
        assert!(
            // The archive index is upserted under a lock: `locks/` is park's too.
            p == sb.home
                || p.starts_with(sb.home.join("archive"))
                || p.starts_with(sb.home.join("locks")),
            "{} {n:?}",
            p.display()
        );
    }
    sb.verify();
}

#[test]
fn archive_refuses_symlinks_on_the_write_side() {
    let src_bytes = b"{\"type\":\"user\",\"n\":1}\n".to_vec();
    // (what is a link, relative to $PARK_HOME)
    for which in [
        "archive",
        "archive/<sid>",
        "archive/<sid>/transcript.jsonl",
        "archive/<sid>/meta.json",
    ] {
        let mut sb = Sandbox::new();
        let src = sb.fixture_dir("src").join("t.jsonl");
        fs::write(&src, &src_bytes).unwrap();
        let outside = sb.fixture_dir("outside");
        let victim = outside.join("victim");
        fs::write(&victim, b"untouched").unwrap();
        let link = sb.home.join(which.replace("<sid>", SID));
        fs::create_dir_all(link.parent().unwrap()).unwrap();
        if which.ends_with(".json") || which.ends_with(".jsonl") {
            symlink(&victim, &link).unwrap();
        } else {
            symlink(&outside, &link).unwrap();
        }
        sb.seal();
        let r = archive::archive(&sb.home, &archive_entry(&src), true);
        assert!(matches!(r, Err(LedgerError::Symlink(_))), "{which}: {r:?}");
        assert_eq!(fs::read(&victim).unwrap(), b"untouched", "{which}");
        assert_eq!(fs::read_dir(&outside).unwrap().count(), 1, "{which}");
        sb.verify();
    }
}

#[test]
fn archive_of_a_symlinked_transcript_copies_it_and_leaves_the_target_alone() {
    let mut sb = Sandbox::new();
    let outside = sb.fixture_dir("outside");
    let real = outside.join("real.jsonl");
    fs::write(&real, b"{\"type\":\"user\"}\n").unwrap();
    let link = sb.fixture_dir("src").join("t.jsonl");
    symlink(&real, &link).unwrap();
    sb.seal();
    let dst = archive::archive(&sb.home, &archive_entry(&link), true)
        .unwrap()
        .dir
        .join("transcript.jsonl");
    assert!(
        fs::symlink_metadata(&dst).unwrap().file_type().is_file(),
        "a copy, not a link"
    );
    assert_eq!(fs::read(&dst).unwrap(), fs::read(&real).unwrap());
    assert!(dst.starts_with(&sb.home));
    sb.verify();
}

#[test]
fn archive_with_a_hostile_session_id_writes_only_in_park_home() {
    let mut sb = Sandbox::new();
    let src = sb.fixture_dir("src").join("t.jsonl");
    fs::write(&src, b"{}\n").unwrap();
    sb.seal();
    for sid in [
        "../../escaped".to_string(),
        format!("{}/abs-escaped", sb.root.display()),
    ] {
        let mut e = archive_entry(&src);
        e.session_id = sid;
        let _ = archive::archive(&sb.home, &e, true);
    }
    sb.verify();
}

/// The ledger never writes an entry it could not resume from: a session id that is not one (here a
/// flag, which `resume_argv` would otherwise pass to the agent) is refused by `claim` and `save`.
#[test]
fn claim_and_save_refuse_an_entry_whose_session_id_is_not_one() {
    let d = tempfile::tempdir().unwrap();
    let l = Ledger::new(d.path().join("h"));
    for sid in [
        "--dangerously-bypass-approvals-and-sandbox",
        "../../x",
        "$(id)",
    ] {
        let mut e = baseline(Agent::Codex);
        e.session_id = sid.into();
        assert!(matches!(l.claim(&e), Err(LedgerError::BadId(_))), "{sid}");
        assert!(matches!(l.save(&e), Err(LedgerError::BadId(_))), "{sid}");
        assert!(
            !l.parked_dir().join(format!("{}.json", e.id)).exists(),
            "{sid}: nothing written"
        );
    }
}

/// A parked Claude entry with a real transcript under a throwaway config dir, archived; returns
/// (tempdir, entry, park home, transcript path).
fn archived_claude() -> (tempfile::TempDir, Entry, PathBuf, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let home = d.path().join("park");
    let cfg = d.path().join("h/.claude");
    fs::create_dir_all(&cfg).unwrap();
    fs::create_dir_all(&home).unwrap();
    let mut e = baseline(Agent::Claude);
    e.cwd = d.path().to_string_lossy().into_owned();
    e.config_dir = Some(cfg.to_string_lossy().into_owned());
    let t = claude::transcript_path(&cfg, &e.cwd, SID);
    fs::create_dir_all(t.parent().unwrap()).unwrap();
    let line = format!(
        "{{\"type\":\"user\",\"sessionId\":\"{SID}\",\"timestamp\":\"2026-12-01T10:00:00Z\",\"message\":{{\"role\":\"user\",\"content\":\"hi there\"}}}}\n"
    );
    fs::write(&t, line).unwrap();
    e.transcript = Some(t.to_string_lossy().into_owned());
    archive::archive(&home, &e, true).unwrap();
    (d, e, home, t)
}

#[test]
fn restore_never_overwrites_a_transcript_that_is_there() {
    let (_d, e, home, t) = archived_claude();
    fs::write(&t, "the agent's newer transcript").unwrap();
    assert_eq!(archive::restore(&home, &e), archive::Restore::Present);
    assert_eq!(
        fs::read_to_string(&t).unwrap(),
        "the agent's newer transcript"
    );
}

#[test]
fn restore_puts_back_only_a_copy_that_names_the_session() {
    let (_d, e, home, t) = archived_claude();
    fs::remove_file(&t).unwrap();
    let copy = archive::dir(&home, SID).join("transcript.jsonl");
    let other = fs::read_to_string(&copy)
        .unwrap()
        .replace(SID, "00000000-0000-4000-8000-000000000000");
    fs::write(&copy, other).unwrap();
    assert!(matches!(
        archive::restore(&home, &e),
        archive::Restore::Unsafe(_)
    ));
    assert!(
        !t.exists(),
        "another session's transcript is never put in this one's place"
    );
}

#[test]
fn restore_never_writes_through_a_symlinked_dir() {
    let (_d, e, home, t) = archived_claude();
    fs::remove_file(&t).unwrap();
    let proj = t.parent().unwrap().to_path_buf();
    fs::remove_dir_all(&proj).unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    symlink(elsewhere.path(), &proj).unwrap();
    assert!(matches!(
        archive::restore(&home, &e),
        archive::Restore::Unsafe(_)
    ));
    assert_eq!(fs::read_dir(elsewhere.path()).unwrap().count(), 0);
}
