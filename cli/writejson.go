package cli

import (
	"encoding/json"
	"fmt"
	"io"
)

// writeJSON prints v indented, as the one document on stdout.
func writeJSON(w io.Writer, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", data)
	return err
}
