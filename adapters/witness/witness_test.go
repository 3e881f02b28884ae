package witness_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/pitboss/pitboss/adapters/witness"
	"github.com/pitboss/pitboss/ledgerlog"
)

func TestParseWitnesses(t *testing.T) {
	t.Parallel()
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	key := witness.VerifierKey("witness.example/w1", pub)
	other := witness.VerifierKey("witness.example/w2", pub)
	noteKey, err := ledgerlog.VerifierKey("witness.example/w1", pub) // a note signing key (0x01), not a cosignature key
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, in string
		n        int
		bad      bool
	}{
		{"none", "", 0, false},
		{"one", key + " https://w1.example/api", 1, false},
		{"two", key + " https://w1.example/," + other + " http://w2.example:8080", 2, false},
		{"no URL", key, 0, true},
		{"not a URL", key + " w1.example", 0, true},
		{"a hash of another key", strings.Replace(key, "witness.example/w1+", "witness.example/w3+", 1) + " https://w", 0, true},
		{"a note key", noteKey + " https://w1.example", 0, true},
		{"twice", key + " https://a.example," + key + " https://b.example", 2, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ws, err := witness.ParseWitnesses(tt.in)
			if (err != nil) != tt.bad || (!tt.bad && len(ws) != tt.n) {
				t.Fatalf("%d witnesses, %v", len(ws), err)
			}
		})
	}
}

// TestVerifyCosignature checks a cosignature/v1 line as the specification
// builds it, and refuses it over another text, from another key or cut.
func TestVerifyCosignature(t *testing.T) {
	t.Parallel()
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	ws, err := witness.ParseWitnesses(witness.VerifierKey("w.example", pub) + " https://w.example")
	if err != nil {
		t.Fatal(err)
	}
	w := ws[0]
	text := "pitboss.test/ledger\n3\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n"
	at := time.Unix(1780000000, 0).UTC()
	line := cosign(t, "w.example", pub, priv, text, at)
	if got, err := w.Verify(text, line); err != nil || !got.Equal(at) {
		t.Fatalf("verify: %v %v", got, err)
	}
	if _, err := w.Verify(strings.Replace(text, "3", "4", 1), line); err == nil {
		t.Fatal("a cosignature of another checkpoint verified")
	}
	if _, err := w.Verify(text, strings.Replace(line, "w.example", "x.example", 1)); err != witness.ErrOtherKey {
		t.Fatalf("another name: %v", err)
	}
	if _, err := w.Verify(text, line[:len(line)-8]+"\n"); err == nil {
		t.Fatal("a cut cosignature verified")
	}
}

// cosign is a cosignature/v1 line built from the specification's text.
func cosign(t *testing.T, name string, pub ed25519.PublicKey, priv ed25519.PrivateKey, text string, at time.Time) string {
	t.Helper()
	sig := []byte{}
	id := specKeyID(name, pub)
	sig = append(sig, byte(id>>24), byte(id>>16), byte(id>>8), byte(id))
	ts := uint64(at.Unix())
	for i := 7; i >= 0; i-- {
		sig = append(sig, byte(ts>>(8*i)))
	}
	sig = append(sig, ed25519.Sign(priv, []byte("cosignature/v1\ntime 1780000000\n"+text))...)
	return "— " + name + " " + base64.StdEncoding.EncodeToString(sig) + "\n"
}
