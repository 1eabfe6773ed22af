//! What a provider's refusal says about the model's window: whether the request was too long
//! for it, and the window's size when the message names it.

use crate::llm::LlmError;

/// Whether the provider refused the request for being longer than the model's window.
/// OpenAI (`context_length_exceeded`), DeepSeek ("This model's maximum context length is …
/// tokens"), Anthropic behind a proxy ("prompt is too long"), vLLM, llama.cpp and Ollama.
pub fn is_context_overflow(err: &LlmError) -> bool {
    let message = match err {
        LlmError::Status {
            status: 400 | 413 | 422 | 500,
            message,
        } => message,
        LlmError::Provider { message, .. } => message,
        _ => return false,
    };
    let lower = message.to_lowercase();
    [
        "context_length_exceeded",
        "maximum context length",
        "prompt is too long",
        "exceeds the available context size",
        "exceed_context_size",
        "context size has been exceeded",
        "context window",
        "too many tokens",
        "input is too long",
        "reduce the length of the messages",
        "longer than the model's context length",
        "prompt length exceeds",
        "input length exceeds",
    ]
    .iter()
    .any(|needle| lower.contains(needle))
}

/// The window a context-length error states ("maximum context length is 65536 tokens").
pub fn window_in_error(message: &str) -> Option<u64> {
    let lower = message.to_lowercase();
    [
        "maximum context length is ",
        "context length of ",
        "context size (",
        "maximum context length of ",
    ]
    .iter()
    .find_map(|marker| {
        let at = lower.find(marker)? + marker.len();
        let digits: String = lower[at..]
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == ',')
            .filter(char::is_ascii_digit)
            .collect();
        digits.parse().ok().filter(|&n: &u64| n >= 1024)
    })
}
