#!/usr/bin/env python3
"""tests/agent/fake_agent.py — an attacker's stand-in for a ringprof agent, for
tests/agent/security_tests.sh. Run as the attacking user.

    fake_agent.py SOCKET STATE [--disc FILE --disc-pid PID --disc-socket PATH
                                --disc-uid UID --disc-main TEXT]

Listens on SOCKET (mode 0666) and answers every request line with a status reply
whose "state" is STATE (which may hold terminal escapes) and which says it is
fake ("FAKE": the uid it runs as). With --disc it also writes a discovery file
FILE (mode 0644) as the real agent would, naming whatever pid, socket, uid and
main it is told. Prints "ready PID" once it listens, and serves until killed.
"""
import argparse
import json
import os
import socket

ap = argparse.ArgumentParser()
ap.add_argument("socket")
ap.add_argument("state")
ap.add_argument("--disc")
ap.add_argument("--disc-pid", type=int)
ap.add_argument("--disc-socket")
ap.add_argument("--disc-uid", type=int)
ap.add_argument("--disc-main", default="Fake")
a = ap.parse_args()

try:
    os.unlink(a.socket)
except FileNotFoundError:
    pass
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(a.socket)
os.chmod(a.socket, 0o666)
srv.listen(16)
if a.disc:
    with open(a.disc + ".tmp", "w") as f:
        json.dump({"pid": a.disc_pid or os.getpid(),
                   "uid": os.getuid() if a.disc_uid is None else a.disc_uid,
                   "socket": a.disc_socket or a.socket, "main": a.disc_main,
                   "start_time": "2026-01-01T00:00:00Z", "protocol": 1}, f)
    os.chmod(a.disc + ".tmp", 0o644)
    os.rename(a.disc + ".tmp", a.disc)
print("ready %d" % os.getpid(), flush=True)
reply = json.dumps({"protocol": 1, "ok": True, "command": "status", "state": a.state,
                    "FAKE": "answered by uid %d" % os.getuid(),
                    "path": "/fake/" + a.state}) + "\n"
while True:
    c, _ = srv.accept()
    try:
        c.settimeout(5)
        c.makefile("rb").readline()
        c.sendall(reply.encode())
    except OSError:
        pass
    c.close()
