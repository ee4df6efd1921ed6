package security

import (
	"regexp"
	"strings"
)

// facts are what the rules learn about a file before matching: which variables hold SQL text
// and which are declared with a numeric type, so that "q % uid" two lines after
// q = "SELECT ... %s" is an injection and "... WHERE id = " + count of an int is not.
type facts struct {
	sqlVars map[string]bool
	numeric map[string]bool
}

var numericTypes = map[string]bool{
	"int": true, "long": true, "short": true, "byte": true, "double": true, "float": true, "boolean": true, "bool": true,
	"Integer": true, "Long": true, "Short": true, "Double": true, "Float": true, "Boolean": true, "number": true, "UUID": true,
}

func learnFacts(ts []token) *facts {
	fx := &facts{sqlVars: map[string]bool{}, numeric: map[string]bool{}}
	for i := 0; i+2 < len(ts); i++ {
		a, b, c := ts[i], ts[i+1], ts[i+2]
		switch {
		case !a.str && !b.str && b.text == "=" && c.str && !c.interp && sqlStart.MatchString(c.text) && ident(a.text):
			fx.sqlVars[a.text] = true // q = "SELECT ...", String q = "SELECT ..."
		case !a.str && !b.str && numericTypes[a.text] && ident(b.text):
			fx.numeric[b.text] = true // int id, Integer id
		case !a.str && !b.str && !c.str && b.text == ":" && numericTypes[c.text] && ident(a.text):
			fx.numeric[a.text] = true // uid: int (Python), id: number (TypeScript)
		}
	}
	return fx
}

var identRE = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

func ident(s string) bool { return identRE.MatchString(s) && !keywords[s] }

var keywords = map[string]bool{"return": true, "if": true, "else": true, "and": true, "or": true, "not": true, "in": true, "new": true, "const": true, "let": true, "var": true}

// sqlInjection matches SQL text that a variable part extends: a SQL literal with an
// interpolation, or one whose concatenation chain, % formatting or .format() call takes a
// value that is not a literal, a constant (ALL_CAPS) or a number; and a variable known to hold
// SQL text extended the same way later in the file.
func sqlInjection(ts []token, i int, lang string, fx *facts) bool {
	t := ts[i]
	switch {
	case t.str && sqlStart.MatchString(t.text):
		return t.interp || unsafeTail(ts, i+1, lang, fx)
	case !t.str && fx.sqlVars[t.text] && (i == 0 || ts[i-1].str || ts[i-1].text != "."):
		if i+1 < len(ts) && !ts[i+1].str && ts[i+1].text == "+=" {
			_, safe := operand(ts, i+2, fx)
			return !safe
		}
		return unsafeTail(ts, i+1, lang, fx)
	case at(ts, i, "String", ".", "format", "("):
		a := args(ts, i+3)
		if len(a) == 0 || !a[0].str || !sqlStart.MatchString(a[0].text) {
			return false
		}
		for j := 1; j < len(a); {
			if a[j].str || a[j].text != "," {
				j++
				continue
			}
			end, safe := operand(a, j+1, fx)
			if !safe {
				return true
			}
			j = max(end, j+1)
		}
	}
	return false
}

// unsafeTail follows what comes after a piece of SQL text at j: further concatenated pieces,
// a % format, a .format() or .concat() call. It reports whether a variable part joins in.
func unsafeTail(ts []token, j int, lang string, fx *facts) bool {
	for j < len(ts) && !ts[j].str {
		switch op := ts[j].text; {
		case op == "+" || op == "||" || (op == "." && lang == "PHP" && j+1 < len(ts) && ts[j+1].text != "format"):
			end, safe := operand(ts, j+1, fx)
			if !safe {
				return true
			}
			j = end
		case op == "%" && (lang == "Python" || lang == "Ruby"):
			_, safe := operand(ts, j+1, fx)
			return !safe
		case op == "." && j+2 < len(ts) && (ts[j+1].text == "format" || ts[j+1].text == "concat"):
			a := args(ts, j+2)
			for k := 0; k < len(a); {
				end, safe := operand(a, k, fx)
				if !safe {
					return true
				}
				k = end + 1 // past the comma
			}
			return false
		default:
			return false
		}
	}
	return false
}

// safeCalls return numbers or fixed text whatever their argument.
var safeCalls = map[string]bool{"int": true, "float": true, "len": true, "parseInt": true, "parseLong": true, "Number": true}

// operand reads the primary expression at j (a literal, a name with its selectors, calls and
// indexes, or a parenthesised group) and reports where it ends and whether it is safe in SQL
// text: a plain literal, a number, a constant, a variable declared numeric, or a call that
// returns a number.
func operand(ts []token, j int, fx *facts) (end int, safe bool) {
	if j >= len(ts) {
		return j, true
	}
	t := ts[j]
	switch {
	case t.str:
		return j + 1, !t.interp
	case isNumber(t.text):
		return j + 1, true
	case t.text == "(" || t.text == "[":
		group := args(ts, j)
		safe := true
		for k := 0; k < len(group); {
			if !group[k].str && group[k].text == "," {
				k++
				continue
			}
			end, ok := operand(group, k, fx)
			safe = safe && ok
			k = max(end, k+1)
		}
		return j + len(group) + 2, safe
	case !ident(t.text):
		return j + 1, false
	}
	k := j + 1
	calls, last := 0, t.text
	for k < len(ts) && !ts[k].str {
		switch {
		case ts[k].text == "." && k+1 < len(ts) && !ts[k+1].str && ident(ts[k+1].text):
			last = ts[k+1].text
			k += 2
		case ts[k].text == "(" || ts[k].text == "[":
			if ts[k].text == "(" {
				calls++
			}
			k += len(args(ts, k)) + 2
		default:
			return k, primarySafe(t.text, last, calls, k-j, fx)
		}
	}
	return k, primarySafe(t.text, last, calls, k-j, fx)
}

var constantRE = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

func primarySafe(first, last string, calls, n int, fx *facts) bool {
	switch {
	case n == 1:
		return constantRE.MatchString(first) || fx.numeric[first]
	case calls > 0:
		return safeCalls[first] || safeCalls[last] || last == "length" || last == "size" || last == "count"
	}
	return false
}

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if (r < '0' || r > '9') && r != '.' && r != '_' {
			return false
		}
	}
	return true
}

// credentialName matches names that hold a credential: password, db_password, apiKey,
// CLIENT_SECRET, accessToken; not password_field, token_url or secret_name.
var credentialName = regexp.MustCompile(`(?i)(passw(or)?d|pwd|passphrase|secret|api_?key|access_?key|private_?key|secret_?key|auth_?token|access_?token|client_?secret)$`)

// placeholder matches values that stand for a credential rather than being one.
var placeholder = regexp.MustCompile(`^(\$\{.*\}|\{\{.*\}\}|<.*>|%\(.*\)s|\$[A-Z_]+|x+|\*+|changeme|change_me|your[-_ ].*|redacted)$`)

// credentialAt returns the name and the literal of an assignment, keyword argument or object
// property at i (name = "v", name: "v", "name": "v", name="v"); value is "" when there is none.
func credentialAt(ts []token, i int) (name, value string) {
	if i+2 >= len(ts) || ts[i+1].str || !ts[i+2].str || ts[i+2].interp {
		return "", ""
	}
	if op := ts[i+1].text; op != "=" && op != ":" && op != ":=" {
		return "", ""
	}
	if i+3 < len(ts) && !ts[i+3].str && (ts[i+3].text == "+" || ts[i+3].text == "%" || ts[i+3].text == ".") {
		return "", "" // the literal is only part of a larger expression
	}
	return ts[i].text, ts[i+2].text
}

// hardcodedCredential matches a credential-named variable, argument, key or property given a
// literal that is not empty, not a placeholder and not the name itself (KEY_PASSWORD = "password").
func hardcodedCredential(ts []token, i int, _ string, _ *facts) bool {
	name, value := credentialAt(ts, i)
	if name == "" || !credentialName.MatchString(name) {
		return false
	}
	if !ts[i].str && !ident(name) {
		return false
	}
	v := strings.TrimSpace(value)
	if len(v) < 4 || strings.ContainsAny(v, " \n\t") || placeholder.MatchString(strings.ToLower(v)) {
		return false
	}
	m := credentialName.FindString(name)
	return !strings.EqualFold(v, name) && !strings.EqualFold(v, m)
}
