// Package bincopy encodes rows in PostgreSQL's binary COPY format, a row at
// a time: far cheaper than encoding every value through its type's codec,
// which a rebuild of millions of rows (readstore's shadow tables) feels.
package bincopy

import (
	"encoding/binary"
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
	return NewRows(n, func(b []byte, i int) ([]byte, error) { return appendBinaryRow(b, types, row(i)) })
}

// NewRows returns the COPY ... FROM STDIN WITH (FORMAT binary) input of n
// rows: appendRow(b, i) appends the i-th (AppendFieldCount, then a field
// per column).
func NewRows(n int, appendRow func(b []byte, i int) ([]byte, error)) io.Reader {
	i := 0
	return NewStream(func(b []byte) ([]byte, bool, error) {
		if i >= n {
			return b, false, nil
		}
		b, err := appendRow(b, i)
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
		if s, ok := v.(string); ok {
			return AppendText(b, s), nil
		}
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
			return AppendInt2(b, n)
		}
		return AppendInt8(b, n), nil
	case Bool:
		if x, ok := v.(bool); ok {
			return AppendBool(b, x), nil
		}
	case Timestamptz:
		if x, ok := v.(time.Time); ok {
			return AppendTimestamptz(b, x), nil
		}
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
		if s, ok := v.(string); ok && len(s) == 36 {
			return AppendUUID(b, s)
		}
	}
	return b, fmt.Errorf("%T %v does not go into column type %d", v, v, t)
}

// The typed field appenders below write what appendBinaryValue writes for
// a value of the column's type; a caller that knows its row's types (the
// history's rows, millions a rebuild) appends them without boxing each
// value in an interface.

// AppendNull appends a NULL field.
func AppendNull(b []byte) []byte { return binary.BigEndian.AppendUint32(b, 0xffffffff) }

// AppendText appends a text field.
func AppendText(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

// AppendTextOrNull appends s, or NULL for "" (how the read models store an
// absent text).
func AppendTextOrNull(b []byte, s string) []byte {
	if s == "" {
		return AppendNull(b)
	}
	return AppendText(b, s)
}

// AppendInt8 appends a bigint field.
func AppendInt8(b []byte, n int64) []byte {
	b = binary.BigEndian.AppendUint32(b, 8)
	return binary.BigEndian.AppendUint64(b, uint64(n))
}

// AppendInt2 appends a smallint field; n must fit one.
func AppendInt2(b []byte, n int64) ([]byte, error) {
	if n < -1<<15 || n >= 1<<15 {
		return b, fmt.Errorf("%d does not fit a smallint", n)
	}
	b = binary.BigEndian.AppendUint32(b, 2)
	return binary.BigEndian.AppendUint16(b, uint16(int16(n))), nil
}

// AppendBool appends a boolean field.
func AppendBool(b []byte, x bool) []byte {
	b = binary.BigEndian.AppendUint32(b, 1)
	if x {
		return append(b, 1)
	}
	return append(b, 0)
}

// AppendTimestamptz appends a timestamptz field (microseconds).
func AppendTimestamptz(b []byte, t time.Time) []byte {
	b = binary.BigEndian.AppendUint32(b, 8)
	return binary.BigEndian.AppendUint64(b, uint64(t.UnixMicro()-Epoch.UnixMicro()))
}

// AppendUUID appends a uuid field from its text form
// (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx, either case).
func AppendUUID(b []byte, s string) ([]byte, error) {
	var u [16]byte
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return b, fmt.Errorf("uuid %q: not in the 8-4-4-4-12 form", s)
	}
	j := 0
	for i := 0; i < 36; {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			i++
			continue
		}
		hi, ok1 := fromHex(s[i])
		lo, ok2 := fromHex(s[i+1])
		if !ok1 || !ok2 {
			return b, fmt.Errorf("uuid %q: %q is not a hex digit pair", s, s[i:i+2])
		}
		u[j] = hi<<4 | lo
		j++
		i += 2
	}
	b = binary.BigEndian.AppendUint32(b, 16)
	return append(b, u[:]...), nil
}

func fromHex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
