package jobspec

import (
	"strconv"
	"strings"
)

// PatternVars are the values an output pattern may refer to.
type PatternVars struct {
	JobID     uint64
	Name      string // %x
	User      string // %u
	Node      string // %N: the (first) node's name
	NodeIndex int    // %n: the node's index in the job, 0 for the batch step
}

// ExpandPattern replaces sbatch's file-name patterns: %j job ID, %x job
// name, %u user, %N node name, %n node index, %% a percent sign. A number
// between % and the letter zero-pads numbers to that width (%5j), as in
// Slurm. Unknown letters are kept as written, so a literal % followed by
// anything else survives.
func ExpandPattern(pattern string, v PatternVars) string {
	if !strings.Contains(pattern, "%") {
		return pattern
	}
	var b strings.Builder
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		if c != '%' || i+1 >= len(pattern) {
			b.WriteByte(c)
			continue
		}
		j := i + 1
		for j < len(pattern) && j-i <= 2 && pattern[j] >= '0' && pattern[j] <= '9' {
			j++
		}
		if j >= len(pattern) {
			b.WriteString(pattern[i:])
			break
		}
		width, _ := strconv.Atoi(pattern[i+1 : j])
		var num, text string
		switch pattern[j] {
		case 'j':
			num = strconv.FormatUint(v.JobID, 10)
		case 'n':
			num = strconv.Itoa(v.NodeIndex)
		case 'x':
			text = v.Name
		case 'u':
			text = v.User
		case 'N':
			text = v.Node
		case '%':
			if j == i+1 {
				text = "%"
				break
			}
			fallthrough
		default:
			b.WriteString(pattern[i : j+1])
			i = j
			continue
		}
		for k := len(num); num != "" && k < width; k++ {
			b.WriteByte('0')
		}
		b.WriteString(num)
		b.WriteString(text)
		i = j
	}
	return b.String()
}
