//! The CLI's outer surface: `--version` carries the git revision, shell completions and the man
//! page come from the clap definition, and every `--json` output matches the JSON Schema
//! published in `schema/` (the committed files equal what the code generates, and real outputs
//! from a real tmux server validate against them).

use crate::common::*;
use park_e2e::*;
use park_protocol::Status;
use serde_json::Value;
use std::path::PathBuf;

const FAKE: &str = env!("CARGO_BIN_EXE_fake-agent");
const NAMES: [&str; 14] = [
    "ls",
    "action",
    "status",
    "archived",
    "search",
    "candidates",
    "doctor",
    "rebuild",
    "archive-all",
    "archive-prune",
    "recover",
    "auto",
    "snapshot",
    "resurrect",
];

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn out(args: &[&str]) -> String {
    let o = std::process::Command::new(park_bin())
        .args(args)
        .env(
            "PARK_HOME",
            std::env::temp_dir().join("park-cli-surface-unused"),
        )
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "park {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

/// `-V`: one line, `park <version> (<git revision>)`; `--version` adds which zellij plugin is
/// built in (issue 33: every build carries the committed one).
#[test]
fn version_names_the_git_revision_and_the_built_in_plugin() {
    let long = out(&["--version"]);
    let v = out(&["-V"]);
    assert_eq!(v.lines().count(), 1, "{v:?}");
    assert!(long.starts_with(&v), "{long:?} vs {v:?}");
    let plugin = long.lines().nth(1).unwrap_or_default();
    assert!(
        plugin.starts_with("zellij plugin: embedded, sha256 ")
            && plugin.contains("the committed build of sources "),
        "{long:?}"
    );
    // The wasm built in is the committed one its record names.
    let record = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../companion/assets/park.wasm.inputs"),
    )
    .unwrap();
    let wasm = record
        .lines()
        .find_map(|l| l.strip_prefix("wasm sha256:"))
        .expect("the record names the wasm");
    assert!(
        plugin.contains(&format!("sha256 {} ", &wasm[..12])),
        "{plugin:?} vs {record}"
    );
    let rev = v
        .trim()
        .split_once('(')
        .and_then(|(_, r)| r.strip_suffix(')'))
        .unwrap_or_else(|| panic!("no revision in {v:?}"));
    let hex = rev.trim_end_matches("-dirty");
    assert!(
        hex == "unknown" || (hex.len() == 12 && hex.chars().all(|c| c.is_ascii_hexdigit())),
        "{v:?}"
    );
}

#[test]
fn completions_and_man_page_cover_every_verb() {
    let verbs = [
        "park", "unpark", "rebuild", "wake", "daemon", "search", "note", "schema", "auto", "pin",
        "unpin", "config", "snapshot",
    ];
    for shell in ["bash", "zsh", "fish"] {
        let c = out(&["completions", shell]);
        for v in verbs {
            assert!(c.contains(v), "{shell} completion lacks {v}");
        }
        assert!(c.contains("wake-in"), "{shell} completion lacks the flags");
    }
    let man = out(&["man"]);
    assert!(man.contains(".TH park 1"), "{}", &man[..200.min(man.len())]);
    assert!(man.contains("rebuild") && man.contains("wake"));
}

#[test]
fn committed_schemas_equal_the_generated_ones() {
    for n in NAMES {
        let path = repo().join("schema").join(format!("{n}.schema.json"));
        let committed = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (run scripts/update-schema)", path.display()));
        assert_eq!(
            committed.trim_end(),
            out(&["schema", n]).trim_end(),
            "{} is stale: run scripts/update-schema",
            path.display()
        );
    }
}

/// A small JSON Schema (draft 7, the subset schemars emits) validator: `$ref` to definitions,
/// `type` (one or several), `required`, `properties`, `items`, `enum`, `anyOf`/`oneOf`/`allOf`,
/// `minimum`. Returns the first mismatch, with its JSON path.
fn check(root: &Value, s: &Value, v: &Value, at: &str) -> Result<(), String> {
    if let Some(r) = s.get("$ref").and_then(|r| r.as_str()) {
        let name = r.trim_start_matches("#/definitions/");
        let d = &root["definitions"][name];
        assert!(!d.is_null(), "dangling $ref {r}");
        return check(root, d, v, at);
    }
    if let Some(all) = s.get("allOf").and_then(|a| a.as_array()) {
        for x in all {
            check(root, x, v, at)?;
        }
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(any) = s.get(key).and_then(|a| a.as_array()) {
            if !any.iter().any(|x| check(root, x, v, at).is_ok()) {
                return Err(format!("{at}: {v} matches none of {key}"));
            }
        }
    }
    if let Some(e) = s.get("enum").and_then(|e| e.as_array()) {
        if !e.contains(v) {
            return Err(format!("{at}: {v} not in {e:?}"));
        }
    }
    if let Some(t) = s.get("type") {
        let types: Vec<&str> = match t {
            Value::String(x) => vec![x.as_str()],
            Value::Array(a) => a.iter().filter_map(|x| x.as_str()).collect(),
            _ => vec![],
        };
        let is = |ty: &str| match ty {
            "object" => v.is_object(),
            "array" => v.is_array(),
            "string" => v.is_string(),
            "boolean" => v.is_boolean(),
            "null" => v.is_null(),
            "integer" => v.is_i64() || v.is_u64(),
            "number" => v.is_number(),
            _ => false,
        };
        if !types.iter().any(|t| is(t)) {
            return Err(format!("{at}: {v} is not {types:?}"));
        }
    }
    if let (Some(min), Some(x)) = (s.get("minimum").and_then(|m| m.as_f64()), v.as_f64()) {
        if x < min {
            return Err(format!("{at}: {x} < {min}"));
        }
    }
    if let Some(obj) = v.as_object() {
        for r in s
            .get("required")
            .and_then(|r| r.as_array())
            .into_iter()
            .flatten()
        {
            let k = r.as_str().unwrap();
            if !obj.contains_key(k) {
                return Err(format!("{at}: missing required {k}"));
            }
        }
        if let Some(props) = s.get("properties").and_then(|p| p.as_object()) {
            for (k, x) in obj {
                match props.get(k) {
                    Some(ps) => check(root, ps, x, &format!("{at}.{k}"))?,
                    None => return Err(format!("{at}: {k} is not in the schema")),
                }
            }
        }
    }
    if let (Some(items), Some(arr)) = (s.get("items"), v.as_array()) {
        for (i, x) in arr.iter().enumerate() {
            check(root, items, x, &format!("{at}[{i}]"))?;
        }
    }
    Ok(())
}

#[test]
fn the_validator_rejects_what_the_schema_does_not_allow() {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("schema/status.schema.json")).unwrap(),
    )
    .unwrap();
    let good = serde_json::json!({"schema": 1, "parked": 2, "freed_bytes": 10, "updated": 5});
    assert!(check(&schema, &schema, &good, "status").is_ok());
    let mut extra = good.clone();
    extra["surprise"] = 1.into();
    assert!(check(&schema, &schema, &extra, "status").is_err());
    let mut wrong = good.clone();
    wrong["parked"] = "two".into();
    assert!(check(&schema, &schema, &wrong, "status").is_err());
    let missing = serde_json::json!({"schema": 1});
    assert!(check(&schema, &schema, &missing, "status").is_err());
}

fn validate(name: &str, output: &[u8]) {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("schema").join(format!("{name}.schema.json")))
            .unwrap(),
    )
    .unwrap();
    let v: Value = serde_json::from_slice(output).unwrap_or_else(|e| {
        panic!(
            "{name}: not JSON ({e}): {}",
            String::from_utf8_lossy(output)
        )
    });
    if let Err(e) = check(&schema, &schema, &v, name) {
        panic!("{name} output does not match schema/{name}.schema.json: {e}\n{v}");
    }
}

#[test]
fn real_json_outputs_validate_against_the_published_schemas() {
    let sb = Sandbox::new();
    install_shims(&sb, Some(FAKE));
    let dir = sb.project_dir("schema");
    let live = sb.new_shell_window("w", "live", &dir, &[] as &[(&str, &str)]);
    let parked = sb.new_shell_window(
        "w",
        "parked",
        &sb.project_dir("schema2"),
        &[] as &[(&str, &str)],
    );
    for p in [&live, &parked] {
        sb.type_line(p, "claude");
        sb.wait_for(p, CLAUDE_READY, SECS(15)).unwrap();
        sb.type_line(p, "schema prompt");
        sb.wait_for(p, "PARKTEST-OK", SECS(15)).unwrap();
        wait_row(&sb, p, SECS(10), |r| r.status == Status::Idle);
    }
    let o = park(
        &sb,
        &[
            "park",
            &parked,
            "--json",
            "--force",
            "--wake-in",
            "2h",
            "--note",
            "n",
        ],
    );
    validate("action", &o.stdout);
    for (name, args) in [
        ("ls", vec!["ls", "--json"]),
        ("status", vec!["status", "--json"]),
        ("archived", vec!["ls", "--archived", "--json"]),
        ("search", vec!["search", "schema", "--json"]),
        ("candidates", vec!["candidates", "--json"]),
        ("doctor", vec!["doctor", "--json"]),
        ("rebuild", vec!["rebuild", "--dry-run", "--json"]),
        ("snapshot", vec!["snapshot", "--json"]),
    ] {
        let o = park(&sb, &args);
        validate(name, &o.stdout);
    }
    // The parked row carries its wake-up, and the schema knows the field.
    let ls: Value = serde_json::from_slice(&park(&sb, &["ls", "--json"]).stdout).unwrap();
    assert!(ls["rows"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["wake"].as_str().is_some_and(|w| w.starts_with("at "))));
}

/// Issue 35 item 6b: `park unpark` (and `park park`) with no target is a usage error (exit 2)
/// whose text lists the target forms, zellij's among them (`terminal_3`, `terminal_3@session`,
/// `session:tab`), not only tmux's.
#[test]
fn a_verb_with_no_target_lists_the_tmux_and_zellij_target_forms() {
    for verb in ["unpark", "park"] {
        let o = std::process::Command::new(park_bin())
            .arg(verb)
            .env(
                "PARK_HOME",
                std::env::temp_dir().join("park-cli-surface-unused"),
            )
            .env_remove("TMUX")
            .env_remove("TMUX_PANE")
            .env_remove("ZELLIJ_PANE_ID")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "park {verb}: {err}");
        for form in [
            "%3 in tmux",
            "terminal_3 or terminal_3@session in zellij",
            "session:window or session:tab",
            "`.` for this one",
        ] {
            assert!(err.contains(form), "park {verb}: no {form:?} in {err}");
        }
    }
}
