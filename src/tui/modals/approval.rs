//! The approval prompt: a modal over the transcript for each call the gate holds
//! (`ToolEvent::AwaitingApproval`). It shows the command highlighted, why it was held, whether
//! it would run sandboxed, the diff of a held write, and takes single keys: y, u, n, m, Esc,
//! and a or p, which widen trust beyond the call and so take a second step (a confirmation
//! line, y or n). Which keys reach it is the stand-alone rule's (`tui::stand_alone`): typing
//! goes to the input, and the prompt says so while the user types. Esc denies the calls it
//! holds (it does not defer them): the model is told, the turn goes on. A dangerous command
//! offers no "always" keys.
//! At any height the keys, the `why:` line and every dangerous part of the command stay on
//! screen; a long command is elided in the middle (its end always shown) and ↑/↓ scroll it.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::cell::Cell;
use std::collections::VecDeque;

use crate::bus::Mode;
use crate::bus::{CallId, Decision, DecisionKind};
use crate::tool_output::FileChange;

/// Diff lines shown inside the prompt at most.
const DIFF_ROWS: usize = 12;

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
    /// What its sandbox would let it reach beyond the workspace, when anything.
    pub reach: Option<String>,
    pub prefix: String,
    /// The answers the engine offers for it.
    pub decisions: Vec<DecisionKind>,
    /// Every dangerous part of a held command, as the gate found them.
    pub dangers: Vec<String>,
    pub diff: Option<FileChange>,
}

/// A held call and what it shows besides.
#[derive(Debug)]
struct HeldCall {
    held: Held,
    /// What was made visible in the command, its reason or its rule, in one line.
    notice: Option<String>,
}

impl Held {
    /// The call proposes a plan (`exit_plan_mode`): approving it switches the mode.
    pub fn is_plan(&self) -> bool {
        self.offers(DecisionKind::ApprovePlan)
    }

    pub fn offers(&self, kind: DecisionKind) -> bool {
        self.decisions.contains(&kind)
    }
}

impl HeldCall {
    /// The "always" keys (`a`, `p`): offered when the engine offers rules for the call.
    fn offers_rules(&self) -> bool {
        self.held.offers(DecisionKind::ApproveForSession)
    }
}

#[derive(Debug, Default)]
pub struct ApprovalPrompt {
    held: VecDeque<HeldCall>,
    /// The deny message being typed (after `m`).
    message: Option<String>,
    /// How far ↓ moved the upper window of a long command (its end always shows).
    scroll: usize,
    /// The largest useful `scroll` at the last render (keys clamp to it).
    max_scroll: Cell<usize>,
    /// The user is typing: the keys go to the input, and the prompt says so.
    typing: bool,
    /// `a` or `p` was pressed: the rule it would make, waiting for its confirmation.
    confirm: Option<Decision>,
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

    pub fn hold(&mut self, held: Held) {
        if !self.held.iter().any(|e| e.held.call == held.call) {
            let notice = view::hidden_notice(&held);
            self.held.push_back(HeldCall { held, notice });
        }
    }

    /// The call was decided or ended elsewhere: forget it.
    pub fn settle(&mut self, call: &CallId) {
        let was_current = self.held.front().is_some_and(|e| &e.held.call == call);
        self.held.retain(|e| &e.held.call != call);
        if was_current {
            self.next_call();
        }
    }

    pub fn clear(&mut self) {
        *self = Self::default();
    }

    /// A deny message is being typed or an "always" rule confirmed: Esc goes back to the
    /// keys, it does not deny.
    pub fn in_step(&self) -> bool {
        self.message.is_some() || self.confirm.is_some()
    }

    /// A deny message is being typed: keys are its text.
    pub fn typing_message(&self) -> bool {
        self.message.is_some()
    }

    /// Whether to say that the keys go to the input because the user is typing.
    pub fn show_typing(&mut self, typing: bool) {
        self.typing = typing;
    }

    /// Which step the prompt is at (the call shown, a confirmation or message open): a new
    /// step takes no key for the rule's dead time.
    pub fn step(&self) -> (Option<&CallId>, bool, bool) {
        (
            self.current().map(|h| &h.call),
            self.confirm.is_some(),
            self.message.is_some(),
        )
    }

    /// Whether the character `c` is one of the prompt's keys now (other characters are text).
    pub fn takes_char(&self, c: char) -> bool {
        let Some(entry) = self.held.front() else {
            return false;
        };
        if self.confirm.is_some() {
            return matches!(c, 'y' | 'n');
        }
        let held = &entry.held;
        if held.is_plan() {
            return matches!(c, 'y' | 'n' | 'm' | 'f');
        }
        match c {
            'y' | 'n' | 'm' => true,
            'a' | 'p' => entry.offers_rules(),
            'u' => held.offers(DecisionKind::ApproveUnsandboxed),
            _ => false,
        }
    }

    /// A call became the one shown: its own keys, from the start.
    fn next_call(&mut self) {
        self.message = None;
        self.confirm = None;
        self.scroll = 0;
        self.plan_choice = 0;
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
        self.next_call();
        decisions
    }

    /// Handles a key; returns the decision once the user made one. Which keys reach it is the
    /// caller's (the stand-alone rule): here a key is an answer.
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
        if let Some(rule) = &self.confirm {
            // The second step of an "always" answer: y makes the rule, n or Esc goes back.
            return match key.code {
                KeyCode::Char('y') => {
                    let rule = rule.clone();
                    self.decide(rule)
                }
                KeyCode::Char('n') | KeyCode::Esc => {
                    self.confirm = None;
                    None
                }
                _ => None,
            };
        }
        if is_plan {
            return self.plan_key(key);
        }
        match key.code {
            KeyCode::Char('y') => self.decide(Decision::Approve),
            KeyCode::Char('a') if offers_rules => {
                let prefix = held.prefix.clone();
                self.confirm = Some(Decision::ApproveForSession { prefix });
                None
            }
            KeyCode::Char('p') if offers_rules => {
                let prefix = held.prefix.clone();
                self.confirm = Some(Decision::ApproveForProject { prefix });
                None
            }
            KeyCode::Char('u') if held.offers(DecisionKind::ApproveUnsandboxed) => {
                self.decide(Decision::ApproveUnsandboxed)
            }
            KeyCode::Char('n') => self.decide(Decision::Deny { message: None }),
            KeyCode::Char('m') => {
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
            KeyCode::Char('y') | KeyCode::Enter => {
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
            KeyCode::Char('n') => self.decide(Decision::Deny { message: None }),
            KeyCode::Char('m' | 'f') => {
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
        // The next call is a new step: a second press does not answer it (the dead time).
        self.next_call();
        Some((entry.held.call, decision))
    }
}

mod view;

#[cfg(test)]
#[path = "approval_tests.rs"]
mod tests;
