//! The keys that mean the same whatever has focus (Esc, Tab, Shift+Tab, PgUp/PgDn, `[`/`]`,
//! copy, the mouse toggle, Ctrl+C) and what they do to focus, scrolling and the diff pane.

use crossterm::event::KeyEvent;

use crate::bus::UserCommand;
use crate::tui::app::{App, AppIntent, Focus, Tab};
use crate::tui::keymap::{self, Action, Scope};
use crate::tui::modals::revert::RevertModal;
use crate::tui::panes::transcript::entry::NoticeLevel;

impl App {
    pub(super) fn ctrl_c(&mut self) {
        if self.quit.ctrl_c(self.now) {
            self.commands.push(UserCommand::Shutdown);
            return;
        }
        // The first Ctrl+C stops what is running; only a second one quits. The draft stays:
        // nothing typed is thrown away by a key meant to stop the agent.
        if (self.busy || self.shells_running > 0) && !self.read_only {
            self.commands.push(UserCommand::Interrupt);
        } else if !self.read_only && self.layers.is_empty() && !self.composer.is_empty() {
            // Nothing to stop: Ctrl+C clears the draft, as in a shell, and Ctrl+Z takes the
            // clearing back.
            self.cleared_draft = Some(self.composer.full_text());
            self.composer.clear();
            self.mention_finder.update("", 0);
            self.flash(format!(
                "input cleared (Ctrl+Z brings it back); {}",
                self.ctrl_c_hint()
            ));
            return;
        }
        self.flash(self.ctrl_c_hint());
    }

    /// `/retry`, Ctrl+R: the message whose request failed is sent again, with its images (the
    /// agent dropped it from the conversation, so it is not sent twice).
    pub(super) fn retry(&mut self) {
        if self.busy {
            self.flash("the model is working: /retry waits until it stops");
            return;
        }
        match self.failed.take() {
            Some(failed) => self.send_with_images(failed.text, failed.images),
            None => self.flash("nothing to retry: no request failed"),
        }
    }

    /// Ctrl+Z: the draft the last Ctrl+C cleared is back (a draft typed since stays: the
    /// cleared text is put before it).
    pub(super) fn restore_cleared(&mut self) {
        let Some(cleared) = self.cleared_draft.take() else {
            self.flash("nothing to bring back");
            return;
        };
        let now = self.composer.full_text();
        self.composer.set_text(&format!("{cleared}{now}"));
    }

    /// Keys that mean the same whatever has focus. True when handled.
    pub(super) fn handle_global_key(&mut self, key: KeyEvent) -> bool {
        let typing = self.focus == Focus::Input && !self.composer.is_empty();
        let Some(action) = keymap::action(Scope::Anywhere, &key) else {
            return false;
        };
        match action {
            Action::Interrupt => self.escape(),
            Action::FocusNext => self.cycle_focus(1),
            Action::FocusPrev => self.cycle_focus(-1),
            Action::CycleMode if !self.read_only => {
                let next = self.status.mode.next_in_cycle();
                self.switch_mode(next);
            }
            Action::ToggleMouse => self.toggle_mouse(),
            Action::Copy => self.copy(),
            Action::OpenEditor if !self.read_only => self.intents.push(AppIntent::OpenEditor),
            Action::PageUp => self.scroll_focused(-(self.transcript.page() as isize)),
            Action::PageDown => self.scroll_focused(self.transcript.page() as isize),
            Action::PrevDiff if !typing => self.step_diff(-1),
            Action::NextDiff if !typing => self.step_diff(1),
            Action::OpenHelp if !typing => self.layers.open_help(),
            _ => return false,
        }
        true
    }

    /// Opens the revert confirmation and asks the agent for its preview. Refused while the
    /// model works: it may be writing the same file, and a revert queued behind its turn would
    /// apply to a state nobody previewed.
    pub(super) fn ask_revert(&mut self, target: Option<crate::bus::RevertTarget>) {
        if self.read_only {
            self.flash("a replay is read-only: nothing can be reverted");
            return;
        }
        let Some(target) = target else {
            self.flash("this change cannot be reverted from here");
            return;
        };
        if self.busy {
            self.notice(
                "cannot revert while the model is working (it may be changing the same files): \
                 wait until the model stops, or press Esc to interrupt it",
                NoticeLevel::Warning,
            );
            return;
        }
        self.commands.push(UserCommand::PreviewRevert {
            target: target.clone(),
        });
        self.layers.open_revert(RevertModal::asking(target));
    }

    pub(super) fn escape(&mut self) {
        // The full-width diff hides the transcript: Esc first brings it back (a second Esc
        // interrupts), so the way out of the view is never a surprise interrupt.
        if self.diffs.is_full_width() {
            self.diffs.set_full_width(false);
        } else if self.shells_running > 0 && !self.read_only {
            // Your own command first; a second Esc interrupts the model.
            self.commands.push(UserCommand::Interrupt);
            self.flash("stopping your command…");
        } else if self.busy && !self.read_only {
            self.commands.push(UserCommand::Interrupt);
            self.flash("interrupting…");
        } else if self.transcript.selected().is_some() {
            self.transcript.clear_selection();
        } else if self.focus == Focus::Diffs && self.diffs.clear_hunk() {
            // The hunk selection goes first; the next Esc leaves the pane.
        } else {
            self.set_focus(Focus::Input);
        }
    }

    pub(super) fn cycle_focus(&mut self, step: isize) {
        let order = if self.read_only {
            &[Focus::Transcript, Focus::Todos, Focus::Diffs][..]
        } else {
            &[Focus::Input, Focus::Transcript, Focus::Todos, Focus::Diffs][..]
        };
        let at = order.iter().position(|f| *f == self.focus).unwrap_or(0) as isize;
        let next = (at + step).rem_euclid(order.len() as isize) as usize;
        self.set_focus(order[next]);
    }

    pub(crate) fn set_focus(&mut self, focus: Focus) {
        self.focus = focus;
        if focus == Focus::Diffs {
            self.diffs_seen = self.diffs.len();
        }
        self.tab = match focus {
            Focus::Transcript => Tab::Transcript,
            Focus::Todos => Tab::Todos,
            Focus::Diffs => Tab::Diffs,
            Focus::Input => self.tab,
        };
        if focus != Focus::Transcript {
            self.transcript.clear_selection();
        }
        // The full-width diff stays while the user types beneath it; another pane ends it.
        if matches!(focus, Focus::Transcript | Focus::Todos) {
            self.diffs.set_full_width(false);
        }
    }

    pub(super) fn toggle_mouse(&mut self) {
        self.mouse_captured = !self.mouse_captured;
        self.intents
            .push(AppIntent::SetMouseCapture(self.mouse_captured));
        let text = if self.mouse_captured {
            "mouse captured (wheel scrolls)"
        } else {
            "mouse released: select text freely"
        };
        self.flash(text);
    }

    pub(super) fn copy(&mut self) {
        let text = match self.focus {
            Focus::Diffs => self.diffs.copy_text(),
            Focus::Todos => Some(self.todos.copy_text()),
            Focus::Input | Focus::Transcript => self.transcript.copy_text(),
        };
        match text {
            Some(text) if !text.is_empty() => {
                self.flash(format!("copied {} characters", text.chars().count()));
                self.intents.push(AppIntent::Copy(text));
            }
            _ => self.flash("nothing to copy"),
        }
    }

    pub(super) fn step_diff(&mut self, step: isize) {
        if self.diffs.is_empty() {
            self.flash("no edits yet");
            return;
        }
        if step < 0 {
            self.diffs.prev();
        } else {
            self.diffs.next();
        }
        // On a narrow screen the diff is a tab: show it.
        if self.tab != Tab::Diffs && self.focus != Focus::Input {
            self.set_focus(Focus::Diffs);
        } else if self.tab != Tab::Diffs {
            self.tab = Tab::Diffs;
            self.diffs_seen = self.diffs.len();
        }
    }

    pub(super) fn scroll_focused(&mut self, lines: isize) {
        match self.focus {
            Focus::Todos => self.todos.scroll_by(lines),
            Focus::Diffs => self.diffs.scroll_by(lines),
            Focus::Input | Focus::Transcript => self.scroll_transcript(lines),
        }
    }

    pub(super) fn scroll_transcript(&mut self, lines: isize) {
        let now = self.now;
        if lines < 0 {
            self.transcript.scroll_up(lines.unsigned_abs(), now);
        } else {
            self.transcript.scroll_down(lines.unsigned_abs(), now);
        }
    }
}
