package tenant

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/golang-jwt/jwt/v5"

	"github.com/platform-dev/platform/store"
)

// The development issuer signs tokens for local work without an identity provider. Its
// issuer name is fixed, so that `platform token` and `platform serve` agree without talking to
// each other; the key in the data folder is what makes its tokens trusted by one deployment
// only. Its audience convention is the project id.
const (
	DevIssuerName = "urn:platform:dev-issuer"
	// DevIssuerJWKSPath is where the apex host serves the development issuer's keys.
	DevIssuerJWKSPath = "/.well-known/jwks.json"
	// DevIssuerKeyFile is the key's file name in the data folder.
	DevIssuerKeyFile = "dev-issuer-key.pem"
	// MaxDevTokenTTL bounds the lifetime of a development token.
	MaxDevTokenTTL = 30 * 24 * time.Hour
)

// DevIssuer is the development issuer: an ES256 key kept in the data folder.
type DevIssuer struct {
	key  *ecdsa.PrivateKey
	kid  string
	jwks []byte
}

// OpenDevIssuer loads the development issuer's key from dataDir, creating it (mode 0600) on
// first use, as serve does. Two processes starting at once agree on one key.
func OpenDevIssuer(dataDir string) (*DevIssuer, error) {
	path := filepath.Join(dataDir, DevIssuerKeyFile)
	pemBytes, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		pemBytes, err = createDevKey(dataDir, path)
	}
	if err != nil {
		return nil, fmt.Errorf("development issuer key: %w", err)
	}
	return parseDevKey(path, pemBytes)
}

// LoadDevIssuer loads the key serve created in dataDir. Minting with a key of its own would
// only make tokens the service refuses, so a missing key is an error that says what to do.
func LoadDevIssuer(dataDir string) (*DevIssuer, error) {
	path := filepath.Join(dataDir, DevIssuerKeyFile)
	pemBytes, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no development issuer key at %s: start `platform serve` with this data folder first (or pass --data)", path)
	}
	if err != nil {
		return nil, fmt.Errorf("development issuer key: %w", err)
	}
	return parseDevKey(path, pemBytes)
}

func parseDevKey(path string, pemBytes []byte) (*DevIssuer, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil || block.Type != "PRIVATE KEY" {
		return nil, fmt.Errorf("development issuer key %s: not a PEM private key", path)
	}
	parsed, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("development issuer key %s: %w", path, err)
	}
	key, ok := parsed.(*ecdsa.PrivateKey)
	if !ok || key.Curve != elliptic.P256() {
		return nil, fmt.Errorf("development issuer key %s: want an ECDSA P-256 key", path)
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("development issuer key %s: %w", path, err)
	}
	sum := sha256.Sum256(pub)
	d := &DevIssuer{key: key, kid: base64.RawURLEncoding.EncodeToString(sum[:12])}
	jwk, err := jwkset.NewJWKFromKey(&key.PublicKey, jwkset.JWKOptions{
		Metadata: jwkset.JWKMetadataOptions{KID: d.kid, ALG: jwkset.AlgES256, USE: jwkset.UseSig},
	})
	if err != nil {
		return nil, fmt.Errorf("development issuer JWK: %w", err)
	}
	d.jwks, err = json.Marshal(jwkset.JWKSMarshal{Keys: []jwkset.JWKMarshal{jwk.Marshal()}})
	if err != nil {
		return nil, fmt.Errorf("development issuer JWKS: %w", err)
	}
	return d, nil
}

// createDevKey writes a new key to a temporary file and links it into place, so that a
// concurrent starter either wins or reads the complete key of the winner.
func createDevKey(dataDir, path string) ([]byte, error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	tmp, err := os.CreateTemp(dataDir, DevIssuerKeyFile+".*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(pemBytes); err != nil {
		tmp.Close()
		return nil, err
	}
	if err := tmp.Close(); err != nil {
		return nil, err
	}
	// CreateTemp makes the file 0600.
	if err := os.Link(tmp.Name(), path); errors.Is(err, fs.ErrExist) {
		return os.ReadFile(path)
	} else if err != nil {
		return nil, err
	}
	return pemBytes, nil
}

// Auth returns the auth settings of a project that trusts the development issuer, whose JWKS
// is served at jwksURL (the apex host's DevIssuerJWKSPath).
func (d *DevIssuer) Auth(projectID, jwksURL string) *Auth {
	return &Auth{JWKSURL: jwksURL, Issuer: DevIssuerName, Audience: projectID}
}

// Mint returns a token for sub on projectID, valid for ttl. extra adds claims; it cannot
// change iss, sub, aud, iat, nbf or exp.
func (d *DevIssuer) Mint(projectID, sub string, ttl time.Duration, extra map[string]any) (string, error) {
	if err := ValidateID(projectID); err != nil {
		return "", err
	}
	if sub == "" {
		return "", errors.New("a development token needs a subject")
	}
	if ttl <= 0 || ttl > MaxDevTokenTTL {
		return "", fmt.Errorf("token lifetime %v: want more than 0 and at most %v", ttl, MaxDevTokenTTL)
	}
	now := time.Now()
	claims := jwt.MapClaims{}
	maps.Copy(claims, extra)
	maps.Copy(claims, jwt.MapClaims{
		"iss": DevIssuerName,
		"sub": sub,
		"aud": projectID,
		"iat": now.Unix(),
		"nbf": now.Unix(),
		"exp": now.Add(ttl).Unix(),
	})
	tok := jwt.NewWithClaims(jwt.SigningMethodES256, claims)
	tok.Header["kid"] = d.kid
	s, err := tok.SignedString(d.key)
	if err != nil {
		return "", fmt.Errorf("sign development token: %w", err)
	}
	return s, nil
}

// ServeHTTP serves the issuer's public keys as a JWKS.
func (d *DevIssuer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, _ = w.Write(d.jwks)
}

// DemoProjectID is the project serve creates on first start with the development issuer.
const DemoProjectID = "demo"

// DemoProject returns the demo project: the seed's products table, readable and creatable by
// any signed-in caller and changeable by its owner, trusting the development issuer whose
// JWKS is at jwksURL.
func (d *DevIssuer) DemoProject(jwksURL string) (*Project, error) {
	doc := map[string]any{
		"id":   DemoProjectID,
		"auth": d.Auth(DemoProjectID, jwksURL),
		"tables": map[string]any{
			"products": map[string]any{
				"fields": map[string]any{
					"name":   map[string]any{"type": "String", "required": true},
					"price":  map[string]any{"type": "Float", "required": true},
					"author": map[string]any{"type": "String"},
				},
				"access": Access{Read: RuleAuthenticated, Create: RuleAuthenticated, Update: RuleOwner, Delete: RuleOwner},
			},
		},
	}
	js, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("demo project: %w", err)
	}
	p, err := ParseDocument(js)
	if err != nil {
		return nil, fmt.Errorf("demo project: %w", err)
	}
	return p, nil
}

// DevJWKSURL is where a process listening on addr serves the development issuer's keys to
// itself: over loopback when it listens on every interface, and by IP address, which the
// host routing treats as the apex host whatever the domain.
func DevJWKSURL(addr net.Addr) string {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return "http://" + addr.String() + DevIssuerJWKSPath
	}
	ip := tcp.IP
	if ip == nil || ip.IsUnspecified() {
		ip = net.IPv4(127, 0, 0, 1)
	}
	return "http://" + net.JoinHostPort(ip.String(), strconv.Itoa(tcp.Port)) + DevIssuerJWKSPath
}

// EnsureDemo creates the demo project when the registry holds no project at all (a first
// start), and points a demo project that trusts the development issuer at jwksURL again when
// the service's address changed since. It reports whether it created or changed the demo.
// A demo project an operator made trust another issuer is left alone.
func (r *Registry) EnsureDemo(ctx context.Context, d *DevIssuer, jwksURL string) (changed bool, err error) {
	demo, err := d.DemoProject(jwksURL)
	if err != nil {
		return false, err
	}
	cur, err := r.Get(ctx, DemoProjectID)
	switch {
	case errors.Is(err, ErrProjectNotFound):
		all, err := r.List(ctx)
		if err != nil || len(all) > 0 {
			return false, err
		}
	case err != nil:
		return false, err
	case cur.Auth == nil || cur.Auth.Issuer != DevIssuerName || cur.Auth.JWKSURL == jwksURL:
		return false, nil
	default:
		demo = cur
		demo.Auth = &Auth{JWKSURL: jwksURL, Issuer: cur.Auth.Issuer, Audience: cur.Auth.Audience}
	}
	if _, _, err := r.Put(ctx, demo); err != nil {
		return false, fmt.Errorf("apply the demo project: %w", err)
	}
	return true, nil
}

// CheckDevTokenProject answers why the development issuer must not mint a token for project
// id: the project does not exist, is deleted, or trusts another issuer (its API would refuse
// the token). nil when a token would open it.
func CheckDevTokenProject(ctx context.Context, projects *store.Projects, id string) error {
	sp, err := projects.Get(ctx, id)
	switch {
	case errors.Is(err, store.ErrDeleted):
		return fmt.Errorf("project %q is deleted: `platform undelete --project %s` brings it back", id, id)
	case errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("project %q does not exist: apply its document first (platform apply -f project.yaml)", id)
	case err != nil:
		return fmt.Errorf("look up project %q: %w", id, err)
	}
	p, err := decodeStored(sp)
	if err != nil {
		return fmt.Errorf("project %q: %w", id, err)
	}
	if p.Auth == nil || p.Auth.Issuer != DevIssuerName {
		iss := "none"
		if p.Auth != nil {
			iss = strconv.Quote(p.Auth.Issuer)
		}
		return fmt.Errorf("project %q trusts the issuer %s, not the development issuer %s: its API would refuse the token (set auth.issuer to %s and auth.jwksURL to the apex's %s to test with development tokens)",
			id, iss, DevIssuerName, DevIssuerName, DevIssuerJWKSPath)
	}
	return nil
}
