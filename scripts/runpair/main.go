// Command runpair times whole processes side by side: each round runs
// every variant once, in the order given, and at the end it prints, per
// variant, the minimum, first quartile and median of the wall time and of
// the process's own CPU time (user + system, from its rusage), which the
// machine's other load disturbs less than the wall time.
//
//	go run ./scripts/runpair ROUNDS 'LABEL|ENV=V ...|COMMAND ARGS' ...
//
// The environment part may be empty ('base||b/squeue -h -o %i'); the
// command's arguments are split on spaces. Run it twice with the
// variants in opposite orders (docs/benchmarks.md).
package main

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

type variant struct {
	label     string
	env, argv []string
	wall, cpu []float64 // ms per run
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "runpair:", err)
		os.Exit(2)
	}
}

func run(args []string) error {
	if len(args) < 2 {
		return fmt.Errorf("usage: runpair ROUNDS 'LABEL|ENV|COMMAND ARGS' [more variants]")
	}
	rounds, err := strconv.Atoi(args[0])
	if err != nil || rounds < 1 {
		return fmt.Errorf("ROUNDS %q: a positive number", args[0])
	}
	var vs []*variant
	for _, a := range args[1:] {
		p := strings.SplitN(a, "|", 3)
		if len(p) != 3 || len(strings.Fields(p[2])) == 0 {
			return fmt.Errorf("%q: want LABEL|ENV|COMMAND ARGS", a)
		}
		vs = append(vs, &variant{label: p[0], env: strings.Fields(p[1]), argv: strings.Fields(p[2])})
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	for range rounds {
		for _, v := range vs {
			c := exec.Command(v.argv[0], v.argv[1:]...)
			c.Env = append(os.Environ(), v.env...)
			c.Stdout, c.Stderr = devnull, os.Stderr
			start := time.Now()
			if err := c.Run(); err != nil {
				return fmt.Errorf("%s: %w", v.label, err)
			}
			v.wall = append(v.wall, float64(time.Since(start).Microseconds())/1000)
			ru := c.ProcessState.SysUsage().(*syscall.Rusage)
			v.cpu = append(v.cpu, float64(syscall.TimevalToNsec(ru.Utime)+syscall.TimevalToNsec(ru.Stime))/1e6)
		}
	}
	for _, v := range vs {
		fmt.Printf("%-24s wall min %.2f p25 %.2f median %.2f | CPU min %.2f p25 %.2f median %.2f ms\n", v.label,
			quantile(v.wall, 0), quantile(v.wall, .25), quantile(v.wall, .5),
			quantile(v.cpu, 0), quantile(v.cpu, .25), quantile(v.cpu, .5))
	}
	return nil
}

func quantile(s []float64, q float64) float64 {
	s = slices.Clone(s)
	slices.Sort(s)
	return s[int(q*float64(len(s)-1))]
}
