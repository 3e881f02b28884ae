package readstore

import (
	"fmt"
	"testing"
)

func TestReplayPasses(t *testing.T) {
	clients := []eventClient{{"a", 5}, {"b", 60}, {"c", 30}, {"d", 20}, {"e", 120}}
	tests := []struct {
		budget int64
		want   string
	}{
		{1000, "[{[a b c d e] 235}]"},
		{100, "[{[e] 120} {[a b c] 95} {[d] 20}]"},
		{60, "[{[e] 120} {[b] 60} {[a c d] 55}]"},
		{1, "[{[e] 120} {[b] 60} {[c] 30} {[d] 20} {[a] 5}]"},
	}
	for _, tc := range tests {
		got := fmt.Sprint(replayPasses(clients, tc.budget))
		if got != tc.want {
			t.Errorf("budget %d: passes %s, want %s", tc.budget, got, tc.want)
		}
	}
}
