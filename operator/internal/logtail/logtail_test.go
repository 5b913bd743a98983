package logtail

import "testing"

func TestLast(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"", 3, ""},
		{"one\n", 3, "one"},
		{"a\nb\nc\nd\n\n", 2, "c | d"},
		{"\n  a\nb", 5, "a | b"},
		{"[Note] start\n[ERROR] Plugin 'ROCKSDB' init function returned error.\n[ERROR] Aborting\n", 2,
			"[ERROR] Plugin 'ROCKSDB' init function returned error. | [ERROR] Aborting"},
	} {
		if got := Last(tc.in, tc.n); got != tc.want {
			t.Errorf("Last(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}
