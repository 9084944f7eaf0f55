//! Issue 21: the autopilot against real Claude Code panes (mock model server) in a private tmux
//! server with an attached (nested) client: `park daemon --once` parks exactly the least recently
//! used, never the visible, pinned or excluded one, explains every decision, suggests without
//! parking in suggest mode, never re-parks a session resumed by hand before it is quiet again; the
//! running daemon parks on memory pressure within seconds and stops once MemAvailable is back above
//! the floor; a bad config
//! is a usage error and parks nothing; a daemon killed mid-pass loses nothing and `--ensure`
//! restarts it.
//!
//! The tests of this module share one lock: the memory-pressure test measures MemAvailable, which
//! another test starting real agents would move.

use crate::common::*;
use park_e2e::*;
use park_protocol::auto::{AutoAgent, AutoReport, Decision};
use park_protocol::Status;
use std::sync::Mutex;
use std::time::Instant;

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// A real Claude in a new window `name` of session `w`, one turn done: (pane, session id).
fn start(sb: &Sandbox, env: &Env, name: &str) -> (String, String) {
    let dir = sb.project_dir(name);
    let pane = sb.new_shell_window("w", name, &dir, env);
    sb.type_line(&pane, "claude --dangerously-skip-permissions");
    sb.wait_for(&pane, CLAUDE_READY, SECS(60)).unwrap();
    submit_prompt(sb, &pane, &format!("hello {name}"), "❯");
    sb.wait_for(&pane, "PARKTEST-OK", SECS(60)).unwrap();
    let r = wait_row(sb, &pane, SECS(30), |r| {
        r.status == Status::Idle && r.session_id.is_some()
    });
    (pane, r.session_id.unwrap())
}

fn config(sb: &Sandbox, text: &str) {
    let dir = sb.home.join(".config/park");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), text).unwrap();
}

fn report(o: &std::process::Output) -> AutoReport {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not an auto report ({e}): {}", text(o)))
}

fn once(sb: &Sandbox) -> AutoReport {
    let o = park(sb, &["daemon", "--once", "--json"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    report(&o)
}

fn of<'a>(r: &'a AutoReport, pane: &str) -> &'a AutoAgent {
    r.agents
        .iter()
        .find(|a| a.pane == pane)
        .unwrap_or_else(|| panic!("{pane} not in the report: {r:#?}"))
}

fn parked_panes(r: &AutoReport) -> Vec<String> {
    let mut v: Vec<String> = r
        .agents
        .iter()
        .filter(|a| a.decision == Decision::Parked)
        .map(|a| a.pane.clone())
        .collect();
    v.sort();
    v
}

#[test]
fn daemon_once_parks_the_least_recently_used_never_visible_pinned_or_excluded_and_says_why() {
    let _serial = serial();
    let sb = Sandbox::new();
    let mock = mock_server!(&sb.logs);
    seed_claude_home(&sb.home, &sb.work, CLAUDE_API_KEY).unwrap();
    install_shims(&sb, None);
    let env = sb.claude_env(&mock);
    // Started in this order; `a` then gets a second turn, so it is the most recently used.
    let names = ["a", "b", "c", "d", "e"];
    let agents: Vec<(String, String)> = names.iter().map(|n| start(&sb, &env, n)).collect();
    let pane = |n: &str| {
        agents[names.iter().position(|x| *x == n).unwrap()]
            .0
            .clone()
    };
    // Seconds apart, so the order does not hang on a clock tick.
    std::thread::sleep(SECS(3));
    submit_prompt(&sb, &pane("a"), "hello again a", "❯");
    // Claude Code keeps its terminal title (`✳ Claude Code`): the reply on screen says the
    // second turn is done.
    sb.wait_for(&pane("a"), r"(?s)hello again a.*PARKTEST-OK", SECS(60))
        .unwrap();
    wait_row(&sb, &pane("a"), SECS(60), |r| {
        r.status == Status::Idle && r.idle_seconds.is_some_and(|s| s < 5)
    });
    // Two more that must stay whatever the budget: a turn in flight, and a background shell.
    let (busy, _) = start(&sb, &env, "busy");
    let (shell, _) = start(&sb, &env, "shell");
    submit_prompt(&sb, &busy, "think hard [slow 120]", "❯");
    submit_prompt(&sb, &shell, "serve it [bgtool sleep 600]", "❯");
    wait_row(&sb, &busy, SECS(30), |r| r.status == Status::Busy);
    wait_row(&sb, &shell, SECS(60), |r| r.status == Status::Shell);
    // A client looks at window d; b is pinned.
    let client = Outer::attach(&sb, "w");
    sb.tmux(&["select-window", "-t", "=w:d"]).unwrap();
    let o = park(&sb, &["pin", &pane("b")]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let l = ls(&sb);
    let pinned: Vec<&str> = l
        .rows
        .iter()
        .filter(|r| r.pinned)
        .map(|r| r.pane.as_str())
        .collect();
    assert_eq!(pinned, vec![pane("b").as_str()], "ls --json marks the pin");
    assert!(text(&park(&sb, &["ls"])).contains('📌'), "ls shows the pin");
    // Everyone quiet for at least `idle` (measured from the later of turn and start).
    std::thread::sleep(SECS(16));

    // Suggest mode: nothing parked, the two least recently used suggested.
    config(
        &sb,
        "[auto]\nmode = \"suggest\"\nidle = \"15s\"\nmax_live = 5\nper_pass = 3\n",
    );
    let r = once(&sb);
    eprintln!("{}", text(&park(&sb, &["auto", "status"])));
    assert!(parked_panes(&r).is_empty(), "suggest parks nothing: {r:#?}");
    assert_eq!(r.budget.live, 7);
    for p in [&busy, &shell] {
        assert!(
            of(&r, p).reason.starts_with("refused by guard not-busy"),
            "{r:#?}"
        );
    }
    assert_eq!(of(&r, &pane("c")).decision, Decision::Suggested, "{r:#?}");
    assert_eq!(of(&r, &pane("e")).decision, Decision::Suggested, "{r:#?}");
    assert_eq!(
        of(&r, &pane("c")).rank,
        Some(1),
        "c is the least recently used"
    );
    assert_eq!(of(&r, &pane("b")).reason, "pinned");
    assert_eq!(of(&r, &pane("d")).reason, "visible in an attached client");
    assert!(
        of(&r, &pane("a")).reason.starts_with("budget already met"),
        "{r:#?}"
    );
    assert_eq!(entries(&sb).len(), 0);
    let st = park(&sb, &["status"]);
    assert!(
        text(&st).contains("2?"),
        "status line shows the suggestions: {}",
        text(&st)
    );
    let suggested: Vec<String> = ls(&sb)
        .rows
        .iter()
        .filter(|r| r.suggested)
        .map(|r| r.pane.clone())
        .collect();
    assert_eq!(suggested.len(), 2, "ls --json marks the suggested rows");
    // `park show` reads pins and suggestions from the same source as `ls` (issue 34 item 5).
    let shown = text(&park(&sb, &["show", &pane("b")]));
    assert!(shown.contains("\"pinned\": true"), "{shown}");
    let shown = text(&park(&sb, &["show", &pane("c")]));
    assert!(shown.contains("\"suggested\": true"), "{shown}");

    // Suggestions stand only under the settings that made them (issue 34 item 2): mode off
    // clears them at once — `ls`, `show`, `park status` and the pushed status line — although
    // the last pass's report still lists them.
    config(
        &sb,
        "[auto]\nmode = \"off\"\nidle = \"15s\"\nmax_live = 5\nper_pass = 3\n",
    );
    assert!(
        !ls(&sb).rows.iter().any(|r| r.suggested),
        "no suggestion with mode off"
    );
    let shown = text(&park(&sb, &["show", &pane("c")]));
    assert!(shown.contains("\"suggested\": false"), "{shown}");
    // `park status` reads the file the daemon rewrites, and the daemon pushes the status line,
    // when it notices the edit (a tick): wait for both.
    let pushed = poll(SECS(30), || {
        let v = sb
            .tmux(&["show", "-g", "-v", "@park_status"])
            .unwrap_or_default();
        let f = text(&park(&sb, &["status"]));
        (!v.contains('?') && !f.contains('?')).then_some(v)
    });
    assert!(
        pushed.is_some(),
        "the daemon pushes the status line on a config change"
    );
    config(
        &sb,
        "[auto]\nmode = \"suggest\"\nidle = \"15s\"\nmax_live = 5\nper_pass = 3\n",
    );

    // `auto status` is a dry evaluation with the same decisions.
    let o = park(&sb, &["auto", "status", "--json"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let s = report(&o);
    assert_eq!(of(&s, &pane("c")).decision, Decision::Suggested);
    assert_eq!(s.trigger, "status");

    // Park mode: exactly those two go, through the park transaction (ledger, pill, auto.log).
    config(
        &sb,
        "[auto]\nmode = \"park\"\nidle = \"15s\"\nmax_live = 5\nper_pass = 3\n",
    );
    // The config turned the autopilot on, so every park command since has made sure a daemon runs:
    // it re-reads the changed config and passes at once, and `--once` waits for its pass (one
    // acting pass at a time). Together they park exactly the two least recently used.
    let r = once(&sb);
    let n = poll(SECS(60), || {
        let n = entries(&sb).len();
        (n >= 2).then_some(n)
    });
    std::thread::sleep(SECS(2));
    assert_eq!(entries(&sb).len(), 2, "{r:#?}");
    assert_eq!(n, Some(2));
    let mut parked: Vec<String> = ls(&sb)
        .rows
        .iter()
        .filter(|r| r.state == park_protocol::RowState::Parked)
        .map(|r| r.pane.clone())
        .collect();
    parked.sort();
    let mut want = vec![pane("c"), pane("e")];
    want.sort();
    assert_eq!(parked, want, "{r:#?}");
    for p in [pane("a"), pane("b"), pane("d"), busy.clone(), shell.clone()] {
        assert_eq!(row(&sb, &p).unwrap().state, park_protocol::RowState::Live);
    }
    let log = std::fs::read_to_string(sb.park_home.join("auto.log")).unwrap();
    assert_eq!(log.lines().count(), 2, "{log}");
    assert!(log.contains("7 live agents > max_live 5"), "{log}");
    // The attached client is told once.
    client
        .wait("park auto: parked", SECS(5))
        .expect("the pass is announced to the attached client");

    // A session unparked by hand is not re-parked before it is quiet for `idle` again, and an
    // excluded one is never parked. The exclusion is written first: the daemon (park mode) may
    // run a pass of its own at any time once the unpark makes 6 live agents, and with the old
    // config it would rightly park `a`, the least recently used (seen under load in a full run).
    config(
        &sb,
        &format!(
            "[auto]\nmode = \"park\"\nidle = \"15s\"\nmax_live = 5\nexclude = [\"{}\"]\n",
            pane("a")
        ),
    );
    let o = park(&sb, &["unpark", &pane("c"), "--json"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    wait_row(&sb, &pane("c"), SECS(60), |r| {
        r.state == park_protocol::RowState::Live && r.status == Status::Idle
    });
    let r = once(&sb);
    assert!(parked_panes(&r).is_empty(), "{r:#?}");
    assert!(of(&r, &pane("c")).reason.starts_with("quiet for"), "{r:#?}");
    assert_eq!(
        of(&r, &pane("a")).reason,
        format!("excluded ({})", pane("a"))
    );
    assert!(r.budget.over.is_some(), "still over max_live, and says so");
}

fn mem_available() -> u64 {
    let t = std::fs::read_to_string("/proc/meminfo").unwrap();
    t.lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .unwrap()
        * 1024
}

/// Kills the hog when the test ends, passed or not.
struct Hog(std::process::Child);

impl Drop for Hog {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A process that takes touched anonymous memory, 32 MB at a time, until MemAvailable is under
/// `below`, and holds it until killed (the machine's other activity moves MemAvailable, so the
/// hog aims at the figure, not at a size).
fn hog(below: u64) -> Hog {
    let code = format!(
        r#"import time
def avail():
    for l in open('/proc/meminfo'):
        if l.startswith('MemAvailable:'): return int(l.split()[1])*1024
held=[]
while avail() >= {below}:
    b=bytearray(8<<20)
    for i in range(0,len(b),4096): b[i]=1
    held.append(b)
print('ready',flush=True)
time.sleep(600)
"#
    );
    let mut c = std::process::Command::new("python3")
        .args(["-c", &code])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3 for the memory hog");
    use std::io::BufRead;
    let mut line = String::new();
    std::io::BufReader::new(c.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let h = Hog(c);
    assert_eq!(line.trim(), "ready");
    h
}

#[test]
fn memory_pressure_parks_within_seconds_only_as_many_as_needed_bad_config_and_restarts() {
    let _serial = serial();
    let sb = Sandbox::new();
    let mock = mock_server!(&sb.logs);
    seed_claude_home(&sb.home, &sb.work, CLAUDE_API_KEY).unwrap();
    install_shims(&sb, None);
    let env = sb.claude_env(&mock);
    let names = ["x", "y", "z"];
    let agents: Vec<(String, String)> = names.iter().map(|n| start(&sb, &env, n)).collect();

    // A bad config: a usage error naming the line and key, and nothing automatic runs.
    config(&sb, "[auto]\nmode = \"park\"\nmax_lives = 1\n");
    for args in [
        &["daemon", "--once"][..],
        &["auto", "status"][..],
        &["config"][..],
    ] {
        let o = park(&sb, args);
        assert_eq!(code(&o), 2, "{args:?}: {}", text(&o));
        assert!(
            text(&o).contains("line 3") && text(&o).contains("max_lives"),
            "{args:?}: {}",
            text(&o)
        );
    }
    let o = park(&sb, &["daemon", "--ensure"]);
    assert!(text(&o).contains("nothing automatic runs"), "{}", text(&o));
    std::thread::sleep(SECS(2));
    assert_eq!(entries(&sb).len(), 0, "a bad config parks nothing");
    assert!(!sb.park_home.join("waker.pid").exists(), "no daemon");

    // The floor sits 1 GB under what is available now; the hog takes memory until it is ~16 MB
    // under the floor, which one parked agent (~150 MB of anonymous memory) gives back.
    let floor = mem_available().saturating_sub(1 << 30);
    config(
        &sb,
        &format!(
            "[auto]\nmode = \"park\"\nidle = \"0s\"\nmin_available = \"{floor}\"\ninterval = \"1h\"\n"
        ),
    );
    let o = park(&sb, &["daemon", "--ensure"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let pid = poll(SECS(10), || {
        std::fs::read_to_string(sb.park_home.join("waker.pid"))
            .ok()
            .and_then(|s| s.split_whitespace().next()?.parse::<u32>().ok())
    })
    .expect("the daemon writes its pid");
    // Its first pass finds every budget holding and parks nothing.
    let first = poll(SECS(30), || {
        let r: AutoReport =
            serde_json::from_slice(&std::fs::read(sb.park_home.join("auto-status.json")).ok()?)
                .ok()?;
        Some(r)
    })
    .expect("a first pass");
    assert!(parked_panes(&first).is_empty(), "{first:#?}");
    assert_eq!(entries(&sb).len(), 0);

    // Crossing the floor is the hog's last 8 MB step: the clock starts when it is ready.
    let h = hog(floor - (16 << 20));
    let t0 = Instant::now();
    let crossed = Some(t0);
    let parked = poll(SECS(30), || {
        let n = entries(&sb).len();
        (n > 0).then_some(n)
    });
    let t_park = t0.elapsed();
    assert!(parked.is_some(), "the daemon never parked under pressure");
    // What came back, for the record: on this VM a killed agent's 150 MB of anonymous memory has
    // shown up in MemAvailable anywhere from 5 to 90 MB at once, so how many parks a shortfall
    // takes here is not asserted (the policy's unit tests do that against the estimate).
    let mut trace = vec![];
    let back = poll(SECS(15), || {
        let m = mem_available();
        trace.push(format!(
            "{:.1}s {}M",
            t0.elapsed().as_secs_f64(),
            (m as i64 - floor as i64) >> 20
        ));
        (m >= floor).then(Instant::now)
    });
    eprintln!("MemAvailable - floor: {}", trace.join(", "));
    eprintln!(
        "pressure: first park {:?} after MemAvailable crossed the floor; back above the floor {:?} after crossing",
        t_park,
        crossed.zip(back).map(|(c, b)| b.saturating_duration_since(c))
    );
    // The hog goes: MemAvailable is far above the floor, and once the pass that may be running
    // has finished, the daemon parks nothing more.
    drop(h);
    std::thread::sleep(SECS(3));
    let n = entries(&sb).len();
    std::thread::sleep(SECS(4));
    let log = std::fs::read_to_string(sb.park_home.join("auto.log")).unwrap();
    let dlog = std::fs::read_to_string(sb.park_home.join("waker.log")).unwrap_or_default();
    assert_eq!(
        entries(&sb).len(),
        n,
        "parked after the floor was met again\n{log}\n{dlog}"
    );
    // Every park was made under pressure, saying so.
    for l in log.lines() {
        assert!(
            l.contains("\"trigger\":\"pressure\"") && l.contains("MemAvailable"),
            "{l}"
        );
    }
    eprintln!("pressure: {n} of {} agents parked", names.len());

    // Killed mid-pass (a fault point inside the park transaction), the daemon loses nothing, and
    // `--ensure` brings it back.
    // Every agent live again first (the pressure passes may have parked more than one), with the
    // autopilot off so no park command starts a daemon meanwhile.
    config(&sb, "[auto]\nmode = \"off\"\n");
    kill_and_reap(&[pid], SECS(5));
    let o = park(&sb, &["unpark", "--all", "--yes", "--json"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let back_live = poll(SECS(60), || {
        agents
            .iter()
            .all(|(_, sid)| !claude_pids_for(&sb.home, sid).is_empty())
            .then_some(())
    });
    assert!(back_live.is_some(), "not every agent resumed");
    for (p, _) in &agents {
        wait_row(&sb, p, SECS(60), |r| r.status == Status::Idle);
    }
    assert!(
        !sb.park_home.join("waker.pid").exists()
            || std::fs::read_to_string(sb.park_home.join("waker.pid"))
                .ok()
                .and_then(|s| s.split_whitespace().next()?.parse::<u32>().ok())
                .is_none_or(|p| !pid_alive(p)),
        "no daemon runs before the faulted one"
    );
    config(
        &sb,
        "[auto]\nmode = \"park\"\nidle = \"0s\"\ninterval = \"5s\"\n",
    );
    let mut d = park_cmd(&sb, &[("PARK_FAULT", "before-kill")])
        .args(["daemon"])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let st = poll(SECS(60), || d.try_wait().ok().flatten());
    let st = st.unwrap_or_else(|| {
        let _ = d.kill();
        let _ = d.wait();
        panic!("the daemon never reached the fault point")
    });
    assert_eq!(st.code(), Some(99), "the daemon died at the fault point");
    for (p, sid) in &agents {
        let live = !claude_pids_for(&sb.home, sid).is_empty();
        let recorded = entries(&sb)
            .iter()
            .any(|e| std::fs::read_to_string(e).is_ok_and(|t| t.contains(sid.as_str())));
        assert!(live || recorded, "{p}: SESSION LOST");
    }
    let o = park(&sb, &["daemon", "--ensure"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(text(&o).contains("daemon running"), "{}", text(&o));
    // The restarted daemon finishes the job: every agent parked, doctor clean, nothing lost.
    let all = poll(SECS(90), || {
        agents
            .iter()
            .all(|(_, sid)| claude_pids_for(&sb.home, sid).is_empty())
            .then_some(())
    });
    let d = park(&sb, &["doctor", "--json"]);
    assert!(
        all.is_some(),
        "not every agent parked after the restart: {}",
        text(&d)
    );
    assert_eq!(entries(&sb).len(), names.len());
    let d = poll(SECS(30), || {
        let d = park(&sb, &["doctor", "--json"]);
        (code(&d) == 0).then_some(d)
    });
    assert!(
        d.is_some(),
        "doctor clean after the restart; last pass: {}\ndaemon log: {}",
        std::fs::read_to_string(sb.park_home.join("auto-status.json")).unwrap_or_default(),
        std::fs::read_to_string(sb.park_home.join("waker.log")).unwrap_or_default()
    );
    let _ = park(&sb, &["daemon", "--ensure"]);
    if let Some(p) = std::fs::read_to_string(sb.park_home.join("waker.pid"))
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u32>().ok())
    {
        kill_and_reap(&[p], SECS(5));
    }
}

const FAKE: &str = env!("CARGO_BIN_EXE_fake-agent");

/// A fake `claude` in window `name` of session `w` with one turn done, then `prompt` (if any).
fn fake(sb: &Sandbox, name: &str, prompt: Option<&str>) -> (String, String) {
    let dir = sb.project_dir(name);
    let pane = sb.new_shell_window("w", name, &dir, &[] as &[(&str, &str)]);
    sb.type_line(&pane, "claude");
    sb.wait_for(&pane, CLAUDE_READY, SECS(15)).unwrap();
    submit_prompt(sb, &pane, "first prompt", "❯");
    sb.wait_for(&pane, "PARKTEST-OK", SECS(15)).unwrap();
    if let Some(p) = prompt {
        submit_prompt(sb, &pane, p, "❯");
    }
    let r = wait_row(sb, &pane, SECS(15), |r| r.session_id.is_some());
    (pane, r.session_id.unwrap())
}

/// The wake time of the parked entry of `sid`, as the ledger records it.
fn wake_at(sb: &Sandbox, sid: &str) -> Option<String> {
    entries(sb).iter().find_map(|e| {
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(e).ok()?).ok()?;
        (v["session_id"].as_str()? == sid).then(|| v["wake"]["at"].as_str().map(String::from))?
    })
}

/// The next 03:01 UTC after now (the fake agent's limit resets at 3am UTC, park wakes a minute
/// after; a 3am less than `park::agents::limit::GRACE` ago is still today's).
fn next_3am_utc_plus_1m() -> jiff::Timestamp {
    let now = jiff::Timestamp::now();
    let today = now.to_zoned(jiff::tz::TimeZone::UTC).date();
    let at = |d: jiff::civil::Date| {
        d.at(3, 0, 0, 0)
            .to_zoned(jiff::tz::TimeZone::UTC)
            .unwrap()
            .timestamp()
    };
    let t = if at(today) + jiff::SignedDuration::from_secs(60) < now {
        at(today.tomorrow().unwrap())
    } else {
        at(today)
    };
    t + jiff::SignedDuration::from_mins(1)
}

/// Issue 21 item 6 (the limit message shown by the fake agent in Claude Code's wording; the parser
/// itself is tested against captures of the real CLIs in `agents::limit`), and the
/// background-work rule: `--wake-on-limit-reset` parks with a wake one minute after the reset and
/// refuses a pane without a limit screen; `limit_reset = true` makes a pass park an agent at a
/// limit (even with the budget mode off); an agent with a background shell is kept and says why.
#[test]
fn limit_screens_park_until_the_reset_and_background_work_keeps_an_agent() {
    let _serial = serial();
    let sb = Sandbox::new();
    install_shims(&sb, Some(FAKE));
    let (lim, lim_sid) = fake(&sb, "lim", Some("go on [limit]"));
    let (plain, _) = fake(&sb, "plain", None);
    sb.wait_for(&lim, "resets 3am", SECS(15)).unwrap();

    let (c, out) = action(
        &sb,
        &[
            "park",
            &plain,
            "--wake-on-limit-reset",
            "--note",
            "continue",
        ],
    );
    assert_eq!(c, 1, "{out:?}");
    let why = out.results[0].reason.clone().unwrap_or_default();
    assert!(why.contains("no usage-limit screen"), "{why}");
    let (c, out) = action(
        &sb,
        &["park", &lim, "--wake-on-limit-reset", "--note", "continue"],
    );
    assert_eq!(c, 0, "{out:?}");
    assert_eq!(out.results[0].outcome.as_str(), "parked");
    let at: jiff::Timestamp = wake_at(&sb, &lim_sid).expect("a wake").parse().unwrap();
    assert_eq!(at, next_3am_utc_plus_1m());
    let o = park(&sb, &["unpark", &lim, "--json"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let _ = wait_row(&sb, &lim, SECS(15), |r| {
        r.state == park_protocol::RowState::Live
    });

    // The daemon: an agent at a limit goes (with the budget mode off); one with a background shell
    // stays, saying why; the rest are kept with their reasons.
    let (lim2, lim2_sid) = fake(&sb, "lim2", Some("again [limit]"));
    let (bg, _) = fake(&sb, "bg", Some("build [bg 600]"));
    sb.wait_for(&lim2, "resets 3am", SECS(15)).unwrap();
    wait_row(&sb, &bg, SECS(15), |r| r.status == Status::Shell);
    config(&sb, "[auto]\nmode = \"off\"\nlimit_reset = true\n");
    let r = once(&sb);
    assert_eq!(parked_panes(&r), vec![lim2.clone()], "{r:#?}");
    // `lim` was resumed by hand before its reset: its history still shows the message, and it is
    // not parked for it again.
    assert_eq!(of(&r, &lim).decision, Decision::Kept, "{r:#?}");
    assert!(of(&r, &lim2).reason.contains("usage limit"), "{r:#?}");
    assert!(
        of(&r, &bg).reason.starts_with("refused by guard not-busy"),
        "{r:#?}"
    );
    let at: jiff::Timestamp = wake_at(&sb, &lim2_sid).expect("a wake").parse().unwrap();
    assert_eq!(at, next_3am_utc_plus_1m());
    assert!(of(&r, &plain).reason.starts_with("quiet for"), "{r:#?}");
}
