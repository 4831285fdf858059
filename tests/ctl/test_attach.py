#!/usr/bin/env python3
"""tests/ctl/test_attach.py RINGPROF TEST_AGENT JAR JAVA

`ringprof attach` against a real JVM (CtlSleeper), loading the trivial test
agent (test_agent.c) through HotSpot's attach protocol:

  - attach with options: exit 0, the agent prints exactly those options on the
    JVM's stdout, the trigger file is gone, no thread dump was printed;
  - options given as several words are joined with commas;
  - the agent refusing ("fail"): exit 1, its return code (7) and its own reason
    (left through rp_discovery_attach_error) are printed, the reason file is gone;
  - a file that is not a library: exit 1 with the JVM's "was not loaded" text;
  - the default agent path (libringprof.so in ../src/ next to the binary);
  - a process that is not a JVM (and is not killed by the attempt), a dead pid,
    another user's JVM, an option string over the protocol's 1024 bytes, a
    missing agent file: each a clear error;
  - the JVM is still alive and well at the end.
"""
import atexit
import os
import shutil
import subprocess
import sys
import tempfile
import time

RINGPROF, AGENT, JAR, JAVA = [os.path.abspath(a) for a in sys.argv[1:5]]
NOBODY = 65534
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


work = tempfile.mkdtemp(prefix="rp-attach-")
os.chmod(work, 0o755)
out_path, err_path = os.path.join(work, "jvm.out"), os.path.join(work, "jvm.err")


def jvm_out():
    with open(out_path) as f:
        return f.read()


def rp(*args, pre=(), timeout=60):
    p = subprocess.run(list(pre) + [RINGPROF] + list(args), capture_output=True,
                       text=True, timeout=timeout)
    check(not sanitizer_report(p.stderr), "ringprof %s: sanitizer report:\n%s" %
          (" ".join(args), p.stderr))
    return p.returncode, p.stdout, p.stderr


with open(out_path, "w") as out, open(err_path, "w") as err:
    jvm = subprocess.Popen([JAVA, "-Xshare:auto", "-cp", JAR, "CtlSleeper", "120"],
                           stdout=out, stderr=err, cwd=work)
end = time.monotonic() + 120           # only a hang takes this long
while "ready" not in jvm_out() and time.monotonic() < end and jvm.poll() is None:
    time.sleep(0.05)
if not check("ready" in jvm_out(), "the JVM started"):
    print(open(err_path).read())
    sys.exit(1)
pid = jvm.pid
atexit.register(lambda: jvm.poll() is None and (jvm.kill(), jvm.wait()))


# The bound only catches a hang: on a loaded machine (or under ASan) the agent's
# line can take seconds to appear.
def wait_out(text, timeout=60):
    end = time.monotonic() + timeout
    while text not in jvm_out() and time.monotonic() < end:
        time.sleep(0.05)
    return text in jvm_out()


# attach with options
t0 = time.monotonic()
rc, out, err = rp("attach", "--agent", AGENT, str(pid), "opt1=a,opt2=b")
print("# first attach took %.2f s" % (time.monotonic() - t0))
check(rc == 0 and ("loaded %s into pid %d" % (os.path.realpath(AGENT), pid)) in out,
      "attach exits 0 and says so: %d %r %r" % (rc, out, err))
check(wait_out("rp-test-agent: options=[opt1=a,opt2=b]\n"),
      "the agent printed its options in the JVM: %r" % jvm_out())
check(not os.path.exists(os.path.join(work, ".attach_pid%d" % pid)),
      "the trigger file was removed")
check(os.path.exists("/tmp/.java_pid%d" % pid), "the JVM's attach listener runs")
check("Full thread dump" not in jvm_out(), "SIGQUIT did not make the JVM dump threads")

# several words are one option string, joined with commas
rc, out, err = rp("attach", "--agent", AGENT, str(pid), "a=1", "b=2")
check(rc == 0 and wait_out("rp-test-agent: options=[a=1,b=2]\n"),
      "option words joined with commas: %d %r" % (rc, err))

# the agent refuses: its return code and its own reason come back
rc, out, err = rp("attach", "--agent", AGENT, str(pid), "fail")
check(rc == 1 and "Agent_OnAttach returned 7" in err and
      "the agent says: the test agent refuses the option string 'fail'" in err,
      "a refusing agent: exit 1 with its code and reason: %d %r" % (rc, err))
check(wait_out("rp-test-agent: options=[fail]\n"), "the failing agent ran")
check(not os.path.exists("/tmp/ringprof-%d/%d.attach-error" % (os.geteuid(), pid)),
      "the agent's reason file was removed after printing")

# not a library
notlib = os.path.join(work, "notalib.so")
with open(notlib, "w") as f:
    f.write("not an ELF file\n")
rc, out, err = rp("attach", "--agent", notlib, str(pid))
check(rc == 1 and ("could not load %s" % notlib) in err and "was not loaded" in err,
      "a file that is not a library: %d %r" % (rc, err))

# the default agent: libringprof.so in ../src/ next to the binary
tree = os.path.join(work, "tree")
os.makedirs(os.path.join(tree, "tools"))
os.makedirs(os.path.join(tree, "src"))
shutil.copy(RINGPROF, os.path.join(tree, "tools", "ringprof"))
p = subprocess.run([os.path.join(tree, "tools", "ringprof"), "attach", str(pid)],
                   capture_output=True, text=True, timeout=60)
check(not sanitizer_report(p.stderr), "sanitizer report:\n" + p.stderr)
check(p.returncode == 1 and "cannot find libringprof.so next to this ringprof" in p.stderr,
      "no default agent: %d %r" % (p.returncode, p.stderr))
shutil.copy(AGENT, os.path.join(tree, "src", "libringprof.so"))
p = subprocess.run([os.path.join(tree, "tools", "ringprof"), "attach", str(pid), "dflt=1"],
                   capture_output=True, text=True, timeout=60)
check(not sanitizer_report(p.stderr), "sanitizer report:\n" + p.stderr)
check(p.returncode == 0 and (os.path.join(tree, "src", "libringprof.so")) in p.stdout and
      wait_out("rp-test-agent: options=[dflt=1]\n"),
      "the default agent path is ../src/libringprof.so: %d %r" % (p.returncode, p.stderr))

# not a JVM: refused before any signal (SIGQUIT would kill it)
sleeper = subprocess.Popen(["sleep", "60"])
rc, out, err = rp("attach", "--agent", AGENT, str(sleeper.pid))
time.sleep(0.2)
check(rc == 1 and ("pid %d is not a HotSpot JVM" % sleeper.pid) in err,
      "a process that is not a JVM: %d %r" % (rc, err))
check(sleeper.poll() is None, "the non-JVM process is still alive")
sleeper.kill()
sleeper.wait()

# a dead pid
dead = subprocess.Popen(["true"])
dead.wait()
rc, out, err = rp("attach", "--agent", AGENT, str(dead.pid))
check(rc == 1 and ("no process with pid %d" % dead.pid) in err, "a dead pid: %r" % err)

# another user's JVM
rc, out, err = rp("attach", "--agent", AGENT, str(pid),
                  pre=["setpriv", "--reuid", str(NOBODY), "--regid", str(NOBODY),
                       "--clear-groups"])
check(rc == 1 and ("pid %d runs as uid 0, and ringprof as uid %d" % (pid, NOBODY)) in err,
      "another user's JVM is refused clearly: %d %r" % (rc, err))

# limits of the protocol, and a missing agent
rc, out, err = rp("attach", "--agent", AGENT, str(pid), "x=" + "y" * 1100)
check(rc == 2 and "longer than the 1024 bytes" in err, "options too long: %r" % err)
rc, out, err = rp("attach", "--agent", os.path.join(work, "missing.so"), str(pid))
check(rc == 1 and "cannot use agent" in err, "a missing agent file: %r" % err)
rc, out, err = rp("attach")
check(rc == 2 and "no pid given" in err, "no pid: usage error")

# the JVM survived all of it
check(jvm.poll() is None, "the JVM is still running")
rc, out, err = rp("attach", "--agent", AGENT, str(pid), "last")
check(rc == 0 and wait_out("rp-test-agent: options=[last]\n"), "and still attachable")
jvm.kill()
jvm.wait()

if failures == 0:
    shutil.rmtree(work, ignore_errors=True)
else:
    print("scratch kept: " + work)
print("ctl_attach: %d checks, %d failed" % (checks, failures))
sys.exit(1 if failures else 0)
