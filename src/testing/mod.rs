//! Test doubles other tests and demos drive cairn with: a scripted OpenAI-compatible server
//! (`MockLlm`) that plays `Script`s and records what cairn sent.

pub mod mock_llm;
pub mod mock_script;

pub use mock_llm::{MockLlm, MockOptions, NO_MORE_TURNS, RecordedRequest};
pub use mock_script::{MockCall, ReasoningFormat, Reply, Script, token_text};
