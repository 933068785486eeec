package cli

import (
	"testing"

	"github.com/corral-hpc/corral/api"
)

// sacctmgr's lookups, Snakemake's among them, answered from the share
// tree: bob may charge ml (his default) and chem; carol, whom no account
// lists, charges the default account.
func TestSacctmgr(t *testing.T) {
	f := MustFakeCtld(t)
	f.share = api.ShareResponse{DefaultAccount: "default", Rows: []api.ShareRow{
		{Account: "root", NormShares: 1},
		{Account: "chem", Depth: 1, RawShares: 1},
		{Account: "chem", User: "bob", Parent: "chem", Depth: 2, RawShares: 1},
		{Account: "ml", Depth: 1, RawShares: 2},
		{Account: "ml", User: "bob", Parent: "ml", Depth: 2, RawShares: 3, Default: true},
	}}
	for _, tt := range []struct {
		args []string
		want string
	}{
		// Snakemake 7.21's slurm executor, checking slurm_account.
		{[]string{"-n", "-s", "list", "user", "bob", "format=account%20"},
			"                  ml \n                chem \n"},
		{[]string{"show", "user", "bob"},
			"      User   Def Acct     Admin \n---------- ---------- --------- \n       bob         ml      None \n"},
		{[]string{"-nP", "show", "user", "bob", "withassoc", "format=User,DefaultAccount,Account"},
			"bob|ml|ml\nbob|ml|chem\n"},
		{[]string{"-nP", "list", "user", "carol", "withassoc", "format=User,DefaultAccount,Account"},
			"carol|default|default\n"},
		{[]string{"-nP", "list", "accounts", "format=Account,ParentName"}, "chem|\nml|\n"},
		{[]string{"-np", "list", "associations", "Accounts=chem", "format=account,user"}, "chem||\nchem|bob|\n"},
	} {
		r := f.slurm(t, "", "sacctmgr", tt.args...)
		if r.code != 0 || r.stdout != tt.want {
			t.Errorf("sacctmgr %q: exit %d stdout %q stderr %q, want %q", tt.args, r.code, r.stdout, r.stderr, tt.want)
		}
	}
	if reqs := f.Requests(); reqs[0].Path != "/v1/share" || reqs[0].Query.Get("user") != "bob" {
		t.Errorf("first request %s?%s, want /v1/share?user=bob", reqs[0].Path, reqs[0].Query.Encode())
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"add", "user", "eve"}, "sacctmgr: error: corral takes its accounts from its configuration (docs/scheduling.md): add is not available\n"},
		{[]string{"list", "qos"}, "sacctmgr: error: Unknown entity: qos (corral lists user, account and association)\n"},
		{[]string{"list", "user", "format=Color"}, "sacctmgr: error: Unknown field 'Color' (corral has User, DefaultAccount, Account, Admin, ParentName, Share)\n"},
	} {
		if r := f.slurm(t, "", "sacctmgr", tt.args...); r.code != 1 || r.stderr != tt.want {
			t.Errorf("sacctmgr %q: exit %d stderr %q, want %q", tt.args, r.code, r.stderr, tt.want)
		}
	}
}
