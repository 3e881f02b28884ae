package gateway_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

func TestParseFXRatesCSV(t *testing.T) {
	tests := []struct {
		name, csv string
		n         int
		msg       string // part of the error; "" = accepted
	}{
		{"columns in any order, spaces, CRLF, a BOM", "\ufeffrate, day ,base,quote,source\r\n1.0842,2026-11-24,EUR,USD,ECB\r\n1.09,2026-11-25,EUR,USD,ECB\r\n", 2, ""},
		{"crypto", "day,base,quote,rate\n2026-11-25,BTC,EUR,84000.12\n", 1, ""},
		{"empty", "", 0, "empty"},
		{"header only", "day,base,quote,rate\n", 0, "no rate given"},
		{"a column missing", "day,base,rate\n2026-11-25,EUR,1\n", 0, `no "quote" column`},
		{"a column twice", "day,base,quote,rate,rate\n", 0, "named twice"},
		{"a bad rate names its line", "day,base,quote,rate\n2026-11-24,EUR,USD,1\n2026-11-25,EUR,USD,1e3\n", 0, "line 3, column rate"},
		{"a bad day", "day,base,quote,rate\n25/11/2026,EUR,USD,1\n", 0, "line 2, column day"},
		{"an unknown currency", "day,base,quote,rate\n2026-11-25,EUR,XXX,1\n", 0, "line 2, column quote"},
		{"a pair and day twice", "day,base,quote,rate\n2026-11-25,EUR,USD,1\n2026-11-25,EUR,USD,2\n", 0, "given twice"},
		{"a short row", "day,base,quote,rate\n2026-11-25,EUR\n", 0, "line 2, column quote"},
		{"a broken quote", "day,base,quote,rate\n\"2026-11-25,EUR,USD,1\n", 0, "line 2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := gateway.ParseFXRatesCSV(strings.NewReader(tc.csv))
			if tc.msg == "" {
				if err != nil || len(got) != tc.n {
					t.Fatalf("%d rates, %v; want %d", len(got), err, tc.n)
				}
				return
			}
			var fe *domain.FieldError
			if !errors.As(err, &fe) || !strings.Contains(fe.Message, tc.msg) || !errors.Is(err, domain.ErrInvalidArgument) {
				t.Fatalf("err %v, want a field error with %q", err, tc.msg)
			}
		})
	}
	t.Run("too many", func(t *testing.T) {
		var b strings.Builder
		b.WriteString("day,base,quote,rate\n")
		for i := range gateway.MaxFXRatesPerCall + 1 {
			b.WriteString(dayN(i) + ",EUR,USD,1\n")
		}
		if _, err := gateway.ParseFXRatesCSV(strings.NewReader(b.String())); err == nil || !strings.Contains(err.Error(), "at most") {
			t.Fatalf("err %v", err)
		}
	})
}

// dayN is the n-th day from 2000-01-01.
func dayN(n int) string {
	return time.Date(2000, 1, 1+n, 0, 0, 0, 0, time.UTC).Format(time.DateOnly)
}
