package tenant

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"sync"
	"time"

	"github.com/platform-dev/platform/store"
)

const (
	// keyPrefix marks operator keys, so that secret scanners and people recognise one.
	keyPrefix = "pk_"
	// keyCacheTTL bounds how long a replica trusts a key it verified: a key revoked on one
	// replica is refused by every other within that time, without a message between them.
	keyCacheTTL = 500 * time.Millisecond
	// touchEvery is how often a key's last use is written: at most one write a minute per
	// key and replica, however busy the key.
	touchEvery = time.Minute
	// BootstrapName is the name the admin token goes by in the audit log.
	BootstrapName = "bootstrap"
)

// hashKey is how keys are stored and looked up. A key is 32 random bytes, so one SHA-256
// is enough: a slow hash (bcrypt) defends guessable passwords against a stolen database,
// and a 256-bit random key cannot be guessed from its hash however fast the hash; a slow
// hash would only cost every admin request tens of milliseconds.
func hashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// keyCache verifies keys against the control database, remembering each verified one for
// keyCacheTTL, and writes when a key was last used.
type keyCache struct {
	bootstrap *Operator
	keys      *store.Keys
	logger    *slog.Logger

	mu      sync.Mutex
	known   map[string]cachedKey // by hash
	touched map[string]time.Time // by key name: when this replica last wrote its last use
}

type cachedKey struct {
	op      *Operator
	expires time.Time // the key's own expiry (zero: none)
	until   time.Time // when to look it up again
}

func newKeyCache(token string, keys *store.Keys, logger *slog.Logger) *keyCache {
	return &keyCache{
		bootstrap: &Operator{Name: BootstrapName, Scope: Scope{Change: true}, hash: hashKey(token)},
		keys:      keys, logger: logger,
		known: map[string]cachedKey{}, touched: map[string]time.Time{},
	}
}

// ErrKeyExpired is a key past its expiry; it is also ErrWrongAdminToken.
var ErrKeyExpired = fmt.Errorf("%w: the key has expired", ErrWrongAdminToken)

func (kc *keyCache) lookup(ctx context.Context, hash string) (*Operator, error) {
	if kc.keys == nil {
		return nil, ErrWrongAdminToken
	}
	now := time.Now()
	kc.mu.Lock()
	c, ok := kc.known[hash]
	kc.mu.Unlock()
	if !ok || now.After(c.until) {
		k, err := kc.keys.ByHash(ctx, hash)
		if errors.Is(err, store.ErrNotFound) {
			return nil, ErrWrongAdminToken
		}
		if err != nil {
			return nil, fmt.Errorf("check operator key: %w", err)
		}
		scope, err := ParseScope(k.Scope)
		if err != nil {
			return nil, fmt.Errorf("operator key %q: %w", k.Name, err)
		}
		c = cachedKey{op: &Operator{Name: k.Name, Scope: scope, hash: hash}, expires: k.ExpiresAt, until: now.Add(keyCacheTTL)}
		kc.mu.Lock()
		for h, old := range kc.known {
			if now.After(old.until) {
				delete(kc.known, h)
			}
		}
		kc.known[hash] = c
		kc.mu.Unlock()
	}
	if !c.expires.IsZero() && now.After(c.expires) {
		return nil, ErrKeyExpired
	}
	kc.touch(ctx, c.op.Name, now)
	return c.op, nil
}

// touch writes the key's last use, at most once per touchEvery. A failed write is logged,
// not answered: the request does not depend on it.
func (kc *keyCache) touch(ctx context.Context, name string, now time.Time) {
	kc.mu.Lock()
	due := now.Sub(kc.touched[name]) >= touchEvery
	if due {
		kc.touched[name] = now
	}
	kc.mu.Unlock()
	if !due {
		return
	}
	if err := kc.keys.Touch(ctx, name, now.UTC().Truncate(time.Millisecond)); err != nil {
		kc.logger.WarnContext(ctx, "operator key: last use not written", "key", name, "err", err)
	}
}

// NewKey is a key as its creation answers it: the only time the key itself is shown.
type NewKey struct {
	KeyInfo
	Key string `json:"key"`
}

// KeyInfo is a key as the list shows it: never the key.
type KeyInfo struct {
	Name      string `json:"name"`
	Scope     string `json:"scope"`
	CreatedAt string `json:"createdAt"`
	ExpiresAt string `json:"expiresAt,omitempty"`
	LastUsed  string `json:"lastUsed,omitempty"`
}

func keyInfo(k store.StoredKey) KeyInfo {
	stamp := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format(store.TimeLayout)
	}
	return KeyInfo{Name: k.Name, Scope: k.Scope, CreatedAt: stamp(k.CreatedAt), ExpiresAt: stamp(k.ExpiresAt), LastUsed: stamp(k.LastUsed)}
}

var keyName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`)

// KeyError is a key request that cannot be met as asked: a name or scope that is not valid.
type KeyError struct{ Reason string }

func (e *KeyError) Error() string { return e.Reason }

// ErrKeyNotFound is a revocation of a key that does not exist.
var ErrKeyNotFound = errors.New("no key of that name")

// CreateKey makes a key named name with scope, expiring after ttl (never when zero), and
// answers it: the key is shown this once and stored only as its hash. *KeyError for a name
// or scope that is not valid, store.ErrKeyExists for a name taken.
func (r *Registry) CreateKey(ctx context.Context, name, scope string, ttl time.Duration) (*NewKey, error) {
	if !keyName.MatchString(name) || name == BootstrapName {
		return nil, &KeyError{Reason: fmt.Sprintf("key name %q: want 1 to 63 lowercase letters, digits, '.', '_' or '-', starting with a letter or digit, and not %q", name, BootstrapName)}
	}
	sc, err := ParseScope(scope)
	if err != nil {
		return nil, &KeyError{Reason: err.Error()}
	}
	if ttl < 0 {
		return nil, &KeyError{Reason: "expiry: want a positive duration (720h), or none"}
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("create key %q: %w", name, err)
	}
	key := keyPrefix + base64.RawURLEncoding.EncodeToString(b)
	now := time.Now().UTC().Truncate(time.Millisecond)
	k := store.StoredKey{Name: name, Scope: sc.String(), Hash: hashKey(key), CreatedAt: now}
	if ttl > 0 {
		k.ExpiresAt = now.Add(ttl)
	}
	if err := r.stores.Keys().Add(ctx, k); err != nil {
		return nil, err
	}
	return &NewKey{KeyInfo: keyInfo(k), Key: key}, nil
}

// Keys lists the operator keys, ordered by name.
func (r *Registry) Keys(ctx context.Context) ([]KeyInfo, error) {
	ks, err := r.stores.Keys().List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]KeyInfo, len(ks))
	for i, k := range ks {
		out[i] = keyInfo(k)
	}
	return out, nil
}

// RevokeKey removes the key named name: every replica refuses it within keyCacheTTL.
// ErrKeyNotFound.
func (r *Registry) RevokeKey(ctx context.Context, name string) (KeyInfo, error) {
	k, err := r.stores.Keys().Remove(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return KeyInfo{}, fmt.Errorf("%w: %q", ErrKeyNotFound, name)
	}
	if err != nil {
		return KeyInfo{}, err
	}
	return keyInfo(*k), nil
}
