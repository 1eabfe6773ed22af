//! Redirections: what `>`, `>>`, `&>` write (judged like any other write target), what
//! `<` feeds a command (a file, a here-document that an interpreter runs as code, or a
//! `/dev/tcp` socket, which is a download), and reads of other processes' secrets.

use tree_sitter::Node;

use crate::permissions::classify::{Class, Stdin, Walker, Word, operator, text, word};

impl Walker {
    pub(crate) fn redirected(&mut self, node: Node, src: &str) {
        let mut pipe_after: Option<Node> = None;
        let saved_stdin = self.stdin.clone();
        let redirects: Vec<Node> = node
            .named_children(&mut node.walk())
            .filter(|c| c.kind().ends_with("_redirect"))
            .collect();
        for redirect in &redirects {
            self.redirect(*redirect, src, &mut pipe_after);
        }
        let Some(body) = node.child_by_field_name("body") else {
            // A bare redirection (`> file`) still creates or truncates its target.
            let findings = self.write_findings(&redirects, src);
            self.findings_part(findings);
            self.stdin = saved_stdin;
            return;
        };
        match pipe_after {
            // `cat <<EOF | sh`: the grammar hangs the rest of the pipeline under the heredoc.
            Some(pipeline) => {
                let mut stages = vec![body];
                stages.extend(pipeline.named_children(&mut pipeline.walk()));
                self.pipeline(&stages, src);
            }
            None if body.kind() == "command" => {
                let findings = self.write_findings(&redirects, src);
                // `exec 3>file` opens the descriptor for the rest of the command line.
                if text(body, src).trim() == "exec" {
                    let opened = redirects.iter().filter_map(|r| {
                        let copies = r
                            .child_by_field_name("destination")
                            .and_then(|d| copied_descriptor(&operator(*r, src), d, src));
                        copies.is_none().then(|| descriptor_of(*r, src)).flatten()
                    });
                    self.opened_fds.extend(opened.collect::<Vec<_>>());
                }
                self.command(body, src, findings, &redirects);
            }
            None => self.visit(body, src),
        }
        if pipe_after.is_some() || body.kind() != "command" {
            // After the body: a `cd` inside it moves where relative targets land.
            let findings = self.write_findings(&redirects, src);
            self.findings_part(findings);
        }
        self.stdin = saved_stdin;
    }

    /// Remembers where a download command saves, so running that file later is held.
    pub(crate) fn note_download(&mut self, words: &[Word], redirects: &[Node], src: &str) {
        let downloads = words
            .first()
            .and_then(crate::permissions::classify::commands::program_name)
            .is_some_and(crate::permissions::classify::commands::is_download);
        if !downloads {
            return;
        }
        for redirect in redirects.iter().filter(|r| r.kind() == "file_redirect") {
            if let Some(dest) = destination(*redirect, src) {
                self.downloaded.push(dest.text);
            }
        }
        let names = ["-o", "--output", "-O", "--output-document"];
        if let Some(out) = crate::permissions::classify::commands::option_value(&words[1..], &names)
        {
            self.downloaded.push(out.text);
        }
    }

    pub(crate) fn findings_part(&mut self, findings: Vec<(Class, String)>) {
        if let Some((class, reason)) = findings.into_iter().max_by_key(|f| f.0) {
            self.push(Vec::new(), class, reason);
        }
    }

    /// What the output redirections among `redirects` write, outside the harmless devices.
    /// A copy of a descriptor above 2 that nothing in the command line opened (`>&5`) writes
    /// to whatever cairn's own parent left open there: an unknown place.
    pub(crate) fn write_findings(&self, redirects: &[Node], src: &str) -> Vec<(Class, String)> {
        let mut findings = Vec::new();
        let mut open = self.opened_fds.clone();
        for redirect in redirects {
            match redirect.kind() {
                "file_redirect" => {
                    let op = operator(*redirect, src);
                    let Some(dest) = redirect.child_by_field_name("destination") else {
                        continue;
                    };
                    let descriptor = descriptor_of(*redirect, src);
                    if let Some(copied) = copied_descriptor(&op, dest, src) {
                        // `N>&M` and `N<&M`: N is now what M is.
                        let known = copied <= 2 || open.contains(&copied);
                        if op.starts_with('>') && !known {
                            findings.push((
                                Class::Mutating,
                                format!(
                                    "writes to descriptor {copied}, which the command did not \
                                     open (an unknown place)"
                                ),
                            ));
                        }
                        if let Some(n) = descriptor.filter(|_| known) {
                            open.push(n);
                        }
                        continue;
                    }
                    if let Some(n) = descriptor {
                        open.push(n);
                    }
                    if op != "<"
                        && !(op == ">&" && text(dest, src) == "-")
                        && let Some(target) = destination(*redirect, src)
                    {
                        findings.extend(self.write_target(&target));
                    }
                }
                "heredoc_redirect" => {
                    let nested: Vec<Node> = redirect
                        .named_children(&mut redirect.walk())
                        .filter(|c| c.kind() == "file_redirect")
                        .collect();
                    findings.extend(self.write_findings(&nested, src));
                }
                _ => {}
            }
        }
        findings
    }

    /// Visits what a redirection runs (substitutions) and sets the standard input it gives.
    pub(crate) fn redirect<'t>(
        &mut self,
        node: Node<'t>,
        src: &str,
        pipe_after: &mut Option<Node<'t>>,
    ) {
        match node.kind() {
            "file_redirect" => {
                let op = operator(node, src);
                let mut network = false;
                if let Some(dest) = node.child_by_field_name("destination")
                    && let Some(target) = destination(node, src)
                {
                    self.visit(dest, src);
                    // Writes there are judged as protected paths; reads are held here.
                    let reads = op.starts_with('<');
                    let secret =
                        crate::permissions::classify::mentions::reads_secrets(&target.text)
                            .or_else(|| {
                                reads
                                    .then(|| {
                                        crate::permissions::classify::commands::names_secret_store(
                                            &self.places.secrets,
                                            &target.text,
                                        )
                                    })
                                    .flatten()
                            });
                    if let Some(why) = secret {
                        self.push(Vec::new(), Class::Dangerous, why);
                    }
                    network = is_network_device(&target.text);
                    if network && op.starts_with('<') {
                        self.push(
                            Vec::new(),
                            Class::Mutating,
                            format!("connects to the network ({})", target.text),
                        );
                    }
                }
                if op.starts_with('<') {
                    // What a shell reads from a socket is a download run as code.
                    self.stdin = if network {
                        Stdin::Pipe { download: true }
                    } else {
                        Stdin::File
                    };
                }
            }
            "heredoc_redirect" => {
                let mut body = String::new();
                for child in node.named_children(&mut node.walk()) {
                    match child.kind() {
                        "heredoc_body" => {
                            body = text(child, src).to_string();
                            self.children(child, src);
                        }
                        "pipeline" => *pipe_after = Some(child),
                        "file_redirect" | "herestring_redirect" => {
                            self.redirect(child, src, pipe_after)
                        }
                        _ => {}
                    }
                }
                self.stdin = Stdin::Code(body);
            }
            "herestring_redirect" => {
                self.children(node, src);
                let value = node
                    .named_children(&mut node.walk())
                    .map(|c| word(c, src).text)
                    .collect::<Vec<_>>();
                self.stdin = Stdin::Code(value.join(" "));
            }
            _ => self.children(node, src),
        }
    }
}

/// The word a redirection writes to or reads from. The grammar sometimes splits one shell
/// word in two (a redirection from another process's root directory and its `environ`); pieces with no blank between them
/// are one word to bash, so they are joined here.
/// The file a `<` redirection reads (`$(<~/.ssh/id_rsa)`), or `None` for other redirections.
pub(crate) fn read_target(redirect: Node, src: &str) -> Option<Word> {
    operator(redirect, src)
        .starts_with('<')
        .then(|| destination(redirect, src))
        .flatten()
}

fn destination(redirect: Node, src: &str) -> Option<Word> {
    let dest = redirect.child_by_field_name("destination")?;
    let mut target = word(dest, src);
    let mut node = dest;
    loop {
        let next = node.next_sibling().or_else(|| {
            (node.end_byte() == redirect.end_byte())
                .then(|| redirect.next_sibling())
                .flatten()
        });
        match next {
            Some(n) if n.is_named() && n.start_byte() == node.end_byte() => {
                let piece = word(n, src);
                target.text.push_str(&piece.text);
                target.literal &= piece.literal;
                node = n;
            }
            _ => return Some(target),
        }
    }
}

/// The descriptor a redirection sets (`3>file`, `4<&0`), when it names one.
fn descriptor_of(redirect: Node, src: &str) -> Option<u32> {
    redirect
        .child_by_field_name("descriptor")
        .and_then(|d| text(d, src).parse().ok())
}

/// The descriptor `>&M` or `<&M` copies (`>&-` closes: none).
fn copied_descriptor(op: &str, dest: Node, src: &str) -> Option<u32> {
    if !matches!(op, ">&" | "<&") {
        return None;
    }
    text(dest, src).trim().parse().ok()
}

/// Whether a path is one of bash's network pseudo-devices.
pub(crate) fn is_network_device(path: &str) -> bool {
    path.starts_with("/dev/tcp/") || path.starts_with("/dev/udp/")
}
