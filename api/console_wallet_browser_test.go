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
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/internal/browsertest"
	"github.com/pitboss/pitboss/wallet"
)

// cwCredential is what the admin types as the client's wallet
// credential: it must never be on the page once sent.
const cwCredential = "pam-token-typed-in-the-console-8c1f0e57"

// cwClient is a client as GET /admin/v1/clients/{id} shows its wallet.
type cwClient struct {
	Wallet *struct {
		Mode          string `json:"mode"`
		URL           string `json:"url"`
		Protocol      string `json:"protocol"`
		OperatorID    string `json:"operator_id"`
		CredentialSet bool   `json:"credential_set"`
	} `json:"wallet"`
}

// TestConsoleWalletInABrowser drives the wallet part of the console's
// Tokens page (docs/seamless-wallet.md) in headless Chromium against the
// real server: sign in with the admin token, pick a client, see its mode
// (ledger) and its pending follow-up (attempts, next attempt, last error;
// not another client's), and, with the toggle, its settled one (outcome);
// set the client seamless on tbb with a loopback URL, an operator id and a
// typed credential (the panel shows seamless and "credential set"; the
// admin API and the store hold what was typed; the page never shows the
// credential), submit a URL the API refuses (its message next to the
// form, the field marked, nothing stored), change the URL with the
// credential left empty (the stored one stays), set it back to ledger,
// and sign out (the page forgets it all). It fails (does not skip)
// without chromium.
func TestConsoleWalletInABrowser(t *testing.T) {
	t.Parallel()
	chromium := browsertest.ChromiumPath(t)
	h := apitest.New(t, apitest.Options{Loopback: true, AdminToken: csAdminToken, AllowPrivateCallbacks: true})
	clientID := apitest.UID("wallet")
	other := apitest.UID("wallet")
	for _, id := range []string{clientID, other} {
		apitest.Data[map[string]any](t, h.Admin(http.MethodPost, "/admin/v1/clients",
			map[string]any{"id": id, "name": "Wallet Casino " + id, "environment": "sandbox"}))
	}
	fu := cwSeedFollowUps(t, h, clientID, other)

	p := &cwPage{t: t, h: h, client: clientID, tab: browsertest.OpenBrowser(t, chromium, 1400, 1300, 3*time.Minute)}
	p.run("open the console", chromedp.Navigate(h.URL+"/console/"))
	p.wait("the sign-in form", `document.body.dataset.state === 'signin'`)
	p.run("admin sign in", chromedp.SendKeys(chromedp.ID("secret"), csAdminToken+"\r"))
	p.wait("the client picker", `document.body.dataset.state === 'pick-client'`)
	p.run("pick the client", chromedp.SetValue(chromedp.ID("client"), clientID), chromedp.Click(chromedp.CSS(`#client-form button`)))
	p.wait("signed in as admin", `document.body.dataset.state === 'ready' && document.querySelector('#tabs a[data-page=tokens]')?.parentElement.hidden === false`)
	p.run("open Tokens from its tab", chromedp.Click(chromedp.CSS(`#tabs a[data-page=tokens]`)))
	p.wait("the client's wallet and follow-ups", `document.body.dataset.page === 'tokens' && document.querySelector('#page-tokens').dataset.client === `+
		strconv.Quote(clientID)+` && document.querySelector('#wal-panel').dataset.mode === 'ledger' && !!document.querySelector('#wal-fu').dataset.loaded && document.body.dataset.busy === 'no'`)

	p.checkLedgerShown()
	p.checkFollowUps(fu)
	p.setSeamless()
	p.refuseBadURL()
	p.keepCredential()
	p.backToLedger()

	// Sign out: the page forgets the client's wallet and follow-ups.
	p.run("sign out", chromedp.Click(chromedp.ID("signout")))
	p.wait("signed out", `document.body.dataset.state === 'signin' && sessionStorage.length === 0`)
	if got := p.eval(`document.querySelectorAll('#wal-panel *, #wal-fu tbody tr').length + '|' + document.querySelector('#wal-fu-status').textContent`); got != "0|" {
		t.Fatalf("the wallet part kept %s after sign-out", got)
	}

	requests, problems := p.tab.Recorded()
	if len(problems) > 0 {
		t.Fatalf("script errors on the page: %v", problems)
	}
	for _, u := range requests {
		if !strings.HasPrefix(u, h.URL+"/") && !strings.HasPrefix(u, "data:") {
			t.Fatalf("the page requested %s, outside %s", u, h.URL)
		}
	}
}

// cwFollowUps are the follow-ups seeded for the test: the client's
// pending and settled ones, and another client's.
type cwFollowUps struct {
	pending, settled, others int64
	next                     time.Time
}

// cwSeedFollowUps queues three follow-ups as the wallet core would (an
// unknown debit's cancel, an unknown credit's re-send, another client's
// re-send), then fails the cancel's first attempt and settles the
// client's re-send.
func cwSeedFollowUps(t *testing.T, h *apitest.Harness, clientID, other string) cwFollowUps {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	queue := []wallet.FollowUp{
		{ClientID: clientID, Action: wallet.ActionResend, NextAt: now, Call: wallet.FollowUpCall{Session: "sess-cw-1",
			Kind: domain.TxWin, Tx: wallet.FollowUpTx{ID: "win-cw-1", Game: "g1", Round: "r1"}, Amount: "12.50", Ref: "bet-cw-0",
			Move: "credit", MoveID: "win-cw-1", MoveRef: "bet-cw-0"}},
		{ClientID: clientID, Action: wallet.ActionCancel, NextAt: now, Call: wallet.FollowUpCall{Session: "sess-cw-1",
			Kind: domain.TxBet, Tx: wallet.FollowUpTx{ID: "bet-cw-1", Game: "g1", Round: "r2"}, Amount: "5.00",
			Move: "debit", MoveID: "bet-cw-1"}},
		{ClientID: other, Action: wallet.ActionResend, NextAt: now, Call: wallet.FollowUpCall{Session: "sess-cw-9",
			Kind: domain.TxWin, Tx: wallet.FollowUpTx{ID: "win-cw-9"}, Amount: "1.00", Move: "credit", MoveID: "win-cw-9"}},
	}
	ids := map[string]int64{}
	for _, f := range queue {
		if err := h.FollowUps.Enqueue(ctx, f); err != nil {
			t.Fatal(err)
		}
		list, err := h.FollowUps.List(ctx, f.ClientID, false, 10, 0)
		if err != nil || len(list) == 0 {
			t.Fatalf("list %s's follow-ups: %d (%v)", f.ClientID, len(list), err)
		}
		ids[f.Call.MoveID] = list[0].ID
	}
	fu := cwFollowUps{pending: ids["bet-cw-1"], settled: ids["win-cw-1"], others: ids["win-cw-9"], next: now.Add(7 * time.Minute)}
	if err := h.FollowUps.Retry(ctx, fu.pending, fu.next, "operator wallet: <b>timeout</b> after 2s"); err != nil {
		t.Fatal(err)
	}
	if err := h.FollowUps.Finish(ctx, fu.settled, wallet.OutcomeBooked, now); err != nil {
		t.Fatal(err)
	}
	return fu
}

// cwPage is the console's tab with the client's Tokens page open.
type cwPage struct {
	t      *testing.T
	h      *apitest.Harness
	tab    *browsertest.BrowserTab
	client string
}

func (p *cwPage) run(what string, actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	if err := chromedp.Do(p.tab.Ctx, actions...); err != nil {
		p.t.Fatalf("%s: %v", what, err)
	}
}

func (p *cwPage) eval(expr string) string {
	p.t.Helper()
	s, err := chromedp.Run(p.tab.Ctx, chromedp.Evaluate[string](expr))
	if err != nil {
		p.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return s
}

func (p *cwPage) wait(what, expr string) {
	p.t.Helper()
	p.tab.WaitFor(p.t, what, expr, func() string {
		return p.eval(`(document.querySelector('#wal-error')?.textContent ?? '') + ' | ' + (document.querySelector('#wal-status')?.textContent ?? '') +
			' | ' + document.querySelector('main').innerText.slice(0, 1500)`)
	})
}

// stored is the client's wallet as the admin API shows it.
func (p *cwPage) stored() cwClient {
	p.t.Helper()
	c := apitest.Data[cwClient](p.t, p.h.Admin(http.MethodGet, "/admin/v1/clients/"+p.client, nil))
	if c.Wallet == nil {
		p.t.Fatal("the client shows no wallet")
	}
	return c
}

// submit sends the wallet form and waits for its answer: a new status
// line, or the error next to the form.
func (p *cwPage) submit(what string) {
	p.t.Helper()
	p.run("clear the last answer", chromedp.Evaluate[chromedp.Void](
		`document.querySelector('#wal-status').textContent = ''; document.querySelector('#wal-error').textContent = ''`))
	p.run(what, chromedp.Click(chromedp.CSS(`#wal-form button[type=submit]`)))
	p.wait(what+": answered", `(document.querySelector('#wal-status').textContent !== '' || document.querySelector('#wal-error').textContent !== '') && `+
		`document.body.dataset.busy === 'no' && !document.querySelector('#wal-form button[type=submit]').disabled`)
}

// noCredential fails if the credential is anywhere on the page: its
// markup, its text, or any input's value.
func (p *cwPage) noCredential(when string) {
	p.t.Helper()
	if got := p.eval(`document.documentElement.outerHTML + document.body.innerText + [...document.querySelectorAll('input')].map(i => i.value).join('|')`); strings.Contains(got, cwCredential) {
		p.t.Fatalf("%s: the credential is on the page", when)
	}
}

func (p *cwPage) checkLedgerShown() {
	p.t.Helper()
	if got := p.eval(`document.querySelector('#wal-panel').innerText`); !strings.Contains(got, "ledger") || strings.Contains(got, "Credential") {
		p.t.Fatalf("the panel of a ledger client: %q", got)
	}
	if got := p.eval(`document.querySelector('#wal-form [name=mode]').value + '|' + document.querySelector('#wal-seamless').hidden`); got != "ledger|true" {
		p.t.Fatalf("the form of a ledger client (mode, seamless fields hidden): %q", got)
	}
}

func (p *cwPage) checkFollowUps(fu cwFollowUps) {
	p.t.Helper()
	row := func(id int64) string { return `#wal-fu tbody tr[data-id="` + strconv.FormatInt(id, 10) + `"]` }
	if got := p.eval(`[...document.querySelectorAll('#wal-fu tbody tr')].map(r => r.dataset.id).join(',')`); got != strconv.FormatInt(fu.pending, 10) {
		p.t.Fatalf("pending follow-ups listed: %q, want only %d", got, fu.pending)
	}
	got := p.eval(`document.querySelector('` + row(fu.pending) + `').innerText`)
	for _, want := range []string{"cancel", "bet · debit", "bet-cw-1", "sess-cw-1", "5.00", "\t1\t", "pending",
		fu.next.Format("2006-01-02 15:04:05"), "operator wallet: <b>timeout</b> after 2s"} {
		if !strings.Contains(got, want) {
			p.t.Fatalf("the pending follow-up's row lacks %q: %q", want, got)
		}
	}
	if p.eval(`String(!!document.querySelector('#wal-fu b'))`) != "false" {
		p.t.Fatal("markup in a follow-up's last error became an element")
	}
	p.run("show settled ones too", chromedp.Click(chromedp.ID("wal-fu-all")))
	p.wait("the settled follow-up listed", `document.querySelectorAll('#wal-fu tbody tr').length === 2 && document.body.dataset.busy === 'no'`)
	got = p.eval(`document.querySelector('` + row(fu.settled) + `[data-state=settled]').innerText`)
	for _, want := range []string{"resend", "win · credit", "win-cw-1", "(ref bet-cw-0)", "12.50", "settled", wallet.OutcomeBooked} {
		if !strings.Contains(got, want) {
			p.t.Fatalf("the settled follow-up's row lacks %q: %q", want, got)
		}
	}
	if p.eval(`String(!!document.querySelector('`+row(fu.others)+`'))`) != "false" {
		p.t.Fatal("another client's follow-up is listed")
	}
	p.tab.Screenshot(p.t, browsertest.OutDir(p.t, "console"), "12-wallet-follow-ups.png")
	p.run("pending ones only", chromedp.Click(chromedp.ID("wal-fu-all")))
	p.wait("the pending list again", `document.querySelectorAll('#wal-fu tbody tr').length === 1 && document.body.dataset.busy === 'no'`)
}

func (p *cwPage) setSeamless() {
	p.t.Helper()
	p.run("choose seamless", chromedp.SetValue(chromedp.CSS(`#wal-form [name=mode]`), "seamless"))
	p.wait("the seamless fields shown", `!document.querySelector('#wal-seamless').hidden`)
	p.run("fill in the client's wallet",
		chromedp.SendKeys(chromedp.CSS(`#wal-form [name=url]`), "http://127.0.0.1:9/tbb"),
		chromedp.SetValue(chromedp.CSS(`#wal-form [name=protocol]`), "tbb"),
		chromedp.SendKeys(chromedp.CSS(`#wal-form [name=operator_id]`), "casino-7"),
		chromedp.SendKeys(chromedp.CSS(`#wal-form [name=credential]`), cwCredential))
	if got := p.eval(`document.querySelector('#wal-form [name=credential]').type`); got != "password" {
		p.t.Fatalf("the credential is typed into a %q input", got)
	}
	p.submit("set seamless")
	p.wait("the panel shows seamless", `document.querySelector('#wal-panel').dataset.mode === 'seamless' && document.querySelector('#wal-error').textContent === ''`)
	got := p.eval(`document.querySelector('#wal-panel').innerText`)
	for _, want := range []string{"seamless", "http://127.0.0.1:9/tbb", "tbb", "casino-7", "credential set"} {
		if !strings.Contains(got, want) {
			p.t.Fatalf("the panel lacks %q: %q", want, got)
		}
	}
	w := p.stored().Wallet
	if w.Mode != "seamless" || w.URL != "http://127.0.0.1:9/tbb" || w.Protocol != "tbb" || w.OperatorID != "casino-7" || !w.CredentialSet {
		p.t.Fatalf("stored: %+v", *w)
	}
	if cw, err := p.h.Gateway.ClientWallet(context.Background(), p.client); err != nil || cw.Credential != cwCredential {
		p.t.Fatalf("the stored credential is not the one typed (%v)", err)
	}
	p.noCredential("after setting seamless")
	p.tab.Screenshot(p.t, browsertest.OutDir(p.t, "console"), "13-wallet-seamless.png")
}

func (p *cwPage) refuseBadURL() {
	p.t.Helper()
	const bad = "ftp://127.0.0.1/tbb"
	want := apitest.WantError(p.t, p.h.Admin(http.MethodPut, "/admin/v1/clients/"+p.client+"/wallet",
		map[string]any{"mode": "seamless", "url": bad, "protocol": "tbb", "operator_id": "casino-7"}), http.StatusBadRequest, wire.CodeInvalidRequest)
	if want.Error.Details["field"] != "url" {
		p.t.Fatalf("the API refuses %s for %v, not its url", bad, want.Error.Details)
	}
	p.run("a URL the API refuses", chromedp.SetValue(chromedp.CSS(`#wal-form [name=url]`), bad))
	p.submit("submit the bad URL")
	if got := p.eval(`document.querySelector('#wal-error').textContent`); got != want.Error.Message+" (INVALID_REQUEST, HTTP 400)" {
		p.t.Fatalf("the error shown: %q, the API's message: %q", got, want.Error.Message)
	}
	if got := p.eval(`document.activeElement.name + '|' + document.querySelector('#wal-form [name=url]').getAttribute('aria-invalid')`); got != "url|true" {
		p.t.Fatalf("the refused field is not marked and focused: %q", got)
	}
	if got := p.eval(`document.querySelector('#wal-panel').innerText`); !strings.Contains(got, "http://127.0.0.1:9/tbb") {
		p.t.Fatalf("a refused setting changed the panel: %q", got)
	}
	if w := p.stored().Wallet; w.URL != "http://127.0.0.1:9/tbb" {
		p.t.Fatalf("a refused setting was stored: %+v", *w)
	}
	p.tab.Screenshot(p.t, browsertest.OutDir(p.t, "console"), "14-wallet-refused.png")
}

func (p *cwPage) keepCredential() {
	p.t.Helper()
	p.run("another URL, no credential", chromedp.SetValue(chromedp.CSS(`#wal-form [name=url]`), "http://127.0.0.1:9/tbb2"))
	p.submit("submit without a credential")
	p.wait("the new URL shown", `document.querySelector('#wal-panel').innerText.includes('http://127.0.0.1:9/tbb2') && document.querySelector('#wal-error').textContent === ''`)
	if p.eval(`String(document.querySelector('#wal-form [aria-invalid]') === null)`) != "true" {
		p.t.Fatal("the field refused before is still marked")
	}
	if cw, err := p.h.Gateway.ClientWallet(context.Background(), p.client); err != nil || cw.Credential != cwCredential || cw.URL != "http://127.0.0.1:9/tbb2" {
		p.t.Fatalf("after a change with the credential left empty: %s, credential kept %t (%v)", cw.URL, cw.Credential == cwCredential, err)
	}
	p.noCredential("after changing the URL")
}

func (p *cwPage) backToLedger() {
	p.t.Helper()
	p.run("choose ledger", chromedp.SetValue(chromedp.CSS(`#wal-form [name=mode]`), "ledger"))
	p.wait("the seamless fields hidden", `document.querySelector('#wal-seamless').hidden`)
	p.submit("set ledger")
	p.wait("the panel shows ledger", `document.querySelector('#wal-panel').dataset.mode === 'ledger' && document.querySelector('#wal-error').textContent === ''`)
	if got := p.eval(`document.querySelector('#wal-panel').innerText`); !strings.Contains(got, "ledger") || strings.Contains(got, "127.0.0.1") ||
		strings.Contains(got, "credential set") {
		p.t.Fatalf("the panel after setting ledger: %q", got)
	}
	if w := p.stored().Wallet; w.Mode != "ledger" || w.URL != "" || w.CredentialSet {
		p.t.Fatalf("stored after setting ledger: %+v", *w)
	}
	p.noCredential("after setting ledger")
}
