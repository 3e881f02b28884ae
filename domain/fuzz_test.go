package domain_test

import (
	"bytes"
	"errors"
	"math"
	"math/big"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/pitboss/pitboss/domain"
)

// fuzzCurrencies covers every precision the registry holds: 0, 2, 3, 4, 6,
// 8 and 9 decimals.
var fuzzCurrencies = []string{"EUR", "JPY", "KWD", "CLF", "USDT", "BTC", "ETH"}

// plainDecimal is the amount syntax: an optional minus sign, digits, and a
// point only between digits. big.Rat reads more (fractions, exponents, hex, underscores), so it
// is the judge of the value and this is the judge of the syntax.
var plainDecimal = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)

// referenceParse is ParseMoney written the slow, obviously right way with
// math/big. It returns the minor units, or the errors ParseMoney may give
// (both, when an amount is too precise and out of range at once).
func referenceParse(s string, exp int) (int64, []error) {
	if s == "" || len(s) > 64 || !plainDecimal.MatchString(s) {
		return 0, []error{domain.ErrInvalidAmount}
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return 0, []error{domain.ErrInvalidAmount}
	}
	scaled := r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(exp)), nil)))
	whole := new(big.Int).Quo(scaled.Num(), scaled.Denom())
	inRange := whole.CmpAbs(big.NewInt(math.MaxInt64)) <= 0
	switch {
	case !scaled.IsInt() && !inRange:
		return 0, []error{domain.ErrTooPrecise, domain.ErrAmountOverflow}
	case !scaled.IsInt():
		return 0, []error{domain.ErrTooPrecise}
	case !inRange:
		return 0, []error{domain.ErrAmountOverflow}
	}
	return whole.Int64(), nil
}

func FuzzParseMoney(f *testing.F) {
	for _, s := range []string{
		"0", "1", "-1", "10.5", "1.500", "0.01", "-0.00", "+5", ".5", "5.", "007.50",
		"0.00000001", "0.000000001", "1000.5", "21000000", "1.2345",
		"92233720368547758.07", "92233720368547758.08", "-92233720368547758.08", "-92233720368547758.07",
		"92233720368.54775807", "9223372036854775807", "9223372036854775808", "99999999999999999999",
		"1.0000000000000000001", "0.00000000000000000001", "1.5000000000000000000000000",
		"12345678901234567890.123", "0000000000000000000000000000001.10",
		"", " ", "-", ".", "-.", "+-1", "1e2", "1E-2", "NaN", "Inf", "-Infinity", "0x10", "1_000", "1,5",
		"1/2", "١", "１", "\x00", "1.2.3", "--1", strings.Repeat("9", 65),
	} {
		for i := range fuzzCurrencies {
			f.Add(s, uint8(i))
		}
	}
	f.Fuzz(func(t *testing.T, s string, ci uint8) {
		cur := domain.MustCurrency(fuzzCurrencies[int(ci)%len(fuzzCurrencies)])
		exp := cur.Exponent()

		m, err := domain.ParseMoney(s, cur)

		want, wantErrs := referenceParse(s, exp)
		if wantErrs == nil {
			if err != nil {
				t.Fatalf("ParseMoney(%q, %s) = %v, want %d", s, cur, err, want)
			}
			if m.Minor() != want {
				t.Fatalf("ParseMoney(%q, %s) = %d minor units, big.Rat says %d", s, cur, m.Minor(), want)
			}
		} else {
			if err == nil {
				t.Fatalf("ParseMoney(%q, %s) = %d, want one of %v", s, cur, m.Minor(), wantErrs)
			}
			matched := false
			for _, w := range wantErrs {
				matched = matched || errors.Is(err, w)
			}
			if !matched {
				t.Fatalf("ParseMoney(%q, %s) err = %v, want one of %v", s, cur, err, wantErrs)
			}
			return
		}

		if m.Currency() != cur {
			t.Fatalf("currency %s, want %s", m.Currency(), cur)
		}
		str := m.String()
		if i := strings.IndexByte(str, '.'); (exp == 0 && i >= 0) || (exp > 0 && len(str)-i-1 != exp) {
			t.Fatalf("String() = %q: not exactly %d decimals", str, exp)
		}
		back, err := domain.ParseMoney(str, cur)
		if err != nil || back != m {
			t.Fatalf("ParseMoney(String() = %q) = %v, %v; want %d", str, back.Minor(), err, m.Minor())
		}
		if neg := m.Neg(); neg.Neg() != m {
			t.Fatalf("Neg is not an involution for %d", m.Minor())
		}
		if p, err := domain.ParsePositive(s, cur); (err == nil) != (m.Minor() > 0) || (err == nil && p != m) {
			t.Fatalf("ParsePositive(%q) = %v, %v; ParseMoney gave %d", s, p.Minor(), err, m.Minor())
		}
	})
}

func FuzzEncodeBody(f *testing.F) {
	f.Add("ev-1", string(domain.EventBetPlaced), string(wallet), client, player, "r1", "b1", "10.00", "90.00",
		"", "req-1", int64(3), int64(41), int64(1740830400), int64(123456789), true, false, uint8(2))
	f.Add("", "", "", "", "", "", "", "", "", "", "", int64(0), int64(0), int64(0), int64(0), false, false, uint8(0))
	f.Add("ev-2", "game.launched.v1", "x", "<&>", "\u2028", "\"", "\\", "-0.00", "1", "Gutschrift für Spieler ✓",
		"\x7f", int64(-1), int64(math.MaxInt64), int64(-62135596800), int64(0), false, true, uint8(1))
	f.Add("ev-3", "t", "s", "c", "p", "r", "x", "a", "b", "bad utf-8 \xff\xfe", "\xc0", int64(1), int64(2),
		int64(253402300799), int64(999999999), true, true, uint8(3))
	f.Add("ev-4", "t", "s", "c", "p", "r", "x", "a", "b", "year 10000", "", int64(1), int64(2),
		int64(253402300800), int64(0), true, true, uint8(3))
	f.Fuzz(func(t *testing.T, id, typ, stream, clientID, playerID, round, extTx, amount, after, reason, requestID string,
		version, position, sec, nsec int64, closed, promo bool, nPostings uint8) {
		e := domain.Event{ID: id, Type: domain.EventType(typ), StreamID: domain.AccountID(stream), Version: version,
			Position: position, OccurredAt: time.Unix(sec, nsec),
			Data: domain.EventData{ClientID: clientID, PlayerID: playerID, RoundID: round, ExternalTxID: extTx,
				Currency: "EUR", Amount: amount, BalanceAfter: after, Reason: reason, RoundClosed: closed, Promo: promo},
			Meta: domain.Metadata{RequestID: requestID, Actor: reason}}
		switch nPostings % 4 {
		case 1:
			e.Data.Postings = []domain.Posting{}
		case 2:
			e.Data.Postings = []domain.Posting{{Account: domain.AccountID(stream), Amount: amount}}
		case 3:
			e.Data.Postings = []domain.Posting{{Account: domain.AccountID(stream), Amount: amount}, {Account: house, Amount: after}}
		}

		b, err := domain.EncodeBody(e)
		if y := e.OccurredAt.UTC().Year(); y < 0 || y > 9999 {
			if err == nil {
				t.Fatalf("EncodeBody accepted year %d, which RFC 3339 cannot write:\n%s", y, b)
			}
			return
		}
		if err != nil {
			t.Fatalf("EncodeBody: %v", err)
		}
		got, err := domain.DecodeBody(b)
		if err != nil {
			t.Fatalf("EncodeBody produced a body DecodeBody refuses (%v):\n%s", err, b)
		}
		again, err := domain.EncodeBody(got)
		if err != nil {
			t.Fatalf("a decoded body does not encode: %v\n%s", err, b)
		}
		// JSON cannot carry invalid UTF-8: json.Marshal writes it as
		// \ufffd escapes, which decode to U+FFFD and then encode as raw
		// UTF-8. The chain hashes the stored bytes, so that is harmless, but
		// after that one normalisation the body must be a fixed point.
		for _, s := range []string{id, typ, stream, clientID, playerID, round, extTx, amount, after, reason, requestID} {
			if !utf8.ValidString(s) {
				third, err := domain.DecodeBody(again)
				if err != nil {
					t.Fatalf("normalised body refused: %v\n%s", err, again)
				}
				if fixed, err := domain.EncodeBody(third); err != nil || !bytes.Equal(fixed, again) {
					t.Fatalf("normalised body is not stable (%v):\n%s\n%s", err, again, fixed)
				}
				return
			}
		}
		// Valid text: the stored bytes re-encode to themselves and the
		// event comes back whole.
		if !bytes.Equal(again, b) {
			t.Fatalf("re-encoding changed the body:\n%s\n%s", b, again)
		}
		assertSameEvent(t, got, e)
	})
}

func FuzzDecodeBody(f *testing.F) {
	good, err := domain.EncodeBody(fullEvent())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(`{"occurred_at":"2025-03-01T12:00:00Z","data":{"postings":null}}`))
	f.Add([]byte(`{"occurred_at":"2025-03-01T12:00:00+01:00","ID":"case-insensitive"}`))
	f.Add([]byte(`{"occurred_at":"0000-01-01T00:00:00Z","version":-1}`))
	f.Add([]byte(`{`))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := domain.DecodeBody(b)
		if err != nil {
			return
		}
		// Whatever DecodeBody accepts must have a canonical form that is
		// stable: encode, decode, encode gives the same bytes.
		c1, err := domain.EncodeBody(e)
		if err != nil {
			return
		}
		e2, err := domain.DecodeBody(c1)
		if err != nil {
			t.Fatalf("canonical body of an accepted one is refused (%v):\n%s", err, c1)
		}
		if c2, err := domain.EncodeBody(e2); err != nil || !bytes.Equal(c1, c2) {
			t.Fatalf("canonical form is unstable (%v):\n%s\n%s", err, c1, c2)
		}
	})
}

// FuzzParseAccountID holds ParseAccountID to two rules: whatever it accepts
// is exactly the text its parts spell, with a known kind; and an id made by
// a constructor parses back into its parts exactly when every part is a
// valid id (a part with a ':' must never parse as some other account).
func FuzzParseAccountID(f *testing.F) {
	f.Add("player:acme:p-17:EUR", "acme", "p-17", uint8(1), uint8(0))
	f.Add("house:acme:prov:BTC", "acme", "prov", uint8(2), uint8(2))
	f.Add("client:acme:EUR", "acme", "", uint8(0), uint8(1))
	f.Add("external:acme:JPY", "acme", "", uint8(3), uint8(3))
	f.Add("player:acme:EUR", "ac:me", "p", uint8(1), uint8(0))
	f.Add("client::", "", "x:y", uint8(0), uint8(0))
	f.Add("house:a:b:c:EUR", "a b", "\xff", uint8(2), uint8(1))
	currencies := []domain.Currency{eur, usd, jpy, btc}
	f.Fuzz(func(t *testing.T, s, clientID, owner string, kind, cur uint8) {
		if id, err := domain.ParseAccountID(s); err == nil {
			if string(id) != s {
				t.Fatalf("ParseAccountID(%q) = %q", s, id)
			}
			parts := []string{id.Kind().String(), id.Client()}
			switch id.Kind() {
			case domain.KindPlayerWallet:
				parts = append(parts, id.Player())
			case domain.KindHouse:
				parts = append(parts, id.Provider())
			case domain.KindUnknown:
				t.Fatalf("ParseAccountID accepted %q of unknown kind", s)
			}
			if rebuilt := strings.Join(append(parts, id.CurrencyCode()), ":"); rebuilt != s {
				t.Fatalf("ParseAccountID(%q): the parts spell %q", s, rebuilt)
			}
		} else if !errors.Is(err, domain.ErrInvalidArgument) {
			t.Fatalf("ParseAccountID(%q): %v, want ErrInvalidArgument", s, err)
		}

		c := currencies[int(cur)%len(currencies)]
		var id domain.AccountID
		var player, provider string
		valid := domain.ValidateID("client", clientID) == nil
		switch kind % 4 {
		case 0:
			id = domain.ClientWallet(clientID, c)
		case 1:
			id, player = domain.PlayerWallet(clientID, owner, c), owner
			valid = valid && domain.ValidateID("player", owner) == nil
		case 2:
			id, provider = domain.HouseAccount(clientID, owner, c), owner
			valid = valid && domain.ValidateID("provider", owner) == nil
		case 3:
			id = domain.ExternalAccount(clientID, c)
		}
		got, err := domain.ParseAccountID(string(id))
		if !valid {
			if err == nil {
				t.Fatalf("ParseAccountID(%q) accepted an id made of invalid parts (client %q, owner %q)", id, clientID, owner)
			}
			return
		}
		if err != nil || got != id {
			t.Fatalf("ParseAccountID(%q) = %q, %v", id, got, err)
		}
		if got.Client() != clientID || got.Player() != player || got.Provider() != provider || got.CurrencyCode() != c.Code() {
			t.Fatalf("%q: client %q, player %q, provider %q, currency %q", id, got.Client(), got.Player(),
				got.Provider(), got.CurrencyCode())
		}
	})
}
