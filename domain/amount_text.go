package domain

import (
	"bytes"
	"encoding/json"
)

// AmountText is a money amount as a JSON body carries it, a number (10.50)
// or a string ("10.50"), kept as its exact text: it is never read as a
// float64, so no binary rounding comes between the sender's digits and
// ParseMoney, which reads it once the currency is known. The HTTP API's
// request bodies and the demo game's spin use it.
type AmountText string

// UnmarshalJSON keeps a number's text verbatim and a string's content;
// null is empty (a missing amount, refused by the caller as required).
func (a *AmountText) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*a = AmountText(s)
		return nil
	}
	if bytes.Equal(b, []byte("null")) {
		*a = ""
		return nil
	}
	*a = AmountText(b)
	return nil
}
