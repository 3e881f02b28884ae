package operatorwallet_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/pitboss/pitboss/adapters/operatorwallet"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/wallet"
)

const tbbSecret = "tbb-shared-password"

// tbbRequest is one call the operator's endpoint received.
type tbbRequest struct {
	Raw  []byte
	Body map[string]any // numbers as json.Number
}

// tbbServer is a loopback operator WALLET_ENDPOINT: it checks each
// call's X-REQUEST-SIGN with the shared secret (answering the addendum's
// 403 when it does not match, and failing the test unless told to expect
// that) and answers with answer.
type tbbServer struct {
	t        testing.TB
	srv      *httptest.Server
	secret   string
	answer   func(r tbbRequest) (int, string)
	mu       sync.Mutex
	requests []tbbRequest
}

func newTBBServer(t testing.TB, secret string, answer func(r tbbRequest) (int, string)) *tbbServer {
	t.Helper()
	s := &tbbServer{t: t, secret: secret, answer: answer}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *tbbServer) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	if r.Method != http.MethodPost || r.URL.Path != "/operator/wallet" || r.Header.Get("Content-Type") != "application/json" {
		s.t.Errorf("%s %s (%s), want a JSON POST to the wallet endpoint", r.Method, r.URL.Path, r.Header.Get("Content-Type"))
	}
	w.Header().Set("Content-Type", "application/json")
	if !gateway.ValidSignature(s.secret, raw, r.Header.Get("X-REQUEST-SIGN")) {
		w.WriteHeader(http.StatusForbidden)
		_, _ = io.WriteString(w, `{"code":403,"message":"Forbidden. Request sign doesn't match."}`)
		return
	}
	req := tbbRequest{Raw: raw}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&req.Body); err != nil {
		s.t.Errorf("body is not JSON: %v", err)
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.mu.Unlock()
	status, body := s.answer(req)
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

func (s *tbbServer) received() []tbbRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]tbbRequest(nil), s.requests...)
}

func (s *tbbServer) client(t testing.TB, secret string) wallet.OperatorWallet {
	t.Helper()
	w, err := operatorwallet.New(operatorwallet.Config{Protocol: "tbb", BaseURL: s.srv.URL + "/operator/wallet",
		Credential: secret})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// fakeTBBOperator keeps one player's balance in minor units, books each
// transaction_id once, and answers as the Wallet API pages show.
func fakeTBBOperator(cur string, balance int64) func(r tbbRequest) (int, string) {
	var mu sync.Mutex
	booked := map[string]int64{}
	return func(r tbbRequest) (int, string) {
		mu.Lock()
		defer mu.Unlock()
		action := r.Body["action"].(string)
		if action == "balance" {
			return 200, fmt.Sprintf(`{"player_id":%q,"balance":%d,"currency_code":%q}`, r.Body["player_id"], balance, cur)
		}
		amount, _ := r.Body["amount"].(json.Number).Int64()
		data := r.Body["payload"].(map[string]any)["provider_transfer_data"].(map[string]any)
		id := data["transaction_id"].(string)
		if _, done := booked[id]; !done {
			switch action {
			case "bet":
				if amount > balance {
					return 402, `{"code":402,"message":"The player does not have enough money for the action."}`
				}
				balance -= amount
			case "win", "refund":
				balance += amount
			case "rollback-win":
				balance -= amount
			}
			booked[id] = int64(len(booked) + 1)
		}
		return 200, fmt.Sprintf(`{"transaction_id":"op-%d","balance":%d,"currency_code":%q}`, booked[id], balance, cur)
	}
}

// TestTBBCalls sends every call of the Wallet API, signed, and checks
// the bodies' fields and the minor-unit amounts.
func TestTBBCalls(t *testing.T) {
	t.Parallel()
	eur := domain.MustCurrency("EUR")
	srv := newTBBServer(t, tbbSecret, fakeTBBOperator("EUR", 10000))
	w := srv.client(t, tbbSecret)
	ctx := t.Context()
	b, err := w.Balance(ctx, player(eur))
	if err != nil || b.String() != "100.00" {
		t.Fatalf("balance = %s, %v", b, err)
	}
	win := move(t, wallet.Credit, "win-1", "bet-1", "20.00", eur)
	win.RoundClosed = true
	steps := []struct {
		m       wallet.OperatorMove
		balance string
		fields  string
	}{
		{move(t, wallet.Debit, "bet-1", "", "10.50", eur), "89.50", `{"amount":1050,"currency_code":"EUR",` +
			`"is_mobile":false,"player_id":"p-1","action":"bet","payload":{"reference":"g-1","session_token":"` +
			pamToken + `","provider_transfer_data":{"transaction_id":"bet-1","round_id":"r-1"}}}`},
		{move(t, wallet.Debit, "bet-1", "", "10.50", eur), "89.50", `"transaction_id":"bet-1"`},
		{win, "109.50", `"provider_transfer_data":{"transaction_id":"win-1","round_id":"r-1","round_close":true}`},
		{jackpot(move(t, wallet.Credit, "win-2", "", "7.00", eur), money(t, "5", eur)), "116.50",
			`"round_close":false,"jackpot":{"is_jackpot":true}`},
		{promo(move(t, wallet.Credit, "win-3", "", "1.00", eur)), "117.50", `"free_spin":{"is_free_spin":true}`},
		{move(t, wallet.Debit, "bet-2", "", "2.00", eur), "115.50", `"action":"bet"`},
		{move(t, wallet.Cancel, "ref-2", "bet-2", "2.00", eur), "117.50",
			`"action":"refund","payload":{"reference":"g-1","session_token":"` + pamToken + `","provider_transfer_data":` +
				`{"transaction_id":"ref-2","round_id":"r-1","refunded_transaction_id":"bet-2"}}`},
		{move(t, wallet.Reverse, "rb-1", "win-1", "20.00", eur), "97.50",
			`"action":"rollback-win","payload":{"reference":"g-1","session_token":"` + pamToken + `",` +
				`"provider_transfer_data":{"transaction_id":"rb-1","round_id":"r-1","rollback_win_transaction_id":"win-1"}}`},
	}
	for _, st := range steps {
		a, err := w.Move(ctx, st.m)
		if err != nil || a.Balance.String() != st.balance || !strings.HasPrefix(a.TxID, "op-") {
			t.Fatalf("%s %s = %+v, %v; want balance %s and the operator's id", st.m.Kind, st.m.ID, a, err, st.balance)
		}
	}
	reqs := srv.received()
	if got := string(reqs[0].Raw); got != `{"player_id":"p-1","reference":"","currency_code":"EUR","action":"balance",`+
		`"is_mobile":false,"session_token":"`+pamToken+`"}` {
		t.Errorf("balance body %s", got)
	}
	for i, st := range steps {
		if raw := string(reqs[i+1].Raw); !strings.Contains(raw, st.fields) {
			t.Errorf("%s %s: body %s lacks %s", st.m.Kind, st.m.ID, raw, st.fields)
		}
	}
	if _, err := w.Session(ctx, player(eur)); !errors.Is(err, wallet.ErrNoSessionCall) {
		t.Errorf("session: %v, want ErrNoSessionCall", err)
	}
	if _, _, err := w.Lookup(ctx, steps[0].m); !errors.Is(err, wallet.ErrNoLookup) {
		t.Errorf("lookup: %v, want ErrNoLookup", err)
	}
}

// TestTBBSignature: X-REQUEST-SIGN is the lower-case hex HMAC-SHA256 of
// the exact body keyed with the secret (computed here independently of
// gateway.Signature); signed with another secret, the operator's 403 is
// our fault.
func TestTBBSignature(t *testing.T) {
	t.Parallel()
	var sig string
	var raw []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ = io.ReadAll(r.Body)
		sig = r.Header.Get("X-REQUEST-SIGN")
		_, _ = io.WriteString(w, `{"player_id":"p-1","balance":0,"currency_code":"EUR"}`)
	}))
	t.Cleanup(srv.Close)
	w, err := operatorwallet.New(operatorwallet.Config{Protocol: "tbb", BaseURL: srv.URL, Credential: tbbSecret})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Balance(t.Context(), player(domain.MustCurrency("EUR"))); err != nil {
		t.Fatal(err)
	}
	mac := hmac.New(sha256.New, []byte(tbbSecret))
	mac.Write(raw)
	if want := hex.EncodeToString(mac.Sum(nil)); sig != want {
		t.Errorf("X-REQUEST-SIGN %q, want %q", sig, want)
	}

	forged := newTBBServer(t, tbbSecret, fakeTBBOperator("EUR", 100))
	eur := domain.MustCurrency("EUR")
	_, err = forged.client(t, "another-secret").Move(t.Context(), move(t, wallet.Debit, "b", "", "1.00", eur))
	if r := refusal(t, err); r.Verdict != wallet.Fault || r.Code != "403" || len(forged.received()) != 0 {
		t.Errorf("wrongly signed bet: %+v, want the operator's 403 as our fault", r)
	}
}

// TestTBBErrorCodes: every code of the addendum's Wallet Error Response
// is the verdict of the table, or an unknown outcome; the HTTP status
// stands for a body without a code.
func TestTBBErrorCodes(t *testing.T) {
	t.Parallel()
	const unknown = wallet.Verdict(-1)
	tests := []struct {
		name   string
		status int
		body   string
		want   wallet.Verdict
		code   string
	}{
		{"400", 400, `{"code":400,"message":"Bad request. Badly formatted JSON."}`, wallet.Fault, "400"},
		{"402", 402, `{"code":402,"message":"no money"}`, wallet.InsufficientFunds, "402"},
		{"403", 403, `{"code":403,"message":"sign"}`, wallet.Fault, "403"},
		{"404", 404, `{"code":404,"message":"Player not found."}`, wallet.WrongPlayer, "404"},
		{"405", 405, `{"code":405,"message":"Game is not available."}`, wallet.InvalidGame, "405"},
		{"406", 406, `{"code":406,"message":"Previous transaction not found."}`, wallet.UnknownTransaction, "406"},
		{"407", 407, `{"code":407,"message":"Player is blocked."}`, operatorRefused, "407"},
		{"408", 408, `{"code":408,"message":"Bet is rejected."}`, operatorRefused, "408"},
		{"418", 418, `{"code":418,"message":"limits"}`, operatorRefused, "418"},
		{"500", 500, `{"code":500,"message":"Unknown error."}`, unknown, ""},
		{"503", 503, `{"code":503,"message":"Service is unavailable."}`, unknown, ""},
		{"504", 504, `{"code":504,"message":"Request timed out."}`, unknown, ""},
		{"unlisted code", 409, `{"code":409,"message":"?"}`, unknown, ""},
		{"402 without body", 402, ``, wallet.InsufficientFunds, "402"},
		{"bare 408: a proxy's timeout", 408, `<html>timeout</html>`, unknown, ""},
		{"body code over status", 400, `{"code":405,"message":"game"}`, wallet.InvalidGame, "405"},
		{"5xx whatever its body", 502, `{"code":402,"message":"no money"}`, unknown, ""},
		{"code as text", 402, `{"code":"402","message":"no money"}`, wallet.InsufficientFunds, "402"},
	}
	eur := domain.MustCurrency("EUR")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newTBBServer(t, tbbSecret, func(tbbRequest) (int, string) { return tt.status, tt.body })
			_, err := srv.client(t, tbbSecret).Move(t.Context(), move(t, wallet.Debit, "b-1", "", "1.00", eur))
			if tt.want == unknown {
				wantUnknown(t, err)
				return
			}
			if r := refusal(t, err); r.Verdict != tt.want || r.Code != tt.code {
				t.Errorf("refusal %+v, want %s %s", r, tt.want, tt.code)
			}
		})
	}
}

// TestTBBExactAmounts: amounts go out and come back as integer minor
// units of the currency's precision.
func TestTBBExactAmounts(t *testing.T) {
	t.Parallel()
	tests := []struct{ cur, amount, sent, answered, balance string }{
		{"XRP", "0.000001", `"amount":1,`, "1", "0.000001"},
		{"BTC", "0.00000001", `"amount":1,`, "123456789", "1.23456789"},
		{"JPY", "1234", `"amount":1234,`, "98766", "98766"},
		{"ETH", "1.000000001", `"amount":1000000001,`, "9000000000000000000", "9000000000.000000000"},
	}
	for _, tt := range tests {
		t.Run(tt.cur, func(t *testing.T) {
			t.Parallel()
			cur := domain.MustCurrency(tt.cur)
			srv := newTBBServer(t, tbbSecret, func(tbbRequest) (int, string) {
				return 200, `{"transaction_id":42,"balance":` + tt.answered + `,"currency_code":"` + tt.cur + `"}`
			})
			a, err := srv.client(t, tbbSecret).Move(t.Context(), move(t, wallet.Debit, "b", "", tt.amount, cur))
			if err != nil || a.Balance.String() != tt.balance || a.TxID != "42" {
				t.Fatalf("answer %+v, %v; want balance %s and id 42", a, err, tt.balance)
			}
			if raw := string(srv.received()[0].Raw); !strings.Contains(raw, tt.sent) {
				t.Errorf("body %s lacks %s", raw, tt.sent)
			}
		})
	}
}

// TestTBBUnreadable: a success the client cannot read is an unknown
// outcome for a movement, an error for a balance read.
func TestTBBUnreadable(t *testing.T) {
	t.Parallel()
	eur := domain.MustCurrency("EUR")
	for _, body := range []string{`not json`, `{"transaction_id":"x"}`, `{"transaction_id":"x","balance":10.5}`,
		`{"transaction_id":"x","balance":100,"currency_code":"USD"}`, `{"transaction_id":{},"balance":1}`} {
		srv := newTBBServer(t, tbbSecret, func(tbbRequest) (int, string) { return 200, body })
		_, err := srv.client(t, tbbSecret).Move(t.Context(), move(t, wallet.Credit, "w", "", "1.00", eur))
		wantUnknown(t, err)
		if !errors.Is(err, operatorwallet.ErrUnreadableAnswer) {
			t.Errorf("move answered %s: %v, want ErrUnreadableAnswer too", body, err)
		}
		if _, err := srv.client(t, tbbSecret).Balance(t.Context(), player(eur)); !errors.Is(err,
			operatorwallet.ErrUnreadableAnswer) || errors.Is(err, wallet.ErrOutcomeUnknown) {
			t.Errorf("balance answered %s: %v, want ErrUnreadableAnswer alone", body, err)
		}
	}
}

// TestTBBMovesRefusedBeforeSending: what the Wallet API cannot carry is
// refused without a call.
func TestTBBMovesRefusedBeforeSending(t *testing.T) {
	t.Parallel()
	eur := domain.MustCurrency("EUR")
	tests := []struct {
		name string
		m    wallet.OperatorMove
		want wallet.Verdict
	}{
		{"free-bet stake", promo(move(t, wallet.Debit, "b", "", "1.00", eur)), wallet.Unsupported},
		{"free-bet refund", promo(move(t, wallet.Cancel, "c", "b", "1.00", eur)), wallet.Unsupported},
		{"refund naming nothing", move(t, wallet.Cancel, "c", "", "1.00", eur), wallet.InvalidRequest},
		{"rollback naming nothing", move(t, wallet.Reverse, "r", "", "1.00", eur), wallet.InvalidRequest},
		{"no id", move(t, wallet.Debit, "", "", "1.00", eur), wallet.InvalidRequest},
		{"negative", move(t, wallet.Credit, "w", "", "-1.00", eur), wallet.InvalidAmount},
		{"other currency", func() wallet.OperatorMove {
			m := move(t, wallet.Debit, "b", "", "1.00", eur)
			m.Amount = money(t, "1", domain.MustCurrency("USD"))
			return m
		}(), wallet.WrongCurrency},
	}
	for _, tt := range tests {
		srv := newTBBServer(t, tbbSecret, fakeTBBOperator("EUR", 100))
		_, err := srv.client(t, tbbSecret).Move(t.Context(), tt.m)
		if r := refusal(t, err); r.Verdict != tt.want || len(srv.received()) != 0 {
			t.Errorf("%s: %+v after %d calls, want %s before any", tt.name, r, len(srv.received()), tt.want)
		}
	}
}
