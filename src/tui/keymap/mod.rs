//! The one key-binding table: every key and alias, every slash command, where it works and
//! what it does. Input dispatch looks keys and commands up here, and the `?` overlay is drawn
//! from the same rows, so a binding cannot exist without being listed.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

mod bindings;
mod slash;
pub use bindings::BINDINGS;
pub use slash::{SLASH_COMMANDS, Slash, SlashAction, slash, slash_label};

/// Where a binding works.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Whatever has focus (unless a layer consumes the key first).
    Anywhere,
    /// The message input has focus.
    Input,
    Transcript,
    Todos,
    Diffs,
    /// The `/resume` session picker is open.
    Picker,
    /// The approval prompt is open (its widget reads these keys itself).
    Approval,
    /// The `/rewind` picker is open.
    Rewind,
    /// The confirmation of `/undo`, `/redo` or `/rewind` is open (its widget reads the keys).
    Confirm,
    /// The revert confirmation is open (its widget reads these keys itself).
    Revert,
    /// The `/jobs` view is open.
    Jobs,
    /// The `/mode` or `/model` picker is open.
    Choice,
}

impl Scope {
    /// The heading the help overlay shows the scope's rows under.
    pub fn heading(self) -> &'static str {
        match self {
            Scope::Anywhere => "Anywhere",
            Scope::Input => "Message input",
            Scope::Transcript => "Transcript",
            Scope::Todos => "Todo pane",
            Scope::Diffs => "Diff pane",
            Scope::Picker => "Session picker (/resume)",
            Scope::Approval => "Approval prompt",
            Scope::Rewind => "Rewind picker (/rewind)",
            Scope::Confirm => "Undo / redo / rewind confirmation",
            Scope::Revert => "Revert confirmation",
            Scope::Jobs => "Background jobs (/jobs)",
            Scope::Choice => "Mode and model pickers (/mode, /model)",
        }
    }
}

/// What a key does. `Widget` keys are read by the composer or the approval prompt themselves;
/// they are in the table so that the help lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Interrupt,
    QuitTwice,
    FocusNext,
    FocusPrev,
    CycleMode,
    ToggleMouse,
    Copy,
    OpenEditor,
    PasteClipboard,
    PageUp,
    PageDown,
    PrevDiff,
    NextDiff,
    OpenHelp,
    LineDown,
    LineUp,
    SelectPrev,
    SelectNext,
    Top,
    Follow,
    ToggleReasoning,
    OpenSelectedEdit,
    ToggleDiffView,
    ToggleFullWidth,
    NextHunk,
    PrevHunk,
    RevertHunk,
    RevertChange,
    Close,
    Choose,
    KillJob,
    Widget,
    /// Hold the message for after the turn instead of the next step boundary.
    QueueAfterTurn,
    /// Bring back the draft Ctrl+C cleared.
    RestoreCleared,
    /// Send the failed message again.
    Retry,
    /// Leave `cairn replay`.
    QuitReplay,
    /// Select the queued entry before / after the selected one.
    QueuePrev,
    QueueNext,
}

/// A key with the modifiers that matter (Ctrl and Alt; Shift is part of the character).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key {
    pub code: KeyCode,
    pub mods: KeyModifiers,
}

const fn key(code: KeyCode) -> Key {
    Key {
        code,
        mods: KeyModifiers::NONE,
    }
}

const fn ch(c: char) -> Key {
    key(KeyCode::Char(c))
}

const fn ctrl(c: char) -> Key {
    Key {
        code: KeyCode::Char(c),
        mods: KeyModifiers::CONTROL,
    }
}

const fn with(code: KeyCode, mods: KeyModifiers) -> Key {
    Key { code, mods }
}

impl Key {
    fn matches(&self, event: &KeyEvent) -> bool {
        // Shift is part of the character (`G`), and terminals report Shift+Tab as BackTab with
        // or without Shift set, so only Ctrl and Alt tell keys apart.
        let relevant = KeyModifiers::CONTROL | KeyModifiers::ALT;
        event.code == self.code && (event.modifiers & relevant) == (self.mods & relevant)
    }

    /// How the help writes the key: `Ctrl+Y`, `PgUp`, `Shift+Tab`, `g`.
    pub fn label(&self) -> String {
        let name = match self.code {
            KeyCode::Char(' ') => "Space".to_string(),
            KeyCode::Char(c) if self.mods.contains(KeyModifiers::CONTROL) => {
                c.to_ascii_uppercase().to_string()
            }
            KeyCode::Char(c) => c.to_string(),
            KeyCode::Enter => "Enter".into(),
            KeyCode::Esc => "Esc".into(),
            KeyCode::Tab => "Tab".into(),
            KeyCode::BackTab => "Shift+Tab".into(),
            KeyCode::Backspace => "Backspace".into(),
            KeyCode::Delete => "Delete".into(),
            KeyCode::Up => "Up".into(),
            KeyCode::Down => "Down".into(),
            KeyCode::Left => "Left".into(),
            KeyCode::Right => "Right".into(),
            KeyCode::Home => "Home".into(),
            KeyCode::End => "End".into(),
            KeyCode::PageUp => "PgUp".into(),
            KeyCode::PageDown => "PgDn".into(),
            KeyCode::F(n) => format!("F{n}"),
            other => format!("{other:?}"),
        };
        let mut out = String::new();
        if self.mods.contains(KeyModifiers::CONTROL) {
            out.push_str("Ctrl+");
        }
        if self.mods.contains(KeyModifiers::ALT) {
            out.push_str("Alt+");
        }
        if self.mods.contains(KeyModifiers::SHIFT) {
            out.push_str("Shift+");
        }
        out.push_str(&name);
        out
    }
}

/// One row of the table.
#[derive(Debug)]
pub struct Binding {
    pub scope: Scope,
    pub keys: &'static [Key],
    pub action: Action,
    pub help: &'static str,
}

const fn bind(scope: Scope, keys: &'static [Key], action: Action, help: &'static str) -> Binding {
    Binding {
        scope,
        keys,
        action,
        help,
    }
}

/// The action bound to `event` in `scope`, if any.
pub fn action(scope: Scope, event: &KeyEvent) -> Option<Action> {
    BINDINGS
        .iter()
        .filter(|b| b.scope == scope)
        .find(|b| b.keys.iter().any(|k| k.matches(event)))
        .map(|b| b.action)
}

/// A binding's keys as the help writes them: `Home  g`.
pub fn keys_label(keys: &[Key]) -> String {
    keys.iter().map(Key::label).collect::<Vec<_>>().join("  ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_user_command_can_take_a_built_in_name() {
        for slash in SLASH_COMMANDS {
            for name in slash.names {
                let bare = name.trim_start_matches('/');
                assert!(
                    crate::skills::commands::BUILT_IN.contains(&bare),
                    "{name} is missing from skills::commands::BUILT_IN"
                );
            }
        }
    }

    #[test]
    fn keys_are_found_in_their_scope_only_and_shift_does_not_matter_for_characters() {
        let g = KeyEvent::new(KeyCode::Char('G'), KeyModifiers::SHIFT);
        assert_eq!(action(Scope::Transcript, &g), Some(Action::Follow));
        assert_eq!(action(Scope::Todos, &g), None);
        let ctrl_y = KeyEvent::new(KeyCode::Char('y'), KeyModifiers::CONTROL);
        assert_eq!(action(Scope::Anywhere, &ctrl_y), Some(Action::Copy));
        let y = KeyEvent::new(KeyCode::Char('y'), KeyModifiers::NONE);
        assert_eq!(action(Scope::Anywhere, &y), None);
        let back = KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT);
        assert_eq!(action(Scope::Anywhere, &back), Some(Action::CycleMode));
        let ctrl_o = KeyEvent::new(KeyCode::Char('o'), KeyModifiers::CONTROL);
        assert_eq!(action(Scope::Anywhere, &ctrl_o), Some(Action::FocusPrev));
    }

    #[test]
    fn no_key_is_bound_twice_in_one_scope() {
        for (i, a) in BINDINGS.iter().enumerate() {
            for b in &BINDINGS[i + 1..] {
                if a.scope != b.scope {
                    continue;
                }
                for k in a.keys {
                    assert!(
                        !b.keys.contains(k),
                        "{} bound twice in {:?}",
                        k.label(),
                        a.scope
                    );
                }
            }
        }
    }

    #[test]
    fn every_slash_alias_is_found() {
        assert_eq!(slash("/exit"), Some(SlashAction::Quit));
        assert_eq!(slash("/diffs"), Some(SlashAction::Diffs));
        assert_eq!(slash("/nope"), None);
    }
}
