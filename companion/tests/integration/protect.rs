//! Transcript protection with the real `park` binary in a throwaway HOME (no tmux, no agent):
//! `park archive --all` (selection by age, idempotence, read only, torn copies), what survives the
//! agent deleting its transcript, `park archive --prune` (never without yes, never a parked or a
//! still-present session), `park recover` (prompts-only tombstones that refuse to resume), the
//! daily automatic run, and doctor's cleanup-period warning.
//!
//! Built with `--features guard-mutation`, the binary and the library honour
//! `PARK_TEST_DISABLE_GUARD`, so `scripts/guard-mutation` can show each rule's test fails without
//! it (see tests/GUARDS.md).

use park::ops::protect::{self, Which};
use park::store::archive;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, SystemTime};

struct World {
    _dir: tempfile::TempDir,
    home: PathBuf,
    park_home: PathBuf,
    work: PathBuf,
}

impl World {
    fn new() -> World {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let (home, park_home, work) = (root.join("home"), root.join("park"), root.join("work"));
        for d in [&home, &park_home, &work] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::create_dir_all(home.join(".claude/projects")).unwrap();
        World {
            _dir: dir,
            home,
            park_home,
            work,
        }
    }

    fn cmd(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let o = Command::new(env!("CARGO_BIN_EXE_park"))
            .env_clear()
            .env("HOME", &self.home)
            .env("PARK_HOME", &self.park_home)
            .env("PATH", "/usr/bin:/bin")
            // A tmux server that does not exist: park must never reach a real one from a test.
            .env(
                "PARK_TMUX_SOCKET",
                format!("park-protect-none-{}", std::process::id()),
            )
            // Passed on so `scripts/guard-mutation` can switch one rule off in the binary too.
            .envs(std::env::var("PARK_TEST_DISABLE_GUARD").map(|g| ("PARK_TEST_DISABLE_GUARD", g)))
            .envs(env.iter().copied())
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        eprintln!(
            "$ park {} -> {}\n{}{}",
            args.join(" "),
            o.status,
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        o
    }

    fn park(&self, args: &[&str]) -> Output {
        self.cmd(args, &[])
    }

    fn json(&self, args: &[&str]) -> (i32, Value) {
        let mut a = args.to_vec();
        a.push("--json");
        let o = self.park(&a);
        let v = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|e| panic!("{a:?}: {e}: {}", String::from_utf8_lossy(&o.stdout)));
        (o.status.code().unwrap_or(-1), v)
    }

    /// A Claude transcript of `sid` in project `name`, last written `days` ago.
    fn claude(&self, name: &str, sid: &str, prompt: &str, days: u64) -> PathBuf {
        let cwd = self.work.join(name);
        std::fs::create_dir_all(&cwd).unwrap();
        let cwd = cwd.to_string_lossy().into_owned();
        let p = park::agents::claude::transcript_path(&self.home.join(".claude"), &cwd, sid);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        let lines = [
            serde_json::json!({"type":"user","sessionId":sid,"cwd":cwd,"timestamp":"2026-01-01T10:00:00Z",
                "message":{"role":"user","content":prompt}}),
            serde_json::json!({"type":"assistant","sessionId":sid,"cwd":cwd,"timestamp":"2026-01-01T10:00:05Z",
                "message":{"role":"assistant","model":"claude","content":[{"type":"text","text":format!("reply to {prompt}")}]}}),
        ];
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(&p, text).unwrap();
        age(&p, days);
        p
    }

    fn codex(&self, sid: &str, days: u64) -> PathBuf {
        let d = self.home.join(".codex/sessions/2026/01/02");
        std::fs::create_dir_all(&d).unwrap();
        let p = d.join(format!("rollout-2026-01-02T10-00-00-{sid}.jsonl"));
        let cwd = self.work.join("cx");
        std::fs::create_dir_all(&cwd).unwrap();
        let meta = serde_json::json!({"timestamp":"2026-01-02T10:00:00Z","type":"session_meta",
            "payload":{"id":sid,"session_id":sid,"cwd":cwd,"timestamp":"2026-01-02T10:00:00Z"}});
        std::fs::write(&p, format!("{meta}\n")).unwrap();
        age(&p, days);
        p
    }

    fn archived(&self) -> Value {
        let (c, v) = self.json(&["ls", "--archived"]);
        assert_eq!(c, 0);
        v
    }
}

fn age(p: &Path, days: u64) {
    let f = std::fs::File::options().write(true).open(p).unwrap();
    f.set_modified(SystemTime::now() - Duration::from_secs(days * 86_400 + 60))
        .unwrap();
}

fn stat(p: &Path) -> (Vec<u8>, SystemTime) {
    (
        std::fs::read(p).unwrap(),
        std::fs::metadata(p).unwrap().modified().unwrap(),
    )
}

const OLD: &str = "11111111-1111-4111-8111-111111111111";
const YOUNG: &str = "22222222-2222-4222-8222-222222222222";
const CODEX: &str = "01a2370b-2255-7e01-9337-4598cb103ce5";

fn outcome(v: &Value, sid: &str) -> String {
    v["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["session_id"] == sid)
        .map(|i| i["outcome"].as_str().unwrap().to_string())
        .unwrap_or_else(|| format!("absent from {v}"))
}

#[test]
fn archive_all_takes_what_nears_cleanup_once_and_never_touches_the_agents_files() {
    let w = World::new();
    let old = w.claude("api", OLD, "the wombat question", 25);
    let young = w.claude("web", YOUNG, "young one", 1);
    w.codex(CODEX, 400);
    let (before_old, before_young) = (stat(&old), stat(&young));

    let (c, v) = w.json(&["archive", "--all", "--dry-run"]);
    assert_eq!((c, outcome(&v, OLD)), (0, "would-archive".into()));
    assert!(!archive::dir(&w.park_home, OLD).exists(), "a dry run wrote");

    let (c, v) = w.json(&["archive", "--all"]);
    assert_eq!(c, 0, "{v}");
    assert_eq!(outcome(&v, OLD), "archived");
    // 1 day old, Claude deletes after 30: not due yet. Codex is archived only when asked.
    assert_eq!(outcome(&v, YOUNG), "not-due");
    assert!(outcome(&v, CODEX).starts_with("absent"));
    assert_eq!(
        (v["archived"].as_u64(), v["not_due"].as_u64()),
        (Some(1), Some(1))
    );
    assert!(v["archive_bytes"].as_u64().unwrap() > 0);

    // Idempotent: the second run copies nothing.
    let (c, v) = w.json(&["archive", "--all"]);
    assert_eq!(c, 0);
    assert_eq!(outcome(&v, OLD), "unchanged");
    assert_eq!(
        (v["archived"].as_u64(), v["bytes"].as_u64()),
        (Some(0), Some(0))
    );

    // Read only: the agent's files are byte for byte and mtime for mtime what they were.
    assert_eq!(stat(&old), before_old);
    assert_eq!(stat(&young), before_young);

    // A new turn is a change: copied again.
    let mut t = std::fs::read_to_string(&old).unwrap();
    t.push_str(
        &t.lines()
            .last()
            .unwrap()
            .replace("reply to", "more of")
            .to_string(),
    );
    t.push('\n');
    std::fs::write(&old, t).unwrap();
    age(&old, 25);
    let (_, v) = w.json(&["archive", "--all"]);
    assert_eq!(outcome(&v, OLD), "archived");

    let (_, v) = w.json(&["archive", "--all", "--any-age"]);
    assert_eq!(outcome(&v, YOUNG), "archived");
    let (c, v) = w.json(&["archive", "--all", "--agent", "codex"]);
    assert_eq!((c, outcome(&v, CODEX)), (0, "archived".into()));
    assert!(outcome(&v, OLD).starts_with("absent"));

    // Qwen Code keeps its chats: only when named (a real 0.24.4 chat).
    let qwen = "1cfb8705-3393-4dad-9641-3c8766d7cea5";
    let chats = w.home.join(".qwen/projects/-tmp-qk-proj/chats");
    std::fs::create_dir_all(&chats).unwrap();
    std::fs::write(
        chats.join(format!("{qwen}.jsonl")),
        include_bytes!("../fixtures/qwen/real-0.24.4.jsonl"),
    )
    .unwrap();
    let (_, v) = w.json(&["archive", "--all"]);
    assert!(outcome(&v, qwen).starts_with("absent"), "{v}");
    let (c, v) = w.json(&["archive", "--all", "--agent", "qwen"]);
    assert_eq!((c, outcome(&v, qwen)), (0, "archived".into()), "{v}");
    let md =
        std::fs::read_to_string(archive::dir(&w.park_home, qwen).join("transcript.md")).unwrap();
    assert!(
        md.contains("make it [tool touch /tmp/qk/proj/x.txt]"),
        "{md}"
    );

    // Usage errors: exit 2, nothing done.
    for bad in [
        vec!["archive", "--all", "%3"],
        vec!["archive", "--prune"],
        vec!["archive", "--all", "--prune", "--older-than", "1d"],
        vec!["archive", "--older-than", "1d"],
        vec!["archive", "%3", "--json"],
        vec!["archive", "--all", "--agent", "nobody"],
    ] {
        assert_eq!(w.park(&bad).status.code(), Some(2), "{bad:?}");
    }
}

#[test]
fn an_archived_session_survives_the_agent_deleting_its_transcript() {
    let w = World::new();
    let old = w.claude("api", OLD, "the wombat question", 29);
    let (c, _) = w.json(&["archive", "--all"]);
    assert_eq!(c, 0);
    std::fs::remove_file(&old).unwrap();
    let v = w.archived();
    let row = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["session_id"] == OLD)
        .unwrap()
        .clone();
    assert_eq!(row["transcript_present"], false);
    assert_eq!(row["state"], "archived");
    assert_eq!(row["prompts_only"], false);
    assert!(v["archive_bytes"].as_u64().unwrap() > 0);
    let copy =
        std::fs::read_to_string(archive::dir(&w.park_home, OLD).join("transcript.jsonl")).unwrap();
    assert!(copy.contains("the wombat question"));
    let (_, s) = w.json(&["search", "WOMBAT"]);
    assert_eq!(s["rows"][0]["session_id"], OLD);
    let o = w.park(&["ls", "--archived"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("the archive holds"));
}

#[test]
fn a_transcript_being_written_is_never_recorded_as_a_complete_copy() {
    let w = World::new();
    let p = w.claude("api", OLD, "torn", 29);
    // The agent is mid-write: the last record is half there.
    let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
    std::io::Write::write_all(&mut f, br#"{"type":"user","sessionId":"1111"#).unwrap();
    drop(f);
    age(&p, 29);
    let (entries, _) = park::store::ledger::Ledger::new(w.park_home.clone()).all();
    let env = |k: &str| (k == "HOME").then(|| w.home.to_string_lossy().into_owned());
    let o = protect::archive_all(&w.park_home, &env, &entries, Which::Deleting, false, false);
    let it = o.items.iter().find(|i| i.session_id == OLD).unwrap();
    assert_eq!(it.outcome, "partial", "{it:?}");
    let rec = protect::read_record(&w.park_home, OLD).unwrap();
    assert!(!rec.complete);
    // The writer finishes the line: the next run copies it again, completely.
    let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
    std::io::Write::write_all(&mut f, b"1111-4111-8111-111111111111\"}\n").unwrap();
    drop(f);
    age(&p, 29);
    let o = protect::archive_all(&w.park_home, &env, &entries, Which::Deleting, false, false);
    assert_eq!(o.items[0].outcome, "archived", "{:?}", o.items);
    assert!(protect::read_record(&w.park_home, OLD).unwrap().complete);
}

/// Makes an archived session look `days` old (archived, last active).
fn backdate(home: &Path, sid: &str, days: i64) {
    let mut t = archive::read_meta(&archive::dir(home, sid)).unwrap();
    let when = jiff::Timestamp::now() - jiff::SignedDuration::from_hours(24 * days);
    t.archived_at = when.to_string();
    t.last_active = Some(when.to_string());
    park::store::archive::index::upsert(home, &t).unwrap();
}

#[test]
fn prune_asks_and_removes_only_old_copies_of_sessions_gone_everywhere_else() {
    const PARKED: &str = "33333333-3333-4333-8333-333333333333";
    const RECENT: &str = "44444444-4444-4444-8444-444444444444";
    let w = World::new();
    let gone = w.claude("a", OLD, "gone", 29);
    let present = w.claude("b", YOUNG, "present", 29);
    let parked = w.claude("c", PARKED, "parked", 29);
    let recent = w.claude("d", RECENT, "recent", 29);
    let (c, _) = w.json(&["archive", "--all"]);
    assert_eq!(c, 0);
    for sid in [OLD, YOUNG, PARKED] {
        backdate(&w.park_home, sid, 90);
    }
    // A parked session: its ledger entry names it.
    let ledger = park::store::ledger::Ledger::new(w.park_home.clone());
    let t = archive::read_meta(&archive::dir(&w.park_home, PARKED)).unwrap();
    ledger.claim(&t.to_entry()).unwrap();
    for p in [&gone, &parked, &recent] {
        std::fs::remove_file(p).unwrap();
    }
    let _ = present;
    let exists = |sid: &str| archive::dir(&w.park_home, sid).exists();

    // No terminal and no --yes: refused, nothing removed.
    let o = w.park(&["archive", "--prune", "--older-than", "30d"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--yes"));
    assert!([OLD, YOUNG, PARKED, RECENT].iter().all(|s| exists(s)));

    let (c, v) = w.json(&["archive", "--prune", "--older-than", "30d", "--dry-run"]);
    assert_eq!(c, 0);
    let removed: Vec<&str> = v["removed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["session_id"].as_str().unwrap())
        .collect();
    assert_eq!(removed, [OLD]);
    assert!(exists(OLD), "a dry run removed");
    let why = |v: &Value, sid: &str| {
        v["kept"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["session_id"] == sid)
            .map(|i| i["reason"].as_str().unwrap().to_string())
            .unwrap_or_default()
    };
    assert!(why(&v, YOUNG).contains("still exists"));
    assert!(why(&v, PARKED).contains("parked"));
    assert!(why(&v, RECENT).contains("newer"));

    let (c, v) = w.json(&["archive", "--prune", "--older-than", "30d", "--yes"]);
    assert_eq!(c, 0, "{v}");
    assert!(!exists(OLD));
    assert!(exists(YOUNG) && exists(PARKED) && exists(RECENT));
    assert!(v["freed_bytes"].as_u64().unwrap() > 0);
    let rows = w.archived();
    assert!(!rows["rows"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["session_id"] == OLD));
    assert_eq!(
        w.park(&["archive", "--prune", "--older-than", "soon", "--yes"])
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn recover_builds_prompts_only_tombstones_that_list_search_and_refuse_to_resume() {
    const LOST: &str = "55555555-5555-4555-8555-555555555555";
    let w = World::new();
    const ARCHIVED: &str = "66666666-6666-4666-8666-666666666666";
    let kept = w.claude("b", YOUNG, "still here", 1);
    let _ = kept;
    // Really archived, then deleted by the agent: the archive has the whole conversation.
    let real = w.claude("c", ARCHIVED, "the real conversation", 29);
    assert_eq!(w.json(&["archive", "--all"]).0, 0);
    std::fs::remove_file(&real).unwrap();
    let proj = w.work.join("lost").to_string_lossy().into_owned();
    std::fs::create_dir_all(&proj).unwrap();
    let line = |d: &str, ts: i64, sid: Option<&str>| {
        let mut v =
            serde_json::json!({"display":d,"pastedContents":{},"timestamp":ts,"project":proj});
        if let Some(s) = sid {
            v["sessionId"] = s.into();
        }
        format!("{v}\n")
    };
    let hist = [
        line("find the quokka bug", 1_790_000_000_000, Some(LOST)),
        line("and fix it", 1_790_000_060_000, Some(LOST)),
        line("still here", 1_790_000_100_000, Some(YOUNG)),
        line("the real conversation", 1_790_000_200_000, Some(ARCHIVED)),
        "this is not json\n".to_string(),
        line("an older prompt with no id", 1_700_000_000_000, None),
    ]
    .concat();
    std::fs::write(w.home.join(".claude/history.jsonl"), hist).unwrap();

    let (c, v) = w.json(&["recover", "--dry-run"]);
    assert_eq!(c, 0, "{v}");
    assert_eq!(v["recovered"], 2);
    assert!(
        !archive::dir(&w.park_home, LOST).exists(),
        "a dry run wrote"
    );

    let (c, v) = w.json(&["recover"]);
    assert_eq!(c, 0, "{v}");
    assert_eq!(v["bad_lines"], 1);
    assert_eq!(outcome(&v, LOST), "recovered");
    assert_eq!(outcome(&v, YOUNG), "skipped");
    assert_eq!(
        (v["recovered"].as_u64(), v["skipped"].as_u64()),
        (Some(2), Some(2))
    );
    // A session the archive really has is never replaced by its prompts.
    assert_eq!(outcome(&v, ARCHIVED), "skipped");
    let t = archive::read_meta(&archive::dir(&w.park_home, ARCHIVED)).unwrap();
    assert!(!t.prompts_only);
    assert!(archive::dir(&w.park_home, ARCHIVED)
        .join("transcript.jsonl")
        .exists());
    // Nothing is ever written to the agent's side, and no transcript is invented.
    assert!(!archive::dir(&w.park_home, LOST)
        .join("transcript.jsonl")
        .exists());
    let md =
        std::fs::read_to_string(archive::dir(&w.park_home, LOST).join("transcript.md")).unwrap();
    assert!(md.contains("find the quokka bug") && md.contains("and fix it"));

    // Again: everything is already archived.
    let (_, v) = w.json(&["recover"]);
    assert_eq!(v["recovered"], 0);
    assert_eq!(outcome(&v, LOST), "skipped");

    let rows = w.archived();
    let row = rows["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["session_id"] == LOST)
        .unwrap()
        .clone();
    assert_eq!(row["prompts_only"], true);
    assert_eq!(row["turns"], 2);
    let (_, s) = w.json(&["search", "quokka"]);
    assert_eq!(s["rows"][0]["session_id"], LOST);
    let text = String::from_utf8_lossy(&w.park(&["ls", "--archived"]).stdout).into_owned();
    assert!(text.contains("recovered (prompts only)"), "{text}");

    // Never resumed: there is no transcript to resume; it says where the prompts are.
    let (c, v) = w.json(&["unpark", LOST]);
    assert_eq!(c, 1, "{v}");
    let r = &v["results"][0];
    assert_eq!(r["outcome"], "refused", "{v}");
    let reason = r["reason"].as_str().unwrap();
    assert!(
        reason.contains("no transcript to resume") && reason.contains("transcript.md"),
        "{reason}"
    );
    assert!(park::store::ledger::Ledger::new(w.park_home.clone())
        .all()
        .0
        .is_empty());
}

#[test]
fn the_daily_run_is_off_by_default_and_at_most_once_a_day_when_on() {
    let w = World::new();
    w.claude("api", OLD, "auto", 29);
    let stamp = w.park_home.join("auto-archive.last");
    w.park(&["ls", "--archived"]);
    std::thread::sleep(Duration::from_millis(500));
    assert!(!stamp.exists(), "ran without being asked");
    assert!(!archive::dir(&w.park_home, OLD).exists());

    std::fs::write(w.park_home.join("config.toml"), "[archive]\nauto = true\n").unwrap();
    w.park(&["ls", "--archived"]);
    let meta = archive::dir(&w.park_home, OLD).join("meta.json");
    let t0 = std::time::Instant::now();
    while !meta.exists() && t0.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(meta.exists(), "the daily run did not archive");
    let first = std::fs::read_to_string(&stamp).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    w.park(&["ls", "--archived"]);
    assert_eq!(
        std::fs::read_to_string(&stamp).unwrap(),
        first,
        "ran twice in a day"
    );

    // A broken config is reported by doctor and starts nothing.
    std::fs::write(w.park_home.join("config.toml"), "[archive]\nauto = 1\n").unwrap();
    let (c, v) = w.json(&["doctor"]);
    assert_eq!(c, 1);
    assert!(v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["code"] == "config"));
}

#[test]
fn doctor_warns_about_a_tiny_cleanup_period_and_shows_the_archive_size() {
    let w = World::new();
    w.claude("api", OLD, "x", 29);
    std::fs::write(
        w.home.join(".claude/settings.json"),
        r#"{"cleanupPeriodDays": 0}"#,
    )
    .unwrap();
    let (c, _) = w.json(&["archive", "--all"]);
    assert_eq!(c, 0);
    let (c, v) = w.json(&["doctor"]);
    assert_eq!(c, 1, "{v}");
    let f = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "cleanup-period")
        .expect("cleanup-period finding")
        .clone();
    assert!(f["fix"].as_str().unwrap().contains("park archive --all"));
    assert!(v["archive_bytes"].as_u64().unwrap() > 0);
    std::fs::write(
        w.home.join(".claude/settings.json"),
        r#"{"cleanupPeriodDays": 60}"#,
    )
    .unwrap();
    let (c, v) = w.json(&["doctor"]);
    assert_eq!(c, 0, "{v}");
}
