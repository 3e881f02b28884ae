package domain

import (
	"fmt"
	"maps"
	"strings"
	"sync"
)

// Currency is a currency code with its precision: the number of decimal
// places an amount in it may carry (ISO 4217 exponent for fiat, a configured
// value for crypto). The zero value is not a valid currency.
type Currency struct {
	code string
	exp  int8
}

// Code is the upper-case currency code, e.g. "EUR".
func (c Currency) Code() string { return c.code }

// Exponent is the number of decimal places the currency allows.
func (c Currency) Exponent() int { return int(c.exp) }

// IsZero reports whether c is the zero value.
func (c Currency) IsZero() bool { return c.code == "" }

func (c Currency) String() string { return c.code }

// MaxExponent bounds configured precisions so that every amount fits int64
// minor units with room for realistic balances (9 decimals leaves 9.2e9 whole
// units).
const MaxExponent = 9

// fiat exponents from ISO 4217 (the list is the active codes; anything not
// listed has exponent 2).
var iso4217Exceptions = map[string]int8{
	"BIF": 0, "CLP": 0, "DJF": 0, "GNF": 0, "ISK": 0, "JPY": 0, "KMF": 0,
	"KRW": 0, "PYG": 0, "RWF": 0, "UGX": 0, "UYI": 0, "VND": 0, "VUV": 0,
	"XAF": 0, "XOF": 0, "XPF": 0,
	"BHD": 3, "IQD": 3, "JOD": 3, "KWD": 3, "LYD": 3, "OMR": 3, "TND": 3,
	"CLF": 4, "UYW": 4,
}

var iso4217Exp2 = strings.Fields(`AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BMD BND BOB BRL BSD
BTN BWP BYN BZD CAD CDF CHF CNY COP CRC CUP CVE CZK DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP
GEL GHS GIP GMD GTQ GYD HKD HNL HTG HUF IDR ILS INR IRR JMD KES KGS KHR KPW KYD KZT LAK LBP
LKR LRD LSL MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD
PAB PEN PGK PHP PKR PLN QAR RON RSD RUB SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC
SYP SZL THB TJS TMT TOP TRY TTD TWD TZS UAH USD UYU UZS VES WST XCD YER ZAR ZMW ZWG`)

// DefaultCrypto holds the precisions configured out of the box for common
// crypto currencies. They are capped at MaxExponent: ETH is kept in gwei.
var DefaultCrypto = map[string]int{
	"BTC": 8, "ETH": 9, "LTC": 8, "BCH": 8, "DOGE": 8, "USDT": 6, "USDC": 6,
	"TRX": 6, "XRP": 6, "SOL": 9, "BNB": 8, "ADA": 6,
}

var (
	currencyMu sync.RWMutex
	currencies = defaultCurrencies()
)

func defaultCurrencies() map[string]int8 {
	m := make(map[string]int8, len(iso4217Exp2)+len(iso4217Exceptions)+len(DefaultCrypto))
	for _, c := range iso4217Exp2 {
		m[c] = 2
	}
	maps.Copy(m, iso4217Exceptions)
	for c, e := range DefaultCrypto {
		m[c] = int8(e)
	}
	return m
}

// RegisterCurrency adds a currency with its precision. It is meant for start
// up configuration. Re-registering a known code with a different precision is
// refused: stored amounts are minor units, so a precision can never change.
func RegisterCurrency(code string, exponent int) error {
	if !validCode(code) {
		return fmt.Errorf("register currency %q: %w", code, ErrUnknownCurrency)
	}
	if exponent < 0 || exponent > MaxExponent {
		return fmt.Errorf("register currency %s: exponent %d outside 0..%d: %w", code, exponent, MaxExponent, ErrInvalidAmount)
	}
	currencyMu.Lock()
	defer currencyMu.Unlock()
	if e, ok := currencies[code]; ok && int(e) != exponent {
		return fmt.Errorf("register currency %s: precision is fixed at %d", code, e)
	}
	currencies[code] = int8(exponent)
	return nil
}

// ParseCurrency returns the known currency for code. Codes are case
// sensitive: ISO codes are upper case, and so are ours.
func ParseCurrency(code string) (Currency, error) {
	currencyMu.RLock()
	e, ok := currencies[code]
	currencyMu.RUnlock()
	if !ok {
		return Currency{}, fmt.Errorf("currency %q: %w", code, ErrUnknownCurrency)
	}
	return Currency{code: code, exp: e}, nil
}

// MustCurrency is ParseCurrency for constants in tests and tables.
func MustCurrency(code string) Currency {
	c, err := ParseCurrency(code)
	if err != nil {
		panic(err)
	}
	return c
}

func validCode(code string) bool {
	if len(code) < 3 || len(code) > 6 {
		return false
	}
	for _, r := range code {
		if (r < 'A' || r > 'Z') && (r < '0' || r > '9') {
			return false
		}
	}
	return true
}
