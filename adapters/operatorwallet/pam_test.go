package operatorwallet_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pb33f/libopenapi"

	"github.com/pitboss/pitboss/adapters/operatorwallet"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/wallet"
)

// operatorRefused is the verdict of an operator's refusal for a reason
// of its own.
const operatorRefused = wallet.OperatorRefused

func player(cur domain.Currency) wallet.OperatorPlayer {
	return wallet.OperatorPlayer{Player: "p-1", Token: pamToken, Provider: "evolution", Currency: cur,
		CorrelationID: "corr-1"}
}

func move(t testing.TB, kind wallet.MoveKind, id, ref, amount string, cur domain.Currency) wallet.OperatorMove {
	return wallet.OperatorMove{OperatorPlayer: player(cur), Kind: kind, ID: id, Ref: ref, Game: "g-1", Round: "r-1",
		Amount: money(t, amount, cur), At: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)}
}

// refusal is err's operator refusal, failing the test when it is none.
func refusal(t testing.TB, err error) *wallet.OperatorRefusal {
	t.Helper()
	var r *wallet.OperatorRefusal
	if !errors.As(err, &r) {
		t.Fatalf("error %v, want an *OperatorRefusal", err)
	}
	if errors.Is(err, wallet.ErrOutcomeUnknown) {
		t.Fatalf("refusal %v also says the outcome is unknown", err)
	}
	return r
}

func wantUnknown(t testing.TB, err error) {
	t.Helper()
	var r *wallet.OperatorRefusal
	if !errors.Is(err, wallet.ErrOutcomeUnknown) || errors.As(err, &r) {
		t.Fatalf("error %v, want one wrapping ErrOutcomeUnknown and no refusal", err)
	}
}

// TestPAMDocumentIsValid: our description is valid OpenAPI 3.1, and the
// validator the server uses does refuse a request that breaks it (so
// the conformance test can fail).
func TestPAMDocumentIsValid(t *testing.T) {
	t.Parallel()
	v := pamValidator(t)
	if ok, errs := v.ValidateDocument(); !ok {
		t.Fatalf("%s is not valid OpenAPI 3.1:%s", pamDocPath, validationText(errs))
	}
	bad := []struct {
		name   string
		mutate func(r *http.Request)
	}{
		{"no player token", func(r *http.Request) { r.Header.Del("X-Player-Token") }},
		{"short player token", func(r *http.Request) { r.Header.Set("X-Player-Token", "short") }},
		{"no correlation id", func(r *http.Request) { r.Header.Del("X-Correlation-ID") }},
		{"no provider", func(r *http.Request) { r.URL.RawQuery = "" }},
		{"no API token", func(r *http.Request) { r.Header.Del("Authorization") }},
	}
	for _, tt := range bad {
		r := httptest.NewRequest(http.MethodGet, "/players/p-1/balance?provider=evolution", nil)
		r.Header.Set("Authorization", "Bearer x")
		r.Header.Set("X-Player-Token", pamToken)
		r.Header.Set("X-Correlation-ID", "c")
		if ok, errs := v.ValidateHttpRequestSync(r); !ok {
			t.Fatalf("the well-formed balance request fails:%s", validationText(errs))
		}
		tt.mutate(r)
		if ok, _ := v.ValidateHttpRequestSync(r); ok {
			t.Errorf("%s: the validator accepts it", tt.name)
		}
	}
	body := `{"currency":"EUR","provider":"e","transactionType":"WITHDRAW","cashAmount":"1.00","bonusAmount":0,` +
		`"promoAmount":0,"transactionDateTime":"2025-03-01T12:00:00Z","providerTransactionId":"t-1"}`
	r := httptest.NewRequest(http.MethodPost, "/players/p-1/transactions?provider=e", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", "Bearer x")
	r.Header.Set("X-Player-Token", pamToken)
	r.Header.Set("X-Correlation-ID", "c")
	if ok, _ := v.ValidateHttpRequestSync(r); ok {
		t.Error("an amount written as a string is accepted")
	}
}

// TestPAMConformance sends every call kind through a PAM that validates
// each request against our description and keeps the player's money.
func TestPAMConformance(t *testing.T) {
	t.Parallel()
	eur := domain.MustCurrency("EUR")
	fake := newFakePAM(t, eur, "100.00")
	srv := newPAMServer(t, fake.answer)
	w := srv.client(t)
	ctx := t.Context()

	s, err := w.Session(ctx, player(eur))
	if err != nil || s != (wallet.OperatorSession{Player: "p-1", Currency: "EUR", Country: "SE", Language: "sv",
		Game: "g-1"}) {
		t.Fatalf("session = %+v, %v", s, err)
	}
	b, err := w.Balance(ctx, player(eur))
	if err != nil || b.String() != "101.00" {
		t.Fatalf("balance = %s, %v; want 101.00 (cash and bonus)", b, err)
	}
	steps := []struct {
		m       wallet.OperatorMove
		balance string
	}{
		{move(t, wallet.Debit, "bet-1", "", "10.50", eur), "90.50"},
		{move(t, wallet.Debit, "bet-1", "", "10.50", eur), "90.50"}, // re-sent: booked once
		{move(t, wallet.Credit, "win-1", "bet-1", "20.00", eur), "110.50"},
		{jackpot(move(t, wallet.Credit, "win-2", "", "7.00", eur), money(t, "5.00", eur)), "117.50"},
		{move(t, wallet.Debit, "bet-2", "", "2.00", eur), "115.50"},
		{move(t, wallet.Cancel, "cancel-2", "bet-2", "2.00", eur), "117.50"},
		{move(t, wallet.Cancel, "cancel-2", "bet-2", "2.00", eur), "117.50"}, // re-sent
		// A promo movement moves the player's money too (its type marks
		// it a promotion's).
		{promo(move(t, wallet.Debit, "fb-1", "", "1.00", eur)), "116.50"},
		{promo(move(t, wallet.Credit, "fw-1", "fb-1", "3.00", eur)), "119.50"},
		{promo(move(t, wallet.Debit, "fb-2", "", "1.00", eur)), "118.50"},
		{promo(move(t, wallet.Cancel, "fc-2", "fb-2", "1.00", eur)), "119.50"},
	}
	for _, st := range steps {
		a, err := w.Move(ctx, st.m)
		if err != nil {
			t.Fatalf("%s %s: %v", st.m.Kind, st.m.ID, err)
		}
		if a.Balance.String() != st.balance || a.TxID == "" {
			t.Fatalf("%s %s = %+v, want balance %s and the PAM's id", st.m.Kind, st.m.ID, a, st.balance)
		}
	}
	for _, st := range steps {
		a, found, err := w.Lookup(ctx, st.m)
		if err != nil || !found || a.Balance.String() != "119.50" {
			t.Errorf("lookup %s %s = %+v, %v, %v; want found at 119.50", st.m.Kind, st.m.ID, a, found, err)
		}
	}
	for _, m := range []wallet.OperatorMove{move(t, wallet.Debit, "never", "", "1.00", eur),
		move(t, wallet.Credit, "bet-2", "", "1.00", eur), move(t, wallet.Cancel, "c-x", "bet-1", "1.00", eur)} {
		if _, found, err := w.Lookup(ctx, m); err != nil || found {
			t.Errorf("lookup %s %s/%s = %v, %v; want not found", m.Kind, m.ID, m.Ref, found, err)
		}
	}
	checkPAMBodies(t, srv.received())
}

func jackpot(m wallet.OperatorMove, part domain.Money) wallet.OperatorMove {
	m.Jackpot = part
	return m
}
func promo(m wallet.OperatorMove) wallet.OperatorMove { m.Promo = true; return m }

// checkPAMBodies checks the fields the document leaves to us: the
// transaction types, which id a cancel names, where promo money and a
// jackpot go, the exact amount text.
func checkPAMBodies(t *testing.T, reqs []pamRequest) {
	t.Helper()
	want := map[string]string{ // providerTransactionId+type -> fields
		"bet-1 WITHDRAW":      `"cashAmount":10.50,"bonusAmount":0.00,"promoAmount":0.00`,
		"win-1 DEPOSIT":       `"providerBetRef":"bet-1"`,
		"win-2 DEPOSIT":       `"isGameOver":false,"jackpots":[{"jackpotAmount":5.00}]`,
		"bet-2 CANCEL":        `"providerTransactionId":"bet-2","providerBetRef":"bet-2"`,
		"fb-1 PROMOWITHDRAW":  `"cashAmount":1.00,"bonusAmount":0.00,"promoAmount":0.00`,
		"fw-1 PROMODEPOSIT":   `"cashAmount":3.00,"bonusAmount":0.00,"promoAmount":0.00`,
		"fb-2 PROMOCANCEL":    `"cashAmount":1.00,"bonusAmount":0.00,"promoAmount":0.00`,
		"bet-2 WITHDRAW":      `"providerBetRef":"bet-2","providerGameId":"g-1","providerRoundId":"r-1"`,
		"bet-1 WITHDRAW date": `"transactionDateTime":"2025-03-01T12:00:00Z"`,
	}
	seen := map[string]bool{}
	kinds := map[string]bool{}
	for _, r := range reqs {
		kinds[r.Method+" "+regexp.MustCompile(`/players/[^/]+/`).ReplaceAllString(r.Path, "/players/{id}/")] = true
		if r.Header.Get("X-Correlation-ID") != "corr-1" {
			t.Errorf("%s %s: X-Correlation-ID %q, want the provider's", r.Method, r.Path, r.Header.Get("X-Correlation-ID"))
		}
		if r.Method != http.MethodPost {
			continue
		}
		key := r.Body["providerTransactionId"].(string) + " " + r.Body["transactionType"].(string)
		for k, fields := range want {
			if strings.TrimSuffix(k, " date") == key {
				seen[k] = true
				if !strings.Contains(string(r.Raw), fields) {
					t.Errorf("%s: body %s lacks %s", key, r.Raw, fields)
				}
			}
		}
	}
	for k := range want {
		if !seen[k] {
			t.Errorf("no %s was sent", k)
		}
	}
	for _, k := range []string{"GET /players/session", "GET /players/{id}/balance", "GET /players/{id}/transactions",
		"POST /players/{id}/transactions"} {
		if !kinds[k] {
			t.Errorf("no %s was sent", k)
		}
	}
}

// pamDocCodes is the ErrorCode enum of our description.
func pamDocCodes(t *testing.T) []string {
	t.Helper()
	spec, err := os.ReadFile(pamDocPath)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := libopenapi.NewDocument(spec)
	if err != nil {
		t.Fatal(err)
	}
	m, err := doc.BuildV3Model()
	if err != nil {
		t.Fatal(err)
	}
	sp := m.Model.Components.Schemas.GetOrZero("ErrorCode")
	var codes []string
	for _, n := range sp.Schema().Enum {
		codes = append(codes, n.Value)
	}
	return codes
}

// TestPAMErrorCodes: every error code of the document, answered to a
// debit (and the kind-dependent ones to a credit), is the verdict of the
// table, or an unknown outcome.
func TestPAMErrorCodes(t *testing.T) {
	t.Parallel()
	const unknown = wallet.Verdict(-1)
	tests := []struct {
		code string
		kind wallet.MoveKind
		want wallet.Verdict
	}{
		{"PAM_ERR_UNDEFINED", wallet.Debit, unknown},
		{"PAM_ERR_TIMEOUT", wallet.Debit, unknown},
		{"PAM_ERR_SOMETHING_NEW", wallet.Debit, unknown},
		{"PAM_ERR_API_TOKEN", wallet.Debit, wallet.Fault},
		{"PAM_ERR_MISSING_PROVIDER", wallet.Debit, wallet.Fault},
		{"PAM_ERR_SESSION_NOT_FOUND", wallet.Debit, wallet.UnknownSession},
		{"PAM_ERR_SESSION_EXPIRED", wallet.Debit, wallet.SessionExpired},
		{"PAM_ERR_ACC_NOT_FOUND", wallet.Debit, wallet.WrongPlayer},
		{"PAM_ERR_PLAYER_NOT_FOUND", wallet.Debit, wallet.WrongPlayer},
		{"PAM_ERR_GAME_NOT_FOUND", wallet.Debit, wallet.InvalidGame},
		{"PAM_ERR_ROUND_NOT_FOUND", wallet.Credit, wallet.UnknownTransaction},
		{"PAM_ERR_TRANS_NOT_FOUND", wallet.Credit, wallet.UnknownTransaction},
		{"PAM_ERR_TRANS_CURRENCY", wallet.Debit, wallet.WrongCurrency},
		{"PAM_ERR_NEGATIVE_STAKE", wallet.Debit, wallet.InvalidAmount},
		{"PAM_ERR_CASH_OVERDRAFT", wallet.Debit, wallet.InsufficientFunds},
		{"PAM_ERR_BONUS_OVERDRAFT", wallet.Debit, wallet.InsufficientFunds},
		{"PAM_ERR_PROMO_OVERDRAFT", wallet.Debit, wallet.InsufficientFunds},
		{"PAM_ERR_BET_NOT_ALLOWED", wallet.Debit, operatorRefused},
		{"PAM_ERR_DUPLICATE_TRANS", wallet.Credit, wallet.Duplicate},
		{"PAM_ERR_CANCEL_NOT_FOUND", wallet.Cancel, wallet.UnknownTransaction},
		{"PAM_ERR_CANCEL_NON_WITHDRAW", wallet.Cancel, wallet.NotRollbackable},
		{"PAM_ERR_TRANS_ALREADY_CANCELLED", wallet.Cancel, wallet.AlreadyRolledBack},
		{"PAM_ERR_TRANS_ALREADY_CANCELLED", wallet.Credit, wallet.RolledBack},
		{"PAM_ERR_TRANS_ALREADY_SETTLED", wallet.Cancel, wallet.Settled},
	}
	var covered []string
	for _, tt := range tests {
		covered = append(covered, tt.code)
	}
	for _, c := range pamDocCodes(t) {
		if !slices.Contains(covered, c) {
			t.Errorf("the document's code %s has no case here", c)
		}
	}
	eur := domain.MustCurrency("EUR")
	for _, tt := range tests {
		t.Run(tt.code+"/"+tt.kind.String(), func(t *testing.T) {
			t.Parallel()
			srv := newPAMServer(t, func(pamRequest) (int, string) {
				return 200, `{"status":"ERROR","error":{"code":"` + tt.code + `","message":"m"}}`
			})
			_, err := srv.client(t).Move(t.Context(), move(t, tt.kind, "t-1", "b-1", "1.00", eur))
			if tt.want == unknown {
				wantUnknown(t, err)
				return
			}
			if r := refusal(t, err); r.Verdict != tt.want || r.Code != tt.code || r.Message != "m" {
				t.Errorf("refusal %+v, want %s %s", r, tt.want, tt.code)
			}
		})
	}
}

// TestPAMRefusalWithBalance: a refusal carries the balance the PAM sent
// with it (cash and bonus).
func TestPAMRefusalWithBalance(t *testing.T) {
	t.Parallel()
	eur := domain.MustCurrency("EUR")
	fake := newFakePAM(t, eur, "3.00")
	srv := newPAMServer(t, fake.answer)
	_, err := srv.client(t).Move(t.Context(), move(t, wallet.Debit, "big", "", "50.00", eur))
	r := refusal(t, err)
	if r.Verdict != wallet.InsufficientFunds || r.Balance == nil || r.Balance.String() != "4.00" {
		t.Fatalf("refusal %+v (balance %v), want insufficient funds with balance 4.00", r, r.Balance)
	}
	_, err = srv.client(t).Move(t.Context(), move(t, wallet.Cancel, "c", "no-such-bet", "1.00", eur))
	if r := refusal(t, err); r.Verdict != wallet.UnknownTransaction || r.Balance == nil {
		t.Fatalf("cancel of an unknown bet: %+v, want unknown transaction with the balance", r)
	}
}

// TestPAMHTTPAnswers: how the HTTP status and an unreadable body read.
func TestPAMHTTPAnswers(t *testing.T) {
	t.Parallel()
	eur := domain.MustCurrency("EUR")
	tests := []struct {
		name    string
		status  int
		body    string
		verdict wallet.Verdict // -1: unknown outcome
		code    string
	}{
		{"500", 500, `{"status":"ERROR"}`, -1, ""},
		{"503 with a refusal's body", 503, `{"status":"ERROR","error":{"code":"PAM_ERR_CASH_OVERDRAFT","message":""}}`, -1, ""},
		{"408", 408, ``, -1, ""},
		{"401 unknown session", 401, `{"status":"ERROR","error":{"code":"PAM_ERR_SESSION_NOT_FOUND","message":"x"}}`,
			wallet.UnknownSession, "PAM_ERR_SESSION_NOT_FOUND"},
		{"401 wrong API token", 401, `{"status":"ERROR","error":{"code":"PAM_ERR_API_TOKEN","message":"x"}}`,
			wallet.Fault, "PAM_ERR_API_TOKEN"},
		{"401 undefined", 401, `{"status":"ERROR","error":{"code":"PAM_ERR_UNDEFINED","message":"x"}}`,
			wallet.Fault, "PAM_ERR_UNDEFINED"},
		{"400 without body", 400, ``, wallet.Fault, "HTTP_400"},
		{"200 not JSON", 200, `<html>`, -1, ""},
		{"200 OK without result", 200, `{"status":"OK"}`, -1, ""},
		{"200 other status", 200, `{"status":"MAYBE"}`, -1, ""},
		{"200 ERROR without code", 200, `{"status":"ERROR"}`, -1, ""},
		{"200 balance unreadable", 200, `{"status":"OK","transactionResult":{"transactionId":"x",` +
			`"balance":{"cashAmount":"lots","bonusAmount":0,"promoAmount":0}}}`, -1, ""},
		{"200 balance too precise", 200, `{"status":"OK","transactionResult":{"transactionId":"x",` +
			`"balance":{"cashAmount":1.001,"bonusAmount":0,"promoAmount":0}}}`, -1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newPAMServer(t, func(pamRequest) (int, string) { return tt.status, tt.body })
			_, err := srv.client(t).Move(t.Context(), move(t, wallet.Debit, "t-1", "", "1.00", eur))
			if tt.verdict == -1 {
				wantUnknown(t, err)
				return
			}
			if r := refusal(t, err); r.Verdict != tt.verdict || r.Code != tt.code {
				t.Errorf("refusal %+v, want %s %s", r, tt.verdict, tt.code)
			}
		})
	}
}

// TestPAMUnreadableBalanceRead: an unreadable balance read is an error,
// not an unknown outcome (nothing can have moved).
func TestPAMUnreadableBalanceRead(t *testing.T) {
	t.Parallel()
	xrp := domain.MustCurrency("XRP")
	for _, body := range []string{`{"status":"OK"}`, `{"status":"OK","balance":{"cashAmount":0.0000001,` +
		`"bonusAmount":0,"promoAmount":0}}`, `nonsense`, `{"pad":"` + strings.Repeat("x", 2<<20) + `"}`} {
		srv := newPAMServer(t, func(pamRequest) (int, string) { return 200, body })
		_, err := srv.client(t).Balance(t.Context(), player(xrp))
		if !errors.Is(err, operatorwallet.ErrUnreadableAnswer) || errors.Is(err, wallet.ErrOutcomeUnknown) {
			t.Errorf("balance answered %.80s: error %v, want ErrUnreadableAnswer alone", body, err)
		}
	}
}

// TestPAMExactAmounts: amounts go out as the exact decimal text and come
// back into the currency's minor units, whatever the precision.
func TestPAMExactAmounts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cur, amount, sent string
		answered, balance string // the PAM's cash amount (bonus 0), our reading
		refused           bool
	}{
		{cur: "XRP", amount: "0.000001", sent: `"cashAmount":0.000001`, answered: "0.000001", balance: "0.000001"},
		{cur: "XRP", amount: "123456789.123456", sent: `"cashAmount":123456789.123456`, answered: "1e-06",
			balance: "0.000001"},
		{cur: "BTC", amount: "0.123456", sent: `"cashAmount":0.12345600`, answered: "1.23456789", balance: "1.23456789"},
		{cur: "BTC", amount: "0.00000001", refused: true},
		{cur: "JPY", amount: "1234", sent: `"cashAmount":1234,`, answered: "98766", balance: "98766"},
		{cur: "USDT", amount: "1.000000", refused: true}, // no 3-letter code
	}
	for _, tt := range tests {
		t.Run(tt.cur+" "+tt.amount, func(t *testing.T) {
			t.Parallel()
			cur := domain.MustCurrency(tt.cur)
			srv := newPAMServer(t, func(pamRequest) (int, string) {
				return 200, `{"status":"OK","transactionResult":{"transactionId":"x","balance":{"cashAmount":` +
					tt.answered + `,"bonusAmount":0,"promoAmount":0}}}`
			})
			a, err := srv.client(t).Move(t.Context(), move(t, wallet.Debit, "t-1", "", tt.amount, cur))
			if tt.refused {
				r := refusal(t, err)
				if (r.Verdict != wallet.InvalidAmount && r.Verdict != wallet.WrongCurrency) || len(srv.received()) != 0 {
					t.Fatalf("refusal %+v after %d requests, want one before any", r, len(srv.received()))
				}
				return
			}
			if err != nil || a.Balance.String() != tt.balance || a.Balance.Currency() != cur {
				t.Fatalf("answer %+v, %v; want balance %s %s", a, err, tt.balance, tt.cur)
			}
			if raw := string(srv.received()[0].Raw); !strings.Contains(raw, tt.sent) {
				t.Errorf("body %s lacks %s", raw, tt.sent)
			}
		})
	}
}

// TestPAMMovesRefusedBeforeSending: what the PAM API cannot carry is
// refused without a request.
func TestPAMMovesRefusedBeforeSending(t *testing.T) {
	t.Parallel()
	eur := domain.MustCurrency("EUR")
	long := strings.Repeat("x", 41)
	tests := []struct {
		name string
		m    wallet.OperatorMove
		want wallet.Verdict
		code string
	}{
		{"reverse", move(t, wallet.Reverse, "rv-1", "win-1", "1.00", eur), wallet.NotRollbackable, "unsupported"},
		{"id over 40", move(t, wallet.Debit, long, "", "1.00", eur), wallet.InvalidRequest, "field"},
		{"cancel naming nothing", move(t, wallet.Cancel, "c-1", "", "1.00", eur), wallet.InvalidRequest, "field"},
		{"negative", move(t, wallet.Debit, "t-1", "", "-1.00", eur), wallet.InvalidAmount, "amount"},
		{"jackpot on a debit", jackpot(move(t, wallet.Debit, "t-1", "", "1.00", eur), money(t, "1", eur)),
			wallet.InvalidAmount, "amount"},
	}
	for _, tt := range tests {
		srv := newPAMServer(t, func(pamRequest) (int, string) { return 500, "" })
		_, err := srv.client(t).Move(t.Context(), tt.m)
		if r := refusal(t, err); r.Verdict != tt.want || r.Code != tt.code || len(srv.received()) != 0 {
			t.Errorf("%s: refusal %+v after %d requests, want %s %s before any", tt.name, r, len(srv.received()),
				tt.want, tt.code)
		}
	}
	srv := newPAMServer(t, func(pamRequest) (int, string) { return 500, "" })
	if _, found, err := srv.client(t).Lookup(t.Context(), tests[0].m); err != nil || found {
		t.Errorf("lookup of a reverse = %v, %v; want never found", found, err)
	}
}

// TestPAMCorrelationID: the provider's correlation id is sent; without
// one, a fresh one per call.
func TestPAMCorrelationID(t *testing.T) {
	t.Parallel()
	eur := domain.MustCurrency("EUR")
	srv := newPAMServer(t, newFakePAM(t, eur, "1").answer)
	p := player(eur)
	p.CorrelationID = ""
	for range 2 {
		if _, err := srv.client(t).Balance(t.Context(), p); err != nil {
			t.Fatal(err)
		}
	}
	reqs := srv.received()
	a, b := reqs[0].Header.Get("X-Correlation-ID"), reqs[1].Header.Get("X-Correlation-ID")
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(a) || a == b {
		t.Errorf("generated correlation ids %q and %q, want two different random ones", a, b)
	}
}

// TestPAMLookupErrors: a lookup the PAM refuses as not found is not
// found; another refusal is an error; an unreadable one an unknown.
func TestPAMLookupErrors(t *testing.T) {
	t.Parallel()
	eur := domain.MustCurrency("EUR")
	m := move(t, wallet.Debit, "t-1", "", "1.00", eur)
	for body, want := range map[string]string{
		`{"status":"ERROR","error":{"code":"PAM_ERR_TRANS_NOT_FOUND","message":""}}`:                   "not found",
		`{"status":"ERROR","error":{"code":"PAM_ERR_SESSION_EXPIRED","message":""}}`:                   "refusal",
		`{"status":"ERROR","error":{"code":"PAM_ERR_UNDEFINED","message":""}}`:                         "unknown",
		`{"status":"OK","transactions":[{"transactionType":"DEPOSIT","providerTransactionId":"t-1"}]}`: "not found",
		`[]`: "unknown",
	} {
		srv := newPAMServer(t, func(pamRequest) (int, string) { return 200, body })
		_, found, err := srv.client(t).Lookup(t.Context(), m)
		switch want {
		case "not found":
			if err != nil || found {
				t.Errorf("%s: %v, %v; want not found", body, found, err)
			}
		case "refusal":
			if r := refusal(t, err); r.Verdict != wallet.SessionExpired {
				t.Errorf("%s: %+v", body, r)
			}
		default:
			wantUnknown(t, err)
		}
	}
}

// TestPAMBookedWithoutBalance: a transaction booked without the balance
// is answered with the balance asked for; when that read fails, the
// movement's answer is unknown, never the read's refusal.
func TestPAMBookedWithoutBalance(t *testing.T) {
	t.Parallel()
	eur := domain.MustCurrency("EUR")
	for balance, want := range map[string]string{
		`{"status":"OK","balance":{"cashAmount":7.25,"bonusAmount":0.75,"promoAmount":3}}`: "8.00",
		`{"status":"ERROR","error":{"code":"PAM_ERR_SESSION_EXPIRED","message":"gone"}}`:   "unknown",
	} {
		srv := newPAMServer(t, func(r pamRequest) (int, string) {
			if r.Method == http.MethodPost {
				return 200, `{"status":"OK","transactionResult":{"transactionId":"pam-9"}}`
			}
			return 200, balance
		})
		a, err := srv.client(t).Move(t.Context(), move(t, wallet.Credit, "w-1", "", "1.00", eur))
		if want == "unknown" {
			wantUnknown(t, err)
			continue
		}
		if err != nil || a.TxID != "pam-9" || a.Balance.String() != want {
			t.Errorf("answer %+v, %v; want pam-9 at %s", a, err, want)
		}
	}
}
