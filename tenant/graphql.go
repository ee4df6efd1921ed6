package tenant

import (
	"github.com/labstack/echo/v4"
)

// MountGraphQL registers POST /api/v1/graphql on project hosts. Every method reaches the
// handler, so that the API itself answers a wrong one with 405.
func (r *Registry) MountGraphQL(e *echo.Echo) {
	e.Any("/api/v1/graphql", serveGraphQL, ProjectOnly)
}

func serveGraphQL(c echo.Context) error {
	rt := RuntimeOf(c)
	rt.API.ServeHTTP(c.Response(), c.Request())
	return nil
}
