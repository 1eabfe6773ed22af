//! Which language servers a session has: the built-in entries whose program is on `PATH`
//! (rust-analyzer, pyright or pylsp, typescript-language-server, gopls, clangd), the user's
//! `[lsp.NAME]` entries (which may change or turn off a built-in one), and a project's
//! `[lsp.NAME]` in `.cairn/config.toml`, which run only once trusted in their current content
//! (SPEC §11.3, `trust`). Nothing is ever downloaded: a program that is not there is listed as
//! missing.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use crate::config::{LspFile, LspServerEntry};
use crate::trust::{Judged, ProcessKind, ProcessTrust, ProjectProcess};

/// Where a server's entry comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerOrigin {
    BuiltIn,
    User,
    Project,
}

/// A server the session may start.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerSpec {
    pub name: String,
    /// The program as found (a path), then its arguments.
    pub command: String,
    pub args: Vec<String>,
    /// File extensions, without the dot.
    pub extensions: Vec<String>,
    pub root_markers: Vec<String>,
    pub init_options: Option<Value>,
    pub origin: ServerOrigin,
}

impl ServerSpec {
    pub fn serves(&self, path: &Path) -> bool {
        path.extension()
            .and_then(|e| e.to_str())
            .is_some_and(|ext| self.extensions.iter().any(|x| x == ext))
    }
}

/// A configured server that does not run, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Missing {
    pub name: String,
    pub why: String,
}

/// The servers of a session.
#[derive(Debug, Default)]
pub struct FoundServers {
    pub servers: Vec<Arc<ServerSpec>>,
    pub missing: Vec<Missing>,
    /// The project's servers that wait for the user's trust.
    pub untrusted: Vec<Judged>,
    pub notices: Vec<String>,
}

struct BuiltIn {
    name: &'static str,
    command: &'static str,
    args: &'static [&'static str],
    extensions: &'static [&'static str],
    root_markers: &'static [&'static str],
}

/// The built-in entries, in the order they are preferred for a language.
const BUILT_IN: &[BuiltIn] = &[
    BuiltIn {
        name: "rust-analyzer",
        command: "rust-analyzer",
        args: &[],
        extensions: &["rs"],
        root_markers: &["Cargo.toml"],
    },
    BuiltIn {
        name: "pyright",
        command: "pyright-langserver",
        args: &["--stdio"],
        extensions: &["py", "pyi"],
        root_markers: &["pyproject.toml", "setup.py", "pyrightconfig.json"],
    },
    BuiltIn {
        name: "pylsp",
        command: "pylsp",
        args: &[],
        extensions: &["py", "pyi"],
        root_markers: &["pyproject.toml", "setup.py"],
    },
    BuiltIn {
        name: "typescript-language-server",
        command: "typescript-language-server",
        args: &["--stdio"],
        extensions: &["ts", "tsx", "js", "jsx", "mjs", "cjs", "mts", "cts"],
        root_markers: &["tsconfig.json", "jsconfig.json", "package.json"],
    },
    BuiltIn {
        name: "gopls",
        command: "gopls",
        args: &[],
        extensions: &["go"],
        root_markers: &["go.mod"],
    },
    BuiltIn {
        name: "clangd",
        command: "clangd",
        args: &[],
        extensions: &["c", "h", "cc", "cpp", "cxx", "hpp", "hh"],
        root_markers: &["compile_commands.json", "CMakeLists.txt"],
    },
];

/// The session's servers: the user's entries and the built-ins (`user`), then the project's
/// (`.cairn/config.toml` in `workspace`, judged by `trust`). `path` is the `PATH` to look
/// programs up in.
pub fn find(
    user: &LspFile,
    workspace: &Path,
    trust: Option<&ProcessTrust>,
    path: Option<&std::ffi::OsStr>,
) -> FoundServers {
    let mut found = FoundServers::default();
    if user.enabled == Some(false) {
        return found;
    }
    let project_path = workspace.join(".cairn").join("config.toml");
    match project_file(&project_path) {
        Ok(Some(project)) => {
            for (name, entry) in &project.servers {
                let Some(command) = entry.command.clone() else {
                    found.notices.push(format!(
                        "left out the project's language server {name}: it has no command"
                    ));
                    continue;
                };
                if entry.enabled == Some(false) {
                    continue;
                }
                let mut argv = vec![command.clone()];
                argv.extend(entry.args.clone().unwrap_or_default());
                let process = ProjectProcess {
                    kind: ProcessKind::LanguageServer,
                    name: name.clone(),
                    config: project_path.clone(),
                    command: argv,
                };
                let judged = match trust.map(|t| t.judge(&process)) {
                    Some(Ok(judged)) => judged,
                    Some(Err(err)) => {
                        found.notices.push(format!(
                            "left out the project's language server {name}: {err}"
                        ));
                        continue;
                    }
                    None => continue,
                };
                if !judged.trusted() {
                    found.missing.push(Missing {
                        name: name.clone(),
                        why: "the project's; not trusted yet".into(),
                    });
                    found.untrusted.push(judged);
                    continue;
                }
                let program = if command.contains('/') {
                    Some(workspace.join(&command))
                } else {
                    which(&command, path)
                };
                add(
                    &mut found,
                    name,
                    entry,
                    program,
                    &command,
                    ServerOrigin::Project,
                    None,
                );
            }
        }
        Ok(None) => {}
        Err(message) => found.notices.push(format!(
            "left out the project's language servers: {message}"
        )),
    }
    for (name, entry) in &user.servers {
        if BUILT_IN.iter().any(|b| b.name == name) {
            continue;
        }
        let Some(command) = entry.command.clone() else {
            found.missing.push(Missing {
                name: name.clone(),
                why: "no command configured".into(),
            });
            continue;
        };
        if entry.enabled == Some(false) {
            continue;
        }
        let program = if command.contains('/') {
            Some(PathBuf::from(&command))
        } else {
            which(&command, path)
        };
        add(
            &mut found,
            name,
            entry,
            program,
            &command,
            ServerOrigin::User,
            None,
        );
    }
    for built in BUILT_IN {
        let entry = user.servers.get(built.name).cloned().unwrap_or_default();
        if entry.enabled == Some(false) {
            continue;
        }
        let command = entry.command.clone().unwrap_or(built.command.to_string());
        let program = if command.contains('/') {
            Some(PathBuf::from(&command))
        } else {
            which(&command, path)
        };
        let Some(program) = program.filter(|p| p.is_file() && !idle_proxy(p)) else {
            // A built-in entry whose program is not there is simply not used.
            continue;
        };
        // A language another server already serves keeps that one (pyright before pylsp).
        let extensions = entry
            .languages
            .clone()
            .unwrap_or(built.extensions.iter().map(|s| s.to_string()).collect());
        if extensions
            .iter()
            .all(|ext| found.servers.iter().any(|s| s.extensions.contains(ext)))
        {
            continue;
        }
        add(
            &mut found,
            built.name,
            &entry,
            Some(program),
            &command,
            ServerOrigin::BuiltIn,
            Some(built),
        );
    }
    found
}

fn add(
    found: &mut FoundServers,
    name: &str,
    entry: &LspServerEntry,
    program: Option<PathBuf>,
    command: &str,
    origin: ServerOrigin,
    built: Option<&BuiltIn>,
) {
    let Some(program) = program.filter(|p| p.is_file()) else {
        found.missing.push(Missing {
            name: name.to_string(),
            why: format!("{command} is not installed (not on PATH); cairn never downloads one"),
        });
        return;
    };
    let extensions = entry.languages.clone().unwrap_or_else(|| {
        built.map_or_else(Vec::new, |b| {
            b.extensions.iter().map(|s| s.to_string()).collect()
        })
    });
    if extensions.is_empty() {
        found.missing.push(Missing {
            name: name.to_string(),
            why: "no `languages` (file extensions) configured".into(),
        });
        return;
    }
    found.servers.push(Arc::new(ServerSpec {
        name: name.to_string(),
        command: program.display().to_string(),
        args: entry.args.clone().unwrap_or_else(|| {
            built.map_or_else(Vec::new, |b| b.args.iter().map(|s| s.to_string()).collect())
        }),
        extensions,
        root_markers: entry.root_markers.clone().unwrap_or_else(|| {
            built.map_or_else(Vec::new, |b| {
                b.root_markers.iter().map(|s| s.to_string()).collect()
            })
        }),
        init_options: entry
            .initialization_options
            .clone()
            .and_then(|v| serde_json::to_value(v).ok()),
        origin,
    }));
}

/// A rustup proxy (`~/.cargo/bin/rust-analyzer` links to rustup) whose toolchain lacks the
/// component: it is on `PATH` but cannot run. Only a proxy is asked (`--version`), so a start
/// pays for this check only where rustup is what `PATH` found.
fn idle_proxy(program: &Path) -> bool {
    let real = std::fs::canonicalize(program).unwrap_or_else(|_| program.to_path_buf());
    let is_rustup = real
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("rustup"));
    is_rustup
        && !std::process::Command::new(program)
            .arg("--version")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
}

/// A program's path on `PATH`.
pub fn which(command: &str, path: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    std::env::split_paths(path?)
        .map(|dir| dir.join(command))
        .find(|candidate| {
            use std::os::unix::fs::PermissionsExt as _;
            candidate
                .metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// The `[lsp]` table of a project's `.cairn/config.toml` (not followed through a symlink).
fn project_file(path: &Path) -> Result<Option<LspFile>, String> {
    match std::fs::symlink_metadata(path) {
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(err.to_string()),
        Ok(meta) if meta.file_type().is_symlink() => {
            return Err(format!(
                "{} is a symlink; cairn does not follow it",
                path.display()
            ));
        }
        Ok(_) => {}
    }
    let text = std::fs::read_to_string(path).map_err(|err| err.to_string())?;
    let table: toml::Table = text
        .parse()
        .map_err(|err: toml::de::Error| err.to_string())?;
    let Some(lsp) = table.get("lsp") else {
        return Ok(None);
    };
    lsp.clone()
        .try_into()
        .map(Some)
        .map_err(|err: toml::de::Error| format!("[lsp]: {err}"))
}

/// The protocol's language id of a file.
pub fn language_id(path: &Path) -> String {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    match ext {
        "rs" => "rust",
        "py" | "pyi" => "python",
        "ts" | "mts" | "cts" => "typescript",
        "tsx" => "typescriptreact",
        "js" | "mjs" | "cjs" => "javascript",
        "jsx" => "javascriptreact",
        "go" => "go",
        "c" | "h" => "c",
        "cc" | "cpp" | "cxx" | "hpp" | "hh" => "cpp",
        other => other,
    }
    .to_string()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn program(dir: &Path, name: &str) {
        use std::os::unix::fs::PermissionsExt as _;
        let path = dir.join(name);
        std::fs::write(&path, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn built_ins_are_used_only_when_on_path_and_the_user_can_turn_them_off() {
        let bin = tempfile::tempdir().unwrap();
        let ws = tempfile::tempdir().unwrap();
        program(bin.path(), "rust-analyzer");
        program(bin.path(), "pylsp");
        let path = bin.path().as_os_str();
        let found = find(&LspFile::default(), ws.path(), None, Some(path));
        let names: Vec<&str> = found.servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["rust-analyzer", "pylsp"]);
        assert!(found.missing.is_empty());
        let off: LspFile = toml::from_str("[rust-analyzer]\nenabled = false\n").unwrap();
        let found = find(&off, ws.path(), None, Some(path));
        let names: Vec<&str> = found.servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["pylsp"]);
    }

    /// `~/.cargo/bin/rust-analyzer` is a link to rustup, which fails when the toolchain lacks
    /// the component: such a proxy is not a server; one whose toolchain has it is.
    #[test]
    fn a_rustup_proxy_without_the_component_is_not_a_server() {
        use std::os::unix::fs::PermissionsExt as _;
        let ws = tempfile::tempdir().unwrap();
        for (body, expected) in [
            ("exit 1", Vec::<&str>::new()),
            ("exit 0", vec!["rust-analyzer"]),
        ] {
            let bin = tempfile::tempdir().unwrap();
            let rustup = bin.path().join("rustup");
            std::fs::write(&rustup, format!("#!/bin/sh\n{body}\n")).unwrap();
            std::fs::set_permissions(&rustup, std::fs::Permissions::from_mode(0o755)).unwrap();
            std::os::unix::fs::symlink("rustup", bin.path().join("rust-analyzer")).unwrap();
            let found = find(
                &LspFile::default(),
                ws.path(),
                None,
                Some(bin.path().as_os_str()),
            );
            let names: Vec<&str> = found.servers.iter().map(|s| s.name.as_str()).collect();
            assert_eq!(names, expected, "a proxy that says {body}");
        }
    }

    #[test]
    fn a_users_server_that_is_not_installed_is_listed_as_missing() {
        let ws = tempfile::tempdir().unwrap();
        let file: LspFile =
            toml::from_str("[mine]\ncommand = \"no-such-ls-here\"\nlanguages = [\"x\"]\n").unwrap();
        let found = find(&file, ws.path(), None, Some(std::ffi::OsStr::new("")));
        assert!(found.servers.is_empty());
        assert_eq!(found.missing[0].name, "mine");
        assert!(
            found.missing[0].why.contains("never downloads"),
            "{:?}",
            found.missing
        );
    }

    #[test]
    fn a_projects_server_waits_for_trust() {
        let ws = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        std::fs::create_dir(ws.path().join(".cairn")).unwrap();
        std::fs::write(
            ws.path().join(".cairn/config.toml"),
            "[lsp.proj]\ncommand = \"/bin/cat\"\nlanguages = [\"p\"]\n",
        )
        .unwrap();
        let trust = ProcessTrust::new(data.path(), ws.path());
        let found = find(&LspFile::default(), ws.path(), Some(&trust), None);
        assert!(found.servers.is_empty());
        assert_eq!(found.untrusted.len(), 1);
        trust.trust(&found.untrusted[0]).unwrap();
        let found = find(&LspFile::default(), ws.path(), Some(&trust), None);
        assert_eq!(found.servers[0].name, "proj");
        assert_eq!(found.servers[0].origin, ServerOrigin::Project);
    }
}
