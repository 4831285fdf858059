"""tests/convert/consumers.py -- what test_pprof.py and test_html.py share.

The truth: rp_testwriter's manifest lists every sample and every stack it wrote,
so the expected figures of a profile are computed here from the manifest, never
from the converter. The checks: a counter of passed and failed checks that ends
with the one summary line tests/run counts ("N passed, N failed"), and exit 77
(meson's "skipped") when a consumer is not installed.
"""
import atexit
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile

# Frame types of the chunk format (include/ringprof/format.h).
JAVA_TYPES = (0, 1, 2)   # interpreted, JIT, inlined: displayed as class.method


class Checks:
    def __init__(self, name):
        self.name = name
        self.passed = 0
        self.failed = 0

    def check(self, cond, what, detail=""):
        if cond:
            self.passed += 1
        else:
            self.failed += 1
            print("FAIL: %s%s" % (what, (": " + str(detail)) if detail else ""))
        return cond

    def close(self):
        print("%s: %d passed, %d failed" % (self.name, self.passed, self.failed))
        sys.exit(1 if self.failed else 0)


def skip_unless(program, package):
    path = shutil.which(program)
    if not path:
        print("SKIP: %s not found (tools/install-deps --test installs %s)"
              % (program, package))
        sys.exit(77)
    return path


def tempdir():
    """A temporary directory, removed when the test exits (unless RP_KEEP_TMP)."""
    d = tempfile.mkdtemp(prefix="rp-consumer-")
    if not os.environ.get("RP_KEEP_TMP"):
        atexit.register(shutil.rmtree, d, True)
    return d


def go_env(tmp):
    """The environment for `go tool pprof`: offline, its HOME and temporary files
    in `tmp`, but the build cache Go would use anyway (GOCACHE, else
    ~/.cache/go-build), which is safe to share: a fresh one makes every run
    build pprof again, some 20 s of CPU each."""
    cache = os.environ.get("GOCACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "go-build")
    return dict(os.environ, HOME=tmp, PPROF_TMPDIR=tmp, GOTOOLCHAIN="local", GOPROXY="off",
                GOFLAGS="", GOPATH=os.path.join(tmp, "go"), GOCACHE=cache)


def run(cmd, env=None, check=True, timeout=300, binary=False):
    """Run cmd; its stdout (text, or bytes if binary). A failure raises with
    its output, which ends the test as failed."""
    r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=timeout)
    out = r.stdout if binary else r.stdout.decode("utf-8", "replace")
    if check and r.returncode != 0:
        raise RuntimeError("%s exited %d:\n%s%s" % (" ".join(cmd), r.returncode, out,
                                                    r.stderr.decode("utf-8", "replace")))
    return out


def load_manifest(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def display(frame):
    """A frame's method as the converter names it (tools/model/profile.h)."""
    if frame["type"] in JAVA_TYPES and frame["class"]:
        return frame["class"] + "." + frame["name"]
    return frame["name"]


def sample_frames(manifest, s):
    """The frames of sample s, root first, as the profile holds them."""
    st = manifest["stacks"][s["stack"]]
    frames = [display(f) for f in st["frames"]] or ["[no stack]"]
    if st["truncated"]:
        frames.insert(0, "[truncated]")
    if s["kind"] == "alloc" and s["class"]:
        frames.append(s["class"])
    return frames


class Truth:
    """Per-function flat and cumulative figures of one kind over manifests."""

    def __init__(self, manifests, kind, value="weight"):
        self.flat = collections.Counter()
        self.cum = collections.Counter()
        self.thread = collections.Counter()
        self.recording = collections.Counter()
        self.total = 0
        self.samples = []           # (frames, value) per sample
        for m in manifests:
            for s in m["samples"]:
                if s["kind"] != kind:
                    continue
                v = s[value]
                frames = sample_frames(m, s)
                self.samples.append((frames, v))
                self.flat[frames[-1]] += v
                for fn in set(frames):
                    self.cum[fn] += v
                self.thread[s["thread"]] += v
                self.recording[m["recording"]] += v
                self.total += v

    def share_matching(self, pred):
        """The share (percent) of the total held by samples with any frame
        matching pred: what a flame graph search reports."""
        hit = sum(v for frames, v in self.samples if any(pred(f) for f in frames))
        return 100.0 * hit / self.total if self.total else 0.0


# ------------------------------------------------------- protobuf -- #
# A decoder for what the pprof tests read without go tool pprof: the fields of
# one message as (field number, value) pairs, values as int or bytes.

def pb_fields(buf):
    i = 0
    while i < len(buf):
        key, i = varint(buf, i)
        f, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(buf, i)
        elif wt == 2:
            n, i = varint(buf, i)
            v, i = buf[i:i + n], i + n
        elif wt == 1:
            v, i = buf[i:i + 8], i + 8
        elif wt == 5:
            v, i = buf[i:i + 4], i + 4
        else:
            raise ValueError("wire type %d" % wt)
        yield f, v


def varint(buf, i):
    v = s = 0
    while True:
        b = buf[i]
        i += 1
        v |= (b & 0x7f) << s
        s += 7
        if b < 0x80:
            return v, i


def packed(v):
    if isinstance(v, int):
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = varint(v, i)
        out.append(x)
    return out
