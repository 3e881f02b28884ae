package api

import (
	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/api/dialect/caleta"
	"github.com/pitboss/pitboss/api/dialect/evolution"
	"github.com/pitboss/pitboss/api/dialect/pitboss"
	"github.com/pitboss/pitboss/api/dialect/redtiger"
	"github.com/pitboss/pitboss/api/dialect/tbb"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/wallet"
)

// dialect registers one wallet protocol's routes over the wallet core.
type dialect func(s *Server, core *wallet.Core, e *echo.Echo)

// dialects are the wallet protocols' dialects by name: one line per
// protocol of gateway's registry (gateway.WalletProtocols; a test holds
// the two together).
var dialects = map[string]dialect{
	gateway.WalletProtocolPitboss: func(s *Server, core *wallet.Core, e *echo.Echo) {
		pitboss.New(pitboss.Deps{Core: core, Clock: s.deps.Clock, Rounds: s.deps.ProviderRounds}).Register(e, withRetryable)
	},
	gateway.WalletProtocolCaleta: func(s *Server, core *wallet.Core, e *echo.Echo) {
		mount(e, caleta.Base, caleta.New(s.dialectDeps(core)).Calls())
	},
	gateway.WalletProtocolRedTiger: func(s *Server, core *wallet.Core, e *echo.Echo) {
		mount(e, redtiger.Base, redtiger.New(s.dialectDeps(core)).Calls())
	},
	gateway.WalletProtocolEvolution: func(s *Server, core *wallet.Core, e *echo.Echo) {
		mount(e, evolution.Base, evolution.New(s.dialectDeps(core)).Calls())
	},
	gateway.WalletProtocolTBB: func(s *Server, core *wallet.Core, e *echo.Echo) {
		mount(e, tbb.Base, tbb.New(s.dialectDeps(core)).Calls())
	},
}

// dialectDeps are what a provider's own protocol's dialect is built with.
func (s *Server) dialectDeps(core *wallet.Core) wire.DialectDeps {
	return wire.DialectDeps{Core: core, Logger: s.deps.Logger}
}

// mount routes each of calls (POST) under base.
func mount(e *echo.Echo, base string, calls map[string]echo.HandlerFunc) {
	g := e.Group(base)
	for path, h := range calls {
		g.POST(path, h)
	}
}

// registerDialects builds the wallet core once and registers every
// protocol's dialect on it, in the registry's order.
func (s *Server) registerDialects(e *echo.Echo) {
	deps := wallet.Deps{Catalog: s.deps.Catalog, Sessions: s.deps.Sessions, Ledger: s.deps.Commands,
		Balances: s.deps.Balances, Records: s.deps.TxRecords, Operators: s.deps.Operators, FollowUps: s.deps.FollowUps,
		FollowUpGrace: s.cfg.FollowUpGrace, Clock: s.deps.Clock}
	if s.deps.Promotions != nil {
		deps.FreeSpins = s.deps.Promotions
	}
	core := wallet.New(deps)
	s.core = core
	for _, name := range gateway.WalletProtocols {
		dialects[name](s, core, e)
	}
}
