//! The approval prompt: a modal over the transcript for each call the gate holds
//! (`ToolEvent::AwaitingApproval`). It shows the command highlighted, why it was held, whether
//! it would run sandboxed, the diff of a held write, and takes single keys: y, a, p, n, m, Esc.
//! Every other key does nothing while it is open, so nothing is approved or typed by accident.
//!
//! A prompt that opens while the user is typing is *held back*: it takes no key until the
//! typing has paused for `TYPING_PAUSE` (each key typed meanwhile pushes that further, so a
//! burst begun before it opened never answers it, however long it goes on), and says so; the
//! keys typed meanwhile go on into the input. Esc denies the calls it holds (it does not defer
//! them): the model is told, the turn goes on. A dangerous command offers no "always" keys.
//! At any height the keys, the `why:` line and every dangerous part of the command stay on
//! screen; a long command is elided in the middle (its end always shown) and ↑/↓ scroll it.

use std::cell::Cell;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::bus::EXIT_PLAN_MODE;
use crate::bus::Mode;
use crate::bus::{CallId, Decision};
use crate::tool_output::FileChange;

/// Diff lines shown inside the prompt at most.
const DIFF_ROWS: usize = 12;

/// A key this recent when a prompt opens means the user is typing: the prompt holds its keys
/// back until no key has come for this long.
pub const TYPING_PAUSE: Duration = Duration::from_millis(500);
/// Once the typing stopped, the prompt stays held back at least this long after it opened, so
/// the user sees it before a key counts.
pub const OPEN_GUARD: Duration = Duration::from_millis(250);

/// The modes an approved plan can be carried out in, in the order ←/→ offer them.
const PLAN_MODES: [Mode; 3] = [Mode::AutoEdit, Mode::Auto, Mode::Ask];

/// The message a denial by Esc sends, so the model knows nobody approved and why.
const ESC_DENIAL: &str = "the user closed the approval prompt (Esc) without approving";

/// One held call, from the `AwaitingApproval` event.
#[derive(Debug, Clone, PartialEq)]
pub struct Held {
    pub call: CallId,
    pub name: String,
    pub subject: String,
    pub why: String,
    pub sandboxed: bool,
    pub prefix: String,
    /// Every dangerous part of a held command, as the gate found them.
    pub dangers: Vec<String>,
    pub diff: Option<FileChange>,
}

/// A held call and what it shows besides.
#[derive(Debug)]
struct Entry {
    held: Held,
    /// What was made visible in the command, its reason or its rule, in one line.
    notice: Option<String>,
}

impl Held {
    /// The call proposes a plan (`exit_plan_mode`): approving it switches the mode.
    pub fn is_plan(&self) -> bool {
        self.name == EXIT_PLAN_MODE
    }
}

impl Entry {
    /// "Always" rules are not offered for a dangerous command, nor when there is no prefix
    /// to make one of.
    fn offers_rules(&self) -> bool {
        self.held.dangers.is_empty() && !self.held.prefix.trim().is_empty() && !self.held.is_plan()
    }
}

#[derive(Debug, Default)]
pub struct ApprovalPrompt {
    held: VecDeque<Entry>,
    /// The deny message being typed (after `m`).
    message: Option<String>,
    /// How far ↓ moved the upper window of a long command (its end always shows).
    scroll: usize,
    /// The largest useful `scroll` at the last render (keys clamp to it).
    max_scroll: Cell<usize>,
    /// The last key the user pressed anywhere (see `note_key`).
    last_key: Option<Instant>,
    /// While set, the current call takes no key before this instant: the user was typing.
    held_back_until: Option<Instant>,
    /// For a plan: which of `PLAN_MODES` approving it switches to.
    plan_choice: usize,
}

impl ApprovalPrompt {
    pub fn is_open(&self) -> bool {
        !self.held.is_empty()
    }

    pub fn current(&self) -> Option<&Held> {
        self.held.front().map(|e| &e.held)
    }

    pub fn hold(&mut self, held: Held, now: Instant) {
        if !self.held.iter().any(|e| e.held.call == held.call) {
            let notice = view::hidden_notice(&held);
            self.held.push_back(Entry { held, notice });
            if self.held.len() == 1 {
                self.arm(now);
            }
        }
    }

    /// The call was decided or ended elsewhere: forget it.
    pub fn settle(&mut self, call: &CallId, now: Instant) {
        let was_current = self.held.front().is_some_and(|e| &e.held.call == call);
        self.held.retain(|e| &e.held.call != call);
        if was_current {
            self.message = None;
            self.scroll = 0;
            self.arm(now);
        }
    }

    pub fn clear(&mut self) {
        let last_key = self.last_key;
        *self = Self::default();
        self.last_key = last_key;
    }

    /// A deny message is being typed (Esc goes back to the keys, it does not deny).
    pub fn typing_message(&self) -> bool {
        self.message.is_some()
    }

    /// A call became the one shown at `now`: held back when the user is typing.
    fn arm(&mut self, now: Instant) {
        self.plan_choice = 0;
        self.held_back_until = self
            .last_key
            .filter(|at| self.is_open() && now.saturating_duration_since(*at) < TYPING_PAUSE)
            .map(|at| (at + TYPING_PAUSE).max(now + OPEN_GUARD));
    }

    /// Every key press reaches here first (whether or not a prompt is open): a key pressed
    /// while the prompt is held back keeps it held back until the next pause.
    pub fn note_key(&mut self, now: Instant) {
        self.last_key = Some(now);
        if let Some(until) = &mut self.held_back_until {
            *until = (*until).max(now + TYPING_PAUSE);
        }
    }

    /// Whether the prompt is open but takes no key yet, because the user is typing.
    pub fn held_back(&self, now: Instant) -> bool {
        self.is_open() && self.held_back_until.is_some_and(|until| now < until)
    }

    /// When the held-back prompt starts taking keys (a frame is due then).
    pub fn takes_keys_at(&self) -> Option<Instant> {
        self.held_back_until.filter(|_| self.is_open())
    }

    /// Forgets a hold-back that has run out; true when the prompt changed.
    pub fn expire(&mut self, now: Instant) -> bool {
        if self.held_back_until.is_some_and(|until| until <= now) {
            self.held_back_until = None;
            return true;
        }
        false
    }

    /// Esc: every call the prompt holds is denied (none is left waiting behind a closed box).
    pub fn dismiss(&mut self) -> Vec<(CallId, Decision)> {
        let decisions = self
            .held
            .drain(..)
            .map(|e| {
                let decision = Decision::Deny {
                    message: Some(ESC_DENIAL.to_string()),
                };
                (e.held.call, decision)
            })
            .collect();
        self.message = None;
        self.scroll = 0;
        self.held_back_until = None;
        decisions
    }

    /// Handles a key; returns the decision once the user made one. Keys are ignored while the
    /// prompt is held back (the caller routes them to the input).
    pub fn handle_key(&mut self, key: KeyEvent) -> Option<(CallId, Decision)> {
        let entry = self.held.front()?;
        let offers_rules = entry.offers_rules();
        let held = &entry.held;
        let is_plan = held.is_plan();
        if let Some(message) = &mut self.message {
            match key.code {
                KeyCode::Enter => {
                    let text = message.trim().to_string();
                    let decision = Decision::Deny {
                        message: (!text.is_empty()).then_some(text),
                    };
                    return self.decide(decision);
                }
                KeyCode::Esc => self.message = None,
                KeyCode::Backspace => {
                    message.pop();
                }
                KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                    message.push(c)
                }
                _ => {}
            }
            return None;
        }
        if key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
        {
            return None;
        }
        if is_plan {
            return self.plan_key(key);
        }
        match key.code {
            KeyCode::Char('y' | 'Y') => self.decide(Decision::Approve),
            KeyCode::Char('a' | 'A') if offers_rules => {
                let prefix = held.prefix.clone();
                self.decide(Decision::ApproveForSession { prefix })
            }
            KeyCode::Char('p' | 'P') if offers_rules => {
                let prefix = held.prefix.clone();
                self.decide(Decision::ApproveForProject { prefix })
            }
            KeyCode::Char('u' | 'U') if held.name == "bash" && held.sandboxed => {
                self.decide(Decision::ApproveUnsandboxed)
            }
            KeyCode::Char('n' | 'N') => self.decide(Decision::Deny { message: None }),
            KeyCode::Char('m' | 'M') => {
                self.message = Some(String::new());
                None
            }
            KeyCode::Up => {
                self.scroll = self.scroll.saturating_sub(1);
                None
            }
            KeyCode::Down => {
                self.scroll = (self.scroll + 1).min(self.max_scroll.get());
                None
            }
            _ => None,
        }
    }

    /// The keys of a plan: approve into the chosen mode, choose it, answer with feedback.
    fn plan_key(&mut self, key: KeyEvent) -> Option<(CallId, Decision)> {
        let n = PLAN_MODES.len();
        match key.code {
            KeyCode::Char('y' | 'Y') | KeyCode::Enter => {
                let mode = PLAN_MODES[self.plan_choice % n];
                self.decide(Decision::ApprovePlan { mode })
            }
            KeyCode::Left => {
                self.plan_choice = (self.plan_choice + n - 1) % n;
                None
            }
            KeyCode::Right => {
                self.plan_choice = (self.plan_choice + 1) % n;
                None
            }
            KeyCode::Char('n' | 'N') => self.decide(Decision::Deny { message: None }),
            KeyCode::Char('m' | 'M' | 'f' | 'F') => {
                self.message = Some(String::new());
                None
            }
            KeyCode::Up => {
                self.scroll = self.scroll.saturating_sub(1);
                None
            }
            KeyCode::Down => {
                self.scroll = (self.scroll + 1).min(self.max_scroll.get());
                None
            }
            _ => None,
        }
    }

    /// Pasted text goes into the deny message when one is being typed, nowhere otherwise.
    pub fn handle_paste(&mut self, text: &str) {
        if let Some(message) = &mut self.message {
            message.push_str(&text.replace(['\r', '\n'], " "));
        }
    }

    fn decide(&mut self, decision: Decision) -> Option<(CallId, Decision)> {
        let entry = self.held.pop_front()?;
        self.message = None;
        self.scroll = 0;
        // The key that decided is the last key: a second press does not answer the next call.
        if let Some(now) = self.last_key {
            self.arm(now);
        }
        Some((entry.held.call, decision))
    }
}

mod view;

#[cfg(test)]
#[path = "approval_tests.rs"]
mod tests;
