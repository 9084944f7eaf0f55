//! `cargo run --release -p park --example transcript-bench -- <claude|codex> [MB] [last-record-MB] [read|render|archive]`:
//! times what park does with one large transcript, on this machine, and reports the process's
//! peak memory (getrusage maxrss). Writes a transcript of MB megabytes (default 60; streamed, so
//! the generator costs no memory) in a temp dir, optionally ending in a final reply of
//! last-record-MB, then times: the scan's read (`read_*_file`, the tail window), rendering
//! (`render::*_markdown` over the whole file) and `archive::archive` (copy, parse, render, verify,
//! meta). maxrss only grows, so each step's peak includes the steps before it: name one step to
//! run only that one and get its own peak (`scripts/bench-transcripts` does). Timings are printed,
//! never asserted; BENCHMARKS.md holds a committed run.

#[path = "../tests/support/shapes.rs"]
mod shapes;

use park::model::entry::{self, Entry, EntryState, MuxPlace};
use park_protocol::Agent;
use std::io::Write;
use std::time::Instant;

fn maxrss_mib() -> f64 {
    // SAFETY: getrusage fills the struct it is given; RUSAGE_SELF is always valid.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    ru.ru_maxrss as f64 / 1024.0 // KiB on Linux
}

fn entry(agent: Agent, sid: &str, transcript: &std::path::Path) -> Entry {
    let place = MuxPlace {
        kind: "tmux".into(),
        server: "/tmp/tmux-0/default".into(),
        pane: "%1".into(),
        session: "bench".into(),
        window_index: 0,
        window_name: "w".into(),
        pane_index: 0,
        title: "bench".into(),
        pane_title: "bench".into(),
        pane_proc: (0, 0),
    };
    Entry {
        schema: entry::ENTRY_SCHEMA,
        id: entry::entry_id(agent, sid),
        state: EntryState::Parked,
        agent,
        session_id: sid.into(),
        session_source: "status-file".into(),
        cwd: shapes::CWD.into(),
        program: agent.as_str().into(),
        flags: vec![],
        dropped_flags: vec![],
        transcript: Some(transcript.to_string_lossy().into_owned()),
        config_dir: None,
        config_var: None,
        place,
        pane_owned: false,
        parked_at: "2026-12-02T00:00:00Z".into(),
        last_active: None,
        bytes: 0,
        uss_bytes: 0,
        pss_bytes: 0,
        anon_bytes: 0,
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

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let codex = match args.first().map(String::as_str) {
        Some("claude") => false,
        Some("codex") => true,
        _ => {
            eprintln!("usage: transcript-bench <claude|codex> [MB] [last-record-MB]");
            std::process::exit(2);
        }
    };
    let mb: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(60);
    let last_mb: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(0);
    let only = args.get(3).map(String::as_str);
    let run = |step: &str| only.is_none_or(|o| o == step);
    let (agent, sid) = if codex {
        (Agent::Codex, shapes::CODEX_SID)
    } else {
        (Agent::Claude, shapes::CLAUDE_SID)
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let src = dir.path().join("t.jsonl");
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&src).expect("create"));
        let reply = if last_mb > 0 {
            format!("LAST REPLY {}", "lorem ipsum ".repeat((last_mb << 20) / 12))
        } else {
            "LAST REPLY".to_string()
        };
        shapes::write_big(&mut f, codex, mb << 20, "LAST PROMPT", &reply).expect("write");
        f.flush().expect("flush");
    }
    let len = std::fs::metadata(&src).expect("stat").len();
    let base = maxrss_mib();

    let ms = |d: std::time::Duration| d.as_secs_f64() * 1000.0;
    println!(
        "{} transcript {:.1} MiB (last record {last_mb} MiB); peak RSS after generating it {base:.1} MiB",
        agent.as_str(),
        len as f64 / 1048576.0,
    );
    if run("read") {
        let t = Instant::now();
        let info = if codex {
            park::agents::codex::transcript::read_file(&src)
        } else {
            park::agents::claude::transcript::read_file(&src)
        }
        .expect("read");
        let read = t.elapsed();
        assert!(info.unsure.is_none() && !info.turn_open, "{info:?}");
        println!(
            "  scan read (tail window)       {:>8.1} ms   peak RSS {:>6.1} MiB",
            ms(read),
            maxrss_mib()
        );
    }
    if run("render") {
        let t = Instant::now();
        let bytes = std::fs::read(&src).expect("read");
        let conv = park::store::archive::render(agent, &bytes);
        let render = t.elapsed();
        let md_len = conv.markdown.len();
        drop((bytes, conv));
        println!("  render whole file             {:>8.1} ms   peak RSS {:>6.1} MiB   (markdown {:.2} MiB)", ms(render), maxrss_mib(), md_len as f64 / 1048576.0);
    }
    if run("archive") {
        let home = dir.path().join("park");
        std::fs::create_dir_all(&home).expect("home");
        let t = Instant::now();
        let a =
            park::store::archive::archive(&home, &entry(agent, sid, &src), true).expect("archive");
        let archive = t.elapsed();
        assert!(a.tomb.warnings.is_empty());
        println!(
            "  archive (copy+render+verify)  {:>8.1} ms   peak RSS {:>6.1} MiB",
            ms(archive),
            maxrss_mib()
        );
    }
}
