package providersim_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"testing"

	"github.com/pitboss/pitboss/providersim"
)

// TestParsePrivateKey reads the key files openssl writes (PKCS #8 from
// genpkey, PKCS #1 from older genrsa) and refuses anything else as a
// configuration error.
func TestParsePrivateKey(t *testing.T) {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ecDER, err := x509.MarshalPKCS8PrivateKey(ec)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	for _, good := range []*pem.Block{{Type: "PRIVATE KEY", Bytes: pkcs8}, {Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}} {
		got, err := providersim.ParsePrivateKey(pem.EncodeToMemory(good))
		if err != nil || !got.Equal(k) {
			t.Fatalf("%s: %v", good.Type, err)
		}
	}
	for name, bad := range map[string][]byte{
		"not PEM":    []byte("-----BEGIN nothing"),
		"public key": pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}),
		"EC key":     pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: ecDER}),
		"garbage":    pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: []byte("xx")}),
	} {
		if _, err := providersim.ParsePrivateKey(bad); !errors.Is(err, providersim.ErrConfig) {
			t.Errorf("%s: err %v, want ErrConfig", name, err)
		}
	}
}
