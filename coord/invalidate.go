package coord

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// Invalidations tell every replica that a project's document changed, so that each drops
// its cached copy (channel ProjectsChanged). A notice reaches its sender too.
type Invalidations struct{ rdb redis.UniversalClient }

// NewInvalidations returns the invalidations carried by rdb.
func NewInvalidations(rdb redis.UniversalClient) *Invalidations { return &Invalidations{rdb: rdb} }

// Announce tells every replica, this one included, that project id changed.
func (v *Invalidations) Announce(ctx context.Context, id string) error {
	if err := v.rdb.Publish(ctx, ProjectsChanged, id).Err(); err != nil {
		return fmt.Errorf("announce the change of %q: %w", id, err)
	}
	return nil
}

// Listen delivers the ids announced from the time it returns (Redis confirmed the
// subscription) until stop. The connection is made again when it fails; notices sent
// meanwhile are lost.
func (v *Invalidations) Listen(ctx context.Context) (ids <-chan string, stop func(), err error) {
	sub := v.rdb.Subscribe(ctx, ProjectsChanged)
	if _, err := sub.Receive(ctx); err != nil {
		_ = sub.Close()
		return nil, nil, fmt.Errorf("subscribe to project changes: %w", err)
	}
	out := make(chan string, 64)
	done := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		defer close(out)
		for m := range sub.Channel() {
			select {
			case out <- m.Payload:
			case <-done:
				return
			}
		}
	}()
	return out, func() {
		close(done)
		_ = sub.Close()
		<-ended
	}, nil
}
