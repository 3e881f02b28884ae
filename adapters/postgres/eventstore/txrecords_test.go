package eventstore_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/pitboss/pitboss/adapters/postgres/eventstore"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/adapters/postgres/storetest"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/wallet"
)

var _ wallet.TxRecordsBatch = (*eventstore.Accounts)(nil)

// TestTxRecordsBatch: the records of several keys read in one statement
// are the ones read a key at a time; a key without one is left out.
func TestTxRecordsBatch(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDatabase(t)
	ctx := context.Background()
	accounts := eventstore.NewAccounts(pool)
	_, h := storetest.StartLedger(t, pool, eventstore.LedgerConfig{})
	client, player := storetest.UID("c"), storetest.UID("p")
	var keys []string
	for _, id := range []string{storetest.UID("dep"), storetest.UID("dep")} {
		if _, err := h.Deposit(ctx, domain.ClientTx{Client: client, Player: player, ExternalTxID: id, Currency: eur},
			domain.FromMinor(1000, eur)); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, domain.ClientTxKey(client, id))
	}
	unknown := domain.ClientTxKey(client, "never")
	got, err := accounts.TxRecords(ctx, append(keys, unknown))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d records, want the 2 booked (%v)", len(got), got)
	}
	for _, k := range keys {
		one, found, err := accounts.TxRecord(ctx, k)
		if err != nil || !found {
			t.Fatalf("TxRecord(%s): %v, found %v", k, err, found)
		}
		if !reflect.DeepEqual(got[k], one) {
			t.Errorf("%s: batched %+v, single %+v", k, got[k], one)
		}
	}
	if none, err := accounts.TxRecords(ctx, nil); err != nil || len(none) != 0 {
		t.Errorf("no keys: %v %v, want none", none, err)
	}
}
