package gateway

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Reference computations for the properties below, written out here and
// not taken from the code under test.
func refHMAC(secret, msg []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write(msg)
	return m.Sum(nil)
}

// FuzzProviderSignature: X-Signature is accepted exactly when it is the
// hex HMAC-SHA256 of the raw body under the provider's secret (either hex
// case); the right signature is always accepted.
func FuzzProviderSignature(f *testing.F) {
	f.Add("secret", []byte(`{"session_id":"s"}`), "")
	f.Add("secret", []byte(`{}`), strings.Repeat("0", 64))
	f.Add("", []byte(""), "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
	f.Add("k", []byte("x"), "zz")
	f.Add("k", []byte("x"), strings.Repeat("a", 63))
	f.Fuzz(func(t *testing.T, secret string, body []byte, sig string) {
		want := refHMAC([]byte(secret), body)
		got, err := hex.DecodeString(sig)
		expect := err == nil && hmac.Equal(got, want)
		if ValidSignature(secret, body, sig) != expect {
			t.Fatalf("ValidSignature(%q, %q, %q) = %v, want %v", secret, body, sig, !expect, expect)
		}
		right := hex.EncodeToString(want)
		if !ValidSignature(secret, body, right) || !ValidSignature(secret, body, strings.ToUpper(right)) {
			t.Fatalf("the right signature %s is refused", right)
		}
		if len(body) > 0 {
			flipped := append([]byte(nil), body...)
			flipped[0] ^= 1
			if ValidSignature(secret, flipped, right) {
				t.Fatal("a changed body kept its signature")
			}
		}
	})
}

// refV2 is the v2 MAC of a call, written out from the scheme's text.
func refV2(secret, ts, method, path string, body []byte) []byte {
	return refHMAC([]byte(secret), append([]byte(ts+"."+method+"."+path+"."), body...))
}

// FuzzProviderSignatureV2: for a v2 provider, whatever the header,
// VerifyProviderCall accepts only when the header has a t entry of digits
// within ±120 s of now and a v2 entry that is the HMAC of
// "<t>.<METHOD>.<path>.<body>"; never a body-only signature. The right
// header is accepted exactly when its t is in the window, and not for
// another path, method or body. For a v1 provider a header without "=" is
// judged as ValidSignature judges it.
func FuzzProviderSignatureV2(f *testing.F) {
	f.Add("secret", "POST", "/provider/v1/wallet/bet", []byte(`{"session_id":"s"}`), "", int64(0))
	f.Add("secret", "POST", "/provider/v1/wallet/win", []byte(`{}`), "t=1773500966,v2="+strings.Repeat("0", 64), int64(120))
	f.Add("k", "POST", "/p", []byte("x"), "t=1773500966,t=1,v2=zz", int64(-121))
	f.Add("k", "POST", "/p", []byte("x"), " v2=00 , t=99999999999999999999", int64(1<<40))
	f.Add("", "", "", []byte(""), "t=,v2=,", int64(-1))
	now := time.Unix(1773500966, 0)
	f.Fuzz(func(t *testing.T, secret, method, path string, body []byte, header string, skew int64) {
		v2 := Provider{Secret: secret, SignatureScheme: SignatureV2}
		call := ProviderCall{Method: method, Path: path, Body: body}
		if err := VerifyProviderCall(v2, call, header, now); err == nil {
			var ts string
			var macs [][]byte
			for part := range strings.SplitSeq(header, ",") {
				k, v, _ := strings.Cut(strings.Trim(part, " \t"), "=")
				switch k {
				case "t":
					ts = v
				case "v2":
					b, _ := hex.DecodeString(v)
					macs = append(macs, b)
				}
			}
			sec, perr := strconv.ParseInt(ts, 10, 64)
			if perr != nil || strings.TrimLeft(ts, "0123456789") != "" || sec < now.Unix()-120 || sec > now.Unix()+120 {
				t.Fatalf("accepted %q: t %q is not within 120 s of %d", header, ts, now.Unix())
			}
			want := refV2(secret, ts, method, path, body)
			if !slices.ContainsFunc(macs, func(m []byte) bool { return hmac.Equal(m, want) }) {
				t.Fatalf("accepted %q, which has no v2 entry matching", header)
			}
		}
		if err := VerifyProviderCall(v2, call, hex.EncodeToString(refHMAC([]byte(secret), body)), now); err == nil {
			t.Fatal("a v2 provider accepted a body-only signature")
		}

		skew %= 1 << 32
		ts := strconv.FormatInt(now.Unix()+skew, 10)
		right := "t=" + ts + ",v2=" + hex.EncodeToString(refV2(secret, ts, method, path, body))
		err := VerifyProviderCall(v2, call, right, now)
		if inWindow := skew >= -120 && skew <= 120; inWindow != (err == nil) {
			t.Fatalf("right header %q with skew %d: %v", right, skew, err)
		}
		if err != nil && !errors.Is(err, ErrSignatureTimestamp) {
			t.Fatalf("right header %q outside the window: %v, want ErrSignatureTimestamp", right, err)
		}
		for _, other := range []ProviderCall{{method, path + "x", body}, {method + "X", path, body}, {method, path, append(body, ' ')}} {
			if err := VerifyProviderCall(v2, other, right, now); !errors.Is(err, ErrSignatureMismatch) {
				t.Fatalf("the right header for %+v accepted for %+v: %v", call, other, err)
			}
		}

		if !strings.Contains(header, "=") {
			v1 := Provider{Secret: secret, SignatureScheme: SignatureV1}
			if (VerifyProviderCall(v1, call, header, now) == nil) != ValidSignature(secret, body, header) {
				t.Fatalf("v1 provider and ValidSignature disagree on %q", header)
			}
		}
	})
}
