package wire

import (
	"errors"
	"net/http"
	"time"

	"github.com/pitboss/pitboss/gateway"
)

// providerError maps the Launcher's errors (Classify calls it): an
// unreachable provider is 503 SERVICE_UNAVAILABLE with Retry-After (whole
// seconds until the soonest endpoint breaker half-opens, at least 1), a
// refusal is 502 PROVIDER_REJECTED. Endpoint URLs are never shown.
func providerError(err error) (*Error, bool) {
	var pu *gateway.ProviderUnavailableError
	if errors.As(err, &pu) {
		endpoints := make([]map[string]any, 0, len(pu.Endpoints))
		for _, f := range pu.Endpoints {
			endpoints = append(endpoints, map[string]any{"endpoint": f.Endpoint, "reason": f.Reason})
		}
		details := map[string]any{"provider": pu.Provider, "retry_after_seconds": RetryAfterSeconds(pu.RetryAfter),
			"endpoints": endpoints}
		if pu.Reason != "" {
			details["reason"] = pu.Reason
		}
		return &Error{Status: http.StatusServiceUnavailable, Code: CodeUnavailable,
			Message: "provider " + pu.Provider + " is temporarily unavailable; retry after the indicated delay",
			Details: details, Err: err}, true
	}
	var pr *gateway.ProviderRejectedError
	if errors.As(err, &pr) {
		details := map[string]any{"provider": pr.Provider, "provider_status": pr.Status}
		if pr.Code != "" {
			details["provider_code"] = pr.Code
		}
		msg := "provider " + pr.Provider + " refused the launch"
		if pr.Message != "" {
			msg += ": " + pr.Message
		}
		return &Error{Status: http.StatusBadGateway, Code: CodeProviderRejected, Message: msg, Details: details, Err: err}, true
	}
	return nil, false
}

// RetryAfterSeconds rounds d up to whole seconds, at least 1: the
// retry_after_seconds of an answer.
func RetryAfterSeconds(d time.Duration) int64 {
	s := int64((d + time.Second - 1) / time.Second)
	return max(s, 1)
}
