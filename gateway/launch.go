package gateway

import (
	"context"
	"net/netip"
	"strconv"
	"strings"

	"github.com/pitboss/pitboss/domain"
)

// LaunchSettings are a client's rules for the signed launch (GET
// /v1/launch) and the return address (GET /v1/return).
type LaunchSettings struct {
	// RequireSignature: nil means the environment's default, required in
	// production and optional in the sandbox.
	RequireSignature *bool
	// IPAllowList, when not empty, is the only addresses a launch may come
	// from.
	IPAllowList []netip.Prefix
	// AllowedReturnHosts are the hosts a return_url may point at (exact,
	// case-insensitive match of the host, or of host:port). Empty: no
	// return_url is accepted.
	AllowedReturnHosts []string
	// DefaultCurrency is used when a launch names no currency_code.
	DefaultCurrency string
}

// LaunchClient is a client as the signed launch sees it.
type LaunchClient struct {
	ClientID    string
	Environment string
	// Secret is the client secret that keys the launch signature; nil when
	// none was issued.
	Secret []byte
	LaunchSettings
}

// MaxUnsignedLaunchBalance is the largest balance, in whole units of the
// launch's currency, an unsigned launch may set a player's game wallet to.
// An unsigned launch is the sandbox's default (anyone holding the API key
// may send one); a signature is the client's own statement of the
// balance, and is needed for more.
const MaxUnsignedLaunchBalance = 10_000

// CheckUnsignedLaunchBalance refuses a balance above
// MaxUnsignedLaunchBalance units of its currency.
func CheckUnsignedLaunchBalance(balance domain.Money) error {
	limit, err := domain.ParseMoney(strconv.Itoa(MaxUnsignedLaunchBalance), balance.Currency())
	if err != nil {
		return nil // beyond the currency's range in minor units: no balance is above it
	}
	if balance.Minor() > limit.Minor() {
		return fieldError("balance", "an unsigned launch sets a balance of at most "+limit.String()+" "+
			balance.Currency().Code()+"; sign the launch for more")
	}
	return nil
}

// SignatureRequired reports whether an unsigned launch is refused.
func (c LaunchClient) SignatureRequired() bool {
	if c.RequireSignature != nil {
		return *c.RequireSignature
	}
	return c.Environment == "production"
}

// LaunchClients reads the signed-launch view of a client. An unknown id is
// domain.ErrNotFound.
type LaunchClients interface {
	LaunchClient(ctx context.Context, clientID string) (LaunchClient, error)
}

// ParseAllowList reads an IP allow-list: CIDRs or single addresses.
func ParseAllowList(entries []string) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(entries))
	for _, e := range entries {
		e = strings.TrimSpace(e)
		p, err := netip.ParsePrefix(e)
		if err != nil {
			a, aerr := netip.ParseAddr(e)
			if aerr != nil {
				return nil, fieldError("ip_allow_list",
					"ip_allow_list entry "+strconv.Quote(ClipValue(e))+" is not a CIDR or an IP address")
			}
			p = netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen())
		}
		out = append(out, p.Masked())
	}
	return out, nil
}
