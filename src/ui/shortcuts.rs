//! The window's own keys, read before anything is drawn so that no widget sees them: Ctrl+O
//! (Cmd+O) opens a trace, Ctrl+F (Cmd+F) and `/` put the keyboard in the search box. The
//! timeline's keys (zoom, pan, back, zoom to the selection) are in `timeline::input`; the list
//! shown by `?` is [`super::app::HELP_KEYS`].

use egui::{Context, Event, Key, KeyboardShortcut, Modifiers};

/// Ctrl+O (Cmd+O on macOS): File → Open….
pub const OPEN_SHORTCUT: KeyboardShortcut = KeyboardShortcut::new(Modifiers::COMMAND, Key::O);
/// Ctrl+F (Cmd+F on macOS): focus the search box.
pub const SEARCH_SHORTCUT: KeyboardShortcut = KeyboardShortcut::new(Modifiers::COMMAND, Key::F);

/// What this frame's keys ask for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WindowKeys {
    pub open: bool,
    pub focus_search: bool,
}

/// Takes this frame's window keys out of the input. `/` counts only while no text field has
/// the keyboard (it is typed in a regular expression); it is taken out so that the search box,
/// focused by it, does not receive it as text. Keys [`claim`]ed in this frame or the one before
/// are taken out too: egui may run a frame's input twice (a discarded pass), and a key's text
/// may come a frame after the key (the `/` typed arrives once the box has the keyboard).
pub fn take(ctx: &Context) -> WindowKeys {
    let claimed = claimed_this_frame(ctx);
    let typing = ctx.egui_wants_keyboard_input() && !claimed.contains(&Key::Slash);
    let (keys, slashed) = ctx.input_mut(|i| {
        i.events.retain(|e| match e {
            Event::Key { key, .. } => !claimed.contains(key),
            Event::Text(t) => !(t == "/" && claimed.contains(&Key::Slash)),
            _ => true,
        });
        let open = i.consume_shortcut(&OPEN_SHORTCUT);
        let mut focus_search = i.consume_shortcut(&SEARCH_SHORTCUT);
        let mut slashed = false;
        if !typing {
            // Shift+/ is `?` (help) on a US keyboard: only the unshifted key, or the text `/`.
            // Only its press: `?`'s release comes without Shift when Shift is let go first, and
            // taken for `/` it put the next key (a `w` to zoom) in the search box.
            let slash = |e: &Event| match e {
                Event::Text(t) => t == "/",
                Event::Key {
                    key: Key::Slash,
                    pressed: true,
                    modifiers,
                    ..
                } => !modifiers.shift,
                _ => false,
            };
            if i.events.iter().any(slash) {
                focus_search = true;
                slashed = true;
                i.events.retain(|e| !slash(e));
            }
        }
        (WindowKeys { open, focus_search }, slashed)
    });
    if slashed {
        claim(ctx, Key::Slash);
    }
    keys
}

/// Takes `key`'s events out of this frame's input and the next one's (its text, its release).
pub fn claim(ctx: &Context, key: Key) {
    let frame = ctx.cumulative_frame_nr();
    ctx.data_mut(|d| {
        let claimed = d.get_temp_mut_or_default::<(u64, Vec<Key>)>(claimed_id());
        if claimed.0 != frame {
            claimed.1.clear();
            claimed.0 = frame;
        }
        if !claimed.1.contains(&key) {
            claimed.1.push(key);
        }
    });
    ctx.input_mut(|i| {
        i.events
            .retain(|e| !matches!(e, Event::Key { key: k, .. } if *k == key));
    });
}

fn claimed_this_frame(ctx: &Context) -> Vec<Key> {
    let frame = ctx.cumulative_frame_nr();
    ctx.data(|d| d.get_temp::<(u64, Vec<Key>)>(claimed_id()))
        .filter(|(f, _)| *f == frame || *f + 1 == frame)
        .map(|(_, keys)| keys)
        .unwrap_or_default()
}

fn claimed_id() -> egui::Id {
    egui::Id::unique("sightline_claimed_keys")
}
