package tenant

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"
)

// What a preflight allows: the methods of GraphQL over HTTP and the headers its clients send.
const (
	corsMethods = "GET, POST, OPTIONS"
	corsHeaders = "Authorization, Content-Type, Accept"
	// corsMaxAge lets a browser keep a preflight's answer for ten minutes (Chromium caps it
	// at two hours, Firefox at a day), so an app does not preflight every request.
	corsMaxAge = 600
)

// allowsOrigin reports whether the project lets pages of origin call its API, and the value
// of Access-Control-Allow-Origin that says so.
func (c CORS) allowsOrigin(origin string) (string, bool) {
	if origin == "" {
		return "", false
	}
	for _, o := range c.Origins {
		if o == "*" {
			return "*", true
		}
		// Browsers send scheme and host in lowercase; a document may not.
		if strings.EqualFold(o, origin) {
			return origin, true
		}
	}
	return "", false
}

// projectCORS answers cross-origin requests to a project's API as its document's cors
// settings say: a preflight (OPTIONS with Access-Control-Request-Method) gets 204 with the
// allowed methods and headers, or 403 for an origin the project does not list; an allowed
// origin's other requests get Access-Control-Allow-Origin. It runs after Hosts, on project
// routes only, so the admin API never answers a browser on another origin.
func projectCORS(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		rt := RuntimeOf(c)
		req, h := c.Request(), c.Response().Header()
		origin := req.Header.Get("Origin")
		if rt == nil || origin == "" {
			return next(c)
		}
		// The answer depends on Origin, so caches must key on it, allowed or not.
		h.Add("Vary", "Origin")
		allow, ok := rt.Project.CORS.allowsOrigin(origin)
		if req.Method == http.MethodOptions && req.Header.Get("Access-Control-Request-Method") != "" {
			h.Add("Vary", "Access-Control-Request-Method, Access-Control-Request-Headers")
			if !ok {
				return WriteError(c, http.StatusForbidden, CodeForbidden, "origin "+quote(origin)+" may not call project "+quote(rt.Project.ID)+": add it to cors.origins in the project document")
			}
			h.Set("Access-Control-Allow-Origin", allow)
			h.Set("Access-Control-Allow-Methods", corsMethods)
			h.Set("Access-Control-Allow-Headers", corsHeaders)
			h.Set("Access-Control-Max-Age", strconv.Itoa(corsMaxAge))
			return c.NoContent(http.StatusNoContent)
		}
		if ok {
			h.Set("Access-Control-Allow-Origin", allow)
			// Lets a page read the id to quote in a report.
			h.Set("Access-Control-Expose-Headers", echo.HeaderXRequestID)
		}
		return next(c)
	}
}
