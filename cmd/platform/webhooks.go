package main

import (
	"time"

	"github.com/platform-dev/platform/tenant"
)

// webhookConfig tunes the delivery of webhooks (tenant.WebhookOptions).
type webhookConfig struct {
	AllowPrivate bool
	Timeout      time.Duration
	Concurrency  int
	Attempts     int
	Backoff      time.Duration
	MaxBackoff   time.Duration
	Log          int
}

func (c *webhookConfig) settings() []setting {
	return []setting{
		boolSetting(&c.AllowPrivate, "webhooks-allow-private", "PLATFORM_WEBHOOKS_ALLOW_PRIVATE", false, "let webhooks reach loopback, private, link-local and other non-public addresses (refused by default, at apply for literal addresses and when a delivery dials for names)"),
		durationSetting(&c.Timeout, "webhooks-timeout", "PLATFORM_WEBHOOKS_TIMEOUT", tenant.DefaultWebhookTimeout, "time one webhook delivery attempt may take, from dialling to the receiver's status"),
		intSetting(&c.Concurrency, "webhooks-concurrency", "PLATFORM_WEBHOOKS_CONCURRENCY", tenant.DefaultWebhookConcurrency, "delivery attempts in flight to one webhook at once"),
		intSetting(&c.Attempts, "webhooks-attempts", "PLATFORM_WEBHOOKS_ATTEMPTS", tenant.DefaultWebhookAttempts, "attempts a webhook delivery gets before it is marked failed (a retry through the admin API or the console sends it again)"),
		durationSetting(&c.Backoff, "webhooks-backoff", "PLATFORM_WEBHOOKS_BACKOFF", tenant.DefaultWebhookBackoff, "wait after a delivery's first failed attempt; it doubles after each, with jitter, up to --webhooks-max-backoff"),
		durationSetting(&c.MaxBackoff, "webhooks-max-backoff", "PLATFORM_WEBHOOKS_MAX_BACKOFF", tenant.DefaultWebhookMaxBackoff, "longest wait between two attempts of a delivery"),
		intSetting(&c.Log, "webhooks-log", "PLATFORM_WEBHOOKS_LOG", tenant.DefaultWebhookLog, "finished deliveries (delivered or failed) each webhook's log keeps; pending ones are always kept"),
	}
}

func (c webhookConfig) options() tenant.WebhookOptions {
	return tenant.WebhookOptions{AllowPrivate: c.AllowPrivate, Timeout: c.Timeout, Concurrency: c.Concurrency,
		Attempts: c.Attempts, Backoff: c.Backoff, MaxBackoff: c.MaxBackoff, Log: c.Log}
}
