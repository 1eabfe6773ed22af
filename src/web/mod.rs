//! The web: one egress client for every request cairn makes on a tool's behalf (web_fetch,
//! web_search, MCP over HTTP next). `target` parses and normalises URLs, `address` judges IP
//! addresses, `egress` resolves and checks a host, `client` connects only to checked addresses
//! and follows redirects by hand, `page` turns what came back into text for the model,
//! `search` talks to the configured search backend. The tools (`tools::web_fetch`,
//! `tools::web_search`) and the permission gate (per host) sit on top.

pub mod address;
pub mod client;
pub mod egress;
pub mod page;
pub mod resolve;
pub mod target;

use std::net::IpAddr;

/// What stops a request before or while it runs. Messages say what to do next.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EgressError {
    #[error("`{url}` is not a URL cairn can fetch ({why})")]
    BadUrl { url: String, why: String },
    #[error("`{url}`: only http and https URLs are fetched")]
    Scheme { url: String },
    #[error("URLs with a user name or password are not fetched; send the URL without them")]
    Credentials,
    #[error(
        "{host} resolves to {addr}, {why}; the web tools do not reach local or private \
         addresses. A server of your own can be allowed by adding \"{host_port}\" to \
         [web] allow_private in the config"
    )]
    Refused {
        host: String,
        host_port: String,
        addr: IpAddr,
        why: String,
    },
    #[error("could not resolve {host}: {why}")]
    Resolve { host: String, why: String },
    #[error("{from} redirected to {to}: a redirect from https to plain http is not followed")]
    Downgrade { from: String, to: String },
    #[error(
        "more than {max} redirects, the last to {to}; fetch that URL directly if it is the one you want"
    )]
    TooManyRedirects { max: usize, to: String },
    #[error("{url}: {why}")]
    Http { url: String, why: String },
    #[error("no answer within {secs} s (`[web] timeout_secs`); the site may be slow or down")]
    Timeout { secs: u64 },
    #[error("{}", crate::bus::CANCELLED)]
    Cancelled,
}
