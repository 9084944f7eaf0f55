//! `mock-llm`: a local stand-in for the Anthropic Messages API, the OpenAI Responses and Chat
//! Completions APIs and the Google Gemini (`v1beta`) API, so the REAL `claude`, `codex`, `qwen`,
//! `copilot`, `gemini`, `opencode`, `kilo` and `aider` CLIs can run offline in tests.
//!
//! Contract:
//! * One HTTP/1.1 server on 127.0.0.1 serves every API; the path picks the API:
//!   - Anthropic: `POST /v1/messages` (JSON, or SSE when `"stream": true`),
//!     `POST /v1/messages/count_tokens`, `HEAD /` (Claude's preconnect);
//!   - OpenAI: `POST /v1/responses` (SSE, or JSON without `stream`), `POST /v1/chat/completions`;
//!   - both: `GET /v1/models[/<id>]` answers one body carrying the fields of both list shapes;
//!   - Gemini (the CLI with `GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:<port>` and any
//!     `GEMINI_API_KEY`): `POST /v1beta/models/<model>:streamGenerateContent?alt=sse` (SSE, one
//!     `data:` chunk per word group, the last with `finishReason: "STOP"` and `usageMetadata`),
//!     `POST …:generateContent` (JSON), `POST …:countTokens` (`{"totalTokens": 42}`),
//!     `GET /v1beta/models[/<id>]`. Other methods get Google's 404 error shape.
//!
//!   Anything else is logged and answered 404.
//! * Args: `--port N` (0 picks a free port), `--port-file PATH` (the bound port is written there,
//!   atomically, once the socket listens), `--log PATH` (JSONL, one line per request: method, path,
//!   api, kind, the last user message text, the agent's session header), `--bodies DIR` (every POST
//!   body saved as `NNNN.json`), `--exit-with-parent` (exit when the spawning process dies, so a
//!   crashed test never leaves a server behind).
//! * Replies: `Hello from the mock <API> server (canned reply #N). PARKTEST-OK`, N counting model
//!   requests (one counter for every API). OpenCode's title request (a Chat Completions request
//!   whose system prompt starts "You are a title generator"; Kilo's lists the prompts as
//!   `1. <prompt>`) gets the bare title below, never held by `[slow N]`. Structured-output requests (Claude's session title,
//!   Codex's thread title) get JSON whose string fields are `"Mock " + the first words of the
//!   user prompt`, so sessions started with different prompts get different titles. Gemini: a
//!   JSON-mode request (`generationConfig.responseMimeType: application/json`, the CLI's router,
//!   next-speaker and similar checks) gets an object built from `responseJsonSchema` /
//!   `responseSchema` (enums: their first value, so the next speaker is `user`; strings: that
//!   title; numbers: `minimum` or 0); the session-summary request gets the bare title.
//! * Directives, read from the LAST user message text:
//!   - `[slow N]`: hold the stream open N seconds (Anthropic `ping` events / SSE comments each
//!     second; Gemini: a blank line, since `@google/genai`'s parser stalls on a `:` comment)
//!     before the text, so the agent shows a busy screen. Gemini's non-streamed side requests
//!     are never held;
//!   - `[tool CMD]`: answer with a tool call running CMD (Claude: `Bash` tool_use; Codex:
//!     `exec_command` function_call; Chat Completions: a `tool_calls` delta to the request's shell
//!     tool, Qwen's `run_shell_command`, Factory Droid's `Execute`, with whatever else its schema
//!     requires filled in: an enum its first value, a string a short sentence; Gemini: a `functionCall` part to the shell tool of the
//!     request's `tools[].functionDeclarations`, the CLI's `run_shell_command`). The follow-up
//!     request that carries the tool result (Gemini: a `functionResponse` part) gets
//!     `Tool finished. ` + the canned text, so the turn ends;
//!   - `[big N]`: the text reply is N KiB (numbered lines with non-ASCII and emoji) before the
//!     canned line: a huge final answer, the record shape a fixed tail window cannot hold;
//!   - `[bgtool CMD]`: like `[tool CMD]`, with `run_in_background: true` for Claude and
//!     `is_background: true` for a Chat Completions or Gemini shell tool that has it (Codex
//!     already keeps long commands running as a background terminal, so it is the same as
//!     `[tool CMD]`).
//!   - `[asktool CMD]`: like `[tool CMD]`; for Codex the call asks to run outside the sandbox
//!     (`sandbox_permissions: require_escalated` with a justification), which Codex's only
//!     asking policy (`-a on-request`) puts to the user, as other agents' default modes do for
//!     any shell command.
//!
//!   A Chat Completions request that offers no tools at all (aider, which reads shell commands
//!   from the reply's text) gets `[tool CMD]` / `[bgtool CMD]` / `[asktool CMD]` as a reply text
//!   holding CMD in a ```` ```bash ```` block before the canned line: aider asks
//!   `Run shell command? (Y)es/(N)o` before it runs it.
//!
//!   Gemini's last user content starts with the CLI's `<session_context>` block on the first
//!   prompt; it is left out of the directives and the log. Gemini log lines also carry `model`
//!   and `gemini_method` (`generateContent`, `streamGenerateContent`, `countTokens`).
//! * Every connection gets its own thread, so a slow stream never blocks another agent.

use regex::Regex;
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Shared server state: counters and the log sinks.
struct State {
    /// Model requests answered so far (the `#N` in the canned text).
    replies: AtomicU64,
    /// All POSTs so far (names the saved bodies).
    posts: AtomicU64,
    log: Option<Mutex<File>>,
    bodies: Option<PathBuf>,
}

impl State {
    fn log(&self, mut rec: Map<String, Value>) {
        let Some(log) = &self.log else { return };
        let ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0);
        rec.insert("ts_ms".into(), json!(ms));
        let mut line = Value::Object(rec).to_string();
        line.push('\n');
        // One write per line under the lock: concurrent requests never interleave.
        if let Ok(mut f) = log.lock() {
            let _ = f.write_all(line.as_bytes());
            let _ = f.flush();
        }
    }
}

struct Args {
    port: u16,
    port_file: Option<PathBuf>,
    log: Option<PathBuf>,
    bodies: Option<PathBuf>,
    exit_with_parent: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        port: 0,
        port_file: None,
        log: None,
        bodies: None,
        exit_with_parent: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut val = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value"));
        match a.as_str() {
            "--port" => args.port = val("--port")?.parse().map_err(|e| format!("--port: {e}"))?,
            "--port-file" => args.port_file = Some(val("--port-file")?.into()),
            "--log" => args.log = Some(val("--log")?.into()),
            "--bodies" => args.bodies = Some(val("--bodies")?.into()),
            "--exit-with-parent" => args.exit_with_parent = true,
            "-h" | "--help" => {
                println!(
                    "usage: mock-llm [--port N] [--port-file PATH] [--log PATH] [--bodies DIR] [--exit-with-parent]"
                );
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(args)
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("mock-llm: {e}");
            std::process::exit(2);
        }
    };
    let log = args.log.as_ref().map(|p| {
        if let Some(dir) = p.parent() {
            let _ = fs::create_dir_all(dir);
        }
        let f = OpenOptions::new()
            .create(true)
            .append(true)
            .open(p)
            .unwrap_or_else(|e| panic!("mock-llm: cannot open log {}: {e}", p.display()));
        Mutex::new(f)
    });
    if let Some(dir) = &args.bodies {
        fs::create_dir_all(dir).expect("mock-llm: cannot create --bodies dir");
    }
    let state = Arc::new(State {
        replies: AtomicU64::new(0),
        posts: AtomicU64::new(0),
        log,
        bodies: args.bodies.clone(),
    });

    let listener = TcpListener::bind(("127.0.0.1", args.port)).unwrap_or_else(|e| {
        eprintln!("mock-llm: bind 127.0.0.1:{}: {e}", args.port);
        std::process::exit(1);
    });
    let port = listener.local_addr().expect("local_addr").port();
    if let Some(pf) = &args.port_file {
        // Write then rename, so a reader polling the file never sees a partial number.
        let tmp = pf.with_extension("tmp");
        fs::write(&tmp, format!("{port}\n")).expect("mock-llm: write port file");
        fs::rename(&tmp, pf).expect("mock-llm: rename port file");
    }
    eprintln!("mock-llm listening on http://127.0.0.1:{port}");

    if args.exit_with_parent {
        // Reparenting (to init or a subreaper) means whoever started us is gone.
        let parent = std::os::unix::process::parent_id();
        thread::spawn(move || loop {
            thread::sleep(Duration::from_millis(500));
            if std::os::unix::process::parent_id() != parent {
                std::process::exit(0);
            }
        });
    }

    for conn in listener.incoming() {
        let Ok(stream) = conn else { continue };
        let state = Arc::clone(&state);
        thread::spawn(move || {
            let _ = serve_connection(stream, &state);
        });
    }
}

// ---------------------------------------------------------------------------------------------
// HTTP/1.1 plumbing (just what the two CLIs use: keep-alive, Content-Length or chunked bodies).

struct Request {
    method: String,
    path: String,
    headers: HashMap<String, String>,
    body: Vec<u8>,
}

impl Request {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }
}

fn read_line(r: &mut impl BufRead) -> io::Result<Option<String>> {
    let mut buf = Vec::new();
    if r.read_until(b'\n', &mut buf)? == 0 {
        return Ok(None);
    }
    while matches!(buf.last(), Some(b'\n' | b'\r')) {
        buf.pop();
    }
    Ok(Some(String::from_utf8_lossy(&buf).into_owned()))
}

fn read_request(r: &mut BufReader<TcpStream>) -> io::Result<Option<Request>> {
    // Skip stray blank lines between pipelined requests.
    let line = loop {
        match read_line(r)? {
            None => return Ok(None),
            Some(l) if l.is_empty() => continue,
            Some(l) => break l,
        }
    };
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let path = parts.next().unwrap_or("/").to_string();
    let mut headers = HashMap::new();
    loop {
        let Some(h) = read_line(r)? else {
            return Ok(None);
        };
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    if headers
        .get("expect")
        .is_some_and(|v| v.eq_ignore_ascii_case("100-continue"))
    {
        r.get_mut().write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
    }
    let mut body = Vec::new();
    let chunked = headers
        .get("transfer-encoding")
        .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
    if chunked {
        loop {
            let size_line = read_line(r)?.unwrap_or_default();
            let size_hex = size_line.split(';').next().unwrap_or("").trim();
            let size = usize::from_str_radix(size_hex, 16)
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "bad chunk size"))?;
            if size == 0 {
                // Trailers, up to the blank line.
                while let Some(t) = read_line(r)? {
                    if t.is_empty() {
                        break;
                    }
                }
                break;
            }
            let start = body.len();
            body.resize(start + size, 0);
            r.read_exact(&mut body[start..])?;
            read_line(r)?; // CRLF after the chunk
        }
    } else if let Some(n) = headers
        .get("content-length")
        .and_then(|v| v.parse::<usize>().ok())
    {
        body.resize(n, 0);
        r.read_exact(&mut body)?;
    }
    Ok(Some(Request {
        method,
        path,
        headers,
        body,
    }))
}

/// The response side of one request.
struct Out<'a> {
    stream: &'a mut TcpStream,
    head_only: bool,
}

impl Out<'_> {
    fn json(&mut self, code: u16, body: &Value) -> io::Result<()> {
        let data = body.to_string();
        let head = format!(
            "HTTP/1.1 {code} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nrequest-id: req_mock_{}\r\n\r\n",
            reason(code),
            data.len(),
            rand_hex(12)
        );
        self.stream.write_all(head.as_bytes())?;
        if !self.head_only {
            self.stream.write_all(data.as_bytes())?;
        }
        self.stream.flush()
    }

    fn empty(&mut self, code: u16) -> io::Result<()> {
        let head = format!(
            "HTTP/1.1 {code} {}\r\nContent-Length: 0\r\n\r\n",
            reason(code)
        );
        self.stream.write_all(head.as_bytes())?;
        self.stream.flush()
    }

    /// Starts an SSE response; the body is sent with chunked encoding, one chunk per event.
    fn sse_start(&mut self) -> io::Result<()> {
        let head = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\nrequest-id: req_mock_{}\r\n\r\n",
            rand_hex(12)
        );
        self.stream.write_all(head.as_bytes())?;
        self.stream.flush()
    }

    fn chunk(&mut self, payload: &str) -> io::Result<()> {
        let mut buf = format!("{:x}\r\n", payload.len()).into_bytes();
        buf.extend_from_slice(payload.as_bytes());
        buf.extend_from_slice(b"\r\n");
        self.stream.write_all(&buf)?;
        self.stream.flush()
    }

    /// A named SSE event (`event:` + `data:`), the shape both SDKs parse.
    fn event(&mut self, name: &str, data: &Value) -> io::Result<()> {
        self.chunk(&format!("event: {name}\ndata: {data}\n\n"))
    }

    fn sse_end(&mut self) -> io::Result<()> {
        self.stream.write_all(b"0\r\n\r\n")?;
        self.stream.flush()
    }
}

fn reason(code: u16) -> &'static str {
    match code {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        _ => "Status",
    }
}

fn serve_connection(stream: TcpStream, state: &State) -> io::Result<()> {
    let _ = stream.set_nodelay(true);
    // An idle keep-alive connection is dropped after a while, so threads do not pile up.
    let _ = stream.set_read_timeout(Some(Duration::from_secs(600)));
    let mut writer = stream.try_clone()?;
    let mut reader = BufReader::new(stream);
    while let Some(req) = read_request(&mut reader)? {
        let close = req
            .header("connection")
            .is_some_and(|v| v.eq_ignore_ascii_case("close"));
        let mut out = Out {
            stream: &mut writer,
            head_only: req.method == "HEAD",
        };
        handle(&req, &mut out, state)?;
        if close {
            break;
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Routing and the two APIs.

fn handle(req: &Request, out: &mut Out, state: &State) -> io::Result<()> {
    let path = req.path.split('?').next().unwrap_or("").to_string();
    let mut rec = Map::new();
    rec.insert("method".into(), json!(req.method));
    rec.insert("path".into(), json!(req.path));
    match req.method.as_str() {
        "HEAD" => {
            state.log(rec);
            out.empty(200)
        }
        "GET" => {
            if gemini_models_path(&path).is_some() {
                rec.insert("api".into(), json!("gemini"));
            }
            state.log(rec);
            if path.trim_end_matches('/') == "/v1/models" {
                out.json(200, &models_list())
            } else if let Some(id) = path.strip_prefix("/v1/models/") {
                out.json(200, &model_entry(id))
            } else if let Some(rest) = gemini_models_path(&path) {
                let rest = rest.trim_matches('/');
                if rest.is_empty() {
                    out.json(200, &gemini_models_list())
                } else {
                    out.json(200, &gemini_model_entry(rest))
                }
            } else {
                out.json(404, &not_found(&path))
            }
        }
        "POST" => {
            let seq = state.posts.fetch_add(1, Ordering::SeqCst) + 1;
            if let Some(dir) = &state.bodies {
                let _ = fs::write(dir.join(format!("{seq:04}.json")), &req.body);
            }
            let body: Value = serde_json::from_slice(&req.body).unwrap_or_else(|_| json!({}));
            rec.insert("seq".into(), json!(seq));
            if let Some(enc) = req.header("content-encoding") {
                rec.insert("content_encoding".into(), json!(enc));
            }
            // The agents' own session ids, so a test can tie a request to a session.
            for h in ["x-claude-code-session-id", "session-id", "thread-id"] {
                if let Some(v) = req.header(h) {
                    rec.insert(h.into(), json!(v));
                }
            }
            match path.as_str() {
                "/v1/messages" => anthropic_messages(&body, rec, out, state),
                "/v1/messages/count_tokens" => {
                    rec.insert("api".into(), json!("anthropic"));
                    state.log(rec);
                    out.json(200, &json!({"input_tokens": 42}))
                }
                "/v1/responses" => openai_responses(&body, rec, out, state),
                "/v1/chat/completions" => openai_chat(&body, rec, out, state),
                p if gemini_route(p).is_some() => {
                    let (model, method) = gemini_route(p).unwrap_or_default();
                    gemini(&body, model, method, rec, out, state)
                }
                _ => {
                    state.log(rec);
                    out.json(404, &not_found(&path))
                }
            }
        }
        _ => {
            state.log(rec);
            out.json(404, &not_found(&path))
        }
    }
}

fn not_found(path: &str) -> Value {
    // Carries both error shapes: Anthropic's `type`+`error.type`, OpenAI's `error.message`.
    json!({"type": "error", "error": {"type": "not_found_error", "message": format!("mock: no {path}")}})
}

const MODEL_IDS: [&str; 4] = [
    "mock-model",
    "claude-sonnet-4-5",
    "claude-opus-4-1",
    "claude-haiku-4-5",
];

/// One model entry with the fields of both APIs (Anthropic: `type`, `display_name`,
/// `created_at`; OpenAI: `object`, `created`, `owned_by`). Extra fields are ignored by both.
fn model_entry(id: &str) -> Value {
    json!({
        "type": "model", "id": id, "display_name": id, "created_at": "2025-01-01T00:00:00Z",
        "object": "model", "created": 0, "owned_by": "mock",
    })
}

fn models_list() -> Value {
    let data: Vec<Value> = MODEL_IDS.iter().map(|id| model_entry(id)).collect();
    json!({
        "object": "list", "data": data, "has_more": false,
        "first_id": MODEL_IDS[0], "last_id": MODEL_IDS[MODEL_IDS.len() - 1],
        // Codex's own model-catalog shape; empty means "use fallback metadata".
        "models": [],
    })
}

/// What the last user message asks for.
struct Directives {
    slow_secs: u64,
    /// `[big N]`: the reply is N KiB of text (a huge final answer), then the canned line.
    big_kib: usize,
    tool: Option<String>,
    background: bool,
    /// `[asktool CMD]`: Codex asks to run CMD outside its sandbox.
    escalate: bool,
}

fn directives(text: &str) -> Directives {
    static SLOW: OnceLock<Regex> = OnceLock::new();
    static TOOL: OnceLock<Regex> = OnceLock::new();
    let slow = SLOW.get_or_init(|| Regex::new(r"\[slow (\d+)\]").unwrap());
    let tool = TOOL.get_or_init(|| Regex::new(r"\[(bg|ask)?tool ([^\]]+)\]").unwrap());
    let slow_secs = slow
        .captures(text)
        .and_then(|c| c[1].parse().ok())
        .unwrap_or(0);
    static BIG: OnceLock<Regex> = OnceLock::new();
    let big = BIG.get_or_init(|| Regex::new(r"\[big (\d{1,6})\]").unwrap());
    let big_kib = big
        .captures(text)
        .and_then(|c| c[1].parse().ok())
        .unwrap_or(0);
    let (tool, background, escalate) = match tool.captures(text) {
        Some(c) => {
            let kind = c.get(1).map(|k| k.as_str());
            (
                Some(c[2].to_string()),
                kind == Some("bg"),
                kind == Some("ask"),
            )
        }
        None => (None, false, false),
    };
    Directives {
        slow_secs,
        big_kib,
        tool,
        background,
        escalate,
    }
}

/// About `kib` KiB of numbered lines (with non-ASCII and astral characters, which JSON writers
/// escape or encode differently), ending with `tail`.
fn big_text(kib: usize, tail: &str) -> String {
    let mut s = String::with_capacity(kib * 1024 + tail.len() + 64);
    let mut i = 0;
    while s.len() < kib * 1024 {
        s.push_str(&format!(
            "line {i}: the quick brown fox — naïve café 🦊 jumps over the lazy dog\n"
        ));
        i += 1;
    }
    s.push_str(tail);
    s
}

/// Text of a message `content`: a string, or the `text` of every text-ish block.
fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| {
                let t = b.get("type").and_then(Value::as_str).unwrap_or("");
                if matches!(t, "text" | "input_text" | "output_text") {
                    b.get("text").and_then(Value::as_str)
                } else {
                    None
                }
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Text of the last `role: user` item in `items` (Anthropic `messages`, OpenAI `input`).
fn last_user_text(items: Option<&Value>) -> String {
    match items {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => items
            .iter()
            .rev()
            .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))
            .map(|m| content_text(m.get("content").unwrap_or(&Value::Null)))
            .unwrap_or_default(),
        _ => String::new(),
    }
}

/// `text` without Claude's `<system-reminder>` blocks (context it prepends to prompts), so the
/// log shows what the user typed.
fn strip_reminders(text: &str) -> String {
    static BLOCK: OnceLock<Regex> = OnceLock::new();
    let block =
        BLOCK.get_or_init(|| Regex::new(r"(?s)<system-reminder>.*?</system-reminder>").unwrap());
    block.replace_all(text, "").trim().to_string()
}

/// `"Mock " + the first `words` words of the user's prompt`, with markup and directives removed.
fn title_from(prompt: &str, words: usize, max_chars: usize) -> String {
    static TAG: OnceLock<Regex> = OnceLock::new();
    static DIRECTIVE: OnceLock<Regex> = OnceLock::new();
    static AFTER: OnceLock<Regex> = OnceLock::new();
    static SESSION: OnceLock<Regex> = OnceLock::new();
    let tag = TAG.get_or_init(|| Regex::new(r"<[^>]+>").unwrap());
    let directive =
        DIRECTIVE.get_or_init(|| Regex::new(r"\[(slow|tool|bgtool|asktool|big) [^\]]*\]").unwrap());
    // Codex wraps the prompt in instructions ending with "User prompt: ...".
    let after = AFTER.get_or_init(|| Regex::new(r"(?s)User prompt:\s*(.*)").unwrap());
    // Claude puts the conversation in `<session>...</session>`, followed by instructions.
    let session = SESSION.get_or_init(|| Regex::new(r"(?s)<session>(.*?)</session>").unwrap());
    let text = session
        .captures(prompt)
        .or_else(|| after.captures(prompt))
        .map(|c| c[1].to_string())
        .unwrap_or_else(|| prompt.to_string());
    let text = strip_reminders(&text);
    let text = tag.replace_all(&text, " ");
    let text = directive.replace_all(&text, " ");
    let head: Vec<&str> = text.split_whitespace().take(words).collect();
    let title = format!("Mock {}", head.join(" "));
    title
        .trim()
        .chars()
        .take(max_chars)
        .collect::<String>()
        .trim()
        .to_string()
}

/// For a JSON-schema structured-output request: an object filling each property.
fn structured_answer(props: &Map<String, Value>, title: &str) -> String {
    let obj: Map<String, Value> = props
        .iter()
        .map(|(k, v)| {
            let val = match v.get("type").and_then(Value::as_str) {
                Some("string") => json!(title),
                Some("boolean") => json!(false),
                Some("number" | "integer") => json!(0),
                Some("array") => json!([]),
                _ => Value::Null,
            };
            (k.clone(), val)
        })
        .collect();
    Value::Object(obj).to_string()
}

fn schema_props(format: Option<&Value>) -> Option<&Map<String, Value>> {
    let f = format?;
    if f.get("type").and_then(Value::as_str) != Some("json_schema") {
        return None;
    }
    f.get("schema")?
        .get("properties")?
        .as_object()
        .filter(|p| !p.is_empty())
}

/// Splits `text` into word groups, to stream it as several deltas like a real model.
fn word_groups(text: &str, per: usize) -> Vec<String> {
    let words: Vec<&str> = text.split_inclusive(' ').collect();
    words.chunks(per).map(|c| c.concat()).collect()
}

fn rand_hex(n: usize) -> String {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    // Uniqueness is all that matters for these ids; no RNG dependency needed.
    let mut x = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
        ^ (SEQ
            .fetch_add(1, Ordering::Relaxed)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15))
        ^ ((std::process::id() as u64) << 32);
    let mut s = String::with_capacity(n);
    while s.len() < n {
        // splitmix64 step
        x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        s.push_str(&format!("{z:016x}"));
    }
    s.truncate(n);
    s
}

fn sleep_ms(ms: u64) {
    thread::sleep(Duration::from_millis(ms));
}

// ---- Anthropic Messages API -----------------------------------------------------------------

fn anthropic_messages(
    body: &Value,
    mut rec: Map<String, Value>,
    out: &mut Out,
    state: &State,
) -> io::Result<()> {
    let n = state.replies.fetch_add(1, Ordering::SeqCst) + 1;
    let user = strip_reminders(&last_user_text(body.get("messages")));
    let d = directives(&user);
    let model = body
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("claude-mock")
        .to_string();
    let last = body
        .get("messages")
        .and_then(Value::as_array)
        .and_then(|m| m.last());
    let has_tool_result = last
        .and_then(|m| m.get("content"))
        .and_then(Value::as_array)
        .is_some_and(|blocks| {
            blocks
                .iter()
                .any(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
        });
    let offers_tools = body
        .get("tools")
        .and_then(Value::as_array)
        .is_some_and(|t| !t.is_empty());
    let props = schema_props(body.get("output_config").and_then(|o| o.get("format")));

    let mut text = format!("Hello from the mock Anthropic server (canned reply #{n}). PARKTEST-OK");
    let mut tool = None;
    let kind = if let Some(props) = props {
        text = structured_answer(props, &title_from(&user, 5, 60));
        "title"
    } else if has_tool_result {
        text = format!("Tool finished. {text}");
        "tool_result"
    } else if let (Some(cmd), true) = (&d.tool, offers_tools) {
        tool = Some(cmd.clone());
        "tool"
    } else {
        if d.big_kib > 0 {
            text = big_text(d.big_kib, &text);
        }
        "text"
    };
    rec.insert("api".into(), json!("anthropic"));
    rec.insert("kind".into(), json!(kind));
    rec.insert("reply".into(), json!(n));
    rec.insert("stream".into(), json!(body.get("stream")));
    rec.insert("last_user".into(), json!(truncate(&user, 500)));
    state.log(rec);

    let msg_id = format!("msg_mock_{}", rand_hex(20));
    let usage = json!({"input_tokens": 10, "output_tokens": 12,
                       "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0});
    let tool_input = tool.as_ref().map(|cmd| {
        let mut input = json!({"command": cmd, "description": "mock tool call"});
        if d.background {
            input["run_in_background"] = json!(true);
        }
        input
    });
    let tool_id = format!("toolu_mock_{}", rand_hex(16));

    if body.get("stream").and_then(Value::as_bool) != Some(true) {
        let (content, stop) = match &tool_input {
            Some(input) => (
                json!([{"type": "tool_use", "id": tool_id, "name": "Bash", "input": input}]),
                "tool_use",
            ),
            None => (json!([{"type": "text", "text": text}]), "end_turn"),
        };
        if d.slow_secs > 0 {
            thread::sleep(Duration::from_secs(d.slow_secs));
        }
        return out.json(
            200,
            &json!({"id": msg_id, "type": "message", "role": "assistant", "model": model,
                    "content": content, "stop_reason": stop, "stop_sequence": null, "usage": usage}),
        );
    }

    out.sse_start()?;
    let mut start_usage = usage.clone();
    start_usage["output_tokens"] = json!(1);
    out.event(
        "message_start",
        &json!({"type": "message_start", "message": {
            "id": msg_id, "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": null, "stop_sequence": null, "usage": start_usage}}),
    )?;
    for _ in 0..d.slow_secs {
        sleep_ms(1000);
        out.event("ping", &json!({"type": "ping"}))?;
    }
    if let Some(input) = tool_input {
        out.event(
            "content_block_start",
            &json!({"type": "content_block_start", "index": 0, "content_block":
                    {"type": "tool_use", "id": tool_id, "name": "Bash", "input": {}}}),
        )?;
        out.event(
            "content_block_delta",
            &json!({"type": "content_block_delta", "index": 0, "delta":
                    {"type": "input_json_delta", "partial_json": input.to_string()}}),
        )?;
        out.event(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": 0}),
        )?;
        out.event(
            "message_delta",
            &json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null},
                    "usage": {"output_tokens": 20}}),
        )?;
    } else {
        out.event(
            "content_block_start",
            &json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        )?;
        for g in word_groups(&text, 3) {
            out.event(
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": g}}),
            )?;
            sleep_ms(20);
        }
        out.event(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": 0}),
        )?;
        out.event(
            "message_delta",
            &json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null},
                    "usage": {"output_tokens": 12}}),
        )?;
    }
    out.event("message_stop", &json!({"type": "message_stop"}))?;
    out.sse_end()
}

fn truncate(s: &str, max: usize) -> String {
    s.chars().take(max).collect()
}

// ---- OpenAI Responses API -------------------------------------------------------------------

fn openai_usage() -> Value {
    json!({"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
           "output_tokens": 12, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 22})
}

fn unix_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

fn openai_responses(
    body: &Value,
    mut rec: Map<String, Value>,
    out: &mut Out,
    state: &State,
) -> io::Result<()> {
    let n = state.replies.fetch_add(1, Ordering::SeqCst) + 1;
    let user = last_user_text(body.get("input"));
    let d = directives(&user);
    let model = body
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("mock-model")
        .to_string();
    let last_is_tool_output = body
        .get("input")
        .and_then(Value::as_array)
        .and_then(|i| i.last())
        .and_then(|i| i.get("type"))
        .and_then(Value::as_str)
        == Some("function_call_output");
    let offers_tools = body
        .get("tools")
        .and_then(Value::as_array)
        .is_some_and(|t| !t.is_empty());
    let props = schema_props(body.get("text").and_then(|t| t.get("format")));

    let mut text = format!("Hello from the mock OpenAI server (canned reply #{n}). PARKTEST-OK");
    let mut tool = None;
    let kind = if let Some(props) = props {
        text = structured_answer(props, &title_from(&user, 4, 30));
        "title"
    } else if last_is_tool_output {
        text = format!("Tool finished. {text}");
        "tool_result"
    } else if let (Some(cmd), true) = (&d.tool, offers_tools) {
        tool = Some(cmd.clone());
        "tool"
    } else {
        if d.big_kib > 0 {
            text = big_text(d.big_kib, &text);
        }
        "text"
    };
    rec.insert("api".into(), json!("openai"));
    rec.insert("kind".into(), json!(kind));
    rec.insert("reply".into(), json!(n));
    rec.insert("stream".into(), json!(body.get("stream")));
    rec.insert("last_user".into(), json!(truncate(&user, 500)));
    state.log(rec);

    let rid = format!("resp_mock_{}", rand_hex(16));
    let item = match &tool {
        Some(cmd) => json!({
            "type": "function_call", "id": format!("fc_mock_{}", rand_hex(12)), "status": "completed",
            "call_id": format!("call_mock_{}", rand_hex(12)), "name": "exec_command",
            "arguments": if d.escalate {
                json!({"cmd": cmd, "sandbox_permissions": "require_escalated",
                       "justification": "the test asks for it"})
            } else {
                json!({"cmd": cmd})
            }.to_string()}),
        None => json!({
            "type": "message", "id": format!("msg_mock_{}", rand_hex(16)), "role": "assistant",
            "status": "completed", "content": [{"type": "output_text", "text": text, "annotations": []}]}),
    };
    let resp = json!({"id": rid, "object": "response", "created_at": unix_secs(), "model": model,
                      "status": "completed", "output": [item], "usage": openai_usage()});

    if body.get("stream").and_then(Value::as_bool) != Some(true) {
        if d.slow_secs > 0 {
            thread::sleep(Duration::from_secs(d.slow_secs));
        }
        return out.json(200, &resp);
    }

    out.sse_start()?;
    let mut created = resp.clone();
    created["status"] = json!("in_progress");
    created["output"] = json!([]);
    let ev = |out: &mut Out, data: Value| {
        let name = data["type"].as_str().unwrap_or("message").to_string();
        out.event(&name, &data)
    };
    ev(
        out,
        json!({"type": "response.created", "response": created}),
    )?;
    for _ in 0..d.slow_secs {
        sleep_ms(1000);
        // An SSE comment: keeps the connection visibly alive, ignored by every SSE parser.
        out.chunk(": keepalive\n\n")?;
    }
    let item_id = item["id"].as_str().unwrap_or("").to_string();
    if tool.is_some() {
        let args = item["arguments"].as_str().unwrap_or("{}").to_string();
        let mut added = item.clone();
        added["arguments"] = json!("");
        ev(
            out,
            json!({"type": "response.output_item.added", "output_index": 0, "item": added}),
        )?;
        ev(
            out,
            json!({"type": "response.function_call_arguments.delta", "item_id": item_id,
                   "output_index": 0, "delta": args}),
        )?;
        ev(
            out,
            json!({"type": "response.function_call_arguments.done", "item_id": item_id,
                   "output_index": 0, "arguments": args}),
        )?;
    } else {
        let mut added = item.clone();
        added["status"] = json!("in_progress");
        added["content"] = json!([]);
        ev(
            out,
            json!({"type": "response.output_item.added", "output_index": 0, "item": added}),
        )?;
        ev(
            out,
            json!({"type": "response.content_part.added", "item_id": item_id, "output_index": 0,
                   "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}}),
        )?;
        for g in word_groups(&text, 3) {
            ev(
                out,
                json!({"type": "response.output_text.delta", "item_id": item_id, "output_index": 0,
                       "content_index": 0, "delta": g}),
            )?;
            sleep_ms(20);
        }
        ev(
            out,
            json!({"type": "response.output_text.done", "item_id": item_id, "output_index": 0,
                   "content_index": 0, "text": text}),
        )?;
        ev(
            out,
            json!({"type": "response.content_part.done", "item_id": item_id, "output_index": 0,
                   "content_index": 0, "part": {"type": "output_text", "text": text, "annotations": []}}),
        )?;
    }
    ev(
        out,
        json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
    )?;
    ev(out, json!({"type": "response.completed", "response": resp}))?;
    out.sse_end()
}

// ---- OpenAI Chat Completions (not used by Codex 0.171, kept for other clients) ---------------

/// The shell tool a Chat Completions request offers (Qwen Code: `run_shell_command`) and the
/// arguments that run `cmd` with it: every `command`-like parameter gets the command (Cline's
/// `commands` array a list of that one), a
/// `description` one a fixed text, an `is_background` one `background`.
fn chat_shell_call(tools: Option<&Value>, cmd: &str, background: bool) -> Option<(String, Value)> {
    const SHELLISH: &[&str] = &[
        "bash",
        "shell",
        "run_shell_command",
        "execute",
        "exec",
        "terminal",
        "run_command",
        "command",
        // Cline 3.0.65: `commands`, an array of command lines.
        "run_commands",
    ];
    let tools = tools?.as_array()?;
    let name_of = |t: &Value| -> Option<String> {
        t.get("function")
            .unwrap_or(t)
            .get("name")
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let tool = tools
        .iter()
        .find(|t| name_of(t).is_some_and(|n| SHELLISH.contains(&n.to_lowercase().as_str())))
        .or_else(|| {
            tools.iter().find(|t| {
                name_of(t).is_some_and(|n| {
                    let n = n.to_lowercase();
                    n.contains("bash") || n.contains("shell")
                })
            })
        })?;
    let props = tool
        .get("function")
        .unwrap_or(tool)
        .get("parameters")
        .and_then(|p| p.get("properties"))
        .and_then(Value::as_object);
    let mut args = Map::new();
    for k in props.into_iter().flat_map(|p| p.keys()) {
        match k.as_str() {
            "command" | "cmd" | "script" => {
                args.insert(k.clone(), json!(cmd));
            }
            "commands" => {
                args.insert(k.clone(), json!([cmd]));
            }
            "description" => {
                args.insert(k.clone(), json!("mock tool call"));
            }
            "is_background" if background => {
                args.insert(k.clone(), json!(true));
            }
            _ => {}
        }
    }
    if args.is_empty() {
        args.insert("command".into(), json!(cmd));
    }
    // Whatever else the schema requires (Factory Droid's `Execute`: a `riskLevel` enum, a
    // `riskLevelReason`, a sentence-cased 3-8 word `summary`): an enum its first value, a string
    // a short sentence, so the agent takes the call instead of rejecting it.
    let params = tool.get("function").unwrap_or(tool).get("parameters");
    let required = params
        .and_then(|p| p.get("required"))
        .and_then(Value::as_array);
    for k in required.into_iter().flatten().filter_map(Value::as_str) {
        if args.contains_key(k) {
            continue;
        }
        let prop = props.and_then(|p| p.get(k));
        let value = match prop.and_then(|p| p.get("enum")).and_then(Value::as_array) {
            Some(e) if !e.is_empty() => e[0].clone(),
            _ if prop.and_then(|p| p.get("type")) == Some(&json!("string")) => {
                json!("Run the mock command")
            }
            _ => continue,
        };
        args.insert(k.to_string(), value);
    }
    Some((name_of(tool)?, Value::Object(args)))
}

fn openai_chat(
    body: &Value,
    mut rec: Map<String, Value>,
    out: &mut Out,
    state: &State,
) -> io::Result<()> {
    let n = state.replies.fetch_add(1, Ordering::SeqCst) + 1;
    let user = last_user_text(body.get("messages"));
    let d = directives(&user);
    let model = body
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("mock-model")
        .to_string();
    let messages = body.get("messages").and_then(Value::as_array);
    let last_role = messages
        .and_then(|m| m.last())
        .and_then(|m| m.get("role"))
        .and_then(Value::as_str);
    let cid = format!("chatcmpl-mock{}", rand_hex(10));
    rec.insert("api".into(), json!("openai-chat"));
    // OpenCode names a session with a side request whose system prompt asks for a title: it
    // gets `Mock <first words>`, at once, so sessions started with different prompts differ.
    let title_request = messages
        .and_then(|m| m.first())
        .filter(|m| m.get("role").and_then(Value::as_str) == Some("system"))
        .and_then(|m| m.get("content").and_then(Value::as_str))
        .is_some_and(|c| c.starts_with("You are a title generator"));
    if let (Some(cmd), Some("user"), false) = (&d.tool, last_role, title_request) {
        if let Some((name, args)) = chat_shell_call(body.get("tools"), cmd, d.background) {
            rec.insert("kind".into(), json!("tool_call"));
            rec.insert("tool".into(), json!(name));
            rec.insert("last_user".into(), json!(truncate(&user, 500)));
            state.log(rec);
            let args = args.to_string();
            let call = json!({"index": 0, "id": format!("call_{}", rand_hex(10)), "type": "function",
                              "function": {"name": name, "arguments": args}});
            if body.get("stream").and_then(Value::as_bool) != Some(true) {
                return out.json(
                    200,
                    &json!({"id": cid, "object": "chat.completion", "created": unix_secs(), "model": model,
                            "choices": [{"index": 0, "finish_reason": "tool_calls",
                                         "message": {"role": "assistant", "content": null, "tool_calls": [call]}}],
                            "usage": {"prompt_tokens": 10, "completion_tokens": 12, "total_tokens": 22}}),
                );
            }
            out.sse_start()?;
            for (delta, finish) in [
                (
                    json!({"role": "assistant", "content": null, "tool_calls": [call]}),
                    Value::Null,
                ),
                (json!({}), json!("tool_calls")),
            ] {
                let c = json!({"id": cid, "object": "chat.completion.chunk", "created": unix_secs(),
                               "model": model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
                out.chunk(&format!("data: {c}\n\n"))?;
            }
            out.chunk("data: [DONE]\n\n")?;
            return out.sse_end();
        }
    }
    let after_tool = if last_role == Some("tool") {
        "Tool finished. "
    } else {
        ""
    };
    let text = if title_request {
        // The conversation's first prompt, not the request's own "Generate a title …" line.
        let prompt = messages
            .into_iter()
            .flatten()
            .rev()
            .filter(|m| m.get("role").and_then(Value::as_str) == Some("user"))
            .map(|m| content_text(m.get("content").unwrap_or(&Value::Null)))
            .find(|t| {
                !t.trim_start()
                    .starts_with("Generate a title for this conversation")
            })
            // Kilo sends one message that lists the prompts ("1. <first prompt>").
            .or_else(|| {
                user.lines()
                    .find_map(|l| l.strip_prefix("1. "))
                    .map(str::to_string)
            })
            .unwrap_or_else(|| user.clone());
        title_from(&prompt, 5, 60)
    } else {
        let canned = format!(
            "{after_tool}Hello from the mock OpenAI server (canned reply #{n}). PARKTEST-OK"
        );
        // A request that offers no tools at all (aider) gets the command as a shell block in
        // the text, which such an agent proposes to run itself.
        let no_tools = body
            .get("tools")
            .and_then(Value::as_array)
            .is_none_or(|t| t.is_empty());
        match (&d.tool, last_role) {
            (Some(cmd), Some("user")) if no_tools => {
                rec.insert("shell_block".into(), json!(cmd));
                format!("Run this:\n\n```bash\n{cmd}\n```\n\n{canned}")
            }
            _ => canned,
        }
    };
    rec.insert(
        "kind".into(),
        json!(if title_request { "title" } else { "text" }),
    );
    rec.insert("reply".into(), json!(n));
    rec.insert("last_user".into(), json!(truncate(&user, 500)));
    state.log(rec);
    if d.slow_secs > 0 && !title_request {
        thread::sleep(Duration::from_secs(d.slow_secs));
    }
    if body.get("stream").and_then(Value::as_bool) != Some(true) {
        return out.json(
            200,
            &json!({"id": cid, "object": "chat.completion", "created": unix_secs(), "model": model,
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": text}}],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 12, "total_tokens": 22}}),
        );
    }
    out.sse_start()?;
    let chunk = |out: &mut Out, delta: Value, finish: Value| {
        let d = json!({"id": cid, "object": "chat.completion.chunk", "created": unix_secs(),
                       "model": model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        out.chunk(&format!("data: {d}\n\n"))
    };
    chunk(
        out,
        json!({"role": "assistant", "content": ""}),
        Value::Null,
    )?;
    for g in word_groups(&text, 3) {
        chunk(out, json!({"content": g}), Value::Null)?;
    }
    chunk(out, json!({}), json!("stop"))?;
    out.chunk("data: [DONE]\n\n")?;
    out.sse_end()
}

// ---- Google Gemini API (v1beta, as the Gemini CLI's `@google/genai` client calls it) ------------

/// The part of a Gemini model path after `models` (`""`, `/<id>`), for `GET /v1beta/models…`.
fn gemini_models_path(path: &str) -> Option<&str> {
    ["/v1beta/models", "/v1alpha/models"]
        .iter()
        .find_map(|p| path.strip_prefix(p))
        .filter(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// `POST /v1beta/models/<model>:<method>` (or `/v1alpha/`, `/v1/`): the model and the method.
fn gemini_route(path: &str) -> Option<(&str, &str)> {
    ["/v1beta/models/", "/v1alpha/models/", "/v1/models/"]
        .iter()
        .find_map(|p| path.strip_prefix(p))?
        .rsplit_once(':')
}

const GEMINI_MODEL_IDS: [&str; 4] = [
    "gemini-2.5-pro",
    "gemini-2.5-flash",
    "gemini-3.5-flash",
    "gemini-3.5-flash-lite",
];

fn gemini_model_entry(id: &str) -> Value {
    let id = id.strip_prefix("models/").unwrap_or(id);
    json!({
        "name": format!("models/{id}"), "baseModelId": id, "version": "001", "displayName": id,
        "description": "mock model", "inputTokenLimit": 1_048_576, "outputTokenLimit": 65_536,
        "supportedGenerationMethods": ["generateContent", "streamGenerateContent", "countTokens"],
    })
}

fn gemini_models_list() -> Value {
    let models: Vec<Value> = GEMINI_MODEL_IDS
        .iter()
        .map(|id| gemini_model_entry(id))
        .collect();
    json!({ "models": models })
}

/// Google's error shape (`error.code/message/status`), which `@google/genai` reports.
fn gemini_error(code: u16, status: &str, message: &str) -> Value {
    json!({"error": {"code": code, "message": message, "status": status}})
}

/// Text of a Gemini `Content`'s parts (thoughts left out).
fn gemini_parts_text(content: &Value) -> String {
    content
        .get("parts")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|p| p.get("thought").and_then(Value::as_bool) != Some(true))
        .filter_map(|p| p.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The text of the last `role: user` content in `contents` (empty when that content only carries
/// `functionResponse`s), and whether the LAST content is a tool result.
fn gemini_last_user(contents: Option<&Value>) -> (String, bool) {
    let Some(contents) = contents.and_then(Value::as_array) else {
        return (String::new(), false);
    };
    let has_response = |c: &Value| {
        c.get("parts")
            .and_then(Value::as_array)
            .is_some_and(|ps| ps.iter().any(|p| p.get("functionResponse").is_some()))
    };
    let tool_result = contents.last().is_some_and(has_response);
    let user = contents
        .iter()
        .rev()
        .find(|c| c.get("role").and_then(Value::as_str).unwrap_or("user") == "user")
        .map(gemini_parts_text)
        .unwrap_or_default();
    // The CLI sends its `<session_context>` block (date, OS, directory listing) as the first
    // part of the first prompt; the log should show what the user typed.
    static CONTEXT: OnceLock<Regex> = OnceLock::new();
    let context =
        CONTEXT.get_or_init(|| Regex::new(r"(?s)<session_context>.*?</session_context>").unwrap());
    (
        context.replace_all(&user, "").trim().to_string(),
        tool_result,
    )
}

/// A value matching a (JSON or OpenAPI-style) schema: the first `enum` entry (the CLI's
/// next-speaker check gets `"user"`, its router `"flash"`), `title` for strings, zero values
/// otherwise, objects filled property by property.
fn gemini_schema_value(schema: &Value, title: &str, depth: usize) -> Value {
    if let Some(first) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    let ty = match schema.get("type") {
        Some(Value::String(t)) => t.to_ascii_lowercase(),
        // JSON-schema type lists (`["string", "null"]`): the first non-null one.
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("string")
            .to_ascii_lowercase(),
        _ if schema.get("properties").is_some() => "object".into(),
        _ => "string".into(),
    };
    match ty.as_str() {
        "string" => json!(title),
        "number" | "integer" => schema.get("minimum").cloned().unwrap_or(json!(0)),
        "boolean" => json!(false),
        "array" => json!([]),
        "object" if depth < 8 => {
            let props = schema.get("properties").and_then(Value::as_object);
            Value::Object(
                props
                    .into_iter()
                    .flatten()
                    .map(|(k, v)| (k.clone(), gemini_schema_value(v, title, depth + 1)))
                    .collect(),
            )
        }
        "object" => json!({}),
        _ => Value::Null,
    }
}

/// The Gemini CLI's session-summary request (a plain-text side request asking for a one-line
/// summary of a conversation), answered with `"Mock " + the first words of the first user turn`
/// instead of the canned text, so sessions started with different prompts get different summaries.
fn gemini_summary_title(user: &str) -> Option<String> {
    if !user.contains("Summarize the user's primary intent") {
        return None;
    }
    let conv = user.split_once("Conversation:")?.1;
    // The first `User:` turn with text (the `<session_context>` turn is already stripped).
    let first = conv
        .split("User:")
        .skip(1)
        .map(|turn| {
            let turn = turn.split("\n\nAssistant:").next().unwrap_or(turn);
            turn.split("\n\nSummary (max").next().unwrap_or(turn).trim()
        })
        .find(|turn| !turn.is_empty() && !turn.starts_with("[Function Response"))
        .unwrap_or("");
    Some(title_from(first, 5, 60))
}

/// The shell tool a Gemini request declares (`tools[].functionDeclarations[]`, the CLI's
/// `run_shell_command`) and the arguments that run `cmd` with it, chosen like the Chat
/// Completions path does.
fn gemini_shell_call(
    tools: Option<&Value>,
    cmd: &str,
    background: bool,
) -> Option<(String, Value)> {
    let decls: Vec<Value> = tools?
        .as_array()?
        .iter()
        .filter_map(|t| t.get("functionDeclarations").and_then(Value::as_array))
        .flatten()
        .map(|d| {
            let params = d
                .get("parameters")
                .or_else(|| d.get("parametersJsonSchema"))
                .cloned()
                .unwrap_or(Value::Null);
            json!({"name": d.get("name"), "parameters": params})
        })
        .collect();
    chat_shell_call(Some(&Value::Array(decls)), cmd, background)
}

/// Pieces to stream a Gemini text reply in: word groups, or line groups for a `[big N]` reply.
fn gemini_pieces(text: &str) -> Vec<String> {
    if text.len() <= 4096 {
        return word_groups(text, 3);
    }
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    lines.chunks(32).map(|c| c.concat()).collect()
}

fn gemini(
    body: &Value,
    model: &str,
    method: &str,
    mut rec: Map<String, Value>,
    out: &mut Out,
    state: &State,
) -> io::Result<()> {
    rec.insert("api".into(), json!("gemini"));
    rec.insert("model".into(), json!(model));
    rec.insert("gemini_method".into(), json!(method));
    let (user, tool_result) = gemini_last_user(body.get("contents"));
    match method {
        "countTokens" => {
            rec.insert("kind".into(), json!("count_tokens"));
            state.log(rec);
            return out.json(200, &json!({"totalTokens": 42}));
        }
        "generateContent" | "streamGenerateContent" => {}
        _ => {
            rec.insert("kind".into(), json!("unsupported"));
            state.log(rec);
            return out.json(
                404,
                &gemini_error(404, "NOT_FOUND", &format!("mock: no method {method}")),
            );
        }
    }
    let stream = method == "streamGenerateContent";
    let n = state.replies.fetch_add(1, Ordering::SeqCst) + 1;
    let d = directives(&user);
    // `@google/genai` sends the request config as `generationConfig` (older clients: `config`).
    let gc = body
        .get("generationConfig")
        .or_else(|| body.get("config"))
        .unwrap_or(&Value::Null);
    let wants_json = gc.get("responseMimeType").and_then(Value::as_str) == Some("application/json");
    let schema = gc
        .get("responseJsonSchema")
        .or_else(|| gc.get("responseSchema"));

    let mut text = format!("Hello from the mock Gemini server (canned reply #{n}). PARKTEST-OK");
    let mut call = None;
    let kind = if wants_json {
        let title = title_from(&user, 4, 30);
        text = match schema {
            Some(s) => gemini_schema_value(s, &title, 0).to_string(),
            None => json!({}).to_string(),
        };
        "json"
    } else if let Some(title) = gemini_summary_title(&user) {
        text = title;
        "title"
    } else if tool_result {
        text = format!("Tool finished. {text}");
        "tool_result"
    } else if let Some((name, args)) = d
        .tool
        .as_deref()
        .and_then(|cmd| gemini_shell_call(body.get("tools"), cmd, d.background))
    {
        rec.insert("tool".into(), json!(name));
        call = Some(json!({"functionCall": {"name": name, "args": args}}));
        "tool"
    } else {
        if d.big_kib > 0 {
            text = big_text(d.big_kib, &text);
        }
        "text"
    };
    rec.insert("kind".into(), json!(kind));
    rec.insert("reply".into(), json!(n));
    rec.insert("stream".into(), json!(stream));
    rec.insert("last_user".into(), json!(truncate(&user, 500)));
    state.log(rec);

    let usage = json!({"promptTokenCount": 10, "candidatesTokenCount": 12, "totalTokenCount": 22});
    let response = |parts: Value, last: bool| {
        let mut cand = json!({"content": {"role": "model", "parts": parts}, "index": 0});
        let mut r = json!({"candidates": [], "modelVersion": model,
                           "responseId": format!("mock{n}")});
        if last {
            cand["finishReason"] = json!("STOP");
            r["usageMetadata"] = usage.clone();
        }
        r["candidates"] = json!([cand]);
        r
    };
    let all_parts = match &call {
        Some(c) => json!([c]),
        None => json!([{"text": text}]),
    };
    if !stream {
        // Side requests (router, next-speaker check, summary) are never held by `[slow N]`.
        return out.json(200, &response(all_parts, true));
    }

    out.sse_start()?;
    for _ in 0..d.slow_secs {
        sleep_ms(1000);
        // A blank line: an SSE no-op that keeps the connection visibly alive. Not an SSE
        // comment: `@google/genai` only skips whitespace before `data:`, and a `:` line would
        // wedge its parser.
        out.chunk("\n")?;
    }
    let data = |out: &mut Out, v: Value| out.chunk(&format!("data: {v}\r\n\r\n"));
    if call.is_some() {
        data(out, response(all_parts, true))?;
    } else {
        let pieces = gemini_pieces(&text);
        let last = pieces.len().saturating_sub(1);
        for (i, p) in pieces.into_iter().enumerate() {
            data(out, response(json!([{"text": p}]), i == last))?;
            if i != last {
                sleep_ms(20);
            }
        }
    }
    out.sse_end()
}
