package gql

import (
	"bytes"
	"compress/gzip"
	"embed"
	"io"
	"net/http"
	"path"
	"strings"
)

// explorerFiles are GraphiQL and React, gzipped (see explorer/README.md).
//
//go:embed explorer/*.gz
var explorerFiles embed.FS

// explorerPage loads GraphiQL from ExplorerPath and points it at the page's own address:
// queries and mutations by POST, subscriptions over a WebSocket (graphql-transport-ws) to
// the same path. It starts with no headers, so that nothing a caller did not write is sent
// (a public table answers at once); a development token in the address's fragment
// (#token=<token>, which browsers never send) fills the Authorization header, and the
// fragment is dropped from the address bar so that the token is not shared with it.
const explorerPage = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>GraphiQL</title>
<style>body { margin: 0; height: 100vh; } #graphiql { height: 100vh; }</style>
<link rel="stylesheet" href="graphql/explorer/graphiql-3.8.3.min.css">
</head>
<body>
<div id="graphiql">Loading the explorer…</div>
<script src="graphql/explorer/react-18.3.1.production.min.js"></script>
<script src="graphql/explorer/react-dom-18.3.1.production.min.js"></script>
<script src="graphql/explorer/graphiql-3.8.3.min.js"></script>
<script>
const fetcher = GraphiQL.createFetcher({
  url: location.pathname,
  subscriptionUrl: (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + location.pathname,
});
const props = { fetcher, shouldPersistHeaders: true };
// Earlier pages stored a placeholder Authorization header; it only made errors.
if ((localStorage.getItem('graphiql:headers') || '').includes('<token>')) localStorage.removeItem('graphiql:headers');
const token = new URLSearchParams(location.hash.slice(1)).get('token');
if (token) {
  props.headers = JSON.stringify({ Authorization: 'Bearer ' + token }, null, 2);
  props.defaultEditorToolsVisibility = 'headers';
  history.replaceState(null, '', location.pathname + location.search);
}
ReactDOM.createRoot(document.getElementById('graphiql')).render(React.createElement(GraphiQL, props));
</script>
</body>
</html>
`

// ExplorerPath is where ExplorerAssets serves the explorer's files; the page at
// /api/v1/graphql refers to them relatively.
const ExplorerPath = "/api/v1/graphql/explorer/"

// wantsExplorer reports whether a request is a browser opening the endpoint: a GET without a
// query whose Accept puts HTML first.
func wantsExplorer(r *http.Request) bool {
	if r.Method != http.MethodGet || r.URL.Query().Has("query") {
		return false
	}
	first, _, _ := strings.Cut(header(r, "Accept"), ",")
	return strings.HasPrefix(strings.TrimSpace(first), "text/html")
}

// serveExplorer answers the explorer's page.
func serveExplorer(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "frame-ancestors 'none'")
	_, _ = io.WriteString(w, explorerPage)
}

// ExplorerAssets serves the explorer's files under ExplorerPath, gzipped to clients that
// accept it. The names carry the packages' versions, so they are cached for a year.
func ExplorerAssets() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := path.Base(r.URL.Path)
		gz, err := explorerFiles.ReadFile("explorer/" + name + ".gz")
		if err != nil || !strings.HasPrefix(r.URL.Path, ExplorerPath) {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h.Set("Content-Type", map[string]string{".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}[path.Ext(name)])
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Add("Vary", "Accept-Encoding")
		if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			h.Set("Content-Encoding", "gzip")
			_, _ = w.Write(gz)
			return
		}
		zr, err := gzip.NewReader(bytes.NewReader(gz))
		if err != nil {
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		_, _ = io.Copy(w, zr)
	})
}
