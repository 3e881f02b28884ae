package api_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"

	"github.com/pitboss/pitboss/adapters/postgres/auditstore"
	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/console"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/internal/browsertest"
	"github.com/pitboss/pitboss/internal/eventually"
)

// TestConsoleInABrowser drives the console in headless Chromium against
// the real server (real Postgres, Kafka, relay, projectors, delivery
// worker): sign in with an API key by keyboard, place a bet through the
// API, find it in the transactions table and its detail (events and
// hash), in today's GGR on the overview, open the GGR chart (uPlot's
// canvas), download the CSV and check its content, re-send a parked
// delivery, read the audit page, then sign in as admin for a client. A
// screenshot of each page goes to out/console/. It fails (does not skip)
// without chromium, and without the vendored uPlot.
func TestConsoleInABrowser(t *testing.T) {
	t.Parallel()
	chromium := browsertest.ChromiumPath(t)
	if !console.ChartsVendored() {
		t.Fatal("uPlot is not vendored into console/assets/vendor: run scripts/ensure-console-assets.sh (make test does)")
	}
	start := time.Now()
	h := newConsoleFixture(t)
	c := h.NewClient(gateway.AllScopes...)
	h.webhook(c)
	h.Deposit(c, "p1", "50.00", "EUR")
	shots := browsertest.OutDir(t, "console")
	downloads := t.TempDir()

	tab := browsertest.OpenBrowser(t, chromium, 1280, 1000, 4*time.Minute)
	ctx := tab.Ctx
	run := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	eval := func(expr string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
		if err != nil {
			t.Fatalf("evaluate %s: %v", expr, err)
		}
		return s
	}
	wait := func(what, expr string) {
		t.Helper()
		tab.WaitFor(t, what, expr, func() string { return eval(`document.querySelector('main').innerText.slice(0, 1500)`) })
	}
	shot := func(name string) { t.Helper(); tab.Screenshot(t, shots, name) }
	// show opens a page by its hash and waits until it has loaded once more.
	show := func(page string) {
		t.Helper()
		before := eval(`document.querySelector('#page-` + page + `').dataset.loaded || '0'`)
		run("open "+page, chromedp.Evaluate[chromedp.Void](`location.hash = '#`+page+`'; dispatchEvent(new HashChangeEvent('hashchange'))`))
		wait(page+" loaded", `(document.querySelector('#page-`+page+`').dataset.loaded || '0') !== '`+before+`' && document.body.dataset.busy === 'no'`)
	}

	// Sign in by keyboard: type the key, press Enter.
	run("open the console", chromedp.Navigate(h.URL+"/console/"))
	wait("the sign-in form", `document.body.dataset.state === 'signin'`)
	shot("0-sign-in.png")
	run("sign in", chromedp.SendKeys(chromedp.ID("secret"), c.Key), chromedp.KeyEvent("\r"))
	wait("signed in", `document.body.dataset.state === 'ready' && document.body.dataset.page === 'overview'`)
	if who := eval(`document.querySelector('#who').textContent`); !strings.Contains(who, c.ID) {
		t.Fatalf("header says %q, want client %s", who, c.ID)
	}
	if got := eval(`sessionStorage.getItem('pitboss.secret') === '` + c.Key + `' && localStorage.length === 0 ? 'ok' : 'no'`); got != "ok" {
		t.Fatal("the key is not (only) in sessionStorage")
	}
	t.Logf("%s: signed in", time.Since(start).Round(time.Millisecond))

	// A bet through the API.
	b := h.bet(c, "p1", "3.00")
	h.WaitHistory(c.Key, b.position)

	// Transactions, opened by keyboard (Alt+2): the bet is in the table.
	run("Alt+2", chromedp.KeyEvent("2", chromedp.KeyModifiers(chromedp.ModifierAlt)))
	wait("the transactions page", `document.body.dataset.page === 'transactions' && document.querySelector('#page-transactions').dataset.loaded && document.body.dataset.busy === 'no'`)
	wait("the bet in the table", `[...document.querySelectorAll('#tx-table tbody tr')].some(r => r.dataset.type === 'bet' && r.innerText.includes('-3.00') && r.innerText.includes('`+b.round+`'))`)
	// Filter by type through the form (Enter submits it).
	run("filter bets", chromedp.SetValue(chromedp.CSS(`#tx-filter select[name=type]`), "bet"),
		chromedp.SendKeys(chromedp.CSS(`#tx-filter input[name=player_id]`), "p1\r"))
	wait("only bets", `document.querySelector('#tx-status').textContent === '1 transactions' && document.querySelectorAll('#tx-table tbody tr').length === 1`)
	shot("1-transactions.png")
	run("open the bet", chromedp.Click(chromedp.CSS(`#tx-table tbody tr[data-type=bet] button`)))
	wait("the detail", `!document.querySelector('#tx-detail').hidden && document.querySelectorAll('#tx-detail .events li').length === 1`)
	var hash []byte
	if err := h.Pool.QueryRow(context.Background(), `SELECT hash FROM events WHERE position = $1`, b.position).Scan(&hash); err != nil {
		t.Fatal(err)
	}
	if got := eval(`document.querySelector('#tx-detail .events li').dataset.hash`); got != hex.EncodeToString(hash) {
		t.Fatalf("detail shows hash %s, the event has %x", got, hash)
	}
	shot("2-transaction-detail.png")

	// Today's GGR on the overview.
	show("overview")
	if ggr := eval(`(document.querySelector('#today [data-currency=EUR] [data-field=ggr]') || {}).textContent || ''`); ggr != "3.00" {
		t.Fatalf("today's GGR on the overview is %q, want 3.00: %s", ggr, eval(`document.querySelector('#overview').innerText`))
	}
	shot("3-overview.png")

	// Reports: the GGR chart by day (uPlot draws on a canvas) and the CSV.
	show("reports")
	wait("the GGR chart", `!!document.querySelector('#rep-chart canvas') && !!document.querySelector('#rep-chart .uplot')`)
	today := time.Now().UTC().Format(time.DateOnly)
	if row := eval(`[...document.querySelectorAll('#rep-table tbody tr')].map(r => r.innerText).join('\n')`); !strings.Contains(row, today) || !strings.Contains(row, "3.00") {
		t.Fatalf("report table %q, want today's 3.00", row)
	}
	// Finance sees the money kinds apart: promo and jackpot columns.
	if head := eval(`[...document.querySelectorAll('#rep-table thead th')].map(h => h.textContent).join(',')`); !strings.Contains(head, ",promo_ggr,") ||
		!strings.Contains(head, ",jackpot_wins,jackpot_win_reversals,jackpot_ggr,") {
		t.Fatalf("report columns %q, want the promo and jackpot columns", head)
	}
	shot("4-reports.png")
	if _, err := chromedp.Run(ctx, chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.CallBrowser(ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
			Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: downloads})
		return err
	})); err != nil {
		t.Fatalf("allow downloads: %v", err)
	}
	run("download CSV", chromedp.Click(chromedp.ID("rep-csv")))
	csv := waitDownload(t, downloads, ".csv")
	lines := strings.Split(strings.TrimSpace(csv), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "day,currency,bets,") ||
		!strings.HasPrefix(lines[1], today+",EUR,3.00,") {
		t.Fatalf("CSV:\n%s", csv)
	}
	t.Logf("%s: CSV downloaded: %q", time.Since(start).Round(time.Millisecond), lines[1])

	// Deliveries: the bet's webhook parks against the failing receiver;
	// re-sent once the receiver is back, it succeeds.
	parked := h.park(c)
	show("deliveries")
	sel := `#del-table tbody tr[data-id="` + parked + `"]`
	wait("the parked delivery", `!!document.querySelector('`+sel+`[data-status=parked] button')`)
	shot("5-deliveries-parked.png")
	h.failing.Store(false)
	before := h.received.Load()
	run("re-send", chromedp.Click(chromedp.CSS(sel+` button`)))
	wait("re-sent", `document.querySelector('#del-status').textContent.includes('re-sent')`)
	eventually.NoError(t, 30*time.Second, "the re-sent delivery to succeed", func() error {
		d := apitest.Data[struct {
			Status string `json:"status"`
		}](t, h.Call(http.MethodGet, "/api/v1/deliveries/"+parked, c.Key, ""))
		if d.Status != gateway.DeliverySucceeded {
			return fmt.Errorf("the delivery is %s", d.Status)
		}
		return nil
	})
	if h.received.Load() <= before {
		t.Fatal("the receiver got nothing after the re-send")
	}
	show("deliveries")
	wait("succeeded in the log", `!!document.querySelector('`+sel+`[data-status=succeeded]')`)
	shot("6-deliveries-resent.png")

	// Audit: the chain head and the last verification.
	rep, err := h.Audit.Verify(context.Background(), auditstore.VerifyOptions{SkipReadModels: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Audit.SaveRun(context.Background(), rep); err != nil {
		t.Fatal(err)
	}
	show("audit")
	span, _ := rep.Client(c.ID)
	if got := eval(`document.querySelector('#last-verify').innerText`); !strings.Contains(got, "Passed") ||
		!strings.Contains(got, strconv.FormatInt(span.Events, 10)+" of your events up to position "+strconv.FormatInt(span.HeadPosition, 10)) {
		t.Fatalf("last verification on the page: %q", got)
	}
	if got := eval(`document.querySelector('#chain-head').innerText`); !strings.Contains(got, rep.HeadHash) && rep.HeadHash != "" {
		t.Logf("chain head moved on since the verification: %q", got)
	}
	run("export", chromedp.Click(chromedp.ID("export")))
	ndjson := waitDownload(t, downloads, ".ndjson")
	if n := strings.Count(ndjson, "\n"); n < 3 || !strings.Contains(ndjson, hex.EncodeToString(hash)) {
		t.Fatalf("export has %d lines without the bet's hash", n)
	}
	shot("7-audit.png")

	// Sign out, then in with the admin token: pick the client; the
	// console acts through a one-hour key it revokes at sign-out.
	run("sign out", chromedp.Click(chromedp.ID("signout")))
	wait("signed out", `document.body.dataset.state === 'signin' && sessionStorage.length === 0`)
	run("admin sign in", chromedp.SendKeys(chromedp.ID("secret"), csAdminToken+"\r"))
	wait("the client picker", `document.body.dataset.state === 'pick-client'`)
	run("pick the client", chromedp.SetValue(chromedp.ID("client"), c.ID), chromedp.Click(chromedp.CSS(`#client-form button`)))
	wait("signed in as admin", `document.body.dataset.state === 'ready' && document.querySelector('#who').textContent.includes('acting as admin')`)
	wait("the overview", `document.querySelector('#page-overview').dataset.loaded && document.body.dataset.busy === 'no'`)
	shot("8-admin-overview.png")
	keyID := eval(`sessionStorage.getItem('pitboss.keyid')`)
	run("sign out as admin", chromedp.Click(chromedp.ID("signout")))
	wait("signed out", `document.body.dataset.state === 'signin' && sessionStorage.length === 0`)
	var revoked bool
	if err := h.Pool.QueryRow(context.Background(), `SELECT revoked_at IS NOT NULL FROM api_keys WHERE id = $1`, keyID).Scan(&revoked); err != nil || !revoked {
		t.Fatalf("the admin session's key %s is not revoked (%v)", keyID, err)
	}

	requests, problems := tab.Recorded()
	if len(problems) > 0 {
		t.Fatalf("script errors on the page: %v", problems)
	}
	for _, u := range requests {
		if !strings.HasPrefix(u, h.URL+"/") && !strings.HasPrefix(u, "blob:"+h.URL+"/") && !strings.HasPrefix(u, "data:") {
			t.Fatalf("the page requested %s, outside %s", u, h.URL)
		}
	}
	t.Logf("%s: done, %d requests, screenshots in %s", time.Since(start).Round(time.Millisecond), len(requests), shots)
}

// waitDownload waits for a finished download ending in ext in dir and
// returns its content, removing it.
func waitDownload(t *testing.T, dir, ext string) string {
	t.Helper()
	var content string
	eventually.NoError(t, 30*time.Second, "a "+ext+" download in "+dir, func() error {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ext) {
				b, err := os.ReadFile(filepath.Join(dir, e.Name()))
				if err == nil && len(b) > 0 {
					_ = os.Remove(filepath.Join(dir, e.Name()))
					content = string(b)
					return nil
				}
			}
		}
		return fmt.Errorf("the directory holds %v", entries)
	})
	return content
}
