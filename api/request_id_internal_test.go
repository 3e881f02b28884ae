package api

import (
	"regexp"
	"testing"
)

// fills hands out the given byte patterns one call at a time, then the last
// one for ever.
func fills(t *testing.T, patterns ...byte) (func([]byte), *int) {
	t.Helper()
	calls := 0
	return func(b []byte) {
		p := patterns[min(calls, len(patterns)-1)]
		calls++
		for i := range b {
			b[i] = p
		}
	}, &calls
}

func TestNewRequestIDIsNeverAllDigits(t *testing.T) {
	tests := []struct {
		name      string
		patterns  []byte
		want      string
		wantCalls int
	}{
		{name: "hex with letters is taken at once", patterns: []byte{0xab}, want: "abababababababababababab", wantCalls: 1},
		{name: "all decimal digits are drawn again", patterns: []byte{0x12, 0x34, 0x5f},
			want: "5f5f5f5f5f5f5f5f5f5f5f5f", wantCalls: 3},
	}
	shape := regexp.MustCompile(`^[0-9a-f]{24}$`)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fill, calls := fills(t, tt.patterns...)
			got := newRequestID(fill)
			if got != tt.want || !shape.MatchString(got) {
				t.Errorf("id %q, want %q", got, tt.want)
			}
			if *calls != tt.wantCalls {
				t.Errorf("%d draws, want %d", *calls, tt.wantCalls)
			}
		})
	}
}
