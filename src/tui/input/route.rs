//! Where a key goes under the stand-alone rule (`tui::stand_alone`): to the input as text,
//! on to the prompt or pane it would act on, or held back until it is clear whether it stands
//! alone. Every modal and every printable single-key binding goes through here: approval,
//! trust, the revert preview and its confirmation, `/jobs`, the pickers, the diff pane's and
//! the transcript's keys, `?`, `[` and `]`.

use std::hash::{DefaultHasher, Hash, Hasher};

use crossterm::event::{KeyCode, KeyEvent};

use crate::tui::app::{App, Focus};
use crate::tui::keymap::{self, Action, Scope};
use crate::tui::modals::layers::Layer;
use crate::tui::stand_alone::{Fate, KeyKind, KeyVerdict, is_printable};

/// What becomes of a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum KeyRoute {
    /// To the layers, the global keys and the focused pane, as always.
    Deliver,
    /// Text: to the input.
    Text,
    /// Held to see whether it stands alone (the rule has it).
    Wait,
    /// Nowhere: Esc while a prompt holds its keys (it would deny, or interrupt the turn).
    Drop,
}

impl App {
    /// Where `key` goes now.
    pub(super) fn route(&mut self, key: &KeyEvent) -> KeyRoute {
        let now = self.now;
        let printable = is_printable(key);
        if self.layers.is_empty() {
            if !printable {
                return KeyRoute::Deliver;
            }
            if !self.pane_acts_on(key) {
                return KeyRoute::Text;
            }
            return self.judge(key);
        }
        // A field of the prompt's own (a deny message, the model picker's name) is typed into:
        // its keys are text for it, not answers.
        if self
            .layers
            .top()
            .is_some_and(|top| self.layer_takes_text(top))
        {
            return KeyRoute::Deliver;
        }
        if self.keys.holding(now) {
            // The prompt has just appeared, or the user is typing: the keys go on into the
            // input, where they were going. Scrolling still reaches the prompt.
            return match key.code {
                KeyCode::Esc => KeyRoute::Drop,
                KeyCode::Char(_) if printable => KeyRoute::Text,
                KeyCode::Enter
                | KeyCode::Backspace
                | KeyCode::Delete
                | KeyCode::Left
                | KeyCode::Right
                | KeyCode::Home
                | KeyCode::End => KeyRoute::Text,
                _ => KeyRoute::Deliver,
            };
        }
        if !printable {
            return KeyRoute::Deliver;
        }
        let takes = match key.code {
            KeyCode::Char(c) => self
                .layers
                .top()
                .is_some_and(|top| self.layer_takes_char(top, c)),
            _ => false,
        };
        if takes {
            self.judge(key)
        } else {
            KeyRoute::Text
        }
    }

    fn judge(&mut self, key: &KeyEvent) -> KeyRoute {
        let kind = if self.moves(key) {
            KeyKind::Moves
        } else {
            KeyKind::Answers
        };
        match self.keys.judge(*key, self.now, kind) {
            KeyVerdict::Text => KeyRoute::Text,
            KeyVerdict::Wait => KeyRoute::Wait,
            KeyVerdict::Act => KeyRoute::Deliver,
        }
    }

    /// Whether the key only moves (scrolls, selects) where it would act: such a key may be
    /// held down (`stand_alone::REPEAT`). Answers, kills, opening and closing never repeat.
    fn moves(&self, key: &KeyEvent) -> bool {
        let moving = |action: Option<Action>| {
            matches!(
                action,
                Some(
                    Action::LineDown
                        | Action::LineUp
                        | Action::SelectPrev
                        | Action::SelectNext
                        | Action::NextHunk
                        | Action::PrevHunk
                        | Action::NextDiff
                        | Action::PrevDiff
                )
            )
        };
        let scrolls = matches!(key.code, KeyCode::Char('j' | 'k'));
        match self.layers.top() {
            None => {
                let scope = match self.focus {
                    Focus::Transcript => Scope::Transcript,
                    Focus::Todos => Scope::Todos,
                    Focus::Diffs => Scope::Diffs,
                    Focus::Input => Scope::Anywhere,
                };
                moving(keymap::action(scope, key)) || moving(keymap::action(Scope::Anywhere, key))
            }
            Some(Layer::Picker(_)) => moving(keymap::action(Scope::Picker, key)),
            Some(Layer::Rewind(_)) => moving(keymap::action(Scope::Rewind, key)),
            Some(Layer::Help { .. } | Layer::Revert(_)) => scrolls,
            Some(_) => false,
        }
    }

    /// A key typed as text: into the input (which takes the focus), in order. A replay has no
    /// input: the key is dropped. The help overlay closes: the input is where the keys go.
    pub(crate) fn type_key(&mut self, key: KeyEvent) {
        if is_printable(&key) {
            self.keys.typed(self.now);
        }
        if self.read_only {
            self.pass_to_parent(crossterm::event::Event::Key(key));
            return;
        }
        if matches!(self.layers.top(), Some(Layer::Help { .. })) {
            let top = self.layers.len() - 1;
            self.layers.remove(top);
        }
        if self.focus != Focus::Input {
            self.set_focus(Focus::Input);
        }
        if !self.queue_key(key) {
            self.handle_input_key(key);
        }
    }

    /// Another input arrived: a key waiting to see whether it stands alone is decided now.
    pub(super) fn settle_waiting_key(&mut self, next: Option<&KeyEvent>) {
        let waiting = self.keys.interrupt(self.now, next);
        self.settle(waiting);
    }

    /// The key waiting to see whether it stands alone acts once nothing followed it within
    /// the window (the frame loop calls this when it is due); true when one was settled.
    pub(crate) fn release_waiting_key(&mut self) -> bool {
        let waiting = self.keys.release(self.now);
        let settled = waiting.is_some();
        self.settle(waiting);
        // A subagent's transcript open over the screen holds its own keys.
        let child = self.open_child_mut().is_some_and(App::release_waiting_key);
        if child {
            self.settle_child();
        }
        settled || child
    }

    fn settle(&mut self, waiting: Option<(KeyEvent, Fate)>) {
        match waiting {
            Some((key, Fate::Act)) => self.deliver(key),
            Some((key, Fate::Text)) => self.type_key(key),
            None => return,
        }
        self.see_prompt();
    }

    /// Tells the rule which prompt is on top now (a new one, or a new step of one, starts its
    /// dead time), and the approval prompt whether to say that the keys go to the input.
    pub(crate) fn see_prompt(&mut self) {
        let prompt = self.layers.top().map(|top| self.prompt_identity(top));
        self.keys.prompt_seen(prompt, self.now);
        let typing = self.keys.typing(self.now)
            && matches!(self.layers.top(), Some(Layer::Approval))
            && !self.approval.typing_message();
        self.approval.show_typing(typing);
    }

    /// Which prompt, at which step: the same value while the same question is on screen.
    fn prompt_identity(&self, top: &Layer) -> u64 {
        let mut hash = DefaultHasher::new();
        std::mem::discriminant(top).hash(&mut hash);
        match top {
            Layer::Approval => self.approval.step().hash(&mut hash),
            Layer::Trust(prompt) => prompt.confirming().hash(&mut hash),
            Layer::Revert(modal) => modal.step().hash(&mut hash),
            Layer::Rewind(picker) => picker.step().hash(&mut hash),
            Layer::Jobs(view) => view.step().hash(&mut hash),
            Layer::Help { .. } | Layer::Picker(_) | Layer::Confirm(_) | Layer::Choice(_) => {}
        }
        hash.finish()
    }

    /// The layer has a text field with the keys: a deny message, the model picker's name.
    fn layer_takes_text(&self, top: &Layer) -> bool {
        match top {
            Layer::Approval => self.approval.typing_message(),
            Layer::Choice(picker) => picker.is_model_picker(),
            _ => false,
        }
    }

    /// Whether the character `c` is one of the top layer's single keys now.
    fn layer_takes_char(&self, top: &Layer, c: char) -> bool {
        match top {
            // Any key closes the help (j and k scroll it).
            Layer::Help { .. } => true,
            Layer::Picker(picker) => picker.takes_char(c),
            Layer::Approval => self.approval.takes_char(c),
            Layer::Trust(prompt) => prompt.takes_char(c),
            Layer::Rewind(picker) => picker.takes_char(c),
            Layer::Confirm(confirm) => confirm.takes_char(c),
            Layer::Revert(modal) => modal.takes_char(c),
            Layer::Jobs(view) => view.takes_char(c),
            Layer::Choice(_) => false,
        }
    }

    /// Whether a printable key acts with no layer open: `?`, `[`, `]` on an empty input or a
    /// pane, and the focused pane's own keys (the rest is text for the input).
    fn pane_acts_on(&self, key: &KeyEvent) -> bool {
        let typing = self.focus == Focus::Input && !self.composer.is_empty();
        let global = matches!(
            keymap::action(Scope::Anywhere, key),
            Some(Action::PrevDiff | Action::NextDiff | Action::OpenHelp)
        );
        if global && !typing {
            return true;
        }
        let scope = match self.focus {
            Focus::Input => return false,
            Focus::Transcript => Scope::Transcript,
            Focus::Todos => Scope::Todos,
            Focus::Diffs => Scope::Diffs,
        };
        keymap::action(scope, key).is_some()
    }
}

#[cfg(test)]
impl App {
    /// A key pressed the way a person answers a prompt: after a pause (past any dead time
    /// and typing), with nothing after it; what it does is done when this returns.
    pub(crate) fn press_alone(&mut self, key: KeyEvent) {
        use crate::tui::stand_alone::{BEFORE, DEAD_TIME};
        let pause = DEAD_TIME.max(BEFORE) + std::time::Duration::from_millis(1);
        self.set_now(self.now + pause);
        self.release_waiting_key();
        self.handle_input(&crossterm::event::Event::Key(key));
        self.set_now(self.now + self.keys.after());
        self.release_waiting_key();
    }
}
