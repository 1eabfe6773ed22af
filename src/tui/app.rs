//! The TUI's state: panes, focus, modals, the message queue and the status line. `apply`
//! folds an `AgentEvent` in, `handle_input` (input.rs) turns keys into state changes and
//! `UserCommand`s, and `render` (layout.rs) draws everything from `&self`. No terminal, clock
//! or channel in here: time is injected with `set_now`, commands and intents are collected.

use std::cell::Cell;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

use ratatui::layout::Rect;

use crate::bus::Mode;
use crate::bus::{AgentEvent, EndReason, ToolEvent, UserCommand};
use crate::tool_output::ToolOutput;
use crate::tui::composer::Composer;
use crate::tui::modals::approval::{ApprovalPrompt, Held};
use crate::tui::modals::choice::mode_summary;
use crate::tui::modals::layers::{Layer, Layers};
use crate::tui::options::TuiOptions;
use crate::tui::panes::cards::{CardState, ToolCard};
use crate::tui::panes::diffs::DiffPane;
use crate::tui::panes::status::{Activity, Status};
use crate::tui::panes::todos::TodoPane;
use crate::tui::panes::transcript::Transcript;
use crate::tui::panes::transcript::entry::NoticeLevel;
use crate::tui::stand_alone::StandAlone;

/// Smallest terminal the layout is drawn in.
pub const MIN_WIDTH: u16 = 40;
pub const MIN_HEIGHT: u16 = 10;
/// From this width the todo and diff panes sit beside the transcript; below it they are tabs.
pub const WIDE: u16 = 100;
/// How long a second Ctrl+C has to quit.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    Input,
    Transcript,
    Todos,
    Diffs,
}

/// The main-area tab on narrow terminals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tab {
    Transcript,
    Todos,
    Diffs,
}

/// Something only the main loop can do (it owns the terminal).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AppIntent {
    /// Put this text on the clipboard (OSC 52).
    Copy(String),
    /// Read the system clipboard (Ctrl+V) off the UI thread and hand the result to
    /// `App::clipboard_read`; an image on it is called `name`.
    ReadClipboard {
        name: String,
    },
    SetMouseCapture(bool),
    /// Suspend the screen and edit the message in `$EDITOR`.
    OpenEditor,
}

/// A message sent and not yet confirmed, with the images attached to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsent {
    pub text: String,
    pub images: Vec<crate::paste::PendingImage>,
}

/// Where the panes were drawn last frame (mouse hit-testing).
#[derive(Debug, Clone, Copy, Default)]
pub struct Areas {
    pub transcript: Rect,
    pub todos: Rect,
    pub diffs: Rect,
}

#[derive(Debug)]
pub struct App {
    pub(crate) transcript: Transcript,
    pub(crate) diffs: DiffPane,
    pub(crate) todos: TodoPane,
    pub(crate) approval: ApprovalPrompt,
    /// The message sent last, with its images (what `/retry` sends again when it failed).
    pub(crate) last_sent: Option<Unsent>,
    /// The message whose request failed before the model answered it: `/retry` sends it.
    pub(crate) failed: Option<Unsent>,
    /// The draft the last Ctrl+C cleared (Ctrl+Z brings it back).
    pub(crate) cleared_draft: Option<String>,
    /// The stand-alone rule's memory: which keys may act (see `tui::stand_alone`).
    pub(crate) keys: StandAlone,
    pub(crate) composer: Composer,
    pub(crate) mention_finder: crate::tui::modals::mention_finder::MentionFinder,
    pub(crate) status: Status,
    /// Help, the session picker and the approval prompt, in the order they opened.
    pub(crate) layers: Layers,
    pub(crate) focus: Focus,
    pub(crate) tab: Tab,
    /// Edits in the diff pane when its tab was last shown (narrow layout): the newer ones
    /// are badged on the tab bar.
    pub(crate) diffs_seen: usize,
    pub(crate) read_only: bool,
    /// The agent is working on a request (from our submit until `Idle`).
    pub(crate) busy: bool,
    /// Modes the user switched to that the agent has not confirmed yet (`ModeChanged`), in
    /// order: the status line shows the latest at once, the confirmations change nothing.
    pub(crate) modes_sent: VecDeque<Mode>,
    /// The `/` palette: what it offers, the row picked, where the user's commands are read.
    pub(crate) palette: crate::tui::modals::palette::Palette,
    /// The session's skills as the agent listed them (`/skills`), and the list's budget.
    pub(crate) skills: Vec<crate::bus::SkillLine>,
    pub(crate) skills_budget: usize,
    /// What was typed while busy and is not delivered yet (steering, after the turn, `!cmd`).
    pub(crate) queued: crate::tui::queue::MessageQueue,
    /// The user's own commands running now (`!cmd`): Esc stops them.
    pub(crate) shells_running: usize,
    /// The message sent last, until the agent confirms it entered the conversation
    /// (`UserMessage`): a request refused before that (an image the model cannot take, a
    /// file that is no image) puts it back into the input instead of losing it.
    pub(crate) unconfirmed: Option<Unsent>,
    /// A Ctrl+V is reading the clipboard (off the UI thread); its result is still to come.
    pub(crate) reading_clipboard: bool,
    pub(crate) commands: Vec<UserCommand>,
    pub(crate) intents: Vec<AppIntent>,
    pub(crate) now: Instant,
    pub(crate) quit: crate::tui::quit::Quitting,
    /// The session's background jobs, and the call each one's card belongs to.
    pub(crate) jobs: crate::tui::jobs::JobList,
    pub(crate) mouse_captured: bool,
    /// A short message in the status line until the instant given.
    pub(crate) flash: Option<(String, Instant)>,
    pub(crate) areas: Cell<Areas>,
    /// The first screen's facts, shown until the first message.
    pub(crate) welcome: Option<crate::tui::panes::welcome::Welcome>,
    /// The session shown (the last `SessionStarted`): what quitting says how to resume.
    pub(crate) session: Option<crate::bus::SessionId>,
    /// The subagents' transcripts, and the one open over the screen.
    pub(crate) children: children::Children,
}

impl App {
    pub fn new(options: &TuiOptions, now: Instant) -> Self {
        let mut app = Self {
            transcript: Transcript::new(),
            diffs: DiffPane::new(),
            todos: TodoPane::default(),
            approval: ApprovalPrompt::default(),
            keys: StandAlone::default(),
            cleared_draft: None,
            last_sent: None,
            failed: None,
            composer: Composer::with_history(options.history.clone()),
            mention_finder: Default::default(),
            status: Status::new(
                options.provider.clone(),
                options.model.clone(),
                options.mode,
                options.read_only,
            )
            .with_sandbox_off(options.sandbox_off.clone()),
            layers: Layers::from_trust(options.trust.clone()),
            focus: if options.read_only {
                Focus::Transcript
            } else {
                Focus::Input
            },
            tab: Tab::Transcript,
            diffs_seen: 0,
            read_only: options.read_only,
            busy: false,
            queued: Default::default(),
            shells_running: 0,
            reading_clipboard: false,
            unconfirmed: None,
            modes_sent: VecDeque::new(),
            palette: crate::tui::modals::palette::Palette::new(if options.read_only {
                None
            } else {
                options.command_sources.clone()
            }),
            skills: Vec::new(),
            skills_budget: 0,
            commands: Vec::new(),
            intents: Vec::new(),
            now,
            quit: Default::default(),
            jobs: Default::default(),
            mouse_captured: true,
            flash: None,
            areas: Cell::new(Areas::default()),
            welcome: options.welcome.clone(),
            session: None,
            children: Default::default(),
        };
        // The trust prompt at start-up is a prompt like any other: its dead time runs now.
        app.see_prompt();
        app
    }

    /// The clock for everything that shows time (spinners, elapsed, countdowns).
    pub fn set_now(&mut self, now: Instant) {
        self.now = now;
        if let Some(child) = self.open_child_mut() {
            child.set_now(now);
        }
    }

    pub fn should_quit(&self) -> bool {
        self.quit.requested()
    }

    /// The session to name in the resume hint on quit: only one with messages in it.
    pub fn resumable_session(&self) -> Option<&crate::bus::SessionId> {
        if self.read_only || !self.transcript.has_messages() {
            return None;
        }
        self.session.as_ref()
    }

    /// Commands for the engine produced since the last call.
    pub fn take_commands(&mut self) -> Vec<UserCommand> {
        std::mem::take(&mut self.commands)
    }

    pub fn take_intents(&mut self) -> Vec<AppIntent> {
        std::mem::take(&mut self.intents)
    }

    pub fn focus(&self) -> Focus {
        self.focus
    }

    pub fn transcript(&self) -> &Transcript {
        &self.transcript
    }

    pub fn transcript_mut(&mut self) -> &mut Transcript {
        &mut self.transcript
    }

    /// When the next frame is needed even without input or events (animations, countdowns).
    pub fn next_tick(&self) -> Option<Instant> {
        let mut next: Option<Instant> = None;
        let mut want = |at: Instant| next = Some(next.map_or(at, |n: Instant| n.min(at)));
        if self.transcript.is_animating() {
            want(self.now + Duration::from_millis(100));
        }
        if let Activity::Retrying { until, .. } = self.status.activity
            && until > self.now
        {
            want(self.now + Duration::from_millis(250));
        }
        if let Some((_, until)) = &self.flash {
            want(*until);
        }
        // A key waiting to see whether it stands alone acts then; the prompt stops saying
        // "you are typing" when the typing pauses.
        if let Some(at) = self.keys.due() {
            want(at);
        }
        if let Some(at) = self.keys.typing_until().filter(|at| *at > self.now)
            && matches!(self.layers.top(), Some(Layer::Approval))
        {
            want(at);
        }
        if let Some(at) = self.layers.jobs_due() {
            want(at);
        }
        // The `@` popup follows its index: results of a walk that ends show without a key.
        if self.mention_finder.waiting_for_index() {
            want(self.now + Duration::from_millis(50));
        }
        if let Some(at) = self.open_child().and_then(App::next_tick) {
            want(at);
        }
        next
    }

    /// Drops expired transient state (flash messages, a prompt's hold-back) and lets the `@`
    /// popup catch up with its index; true when something changed.
    pub fn expire(&mut self) -> bool {
        let released = self.release_waiting_key()
            | self.refresh_jobs()
            | self.open_child_mut().is_some_and(App::expire);
        self.settle_child();
        // The approval prompt stops saying "you are typing" once the typing paused.
        self.see_prompt();
        let reranked = self
            .mention_finder
            .follow_index(self.composer.text(), self.composer.cursor());
        let flash_over = self
            .flash
            .as_ref()
            .is_some_and(|(_, until)| *until <= self.now);
        if flash_over {
            self.flash = None;
        }
        released || flash_over || reranked
    }

    /// The engine closed its end of the bus: say so; browsing still works.
    pub fn engine_stopped(&mut self) {
        self.busy = false;
        self.status.activity = Activity::Idle;
        if !self.read_only {
            self.notice("the engine stopped; Ctrl+C twice quits", NoticeLevel::Error);
        }
    }

    pub(crate) fn flash(&mut self, text: impl Into<String>) {
        self.flash = Some((text.into(), self.now + crate::tui::quit::QUIT_WINDOW));
    }

    pub(crate) fn notice(&mut self, text: &str, level: NoticeLevel) {
        self.transcript.push_notice(text, level);
    }

    /// The user switches the mode (Shift+Tab, `/mode`): the status line follows at once, a
    /// line in the transcript says so, and the agent is told.
    pub(crate) fn switch_mode(&mut self, mode: Mode) {
        self.modes_sent.push_back(mode);
        self.commands.push(UserCommand::SetMode { mode });
        self.show_mode(mode);
    }

    fn show_mode(&mut self, mode: Mode) {
        if self.status.mode == mode {
            return;
        }
        self.status.mode = mode;
        // Shift+Tab pressed several times in a row leaves one line: the mode it ended on.
        self.transcript.replace_notice(
            "mode → ",
            &format!("mode → {mode}: {}", mode_summary(mode)),
            NoticeLevel::Info,
        );
    }

    /// The agent's word on the mode: a confirmation of a switch the user made, or a switch
    /// of its own (an approved plan, a resumed session).
    fn mode_changed(&mut self, mode: Mode) {
        if self.modes_sent.front() == Some(&mode) {
            self.modes_sent.pop_front();
            return;
        }
        self.modes_sent.clear();
        self.show_mode(mode);
    }

    /// The model in use changed (a switch, a resumed session, a replayed one): a line says so.
    fn model_changed(&mut self, model: &str) {
        if self.status.model == model {
            return;
        }
        model.clone_into(&mut self.status.model);
        self.notice(
            &format!("model → {}", crate::visible::name(model)),
            NoticeLevel::Info,
        );
    }

    /// Sends a message now, or queues it while the agent works.
    pub(crate) fn send_message(&mut self, text: String) {
        self.send_with_images(text, Vec::new());
    }

    /// Sends a message with the images attached to it, or queues both while the agent works.
    pub(crate) fn send_with_images(
        &mut self,
        text: String,
        images: Vec<crate::paste::PendingImage>,
    ) {
        if self.busy {
            self.steer(text, images);
        } else {
            self.unconfirmed = Some(Unsent {
                text: text.clone(),
                images: images.clone(),
            });
            self.last_sent = self.unconfirmed.clone();
            self.failed = None;
            self.commands.push(UserCommand::Submit {
                text,
                attach: images.into_iter().map(|image| image.attachment).collect(),
            });
            self.busy = true;
            self.status.activity = Activity::Thinking;
        }
    }

    /// Sends a message held for after the turn (with its queue id, for the log's record).
    pub(crate) fn send_queued(&mut self, item: crate::tui::queue::Queued) {
        self.unconfirmed = Some(Unsent {
            text: item.text.clone(),
            images: item.images.clone(),
        });
        self.commands.push(UserCommand::Steer {
            id: item.id,
            text: item.text,
            attach: item
                .images
                .into_iter()
                .map(|image| image.attachment)
                .collect(),
        });
        self.busy = true;
        self.status.activity = Activity::Thinking;
    }

    // ----- events (folded in app_events.rs) -----

    /// Folds one event from the engine into the state.
    pub fn apply(&mut self, event: &AgentEvent) {
        self.fold(event);
        self.layers.sync_approval(self.approval.is_open());
        self.see_prompt();
    }

    /// The conversation went back to before the user message `text`: live, it is back in the
    /// input to edit and send again; in a replay it marks where a rewind left a branch.
    fn rewound(&mut self, text: &str) {
        if self.read_only {
            let first = text.lines().next().unwrap_or("");
            self.notice(
                &format!(
                    "⎌ rewound: the branch above was left; the conversation goes on from before “{first}”"
                ),
                NoticeLevel::Warning,
            );
            return;
        }
        self.composer.set_text(text);
        self.focus = Focus::Input;
        self.notice(
            "rewound: the conversation is back to before your message, which is in the input to edit and send",
            NoticeLevel::Info,
        );
    }

    fn turn_ended(&mut self, reason: &EndReason) {
        self.transcript.end_streaming();
        // A turn that did not finish (stopped, failed, denied, cut) sends nothing more behind
        // the user's back: what is queued waits, each message on its own, until they say.
        if *reason != EndReason::Completed {
            self.queued.pause();
        }
        match reason {
            EndReason::Completed => {}
            EndReason::Interrupted => {
                self.notice("interrupted", NoticeLevel::Warning);
            }
            EndReason::StepLimit => {
                self.notice("stopped: the step limit was reached", NoticeLevel::Warning)
            }
            EndReason::Denied => self.notice("stopped: a call was denied", NoticeLevel::Warning),
            EndReason::Failed(message) => {
                // The agent dropped the unanswered message: a retry takes its place.
                self.failed = self.last_sent.take().filter(|_| self.unconfirmed.is_none());
                let retry = if self.failed.is_some() {
                    " — /retry (Ctrl+R) sends your message again"
                } else {
                    ""
                };
                self.notice(&format!("failed: {message}{retry}"), NoticeLevel::Error)
            }
            EndReason::OutputLimit => self.notice(
                "answer cut at the output limit — type /continue to continue it",
                NoticeLevel::Warning,
            ),
        }
    }

    fn idle(&mut self) {
        self.busy = false;
        self.status.activity = Activity::Idle;
        self.transcript.end_streaming();
        if let Some(next) = self.queued.next_on_idle() {
            self.send_queued(next);
        }
    }

    fn apply_tool(&mut self, event: &ToolEvent) {
        let now = self.now;
        match event {
            ToolEvent::Requested { call, name, args } => {
                self.transcript
                    .push_card(ToolCard::new(call.clone(), name.clone(), args, now));
                if name == "todo_write" {
                    self.todos.propose(call, args);
                }
            }
            ToolEvent::AwaitingApproval {
                call,
                name,
                subject,
                why,
                sandboxed,
                reach,
                prefix,
                decisions,
                dangers,
                diff,
            } => {
                self.transcript
                    .update_card(call, |card| card.state = CardState::AwaitingApproval);
                if !self.read_only {
                    self.approval.hold(Held {
                        call: call.clone(),
                        name: name.clone(),
                        subject: subject.clone(),
                        why: why.clone(),
                        sandboxed: *sandboxed,
                        reach: reach.clone(),
                        prefix: prefix.clone(),
                        decisions: decisions.clone(),
                        dangers: dangers.clone(),
                        diff: diff.clone(),
                    });
                    self.status.activity = Activity::WaitingForApproval;
                }
            }
            ToolEvent::Decided { call, decision } => {
                self.approval.settle(call);
                self.transcript.update_card(call, |card| {
                    card.decision = Some(decision.clone());
                    if card.state == CardState::AwaitingApproval {
                        card.state = CardState::Queued;
                    }
                });
            }
            ToolEvent::Started { call } => {
                self.transcript.update_card(call, |card| {
                    card.state = CardState::Running;
                    card.started = now;
                });
                if let Some(card) = self.transcript.card(call) {
                    self.status.activity = Activity::RunningTool(card.name.clone());
                }
            }
            ToolEvent::Subagent { call, status } => self
                .transcript
                .update_card(call, |card| card.subagent = Some(status.clone())),
            ToolEvent::ChildEvent { call, inner } => self.fold_child(call, inner),
            ToolEvent::OutputTail { call, chunk } => self
                .transcript
                .update_card(call, |card| card.push_tail(chunk)),
            ToolEvent::Warned { call, message } => self
                .transcript
                .update_card(call, |card| card.warnings.push(message.clone())),
            ToolEvent::Finished { call, result, .. } => {
                self.approval.settle(call);
                let source = crate::bus::ChangeSource::Call(call.clone());
                let diff_index = match &result.output {
                    Some(ToolOutput::FileChanged(change)) => {
                        Some(self.diffs.push_from(change.clone(), source, 0))
                    }
                    // What a command or a subagent created, changed or deleted browses
                    // like edits.
                    Some(
                        ToolOutput::Command(crate::tool_output::CommandRun { changes, .. })
                        | ToolOutput::Subagent(crate::tool_output::SubagentRun { changes, .. }),
                    ) => changes
                        .iter()
                        .enumerate()
                        .map(|(file, change)| {
                            self.diffs.push_from(change.clone(), source.clone(), file)
                        })
                        .min(),
                    Some(ToolOutput::Todos { todos }) => {
                        self.todos.set(todos.clone());
                        None
                    }
                    _ => None,
                };
                self.todos.settle(call);
                self.transcript.update_card(call, |card| {
                    card.diff_index = diff_index;
                    card.finish(result.clone(), now);
                });
                self.link_job_card(call, result);
                if matches!(result.output, Some(ToolOutput::Subagent(_))) {
                    self.count_running_children();
                }
                if !self.transcript.is_animating() && self.busy {
                    self.status.activity = Activity::Thinking;
                }
            }
        }
    }
}

mod children;
mod events;
