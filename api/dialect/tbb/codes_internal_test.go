package tbb

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

// TestClassify: the core's verdicts answer the addendum's codes, each its
// own HTTP status; every verdict has one; a fault is 500 and unknown.
func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		err   error
		code  int
		known bool
	}{
		{fmt.Errorf("bet: %w", domain.ErrInsufficientFunds), 402, true},
		{fmt.Errorf("bet: %w", commands.ErrSessionExpired), 403, true},
		{wallet.Refuse(wallet.Unauthenticated, "sig"), 403, true},
		{wallet.Refuse(wallet.UnknownSession, "token"), 403, true},
		{wallet.Refuse(wallet.WrongPlayer, "player"), 404, true},
		{wallet.Refuse(wallet.InvalidGame, "game"), 405, true},
		{wallet.Refuse(wallet.UnknownTransaction, "no bet"), 406, true},
		{fmt.Errorf("win: %w", domain.ErrBetRolledBack), 406, true},
		{fmt.Errorf("bet: %w", domain.ErrRolledBackEarlier), 408, true},
		{&domain.IdempotencyConflictError{Key: "k", Field: "amount"}, 400, true},
		{fmt.Errorf("refund: %w", domain.ErrBetSettled), 400, true},
		{wire.NewError(http.StatusBadRequest, wire.CodeInvalidJSON, "not JSON"), 400, true},
		{errors.New("connection refused"), 500, false},
	} {
		code, msg, known := classify(tc.err)
		if code != tc.code || known != tc.known || msg == "" {
			t.Errorf("%v: %d %q (known %v), want %d (known %v)", tc.err, code, msg, known, tc.code, tc.known)
		}
	}
	for _, v := range wallet.Verdicts() {
		if _, ok := codes[v]; !ok {
			t.Errorf("verdict %s has no code", v)
		}
	}
	// A fault's message says no more than its code's.
	if _, msg, _ := classify(errors.New("dial tcp 10.0.0.3:5432: refused")); msg != "unknown error" {
		t.Errorf("a fault answered %q", msg)
	}
}
