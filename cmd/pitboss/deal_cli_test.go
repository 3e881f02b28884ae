package main

import (
	"strings"
	"testing"
)

// TestDealCommand: `pitboss deal` adds versions (a past start only with
// --backdate, recorded), refuses bad terms naming them, lists what is in
// effect and scheduled, and shows the history with the CLI actor.
func TestDealCommand(t *testing.T) {
	t.Parallel()
	cfg, _ := testConfig(t)
	flat := cliJSON[[]cliDeal](t, cfg, "deal", "add", "--provider", "prov", "--valid-from", "2099-01-01", "--kind", "flat", "--rate", "0.15")
	if len(flat) != 1 || flat[0].Terms.Rate != "0.15" || flat[0].Backdated || !strings.HasPrefix(flat[0].Actor, "cli") {
		t.Fatalf("flat %+v", flat)
	}
	tieredArgs := []string{"deal", "add", "--provider", "prov", "--client", "acme", "--currency", "EUR", "--valid-from", "2025-01-01",
		"--kind", "tiered", "--mode", "marginal", "--bands", "0:1000:0.1,1000::0.2", "--carry-forward", "--note", "from the CLI"}
	if _, err := cli(t, cfg, tieredArgs...); err == nil || !strings.Contains(err.Error(), "--backdate") {
		t.Fatalf("a past start without --backdate: %v", err)
	}
	tiered := cliJSON[[]cliDeal](t, cfg, append(tieredArgs, "--backdate")...)
	if len(tiered) != 1 || !tiered[0].Backdated || len(tiered[0].Terms.Bands) != 2 || tiered[0].Terms.Bands[1].From != "1000.00" ||
		!tiered[0].Terms.CarryForward || tiered[0].Note != "from the CLI" {
		t.Fatalf("tiered %+v", tiered)
	}
	for args, want := range map[string]string{
		"--kind tiered --mode whole --currency EUR --bands 0:10:0.1,11::0.2": "bands[1] must start where bands[0] ends",
		"--kind flat --rate 1.5":                                     "must be from 0 to 1",
		"--kind tiered --mode whole --currency EUR --bands 0-10-0.1": "is not FROM:TO:RATE",
	} {
		_, err := cli(t, cfg, append([]string{"deal", "add", "--provider", "prov", "--valid-from", "2099-02-01"}, strings.Fields(args)...)...)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", args, err, want)
		}
	}
	list, err := cli(t, cfg, "deal", "list", "--provider", "prov")
	if err != nil || !strings.Contains(list, "tiered marginal 0.00:1000.00:0.1,1000.00::0.2") || !strings.Contains(list, "flat 0.15") {
		t.Fatalf("list: %v\n%s", err, list)
	}
	hist := cliJSON[[]cliDeal](t, cfg, "deal", "history", "--client", "acme")
	if len(hist) != 1 || hist[0].ID != tiered[0].ID {
		t.Fatalf("acme's history %+v", hist)
	}
	if _, err := cli(t, cfg, "deal", "history", "--per-page", "500"); err == nil {
		t.Fatal("--per-page 500 accepted")
	}
}
