package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// EncodeCanonical is v's canonical JSON, the bytes a signature covers:
// v's fields in their declared order, no white space, no HTML escaping.
// Checkpoints and statements (package statement) are signed this way.
func EncodeCanonical(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// DecodeCanonical reads b, which must be canonical: strictly decoded into
// a T (no unknown key, nothing after the object), and exactly what encode
// writes for the values it holds (no other order, spacing or escaping),
// so one record has one byte form. what names the record in errors.
func DecodeCanonical[T any](b []byte, what string, encode func(T) ([]byte, error)) (T, error) {
	var v T
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return v, fmt.Errorf("%s: %w", what, err)
	}
	if dec.More() {
		return v, errors.New(what + ": data after the object")
	}
	again, err := encode(v)
	if err != nil {
		return v, err
	}
	if !bytes.Equal(again, b) {
		return v, errors.New(what + " is not in canonical form (key order, spacing or escaping differ)")
	}
	return v, nil
}
