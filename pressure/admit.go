package pressure

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
)

// AdmitConfig configures the middleware that refuses requests under memory pressure.
type AdmitConfig struct {
	// Skipper names the requests that are always served: the middleware refuses only the
	// expensive ones, which the Skipper lets through to it. Default: none is skipped.
	Skipper middleware.Skipper
	// UnderPressure reports memory pressure (Watcher.UnderPressure). Required.
	UnderPressure func() bool
	// RetryAfter is the Retry-After a refused request is told. Default 5 s.
	RetryAfter time.Duration
	// DenyHandler answers a refused request, after Retry-After is set; retry is
	// RetryAfter. Default: an *echo.HTTPError with status 503.
	DenyHandler func(c echo.Context, retry time.Duration) error
}

// DefaultAdmitConfig holds the defaults a zero field of AdmitConfig takes.
var DefaultAdmitConfig = AdmitConfig{
	Skipper:    middleware.DefaultSkipper,
	RetryAfter: 5 * time.Second,
	DenyHandler: func(_ echo.Context, retry time.Duration) error {
		return echo.NewHTTPError(http.StatusServiceUnavailable, Message(retry))
	},
}

// Message says why a request was refused and when to try again.
func Message(retry time.Duration) string {
	return fmt.Sprintf("the server is near its memory limit and refuses new expensive requests for now; retry in %d s", RetrySeconds(retry))
}

// RetrySeconds is retry as a Retry-After header counts it: whole seconds, at least 1.
func RetrySeconds(retry time.Duration) int { return max(1, int((retry+time.Second-1)/time.Second)) }

// ToMiddleware checks config once and returns the middleware: while UnderPressure reports
// true, a request the Skipper does not skip is answered with 503 and Retry-After before
// its handler runs.
func (config AdmitConfig) ToMiddleware() (echo.MiddlewareFunc, error) {
	if config.UnderPressure == nil {
		return nil, errors.New("pressure: AdmitConfig needs UnderPressure")
	}
	if config.Skipper == nil {
		config.Skipper = DefaultAdmitConfig.Skipper
	}
	if config.RetryAfter == 0 {
		config.RetryAfter = DefaultAdmitConfig.RetryAfter
	}
	if config.RetryAfter < 0 {
		return nil, fmt.Errorf("pressure: RetryAfter %v: want a positive duration", config.RetryAfter)
	}
	if config.DenyHandler == nil {
		config.DenyHandler = DefaultAdmitConfig.DenyHandler
	}
	retry := strconv.Itoa(RetrySeconds(config.RetryAfter))
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if config.Skipper(c) || !config.UnderPressure() {
				return next(c)
			}
			c.Response().Header().Set("Retry-After", retry)
			return config.DenyHandler(c, config.RetryAfter)
		}
	}, nil
}
