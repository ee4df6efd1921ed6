package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/platform-dev/platform/tenant"
)

// devTokenTTL is the lifetime of a token minted here: long enough to try the API by hand.
const devTokenTTL = time.Hour

// identityView shows whom a project trusts and whether its keys can be fetched now.
type identityView struct {
	Project string
	Auth    *tenant.Auth
	Keys    []string // "kid (alg)" of each key the JWKS holds
	Fetch   string   // how the fetch went, or why it failed
	Took    string
	// Verifier is the state of the JWKS client that verifies the project's tokens; nil when
	// the project could not be made ready (VerifierErr says why).
	Verifier    *tenant.JWKSStatus
	VerifierErr string
	// Dev is set when the project trusts this server's development issuer, which can mint.
	Dev   bool
	Token string // a minted token, shown once
	Sub   string
	Error string
}

func (con *Console) identity(c echo.Context) error {
	v, err := con.identityOf(c)
	if err != nil {
		return con.projectFailed(c, err)
	}
	return con.render(c, http.StatusOK, "identity", "", view{Title: "Identity · " + v.Project, Data: v})
}

func (con *Console) identityOf(c echo.Context) (*identityView, error) {
	p, err := con.cfg.Registry.Get(c.Request().Context(), c.Param("id"))
	if err != nil {
		return nil, err
	}
	v := &identityView{Project: p.ID, Auth: p.Auth}
	if p.Auth == nil {
		return v, nil
	}
	v.Dev = con.cfg.DevIssuer != nil && p.Auth.Issuer == tenant.DevIssuerName
	if rt, err := con.cfg.Registry.Runtime(c.Request().Context(), p.ID); err != nil {
		v.VerifierErr = err.Error()
	} else {
		st := rt.Verifier.JWKSStatus()
		v.Verifier = &st
	}
	start := time.Now()
	v.Keys, err = fetchKeys(c.Request().Context(), p.Auth.JWKSURL)
	v.Took = time.Since(start).Round(time.Millisecond).String()
	if err != nil {
		v.Fetch = err.Error()
	} else {
		v.Fetch = fmt.Sprintf("ok: %d keys", len(v.Keys))
	}
	return v, nil
}

// fetchKeys reads a JWKS now, as the verifier would, and names its keys.
func fetchKeys(ctx context.Context, url string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("JWKS URL: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetch JWKS: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetch JWKS: %s", resp.Status)
	}
	var set struct {
		Keys []struct {
			Kid, Alg, Kty string
		} `json:"keys"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&set); err != nil {
		return nil, fmt.Errorf("JWKS is not a JSON key set: %w", err)
	}
	keys := make([]string, len(set.Keys))
	for i, k := range set.Keys {
		keys[i] = strings.TrimSpace(fmt.Sprintf("%s %s %s", k.Kid, k.Kty, k.Alg))
	}
	return keys, nil
}

// mintToken signs a development token for the posted subject; only projects that trust the
// development issuer get one.
func (con *Console) mintToken(c echo.Context) error {
	v, err := con.identityOf(c)
	if err != nil {
		return con.projectFailed(c, err)
	}
	v.Sub = strings.TrimSpace(c.FormValue("sub"))
	if !v.Dev {
		v.Error = "project " + v.Project + " does not trust this server's development issuer; its tokens come from " + issuerOf(v.Auth)
		return con.render(c, http.StatusUnprocessableEntity, "identity", "minted", view{Data: v})
	}
	if v.Token, err = con.cfg.DevIssuer.Mint(v.Project, v.Sub, devTokenTTL, nil); err != nil {
		v.Error = err.Error()
		return con.render(c, http.StatusUnprocessableEntity, "identity", "minted", view{Data: v})
	}
	return con.render(c, http.StatusOK, "identity", "minted", view{Data: v})
}

func issuerOf(a *tenant.Auth) string {
	if a == nil {
		return "nowhere (the project has no auth settings)"
	}
	return a.Issuer
}

// projectFailed answers a request whose project could not be read.
func (con *Console) projectFailed(c echo.Context, err error) error {
	if errors.Is(err, tenant.ErrProjectNotFound) {
		return con.render(c, http.StatusNotFound, "error", fragmentFor(c), view{Title: "Not found", Error: "project " + c.Param("id") + " does not exist"})
	}
	return con.fail(c, "read project", err)
}
