package api

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// transferLaunchRequest is the body of POST /api/v1/game/launch/transfer:
// the launch request plus the money to move from the client's wallet into
// the player's game wallet, idempotent by the client's transfer_id.
type transferLaunchRequest struct {
	launchRequest
	Amount     domain.AmountText `json:"amount"`
	TransferID string            `json:"transfer_id"`
}

// transferLaunchResult is the launch result plus the transfer.
type transferLaunchResult struct {
	launchResult
	Transfer transactionView `json:"transfer"`
}

// transferLaunchIDs derives the session and launch ids of a transfer
// launch from the client and its transfer_id, so a retry finds the same
// session and the same launch event. Digests keep them within the id
// length whatever the transfer_id's length.
func transferLaunchIDs(clientID, transferID string) (sessionID, launchTx string) {
	d := sha256.Sum256([]byte("pitboss transfer launch|" + clientID + "|" + transferID))
	return "gs_" + hex.EncodeToString(d[:16]), "lt_" + hex.EncodeToString(d[16:])
}

// launchWithTransfer is POST /api/v1/game/launch/transfer. It checks that
// some endpoint of the provider may be called (so no money moves towards a
// provider whose breakers are all open), transfers amount to the player
// (commands.Transfer, domain.ToPlayer, idempotent by transfer_id), then
// launches. A retry with the same transfer_id answers the same transfer
// (replayed: true) and the same session, asks the provider for the game
// address again and moves no money; the same transfer_id with a different
// amount, player, currency, game or provider is 409 IDEMPOTENCY_CONFLICT
// naming the field. When the provider fails after the transfer, the money
// stays in the player's game wallet and a retry completes the launch.
func (s *Server) launchWithTransfer(c echo.Context) error {
	var req transferLaunchRequest
	if err := wire.BindJSON(c, &req); err != nil {
		return err
	}
	cur, err := checkLaunchRequest(&req.launchRequest)
	if err != nil {
		return err
	}
	for _, f := range []struct{ n, v string }{{"transfer_id", req.TransferID}, {"amount", string(req.Amount)}} {
		if err := wire.RequireField(f.n, f.v); err != nil {
			return err
		}
	}
	if err := domain.ValidateID("transfer_id", req.TransferID); err != nil {
		return &wire.Error{Status: http.StatusBadRequest, Code: wire.CodeInvalidRequest, Message: err.Error(),
			Details: map[string]any{"field": "transfer_id"}, Err: err}
	}
	amount, err := domain.ParseMoney(string(req.Amount), cur)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	t, err := s.resolveLaunch(ctx, req.Provider, req.GameID, req.Country)
	if err != nil {
		return err
	}
	if err := s.launcher().Ready(t.route); err != nil {
		return err
	}
	p := wire.Principal(c)
	tr, err := s.deps.Commands.Transfer(ctx, domain.ClientTx{Client: p.ClientID, Player: req.PlayerID,
		ExternalTxID: req.TransferID, Currency: cur, Reason: "game launch " + t.prov.ID + "/" + t.game.ID},
		amount, domain.ToPlayer)
	if err != nil {
		return err
	}
	sessID, launchTx := transferLaunchIDs(p.ClientID, req.TransferID)
	sess := gateway.GameSession{ID: sessID, ClientID: p.ClientID, PlayerID: req.PlayerID, ProviderID: t.prov.ID,
		GameID: t.game.ID, Currency: cur.Code(), LaunchTxID: launchTx,
		ExpiresAt: s.deps.Clock.Now().Add(s.cfg.SessionTTL).UTC().Truncate(time.Second)}
	res, err := s.launchSession(ctx, t, sess, req.launchRequest)
	if err != nil {
		return err
	}
	return wire.OK(c, transferLaunchResult{launchResult: res,
		Transfer: viewOf(tr, "transfer", req.PlayerID, signedFor("transfer", domain.ToPlayer, tr.Amount))})
}
