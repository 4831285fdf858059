#!/usr/bin/env python3
"""tests/convert/cdp.py -- headless Chromium driven over the DevTools protocol.

For tests and benches that need what a user does (a real mousedown, drag, key,
screenshot) rather than a page's own self-test hook. Standard library only.

    with Browser(chromium_path, width=1400, height=900) as b:
        page = b.new_page()
        page.navigate("file:///tmp/x.html#sel=1-2", wait_for="window.ready === true")
        page.mouse_drag((100, 200), (300, 200), steps=10, modifiers=SHIFT)
        value = page.evaluate("window.state()")      # by value; awaits promises
        width, height, rows = decode_png(page.screenshot())
        assert not page.errors                       # exceptions, console errors

The browser runs with `--remote-debugging-pipe`: it reads commands on its fd 3
and writes replies and events on its fd 4, each message JSON ended by a NUL
byte. One Browser is one process in its own session (process group), with a
fresh profile directory; leaving the `with` block (or close()) asks it to close,
kills what is left of its process group, and removes the profile. If the test
process dies instead, the browser sees its pipe close and exits by itself.

Every wait has a deadline (`timeout`, seconds; the Browser's default for each
call): a browser that hangs, crashes or exits raises CDPError (CDPTimeout for a
deadline) naming the call, with the page's errors so far and the last lines of
the browser's stderr, never a hung test. A page is one target attached in
flatten mode (its own sessionId); its viewport is exactly width x height CSS
pixels at scale 1, so screenshot pixels are CSS pixels. `page.errors` collects,
as text, every uncaught exception (Runtime.exceptionThrown), console.error,
console.warn and console.assert, every error or warning of the Log domain
(network failures, interventions) and every dialog, which is dismissed so that
an alert() cannot block the page.

decode_png() reads what Page.captureScreenshot writes (8-bit RGB or RGBA, not
interlaced; filters 0-4) into rows of RGB bytes; pixel() and count_pixels() read
them.

Self-test (meson test `cdp`, a few seconds): `cdp.py --self-test [CHROMIUM]`
opens a page of its own with a canvas, drags across it with shift held, and
checks the page saw the drag where the driver put it, that the page's thrown
error, console error and an evaluate's exception are reported, that the
screenshot has the window's size, a square's exact colour and the drag's line,
that a reload keeps the fragment the page set, that a page in an endless loop
fails a call at its deadline, and that close leaves no process and no profile.
Exit 77 (skipped), with one line, when Chromium is not installed.
"""
import base64
import errno
import fcntl
import json
import os
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import zlib

SHIFT, CTRL, ALT, META = 8, 2, 1, 4   # Input.dispatch*Event modifiers

# An expression: a promise of performance.now() two frames on (the frame that
# paints what was drawn when it was evaluated has begun by then).
DOUBLE_FRAME = ("new Promise(r => requestAnimationFrame(() => "
                "requestAnimationFrame(() => r(performance.now()))))")

# The flags the project runs Chromium with: no sandbox (containers), no GPU, no
# network of its own, nothing from a profile, and no throttling of pages that
# are not in front (a bench opens several); sRGB so a colour reads back exact.
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-extensions",
         "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
         "--disable-backgrounding-occluded-windows", "--force-color-profile=srgb"]


def chromium_args(chromium, profile, width, height):
    """The command line of a headless Chromium with a fresh profile directory."""
    return [chromium] + FLAGS + ["--user-data-dir=" + profile,
                                 "--window-size=%d,%d" % (width, height)]


class CDPError(Exception):
    """A call the browser refused or could not answer; the text says why."""


class CDPTimeout(CDPError):
    """A deadline passed: the browser or the page did not answer in time."""


class JSError(CDPError):
    """An expression given to evaluate() threw; the text is the exception's."""


def _js_error_text(details):
    """The exception's own text (its stack when it has one), else the message."""
    exc = details.get("exception") or {}
    if exc.get("description"):   # an Error's, with its stack
        return exc["description"]
    text = str(exc.get("value", "")) or details.get("text", "")
    if details.get("url"):
        text += " (%s:%d:%d)" % (details["url"], details.get("lineNumber", 0) + 1,
                                 details.get("columnNumber", 0) + 1)
    return text


def _remote_text(obj):
    """A console argument (a Runtime.RemoteObject) as the console shows it."""
    if "value" in obj:
        return obj["value"] if isinstance(obj["value"], str) else json.dumps(obj["value"])
    return obj.get("description") or obj.get("unserializableValue") or obj.get("type", "")


def _value(obj):
    """A Runtime.RemoteObject returned by value, as Python (undefined: None)."""
    if "unserializableValue" in obj:
        u = obj["unserializableValue"]
        return int(u[:-1]) if u.endswith("n") else float(u)
    return obj.get("value")


class Browser:
    """One headless Chromium on a pipe. `timeout` is each call's default deadline
    (seconds); `args` are more command-line flags."""

    def __init__(self, chromium, width=1400, height=900, timeout=30, args=()):
        self.width, self.height, self.timeout = width, height, timeout
        self.root = tempfile.mkdtemp(prefix="rp-cdp-")
        self.stderr_path = os.path.join(self.root, "stderr")
        self.stderr_text = ""
        self.proc = None
        self._next_id = 0
        self._replies = {}
        self._unwanted = set()
        self._closed = False
        self._pages = {}
        self._buf = bytearray()
        self._eof = False
        try:
            self._start(chromium_args(chromium, os.path.join(self.root, "profile"),
                                      width, height) + ["--remote-debugging-pipe"] + list(args))
            self.version = self.call("Browser.getVersion")["product"]
        except BaseException:
            self.close()
            raise

    def _start(self, cmd):
        """Start the browser with its fd 3 and fd 4 on two pipes of ours."""
        to_r, self._to = os.pipe()
        self._from, from_w = os.pipe()

        def onto_3_and_4():   # in the child, before exec: F_DUPFD first so that
            a = fcntl.fcntl(to_r, fcntl.F_DUPFD, 10)   # neither lands on the other
            b = fcntl.fcntl(from_w, fcntl.F_DUPFD, 10)
            os.dup2(a, 3)
            os.dup2(b, 4)

        with open(self.stderr_path, "wb") as err:
            try:
                self.proc = subprocess.Popen(
                    cmd + ["about:blank"], stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL, stderr=err, pass_fds=(3, 4),
                    preexec_fn=onto_3_and_4, start_new_session=True,
                    env=dict(os.environ, HOME=self.root))
            finally:
                os.close(to_r)
                os.close(from_w)
        os.set_blocking(self._to, False)

    # ---------------------------------------------------------------- wire --
    def post(self, method, params=None, session=None, timeout=None, keep=True):
        """Send a command; its id. Its reply is kept for call() unless not `keep`."""
        self._next_id += 1
        msg = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        data = json.dumps(msg).encode() + b"\0"
        start = time.monotonic()
        deadline = start + (self.timeout if timeout is None else timeout)
        while data:
            self._check_alive(method)
            left = deadline - time.monotonic()
            if left <= 0:
                raise CDPTimeout(self._explain("the browser took no command (%s) for %g s"
                                               % (method, deadline - start)))
            if select.select([], [self._to], [], left)[1]:
                try:
                    data = data[os.write(self._to, data):]
                except BlockingIOError:
                    pass
                except BrokenPipeError:
                    self._eof = True
        if not keep:
            self._unwanted.add(self._next_id)
        return self._next_id

    def call(self, method, params=None, session=None, timeout=None):
        """Send a command and return its result; CDPError if it fails."""
        timeout = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + timeout
        n = self.post(method, params, session, timeout)
        while n not in self._replies:
            self._check_alive(method, session)
            if not self.pump(deadline) and time.monotonic() >= deadline:
                self._check_alive(method, session)
                raise CDPTimeout(self._explain("%s: no answer in %g s" % (method, timeout),
                                               session))
        reply = self._replies.pop(n)
        if "error" in reply:
            err = reply["error"]
            raise CDPError(self._explain("%s: %s%s" % (method, err.get("message"),
                                         " (%s)" % err["data"] if err.get("data") else ""),
                                         session))
        return reply.get("result", {})

    def pump(self, deadline):
        """Read and dispatch what has come, waiting until `deadline` (a
        time.monotonic() value) for something; False if nothing came by then."""
        left = deadline - time.monotonic()
        if self._eof or left <= 0 or not select.select([self._from], [], [], left)[0]:
            return False
        data = os.read(self._from, 1 << 20)
        if not data:
            self._eof = True
            return False
        start = len(self._buf)
        self._buf += data
        while True:
            end = self._buf.find(b"\0", start)
            if end < 0:
                return True
            self._dispatch(json.loads(self._buf[:end].decode("utf-8", "replace")))
            del self._buf[:end + 1]
            start = 0

    def _dispatch(self, msg):
        if "id" in msg:
            if msg["id"] in self._unwanted:
                self._unwanted.discard(msg["id"])
            else:
                self._replies[msg["id"]] = msg
            return
        page = self._pages.get(msg.get("sessionId"))
        if page is not None:
            page._event(msg["method"], msg.get("params", {}))
        elif msg.get("method") == "Target.detachedFromTarget":
            page = self._pages.get(msg["params"].get("sessionId"))
            if page is not None:
                page.gone = page.gone or "detached from its target"

    def _check_alive(self, method, session=None):
        page = self._pages.get(session)
        if page is not None and page.gone:
            raise CDPError(self._explain("%s: the page %s" % (method, page.gone), session))
        if self._eof or self.proc.poll() is not None:
            self._eof = True
            code = self.proc.poll()
            raise CDPError(self._explain("%s: the browser %s" % (
                method, "exited with status %s" % code if code is not None
                else "closed its pipe"), session))

    def _explain(self, what, session=None):
        """`what`, then the page's errors and the browser's last stderr lines."""
        page = self._pages.get(session)
        text = what
        if page is not None and page.errors:
            text += "\n  page errors so far:\n    " + "\n    ".join(page.errors[-10:])
        tail = [ln for ln in self._read_stderr().splitlines() if "dbus" not in ln][-15:]
        if tail:
            text += "\n  browser stderr (last lines):\n    " + "\n    ".join(tail)
        return text

    def _read_stderr(self):
        try:
            with open(self.stderr_path, "rb") as f:
                self.stderr_text = f.read().decode("utf-8", "replace")
        except OSError:
            pass
        return self.stderr_text

    # --------------------------------------------------------------- pages --
    def new_page(self, url="about:blank"):
        """A new page at width x height, its events collected (Page). Each is
        in a window of its own, so every page is visible and draws frames
        (a second tab in one window would hide the first: no
        requestAnimationFrame there)."""
        target = self.call("Target.createTarget", {"url": url, "newWindow": True})["targetId"]
        session = self.call("Target.attachToTarget",
                            {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, target, session)
        self._pages[session] = page
        page._enable()
        return page

    # ---------------------------------------------------------------- exit --
    def close(self):
        """Close the browser (Browser.close, then SIGKILL to what is left of its
        process group) and remove its profile; the stderr stays in stderr_text.
        Only the first call does anything."""
        if self._closed:
            return
        self._closed = True
        if self.proc is not None and self.proc.poll() is None and not self._eof:
            try:
                self.call("Browser.close", timeout=3)
            except CDPError:
                pass
        if self.proc is not None:
            self._end_process_group()
        for fd in ("_to", "_from"):
            if getattr(self, fd, None) is not None:
                os.close(getattr(self, fd))
                setattr(self, fd, None)
        self._read_stderr()
        shutil.rmtree(self.root, ignore_errors=True)

    def _end_process_group(self):
        """Wait up to 2 s for the browser to exit, then kill its process group
        while the browser is not yet reaped (so its group id is not free for
        another process to take) and reap it."""
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline:
            try:
                if os.waitid(os.P_PID, self.proc.pid,
                             os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                    break
            except ChildProcessError:
                break
            time.sleep(0.02)
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except OSError as e:
            if e.errno not in (errno.ESRCH, errno.EPERM):
                raise
        self.proc.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# Input.dispatchKeyEvent's fields for the named keys key() takes.
KEYS = {"Enter": ("Enter", 13, "\r"), "Escape": ("Escape", 27, ""), "Tab": ("Tab", 9, ""),
        "Backspace": ("Backspace", 8, ""), "Delete": ("Delete", 46, ""),
        "ArrowLeft": ("ArrowLeft", 37, ""), "ArrowUp": ("ArrowUp", 38, ""),
        "ArrowRight": ("ArrowRight", 39, ""), "ArrowDown": ("ArrowDown", 40, ""),
        "Home": ("Home", 36, ""), "End": ("End", 35, ""), "PageUp": ("PageUp", 33, ""),
        "PageDown": ("PageDown", 34, "")}


class Page:
    """One tab. Calls take `timeout` in seconds (default: the browser's)."""

    def __init__(self, browser, target, session):
        self.browser, self.target, self.session = browser, target, session
        self.events = []     # (method, params) of every event, in order
        self.errors = []     # text of every exception, console error/warning, dialog
        self.console = []    # (type, text) of every console message
        self.gone = None     # why the page can take no more calls, once it cannot
        self._mouse = (0, 0)

    def call(self, method, params=None, timeout=None):
        return self.browser.call(method, params, self.session, timeout)

    def _enable(self):
        for method in ("Page.enable", "Runtime.enable", "Log.enable", "Inspector.enable"):
            self.call(method)
        self.call("Page.setLifecycleEventsEnabled", {"enabled": True})
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": self.browser.width, "height": self.browser.height,
                   "deviceScaleFactor": 1, "mobile": False})

    def _event(self, method, params):
        self.events.append((method, params))
        if method == "Runtime.exceptionThrown":
            self.errors.append("uncaught: " + _js_error_text(params["exceptionDetails"]))
        elif method == "Runtime.consoleAPICalled":
            text = " ".join(_remote_text(a) for a in params.get("args", []))
            self.console.append((params["type"], text))
            if params["type"] in ("error", "warning", "assert"):
                self.errors.append("console.%s: %s" % (params["type"], text))
        elif method == "Log.entryAdded":
            e = params["entry"]
            if e.get("level") in ("error", "warning"):
                self.errors.append("log %s (%s): %s%s" % (
                    e["level"], e.get("source"), e.get("text"),
                    " " + e["url"] if e.get("url") else ""))
        elif method == "Page.javascriptDialogOpening":
            self.errors.append("%s dialog: %s" % (params.get("type"), params.get("message")))
            self.browser.post("Page.handleJavaScriptDialog", {"accept": False}, self.session,
                              keep=False)
        elif method == "Inspector.targetCrashed":
            self.gone = "crashed"
        elif method == "Inspector.detached":
            self.gone = "was detached (%s)" % params.get("reason")

    def _deadline(self, timeout):
        return time.monotonic() + (self.browser.timeout if timeout is None else timeout)

    def _left(self, deadline):
        return max(0.001, deadline - time.monotonic())

    def wait_event(self, pred, since, deadline, what):
        """The first event from index `since` on for which pred(method, params)
        holds, reading more until `deadline`; CDPTimeout naming `what`."""
        i = since
        while True:
            while i < len(self.events):
                if pred(*self.events[i]):
                    return self.events[i][1]
                i += 1
            self.browser._check_alive(what, self.session)
            if not self.browser.pump(deadline) and time.monotonic() >= deadline:
                raise CDPTimeout(self.browser._explain("%s: not seen in time" % what,
                                                       self.session))

    # ---------------------------------------------------------- navigation --
    def navigate(self, url, wait_for=None, timeout=None):
        """Load url and wait for its load event (a new document), then until the
        expression `wait_for` is true. A url differing only in its fragment is
        a same-document navigation: no load, only the wait."""
        deadline = self._deadline(timeout)
        since = len(self.events)
        r = self.call("Page.navigate", {"url": url}, self._left(deadline))
        if r.get("errorText"):
            raise CDPError("navigate %s: %s" % (url, r["errorText"]))
        if r.get("loaderId"):
            self._wait_load(r["loaderId"], since, deadline, "load of " + url)
        if wait_for:
            self.wait_for(wait_for, timeout=self._left(deadline))

    def reload(self, wait_for=None, timeout=None):
        """Reload the page (at its current URL, fragment included), as navigate."""
        deadline = self._deadline(timeout)
        since = len(self.events)
        self.call("Page.reload", {}, self._left(deadline))
        nav = self.wait_event(lambda m, p: m == "Page.frameNavigated" and
                              p["frame"]["id"] == self.target and
                              not p["frame"].get("parentId"), since, deadline, "reload")
        self._wait_load(nav["frame"]["loaderId"], since, deadline, "load after reload")
        if wait_for:
            self.wait_for(wait_for, timeout=self._left(deadline))

    def _wait_load(self, loader, since, deadline, what):
        self.wait_event(lambda m, p: m == "Page.lifecycleEvent" and p["name"] == "load"
                        and p["loaderId"] == loader, since, deadline, what)

    def wait_for(self, expr, timeout=None, every=0.01):
        """Evaluate expr every `every` s until it is truthy; CDPTimeout (with the
        page's errors and what the expression last threw) when it never is."""
        deadline = self._deadline(timeout)
        last = None
        while True:
            try:
                if self.evaluate("!!(%s)" % expr, timeout=self._left(deadline)):
                    return
            except JSError as e:
                last = "it last threw: " + str(e)
            except CDPTimeout:
                last = "the page did not answer the last check"
            except CDPError as e:   # a document going away under the call
                if self.gone or not any(w in str(e) for w in ("context", "navigated")):
                    raise
            if time.monotonic() >= deadline:
                raise CDPTimeout(self.browser._explain("waited %g s for %s%s" % (
                    self.browser.timeout if timeout is None else timeout, expr,
                    "; " + last if last else ""), self.session))
            self.browser.pump(min(deadline, time.monotonic() + every))

    def evaluate(self, expr, timeout=None, await_promise=True):
        """expr's value (JSON-able, by value; a promise awaited); JSError with
        the exception's text when it throws."""
        r = self.call("Runtime.evaluate", {"expression": expr, "returnByValue": True,
                                           "awaitPromise": await_promise,
                                           "userGesture": True}, timeout)
        if "exceptionDetails" in r:
            raise JSError(_js_error_text(r["exceptionDetails"]))
        return _value(r["result"])

    # --------------------------------------------------------------- input --
    def mouse(self, kind, x, y, buttons=0, modifiers=0, clicks=0, timeout=None):
        """One Input.dispatchMouseEvent: kind "mousePressed", "mouseMoved" or
        "mouseReleased" at CSS pixel (x, y), the left button for press/release."""
        button = "left" if kind != "mouseMoved" or buttons else "none"
        self.call("Input.dispatchMouseEvent",
                  {"type": kind, "x": x, "y": y, "button": button, "buttons": buttons,
                   "modifiers": modifiers, "clickCount": clicks}, timeout)
        self._mouse = (x, y)

    def mouse_drag(self, start, end, steps=10, modifiers=0, timeout=None):
        """Move to start, press the left button, move in `steps` equal steps to
        end, release there. modifiers: SHIFT (8), CTRL, ALT, META, or'ed."""
        (x0, y0), (x1, y1) = start, end
        self.mouse("mouseMoved", x0, y0, modifiers=modifiers, timeout=timeout)
        self.mouse("mousePressed", x0, y0, 1, modifiers, 1, timeout)
        for i in range(1, steps + 1):
            self.mouse("mouseMoved", x0 + (x1 - x0) * i / steps, y0 + (y1 - y0) * i / steps,
                       1, modifiers, timeout=timeout)
        self.mouse("mouseReleased", x1, y1, 0, modifiers, 1, timeout)

    def click(self, x, y, modifiers=0, timeout=None):
        self.mouse("mouseMoved", x, y, modifiers=modifiers, timeout=timeout)
        self.mouse("mousePressed", x, y, 1, modifiers, 1, timeout)
        self.mouse("mouseReleased", x, y, 0, modifiers, 1, timeout)

    def key(self, key, modifiers=0, timeout=None):
        """Press and release one key: a character ("a", "/") or a name of KEYS."""
        if key in KEYS:
            code, vk, text = KEYS[key]
        elif len(key) == 1:
            up = key.upper()
            code = ("Key" + up if up.isalpha() and up.isascii() else
                    "Digit" + key if key.isdigit() else "")
            vk, text = ord(up) if up.isalnum() and up.isascii() else 0, key
        else:
            raise ValueError("key %r: one character or one of %s" % (key, ", ".join(KEYS)))
        base = {"key": key, "code": code, "windowsVirtualKeyCode": vk,
                "nativeVirtualKeyCode": vk, "modifiers": modifiers}
        self.call("Input.dispatchKeyEvent", dict(base, type="keyDown" if text else "rawKeyDown",
                                                  text=text, unmodifiedText=text), timeout)
        self.call("Input.dispatchKeyEvent", dict(base, type="keyUp"), timeout)

    def type_text(self, text, timeout=None):
        for ch in text:
            self.key(ch, timeout=timeout)

    # -------------------------------------------------------------- output --
    def screenshot(self, timeout=None):
        """The viewport as PNG bytes (width x height pixels)."""
        r = self.call("Page.captureScreenshot", {"format": "png"}, timeout)
        return base64.b64decode(r["data"])

    def close(self, timeout=None):
        self.browser.call("Target.closeTarget", {"targetId": self.target}, timeout=timeout)
        self.browser._pages.pop(self.session, None)


# ------------------------------------------------------------------- PNG --
def _unfilter(ftype, line, prev, bpp, swar):
    """Undo one PNG row filter (PNG spec, 9.2). `swar` holds the masks for adding
    two rows bytewise as big integers (the common filter, Up, at C speed)."""
    n = len(line)
    if ftype == 0:
        return bytearray(line)
    if ftype == 2:
        hi, lo = swar
        a, b = int.from_bytes(line, "big"), int.from_bytes(prev, "big")
        return bytearray((((a & lo) + (b & lo)) ^ ((a ^ b) & hi)).to_bytes(n, "big"))
    if ftype not in (1, 3, 4):
        raise ValueError("PNG filter type %d" % ftype)
    out = bytearray(line)
    for x in range(n):
        a = out[x - bpp] if x >= bpp else 0
        if ftype == 1:
            out[x] = (out[x] + a) & 255
        elif ftype == 3:
            out[x] = (out[x] + ((a + prev[x]) >> 1)) & 255
        else:
            b, c = prev[x], prev[x - bpp] if x >= bpp else 0
            pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
            out[x] = (out[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    return out


def decode_png(data):
    """Decode an 8-bit RGB or RGBA PNG, not interlaced (what Chromium writes):
    (width, height, rows), each row the RGB bytes of its pixels, 3 a pixel
    (alpha dropped). ValueError for anything else."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    i, idat, w, h, bpp = 8, [], 0, 0, 3
    while i + 8 <= len(data):
        n, kind = struct.unpack(">I4s", data[i:i + 8])
        body = data[i + 8:i + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or ctype not in (2, 6) or interlace:
                raise ValueError("PNG type %d/%d/%d" % (depth, ctype, interlace))
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat.append(body)
        i += 12 + n
    raw, stride = zlib.decompress(b"".join(idat)), w * bpp
    if len(raw) < h * (stride + 1):
        raise ValueError("PNG data cut short")
    hi = int.from_bytes(b"\x80" * stride, "big")
    swar = (hi, hi ^ ((1 << 8 * stride) - 1))
    rows, prev = [], bytearray(stride)
    for y in range(h):
        at = y * (stride + 1)
        prev = _unfilter(raw[at], raw[at + 1:at + 1 + stride], prev, bpp, swar)
        if bpp == 3:
            rows.append(bytes(prev))
        else:
            rgba = bytes(prev)
            rows.append(b"".join(rgba[k:k + 3] for k in range(0, len(rgba), 4)))
    return w, h, rows


def pixel(rows, x, y):
    """The (r, g, b) of pixel (x, y)."""
    return tuple(rows[y][3 * x:3 * x + 3])


def count_pixels(rows, box, background):
    """How many pixels of box (x0, y0, x1, y1: x0 <= x < x1, y0 <= y < y1)
    differ from `background`, an (r, g, b)."""
    x0, y0, x1, y1 = box
    bg = bytes(background)
    n = 0
    for y in range(max(0, y0), min(len(rows), y1)):
        row = rows[y]
        n += sum(row[3 * x:3 * x + 3] != bg for x in range(max(0, x0), min(len(row) // 3, x1)))
    return n


# -------------------------------------------------------------- self-test --
SELFTEST_PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>cdp self-test</title>
<style>body{margin:0;background:#fff} canvas{position:absolute;left:%(left)dpx;top:%(top)dpx}</style>
</head><body><canvas id="c" width="%(cw)d" height="%(ch)d"></canvas>
<script>
"use strict";
const c = document.getElementById("c"), g = c.getContext("2d");
g.fillStyle = "rgb(%(square)s)"; g.fillRect(%(sq)d, %(sq)d, %(sqw)d, %(sqw)d);
window.seen = {down: null, moves: 0, up: null, shift: false};
window.restored = location.hash;
let last = null;
function at(e) { const r = c.getBoundingClientRect(); return [e.clientX - r.left, e.clientY - r.top]; }
c.addEventListener("mousedown", e => {
  seen.down = at(e); seen.shift = e.shiftKey; last = seen.down; });
addEventListener("mousemove", e => {
  if (!last || !(e.buttons & 1)) return;
  seen.moves++; const p = at(e);
  g.strokeStyle = "rgb(%(line)s)"; g.lineWidth = 5; g.beginPath();
  g.moveTo(last[0], last[1]); g.lineTo(p[0], p[1]); g.stroke(); last = p; });
addEventListener("mouseup", e => {
  if (!last) return;
  seen.up = at(e); last = null;
  history.replaceState(null, "", "#drag=" + seen.down.join(",") + "-" + seen.up.join(","));
  console.error("cdp-console-" + seen.moves);
  setTimeout(() => { throw new Error("cdp-thrown-after-drag"); }, 0); });
window.ready = true;
</script></body></html>
"""


def self_test(chromium_name):
    """The checks `meson test cdp` runs (see the module's docstring)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from consumers import Checks, skip_unless, tempdir
    chromium = skip_unless(chromium_name, "chromium")
    c, tmp, t0 = Checks("cdp"), tempdir(), time.monotonic()
    left, top, sq, sqw = 50, 60, 20, 40
    square, line = (10, 200, 30), (200, 20, 60)
    path = os.path.join(tmp, "page.html")
    with open(path, "w") as f:
        f.write(SELFTEST_PAGE % {"left": left, "top": top, "cw": 400, "ch": 300, "sq": sq,
                                 "sqw": sqw, "square": "%d,%d,%d" % square,
                                 "line": "%d,%d,%d" % line})
    start, end, steps = (150, 200), (350, 250), 10
    with Browser(chromium, width=800, height=600, timeout=20) as b:
        page = b.new_page()
        page.navigate("file://" + path + "#start", wait_for="window.ready === true")
        c.check(page.evaluate("[innerWidth, innerHeight]") == [800, 600],
                "the viewport is the size asked for")
        page.mouse_drag(start, end, steps=steps, modifiers=SHIFT)
        seen = page.evaluate("window.seen")
        want_down = [start[0] - left, start[1] - top]
        want_up = [end[0] - left, end[1] - top]
        c.check(seen["down"] == want_down and seen["up"] == want_up and seen["shift"] and
                seen["moves"] >= steps, "the page saw the drag where it was made, shift held",
                (seen, want_down, want_up))
        page.wait_for("location.hash.startsWith('#drag=')", timeout=5)
        page.wait_event(lambda m, p: m == "Runtime.exceptionThrown", 0,
                        time.monotonic() + 5, "the error thrown after the drag")
        c.check(any("cdp-thrown-after-drag" in e and e.startswith("uncaught")
                    for e in page.errors), "a thrown error is in page.errors", page.errors)
        c.check(any(e == "console.error: cdp-console-%d" % seen["moves"] for e in page.errors),
                "console.error is in page.errors", page.errors)
        try:
            page.evaluate("null.x")
            c.check(False, "evaluate raises on an exception")
        except JSError as e:
            c.check("TypeError" in str(e), "evaluate raises the exception's text", e)
        check_screenshot(c, page, (left, top, sq, sqw, square, line, start, end))
        hash_before = page.evaluate("location.hash")
        page.reload(wait_for="window.ready === true", timeout=10)
        c.check(hash_before == "#drag=%d,%d-%d,%d" % tuple(want_down + want_up) and
                page.evaluate("window.restored") == hash_before,
                "reload keeps the fragment the page set", (hash_before,
                                                          page.evaluate("window.restored")))
        other = b.new_page()
        try:
            seen = page.evaluate(DOUBLE_FRAME + ".then(() => document.visibilityState)",
                                 timeout=5)
        except CDPTimeout as e:
            seen = e
        c.check(seen == "visible",
                "a page opened later leaves the first one visible, drawing frames", seen)
        check_deadlines(c, page, other)
        pid, root = b.proc.pid, b.root
    c.check(b.proc.returncode is not None and not os.path.exists(root) and
            not group_alive(pid), "close: no browser process left, its profile removed")
    print("cdp: self-test took %.1f s" % (time.monotonic() - t0))
    c.close()


def check_screenshot(c, page, layout):
    """The screenshot decodes at the viewport's size, the square in its exact
    colour where the page drew it, the drag's line between its ends."""
    left, top, sq, sqw, square, line, start, end = layout
    try:
        w, h, rows = decode_png(page.screenshot())
    except ValueError as e:
        c.check(False, "the screenshot decodes", e)
        return
    c.check((w, h) == (page.browser.width, page.browser.height), "screenshot size", (w, h))
    mid = (left + sq + sqw // 2, top + sq + sqw // 2)
    c.check(pixel(rows, *mid) == square, "the square's colour at its centre",
            pixel(rows, *mid))
    c.check(count_pixels(rows, (left + sq, top + sq, left + sq + sqw, top + sq + sqw),
                         square) == 0, "the square is whole")
    x, y = (start[0] + end[0]) // 2, (start[1] + end[1]) // 2
    c.check(pixel(rows, x, y) == line, "the drag's line is in the screenshot",
            pixel(rows, x, y))
    c.check(count_pixels(rows, (0, 0, w, top), (255, 255, 255)) == 0 and
            count_pixels(rows, (start[0], start[1] - 20, end[0], end[1] + 20),
                         (255, 255, 255)) > 4 * (end[0] - start[0]),
            "count_pixels: none above the canvas, the line's along the drag")


def check_deadlines(c, page, stuck):
    """Calls fail at their deadline (a hang would be meson's timeout): a
    condition never true, a page in an endless loop."""
    expect_timeout(c, "wait_for a condition never true", "window.never",
                   lambda: page.wait_for("window.never === true", timeout=0.5))
    expect_timeout(c, "a call to a page in an endless loop", "Runtime.evaluate",
                   lambda: stuck.evaluate("for (;;) {}", timeout=0.5))


def expect_timeout(c, what, needle, call):
    try:
        call()
        c.check(False, what + " raises CDPTimeout")
    except CDPTimeout as e:
        c.check(needle in str(e), what + " raises CDPTimeout naming " + needle, e)


def group_alive(pgid):
    """Whether a process of group pgid still runs (a zombie, not yet reaped by
    init, does not count)."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/%s/stat" % pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


if __name__ == "__main__":
    if len(sys.argv) in (2, 3) and sys.argv[1] == "--self-test":
        self_test(sys.argv[2] if len(sys.argv) == 3 else "chromium")
    else:
        sys.exit(__doc__.split("\n\n")[0] + "\nusage: cdp.py --self-test [CHROMIUM]")
