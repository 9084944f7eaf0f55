//! The interactive picker (`park pick`), shown in the tmux popup. Filled in by issue 3.

use crate::ctx::Ctx;

pub fn run(_ctx: &Ctx, _filter: Option<&str>, _pane: Option<&str>) -> i32 {
    eprintln!("park pick: not built yet");
    1
}
