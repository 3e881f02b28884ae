// Package statement closes a period (a month or a day) of a client's play
// at one provider into a statement (docs/statements.md, issue 18 item 3):
// an immutable record of the period's GGR and commission per currency, the
// ledger position and chain hash it was computed at, the signed checkpoint
// it stands on, the late changes of earlier closed periods it carries, and
// totals — signed with the service's Ed25519 checkpoint key, so an auditor
// checks it with openssl or a few lines of Python, without our code.
//
// The signed bytes are the payload's canonical JSON, as for checkpoints
// (package audit): the fields of Payload in their declared order, no white
// space, no HTML escaping. A verifier checks the signature over the bytes
// it was given, then reads them; it never re-encodes.
package statement

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/pitboss/pitboss/audit"
)

// Format is the payload's format name.
const Format = "pitboss.statement.v1"

// Period kinds.
const (
	PeriodMonth = "month"
	PeriodDay   = "day"
)

// TimeLayout is the fixed-width UTC time of closed_at (as a checkpoint's
// signed_at).
const TimeLayout = audit.CheckpointTimeLayout

// Payload is what a statement's signature covers. Amounts are decimal text
// at the currency's precision.
type Payload struct {
	Format   string `json:"format"` // Format
	ID       string `json:"id"`
	ClientID string `json:"client_id"`
	Provider string `json:"provider"`
	Period   string `json:"period"` // PeriodMonth or PeriodDay
	From     string `json:"from"`   // the period's first UTC day
	To       string `json:"to"`     // its last UTC day (included)
	ClosedAt string `json:"closed_at"`
	ClosedBy string `json:"closed_by"`
	// Position is the client's last event of the period (0 when the
	// client had none) and ChainHash the chain's hash there (lower-case
	// hex; "" with position 0): every event the statement adds up is at or
	// below it.
	Position  int64  `json:"position"`
	ChainHash string `json:"chain_hash"`
	// CheckpointID is the client's signed checkpoint the statement stands
	// on: the first at or after Position (0 when Position is 0).
	CheckpointID int64 `json:"checkpoint_id"`
	// LogSize and LogRoot are the client's verifiable log at Position
	// (docs/audit.md, "The verifiable log"): how many of the client's
	// events are at or below it, and the root of their tree (standard
	// base64, as a C2SP checkpoint writes it). Absent (0 and "") with
	// Position 0, and from statements closed before the log existed, so
	// their bytes still parse.
	LogSize int64  `json:"log_size,omitempty"`
	LogRoot string `json:"log_root,omitempty"`
	KeyID   string `json:"key_id"`
	// Lines are the period's own figures per currency, in currency order.
	Lines []Line `json:"lines"`
	// Late are changes to earlier closed periods of the same client and
	// provider found since they were closed (events booked in them after
	// their close), carried into this statement; each is carried once.
	Late []Late `json:"late"`
	// Totals are Lines plus Late per currency, in currency order.
	Totals []Total `json:"totals"`
	// Reporting is the period's own lines in a reporting currency, when
	// one was asked for.
	Reporting *Reporting `json:"reporting"`
}

// Line is a currency's figures of the period, as the GGR and commission
// reports compute them.
type Line struct {
	Currency          string `json:"currency"`
	Bets              string `json:"bets"`
	BetRefunds        string `json:"bet_refunds"`
	Wins              string `json:"wins"`
	WinReversals      string `json:"win_reversals"`
	GGR               string `json:"ggr"`
	PromoBets         string `json:"promo_bets"`
	PromoBetRefunds   string `json:"promo_bet_refunds"`
	PromoWins         string `json:"promo_wins"`
	PromoWinReversals string `json:"promo_win_reversals"`
	PromoGGR          string `json:"promo_ggr"`
	// Jackpot money (docs/finance.md): absent from statements closed
	// before jackpot parts were booked apart, so their bytes still parse.
	JackpotWins         string `json:"jackpot_wins,omitempty"`
	JackpotWinReversals string `json:"jackpot_win_reversals,omitempty"`
	JackpotGGR          string `json:"jackpot_ggr,omitempty"`
	Rounds              int64  `json:"rounds"`
	Players             int64  `json:"players"`
	Commission          string `json:"commission"`
	// Rate is the commission rate of the deal applied ("" when none);
	// RateChanged says the deal changed within the period.
	Rate        string `json:"rate"`
	RateChanged bool   `json:"rate_changed"`
	// DealID and DealKind are the deal version the commission was worked
	// out with (the period's last day's; 0 and "" when none).
	DealID   int64  `json:"deal_id"`
	DealKind string `json:"deal_kind"`
}

// Late is the change of one earlier statement's period in one currency.
type Late struct {
	StatementID string `json:"statement_id"`
	From        string `json:"from"`
	To          string `json:"to"`
	Currency    string `json:"currency"`
	GGR         string `json:"ggr"`
	Commission  string `json:"commission"`
}

// Total is a currency's GGR and commission with the late changes.
type Total struct {
	Currency   string `json:"currency"`
	GGR        string `json:"ggr"`
	Commission string `json:"commission"`
}

// Reporting is the period's GGR and commission in a reporting currency, at
// each day's rate (docs/reporting-currency.md). When a rate is missing it
// is incomplete: GGR and Commission are null (never a zero) and
// MissingRateDays names the days.
type Reporting struct {
	Currency        string   `json:"currency"`
	Complete        bool     `json:"complete"`
	GGR             *string  `json:"ggr"`
	Commission      *string  `json:"commission"`
	MissingRateDays []string `json:"missing_rate_days"`
}

// Encode returns p's canonical bytes.
func Encode(p Payload) ([]byte, error) {
	if p.Lines == nil {
		p.Lines = []Line{}
	}
	if p.Late == nil {
		p.Late = []Late{}
	}
	if p.Totals == nil {
		p.Totals = []Total{}
	}
	if p.Reporting != nil && p.Reporting.MissingRateDays == nil {
		r := *p.Reporting
		r.MissingRateDays = []string{}
		p.Reporting = &r
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	b, err := audit.EncodeCanonical(p)
	if err != nil {
		return nil, fmt.Errorf("encode statement: %w", err)
	}
	return b, nil
}

// Parse reads payload bytes, which must be canonical (exactly what Encode
// writes for the values they hold), so one statement has one byte form.
func Parse(b []byte) (Payload, error) {
	return audit.DecodeCanonical(b, "statement payload", Encode)
}

var (
	hexHash  = regexp.MustCompile(`^[0-9a-f]{64}$`)
	hexKeyID = regexp.MustCompile(`^[0-9a-f]{16}$`)
	decimal  = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?$`)
)

func (p Payload) validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if p.Format != Format {
		bad("format %q, want %q", p.Format, Format)
	}
	if p.ID == "" || p.ClientID == "" || p.Provider == "" {
		bad("id, client_id and provider are required")
	}
	from, err1 := time.Parse(time.DateOnly, p.From)
	to, err2 := time.Parse(time.DateOnly, p.To)
	switch {
	case err1 != nil || err2 != nil:
		bad("from and to must be days")
	case p.Period == PeriodDay && !from.Equal(to):
		bad("a day's statement runs from and to the same day")
	case p.Period == PeriodMonth && (from.Day() != 1 || !to.Equal(from.AddDate(0, 1, -1))):
		bad("a month's statement runs from its first to its last day")
	case p.Period != PeriodDay && p.Period != PeriodMonth:
		bad("period %q, want month or day", p.Period)
	}
	if t, err := time.Parse(TimeLayout, p.ClosedAt); err != nil || t.Format(TimeLayout) != p.ClosedAt {
		bad("closed_at %q is not %s", p.ClosedAt, TimeLayout)
	}
	switch {
	case p.Position < 0:
		bad("position %d < 0", p.Position)
	case p.Position == 0 && (p.ChainHash != "" || p.CheckpointID != 0):
		bad("a statement without events names no chain hash or checkpoint")
	case p.Position > 0 && (!hexHash.MatchString(p.ChainHash) || p.CheckpointID < 1):
		bad("chain_hash must be 64 lower-case hex digits and checkpoint_id set")
	}
	if r, err := base64.StdEncoding.DecodeString(p.LogRoot); p.LogSize < 0 || (p.LogSize > 0) != (p.LogRoot != "") ||
		p.LogRoot != "" && (err != nil || len(r) != 32) || p.LogSize > 0 && p.Position == 0 {
		bad("log_size and log_root: a positive size and a base64 32-byte root, both or neither, and only with a position")
	}
	if !hexKeyID.MatchString(p.KeyID) {
		bad("key_id is not 16 lower-case hex digits")
	}
	for i, l := range p.Lines {
		if i > 0 && p.Lines[i-1].Currency >= l.Currency {
			bad("lines not in strictly increasing currency order at %q", l.Currency)
		}
		for _, a := range []string{l.Bets, l.BetRefunds, l.Wins, l.WinReversals, l.GGR, l.PromoBets, l.PromoBetRefunds,
			l.PromoWins, l.PromoWinReversals, l.PromoGGR, l.Commission} {
			if !decimal.MatchString(a) {
				bad("line %q: amount %q is not a decimal", l.Currency, a)
			}
		}
		for _, a := range []string{l.JackpotWins, l.JackpotWinReversals, l.JackpotGGR} {
			if a != "" && !decimal.MatchString(a) {
				bad("line %q: jackpot amount %q is not a decimal", l.Currency, a)
			}
		}
	}
	for _, l := range p.Late {
		if !decimal.MatchString(l.GGR) || !decimal.MatchString(l.Commission) || l.StatementID == "" {
			bad("late change of %q is malformed", l.StatementID)
		}
	}
	for i, t := range p.Totals {
		if i > 0 && p.Totals[i-1].Currency >= t.Currency {
			bad("totals not in strictly increasing currency order at %q", t.Currency)
		}
		if !decimal.MatchString(t.GGR) || !decimal.MatchString(t.Commission) {
			bad("total %q is malformed", t.Currency)
		}
	}
	if r := p.Reporting; r != nil {
		switch {
		case r.Complete != (r.GGR != nil) || r.Complete != (r.Commission != nil):
			bad("reporting: amounts are given exactly when complete")
		case r.Complete && (!decimal.MatchString(*r.GGR) || !decimal.MatchString(*r.Commission)):
			bad("reporting: amounts are not decimals")
		case r.Complete != (len(r.MissingRateDays) == 0):
			bad("reporting: missing rate days are listed exactly when incomplete")
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("statement payload: %w", errors.Join(errs...))
	}
	return nil
}

// Sign encodes p, signed with priv (whose id must be p.KeyID).
func Sign(p Payload, priv ed25519.PrivateKey) (payload, sig []byte, err error) {
	pub, ok := priv.Public().(ed25519.PublicKey)
	if !ok || audit.CheckpointKeyID(pub) != p.KeyID {
		return nil, nil, fmt.Errorf("statement key_id %s is not the signing key's", p.KeyID)
	}
	if payload, err = Encode(p); err != nil {
		return nil, nil, err
	}
	return payload, ed25519.Sign(priv, payload), nil
}

// Verify checks sig over payload with pub and that the payload names pub's
// key id; it returns the parsed payload.
func Verify(payload, sig []byte, pub ed25519.PublicKey) (Payload, error) {
	if len(pub) != ed25519.PublicKeySize {
		return Payload{}, fmt.Errorf("public key is %d bytes, want %d", len(pub), ed25519.PublicKeySize)
	}
	if !ed25519.Verify(pub, payload, sig) {
		return Payload{}, errors.New("the signature does not verify: the statement (or the signature) was altered, or another key signed it")
	}
	p, err := Parse(payload)
	if err != nil {
		return p, err
	}
	if id := audit.CheckpointKeyID(pub); p.KeyID != id {
		return p, fmt.Errorf("the statement names key %s but key %s signed it", p.KeyID, id)
	}
	return p, nil
}

// Signed is a stored statement: its payload bytes and the signature over
// them.
type Signed struct {
	ID        string
	ClientID  string
	Provider  string
	Period    string
	From, To  time.Time // the first and the last day
	ClosedAt  time.Time
	KeyID     string
	Payload   []byte
	Signature []byte
	PublicKey ed25519.PublicKey
}

// Record is a statement as it is handed out (the checkpoint record's
// shape): the signed bytes as a JSON string, the signature and the key.
type Record struct {
	ID           string `json:"id"`
	KeyID        string `json:"key_id"`
	Payload      string `json:"payload"`
	Signature    string `json:"signature"`      // standard base64 of the 64-byte Ed25519 signature
	PublicKey    string `json:"public_key"`     // standard base64 of the raw 32-byte public key
	PublicKeyPEM string `json:"public_key_pem"` // the same key as PEM (SubjectPublicKeyInfo)
}

// Record is s as it is handed out.
func (s Signed) Record() Record {
	return Record{ID: s.ID, KeyID: s.KeyID, Payload: string(s.Payload),
		Signature: base64.StdEncoding.EncodeToString(s.Signature),
		PublicKey: base64.StdEncoding.EncodeToString(s.PublicKey), PublicKeyPEM: audit.PublicKeyPEM(s.PublicKey)}
}
