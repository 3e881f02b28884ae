package gateway

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pitboss/pitboss/domain"
)

// Wallet modes of a client (docs/seamless-wallet.md).
const (
	// WalletModeLedger: Pitboss holds the players' money (deposits,
	// transfers, the signed launch's balance); the default.
	WalletModeLedger = "ledger"
	// WalletModeSeamless: the client's own wallet decides every bet and
	// win in real time; the ledger records what it decided.
	WalletModeSeamless = "seamless"
)

// Operator wallet protocols: the protocol a seamless client's own wallet
// speaks, registered once like the provider wallet protocols.
const (
	// OperatorProtocolValkyriePAM is the Valkyrie PAM API 0.6.0.
	OperatorProtocolValkyriePAM = "valkyrie-pam"
	// OperatorProtocolTBB is The Bet Brothers' operator Wallet API.
	OperatorProtocolTBB = "tbb"
)

// OperatorProtocolSpec is an operator wallet protocol as the rest of the
// system needs to know it.
type OperatorProtocolSpec struct {
	Name string
	// Sessions: it has a session call, which a launch asks (the launch
	// must then carry the operator's session_token).
	Sessions bool
	// Lookup: it can look a movement up, which resolves an unknown
	// outcome before compensating it.
	Lookup bool
	// OperatorID: its calls name the operator (TBB's casino id), which
	// the client's settings must then give.
	OperatorID bool
}

var operatorProtocols = []OperatorProtocolSpec{
	{Name: OperatorProtocolValkyriePAM, Sessions: true, Lookup: true},
	{Name: OperatorProtocolTBB},
}

// OperatorProtocols lists every operator wallet protocol's name.
var OperatorProtocols = func() []string {
	names := make([]string, len(operatorProtocols))
	for i, p := range operatorProtocols {
		names[i] = p.Name
	}
	return names
}()

// OperatorProtocolOf is the operator wallet protocol named name.
func OperatorProtocolOf(name string) (OperatorProtocolSpec, bool) {
	i := slices.IndexFunc(operatorProtocols, func(p OperatorProtocolSpec) bool { return p.Name == name })
	if i < 0 {
		return OperatorProtocolSpec{}, false
	}
	return operatorProtocols[i], true
}

// ClientWallet is a client's wallet mode and, for a seamless client, its
// own wallet's address, protocol and credential.
type ClientWallet struct {
	Mode     string
	URL      string
	Protocol string
	// OperatorID is the operator's id in the protocol's calls, where it
	// has one.
	OperatorID string
	// Credential is the bearer token (valkyrie-pam) or the HMAC secret
	// (tbb), opened from its sealed column; never listed. Empty when
	// setting keeps the one stored.
	Credential string
	// CredentialSet tells whether one is stored, without revealing it.
	CredentialSet bool
	// UpdatedAt is when the settings last changed (cache keys).
	UpdatedAt time.Time
}

// Seamless reports whether the client's own wallet decides its players'
// money.
func (w ClientWallet) Seamless() bool { return w.Mode == WalletModeSeamless }

// ClientWallets stores clients' wallet settings. An unknown client is
// domain.ErrNotFound.
type ClientWallets interface {
	ClientWallet(ctx context.Context, clientID string) (ClientWallet, error)
	// SetClientWallet replaces the client's settings; an empty
	// Credential keeps the stored one.
	SetClientWallet(ctx context.Context, clientID string, w ClientWallet) error
}

// MaxCredentialLength bounds an operator wallet's credential.
const MaxCredentialLength = 1024

// CheckClientWallet refuses settings that cannot work, as a *FieldError:
// a mode that is none of the two; for seamless, a protocol that is not
// registered, a URL that fails the callback address rule (private
// targets only where allowPrivate: sandbox clients), a missing operator id
// where the protocol needs one, a credential that is no one-line text.
// hadCredential says whether one is stored already.
func CheckClientWallet(w ClientWallet, allowPrivate, hadCredential bool) error {
	switch w.Mode {
	case WalletModeLedger:
		if w.URL != "" || w.Protocol != "" || w.Credential != "" || w.OperatorID != "" {
			return &FieldError{Field: "mode", Message: "a ledger client has no operator wallet: leave url, protocol, " +
				"operator_id and credential out"}
		}
		return nil
	case WalletModeSeamless:
	default:
		return &FieldError{Field: "mode", Message: fmt.Sprintf("wallet mode %q is not one of %s, %s",
			ClipValue(w.Mode), WalletModeLedger, WalletModeSeamless)}
	}
	spec, ok := OperatorProtocolOf(w.Protocol)
	if !ok {
		return &FieldError{Field: "protocol", Message: fmt.Sprintf("operator wallet protocol %q is not one of %s",
			ClipValue(w.Protocol), strings.Join(OperatorProtocols, ", ")),
			Details: map[string]any{"operator_protocols": OperatorProtocols}}
	}
	if err := CheckCallbackURL("url", w.URL, allowPrivate); err != nil {
		return err
	}
	if spec.OperatorID && w.OperatorID == "" {
		return &FieldError{Field: "operator_id", Message: "the " + spec.Name + " protocol names the operator in every call: operator_id is required"}
	}
	if w.OperatorID != "" {
		if err := domain.ValidateID("operator_id", w.OperatorID); err != nil {
			return &FieldError{Field: "operator_id", Message: err.Error()}
		}
	}
	switch {
	case w.Credential == "" && !hadCredential:
		return &FieldError{Field: "credential", Message: "the operator wallet's credential is required (its API token or signing secret)"}
	case len(w.Credential) > MaxCredentialLength || strings.ContainsFunc(w.Credential, func(r rune) bool { return r < ' ' || r == 0x7f }):
		return &FieldError{Field: "credential", Message: fmt.Sprintf("the credential must be one line of at most %d bytes", MaxCredentialLength)}
	}
	return nil
}
