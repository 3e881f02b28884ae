package main

import "testing"

func TestLoopbackURL(t *testing.T) {
	tests := []struct{ addr, want string }{
		{"127.0.0.1:8080", "http://127.0.0.1:8080"},
		{":8080", "http://127.0.0.1:8080"},
		{"0.0.0.0:9000", "http://127.0.0.1:9000"},
		{"[::]:9000", "http://127.0.0.1:9000"},
		{"[::1]:9000", "http://[::1]:9000"},
		{"pitboss.internal:80", "http://pitboss.internal:80"},
		{"no-port", "http://no-port"},
	}
	for _, tc := range tests {
		if got := loopbackURL(tc.addr); got != tc.want {
			t.Errorf("loopbackURL(%q) = %q, want %q", tc.addr, got, tc.want)
		}
	}
}
