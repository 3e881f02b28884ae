package demogame_test

import (
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// demoState is the answer of GET /demo/state.
type demoState struct {
	Session  string      `json:"session"`
	GameID   string      `json:"game_id"`
	Currency string      `json:"currency"`
	Balance  json.Number `json:"balance"`
	Stakes   []string    `json:"stakes"`
	Reel     []string    `json:"reel"`
	Symbols  []struct {
		Key, Label string
	} `json:"symbols"`
	Paytable []struct {
		Symbol     string `json:"symbol"`
		Count      int    `json:"count"`
		Multiplier int64  `json:"multiplier"`
	} `json:"paytable"`
	ExpiresAt string `json:"expires_at"`
}

// spinAnswer is the answer of POST /demo/spin.
type spinAnswer struct {
	RoundID          string      `json:"round_id"`
	Line             []string    `json:"line"`
	Stake            json.Number `json:"stake"`
	Multiplier       int64       `json:"multiplier"`
	Win              json.Number `json:"win"`
	Rule             *string     `json:"rule"`
	Balance          json.Number `json:"balance"`
	Currency         string      `json:"currency"`
	BetTransactionID string      `json:"bet_transaction_id"`
	WinTransactionID string      `json:"win_transaction_id"`
}

// payout evaluates a line against the published paytable: the first rule
// (they are listed from the highest pay down) whose symbol is on the line
// exactly count times.
func payout(st demoState, line []string) int64 {
	for _, r := range st.Paytable {
		n := 0
		for _, s := range line {
			if s == r.Symbol {
				n++
			}
		}
		if n == r.Count {
			return r.Multiplier
		}
	}
	return 0
}

func minor(t *testing.T, s json.Number) int64 {
	t.Helper()
	m, err := domain.ParseMoney(s.String(), eur)
	if err != nil {
		t.Fatalf("amount %q: %v", s, err)
	}
	return m.Minor()
}

func TestDemoGameStateAndPaytable(t *testing.T) {
	t.Parallel()
	h, _, l := demoFixture(t, apitest.Options{}, "50.00")
	st := apitest.Data[demoState](t, h.Get("/demo/state?session="+l.SessionID, ""))
	if st.Session != l.SessionID || st.GameID != "demo-slot" || st.Currency != "EUR" || st.Balance.String() != "50.00" ||
		st.ExpiresAt != l.ExpiresAt {
		t.Fatalf("state %+v", st)
	}
	if strings.Join(st.Stakes, ",") != "0.10,0.20,0.50,1.00,2.00,5.00" {
		t.Fatalf("stakes %v", st.Stakes)
	}
	// The published reel and paytable give the documented return to
	// player (96.1%) and hit rate (52.375%), computed here exactly over
	// every line.
	n := int64(len(st.Reel))
	if n != 20 || len(st.Symbols) != 6 {
		t.Fatalf("reel %v symbols %v", st.Reel, st.Symbols)
	}
	ret, hits := new(big.Rat), new(big.Rat)
	for _, a := range st.Reel {
		for _, b := range st.Reel {
			for _, c := range st.Reel {
				if m := payout(st, []string{a, b, c}); m > 0 {
					ret.Add(ret, big.NewRat(m, n*n*n))
					hits.Add(hits, big.NewRat(1, n*n*n))
				}
			}
		}
	}
	if ret.Cmp(big.NewRat(961, 1000)) != 0 || hits.Cmp(big.NewRat(419, 800)) != 0 {
		t.Fatalf("return to player %s, hit rate %s; want 961/1000 and 419/800", ret.FloatString(5), hits.FloatString(5))
	}
}

// TestDemoSpinsGoThroughTheProviderWallet plays rounds and checks each
// against the wallet calls the demo game made (recorded by a proxy in
// front of the wallet), the paytable and the ledger. The server's clock is
// stopped, so each call's v2 signature is known to the second.
func TestDemoSpinsGoThroughTheProviderWallet(t *testing.T) {
	t.Parallel()
	h, c, l := demoFixture(t, apitest.Options{Clock: apitest.StoppedAt(time.Now().Truncate(time.Second))}, "50.00")
	st := apitest.Data[demoState](t, h.Get("/demo/state?session="+l.SessionID, ""))
	wallet := domain.PlayerWallet(c.ID, "p1", eur)
	for len(h.WalletCalls) > 0 { // the balance call of /demo/state
		if call := <-h.WalletCalls; call.Path != "/provider/v1/wallet/balance" {
			t.Fatalf("state made wallet call %s", call.Path)
		}
	}
	balance := int64(5000)
	rounds := map[string]spinAnswer{}
	for i := range 6 {
		stake := []string{"1.00", "0.10", "5.00"}[i%3]
		sp := apitest.Data[spinAnswer](t, h.Call(http.MethodPost, "/demo/spin", "", `{"session":"`+l.SessionID+`","stake":"`+stake+`"}`))
		if sp.Stake.String() != stake || sp.Currency != "EUR" || len(sp.Line) != 3 || rounds[sp.RoundID].RoundID != "" {
			t.Fatalf("spin %+v", sp)
		}
		for _, s := range sp.Line {
			if !strings.Contains(","+strings.Join(st.Reel, ",")+",", ","+s+",") {
				t.Fatalf("line %v has a symbol not on the reel", sp.Line)
			}
		}
		if m := payout(st, sp.Line); m != sp.Multiplier || minor(t, sp.Win) != m*minor(t, sp.Stake) {
			t.Fatalf("spin %+v: paytable says multiplier %d", sp, m)
		}
		balance += minor(t, sp.Win) - minor(t, sp.Stake)
		if minor(t, sp.Balance) != balance {
			t.Fatalf("spin %d balance %s, want %d minor", i, sp.Balance, balance)
		}
		rounds[sp.RoundID] = sp

		// Two wallet calls, signed by the v2 scheme with the demo
		// provider's secret: the bet, then the win closing the round
		// against that bet.
		for j, want := range []string{"bet", "win"} {
			call := <-h.WalletCalls
			if call.Path != "/provider/v1/wallet/"+want || call.ProviderID != "demo" {
				t.Fatalf("call %d of round %d: %s as %q", j, i, call.Path, call.ProviderID)
			}
			if want := apitest.SignV2(apitest.ProviderSecret("demo"), h.Clock.Now().Unix(), http.MethodPost, call.Path,
				call.Body); call.Signature != want {
				t.Fatalf("%s is signed %q, want %q", call.Path, call.Signature, want)
			}
			var body map[string]any
			if err := json.Unmarshal(call.Body, &body); err != nil {
				t.Fatal(err)
			}
			if body["session_id"] != l.SessionID || body["round_id"] != sp.RoundID {
				t.Fatalf("%s body %s", want, call.Body)
			}
			if want == "bet" && (body["transaction_id"] != sp.BetTransactionID || body["amount"] != stake) {
				t.Fatalf("bet body %s", call.Body)
			}
			if want == "win" && (body["transaction_id"] != sp.WinTransactionID || body["round_closed"] != true ||
				body["reference_transaction_id"] != sp.BetTransactionID || body["amount"] != sp.Win.String()) {
				t.Fatalf("win body %s", call.Body)
			}
		}
	}
	if got := h.Balance(wallet); got != balance {
		t.Fatalf("wallet %d, want %d", got, balance)
	}
	bets, wins := h.Events(wallet, domain.EventBetPlaced), h.Events(wallet, domain.EventWinCredited)
	if len(bets) != 6 || len(wins) != 6 {
		t.Fatalf("%d bets and %d wins in the ledger, want 6 each", len(bets), len(wins))
	}
	for i := range bets {
		sp := rounds[bets[i].Data.RoundID]
		if sp.RoundID == "" || bets[i].Data.ExternalTxID != sp.BetTransactionID || bets[i].Data.Amount != sp.Stake.String() ||
			bets[i].Data.RoundClosed || bets[i].Data.Provider != "demo" || bets[i].Data.SessionID != l.SessionID {
			t.Fatalf("bet event %+v", bets[i].Data)
		}
		w := wins[i]
		if w.Data.RoundID != sp.RoundID || w.Data.ExternalTxID != sp.WinTransactionID || w.Data.Amount != sp.Win.String() ||
			!w.Data.RoundClosed || w.Data.ReferenceTx != sp.BetTransactionID {
			t.Fatalf("win event %+v for round %+v", w.Data, sp)
		}
	}
}

func TestDemoRefusals(t *testing.T) {
	t.Parallel()
	h, c, l := demoFixture(t, apitest.Options{}, "0.50")
	wallet := domain.PlayerWallet(c.ID, "p1", eur)
	spin := func(body string) *httptest.ResponseRecorder { return h.Call(http.MethodPost, "/demo/spin", "", body) }
	sess := `"session":"` + l.SessionID + `"`

	apitest.WantError(t, spin(`{`+sess+`,"stake":"1.00"}`), http.StatusBadRequest, wire.CodeInsufficientFunds)
	e := apitest.WantError(t, spin(`{`+sess+`,"stake":"0.15"}`), http.StatusBadRequest, wire.CodeInvalidAmount)
	if e.Error.Details["field"] != "stake" {
		t.Fatalf("details %v", e.Error.Details)
	}
	apitest.WantError(t, spin(`{`+sess+`,"stake":"0.101"}`), http.StatusBadRequest, wire.CodeAmountTooPrecise)
	for body, field := range map[string]string{`{` + sess + `}`: "stake", `{"stake":"0.10"}`: "session"} {
		e := apitest.WantError(t, spin(body), http.StatusBadRequest, wire.CodeInvalidRequest)
		if e.Error.Details["field"] != field || e.Error.Message != field+" is required" {
			t.Fatalf("%s: %+v", body, e.Error)
		}
	}
	apitest.WantError(t, spin(`{`+sess), http.StatusBadRequest, wire.CodeInvalidJSON)
	apitest.WantError(t, spin(`{"session":"gs_nope","stake":"0.10"}`), http.StatusNotFound, wire.CodeNotFound)
	apitest.WantError(t, h.Get("/demo/state?session=gs_nope", ""), http.StatusNotFound, wire.CodeNotFound)
	apitest.WantError(t, h.Get("/demo/state", ""), http.StatusNotFound, wire.CodeNotFound)

	// A session of an outside provider is not the demo game's to play.
	up := apitest.NewJSONProvider(t, http.StatusOK)
	h.AddProvider("acme", "Acme", gateway.ProviderKindJSON, up.URL)
	h.AddGame("acme-slot", "acme", "Acme Slot", "slots", true)
	other := apitest.Data[apitest.Launch](t, h.Call(http.MethodPost, "/api/v1/game/launch", c.Key, apitest.LaunchBody("acme", "acme-slot", "p1", "EUR")))
	apitest.WantError(t, spin(`{"session":"`+other.SessionID+`","stake":"0.10"}`), http.StatusNotFound, wire.CodeNotFound)
	if rec := h.Get("/demo/play?session="+other.SessionID, ""); rec.Code != http.StatusNotFound {
		t.Fatalf("play page of an outside session: %d %s", rec.Code, rec.Body)
	}

	// The wallet not answering is 503, and nothing moved.
	h.WalletProxy.Close()
	apitest.WantError(t, spin(`{`+sess+`,"stake":"0.10"}`), http.StatusServiceUnavailable, wire.CodeUnavailable)
	if got := h.Balance(wallet); got != 50 {
		t.Fatalf("wallet %d, want 50", got)
	}
	if n := len(h.Events(wallet, domain.EventBetPlaced)); n != 0 {
		t.Fatalf("%d bets, want 0", n)
	}
}

func TestDemoPageAndAssets(t *testing.T) {
	t.Parallel()
	h, _, l := demoFixture(t, apitest.Options{}, "10.00")
	u, err := url.Parse(l.GameURL)
	if err != nil {
		t.Fatal(err)
	}
	page := h.Get(u.RequestURI(), "")
	if page.Code != http.StatusOK || !strings.HasPrefix(page.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("page: %d %s", page.Code, page.Body)
	}
	csp := page.Header().Get("Content-Security-Policy")
	for _, d := range []string{"default-src 'none'", "script-src 'self'", "connect-src 'self'"} {
		if !strings.Contains(csp, d) {
			t.Fatalf("CSP %q lacks %q", csp, d)
		}
	}
	if page.Header().Get("Referrer-Policy") != "no-referrer" {
		t.Fatalf("Referrer-Policy %q: the URL carries the session", page.Header().Get("Referrer-Policy"))
	}
	html := page.Body.String()
	for _, want := range []string{`data-session="` + l.SessionID + `"`, `<option value="1.00" selected>`, `id="spin"`,
		`id="balance"`, "80 × stake", "/v1/return?session=" + l.SessionID, `<html lang="en">`} {
		if !strings.Contains(html, want) {
			t.Fatalf("page lacks %q:\n%s", want, html)
		}
	}
	// Every reference the page and its assets make is to our own origin.
	absolute := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9]`)
	for path, ctype := range map[string]string{"/demo/assets/slot.js": "text/javascript", "/demo/assets/slot.css": "text/css"} {
		rec := h.Get(path, "")
		if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), ctype) {
			t.Fatalf("%s: %d %s", path, rec.Code, rec.Header().Get("Content-Type"))
		}
		if m := absolute.FindString(rec.Body.String()); m != "" {
			t.Fatalf("%s refers to another origin: %q", path, m)
		}
	}
	if m := absolute.FindString(html); m != "" {
		t.Fatalf("page refers to another origin: %q", m)
	}
	for _, p := range []string{"/demo/assets/nope.js", "/demo/assets/..%2Fplay.html", "/demo/play?session=gs_nope", "/demo/play"} {
		if rec := h.Get(p, ""); rec.Code != http.StatusNotFound {
			t.Fatalf("%s: %d %s", p, rec.Code, rec.Body)
		}
	}
	// A language the page cannot use falls back to English.
	if rec := h.Get(u.RequestURI()+"&lang=%22%3E", ""); rec.Code != 200 || !strings.Contains(rec.Body.String(), `<html lang="en">`) {
		t.Fatalf("page with a hostile lang: %d %s", rec.Code, rec.Body)
	}
}
