//! Content parts end to end: a log written before parts existed still resumes with the same
//! conversation; `@` mentions attach files, ranges and listings to the first request (and
//! count as reads); images reach the model as `image_url` parts, are refused for text-only
//! models, and a provider's refusal of one replaces it with a note for good.
#![allow(clippy::unwrap_used)]

use cairn::bus::{ConversationEvent, ReportEvent};
use serde_json::{Value, json};

use crate::support::cairn_cmd::Sandbox;
use cairn::testing::{MockLlm, Script};

const OLD_LOG: &str = include_str!("../fixtures/logs/20260101-000000-0001.jsonl");

fn messages(llm: &MockLlm, i: usize) -> Vec<Value> {
    llm.request(i)["messages"].as_array().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_log_written_before_content_parts_resumes_with_the_same_conversation() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.sessions_dir()).unwrap();
    // The log was recorded in this workspace (a session resumes only in its own directory).
    let here = std::fs::canonicalize(sb.workspace()).unwrap();
    let log = OLD_LOG.replace(
        "\"cwd\":\"/nowhere\"",
        &format!("\"cwd\":{}", json!(here.display().to_string())),
    );
    std::fs::write(sb.sessions_dir().join("20260101-000000-0001.jsonl"), log).unwrap();
    let llm = MockLlm::start(vec![Script::text("again")]).await;
    let run = sb
        .exec(
            &llm.url(),
            &[
                "--resume",
                "20260101-000000-0001",
                "--mode",
                "never",
                "more",
            ],
        )
        .await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let sent = messages(&llm, 0);
    assert_eq!(
        sent[0]["content"],
        "You are cairn (the prompt of a session logged before content parts)."
    );
    assert_eq!(
        sent[1],
        json!({"role": "user", "content": "list the files"})
    );
    // The reasoning of a tool-calling turn goes back with it, signature and all.
    assert_eq!(
        sent[2],
        json!({
            "role": "assistant",
            "content": "",
            "reasoning_content": "I should run ls.",
            "thinking_blocks": [{"type": "thinking", "thinking": "I should run ls.", "signature": "EqoB=="}],
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"ls\"}"}}],
        })
    );
    assert_eq!(
        sent[3],
        json!({"role": "tool", "tool_call_id": "c1", "content": "a.txt\n"})
    );
    assert_eq!(
        sent[4],
        json!({"role": "assistant", "content": "There is one file, a.txt."})
    );
    let texts: Vec<&str> = sent[5..]
        .iter()
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["thanks", "You are welcome.", "more"]);
    // The records appended after the old ones are read back by the same reader.
    let records = sb.log_records();
    assert!(
        records
            .iter()
            .any(|r| r["type"] == "assistant" && r["text"] == "again"),
        "{records:?}"
    );
}

fn numbered(lines: std::ops::RangeInclusive<usize>) -> String {
    lines.map(|n| format!("line {n}\n")).collect()
}

/// The text of the first request's last user message.
fn first_prompt(llm: &MockLlm) -> String {
    let sent = messages(llm, 0);
    let last = sent.last().unwrap();
    assert_eq!(last["role"], "user");
    match &last["content"] {
        Value::String(text) => text.clone(),
        parts => parts
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n\n"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mentioned_file_is_in_the_first_request_numbered_and_counts_as_read() {
    let sb = Sandbox::new().file("src/lib.rs", "fn a() {}\nfn b() {}\n");
    let llm = MockLlm::start(vec![
        Script::tool_call(
            "e1",
            "edit_file",
            json!({"path": "src/lib.rs", "old_string": "fn a()", "new_string": "fn renamed()"}),
        ),
        Script::text("done"),
    ])
    .await;
    let run = sb.exec(&llm.url(), &["rename a in @src/lib.rs"]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let prompt = first_prompt(&llm);
    assert!(
        prompt.starts_with("rename a in @src/lib.rs\n\n"),
        "{prompt}"
    );
    assert!(
        prompt.contains("1\tfn a() {}\n") && prompt.contains("2\tfn b() {}"),
        "{prompt}"
    );
    // No read_file came first, and the edit was not refused as unread.
    let result = llm.tool_result(1, "e1").unwrap();
    assert!(!result.contains("not read"), "{result}");
    assert_eq!(sb.read("src/lib.rs"), "fn renamed() {}\nfn b() {}\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ranges_directories_and_quoted_paths_attach_what_they_name() {
    let sb = Sandbox::new()
        .file("src/long.rs", &numbered(1..=30))
        .file("dir with space/f.txt", "spaced out\n")
        .file("src/main.rs", "");
    let sb = (0..520).fold(sb, |sb, i| sb.file(&format!("many/f{i:03}.txt"), ""));
    let llm = MockLlm::start(vec![Script::text("ok")]).await;
    let run = sb.exec(&llm.url(), &["look at @src/long.rs#L10-20"]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let prompt = first_prompt(&llm);
    assert!(
        prompt.contains("10\tline 10\n") && prompt.contains("20\tline 20"),
        "{prompt}"
    );
    assert!(
        !prompt.contains("line 9\n") && !prompt.contains("line 21"),
        "{prompt}"
    );

    let llm = MockLlm::start(vec![Script::text("ok")]).await;
    let run = sb
        .exec(
            &llm.url(),
            &[
                "--json",
                r#"fix @"dir with space/f.txt" and see @src and @many, @src/long.rs#L3-4"#,
            ],
        )
        .await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    // What was attached is told with the message, for its chips.
    let user = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|e| e["type"] == "user_message")
        .unwrap();
    assert_eq!(
        user["files"],
        json!([
            "dir with space/f.txt",
            "src/ (directory)",
            "many/ (directory)",
            "src/long.rs (lines 3-4)"
        ]),
        "{user}"
    );
    let prompt = first_prompt(&llm);
    assert!(prompt.contains("1\tspaced out"), "{prompt}");
    assert!(
        prompt.contains("long.rs") && prompt.contains("main.rs"),
        "{prompt}"
    );
    // A big directory is a capped listing, and says so.
    assert!(prompt.contains("f000.txt"), "{prompt}");
    assert!(!prompt.contains("f519.txt"), "{prompt}");
    assert!(
        prompt.to_lowercase().contains("cap") || prompt.contains("more"),
        "{prompt}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn words_that_name_no_file_stay_text() {
    let sb = Sandbox::new();
    let llm = MockLlm::start(vec![Script::text("ok")]).await;
    let prompt = "mail a@b.com, then npm i @types/node and @nowhere.rs";
    let run = sb.exec(&llm.url(), &[prompt]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(messages(&llm, 0).last().unwrap()["content"], prompt);
    // A mention that matched nothing is marked for the user (once each), not for the model.
    assert_eq!(
        run.stderr.matches("@nowhere.rs names no file here").count(),
        1,
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("a@b.com names"), "{}", run.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_store_mention_is_refused_headless_before_any_request() {
    let sb = Sandbox::new().file("../.ssh/id_rsa", "-----BEGIN PRIVATE KEY-----\nsecret\n");
    for mode in ["auto", "never"] {
        let llm = MockLlm::start(vec![Script::text("should not be asked")]).await;
        let run = sb
            .exec(&llm.url(), &["--mode", mode, "use @~/.ssh/id_rsa"])
            .await;
        assert_ne!(run.code, 0, "mode {mode}: {}", run.stdout);
        assert!(
            run.stderr.contains("id_rsa") && run.stderr.contains("headless"),
            "{}",
            run.stderr
        );
        assert!(llm.requests().is_empty(), "mode {mode}: a request was sent");
        assert!(!run.stdout.contains("secret"));
    }
}

fn png(width: u32, height: u32, shade: u8) -> Vec<u8> {
    let image = image::RgbImage::from_fn(width, height, |x, y| {
        image::Rgb([shade, (x % 251) as u8, (y % 241) as u8])
    });
    let mut out = Vec::new();
    image::DynamicImage::ImageRgb8(image)
        .write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png)
        .unwrap();
    out
}

/// The images of every user message of a request, decoded.
fn sent_images(request: &Value) -> Vec<image::DynamicImage> {
    use base64::Engine as _;
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter_map(|part| part["image_url"]["url"].as_str())
        .map(|url| {
            let data = url.split_once("base64,").unwrap().1;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(data)
                .unwrap();
            image::load_from_memory(&bytes).unwrap()
        })
        .collect()
}

fn write_bytes(sb: &Sandbox, rel: &str, bytes: &[u8]) {
    std::fs::create_dir_all(sb.path(rel).parent().unwrap()).unwrap();
    std::fs::write(sb.path(rel), bytes).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_image_sends_one_downscaled_image_part_to_a_vision_model() {
    let sb = Sandbox::new();
    write_bytes(&sb, "shots/big.png", &png(4000, 3000, 10));
    let llm = MockLlm::start(vec![
        Script::tool_call("i1", "read_image", json!({"path": "shots/big.png"})),
        Script::text("I see it"),
    ])
    .await;
    let run = sb
        .exec(
            &llm.url(),
            &["--model", "gpt-4.1", "what is in shots/big.png?"],
        )
        .await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let first = llm.request(0);
    let tools: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(tools.contains(&"read_image"), "{tools:?}");
    assert!(sent_images(&llm.request(0)).is_empty());
    let images = sent_images(&llm.request(1));
    assert_eq!(images.len(), 1);
    assert_eq!((images[0].width(), images[0].height()), (2048, 1536));
    let result = llm.tool_result(1, "i1").unwrap();
    assert!(result.contains("downscaled from 4000×3000"), "{result}");
    // The log names the image by hash; its bytes are beside the log, not in it.
    let log = std::fs::read_to_string(sb.log_path()).unwrap();
    assert!(!log.contains("base64"));
    let store = sb.log_path().with_extension("images");
    assert_eq!(std::fs::read_dir(store).unwrap().count(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_image_is_not_offered_to_a_text_only_model_and_its_images_are_refused_before_any_request()
 {
    let sb = Sandbox::new();
    write_bytes(&sb, "a.png", &png(20, 10, 1));
    let llm = MockLlm::start(vec![Script::text("unused")]).await;
    let run = sb
        .exec(
            &llm.url(),
            &[
                "--model",
                "deepseek-chat",
                "--image",
                "a.png",
                "what is this",
            ],
        )
        .await;
    assert_ne!(run.code, 0);
    assert!(
        run.stderr.contains("does not take images") && run.stderr.contains("vision = true"),
        "{}",
        run.stderr
    );
    assert!(llm.requests().is_empty());
    // `@a.png` the same way; and the tools array has no read_image.
    let llm = MockLlm::start(vec![Script::text("ok")]).await;
    let run = sb
        .exec(&llm.url(), &["--model", "deepseek-chat", "see @a.png"])
        .await;
    assert_ne!(run.code, 0);
    assert!(llm.requests().is_empty());
    let run = sb
        .exec(&llm.url(), &["--model", "deepseek-chat", "hello"])
        .await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let tools = llm.request(0)["tools"].to_string();
    assert!(!tools.contains("read_image"), "{tools}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_named_png_is_a_clear_error_and_a_rewritten_image_is_read_anew() {
    let sb = Sandbox::new().file("fake.png", "this is no image at all");
    let llm = MockLlm::start(vec![Script::text("unused")]).await;
    let run = sb
        .exec(
            &llm.url(),
            &["--model", "my-own-model", "--image", "fake.png", "look"],
        )
        .await;
    assert_ne!(run.code, 0);
    assert!(
        run.stderr.contains("fake.png") && run.stderr.contains("not an image"),
        "{}",
        run.stderr
    );
    assert!(llm.requests().is_empty());

    // A model of unknown ability gets the image; a rewritten file is what the next one sends.
    write_bytes(&sb, "shot.png", &png(30, 10, 1));
    let llm = MockLlm::start(vec![Script::text("one"), Script::text("two")]).await;
    let first = sb
        .exec(&llm.url(), &["--model", "my-own-model", "see @shot.png"])
        .await;
    assert_eq!(first.code, 0, "{}", first.stderr);
    write_bytes(&sb, "shot.png", &png(50, 40, 200));
    let second = sb
        .exec(
            &llm.url(),
            &["--model", "my-own-model", "--continue", "and now @shot.png"],
        )
        .await;
    assert_eq!(second.code, 0, "{}", second.stderr);
    let images = sent_images(&llm.request(1));
    let sizes: Vec<(u32, u32)> = images.iter().map(|i| (i.width(), i.height())).collect();
    assert_eq!(sizes, [(30, 10), (50, 40)]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_the_provider_refuses_becomes_a_note_for_the_retry_and_every_resume() {
    let sb = Sandbox::new();
    write_bytes(&sb, "huge.png", &png(64, 64, 5));
    let llm = MockLlm::start(vec![
        Script::status(
            400,
            r#"{"error":{"message":"image too large","type":"invalid_request_error"}}"#,
        ),
        Script::text("fine without it"),
    ])
    .await;
    let run = sb
        .exec(
            &llm.url(),
            &["--model", "my-own-model", "--image", "huge.png", "look"],
        )
        .await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.stdout.trim(), "fine without it");
    assert_eq!(sent_images(&llm.request(0)).len(), 1);
    let retry = llm.request(1);
    assert!(sent_images(&retry).is_empty());
    assert!(
        retry
            .to_string()
            .contains("[image removed: the provider refused it"),
        "{retry}"
    );
    assert!(run.stderr.contains("refused"), "{}", run.stderr);

    let resumed = MockLlm::start(vec![Script::text("still fine")]).await;
    let run = sb
        .exec(
            &resumed.url(),
            &["--model", "my-own-model", "--continue", "go on"],
        )
        .await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let sent = resumed.request(0);
    assert!(sent_images(&sent).is_empty());
    assert!(sent.to_string().contains("[image removed"), "{sent}");
}

/// The clipboard's route (the TUI's Ctrl+V sends `Attachment::ImageBytes`): the bytes are
/// checked and fitted like a file's, the chip names what was sent, the log holds no bytes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clipboard_image_is_fitted_like_a_file_and_garbage_bytes_send_nothing() {
    use cairn::bus::{AgentEvent, Attachment, UserCommand};
    let (ws, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let llm = MockLlm::start(vec![Script::text("a wide picture")]).await;
    let mut agent = crate::support::agent::TestAgent::new_session(
        ws.path(),
        data.path(),
        &llm.url(),
        cairn::bus::Mode::AutoEdit,
    )
    .await;
    let submit = |bytes: Vec<u8>| UserCommand::Submit {
        text: "what is this?".into(),
        attach: vec![Attachment::ImageBytes {
            name: "clipboard.png".into(),
            bytes,
        }],
    };
    agent.send(submit(png(3000, 1000, 40))).await;
    let AgentEvent::Conversation(ConversationEvent::UserMessage { images, .. }) = agent
        .wait_for(|e| {
            matches!(
                e,
                AgentEvent::Conversation(ConversationEvent::UserMessage { .. })
            )
        })
        .await
    else {
        unreachable!()
    };
    assert_eq!(images.len(), 1);
    assert_eq!(
        (images[0].name.as_str(), images[0].width, images[0].height),
        ("clipboard.png", 2048, 683)
    );
    agent
        .wait_for(|e| {
            matches!(
                e,
                AgentEvent::Conversation(ConversationEvent::RequestEnded { .. })
            )
        })
        .await;
    let sent = sent_images(&llm.request(0));
    assert_eq!(sent.len(), 1, "one image part");
    assert_eq!((sent[0].width(), sent[0].height()), (2048, 683));
    let log = std::fs::read_to_string(&agent.log).unwrap();
    assert!(!log.contains("base64"), "the log names images by hash only");
    // Bytes that are no image end the request before anything is sent.
    agent.send(submit(b"definitely not a png".to_vec())).await;
    let AgentEvent::Conversation(ConversationEvent::RequestEnded { reason, .. }) = agent
        .wait_for(|e| {
            matches!(
                e,
                AgentEvent::Conversation(ConversationEvent::RequestEnded { .. })
            )
        })
        .await
    else {
        unreachable!()
    };
    let text = format!("{reason:?}");
    assert!(
        text.contains("clipboard.png") && text.contains("not an image"),
        "{text}"
    );
    assert_eq!(llm.requests().len(), 1, "no second request");
    agent.shutdown().await;
}

/// A pasted image path outside the workspace asks in the TUI; declined, the message goes
/// without it (as a declined mention does) instead of being lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declined_image_path_is_left_out_and_the_message_still_goes() {
    use cairn::bus::{AgentEvent, Attachment, Decision, ToolEvent, UserCommand};
    let Some(outside) = crate::support::cairn_cmd::try_dir_outside_temp("attachments.rs") else {
        return;
    };
    let (ws, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let shot = outside.path().join("shot.png");
    std::fs::write(&shot, png(20, 10, 1)).unwrap();
    let llm = MockLlm::start(vec![Script::text("no picture then")]).await;
    let mut agent = crate::support::agent::TestAgent::new_session(
        ws.path(),
        data.path(),
        &llm.url(),
        cairn::bus::Mode::Ask,
    )
    .await;
    agent
        .send(UserCommand::Submit {
            text: "see this".into(),
            attach: vec![Attachment::ImagePath {
                path: shot.to_str().unwrap().into(),
            }],
        })
        .await;
    let AgentEvent::Tool(ToolEvent::AwaitingApproval { call, .. }) = agent
        .wait_for(|e| matches!(e, AgentEvent::Tool(ToolEvent::AwaitingApproval { .. })))
        .await
    else {
        unreachable!()
    };
    assert!(llm.requests().is_empty(), "nothing sent before the answer");
    agent
        .send(UserCommand::Decide {
            call,
            decision: Decision::Deny { message: None },
        })
        .await;
    agent
        .wait_for(|e| {
            matches!(
                e,
                AgentEvent::Conversation(ConversationEvent::RequestEnded { .. })
            )
        })
        .await;
    assert!(agent.seen.iter().any(|e| matches!(e,
        AgentEvent::Report(ReportEvent::Warning { message }) if message.contains("was not attached"))));
    assert!(agent.seen.iter().any(|e| matches!(e,
        AgentEvent::Conversation(ConversationEvent::UserMessage { text, images, .. }) if text == "see this" && images.is_empty())));
    assert_eq!(llm.requests().len(), 1);
    assert!(sent_images(&llm.request(0)).is_empty());
    agent.shutdown().await;
}
