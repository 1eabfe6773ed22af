//! The editor's prompt as cairn's request: text parts joined, images as attachments, resource
//! links as `@` mentions (the agent reads them as any mention, through the gate's checks), and
//! embedded resources as context blocks in the text; `/undo`, `/redo` and `/compact` as the
//! engine's commands.

use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, ContentBlock, EmbeddedResourceResource,
    UnstructuredCommandInput,
};
use base64::Engine as _;

use crate::bus::{Attachment, Restore, UserCommand};

/// What a prompt asks of the engine.
#[derive(Debug, PartialEq)]
pub enum PromptAsk {
    /// A request (the user's commands and skills expand in the agent, as typed in the TUI).
    Submit(UserCommand),
    /// A built-in command that is not a request.
    Command(UserCommand),
}

/// The prompt's parts as one request.
pub fn read(blocks: &[ContentBlock], workspace: &std::path::Path) -> Result<PromptAsk, String> {
    let mut text = String::new();
    let mut attach = Vec::new();
    let mut context = Vec::new();
    for block in blocks {
        match block {
            ContentBlock::Text(part) => text.push_str(&part.text),
            ContentBlock::Image(image) => {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(image.data.as_bytes())
                    .map_err(|err| format!("an image of the prompt is not base64: {err}"))?;
                let name = image
                    .uri
                    .as_deref()
                    .and_then(|uri| uri.rsplit('/').next())
                    .filter(|name| !name.is_empty())
                    .unwrap_or("image")
                    .to_string();
                attach.push(Attachment::ImageBytes { name, bytes });
            }
            ContentBlock::ResourceLink(link) => {
                let mention = mention_of(&link.uri, workspace).unwrap_or_else(|| link.uri.clone());
                if !text.is_empty() && !text.ends_with(char::is_whitespace) {
                    text.push(' ');
                }
                text.push_str(&mention);
                text.push(' ');
            }
            ContentBlock::Resource(embedded) => match &embedded.resource {
                EmbeddedResourceResource::TextResourceContents(resource) => {
                    context.push(format!(
                        "<context uri=\"{}\">\n{}\n</context>",
                        resource.uri,
                        resource.text.trim_end()
                    ));
                }
                EmbeddedResourceResource::BlobResourceContents(blob) => {
                    let image = blob
                        .mime_type
                        .as_deref()
                        .is_some_and(|mime| mime.starts_with("image/"));
                    if image
                        && let Ok(bytes) =
                            base64::engine::general_purpose::STANDARD.decode(blob.blob.as_bytes())
                    {
                        let name = blob.uri.rsplit('/').next().unwrap_or("image").to_string();
                        attach.push(Attachment::ImageBytes { name, bytes });
                    } else {
                        context.push(format!(
                            "<context uri=\"{}\">(binary content, not shown)</context>",
                            blob.uri
                        ));
                    }
                }
                _ => {}
            },
            _ => return Err("cairn takes text, images and resources, not audio".into()),
        }
    }
    if attach.is_empty()
        && context.is_empty()
        && let Some(command) = built_in(text.trim())
    {
        return Ok(PromptAsk::Command(command));
    }
    if !context.is_empty() {
        text = format!("{}\n\n{text}", context.join("\n\n"));
    }
    if text.trim().is_empty() && attach.is_empty() {
        return Err("the prompt is empty".into());
    }
    Ok(PromptAsk::Submit(UserCommand::Submit { text, attach }))
}

/// A `file://` link as an `@` mention: relative inside the workspace, quoted when it has a
/// space.
fn mention_of(uri: &str, workspace: &std::path::Path) -> Option<String> {
    let url = url::Url::parse(uri).ok()?;
    if url.scheme() != "file" {
        return None;
    }
    let path = url.to_file_path().ok()?;
    let shown = path
        .strip_prefix(workspace)
        .map(|rel| rel.to_path_buf())
        .unwrap_or(path);
    let shown = shown.display().to_string();
    Some(if shown.contains(char::is_whitespace) {
        format!("@\"{shown}\"")
    } else {
        format!("@{shown}")
    })
}

/// `/undo`, `/redo` and `/compact [focus]` as the engine's commands.
fn built_in(text: &str) -> Option<UserCommand> {
    let (name, rest) = match text.split_once(char::is_whitespace) {
        Some((name, rest)) => (name, rest.trim()),
        None => (text, ""),
    };
    match name {
        "/undo" if rest.is_empty() => Some(UserCommand::Restore {
            what: Restore::Undo,
            apply: true,
        }),
        "/redo" if rest.is_empty() => Some(UserCommand::Restore {
            what: Restore::Redo,
            apply: true,
        }),
        "/compact" => Some(UserCommand::Compact {
            focus: (!rest.is_empty()).then(|| rest.to_string()),
        }),
        _ => None,
    }
}

/// The slash commands the editor offers: cairn's built-ins that work here, then the user's
/// and the project's commands and skills.
pub fn available_commands(
    dirs: &crate::dirs::Dirs,
    workspace: &std::path::Path,
) -> Vec<AvailableCommand> {
    let mut out = vec![
        AvailableCommand::new("undo", "Take back the file changes of the last turn"),
        AvailableCommand::new("redo", "Put back what the last undo took away"),
        AvailableCommand::new("compact", "Compact the conversation now").input(Some(
            AvailableCommandInput::Unstructured(UnstructuredCommandInput::new(
                "what to keep (optional)",
            )),
        )),
        AvailableCommand::new("init", "Write an AGENTS.md for this project"),
    ];
    let sources = crate::skills::Sources::with_dirs(workspace, dirs);
    let found = crate::skills::commands::discover_commands(&sources);
    for command in found.items {
        if out.iter().any(|known| known.name == command.name) {
            continue;
        }
        let description = if command.description.is_empty() {
            format!("/{}", command.name)
        } else {
            command.description.clone()
        };
        out.push(
            AvailableCommand::new(command.name.clone(), description).input(Some(
                AvailableCommandInput::Unstructured(UnstructuredCommandInput::new("arguments")),
            )),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use agent_client_protocol::v1::schema::{
        EmbeddedResource, ImageContent, ResourceLink, TextContent, TextResourceContents,
    };

    #[test]
    fn parts_become_one_request() {
        let ws = std::path::Path::new("/w");
        let blocks = vec![
            ContentBlock::Text(TextContent::new("look at")),
            ContentBlock::ResourceLink(ResourceLink::new("a b.rs", "file:///w/src/a%20b.rs")),
            ContentBlock::Resource(EmbeddedResource::new(
                EmbeddedResourceResource::TextResourceContents(TextResourceContents::new(
                    "fn main() {}",
                    "file:///w/main.rs",
                )),
            )),
            ContentBlock::Image(ImageContent::new("aGk=", "image/png")),
        ];
        let PromptAsk::Submit(UserCommand::Submit { text, attach }) = read(&blocks, ws).unwrap()
        else {
            panic!()
        };
        assert!(text.contains("look at @\"src/a b.rs\""), "{text}");
        assert!(text.starts_with("<context uri=\"file:///w/main.rs\">\nfn main() {}\n</context>"));
        assert_eq!(
            attach,
            vec![Attachment::ImageBytes {
                name: "image".into(),
                bytes: b"hi".to_vec()
            }]
        );
        assert_eq!(
            read(&[ContentBlock::Text(TextContent::new("/undo"))], ws).unwrap(),
            PromptAsk::Command(UserCommand::Restore {
                what: Restore::Undo,
                apply: true
            })
        );
    }
}
