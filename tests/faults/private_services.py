"""Private PostgreSQL and Redis instances for the fault tests, on ports of their own.

The fault tests stop, kill and restart these; the machine's shared services are never
touched. `.ci/run` starts them before pytest (Django reads DATABASE_URL and REDIS_URL when
pytest-django loads the settings) and stops them when it is done:

    eval "$(.venv/bin/python tests/faults/private_services.py start)"   # prints export lines
    .venv/bin/python tests/faults/private_services.py stop

`start` makes a throw-away directory holding the PostgreSQL cluster, both logs and a state
file (ports, paths, the Redis pid) that the tests read through RECEIPTS_FAULTS_STATE to stop
and start the services themselves.
"""

from __future__ import annotations

import glob
import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

PG_PORT_DEFAULT = 55432
REDIS_PORT_DEFAULT = 56379
START_SECONDS = 60
STATE_ENV = "RECEIPTS_FAULTS_STATE"


# --- helpers ------------------------------------------------------------------------------


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _free_port(preferred: int) -> int:
    for port in range(preferred, preferred + 200):
        if _port_free(port):
            return port
    raise SystemExit(f"no free port from {preferred} to {preferred + 199}")


def port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def _pg_bin() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), reverse=True)
    if found:
        return Path(found[0]).parent
    initdb = shutil.which("initdb")
    if initdb:
        return Path(initdb).parent
    raise SystemExit("PostgreSQL's initdb is not installed (looked in /usr/lib/postgresql/*/bin and PATH)")


def _run_as() -> list[str]:
    """PostgreSQL refuses to run as root: run its binaries as the postgres user (or nobody)."""
    if os.geteuid() != 0:
        return []
    for user in ("postgres", "nobody"):
        try:
            pwd.getpwnam(user)
        except KeyError:
            continue
        return ["runuser", "-u", user, "--"]
    raise SystemExit("running as root, and neither a postgres nor a nobody user exists to run PostgreSQL")


def _owner() -> tuple[int, int] | None:
    prefix = _run_as()
    if not prefix:
        return None
    entry = pwd.getpwnam(prefix[2])
    return entry.pw_uid, entry.pw_gid


def load_state() -> dict[str, Any]:
    path = os.environ.get(STATE_ENV)
    if not path:
        raise RuntimeError(f"{STATE_ENV} is not set: start the services with private_services.py start")
    return json.loads(Path(path).read_text())


def _save_state(state: dict[str, Any]) -> None:
    Path(state["state_file"]).write_text(json.dumps(state, indent=2))


def _wait(condition: Any, what: str, seconds: float = START_SECONDS) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise RuntimeError(f"timed out after {seconds}s waiting for {what}")


# --- PostgreSQL ---------------------------------------------------------------------------


def _pg_ctl(state: dict[str, Any], *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    command = [
        *_run_as(),
        str(Path(state["pg_bin"]) / "pg_ctl"),
        "-D",
        state["pg_data"],
        *args,
    ]
    return subprocess.run(command, check=check, capture_output=True, text=True, timeout=120)


def pg_ready(state: dict[str, Any]) -> bool:
    result = subprocess.run(
        [str(Path(state["pg_bin"]) / "pg_isready"), "-h", "127.0.0.1", "-p", str(state["pg_port"]), "-q"],
        check=False,
        timeout=10,
    )
    return result.returncode == 0


def start_postgres(state: dict[str, Any] | None = None) -> None:
    state = state or load_state()
    options = (
        f"-p {state['pg_port']} -c listen_addresses=127.0.0.1 -k {state['pg_socket_dir']} "
        "-c fsync=off -c max_connections=200"
    )
    _pg_ctl(state, "-l", state["pg_log"], "-o", options, "-w", "-t", str(START_SECONDS), "start")
    _wait(lambda: pg_ready(state), "PostgreSQL to accept connections")


def stop_postgres(state: dict[str, Any] | None = None, *, mode: str = "immediate") -> None:
    """`immediate` aborts every session and transaction at once, as a crash would; the next
    start recovers from the WAL."""
    state = state or load_state()
    _pg_ctl(state, "-m", mode, "-w", "stop", check=False)
    _wait(lambda: not port_open(state["pg_port"]), "PostgreSQL to stop")


def _init_postgres(state: dict[str, Any]) -> None:
    base = Path(state["base"])
    for sub in ("pg_data", "pg_socket_dir"):
        Path(state[sub]).mkdir(parents=True, exist_ok=True)
    Path(state["pg_log"]).touch()
    owner = _owner()
    if owner:
        for path in (base, Path(state["pg_data"]), Path(state["pg_socket_dir"]), Path(state["pg_log"])):
            os.chown(path, *owner)
    os.chmod(state["pg_data"], 0o700)
    subprocess.run(
        [
            *_run_as(),
            str(Path(state["pg_bin"]) / "initdb"),
            "-D",
            state["pg_data"],
            "-U",
            "postgres",
            "--auth=trust",
            "--encoding=UTF8",
            "--no-sync",
        ],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    )


# --- Redis --------------------------------------------------------------------------------


def redis_ready(state: dict[str, Any]) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", state["redis_port"]), timeout=1) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def start_redis(state: dict[str, Any] | None = None) -> int:
    """A Redis that keeps nothing on disk: a restart loses every queued and unacked message."""
    state = state or load_state()
    redis_server = shutil.which("redis-server")
    if not redis_server:
        raise SystemExit("redis-server is not installed")
    with open(state["redis_log"], "ab") as log:
        process = subprocess.Popen(
            [
                redis_server,
                "--port",
                str(state["redis_port"]),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--daemonize",
                "no",
                "--dir",
                state["base"],
            ],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    state["redis_pid"] = process.pid
    _save_state(state)
    _wait(lambda: redis_ready(state), "Redis to answer PING")
    return process.pid


def stop_redis(state: dict[str, Any] | None = None, *, sig: int = signal.SIGTERM) -> None:
    state = state or load_state()
    pid = state.get("redis_pid")
    if pid:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)  # our child when the tests restarted it
            except ChildProcessError:
                done = 0 if _alive(pid) else pid
            if done:
                break
            time.sleep(0.05)
    state["redis_pid"] = None
    _save_state(state)
    _wait(lambda: not port_open(state["redis_port"]), "Redis to stop")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


# --- commands -----------------------------------------------------------------------------


def urls(state: dict[str, Any]) -> dict[str, str]:
    return {
        "DATABASE_URL": f"postgres://postgres@127.0.0.1:{state['pg_port']}/receipts",
        "REDIS_URL": f"redis://127.0.0.1:{state['redis_port']}/0",
    }


def start() -> None:
    base = Path(tempfile.mkdtemp(prefix="receipts-faults-"))
    state: dict[str, Any] = {
        "base": str(base),
        "state_file": str(base / "state.json"),
        "pg_bin": str(_pg_bin()),
        "pg_data": str(base / "pg"),
        "pg_socket_dir": str(base / "pg-socket"),
        "pg_log": str(base / "postgres.log"),
        "redis_log": str(base / "redis.log"),
        "pg_port": _free_port(PG_PORT_DEFAULT),
        "redis_port": _free_port(REDIS_PORT_DEFAULT),
        "redis_pid": None,
    }
    _save_state(state)
    _init_postgres(state)
    start_postgres(state)
    subprocess.run(
        [
            str(Path(state["pg_bin"]) / "createdb"),
            "-h",
            "127.0.0.1",
            "-p",
            str(state["pg_port"]),
            "-U",
            "postgres",
            "receipts",
        ],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    )
    start_redis(state)
    exports = {**urls(state), STATE_ENV: state["state_file"]}
    for name, value in exports.items():
        print(f"export {name}={value}")
    print(
        f"private PostgreSQL on 127.0.0.1:{state['pg_port']}, Redis on 127.0.0.1:{state['redis_port']}, "
        f"files under {base}",
        file=sys.stderr,
    )


def stop() -> None:
    state = load_state()
    stop_redis(state)
    if port_open(state["pg_port"]) or Path(state["pg_data"], "postmaster.pid").exists():
        stop_postgres(state, mode="fast")
    shutil.rmtree(state["base"], ignore_errors=True)
    print(f"stopped the private services and removed {state['base']}", file=sys.stderr)


if __name__ == "__main__":
    commands = {"start": start, "stop": stop}
    if len(sys.argv) != 2 or sys.argv[1] not in commands:
        raise SystemExit(f"usage: {sys.argv[0]} start|stop")
    commands[sys.argv[1]]()
