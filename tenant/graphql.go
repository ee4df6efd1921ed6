package tenant

import (
	"github.com/labstack/echo/v4"

	"github.com/platform-dev/platform/gql"
)

// MountGraphQL registers /api/v1/graphql on project hosts, answering browsers on the origins
// the project lists (projectCORS). Every method reaches the handler, so that the API itself
// answers a wrong one with 405.
func (r *Registry) MountGraphQL(e *echo.Echo) {
	// Composed here, not given to Any as route middleware, which Echo applies again on every
	// request (two closures each time).
	e.Any("/api/v1/graphql", ProjectOnly(metered(projectCORS(r.withQuotas(r.withRealtime(r.serveGraphQL))))))
	e.Any(gql.FilesPath+"*", ProjectOnly(metered(projectCORS(r.withQuotas(r.serveFiles)))))
	// The explorer's files are the same for every project and hold no data.
	e.GET(gql.ExplorerPath+"*", echo.WrapHandler(gql.ExplorerAssets()), ProjectOnly)
}

// serveGraphQL verifies the caller's token against the project's identity provider and runs
// the request under the project's access rules (see Protect), once the project's fair share
// admits it: a wait for the identity provider's keys holds no slot.
func (r *Registry) serveGraphQL(c echo.Context) error {
	rt := RuntimeOf(c)
	if g, ok := guardOf(c.Response(), c.Request(), rt.Verifier, rt.Rules); ok {
		r.fairShare(c, rt.Project.ID, func() { rt.API.ServeAs(c.Response(), c.Request(), g) })
	}
	return nil
}
