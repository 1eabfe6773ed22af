//! read_image: an image file for the model to see. Offered only in sessions whose first model
//! takes images (see `launch`). The result's text describes the image; the agent sends the
//! image itself as an image part right after the step's results (chat tool results carry
//! text only), and stores its bytes beside the session log.

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::json;

use super::{Access, Tool, ToolCx, ToolError, ToolSpec, parse_args};

use crate::tool_output::{ImageView, ToolOutput};

#[derive(Debug, Deserialize)]
struct ReadImageArgs {
    #[serde(alias = "file_path")]
    path: String,
}

pub struct ReadImage;

#[async_trait]
impl Tool for ReadImage {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "read_image",
            description: "Look at an image file (PNG, JPEG, GIF or WebP): a screenshot, a \
                          diagram, a rendered page. Large images are downscaled to 2048 px.",
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "Relative to the workspace, or absolute"}
                },
                "required": ["path"]
            }),
        }
    }

    fn access(&self, args: &serde_json::Value, cx: &ToolCx) -> Result<Access, ToolError> {
        let args: ReadImageArgs = parse_args(args)?;
        cx.read_access(&args.path)
    }

    async fn run(&self, args: serde_json::Value, cx: &ToolCx) -> Result<ToolOutput, ToolError> {
        let args: ReadImageArgs = parse_args(&args)?;
        let real = cx.resolve(&args.path)?;
        let display = real.display_in(cx.workspace());
        let place = cx.read_place(&real, &display)?;
        let view =
            super::blocking("reading an image", move || view_image(&place, &display)).await?;
        Ok(ToolOutput::Image(view))
    }
}

/// Reads, checks and fits the image at `place`: what `read_image` and `@image.png` send.
pub fn view_image(
    place: &crate::fs::confined::Beneath,
    display: &str,
) -> Result<ImageView, ToolError> {
    let bytes = super::image::read_file_bytes(place, display)?;
    super::image::view(&bytes, display)
}
