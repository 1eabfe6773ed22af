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
//! - The after-window follows the typist: 80 ms is the shortest gap of a fast typist's burst,
//!   not of a slow one's (a 150 ms/key typist's first letter after the dead time waited 80 ms,
//!   saw nothing, and acted). Once `SAMPLES` gaps between this person's text keys are known
//!   (gaps under `MIN_GAP` are one write, a paste or rollover, and say nothing of a pace), the
//!   window is their 90th-percentile gap and a quarter more, between `AFTER` and `AFTER_MAX`:
//!   the second key of their typing arrives within it, and a deliberate press waits no longer
//!   than their own typing between two keys. `AFTER_MAX` 250 ms covers a 150 ms/key typist
//!   (a 90th percentile near 200 ms) and keeps an answer well under the half second a person
//!   notices as a lag.
//! - Held keys: a terminal repeats a held key after its repeat delay (250–660 ms by default),
//!   then every 30–50 ms, so holding `j` typed `jjj…`. A key that moves (scrolls, selects) and
//!   is the key that just acted, pressed again within `REPEAT` of it with the same prompt on
//!   top, acts at once: holding `j` scrolls. Answers never repeat.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// A key this soon after a key typed as text is text too.
pub const BEFORE: Duration = Duration::from_millis(500);
/// A lone key waits this long for a follower before it acts (the least: see `StandAlone::after`).
pub const AFTER: Duration = Duration::from_millis(80);
/// The longest a lone key waits, however slowly the person types.
pub const AFTER_MAX: Duration = Duration::from_millis(250);
/// Gaps between text keys shorter than this are one write (a burst, a paste, rollover).
pub const MIN_GAP: Duration = Duration::from_millis(20);
/// How many gaps of the person's typing are known before the window follows them.
pub const SAMPLES: usize = 8;
/// The gaps kept (the latest).
const KEPT: usize = 64;
/// A moving key pressed again this soon after it acted is the key held down (or pressed
/// again on purpose): it acts at once.
pub const REPEAT: Duration = Duration::from_millis(750);
/// A prompt takes no key this long after it appeared (or entered a new step).
pub const DEAD_TIME: Duration = Duration::from_millis(500);

/// What becomes of a key that would act.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyVerdict {
    /// It is text: to the input, now.
    Text,
    /// It may stand alone: held until its window has passed (see `StandAlone::due`).
    Wait,
    /// A moving key held down: it acts now.
    Act,
}

/// What became of a key that waited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// It stood alone: it acts.
    Act,
    /// Another key followed it, or its prompt changed: it is text.
    Text,
}

/// Whether a key that would act moves (scrolls, selects: may repeat while held) or answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyKind {
    Moves,
    Answers,
}

/// A key held back to see whether another follows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pending {
    pub key: KeyEvent,
    pub at: Instant,
    /// What the key would have answered (see `StandAlone::prompt_seen`): a key whose prompt
    /// changed meanwhile answers nothing.
    pub prompt: Option<u64>,
    pub kind: KeyKind,
}

/// What the rule remembers: the last key typed as text, the key waiting, the prompt shown.
#[derive(Debug, Clone, Default)]
pub struct StandAlone {
    last_text: Option<Instant>,
    pending: Option<Pending>,
    /// The prompt on top (an identity of its step) and since when it is shown.
    prompt: Option<(u64, Instant)>,
    /// The person's gaps between text keys (the latest `KEPT`, each at least `MIN_GAP`).
    gaps: VecDeque<Duration>,
    /// The moving key that acted last: when it was pressed, on which prompt.
    moved: Option<(KeyEvent, Instant, Option<u64>)>,
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
        if let Some(at) = self.last_text {
            self.gap(now.saturating_duration_since(at));
        }
        self.last_text = Some(self.last_text.map_or(now, |at| at.max(now)));
    }

    /// A gap between two keys of the person's typing (one within `BEFORE` of the other).
    fn gap(&mut self, gap: Duration) {
        if gap < MIN_GAP || gap >= BEFORE {
            return;
        }
        if self.gaps.len() == KEPT {
            self.gaps.pop_front();
        }
        self.gaps.push_back(gap);
    }

    /// How long a lone key waits for a follower: `AFTER` until the person's pace is known,
    /// then their 90th-percentile gap and a quarter, within `AFTER`..=`AFTER_MAX`.
    pub fn after(&self) -> Duration {
        if self.gaps.len() < SAMPLES {
            return AFTER;
        }
        let mut gaps: Vec<Duration> = self.gaps.iter().copied().collect();
        gaps.sort_unstable();
        let p90 = gaps[(gaps.len() * 9 / 10).min(gaps.len() - 1)];
        (p90 + p90 / 4).clamp(AFTER, AFTER_MAX)
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
    /// nothing more until `release` or `interrupt` hands it back. `Act`: a moving key held
    /// down (see `REPEAT`) acts now.
    pub fn judge(&mut self, key: KeyEvent, now: Instant, kind: KeyKind) -> KeyVerdict {
        if self.typing(now) || self.dead(now) {
            return KeyVerdict::Text;
        }
        if kind == KeyKind::Moves && self.repeats(&key, now) {
            self.moved = Some((key, now, self.prompt()));
            return KeyVerdict::Act;
        }
        self.pending = Some(Pending {
            key,
            at: now,
            prompt: self.prompt(),
            kind,
        });
        KeyVerdict::Wait
    }

    /// `key` is the moving key that acted last, again within `REPEAT`, on the same prompt.
    fn repeats(&self, key: &KeyEvent, now: Instant) -> bool {
        self.moved.is_some_and(|(last, at, prompt)| {
            last == *key && prompt == self.prompt() && now.saturating_duration_since(at) < REPEAT
        })
    }

    /// When the waiting key acts, if one waits.
    pub fn due(&self) -> Option<Instant> {
        let after = self.after();
        self.pending.map(|p| p.at + after)
    }

    /// Another key (`next`; `None`: a paste) arrived at `now`: the waiting key, if any, with
    /// whether it stood alone (its window had passed, and its prompt is the one shown) or is
    /// text after all. The same moving key again is that key held down: both act.
    pub fn interrupt(&mut self, now: Instant, next: Option<&KeyEvent>) -> Option<(KeyEvent, Fate)> {
        let pending = self.pending?;
        let held = pending.kind == KeyKind::Moves && next == Some(&pending.key);
        let waited = now >= pending.at + self.after();
        if !waited && !held {
            // A follower within the window: both are the person's typing.
            self.gap(now.saturating_duration_since(pending.at));
        }
        self.decide(waited || held)
    }

    /// The waiting key once its window has passed at `now` with nothing after it: it acts
    /// unless its prompt changed meanwhile (then it is text).
    pub fn release(&mut self, now: Instant) -> Option<(KeyEvent, Fate)> {
        if self.due().is_some_and(|due| now >= due) {
            self.decide(true)
        } else {
            None
        }
    }

    /// The waiting key's fate: it acts when `stood` (nothing followed within its window, or
    /// it is held down) and its prompt is still the one shown.
    fn decide(&mut self, stood: bool) -> Option<(KeyEvent, Fate)> {
        let pending = self.pending.take()?;
        let alone = stood && pending.prompt == self.prompt();
        if !alone {
            return Some((pending.key, Fate::Text));
        }
        if pending.kind == KeyKind::Moves {
            self.moved = Some((pending.key, pending.at, pending.prompt));
        }
        Some((pending.key, Fate::Act))
    }
}

#[cfg(test)]
#[path = "stand_alone_tests.rs"]
mod tests;
