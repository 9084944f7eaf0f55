//! park's zellij plugin: a picker pane (`mode "picker"`) and a status strip (`mode "strip"`).
//! This file only translates zellij events and pipes into calls on [`state::Plugin`] and carries
//! out the commands it returns; the park CLI makes every decision.

mod render;
mod state;

use park_protocol::picker::Key;
use state::{Cmd, Plugin};
use std::collections::BTreeMap;
use zellij_tile::prelude::*;

#[derive(Default)]
struct Park {
    p: Option<Plugin>,
}

register_plugin!(Park);

fn key_of(k: &KeyWithModifier) -> Option<Key> {
    if k.key_modifiers.contains(&KeyModifier::Ctrl) {
        return match k.bare_key {
            BareKey::Char('c') => Some(Key::CtrlC),
            BareKey::Char('n') => Some(Key::Down),
            BareKey::Char('p') => Some(Key::Up),
            _ => None,
        };
    }
    Some(match k.bare_key {
        BareKey::Char(c) => Key::Char(c),
        BareKey::Enter => Key::Enter,
        BareKey::Esc => Key::Esc,
        BareKey::Backspace => Key::Backspace,
        BareKey::Up => Key::Up,
        BareKey::Down => Key::Down,
        BareKey::PageUp => Key::PageUp,
        BareKey::PageDown => Key::PageDown,
        BareKey::Home => Key::Home,
        BareKey::End => Key::End,
        _ => return None,
    })
}

fn carry_out(cmds: Vec<Cmd>) {
    for c in cmds {
        match c {
            Cmd::Run { args, ctx } => {
                let a: Vec<&str> = args.iter().map(String::as_str).collect();
                run_command(&a, ctx);
            }
            Cmd::FocusTerminal(id) => focus_terminal_pane(id, true, false),
            Cmd::Close => close_self(),
            Cmd::Timer(s) => set_timeout(s),
            Cmd::Selectable(s) => set_selectable(s),
        }
    }
}

/// Each tab's focused tiled terminal pane (the picker floats above it when opened).
fn focused_terminals(m: &PaneManifest) -> BTreeMap<usize, u32> {
    m.panes
        .iter()
        .filter_map(|(tab, panes)| {
            panes
                .iter()
                .find(|p| !p.is_plugin && p.is_focused && !p.is_floating)
                .map(|p| (*tab, p.id))
        })
        .collect()
}

/// The active tab's focused terminal, from the last tab and pane updates: zellij sends the two
/// separately and in either order, so it is worked out again on each.
fn active_focus() -> Option<u32> {
    let tab = ACTIVE_TAB.with(|t| t.get())?;
    FOCI.with(|f| f.borrow().get(&tab).copied())
}

/// The tab (position) holding this plugin, and that tab's tiled terminal panes.
fn own_tab(m: &PaneManifest, me: u32) -> Option<(usize, Vec<u32>)> {
    m.panes
        .iter()
        .find(|(_, ps)| ps.iter().any(|p| p.is_plugin && p.id == me))
        .map(|(tab, ps)| {
            (
                *tab,
                ps.iter().filter(|p| !p.is_plugin).map(|p| p.id).collect(),
            )
        })
}

impl ZellijPlugin for Park {
    fn load(&mut self, configuration: BTreeMap<String, String>) {
        self.p = Some(Plugin::new(&configuration));
        request_permission(&[
            PermissionType::ReadApplicationState,
            PermissionType::ChangeApplicationState,
            PermissionType::RunCommands,
            PermissionType::ReadCliPipes,
        ]);
        subscribe(&[
            EventType::PermissionRequestResult,
            EventType::ModeUpdate,
            EventType::TabUpdate,
            EventType::PaneUpdate,
            EventType::Key,
            EventType::Timer,
            EventType::RunCommandResult,
        ]);
    }

    fn update(&mut self, event: Event) -> bool {
        let Some(p) = self.p.as_mut() else {
            return false;
        };
        let cmds = match event {
            Event::PermissionRequestResult(s) => p.permissions(s == PermissionStatus::Granted),
            Event::ModeUpdate(m) => p.session_name(m.session_name),
            Event::TabUpdate(tabs) => {
                ACTIVE_TAB.with(|t| t.set(tabs.iter().find(|t| t.active).map(|t| t.position)));
                p.focus(active_focus());
                vec![]
            }
            Event::PaneUpdate(m) => {
                FOCI.with(|f| *f.borrow_mut() = focused_terminals(&m));
                p.focus(active_focus());
                p.own_tab(own_tab(&m, get_plugin_ids().plugin_id));
                vec![]
            }
            Event::Key(k) => match key_of(&k) {
                Some(k) => p.key(k),
                None => return false,
            },
            Event::Timer(s) => p.tick(s),
            Event::RunCommandResult(_, out, err, ctx) => p.command_done(&ctx, &out, &err),
            _ => return false,
        };
        carry_out(cmds);
        true
    }

    fn pipe(&mut self, msg: PipeMessage) -> bool {
        let Some(p) = self.p.as_mut() else {
            return false;
        };
        if msg.name == "park:park-focused" {
            // Read live: every tab's strip gets this message, and a strip in a background tab
            // has had no pane update since its tab was left.
            p.live_focus = get_focused_pane_info().ok().map(|(tab, pane)| {
                (
                    tab,
                    match pane {
                        PaneId::Terminal(id) => Some(id),
                        PaneId::Plugin(_) => None,
                    },
                )
            });
        }
        let (cmds, redraw) = p.pipe(&msg.name, msg.payload.as_deref());
        carry_out(cmds);
        redraw
    }

    fn render(&mut self, rows: usize, cols: usize) {
        let Some(p) = self.p.as_ref() else {
            return;
        };
        let lines = render::render(p, rows, cols);
        let n = lines.len();
        for (i, l) in lines.into_iter().enumerate() {
            if i + 1 < n {
                println!("{l}");
            } else {
                print!("{l}");
            }
        }
    }
}

thread_local! {
    static ACTIVE_TAB: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
    static FOCI: std::cell::RefCell<BTreeMap<usize, u32>> = const { std::cell::RefCell::new(BTreeMap::new()) };
}
