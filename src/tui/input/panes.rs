//! The focused pane's own keys (transcript, todos, diffs), paste and the mouse.

use crossterm::event::{KeyCode, KeyEvent, MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::{Position, Rect};

use crate::tui::app::{App, Focus};
use crate::tui::keymap::{self, Action, Scope};
use crate::tui::modals::layers::Layer;

/// Lines one mouse wheel step scrolls.
const WHEEL_LINES: usize = 3;

impl App {
    pub(super) fn handle_transcript_key(&mut self, key: KeyEvent) {
        let now = self.now;
        // An edit card links to its diff.
        let edit = self.transcript.selected_card().and_then(|c| c.diff_index);
        match keymap::action(Scope::Transcript, &key) {
            Some(Action::LineDown) => self.transcript.scroll_down(1, now),
            Some(Action::LineUp) => self.transcript.scroll_up(1, now),
            Some(Action::SelectPrev) => self.transcript.select_prev(now),
            Some(Action::SelectNext) => self.transcript.select_next(now),
            Some(Action::Top) => self.transcript.scroll_to_start(now),
            Some(Action::Follow) => self.transcript.follow(),
            Some(Action::ToggleReasoning) => self.transcript.toggle_reasoning(),
            Some(Action::QuitReplay) if self.read_only => self.quit.request(),
            Some(Action::OpenSelectedEdit) if edit.is_some() => {
                if let Some(index) = edit {
                    self.diffs.select(index);
                    self.set_focus(Focus::Diffs);
                }
            }
            // A subagent's card opens its transcript.
            Some(Action::OpenSelectedEdit) if self.open_selected_child() => {}
            // A web card opens to its whole content, and folds again.
            Some(Action::OpenSelectedEdit) if self.transcript.toggle_selected_card() => {}
            _ if matches!(key.code, KeyCode::Char(_) | KeyCode::Enter) && !self.read_only => {
                // Typing in the transcript goes to the input: nothing typed is lost.
                self.set_focus(Focus::Input);
                self.handle_input_key(key);
            }
            _ => {}
        }
    }

    pub(super) fn handle_todos_key(&mut self, key: KeyEvent) {
        match keymap::action(Scope::Todos, &key) {
            Some(Action::LineDown) => self.todos.scroll_by(1),
            Some(Action::LineUp) => self.todos.scroll_by(-1),
            _ => {}
        }
    }

    pub(super) fn handle_diffs_key(&mut self, key: KeyEvent) {
        match keymap::action(Scope::Diffs, &key) {
            Some(Action::LineDown) => self.diffs.scroll_by(1),
            Some(Action::LineUp) => self.diffs.scroll_by(-1),
            Some(Action::ToggleDiffView) => self.diffs.toggle_view(),
            Some(Action::ToggleFullWidth) => {
                let full = !self.diffs.is_full_width();
                self.diffs.set_full_width(full);
            }
            Some(Action::NextDiff) => self.diffs.next(),
            Some(Action::PrevDiff) => self.diffs.prev(),
            Some(Action::NextHunk) => self.diffs.step_hunk(1),
            Some(Action::PrevHunk) => self.diffs.step_hunk(-1),
            Some(Action::RevertHunk) => self.ask_revert(self.diffs.hunk_target()),
            Some(Action::RevertChange) => self.ask_revert(self.diffs.change_target()),
            _ => {}
        }
    }

    /// A paste is text: into the field of the prompt on top when it has one (a deny message,
    /// the model picker's name), else into the input, as typing goes (a prompt never takes
    /// it as an answer, and nothing pasted is lost behind one). The help closes.
    pub(crate) fn handle_paste(&mut self, text: &str) {
        let top = self.layers.len().checked_sub(1);
        match top.and_then(|index| self.layers.get_mut(index)) {
            Some(Layer::Choice(picker)) if picker.is_model_picker() => return picker.paste(text),
            Some(Layer::Approval) if self.approval.typing_message() => {
                return self.approval.handle_paste(text);
            }
            Some(Layer::Help { .. }) => {
                if let Some(index) = top {
                    self.layers.remove(index);
                }
            }
            _ => {}
        }
        if !self.read_only {
            self.set_focus(Focus::Input);
            self.paste_into_input(text);
        } else {
            self.pass_to_parent(crossterm::event::Event::Paste(text.to_string()));
        }
    }

    pub(super) fn handle_mouse(&mut self, mouse: &MouseEvent) {
        // A modal on top takes the mouse; wheel scrolling still reaches the transcript behind
        // the approval prompt, like PgUp/PgDn.
        let wheel = matches!(
            mouse.kind,
            MouseEventKind::ScrollUp | MouseEventKind::ScrollDown
        );
        let passes = |layer: &Layer| matches!(layer, Layer::Approval) && wheel;
        if self.layers.iter().any(|l| !passes(l)) {
            return;
        }
        let areas = self.areas.get();
        let at = Position::new(mouse.column, mouse.row);
        let hit = |r: Rect| r.contains(at);
        let lines = match mouse.kind {
            MouseEventKind::ScrollUp => -(WHEEL_LINES as isize),
            MouseEventKind::ScrollDown => WHEEL_LINES as isize,
            MouseEventKind::Down(MouseButton::Left) => {
                // A click focuses the pane under the pointer.
                let focus = if hit(areas.diffs) {
                    Focus::Diffs
                } else if hit(areas.todos) {
                    Focus::Todos
                } else if hit(areas.transcript) {
                    Focus::Transcript
                } else if !self.read_only {
                    Focus::Input
                } else {
                    return;
                };
                self.set_focus(focus);
                return;
            }
            _ => return,
        };
        if hit(areas.diffs) {
            self.diffs.scroll_by(lines);
        } else if hit(areas.todos) {
            self.todos.scroll_by(lines);
        } else {
            self.scroll_transcript(lines);
        }
    }
}
