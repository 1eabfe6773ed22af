//! What the TUI starts from (a leaf: `mod.rs` runs it, `app.rs` is built from it).

/// How the agent starts the TUI.
#[derive(Debug, Clone)]
pub struct TuiOptions {
    pub provider: String,
    pub model: String,
    pub mode: crate::bus::Mode,
    /// Replay: browse a past session; nothing can be sent.
    pub read_only: bool,
    /// A prompt given on the command line, sent as soon as the UI is up.
    pub initial_prompt: Option<String>,
    /// The status line's sandbox badge says on unless this says `no sandbox: why` or
    /// `sandbox off: why`; any other text is what of the sandbox does not bind here.
    pub sandbox_off: Option<String>,
    /// Untrusted project rules to ask about first.
    pub trust: Option<crate::bus::UntrustedRules>,
    /// What the first screen says of the workspace (none in a replay).
    pub welcome: Option<crate::tui::panes::welcome::Welcome>,
    /// Where the `/` palette finds the custom commands (the session's workspace and cairn's
    /// directories; none in a replay).
    pub command_sources: Option<crate::skills::Sources>,
    /// What the user sent in this directory before, oldest first (Up brings it back).
    pub history: Vec<String>,
}

impl TuiOptions {
    /// A session shown read-only: nothing to ask, send or complete.
    pub fn read_only(provider: String, model: String, mode: crate::bus::Mode) -> Self {
        Self {
            provider,
            model,
            mode,
            read_only: true,
            initial_prompt: None,
            sandbox_off: None,
            trust: None,
            welcome: None,
            command_sources: None,
            history: Vec::new(),
        }
    }
}
