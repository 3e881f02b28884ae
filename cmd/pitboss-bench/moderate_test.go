package main

import (
	"math"
	"testing"
)

func TestParseRoleTags(t *testing.T) {
	out := ` component: Total 1s of 2s (50.00%)
         1s (50.00%): x

 role: Total 1.80s of 2s (90.00%)
      1.20s (60.00%): api
      500ms (25.00%): relay
      100ms ( 5.00%): projector
`
	got := parseRoleTags(out)
	want := []RoleCPU{{Role: "api", Share: 0.6}, {Role: "relay", Share: 0.25}, {Role: "projector", Share: 0.05}, {Role: "other", Share: 0.1}}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].Role != want[i].Role || math.Abs(got[i].Share-want[i].Share) > 1e-9 {
			t.Errorf("role %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	if got := parseRoleTags("no labels\n"); got != nil {
		t.Errorf("no labels: got %+v", got)
	}
}
