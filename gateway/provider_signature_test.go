package gateway_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pitboss/pitboss/gateway"
)

// The finding's call (issue 17, item 1) and its v2 signature, computed
// outside the code:
//
//	printf '%s' '1773500966.POST./provider/v1/wallet/bet.<body>' | openssl dgst -sha256 -hmac secret-of-demo
var (
	sigNow  = time.Unix(1773500966, 0)
	sigBody = []byte(`{"session_id":"gs_1","transaction_id":"t1","round_id":"r1","amount":"0.25"}`)
	sigBet  = gateway.ProviderCall{Method: "POST", Path: "/provider/v1/wallet/bet", Body: sigBody}
)

const (
	sigSecret = "secret-of-demo"
	sigMAC    = "4d910793c843ebbfc1921e07a13cae776c03cd513c113d518ce4c7ae97fd17ff"
	sigRight  = "t=1773500966,v2=" + sigMAC
)

func TestSignProviderCall(t *testing.T) {
	t.Parallel()
	if got := gateway.SignProviderCall(sigSecret, sigNow, sigBet); got != sigRight {
		t.Fatalf("SignProviderCall = %s, want %s", got, sigRight)
	}
}

func TestParseProviderSignature(t *testing.T) {
	t.Parallel()
	other := strings.Repeat("ab", 32)
	tests := []struct {
		name   string
		header string
		ts     string
		macs   int
		ok     bool
	}{
		{"right", sigRight, "1773500966", 1, true},
		{"entries in any order", "v2=" + sigMAC + ",t=1773500966", "1773500966", 1, true},
		{"spaces around entries", " t=1773500966 ,\tv2=" + sigMAC + " ", "1773500966", 1, true},
		{"two v2 entries", sigRight + ",v2=" + other, "1773500966", 2, true},
		{"upper-case hex", "t=1,v2=" + strings.ToUpper(sigMAC), "1", 1, true},
		{"unknown entries are ignored", sigRight + ",v3=whatever,x=", "1773500966", 1, true},
		{"leading zeros are digits too", "t=0001,v2=" + sigMAC, "0001", 1, true},
		{"empty", "", "", 0, false},
		{"a bare v1 digest", sigMAC, "", 0, false},
		{"no t", "v2=" + sigMAC, "", 0, false},
		{"no v2", "t=1773500966", "", 0, false},
		{"only a v1 entry", "t=1773500966,v1=" + sigMAC, "", 0, false},
		{"t twice", "t=1,t=1,v2=" + sigMAC, "", 0, false},
		{"t empty", "t=,v2=" + sigMAC, "", 0, false},
		{"t negative", "t=-1,v2=" + sigMAC, "", 0, false},
		{"t with a plus", "t=+1,v2=" + sigMAC, "", 0, false},
		{"t fractional", "t=1.5,v2=" + sigMAC, "", 0, false},
		{"t of 19 digits", "t=" + strings.Repeat("9", 19) + ",v2=" + sigMAC, "", 0, false},
		{"t of 18 digits", "t=" + strings.Repeat("9", 18) + ",v2=" + sigMAC, strings.Repeat("9", 18), 1, true},
		{"v2 short", "t=1,v2=" + sigMAC[:62], "", 0, false},
		{"v2 long", "t=1,v2=" + sigMAC + "00", "", 0, false},
		{"v2 odd", "t=1,v2=" + sigMAC[:63], "", 0, false},
		{"v2 not hex", "t=1,v2=" + strings.Repeat("g", 64), "", 0, false},
		{"an empty entry", "t=1,,v2=" + sigMAC, "", 0, false},
		{"a trailing comma", sigRight + ",", "", 0, false},
		{"an entry without =", sigRight + ",v2", "", 0, false},
		{"an empty key", sigRight + ",=x", "", 0, false},
		{"semicolons", "t=1;v2=" + sigMAC, "", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := gateway.ParseProviderSignature(tc.header)
			if !tc.ok {
				if !errors.Is(err, gateway.ErrSignatureMalformed) {
					t.Fatalf("ParseProviderSignature(%q) = %+v, %v; want ErrSignatureMalformed", tc.header, got, err)
				}
				return
			}
			if err != nil || got.Timestamp != tc.ts || len(got.MACs) != tc.macs {
				t.Fatalf("ParseProviderSignature(%q) = %+v, %v; want t=%s and %d MACs", tc.header, got, err, tc.ts, tc.macs)
			}
		})
	}
}

func TestVerifyProviderCall(t *testing.T) {
	t.Parallel()
	v1 := gateway.Provider{ID: "demo", Secret: sigSecret, SignatureScheme: gateway.SignatureV1}
	v2 := gateway.Provider{ID: "demo", Secret: sigSecret, SignatureScheme: gateway.SignatureV2}
	unset := gateway.Provider{ID: "demo", Secret: sigSecret}
	win := sigBet
	win.Path = "/provider/v1/wallet/win"
	put := sigBet
	put.Method = "PUT"
	bodyOnly := gateway.Signature(sigSecret, sigBody)
	at := func(d time.Duration) string { return gateway.SignProviderCall(sigSecret, sigNow.Add(d), sigBet) }
	tests := []struct {
		name   string
		p      gateway.Provider
		call   gateway.ProviderCall
		header string
		want   error // nil: accepted
	}{
		{"v2: right", v2, sigBet, sigRight, nil},
		{"v2: a bet's signature at /win", v2, win, sigRight, gateway.ErrSignatureMismatch},
		{"v2: another method", v2, put, sigRight, gateway.ErrSignatureMismatch},
		{"v2: another body", v2, gateway.ProviderCall{Method: "POST", Path: sigBet.Path, Body: []byte(`{}`)}, sigRight, gateway.ErrSignatureMismatch},
		{"v2: another secret", gateway.Provider{Secret: "other", SignatureScheme: gateway.SignatureV2}, sigBet, sigRight, gateway.ErrSignatureMismatch},
		{"v2: t changed", v2, sigBet, "t=1773500967,v2=" + sigMAC, gateway.ErrSignatureMismatch},
		{"v2: 120 s old", v2, sigBet, at(-120 * time.Second), nil},
		{"v2: 120 s ahead", v2, sigBet, at(120 * time.Second), nil},
		{"v2: 121 s old", v2, sigBet, at(-121 * time.Second), gateway.ErrSignatureTimestamp},
		{"v2: 121 s ahead", v2, sigBet, at(121 * time.Second), gateway.ErrSignatureTimestamp},
		{"v2: a v1 signature", v2, sigBet, bodyOnly, gateway.ErrSignatureMalformed},
		{"v2: empty", v2, sigBet, "", gateway.ErrSignatureMalformed},
		{"v2: a wrong signature outside the window is a mismatch", v2, sigBet, "t=1,v2=" + sigMAC, gateway.ErrSignatureMismatch},
		{"no scheme is v2", unset, sigBet, bodyOnly, gateway.ErrSignatureMalformed},
		{"no scheme is v2: right", unset, sigBet, sigRight, nil},
		{"v1: body only", v1, sigBet, bodyOnly, nil},
		{"v1: body only, upper case", v1, sigBet, strings.ToUpper(bodyOnly), nil},
		{"v1: body only binds no path", v1, win, bodyOnly, nil},
		{"v1: body only, another body", v1, gateway.ProviderCall{Method: "POST", Path: sigBet.Path, Body: []byte(`{}`)}, bodyOnly, gateway.ErrSignatureMismatch},
		{"v1: empty", v1, sigBet, "", gateway.ErrSignatureMalformed},
		{"v1: v2 accepted", v1, sigBet, sigRight, nil},
		{"v1: v2 at /win", v1, win, sigRight, gateway.ErrSignatureMismatch},
		{"v1: v2 expired", v1, sigBet, at(-121 * time.Second), gateway.ErrSignatureTimestamp},
		{"v1: v2 malformed", v1, sigBet, "t=x,v2=" + sigMAC, gateway.ErrSignatureMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := gateway.VerifyProviderCall(tc.p, tc.call, tc.header, sigNow)
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("VerifyProviderCall(%s, %q) = %v, want %v", tc.p.Scheme(), tc.header, err, tc.want)
			}
		})
	}
}

func TestCheckSignatureScheme(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"v1", "v2"} {
		if err := gateway.CheckSignatureScheme("signature_scheme", s); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	for _, s := range []string{"", "V2", "v3", "v2 "} {
		var fe *gateway.FieldError
		if err := gateway.CheckSignatureScheme("signature_scheme", s); !errors.As(err, &fe) || fe.Field != "signature_scheme" {
			t.Errorf("%q: %v, want a FieldError on signature_scheme", s, err)
		}
	}
}

// The window is whole seconds of the server's clock: a server time with
// a fraction is judged by its second.
func TestVerifyProviderCallWindowInSeconds(t *testing.T) {
	t.Parallel()
	p := gateway.Provider{Secret: sigSecret, SignatureScheme: gateway.SignatureV2}
	header := gateway.SignProviderCall(sigSecret, sigNow.Add(-120*time.Second), sigBet)
	if !strings.HasPrefix(header, "t="+strconv.FormatInt(sigNow.Unix()-120, 10)+",") {
		t.Fatalf("header %s", header)
	}
	for _, frac := range []time.Duration{0, 999 * time.Millisecond} {
		if err := gateway.VerifyProviderCall(p, sigBet, header, sigNow.Add(frac)); err != nil {
			t.Errorf("now %v: %v", sigNow.Add(frac), err)
		}
	}
	if err := gateway.VerifyProviderCall(p, sigBet, header, sigNow.Add(time.Second)); !errors.Is(err, gateway.ErrSignatureTimestamp) {
		t.Errorf("a second later: %v, want ErrSignatureTimestamp", err)
	}
}
