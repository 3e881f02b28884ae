package stack

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
)

// The checks of the seamless form: the operator's wallet, the ledger and
// the provider's view agree — no money lost or doubled at the operator,
// no movement applied there twice, every voided bet never applied or
// cancelled, every acknowledged call booked once and every refused one
// voided.

// Follow-up outcomes (wallet.Outcome*), as the admin API shows them.
const (
	OutcomeCancelled    = "cancelled"
	OutcomeNeverApplied = "not applied at the operator"
	OutcomeBooked       = "acknowledged and booked"
	// OutcomeStands: a voided bet the ledger booked after all (its
	// booking applied though answered with an error); its debit stands.
	OutcomeStands = "booked in the ledger: the debit stands"
)

// The simulator's valkyrie-pam transaction types.
const (
	simDebit  = "WITHDRAW"
	simCredit = "DEPOSIT"
	simCancel = "CANCEL"
)

// SeamlessReport is what the checks found; every list empty is a pass.
type SeamlessReport struct {
	// OperatorDiffs: a player whose balance at the operator is not its
	// start plus what the ledger recorded (money lost or doubled there).
	OperatorDiffs []string
	// AppliedTwice: a movement id the operator applied more than once.
	AppliedTwice []string
	// Unbooked: a movement the operator applied that the ledger neither
	// booked nor voided (and, for a debit, cancelled).
	Unbooked []string
	// NotAtOperator: a movement the ledger booked that the operator did
	// not apply, or applied under another id or amount.
	NotAtOperator []string
	// Voids: a voided bet the ledger booked, or that the operator still
	// holds; a follow-up settled another way than expected.
	Voids []string
	// Provider: a refused call that is not a voided bet.
	Provider []string

	// Counts for the table.
	CancelNeverApplied, CancelCancelled, CancelStood, Resent, Refused int
}

// Problems is every finding, labelled.
func (r SeamlessReport) Problems() map[string][]string {
	return map[string][]string{"operator balance": r.OperatorDiffs, "applied twice at the operator": r.AppliedTwice,
		"applied at the operator, not booked": r.Unbooked, "booked, not at the operator": r.NotAtOperator,
		"voided bets": r.Voids, "provider's view": r.Provider}
}

// SeamlessCheck compares the operator's state, the ledger's game events
// of the players, the settled follow-ups and the load's calls.
func SeamlessCheck(players []*Player, sim SimState, moves []LedgerMove, follow []FollowUp, calls []*Call) SeamlessReport {
	var r SeamlessReport
	cash, err := sim.Cash(players)
	if err != nil {
		r.OperatorDiffs = append(r.OperatorDiffs, err.Error())
	}
	sum := map[string]int64{}
	for _, m := range moves {
		sum[m.Player] += m.Signed
	}
	for _, p := range players {
		if got, want := cash[p.ID], p.Deposit+sum[p.ID]; got != want {
			r.OperatorDiffs = append(r.OperatorDiffs, fmt.Sprintf("%s: the operator holds %s, start %s + the ledger's %s = %s",
				p.ID, FormatMinor(got, p.Exp), FormatMinor(p.Deposit, p.Exp), FormatMinor(sum[p.ID], p.Exp),
				FormatMinor(want, p.Exp)))
		}
	}
	mine := map[string]bool{}
	for _, p := range players {
		mine[p.ID] = true
	}
	var txs []SimTx
	for _, tx := range sim.Transactions {
		if mine[tx.Player] {
			txs = append(txs, tx)
		}
	}
	voided := r.checkFollowUps(follow, txs)
	r.checkOperatorSide(txs, moves, voided)
	r.checkProvider(calls, voided)
	for _, l := range [][]string{r.OperatorDiffs, r.AppliedTwice, r.Unbooked, r.NotAtOperator, r.Voids, r.Provider} {
		sort.Strings(l)
	}
	return r
}

// checkFollowUps reads the settled follow-ups: each cancel's debit never
// applied at the operator or cancelled there, each re-send booked. It
// returns the voided bets' ids.
func (r *SeamlessReport) checkFollowUps(follow []FollowUp, txs []SimTx) map[string]bool {
	debits := map[string]SimTx{}
	for _, tx := range txs {
		if tx.Type == simDebit {
			debits[tx.ProviderTxID] = tx
		}
	}
	voided := map[string]bool{}
	for _, f := range follow {
		if f.State != "settled" {
			r.Voids = append(r.Voids, fmt.Sprintf("follow-up %s %s still pending: %s", f.Action, f.MoveID, f.LastError))
			continue
		}
		switch f.Action {
		case "cancel":
			d, applied := debits[f.MoveID]
			if f.Outcome == OutcomeStands { // checked as any booked bet
				r.CancelStood++
				continue
			}
			voided[f.MoveID] = true
			switch {
			case f.Outcome == OutcomeNeverApplied && !applied:
				r.CancelNeverApplied++
			case f.Outcome == OutcomeCancelled && applied && d.Undone:
				r.CancelCancelled++
			default:
				r.Voids = append(r.Voids, fmt.Sprintf("voided bet %s settled %q; at the operator: applied %v, undone %v",
					f.MoveID, f.Outcome, applied, d.Undone))
			}
		case "resend":
			r.Resent++
			if f.Outcome != OutcomeBooked {
				r.Voids = append(r.Voids, fmt.Sprintf("re-send of %s %s settled %q", f.Move, f.MoveID, f.Outcome))
			}
		default:
			r.Voids = append(r.Voids, fmt.Sprintf("follow-up %d: action %q", f.ID, f.Action))
		}
	}
	return voided
}

// checkOperatorSide matches the operator's movements with the ledger's
// events both ways: once each, same id, same amount.
func (r *SeamlessReport) checkOperatorSide(txs []SimTx, moves []LedgerMove, voided map[string]bool) {
	seen := map[string]SimTx{}
	keys := map[string]bool{}
	for _, tx := range txs {
		k := tx.Type + " " + tx.ProviderTxID
		if _, dup := seen[k]; dup || keys[tx.Key] {
			r.AppliedTwice = append(r.AppliedTwice, k)
		}
		seen[k], keys[tx.Key] = tx, true
	}
	// valkyrie-pam's CANCEL carries the cancelled debit's id, not the
	// cancel's own (adapters/operatorwallet.pamBody): a rollback of bet X
	// and the cancel of voided bet X are both CANCEL X there.
	booked := map[string]LedgerMove{}
	for _, m := range moves {
		simType, id := map[string]string{"wallet.bet_placed.v1": simDebit, "wallet.win_credited.v1": simCredit,
			"wallet.bet_rolled_back.v1": simCancel}[m.Type], m.TxID
		if simType == "" {
			continue // a tombstone moves nothing; valkyrie-pam reverses no win
		}
		if simType == simCancel {
			id = m.Ref
		}
		booked[simType+" "+id] = m
		tx, ok := seen[simType+" "+id]
		switch {
		case !ok:
			r.NotAtOperator = append(r.NotAtOperator, fmt.Sprintf("%s %s: no %s %s at the operator", m.Type, m.TxID, simType, id))
		case tx.ID != m.OperatorTxID:
			r.NotAtOperator = append(r.NotAtOperator, fmt.Sprintf("%s %s: operator id %q booked, the operator's is %q",
				m.Type, m.TxID, m.OperatorTxID, tx.ID))
		case tx.Moved.Cash != m.Signed:
			r.NotAtOperator = append(r.NotAtOperator, fmt.Sprintf("%s %s: booked %d, the operator moved %d", m.Type, m.TxID,
				m.Signed, tx.Moved.Cash))
		}
	}
	for _, tx := range txs {
		_, isBooked := booked[tx.Type+" "+tx.ProviderTxID]
		var ok bool
		switch tx.Type {
		case simDebit:
			_, rolledBack := booked[simCancel+" "+tx.ProviderTxID]
			ok = isBooked && tx.Undone == rolledBack || voided[tx.ProviderTxID] && tx.Undone
		case simCredit:
			ok = isBooked
		case simCancel:
			ok = isBooked || voided[tx.ProviderTxID]
		}
		if !ok {
			r.Unbooked = append(r.Unbooked, fmt.Sprintf("%s %s (ref %q, undone %v, moved %d)", tx.Type, tx.ProviderTxID,
				tx.BetRef, tx.Undone, tx.Moved.Cash))
		}
	}
	for id := range voided {
		if _, isBooked := booked[simDebit+" "+id]; isBooked {
			r.Voids = append(r.Voids, "voided bet "+id+" is booked in the ledger")
		}
	}
}

// checkProvider: the only refusal a provider may get is a retried bet
// whose debit was voided (409 ROLLED_BACK_BEFORE_ARRIVAL); every call
// ends with a definitive answer. (Effects checks that every acknowledged
// call was booked once and no refused one was.)
func (r *SeamlessReport) checkProvider(calls []*Call, voided map[string]bool) {
	for _, c := range calls {
		switch {
		case c.Acked():
		case c.Outcome.Err != nil:
			r.Provider = append(r.Provider, fmt.Sprintf("%s %s: no definitive answer: %v", c.Op, c.TxID, c.Outcome.Err))
		case c.Op == "bet" && c.Outcome.Status == http.StatusConflict && c.Outcome.Code() == "ROLLED_BACK_BEFORE_ARRIVAL" &&
			voided[c.TxID]:
			r.Refused++
		default:
			r.Provider = append(r.Provider, fmt.Sprintf("%s %s refused %d %s (voided: %v)", c.Op, c.TxID, c.Outcome.Status,
				c.Outcome.Code(), voided[c.TxID]))
		}
	}
}

// String sums the report up in one line.
func (r SeamlessReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "voided bets: %d never applied, %d cancelled, %d booked after all; %d re-sent and booked; "+
		"%d bets refused as voided", r.CancelNeverApplied, r.CancelCancelled, r.CancelStood, r.Resent, r.Refused)
	return b.String()
}
