package gateway_test

import (
	"strings"
	"testing"

	"github.com/pitboss/pitboss/gateway"
)

func TestPrivateTargets(t *testing.T) {
	t.Parallel()
	envs := []string{gateway.EnvironmentSandbox, gateway.EnvironmentProduction, ""}
	tests := []struct {
		in      string
		want    gateway.PrivateTargets
		allowed []bool // per envs: sandbox, production, unknown
	}{
		{in: "none", want: gateway.PrivateTargetsNone, allowed: []bool{false, false, false}},
		{in: "sandbox", want: gateway.PrivateTargetsSandbox, allowed: []bool{true, false, false}},
		{in: "all", want: gateway.PrivateTargetsAll, allowed: []bool{true, true, true}},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := gateway.ParsePrivateTargets(tc.in)
			if err != nil || got != tc.want || got.String() != tc.in {
				t.Fatalf("ParsePrivateTargets(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
			}
			for i, env := range envs {
				if got.Allows(env) != tc.allowed[i] {
					t.Errorf("%v.Allows(%q) = %v, want %v", got, env, got.Allows(env), tc.allowed[i])
				}
			}
		})
	}
	t.Run("the zero value is none", func(t *testing.T) {
		var zero gateway.PrivateTargets
		if zero != gateway.PrivateTargetsNone || zero.String() != "none" || zero.Allows(gateway.EnvironmentSandbox) {
			t.Fatalf("zero value %v allows a sandbox client: %v", zero, zero.Allows(gateway.EnvironmentSandbox))
		}
	})
	for _, bad := range []string{"", "true", "false", "ALL", " sandbox", "production", "private", strings.Repeat("x", 100)} {
		t.Run("refused "+bad, func(t *testing.T) {
			got, err := gateway.ParsePrivateTargets(bad)
			if err == nil || got != gateway.PrivateTargetsNone || !strings.Contains(err.Error(), "want none, sandbox or all") {
				t.Fatalf("ParsePrivateTargets(%q) = %v, %v; want an error naming the settings", bad, got, err)
			}
		})
	}
}

// TestCheckCallbackURLPrivateTargets is the registration rule by setting
// and client environment: inside targets for the clients the setting
// allows, public ones for every client, link-local (the cloud metadata
// address in every encoding) for none, not even under all.
func TestCheckCallbackURLPrivateTargets(t *testing.T) {
	t.Parallel()
	inside := []string{"http://127.0.0.1:9999/callback", "http://localhost:9999/webhook", "http://[::1]:9999/",
		"http://10.0.0.7/in", "http://192.168.1.20:8080/in"}
	public := []string{"https://hooks.example.com/in", "https://8.8.8.8/in"}
	metadata := []string{
		"http://169.254.169.254/latest/meta-data/", "http://2852039166/", "http://0xa9fea9fe/", "http://0xa9.0xfe.0xa9.0xfe/",
		"http://0251.0376.0251.0376/", "http://025177524776/", "http://169.254.43518/", "http://169.16689662/",
		"http://[::ffff:169.254.169.254]/", "http://[::ffff:a9fe:a9fe]/", "http://[::169.254.169.254]/", "http://[::a9fe:a9fe]/",
		"http://[::ffff:0:a9fe:a9fe]/", "http://[64:ff9b::a9fe:a9fe]/", "http://[64:ff9b:1::a9fe:a9fe]/",
		"http://[2002:a9fe:a9fe::1]/", "http://[2001:0:4136:e378:8000:63bf:5601:5601]/", "http://[fe80::1]/",
	}
	settings := []gateway.PrivateTargets{gateway.PrivateTargetsNone, gateway.PrivateTargetsSandbox, gateway.PrivateTargetsAll}
	for _, pt := range settings {
		for _, env := range []string{gateway.EnvironmentSandbox, gateway.EnvironmentProduction} {
			t.Run(pt.String()+"/"+env, func(t *testing.T) {
				wantInside := pt == gateway.PrivateTargetsAll || (pt == gateway.PrivateTargetsSandbox && env == gateway.EnvironmentSandbox)
				for _, u := range inside {
					err := gateway.CheckCallbackURL("url", u, pt.Allows(env))
					if wantInside && err != nil {
						t.Errorf("%s refused for a %s client under %v: %v", u, env, pt, err)
					}
					if !wantInside && (err == nil || !strings.Contains(err.Error(), "callbacks go to public addresses only")) {
						t.Errorf("%s accepted for a %s client under %v (%v)", u, env, pt, err)
					}
				}
				for _, u := range public {
					if err := gateway.CheckCallbackURL("url", u, pt.Allows(env)); err != nil {
						t.Errorf("%s refused: %v", u, err)
					}
				}
				for _, u := range metadata {
					err := gateway.CheckCallbackURL("url", u, pt.Allows(env))
					if err == nil || !strings.Contains(err.Error(), "link-local") {
						t.Errorf("%s for a %s client under %v: %v, want a link-local refusal", u, env, pt, err)
					}
				}
			})
		}
	}
}
