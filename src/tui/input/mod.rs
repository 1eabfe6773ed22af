//! Keys, mouse and paste → state changes and commands. Input goes down the layer stack first
//! (help, session picker, approval prompt; top first, each may let it fall through), then to
//! the global keys, then to the focused pane. Keys mean what `keymap::BINDINGS` says.

use crossterm::event::{
    Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use ratatui::layout::{Position, Rect};

use crate::bus::Mode;
use crate::bus::{Restore, UserCommand};
use crate::tui::app::{App, AppIntent, Focus, QUIT_WINDOW, Tab};
use crate::tui::composer::ComposerAction;
use crate::tui::keymap::{self, Action, Scope, SlashAction};
use crate::tui::modals::choice::{ChoicePicker, Pick};
use crate::tui::modals::help;
use crate::tui::modals::layers::Layer;
use crate::tui::modals::modal::{Handled, LayerOutcome};
use crate::tui::modals::revert::RevertModal;
use crate::tui::modals::trust::TrustAnswer;
use crate::tui::panes::transcript::entry::NoticeLevel;

/// Lines one mouse wheel step scrolls.
const WHEEL_LINES: usize = 3;

impl App {
    /// Handles one terminal input event.
    pub fn handle_input(&mut self, event: &Event) {
        match event {
            Event::Key(key) if key.kind != KeyEventKind::Release => self.handle_key(*key),
            Event::Paste(text) => self.handle_paste(text),
            Event::Mouse(mouse) => self.handle_mouse(mouse),
            _ => {}
        }
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
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && key.code == KeyCode::Char('c') {
            self.ctrl_c();
            return;
        }
        self.quit_armed = None;
        // Decided before this key counts as typing: a prompt held back stays so while keys come.
        let held_back = self.approval.held_back(self.now);
        self.approval.note_key(self.now);
        for index in (0..self.layers.len()).rev() {
            if held_back && matches!(self.layers.get(index), Some(Layer::Approval)) {
                continue;
            }
            if self.layer_key(index, key) == Handled::Consumed {
                return;
            }
        }
        let only_held_back_prompt = held_back
            && self
                .layers
                .iter()
                .all(|layer| matches!(layer, Layer::Approval));
        if only_held_back_prompt {
            // The user was typing when the prompt opened: the typing goes on into the input
            // (where it was going) and nothing reaches the prompt. Esc is the prompt's key, so
            // it waits too instead of interrupting the turn.
            if key.code != KeyCode::Esc {
                self.handle_pane_key(key);
            }
            return;
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
        // The `@` finder's keys come before the global ones (Tab, Esc) while it is open.
        if self.focus == Focus::Input
            && self.mention_finder.is_open()
            && matches!(
                key.code,
                KeyCode::Tab | KeyCode::Up | KeyCode::Down | KeyCode::Esc
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

    /// The `/` palette's keys while it is shown: ↑/↓ pick a row, Tab completes it, Enter runs
    /// it (elsewhere Tab cycles the focus and ↑/↓ go through earlier messages). True when the
    /// key was the palette's.
    fn palette_key(&mut self, key: KeyEvent) -> bool {
        use crate::tui::modals::palette::{Enter, complete_at};
        let text = self.composer.text().to_string();
        match key.code {
            KeyCode::Up => self.palette_selection.step(&self.palette, &text, -1),
            KeyCode::Down => self.palette_selection.step(&self.palette, &text, 1),
            KeyCode::Tab => match complete_at(&self.palette, &text, &self.palette_selection) {
                Some(done) => {
                    self.composer.set_text(&done);
                    true
                }
                None => false,
            },
            KeyCode::Enter => match self.palette_selection.enter(&self.palette, &text) {
                Enter::AsTyped => false,
                Enter::Complete(done) => {
                    self.composer.set_text(&done);
                    true
                }
                Enter::Run(line) => {
                    self.composer.set_text("");
                    self.submitted(line);
                    true
                }
            },
            _ => false,
        }
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
                if key.code == KeyCode::Esc && !self.approval.typing_message() {
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

    fn ctrl_c(&mut self) {
        if self
            .quit_armed
            .is_some_and(|at| self.now.saturating_duration_since(at) <= QUIT_WINDOW)
        {
            self.commands.push(UserCommand::Shutdown);
            self.should_quit = true;
            return;
        }
        self.quit_armed = Some(self.now);
        // The first Ctrl+C stops what is running; only a second one quits. The draft stays:
        // nothing typed is thrown away by a key meant to stop the agent.
        if (self.busy || self.shells_running > 0) && !self.read_only {
            self.commands.push(UserCommand::Interrupt);
        }
        self.flash(self.ctrl_c_hint());
    }

    /// Keys that mean the same whatever has focus. True when handled.
    fn handle_global_key(&mut self, key: KeyEvent) -> bool {
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
    fn ask_revert(&mut self, target: Option<crate::bus::RevertTarget>) {
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

    fn escape(&mut self) {
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

    fn cycle_focus(&mut self, step: isize) {
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

    fn toggle_mouse(&mut self) {
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

    fn copy(&mut self) {
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

    fn step_diff(&mut self, step: isize) {
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

    fn scroll_focused(&mut self, lines: isize) {
        match self.focus {
            Focus::Todos => self.todos.scroll_by(lines),
            Focus::Diffs => self.diffs.scroll_by(lines),
            Focus::Input | Focus::Transcript => self.scroll_transcript(lines),
        }
    }

    fn scroll_transcript(&mut self, lines: isize) {
        let now = self.now;
        if lines < 0 {
            self.transcript.scroll_up(lines.unsigned_abs(), now);
        } else {
            self.transcript.scroll_down(lines.unsigned_abs(), now);
        }
    }

    fn handle_input_key(&mut self, key: KeyEvent) {
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
            self.refresh_palette();
        }
        self.mention_finder
            .update(self.composer.text(), self.composer.cursor());
    }

    pub(crate) fn refresh_palette(&mut self) {
        if let Some(sources) = &self.command_sources {
            self.palette = crate::tui::modals::palette::entries_with(sources);
        }
    }

    /// A `/name` that is no built-in: a command or skill of the user's or the project's (as
    /// on disk now) goes to the agent, which expands it.
    fn user_command(&mut self, name: &str, line: &str) {
        let known = self.command_sources.as_ref().is_some_and(|sources| {
            let bare = name.trim_start_matches('/');
            crate::skills::commands::discover_commands(sources)
                .items
                .iter()
                .any(|c| c.name == bare)
        });
        if known {
            self.send_message(line.to_string());
        } else {
            self.notice(
                &format!("unknown command {name} (try /help; / lists your commands too)"),
                NoticeLevel::Error,
            );
        }
    }

    /// `/skills`: the session's skills with what the model's list holds of each.
    fn show_skills(&mut self, arg: &str) {
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

    fn slash_command(&mut self, line: &str) {
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
            SlashAction::Help => self.layers.open_help(),
            SlashAction::Jobs => self.open_jobs(),
            SlashAction::Quit => self.quit_command(),
        }
    }

    fn handle_transcript_key(&mut self, key: KeyEvent) {
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
            Some(Action::OpenSelectedEdit) if edit.is_some() => {
                if let Some(index) = edit {
                    self.diffs.select(index);
                    self.set_focus(Focus::Diffs);
                }
            }
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

    fn handle_todos_key(&mut self, key: KeyEvent) {
        match keymap::action(Scope::Todos, &key) {
            Some(Action::LineDown) => self.todos.scroll_by(1),
            Some(Action::LineUp) => self.todos.scroll_by(-1),
            _ => {}
        }
    }

    fn handle_diffs_key(&mut self, key: KeyEvent) {
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

    /// Paste goes down the layers like a key: the approval prompt takes it (into a deny
    /// message), the picker swallows it, the help closes and lets it through to the input.
    fn handle_paste(&mut self, text: &str) {
        for index in (0..self.layers.len()).rev() {
            if let Some(Layer::Choice(picker)) = self.layers.get_mut(index) {
                return picker.paste(text);
            }
            match self.layers.get(index) {
                Some(Layer::Approval) => return self.approval.handle_paste(text),
                Some(
                    Layer::Picker(_)
                    | Layer::Choice(_)
                    | Layer::Trust(_)
                    | Layer::Rewind(_)
                    | Layer::Confirm(_)
                    | Layer::Revert(_)
                    | Layer::Jobs(_),
                ) => {
                    return;
                }
                Some(Layer::Help { .. }) => self.layers.remove(index),
                None => {}
            }
        }
        if !self.read_only {
            self.set_focus(Focus::Input);
            self.paste_into_input(text);
        }
    }

    fn handle_mouse(&mut self, mouse: &MouseEvent) {
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
