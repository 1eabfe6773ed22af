//! The names the model sees for MCP tools: `mcp__<server>__<tool>`, every character outside
//! `[A-Za-z0-9_-]` replaced by `_`, at most 64 characters (providers refuse longer names); a
//! name that had to be cut or changed ends in a short hash of the original server and tool, so
//! two tools never collide and the name is the same in every session.

use sha2::Digest as _;

/// The longest tool name providers accept.
pub const MAX_NAME: usize = 64;
/// What every MCP tool name starts with.
pub const PREFIX: &str = "mcp__";
const HASH_CHARS: usize = 8;

/// `server` with every character outside `[A-Za-z0-9_-]` replaced by `_`.
pub fn sanitized(part: &str) -> String {
    part.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The name the model sees for `tool` of `server`.
pub fn tool_name(server: &str, tool: &str) -> String {
    let plain = format!("{PREFIX}{}__{}", sanitized(server), sanitized(tool));
    let changed = sanitized(server) != server || sanitized(tool) != tool;
    if plain.len() <= MAX_NAME && !changed {
        return plain;
    }
    let digest = sha2::Sha256::digest(format!("{server}\0{tool}").as_bytes());
    let hash: String = digest
        .iter()
        .take(HASH_CHARS / 2)
        .map(|b| format!("{b:02x}"))
        .collect();
    let keep = MAX_NAME - HASH_CHARS - 1;
    let head: String = plain.chars().take(keep).collect();
    format!("{head}_{hash}")
}

/// The rule word that covers every tool of `server`: `mcp__<server>__*`.
pub fn server_wildcard(server: &str) -> String {
    format!("{PREFIX}{}__*", sanitized(server))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid(name: &str) -> bool {
        name.len() <= MAX_NAME
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    }

    #[test]
    fn plain_names_are_kept_as_they_are() {
        assert_eq!(
            tool_name("github", "list_issues"),
            "mcp__github__list_issues"
        );
        assert_eq!(server_wildcard("github"), "mcp__github__*");
    }

    #[test]
    fn spaces_and_long_names_give_valid_stable_distinct_names() {
        let long = "a".repeat(80);
        let one = tool_name("my server", &long);
        assert!(valid(&one), "{one}");
        assert!(one.starts_with("mcp__my_server__aaa"), "{one}");
        assert_eq!(one, tool_name("my server", &long), "stable");
        let other = tool_name("my server", &format!("{long}b"));
        assert!(valid(&other) && other != one, "{other}");
        // `my_server` and `my server` sanitise alike but stay apart.
        assert_ne!(tool_name("my server", "x"), tool_name("my_server", "x"));
        assert!(valid(&tool_name("sérvér", "tööl.x")));
    }
}
