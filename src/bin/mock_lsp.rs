//! `mock-lsp SCRIPT.json`: the scripted language server of the tests (`cairn::testing::
//! mock_lsp`), speaking LSP on stdin and stdout.

use cairn::testing::mock_lsp::{MockLspScript, serve_stdio};

fn main() {
    let script = std::env::args()
        .nth(1)
        .and_then(|path| std::fs::read_to_string(path).ok())
        .and_then(|text| serde_json::from_str::<MockLspScript>(&text).ok())
        .unwrap_or_default();
    serve_stdio(script);
}
