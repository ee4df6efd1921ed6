package tenant

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/platform-dev/platform/telemetry"
)

// hostContext is the Echo context Hosts hands on: what the request's host maps to travels
// with it, so that the handlers further in find it without Echo's per-request map (a map
// made for every request, and a lock around each read of it).
type hostContext struct {
	echo.Context
	rt   *Runtime // nil on the apex host
	apex bool
}

// HostOptions configure Hosts.
type HostOptions struct {
	// Domain is the apex host; projects live at <id>.<Domain>.
	Domain string
	// Skip lists paths served on every host, known or not (health checks).
	Skip []string
}

// Hosts is the Echo middleware that maps a request's host to what serves it: the apex host
// (the domain itself, or an IP address, which cannot name a project) is marked as such,
// <project>.<domain> gets the project's runtime, and anything else is answered 404 here.
func (r *Registry) Hosts(opts HostOptions) echo.MiddlewareFunc {
	return opts.route(func(c echo.Context, label string) (*Runtime, error) {
		if err := ValidateID(label); err != nil {
			return nil, WriteError(c, http.StatusNotFound, CodeProjectNotFound, err.Error())
		}
		req := c.Request()
		rt, err := r.Runtime(req.Context(), label)
		switch {
		case errors.Is(err, ErrProjectNotFound):
			return nil, WriteError(c, http.StatusNotFound, CodeProjectNotFound, "project "+quote(label)+" does not exist")
		case err != nil:
			r.opts.Logger.ErrorContext(req.Context(), "load project", "project", label, "err", err)
			return nil, WriteError(c, http.StatusServiceUnavailable, CodeInternal, "project "+quote(label)+" cannot be loaded right now; try again")
		}
		telemetry.NoteProject(req.Context(), label)
		return rt, nil
	})
}

// ApexHosts is Hosts for a replica that serves no project (`serve --role mcp`): the apex
// host is marked as Hosts marks it, and a project's host is answered 404 with where it is
// served, so that a load balancer that sends one here is found at once.
func ApexHosts(opts HostOptions) echo.MiddlewareFunc {
	return opts.route(func(c echo.Context, label string) (*Runtime, error) {
		return nil, WriteError(c, http.StatusNotFound, CodeNotFound,
			"project "+quote(label)+" is not served by this replica, which serves only /mcp on the apex host (--role mcp): route <project>."+opts.Domain+" to the replicas of --role api or all")
	})
}

// route marks the apex host, hands a project's host to project, and answers 404 for any
// other host. project returns the project's runtime, or nil once it has answered the
// request itself (its error is the answer's).
func (opts HostOptions) route(project func(c echo.Context, label string) (*Runtime, error)) echo.MiddlewareFunc {
	domain := strings.ToLower(strings.TrimSuffix(opts.Domain, "."))
	suffix := "." + domain
	skip := map[string]bool{}
	for _, p := range opts.Skip {
		skip[p] = true
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			if skip[req.URL.Path] {
				return next(c)
			}
			host := hostname(req.Host)
			if isApex(host, domain) {
				return next(&hostContext{Context: c, apex: true})
			}
			label, ok := strings.CutSuffix(host, suffix)
			if !ok || strings.Contains(label, ".") {
				return WriteError(c, http.StatusNotFound, CodeNotFound, "host "+quote(host)+" is not served here: use "+domain+" or <project>."+domain)
			}
			rt, err := project(c, label)
			if rt == nil {
				return err
			}
			return next(&hostContext{Context: c, rt: rt})
		}
	}
}

// ProjectPathPrefix starts the path form of a project's address on the apex host:
// <domain>/p/<project>/api/v1/graphql is <project>.<domain>/api/v1/graphql. It is for tools
// on the machine that cannot reach <project>.localhost: Node does not resolve it, and its
// fetch does not let a caller set Host.
const ProjectPathPrefix = "/p/"

// ProjectPaths is the Echo middleware, run before routing (Echo.Pre), that serves the path
// form: a request to the apex host for /p/<project>/<rest> goes on as a request to
// <project>.<domain> for /<rest>, so that Hosts, the routes, and the project's token
// checks, access rules and limits treat it exactly as one sent to the project's host.
// Nothing else of the apex host is reachable under /p/, and a project's path reaches only
// that project.
func ProjectPaths(domain string) echo.MiddlewareFunc {
	domain = strings.ToLower(strings.TrimSuffix(domain, "."))
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			rest, ok := strings.CutPrefix(req.URL.Path, ProjectPathPrefix)
			if !ok || !isApex(hostname(req.Host), domain) {
				return next(c)
			}
			label, path, _ := strings.Cut(rest, "/")
			label = strings.ToLower(label)
			if err := ValidateID(label); err != nil {
				return WriteError(c, http.StatusNotFound, CodeProjectNotFound, err.Error())
			}
			// The addresses the project answers with (a File's url) start where this one did.
			from := pathForm{host: req.Host, prefix: ProjectPathPrefix + label}
			req.Host = label + "." + domain
			req.URL.Path, req.URL.RawPath = "/"+path, ""
			c.SetRequest(req.WithContext(context.WithValue(req.Context(), pathFormKey{}, from)))
			return next(c)
		}
	}
}

// pathFormKey keys, in the context of a request ProjectPaths rewrote, the pathForm it came by.
type pathFormKey struct{}

// pathForm is the apex host a request in the path form was sent to, and the path prefix
// (/p/<project>) that ProjectPaths took off.
type pathForm struct{ host, prefix string }

// isApex reports whether host (as hostname answers it) is the apex: the domain itself, or
// an IP address, which cannot name a project.
func isApex(host, domain string) bool {
	return host == domain || maybeIP(host) && net.ParseIP(host) != nil
}

// hostname lowercases a Host header and drops its port and any trailing dot.
func hostname(h string) string {
	// Without a colon there is no port, and SplitHostPort would only make an error.
	if strings.Contains(h, ":") {
		if host, _, err := net.SplitHostPort(h); err == nil {
			h = host
		}
	}
	return strings.TrimSuffix(strings.ToLower(h), ".")
}

// maybeIP reports whether net.ParseIP could read host: an IPv4 address ends in a digit, an
// IPv6 one has colons. Asking it about every project host would make an error each time.
func maybeIP(host string) bool {
	return host != "" && (host[len(host)-1] >= '0' && host[len(host)-1] <= '9' || strings.Contains(host, ":"))
}

// ProjectOnly serves a route only on project hosts; elsewhere it answers 404.
func ProjectOnly(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if RuntimeOf(c) == nil {
			return WriteError(c, http.StatusNotFound, CodeNotFound, "this path is served on project hosts (<project>.<domain>)")
		}
		return next(c)
	}
}

// ApexOnly serves a route only on the apex host; elsewhere it answers 404.
func ApexOnly(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if hc, _ := c.(*hostContext); hc == nil || !hc.apex {
			return WriteError(c, http.StatusNotFound, CodeNotFound, "this path is served on the apex host only")
		}
		return next(c)
	}
}

// RuntimeOf returns the project a request is for, or nil on the apex host.
func RuntimeOf(c echo.Context) *Runtime {
	if hc, ok := c.(*hostContext); ok {
		return hc.rt
	}
	return nil
}
