package gateway

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/pitboss/pitboss/domain"
)

// FXRates stores exchange rates for the admin API (docs/reporting-currency.md).
type FXRates interface {
	// UpsertFXRates stores rates, replacing a pair's rate of the same day;
	// it returns the rows written (a rate given again unchanged is not).
	UpsertFXRates(ctx context.Context, rates []domain.FXRate) (int64, error)
	// ListFXRates is a page of rates by base, quote and day, and the total.
	ListFXRates(ctx context.Context, f FXRateFilter, page, perPage int) ([]domain.FXRate, int64, error)
}

// FXRateFilter selects rates; empty fields select all.
type FXRateFilter struct {
	Base, Quote string
	From, To    time.Time // days, both included; zero: unbounded
}

// MaxFXRatesPerCall bounds the rates of one call (JSON or CSV; the body is
// also bounded, to 64 KB): more are sent in several calls.
const MaxFXRatesPerCall = 1_000

// ErrTooManyRates is returned for a call of more than MaxFXRatesPerCall rates.
var ErrTooManyRates = fmt.Errorf("at most %d rates per call: %w", MaxFXRatesPerCall, domain.ErrInvalidArgument)

// CheckFXRates refuses a call with no rate, too many, or the same pair and
// day twice (which of the two would win?).
func CheckFXRates(rates []domain.FXRate) error {
	if len(rates) == 0 {
		return &domain.FieldError{Field: "rates", Message: "no rate given"}
	}
	if len(rates) > MaxFXRatesPerCall {
		return &domain.FieldError{Field: "rates", Message: ErrTooManyRates.Error()}
	}
	type key struct {
		base, quote string
		day         time.Time
	}
	seen := make(map[key]bool, len(rates))
	for _, r := range rates {
		k := key{r.Base, r.Quote, r.Day}
		if seen[k] {
			return &domain.FieldError{Field: "rates", Message: fmt.Sprintf("%s/%s on %s is given twice",
				r.Base, r.Quote, r.Day.Format(time.DateOnly))}
		}
		seen[k] = true
	}
	return nil
}

// fxCSVColumns are the columns a rates CSV must have, in any order (more
// are ignored).
var fxCSVColumns = []string{"day", "base", "quote", "rate"}

// ParseFXRatesCSV reads rates from CSV with a header row naming the
// columns day, base, quote and rate (any order, other columns ignored).
// An error names the line and the column.
func ParseFXRatesCSV(r io.Reader) ([]domain.FXRate, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, &domain.FieldError{Field: "csv", Message: "the CSV is empty: want a header row day,base,quote,rate"}
	}
	if err != nil {
		return nil, &domain.FieldError{Field: "csv", Message: "line 1: " + err.Error()}
	}
	col := map[string]int{}
	for i, h := range header {
		h = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))
		if slices.Contains(fxCSVColumns, h) {
			if _, dup := col[h]; dup {
				return nil, &domain.FieldError{Field: "csv", Message: fmt.Sprintf("line 1: column %q is named twice", h)}
			}
			col[h] = i
		}
	}
	for _, c := range fxCSVColumns {
		if _, ok := col[c]; !ok {
			return nil, &domain.FieldError{Field: "csv", Message: fmt.Sprintf("line 1: no %q column (want day,base,quote,rate)", c)}
		}
	}
	var out []domain.FXRate
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, &domain.FieldError{Field: "csv", Message: err.Error()}
		}
		line, _ := cr.FieldPos(0)
		if len(out) == MaxFXRatesPerCall {
			return nil, &domain.FieldError{Field: "csv", Message: ErrTooManyRates.Error()}
		}
		get := func(c string) string {
			if i := col[c]; i < len(rec) {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		fr, err := domain.NewFXRate(get("base"), get("quote"), get("day"), get("rate"))
		if err != nil {
			var fe *domain.FieldError
			if errors.As(err, &fe) {
				return nil, &domain.FieldError{Field: "csv", Message: fmt.Sprintf("line %d, column %s: %s", line, fe.Field, fe.Message)}
			}
			return nil, err
		}
		out = append(out, fr)
	}
	return out, CheckFXRates(out)
}
