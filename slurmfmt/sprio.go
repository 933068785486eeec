package slurmfmt

import (
	"strconv"
	"strings"

	"github.com/corral-hpc/corral/api"
)

// prioField is one sprio field: header, value and, for -w, the weight.
type prioField struct {
	header string
	value  func(j *api.JobPrio) string
	weight func(w api.PrioWeights) int64 // nil: not a factor
}

func part(f func(*api.JobPrio) api.PrioFactor) func(*api.JobPrio) string {
	return func(j *api.JobPrio) string { return strconv.FormatInt(f(j).Part, 10) }
}

func norm(f func(*api.JobPrio) api.PrioFactor) func(*api.JobPrio) string {
	return func(j *api.JobPrio) string { return strconv.FormatFloat(f(j).Value, 'f', 7, 64) }
}

func age(j *api.JobPrio) api.PrioFactor       { return j.Age }
func fairshare(j *api.JobPrio) api.PrioFactor { return j.Fairshare }
func jobSize(j *api.JobPrio) api.PrioFactor   { return j.JobSize }

// prioFields are sprio's -o letters corral can fill (sprio(1)).
var prioFields = map[string]prioField{
	"i": {"JOBID", func(j *api.JobPrio) string { return j.Job }, nil},
	"r": {"PARTITION", func(j *api.JobPrio) string { return j.Partition }, nil},
	"u": {"USER", func(j *api.JobPrio) string { return j.User }, nil},
	"o": {"ACCOUNT", func(j *api.JobPrio) string { return j.Account }, nil},
	"Y": {"PRIORITY", func(j *api.JobPrio) string { return strconv.FormatInt(j.Priority, 10) }, nil},
	"y": {"PRIORITY", func(j *api.JobPrio) string {
		return strconv.FormatFloat(float64(j.Priority)/float64(uint32(0xffffffff)), 'f', 8, 64)
	}, nil},
	"A": {"AGE", part(age), func(w api.PrioWeights) int64 { return w.Age }},
	"a": {"AGE", norm(age), func(w api.PrioWeights) int64 { return w.Age }},
	"F": {"FAIRSHARE", part(fairshare), func(w api.PrioWeights) int64 { return w.Fairshare }},
	"f": {"FAIRSHARE", norm(fairshare), func(w api.PrioWeights) int64 { return w.Fairshare }},
	"J": {"JOBSIZE", part(jobSize), func(w api.PrioWeights) int64 { return w.JobSize }},
	"j": {"JOBSIZE", norm(jobSize), func(w api.PrioWeights) int64 { return w.JobSize }},
	"N": {"NICE", func(j *api.JobPrio) string { return strconv.Itoa(j.Nice) }, nil},
	// Factors corral does not have: Slurm's columns, each 0.
	"S": {"SITE", zero, nil},
	"B": {"ASSOC", zero, nil},
	"b": {"ASSOC", zeroNorm, nil},
	"P": {"PARTITION", zero, nil},
	"p": {"PARTITION", zeroNorm, nil},
	"Q": {"QOS", zero, nil},
	"q": {"QOS", zeroNorm, nil},
	"T": {"TRES", func(*api.JobPrio) string { return "" }, nil},
}

func zero(*api.JobPrio) string     { return "0" }
func zeroNorm(*api.JobPrio) string { return "0.0000000" }

// SprioFormat is sprio's default format for what corral has: the job,
// its partition (and user with withUser), its priority and each factor
// with a weight (sprio leaves the others out) after the site factor;
// long shows every factor, with nice and TRES; normalized shows the
// factors in [0, 1], left-justified and without the site's. As Slurm
// 22.05 prints them (docs/slurm.md, Measured differences).
func SprioFormat(w api.PrioWeights, withUser, long, normalized bool) string {
	f := "%.15i %9r"
	if withUser || long {
		f += " %.8u"
	}
	switch {
	case long:
		f += " %.10Y %.10S %.10A %.10B %.10F %.10J %.10P %.10Q %.11N %.20T"
	case normalized:
		f += " %10y"
		for _, k := range []string{"A", "F", "J"} {
			if prioFields[k].weight(w) != 0 {
				f += " %10" + strings.ToLower(k)
			}
		}
	default:
		f += " %.10Y %.10S"
		for _, k := range []string{"A", "F", "J"} {
			if prioFields[k].weight(w) != 0 {
				f += " %.10" + k
			}
		}
	}
	return f
}

// PrioLayout is a parsed sprio format.
type PrioLayout struct {
	Fields []Field
	keys   []string
}

// NewPrioLayout resolves an sprio -o format; it returns the letters it
// does not know.
func NewPrioLayout(format string) (*PrioLayout, []string) {
	l := &PrioLayout{}
	var unknown []string
	for _, f := range ParsePercent(format) {
		if _, ok := prioFields[f.Key]; !f.Literal && !ok {
			unknown = append(unknown, f.Key)
			continue
		}
		l.Fields = append(l.Fields, f)
		l.keys = append(l.keys, f.Key)
	}
	return l, unknown
}

// Header is the layout's header line.
func (l *PrioLayout) Header() string {
	return Line(l.Fields, func(i int) string { return prioFields[l.keys[i]].header })
}

// Row is one job's line.
func (l *PrioLayout) Row(j *api.JobPrio) string {
	return Line(l.Fields, func(i int) string { return printable(prioFields[l.keys[i]].value(j)) })
}

// Weights is sprio -w's line: "Weights" under the job column, each
// factor's weight under its own, the rest empty.
func (l *PrioLayout) Weights(w api.PrioWeights) string {
	return Line(l.Fields, func(i int) string {
		f := prioFields[l.keys[i]]
		switch {
		case l.keys[i] == "i":
			return "Weights"
		case f.weight != nil:
			return strconv.FormatInt(f.weight(w), 10)
		}
		return ""
	})
}
