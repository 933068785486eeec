package cli

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/slurmfmt"
	"github.com/corral-hpc/corral/slurmopt"
)

// sacctmgr answers the lookups scripts and pipeline engines make of
// Slurm's accounting database: which accounts a user may charge
// (Snakemake's `sacctmgr -n -s list user $USER format=account%20`), a
// user's default account, the accounts there are. corral's accounts are
// its configuration's (docs/scheduling.md); it changes none.
const sacctmgrUsage = `Usage: sacctmgr [OPTIONS] list|show ENTITY [SPECS]
  ENTITY: user[s], account[s], association[s]
  SPECS:  NAME ... (users, or accounts), Names=LIST, Users=LIST,
          Accounts=LIST, WithAssoc, Format=FIELD[%WIDTH],...
  fields: User, DefaultAccount, Account, Admin, ParentName, Share
  -n, --noheader        no header lines
  -p, --parsable        '|' after every field
  -P, --parsable2       '|' between fields
  -s, --associations    list a user's or an account's associations
  -V, --version         version
  -h, --help            this help
Accepted and ignored: -i, -Q, -v. corral changes no accounts: add,
modify and delete are refused. See docs/slurm.md.
`

func sacctmgrCommand() *slurmCommand {
	return &slurmCommand{
		usage: sacctmgrUsage,
		opts: withCommon(
			slurmopt.Option{Short: 'h', Long: "help"},
			slurmopt.Option{Short: 'n', Long: "noheader"},
			slurmopt.Option{Short: 'p', Long: "parsable"},
			slurmopt.Option{Short: 'P', Long: "parsable2"},
			slurmopt.Option{Short: 's', Long: "associations"},
			slurmopt.Option{Short: 'i', Long: "immediate"},
			slurmopt.Option{Short: 'Q', Long: "quiet"},
			slurmopt.Option{Short: 'v', Long: "verbose"},
		),
		run: sacctmgr,
	}
}

// sacctmgrField is one column: its header, default width and value.
type sacctmgrField struct {
	header string
	width  int
	value  func(a *sacctmgrAssoc) string
}

// sacctmgrAssoc is one row: a user's association with an account, or an
// account alone (user "").
type sacctmgrAssoc struct {
	user, account, parent string
	defAccount            string // the user's default account
	isDefault             bool   // account is defAccount
	shares                float64
}

var sacctmgrFields = map[string]sacctmgrField{
	"user":           {"User", 10, func(a *sacctmgrAssoc) string { return a.user }},
	"defaultaccount": {"Def Acct", 10, func(a *sacctmgrAssoc) string { return a.defAccount }},
	"account":        {"Account", 10, func(a *sacctmgrAssoc) string { return a.account }},
	"admin": {"Admin", 9, func(a *sacctmgrAssoc) string {
		if a.user == "root" {
			return "Administrator"
		}
		return "None"
	}},
	"parentname": {"Par Name", 10, func(a *sacctmgrAssoc) string { return a.parent }},
	"share": {"Share", 9, func(a *sacctmgrAssoc) string {
		return strconv.FormatFloat(a.shares, 'f', -1, 64)
	}},
}

func sacctmgr(s *slurmRun, r *slurmopt.Result) error {
	args := r.Args
	if len(args) == 0 {
		return slurmUsagef("no command given: sacctmgr list user|account|association")
	}
	switch strings.ToLower(args[0]) {
	case "list", "show", "ls":
	case "add", "create", "modify", "update", "delete", "remove", "archive", "load", "dump":
		return slurmErrorf("corral takes its accounts from its configuration (docs/scheduling.md): %s is not available", args[0])
	default:
		return slurmErrorf("Unknown command: %s (corral answers list and show)", args[0])
	}
	if len(args) < 2 {
		return slurmUsagef("list what? user, account or association")
	}
	entity := strings.ToLower(strings.TrimSuffix(args[1], "s"))
	var format string
	switch entity {
	case "user":
		format = "User,DefaultAccount,Admin"
		if r.Has("associations") {
			format = "User,DefaultAccount,Admin,Account,Share"
		}
	case "account":
		format = "Account,ParentName"
		if r.Has("associations") {
			format = "Account,ParentName,User,Share"
		}
	case "association":
		format = "Account,User,Share"
	default:
		return slurmErrorf("Unknown entity: %s (corral lists user, account and association)", args[1])
	}
	withAssoc := r.Has("associations") || entity == "association"
	var names, users, accounts []string
	for _, a := range args[2:] {
		key, value, kv := strings.Cut(a, "=")
		switch k := strings.ToLower(key); {
		case !kv && (k == "withassoc" || k == "withassocs"):
			withAssoc = true
			if entity == "user" && !r.Has("associations") {
				format = "User,DefaultAccount,Admin,Account,Share"
			}
		case !kv && k == "where":
		case !kv:
			names = append(names, a)
		case k == "format":
			format = value
		case k == "name" || k == "names":
			names = append(names, commaList([]string{value})...)
		case k == "user" || k == "users":
			users = append(users, commaList([]string{value})...)
		case k == "account" || k == "accounts":
			accounts = append(accounts, commaList([]string{value})...)
		default:
			return slurmErrorf("Unknown condition: %s", a)
		}
	}
	if entity == "account" {
		accounts = append(accounts, names...)
	} else {
		users = append(users, names...)
	}
	cols, fields, err := sacctmgrLayout(format)
	if err != nil {
		return err
	}
	ctx, cancel := s.requestContext()
	defer cancel()
	resp, err := s.client().Share(ctx, dedupe(users))
	if err != nil {
		return err
	}
	rows := sacctmgrRows(resp, entity, withAssoc, dedupe(users))
	if len(accounts) > 0 {
		rows = slices.DeleteFunc(rows, func(a sacctmgrAssoc) bool { return !slices.Contains(accounts, a.account) })
	}
	values := make([][]string, len(rows))
	for i := range rows {
		values[i] = make([]string, len(fields))
		for k, f := range fields {
			values[i][k] = f.value(&rows[i])
		}
	}
	return slurmfmt.WriteColumns(s.stdout, cols, values, accountingStyle(r)) // sacct.go
}

// sacctmgrLayout reads a format list (Field or Field%WIDTH, commas).
func sacctmgrLayout(format string) ([]slurmfmt.Column, []sacctmgrField, error) {
	var cols []slurmfmt.Column
	var fields []sacctmgrField
	for _, item := range commaList([]string{format}) {
		name, width, hasWidth := strings.Cut(item, "%")
		f, ok := sacctmgrFields[strings.ToLower(name)]
		if !ok {
			return nil, nil, slurmErrorf("Unknown field '%s' (corral has User, DefaultAccount, Account, Admin, ParentName, Share)", name)
		}
		w := f.width
		if hasWidth {
			n, err := strconv.Atoi(width)
			if err != nil || n == 0 {
				return nil, nil, slurmErrorf("Invalid field width in '%s'", item)
			}
			w = n
		}
		cols = append(cols, slurmfmt.Column{Name: f.header, Width: w})
		fields = append(fields, f)
	}
	if len(fields) == 0 {
		return nil, nil, slurmErrorf("No fields in format '%s'", format)
	}
	return cols, fields, nil
}

// sacctmgrRows are the rows of entity from the share tree. A user asked
// for by name that no account lists and that has no usage yet is in the
// default account, where its jobs go.
func sacctmgrRows(resp *api.ShareResponse, entity string, withAssoc bool, users []string) []sacctmgrAssoc {
	var rows []sacctmgrAssoc
	seen := map[string]bool{}
	for _, row := range resp.Rows {
		a := sacctmgrAssoc{user: row.User, account: row.Account, parent: row.Parent, isDefault: row.Default, shares: row.RawShares}
		if row.Account == "root" && row.Depth == 0 {
			continue // the tree's root: not an account of Slurm's listings
		}
		if row.User != "" && len(users) > 0 && !slices.Contains(users, row.User) {
			continue
		}
		switch {
		case entity == "association":
			rows = append(rows, a)
		case entity == "account" && row.User == "":
			rows = append(rows, a)
		case entity == "account" && withAssoc:
			rows = append(rows, a)
		case row.User == "":
		case entity == "user" && !withAssoc:
			if row.Default && !seen[row.User] {
				seen[row.User] = true
				rows = append(rows, a)
			}
		case entity != "account":
			seen[row.User] = true
			rows = append(rows, a)
		}
	}
	if entity != "user" {
		return rows // the tree's order: each account, then its users
	}
	for _, u := range users {
		if !seen[u] {
			rows = append(rows, sacctmgrAssoc{user: u, account: resp.DefaultAccount, isDefault: true, shares: 1})
		}
	}
	defaults := map[string]string{}
	for _, a := range rows {
		if a.isDefault {
			defaults[a.user] = a.account
		}
	}
	for i := range rows {
		rows[i].defAccount = cmp.Or(defaults[rows[i].user], resp.DefaultAccount)
	}
	// Users in name order, each user's default account first.
	slices.SortStableFunc(rows, func(a, b sacctmgrAssoc) int {
		if c := strings.Compare(a.user, b.user); c != 0 {
			return c
		}
		switch {
		case a.isDefault == b.isDefault:
			return strings.Compare(a.account, b.account)
		case a.isDefault:
			return -1
		}
		return 1
	})
	return rows
}
