package api_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/internal/browsertest"
)

// TestConsoleTokensInABrowser drives the console's tokens page (the
// spec's "tokens area of the administration panel") in headless Chromium
// against the real server: sign in with the admin token, pick a client,
// open Tokens by keyboard (Alt+6), see the client's keys (markup in a
// label stays text), issue a key (shown once; it works), rotate one (its
// successor shown once), revoke one after confirming (it stops working),
// reveal the client secret with a reason (the page shows the secret the
// server holds; the trail shows the reveal, and so does the database),
// hide it, and sign out; then an API key's session has no way in.
// Screenshots go to out/console/. It fails (does
// not skip) without chromium.
func TestConsoleTokensInABrowser(t *testing.T) {
	t.Parallel()
	chromium := browsertest.ChromiumPath(t)
	h := apitest.New(t, apitest.Options{Loopback: true, AdminToken: csAdminToken})
	ctx := context.Background()

	// A client whose name and key label are markup: the page must show
	// them as text.
	clientID := apitest.UID("tokens")
	apitest.Data[map[string]any](t, h.Admin(http.MethodPost, "/admin/v1/clients",
		map[string]any{"id": clientID, "name": `Acme <img src=x id=injected>`, "environment": "sandbox"}))
	backend := apitest.Data[admKey](t, h.Admin(http.MethodPost, "/admin/v1/clients/"+clientID+"/keys",
		map[string]any{"scopes": []string{gateway.ScopeWalletRead, gateway.ScopeLaunch}, "label": "<b>backend</b>"}))
	secret := apitest.Data[map[string]string](t, h.Admin(http.MethodPost, "/admin/v1/clients/"+clientID+"/client-secret", nil))["client_secret"]
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
			return eval(`(document.querySelector('#tok-status')?.textContent ?? '(no tokens page)') + ' | ' + document.querySelector('main').innerText.slice(0, 1500)`)
		})
	}
	// loads is how often the tokens page has loaded; settled waits for
	// one more load than before.
	loads := func() string { return eval(`document.querySelector('#page-tokens').dataset.loaded || '0'`) }
	settled := func(what, before string) {
		t.Helper()
		wait(what, `(document.querySelector('#page-tokens').dataset.loaded || '0') !== `+strconv.Quote(before)+
			` && document.body.dataset.busy === 'no'`)
	}
	row := func(keyID string) string { return `#tok-keys tbody tr[data-id="` + keyID + `"]` }
	// keyWorks tells whether a key authenticates on /api/v1.
	keyWorks := func(key string) bool {
		t.Helper()
		switch rec := h.Get("/api/v1/me", key); rec.Code {
		case http.StatusOK:
			return true
		case http.StatusUnauthorized:
			return false
		default:
			t.Fatalf("GET /api/v1/me: %d %s", rec.Code, rec.Body)
			return false
		}
	}

	// Sign in as admin and act for the client.
	run("open the console", chromedp.Navigate(h.URL+"/console/"))
	wait("the sign-in form", `document.body.dataset.state === 'signin'`)
	run("admin sign in", chromedp.SendKeys(chromedp.ID("secret"), csAdminToken+"\r"))
	wait("the client picker", `document.body.dataset.state === 'pick-client'`)
	run("pick the client", chromedp.SetValue(chromedp.ID("client"), clientID), chromedp.Click(chromedp.CSS(`#client-form button`)))
	wait("signed in as admin, with a Tokens tab", `document.body.dataset.state === 'ready' && document.querySelector('#tabs a[data-page=tokens]')?.parentElement.hidden === false`)
	sessionKeyID := eval(`sessionStorage.getItem('pitboss.keyid')`)

	// Tokens by keyboard: the client's keys, never a key itself.
	run("Alt+6", chromedp.KeyEvent("6", chromedp.KeyModifiers(chromedp.ModifierAlt)))
	wait("the tokens page", `document.body.dataset.page === 'tokens' && document.querySelector('#page-tokens').dataset.client === `+
		strconv.Quote(clientID)+` && document.querySelectorAll('#tok-keys tbody tr').length === 2 && document.body.dataset.busy === 'no'`)
	if got := eval(`document.querySelector('` + row(backend.ID) + `').innerText`); !strings.Contains(got, backend.Prefix) ||
		!strings.Contains(got, "<b>backend</b>") || !strings.Contains(got, "wallet:read, launch") || !strings.Contains(got, "active") ||
		!strings.Contains(got, "sandbox") || !strings.Contains(got, "never") {
		t.Fatalf("the backend key's row: %q", got)
	}
	if got := eval(`document.querySelector('` + row(sessionKeyID) + `').innerText`); !strings.Contains(got, "this console session") {
		t.Fatalf("the console's own session key is not marked: %q", got)
	}
	if got := eval(`String(!!document.querySelector('#page-tokens b, #page-tokens img, #injected')) + ' ' +
		String(document.querySelector('#tok-client').selectedOptions[0].textContent.includes('<img src=x id=injected>'))`); got != "false true" {
		t.Fatalf("markup in data became elements, or was lost (%s)", got)
	}
	if got := eval(`[...document.querySelectorAll('#tok-scopes input')].map(i => i.value).join(',')`); got != strings.Join(gateway.AllScopes, ",") {
		t.Fatalf("the page offers scopes %s, the server has %v", got, gateway.AllScopes)
	}
	if got := eval(`document.querySelector('#tok-secret-value').value + '|' + document.querySelector('#tok-secret-shown').hidden`); got != "|true" {
		t.Fatalf("the client secret shows before a reveal: %q", got)
	}
	if strings.Contains(eval(`document.documentElement.outerHTML`), secret) {
		t.Fatal("the client secret is in the page before a reveal")
	}
	tab.Screenshot(t, shots, "9-tokens.png")

	// Issue a key: shown once, and it works.
	before := loads()
	run("issue a key", chromedp.Click(chromedp.CSS(`#tok-scopes input[value="wallet:read"]`)),
		chromedp.SendKeys(chromedp.CSS(`#tok-issue input[name=label]`), "tokens-test"),
		chromedp.Click(chromedp.CSS(`#tok-issue button[type=submit]`)))
	settled("the issued key", before)
	wait("the new key shown once", `!document.querySelector('#tok-once').hidden && document.querySelector('#tok-once-key').value !== ''`)
	issued := eval(`document.querySelector('#tok-once-key').value`)
	issuedPrefix := eval(`document.querySelector('#tok-once').dataset.prefix`)
	if !strings.HasPrefix(issued, issuedPrefix+"_") || !keyWorks(issued) {
		t.Fatalf("the key shown (%q, prefix %q) does not work", issued, issuedPrefix)
	}
	issuedID := strings.TrimPrefix(issuedPrefix, "pb_test_")
	wait("the issued key listed", `!!document.querySelector('`+row(issuedID)+`[data-status=active]')`)
	if got := eval(`document.querySelector('` + row(issuedID) + `').innerText`); strings.Contains(got, issued) ||
		!strings.Contains(got, "tokens-test") || !strings.Contains(got, "wallet:read") {
		t.Fatalf("the issued key's row: %q", got)
	}
	run("I have stored it", chromedp.Click(chromedp.ID("tok-once-done")))
	if got := eval(`document.querySelector('#tok-once').hidden + '|' + document.querySelector('#tok-once-key').value`); got != "true|" {
		t.Fatalf("the new key is still on the page after dismissing it: %q", got)
	}
	if strings.Contains(eval(`document.documentElement.outerHTML + document.querySelector('#tok-once-key').value`), issued) {
		t.Fatal("the issued key is still on the page")
	}

	// Rotate the backend key: its successor is shown once; the old key
	// keeps working through the grace period chosen.
	run("rotate", chromedp.Click(chromedp.CSS(row(backend.ID)+` button[data-action=rotate]`)))
	wait("the rotate confirmation", `!document.querySelector('#tok-confirm').hidden && document.querySelector('#tok-confirm-yes').dataset.action === 'rotate'`)
	before = loads()
	run("confirm the rotation", chromedp.SetValue(chromedp.ID("tok-grace"), "3600"), chromedp.Click(chromedp.ID("tok-confirm-yes")))
	settled("the rotation", before)
	wait("the successor shown once", `!document.querySelector('#tok-once').hidden && document.querySelector('#tok-once-key').value !== ''`)
	successor := eval(`document.querySelector('#tok-once-key').value`)
	if !keyWorks(successor) || !keyWorks(backend.Key) {
		t.Fatal("after the rotation, the successor or the old key (in its grace period) does not work")
	}
	var replacedBy string
	if err := h.Pool.QueryRow(ctx, `SELECT replaced_by FROM api_keys WHERE id = $1`, backend.ID).Scan(&replacedBy); err != nil || !strings.HasPrefix(successor, "pb_test_"+replacedBy+"_") {
		t.Fatalf("the old key is replaced by %q (%v), the page showed %q", replacedBy, err, successor)
	}
	wait("the old key marked rotated", `document.querySelector('`+row(backend.ID)+`').innerText.includes('rotated')`)
	run("dismiss the successor", chromedp.Click(chromedp.ID("tok-once-done")))

	// Revoke the issued key, after confirming; Cancel first changes nothing.
	run("revoke, then cancel", chromedp.Click(chromedp.CSS(row(issuedID)+` button[data-action=revoke]`)))
	wait("the revoke confirmation", `!document.querySelector('#tok-confirm').hidden && document.querySelector('#tok-confirm-text').textContent.includes(`+
		strconv.Quote(issuedPrefix)+`)`)
	run("cancel", chromedp.Click(chromedp.ID("tok-confirm-no")))
	if !keyWorks(issued) || eval(`String(document.querySelector('#tok-confirm').hidden)`) != "true" {
		t.Fatal("cancelling a revocation revoked the key, or left the confirmation open")
	}
	run("revoke", chromedp.Click(chromedp.CSS(row(issuedID)+` button[data-action=revoke]`)))
	wait("the revoke confirmation", `!document.querySelector('#tok-confirm').hidden && document.querySelector('#tok-confirm-yes').dataset.action === 'revoke'`)
	before = loads()
	run("confirm the revocation", chromedp.Click(chromedp.ID("tok-confirm-yes")))
	settled("the revocation", before)
	wait("the key revoked in the list", `!!document.querySelector('`+row(issuedID)+`[data-status=revoked]') && document.querySelector('#tok-status').textContent.includes('revoked')`)
	if keyWorks(issued) {
		t.Fatal("the revoked key still works")
	}

	// Reveal the client secret with a reason: the page shows the secret the
	// server holds, and the trail (page and database) shows the reveal.
	run("reveal", chromedp.SendKeys(chromedp.CSS(`#tok-reveal input[name=reason]`), "<i>rotation drill</i>\r"))
	wait("the secret revealed", `!document.querySelector('#tok-secret-shown').hidden && document.querySelector('#tok-secret-value').value !== ''`)
	if got := eval(`document.querySelector('#tok-secret-value').value`); got != secret {
		t.Fatalf("the page revealed %q, the client's secret is %q", got, secret)
	}
	wait("the reveal in the trail", `document.querySelectorAll('#tok-trail tbody tr').length === 1`)
	var (
		revealID             int64
		reason, actor, where string
	)
	if err := h.Pool.QueryRow(ctx, `SELECT id, reason, actor, remote_addr FROM client_secret_reveals WHERE client_id = $1`, clientID).
		Scan(&revealID, &reason, &actor, &where); err != nil || reason != "<i>rotation drill</i>" || !strings.HasPrefix(actor, "admin-token:") ||
		where != "127.0.0.1" {
		t.Fatalf("the trail's row: %d %q %q %q (%v)", revealID, reason, actor, where, err)
	}
	trail := eval(`document.querySelector('#tok-trail tbody tr').dataset.id + '|' + document.querySelector('#tok-trail tbody tr').innerText`)
	if !strings.HasPrefix(trail, strconv.FormatInt(revealID, 10)+"|") || !strings.Contains(trail, "<i>rotation drill</i>") ||
		!strings.Contains(trail, actor) || !strings.Contains(trail, "127.0.0.1") || !strings.Contains(trail, "HeadlessChrome") ||
		eval(`String(!!document.querySelector('#tok-trail i'))`) != "false" {
		t.Fatalf("the trail on the page: %q", trail)
	}
	run("copy", chromedp.Click(chromedp.ID("tok-secret-copy")))
	wait("copied (or selected for copying)", `/Copied|Ctrl\+C/.test(document.querySelector('#tok-status').textContent)`)
	tab.Screenshot(t, shots, "10-tokens-revealed.png")
	if lc, err := h.LaunchClients.LaunchClient(ctx, clientID); err != nil || string(lc.Secret) != secret {
		t.Fatalf("the reveal changed the secret: %q (%v)", lc.Secret, err)
	}

	// Hide it; leaving the page hides a revealed secret too.
	run("hide", chromedp.Click(chromedp.ID("tok-secret-hide")))
	if got := eval(`document.querySelector('#tok-secret-value').value + '|' + document.querySelector('#tok-secret-shown').hidden`); got != "|true" {
		t.Fatalf("after Hide: %q", got)
	}
	run("reveal again", chromedp.Click(chromedp.ID("tok-reveal-button")))
	wait("revealed again", `document.querySelector('#tok-secret-value').value !== '' && document.querySelectorAll('#tok-trail tbody tr').length === 2`)
	run("Alt+1", chromedp.KeyEvent("1", chromedp.KeyModifiers(chromedp.ModifierAlt)))
	wait("the overview", `document.body.dataset.page === 'overview'`)
	if got := eval(`document.querySelector('#tok-secret-value').value`); got != "" {
		t.Fatal("the secret stayed on the page after leaving the tokens page")
	}

	// Sign out: the page forgets the tokens area and the session key is
	// revoked.
	run("sign out", chromedp.Click(chromedp.ID("signout")))
	wait("signed out", `document.body.dataset.state === 'signin' && sessionStorage.length === 0`)
	if got := eval(`document.querySelectorAll('#tok-keys tbody tr, #tok-trail tbody tr').length + '|' + document.querySelector('#tok-client').options.length`); got != "0|0" {
		t.Fatalf("the tokens page kept %s after sign-out", got)
	}
	var revoked bool
	if err := h.Pool.QueryRow(ctx, `SELECT revoked_at IS NOT NULL FROM api_keys WHERE id = $1`, sessionKeyID).Scan(&revoked); err != nil || !revoked {
		t.Fatalf("the admin session's key %s is not revoked (%v)", sessionKeyID, err)
	}

	// An API key never opens the tokens page, even by its address.
	run("sign in with a key", chromedp.SendKeys(chromedp.ID("secret"), successor+"\r"))
	wait("signed in with the key", `document.body.dataset.state === 'ready'`)
	if got := eval(`String(document.querySelector('#tabs a[data-page=tokens]').parentElement.hidden)`); got != "true" {
		t.Fatal("an API key's session shows the Tokens tab")
	}
	run("open #tokens", chromedp.Evaluate[chromedp.Void](`location.hash = '#tokens'; dispatchEvent(new HashChangeEvent('hashchange'))`))
	wait("refused", `document.body.dataset.page === 'tokens' && !document.querySelector('#denied').hidden && `+
		`document.querySelector('#denied').textContent.includes('admin token') && document.querySelector('#page-tokens').hidden`)

	requests, problems := tab.Recorded()
	if len(problems) > 0 {
		t.Fatalf("script errors on the page: %v", problems)
	}
	reveals := 0
	for _, u := range requests {
		if !strings.HasPrefix(u, h.URL+"/") && !strings.HasPrefix(u, "data:") {
			t.Fatalf("the page requested %s, outside %s", u, h.URL)
		}
		if strings.HasSuffix(u, "/client-secret/reveal") {
			reveals++
		}
	}
	var recorded int
	if err := h.Pool.QueryRow(ctx, `SELECT count(*) FROM client_secret_reveals WHERE client_id = $1`, clientID).Scan(&recorded); err != nil ||
		reveals != 2 || recorded != reveals {
		t.Fatalf("the page asked for %d reveals, the trail has %d (%v)", reveals, recorded, err)
	}
}
