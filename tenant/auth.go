package tenant

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/time/rate"

	"github.com/platform-dev/platform/gql"
)

// Why a token was refused. Each is wrapped by the error Verify returns; AuthStatus maps them
// to an HTTP status and a GraphQL error code.
var (
	ErrNoToken             = errors.New("a bearer token is required")
	ErrNoIdentityProvider  = errors.New("the project trusts no identity provider")
	ErrMalformedToken      = errors.New("malformed token")
	ErrDisallowedAlgorithm = errors.New("disallowed signing algorithm")
	ErrUnknownKey          = errors.New("unknown signing key")
	ErrBadSignature        = errors.New("bad signature")
	ErrTokenExpired        = errors.New("token expired")
	ErrTokenNotYetValid    = errors.New("token not yet valid")
	ErrWrongIssuer         = errors.New("wrong issuer")
	ErrWrongAudience       = errors.New("wrong audience")
	ErrMissingClaim        = errors.New("missing claim")
	// ErrUnsupportedCrit refuses a token whose header has "crit": RFC 7515 §4.1.11 makes a
	// JWS invalid for a recipient that does not understand the extensions it lists, and this
	// service understands none.
	ErrUnsupportedCrit = errors.New(`unsupported critical header ("crit")`)
	// ErrJWKSUnavailable means the identity provider's key set could not be fetched: the
	// token may well be valid, so the caller should retry rather than sign in again.
	ErrJWKSUnavailable = errors.New("the identity provider's key set (JWKS) cannot be fetched")
)

// AllowedAlgorithms are the signing algorithms a token may use: asymmetric ones only, so
// that neither "none" nor an HMAC keyed with a public key can pass.
var AllowedAlgorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// MaxTokenBytes bounds the bearer token a request may carry.
const MaxTokenBytes = 16 << 10

// MaxCachedTokenBytes bounds the tokens the verified-token cache keeps (TokenCacheSize).
const MaxCachedTokenBytes = 4 << 10

// maxJWKSBytes bounds a JWKS response; real key sets are a few kilobytes.
const maxJWKSBytes = 1 << 20

// VerifierConfig tunes token verification; zero values take the defaults.
type VerifierConfig struct {
	// Leeway is the clock skew allowed on exp, nbf and iat (0: the default, 30s; negative:
	// none).
	Leeway time.Duration
	// RefreshInterval is how often the JWKS is fetched in the background (default 15m).
	RefreshInterval time.Duration
	// UnknownKIDRefresh is the least time between two refreshes triggered by a token whose
	// kid is not in the key set (default 1m), so that strangers cannot make the service hammer
	// the identity provider.
	UnknownKIDRefresh time.Duration
	// RetryInterval is how long after a failed fetch the JWKS is fetched again, by the next
	// token that needs it (default 30s); the 503 answered meanwhile says in Retry-After how
	// long is left.
	RetryInterval time.Duration
	// FetchTimeout bounds one JWKS request, and how long a request waits for the key set
	// (default 10s; the registry keeps it within the GraphQL timeout): a hanging identity
	// provider gets 503 answered, never a request held past it.
	FetchTimeout time.Duration
	// Client fetches the JWKS (default: a client with FetchTimeout).
	Client *http.Client
	// Logger receives failed background refreshes (default slog.Default()).
	Logger *slog.Logger
	// TokenCacheSize is how many verified tokens are remembered across all projects
	// (default 10,000), so that a client sending the same token again costs a map lookup
	// instead of a signature check, and finds the guard its claims resolved before. The
	// cache holds the tokens themselves, those of at most MaxCachedTokenBytes (10,000 tokens
	// of 1 KB take 10 MB); a longer token is checked every time. A token is remembered while
	// its times (exp, nbf, iat, with Leeway) allow it, at most RefreshInterval, and only
	// until the project's key set changes: a key withdrawn from the JWKS stops working with
	// the fetch that sees it gone, as it would without the cache. Negative: nothing is
	// remembered, and every request checks its token and resolves its rules anew.
	TokenCacheSize int
}

func (c VerifierConfig) withDefaults() VerifierConfig {
	switch {
	case c.Leeway == 0:
		c.Leeway = 30 * time.Second
	case c.Leeway < 0:
		c.Leeway = 0
	}
	if c.RefreshInterval <= 0 {
		c.RefreshInterval = 15 * time.Minute
	}
	if c.UnknownKIDRefresh <= 0 {
		c.UnknownKIDRefresh = time.Minute
	}
	if c.RetryInterval <= 0 {
		c.RetryInterval = 30 * time.Second
	}
	if c.FetchTimeout <= 0 {
		c.FetchTimeout = 10 * time.Second
	}
	if c.Client == nil {
		c.Client = &http.Client{Timeout: c.FetchTimeout}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.TokenCacheSize == 0 {
		c.TokenCacheSize = 10_000
	}
	return c
}

// Verifiers holds the JWKS clients of all projects, one per project, so that a new version
// of a project keeps its predecessor's client (and cached keys) while its jwksURL stays the
// same.
type Verifiers struct {
	cfg  VerifierConfig
	mu   sync.Mutex
	sets map[string]*keySet // by project id
	// verified remembers tokens that passed, for all projects together so that its memory is
	// bounded whatever the number of projects (nil: off).
	verified *lru.Cache[verifiedKey, *verifiedToken]
	seq      atomic.Uint64 // numbers the verifiers, which key verified
}

// verifiedKey is a token that passed one verifier (one version of one project's settings).
// The token itself is the key, not a digest of it: a map hashes it far faster than SHA-256
// would (docs/performance.md, "Tokens"), and only the same bytes find it.
type verifiedKey struct {
	verifier uint64
	token    string
}

// verifiedToken is a token that passed, when it may be taken again without a check, and
// the guard its caller was given.
type verifiedToken struct {
	claims map[string]any
	// from and until are the times the parser accepts the token between: its nbf and iat
	// less the leeway, its exp plus the leeway (until also at most RefreshInterval after the
	// check).
	from, until time.Time
	// keys is the generation of the key set it was checked against (keySet.generation).
	keys uint64
	// guard is the caller's guard under the rules of the project version the verifier
	// belongs to (Rules.guardFor), made on first use: it keeps the filters it resolved from
	// the claims.
	guard atomic.Pointer[guard]
}

// usable reports whether the token may be taken without a check at now, against a key set
// of generation keys.
func (t *verifiedToken) usable(now time.Time, keys uint64) bool {
	return t.keys == keys && !now.Before(t.from) && now.Before(t.until)
}

// NewVerifiers returns an empty set of JWKS clients configured by cfg.
func NewVerifiers(cfg VerifierConfig) *Verifiers {
	vs := &Verifiers{cfg: cfg.withDefaults(), sets: map[string]*keySet{}}
	if vs.cfg.TokenCacheSize > 0 {
		vs.verified, _ = lru.New[verifiedKey, *verifiedToken](vs.cfg.TokenCacheSize) // fails only for a size <= 0
	}
	return vs
}

// For returns the verifier of a project whose auth settings are auth (nil: the project
// trusts no identity provider, and every token is refused). It shares the project's JWKS
// client when the jwksURL is unchanged, and closes the old client when it changed. The client
// starts on the first token, so a project nobody calls costs nothing.
func (vs *Verifiers) For(projectID string, auth *Auth) *Verifier {
	v := &Verifier{auth: auth, set: vs, project: projectID, id: vs.seq.Add(1)}
	vs.mu.Lock()
	defer vs.mu.Unlock()
	old := vs.sets[projectID]
	if auth == nil {
		if old != nil {
			old.close()
			delete(vs.sets, projectID)
		}
		return v
	}
	v.parser = jwt.NewParser(
		jwt.WithValidMethods(AllowedAlgorithms),
		jwt.WithIssuer(auth.Issuer),
		jwt.WithAudience(auth.Audience),
		jwt.WithLeeway(vs.cfg.Leeway),
		jwt.WithIssuedAt(),
		jwt.WithExpirationRequired(),
	)
	if old != nil && old.url == auth.JWKSURL {
		v.keys = old
		return v
	}
	if old != nil {
		old.close()
	}
	v.keys = &keySet{url: auth.JWKSURL, cfg: vs.cfg}
	vs.sets[projectID] = v.keys
	return v
}

// Close closes the project's JWKS client when this verifier's is still the current one: call
// it when the project is deleted or leaves the cache, not when a newer version replaces this
// one (the newer version shares the client). Requests still under way keep the keys already
// fetched. A nil Verifier may be closed.
func (v *Verifier) Close() {
	if v == nil || v.keys == nil {
		return
	}
	vs := v.set
	vs.mu.Lock()
	defer vs.mu.Unlock()
	if vs.sets[v.project] == v.keys {
		v.keys.close()
		delete(vs.sets, v.project)
	}
}

// Close closes every JWKS client, at shutdown.
func (vs *Verifiers) Close() {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	for id, ks := range vs.sets {
		ks.close()
		delete(vs.sets, id)
	}
}

// Verifier checks the ID tokens sent to one version of one project.
type Verifier struct {
	auth    *Auth
	parser  *jwt.Parser
	keys    *keySet // nil when auth is nil
	set     *Verifiers
	project string
	id      uint64
}

// Authenticate returns the verified claims of the request's bearer token, or nil claims and
// a nil error when the request carries no Authorization header: whether an anonymous caller
// may do something is for the access rules to say.
func (v *Verifier) Authenticate(r *http.Request) (map[string]any, error) {
	claims, _, err := v.authorization(r.Context(), r.Header.Get("Authorization"))
	return claims, err
}

// authorization verifies the value of an Authorization header ("Bearer <token>"; "" for an
// anonymous caller), wherever the client sent it.
func (v *Verifier) authorization(ctx context.Context, h string) (map[string]any, *verifiedToken, error) {
	if h == "" {
		return nil, nil, nil
	}
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return nil, nil, fmt.Errorf("%w: the Authorization header must be \"Bearer <token>\"", ErrMalformedToken)
	}
	return v.verify(ctx, strings.TrimSpace(token))
}

// Verify checks a token's signature, algorithm, issuer, audience and times, and returns its
// claims, which the caller must not modify (they may be shared with other requests sending
// the same token). The error wraps one of the Err* reasons above and never contains the
// token.
func (v *Verifier) Verify(ctx context.Context, token string) (map[string]any, error) {
	claims, _, err := v.verify(ctx, token)
	return claims, err
}

// verify is Verify, and also returns the token's entry in the verified-token cache (nil when
// it is not kept there).
func (v *Verifier) verify(ctx context.Context, token string) (map[string]any, *verifiedToken, error) {
	if v.auth == nil {
		return nil, nil, ErrNoIdentityProvider
	}
	if token == "" {
		return nil, nil, ErrNoToken
	}
	if len(token) > MaxTokenBytes {
		return nil, nil, fmt.Errorf("%w: longer than %d bytes", ErrMalformedToken, MaxTokenBytes)
	}
	cache := v.set.verified
	if len(token) > MaxCachedTokenBytes {
		cache = nil
	}
	key := verifiedKey{verifier: v.id, token: token}
	if cache != nil {
		if t, ok := cache.Get(key); ok && t.usable(time.Now(), v.keys.generation()) {
			return t.claims, t, nil
		}
	}
	// The wait for keys, and a fetch this request makes, end with the request or within
	// FetchTimeout, whichever comes first.
	ctx, cancel := context.WithTimeout(ctx, v.set.cfg.FetchTimeout)
	defer cancel()
	kf, err := v.keys.keyfunc(ctx)
	if err != nil {
		return nil, nil, err
	}
	// Read before the check: a key set replaced during it makes the token's entry stale,
	// never an entry that a withdrawn key vouches for.
	keys := v.keys.generation()
	claims := jwt.MapClaims{}
	keyOf := kf.KeyfuncCtx(ctx)
	tok, err := v.parser.ParseWithClaims(token, claims, func(t *jwt.Token) (any, error) {
		// Refused before any key is looked up, so such a token never triggers a fetch.
		if _, ok := t.Header["crit"]; ok {
			return nil, ErrUnsupportedCrit
		}
		return keyOf(t)
	})
	if err != nil {
		return nil, nil, v.classify(tok, err)
	}
	if sub, _ := claims["sub"].(string); sub == "" {
		return nil, nil, fmt.Errorf("%w: the token has no sub", ErrMissingClaim)
	}
	if cache == nil {
		return claims, nil, nil
	}
	t := v.remembered(claims, keys)
	cache.Add(key, t)
	return claims, t, nil
}

// remembered is the cache entry of a token the parser accepted with claims, checked against
// the key set of generation keys: usable while the parser, with the same leeway, would
// accept its times.
func (v *Verifier) remembered(claims jwt.MapClaims, keys uint64) *verifiedToken {
	leeway := v.set.cfg.Leeway
	t := &verifiedToken{claims: claims, keys: keys}
	// The parser required exp and checked that each of these times, when present, is one.
	exp, _ := claims.GetExpirationTime()
	t.until = exp.Add(leeway)
	if limit := time.Now().Add(v.set.cfg.RefreshInterval); limit.Before(t.until) {
		t.until = limit
	}
	for _, get := range []func() (*jwt.NumericDate, error){claims.GetNotBefore, claims.GetIssuedAt} {
		if d, _ := get(); d != nil && d.Add(-leeway).After(t.from) {
			t.from = d.Add(-leeway)
		}
	}
	return t
}

// classify turns the JWT library's error into one of the reasons, in the order the checks
// matter to the caller.
func (v *Verifier) classify(tok *jwt.Token, err error) error {
	switch {
	case errors.Is(err, jwt.ErrTokenMalformed):
		return fmt.Errorf("%w: %v", ErrMalformedToken, rootCause(err))
	case errors.Is(err, ErrUnsupportedCrit):
		return fmt.Errorf("%w: this service understands no JWS extension, so it refuses every token that names one as critical", ErrUnsupportedCrit)
	case tok == nil || tok.Method == nil || !slices.Contains(AllowedAlgorithms, tok.Method.Alg()):
		alg, _ := tokenHeader(tok, "alg")
		return fmt.Errorf("%w %q: use one of %s", ErrDisallowedAlgorithm, alg, strings.Join(AllowedAlgorithms, ", "))
	case errors.Is(err, jwt.ErrTokenUnverifiable):
		kid, _ := tokenHeader(tok, "kid")
		if ferr := v.keys.fetchError(); ferr != nil {
			return v.keys.unavailable(ferr)
		}
		return fmt.Errorf("%w: no key with kid %q in the JWKS at %s", ErrUnknownKey, kid, v.keys.url)
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		return ErrBadSignature
	case errors.Is(err, jwt.ErrTokenExpired):
		return fmt.Errorf("%w: exp is in the past", ErrTokenExpired)
	case errors.Is(err, jwt.ErrTokenNotValidYet):
		return fmt.Errorf("%w: nbf is in the future", ErrTokenNotYetValid)
	case errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return fmt.Errorf("%w: iat is in the future", ErrTokenNotYetValid)
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return fmt.Errorf("%w: want iss %q", ErrWrongIssuer, v.auth.Issuer)
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return fmt.Errorf("%w: want aud to contain %q", ErrWrongAudience, v.auth.Audience)
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return fmt.Errorf("%w: %v", ErrMissingClaim, rootCause(err))
	}
	return fmt.Errorf("%w: %v", ErrMalformedToken, rootCause(err))
}

func tokenHeader(tok *jwt.Token, name string) (string, bool) {
	if tok == nil {
		return "", false
	}
	s, ok := tok.Header[name].(string)
	return s, ok
}

// rootCause is the innermost message of a JWT library error, which says what was wrong
// without the library's prefixes (and never includes the token itself).
func rootCause(err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		return msg[i+2:]
	}
	return msg
}

// keySet is the JWKS client of one jwksURL, created on first use.
type keySet struct {
	url string
	cfg VerifierConfig

	mu     sync.Mutex
	closed bool
	cancel context.CancelFunc
	// ready is closed once the client is built and its first fetch has ended (nil: not
	// started), by firstBy at the latest; kf and startErr are set before.
	ready    chan struct{}
	firstBy  time.Time
	kf       keyfunc.Keyfunc
	startErr error
	// lastErr holds the error of the latest fetch, nil after a successful one.
	lastErr atomic.Pointer[error]
	// nextFetch is the earliest time a token may make the client fetch the key set again:
	// UnknownKIDRefresh after the last such fetch began, RetryInterval after a failed one.
	fetchMu   sync.Mutex
	nextFetch time.Time
	// gen counts the changes of the fetched keys (generation); sum is their fingerprint.
	gen   atomic.Uint64
	sumMu sync.Mutex
	sum   [sha256.Size]byte
	// status is what the operator sees of the fetches (JWKSStatus); written by every fetch.
	statusMu sync.Mutex
	status   JWKSStatus
}

// JWKSStatus is what a project's JWKS client has fetched: the operator console shows it.
type JWKSStatus struct {
	// Started is false until the first token to verify starts the client (nothing fetched).
	Started bool
	// Keys is how many keys the latest successful fetch returned.
	Keys int
	// LastRefresh is when the key set was last fetched successfully (zero: never).
	LastRefresh time.Time
	// LastError is why the latest failed fetch failed (empty: none failed), at LastErrorAt;
	// it stays after a later success, which LastRefresh being after LastErrorAt shows.
	LastError   string
	LastErrorAt time.Time
}

// JWKSStatus returns the state of the verifier's JWKS client; the zero status when the
// project trusts no identity provider.
func (v *Verifier) JWKSStatus() JWKSStatus {
	if v == nil || v.keys == nil {
		return JWKSStatus{}
	}
	k := v.keys
	k.statusMu.Lock()
	defer k.statusMu.Unlock()
	return k.status
}

// fetched records the outcome of one fetch of the key set: keys on success, else err.
func (k *keySet) fetched(keys int, err error) {
	if err == nil {
		k.lastErr.Store(nil)
	} else {
		k.lastErr.Store(&err)
		k.fetchMu.Lock()
		k.nextFetch = time.Now().Add(k.cfg.RetryInterval)
		k.fetchMu.Unlock()
	}
	k.statusMu.Lock()
	defer k.statusMu.Unlock()
	if err != nil {
		k.status.LastError, k.status.LastErrorAt = err.Error(), time.Now()
		return
	}
	k.status.Keys, k.status.LastRefresh = keys, time.Now()
}

// generation numbers the contents of the key set: it changes whenever a fetch finds keys
// other than the last one's, and a token checked against an older generation must be checked
// again. Zero before the first fetch.
func (k *keySet) generation() uint64 { return k.gen.Load() }

// replaced notes the keys a fetch stored (after they are stored, so that whoever reads the
// new generation finds the new keys).
func (k *keySet) replaced(keys []jwkset.JWK) {
	h := sha256.New()
	changed := false
	for _, key := range keys {
		js, err := json.Marshal(key.Marshal())
		// A key that cannot be written out cannot be compared: a change, which costs checks.
		changed = changed || err != nil
		h.Write(js)
		h.Write([]byte{0})
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	k.sumMu.Lock()
	defer k.sumMu.Unlock()
	// The zero sum is no set's: the first fetch is a change.
	if changed || sum != k.sum {
		k.sum = sum
		k.gen.Add(1)
	}
}

func (k *keySet) close() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.closed = true
	if k.cancel != nil {
		k.cancel()
	}
}

func (k *keySet) fetchError() error {
	if p := k.lastErr.Load(); p != nil {
		return *p
	}
	return nil
}

// keyfunc returns the JWKS client, starting it on first use. The first fetch happens then,
// in the background, and requests wait for it as long as ctx lets them: a JWKS that cannot be
// fetched fails them with ErrJWKSUnavailable, and one that hangs fails them when ctx ends.
// The client is kept all the same, and fetches again in the background and on unknown kids
// (refetch). A client started after close (by a request to a project version just replaced)
// gets no background refresh, so nothing outlives the project.
func (k *keySet) keyfunc(ctx context.Context) (keyfunc.Keyfunc, error) {
	k.mu.Lock()
	if k.ready == nil {
		k.start()
	}
	ready := k.ready
	k.mu.Unlock()
	select {
	case <-ready:
	case <-ctx.Done():
		return nil, k.unavailable(fmt.Errorf("no answer within the wait of this request (at most %s)", k.cfg.FetchTimeout))
	}
	if k.startErr != nil {
		return nil, k.startErr
	}
	return k.kf, nil
}

// start builds the client in the background; k.mu is held.
func (k *keySet) start() {
	k.statusMu.Lock()
	k.status.Started = true
	k.statusMu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	k.cancel = cancel
	k.ready = make(chan struct{})
	k.firstBy = time.Now().Add(k.cfg.FetchTimeout)
	refresh := k.cfg.RefreshInterval
	if k.closed {
		refresh = 0
	}
	go func() {
		defer close(k.ready)
		k.kf, k.startErr = k.build(ctx, refresh)
	}()
}

// build makes the client of the key set and fetches it a first time.
func (k *keySet) build(ctx context.Context, refresh time.Duration) (keyfunc.Keyfunc, error) {
	client := &http.Client{
		Transport: limitedBody{next: transportOf(k.cfg.Client), limit: maxJWKSBytes},
		Timeout:   k.cfg.Client.Timeout,
	}
	local := &fetchTracker{Storage: jwkset.NewMemoryStorage(), set: k}
	remote, err := jwkset.NewStorageFromHTTP(k.url, jwkset.HTTPClientStorageOptions{
		Client:                    client,
		Ctx:                       ctx,
		HTTPTimeout:               k.cfg.FetchTimeout,
		NoErrorReturnFirstHTTPReq: true,
		RefreshErrorHandler: func(ctx context.Context, err error) {
			k.fetched(0, err)
			k.cfg.Logger.WarnContext(ctx, "fetch JWKS", "url", k.url, "err", err)
		},
		RefreshInterval: refresh,
		Storage:         local,
	})
	if err != nil {
		k.fetched(0, err)
		return nil, k.unavailable(err)
	}
	// The library fetches again for every kid it lacks that its limiter lets through: the
	// limiter here lets all through, since refetch decides, without making a request wait.
	// The wait bounds the fetch.
	remote, err = jwkset.NewHTTPClient(jwkset.HTTPClientOptions{
		HTTPURLs:          map[string]jwkset.Storage{k.url: remote},
		RateLimitWaitMax:  k.cfg.FetchTimeout,
		RefreshUnknownKID: rate.NewLimiter(rate.Inf, 1),
	})
	if err != nil {
		return nil, fmt.Errorf("JWKS client for %s: %w", k.url, err)
	}
	kf, err := keyfunc.New(keyfunc.Options{Ctx: ctx, Storage: refetch{Storage: remote, local: local, set: k}})
	if err != nil {
		return nil, fmt.Errorf("JWKS client for %s: %w", k.url, err)
	}
	return kf, nil
}

// unavailable is ErrJWKSUnavailable for the reason err, with the time until the key set
// will next be fetched.
func (k *keySet) unavailable(err error) error {
	return &jwksUnavailable{
		err:        fmt.Errorf("%w from %s: %v", ErrJWKSUnavailable, k.url, err),
		retryAfter: k.retryAfter(time.Now()),
	}
}

// retryAfter is how long after now a request may find the key set fetched anew: the end of
// the first fetch while it is under way, else the time a token may make the client fetch
// again.
func (k *keySet) retryAfter(now time.Time) time.Duration {
	k.mu.Lock()
	first, ready := k.firstBy, k.ready
	k.mu.Unlock()
	select {
	case <-ready:
	default:
		return first.Sub(now)
	}
	k.fetchMu.Lock()
	defer k.fetchMu.Unlock()
	return k.nextFetch.Sub(now)
}

// mayFetch reports whether a token whose kid the key set lacks may make the client fetch it
// again at now, and if so counts that fetch.
func (k *keySet) mayFetch(now time.Time) bool {
	k.fetchMu.Lock()
	defer k.fetchMu.Unlock()
	if now.Before(k.nextFetch) {
		return false
	}
	k.nextFetch = now.Add(k.cfg.UnknownKIDRefresh)
	return true
}

// refetch looks a kid up in the fetched keys, and fetches the key set again for a kid it
// lacks when the key set allows (mayFetch): at most once per UnknownKIDRefresh, so that
// strangers cannot make the service hammer the identity provider, and RetryInterval after a
// failed fetch. A kid refused meanwhile is refused at once.
type refetch struct {
	jwkset.Storage
	local jwkset.Storage
	set   *keySet
}

func (r refetch) KeyRead(ctx context.Context, kid string) (jwkset.JWK, error) {
	jwk, err := r.local.KeyRead(ctx, kid)
	if !errors.Is(err, jwkset.ErrKeyNotFound) || !r.set.mayFetch(time.Now()) {
		return jwk, err
	}
	return r.Storage.KeyRead(ctx, kid)
}

// jwksUnavailable is an ErrJWKSUnavailable and when to try again.
type jwksUnavailable struct {
	err        error
	retryAfter time.Duration
}

func (e *jwksUnavailable) Error() string { return e.err.Error() }
func (e *jwksUnavailable) Unwrap() error { return e.err }

// RetryAfter is the time until the key set will be fetched again, at least a second; a
// WebSocket's connection_init refused for it closes with Try Again Later (gql).
func (e *jwksUnavailable) RetryAfter() time.Duration { return max(e.retryAfter, time.Second) }

// retryAfterSeconds is what Retry-After should say about an error of Verify or Authenticate
// answered 503: the whole seconds until the identity provider's keys will be fetched again,
// at least 1.
func retryAfterSeconds(err error) int {
	var u *jwksUnavailable
	if !errors.As(err, &u) {
		return 1
	}
	return int(math.Ceil(u.RetryAfter().Seconds()))
}

// fetchTracker notes successful fetches: the JWKS library reports failures through its error
// handler but successes only by replacing the stored keys (on every fetch, the first, the
// background refreshes and those an unknown kid triggers).
type fetchTracker struct {
	jwkset.Storage
	set *keySet
}

func (f *fetchTracker) KeyReplaceAll(ctx context.Context, given []jwkset.JWK) error {
	if err := f.Storage.KeyReplaceAll(ctx, given); err != nil {
		return err
	}
	f.set.replaced(given)
	f.set.fetched(len(given), nil)
	return nil
}

func transportOf(c *http.Client) http.RoundTripper {
	if c.Transport != nil {
		return c.Transport
	}
	return http.DefaultTransport
}

// limitedBody cuts response bodies at limit bytes, so a misbehaving JWKS endpoint cannot make
// the service read without end; a cut document fails to decode.
type limitedBody struct {
	next  http.RoundTripper
	limit int64
}

func (l limitedBody) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := l.next.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.LimitReader(resp.Body, l.limit), resp.Body}
	return resp, nil
}

// AuthErrorStatus maps an error of Verify or Authenticate to the HTTP status, the error code
// and a short machine-readable reason ("expired", "wrong_audience", ...).
func AuthErrorStatus(err error) (status int, code, reason string) {
	reasons := []struct {
		err    error
		reason string
	}{
		{ErrNoToken, "no_token"},
		{ErrNoIdentityProvider, "no_identity_provider"},
		{ErrMalformedToken, "malformed"},
		{ErrDisallowedAlgorithm, "disallowed_algorithm"},
		{ErrUnknownKey, "unknown_key"},
		{ErrBadSignature, "bad_signature"},
		{ErrTokenExpired, "expired"},
		{ErrTokenNotYetValid, "not_yet_valid"},
		{ErrWrongIssuer, "wrong_issuer"},
		{ErrWrongAudience, "wrong_audience"},
		{ErrMissingClaim, "missing_claim"},
		{ErrUnsupportedCrit, "unsupported_crit"},
	}
	if errors.Is(err, ErrJWKSUnavailable) {
		return http.StatusServiceUnavailable, CodeIdentityProviderUnavailable, "jwks_unavailable"
	}
	for _, r := range reasons {
		if errors.Is(err, r.err) {
			return http.StatusUnauthorized, CodeUnauthenticated, r.reason
		}
	}
	return http.StatusInternalServerError, CodeInternal, "internal"
}

// Protect authenticates each request to next (a project's GraphQL API) with v and attaches
// the gql.Guard that rules make of the caller's claims. A token that fails verification is
// answered 401 (503 when the identity provider's keys cannot be fetched), and so is a request
// without a token when no rule of the project lets anonymous callers through.
func Protect(v *Verifier, rules *Rules, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g, ok := guardOf(w, r, v, rules); ok {
			next.ServeHTTP(w, r.WithContext(gql.WithGuard(r.Context(), g)))
		}
	})
}

// guardOf is the guard of the caller of r, as Protect says; false when it has answered r
// with the reason it refuses the caller.
func guardOf(w http.ResponseWriter, r *http.Request, v *Verifier, rules *Rules) (gql.Guard, bool) {
	// The API answers a method other than GET and POST with 405 before reading anything; that
	// answer should not depend on the token, but it still gets a guard, never none.
	// A GET without a document runs nothing (it gets the explorer's page or a 400), so a
	// browser opens the explorer before it has a token; one that names a persisted document
	// (documentId, or extensions' persistedQuery) runs it.
	if r.Method == http.MethodPost || (r.Method == http.MethodGet && namesDocument(r.URL.Query())) {
		return tokenGuard(w, r, v, rules)
	}
	return rules.Guard(nil), true
}

// tokenGuard is the guard of the caller r's token names (none: an anonymous caller, when the
// rules let one in); false once it has answered a token it refuses.
func tokenGuard(w http.ResponseWriter, r *http.Request, v *Verifier, rules *Rules) (gql.Guard, bool) {
	claims, entry, err := v.authorization(r.Context(), r.Header.Get("Authorization"))
	if err == nil && claims == nil && rules.NeedsToken() {
		err = fmt.Errorf("%w: send Authorization: Bearer <token>", ErrNoToken)
	}
	if err != nil {
		writeAuthError(w, err)
		return nil, false
	}
	// Only a verified token names its caller's guard.
	return rules.guardFor(entry, claims), true
}

// namesDocument reports whether a GET's parameters name a document to run.
func namesDocument(params url.Values) bool {
	return params.Has("query") || params.Has("documentId") || params.Has("extensions")
}

func writeAuthError(w http.ResponseWriter, err error) {
	status, code, reason := AuthErrorStatus(err)
	msg := err.Error()
	if status == http.StatusUnauthorized {
		// RFC 6750: tell the client which scheme, and why; quotes would break the header.
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", error_description=`+strconv.Quote(strings.ReplaceAll(msg, `"`, "'")))
	}
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds(err)))
	}
	ext := map[string]any{"reason": reason}
	// As in WriteError: the id Echo's RequestID middleware put on the response.
	if id := w.Header().Get("X-Request-Id"); id != "" {
		ext["requestId"] = id
	}
	gql.WriteError(w, status, code, msg, ext)
}
