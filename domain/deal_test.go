package domain_test

import (
	"errors"
	"math/big"
	"reflect"
	"testing"
	"time"

	"github.com/pitboss/pitboss/domain"
)

// tiered is a EUR tiered deal: 0–1,000.00 at 10 %, 1,000.00–5,000.00 at
// 20 %, above at 30 %.
func tiered(t *testing.T, mode string, carry bool) domain.Deal {
	t.Helper()
	d, err := domain.NewDeal(domain.DealSpec{Provider: "prov", Currency: "EUR", ValidFrom: "2026-10-01", Kind: "tiered",
		Mode: mode, CarryForward: carry, Bands: []domain.BandSpec{
			{From: "0", To: "1000", Rate: "0.10"}, {From: "1000.00", To: "5000", Rate: "0.2"}, {From: "5000", Rate: "0.30"}}})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestDealCommissionOn(t *testing.T) {
	flat, err := domain.NewDeal(domain.DealSpec{Provider: "prov", ValidFrom: "2026-10-01", Kind: "flat", Rate: "0.150"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		deal     domain.Deal
		base     int64 // EUR cents
		want     string
		wantRate string
	}{
		{"flat", flat, 12345, "1851.75", "0.15"},
		{"flat negative base owes nothing", flat, -500, "0", "0.15"},
		{"marginal in the first band", tiered(t, "marginal", false), 50000, "5000", "0.1"},
		{"marginal on the first band's edge is in the second", tiered(t, "marginal", false), 100000, "10000", "0.2"},
		{"marginal one cent into the second", tiered(t, "marginal", false), 100001, "10000.2", "0.2"},
		{"marginal across three bands", tiered(t, "marginal", false), 700000, "150000", "0.3"}, // 100 + 800 + 600 EUR
		{"whole in the first band", tiered(t, "whole", false), 99999, "9999.9", "0.1"},
		{"whole on the edge takes the next rate on all", tiered(t, "whole", false), 100000, "20000", "0.2"},
		{"whole across three bands", tiered(t, "whole", false), 700000, "210000", "0.3"},
		{"tiered zero", tiered(t, "whole", false), 0, "0", "0.1"},
		{"tiered negative owes nothing", tiered(t, "marginal", false), -100, "0", "0.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, rate := tc.deal.CommissionOn(tc.base)
			want, _ := new(big.Rat).SetString(tc.want)
			if got.Cmp(want) != 0 || rate != tc.wantRate {
				t.Errorf("CommissionOn(%d) = %s at %s, want %s at %s", tc.base, got.FloatString(4), rate, tc.want, tc.wantRate)
			}
		})
	}
}

func TestCarryForwardAcrossMonths(t *testing.T) {
	deal := tiered(t, "marginal", true)
	// A negative month, then months that use the loss up.
	months := []struct {
		ggr                 int64
		wantBase, wantCarry int64
		wantOwed            string
	}{
		{-30000, 0, -30000, "0"},     // -300 EUR: carried
		{20000, 0, -10000, "0"},      // +200: still -100 carried
		{-5000, 0, -15000, "0"},      // another loss adds up
		{115000, 100000, 0, "10000"}, // +1150 - 150 = 1000 EUR: second band's rate on the edge, 100 EUR
		{50000, 50000, 0, "5000"},    // nothing left to carry
	}
	var carried int64
	for i, m := range months {
		base, out := domain.CarryForward(m.ggr, carried)
		owed, _ := deal.CommissionOn(base)
		want, _ := new(big.Rat).SetString(m.wantOwed)
		if base != m.wantBase || out != m.wantCarry || owed.Cmp(want) != 0 {
			t.Errorf("month %d: base %d carry %d owed %s, want %d %d %s", i, base, out, owed.FloatString(2), m.wantBase, m.wantCarry, m.wantOwed)
		}
		carried = out
	}
}

func TestNewDealRefuses(t *testing.T) {
	band := func(from, to, rate string) domain.BandSpec { return domain.BandSpec{From: from, To: to, Rate: rate} }
	ok := domain.DealSpec{Provider: "prov", Currency: "EUR", ValidFrom: "2026-10-01", Kind: "tiered", Mode: "whole",
		Bands: []domain.BandSpec{band("0", "100", "0.1"), band("100", "", "0.2")}}
	with := func(f func(*domain.DealSpec)) domain.DealSpec {
		s := ok
		s.Bands = append([]domain.BandSpec(nil), ok.Bands...)
		f(&s)
		return s
	}
	if _, err := domain.NewDeal(ok); err != nil {
		t.Fatalf("good deal: %v", err)
	}
	for _, tc := range []struct {
		name  string
		spec  domain.DealSpec
		field string
	}{
		{"no provider", with(func(s *domain.DealSpec) { s.Provider = "" }), "provider"},
		{"bad client", with(func(s *domain.DealSpec) { s.ClientID = "a b" }), "client_id"},
		{"unknown currency", with(func(s *domain.DealSpec) { s.Currency = "XXX" }), "currency"},
		{"tiered without currency", with(func(s *domain.DealSpec) { s.Currency = "" }), "currency"},
		{"bad day", with(func(s *domain.DealSpec) { s.ValidFrom = "2026-10-01T00:00:00Z" }), "valid_from"},
		{"bad kind", with(func(s *domain.DealSpec) { s.Kind = "stepped" }), "kind"},
		{"bad mode", with(func(s *domain.DealSpec) { s.Mode = "" }), "mode"},
		{"tiered with a rate", with(func(s *domain.DealSpec) { s.Rate = "0.1" }), "rate"},
		{"no bands", with(func(s *domain.DealSpec) { s.Bands = nil }), "bands"},
		{"first band not from 0", with(func(s *domain.DealSpec) { s.Bands[0].From = "1" }), "bands[0].from"},
		{"gap", with(func(s *domain.DealSpec) { s.Bands[1].From = "101" }), "bands[1].from"},
		{"overlap", with(func(s *domain.DealSpec) { s.Bands[1].From = "99" }), "bands[1].from"},
		{"to not above from", with(func(s *domain.DealSpec) { s.Bands[0].To = "0" }), "bands[0].to"},
		{"too precise a bound", with(func(s *domain.DealSpec) { s.Bands[0].To = "100.001" }), "bands[0].to"},
		{"last band closed", with(func(s *domain.DealSpec) { s.Bands[1].To = "200" }), "bands[1].to"},
		{"band rate above 1", with(func(s *domain.DealSpec) { s.Bands[1].Rate = "1.01" }), "bands[1].rate"},
		{"band rate as float text", with(func(s *domain.DealSpec) { s.Bands[0].Rate = "1e-1" }), "bands[0].rate"},
		{"flat too precise", domain.DealSpec{Provider: "p", ValidFrom: "2026-10-01", Kind: "flat", Rate: "0.1234567"}, "rate"},
		{"flat negative", domain.DealSpec{Provider: "p", ValidFrom: "2026-10-01", Kind: "flat", Rate: "-0.1"}, "rate"},
		{"flat with bands", domain.DealSpec{Provider: "p", ValidFrom: "2026-10-01", Kind: "flat", Rate: "0.1", Bands: ok.Bands}, "kind"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := domain.NewDeal(tc.spec)
			var fe *domain.FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field || !errors.Is(err, domain.ErrInvalidArgument) {
				t.Fatalf("NewDeal = %v, want a FieldError on %s", err, tc.field)
			}
		})
	}
}

func TestDealSpecRoundTrips(t *testing.T) {
	d := tiered(t, "whole", true)
	back, err := domain.NewDeal(d.Spec())
	if err != nil || !reflect.DeepEqual(back.Spec(), d.Spec()) || d.Spec().Bands[1].From != "1000.00" {
		t.Fatalf("round trip: %v %+v", err, back.Spec())
	}
}

func TestCurrentDeals(t *testing.T) {
	day := func(s string) time.Time { d, _ := time.Parse(time.DateOnly, s); return d }
	v := func(id int64, client, from, rate string) domain.DealVersion {
		d, err := domain.NewDeal(domain.DealSpec{Provider: "prov", ClientID: client, ValidFrom: from, Kind: "flat", Rate: rate})
		if err != nil {
			t.Fatal(err)
		}
		return domain.DealVersion{ID: id, Deal: d}
	}
	versions := []domain.DealVersion{
		v(1, "", "2026-01-01", "0.1"), v(2, "", "2026-06-01", "0.12"), v(3, "", "2026-12-01", "0.15"),
		v(4, "", "2026-12-01", "0.14"), // same day, created later: supersedes 3
		v(5, "acme", "2026-03-01", "0.2"),
	}
	var got []int64
	for _, c := range domain.CurrentDeals(versions, day("2026-11-26")) {
		got = append(got, c.ID)
	}
	if want := []int64{2, 4, 5}; !reflect.DeepEqual(got, want) {
		t.Errorf("current and scheduled = %v, want %v", got, want)
	}
}

// FuzzParseCommissionRate: an accepted rate is from 0 to 1 and its
// shortest text reads back to it.
func FuzzParseCommissionRate(f *testing.F) {
	for _, s := range []string{"0", "1", "0.15", "0.000001", "1.000000", "1.0000001", "-0.1", "1e-1", ".5", "5.", "00.5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := domain.ParseCommissionRate(s)
		if err != nil {
			return
		}
		if r.Sign() < 0 || r.Cmp(big.NewRat(1, 1)) > 0 {
			t.Fatalf("%q accepted as %s", s, r.RatString())
		}
		back, err := domain.ParseCommissionRate(domain.FormatRate(r))
		if err != nil || back.Cmp(r) != 0 {
			t.Fatalf("%q: %s does not read back: %v", s, domain.FormatRate(r), err)
		}
	})
}
