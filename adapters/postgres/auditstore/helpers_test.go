package auditstore_test

import (
	"github.com/pitboss/pitboss/adapters/postgres/storetest"
	"github.com/pitboss/pitboss/domain"
)

// The helpers the audit tests use, under the names they have always had;
// the tests of the store packages share them through storetest.
var (
	eur         = domain.MustCurrency("EUR")
	startLedger = storetest.StartLedger
	eventCount  = storetest.EventCount
	uid         = storetest.UID
	newUUID     = storetest.NewUUID

	storedEvents = storetest.StoredEvents
	applyLive    = storetest.ApplyLive
)
