//! The one integration-test binary: each module drives cairn the way a user or a model would.

mod agent_turns;
mod architecture;
mod checkpoint_wall;
mod context;
mod exec_e2e;
mod guarded_e2e;
mod llm_client;
mod mock_llm;
mod policy;
mod project_trust;
mod resume;
mod revert;
mod revert_undo;
mod rewind;
mod sandbox;
mod sandbox_protected;
mod sandbox_sockets;
mod stream_fixtures;
mod support;
mod tools_bash;
mod tools_files;
mod tools_jobs;
mod tools_search;
mod tui_pty;
mod undo;
mod write_queue;
