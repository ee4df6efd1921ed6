package tenant

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/redis/go-redis/v9"

	"github.com/platform-dev/platform/coord"
	"github.com/platform-dev/platform/store"
)

// ErrWrongAdminToken is the refusal of a token that is neither the admin token nor a key.
var ErrWrongAdminToken = errors.New("not the admin token nor an operator key")

// TooManyAttempts refuses a client that has spent its wrong tokens, right token or not,
// until RetryAfter has passed.
type TooManyAttempts struct{ RetryAfter time.Duration }

func (e *TooManyAttempts) Error() string {
	return fmt.Sprintf("too many wrong admin tokens from this address; retry after %d s", e.Seconds())
}

// Seconds is RetryAfter rounded up, as Retry-After carries it.
func (e *TooManyAttempts) Seconds() int { return int(math.Ceil(e.RetryAfter.Seconds())) }

// AdminGateConfig is what an AdminGate needs.
type AdminGateConfig struct {
	Token string
	// Redis counts wrong tokens, so the count holds across replicas.
	Redis *redis.Client
	// AttemptsPerMinute is how many wrong tokens one client may send per minute (5 when zero).
	AttemptsPerMinute int
	// ClientIP names the client of a request (echo.IPExtractor); nil takes the TCP peer,
	// never X-Forwarded-For, which any client can write.
	ClientIP echo.IPExtractor
	// Keys are the operators' keys besides the token; nil admits the token alone.
	Keys   *store.Keys
	Logger *slog.Logger
}

// AdminGate checks the admin token wherever it opens something: the admin API and the
// console's sign-in. Wrong tokens are counted per client through both doors together, so
// guessing costs the same whichever door a guesser uses.
type AdminGate struct {
	token    []byte
	rates    *coord.Rates
	rate     coord.Rate
	clientIP echo.IPExtractor
	keys     *keyCache
}

// NewAdminGate returns the gate of cfg.Token.
func NewAdminGate(cfg AdminGateConfig) (*AdminGate, error) {
	if cfg.Token == "" || cfg.Redis == nil {
		return nil, errors.New("admin gate: Token and Redis are required")
	}
	if cfg.AttemptsPerMinute <= 0 {
		cfg.AttemptsPerMinute = 5
	}
	if cfg.ClientIP == nil {
		cfg.ClientIP = peerIP
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	n := cfg.AttemptsPerMinute
	return &AdminGate{
		token:    []byte(cfg.Token),
		rates:    coord.NewRates(cfg.Redis),
		rate:     coord.Rate{N: n, Period: time.Minute},
		clientIP: cfg.ClientIP,
		keys:     newKeyCache(cfg.Token, cfg.Keys, cfg.Logger),
	}, nil
}

// Client names the client of r as the gate counts it.
func (g *AdminGate) Client(r *http.Request) string { return g.clientIP(r) }

// Check answers the operator of the admin token or of a key, ErrWrongAdminToken for
// another token (and counts it against the client), and *TooManyAttempts once the client
// has spent its attempts.
func (g *AdminGate) Check(ctx context.Context, r *http.Request, token string) (*Operator, error) {
	key := coord.WrongAdminToken(g.clientIP(r))
	left, err := g.rates.Allow(ctx, key, g.rate, 0)
	if err != nil {
		return nil, fmt.Errorf("check admin token attempts: %w", err)
	}
	if left.Remaining < 1 {
		return nil, &TooManyAttempts{RetryAfter: g.rate.Period / time.Duration(g.rate.N)}
	}
	if token != "" && subtle.ConstantTimeCompare([]byte(token), g.token) == 1 {
		return g.keys.bootstrap, nil
	}
	op, err := g.keys.lookup(ctx, hashKey(token))
	if !errors.Is(err, ErrWrongAdminToken) {
		return op, err
	}
	if _, err := g.rates.Allow(ctx, key, g.rate, 1); err != nil {
		return nil, fmt.Errorf("count wrong admin token: %w", err)
	}
	return nil, err
}

// Recheck answers the operator whose key hash is, as Check would for the key itself:
// ErrWrongAdminToken once the key is revoked or expired. A console session asks at every
// request, so that revoking a key ends the sessions it opened.
func (g *AdminGate) Recheck(ctx context.Context, hash string) (*Operator, error) {
	if hash == g.keys.bootstrap.hash {
		return g.keys.bootstrap, nil
	}
	return g.keys.lookup(ctx, hash)
}

// peerIP is the address of the TCP peer.
func peerIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
