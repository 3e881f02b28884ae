package api_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"

	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/internal/browsertest"
)

// TestConsoleFinancePagesInABrowser drives the console's finance pages
// (issue 18) in headless Chromium against the real server: sign in as
// admin for a client, reconcile a daily file with two planted differences
// (the page shows exactly those, with the totals), import an exchange-rate
// file (the rates page lists what the server stored), have a bad rates
// file refused with the server's message and nothing stored; then an API
// key's session reconciles too but has no rates page. Screenshots go to
// out/console/. It fails (does not skip) without chromium.
func TestConsoleFinancePagesInABrowser(t *testing.T) {
	t.Parallel()
	chromium := browsertest.ChromiumPath(t)
	h := apitest.New(t, apitest.Options{Loopback: true, AdminToken: csAdminToken})
	clientID := apitest.UID("fin")
	apitest.Data[map[string]any](t, h.Admin(http.MethodPost, "/admin/v1/clients",
		map[string]any{"id": clientID, "name": "Finance test", "environment": "sandbox"}))
	key := apitest.Data[admKey](t, h.Admin(http.MethodPost, "/admin/v1/clients/"+clientID+"/keys",
		map[string]any{"scopes": []string{gateway.ScopeTransactionsWrite, gateway.ScopeReportsRead}}))
	deposit := func(id, amount string) {
		t.Helper()
		rec := h.Call(http.MethodPost, "/api/v1/transactions", key.Key, map[string]string{"type": "deposit",
			"transaction_id": id, "player_id": "p1", "amount": amount, "currency": "EUR"})
		if rec.Code != http.StatusOK {
			t.Fatalf("deposit: %d %s", rec.Code, rec.Body)
		}
	}
	deposit("dep-1", "10.00")
	deposit("dep-2", "5.00")
	h.Pump()
	day := time.Now().UTC().Format(time.DateOnly)
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// dep-2's amount differs, x9 is not in the ledger.
	file := write("operator.csv", "Ref,Amount\ndep-1,10.00\ndep-2,6.00\nx9,1.00\n")
	ratesFile := write("rates.csv", "day,base,quote,rate\n2026-11-20,EUR,USD,1.0842\n2026-11-20,BTC,EUR,61234.56789012\n")
	badRates := write("bad-rates.csv", "day,base,quote,rate\n2026-11-21,EUR,USD,-1\n")
	shots := browsertest.OutDir(t, "console")

	tab := browsertest.OpenBrowser(t, chromium, 1400, 1100, 3*time.Minute)
	run := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(tab.Ctx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	eval := func(expr string) string {
		t.Helper()
		s, err := chromedp.Run(tab.Ctx, chromedp.Evaluate[string](expr))
		if err != nil {
			t.Fatalf("evaluate %s: %v", expr, err)
		}
		return s
	}
	wait := func(what, expr string) {
		t.Helper()
		tab.WaitFor(t, what, expr, func() string { return eval(`document.querySelector('main').innerText.slice(0, 1500)`) })
	}
	show := func(page string) {
		t.Helper()
		before := eval(`document.querySelector('#page-` + page + `').dataset.loaded || '0'`)
		run("open "+page, chromedp.Evaluate[chromedp.Void](`location.hash = '#`+page+`'; dispatchEvent(new HashChangeEvent('hashchange'))`))
		wait(page+" loaded", `(document.querySelector('#page-`+page+`').dataset.loaded || '0') !== '`+before+`' && document.body.dataset.busy === 'no'`)
	}
	reconcile := func() {
		t.Helper()
		show("reconcile")
		run("fill the reconciliation", chromedp.SetValue(chromedp.CSS(`#rec-form input[name=day]`), day),
			chromedp.SetValue(chromedp.CSS(`#rec-form input[name=columns]`), "transaction_id=Ref"),
			chromedp.SetValue(chromedp.CSS(`#rec-form input[name=currency]`), "EUR"),
			chromedp.SetUploadFiles(`#rec-form input[name=file]`, []string{file}),
			chromedp.Click(chromedp.CSS(`#rec-form button[type=submit]`)))
		wait("the report", `document.querySelector('#rec-status').textContent === '2 differences' && document.body.dataset.busy === 'no'`)
		got := eval(`[...document.querySelectorAll('#rec-differences tbody tr')].map(r => r.dataset.kind + ':' + r.dataset.id).join(' ')`)
		if got != "missing_in_ledger:x9 amount_mismatch:dep-2" {
			t.Fatalf("differences %q", got)
		}
		counts := eval(`[...document.querySelectorAll('#rec-counts dl')].map(d => d.dataset.kind + '=' + d.querySelector('dd').textContent).join(' ')`)
		if !strings.Contains(counts, "missing_in_ledger=1") || !strings.Contains(counts, "amount_mismatch=1") || !strings.Contains(counts, "missing_in_file=0") {
			t.Fatalf("counts %q", counts)
		}
		if totals := eval(`document.querySelector('#rec-report').innerText`); !strings.Contains(totals, "17.00") || !strings.Contains(totals, "15.00") ||
			strings.Contains(totals, "null") || strings.Contains(totals, "undefined") {
			t.Fatalf("totals (file 17.00, ledger 15.00) not shown: %s", totals)
		}
	}

	run("open the console", chromedp.Navigate(h.URL+"/console/"))
	wait("the sign-in form", `document.body.dataset.state === 'signin'`)
	run("admin sign in", chromedp.SendKeys(chromedp.ID("secret"), csAdminToken+"\r"))
	wait("the client picker", `document.body.dataset.state === 'pick-client'`)
	run("pick the client", chromedp.SetValue(chromedp.ID("client"), clientID), chromedp.Click(chromedp.CSS(`#client-form button`)))
	wait("signed in as admin, with a Rates tab", `document.body.dataset.state === 'ready' && document.querySelector('#tabs a[data-page=rates]')?.parentElement.hidden === false`)

	reconcile()
	tab.Screenshot(t, shots, "11-reconcile.png")

	show("rates")
	run("import rates", chromedp.SetUploadFiles(`#rates-import input[name=file]`, []string{ratesFile}),
		chromedp.Click(chromedp.CSS(`#rates-import button[type=submit]`)))
	wait("the import's outcome", `document.querySelector('#rates-import-status').textContent.startsWith('✔') && document.body.dataset.busy === 'no'`)
	wait("the stored rates listed", `!!document.querySelector('#rates-table tbody tr[data-pair="BTC/EUR"][data-day="2026-11-20"]')`)
	if got := eval(`document.querySelector('#rates-table tbody tr[data-pair="BTC/EUR"] td.num').textContent`); got != "61234.56789012" {
		t.Fatalf("BTC/EUR shown as %q", got)
	}
	stored := apitest.Data[[]map[string]any](t, h.Admin(http.MethodGet, "/admin/v1/fx-rates?from=2026-11-20&to=2026-11-21", nil))
	if len(stored) != 2 {
		t.Fatalf("the server holds %v", stored)
	}
	tab.Screenshot(t, shots, "12-rates.png")
	run("import a bad file", chromedp.SetUploadFiles(`#rates-import input[name=file]`, []string{badRates}),
		chromedp.Click(chromedp.CSS(`#rates-import button[type=submit]`)))
	wait("the refusal", `document.querySelector('#rates-import-status').textContent.startsWith('✖') && document.body.dataset.busy === 'no'`)
	if msg := eval(`document.querySelector('#rates-import-status').textContent`); !strings.Contains(msg, "INVALID_REQUEST") || !strings.Contains(msg, "Nothing was stored") {
		t.Fatalf("refusal %q", msg)
	}
	if stored := apitest.Data[[]map[string]any](t, h.Admin(http.MethodGet, "/admin/v1/fx-rates?from=2026-11-21&to=2026-11-21", nil)); len(stored) != 0 {
		t.Fatalf("the bad file stored %v", stored)
	}

	// Statements: the admin closes last month (no play: an empty but
	// signed statement), the row is listed, its printable page downloads.
	provider := apitest.UID("prov")
	h.AddProvider(provider, "Statement provider", gateway.ProviderKindDemo)
	month := time.Now().UTC().AddDate(0, -1, 0).Format("2006-01")
	show("statements")
	if got := eval(`String(document.querySelector('#st-close').hidden)`); got != "false" {
		t.Fatal("the admin has no close form")
	}
	run("close last month", chromedp.SendKeys(chromedp.CSS(`#st-close input[name=provider]`), provider),
		chromedp.SendKeys(chromedp.CSS(`#st-close input[name=start]`), month),
		chromedp.Click(chromedp.CSS(`#st-close button[type=submit]`)))
	wait("the statement closed", `document.querySelector('#st-close-status').textContent.startsWith('✔') && document.body.dataset.busy === 'no'`)
	wait("the statement listed", `!!document.querySelector('#st-table tbody tr[data-provider="`+provider+`"]')`)
	run("close it again", chromedp.Click(chromedp.CSS(`#st-close button[type=submit]`)))
	wait("refused", `document.querySelector('#st-close-status').textContent.includes('PERIOD_CLOSED') && document.body.dataset.busy === 'no'`)
	downloads := t.TempDir()
	if _, err := chromedp.Run(tab.Ctx, chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.CallBrowser(ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
			Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: downloads})
		return err
	})); err != nil {
		t.Fatalf("allow downloads: %v", err)
	}
	run("download the printable page", chromedp.Click(chromedp.CSS(`#st-table tbody tr[data-provider="`+provider+`"] button`)))
	if page := waitDownload(t, downloads, ".html"); !strings.Contains(page, "Statement — month "+month+"-01") || !strings.Contains(page, provider) {
		t.Fatalf("the printable page: %s", page)
	}
	tab.Screenshot(t, shots, "13-statements.png")

	// An API key's session: it reconciles, but the rates page is not its.
	run("sign out", chromedp.Click(chromedp.ID("signout")))
	wait("signed out", `document.body.dataset.state === 'signin'`)
	run("key sign in", chromedp.SendKeys(chromedp.ID("secret"), key.Key+"\r"))
	wait("signed in with the key", `document.body.dataset.state === 'ready'`)
	if got := eval(`String(document.querySelector('#tabs a[data-page=rates]').parentElement.hidden)`); got != "true" {
		t.Fatal("a key's session shows the Rates tab")
	}
	reconcile()
	show("statements")
	if got := eval(`String(document.querySelector('#st-close').hidden)`); got != "true" {
		t.Fatal("a key's session shows the close form")
	}
	wait("its statement listed", `!!document.querySelector('#st-table tbody tr[data-provider="`+provider+`"]')`)
	run("open #rates", chromedp.Evaluate[chromedp.Void](`location.hash = '#rates'; dispatchEvent(new HashChangeEvent('hashchange'))`))
	wait("refused", `!document.querySelector('#denied').hidden && document.querySelector('#page-rates').hidden`)
	requests, problems := tab.Recorded()
	if len(problems) > 0 {
		t.Fatalf("script errors on the page: %v", problems)
	}
	for _, u := range requests {
		if !strings.HasPrefix(u, h.URL+"/") && !strings.HasPrefix(u, "data:") {
			t.Fatalf("the page requested %s, outside %s", u, h.URL)
		}
	}
}
