package jobspec

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/corral-hpc/corral/api"
)

// SubmitUmask is the umask a job runs with (api.JobSpec.Umask), chosen as
// sbatch chooses SLURM_UMASK: the submitter's SLURM_UMASK when it is set,
// else the submitter's own umask (current). A SLURM_UMASK that is not an
// octal mode is an error, not silently replaced.
func SubmitUmask(env LookupFunc, current uint32) (string, error) {
	if v, ok := env("SLURM_UMASK"); ok {
		m, err := api.ParseUmask(v)
		if err != nil || v == "" {
			return "", fmt.Errorf("SLURM_UMASK=%q is not an octal mode between 0000 and 0777", v)
		}
		return api.FormatUmask(m), nil
	}
	return api.FormatUmask(current), nil
}

// ProcessUmask reads the "Umask:" line of /proc/self/status (Linux 4.7+):
// reading it, unlike umask(2), does not change the mask even for a moment.
func ProcessUmask(status io.Reader) (uint32, error) {
	sc := bufio.NewScanner(status)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Umask:"); ok {
			m, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32)
			if err != nil || m > 0o777 {
				return 0, fmt.Errorf("unreadable Umask line %q", sc.Text())
			}
			return uint32(m), nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no Umask line")
}
