//! A step that reads the model's arguments, kept from taking the agent down.

/// Runs a step of checking a call that sees the model's arguments, so a bug there becomes an
/// error result instead of taking the agent down.
pub(super) fn guarded<T>(tool: &str, step: impl FnOnce() -> T) -> Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(step)).map_err(|_| {
        tracing::error!(tool, "checking a call panicked");
        format!(
            "internal error while checking this {tool} call (details in cairn's log); try a simpler call"
        )
    })
}
