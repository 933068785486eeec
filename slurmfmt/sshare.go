package slurmfmt

import (
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/corral-hpc/corral/api"
)

// shareField is one sshare field with sshare's width.
type shareField struct {
	name  string
	width int
	value func(r *api.ShareRow) string
}

func sixDigits(f float64) string { return strconv.FormatFloat(f, 'f', 6, 64) }

// shareFields are sshare's fields corral has (sshare(1)).
var shareFields = []shareField{
	{"Account", -20, func(r *api.ShareRow) string { return strings.Repeat(" ", r.Depth) + r.Account }},
	{"User", 10, func(r *api.ShareRow) string { return r.User }},
	{"RawShares", 10, func(r *api.ShareRow) string {
		if r.Depth == 0 {
			return ""
		}
		return strconv.FormatFloat(r.RawShares, 'f', -1, 64)
	}},
	{"NormShares", 11, func(r *api.ShareRow) string { return sixDigits(r.NormShares) }},
	{"RawUsage", 11, func(r *api.ShareRow) string { return strconv.FormatFloat(r.RawUsage, 'f', 0, 64) }},
	{"EffectvUsage", 13, func(r *api.ShareRow) string { return sixDigits(r.EffectvUsage) }},
	{"FairShare", 10, func(r *api.ShareRow) string {
		if r.FairShare == nil {
			return ""
		}
		return sixDigits(*r.FairShare)
	}},
}

// SshareDefault is sshare's default field list.
const SshareDefault = "Account,User,RawShares,NormShares,RawUsage,EffectvUsage,FairShare"

// WriteShare prints rows with the fields of list (names in any case,
// each optionally with %WIDTH) as sshare does.
func WriteShare(w io.Writer, list string, rows []api.ShareRow, st AcctStyle) error {
	var cols []Column
	var fields []shareField
	for _, item := range strings.Split(list, ",") {
		name, widthText, hasWidth := strings.Cut(strings.TrimSpace(item), "%")
		i := slices.IndexFunc(shareFields, func(f shareField) bool { return strings.EqualFold(f.name, name) })
		if i < 0 {
			return formatError("Invalid field requested: \"" + name + "\"")
		}
		c := Column{Name: shareFields[i].name, Width: shareFields[i].width}
		if hasWidth {
			n, err := strconv.Atoi(widthText)
			if err != nil || n == 0 {
				return formatError("Invalid field width: \"" + item + "\"")
			}
			c.Width = n
		}
		cols, fields = append(cols, c), append(fields, shareFields[i])
	}
	values := make([][]string, len(rows))
	for i := range rows {
		values[i] = make([]string, len(fields))
		for k, f := range fields {
			values[i][k] = f.value(&rows[i])
		}
	}
	return WriteColumns(w, cols, values, st)
}
