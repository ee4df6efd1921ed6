// Package coord is the state replicas share through Redis: change notices, registry
// invalidation, rate limits, slot sets, locks and sessions. This file names every key and
// channel the service writes, with its type and time to live; no other package formats a
// Redis key.
//
// Braces are Redis Cluster hash tags: the keys of one project, client or session share a
// slot, so a pipeline over them works on a cluster. redis_rate prefixes its keys with
// "rate:" itself.
package coord

import "time"

// Changes is the pub/sub channel of one project's record changes (JSON of store.Change).
func Changes(project string) string { return "platform:changes:" + project }

// ProjectsChanged is the pub/sub channel of project ids whose document changed: every
// replica drops its cached copy.
const ProjectsChanged = "platform:projects:changed"

// SlotsWanted is the pub/sub channel on which a replica short of slots asks the others to
// give back the slots they lease and do not use (see Pool).
const SlotsWanted = "platform:slots:wanted"

// WrongAdminToken is the redis_rate state ("rate:" + this) of a client's wrong admin
// tokens; it lives until the attempts are forgotten, at most the rate's period.
func WrongAdminToken(client string) string { return "admin:wrong-token:" + client }

// QuotaRate is the redis_rate state ("rate:" + this) of a project's requestsPerMinute
// quota; it lives until the rate has refilled, at most a minute.
func QuotaRate(project string) string { return "quota:{" + project + "}:rpm" }

// QuotaRequests is the slot set (sorted set: token -> expiry in ms) of a project's
// concurrent GraphQL requests; it lives as long as its longest slot (the request timeout
// and 10 s), renewed while a replica holds slots.
func QuotaRequests(project string) string { return "quota:{" + project + "}:conc" }

// QuotaSubscriptions is the slot set of a project's open subscription connections; it
// lives SubscriptionSlotTTL, renewed every third of it by the connection's replica.
func QuotaSubscriptions(project string) string { return "quota:{" + project + "}:subs" }

// SubscriptionSlotTTL is the life of a subscription connection's slot.
const SubscriptionSlotTTL = time.Minute

// BackupLock is the lock (string: the holder's random token) of the replica running the
// scheduled backup round; it lives BackupLockTTL, renewed every third of it.
const BackupLock = "platform:backups:lock"

// BackupLockTTL is the life of BackupLock.
const BackupLockTTL = time.Minute

// BackupProjectLock is the lock (string: the holder's random token) of the replica taking a
// backup of a project, or pruning its backups and their files, so that a prune never removes
// a file a backup being taken counts on; it lives BackupProjectLockTTL, renewed every third
// of it.
func BackupProjectLock(project string) string { return "backups:{" + project + "}:lock" }

// BackupProjectLockTTL is the life of BackupProjectLock.
const BackupProjectLockTTL = time.Minute

// FileSweepLock is the lock (string: the holder's random token) of the replica removing the
// files no record names; it lives FileSweepLockTTL, renewed every third of it.
const FileSweepLock = "platform:files:sweep:lock"

// FileSweepLockTTL is the life of FileSweepLock.
const FileSweepLockTTL = time.Minute

// WebhookLock is the lock (string: the holder's random token) of the replica delivering a
// project's webhooks; it lives WebhookLockTTL, renewed every third of it.
func WebhookLock(project string) string { return "webhooks:{" + project + "}:lock" }

// WebhookLockTTL is the life of WebhookLock: how long the deliveries of a project whose
// replica died wait for another.
const WebhookLockTTL = 15 * time.Second

// ConsoleSession is a console session (string: JSON of its CSRF token and the hash of the
// key it signed in with), by the SHA-256 of its cookie; it lives the console's session
// TTL (30 min by default), renewed on each use.
func ConsoleSession(cookieHash string) string { return "console:session:" + cookieHash }

// PersistedQuery is a document a client sent in full with its SHA-256 (Apollo's automatic
// persisted queries); it lives --apq-ttl (24 h) from when it was last sent in full.
func PersistedQuery(project, hash string) string { return "apq:{" + project + "}:" + hash }

// PersistedQueries is the sorted set (hash -> expiry in ms) of a project's PersistedQuery
// keys, to forget the oldest past --apq-max; it lives --apq-ttl.
func PersistedQueries(project string) string { return "apq:{" + project + "}" }

// MCPPrefix is the MCP server's prefix unless configured (mcpserver.Config.KeyPrefix).
const MCPPrefix = "mcp:"

// MCP is the MCP server's keyspace under its prefix.
// Sessions live SessionTTL (1 h), renewed at most every TTL/60 per replica.
type MCP struct{ Prefix string }

// Session is a session's hash: protocol version, log level, delivery cursor, kind,
// capabilities.
func (k MCP) Session(id string) string { return k.Prefix + "s:{" + id + "}" }

// SessionSubs is the set of resource URIs a session subscribed to.
func (k MCP) SessionSubs(id string) string { return k.Prefix + "s:{" + id + "}:subs" }

// SessionEvents is the stream of a session's undelivered notifications (ids are SSE event
// ids), capped at the event backlog.
func (k MCP) SessionEvents(id string) string { return k.Prefix + "s:{" + id + "}:ev" }

// SessionOwner is the token of the GET stream delivering a session.
func (k MCP) SessionOwner(id string) string { return k.Prefix + "s:{" + id + "}:owner" }

// Sessions is the sorted set of session ids -> expiry (ms), to count and broadcast; it has
// no TTL, members are cleaned when counted or deleted.
func (k MCP) Sessions() string { return k.Prefix + "sessions" }

// Subscribers is the set of sessions subscribed to a resource; no TTL, members are removed
// on unsubscribe, session end, or when found gone.
func (k MCP) Subscribers(uri string) string { return k.Prefix + "sub:" + uri }

// Rate is a client's exact sliding window: a sorted set of its accepted requests of the
// last window; it lives the window.
func (k MCP) Rate(client string) string { return k.Prefix + "rl:{" + client + "}" }

// Concurrency is a client's slot set; it lives as long as its longest slot.
func (k MCP) Concurrency(client string) string { return k.Prefix + "conc:{" + client + "}" }

// Wake is the pub/sub channel of "a session has new events" (payload: session id).
func (k MCP) Wake() string { return k.Prefix + "wake" }

// Cancel is the pub/sub channel of "cancel this in-flight request" (payload: session id
// NUL request id).
func (k MCP) Cancel() string { return k.Prefix + "cancel" }

// Reply is the pub/sub channel of a client's answer to a server request.
func (k MCP) Reply() string { return k.Prefix + "reply" }
