// Package rsasig verifies RSASSA-PKCS1-v1_5 signatures over SHA-256 (what
// Caleta's wallet calls RSA-SHA256) with a public key prepared once.
//
// crypto/rsa.VerifyPKCS1v15 converts the key to its constant-time modulus
// (Montgomery constants, R² mod N) on every call: about 12 µs of a 2048-bit
// verification's 33 on the box of docs/benchmarks.md, paid by every Caleta
// wallet call. A Key does that once. The check itself is the standard
// library's, step for step (crypto/internal/fips140/rsa.verifyPKCS1v15): the
// signature must be exactly the modulus's length and below it, s^e mod N is
// computed with filippo.io/bigmod (the same arithmetic, re-exported), and
// the result must equal the one valid encoding of the digest,
// 0x00 0x01 FF…FF 0x00 DigestInfo(SHA-256) digest. rsasig_test.go checks it
// against crypto/rsa on valid, corrupted and malformed signatures.
package rsasig

import (
	"crypto/rsa"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"

	"filippo.io/bigmod"
)

// ErrVerification is every refused signature; like crypto/rsa, it does
// not say why.
var ErrVerification = errors.New("rsasig: verification error")

// MinBits is crypto/rsa's floor: it refuses keys under 1024 bits.
const MinBits = 1024

// sha256Prefix is the DER of DigestInfo{sha256, NULL} before the digest
// (RFC 8017, section 9.2, note 1).
var sha256Prefix = []byte{0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04, 0x20}

// Key is a public key prepared for verification. It is immutable and safe
// for concurrent use.
type Key struct {
	pub  *rsa.PublicKey
	n    *bigmod.Modulus
	size int    // the modulus's length in bytes: every signature's length
	em   []byte // the encoding's fixed part: 00 01 FF…FF 00 DigestInfo prefix
}

// Prepare checks pub as crypto/rsa does (an odd modulus of at least
// MinBits, an odd exponent above 1 that fits 31 bits) and precomputes its
// modulus.
func Prepare(pub *rsa.PublicKey) (*Key, error) {
	switch {
	case pub == nil || pub.N == nil:
		return nil, errors.New("rsasig: no public key")
	case pub.N.BitLen() < MinBits:
		return nil, fmt.Errorf("rsasig: a %d-bit key is under %d bits", pub.N.BitLen(), MinBits)
	case pub.N.Bit(0) == 0:
		return nil, errors.New("rsasig: the public modulus is even")
	case pub.E < 3 || pub.E&1 == 0 || pub.E > 1<<31-1:
		return nil, fmt.Errorf("rsasig: public exponent %d is not an odd number from 3 to 2³¹-1", pub.E)
	}
	n, err := bigmod.NewModulus(pub.N.Bytes())
	if err != nil {
		return nil, fmt.Errorf("rsasig: %w", err)
	}
	size := n.Size()
	tLen := len(sha256Prefix) + sha256.Size
	if size < tLen+11 { // unreachable at MinBits; kept as RFC 8017 states it
		return nil, errors.New("rsasig: the key is too short for a SHA-256 signature")
	}
	em := make([]byte, size-sha256.Size)
	em[1] = 0x01
	for i := 2; i < size-tLen-1; i++ {
		em[i] = 0xff
	}
	copy(em[size-tLen:], sha256Prefix)
	return &Key{pub: pub, n: n, size: size, em: em}, nil
}

// Public is the key Prepare was given.
func (k *Key) Public() *rsa.PublicKey { return k.pub }

// VerifySHA256 checks sig, a PKCS #1 v1.5 signature of a SHA-256 digest.
// It answers nil or ErrVerification.
func (k *Key) VerifySHA256(digest, sig []byte) error {
	if len(digest) != sha256.Size || len(sig) != k.size {
		return ErrVerification
	}
	s, err := bigmod.NewNat().SetBytes(sig, k.n) // refuses s ≥ N
	if err != nil {
		return ErrVerification
	}
	m := bigmod.NewNat().ExpShortVarTime(s, uint(k.pub.E), k.n).Bytes(k.n)
	fixed := len(k.em)
	ok := subtle.ConstantTimeCompare(m[:fixed], k.em) & subtle.ConstantTimeCompare(m[fixed:], digest)
	if ok != 1 {
		return ErrVerification
	}
	return nil
}
