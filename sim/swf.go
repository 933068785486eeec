package sim

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Job is one line of a Standard Workload Format trace. Times are seconds;
// -1 means unknown, as in the format.
type Job struct {
	ID          int64   // 1
	Submit      int64   // 2: seconds since the trace start
	Wait        int64   // 3
	Run         int64   // 4: actual run time
	Procs       int64   // 5: allocated processors
	AvgCPU      float64 // 6: average CPU time used
	Memory      float64 // 7: used memory (KB per processor)
	ReqProcs    int64   // 8
	ReqTime     int64   // 9: the user's estimate (time limit)
	ReqMemory   float64 // 10
	Status      int64   // 11
	User        int64   // 12
	Group       int64   // 13
	Executable  int64   // 14
	Queue       int64   // 15
	Partition   int64   // 16
	PrecedingID int64   // 17
	ThinkTime   int64   // 18
	// corral's extension, three optional fields after the 18 of SWF
	// (0 or -1: none): the array job this job is a task of, that array's
	// %N limit, and 1 for a singleton (one job of its user and executable
	// runs at a time). They replay the limits the controller keeps.
	Array     int64 // 19
	ArrayMax  int64 // 20
	Singleton int64 // 21
}

// Trace is a parsed SWF file.
type Trace struct {
	// Header holds "; Key: value" lines from the header, e.g. MaxProcs.
	Header map[string]string
	Jobs   []Job
}

// MaxProcs is the machine size the header declares (MaxProcs, else
// MaxNodes times the processors of a node); 0 if it declares none. Logs
// of machines with several partitions give the whole and then the parts,
// as in SDSC DataStar's "; MaxProcs: 1664 (72, 1368, 224)": the first
// number is the machine.
func (t *Trace) MaxProcs() int {
	if n := headerCount(t.Header["MaxProcs"]); n > 0 {
		return n
	}
	nodes := headerCount(t.Header["MaxNodes"])
	if nodes <= 0 {
		return 0
	}
	return nodes * t.procsPerNode(nodes)
}

// headerCount is the leading whole number of a header value, 0 if none.
func headerCount(v string) int {
	v = strings.TrimSpace(v)
	if i := strings.IndexFunc(v, func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
		v = v[:i]
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// procsPerNode is how many processors a node has in a log whose header
// gives only MaxNodes (the format's versions before 2.1 had no
// MaxProcs). Where jobs hold processors, not nodes, some job holds more
// than the machine has nodes, and every job then holds whole nodes: the
// node size is the smallest divisor of all the jobs' processor counts
// that gives the widest job room. Otherwise a node is one processor.
func (t *Trace) procsPerNode(nodes int) int {
	var common, widest int64
	for _, j := range t.Jobs {
		p := j.Procs
		if p <= 0 {
			p = j.ReqProcs
		}
		if p > 0 {
			common, widest = gcd(common, p), max(widest, p)
		}
	}
	if widest <= int64(nodes) {
		return 1
	}
	for d := int64(2); d <= common; d++ {
		if common%d == 0 && int64(nodes)*d >= widest {
			return int(d)
		}
	}
	return 1
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

var fieldNames = [21]string{"job number", "submit time", "wait time", "run time",
	"allocated processors", "average CPU time", "used memory", "requested processors",
	"requested time", "requested memory", "status", "user id", "group id",
	"executable", "queue", "partition", "preceding job", "think time",
	"array job", "array limit", "singleton"}

// floatFields may hold fractions; every other field is an integer.
var floatFields = map[int]bool{5: true, 6: true, 9: true}

// timeFields may hold fractions too (the format allows them); they are
// rounded to the second the replay counts in.
var timeFields = map[int]bool{1: true, 2: true, 3: true, 8: true, 17: true}

// ParseSWF reads a trace. Header and comment lines start with ';'; every
// other non-blank line must have exactly 18 numeric fields, or 21 with
// corral's extension (Job.Array, ArrayMax, Singleton). Time fields may
// have fractions, rounded to the second; counts may not. The error for
// bad input names the line and the field.
//
// The archive serves its logs gzipped (.swf.gz): gzipped input, told by
// its first bytes, is read as the trace it holds.
func ParseSWF(r io.Reader) (*Trace, error) {
	br := bufio.NewReader(r)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		defer zr.Close()
		r = zr
	} else {
		r = br
	}
	t := &Trace{Header: map[string]string{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		if strings.HasPrefix(text, ";") {
			if k, v, ok := strings.Cut(strings.TrimPrefix(text, ";"), ":"); ok {
				if k = strings.TrimSpace(k); k != "" && !strings.ContainsAny(k, " \t") {
					t.Header[k] = strings.TrimSpace(v)
				}
			}
			continue
		}
		j, err := parseJob(text)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		t.Jobs = append(t.Jobs, j)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", line+1, err)
	}
	return t, nil
}

func parseJob(text string) (Job, error) {
	f := strings.Fields(text)
	if len(f) != 18 && len(f) != 21 {
		return Job{}, fmt.Errorf("want 18 fields, got %d", len(f)) // 21 with the extension
	}
	var v [21]float64
	for i, s := range f {
		x, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return Job{}, fmt.Errorf("field %d (%s): %q is not a number", i+1, fieldNames[i], s)
		}
		if timeFields[i] && math.Abs(x) <= 1<<53 {
			x = math.Round(x)
		}
		if !floatFields[i] && (x != math.Trunc(x) || math.Abs(x) > 1<<53) {
			return Job{}, fmt.Errorf("field %d (%s): %q is not a whole number", i+1, fieldNames[i], s)
		}
		v[i] = x
	}
	n := func(i int) int64 { return int64(v[i]) }
	return Job{ID: n(0), Submit: n(1), Wait: n(2), Run: n(3), Procs: n(4), AvgCPU: v[5],
		Memory: v[6], ReqProcs: n(7), ReqTime: n(8), ReqMemory: v[9], Status: n(10),
		User: n(11), Group: n(12), Executable: n(13), Queue: n(14), Partition: n(15),
		PrecedingID: n(16), ThinkTime: n(17), Array: n(18), ArrayMax: n(19), Singleton: n(20)}, nil
}

// Format writes j as one SWF line (no newline), with corral's extension
// only if j uses it; ParseSWF reads it back to the same Job.
func (j Job) Format() string {
	i := func(x int64) string { return strconv.FormatInt(x, 10) }
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	f := []string{i(j.ID), i(j.Submit), i(j.Wait), i(j.Run), i(j.Procs),
		g(j.AvgCPU), g(j.Memory), i(j.ReqProcs), i(j.ReqTime), g(j.ReqMemory), i(j.Status),
		i(j.User), i(j.Group), i(j.Executable), i(j.Queue), i(j.Partition),
		i(j.PrecedingID), i(j.ThinkTime)}
	if j.Array != 0 || j.ArrayMax != 0 || j.Singleton != 0 {
		f = append(f, i(j.Array), i(j.ArrayMax), i(j.Singleton))
	}
	return strings.Join(f, " ")
}
