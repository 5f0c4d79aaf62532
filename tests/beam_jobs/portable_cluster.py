"""A cluster on one machine, for the tests: Beam's Python job service and an SDK worker pool,
each a separate process with its own working directory and its own TMPDIR, the way Flink, Spark
and Dataflow run a Python pipeline (the launcher submits the graph; other processes run it).

    with portable_cluster(root, hide_from_workers=[launcher_dir]) as cluster:
        launch([...tokfx argv..., *cluster.argv()], cwd=launcher_dir, timeout=120)

- The job service (`python -m apache_beam.runners.portability.local_job_service_main`) runs the
  pipeline with Beam's FnApiRunner; `--environment_type=EXTERNAL` makes that runner ask the worker
  pool for its SDK worker instead of running one in its own process.
- The worker pool (`python -m apache_beam.runners.worker.worker_pool_main`) starts each SDK worker
  as a child process with the command `python`, looked up on its PATH (not sys.executable):
  the pool's PATH starts with this interpreter's folder, so the workers import the same
  installed tokfx. It does not install staged artifacts (that is the SDK container's boot
  program), so no --setup_file or --sdk_location is needed, nor used.
- Where the machine allows unprivileged user and mount namespaces (`unshare -rm`), the folders in
  `hide_from_workers` are covered by an empty tmpfs in the worker pool's (and its workers') view,
  so a path of the launcher's temp folder opened on a worker fails as it would on a cluster.
  `cluster.hidden` says whether that was done.

Every wait is bounded and fails with the process's log; the processes (and their children: each
runs in a session of its own) are stopped on exit, also when the body raised.
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

START_TIMEOUT = 60.0  # seconds for a service to listen (importing Beam takes a few on a busy machine)
# The services' own lines are enough to find a failure; these are the last ones shown.
LOG_TAIL = 60

# Mount an empty tmpfs on each of the first N arguments (folders), then exec the rest.
_HIDE_SCRIPT = ('n=$1; shift; while [ "$n" -gt 0 ]; do'
                ' mount -t tmpfs -o size=1m,mode=0700 tokfx-hidden "$1" || exit 97;'
                ' shift; n=$((n-1)); done; exec "$@"')


class ClusterError(RuntimeError):
    """A service did not start, or a launched command did not end in time."""


def _tail(path: Path, lines: int = LOG_TAIL) -> str:
    try:
        text = path.read_text(errors="replace").splitlines()
    except FileNotFoundError:
        return "(no log)"
    return "\n".join(text[-lines:])


def can_hide_folders() -> bool:
    """Whether `unshare -rm` can give a process a private view of the filesystem here."""
    if shutil.which("unshare") is None or shutil.which("sh") is None:
        return False
    probe = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "--", "sh", "-c",
                            "mount -t tmpfs -o size=1m tokfx-probe /mnt 2>/dev/null || exit 1"],
                           capture_output=True, timeout=30)
    return probe.returncode == 0


def free_port() -> int:
    """A port nobody listens on now (the worker pool needs one on its command line)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("localhost", port), timeout=1):
            return True
    except OSError:
        return False


def _env(home: Path, path_first: str | None = None) -> dict[str, str]:
    """The environment with TMPDIR (and TEMP, TMP, which tempfile reads after it) in `home`."""
    tmp = home / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "TMPDIR": str(tmp), "TEMP": str(tmp), "TMP": str(tmp)}
    if path_first:
        env["PATH"] = path_first + os.pathsep + env.get("PATH", "")
    return env


def _exited(proc: subprocess.Popen, timeout: float) -> bool:
    """Whether the process ended within `timeout`; it is left unreaped (a zombie), so its pid,
    which is its session's process group id, cannot be reused while the group is signalled."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                return True
        except ChildProcessError:  # already reaped
            return True
        time.sleep(0.05)
    return False


def _stop(proc: subprocess.Popen, grace: float = 10.0) -> None:
    """Stop the process and its children (its session's process group): SIGTERM, and SIGKILL
    to what is left once it has ended or after `grace` seconds."""
    if proc.returncode is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        _exited(proc, grace)
        try:
            # Children that outlived it (an SDK worker in a gRPC call) must not outlive the test.
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        raise ClusterError(f"process {proc.pid} ({' '.join(map(str, proc.args))})"
                           " survived SIGKILL") from None


@contextmanager
def _service(name: str, argv: list[str], home: Path, *, env: dict[str, str],
             hide: Sequence[Path]) -> Iterator[tuple[subprocess.Popen, Path]]:
    """Start `argv` in `home` (its cwd), its output in home/<name>.log; stop it on exit."""
    log_path = home / f"{name}.log"
    if hide:
        argv = ["unshare", "--user", "--map-root-user", "--mount", "--", "sh", "-c", _HIDE_SCRIPT,
                "sh", str(len(hide)), *map(str, hide), *argv]
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(argv, cwd=home, env=env, stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
    try:
        yield proc, log_path
    finally:
        _stop(proc)


def _wait_until(ready, proc: subprocess.Popen, what: str, log_path: Path, timeout: float):
    deadline = time.monotonic() + timeout
    while True:
        value = ready()
        if value:
            return value
        if proc.poll() is not None:
            raise ClusterError(f"{what} exited with status {proc.returncode} before it listened;"
                               f" its log ({log_path}):\n{_tail(log_path)}")
        if time.monotonic() > deadline:
            raise ClusterError(f"{what} did not listen within {timeout:.0f} s; its log"
                               f" ({log_path}):\n{_tail(log_path)}")
        time.sleep(0.1)


@dataclass
class Cluster:
    job_endpoint: str
    worker_pool: str
    job_service_dir: Path
    worker_pool_dir: Path
    hidden: bool  # whether hide_from_workers is really out of the workers' sight

    def argv(self) -> list[str]:
        """The Beam options that send a pipeline here."""
        return ["--runner=PortableRunner", f"--job_endpoint={self.job_endpoint}",
                "--environment_type=EXTERNAL", f"--environment_config={self.worker_pool}",
                # Bounds each request to the job service (not the run).
                "--job_server_timeout=60"]

    def workers_started(self) -> int:
        """How many SDK worker processes the pool has started so far."""
        return (self.worker_pool_dir / "worker-pool.log").read_text(
            errors="replace").count("Starting worker with command")

    def logs(self) -> str:
        return (f"--- job service ({self.job_service_dir / 'job-service.log'}):\n"
                f"{_tail(self.job_service_dir / 'job-service.log')}\n"
                f"--- worker pool ({self.worker_pool_dir / 'worker-pool.log'}):\n"
                f"{_tail(self.worker_pool_dir / 'worker-pool.log')}")


@contextmanager
def portable_cluster(root: Path, *, hide_from_workers: Sequence[Path] = (),
                     start_timeout: float = START_TIMEOUT) -> Iterator[Cluster]:
    """Start a job service in root/job-service and a worker pool in root/worker-pool; yield the
    Cluster; stop both (and the workers) on exit. `hide_from_workers`: folders (existing) that the
    job service and the worker pool must not see, e.g. the launcher's working and temp folders;
    the job service's own folder is hidden from the worker pool too."""
    python = sys.executable
    bin_dir = str(Path(python).parent)
    found = shutil.which("python", path=bin_dir)
    if found is None or not os.path.samefile(found, python):
        raise ClusterError(f"the worker pool starts its workers with `python` on its PATH, and"
                           f" {bin_dir} has no `python` that is {python}")
    job_dir, pool_dir = root / "job-service", root / "worker-pool"
    for folder in (job_dir, pool_dir):
        folder.mkdir(parents=True, exist_ok=True)
    hide = [Path(p) for p in hide_from_workers]
    hidden = bool(hide) and can_hide_folders()
    with ExitStack() as stack:
        port_file = job_dir / "port"
        job, job_log = stack.enter_context(_service(
            "job-service",
            [python, "-m", "apache_beam.runners.portability.local_job_service_main",
             "--port", "0", "--port_file", str(port_file)],
            job_dir, env=_env(job_dir), hide=hide if hidden else ()))
        pool_port = free_port()
        pool, pool_log = stack.enter_context(_service(
            "worker-pool",
            [python, "-m", "apache_beam.runners.worker.worker_pool_main",
             f"--service_port={pool_port}"],
            pool_dir, env=_env(pool_dir, path_first=bin_dir),
            hide=[*hide, job_dir] if hidden else ()))
        # The job service writes its port file (by rename) once its gRPC server listens.
        job_port = int(_wait_until(lambda: port_file.exists() and port_file.read_text().strip(),
                                   job, "the job service", job_log, start_timeout))
        _wait_until(lambda: _listening(pool_port), pool, "the worker pool", pool_log,
                    start_timeout)
        yield Cluster(f"localhost:{job_port}", f"localhost:{pool_port}", job_dir, pool_dir, hidden)


def launch(argv: list[str], home: Path, timeout: float,
           cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Run `python <argv>` as the launcher: TMPDIR in `home`, and its cwd (unless `cwd`); its
    session is killed if it runs longer than `timeout` seconds (ClusterError, with its output)."""
    home.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen([sys.executable, *argv], cwd=cwd or home, env=_env(home),
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _stop(proc, grace=5)
        out, err = proc.communicate()
        raise ClusterError(f"`python {' '.join(argv)}` did not finish within {timeout:.0f} s;"
                           f" its stderr:\n{err[-5000:]}") from None
    finally:
        if proc.poll() is None:
            _stop(proc, grace=5)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
