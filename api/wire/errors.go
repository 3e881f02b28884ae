// Package wire holds the answer and request shapes every handler package
// of the API shares, so that all of them speak one language on the wire:
// the error codes and the Error every handler returns, the one mapping of
// errors (domain, gateway, read-model, provider) to status and code
// (Classify), the success envelope, strict JSON body and query reading,
// and the request's id and principal as the root package's middleware
// stored them. It writes no error answer itself: the server's one error
// handler (package api) does, from Classify.
package wire

// Error codes of the structured error body. They are part of the contract:
// add new ones, never rename.
const (
	CodeInvalidRequest      = "INVALID_REQUEST"
	CodeInvalidJSON         = "INVALID_JSON"
	CodeBodyTooLarge        = "BODY_TOO_LARGE"
	CodeInvalidAmount       = "INVALID_AMOUNT"
	CodeAmountTooPrecise    = "AMOUNT_TOO_PRECISE"
	CodeUnknownCurrency     = "UNKNOWN_CURRENCY"
	CodeCurrencyMismatch    = "CURRENCY_MISMATCH"
	CodeInsufficientFunds   = "INSUFFICIENT_FUNDS"
	CodeIdempotencyConflict = "IDEMPOTENCY_CONFLICT"
	CodeTransactionUnknown  = "TRANSACTION_NOT_FOUND"
	CodeAlreadyRolledBack   = "ALREADY_ROLLED_BACK"
	CodeRolledBackEarlier   = "ROLLED_BACK_BEFORE_ARRIVAL"
	CodeBetRolledBack       = "BET_ROLLED_BACK"
	CodeBetSettled          = "BET_SETTLED"
	CodePlayerMismatch      = "PLAYER_MISMATCH"
	CodeNotRollbackable     = "NOT_ROLLBACKABLE"
	CodeDuplicateTx         = "DUPLICATE_TRANSACTION"
	CodeSessionExpired      = "SESSION_EXPIRED"
	CodeInvalidSignature    = "INVALID_SIGNATURE"
	CodeUnauthorized        = "UNAUTHORIZED"
	CodeForbidden           = "FORBIDDEN"
	CodeNotFound            = "NOT_FOUND"
	CodeMethodNotAllowed    = "METHOD_NOT_ALLOWED"
	CodeRateLimited         = "RATE_LIMITED"
	CodeUnavailable         = "SERVICE_UNAVAILABLE"
	CodeInternal            = "INTERNAL_ERROR"

	// Signed launch (GET /v1/launch), see docs/signed-launch.md.
	CodeSignatureRequired   = "SIGNATURE_REQUIRED"
	CodeTimestampOutOfRange = "TIMESTAMP_OUT_OF_RANGE"
	CodeIPNotAllowed        = "IP_NOT_ALLOWED"
	CodeReturnURLNotAllowed = "RETURN_URL_NOT_ALLOWED"

	// Launches that name the player's country (docs/providers-and-games.md#catalog-sync):
	// the provider's game list blocks the game there (403).
	CodeGameBlockedInCountry = "GAME_BLOCKED_IN_COUNTRY"

	// Deliveries (docs/callbacks-and-webhooks.md).
	CodeDeliveryInProgress = "DELIVERY_IN_PROGRESS"

	// Read models (docs/read-models.md): the read model had not reached
	// the min_position asked for within the wait.
	CodeReadModelBehind = "READ_MODEL_BEHIND"
	// min_position is past the event store's head: no event has it yet,
	// so no wait can satisfy it (a position from a write never is).
	CodePositionBeyondHead = "POSITION_BEYOND_HEAD"

	// Key management and the admin API (docs/keys-and-admin.md).
	CodeClientExists      = "CLIENT_EXISTS"
	CodeKeyNotActive      = "KEY_NOT_ACTIVE"
	CodeKeyAlreadyRotated = "KEY_ALREADY_ROTATED"
	// The tokens area: a client secret is revealed only once one is issued.
	CodeClientSecretNotIssued = "CLIENT_SECRET_NOT_ISSUED"

	// Providers and launches (docs/providers-and-games.md): the provider
	// answered the launch with a refusal (502). A provider that cannot be
	// reached is SERVICE_UNAVAILABLE (503 with Retry-After).
	CodeProviderRejected = "PROVIDER_REJECTED"

	// Rounds (docs/read-models.md): a round id without ?provider= that
	// names rounds of several of the client's providers (409; the
	// details name them).
	CodeRoundAmbiguous = "ROUND_AMBIGUOUS"

	// Promotions (docs/promotions.md): a free-bet reward that is
	// cancelled, expired or used up, or (to cancel) already used; a grant
	// under a campaign that has ended.
	CodeRewardNotActive = "REWARD_NOT_ACTIVE"

	// Statements (docs/statements.md): closing a period that has not
	// ended, one already closed or before a closed one, or while another
	// statement of the client and provider was closed (close again).
	CodePeriodNotEnded      = "PERIOD_NOT_ENDED"
	CodePeriodClosed        = "PERIOD_CLOSED"
	CodePeriodOutOfOrder    = "PERIOD_OUT_OF_ORDER"
	CodeStatementConcurrent = "STATEMENT_CONCURRENT"

	// The seamless wallet (docs/seamless-wallet.md): the client's own
	// wallet refused a provider's call for a reason of its own (a blocked
	// player, a limit of the operator's).
	CodeOperatorRefused = "OPERATOR_REFUSED"

	// The verifiable log (docs/audit.md, "The verifiable log"): the event
	// is committed but the log, or the checkpoint asked for, does not hold
	// it yet (409; the next checkpoint will).
	CodeNotInLog = "NOT_IN_LOG"
)

// retryableCodes are the codes whose request may succeed when repeated
// unchanged: the failure was ours or temporary, and every money call is
// idempotent, so a retry never moves money twice. Every other code is final
// for that request. Routes that promise it (the provider wallet) add
// details.retryable to their error bodies (package api, withRetryable).
var retryableCodes = map[string]bool{
	CodeInternal:        true,
	CodeUnavailable:     true,
	CodeReadModelBehind: true,
	CodeRateLimited:     true,
	// Another statement was closed meanwhile: closing again recomputes.
	CodeStatementConcurrent: true,
	// The builder appends the event and signs a checkpoint of it soon.
	CodeNotInLog: true,
}

// Retryable reports whether a request that failed with code may be retried
// unchanged.
func Retryable(code string) bool { return retryableCodes[code] }

// Error is an API error with its status and code. Handlers return it (or a
// domain or gateway error, see Classify) and the server's error handler
// writes the one error shape.
type Error struct {
	Status  int
	Code    string
	Message string
	Details map[string]any
	Err     error
}

func (e *Error) Error() string { return e.Message }
func (e *Error) Unwrap() error { return e.Err }

// NewError is an Error without details.
func NewError(status int, code, msg string) *Error {
	return &Error{Status: status, Code: code, Message: msg}
}
