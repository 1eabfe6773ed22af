//! Streaming markdown without re-rendering the whole answer per frame: the text is cut into
//! blocks at blank lines outside code fences. Finished blocks keep their rendered lines (per
//! width); only the growing last block is laid out again when a delta arrives.

use std::cell::RefCell;

use ratatui::text::Line;

use super::render;

/// One markdown block and its wrapped lines for the last width it was laid out at.
#[derive(Debug)]
pub struct Block {
    pub source: String,
    /// False when the block was cut out of one long paragraph: the next continues it
    /// without a blank line.
    gap_after: bool,
    cache: RefCell<Option<(usize, Vec<Line<'static>>)>>,
}

impl Block {
    fn new(source: String, gap_after: bool) -> Self {
        Self {
            source,
            gap_after,
            cache: RefCell::new(None),
        }
    }

    /// Runs `f` on this block's lines at `width`, laying them out only on a width change.
    fn with_lines<R>(&self, width: usize, f: impl FnOnce(&[Line<'static>]) -> R) -> R {
        let mut cache = self.cache.borrow_mut();
        if cache.as_ref().is_none_or(|(w, _)| *w != width) {
            *cache = Some((width, render::markdown(&self.source, width)));
        }
        let lines = cache
            .as_ref()
            .map_or(&[][..], |(_, lines)| lines.as_slice());
        f(lines)
    }
}

/// Bytes after which an unfinished paragraph is cut at the next line end.
const SOFT_LIMIT: usize = 4096;

/// Markdown text that grows by deltas.
#[derive(Debug, Default)]
pub struct StreamText {
    blocks: Vec<Block>,
    /// The unfinished last block.
    tail: String,
    /// Bytes of `tail` already scanned for complete lines.
    scanned: usize,
    /// The fence (``` or ~~~) of the code block the tail is inside, if any.
    fence: Option<String>,
    /// The tail laid out at (width, tail length).
    tail_cache: RefCell<Option<(usize, usize, Vec<Line<'static>>)>>,
}

impl StreamText {
    pub fn new(text: &str) -> Self {
        let mut s = Self::default();
        s.push(text);
        s
    }

    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty() && self.tail.trim().is_empty()
    }

    /// The whole text, as received.
    pub fn text(&self) -> String {
        let mut out: String = self.blocks.iter().map(|b| b.source.as_str()).collect();
        out.push_str(&self.tail);
        out
    }

    pub fn push(&mut self, delta: &str) {
        self.tail.push_str(delta);
        self.split_finished_blocks();
    }

    fn split_finished_blocks(&mut self) {
        while let Some(nl) = self.tail[self.scanned..].find('\n') {
            let line_start = self.scanned;
            let line_end = self.scanned + nl + 1;
            let line = self.tail[line_start..line_end].trim();
            self.scanned = line_end;
            if let Some(fence) = &self.fence {
                if line.starts_with(fence.as_str()) {
                    self.fence = None;
                }
                continue;
            }
            if line.starts_with("```") || line.starts_with("~~~") {
                self.fence = Some(line[..3].to_string());
                continue;
            }
            let block_has_text = !self.tail[..line_start].trim().is_empty();
            let paragraph_end = line.is_empty() && block_has_text;
            // A paragraph with no blank line for pages is cut at a line end all the same,
            // so each frame re-renders a bounded tail, never the whole answer.
            let too_long = !line.is_empty() && line_end >= SOFT_LIMIT;
            if paragraph_end || too_long {
                let rest = self.tail.split_off(line_end);
                let block = std::mem::replace(&mut self.tail, rest);
                self.blocks.push(Block::new(block, paragraph_end));
                self.scanned = 0;
            }
        }
    }

    /// Laid-out blocks at `width`, the tail last, each with whether a blank line goes
    /// before it.
    fn with_parts(&self, width: usize, mut f: impl FnMut(&[Line<'static>], bool)) {
        let mut gap = false;
        for block in &self.blocks {
            block.with_lines(width, |lines| f(lines, gap));
            gap = block.gap_after;
        }
        if !self.tail.trim().is_empty() {
            let mut cache = self.tail_cache.borrow_mut();
            if cache
                .as_ref()
                .is_none_or(|(w, len, _)| *w != width || *len != self.tail.len())
            {
                *cache = Some((width, self.tail.len(), render::markdown(&self.tail, width)));
            }
            if let Some((_, _, lines)) = cache.as_ref() {
                f(lines, gap);
            }
        }
    }

    /// The last `n` lines at `width`, laying out only the blocks they come from (a pinned
    /// view of an endless answer costs the same as one of a short answer), and whether they
    /// are all the lines there are.
    pub fn last_lines(&self, width: usize, n: usize) -> (Vec<Line<'static>>, bool) {
        let mut parts: Vec<Vec<Line<'static>>> = Vec::new();
        let mut got = 0;
        // A blank line owed before the part added last, if an earlier part shows up.
        let mut gap_pending = false;
        let mut add = |lines: &[Line<'static>], gap_before: bool, got: &mut usize| {
            if lines.is_empty() {
                return;
            }
            if gap_pending && *got > 0 {
                parts.push(vec![Line::default()]);
                *got += 1;
            }
            let take = lines.len().min(n.saturating_sub(*got));
            parts.push(lines[lines.len() - take..].to_vec());
            *got += lines.len();
            gap_pending = gap_before;
        };
        if !self.tail.trim().is_empty() {
            let gap = self.blocks.last().is_some_and(|b| b.gap_after);
            let mut cache = self.tail_cache.borrow_mut();
            if cache
                .as_ref()
                .is_none_or(|(w, len, _)| *w != width || *len != self.tail.len())
            {
                *cache = Some((width, self.tail.len(), render::markdown(&self.tail, width)));
            }
            if let Some((_, _, lines)) = cache.as_ref() {
                add(lines, gap, &mut got);
            }
        }
        let mut visited_all = true;
        for (i, block) in self.blocks.iter().enumerate().rev() {
            if got >= n {
                visited_all = false;
                break;
            }
            let gap = i > 0 && self.blocks[i - 1].gap_after;
            block.with_lines(width, |lines| add(lines, gap, &mut got));
        }
        let complete = visited_all && got <= n;
        let mut out: Vec<Line<'static>> = parts.into_iter().rev().flatten().collect();
        let extra = out.len().saturating_sub(n);
        out.drain(..extra);
        (out, complete)
    }

    /// Number of lines at `width`.
    pub fn height(&self, width: usize) -> usize {
        let mut total = 0;
        self.with_parts(width, |lines, gap| {
            if !lines.is_empty() {
                total += usize::from(total > 0 && gap) + lines.len();
            }
        });
        total
    }

    /// Appends lines `skip..skip + take` at `width` to `out`, touching only the blocks that
    /// are in that range (and the size of the others, which is cached).
    pub fn collect(&self, width: usize, skip: usize, take: usize, out: &mut Vec<Line<'static>>) {
        let mut pos = 0;
        let end = skip + take;
        self.with_parts(width, |lines, gap| {
            if lines.is_empty() || pos >= end {
                return;
            }
            if pos > 0 && gap {
                if pos >= skip {
                    out.push(Line::default());
                }
                pos += 1;
            }
            let from = skip.saturating_sub(pos).min(lines.len());
            let to = end.saturating_sub(pos).min(lines.len());
            if from < to {
                out.extend_from_slice(&lines[from..to]);
            }
            pos += lines.len();
        });
    }

    /// The rendered lines of the whole text at `width`.
    pub fn lines(&self, width: usize) -> Vec<Line<'static>> {
        let mut out = Vec::new();
        self.collect(width, 0, usize::MAX / 2, &mut out);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_split_at_blank_lines_but_never_inside_a_code_fence() {
        let mut s = StreamText::default();
        for piece in [
            "Intro para",
            "graph.\n\n```rust\nfn a() {}\n\nfn b",
            "() {}\n```\n\nEnd.",
        ] {
            s.push(piece);
        }
        let sources: Vec<&str> = s.blocks.iter().map(|b| b.source.as_str()).collect();
        assert_eq!(
            sources,
            [
                "Intro paragraph.\n\n",
                "```rust\nfn a() {}\n\nfn b() {}\n```\n\n"
            ]
        );
        assert_eq!(s.tail, "End.");
        assert_eq!(
            s.text(),
            "Intro paragraph.\n\n```rust\nfn a() {}\n\nfn b() {}\n```\n\nEnd."
        );
    }

    #[test]
    fn the_last_lines_lay_out_only_the_blocks_they_need() {
        let mut s = StreamText::default();
        for i in 0..100 {
            s.push(&format!("paragraph {i}\n\n"));
        }
        let (last, complete) = s.last_lines(40, 3);
        assert!(!complete);
        let texts: Vec<String> = last
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect();
        assert_eq!(texts, ["paragraph 98", "", "paragraph 99"]);
        let laid_out = s
            .blocks
            .iter()
            .filter(|b| b.cache.borrow().is_some())
            .count();
        assert_eq!(laid_out, 2);
    }

    #[test]
    fn a_huge_paragraph_is_cut_into_bounded_blocks_without_losing_text() {
        let mut s = StreamText::default();
        let line = "alpha beta gamma delta cairn stone path ridge alpha beta gamma delta\n";
        for _ in 0..2000 {
            s.push(line);
        }
        assert!(s.blocks.len() > 10);
        assert!(s.tail.len() < SOFT_LIMIT + line.len());
        assert_eq!(s.text(), line.repeat(2000));
        let lines = s.lines(200);
        assert!(
            lines.iter().all(|l| l.width() > 0),
            "no blank lines inside one paragraph"
        );
        let words: usize = lines
            .iter()
            .map(|l| {
                l.spans
                    .iter()
                    .map(|sp| sp.content.split_whitespace().count())
                    .sum::<usize>()
            })
            .sum();
        assert_eq!(words, 12 * 2000);
    }

    #[test]
    fn streamed_text_renders_like_the_whole_text() {
        let md = "# Title\n\nSome words here.\n\n```sh\nls -la\n```\n\n- a\n- b\n";
        let mut streamed = StreamText::default();
        for c in md.chars() {
            streamed.push(&c.to_string());
        }
        assert_eq!(streamed.lines(30), render::markdown(md, 30));
        assert_eq!(streamed.height(30), streamed.lines(30).len());
        let all = streamed.lines(30);
        for n in [1, 3, all.len() - 1, all.len(), all.len() + 5] {
            let (last, complete) = streamed.last_lines(30, n);
            assert_eq!(last, all[all.len().saturating_sub(n)..], "last {n}");
            assert_eq!(complete, n >= all.len(), "last {n}");
        }
        let mut middle = Vec::new();
        streamed.collect(30, 3, 4, &mut middle);
        assert_eq!(middle, streamed.lines(30)[3..7]);
    }
}
