//! One page fetch for `web_fetch`: the egress client's request with the session's limits, the
//! body judged by type before it is read (binary refused with its type and size) and by
//! content after, decoded and put in the session's page cache.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::cache::FetchedPage;
use super::client::{EgressRequest, Hop, Reply, bounded};
use super::page::{self, BodyKind};
use super::target::Target;
use super::{EgressError, WebEnv};
use crate::content::human_bytes;
use crate::tool_output::WebHop;

/// What a fetch came to.
#[derive(Debug)]
pub enum Fetched {
    Page(Arc<FetchedPage>),
    /// A redirect to a host the caller does not follow yet.
    Unfollowed {
        hops: Vec<Hop>,
        to: Target,
    },
}

/// What the model is told the page accepts.
const ACCEPT: &str = "text/html,application/xhtml+xml,text/markdown,text/plain;q=0.9,*/*;q=0.5";

/// Fetches `target` (unless the session has it already), following redirects `follow` accepts.
pub async fn fetch_page(
    env: &WebEnv,
    target: &Target,
    follow: &(dyn Fn(&Target) -> bool + Send + Sync),
    cancel: &CancellationToken,
) -> Result<Fetched, EgressError> {
    let mut request = EgressRequest::get(target.clone());
    request.headers.push(("Accept", ACCEPT.into()));
    let work = async {
        let opened = match env.client.send(&request, follow).await? {
            Reply::Unfollowed { hops, to } => return Ok(Fetched::Unfollowed { hops, to }),
            Reply::Response(opened) => opened,
        };
        let declared = opened.content_type.clone();
        let url = opened.final_target.url.to_string();
        // Refused by type before a byte of the body is read.
        if let BodyKind::Binary(kind) = page::kind_of(declared.as_deref(), b"<html")
            && !matches!(
                kind.as_str(),
                "application/octet-stream" | "binary/octet-stream"
            )
        {
            return Err(not_text(&url, kind, opened.content_length));
        }
        let final_url = url.clone();
        let status = opened.status;
        let redirects = opened
            .hops
            .iter()
            .map(|hop| WebHop {
                status: hop.status,
                to: hop.to.clone(),
            })
            .collect();
        let body = opened.read_body(env.settings.max_bytes).await?;
        let html = match page::kind_of(declared.as_deref(), &body.bytes) {
            BodyKind::Binary(kind) => {
                return Err(not_text(&url, kind, Some(body.bytes.len() as u64)));
            }
            BodyKind::Html => true,
            BodyKind::Text => false,
        };
        let source = page::decode(&body.bytes, declared.as_deref(), html).into_owned();
        Ok(Fetched::Page(env.pages.insert(FetchedPage {
            url: target.url.to_string(),
            final_url,
            status,
            // Only the validated media type reaches the model (its header sits outside the frame).
            content_type: page::media_type(declared.as_deref()),
            bytes: body.bytes.len() as u64,
            capped: body.capped,
            redirects,
            html,
            source: Arc::new(source),
        })))
    };
    bounded(work, env.settings.timeout, cancel).await
}

fn not_text(url: &str, content_type: String, size: Option<u64>) -> EgressError {
    EgressError::NotText {
        url: url.to_string(),
        content_type,
        size: size.map_or_else(|| "size not given".into(), human_bytes),
    }
}
