package cli

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/corral-hpc/corral/api"
)

// sprio's and corral prio's factors and sort order (-S).

// prioFactor is one factor column: its header, its sort letter and where
// it is in a JobPrio.
type prioFactor struct {
	header string
	letter byte
	get    func(*api.JobPrio) api.PrioFactor
	weight func(api.PrioWeights) int64
}

// prioFactors in sprio's column order.
var prioFactors = []prioFactor{
	{"AGE", 'a', func(j *api.JobPrio) api.PrioFactor { return j.Age }, func(w api.PrioWeights) int64 { return w.Age }},
	{"FAIRSHARE", 'f', func(j *api.JobPrio) api.PrioFactor { return j.Fairshare }, func(w api.PrioWeights) int64 { return w.Fairshare }},
	{"JOBSIZE", 'j', func(j *api.JobPrio) api.PrioFactor { return j.JobSize }, func(w api.PrioWeights) int64 { return w.JobSize }},
}

// prioSortKey is one field of a sort spec.
type prioSortKey struct {
	letter     byte
	descending bool
}

// parsePrioSort reads sprio's -S: letters, commas ignored, each letter
// optionally after + or -. A letter without a sign takes its natural
// order: highest first for priority and factors, ascending for the rest.
func parsePrioSort(spec string) ([]prioSortKey, error) {
	if spec == "" {
		return []prioSortKey{{letter: 'i'}}, nil
	}
	var keys []prioSortKey
	sign := byte(0)
	for i := 0; i < len(spec); i++ {
		ch := spec[i]
		switch {
		case ch == ',' || ch == ' ':
			if sign != 0 {
				return nil, usageErrorf("invalid sort %q: %c must come right before a field letter", spec, sign)
			}
			continue
		case ch == '+' || ch == '-':
			if sign != 0 {
				return nil, usageErrorf("invalid sort %q: %c must come right before a field letter", spec, sign)
			}
			sign = ch
			continue
		}
		natural, ok := prioSortFields[ch]
		if !ok {
			return nil, usageErrorf("invalid sort field %q in %q (valid: i job ID, y priority, u user, r or p partition, a age, f fairshare, j job size, N nice)", string(ch), spec)
		}
		key := prioSortKey{letter: ch, descending: natural}
		if sign != 0 {
			key.descending = sign == '-'
		}
		keys, sign = append(keys, key), 0
	}
	if sign != 0 {
		return nil, usageErrorf("invalid sort %q: %c must come right before a field letter", spec, sign)
	}
	if len(keys) == 0 {
		return nil, usageErrorf("invalid sort %q: give at least one field letter", spec)
	}
	return keys, nil
}

// prioSortFields maps sprio's sort letters to whether they sort highest
// first without a sign. sprio's weighted (upper case) and normalized
// letters sort alike.
var prioSortFields = map[byte]bool{
	'i': false, 'u': false, 'r': false, 'p': false, 'P': false, 'N': false,
	'y': true, 'Y': true, 'a': true, 'A': true, 'f': true, 'F': true, 'j': true, 'J': true,
}

// sortPrio orders jobs by keys, ties by job ID.
func sortPrio(jobs []api.JobPrio, keys []prioSortKey) {
	slices.SortStableFunc(jobs, func(a, b api.JobPrio) int {
		for _, k := range keys {
			c := comparePrio(&a, &b, k.letter)
			if k.descending {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return cmp.Compare(a.JobID, b.JobID)
	})
}

func comparePrio(a, b *api.JobPrio, letter byte) int {
	switch letter {
	case 'i':
		return cmp.Compare(a.JobID, b.JobID)
	case 'u':
		return strings.Compare(a.User, b.User)
	case 'r', 'p', 'P':
		return strings.Compare(a.Partition, b.Partition)
	case 'N':
		return cmp.Compare(a.Nice, b.Nice)
	case 'y', 'Y':
		return cmp.Compare(a.Priority, b.Priority)
	}
	for _, f := range prioFactors {
		if f.letter == letter|0x20 { // a/A, f/F, j/J
			return cmp.Compare(f.get(a).Value, f.get(b).Value)
		}
	}
	panic(fmt.Sprintf("prio: unhandled sort letter %c", letter))
}
