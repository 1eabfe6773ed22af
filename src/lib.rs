//! cairn: a terminal coding agent.
//!
//! ```text
//!  tui / exec printer ──UserCommand──► agent loop ──► llm (OpenAI-compatible SSE)
//!          ▲                               │
//!          └──────────AgentEvent───────────┤ asks the gate (permissions), then
//!                                          ▼
//!                     tools runtime ──► tools ──► fs (confinement, write queue) ──► files
//!                                          │  └──► process (sandbox, process groups, limits)
//!                                          ▼
//!                     session log (append-only JSONL, the single source of truth)
//! ```
//!
//! Start with `bus` (the events), `tools` (the tool trait), `agent` (the loop). The one map of
//! the modules, their layers, the service order and what each may use: docs/architecture.md
//! (checked by tests/it/architecture.rs).

pub mod acp;
pub mod agent;
pub mod bus;
pub mod checkpoint;
pub mod cli;
pub mod config;
pub mod content;
pub mod dirs;
pub mod exec;
pub mod finder;
pub mod fs;
pub mod hooks;
pub mod launch;
pub mod llm;
pub mod lsp;
pub mod mcp;
pub mod models;
pub mod net;
pub mod paste;
pub mod permissions;
pub mod policy_cmd;
pub mod process;
pub mod secret_stores;
pub mod secrets;
pub mod session_log;
pub mod skills;
pub mod subcommands;
pub mod sync;
#[cfg(feature = "testing")]
pub mod testing;
pub mod time_travel;
pub mod tool_output;
pub mod tools;
pub mod trust;
pub mod tui;
pub mod visible;
pub mod web;
