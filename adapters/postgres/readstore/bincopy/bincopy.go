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

// pgEpoch is the zero of Postgres' binary timestamps and dates.
var pgEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// binaryCopy is an io.Reader of a table in COPY's binary format, built a
// row at a time.
type binaryCopy struct {
	n     int
	row   func(i int) []any
	types []ColType
	i     int
	buf   []byte
	done  bool
}

// NewReader returns the COPY ... FROM STDIN WITH (FORMAT binary) input of
// n rows of columns types: row(i) is the i-th row's values.
func NewReader(n int, row func(i int) []any, types []ColType) io.Reader {
	c := &binaryCopy{n: n, row: row, types: types}
	// Signature, flags, header extension length.
	c.buf = append(c.buf, "PGCOPY\n\xff\r\n\x00"...)
	c.buf = binary.BigEndian.AppendUint32(c.buf, 0)
	c.buf = binary.BigEndian.AppendUint32(c.buf, 0)
	return c
}

func (c *binaryCopy) Read(p []byte) (int, error) {
	for len(c.buf) < len(p) && !c.done {
		if c.i >= c.n {
			c.buf = binary.BigEndian.AppendUint16(c.buf, 0xffff) // trailer: -1
			c.done = true
			break
		}
		var err error
		if c.buf, err = appendBinaryRow(c.buf, c.types, c.row(c.i)); err != nil {
			return 0, fmt.Errorf("row %d: %w", c.i, err)
		}
		c.i++
	}
	if len(c.buf) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.buf)
	c.buf = c.buf[:copy(c.buf, c.buf[n:])]
	return n, nil
}

// appendBinaryRow appends one row: the field count, then each field's
// length and bytes (length -1 for NULL).
func appendBinaryRow(b []byte, types []ColType, vals []any) ([]byte, error) {
	if len(vals) != len(types) {
		return b, fmt.Errorf("%d values for %d columns", len(vals), len(types))
	}
	b = binary.BigEndian.AppendUint16(b, uint16(len(types)))
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
		return binary.BigEndian.AppendUint64(b, uint64(x.UnixMicro()-pgEpoch.UnixMicro())), nil
	case Date:
		x, ok := v.(time.Time)
		if !ok {
			break
		}
		secs := x.Unix() - pgEpoch.Unix()
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
