// Package bincopy encodes rows in PostgreSQL's binary COPY format, a row at
// a time: far cheaper than encoding every value through its type's codec,
// which a rebuild of millions of rows (readstore's shadow tables) feels.
package bincopy

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"time"
)

// ColType is a column's type in the binary COPY format.
type ColType uint8

// The column types.
const (
	Text ColType = iota
	Int8
	Int2
	Bool
	Timestamptz
	Date
	UUID
)

// Epoch is the zero of PostgreSQL's binary timestamps and dates.
var Epoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// binaryCopy is an io.Reader of a table in COPY's binary format, built a
// row at a time by next.
type binaryCopy struct {
	next func(b []byte) ([]byte, bool, error)
	n    int // rows appended
	buf  []byte
	done bool
}

// NewReader returns the COPY ... FROM STDIN WITH (FORMAT binary) input of
// n rows of columns types: row(i) is the i-th row's values.
func NewReader(n int, row func(i int) []any, types []ColType) io.Reader {
	i := 0
	return NewStream(func(b []byte) ([]byte, bool, error) {
		if i >= n {
			return b, false, nil
		}
		b, err := appendBinaryRow(b, types, row(i))
		i++
		return b, true, err
	})
}

// NewStream returns the COPY ... FROM STDIN WITH (FORMAT binary) input of
// the rows next appends to b, one a call (AppendFieldCount, then
// AppendField per column), until it returns false. It reads no further
// than the COPY has taken, so the rows may come from a query as they
// arrive, however many there are.
func NewStream(next func(b []byte) ([]byte, bool, error)) io.Reader {
	c := &binaryCopy{next: next}
	// Signature, flags, header extension length.
	c.buf = append(c.buf, "PGCOPY\n\xff\r\n\x00"...)
	c.buf = binary.BigEndian.AppendUint32(c.buf, 0)
	c.buf = binary.BigEndian.AppendUint32(c.buf, 0)
	return c
}

func (c *binaryCopy) Read(p []byte) (int, error) {
	for len(c.buf) < len(p) && !c.done {
		b, more, err := c.next(c.buf)
		if err != nil {
			return 0, fmt.Errorf("row %d: %w", c.n, err)
		}
		if !more {
			c.buf = binary.BigEndian.AppendUint16(c.buf, 0xffff) // trailer: -1
			c.done = true
			break
		}
		c.buf = b
		c.n++
	}
	if len(c.buf) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.buf)
	c.buf = c.buf[:copy(c.buf, c.buf[n:])]
	return n, nil
}

// AppendFieldCount starts a row of n fields.
func AppendFieldCount(b []byte, n int) []byte { return binary.BigEndian.AppendUint16(b, uint16(n)) }

// AppendField appends a field of raw bytes in the column type's binary
// form (a text's bytes, an int8's 8 big-endian bytes, a uuid's 16), as a
// query's binary results hold them; nil is NULL.
func AppendField(b, raw []byte) []byte {
	if raw == nil {
		return binary.BigEndian.AppendUint32(b, 0xffffffff)
	}
	b = binary.BigEndian.AppendUint32(b, uint32(len(raw)))
	return append(b, raw...)
}

// appendBinaryRow appends one row: the field count, then each field's
// length and bytes (length -1 for NULL).
func appendBinaryRow(b []byte, types []ColType, vals []any) ([]byte, error) {
	if len(vals) != len(types) {
		return b, fmt.Errorf("%d values for %d columns", len(vals), len(types))
	}
	b = AppendFieldCount(b, len(types))
	for i, v := range vals {
		if v == nil {
			b = binary.BigEndian.AppendUint32(b, 0xffffffff)
			continue
		}
		var err error
		if b, err = appendBinaryValue(b, types[i], v); err != nil {
			return b, fmt.Errorf("column %d: %w", i, err)
		}
	}
	return b, nil
}

func appendBinaryValue(b []byte, t ColType, v any) ([]byte, error) {
	switch t {
	case Text:
		s, ok := v.(string)
		if !ok {
			break
		}
		b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
		return append(b, s...), nil
	case Int8, Int2:
		var n int64
		switch x := v.(type) {
		case int64:
			n = x
		case int:
			n = int64(x)
		default:
			return b, fmt.Errorf("%T is not an integer", v)
		}
		if t == Int2 {
			if n < -1<<15 || n >= 1<<15 {
				return b, fmt.Errorf("%d does not fit a smallint", n)
			}
			b = binary.BigEndian.AppendUint32(b, 2)
			return binary.BigEndian.AppendUint16(b, uint16(int16(n))), nil
		}
		b = binary.BigEndian.AppendUint32(b, 8)
		return binary.BigEndian.AppendUint64(b, uint64(n)), nil
	case Bool:
		x, ok := v.(bool)
		if !ok {
			break
		}
		b = binary.BigEndian.AppendUint32(b, 1)
		if x {
			return append(b, 1), nil
		}
		return append(b, 0), nil
	case Timestamptz:
		x, ok := v.(time.Time)
		if !ok {
			break
		}
		b = binary.BigEndian.AppendUint32(b, 8)
		return binary.BigEndian.AppendUint64(b, uint64(x.UnixMicro()-Epoch.UnixMicro())), nil
	case Date:
		x, ok := v.(time.Time)
		if !ok {
			break
		}
		secs := x.Unix() - Epoch.Unix()
		if secs%86400 != 0 {
			return b, fmt.Errorf("%v is not a UTC day", x)
		}
		b = binary.BigEndian.AppendUint32(b, 4)
		return binary.BigEndian.AppendUint32(b, uint32(int32(secs/86400))), nil
	case UUID:
		s, ok := v.(string)
		if !ok || len(s) != 36 {
			break
		}
		var u [16]byte
		if _, err := hex.Decode(u[:], []byte(s[0:8]+s[9:13]+s[14:18]+s[19:23]+s[24:])); err != nil {
			return b, fmt.Errorf("uuid %q: %w", s, err)
		}
		b = binary.BigEndian.AppendUint32(b, 16)
		return append(b, u[:]...), nil
	}
	return b, fmt.Errorf("%T %v does not go into column type %d", v, v, t)
}
