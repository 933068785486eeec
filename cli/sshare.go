package cli

import (
	"slices"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/slurmfmt"
	"github.com/corral-hpc/corral/slurmopt"
)

const sshareUsage = `Usage: sshare [OPTIONS]
  -a, --all             every user's lines (corral shows them to everyone)
  -A, --accounts=list   only these accounts' lines
  -n, --noheader        no header lines
  -o, --format=list     fields (Account, User, RawShares, NormShares, RawUsage, EffectvUsage, FairShare; Field%WIDTH)
  -p, --parsable        '|' after every field
  -P, --parsable2       '|' between fields
  -u, --users=list      only these users' lines (accounts are always shown)
  -U, --Users           user lines only
  -V, --version         version
  -h, --help            this help
Accepted and ignored: -l, -m, -v. See docs/slurm.md.
`

func sshareCommand() *slurmCommand {
	return &slurmCommand{
		usage: sshareUsage,
		opts: withCommon(
			clusterOptions[0], clusterOptions[1],
			slurmopt.Option{Short: 'a', Long: "all"},
			slurmopt.Option{Short: 'h', Long: "help"},
			slurmopt.Option{Short: 'A', Long: "accounts", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Short: 'l', Long: "long"},
			slurmopt.Option{Short: 'm', Long: "partition"},
			slurmopt.Option{Short: 'n', Long: "noheader"},
			slurmopt.Option{Short: 'o', Long: "format", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Short: 'p', Long: "parsable"},
			slurmopt.Option{Short: 'P', Long: "parsable2"},
			slurmopt.Option{Short: 'u', Long: "users", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Short: 'U', Long: "Users"},
			slurmopt.Option{Short: 'v', Long: "verbose"},
		),
		run: sshare,
	}
}

func sshare(s *slurmRun, r *slurmopt.Result) error {
	if len(r.Args) > 0 {
		return slurmUsagef("Unrecognized option: %s", r.Args[0])
	}
	cluster, err := clustersGiven(r) // clusters.go
	if err != nil {
		return err
	}
	ctx, cancel := s.requestContext()
	defer cancel()
	resp, err := s.client().Share(ctx, dedupe(commaList(r.All("users"))))
	if err != nil {
		return err
	}
	rows := resp.Rows
	if accounts := commaList(r.All("accounts")); len(accounts) > 0 {
		rows = slices.DeleteFunc(rows, func(row api.ShareRow) bool { return !slices.Contains(accounts, row.Account) })
	}
	if r.Has("Users") {
		rows = slices.DeleteFunc(rows, func(row api.ShareRow) bool { return row.User == "" })
	}
	list := slurmfmt.SshareDefault
	if v, ok := r.Last("format"); ok {
		list = v
	}
	if cluster { // sshare prints it even with -n
		s.stdout.WriteString(clusterLine)
	}
	return slurmfmt.WriteShare(s.stdout, list, rows, accountingStyle(r)) // sacct.go
}
