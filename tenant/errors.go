package tenant

import (
	"github.com/labstack/echo/v4"

	"github.com/platform-dev/platform/gql"
)

// Error codes of the answers tenant writes; gql defines every code the service answers.
const (
	CodeBadRequest      = gql.CodeBadRequest
	CodeUnauthenticated = gql.CodeUnauthenticated
	CodeForbidden       = gql.CodeForbidden
	CodeNotFound        = gql.CodeNotFound
	CodeProjectNotFound = gql.CodeProjectNotFound
	CodeInternal        = gql.CodeInternal
	CodeRateLimited     = gql.CodeRateLimited
	CodeConflict        = gql.CodeConflict
	// CodeQuotaExceeded is the code of a change past a project's quota.
	CodeQuotaExceeded = gql.CodeQuotaExceeded
	// CodeIdentityProviderUnavailable is the code of a request refused because the
	// project's identity provider cannot be reached.
	CodeIdentityProviderUnavailable = gql.CodeIdentityProviderUnavailable
	// CodeRuleFailed is the code of a request an access rule could not decide (past its cost
	// limit): the project's rule must change, not the request.
	CodeRuleFailed = gql.CodeRuleFailed
	// CodeOverloaded is the code of a request refused, with 503 and Retry-After, because
	// the process is near its memory limit, or is busy and the request's project has more
	// waiting than its fair share allows (see pressure.FairShare).
	CodeOverloaded = gql.CodeOverloaded
)

// ErrorBody is the shape of every error answer outside GraphQL execution (gql.ErrorBody).
type ErrorBody = gql.ErrorBody

// WriteError answers with status and one error carrying code; extra entries join the
// extensions (for example the problems of a rejected document).
func WriteError(c echo.Context, status int, code, msg string, extra ...any) error {
	ext := map[string]any{}
	for i := 0; i+1 < len(extra); i += 2 {
		if k, ok := extra[i].(string); ok {
			ext[k] = extra[i+1]
		}
	}
	if id := c.Response().Header().Get(echo.HeaderXRequestID); id != "" {
		ext["requestId"] = id
	}
	gql.WriteError(c.Response(), status, code, msg, ext)
	return nil
}
