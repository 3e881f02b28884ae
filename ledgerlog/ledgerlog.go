// Package ledgerlog is the verifiable log over the ledger (docs/audit.md,
// "The verifiable log"): a Merkle tree with RFC 6962 hashing, one leaf per
// event over the event's canonical body (the bytes the hash chain covers),
// kept beside the chain — one tree for the platform and one per client,
// over that client's events only. The tree arithmetic is Go's
// golang.org/x/mod/sumdb/tlog; checkpoints are C2SP signed notes
// (golang.org/x/mod/sumdb/note) and the tree is stored and served as C2SP
// tlog-tiles of height 8. The package is pure: the store and the builder
// that feeds it committed events are adapters.
package ledgerlog

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// TileHeight is the height of every tile: C2SP tlog-tiles fixes it at 8
// (256 hashes a full tile).
const TileHeight = 8

// PlatformLog names the platform's log in storage; a client's log is
// ClientLog(id).
const PlatformLog = "platform"

// ClientLog is the storage name of a client's log.
func ClientLog(client string) string { return "client/" + client }

// ClientOf is the client of a log name, "" for the platform's.
func ClientOf(log string) string { return strings.TrimPrefix(log, "client/") }

// Origin is a log's C2SP origin line: base (the installation's, such as
// "pitboss.example.com/ledger") for the platform, base + "/clients/" + id
// for a client's log.
func Origin(base, log string) string {
	if log == PlatformLog {
		return base
	}
	return base + "/clients/" + ClientOf(log)
}

// LeafHash is an event's leaf: RFC 6962's hash of its canonical body.
func LeafHash(body []byte) tlog.Hash { return tlog.RecordHash(body) }

// Checkpoint is a C2SP tlog-checkpoint's body: the log's origin, its size
// and the root of the tree of that size.
type Checkpoint struct {
	Origin string
	Size   int64
	Root   tlog.Hash
}

// Text is the checkpoint's note text: origin, size and base64 root, each
// on its own line.
func (c Checkpoint) Text() string {
	return c.Origin + "\n" + strconv.FormatInt(c.Size, 10) + "\n" + base64.StdEncoding.EncodeToString(c.Root[:]) + "\n"
}

// ParseCheckpoint reads a checkpoint's text (a note's text, any extension
// lines after the root are ignored as C2SP allows).
func ParseCheckpoint(text string) (Checkpoint, error) {
	lines := strings.SplitN(text, "\n", 4)
	if len(lines) < 4 {
		return Checkpoint{}, errors.New("checkpoint: fewer than three lines")
	}
	var c Checkpoint
	c.Origin = lines[0]
	n, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil || n < 0 || strconv.FormatInt(n, 10) != lines[1] {
		return Checkpoint{}, fmt.Errorf("checkpoint: size %q", lines[1])
	}
	c.Size = n
	root, err := base64.StdEncoding.DecodeString(lines[2])
	if err != nil || len(root) != tlog.HashSize {
		return Checkpoint{}, fmt.Errorf("checkpoint: root %q", lines[2])
	}
	copy(c.Root[:], root)
	if c.Origin == "" {
		return Checkpoint{}, errors.New("checkpoint: no origin")
	}
	return c, nil
}

// Key is a log signing key: an Ed25519 key under a note key name (the
// log's origin, C2SP's convention).
type Key struct {
	Name string
	Priv ed25519.PrivateKey
}

// keyHash is the note key id of an Ed25519 key: the first four bytes of
// SHA-256(name || "\n" || 0x01 || public key).
func keyHash(name string, pub ed25519.PublicKey) uint32 {
	h := sha256.New()
	h.Write([]byte(name))
	h.Write([]byte{'\n', 0x01})
	h.Write(pub)
	return binary.BigEndian.Uint32(h.Sum(nil))
}

// VerifierKey is the note verifier key of a public key under name, the
// form note.NewVerifier reads ("name+hash+base64(0x01||key)").
func VerifierKey(name string, pub ed25519.PublicKey) (string, error) {
	return note.NewEd25519VerifierKey(name, pub)
}

// signer is the note.Signer of k.
func (k Key) signer() (note.Signer, error) {
	pub, ok := k.Priv.Public().(ed25519.PublicKey)
	if !ok || len(k.Priv) != ed25519.PrivateKeySize {
		return nil, errors.New("log key: not an Ed25519 private key")
	}
	skey := fmt.Sprintf("PRIVATE+KEY+%s+%08x+%s", k.Name, keyHash(k.Name, pub),
		base64.StdEncoding.EncodeToString(append([]byte{0x01}, k.Priv.Seed()...)))
	return note.NewSigner(skey)
}

// Sign is c as a signed note, signed with k (C2SP signed-note).
func Sign(c Checkpoint, k Key) ([]byte, error) {
	s, err := k.signer()
	if err != nil {
		return nil, err
	}
	msg, err := note.Sign(&note.Note{Text: c.Text()}, s)
	if err != nil {
		return nil, fmt.Errorf("sign checkpoint of %s: %w", c.Origin, err)
	}
	return msg, nil
}

// Open verifies a signed checkpoint with the verifier keys given (at
// least one must have signed it) and reads it.
func Open(msg []byte, verifierKeys ...string) (Checkpoint, *note.Note, error) {
	var vs []note.Verifier
	for _, k := range verifierKeys {
		v, err := note.NewVerifier(k)
		if err != nil {
			return Checkpoint{}, nil, fmt.Errorf("verifier key %q: %w", k, err)
		}
		vs = append(vs, v)
	}
	n, err := note.Open(msg, note.VerifierList(vs...))
	if err != nil {
		return Checkpoint{}, nil, fmt.Errorf("open checkpoint: %w", err)
	}
	c, err := ParseCheckpoint(n.Text)
	return c, n, err
}
