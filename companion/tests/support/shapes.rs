//! Transcripts as real agents leave them, for tests and the transcript bench: Claude Code and
//! Codex records in their real shapes (see tests/fixtures/<agent>/*-samples.jsonl), plus the damage real
//! files carry (lone UTF-16 surrogate escapes, invalid UTF-8, a truncated last record, a record of
//! megabytes, files of tens of megabytes). Shared by `#[path]` so no test code ships in the library.
#![allow(dead_code)]

use serde_json::json;
use std::io::{self, Write};

pub const CLAUDE_SID: &str = "5b0c6a1e-2f3d-4c5b-9a8e-7d6c5b4a3f2e";
pub const CODEX_SID: &str = "019ae0c1-7b2a-7c3d-8e4f-5a6b7c8d9e0f";
pub const CWD: &str = "/w/shapes";

/// `2026-12-02T10:MM:SS.mmmZ` for a running counter (minutes wrap into hours).
pub fn at(n: u64) -> String {
    let (h, rest) = (10 + n / 3600 % 12, n % 3600);
    format!("2026-12-02T{h:02}:{:02}:{:02}.000Z", rest / 60, rest % 60)
}

/// A record with `PLACEHOLDER` replaced by raw JSON text (`\ud83d`) or raw bytes (`\xff`).
pub fn with_raw(line: &str, placeholder: &str, raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(line.len() + raw.len());
    let mut rest = line;
    while let Some(i) = rest.find(placeholder) {
        out.extend_from_slice(&rest.as_bytes()[..i]);
        out.extend_from_slice(raw);
        rest = &rest[i + placeholder.len()..];
    }
    out.extend_from_slice(rest.as_bytes());
    out
}

// ---- Claude -------------------------------------------------------------------------------

pub fn claude_prompt(text: &str, ts: &str) -> String {
    json!({"parentUuid":null,"isSidechain":false,"type":"user",
        "message":{"role":"user","content":text},"uuid":"c4f25567-171d-4bcb-8382-58e2f0dd9e7f",
        "timestamp":ts,"permissionMode":"default","origin":{"kind":"human"},"promptSource":"typed",
        "userType":"external","entrypoint":"cli","cwd":CWD,"sessionId":CLAUDE_SID,"version":"2.1.197"})
    .to_string()
}

pub fn claude_reply(text: &str, ts: &str) -> String {
    json!({"parentUuid":"eae5ad3d-df9c-4196-bf6f-c202c4f2b9d7","isSidechain":false,
        "message":{"id":"msg_shape","type":"message","role":"assistant","model":"claude-opus-4-8",
        "content":[{"type":"text","text":text}],"stop_reason":"end_turn"},
        "type":"assistant","uuid":"cf7aa7d4-ad6b-499c-b513-3a989e1ee360","timestamp":ts,
        "userType":"external","cwd":CWD,"sessionId":CLAUDE_SID,"version":"2.1.197"})
    .to_string()
}

pub fn claude_tool_use(cmd: &str, ts: &str) -> String {
    json!({"parentUuid":"8dc021c5-7ab5-4519-b921-26cab65cb857","isSidechain":false,
        "message":{"id":"msg_tool","type":"message","role":"assistant","model":"claude-opus-4-8",
        "content":[{"type":"tool_use","id":"toolu_shape","name":"Bash","input":{"command":cmd}}]},
        "type":"assistant","uuid":"b119d9a8-2c8b-4211-8768-c71fc8689136","timestamp":ts,
        "cwd":CWD,"sessionId":CLAUDE_SID})
    .to_string()
}

/// A tool result of about `size` bytes (the bulk of real transcripts).
pub fn claude_tool_result(size: usize, ts: &str) -> String {
    let out: String = "0123456789abcdef\n".repeat(size / 17 + 1);
    json!({"parentUuid":"b119d9a8-2c8b-4211-8768-c71fc8689136","isSidechain":false,"type":"user",
        "message":{"role":"user","content":[{"type":"tool_result","content":out,"is_error":false,
        "tool_use_id":"toolu_shape"}]},"timestamp":ts,"cwd":CWD,"sessionId":CLAUDE_SID})
    .to_string()
}

pub fn claude_turn_done(ts: &str) -> String {
    json!({"parentUuid":"cf7aa7d4-ad6b-499c-b513-3a989e1ee360","isSidechain":false,"type":"system",
        "subtype":"turn_duration","durationMs":134,"timestamp":ts,"isMeta":false,"cwd":CWD,
        "sessionId":CLAUDE_SID})
    .to_string()
}

/// Bookkeeping Claude writes after a turn (no turn in it).
pub fn claude_last_prompt(text: &str) -> String {
    json!({"type":"last-prompt","lastPrompt":text,"sessionId":CLAUDE_SID}).to_string()
}

/// One whole Claude turn: prompt, tool call, a tool result of `result` bytes, reply, done.
pub fn claude_turn(prompt: &str, reply: &str, result: usize, t: u64) -> Vec<String> {
    vec![
        claude_prompt(prompt, &at(t)),
        claude_tool_use("cargo test", &at(t + 1)),
        claude_tool_result(result, &at(t + 2)),
        claude_reply(reply, &at(t + 3)),
        claude_turn_done(&at(t + 4)),
    ]
}

// ---- Codex --------------------------------------------------------------------------------

pub fn codex_meta() -> String {
    json!({"timestamp":at(0),"type":"session_meta","payload":{"id":CODEX_SID,"cwd":CWD,
        "originator":"codex_cli_rs","cli_version":"0.171.0"}})
    .to_string()
}

pub fn codex_task_started(ts: &str) -> String {
    json!({"timestamp":ts,"type":"event_msg","payload":{"type":"task_started","turn_id":"t"}})
        .to_string()
}

pub fn codex_prompt(text: &str, ts: &str) -> String {
    json!({"timestamp":ts,"type":"event_msg","payload":{"type":"item_completed","turn_id":"t",
        "item":{"type":"UserMessage","content":[{"type":"text","text":text,"text_elements":[]}]}}})
    .to_string()
}

pub fn codex_tool_call(ts: &str) -> String {
    json!({"timestamp":ts,"type":"response_item","payload":{"type":"function_call","name":"shell",
        "arguments":"{\"command\":[\"bash\",\"-lc\",\"cargo test\"]}","call_id":"call_shape"}})
    .to_string()
}

pub fn codex_tool_output(size: usize, ts: &str) -> String {
    let out: String = "0123456789abcdef\n".repeat(size / 17 + 1);
    json!({"timestamp":ts,"type":"response_item","payload":{"type":"function_call_output",
        "call_id":"call_shape","output":out}})
    .to_string()
}

pub fn codex_reply(text: &str, ts: &str) -> String {
    json!({"timestamp":ts,"type":"response_item","payload":{"type":"message","role":"assistant",
        "content":[{"type":"output_text","text":text,"annotations":[]}]}})
    .to_string()
}

pub fn codex_task_complete(text: &str, ts: &str) -> String {
    json!({"timestamp":ts,"type":"event_msg","payload":{"type":"task_complete","turn_id":"t",
        "last_agent_message":text}})
    .to_string()
}

/// One whole Codex turn: started, prompt, tool call, output of `result` bytes, reply, complete.
pub fn codex_turn(prompt: &str, reply: &str, result: usize, t: u64) -> Vec<String> {
    vec![
        codex_task_started(&at(t)),
        codex_prompt(prompt, &at(t)),
        codex_tool_call(&at(t + 1)),
        codex_tool_output(result, &at(t + 2)),
        codex_reply(reply, &at(t + 3)),
        codex_task_complete(reply, &at(t + 3)),
    ]
}

// ---- whole files --------------------------------------------------------------------------

/// Writes a transcript of at least `bytes` bytes: turns with 200 KiB tool results, the last one
/// prompting `last_prompt` and answering `last_reply`. Streams, so a 60 MB file costs no 60 MB.
pub fn write_big(
    w: &mut impl Write,
    codex: bool,
    bytes: u64,
    last_prompt: &str,
    last_reply: &str,
) -> io::Result<u64> {
    let mut n = 0u64;
    let put = |w: &mut dyn Write, line: &str, n: &mut u64| -> io::Result<()> {
        w.write_all(line.as_bytes())?;
        w.write_all(b"\n")?;
        *n += line.len() as u64 + 1;
        Ok(())
    };
    if codex {
        put(w, &codex_meta(), &mut n)?;
    }
    let mut t = 1;
    while n < bytes {
        let (p, r) = (format!("prompt number {t}"), format!("reply number {t}"));
        let turn = if codex {
            codex_turn(&p, &r, 200 * 1024, t)
        } else {
            claude_turn(&p, &r, 200 * 1024, t)
        };
        for l in turn {
            put(w, &l, &mut n)?;
        }
        t += 10;
    }
    let turn = if codex {
        codex_turn(last_prompt, last_reply, 1024, t)
    } else {
        claude_turn(last_prompt, last_reply, 1024, t)
    };
    for l in turn {
        put(w, &l, &mut n)?;
    }
    Ok(n)
}
