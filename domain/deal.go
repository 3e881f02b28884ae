package domain

import (
	"cmp"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"
)

// Commission deals as data (docs/finance.md, docs/read-models.md): a deal
// is what a provider is owed on a client's positive GGR. It is kept per
// provider (the default for every client) or per client × provider, and,
// optionally, for one currency only. Each change is a new version with its
// own valid_from (a UTC day); versions are never changed in place.
//
// Kinds: flat (one rate) and tiered (bands of the month's GGR, each with a
// rate, applied marginally — each band's part at its rate — or on the
// whole — the rate of the band the month's GGR reaches on all of it).
// Carry-forward: a month's negative GGR is carried into the next months'
// commission base until used up. Rates are exact decimals from 0 to 1.

// DealKind is a deal's kind.
type DealKind string

// The deal kinds.
const (
	DealFlat   DealKind = "flat"
	DealTiered DealKind = "tiered"
)

// TierMode is how a tiered deal's bands apply.
type TierMode string

// The tier modes.
const (
	TierMarginal TierMode = "marginal" // each band's part of the GGR at its rate
	TierWhole    TierMode = "whole"    // the reached band's rate on all of the GGR
)

// Bounds of a deal.
const (
	MaxCommissionRateDecimals = 6 // 0.000001 = 0.0001 %
	MaxDealBands              = 20
	MaxDealNoteLength         = 200
)

// ErrInvalidCommissionRate is returned for a rate that is not a plain
// decimal from 0 to 1 with at most MaxCommissionRateDecimals decimals.
var ErrInvalidCommissionRate = errors.New("invalid commission rate")

// ParseCommissionRate reads a commission rate: a plain decimal from 0 to 1
// ("0.15", "0", "1") with at most MaxCommissionRateDecimals decimals.
func ParseCommissionRate(s string) (*big.Rat, error) {
	whole, frac, hasPoint := strings.Cut(s, ".")
	if len(s) > 32 || !allDigits(whole) || (hasPoint && !allDigits(frac)) {
		return nil, fmt.Errorf("%w: %q is not a plain decimal (digits, one point between digits)", ErrInvalidCommissionRate, clip(s))
	}
	if len(frac) > MaxCommissionRateDecimals {
		return nil, fmt.Errorf("%w: %q has more than %d decimals", ErrInvalidCommissionRate, clip(s), MaxCommissionRateDecimals)
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok || r.Cmp(big.NewRat(1, 1)) > 0 {
		return nil, fmt.Errorf("%w: %q must be from 0 to 1 (0.15 is 15 %%)", ErrInvalidCommissionRate, clip(s))
	}
	return r, nil
}

// DealBand is a band of a tiered deal: the month's GGR from From (included)
// up to To (excluded; HasTo false for the last, open band), in minor units
// of the deal's currency, at Rate.
type DealBand struct {
	From, To int64
	HasTo    bool
	Rate     string // shortest decimal text
	rate     *big.Rat
}

// Deal is the terms of one deal version.
type Deal struct {
	Provider string
	ClientID string // "": the provider's default for every client
	Currency string // "": every currency (a tiered deal names one)
	// ValidFrom is the UTC day the version applies from, until a later
	// version's.
	ValidFrom    time.Time
	Kind         DealKind
	Rate         string // flat: the rate (shortest decimal text)
	Mode         TierMode
	Bands        []DealBand
	CarryForward bool
	rate         *big.Rat
	scale        int
}

// DealVersion is a stored deal version with its history: who created it,
// when, and whether it was allowed to start before the day it was made.
type DealVersion struct {
	ID        int64
	Deal      Deal
	Actor     string
	CreatedAt time.Time
	Backdated bool
	Note      string
}

// BandSpec is a band as a request gives it: amounts in major units of the
// deal's currency ("10000.00"), To empty for the last band.
type BandSpec struct {
	From, To, Rate string
}

// DealSpec is a deal version as a request (or the store) gives it.
type DealSpec struct {
	Provider, ClientID, Currency string
	ValidFrom                    string // YYYY-MM-DD
	Kind                         string
	Rate                         string
	Mode                         string
	Bands                        []BandSpec
	CarryForward                 bool
}

// NewDeal checks a deal version's terms. Errors are FieldErrors naming
// provider, client_id, currency, valid_from, kind, rate, mode or
// bands[i].from/to/rate.
func NewDeal(s DealSpec) (Deal, error) {
	var d Deal
	if err := ValidateID("provider", s.Provider); err != nil {
		return d, &FieldError{Field: "provider", Message: err.Error()}
	}
	if s.ClientID != "" {
		if err := ValidateID("client_id", s.ClientID); err != nil {
			return d, &FieldError{Field: "client_id", Message: err.Error()}
		}
	}
	var cur Currency
	if s.Currency != "" {
		c, err := ParseCurrency(s.Currency)
		if err != nil {
			return d, &FieldError{Field: "currency", Message: fmt.Sprintf("currency %q is not configured", clip(s.Currency))}
		}
		cur = c
	}
	day, err := time.Parse(time.DateOnly, s.ValidFrom)
	if err != nil || day.Year() < 1 {
		return d, &FieldError{Field: "valid_from", Message: fmt.Sprintf("valid_from %q must be a UTC date such as 2026-12-01", clip(s.ValidFrom))}
	}
	d = Deal{Provider: s.Provider, ClientID: s.ClientID, Currency: s.Currency, ValidFrom: day, CarryForward: s.CarryForward}
	switch DealKind(s.Kind) {
	case DealFlat:
		if s.Mode != "" || len(s.Bands) > 0 {
			return Deal{}, &FieldError{Field: "kind", Message: "a flat deal has a rate, not a mode or bands"}
		}
		r, err := ParseCommissionRate(s.Rate)
		if err != nil {
			return Deal{}, &FieldError{Field: "rate", Message: err.Error()}
		}
		d.Kind, d.rate, d.Rate = DealFlat, r, FormatRate(r)
	case DealTiered:
		if s.Rate != "" {
			return Deal{}, &FieldError{Field: "rate", Message: "a tiered deal has a rate per band, not one rate"}
		}
		if cur.IsZero() {
			return Deal{}, &FieldError{Field: "currency", Message: "a tiered deal names the currency its bands are in"}
		}
		switch TierMode(s.Mode) {
		case TierMarginal, TierWhole:
		default:
			return Deal{}, &FieldError{Field: "mode", Message: fmt.Sprintf("mode %q must be marginal or whole", clip(s.Mode))}
		}
		bands, err := newBands(s.Bands, cur)
		if err != nil {
			return Deal{}, err
		}
		d.Kind, d.Mode, d.Bands, d.scale = DealTiered, TierMode(s.Mode), bands, cur.Exponent()
	default:
		return Deal{}, &FieldError{Field: "kind", Message: fmt.Sprintf("kind %q must be flat or tiered", clip(s.Kind))}
	}
	return d, nil
}

// newBands checks bands: at least one, the first from 0, each from the
// previous one's to (no gap, no overlap), each to above its from, only
// the last one open.
func newBands(specs []BandSpec, cur Currency) ([]DealBand, error) {
	if len(specs) == 0 || len(specs) > MaxDealBands {
		return nil, &FieldError{Field: "bands", Message: fmt.Sprintf("a tiered deal has from 1 to %d bands", MaxDealBands)}
	}
	out := make([]DealBand, len(specs))
	for i, b := range specs {
		field := func(f string) string { return fmt.Sprintf("bands[%d].%s", i, f) }
		from, err := ParseMoney(b.From, cur)
		if err != nil || from.IsNegative() {
			return nil, &FieldError{Field: field("from"), Message: fmt.Sprintf("bands[%d].from %q must be an amount of at least 0 in %s", i, clip(b.From), cur.Code())}
		}
		switch {
		case i == 0 && !from.IsZero():
			return nil, &FieldError{Field: field("from"), Message: "the first band starts from 0"}
		case i > 0 && from.Minor() != out[i-1].To:
			return nil, &FieldError{Field: field("from"), Message: fmt.Sprintf("bands[%d] must start where bands[%d] ends (%s): no gap, no overlap",
				i, i-1, FormatMinor(out[i-1].To, cur.Exponent()))}
		}
		last := i == len(specs)-1
		band := DealBand{From: from.Minor()}
		switch {
		case last && b.To != "":
			return nil, &FieldError{Field: field("to"), Message: "the last band is open: it has no to"}
		case !last:
			to, err := ParseMoney(b.To, cur)
			if err != nil || to.Minor() <= from.Minor() {
				return nil, &FieldError{Field: field("to"), Message: fmt.Sprintf("bands[%d].to %q must be an amount in %s above its from", i, clip(b.To), cur.Code())}
			}
			band.To, band.HasTo = to.Minor(), true
		}
		r, err := ParseCommissionRate(b.Rate)
		if err != nil {
			return nil, &FieldError{Field: field("rate"), Message: fmt.Sprintf("bands[%d].rate: %s", i, err)}
		}
		band.rate, band.Rate = r, FormatRate(r)
		out[i] = band
	}
	return out, nil
}

// Spec is the deal as a DealSpec (amounts in major units): NewDeal(d.Spec())
// gives d back. The store keeps deals this way.
func (d Deal) Spec() DealSpec {
	s := DealSpec{Provider: d.Provider, ClientID: d.ClientID, Currency: d.Currency, ValidFrom: d.ValidFrom.Format(time.DateOnly),
		Kind: string(d.Kind), Rate: d.Rate, Mode: string(d.Mode), CarryForward: d.CarryForward}
	for _, b := range d.Bands {
		bs := BandSpec{From: FormatMinor(b.From, d.scale), Rate: b.Rate}
		if b.HasTo {
			bs.To = FormatMinor(b.To, d.scale)
		}
		s.Bands = append(s.Bands, bs)
	}
	return s
}

// Monthly reports whether the deal's commission is worked out per calendar
// month (tiered or carry-forward) rather than per day (flat).
func (d Deal) Monthly() bool { return d.Kind == DealTiered || d.CarryForward }

// FlatRate is a flat deal's rate (nil for a tiered deal).
func (d Deal) FlatRate() *big.Rat {
	if d.Kind != DealFlat {
		return nil
	}
	return new(big.Rat).Set(d.rate)
}

// CommissionOn is the commission, exact in minor units, on base minor units
// of commission base (negative counts as 0), and the rate shown for it: a
// flat deal's rate; a tiered deal's rate of the band base reaches (a base
// on a band's to is in the next band).
func (d Deal) CommissionOn(base int64) (*big.Rat, string) {
	if base < 0 {
		base = 0
	}
	b := new(big.Rat).SetInt64(base)
	if d.Kind == DealFlat {
		return b.Mul(b, d.rate), d.Rate
	}
	reached := 0
	for i, band := range d.Bands {
		if base >= band.From {
			reached = i
		}
	}
	if d.Mode == TierWhole {
		return b.Mul(b, d.Bands[reached].rate), d.Bands[reached].Rate
	}
	owed := new(big.Rat)
	for _, band := range d.Bands[:reached+1] {
		top := base
		if band.HasTo && band.To < top {
			top = band.To
		}
		part := new(big.Rat).SetInt64(top - band.From)
		owed.Add(owed, part.Mul(part, band.rate))
	}
	return owed, d.Bands[reached].Rate
}

// CarryForward is one month of a carry-forward deal: the commission base
// is the month's GGR plus the loss carried in (carried ≤ 0), never below 0;
// a negative sum is carried out to the next month, else nothing is.
func CarryForward(ggr, carried int64) (base, carriedOut int64) {
	sum := ggr + carried
	if sum < 0 {
		return 0, sum
	}
	return sum, 0
}

// CurrentDeals are, of versions, the ones in effect on day and the ones
// scheduled after it, per deal (provider, client, currency): of versions
// with the same valid_from the last created (the highest id) wins, and a
// version in effect is the one with the latest valid_from at or before
// day. Ordered by provider, client, currency, valid_from.
func CurrentDeals(versions []DealVersion, day time.Time) []DealVersion {
	type key struct {
		provider, client, currency string
	}
	latest := map[key]map[time.Time]DealVersion{}
	for _, v := range versions {
		k := key{v.Deal.Provider, v.Deal.ClientID, v.Deal.Currency}
		if latest[k] == nil {
			latest[k] = map[time.Time]DealVersion{}
		}
		if old, ok := latest[k][v.Deal.ValidFrom]; !ok || v.ID > old.ID {
			latest[k][v.Deal.ValidFrom] = v
		}
	}
	var out []DealVersion
	for _, byDay := range latest {
		var current *DealVersion
		for from, v := range byDay {
			if from.After(day) {
				out = append(out, v)
			} else if current == nil || from.After(current.Deal.ValidFrom) {
				v := v
				current = &v
			}
		}
		if current != nil {
			out = append(out, *current)
		}
	}
	sortDeals(out)
	return out
}

func sortDeals(vs []DealVersion) {
	slices.SortFunc(vs, func(a, b DealVersion) int {
		return cmp.Or(strings.Compare(a.Deal.Provider, b.Deal.Provider), strings.Compare(a.Deal.ClientID, b.Deal.ClientID),
			strings.Compare(a.Deal.Currency, b.Deal.Currency), a.Deal.ValidFrom.Compare(b.Deal.ValidFrom))
	})
}
