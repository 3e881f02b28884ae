package domain_test

import (
	"testing"

	"github.com/pitboss/pitboss/domain"
)

// reported is a seamless client's wallet's answer: its id and the balance
// after (domain.Reported).
func reported(txID, balance string) gameOpt {
	return func(g *domain.GameTx) { g.Reported = &domain.Reported{TxID: txID, Balance: amt(balance)} }
}

// TestSeamlessCallsMirrorTheOperatorsBalance: a call the client's own
// wallet decided is booked by the rules of money, with a mirror leg on the
// client's external account so the player's wallet ends at the balance the
// operator reported — whatever the ledger held before.
func TestSeamlessCallsMirrorTheOperatorsBalance(t *testing.T) {
	runCases(t, []decisionCase{
		{name: "bet on an empty mirror: the operator had the money",
			when: bet("b1", amt("10.00"), reported("op-1", "90.00")),
			then: then{typ: domain.EventBetPlaced, stream: wallet, version: 1, amount: "10.00", after: "90.00",
				postings: []domain.Posting{post(external, "-100.00"), post(wallet, "100.00"),
					post(wallet, "-10.00"), post(house, "10.00")},
				balances: bal(wallet, 9000, house, 1000, external, -10000)}},
		{name: "bet when the mirror already says the balance before: no mirror leg",
			given: []decision{bet("b0", amt("5.00"), reported("op-0", "100.00"))},
			when:  bet("b1", amt("10.00"), reported("op-1", "90.00")),
			then: then{typ: domain.EventBetPlaced, stream: wallet, version: 2, amount: "10.00", after: "90.00",
				postings: []domain.Posting{post(wallet, "-10.00"), post(house, "10.00")},
				balances: bal(wallet, 9000, house, 1500)}},
		{name: "the player spent elsewhere: the mirror leg takes it down",
			given: []decision{bet("b0", amt("5.00"), reported("op-0", "100.00"))},
			when:  bet("b1", amt("10.00"), reported("op-1", "20.00")),
			then: then{typ: domain.EventBetPlaced, stream: wallet, version: 2, amount: "10.00", after: "20.00",
				postings: []domain.Posting{post(wallet, "-70.00"), post(external, "70.00"),
					post(wallet, "-10.00"), post(house, "10.00")},
				balances: bal(wallet, 2000, house, 1500)}},
		{name: "a win the operator credited",
			given: []decision{bet("b1", amt("10.00"), inRound("r1"), reported("op-1", "90.00"))},
			when:  win("w1", amt("25.00"), "b1", inRound("r1"), reported("op-2", "115.00")),
			then: then{typ: domain.EventWinCredited, stream: wallet, version: 2, amount: "25.00", after: "115.00",
				postings: []domain.Posting{post(house, "-25.00"), post(wallet, "25.00")},
				balances: bal(wallet, 11500, house, -1500)}},
		{name: "a bet's cancel the operator made",
			given: []decision{bet("b1", amt("10.00"), reported("op-1", "90.00"))},
			when:  rollback("rb1", "b1", reported("op-2", "100.00")),
			then: then{typ: domain.EventBetRolledBack, stream: wallet, version: 2, amount: "10.00", after: "100.00",
				postings: []domain.Posting{post(house, "-10.00"), post(wallet, "10.00")},
				balances: bal(wallet, 10000, house, 0)}},
		{name: "the rules of money still hold: a win on an unknown bet",
			when: win("w1", amt("25.00"), "b9", reported("op-2", "115.00")),
			then: then{err: domain.ErrTransactionUnknown, balances: bal(wallet, 0)}},
		{name: "the rules of money still hold: a reused id",
			given: []decision{bet("b1", amt("10.00"), reported("op-1", "90.00"))},
			when:  win("b1", amt("25.00"), "", reported("op-2", "115.00")),
			then:  then{err: domain.ErrDuplicateTransaction, balances: bal(wallet, 9000)}},
		{name: "a negative balance from the operator is refused",
			when: bet("b1", amt("10.00"), reported("op-1", "-1.00")),
			then: then{err: domain.ErrInvalidAmount, balances: bal(wallet, 0)}},
		{name: "an operator id that is no id is refused",
			when: bet("b1", amt("10.00"), reported("op 1\n", "1.00")),
			then: then{err: domain.ErrInvalidArgument, balances: bal(wallet, 0)}},
	})
}

func TestSeamlessEventCarriesTheOperatorsID(t *testing.T) {
	h := given(t)
	_, e, err := h.when(bet("b1", amt("10.00"), reported("op-1", "90.00")))
	if err != nil {
		t.Fatal(err)
	}
	if e.Data.OperatorTxID != "op-1" || e.Data.BalanceAfter != "90.00" {
		t.Fatalf("operator_tx_id %q, balance_after %q; want op-1, 90.00", e.Data.OperatorTxID, e.Data.BalanceAfter)
	}
	body, err := domain.EncodeBody(e)
	if err != nil {
		t.Fatal(err)
	}
	back, err := domain.DecodeBody(body)
	if err != nil || back.Data.OperatorTxID != "op-1" {
		t.Fatalf("decoded operator_tx_id %q, err %v", back.Data.OperatorTxID, err)
	}
}
