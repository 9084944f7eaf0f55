//! `scripts/bench`: how park scales with the number of agent panes, on this machine.
//!
//! For each N (default 10 50 200 500) starts a private tmux server with N panes, each running the
//! cheap fake agent (one turn done, idle), and prints medians for `park status`, `park ls --json`
//! and the floor measured in the same run (one `tmux list-panes -a -F …` plus one
//! `ps -e -o pid,ppid,rss,args`: the least any tool must read), with the ratio to the floor. Then,
//! on 30 fake panes: `park park --idle 0s --yes` (every pane through the full guard chain), and the
//! unpark overhead beyond the agent's own start (unpark of one pane until the verifier confirmed it,
//! minus the time the same agent takes to start in a fresh pane). Prints a Markdown table.
//! Everything it starts is stopped at the end. Timings are printed, never asserted.
//! `--daemon-memory N`: the daemon's memory while it journals N panes (BENCHMARKS.md).

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

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

struct Bench {
    sb: Sandbox,
    park: PathBuf,
    fake: PathBuf,
}

impl Bench {
    fn new() -> Bench {
        let sb = Sandbox::new();
        let fake = sibling("fake-agent");
        std::os::unix::fs::symlink(&fake, sb.bin.join("claude")).expect("shim");
        std::os::unix::fs::symlink(sibling("park"), sb.bin.join("park")).expect("shim");
        // Started through the `claude` shim, so park sees the program name a real agent has.
        let fake = sb.bin.join("claude");
        Bench {
            sb,
            park: sibling("park"),
            fake,
        }
    }

    fn run(&self, args: &[&str]) -> (Duration, String) {
        let (t, out, _) = self.run_with(Command::new(&self.park), &[], args);
        (t, out)
    }

    /// Runs `cmd` (park, or a profiler wrapping it) in the sandbox; returns (wall, stdout, stderr).
    fn run_with(
        &self,
        mut cmd: Command,
        env: &[(&str, &str)],
        args: &[&str],
    ) -> (Duration, String, String) {
        let t0 = Instant::now();
        let o = cmd
            .env_clear()
            .envs(self.sb.base_env())
            .env("PARK_TMUX_SOCKET", self.sb.label())
            .envs(env.iter().copied())
            .args(args)
            .output()
            .expect("park");
        (
            t0.elapsed(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    }

    /// `--profile N`: where one `park ls --json` over N panes spends its time. Median wall time of
    /// each phase (`PARK_PROFILE=1`), then, when valgrind is installed, callgrind's instruction
    /// counts for park's own process (its tmux and ps children are not counted: they are waited
    /// on, and the phases show how long).
    fn profile(&self, n: usize) {
        let _ = self.run(&["ls", "--json"]);
        let runs = 11;
        let mut phases: Vec<(String, Vec<f64>)> = vec![];
        let mut walls = vec![];
        for _ in 0..runs {
            let (t, _, err) = self.run_with(
                Command::new(&self.park),
                &[("PARK_PROFILE", "1")],
                &["ls", "--json"],
            );
            walls.push(t);
            for l in err.lines().filter_map(|l| l.strip_prefix("park profile: ")) {
                let mut w = l.split_whitespace();
                let (Some(name), Some(v)) = (w.next(), w.next().and_then(|v| v.parse().ok()))
                else {
                    continue;
                };
                match phases.iter_mut().find(|(p, _)| p == name) {
                    Some((_, vs)) => vs.push(v),
                    None => phases.push((name.to_string(), vec![v])),
                }
            }
        }
        println!(
            "### `park ls --json` over {n} panes, by phase (median of {runs}, `PARK_PROFILE=1`)"
        );
        println!();
        println!("wall (whole process): {}", ms(median(walls)));
        println!();
        println!("| phase | median |");
        println!("|---|---:|");
        for (name, mut vs) in phases {
            vs.sort_by(f64::total_cmp);
            println!("| {name} | {:.2} ms |", vs[vs.len() / 2]);
        }
        let have_valgrind = Command::new("valgrind").arg("--version").output().is_ok();
        if !have_valgrind {
            println!();
            println!("(valgrind not installed: no instruction counts)");
            return;
        }
        let out = self.sb.root.join("callgrind.out");
        let mut vg = Command::new("valgrind");
        vg.args(["--tool=callgrind", "--trace-children=no"])
            .arg(format!("--callgrind-out-file={}", out.display()))
            .arg(&self.park);
        let _ = self.run_with(vg, &[], &["ls", "--json"]);
        let ann = Command::new("callgrind_annotate")
            .args(["--inclusive=yes", "--threshold=100"])
            .arg(&out)
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default();
        println!();
        println!("### callgrind, park's own instructions (inclusive), top park functions");
        println!("```");
        let mut shown = 0;
        for l in ann.lines() {
            if l.contains("PROGRAM TOTALS") || (l.contains("park::") && shown < 25) {
                shown += usize::from(!l.contains("PROGRAM TOTALS"));
                println!("{}", l.split(" [").next().unwrap_or(l).trim_end());
            }
        }
        println!("```");
    }

    /// `--daemon-memory N`: the daemon journaling N panes. It is started in the foreground (as
    /// `park daemon --ensure` starts it), left to run three passes, then its memory is sampled
    /// every 100 ms for 30 s (three more passes): resident set (median, max), of which anonymous
    /// and file-backed, from `/proc/<pid>/status`, PSS from `smaps_rollup` at the end, and the
    /// daemon's own CPU time per pass over those 30 s (10 ms ticks).
    fn daemon_memory(&self, n: usize) {
        let mut d = Command::new(&self.park);
        d.env_clear()
            .envs(self.sb.base_env())
            .env("PARK_TMUX_SOCKET", self.sb.label())
            .arg("daemon")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        let mut child = d.spawn().expect("park daemon");
        let pid = child.id();
        std::thread::sleep(Duration::from_secs(25));
        let field = |text: &str, key: &str| -> u64 {
            text.lines()
                .find_map(|l| l.strip_prefix(key))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
                .unwrap_or(0)
        };
        // utime and stime: fields 14 and 15 of its stat.
        let ticks = || stat_pair(&format!("/proc/{pid}/stat"), 14);
        let mut rss = vec![];
        let mut anon = vec![];
        let mut file = vec![];
        let cpu0 = ticks();
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(30) {
            let st = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
            rss.push(field(&st, "VmRSS:"));
            anon.push(field(&st, "RssAnon:"));
            file.push(field(&st, "RssFile:"));
            std::thread::sleep(Duration::from_millis(100));
        }
        // USER_HZ is 100: ticks of 10 ms, over three passes.
        let cpu_per_pass = (ticks() - cpu0) as f64 * 10.0 / 3.0;
        let roll = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).unwrap_or_default();
        let pss = field(&roll, "Pss:");
        let journaled = std::fs::read_to_string(self.sb.park_home.join("journal.json"))
            .ok()
            .and_then(|j| serde_json::from_str::<serde_json::Value>(&j).ok())
            .and_then(|j| j["sessions"].as_array().map(Vec::len))
            .unwrap_or(0);
        let _ = child.kill();
        let _ = child.wait();
        let med = |mut v: Vec<u64>| {
            v.sort_unstable();
            v[v.len() / 2]
        };
        let mb = |kb: u64| format!("{:.1} MB", kb as f64 / 1024.0);
        let max = rss.iter().copied().max().unwrap_or(0);
        println!("| panes (journaled) | RSS median | RSS max sampled | anonymous (median) | file-backed (median) | PSS | daemon CPU per 10 s pass |");
        println!("|---:|---:|---:|---:|---:|---:|---:|");
        println!(
            "| {n} ({journaled}) | {} | {} | {} | {} | {} | {cpu_per_pass:.0} ms |",
            mb(med(rss)),
            mb(max),
            mb(med(anon)),
            mb(med(file)),
            mb(pss)
        );
    }

    fn times(&self, args: &[&str], n: usize) -> Duration {
        median((0..n).map(|_| self.run(args).0).collect())
    }

    /// `args` run `n` times: the median wall time, and the mean CPU time (user + system) each
    /// run took, from this process's children's times in `/proc/self/stat` (clock ticks; the
    /// mean over `n` runs is finer than one tick). The tmux server's own work is not in it.
    fn cpu_times(&self, args: &[&str], n: usize) -> (Duration, Duration) {
        // cutime and cstime: fields 16 and 17 of this process's stat.
        let children_ticks = || stat_pair("/proc/self/stat", 16);
        let t0 = children_ticks();
        let walls: Vec<Duration> = (0..n).map(|_| self.run(args).0).collect();
        let ticks = children_ticks() - t0;
        // The kernel's USER_HZ is 100 on every Linux this runs on.
        let cpu = Duration::from_secs_f64(ticks as f64 / 100.0 / n as f64);
        (median(walls), cpu)
    }

    /// The floor: what any tool must read — the pane map and the process table, once each.
    fn floor(&self, n: usize) -> Duration {
        median(
            (0..n)
                .map(|_| {
                    let t0 = Instant::now();
                    let _ = self
                        .sb
                        .tmux_command()
                        .args([
                            "list-panes",
                            "-a",
                            "-F",
                            "#{pane_id} #{pane_pid} #{pane_tty} #{pane_current_path} #{pane_title} #{session_name} #{window_index}",
                        ])
                        .output();
                    let _ = Command::new("ps")
                        .args(["-e", "-o", "pid,ppid,rss,args"])
                        .output();
                    t0.elapsed()
                })
                .collect(),
        )
    }

    /// Adds panes running the fake agent with one turn done, until there are `n`.
    fn grow_to(&self, have: &mut Vec<String>, n: usize) {
        let fake = self.fake.to_string_lossy().into_owned();
        while have.len() < n {
            let i = have.len();
            let dir = self.sb.project_dir(&format!("b{i}"));
            let pane = self.sb.new_agent_window(
                "bench",
                &format!("b{i}"),
                &dir,
                &[] as &[(&str, &str)],
                &[&fake, "bench prompt"],
            );
            have.push(pane);
        }
        for p in have.iter() {
            self.sb
                .wait_for(p, "PARKTEST-OK", Duration::from_secs(120))
                .expect("fake agent answered");
        }
        // Let the turns age past the CPU sample and the screens settle.
        std::thread::sleep(Duration::from_secs(2));
    }

    fn live_idle(&self) -> usize {
        let (_, out) = self.run(&["ls", "--json"]);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_default();
        v["rows"]
            .as_array()
            .map(|r| {
                r.iter()
                    .filter(|x| x["state"] == "live" && x["status"] == "idle")
                    .count()
            })
            .unwrap_or(0)
    }
}

/// The sum of fields `n` and `n + 1` (1-based, as proc(5) numbers them) of a `/proc/*/stat`
/// file, in clock ticks; 0 when unreadable. The name (field 2) may hold spaces and parentheses:
/// fields are counted from its closing `)`, where field 3 starts.
fn stat_pair(path: &str, n: usize) -> u64 {
    let stat = std::fs::read_to_string(path).unwrap_or_default();
    let after = stat.rsplit_once(')').map(|x| x.1).unwrap_or_default();
    let f: Vec<&str> = after.split_whitespace().collect();
    let at = |i: usize| {
        f.get(i - 3)
            .and_then(|x| x.parse::<u64>().ok())
            .unwrap_or(0)
    };
    at(n) + at(n + 1)
}

/// The number after `flag` in this process's arguments (`--profile 50`).
fn flag_value(flag: &str) -> Option<usize> {
    std::env::args()
        .skip_while(|a| a != flag)
        .nth(1)
        .and_then(|n| n.parse().ok())
}

fn main() {
    // One-off measures over `n` panes, then cleanup.
    type Measure = fn(&Bench, usize);
    let solo: [(&str, Measure); 2] = [
        ("--profile", |b, n| b.profile(n)),
        ("--daemon-memory", |b, n| b.daemon_memory(n)),
    ];
    for (flag, measure) in solo {
        if let Some(n) = flag_value(flag) {
            let mut b = Bench::new();
            let mut panes = vec![];
            b.grow_to(&mut panes, n);
            measure(&b, n);
            let left = b.sb.cleanup();
            eprintln!("cleanup: {} processes left", left.len());
            return;
        }
    }
    let ns: Vec<usize> = {
        let a: Vec<usize> = std::env::args()
            .skip(1)
            .filter_map(|a| a.parse().ok())
            .collect();
        if a.is_empty() {
            vec![10, 50, 200, 500]
        } else {
            a
        }
    };
    println!(
        "machine: {} cores, {}; park {}",
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(0),
        std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|m| m.lines().next().map(|l| l
                .split_whitespace()
                .nth(1)
                .unwrap_or("?")
                .to_string()))
            .map(|kb| format!("{} GiB RAM", kb.parse::<u64>().unwrap_or(0) / 1048576))
            .unwrap_or_default(),
        String::from_utf8_lossy(
            &Command::new(sibling("park"))
                .arg("--version")
                .output()
                .map(|o| o.stdout)
                .unwrap_or_default()
        )
        .trim()
    );
    println!();
    println!("| panes | `park status` | `park ls --json` | floor (list-panes + ps) | ls / floor | ls per pane | journal pass (`park snapshot`): wall / CPU |");
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    let mut b = Bench::new();
    let mut panes = vec![];
    for &n in &ns {
        b.grow_to(&mut panes, n);
        let idle = b.live_idle();
        let status = b.times(&["status"], 30);
        let _ = b.run(&["ls", "--json"]); // warm the memory cache, as a status line or picker would
        let ls = b.times(&["ls", "--json"], if n > 200 { 7 } else { 15 });
        let floor = b.floor(15);
        let (snap, snap_cpu) = b.cpu_times(&["snapshot", "--json"], if n > 200 { 10 } else { 20 });
        println!(
            "| {n} ({idle} idle listed) | {} | {} | {} | {:.1}× | {:.2} ms | {} / {} |",
            ms(status),
            ms(ls),
            ms(floor),
            ls.as_secs_f64() / floor.as_secs_f64().max(1e-9),
            ls.as_secs_f64() * 1000.0 / n as f64,
            ms(snap),
            ms(snap_cpu)
        );
    }
    let left = b.sb.cleanup();
    drop(b);
    eprintln!("cleanup: {} processes left", left.len());

    // Bulk park and unpark overhead on a fresh server with 30 panes.
    let b = Bench::new();
    let mut panes = vec![];
    b.grow_to(&mut panes, 30);
    let (t, out) = b.run(&["park", "--idle", "0s", "--yes", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_default();
    let parked = v["results"]
        .as_array()
        .map(|r| r.iter().filter(|x| x["outcome"] == "parked").count())
        .unwrap_or(0);
    println!();
    println!(
        "`park park --idle 0s --yes` over 30 fake-agent panes: {} ({parked} parked)",
        ms(t)
    );
    // The agent's own start: a fresh pane running the same agent until its first screen.
    let fake = b.fake.to_string_lossy().into_owned();
    let starts: Vec<Duration> = (0..5)
        .map(|i| {
            let dir = b.sb.project_dir(&format!("s{i}"));
            let t0 = Instant::now();
            let p = b.sb.new_agent_window(
                "start",
                &format!("s{i}"),
                &dir,
                &[] as &[(&str, &str)],
                &[&fake],
            );
            b.sb.wait_for(&p, "for shortcuts", Duration::from_secs(20))
                .expect("start");
            t0.elapsed()
        })
        .collect();
    let start = median(starts);
    let unparks: Vec<Duration> = panes
        .iter()
        .take(5)
        .map(|p| {
            let (t, _) = b.run(&["unpark", p]);
            t
        })
        .collect();
    let unpark = median(unparks);
    println!(
        "`park unpark` of one pane (until the verifier confirmed the session): median {}; the agent's own start: {}; overhead {}",
        ms(unpark),
        ms(start),
        ms(unpark.saturating_sub(start))
    );
    // The other 25 in one wave: resumes are sent ≥ 1 s apart, so ~25 s is the floor by design.
    let (t, out) = b.run(&["unpark", "--all", "--yes", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_default();
    let unparked = v["results"]
        .as_array()
        .map(|r| r.iter().filter(|x| x["outcome"] == "unparked").count())
        .unwrap_or(0);
    println!(
        "`park unpark --all --yes` of the other {unparked} parked panes: {} ({:.2} s per session; starts are spaced 1 s apart)",
        ms(t),
        t.as_secs_f64() / unparked.max(1) as f64
    );
    let mut b = b;
    let left = b.sb.cleanup();
    eprintln!("cleanup: {} processes left", left.len());
}
