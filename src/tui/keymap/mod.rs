//! The one key-binding table: every key and alias, every slash command, where it works and
//! what it does. Input dispatch looks keys and commands up here, and the `?` overlay is drawn
//! from the same rows, so a binding cannot exist without being listed.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

mod slash;
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

use Action as A;
use KeyCode as K;
use Scope as S;

/// Every key binding. Order is the order of the help overlay.
pub const BINDINGS: &[Binding] = &[
    bind(
        S::Anywhere,
        &[ch('?')],
        A::OpenHelp,
        "this help (any key closes it; not while typing)",
    ),
    bind(
        S::Anywhere,
        &[key(K::Esc)],
        A::Interrupt,
        "interrupt the answer and commands; else unselect, focus the input",
    ),
    bind(
        S::Anywhere,
        &[ctrl('c')],
        A::QuitTwice,
        "interrupt (the input keeps its text); idle: clear the input; twice quits",
    ),
    bind(
        S::Anywhere,
        &[key(K::Tab)],
        A::FocusNext,
        "focus: input → transcript → todos → diffs",
    ),
    bind(
        S::Anywhere,
        &[ctrl('o')],
        A::FocusPrev,
        "focus the other way",
    ),
    bind(
        S::Anywhere,
        &[key(K::BackTab)],
        A::CycleMode,
        "mode: ask → auto-edit → auto → plan (never: /mode never)",
    ),
    bind(
        S::Anywhere,
        &[key(K::PageUp)],
        A::PageUp,
        "scroll the focused pane a page up (mouse wheel too)",
    ),
    bind(
        S::Anywhere,
        &[key(K::PageDown)],
        A::PageDown,
        "scroll the focused pane a page down",
    ),
    bind(
        S::Anywhere,
        &[ch('[')],
        A::PrevDiff,
        "previous edit in the diff pane (not while typing)",
    ),
    bind(
        S::Anywhere,
        &[ch(']')],
        A::NextDiff,
        "next edit in the diff pane (not while typing)",
    ),
    bind(
        S::Anywhere,
        &[ctrl('y')],
        A::Copy,
        "copy the selected message, card or diff (OSC 52)",
    ),
    bind(
        S::Anywhere,
        &[key(K::F(2)), ctrl('t')],
        A::ToggleMouse,
        "release / capture the mouse (terminal selection)",
    ),
    bind(
        S::Anywhere,
        &[ctrl('g')],
        A::OpenEditor,
        "edit the message in $EDITOR",
    ),
    bind(
        S::Input,
        &[key(K::Enter)],
        A::Widget,
        "send; while the agent works it joins at the next step",
    ),
    bind(
        S::Input,
        &[ctrl('q')],
        A::QueueAfterTurn,
        "queue for after the turn; empty input: send the next queued",
    ),
    bind(
        S::Input,
        &[
            with(K::Up, KeyModifiers::ALT),
            with(K::Down, KeyModifiers::ALT),
        ],
        A::QueuePrev,
        "select a queued message: Enter edits it, Delete withdraws it",
    ),
    bind(
        S::Input,
        &[ch('!')],
        A::Widget,
        "at the start: !cmd runs it as you (the model sees it), !!cmd hides it",
    ),
    bind(
        S::Input,
        &[
            with(K::Enter, KeyModifiers::ALT),
            with(K::Enter, KeyModifiers::SHIFT),
            ctrl('j'),
        ],
        A::Widget,
        "new line in the message",
    ),
    bind(
        S::Input,
        &[key(K::Up), key(K::Down)],
        A::Widget,
        "earlier / later messages (at the first / last line)",
    ),
    bind(
        S::Input,
        &[key(K::Left), key(K::Right)],
        A::Widget,
        "move the cursor",
    ),
    bind(
        S::Input,
        &[ctrl('a'), ctrl('e')],
        A::Widget,
        "start / end of the line",
    ),
    bind(
        S::Input,
        &[ctrl('u'), ctrl('w')],
        A::Widget,
        "delete to the line start / the word before",
    ),
    bind(
        S::Input,
        &[ctrl('r')],
        A::Retry,
        "send the message whose request failed again (/retry)",
    ),
    bind(
        S::Input,
        &[ctrl('z')],
        A::RestoreCleared,
        "bring back the input Ctrl+C cleared",
    ),
    bind(
        S::Input,
        &[ctrl('v')],
        A::PasteClipboard,
        "attach the clipboard's image (text on it is pasted as text)",
    ),
    bind(
        S::Input,
        &[key(K::Backspace)],
        A::Widget,
        "delete; at the start of the message, remove the last image chip",
    ),
    bind(
        S::Input,
        &[key(K::Home)],
        A::Top,
        "empty input: top of the transcript (else line start)",
    ),
    bind(
        S::Input,
        &[key(K::End)],
        A::Follow,
        "empty input: follow the end of the transcript (else line end)",
    ),
    bind(S::Transcript, &[ch('j')], A::LineDown, "scroll down a line"),
    bind(S::Transcript, &[ch('k')], A::LineUp, "scroll up a line"),
    bind(
        S::Transcript,
        &[key(K::Up)],
        A::SelectPrev,
        "select the previous message or card",
    ),
    bind(
        S::Transcript,
        &[key(K::Down)],
        A::SelectNext,
        "select the next message or card",
    ),
    bind(
        S::Transcript,
        &[key(K::Home), ch('g')],
        A::Top,
        "top of the transcript",
    ),
    bind(
        S::Transcript,
        &[key(K::End), ch('G')],
        A::Follow,
        "follow the end",
    ),
    bind(
        S::Transcript,
        &[ch('r')],
        A::ToggleReasoning,
        "show / hide reasoning",
    ),
    bind(
        S::Transcript,
        &[ch('q')],
        A::QuitReplay,
        "cairn replay: quit (live, q is text)",
    ),
    bind(
        S::Transcript,
        &[key(K::Enter)],
        A::OpenSelectedEdit,
        "open the selected edit in the diff pane (other keys type)",
    ),
    bind(
        S::Todos,
        &[ch('j'), key(K::Down)],
        A::LineDown,
        "scroll down",
    ),
    bind(S::Todos, &[ch('k'), key(K::Up)], A::LineUp, "scroll up"),
    bind(
        S::Diffs,
        &[ch('j'), key(K::Down)],
        A::LineDown,
        "scroll down",
    ),
    bind(S::Diffs, &[ch('k'), key(K::Up)], A::LineUp, "scroll up"),
    bind(S::Diffs, &[ch('n')], A::NextDiff, "next edit"),
    bind(S::Diffs, &[ch('p')], A::PrevDiff, "previous edit"),
    bind(
        S::Diffs,
        &[ch('v'), ch('s')],
        A::ToggleDiffView,
        "unified / side by side (side by side only where no line is cut)",
    ),
    bind(
        S::Diffs,
        &[ch('f'), ch('z')],
        A::ToggleFullWidth,
        "full-width diff, transcript hidden (again or Esc goes back)",
    ),
    bind(
        S::Diffs,
        &[ch('}'), ch('J')],
        A::NextHunk,
        "select the next hunk of the shown change",
    ),
    bind(
        S::Diffs,
        &[ch('{'), ch('K')],
        A::PrevHunk,
        "select the previous hunk",
    ),
    bind(
        S::Diffs,
        &[ch('r')],
        A::RevertHunk,
        "revert the selected hunk (none selected: the file), after a preview",
    ),
    bind(
        S::Diffs,
        &[ch('R')],
        A::RevertChange,
        "revert the whole change (all files of a command), after a preview",
    ),
    bind(
        S::Picker,
        &[key(K::Up), ch('k')],
        A::SelectPrev,
        "previous session",
    ),
    bind(
        S::Picker,
        &[key(K::Down), ch('j')],
        A::SelectNext,
        "next session",
    ),
    bind(
        S::Picker,
        &[key(K::Enter)],
        A::Choose,
        "resume the chosen session",
    ),
    bind(S::Picker, &[key(K::Esc), ch('q')], A::Close, "close"),
    bind(S::Choice, &[key(K::Up)], A::SelectPrev, "previous choice"),
    bind(S::Choice, &[key(K::Down)], A::SelectNext, "next choice"),
    bind(
        S::Choice,
        &[key(K::Enter)],
        A::Choose,
        "switch to the chosen mode or model (● marks the current one)",
    ),
    bind(S::Choice, &[key(K::Esc)], A::Close, "close, change nothing"),
    bind(
        S::Choice,
        &[key(K::Backspace)],
        A::Widget,
        "model picker: typing filters the list; a name not listed is a choice too",
    ),
    bind(
        S::Rewind,
        &[key(K::Up), ch('k')],
        A::SelectPrev,
        "newer message",
    ),
    bind(
        S::Rewind,
        &[key(K::Down), ch('j')],
        A::SelectNext,
        "older message",
    ),
    bind(
        S::Rewind,
        &[key(K::Enter)],
        A::Choose,
        "rewind to before it: then b both, c conversation, f files",
    ),
    bind(S::Rewind, &[key(K::Esc), ch('q')], A::Close, "close"),
    bind(
        S::Confirm,
        &[ch('y'), key(K::Enter)],
        A::Widget,
        "apply: restore the files shown",
    ),
    bind(S::Confirm, &[ch('n'), key(K::Esc)], A::Widget, "cancel"),
    bind(
        S::Confirm,
        &[key(K::Up), key(K::Down), key(K::PageUp), key(K::PageDown)],
        A::Widget,
        "scroll the files and their diffs",
    ),
    bind(S::Approval, &[ch('y')], A::Widget, "approve once"),
    bind(
        S::Approval,
        &[ch('a')],
        A::Widget,
        "allow the shown prefix for the session (not dangerous ones); y confirms",
    ),
    bind(
        S::Approval,
        &[ch('p')],
        A::Widget,
        "allow it in the project (a project rule; not dangerous ones); y confirms",
    ),
    bind(
        S::Approval,
        &[ch('u')],
        A::Widget,
        "run it once outside the sandbox (sandboxed commands)",
    ),
    bind(S::Approval, &[ch('n')], A::Widget, "deny"),
    bind(
        S::Approval,
        &[ch('m')],
        A::Widget,
        "deny with a message to the model (Enter sends, Esc goes back)",
    ),
    bind(
        S::Approval,
        &[key(K::Esc)],
        A::Widget,
        "close the prompt as a denial (the turn goes on)",
    ),
    bind(
        S::Approval,
        &[key(K::PageUp), key(K::PageDown)],
        A::Widget,
        "scroll the transcript behind the prompt",
    ),
    bind(
        S::Revert,
        &[ch('y'), key(K::Enter)],
        A::Widget,
        "apply the revert shown; y confirms (a conflict has only close)",
    ),
    bind(
        S::Revert,
        &[ch('n'), key(K::Esc)],
        A::Widget,
        "close, change nothing",
    ),
    bind(
        S::Revert,
        &[ch('j'), ch('k'), key(K::PageUp), key(K::PageDown)],
        A::Widget,
        "scroll the preview",
    ),
    bind(S::Jobs, &[key(K::Up)], A::SelectPrev, "previous job"),
    bind(S::Jobs, &[key(K::Down)], A::SelectNext, "next job"),
    bind(
        S::Jobs,
        &[key(K::Enter)],
        A::Choose,
        "show the job's output (its end, kept up to date)",
    ),
    bind(
        S::Jobs,
        &[ch('k')],
        A::KillJob,
        "kill the job and what it started (y confirms; the model is told)",
    ),
    bind(
        S::Jobs,
        &[key(K::Esc), ch('q')],
        A::Close,
        "back to the list; close",
    ),
];

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
