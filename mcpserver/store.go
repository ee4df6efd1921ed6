package mcpserver

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/platform-dev/platform/coord"
)

// Everything a replica must share lives in Redis under one prefix (coord.MCP lists the
// keys). A listen stream of protocol 2026-07-28 (subscriptions/listen) is stored as a
// session of kind "listen" that exists only while its stream is open.

// session is the Redis-held state of one client session.
type session struct {
	id      string
	version string
	level   string
	listen  bool   // a subscriptions/listen stream rather than an initialized session
	cursor  string // last event id delivered on a stream
	// caps are the names of the capabilities the client announced in initialize
	// ("sampling", "elicitation", ...): what the server may ask of it.
	caps []string
}

const (
	kindSession = "session"
	kindListen  = "listen"
)

type store struct {
	rdb     redis.UniversalClient
	k       coord.MCP
	ttl     time.Duration
	backlog int64
	// maxSlotTTL is the life of the longest slot: a slot set expires no sooner.
	maxSlotTTL time.Duration
	// slots names the requests in the rate log and keeps the slot sets.
	slots *coord.Slots

	mu      sync.Mutex
	touched map[string]time.Time // session id -> when this replica last extended its life
}

// maxTouched bounds the sessions whose last touch a replica remembers.
const maxTouched = 100000

// needsTouch reports whether a request of session id should extend the session's life:
// once per TTL/60 per replica is plenty, and saves five commands on every other request.
func (st *store) needsTouch(id string, now time.Time) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	if t, ok := st.touched[id]; ok && now.Sub(t) < st.ttl/60 {
		return false
	}
	if st.touched == nil || len(st.touched) >= maxTouched {
		st.touched = map[string]time.Time{}
	}
	st.touched[id] = now
	return true
}

func newID() string { return rand.Text() }

func (st *store) createSession(ctx context.Context, kind, version string, fields map[string]any) (string, error) {
	id := newID()
	values := map[string]any{"kind": kind, "v": version, "lvl": defaultLogLevel, "created": time.Now().UTC().Format(time.RFC3339)}
	for k, v := range fields {
		values[k] = v
	}
	_, err := st.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, st.k.Session(id), values)
		p.Expire(ctx, st.k.Session(id), st.ttl)
		p.ZAdd(ctx, st.k.Sessions(), redis.Z{Score: float64(time.Now().Add(st.ttl).UnixMilli()), Member: id})
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("create session: %w", err)
	}
	return id, nil
}

// sessionFrom reads a session's hash; nil when the hash is empty (no such session).
func sessionFrom(id string, h map[string]string) *session {
	if len(h) == 0 {
		return nil
	}
	sess := &session{id: id, version: h["v"], level: h["lvl"], listen: h["kind"] == kindListen, cursor: h["cur"]}
	if h["caps"] != "" {
		sess.caps = strings.Split(h["caps"], ",")
	}
	return sess
}

// touch extends the life of a session's keys. EXPIRE on a missing key is a no-op, so touching
// a deleted session does not resurrect it; the sorted-set entry is cleaned when counted.
func (st *store) touch(ctx context.Context, p redis.Pipeliner, id string) {
	for _, key := range []string{st.k.Session(id), st.k.SessionSubs(id), st.k.SessionEvents(id), st.k.SessionOwner(id)} {
		p.Expire(ctx, key, st.ttl)
	}
	p.ZAddXX(ctx, st.k.Sessions(), redis.Z{Score: float64(time.Now().Add(st.ttl).UnixMilli()), Member: id})
}

func (st *store) touchSession(ctx context.Context, id string) error {
	_, err := st.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		st.touch(ctx, p, id)
		return nil
	})
	if err != nil {
		return fmt.Errorf("touch session: %w", err)
	}
	return nil
}

func (st *store) deleteSession(ctx context.Context, id string) (bool, error) {
	uris, err := st.rdb.SMembers(ctx, st.k.SessionSubs(id)).Result()
	if err != nil {
		return false, fmt.Errorf("delete session: %w", err)
	}
	var del *redis.IntCmd
	_, err = st.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, uri := range uris {
			p.SRem(ctx, st.k.Subscribers(uri), id)
		}
		del = p.Del(ctx, st.k.Session(id))
		p.Del(ctx, st.k.SessionSubs(id), st.k.SessionEvents(id), st.k.SessionOwner(id))
		p.ZRem(ctx, st.k.Sessions(), id)
		p.Publish(ctx, st.k.Wake(), id)
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("delete session: %w", err)
	}
	return del.Val() > 0, nil
}

func (st *store) setField(ctx context.Context, id, field, value string) error {
	if err := st.rdb.HSet(ctx, st.k.Session(id), field, value).Err(); err != nil {
		return fmt.Errorf("update session: %w", err)
	}
	return nil
}

func (st *store) subscribe(ctx context.Context, id, uri string) error {
	_, err := st.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.SAdd(ctx, st.k.SessionSubs(id), uri)
		p.Expire(ctx, st.k.SessionSubs(id), st.ttl)
		p.SAdd(ctx, st.k.Subscribers(uri), id)
		return nil
	})
	if err != nil {
		return fmt.Errorf("subscribe %q: %w", uri, err)
	}
	return nil
}

func (st *store) unsubscribe(ctx context.Context, id, uri string) error {
	_, err := st.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.SRem(ctx, st.k.SessionSubs(id), uri)
		p.SRem(ctx, st.k.Subscribers(uri), id)
		return nil
	})
	if err != nil {
		return fmt.Errorf("unsubscribe %q: %w", uri, err)
	}
	return nil
}

// emit appends a notification to a session's stream and wakes whichever replica delivers it.
func (st *store) emit(ctx context.Context, id string, payload []byte) error {
	_, err := st.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.XAdd(ctx, &redis.XAddArgs{Stream: st.k.SessionEvents(id), MaxLen: st.backlog, Approx: true, Values: []any{"m", payload}})
		p.Expire(ctx, st.k.SessionEvents(id), st.ttl)
		p.Publish(ctx, st.k.Wake(), id)
		return nil
	})
	if err != nil {
		return fmt.Errorf("emit to session: %w", err)
	}
	return nil
}

// eventsAfter returns up to 100 events with ids after the given one ("0" for all).
func (st *store) eventsAfter(ctx context.Context, id, after string) ([]redis.XMessage, error) {
	res, err := st.rdb.XRead(ctx, &redis.XReadArgs{Streams: []string{st.k.SessionEvents(id), after}, Count: 100, Block: -1}).Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	if len(res) == 0 {
		return nil, nil
	}
	return res[0].Messages, nil
}

// liveSessions returns the ids of sessions that have not expired, dropping expired entries.
func (st *store) liveSessions(ctx context.Context) ([]string, error) {
	now := strconv.FormatInt(time.Now().UnixMilli(), 10)
	if err := st.rdb.ZRemRangeByScore(ctx, st.k.Sessions(), "-inf", "("+now).Err(); err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	ids, err := st.rdb.ZRange(ctx, st.k.Sessions(), 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	return ids, nil
}

func (st *store) countSessions(ctx context.Context) (int64, error) {
	now := strconv.FormatInt(time.Now().UnixMilli(), 10)
	n, err := st.rdb.ZCount(ctx, st.k.Sessions(), now, "+inf").Result()
	if err != nil {
		return 0, fmt.Errorf("count sessions: %w", err)
	}
	return n, nil
}

// gateRequest is what one request asks of the limiter.
type gateRequest struct {
	client, session string
	slot            slotMode
	slotTTL         time.Duration
	limit           int
	window          time.Duration
	maxConcurrent   int
}

// gate is the limiter's answer.
type gate struct {
	rateOK, slotOK bool
	count          int64         // accepted requests in the window, this one included
	reset          time.Duration // until the oldest of them leaves the window
	slot           string        // the slot taken
	sess           *session      // nil when the request named none or it does not exist
}

// admit is one pipelined round trip: it logs the request in the client's sliding window,
// takes or checks a concurrency slot, and loads and touches the session. Plain commands
// rather than a script, because the embedded Redis interprets Lua slowly and a pipeline
// also works on Redis Cluster (the client's keys share a hash tag).
//
// The window is an exact log: a sorted set of accepted requests scored by time. Each request
// adds itself and then counts, and leaves again when the count is above the limit, so of
// any requests accepted within one window the last one counted all of them: no window ever
// holds more than the limit, even with requests racing on several replicas. Races can only
// refuse a request early, never admit one too many. Slots work the same way.
func (st *store) admit(ctx context.Context, q gateRequest) (gate, error) {
	take := q.slot == slotTake
	now := time.Now()
	member := st.slots.Token()
	rate, conc := st.k.Rate(q.client), st.k.Concurrency(q.client)
	var count, held *redis.IntCmd
	var oldest *redis.ZSliceCmd
	var hash *redis.MapStringStringCmd
	_, err := st.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.ZRemRangeByScore(ctx, rate, "-inf", strconv.FormatInt(now.Add(-q.window).UnixMilli(), 10))
		p.ZAdd(ctx, rate, redis.Z{Score: float64(now.UnixMilli()), Member: member})
		count = p.ZCard(ctx, rate)
		oldest = p.ZRangeWithScores(ctx, rate, 0, 0)
		p.PExpire(ctx, rate, q.window)
		if take {
			// Expired slots (of a replica that died) are dropped when one is taken.
			held = st.slots.Add(ctx, p, conc, now, q.slotTTL, st.maxSlotTTL, member)
		} else {
			held = st.slots.Count(ctx, p, conc, now)
		}
		if q.session != "" {
			hash = p.HGetAll(ctx, st.k.Session(q.session))
			if st.needsTouch(q.session, now) {
				st.touch(ctx, p, q.session)
			}
		}
		return nil
	})
	if err != nil {
		return gate{}, fmt.Errorf("admit request: %w", err)
	}
	g := gate{count: count.Val(), reset: q.window}
	if o := oldest.Val(); len(o) == 1 {
		g.reset = time.UnixMilli(int64(o[0].Score)).Add(q.window).Sub(now)
	}
	g.rateOK = g.count <= int64(q.limit)
	switch q.slot {
	case slotTake:
		g.slotOK = held.Val() <= int64(q.maxConcurrent)
	case slotCheck:
		g.slotOK = held.Val() < int64(q.maxConcurrent)
	default:
		g.slotOK = true
	}
	if !g.rateOK || !g.slotOK {
		// A refused request is not counted, and holds no slot.
		g.count--
		_, err := st.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			p.ZRem(ctx, rate, member)
			if take {
				p.ZRem(ctx, conc, member)
			}
			return nil
		})
		if err != nil {
			return gate{}, fmt.Errorf("admit request: %w", err)
		}
		return g, nil
	}
	if take {
		g.slot = member
	}
	if hash != nil {
		g.sess = sessionFrom(q.session, hash.Val())
	}
	return g, nil
}

// acquire takes one of limit slots for client for ttl, as admit does. It returns the slot's
// token, or "" when all slots are taken.
func (st *store) acquire(ctx context.Context, client string, limit int, ttl time.Duration) (string, error) {
	token := st.slots.Token()
	key := st.k.Concurrency(client)
	var held *redis.IntCmd
	_, err := st.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		held = st.slots.Add(ctx, p, key, time.Now(), ttl, st.maxSlotTTL, token)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("acquire concurrency slot: %w", err)
	}
	if held.Val() > int64(limit) {
		st.slots.Release(key, token)
		return "", nil
	}
	return token, nil
}

// refresh extends a held slot; it reports false when the slot expired meanwhile.
func (st *store) refresh(ctx context.Context, client, token string, ttl time.Duration) (bool, error) {
	lapsed, err := st.slots.Extend(ctx, st.k.Concurrency(client), ttl, max(ttl, st.maxSlotTTL), token)
	if err != nil {
		return false, fmt.Errorf("refresh concurrency slot: %w", err)
	}
	return len(lapsed) == 0, nil
}

// streamAlive reports whether a session still exists and, when owner is set, whether the
// stream holding owner still owns its delivery.
func (st *store) streamAlive(ctx context.Context, id, owner string) (bool, error) {
	var exists *redis.IntCmd
	var cur *redis.StringCmd
	_, err := st.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		exists = p.Exists(ctx, st.k.Session(id))
		cur = p.Get(ctx, st.k.SessionOwner(id))
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return false, fmt.Errorf("check stream: %w", err)
	}
	if exists.Val() == 0 {
		return false, nil
	}
	return owner == "" || cur.Val() == owner, nil
}

func (st *store) takeOwnership(ctx context.Context, id, owner string) error {
	// The wake makes the previous owner, on whichever replica, notice at once and end.
	_, err := st.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, st.k.SessionOwner(id), owner, st.ttl)
		p.Publish(ctx, st.k.Wake(), id)
		return nil
	})
	if err != nil {
		return fmt.Errorf("take stream ownership: %w", err)
	}
	return nil
}
