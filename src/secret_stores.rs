//! The one list of secret stores: where keys, credentials, tokens and cairn's own data (the
//! key in its config, other workspaces' session logs) live. The sandbox leaves them out of its
//! read grants, the classifier holds commands that name them, the file tools ask before
//! reading them and `@` mentions refuse them. Defaults below, plus `[sandbox] deny_read`.
//!
//! A store is a path relative to a home directory (`.ssh`, `.cargo/credentials*`) or an
//! absolute path; its last component may be a glob. Home-relative stores count under every
//! home cairn knows of: `$HOME`, the account's home from the password database (when `HOME`
//! points elsewhere), `/root`, and the homes under `/home`.

use std::path::{Component, Path, PathBuf};

/// Home-relative stores every user has by default. Left out on purpose: `~/.m2/settings.xml`
/// (every Maven build reads it; its passwords are meant to be encrypted with the master key in
/// `settings-security.xml`, which is listed), `~/.cargo/config.toml` and `~/.gitconfig`
/// (builds and git read them; tokens belong in the credential files listed).
pub const DEFAULT_STORES: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".docker",
    ".netrc",
    ".npmrc",
    ".yarnrc",
    ".pypirc",
    ".git-credentials",
    ".config/git/credentials",
    ".cargo/credentials*",
    ".config/gh",
    ".config/hub",
    ".config/glab-cli",
    ".pgpass",
    ".my.cnf",
    ".password-store",
    ".vault-token",
    ".terraform.d/credentials*",
    ".config/op",
    ".gem/credentials",
    ".m2/settings-security.xml",
    ".s3cfg",
    ".boto",
    ".config/rclone",
    ".config/doctl",
    ".oci",
    ".local/share/keyrings",
    ".mozilla",
    ".config/google-chrome",
    ".config/chromium",
    ".bash_history",
    ".zsh_history",
    // cairn's own config (the provider key may be in it) and data (every workspace's session
    // logs, the trust store) where the platform puts them for a Linux user; the directories
    // actually in use are added by the caller (`SecretStores::new`'s `own`).
    ".config/cairn",
    ".local/share/cairn",
];

/// A `[sandbox] deny_read` entry that cannot name a store.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DenyReadError {
    #[error(
        "sandbox.deny_read entry `{0}` is not a path: write `~/.secrets`, `.secrets` (in the home directory) or an absolute path"
    )]
    Empty(String),
    #[error(
        "sandbox.deny_read entry `{0}` climbs with `..` or is the home directory itself: name the store (`~/.secrets`) instead"
    )]
    Climbs(String),
}

/// One store, as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretStore {
    /// As written in the list (`.cargo/credentials*`, `/etc/vault`).
    pub spelled: String,
    /// Its components; a home-relative store's start below the home.
    pub components: Vec<String>,
    /// Relative to every home rather than absolute.
    pub in_home: bool,
}

impl SecretStore {
    fn parse(entry: &str) -> Result<Self, DenyReadError> {
        let trimmed = entry.trim();
        if trimmed == "~" {
            return Err(DenyReadError::Climbs(entry.into()));
        }
        let (in_home, rest) = if let Some(rest) = trimmed.strip_prefix("~/") {
            (true, rest)
        } else if let Some(rest) = trimmed.strip_prefix('/') {
            (false, rest)
        } else {
            (true, trimmed)
        };
        let mut components = Vec::new();
        for part in Path::new(rest).components() {
            match part {
                Component::Normal(name) => components.push(name.to_string_lossy().into_owned()),
                Component::CurDir => {}
                _ => return Err(DenyReadError::Climbs(entry.into())),
            }
        }
        if components.is_empty() {
            return Err(if trimmed == "~" || trimmed == "/" {
                DenyReadError::Climbs(entry.into())
            } else {
                DenyReadError::Empty(entry.into())
            });
        }
        Ok(Self {
            spelled: trimmed.to_string(),
            components,
            in_home,
        })
    }
}

/// How a path relates to the stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreReach<'a> {
    /// The path is a store or lies inside one (a glob in it may match one).
    Inside(&'a SecretStore),
    /// The path is a directory that holds a store: a walk from it reaches the store.
    Above(&'a SecretStore),
}

/// The stores of one session: the list, and where each one lies on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretStores {
    stores: Vec<SecretStore>,
    /// The home directories home-relative stores lie in, as spelled and as real paths.
    homes: Vec<PathBuf>,
    /// Every store as an absolute path (its last components may be globs), for each home,
    /// as spelled and through symlinks resolved.
    located: Vec<LocatedStore>,
}

/// A store's absolute path, its components (matched against every judged path) and its index.
#[derive(Debug, Clone, PartialEq, Eq)]
struct LocatedStore {
    path: PathBuf,
    components: Vec<String>,
    store: usize,
}

impl Default for SecretStores {
    /// The default list with no home known: the spellings still match (`~/.ssh` in a command),
    /// no absolute path does.
    fn default() -> Self {
        Self::new(&[], &[])
    }
}

impl SecretStores {
    /// The defaults under `homes`; `own` are cairn's config and data directories (absolute
    /// ones count).
    pub fn new(homes: &[PathBuf], own: &[PathBuf]) -> Self {
        let stores = DEFAULT_STORES
            .iter()
            .copied()
            .map(str::to_string)
            .chain(
                own.iter()
                    .filter(|d| d.is_absolute())
                    .map(|d| d.to_string_lossy().into_owned()),
            )
            .filter_map(|entry| SecretStore::parse(&entry).ok())
            .collect();
        Self::locate(stores, homes)
    }

    /// The defaults plus `extra` (`[sandbox] deny_read`); a bad entry is an error naming it.
    pub fn with_additions(
        homes: &[PathBuf],
        own: &[PathBuf],
        extra: &[String],
    ) -> Result<Self, DenyReadError> {
        let mut stores = Self::new(&[], own).stores;
        for entry in extra {
            stores.push(SecretStore::parse(entry)?);
        }
        Ok(Self::locate(stores, homes))
    }

    fn locate(mut stores: Vec<SecretStore>, homes: &[PathBuf]) -> Self {
        stores.dedup_by(|a, b| a.components == b.components && a.in_home == b.in_home);
        let mut all_homes: Vec<PathBuf> = Vec::new();
        for home in homes.iter().filter(|h| h.is_absolute()) {
            for spelling in with_real(home) {
                if !all_homes.contains(&spelling) {
                    all_homes.push(spelling);
                }
            }
        }
        let mut located = Vec::new();
        for (index, store) in stores.iter().enumerate() {
            let bases: Vec<PathBuf> = if store.in_home {
                all_homes.clone()
            } else {
                vec![PathBuf::from("/")]
            };
            for base in bases {
                let path = store.components.iter().fold(base, |p, c| p.join(c));
                for spelling in with_real_parent(&path) {
                    if !located.iter().any(|l: &LocatedStore| l.path == spelling) {
                        located.push(LocatedStore {
                            components: normal_components(&spelling),
                            path: spelling,
                            store: index,
                        });
                    }
                }
            }
        }
        Self {
            stores,
            homes: all_homes,
            located,
        }
    }

    /// From this process's environment: the homes cairn knows of (see the module doc).
    pub fn from_env(own: &[PathBuf], extra: &[String]) -> Result<Self, DenyReadError> {
        Self::with_additions(&known_homes(), own, extra)
    }

    /// Every store, as listed.
    pub fn stores(&self) -> &[SecretStore] {
        &self.stores
    }

    /// The home directories the home-relative stores lie in.
    pub fn homes(&self) -> &[PathBuf] {
        &self.homes
    }

    /// Every store's absolute path on this machine (the last components may be globs).
    pub fn locations(&self) -> impl Iterator<Item = (&Path, &SecretStore)> {
        self.located
            .iter()
            .map(|l| (l.path.as_path(), &self.stores[l.store]))
    }

    /// The store an absolute path is, or lies inside, if any.
    pub fn store_at(&self, path: &Path) -> Option<&SecretStore> {
        match self.reach(path) {
            Some(StoreReach::Inside(store)) => Some(store),
            _ => None,
        }
    }

    /// Whether an absolute path is a directory above a store (`~`, `/`, `~/.config`).
    pub fn holds_store(&self, path: &Path) -> bool {
        matches!(self.reach(path), Some(StoreReach::Above(_)))
    }

    /// How an absolute, normalized path (whose components may be globs: `~/.*/id_rsa`)
    /// relates to the stores. Inside wins over above.
    pub fn reach(&self, path: &Path) -> Option<StoreReach<'_>> {
        let parts = normal_components(path);
        let mut above = None;
        for located in &self.located {
            let wanted = &located.components;
            let store = &self.stores[located.store];
            let shared = parts.len().min(wanted.len());
            if !(0..shared).all(|i| component_matches(&parts[i], &wanted[i])) {
                continue;
            }
            if parts.len() >= wanted.len() {
                return Some(StoreReach::Inside(store));
            }
            above.get_or_insert(StoreReach::Above(store));
        }
        above
    }

    /// The stores that exist strictly below `root`, as concrete paths (globs expanded), for a
    /// walk that must not enter them.
    pub fn stores_below(&self, root: &Path) -> Vec<PathBuf> {
        let mut below = Vec::new();
        for (location, _) in self.locations() {
            if !location.starts_with(root) || location == root {
                continue;
            }
            for found in expand_last(location) {
                if !below.contains(&found) {
                    below.push(found);
                }
            }
        }
        below
    }
}

/// Whether a path component (possibly a glob, `.*`, `cred*`) could name a listed component
/// (possibly a glob itself, `credentials*`). Leading dots match like any character: `dotglob`
/// may be on, and `.*` matches every dot entry anyway.
pub fn component_matches(part: &str, listed: &str) -> bool {
    let part_glob = is_glob(part);
    let listed_glob = is_glob(listed);
    match (part_glob, listed_glob) {
        (false, false) => part == listed,
        (false, true) => glob_match(listed.as_bytes(), part.as_bytes()),
        (true, false) => glob_match(part.as_bytes(), listed.as_bytes()),
        // Two globs: either read as text matching the other is close enough.
        (true, true) => {
            glob_match(part.as_bytes(), listed.as_bytes())
                || glob_match(listed.as_bytes(), part.as_bytes())
        }
    }
}

fn is_glob(text: &str) -> bool {
    text.contains(['*', '?', '['])
}

/// Shell glob matching (`*`, `?`, `[a-z]`, `[!x]`) of pattern `p` against `s`.
pub fn glob_match(p: &[u8], s: &[u8]) -> bool {
    match p.first() {
        None => s.is_empty(),
        Some(b'*') => (0..=s.len()).any(|i| glob_match(&p[1..], &s[i..])),
        Some(b'?') => !s.is_empty() && glob_match(&p[1..], &s[1..]),
        Some(b'[') => {
            let Some(close) = p.iter().skip(2).position(|&c| c == b']').map(|i| i + 2) else {
                return s.first() == Some(&b'[') && glob_match(&p[1..], &s[1..]);
            };
            let Some(&c) = s.first() else {
                return false;
            };
            let mut set = &p[1..close];
            let negated = matches!(set.first(), Some(b'!' | b'^'));
            if negated {
                set = &set[1..];
            }
            let mut hit = false;
            let mut i = 0;
            while i < set.len() {
                if i + 2 < set.len() && set[i + 1] == b'-' {
                    hit |= (set[i]..=set[i + 2]).contains(&c);
                    i += 3;
                } else {
                    hit |= set[i] == c;
                    i += 1;
                }
            }
            hit != negated && glob_match(&p[close + 1..], &s[1..])
        }
        Some(&c) => s.first() == Some(&c) && glob_match(&p[1..], &s[1..]),
    }
}

/// The homes of this machine that matter: `$HOME`, the account's home from the password
/// database, `/root`, and every directory under `/home`. Missing ones are kept: a store
/// under a home that appears later is still a store.
pub fn known_homes() -> Vec<PathBuf> {
    let mut homes: Vec<PathBuf> = Vec::new();
    let mut add = |home: PathBuf| {
        if home.is_absolute() && home != Path::new("/") && !homes.contains(&home) {
            homes.push(home);
        }
    };
    if let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        add(PathBuf::from(home));
    }
    if let Some(home) = account_home() {
        add(home);
    }
    add(PathBuf::from("/root"));
    if let Ok(entries) = std::fs::read_dir("/home") {
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                add(entry.path());
            }
        }
    }
    homes
}

/// The home directory the password database gives this process's user.
fn account_home() -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let mut buffer = vec![0 as libc::c_char; 4096];
    // SAFETY: `passwd` is plain data the call fills; `buffer` outlives the call and its
    // length is passed; `result` is checked before anything it points to is read.
    unsafe {
        let mut passwd: libc::passwd = std::mem::zeroed();
        let mut result: *mut libc::passwd = std::ptr::null_mut();
        let status = libc::getpwuid_r(
            libc::getuid(),
            &mut passwd,
            buffer.as_mut_ptr(),
            buffer.len(),
            &mut result,
        );
        if status != 0 || result.is_null() || passwd.pw_dir.is_null() {
            return None;
        }
        let dir = std::ffi::CStr::from_ptr(passwd.pw_dir);
        Some(PathBuf::from(std::ffi::OsStr::from_bytes(dir.to_bytes())))
    }
}

fn normal_components(path: &Path) -> Vec<String> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect()
}

/// A path and, where it differs, its real path.
fn with_real(path: &Path) -> Vec<PathBuf> {
    let mut out = vec![path.to_path_buf()];
    if let Ok(real) = std::fs::canonicalize(path)
        && real != path
    {
        out.push(real);
    }
    out
}

/// A path and its spelling with the parent's symlinks resolved (the store itself may be a
/// glob, or missing).
fn with_real_parent(path: &Path) -> Vec<PathBuf> {
    let mut out = vec![path.to_path_buf()];
    let mut existing = path;
    let mut rest = Vec::new();
    while let Some(parent) = existing.parent() {
        if let Some(name) = existing.file_name() {
            rest.push(name.to_os_string());
        }
        existing = parent;
        if let Ok(real) = std::fs::canonicalize(existing) {
            let resolved = rest.iter().rev().fold(real, |acc, part| acc.join(part));
            if resolved != path {
                out.push(resolved);
            }
            break;
        }
    }
    out
}

/// The existing paths a location with a globbed last component stands for (itself when it has
/// no glob).
fn expand_last(location: &Path) -> Vec<PathBuf> {
    let Some(name) = location
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
    else {
        return Vec::new();
    };
    if !is_glob(&name) {
        return vec![location.to_path_buf()];
    }
    let Some(parent) = location.parent() else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(parent) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| glob_match(name.as_bytes(), e.file_name().to_string_lossy().as_bytes()))
        .map(|e| e.path())
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn stores() -> SecretStores {
        SecretStores::with_additions(
            &[PathBuf::from("/home/u")],
            &[PathBuf::from("/var/lib/cairn-data")],
            &[
                "~/.secrets".into(),
                "/etc/vault".into(),
                "notes/keys.txt".into(),
            ],
        )
        .unwrap()
    }

    #[test]
    fn the_defaults_the_own_dirs_and_the_additions_are_stores() {
        let stores = stores();
        for path in [
            "/home/u/.ssh/id_rsa",
            "/home/u/.aws/credentials",
            "/home/u/.npmrc",
            "/home/u/.pypirc",
            "/home/u/.cargo/credentials.toml",
            "/home/u/.cargo/credentials",
            "/home/u/.config/hub",
            "/home/u/.config/cairn/config.toml",
            "/home/u/.local/share/cairn/sessions/x.jsonl",
            "/home/u/.terraform.d/credentials.tfrc.json",
            "/var/lib/cairn-data/sessions/y.jsonl",
            "/home/u/.secrets",
            "/home/u/notes/keys.txt",
            "/etc/vault/token",
        ] {
            assert!(stores.store_at(Path::new(path)).is_some(), "{path}");
        }
        for path in [
            "/home/u/.sshd",
            "/home/u/.cargo/bin/cargo",
            "/home/u/.cargo/config.toml",
            "/home/u/.config/nvim/init.lua",
            "/home/u/notes/todo.txt",
            "/etc/passwd",
        ] {
            assert!(stores.store_at(Path::new(path)).is_none(), "{path}");
        }
    }

    #[test]
    fn globs_and_directories_above_reach_the_stores() {
        let stores = stores();
        let inside = |p: &str| matches!(stores.reach(Path::new(p)), Some(StoreReach::Inside(_)));
        let above = |p: &str| matches!(stores.reach(Path::new(p)), Some(StoreReach::Above(_)));
        assert!(inside("/home/u/.*/id_rsa"));
        assert!(inside("/home/u/.*"));
        assert!(inside("/home/u/*/*"));
        assert!(inside("/home/u/.config/*/config.toml"));
        assert!(inside("/home/u/.cargo/cred*"));
        for dir in [
            "/",
            "/home",
            "/home/u",
            "/home/u/.config",
            "/home/u/.local/share",
        ] {
            assert!(above(dir), "{dir}");
        }
        assert!(stores.reach(Path::new("/home/u/src")).is_none());
        assert!(stores.reach(Path::new("/usr")).is_none());
    }

    #[test]
    fn every_home_counts_and_bad_entries_are_refused() {
        let stores = SecretStores::new(&[PathBuf::from("/tmp/h"), PathBuf::from("/root")], &[]);
        assert!(
            stores
                .store_at(&Path::new("/").join("root").join(".ssh/id_rsa"))
                .is_some()
        );
        assert!(stores.store_at(Path::new("/tmp/h/.ssh/id_rsa")).is_some());
        assert_eq!(
            SecretStores::with_additions(&[], &[], &["~/../x".into()]),
            Err(DenyReadError::Climbs("~/../x".into()))
        );
        assert!(matches!(
            SecretStores::with_additions(&[], &[], &["~".into()]),
            Err(DenyReadError::Climbs(_))
        ));
        assert!(matches!(
            SecretStores::with_additions(&[], &[], &["  ".into()]),
            Err(DenyReadError::Empty(_))
        ));
    }

    #[test]
    fn stores_below_a_root_are_concrete() {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join(".cargo/bin")).unwrap();
        std::fs::write(home.path().join(".cargo/credentials.toml"), "t").unwrap();
        let stores = SecretStores::new(&[home.path().to_path_buf()], &[]);
        let below = stores.stores_below(&home.path().join(".cargo"));
        let real = std::fs::canonicalize(home.path()).unwrap();
        assert!(
            below.contains(&home.path().join(".cargo/credentials.toml"))
                || below.contains(&real.join(".cargo/credentials.toml")),
            "{below:?}"
        );
        assert!(!below.iter().any(|p| p.ends_with("bin")));
    }
}
