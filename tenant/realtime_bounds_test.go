package tenant_test

import (
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/platform-dev/platform/gql"
	"github.com/platform-dev/platform/tenant"
)

// TestRealtimeMessageEdge: a subscribe message of exactly MaxMessageBytes runs its
// subscription; one byte more closes the connection with 1009 (message too big).
func TestRealtimeMessageEdge(t *testing.T) {
	const maxMessage = 1024
	d := newLiveDeployment(t, "")
	r := d.replica(tenant.RealtimeLimits{Realtime: gql.Realtime{MaxMessageBytes: maxMessage}})
	d.project(r, "shop", "authenticated")
	token := d.token("shop", "alice", time.Hour)
	// subscribe is a subscribe message of size bytes: spaces fill its document.
	subscribe := func(size int) map[string]any {
		m := func(pad int) map[string]any {
			return map[string]any{"type": "subscribe", "id": "1", "payload": map[string]any{"query": strings.Repeat(" ", pad) + productSub}}
		}
		msg := m(size - len(mustMarshal(t, m(0))))
		if n := len(mustMarshal(t, msg)); n != size {
			t.Fatalf("subscribe of %d bytes, want %d", n, size)
		}
		return msg
	}
	ws := r.connect(t, "shop", token)
	ws.send(subscribe(maxMessage))
	waitRunning(t, r, token, ws)

	over := r.connect(t, "shop", token)
	over.send(subscribe(maxMessage + 1))
	if code, _ := over.closed(); code != websocket.StatusMessageTooBig {
		t.Fatalf("a subscribe of %d bytes: closed with %d, want %d", maxMessage+1, code, websocket.StatusMessageTooBig)
	}
}
