package config

import (
	"strings"
	"testing"
)

func TestAccessLines(t *testing.T) {
	f, err := ParseFile(strings.NewReader("PartitionName=batch Nodes=ALL\nAdminUsers=alice,bob SharedView=YES\n"), "t")
	if err != nil {
		t.Fatal(err)
	}
	if !f.Access.IsAdmin("alice") || !f.Access.IsAdmin("bob") || f.Access.IsAdmin("carol") || !f.Access.SharedView {
		t.Errorf("access %+v", f.Access)
	}
	if f, _ := ParseFile(strings.NewReader("PartitionName=batch Nodes=ALL\n"), "t"); f.Access.SharedView || len(f.Access.Admins) != 0 {
		t.Errorf("default access %+v", f.Access)
	}
	f, err = ParseFile(strings.NewReader("PartitionName=batch Nodes=ALL\nOperatorUsers=carol,dave\n"), "t")
	if err != nil {
		t.Fatal(err)
	}
	if !f.Access.IsOperator("carol") || !f.Access.IsOperator("dave") || f.Access.IsOperator("alice") || f.Access.IsAdmin("carol") {
		t.Errorf("operators %+v", f.Access)
	}
	for text, want := range map[string]string{
		"OperatorUsers=a,,b":         "OperatorUsers=a,,b: give user names",
		"SharedView=maybe":           "SharedView=maybe: use YES or NO",
		"AdminUsers=a,,b":            "give user names",
		"AdminUsers=a\nAdminUsers=b": "AdminUsers is already set on line 2",
		"SharedView=YES Bogus=1":     "unknown key Bogus on an access line",
	} {
		_, err := ParseFile(strings.NewReader("PartitionName=batch Nodes=ALL\n"+text+"\n"), "t")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", text, err, want)
		}
	}
}
