package gateway

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The provider wallet's signature schemes (docs/provider-wallet.md#authentication).
// Each provider is on one; its X-Signature header is checked by that
// scheme's rule.
const (
	// SignatureV1 is the legacy scheme: X-Signature is the hex HMAC-SHA256
	// of the raw body alone. It binds neither the endpoint nor a time, so
	// a body signed for /bet is as good at /win and a signed call never
	// expires; providers created before migration 00012 stay on it until
	// they are moved. A v1 provider may already send v2 signatures, so it
	// can switch its signer first and be moved after.
	SignatureV1 = "v1"
	// SignatureV2 signs the time, the method, the path and the body:
	//
	//	X-Signature: t=<unix seconds>,v2=<hex HMAC-SHA256 of "<t>.<METHOD>.<path>.<raw body>">
	//
	// and t must be within ProviderSignatureWindow of the server's clock.
	// A v2 provider must send v2: a v1 signature is refused.
	SignatureV2 = "v2"
	// DefaultSignatureScheme is the scheme of a provider created without
	// one.
	DefaultSignatureScheme = SignatureV2
)

// SignatureSchemes lists every scheme, oldest first.
var SignatureSchemes = []string{SignatureV1, SignatureV2}

// ProviderSignatureWindow is how far a v2 signature's t may be from the
// server's clock, either way: the signed launch's window. Within it a
// captured call can be sent again, and is then a replay of the same call
// (the ledger's idempotency by transaction_id); after it, it is refused.
const ProviderSignatureWindow = 120 * time.Second

// maxTimestampDigits bounds t: Unix seconds have 10 digits until 2286, and
// 18 digits keep every comparison far from int64 overflow.
const maxTimestampDigits = 18

// CheckSignatureScheme refuses a scheme that is not one of
// SignatureSchemes, as a *FieldError on field.
func CheckSignatureScheme(field, scheme string) error {
	if slices.Contains(SignatureSchemes, scheme) {
		return nil
	}
	return &FieldError{Field: field,
		Message: fmt.Sprintf("signature scheme %q is not one of %s", ClipValue(scheme), strings.Join(SignatureSchemes, ", ")),
		Details: map[string]any{"signature_schemes": SignatureSchemes}}
}

// Scheme is the provider's signature scheme; a provider that names none
// (one not read from a store) is held to the default, the strict one.
func (p Provider) Scheme() string {
	if p.SignatureScheme == "" {
		return DefaultSignatureScheme
	}
	return p.SignatureScheme
}

// ProviderCall is what a wallet call's v2 signature covers besides its
// time: the request's method and path (without scheme, host or query) and
// its raw body.
type ProviderCall struct {
	Method string
	Path   string
	Body   []byte
}

func (c ProviderCall) mac(secret, ts string) []byte {
	dot := []byte{'.'}
	return hmacSHA256(secret, []byte(ts), dot, []byte(c.Method), dot, []byte(c.Path), dot, c.Body)
}

// SignProviderCall returns the v2 X-Signature of call sent at at, keyed
// with the provider's secret: what a provider (the demo game, the load
// generator) sends.
func SignProviderCall(secret string, at time.Time, call ProviderCall) string {
	ts := strconv.FormatInt(at.Unix(), 10)
	return "t=" + ts + ",v2=" + hex.EncodeToString(call.mac(secret, ts))
}

// ProviderSignature is a parsed v2 X-Signature.
type ProviderSignature struct {
	// Timestamp is t, in Unix seconds, as sent (its digits are what was
	// signed).
	Timestamp string
	// MACs are the v2 entries, decoded; any one matching is enough, so a
	// provider can sign with its old and its new secret while a secret is
	// rotated.
	MACs [][]byte
}

// Errors of ParseProviderSignature and VerifyProviderCall.
var (
	// ErrSignatureMalformed: the header is not the provider's scheme's
	// shape (a v1 signature from a v2 provider is one).
	ErrSignatureMalformed = errors.New("signature malformed")
	// ErrSignatureMismatch: well formed, but no signature matches.
	ErrSignatureMismatch = errors.New("signature does not match")
	// ErrSignatureTimestamp: a v2 signature that matches, but whose t is
	// outside ProviderSignatureWindow.
	ErrSignatureTimestamp = errors.New("signature timestamp outside the window")
)

// ParseProviderSignature reads a v2 header: comma-separated key=value
// entries (spaces around an entry are ignored), exactly one t of decimal
// digits, and at least one v2 of 64 hex digits in either case. Entries
// with other keys are ignored, so a later scheme can be sent alongside.
func ParseProviderSignature(header string) (ProviderSignature, error) {
	var (
		sig  ProviderSignature
		seen bool
	)
	for part := range strings.SplitSeq(header, ",") {
		k, v, ok := strings.Cut(strings.Trim(part, " \t"), "=")
		if !ok || k == "" {
			return ProviderSignature{}, fmt.Errorf("%w: every entry is key=value", ErrSignatureMalformed)
		}
		switch k {
		case "t":
			if seen {
				return ProviderSignature{}, fmt.Errorf("%w: t is given twice", ErrSignatureMalformed)
			}
			if v == "" || len(v) > maxTimestampDigits || strings.TrimLeft(v, "0123456789") != "" {
				return ProviderSignature{}, fmt.Errorf("%w: t is not Unix seconds", ErrSignatureMalformed)
			}
			sig.Timestamp, seen = v, true
		case SignatureV2:
			b, err := hex.DecodeString(v)
			if err != nil || len(b) != sha256.Size {
				return ProviderSignature{}, fmt.Errorf("%w: v2 is not 64 hex digits", ErrSignatureMalformed)
			}
			sig.MACs = append(sig.MACs, b)
		}
	}
	if !seen {
		return ProviderSignature{}, fmt.Errorf("%w: no t entry", ErrSignatureMalformed)
	}
	if len(sig.MACs) == 0 {
		return ProviderSignature{}, fmt.Errorf("%w: no v2 entry", ErrSignatureMalformed)
	}
	return sig, nil
}

// VerifyProviderCall checks a wallet call's X-Signature header for
// provider p at the server's time now. A v2 provider must send a v2
// signature; a v1 provider may send either (a header with an "=" is v2,
// a bare hex digest v1). The HMACs are compared in constant time, and the
// time is judged only once a signature matched, so only the provider
// learns that its clock is off. The errors wrap ErrSignatureMalformed,
// ErrSignatureMismatch or ErrSignatureTimestamp.
func VerifyProviderCall(p Provider, call ProviderCall, header string, now time.Time) error {
	switch bare := !strings.Contains(header, "="); {
	case header == "":
		return fmt.Errorf("%w: X-Signature is missing", ErrSignatureMalformed)
	case bare && p.Scheme() == SignatureV1:
		if !ValidSignature(p.Secret, call.Body, header) {
			return ErrSignatureMismatch
		}
		return nil
	case bare:
		return fmt.Errorf("%w: a bare digest is a v1 signature, which a %s provider may not send", ErrSignatureMalformed, p.Scheme())
	}
	sig, err := ParseProviderSignature(header)
	if err != nil {
		return err
	}
	want := call.mac(p.Secret, sig.Timestamp)
	match := false
	for _, m := range sig.MACs {
		match = hmac.Equal(m, want) || match
	}
	if !match {
		return ErrSignatureMismatch
	}
	ts, err := strconv.ParseInt(sig.Timestamp, 10, 64)
	if err != nil { // unreachable: at most 18 digits
		return fmt.Errorf("%w: t is not Unix seconds", ErrSignatureMalformed)
	}
	limit := int64(ProviderSignatureWindow / time.Second)
	if d := ts - now.Unix(); d < -limit || d > limit {
		return fmt.Errorf("%w: t is %d s from the server's time", ErrSignatureTimestamp, d)
	}
	return nil
}
