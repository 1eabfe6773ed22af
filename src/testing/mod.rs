//! Test doubles other tests and demos drive cairn with: a scripted OpenAI-compatible server
//! (`MockLlm`) that plays `Script`s and records what cairn sent.

pub mod accept;
pub mod exec_count;
pub mod mock_chunks;
pub mod mock_llm;
pub mod mock_lsp;
pub mod mock_mcp;
pub mod mock_mcp_http;
pub mod mock_oauth;
pub mod mock_script;
pub mod mock_site;
pub mod privileges;

pub use exec_count::ExecCounter;
pub use mock_chunks::token_text;
pub use mock_llm::{
    MockLlm, MockOptions, NO_MORE_TURNS, RecordedRequest, Responder, context_length_exceeded_body,
    token_count,
};
pub use mock_script::{MockCall, ReasoningFormat, Script, ScriptReply};
