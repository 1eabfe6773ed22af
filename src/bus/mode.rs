//! How much runs without asking: the mode the user picks and Shift+Tab cycles.

use serde::{Deserialize, Serialize};

/// How much runs without asking.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
#[value(rename_all = "kebab-case")]
pub enum Mode {
    /// Every mutating call asks.
    Ask,
    /// Edits inside the workspace run; commands ask unless known to be read-only.
    #[default]
    AutoEdit,
    /// Only dangerous commands (and writes outside the workspace) ask.
    Auto,
    /// Nothing asks, everything runs (the sandbox still applies when enabled).
    Never,
    /// Planning: reads and read-only commands run, every write and every other command is
    /// refused with an error naming `exit_plan_mode`, which proposes the plan to the user.
    Plan,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Ask => "ask",
            Mode::AutoEdit => "auto-edit",
            Mode::Auto => "auto",
            Mode::Never => "never",
            Mode::Plan => "plan",
        }
    }

    /// The mode Shift+Tab switches to: ask → auto-edit → auto → plan → ask. `never` is not in
    /// the cycle (it is chosen on purpose, by name); from it the cycle starts again at `ask`.
    pub fn next_in_cycle(self) -> Mode {
        match self {
            Mode::Ask => Mode::AutoEdit,
            Mode::AutoEdit => Mode::Auto,
            Mode::Auto => Mode::Plan,
            Mode::Plan | Mode::Never => Mode::Ask,
        }
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "ask" => Ok(Mode::Ask),
            "auto-edit" | "auto_edit" => Ok(Mode::AutoEdit),
            "auto" => Ok(Mode::Auto),
            "never" => Ok(Mode::Never),
            "plan" => Ok(Mode::Plan),
            other => Err(format!(
                "unknown mode `{other}` (ask, auto-edit, auto, plan, never)"
            )),
        }
    }
}
