//! Pages built to take cairn down (issue 32 items 1–2), served by a local site: 5,000 nested
//! `<b>` (once a stack overflow), deep divs in other spellings, wide tables, formatting
//! elements the parser reopens. Each comes back as text with a note saying why it is plain
//! text; a page slow to convert is given as plain text at the fetch's deadline, and Esc
//! returns at once while a conversion runs.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::cairn_cmd::Sandbox;
use cairn::process;
use cairn::testing::mock_site::{MockSite, Page};
use cairn::tool_output::{ToolOutput, WebPage};
use cairn::tools::web_fetch::WebFetch;
use cairn::tools::{Tool, ToolCx, ToolEnv, ToolError};
use cairn::web::client::DirectStack;
use cairn::web::html_scan::{MAX_DEPTH, MAX_ELEMENTS};
use cairn::web::resolve::MapResolver;
use cairn::web::{WebEnv, WebSettings};

fn env(site: &MockSite, timeout: Duration, dir: &std::path::Path) -> Arc<ToolEnv> {
    let settings = WebSettings {
        allow_private: vec![site.host_port()],
        timeout,
        ..WebSettings::default()
    };
    let web = WebEnv::new(
        settings,
        Arc::new(MapResolver::new()),
        Arc::new(DirectStack),
    )
    .unwrap();
    Arc::new(
        ToolEnv::new(
            dir.to_path_buf(),
            &cairn::dirs::Dirs::from_env(),
            process::Settings::default(),
        )
        .with_web(web),
    )
}

async fn fetch(cx: &ToolCx, url: &str) -> Result<ToolOutput, ToolError> {
    let args = json!({ "url": url });
    WebFetch.access(&args, cx)?;
    WebFetch.run(args, cx).await
}

fn page(output: Result<ToolOutput, ToolError>) -> WebPage {
    match output {
        Ok(ToolOutput::WebPage(page)) => page,
        other => panic!("not a page: {other:?}"),
    }
}

/// Chains of divs just under the depth cap: the slowest kind of page that is still parsed.
fn deep_within_caps(chains: usize) -> String {
    let depth = MAX_DEPTH - 8;
    let chain = format!("{}words {}", "<div>".repeat(depth), "</div>".repeat(depth));
    format!("<html><body>{}</body></html>", chain.repeat(chains))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_shapes_come_back_as_plain_text_saying_why() {
    let site = MockSite::start().await;
    let tail = "<p>THE-END</p>";
    let pages = [
        ("/b5000", format!("{}{tail}", "<b>".repeat(5000)), "deep"),
        (
            "/b5000-closed",
            format!("{}{tail}{}", "<b>".repeat(5000), "</b>".repeat(5000)),
            "deep",
        ),
        ("/divs", format!("{}{tail}", "<div>".repeat(20_000)), "deep"),
        (
            "/divs-attrs",
            format!("{}{tail}", "<div class='a>b'>".repeat(5000)),
            "deep",
        ),
        (
            "/divs-slash",
            format!("{}{tail}", "<DIV/>".repeat(5000)),
            "deep",
        ),
        (
            "/spans",
            format!("{}{tail}", "<span>".repeat(MAX_DEPTH + 10)),
            "deep",
        ),
        ("/custom", format!("{}{tail}", "<x-a>".repeat(5000)), "deep"),
        (
            "/tables",
            format!("{}{tail}", "<table><tr><td>".repeat(3000)),
            "deep",
        ),
        (
            "/lists",
            format!("{}{tail}", "<ul><li>".repeat(3000)),
            "deep",
        ),
        (
            "/wide",
            format!(
                "<table>{}</table>{tail}",
                "<tr><td>1</td><td>2</td></tr>".repeat(MAX_ELEMENTS / 3 + 1)
            ),
            "elements",
        ),
        (
            "/reopened",
            format!(
                "<div><b><i><u></div>{}{tail}",
                "<div>x</div>".repeat(MAX_ELEMENTS / 3)
            ),
            "elements",
        ),
    ];
    for (path, body, _) in &pages {
        site.route(path, Page::html(body));
    }
    let dir = tempfile::tempdir().unwrap();
    let env = env(&site, Duration::from_secs(60), dir.path());
    for (path, _, why) in pages {
        let cx = ToolCx::new(Arc::clone(&env));
        let started = Instant::now();
        let page = page(fetch(&cx, &site.url(path)).await);
        let note = page.note.clone().unwrap_or_default();
        assert!(
            note.contains(why) && note.contains("plain text"),
            "{path}: {note:?}"
        );
        // The end of the page is there (read from the session's copy, past the first window).
        let offset = page.total_chars.saturating_sub(100);
        let args = json!({ "url": site.url(path), "offset": offset });
        let last = match WebFetch.run(args, &cx).await {
            Ok(ToolOutput::WebPage(last)) => last,
            other => panic!("{path}: {other:?}"),
        };
        assert!(last.content.contains("THE-END"), "{path}: {}", last.content);
        let text = ToolOutput::WebPage(page).model_text();
        assert!(text.contains("given as plain text"), "{path}");
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{path}: {:?}",
            started.elapsed()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_binary_survives_5000_nested_b_and_deep_divs() {
    let site = MockSite::start().await;
    site.route(
        "/b",
        Page::html(&format!("{}deep text", "<b>".repeat(5000))),
    );
    site.route(
        "/d",
        Page::html(&format!("{}deep text", "<div>".repeat(100_000))),
    );
    let sb = Sandbox::new().config(&format!(
        "[web]\nallow_private = [\"{}\"]\n",
        site.host_port()
    ));
    for path in ["/b", "/d"] {
        for format in ["markdown", "text"] {
            let args = json!({"url": site.url(path), "format": format}).to_string();
            let run = sb.exec_raw(&["tool", "run", "web_fetch", &args], &[]).await;
            assert_eq!(run.code, 0, "{path} {format}: {run:?}");
            assert!(run.stdout.contains("deep text"), "{}", run.stdout);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_too_slow_to_convert_goes_out_as_plain_text_at_the_deadline() {
    let site = MockSite::start().await;
    // Within the caps, so it is parsed; in a debug build this takes far longer than 1 s.
    site.route("/slow", Page::html(&deep_within_caps(400)));
    let dir = tempfile::tempdir().unwrap();
    let env = env(&site, Duration::from_secs(1), dir.path());
    let cx = ToolCx::new(Arc::clone(&env));
    let started = Instant::now();
    let page = page(fetch(&cx, &site.url("/slow")).await);
    let took = started.elapsed();
    let note = page.note.clone().unwrap_or_default();
    assert!(
        note.contains("too slow") && note.contains("timeout_secs"),
        "{note:?}"
    );
    assert!(page.content.starts_with("words"), "{}", &page.content[..40]);
    assert!(took < Duration::from_secs(5), "{took:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn esc_returns_at_once_while_a_page_converts() {
    let site = MockSite::start().await;
    site.route("/slow", Page::html(&deep_within_caps(400)));
    let dir = tempfile::tempdir().unwrap();
    let env = env(&site, Duration::from_secs(120), dir.path());
    let cx = ToolCx::new(Arc::clone(&env));
    let cancel = cx.cancel.clone();
    let url = site.url("/slow");
    let fetch = fetch(&cx, &url);
    let pressed = async {
        // Esc once the page is in and a conversion holds a slot (the guard only bounds the wait).
        let guard = Instant::now() + Duration::from_secs(30);
        while (site.hits("/slow") < 1 || cairn::web::convert::running() == 0)
            && Instant::now() < guard
        {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        cancel.cancel();
        Instant::now()
    };
    let (result, pressed_at) = tokio::join!(fetch, pressed);
    assert!(matches!(result, Err(ToolError::Cancelled)), "{result:?}");
    assert!(
        pressed_at.elapsed() < Duration::from_millis(500),
        "{:?}",
        pressed_at.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ordinary_article_is_still_markdown() {
    let site = MockSite::start().await;
    let mut body =
        String::from("<html><head><title>T</title></head><body><article><h1>Title here</h1>");
    for n in 0..200 {
        body.push_str(&format!("<h2>Part {n}</h2><p>Some <b>bold</b> words about part {n}, long enough to be an article that readability keeps whole.</p><ul><li>a<li>b</ul>"));
    }
    body.push_str("</article></body></html>");
    site.route("/a", Page::html(&body));
    let dir = tempfile::tempdir().unwrap();
    let env = env(&site, Duration::from_secs(60), dir.path());
    let page = page(fetch(&ToolCx::new(Arc::clone(&env)), &site.url("/a")).await);
    assert_eq!(page.note, None);
    assert!(
        page.content.contains("## Part 7") && page.content.contains("**bold**"),
        "{}",
        &page.content[..300]
    );
}
