package providersim

import (
	"context"
	"fmt"
)

// step is one part of a run: a function over the run that makes its
// calls, judges their answers (deviations go to the report) and keeps the
// expected balance. An error stops the run (the server unreachable).
type step struct {
	name string
	run  func(ctx context.Context, r *run) error
}

// steps are played in order after the launch. A new step is one function
// added here.
var steps = []step{
	{"open", stepOpen},
	{"balance", stepBalance},
	{"spins", stepSpins},
	{"retry", stepRetry},
	{"duplicate", stepDuplicate},
	{"rollback", stepRollback},
	{"unknown-rollback", stepUnknownRollback},
	{"timeout-retry", stepTimeoutRetry},
	{"promo", stepPromo},
	{"final-balance", stepBalance},
}

// do sends req and reads its answer by the dialect's document.
func (r *run) do(ctx context.Context, req wireRequest) (answer, error) {
	rep, err := r.send(ctx, req)
	if err != nil {
		return answer{}, err
	}
	return r.d.read(&checker{r: r, call: req.kind.String()}, req, rep), nil
}

// delta is what an accepted call of k carrying t moves in the wallet.
func delta(k kind, t tx) int64 {
	switch k {
	case callBet:
		return -t.Amount
	case callWin, callPromoWin, callRollback:
		return t.Amount
	}
	return 0 // a promo bet costs the player nothing; reads move nothing
}

// call makes a call of k carrying t and judges its answer: want's status
// and, wherever the answer tells a balance, the balance the wallet should
// hold after it. An accepted call moves the expected balance first.
func (r *run) call(ctx context.Context, k kind, t tx, want outcome) (answer, wireRequest, error) {
	req := r.d.build(r, k, t)
	a, err := r.do(ctx, req)
	if err != nil {
		return answer{}, req, err
	}
	if want == accepted {
		r.expect += delta(k, t)
	}
	r.judge(k, a, want)
	if want == accepted && k.moves() && a.Status == r.d.status(accepted) {
		r.report.Booked = append(r.report.Booked, r.d.ledgerID(k, t))
	}
	return a, req, nil
}

// judge checks a against want and the expected balance, and prints it.
func (r *run) judge(k kind, a answer, want outcome) {
	n := len(r.report.Deviations)
	if ws := r.d.status(want); a.Status != ws {
		r.deviate("%s: status %q, want %q", k, a.Status, ws)
	}
	switch {
	case a.Balance != nil && *a.Balance != r.expect:
		r.deviate("%s: balance %s, want %s", k, r.money(*a.Balance), r.money(r.expect))
	case a.Balance == nil && k != callOpen && a.Status == r.d.status(accepted):
		r.deviate("%s: an accepted call tells no balance", k)
	}
	mark := "ok    "
	if len(r.report.Deviations) > n {
		mark = "FAILED"
	}
	bal := "-"
	if a.Balance != nil {
		bal = r.money(*a.Balance)
	}
	r.printf("%s %-16s %-9s %-36s balance %s", mark, r.step, k, a.Status, bal)
}

// again sends req once more, as a provider retries, and checks the
// answer is first's: the same status, balance and id, marked a replay
// where the protocol marks one. Nothing moves.
func (r *run) again(ctx context.Context, req wireRequest, first answer) error {
	a, err := r.do(ctx, req)
	if err != nil {
		return err
	}
	r.sameAnswer(req.kind, first, a)
	return nil
}

func (r *run) sameAnswer(k kind, first, a answer) {
	n := len(r.report.Deviations)
	if a.Status != first.Status {
		r.deviate("%s retried: status %q, the first answer's was %q", k, a.Status, first.Status)
	}
	if (a.Balance == nil) != (first.Balance == nil) || (a.Balance != nil && *a.Balance != *first.Balance) {
		r.deviate("%s retried: balance %s, the first answer's was %s (a retry answers the original)", k,
			r.opt(a.Balance), r.opt(first.Balance))
	}
	if a.ID != first.ID {
		r.deviate("%s retried: id %q, the first answer's was %q", k, a.ID, first.ID)
	}
	if a.Replayed != nil && !*a.Replayed {
		r.deviate("%s retried: replayed is not true", k)
	}
	mark := "ok    "
	if len(r.report.Deviations) > n {
		mark = "FAILED"
	}
	r.printf("%s %-16s %-9s %-36s balance %s (a retry: the first answer again)", mark, r.step, k, a.Status, r.opt(a.Balance))
}

func (r *run) opt(b *int64) string {
	if b == nil {
		return "-"
	}
	return r.money(*b)
}

// betAmount is a random bet of 0.1 to 2 currency units (at least one
// minor unit), never more than the wallet holds.
func (r *run) betAmount() int64 {
	return min(int64(1+r.rng.IntN(20))*r.betUnit(), r.expect)
}

// winAmount is a random win on bet: nothing, half, the same, double or
// triple.
func (r *run) winAmount(bet int64) int64 {
	return bet * int64([]int{0, 1, 2, 4, 6}[r.rng.IntN(5)]) / 2
}

// bet books a fresh bet in round and returns it.
func (r *run) bet(ctx context.Context, round string) (tx, answer, wireRequest, error) {
	if r.expect <= 0 {
		return tx{}, answer{}, wireRequest{}, fmt.Errorf("the wallet is empty: launch with a larger --balance")
	}
	t := tx{ID: r.id("bet"), Round: round, Amount: r.betAmount()}
	a, req, err := r.call(ctx, callBet, t, accepted)
	return t, a, req, err
}

// settle books a win of amount on bet, closing its round.
func (r *run) settle(ctx context.Context, bet tx, amount int64) (answer, wireRequest, error) {
	return r.call(ctx, callWin, tx{ID: r.id("win"), Ref: bet.ID, Round: bet.Round, Amount: amount, Closed: true}, accepted)
}

// stepOpen is the protocol's session check, where it has one.
func stepOpen(ctx context.Context, r *run) error {
	if !r.d.has(callOpen) {
		r.printf("skip   %-16s the %s protocol has no session check", r.step, r.cfg.Protocol)
		return nil
	}
	_, _, err := r.call(ctx, callOpen, tx{}, accepted)
	return err
}

// stepBalance reads the balance: the launch's, or what every call since
// left.
func stepBalance(ctx context.Context, r *run) error {
	_, _, err := r.call(ctx, callBalance, tx{}, accepted)
	return err
}

// stepSpins plays the rounds: a bet, then a win (often nothing) that
// names it and closes the round.
func stepSpins(ctx context.Context, r *run) error {
	for i := range r.cfg.Spins {
		if r.expect < 40*r.betUnit() { // keep enough for the steps after
			r.printf("note   %-16s stopped after %d spins: the balance is low (launch with a larger --balance)", r.step, i)
			return nil
		}
		bet, _, _, err := r.bet(ctx, r.id("round"))
		if err != nil {
			return err
		}
		if _, _, err := r.settle(ctx, bet, r.winAmount(bet.Amount)); err != nil {
			return err
		}
	}
	return nil
}

// betUnit is the largest bet betAmount makes, over 20.
func (r *run) betUnit() int64 {
	unit := int64(1)
	for range r.sess.Currency.Exponent() {
		unit *= 10
	}
	return max(unit/10, 1)
}

// stepRetry sends a bet and its win twice each, the same bytes: the same
// id with the same payload is the same answer, and nothing moves twice.
func stepRetry(ctx context.Context, r *run) error {
	bet, a, req, err := r.bet(ctx, r.id("round"))
	if err != nil {
		return err
	}
	if err := r.again(ctx, req, a); err != nil {
		return err
	}
	a, req, err = r.settle(ctx, bet, r.winAmount(bet.Amount))
	if err != nil {
		return err
	}
	return r.again(ctx, req, a)
}

// stepDuplicate reuses a bet's id with another amount: the protocol's
// duplicate error, and nothing moves.
func stepDuplicate(ctx context.Context, r *run) error {
	bet, _, _, err := r.bet(ctx, r.id("round"))
	if err != nil {
		return err
	}
	other := bet
	other.Amount = bet.Amount + r.betUnit()
	if _, _, err := r.call(ctx, callBet, other, duplicate); err != nil {
		return err
	}
	_, _, err = r.settle(ctx, bet, 0)
	return err
}

// stepRollback rolls a bet back (and retries the rollback), then sends a
// win on it: refused, nothing moves.
func stepRollback(ctx context.Context, r *run) error {
	bet, _, _, err := r.bet(ctx, r.id("round"))
	if err != nil {
		return err
	}
	a, req, err := r.call(ctx, callRollback, tx{ID: r.id("rollback"), Ref: bet.ID, Round: bet.Round, Amount: bet.Amount}, accepted)
	if err != nil {
		return err
	}
	if err := r.again(ctx, req, a); err != nil {
		return err
	}
	_, _, err = r.call(ctx, callWin, tx{ID: r.id("win"), Ref: bet.ID, Round: bet.Round, Amount: bet.Amount, Closed: true},
		winAfterRollback)
	return err
}

// stepUnknownRollback rolls back a bet never sent: it moves nothing, and
// the bet, arriving late, is refused.
func stepUnknownRollback(ctx context.Context, r *run) error {
	ghost := tx{ID: r.id("ghost"), Round: r.id("round"), Amount: min(r.betUnit()*10, r.expect)}
	rb := tx{ID: r.id("rollback"), Ref: ghost.ID, Round: ghost.Round}
	if _, _, err := r.call(ctx, callRollback, rb, unknownRollback); err != nil {
		return err
	}
	_, _, err := r.call(ctx, callBet, ghost, lateOriginal)
	return err
}

// stepTimeoutRetry sends a bet and hangs up before reading its answer (a
// client-side timeout), then sends it again: it is booked exactly once.
// Once the provider hangs up as soon as the bet is written, once when the
// answer starts to arrive (so the server booked it, and the retry is
// answered as a replay where the protocol marks one).
func stepTimeoutRetry(ctx context.Context, r *run) error {
	for _, when := range []hangUp{hangUpWritten, hangUpAnswered} {
		bet := tx{ID: r.id("bet"), Round: r.id("round"), Amount: r.betAmount()}
		req := r.d.build(r, callBet, bet)
		if err := r.sendAndHangUp(ctx, req, when); err != nil {
			return err
		}
		r.printf("sent   %-16s %-9s and hung up %s", r.step, callBet, when)
		a, err := r.do(ctx, req)
		if err != nil {
			return err
		}
		r.expect -= bet.Amount
		r.judge(callBet, a, accepted)
		if when == hangUpAnswered && a.Replayed != nil && !*a.Replayed {
			r.deviate("%s: the retry of a bet booked before is not marked replayed", callBet)
		}
		if a.Status == r.d.status(accepted) {
			r.report.Booked = append(r.report.Booked, r.d.ledgerID(callBet, bet))
		}
		if _, _, err := r.call(ctx, callBalance, tx{}, accepted); err != nil {
			return err
		}
		if _, _, err := r.settle(ctx, bet, 0); err != nil {
			return err
		}
	}
	return nil
}

// stepPromo plays promotion money where the protocol has it: a promo bet
// the player pays nothing for, and a promo win.
func stepPromo(ctx context.Context, r *run) error {
	if !r.d.has(callPromoBet) && !r.d.has(callPromoWin) {
		r.printf("skip   %-16s the %s protocol has no promo calls here yet", r.step, r.cfg.Protocol)
		return nil
	}
	round := r.id("round")
	ref := ""
	if r.d.has(callPromoBet) {
		bet := tx{ID: r.id("promobet"), Round: round, Amount: r.betAmount()}
		if _, _, err := r.call(ctx, callPromoBet, bet, accepted); err != nil {
			return err
		}
		ref = bet.ID
	}
	if r.d.has(callPromoWin) {
		win := tx{ID: r.id("promowin"), Ref: ref, Round: round, Amount: r.betUnit() * int64(1+r.rng.IntN(30)), Closed: true}
		if _, _, err := r.call(ctx, callPromoWin, win, accepted); err != nil {
			return err
		}
	}
	return nil
}
