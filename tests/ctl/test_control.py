#!/usr/bin/env python3
"""tests/ctl/test_control.py CTL_SERVER RINGPROF

The control socket (src/control/control.c) end to end, against ctl_server (its fake agent
counts every call), with replies parsed by Python's json module, and then the
clients `ringprof ctl` and `ringprof list` against the same server:

  - the socket file is 0600 (the server runs with umask 0) and owned by us;
  - every command gets the right reply, and reaches the agent with the right
    arguments (the fake agent's counters and state, read back through status);
  - malformed requests (unknown command, bad `set` syntax and values, empty line,
    binary junk) get an error reply, reach no callback, and leave the connection
    usable; an oversized request gets an error reply and the connection closes;
  - 200 concurrent clients all get answers; a client stalled halfway through a
    line, or one that never reads, does not delay anyone and is dropped (and
    logged) after the 5 s stall limit; 64 silent, idle or pipelining clients do
    not keep a fresh one out;
  - another uid is refused: with the normal 0600 mode connect() itself fails;
    with the mode relaxed (test-only), SO_PEERCRED refuses it with an error reply,
    and the refusal is logged; a server run as nobody accepts root;
  - a stale socket file is replaced, a live one is not taken over, a non-socket
    is not removed, a path too long for sun_path is refused clearly;
  - ringprof ctl by socket and by pid (discovery file, and without it), pretty
    and --raw, exit status, unreachable agents; ringprof list, with pruning.
Runs in about 25 s.
"""
import atexit
import json
import os
import select
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time

SERVER, RINGPROF = sys.argv[1], sys.argv[2]
NOBODY = 65534
STALL_S = 5.0            # RP_CONTROL_STALL_MS

checks = failures = 0


def sanitizer_report(text):
    """Did ASan/UBSan complain? (An error exit alone could look like an expected 1.)"""
    return "Sanitizer" in text or "runtime error:" in text


def check(cond, msg):
    global checks, failures
    checks += 1
    if not cond:
        failures += 1
        print("FAIL: " + msg, flush=True)
    return cond


work = tempfile.mkdtemp(prefix="rp-ctl-")


def cleanup():
    """Stop every server still running, even when the script dies halfway."""
    for s_ in servers:
        if s_.p.poll() is None:
            s_.p.kill()
            s_.p.wait()


atexit.register(cleanup)
os.chmod(work, 0o755)          # nobody must be able to reach the socket to try it
LOG = os.path.join(work, "server.log")
servers = []


class Server:
    def __init__(self, path, *args, uid=None):
        self.path = path
        pre = []
        if uid is not None:
            pre = ["setpriv", "--reuid", str(uid), "--regid", str(uid), "--clear-groups"]
        # stderr goes to a file: a pipe nobody reads could fill and block the server
        self.errfile = os.path.join(work, "server-%d.err" % len(servers))
        with open(self.errfile, "w") as err:
            self.p = subprocess.Popen(pre + [SERVER, path] + list(args),
                                      stdout=subprocess.PIPE, stderr=err, text=True)
        line = self.p.stdout.readline()
        if not line.startswith("ready "):
            self.p.wait()
            with open(self.errfile) as f:
                raise RuntimeError("ctl_server did not start: %r %r" % (line, f.read()))
        self.pid = int(line.split()[1])
        servers.append(self)

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
        out, _ = self.p.communicate(timeout=10)
        with open(self.errfile) as f:
            err = f.read()
        check(self.p.returncode == 0 and not sanitizer_report(err),
              "ctl_server %s exited %d:\n%s" % (self.path, self.p.returncode, err[-3000:]))
        return self.p.returncode, out


def start_fails(path, *args):
    p = subprocess.run([SERVER, path] + list(args), capture_output=True, text=True,
                       timeout=10)
    check(not sanitizer_report(p.stderr), "sanitizer report:\n" + p.stderr)
    return p.returncode, p.stderr.strip()


def connect(path, timeout=5.0):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(path)
    return s


def read_line(s, timeout=5.0):
    """One reply line (without "\\n"), or None at EOF before a line."""
    s.settimeout(timeout)
    buf = b""
    while not buf.endswith(b"\n"):
        try:
            chunk = s.recv(1)
        except ConnectionResetError:    # closed with our unread request in its queue
            return None
        if not chunk:
            return None
        buf += chunk
    return buf[:-1]


def ask_on(s, line):
    s.sendall(line)
    raw = read_line(s)
    return None if raw is None else json.loads(raw)


def ask(path, line):
    with connect(path) as s:
        return ask_on(s, line if isinstance(line, bytes) else line.encode() + b"\n")


def timed_ask(line):
    """ask(sock, line) as a fresh client: the reply (or the exception) and the
    seconds it took."""
    t0 = time.monotonic()
    try:
        r = ask(sock, line)
    except OSError as e:
        r = {"exception": repr(e)}
    return r, time.monotonic() - t0


def status(path):
    r = ask(path, "status")
    assert r["ok"], r
    return r


def log_text():
    try:
        with open(LOG) as f:
            return f.read()
    except FileNotFoundError:
        return ""


def wait_for(cond, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.05)
    return cond()


def as_uid(uid, fn):
    """Run fn() in a child with uid/gid `uid`; return its result (via JSON)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            res = fn()
        except Exception as e:          # noqa: BLE001 - reported to the parent
            res = {"exception": type(e).__name__, "errno": getattr(e, "errno", None),
                   "text": str(e)}
        os.write(w, json.dumps(res).encode())
        os._exit(0)
    os.close(w)
    data = b""
    while True:
        chunk = os.read(r, 65536)
        if not chunk:
            break
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    return json.loads(data)


sock = os.path.join(work, "ringprof-test.sock")

# ------------------------------------------------------------ file and mode --
srv = Server(sock, "--log", LOG, "--discovery")
st = os.lstat(sock)
check(stat.S_ISSOCK(st.st_mode), "the control socket is a socket")
check(stat.S_IMODE(st.st_mode) == 0o600,
      "socket mode is 0%o under umask 0, expected 0600" % stat.S_IMODE(st.st_mode))
check(st.st_uid == os.geteuid(), "socket owned by uid %d" % st.st_uid)

# ----------------------------------------------------------- every command --
r = ask(sock, "version")
check(r == {"protocol": 1, "ok": True, "command": "version", "ringprof": r.get("ringprof"),
            "pid": srv.pid} and isinstance(r.get("ringprof"), str) and r["ringprof"],
      "version reply: %r" % r)

r = ask(sock, "help")
check(r.get("ok") is True and r.get("commands") ==
      ["status", "flush", "rotate", "start", "stop", "set", "version", "threads",
       "help"] and
      r.get("kinds") == ["cpu", "alloc", "lock", "wall"] and
      r.get("settings") == ["interval", "alloc", "lock", "wall", "wallthreads"],
      "help reply: %r" % r)

r = status(sock)
check(r["protocol"] == 1 and r["command"] == "status" and r["state"] == "running",
      "status head: %r" % r)
check(r["samples"] == {"cpu": 12345, "alloc": 678} and
      r["lost"] == {"ring_full": 3, "nested": 1, "too_big": 0} and
      r["bytes_written"] == 987654 and r["chunks"]["finished"] == 6 and
      r["agent"]["handler_ns_p99"] == 4100, "status figures: %r" % r)
check([t["name"] for t in r["threads"]] ==
      ['worker "0" \\ \ufffd', 'worker "1" \\ \ufffd'],
      "thread names escaped and repaired: %r" % r["threads"])
check(r["calls"]["status"] == 1 and r["calls"]["thread_start"] == 1,
      "status reached the agent once, thread_start ran once: %r" % r["calls"])
check(isinstance(r["agent"]["cpu_ns"], int) and r["agent"]["cpu_ns"] > 0,
      "the server thread's CPU time is reported: %r" % r["agent"])

paths = [ask(sock, "flush") for _ in range(2)]
check([p.get("path") for p in paths] ==
      ["/fake/rec/20260101T000000Z-%d-%06d.rpc" % (srv.pid, n) for n in (1, 2)] and
      all(p["ok"] and p["command"] == "flush" for p in paths),
      "flush replies carry the finished paths: %r" % paths)
r1, r2 = ask(sock, "rotate"), ask(sock, "rotate")
check(r1 == {"protocol": 1, "ok": True, "command": "rotate", "path": None} and
      r2.get("path") == "/fake/rec/rotated-2.rpc",
      "rotate: null path without a chunk, then a path: %r %r" % (r1, r2))

r = ask(sock, "stop cpu")
check(r == {"protocol": 1, "ok": True, "command": "stop", "kinds": ["cpu"]}, "stop cpu: %r" % r)
check(status(sock)["sampling"] == ["alloc", "lock", "wall"],
      "after stop cpu only alloc, lock and wall run")
r = ask(sock, "stop")
check(r.get("kinds") == ["cpu", "alloc", "lock", "wall"], "stop = all kinds: %r" % r)
s = status(sock)
check(s["sampling"] == [] and s["state"] == "stopped", "after stop nothing runs: %r" % s)
r = ask(sock, "start cpu")
check(r.get("kinds") == ["cpu"] and status(sock)["sampling"] == ["cpu"], "start cpu: %r" % r)
check(ask(sock, "start")["kinds"] == ["cpu", "alloc", "lock", "wall"] and
      status(sock)["sampling"] == ["cpu", "alloc", "lock", "wall"], "start = all kinds")

r = ask(sock, "set interval=5ms")
check(r == {"protocol": 1, "ok": True, "command": "set",
            "settings": {"interval_ns": 5000000}}, "set interval: %r" % r)
r = ask(sock, "set alloc=2m interval=250us")
check(r.get("settings") == {"alloc_bytes": 2097152, "interval_ns": 250000},
      "set both: %r" % r)
s = status(sock)
check(s["interval_ns"] == 250000 and s["alloc_bytes"] == 2097152,
      "the agent got the new settings: %r" % s)
r = ask(sock, "set interval=9999ms")
check(r == {"protocol": 1, "ok": False, "command": "set",
            "error": "the fake agent refuses interval=9999ms"},
      "an op's error becomes the error reply: %r" % r)
check(status(sock)["interval_ns"] == 250000, "a refused set changed nothing")

# --------------------------------------------------------- malformed input --
calls_before = status(sock)["calls"]
bad = [
    (b"\n", "empty request"),
    (b"   \t\n", "empty request"),
    (b"reboot\n", "unknown command 'reboot'"),
    (b"status please\n", "'status' takes no arguments"),
    (b"start heap\n", "unknown event kind 'heap'"),
    (b"set\n", "'set' needs KEY=VALUE"),
    (b"set interval\n", "bad setting 'interval'"),
    (b"set speed=3\n", "unknown setting 'speed'"),
    (b"set interval=fast\n", "bad value 'fast' for interval"),
    (b"set interval=10\n", "bad value '10' for interval"),
    (b"set interval=1ns\n", "bad value '1ns' for interval"),
    (b"set alloc=0\n", "bad value '0' for alloc"),
    (b"set alloc=-1\n", "bad value '-1' for alloc"),
    (b"set interval=1ms interval=2ms\n", "given twice"),
    (b"\x00\x01\x02\xff\xfe\n", "non-text byte 0x00 at offset 0"),
    (b"stat\xc3\xa9us\n", "non-text byte 0xc3 at offset 4"),
    (b"GET / HTTP/1.1\r\n", "unknown command 'GET'"),
]
with connect(sock) as c:
    for line, needle in bad:
        r = ask_on(c, line)
        check(r is not None and r.get("ok") is False and r.get("protocol") == 1 and
              needle in r.get("error", ""),
              "%r should get an error reply with %r, got %r" % (line, needle, r))
    # the same connection still works after every refusal
    r = ask_on(c, b"version\n")
    check(r is not None and r.get("ok") is True, "connection usable after errors: %r" % r)
    # a CRLF line is accepted
    r = ask_on(c, b"version\r\n")
    check(r is not None and r.get("ok") is True, "CRLF request: %r" % r)
check(ask(sock, b"stop heap\n").get("command") == "stop",
      "an error reply names the command when it was understood")
calls_after = status(sock)["calls"]
calls_after["status"] -= 1
check(calls_after == calls_before,
      "malformed requests reached no callback: %r -> %r" % (calls_before, calls_after))

# boundary: 4095 bytes + "\n" is a request (an unknown command); 4096 + "\n" is not
with connect(sock) as c:
    r = ask_on(c, b"x" * 4095 + b"\n")
    check(r is not None and "unknown command 'xxx" in r.get("error", ""),
          "a 4096-byte line is read whole: %r" % (r and r.get("error")))
    r = ask_on(c, b"version\n")
    check(r is not None and r.get("ok"), "and the connection stays open")
with connect(sock) as c:
    c.sendall(b"y" * 4096 + b"\nversion\n")
    r = json.loads(read_line(c))
    check(r.get("ok") is False and "request too long" in r.get("error", ""),
          "a 4097-byte line is too long: %r" % r)
    check(read_line(c) is None, "the connection is closed after an oversized request")
with connect(sock) as c:
    try:
        c.sendall(b"z" * 100000)        # far over the limit, no newline at all
    except OSError:
        pass
    raw = read_line(c)
    check(raw is not None and "request too long" in json.loads(raw).get("error", ""),
          "100 kB without a newline gets an error reply")

# pipelined requests are answered in order; a last line cut by shutdown is answered
with connect(sock) as c:
    c.sendall(b"version\nhelp\nrotate\nversion")
    c.shutdown(socket.SHUT_WR)
    cmds = []
    while True:
        raw = read_line(c)
        if raw is None:
            break
        cmds.append(json.loads(raw).get("command"))
    check(cmds == ["version", "help", "rotate", "version"],
          "pipelined replies in order, EOF after the last: %r" % cmds)

# a reply over 1 MiB becomes an error reply, and the server goes on
big_sock = os.path.join(work, "ringprof-big.sock")
big = Server(big_sock, "--threads", "30000")
r = ask(big_sock, "status")
check(r.get("ok") is False and "reply too large" in r.get("error", ""),
      "an oversized status becomes an error reply: %r" % {k: r[k] for k in r if k != "threads"})
check(ask(big_sock, "version").get("ok") is True, "the server goes on after it")
big.stop()

# an agent that leaves its status unbalanced gets an error reply, not bad JSON
bad_sock = os.path.join(work, "ringprof-bad.sock")
badsrv = Server(bad_sock, "--bad-status")
r = ask(bad_sock, "status")
check(r == {"protocol": 1, "ok": False, "command": "status",
            "error": "internal error: the agent wrote a malformed reply"},
      "an unbalanced status becomes an error reply: %r" % r)
badsrv.stop()

# an agent without callbacks answers "not supported"
bare_sock = os.path.join(work, "ringprof-bare.sock")
bare = Server(bare_sock, "--bare")
for cmd in ("status", "flush", "rotate", "start", "stop", "set interval=1ms"):
    r = ask(bare_sock, cmd)
    word = cmd.split()[0]
    check(r.get("ok") is False and r.get("error") == "'%s' is not supported by this agent"
          % word, "%s on a bare agent: %r" % (cmd, r))
check(ask(bare_sock, "version").get("ok") is True, "version needs no callback")
bare.stop()

# ------------------------------------------------------------- concurrency --
N = 200
results = [None] * N
barrier = threading.Barrier(N)


def client(i):
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(20)
        s.connect(sock)
        barrier.wait(timeout=20)            # all 200 connected before any asks
        results[i] = ask_on(s, b"status\n")
        s.close()
    except Exception as e:                  # noqa: BLE001
        results[i] = {"exception": repr(e)}


t0 = time.monotonic()
threads = [threading.Thread(target=client, args=(i,)) for i in range(N)]
for t in threads:
    t.start()
for t in threads:
    t.join()
good = sum(1 for r in results if r and r.get("ok") is True and r.get("command") == "status")
check(good == N, "%d of %d concurrent clients got a status reply (%r)" %
      (good, N, [r for r in results if not (r and r.get("ok"))][:3]))
print("# %d concurrent status replies in %.2f s" % (N, time.monotonic() - t0))

# a client stalled halfway through a line does not block others, and is dropped
stalled = connect(sock)
stalled.sendall(b"sta")
t_stall = time.monotonic()
t0 = time.monotonic()
for _ in range(20):
    r = ask(sock, "version")
    check(r.get("ok") is True, "other clients are served during a stall")
check(time.monotonic() - t0 < 2.0, "20 requests during a stall took %.2f s" %
      (time.monotonic() - t0))

# a client that never reads its replies: it floods requests until its own send
# buffer fills (so the server's output to it is full too)
flood = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
flood.connect(sock)
flood.setblocking(False)
sent = 0
t_flood = time.monotonic()
while True:
    try:
        sent += flood.send(b"status\n" * 512)
    except BlockingIOError:
        if time.monotonic() - t_flood > 1.0:
            break
        time.sleep(0.05)
t_flood = time.monotonic()
print("# the flooding client sent %d bytes before its buffer filled" % sent)
t0 = time.monotonic()
r = ask(sock, "status")
check(r.get("ok") is True and time.monotonic() - t0 < 1.0,
      "a status while one client does not read took %.2f s" % (time.monotonic() - t0))

# both are dropped after the stall limit (and not long after)
stalled.settimeout(STALL_S + 4)
t_closed = None
try:
    data = stalled.recv(100)
    t_closed = time.monotonic()
except socket.timeout:
    data = b"timeout"
check(data == b"" and t_closed is not None and
      STALL_S - 0.5 <= t_closed - t_stall <= STALL_S + 2.5,
      "the stalled client was dropped after %s s (data %r)" %
      (t_closed and round(t_closed - t_stall, 2), data))
check(wait_for(lambda: "did not read its reply" in log_text(), STALL_S + 60),
      "the non-reading client was dropped and logged")
check("sent an incomplete request" in log_text(), "the stalled client's drop was logged")
# draining what it was sent ends in EOF: the server closed it
flood.setblocking(True)
flood.settimeout(5)
eof = False
try:
    while True:
        chunk = flood.recv(1 << 16)
        if not chunk:
            eof = True
            break
except OSError:
    eof = True
check(eof, "the non-reading client's connection was closed")
flood.close()
stalled.close()
check(ask(sock, "version").get("ok") is True, "the server is fine after both drops")

# One idle client cannot lock the socket (docs/control.md, "Limits and timeouts").
# 64 connections that send nothing fill every slot: a fresh client is served once
# they are dropped for sending no request (STALL_S). The bound is generous for a
# busy machine; before the fix they held their slots for the 60 s idle limit.
CLIENTS_MAX = 64                 # RP_CONTROL_CLIENTS_MAX
FRESH_BOUND_S = STALL_S + 10
silent = [connect(sock, timeout=30) for _ in range(CLIENTS_MAX)]
t0 = time.monotonic()
try:
    with connect(sock, timeout=FRESH_BOUND_S) as s:
        s.sendall(b"version\n")
        raw = read_line(s, FRESH_BOUND_S)
        r = json.loads(raw) if raw else None
except OSError as e:
    r = {"exception": repr(e)}
waited = time.monotonic() - t0
print("# with %d silent connections, a fresh client waited %.2f s" % (CLIENTS_MAX, waited))
check(r and r.get("ok") is True and waited <= FRESH_BOUND_S,
      "a fresh client behind %d silent connections: %r after %.2f s" % (CLIENTS_MAX, r, waited))
check(wait_for(lambda: "sent no request" in log_text(), 60), "the silent clients' drop was logged")
for c in silent:
    c.close()
# 64 clients that were served and keep their connection (a request a minute,
# say): a fresh client takes the longest idle one's slot at once.
kept = []
for _ in range(CLIENTS_MAX):
    c = connect(sock, timeout=30)
    ask_on(c, b"version\n")
    kept.append(c)
r, waited = timed_ask("version")
print("# with %d idle served connections, a fresh client waited %.2f s" % (CLIENTS_MAX, waited))
check(r and r.get("ok") is True and waited < 3.0,
      "a fresh client behind %d idle connections: %r after %.2f s" % (CLIENTS_MAX, r, waited))
evicted = 0
readable = select.select(kept, [], [], 2.0)[0]
for c in readable:
    try:
        evicted += c.recv(10) == b""
    except OSError:
        evicted += 1
for c in kept:
    c.close()
check(evicted >= 1, "the longest idle connection was closed for it (%d closed)" % evicted)

# 64 served clients that pipeline requests and read slowly are never idle: a
# fresh client gets in once their replies in progress have gone, each closed
# after its own (what it sent since gets one "not answered" reply, then EOF).
# Before, they kept it out for as long as they went on.
piped = []
for _ in range(CLIENTS_MAX):
    c = connect(sock, timeout=30)
    ask_on(c, b"version\n")
    c.setblocking(False)
    try:
        while c.send(b"help\n" * 4096):     # as many as its socket takes
            pass
    except BlockingIOError:
        pass
    piped.append(c)
seen = {"eof": 0, "not_answered": 0}
stop_reading = threading.Event()


def read_slowly():
    open_ = list(piped)
    while open_ and not stop_reading.is_set():
        for c in list(open_):
            try:
                c.send(b"help\n" * 64)
            except OSError:
                pass
            try:
                data = c.recv(2048)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            if b'"error":"not answered: all 64 control connections are in use' in data:
                seen["not_answered"] += 1
            if not data:
                seen["eof"] += 1
                open_.remove(c)
        time.sleep(0.02)


reader = threading.Thread(target=read_slowly)
reader.start()
time.sleep(0.3)
r, waited = timed_ask("status")
print("# with %d pipelining clients, a fresh client waited %.2f s" % (CLIENTS_MAX, waited))
check(r and r.get("ok") is True and waited <= FRESH_BOUND_S and
      r.get("control", {}).get("evicted", 0) >= 2,
      "a fresh client behind %d pipelining clients: %r after %.2f s" %
      (CLIENTS_MAX, r and r.get("control", r), waited))
check(wait_for(lambda: seen["eof"] == CLIENTS_MAX, 30),
      "the pipelining clients were closed: %r" % seen)
stop_reading.set()
reader.join()
print("# the pipelining clients: %r" % seen)
for c in piped:
    c.close()

# --------------------------------------------------------- other uids refused --
def try_status_as_other(path, uid=NOBODY):
    def fn():
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(5)
        s.connect(path)
        try:
            s.sendall(b"status\n")
        except (BrokenPipeError, ConnectionResetError):
            pass        # refused and closed before we wrote: the reply is queued
        buf = b""
        while True:
            try:
                chunk = s.recv(4096)
            except ConnectionResetError:   # after the reply: our request was unread
                break
            if not chunk:
                break
            buf += chunk
        return {"reply": buf.decode()}
    return as_uid(uid, fn)


r = try_status_as_other(sock)
check(r.get("exception") == "PermissionError" and r.get("errno") == 13,
      "nobody cannot connect to the 0600 socket: %r" % r)
calls = status(sock)["calls"]
relaxed_sock = os.path.join(work, "ringprof-relaxed.sock")
relaxed = Server(relaxed_sock, "--relax-mode", "--log", LOG)
check(stat.S_IMODE(os.lstat(relaxed_sock).st_mode) == 0o666, "the relaxed socket is 0666")
r = try_status_as_other(relaxed_sock)
reply = r.get("reply", "")
lines = reply.splitlines()
check(len(lines) == 1 and json.loads(lines[0]).get("ok") is False and
      "permission denied: uid 65534" in json.loads(lines[0]).get("error", ""),
      "SO_PEERCRED refuses nobody with one error reply, then closes: %r" % r)
check(wait_for(lambda: "refused a control connection from uid 65534" in log_text(), 60),
      "the refusal is logged")
r = status(relaxed_sock)
check(r["calls"]["status"] == 1, "the refused peer reached no callback: %r" % r["calls"])
# refusals are rate-limited in the log: 20 more produce at most one more line
for _ in range(20):
    try_status_as_other(relaxed_sock)
n_logged = log_text().count("refused a control connection")
check(1 <= n_logged <= 2, "20 quick refusals logged %d lines (rate limit)" % n_logged)
relaxed.stop()

# a server run as nobody accepts root (and its own uid), refuses a third uid
own_dir = os.path.join(work, "nobody")
os.mkdir(own_dir, 0o755)
os.chown(own_dir, NOBODY, NOBODY)
nb_sock = os.path.join(own_dir, "ringprof-nb.sock")
nb = Server(nb_sock, "--relax-mode", uid=NOBODY)
check(os.lstat(nb_sock).st_uid == NOBODY, "the nobody server's socket belongs to nobody")
check(ask(nb_sock, "version").get("ok") is True, "root is accepted by a nobody server")
r = try_status_as_other(nb_sock, uid=1)
reply = json.loads(r.get("reply") or "{}")
check(reply.get("ok") is False and "uid 1 may not" in reply.get("error", ""),
      "uid 1 is refused by a nobody server: %r" % r)
nb.stop()

# ----------------------------------------------------------- path handling --
# live socket: not taken over
rc, err = start_fails(sock)
check(rc == 3 and "in use by a live process" in err and sock in err,
      "a live socket is not stolen: %d %r" % (rc, err))
check(ask(sock, "version").get("ok") is True, "the live server still answers")

# stale socket (bound, then closed without unlink): replaced
stale = os.path.join(work, "ringprof-stale.sock")
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(stale)
s.close()
check(os.path.exists(stale), "a stale socket file exists")
st_srv = Server(stale)
check(ask(stale, "version").get("ok") is True, "a stale socket file is replaced")
st_srv.stop()
check(not os.path.exists(stale), "stop removes the socket file")

# not a socket: left alone
plain = os.path.join(work, "ringprof-plain.sock")
with open(plain, "w") as f:
    f.write("keep me")
rc, err = start_fails(plain)
check(rc == 3 and "exists and is not a socket" in err, "a regular file is refused: %r" % err)
with open(plain) as f:
    check(f.read() == "keep me", "the regular file is untouched")

# too long for sun_path
longp = os.path.join(work, "d" * 60, "e" * 60 + ".sock")
rc, err = start_fails(longp)
check(rc == 3 and "control socket path is too long" in err and "at most 107" in err,
      "a path over 107 bytes is refused clearly: %r" % err)
p107 = os.path.join(work, "f" * (107 - len(work) - 1))
check(len(p107) == 107, "test path length")
p107srv = Server(p107)
check(ask(p107, "version").get("ok") is True, "a path of exactly 107 bytes works")
p107srv.stop()

# ---------------------------------------------------------- ringprof ctl ----
def rp(*args, timeout=30):
    p = subprocess.run([RINGPROF] + list(args), capture_output=True, text=True,
                       timeout=timeout)
    check(not sanitizer_report(p.stderr), "ringprof %s: sanitizer report:\n%s" %
          (" ".join(args), p.stderr))
    return p.returncode, p.stdout, p.stderr


disc = "/tmp/ringprof-%d/%d.json" % (os.geteuid(), srv.pid)
check(os.path.exists(disc), "the server wrote its discovery file %s" % disc)
if os.path.exists(disc):
    with open(disc) as f:
        d = json.load(f)
    check(d.get("pid") == srv.pid and d.get("socket") == sock and
          d.get("main") == "org.example.FakeMain --port 8080" and d.get("protocol") == 1
          and d.get("start_time", "").endswith("Z") and d.get("proc_start_ticks", 0) > 0,
          "discovery file contents: %r" % d)
    check(stat.S_IMODE(os.stat(disc).st_mode) == 0o600 and
          stat.S_IMODE(os.stat(os.path.dirname(disc)).st_mode) == 0o700,
          "discovery file 0600 in a 0700 directory")

rc, out, err = rp("ctl", sock, "version")
check(rc == 0 and json.loads(out).get("pid") == srv.pid and out.count("\n") > 2,
      "ringprof ctl SOCKET version (pretty): %d %r %r" % (rc, out, err))
rc, out, err = rp("ctl", "--raw", str(srv.pid), "status")
check(rc == 0 and out.count("\n") == 1 and json.loads(out).get("state") == "running",
      "ringprof ctl --raw PID status: one JSON line: %d %r" % (rc, err))
rc, out, err = rp("ctl", str(srv.pid), "status", "--raw")
check(rc == 0 and out.count("\n") == 1 and json.loads(out).get("state") == "running",
      "ringprof ctl PID status --raw: the option after the command is the tool's: %d %r"
      % (rc, err))
rc, out, err = rp("ctl", str(srv.pid), "status", "--rwa")
check(rc == 2 and "unknown option '--rwa'" in err and out == "",
      "ringprof ctl PID status --rwa: refused by the tool, exit 2: %d %r" % (rc, err))
rc, out, err = rp("ctl", str(srv.pid), "status")
pretty = json.loads(out) if rc == 0 else {}
check(rc == 0 and pretty.get("threads", [{}])[0].get("name") == 'worker "0" \\ \ufffd' and
      '  "samples": {' in out and '"sampling": ["cpu", "alloc", "lock", "wall"]' in out,
      "pretty status keeps every value: %r" % out[:300])
rc, out, err = rp("ctl", str(srv.pid), "stop", "alloc")
check(rc == 0 and json.loads(out).get("kinds") == ["alloc"], "ctl PID stop alloc")
rc, out, err = rp("ctl", str(srv.pid), "set", "interval=fast")
check(rc == 1 and json.loads(out).get("ok") is False and "bad value 'fast'" in err,
      "an error reply exits 1 and says why: %d %r" % (rc, err))
rc, out, err = rp("ctl", str(srv.pid), "flush")
check(rc == 0 and json.loads(out).get("path", "").startswith("/fake/rec/"),
      "ctl PID flush prints the path")

sleeper = subprocess.Popen(["sleep", "60"])
rc, out, err = rp("ctl", str(sleeper.pid), "status")
check(rc == 1 and ("no ringprof agent in pid %d" % sleeper.pid) in err and out == "",
      "a process without the agent: %d %r" % (rc, err))
# A pid that no process can have: beyond pid_max. A pid that merely exited is
# soon reused on a machine running JVMs beside this test (their threads take pids
# too), and a discovery file written for it below would clobber, then prune, the
# real one of whichever JVM got it.
with open("/proc/sys/kernel/pid_max") as f:
    dead_pid = int(f.read()) + 7
rc, out, err = rp("ctl", str(dead_pid), "status")
check(rc == 1 and ("no process with pid %d" % dead_pid) in err, "a dead pid: %r" % err)
rc, out, err = rp("ctl", os.path.join(work, "nothing.sock"), "status")
check(rc == 1 and "no socket at" in err, "a missing socket path: %r" % err)
rc, out, err = rp("ctl", str(srv.pid))
check(rc == 2 and "no command given" in err, "no command: usage error %d" % rc)

# a discovery file whose socket is gone, for a live process
ticks = open("/proc/%d/stat" % sleeper.pid).read().rsplit(")", 1)[1].split()[19]
fake_disc = "/tmp/ringprof-%d/%d.json" % (os.geteuid(), sleeper.pid)
gone = os.path.join(work, "ringprof-gone.sock")
with open(fake_disc, "w") as f:
    json.dump({"pid": sleeper.pid, "uid": os.geteuid(), "socket": gone,
               "main": "Gone", "start_time": "2026-01-01T00:00:00Z",
               "proc_start_ticks": int(ticks), "protocol": 1}, f)
rc, out, err = rp("ctl", str(sleeper.pid), "status")
check(rc == 1 and ("no ringprof agent in pid %d (no socket at %s)" % (sleeper.pid, gone))
      in err, "discovery file without its socket: %r" % err)

# without the discovery file (a /tmp cleaner took it): found through /proc
os.rename(disc, disc + ".away")
rc, out, err = rp("ctl", str(srv.pid), "version")
check(rc == 0 and json.loads(out).get("pid") == srv.pid,
      "ctl PID finds the socket without a discovery file: %d %r" % (rc, err))
os.rename(disc + ".away", disc)

# ---------------------------------------------------------- ringprof list ---
# a file for a dead pid is pruned; the live one without a socket is unreachable
dead_disc = "/tmp/ringprof-%d/%d.json" % (os.geteuid(), dead_pid)
with open(dead_disc, "w") as f:
    json.dump({"pid": dead_pid, "uid": os.geteuid(), "socket": gone, "main": "Dead",
               "protocol": 1}, f)
rc, out, err = rp("list", "--json")
rows = {r["pid"]: r for r in json.loads(out)} if rc == 0 else {}
check(rc == 0 and rows.get(srv.pid, {}).get("state") == "running" and
      rows[srv.pid].get("socket") == sock and
      rows[srv.pid].get("main") == "org.example.FakeMain --port 8080",
      "list --json shows the server running: %r" % rows.get(srv.pid))
check(rows.get(sleeper.pid, {}).get("state") == "unreachable" and
      "no socket at" in rows.get(sleeper.pid, {}).get("error", ""),
      "list marks an agent without a socket unreachable: %r" % rows.get(sleeper.pid))
check(dead_pid not in rows and not os.path.exists(dead_disc) and
      "removed" in err, "list prunes a dead pid's discovery file: %r" % err)
rc, out, err = rp("list")
line = [ln for ln in out.splitlines() if ln.startswith(str(srv.pid) + " ")]
check(rc == 0 and out.startswith("PID") and len(line) == 1 and " running " in line[0] and
      sock in line[0], "list table: %r" % out)
os.unlink(fake_disc)
sleeper.kill()
sleeper.wait()

# a pid reused by another process: the discovery file's start time gives it away
with open(fake_disc, "w") as f:
    json.dump({"pid": os.getpid(), "uid": os.geteuid(), "socket": gone,
               "proc_start_ticks": 1}, f)
os.rename(fake_disc, "/tmp/ringprof-%d/%d.json" % (os.geteuid(), os.getpid()))
rc, out, err = rp("list", "--json")
check(os.getpid() not in {r["pid"] for r in json.loads(out)} and
      not os.path.exists("/tmp/ringprof-%d/%d.json" % (os.geteuid(), os.getpid())),
      "a discovery file from an earlier process with a reused pid is pruned")

# ------------------------------------------------------------------ stop ----
rc, out = srv.stop()
check(rc == 0 and "stopped" in out, "the server stops on SIGTERM: %d" % rc)
check(not os.path.exists(sock), "the socket file is removed at stop")
check(not os.path.exists(disc), "the discovery file is removed at stop")

for s_ in servers:
    if s_.p.poll() is None:
        s_.stop()
if failures == 0:
    subprocess.run(["rm", "-rf", work])
else:
    print("scratch kept: " + work)
print("ctl_server: %d checks, %d failed" % (checks, failures))
sys.exit(1 if failures else 0)
