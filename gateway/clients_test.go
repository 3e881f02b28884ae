package gateway_test

import (
	"strings"
	"testing"

	"github.com/pitboss/pitboss/gateway"
)

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
		{"name 201 characters", gateway.CheckClientName(strings.Repeat("ä", 201)), "name", "name must be at most 200 characters"},
		{"name not UTF-8", gateway.CheckClientName("a\xff"), "name", "name must be at most 200 characters"},
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
