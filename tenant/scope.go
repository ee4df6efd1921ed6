package tenant

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// Scope is what an operator key may do: read, or read and change, every project or one.
type Scope struct {
	// Project is the one project the key reaches; "" for every project.
	Project string
	// Change lets the key change what it reaches, not only read it.
	Change bool
}

// The scopes of operator keys, as operators write them.
const (
	ScopeOperator     = "operator"
	ScopeOperatorRead = "operator:read"
)

// ParseScope reads "operator", "operator:read", "project:<id>:admin" or "project:<id>:read".
func ParseScope(s string) (Scope, error) {
	switch s {
	case ScopeOperator:
		return Scope{Change: true}, nil
	case ScopeOperatorRead:
		return Scope{}, nil
	}
	if rest, ok := strings.CutPrefix(s, "project:"); ok {
		id, level, _ := strings.Cut(rest, ":")
		if err := ValidateID(id); err != nil {
			return Scope{}, fmt.Errorf("scope %q: %w", s, err)
		}
		switch level {
		case "admin":
			return Scope{Project: id, Change: true}, nil
		case "read":
			return Scope{Project: id}, nil
		}
	}
	return Scope{}, fmt.Errorf("scope %q: want operator, operator:read, project:<id>:admin or project:<id>:read", s)
}

func (s Scope) String() string {
	switch {
	case s.Project == "" && s.Change:
		return ScopeOperator
	case s.Project == "":
		return ScopeOperatorRead
	case s.Change:
		return "project:" + s.Project + ":admin"
	}
	return "project:" + s.Project + ":read"
}

// Reaches reports whether the scope lets its key see project id ("" asks for every project).
func (s Scope) Reaches(id string) bool { return s.Project == "" || s.Project == id && id != "" }

// Allows reports whether the scope allows what n needs, for the project n names.
func (s Scope) Allows(n Need, project string) bool {
	if n.Change && !s.Change {
		return false
	}
	if s.Project == "" {
		return true
	}
	return n.Project != nil && project == s.Project
}

// Operator is the holder of a key: its name and scope.
type Operator struct {
	Name  string
	Scope Scope
	// hash identifies the key (its SHA-256), for a console session to check it again.
	hash string
}

// KeyHash identifies the operator's key without being it: a console session keeps it to
// find out, at every request, whether the key still holds.
func (o *Operator) KeyHash() string { return o.hash }

type operatorKey struct{}

// WithOperator names the operator behind a request.
func WithOperator(ctx context.Context, op *Operator) context.Context {
	return context.WithValue(ctx, operatorKey{}, op)
}

// OperatorOf is the operator behind a request (nil when none signed it).
func OperatorOf(ctx context.Context) *Operator {
	op, _ := ctx.Value(operatorKey{}).(*Operator)
	return op
}

// Need is what an admin route needs of the key that calls it: to change or only read, and
// the project it touches (nil: every project, so only the operator scopes reach it).
type Need struct {
	Change  bool
	Project func(echo.Context) string
}

// The needs of the admin routes. Every route declares one where it is registered
// (g.GET(path, h, Needs(ReadProject))); the route × scope test refuses a route that does not.
var (
	// NeedRead: operator or operator:read.
	NeedRead = Need{}
	// NeedOperator: operator only.
	NeedOperator = Need{Change: true}
	// NeedReadProject: the project of the path's :id, read.
	NeedReadProject = Need{Project: pathID}
	// NeedAdminProject: the project of the path's :id, changed.
	NeedAdminProject = Need{Change: true, Project: pathID}
)

func pathID(c echo.Context) string { return c.Param("id") }

// Needs refuses, with 403, a key whose scope does not allow what n needs.
func Needs(n Need) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			op := OperatorOf(c.Request().Context())
			project := ""
			if n.Project != nil {
				project = n.Project(c)
			}
			if op == nil || !op.Scope.Allows(n, project) {
				scope := "none"
				if op != nil {
					scope = op.Scope.String()
				}
				return WriteError(c, http.StatusForbidden, CodeForbidden, fmt.Sprintf("the key's scope %s does not allow %s %s", scope, c.Request().Method, c.Request().URL.Path), "scope", scope)
			}
			return next(c)
		}
	}
}
