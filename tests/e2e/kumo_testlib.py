"""Helpers shared by the end-to-end tests: starting `kumo serve`, raw HTTP requests
(signed and unsigned), DynamoDB JSON helpers and assertions on DynamoDB's error shape."""

import base64
import datetime
import hashlib
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import time
import urllib.parse
import uuid
import zlib

import boto3
import botocore.config
from botocore.auth import SIGV4_TIMESTAMP, SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEFAULT_BIN = os.path.join(REPO_ROOT, "build", "kumo")
REGION = "us-east-1"
ACCOUNT = "000000000000"
TARGET_PREFIX = "DynamoDB_20120810."
JSON_10 = "application/x-amz-json-1.0"

NS_COR_SERVICE = "com.amazon.coral.service#"
NS_VALIDATE = "com.amazon.coral.validate#"
NS_DYNAMODB = "com.amazonaws.dynamodb.v20120810#"

VALIDATION = NS_VALIDATE + "ValidationException"
SERIALIZATION = NS_COR_SERVICE + "SerializationException"
UNKNOWN_OPERATION = NS_COR_SERVICE + "UnknownOperationException"
RESOURCE_NOT_FOUND = NS_DYNAMODB + "ResourceNotFoundException"
RESOURCE_IN_USE = NS_DYNAMODB + "ResourceInUseException"

REQUEST_ID_RE = re.compile(r"^[0-9A-Z]{52}$")
COR_PREFIX = "1 validation error detected: "


def kumo_binary():
    return os.environ.get("KUMO_BIN") or DEFAULT_BIN


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def unique_name(prefix="e2e"):
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def table_arn(name, region=REGION):
    return f"arn:aws:dynamodb:{region}:{ACCOUNT}:table/{name}"


# --------------------------------------------------------------------------- server


def serve_flags(flags):
    """`kumo serve` arguments from a dict {"capacity": "enforce", "burst-seconds": 0} (a
    leading "--" is added; True gives a bare flag, None or False leaves it out) or from a
    list of strings (taken as they are)."""
    if isinstance(flags, dict):
        args = []
        for name, value in flags.items():
            if value is None or value is False:
                continue
            args.append(name if name.startswith("-") else "--" + name)
            if value is not True:
                args.append(str(value))
        return args
    return [str(a) for a in flags]


ADMIN_LISTENING_RE = re.compile(rb"admin listening on (\S+):(\d+)")


def on_rados():
    """True when the suite runs against the RADOS back end ($KUMO_RADOS_POOL)."""
    return bool(os.environ.get("KUMO_RADOS_POOL"))


def rados_namespace(data_dir):
    """The RADOS namespace prefix of a server: fresh for a server "in memory" (None), the
    same at every start for a server on a data directory."""
    if data_dir is None:
        return "e2e-" + uuid.uuid4().hex[:16] + "-"
    digest = hashlib.sha1(os.path.abspath(str(data_dir)).encode()).hexdigest()[:16]
    return "e2e-" + digest + "-"


def rados_args(pool, data_dir, namespace=None):
    """With $KUMO_RADOS_POOL set, every server runs on that pool of the Ceph cluster that
    $KUMO_CEPH_CONF describes, each in RADOS namespaces of its own: a server "in memory"
    gets fresh ones at every start, a server on a data directory the same ones at every
    start (so its data survives a restart, as on disk). `namespace`, when given, is used
    instead (the front ends of one KumoGroup share theirs)."""
    if namespace is None:
        namespace = rados_namespace(data_dir)
    args = ["--rados", pool, "--rados-namespace", namespace]
    if os.environ.get("KUMO_CEPH_CONF"):
        args += ["--ceph-conf", os.environ["KUMO_CEPH_CONF"]]
    return args


def front_end_count():
    """$KUMO_FRONT_ENDS: how many `kumo serve` processes every KumoServer runs (1 unless
    set; see KumoGroup)."""
    value = os.environ.get("KUMO_FRONT_ENDS") or "1"
    if not value.isdigit() or int(value) < 1:
        raise RuntimeError(f"KUMO_FRONT_ENDS={value!r}: expected a number of front ends")
    return int(value)


class KumoServer:
    """One `kumo serve` process. Its stdout and stderr go to `log_path`.

    `extra_args` (a list) and `flags` (see serve_flags) are appended to the command.
    `admin_port`: None (no admin listener), a port, or 0 for a free one, read from the log
    at start; after start() `admin_port` is the bound port and `admin` an Admin client.

    With $KUMO_FRONT_ENDS set above 1, `KumoServer(...)` makes a KumoGroup instead: that
    many processes on one RADOS namespace behind HAProxy, with the same interface.
    KumoProcess is always one process."""

    def __new__(cls, *args, **kwargs):
        if cls is KumoServer and front_end_count() > 1:
            cls = KumoGroup
        return super().__new__(cls)

    def __init__(self, binary, workdir, data_dir=None, credentials=None, region=REGION,
                 extra_args=(), flags=(), admin_port=None):
        self.binary = binary
        self.workdir = workdir
        self.data_dir = data_dir
        self.credentials = credentials
        self.region = region
        self.extra_args = list(extra_args) + serve_flags(flags)
        self.requested_admin_port = admin_port
        self.admin_port = None
        self.proc = None
        self.port = None
        self.log_path = None
        self._starts = 0
        # Set by KumoGroup on its members: a shared RADOS namespace and a log file name.
        self.namespace = None
        self.log_file = None

    @property
    def admin(self):
        """An Admin client of this server's admin listener."""
        assert self.admin_port is not None, "server started without an admin port"
        return Admin(self.admin_port)

    @property
    def endpoint(self):
        return f"http://127.0.0.1:{self.port}"

    def command(self):
        cmd = [self.binary, "serve", "--port", str(self.port), "--bind", "127.0.0.1",
               "--region", self.region]
        pool = os.environ.get("KUMO_RADOS_POOL")
        if pool:
            cmd += rados_args(pool, self.data_dir, self.namespace)
        elif self.data_dir is None:
            cmd.append("--in-memory")
        else:
            cmd += ["--data-dir", str(self.data_dir)]
        if self.credentials is not None:
            cmd += ["--credentials", str(self.credentials)]
        if self.requested_admin_port is not None:
            cmd += ["--admin-port", str(self.requested_admin_port)]
        extra = self.extra_args
        if pool:
            # A server asked to run in memory runs on fresh RADOS namespaces instead.
            extra = [a for a in extra if a != "--in-memory"]
            # Leases of 3 s (unless a test sets its own): a server restarted after kill -9
            # finishes what the killed one left once its lease lapses, within 3.5 s, before
            # it serves.
            if "--rados-lease-seconds" not in extra:
                extra = extra + ["--rados-lease-seconds", "3"]
        return cmd + extra

    @property
    def generation(self):
        """Number of times this server has been started; changes on every restart."""
        return self._starts

    def start(self, timeout=20.0, port=None):
        """Starts the process on `port` (default: a fresh free port) and waits for GET /."""
        assert self.proc is None or self.proc.poll() is not None, "server already running"
        self.port = port or free_port()
        self._starts += 1
        self.log_path = self.log_file or os.path.join(self.workdir,
                                                      f"kumo-{self.port}-{self._starts}.log")
        log = open(self.log_path, "wb")
        try:
            self.proc = subprocess.Popen(self.command(), stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL)
        finally:
            log.close()
        deadline = time.monotonic() + timeout
        last_error = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"kumo exited with status {self.proc.returncode} during start-up "
                    f"({' '.join(self.command())}); log {self.log_path}:\n{self.log_tail()}")
            try:
                resp = http_request(self.port, "GET", "/", timeout=1.0)
                if resp.status == 200:
                    self.admin_port = self._bound_admin_port()
                    return self
                last_error = f"GET / returned {resp.status}"
            except OSError as e:
                last_error = repr(e)
            time.sleep(0.05)
        self.kill()
        raise RuntimeError(f"kumo did not answer GET / within {timeout}s ({last_error}); "
                           f"log {self.log_path}:\n{self.log_tail()}")

    def _bound_admin_port(self):
        """The admin listener's port as logged (it binds before the DynamoDB port answers)."""
        if self.requested_admin_port is None:
            return None
        with open(self.log_path, "rb") as f:
            found = ADMIN_LISTENING_RE.search(f.read())
        if found is None:
            raise RuntimeError(f"kumo logged no admin port; log {self.log_path}:\n"
                               f"{self.log_tail()}")
        return int(found.group(2))

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def kill(self):
        """SIGKILL: no chance to flush or clean up."""
        if self.alive():
            self.proc.send_signal(signal.SIGKILL)
        if self.proc is not None:
            self.proc.wait(timeout=10)

    def terminate(self, timeout=15.0):
        """SIGTERM and wait; returns the exit status."""
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
            raise AssertionError(f"kumo did not exit within {timeout}s of SIGTERM")

    def stop(self):
        if self.alive():
            try:
                self.terminate(timeout=5)
            except AssertionError:
                pass

    def log_tail(self, n=4000):
        try:
            with open(self.log_path, "rb") as f:
                data = f.read()
            return data[-n:].decode("utf-8", "replace")
        except OSError:
            return "<no log>"

    def client(self, **kwargs):
        return make_client(self.endpoint, **kwargs)

    def api(self, **kwargs):
        return Api(self.port, **kwargs)


class KumoProcess(KumoServer):
    """Always one `kumo serve` process, whatever $KUMO_FRONT_ENDS says: for tests that start
    several front ends of their own (test_rados_front_ends.py), and a KumoGroup's members."""


_LOG_STAMP_RE = re.compile(rb"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3} ")


def _log_records(path):
    """The records of one kumo log: a line that starts with a timestamp plus the lines
    after it that do not; what comes before the first timestamp is a record stamped b""."""
    try:
        with open(path, "rb") as f:
            lines = f.read().splitlines(keepends=True)
    except OSError:
        return []
    records, stamp, chunk = [], b"", []
    for line in lines:
        found = _LOG_STAMP_RE.match(line)
        if found and chunk:
            records.append((stamp, b"".join(chunk)))
            chunk = []
        if found:
            stamp = found.group(0)
        chunk.append(line)
    if chunk:
        records.append((stamp, b"".join(chunk)))
    return records


def merge_logs(paths, out):
    """Writes to `out` the logs `paths` merged in the order of their timestamps (a stable
    merge: each log's lines keep their order, ties go to the earlier log); lines are not
    changed."""
    import heapq
    merged = heapq.merge(*[[(stamp, i, n, text) for n, (stamp, text)
                            in enumerate(_log_records(p))] for i, p in enumerate(paths)])
    tmp = out + ".tmp"
    with open(tmp, "wb") as f:
        for _stamp, _i, _n, text in merged:
            f.write(text)
    os.replace(tmp, out)


def find_haproxy():
    for path in (os.environ.get("KUMO_HAPROXY"), "/usr/sbin/haproxy", "/usr/bin/haproxy"):
        if path and os.access(path, os.X_OK):
            return path
    raise RuntimeError("KUMO_FRONT_ENDS needs HAProxy (scripts/install-deps.sh --test, or "
                       "apt-get install haproxy; KUMO_HAPROXY names another binary)")


def single_process_reason(args):
    """Why a server started with `args` cannot be tested as a group of front ends, or None:
    what depends on one process by nature."""
    for i, arg in enumerate(args[:-1]):
        if arg == "--capacity" and args[i + 1] != "off":
            return ("capacity is metered per process: each front end of a KUMO_FRONT_ENDS "
                    "group throttles and counts on its own meters")
    return None


class _GroupProc:
    """The `proc` of a KumoGroup: its front ends' processes seen as one. The group is dead
    once any of them has exited: poll() and returncode give the status of the first that
    exited (None while all run), wait() waits until one exits, send_signal() signals every
    one still running, pid is the first front end's."""

    def __init__(self, procs):
        self.procs = procs

    @property
    def pid(self):
        return self.procs[0].pid

    def poll(self):
        for p in self.procs:
            if p.poll() is not None:
                return p.returncode
        return None

    @property
    def returncode(self):
        return self.poll()

    def wait(self, timeout=None):
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            status = self.poll()
            if status is not None:
                return status
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired([p.args for p in self.procs], timeout)
            time.sleep(0.02)

    def send_signal(self, sig):
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(sig)

    def kill(self):
        self.send_signal(signal.SIGKILL)

    def terminate(self):
        self.send_signal(signal.SIGTERM)


class GroupAdmin:
    """The admin listeners of a group's front ends: POST /clock/advance (and any other
    POST) goes to every front end in turn and answers as the first did, after asserting
    that the others answered the same status; every GET reaches the first front end only
    (metrics, partitions, insights are that process's)."""

    def __init__(self, ports):
        self.admins = [Admin(p) for p in ports]

    def __getattr__(self, name):
        return getattr(self.admins[0], name)

    def post(self, path, **params):
        answers = [a.post(path, **params) for a in self.admins]
        for status, body in answers[1:]:
            assert status == answers[0][0], (
                f"POST {path} {params}: front end answered {status} {body!r}, the first "
                f"{answers[0]!r}")
        return answers[0]

    def advance(self, seconds):
        status, body = self.post("/clock/advance", seconds=seconds)
        assert status == 200, f"advance({seconds}) answered {status}: {body!r}"
        return body["now"]


class KumoGroup(KumoServer):
    """What KumoServer makes with $KUMO_FRONT_ENDS=N (N > 1, on RADOS: $KUMO_RADOS_POOL):
    N `kumo serve` processes (KumoProcess members, each on a free port of its own) on one
    RADOS namespace, behind an HAProxy in HTTP mode listening on `port`, which sends every
    request to the next front end in turn (`balance roundrobin`; `option
    http-server-close`, so consecutive requests on one keep-alive client connection go to
    different front ends too). The interface is KumoServer's:

    - start() starts the front ends one after another (each opens the shared catalog
      before the next starts), then HAProxy; with the same data_dir (or port) a restart
      gets the same namespace (or port). A server "in memory" gets a fresh namespace at
      every start, shared by its front ends.
    - The group is alive while every front end and HAProxy run; `proc` (a _GroupProc)
      counts it dead once any front end exited. kill() SIGKILLs every front end, then
      HAProxy; terminate() sends SIGTERM to every front end (returning 0 only if each
      exited with 0), then stops HAProxy; start() after a partial death stops what is left
      and starts all N again.
    - `log_path` is the front ends' logs merged by timestamp (lines unchanged), written
      anew each time it is read and when the group stops; `member_logs` are the
      front ends' own, `haproxy_log` HAProxy's. log_tail() shows each front end's tail.
    - `admin_port` is the first front end's admin listener; `admin` is a GroupAdmin:
      POST /clock/advance advances every front end's clock, GETs reach the first.
    - A server that depends on one process by nature (single_process_reason: enforced
      capacity) is skipped at start() with the reason.

    When a front end dies in the middle of a request, HAProxy sends nothing and closes the
    client's connection (its 502/503/504 pages are empty files), as the one process's death
    would."""

    def __init__(self, *args, **kwargs):
        self._log_path = None
        super().__init__(*args, **kwargs)
        self.count = front_end_count()
        self.members = []
        self.haproxy = None
        self._haproxy_log = None
        if not on_rados():
            raise RuntimeError("KUMO_FRONT_ENDS needs the RADOS back end ($KUMO_RADOS_POOL): "
                               "front ends share their tables through a RADOS namespace")

    # log_path: the merged log, rewritten on every read.
    @property
    def log_path(self):
        if self._log_path is not None and self.members:
            merge_logs(self.member_logs, self._log_path)
        return self._log_path

    @log_path.setter
    def log_path(self, value):
        self._log_path = value

    @property
    def member_logs(self):
        return [m.log_path for m in self.members]

    @property
    def haproxy_log(self):
        return self._haproxy_log

    @property
    def admin(self):
        assert self.admin_port is not None, "server started without an admin port"
        return GroupAdmin([m.admin_port for m in self.members])

    def command(self):
        if self.members:
            return self.members[0].command()
        return super().command()

    def _processes(self):
        return [m.proc for m in self.members if m.proc is not None] + (
            [self.haproxy] if self.haproxy is not None else [])

    def alive(self):
        return bool(self.members) and all(m.alive() for m in self.members) and (
            self.haproxy is not None and self.haproxy.poll() is None)

    def _any_running(self):
        return any(p.poll() is None for p in self._processes())

    def start(self, timeout=20.0, port=None):
        assert not self.alive(), "server already running"
        self._stop_all(signal.SIGKILL)  # what a partial death left
        reason = single_process_reason(self.extra_args)
        if reason is not None:
            import pytest
            pytest.skip(f"KUMO_FRONT_ENDS={self.count}: {reason}")
        self.port = port or free_port()
        self._starts += 1
        base = os.path.join(self.workdir, f"kumo-{self.port}-{self._starts}")
        self._log_path = base + ".log"
        self._haproxy_log = base + ".haproxy.log"
        self.namespace = rados_namespace(self.data_dir)
        self.members, self.haproxy, self.proc = [], None, None
        try:
            for i in range(self.count):
                member = KumoProcess(self.binary, self.workdir, data_dir=self.data_dir,
                                     credentials=self.credentials, region=self.region,
                                     extra_args=self.extra_args,
                                     admin_port=self.requested_admin_port)
                member.namespace = self.namespace
                member.log_file = f"{base}.fe{i + 1}.log"
                self.members.append(member)
                member.start(timeout=timeout)
            self.proc = _GroupProc([m.proc for m in self.members])
            self._start_haproxy(base, timeout)
        except BaseException:
            self._stop_all(signal.SIGKILL)
            raise
        self.admin_port = self.members[0].admin_port
        return self

    def _start_haproxy(self, base, timeout):
        cfg = base + ".haproxy.cfg"
        # Empty error pages: a front end that dies during a request closes the client's
        # connection, as one kumo process would, instead of answering an HTML 502.
        empty = os.path.join(self.workdir, "haproxy-empty.http")
        if not os.path.exists(empty):
            open(empty, "wb").close()
        lines = [
            "global",
            "    maxconn 2000",
            "defaults",
            "    mode http",
            "    option http-server-close",
            "    option redispatch",
            "    retries 3",
            "    timeout connect 5s",
            "    timeout client 300s",
            "    timeout server 300s",
            "    timeout http-request 120s",
            "    timeout http-keep-alive 120s",
            f"    errorfile 502 {empty}",
            f"    errorfile 503 {empty}",
            f"    errorfile 504 {empty}",
            "frontend dynamodb",
            f"    bind 127.0.0.1:{self.port}",
            "    default_backend kumo",
            "backend kumo",
            "    balance roundrobin",
        ]
        lines += [f"    server fe{i + 1} 127.0.0.1:{m.port}" for i, m in enumerate(self.members)]
        with open(cfg, "w") as f:
            f.write("\n".join(lines) + "\n")
        log = open(self._haproxy_log, "wb")
        try:
            self.haproxy = subprocess.Popen([find_haproxy(), "-db", "-f", cfg], stdout=log,
                                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        finally:
            log.close()
        deadline = time.monotonic() + timeout
        last_error = None
        while time.monotonic() < deadline:
            if self.haproxy.poll() is not None:
                raise RuntimeError(f"haproxy exited with status {self.haproxy.returncode} "
                                   f"({cfg}); log {self._haproxy_log}")
            try:
                resp = http_request(self.port, "GET", "/", timeout=1.0)
                if resp.status == 200:
                    return
                last_error = f"GET / returned {resp.status}"
            except OSError as e:
                last_error = repr(e)
            time.sleep(0.05)
        raise RuntimeError(f"haproxy on port {self.port} did not answer GET / within "
                           f"{timeout}s ({last_error})")

    def _stop_all(self, sig, timeout=15.0):
        """Signals every front end still running, waits for them, then stops HAProxy; →
        the front ends' exit statuses (None: did not exit within `timeout`)."""
        for m in self.members:
            if m.alive():
                m.proc.send_signal(sig)
        statuses = []
        for m in self.members:
            if m.proc is None:
                continue
            try:
                statuses.append(m.proc.wait(timeout=timeout))
            except subprocess.TimeoutExpired:
                m.proc.kill()
                m.proc.wait(timeout=10)
                statuses.append(None)
        if self.haproxy is not None:
            if self.haproxy.poll() is None:
                self.haproxy.send_signal(signal.SIGKILL if sig == signal.SIGKILL
                                         else signal.SIGTERM)
            try:
                self.haproxy.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.haproxy.kill()
                self.haproxy.wait(timeout=10)
        if self._log_path is not None and self.members:
            merge_logs(self.member_logs, self._log_path)
        return statuses

    def kill(self):
        """SIGKILL to every front end, then to HAProxy."""
        self._stop_all(signal.SIGKILL)

    def terminate(self, timeout=15.0):
        """SIGTERM to every front end and wait; → 0 when each exited with 0, else the first
        other status."""
        statuses = self._stop_all(signal.SIGTERM, timeout)
        if None in statuses:
            raise AssertionError(f"a front end did not exit within {timeout}s of SIGTERM")
        return next((s for s in statuses if s != 0), 0)

    def stop(self):
        if self._any_running():
            try:
                self.terminate(timeout=5)
            except AssertionError:
                pass

    def log_tail(self, n=4000):
        if not self.members:
            return "<no log>"
        each = max(n // len(self.members), 500)
        return "\n".join(f"--- front end {i + 1} ({m.log_path}):\n{m.log_tail(each)}"
                         for i, m in enumerate(self.members))

    def request_counts(self):
        """Requests each front end logged (--log-requests access lines), in order."""
        counts = []
        for m in self.members:
            with open(m.log_path, "rb") as f:
                counts.append(sum(1 for line in f if b" latency=" in line))
        return counts


CAPACITY_FLAGS = {"capacity": "enforce", "clock": "manual"}


def start_capacity_server(binary, workdir, flags=None, data_dir=None, **kwargs):
    """A started in-memory (or `data_dir`) server for capacity tests: `--capacity enforce
    --clock manual --admin-port 0` plus `flags` (a dict, see serve_flags; its entries
    override these). Its clock: server.admin."""
    merged = dict(CAPACITY_FLAGS)
    merged.update(flags or {})
    srv = KumoServer(binary, workdir, data_dir=data_dir, flags=merged, admin_port=0, **kwargs)
    return srv.start()


def make_client(endpoint, access_key="AKIDKUMOE2E", secret="kumo-e2e-secret", region=REGION,
                service="dynamodb"):
    config = botocore.config.Config(
        retries={"total_max_attempts": 1},
        connect_timeout=5,
        read_timeout=60,
    )
    return boto3.session.Session().client(
        service,
        endpoint_url=endpoint,
        region_name=region,
        aws_access_key_id=access_key,
        aws_secret_access_key=secret,
        config=config,
    )


# --------------------------------------------------------------------------- raw HTTP


class Response:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers  # http.client.HTTPMessage: case-insensitive get()
        self.body = body

    @property
    def json(self):
        return json.loads(self.body) if self.body else None

    @property
    def full_type(self):
        return self.json.get("__type")

    @property
    def error_type(self):
        return self.full_type.split("#")[-1]

    @property
    def message(self):
        j = self.json
        if "message" in j:
            return j["message"]
        return j.get("Message")

    def header(self, name):
        return self.headers.get(name)

    def __repr__(self):
        return f"<Response {self.status} {self.body[:600]!r}>"


def _crc_consistent(resp):
    crc = resp.headers.get("x-amz-crc32")
    if crc is not None:
        assert crc == str(zlib.crc32(resp.body) & 0xFFFFFFFF), (
            f"x-amz-crc32 {crc} does not match the body {resp.body[:200]!r}")


def http_request(port, method, path="/", body=b"", headers=None, conn=None, timeout=30.0):
    """Sends one request; returns Response. Uses `conn` when given (keep-alive)."""
    own = conn is None
    if own:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        if isinstance(body, str):
            body = body.encode()
        conn.request(method, path, body=body if (body or method not in ("GET", "HEAD")) else None,
                     headers=dict(headers or {}))
        r = conn.getresponse()
        data = r.read()
        resp = Response(r.status, r.headers, data)
    finally:
        if own:
            conn.close()
    _crc_consistent(resp)
    return resp


def encode_body(body):
    if body is None:
        return b""
    if isinstance(body, (bytes, bytearray)):
        return bytes(body)
    if isinstance(body, str):
        return body.encode()
    return json.dumps(body, separators=(",", ":")).encode()


class _SigV4At(SigV4Auth):
    """SigV4Auth that signs with a chosen timestamp instead of now."""

    def __init__(self, credentials, service, region, when):
        super().__init__(credentials, service, region)
        self._when = when

    def add_auth(self, request):
        request.context["timestamp"] = self._when.strftime(SIGV4_TIMESTAMP)
        self._modify_request_before_signing(request)
        canonical_request = self.canonical_request(request)
        string_to_sign = self.string_to_sign(request, canonical_request)
        signature = self.signature(string_to_sign, request)
        self._inject_signature_to_request(request, signature)


def sign_headers(port, body, headers, access_key, secret, region, when=None):
    """Returns `headers` plus X-Amz-Date and a SigV4 Authorization for a POST / of `body`."""
    req = AWSRequest(method="POST", url=f"http://127.0.0.1:{port}/", data=body,
                     headers=dict(headers))
    creds = Credentials(access_key, secret)
    if when is None:
        SigV4Auth(creds, "dynamodb", region).add_auth(req)
    else:
        _SigV4At(creds, "dynamodb", region, when).add_auth(req)
    return dict(req.headers.items())


def signed_request(port, target, body, access_key="AKIDKUMOE2E", secret="kumo-e2e-secret",
                   region=REGION, content_type=JSON_10, headers=None, when=None, conn=None,
                   send_body=None):
    """POST / signed with SigV4. `target` is the full X-Amz-Target (None: no header).
    `send_body`, when given, is sent instead of the signed body."""
    data = encode_body(body)
    hdrs = {}
    if content_type is not None:
        hdrs["Content-Type"] = content_type
    if target is not None:
        hdrs["X-Amz-Target"] = target
    hdrs.update(headers or {})
    hdrs = sign_headers(port, data, hdrs, access_key, secret, region, when)
    return http_request(port, "POST", "/", body=data if send_body is None else send_body,
                        headers=hdrs, conn=conn)


def unsigned_request(port, target, body, content_type=JSON_10, headers=None, method="POST",
                     conn=None):
    hdrs = {}
    if content_type is not None:
        hdrs["Content-Type"] = content_type
    if target is not None:
        hdrs["X-Amz-Target"] = target
    hdrs.update(headers or {})
    return http_request(port, method, "/", body=encode_body(body), headers=hdrs, conn=conn)


class Api:
    """Raw, signed DynamoDB JSON calls against one server."""

    def __init__(self, port, access_key="AKIDKUMOE2E", secret="kumo-e2e-secret", region=REGION):
        self.port = port
        self.access_key = access_key
        self.secret = secret
        self.region = region

    def __call__(self, operation, body=None, **kwargs):
        if body is None:
            body = {}
        return signed_request(self.port, TARGET_PREFIX + operation, body,
                              access_key=self.access_key, secret=self.secret,
                              region=self.region, **kwargs)

    def ok(self, operation, body=None, **kwargs):
        resp = self(operation, body, **kwargs)
        assert resp.status == 200, f"{operation} failed: {resp!r}"
        return resp.json


# --------------------------------------------------------------------------- admin


class Admin:
    """Client of `kumo serve`'s admin listener (--admin-port; docs/capacity.md, the admin
    listener). One keep-alive connection per call; no signing.

        admin = server.admin                      # or Admin(port)
        admin.health()                            # {"status": "ok"}
        admin.clock()                             # {"mode": "manual"|"wall", "now": 1767225600.0}
        admin.now()                               # the engine clock, epoch seconds
        admin.advance(1)                          # POST /clock/advance?seconds=1 → new now;
                                                  # asserts 200 (everything due has run)
        admin.get("/tables/t/history", index="g") # → (status, JSON or, for text, str)
        admin.post("/clock/advance", seconds=0)   # → (status, JSON or str), no assertion
        admin.metrics()                           # /metrics text (Prometheus 0.0.4)
        admin.metric("dynamodb_read_throttle_events_total", table_name="t")
                                                  # → the sample's value (float) or None
        admin.tables()                            # GET /tables
        admin.table("t")                          # GET /tables/t
        admin.partitions("t", index=None)         # the list of partitions of the table or GSI
        admin.top_keys("t", index=None, kind="accessed", seconds=60, by="item")  # …/top-keys
        admin.history("t", index=None)            # GET …/history
        admin.insights("t", index=None, minutes=None)                  # GET …/insights
        admin.report()                            # GET /report

    The JSON getters assert a 200 answer and return the parsed body; use get() to check an
    error status."""

    def __init__(self, port, host="127.0.0.1", timeout=30.0):
        self.port = port
        self.host = host
        self.timeout = timeout

    def request(self, method, path, params=None, body=b""):
        """→ Response; `params` (a dict, None values left out) become the query string."""
        query = {k: v for k, v in (params or {}).items() if v is not None}
        if query:
            path += "?" + urllib.parse.urlencode(query)
        conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        try:
            conn.request(method, path, body=body or None)
            r = conn.getresponse()
            return Response(r.status, r.headers, r.read())
        finally:
            conn.close()

    @staticmethod
    def _decoded(resp):
        if (resp.header("Content-Type") or "").startswith("application/json"):
            return resp.json
        return resp.body.decode("utf-8", "replace")

    def get(self, path, **params):
        resp = self.request("GET", path, params)
        return resp.status, self._decoded(resp)

    def post(self, path, **params):
        resp = self.request("POST", path, params)
        return resp.status, self._decoded(resp)

    def ok(self, path, **params):
        status, body = self.get(path, **params)
        assert status == 200, f"GET {path} {params} answered {status}: {body!r}"
        return body

    def health(self):
        return self.ok("/health")

    def clock(self):
        return self.ok("/clock")

    def now(self):
        return self.clock()["now"]

    def advance(self, seconds):
        status, body = self.post("/clock/advance", seconds=seconds)
        assert status == 200, f"advance({seconds}) answered {status}: {body!r}"
        return body["now"]

    def metrics(self):
        status, text = self.get("/metrics")
        assert status == 200, f"GET /metrics answered {status}: {text!r}"
        return text

    def metric(self, name, **labels):
        """The value of the sample `name` whose labels are exactly `labels`, or None."""
        for sample, value in parse_metrics(self.metrics()):
            if sample == (name, labels):
                return value
        return None

    def tables(self):
        return self.ok("/tables")

    def table(self, name):
        return self.ok(f"/tables/{_quoted(name)}")

    def partitions(self, name, index=None):
        body = self.ok(f"/tables/{_quoted(name)}/partitions", index=index)
        return body["partitions"] if isinstance(body, dict) and "partitions" in body else body

    def top_keys(self, name, index=None, kind="accessed", seconds=None, by=None):
        return self.ok(f"/tables/{_quoted(name)}/top-keys", index=index, kind=kind,
                       seconds=seconds, by=by)

    def history(self, name, index=None):
        return self.ok(f"/tables/{_quoted(name)}/history", index=index)

    def insights(self, name, index=None, minutes=None):
        return self.ok(f"/tables/{_quoted(name)}/insights", index=index, minutes=minutes)

    def report(self, **params):
        return self.ok("/report", **params)


def _quoted(name):
    return urllib.parse.quote(name, safe="")


_METRIC_LINE_RE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)')
_LABEL_RE = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse_metrics(text):
    """Prometheus text → [((name, {label: value}), float)], comments left out."""
    samples = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = _METRIC_LINE_RE.match(line)
        if m is None:
            continue
        labels = {k: bytes(v, "utf-8").decode("unicode_escape")
                  for k, v in _LABEL_RE.findall(m.group(2) or "")}
        samples.append(((m.group(1), labels), float(m.group(3))))
    return samples


# --------------------------------------------------------------------------- assertions


def assert_error(resp, status, full_type, message=None, message_prefix=None):
    assert resp.status == status, f"expected HTTP {status} {full_type}, got {resp!r}"
    body = resp.json
    assert body is not None, f"expected an error body, got {resp!r}"
    assert body.get("__type") == full_type, f"expected {full_type}, got {resp!r}"
    if message is not None:
        assert resp.message == message, (
            f"\nexpected message: {message!r}\n     got message: {resp.message!r}")
    if message_prefix is not None:
        assert resp.message is not None and resp.message.startswith(message_prefix), (
            f"\nexpected message starting: {message_prefix!r}\n              got message: "
            f"{resp.message!r}")


def assert_validation(resp, message=None, message_prefix=None):
    assert_error(resp, 400, VALIDATION, message, message_prefix)


def assert_not_found(resp, message="Requested resource not found"):
    assert_error(resp, 400, RESOURCE_NOT_FOUND, message)


def assert_serialization(resp, message=None):
    assert_error(resp, 400, SERIALIZATION, message)


def client_error(excinfo, code, message=None, message_prefix=None, status=400):
    """Checks a botocore ClientError captured by pytest.raises."""
    err = excinfo.value.response
    assert err["Error"]["Code"] == code, f"expected {code}, got {err['Error']}"
    assert err["ResponseMetadata"]["HTTPStatusCode"] == status
    if message is not None:
        assert err["Error"]["Message"] == message, (
            f"\nexpected message: {message!r}\n     got message: {err['Error']['Message']!r}")
    if message_prefix is not None:
        assert err["Error"]["Message"].startswith(message_prefix), err["Error"]["Message"]


# --------------------------------------------------------------------------- data helpers


def S(value):
    """A string AttributeValue."""
    return {"S": value}


def N(value):
    """A number AttributeValue; `value` may be an int, a float or the number's text."""
    return {"N": str(value)}


def sized(key, size, **attrs):
    """`key` (an item key) plus `attrs` plus a padding attribute `pad`, exactly `size` bytes."""
    item = dict(key, **attrs)
    base = item_size(item) + len("pad")
    assert size >= base
    item["pad"] = S("x" * (size - base))
    assert item_size(item) == size
    return item


def b64(data):
    return base64.b64encode(data).decode()


def normalize(value):
    """AttributeValue JSON → comparable form where sets are order-independent."""
    if isinstance(value, dict):
        if len(value) == 1:
            (t, v), = value.items()
            if t in ("SS", "NS", "BS"):
                return (t, frozenset(v))
            if t == "L":
                return ("L", tuple(normalize(x) for x in v))
            if t == "M":
                return ("M", normalize_item(v))
            return (t, v)
        return ("?", json.dumps(value, sort_keys=True))
    return value


def normalize_item(item):
    return {k: normalize(v) for k, v in item.items()}


def wait_until(predicate, timeout=5.0, step=0.05, what="condition"):
    """Calls predicate() until it returns a truthy value (returned) or `timeout` passes."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} still false after {timeout}s (last value {value!r})")
        time.sleep(step)


def wait_table_active(client, name, timeout=10.0):
    deadline = time.monotonic() + timeout
    while True:
        desc = client.describe_table(TableName=name)["Table"]
        if desc["TableStatus"] == "ACTIVE":
            return desc
        if time.monotonic() > deadline:
            raise AssertionError(f"table {name} still {desc['TableStatus']} after {timeout}s")
        time.sleep(0.05)


def wait_table_gone(client, name, timeout=10.0):
    deadline = time.monotonic() + timeout
    while True:
        try:
            client.describe_table(TableName=name)
        except client.exceptions.ResourceNotFoundException:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"table {name} still exists {timeout}s after DeleteTable")
        time.sleep(0.05)



def scan_all(api, table, index=None):
    """Every item of a table, or entry of an index, over all pages; the table is read
    consistently (an index is not: a GSI refuses consistent reads)."""
    items, body = [], {"TableName": table}
    if index is not None:
        body["IndexName"] = index
    else:
        body["ConsistentRead"] = True
    while True:
        out = api.ok("Scan", body)
        items += out["Items"]
        if "LastEvaluatedKey" not in out:
            return items
        body["ExclusiveStartKey"] = out["LastEvaluatedKey"]

def create_table_args(name, hash_key=("pk", "S"), range_key=None, **extra):
    keys = [{"AttributeName": hash_key[0], "KeyType": "HASH"}]
    defs = [{"AttributeName": hash_key[0], "AttributeType": hash_key[1]}]
    if range_key is not None:
        keys.append({"AttributeName": range_key[0], "KeyType": "RANGE"})
        defs.append({"AttributeName": range_key[0], "AttributeType": range_key[1]})
    args = {"TableName": name, "KeySchema": keys, "AttributeDefinitions": defs}
    if "ProvisionedThroughput" not in extra and "BillingMode" not in extra:
        args["BillingMode"] = "PAY_PER_REQUEST"
    args.update(extra)
    return args


def now_utc():
    return datetime.datetime.utcnow()


def number_size(canonical):
    """Item-size bytes of a number given in canonical form: 1 + base-100 digit pairs aligned on the
    decimal point (+1 if negative)."""
    neg = canonical.startswith("-")
    digits = canonical.lstrip("-")
    if digits == "0":
        return 1
    int_part, _, frac_part = digits.partition(".")
    int_part = int_part.lstrip("0")
    if len(int_part) % 2:
        int_part = "0" + int_part
    if len(frac_part) % 2:
        frac_part = frac_part + "0"
    padded = int_part + frac_part
    pairs = [padded[i:i + 2] for i in range(0, len(padded), 2)]
    while pairs and pairs[0] == "00":
        pairs.pop(0)
    while pairs and pairs[-1] == "00":
        pairs.pop()
    return 1 + len(pairs) + (1 if neg else 0)


def value_size(v):
    (t, x), = v.items()
    if t == "S":
        return len(x.encode())
    if t == "N":
        return number_size(x)
    if t == "B":
        return len(base64.b64decode(x))
    if t in ("BOOL", "NULL"):
        return 1
    if t == "SS":
        return sum(len(s.encode()) for s in x)
    if t == "NS":
        return sum(number_size(n) for n in x)
    if t == "BS":
        return sum(len(base64.b64decode(b)) for b in x)
    if t == "L":
        return 3 + sum(1 + value_size(e) for e in x)
    if t == "M":
        return 3 + sum(1 + len(k.encode()) + value_size(e) for k, e in x.items())
    raise ValueError(t)


def item_size(item):
    """Item size as DynamoDB counts it: name lengths plus value sizes (numbers must already be
    canonical)."""
    return sum(len(k.encode()) + value_size(v) for k, v in item.items())
