//go:build !slurmonly

package cli

import (
	"bufio"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/mattn/go-runewidth"
)

// writeColumns lays out printable cells: left-aligned, each column as
// wide as its widest cell (display width: a CJK character takes two
// columns) plus two spaces, no trailing blanks. It is corral's own rather
// than a table library's: tablewriter took over ten seconds and half a
// gigabyte for the 100,000 rows of a big queue (docs/benchmarks.md,
// Load), and its width tables, built at start-up, cost every command
// (the Slurm names included) 0.7 MB and a few milliseconds.
func writeColumns(w io.Writer, header []string, rows [][]string) error {
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
// else the terminal columns its characters take.
func cellWidth(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return runewidth.StringWidth(s)
		}
	}
	return len(s)
}

// writeTable prints rows under header in squeue's plain style: no borders
// or rules, columns left-aligned and two spaces apart, no trailing blanks.
func writeTable(w io.Writer, header []string, rows [][]string) error {
	clean := make([][]string, len(rows))
	for i, row := range rows {
		clean[i] = make([]string, len(row))
		for j, cell := range row {
			clean[i][j] = printable(cell)
		}
	}
	return writeColumns(w, header, clean)
}

// printable keeps a cell on one line: names come from users, and a
// newline or escape sequence in one must not forge rows or colours.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return '?'
		}
		return r
	}, s)
}
