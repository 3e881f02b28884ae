package gateway

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
)

// The gateway's HTTP protocols sign with HMAC-SHA256, keyed with the text
// of a secret (its UTF-8 bytes as the secret was handed out), written as
// lower-case hex:
//
//   - a provider's wallet call: X-Signature, by the provider's scheme
//     (provider_signature.go): v2 over "<t>.<METHOD>.<path>.<raw body>",
//     legacy v1 over the raw body alone;
//   - a launch request to a provider: the json kind's X-Signature over its
//     body, the form-xml kind's hash over its sorted fields;
//   - a webhook or forwarded callback: v1 of X-Pitboss-Signature over
//     "<t>.<raw body>".
//
// One function computes all of them, so the signers (the launch adapters,
// the delivery worker, the demo game, the load generator) and the checks
// cannot drift apart.

// Signature is the lower-case hex HMAC-SHA256 of msg's parts, one after
// the other, keyed with secret.
func Signature(secret string, msg ...[]byte) string {
	return hex.EncodeToString(hmacSHA256(secret, msg...))
}

// hmacSHA256 is the HMAC-SHA256 of msg's parts, one after the other, keyed
// with secret: the one MAC behind every signature and check here.
func hmacSHA256(secret string, msg ...[]byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	for _, p := range msg {
		m.Write(p)
	}
	return m.Sum(nil)
}

// ValidSignature reports whether sig, hex in either case, is the
// HMAC-SHA256 of body keyed with secret: the check of a v1 provider's
// wallet call (VerifyProviderCall). The comparison takes constant time.
func ValidSignature(secret string, body []byte, sig string) bool {
	want, err := hex.DecodeString(sig)
	if err != nil || len(want) != sha256.Size {
		return false
	}
	return hmac.Equal(hmacSHA256(secret, body), want)
}

// SameSecret reports whether given is secret, in constant time, the
// lengths included (both are hashed first): the check of a protocol that
// sends the provider's secret itself (Evolution's authToken, Red Tiger's
// API key). An empty secret matches nothing.
func SameSecret(given, secret string) bool {
	if secret == "" {
		return false
	}
	g, s := sha256.Sum256([]byte(given)), sha256.Sum256([]byte(secret))
	return hmac.Equal(g[:], s[:])
}
