package api

import (
	"net/http"
	"testing"
)

func TestBrowserNavigation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		header http.Header
		want   bool
	}{
		{"no headers", http.Header{}, false},
		{"navigate", http.Header{"Sec-Fetch-Mode": {"navigate"}}, true},
		{"cors fetch", http.Header{"Sec-Fetch-Mode": {"cors"}, "Accept": {"*/*"}}, false},
		{"Firefox", http.Header{"Accept": {"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}}, true},
		{"curl", http.Header{"Accept": {"*/*"}}, false},
		{"JSON", http.Header{"Accept": {"application/json"}}, false},
		{"JSON first", http.Header{"Accept": {"application/json, text/html;q=0.5"}}, false},
		{"HTML refused", http.Header{"Accept": {"text/html;q=0, */*"}}, false},
		{"text/* over a lower */*", http.Header{"Accept": {"text/*, */*;q=0.1"}}, true},
		{"equal ranks", http.Header{"Accept": {"text/html, application/json"}}, false},
		{"two header lines", http.Header{"Accept": {"application/json;q=0.2", "text/html"}}, true},
		{"upper case and spaces", http.Header{"Accept": {" TEXT/HTML ; Q=0.9 , application/json;q=0.1"}}, true},
		{"a malformed q counts as 1", http.Header{"Accept": {"text/html;q=x, application/json;q=0.5"}}, true},
	}
	for _, tc := range tests {
		r := &http.Request{Header: tc.header}
		if got := browserNavigation(r); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
