package gateway

import (
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
)

// Launch credentials (migration 00025): who we are at a provider whose
// launch kind asks its own API (caleta, evolution, redtiger), and the
// secret our launch calls carry. See docs/providers-and-games.md.

// LaunchCredentials are a provider's launch settings as an operator sets
// them. Empty fields keep what the provider has.
type LaunchCredentials struct {
	OperatorID string
	Country    string
	// Secret is a PEM RSA private key (caleta) or a token (evolution).
	Secret string
}

// MaxLaunchOperatorID bounds LaunchCredentials.OperatorID.
const MaxLaunchOperatorID = 128

// ErrPrivateKey: a launch private key is not a usable RSA private key.
var ErrPrivateKey = errors.New("not an RSA private key")

// ParseRSAPrivateKey reads one PEM block, "PRIVATE KEY" (PKCS #8, what
// `openssl genpkey` writes) or "RSA PRIVATE KEY" (PKCS #1), holding an RSA
// key of at least MinRSABits. Errors wrap ErrPrivateKey and never quote
// the key.
func ParseRSAPrivateKey(pemText string) (*rsa.PrivateKey, error) {
	block, rest := pem.Decode([]byte(strings.TrimSpace(pemText)))
	if block == nil {
		return nil, fmt.Errorf("%w: no PEM block", ErrPrivateKey)
	}
	if len(strings.TrimSpace(string(rest))) > 0 {
		return nil, fmt.Errorf("%w: more than one PEM block", ErrPrivateKey)
	}
	var key *rsa.PrivateKey
	switch block.Type {
	case "PRIVATE KEY":
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%w: the PKCS #8 block does not parse", ErrPrivateKey)
		}
		rk, ok := k.(*rsa.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("%w: the PEM holds a %T", ErrPrivateKey, k)
		}
		key = rk
	case "RSA PRIVATE KEY":
		k, err := x509.ParsePKCS1PrivateKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%w: the PKCS #1 block does not parse", ErrPrivateKey)
		}
		key = k
	default:
		return nil, fmt.Errorf("%w: PEM block is %q, want \"PRIVATE KEY\"", ErrPrivateKey, block.Type)
	}
	if key.N.BitLen() < MinRSABits {
		return nil, fmt.Errorf("%w: %d bits, at least %d required", ErrPrivateKey, key.N.BitLen(), MinRSABits)
	}
	return key, nil
}

// PublicKeyFingerprint is the hex SHA-256 of the PKIX DER of key's public
// half: what `openssl pkey -pubout -outform DER | sha256sum` prints, the
// same fingerprint the wallet's public keys are listed by.
func PublicKeyFingerprint(key *rsa.PublicKey) string {
	der, err := x509.MarshalPKIXPublicKey(key)
	if err != nil { // an RSA key always marshals
		return ""
	}
	sum := sha256.Sum256(der)
	return hex.EncodeToString(sum[:])
}

// LaunchSecretFingerprint is Provider.LaunchKeyFingerprint of a launch
// secret: the public half's fingerprint for a private key, "set" for any
// other secret, "" for none.
func LaunchSecretFingerprint(secret string) string {
	if secret == "" {
		return ""
	}
	if k, err := ParseRSAPrivateKey(secret); err == nil {
		return PublicKeyFingerprint(&k.PublicKey)
	}
	return "set"
}

// CheckLaunchCredentials refuses settings that cannot be right for any
// kind: a country that is not two capital letters, an operator id with
// spaces or control characters, a secret that looks like a PEM block but
// is not an RSA private key of at least MinRSABits, or a token with
// control characters. Errors are *FieldError on field names of the CLI.
func CheckLaunchCredentials(c LaunchCredentials) error {
	if c.Country != "" && !IsCountry(c.Country) {
		return &FieldError{Field: "launch_country",
			Message: fmt.Sprintf("launch country %q is not an ISO 3166-1 alpha-2 code such as BR", ClipValue(c.Country))}
	}
	if len(c.OperatorID) > MaxLaunchOperatorID || strings.IndexFunc(c.OperatorID, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0 {
		return &FieldError{Field: "launch_operator_id",
			Message: fmt.Sprintf("launch operator id must be 1..%d printable characters without spaces", MaxLaunchOperatorID)}
	}
	if strings.Contains(c.Secret, "-----BEGIN") {
		if _, err := ParseRSAPrivateKey(c.Secret); err != nil {
			return &FieldError{Field: "launch_secret", Message: err.Error()}
		}
		return nil
	}
	if strings.IndexFunc(c.Secret, func(r rune) bool { return r < ' ' || r == 0x7f }) >= 0 {
		return &FieldError{Field: "launch_secret", Message: "a launch token must be printable characters on one line"}
	}
	return nil
}

// IsCountry reports whether s is an ISO 3166-1 alpha-2 code in its
// canonical form: two capital letters.
func IsCountry(s string) bool {
	return len(s) == 2 && s[0] >= 'A' && s[0] <= 'Z' && s[1] >= 'A' && s[1] <= 'Z'
}

// CheckLaunchReady reports what a route of an outbound kind still lacks
// before a launch can be made; nil for kinds that need nothing more. A
// route without its secret (a listing) is judged by LaunchKeyFingerprint.
func CheckLaunchReady(r ProviderRoute) error {
	var errs []error
	need := func(ok bool, what string) {
		if !ok {
			errs = append(errs, fmt.Errorf("a %s provider needs %s", r.Kind, what))
		}
	}
	switch r.Kind {
	case ProviderKindCaleta:
		need(r.LaunchOperatorID != "", "its launch operator id (Caleta's operator_id)")
		need(IsCountry(r.LaunchCountry), "its launch country")
		keyOK := r.LaunchKeyFingerprint != "" && r.LaunchKeyFingerprint != "set"
		if r.LaunchSecret != "" {
			_, err := ParseRSAPrivateKey(r.LaunchSecret)
			keyOK = err == nil
		}
		need(keyOK, "our RSA launch private key")
	case ProviderKindEvolution:
		need(r.LaunchOperatorID != "", "its launch operator id (Evolution's casino key)")
		need(IsCountry(r.LaunchCountry), "its launch country")
		tokenOK := r.LaunchKeyFingerprint == "set"
		if r.LaunchSecret != "" {
			tokenOK = !strings.Contains(r.LaunchSecret, "-----BEGIN")
		}
		need(tokenOK, "its casino token as launch secret")
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("provider %s launch credentials: %w", r.ProviderID, err)
	}
	return nil
}
