//! A private single-node Slurm cluster on this machine, for tests that submit real jobs: its own
//! `munged` (a fresh key, socket, seed and log in a temporary folder), a `slurm.conf` for this
//! host on free ports, and `slurmctld -D` / `slurmd -D` as children of the test. Client commands
//! reach it through `SLURM_CONF`; nothing under `/etc` or `/run` is read or changed. Dropping it
//! cancels its jobs, stops the daemons it started (by pid: SIGTERM, then SIGKILL) and removes the
//! folder.
//!
//! The plugins are the ones that need neither systemd nor cgroups (`proctrack/linuxproc`,
//! `task/none`, no accounting), since CI sandboxes have neither. Daemons run as root (`slurmd`
//! must, to start jobs).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Set to 1 on CI (`.ci/run`): a cluster that cannot start fails the test instead of skipping it.
pub const REQUIRE_VAR: &str = "SIGHTLINE_REQUIRE_SLURM";

/// How long the daemons get to bring the node up (`sinfo` says `idle`).
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// A daemon started by [`SingleNodeSlurm`]: its child process and where its output goes.
struct Daemon {
    name: &'static str,
    child: Child,
    logs: Vec<PathBuf>,
}

/// The running cluster: one node (this host, all its CPUs) in one default partition `debug`.
pub struct SingleNodeSlurm {
    dir: PathBuf,
    conf: PathBuf,
    node: String,
    daemons: Vec<Daemon>,
}

/// Starts the cluster, or says why not: a loud `SKIPPED: …` line and `None`, except that with
/// `SIGHTLINE_REQUIRE_SLURM=1` the test fails with the reason.
pub fn start_or_skip(test: &str) -> Option<SingleNodeSlurm> {
    match SingleNodeSlurm::start() {
        Ok(slurm) => Some(slurm),
        Err(why) if required() => panic!("{REQUIRE_VAR}=1 but Slurm cannot run here: {why}"),
        Err(why) => {
            eprintln!("SKIPPED: {test}: no Slurm here ({REQUIRE_VAR}=1 makes this fail): {why}");
            None
        }
    }
}

fn required() -> bool {
    std::env::var(REQUIRE_VAR).is_ok_and(|v| v == "1")
}

impl SingleNodeSlurm {
    /// Starts munged, slurmctld and slurmd, waits (at most a minute) for the node to be idle, and
    /// runs one `srun true` to see that jobs start. `Err` says what is missing or which daemon
    /// stopped, with the tail of its log.
    pub fn start() -> Result<Self, String> {
        let programs = [
            "munged",
            "slurmctld",
            "slurmd",
            "sbatch",
            "srun",
            "sinfo",
            "squeue",
        ];
        let missing: Vec<&str> = programs
            .into_iter()
            .filter(|p| find_program(p).is_none())
            .collect();
        if !missing.is_empty() {
            return Err(format!(
                "{} not installed (apt-get install slurmctld slurmd slurm-client munge)",
                missing.join(", ")
            ));
        }
        // SAFETY: geteuid has no preconditions and cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            return Err("not root: slurmd must run as root to start jobs".into());
        }
        let dir = private_dir()?;
        let mut slurm = SingleNodeSlurm {
            conf: dir.join("slurm.conf"),
            node: short_hostname(),
            dir,
            daemons: Vec::new(),
        };
        // On an error `slurm` is dropped here, which stops whatever did start.
        slurm.start_munged()?;
        slurm.write_conf()?;
        for name in ["slurmctld", "slurmd"] {
            let conf = slurm.conf.clone();
            let mut args = vec!["-D".into(), "-f".into(), conf.display().to_string()];
            if name == "slurmd" {
                args.extend(["-N".into(), slurm.node.clone()]);
            }
            let log = slurm.dir.join(format!("{name}.log"));
            slurm.spawn(name, &args, &[log])?;
        }
        slurm.wait_for_idle_node()?;
        slurm.check_a_job_runs()?;
        Ok(slurm)
    }

    /// The cluster's `slurm.conf`.
    pub fn conf(&self) -> &Path {
        &self.conf
    }

    /// A client command (`sbatch`, `srun`, `sinfo`, …) pointed at this cluster, with none of the
    /// Slurm or launcher variables of an enclosing job (a test run inside a real Slurm job or
    /// torchrun must not submit there, nor pass its rank on).
    pub fn command(&self, program: &str) -> Command {
        let mut cmd = Command::new(find_program(program).unwrap_or_else(|| program.into()));
        for (key, _) in std::env::vars_os() {
            let key_text = key.to_string_lossy();
            if key_text.starts_with("SLURM_")
                || ["RANK", "WORLD_SIZE", "LOCAL_RANK", "JOB_COMPLETION_INDEX"]
                    .contains(&key_text.as_ref())
            {
                cmd.env_remove(&key);
            }
        }
        cmd.env("SLURM_CONF", &self.conf);
        cmd
    }

    /// Runs `sbatch --wait ARGS` and returns its output once every job it submitted has ended;
    /// fails the test (with the controller's log) when that takes longer than `timeout`.
    pub fn sbatch_wait(&self, args: &[&str], timeout: Duration) -> Output {
        let mut cmd = self.command("sbatch");
        cmd.arg("--wait").args(args);
        match run_bounded(cmd, timeout) {
            Ok(out) => out,
            Err(why) => panic!("sbatch --wait {args:?}: {why}\n{}", self.log_tails()),
        }
    }

    /// The last lines of every daemon's log, for a failure message.
    pub fn log_tails(&self) -> String {
        self.daemons
            .iter()
            .map(|d| d.log_tail())
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn start_munged(&mut self) -> Result<(), String> {
        let munge = self.dir.join("munge");
        make_dir(&munge, 0o755)?;
        let key = munge.join("munge.key");
        let mut bytes = vec![0u8; 1024];
        std::fs::File::open("/dev/urandom")
            .and_then(|mut f| f.read_exact(&mut bytes))
            .map_err(|e| format!("reading /dev/urandom for a munge key: {e}"))?;
        write_private(&key, &bytes)?;
        let socket = munge.join("munge.socket");
        let path_arg = |flag: &str, p: &Path| format!("--{flag}={}", p.display());
        let args = vec![
            // Foreground, so that it stays our child and its pid is the one we stop.
            "--foreground".into(),
            // munged refuses some setups as root (an existing socket, a group-writable parent);
            // the folder is ours alone.
            "--force".into(),
            path_arg("socket", &socket),
            path_arg("key-file", &key),
            path_arg("pid-file", &munge.join("munged.pid")),
            path_arg("log-file", &munge.join("munged.log")),
            path_arg("seed-file", &munge.join("munged.seed")),
        ];
        // In the foreground munged logs to stderr (munged.out); munged.log only once it forks.
        self.spawn("munged", &args, &[munge.join("munged.log")])?;
        let deadline = Instant::now() + Duration::from_secs(10);
        while !socket.exists() {
            self.check_alive()?;
            if Instant::now() > deadline {
                return Err(format!(
                    "munged made no socket in 10 s\n{}",
                    self.log_tails()
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(())
    }

    fn write_conf(&self) -> Result<(), String> {
        let d = &self.dir;
        let (ctld_port, slurmd_port) = (free_port()?, free_port()?);
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        for sub in ["state", "spool"] {
            make_dir(&d.join(sub), 0o755)?;
        }
        // Our own (empty) SPANK plug-in list, so that nothing in /etc/slurm is loaded.
        let plugstack = d.join("plugstack.conf");
        std::fs::write(&plugstack, "").map_err(|e| format!("{}: {e}", plugstack.display()))?;
        let node = &self.node;
        let socket = d.join("munge/munge.socket");
        let p = |name: &str| d.join(name).display().to_string();
        let conf = format!(
            "# A private single-node cluster for Sightline's tests (tests/common/slurm.rs).
ClusterName=sightline
SlurmctldHost={node}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={socket}
StateSaveLocation={state}
SlurmdSpoolDir={spool}
SlurmctldPidFile={ctld_pid}
SlurmdPidFile={slurmd_pid}
SlurmctldLogFile={ctld_log}
SlurmdLogFile={slurmd_log}
PlugStackConfig={plugstack}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
KillWait=5
NodeName={node} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN
PartitionName=debug Nodes={node} Default=YES MaxTime=30 State=UP
",
            socket = socket.display(),
            state = p("state"),
            spool = p("spool"),
            ctld_pid = p("slurmctld.pid"),
            slurmd_pid = p("slurmd.pid"),
            ctld_log = p("slurmctld.log"),
            slurmd_log = p("slurmd.log"),
            plugstack = plugstack.display(),
        );
        std::fs::write(&self.conf, conf).map_err(|e| format!("{}: {e}", self.conf.display()))
    }

    /// Starts `name ARGS` as our child, its stdout and stderr in `<name>.out`; `logs` are the
    /// log files it writes itself.
    fn spawn(
        &mut self,
        name: &'static str,
        args: &[String],
        logs: &[PathBuf],
    ) -> Result<(), String> {
        let out_path = self.dir.join(format!("{name}.out"));
        let out =
            std::fs::File::create(&out_path).map_err(|e| format!("{}: {e}", out_path.display()))?;
        let err = out
            .try_clone()
            .map_err(|e| format!("{}: {e}", out_path.display()))?;
        let mut cmd = self.command(name);
        cmd.args(args).stdin(Stdio::null()).stdout(out).stderr(err);
        let child = cmd
            .spawn()
            .map_err(|e| format!("cannot start {name}: {e}"))?;
        let mut all_logs = vec![out_path];
        all_logs.extend_from_slice(logs);
        self.daemons.push(Daemon {
            name,
            child,
            logs: all_logs,
        });
        Ok(())
    }

    /// `Err` with the daemon's log when one of them has exited.
    fn check_alive(&mut self) -> Result<(), String> {
        for d in &mut self.daemons {
            if let Ok(Some(status)) = d.child.try_wait() {
                return Err(format!("{} exited ({status})\n{}", d.name, d.log_tail()));
            }
        }
        Ok(())
    }

    fn wait_for_idle_node(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + START_TIMEOUT;
        let mut last = String::new();
        loop {
            self.check_alive()?;
            let mut sinfo = self.command("sinfo");
            sinfo.args(["--noheader", "--Node", "--format=%N %T"]);
            if let Ok(out) = run_bounded(sinfo, Duration::from_secs(15)) {
                last = format!(
                    "{}{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
                if out.status.success() && last.split_whitespace().any(|w| w == "idle") {
                    return Ok(());
                }
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "node {} not idle after {} s; sinfo said: {}\n{}",
                    self.node,
                    START_TIMEOUT.as_secs(),
                    last.trim(),
                    self.log_tails()
                ));
            }
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    fn check_a_job_runs(&self) -> Result<(), String> {
        let mut srun = self.command("srun");
        srun.args(["--ntasks=1", "--time=1", "true"]);
        match run_bounded(srun, START_TIMEOUT) {
            Ok(out) if out.status.success() => Ok(()),
            Ok(out) => Err(format!(
                "`srun true` failed ({}): {}\n{}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim(),
                self.log_tails()
            )),
            Err(why) => Err(format!("`srun true`: {why}\n{}", self.log_tails())),
        }
    }

    /// Cancels whatever is still queued or running (a test that failed halfway), so that no job
    /// outlives its slurmd.
    fn cancel_jobs(&self) {
        let mut squeue = self.command("squeue");
        squeue.args(["--noheader", "--format=%A"]);
        let Ok(out) = run_bounded(squeue, Duration::from_secs(10)) else {
            return;
        };
        let ids: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .map(str::to_string)
            .collect();
        if ids.is_empty() {
            return;
        }
        let mut scancel = self.command("scancel");
        scancel.args(&ids);
        let _ = run_bounded(scancel, Duration::from_secs(10));
        std::thread::sleep(Duration::from_secs(2));
    }
}

impl Drop for SingleNodeSlurm {
    fn drop(&mut self) {
        if self.daemons.iter().any(|d| d.name == "slurmctld") {
            self.cancel_jobs();
        }
        // slurmd first, munged last: the Slurm daemons authenticate until they stop.
        while let Some(mut d) = self.daemons.pop() {
            d.stop();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Daemon {
    /// SIGTERM, up to 10 s to exit, then SIGKILL; always reaped.
    fn stop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            if let Ok(pid) = libc::pid_t::try_from(self.child.id()) {
                // SAFETY: kill has no memory preconditions; the pid is our own unreaped child,
                // so it cannot have been reused.
                unsafe { libc::kill(pid, libc::SIGTERM) };
            }
            let deadline = Instant::now() + Duration::from_secs(10);
            while matches!(self.child.try_wait(), Ok(None)) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }

    /// The last lines of the first of its logs that has any: what it printed (with `-D` the
    /// Slurm daemons print everything they log), else the log file it wrote.
    fn log_tail(&self) -> String {
        let mut text = format!("--- {} (pid {}) ---\n", self.name, self.child.id());
        let first_written = self.logs.iter().find_map(|log| {
            let content = std::fs::read_to_string(log).ok()?;
            (!content.trim().is_empty()).then_some((log, content))
        });
        match first_written {
            Some((log, content)) => {
                let lines: Vec<&str> = content.lines().collect();
                text.push_str(&format!("{}:\n", log.display()));
                for line in &lines[lines.len().saturating_sub(15)..] {
                    text.push_str(&format!("  {line}\n"));
                }
            }
            None => text.push_str("  (no output)\n"),
        }
        text
    }
}

/// Runs `cmd` to its end, killing it after `timeout`.
pub fn run_bounded(mut cmd: Command, timeout: Duration) -> Result<Output, String> {
    let what = format!("{:?}", cmd.get_program());
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {what}: {e}"))?;
    // Drain both pipes on threads, so that a chatty child never blocks on a full pipe.
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut buf);
            }
            buf
        })
    };
    let stdout = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() > deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{what} still running after {} s",
                    timeout.as_secs()
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(100)),
            Err(e) => return Err(format!("waiting for {what}: {e}")),
        }
    };
    Ok(Output {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    })
}

/// `program` on PATH, else in the sbin folders (munged and slurmctld live in /usr/sbin, which a
/// non-login PATH may lack).
fn find_program(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/usr/local/sbin", "/sbin"].map(PathBuf::from))
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
}

/// This host's short name, as slurmd finds itself in `NodeName` (`hostname -s`).
fn short_hostname() -> String {
    Command::new("hostname")
        .arg("-s")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

/// A fresh folder in the temp dir, readable and searchable by all: munged refuses a socket in a
/// folder that other users cannot enter. Kept short, as a Unix socket path is at most 107 bytes.
fn private_dir() -> Result<PathBuf, String> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let dir = std::env::temp_dir().join(format!("sl-slurm-{}-{nanos}", std::process::id()));
    make_dir(&dir, 0o755)?;
    Ok(dir)
}

fn make_dir(dir: &Path, mode: u32) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir)
        .and_then(|()| std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode)))
        .map_err(|e| format!("{}: {e}", dir.display()))
}

/// Writes a file only its owner can read (munged checks its key's mode).
fn write_private(path: &Path, bytes: &[u8]) -> Result<(), String> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .and_then(|mut f| f.write_all(bytes))
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// A TCP port nobody listens on now (the OS's choice for port 0).
fn free_port() -> Result<u16, String> {
    std::net::TcpListener::bind(("127.0.0.1", 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("no free port: {e}"))
}
