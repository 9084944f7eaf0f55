//! [`MockServer`]: runs the `mock-llm` binary (tests/src/bin/mock-llm.rs) on a free local port.
//!
//! Contract: `start*` returns only once the server answers HTTP (or panics with its stderr);
//! files go to the given log dir (`mock-llm.jsonl` request log, `mock-llm.stderr`,
//! `mock-bodies/NNNN.json`); Drop kills and reaps the server. The server is also started with
//! `--exit-with-parent`, so it exits by itself if the test process dies without dropping it.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running `mock-llm`.
pub struct MockServer {
    child: Child,
    port: u16,
    log: PathBuf,
    dir: PathBuf,
}

impl MockServer {
    /// Starts `mock-llm` found next to the running test binary (`target/<profile>/mock-llm`, the
    /// test itself being in `target/<profile>/deps/`), or at `$PARK_MOCK_LLM`. Prefer the
    /// [`mock_server!`](crate::mock_server) macro in this package's integration tests: it uses
    /// the exact path Cargo built.
    pub fn start(log_dir: &Path) -> MockServer {
        let bin = std::env::var_os("PARK_MOCK_LLM")
            .map(PathBuf::from)
            .or_else(|| {
                let exe = std::env::current_exe().ok()?;
                let deps = exe.parent()?;
                [deps.join("mock-llm"), deps.parent()?.join("mock-llm")]
                    .into_iter()
                    .find(|p| p.exists())
            })
            .expect("mock-llm binary not found: build it (`cargo build -p park-e2e`) or set PARK_MOCK_LLM");
        Self::start_with(&bin, log_dir)
    }

    /// Starts the `mock-llm` binary at `bin`, logging under `log_dir` (created if needed).
    pub fn start_with(bin: &Path, log_dir: &Path) -> MockServer {
        std::fs::create_dir_all(log_dir).expect("create mock log dir");
        let port_file = log_dir.join("mock-llm.port");
        let _ = std::fs::remove_file(&port_file);
        let log = log_dir.join("mock-llm.jsonl");
        let stderr_path = log_dir.join("mock-llm.stderr");
        let stderr = std::fs::File::create(&stderr_path).expect("create mock stderr file");
        let mut child = Command::new(bin)
            .args(["--port", "0", "--exit-with-parent", "--port-file"])
            .arg(&port_file)
            .arg("--log")
            .arg(&log)
            .arg("--bodies")
            .arg(log_dir.join("mock-bodies"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()));

        let deadline = Instant::now() + Duration::from_secs(15);
        let port = loop {
            if let Ok(Some(status)) = child.try_wait() {
                let err = std::fs::read_to_string(&stderr_path).unwrap_or_default();
                panic!("mock-llm exited early ({status}): {err}");
            }
            let port = std::fs::read_to_string(&port_file)
                .ok()
                .and_then(|s| s.trim().parse::<u16>().ok());
            if let Some(port) = port.filter(|&p| answers(p)) {
                break port;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                let err = std::fs::read_to_string(&stderr_path).unwrap_or_default();
                panic!("mock-llm did not answer within 15 s: {err}");
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        MockServer {
            child,
            port,
            log,
            dir: log_dir.to_path_buf(),
        }
    }

    /// `http://127.0.0.1:<port>` (no trailing slash, no `/v1`): what `ANTHROPIC_BASE_URL` wants;
    /// Codex's provider `base_url` is this plus `/v1`.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The bound port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The server's pid.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The JSONL request log.
    pub fn log_path(&self) -> &Path {
        &self.log
    }

    /// The directory holding the log, stderr and saved bodies.
    pub fn log_dir(&self) -> &Path {
        &self.dir
    }

    /// Every request logged so far, one JSON object each (`method`, `path`, `api`, `kind`
    /// = text|title|tool|tool_result, `last_user`, `reply`, session headers, `ts_ms`).
    pub fn requests(&self) -> Vec<serde_json::Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }
}

/// Does an HTTP server answer `HEAD /` with 200 on `port`?
fn answers(port: u16) -> bool {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    if s.write_all(b"HEAD / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .is_err()
    {
        return false;
    }
    let mut buf = [0u8; 32];
    let n = s.read(&mut buf).unwrap_or(0);
    buf[..n].starts_with(b"HTTP/1.1 200")
}

impl Drop for MockServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
