package console

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/platform-dev/platform/store"
	"github.com/platform-dev/platform/tenant"
)

func (con *Console) mountWebhooks(g *echo.Group) {
	g.GET("/projects/:id/webhooks", con.webhooks)
	g.POST("/projects/:id/webhooks/:name/deliveries/:delivery/retry", con.retryDelivery)
}

// consoleDeliveries is how many deliveries of each webhook the page shows, newest first.
const consoleDeliveries = 20

// webhooksView is a project's webhooks, each with its latest deliveries.
type webhooksView struct {
	Project  string
	Shown    int // deliveries shown per webhook
	Webhooks []webhookRow
	Done     string
	Error    string
}

type webhookRow struct {
	tenant.WebhookStatus
	Deliveries []tenant.DeliveryLog
}

func (con *Console) webhooksOf(c echo.Context) (*webhooksView, error) {
	ctx := c.Request().Context()
	id := c.Param("id")
	v := &webhooksView{Project: id, Shown: consoleDeliveries}
	ws, err := con.cfg.Registry.Webhooks(ctx, id)
	if err != nil {
		return v, err
	}
	for _, w := range ws {
		log, err := con.cfg.Registry.WebhookDeliveries(ctx, id, w.Name, consoleDeliveries)
		if err != nil {
			return v, err
		}
		v.Webhooks = append(v.Webhooks, webhookRow{WebhookStatus: w, Deliveries: log})
	}
	return v, nil
}

func (con *Console) webhooks(c echo.Context) error {
	v, err := con.webhooksOf(c)
	if errors.Is(err, tenant.ErrProjectNotFound) {
		return con.render(c, http.StatusNotFound, "error", "", view{Title: "Not found", Error: "project " + v.Project + " does not exist"})
	}
	if err != nil {
		return con.fail(c, "webhooks", err)
	}
	return con.render(c, http.StatusOK, "webhooks", "", view{Title: "Webhooks · " + v.Project, Data: v})
}

// retryDelivery sends a delivery again and answers the page's list, refreshed.
func (con *Console) retryDelivery(c echo.Context) error {
	ctx := c.Request().Context()
	delivery := c.Param("delivery")
	err := con.cfg.Registry.RetryDelivery(ctx, c.Param("id"), c.Param("name"), delivery)
	if err != nil && !errors.Is(err, store.ErrNotFound) && !errors.Is(err, tenant.ErrNoWebhook) && !errors.Is(err, tenant.ErrProjectNotFound) {
		return con.fail(c, "retry delivery", err)
	}
	v, lerr := con.webhooksOf(c)
	if lerr != nil {
		return con.fail(c, "webhooks", lerr)
	}
	if err != nil {
		v.Error = err.Error()
		return con.render(c, http.StatusNotFound, "webhooks", "webhooks", view{Data: v})
	}
	noteDiff(c, []string{"retry " + c.Param("name") + " " + delivery})
	v.Done = "delivery " + delivery + " will be sent again within a second"
	return con.render(c, http.StatusOK, "webhooks", "webhooks", view{Data: v})
}
