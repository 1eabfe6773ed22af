//! Time the sandbox adds to a command: `true` run through the executor unsandboxed, in the
//! read-only and in the workspace-write sandbox (a workspace of 40 top-level entries, each
//! granted on its own), median of many runs each, interleaved so load hits all alike. Target:
//! under 3 ms added. Run by hand: `cargo bench --bench sandbox`.
#![allow(clippy::print_stdout, clippy::unwrap_used)]

use std::time::{Duration, Instant};

use cairn::tools::BashSettings;
use cairn::tools::executor::sandbox::{LandlockStatus, SandboxPolicy, landlock_status};
use cairn::tools::executor::{self, CommandSpec, Grant};
use tokio_util::sync::CancellationToken;

const RUNS: usize = 300;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn main() {
    if let LandlockStatus::Unavailable(reason) = landlock_status() {
        println!("sandbox bench skipped: {reason}");
        return;
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
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    let plain = BashSettings::default();
    let sandboxed = BashSettings {
        sandbox: Some(SandboxPolicy {
            workspace: dir.path().to_path_buf(),
            writable: vec![std::env::temp_dir()],
            network: false,
        }),
        ..BashSettings::default()
    };
    let cancel = CancellationToken::new();
    let cases = [
        ("unsandboxed", &plain, Grant::Unsandboxed),
        ("read-only sandbox", &sandboxed, Grant::ReadOnly),
        ("workspace-write sandbox", &sandboxed, Grant::WorkspaceWrite),
    ];
    let mut samples = vec![Vec::with_capacity(RUNS); cases.len()];
    runtime.block_on(async {
        for round in 0..RUNS + 10 {
            for (i, (_, settings, grant)) in cases.iter().enumerate() {
                let spec = CommandSpec {
                    command: "true",
                    cwd: dir.path(),
                    settings,
                    grant: *grant,
                };
                let started = Instant::now();
                let outcome = executor::run(
                    &spec,
                    Duration::from_secs(10),
                    &cancel,
                    None,
                    executor::OnTimeout::Kill,
                )
                .await
                .unwrap();
                let elapsed = started.elapsed();
                let executor::Outcome::Finished(finished) = outcome else {
                    panic!("`true` outlived its timeout")
                };
                assert_eq!(finished.status.code(), Some(0));
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
}
