package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/platform-dev/platform/cmd/platform/platformtest"
)

// startNoisySite starts the binary with env and applies project "quiet" (one record, fetched
// by uid as the attack benchmark fetches it) and the flooding projects big1..bigN, each
// holding records records whose sku no index covers.
func startNoisySite(tb testing.TB, flooding, records int, env ...string) *attackSite {
	tb.Helper()
	bin, err := platformtest.Build(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	srv := platformtest.Start(tb, bin, "", append([]string{"PLATFORM_ADMIN_TOKEN=" + attackAdminToken}, env...)...)
	s := &attackSite{srv: srv, bin: bin, devTokens: map[string]string{},
		client: &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 512}}}
	dev := map[string]any{"jwksURL": "http://" + srv.Addr + "/.well-known/jwks.json", "issuer": "urn:platform:dev-issuer"}
	products := map[string]any{"products": map[string]any{
		"fields": map[string]any{"name": map[string]any{"type": "String", "required": true}, "sku": map[string]any{"type": "String"}},
		"access": map[string]any{"read": "public", "create": "authenticated", "update": "owner", "delete": "owner"},
	}}
	s.apply(tb, "quiet", dev, products)
	out := s.mustGraphQL(tb, "quiet", s.devToken(tb, "quiet"), `mutation { c: createproduct(data: {name: "tea"}) { uid } }`, nil)
	s.quietID = out["c"].(map[string]any)["uid"].(string)
	var seeding sync.WaitGroup
	failed := make(chan error, flooding)
	for i := 1; i <= flooding; i++ {
		id := bigProject(i)
		s.apply(tb, id, dev, products)
		token := s.devToken(tb, id)
		seeding.Go(func() {
			// 1,000 records a call is the most a mutation takes.
			for from := 0; from < records; from += 1000 {
				var data []map[string]any
				for j := from; j < min(from+1000, records); j++ {
					data = append(data, map[string]any{"name": fmt.Sprintf("p%d", j), "sku": fmt.Sprintf("sku-%d", j)})
				}
				a, err := s.graphql(context.Background(), id, token, `mutation($d: [productInput!]!) { c: createproducts(data: $d) { uid } }`, map[string]any{"d": data})
				if err == nil && (a.status != http.StatusOK || len(a.errors) > 0) {
					err = fmt.Errorf("answered %d %.300s", a.status, a.raw)
				}
				if err != nil {
					failed <- fmt.Errorf("seed %s: %w", id, err)
					return
				}
			}
		})
	}
	seeding.Wait()
	close(failed)
	for err := range failed {
		tb.Fatal(err)
	}
	return s
}

func bigProject(i int) string { return "big" + strconv.Itoa(i) }

// floodRun counts the answers a flood got.
type floodRun struct {
	served, overloaded, other atomic.Int64
}

// flood sends the equality query on the unindexed sku to project with conns clients at once,
// each sending again as soon as it is answered (after Retry-After when refused), until ctx
// ends.
func (s *attackSite) flood(ctx context.Context, project string, conns, records int, r *floodRun) *sync.WaitGroup {
	query := fmt.Sprintf(`{ products(where: {sku: {eq: "sku-%d"}}) { uid name } }`, records/2)
	var wg sync.WaitGroup
	for range conns {
		wg.Go(func() {
			for ctx.Err() == nil {
				a, err := s.graphql(ctx, project, "", query, nil)
				switch {
				case err != nil && ctx.Err() != nil:
				case err == nil && a.status == http.StatusOK && len(a.errors) == 0:
					r.served.Add(1)
				case err == nil && a.status == http.StatusServiceUnavailable && a.header.Get("Retry-After") != "" &&
					len(a.codes()) == 1 && a.codes()[0] == "OVERLOADED":
					r.overloaded.Add(1)
					retry, _ := strconv.Atoi(a.header.Get("Retry-After"))
					_ = sleep(ctx, time.Duration(retry)*time.Second)
				default:
					r.other.Add(1)
				}
			}
		})
	}
	return &wg
}

// noisyRun measures the quiet project alone for d, then again while flooding projects are
// each sent the unindexed query by conns clients at once; the floods' answers are counted.
func (s *attackSite) noisyRun(ctx context.Context, flooding, conns, records int, d time.Duration) (alone, shared quietRun, floods []*floodRun) {
	alone = s.quietLoad(ctx, d, nil)
	fctx, stop := context.WithCancel(ctx)
	var sent []*sync.WaitGroup
	for i := 1; i <= flooding; i++ {
		r := &floodRun{}
		floods = append(floods, r)
		sent = append(sent, s.flood(fctx, bigProject(i), conns, records, r))
	}
	// The floods first fill the server's slots and queues, and their projects' requests
	// are measured as long.
	_ = sleep(ctx, 2*time.Second)
	shared = s.quietLoad(ctx, d, nil)
	stop()
	for _, wg := range sent {
		wg.Wait()
	}
	// The requests the floods left running end before anything else is measured.
	_ = sleep(ctx, 2*time.Second)
	return alone, shared, floods
}

// TestFairShare floods one project with more expensive requests than its queue holds and
// checks that the other project is still served at most of its pace, that the flooding
// project progresses, and that what its queue cannot hold is refused with 503 OVERLOADED
// and Retry-After.
func TestFairShare(t *testing.T) {
	const records, conns = 20000, 24
	s := startNoisySite(t, 1, records, "PLATFORM_GRAPHQL_QUEUE=4", "PLATFORM_GRAPHQL_TIMEOUT=60s")
	alone, shared, floods := s.noisyRun(context.Background(), 1, conns, records, 3*time.Second)
	big := floods[0]
	kept := float64(shared.requests) / float64(alone.requests)
	t.Logf("quiet alone: %d requests, p99 %v; beside the flood: %d requests (%.2f kept), p99 %v; big: %d served, %d refused",
		alone.requests, alone.p99, shared.requests, kept, shared.p99, big.served.Load(), big.overloaded.Load())
	if shared.p99 >= time.Hour {
		t.Error("a request of the quiet project failed beside the flood")
	}
	if kept < 0.5 {
		t.Errorf("the quiet project kept %.2f of its pace beside the flood, want at least 0.5", kept)
	}
	if big.served.Load() == 0 {
		t.Error("the flooding project was never served")
	}
	if big.overloaded.Load() == 0 {
		t.Errorf("%d clients of one project at once were all admitted, past its queue of 4", conns)
	}
	if n := big.other.Load(); n > 0 {
		t.Errorf("%d answers to the flood were neither served nor 503 OVERLOADED with Retry-After", n)
	}
}

// TestFairShareLeavesSubscriptionsOut opens subscriptions on a server of one slot and checks
// that queries are still answered: a stream open for hours holds no slot.
func TestFairShareLeavesSubscriptionsOut(t *testing.T) {
	s := startNoisySite(t, 0, 0, "PLATFORM_GRAPHQL_SLOTS=1")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for range 3 {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+s.srv.Addr+"/api/v1/graphql",
			strings.NewReader(`{"query": "subscription { products { op uid } }"}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Host = "quiet.localhost"
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "text/event-stream")
		resp, err := s.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			body, _ := io.ReadAll(resp.Body)
			t.Fatalf("subscription answered %d %s", resp.StatusCode, body)
		}
	}
	qctx, stop := context.WithTimeout(ctx, 5*time.Second)
	defer stop()
	if err := s.quietServes(qctx); err != nil {
		t.Fatalf("with 3 subscriptions open on a server of 1 slot: %v", err)
	}
}
