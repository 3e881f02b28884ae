package gateway

import (
	"net"
	"net/netip"
	"net/url"
	"strings"
	"unicode/utf8"
)

// maxCallbackURLLength bounds a callback or webhook URL, in bytes.
const maxCallbackURLLength = 2048

// CheckCallbackURL checks a callback or webhook URL when it is configured:
// http or https, a host, no credentials. Unless private targets are allowed
// it refuses localhost and literal non-public IPs early; the delivery
// client checks every resolved address again when it connects, which is
// the check that counts (a name can resolve anywhere).
func CheckCallbackURL(field, raw string, allowPrivate bool) error {
	if raw == "" {
		return fieldError(field, field+" is required")
	}
	if len(raw) > maxCallbackURLLength || !utf8.ValidString(raw) {
		return fieldError(field, field+" must be a URL of at most 2048 characters")
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return fieldError(field, field+" must be an absolute http or https URL")
	}
	if u.User != nil {
		return fieldError(field, field+" must not carry credentials")
	}
	if u.Fragment != "" {
		return fieldError(field, field+" must not have a fragment")
	}
	if allowPrivate {
		return nil
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return fieldError(field, field+" points at this machine; callbacks go to public addresses only")
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		ip = ip.Unmap()
		if ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsUnspecified() || ip.IsMulticast() ||
			ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast() {
			return fieldError(field, field+" points at a non-public address; callbacks go to public addresses only")
		}
	} else if net.ParseIP(host) != nil {
		return fieldError(field, field+" has an IP address in an unusual form")
	}
	return nil
}
