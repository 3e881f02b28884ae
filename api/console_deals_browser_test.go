package api_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/internal/browsertest"
)

// TestConsoleDealsInABrowser drives the console's Deals page in headless
// Chromium against the real server: sign in with the admin token, open
// Deals from its tab, add a tiered version from the form (it is
// listed as scheduled and in the history with the admin actor, and its
// note, written as markup, stays text), and see a refused version's error
// (400, nothing stored). It fails (does not skip) without chromium.
func TestConsoleDealsInABrowser(t *testing.T) {
	t.Parallel()
	chromium := browsertest.ChromiumPath(t)
	h := apitest.New(t, apitest.Options{Loopback: true, AdminToken: csAdminToken})
	clientID := apitest.UID("deals")
	apitest.Data[map[string]any](t, h.Admin(http.MethodPost, "/admin/v1/clients",
		map[string]any{"id": clientID, "name": "Deals Casino", "environment": "sandbox"}))
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
		tab.WaitFor(t, what, expr, func() string {
			return eval(`(document.querySelector('#deal-add-status')?.textContent ?? '') + ' | ' + document.querySelector('main').innerText.slice(0, 1500)`)
		})
	}
	loads := func() string { return eval(`document.querySelector('#page-deals').dataset.loaded || '0'`) }

	run("open the console", chromedp.Navigate(h.URL+"/console/"))
	wait("the sign-in form", `document.body.dataset.state === 'signin'`)
	run("admin sign in", chromedp.SendKeys(chromedp.ID("secret"), csAdminToken+"\r"))
	wait("the client picker", `document.body.dataset.state === 'pick-client'`)
	run("pick the client", chromedp.SetValue(chromedp.ID("client"), clientID), chromedp.Click(chromedp.CSS(`#client-form button`)))
	wait("signed in as admin, with a Deals tab", `document.body.dataset.state === 'ready' && document.querySelector('#tabs a[data-page=deals]')?.parentElement.hidden === false`)
	run("open Deals from its tab", chromedp.Click(chromedp.CSS(`#tabs a[data-page=deals]`)))
	wait("the deals page", `document.body.dataset.page === 'deals' && (document.querySelector('#page-deals').dataset.loaded || '0') !== '0' && document.body.dataset.busy === 'no'`)

	before := loads()
	run("fill in a tiered version",
		chromedp.SetValue(chromedp.CSS(`#deal-add [name=provider]`), "prov-web"),
		chromedp.SetValue(chromedp.CSS(`#deal-add [name=client_id]`), clientID),
		chromedp.SetValue(chromedp.CSS(`#deal-add [name=currency]`), "EUR"),
		chromedp.SetValue(chromedp.CSS(`#deal-add [name=valid_from]`), "2099-01-01"),
		chromedp.SetValue(chromedp.CSS(`#deal-add [name=kind]`), "tiered"),
		chromedp.SetValue(chromedp.CSS(`#deal-add [name=mode]`), "whole"),
		chromedp.SetValue(chromedp.CSS(`#deal-add [name=bands]`), "0,1000,0.1\n1000,,0.25"),
		chromedp.SetValue(chromedp.CSS(`#deal-add [name=note]`), "<b>Q1</b>"),
		chromedp.Click(chromedp.CSS(`#deal-add [name=carry_forward]`)),
		chromedp.Click(chromedp.CSS(`#deal-add button[type=submit]`)))
	wait("the version added and the page reloaded", `document.querySelector('#deal-add-status').textContent.includes('added') && (document.querySelector('#page-deals').dataset.loaded || '0') !== `+
		strconv.Quote(before)+` && document.body.dataset.busy === 'no'`)
	if got := eval(`[getComputedStyle(document.querySelector('#deal-flat')).display, getComputedStyle(document.querySelector('#deal-tiered [name=bands]')).display].join(' ')`); got != "none inline-block" && got != "none block" {
		// The tiered fields are shown, the flat rate is not.
		t.Fatalf("the form shows the wrong kind's fields (rate label, bands): %q", got)
	}
	if got := eval(`document.querySelector('#deal-list tbody').innerText`); !strings.Contains(got, "tiered (whole) 0.00–1000.00: 0.1; 1000.00–∞: 0.25") ||
		!strings.Contains(got, "scheduled") || !strings.Contains(got, "2099-01-01") || !strings.Contains(got, clientID) {
		t.Fatalf("the list: %q", got)
	}
	if got := eval(`document.querySelector('#deal-hist tbody').innerText`); !strings.Contains(got, "admin-token:") || !strings.Contains(got, "<b>Q1</b>") {
		t.Fatalf("the history: %q", got)
	}
	if eval(`String(!!document.querySelector('#deal-hist b'))`) != "false" {
		t.Fatal("a note written as markup became an element")
	}
	tab.Screenshot(t, shots, "11-deals.png")

	run("a refused version", chromedp.SetValue(chromedp.CSS(`#deal-add [name=kind]`), "flat"),
		chromedp.SetValue(chromedp.CSS(`#deal-add [name=rate]`), "1.5"), chromedp.Click(chromedp.CSS(`#deal-add button[type=submit]`)))
	wait("the refusal", `document.querySelector('#deal-add-status').textContent.includes('INVALID_REQUEST')`)
	hist := apitest.Data[[]map[string]any](t, h.Admin(http.MethodGet, "/admin/v1/deals/history?client_id="+clientID, nil))
	if len(hist) != 1 || hist[0]["kind"] != "tiered" || hist[0]["carry_forward"] != true {
		t.Fatalf("stored: %v", hist)
	}
}
