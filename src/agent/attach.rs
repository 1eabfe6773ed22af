//! What a request attaches before its first model call. Each `@` mention that names a file
//! becomes a part: a file through `read_file` (so it is numbered the same way and counts as
//! read for the read-before-edit rule), a directory through `list_dir` (one level, capped), an
//! image as an image part. The access of each goes through the gate like a tool call's: a
//! place that would ask asks in the TUI and refuses the request in a headless run, before
//! anything is sent; a secret store asks in every mode. A mention that names no file stays
//! text. Images the user attached apart from the text (`--image`, the clipboard) follow.

use crate::bus::ReportEvent;
use std::sync::Arc;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::Agent;
use crate::bus::{AgentEvent, Attachment, CallId, Decision, EndReason, ToolResult};
use crate::content::mentions::{self, Mention};
use crate::content::{ImageRef, Part};
use crate::llm::AssembledCall;
use crate::permissions::Verdict;
use crate::tool_output::{ImageView, ToolOutput};
use crate::tools::{Access, ToolCx, ToolError};

/// How the part of an attached file or directory begins (`attached_files` reads it back).
pub(super) const ATTACHED: &str = "[cairn] The user attached ";
const DIRECTORY: &str = "the directory ";
const LINES: &str = " (lines ";
pub(super) const SHOWN: &str = ", shown below";

/// The chips of the files and directories a message's parts attached, as the transcript
/// shows them under it: `src/lib.rs`, `src/lib.rs (lines 10-20)`, `docs/ (directory)`.
/// Read from the parts (what the log keeps), so a resumed session shows them too.
pub(super) fn attached_files(parts: &[Part]) -> Vec<String> {
    let unspell = |spelled: &str| {
        let path = spelled.strip_prefix('@').unwrap_or(spelled);
        path.strip_prefix('"')
            .and_then(|p| p.strip_suffix('"'))
            .unwrap_or(path)
            .to_string()
    };
    parts
        .iter()
        .filter_map(|part| match part {
            Part::Text { text } => text.lines().next()?.strip_prefix(ATTACHED),
            Part::Image(_) => None,
        })
        .filter_map(|head| {
            if let Some(rest) = head.strip_prefix(DIRECTORY) {
                let (spelled, _) = rest.split_once("; its entries")?;
                return Some(format!(
                    "{}/ (directory)",
                    unspell(spelled).trim_end_matches('/')
                ));
            }
            let (named, _) = head.split_once(SHOWN)?;
            Some(match named.split_once(LINES) {
                Some((spelled, range)) => {
                    format!(
                        "{} (lines {})",
                        unspell(spelled),
                        range.trim_end_matches(')')
                    )
                }
                None => unspell(named),
            })
        })
        .collect()
}

/// What a mention names.
enum MentionTarget {
    File,
    Directory,
    Image,
}

impl Agent {
    /// The parts a request's mentions and attachments add, in order. `Err` ends the request
    /// before anything is sent or logged.
    pub(super) async fn attach(
        &mut self,
        text: &str,
        extra: &[Attachment],
        cancel: &CancellationToken,
    ) -> Result<Vec<Part>, EndReason> {
        let mut parts = Vec::new();
        for (n, mention) in mentions::parse(text).iter().enumerate() {
            parts.extend(self.attach_mention(n, mention, cancel).await?);
        }
        for (n, attachment) in extra.iter().enumerate() {
            parts.extend(self.attach_extra(n, attachment, cancel).await?);
        }
        Ok(parts)
    }

    /// Whether the model now in use takes images: the config's word for the configured
    /// model, the known-models table for any other.
    pub(super) fn takes_images(&self) -> Option<bool> {
        let model = self.engine.model.model();
        if model == self.settings.context.configured_model
            || self.settings.context.configured_model.is_empty()
        {
            self.settings
                .vision
                .or_else(|| crate::models::takes_images(&model))
        } else {
            crate::models::takes_images(&model)
        }
    }

    /// Refuses an image for a model known not to take one, before any request.
    fn check_vision(&self, what: &str) -> Result<(), EndReason> {
        if self.takes_images() != Some(false) {
            return Ok(());
        }
        let model = self.engine.model.model();
        Err(self.refuse_attach(format!(
            "{what} is an image, and {model} does not take images (cairn's table of known \
             models, or `vision = false` in the config), so nothing was sent. Use a model that \
             takes images (`--model gpt-4.1`, for example), or set `vision = true` in the \
             config if this one does"
        )))
    }

    async fn attach_mention(
        &mut self,
        n: usize,
        mention: &Mention,
        cancel: &CancellationToken,
    ) -> Result<Vec<Part>, EndReason> {
        // `@server:uri`: a resource of an MCP server.
        if mention.lines.is_none()
            && let Some(parts) = self.attach_resource(&mention.path, cancel).await
        {
            return parts;
        }
        let cx = ToolCx::new(Arc::clone(&self.engine.tool_env));
        // A word that names nothing on disk (`@types/node`) is just text, and the user is
        // told, so a mistyped file name is not taken for an attachment.
        let meta = cx.resolve(&mention.path).ok().and_then(|real| {
            std::fs::metadata(real.as_path())
                .ok()
                .map(|meta| (real, meta))
        });
        let Some((real, meta)) = meta else {
            self.emit(AgentEvent::Report(ReportEvent::Warning {
                message: format!(
                    "@{} names no file here: it was sent as plain text, nothing attached",
                    mention.path
                ),
            }));
            return Ok(Vec::new());
        };
        let spelled = mentions::spelling(&mention.path);
        let target = if meta.is_dir() {
            MentionTarget::Directory
        } else if crate::tools::image::is_image_path(real.as_path()) && mention.lines.is_none() {
            MentionTarget::Image
        } else {
            MentionTarget::File
        };
        let (tool, args) = match target {
            MentionTarget::Directory => ("list_dir", json!({"path": mention.path, "depth": 1})),
            MentionTarget::Image => ("read_image", json!({"path": mention.path})),
            MentionTarget::File => {
                let (offset, limit) = match mention.lines {
                    Some(range) => (range.first, range.last - range.first + 1),
                    None => (1, crate::tools::read_file::DEFAULT_LIMIT),
                };
                (
                    "read_file",
                    json!({"path": mention.path, "offset": offset, "limit": limit}),
                )
            }
        };
        if matches!(target, MentionTarget::Image) {
            self.check_vision(&spelled)?;
        }
        let access = match cx.read_access(&mention.path) {
            Ok(access) => access,
            Err(err) => {
                self.warn_not_attached(&spelled, &err.to_string());
                return Ok(Vec::new());
            }
        };
        let id = format!("attach-{}-{n}", self.step_counter + 1);
        if !self
            .may_attach(&id, tool, &args, &spelled, &access, cancel)
            .await?
        {
            return Ok(Vec::new());
        }
        let cx = cx.passing(access);
        let output = match target {
            MentionTarget::Image => view_image(&cx, &mention.path).await,
            MentionTarget::File | MentionTarget::Directory => {
                match self.engine.registry.get(tool) {
                    Some(tool) => tool.run(args, &cx).await,
                    None => Err(ToolError::Internal(format!("no {tool} tool"))),
                }
            }
        };
        let output = match output {
            Ok(output) => output,
            Err(ToolError::Cancelled) => return Err(EndReason::Interrupted),
            Err(err) => {
                self.warn_not_attached(&spelled, &err.to_string());
                return Ok(Vec::new());
            }
        };
        if let ToolOutput::Image(view) = output {
            return self.image_parts(&spelled, view).map(Vec::from);
        }
        let shown = crate::secrets::redact_value(ToolResult::ok(output)).text;
        let header = match target {
            MentionTarget::Directory => format!(
                "{ATTACHED}{DIRECTORY}{spelled}; its entries, one level deep, as list_dir shows \
                 them:"
            ),
            _ => {
                let lines = mention
                    .lines
                    .map(|range| format!("{LINES}{}-{})", range.first, range.last))
                    .unwrap_or_default();
                format!(
                    "{ATTACHED}{spelled}{lines}{SHOWN} as read_file shows it. It counts as read: \
                     it can be edited without reading it again."
                )
            }
        };
        Ok(vec![Part::text(format!("{header}\n{shown}"))])
    }

    async fn attach_extra(
        &mut self,
        n: usize,
        attachment: &Attachment,
        cancel: &CancellationToken,
    ) -> Result<Vec<Part>, EndReason> {
        match attachment {
            Attachment::ImagePath { path } => {
                self.check_vision(path)?;
                let cx = ToolCx::new(Arc::clone(&self.engine.tool_env));
                let access = match cx.read_access(path) {
                    Ok(access) => access,
                    Err(err) => return Err(self.refuse_attach(format!("the image {path}: {err}"))),
                };
                let args = json!({"path": path});
                let id = format!("attach-{}-image-{n}", self.step_counter + 1);
                if !self
                    .may_attach(&id, "read_image", &args, path, &access, cancel)
                    .await?
                {
                    // Declined in the TUI (a headless run ended in `may_attach`): the message
                    // goes without it, as a declined mention does.
                    return Ok(Vec::new());
                }
                match view_image(&cx.passing(access), path).await {
                    Ok(ToolOutput::Image(view)) => self.image_parts(path, view).map(Vec::from),
                    Ok(_) => Ok(Vec::new()),
                    Err(ToolError::Cancelled) => Err(EndReason::Interrupted),
                    Err(err) => Err(self.refuse_attach(format!("the image {path}: {err}"))),
                }
            }
            Attachment::ImageBytes { name, bytes } => {
                self.check_vision(name)?;
                // Decoding and downscaling a large picture takes a while: off the loop.
                let (bytes, display) = (bytes.clone(), name.clone());
                let view = crate::tools::blocking("fitting an attached image", move || {
                    crate::tools::image::view(&bytes, &display)
                })
                .await
                .map_err(|err| self.refuse_attach(err.to_string()))?;
                self.image_parts(name, view).map(Vec::from)
            }
        }
    }

    /// Stores the image and returns its parts: a line naming it, then the image.
    fn image_parts(&mut self, spelled: &str, view: ImageView) -> Result<[Part; 2], EndReason> {
        let image = self
            .store_image(&view)
            .map_err(|err| self.refuse_attach(format!("{spelled} could not be kept: {err}")))?;
        Ok([
            Part::text(format!(
                "[cairn] The user attached the image {spelled} ({}×{}):",
                image.width, image.height
            )),
            Part::Image(image),
        ])
    }

    /// Puts an image's bytes in the session's store and names it.
    pub(super) fn store_image(&self, view: &ImageView) -> Result<ImageRef, String> {
        let hash = self
            .image_store()
            .put(&view.data)
            .map_err(|err| err.to_string())?;
        Ok(ImageRef {
            hash,
            media_type: view.media_type.clone(),
            name: view.path.clone(),
            width: view.width,
            height: view.height,
            bytes: view.bytes,
        })
    }

    /// Whether the gate (and, when it asks, the user) lets the prompt attach `what`. A
    /// secret store asks in every mode. `Err` when the request must end: interrupted, or a
    /// headless run that cannot ask or is denied.
    async fn may_attach(
        &mut self,
        id: &str,
        tool: &str,
        args: &Value,
        what: &str,
        access: &Access,
        cancel: &CancellationToken,
    ) -> Result<bool, EndReason> {
        // The same door as the model's calls: the gate's answer, for an attachment.
        let question = crate::permissions::Call {
            tool,
            access,
            mode: self.shared.mode(),
            interactive: self.settings.interactive,
            refused: &self.engine.tool_env.refused,
            attachment: true,
        };
        let verdict = self.engine.gate.answer(&question).verdict;
        match verdict {
            Verdict::Run => Ok(true),
            Verdict::Deny { why } if self.settings.interactive => {
                self.warn_not_attached(what, &format!("the user's rules deny it: {why}"));
                Ok(false)
            }
            Verdict::Deny { why } => Err(self.denied(format!(
                "{what} was not attached: the user's rules deny it ({why}); nothing was sent"
            ))),
            Verdict::Ask { why, .. } if !self.settings.interactive => Err(self.denied(format!(
                "{what} was not attached: it needs the user's approval ({why}), and nobody \
                     can approve it in this headless run, so nothing was sent. Attach it in the \
                     full-screen UI, or leave the mention out"
            ))),
            Verdict::Ask { why, prefix } => {
                let call = AssembledCall {
                    id: CallId::new(id),
                    name: tool.to_string(),
                    arguments: args.to_string(),
                };
                let why = format!("the prompt attaches {what}: {why}");
                let subject = super::approval::subject_of(&call, access);
                let question = super::approval::Question {
                    why,
                    prefix,
                    dangers: Vec::new(),
                    reach: None,
                };
                match self.ask(&call, subject, question, None, cancel).await {
                    None => Err(EndReason::Interrupted),
                    Some(Decision::Deny { .. } | Decision::ApprovePlan { .. }) => {
                        self.warn_not_attached(what, "you declined; it stays plain text");
                        Ok(false)
                    }
                    Some(Decision::ApproveForSession { prefix })
                    | Some(Decision::ApproveForProject { prefix }) => {
                        self.engine.gate.allow_for_session(&prefix);
                        self.record(&crate::session_log::Record::SessionRule { prefix });
                        Ok(true)
                    }
                    Some(_) => Ok(true),
                }
            }
        }
    }

    fn warn_not_attached(&self, what: &str, why: &str) {
        self.emit(AgentEvent::Report(ReportEvent::Warning {
            message: format!("{what} was not attached: {why}"),
        }));
    }

    /// Tells the user that a headless run cannot attach something it would have to ask for.
    fn denied(&self, message: String) -> EndReason {
        self.emit(AgentEvent::Report(ReportEvent::Warning { message }));
        EndReason::Denied
    }

    /// Tells the user why the request ends before it was sent; the reason ends it.
    fn refuse_attach(&self, message: String) -> EndReason {
        self.emit(AgentEvent::Report(ReportEvent::Warning {
            message: message.clone(),
        }));
        EndReason::Failed(message)
    }
}

async fn view_image(cx: &ToolCx, path: &str) -> Result<ToolOutput, ToolError> {
    use crate::tools::Tool as _;
    crate::tools::read_image::ReadImage
        .run(json!({"path": path}), cx)
        .await
}
