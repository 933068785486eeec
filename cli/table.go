package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// writeTable prints rows under header in squeue's plain style: no borders
// or rules, columns left-aligned and two spaces apart, no trailing blanks.
func writeTable(w io.Writer, header []string, rows [][]string) error {
	if len(rows) >= bigTable { // tablefast.go
		clean := make([][]string, len(rows))
		for i, row := range rows {
			clean[i] = make([]string, len(row))
			for j, cell := range row {
				clean[i][j] = printable(cell)
			}
		}
		return writeTableFast(w, header, clean)
	}
	var buf bytes.Buffer
	cells := tw.CellConfig{
		Formatting: tw.CellFormatting{AutoFormat: tw.Off, AutoWrap: tw.WrapNone},
		Alignment:  tw.CellAlignment{Global: tw.AlignLeft},
		Padding:    tw.CellPadding{Global: tw.Padding{Left: "", Right: "  ", Overwrite: true}},
	}
	t := tablewriter.NewTable(&buf,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders:  tw.BorderNone,
			Symbols:  tw.NewSymbols(tw.StyleNone),
			Settings: tw.Settings{Lines: tw.LinesNone, Separators: tw.SeparatorsNone},
		})),
		tablewriter.WithConfig(tablewriter.Config{Header: cells, Row: cells}),
		tablewriter.WithTrimSpace(tw.Off),
	)
	t.Header(header)
	clean := make([][]string, len(rows))
	for i, row := range rows {
		clean[i] = make([]string, len(row))
		for j, cell := range row {
			clean[i][j] = printable(cell)
		}
	}
	if err := t.Bulk(clean); err != nil {
		return err
	}
	if err := t.Render(); err != nil {
		return err
	}
	lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	_, err := io.WriteString(w, strings.Join(lines, "\n")+"\n")
	return err
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
