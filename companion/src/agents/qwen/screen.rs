//! Qwen Code's screen (a plain `capture-pane -p` capture; escapes, if any, are stripped first):
//! busy, waiting on a confirmation or dialog, a draft in the composer, background shells.
//!
//! The cues come from real 0.24.4 captures (`tests/fixtures/qwen/*.txt`) and its bundle
//! (`startInteractiveUI-*.js`, `locales/*.js`):
//! * The composer is a line at column 0 starting with the prompt prefix and a space (`>`; `*` in
//!   YOLO mode; `!` in shell mode; `(r:)` in reverse search) whose nearest non-empty line above is
//!   a full-width `─` rule; it runs to the next rule. Continuation lines are indented two
//!   columns. Messages in the scrollback are indented (`  > hello`), so they never match.
//! * The empty composer shows a placeholder two columns after the prefix (`>   Type your message
//!   or @path/to/file`, wrapped on narrow panes, translated by the UI language, a vim-mode
//!   variant); anything else there is a draft. The cursor is drawn as a zero-width space after
//!   the text, which is not part of the draft.
//! * A turn in flight shows a status line right above the composer ending in
//!   `(12s · ↑ 18 tokens · esc to cancel)` (the suffix is never translated).
//! * A tool confirmation replaces the composer with a chooser (`› 1. Yes, allow once`) and
//!   `Waiting for user confirmation...` (translated).
//! * A background shell shows `· 1 shell` in the footer below the composer.
//!
//! Errs in the safe direction as every classifier does: no composer and no known dialog means
//! "cannot tell" (`composer_seen == false`), which makes park refuse.

use std::sync::OnceLock;

use regex::Regex;

use crate::agents::screen::{
    has_chooser, is_blank, is_rule, last_nonempty, parse_count, plain_lines, re, ScreenReading,
};

/// Prompt prefixes (`getApprovalModePromptStyle`, shell mode, reverse search), each followed by
/// one space on screen.
const PREFIXES: &[&str] = &[">", "*", "!", "(r:)"];

/// The empty composer's placeholder in every UI language 0.24.4 ships (`Type your message or
/// @path/to/file`; in vim mode `Press 'i' for INSERT mode…`), whitespace-normalised.
const PLACEHOLDERS: &[&str] = &[
    "Type your message or @path/to/file",
    "Escriviu el vostre missatge o @camí/al/fitxer",
    "Nachricht eingeben oder @Pfad/zur/Datei",
    "Tapez votre message ou @chemin/vers/fichier",
    "メッセージを入力、@パス/ファイルでファイルを添付(D&D対応)",
    "Digite sua mensagem ou @caminho/do/arquivo",
    "Введите сообщение или @путь/к/файлу",
    "輸入您的消息或 @ 檔案路徑",
    "输入您的消息或 @ 文件路径",
    "Press 'i' for INSERT mode and 'Esc' for NORMAL mode.",
    "Premeu 'i' per al mode INSERCIÓ i 'Esc' per al mode NORMAL.",
    "Drücken Sie 'i' für den EINFÜGE-Modus und 'Esc' für den NORMAL-Modus.",
    "Appuyez sur 'i' pour le mode INSERTION et 'Esc' pour le mode NORMAL.",
    "'i' でINSERTモード、'Esc' でNORMALモード",
    "Pressione 'i' para modo INSERÇÃO e 'Esc' para modo NORMAL.",
    "Нажмите 'i' для режима ВСТАВКА и 'Esc' для ОБЫЧНОГО режима.",
    "按 'i' 進入插入模式，按 'Esc' 進入普通模式",
    "按 'i' 进入插入模式，按 'Esc' 进入普通模式",
];

/// `Waiting for user confirmation...` in every UI language 0.24.4 ships (without the dots).
const CONFIRMING: &[&str] = &[
    "Waiting for user confirmation",
    "Esperant la confirmació de l'usuari",
    "Warten auf Benutzerbestätigung",
    "En attente de la confirmation de l'utilisateur",
    "ユーザーの確認を待っています",
    "Aguardando confirmação do usuário",
    "Ожидание подтверждения от пользователя",
    "等待用戶確認",
    "等待用户确认",
];

/// The cursor Qwen draws after the text.
const CURSOR: char = '\u{200b}';
/// How many non-empty lines above the composer the turn's status line may sit (a running tool
/// adds its own line between them).
const STATUS_REACH: usize = 3;
/// When no composer is found, dialogs are searched in this many trailing non-empty lines.
const BOTTOM_LINES: usize = 15;

pub fn read(plain: &str) -> ScreenReading {
    let lines = plain_lines(plain);
    let mut reading = ScreenReading::default();

    let Some((at, prefix, upper)) = composer(&lines) else {
        let bottom = last_nonempty(&lines, BOTTOM_LINES);
        reading.waiting = dialog(&bottom);
        return reading;
    };
    reading.composer_seen = true;

    let first = &lines[at][prefix.len() + 1..];
    let mut parts = vec![first.to_string()];
    let mut lower_rule = None;
    for (j, line) in lines.iter().enumerate().skip(at + 1) {
        if is_rule(line) {
            lower_rule = Some(j);
            break;
        }
        parts.push(line.strip_prefix("  ").unwrap_or(line).to_string());
    }
    if !is_placeholder(first, &parts) {
        let draft: Vec<String> = parts
            .iter()
            .map(|p| p.replace(CURSOR, "").trim_end().to_string())
            .collect();
        let draft = draft.join("\n");
        let draft = draft.trim();
        if !draft.is_empty() {
            reading.draft = Some(draft.to_string());
        }
    }

    static STATUS: OnceLock<Regex> = OnceLock::new();
    let status = re(&STATUS, r"·\s*esc to cancel\)\s*$");
    reading.busy = lines[..upper]
        .iter()
        .rev()
        .filter(|l| !is_blank(l))
        .take(STATUS_REACH)
        .any(|l| status.is_match(l));

    if let Some(j) = lower_rule {
        static SHELLS: OnceLock<Regex> = OnceLock::new();
        let shells = re(&SHELLS, r"\b(\d{1,10}) shells?\b");
        reading.bg_shells = lines[j + 1..]
            .iter()
            .find_map(|l| shells.captures(l))
            .map(|c| parse_count(&c[1]))
            .unwrap_or(0);
    }
    reading
}

/// The last composer line, its prefix and the rule above it: a prompt prefix and a space at
/// column 0, right under a rule.
fn composer(lines: &[String]) -> Option<(usize, &'static str, usize)> {
    (1..lines.len()).rev().find_map(|i| {
        let prefix = PREFIXES.iter().find(|p| {
            lines[i]
                .strip_prefix(**p)
                .is_some_and(|rest| rest.starts_with(' '))
        })?;
        let upper = (0..i).rev().find(|&j| !is_blank(&lines[j]))?;
        is_rule(&lines[upper]).then_some((i, *prefix, upper))
    })
}

/// The placeholder starts two columns after the prefix's space (where a draft starts right
/// after it) and may wrap; a draft that only spells it is still told apart by that indent.
fn is_placeholder(first: &str, parts: &[String]) -> bool {
    if !first.starts_with("  ") {
        return false;
    }
    let text = parts.join(" ");
    let words: Vec<&str> = text.split_whitespace().collect();
    let text = words.join(" ");
    PLACEHOLDERS.iter().any(|p| {
        let want: Vec<&str> = p.split_whitespace().collect();
        text == want.join(" ")
    })
}

/// Names the Qwen dialog visible in `lines` (the composer is gone), if any.
fn dialog(lines: &[&str]) -> Option<String> {
    if lines
        .iter()
        .any(|l| CONFIRMING.iter().any(|c| l.contains(c)))
    {
        return Some("tool confirmation".into());
    }
    has_chooser(lines).then(|| "dialog open".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::agents::screen::test_kit::{fixture, idle};

    #[test]
    fn idle_screens_read_idle_at_every_width() {
        for (name, s) in [
            ("idle", fixture!("qwen/idle.txt")),
            ("after a reply", fixture!("qwen/idle-after.txt")),
            ("40 columns", fixture!("qwen/idle-narrow.txt")),
            (
                "28 columns, wrapped placeholder",
                fixture!("qwen/idle-28.txt"),
            ),
        ] {
            assert_eq!(read(s), idle(), "{name}");
        }
    }

    #[test]
    fn drafts_are_quoted_back_without_the_cursor() {
        assert_eq!(
            read(fixture!("qwen/draft.txt")).draft.as_deref(),
            Some("fix the build please")
        );
        assert_eq!(
            read(fixture!("qwen/draft-multiline.txt")).draft.as_deref(),
            Some("line one\nline two")
        );
        assert_eq!(
            read(fixture!("qwen/draft-narrow.txt")).draft.as_deref(),
            Some("a longer draft that will need\nto wrap around the narrow\npane width")
        );
        assert_eq!(
            read(fixture!("qwen/slash-menu.txt")).draft.as_deref(),
            Some("/")
        );
    }

    #[test]
    fn shell_mode_placeholder_is_empty_and_its_text_a_draft() {
        let r = read(fixture!("qwen/shell-mode.txt"));
        assert!(r.composer_seen);
        assert_eq!(r.draft, None);
        let typed = fixture!("qwen/shell-mode.txt")
            .replace("!   Type your message or @path/to/file", "! ls \u{200b}");
        assert_eq!(read(&typed).draft.as_deref(), Some("ls"));
    }

    #[test]
    fn a_draft_spelling_the_placeholder_is_still_a_draft() {
        let s = fixture!("qwen/idle.txt").replace(
            ">   Type your message or @path/to/file",
            "> Type your message or @path/to/file\u{200b}",
        );
        assert_eq!(
            read(&s).draft.as_deref(),
            Some("Type your message or @path/to/file")
        );
    }

    #[test]
    fn translated_placeholders_are_empty() {
        let s = fixture!("qwen/idle.txt").replace(
            "Type your message or @path/to/file",
            "输入您的消息或 @ 文件路径",
        );
        assert_eq!(read(&s), idle());
    }

    #[test]
    fn a_turn_in_flight_is_busy() {
        for (name, s) in [
            ("waiting for the model", fixture!("qwen/busy.txt")),
            ("a tool running", fixture!("qwen/busy-tool.txt")),
        ] {
            let r = read(s);
            assert!(r.busy, "{name}");
            assert!(r.composer_seen && r.draft.is_none(), "{name}");
        }
    }

    #[test]
    fn esc_to_cancel_in_the_scrollback_is_not_busy() {
        // The same words far above the composer are an old message, not the status line.
        let s = fixture!("qwen/idle-after.txt").replace(
            "  > hello [slow 8]",
            "  > tell me (2s · esc to cancel)\n\n\n\n  ◆︎ ok\n  ◆︎ ok\n  ◆︎ ok",
        );
        assert!(!read(&s).busy);
    }

    #[test]
    fn a_tool_confirmation_is_waiting() {
        let r = read(fixture!("qwen/waiting.txt"));
        assert_eq!(r.waiting.as_deref(), Some("tool confirmation"));
        assert!(!r.composer_seen);
    }

    #[test]
    fn a_chooser_without_the_confirmation_line_is_a_dialog() {
        let s = fixture!("qwen/waiting.txt").replace("Waiting for user confirmation...", "");
        assert_eq!(read(&s).waiting.as_deref(), Some("dialog open"));
    }

    #[test]
    fn background_shells_are_counted() {
        let r = read(fixture!("qwen/bg-shell.txt"));
        assert_eq!(r.bg_shells, 1);
        assert!(r.composer_seen && !r.busy && r.draft.is_none());
    }

    #[test]
    fn other_screens_cannot_be_told() {
        for s in ["", "$ ", "root@vm:~# qwen\n", "────────────\n  > hello\n"]
        {
            let r = read(s);
            assert!(!r.composer_seen, "{s:?}");
            assert_eq!(r.waiting, None, "{s:?}");
        }
    }
}
