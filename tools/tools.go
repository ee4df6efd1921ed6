// Package tools is the contract between the MCP server and the analyses it serves.
//
// An analysis is a plain Go value that implements Tool (and, when it keeps a document that
// clients may read, Resource). The MCP server knows nothing of what an analysis does: it lists
// the Specs, validates arguments against InputSchema, calls Call with a context that carries the
// request deadline, and turns the result or error into the wire format. Adding an analysis
// therefore never touches the server.
package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
)

// Spec describes a tool as tools/list shows it.
type Spec struct {
	Name        string
	Title       string
	Description string
	// InputSchema is a JSON Schema (draft 2020-12) object for the arguments. The server
	// validates every call against it before Call runs, so Call sees well-typed arguments.
	InputSchema json.RawMessage
	// OutputSchema is a JSON Schema object that the structured result conforms to.
	OutputSchema json.RawMessage
}

// Tool is one analysis.
type Tool interface {
	Spec() Spec
	// Call runs the analysis. args is the JSON object the client sent (already validated
	// against the input schema; defaults are the tool's to apply). The result is marshalled to
	// JSON as the call's structuredContent and text. An *ArgumentError becomes a JSON-RPC
	// invalid-params error; a context error becomes a timeout; any other error is a tool
	// failure reported to the client with isError true.
	Call(ctx context.Context, args json.RawMessage) (any, error)
}

// ArgumentError says that an argument is unacceptable for a reason the schema cannot express
// (a path outside the workspace, a component that does not exist as a path, ...).
type ArgumentError struct {
	Argument string // the argument's name, e.g. "path"
	Reason   string
}

func (e *ArgumentError) Error() string {
	return fmt.Sprintf("argument %q: %s", e.Argument, e.Reason)
}

// InvalidArgument returns an *ArgumentError.
func InvalidArgument(arg, format string, a ...any) error {
	return &ArgumentError{Argument: arg, Reason: fmt.Sprintf(format, a...)}
}

// IsArgumentError reports whether err is or wraps an *ArgumentError, and returns it.
func IsArgumentError(err error) (*ArgumentError, bool) {
	var ae *ArgumentError
	ok := errors.As(err, &ae)
	return ae, ok
}

// ResourceInfo describes a resource as resources/list shows it.
type ResourceInfo struct {
	URI         string
	Name        string
	Description string
	MIMEType    string
}

// Resource is a document that clients read with resources/read.
type Resource interface {
	Info() ResourceInfo
	// Read returns the current content, marshalled to JSON by the server.
	Read(ctx context.Context) (any, error)
}

// Hub carries "this resource changed" signals from the analyses to the server, which
// notifies subscribers. The zero value is ready to use.
type Hub struct {
	mu        sync.Mutex
	listeners []func(uri string)
}

// Listen registers fn to be called, on the caller's goroutine of Updated, for every change.
func (h *Hub) Listen(fn func(uri string)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.listeners = append(h.listeners, fn)
}

// Updated tells every listener that the resource at uri has new content.
func (h *Hub) Updated(uri string) {
	h.mu.Lock()
	ls := append([]func(string){}, h.listeners...)
	h.mu.Unlock()
	for _, fn := range ls {
		fn(uri)
	}
}

// Set is what the server serves: the tools in tools/list order and the resources they keep.
type Set struct {
	Tools     []Tool
	Resources []Resource
}

// Progress reports how far a long call has got. The server installs one per call whose client
// asked for progress (a progressToken), so analyses report without knowing the protocol; total
// is 0 when unknown.
type Progress func(progress, total float64, message string)

type progressKey struct{}

// WithProgress returns a context whose calls to ReportProgress reach fn.
func WithProgress(ctx context.Context, fn Progress) context.Context {
	return context.WithValue(ctx, progressKey{}, fn)
}

// ReportProgress tells the caller of a tool how far it has got; it does nothing when the client
// asked for no progress. Analyses call it at natural steps (files walked, files scanned), not in
// tight loops: each call may become a message to the client.
func ReportProgress(ctx context.Context, progress, total float64, message string) {
	if fn, ok := ctx.Value(progressKey{}).(Progress); ok && fn != nil {
		fn(progress, total, message)
	}
}
