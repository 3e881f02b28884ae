package evolution

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/wallet"
)

func cur(t *testing.T, code string) domain.Currency {
	t.Helper()
	c, err := domain.ParseCurrency(code)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestAmounts: the protocol's decimal numbers convert to a currency's
// minor units exactly, or are refused INVALID_PARAMETER.
func TestAmounts(t *testing.T) {
	n := func(s string) *number { v := number(s); return &v }
	for _, tc := range []struct {
		code  string
		text  *number
		minor int64
		ok    bool
	}{
		{"EUR", n("3.56"), 356, true},
		{"EUR", n("3.560000"), 356, true}, // trailing zeros are exact
		{"EUR", n("0"), 0, true},
		{"EUR", n("63727092.34"), 6_372_709_234, true},
		{"EUR", n("0.001"), 0, false},
		{"EUR", n("-1"), 0, false},
		{"EUR", n("1e2"), 0, false},
		{"EUR", nil, 0, false},
		{"JPY", n("100"), 100, true},
		{"JPY", n("100.5"), 0, false},
		{"KWD", n("1.234"), 1_234, true},
		{"KWD", n("1.2345"), 0, false},
	} {
		t.Run(fmt.Sprintf("%s %v", tc.code, tc.text), func(t *testing.T) {
			m, err := toMoney("amount", tc.text, cur(t, tc.code))
			if !tc.ok {
				if s, _ := classify(err, ""); err == nil || s != StatusInvalidParameter {
					t.Fatalf("%v (%s), want INVALID_PARAMETER", err, s)
				}
				return
			}
			if err != nil || m.Minor() != tc.minor {
				t.Fatalf("%v %v, want %d minor", m, err, tc.minor)
			}
		})
	}
}

// TestNumberDecoding: an amount is a JSON number, never a string.
func TestNumberDecoding(t *testing.T) {
	var v struct {
		A *number `json:"a"`
	}
	if err := json.Unmarshal([]byte(`{"a":12.50}`), &v); err != nil || v.A == nil || *v.A != "12.50" {
		t.Fatalf("a number: %v %v", v.A, err)
	}
	if err := json.Unmarshal([]byte(`{"a":"12.50"}`), &v); err == nil {
		t.Fatal("a string was taken as an amount")
	}
}

// TestClassify: every verdict of the ledger maps to the status the
// protocol document gives it; an id reused with another payload is the
// call's own conflict status; anything else is UNKNOWN_ERROR, logged.
func TestClassify(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("ctx: %w", err) }
	for _, tc := range []struct {
		err      error
		conflict string
		status   string
		known    bool
	}{
		{wrap(domain.ErrInsufficientFunds), "", StatusInsufficientFunds, true},
		{wrap(commands.ErrSessionExpired), "", StatusInvalidSID, true},
		{wrap(domain.ErrTransactionUnknown), "", StatusBetDoesNotExist, true},
		{wrap(domain.ErrBetRolledBack), "", StatusBetAlreadySettled, true},
		{wrap(domain.ErrRolledBackEarlier), "", StatusBetAlreadySettled, true},
		{wrap(domain.ErrBetSettled), "", StatusBetAlreadySettled, true},
		{wrap(domain.ErrTooPrecise), "", StatusInvalidParameter, true},
		{&domain.IdempotencyConflictError{}, StatusBetAlreadyExist, StatusBetAlreadyExist, true},
		{&domain.IdempotencyConflictError{}, StatusBetAlreadySettled, StatusBetAlreadySettled, true},
		{wallet.Refuse(wallet.UnknownSession, "x"), "", StatusInvalidSID, true},
		{wrap(domain.ErrDuplicateTransaction), StatusBetAlreadySettled, StatusBetAlreadyExist, true},
		{errors.New("the database is down"), "", StatusUnknownError, false},
	} {
		status, known := classify(tc.err, tc.conflict)
		if status != tc.status || known != tc.known {
			t.Errorf("%v: %s %v, want %s %v", tc.err, status, known, tc.status, tc.known)
		}
	}
	for _, v := range wallet.Verdicts() {
		if _, ok := statuses[v]; !ok {
			t.Errorf("verdict %s has no status", v)
		}
	}
	if httpStatus(StatusInvalidTokenID) != http.StatusUnauthorized || httpStatus(StatusInvalidParameter) != http.StatusOK {
		t.Fatal("INVALID_TOKEN_ID is 401, every other status 200")
	}
}

// TestNoLedger: a server built without the ledger's stores answers every
// call UNKNOWN_ERROR (a fault of ours, logged), never a 500 or a panic.
func TestNoLedger(t *testing.T) {
	h := New(wire.DialectDeps{})
	e := echo.New()
	for path, fn := range map[string]echo.HandlerFunc{"check": h.Check, "balance": h.Balance, "debit": h.Debit,
		"credit": h.Credit, "cancel": h.Cancel, "promo_payout": h.PromoPayout} {
		req := httptest.NewRequest(http.MethodPost, "/provider/evolution/p/wallet/"+path+"?authToken=x",
			strings.NewReader(`{"sid":"s","userId":"u","uuid":"q-1"}`))
		req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
		rec := httptest.NewRecorder()
		c := e.NewContext(req, rec)
		c.SetParamNames("provider")
		c.SetParamValues("p")
		if err := fn(c); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		var a struct{ Status, UUID string }
		if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil || rec.Code != http.StatusOK ||
			a.Status != StatusUnknownError || a.UUID != "q-1" {
			t.Errorf("%s: %d %s, want 200 UNKNOWN_ERROR echoing the uuid", path, rec.Code, rec.Body)
		}
	}
}

// FuzzMoneyCall: any body either is refused by the strict decoder or
// decodes; a decoded amount converts to EUR exactly or is refused, never
// rounded (its text, read back, is the same money) and never negative.
func FuzzMoneyCall(f *testing.F) {
	for _, s := range []string{
		`{"sid":"s","userId":"u","uuid":"q","currency":"EUR","transaction":{"id":"t","refId":"r","amount":12.50}}`,
		`{"sid":"s","transaction":{"amount":-0.0}}`,
		`{"transaction":{"amount":1e400}}`,
		`{"transaction":{"amount":"1"}}`,
		`{"game":{"details":{"table":null}},"transaction":{"amount":0.000000000000000000001}}`,
	} {
		f.Add([]byte(s))
	}
	eur := domain.MustCurrency("EUR")
	f.Fuzz(func(t *testing.T, b []byte) {
		var v moneyCall
		if wire.DecodeJSON(b, &v) != nil || v.Transaction == nil || v.Transaction.Amount == nil {
			return
		}
		_ = v.Game.tableID()
		m, err := toMoney("amount", v.Transaction.Amount, eur)
		if err != nil {
			if s, _ := classify(err, ""); s != StatusInvalidParameter {
				t.Fatalf("amount %s: %v answered %s", *v.Transaction.Amount, err, s)
			}
			return
		}
		back, err := domain.ParseMoney(m.String(), eur)
		if err != nil || back != m || m.IsNegative() {
			t.Fatalf("amount %s became %s (%v)", *v.Transaction.Amount, m, err)
		}
		if want, err := domain.ParseMoney(string(*v.Transaction.Amount), eur); err != nil || want != m {
			t.Fatalf("amount %s became %s, not %s", *v.Transaction.Amount, m, want)
		}
	})
}
