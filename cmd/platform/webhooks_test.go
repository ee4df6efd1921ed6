package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/platform-dev/platform/internal/testenv"
	"github.com/platform-dev/platform/store"
)

// receipt is one request the webhook receiver got, as it logged it.
type receipt struct {
	Path    string `json:"path"`
	ID      string `json:"id"`
	Error   string `json:"error"`
	At      int64  `json:"at"`
	Payload struct {
		Type      string `json:"type"`
		Timestamp string `json:"timestamp"`
		Data      struct {
			Table    string         `json:"table"`
			Event    string         `json:"event"`
			UID      string         `json:"uid"`
			Record   map[string]any `json:"record"`
			Previous map[string]any `json:"previous"`
		} `json:"data"`
	} `json:"payload"`
}

// receiver runs testdata/webhooks/receiver.mjs: node, checking each delivery's signature
// with the Standard Webhooks library from npm.
type receiver struct {
	t    *testing.T
	node string
	addr string

	mu   sync.Mutex
	got  []receipt
	cmd  *exec.Cmd
	done chan struct{}
}

func newReceiver(t *testing.T, addr string) *receiver {
	node := testenv.Need(t, "node")
	testenv.NeedFile(t, "testdata/webhooks/node_modules/standardwebhooks/package.json", "npm ci --prefix cmd/platform/testdata/webhooks")
	return &receiver{t: t, node: node, addr: addr}
}

// start runs the receiver with the secrets it checks, by path, and waits until it listens.
func (rc *receiver) start(secrets map[string]string) {
	rc.t.Helper()
	js, _ := json.Marshal(secrets)
	cmd := exec.Command(rc.node, "testdata/webhooks/receiver.mjs", rc.addr)
	cmd.Env = append(os.Environ(), "SECRETS="+string(js))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		rc.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		rc.t.Fatal(err)
	}
	listening := make(chan struct{})
	rc.cmd, rc.done = cmd, make(chan struct{})
	go func(done chan struct{}) {
		defer close(done)
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if strings.Contains(sc.Text(), `"listening"`) {
				close(listening)
				continue
			}
			var r receipt
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				rc.t.Errorf("receiver wrote %q: %v", sc.Text(), err)
				continue
			}
			rc.mu.Lock()
			rc.got = append(rc.got, r)
			rc.mu.Unlock()
		}
		_ = cmd.Wait()
	}(rc.done)
	rc.t.Cleanup(rc.stop)
	select {
	case <-listening:
	case <-rc.done:
		rc.t.Fatal("the receiver ended before it listened")
	case <-time.After(10 * time.Second):
		rc.t.Fatal("the receiver does not listen")
	}
}

func (rc *receiver) stop() {
	if rc.cmd != nil {
		_ = rc.cmd.Process.Kill()
		<-rc.done
		rc.cmd = nil
	}
}

func (rc *receiver) receipts() []receipt {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.got)
}

// waitForEvent waits for a verified receipt on path of event for uid, and answers it.
func (rc *receiver) waitForEvent(t *testing.T, path, event, uid string, within time.Duration) receipt {
	t.Helper()
	var found receipt
	waitFor(t, within, fmt.Sprintf("%s %s of %s", path, event, uid), func() bool {
		for _, r := range rc.receipts() {
			if r.Path == path && r.Error == "" && r.Payload.Data.Event == event && r.Payload.Data.UID == uid {
				found = r
				return true
			}
		}
		return false
	})
	return found
}

func webhookDoc(receiver string) string {
	return `{"id":"shop","tables":{"products":{
  "fields":{"name":{"type":"String","required":true},"price":{"type":"Float","required":true},"note":{"type":"String"}},
  "access":{"read":"public","create":"public","update":"public","delete":"public"},
  "webhooks":{
    "all":{"url":"http://` + receiver + `/all","events":["create","update","delete"],"fields":["name","price"]},
    "dear":{"url":"http://` + receiver + `/dear","events":["create"],"where":{"price":{"gt":100}},"fields":["name"]}}}}}`
}

// TestWebhooks runs the binary with a receiver in node that checks every signature with the
// Standard Webhooks library: creates, updates and deletes arrive with the declared fields and
// the where honoured; a receiver down gets its events once it is back; a server killed with
// SIGKILL with deliveries pending delivers them after its restart; the admin API shows the
// log and retries a delivery with its id.
func TestWebhooks(t *testing.T) {
	top := t // the server restarted in a subtest serves the next ones
	rcv := newReceiver(t, freeAddr(t))
	data := t.TempDir()
	env := []string{"PLATFORM_WEBHOOKS_ALLOW_PRIVATE=true", "PLATFORM_WEBHOOKS_BACKOFF=100ms", "PLATFORM_WEBHOOKS_MAX_BACKOFF=400ms"}
	s := startServer(t, data, env...)
	if st, body := s.do("PUT", "localhost", "/admin/v1/projects/shop", s.token, []byte(webhookDoc(rcv.addr))); st != http.StatusCreated {
		t.Fatalf("PUT: %d %s", st, body)
	}
	secrets := map[string]string{}
	for _, name := range []string{"all", "dear"} {
		st, body := s.do("GET", "localhost", "/admin/v1/projects/shop/webhooks/"+name+"/secret", s.token, nil)
		var sec struct{ Secret string }
		if err := json.Unmarshal(body, &sec); st != http.StatusOK || err != nil || !strings.HasPrefix(sec.Secret, "whsec_") {
			t.Fatalf("secret of %s: %d %s", name, st, body)
		}
		secrets["/"+name] = sec.Secret
	}
	if st, body := s.do("GET", "localhost", "/admin/v1/projects/shop", s.token, nil); st != http.StatusOK || strings.Contains(string(body), "whsec_") {
		t.Fatalf("the project document shows a secret: %d %s", st, body)
	}
	rcv.start(secrets)

	mutate := func(query string) map[string]any {
		t.Helper()
		return publicMutation(t, s, query)
	}
	uidOf := func(data map[string]any, field string) string { return data[field].(map[string]any)["uid"].(string) }

	cheap := uidOf(mutate(`mutation { createProduct(data: {name: "pen", price: 2, note: "internal"}) { uid } }`), "createProduct")
	dear := uidOf(mutate(`mutation { createProduct(data: {name: "desk", price: 300}) { uid } }`), "createProduct")
	mutate(`mutation { updateProduct(uid: "` + cheap + `", data: {price: 3}) { uid } }`)
	mutate(`mutation { deleteProduct(uid: "` + dear + `") { uid } }`)

	t.Run("events with their fields", func(t *testing.T) {
		created := rcv.waitForEvent(t, "/all", "create", cheap, 10*time.Second)
		if got := created.Payload.Data.Record; got["name"] != "pen" || got["price"] != 2.0 || got["uid"] != cheap || len(got) != 3 {
			t.Errorf("create carries %v, want uid, name and price only", got)
		}
		if created.Payload.Type != "products.create" || created.Payload.Timestamp == "" || !strings.HasPrefix(created.ID, "msg_") {
			t.Errorf("create: type %q, timestamp %q, id %q", created.Payload.Type, created.Payload.Timestamp, created.ID)
		}
		updated := rcv.waitForEvent(t, "/all", "update", cheap, 10*time.Second)
		if updated.Payload.Data.Record["price"] != 3.0 || updated.Payload.Data.Previous["price"] != 2.0 {
			t.Errorf("update carries %v after, %v before", updated.Payload.Data.Record, updated.Payload.Data.Previous)
		}
		deleted := rcv.waitForEvent(t, "/all", "delete", dear, 10*time.Second)
		if deleted.Payload.Data.Record != nil || deleted.Payload.Data.Previous["name"] != "desk" {
			t.Errorf("delete carries %v, %v", deleted.Payload.Data.Record, deleted.Payload.Data.Previous)
		}
		if got := rcv.waitForEvent(t, "/dear", "create", dear, 10*time.Second).Payload.Data.Record; len(got) != 2 || got["name"] != "desk" {
			t.Errorf("dear's create carries %v, want uid and name", got)
		}
		for _, r := range rcv.receipts() {
			if r.Error != "" {
				t.Errorf("the receiver refused a delivery: %+v", r)
			}
			if r.Path == "/dear" && r.Payload.Data.UID == cheap {
				t.Errorf("dear (where price > 100) received %+v", r)
			}
		}
	})

	t.Run("receiver down, then up", func(t *testing.T) {
		rcv.stop()
		late := uidOf(mutate(`mutation { createProduct(data: {name: "late", price: 5}) { uid } }`), "createProduct")
		waitFor(t, 10*time.Second, "failed attempts in the log", func() bool {
			log := deliveries(t, s, "all")
			return len(log) > 0 && log[0].UID == late && log[0].Attempts >= 2 && log[0].State == "pending" && log[0].Error != ""
		})
		rcv.start(secrets)
		rcv.waitForEvent(t, "/all", "create", late, 10*time.Second)
	})

	t.Run("server killed with deliveries pending", func(t *testing.T) {
		rcv.stop()
		kept := uidOf(mutate(`mutation { createProduct(data: {name: "kept", price: 7}) { uid } }`), "createProduct")
		s.Kill()
		rcv.start(secrets)
		s = startServer(top, data, env...)
		rcv.waitForEvent(t, "/all", "create", kept, 15*time.Second)
	})

	t.Run("admin log and retry", func(t *testing.T) {
		st, body := s.do("GET", "localhost", "/admin/v1/projects/shop/webhooks", s.token, nil)
		var list struct {
			Webhooks []struct {
				Name               string
				Pending, Delivered int
			}
		}
		if err := json.Unmarshal(body, &list); st != http.StatusOK || err != nil || len(list.Webhooks) != 2 {
			t.Fatalf("webhooks: %d %s", st, body)
		}
		if w := list.Webhooks[0]; w.Name != "all" || w.Delivered != 6 || w.Pending != 0 {
			t.Errorf("all: %+v, want 6 delivered", w)
		}
		log := deliveries(t, s, "all")
		first := log[len(log)-1]
		if first.State != "delivered" || first.Status != http.StatusNoContent || first.Attempts != 1 || first.LatencyMs <= 0 || first.UID != cheap {
			t.Errorf("first delivery in the log: %+v", first)
		}
		st, body = s.do("POST", "localhost", "/admin/v1/projects/shop/webhooks/all/deliveries/"+first.ID+"/retry", s.token, nil)
		if st != http.StatusAccepted {
			t.Fatalf("retry: %d %s", st, body)
		}
		waitFor(t, 10*time.Second, "the retried delivery", func() bool {
			n := 0
			for _, r := range rcv.receipts() {
				if r.ID == first.ID && r.Error == "" {
					n++
				}
			}
			return n == 2
		})
		if st, body := s.do("POST", "localhost", "/admin/v1/projects/shop/webhooks/all/deliveries/msg_nosuch/retry", s.token, nil); st != http.StatusNotFound {
			t.Errorf("retry of no delivery: %d %s", st, body)
		}
	})

	t.Run("rotated secret", func(t *testing.T) {
		type signing struct {
			Secret        string
			PreviousUntil *time.Time
		}
		rotate := func(query string) signing {
			t.Helper()
			st, body := s.do("POST", "localhost", "/admin/v1/projects/shop/webhooks/all/secret"+query, s.token, nil)
			var sec signing
			if err := json.Unmarshal(body, &sec); st != http.StatusOK || err != nil || !strings.HasPrefix(sec.Secret, "whsec_") || sec.Secret == secrets["/all"] {
				t.Fatalf("rotate%s: %d %s", query, st, body)
			}
			return sec
		}
		for _, bad := range []string{"-1s", "169h", "soon"} {
			if st, body := s.do("POST", "localhost", "/admin/v1/projects/shop/webhooks/all/secret?grace="+bad, s.token, nil); st != http.StatusBadRequest || !strings.Contains(string(body), "BAD_REQUEST") {
				t.Errorf("grace=%s: %d %s", bad, st, body)
			}
		}
		// During the grace the old secret signs beside the new one: the receiver, which still
		// checks with the old one, accepts.
		start := time.Now()
		sec := rotate("?grace=4s")
		if sec.PreviousUntil == nil || sec.PreviousUntil.Before(start.Add(3*time.Second)) || sec.PreviousUntil.After(time.Now().Add(4*time.Second)) {
			t.Fatalf("previousUntil %v, want 4 s from the rotation", sec.PreviousUntil)
		}
		st, body := s.do("GET", "localhost", "/admin/v1/projects/shop/webhooks/all/secret", s.token, nil)
		var shown signing
		if err := json.Unmarshal(body, &shown); st != http.StatusOK || err != nil || shown.Secret != sec.Secret || shown.PreviousUntil == nil || !shown.PreviousUntil.Equal(*sec.PreviousUntil) {
			t.Fatalf("GET after the rotation: %d %s, want %+v", st, body, sec)
		}
		during := uidOf(mutate(`mutation { createProduct(data: {name: "during", price: 1}) { uid } }`), "createProduct")
		rcv.waitForEvent(t, "/all", "create", during, 10*time.Second)
		if time.Now().After(*sec.PreviousUntil) {
			t.Fatalf("the delivery came after the grace ended (%v): too slow a machine to tell", sec.PreviousUntil)
		}
		// After it, the old secret signs no more: the receiver refuses, and the delivery waits.
		time.Sleep(time.Until(*sec.PreviousUntil))
		if st, body := s.do("GET", "localhost", "/admin/v1/projects/shop/webhooks/all/secret", s.token, nil); st != http.StatusOK || strings.Contains(string(body), "previousUntil") {
			t.Errorf("GET after the grace: %d %s", st, body)
		}
		after := uidOf(mutate(`mutation { createProduct(data: {name: "after", price: 1}) { uid } }`), "createProduct")
		waitFor(t, 10*time.Second, "a refused delivery", func() bool {
			log := deliveries(t, s, "all")
			return log[0].UID == after && log[0].Status == http.StatusUnauthorized
		})
		rcv.stop()
		secrets["/all"] = sec.Secret
		rcv.start(secrets)
		rcv.waitForEvent(t, "/all", "create", after, 10*time.Second)

		// A rotation with no grace ends the old secret at once (one that leaked).
		sec = rotate("?grace=0")
		if sec.PreviousUntil != nil {
			t.Errorf("grace=0 answers previousUntil %v", sec.PreviousUntil)
		}
		now := uidOf(mutate(`mutation { createProduct(data: {name: "now", price: 1}) { uid } }`), "createProduct")
		waitFor(t, 10*time.Second, "a refused delivery", func() bool {
			log := deliveries(t, s, "all")
			return log[0].UID == now && log[0].Status == http.StatusUnauthorized
		})
	})
}

// publicMutation runs a mutation of project shop without a token, and answers its data.
func publicMutation(t *testing.T, s *server, query string) map[string]any {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"query": query})
	st, res := s.do("POST", "shop.localhost", "/api/v1/graphql", "", body)
	var out struct {
		Data   map[string]any
		Errors []any
	}
	if err := json.Unmarshal(res, &out); err != nil || st != http.StatusOK || out.Errors != nil {
		t.Fatalf("%s: %d %s", query, st, res)
	}
	return out.Data
}

type deliveryEntry struct {
	ID, UID, State, Error string
	Attempts, Status      int
	LatencyMs             float64
}

func deliveries(t *testing.T, s *server, webhook string) []deliveryEntry {
	t.Helper()
	st, body := s.do("GET", "localhost", "/admin/v1/projects/shop/webhooks/"+webhook+"/deliveries", s.token, nil)
	var log struct{ Deliveries []deliveryEntry }
	if err := json.Unmarshal(body, &log); st != http.StatusOK || err != nil {
		t.Fatalf("deliveries of %s: %d %s", webhook, st, body)
	}
	return log.Deliveries
}

// TestWebhookPrivateAddress: without --webhooks-allow-private, a webhook to a literal
// private address is refused at apply, and one to a name that resolves to one is refused
// when its delivery dials.
func TestWebhookPrivateAddress(t *testing.T) {
	s := startServer(t, t.TempDir())
	for _, target := range []string{"127.0.0.1:9", "10.1.2.3", "[::1]:80", "169.254.169.254", "localhost:8080"} {
		st, body := s.do("PUT", "localhost", "/admin/v1/projects/shop", s.token, []byte(webhookDoc(target)))
		if st != http.StatusBadRequest || !strings.Contains(string(body), "webhooks may only reach public addresses") || !strings.Contains(string(body), "tables.products.webhooks.all.url") {
			t.Errorf("webhook to %s: %d %s", target, st, body)
		}
	}
	// A name that resolves to a non-public address passes the document's check; the dialer
	// refuses it.
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	addrs, err := net.LookupHost(host)
	if err != nil || len(addrs) == 0 {
		t.Skipf("the host name %q does not resolve: %v", host, err)
	}
	if ip, err := netip.ParseAddr(addrs[0]); err != nil || ip.IsGlobalUnicast() && !ip.IsPrivate() {
		t.Skipf("the host name %q resolves to the public %s", host, addrs[0])
	}
	if st, body := s.do("PUT", "localhost", "/admin/v1/projects/shop", s.token, []byte(webhookDoc(host+":9"))); st != http.StatusCreated {
		t.Fatalf("webhook to %s: %d %s", host, st, body)
	}
	publicMutation(t, s, `mutation { createProduct(data: {name: "x", price: 1}) { uid } }`)
	waitFor(t, 10*time.Second, "a refused dial in the log", func() bool {
		log := deliveries(t, s, "all")
		return len(log) == 1 && strings.Contains(log[0].Error, "webhooks may only reach public addresses")
	})
}

// TestWebhooksOnMongo: the MongoDB backend keeps no outbox, so a document that declares a
// webhook is refused, with the reason, and nothing is stored.
func TestWebhooksOnMongo(t *testing.T) {
	uri, stop, err := store.StartFerretDB(context.Background(), t.TempDir(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stop(context.Background()) })
	s := startServer(t, t.TempDir(), "MONGODB_URI="+uri, "PLATFORM_WEBHOOKS_ALLOW_PRIVATE=true")
	st, body := s.do("PUT", "localhost", "/admin/v1/projects/shop", s.token, []byte(webhookDoc("127.0.0.1:9")))
	if st != http.StatusBadRequest || !strings.Contains(string(body), "webhooks need the embedded SQLite backend") {
		t.Fatalf("webhooks on MongoDB: %d %s", st, body)
	}
	if st, body := s.do("GET", "localhost", "/admin/v1/projects/shop", s.token, nil); st != http.StatusNotFound {
		t.Fatalf("the refused project: %d %s", st, body)
	}
}

// TestWebhooksTwoReplicas: two replicas on one store deliver each project's webhooks once
// (one holds its lock), whichever replica took the write; when the first is killed, the
// other delivers what follows.
func TestWebhooksTwoReplicas(t *testing.T) {
	var mu sync.Mutex
	got := map[string]int{} // requests by record uid
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev struct{ Data struct{ UID string } }
		if err := json.NewDecoder(r.Body).Decode(&ev); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		got[ev.Data.UID]++
		mu.Unlock()
		// A slow receiver keeps deliveries in flight, where a second sender would take them too.
		time.Sleep(100 * time.Millisecond)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rcv.Close)
	received := func(uids []string) (distinct, requests int) {
		mu.Lock()
		defer mu.Unlock()
		for _, u := range uids {
			if got[u] > 0 {
				distinct++
			}
			requests += got[u]
		}
		return distinct, requests
	}
	redisAddr, _ := testenv.RedisServer(t)
	data := t.TempDir()
	env := []string{"PLATFORM_ADMIN_TOKEN=shared-admin-token", "PLATFORM_WEBHOOKS_ALLOW_PRIVATE=true", "REDIS_URL=redis://" + redisAddr}
	a := startServer(t, data, env...)
	b := startServer(t, data, env...)
	if st, body := a.do("PUT", "localhost", "/admin/v1/projects/shop", "shared-admin-token", []byte(webhookDoc(strings.TrimPrefix(rcv.URL, "http://")))); st != http.StatusCreated {
		t.Fatalf("PUT: %d %s", st, body)
	}
	var uids []string
	for i := range 40 {
		s := a
		if i%2 == 1 {
			s = b
		}
		data := publicMutation(t, s, `mutation { createProduct(data: {name: "p`+strconv.Itoa(i)+`", price: 1}) { uid } }`)
		uids = append(uids, data["createProduct"].(map[string]any)["uid"].(string))
	}
	waitFor(t, 15*time.Second, "40 events", func() bool { n, _ := received(uids); return n == len(uids) })
	time.Sleep(500 * time.Millisecond) // room for a second delivery, were both replicas sending
	if n, requests := received(uids); requests != n {
		t.Errorf("%d requests for %d records: both replicas delivered", requests, n)
	}

	// Whichever replica held the project's lock, the other delivers once a is killed (its
	// lock expires within coord.WebhookLockTTL, then b's next scan takes it).
	a.Kill()
	later := publicMutation(t, b, `mutation { createProduct(data: {name: "later", price: 1}) { uid } }`)["createProduct"].(map[string]any)["uid"].(string)
	waitFor(t, 40*time.Second, "the event after a was killed", func() bool { n, _ := received([]string{later}); return n == 1 })
}
