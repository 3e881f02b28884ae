package main

import (
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/pitboss/pitboss/adapters/secretbox"
)

// secretKeyFile is where a master key is kept when PITBOSS_SECRET_KEY is
// not set: fine for `make run` and the sandbox, not for production, where
// the key belongs in a secret store and the variable.
const secretKeyFile = "secret.key"

// secretBox opens the master key that seals client and provider secrets:
// PITBOSS_SECRET_KEY (64 hex digits or base64 of 32 bytes), or else the key
// file in the data folder, created on first use. Every process of one
// installation must use the same key, or sealed secrets do not open.
func (c config) secretBox(log *slog.Logger) (*secretbox.Box, error) {
	if c.SecretKey != "" {
		k, err := secretbox.ParseKey(c.SecretKey)
		if err != nil {
			return nil, fmt.Errorf("PITBOSS_SECRET_KEY: %w", err)
		}
		return secretbox.New(k)
	}
	path := filepath.Join(c.DataDir, secretKeyFile)
	k, created, err := secretbox.LoadOrCreateKeyFile(path)
	if err != nil {
		return nil, fmt.Errorf("master key (PITBOSS_SECRET_KEY is not set): %w", err)
	}
	box, err := secretbox.New(k)
	if err != nil {
		return nil, err
	}
	log.Warn("PITBOSS_SECRET_KEY is not set: sealing secrets with the key kept in the data folder; set the variable in production",
		"file", path, "created", created, "key_id", box.KeyID())
	return box, nil
}
