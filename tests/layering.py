#!/usr/bin/env python3
"""tests/layering.py — the include layering of the tree, read from the #include lines.

The rules (docs/internals.md, "The layers"):

  include/ringprof/  includes only ringprof/ headers and the C library.
  recorder/          includes ringprof/ headers and its own; never src/ or tools/.
  src/               is in stages, lowest first: STAGES below, then agent.c at the
                     root. A file includes agent headers by their path below src/
                     ("core/log.h"), and only from its own stage or one before it.
  tools/             is in three layers, commands/ > outputs/ > model/: a file
                     includes its own layer's headers by name and a lower layer's as
                     "model/x.h"; never anything of src/ (what the tool shares with
                     the agent is in include/ringprof/ and recorder/).

Usage: layering.py ROOT           check the tree at ROOT; exit 1 and one line per
                                  broken include
       layering.py --self-test ROOT
                                  also copy the tree's sources, plant one upward
                                  include of each kind in the copy, and fail unless
                                  each is caught (so this check cannot pass vacuously)
"""
import os
import re
import shutil
import sys
import tempfile

STAGES = ['core', 'code', 'threads', 'walk', 'flush', 'kinds', 'control']
TOOL_LAYERS = ['model', 'outputs', 'commands']
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def sources(root, top):
    for d, _, names in os.walk(os.path.join(root, top)):
        for n in sorted(names):
            if n.endswith(('.c', '.h')):
                yield os.path.relpath(os.path.join(d, n), root)


def includes(root, rel):
    with open(os.path.join(root, rel), errors='replace') as f:
        text = f.read()
    for m in INCLUDE.finditer(text):
        yield text.count('\n', 0, m.start()) + 1, m.group(1)


def check_src(root, rel, line, inc, out):
    parts = rel.split('/')            # src/<stage>/x.c, or src/agent.c
    mine = len(STAGES) if len(parts) == 2 else STAGES.index(parts[1]) \
        if parts[1] in STAGES else None
    if mine is None:
        out.append(f'{rel}: in no stage (src/meson.build agent_stages: {STAGES})')
        return
    if inc.startswith('ringprof/'):
        return
    head = inc.split('/')[0]
    if '/' not in inc or head not in STAGES:
        if '..' in inc or not os.path.exists(os.path.join(root, 'src', inc)):
            out.append(f'{rel}:{line}: "{inc}": an agent header is named by its path '
                       f'below src/ ("core/log.h")')
        else:
            out.append(f'{rel}:{line}: "{inc}": not in a stage folder')
        return
    if STAGES.index(head) > mine:
        out.append(f'{rel}:{line}: "{inc}": {head}/ is above '
                   f'{parts[1] if len(parts) > 2 else "the root"}/ '
                   f'(stages, lowest first: {" < ".join(STAGES)})')


def check_tools(root, rel, line, inc, out):
    parts = rel.split('/')            # tools/<layer>/x.c
    if len(parts) < 3 or parts[1] not in TOOL_LAYERS:
        out.append(f'{rel}: in no layer of tools/ ({", ".join(TOOL_LAYERS)})')
        return
    mine = TOOL_LAYERS.index(parts[1])
    if inc.startswith('ringprof/'):
        return
    head = inc.split('/')[0]
    if '/' in inc and head in TOOL_LAYERS:
        if TOOL_LAYERS.index(head) > mine:
            out.append(f'{rel}:{line}: "{inc}": {head}/ is above {parts[1]}/')
        return
    if '/' not in inc and os.path.exists(os.path.join(root, 'tools', parts[1], inc)):
        return
    if 'src/' in inc or os.path.exists(os.path.join(root, 'src', inc)) or \
            any(os.path.exists(os.path.join(root, 'src', s, inc)) for s in STAGES):
        out.append(f'{rel}:{line}: "{inc}": the tool includes the agent (src/)')
        return
    out.append(f'{rel}:{line}: "{inc}": not a header of this layer or a lower one')


def check_lib(root, rel, line, inc, out, own):
    if inc.startswith('ringprof/'):
        return
    if '/' not in inc and os.path.exists(os.path.join(root, own, inc)):
        return
    out.append(f'{rel}:{line}: "{inc}": {own}/ includes only ringprof/ headers and its own')


def check(root):
    out = []
    for rel in sources(root, 'src'):
        for line, inc in includes(root, rel):
            check_src(root, rel, line, inc, out)
    for rel in sources(root, 'tools'):
        for line, inc in includes(root, rel):
            check_tools(root, rel, line, inc, out)
    for own in ('recorder', 'include/ringprof'):
        for rel in sources(root, own):
            for line, inc in includes(root, rel):
                check_lib(root, rel, line, inc, out, own)
    meson = os.path.join(root, 'tools', 'meson.build')
    if os.path.exists(meson) and re.search(r"include_directories\([^)]*'\.\./src",
                                           open(meson).read()):
        out.append("tools/meson.build: src/ is on the tool's include path")
    return out


def plant(root, rel, line):
    path = os.path.join(root, rel)
    with open(path) as f:
        text = f.read()
    with open(path, 'w') as f:
        f.write(line + '\n' + text)


def self_test(root):
    """Plant each kind of broken include in a copy; each must be caught."""
    cases = [
        ('src/core/log.c', '#include "kinds/lock.h"', 'kinds/ is above core/'),
        ('src/flush/flusher.c', '#include "control/control.h"', 'control/ is above flush/'),
        ('src/walk/unwind.c', '#include "log.h"', 'by its path below src/'),
        ('tools/model/profile_build.c', '#include "outputs/formats.h"', 'outputs/ is above model/'),
        ('tools/outputs/formats.c', '#include "core/log.h"', 'the tool includes the agent'),
        ('recorder/ring.c', '#include "../src/core/log.h"', 'includes only ringprof/'),
    ]
    failed = 0
    for rel, line, want in cases:
        with tempfile.TemporaryDirectory() as tmp:
            for top in ('src', 'tools', 'recorder', 'include'):
                shutil.copytree(os.path.join(root, top), os.path.join(tmp, top),
                                ignore=shutil.ignore_patterns('*.java', '*.html', '*.jar'))
            plant(tmp, rel, line)
            got = [p for p in check(tmp) if p.startswith(rel + ':1:')]
            if not any(want in p for p in got):
                print(f'self-test: {line} planted in {rel} was not caught ({got})')
                failed += 1
            else:
                print(f'self-test: caught {got[0]}')
    return failed


def main(argv):
    args = [a for a in argv[1:] if a != '--self-test']
    if len(args) != 1:
        print(__doc__.split('\n\n')[-1], file=sys.stderr)
        return 2
    root = args[0]
    problems = check(root)
    for p in problems:
        print(p)
    bad = len(problems)
    if '--self-test' in argv:
        bad += self_test(root)
    n = sum(1 for top in ('src', 'tools', 'recorder', 'include') for _ in sources(root, top))
    print(f'{n} files read, {len(problems)} broken includes')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
