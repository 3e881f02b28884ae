package audit

import (
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"strings"
	"time"

	"github.com/pitboss/pitboss/domain"
)

// A signed checkpoint (docs/audit.md, "Signed checkpoints") is a statement
// by the service, signed with Ed25519, of where the ledger stood: a
// position, the chain hash there, when it was signed and the sums of the
// postings up to there per currency. The platform's checkpoint covers every
// event; a client's covers only its own events (its streams, data.client_id
// its id) and stands at its last event at or below the platform's position,
// so no client learns another's volume.
//
// The signed bytes are the payload's canonical JSON: the fields of
// CheckpointPayload in their declared order, no white space, no HTML
// escaping, as EncodeCheckpoint writes them. A verifier never re-encodes:
// it checks the signature over the bytes it was given, then reads them.

// Checkpoint formats and scopes.
const (
	CheckpointFormat        = "pitboss.checkpoint.v1"
	CheckpointScopePlatform = "platform"
	CheckpointScopeClient   = "client"
	// CheckpointTimeLayout is the fixed-width UTC time of signed_at.
	CheckpointTimeLayout = "2006-01-02T15:04:05.000000Z"
)

// CheckpointPayload is what a checkpoint's signature covers.
type CheckpointPayload struct {
	Format    string `json:"format"`     // CheckpointFormat
	Scope     string `json:"scope"`      // "platform" or "client"
	ClientID  string `json:"client_id"`  // the client of a client checkpoint; "" for the platform's
	Position  int64  `json:"position"`   // the platform's head, or the client's last event at or below it
	ChainHash string `json:"chain_hash"` // lower-case hex of the chain's hash at Position
	SignedAt  string `json:"signed_at"`  // CheckpointTimeLayout
	KeyID     string `json:"key_id"`     // the signing key's id (CheckpointKeyID)
	// Totals are per currency (in code order) the postings of the events
	// covered, up to Position: how many, their exact sum (zero in a sound
	// ledger) and their debits (the negative postings, negated: the volume
	// moved), as decimal text at the currency's precision.
	Totals []CurrencyTotal `json:"totals"`
}

// SignedCheckpoint is a stored checkpoint: its payload bytes and the
// signature over them.
type SignedCheckpoint struct {
	ID        int64
	ClientID  string // "" for the platform's
	Position  int64
	ChainHash []byte
	SignedAt  time.Time
	KeyID     string
	Payload   []byte
	Signature []byte
	PublicKey ed25519.PublicKey
}

// CheckpointKey is a signing key's public part.
type CheckpointKey struct {
	KeyID     string
	PublicKey ed25519.PublicKey
	CreatedAt time.Time
	Active    bool // the key new checkpoints are signed with
}

// CheckpointKeyID is a public key's id: the first 8 bytes of its SHA-256,
// lower-case hex.
func CheckpointKeyID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:8])
}

// PublicKeyPEM is pub as a PEM "PUBLIC KEY" block (SubjectPublicKeyInfo),
// the form `openssl pkeyutl -pubin -inkey` reads.
func PublicKeyPEM(pub ed25519.PublicKey) string {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil { // only for a key of the wrong size
		return ""
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}

// EncodeCheckpoint returns p's canonical bytes.
func EncodeCheckpoint(p CheckpointPayload) ([]byte, error) {
	if p.Totals == nil {
		p.Totals = []CurrencyTotal{}
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	b, err := EncodeCanonical(p)
	if err != nil {
		return nil, fmt.Errorf("encode checkpoint: %w", err)
	}
	return b, nil
}

// ParseCheckpoint reads payload bytes, which must be canonical: exactly what
// EncodeCheckpoint writes for the values they hold (no other key, order or
// spacing), so one checkpoint has one byte form.
func ParseCheckpoint(b []byte) (CheckpointPayload, error) {
	return DecodeCanonical(b, "checkpoint payload", EncodeCheckpoint)
}

var (
	hexHash   = regexp.MustCompile(`^[0-9a-f]{64}$`)
	hexKeyID  = regexp.MustCompile(`^[0-9a-f]{16}$`)
	decimalRe = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?$`)
	// looseDecimalRe also allows leading zeros (CanonicalAmount's input).
	looseDecimalRe = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)
)

func (p CheckpointPayload) validate() error {
	var errs []error
	if p.Format != CheckpointFormat {
		errs = append(errs, fmt.Errorf("format %q, want %q", p.Format, CheckpointFormat))
	}
	switch p.Scope {
	case CheckpointScopePlatform:
		if p.ClientID != "" {
			errs = append(errs, errors.New("a platform checkpoint names no client"))
		}
	case CheckpointScopeClient:
		if p.ClientID == "" || strings.Contains(p.ClientID, ":") {
			errs = append(errs, fmt.Errorf("client_id %q is not a client id", p.ClientID))
		}
	default:
		errs = append(errs, fmt.Errorf("scope %q, want platform or client", p.Scope))
	}
	if p.Position < 1 {
		errs = append(errs, fmt.Errorf("position %d < 1", p.Position))
	}
	if !hexHash.MatchString(p.ChainHash) {
		errs = append(errs, errors.New("chain_hash is not 64 lower-case hex digits"))
	}
	if t, err := time.Parse(CheckpointTimeLayout, p.SignedAt); err != nil || t.Format(CheckpointTimeLayout) != p.SignedAt {
		errs = append(errs, fmt.Errorf("signed_at %q is not %s", p.SignedAt, CheckpointTimeLayout))
	}
	if !hexKeyID.MatchString(p.KeyID) {
		errs = append(errs, errors.New("key_id is not 16 lower-case hex digits"))
	}
	for i, t := range p.Totals {
		if i > 0 && p.Totals[i-1].Currency >= t.Currency {
			errs = append(errs, fmt.Errorf("totals not in strictly increasing currency order at %q", t.Currency))
		}
		if t.Currency == "" || t.Postings < 0 || !decimalRe.MatchString(t.Sum) || !decimalRe.MatchString(t.Debits) {
			errs = append(errs, fmt.Errorf("total %d (%q) is malformed", i, t.Currency))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("checkpoint payload: %w", errors.Join(errs...))
	}
	return nil
}

// SignCheckpoint encodes p, signed with priv (whose id must be p.KeyID).
func SignCheckpoint(p CheckpointPayload, priv ed25519.PrivateKey) (payload, sig []byte, err error) {
	pub, ok := priv.Public().(ed25519.PublicKey)
	if !ok || CheckpointKeyID(pub) != p.KeyID {
		return nil, nil, fmt.Errorf("checkpoint key_id %s is not the signing key's", p.KeyID)
	}
	if payload, err = EncodeCheckpoint(p); err != nil {
		return nil, nil, err
	}
	return payload, ed25519.Sign(priv, payload), nil
}

// VerifyCheckpointSignature checks sig over payload with pub and that the
// payload names pub's key id; it returns the parsed payload.
func VerifyCheckpointSignature(payload, sig []byte, pub ed25519.PublicKey) (CheckpointPayload, error) {
	if len(pub) != ed25519.PublicKeySize {
		return CheckpointPayload{}, fmt.Errorf("public key is %d bytes, want %d", len(pub), ed25519.PublicKeySize)
	}
	if !ed25519.Verify(pub, payload, sig) {
		return CheckpointPayload{}, errors.New("the signature does not verify: the payload (or the signature) was altered, or another key signed it")
	}
	p, err := ParseCheckpoint(payload)
	if err != nil {
		return p, err
	}
	if id := CheckpointKeyID(pub); p.KeyID != id {
		return p, fmt.Errorf("the payload names key %s but key %s signed it", p.KeyID, id)
	}
	return p, nil
}

// CanonicalAmount writes the decimal text s (such as a Postgres numeric
// sum) at the precision of currency code, as the checkpoint's totals and
// verify's report do. More decimals than the currency has are an error
// unless they are zeros.
func CanonicalAmount(s, code string) (string, error) {
	exp := currencyExp(code)
	if !looseDecimalRe.MatchString(s) {
		return "", fmt.Errorf("amount %q is not decimal text", s)
	}
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, frac, _ := strings.Cut(s, ".")
	if len(frac) > exp {
		if strings.Trim(frac[exp:], "0") != "" {
			return "", fmt.Errorf("amount %q has more than the %d decimals of %s", s, exp, code)
		}
		frac = frac[:exp]
	}
	frac += strings.Repeat("0", exp-len(frac))
	var x big.Int
	if _, ok := x.SetString(whole+frac, 10); !ok {
		return "", fmt.Errorf("amount %q is not decimal text", s)
	}
	if neg {
		x.Neg(&x)
	}
	return formatBig(&x, exp), nil
}

func currencyExp(code string) int {
	if cur, err := domain.ParseCurrency(code); err == nil {
		return cur.Exponent()
	}
	return 0
}

// CheckpointTally recomputes a checkpoint from the event rows: fed every
// row in position order up to the checkpoint's position, it holds the
// totals of the rows the checkpoint covers (every row for the platform, the
// client's own for a client) and the last such row's position.
type CheckpointTally struct {
	client   string // "" for the platform
	totals   currencyTotals
	position int64
	hash     []byte
	bad      []string
}

// NewCheckpointTally tallies for client ("" for the platform).
func NewCheckpointTally(client string) *CheckpointTally {
	return &CheckpointTally{client: client, totals: currencyTotals{}}
}

// Add counts r if the checkpoint covers it.
func (t *CheckpointTally) Add(r Record) {
	if t.client != "" && StreamClient(r.StreamID) != t.client {
		return
	}
	e, err := domain.DecodeBody(r.Body)
	if err != nil {
		t.bad = append(t.bad, fmt.Sprintf("position %d: the body does not decode: %v", r.Position, err))
		return
	}
	if t.client != "" && e.Data.ClientID != t.client {
		return
	}
	t.position, t.hash = r.Position, r.Hash
	for _, p := range e.Data.Postings {
		code := p.Account.CurrencyCode()
		cur, err := domain.ParseCurrency(code)
		var m domain.Money
		if err == nil {
			m, err = domain.ParseMoney(p.Amount, cur)
		}
		if err != nil {
			t.bad = append(t.bad, fmt.Sprintf("position %d: posting %s %q: %v", r.Position, p.Account, p.Amount, err))
			continue
		}
		debit := int64(0)
		if m.Minor() < 0 {
			debit = -m.Minor()
		}
		t.totals.add(code, 1, m.Minor(), debit)
	}
}

// Totals returns the tallied totals in currency order.
func (t *CheckpointTally) Totals() []CurrencyTotal { return t.totals.list() }

// Last is the position and stored hash of the last row counted (0 and nil
// when none was).
func (t *CheckpointTally) Last() (int64, []byte) { return t.position, t.hash }

// Problems lists rows that could not be read.
func (t *CheckpointTally) Problems() []string { return t.bad }

// CheckpointRecord is a signed checkpoint as it is handed out: by
// GET /api/v1/audit/checkpoints, on Kafka, by `pitboss checkpoint get`, and
// read by `pitboss verify --checkpoint FILE`. Payload is the signed bytes
// as a JSON string (they are ASCII JSON, so any JSON parser gives them
// back exactly); encode it as UTF-8 to verify.
type CheckpointRecord struct {
	ID           int64  `json:"id"`
	KeyID        string `json:"key_id"`
	Payload      string `json:"payload"`
	Signature    string `json:"signature"`      // standard base64 of the 64-byte Ed25519 signature
	PublicKey    string `json:"public_key"`     // standard base64 of the raw 32-byte public key
	PublicKeyPEM string `json:"public_key_pem"` // the same key as PEM (SubjectPublicKeyInfo)
}

// Record is cp as it is handed out.
func (cp SignedCheckpoint) Record() CheckpointRecord {
	return CheckpointRecord{ID: cp.ID, KeyID: cp.KeyID, Payload: string(cp.Payload),
		Signature: base64.StdEncoding.EncodeToString(cp.Signature),
		PublicKey: base64.StdEncoding.EncodeToString(cp.PublicKey), PublicKeyPEM: PublicKeyPEM(cp.PublicKey)}
}

// Decode returns the record's payload, signature and public key bytes.
func (r CheckpointRecord) Decode() (payload, sig []byte, pub ed25519.PublicKey, err error) {
	if sig, err = base64.StdEncoding.DecodeString(r.Signature); err != nil {
		return nil, nil, nil, fmt.Errorf("signature is not base64: %w", err)
	}
	if pub, err = base64.StdEncoding.DecodeString(r.PublicKey); err != nil {
		return nil, nil, nil, fmt.Errorf("public_key is not base64: %w", err)
	}
	return []byte(r.Payload), sig, pub, nil
}
