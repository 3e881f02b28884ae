package stack

import "testing"

func TestClusterIDNeverStartsWithADash(t *testing.T) {
	calls := 0
	// 0xf8 0x00 ... encodes as "-A..." in base64url; 0x00 ... as "AAA...".
	fill := func(b []byte) {
		for i := range b {
			b[i] = 0
		}
		if calls == 0 {
			b[0] = 0xf8
		}
		calls++
	}
	id := clusterID(fill)
	if id != "AAAAAAAAAAAAAAAAAAAAAA" || calls != 2 {
		t.Fatalf("id %q after %d draws, want AAAAAAAAAAAAAAAAAAAAAA after 2", id, calls)
	}
}
