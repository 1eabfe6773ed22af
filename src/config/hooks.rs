//! The `[hooks]` table: the user's own programs at fixed points of a session (SPEC §11.9), as
//! `[[hooks.pre_tool]]`, `[[hooks.post_tool]]`, ... entries, plus `max_stop_blocks`. The same
//! shape is read from a project's `.cairn/config.toml` by `hooks::load`; which hooks run and
//! how is the `hooks` service's business, this file only says what a config may hold.

use serde::Deserialize;

/// What a `pre_tool` or `user_prompt` hook that fails (crashes, times out, prints bad JSON,
/// cannot start) does to the call or prompt it guards.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OnError {
    /// Fail closed: the call is denied, and the model and the user are told why.
    #[default]
    Deny,
    /// Fail open: the failure is shown, and the call goes on as if the hook had no opinion.
    Allow,
}

/// One `[[hooks.EVENT]]` entry.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HookEntry {
    /// A regex over tool names, matched whole (`bash|edit_file|mcp__github__.*`); none, `""`
    /// or `*`: every tool. Only tool events look at it.
    pub matcher: Option<String>,
    /// Run by `sh -c` in the workspace.
    pub command: String,
    /// Default 30.
    pub timeout_secs: Option<u64>,
    pub on_error: Option<OnError>,
}

/// The `[hooks]` table.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HooksFile {
    #[serde(default)]
    pub pre_tool: Vec<HookEntry>,
    #[serde(default)]
    pub post_tool: Vec<HookEntry>,
    #[serde(default)]
    pub user_prompt: Vec<HookEntry>,
    #[serde(default)]
    pub stop: Vec<HookEntry>,
    #[serde(default)]
    pub session_start: Vec<HookEntry>,
    #[serde(default)]
    pub pre_compact: Vec<HookEntry>,
    #[serde(default)]
    pub notification: Vec<HookEntry>,
    /// How often `stop` hooks may send the model back to work in one turn (default 3).
    pub max_stop_blocks: Option<u32>,
}

impl HooksFile {
    /// Layers add hooks (the user's file, then `--config`), in that order; a later layer's
    /// `max_stop_blocks` wins.
    pub fn merge(mut self, over: HooksFile) -> HooksFile {
        self.pre_tool.extend(over.pre_tool);
        self.post_tool.extend(over.post_tool);
        self.user_prompt.extend(over.user_prompt);
        self.stop.extend(over.stop);
        self.session_start.extend(over.session_start);
        self.pre_compact.extend(over.pre_compact);
        self.notification.extend(over.notification);
        self.max_stop_blocks = over.max_stop_blocks.or(self.max_stop_blocks);
        self
    }

    /// The entries by event name, in config order.
    pub fn by_event(&self) -> [(&'static str, &[HookEntry]); 7] {
        [
            ("pre_tool", &self.pre_tool),
            ("post_tool", &self.post_tool),
            ("user_prompt", &self.user_prompt),
            ("stop", &self.stop),
            ("session_start", &self.session_start),
            ("pre_compact", &self.pre_compact),
            ("notification", &self.notification),
        ]
    }
}
