package rsasig_test

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"math/big"
	mrand "math/rand/v2"
	"testing"

	"github.com/pitboss/pitboss/gateway/rsasig"
)

// keys are generated once: 2048 bits (Caleta's), 3072 and 4096, and one
// with the exponent 3 (crypto/rsa verifies those too).
var keys = func() map[string]*rsa.PrivateKey {
	out := map[string]*rsa.PrivateKey{}
	for name, bits := range map[string]int{"2048": 2048, "3072": 3072, "4096": 4096} {
		k, err := rsa.GenerateKey(rand.Reader, bits)
		if err != nil {
			panic(err)
		}
		out[name] = k
	}
	return out
}()

func sign(t testing.TB, k *rsa.PrivateKey, msg []byte) []byte {
	t.Helper()
	sum := sha256.Sum256(msg)
	sig, err := rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	return sig
}

// TestAgreesWithCryptoRSA: every case is answered exactly as
// rsa.VerifyPKCS1v15 answers it.
func TestAgreesWithCryptoRSA(t *testing.T) {
	for name, priv := range keys {
		t.Run(name, func(t *testing.T) {
			key, err := rsasig.Prepare(&priv.PublicKey)
			if err != nil {
				t.Fatal(err)
			}
			msg := []byte(`{"token":"s","amount":100000}`)
			digest := sha256.Sum256(msg)
			good := sign(t, priv, msg)
			other := sign(t, priv, []byte("another body"))
			nMinus1 := new(big.Int).Sub(priv.N, big.NewInt(1)).FillBytes(make([]byte, len(good)))
			sha512Sig := func() []byte {
				d := sha512.Sum512(msg)
				s, err := rsa.SignPKCS1v15(rand.Reader, priv, crypto.SHA512, d[:])
				if err != nil {
					t.Fatal(err)
				}
				return s
			}()
			for _, tc := range []struct {
				name   string
				digest []byte
				sig    []byte
				valid  bool
			}{
				{"valid", digest[:], good, true},
				{"another body's signature", digest[:], other, false},
				{"a SHA-512 signature of the body", digest[:], sha512Sig, false},
				{"first byte flipped", digest[:], flip(good, 0), false},
				{"last byte flipped", digest[:], flip(good, len(good)-1), false},
				{"one byte short", digest[:], good[1:], false},
				{"one byte long", digest[:], append([]byte{0}, good...), false},
				{"empty", digest[:], nil, false},
				{"zero", digest[:], make([]byte, len(good)), false},
				{"the modulus itself", digest[:], priv.N.FillBytes(make([]byte, len(good))), false},
				{"the modulus minus one", digest[:], nMinus1, false},
				{"all ones", digest[:], fill(len(good), 0xff), false},
				{"digest altered", flip(digest[:], 5), good, false},
				{"digest short", digest[:31], good, false},
			} {
				t.Run(tc.name, func(t *testing.T) {
					want := rsa.VerifyPKCS1v15(&priv.PublicKey, crypto.SHA256, tc.digest, tc.sig) == nil
					if want != tc.valid {
						t.Fatalf("crypto/rsa says %v, the case says %v", want, tc.valid)
					}
					got := key.VerifySHA256(tc.digest, tc.sig)
					if (got == nil) != want {
						t.Fatalf("VerifySHA256 = %v, crypto/rsa valid = %v", got, want)
					}
				})
			}
		})
	}
}

// TestRandomCorruptions: random bodies, signatures with random bytes
// changed; both verifiers agree on every one.
func TestRandomCorruptions(t *testing.T) {
	priv := keys["2048"]
	key, err := rsasig.Prepare(&priv.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	r := mrand.New(mrand.NewPCG(1, 2))
	for i := range 200 {
		msg := make([]byte, 1+r.IntN(300))
		for j := range msg {
			msg[j] = byte(r.UintN(256))
		}
		sig := sign(t, priv, msg)
		if i%2 == 1 {
			for range 1 + r.IntN(3) {
				sig[r.IntN(len(sig))] ^= byte(1 + r.UintN(255))
			}
		}
		digest := sha256.Sum256(msg)
		want := rsa.VerifyPKCS1v15(&priv.PublicKey, crypto.SHA256, digest[:], sig) == nil
		if got := key.VerifySHA256(digest[:], sig) == nil; got != want || want != (i%2 == 0) {
			t.Fatalf("case %d: VerifySHA256 valid = %v, crypto/rsa valid = %v", i, got, want)
		}
	}
}

func TestPrepareRefuses(t *testing.T) {
	// crypto/rsa no longer generates small keys; an odd 1023-bit number
	// stands for one.
	small := rsa.PublicKey{N: new(big.Int).Add(new(big.Int).Lsh(big.NewInt(1), 1022), big.NewInt(1)), E: 65537}
	good := keys["2048"].PublicKey
	even := rsa.PublicKey{N: new(big.Int).Add(good.N, big.NewInt(1)), E: good.E}
	for _, tc := range []struct {
		name string
		pub  *rsa.PublicKey
	}{
		{"nil", nil},
		{"no modulus", &rsa.PublicKey{E: 65537}},
		{"1023 bits", &small},
		{"even modulus", &even},
		{"exponent 1", &rsa.PublicKey{N: good.N, E: 1}},
		{"even exponent", &rsa.PublicKey{N: good.N, E: 65536}},
		{"exponent over 31 bits", &rsa.PublicKey{N: good.N, E: 1<<31 + 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := rsasig.Prepare(tc.pub); err == nil {
				t.Fatal("prepared")
			}
		})
	}
	if k, err := rsasig.Prepare(&good); err != nil || k.Public() != &good {
		t.Fatalf("Prepare(2048) = %v, %v", k, err)
	}
}

// TestEncodingChecked: signatures made with the private key over
// encodings that are wrong in one place each, the digest itself right.
// Only the one valid encoding passes, as with crypto/rsa.
func TestEncodingChecked(t *testing.T) {
	priv := keys["2048"]
	key, err := rsasig.Prepare(&priv.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	digest := sha256.Sum256([]byte("body"))
	k := priv.Size()
	prefix := []byte{0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04, 0x20}
	valid := func() []byte { // 00 01 FF…FF 00 prefix digest
		em := fill(k, 0xff)
		em[0], em[1] = 0x00, 0x01
		t := append(append([]byte(nil), prefix...), digest[:]...)
		em[k-len(t)-1] = 0x00
		copy(em[k-len(t):], t)
		return em
	}
	for _, tc := range []struct {
		name  string
		edit  func(em []byte)
		valid bool
	}{
		{"the valid encoding", func([]byte) {}, true},
		{"block type 2", func(em []byte) { em[1] = 0x02 }, false},
		{"leading byte 1", func(em []byte) { em[0] = 0x01 }, false},
		{"a padding byte not FF", func(em []byte) { em[40] = 0xfe }, false},
		{"the separator not zero", func(em []byte) { em[k-len(prefix)-sha256.Size-1] = 0xff }, false},
		{"DigestInfo names SHA-512", func(em []byte) { em[k-sha256.Size-len(prefix)+14] = 0x03 }, false},
		{"DigestInfo length altered", func(em []byte) { em[k-sha256.Size-len(prefix)+1] = 0x30 }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			em := valid()
			tc.edit(em)
			sig := new(big.Int).Exp(new(big.Int).SetBytes(em), priv.D, priv.N).FillBytes(make([]byte, k))
			want := rsa.VerifyPKCS1v15(&priv.PublicKey, crypto.SHA256, digest[:], sig) == nil
			got := key.VerifySHA256(digest[:], sig) == nil
			if got != want || want != tc.valid {
				t.Fatalf("VerifySHA256 valid = %v, crypto/rsa valid = %v, case valid = %v", got, want, tc.valid)
			}
		})
	}
}

func flip(b []byte, i int) []byte {
	c := append([]byte(nil), b...)
	c[i] ^= 0x01
	return c
}

func fill(n int, v byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = v
	}
	return b
}

// BenchmarkVerify compares a prepared key with crypto/rsa, which prepares
// the key on every call:
//
//	go test -run '^$' -bench Verify ./gateway/rsasig/
func BenchmarkVerify(b *testing.B) {
	priv := keys["2048"]
	msg := []byte(`{"token":"s","request_uuid":"r","transaction_uuid":"t","amount":100000}`)
	sig := sign(b, priv, msg)
	digest := sha256.Sum256(msg)
	key, err := rsasig.Prepare(&priv.PublicKey)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("prepared", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if key.VerifySHA256(digest[:], sig) != nil {
				b.Fatal("refused")
			}
		}
	})
	b.Run("crypto-rsa", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if rsa.VerifyPKCS1v15(&priv.PublicKey, crypto.SHA256, digest[:], sig) != nil {
				b.Fatal("refused")
			}
		}
	})
}
