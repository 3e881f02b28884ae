package relay

import (
	"testing"
	"time"
)

func TestConfigDefaultsAndValidate(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr bool
	}{
		{name: "defaults", cfg: Config{}},
		{name: "negative batch", cfg: Config{BatchSize: -1}, wantErr: true},
		{name: "negative poll", cfg: Config{PollInterval: -time.Second}, wantErr: true},
		{name: "negative standby retry", cfg: Config{StandbyRetry: -time.Second}, wantErr: true},
		{name: "no attempts", cfg: Config{MaxPublishAttempts: -1}, wantErr: true},
		{name: "backoff above its cap", cfg: Config{PublishBackoff: time.Minute, MaxPublishBackoff: time.Second}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.setDefaults()
			if err := tc.cfg.Validate(); (err != nil) != tc.wantErr {
				t.Errorf("Validate() = %v, want error: %v", err, tc.wantErr)
			}
		})
	}

	var c Config
	c.setDefaults()
	if c.Name != "kafka" || c.Topic != "pitboss.ledger.events.v1" || c.BatchSize != 500 ||
		c.PollInterval != 100*time.Millisecond || c.LockKey != LockKeyFor("kafka") {
		t.Errorf("defaults: %+v", c)
	}
	if LockKeyFor("kafka") == LockKeyFor("other") {
		t.Error("two relay names share a lock key")
	}
	if err := (Config{}).Validate(); err == nil {
		t.Error("the zero Config validates without its defaults")
	}
}
