//! A real Slurm (feature `slurm`; ./scripts/test installs Debian's `slurm-wlm` and `munge` and turns it on):
//! starts munged, slurmctld and slurmd as a single-node cluster in a scratch directory, submits an 8-point
//! sweep as a job array with `ibcycle sweep --slurm`, suspends and cancels one running task, resubmits the written
//! `sweep.sbatch`, and checks the grid completes with results byte-identical to a local sweep. The daemons
//! are stopped (by their pid files) however the test ends. Needs root: slurmd runs the jobs as root.
#![cfg(feature = "slurm")]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// Two contributors into H3 and a victim into H2, long enough for a task to be caught running and
/// cancelled: the poll for a running task comes every 20 ms, and a point much shorter than that (the
/// event-driven fabric crosses quiet stretches in no time) can end before the cancel lands.
const SCENARIO: &str = r#"name = "slurm-sweep"
duration_us = 200000
[settings]
sample_interval_us = 100
[switch_cc]
marking_rate = 1
[hca_cc]
ccti_increase = 2
[chain]
switches = 2
hosts_per_switch = 2
host_rate = "4xDDR"
trunk_rate = "4xQDR"
[[flow]]
id = "A"
src = "H0"
dst = "H2"
[[flow]]
id = "B"
src = "H1"
dst = "H3"
[[flow]]
id = "C"
src = "H0"
dst = "H3"
start_us = 1000
"#;

/// The swept keys: 4 x 2 = 8 points.
const SETS: [&str; 4] = [
    "--set",
    "switch_cc.threshold=0,4,8,15",
    "--set",
    "flow.C.start_us=5,1000",
];

/// Longest wait for the cluster to come up or a job array to leave the queue.
const PATIENCE: Duration = Duration::from_secs(180);

/// A running single-node cluster; dropping it stops the daemons.
struct Cluster {
    dir: PathBuf,
    conf: PathBuf,
}

/// A free TCP port on localhost (the daemons bind it right after; a clash only fails the start, loudly).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn must(cmd: &mut Command) -> Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{cmd:?}: {e} (are slurm-wlm and munge installed?)"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

impl Cluster {
    fn start(dir: &Path) -> Cluster {
        let uid = must(Command::new("id").arg("-u")).stdout;
        assert_eq!(
            String::from_utf8_lossy(&uid).trim(),
            "0",
            "the slurm test needs root (slurmd runs jobs as root)"
        );
        for sub in ["munge", "state", "spool", "log"] {
            std::fs::create_dir_all(dir.join(sub)).unwrap();
        }
        // munged refuses a socket directory writable by others.
        must(
            Command::new("chmod")
                .arg("0755")
                .arg(dir)
                .arg(dir.join("munge")),
        );
        let p = |s: &str| dir.join(s).display().to_string();
        must(
            Command::new("mungekey")
                .arg("--create")
                .arg(format!("--keyfile={}", p("munge.key"))),
        );
        let socket = p("munge/munge.socket.2");
        let cluster = Cluster {
            dir: dir.to_path_buf(),
            conf: dir.join("slurm.conf"),
        };
        must(Command::new("munged").args([
            format!("--socket={socket}"),
            format!("--key-file={}", p("munge.key")),
            format!("--log-file={}", p("log/munged.log")),
            format!("--pid-file={}", p("munged.pid")),
            format!("--seed-file={}", p("munge.seed")),
        ]));
        let host = String::from_utf8(must(Command::new("hostname").arg("-s")).stdout).unwrap();
        let host = host.trim();
        let conf = format!(
            "ClusterName=ibcycletest\nSlurmctldHost={host}(127.0.0.1)\nSlurmctldPort={}\nSlurmdPort={}\n\
             SlurmUser=root\nSlurmdUser=root\nAuthType=auth/munge\nCredType=cred/munge\nAuthInfo=socket={socket}\n\
             StateSaveLocation={}\nSlurmdSpoolDir={}\nSlurmctldPidFile={}\nSlurmdPidFile={}\n\
             SlurmctldLogFile={}\nSlurmdLogFile={}\nProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n\
             JobAcctGatherType=jobacct_gather/none\nAccountingStorageType=accounting_storage/none\nMpiDefault=none\n\
             MailProg=/bin/true\nSchedulerType=sched/backfill\nSchedulerParameters=batch_sched_delay=0\n\
             SelectType=select/cons_tres\nSelectTypeParameters=CR_Core\nReturnToService=2\n\
             NodeName={host} NodeAddr=127.0.0.1 CPUs=2 Sockets=1 CoresPerSocket=2 ThreadsPerCore=1\n\
             PartitionName=debug Nodes={host} Default=YES MaxTime=INFINITE State=UP\n",
            free_port(),
            free_port(),
            p("state"),
            p("spool"),
            p("slurmctld.pid"),
            p("slurmd.pid"),
            p("log/slurmctld.log"),
            p("log/slurmd.log"),
        );
        std::fs::write(&cluster.conf, conf).unwrap();
        must(cluster.cmd("slurmctld").arg("-f").arg(&cluster.conf));
        must(cluster.cmd("slurmd").arg("-f").arg(&cluster.conf));
        let t0 = Instant::now();
        loop {
            let s = cluster
                .cmd("sinfo")
                .args(["-h", "-o", "%T"])
                .output()
                .unwrap();
            if String::from_utf8_lossy(&s.stdout).trim() == "idle" {
                break;
            }
            assert!(
                t0.elapsed() < PATIENCE,
                "the node never became idle; see {}",
                p("log")
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        cluster
    }

    /// A command that talks to this cluster.
    fn cmd(&self, prog: &str) -> Command {
        let mut c = Command::new(prog);
        c.env("SLURM_CONF", &self.conf);
        c
    }

    /// Waits until job `id` has left the queue.
    fn wait(&self, id: &str) {
        let t0 = Instant::now();
        loop {
            let q = self.cmd("squeue").args(["-h", "-j", id]).output().unwrap();
            if String::from_utf8_lossy(&q.stdout).trim().is_empty() {
                return;
            }
            assert!(
                t0.elapsed() < PATIENCE,
                "job {id} still queued after {PATIENCE:?}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Ends the daemon whose pid file is `name` if it is still alive.
    fn kill(&self, name: &str) {
        if let Ok(pid) = std::fs::read_to_string(self.dir.join(name)) {
            let pid = pid.trim();
            if Path::new("/proc").join(pid).exists() {
                let _ = Command::new("kill").arg(pid).status();
            }
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = self.cmd("scontrol").arg("shutdown").output();
        let t0 = Instant::now();
        let alive = |f: &str| {
            std::fs::read_to_string(self.dir.join(f))
                .is_ok_and(|pid| Path::new("/proc").join(pid.trim()).exists())
        };
        while (alive("slurmctld.pid") || alive("slurmd.pid"))
            && t0.elapsed() < Duration::from_secs(10)
        {
            std::thread::sleep(Duration::from_millis(100));
        }
        self.kill("slurmctld.pid");
        self.kill("slurmd.pid");
        self.kill("munged.pid");
    }
}

fn ibcycle() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ibcycle"))
}

#[test]
fn a_job_array_sweep_survives_a_cancelled_task_and_matches_a_local_sweep() {
    let dir = std::env::temp_dir().join(format!("ibcycle-slurm-{}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    std::fs::create_dir_all(&dir).unwrap();
    let cluster = Cluster::start(&dir.join("cluster"));
    let file = dir.join("s.toml");
    std::fs::write(&file, SCENARIO).unwrap();
    let out = dir.join("array");

    let submitted = must(
        cluster
            .cmd(env!("CARGO_BIN_EXE_ibcycle"))
            .arg("sweep")
            .arg(&file)
            .args(SETS)
            .arg("--out")
            .arg(&out)
            .arg("--slurm"),
    );
    let stdout = String::from_utf8_lossy(&submitted.stdout);
    let job = stdout
        .split("submitted job ")
        .nth(1)
        .and_then(|s| s.split(';').next())
        .unwrap_or_else(|| panic!("no job id in {stdout:?}"))
        .to_string();

    // Cancel a task caught running. `squeue` can still list a task as running after its point has
    // ended (the daemons learn of the exit later), so a task is first suspended: `scontrol suspend`
    // stops its processes mid-point and succeeds only on a task that is really running. Cancelling a
    // suspended task kills it without letting it go on, so its point cannot finish.
    let t0 = Instant::now();
    let task = 'caught: loop {
        let q = cluster
            .cmd("squeue")
            .args(["-h", "-j", &job, "-t", "R", "-o", "%i"])
            .output()
            .unwrap();
        for t in String::from_utf8_lossy(&q.stdout).lines() {
            let t = t.trim();
            let suspended = cluster
                .cmd("scontrol")
                .args(["suspend", t])
                .output()
                .unwrap();
            if suspended.status.success() {
                break 'caught t.to_string();
            }
        }
        assert!(
            t0.elapsed() < PATIENCE,
            "no task of job {job} was caught running"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    must(cluster.cmd("scancel").arg(&task));
    cluster.wait(&job);
    let index: usize = task.rsplit('_').next().unwrap().parse().unwrap();
    let finished = |p: &str| out.join("points").join(p).join("summary.json").is_file();
    let ids: Vec<String> = std::fs::read_dir(out.join("points"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    let done = ids.iter().filter(|p| finished(p)).count();
    assert_eq!(done, 7, "one task of eight cancelled: {ids:?}");
    assert!(
        !ids.iter()
            .any(|p| p.starts_with(&format!("{index:04}-")) && finished(p)),
        "task {task}'s point must not be finished: {ids:?}"
    );
    assert!(!out.join("sweep.csv").exists(), "the grid is incomplete");

    // Resubmitting the same script runs only the missing point and writes sweep.csv.
    let again = must(
        cluster
            .cmd("sbatch")
            .arg("--parsable")
            .arg(out.join("sweep.sbatch")),
    );
    let job2 = String::from_utf8_lossy(&again.stdout).trim().to_string();
    cluster.wait(&job2);
    let log =
        std::fs::read_to_string(out.join("slurm").join(format!("{job2}_{index}.out"))).unwrap();
    assert!(log.contains("1 run now, 0 already finished"), "{log}");
    let log0 = std::fs::read_to_string(
        out.join("slurm")
            .join(format!("{job2}_{}.out", (index + 1) % 8)),
    )
    .unwrap();
    assert!(log0.contains("0 run now, 1 already finished"), "{log0}");
    assert!(
        out.join("sweep.csv").is_file(),
        "the last task writes sweep.csv"
    );
    drop(cluster);

    let local = dir.join("local");
    must(
        ibcycle()
            .arg("sweep")
            .arg(&file)
            .args(SETS)
            .arg("--out")
            .arg(&local)
            .args(["--jobs", "2"]),
    );
    let csv = std::fs::read(out.join("sweep.csv")).unwrap();
    assert_eq!(csv, std::fs::read(local.join("sweep.csv")).unwrap());
    assert_eq!(String::from_utf8_lossy(&csv).lines().count(), 9);
    let all: Vec<String> = std::fs::read_dir(local.join("points"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(all.len(), 8, "{all:?}");
    for id in &all {
        assert_eq!(
            std::fs::read(out.join("points").join(id).join("summary.json")).unwrap(),
            std::fs::read(local.join("points").join(id).join("summary.json")).unwrap(),
            "{id}"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}
