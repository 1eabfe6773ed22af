//! The slash commands: every built-in `/name` with its aliases, arguments and help, and the
//! lookup input dispatch and the `?` overlay read.

/// What a slash command does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlashAction {
    New,
    Resume,
    Mode,
    Model,
    Diffs,
    Compact,
    Cost,
    Continue,
    Undo,
    Redo,
    Rewind,
    Skills,
    Jobs,
    Lsp,
    Init,
    Retry,
    Help,
    Quit,
}

/// One slash command with its aliases.
#[derive(Debug)]
pub struct Slash {
    pub names: &'static [&'static str],
    pub args: &'static str,
    pub action: SlashAction,
    pub help: &'static str,
}

/// Every slash command.
pub const SLASH_COMMANDS: &[Slash] = &[
    Slash {
        names: &["/new"],
        args: "",
        action: SlashAction::New,
        help: "start a new session",
    },
    Slash {
        names: &["/resume"],
        args: "",
        action: SlashAction::Resume,
        help: "pick a saved session to resume",
    },
    Slash {
        names: &["/mode"],
        args: "[ask|auto-edit|auto|plan|never]",
        action: SlashAction::Mode,
        help: "change the permission mode (alone: a picker)",
    },
    Slash {
        names: &["/model"],
        args: "[NAME]",
        action: SlashAction::Model,
        help: "change the model (alone: a picker of the provider's models)",
    },
    Slash {
        names: &["/diff", "/diffs"],
        args: "",
        action: SlashAction::Diffs,
        help: "focus the diff pane",
    },
    Slash {
        names: &["/compact"],
        args: "[FOCUS]",
        action: SlashAction::Compact,
        help: "free the context window (a summary; FOCUS says what to keep)",
    },
    Slash {
        names: &["/continue"],
        args: "",
        action: SlashAction::Continue,
        help: "ask for the rest of an answer cut at the output limit",
    },
    Slash {
        names: &["/retry"],
        args: "",
        action: SlashAction::Retry,
        help: "send the message whose request failed again (Ctrl+R too)",
    },
    Slash {
        names: &["/undo"],
        args: "",
        action: SlashAction::Undo,
        help: "take back the last turn's file changes (shown first)",
    },
    Slash {
        names: &["/redo"],
        args: "",
        action: SlashAction::Redo,
        help: "put back what the last /undo took back",
    },
    Slash {
        names: &["/rewind"],
        args: "",
        action: SlashAction::Rewind,
        help: "go back to an earlier message (files, conversation or both)",
    },
    Slash {
        names: &["/skills"],
        args: "[trust NAME]",
        action: SlashAction::Skills,
        help: "the skills: listed, shortened or omitted; trust NAME: a project skill's allowed-tools",
    },
    Slash {
        names: &["/jobs"],
        args: "",
        action: SlashAction::Jobs,
        help: "the background jobs: output, kill",
    },
    Slash {
        names: &["/lsp"],
        args: "",
        action: SlashAction::Lsp,
        help: "the language servers: state, why one does not run, the log path",
    },
    Slash {
        names: &["/init"],
        args: "[NOTES]",
        action: SlashAction::Init,
        help: "have the model draft AGENTS.md, or improve the one there",
    },
    Slash {
        names: &["/cost"],
        args: "",
        action: SlashAction::Cost,
        help: "the cost of each request",
    },
    Slash {
        names: &["/help"],
        args: "",
        action: SlashAction::Help,
        help: "this help",
    },
    Slash {
        names: &["/quit", "/exit"],
        args: "",
        action: SlashAction::Quit,
        help: "quit",
    },
];

/// The slash command named `name` (with its leading `/`).
pub fn slash(name: &str) -> Option<SlashAction> {
    SLASH_COMMANDS
        .iter()
        .find(|s| s.names.contains(&name))
        .map(|s| s.action)
}

/// A slash command as the help writes it: `/quit  /exit` or `/mode ask|auto`.
pub fn slash_label(slash: &Slash) -> String {
    let names = slash.names.join("  ");
    if slash.args.is_empty() {
        names
    } else {
        format!("{names} {}", slash.args)
    }
}
