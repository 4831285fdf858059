"""tests/convert/otlp_read.py -- OTLP profiles as the tests read them.

Two readers that end in the same plain structure, so one set of checks runs
on each: `decode` reads the protobuf `ringprof convert --format otlp` writes
(opentelemetry-proto profiles/v1development, v1.10.0/v1.11.0 field numbers,
written out here from the .proto, not from the converter), `from_json` reads
what the OpenTelemetry Collector's file exporter writes (pdata's JSON, which
moves resource attributes' keys and string values into the string table:
keyStrindex, stringValueStrindex). The structure:

  {"resources": [{"attrs": {key: value}, "scope": (name, version),
                  "profiles": [{"type": (type, unit), "period_type": (t, u) or
                                None, "period": n, "time": ns, "duration": ns,
                                "id": hex, "attrs": [index],
                                "samples": [{"stack": i, "attrs": [index],
                                             "values": [v], "timestamps": [t]}]}]}],
   "dict": {"strings": [...], "mappings": [filename index], "locations":
            [{"mapping": i, "lines": [(function, line)], "attrs": [index]}],
            "functions": [(name, system_name, filename) indexes],
            "stacks": [[location]], "attributes": [(key index, value)],
            "links": [(trace_id hex, span_id hex)]}}

`stacks_of(req, profile)` then gives a profile's samples as (frames root
first, attributes by key, value), each frame (name, file, line, attrs by key).
"""
import struct

from consumers import pb_fields, packed

# ExportProfilesServiceRequest and what it holds: field numbers.
REQ = {1: "resources", 2: "dict"}


def _str(b):
    return b.decode("utf-8")     # strict: a string that is not UTF-8 fails


def _int64(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def _any(buf):
    for f, v in pb_fields(buf):
        if f == 1:
            return _str(v)
        if f == 3:
            return _int64(v)
        if f == 2:
            return bool(v)
    return None


def _keyvalue(buf):
    key, val = None, None
    for f, v in pb_fields(buf):
        if f == 1:
            key = _str(v)
        elif f == 2:
            val = _any(v)
    return key, val


def _valuetype(buf):
    t = u = 0
    for f, v in pb_fields(buf):
        if f == 1:
            t = v
        elif f == 2:
            u = v
    return (t, u)


def _indices(v):
    return packed(v)


def _fixed64s(v):
    if isinstance(v, int):
        return [v]
    return [struct.unpack("<Q", v[i:i + 8])[0] for i in range(0, len(v), 8)]


def _sample(buf):
    s = {"stack": 0, "attrs": [], "values": [], "timestamps": [], "link": 0}
    for f, v in pb_fields(buf):
        if f == 1:
            s["stack"] = v
        elif f == 2:
            s["attrs"] += _indices(v)
        elif f == 3:
            s["link"] = v
        elif f == 4:
            s["values"] += [_int64(x) for x in packed(v)]
        elif f == 5:
            s["timestamps"] += _fixed64s(v)
    return s


def _profile(buf):
    p = {"type": None, "period_type": None, "period": 0, "time": 0, "duration": 0,
         "id": "", "attrs": [], "samples": [], "wire": {}}
    for f, v in pb_fields(buf):
        p["wire"].setdefault(f, type(v).__name__)
        if f == 1:
            p["type"] = _valuetype(v)
        elif f == 2:
            p["samples"].append(_sample(v))
        elif f == 3:
            p["time"] = struct.unpack("<Q", v)[0]
        elif f == 4:
            p["duration"] = v
        elif f == 5:
            p["period_type"] = _valuetype(v)
        elif f == 6:
            p["period"] = _int64(v)
        elif f == 7:
            p["id"] = v.hex()
        elif f == 11:
            p["attrs"] += _indices(v)
    return p


def _resource(buf):
    r = {"attrs": {}, "scope": ("", ""), "profiles": []}
    for f, v in pb_fields(buf):
        if f == 1:                                   # Resource
            for rf, rv in pb_fields(v):
                if rf == 1:
                    k, val = _keyvalue(rv)
                    r["attrs"][k] = val
        elif f == 2:                                 # ScopeProfiles
            for sf, sv in pb_fields(v):
                if sf == 1:
                    name = version = ""
                    for qf, qv in pb_fields(sv):
                        if qf == 1:
                            name = _str(qv)
                        elif qf == 2:
                            version = _str(qv)
                    r["scope"] = (name, version)
                elif sf == 2:
                    r["profiles"].append(_profile(sv))
    return r


def _dictionary(buf):
    d = {"strings": [], "mappings": [], "locations": [], "functions": [], "stacks": [],
         "attributes": [], "links": []}
    for f, v in pb_fields(buf):
        if f == 1:
            fn = 0
            for mf, mv in pb_fields(v):
                if mf == 4:
                    fn = mv
            d["mappings"].append(fn)
        elif f == 2:
            loc = {"mapping": 0, "lines": [], "attrs": []}
            for lf, lv in pb_fields(v):
                if lf == 1:
                    loc["mapping"] = lv
                elif lf == 3:
                    fun = line = 0
                    for xf, xv in pb_fields(lv):
                        if xf == 1:
                            fun = xv
                        elif xf == 2:
                            line = _int64(xv)
                    loc["lines"].append((fun, line))
                elif lf == 4:
                    loc["attrs"] += _indices(lv)
            d["locations"].append(loc)
        elif f == 3:
            fun = [0, 0, 0]
            for ff, fv in pb_fields(v):
                if 1 <= ff <= 3:
                    fun[ff - 1] = fv
            d["functions"].append(tuple(fun))
        elif f == 4:
            ids = ["", ""]
            for kf, kv in pb_fields(v):
                if kf in (1, 2):
                    ids[kf - 1] = kv.hex()
            d["links"].append(tuple(ids))
        elif f == 5:
            d["strings"].append(_str(v))
        elif f == 6:
            key, val = 0, None
            for af, av in pb_fields(v):
                if af == 1:
                    key = av
                elif af == 2:
                    val = _any(av)
            d["attributes"].append((key, val))
        elif f == 7:
            st = []
            for sf, sv in pb_fields(v):
                if sf == 1:
                    st += _indices(sv)
            d["stacks"].append(st)
    return d


def decode(data):
    """An ExportProfilesServiceRequest's bytes as the structure above."""
    req = {"resources": [], "dict": None}
    for f, v in pb_fields(data):
        if f == 1:
            req["resources"].append(_resource(v))
        elif f == 2:
            if req["dict"] is not None:
                raise ValueError("two dictionaries")
            req["dict"] = _dictionary(v)
    return req


# --------------------------------------------------------- pdata's JSON -- #

def _jint(v):
    return int(v) if v is not None else 0


def _jany(a, strings):
    if not a:
        return None
    if "stringValue" in a:
        return a["stringValue"]
    if "stringValueStrindex" in a:           # pdata moves strings to the table
        return strings[int(a["stringValueStrindex"])]
    if "intValue" in a:
        return int(a["intValue"])
    if "boolValue" in a:
        return a["boolValue"]
    return None


def _jvt(v):
    return (_jint(v.get("typeStrindex")), _jint(v.get("unitStrindex"))) if v else None


def from_json(doc):
    """One line of the file exporter's output (a ProfilesData in JSON) as the
    structure above."""
    d = doc.get("dictionary", {})
    strings = d.get("stringTable", [])
    out = {"resources": [], "dict": {
        "strings": strings,
        "mappings": [_jint(m.get("filenameStrindex")) for m in d.get("mappingTable", [])],
        "locations": [{"mapping": _jint(l.get("mappingIndex")),
                       "lines": [(_jint(x.get("functionIndex")), _jint(x.get("line")))
                                 for x in l.get("lines", [])],
                       "attrs": [int(i) for i in l.get("attributeIndices", [])]}
                      for l in d.get("locationTable", [])],
        "functions": [(_jint(f.get("nameStrindex")), _jint(f.get("systemNameStrindex")),
                       _jint(f.get("filenameStrindex"))) for f in d.get("functionTable", [])],
        "stacks": [[int(i) for i in s.get("locationIndices", [])]
                   for s in d.get("stackTable", [])],
        "attributes": [(_jint(a.get("keyStrindex")), _jany(a.get("value"), strings))
                       for a in d.get("attributeTable", [])],
        "links": [(l.get("traceId", ""), l.get("spanId", "")) for l in d.get("linkTable", [])],
    }}
    for rp in doc.get("resourceProfiles", []):
        r = {"attrs": {a["key"] if "key" in a else strings[_jint(a.get("keyStrindex"))]:
                       _jany(a.get("value"), strings)
                       for a in rp.get("resource", {}).get("attributes", [])},
             "scope": ("", ""), "profiles": []}
        for sp in rp.get("scopeProfiles", []):
            sc = sp.get("scope", {})
            r["scope"] = (sc.get("name", ""), sc.get("version", ""))
            for p in sp.get("profiles", []):
                r["profiles"].append({
                    "type": _jvt(p.get("sampleType")),
                    "period_type": _jvt(p.get("periodType")),
                    "period": _jint(p.get("period")),
                    "time": _jint(p.get("timeUnixNano")),
                    "duration": _jint(p.get("durationNano")),
                    "id": p.get("profileId", ""),
                    "attrs": [int(i) for i in p.get("attributeIndices", [])],
                    "samples": [{"stack": _jint(s.get("stackIndex")),
                                 "attrs": [int(i) for i in s.get("attributeIndices", [])],
                                 "values": [int(v) for v in s.get("values", [])],
                                 "timestamps": [int(t) for t in
                                                s.get("timestampsUnixNano", [])],
                                 "link": _jint(s.get("linkIndex"))}
                                for s in p.get("samples", [])]})
        out["resources"].append(r)
    return out


# ------------------------------------------------------------ reading -- #

def attrs_of(req, indices):
    """Attribute indexes as {key: value}."""
    d = req["dict"]
    return {d["strings"][d["attributes"][i][0]]: d["attributes"][i][1] for i in indices}


def type_of(req, profile):
    s = req["dict"]["strings"]
    t = profile["type"]
    return (s[t[0]], s[t[1]])


def stacks_of(req, profile):
    """The samples of a profile: (frames root first, {attribute: value}, value);
    a frame is (name, filename, line, {attribute: value})."""
    d = req["dict"]
    s = d["strings"]
    out = []
    for smp in profile["samples"]:
        frames = []
        for li in reversed(d["stacks"][smp["stack"]]):
            loc = d["locations"][li]
            fn, line = loc["lines"][0]
            name, _, filename = d["functions"][fn]
            frames.append((s[name], s[filename], line, attrs_of(req, loc["attrs"])))
        out.append((frames, attrs_of(req, smp["attrs"]), smp["values"][0]))
    return out
