package domain_test

import (
	"math"
	"testing"

	"github.com/pitboss/pitboss/domain"
)

func BenchmarkParseMoney(b *testing.B) {
	for _, bc := range []struct {
		name, in string
		cur      domain.Currency
	}{
		{name: "EUR", in: "1234.56", cur: eur},
		{name: "EUR trailing zeros", in: "1234.5600", cur: eur},
		{name: "BTC", in: "0.12345678", cur: btc},
		{name: "JPY", in: "1500000", cur: jpy},
		{name: "too precise", in: "1234.567", cur: eur},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = domain.ParseMoney(bc.in, bc.cur)
			}
		})
	}
}

func BenchmarkEncodeBodyChainHash(b *testing.B) {
	e := fullEvent()
	prev := domain.GenesisHash
	b.ReportAllocs()
	for b.Loop() {
		body, err := domain.EncodeBody(e)
		if err != nil {
			b.Fatal(err)
		}
		prev = domain.ChainHash(prev, body)
	}
}

func BenchmarkDecideBetApply(b *testing.B) {
	v := domain.NewView()
	v.LoadAccount(wallet, domain.AccountState{Balance: math.MaxInt64 / 2})
	g := game("b1", inRound("r1"))
	stake := amt("1.00")
	env := domain.Env{Now: t0, EventID: "ev-1"}
	b.ReportAllocs()
	for b.Loop() {
		ch, err := domain.DecideBet(v, g, stake, env)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := v.Apply(ch); err != nil {
			b.Fatal(err)
		}
	}
}
