//! The `[lsp]` table: how long an edit waits for diagnostics, whether warnings count, and the
//! language servers (`[lsp.NAME]`), the user's own or changes to a built-in entry of the same
//! name. A project's `.cairn/config.toml` may hold the same table; its servers follow the trust
//! rule (read by `lsp::servers`). Which servers run and how is the `lsp` service's business.

use std::collections::BTreeMap;

use serde::Deserialize;

/// One `[lsp.NAME]` entry.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LspServerEntry {
    /// The program (looked up on `PATH` when it has no `/`); none: the built-in entry's.
    pub command: Option<String>,
    pub args: Option<Vec<String>>,
    /// File extensions (without the dot) this server is for.
    pub languages: Option<Vec<String>>,
    /// Files or directories that mark a project's root (`Cargo.toml`, `package.json`).
    pub root_markers: Option<Vec<String>>,
    /// Sent as `initializationOptions`.
    pub initialization_options: Option<toml::Value>,
    /// `false` turns a built-in entry (or this one) off.
    pub enabled: Option<bool>,
}

/// The `[lsp]` table.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct LspFile {
    /// How long an edit's result waits for its diagnostics (default 1500 ms).
    pub wait_ms: Option<u64>,
    /// Whether new warnings are reported too (default: errors only).
    pub warnings: Option<bool>,
    /// `false`: no language server at all.
    pub enabled: Option<bool>,
    /// The servers, by name.
    #[serde(flatten)]
    pub servers: BTreeMap<String, LspServerEntry>,
}

impl LspFile {
    /// A later layer wins key by key; a server named in both is merged key by key.
    pub fn merge(mut self, over: LspFile) -> LspFile {
        for (name, entry) in over.servers {
            let merged = match self.servers.remove(&name) {
                Some(old) => LspServerEntry {
                    command: entry.command.or(old.command),
                    args: entry.args.or(old.args),
                    languages: entry.languages.or(old.languages),
                    root_markers: entry.root_markers.or(old.root_markers),
                    initialization_options: entry
                        .initialization_options
                        .or(old.initialization_options),
                    enabled: entry.enabled.or(old.enabled),
                },
                None => entry,
            };
            self.servers.insert(name, merged);
        }
        LspFile {
            wait_ms: over.wait_ms.or(self.wait_ms),
            warnings: over.warnings.or(self.warnings),
            enabled: over.enabled.or(self.enabled),
            servers: self.servers,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn servers_and_settings_share_the_table_and_layers_merge_per_key() {
        let user: LspFile = toml::from_str(
            "wait_ms = 900\n[rust-analyzer]\nenabled = false\n[mine]\ncommand = \"my-ls\"\nlanguages = [\"foo\"]\n",
        )
        .unwrap();
        assert_eq!(user.wait_ms, Some(900));
        assert_eq!(user.servers["mine"].command.as_deref(), Some("my-ls"));
        let over: LspFile =
            toml::from_str("warnings = true\n[mine]\nargs = [\"--stdio\"]\n").unwrap();
        let merged = user.merge(over);
        assert_eq!(merged.wait_ms, Some(900));
        assert_eq!(merged.warnings, Some(true));
        assert_eq!(merged.servers["mine"].command.as_deref(), Some("my-ls"));
        assert_eq!(
            merged.servers["mine"].args,
            Some(vec!["--stdio".to_string()])
        );
        assert_eq!(merged.servers["rust-analyzer"].enabled, Some(false));
        assert!(toml::from_str::<LspFile>("[x]\nbogus = 1\n").is_err());
    }
}
