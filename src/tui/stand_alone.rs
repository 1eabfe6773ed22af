//! The one rule for single-key actions: a printable key that would act (approve, trust,
//! revert, kill, pick, scroll a pane) acts only when it stands alone. No key typed as text came
//! within `BEFORE` of it, none follows within `AFTER` (it waits that long), and the prompt it
//! would answer has been open for `DEAD_TIME`. Otherwise it is text and goes to the input, in
//! order with the keys around it. `input.rs` asks this for every key; the clock is injected
//! (every call takes `now`), so the rule is tested on made-up instants.
//!
//! The windows, and why:
//! - `AFTER` 80 ms: keys of one burst (a word typed with rolled-over keys, a paste the terminal
//!   did not bracket, anything written at once) arrive well within it, while a deliberate
//!   press waits less than the ~100 ms at which a reaction stops feeling immediate.
//! - `BEFORE` 500 ms: the longest pause between two keys of a word for most typists (the
//!   median is 150–250 ms), so a key in the middle of typing never acts, however the typing
//!   began; it costs a deliberate press nothing, which does not follow typing.
//! - `DEAD_TIME` 500 ms: a person reads a prompt before answering it (a choice after reading
//!   takes longer than half a second); a key sooner than that was on its way before the prompt
//!   was seen.

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// A key this soon after a key typed as text is text too.
pub const BEFORE: Duration = Duration::from_millis(500);
/// A lone key waits this long for a follower before it acts.
pub const AFTER: Duration = Duration::from_millis(80);
/// A prompt takes no key this long after it appeared (or entered a new step).
pub const DEAD_TIME: Duration = Duration::from_millis(500);

/// What becomes of a key that would act.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyVerdict {
    /// It is text: to the input, now.
    Text,
    /// It may stand alone: held until `AFTER` has passed (see `StandAlone::due`).
    Wait,
}

/// What became of a key that waited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// It stood alone: it acts.
    Act,
    /// Another key followed it, or its prompt changed: it is text.
    Text,
}

/// A key held back to see whether another follows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pending {
    pub key: KeyEvent,
    pub at: Instant,
    /// What the key would have answered (see `StandAlone::prompt_seen`): a key whose prompt
    /// changed meanwhile answers nothing.
    pub prompt: Option<u64>,
}

/// What the rule remembers: the last key typed as text, the key waiting, the prompt shown.
#[derive(Debug, Clone, Default)]
pub struct StandAlone {
    last_text: Option<Instant>,
    pending: Option<Pending>,
    /// The prompt on top (an identity of its step) and since when it is shown.
    prompt: Option<(u64, Instant)>,
}

/// A key that types a character: no Ctrl or Alt (Shift is part of the character).
pub fn is_printable(key: &KeyEvent) -> bool {
    matches!(key.code, KeyCode::Char(c) if !c.is_control())
        && !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
}

impl StandAlone {
    /// The prompt that takes keys now, by an identity of its step (`None`: no prompt). A new
    /// identity starts its dead time at `now`.
    pub fn prompt_seen(&mut self, prompt: Option<u64>, now: Instant) {
        match (prompt, self.prompt) {
            (None, _) => self.prompt = None,
            (Some(id), Some((shown, _))) if id == shown => {}
            (Some(id), _) => self.prompt = Some((id, now)),
        }
    }

    /// The prompt's identity now (what a waiting key is checked against).
    pub fn prompt(&self) -> Option<u64> {
        self.prompt.map(|(id, _)| id)
    }

    /// A key went to the input (or a paste arrived) as text at `now`.
    pub fn typed(&mut self, now: Instant) {
        self.last_text = Some(self.last_text.map_or(now, |at| at.max(now)));
    }

    /// The user is typing: a key typed as text came less than `BEFORE` ago.
    pub fn typing(&self, now: Instant) -> bool {
        self.last_text
            .is_some_and(|at| now.saturating_duration_since(at) < BEFORE)
    }

    /// The prompt on top appeared less than `DEAD_TIME` ago.
    pub fn dead(&self, now: Instant) -> bool {
        self.prompt
            .is_some_and(|(_, since)| now.saturating_duration_since(since) < DEAD_TIME)
    }

    /// A prompt is on top but takes no key now: it has just appeared, or the user is typing.
    pub fn holding(&self, now: Instant) -> bool {
        self.prompt.is_some() && (self.dead(now) || self.typing(now))
    }

    /// When the user stops counting as typing (a frame is due then: the prompt says so).
    pub fn typing_until(&self) -> Option<Instant> {
        self.last_text.map(|at| at + BEFORE)
    }

    /// Judges a printable key that would act at `now`. `Wait` parks it: the caller does
    /// nothing more until `release` or `interrupt` hands it back.
    pub fn judge(&mut self, key: KeyEvent, now: Instant) -> KeyVerdict {
        if self.typing(now) || self.dead(now) {
            return KeyVerdict::Text;
        }
        self.pending = Some(Pending {
            key,
            at: now,
            prompt: self.prompt(),
        });
        KeyVerdict::Wait
    }

    /// When the waiting key acts, if one waits.
    pub fn due(&self) -> Option<Instant> {
        self.pending.map(|p| p.at + AFTER)
    }

    /// Another input arrived at `now`: the waiting key, if any, with whether it stood alone
    /// (its `AFTER` had passed, and its prompt is the one shown) or is text after all.
    pub fn interrupt(&mut self, now: Instant) -> Option<(KeyEvent, Fate)> {
        let pending = self.pending.take()?;
        let alone = now >= pending.at + AFTER && pending.prompt == self.prompt();
        Some((pending.key, if alone { Fate::Act } else { Fate::Text }))
    }

    /// The waiting key once its `AFTER` has passed at `now` with nothing after it: it acts
    /// unless its prompt changed meanwhile (then it is text).
    pub fn release(&mut self, now: Instant) -> Option<(KeyEvent, Fate)> {
        if self.due().is_some_and(|due| now >= due) {
            self.interrupt(now)
        } else {
            None
        }
    }
}

#[cfg(test)]
#[path = "stand_alone_tests.rs"]
mod tests;
