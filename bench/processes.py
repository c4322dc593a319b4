"""The child processes of the benchmarks: the Procfile's gunicorn and Celery worker command lines,
starting and stopping a child that writes to a log file, and what /proc says of a process tree
(its members, CPU seconds and resident memory), shared by ingest_latency.py, peer_compare.py and
worker_memory.py.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import IO

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")  # the unit of /proc's CPU times


# --- command lines ------------------------------------------------------------------------


def gunicorn_argv(venv_bin: Path, port: int, workers: int) -> list[str]:
    """The Procfile's ``web`` line, bound to loopback on ``port``."""
    return [
        str(venv_bin / "gunicorn"),
        "grounding_site.wsgi",
        "--bind",
        f"127.0.0.1:{port}",
        "--workers",
        str(workers),
        "--access-logfile",
        "-",
        "--forwarded-allow-ips",
        "127.0.0.1",
    ]


def celery_worker_argv(
    venv_bin: Path, concurrency: int | None, hostname: str, extra: Iterable[str] = (), loglevel: str = "INFO"
) -> list[str]:
    """The Procfile's ``worker`` line for the ``celery`` queue, then ``extra``.

    ``concurrency`` None leaves ``--concurrency`` out (the solo pool has none). Each benchmark
    names its own ``hostname``, so that someone else's worker on the machine is never mistaken
    for it.
    """
    argv = [str(venv_bin / "celery"), "-A", "grounding_site", "worker", "--queues", "celery"]
    if concurrency is not None:
        argv += ["--concurrency", str(concurrency)]
    return [*argv, "--hostname", hostname, "--loglevel", loglevel, *extra]


# --- starting and stopping ----------------------------------------------------------------


def start(
    argv: list[str],
    log: IO[bytes],
    cwd: Path | str,
    env: Mapping[str, str] | None = None,
    new_session: bool = True,
) -> subprocess.Popen[bytes]:
    """Starts ``argv`` with its output and errors in ``log``; ``env`` None is this one's environment.

    In a session of its own by default, so that ``stop`` reaches the whole tree (gunicorn's
    workers, the Celery pool) through the process group, and Ctrl-C here does not.
    """
    return subprocess.Popen(
        argv,
        cwd=cwd,
        env=dict(os.environ) if env is None else env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=new_session,
    )


def stop(process: subprocess.Popen[bytes], grace: float = 20, group: bool = True) -> None:
    """SIGTERM, so gunicorn and Celery shut their workers down warmly; SIGKILL after ``grace`` s.

    With ``group`` (a child of ``start`` in its own session) both go to its process group, and
    SIGKILL goes to the group in any case: a pool child can outlive a master that died first,
    and the group still names it. Without, they go to the one process.
    """
    if process.poll() is None:
        _send(process, signal.SIGTERM, group)
        try:
            process.wait(grace)
        except subprocess.TimeoutExpired:
            pass
    if group or process.poll() is None:
        _send(process, signal.SIGKILL, group)
    if process.poll() is None:
        process.wait(10)


def _send(process: subprocess.Popen[bytes], signum: int, group: bool) -> None:
    if not group:
        process.send_signal(signum)  # a no-op once the process is reaped
        return
    try:
        os.killpg(process.pid, signum)
    except ProcessLookupError:  # nothing of the group is left
        pass


# --- /proc --------------------------------------------------------------------------------


def children(pid: int) -> list[int]:
    """The child processes of ``pid``, oldest first; empty once it is gone.

    Read from every thread's list, the main thread's first: a child is listed under the thread
    that forked it, and Celery's blocking pool (on the file broker) replaces pool processes from
    a supervisor thread.
    """
    out: list[int] = []
    try:
        threads = sorted(os.listdir(f"/proc/{pid}/task"), key=lambda tid: (int(tid) != pid, int(tid)))
    except OSError:
        return out
    for tid in threads:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as listing:
                out.extend(int(p) for p in listing.read().split())
        except OSError:  # the thread ended
            pass
    return out


def descendants(pid: int) -> list[int]:
    """The children of ``pid``, theirs, and so on down; not ``pid`` itself."""
    out: list[int] = []
    todo = children(pid)
    while todo:
        current = todo.pop()
        out.append(current)
        todo.extend(children(current))
    return out


def _stat_ticks(pid: int, with_children: bool = False) -> int:
    """utime + stime of a process from /proc/PID/stat, in clock ticks, plus cutime + cstime
    (its reaped children's) with ``with_children``; 0 once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            # After the command's closing parenthesis (the command may hold spaces and parentheses).
            fields = stat.read().rsplit(")", 1)[1].split()
        return sum(int(value) for value in fields[11 : 15 if with_children else 13])
    except (OSError, IndexError, ValueError):
        return 0


def cpu_ticks(pid: int) -> int:
    """User and system CPU of one process in clock ticks; 0 once it is gone."""
    return _stat_ticks(pid)


def cpu_seconds(pid: int) -> float:
    """User and system CPU seconds of one process; 0.0 once it is gone."""
    return cpu_ticks(pid) / CLOCK_TICKS


def tree_cpu_seconds(pid: int) -> float:
    """User and system CPU seconds of a process and its living descendants.

    Summed in ticks and divided once, so the figure does not depend on the order of the tree.
    Descendants that have exited and been reaped no longer count.
    """
    return sum(cpu_ticks(each) for each in [pid, *descendants(pid)]) / CLOCK_TICKS


def memory_kib(pid: int) -> dict[str, int]:
    """``VmRSS`` and ``VmHWM`` of a process from /proc/PID/status, in KiB; empty once it is gone."""
    out: dict[str, int] = {}
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                key, _, value = line.partition(":")
                if key in ("VmRSS", "VmHWM"):
                    out[key] = int(value.split()[0])
    except (OSError, ValueError):
        pass
    return out


def rss_kib(pid: int) -> int:
    """Resident memory of a process in KiB; 0 once it is gone (or a zombie)."""
    return memory_kib(pid).get("VmRSS", 0)


def command_ticks(command: str) -> int:
    """CPU ticks of every process whose command name is ``command`` (PostgreSQL's server and
    its backends are all "postgres"), with the time of their children that have exited.

    A backend that exits during a measurement is reaped by the server process, which then
    carries its whole CPU time as its children's time: so the difference of two readings
    counts every backend's work between them, those that came and went included."""
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/comm") as comm:
                if comm.read().strip() != command:
                    continue
        except OSError:
            continue
        total += _stat_ticks(int(entry), with_children=True)
    return total


def machine_ticks() -> dict[str, int]:
    """All cores' time since boot from /proc/stat, in ticks: where it went (user and system
    processes, the kernel's interrupt work, time the hypervisor took for other guests) and
    the total."""
    with open("/proc/stat") as stat:
        user, nice, system, idle, iowait, irq, softirq, steal = (int(v) for v in stat.readline().split()[1:9])
    return {
        "processes": user + nice + system,
        "interrupts": irq + softirq,
        "steal": steal,
        "total": user + nice + system + idle + iowait + irq + softirq + steal,
    }
