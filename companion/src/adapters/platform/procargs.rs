//! Pure parsers for the formats the macOS process table hands back. No `cfg`: they are compiled
//! and unit-tested on every platform, because the macOS code that feeds them cannot run in CI.

/// argv and the `K=V` environment of one process.
pub type ArgsEnv = (Vec<String>, Vec<(String, String)>);

/// Parses the buffer `sysctl([CTL_KERN, KERN_PROCARGS2, pid])` returns into (argv, environ).
///
/// Layout (xnu `sysctl_procargsx`): a native-endian `i32` argc, the executable path
/// NUL-terminated, NUL padding, then argc NUL-terminated arguments, then the `K=V` environment
/// strings up to an empty string (after it come the "apple" strings, which are not environment).
///
/// `None` when the buffer is too short for argc, argc is negative, or it ends before the path or
/// the argc arguments are complete: a half-read argv is not shown as if it were the command line.
/// The environment stops at the first incomplete string; strings without `=` are skipped, as on
/// Linux. Never panics, whatever the bytes.
pub fn parse_procargs2(buf: &[u8]) -> Option<ArgsEnv> {
    let argc = i32::from_ne_bytes(buf.get(..4)?.try_into().ok()?);
    let argc = usize::try_from(argc).ok()?;
    let mut rest = &buf[4..];

    // Executable path, then the padding that aligns the strings area.
    let path_end = rest.iter().position(|&b| b == 0)?;
    rest = &rest[path_end..];
    let first = rest.iter().position(|&b| b != 0).unwrap_or(rest.len());
    rest = &rest[first..];

    // Every argument takes at least one byte, so a garbage argc cannot over-allocate.
    let mut argv = Vec::with_capacity(argc.min(rest.len()));
    for _ in 0..argc {
        let (s, tail) = take_cstr(rest)?;
        argv.push(String::from_utf8_lossy(s).into_owned());
        rest = tail;
    }

    let mut env = vec![];
    while let Some((s, tail)) = take_cstr(rest) {
        if s.is_empty() {
            break;
        }
        if let Some((k, v)) = String::from_utf8_lossy(s).split_once('=') {
            env.push((k.to_string(), v.to_string()));
        }
        rest = tail;
    }
    Some((argv, env))
}

/// One NUL-terminated string and what follows its NUL; `None` when no NUL is left.
fn take_cstr(b: &[u8]) -> Option<(&[u8], &[u8])> {
    let end = b.iter().position(|&c| c == 0)?;
    Some((&b[..end], &b[end + 1..]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn buf(argc: i32, path: &str, pad: usize, args: &[&str], env: &[&str], tail: &[u8]) -> Vec<u8> {
        let mut b = argc.to_ne_bytes().to_vec();
        b.extend_from_slice(path.as_bytes());
        b.push(0);
        b.extend(vec![0u8; pad]);
        for a in args {
            b.extend_from_slice(a.as_bytes());
            b.push(0);
        }
        for e in env {
            b.extend_from_slice(e.as_bytes());
            b.push(0);
        }
        b.extend_from_slice(tail);
        b
    }

    fn kv(k: &str, v: &str) -> (String, String) {
        (k.to_string(), v.to_string())
    }

    #[test]
    fn argv_and_environ_with_padding_and_apple_strings() {
        let b = buf(
            3,
            "/usr/local/bin/claude",
            5,
            &["claude", "--resume", "35c98558-0920-4e29-b81c-9304ca43fccb"],
            &[
                "HOME=/Users/me",
                "CLAUDE_CONFIG_DIR=/Users/me/.c",
                "EMPTY=",
                "A=b=c",
            ],
            b"\0executable_path=/usr/local/bin/claude\0ptr_munge=\0\0\0",
        );
        let (argv, env) = parse_procargs2(&b).unwrap();
        assert_eq!(
            argv,
            ["claude", "--resume", "35c98558-0920-4e29-b81c-9304ca43fccb"]
        );
        assert_eq!(
            env,
            [
                kv("HOME", "/Users/me"),
                kv("CLAUDE_CONFIG_DIR", "/Users/me/.c"),
                kv("EMPTY", ""),
                kv("A", "b=c")
            ]
        );
    }

    #[test]
    fn empty_arguments_after_the_first_are_kept() {
        let b = buf(3, "/bin/sh", 0, &["sh", "", "x"], &["K=V"], b"\0");
        let (argv, env) = parse_procargs2(&b).unwrap();
        assert_eq!(argv, ["sh", "", "x"]);
        assert_eq!(env, [kv("K", "V")]);
    }

    #[test]
    fn no_environment_and_no_terminator() {
        let b = buf(1, "/bin/sleep", 2, &["sleep"], &[], b"");
        assert_eq!(
            parse_procargs2(&b),
            Some((vec!["sleep".to_string()], vec![]))
        );
        let b = buf(1, "/bin/sleep", 2, &["sleep"], &[], b"\0apple=1\0");
        assert_eq!(
            parse_procargs2(&b),
            Some((vec!["sleep".to_string()], vec![]))
        );
    }

    #[test]
    fn strings_without_equals_are_not_environment() {
        let b = buf(1, "/p", 0, &["p"], &["NOEQ", "K=V"], b"\0");
        assert_eq!(parse_procargs2(&b).unwrap().1, [kv("K", "V")]);
    }

    #[test]
    fn zero_argc() {
        let b = buf(0, "/p", 3, &[], &["K=V"], b"\0");
        assert_eq!(parse_procargs2(&b), Some((vec![], vec![kv("K", "V")])));
    }

    #[test]
    fn truncated_or_garbage_buffers_are_refused() {
        assert_eq!(parse_procargs2(b""), None);
        assert_eq!(parse_procargs2(b"\x01\0\0"), None);
        // argc but no NUL after the path.
        assert_eq!(parse_procargs2(&buf(1, "/p", 0, &[], &[], b"")[..6]), None);
        // Negative argc.
        assert_eq!(parse_procargs2(&buf(-1, "/p", 0, &["p"], &[], b"\0")), None);
        // Huge argc with a small buffer.
        assert_eq!(
            parse_procargs2(&buf(i32::MAX, "/p", 0, &["a", "b"], &[], b"")),
            None
        );
        // The last argument is cut before its NUL.
        let b = buf(2, "/bin/x", 0, &["x", "--flag"], &[], b"");
        assert_eq!(parse_procargs2(&b[..b.len() - 1]), None);
        // Only argc and a path: argc 1 is not satisfied.
        assert_eq!(parse_procargs2(&buf(1, "/p", 4, &[], &[], b"")), None);
    }

    #[test]
    fn a_cut_environment_keeps_the_complete_strings() {
        let b = buf(1, "/p", 0, &["p"], &["A=1", "B=2"], b"");
        let (_, env) = parse_procargs2(&b[..b.len() - 2]).unwrap();
        assert_eq!(env, [kv("A", "1")]);
    }

    #[test]
    fn invalid_utf8_is_replaced_not_refused() {
        let mut b = 1i32.to_ne_bytes().to_vec();
        b.extend_from_slice(b"/p\0\xff\xfe\0K=\xff\0\0");
        let (argv, env) = parse_procargs2(&b).unwrap();
        assert_eq!(argv, ["\u{fffd}\u{fffd}"]);
        assert_eq!(env, [kv("K", "\u{fffd}")]);
    }

    proptest! {
        #[test]
        fn never_panics(b in proptest::collection::vec(any::<u8>(), 0..256)) {
            let _ = parse_procargs2(&b);
        }

        #[test]
        fn never_panics_with_a_plausible_argc(argc in -2i32..8, rest in proptest::collection::vec(prop_oneof![Just(0u8), any::<u8>()], 0..128)) {
            let mut b = argc.to_ne_bytes().to_vec();
            b.extend(rest);
            if let Some((argv, _)) = parse_procargs2(&b) {
                prop_assert_eq!(argv.len(), argc as usize);
            }
        }

        #[test]
        fn round_trips(args in proptest::collection::vec("[a-z -]{1,8}", 1..5), env in proptest::collection::vec(("[A-Z_]{1,6}", "[a-z/=]{0,8}"), 0..5), pad in 0usize..8) {
            let envs: Vec<String> = env.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let a: Vec<&str> = args.iter().map(String::as_str).collect();
            let e: Vec<&str> = envs.iter().map(String::as_str).collect();
            let b = buf(args.len() as i32, "/x/y", pad, &a, &e, b"\0apple=1\0");
            let (pa, pe) = parse_procargs2(&b).unwrap();
            prop_assert_eq!(pa, args);
            prop_assert_eq!(pe, env);
        }
    }
}
