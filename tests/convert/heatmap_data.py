"""tests/convert/heatmap_data.py -- the heatmap page's data, decoded by the tests.

The page (`ringprof convert --format heatmap`) carries its data in two elements
(docs/profiles.md, "The heatmap page's data"): META, JSON in
<script id="heatmap-meta">, and BLOB, base64 of a zlib stream in
<script id="heatmap-blob">, holding LEB128 varint sections. This module reads
them with Python's own base64, zlib and json, never with the page's code, so a
test that compares what it decodes with a writer's manifest checks the
converter and the format, not the page against itself.

    page = Page.read(path)
    page.meta                      the META object
    page.path(node)                frame names from the root's child to `node`
    page.entries["cpu"]            [(bucket, leaf, thread, samples, weight), ...]
    page.thread_names[thread]      the thread's label ("[worker-1]")
    page.density["cpu"]            [(bucket, thread, samples, weight), ...] on the
                                   density's own axis (meta["density"])
    page.bucket_of(wall_ns)        the bucket a time stamp falls in
"""
import base64
import json
import re
import zlib


def varints(data, pos, end):
    """Yield the unsigned LEB128 numbers of data[pos:end]."""
    while pos < end:
        v, shift = 0, 0
        while True:
            b = data[pos]
            pos += 1
            v |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        yield v


class Page:
    def __init__(self, text):
        self.text = text
        m = re.search(r'<script id="heatmap-meta" type="application/json">(.*?)</script>',
                      text, re.S)
        b = re.search(r'<script id="heatmap-blob" type="application/octet-stream">(.*?)'
                      r'</script>', text, re.S)
        if not m or not b:
            raise ValueError("no heatmap-meta or heatmap-blob element")
        self.meta = json.loads(m.group(1))
        self.blob_b64 = b.group(1)
        self.blob = zlib.decompress(base64.b64decode(b.group(1), validate=True))
        self.sections = {name: (off, off + n) for name, off, n in self.meta["sections"]}
        self._nodes()
        self.thread_names = [t["name"] for t in self.meta["threads"]]
        self.entries, self.density = {}, {}
        for k in self.meta["kinds"]:
            self.entries[k["name"]] = self._kind(k["section"])
            self.density[k["name"]] = [(b, t, n, w) for b, leaf, t, n, w in
                                       self._kind("density:" + k["name"])]

    @classmethod
    def read(cls, path):
        with open(path, encoding="utf-8") as f:
            return cls(f.read())

    def _nodes(self):
        n = self.meta["nnodes"]
        lo, hi = self.sections["nodes"]
        nums = list(varints(self.blob, lo, hi))
        if len(nums) != 2 * (n - 1):
            raise ValueError("nodes section holds %d numbers for %d nodes" % (len(nums), n))
        self.parent = [-1] + [0] * (n - 1)
        self.frame = [-1] + [0] * (n - 1)
        for i in range(1, n):
            self.parent[i] = i - nums[2 * (i - 1)]
            self.frame[i] = nums[2 * (i - 1) + 1]
            if self.parent[i] < 0:
                raise ValueError("node %d's parent is before the root" % i)
        fr = self.meta["frames"]
        self.frame_names = [self.meta["strings"][fr[2 * f]] for f in range(len(fr) // 2)]
        self.frame_types = [fr[2 * f + 1] for f in range(len(fr) // 2)]

    def _kind(self, section):
        lo, hi = self.sections[section]
        it = varints(self.blob, lo, hi)
        out, bucket = [], 0
        for delta in it:
            bucket += delta
            m, leaf = next(it), 0
            if m < 1:
                raise ValueError("an empty bucket group")
            for _ in range(m):
                leaf += next(it)
                thread = next(it)
                if thread >= len(self.thread_names):
                    raise ValueError("entry names thread %d of %d" % (thread,
                                                                      len(self.thread_names)))
                out.append((bucket, leaf, thread, next(it), next(it)))
        return out

    def name(self, node):
        return self.frame_names[self.frame[node]]

    def type(self, node):
        return self.frame_types[self.frame[node]]

    def path(self, node):
        """Frame names from the root's child (the root-most frame) down to node."""
        out = []
        while node > 0:
            out.append(self.name(node))
            node = self.parent[node]
        return out[::-1]

    def bucket_of(self, wall_ns, axis=None):
        """The bucket of wall_ns on the stacks' axis (or `axis`: meta["density"])."""
        a = axis or self.meta
        return wall_ns // (a["bucket_ms"] * 1000000) - a["t0_ms"] // a["bucket_ms"]

    def telemetry(self, name):
        return [s for s in self.meta["telemetry"] if s["name"] == name]
