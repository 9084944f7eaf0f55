//! Placeholder until the renderer lands (branch wip/render).
pub struct Conversation {
    pub markdown: String,
    pub turns: usize,
    pub tool_calls: usize,
    pub last_user: Option<String>,
    pub last_assistant: Option<String>,
}
pub fn claude_markdown(_b: &[u8]) -> Conversation {
    Conversation {
        markdown: String::new(),
        turns: 0,
        tool_calls: 0,
        last_user: None,
        last_assistant: None,
    }
}
pub fn codex_markdown(b: &[u8]) -> Conversation {
    claude_markdown(b)
}
pub fn normalize(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}
