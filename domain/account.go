package domain

import (
	"fmt"
	"strings"
)

// AccountKind says what an account stands for and whether it may go below
// zero. Wallets never may; contra accounts (house, external) mirror money
// that sits outside a wallet and carry the opposite sign by design.
type AccountKind struct{ name string }

// The account kinds. Small struct values, so no one invents a kind.
var (
	KindClientWallet = AccountKind{"client"}   // an operator's prefunded float, per currency
	KindPlayerWallet = AccountKind{"player"}   // a player's game wallet, per client+player+currency
	KindHouse        = AccountKind{"house"}    // game results, per client+provider+currency
	KindExternal     = AccountKind{"external"} // money outside the ledger (the operator's own books)
	// KindUnknown is any other id. It is treated like a wallet: it may not
	// go below zero, so a malformed id can never mint money.
	KindUnknown = AccountKind{"unknown"}
)

// String returns the kind's stable name.
func (k AccountKind) String() string { return k.name }

// MayGoNegative reports whether balances of this kind may be below zero.
func (k AccountKind) MayGoNegative() bool { return k == KindHouse || k == KindExternal }

// AccountID names one account in one currency, e.g.
// "player:acme:p-17:EUR". It is also the id of the account's event stream.
type AccountID string

// ClientWallet is the account of client in currency c.
func ClientWallet(client string, c Currency) AccountID {
	return AccountID("client:" + client + ":" + c.code)
}

// PlayerWallet is the game wallet of a player of client in currency c.
func PlayerWallet(client, player string, c Currency) AccountID {
	return AccountID("player:" + client + ":" + player + ":" + c.code)
}

// HouseAccount collects game results of provider for client in currency c.
func HouseAccount(client, provider string, c Currency) AccountID {
	return AccountID("house:" + client + ":" + provider + ":" + c.code)
}

// ExternalAccount mirrors money of client held outside the ledger.
func ExternalAccount(client string, c Currency) AccountID {
	return AccountID("external:" + client + ":" + c.code)
}

// Kind returns the account's kind from its id.
func (a AccountID) Kind() AccountKind {
	switch {
	case strings.HasPrefix(string(a), "player:"):
		return KindPlayerWallet
	case strings.HasPrefix(string(a), "client:"):
		return KindClientWallet
	case strings.HasPrefix(string(a), "house:"):
		return KindHouse
	case strings.HasPrefix(string(a), "external:"):
		return KindExternal
	default:
		return KindUnknown
	}
}

// CurrencyCode returns the currency part of the id.
func (a AccountID) CurrencyCode() string {
	s := string(a)
	return s[strings.LastIndexByte(s, ':')+1:]
}

// ParseAccountID reads s as an account id: a kind ("client", "player",
// "house" or "external"), the client, for a player wallet the player and
// for a house account the provider, and a currency code, separated by ':'.
// Every id in it must pass ValidateID (the rule each one passed on its way
// into the ledger) and the code must look like a currency code. Whether
// the currency is configured is not checked: ids read back from the store
// outlive the configuration that made them. Read the parts with Kind,
// Client, Player, Provider and CurrencyCode instead of splitting the text.
func ParseAccountID(s string) (AccountID, error) {
	a := AccountID(s)
	kind, client, owner, code, ok := a.split()
	if !ok {
		return "", fmt.Errorf("account id %q is not kind:client[:player|provider]:currency: %w", clip(s), ErrInvalidArgument)
	}
	if err := ValidateID("client", client); err != nil {
		return "", fmt.Errorf("account id %q: %w", clip(s), err)
	}
	switch kind {
	case KindPlayerWallet:
		if err := ValidateID("player", owner); err != nil {
			return "", fmt.Errorf("account id %q: %w", clip(s), err)
		}
	case KindHouse:
		if err := ValidateID("provider", owner); err != nil {
			return "", fmt.Errorf("account id %q: %w", clip(s), err)
		}
	}
	if !validCode(code) {
		return "", fmt.Errorf("account id %q: currency code %q: %w", clip(s), clip(code), ErrInvalidArgument)
	}
	return a, nil
}

// Client returns the client the account belongs to; "" when a is not a
// well-formed id.
func (a AccountID) Client() string {
	_, client, _, _, _ := a.split()
	return client
}

// Player returns the player of a player wallet; "" for any other account.
func (a AccountID) Player() string {
	if kind, _, owner, _, ok := a.split(); ok && kind == KindPlayerWallet {
		return owner
	}
	return ""
}

// Provider returns the provider of a house account; "" for any other
// account.
func (a AccountID) Provider() string {
	if kind, _, owner, _, ok := a.split(); ok && kind == KindHouse {
		return owner
	}
	return ""
}

// split cuts a into its parts without allocating. owner is the player or
// the provider for the kinds that have one. ok is false when the kind is
// unknown or the number of parts does not fit it; the parts themselves are
// not checked.
func (a AccountID) split() (kind AccountKind, client, owner, code string, ok bool) {
	prefix, rest, found := strings.Cut(string(a), ":")
	if !found {
		return KindUnknown, "", "", "", false
	}
	hasOwner := false
	switch prefix {
	case "client":
		kind = KindClientWallet
	case "external":
		kind = KindExternal
	case "player":
		kind, hasOwner = KindPlayerWallet, true
	case "house":
		kind, hasOwner = KindHouse, true
	default:
		return KindUnknown, "", "", "", false
	}
	if client, rest, found = strings.Cut(rest, ":"); !found {
		return KindUnknown, "", "", "", false
	}
	if hasOwner {
		if owner, rest, found = strings.Cut(rest, ":"); !found {
			return KindUnknown, "", "", "", false
		}
	}
	if strings.IndexByte(rest, ':') >= 0 {
		return KindUnknown, "", "", "", false
	}
	return kind, client, owner, rest, true
}

// MaxIDLength bounds client, player, provider, game, round and external
// transaction ids.
const MaxIDLength = 128

// ValidateID checks an identifier given by a client or a provider: 1 to 128
// characters of letters, digits and . _ - @ (no ':' so account ids stay
// unambiguous, no control characters).
func ValidateID(field, v string) error {
	if v == "" {
		return fmt.Errorf("%s is required: %w", field, ErrInvalidArgument)
	}
	if len(v) > MaxIDLength {
		return fmt.Errorf("%s is longer than %d characters: %w", field, MaxIDLength, ErrInvalidArgument)
	}
	for _, r := range v {
		ok := r == '.' || r == '_' || r == '-' || r == '@' ||
			(r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
		if !ok {
			return fmt.Errorf("%s %q has a character outside [A-Za-z0-9._@-]: %w", field, clip(v), ErrInvalidArgument)
		}
	}
	return nil
}
