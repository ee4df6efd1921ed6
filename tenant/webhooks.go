package tenant

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/platform-dev/platform/gql"
	"github.com/platform-dev/platform/store"
)

// WebhookDoc is a webhook as the project document writes it: the changes of its table
// (Events, of the records Where selects) are POSTed to URL with the Fields named.
type WebhookDoc struct {
	URL    string         `json:"url"`
	Events []string       `json:"events"`
	Where  map[string]any `json:"where,omitempty"`
	Fields []string       `json:"fields,omitempty"`
}

// The events a webhook may name, and the change each stands for.
var webhookEvents = map[string]store.ChangeOp{"create": store.Created, "update": store.Updated, "delete": store.Deleted}

// webhook is a webhook ready to judge changes.
type webhook struct {
	name, table, url string
	ops              []store.ChangeOp
	where            store.Filter
	fields           []string // nil: every field
	def              store.Table
}

// checkWebhooks reports what is wrong with the webhooks of p's tables: a name used twice in
// the project, fields the table does not have, a where the API would refuse, a URL that is
// not one.
func (p *Project) checkWebhooks(de *DocumentError) {
	seen := map[string]string{}
	for _, tname := range sortedKeys(p.Tables) {
		td := p.Tables[tname]
		for _, name := range sortedKeys(td.Webhooks) {
			path := "tables." + tname + ".webhooks." + name
			if other, ok := seen[name]; ok {
				de.add(path, "webhook %q is already declared on table %q; webhook names are unique in a project", name, other)
			}
			seen[name] = tname
			if _, err := p.webhook(tname, name); err != nil {
				var pe *webhookProblem
				if errors.As(err, &pe) {
					path += "." + pe.at
				}
				de.add(path, "%v", err)
			}
		}
	}
}

type webhookProblem struct{ at, msg string }

func (e *webhookProblem) Error() string { return e.msg }

// webhook compiles the webhook name of table tname.
func (p *Project) webhook(tname, name string) (*webhook, error) {
	td := p.Tables[tname]
	wd := td.Webhooks[name]
	u, err := url.Parse(wd.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &webhookProblem{"url", fmt.Sprintf("%q is not an http or https URL", wd.URL)}
	}
	if u.User != nil {
		return nil, &webhookProblem{"url", "the URL carries credentials: put them in the receiver's check of the signature instead"}
	}
	var def gql.Table
	for _, t := range p.APITables() {
		if t.Name == tname {
			def = t
		}
	}
	w := &webhook{name: name, table: tname, url: wd.URL, where: store.All, def: def.Table}
	for _, e := range wd.Events {
		op, ok := webhookEvents[e]
		if !ok {
			return nil, &webhookProblem{"events", fmt.Sprintf("unknown event %q (want create, update or delete)", e)}
		}
		w.ops = append(w.ops, op)
	}
	for i, f := range wd.Fields {
		if _, ok := def.KeyType(f); !ok || f == store.KeyOwner {
			return nil, &webhookProblem{"fields." + strconv.Itoa(i), fmt.Sprintf("the table has no field %q", f)}
		}
	}
	if len(wd.Fields) > 0 {
		w.fields = wd.Fields
	}
	if wd.Where != nil {
		if w.where, err = gql.Where(def, wd.Where); err != nil {
			return nil, &webhookProblem{"where", err.Error()}
		}
	}
	return w, nil
}

// webhooks compiles every webhook of p, by name.
func (p *Project) webhooks() (map[string]*webhook, error) {
	out := map[string]*webhook{}
	for _, tname := range sortedKeys(p.Tables) {
		for _, name := range sortedKeys(p.Tables[tname].Webhooks) {
			w, err := p.webhook(tname, name)
			if err != nil {
				return nil, fmt.Errorf("webhook %q of project %q: %w", name, p.ID, err)
			}
			out[name] = w
		}
	}
	return out, nil
}

// webhookNames lists the webhooks of p, sorted.
func (p *Project) webhookNames() []string {
	var out []string
	for _, t := range p.Tables {
		for name := range t.Webhooks {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// hasWebhooks reports whether a table of p declares a webhook.
func (p *Project) hasWebhooks() bool {
	for _, t := range p.Tables {
		if len(t.Webhooks) > 0 {
			return true
		}
	}
	return false
}

// checkWebhookTargets refuses, unless allowPrivate, a webhook whose URL names a host that
// is not public: a literal address in a refused range, or localhost. Names are resolved when
// a delivery dials (refuseDial), so that a name re-pointed later is refused too.
func (p *Project) checkWebhookTargets(allowPrivate bool) error {
	if allowPrivate {
		return nil
	}
	de := &DocumentError{}
	for _, tname := range sortedKeys(p.Tables) {
		for _, name := range sortedKeys(p.Tables[tname].Webhooks) {
			u, err := url.Parse(p.Tables[tname].Webhooks[name].URL)
			if err != nil {
				continue // reported by checkWebhooks
			}
			host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
			if host == "localhost" || strings.HasSuffix(host, ".localhost") {
				de.add("tables."+tname+".webhooks."+name+".url", "%s is a loopback name: webhooks may only reach public addresses (the operator allows private ones with --webhooks-allow-private)", host)
			} else if ip, err := netip.ParseAddr(host); err == nil && !publicAddr(ip) {
				de.add("tables."+tname+".webhooks."+name+".url", "%s is a %s address: webhooks may only reach public addresses (the operator allows private ones with --webhooks-allow-private)", ip, addrKind(ip))
			}
		}
	}
	if len(de.Problems) > 0 {
		return de
	}
	return nil
}

// Ranges that are neither loopback, private, link-local nor multicast to netip, but that no
// public receiver lives in either: this network (0/8), shared address space (CGNAT),
// IETF protocol assignments, benchmarking, reserved, and NAT64 translations of any of them
// would reach inside too.
var refusedPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
}

// publicAddr reports whether a webhook may reach ip.
func publicAddr(ip netip.Addr) bool {
	ip = ip.Unmap()
	if addrKind(ip) != "" {
		return false
	}
	for _, p := range refusedPrefixes {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

// addrKind names the refused range ip lies in ("" for none of these).
func addrKind(ip netip.Addr) string {
	ip = ip.Unmap()
	switch {
	case ip.IsLoopback():
		return "loopback"
	case ip.IsPrivate():
		return "private"
	case ip.IsLinkLocalUnicast():
		return "link-local"
	case ip.IsMulticast(), ip.IsLinkLocalMulticast(), ip.IsInterfaceLocalMulticast():
		return "multicast"
	case ip.IsUnspecified():
		return "unspecified"
	}
	for _, p := range refusedPrefixes {
		if p.Contains(ip) {
			return "reserved"
		}
	}
	return ""
}

// ErrPrivateDestination is a delivery whose receiver resolved to an address webhooks may not
// reach.
var ErrPrivateDestination = errors.New("webhooks may only reach public addresses")

// refuseDial is the dialer's Control hook: it sees the address a connection is about to be
// made to, after the name was resolved, so a name that resolves (or is re-pointed, DNS
// rebinding) to a private address is refused where it would be used.
func refuseDial(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return fmt.Errorf("%w: %q is not an address", ErrPrivateDestination, host)
	}
	if !publicAddr(ip) {
		return fmt.Errorf("%w: %s is %s (the operator allows private ones with --webhooks-allow-private)", ErrPrivateDestination, ip, addrKind(ip))
	}
	return nil
}

// wants reports whether w sends ch: its table and event, and a record that where selects
// (after the change for create and update, before it for delete).
func (w *webhook) wants(ch store.OutboxChange) bool {
	if ch.Table != w.table || !slices.Contains(w.ops, ch.Op) {
		return false
	}
	rec := ch.Record
	if ch.Op == store.Deleted {
		rec = ch.Before
	}
	if w.where.IsAll() {
		return true
	}
	values, err := w.def.Values(rec)
	return err == nil && w.def.Match(w.where, values)
}

// WebhookEvent is the body of a delivery, in the shape Standard Webhooks recommend: a type,
// a timestamp and the data.
type WebhookEvent struct {
	Type      string      `json:"type"`
	Timestamp string      `json:"timestamp"`
	Data      WebhookData `json:"data"`
}

// WebhookData is what changed: the record after the change (create, update) and before it
// (update, delete), each with uid and the webhook's fields.
type WebhookData struct {
	Table    string                     `json:"table"`
	Event    string                     `json:"event"`
	UID      string                     `json:"uid"`
	Record   map[string]json.RawMessage `json:"record,omitempty"`
	Previous map[string]json.RawMessage `json:"previous,omitempty"`
}

// body is the payload w sends for ch.
func (w *webhook) body(ch store.OutboxChange) ([]byte, error) {
	ev := WebhookEvent{Timestamp: ch.At.UTC().Format(store.TimeLayout), Data: WebhookData{Table: ch.Table, UID: ch.UID}}
	for name, op := range webhookEvents {
		if op == ch.Op {
			ev.Data.Event = name
		}
	}
	ev.Type = ch.Table + "." + ev.Data.Event
	var err error
	if ev.Data.Record, err = w.pick(ch.Record); err != nil {
		return nil, err
	}
	if ev.Data.Previous, err = w.pick(ch.Before); err != nil {
		return nil, err
	}
	return json.Marshal(ev)
}

// pick keeps uid and the webhook's fields of a stored record (nil stays nil).
func (w *webhook) pick(rec store.Record) (map[string]json.RawMessage, error) {
	if rec == nil {
		return nil, nil
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(rec, &all); err != nil {
		return nil, fmt.Errorf("decode %s record: %w", w.table, err)
	}
	delete(all, store.KeyOwner)
	if w.fields == nil {
		return all, nil
	}
	out := map[string]json.RawMessage{store.KeyUID: all[store.KeyUID]}
	for _, f := range w.fields {
		if v, ok := all[f]; ok {
			out[f] = v
		}
	}
	return out, nil
}

// secretPrefix marks webhook secrets, as Standard Webhooks libraries expect them.
const secretPrefix = "whsec_"

// newWebhookSecret is a random signing secret: whsec_ and 32 random bytes in base64.
func newWebhookSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("new webhook secret: %w", err)
	}
	return secretPrefix + base64.StdEncoding.EncodeToString(b), nil
}

// signature is the webhook-signature header of a delivery, as Standard Webhooks define it:
// v1, and the base64 HMAC-SHA256, keyed by the secret's bytes, of "id.timestamp.body"; one
// such signature, separated by spaces, for the webhook's secret and for each previous one
// that still signs at at (a rotation's grace), so that a receiver checking with either
// accepts the delivery.
func signature(ws store.WebhookSecret, id string, at time.Time, body []byte) (string, error) {
	secrets := []string{ws.Secret}
	for _, p := range ws.Previous {
		if at.Before(p.Until) {
			secrets = append(secrets, p.Secret)
		}
	}
	sigs := make([]string, len(secrets))
	for i, secret := range secrets {
		key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, secretPrefix))
		if err != nil {
			return "", fmt.Errorf("webhook secret: %w", err)
		}
		mac := hmac.New(sha256.New, key)
		fmt.Fprintf(mac, "%s.%d.", id, at.Unix())
		mac.Write(body)
		sigs[i] = "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	}
	return strings.Join(sigs, " "), nil
}

// webhooksReady checks that the project's database can deliver its webhooks and gives each
// webhook its signing secret the first time it is applied.
func webhooksReady(ctx context.Context, p *Project, records *store.Records) error {
	if !p.hasWebhooks() {
		return nil
	}
	if !records.HasOutbox() {
		return &DocumentError{Problems: []Problem{{Path: "tables", Message: store.ErrNoOutbox.Error() + " (FerretDB and MongoDB outside a replica set cannot write a record and its outbox entry in one transaction, so a change could be lost or sent without being made)"}}}
	}
	hooks, err := p.webhooks()
	if err != nil {
		return err
	}
	_, err = records.WebhookSecrets(ctx, sortedKeys(hooks), newWebhookSecret)
	return err
}
