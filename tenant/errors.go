package tenant

import (
	"github.com/labstack/echo/v4"
)

// Error codes shared by every JSON error body the service writes (DESIGN.md).
const (
	CodeBadRequest      = "BAD_REQUEST"
	CodeUnauthenticated = "UNAUTHENTICATED"
	CodeForbidden       = "FORBIDDEN"
	CodeNotFound        = "NOT_FOUND"
	CodeProjectNotFound = "PROJECT_NOT_FOUND"
	CodeInternal        = "INTERNAL"
)

// ErrorBody is the shape of every error answer outside GraphQL execution; it is the GraphQL
// error shape, so one client-side parser reads both.
type ErrorBody struct {
	Errors []ErrorItem `json:"errors"`
}

// ErrorItem is one error.
type ErrorItem struct {
	Message    string         `json:"message"`
	Extensions map[string]any `json:"extensions"`
}

// WriteError answers with status and one error carrying code; extra entries join the
// extensions (for example the problems of a rejected document).
func WriteError(c echo.Context, status int, code, msg string, extra ...any) error {
	ext := map[string]any{"code": code}
	for i := 0; i+1 < len(extra); i += 2 {
		if k, ok := extra[i].(string); ok {
			ext[k] = extra[i+1]
		}
	}
	if id := c.Response().Header().Get(echo.HeaderXRequestID); id != "" {
		ext["requestId"] = id
	}
	return c.JSON(status, ErrorBody{Errors: []ErrorItem{{Message: msg, Extensions: ext}}})
}
