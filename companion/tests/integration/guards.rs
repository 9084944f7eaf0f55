//! Unit tests for the guard chain (`park::guards`) and the scan verdicts it judges
//! (`scan::derive_status`, `scan::kill_set`, `unpark::LiveSet`).
//!
//! Contract under test:
//! * every guard refuses with its own `Refusal.guard` name and a `why` that tells the user what is
//!   wrong, and passes the evidence it is not about;
//! * `check` runs full-map, bound, not-self, restorable, not-busy, no-draft in that order and
//!   returns the first refusal; the CPU sample and the pre-kill `same_process` re-check are separate;
//! * `--force` waives only the CPU corroboration, `--kill-anyway` also waives busy/waiting/shell/
//!   draft; nothing waives full-map, bound, not-self or restorable.
//!
//! Every guard has at least one test here that fails when the guard is switched off with
//! `PARK_TEST_DISABLE_GUARD=<name>` (feature `guard-mutation`); `scripts/guard-mutation` proves it
//! and `tests/GUARDS.md` maps each guard to its tests. Test names start with the function they
//! judge, so a failing name says which guard let something through.

use park::adapters::mux::Pane;
use park::adapters::platform::proctree::ProcTable;
use park::adapters::platform::{Mem, ProcInfo};
use park::agents::screen::ScreenReading;
use park::agents::transcript::TranscriptInfo;
use park::agents::{Agent, AgentProc, Identity};
use park::guards::{self, Overrides, Refusal, CPU_BUSY_PERCENT};
use park::scan::live::LiveSet;
use park::scan::{self, Caller, Found, Scan};
use park_protocol::Status;
use std::path::{Path, PathBuf};
use tempfile::TempDir;

const SID: &str = "5b0c1f8e-2d34-4c1a-9e57-0a1b2c3d4e5f";
const OTHER_SID: &str = "0f9e8d7c-6b5a-4938-8271-605f4e3d2c1b";
const ROOT: u32 = 4242;
const START: u64 = 777_000;
const PANE: &str = "%7";

const NONE: Overrides = Overrides {
    force: false,
    kill_anyway: false,
};
const FORCE: Overrides = Overrides {
    force: true,
    kill_anyway: false,
};
const KILL_ANYWAY: Overrides = Overrides {
    force: false,
    kill_anyway: true,
};

// ---------------------------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------------------------

/// A throwaway project dir and transcript file: the evidence `restorable` checks on disk.
struct Fx {
    dir: TempDir,
}

impl Fx {
    fn new() -> Fx {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(dir.path().join("proj")).unwrap();
        let projects = dir.path().join("config/projects/-proj");
        std::fs::create_dir_all(&projects).unwrap();
        std::fs::write(projects.join(format!("{SID}.jsonl")), b"{}\n").unwrap();
        Fx { dir }
    }

    fn cwd(&self) -> String {
        self.dir.path().join("proj").to_string_lossy().into_owned()
    }

    fn transcript(&self) -> PathBuf {
        self.dir
            .path()
            .join("config/projects/-proj")
            .join(format!("{SID}.jsonl"))
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// An idle Claude agent bound to pane `%7`, with an exact session id, a transcript and a cwd
    /// that exist: `check` passes it.
    fn agent(&self) -> Build {
        Build(Found {
            proc: AgentProc {
                agent: Agent::Claude,
                root: ROOT,
                main: ROOT,
                prog_index: 0,
                argv: vec!["claude".into()],
                env: vec![],
                background: false,
            },
            main_start: START,
            pane: Some(pane(PANE)),
            bind: "env",
            ident: Identity {
                session_id: Some(SID.into()),
                source: "status-file",
                transcript: Some(self.transcript()),
                reason: None,
                status_file: Some("idle".into()),
                cwd: Some(self.cwd()),
                job: None,
                name: None,
            },
            tree: vec![(ROOT, START), (ROOT + 1, START + 10)],
            spared: vec![],
            mem: Mem::default(),
            status: Status::Idle,
            status_why: None,
            draft: None,
            screen: None,
            tinfo: None,
            idle_secs: Some(600),
            title: "Claude Code".into(),
            cwd: self.cwd(),
            flags: vec![],
            dropped_flags: vec![],
            pane_owned: false,
            holds_terminal: true,
            transcript_present: false,
            cwd_present: false,
            version: None,
        })
    }
}

fn pane(id: &str) -> Pane {
    Pane {
        id: id.into(),
        pid: 4200,
        session: "work".into(),
        window_index: 1,
        window_name: "w".into(),
        current_command: "bash".into(),
        ..Pane::default()
    }
}

/// Tweaks one piece of evidence on a `Found`.
struct Build(Found);

impl Build {
    fn status(mut self, s: Status, why: &str) -> Self {
        self.0.status = s;
        self.0.status_why = Some(why.into());
        self
    }
    fn draft(mut self, d: &str) -> Self {
        self.0.draft = Some(d.into());
        self.0.status = Status::Draft;
        self
    }
    fn no_pane(mut self) -> Self {
        self.0.pane = None;
        self.0.bind = "none";
        self
    }
    fn session(mut self, id: Option<&str>) -> Self {
        self.0.ident.session_id = id.map(String::from);
        self
    }
    fn ident(mut self, i: Identity) -> Self {
        self.0.ident = i;
        self
    }
    fn reason(mut self, r: &str) -> Self {
        self.0.ident.reason = Some(r.into());
        self
    }
    fn transcript(mut self, t: Option<PathBuf>) -> Self {
        self.0.ident.transcript = t;
        self
    }
    fn cwd(mut self, c: &str) -> Self {
        self.0.cwd = c.into();
        self
    }
    fn main(mut self, pid: u32, start: u64) -> Self {
        self.0.proc.main = pid;
        self.0.main_start = start;
        self
    }
    fn tree(mut self, t: &[(u32, u64)]) -> Self {
        self.0.tree = t.to_vec();
        self
    }
    fn spared(mut self, s: &[(u32, &str)]) -> Self {
        self.0.spared = s.iter().map(|(p, n)| (*p, n.to_string())).collect();
        self
    }
    /// The scan reads the disk for the guards (`transcript_present`, `cwd_present`); so does
    /// the builder, so a test's paths mean what they would mean to a scan.
    fn build(mut self) -> Found {
        self.0.transcript_present = self
            .0
            .ident
            .transcript
            .as_deref()
            .is_some_and(std::path::Path::is_file);
        self.0.cwd_present = !self.0.cwd.is_empty() && std::path::Path::new(&self.0.cwd).is_dir();
        self.0
    }
}

/// park running from an unrelated pane, outside every agent tree.
fn stranger() -> Caller {
    Caller {
        pid: 9000,
        ancestry: vec![9000, 8999, 1],
        pane: Some("%1".into()),
        session_ids: vec![],
    }
}

#[track_caller]
fn refused(r: Result<(), Refusal>, guard: &str, why_part: &str) -> Refusal {
    let r = match r {
        Ok(()) => panic!("expected a {guard:?} refusal mentioning {why_part:?}, got Ok"),
        Err(r) => r,
    };
    assert_eq!(r.guard, guard, "wrong guard: {r:?}");
    assert!(
        r.why.contains(why_part),
        "{guard} refusal should mention {why_part:?}: {:?}",
        r.why
    );
    r
}

#[track_caller]
fn passes(r: Result<(), Refusal>) {
    if let Err(r) = r {
        panic!("expected Ok, got a refusal: {r:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// full-map
// ---------------------------------------------------------------------------------------------

#[test]
fn full_map_a_pane_listing_error_refuses() {
    let r = refused(
        guards::full_map(Some("pane listing is partial: 3 of 5 sessions")),
        "full-map",
        "the pane map is incomplete",
    );
    assert!(
        r.why.contains("3 of 5 sessions"),
        "the error is quoted: {r:?}"
    );
    assert!(r.why.contains("never parking from a partial map"));
}

#[test]
fn full_map_no_error_passes() {
    passes(guards::full_map(None));
}

// ---------------------------------------------------------------------------------------------
// bound
// ---------------------------------------------------------------------------------------------

#[test]
fn bound_no_pane_refuses() {
    let fx = Fx::new();
    refused(
        guards::bound(&fx.agent().no_pane().build()),
        "bound",
        "not bound to a pane of this tmux server",
    );
}

#[test]
fn bound_a_pane_passes() {
    let fx = Fx::new();
    passes(guards::bound(&fx.agent().build()));
}

// ---------------------------------------------------------------------------------------------
// restorable
// ---------------------------------------------------------------------------------------------

#[test]
fn restorable_no_session_id_quotes_the_identity_reason() {
    let fx = Fx::new();
    let why =
        "Claude status file belongs to an earlier process with this pid, and argv names no session";
    let r = refused(
        guards::restorable(&fx.agent().ident(Identity::untargetable(why)).build()),
        "restorable",
        why,
    );
    assert_eq!(r.why, why, "the reason is quoted verbatim");
}

#[test]
fn restorable_no_session_id_and_no_reason_refuses() {
    let fx = Fx::new();
    refused(
        guards::restorable(&fx.agent().session(None).build()),
        "restorable",
        "no exact session id",
    );
}

#[test]
fn restorable_identity_with_a_reason_refuses_even_with_an_id() {
    let fx = Fx::new();
    let why = "no conversation yet (transcript not written): nothing to resume";
    let r = refused(
        guards::restorable(&fx.agent().reason(why).build()),
        "restorable",
        "no conversation yet",
    );
    assert_eq!(r.why, why);
}

#[test]
fn restorable_missing_transcript_file_refuses() {
    let fx = Fx::new();
    let gone = fx.path("config/projects/-proj/gone.jsonl");
    let r = refused(
        guards::restorable(&fx.agent().transcript(Some(gone.clone())).build()),
        "restorable",
        "does not exist",
    );
    assert!(r.why.contains(&gone.display().to_string()), "{r:?}");
}

#[test]
fn restorable_transcript_that_is_a_directory_refuses() {
    let fx = Fx::new();
    refused(
        guards::restorable(&fx.agent().transcript(Some(fx.path("proj"))).build()),
        "restorable",
        "does not exist",
    );
}

#[test]
fn restorable_no_transcript_refuses() {
    let fx = Fx::new();
    refused(
        guards::restorable(&fx.agent().transcript(None).build()),
        "restorable",
        "no transcript to resume from",
    );
}

#[test]
fn restorable_missing_cwd_refuses() {
    let fx = Fx::new();
    let gone = fx.path("deleted-project").to_string_lossy().into_owned();
    let r = refused(
        guards::restorable(&fx.agent().cwd(&gone).build()),
        "restorable",
        "does not exist",
    );
    assert!(r.why.contains(&gone), "the cwd is named: {r:?}");
}

#[test]
fn restorable_empty_cwd_refuses() {
    let fx = Fx::new();
    refused(
        guards::restorable(&fx.agent().cwd("").build()),
        "restorable",
        "cwd \"\" does not exist",
    );
}

#[test]
fn restorable_cwd_that_is_a_file_refuses() {
    let fx = Fx::new();
    let file = fx.transcript().to_string_lossy().into_owned();
    refused(
        guards::restorable(&fx.agent().cwd(&file).build()),
        "restorable",
        "does not exist",
    );
}

#[test]
fn restorable_everything_present_passes() {
    let fx = Fx::new();
    assert!(fx.transcript().is_file() && Path::new(&fx.cwd()).is_dir());
    passes(guards::restorable(&fx.agent().build()));
}

// ---------------------------------------------------------------------------------------------
// not-self
// ---------------------------------------------------------------------------------------------

#[test]
fn not_self_the_pane_park_runs_in_refuses() {
    let fx = Fx::new();
    let c = Caller {
        pane: Some(PANE.into()),
        ..stranger()
    };
    refused(
        guards::not_self(&fx.agent().build(), &c),
        "not-self",
        "%7 is the pane park is running in",
    );
}

#[test]
fn not_self_a_suspended_agent_in_parks_own_pane_passes() {
    let fx = Fx::new();
    let c = Caller {
        pane: Some(PANE.into()),
        ..stranger()
    };
    let mut f = fx.agent().build();
    f.holds_terminal = false;
    assert!(
        guards::not_self(&f, &c).is_ok(),
        "Ctrl-Z'd agent, park in the same shell: parkable"
    );
}

#[test]
fn not_self_caller_ancestry_containing_a_tree_pid_refuses() {
    let fx = Fx::new();
    // park runs from the agent's tool shell (ROOT + 1).
    let c = Caller {
        ancestry: vec![9000, ROOT + 1, 1],
        ..stranger()
    };
    refused(
        guards::not_self(&fx.agent().tree(&[(ROOT + 1, START + 10)]).build(), &c),
        "not-self",
        "park is running inside this agent's process tree",
    );
}

#[test]
fn not_self_caller_ancestry_containing_the_root_refuses() {
    let fx = Fx::new();
    let c = Caller {
        ancestry: vec![9000, ROOT, 1],
        ..stranger()
    };
    // The kill set never contains park's ancestry, so the root is the only link left.
    refused(
        guards::not_self(&fx.agent().tree(&[]).build(), &c),
        "not-self",
        "park is running inside this agent's process tree",
    );
}

#[test]
fn not_self_caller_ancestry_containing_a_spared_pid_refuses() {
    let fx = Fx::new();
    let c = Caller {
        ancestry: vec![9000, 5000, 1],
        ..stranger()
    };
    let f = fx
        .agent()
        .tree(&[(ROOT, START)])
        .spared(&[(5000, "bash (runs park)")])
        .build();
    refused(
        guards::not_self(&f, &c),
        "not-self",
        "park is running inside this agent's process tree",
    );
}

#[test]
fn not_self_the_callers_own_session_refuses_case_insensitively() {
    let fx = Fx::new();
    let c = Caller {
        session_ids: vec![OTHER_SID.into(), SID.to_uppercase()],
        ..stranger()
    };
    refused(
        guards::not_self(&fx.agent().build(), &c),
        "not-self",
        "this is the session park is running under",
    );
}

#[test]
fn not_self_a_different_pane_and_unrelated_ancestry_passes() {
    let fx = Fx::new();
    let c = Caller {
        session_ids: vec![OTHER_SID.into()],
        ..stranger()
    };
    passes(guards::not_self(&fx.agent().build(), &c));
    // park outside tmux (no pane of its own) judging a bound agent.
    let c = Caller {
        pane: None,
        ..stranger()
    };
    passes(guards::not_self(&fx.agent().build(), &c));
}

#[test]
fn not_self_is_waived_by_nothing() {
    let fx = Fx::new();
    let c = Caller {
        pane: Some(PANE.into()),
        ..stranger()
    };
    for o in [FORCE, KILL_ANYWAY] {
        refused(
            guards::check(&fx.agent().build(), &c, None, o),
            "not-self",
            "the pane park is running in",
        );
    }
}

// ---------------------------------------------------------------------------------------------
// not-busy
// ---------------------------------------------------------------------------------------------

#[test]
fn not_busy_busy_refuses() {
    let fx = Fx::new();
    let f = fx
        .agent()
        .status(
            Status::Busy,
            "screen shows a turn in flight (esc to interrupt)",
        )
        .build();
    let r = refused(guards::not_busy(&f, NONE), "not-busy", "busy: ");
    assert!(
        r.why.contains("esc to interrupt"),
        "the evidence is quoted: {r:?}"
    );
}

#[test]
fn not_busy_waiting_refuses() {
    let fx = Fx::new();
    let f = fx
        .agent()
        .status(Status::Waiting, "screen shows a dialog: permission prompt")
        .build();
    let r = refused(guards::not_busy(&f, NONE), "not-busy", "waiting for you");
    assert!(r.why.contains("permission prompt"), "{r:?}");
}

#[test]
fn not_busy_background_shell_refuses() {
    let fx = Fx::new();
    let f = fx
        .agent()
        .status(Status::Shell, "a background shell is still running")
        .build();
    let r = refused(
        guards::not_busy(&f, NONE),
        "not-busy",
        "it would start a turn on resume",
    );
    assert!(r.why.contains("background shell"), "{r:?}");
}

#[test]
fn not_busy_unknown_counts_as_busy() {
    let fx = Fx::new();
    let f = fx
        .agent()
        .status(Status::Unknown, "the agent's composer is not on screen")
        .build();
    let r = refused(
        guards::not_busy(&f, NONE),
        "not-busy",
        "unknown counts as busy",
    );
    assert!(r.why.contains("composer is not on screen"), "{r:?}");
}

#[test]
fn not_busy_idle_and_draft_pass() {
    let fx = Fx::new();
    passes(guards::not_busy(&fx.agent().build(), NONE));
    // A draft is the no-draft guard's business, not this one's.
    passes(guards::not_busy(
        &fx.agent().draft("half a thought").build(),
        NONE,
    ));
}

#[test]
fn not_busy_kill_anyway_waives() {
    let fx = Fx::new();
    for s in [
        Status::Busy,
        Status::Waiting,
        Status::Shell,
        Status::Unknown,
    ] {
        passes(guards::not_busy(
            &fx.agent().status(s, "evidence").build(),
            KILL_ANYWAY,
        ));
    }
}

#[test]
fn not_busy_force_does_not_waive() {
    let fx = Fx::new();
    let f = fx
        .agent()
        .status(Status::Busy, "status file says busy")
        .build();
    refused(
        guards::not_busy(&f, FORCE),
        "not-busy",
        "status file says busy",
    );
    refused(
        guards::check(&f, &stranger(), None, FORCE),
        "not-busy",
        "busy: ",
    );
}

// ---------------------------------------------------------------------------------------------
// no-draft
// ---------------------------------------------------------------------------------------------

#[test]
fn no_draft_refuses_and_quotes_the_draft() {
    let fx = Fx::new();
    let f = fx.agent().draft("half written thought").build();
    let r = refused(
        guards::no_draft(&f, NONE),
        "no-draft",
        "unsent text in the composer",
    );
    assert!(r.why.contains("\"half written thought\""), "{r:?}");
    assert!(
        !r.why.contains('…'),
        "a short draft is not truncated: {r:?}"
    );
}

#[test]
fn no_draft_quote_is_truncated_past_60_chars() {
    let fx = Fx::new();
    let long = "0123456789".repeat(7);
    let f = fx.agent().draft(&long).build();
    let r = refused(guards::no_draft(&f, NONE), "no-draft", "unsent text");
    let sixty = &long[..60];
    assert!(r.why.contains(&format!("\"{sixty}…\"")), "{r:?}");
    assert!(!r.why.contains(&long[..61]), "at most 60 chars: {r:?}");
    // Exactly 60 is quoted whole.
    let f = fx.agent().draft(sixty).build();
    let r = refused(guards::no_draft(&f, NONE), "no-draft", sixty);
    assert!(!r.why.contains('…'), "{r:?}");
}

#[test]
fn no_draft_truncation_counts_chars_not_bytes() {
    let fx = Fx::new();
    let long = "é".repeat(61);
    let f = fx.agent().draft(&long).build();
    let r = refused(guards::no_draft(&f, NONE), "no-draft", "unsent text");
    assert!(r.why.contains(&format!("\"{}…\"", "é".repeat(60))), "{r:?}");
}

#[test]
fn no_draft_none_passes() {
    let fx = Fx::new();
    passes(guards::no_draft(&fx.agent().build(), NONE));
}

#[test]
fn no_draft_force_does_not_waive() {
    let fx = Fx::new();
    let f = fx.agent().draft("draft").build();
    refused(guards::no_draft(&f, FORCE), "no-draft", "\"draft\"");
    refused(
        guards::check(&f, &stranger(), None, FORCE),
        "no-draft",
        "unsent text",
    );
}

#[test]
fn no_draft_kill_anyway_waives() {
    let fx = Fx::new();
    let f = fx.agent().draft("draft").build();
    passes(guards::no_draft(&f, KILL_ANYWAY));
    passes(guards::check(&f, &stranger(), None, KILL_ANYWAY));
}

// ---------------------------------------------------------------------------------------------
// cpu
// ---------------------------------------------------------------------------------------------

#[test]
fn cpu_above_the_threshold_refuses() {
    let r = refused(guards::cpu(Some(85.4), NONE), "cpu", "85% CPU");
    assert!(r.why.contains("--force"), "says how to skip it: {r:?}");
    refused(
        guards::cpu(Some(CPU_BUSY_PERCENT + 0.5), NONE),
        "cpu",
        "% CPU",
    );
}

#[test]
fn cpu_at_or_below_the_threshold_passes() {
    passes(guards::cpu(Some(CPU_BUSY_PERCENT), NONE));
    passes(guards::cpu(Some(3.0), NONE));
    passes(guards::cpu(Some(0.0), NONE));
}

#[test]
fn cpu_no_sample_passes() {
    passes(guards::cpu(None, NONE));
}

#[test]
fn cpu_force_and_kill_anyway_waive() {
    passes(guards::cpu(Some(400.0), FORCE));
    passes(guards::cpu(Some(400.0), KILL_ANYWAY));
}

// ---------------------------------------------------------------------------------------------
// same-process
// ---------------------------------------------------------------------------------------------

#[test]
fn same_process_gone_refuses() {
    let fx = Fx::new();
    refused(
        guards::same_process(&fx.agent().build(), None),
        "same-process",
        "the agent is gone or changed since the scan",
    );
}

#[test]
fn same_process_different_start_ticks_refuses() {
    let fx = Fx::new();
    let now = fx.agent().main(ROOT, START + 1).build();
    refused(
        guards::same_process(&fx.agent().build(), Some(&now)),
        "same-process",
        "the pid now belongs to another process",
    );
}

#[test]
fn same_process_different_main_pid_refuses() {
    let fx = Fx::new();
    let now = fx.agent().main(ROOT + 5, START).build();
    refused(
        guards::same_process(&fx.agent().build(), Some(&now)),
        "same-process",
        "the pid now belongs to another process",
    );
}

#[test]
fn same_process_different_session_refuses() {
    let fx = Fx::new();
    // The user ran /clear between the scan and the kill: same process, new session.
    let now = fx.agent().session(Some(OTHER_SID)).build();
    let r = refused(
        guards::same_process(&fx.agent().build(), Some(&now)),
        "same-process",
        "the session changed since the scan",
    );
    assert!(r.why.contains(SID) && r.why.contains(OTHER_SID), "{r:?}");
    // ... or the id can no longer be read.
    let now = fx.agent().session(None).build();
    refused(
        guards::same_process(&fx.agent().build(), Some(&now)),
        "same-process",
        "the session changed since the scan",
    );
}

#[test]
fn same_process_identical_passes() {
    let fx = Fx::new();
    let before = fx.agent().build();
    passes(guards::same_process(&before, Some(&before.clone())));
    // Status is judged by the re-run of `check`, not here.
    let now = fx
        .agent()
        .status(Status::Busy, "status file says busy")
        .build();
    passes(guards::same_process(&before, Some(&now)));
}

// ---------------------------------------------------------------------------------------------
// check: order and overrides
// ---------------------------------------------------------------------------------------------

#[test]
fn check_a_healthy_agent_passes() {
    let fx = Fx::new();
    passes(guards::check(&fx.agent().build(), &stranger(), None, NONE));
}

#[test]
fn check_busy_comes_before_draft() {
    let fx = Fx::new();
    let mut f = fx.agent().draft("typed while it works").build();
    f.status = Status::Busy;
    f.status_why = Some("screen shows a turn in flight (esc to interrupt)".into());
    refused(
        guards::check(&f, &stranger(), None, NONE),
        "not-busy",
        "busy: ",
    );
}

#[test]
fn check_full_map_comes_first_even_for_a_busy_self_pane() {
    let fx = Fx::new();
    let f = fx
        .agent()
        .status(Status::Busy, "status file says busy")
        .build();
    let me = Caller {
        pane: Some(PANE.into()),
        ancestry: vec![9000, ROOT, 1],
        session_ids: vec![SID.into()],
        ..stranger()
    };
    refused(
        guards::check(&f, &me, Some("tmux is not reachable: timeout"), NONE),
        "full-map",
        "tmux is not reachable: timeout",
    );
}

#[test]
fn check_runs_the_guards_in_order() {
    let fx = Fx::new();
    let me = Caller {
        ancestry: vec![9000, ROOT, 1],
        ..stranger()
    };
    let mut f = fx
        .agent()
        .no_pane()
        .transcript(None)
        .draft("unsent")
        .status(Status::Busy, "status file says busy")
        .build();
    // Peel one failing piece of evidence at a time: each time the next guard answers.
    refused(
        guards::check(&f, &me, Some("partial"), NONE),
        "full-map",
        "partial",
    );
    refused(guards::check(&f, &me, None, NONE), "bound", "not bound");
    f.pane = Some(pane(PANE));
    refused(
        guards::check(&f, &me, None, NONE),
        "not-self",
        "process tree",
    );
    let c = stranger();
    refused(
        guards::check(&f, &c, None, NONE),
        "restorable",
        "no transcript",
    );
    f.ident.transcript = Some(fx.transcript());
    f.transcript_present = true; // what the scan reads for the guards
    refused(guards::check(&f, &c, None, NONE), "not-busy", "busy: ");
    f.status = Status::Draft;
    refused(guards::check(&f, &c, None, NONE), "no-draft", "\"unsent\"");
    f.draft = None;
    f.status = Status::Idle;
    passes(guards::check(&f, &c, None, NONE));
}

#[test]
fn check_overrides_never_waive_full_map_bound_or_restorable() {
    let fx = Fx::new();
    let both = Overrides {
        force: true,
        kill_anyway: true,
    };
    for o in [FORCE, KILL_ANYWAY, both] {
        let f = fx.agent().build();
        refused(
            guards::check(&f, &stranger(), Some("partial"), o),
            "full-map",
            "partial",
        );
        let f = fx.agent().no_pane().build();
        refused(
            guards::check(&f, &stranger(), None, o),
            "bound",
            "not bound",
        );
        let f = fx.agent().reason("no conversation yet").build();
        refused(
            guards::check(&f, &stranger(), None, o),
            "restorable",
            "no conversation yet",
        );
    }
}

// ---------------------------------------------------------------------------------------------
// derive_status: the trust order
// ---------------------------------------------------------------------------------------------

fn composer() -> ScreenReading {
    ScreenReading {
        composer_seen: true,
        ..Default::default()
    }
}

fn status(
    agent: Agent,
    file: Option<&str>,
    screen: Option<&ScreenReading>,
    tinfo: Option<&TranscriptInfo>,
    fresh: bool,
) -> (Status, Option<String>) {
    scan::derive_status(agent, file, screen, tinfo, fresh, true)
}

#[test]
fn derive_status_screen_dialog_beats_an_idle_status_file() {
    let s = ScreenReading {
        waiting: Some("permission prompt".into()),
        ..composer()
    };
    let (st, why) = status(Agent::Claude, Some("idle"), Some(&s), None, false);
    assert_eq!(st, Status::Waiting);
    assert_eq!(
        why.as_deref(),
        Some("screen shows a dialog: permission prompt")
    );
}

#[test]
fn derive_status_screen_busy_beats_an_idle_status_file() {
    let s = ScreenReading {
        busy: true,
        ..composer()
    };
    let (st, why) = status(Agent::Claude, Some("idle"), Some(&s), None, false);
    assert_eq!(st, Status::Busy);
    assert!(why.unwrap().contains("esc to interrupt"));
}

#[test]
fn derive_status_status_file_busy_waiting_shell_beat_an_idle_screen() {
    let s = composer();
    for (file, want, why) in [
        ("busy", Status::Busy, "status file says busy"),
        ("waiting", Status::Waiting, "status file says waiting"),
        ("shell", Status::Shell, "background shell"),
        (
            "compacting",
            Status::Unknown,
            "status file says \"compacting\"",
        ),
    ] {
        let (st, w) = status(Agent::Claude, Some(file), Some(&s), None, false);
        assert_eq!(st, want, "status file {file:?}");
        assert!(w.unwrap().contains(why), "status file {file:?}");
    }
}

#[test]
fn derive_status_idle_status_file_and_composer_is_idle() {
    assert_eq!(
        status(Agent::Claude, Some("idle"), Some(&composer()), None, false),
        (Status::Idle, None)
    );
    // No status file: the composer on screen is the evidence.
    assert_eq!(
        status(Agent::Claude, None, Some(&composer()), None, false),
        (Status::Idle, None)
    );
}

#[test]
fn derive_status_background_shells_on_screen_are_shell() {
    let s = ScreenReading {
        bg_shells: 2,
        ..composer()
    };
    for file in [Some("idle"), None] {
        let (st, _) = status(Agent::Claude, file, Some(&s), None, false);
        assert_eq!(st, Status::Shell, "status file {file:?}");
    }
    let (st, _) = status(Agent::Codex, None, Some(&s), None, false);
    assert_eq!(st, Status::Shell);
}

#[test]
fn derive_status_unknown_without_a_screen() {
    let (st, why) = scan::derive_status(Agent::Claude, None, None, None, false, false);
    assert_eq!(st, Status::Unknown);
    assert_eq!(why.as_deref(), Some("state not read (no screen)"));
    let (st, why) = scan::derive_status(Agent::Codex, None, None, None, false, true);
    assert_eq!(st, Status::Unknown);
    assert_eq!(why.as_deref(), Some("pane screen unreadable"));
}

#[test]
fn derive_status_unknown_when_the_composer_is_not_on_screen() {
    let (st, why) = status(
        Agent::Codex,
        None,
        Some(&ScreenReading::default()),
        None,
        false,
    );
    assert_eq!(st, Status::Unknown);
    assert!(why.unwrap().contains("composer is not on screen"));
}

/// screen.rs: "`composer_seen == false` means cannot tell: the caller must not read
/// `draft == None` as no draft". An idle status file says nothing about the composer.
#[test]
fn derive_status_an_unrecognised_screen_is_not_idle_even_with_an_idle_status_file() {
    let (st, _) = status(
        Agent::Claude,
        Some("idle"),
        Some(&ScreenReading::default()),
        None,
        false,
    );
    assert_ne!(st, Status::Idle, "composer not recognised");
    // Same when the capture itself failed (screens were read, none came back).
    let (st, _) = status(Agent::Claude, Some("idle"), None, None, false);
    assert_ne!(st, Status::Idle, "screen unreadable");
}

#[test]
fn derive_status_codex_open_turn_is_busy() {
    let open = TranscriptInfo {
        turn_open: true,
        ..Default::default()
    };
    let (st, why) = status(Agent::Codex, None, Some(&composer()), Some(&open), false);
    assert_eq!(st, Status::Busy);
    assert!(why.unwrap().contains("transcript shows a turn in flight"));
}

#[test]
fn derive_status_claude_open_turn_needs_a_fresh_write() {
    let open = TranscriptInfo {
        turn_open: true,
        ..Default::default()
    };
    let s = composer();
    assert_eq!(
        status(Agent::Claude, Some("idle"), Some(&s), Some(&open), true).0,
        Status::Busy
    );
    // A stale open turn (the agent was killed mid-turn once) does not pin it busy forever.
    assert_eq!(
        status(Agent::Claude, Some("idle"), Some(&s), Some(&open), false).0,
        Status::Idle
    );
}

// ---------------------------------------------------------------------------------------------
// kill_set
// ---------------------------------------------------------------------------------------------

fn p(pid: u32, ppid: u32, argv: &[&str]) -> ProcInfo {
    ProcInfo {
        pid,
        ppid,
        pgid: pid,
        sid: pid,
        tpgid: -1,
        start_ticks: 1000 + pid as u64,
        state: 'S',
        cpu_ticks: 0,
        rss_bytes: 4096,
        argv: argv.iter().map(|s| s.to_string()).collect(),
        comm: String::new(),
    }
}

/// A Codex agent (node wrapper 10 → native 11) with the shared daemon (12, 13) under it, an
/// editor (14), a dev server (15 → 16) and a pager (17).
fn codex_table() -> ProcTable {
    ProcTable::new(vec![
        p(1, 0, &["init"]),
        p(9, 1, &["-bash"]),
        p(10, 9, &["node", "/n/.bin/codex"]),
        p(11, 10, &["/n/vendor/codex"]),
        p(
            12,
            11,
            &[
                "/h/.codex/packages/bin/codex",
                "app-server",
                "--listen",
                "unix://",
            ],
        ),
        p(
            13,
            12,
            &["/h/.codex/packages/bin/codex", "app-server", "daemon"],
        ),
        p(14, 11, &["nvim", "notes.md"]),
        p(15, 11, &["/bin/bash", "-c", "npm run dev"]),
        p(16, 15, &["node", "/x/node_modules/.bin/vite"]),
        p(17, 11, &["less", "log.txt"]),
    ])
}

#[test]
fn kill_set_spares_the_codex_daemon_subtree_and_editors() {
    let t = codex_table();
    let (kill, spared) = scan::kill_set(&t, 10, &[]);
    assert_eq!(
        kill,
        vec![(10, 1010), (11, 1011), (15, 1015), (16, 1016)],
        "parents first, with start ticks"
    );
    assert!(
        !kill.iter().any(|(pid, _)| *pid == 12 || *pid == 13),
        "the shared daemon and its children are never killed"
    );
    assert_eq!(
        spared,
        vec![(14, "nvim".to_string()), (17, "less".to_string())]
    );
}

#[test]
fn kill_set_never_contains_parks_own_ancestry() {
    let t = ProcTable::new(vec![
        p(1, 0, &["init"]),
        p(10, 1, &["claude"]),
        p(11, 10, &["/bin/bash", "-c", "park park %7"]),
        p(12, 11, &["park", "park", "%7"]),
        p(13, 10, &["node", "mcp-server.js"]),
    ]);
    let ancestry = t.ancestry(12);
    assert_eq!(ancestry, vec![12, 11, 10, 1]);
    let (kill, spared) = scan::kill_set(&t, 10, &ancestry);
    assert_eq!(kill, vec![(13, 1013)]);
    for pid in &ancestry {
        assert!(!kill.iter().any(|(k, _)| k == pid), "pid {pid} runs park");
    }
    assert_eq!(
        spared,
        vec![
            (10, "claude (runs park)".to_string()),
            (11, "bash (runs park)".to_string()),
            (12, "park (runs park)".to_string()),
        ]
    );
}

#[test]
fn kill_set_and_not_self_together_refuse_an_agent_that_runs_park() {
    // What the scan does: kill_set strips park's ancestry out of the tree, so not-self must still
    // see the agent through its root and its spared list.
    let t = ProcTable::new(vec![
        p(1, 0, &["init"]),
        p(10, 1, &["claude"]),
        p(11, 10, &["/bin/bash", "-c", "park park %7"]),
        p(12, 11, &["park", "park", "%7"]),
    ]);
    let ancestry = t.ancestry(12);
    let (tree, spared) = scan::kill_set(&t, 10, &ancestry);
    let fx = Fx::new();
    let mut f = fx.agent().build();
    f.proc.root = 10;
    f.proc.main = 10;
    f.main_start = 1010;
    f.tree = tree;
    f.spared = spared;
    let c = Caller {
        pid: 12,
        ancestry,
        pane: None,
        session_ids: vec![],
    };
    refused(
        guards::check(&f, &c, None, KILL_ANYWAY),
        "not-self",
        "process tree",
    );
}

// ---------------------------------------------------------------------------------------------
// LiveSet: the never-two-processes rule's evidence
// ---------------------------------------------------------------------------------------------

#[test]
fn live_set_lowercases_ids_and_counts_the_unidentified() {
    let fx = Fx::new();
    let env = |k: &str, v: &str| vec![(k.to_string(), v.to_string())];
    let mut ided = fx.agent().session(Some(&SID.to_uppercase())).build();
    ided.proc.env = env("HOME", "/h");
    let mut anon_cfg = fx.agent().session(None).build();
    anon_cfg.proc.env = env("CLAUDE_CONFIG_DIR", "/cfg/claude");
    let mut anon_home = fx.agent().session(None).build();
    anon_home.proc.env = env("HOME", "/h");
    let anon_bare = fx.agent().session(None).build();
    let mut anon_codex = fx.agent().session(None).build();
    anon_codex.proc.agent = Agent::Codex;
    let s = Scan {
        table: ProcTable::default(),
        panes: vec![],
        pane_error: None,
        tmux_absent: false,
        server: None,
        found: vec![ided, anon_cfg, anon_home, anon_bare, anon_codex],
        caller: Caller::default(),
        warnings: vec![],
    };
    let l = LiveSet::from_scan(&s);
    assert_eq!(l.ids, vec![SID.to_string()]);
    assert!(l.contains(&SID.to_uppercase()) && l.contains(SID));
    assert!(!l.contains(OTHER_SID));
    assert_eq!(
        l.unidentified
            .iter()
            .map(|u| u.config_dir.clone())
            .collect::<Vec<_>>(),
        vec![
            "/cfg/claude".to_string(),
            "/h/.claude".into(),
            String::new()
        ]
    );
    assert_eq!(l.unidentified_other, 1);
}

// ---------------------------------------------------------------------------------------------
// codex-writer-lock: a held thread-writer lock is a live writer (issue 19, item 2)
// ---------------------------------------------------------------------------------------------

use park::agents::codex::{writer_verdict as codex_writer_verdict, Writer};
use park::agents::WriterVerdict;

#[test]
fn codex_writer_lock_held_by_another_process_is_running_there() {
    match codex_writer_verdict(&[], &Writer::Other(4711)) {
        WriterVerdict::Running(why) => assert!(why.contains("pid 4711"), "{why}"),
        v => panic!("a second writer must never be started: {v:?}"),
    }
    // Also when the kernel does not name the holder, and for a --no-daemon entry.
    assert!(matches!(
        codex_writer_verdict(&["--no-daemon".into()], &Writer::Other(0)),
        WriterVerdict::Running(_)
    ));
}

#[test]
fn codex_writer_lock_held_by_the_daemon_refuses_only_an_embedded_resume() {
    match codex_writer_verdict(&["--no-daemon".into()], &Writer::Daemon(99)) {
        WriterVerdict::Refuse(why) => {
            assert!(
                why.contains("daemon (pid 99)") && why.contains("--no-daemon"),
                "{why}"
            )
        }
        v => panic!("Codex would refuse this resume: {v:?}"),
    }
    // A daemon-mode resume attaches to the thread the daemon has loaded.
    assert_eq!(
        codex_writer_verdict(&["--model".into(), "m".into()], &Writer::Daemon(99)),
        WriterVerdict::Go
    );
}

#[test]
fn codex_writer_lock_unheld_goes() {
    assert_eq!(codex_writer_verdict(&[], &Writer::None), WriterVerdict::Go);
}

// ---------------------------------------------------------------------------------------------
// Claude background sessions (issue 19, 0b and item 1)
// ---------------------------------------------------------------------------------------------

#[test]
fn bound_a_background_session_refuses_even_with_a_pane() {
    let fx = Fx::new();
    let mut f = fx.agent().session(Some(SID)).build();
    f.pane = Some(pane(PANE));
    f.proc.background = true;
    f.ident.job = Some("3d2e4341".into());
    // The scan words it with the agent's way to reach the session.
    f.status_why = Some(park::agents::claude::background_note(Some("3d2e4341")));
    let r = refused(guards::bound(&f), "bound", "background session");
    assert!(r.why.contains("claude attach 3d2e4341"), "{}", r.why);
}

#[test]
fn live_set_names_the_background_job_of_a_running_id() {
    let fx = Fx::new();
    let mut bg = fx.agent().session(Some(&SID.to_uppercase())).build();
    bg.proc.background = true;
    bg.ident.job = Some("3d2e4341".into());
    let fg = fx.agent().session(Some(OTHER_SID)).build();
    let s = Scan {
        table: ProcTable::default(),
        panes: vec![],
        pane_error: None,
        tmux_absent: false,
        server: None,
        found: vec![bg, fg],
        caller: Caller::default(),
        warnings: vec![],
    };
    let l = LiveSet::from_scan(&s);
    assert!(l.contains(SID) && l.contains(OTHER_SID));
    assert_eq!(l.background_job(SID), Some(Some("3d2e4341")));
    assert_eq!(l.background_job(OTHER_SID), None);
    assert!(l.unidentified.is_empty());
}
