package tenant

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/platform-dev/platform/pressure"
)

// fairShare runs serve once project's share of the process admits it (see
// pressure.FairShare), or answers why not. Only queries and mutations come here:
// subscriptions are routed away before (withRealtime), since a connection open for hours
// would hold a slot while it mostly waits for changes.
//
// A request refused for want of a slot is answered 503 OVERLOADED with Retry-After, not 429:
// the server is saturated, and the same request is served at once when it is not; a
// project's own limits answer 429 RATE_LIMITED.
func (r *Registry) fairShare(c echo.Context, project string, serve func()) {
	share := r.opts.FairShare
	if share == nil {
		serve()
		return
	}
	err := share.Do(c.Request().Context(), project, serve)
	if err == nil || errors.Is(err, context.Canceled) {
		return // served, or the client left while it waited and reads no answer
	}
	retry := strconv.Itoa(pressure.RetrySeconds(share.RetryAfter()))
	c.Response().Header().Set("Retry-After", retry)
	_ = WriteError(c, http.StatusServiceUnavailable, CodeOverloaded,
		"the server is busy and project "+quote(project)+" is past its share: "+err.Error()+"; retry in "+retry+" s")
}
