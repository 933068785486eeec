package api

import (
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// An image's label lists its apps as NAME:PORT; the environment names
// each app's base path and port, upper-cased with - as _.
func TestAppsLabelAndEnvironment(t *testing.T) {
	apps, err := ParseAppsLabel("jupyter:8888, tensor-board:6006,")
	want := []App{{Name: "jupyter", Port: 8888}, {Name: "tensor-board", Port: 6006}}
	if err != nil || !reflect.DeepEqual(apps, want) {
		t.Fatalf("label: %+v, %v; want %+v", apps, err, want)
	}
	if _, err := ParseAppsLabel("jupyter:88"); err == nil || err.Error() != "label corral.apps: app jupyter: port 88 is not in 1024-65535" {
		t.Errorf("a bad label: %v", err)
	}
	env := AppEnv(12, apps)
	wantEnv := [][2]string{{"CORRAL_APP_JUPYTER_URL", "/apps/12/jupyter/"}, {"CORRAL_APP_JUPYTER_PORT", "8888"},
		{"CORRAL_APP_TENSOR_BOARD_URL", "/apps/12/tensor-board/"}, {"CORRAL_APP_TENSOR_BOARD_PORT", "6006"}}
	if !reflect.DeepEqual(env, wantEnv) {
		t.Errorf("environment %v, want %v", env, wantEnv)
	}
}

// The hand-written name check accepts exactly what the documented
// pattern does, at its edges (empty, 32 and 33 bytes, each class's
// bounds, upper case, multi-byte runes).
func TestAppNameMatchesPattern(t *testing.T) {
	pattern := regexp.MustCompile(`^[a-z0-9-]{1,32}$`)
	names := []string{"", "a", "z", "0", "9", "-", "jupyter", "tensor-board", "A", "Jupyter", "a_b", "a b",
		"a/b", "a.b", "`", "{", "/", ":", "@", "[", "é", "日本", "a\n", "a\x00",
		strings.Repeat("a", 31), strings.Repeat("a", 32), strings.Repeat("a", 33), strings.Repeat("-", 32)}
	for c := 0; c < 256; c++ {
		names = append(names, string(rune(c)), "x"+string([]byte{byte(c)}))
	}
	for _, n := range names {
		if got, want := validAppName(n), pattern.MatchString(n); got != want {
			t.Errorf("validAppName(%q) = %v, the pattern says %v", n, got, want)
		}
		if err := CheckApp(App{Name: n, Port: 8888}); (err == nil) != pattern.MatchString(n) {
			t.Errorf("CheckApp(%q): %v", n, err)
		}
	}
}
