package admin

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/wallet"
)

// clientWalletView is a client's wallet mode as shown: the credential
// never, only whether one is set.
type clientWalletView struct {
	Mode          string `json:"mode"`
	URL           string `json:"url,omitempty"`
	Protocol      string `json:"protocol,omitempty"`
	OperatorID    string `json:"operator_id,omitempty"`
	CredentialSet bool   `json:"credential_set"`
}

func viewOfClientWallet(w gateway.ClientWallet) *clientWalletView {
	return &clientWalletView{Mode: w.Mode, URL: w.URL, Protocol: w.Protocol, OperatorID: w.OperatorID,
		CredentialSet: w.CredentialSet}
}

type clientWalletRequest struct {
	Mode       string `json:"mode"`
	URL        string `json:"url"`
	Protocol   string `json:"protocol"`
	OperatorID string `json:"operator_id"`
	Credential string `json:"credential"`
}

// PUT /admin/v1/clients/{id}/wallet {mode, url?, protocol?, operator_id?,
// credential?}: the client's wallet mode (docs/seamless-wallet.md).
// "ledger" keeps the players' money in Pitboss; "seamless" sends every
// bet and win to the client's own wallet at url, in protocol, with
// credential (sealed at rest; left out, the stored one stays). The
// settings replace the stored ones and apply to calls from then on
// (within the wallet cache's TTL on other processes). Answers the client.
func (s *server) setClientWallet(c echo.Context) error {
	id, err := clientParam(c)
	if err != nil {
		return err
	}
	var req clientWalletRequest
	if err := wire.BindJSON(c, &req); err != nil {
		return err
	}
	if s.deps.Wallets == nil {
		return wire.NewError(http.StatusServiceUnavailable, wire.CodeUnavailable, "the store of these settings is not configured")
	}
	ctx := c.Request().Context()
	cl, err := s.deps.Clients.GetClient(ctx, id)
	if err != nil {
		return err
	}
	have, err := s.deps.Wallets.ClientWallet(ctx, id)
	if err != nil {
		return err
	}
	w := gateway.ClientWallet{Mode: req.Mode, URL: req.URL, Protocol: req.Protocol, OperatorID: req.OperatorID,
		Credential: req.Credential}
	if err := gateway.CheckClientWallet(w, s.deps.PrivateCallbacks.Allows(cl.Environment), have.CredentialSet); err != nil {
		return err
	}
	if err := s.deps.Wallets.SetClientWallet(ctx, id, w); err != nil {
		return err
	}
	s.log.InfoContext(ctx, "admin: client wallet set", "client_id", id, "mode", w.Mode, "protocol", w.Protocol,
		"request_id", wire.RequestID(c))
	v, err := s.fullClientView(c, cl)
	if err != nil {
		return err
	}
	return wire.OK(c, v)
}

// FollowUpList lists the seamless wallet's follow-ups (wallet.FollowUp):
// newest first, pending only when pendingOnly, of one client when
// clientID is not empty.
type FollowUpList interface {
	List(ctx context.Context, clientID string, pendingOnly bool, limit, offset int) ([]wallet.FollowUpRecord, error)
}

type followUpView struct {
	ID        int64   `json:"id"`
	ClientID  string  `json:"client_id"`
	Action    string  `json:"action"`
	Kind      string  `json:"kind"`
	Move      string  `json:"move"`
	MoveID    string  `json:"move_id"`
	Ref       string  `json:"ref,omitempty"`
	SessionID string  `json:"session_id"`
	Amount    string  `json:"amount"`
	Attempts  int     `json:"attempts"`
	State     string  `json:"state"`
	NextAt    *string `json:"next_attempt_at,omitempty"`
	LastError string  `json:"last_error,omitempty"`
	Outcome   string  `json:"outcome,omitempty"`
	CreatedAt string  `json:"created_at"`
	DoneAt    *string `json:"settled_at,omitempty"`
}

// GET /admin/v1/seamless/follow-ups?client_id=&state=pending|all&page=&per_page=:
// the unknown outcomes queued for seamless clients' wallets
// (docs/seamless-wallet.md#follow-ups), newest first; pending (the
// default) lists those not yet settled.
func (s *server) listFollowUps(c echo.Context) error {
	if s.deps.FollowUps == nil {
		return wire.NewError(http.StatusServiceUnavailable, wire.CodeUnavailable, "the follow-up queue is not configured")
	}
	clientID, _ := wire.QueryValue(c, "client_id")
	if clientID != "" {
		if err := domain.ValidateID("client_id", clientID); err != nil {
			return err
		}
	}
	state, _ := wire.QueryValue(c, "state")
	switch state {
	case "", "pending", "all":
	default:
		return &wire.Error{Status: http.StatusBadRequest, Code: wire.CodeInvalidRequest,
			Message: "state must be pending or all", Details: map[string]any{"field": "state"}}
	}
	page, err := wire.QueryInt(c, "page", 1, 1<<30)
	if err != nil {
		return err
	}
	perPage, err := wire.QueryInt(c, "per_page", defaultPerPage, maxPerPage)
	if err != nil {
		return err
	}
	list, err := s.deps.FollowUps.List(c.Request().Context(), clientID, state != "all", perPage, (page-1)*perPage)
	if err != nil {
		return err
	}
	out := make([]followUpView, 0, len(list))
	for _, f := range list {
		v := followUpView{ID: f.ID, ClientID: f.ClientID, Action: f.Action, Kind: string(f.Call.Kind), Move: f.Call.Move,
			MoveID: f.Call.MoveID, Ref: f.Call.MoveRef, SessionID: f.Call.Session, Amount: f.Call.Amount,
			Attempts: f.Attempts, State: "pending", LastError: f.LastError, Outcome: f.Outcome,
			CreatedAt: wire.FormatTime(f.CreatedAt)}
		if f.DoneAt != nil {
			v.State, v.DoneAt = "settled", ptr(wire.FormatTime(*f.DoneAt))
		} else {
			v.NextAt = ptr(wire.FormatTime(f.NextAt))
		}
		out = append(out, v)
	}
	return wire.OK(c, map[string]any{"follow_ups": out, "page": page, "per_page": perPage})
}

func ptr[T any](v T) *T { return &v }

// SeamlessLedger reads what the ledger booked for a seamless client
// (gatewaystore.Gateway.SeamlessMovements).
type SeamlessLedger interface {
	SeamlessMovements(ctx context.Context, clientID string, from, to time.Time) ([]wallet.SeamlessMovement, error)
}

// GET /admin/v1/clients/{id}/seamless/reconciliation?day=YYYY-MM-DD: the
// day's movements the ledger booked for the seamless client, each looked
// up at the client's own wallet, and the differences named
// (docs/seamless-wallet.md#reconciliation). A client in ledger mode is
// 400 naming the client; a protocol without a lookup
// (tbb) is 400 pointing to the reconciliation upload.
func (s *server) reconcileSeamless(c echo.Context) error {
	id, err := clientParam(c)
	if err != nil {
		return err
	}
	if s.deps.SeamlessLedger == nil || s.deps.Operators == nil {
		return wire.NewError(http.StatusServiceUnavailable, wire.CodeUnavailable, "the seamless wallet is not configured")
	}
	raw, _ := wire.QueryValue(c, "day")
	day, err := time.Parse(time.DateOnly, raw)
	if err != nil {
		return &wire.Error{Status: http.StatusBadRequest, Code: wire.CodeInvalidRequest,
			Message: "day must be a date, YYYY-MM-DD", Details: map[string]any{"field": "day"}}
	}
	ctx := c.Request().Context()
	if _, err := s.deps.Clients.GetClient(ctx, id); err != nil {
		return err
	}
	op, err := s.deps.Operators.Operator(ctx, id)
	if err != nil {
		return err
	}
	if op == nil {
		return &wire.Error{Status: http.StatusBadRequest, Code: wire.CodeInvalidRequest,
			Message: "the client keeps its players' money in the ledger: there is no wallet of its own to reconcile with",
			Details: map[string]any{"field": "client_id"}}
	}
	moves, err := s.deps.SeamlessLedger.SeamlessMovements(ctx, id, day, day.AddDate(0, 0, 1))
	if err != nil {
		return err
	}
	rep, err := wallet.ReconcileWithOperator(ctx, op, moves)
	if errors.Is(err, wallet.ErrNoLookup) {
		return &wire.Error{Status: http.StatusBadRequest, Code: wire.CodeInvalidRequest,
			Message: "the client's wallet protocol cannot look a movement up: reconcile the operator's own file with " +
				"POST /api/v1/reconciliations", Details: map[string]any{"field": "client_id"}}
	} else if err != nil {
		return err
	}
	return wire.OK(c, map[string]any{"client_id": id, "day": raw, "checked": rep.Checked, "matched": rep.Matched,
		"differences": rep.Differences})
}
