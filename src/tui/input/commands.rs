//! The message input's keys, the `/` palette and what a sent line becomes: a message, a
//! `!command`, a built-in `/command` or one of the user's commands and skills.

use crossterm::event::KeyEvent;

use crate::bus::Mode;
use crate::bus::{Restore, UserCommand};
use crate::tui::app::{App, Focus};
use crate::tui::composer::ComposerAction;
use crate::tui::keymap::{self, Action, Scope, SlashAction};
use crate::tui::modals::choice::ChoicePicker;
use crate::tui::panes::transcript::entry::NoticeLevel;

impl App {
    /// The `/` palette's keys while it is shown: ↑/↓ pick a row, Tab completes it, Enter runs
    /// it (elsewhere Tab cycles the focus and ↑/↓ go through earlier messages). True when the
    /// key was the palette's.
    pub(super) fn palette_key(&mut self, key: KeyEvent) -> bool {
        use crate::tui::modals::palette::PaletteKey;
        let text = self.composer.text().to_string();
        match self.palette.key(key.code, &text) {
            PaletteKey::Ignored => false,
            PaletteKey::Moved => true,
            PaletteKey::Complete(done) => {
                self.composer.set_text(&done);
                true
            }
            PaletteKey::Run(line) => {
                self.composer.set_text("");
                self.submitted(line);
                true
            }
        }
    }

    pub(super) fn handle_input_key(&mut self, key: KeyEvent) {
        if self.read_only {
            return;
        }
        if self.composer.is_empty() {
            match keymap::action(Scope::Input, &key) {
                Some(Action::Top) => return self.transcript.scroll_to_start(self.now),
                Some(Action::Follow) => return self.transcript.follow(),
                _ => {}
            }
        }
        match keymap::action(Scope::Input, &key) {
            Some(Action::PasteClipboard) => return self.read_clipboard(),
            Some(Action::RestoreCleared) => return self.restore_cleared(),
            Some(Action::Retry) => return self.retry(),
            Some(Action::QueueAfterTurn) => return self.queue_after_turn(),
            _ => {}
        }
        if let Some(pick) = self.mention_finder.handle_key(&key) {
            if let Some(pick) = pick
                && !self.attach_picked_image(&pick)
            {
                self.composer.replace_range(pick.range, &pick.text);
            }
            return;
        }
        let was_palette = crate::tui::modals::palette::query(self.composer.text()).is_some();
        if let ComposerAction::Submit(text) = self.composer.handle_key(key) {
            self.submitted(text);
        }
        // The palette opens: the user's commands are read again, so a file added or edited
        // since is offered without a restart.
        if !was_palette && crate::tui::modals::palette::query(self.composer.text()).is_some() {
            self.palette.refresh();
        }
        self.mention_finder
            .update(self.composer.text(), self.composer.cursor());
    }

    /// A `/name` that is no built-in: a command or skill of the user's or the project's (as
    /// on disk now) goes to the agent, which expands it.
    pub(super) fn user_command(&mut self, name: &str, line: &str) {
        if self.palette.knows_user_command(name) {
            self.send_message(line.to_string());
        } else {
            self.notice(
                &format!("unknown command {name} (try /help; / lists your commands too)"),
                NoticeLevel::Error,
            );
        }
    }

    /// `/skills`: the session's skills with what the model's list holds of each.
    pub(super) fn show_skills(&mut self, arg: &str) {
        if let Some(name) = arg.strip_prefix("trust").map(str::trim) {
            if name.is_empty() {
                return self.notice(
                    "/skills trust NAME: name the project skill",
                    NoticeLevel::Error,
                );
            }
            self.commands.push(UserCommand::TrustSkill {
                name: name.to_string(),
            });
            return;
        }
        if self.skills.is_empty() {
            return self.notice(
                "no skills: put SKILL.md files in .cairn/skills/NAME/, .agents/skills/NAME/ or .claude/skills/NAME/ (or in ~/.agents/skills, ~/.claude/skills)",
                NoticeLevel::Info,
            );
        }
        let mut text = format!(
            "skills (the model's list may take {} characters):",
            self.skills_budget
        );
        for skill in &self.skills {
            text.push_str(&format!(
                "\n  {:<10} {} — {} [{}] {}",
                skill.status.as_str(),
                skill.name,
                skill.description,
                skill.origin,
                skill.path
            ));
        }
        self.notice(&text, NoticeLevel::Info);
    }

    pub(crate) fn submitted(&mut self, text: String) {
        self.transcript.follow();
        let trimmed = text.trim();
        if let Some((context, command)) = crate::tui::steering::parse_shell(trimmed) {
            // The images wait for the next message, as after a `/command`.
            self.run_shell(context, command);
        } else if trimmed.starts_with('/') && !trimmed.contains('\n') {
            // The images wait for the message after the command.
            self.slash_command(trimmed);
        } else {
            let images = self.composer.take_images();
            self.send_with_images(text, images);
        }
    }

    pub(super) fn slash_command(&mut self, line: &str) {
        let (name, arg) = line
            .split_once(' ')
            .map_or((line, ""), |(n, a)| (n, a.trim()));
        let Some(action) = keymap::slash(name) else {
            return self.user_command(name, line);
        };
        match action {
            SlashAction::New => self.commands.push(UserCommand::NewSession),
            SlashAction::Resume => self.commands.push(UserCommand::ListSessions),
            SlashAction::Mode if arg.is_empty() => self
                .layers
                .open_choice(ChoicePicker::modes(self.status.mode)),
            SlashAction::Mode => match arg.parse::<Mode>() {
                Ok(mode) => self.switch_mode(mode),
                Err(e) => self.notice(&e, NoticeLevel::Error),
            },
            SlashAction::Model if !arg.is_empty() => self.commands.push(UserCommand::SetModel {
                model: arg.to_string(),
            }),
            SlashAction::Model => {
                self.layers
                    .open_choice(ChoicePicker::models(&self.status.model));
                self.commands.push(UserCommand::ListModels);
            }
            SlashAction::Compact => self.commands.push(UserCommand::Compact {
                focus: (!arg.is_empty()).then(|| arg.to_string()),
            }),
            SlashAction::Cost => self.commands.push(UserCommand::ShowCost),
            SlashAction::Lsp => self.commands.push(UserCommand::ShowLsp),
            SlashAction::Diffs => self.set_focus(Focus::Diffs),
            SlashAction::Continue => self.send_message(crate::bus::CONTINUE_PROMPT.to_string()),
            SlashAction::Undo | SlashAction::Redo | SlashAction::Rewind if self.busy => self.notice(
                &format!(
                    "{name} waits for the agent: it is working now (Esc stops it); try again when it is idle"
                ),
                NoticeLevel::Error,
            ),
            SlashAction::Undo => self.commands.push(UserCommand::Restore {
                what: Restore::Undo,
                apply: false,
            }),
            SlashAction::Redo => self.commands.push(UserCommand::Restore {
                what: Restore::Redo,
                apply: false,
            }),
            SlashAction::Rewind => self.commands.push(UserCommand::ListRewindPoints),
            SlashAction::Skills => self.show_skills(arg),
            // Sent as typed: the agent expands it, reading then whether AGENTS.md exists.
            SlashAction::Init => self.send_message(line.to_string()),
            SlashAction::Retry => self.retry(),
            SlashAction::Help => self.layers.open_help(),
            SlashAction::Jobs => self.open_jobs(),
            SlashAction::Quit => self.quit_command(),
        }
    }
}
