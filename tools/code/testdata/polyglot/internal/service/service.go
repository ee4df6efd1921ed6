// Package service holds the business rules.
package service

import (
	"sync"

	"example.com/poly/internal/store"
)

// Service is the one service.
type Service struct{ st *store.Store }

var (
	once     sync.Once
	instance *Service
)

// Get returns the process-wide Service.
func Get() *Service {
	once.Do(func() {
		instance = &Service{st: store.Open()}
	})
	return instance
}

// Greeting says hello.
func (s *Service) Greeting() string { return "hello " + s.st.Name() }
