// Package console is the operator console: a web UI on the apex host (/console/) where the
// holder of the admin token signs in, edits project documents and reads and changes records.
// Pages are rendered on the server with html/template; the vendored htmx (assets/) swaps the
// answers of changes into the page, so the console needs no build step and no CDN.
package console

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/platform-dev/platform/coord"
	"github.com/platform-dev/platform/store"
	"github.com/platform-dev/platform/tenant"
)

//go:embed assets
var assets embed.FS

//go:embed templates/*.html
var templateFiles embed.FS

// contentSecurityPolicy allows nothing but the console's own scripts, styles and requests:
// no inline script or style, no eval (htmx is told so in its config), no framing.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// Config is what the console needs.
type Config struct {
	Registry *tenant.Registry
	Stores   *store.Stores
	// Gate checks the admin token (the one the admin API takes) and counts wrong ones
	// together with the admin API's.
	Gate *tenant.AdminGate
	// SessionTTL is how long a session lasts without use (30 minutes when zero).
	SessionTTL time.Duration
	// Metrics is the process's metrics registry; the health page shows MCP and HTTP figures
	// from it. Nil leaves them out.
	Metrics prometheus.Gatherer
	// SampleInterval is how often the health page's figures are sampled and polled (5
	// seconds when zero); its charts span historySize samples.
	SampleInterval time.Duration
	// DevIssuer, when the server runs one, mints test tokens for the projects that trust it.
	DevIssuer *tenant.DevIssuer
	Logger    *slog.Logger
}

// Console serves the operator console.
type Console struct {
	cfg     Config
	pages   map[string]*template.Template
	history history // samples of the health page's figures
	// sessions are the signed-in browsers, by the hash of their cookie.
	sessions *coord.Sessions
}

// New parses the console's templates.
func New(cfg Config) (*Console, error) {
	if cfg.Registry == nil || cfg.Stores == nil || cfg.Gate == nil {
		return nil, errors.New("console: Registry, Stores and Gate are required")
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = 30 * time.Minute
	}
	if cfg.SampleInterval <= 0 {
		cfg.SampleInterval = 5 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	pages, err := parseTemplates()
	if err != nil {
		return nil, err
	}
	return &Console{cfg: cfg, pages: pages, sessions: coord.NewSessions(cfg.Stores.Redis, coord.ConsoleSession, cfg.SessionTTL)}, nil
}

// parseTemplates makes one template set per page file: the shared layout and fragments
// (files starting with an underscore) with that page's "content".
func parseTemplates() (map[string]*template.Template, error) {
	funcs := template.FuncMap{"join": strings.Join, "stamp": stamp, "deref": func(p *int64) int64 { return *p }}
	base, err := template.New("console").Funcs(funcs).ParseFS(templateFiles, "templates/_*.html")
	if err != nil {
		return nil, fmt.Errorf("console templates: %w", err)
	}
	names, err := fs.Glob(templateFiles, "templates/[a-z]*.html")
	if err != nil {
		return nil, fmt.Errorf("console templates: %w", err)
	}
	pages := map[string]*template.Template{}
	for _, n := range names {
		t, err := template.Must(base.Clone()).ParseFS(templateFiles, n)
		if err != nil {
			return nil, fmt.Errorf("console template %s: %w", n, err)
		}
		pages[strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")] = t
	}
	return pages, nil
}

// Mount registers the console under /console/ on the apex host; other hosts answer 404.
func (con *Console) Mount(e *echo.Echo) {
	e.GET("/console", func(c echo.Context) error { return c.Redirect(http.StatusMovedPermanently, "/console/") }, tenant.ApexOnly)
	// Pages and assets are compressed (htmx is 52 KB, 17 KB gzipped); answers too short to
	// gain are not.
	g := e.Group("/console", tenant.ApexOnly, securityHeaders, middleware.GzipWithConfig(middleware.GzipConfig{MinLength: 1024}))
	static, _ := fs.Sub(assets, "assets")
	g.GET("/assets/*", echo.WrapHandler(http.StripPrefix("/console/assets/", http.FileServerFS(static))))
	g.GET("/", con.home)
	g.POST("/login", con.login)

	s := g.Group("", con.requireSession, con.auditChanges, con.authorize)
	s.POST("/logout", con.logout)
	s.GET("/keys", con.keys)
	s.POST("/keys", con.createKey)
	s.DELETE("/keys/:name", con.revokeKey)
	s.GET("/audit", con.audit)
	con.mountProjects(s)
	con.mountRecords(s)
	con.mountBackups(s)
	con.mountUsage(s)
	con.mountQuotas(s)
	con.mountAdvice(s)
	con.mountWebhooks(s)
	s.GET("/health", con.health)
	s.GET("/projects/:id/identity", con.identity)
	s.POST("/projects/:id/identity/token", con.mintToken)
}

func securityHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		if !strings.HasPrefix(c.Request().URL.Path, "/console/assets/") {
			h.Set(echo.HeaderCacheControl, "no-store")
		}
		return next(c)
	}
}

// view is what every page template gets.
type view struct {
	Title string
	// CSRF is the session's token, written into the page for htmx to send back.
	CSRF     string
	SignedIn bool
	// Who is the signed-in key: its name, scope, and what the scope allows.
	Who   *who
	Error string
	Data  any
}

// who is the signed-in key as the page header shows it, with what its scope opens.
type who struct {
	Name, Scope, Allows string
	// Project is the one project the key reaches ("" for every one).
	Project string
	// Operator may change everything; ReadAll may read everything.
	Operator, ReadAll bool
}

// render writes page (a file under templates/) or, with fragment set, only its named
// template, as an htmx answer.
func (con *Console) render(c echo.Context, status int, page, fragment string, v view) error {
	if s := sessionOf(c); s != nil {
		v.SignedIn, v.CSRF = true, s.csrf
		sc := s.op.Scope
		v.Who = &who{Name: s.op.Name, Scope: sc.String(), Allows: scopeAllows(sc), Project: sc.Project, Operator: sc.Project == "" && sc.Change, ReadAll: sc.Project == ""}
	}
	if status >= 400 && v.Error != "" {
		c.Set(auditErrorKey, v.Error)
	}
	t, ok := con.pages[page]
	if !ok {
		return fmt.Errorf("console: no page %q", page)
	}
	name := "layout"
	if fragment != "" {
		name = fragment
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, name, v); err != nil {
		return fmt.Errorf("render %s: %w", page, err)
	}
	return c.HTMLBlob(status, buf.Bytes())
}

// stamp shows a moment in UTC to the second, with how long ago it was.
func stamp(t time.Time) string {
	return t.UTC().Format("2006-01-02 15:04:05 UTC") + " (" + time.Since(t).Round(time.Second).String() + " ago)"
}

// fail logs an unexpected error and answers with a page that says where to look.
func (con *Console) fail(c echo.Context, what string, err error) error {
	con.cfg.Logger.ErrorContext(c.Request().Context(), "console: "+what, "err", err)
	return con.render(c, http.StatusInternalServerError, "error", fragmentFor(c), view{Title: "Error", Error: what + " failed; see the server log"})
}
