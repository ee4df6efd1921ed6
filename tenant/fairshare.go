package tenant

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/platform-dev/platform/pressure"
)

// fairShare runs a GraphQL request once its project's share of the process admits it (see
// pressure.FairShare). It wraps queries and mutations only: subscriptions are routed away
// before it, since a connection that stays open for hours would hold a slot while it
// mostly waits for changes.
//
// A request refused for want of a slot is answered 503 OVERLOADED with Retry-After, not
// 429: the server is saturated, and the same request is served at once when it is not; a
// project's own limits (quotas) answer 429 RATE_LIMITED.
func (r *Registry) fairShare(next echo.HandlerFunc) echo.HandlerFunc {
	share := r.opts.FairShare
	if share == nil {
		return next
	}
	retry := strconv.Itoa(pressure.RetrySeconds(share.RetryAfter()))
	return func(c echo.Context) error {
		id := RuntimeOf(c).Project.ID
		var served error
		err := share.Do(c.Request().Context(), id, func() { served = next(c) })
		if errors.Is(err, context.Canceled) {
			return nil // the client left while it waited: nobody reads an answer
		}
		if err != nil {
			c.Response().Header().Set("Retry-After", retry)
			return WriteError(c, http.StatusServiceUnavailable, CodeOverloaded,
				"the server is busy and project "+quote(id)+" has more requests in flight than its share: "+err.Error()+"; retry in "+retry+" s")
		}
		return served
	}
}
