package gateway

import (
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pitboss/pitboss/gateway/rsasig"
)

// Wallet protocols (migration 00016, docs/providers-and-games.md): the
// dialect a provider's game servers call our wallet in. One set of money
// rules (package commands) answers every protocol; a protocol only decodes,
// authenticates and encodes.
const (
	// WalletProtocolPitboss is our own protocol, /provider/v1/wallet
	// (docs/provider-wallet.md), signed by the provider's SignatureScheme.
	WalletProtocolPitboss = "pitboss"
	// WalletProtocolCaleta is the Caleta Gaming System API 1.5 wallet,
	// /provider/caleta/{provider}/wallet (docs/protocols/caleta.md): every
	// request's raw body signed RSA-SHA256 with the provider's private key,
	// verified with its WalletPublicKey.
	WalletProtocolCaleta = "caleta"
	// WalletProtocolRedTiger is the Red Tiger (RGI) wallet,
	// /provider/redtiger/{provider}/wallet (docs/protocols/redtiger.md):
	// the provider's secret is its API key, sent in Authorization.
	WalletProtocolRedTiger = "redtiger"
	// WalletProtocolEvolution is Evolution's One Wallet,
	// /provider/evolution/{provider}/wallet (docs/protocols/evolution.md):
	// every request carries the provider's shared secret as the authToken
	// query parameter.
	WalletProtocolEvolution = "evolution"
	// DefaultWalletProtocol is the protocol of a provider that names none.
	DefaultWalletProtocol = WalletProtocolPitboss
)

// WalletProtocols lists every protocol.
var WalletProtocols = []string{WalletProtocolPitboss, WalletProtocolCaleta, WalletProtocolRedTiger, WalletProtocolEvolution}

// CheckWalletProtocol refuses a protocol that is not one of
// WalletProtocols, as a *FieldError on field.
func CheckWalletProtocol(field, protocol string) error {
	if slices.Contains(WalletProtocols, protocol) {
		return nil
	}
	return &FieldError{Field: field,
		Message: fmt.Sprintf("wallet protocol %q is not one of %s", ClipValue(protocol), strings.Join(WalletProtocols, ", ")),
		Details: map[string]any{"wallet_protocols": WalletProtocols}}
}

// Protocol is the provider's wallet protocol; a provider that names none
// speaks ours.
func (p Provider) Protocol() string {
	if p.WalletProtocol == "" {
		return DefaultWalletProtocol
	}
	return p.WalletProtocol
}

// CheckWalletCredentials refuses a protocol and public key that do not go
// together: a caleta provider needs an RSA public key of at least
// MinRSABits (ParseRSAPublicKey), and a key given to another protocol must
// still be one. field names the key's field.
func CheckWalletCredentials(field, protocol, publicKeyPEM string) error {
	if protocol == WalletProtocolCaleta && strings.TrimSpace(publicKeyPEM) == "" {
		return &FieldError{Field: field, Message: "a caleta provider needs its RSA public key (PEM) to verify its requests"}
	}
	if strings.TrimSpace(publicKeyPEM) == "" {
		return nil
	}
	if _, err := ParseRSAPublicKey(publicKeyPEM); err != nil {
		return &FieldError{Field: field, Message: err.Error()}
	}
	return nil
}

// MinRSABits is the shortest RSA key a provider may sign with.
const MinRSABits = 2048

// ErrPublicKey: a provider's public key is not a usable RSA public key.
var ErrPublicKey = errors.New("not an RSA public key")

// ParseRSAPublicKey reads one PEM block, "PUBLIC KEY" (PKIX, what
// `openssl rsa -pubout` writes) or "RSA PUBLIC KEY" (PKCS #1), holding an
// RSA key of at least MinRSABits. Errors wrap ErrPublicKey.
func ParseRSAPublicKey(pemText string) (*rsa.PublicKey, error) {
	block, rest := pem.Decode([]byte(strings.TrimSpace(pemText)))
	if block == nil {
		return nil, fmt.Errorf("%w: no PEM block", ErrPublicKey)
	}
	if len(strings.TrimSpace(string(rest))) > 0 {
		return nil, fmt.Errorf("%w: more than one PEM block", ErrPublicKey)
	}
	var key *rsa.PublicKey
	switch block.Type {
	case "PUBLIC KEY":
		k, err := x509.ParsePKIXPublicKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrPublicKey, err)
		}
		rk, ok := k.(*rsa.PublicKey)
		if !ok {
			return nil, fmt.Errorf("%w: the PEM holds a %T", ErrPublicKey, k)
		}
		key = rk
	case "RSA PUBLIC KEY":
		k, err := x509.ParsePKCS1PublicKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrPublicKey, err)
		}
		key = k
	default:
		return nil, fmt.Errorf("%w: PEM block is %q, want \"PUBLIC KEY\"", ErrPublicKey, block.Type)
	}
	if key.N.BitLen() < MinRSABits {
		return nil, fmt.Errorf("%w: %d bits, at least %d required", ErrPublicKey, key.N.BitLen(), MinRSABits)
	}
	return key, nil
}

// VerifyRSASHA256 checks sigBase64, the standard base64 of an RSASSA
// PKCS #1 v1.5 signature over SHA-256 of body (what Caleta's documents call
// RSA-SHA256), with key, prepared once by rsasig.Prepare (a third cheaper
// per call than crypto/rsa, which prepares the key on every call). The
// errors wrap ErrSignatureMalformed (missing, not base64) or
// ErrSignatureMismatch.
func VerifyRSASHA256(key *rsasig.Key, body []byte, sigBase64 string) error {
	if sigBase64 == "" {
		return fmt.Errorf("%w: the signature is missing", ErrSignatureMalformed)
	}
	sig, err := base64.StdEncoding.DecodeString(sigBase64)
	if err != nil {
		return fmt.Errorf("%w: the signature is not standard base64", ErrSignatureMalformed)
	}
	sum := sha256.Sum256(body)
	if err := key.VerifySHA256(sum[:], sig); err != nil {
		return ErrSignatureMismatch
	}
	return nil
}
