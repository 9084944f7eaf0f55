//! Shell quoting for the command lines park shows or types (`cd -- DIR && claude --resume ID`, a
//! doctor fix, a dev server's command).
//!
//! Contract: `quote` returns a single POSIX-shell word that reads back as `s`; a string no shell
//! word can carry (a NUL byte) becomes `''`, never the raw text. `join` is for display: the words
//! quoted and joined by spaces, or the plain join when a word cannot be quoted.

pub fn quote(s: &str) -> String {
    shlex::try_quote(s)
        .map(|c| c.into_owned())
        .unwrap_or_else(|_| "''".into())
}

pub fn join<'a>(words: impl IntoIterator<Item = &'a str> + Clone) -> String {
    shlex::try_join(words.clone())
        .unwrap_or_else(|_| words.into_iter().collect::<Vec<_>>().join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_round_trip_and_a_nul_never_passes_raw() {
        for s in ["plain", "two words", "it's", "$(rm -rf ~)", "", "-- x"] {
            assert_eq!(shlex::split(&quote(s)).unwrap(), vec![s.to_string()], "{s}");
        }
        assert_eq!(quote("a\0b"), "''");
        assert_eq!(join(["npm", "run", "dev"]), "npm run dev");
        assert_eq!(join(["echo", "a b"]), "echo 'a b'");
    }
}
