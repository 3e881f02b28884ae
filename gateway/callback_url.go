package gateway

import (
	"math"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxCallbackURLLength bounds a callback or webhook URL, in bytes.
const maxCallbackURLLength = 2048

// CheckCallbackURL checks a callback or webhook URL when it is configured:
// http or https, a host, no credentials. An IP-literal host (in any
// spelling a browser or a resolver reads as an address: 2130706433, 0x7f.1,
// 127.1, [::127.0.0.1] ...) is classified by ClassifyAddress, the rule the
// delivery client applies to every address it connects to: a non-public
// one is refused unless private targets are allowed, a link-local one
// (cloud metadata) always; a numeric host that is not a dotted quad is
// refused even when its address is allowed, since resolvers disagree on
// what it means. Names of this machine (localhost, *.localhost) are refused
// unless private targets are allowed. Other names are not resolved here:
// what a name resolves to can change after it is checked, so the check
// that counts is the delivery client's, at connect time.
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
	return checkCallbackHost(field, u, allowPrivate)
}

// checkCallbackHost applies the address rule to u's host.
func checkCallbackHost(field string, u *url.URL, allowPrivate bool) error {
	host := strings.ToLower(u.Hostname())
	for i := 0; i < len(host); i++ {
		if host[i] >= utf8.RuneSelf {
			// the HTTP client maps a Unicode name to ASCII (IDNA), under
			// which fullwidth digits are an IP address: refuse to guess
			return fieldError(field, field+" must write its host in ASCII (an internationalised name in its xn-- form)")
		}
	}
	neither := fieldError(field, field+" has a host that is neither a name nor an IP address")
	if strings.HasPrefix(u.Host, "[") { // url.Parse accepts only an IPv6 address in brackets
		addr, err := netip.ParseAddr(host)
		if err != nil || !addr.Is6() {
			return neither
		}
		if addr.Zone() != "" {
			return fieldError(field, field+" must not name an IPv6 zone")
		}
		return checkTargetAddress(field, ClassifyAddress(addr), "", allowPrivate)
	}
	if endsInNumber(host) {
		addr, ok := parseIPv4(host)
		if !ok {
			return neither
		}
		spelled := ""
		if addr.String() != host {
			spelled = host + " is "
		}
		if err := checkTargetAddress(field, ClassifyAddress(addr), spelled, allowPrivate); err != nil {
			return err
		}
		if spelled != "" {
			return fieldError(field, field+" writes an IP address in an unusual form ("+spelled+addr.String()+
				"); write an IPv4 address as four decimal numbers")
		}
		return nil
	}
	if !allowPrivate && namesThisMachine(strings.TrimSuffix(host, ".")) {
		return fieldError(field, field+" points at this machine; callbacks go to public addresses only")
	}
	return nil
}

// checkTargetAddress refuses an address the delivery client would refuse;
// spelled ("2130706433 is ") says how the URL wrote it.
func checkTargetAddress(field string, c AddressClass, spelled string, allowPrivate bool) error {
	switch {
	case c.Allowed(allowPrivate):
		return nil
	case c.AlwaysRefused():
		return fieldError(field, field+" points at an address no callback may reach ("+spelled+c.String()+")")
	default:
		return fieldError(field, field+" points at a non-public address ("+spelled+c.String()+
			"); callbacks go to public addresses only")
	}
}

// namesThisMachine reports whether name is one of the names of this
// machine (RFC 6761's localhost and the usual /etc/hosts entries).
func namesThisMachine(name string) bool {
	switch name {
	case "localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback":
		return true
	}
	return strings.HasSuffix(name, ".localhost")
}

// endsInNumber is the URL Standard's "ends in a number checker": browsers
// read a host whose last label is a number as an IPv4 address (and so does
// inet_aton, behind many resolvers), so such a host is one, or invalid.
func endsInNumber(host string) bool {
	labels := strings.Split(host, ".")
	if labels[len(labels)-1] == "" {
		if len(labels) == 1 {
			return false
		}
		labels = labels[:len(labels)-1]
	}
	last := labels[len(labels)-1]
	if last != "" && strings.Trim(last, "0123456789") == "" {
		return true
	}
	_, ok := parseIPv4Number(last)
	return ok
}

// parseIPv4 is the URL Standard's IPv4 parser: one to four numbers
// separated by dots (an optional trailing dot), each decimal, octal with a
// leading 0 or hexadecimal with 0x, the last filling the remaining bytes:
// 127.1, 0x7f.0.0.1, 2130706433 and 0177.0.0.1 are all 127.0.0.1.
func parseIPv4(host string) (netip.Addr, bool) {
	parts := strings.Split(host, ".")
	if parts[len(parts)-1] == "" && len(parts) > 1 {
		parts = parts[:len(parts)-1]
	}
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		n, ok := parseIPv4Number(p)
		if !ok || (i < len(parts)-1 && n > 255) {
			return netip.Addr{}, false
		}
		nums[i] = n
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-len(nums))) {
		return netip.Addr{}, false
	}
	v := uint32(last)
	for i, n := range nums[:len(nums)-1] {
		v += uint32(n) << (8 * (3 - i))
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// parseIPv4Number reads one part of an IPv4 address as the URL Standard
// does; a number too large for 64 bits is still a number (math.MaxUint64).
func parseIPv4Number(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	base, digits := uint64(10), "0123456789"
	switch {
	case len(s) >= 2 && (s[:2] == "0x" || s[:2] == "0X"):
		s, base, digits = s[2:], 16, "0123456789abcdefABCDEF"
	case len(s) >= 2 && s[0] == '0':
		s, base, digits = s[1:], 8, "01234567"
	}
	if strings.Trim(s, digits) != "" {
		return 0, false
	}
	if s == "" {
		return 0, true
	}
	n, err := strconv.ParseUint(s, int(base), 64)
	if err != nil { // only ErrRange is left: a number, too large for any part
		return math.MaxUint64, true
	}
	return n, true
}
