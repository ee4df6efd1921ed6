package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// graphql posts a GraphQL document to a project host and decodes the answer.
func (s *server) graphql(project, token, query string, vars map[string]any) (int, map[string]any, error) {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, err := http.NewRequest(http.MethodPost, "http://"+s.addr+"/api/v1/graphql", bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Host = project + ".localhost"
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return resp.StatusCode, nil, err
	}
	return resp.StatusCode, out, nil
}

func mintToken(t *testing.T, dataDir, project, sub string, storeArgs ...string) string {
	t.Helper()
	out, stderr, err := run(t, append([]string{"token", "--data", dataDir, "--project", project, "--sub", sub}, storeArgs...)...)
	if err != nil {
		t.Fatalf("platform token: %v\n%s", err, stderr)
	}
	return strings.TrimSpace(out)
}

// TestShutdownLosesNoAcknowledgedWrite writes records from several clients, sends SIGTERM
// while they write, restarts on the same data folder and reads every acknowledged record
// back. No request may fail with a server error on the way down.
func TestShutdownLosesNoAcknowledgedWrite(t *testing.T) {
	data := t.TempDir()
	s := startServer(t, data)
	token := mintToken(t, data, "demo", "alice")
	const create = `mutation createproduct($data: productInput!) { createproduct(data: $data) { uid } }`

	var (
		mu      sync.Mutex
		acked   []string
		serverE []string
		wg      sync.WaitGroup
		stop    = make(chan struct{})
	)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				st, out, err := s.graphql("demo", token, create, map[string]any{"data": map[string]any{"name": fmt.Sprintf("w%d-%d", w, i), "price": 1.5}})
				if err != nil {
					return // the listener is closed: the server is going down
				}
				mu.Lock()
				if st >= 500 {
					serverE = append(serverE, fmt.Sprintf("%d %v", st, out))
				} else if d, ok := out["data"].(map[string]any); ok && d["createProduct"] != nil {
					acked = append(acked, d["createProduct"].(map[string]any)["uid"].(string))
				}
				mu.Unlock()
			}
		}()
	}
	time.Sleep(700 * time.Millisecond)
	s.Terminate()
	select {
	case <-s.Exited():
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not stop within 30s of SIGTERM:\n%s", s.logText())
	}
	close(stop)
	wg.Wait()
	if len(serverE) > 0 {
		t.Fatalf("server errors during shutdown: %v", serverE)
	}
	if len(acked) == 0 {
		t.Fatal("no write was acknowledged before the shutdown")
	}
	if !strings.Contains(s.logText(), "msg=stopped") {
		t.Errorf("no clean stop in the log:\n%s", s.logText())
	}

	s2 := startServer(t, data)
	found := map[string]bool{}
	for offset := 0; ; offset += 1000 {
		st, out, err := s2.graphql("demo", token, `query page($offset: Int) { products(limit: 1000, offset: $offset) { uid } }`, map[string]any{"offset": offset})
		if err != nil || st != http.StatusOK || out["errors"] != nil {
			t.Fatalf("list after restart: %d %v %v", st, out, err)
		}
		list := out["data"].(map[string]any)["products"].([]any)
		for _, p := range list {
			found[p.(map[string]any)["uid"].(string)] = true
		}
		if len(list) < 1000 {
			break
		}
	}
	for _, uid := range acked {
		if !found[uid] {
			t.Errorf("acknowledged record %s is missing after the restart", uid)
		}
	}
	t.Logf("%d writes acknowledged before SIGTERM, all read back after the restart", len(acked))
}
