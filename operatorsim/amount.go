package operatorsim

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/pitboss/pitboss/domain"
)

// Amounts are a player's three balances in one currency, or what one
// transaction states or moves, each in the currency's minor units (an
// exact integer: 1000.00 EUR is 100000, 0.00000001 BTC is 1). PAM's
// balance has the three; TBB's has cash alone.
type Amounts struct {
	Cash  int64 `json:"cash"`
	Bonus int64 `json:"bonus"`
	Promo int64 `json:"promo"`
}

// add is a+b, or an error when a sum overflows int64.
func (a Amounts) add(b Amounts) (Amounts, error) {
	var out Amounts
	var ok bool
	if out.Cash, ok = addMinor(a.Cash, b.Cash); !ok {
		return Amounts{}, errOverflow
	}
	if out.Bonus, ok = addMinor(a.Bonus, b.Bonus); !ok {
		return Amounts{}, errOverflow
	}
	if out.Promo, ok = addMinor(a.Promo, b.Promo); !ok {
		return Amounts{}, errOverflow
	}
	return out, nil
}

// neg is -a (an amount is never MinInt64: parsing refuses it).
func (a Amounts) neg() Amounts { return Amounts{Cash: -a.Cash, Bonus: -a.Bonus, Promo: -a.Promo} }

func (a Amounts) negative() bool { return a.Cash < 0 || a.Bonus < 0 || a.Promo < 0 }

var errOverflow = errors.New("the balance would overflow")

func addMinor(a, b int64) (int64, bool) {
	s := a + b
	if (a > 0 && b > 0 && s < 0) || (a < 0 && b < 0 && s >= 0) {
		return 0, false
	}
	return s, true
}

// errMissing: a required amount is absent or null.
var errMissing = errors.New("is required")

// parseDecimal reads a JSON number as exact minor units of cur: the
// number's own digits, never a float64. A number with more significant
// decimals than cur has is refused (never rounded); exponent notation
// ("1e-7", which some encoders write) is read exactly too. A string, a
// boolean or an object is refused: the PAM document's Amount is a number.
func parseDecimal(raw json.RawMessage, cur domain.Currency) (int64, error) {
	text := strings.TrimSpace(string(raw))
	if text == "" || text == "null" {
		return 0, errMissing
	}
	if c := text[0]; c != '-' && (c < '0' || c > '9') {
		return 0, fmt.Errorf("%s is not a JSON number", clip(text))
	}
	if strings.ContainsAny(text, "eE") {
		plain, err := plainFromExponent(text, cur.Exponent())
		if err != nil {
			return 0, err
		}
		text = plain
	}
	m, err := domain.ParseMoney(text, cur)
	if err != nil {
		return 0, err
	}
	return m.Minor(), nil
}

// plainFromExponent writes an exponent-form number as plain decimal text
// with exp decimals, exactly, or refuses it when it has more decimals
// than exp.
func plainFromExponent(text string, exp int) (string, error) {
	if len(text) > 64 {
		return "", fmt.Errorf("amount %s: too long", clip(text))
	}
	// big.Rat would build 10^exponent: bound it before (an amount needs
	// no exponent beyond the digits an int64 has).
	i := strings.IndexAny(text, "eE")
	if e, err := strconv.Atoi(strings.TrimPrefix(text[i+1:], "+")); err != nil || e > 100 || e < -100 {
		return "", fmt.Errorf("amount %s: exponent out of range", clip(text))
	}
	r, ok := new(big.Rat).SetString(text)
	if !ok {
		return "", fmt.Errorf("amount %s is not a number", clip(text))
	}
	scaled := new(big.Rat).Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(exp)), nil)))
	if !scaled.IsInt() {
		return "", fmt.Errorf("amount %s has more than %d decimals: %w", clip(text), exp, domain.ErrTooPrecise)
	}
	return r.FloatString(exp), nil
}

// parseSubunits reads a JSON integer of minor units (TBB's amounts): a
// non-negative integer literal; a decimal, an exponent, a string or a
// negative number is refused.
func parseSubunits(raw json.RawMessage) (int64, error) {
	text := strings.TrimSpace(string(raw))
	if text == "" || text == "null" {
		return 0, errMissing
	}
	for i := 0; i < len(text); i++ {
		if text[i] < '0' || text[i] > '9' {
			return 0, fmt.Errorf("%s is not a non-negative integer of subunits", clip(text))
		}
	}
	if len(text) > 1 && text[0] == '0' {
		return 0, fmt.Errorf("%s is not a JSON integer", clip(text))
	}
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s is beyond an int64 of subunits", clip(text))
	}
	return n, nil
}

// decimalJSON is minor as a JSON number with cur's decimals ("1000.00").
func decimalJSON(minor int64, cur domain.Currency) json.RawMessage {
	return json.RawMessage(domain.FormatMinor(minor, cur.Exponent()))
}

// parseAmountText reads decimal text ("1000.00") as minor units of cur.
func parseAmountText(s string, cur domain.Currency) (int64, error) {
	m, err := domain.ParseMoney(strings.TrimSpace(s), cur)
	if err != nil {
		return 0, err
	}
	return m.Minor(), nil
}

func clip(s string) string {
	if len(s) > 32 {
		return s[:32] + "…"
	}
	return s
}
