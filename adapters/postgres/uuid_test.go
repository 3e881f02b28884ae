package postgres_test

import (
	"bytes"
	"testing"

	"github.com/pitboss/pitboss/adapters/postgres"
)

func TestParseUUID(t *testing.T) {
	tests := []struct {
		in   string
		want []byte
		ok   bool
	}{
		{in: "00112233-4455-6677-8899-aabbccddeeff", ok: true,
			want: []byte{0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff}},
		{in: "00112233-4455-6677-8899-AABBCCDDEEFF", ok: true,
			want: []byte{0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff}},
		{in: "", ok: false},
		{in: "00112233445566778899aabbccddeeff", ok: false},
		{in: "00112233-4455-6677-8899-aabbccddeefg", ok: false},
		{in: "00112233-4455-6677-8899_aabbccddeeff", ok: false},
		{in: "0011223-34455-6677-8899-aabbccddeeff", ok: false},
		{in: "00112233-4455-6677-8899-aabbccddeeff0", ok: false},
	}
	for _, tc := range tests {
		got, ok := postgres.ParseUUID(tc.in)
		if ok != tc.ok || (ok && !bytes.Equal(got[:], tc.want)) {
			t.Errorf("ParseUUID(%q) = %x, %v; want %x, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}
