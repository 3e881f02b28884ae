package secretbox_test

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pitboss/pitboss/adapters/secretbox"
)

func mustBox(t *testing.T, key []byte) *secretbox.Box {
	t.Helper()
	b, err := secretbox.New(key)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSealOpen(t *testing.T) {
	keyA := bytes.Repeat([]byte{1}, secretbox.KeySize)
	keyB := bytes.Repeat([]byte{2}, secretbox.KeySize)
	a, b := mustBox(t, keyA), mustBox(t, keyB)
	secret := []byte("pbcs_0123456789abcdef")
	sealed := a.Seal(secret, "client_secret:acme")

	if bytes.Contains(sealed, secret) {
		t.Fatal("sealed value contains the plain text")
	}
	if again := a.Seal(secret, "client_secret:acme"); bytes.Equal(again, sealed) {
		t.Fatal("two seals of one value are equal: nonce reused")
	}
	got, err := a.Open(sealed, "client_secret:acme")
	if err != nil || !bytes.Equal(got, secret) {
		t.Fatalf("open: %q, %v", got, err)
	}

	tampered := append([]byte(nil), sealed...)
	tampered[len(tampered)-1] ^= 1
	cases := []struct {
		name    string
		box     *secretbox.Box
		sealed  []byte
		context string
		want    error
	}{
		{"other key", b, sealed, "client_secret:acme", secretbox.ErrWrongKey},
		{"other context (copied to another row)", a, sealed, "client_secret:other", secretbox.ErrMalformed},
		{"altered byte", a, tampered, "client_secret:acme", secretbox.ErrMalformed},
		{"truncated", a, sealed[:10], "client_secret:acme", secretbox.ErrMalformed},
		{"empty", a, nil, "client_secret:acme", secretbox.ErrMalformed},
		{"unknown version", a, append([]byte{9}, sealed[1:]...), "client_secret:acme", secretbox.ErrMalformed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tc.box.Open(tc.sealed, tc.context); !errors.Is(err, tc.want) {
				t.Fatalf("open: %v, want %v", err, tc.want)
			}
		})
	}
}

func TestParseKey(t *testing.T) {
	raw := bytes.Repeat([]byte{0xab}, secretbox.KeySize)
	cases := []struct {
		name, in string
		ok       bool
	}{
		{"hex", hex.EncodeToString(raw), true},
		{"hex with newline", hex.EncodeToString(raw) + "\n", true},
		{"base64", base64.StdEncoding.EncodeToString(raw), true},
		{"base64 url raw", base64.RawURLEncoding.EncodeToString(raw), true},
		{"too short", hex.EncodeToString(raw[:16]), false},
		{"not a key", "correct horse battery staple", false},
		{"empty", "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k, err := secretbox.ParseKey(tc.in)
			if (err == nil) != tc.ok {
				t.Fatalf("err %v, want ok=%v", err, tc.ok)
			}
			if tc.ok && !bytes.Equal(k, raw) {
				t.Fatalf("key %x", k)
			}
		})
	}
	if _, err := secretbox.New(raw[:16]); err == nil {
		t.Fatal("a 16-byte key was accepted")
	}
}

func TestLoadOrCreateKeyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data", "secret.key")
	const n = 8
	keys := make([][]byte, n)
	created := make([]bool, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			k, c, err := secretbox.LoadOrCreateKeyFile(path)
			if err != nil {
				t.Error(err)
			}
			keys[i], created[i] = k, c
		})
	}
	wg.Wait()
	made := 0
	for i := range n {
		if !bytes.Equal(keys[i], keys[0]) || len(keys[i]) != secretbox.KeySize {
			t.Fatalf("caller %d got key %x, caller 0 got %x", i, keys[i], keys[0])
		}
		if created[i] {
			made++
		}
	}
	if made != 1 {
		t.Fatalf("%d callers created the key, want 1", made)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v", st.Mode().Perm())
	}
	again, c, err := secretbox.LoadOrCreateKeyFile(path)
	if err != nil || c || !bytes.Equal(again, keys[0]) {
		t.Fatalf("reload: %x, created %v, %v", again, c, err)
	}
	if err := os.WriteFile(path, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := secretbox.LoadOrCreateKeyFile(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("garbage key file: %v", err)
	}
}
