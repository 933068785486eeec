package config

import (
	"fmt"
	"strings"
)

// setLine applies one settings line: its fields are KEY=VALUE with keys
// from keys (kind names such a line in errors: "a step line"), each key
// at most once in the whole file (settings remembers the line of each,
// shared by every kind of line); apply sets one key, and its error is
// the line's.
func setLine(fields []string, lineNo int, settings map[string]int, kind string, keys []string, apply func(key, v string) error) error {
	for _, f := range fields {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return fmt.Errorf("%q is not KEY=VALUE", f)
		}
		key := canonicalIn(k, keys)
		if key == "" {
			return fmt.Errorf("unknown key %s on %s (valid: %s)", k, kind, strings.Join(keys, ", "))
		}
		if prev, dup := settings[key]; dup {
			if prev == lineNo {
				return fmt.Errorf("%s is given twice", key)
			}
			return fmt.Errorf("%s is already set on line %d", key, prev)
		}
		settings[key] = lineNo
		if err := apply(key, v); err != nil {
			return err
		}
	}
	return nil
}
