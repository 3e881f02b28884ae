package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Provider kinds: the launch protocol a provider speaks. adapters/providers
// has one adapter per kind. See docs/providers-and-games.md.
const (
	// ProviderKindDemo is the built-in demo game: no outbound call, the
	// game page is served by Pitboss itself (GET /demo/play).
	ProviderKindDemo = "demo"
	// ProviderKindJSON posts JSON to {endpoint}/session and reads
	// {"launchUrl"}.
	ProviderKindJSON = "json"
	// ProviderKindFormXML posts a signed form to {endpoint}/launch and reads
	// an XML answer.
	ProviderKindFormXML = "form-xml"
	// ProviderKindCaleta asks Caleta's Games API, POST {endpoint}/api/game/url,
	// with a body signed RSA-SHA256 by our launch private key, and reads
	// {"url"} (docs/protocols/caleta.md#launch).
	ProviderKindCaleta = "caleta"
	// ProviderKindEvolution asks Evolution's user authentication, POST
	// {endpoint}/ua/v1/{casino key}/{casino token}, and reads {"entry"}
	// (docs/protocols/evolution.md#launch).
	ProviderKindEvolution = "evolution"
	// ProviderKindRedTiger builds Red Tiger's game address,
	// {endpoint}/{game code}?token=...; no call is made
	// (docs/protocols/redtiger.md#launch).
	ProviderKindRedTiger = "redtiger"
)

// ProviderKinds lists every kind, in the order docs list them.
var ProviderKinds = []string{ProviderKindDemo, ProviderKindJSON, ProviderKindFormXML, ProviderKindCaleta,
	ProviderKindEvolution, ProviderKindRedTiger}

// Balancing strategies over a provider's endpoints.
const (
	// BalancingPriority starts every launch at the first endpoint; the
	// others are backups.
	BalancingPriority = "priority"
	// BalancingRoundRobin starts each launch at the next endpoint in turn.
	BalancingRoundRobin = "round_robin"
)

// Bounds of a provider's routing settings (migration 00007 checks them too).
const (
	MaxProviderEndpoints   = 8
	MinProviderTimeout     = 50 * time.Millisecond
	MaxProviderTimeout     = 30 * time.Second
	MaxBreakerFailures     = 100
	MinBreakerCooldown     = 100 * time.Millisecond
	MaxBreakerCooldown     = time.Hour
	DefaultProviderTimeout = 3 * time.Second
	DefaultBreakerFailures = 3
	DefaultBreakerCooldown = 30 * time.Second
)

// ProviderRoute is how launches reach a provider: the adapter that speaks
// its protocol, its endpoints in order of preference, the time one call may
// take and when an endpoint's circuit breaker opens.
type ProviderRoute struct {
	ProviderID string
	Kind       string
	// Endpoints are base URLs; the kind adds its path (/session, /launch).
	Endpoints []string
	Balancing string
	// Timeout bounds one call to one endpoint.
	Timeout time.Duration
	// BreakerFailures consecutive failures open an endpoint's breaker for
	// BreakerCooldown, after which one probe call is let through.
	BreakerFailures int
	BreakerCooldown time.Duration
	// Secret signs outbound launch calls: the secret the provider signs
	// its wallet calls with. Filled from the provider, never listed.
	Secret string
	// LaunchOperatorID is who we are at the provider (migration 00025):
	// Caleta's operator_id, Evolution's casino key, Red Tiger's casino.
	LaunchOperatorID string
	// LaunchCountry is the ISO 3166-1 alpha-2 country the launch names
	// (Caleta's country, Evolution's player.country); empty when unset.
	LaunchCountry string
	// LaunchSecret is our own credential at the provider, sealed at rest:
	// for caleta our RSA private key (PEM) that signs the launch call, for
	// evolution the casino token of its path. Filled from the provider,
	// never listed.
	LaunchSecret string
	// LaunchKeyFingerprint is Provider.LaunchKeyFingerprint: a listing,
	// which has no secret, tells by it whether one is set.
	LaunchKeyFingerprint string
}

// Outbound reports whether launches of this kind call the provider.
func (r ProviderRoute) Outbound() bool { return r.Kind != ProviderKindDemo }

// Validate checks the settings; every problem is reported.
func (r ProviderRoute) Validate() error {
	var errs []error
	if !slices.Contains(ProviderKinds, r.Kind) {
		errs = append(errs, fmt.Errorf("kind %q is not one of %s", r.Kind, strings.Join(ProviderKinds, ", ")))
	}
	if r.Balancing != BalancingPriority && r.Balancing != BalancingRoundRobin {
		errs = append(errs, fmt.Errorf("balancing %q is not %s or %s", r.Balancing, BalancingPriority, BalancingRoundRobin))
	}
	if len(r.Endpoints) > MaxProviderEndpoints {
		errs = append(errs, fmt.Errorf("%d endpoints; at most %d", len(r.Endpoints), MaxProviderEndpoints))
	}
	if r.Outbound() && len(r.Endpoints) == 0 {
		errs = append(errs, fmt.Errorf("a %s provider needs at least one endpoint", r.Kind))
	}
	for i, e := range r.Endpoints {
		u, err := url.Parse(e)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" ||
			u.Fragment != "" || u.User != nil {
			errs = append(errs, fmt.Errorf("endpoint %d is not an http(s) base URL without query, fragment or user", i+1))
		}
	}
	if r.Timeout < MinProviderTimeout || r.Timeout > MaxProviderTimeout {
		errs = append(errs, fmt.Errorf("timeout %s is outside %s..%s", r.Timeout, MinProviderTimeout, MaxProviderTimeout))
	}
	if r.BreakerFailures < 1 || r.BreakerFailures > MaxBreakerFailures {
		errs = append(errs, fmt.Errorf("breaker failures %d is outside 1..%d", r.BreakerFailures, MaxBreakerFailures))
	}
	if r.BreakerCooldown < MinBreakerCooldown || r.BreakerCooldown > MaxBreakerCooldown {
		errs = append(errs, fmt.Errorf("breaker cooldown %s is outside %s..%s", r.BreakerCooldown, MinBreakerCooldown, MaxBreakerCooldown))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("provider %s routing: %w", r.ProviderID, err)
	}
	return nil
}

// LaunchRequest is what a provider needs to open its game for a player.
// Adapters turn it into the provider's own request.
type LaunchRequest struct {
	// SessionID is our game session: the token the provider sends back as
	// session_id on every wallet call.
	SessionID string
	ClientID  string
	PlayerID  string
	GameID    string
	// GameCode is the provider's own code of the game (GameID when the
	// catalog has none).
	GameCode string
	Currency string
	Language string
	// ReturnURL is where the game sends the player when it closes: our
	// return address, which forwards to the client's return_url.
	ReturnURL string
	// ClientSessionToken is the client's optional session_token, passed
	// on to the provider and not stored.
	ClientSessionToken string
	ExpiresAt          time.Time
	// Country is the player's ISO 3166-1 alpha-2 country when the launch
	// named one (the launch's optional country); empty otherwise.
	Country string
}

// CountryOr is the player's country, or dflt (the provider's launch
// country) when the launch named none: what a protocol with a country
// field (caleta, evolution) sends.
func (r LaunchRequest) CountryOr(dflt string) string {
	if r.Country != "" {
		return r.Country
	}
	return dflt
}

// Launcher opens games at providers: it picks an endpoint, transforms the
// request into the provider's format, fails over, and keeps a circuit
// breaker per endpoint.
type Launcher interface {
	// Launch returns the game address for req. A provider that cannot be
	// reached is a *ProviderUnavailableError; one that answered with a
	// refusal is a *ProviderRejectedError.
	Launch(ctx context.Context, p ProviderRoute, req LaunchRequest) (gameURL string, err error)
	// Ready is nil when a launch through p may be tried now, and a
	// *ProviderUnavailableError when every endpoint's breaker is open.
	Ready(p ProviderRoute) error
	// Health summarises the breakers of p's endpoints.
	Health(p ProviderRoute) ProviderHealth
}

// Provider statuses of GET /api/v1/providers.
const (
	ProviderAvailable   = "available"   // every endpoint takes calls
	ProviderDegraded    = "degraded"    // some endpoint's breaker is open
	ProviderUnavailable = "unavailable" // every endpoint's breaker is open
)

// ProviderHealth is the breaker state summary of one provider.
type ProviderHealth struct {
	Status    string
	Endpoints int // configured
	Available int // whose breaker is closed or half-open
	// RetryAfter is when the soonest open breaker lets a probe through;
	// zero when some endpoint is available.
	RetryAfter time.Duration
}

// EndpointFailure says why one endpoint did not serve a launch. Reason is
// one of "breaker_open", "timeout", "connection", "status_<code>",
// "bad_response", "busy" (a half-open breaker already probing); endpoint
// URLs are not shown to clients.
type EndpointFailure struct {
	Endpoint int // 1-based position in the provider's list
	Reason   string
}

// ProviderUnavailableError is a launch no endpoint could serve (the API
// answers 503 with Retry-After).
type ProviderUnavailableError struct {
	Provider   string
	RetryAfter time.Duration
	Endpoints  []EndpointFailure
	// Reason is set when the provider is not usable at all
	// ("not_configured").
	Reason string
}

func (e *ProviderUnavailableError) Error() string {
	if e.Reason != "" {
		return fmt.Sprintf("provider %s is unavailable: %s", e.Provider, e.Reason)
	}
	return fmt.Sprintf("provider %s is unavailable: no endpoint could serve the launch", e.Provider)
}

// ProviderRejectedError is a provider's refusal of a launch (it answered,
// but not with a game address; the API answers 502). The endpoint is
// healthy, so no other endpoint is tried and the breaker does not count it.
type ProviderRejectedError struct {
	Provider string
	Status   int    // the provider's HTTP status
	Code     string // the provider's own error code, if it sent one
	Message  string
}

func (e *ProviderRejectedError) Error() string {
	return fmt.Sprintf("provider %s refused the launch (status %d, code %q): %s", e.Provider, e.Status, e.Code, e.Message)
}

// ProviderListing is a provider as GET /api/v1/providers lists it.
type ProviderListing struct {
	ID         string
	Name       string
	Route      ProviderRoute
	GamesCount int64
}

// GameListing is a game as GET /api/v1/games lists it.
type GameListing struct {
	ID           string
	Name         string
	Category     string
	ProviderID   string
	ProviderName string
	// BlockedCountries are the countries whose players the provider's
	// game list blocks (catalog sync): a launch naming one is refused.
	BlockedCountries []string
}

// GameFilter selects games; empty fields do not filter. Page is 1-based.
type GameFilter struct {
	ProviderID string
	Category   string // compared case-insensitively
	Search     string // case-insensitive substring of the name
	Page       int
	PerPage    int
}

// GameCatalog lists what players can launch: enabled providers, and enabled
// games of enabled providers. Unknown or disabled ids are domain.ErrNotFound.
type GameCatalog interface {
	ListProviders(ctx context.Context) ([]ProviderListing, error)
	ListGames(ctx context.Context, f GameFilter) (games []GameListing, total int64, err error)
	GameListing(ctx context.Context, id string) (GameListing, error)
	// ProviderRoute returns a provider's routing settings (without its
	// secret), whether or not it is enabled.
	ProviderRoute(ctx context.Context, providerID string) (ProviderRoute, error)
}
