package jobspec

import (
	"reflect"
	"testing"

	"github.com/corral-hpc/corral/api"
)

// --app is repeatable, keeps the order given, and refuses a bad name, a
// port outside 1024-65535, a missing port and a name given twice, each
// with one line naming the option.
func TestAppOption(t *testing.T) {
	r := MustParseArgs(t, "--app", "jupyter=8888", "--app=tb-2=6006")
	want := []api.App{{Name: "jupyter", Port: 8888}, {Name: "tb-2", Port: 6006}}
	if !reflect.DeepEqual(r.Spec.Apps, want) {
		t.Fatalf("apps %+v, want %+v", r.Spec.Apps, want)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--app", "Jupyter=8888"}, `invalid --app: app name "Jupyter": 1 to 32 of a-z, 0-9 and -`},
		{[]string{"--app", "j=80"}, "invalid --app: app j: port 80 is not in 1024-65535"},
		{[]string{"--app", "j=70000"}, "invalid --app: app j: port 70000 is not in 1024-65535"},
		{[]string{"--app", "jupyter"}, `invalid --app: app "jupyter": give NAME=PORT, such as jupyter=8888`},
		{[]string{"--app", "j=x"}, `invalid --app: app "j=x": port "x" is not a number`},
		{[]string{"--app", "a=2000", "--app", "a=2001"}, "invalid --app \"a=2001\": an app is already named a"},
		{[]string{"--app", "abcdefghijklmnopqrstuvwxyz0123456=2000"}, `invalid --app: app name "abcdefghijklmnopqrstuvwxyz0123456": 1 to 32 of a-z, 0-9 and -`},
	} {
		_, err := ParseAt(append(tc.args, "job.sh"), newScripts("job.sh", plain).read, testNow)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q: got %v\nwant %s", tc.args, err, tc.want)
		}
	}
}

// The controller judges apps as sent, without the CLI's parsing: a bad
// one, a name or port used twice, and too many are all refused.
func TestValidateApps(t *testing.T) {
	for _, tc := range []struct {
		apps []api.App
		want string
	}{
		{[]api.App{{Name: "a", Port: 2000}, {Name: "b", Port: 2001}}, ""},
		{[]api.App{{Name: "a b", Port: 2000}}, `invalid --app: app name "a b": 1 to 32 of a-z, 0-9 and -`},
		{[]api.App{{Name: "a", Port: 2000}, {Name: "a", Port: 2001}}, "invalid --app: two apps are named a"},
		{[]api.App{{Name: "a", Port: 2000}, {Name: "b", Port: 2000}}, "invalid --app: a and b both use port 2000"},
		{make([]api.App, api.MaxApps+1), "--app: at most 16 apps per job, not 17"},
	} {
		s := validSpec()
		s.Apps = tc.apps
		got := ""
		if err := validate(&s, testNow, true); err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%+v: got %q, want %q", tc.apps, got, tc.want)
		}
	}
}
