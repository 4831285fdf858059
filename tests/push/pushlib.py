"""tests/push/pushlib.py -- what the `ringprof push` tests share.

A backend of the test's own (Backend: an HTTP server on 127.0.0.1 that records
every request and answers as the test scripts it), the decoders for what push
sends (multipart forms, gzipped pprof), and the truth: `ringprof convert
--format collapsed` of the same chunks, as stacks of method names.

The server checks ringprof's side of the wire (what push sends, how it takes
each answer), not a backend's: the real OpenTelemetry Collector is
tests/agent's agent_push_otlp, and Pyroscope is checked by hand (docs/fleet.md).

Waiting is for events (a number of requests, a process's exit), bounded only
by RP_WAIT_SECONDS (default 120 s) to catch a hang, never by a guess of how
long something takes.
"""
import collections
import email.parser
import email.policy
import gzip
import http.server
import os
import re
import socket
import ssl
import subprocess
import threading
import time
import urllib.parse

from consumers import packed, pb_fields

WAIT = float(os.environ.get("RP_WAIT_SECONDS", "120"))


class Request:
    def __init__(self, handler, body):
        url = urllib.parse.urlsplit(handler.path)
        self.path = url.path
        self.query = dict(urllib.parse.parse_qsl(url.query, keep_blank_values=True))
        self.headers = handler.headers
        self.body = body
        self.time = time.monotonic()
        self.status = None          # what the backend answered


class Backend:
    """An HTTP server in a thread. answer(index, request) -> (status, headers,
    body) decides each answer (default 200, empty)."""

    def __init__(self, answer=None):
        self.requests = []
        self.answer = answer or (lambda i, r: (200, {}, b""))
        self.cond = threading.Condition()
        backend = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                n = int(self.headers.get("Content-Length", "0"))
                req = Request(self, self.rfile.read(n))
                with backend.cond:
                    index = len(backend.requests)
                    status, headers, body = backend.answer(index, req)
                    req.status = status
                    backend.requests.append(req)
                    backend.cond.notify_all()
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    self.wfile.write(body)
                except OSError:
                    pass                  # push gave up on this request: its choice

            def handle(self):
                try:
                    super().handle()
                except OSError:
                    pass                  # a push killed by the test mid-request

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def tls(self, cert, key):
        """Serve https with this certificate (call before the first request)."""
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert, key)
        self.server.socket = ctx.wrap_socket(self.server.socket, server_side=True)
        self.scheme = "https"

    def url(self, path=""):
        return "%s://127.0.0.1:%d%s" % (getattr(self, "scheme", "http"), self.port, path)

    def wait(self, pred, proc=None):
        """Wait until pred(requests) holds (or proc ended). @return whether it
        holds."""
        deadline = time.monotonic() + WAIT
        with self.cond:
            while not pred(self.requests):
                if proc is not None and proc.poll() is not None:
                    return pred(self.requests)
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.cond.wait(min(left, 0.2))
            return True

    def ok(self):
        return [r for r in self.requests if 200 <= r.status < 300]

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class Silent:
    """A server that accepts connections and never answers."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.conns = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(c)

    def close(self):
        for c in self.conns:
            c.close()
        self.sock.close()


def closed_port():
    """A port on 127.0.0.1 where nothing listens."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


# ------------------------------------------------------------ decoding -- #

def form(req):
    """A multipart/form-data body: {field: (filename, bytes)}."""
    ct = req.headers.get("Content-Type", "")
    msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        b"Content-Type: " + ct.encode() + b"\r\n\r\n" + req.body)
    out = {}
    for part in msg.iter_parts():
        name = part.get_param("name", header="content-disposition")
        out[name] = (part.get_filename(), part.get_payload(decode=True))
    return out


def pprof(data):
    """A pprof profile (gzipped or not): its sample types, and per sample the
    function names root first, its values and its string labels."""
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    strings, types, samples, locs, funcs = [], [], [], {}, {}
    for f, v in pb_fields(data):
        if f == 6:
            strings.append(v.decode("utf-8"))
        elif f == 1:
            d = dict(pb_fields(v))
            types.append((d.get(1, 0), d.get(2, 0)))
        elif f == 2:
            s = {"loc": [], "val": [], "lab": []}
            for g, x in pb_fields(v):
                if g == 1:
                    s["loc"] += packed(x)
                elif g == 2:
                    s["val"] += packed(x)
                elif g == 3:
                    s["lab"].append(dict(pb_fields(x)))
            samples.append(s)
        elif f == 4:
            d = list(pb_fields(v))
            lid = [x for g, x in d if g == 1][0]
            line = [dict(pb_fields(x)) for g, x in d if g == 4][0]
            locs[lid] = line.get(1, 0)
        elif f == 5:
            d = dict(pb_fields(v))
            funcs[d[1]] = d.get(2, 0)
    out = []
    for s in samples:
        names = [strings[funcs[locs[lid]]] for lid in s["loc"]][::-1]
        labels = {strings[lab[1]]: strings[lab[2]] for lab in s["lab"] if 2 in lab}
        out.append((names, s["val"], labels))
    return [(strings[t], strings[u]) for t, u in types], out


def pprof_stacks(data, value_index=-1):
    """{"a;b;c": summed value} of a pprof profile (the weight: its last type)."""
    types, samples = pprof(data)
    acc = collections.Counter()
    for names, vals, _ in samples:
        acc[";".join(names)] += vals[value_index]
    return types, dict(acc)


SUFFIX = re.compile(r"_\[[jik0]\]$")


def collapsed(text):
    """`convert --format collapsed` output as {"a;b;c": weight}, frame-type
    suffixes dropped (pprof names functions, not frame types) and equal stacks
    merged."""
    acc = collections.Counter()
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        stack, w = line.rsplit(" ", 1)
        acc[";".join(SUFFIX.sub("", f) for f in stack.split(";"))] += int(w)
    return dict(acc)


def run(cmd, env=None, timeout=None):
    """Run cmd: (exit status, stdout, stderr) as text."""
    r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=timeout or WAIT)
    return r.returncode, r.stdout.decode("utf-8", "replace"), r.stderr.decode(
        "utf-8", "replace")
