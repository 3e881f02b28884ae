// Package browsertest drives headless Chromium for the tests that play a
// page as a person would (the console, the demo game), and finds where
// tests leave what they record (out/ at the repository root).
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// ChromiumPath finds the browser scripts/ensure-chromium.sh installs
// (PITBOSS_CHROMIUM, else chromium on PATH). The test fails, it does not
// skip, without one.
func ChromiumPath(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("PITBOSS_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no chromium on PATH: run scripts/ensure-chromium.sh (make test does)")
	return ""
}

// BrowserTab is a headless Chromium tab. It records every request the
// page makes and every script error (an uncaught exception or a
// console.error), for the test to check at the end.
type BrowserTab struct {
	// Ctx is the tab's context for chromedp: it ends after the timeout
	// OpenBrowser was given or when the test ends.
	Ctx context.Context

	mu                 sync.Mutex
	requests, problems []string
}

// OpenBrowser starts chromium with a window of width×height and a fresh
// profile.
func OpenBrowser(t testing.TB, chromium string, width, height int, timeout time.Duration) *BrowserTab {
	t.Helper()
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromium),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(width, height),
	)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(cancel)
	ctx, cancelTimeout := context.WithTimeout(ctx, timeout)
	t.Cleanup(cancelTimeout)

	b := &BrowserTab{Ctx: ctx}
	if err := chromedp.Listen(ctx, func(ev any) {
		b.mu.Lock()
		defer b.mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			b.requests = append(b.requests, e.Request.URL)
		case *runtime.EventExceptionThrown:
			msg := e.ExceptionDetails.Text
			if e.ExceptionDetails.Exception != nil {
				msg += " " + e.ExceptionDetails.Exception.Description
			}
			b.problems = append(b.problems, msg)
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError {
				for _, a := range e.Args {
					b.problems = append(b.problems, "console.error: "+string(a.Value)+a.Description)
				}
			}
		}
	}); err != nil {
		t.Fatalf("start chromium (%s): %v", chromium, err)
	}
	return b
}

// Recorded returns copies of the requests and script errors seen so far.
func (b *BrowserTab) Recorded() (requests, problems []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.requests...), append([]string(nil), b.problems...)
}

// Screenshot saves the whole page as a PNG, dir/name (dir an OutDir), so
// a person can see what the test saw.
func (b *BrowserTab) Screenshot(t testing.TB, dir, name string) {
	t.Helper()
	png, err := chromedp.Run(b.Ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// WaitFor polls the JavaScript expression expr until it is true. The page
// signals its own state (data attributes), so there is nothing to sleep
// for; the minute is only a bound for a page that never gets there, and
// then the test fails naming what it waited for and what page() reads
// off the page (its status text, say) to tell why.
func (b *BrowserTab) WaitFor(t testing.TB, what, expr string, page func() string) {
	t.Helper()
	if _, err := chromedp.Run(b.Ctx, chromedp.Poll[bool](expr, chromedp.WithPollingInterval(50*time.Millisecond),
		chromedp.WithPollingTimeout(60*time.Second))); err != nil {
		t.Fatalf("waiting for %s (%s): %v; the page says: %s", what, expr, err, page())
	}
}

// OutDir is out/<name> at the repository root (git-ignored), made if
// missing: where the tests leave screenshots and reports.
func OutDir(t testing.TB, name string) string {
	t.Helper()
	dir := filepath.Join(RepoRoot(t), "out", name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// RepoRoot is the directory holding go.mod, found from the test's working
// directory (its package's directory) upwards.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}
