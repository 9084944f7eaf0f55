//! `scripts/measure`: the numbers issue 2 asks for, on this machine, with real agents.
//!
//! Starts N real Claude Code panes (default 10) in a private tmux server against the mock model
//! server, one turn each, then prints: the median and p90 of `park ls --json` over 20 runs; the
//! time of `park park` and `park unpark` of one idle pane (median of 3 round trips); and, for each
//! park, the freed bytes park reported next to the tree's RSS/USS/anonymous memory measured from
//! /proc just before, and the change in MemAvailable measured around it (after a settle delay).
//! Everything it starts is stopped at the end.

use park_e2e::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn sibling(name: &str) -> PathBuf {
    std::env::current_exe()
        .expect("exe")
        .parent()
        .unwrap_or(Path::new("."))
        .join(name)
}

fn mem_available() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find(|l| l.starts_with("MemAvailable:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .unwrap_or(0)
        * 1024
}

/// MemAvailable once it is steady: sampled every 250 ms until eight samples in a row (2 s) lie
/// within 2 MiB of each other (or 30 s passed); returns their mean and whether it settled. A
/// resumed agent that is still loading, or the page cache moving, would otherwise be counted as
/// memory the park did (not) free.
fn settled_avail() -> (u64, bool) {
    let mut w: Vec<u64> = vec![];
    let t0 = Instant::now();
    loop {
        w.push(mem_available());
        if w.len() > 8 {
            w.remove(0);
        }
        let (lo, hi) = (*w.iter().min().unwrap_or(&0), *w.iter().max().unwrap_or(&0));
        let settled = w.len() == 8 && hi - lo <= 2 << 20;
        if settled || t0.elapsed() > Duration::from_secs(30) {
            return (w.iter().sum::<u64>() / w.len() as u64, settled);
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// `park park <pane> --json`, retried while the CPU check says the agent is still settling, then
/// MemAvailable once it has settled again: (time, result JSON, reported freed, MemAvailable, settled).
fn park_and_settle(
    park: &dyn Fn(&[&str]) -> (Duration, String),
    pane: &str,
) -> (Duration, serde_json::Value, u64, u64, bool) {
    let (t, out) = loop {
        let (t, out) = park(&["park", pane, "--json"]);
        if !out.contains("% CPU") {
            break (t, out);
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    std::thread::sleep(Duration::from_millis(500));
    let (avail1, steady1) = settled_avail();
    let v: serde_json::Value =
        serde_json::from_str(out.lines().next().unwrap_or("{}")).unwrap_or_default();
    let freed = v["results"][0]["freed_bytes"].as_u64().unwrap_or(0);
    (t, v, freed, avail1, steady1)
}

fn tree_mem(pid: u32) -> (u64, u64, u64) {
    tree_mem_except(pid, &[])
}

/// RSS, USS and anonymous memory of `pid`'s tree, leaving out `skip` and their descendants (the
/// shared Codex daemon, a child of the first TUI).
fn tree_mem_except(pid: u32, skip: &[u32]) -> (u64, u64, u64) {
    let mut skipped: Vec<u32> = skip.to_vec();
    for s in skip {
        skipped.extend(descendants(*s));
    }
    let mut pids = vec![pid];
    pids.extend(descendants(pid));
    pids.retain(|p| !skipped.contains(p));
    let (mut rss, mut uss, mut anon) = (0, 0, 0);
    for p in pids {
        let Ok(s) = std::fs::read_to_string(format!("/proc/{p}/smaps_rollup")) else {
            continue;
        };
        for l in s.lines() {
            let mut it = l.split_whitespace();
            let (Some(k), Some(v)) = (it.next(), it.next().and_then(|v| v.parse::<u64>().ok()))
            else {
                continue;
            };
            match k {
                "Rss:" => rss += v * 1024,
                "Private_Clean:" | "Private_Dirty:" => uss += v * 1024,
                "Anonymous:" => anon += v * 1024,
                _ => {}
            }
        }
    }
    (rss, uss, anon)
}

fn mb(b: u64) -> String {
    format!("{:.1} MB", b as f64 / 1048576.0)
}

fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(10);
    let _ = Agents::locate();
    let mut sb = Sandbox::new();
    let mock = MockServer::start_with(&sibling("mock-llm"), &sb.logs);
    seed_claude_home(&sb.home, &sb.work, CLAUDE_API_KEY).expect("seed");
    let park_bin = sibling("park");
    let park = |args: &[&str]| -> (Duration, String) {
        let t0 = Instant::now();
        let o = Command::new(&park_bin)
            .env_clear()
            .envs(sb.base_env())
            .env("PARK_TMUX_SOCKET", sb.label())
            .args(args)
            .output()
            .expect("park");
        (
            t0.elapsed(),
            format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            ),
        )
    };
    let mut env = sb.claude_env(&mock);
    env.push(("DISABLE_AUTOUPDATER".into(), "1".into()));
    println!("starting {n} real Claude Code panes…");
    let mut panes = vec![];
    for i in 0..n {
        let dir = sb.project_dir(&format!("p{i}"));
        let pane = sb.new_shell_window("m", &format!("p{i}"), &dir, &env);
        sb.type_line(&pane, "claude");
        panes.push(pane);
        // Claude corrupts ~/.claude.json under concurrent starts: stagger them.
        std::thread::sleep(Duration::from_millis(1200));
    }
    for (i, pane) in panes.iter().enumerate() {
        sb.wait_for(pane, CLAUDE_READY, Duration::from_secs(90))
            .expect("claude up");
        sb.type_line(pane, &format!("measure prompt {i}"));
    }
    for pane in &panes {
        sb.wait_for(pane, "PARKTEST-OK", Duration::from_secs(90))
            .expect("reply");
    }
    std::thread::sleep(Duration::from_secs(5));
    let (_, out) = park(&["ls"]);
    print!("{out}");
    let live = out.lines().filter(|l| l.contains(" claude idle")).count();
    println!("idle agents listed: {live}/{n}");

    // Cold: no USS/PSS cached yet (every smaps_rollup read); then warm runs reuse them.
    let _ = std::fs::remove_dir_all(sb.park_home.join("cache"));
    let cold = park(&["ls", "--json"]).0;
    println!("park ls --json with {n} live agents, cold memory cache: {cold:?}");
    let mut ls_times: Vec<Duration> = (0..20).map(|_| park(&["ls", "--json"]).0).collect();
    ls_times.sort();
    println!(
        "park ls --json with {n} live agents: median {:?}, p90 {:?}, min {:?} (20 runs)",
        median(&mut ls_times.clone()),
        ls_times[ls_times.len() * 9 / 10],
        ls_times[0]
    );

    let mut park_t = vec![];
    let mut unpark_t = vec![];
    for (round, pane) in panes.iter().take(3).enumerate() {
        let pid = sb
            .pane_pid(pane)
            .and_then(|p| descendants(p).into_iter().next())
            .unwrap_or(0);
        let (avail0, steady0) = settled_avail();
        let (rss, uss, anon) = tree_mem(pid);
        let (t, v, freed, avail1, steady1) = park_and_settle(&park, pane);
        println!(
            "round {round}: park {:?} ({}); reported freed {} | measured before kill: RSS {} USS {} anon {} | MemAvailable settled +{} ({:+.0}% vs reported){}",
            t,
            v["results"][0]["outcome"],
            mb(freed),
            mb(rss),
            mb(uss),
            mb(anon),
            mb(avail1.saturating_sub(avail0)),
            (avail1 as f64 - avail0 as f64 - freed as f64) / freed.max(1) as f64 * 100.0,
            if steady0 && steady1 { "" } else { " (MemAvailable never settled: noisy)" }
        );
        park_t.push(t);
        let (t, out) = park(&["unpark", pane]);
        println!("round {round}: unpark {t:?}: {}", out.trim());
        unpark_t.push(t);
        sb.wait_for(pane, CLAUDE_READY, Duration::from_secs(60))
            .expect("resumed");
        std::thread::sleep(Duration::from_secs(3));
    }
    println!("park one idle Claude pane: median {:?}; unpark (until the verifier confirmed the session): median {:?}", median(&mut park_t), median(&mut unpark_t));
    if std::env::var("MEASURE_SKIP_CODEX").as_deref() != Ok("1") {
        codex_daemon_truth(&sb, &mock, &park);
    }
    drop(mock);
    let left = sb.cleanup();
    println!("cleanup: {} processes left", left.len());
}

/// Codex in daemon mode: what parking one TUI client frees while the shared app-server daemon
/// (started by the first client, kept for the others) stays.
fn codex_daemon_truth(
    sb: &Sandbox,
    mock: &MockServer,
    park: &dyn Fn(&[&str]) -> (Duration, String),
) {
    println!();
    println!("Codex {CODEX_VERSION}, daemon mode, two TUI clients:");
    seed_codex_home(
        &sb.home,
        &sb.work,
        mock,
        &CodexSeed::default().thread_id_title(),
    )
    .expect("seed codex");
    let mut panes = vec![];
    for i in 0..2 {
        let dir = sb.project_dir(&format!("cx{i}"));
        let pane = sb.new_shell_window("cx", &format!("cx{i}"), &dir, &sb.codex_env());
        sb.type_line(&pane, "codex");
        sb.wait_for(&pane, "Ask Codex to do anything", Duration::from_secs(120))
            .expect("codex up");
        sb.type_text(&pane, &format!("codex measure {i}"));
        std::thread::sleep(Duration::from_millis(300));
        sb.press_enter(&pane);
        sb.wait_for(&pane, r"PARKTEST-OK", Duration::from_secs(90))
            .expect("codex reply");
        panes.push(pane);
    }
    std::thread::sleep(Duration::from_secs(3));
    let daemons = codex_daemon_pids(&sb.home);
    let daemon_mem = |ds: &[u32]| -> u64 {
        ds.iter()
            .filter(|d| pid_alive(**d))
            .map(|d| tree_mem(*d).0)
            .sum()
    };
    let d_before = daemon_mem(&daemons);
    let pane = &panes[1];
    let root = sb
        .pane_pid(pane)
        .and_then(|p| descendants(p).into_iter().next())
        .unwrap_or(0);
    let (avail0, steady0) = settled_avail();
    let (rss, uss, anon) = tree_mem_except(root, &daemons);
    let (t, v, freed, avail1, steady1) = park_and_settle(park, pane);
    let d_after = daemon_mem(&daemons);
    println!(
        "codex: park {t:?} ({}); reported freed {} | client tree before the kill: RSS {} USS {} anon {} | MemAvailable settled +{} ({:+.0}% vs reported){}",
        v["results"][0]["outcome"],
        mb(freed),
        mb(rss),
        mb(uss),
        mb(anon),
        mb(avail1.saturating_sub(avail0)),
        (avail1 as f64 - avail0 as f64 - freed as f64) / freed.max(1) as f64 * 100.0,
        if steady0 && steady1 { "" } else { " (MemAvailable never settled: noisy)" }
    );
    println!(
        "codex: the shared daemon (pids {daemons:?}) stays: RSS {} before, {} after; park said: {}",
        mb(d_before),
        mb(d_after),
        v["results"][0]["reason"].as_str().unwrap_or("-")
    );
    let (t, out) = park(&["unpark", pane]);
    println!("codex: unpark {t:?}: {}", out.trim());
}
