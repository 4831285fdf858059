#!/usr/bin/env python3
"""tests/convert/check_folded.py FILE... — a strict checker of the folded-stack
(collapsed) format that flamegraph.pl, inferno and speedscope read.

Every line must be "FRAMES VALUE": FRAMES is frames joined by ';' with no empty
frame (so no leading, trailing or doubled ';'), VALUE a positive decimal integer
without sign or leading zero, one space between them, nothing after. No line may
repeat a stack, no frame may hold a control character, and the file must end with
a newline (an empty file is allowed). Prints each problem and exits 1, or exits 0.
"""
import re
import sys

LINE = re.compile(r"^(?P<stack>[^\n]+) (?P<value>[1-9][0-9]*)$")


def check(path):
    problems = []
    data = open(path, "rb").read()
    if data and not data.endswith(b"\n"):
        problems.append("no newline at the end of the file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        return ["not UTF-8: %s" % e]
    seen = set()
    for n, line in enumerate(text.split("\n")[:-1] if text else [], 1):
        m = LINE.match(line)
        if not m:
            problems.append("line %d: not 'frames SPACE positive-integer': %r" % (n, line))
            continue
        stack = m.group("stack")
        if stack != stack.strip() or "  " in line[len(stack):]:
            problems.append("line %d: leading or trailing space" % n)
        frames = stack.split(";")
        if any(f == "" for f in frames):
            problems.append("line %d: empty frame (';;' or ';' at an end)" % n)
        if any(ord(c) < 0x20 or ord(c) == 0x7f for c in stack):
            problems.append("line %d: control character in a frame" % n)
        if stack in seen:
            problems.append("line %d: stack repeated: %r" % (n, stack))
        seen.add(stack)
    return problems


def main():
    bad = 0
    for path in sys.argv[1:]:
        for p in check(path):
            print("check_folded: %s: %s" % (path, p))
            bad = 1
    return bad


if __name__ == "__main__":
    sys.exit(main())
