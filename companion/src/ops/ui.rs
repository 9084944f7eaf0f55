//! What an operation asks of the person running it, and what it tells them. The CLI answers on
//! the terminal (`cli::TermUi`); library tests script the answers. Core code never reads stdin or
//! decides by itself whether a terminal is there.
//!
//! Contract: a question is asked only when [`Ui::can_ask`]; a bulk or destructive step without a
//! terminal needs `--yes` and is otherwise refused with the reason (never assumed).

/// The person at the other end of an operation.
pub trait Ui {
    /// Whether anyone can answer a question (stdin and stderr are a terminal).
    fn can_ask(&self) -> bool;
    /// A yes/no question; true only for `y`/`yes`.
    fn ask(&self, question: &str) -> bool;
    /// A question answered only by typing `yes`, for a step that can lose work.
    fn ask_typed(&self, question: &str) -> bool;
    /// A line the person must see even with `--json` (warnings, what will be lost).
    fn warn(&self, line: &str);
    /// Plans and summaries (the `--idle` plan, a window's freed memory); `--json` hides them.
    fn inform(&self, line: &str);
}

/// A bulk action goes ahead only after a typed yes on a terminal; without one, never.
pub fn confirm_bulk(ui: &dyn Ui, what: &str, question: &str) -> bool {
    if !ui.can_ask() {
        ui.warn(&format!(
            "park: {what}; without a terminal that needs --yes. Nothing done."
        ));
        return false;
    }
    if !ui.ask_typed(question) {
        ui.warn("park: not confirmed; nothing done");
        return false;
    }
    true
}

/// A scripted person, for tests: answers every question with `answer`, records every line.
#[cfg(test)]
#[derive(Debug, Default)]
pub struct Scripted {
    pub terminal: bool,
    pub answer: bool,
    pub asked: std::cell::RefCell<Vec<String>>,
    pub said: std::cell::RefCell<Vec<String>>,
}

#[cfg(test)]
impl Ui for Scripted {
    fn can_ask(&self) -> bool {
        self.terminal
    }
    fn ask(&self, question: &str) -> bool {
        self.asked.borrow_mut().push(question.to_string());
        self.terminal && self.answer
    }
    fn ask_typed(&self, question: &str) -> bool {
        self.ask(question)
    }
    fn warn(&self, line: &str) {
        self.said.borrow_mut().push(line.to_string());
    }
    fn inform(&self, line: &str) {
        self.said.borrow_mut().push(line.to_string());
    }
}
