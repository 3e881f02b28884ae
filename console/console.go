// Package console is the operator and finance console: static HTML, CSS
// and JavaScript (plain ES modules, no framework) embedded in the binary
// and served at /console/. The pages call the JSON API (/api/v1, and
// /admin/v1 for the admin token) from the browser; nothing is rendered on
// the server. uPlot, the charting library, is vendored into assets/vendor/
// at build time by scripts/ensure-console-assets.sh; without it the
// console still works and shows its report tables only. See
// docs/console.md.
package console

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

//go:embed assets
var files embed.FS

// ContentSecurityPolicy is sent with every console response: the page
// loads scripts, styles, images and data from its own origin only, so it
// makes no request to any other host, and it may not be framed.
const ContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; " +
	"connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// Assets is the embedded file tree (index.html at its root).
func Assets() fs.FS {
	sub, err := fs.Sub(files, "assets")
	if err != nil {
		panic(err) // the embedded tree always has assets/
	}
	return sub
}

// ChartsVendored reports whether uPlot was vendored into this build.
func ChartsVendored() bool {
	_, err := fs.Stat(Assets(), "vendor/uPlot.iife.min.js")
	return err == nil
}

// Handler serves the console under the path it is given (the caller strips
// the /console prefix): "/" is index.html, anything else a file; an unknown
// file is 404. Every answer carries the Content-Security-Policy and
// headers that keep the page from being sniffed, framed or cached stale.
func Handler() http.Handler {
	assets := Assets()
	fileServer := http.FileServerFS(assets)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", ContentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		// Assets change with the binary; revalidate every time (the
		// embedded files carry no modification time, so ETags are not
		// available either; they are small).
		h.Set("Cache-Control", "no-cache")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
		if name == "" {
			name = "index.html"
		}
		if st, err := fs.Stat(assets, name); err != nil || st.IsDir() {
			http.NotFound(w, r)
			return
		}
		if name == "index.html" {
			// http.FileServer redirects /index.html to ./; serve it directly.
			b, err := fs.ReadFile(assets, name)
			if err != nil {
				http.NotFound(w, r)
				return
			}
			h.Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write(b)
			return
		}
		r2 := r.Clone(r.Context())
		r2.URL.Path = "/" + name
		fileServer.ServeHTTP(w, r2)
	})
}
