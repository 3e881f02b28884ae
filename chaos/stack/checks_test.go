package stack_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/pitboss/pitboss/chaos/stack"
)

// The suite's checks must be able to fail: each case breaks one property.

func acked(op, tx, event string, p *stack.Player, amount int64) *stack.Call {
	return &stack.Call{Op: op, TxID: tx, EventID: event, Player: p, Amount: amount,
		Outcome: stack.Outcome{Reply: stack.Reply{Status: http.StatusOK}}}
}

func TestEffects(t *testing.T) {
	p := &stack.Player{Index: 0}
	bet := acked("bet", "t1", "e1", p, 100)
	refused := &stack.Call{Op: "bet", TxID: "t2", Player: p,
		Outcome: stack.Outcome{Reply: stack.Reply{Status: http.StatusBadRequest, Body: []byte(`{"error":{"code":"X"}}`)}}}
	ev := func(id, tx string) stack.Event {
		return stack.Event{ID: id, ExternalTxID: tx, Type: "wallet.bet_placed.v1"}
	}
	for _, tc := range []struct {
		name               string
		events             []stack.Event
		lost, dup, phantom int
	}{
		{"exactly one effect", []stack.Event{ev("e1", "t1")}, 0, 0, 0},
		{"no event for an acknowledged call", nil, 1, 0, 0},
		{"another event than the answer named", []stack.Event{ev("e9", "t1")}, 1, 0, 0},
		{"two events for one call", []stack.Event{ev("e1", "t1"), ev("e2", "t1")}, 0, 1, 0},
		{"an event behind a refusal", []stack.Event{ev("e1", "t1"), ev("e3", "t2")}, 0, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := stack.Effects(tc.events, []*stack.Call{bet, refused})
			if len(r.Lost) != tc.lost || len(r.Duplicated) != tc.dup || len(r.Phantom) != tc.phantom {
				t.Fatalf("got %+v", r)
			}
			if r.OK() != (tc.lost+tc.dup+tc.phantom == 0) {
				t.Fatalf("OK() = %v for %+v", r.OK(), r)
			}
		})
	}
}

func TestCallbacks(t *testing.T) {
	events := []stack.Event{
		{Position: 1, ID: "a", StreamID: "s", StreamVersion: 1, Type: "wallet.deposited.v1"},
		{Position: 2, ID: "b", StreamID: "s", StreamVersion: 2, Type: "wallet.bet_placed.v1"},
		{Position: 3, ID: "c", StreamID: "s", StreamVersion: 3, Type: "wallet.win_credited.v1"},
	}
	rc := func(id string, v int64, ok bool) stack.Receipt {
		return stack.Receipt{EventID: id, EventIDHeader: id, IdempotencyKey: id + ":callback", StreamID: "s",
			StreamVersion: v, SignatureOK: true, Acked: ok, At: time.Now()}
	}
	for _, tc := range []struct {
		name     string
		receipts []stack.Receipt
		check    func(stack.CallbackReport) bool
	}{
		{"in order, once each", []stack.Receipt{rc("b", 2, true), rc("c", 3, true)},
			func(r stack.CallbackReport) bool { return r.OK() && r.Expected == 2 && r.Acked == 2 }},
		{"retried after a failure, then redelivered", []stack.Receipt{rc("b", 2, false), rc("b", 2, true), rc("b", 2, true), rc("c", 3, true)},
			func(r stack.CallbackReport) bool { return r.OK() && r.Redelivered == 1 }},
		{"one missing", []stack.Receipt{rc("b", 2, true)},
			func(r stack.CallbackReport) bool { return !r.OK() && len(r.Undelivered) == 1 }},
		{"later one sent before the earlier was acknowledged", []stack.Receipt{rc("b", 2, false), rc("c", 3, true), rc("b", 2, true)},
			func(r stack.CallbackReport) bool { return !r.OK() && len(r.OutOfOrder) == 1 }},
		{"another idempotency key on a retry", []stack.Receipt{rc("b", 2, false), func() stack.Receipt {
			x := rc("b", 2, true)
			x.IdempotencyKey = "b:other"
			return x
		}(), rc("c", 3, true)},
			func(r stack.CallbackReport) bool { return !r.OK() && len(r.WrongKey) == 1 }},
		{"bad signature", []stack.Receipt{rc("b", 2, true), func() stack.Receipt {
			x := rc("c", 3, true)
			x.SignatureOK = false
			return x
		}()},
			func(r stack.CallbackReport) bool { return !r.OK() && len(r.BadSignature) == 1 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if r := stack.Callbacks(events, tc.receipts, 0); !tc.check(r) {
				t.Fatalf("report %+v", r)
			}
		})
	}
}

func TestExpectedAndFormat(t *testing.T) {
	p := &stack.Player{Index: 0, Exp: 2, Deposit: 10000}
	bet := acked("bet", "t1", "e1", p, 250)
	calls := []*stack.Call{bet, acked("win", "t2", "e2", p, 100), acked("bet", "t3", "e3", p, 50),
		acked("rollback", "t4", "e4", p, 50),
		{Op: "bet", TxID: "t5", Player: p, Amount: 999, Outcome: stack.Outcome{Reply: stack.Reply{Status: 400}}}}
	if got := stack.Expected([]*stack.Player{p}, calls)[0]; got != 10000-250+100-50+50 {
		t.Fatalf("expected balance %d", got)
	}
	for _, tc := range []struct {
		v    int64
		exp  int
		want string
	}{{0, 2, "0.00"}, {5, 2, "0.05"}, {-1234, 2, "-12.34"}, {7, 0, "7"}, {1, 8, "0.00000001"}, {123456789, 8, "1.23456789"}} {
		if got := stack.FormatMinor(tc.v, tc.exp); got != tc.want {
			t.Errorf("FormatMinor(%d, %d) = %q, want %q", tc.v, tc.exp, got, tc.want)
		}
	}
}
