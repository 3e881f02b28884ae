package providersim_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pitboss/pitboss/providersim"
)

// tbbWallet is a reference wallet of The Bet Brothers' Game Events as
// docs/protocols/tbb.md reads the document, in memory: what the simulator
// expects of the server, so a run against it must find no deviation.
type tbbWallet struct {
	t       *testing.T
	secret  string
	mu      sync.Mutex
	balance int64
	seq     int
	done    map[string]tbbDone // by ledger key: a bet's or win's transaction_id, refund@ a refund's refunded id
	bets    map[string]*tbbBet
	rounds  map[string][]string // a round's bets
	gone    map[string]bool     // ids a refund named before they arrived
}

type tbbDone struct {
	fingerprint string // what the call carried: a retry carries the same
	code        int
	body        []byte
}

type tbbBet struct {
	amount            int64
	refunded, settled bool
}

// tbbFields are each call's body fields, every one required.
var tbbFields = map[string][]string{
	"balance": {"token", "provider_name", "provider_id", "currency_code"},
	"bet": {"token", "provider_name", "provider_id", "amount", "currency_code", "is_mobile", "player_id", "round_id",
		"game_symbol", "transaction_id"},
	"win": {"token", "provider_name", "provider_id", "amount", "currency_code", "is_mobile", "player_id", "round_id",
		"game_symbol", "transaction_id", "round_close"},
	"refund": {"token", "provider_name", "provider_id", "amount", "currency_code", "is_mobile", "player_id", "round_id",
		"game_symbol", "transaction_id", "refunded_transaction_id"},
}

func (w *tbbWallet) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	code, out := w.answer(r, body)
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(code)
	_, _ = rw.Write(out)
}

func tbbError(code int, message string) (int, []byte) {
	b, _ := json.Marshal(map[string]any{"code": code, "message": message})
	return code, b
}

func (w *tbbWallet) answer(r *http.Request, body []byte) (int, []byte) {
	call, ok := strings.CutPrefix(r.URL.Path, "/provider/tbb/acme/wallet/")
	if !ok || r.Method != http.MethodPost || tbbFields[call] == nil {
		w.t.Errorf("a call to %s %s", r.Method, r.URL.Path)
		return tbbError(404, "no such call")
	}
	m := hmac.New(sha256.New, []byte(w.secret))
	m.Write(body)
	if got := r.Header.Get("X-Request-Sign"); got != hex.EncodeToString(m.Sum(nil)) {
		w.t.Errorf("%s: X-REQUEST-SIGN %q is not the lowercase hex HMAC-SHA256 of the body", call, got)
		return tbbError(403, "signature mismatch")
	}
	var b map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&b); err != nil {
		return tbbError(400, "not JSON")
	}
	if got, want := slices.Sorted(maps.Keys(b)), slices.Sorted(slices.Values(tbbFields[call])); !slices.Equal(got, want) {
		w.t.Errorf("%s: fields %v, the document's are %v", call, got, want)
		return tbbError(400, "bad request")
	}
	for f, want := range map[string]any{"token": "gs_fake", "provider_name": "acme", "currency_code": "EUR"} {
		if b[f] != want {
			w.t.Errorf("%s: %s %v, want %v", call, f, b[f], want)
		}
	}
	if _, err := b["provider_id"].(json.Number).Int64(); err != nil {
		w.t.Errorf("%s: provider_id %v is not an integer", call, b["provider_id"])
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if call == "balance" {
		return w.ok(map[string]any{"token": "gs_fake", "balance": w.balance})
	}
	if b["player_id"] != "sim-player" || b["game_symbol"] != "slot" || b["is_mobile"] != false {
		w.t.Errorf("%s: player_id %v, game_symbol %v, is_mobile %v", call, b["player_id"], b["game_symbol"], b["is_mobile"])
	}
	amount, err := b["amount"].(json.Number).Int64()
	if err != nil || amount < 0 {
		w.t.Errorf("%s: amount %v is not a non-negative integer", call, b["amount"])
		return tbbError(400, "bad request")
	}
	id, round := b["transaction_id"].(string), b["round_id"].(string)
	key, fp := id, fmt.Sprint(call, round, amount, b["round_close"])
	if call == "refund" {
		key, fp = "refund@"+b["refunded_transaction_id"].(string), fmt.Sprint(call, round)
	}
	if d, ok := w.done[key]; ok {
		if d.fingerprint != fp {
			return tbbError(400, "bad request") // the same id with another payload
		}
		return d.code, d.body // a retry: the first answer again
	}
	code, out := w.book(call, id, round, amount, b)
	if code == 200 || call == "refund" {
		w.done[key] = tbbDone{fingerprint: fp, code: code, body: out}
	}
	return code, out
}

func (w *tbbWallet) book(call, id, round string, amount int64, b map[string]any) (int, []byte) {
	switch call {
	case "bet":
		if w.gone[id] {
			return tbbError(408, "refunded before it arrived")
		}
		if amount > w.balance {
			return tbbError(402, "insufficient funds")
		}
		w.balance -= amount
		w.bets[id] = &tbbBet{amount: amount}
		w.rounds[round] = append(w.rounds[round], id)
	case "win":
		standing := 0
		for _, bid := range w.rounds[round] {
			if !w.bets[bid].refunded {
				standing++
				w.bets[bid].settled = true
			}
		}
		if len(w.rounds[round]) > 0 && standing == 0 {
			return tbbError(406, "no such transaction")
		}
		w.balance += amount
	case "refund":
		ref := b["refunded_transaction_id"].(string)
		bet, ok := w.bets[ref]
		switch {
		case !ok:
			w.gone[ref] = true
			return tbbError(406, "no such transaction")
		case bet.settled:
			return tbbError(400, "bad request")
		}
		bet.refunded = true
		w.balance += bet.amount
	}
	w.seq++
	return w.ok(map[string]any{"transaction_id": fmt.Sprintf("tbb-%d", w.seq), "balance": w.balance, "token": "gs_fake"})
}

func (w *tbbWallet) ok(v any) (int, []byte) {
	b, _ := json.Marshal(v)
	return 200, b
}

// TestTBBDialectAgainstReferenceWallet runs the simulator's tbb dialect
// against the reference wallet: every call signed and shaped as the
// document says (the wallet checks), every answer as the simulator expects
// (no deviation), and the balance the run expects is the wallet's.
func TestTBBDialectAgainstReferenceWallet(t *testing.T) {
	w := &tbbWallet{t: t, secret: "tbb-password", balance: 10000, done: map[string]tbbDone{}, bets: map[string]*tbbBet{},
		rounds: map[string][]string{}, gone: map[string]bool{}}
	srv := fakeWallet(t, w.ServeHTTP)
	var out bytes.Buffer
	rep, err := providersim.Run(context.Background(), providersim.Config{Protocol: "tbb", BaseURL: srv.URL, Provider: "acme",
		Game: "slot", APIKey: "k", Player: "sim-player", Currency: "EUR", Balance: "100.00", Spins: 6, Seed: 3,
		Secret: w.secret, Out: &out})
	t.Logf("simulator output:\n%s", out.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Deviations) != 0 {
		t.Fatalf("%d deviations: %v", len(rep.Deviations), rep.Deviations)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if got := rep.Final.Minor(); got != w.balance {
		t.Fatalf("the run expects %d minor units, the wallet holds %d", got, w.balance)
	}
	refunds := 0
	for _, id := range rep.Booked {
		if strings.HasPrefix(id, "refund@") {
			refunds++
		}
	}
	if refunds != 1 || len(rep.Booked) < 2*6 {
		t.Fatalf("booked %v: want the spins' bets and wins and one refund", rep.Booked)
	}
}

// TestTBBDialectNamesDeviations: answers not as the document says are
// reported, naming the field.
func TestTBBDialectNamesDeviations(t *testing.T) {
	for _, tc := range []struct {
		name   string
		wallet http.HandlerFunc
		want   string
	}{
		{"balance as a string", answer(200, `{"token":"gs_fake","balance":"100.00"}`),
			`balance: balance answer: balance is "100.00", not a JSON number`},
		{"balance as a decimal", answer(200, `{"token":"gs_fake","balance":100.00}`),
			`balance: balance answer: balance 100.00 is not an integer of EUR minor units`},
		{"another token", answer(200, `{"token":"gs_other","balance":10000}`),
			`balance: balance answer: token is "gs_other", want "gs_fake"`},
		{"a field the document has not", answer(200, `{"token":"gs_fake","balance":10000,"currency":"EUR"}`),
			`balance: balance answer: field currency is not in the document`},
		{"code and HTTP status apart", answer(400, `{"code":403,"message":"signature mismatch"}`),
			`balance: balance answer: HTTP 400 with code 403, want 403`},
		{"a code the addendum has not", answer(409, `{"code":409,"message":"conflict"}`),
			`balance: balance answer: code 409 is not in the addendum`},
		{"a code as a string", answer(403, `{"code":"403","message":"signature mismatch"}`),
			`balance: balance answer: code is "403", not a JSON number`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := fakeWallet(t, tc.wallet)
			rep, err := providersim.Run(context.Background(), providersim.Config{Protocol: "tbb", BaseURL: srv.URL,
				Provider: "acme", Game: "slot", APIKey: "k", Player: "sim-player", Currency: "EUR", Balance: "100.00",
				Spins: 1, Seed: 1, Secret: "s"})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range rep.Deviations {
				got = append(got, d.String())
			}
			if !slices.ContainsFunc(got, func(g string) bool { return strings.HasPrefix(g, tc.want) }) {
				t.Fatalf("no deviation %q among %d:\n%s", tc.want, len(got), strings.Join(got, "\n"))
			}
		})
	}
}

// TestTBBDialectNeedsTheSecret: tbb signs with the provider's secret; a
// run without one is a configuration error.
func TestTBBDialectNeedsTheSecret(t *testing.T) {
	_, err := providersim.Run(context.Background(), providersim.Config{Protocol: "tbb", BaseURL: "http://127.0.0.1:1",
		Provider: "p", Game: "g", APIKey: "k", Player: "p", Currency: "EUR", Balance: "10"})
	if !errors.Is(err, providersim.ErrConfig) {
		t.Fatalf("err %v, want ErrConfig", err)
	}
}
