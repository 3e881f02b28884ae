package gateway

import (
	"fmt"
	"strconv"
)

// PrivateTargets says for which clients a callback or webhook may target an
// inside address (loopback, a private network ...: the inside class of
// ClassifyAddress): for none (production), for sandbox clients only (a
// developer's receiver on the same machine), or for all clients (tests).
// It never opens the addresses ClassifyAddress refuses whatever the
// setting: link-local (the cloud metadata address 169.254.169.254 in any
// encoding), multicast, broadcast, unspecified and reserved ones.
//
// The zero value is PrivateTargetsNone, so a configuration that forgets it
// is strict.
type PrivateTargets struct{ name string }

// The settings of PrivateTargets.
var (
	PrivateTargetsNone    = PrivateTargets{}
	PrivateTargetsSandbox = PrivateTargets{name: "sandbox"}
	PrivateTargetsAll     = PrivateTargets{name: "all"}
)

// ParsePrivateTargets reads a setting: "none", "sandbox" or "all".
func ParsePrivateTargets(s string) (PrivateTargets, error) {
	switch s {
	case "none":
		return PrivateTargetsNone, nil
	case "sandbox":
		return PrivateTargetsSandbox, nil
	case "all":
		return PrivateTargetsAll, nil
	}
	return PrivateTargetsNone, fmt.Errorf("private callback targets %s: want none, sandbox or all", strconv.Quote(ClipValue(s)))
}

// String is the setting as ParsePrivateTargets reads it.
func (p PrivateTargets) String() string {
	if p.name == "" {
		return "none"
	}
	return p.name
}

// Allows reports whether a client of environment env may have its
// callbacks and webhooks reach inside addresses: under sandbox only a
// sandbox client (a production client, or one of an unknown environment,
// may not), under all every client, under none no client.
func (p PrivateTargets) Allows(env string) bool {
	switch p {
	case PrivateTargetsAll:
		return true
	case PrivateTargetsSandbox:
		return env == EnvironmentSandbox
	}
	return false
}
