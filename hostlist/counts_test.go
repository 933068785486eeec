package hostlist

import "testing"

func TestCompressCounts(t *testing.T) {
	for _, c := range []struct {
		counts []int
		want   string
	}{
		{nil, ""},
		{[]int{1}, "1"},
		{[]int{2, 2}, "2(x2)"},
		{[]int{2, 2, 1}, "2(x2),1"},
		{[]int{72, 72, 36, 72}, "72(x2),36,72"},
		{[]int{1, 2, 3}, "1,2,3"},
		{[]int{4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4}, "4(x12)"},
	} {
		if got := CompressCounts(c.counts); got != c.want {
			t.Errorf("CompressCounts(%v) = %q, want %q", c.counts, got, c.want)
		}
	}
}
