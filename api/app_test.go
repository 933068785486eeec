package api

import (
	"reflect"
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
