//! Where cairn keeps its own files: the user's config directory (`config.toml`) and the data
//! directory (session logs, checkpoint stores, the trust store, the models cache, the log).
//!
//! `Dirs::from_env` is the one place these are derived from the environment; the launch and
//! the subcommands build it once and pass it to whoever needs a place. A leaf: it imports
//! nothing of cairn, so every layer may use it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Where both directories go when the platform names no home for them (no `$HOME` and no
/// password entry): inside the current directory.
const NO_HOME: &str = ".cairn";

/// The workspace's top-level directories whose contents an agent obeys later (cairn's project
/// rules, skills, commands, settings and hooks of `.agents/` and `.claude/`): what the
/// repository or the model puts there could grant. The one list the sandbox's after-check
/// (process/protect), Landlock's workspace rules and the gate (fs/places, the classifier)
/// share: every write below them asks or is put back, like a write into `.git/`.
pub const PROJECT_SETTINGS: &[&str] = &[".cairn", ".agents", ".claude"];

/// Whether a path component names one of `PROJECT_SETTINGS`.
pub fn is_project_settings(name: &std::ffi::OsStr) -> bool {
    PROJECT_SETTINGS.iter().any(|p| name == *p)
}

/// Where the workspace's project settings lead through symlinks, as real paths: a
/// `PROJECT_SETTINGS` entry that is a link (`.claude -> config/claude`), or a link in one two
/// levels down at most (`.claude/skills -> ../tools/skills`, `.agents/skills/x -> ...`).
/// Skills and settings are read through them, so writes there count as writes to the settings.
pub fn linked_project_settings(workspace: &Path) -> Vec<PathBuf> {
    fn visit(path: &Path, depth: usize, out: &mut Vec<PathBuf>) {
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            return;
        };
        if meta.file_type().is_symlink() {
            if let Ok(real) = std::fs::canonicalize(path)
                && !out.contains(&real)
            {
                out.push(real);
            }
            return;
        }
        if !meta.is_dir() || depth == 2 {
            return;
        }
        let Ok(children) = std::fs::read_dir(path) else {
            return;
        };
        // A settings directory is small; a huge one is looked at this far.
        for child in children.flatten().take(1000) {
            visit(&child.path(), depth + 1, out);
        }
    }
    let mut out = Vec::new();
    for name in PROJECT_SETTINGS {
        visit(&workspace.join(name), 0, &mut out);
    }
    out
}

/// Whether the real path `real` lies in the project settings of `workspace` (a real path too):
/// below one of `PROJECT_SETTINGS` at its top, or where one leads through a link.
pub fn in_project_settings(workspace: &Path, real: &Path) -> bool {
    let direct = real.strip_prefix(workspace).is_ok_and(|rest| {
        rest.components()
            .next()
            .is_some_and(|c| is_project_settings(c.as_os_str()))
    });
    direct
        || linked_project_settings(workspace)
            .iter()
            .any(|target| real.starts_with(target))
}

/// cairn's directories for one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dirs {
    config: PathBuf,
    data: PathBuf,
    sessions: PathBuf,
}

impl Dirs {
    /// From this process's environment: `$CAIRN_CONFIG_DIR` and `$CAIRN_DATA_DIR` when set,
    /// else the platform's config and data directories for cairn (XDG on Linux).
    pub fn from_env() -> Self {
        let platform = directories::ProjectDirs::from("", "", "cairn");
        Self::resolve(
            std::env::var_os("CAIRN_CONFIG_DIR"),
            std::env::var_os("CAIRN_DATA_DIR"),
            platform
                .as_ref()
                .map(|dirs| (dirs.config_dir(), dirs.data_dir())),
        )
    }

    /// The overrides (`CAIRN_CONFIG_DIR`, `CAIRN_DATA_DIR`) win over the platform's
    /// `(config, data)` directories; with neither, `.cairn`.
    fn resolve(
        config_override: Option<OsString>,
        data_override: Option<OsString>,
        platform: Option<(&Path, &Path)>,
    ) -> Self {
        let pick = |over: Option<OsString>, platform: Option<&Path>| {
            over.map(PathBuf::from)
                .or_else(|| platform.map(Path::to_path_buf))
                .unwrap_or_else(|| PathBuf::from(NO_HOME))
        };
        Self::new(
            pick(config_override, platform.map(|(config, _)| config)),
            pick(data_override, platform.map(|(_, data)| data)),
        )
    }

    /// The config directory `config` and the data directory `data`, laid out as a run lays
    /// them out (session logs in `<data>/sessions`).
    pub fn new(config: PathBuf, data: PathBuf) -> Self {
        let sessions = data.join("sessions");
        Self {
            config,
            data,
            sessions,
        }
    }

    /// A run whose session logs go to `sessions` (tests and benches inject one). Named
    /// `sessions`, it sits in the data directory as in `new`; of any other name it is the data
    /// directory itself, so checkpoints and the trust store never land in a shared parent such
    /// as the temp dir. The config directory is `<data>/config`.
    pub fn for_sessions(sessions: &Path) -> Self {
        let data = match sessions.parent() {
            Some(parent) if sessions.file_name().is_some_and(|name| name == "sessions") => {
                parent.to_path_buf()
            }
            _ => sessions.to_path_buf(),
        };
        Self {
            config: data.join("config"),
            data,
            sessions: sessions.to_path_buf(),
        }
    }

    /// The user's config directory.
    pub fn config(&self) -> &Path {
        &self.config
    }

    /// The user's config file.
    pub fn config_file(&self) -> PathBuf {
        self.config.join("config.toml")
    }

    /// The data directory: the trust store lives in it, and the checkpoint stores in its
    /// `checkpoints/` (`CheckpointStore::open` takes this directory).
    pub fn data(&self) -> &Path {
        &self.data
    }

    /// Where session logs live.
    pub fn sessions(&self) -> &Path {
        &self.sessions
    }

    /// The cache of the context windows providers reported.
    pub fn models_cache(&self) -> PathBuf {
        self.data.join("models.json")
    }

    /// cairn's own log file (never the screen).
    pub fn log_file(&self) -> PathBuf {
        self.data.join("cairn.log")
    }

    /// The config and data directories where they are absolute: the places a command or a
    /// file tool must not change or read (a relative fallback names no fixed place).
    pub fn own(&self) -> Vec<PathBuf> {
        [&self.config, &self.data]
            .into_iter()
            .filter(|dir| dir.is_absolute())
            .cloned()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn platform() -> Option<(&'static Path, &'static Path)> {
        Some((
            Path::new("/home/u/.config/cairn"),
            Path::new("/home/u/.local/share/cairn"),
        ))
    }

    #[test]
    fn each_directory_comes_from_the_platform_base() {
        let dirs = Dirs::resolve(None, None, platform());
        assert_eq!(dirs.config(), Path::new("/home/u/.config/cairn"));
        assert_eq!(
            dirs.config_file(),
            Path::new("/home/u/.config/cairn/config.toml")
        );
        assert_eq!(dirs.data(), Path::new("/home/u/.local/share/cairn"));
        assert_eq!(
            dirs.sessions(),
            Path::new("/home/u/.local/share/cairn/sessions")
        );
        assert_eq!(
            dirs.models_cache(),
            Path::new("/home/u/.local/share/cairn/models.json")
        );
        assert_eq!(
            dirs.log_file(),
            Path::new("/home/u/.local/share/cairn/cairn.log")
        );
        assert_eq!(
            dirs.own(),
            [
                PathBuf::from("/home/u/.config/cairn"),
                PathBuf::from("/home/u/.local/share/cairn")
            ]
        );
    }

    #[test]
    fn the_overrides_win_each_for_its_own_directory() {
        let dirs = Dirs::resolve(Some("/c".into()), None, platform());
        assert_eq!(dirs.config_file(), Path::new("/c/config.toml"));
        assert_eq!(
            dirs.sessions(),
            Path::new("/home/u/.local/share/cairn/sessions")
        );
        let dirs = Dirs::resolve(None, Some("/d".into()), platform());
        assert_eq!(dirs.config(), Path::new("/home/u/.config/cairn"));
        assert_eq!(dirs.sessions(), Path::new("/d/sessions"));
        assert_eq!(dirs.log_file(), Path::new("/d/cairn.log"));
        // Without a home, the overrides still apply.
        let dirs = Dirs::resolve(Some("/c".into()), Some("/d".into()), None);
        assert_eq!(dirs, Dirs::new("/c".into(), "/d".into()));
    }

    #[test]
    fn without_a_home_both_are_in_the_current_directory_and_not_own_places() {
        let dirs = Dirs::resolve(None, None, None);
        assert_eq!(dirs.config_file(), Path::new(".cairn/config.toml"));
        assert_eq!(dirs.sessions(), Path::new(".cairn/sessions"));
        assert_eq!(dirs.data(), Path::new(".cairn"));
        assert!(dirs.own().is_empty(), "{:?}", dirs.own());
    }

    #[test]
    fn an_injected_sessions_dir_keeps_the_data_beside_or_inside_it() {
        let beside = Dirs::for_sessions(Path::new("/t/data/sessions"));
        assert_eq!(beside.data(), Path::new("/t/data"));
        assert_eq!(beside.sessions(), Path::new("/t/data/sessions"));
        let inside = Dirs::for_sessions(Path::new("/t/logs"));
        assert_eq!(inside.data(), Path::new("/t/logs"));
        assert_eq!(inside.sessions(), Path::new("/t/logs"));
    }
}
