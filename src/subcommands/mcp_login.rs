//! `cairn mcp login NAME [--no-browser]`: logs in to one of the user's HTTP servers with OAuth
//! (`mcp::oauth::login`). The authorization URL is printed and, with a browser opener on PATH
//! (`xdg-open`, `open`), opened; the browser comes back to a loopback redirect on 127.0.0.1.
//! The tokens go to the data directory, readable by the user only, and are never printed.

use std::io::Write as _;

use color_eyre::eyre::Result;

use crate::dirs::Dirs;
use crate::exec::status;
use crate::mcp::oauth::login::{BROWSER_WAIT, LoginOutcome, login};

/// Prints `text` now (the login waits after the URL), through the terminal sanitiser.
fn say(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(crate::visible::terminal::clean(text).as_bytes());
    let _ = out.flush();
}

/// Opens `url` with the platform's opener when one is on PATH; says whether it started.
fn open_browser(url: &str) -> bool {
    let path = std::env::var_os("PATH");
    let Some(opener) = ["xdg-open", "open"]
        .iter()
        .find_map(|name| crate::lsp::servers::which(name, path.as_deref()))
    else {
        return false;
    };
    let started = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    match started {
        Ok(mut child) => {
            // Reaped in the background: an opener may wait for the browser.
            std::thread::spawn(move || child.wait());
            true
        }
        Err(_) => false,
    }
}

pub async fn mcp_login(dirs: &Dirs, name: &str, browser: bool) -> Result<(String, i32)> {
    let config = super::tools_config(dirs, None)?;
    let Some(file) = config.mcp_servers.get(name) else {
        return Ok((
            format!(
                "no MCP server `{name}` in your config (`[mcp_servers.{name}]` with its `url`; logins are for the servers of your own config)\n"
            ),
            status::USAGE,
        ));
    };
    let Some(url) = &file.url else {
        return Ok((
            format!("`{name}` is a stdio server: OAuth logins are for HTTP servers (`url`)\n"),
            status::USAGE,
        ));
    };
    if let Some(env) = &file.bearer_token_env {
        return Ok((
            format!(
                "`{name}` sends the token of `{env}` (bearer_token_env); remove that line to log in with OAuth instead\n"
            ),
            status::USAGE,
        ));
    }
    let network = crate::launch::network::network_stack(&config.network)?;
    let open = |authorize: &str| {
        say(&format!(
            "Open this URL in your browser to log in to `{name}`:\n\n  {authorize}\n\n"
        ));
        if browser && open_browser(authorize) {
            say("(opened in your browser)\n");
        }
        say(&format!(
            "Waiting for the browser to come back (at most {} minutes)...\n",
            BROWSER_WAIT.as_secs() / 60
        ));
    };
    let outcome = login(&network, dirs.data(), name, url, file.oauth.as_ref(), open).await;
    Ok(match outcome {
        Ok(LoginOutcome::Done { refreshable, .. }) => (
            format!(
                "Logged in to `{name}`. The token is kept in cairn's data directory, readable by you only{}.\n",
                if refreshable {
                    ", and refreshed when it expires"
                } else {
                    " (no refresh token: log in again when it expires)"
                }
            ),
            status::OK,
        ),
        Ok(LoginOutcome::NotNeeded) => (
            format!("`{name}` asks for no authorization: there is nothing to log in to.\n"),
            status::OK,
        ),
        Err(err) => (
            format!(
                "logging in to `{name}` failed: {}\n",
                crate::secrets::redact(&err.to_string())
            ),
            status::FAILED,
        ),
    })
}
