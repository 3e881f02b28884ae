package console_test

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pitboss/pitboss/console"
)

func TestHandler(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(console.Handler())
	t.Cleanup(srv.Close)
	for _, c := range []struct {
		name, method, path string
		status             int
		ctype, contains    string
	}{
		{"index", http.MethodGet, "/", 200, "text/html", `<script type="module" src="app.js"></script>`},
		{"index by name", http.MethodGet, "/index.html", 200, "text/html", "Pitboss console"},
		{"script", http.MethodGet, "/app.js", 200, "text/javascript", "sessionStorage"},
		{"style", http.MethodGet, "/style.css", 200, "text/css", ":focus-visible"},
		{"deals page script", http.MethodGet, "/deals.js", 200, "text/javascript", "/admin/v1/deals"},
		{"wallet part script", http.MethodGet, "/wallet.js", 200, "text/javascript", "/admin/v1/seamless/follow-ups"},
		{"campaigns page script", http.MethodGet, "/campaigns.js", 200, "text/javascript", "/api/v1/reports/campaigns"},
		{"vendor readme", http.MethodGet, "/vendor/README.txt", 200, "text/plain", "ensure-console-assets.sh"},
		{"head", http.MethodHead, "/app.js", 200, "text/javascript", ""},
		{"unknown file", http.MethodGet, "/nope.js", 404, "", ""},
		{"a directory", http.MethodGet, "/vendor/", 404, "", ""},
		{"outside the tree", http.MethodGet, "/../console.go", 404, "", ""},
		{"post", http.MethodPost, "/", 405, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, err := http.NewRequest(c.method, srv.URL+c.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			body, _ := io.ReadAll(res.Body)
			if res.StatusCode != c.status {
				t.Fatalf("status %d, want %d: %s", res.StatusCode, c.status, body)
			}
			if got := res.Header.Get("Content-Security-Policy"); got != console.ContentSecurityPolicy ||
				!strings.HasPrefix(got, "default-src 'self';") {
				t.Errorf("CSP %q", got)
			}
			if res.Header.Get("X-Content-Type-Options") != "nosniff" || res.Header.Get("X-Frame-Options") != "DENY" {
				t.Errorf("headers %v", res.Header)
			}
			if c.ctype != "" && !strings.HasPrefix(res.Header.Get("Content-Type"), c.ctype) {
				t.Errorf("Content-Type %q, want %s", res.Header.Get("Content-Type"), c.ctype)
			}
			if !strings.Contains(string(body), c.contains) {
				t.Errorf("body lacks %q", c.contains)
			}
		})
	}
}

// TestNoOutsideReferences keeps the pages free of anything the browser
// would fetch from another host: every src and href is relative.
func TestNoOutsideReferences(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"index.html", "app.js", "deals.js", "wallet.js", "campaigns.js", "style.css"} {
		b, err := fsRead(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range []string{"http://", "https://", "//cdn", "@import", "url("} {
			if strings.Contains(b, bad) {
				t.Errorf("%s contains %q", name, bad)
			}
		}
	}
}

// TestNoMarkupFromData keeps the script from turning text into markup:
// every value the pages show (client names, key labels, reveal reasons,
// user agents, ...) goes into the page as text (textContent, a text node or
// an input's value), so none of these appear in it. Every script of the
// console is checked, so a new page's module cannot be forgotten.
func TestNoMarkupFromData(t *testing.T) {
	t.Parallel()
	scripts, err := fs.Glob(console.Assets(), "*.js")
	if err != nil || len(scripts) < 4 {
		t.Fatalf("scripts %v (%v)", scripts, err)
	}
	for _, name := range scripts {
		b, err := fsRead(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, sink := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "createContextualFragment",
			"DOMParser", "eval(", "new Function"} {
			if strings.Contains(b, sink) {
				t.Errorf("%s uses %s", name, sink)
			}
		}
	}
}
