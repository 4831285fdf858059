// tests/convert/jfrparser — reads a .jfr with github.com/grafana/jfr-parser, the
// parser inside Grafana Pyroscope, and prints what it found, for the jfr tests.
//
//	jfrparser -rate HZ FILE.jfr
//	jfrparser -metadata FILE.jfr
//
// -metadata prints the file's metadata as jfr-parser reads it, "field TYPE NAME
// FIELD-TYPE CP ARRAY" a line (CP, ARRAY: true or false), so a test can set a
// writer's declarations beside those of a recording the JDK made.
//
// Three readings of the file, each printed as tab-separated lines:
//
//   - "walk TYPE N": every event of the chunk decoded field by field against the
//     file's own metadata (as jfr-parser reads it), with the widths the JDK
//     writes: an int at most 5 bytes and 32 bits, a short or char 3 bytes and 16
//     bits, a long 9 bytes, a boolean 0 or 1, a float 4 bytes, a double 8; every
//     event and every constant pool must end where its size says, and every
//     constant-pool reference must name an entry of its pool (0 may be null).
//     A failure is an "error ..." line and exit status 1.
//   - "parser TYPE N": the events jfr-parser's parser package returns
//     (ParseEvent), by type.
//   - what Pyroscope ingests (jfr-parser's pprof.ParseJFR, as Pyroscope's
//     /ingest?format=jfr calls it with sampleRate HZ): "total METRIC TYPE/UNIT
//     SUM" per profile and sample type, "stack TYPE/UNIT FRAMES VALUE" per
//     sample, frames root first, ';'-separated, as collapsed stacks name them:
//     a Java frame package.Class.method_[j] (the function Pyroscope names
//     package/Class.method), any other frame its method (Pyroscope:
//     library.method), ';' in a name as ':' and a control character as '?'
//     (tests/convert/jfr_readers.py puts every reader's frames in one form); and
//     "metrics NAME N" for the stacks, classes and methods the conversion could
//     not find.
//
// Exit status: 0 read, 1 the file is wrong (the error lines say where), 2 usage.
package main

import (
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/grafana/jfr-parser/parser"
	"github.com/grafana/jfr-parser/parser/types"
	"github.com/grafana/jfr-parser/parser/types/def"
	"github.com/grafana/jfr-parser/pprof"
)

func main() {
	rate := flag.Int64("rate", 100, "samples per second, Pyroscope's sampleRate")
	meta := flag.Bool("metadata", false, "print the metadata's fields")
	flag.Parse()
	if flag.NArg() != 1 || *rate <= 0 {
		fmt.Fprintln(os.Stderr, "usage: jfrparser -rate HZ FILE.jfr | jfrparser -metadata FILE.jfr")
		os.Exit(2)
	}
	buf, err := os.ReadFile(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "jfrparser:", err)
		os.Exit(1)
	}
	ok := true
	p := parser.NewParser(buf, parser.Options{SymbolProcessor: parser.ProcessSymbols})
	if *meta {
		// The metadata is read before the pools: a pool's error still prints it.
		if _, err := p.ParseEvent(); err != nil && !errors.Is(err, io.EOF) {
			fmt.Printf("error\tjfr-parser: %v\n", err)
			ok = false
		}
		for _, c := range p.TypeMap.IDMap {
			for _, f := range c.Fields {
				t := p.TypeMap.IDMap[f.Type]
				if t == nil {
					fmt.Printf("error\t%s.%s: unknown type %d\n", c.Name, f.Name, f.Type)
					os.Exit(1)
				}
				fmt.Printf("field\t%s\t%s\t%s\t%t\t%t\n", c.Name, f.Name, t.Name,
					f.ConstantPool, f.Array)
			}
		}
		if !ok {
			os.Exit(1)
		}
		return
	}
	counts := map[string]int{}
	for {
		typ, err := p.ParseEvent()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				fmt.Printf("error\tjfr-parser: %v\n", err)
				ok = false
			}
			break
		}
		counts[p.TypeMap.IDMap[typ].Name]++
	}
	printCounts("parser", counts)
	if ok {
		w := walker{buf: buf, tm: &p.TypeMap, pools: map[def.TypeID]map[uint64]bool{}}
		if err := w.chunk(); err != nil {
			fmt.Printf("error\twalk: %v\n", err)
			ok = false
		}
		printCounts("walk", w.counts)
		if err := pyroscope(buf, *rate, p, &w); err != nil {
			fmt.Printf("error\tpprof: %v\n", err)
			ok = false
		}
	}
	if !ok {
		os.Exit(1)
	}
}

func printCounts(what string, counts map[string]int) {
	names := make([]string, 0, len(counts))
	for n := range counts {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Printf("%s\t%s\t%d\n", what, n, counts[n])
	}
}

// ---------------------------------------------------------------- Pyroscope --

func pyroscope(buf []byte, rate int64, p *parser.Parser, w *walker) error {
	h := p.ChunkHeader()
	start := time.Unix(0, int64(h.StartNanos))
	in := &pprof.ParseInput{StartTime: start,
		EndTime: start.Add(time.Duration(h.DurationNanos)), SampleRate: rate}
	res, err := pprof.ParseJFR(buf, in, nil)
	if err != nil {
		return err
	}
	m := res.ParseMetrics
	fmt.Printf("metrics\tstacktrace_not_found\t%d\nmetrics\tclass_not_found\t%d\n"+
		"metrics\tmethod_not_found\t%d\n", m.StacktraceNotFound, m.ClassNotFound,
		m.MethodNotFound)
	display := displayNames(p, w)
	for _, prof := range res.Profiles {
		pr := prof.Profile
		str := func(i int64) string { return pr.StringTable[i] }
		fn := map[uint64]string{}
		for _, f := range pr.Function {
			name := str(f.Name)
			if d, ok := display[name]; ok {
				name = d
			}
			fn[f.Id] = collapsedName(name)
		}
		loc := map[uint64]string{}
		for _, l := range pr.Location {
			names := []string{}
			for _, line := range l.Line {
				names = append(names, fn[line.FunctionId])
			}
			loc[l.Id] = strings.Join(names, ";")
		}
		for i, st := range pr.SampleType {
			vt := str(st.Type) + "/" + str(st.Unit)
			var sum int64
			for _, s := range pr.Sample {
				frames := make([]string, len(s.LocationId))
				for k, id := range s.LocationId { // leaf first in pprof
					frames[len(frames)-1-k] = loc[id]
				}
				sum += s.Value[i]
				fmt.Printf("stack\t%s\t%s\t%d\n", vt, strings.Join(frames, ";"), s.Value[i])
			}
			fmt.Printf("total\t%s\t%s\t%d\n", prof.Metric, vt, sum)
		}
	}
	return nil
}

// collapsedName is name as collapsed stacks write it (docs/profiles.md).
func collapsedName(name string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == ';':
			return ':'
		case r < 0x20 || r == 0x7f:
			return '?'
		}
		return r
	}, name)
}

// displayNames maps each function name Pyroscope makes (class symbol + "." +
// method) to the name ringprof's collapsed stacks give that frame: for a Java
// frame the class dotted and a JIT frame's suffix (any Java frame's: Pyroscope
// keeps no frame type), for a native, C++, kernel or marker frame the method;
// for a method of both kinds of frame (a Java native method, such as
// Object.wait, is either), which Pyroscope makes one function, the method.
// jfr-parser keeps no frame type; the walker saw each frame's.
func displayNames(p *parser.Parser, w *walker) map[string]string {
	out := map[string]string{}
	for fr := range w.frames {
		m := p.GetMethod(types.MethodRef(fr.method))
		if m == nil {
			continue
		}
		cls := p.GetClass(m.Type)
		if cls == nil {
			continue
		}
		clsName, name := p.GetSymbolString(cls.Name), p.GetSymbolString(m.Name)
		d := name
		switch w.frameTypes[fr.typ] {
		case "Interpreted", "JIT compiled", "Inlined":
			d = strings.ReplaceAll(clsName, "/", ".") + "." + name + "_[j]"
		}
		key := clsName + "." + name
		if prev, ok := out[key]; ok && prev != d {
			d = name
		}
		out[key] = d
	}
	return out
}

// ------------------------------------------------------------------ walker --

// walker decodes the chunk by its metadata, strictly (see the top of the file).
type walker struct {
	buf    []byte
	pos    int
	tm     *def.TypeMap
	counts map[string]int
	pools  map[def.TypeID]map[uint64]bool // entries of each pool
	refs   []ref                          // every reference, checked at the end

	frames     map[frame]bool    // every (method, frame type) of a stack
	frameTypes map[uint64]string // the jdk.types.FrameType pool
	last       string            // the string value() read last
}

type frame struct{ method, typ uint64 }

type ref struct {
	typ def.TypeID
	id  uint64
	at  int
}

func (w *walker) fail(format string, args ...interface{}) error {
	return fmt.Errorf("at byte %d: %s", w.pos, fmt.Sprintf(format, args...))
}

// varint reads a varint of at most max bytes whose value fits bits bits.
func (w *walker) varint(max int, bits uint) (uint64, error) {
	var v uint64
	for i := 0; i < 9; i++ {
		if w.pos >= len(w.buf) {
			return 0, w.fail("varint runs past the end")
		}
		b := w.buf[w.pos]
		w.pos++
		if i == 8 {
			v |= uint64(b) << 56
		} else {
			v |= uint64(b&0x7f) << (7 * uint(i))
		}
		if i == 8 || b < 0x80 {
			if i+1 > max {
				return 0, w.fail("a %d-bit value written in %d bytes (at most %d)", bits, i+1, max)
			}
			if bits < 64 && v>>bits != 0 {
				return 0, w.fail("value %#x does not fit %d bits", v, bits)
			}
			return v, nil
		}
	}
	return v, nil
}

func (w *walker) skip(n int) error {
	if n < 0 || w.pos+n > len(w.buf) {
		return w.fail("%d bytes run past the end", n)
	}
	w.pos += n
	return nil
}

func (w *walker) chunk() error {
	if len(w.buf) < 68 || string(w.buf[:4]) != "FLR\x00" {
		return w.fail("not a JFR chunk")
	}
	size := int(binary.BigEndian.Uint64(w.buf[8:]))
	if size != len(w.buf) {
		return w.fail("chunk size %d, file %d bytes", size, len(w.buf))
	}
	w.counts = map[string]int{}
	w.frames = map[frame]bool{}
	w.frameTypes = map[uint64]string{}
	w.pos = 68
	for w.pos < size {
		start := w.pos
		n, err := w.varint(9, 64)
		if err != nil {
			return err
		}
		end := start + int(n)
		if n == 0 || end > size {
			return w.fail("event size %d", n)
		}
		typ, err := w.varint(9, 64)
		if err != nil {
			return err
		}
		switch typ {
		case 0: // metadata: jfr-parser has read it
			w.pos = end
			w.counts["jdk.Metadata"]++
			continue
		case 1:
			err = w.checkpoint()
			w.counts["jdk.CheckPoint"]++
		default:
			c := w.tm.IDMap[def.TypeID(typ)]
			if c == nil {
				return w.fail("event of unknown type %d", typ)
			}
			w.counts[c.Name]++
			err = w.fields(c, 0)
		}
		if err != nil {
			return err
		}
		if w.pos != end {
			return w.fail("the event of type %d ends at %d, its size says %d", typ, w.pos, end)
		}
	}
	for _, r := range w.refs {
		if r.id != 0 && !w.pools[r.typ][r.id] {
			c := w.tm.IDMap[r.typ]
			return fmt.Errorf("at byte %d: %s id %d is in no pool", r.at, c.Name, r.id)
		}
	}
	return nil
}

func (w *walker) checkpoint() error {
	for _, what := range []string{"start", "duration", "delta"} {
		if _, err := w.varint(9, 64); err != nil {
			return fmt.Errorf("checkpoint %s: %w", what, err)
		}
	}
	if _, err := w.varint(1, 8); err != nil { // flush: a boolean
		return err
	}
	pools, err := w.varint(5, 32)
	if err != nil {
		return err
	}
	for i := uint64(0); i < pools; i++ {
		typ, err := w.varint(9, 64)
		if err != nil {
			return err
		}
		c := w.tm.IDMap[def.TypeID(typ)]
		if c == nil {
			return w.fail("pool of unknown type %d", typ)
		}
		n, err := w.varint(5, 32)
		if err != nil {
			return err
		}
		entries := w.pools[c.ID]
		if entries == nil {
			entries = map[uint64]bool{}
			w.pools[c.ID] = entries
		}
		for k := uint64(0); k < n; k++ {
			id, err := w.varint(9, 64)
			if err != nil {
				return err
			}
			if entries[id] {
				return w.fail("%s id %d twice", c.Name, id)
			}
			entries[id] = true
			if err := w.fields(c, 0); err != nil {
				return fmt.Errorf("%s id %d: %w", c.Name, id, err)
			}
			if c.Name == "jdk.types.FrameType" {
				w.frameTypes[id] = w.last
			}
		}
	}
	return nil
}

func (w *walker) fields(c *def.Class, depth int) error {
	if depth > 8 {
		return w.fail("%s nests too deep", c.Name)
	}
	var fr frame
	defer func() {
		if c.Name == "jdk.types.StackFrame" {
			w.frames[fr] = true
		}
	}()
	for i := range c.Fields {
		f := &c.Fields[i]
		n := uint64(1)
		if f.Array {
			var err error
			if n, err = w.varint(5, 32); err != nil {
				return err
			}
		}
		for k := uint64(0); k < n; k++ {
			if err := w.value(f, depth); err != nil {
				return fmt.Errorf("%s.%s: %w", c.Name, f.Name, err)
			}
		}
		if f.ConstantPool && !f.Array && f.Name == "method" {
			fr.method = w.refs[len(w.refs)-1].id
		} else if f.ConstantPool && !f.Array && f.Name == "type" {
			fr.typ = w.refs[len(w.refs)-1].id
		}
	}
	return nil
}

func (w *walker) value(f *def.Field, depth int) error {
	t := w.tm.IDMap[f.Type]
	if t == nil {
		return w.fail("field of unknown type %d", f.Type)
	}
	if f.ConstantPool {
		at := w.pos
		id, err := w.varint(9, 64)
		w.refs = append(w.refs, ref{f.Type, id, at})
		return err
	}
	var err error
	switch t.Name {
	case "long":
		_, err = w.varint(9, 64)
	case "int":
		_, err = w.varint(5, 32)
	case "short", "char":
		_, err = w.varint(3, 16)
	case "byte":
		err = w.skip(1)
	case "boolean":
		var v uint64
		if v, err = w.varint(1, 8); err == nil && v > 1 {
			err = w.fail("boolean %d", v)
		}
	case "float":
		err = w.skip(4)
	case "double":
		err = w.skip(8)
	case "java.lang.String":
		err = w.str()
	default:
		err = w.fields(t, depth+1)
	}
	return err
}

func (w *walker) str() error {
	if err := w.skip(1); err != nil {
		return err
	}
	switch enc := w.buf[w.pos-1]; enc {
	case 0, 1:
		return nil
	case 2:
		_, err := w.varint(9, 64)
		return err
	case 3, 5:
		n, err := w.varint(5, 32)
		if err != nil {
			return err
		}
		if err := w.skip(int(n)); err != nil {
			return err
		}
		w.last = string(w.buf[w.pos-int(n) : w.pos])
		return nil
	case 4:
		n, err := w.varint(5, 32)
		for i := uint64(0); err == nil && i < n; i++ {
			_, err = w.varint(3, 16)
		}
		return err
	default:
		return w.fail("string encoding %d", enc)
	}
}
