package readstore

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"time"
)

// colType is a column's type in the binary COPY format.
type colType uint8

const (
	colText colType = iota
	colInt8
	colInt2
	colBool
	colTimestamptz
	colDate
	colUUID
)

// pgEpoch is the zero of Postgres' binary timestamps and dates.
var pgEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// binaryCopy is an io.Reader of a table in COPY's binary format, built a
// row at a time from tableRows: far cheaper than encoding every value
// through its type's codec, which a rebuild of millions of rows feels.
type binaryCopy struct {
	rows  tableRows
	types []colType
	i     int
	buf   []byte
	done  bool
}

func newBinaryCopy(rows tableRows, types []colType) *binaryCopy {
	c := &binaryCopy{rows: rows, types: types}
	// Signature, flags, header extension length.
	c.buf = append(c.buf, "PGCOPY\n\xff\r\n\x00"...)
	c.buf = binary.BigEndian.AppendUint32(c.buf, 0)
	c.buf = binary.BigEndian.AppendUint32(c.buf, 0)
	return c
}

func (c *binaryCopy) Read(p []byte) (int, error) {
	for len(c.buf) < len(p) && !c.done {
		if c.i >= c.rows.n {
			c.buf = binary.BigEndian.AppendUint16(c.buf, 0xffff) // trailer: -1
			c.done = true
			break
		}
		var err error
		if c.buf, err = appendBinaryRow(c.buf, c.types, c.rows.row(c.i)); err != nil {
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
func appendBinaryRow(b []byte, types []colType, vals []any) ([]byte, error) {
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

func appendBinaryValue(b []byte, t colType, v any) ([]byte, error) {
	switch t {
	case colText:
		s, ok := v.(string)
		if !ok {
			break
		}
		b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
		return append(b, s...), nil
	case colInt8, colInt2:
		var n int64
		switch x := v.(type) {
		case int64:
			n = x
		case int:
			n = int64(x)
		default:
			return b, fmt.Errorf("%T is not an integer", v)
		}
		if t == colInt2 {
			if n < -1<<15 || n >= 1<<15 {
				return b, fmt.Errorf("%d does not fit a smallint", n)
			}
			b = binary.BigEndian.AppendUint32(b, 2)
			return binary.BigEndian.AppendUint16(b, uint16(int16(n))), nil
		}
		b = binary.BigEndian.AppendUint32(b, 8)
		return binary.BigEndian.AppendUint64(b, uint64(n)), nil
	case colBool:
		x, ok := v.(bool)
		if !ok {
			break
		}
		b = binary.BigEndian.AppendUint32(b, 1)
		if x {
			return append(b, 1), nil
		}
		return append(b, 0), nil
	case colTimestamptz:
		x, ok := v.(time.Time)
		if !ok {
			break
		}
		b = binary.BigEndian.AppendUint32(b, 8)
		return binary.BigEndian.AppendUint64(b, uint64(x.UnixMicro()-pgEpoch.UnixMicro())), nil
	case colDate:
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
	case colUUID:
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
