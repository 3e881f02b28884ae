package gateway_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"strings"
	"testing"

	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/gateway/rsasig"
)

func rsaKey(t *testing.T, bits int) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, bits)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func pemOf(t *testing.T, typ string, der []byte) string {
	t.Helper()
	return string(pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}))
}

// TestParseRSAPublicKey: a provider's key is one PEM block of an RSA public
// key of at least 2048 bits, in PKIX or PKCS #1.
func TestParseRSAPublicKey(t *testing.T) {
	k := rsaKey(t, 2048)
	pkix, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"PKIX":    pemOf(t, "PUBLIC KEY", pkix),
		"PKCS #1": pemOf(t, "RSA PUBLIC KEY", x509.MarshalPKCS1PublicKey(&k.PublicKey)),
		"spaced":  "\n  " + pemOf(t, "PUBLIC KEY", pkix) + "\n\n",
	} {
		got, err := gateway.ParseRSAPublicKey(text)
		if err != nil || !got.Equal(&k.PublicKey) {
			t.Errorf("%s: %v", name, err)
		}
	}
	weak := rsaKey(t, 1024)
	weakDER, _ := x509.MarshalPKIXPublicKey(&weak.PublicKey)
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ecDER, _ := x509.MarshalPKIXPublicKey(&ec.PublicKey)
	privDER := x509.MarshalPKCS1PrivateKey(k)
	for name, tc := range map[string]struct{ text, want string }{
		"empty":       {"", "no PEM block"},
		"not PEM":     {"MIIBIjANBgkq", "no PEM block"},
		"two blocks":  {pemOf(t, "PUBLIC KEY", pkix) + pemOf(t, "PUBLIC KEY", pkix), "more than one"},
		"short":       {pemOf(t, "PUBLIC KEY", weakDER), "1024 bits"},
		"EC":          {pemOf(t, "PUBLIC KEY", ecDER), "ecdsa"},
		"private key": {pemOf(t, "RSA PRIVATE KEY", privDER), `"RSA PRIVATE KEY"`},
		"garbage DER": {pemOf(t, "PUBLIC KEY", []byte("garbage")), "not an RSA public key"},
	} {
		_, err := gateway.ParseRSAPublicKey(tc.text)
		if !errors.Is(err, gateway.ErrPublicKey) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrPublicKey saying %q", name, err, tc.want)
		}
	}
}

// TestVerifyRSASHA256: the standard base64 of a PKCS #1 v1.5 SHA-256
// signature of the body, by the key's private half, and nothing else.
func TestVerifyRSASHA256(t *testing.T) {
	k, other := rsaKey(t, 2048), rsaKey(t, 2048)
	body := []byte(`{"token":"gs_1","amount":100000}`)
	sign := func(key *rsa.PrivateKey, b []byte) []byte {
		sum := sha256.Sum256(b)
		s, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	good := sign(k, body)
	if err := gateway.VerifyRSASHA256(prepared(t, &k.PublicKey), body, base64.StdEncoding.EncodeToString(good)); err != nil {
		t.Fatalf("good signature: %v", err)
	}
	pss, err := rsa.SignPSS(rand.Reader, k, crypto.SHA256, func() []byte { s := sha256.Sum256(body); return s[:] }(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		sig  string
		body []byte
		want error
	}{
		"missing":       {"", body, gateway.ErrSignatureMalformed},
		"not base64":    {"!!!", body, gateway.ErrSignatureMalformed},
		"URL base64":    {base64.URLEncoding.EncodeToString(good), body, nil},
		"another key":   {base64.StdEncoding.EncodeToString(sign(other, body)), body, gateway.ErrSignatureMismatch},
		"another body":  {base64.StdEncoding.EncodeToString(good), append([]byte(" "), body...), gateway.ErrSignatureMismatch},
		"PSS, not v1.5": {base64.StdEncoding.EncodeToString(pss), body, gateway.ErrSignatureMismatch},
	} {
		err := gateway.VerifyRSASHA256(prepared(t, &k.PublicKey), tc.body, tc.sig)
		if name == "URL base64" {
			// Standard and URL-safe base64 agree unless the signature
			// holds + or /; when they differ, URL-safe is refused.
			if strings.ContainsAny(base64.StdEncoding.EncodeToString(good), "+/") && !errors.Is(err, gateway.ErrSignatureMalformed) {
				t.Errorf("URL-safe base64: %v", err)
			}
			continue
		}
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", name, err, tc.want)
		}
	}
}

// TestWalletProtocolRules: the protocols and the credentials they need.
func TestWalletProtocolRules(t *testing.T) {
	if err := gateway.CheckWalletProtocol("p", "caleta"); err != nil {
		t.Fatal(err)
	}
	var fe *gateway.FieldError
	if err := gateway.CheckWalletProtocol("p", "hub88"); !errors.As(err, &fe) || fe.Field != "p" {
		t.Fatalf("unknown protocol: %v", err)
	}
	if err := gateway.CheckWalletCredentials("k", "caleta", " "); !errors.As(err, &fe) || !strings.Contains(fe.Message, "needs its RSA public key") {
		t.Fatalf("caleta without a key: %v", err)
	}
	if err := gateway.CheckWalletCredentials("k", "pitboss", ""); err != nil {
		t.Fatalf("pitboss without a key: %v", err)
	}
	// Evolution authenticates with the provider's secret: no key needed.
	if err := gateway.CheckWalletProtocol("p", "evolution"); err != nil {
		t.Fatal(err)
	}
	if err := gateway.CheckWalletCredentials("k", "evolution", ""); err != nil {
		t.Fatalf("evolution without a key: %v", err)
	}
	if err := gateway.CheckWalletCredentials("k", "pitboss", "junk"); !errors.As(err, &fe) {
		t.Fatalf("pitboss with a junk key: %v", err)
	}
	if p := (gateway.Provider{}); p.Protocol() != gateway.WalletProtocolPitboss {
		t.Fatalf("default protocol %q", p.Protocol())
	}
}

// prepared is pub ready for gateway.VerifyRSASHA256.
func prepared(t *testing.T, pub *rsa.PublicKey) *rsasig.Key {
	t.Helper()
	k, err := rsasig.Prepare(pub)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
