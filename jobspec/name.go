package jobspec

import (
	"crypto/rand"
	"fmt"
	"math/big"
	"unicode"
	"unicode/utf8"
)

// MaxJobName is the longest --job-name, in bytes: slurmctld's limit on a
// job's name.
const MaxJobName = 1024

// ValidJobName reports whether s is a name Slurm accepts: 1 to
// MaxJobName bytes of printable UTF-8 (spaces, '=', ':', '+', '/' and the
// like included), with no control character such as a newline or tab,
// which would break squeue's and sacct's one-line-per-job output.
func ValidJobName(s string) bool {
	if len(s) == 0 || len(s) > MaxJobName || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) && r != ' ' {
			return false
		}
	}
	return true
}

// CheckJobName returns the one-line error for a --job-name ValidJobName
// refuses, nil for a good one.
func CheckJobName(s string) error {
	if ValidJobName(s) {
		return nil
	}
	return fmt.Errorf("invalid --job-name %s: use 1 to %d bytes of printable text, without newlines, tabs or other control characters", quoteValue(s), MaxJobName)
}

// DefaultJobName is a job's name when it gives none: the script's file
// name (as sbatch does) when that is a valid name, else a short readable
// random one.
func DefaultJobName(scriptBase string) string {
	if ValidJobName(scriptBase) {
		return scriptBase
	}
	return RandomJobName()
}

var (
	nameAdjectives = []string{"amber", "brisk", "calm", "dapper", "eager", "fuzzy", "gentle", "hazy", "icy", "jolly",
		"keen", "lucid", "mellow", "nimble", "oaken", "plucky", "quiet", "rapid", "sunny", "tidy", "umber", "vivid",
		"witty", "young", "zesty"}
	nameNouns = []string{"badger", "comet", "delta", "ember", "falcon", "glacier", "heron", "island", "jaguar",
		"kestrel", "lagoon", "meadow", "nebula", "otter", "pebble", "quartz", "raven", "summit", "tundra", "urchin",
		"valley", "walrus", "yak", "zephyr"}
)

// RandomJobName is adjective-noun-NNNN, e.g. "brisk-otter-4821".
func RandomJobName() string {
	pick := func(n int) int {
		v, err := rand.Int(rand.Reader, big.NewInt(int64(n)))
		if err != nil {
			return 0
		}
		return int(v.Int64())
	}
	return fmt.Sprintf("%s-%s-%04d", nameAdjectives[pick(len(nameAdjectives))], nameNouns[pick(len(nameNouns))], pick(10000))
}
