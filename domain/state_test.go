package domain_test

import (
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/pitboss/pitboss/domain"
)

// change builds an event by hand, the way a buggy decision could.
func change(stream domain.AccountID, currency string, postings ...domain.Posting) domain.Change {
	return domain.Change{Event: domain.Event{ID: "ev-hand", Type: domain.EventAdjusted, StreamID: stream,
		Data: domain.EventData{ClientID: client, Currency: currency, Postings: postings}}}
}

// viewState is everything a View exposes, for before/after comparisons.
type viewState struct {
	Accounts map[domain.AccountID]domain.AccountState
	Records  map[string]domain.TxRecord
	Dirty    map[domain.AccountID]domain.AccountState
	DirtyRec []domain.TxRecord
	IsNew    []bool
}

var watchedAccounts = []domain.AccountID{wallet, strangerWallet, house, external, clientWallet,
	domain.PlayerWallet(client, player, usd)}

func snapshot(v *domain.View, keys ...string) viewState {
	s := viewState{Accounts: map[domain.AccountID]domain.AccountState{}, Records: map[string]domain.TxRecord{}}
	for _, id := range watchedAccounts {
		s.Accounts[id] = v.Account(id)
	}
	for _, k := range keys {
		if r, ok := v.Record(k); ok {
			s.Records[k] = r
		}
	}
	s.Dirty = v.DirtyAccounts()
	s.DirtyRec, s.IsNew = v.DirtyRecords()
	return s
}

func TestViewApplyRefusesAndChangesNothing(t *testing.T) {
	const oldKey, newKey = "client|acme|old", "client|acme|new"
	records := []domain.TxRecord{
		{Key: oldKey, Kind: domain.TxDeposit, Amount: 999},
		{Key: newKey, Kind: domain.TxAdjustment, Amount: 1},
	}
	tests := []struct {
		name    string
		load    func(v *domain.View)
		change  domain.Change
		wantErr error
	}{
		{name: "postings do not sum to zero",
			change:  change(wallet, "EUR", post(wallet, "-5.00"), post(house, "4.99")),
			wantErr: domain.ErrInvalidAmount},
		{name: "a single posting",
			change:  change(house, "EUR", post(house, "1.00")),
			wantErr: domain.ErrInvalidAmount},
		{name: "player wallet below zero although the decision forgot to check",
			change:  change(wallet, "EUR", post(wallet, "-5.01"), post(house, "5.01")),
			wantErr: domain.ErrInsufficientFunds},
		{name: "client wallet below zero",
			change:  change(clientWallet, "EUR", post(clientWallet, "-1.01"), post(external, "1.01")),
			wantErr: domain.ErrInsufficientFunds},
		{name: "one wallet debited twice in one event",
			change:  change(wallet, "EUR", post(wallet, "-3.00"), post(wallet, "-3.00"), post(house, "6.00")),
			wantErr: domain.ErrInsufficientFunds},
		{name: "posting on an account of another currency",
			change:  change(wallet, "EUR", post(domain.PlayerWallet(client, player, usd), "-1.00"), post(house, "1.00")),
			wantErr: domain.ErrCurrencyMismatch},
		{name: "unknown event currency",
			change:  change(wallet, "XXX", post(domain.AccountID("house:acme:pragmatic:XXX"), "1.00")),
			wantErr: domain.ErrUnknownCurrency},
		{name: "event without currency",
			change:  change(wallet, ""),
			wantErr: domain.ErrUnknownCurrency},
		{name: "posting amount is not a number",
			change:  change(wallet, "EUR", post(house, "ten"), post(external, "-10")),
			wantErr: domain.ErrInvalidAmount},
		{name: "posting amount in exponent notation",
			change:  change(wallet, "EUR", post(house, "1e2"), post(external, "-100")),
			wantErr: domain.ErrInvalidAmount},
		{name: "posting amount too precise",
			change:  change(wallet, "EUR", post(house, "0.001"), post(external, "-0.001")),
			wantErr: domain.ErrTooPrecise},
		{name: "posting that rounds to balance is still too precise",
			change:  change(wallet, "EUR", post(house, "-1.00"), post(external, "1.0000000000000000001")),
			wantErr: domain.ErrTooPrecise},
		{name: "account balance overflows",
			load:    func(v *domain.View) { v.LoadAccount(house, domain.AccountState{Balance: math.MaxInt64, Version: 3}) },
			change:  change(house, "EUR", post(house, "0.01"), post(external, "-0.01")),
			wantErr: domain.ErrAmountOverflow},
		{name: "sum of postings overflows",
			change: change(house, "EUR", post(house, "92233720368547758.07"), post(external, "0.01"),
				post(external, "-92233720368547758.07"), post(house, "-0.01")),
			wantErr: domain.ErrAmountOverflow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := given(t, fund("5.00"), deposit("float", amt("1.00")))
			h.v.LoadRecord(records[0])
			if tt.load != nil {
				tt.load(h.v)
			}
			tt.change.Records = records
			before := snapshot(h.v, oldKey, newKey)

			_, err := h.v.Apply(tt.change)

			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if after := snapshot(h.v, oldKey, newKey); !reflect.DeepEqual(before, after) {
				t.Errorf("a refused change altered the view:\nbefore %+v\nafter  %+v", before, after)
			}
		})
	}
}

func TestViewApplyAccepts(t *testing.T) {
	tests := []struct {
		name     string
		change   domain.Change
		balances map[domain.AccountID]int64
	}{
		{name: "wallet down to exactly zero",
			change:   change(wallet, "EUR", post(wallet, "-5.00"), post(house, "5.00")),
			balances: map[domain.AccountID]int64{wallet: 0, house: 500}},
		{name: "house goes below zero",
			change:   change(wallet, "EUR", post(house, "-7.00"), post(wallet, "7.00")),
			balances: map[domain.AccountID]int64{wallet: 1200, house: -700}},
		{name: "external goes below zero",
			change:   change(clientWallet, "EUR", post(external, "-1000.00"), post(clientWallet, "1000.00")),
			balances: map[domain.AccountID]int64{clientWallet: 100_000, external: -100_500}},
		{name: "one wallet on both sides",
			change:   change(wallet, "EUR", post(wallet, "-5.00"), post(wallet, "2.00"), post(house, "3.00")),
			balances: map[domain.AccountID]int64{wallet: 200, house: 300}},
		{name: "no postings",
			change:   change(wallet, "EUR"),
			balances: map[domain.AccountID]int64{wallet: 500, house: 0, external: -500}},
		{name: "zero postings",
			change:   change(wallet, "EUR", post(wallet, "0.00"), post(house, "-0")),
			balances: map[domain.AccountID]int64{wallet: 500, house: 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := given(t, fund("5.00"))
			tt.change.Records = []domain.TxRecord{{Key: "client|acme|x", Kind: domain.TxAdjustment}}

			e, err := h.v.Apply(tt.change)

			if err != nil {
				t.Fatal(err)
			}
			if e.Version != h.v.Account(e.StreamID).Version {
				t.Errorf("event version %d, stream version %d", e.Version, h.v.Account(e.StreamID).Version)
			}
			for id, b := range tt.balances {
				if got := h.balance(id); got != b {
					t.Errorf("balance of %s = %d, want %d", id, got, b)
				}
			}
			if r, ok := h.v.Record("client|acme|x"); !ok || r.Kind != domain.TxAdjustment {
				t.Errorf("record = %+v, %v; want the change's record", r, ok)
			}
		})
	}
}

func TestViewVersionsIncrementPerStreamOnly(t *testing.T) {
	v := domain.NewView()
	v.LoadAccount(strangerWallet, domain.AccountState{Balance: 100, Version: 7})
	steps := []struct {
		change      domain.Change
		wantVersion int64
	}{
		{change: change(wallet, "EUR", post(house, "-1.00"), post(wallet, "1.00")), wantVersion: 1},
		{change: change(wallet, "EUR", post(house, "-1.00"), post(wallet, "1.00")), wantVersion: 2},
		{change: change(strangerWallet, "EUR", post(house, "-1.00"), post(strangerWallet, "1.00")), wantVersion: 8},
		// a posting on another wallet does not move that wallet's stream
		{change: change(wallet, "EUR", post(strangerWallet, "-1.00"), post(wallet, "1.00")), wantVersion: 3},
		// a version the decision put in the event is ignored
		{change: func() domain.Change {
			c := change(house, "EUR")
			c.Event.Version = 42
			return c
		}(), wantVersion: 1},
	}
	for i, s := range steps {
		e, err := v.Apply(s.change)
		if err != nil {
			t.Fatalf("step %d: %v", i+1, err)
		}
		if e.Version != s.wantVersion {
			t.Errorf("step %d: version = %d, want %d", i+1, e.Version, s.wantVersion)
		}
	}
	want := map[domain.AccountID]domain.AccountState{
		wallet:         {Balance: 300, Version: 3},
		strangerWallet: {Balance: 100, Version: 8},
		house:          {Balance: -300, Version: 1},
		external:       {},
	}
	for id, s := range want {
		if got := v.Account(id); got != s {
			t.Errorf("%s = %+v, want %+v", id, got, s)
		}
	}
}

func TestViewDirtyState(t *testing.T) {
	v := domain.NewView()
	v.LoadAccount(wallet, domain.AccountState{Balance: 500, Version: 2})
	v.LoadRecord(domain.TxRecord{Key: "k0", Kind: domain.TxBet, Amount: 1})
	if d := v.DirtyAccounts(); len(d) != 0 {
		t.Fatalf("loaded state is dirty: %v", d)
	}
	if r, _ := v.DirtyRecords(); len(r) != 0 {
		t.Fatalf("loaded records are dirty: %v", r)
	}

	c1 := change(wallet, "EUR", post(wallet, "-1.00"), post(house, "1.00"))
	c1.Records = []domain.TxRecord{{Key: "k1", Kind: domain.TxBet}, {Key: "k0", Kind: domain.TxBet, RolledBack: true}}
	c2 := change(strangerWallet, "EUR")
	c2.Records = []domain.TxRecord{{Key: "k2", Kind: domain.TxWin}, {Key: "k0", Kind: domain.TxBet, Amount: 2}}
	for _, c := range []domain.Change{c1, c2} {
		if _, err := v.Apply(c); err != nil {
			t.Fatal(err)
		}
	}

	wantAcc := map[domain.AccountID]domain.AccountState{
		wallet: {Balance: 400, Version: 3}, house: {Balance: 100}, strangerWallet: {Version: 1},
	}
	if got := v.DirtyAccounts(); !reflect.DeepEqual(got, wantAcc) {
		t.Errorf("DirtyAccounts = %v, want %v", got, wantAcc)
	}
	recs, isNew := v.DirtyRecords()
	var keys []string
	for _, r := range recs {
		keys = append(keys, r.Key)
	}
	if !reflect.DeepEqual(keys, []string{"k1", "k0", "k2"}) || !reflect.DeepEqual(isNew, []bool{true, false, true}) {
		t.Errorf("DirtyRecords = %v %v, want [k1 k0 k2] [true false true]", keys, isNew)
	}
	for key, want := range map[string]bool{"k1": true, "k2": true, "k0": false, "nope": false} {
		if got := v.Created(key); got != want {
			t.Errorf("Created(%q) = %v, want %v", key, got, want)
		}
	}
	if r, _ := v.Record("k0"); r.Amount != 2 || r.RolledBack {
		t.Errorf("k0 = %+v, want the last write", r)
	}
	if s := v.Account("player:acme:nobody:EUR"); s != (domain.AccountState{}) {
		t.Errorf("unknown account = %+v, want empty", s)
	}
	if _, ok := v.Record("nope"); ok {
		t.Error("unknown record found")
	}
}

func TestRecordKeysDoNotCollide(t *testing.T) {
	keys := []string{
		domain.GameTxKey("acme", "pragmatic", "tx-1"),
		domain.GameTxKey("acme", "evolution", "tx-1"),
		domain.GameTxKey("beta", "pragmatic", "tx-1"),
		domain.ClientTxKey("acme", "tx-1"),
		domain.RoundKey("acme", "pragmatic", "tx-1"),
		domain.RoundCloseKey("acme", "pragmatic", "tx-1"),
	}
	seen := map[string]bool{}
	for _, k := range keys {
		if seen[k] {
			t.Errorf("key %q used twice", k)
		}
		seen[k] = true
	}
}
