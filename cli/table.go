package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

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

// writeJSON prints v indented, as the one document on stdout.
func writeJSON(w io.Writer, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", data)
	return err
}

// formatSize prints bytes the way sinfo users read them: 1.0G, 512.0M.
func formatSize(b int64) string {
	if b <= 0 {
		return "0"
	}
	for _, u := range []struct {
		suffix string
		size   int64
	}{{"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}} {
		if b >= u.size {
			return fmt.Sprintf("%.1f%s", float64(b)/float64(u.size), u.suffix)
		}
	}
	return fmt.Sprintf("%dB", b)
}
