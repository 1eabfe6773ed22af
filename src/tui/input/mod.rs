//! Keys, mouse and paste → state changes and commands. A key first meets the stand-alone rule
//! (`route.rs`): typing goes to the input, a single-key action only acts when it stands
//! alone. What acts goes down the layer stack (help, pickers, the approval prompt; top first,
//! each may let it fall through), then to the global keys, then to the focused pane. Keys mean
//! what `keymap::BINDINGS` says; the pane keys are in `panes.rs`, the global ones in
//! `global.rs`, the input's and the commands' in `commands.rs`.

use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use crate::bus::UserCommand;
use crate::tui::app::{App, Focus};
use crate::tui::modals::choice::Pick;
use crate::tui::modals::help;
use crate::tui::modals::layers::Layer;
use crate::tui::modals::modal::{Handled, LayerOutcome};
use crate::tui::modals::trust::TrustAnswer;
use crate::tui::panes::transcript::entry::NoticeLevel;

mod commands;
mod global;
mod panes;
mod route;

use self::route::KeyRoute;

impl App {
    /// Handles one terminal input event.
    pub fn handle_input(&mut self, event: &Event) {
        if self.child_input(event) {
            return;
        }
        match event {
            Event::Key(key) if key.kind != KeyEventKind::Release => self.handle_key(*key),
            Event::Paste(text) => {
                // A paste is text: a key waiting is text before it, a key right after it too.
                self.settle_waiting_key(None);
                self.keys.typed(self.now);
                self.handle_paste(text);
            }
            Event::Mouse(mouse) => self.handle_mouse(mouse),
            _ => {}
        }
        self.see_prompt();
    }

    /// Text typed into `$EDITOR` (Ctrl+G) replaces the message being written.
    pub fn editor_returned(&mut self, text: &str) {
        self.composer.set_text(text.trim_end_matches('\n'));
        self.focus = Focus::Input;
    }

    /// The message given on the command line, sent as if typed.
    pub fn submit_initial(&mut self, text: &str) {
        if !self.read_only && !text.trim().is_empty() {
            self.send_message(text.to_string());
        }
    }

    fn handle_key(&mut self, key: KeyEvent) {
        // A key waiting to see whether it stands alone is decided by this one's arrival.
        self.settle_waiting_key(Some(&key));
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && key.code == KeyCode::Char('c') {
            self.ctrl_c();
            return;
        }
        self.quit.disarm();
        match self.route(&key) {
            KeyRoute::Deliver => self.deliver(key),
            KeyRoute::Text => self.type_key(key),
            KeyRoute::Wait | KeyRoute::Drop => {}
        }
    }

    /// Offers a key to the layers (top first, each may let it fall through), then the global
    /// keys, then the focused pane. Which keys get here is the stand-alone rule's (`route`).
    pub(super) fn deliver(&mut self, key: KeyEvent) {
        for index in (0..self.layers.len()).rev() {
            if self.layer_key(index, key) == Handled::Consumed {
                return;
            }
        }
        if self.layers.is_empty()
            && self.focus == Focus::Input
            && key.modifiers.is_empty()
            && self.palette_key(key)
        {
            return;
        }
        // What falls through an open modal reaches the global keys, never the panes: nothing
        // is typed into the hidden input.
        if !self.layers.is_empty() {
            self.handle_global_key(key);
            return;
        }
        // The queue's keys (Alt+↑/↓, and Enter, Delete, Esc on a selected entry) come first.
        if self.focus == Focus::Input && !self.read_only && self.queue_key(key) {
            return;
        }
        // The `@` finder's keys come before the global ones (Tab, Esc) and the input's
        // (Enter picks the file, it does not send) while it is open.
        if self.focus == Focus::Input
            && self.mention_finder.is_open()
            && matches!(
                key.code,
                KeyCode::Tab | KeyCode::Enter | KeyCode::Up | KeyCode::Down | KeyCode::Esc
            )
        {
            self.handle_input_key(key);
            return;
        }
        if self.handle_global_key(key) {
            return;
        }
        self.handle_pane_key(key);
    }

    fn handle_pane_key(&mut self, key: KeyEvent) {
        match self.focus {
            Focus::Input => self.handle_input_key(key),
            Focus::Transcript => self.handle_transcript_key(key),
            Focus::Todos => self.handle_todos_key(key),
            Focus::Diffs => self.handle_diffs_key(key),
        }
    }

    /// Offers a key to the layer at `index`.
    fn layer_key(&mut self, index: usize, key: KeyEvent) -> Handled {
        let Some(layer) = self.layers.get_mut(index) else {
            return Handled::FallThrough;
        };
        match layer {
            Layer::Help { scroll } => {
                let outcome = help::handle_key(&key, scroll);
                self.settle_layer(index, outcome);
            }
            Layer::Picker(picker) => {
                let outcome = picker.handle_key(key);
                self.settle_layer(index, outcome);
            }
            Layer::Rewind(picker) => {
                let outcome = picker.handle_key(key);
                self.settle_layer(index, outcome);
            }
            Layer::Confirm(confirm) => {
                let outcome = confirm.handle_key(key);
                self.settle_layer(index, outcome);
            }
            Layer::Choice(picker) => {
                let outcome = picker.handle_key(key);
                if let Some(pick) = self.settle_layer(index, outcome) {
                    self.picked(pick);
                }
            }
            Layer::Trust(prompt) => {
                let answer = prompt.handle_key(key);
                let ignored = prompt.ignored();
                match answer {
                    None => {}
                    // The agent applies them and answers `ProjectRulesTrusted`.
                    Some(TrustAnswer::Trust) => {
                        self.layers.remove(index);
                        self.commands.push(UserCommand::TrustProjectRules);
                    }
                    Some(TrustAnswer::Ignore) => {
                        self.layers.remove(index);
                        self.notice(&ignored, NoticeLevel::Info);
                    }
                }
            }
            Layer::Revert(modal) => {
                let outcome = modal.handle_key(key);
                self.settle_layer(index, outcome);
            }
            Layer::Jobs(view) => {
                let outcome = view.handle_key(key, &self.jobs);
                if let LayerOutcome::Send {
                    command: UserCommand::KillJob { job },
                    ..
                } = &outcome
                {
                    self.flash(format!("stopping {job}…"));
                }
                self.settle_layer(index, outcome);
            }
            Layer::Approval => {
                // Paging the transcript behind the prompt is allowed; nothing else passes, so
                // nothing is approved or typed by accident.
                if matches!(key.code, KeyCode::PageUp | KeyCode::PageDown)
                    && key.modifiers.is_empty()
                {
                    return Handled::FallThrough;
                }
                if key.code == KeyCode::Esc && !self.approval.in_step() {
                    let decisions = self.approval.dismiss();
                    let n = decisions.len();
                    for (call, decision) in decisions {
                        self.commands.push(UserCommand::Decide { call, decision });
                    }
                    let calls = if n == 1 { "call" } else { "calls" };
                    self.flash(format!("denied {n} {calls} (Esc); the model is told"));
                } else if let Some((call, decision)) = self.approval.handle_key(key) {
                    self.commands.push(UserCommand::Decide { call, decision });
                }
                self.layers.sync_approval(self.approval.is_open());
            }
        }
        Handled::Consumed
    }

    /// Does what the layer at `index` answered: closes it, sends its command; what it closed
    /// with is the caller's.
    fn settle_layer<T>(&mut self, index: usize, outcome: LayerOutcome<T>) -> Option<T> {
        match outcome {
            LayerOutcome::Open => None,
            LayerOutcome::Closed => {
                self.layers.remove(index);
                None
            }
            LayerOutcome::Send { command, close } => {
                if close {
                    self.layers.remove(index);
                }
                self.commands.push(command);
                None
            }
            LayerOutcome::Chosen(chosen) => {
                self.layers.remove(index);
                Some(chosen)
            }
        }
    }

    /// A choice of the mode or model picker: switched (and said in the transcript), unless
    /// it is the one in use.
    fn picked(&mut self, pick: Pick) {
        match pick {
            Pick::Mode(mode) if mode == self.status.mode => {
                self.flash(format!("the mode is {mode} already"));
            }
            Pick::Mode(mode) => self.switch_mode(mode),
            Pick::Model(model) if model == self.status.model => {
                self.flash(format!(
                    "the model is {} already",
                    crate::visible::name(&model)
                ));
            }
            Pick::Model(model) => self.commands.push(UserCommand::SetModel { model }),
        }
    }
}
