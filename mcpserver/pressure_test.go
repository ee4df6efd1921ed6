package mcpserver_test

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/platform-dev/platform/mcpserver"
	"github.com/platform-dev/platform/mcpserver/mcptest"
)

// TestPressureRefusesToolCalls: while Pressure reports memory pressure, tools/call is
// refused with -32000, 503 and Retry-After before the rate limit counts it; other methods
// answer, and calls are served again once the pressure ends.
func TestPressureRefusesToolCalls(t *testing.T) {
	var pressed atomic.Bool
	pressed.Store(true)
	cfg := mcpserver.Config{RequestsPerWindow: 2, Pressure: pressed.Load}
	ts := newServer(t, startMini(t), uniquePrefix(), cfg, allTools(newSlowTool()), nil)
	call := mcptest.Request("c", "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"message": "x"}})
	for range 3 {
		r := mcptest.Post(t, ts.url, call)
		if r.Status != http.StatusServiceUnavailable || r.ErrCode() != mcpserver.CodeServerError || r.Body["id"] != "c" ||
			r.Header.Get("Retry-After") != "5" || !strings.Contains(r.Details(), "memory limit") {
			t.Fatalf("tools/call under pressure: %d %v %s", r.Status, r.Header, r.Raw)
		}
	}
	if r := mcptest.Post(t, ts.url, mcptest.Request(1, "tools/list", nil)); r.Status != http.StatusOK || r.ErrCode() != 0 {
		t.Fatalf("tools/list under pressure: %d %s", r.Status, r.Raw)
	}
	pressed.Store(false)
	// The refused calls were not counted: one request of the two the window allows is left.
	if r := mcptest.Post(t, ts.url, call); r.Status != http.StatusOK || r.ErrCode() != 0 {
		t.Fatalf("tools/call after the pressure: %d %s", r.Status, r.Raw)
	}
}
