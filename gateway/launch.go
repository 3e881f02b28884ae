package gateway

import (
	"context"
	"math"
	"net/netip"
	"net/url"
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

// MaxUnsignedLaunchBalance is the largest balance, in whole units, an
// unsigned launch may set a player's game wallet to in a currency worth
// about a euro a unit or less: a cap of about 10,000 EUR of value. An
// unsigned launch is the sandbox's default (anyone holding the API key may
// send one); a signature is the client's own statement of the balance, and
// is needed for more.
const MaxUnsignedLaunchBalance = 10_000

// unsignedLaunchCaps are the caps of the currencies worth much more than a
// euro a unit, in whole units, so that the cap is about the same value in
// every currency (orders of magnitude of their prices in late 2026: a cap
// is a bound on what a leaked sandbox key books in one call, not a price).
var unsignedLaunchCaps = map[string]string{
	// Crypto (domain.DefaultCrypto).
	"BTC": "0.1", "ETH": "3", "BNB": "15", "SOL": "50", "LTC": "100", "BCH": "25", "XRP": "5000",
	// Fiat worth more than a euro a unit.
	"KWD": "3000", "BHD": "3500", "OMR": "3500", "JOD": "7000", "GBP": "8500", "CLF": "250",
}

// UnsignedLaunchCap is the largest balance an unsigned launch may set in
// cur: its entry in unsignedLaunchCaps; else MaxUnsignedLaunchBalance units
// of a currency with at most four decimals (every fiat) or of a crypto
// currency the defaults know (their stablecoins and coins worth a euro or
// less); else, for a configured currency whose value Pitboss cannot know
// (PITBOSS_CURRENCIES), one unit.
func UnsignedLaunchCap(cur domain.Currency) domain.Money {
	text, ok := unsignedLaunchCaps[cur.Code()]
	switch {
	case ok:
	case cur.Exponent() <= 4:
		text = strconv.Itoa(MaxUnsignedLaunchBalance)
	default:
		if _, known := domain.DefaultCrypto[cur.Code()]; known {
			text = strconv.Itoa(MaxUnsignedLaunchBalance)
		} else {
			text = "1"
		}
	}
	limit, err := domain.ParseMoney(text, cur)
	if err != nil { // beyond the currency's range in minor units
		return domain.FromMinor(math.MaxInt64, cur)
	}
	return limit
}

// CheckUnsignedLaunchBalance refuses a balance above the currency's
// UnsignedLaunchCap.
func CheckUnsignedLaunchBalance(balance domain.Money) error {
	limit := UnsignedLaunchCap(balance.Currency())
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

// ParseReturnHosts reads a client's allowed return hosts: host names or IP
// addresses, each with an optional port, as a return_url's host is matched
// against them (exactly, case-insensitively). They come back trimmed, in
// lower case, without a host name's trailing dot. A pattern (*.x.com), a
// URL, a path or anything else that could never match a return_url's host
// is refused, so a setting never silently allows nothing.
func ParseReturnHosts(entries []string) ([]string, error) {
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		h := strings.ToLower(strings.TrimSpace(e))
		if !validReturnHost(h) {
			return nil, fieldError("allowed_return_hosts", "allowed_return_hosts entry "+strconv.Quote(ClipValue(e))+
				" is not a host name or IP address with an optional port (no scheme, path, user or wildcard)")
		}
		if _, err := netip.ParseAddr(h); err != nil && !strings.HasPrefix(h, "[") {
			if name, port, found := strings.Cut(h, ":"); found {
				h = strings.TrimSuffix(name, ".") + ":" + port
			} else {
				h = strings.TrimSuffix(h, ".")
			}
		}
		out = append(out, h)
	}
	return out, nil
}

// validReturnHost reports whether h (lower case) is a host name, an IPv4
// address or an IPv6 address (bare, or bracketed with a port), with an
// optional port 1-65535. It splits h as net/url splits a return_url's
// host, so an entry is accepted exactly when a return_url can name it.
func validReturnHost(h string) bool {
	if a, err := netip.ParseAddr(h); err == nil {
		return a.Zone() == "" // an address alone, IPv6 unbracketed included
	}
	u, err := url.Parse("http://" + h)
	if err != nil || u.Host != h || u.User != nil || u.Path != "" || u.RawQuery != "" || u.Fragment != "" {
		return false
	}
	if strings.Contains(h[strings.LastIndex(h, "]")+1:], ":") { // a port, maybe empty
		p := u.Port()
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 || p[0] == '0' {
			return false
		}
	}
	name := u.Hostname()
	if a, err := netip.ParseAddr(name); err == nil {
		return a.Zone() == "" && a.Is6() == strings.HasPrefix(h, "[")
	}
	return !strings.HasPrefix(h, "[") && validHostName(strings.TrimSuffix(name, "."))
}

// validHostName reports whether s is a DNS host name: dot-separated labels
// of 1-63 letters, digits and inner hyphens, 253 characters at most.
func validHostName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
				return false
			}
		}
	}
	return true
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
