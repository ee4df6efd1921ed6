package security

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
)

// token is a lexical token that matters to the rules: code (names, keywords, operators,
// punctuation, numbers) or a whole string literal. Comments and whitespace are dropped.
type token struct {
	str    bool   // a string literal
	interp bool   // a string with interpolated expressions (f"..{x}", `..${x}`, "#{x}")
	text   string // code text, or the string's content without quotes
	line   int
}

// lexerNames maps Linguist language names to chroma lexers for the languages the rules know.
var lexerNames = map[string]string{
	"Python": "python", "JavaScript": "javascript", "TypeScript": "typescript", "TSX": "tsx",
	"Java": "java", "PHP": "php", "Ruby": "ruby", "C#": "csharp", "Kotlin": "kotlin",
}

// tokenize lexes src with chroma's lexer for language; ok is false for other languages.
func tokenize(language string, src string) ([]token, bool) {
	name, ok := lexerNames[language]
	if !ok {
		return nil, false
	}
	lx := lexers.Get(name)
	if lx == nil {
		return nil, false
	}
	if language == "PHP" {
		lx = chroma.Coalesce(lx)
	}
	it, err := lx.Tokenise(&chroma.TokeniseOptions{State: "root", EnsureLF: true}, src)
	if err != nil {
		return nil, false
	}
	var out []token
	line := 1
	depth := 0 // inside an interpolation of the current string
	var cur *token
	flush := func() {
		if cur != nil {
			cur.text = strings.Trim(cur.text, "\"'`")
			out = append(out, *cur)
			cur = nil
		}
	}
	for _, t := range it.Tokens() {
		start := line
		line += strings.Count(t.Value, "\n")
		isStr := t.Type.InSubCategory(chroma.LiteralString)
		switch {
		case t.Type == chroma.LiteralStringInterpol:
			if cur == nil {
				cur = &token{str: true, line: start}
			}
			// Only expression interpolation counts: "%s" in a Python string is lexed as
			// interpolation too, yet it is how a bound parameter is written.
			if strings.HasSuffix(t.Value, "{") {
				cur.interp = true
				depth++
			} else if strings.HasPrefix(t.Value, "}") && depth > 0 {
				depth--
			}
			cur.text += t.Value
		case depth > 0 && cur != nil:
			cur.text += t.Value // the interpolated expression
		case isStr:
			if cur == nil {
				cur = &token{str: true, line: start}
			}
			if t.Type != chroma.LiteralStringAffix {
				cur.text += t.Value
			}
		case t.Type.InCategory(chroma.Comment), t.Type.InCategory(chroma.Text), t.Type == chroma.TextWhitespace:
			if strings.TrimSpace(t.Value) == "" && cur != nil && !strings.Contains(t.Value, "\n") {
				continue // whitespace between adjacent string pieces
			}
			flush()
		default:
			flush()
			v := strings.TrimSpace(t.Value)
			if v == "" {
				continue
			}
			// Chroma may lex "a.b" or "?->" as one token: split on dots so that rules see
			// qualified names the same way in every language.
			for _, part := range splitKeep(v, ".") {
				out = append(out, token{text: part, line: start})
			}
		}
	}
	flush()
	return out, true
}

// splitKeep splits s around sep, keeping sep as its own element.
func splitKeep(s, sep string) []string {
	if s == sep || !strings.Contains(s, sep) {
		return []string{s}
	}
	var out []string
	for i, p := range strings.Split(s, sep) {
		if i > 0 {
			out = append(out, sep)
		}
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// codeRule is a rule over tokens. match reports, at token i, whether the rule applies and
// the line to report.
type codeRule struct {
	id          string
	category    string // CategoryCode unless set
	languages   []string
	severity    string
	cwe         string
	message     string
	remediation string
	// describe, when set, words one finding (naming the variable, masking the value).
	describe func(ts []token, i int) string
	match    func(ts []token, i int, lang string, fx *facts) bool
}

// at reports whether the code tokens from i spell parts.
func at(ts []token, i int, parts ...string) bool {
	if i+len(parts) > len(ts) {
		return false
	}
	for k, p := range parts {
		if ts[i+k].str || ts[i+k].text != p {
			return false
		}
	}
	return true
}

// args returns the tokens between the parenthesis at ts[open] and its match.
func args(ts []token, open int) []token {
	if open >= len(ts) || ts[open].text != "(" || ts[open].str {
		return nil
	}
	depth := 0
	for j := open; j < len(ts); j++ {
		if ts[j].str {
			continue
		}
		switch ts[j].text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
			if depth == 0 {
				return ts[open+1 : j]
			}
		}
	}
	return ts[open+1:]
}

// call matches a call of the dotted name (e.g. "hashlib.md5") at i and returns its arguments.
// It runs for every token and rule, so it compares in place instead of splitting the name.
func call(ts []token, i int, dotted string) ([]token, bool) {
	if i >= len(ts) || ts[i].str || !strings.HasPrefix(dotted, ts[i].text) {
		return nil, false // the common case, decided without scanning the name
	}
	k, parts := i, 0
	for rest := dotted; ; {
		part, tail, more := strings.Cut(rest, ".")
		if k >= len(ts) || ts[k].str || ts[k].text != part {
			return nil, false
		}
		k++
		parts++
		if !more {
			break
		}
		if k >= len(ts) || ts[k].str || ts[k].text != "." {
			return nil, false
		}
		k++
		rest = tail
	}
	// "x.md5(" must not match "md5": an unqualified name must not follow a dot.
	if parts == 1 && i > 0 && !ts[i-1].str && ts[i-1].text == "." {
		return nil, false
	}
	if k >= len(ts) || ts[k].str || ts[k].text != "(" {
		return nil, false
	}
	return args(ts, k), true
}

// dynamic reports whether an argument list is something other than one plain literal.
func dynamic(a []token) bool {
	if len(a) == 0 {
		return false
	}
	first := a
	for k, t := range a {
		if !t.str && t.text == "," {
			first = a[:k]
			break
		}
	}
	return !(len(first) == 1 && first[0].str && !first[0].interp)
}

func hasKeyword(a []token, key, value string) bool {
	for k := 0; k+2 < len(a); k++ {
		if at(a, k, key) && (at(a, k+1, "=") || at(a, k+1, ":")) && !a[k+2].str && a[k+2].text == value {
			return true
		}
	}
	return false
}

func firstString(a []token) string {
	if len(a) > 0 && a[0].str {
		return strings.ToLower(a[0].text)
	}
	return ""
}

var (
	sqlStart     = regexp.MustCompile(`(?is)^\s*(select\s.+\sfrom|insert\s+into|update\s+\S+\s+set|delete\s+from)\b`)
	weakHashName = regexp.MustCompile(`^(md5|md4|md2|sha1|sha-1)$`)
	weakCipher   = regexp.MustCompile(`(?i)^(des|des-.*|desede.*|3des.*|rc2.*|rc4.*|arcfour|blowfish|bf-.*|.*-ecb|aes/ecb/.*|aes|des/.*)$`)
	secretIdent  = regexp.MustCompile(`(?i)(token|passw|secret|salt|nonce|otp|session|csrf|apikey|api_key|reset)`)
)

var (
	scripts = []string{"Python", "Ruby", "PHP", "JavaScript", "TypeScript", "TSX"}
	all     = []string{"Python", "JavaScript", "TypeScript", "TSX", "Java", "PHP", "Ruby", "C#", "Kotlin"}
)

// codeRules are the rules for languages other than Go (which gosec covers).
var codeRules = []codeRule{
	{
		id: "code/sql-injection", languages: all, severity: "high", cwe: "CWE-89",
		message:     "SQL statement built from a string and a variable (concatenation, formatting or interpolation)",
		remediation: "Pass values as bound parameters (cursor.execute(sql, params), PreparedStatement, $1 placeholders); never build SQL text from input",
		match:       sqlInjection,
	},
	{
		id: "code/hardcoded-credential", category: CategorySecret, languages: all, severity: "high", cwe: "CWE-798",
		message:     "credential written in the source",
		remediation: "Load the credential at run time from the environment or a secret manager, rotate the one in the history, and keep only a placeholder in the code",
		match:       hardcodedCredential,
		describe: func(ts []token, i int) string {
			name, value := credentialAt(ts, i)
			return fmt.Sprintf("credential %s written in the source: %s", name, mask(value))
		},
	},
	{
		id: "code/command-injection", languages: all, severity: "high", cwe: "CWE-78",
		message:     "shell command built from a variable",
		remediation: "Run a fixed program with an argument list (subprocess.run([...]), execFile, ProcessBuilder) and no shell; validate arguments against an allow-list",
		match: func(ts []token, i int, lang string, _ *facts) bool {
			for _, f := range []string{"os.system", "os.popen", "child_process.exec", "child_process.execSync",
				"shell_exec", "passthru", "proc_open", "popen", "system", "execSync"} {
				if a, ok := call(ts, i, f); ok && dynamic(a) {
					return true
				}
			}
			for _, f := range []string{"subprocess.run", "subprocess.call", "subprocess.Popen", "subprocess.check_output", "subprocess.check_call"} {
				if a, ok := call(ts, i, f); ok && hasKeyword(a, "shell", "True") {
					return true
				}
			}
			if at(ts, i, "getRuntime", "(", ")", ".", "exec", "(") {
				return dynamic(args(ts, i+5))
			}
			if lang == "Python" {
				return false // Python's exec runs Python code: code/eval
			}
			if a, ok := call(ts, i, "exec"); ok && dynamic(a) {
				return true // exec(cmd) from child_process, PHP exec($cmd), Ruby exec
			}
			return false
		},
	},
	{
		id: "code/eval", languages: scripts, severity: "high", cwe: "CWE-95",
		message:     "code evaluated from a string that is not a constant",
		remediation: "Do not evaluate strings as code: parse data with a real parser (json.loads, ast.literal_eval, JSON.parse) or dispatch on an allow-list",
		match: func(ts []token, i int, lang string, _ *facts) bool {
			if i > 0 && !ts[i-1].str && ts[i-1].text == "." {
				return false
			}
			names := []string{"eval", "instance_eval", "class_eval"}
			if lang == "Python" {
				names = append(names, "exec")
			}
			for _, f := range names {
				if a, ok := call(ts, i, f); ok && dynamic(a) {
					return true
				}
			}
			return at(ts, i, "new", "Function", "(")
		},
	},
	{
		id: "code/unsafe-deserialization", languages: all, severity: "high", cwe: "CWE-502",
		message:     "deserialisation that can instantiate arbitrary objects",
		remediation: "Deserialise untrusted data only with data-only formats (JSON, yaml.safe_load, allow-listed ObjectInputFilter); never pickle/Marshal/unserialize input",
		match: func(ts []token, i int, lang string, _ *facts) bool {
			for _, f := range []string{"pickle.load", "pickle.loads", "cPickle.loads", "marshal.loads", "marshal.load",
				"shelve.open", "Marshal.load", "unserialize", "jsonpickle.decode"} {
				if _, ok := call(ts, i, f); ok {
					return true
				}
			}
			if a, ok := call(ts, i, "yaml.load"); ok {
				for _, t := range a {
					if !t.str && (t.text == "SafeLoader" || t.text == "CSafeLoader") {
						return false
					}
				}
				return true
			}
			if _, ok := call(ts, i, "YAML.load"); ok {
				return true
			}
			return at(ts, i, "new", "ObjectInputStream", "(") || at(ts, i, "new", "XMLDecoder", "(") ||
				at(ts, i, "new", "BinaryFormatter", "(")
		},
	},
	{
		id: "code/weak-hash", languages: all, severity: "medium", cwe: "CWE-328",
		message:     "MD5 or SHA-1 used (broken for signatures, passwords and integrity)",
		remediation: "Use SHA-256 or stronger for integrity, and bcrypt, scrypt or Argon2 for passwords",
		match: func(ts []token, i int, lang string, _ *facts) bool {
			for _, f := range []string{"hashlib.md5", "hashlib.sha1", "md5", "sha1", "Digest.MD5", "Digest.SHA1"} {
				if _, ok := call(ts, i, f); ok {
					return true
				}
			}
			if at(ts, i, "Digest", "::", "MD5") || at(ts, i, "Digest", "::", "SHA1") {
				return true
			}
			for _, f := range []string{"hashlib.new", "crypto.createHash", "createHash", "MessageDigest.getInstance", "getInstance"} {
				if a, ok := call(ts, i, f); ok && weakHashName.MatchString(firstString(a)) {
					return true
				}
			}
			return false
		},
	},
	{
		id: "code/weak-cipher", languages: all, severity: "high", cwe: "CWE-327",
		message:     "broken cipher or ECB mode",
		remediation: "Use AES-GCM or ChaCha20-Poly1305 with a fresh random nonce per message",
		match: func(ts []token, i int, lang string, _ *facts) bool {
			for _, f := range []string{"DES.new", "DES3.new", "ARC4.new", "ARC2.new", "Blowfish.new", "crypto.createCipher", "createCipher"} {
				if _, ok := call(ts, i, f); ok {
					return true
				}
			}
			if at(ts, i, "AES", ".", "MODE_ECB") || at(ts, i, "modes", ".", "ECB") {
				return true
			}
			for _, f := range []string{"crypto.createCipheriv", "createCipheriv", "Cipher.getInstance"} {
				if a, ok := call(ts, i, f); ok && weakCipher.MatchString(firstString(a)) {
					return true
				}
			}
			return false
		},
	},
	{
		id: "code/tls-verification-disabled", languages: all, severity: "high", cwe: "CWE-295",
		message:     "TLS certificate verification disabled",
		remediation: "Keep certificate verification on; to trust a private CA, add its certificate to the trust store or pass it explicitly (verify='/path/ca.pem', ca: [...])",
		match: func(ts []token, i int, lang string, _ *facts) bool {
			if at(ts, i, "verify", "=", "False") || at(ts, i, "rejectUnauthorized", ":", "false") ||
				at(ts, i, "ssl", ".", "_create_unverified_context") || at(ts, i, "ssl", ".", "CERT_NONE") ||
				at(ts, i, "OpenSSL", "::", "SSL", "::", "VERIFY_NONE") || at(ts, i, "NoopHostnameVerifier") ||
				at(ts, i, "ALLOW_ALL_HOSTNAME_VERIFIER") {
				return true
			}
			if at(ts, i, "CURLOPT_SSL_VERIFYPEER", ",") && i+2 < len(ts) && (ts[i+2].text == "false" || ts[i+2].text == "0") {
				return true
			}
			if ts[i].str && ts[i].text == "NODE_TLS_REJECT_UNAUTHORIZED" || at(ts, i, "NODE_TLS_REJECT_UNAUTHORIZED") {
				for k := i + 1; k < min(i+5, len(ts)); k++ {
					if ts[k].str && ts[k].text == "0" {
						return true
					}
				}
			}
			return false
		},
	},
	{
		id: "code/insecure-randomness", languages: all, severity: "medium", cwe: "CWE-338",
		message:     "predictable random number generator used for a security value",
		remediation: "Use a cryptographic generator: secrets.token_urlsafe / secrets.choice (Python), crypto.randomBytes / crypto.randomUUID (Node), SecureRandom (Java, Ruby)",
		match: func(ts []token, i int, lang string, _ *facts) bool {
			weak := at(ts, i, "Math", ".", "random", "(") || at(ts, i, "new", "Random", "(") ||
				(at(ts, i, "random", ".") && i+2 < len(ts) && map[string]bool{"random": true, "randint": true, "choice": true,
					"choices": true, "getrandbits": true, "randrange": true, "sample": true}[ts[i+2].text] && (i == 0 || ts[i-1].text != "."))
			if !weak {
				return false
			}
			// Only when the statement names a security value: random numbers are fine for
			// jitter, sampling and games.
			for k := i - 1; k >= 0 && k >= i-8 && ts[k].line == ts[i].line; k-- {
				if !ts[k].str && secretIdent.MatchString(ts[k].text) {
					return true
				}
			}
			return false
		},
	},
}

// codeFindings applies the rules for language to one file.
func codeFindings(ctx context.Context, rel, language string, content []byte) []Finding {
	ts, ok := parseTokens(ctx, language, content)
	if !ok {
		ts, ok = tokenize(language, string(content))
	}
	if !ok {
		return nil
	}
	var out []Finding
	seen := map[string]bool{}
	fx := learnFacts(ts)
	for _, r := range codeRules {
		if !contains(r.languages, language) {
			continue
		}
		for i := range ts {
			if !r.match(ts, i, language, fx) {
				continue
			}
			key := fmt.Sprintf("%s:%d", r.id, ts[i].line)
			if seen[key] {
				continue
			}
			seen[key] = true
			msg, cat := r.message, r.category
			if r.describe != nil {
				msg = r.describe(ts, i)
			}
			if cat == "" {
				cat = CategoryCode
			}
			out = append(out, Finding{
				RuleID: r.id, Severity: r.severity, Category: cat, CWE: r.cwe,
				File: rel, Line: ts[i].line, Location: fmt.Sprintf("%s:%d", rel, ts[i].line),
				Message: msg, Remediation: r.remediation, Tool: "platform", Title: r.message,
			})
		}
	}
	return out
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
