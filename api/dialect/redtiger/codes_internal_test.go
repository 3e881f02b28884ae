package redtiger

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/wallet"
)

// TestClassify: the ledger's verdicts, the decoder's and our own refusals
// answer the protocol's codes and HTTP statuses; anything else is 500,
// unknown, and says nothing of the fault.
func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		err    error
		code   int
		status int
		known  bool
	}{
		{fmt.Errorf("bet: %w", domain.ErrInsufficientFunds), CodeInsufficientFunds, 400, true},
		{fmt.Errorf("bet: %w", commands.ErrSessionExpired), CodeNotAuthorized, 400, true},
		{&domain.IdempotencyConflictError{Key: "k", Field: "amount"}, CodeDuplicate, 400, true},
		{fmt.Errorf("x: %w", domain.ErrRolledBackEarlier), CodeDuplicate, 400, true},
		{fmt.Errorf("x: %w", domain.ErrBetSettled), CodeDuplicate, 400, true},
		{fmt.Errorf("x: %w", domain.ErrBetRolledBack), CodeTransactionNotFound, 400, true},
		{fmt.Errorf("x: %w", domain.ErrPlayerMismatch), CodeTransactionNotFound, 400, true},
		{fmt.Errorf("x: %w", domain.ErrCurrencyMismatch), CodeInvalidCurrency, 400, true},
		{fmt.Errorf("x: %w", domain.ErrTooPrecise), CodeInvalidInput, 400, true},
		{wire.NewError(http.StatusBadRequest, wire.CodeInvalidJSON, "bad"), CodeInvalidInput, 400, true},
		{wallet.Refuse(wallet.Unauthenticated, "wrong API key"), CodeAPIAuth, 401, true},
		{wallet.Refuse(wallet.Unsupported, "jackpot"), CodeGeneric, 400, true},
		{errors.New("connection refused"), CodeInternal, 500, false},
	} {
		code, msg, known := classify(tc.err)
		if code != tc.code || known != tc.known || httpStatus(code) != tc.status || msg == "" {
			t.Errorf("%v: code %d %q known %v status %d; want %d known %v status %d",
				tc.err, code, msg, known, httpStatus(code), tc.code, tc.known, tc.status)
		}
	}
	for _, v := range wallet.Verdicts() {
		if _, ok := codes[v]; !ok {
			t.Errorf("verdict %s has no code", v)
		}
	}
	// Auth refusals and faults say no more than their code's message.
	for err, want := range map[error]string{
		wallet.Refuse(wallet.Unauthenticated, "provider is on the caleta wallet protocol"): "API authentication error",
		wallet.Refuse(wallet.WrongPlayer, "userId is not the session's player"):            "Not authorized",
		errors.New("dial tcp 10.0.0.3:5432: refused"):                                      "Internal server error",
	} {
		if _, msg, _ := classify(err); msg != want {
			t.Errorf("%v answered %q, want %q", err, msg, want)
		}
	}
}

// TestAmount: decimal text in the currency's decimals, exactly, or
// CodeInvalidInput.
func TestAmount(t *testing.T) {
	jpy, _ := domain.ParseCurrency("JPY")
	kwd, _ := domain.ParseCurrency("KWD")
	eur, _ := domain.ParseCurrency("EUR")
	for _, tc := range []struct {
		text  domain.AmountText
		cur   domain.Currency
		minor int64
		bad   bool
	}{
		{"", eur, 0, false},
		{"10.50", eur, 1050, false},
		{"10.5", eur, 1050, false},
		{"0.001", eur, 0, true},
		{"-1", eur, 0, true},
		{"1e3", eur, 0, true},
		{"100", jpy, 100, false},
		{"100.5", jpy, 0, true},
		{"1.234", kwd, 1234, false},
		{"1.2345", kwd, 0, true},
	} {
		m, err := amount("stake", tc.text, tc.cur)
		if tc.bad {
			if c, _, _ := classify(err); err == nil || c != CodeInvalidInput {
				t.Errorf("%q %s: %v, want code 200", tc.text, tc.cur.Code(), err)
			}
			continue
		}
		if err != nil || m.Minor() != tc.minor {
			t.Errorf("%q %s: %v %v, want %d", tc.text, tc.cur.Code(), m, err, tc.minor)
		}
	}
	// Answers carry the currency's decimals.
	if b := cash(domain.FromMinor(1234, kwd)); b.Cash != "1.234" || b.Bonus != "0.000" {
		t.Errorf("KWD balance %+v", b)
	}
	if b := cash(domain.FromMinor(100, jpy)); b.Cash != "100" || b.Bonus != "0" {
		t.Errorf("JPY balance %+v", b)
	}
}
