package operatorwallet_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	vErrors "github.com/pb33f/libopenapi-validator/errors"

	"github.com/pitboss/pitboss/adapters/operatorwallet"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/wallet"
)

const (
	pamDocPath  = "testdata/valkyrie-pam-0.6.0.yaml"
	pamAPIToken = "pam-api-token-for-tests"
	// pamToken is a player session token of the document's 32..40 chars.
	pamToken = "7c0a9d4f5e3b2a1908f7e6d5c4b3a29180f7e6d5"
)

// pamValidator is a strict validator of our PAM description: a query
// parameter, header or body field the document does not declare is an
// error, and formats (date-time) are asserted.
func pamValidator(t testing.TB) validator.Validator {
	t.Helper()
	spec, err := os.ReadFile(pamDocPath)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := libopenapi.NewDocument(spec)
	if err != nil {
		t.Fatalf("libopenapi: %v", err)
	}
	if v := doc.GetSpecInfo().VersionNumeric; v != 3.1 {
		t.Fatalf("the PAM description is OpenAPI %v, want 3.1", v)
	}
	v, errs := validator.NewValidator(doc, config.WithStrictMode(), config.WithFormatAssertions())
	if len(errs) > 0 {
		t.Fatalf("validator: %v", errs)
	}
	return v
}

func validationText(errs []*vErrors.ValidationError) string {
	var b strings.Builder
	for _, e := range errs {
		b.WriteString("\n  - " + e.Message)
		if e.Reason != "" && e.Reason != e.Message {
			b.WriteString(": " + e.Reason)
		}
		for _, se := range e.SchemaValidationErrors {
			b.WriteString("\n      " + se.Reason + " at " + se.FieldPath)
		}
	}
	return b.String()
}

// pamRequest is one request the PAM server received.
type pamRequest struct {
	Method, Path string
	Query        map[string][]string
	Header       http.Header
	Raw          []byte
	Body         map[string]any // numbers as json.Number
}

// pamServer is a loopback PAM: every request is validated against our
// description (the test fails on any validation error) and recorded, then
// answered by answer.
type pamServer struct {
	t      testing.TB
	srv    *httptest.Server
	valid  validator.Validator
	answer func(r pamRequest) (int, string)

	mu       sync.Mutex
	requests []pamRequest
}

func newPAMServer(t testing.TB, answer func(r pamRequest) (int, string)) *pamServer {
	t.Helper()
	s := &pamServer{t: t, valid: pamValidator(t), answer: answer}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *pamServer) serve(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		s.t.Errorf("read the request: %v", err)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(raw))
	if ok, errs := s.valid.ValidateHttpRequestSync(r); !ok {
		s.t.Errorf("%s %s does not conform to %s:%s", r.Method, r.URL.RequestURI(), pamDocPath, validationText(errs))
	}
	if got := r.Header.Get("Authorization"); got != "Bearer "+pamAPIToken {
		s.t.Errorf("%s %s: Authorization %q, want the bearer API token", r.Method, r.URL.Path, got)
	}
	req := pamRequest{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Header: r.Header.Clone(), Raw: raw}
	if len(raw) > 0 {
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		if err := d.Decode(&req.Body); err != nil {
			s.t.Errorf("%s %s: body is not JSON: %v", r.Method, r.URL.Path, err)
		}
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.mu.Unlock()
	status, body := s.answer(req)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

func (s *pamServer) received() []pamRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]pamRequest(nil), s.requests...)
}

func (s *pamServer) client(t testing.TB) wallet.OperatorWallet {
	t.Helper()
	w, err := operatorwallet.New(operatorwallet.Config{Protocol: "valkyrie-pam", BaseURL: s.srv.URL,
		Credential: pamAPIToken})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// fakePAM keeps one player's money and transactions the way the PAM
// document describes: idempotent by type and provider transaction id, a
// CANCEL finding its WITHDRAW by that WITHDRAW's provider transaction id.
type fakePAM struct {
	t                  testing.TB
	cur                domain.Currency
	mu                 sync.Mutex
	cash, bonus, promo domain.Money
	txs                []fakeTx
}

type fakeTx struct {
	typ, id, betRef, pamID string
	amount                 domain.Money
}

func newFakePAM(t testing.TB, cur domain.Currency, cash string) *fakePAM {
	return &fakePAM{t: t, cur: cur, cash: money(t, cash, cur), bonus: money(t, "1", cur), promo: money(t, "5", cur)}
}

func money(t testing.TB, s string, c domain.Currency) domain.Money {
	t.Helper()
	m, err := domain.ParseMoney(s, c)
	if err != nil {
		t.Fatalf("money %s %s: %v", s, c, err)
	}
	return m
}

func (f *fakePAM) funds() string {
	return fmt.Sprintf(`{"cashAmount":%s,"bonusAmount":%s,"promoAmount":%s}`, f.cash, f.bonus, f.promo)
}

func (f *fakePAM) answer(r pamRequest) (int, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case r.Path == "/players/session":
		return 200, `{"status":"OK","session":{"playerId":"p-1","token":"` + pamToken + `","currency":"` + f.cur.Code() +
			`","country":"SE","language":"sv","gameId":"g-1"}}`
	case strings.HasSuffix(r.Path, "/balance"):
		return 200, `{"status":"OK","balance":` + f.funds() + `}`
	case r.Method == http.MethodGet:
		id := r.Query["providerTransactionId"][0]
		var list []string
		for _, tx := range f.txs {
			if tx.id == id {
				list = append(list, fmt.Sprintf(`{"transactionType":%q,"providerTransactionId":%q,"cashAmount":%s}`,
					tx.typ, tx.id, tx.amount))
			}
		}
		return 200, `{"status":"OK","transactions":[` + strings.Join(list, ",") + `]}`
	}
	return f.book(r.Body)
}

// book is addTransaction.
func (f *fakePAM) book(b map[string]any) (int, string) {
	typ, id := b["transactionType"].(string), b["providerTransactionId"].(string)
	for _, tx := range f.txs {
		if tx.typ == typ && tx.id == id {
			return 200, f.booked(tx.pamID)
		}
	}
	// A promo movement moves cash too: its type says it is a promotion's.
	amount := money(f.t, string(b["cashAmount"].(json.Number)), f.cur)
	pot := &f.cash
	switch strings.TrimPrefix(typ, "PROMO") {
	case "WITHDRAW":
		if pot.Cmp(amount) < 0 {
			return 200, `{"status":"ERROR","error":{"code":"PAM_ERR_CASH_OVERDRAFT","message":"no money"},` +
				`"transactionResult":{"balance":` + f.funds() + `}}`
		}
		*pot, _ = pot.Sub(amount)
	case "DEPOSIT":
		*pot, _ = pot.Add(amount)
	case "CANCEL":
		found := false
		for _, tx := range f.txs {
			found = found || (tx.id == id && strings.HasSuffix(tx.typ, "WITHDRAW"))
		}
		if !found {
			return 200, `{"status":"ERROR","error":{"code":"PAM_ERR_CANCEL_NOT_FOUND","message":"no bet"},` +
				`"transactionResult":{"balance":` + f.funds() + `}}`
		}
		*pot, _ = pot.Add(amount)
	}
	tx := fakeTx{typ: typ, id: id, amount: amount, pamID: fmt.Sprintf("pam-%d", len(f.txs)+1)}
	if ref, ok := b["providerBetRef"].(string); ok {
		tx.betRef = ref
	}
	f.txs = append(f.txs, tx)
	return 200, f.booked(tx.pamID)
}

func (f *fakePAM) booked(pamID string) string {
	return `{"status":"OK","transactionResult":{"transactionId":"` + pamID + `","balance":` + f.funds() + `}}`
}
