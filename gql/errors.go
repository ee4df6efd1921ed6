package gql

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"net/http"

	gqlerrors "github.com/graph-gophers/graphql-go/errors"

	"github.com/platform-dev/platform/telemetry"
)

// The codes of errors[].extensions.code, in every error body the service writes (DESIGN.md):
// GraphQL errors and the answers of the layers around the API.
const (
	CodeBadRequest      = "BAD_REQUEST"
	CodeValidation      = "GRAPHQL_VALIDATION_FAILED"
	CodeBadUserInput    = "BAD_USER_INPUT"
	CodeUnauthenticated = "UNAUTHENTICATED"
	CodeForbidden       = "FORBIDDEN"
	CodeNotFound        = "NOT_FOUND"
	CodeProjectNotFound = "PROJECT_NOT_FOUND"
	CodeConflict        = "CONFLICT"
	CodeTooLarge        = "RESULT_TOO_LARGE"
	CodeTooComplex      = "QUERY_TOO_COMPLEX"
	CodeOverloaded      = "OVERLOADED"
	// CodeTimeout answers a request that ran past its time limit: the document asked for
	// more work than the limit allows, which is no bug (INTERNAL) of the service.
	CodeTimeout     = "TIMEOUT"
	CodeRateLimited = "RATE_LIMITED"
	// CodeQuotaExceeded: a write the project's storage quota (set by the operator) refuses;
	// reads go on. extensions.quota names the quota, extensions.limit its value.
	CodeQuotaExceeded               = "QUOTA_EXCEEDED"
	CodeInternal                    = "INTERNAL"
	CodeIdentityProviderUnavailable = "IDENTITY_PROVIDER_UNAVAILABLE"
	// CodeRuleFailed: an access rule could not be evaluated for this caller or record (past
	// its cost limit); the project's rule must change, not the request.
	CodeRuleFailed = "RULE_FAILED"
)

// ErrorBody is the shape of an error answer written outside GraphQL execution: the GraphQL
// response's errors, so one client-side parser reads both.
type ErrorBody struct {
	Errors []ErrorItem `json:"errors"`
}

// ErrorItem is one error.
type ErrorItem struct {
	Message    string         `json:"message"`
	Extensions map[string]any `json:"extensions"`
}

// WriteError answers status with one error of code, as application/json; the entries of ext
// join the extensions beside the code.
func WriteError(w http.ResponseWriter, status int, code, msg string, ext map[string]any) {
	writeError(w, mediaJSON, status, code, msg, ext)
}

// withRequestID adds the id of ctx's request to the extensions ext (nil: none yet), so that
// a caller's report of an error finds its log lines.
func withRequestID(ctx context.Context, ext map[string]any) map[string]any {
	id := telemetry.RequestID(ctx)
	if id == "" {
		return ext
	}
	if ext == nil {
		ext = map[string]any{}
	}
	ext["requestId"] = id
	return ext
}

func writeError(w http.ResponseWriter, media string, status int, code, msg string, ext map[string]any) {
	all := map[string]any{"code": code}
	maps.Copy(all, ext)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	// Messages quote what the caller sent; they are read as JSON, never as HTML.
	enc.SetEscapeHTML(false)
	_ = enc.Encode(ErrorBody{Errors: []ErrorItem{{Message: msg, Extensions: all}}})
	w.Header().Set("Content-Type", contentType(media))
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

// fieldError is the GraphQL error of a field that failed at path, as graph-gophers writes a
// resolver's: the message, the path, and the extensions of an error that has them (an
// *Error's code); no locations.
func fieldError(err error, path []any) *gqlerrors.QueryError {
	e := gqlerrors.Errorf("%s", err)
	e.Path = path
	e.ResolverError = err
	if ex, ok := err.(interface{ Extensions() map[string]any }); ok {
		e.Extensions = ex.Extensions()
	}
	return e
}
