package tenant

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/platform-dev/platform/store"
)

// WebhookStatus is one webhook as the admin API lists it: its declaration and its
// deliveries by state.
type WebhookStatus struct {
	Name   string   `json:"name"`
	Table  string   `json:"table"`
	URL    string   `json:"url"`
	Events []string `json:"events"`
	Fields []string `json:"fields,omitempty"`
	Where  any      `json:"where,omitempty"`
	store.DeliveryCounts
}

// DeliveryLog is one delivery as the admin API's log shows it.
type DeliveryLog struct {
	ID         string     `json:"id"`
	Table      string     `json:"table"`
	Event      string     `json:"event"`
	UID        string     `json:"uid"`
	State      string     `json:"state"`
	Attempts   int        `json:"attempts"`
	ChangedAt  time.Time  `json:"changedAt"`
	NextAt     *time.Time `json:"nextAt,omitempty"`
	FinishedAt *time.Time `json:"finishedAt,omitempty"`
	// LatencyMs is the last attempt's time to the receiver's answer.
	LatencyMs float64 `json:"latencyMs"`
	Status    int     `json:"status,omitempty"`
	Error     string  `json:"error,omitempty"`
}

// ErrNoWebhook is a webhook name the project does not declare.
var ErrNoWebhook = errors.New("no such webhook")

// MaxDeliveryLog bounds the deliveries one call of the log answers.
const MaxDeliveryLog = 1000

func deliveryLog(d store.Delivery) DeliveryLog {
	l := DeliveryLog{ID: d.ID, Table: d.Table, UID: d.UID, State: string(d.State), Attempts: d.Attempts,
		ChangedAt: d.ChangedAt, LatencyMs: float64(d.Latency.Microseconds()) / 1e3, Status: d.Status, Error: d.Error}
	for name, op := range webhookEvents {
		if op == d.Op {
			l.Event = name
		}
	}
	if d.State == store.Pending {
		l.NextAt = &d.NextAt
	} else if !d.FinishedAt.IsZero() {
		l.FinishedAt = &d.FinishedAt
	}
	return l
}

// Webhooks lists a project's webhooks with their deliveries by state.
func (r *Registry) Webhooks(ctx context.Context, id string) ([]WebhookStatus, error) {
	rt, err := r.Runtime(ctx, id)
	if err != nil {
		return nil, err
	}
	out := []WebhookStatus{}
	if !rt.Project.hasWebhooks() {
		return out, nil
	}
	counts, err := rt.Records.DeliveryCounts(ctx)
	if err != nil {
		return nil, err
	}
	for _, tname := range sortedKeys(rt.Project.Tables) {
		for _, name := range sortedKeys(rt.Project.Tables[tname].Webhooks) {
			wd := rt.Project.Tables[tname].Webhooks[name]
			ws := WebhookStatus{Name: name, Table: tname, URL: wd.URL, Events: wd.Events, Fields: wd.Fields, DeliveryCounts: counts[name]}
			if wd.Where != nil {
				ws.Where = wd.Where
			}
			out = append(out, ws)
		}
	}
	return out, nil
}

// webhookRuntime answers the project's runtime once it declares the webhook name.
func (r *Registry) webhookRuntime(ctx context.Context, id, name string) (*Runtime, error) {
	rt, err := r.Runtime(ctx, id)
	if err != nil {
		return nil, err
	}
	for _, t := range rt.Project.Tables {
		if _, ok := t.Webhooks[name]; ok {
			return rt, nil
		}
	}
	return nil, fmt.Errorf("%w %q in project %q", ErrNoWebhook, name, id)
}

// WebhookDeliveries answers the newest deliveries of a webhook, at most limit.
func (r *Registry) WebhookDeliveries(ctx context.Context, id, name string, limit int) ([]DeliveryLog, error) {
	rt, err := r.webhookRuntime(ctx, id, name)
	if err != nil {
		return nil, err
	}
	ds, err := rt.Records.Deliveries(ctx, name, limit)
	if err != nil {
		return nil, err
	}
	out := make([]DeliveryLog, len(ds))
	for i, d := range ds {
		out[i] = deliveryLog(d)
	}
	return out, nil
}

// RetryDelivery sends a delivery again, at once, with its id (store.ErrNotFound when the
// webhook's log has no such delivery).
func (r *Registry) RetryDelivery(ctx context.Context, id, name, delivery string) error {
	rt, err := r.webhookRuntime(ctx, id, name)
	if err != nil {
		return err
	}
	return rt.Records.RetryDelivery(ctx, name, delivery)
}

// Bounds of the grace in which a rotated webhook secret still signs beside the new one.
const (
	DefaultWebhookSecretGrace = 24 * time.Hour
	MaxWebhookSecretGrace     = 7 * 24 * time.Hour
)

// WebhookSigning is a webhook's signing secret as the admin API answers it.
type WebhookSigning struct {
	Name   string `json:"name"`
	Secret string `json:"secret"`
	// PreviousUntil is when the secrets that rotations replaced stop signing beside Secret;
	// absent when none still does.
	PreviousUntil *time.Time `json:"previousUntil,omitempty"`
}

// WebhookSecret answers a webhook's signing secret.
func (r *Registry) WebhookSecret(ctx context.Context, id, name string) (WebhookSigning, error) {
	rt, err := r.webhookRuntime(ctx, id, name)
	if err != nil {
		return WebhookSigning{}, err
	}
	secrets, err := rt.Records.WebhookSecrets(ctx, []string{name}, newWebhookSecret)
	if err != nil {
		return WebhookSigning{}, err
	}
	ws := secrets[name]
	out := WebhookSigning{Name: name, Secret: ws.Secret}
	if n := len(ws.Previous); n > 0 {
		out.PreviousUntil = &ws.Previous[n-1].Until
	}
	return out, nil
}

// RotateWebhookSecret replaces a webhook's signing secret with a new one, and answers it.
// The secret it replaces signs deliveries beside the new one for grace, so that receivers
// can move to the new one without refusing any; a grace of 0 ends it, and any earlier one,
// at once (a secret that leaked).
func (r *Registry) RotateWebhookSecret(ctx context.Context, id, name string, grace time.Duration) (WebhookSigning, error) {
	rt, err := r.webhookRuntime(ctx, id, name)
	if err != nil {
		return WebhookSigning{}, err
	}
	secret, err := newWebhookSecret()
	if err != nil {
		return WebhookSigning{}, err
	}
	var until time.Time
	if grace > 0 {
		until = time.Now().Add(grace)
	}
	if err := rt.Records.SetWebhookSecret(ctx, name, secret, until); err != nil {
		return WebhookSigning{}, err
	}
	return r.WebhookSecret(ctx, id, name)
}

// webhookError answers the errors of the webhook routes.
func (r *Registry) webhookError(c echo.Context, what string, err error) error {
	switch {
	case errors.Is(err, ErrProjectNotFound):
		return WriteError(c, http.StatusNotFound, CodeProjectNotFound, "project "+quote(c.Param("id"))+" does not exist")
	case errors.Is(err, ErrNoWebhook), errors.Is(err, store.ErrNotFound):
		return WriteError(c, http.StatusNotFound, CodeNotFound, err.Error())
	}
	return r.internal(c, what, err)
}

func (r *Registry) listWebhooks(c echo.Context) error {
	ws, err := r.Webhooks(c.Request().Context(), c.Param("id"))
	if err != nil {
		return r.webhookError(c, "list webhooks", err)
	}
	return c.JSON(http.StatusOK, map[string]any{"webhooks": ws})
}

func (r *Registry) listDeliveries(c echo.Context) error {
	limit, err := limitParam(c, 100, MaxDeliveryLog)
	if err != nil {
		return WriteError(c, http.StatusBadRequest, CodeBadRequest, err.Error())
	}
	ds, err := r.WebhookDeliveries(c.Request().Context(), c.Param("id"), c.Param("name"), limit)
	if err != nil {
		return r.webhookError(c, "list deliveries", err)
	}
	return c.JSON(http.StatusOK, map[string]any{"deliveries": ds})
}

func (r *Registry) retryDelivery(c echo.Context) error {
	delivery := c.Param("delivery")
	if err := r.RetryDelivery(c.Request().Context(), c.Param("id"), c.Param("name"), delivery); err != nil {
		return r.webhookError(c, "retry delivery", err)
	}
	noteChange(c, c.Param("name")+"/"+delivery, nil)
	return c.JSON(http.StatusAccepted, map[string]string{"id": delivery, "state": string(store.Pending)})
}

func (r *Registry) webhookSecret(c echo.Context) error {
	var ws WebhookSigning
	var err error
	if c.Request().Method == http.MethodPost {
		grace := DefaultWebhookSecretGrace
		if v := c.QueryParam("grace"); v != "" {
			if grace, err = time.ParseDuration(v); err != nil || grace < 0 || grace > MaxWebhookSecretGrace {
				return WriteError(c, http.StatusBadRequest, CodeBadRequest, fmt.Sprintf("grace=%q: give how long the old secret still signs, from 0 (it ends now) to %s, such as 24h", v, MaxWebhookSecretGrace))
			}
		}
		if ws, err = r.RotateWebhookSecret(c.Request().Context(), c.Param("id"), c.Param("name"), grace); err == nil {
			noteChange(c, c.Param("name"), []string{"~ secret (the old one signs for " + grace.String() + ")"})
		}
	} else {
		ws, err = r.WebhookSecret(c.Request().Context(), c.Param("id"), c.Param("name"))
	}
	if err != nil {
		return r.webhookError(c, "webhook secret", err)
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusOK, ws)
}

// limitParam reads the query's limit: def when absent, else a number from 1 to most.
func limitParam(c echo.Context, def, most int) (int, error) {
	v := c.QueryParam("limit")
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > most {
		return 0, fmt.Errorf("limit=%q: give a number from 1 to %d", v, most)
	}
	return n, nil
}
