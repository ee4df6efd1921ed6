package console

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/platform-dev/platform/telemetry"
	"github.com/platform-dev/platform/tenant"
)

const (
	cookieName = "platform_console"
	csrfHeader = "X-CSRF-Token"
	sessionKey = "console.session"
)

// session is a signed-in browser. Sessions live in Redis, so every replica knows them and
// signing out ends them everywhere; the key is a hash of the cookie, so reading Redis does
// not give a usable cookie.
type session struct {
	id   string // the hash of its cookie
	csrf string
	// op is the holder of the key the session signed in with, checked again at every
	// request: revoking the key ends the session.
	op *tenant.Operator
}

// sessionValue is what Redis keeps of a session: its CSRF token and the hash of the key it
// signed in with (never the key).
type sessionValue struct {
	CSRF string `json:"csrf"`
	Key  string `json:"key"`
}

func sessionOf(c echo.Context) *session {
	s, _ := c.Get(sessionKey).(*session)
	return s
}

func sessionID(cookie string) string {
	sum := sha256.Sum256([]byte(cookie))
	return hex.EncodeToString(sum[:])
}

func randomToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// lookup returns the request's session, extending it, or nil when there is none.
func (con *Console) lookup(c echo.Context) (*session, error) {
	ck, err := c.Cookie(cookieName)
	if err != nil || ck.Value == "" {
		return nil, nil
	}
	id := sessionID(ck.Value)
	ctx := c.Request().Context()
	raw, ok, err := con.sessions.Use(ctx, id)
	if !ok || err != nil {
		return nil, err
	}
	var v sessionValue
	if err := json.Unmarshal(raw, &v); err != nil {
		// A session of a release before keys: signing in again names its key.
		return nil, con.sessions.Delete(ctx, id)
	}
	op, err := con.cfg.Gate.Recheck(ctx, v.Key)
	if errors.Is(err, tenant.ErrWrongAdminToken) {
		return nil, con.sessions.Delete(ctx, id)
	}
	if err != nil {
		return nil, err
	}
	con.setCookie(c, ck.Value, con.cfg.SessionTTL)
	return &session{id: id, csrf: v.CSRF, op: op}, nil
}

func (con *Console) setCookie(c echo.Context, value string, ttl time.Duration) {
	c.SetCookie(&http.Cookie{
		Name: cookieName, Value: value, Path: "/console/",
		MaxAge:   int(ttl / time.Second),
		HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: c.Scheme() == "https",
	})
}

// requireSession lets signed-in requests through; a change (any method but GET and HEAD)
// also needs the session's CSRF token in X-CSRF-Token. Without a session a page request is
// sent to the sign-in form and an htmx request is told to load it.
func (con *Console) requireSession(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		s, err := con.lookup(c)
		if err != nil {
			return con.fail(c, "read session", err)
		}
		req := c.Request()
		if s == nil {
			if req.Method == http.MethodGet && fragmentFor(c) == "" {
				return c.Redirect(http.StatusSeeOther, "/console/")
			}
			c.Response().Header().Set("HX-Redirect", "/console/")
			return con.render(c, http.StatusUnauthorized, "error", fragmentFor(c), view{Title: "Signed out", Error: "your session has ended; sign in again"})
		}
		if req.Method != http.MethodGet && req.Method != http.MethodHead &&
			subtle.ConstantTimeCompare([]byte(req.Header.Get(csrfHeader)), []byte(s.csrf)) != 1 {
			return con.render(c, http.StatusForbidden, "error", fragmentFor(c), view{Title: "Refused", Error: "this change lacks the page's CSRF token (" + csrfHeader + "); reload the page and try again"})
		}
		c.Set(sessionKey, s)
		c.SetRequest(req.WithContext(tenant.WithOperator(tenant.WithClient(req.Context(), "console from "+con.cfg.Gate.Client(req)), s.op)))
		return next(c)
	}
}

// fragmentFor answers htmx requests with the message alone, others with a whole page.
func fragmentFor(c echo.Context) string {
	if c.Request().Header.Get("HX-Request") == "true" {
		return "message"
	}
	return ""
}

func (con *Console) home(c echo.Context) error {
	s, err := con.lookup(c)
	if err != nil {
		return con.fail(c, "read session", err)
	}
	if s == nil {
		return con.render(c, http.StatusOK, "login", "", view{Title: "Sign in"})
	}
	c.Set(sessionKey, s)
	c.SetRequest(c.Request().WithContext(tenant.WithOperator(c.Request().Context(), s.op)))
	return con.projectList(c)
}

// login checks the admin token or operator key posted in the form field "token". The gate limits wrong
// tokens per client: once a client has spent its attempts it is refused, right token or
// not, until one comes back. A token in the address is refused without a look: addresses
// end up in logs, proxies and browser history.
func (con *Console) login(c echo.Context) error {
	ctx, req := c.Request().Context(), c.Request()
	if name := telemetry.SecretParamIn(req); name != "" {
		return con.render(c, http.StatusBadRequest, "login", "", view{Title: "Sign in",
			Error: fmt.Sprintf("the address carries %q: send the admin token in the form body (field token), never in the address, which logs and browser history keep", name)})
	}
	op, err := con.cfg.Gate.Check(ctx, req, req.PostFormValue("token"))
	var many *tenant.TooManyAttempts
	switch {
	case errors.As(err, &many):
		c.Response().Header().Set("Retry-After", strconv.Itoa(many.Seconds()))
		return con.render(c, http.StatusTooManyRequests, "login", "", view{Title: "Sign in", Error: fmt.Sprintf("too many wrong tokens from your address; wait %d seconds and try again", many.Seconds())})
	case errors.Is(err, tenant.ErrKeyExpired):
		return con.render(c, http.StatusUnauthorized, "login", "", view{Title: "Sign in", Error: "that key has expired; ask an operator for a new one"})
	case errors.Is(err, tenant.ErrWrongAdminToken):
		con.cfg.Logger.WarnContext(ctx, "console: wrong admin token", "client", con.cfg.Gate.Client(req))
		return con.render(c, http.StatusUnauthorized, "login", "", view{Title: "Sign in", Error: "that is not the admin token, nor an operator key"})
	case err != nil:
		return con.fail(c, "check admin token", err)
	}
	cookie, err := randomToken()
	if err != nil {
		return con.fail(c, "start session", err)
	}
	csrf, err := randomToken()
	if err != nil {
		return con.fail(c, "start session", err)
	}
	value, err := json.Marshal(sessionValue{CSRF: csrf, Key: op.KeyHash()})
	if err != nil {
		return con.fail(c, "start session", err)
	}
	if err := con.sessions.Put(ctx, sessionID(cookie), value); err != nil {
		return con.fail(c, "store session", err)
	}
	con.setCookie(c, cookie, con.cfg.SessionTTL)
	con.cfg.Logger.InfoContext(ctx, "console: signed in", "client", con.cfg.Gate.Client(req), "key", op.Name, "scope", op.Scope.String())
	return c.Redirect(http.StatusSeeOther, "/console/")
}

func (con *Console) logout(c echo.Context) error {
	if err := con.sessions.Delete(c.Request().Context(), sessionOf(c).id); err != nil {
		return con.fail(c, "end session", err)
	}
	con.setCookie(c, "", -time.Second)
	return con.redirect(c, "/console/")
}

// redirect sends the browser to path after a change: htmx follows HX-Redirect with a page
// load, a plain form post follows a 303.
func (con *Console) redirect(c echo.Context, path string) error {
	if fragmentFor(c) != "" {
		c.Response().Header().Set("HX-Redirect", path)
		return c.NoContent(http.StatusNoContent)
	}
	return c.Redirect(http.StatusSeeOther, path)
}
