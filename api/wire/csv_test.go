package wire_test

import (
	"testing"

	"github.com/pitboss/pitboss/api/wire"
)

func TestCSVCell(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"demo-slot", "demo-slot"},
		{"@A1", "'@A1"},
		{"-2-3", "'-2-3"},
		{"=HYPERLINK(\"x\")", "'=HYPERLINK(\"x\")"},
		{"+1+1", "'+1+1"},
		{"\tcmd", "'\tcmd"},
		{"\rcmd", "'\rcmd"},
		{"-15.50", "-15.50"},
		{"-3", "-3"},
		{"15.50", "15.50"},
		{"-", "'-"},
		{"-.5", "'-.5"},
		{"-5.", "'-5."},
		{"-1.2.3", "'-1.2.3"},
		{"-1e5", "'-1e5"},
		{"+5", "'+5"},
	} {
		if got := wire.CSVCell(tc.in); got != tc.want {
			t.Errorf("CSVCell(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
