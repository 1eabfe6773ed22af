//! Name resolution for the egress client, behind a trait so tests map names to the addresses
//! they need (`evil.test` → `127.0.0.2`) and can change the answer between two lookups.
//! The system resolver is the production one; `MapResolver` is the tests'.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;

/// Turns a host name into addresses. Called once per hop; the answer is what gets checked and
/// then connected to (nothing resolves the name again in between).
#[async_trait]
pub trait Resolve: Send + Sync {
    async fn resolve(&self, host: &str) -> std::io::Result<Vec<IpAddr>>;
}

/// The operating system's resolver (`getaddrinfo` on a blocking thread, through tokio).
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemResolver;

#[async_trait]
impl Resolve for SystemResolver {
    async fn resolve(&self, host: &str) -> std::io::Result<Vec<IpAddr>> {
        let addrs = tokio::net::lookup_host((host, 0)).await?;
        let mut ips: Vec<IpAddr> = addrs.map(|a| a.ip()).collect();
        ips.dedup();
        Ok(ips)
    }
}

/// Answers from a table, each name with a list of answers used in turn (the last one repeats),
/// counting lookups. Names not in the table fail like NXDOMAIN.
#[derive(Debug, Default)]
pub struct MapResolver {
    answers: Mutex<HashMap<String, Vec<Vec<IpAddr>>>>,
    lookups: AtomicUsize,
}

impl MapResolver {
    pub fn new() -> Self {
        Self::default()
    }

    /// `host` resolves to `ips`.
    pub fn with(self, host: &str, ips: &[IpAddr]) -> Self {
        self.with_answers(host, vec![ips.to_vec()])
    }

    /// `host` resolves to the first answer, then the next, … (the last one repeats).
    pub fn with_answers(self, host: &str, answers: Vec<Vec<IpAddr>>) -> Self {
        self.answers
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .insert(host.to_ascii_lowercase(), answers);
        self
    }

    /// How many lookups were made, of any name.
    pub fn lookups(&self) -> usize {
        self.lookups.load(Ordering::SeqCst)
    }
}

#[async_trait]
impl Resolve for MapResolver {
    async fn resolve(&self, host: &str) -> std::io::Result<Vec<IpAddr>> {
        self.lookups.fetch_add(1, Ordering::SeqCst);
        let mut table = self
            .answers
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let not_found = || {
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("no address for {host}"),
            )
        };
        let answers = table
            .get_mut(&host.to_ascii_lowercase())
            .ok_or_else(not_found)?;
        let answer = if answers.len() > 1 {
            answers.remove(0)
        } else {
            answers.first().cloned().ok_or_else(not_found)?
        };
        Ok(answer)
    }
}
