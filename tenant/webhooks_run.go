package tenant

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/platform-dev/platform/coord"
	"github.com/platform-dev/platform/store"
)

// WebhookOptions tune the delivery of webhooks.
type WebhookOptions struct {
	// AllowPrivate lets webhooks reach loopback, private, link-local and other non-public
	// addresses (for receivers on the operator's own network, and tests).
	AllowPrivate bool
	// Timeout bounds one attempt, from dialling to the answer's status (default 10 s).
	Timeout time.Duration
	// Concurrency bounds the attempts in flight to one webhook (default 4).
	Concurrency int
	// Attempts is how many attempts a delivery gets before it is marked failed (default 20).
	Attempts int
	// Backoff is the wait after the first failed attempt; it doubles after each, up to
	// MaxBackoff, with jitter (defaults 1 s and 1 h).
	Backoff, MaxBackoff time.Duration
	// Log bounds the finished deliveries (delivered or failed) kept per webhook (default
	// 1000); pending ones are always kept.
	Log int
	// Poll is how often a project's delivering replica looks for deliveries due (default
	// 1 s); a change made on any replica wakes it at once.
	Poll time.Duration
	// Scan is how often a replica reads the documents of the projects with webhooks (only
	// those: store.Projects.WithWebhooks) to find new ones (default 10 s); a document
	// applied on any replica makes it scan at once.
	Scan time.Duration
}

// Defaults of WebhookOptions.
const (
	DefaultWebhookTimeout     = 10 * time.Second
	DefaultWebhookConcurrency = 4
	DefaultWebhookAttempts    = 20
	DefaultWebhookBackoff     = time.Second
	DefaultWebhookMaxBackoff  = time.Hour
	DefaultWebhookLog         = 1000
)

func (o *WebhookOptions) defaults() {
	if o.Timeout <= 0 {
		o.Timeout = DefaultWebhookTimeout
	}
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultWebhookConcurrency
	}
	if o.Attempts <= 0 {
		o.Attempts = DefaultWebhookAttempts
	}
	if o.Backoff <= 0 {
		o.Backoff = DefaultWebhookBackoff
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = DefaultWebhookMaxBackoff
	}
	if o.Log <= 0 {
		o.Log = DefaultWebhookLog
	}
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.Scan <= 0 {
		o.Scan = 10 * time.Second
	}
}

// fanOutBatch is how many outbox changes one transaction turns into deliveries.
const fanOutBatch = 200

// drainBatch is how many due deliveries of one webhook one round takes at a time (sent
// o.Concurrency at once, their outcomes written together).
const drainBatch = 64

// maxErrorBody bounds what a delivery's log keeps of a refusing receiver's answer.
const maxErrorBody = 256

// RunWebhooks delivers the webhooks of every project until ctx ends. Each project's
// deliveries run on one replica at a time, the one holding its lock (coord.WebhookLock);
// another takes over at its next scan once the lock expired (coord.WebhookLockTTL) when it
// dies.
func (r *Registry) RunWebhooks(ctx context.Context) {
	o := r.opts.Webhooks
	o.defaults()
	d := &deliverer{r: r, o: o, client: webhookClient(o)}
	running := map[string]bool{}
	// hooked says, by project and version, whether a project declares webhooks, so that
	// each scan decodes only the documents that changed.
	type seen struct {
		version int64
		hooked  bool
	}
	known := map[string]seen{}
	ended := make(chan string)
	var wg sync.WaitGroup
	defer wg.Wait()
	t := time.NewTicker(o.Scan)
	defer t.Stop()
	for {
		stored, err := r.projects.WithWebhooks(ctx)
		if err != nil && ctx.Err() == nil {
			r.opts.Logger.Warn("webhooks: list projects", "err", err)
		}
		next := make(map[string]seen, len(stored))
		for i := range stored {
			id := stored[i].ID
			k, ok := known[id]
			if !ok || k.version != stored[i].Version {
				p, err := decodeStored(&stored[i])
				k = seen{version: stored[i].Version, hooked: err == nil && p.hasWebhooks()}
				if err == nil && !k.hooked {
					// Stored before the registry noted webhooks: the next scans skip it.
					if err := r.projects.MarkWebhooks(ctx, id, k.version, false); err != nil {
						r.opts.Logger.Warn("webhooks: note a project without", "project", id, "err", err)
					}
				}
			}
			next[id] = k
			if running[id] || !k.hooked {
				continue
			}
			work, unlock, got, err := coord.NewLock(r.stores.Redis, coord.WebhookLock(id), coord.WebhookLockTTL).TryLock(ctx)
			if err != nil {
				r.opts.Logger.Warn("webhooks: take the lock", "project", id, "err", err)
				continue
			}
			if !got {
				continue
			}
			running[id] = true
			wg.Go(func() {
				defer unlock()
				d.project(work, id)
				select {
				case ended <- id:
				case <-ctx.Done():
				}
			})
		}
		if err == nil {
			known = next
		}
		for wait := true; wait; {
			select {
			case <-ctx.Done():
				return
			case id := <-ended:
				delete(running, id)
			case <-t.C:
				wait = false
			case <-r.documentChanged:
				wait = false
			}
		}
	}
}

// webhookClient is the HTTP client of deliveries: no proxy, no redirect followed, and
// unless o.AllowPrivate a dialer that refuses non-public addresses once resolved.
func webhookClient(o WebhookOptions) *http.Client {
	dialer := &net.Dialer{Timeout: o.Timeout}
	if !o.AllowPrivate {
		dialer.Control = refuseDial
	}
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConnsPerHost:   o.Concurrency,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   o.Timeout,
		ResponseHeaderTimeout: o.Timeout,
	}
	return &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

type deliverer struct {
	r      *Registry
	o      WebhookOptions
	client *http.Client
}

// project delivers one project's webhooks while ctx (its lock) lasts and the project has
// webhooks: fans the outbox out, sends what is due, then waits for a change of the
// project, the next delivery due, or the poll.
func (d *deliverer) project(ctx context.Context, id string) {
	log := d.r.opts.Logger.With("project", id)
	watch, err := d.r.stores.Changes().Project(id).Watch(ctx, 16)
	if err != nil {
		log.Warn("webhooks: watch changes; polling only", "err", err)
	}
	defer func() {
		if watch != nil {
			watch.Close()
		}
	}()
	for ctx.Err() == nil {
		rt, err := d.r.Runtime(ctx, id)
		if errors.Is(err, ErrProjectNotFound) {
			return
		}
		if err == nil && !rt.Project.hasWebhooks() {
			return
		}
		if err == nil {
			err = d.round(ctx, rt)
		}
		if err != nil && ctx.Err() == nil {
			log.Warn("webhooks: delivery round", "err", err)
		}
		wait := d.o.Poll
		if err == nil {
			if at, ok, err := rt.Records.NextDue(ctx, rt.Project.webhookNames()); err == nil && ok {
				wait = min(wait, max(time.Until(at), 0))
			}
		}
		var changes <-chan store.Change
		if watch != nil {
			changes = watch.C()
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
		case _, ok := <-changes:
			// One round sends every change made so far: the others waiting wake no more.
			for ok && len(changes) > 0 {
				_, ok = <-changes
			}
			if !ok { // the watch ended (Redis lost, or this loop fell behind): poll until renewed
				watch.Close()
				watch, _ = d.r.stores.Changes().Project(id).Watch(ctx, 16)
			}
		case <-timer.C:
		}
		timer.Stop()
	}
}

// round fans the outbox out and sends every delivery due, each webhook at most
// o.Concurrency at a time.
func (d *deliverer) round(ctx context.Context, rt *Runtime) error {
	hooks, err := rt.Project.webhooks()
	if err != nil {
		return err
	}
	names := sortedKeys(hooks)
	secrets, err := rt.Records.WebhookSecrets(ctx, names, newWebhookSecret)
	if err != nil {
		return err
	}
	fan := func(ch store.OutboxChange) ([]store.Delivery, error) {
		var out []store.Delivery
		for _, name := range names {
			w := hooks[name]
			if !w.wants(ch) {
				continue
			}
			body, err := w.body(ch)
			if err != nil {
				return nil, err
			}
			uid, err := store.NewUID()
			if err != nil {
				return nil, err
			}
			out = append(out, store.Delivery{ID: "msg_" + uid, Webhook: name, Body: body})
		}
		return out, nil
	}
	for {
		n, err := rt.Records.FanOut(ctx, fanOutBatch, fan)
		if err != nil {
			return err
		}
		if n < fanOutBatch {
			break
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, len(names))
	for i, name := range names {
		wg.Go(func() { errs[i] = d.drain(ctx, rt, hooks[name], secrets[name]) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// drain sends a webhook's due deliveries, o.Concurrency at a time, until none is due; the
// outcomes of each batch are written in one transaction.
func (d *deliverer) drain(ctx context.Context, rt *Runtime, w *webhook, secret store.WebhookSecret) error {
	for ctx.Err() == nil {
		due, err := rt.Records.DueDeliveries(ctx, w.name, time.Now(), drainBatch)
		if err != nil || len(due) == 0 {
			return err
		}
		sem := make(chan struct{}, d.o.Concurrency)
		var wg sync.WaitGroup
		for i := range due {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				due[i] = d.attempt(ctx, w, secret, due[i])
			})
		}
		wg.Wait()
		if err := rt.Records.Attempted(context.WithoutCancel(ctx), due, d.o.Log); err != nil {
			return err
		}
		delivered := 0
		for _, dl := range due {
			if dl.State == store.Delivered {
				delivered++
			}
		}
		if rt.usage != nil {
			rt.usage.events.Add(int64(delivered))
		}
		// The receiver answers again: what waited for it to be reachable is sent now.
		if delivered > 0 {
			if err := rt.Records.Reachable(ctx, w.name); err != nil {
				return err
			}
		}
	}
	return nil
}

// attempt sends one delivery and answers it as it stands after.
func (d *deliverer) attempt(ctx context.Context, w *webhook, secret store.WebhookSecret, dl store.Delivery) store.Delivery {
	start := time.Now()
	dl.Attempts++
	status, err := d.send(ctx, w, secret, dl, start)
	dl.Latency, dl.Status = time.Since(start), status
	now := time.Now()
	switch {
	case err == nil:
		dl.State, dl.FinishedAt, dl.Error = store.Delivered, now, ""
	case dl.Attempts >= d.o.Attempts:
		dl.State, dl.FinishedAt, dl.Error = store.Failed, now, err.Error()
	default:
		dl.State, dl.NextAt, dl.Error = store.Pending, now.Add(d.backoff(dl.Attempts)), err.Error()
	}
	return dl
}

// backoff is the wait after the n-th failed attempt: Backoff doubled n-1 times, at most
// MaxBackoff, of which a random half ("equal jitter"), so that the deliveries one outage
// failed do not all come back at once.
func (d *deliverer) backoff(n int) time.Duration {
	b := d.o.MaxBackoff
	if n-1 < 40 {
		b = min(d.o.Backoff<<(n-1), d.o.MaxBackoff)
	}
	return b/2 + rand.N(b/2+1)
}

// send POSTs a delivery, signed, and answers the receiver's status; any answer but a 2xx
// is an error.
func (d *deliverer) send(ctx context.Context, w *webhook, secret store.WebhookSecret, dl store.Delivery, at time.Time) (int, error) {
	sig, err := signature(secret, dl.ID, at, dl.Body)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, d.o.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, bytes.NewReader(dl.Body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "platform-webhooks")
	req.Header.Set("webhook-id", dl.ID)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(at.Unix(), 10))
	req.Header.Set("webhook-signature", sig)
	res, err := d.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	head, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 1<<20)) // lets the connection be reused
	switch {
	case res.StatusCode >= 200 && res.StatusCode < 300:
		return res.StatusCode, nil
	case res.StatusCode >= 300 && res.StatusCode < 400:
		return res.StatusCode, fmt.Errorf("HTTP %d: redirects are not followed (Location: %s)", res.StatusCode, res.Header.Get("Location"))
	}
	return res.StatusCode, fmt.Errorf("HTTP %d: %s", res.StatusCode, bytes.TrimSpace(head))
}
