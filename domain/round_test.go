package domain_test

import (
	"errors"
	"testing"
	"time"

	"github.com/pitboss/pitboss/domain"
)

// Given a round in some state, when the ledger is asked to close it as
// stale, then it closes it with a wallet.round_closed.v1 that moves no
// money, or refuses with the reason.
func TestDecideRoundClose(t *testing.T) {
	eur := domain.MustCurrency("EUR")
	w := domain.PlayerWallet("c1", "p1", eur)
	opened := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	limit := 48 * time.Hour
	round := func(edit func(*domain.TxRecord)) *domain.TxRecord {
		r := domain.TxRecord{Key: domain.RoundKey("c1", "caleta", "r1"), Kind: domain.TxRound, Account: w,
			PlayerID: "p1", Currency: "EUR", RoundID: "r1", OpenBets: 1, CreatedAt: opened}
		if edit != nil {
			edit(&r)
		}
		return &r
	}
	tests := []struct {
		name  string
		round *domain.TxRecord // nil: none
		close domain.RoundClose
		now   time.Time
		want  error
	}{
		{name: "open past the limit is closed", round: round(nil), now: opened.Add(limit)},
		{name: "open with a win that did not close it is closed", round: round(func(r *domain.TxRecord) { r.Wins = 1 }),
			now: opened.Add(limit + time.Minute)},
		{name: "recorded before rounds kept their opening time", round: round(func(r *domain.TxRecord) { r.CreatedAt = time.Time{} }),
			now: opened},
		{name: "open one second short of the limit", round: round(nil), now: opened.Add(limit - time.Second),
			want: domain.ErrRoundNotStale},
		{name: "closed by a call", round: round(func(r *domain.TxRecord) { r.Closed = true }), now: opened.Add(72 * time.Hour),
			want: domain.ErrRoundNotOpen},
		{name: "every bet rolled back", round: round(func(r *domain.TxRecord) { r.OpenBets, r.RolledBets = 0, 1 }),
			now: opened.Add(72 * time.Hour), want: domain.ErrRoundNotOpen},
		{name: "unknown round", now: opened.Add(72 * time.Hour), want: domain.ErrTransactionUnknown},
		{name: "no limit", round: round(nil), close: domain.RoundClose{After: -1}, now: opened.Add(72 * time.Hour),
			want: domain.ErrInvalidArgument},
		{name: "bad round id", round: round(nil), close: domain.RoundClose{Round: "r 1"}, now: opened.Add(72 * time.Hour),
			want: domain.ErrInvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := domain.NewView()
			v.LoadAccount(w, domain.AccountState{Balance: 900, Version: 2})
			if tt.round != nil {
				v.LoadRecord(*tt.round)
			}
			c := domain.RoundClose{Client: "c1", Provider: "caleta", Round: "r1", After: limit}
			if tt.close.After != 0 {
				c.After = tt.close.After
			}
			if tt.close.Round != "" {
				c.Round = tt.close.Round
			}
			ch, err := domain.DecideRoundClose(v, c, domain.Env{Now: tt.now, EventID: "ev-close"})
			if tt.want != nil {
				if !errors.Is(err, tt.want) {
					t.Fatalf("err = %v, want %v", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			e, err := v.Apply(ch)
			if err != nil {
				t.Fatalf("apply: %v", err)
			}
			d := e.Data
			if e.Type != domain.EventRoundClosed || e.StreamID != w || e.Version != 3 || len(d.Postings) != 0 ||
				d.Amount != "0.00" || d.BalanceAfter != "9.00" || !d.RoundClosed || d.RoundID != "r1" || d.PlayerID != "p1" {
				t.Fatalf("event = %+v", e)
			}
			if got := v.Account(w).Balance; got != 900 {
				t.Fatalf("balance = %d, want 900 (nothing moves)", got)
			}
			if own := ch.Records[0]; own.Key != domain.RoundCloseKey("c1", "caleta", "r1") || own.Kind != domain.TxRoundClose {
				t.Fatalf("own record = %+v", own)
			}
			r, _ := v.Record(domain.RoundKey("c1", "caleta", "r1"))
			if !r.Closed {
				t.Fatal("the round is not closed")
			}
			if _, err := domain.DecideRoundClose(v, c, domain.Env{Now: tt.now, EventID: "ev-again"}); !errors.Is(err, domain.ErrRoundNotOpen) {
				t.Fatalf("second close: err = %v, want ErrRoundNotOpen", err)
			}
		})
	}
}

// A round's record keeps when it opened; a win on a round closed by the
// ledger is still paid.
func TestRoundOpensAtItsFirstCallAndAWinAfterTheCloseIsPaid(t *testing.T) {
	eur := domain.MustCurrency("EUR")
	w := domain.PlayerWallet("c1", "p1", eur)
	v := domain.NewView()
	v.LoadAccount(w, domain.AccountState{Balance: 1000, Version: 1})
	g := domain.GameTx{Client: "c1", Player: "p1", Provider: "caleta", Round: "r1", ExternalTxID: "b1", Currency: eur}
	opened := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ch, err := domain.DecideBet(v, g, domain.FromMinor(100, eur), domain.Env{Now: opened, EventID: "e1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Apply(ch); err != nil {
		t.Fatal(err)
	}
	if r, _ := v.Record(domain.RoundKey("c1", "caleta", "r1")); !r.CreatedAt.Equal(opened) {
		t.Fatalf("round opened at %s, want %s", r.CreatedAt, opened)
	}
	later := opened.Add(49 * time.Hour)
	ch, err = domain.DecideRoundClose(v, domain.RoundClose{Client: "c1", Provider: "caleta", Round: "r1", After: 48 * time.Hour},
		domain.Env{Now: later, EventID: "e2"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Apply(ch); err != nil {
		t.Fatal(err)
	}
	g.ExternalTxID = "w1"
	ch, err = domain.DecideWin(v, g, domain.FromMinor(250, eur), "b1", domain.Env{Now: later, EventID: "e3"})
	if err != nil {
		t.Fatalf("win after the close: %v", err)
	}
	if _, err := v.Apply(ch); err != nil {
		t.Fatal(err)
	}
	if got := v.Account(w).Balance; got != 1150 {
		t.Fatalf("balance = %d, want 1150", got)
	}
}
