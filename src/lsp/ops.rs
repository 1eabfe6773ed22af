//! What the `lsp` tool asks a server: `definition`, `references`, `hover`, `symbols`
//! (document or workspace) and `diagnostics`, answered as `path:line:col` lists with one line
//! of context each, capped. Answers are read with `lsp-types`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use lsp_types::{
    DocumentSymbol, DocumentSymbolResponse, GotoDefinitionResponse, Hover, HoverContents, Location,
    MarkedString, SymbolInformation, WorkspaceSymbolResponse,
};
use serde_json::{Value, json};

use super::{LanguageServer, Lsp, file_uri, servers, uri_path};

/// Entries listed at most.
const LISTED: usize = 50;
/// Characters of hover text kept.
const HOVER_CHARS: usize = 4000;
/// How long a question may wait for a server that is starting, and for its answer.
const ASK_LIMIT: Duration = Duration::from_secs(20);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LspOp {
    Definition,
    References,
    Hover,
    Symbols,
    Diagnostics,
}

impl LspOp {
    pub fn parse(text: &str) -> Option<LspOp> {
        Some(match text {
            "definition" => LspOp::Definition,
            "references" => LspOp::References,
            "hover" => LspOp::Hover,
            "symbols" => LspOp::Symbols,
            "diagnostics" => LspOp::Diagnostics,
            _ => return None,
        })
    }
}

/// One question of the `lsp` tool.
#[derive(Debug, Clone)]
pub struct Ask {
    pub op: LspOp,
    /// The file (absolute), if given.
    pub path: Option<PathBuf>,
    /// 1-based.
    pub line: Option<u32>,
    pub column: Option<u32>,
    pub query: Option<String>,
}

impl Lsp {
    /// Answers one `lsp` tool call; `Err` is the message for the model.
    pub async fn ask(&self, ask: &Ask) -> Result<String, String> {
        let workspace = self.settings().workspace.clone();
        let show = |p: &Path| display(&workspace, p);
        let Some(path) = &ask.path else {
            return match ask.op {
                LspOp::Symbols => {
                    self.workspace_symbols(ask.query.as_deref().unwrap_or(""), &show)
                        .await
                }
                LspOp::Diagnostics => Ok(self.all_diagnostics(&show).await),
                _ => Err("`path`, `line` and `column` are needed for this op".into()),
            };
        };
        let Some(spec) = self.spec_for(path) else {
            let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
            return Err(format!(
                "no language server for {} (.{ext} files): configure one as [lsp.NAME] with languages = [\"{ext}\"]; `cairn lsp list` shows what runs",
                show(path)
            ));
        };
        let server = self.server(&spec, path, Instant::now() + ASK_LIMIT).await?;
        let text = std::fs::read(path).map_err(|err| format!("{}: {err}", show(path)))?;
        let text = String::from_utf8_lossy(&text).into_owned();
        let uri = file_uri(path);
        server.sync(&uri, &servers::language_id(path), &text).await;
        let position = || -> Result<Value, String> {
            let (Some(line), Some(column)) = (ask.line, ask.column) else {
                return Err("`line` and `column` (1-based) are needed for this op".into());
            };
            let line_text = text
                .lines()
                .nth(line.saturating_sub(1) as usize)
                .unwrap_or("");
            let character = to_units(line_text, column.saturating_sub(1) as usize, server.utf8);
            Ok(json!({"line": line.saturating_sub(1), "character": character}))
        };
        let doc = json!({"uri": uri});
        let ask_server = |method: &'static str, params: Value| {
            let server = server.clone();
            async move {
                server
                    .request(method, params, ASK_LIMIT)
                    .await
                    .map_err(|err| format!("{}: {method}: {err}", server.spec.name))
            }
        };
        match ask.op {
            LspOp::Definition => {
                let answer = ask_server(
                    "textDocument/definition",
                    json!({"textDocument": doc, "position": position()?}),
                )
                .await?;
                let locations =
                    match serde_json::from_value::<Option<GotoDefinitionResponse>>(answer) {
                        Ok(Some(GotoDefinitionResponse::Scalar(l))) => vec![l],
                        Ok(Some(GotoDefinitionResponse::Array(ls))) => ls,
                        Ok(Some(GotoDefinitionResponse::Link(links))) => links
                            .into_iter()
                            .map(|l| Location::new(l.target_uri, l.target_selection_range))
                            .collect(),
                        Ok(None) => Vec::new(),
                        Err(err) => return Err(format!("unreadable answer: {err}")),
                    };
                Ok(list(&locations, &server, &show, "no definition found"))
            }
            LspOp::References => {
                let answer = ask_server(
                    "textDocument/references",
                    json!({"textDocument": doc, "position": position()?, "context": {"includeDeclaration": true}}),
                )
                .await?;
                let locations: Vec<Location> =
                    serde_json::from_value::<Option<Vec<Location>>>(answer)
                        .map_err(|err| format!("unreadable answer: {err}"))?
                        .unwrap_or_default();
                Ok(list(&locations, &server, &show, "no references found"))
            }
            LspOp::Hover => {
                let answer = ask_server(
                    "textDocument/hover",
                    json!({"textDocument": doc, "position": position()?}),
                )
                .await?;
                let hover: Option<Hover> = serde_json::from_value(answer)
                    .map_err(|err| format!("unreadable answer: {err}"))?;
                let Some(hover) = hover else {
                    return Ok("nothing to show here".into());
                };
                let text = match hover.contents {
                    HoverContents::Markup(m) => m.value,
                    HoverContents::Scalar(s) => marked(s),
                    HoverContents::Array(list) => list
                        .into_iter()
                        .map(marked)
                        .collect::<Vec<_>>()
                        .join("\n\n"),
                };
                Ok(cut(text.trim(), HOVER_CHARS))
            }
            LspOp::Symbols => {
                if let Some(query) = &ask.query {
                    return self.workspace_symbols(query, &show).await;
                }
                let answer =
                    ask_server("textDocument/documentSymbol", json!({"textDocument": doc})).await?;
                let symbols: Option<DocumentSymbolResponse> = serde_json::from_value(answer)
                    .map_err(|err| format!("unreadable answer: {err}"))?;
                let mut lines = Vec::new();
                match symbols {
                    Some(DocumentSymbolResponse::Flat(flat)) => {
                        for s in flat {
                            lines.push(symbol_information(&s, &show));
                        }
                    }
                    Some(DocumentSymbolResponse::Nested(nested)) => {
                        nest(&nested, 0, &show(path), &mut lines);
                    }
                    None => {}
                }
                Ok(capped(lines, "no symbols"))
            }
            LspOp::Diagnostics => {
                let version = server.version(&uri).await.unwrap_or(1);
                if server.pulls() {
                    let _ = server.pull(&uri, version, self.settings().wait).await;
                }
                let store = &server.shared.store;
                let deadline = Instant::now() + self.settings().wait;
                let mut arrivals = store.subscribe();
                let report = loop {
                    match store.current_for(&uri, version, super::store::Since::ANY) {
                        super::store::Lookup::Current(r) => break Some(r),
                        _ if Instant::now() >= deadline => break store.latest(&uri),
                        _ => {}
                    }
                    let _ = tokio::time::timeout_at(deadline.into(), arrivals.changed()).await;
                };
                let Some(report) = report else {
                    return Ok(format!("{}: no diagnostics reported yet", show(path)));
                };
                let lines: Vec<String> = report
                    .items
                    .iter()
                    .map(|d| super::diagnose::line(&show(path), d))
                    .collect();
                Ok(capped(lines, &format!("{}: no diagnostics", show(path))))
            }
        }
    }

    async fn workspace_symbols(
        &self,
        query: &str,
        show: &(dyn Fn(&Path) -> String + Sync),
    ) -> Result<String, String> {
        let running = self.running();
        if running.is_empty() {
            return Err(
                "no language server is running yet: give a `path` (a file of the language) to start one".into(),
            );
        }
        let mut lines = Vec::new();
        for server in running {
            let answer = server
                .request("workspace/symbol", json!({"query": query}), ASK_LIMIT)
                .await
                .map_err(|err| format!("{}: workspace/symbol: {err}", server.spec.name))?;
            match serde_json::from_value::<Option<WorkspaceSymbolResponse>>(answer) {
                Ok(Some(WorkspaceSymbolResponse::Flat(flat))) => {
                    lines.extend(flat.iter().map(|s| symbol_information(s, show)));
                }
                Ok(Some(WorkspaceSymbolResponse::Nested(nested))) => {
                    for s in nested {
                        let place = match s.location {
                            lsp_types::OneOf::Left(l) => location_line(&l, &server, show),
                            lsp_types::OneOf::Right(w) => uri_path(w.uri.as_str())
                                .map_or(w.uri.as_str().to_string(), |p| show(&p)),
                        };
                        lines.push(format!("{place} {:?} {}", s.kind, s.name));
                    }
                }
                Ok(None) => {}
                Err(err) => return Err(format!("unreadable answer: {err}")),
            }
        }
        Ok(capped(lines, "no symbols match"))
    }

    async fn all_diagnostics(&self, show: &(dyn Fn(&Path) -> String + Sync)) -> String {
        let mut lines = Vec::new();
        for server in self.running() {
            let mut reports = server.shared.store.all_latest();
            reports.sort_by(|a, b| a.0.cmp(&b.0));
            for (uri, report) in reports {
                let shown = uri_path(&uri).map_or(uri.clone(), |p| show(&p));
                lines.extend(
                    report
                        .items
                        .iter()
                        .map(|d| super::diagnose::line(&shown, d)),
                );
            }
        }
        capped(lines, "no diagnostics in the open files")
    }

    /// The servers running now.
    fn running(&self) -> Vec<Arc<LanguageServer>> {
        use crate::sync::MutexExt as _;
        self.inner
            .slots
            .locked()
            .values()
            .filter_map(|slot| match &*slot.phase.borrow() {
                super::ServerPhase::Ready(server) => Some(server.clone()),
                _ => None,
            })
            .collect()
    }
}

fn marked(s: MarkedString) -> String {
    match s {
        MarkedString::String(s) => s,
        MarkedString::LanguageString(l) => l.value,
    }
}

fn nest(symbols: &[DocumentSymbol], depth: usize, path: &str, out: &mut Vec<String>) {
    for s in symbols {
        out.push(format!(
            "{}{path}:{}:{} {:?} {}",
            "  ".repeat(depth),
            s.selection_range.start.line + 1,
            s.selection_range.start.character + 1,
            s.kind,
            s.name
        ));
        if let Some(children) = &s.children {
            nest(children, depth + 1, path, out);
        }
    }
}

fn symbol_information(s: &SymbolInformation, show: &(dyn Fn(&Path) -> String + Sync)) -> String {
    let uri = s.location.uri.as_str();
    let path = uri_path(uri).map_or(uri.to_string(), |p| show(&p));
    format!(
        "{path}:{}:{} {:?} {}",
        s.location.range.start.line + 1,
        s.location.range.start.character + 1,
        s.kind,
        s.name
    )
}

/// `path:line:col  context` for each location.
fn list(
    locations: &[Location],
    server: &LanguageServer,
    show: &(dyn Fn(&Path) -> String + Sync),
    none: &str,
) -> String {
    let lines = locations
        .iter()
        .map(|l| location_line(l, server, show))
        .collect();
    capped(lines, none)
}

fn location_line(
    l: &Location,
    server: &LanguageServer,
    show: &(dyn Fn(&Path) -> String + Sync),
) -> String {
    let uri = l.uri.as_str();
    let Some(path) = uri_path(uri) else {
        return format!(
            "{uri}:{}:{}",
            l.range.start.line + 1,
            l.range.start.character + 1
        );
    };
    let line_text = std::fs::read(&path)
        .ok()
        .and_then(|bytes| {
            String::from_utf8_lossy(&bytes)
                .lines()
                .nth(l.range.start.line as usize)
                .map(str::to_string)
        })
        .unwrap_or_default();
    let column = from_units(&line_text, l.range.start.character as usize, server.utf8) + 1;
    format!(
        "{}:{}:{column}  {}",
        show(&path),
        l.range.start.line + 1,
        cut(line_text.trim(), 200)
    )
}

fn capped(lines: Vec<String>, none: &str) -> String {
    if lines.is_empty() {
        return none.to_string();
    }
    let more = lines.len().saturating_sub(LISTED);
    let mut text = lines
        .into_iter()
        .take(LISTED)
        .collect::<Vec<_>>()
        .join("\n");
    if more > 0 {
        text.push_str(&format!("\n… and {more} more"));
    }
    text
}

fn cut(text: &str, chars: usize) -> String {
    if text.chars().count() <= chars {
        return text.to_string();
    }
    text.chars().take(chars).collect::<String>() + "…"
}

/// A path as the model sees it: relative to the workspace when inside it.
pub fn display(workspace: &Path, path: &Path) -> String {
    path.strip_prefix(workspace)
        .map_or_else(|_| path.display().to_string(), |p| p.display().to_string())
}

/// A 0-based column in characters as the server counts (bytes for `utf-8`, else UTF-16).
fn to_units(line: &str, chars: usize, utf8: bool) -> usize {
    line.chars()
        .take(chars)
        .map(|c| if utf8 { c.len_utf8() } else { c.len_utf16() })
        .sum::<usize>()
        + chars.saturating_sub(line.chars().count())
}

/// The server's column (bytes or UTF-16 units) as characters.
fn from_units(line: &str, units: usize, utf8: bool) -> usize {
    let mut seen = 0;
    for (i, c) in line.chars().enumerate() {
        if seen >= units {
            return i;
        }
        seen += if utf8 { c.len_utf8() } else { c.len_utf16() };
    }
    line.chars().count() + units.saturating_sub(seen)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_convert_between_characters_and_the_servers_units() {
        let line = "é𝄞x";
        assert_eq!(to_units(line, 2, false), 3);
        assert_eq!(to_units(line, 2, true), 6);
        assert_eq!(from_units(line, 3, false), 2);
        assert_eq!(from_units(line, 6, true), 2);
        assert_eq!(to_units("ab", 4, false), 4);
    }
}
