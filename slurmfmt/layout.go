package slurmfmt

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Field is one column of an output format: a %-letter of squeue's and
// sinfo's -o, or a field name of their -O.
type Field struct {
	Key    string // the letter ("i") or the -O name as written
	Width  int    // 0: as wide as the value
	Right  bool   // right-justified ('.' in the format)
	Suffix string // printed after the column, as written
	// Fit ('#', in sinfo's default formats) sizes the column to its
	// widest value; the caller sets Width.
	Fit bool
	// Literal is text before the first %, printed as it stands (Suffix).
	Literal bool
}

// ParsePercent reads an -o format such as "%.18i %9P %j": each field is
// %[.|-][width]letter followed by its suffix, text before the first %
// printed as is. Like Slurm it splits on every %, so %% prints nothing.
// A '-' (printf's left-justify, which Slurm does not document) is taken
// as the default left justification.
func ParsePercent(format string) []Field {
	var fields []Field
	first := strings.IndexByte(format, '%')
	if first < 0 {
		return []Field{{Literal: true, Suffix: format}}
	}
	if first > 0 {
		fields = append(fields, Field{Literal: true, Suffix: format[:first]})
	}
	for _, tok := range strings.Split(format[first+1:], "%") {
		if tok == "" {
			continue
		}
		var f Field
		i := 0
		switch tok[0] {
		case '.':
			f.Right = true
			i++
		case '-':
			i++
		case '#':
			f.Fit = true
			i++
		}
		for i < len(tok) && tok[i] >= '0' && tok[i] <= '9' {
			f.Width = f.Width*10 + int(tok[i]-'0')
			i++
		}
		if i >= len(tok) {
			continue // "%5" names no field
		}
		_, size := utf8.DecodeRuneInString(tok[i:])
		f.Key = tok[i : i+size]
		f.Suffix = tok[i+size:]
		fields = append(fields, f)
	}
	return fields
}

// ParseNames reads an -O list such as "JobID:10,State,Name:.30": each
// item is name[:[.][width][suffix]], 20 wide and left-justified unless
// it says otherwise.
func ParseNames(list string) []Field {
	var fields []Field
	for _, item := range strings.Split(list, ",") {
		if item = strings.TrimSpace(item); item == "" {
			continue
		}
		name, spec, hasSpec := strings.Cut(item, ":")
		f := Field{Key: name, Width: 20}
		if hasSpec {
			if strings.HasPrefix(spec, ".") {
				f.Right = true
				spec = spec[1:]
			}
			i := 0
			for i < len(spec) && spec[i] >= '0' && spec[i] <= '9' {
				i++
			}
			f.Width, _ = strconv.Atoi(spec[:i]) // "" is 0: as wide as the value
			f.Suffix = spec[i:]
		}
		fields = append(fields, f)
	}
	return fields
}

// Cell lays value out in f: cut to the width and padded to it on the
// side justification leaves, then the suffix, as squeue prints a column.
func (f Field) Cell(value string) string { return f.cell(value, true) }

// Whole lays value out as Cell does but never cuts it: squeue prints
// durations and node lists whole, however narrow their column.
func (f Field) Whole(value string) string { return f.cell(value, false) }

func (f Field) cell(value string, cut bool) string {
	if f.Literal {
		return f.Suffix
	}
	if f.Width > 0 {
		value = pad(value, f.Width, f.Right, cut)
	}
	return value + f.Suffix
}

// pad cuts s to width characters (when cut is set) and pads it with
// spaces to width.
func pad(s string, width int, right, cut bool) string {
	n := utf8.RuneCountInString(s)
	if n > width && !cut {
		return s
	}
	if n > width {
		k := 0
		for i := range s {
			if k == width {
				s = s[:i]
				break
			}
			k++
		}
		n = width
	}
	fill := strings.Repeat(" ", width-n)
	if right {
		return fill + s
	}
	return s + fill
}

// Line lays out one row: value(i) is the value of fields[i] (never
// asked for literals).
func Line(fields []Field, value func(i int) string) string {
	var b strings.Builder
	for i, f := range fields {
		if f.Literal {
			b.WriteString(f.Suffix)
			continue
		}
		b.WriteString(f.Cell(value(i)))
	}
	return b.String()
}
