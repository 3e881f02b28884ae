package gateway

import (
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway/rsasig"
)

// Wallet protocols (docs/providers-and-games.md): the dialect a provider's
// game servers call our wallet in. One wallet core (package wallet)
// answers every protocol; a protocol's dialect only authenticates, decodes
// and encodes. The names are data: providers.wallet_protocol holds one,
// validated here (CheckWalletProtocol), not by a CHECK in the database.
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
	// WalletProtocolTBB is The Bet Brothers' supplier-side Game Events
	// wallet, /provider/tbb/{provider}/wallet (docs/protocols/tbb.md):
	// every request's raw body signed HMAC-SHA256 with the provider's
	// secret, hex in X-REQUEST-SIGN.
	WalletProtocolTBB = "tbb"
	// DefaultWalletProtocol is the protocol of a provider that names none.
	DefaultWalletProtocol = WalletProtocolPitboss
)

// WalletProtocolSpec is one wallet protocol as the rest of the system
// needs to know it: its name, the credential its calls are checked with,
// and how long its rounds may stay open.
type WalletProtocolSpec struct {
	// Name is the protocol's name: providers.wallet_protocol, the CLI's
	// --wallet-protocol, the simulator's and the bench's protocol.
	Name string
	// PublicKey: its calls are signed with RSA, verified with the
	// provider's WalletPublicKey, which it must have.
	PublicKey bool
	// RoundAutoClose is the protocol document's own limit on an open
	// round (0: it names none; PITBOSS_ROUND_AUTO_CLOSE_AFTER applies).
	RoundAutoClose time.Duration
	// AmountDigits is how many decimals of the currency's unit the
	// protocol's integer amounts carry (Caleta's 5: 1/100000 of a unit),
	// which bounds the largest balance it can say (MaxBalance); 0: amounts
	// in the currency's own minor units or decimal text, bound only by the
	// ledger's.
	AmountDigits int
	// Doc is its page under docs/protocols (or docs/).
	Doc string
}

// walletProtocols is the one registration of a protocol's name and
// properties; its dialect is registered by name in package api
// (dialects.go), its simulator dialect in package providersim, and tests
// hold the three together.
var walletProtocols = []WalletProtocolSpec{
	{Name: WalletProtocolPitboss, Doc: "docs/provider-wallet.md"},
	{Name: WalletProtocolCaleta, PublicKey: true, RoundAutoClose: CaletaRoundAutoClose, AmountDigits: 5,
		Doc: "docs/protocols/caleta.md"},
	{Name: WalletProtocolRedTiger, Doc: "docs/protocols/redtiger.md"},
	{Name: WalletProtocolEvolution, Doc: "docs/protocols/evolution.md"},
	{Name: WalletProtocolTBB, Doc: "docs/protocols/tbb.md"},
}

// MaxBalance is the largest balance, in cur's minor units, the protocol
// can say: an int64 of its AmountDigits, or the ledger's own int64 of
// minor units. 0 when cur has more decimals than the protocol carries (it
// cannot say cur's amounts at all).
func (p WalletProtocolSpec) MaxBalance(cur domain.Currency) int64 {
	extra := p.AmountDigits - cur.Exponent()
	switch {
	case p.AmountDigits == 0:
		return math.MaxInt64
	case extra < 0:
		return 0
	}
	step := int64(1)
	for range extra {
		step *= 10
	}
	return math.MaxInt64 / step
}

// WalletProtocols lists every protocol's name.
var WalletProtocols = func() []string {
	names := make([]string, len(walletProtocols))
	for i, p := range walletProtocols {
		names[i] = p.Name
	}
	return names
}()

// WalletProtocolOf is the protocol named name, and whether there is one.
func WalletProtocolOf(name string) (WalletProtocolSpec, bool) {
	i := slices.IndexFunc(walletProtocols, func(p WalletProtocolSpec) bool { return p.Name == name })
	if i < 0 {
		return WalletProtocolSpec{}, false
	}
	return walletProtocols[i], true
}

// CheckWalletProtocol refuses a protocol that is not one of
// WalletProtocols, as a *FieldError on field.
func CheckWalletProtocol(field, protocol string) error {
	if _, ok := WalletProtocolOf(protocol); ok {
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
	if p, _ := WalletProtocolOf(protocol); p.PublicKey && strings.TrimSpace(publicKeyPEM) == "" {
		return &FieldError{Field: field, Message: "a " + protocol + " provider needs its RSA public key (PEM) to verify its requests"}
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
