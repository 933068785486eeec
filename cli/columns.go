package cli

import (
	"bufio"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter/pkg/twwidth"
)

// bigTable is the row count from which writeTable lays out columns itself
// (writeTableFast) instead of through tablewriter, which took over ten
// seconds and half a gigabyte for the 100,000 rows of a big queue
// (docs/benchmarks.md, Load). TestFastTableMatchesTablewriter holds the
// two to the same output.
const bigTable = 500

// writeTableFast prints what writeTable prints: cells left-aligned, each
// column as wide as its widest cell (display width, as tablewriter counts
// it) plus two spaces, no trailing blanks.
func writeTableFast(w io.Writer, header []string, rows [][]string) error {
	widths := make([]int, len(header))
	measure := func(row []string) {
		for j, cell := range row {
			if j < len(widths) {
				widths[j] = max(widths[j], cellWidth(cell))
			}
		}
	}
	measure(header)
	for _, row := range rows {
		measure(row)
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	var line strings.Builder
	emit := func(row []string) {
		line.Reset()
		for j := range widths {
			cell := ""
			if j < len(row) {
				cell = row[j]
			}
			line.WriteString(cell)
			if j < len(widths)-1 {
				line.WriteString(strings.Repeat(" ", widths[j]-cellWidth(cell)+2))
			}
		}
		bw.WriteString(strings.TrimRight(line.String(), " "))
		bw.WriteByte('\n')
	}
	emit(header)
	for _, row := range rows {
		emit(row)
	}
	return bw.Flush()
}

// cellWidth is a printable cell's display width: its length when ASCII,
// else what tablewriter measures.
func cellWidth(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return twwidth.Width(s)
		}
	}
	return len(s)
}
