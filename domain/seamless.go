package domain

import "fmt"

// Reported is a seamless client's wallet's answer to a money movement:
// its own id of the movement and the player's balance after it. A game
// call that carries one (GameTx.Reported) was decided by the client's
// wallet; the ledger records what was decided (docs/seamless-wallet.md).
type Reported struct {
	// TxID is the operator's id of the movement (empty when its protocol
	// gives none).
	TxID string
	// Balance is the player's balance after the movement, as the operator
	// said it: the balance the event carries.
	Balance Money
}

// mirrorBalance stands in for the player's wallet while a seamless call is
// decided: large enough that no debit is short (the operator decided
// that), small enough that no credit overflows.
const mirrorBalance int64 = 1 << 61

// mirrorReader is r with the player's wallet at mirrorBalance.
type mirrorReader struct {
	Reader
	player AccountID
}

func (m mirrorReader) Account(id AccountID) AccountState {
	st := m.Reader.Account(id)
	if id == m.player {
		st.Balance = mirrorBalance
	}
	return st
}

// mirrored decides a seamless client's game call: decide, with the
// player's wallet as a mirror of the operator's — the rules of money
// (ids, rounds, rollbacks, settled bets) as for every call, the balance
// the operator's. The event gets a mirror leg on the client's external
// account, so the player's wallet ends at the balance the operator
// reported, and carries the operator's id and balance. A call without
// Reported is decide's alone.
func mirrored(r Reader, g GameTx, decide func(Reader, GameTx) (Change, error)) (Change, error) {
	rep := g.Reported
	if rep == nil {
		return decide(r, g)
	}
	if err := checkAmount(rep.Balance, g.Currency, true); err != nil {
		return Change{}, fmt.Errorf("the operator's balance: %w", err)
	}
	if rep.TxID != "" {
		if err := ValidateID("operator_tx_id", rep.TxID); err != nil {
			return Change{}, err
		}
	}
	g.Reported, g.MaxBalance = nil, 0
	player := PlayerWallet(g.Client, g.Player, g.Currency)
	ch, err := decide(mirrorReader{Reader: r, player: player}, g)
	if err != nil {
		return Change{}, err
	}
	var moved int64
	for _, p := range ch.Event.Data.Postings {
		if p.Account != player {
			continue
		}
		m, err := ParseMoney(p.Amount, g.Currency)
		if err != nil {
			return Change{}, fmt.Errorf("posting on %s: %w", player, err)
		}
		moved += m.minor
	}
	// The mirror leg takes the wallet from what the ledger holds to what
	// the operator held before the movement: before + moved = reported.
	before, ok := addInt64(rep.Balance.minor, -moved)
	if !ok {
		return Change{}, ErrAmountOverflow
	}
	delta, ok := addInt64(before, -r.Account(player).Balance)
	if !ok {
		return Change{}, ErrAmountOverflow
	}
	if delta != 0 {
		leg := move(ExternalAccount(g.Client, g.Currency), player, FromMinor(delta, g.Currency))
		if delta < 0 {
			leg = move(player, ExternalAccount(g.Client, g.Currency), FromMinor(-delta, g.Currency))
		}
		ch.Event.Data.Postings = append(leg, ch.Event.Data.Postings...)
	}
	ch.Event.Data.BalanceAfter = rep.Balance.String()
	ch.Event.Data.OperatorTxID = rep.TxID
	return ch, nil
}
