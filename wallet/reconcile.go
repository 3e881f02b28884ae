package wallet

import (
	"context"
	"errors"
	"fmt"

	"github.com/pitboss/pitboss/domain"
)

// Reconciling a seamless client with its own wallet
// (docs/seamless-wallet.md#reconciliation): every movement the ledger
// booked for it in a day is looked up at the operator, where its protocol
// can (valkyrie-pam), and the differences are named. A protocol without a
// lookup (tbb) reconciles with the operator's own file instead, through
// the reconciliation upload (docs/reconciliation.md).

// SeamlessMovement is one movement the ledger booked for a seamless
// client: an event that carries the operator's id (domain.Reported), with
// what a lookup at the operator needs.
type SeamlessMovement struct {
	EventID string
	Type    domain.EventType
	// ID is the provider's transaction id (the movement's id at the
	// operator); Ref the transaction a rollback undid.
	ID, Ref string
	Player  string
	// Token is the operator's player token of the session, Provider and
	// Game its provider and game.
	Token, Provider, Game string
	Amount                domain.Money
	Promo                 bool
	OperatorTxID          string
}

// OperatorDifference is one disagreement between the ledger and the
// operator.
type OperatorDifference struct {
	TransactionID string `json:"transaction_id"`
	Movement      string `json:"movement"`
	PlayerID      string `json:"player_id"`
	// Problem is one of the Problem* texts.
	Problem  string `json:"problem"`
	Ledger   string `json:"ledger,omitempty"`
	Operator string `json:"operator,omitempty"`
	EventID  string `json:"event_id"`
}

// The problems a reconciliation names.
const (
	ProblemMissing        = "booked in the ledger, unknown to the operator"
	ProblemAmount         = "the amounts differ"
	ProblemCancelled      = "cancelled at the operator, standing in the ledger"
	ProblemLookupFailed   = "the operator's lookup failed"
	ProblemNotLookedUpRev = "a reversed win: the protocol has no reverse to look up"
)

// OperatorReconciliation is the report.
type OperatorReconciliation struct {
	Checked     int                  `json:"checked"`
	Matched     int                  `json:"matched"`
	Differences []OperatorDifference `json:"differences"`
}

// MaxReconcileDifferences bounds the differences a report lists.
const MaxReconcileDifferences = 1000

// ReconcileWithOperator looks every movement up at op: each must be
// there, at the ledger's amount where the operator tells it; a bet the
// ledger holds standing must not be cancelled there. ErrNoLookup when
// op's protocol cannot look a movement up.
func ReconcileWithOperator(ctx context.Context, op OperatorWallet, moves []SeamlessMovement) (OperatorReconciliation, error) {
	rep := OperatorReconciliation{Differences: []OperatorDifference{}}
	undone := map[string]bool{}
	for _, m := range moves {
		if m.Type == domain.EventBetRolledBack {
			undone[m.Ref] = true
		}
	}
	for _, mv := range moves {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		kind, ok := moveKindOf(mv.Type)
		if !ok {
			continue
		}
		rep.Checked++
		m := OperatorMove{OperatorPlayer: OperatorPlayer{Player: mv.Player, Token: mv.Token, Provider: mv.Provider,
			Currency: mv.Amount.Currency(), Game: mv.Game, CorrelationID: "reconcile-" + mv.EventID}, Kind: kind, ID: mv.ID, Ref: mv.Ref,
			Game: mv.Game, Amount: mv.Amount, Promo: mv.Promo}
		diff := OperatorDifference{TransactionID: mv.ID, Movement: kind.String(), PlayerID: mv.Player, EventID: mv.EventID}
		problem, theirs, err := lookUp(ctx, op, m)
		if errors.Is(err, ErrNoLookup) {
			return rep, err
		}
		if problem == "" && kind == Debit && !undone[mv.ID] {
			problem, theirs, err = cancelledThere(ctx, op, m)
		}
		if problem == "" {
			rep.Matched++
			continue
		}
		diff.Problem, diff.Operator = problem, theirs
		if problem == ProblemAmount || problem == ProblemMissing {
			diff.Ledger = mv.Amount.String()
		}
		if err != nil {
			diff.Operator = err.Error()
		}
		if len(rep.Differences) < MaxReconcileDifferences {
			rep.Differences = append(rep.Differences, diff)
		}
	}
	return rep, nil
}

// lookUp is m's problem at the operator ("" for none) and what the
// operator said.
func lookUp(ctx context.Context, op OperatorWallet, m OperatorMove) (string, string, error) {
	if m.Kind == Reverse {
		return ProblemNotLookedUpRev, "", nil
	}
	ans, found, err := op.Lookup(ctx, m)
	switch {
	case errors.Is(err, ErrNoLookup):
		return "", "", err
	case err != nil:
		return ProblemLookupFailed, "", err
	case !found:
		return ProblemMissing, "", nil
	case ans.Amount.Currency() == m.Currency && ans.Amount.Cmp(m.Amount) != 0:
		return ProblemAmount, ans.Amount.String(), nil
	}
	return "", "", nil
}

// cancelledThere reports a debit the operator cancelled.
func cancelledThere(ctx context.Context, op OperatorWallet, debit OperatorMove) (string, string, error) {
	cancel := debit
	cancel.Kind, cancel.ID, cancel.Ref = Cancel, VoidPrefix+debit.ID, debit.ID
	_, found, err := op.Lookup(ctx, cancel)
	switch {
	case err != nil:
		return ProblemLookupFailed, "", fmt.Errorf("look up a cancel of %s: %w", debit.ID, err)
	case found:
		return ProblemCancelled, "cancelled", nil
	}
	return "", "", nil
}

func moveKindOf(t domain.EventType) (MoveKind, bool) {
	switch t {
	case domain.EventBetPlaced:
		return Debit, true
	case domain.EventWinCredited:
		return Credit, true
	case domain.EventBetRolledBack:
		return Cancel, true
	case domain.EventWinReversed:
		return Reverse, true
	}
	return 0, false
}
