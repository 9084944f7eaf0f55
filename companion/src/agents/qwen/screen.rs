//! Qwen Code's screen (a plain capture): busy, waiting on a dialog, a draft in the composer.
//! Placeholder until the real captures land: reads nothing, so every state is "cannot tell".

use crate::agents::screen::ScreenReading;

pub fn read(_plain: &str) -> ScreenReading {
    ScreenReading::default()
}
