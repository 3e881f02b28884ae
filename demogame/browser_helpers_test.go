package demogame_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// browserTab is a headless Chromium tab for the browser tests. It records
// every request the page makes and every script error (an uncaught
// exception or a console.error), for the tests to check at the end.
type browserTab struct {
	ctx context.Context

	mu                 sync.Mutex
	requests, problems []string
}

// openBrowser starts chromium with a window of width×height and a fresh
// profile; the tab's context ends after timeout or when the test ends.
func openBrowser(t *testing.T, chromium string, width, height int, timeout time.Duration) *browserTab {
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

	b := &browserTab{ctx: ctx}
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

// recorded returns copies of the requests and script errors seen so far.
func (b *browserTab) recorded() (requests, problems []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.requests...), append([]string(nil), b.problems...)
}

// outDir is out/<name> at the repository root (git-ignored), made if
// missing: where the tests leave screenshots and reports.
func outDir(t *testing.T, name string) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "out", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}
