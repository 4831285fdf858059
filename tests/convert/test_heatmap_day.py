#!/usr/bin/env python3
"""The heatmap page of a long recording: its size, the converter's memory, and
every sample in it (issue 26's "size and time" test).

usage: test_heatmap_day.py RINGPROF RP_DAYWRITER

rp_daywriter writes a recording of a busy 8-thread service at the agent's
defaults (its length: see below), with its manifest (the samples and weight it
wrote per kind, and those on the incident's stacks). Then
`ringprof convert --format heatmap -o day.html DIR` runs as a child, and:

  exit    it exits 0;
  size    the page is under 20 MB (issue 26's bound), printed;
  memory  its peak resident set (wait4's ru_maxrss) is under the bound of its
          length, printed: about twice what was measured (a day: 343 MB in
          bench/README.md, "The incident view (issue 26)", bound 700 MB; a
          quarter of an hour: 64 MB here, bound 130 MB);
  time    its CPU time is printed; RLIMIT_CPU of CPU_SECONDS is a hang detector,
          not a speed test, and the address space is capped at 4 GiB besides;
  data    the page's data decoded by the tests' decoder (heatmap_data.py:
          Python's base64, zlib and json, not the page's code): each kind's
          entries in the format's order (buckets, then leaf and thread,
          increasing) and in range; per kind, their samples and weight add up
          exactly to the manifest's, and to the kind's figures in META; cpu's
          samples per thread are the manifest's; each kind's density (its
          per-bucket, per-thread counts at finer buckets) likewise, in all, per
          thread and summed into each stack bucket; the entries whose leaf lies
          under the incident's frame (the manifest names a method only the
          incident's stacks hold) add up to the manifest's incident samples and
          weight, for cpu and alloc, all in buckets that overlap the incident
          window.

The length: with RINGPROF_LONG_TESTS=1 a day (24 h at the defaults, as issue 26
asks: about 16 s to write, 60 s to convert and 12 s to decode here, 100 s in
all); else a quarter of an hour with 2 MiB chunks (four of them, so the chunk
boundaries are crossed as in a day: about 5 s in all). RP_HEATMAP_DAY_HOURS
sets another length (at 16 MiB chunks, with the day's memory bound).
"""
import collections
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from consumers import Checks  # noqa: E402
from heatmap_data import Page  # noqa: E402

RINGPROF, DAYWRITER = sys.argv[1], sys.argv[2]
PAGE_BOUND = 20 * 1000 * 1000          # issue 26: a day's page stays under 20 MB
CPU_SECONDS = 600                      # a hang detector: 10 minutes of CPU
# (hours, rp_daywriter's arguments, peak RSS bound): twice bench/README.md's figure.
DAY = (24, [], 700e6)
SHORT = (0.25, ['--chunksize', '2'], 130e6)
if os.environ.get('RP_HEATMAP_DAY_HOURS'):
    HOURS, WRITER_ARGS, RSS_BOUND = float(os.environ['RP_HEATMAP_DAY_HOURS']), [], DAY[2]
else:
    HOURS, WRITER_ARGS, RSS_BOUND = DAY if os.environ.get('RINGPROF_LONG_TESTS') == '1' \
        else SHORT

c = Checks('heatmap_day')
check = c.check


def limits():
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS + 5))


def convert(rec, page):
    """ringprof convert --format heatmap: (exit status, stderr, peak RSS bytes,
    CPU s, wall s)."""
    start = time.monotonic()
    with tempfile.TemporaryFile() as err:
        p = subprocess.Popen([RINGPROF, 'convert', '--format', 'heatmap', '-o', page, rec],
                             stdout=subprocess.DEVNULL, stderr=err, preexec_fn=limits)
        _, status, ru = os.wait4(p.pid, 0)
        err.seek(0)
        msg = err.read().decode('utf-8', 'replace')
    return (os.waitstatus_to_exitcode(status), msg, ru.ru_maxrss * 1024,
            ru.ru_utime + ru.ru_stime, time.monotonic() - start)


# -------------------------------------------------------------------- checks --

def check_order(page, kind):
    """A kind's entries as the format orders them: buckets increasing, (leaf,
    thread) increasing within a bucket, every bucket and leaf in range; its
    density's the same, by (bucket, thread)."""
    nb, nn = page.meta['nbuckets'], page.meta['nnodes']
    prev, bad = None, 0
    for bucket, leaf, thread, s, w in page.entries[kind]:
        key = (bucket, leaf, thread)
        bad += not ((prev is None or key > prev) and bucket < nb and leaf < nn and s >= 1)
        prev = key
    check(bad == 0, 'kind %s: entries in order, in range, each of a sample or more '
          '(%d are not)' % (kind, bad))
    nb, prev, bad = page.meta['density']['nbuckets'], None, 0
    for bucket, thread, s, w in page.density[kind]:
        bad += not ((prev is None or (bucket, thread) > prev) and bucket < nb and s >= 1)
        prev = (bucket, thread)
    check(bad == 0, 'kind %s: density entries in order and in range (%d are not)'
          % (kind, bad))


def check_density(page, name, manifest):
    """A kind's density: its samples and weight, in all and per thread (cpu),
    are the manifest's; every bucket of the stacks' axis holds the samples of
    the density's buckets inside it."""
    want = manifest['kinds'][name]
    d = page.meta['density']
    samples = sum(e[2] for e in page.density[name])
    weight = sum(e[3] for e in page.density[name])
    check(samples == want['samples'] and weight == want['weight'],
          'kind %s: the density holds %d samples weighing %d, the manifest %d weighing %d'
          % (name, samples, weight, want['samples'], want['weight']))
    check(page.meta['bucket_ms'] % d['bucket_ms'] == 0,
          "the density's %d ms buckets divide the stacks' %d ms"
          % (d['bucket_ms'], page.meta['bucket_ms']))
    coarse, fine = collections.Counter(), collections.Counter()
    for bucket, leaf, thread, s, w in page.entries[name]:
        coarse[bucket] += s
    for bucket, thread, s, w in page.density[name]:
        fine[page.bucket_of((d['t0_ms'] + bucket * d['bucket_ms']) * 1000000)] += s
    check(coarse == fine, "kind %s: the density's samples add up to each stack bucket's"
          % name)
    if name == 'cpu':
        got = collections.Counter()
        for bucket, thread, s, w in page.density[name]:
            got[page.thread_names[thread]] += s
        check(dict(got) == thread_samples(manifest), "cpu's density per thread")


def thread_samples(manifest):
    """The manifest's cpu samples per thread, by the page's thread labels."""
    return {'[%s]' % t['name']: t['cpu_samples'] for t in manifest['threads']
            if t['cpu_samples']}


def under_frame(page, name):
    """For each node, whether it or an ancestor is a frame whose name holds `name`."""
    hit = [name in f for f in page.frame_names]
    check(any(hit), 'the page names the incident frame %s' % name)
    under = [False] * len(page.parent)
    for i in range(1, len(page.parent)):
        under[i] = under[page.parent[i]] or hit[page.frame[i]]
    return under


def check_kind(page, name, manifest, under):
    """One kind's entries against the manifest: totals, the meta's figures, the
    incident's share and where it lies, each thread's samples."""
    want, inc = manifest['kinds'][name], manifest['incident']
    first, last = page.bucket_of(inc['from_wall_ns']), page.bucket_of(inc['to_wall_ns'] - 1)
    samples = weight = inc_s = inc_w = outside = 0
    per_thread = collections.Counter()
    for bucket, leaf, thread, s, w in page.entries.get(name, ()):
        samples += s
        weight += w
        per_thread[page.thread_names[thread]] += s
        if under[leaf]:
            inc_s += s
            inc_w += w
            outside += not first <= bucket <= last
    print('  %-5s %9d samples weighing %d (manifest: %d, %d)'
          % (name, samples, weight, want['samples'], want['weight']))
    check(samples == want['samples'] and weight == want['weight'],
          'kind %s: the entries hold %d samples weighing %d, the manifest %d weighing %d'
          % (name, samples, weight, want['samples'], want['weight']))
    k = next((k for k in page.meta['kinds'] if k['name'] == name), {})
    check(k.get('samples') == samples and k.get('weight') == weight,
          "kind %s: the meta's figures (%s, %s) are the entries'"
          % (name, k.get('samples'), k.get('weight')))
    if name == 'cpu':
        want_t = thread_samples(manifest)
        check(dict(per_thread) == want_t, 'cpu samples per thread: %s, the manifest %s'
              % (sorted(per_thread.items())[:4], sorted(want_t.items())[:4]))
    if name in ('cpu', 'alloc'):
        print('        %d of them under the incident frame, in buckets %d..%d (of %d ms)'
              % (inc_s, first, last, page.meta['bucket_ms']))
        check(inc_s == inc[name + '_samples'] and inc_w == inc[name + '_weight'],
              'kind %s: %d samples weighing %d under the incident frame, the manifest '
              '%d weighing %d' % (name, inc_s, inc_w, inc[name + '_samples'],
                                  inc[name + '_weight']))
        check(outside == 0, 'kind %s: %d incident entries outside buckets %d..%d'
              % (name, outside, first, last))


def check_page(path, manifest):
    start = time.monotonic()
    page = Page.read(path)
    meta = page.meta
    print('data: %d nodes, %d threads, %d stack buckets of %d ms (%s), %d density buckets '
          'of %d ms, blob %.1f MB inflated; decoded in %.1f s'
          % (meta['nnodes'], len(page.thread_names), meta['nbuckets'], meta['bucket_ms'],
             meta['resolution'], meta['density']['nbuckets'], meta['density']['bucket_ms'],
             len(page.blob) / 1e6, time.monotonic() - start))
    check(set(page.entries) == set(manifest['kinds']), 'the page has the kinds %s (it has %s)'
          % (sorted(manifest['kinds']), sorted(page.entries)))
    under = under_frame(page, manifest['incident']['frame'])
    for name in sorted(manifest['kinds']):
        check_order(page, name)
        check_kind(page, name, manifest, under)
        check_density(page, name, manifest)


def main():
    work = tempfile.mkdtemp(prefix='rp-heatmap-day-')
    try:
        rec, page = os.path.join(work, 'rec'), os.path.join(work, 'day.html')
        start = time.monotonic()
        out = subprocess.run([DAYWRITER, rec, '--hours', '%g' % HOURS] + WRITER_ARGS,
                             check=True, capture_output=True, text=True).stdout
        print(out.strip())
        print('writer: %.1f s' % (time.monotonic() - start))
        with open(rec + '.json') as f:
            manifest = json.load(f)
        status, err, rss, cpu, wall = convert(rec, page)
        print('convert --format heatmap: exit %d, %.1f s, CPU %.1f s, peak RSS %.1f MB'
              % (status, wall, cpu, rss / 1e6))
        if not check(status == 0, 'convert exits 0 (%d): %s' % (status, err.strip())):
            return
        size = os.path.getsize(page)
        print('page: %.2f MB (bound %.0f MB)' % (size / 1e6, PAGE_BOUND / 1e6))
        check(size < PAGE_BOUND, 'the page (%d bytes) is under %d' % (size, PAGE_BOUND))
        print('peak RSS bound: %.0f MB' % (RSS_BOUND / 1e6))
        check(rss < RSS_BOUND, 'peak RSS %d bytes is under %d' % (rss, RSS_BOUND))
        check_page(page, manifest)
    finally:
        if os.environ.get('RP_KEEP_TMP'):
            print('kept', work)
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    print('heatmap_day: %g h' % HOURS)
    main()
    c.close()
