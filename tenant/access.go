package tenant

// Access says who may read, create, update and delete a table's records. Each rule is a
// preset or a CEL expression; an empty rule means the default, authenticated.
type Access struct {
	Read   string `json:"read,omitempty"`
	Create string `json:"create,omitempty"`
	Update string `json:"update,omitempty"`
	Delete string `json:"delete,omitempty"`
}

// The presets.
const (
	RulePublic        = "public"
	RuleAuthenticated = "authenticated"
	RuleOwner         = "owner"
	RuleNobody        = "nobody"
)

func (a Access) rules() []struct{ name, rule string } {
	return []struct{ name, rule string }{
		{"read", a.Read}, {"create", a.Create}, {"update", a.Update}, {"delete", a.Delete},
	}
}

// check returns what is wrong with the rules, with paths relative to "access".
func (a Access) check() []Problem {
	var out []Problem
	for _, r := range a.rules() {
		switch r.rule {
		case "", RulePublic, RuleAuthenticated, RuleOwner, RuleNobody:
		default:
			out = append(out, Problem{Path: r.name, Message: "unknown rule " + quote(r.rule) + ": use public, authenticated, owner or nobody"})
		}
	}
	return out
}

func quote(s string) string { return "\"" + s + "\"" }
