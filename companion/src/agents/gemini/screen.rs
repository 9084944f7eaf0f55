//! Gemini CLI's screen (to be written from real 0.61.0 captures).

use crate::agents::screen::ScreenReading;

/// Reads a plain capture. Until the reader exists, nothing is recognised: "cannot tell".
pub fn read(_capture: &str) -> ScreenReading {
    ScreenReading::default()
}

/// What the pane title says: `Some(true)` busy or waiting, `Some(false)` ready, `None` unknown.
pub fn title_busy(_title: &str) -> Option<bool> {
    None
}
