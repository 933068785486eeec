package slurmfmt

import (
	"reflect"
	"testing"
)

func TestParsePercent(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []Field
	}{
		{"%i", []Field{{Key: "i"}}},
		{"%.18i %9P", []Field{{Key: "i", Width: 18, Right: true, Suffix: " "}, {Key: "P", Width: 9}}},
		{"%-10j|%5t", []Field{{Key: "j", Width: 10, Suffix: "|"}, {Key: "t", Width: 5}}},
		{"id=%i,", []Field{{Literal: true, Suffix: "id="}, {Key: "i", Suffix: ","}}},
		{"plain", []Field{{Literal: true, Suffix: "plain"}}},
		{"%i%%%t", []Field{{Key: "i"}, {Key: "t"}}},
		{"%5", nil},
	} {
		if got := ParsePercent(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParsePercent(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

func TestParseNames(t *testing.T) {
	got := ParseNames("JobID:10,State, Name:.30x,UserName:")
	want := []Field{{Key: "JobID", Width: 10}, {Key: "State", Width: 20}, {Key: "Name", Width: 30, Right: true, Suffix: "x"}, {Key: "UserName"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseNames = %+v, want %+v", got, want)
	}
}

func TestCell(t *testing.T) {
	for _, tc := range []struct {
		f    Field
		in   string
		want string
	}{
		{Field{Key: "i"}, "12345", "12345"},
		{Field{Key: "i", Width: 8, Right: true}, "42", "      42"},
		{Field{Key: "j", Width: 8}, "ab", "ab      "},
		{Field{Key: "j", Width: 4}, "abcdefgh", "abcd"},
		{Field{Key: "j", Width: 4, Right: true}, "abcdefgh", "abcd"},
		{Field{Key: "j", Width: 3, Suffix: "|"}, "ééééé", "ééé|"},
		{Field{Literal: true, Suffix: "x="}, "ignored", "x="},
	} {
		if got := tc.f.Cell(tc.in); got != tc.want {
			t.Errorf("%+v.Cell(%q) = %q, want %q", tc.f, tc.in, got, tc.want)
		}
	}
}
