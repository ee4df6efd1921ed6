// Package handler serves HTTP.
package handler

import (
	"net/http"

	"example.com/poly/internal/service"
)

// Handler answers requests.
type Handler struct{ svc *service.Service }

// New returns a Handler.
func New() *Handler { return &Handler{svc: service.Get()} }

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	_, _ = w.Write([]byte(h.svc.Greeting()))
}

// Logging wraps next.
func Logging(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r)
	})
}
