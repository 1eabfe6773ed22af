//! `mock-mcp SCRIPT.json`: a scripted MCP server on stdio (`cairn::testing::mock_mcp`), for
//! tests and for trying cairn's MCP client by hand.

fn main() -> std::process::ExitCode {
    let Some(path) = std::env::args_os().nth(1) else {
        let _ = std::io::Write::write_all(&mut std::io::stderr(), b"usage: mock-mcp SCRIPT.json\n");
        return std::process::ExitCode::from(2);
    };
    let script = std::fs::read_to_string(&path)
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default();
    cairn::testing::mock_mcp::serve_stdio(script);
    std::process::ExitCode::SUCCESS
}
