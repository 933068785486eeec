package jobspec

import (
	"crypto/rand"
	"fmt"
	"math/big"
)

// MaxJobName is the longest --job-name.
const MaxJobName = 64

// ValidJobName reports whether s is 1 to 64 letters, digits, '.', '_' and
// '-': a name that is safe in file patterns (%x), shell variables and
// command lines without quoting.
func ValidJobName(s string) bool {
	if len(s) == 0 || len(s) > MaxJobName {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
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
	return fmt.Errorf("invalid --job-name %s: use 1 to %d letters, digits, '.', '_' and '-'", quoteValue(s), MaxJobName)
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
