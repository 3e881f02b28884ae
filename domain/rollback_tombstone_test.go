package domain_test

import (
	"errors"
	"testing"
	"time"

	"github.com/pitboss/pitboss/domain"
)

// Given a rollback of "rb-late" recorded before rb-late arrived (a
// tombstone), when rb-late arrives as a rollback of a standing bet, then it
// is refused ROLLED_BACK_BEFORE_ARRIVAL and the bet is not refunded: the
// provider was told rb-late would not count. Found by modeltest.
func TestLateRollbackAfterItsOwnRollbackIsRefused(t *testing.T) {
	eur, err := domain.ParseCurrency("EUR")
	if err != nil {
		t.Fatal(err)
	}
	g := domain.GameTx{Client: "c1", Player: "p1", Provider: "prov", ExternalTxID: "rb-late", Currency: eur}
	w := domain.PlayerWallet("c1", "p1", eur)
	v := domain.NewView()
	v.LoadAccount(w, domain.AccountState{Balance: 500, Version: 3})
	v.LoadRecord(domain.TxRecord{Key: domain.GameTxKey("c1", "prov", "bet-1"), Kind: domain.TxBet, Account: w,
		PlayerID: "p1", Currency: "EUR", Amount: 100})
	v.LoadRecord(domain.TxRecord{Key: domain.GameTxKey("c1", "prov", "rb-late"), Kind: domain.TxTombstone, Account: w,
		PlayerID: "p1", Currency: "EUR"})
	env := domain.Env{Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), EventID: "ev-1"}

	_, err = domain.DecideRollback(v, g, "bet-1", env)

	if !errors.Is(err, domain.ErrRolledBackEarlier) {
		t.Fatalf("err = %v, want ErrRolledBackEarlier", err)
	}
	if rec, _ := v.Record(domain.GameTxKey("c1", "prov", "bet-1")); rec.RolledBack {
		t.Fatal("the bet was marked rolled back")
	}
}
