//! The egress checker: before any byte goes to a host, its name is resolved once and every
//! address is judged (`address::refusal`); one refused address refuses the host, so a name
//! answering with a public and a private address cannot pick the private one at connect time.
//! The addresses it returns are the only ones the client connects to (`client::Pinned`).
//! `[web] allow_private` lets exact `host:port` pairs through, for local servers the user runs.

use std::net::IpAddr;

use super::EgressError;
use super::address::refusal;
use super::resolve::Resolve;
use super::target::{HostPort, Target};

/// How a hop reaches its host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// cairn connects itself: the checked addresses are all it may connect to.
    Direct,
    /// Through a proxy that resolves the name itself (CONNECT, `socks5h`): cairn checks what it
    /// can resolve locally and literal addresses; a name it cannot resolve is the proxy's to
    /// judge.
    Proxy,
}

/// The `[web] allow_private` part of the egress policy.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EgressPolicy {
    allow_private: Vec<HostPort>,
}

impl EgressPolicy {
    /// Builds the policy; a malformed entry is a configuration error naming it.
    pub fn new(allow_private: &[String]) -> Result<Self, String> {
        let allow_private = allow_private
            .iter()
            .map(|entry| HostPort::parse(entry))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self { allow_private })
    }

    /// Whether `target`'s exact host and port are listed in `allow_private`.
    pub fn allows_private(&self, target: &Target) -> bool {
        self.allow_private.iter().any(|entry| entry.matches(target))
    }

    /// Resolves `target` (unless it is a literal) and judges every address. Returns the
    /// addresses to connect to: empty only on a proxied route whose name did not resolve here.
    /// `trusted` (an endpoint the user configured, like a search backend) skips the address
    /// judgement but not the pinning.
    pub async fn check(
        &self,
        target: &Target,
        resolver: &dyn Resolve,
        route: Route,
        trusted: bool,
    ) -> Result<Vec<IpAddr>, EgressError> {
        let addrs = match target.literal {
            Some(ip) => vec![ip],
            None => match resolver.resolve(&target.host).await {
                Ok(addrs) if !addrs.is_empty() => addrs,
                Ok(_) | Err(_) if route == Route::Proxy => return Ok(Vec::new()),
                Ok(_) => {
                    return Err(EgressError::Resolve {
                        host: target.host.clone(),
                        why: "no address".into(),
                    });
                }
                Err(err) => {
                    return Err(EgressError::Resolve {
                        host: target.host.clone(),
                        why: err.to_string(),
                    });
                }
            },
        };
        if trusted || self.allows_private(target) {
            return Ok(addrs);
        }
        for ip in &addrs {
            if let Some(why) = refusal(*ip) {
                return Err(EgressError::Refused {
                    host: target.host.clone(),
                    host_port: target.host_port(),
                    addr: *ip,
                    why: why.to_string(),
                });
            }
        }
        Ok(addrs)
    }
}

#[cfg(test)]
#[path = "egress_tests.rs"]
mod tests;
