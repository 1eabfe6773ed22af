//! `mock-llm --script FILE [--port N] [--record FILE] [--strict] [--simulate-cache]`: serves
//! scripted turns (a JSON array of `cairn::testing::Script`) as a streaming endpoint on
//! 127.0.0.1 (`/chat/completions`, and the same scripts as Anthropic's `/messages` and OpenAI's
//! `/responses` events), for trying cairn by hand or driving the binary from end-to-end tests.

use std::io::Write as _;
use std::path::PathBuf;

use clap::Parser;
use color_eyre::eyre::WrapErr;

use cairn::testing::{MockLlm, MockOptions, Script};

#[derive(Parser)]
#[command(
    name = "mock-llm",
    about = "Scripted model server on 127.0.0.1 (chat completions, Messages, Responses)"
)]
struct MockLlmArgs {
    /// JSON file holding an array of scripts, played one per request.
    #[arg(long)]
    script: PathBuf,
    /// Port to listen on; 0 picks a free one.
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Append each request body received to this file as a JSON line.
    #[arg(long)]
    record: Option<PathBuf>,
    /// Answer 400 to requests whose history holds tool-call arguments that are not a JSON
    /// object (as strict providers behind a proxy do).
    #[arg(long)]
    strict: bool,
    /// Report cache reads in each reply's usage as the provider's prompt cache would.
    #[arg(long)]
    simulate_cache: bool,
}

#[tokio::main]
async fn main() -> color_eyre::Result<()> {
    color_eyre::install()?;
    let args = MockLlmArgs::parse();
    let text = std::fs::read_to_string(&args.script)
        .wrap_err_with(|| format!("reading the script {}", args.script.display()))?;
    let scripts: Vec<Script> = serde_json::from_str(&text)
        .wrap_err_with(|| format!("parsing the script {}", args.script.display()))?;
    let options = MockOptions {
        port: args.port,
        record: args.record,
        strict: args.strict,
    };
    let server = MockLlm::start_with(scripts, options)
        .await
        .wrap_err("starting the server")?;
    if args.simulate_cache {
        server.simulate_cache();
    }
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "listening {}", server.url())?;
    stdout.flush()?;
    drop(stdout);
    tokio::signal::ctrl_c()
        .await
        .wrap_err("waiting for Ctrl+C")?;
    Ok(())
}
