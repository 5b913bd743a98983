package observe

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestReplyShapes pins the JSON the runner and the operator read: an /end that counted nothing still carries
// writtenBytes 0, and a /begin carries none.
func TestReplyShapes(t *testing.T) {
	zero := int64(0)
	n := int64(1048576)
	for _, tc := range []struct {
		r    Reply
		want string
	}{
		{Reply{Device: "nullb3+nullb4", Sampled: true}, `{"device":"nullb3+nullb4","sampled":true}`},
		{Reply{Device: "nullb0", Sampled: true, WrittenBytes: &zero}, `{"device":"nullb0","sampled":true,"writtenBytes":0}`},
		{Reply{Device: "nullb0", Sampled: true, WrittenBytes: &n}, `{"device":"nullb0","sampled":true,"writtenBytes":1048576}`},
		{Reply{Device: "nullb0", Reason: "no /begin"}, `{"device":"nullb0","sampled":false,"reason":"no /begin"}`},
	} {
		b, err := json.Marshal(tc.r)
		if err != nil || string(b) != tc.want {
			t.Errorf("%+v: %s %v, want %s", tc.r, b, err, tc.want)
		}
		var back Reply
		if err := json.Unmarshal(b, &back); err != nil || back.Sampled != tc.r.Sampled || (back.WrittenBytes == nil) != (tc.r.WrittenBytes == nil) {
			t.Errorf("%s decoded as %+v (%v)", b, back, err)
		}
	}
}

func TestSummaryEncodeBoundsReason(t *testing.T) {
	long := strings.Repeat("é", 1000) // two bytes each: a cut at an odd byte would split one
	b, err := Summary{Device: "nullb0", Reason: long}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	var s Summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Reason) > MaxReasonBytes || !strings.HasSuffix(s.Reason, "...") || !utf8.ValidString(s.Reason) || len(s.Reason) < MaxReasonBytes-4 {
		t.Errorf("reason of %d bytes: %q", len(s.Reason), s.Reason)
	}
	if got := Truncate("short", 400); got != "short" {
		t.Errorf("Truncate shortened %q", got)
	}
}
