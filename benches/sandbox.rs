//! Time the sandbox and the limits add to a command: `true` run through the process service
//! unsandboxed without limits (the base), unsandboxed with the default limits (its cgroup, or
//! rlimits), in the read-only and in the workspace-write sandbox (a workspace of 40 top-level entries and a
//! repository made by `git init`, whose config, hooks and `.cairn/` are recorded before and
//! checked after each run; and the same with 100 submodules' git dirs), median of many runs
//! each, interleaved so load hits all alike. Target: under 3 ms added. It also prints how
//! the read grant on `/` is split around the secret stores: how many entries are granted, and
//! how many of them are home entries. Run by hand: `cargo bench --bench sandbox`.
#![allow(clippy::print_stdout, clippy::unwrap_used)]

use std::time::{Duration, Instant};

use cairn::process::limits::{CommandLimits, Limits};
use cairn::process::sandbox::read_grants;
use cairn::process::sandbox::{LandlockStatus, SandboxPolicy, landlock_status};
use cairn::process::{self, CommandSpec, Grant, protect};
use tokio_util::sync::CancellationToken;

const RUNS: usize = 200;

/// How the read grant on `/` is split around the secret stores on this machine.
fn print_read_grants() {
    let stores = cairn::secret_stores::SecretStores::from_env(&[], &[]).unwrap_or_default();
    let started = Instant::now();
    let split = read_grants::split(std::path::Path::new("/"), &stores);
    let took = started.elapsed();
    let homes = stores.homes();
    let in_a_home = split
        .whole
        .iter()
        .filter(|p| homes.iter().any(|h| p.starts_with(h)))
        .count();
    println!(
        "read grant on /: {} entries granted whole ({in_a_home} of them home entries, under {} known homes), {} directories split, in {:.2} ms",
        split.whole.len(),
        homes.len(),
        split.split.len(),
        took.as_secs_f64() * 1e3
    );
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn main() {
    if let LandlockStatus::Unavailable(reason) = landlock_status() {
        println!("sandbox bench skipped: {reason}");
        return;
    }
    print_read_grants();
    if let Some(why) = process::limits::binding() {
        println!("limits on this machine: {why}");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    for i in 0..20 {
        std::fs::create_dir(dir.path().join(format!("dir{i}"))).unwrap();
        std::fs::write(dir.path().join(format!("file{i}")), "x").unwrap();
    }
    repository(dir.path());
    let modules = tempfile::tempdir().unwrap();
    repository(modules.path());
    for i in 0..100 {
        // What `git submodule update --init` leaves: a git dir per submodule with its hooks.
        let module = modules.path().join(format!(".git/modules/m{i}"));
        std::fs::create_dir_all(module.join("hooks")).unwrap();
        std::fs::write(module.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(module.join("config"), "[core]\n\tbare = false\n").unwrap();
        for hook in std::fs::read_dir(modules.path().join(".git/hooks")).unwrap() {
            let hook = hook.unwrap();
            std::fs::copy(hook.path(), module.join("hooks").join(hook.file_name())).unwrap();
        }
    }
    // Files changed in the last seconds are compared by content (their stamp could hide a
    // change within the same tick); a repository is older than that when commands run in it.
    std::thread::sleep(Duration::from_secs(3));
    let in_ws = |ws: &std::path::Path| process::Settings {
        sandbox: Some(SandboxPolicy {
            workspace: ws.to_path_buf(),
            writable: vec![std::env::temp_dir()],
            network: false,
            unix_sockets: Vec::new(),
            deny_read: cairn::secret_stores::SecretStores::from_env(&[], &[]).unwrap_or_default(),
        }),
        ..process::Settings::default()
    };
    let unlimited = Limits {
        processes: None,
        memory: None,
    };
    let bare = process::Settings {
        limits: CommandLimits {
            read_only: unlimited,
            workspace_write: unlimited,
        },
        ..process::Settings::default()
    };
    let plain = process::Settings::default();
    let sandboxed = in_ws(dir.path());
    let with_modules = in_ws(modules.path());
    let cancel = CancellationToken::new();
    let cases = [
        ("unsandboxed, no limits", &bare, Grant::Unsandboxed),
        ("unsandboxed, limits", &plain, Grant::Unsandboxed),
        ("read-only sandbox", &sandboxed, Grant::ReadOnly),
        ("workspace-write sandbox", &sandboxed, Grant::WorkspaceWrite),
        (
            "  with 100 submodules",
            &with_modules,
            Grant::WorkspaceWrite,
        ),
    ];
    let mut samples = vec![Vec::with_capacity(RUNS); cases.len()];
    runtime.block_on(async {
        for round in 0..RUNS + 10 {
            for (i, (_, settings, grant)) in cases.iter().enumerate() {
                let cwd = match &settings.sandbox {
                    Some(policy) => policy.workspace.clone(),
                    None => dir.path().to_path_buf(),
                };
                let spec = CommandSpec {
                    command: "true",
                    cwd: &cwd,
                    settings,
                    grant: *grant,
                };
                let started = Instant::now();
                let outcome = process::run(
                    &spec,
                    Duration::from_secs(10),
                    &cancel,
                    None,
                    process::OnTimeout::Kill,
                )
                .await
                .unwrap();
                let elapsed = started.elapsed();
                let process::ForegroundEnd::Finished(finished) = outcome else {
                    panic!("`true` outlived its timeout")
                };
                assert_eq!(finished.status.code(), Some(0));
                assert!(finished.put_back.is_empty(), "{:?}", finished.put_back);
                // The first rounds warm caches up.
                if round >= 10 {
                    samples[i].push(elapsed);
                }
            }
        }
    });
    let medians: Vec<Duration> = samples.into_iter().map(median).collect();
    let base = medians[0];
    for ((name, _, _), median) in cases.iter().zip(&medians) {
        let added = median.saturating_sub(base);
        println!(
            "{name:<24} median {:>7.2} ms   added {:>5.2} ms",
            median.as_secs_f64() * 1e3,
            added.as_secs_f64() * 1e3
        );
    }
    // The record and the check alone, without a process.
    for (name, ws) in [
        ("repository", dir.path()),
        ("100 submodules", modules.path()),
    ] {
        let mut times = Vec::with_capacity(RUNS);
        let mut cpu = Vec::with_capacity(RUNS);
        let mut entries = 0;
        for _ in 0..RUNS {
            let (started, cpu_started) = (Instant::now(), thread_cpu());
            let record = protect::ProtectedSet::take(ws);
            assert!(record.restore().is_empty());
            times.push(started.elapsed());
            cpu.push(thread_cpu().saturating_sub(cpu_started));
            entries = record.len();
        }
        // CPU time too: on a loaded machine the wall clock mostly measures waiting for a core.
        println!(
            "record + check, {name:<15} ({entries:>4} entries) median {:>7.3} ms (cpu {:>7.3} ms)",
            median(times).as_secs_f64() * 1e3,
            median(cpu).as_secs_f64() * 1e3
        );
    }
}

/// CPU time of this thread (user and system).
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// A repository as `git init` makes it, with one commit, and project rules.
fn repository(dir: &std::path::Path) {
    let git = |args: &[&str]| {
        let status = std::process::Command::new("git")
            .args(["-c", "user.name=b", "-c", "user.email=b@example.com"])
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(status.status.success(), "git {args:?}");
    };
    std::fs::create_dir_all(dir.join(".cairn")).unwrap();
    std::fs::write(dir.join(".cairn/config.toml"), "[permissions]\nask = []\n").unwrap();
    std::fs::write(dir.join("README.md"), "bench\n").unwrap();
    git(&["init", "-q"]);
    git(&["add", "README.md"]);
    git(&["commit", "-qm", "init"]);
}
