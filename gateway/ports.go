package gateway

import (
	"context"
	"slices"
	"time"
)

// Scopes a key may hold.
const (
	ScopeLaunch            = "launch"
	ScopeTransactionsRead  = "transactions:read"
	ScopeTransactionsWrite = "transactions:write"
	ScopeWalletRead        = "wallet:read"
	ScopeReportsRead       = "reports:read"
	ScopeAuditRead         = "audit:read"
	// ScopeDeliveriesRead reads the delivery log, webhook endpoints and the
	// forwarded-callback setting; ScopeDeliveriesWrite also manages them
	// (webhook CRUD, secret rotation, re-send).
	ScopeDeliveriesRead  = "deliveries:read"
	ScopeDeliveriesWrite = "deliveries:write"
	// ScopePromotionsRead lists free-bet campaigns and their rewards;
	// ScopePromotionsWrite also creates campaigns, grants and cancels
	// rewards (docs/promotions.md).
	ScopePromotionsRead  = "promotions:read"
	ScopePromotionsWrite = "promotions:write"
)

// AllScopes lists every scope, for a sandbox key.
var AllScopes = []string{ScopeLaunch, ScopeTransactionsRead, ScopeTransactionsWrite, ScopeWalletRead,
	ScopeReportsRead, ScopeAuditRead, ScopeDeliveriesRead, ScopeDeliveriesWrite, ScopePromotionsRead,
	ScopePromotionsWrite}

// Principal is the client behind an authenticated API key.
type Principal struct {
	ClientID    string
	KeyID       string
	Environment string
	Scopes      []string
	// Plan is the client's plan tier: which rate limit applies to the key.
	Plan string
}

// Has reports whether the key holds scope.
func (p Principal) Has(scope string) bool { return slices.Contains(p.Scopes, scope) }

// Keys finds the key whose SHA-256 hash is given. An unknown, revoked or
// expired key is domain.ErrNotFound.
type Keys interface {
	AuthenticateKey(ctx context.Context, keyHash []byte) (Principal, error)
}

// Provider is a game provider known to the gateway.
type Provider struct {
	ID      string
	Name    string
	Secret  string
	Enabled bool
	// SignatureScheme is how its wallet calls are signed: SignatureV1
	// (the body alone, legacy) or SignatureV2. Empty when creating means
	// DefaultSignatureScheme, and when updating, the scheme it has.
	SignatureScheme string
	// WalletProtocol is the protocol its wallet calls come in
	// (WalletProtocols); empty when creating means DefaultWalletProtocol,
	// and when updating, the protocol it has.
	WalletProtocol string
	// WalletPublicKey is its RSA public key (PEM) that verifies the calls
	// of a protocol signed with RSA (caleta); empty for the others. Empty
	// when updating keeps the key it has.
	WalletPublicKey string
	// LaunchSecret is our own credential for its launch calls (migration
	// 00025, ProviderRoute.LaunchSecret), opened from its sealed column;
	// empty when none is set. Never listed.
	LaunchSecret string
	// LaunchKeyFingerprint tells an operator which launch credential is
	// set without revealing it: the hex SHA-256 of the DER of a private
	// key's public half, "set" for a token, empty without one.
	LaunchKeyFingerprint string
}

// Game is one game of a provider.
type Game struct {
	ID         string
	ProviderID string
	Name       string
	Category   string
	Enabled    bool
	// Code is the provider's own code of the game, sent in its launch
	// request (migration 00007); the catalog fills in ID when none is set.
	Code string
	// BlockedCountries are the ISO 3166-1 alpha-2 countries whose players
	// may not launch the game (migration 00032, from the provider's game
	// list): upper case, sorted, each once; empty: blocked nowhere.
	BlockedCountries []string
}

// GameSession is a launched game: what provider wallet calls are checked
// against.
type GameSession struct {
	ID         string
	ClientID   string
	PlayerID   string
	ProviderID string
	GameID     string
	Currency   string
	// LaunchTxID is the launch's transaction id: the ExternalTxID of the
	// session's game_launched event and the launch answer's transaction_id.
	LaunchTxID string
	ReturnURL  string
	ExpiresAt  time.Time
	// OperatorToken is a seamless client's own player token, from the
	// launch's session_token: sent with every call to the client's
	// wallet in the session. Empty for a ledger client's session.
	OperatorToken string
}

// Catalog reads providers and games. Unknown ids are domain.ErrNotFound.
type Catalog interface {
	Provider(ctx context.Context, id string) (Provider, error)
	Game(ctx context.Context, id string) (Game, error)
}

// Sessions stores game sessions. An unknown id is domain.ErrNotFound.
type Sessions interface {
	CreateSession(ctx context.Context, s GameSession) error
	Session(ctx context.Context, id string) (GameSession, error)
}

// AccountBalance is one wallet's committed balance.
type AccountBalance struct {
	Currency     string
	Minor        int64
	LastPosition int64
}

// Wallets lists the committed balances of a client's own wallets (player
// empty) or of one player's wallets, in every currency they hold.
type Wallets interface {
	WalletBalances(ctx context.Context, clientID, playerID string) ([]AccountBalance, error)
}
