// Package secretbox seals small secrets (client secrets, provider secrets)
// for storage with AES-256-GCM under one server master key.
//
// The service must be able to compute HMACs with these secrets, so it keeps
// them recoverable, but never in plain text at rest: a database dump alone
// does not reveal them. A sealed value is
//
//	0x01 | key id (4 bytes) | nonce (12 bytes) | ciphertext and tag
//
// The key id is the first 4 bytes of SHA-256 of the key, so a value sealed
// under another key is reported as such instead of as a broken value. The
// caller's context string (e.g. "client_secret:acme") is authenticated
// data: a sealed value copied to another row does not open there.
package secretbox

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// KeySize is the master key's length: AES-256.
const KeySize = 32

const (
	version   = 0x01
	kidSize   = 4
	nonceSize = 12
	header    = 1 + kidSize + nonceSize
)

// Errors of Open.
var (
	ErrWrongKey  = errors.New("sealed with a different master key")
	ErrMalformed = errors.New("sealed value is malformed or was altered")
)

// Box seals and opens values under one master key. It is safe for
// concurrent use.
type Box struct {
	aead cipher.AEAD
	kid  [kidSize]byte
}

// New returns a box over a 32-byte key.
func New(key []byte) (*Box, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("master key is %d bytes, want %d", len(key), KeySize)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("master key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("master key: %w", err)
	}
	b := &Box{aead: aead}
	sum := sha256.Sum256(key)
	copy(b.kid[:], sum[:kidSize])
	return b, nil
}

// KeyID is the hex id of the box's key (not secret: it identifies which key
// sealed a value).
func (b *Box) KeyID() string { return hex.EncodeToString(b.kid[:]) }

func (b *Box) aad(context string) []byte {
	return append(append([]byte{version}, b.kid[:]...), context...)
}

// Seal encrypts plaintext bound to context.
func (b *Box) Seal(plaintext []byte, context string) []byte {
	out := make([]byte, header, header+len(plaintext)+b.aead.Overhead())
	out[0] = version
	copy(out[1:], b.kid[:])
	if _, err := rand.Read(out[1+kidSize : header]); err != nil {
		panic(fmt.Sprintf("secretbox: no randomness: %v", err)) // crypto/rand never fails on supported systems
	}
	return b.aead.Seal(out, out[1+kidSize:header], plaintext, b.aad(context))
}

// Open decrypts a value Seal made with the same key and context.
func (b *Box) Open(sealed []byte, context string) ([]byte, error) {
	if len(sealed) < header+b.aead.Overhead() || sealed[0] != version {
		return nil, ErrMalformed
	}
	if !bytes.Equal(sealed[1:1+kidSize], b.kid[:]) {
		return nil, fmt.Errorf("key %s, this server has %s: %w", hex.EncodeToString(sealed[1:1+kidSize]), b.KeyID(), ErrWrongKey)
	}
	pt, err := b.aead.Open(nil, sealed[1+kidSize:header], sealed[header:], b.aad(context))
	if err != nil {
		return nil, ErrMalformed
	}
	return pt, nil
}

// ParseKey reads a master key written as 64 hex digits or as base64
// (standard or URL alphabet, padded or not) of 32 bytes.
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if len(s) == 2*KeySize {
		if k, err := hex.DecodeString(s); err == nil {
			return k, nil
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if k, err := enc.DecodeString(s); err == nil && len(k) == KeySize {
			return k, nil
		}
	}
	return nil, fmt.Errorf("master key must be %d bytes as 64 hex digits or base64", KeySize)
}

// NewKey returns a fresh random key, hex encoded.
func NewKey() string {
	k := make([]byte, KeySize)
	_, _ = rand.Read(k)
	return hex.EncodeToString(k)
}

// LoadOrCreateKeyFile reads the key kept in path, creating the file (mode
// 0600) with a new key when it does not exist. created tells which.
func LoadOrCreateKeyFile(path string) (key []byte, created bool, err error) {
	b, err := os.ReadFile(path)
	if err == nil {
		k, perr := ParseKey(string(b))
		if perr != nil {
			return nil, false, fmt.Errorf("%s: %w", path, perr)
		}
		return k, false, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, false, fmt.Errorf("read %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, false, fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	s := NewKey()
	// Write a temporary file, then link it into place: link fails when the
	// name exists, so of two processes starting at once one key wins and
	// the other reads it, never a half-written file.
	tmp, err := os.CreateTemp(filepath.Dir(path), ".secret-key-*")
	if err != nil {
		return nil, false, fmt.Errorf("create key in %s: %w", filepath.Dir(path), err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(s + "\n"); err != nil {
		_ = tmp.Close()
		return nil, false, fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return nil, false, fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return LoadOrCreateKeyFile(path)
		}
		return nil, false, fmt.Errorf("create %s: %w", path, err)
	}
	k, _ := hex.DecodeString(s)
	return k, true, nil
}
