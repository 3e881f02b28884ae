// Package witness asks transparency-log witnesses to cosign the verifiable
// log's checkpoints (docs/audit.md, "Witness cosigning"), over the C2SP
// tlog-witness protocol: for each configured witness, POST
// <prefix>/add-checkpoint with the size the witness last cosigned, a
// consistency proof from it (from the stored tiles, Go's tlog) and the
// signed checkpoint; the witness answers cosignature/v1 lines (C2SP
// tlog-cosignature: a timestamped Ed25519 signature), which are checked
// with the witness's key and added to the stored note, so the checkpoint
// routes serve the cosigned note.
package witness

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// cosignatureAlg is the key type byte of an Ed25519 cosignature/v1 key
// (C2SP tlog-cosignature).
const cosignatureAlg = 0x04

// Witness is a witness the log asks to cosign: its key name, the
// submission prefix of its HTTP API and its Ed25519 cosignature key.
type Witness struct {
	Name string
	URL  string
	Key  ed25519.PublicKey
}

// keyID is the witness key's note key id: SHA-256(name || "\n" || 0x04 ||
// key)[:4].
func keyID(name string, pub ed25519.PublicKey) uint32 {
	h := sha256.New()
	h.Write([]byte(name))
	h.Write([]byte{'\n', cosignatureAlg})
	h.Write(pub)
	return binary.BigEndian.Uint32(h.Sum(nil))
}

// VerifierKey is a cosignature key in the note verifier key form,
// "name+hash+base64(0x04 || key)".
func VerifierKey(name string, pub ed25519.PublicKey) string {
	return fmt.Sprintf("%s+%08x+%s", name, keyID(name, pub),
		base64.StdEncoding.EncodeToString(append([]byte{cosignatureAlg}, pub...)))
}

// ParseVerifierKey reads a witness's cosignature verifier key
// ("name+hash+base64(0x04 || Ed25519 key)"), checking its hash.
func ParseVerifierKey(vkey string) (string, ed25519.PublicKey, error) {
	name, rest, ok1 := strings.Cut(vkey, "+")
	hash, key, ok2 := strings.Cut(rest, "+")
	raw, err := base64.StdEncoding.DecodeString(key)
	switch {
	case !ok1 || !ok2 || name == "" || strings.ContainsAny(name, " \n+"):
		return "", nil, fmt.Errorf("witness key %q: not name+hash+key", vkey)
	case err != nil || len(raw) != 1+ed25519.PublicKeySize || raw[0] != cosignatureAlg:
		return "", nil, fmt.Errorf("witness key %q: not an Ed25519 cosignature/v1 key (0x04)", vkey)
	}
	pub := ed25519.PublicKey(raw[1:])
	if h, err := strconv.ParseUint(hash, 16, 32); err != nil || len(hash) != 8 || uint32(h) != keyID(name, pub) {
		return "", nil, fmt.Errorf("witness key %q: its hash is not the key's", vkey)
	}
	return name, pub, nil
}

// ParseWitnesses reads PITBOSS_LOG_WITNESSES: witnesses separated by
// commas, each its verifier key and its submission prefix (an http or
// https URL) separated by a space.
func ParseWitnesses(s string) ([]Witness, error) {
	var out []Witness
	var errs []error
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		vkey, prefix, ok := strings.Cut(item, " ")
		name, pub, err := ParseVerifierKey(vkey)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		prefix = strings.TrimSpace(prefix)
		if u, err := url.Parse(prefix); !ok || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("witness %s: %q is not an http(s) URL", name, prefix))
			continue
		}
		for _, w := range out {
			if w.Name == name {
				errs = append(errs, fmt.Errorf("witness %s: named twice", name))
			}
		}
		out = append(out, Witness{Name: name, URL: strings.TrimSuffix(prefix, "/"), Key: pub})
	}
	return out, errors.Join(errs...)
}

// noteText is a signed note's text: everything before the blank line that
// starts its signatures, with its final newline.
func noteText(note []byte) (string, error) {
	i := bytes.Index(note, []byte("\n\n"))
	if i < 0 {
		return "", errors.New("not a signed note: no blank line before the signatures")
	}
	return string(note[:i+1]), nil
}

// CosignedMessage is what a cosignature/v1 signs: its header line, the
// time line, and the checkpoint's note text.
func CosignedMessage(text string, t time.Time) []byte {
	return []byte("cosignature/v1\ntime " + strconv.FormatInt(t.Unix(), 10) + "\n" + text)
}

// Verify checks a note signature line (with or without its newline) as
// w's cosignature/v1 over the checkpoint text, and returns its time. A
// line of another key is ErrOtherKey.
func (w Witness) Verify(text, line string) (time.Time, error) {
	rest, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "— ")
	name, b64, ok2 := strings.Cut(rest, " ")
	if !ok || !ok2 {
		return time.Time{}, fmt.Errorf("%q is not a note signature line", line)
	}
	sig, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(sig) < 4 {
		return time.Time{}, fmt.Errorf("%q is not a note signature line", line)
	}
	if name != w.Name || binary.BigEndian.Uint32(sig) != keyID(w.Name, w.Key) {
		return time.Time{}, ErrOtherKey
	}
	if len(sig) != 4+8+ed25519.SignatureSize {
		return time.Time{}, fmt.Errorf("witness %s: a cosignature of %d bytes, want %d", w.Name, len(sig), 4+8+ed25519.SignatureSize)
	}
	ts := binary.BigEndian.Uint64(sig[4:])
	if ts > 1<<63-1 {
		return time.Time{}, fmt.Errorf("witness %s: timestamp %d out of range", w.Name, ts)
	}
	t := time.Unix(int64(ts), 0).UTC()
	if !ed25519.Verify(w.Key, CosignedMessage(text, t), sig[12:]) {
		return time.Time{}, fmt.Errorf("witness %s: the cosignature does not verify", w.Name)
	}
	return t, nil
}

// ErrOtherKey is a signature line that is not the witness's.
var ErrOtherKey = errors.New("a signature of another key")

// signedBy says whether note carries a signature line of w's key.
func (w Witness) signedBy(note []byte) bool {
	prefix := []byte("— " + w.Name + " ")
	for _, line := range bytes.Split(note, []byte("\n")) {
		if b, ok := bytes.CutPrefix(line, prefix); ok {
			if sig, err := base64.StdEncoding.DecodeString(string(b)); err == nil && len(sig) >= 4 &&
				binary.BigEndian.Uint32(sig) == keyID(w.Name, w.Key) {
				return true
			}
		}
	}
	return false
}
