package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"

	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/internal/browsertest"
)

// TestConsoleCampaignsInABrowser drives the console's Campaigns page in
// headless Chromium against the real server, signed in with an operator's
// API key: create a campaign from the form (its name, written as markup,
// stays text), grant two players from a pasted list (reward ids derived
// from campaign and player), send the list again (replayed, nothing
// granted twice), have a line refused with the server's code, a player
// listed twice refused before anything is sent and a malformed id refuse
// the whole request (its line named, nothing granted), spend one
// free bet through the provider wallet (that reward has no Cancel), cancel
// the other after confirming, and see the counts, the cost, the cost in a
// reporting currency (a missing rate shown as such, then converted) and
// the CSV; a campaign of two games grants the game chosen. A read-only key sees the list without forms or counts; a key
// without promotions:read has no tab and is told the scope the page needs.
// Screenshot 14-campaigns.png goes to out/console/. It fails (does not
// skip) without chromium.
func TestConsoleCampaignsInABrowser(t *testing.T) {
	t.Parallel()
	chromium := browsertest.ChromiumPath(t)
	h := apitest.New(t, apitest.Options{Loopback: true, AdminToken: csAdminToken})
	h.AddProvider("demo", "Pitboss Demo Games", gateway.ProviderKindDemo)
	h.AddGame("demo-slot", "demo", "Demo Slot", "slots", true)
	c := h.NewClient(gateway.ScopeLaunch, gateway.ScopeReportsRead, gateway.ScopePromotionsRead, gateway.ScopePromotionsWrite)
	readOnly, _ := h.IssueKey(c.ID, gateway.ScopePromotionsRead)
	reportsOnly, _ := h.IssueKey(c.ID, gateway.ScopeReportsRead)
	// A reporting currency no other test gives a rate for today.
	const reporting = "CHF"
	today := time.Now().UTC().Format(time.DateOnly)
	shots := browsertest.OutDir(t, "console")
	downloads := t.TempDir()

	tab := browsertest.OpenBrowser(t, chromium, 1500, 1300, 3*time.Minute)
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
			return eval(`document.querySelector('#page-campaigns').innerText.slice(0, 2500)`)
		})
	}
	loads := func() string { return eval(`document.querySelector('#page-campaigns').dataset.loaded || '0'`) }
	show := func() {
		t.Helper()
		before := loads()
		run("show", chromedp.Click(chromedp.CSS(`#camp-filter button[type=submit]`)))
		wait("the page reloaded", `(document.querySelector('#page-campaigns').dataset.loaded || '0') !== '`+before+`' && document.body.dataset.busy === 'no'`)
	}
	cell := func(field string) string {
		return eval(`document.querySelector('#camp-table tbody tr[data-id="welcome"] [data-field="` + field + `"]')?.textContent ?? ''`)
	}
	signIn := func(key string) {
		t.Helper()
		run("key sign in", chromedp.SendKeys(chromedp.ID("secret"), key+"\r"))
		wait("signed in", `document.body.dataset.state === 'ready'`)
	}

	run("open the console", chromedp.Navigate(h.URL+"/console/"))
	wait("the sign-in form", `document.body.dataset.state === 'signin'`)
	signIn(c.Key)
	wait("a Campaigns tab", `document.querySelector('#tabs a[data-page=campaigns]')?.parentElement.hidden === false`)
	run("open Campaigns from its tab", chromedp.Click(chromedp.CSS(`#tabs a[data-page=campaigns]`)))
	wait("the campaigns page", `document.body.dataset.page === 'campaigns' && (document.querySelector('#page-campaigns').dataset.loaded || '0') !== '0' && `+
		`document.body.dataset.busy === 'no'`)
	if got := eval(`document.querySelector('#camp-status').textContent`); got != "No campaigns yet." {
		t.Fatalf("status %q", got)
	}

	// Create: a refusal first (a bet value finer than the cent), then the campaign.
	until := time.Now().UTC().Add(30 * 24 * time.Hour).Format("2006-01-02T15:04")
	run("fill in the campaign",
		chromedp.SetValue(chromedp.CSS(`#camp-create [name=campaign_id]`), "welcome"),
		chromedp.SetValue(chromedp.CSS(`#camp-create [name=name]`), "<b>Welcome</b> spins"),
		chromedp.SetValue(chromedp.CSS(`#camp-create [name=provider]`), "demo"),
		chromedp.SetValue(chromedp.CSS(`#camp-create [name=games]`), "demo-slot"),
		chromedp.SetValue(chromedp.CSS(`#camp-create [name=currency]`), "eur"),
		chromedp.SetValue(chromedp.CSS(`#camp-create [name=bet_value]`), "0.505"),
		chromedp.SetValue(chromedp.CSS(`#camp-create [name=free_bets]`), "3"),
		chromedp.SetValue(chromedp.CSS(`#camp-create [name=valid_until]`), until),
		chromedp.Click(chromedp.CSS(`#camp-create button[type=submit]`)))
	wait("the refusal", `document.querySelector('#camp-create-status').textContent.includes('INVALID_REQUEST') && document.body.dataset.busy === 'no'`)
	run("a bet value in cents", chromedp.SetValue(chromedp.CSS(`#camp-create [name=bet_value]`), "0.50"),
		chromedp.Click(chromedp.CSS(`#camp-create button[type=submit]`)))
	wait("created and opened", `document.querySelector('#camp-create-status').textContent.includes('created') && `+
		`document.querySelector('#camp-detail').dataset.id === 'welcome' && !document.querySelector('#camp-detail').hidden && document.body.dataset.busy === 'no'`)
	if got := eval(`document.querySelector('#camp-table tbody tr[data-id="welcome"]').innerText`); !strings.Contains(got, "<b>Welcome</b> spins") ||
		!strings.Contains(got, "0.50 EUR") {
		t.Fatalf("the campaign's row: %q", got)
	}
	if eval(`String(!!document.querySelector('#camp-table b, #camp-terms b'))`) != "false" {
		t.Fatal("a name written as markup became an element")
	}

	// Grant two players; then the same list again: replayed, not granted twice.
	grant := func(lines string) {
		t.Helper()
		run("grant", chromedp.SetValue(chromedp.CSS(`#camp-grant [name=players]`), lines),
			chromedp.Evaluate[chromedp.Void](`document.querySelector('#camp-grant-status').textContent = ''`),
			chromedp.Click(chromedp.CSS(`#camp-grant button[type=submit]`)))
		wait("the grant's outcome", `/^[✔✖]/.test(document.querySelector('#camp-grant-status').textContent) && document.body.dataset.busy === 'no'`)
	}
	grant("alice\n\n  bob  \n")
	if got := eval(`document.querySelector('#camp-grant-status').textContent`); !strings.HasPrefix(got, "✔ 2 granted, 0 replayed") {
		t.Fatalf("grant: %q", got)
	}
	wait("both rewards listed", `document.querySelectorAll('#camp-rewards tbody tr[data-state=active]').length === 2`)
	if got := eval(`[...document.querySelectorAll('#camp-rewards tbody tr')].map(r => r.dataset.id).sort().join(' ')`); got != "welcome.alice welcome.bob" {
		t.Fatalf("reward ids %q, want the derived welcome.alice welcome.bob", got)
	}
	grant("alice\nbob")
	if got := eval(`document.querySelector('#camp-grant-status').textContent`); !strings.HasPrefix(got, "✔ 0 granted, 2 replayed") {
		t.Fatalf("the same list again: %q", got)
	}
	grant("carol,welcome.alice")
	if got := eval(`document.querySelector('#camp-grant-result tbody tr[data-status=refused]')?.innerText ?? ''`); !strings.Contains(got, "IDEMPOTENCY_CONFLICT") {
		t.Fatalf("a reward id already alice's, for carol: %q", got)
	}
	grant("bob\nbob")
	if got := eval(`document.querySelector('#camp-grant-status').textContent`); !strings.Contains(got, "Nothing sent") || !strings.Contains(got, "line 2") {
		t.Fatalf("a player twice: %q", got)
	}
	grant("erin\nbad!id")
	if got := eval(`document.querySelector('#camp-grant-status').textContent`); !strings.Contains(got, "line 2: ") ||
		!strings.Contains(got, "INVALID_REQUEST") || !strings.Contains(got, "Nothing was granted") {
		t.Fatalf("a malformed player id: %q", got)
	}
	rewards := apitest.Data[[]rewardAnswer](t, h.Get("/api/v1/campaigns/welcome/rewards", c.Key))
	if len(rewards) != 2 {
		t.Fatalf("the server holds %+v, want alice's and bob's only (erin's request was refused whole)", rewards)
	}

	// Alice plays one free bet (a bet of nothing) and wins 1.25 with it.
	l := apitest.Data[apitest.Launch](t, h.Call(http.MethodPost, "/api/v1/game/launch", c.Key,
		apitest.LaunchBody("demo", "demo-slot", "alice", "EUR")))
	for _, call := range []struct {
		op   string
		body map[string]any
	}{
		{"bet", map[string]any{"transaction_id": apitest.UID("fb"), "round_id": "fr-1", "amount": "0"}},
		{"win", map[string]any{"transaction_id": apitest.UID("fw"), "round_id": "fr-1", "amount": "1.25", "round_closed": true}},
	} {
		call.body["session_id"] = l.SessionID
		if rec := h.WalletCall("demo", apitest.ProviderSecret("demo"), call.op, call.body); rec.Code != http.StatusOK {
			t.Fatalf("free %s: %d %s", call.op, rec.Code, rec.Body)
		}
	}
	h.Pump()

	// Bob's reward is unused: cancel it (asked first; Keep it keeps it).
	show()
	wait("the campaign still open, alice's reward used", `document.querySelector('#camp-rewards tbody tr[data-id="welcome.alice"] [data-field=used]')?.textContent === '1'`)
	if got := eval(`String(!!document.querySelector('#camp-rewards tbody tr[data-id="welcome.alice"] button'))`); got != "false" {
		t.Fatal("a reward in use has a Cancel button")
	}
	bob := `#camp-rewards tbody tr[data-id="welcome.bob"]`
	run("cancel bob's", chromedp.Click(chromedp.CSS(bob+` button`)))
	wait("the question", `!document.querySelector('#camp-confirm').hidden && document.querySelector('#camp-confirm-text').textContent.includes('welcome.bob')`)
	run("keep it", chromedp.Click(chromedp.ID("camp-cancel-no")))
	wait("kept", `document.querySelector('#camp-confirm').hidden && document.querySelector('`+bob+`').dataset.state === 'active'`)
	run("cancel bob's again", chromedp.Click(chromedp.CSS(bob+` button`)))
	wait("the question", `!document.querySelector('#camp-confirm').hidden`)
	run("confirm", chromedp.SendKeys(chromedp.CSS(`#camp-cancel [name=reason]`), "player asked\r"))
	wait("cancelled", `document.querySelector('`+bob+`')?.dataset.state === 'cancelled' && document.body.dataset.busy === 'no'`)
	if got := eval(`document.querySelector('` + bob + `').innerText`); !strings.Contains(got, "✖ cancelled") {
		t.Fatalf("bob's row: %q", got)
	}

	// The report line: 2 rewards of 3 free bets, 1 used, 3 cancelled, 2 left; the cost is the promo win.
	show()
	want := map[string]string{"rewards": "2", "granted": "6", "used": "1", "cancelled": "3", "expired": "0", "left": "2",
		"promo-wins": "1.25 EUR", "cost": "1.25 EUR"}
	for f, v := range want {
		if got := cell(f); got != v {
			t.Fatalf("%s is %q, want %q; the row: %s", f, got, v, eval(`document.querySelector('#camp-table tbody tr[data-id="welcome"]').innerText`))
		}
	}

	// In a reporting currency: no rate yet is a gap, named; with one, the cost converted.
	run("report in "+reporting, chromedp.SetValue(chromedp.CSS(`#camp-filter [name=reporting_currency]`), reporting))
	show()
	if got := eval(`document.querySelector('#camp-table tbody tr[data-id="welcome"] td.gap')?.textContent ?? ''`); !strings.Contains(got, "no "+reporting+" rate for "+today) {
		t.Fatalf("without a rate: %q", got)
	}
	if got := eval(`document.querySelector('#camp-total').textContent`); !strings.Contains(got, "not known") {
		t.Fatalf("the total without a rate: %q", got)
	}
	day := func(d time.Duration) string { return time.Now().UTC().Add(d).Format(time.DateOnly) }
	rates := "day,base,quote,rate\n" + day(-24*time.Hour) + ",EUR," + reporting + ",2\n" + today + ",EUR," + reporting + ",2\n" +
		day(24*time.Hour) + ",EUR," + reporting + ",2\n"
	if rec := h.Do(apitest.Request{Method: http.MethodPut, Path: "/admin/v1/fx-rates", Key: csAdminToken, Body: rates,
		Header: map[string]string{"Content-Type": "text/csv"}}); rec.Code != http.StatusOK {
		t.Fatalf("rates: %d %s", rec.Code, rec.Body)
	}
	show()
	if got := eval(`[...document.querySelectorAll('#camp-table tbody tr[data-id="welcome"] td')].at(-2).textContent`); got != "2.50 "+reporting {
		t.Fatalf("the cost in %s: %q", reporting, got)
	}
	if got := eval(`document.querySelector('#camp-total').textContent`); got != "Total cost in "+reporting+": 2.50." {
		t.Fatalf("the total: %q", got)
	}
	tab.Screenshot(t, shots, "14-campaigns.png")

	// The CSV is the server's report, as it is.
	if _, err := chromedp.Run(tab.Ctx, chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.CallBrowser(ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
			Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: downloads})
		return err
	})); err != nil {
		t.Fatalf("allow downloads: %v", err)
	}
	run("download the CSV", chromedp.Click(chromedp.ID("camp-csv")))
	csv := strings.Split(strings.TrimSpace(waitDownload(t, downloads, ".csv")), "\n")
	if len(csv) != 2 || !strings.HasPrefix(csv[0], "campaign_id,name,provider,currency,bet_value,") ||
		!strings.HasSuffix(csv[0], ",cost,reporting_currency,reporting_cost,missing_rate_days") ||
		!strings.HasPrefix(csv[1], "welcome,<b>Welcome</b> spins,demo,EUR,0.50,") ||
		!strings.Contains(csv[1], ",2,6,1,3,0,2,0.00,0.00,1.25,0.00,1.25,"+reporting+",2.50,") {
		t.Fatalf("CSV:\n%s", strings.Join(csv, "\n"))
	}

	// A campaign of two games: the grant form asks which one.
	game2 := apitest.UID("slot")
	h.AddGame(game2, "demo", "Demo Slot Two", "slots", true)
	apitest.Data[campaignAnswer](t, h.Call(http.MethodPost, "/api/v1/campaigns", c.Key, map[string]any{"campaign_id": "duo",
		"provider": "demo", "games": []string{"demo-slot", game2}, "currency": "EUR", "bet_value": "1.00", "free_bets": 1,
		"valid_until": time.Now().UTC().Add(24 * time.Hour).Format(time.RFC3339)}))
	show()
	run("open duo", chromedp.Click(chromedp.CSS(`#camp-table tbody tr[data-id="duo"] button`)))
	wait("duo open with a game choice", `document.querySelector('#camp-detail').dataset.id === 'duo' && !document.querySelector('#camp-grant-game').hidden && document.body.dataset.busy === 'no'`)
	run("choose the second game", chromedp.SetValue(chromedp.CSS(`#camp-grant [name=game_id]`), game2))
	grant("dave")
	if got := eval(`document.querySelector('#camp-rewards tbody tr[data-id="duo.dave"] td:nth-child(3)')?.textContent ?? ''`); got != game2 {
		t.Fatalf("dave's reward is for %q, want %s", got, game2)
	}

	// A key that only reads campaigns: the list, no forms, no counts, no Cancel.
	run("sign out", chromedp.Click(chromedp.ID("signout")))
	wait("signed out", `document.body.dataset.state === 'signin'`)
	signIn(readOnly)
	run("open #campaigns", chromedp.Evaluate[chromedp.Void](`location.hash = '#campaigns'; dispatchEvent(new HashChangeEvent('hashchange'))`))
	wait("the list", `!!document.querySelector('#camp-table tbody tr[data-id="welcome"]') && document.body.dataset.busy === 'no'`)
	if got := eval(`[document.querySelector('#camp-create-part').hidden, document.querySelector('#camp-write-note').hidden,
		document.querySelector('#camp-report-note').hidden, document.querySelector('#camp-csv').disabled].join(' ')`); got != "true false false true" {
		t.Fatalf("read-only: create form hidden, write note shown, reports note shown, CSV disabled: %q", got)
	}
	run("open welcome's rewards", chromedp.Click(chromedp.CSS(`#camp-table tbody tr[data-id="welcome"] button`)))
	wait("the rewards", `document.querySelectorAll('#camp-rewards tbody tr').length === 2 && document.body.dataset.busy === 'no'`)
	if got := eval(`[String(document.querySelector('#camp-grant-part').hidden), document.querySelectorAll('#camp-rewards button').length].join(' ')`); got != "true 0" {
		t.Fatalf("read-only: grant form hidden, no Cancel: %q", got)
	}

	// A key without promotions:read: no tab, and the page says what it needs.
	run("sign out", chromedp.Click(chromedp.ID("signout")))
	wait("signed out", `document.body.dataset.state === 'signin'`)
	signIn(reportsOnly)
	if got := eval(`String(document.querySelector('#tabs a[data-page=campaigns]').parentElement.hidden)`); got != "true" {
		t.Fatal("a key without promotions:read shows the Campaigns tab")
	}
	run("open #campaigns", chromedp.Evaluate[chromedp.Void](`location.hash = '#campaigns'; dispatchEvent(new HashChangeEvent('hashchange'))`))
	wait("refused", `!document.querySelector('#denied').hidden && document.querySelector('#page-campaigns').hidden && `+
		`document.querySelector('#denied').textContent.includes('needs promotions:read')`)

	requests, problems := tab.Recorded()
	if len(problems) > 0 {
		t.Fatalf("script errors on the page: %v", problems)
	}
	for _, u := range requests {
		if !strings.HasPrefix(u, h.URL+"/") && !strings.HasPrefix(u, "blob:"+h.URL+"/") && !strings.HasPrefix(u, "data:") {
			t.Fatalf("the page requested %s, outside %s", u, h.URL)
		}
	}
}
