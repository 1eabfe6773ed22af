//! A server's life in the session: started lazily, in the background, on the first file of
//! its language (at the root its markers give), restarted with its open documents after a
//! crash at most `MAX_RESTARTS` times and then left off, and stopped with the session
//! (`shutdown`, `exit`, its process group).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};

use tokio::sync::watch;

use super::{LanguageServer, Lsp, LspInner, MAX_RESTARTS, ServerSpec, server, servers, uri_path};
use crate::sync::MutexExt;

#[derive(Clone)]
pub(super) enum ServerPhase {
    Starting,
    Ready(Arc<LanguageServer>),
    Failed(String),
}

pub(super) struct ServerSlot {
    pub(super) phase: watch::Sender<ServerPhase>,
    pub(super) crashes: u32,
    /// Counts starts, so an old server's exit does not count against a new one.
    pub(super) generation: u64,
    /// Where it runs: decided by the first file it was started for.
    pub(super) root: PathBuf,
}

impl Lsp {
    /// Stops every server: `shutdown`, `exit`, and its process group (nothing survives).
    pub async fn shutdown(&self) {
        let running: Vec<Arc<LanguageServer>> = {
            let mut slots = self.inner.slots.locked();
            slots
                .values_mut()
                .filter_map(|slot| {
                    let old = slot.phase.send_replace(ServerPhase::Failed(
                        "stopped at the end of the session".into(),
                    ));
                    match old {
                        ServerPhase::Ready(server) => Some(server),
                        _ => None,
                    }
                })
                .collect()
        };
        futures_util::future::join_all(running.iter().map(|s| s.stop())).await;
    }
}

impl LspInner {
    /// The phase of `spec`'s server, starting it in the background when it has none.
    pub(super) fn ensure(
        self: &Arc<Self>,
        spec: &Arc<ServerSpec>,
        file: &Path,
    ) -> watch::Receiver<ServerPhase> {
        let mut slots = self.slots.locked();
        if let Some(slot) = slots.get(&spec.name) {
            return slot.phase.subscribe();
        }
        let (phase, rx) = watch::channel(ServerPhase::Starting);
        slots.insert(
            spec.name.clone(),
            ServerSlot {
                phase,
                crashes: 0,
                generation: 1,
                root: root_for(&self.settings.workspace, spec, file),
            },
        );
        drop(slots);
        self.spawn_start(spec.clone(), 1, Vec::new());
        rx
    }

    fn spawn_start(self: &Arc<Self>, spec: Arc<ServerSpec>, generation: u64, reopen: Vec<Reopen>) {
        let inner = self.clone();
        tokio::spawn(async move {
            let weak: Weak<LspInner> = Arc::downgrade(&inner);
            let name = spec.name.clone();
            let on_exit: Box<dyn Fn() + Send + Sync> = Box::new(move || {
                if let Some(inner) = weak.upgrade() {
                    inner.crashed(&name, generation);
                }
            });
            let cache = inner.cache.path().join(&spec.name);
            let settings = server::server_settings(&inner.settings.process, &cache);
            let root = inner
                .slots
                .locked()
                .get(&spec.name)
                .map_or_else(|| inner.settings.workspace.clone(), |s| s.root.clone());
            let started =
                LanguageServer::start(spec.clone(), &root, &settings, &cache, on_exit).await;
            let phase = match started {
                Ok(server) => {
                    for doc in reopen {
                        server.sync(&doc.uri, &doc.language, &doc.text).await;
                    }
                    ServerPhase::Ready(Arc::new(server))
                }
                Err(why) => {
                    tracing::warn!(server = %spec.name, "language server failed: {why}");
                    ServerPhase::Failed(why)
                }
            };
            let stale = {
                let slots = inner.slots.locked();
                match slots.get(&spec.name) {
                    Some(slot) if slot.generation == generation => {
                        slot.phase.send_replace(phase);
                        None
                    }
                    // The session ended (or the server was restarted) meanwhile.
                    _ => Some(phase),
                }
            };
            if let Some(ServerPhase::Ready(server)) = stale {
                server.stop().await;
            }
        });
    }

    /// A server exited without being asked: restarted (with its open documents) at most
    /// `MAX_RESTARTS` times, then left off.
    fn crashed(self: &Arc<Self>, name: &str, generation: u64) {
        let Some(spec) = self
            .settings
            .servers
            .iter()
            .find(|s| s.name == name)
            .cloned()
        else {
            return;
        };
        let mut slots = self.slots.locked();
        let Some(slot) = slots.get_mut(name) else {
            return;
        };
        if slot.generation != generation {
            return;
        }
        // An exit while starting is the start's failure, reported by it; not a crash.
        let old = match &*slot.phase.borrow() {
            ServerPhase::Ready(server) => server.clone(),
            _ => return,
        };
        slot.crashes += 1;
        slot.generation += 1;
        let crashes = slot.crashes;
        let generation = slot.generation;
        if crashes > MAX_RESTARTS {
            slot.phase.send_replace(ServerPhase::Failed(format!(
                "it crashed {crashes} times; left off for this session"
            )));
        } else {
            slot.phase.send_replace(ServerPhase::Starting);
        }
        drop(slots);
        tracing::warn!(server = %name, crashes, "language server exited");
        let inner = self.clone();
        tokio::spawn(async move {
            let mut reopen = Vec::new();
            {
                for (uri, doc) in old.docs.lock().await.iter() {
                    let language = uri_path(uri)
                        .map(|p| servers::language_id(&p))
                        .unwrap_or_default();
                    reopen.push(Reopen {
                        uri: uri.clone(),
                        language,
                        text: doc.text.clone(),
                    });
                }
                // Whatever it left running goes with its group.
                old.stop().await;
            }
            if crashes <= MAX_RESTARTS {
                inner.spawn_start(spec, generation, reopen);
            }
        });
    }

    /// The newest write's number for `path`.
    pub(super) fn latest_edit(&self, path: &Path) -> u64 {
        self.edits.locked().get(path).copied().unwrap_or(0)
    }

    pub(super) fn crashes(&self, name: &str) -> u32 {
        self.slots.locked().get(name).map_or(0, |s| s.crashes)
    }
}

/// A document to open again in a restarted server.
struct Reopen {
    uri: String,
    language: String,
    text: String,
}

/// The root a server is initialised with: the nearest directory above `file`, inside the
/// workspace, that holds one of its root markers; else the workspace.
fn root_for(workspace: &Path, spec: &ServerSpec, file: &Path) -> PathBuf {
    let mut dir = file.parent();
    while let Some(here) = dir {
        if !here.starts_with(workspace) {
            break;
        }
        if spec.root_markers.iter().any(|m| here.join(m).exists()) {
            return here.to_path_buf();
        }
        if here == workspace {
            break;
        }
        dir = here.parent();
    }
    workspace.to_path_buf()
}
