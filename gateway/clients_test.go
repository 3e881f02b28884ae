package gateway_test

import (
	"strings"
	"testing"

	"github.com/pitboss/pitboss/gateway"
)

// controlMsg is what checkText says of a control character or line break.
const controlMsg = "must not contain control characters or line breaks"

func TestClientRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		err   error
		field string
		msg   string
	}{
		{"name", gateway.CheckClientName("Acme Casino"), "", ""},
		{"name 200 characters", gateway.CheckClientName(strings.Repeat("ä", 200)), "", ""},
		{"name empty", gateway.CheckClientName(""), "name", "name is required"},
		{"name blank", gateway.CheckClientName(" \t"), "name", "name is required"},
		{"name 201 characters", gateway.CheckClientName(strings.Repeat("ä", 201)), "name", "name must be at most 200 characters (it has 201)"},
		{"name not UTF-8", gateway.CheckClientName("a\xff"), "name", "name must be valid UTF-8"},
		{"name in other scripts", gateway.CheckClientName("Казино «Ёлка» 🎰"), "", ""},
		{"name with a line feed", gateway.CheckClientName("Acme\nCasino"), "name", "name " + controlMsg + " (U+000A at character 5)"},
		{"name with a tab", gateway.CheckClientName("Acme\tCasino"), "name", "name " + controlMsg + " (U+0009 at character 5)"},
		{"name with a NUL", gateway.CheckClientName("Acme\x00"), "name", "name " + controlMsg + " (U+0000 at character 5)"},
		{"name with an escape sequence", gateway.CheckClientName("Acme\x1b[31m"), "name", "name " + controlMsg + " (U+001B at character 5)"},
		{"name with DEL", gateway.CheckClientName("Acme\x7f"), "name", "name " + controlMsg + " (U+007F at character 5)"},
		{"name with a C1 control", gateway.CheckClientName("Acme\u009b"), "name", "name " + controlMsg + " (U+009B at character 5)"},
		{"name with a line separator", gateway.CheckClientName("Acme\u2028Casino"), "name", "name " + controlMsg + " (U+2028 at character 5)"},
		{"name with a paragraph separator", gateway.CheckClientName("Acme\u2029"), "name", "name " + controlMsg + " (U+2029 at character 5)"},
		{"sandbox", gateway.CheckEnvironment(gateway.EnvironmentSandbox), "", ""},
		{"production", gateway.CheckEnvironment(gateway.EnvironmentProduction), "", ""},
		{"staging", gateway.CheckEnvironment("staging"), "environment", "environment must be sandbox or production"},
		{"no environment", gateway.CheckEnvironment(""), "environment", "environment must be sandbox or production"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantFieldError(t, tc.err, tc.field, tc.msg)
		})
	}
}
