package main

import (
	"strings"
	"testing"
	"time"

	"github.com/pitboss/pitboss/adapters/delivery"
	"github.com/pitboss/pitboss/gateway"
)

func TestDeliveryConfig(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		wantErr string
		check   func(t *testing.T, d deliveryConfig)
	}{
		{"defaults: the published schedule, private targets refused", nil, "", func(t *testing.T, d deliveryConfig) {
			if d.PrivateTargets != gateway.PrivateTargetsNone || d.Deprecated != "" || d.Timeout != 10*time.Second || d.Concurrency != delivery.DefaultConcurrency ||
				d.Schedule.Base != 10*time.Second || d.Schedule.Cap != 6*time.Hour || d.Schedule.MaxAttempts != 15 ||
				d.Schedule.MaxAge != 24*time.Hour {
				t.Fatalf("defaults %+v", d)
			}
		}},
		{"tests", map[string]string{"PITBOSS_PRIVATE_CALLBACKS": "all",
			"PITBOSS_DELIVERY_RETRY_BASE": "5ms", "PITBOSS_DELIVERY_RETRY_CAP": "40ms", "PITBOSS_DELIVERY_MAX_ATTEMPTS": "3"}, "",
			func(t *testing.T, d deliveryConfig) {
				if d.PrivateTargets != gateway.PrivateTargetsAll || d.Schedule.Base != 5*time.Millisecond || d.Schedule.MaxAttempts != 3 {
					t.Fatalf("config %+v", d)
				}
			}},
		{"make run: sandbox clients only", map[string]string{"PITBOSS_PRIVATE_CALLBACKS": "sandbox"}, "",
			wantPrivate(gateway.PrivateTargetsSandbox, "")},
		{"none said out loud", map[string]string{"PITBOSS_PRIVATE_CALLBACKS": "none"}, "", wantPrivate(gateway.PrivateTargetsNone, "")},
		{"not a setting", map[string]string{"PITBOSS_PRIVATE_CALLBACKS": "true"},
			`PITBOSS_PRIVATE_CALLBACKS must be none, sandbox or all (whose callbacks may reach loopback and private addresses), not "true"`, nil},
		{"the deprecated boolean, true: all", map[string]string{"PITBOSS_ALLOW_PRIVATE_CALLBACKS": "true"}, "",
			wantPrivate(gateway.PrivateTargetsAll, "PITBOSS_ALLOW_PRIVATE_CALLBACKS is deprecated: set PITBOSS_PRIVATE_CALLBACKS=all instead")},
		{"the deprecated boolean, false: none", map[string]string{"PITBOSS_ALLOW_PRIVATE_CALLBACKS": "false"}, "",
			wantPrivate(gateway.PrivateTargetsNone, "PITBOSS_ALLOW_PRIVATE_CALLBACKS is deprecated: set PITBOSS_PRIVATE_CALLBACKS=none instead")},
		{"both, agreeing", map[string]string{"PITBOSS_ALLOW_PRIVATE_CALLBACKS": "1", "PITBOSS_PRIVATE_CALLBACKS": "all"}, "",
			wantPrivate(gateway.PrivateTargetsAll, "PITBOSS_ALLOW_PRIVATE_CALLBACKS is deprecated (it agrees with PITBOSS_PRIVATE_CALLBACKS=all): unset it")},
		{"both, disagreeing", map[string]string{"PITBOSS_ALLOW_PRIVATE_CALLBACKS": "true", "PITBOSS_PRIVATE_CALLBACKS": "sandbox"},
			"PITBOSS_ALLOW_PRIVATE_CALLBACKS=true (deprecated) means PITBOSS_PRIVATE_CALLBACKS=all, but PITBOSS_PRIVATE_CALLBACKS is sandbox: unset PITBOSS_ALLOW_PRIVATE_CALLBACKS", nil},
		{"both, the deprecated one off", map[string]string{"PITBOSS_ALLOW_PRIVATE_CALLBACKS": "false", "PITBOSS_PRIVATE_CALLBACKS": "sandbox"},
			"PITBOSS_ALLOW_PRIVATE_CALLBACKS=false (deprecated) means PITBOSS_PRIVATE_CALLBACKS=none, but PITBOSS_PRIVATE_CALLBACKS is sandbox", nil},
		{"not a boolean", map[string]string{"PITBOSS_ALLOW_PRIVATE_CALLBACKS": "maybe"},
			"PITBOSS_ALLOW_PRIVATE_CALLBACKS must be true or false (deprecated: use PITBOSS_PRIVATE_CALLBACKS=none|sandbox|all)", nil},
		{"not a duration", map[string]string{"PITBOSS_DELIVERY_TIMEOUT": "10"}, "PITBOSS_DELIVERY_TIMEOUT", nil},
		{"negative duration", map[string]string{"PITBOSS_DELIVERY_MAX_AGE": "-1h"}, "PITBOSS_DELIVERY_MAX_AGE", nil},
		{"no attempts", map[string]string{"PITBOSS_DELIVERY_MAX_ATTEMPTS": "0"}, "PITBOSS_DELIVERY_MAX_ATTEMPTS", nil},
		{"cap below base", map[string]string{"PITBOSS_DELIVERY_RETRY_BASE": "1m", "PITBOSS_DELIVERY_RETRY_CAP": "1s"}, "base", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"PITBOSS_PRIVATE_CALLBACKS", "PITBOSS_ALLOW_PRIVATE_CALLBACKS", "PITBOSS_DELIVERY_TIMEOUT", "PITBOSS_DELIVERY_CONCURRENCY",
				"PITBOSS_DELIVERY_RETRY_BASE", "PITBOSS_DELIVERY_RETRY_CAP", "PITBOSS_DELIVERY_MAX_ATTEMPTS", "PITBOSS_DELIVERY_MAX_AGE"} {
				t.Setenv(k, tc.env[k])
			}
			var d deliveryConfig
			errs := d.load()
			var msgs []string
			for _, e := range errs {
				msgs = append(msgs, e.Error())
			}
			joined := strings.Join(msgs, "; ")
			if tc.wantErr == "" && len(errs) > 0 || tc.wantErr != "" && !strings.Contains(joined, tc.wantErr) {
				t.Fatalf("errors %q, want %q", joined, tc.wantErr)
			}
			if tc.check != nil {
				tc.check(t, d)
			}
		})
	}
}

// wantPrivate checks the private-targets setting and the deprecation
// warning ("" for none).
func wantPrivate(want gateway.PrivateTargets, deprecated string) func(t *testing.T, d deliveryConfig) {
	return func(t *testing.T, d deliveryConfig) {
		t.Helper()
		if d.PrivateTargets != want || d.Deprecated != deprecated {
			t.Fatalf("private targets %v, deprecation %q; want %v, %q", d.PrivateTargets, d.Deprecated, want, deprecated)
		}
	}
}

func TestForwarderIsARole(t *testing.T) {
	roles, err := parseRoles("api,forwarder")
	if err != nil || len(roles) != 2 || roles[1] != "forwarder" {
		t.Fatalf("parseRoles: %v, %v", roles, err)
	}
}
