package audit

import (
	"fmt"
	"strings"

	"github.com/pitboss/pitboss/domain"
)

// AccountFold is what the events say about one account: the exact sum of
// its postings (decimal text, as the store summed it), how many events its
// stream holds and the highest version among them, and the last position
// that touched it (on its stream or by a posting).
type AccountFold struct {
	Account      string
	Sum          string // "" when the account has no postings
	Postings     int64
	BadAmounts   int64 // postings whose amount is not plain decimal text (the chain check names them)
	StreamEvents int64
	MaxVersion   int64
	LastPosition int64
}

// AccountRow is one stored row of the accounts table.
type AccountRow struct {
	Account      string
	Kind         string
	Currency     string
	Balance      int64 // minor units
	Version      int64
	LastPosition int64
}

// Accounts compares account rows with the fold of their events. Feed both
// sides in the same order of account id (byte order) through Compare.
type Accounts struct {
	t *tally
}

// NewAccounts starts the comparison; examples bounds the findings kept.
func NewAccounts(examples int) *Accounts { return &Accounts{t: newTally(CheckAccounts, examples)} }

// Compare checks one account. Either side may be nil: an account its
// events touch but without a row, or a row no event touches.
func (a *Accounts) Compare(f *AccountFold, r *AccountRow) {
	a.t.rows++
	switch {
	case f == nil && r == nil:
		a.t.rows--
		return
	case f == nil:
		a.t.fail(Finding{Account: r.Account, Field: "account", Stored: "row",
			Message: fmt.Sprintf("the accounts table has a row (balance %d minor units, version %d) but no event touches the account",
				r.Balance, r.Version)})
		return
	case r == nil:
		a.t.fail(Finding{Account: f.Account, Position: f.LastPosition, Field: "account", Recomputed: "row",
			Message: fmt.Sprintf("events touch the account (%d postings, %d on its stream, last at position %d) but it has no row (deleted?)",
				f.Postings, f.StreamEvents, f.LastPosition)})
		return
	}
	id := domain.AccountID(f.Account)
	var diffs []string
	var field, stored, folded string
	add := func(name, s, want, msg string) {
		diffs = append(diffs, msg)
		if field == "" {
			field, stored, folded = name, s, want
		}
	}
	exp := 0
	cur, err := domain.ParseCurrency(id.CurrencyCode())
	if err != nil {
		add("currency", r.Currency, id.CurrencyCode(), fmt.Sprintf("currency %q is not configured: the balance cannot be read", id.CurrencyCode()))
	} else {
		exp = cur.Exponent()
		want := int64(0)
		ok := true
		if f.Sum != "" {
			m, err := domain.ParseMoney(f.Sum, cur)
			if err != nil {
				ok = false
				add("balance", domain.FormatMinor(r.Balance, exp), f.Sum,
					fmt.Sprintf("the postings sum to %s, not a valid %s balance: %v", f.Sum, cur, err))
			}
			want = m.Minor()
		}
		if f.BadAmounts > 0 {
			ok = false
			add("balance", domain.FormatMinor(r.Balance, exp), "?",
				fmt.Sprintf("%d postings have an amount that is not plain decimal text, the balance cannot be folded", f.BadAmounts))
		}
		if ok && want != r.Balance {
			s, w := domain.FormatMinor(r.Balance, exp), domain.FormatMinor(want, exp)
			add("balance", s, w, fmt.Sprintf("stored balance %s ≠ %s, the sum of its %d postings (balance edited?)", s, w, f.Postings))
		}
	}
	if r.Version != f.StreamEvents {
		add("version", fmt.Sprint(r.Version), fmt.Sprint(f.StreamEvents),
			fmt.Sprintf("stored version %d ≠ %d events on its stream", r.Version, f.StreamEvents))
	}
	if f.MaxVersion != f.StreamEvents {
		add("stream_version", fmt.Sprint(f.MaxVersion), fmt.Sprint(f.StreamEvents),
			fmt.Sprintf("its stream's versions are not 1..%d: the highest is %d (an event removed from the stream?)", f.StreamEvents, f.MaxVersion))
	}
	if r.LastPosition != f.LastPosition {
		add("last_position", fmt.Sprint(r.LastPosition), fmt.Sprint(f.LastPosition),
			fmt.Sprintf("stored last_position %d ≠ %d, the last event that touched it", r.LastPosition, f.LastPosition))
	}
	if k := id.Kind().String(); r.Kind != k {
		add("kind", r.Kind, k, fmt.Sprintf("stored kind %q ≠ %q from its id", r.Kind, k))
	}
	if c := id.CurrencyCode(); r.Currency != c {
		add("currency", r.Currency, c, fmt.Sprintf("stored currency %q ≠ %q from its id", r.Currency, c))
	}
	if r.Balance < 0 && !id.Kind().MayGoNegative() {
		add("balance", domain.FormatMinor(r.Balance, exp), "≥ 0", "a wallet balance below zero")
	}
	if len(diffs) > 0 {
		a.t.fail(Finding{Account: f.Account, Position: f.LastPosition, Field: field, Stored: stored, Recomputed: folded,
			Message: strings.Join(diffs, "; ")})
	}
}

// Result returns the accounts check.
func (a *Accounts) Result() CheckResult { return a.t.result() }

// Merge walks two sources sorted by account id in byte order and compares
// every account. next* return false at the end.
func (a *Accounts) Merge(nextFold func() (*AccountFold, bool, error), nextRow func() (*AccountRow, bool, error)) error {
	// A source out of order would pair the wrong accounts: refuse it.
	var lastFold, lastRow string
	nextFold = ordered(nextFold, func(f *AccountFold) string { return f.Account }, &lastFold)
	nextRow = ordered(nextRow, func(r *AccountRow) string { return r.Account }, &lastRow)
	f, fok, err := nextFold()
	if err != nil {
		return err
	}
	r, rok, err := nextRow()
	if err != nil {
		return err
	}
	for fok || rok {
		switch {
		case fok && (!rok || f.Account < r.Account):
			a.Compare(f, nil)
			if f, fok, err = nextFold(); err != nil {
				return err
			}
		case rok && (!fok || r.Account < f.Account):
			a.Compare(nil, r)
			if r, rok, err = nextRow(); err != nil {
				return err
			}
		default:
			a.Compare(f, r)
			if f, fok, err = nextFold(); err != nil {
				return err
			}
			if r, rok, err = nextRow(); err != nil {
				return err
			}
		}
	}
	return nil
}

func ordered[T any](next func() (*T, bool, error), key func(*T) string, last *string) func() (*T, bool, error) {
	first := true
	return func() (*T, bool, error) {
		v, ok, err := next()
		if err != nil || !ok {
			return v, ok, err
		}
		k := key(v)
		if !first && k <= *last {
			return nil, false, fmt.Errorf("accounts out of order: %q after %q", k, *last)
		}
		first, *last = false, k
		return v, ok, nil
	}
}
