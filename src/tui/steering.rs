//! The user's side of steering and of their own shell: Enter while the agent works steers it
//! (the message joins at the next step boundary), Ctrl+Q holds a message for after the turn,
//! `!cmd` / `!!cmd` run a command as the user, and the queue above the input is edited with
//! Alt+↑/↓, Enter (back into the input) and Delete (withdraw). The agent runs and logs all of
//! it; this only sends commands and shows what the events say.

use crossterm::event::{KeyCode, KeyEvent};
use serde_json::json;

use crate::bus::{CallId, ShellEvent, UserCommand};
use crate::paste::PendingImage;
use crate::tui::app::App;
use crate::tui::keymap::{self, Action, Scope};
use crate::tui::panes::cards::{CardState, ToolCard};
use crate::tui::panes::status::Activity;
use crate::tui::panes::transcript::entry::NoticeLevel;
use crate::tui::queue::{Queued, Waits};

/// `!cmd` → (true, "cmd"): its output joins the context; `!!cmd` → (false, "cmd").
pub fn parse_shell(text: &str) -> Option<(bool, &str)> {
    let text = text.trim_start();
    if let Some(rest) = text.strip_prefix("!!") {
        return Some((false, rest.trim()));
    }
    text.strip_prefix('!').map(|rest| (true, rest.trim()))
}

/// How a user's command is shown: as typed.
fn typed(context: bool, command: &str) -> String {
    format!("{}{command}", if context { "!" } else { "!!" })
}

impl App {
    /// Enter while the agent works: the message goes to the agent now and joins the
    /// conversation at its next step boundary; it shows in the queue until then.
    pub(crate) fn steer(&mut self, text: String, images: Vec<PendingImage>) {
        let id = self.queued.new_id();
        self.commands.push(UserCommand::Steer {
            id: id.clone(),
            text: text.clone(),
            attach: images
                .iter()
                .map(|image| image.attachment.clone())
                .collect(),
        });
        self.queued.push(Queued {
            id,
            text,
            images,
            waits: Waits::NextStep,
        });
    }

    /// `!cmd` or `!!cmd` typed and sent. While a request runs it waits for the step
    /// boundary (shown in the queue); otherwise it runs at once (after a command of yours
    /// still running).
    pub(crate) fn run_shell(&mut self, context: bool, command: &str) {
        if command.is_empty() {
            return self.notice(
                "type a command after ! (its output goes to the model too) or !! (only you see it)",
                NoticeLevel::Error,
            );
        }
        let id = self.queued.new_id();
        self.commands.push(UserCommand::Shell {
            id: id.clone(),
            command: command.to_string(),
            context,
        });
        // Behind a request (or another command of yours) it waits: shown until it starts.
        if self.busy || self.shells_running > 0 {
            self.queued.push(Queued {
                id,
                text: typed(context, command),
                images: Vec::new(),
                waits: Waits::Shell,
            });
        }
        if self.busy {
            self.flash("your command runs at the model's next step boundary");
        }
    }

    /// Ctrl+Q: the message waits here for the end of the turn (today's queue); on an empty
    /// input it sends the next message held (and un-pauses the queue).
    pub(crate) fn queue_after_turn(&mut self) {
        if self.composer.is_empty() {
            if self.busy {
                if self.queued.is_paused() {
                    self.queued.resume_later();
                    self.flash("the queue goes on after this turn");
                }
                return;
            }
            match self.queued.resume() {
                Some(next) => self.send_queued(next),
                None => self.flash("nothing queued"),
            }
            return;
        }
        let text = self.composer.full_text();
        let trimmed = text.trim();
        let held = (self.busy || self.queued.is_paused())
            && !trimmed.starts_with('/')
            && parse_shell(trimmed).is_none();
        if !held {
            // Idle, a `/command` or a `!command`: as if sent with Enter.
            if let crate::tui::composer::ComposerAction::Submit(text) =
                self.composer.handle_key(KeyEvent::from(KeyCode::Enter))
            {
                self.submitted(text);
            }
            return;
        }
        self.composer.remember(&text);
        self.composer.clear();
        let images = self.composer.take_images();
        let id = self.queued.new_id();
        self.queued.push(Queued {
            id,
            text,
            images,
            waits: Waits::AfterTurn,
        });
    }

    /// Keys for the queue while one of its entries is selected (and Alt+↑/↓ to select one).
    /// True when the key was the queue's.
    pub(crate) fn queue_key(&mut self, key: KeyEvent) -> bool {
        if keymap::action(Scope::Input, &key) == Some(Action::QueuePrev) && !self.queued.is_empty()
        {
            if key.code == KeyCode::Up {
                self.queued.select_prev();
            } else {
                self.queued.select_next();
            }
            return true;
        }
        if self.queued.selected().is_none() || !key.modifiers.is_empty() {
            return false;
        }
        match key.code {
            KeyCode::Enter => self.pull_back(),
            KeyCode::Delete => {
                if let Some(item) = self.queued.take_selected() {
                    self.withdraw(&item);
                    self.flash(format!("withdrawn: {}", first_line(&item.text)));
                }
            }
            KeyCode::Esc => self.queued.unselect(),
            _ => {
                self.queued.unselect();
                return false;
            }
        }
        true
    }

    /// The selected entry goes back into the input to edit (withdrawn: it is not delivered).
    /// A draft in the input is never overwritten.
    fn pull_back(&mut self) {
        if !self.composer.is_empty() {
            self.flash(
                "the input holds a draft: send or clear it first (the queued message stays)",
            );
            return;
        }
        let Some(item) = self.queued.take_selected() else {
            return;
        };
        self.withdraw(&item);
        self.composer.set_text(&item.text);
        for image in item.images {
            self.composer.attach(image);
        }
        self.flash("withdrawn: back in the input to edit and send");
    }

    fn withdraw(&mut self, item: &Queued) {
        if item.sent() {
            self.queued.withdrawing(&item.id);
        }
        self.commands.push(UserCommand::Withdraw {
            id: item.id.clone(),
            text: item.text.clone(),
            sent: item.sent(),
        });
    }

    /// The agent delivered a queued message; one the user was taking back was too late.
    pub(crate) fn delivered(&mut self, id: &str, step: u64) {
        self.queued.remove(id);
        if self.queued.settle_withdrawal(id) {
            self.notice(
                &format!(
                    "the message you took back was already delivered (after step {step}); the copy in the input was not sent"
                ),
                NoticeLevel::Warning,
            );
        }
    }

    /// The request ended without delivering these: they wait, paused, for the user.
    pub(crate) fn returned(&mut self, ids: &[String]) {
        self.queued.returned(ids);
        let n = ids.len();
        let messages = if n == 1 {
            "message was"
        } else {
            "messages were"
        };
        self.notice(
            &format!(
                "{n} queued {messages} not delivered (the request ended first): they wait above the input; Ctrl+Q sends the next, Alt+↑ selects one to edit"
            ),
            NoticeLevel::Warning,
        );
    }

    pub(crate) fn apply_shell(&mut self, event: &ShellEvent) {
        let now = self.now;
        match event {
            ShellEvent::Started {
                id,
                command,
                context,
            } => {
                self.queued.remove(id);
                if self.queued.settle_withdrawal(id) {
                    self.notice(
                        "the command you took back had already started; Esc stops it",
                        NoticeLevel::Warning,
                    );
                }
                let name = if *context { "!" } else { "!!" };
                let mut card = ToolCard::new(
                    CallId::new(id.clone()),
                    name.to_string(),
                    &json!({ "command": command }),
                    now,
                );
                card.state = CardState::Running;
                self.transcript.push_card(card);
                self.shells_running += 1;
                if !self.busy {
                    self.status.activity = Activity::RunningTool(name.to_string());
                }
            }
            ShellEvent::Output { id, chunk } => self
                .transcript
                .update_card(&CallId::new(id.clone()), |card| card.push_tail(chunk)),
            ShellEvent::Finished { id, result, .. } => {
                self.transcript
                    .update_card(&CallId::new(id.clone()), |card| {
                        card.finish(result.clone(), now)
                    });
                self.shells_running = self.shells_running.saturating_sub(1);
                if !self.busy && self.shells_running == 0 {
                    self.status.activity = Activity::Idle;
                }
            }
        }
    }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bang_and_double_bang_are_told_apart() {
        assert_eq!(parse_shell("!echo hi"), Some((true, "echo hi")));
        assert_eq!(parse_shell("  !! git status "), Some((false, "git status")));
        assert_eq!(parse_shell("!"), Some((true, "")));
        assert_eq!(parse_shell("echo !hi"), None);
    }
}
