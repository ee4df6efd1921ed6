package code

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// jsExports is a package.json "exports" value. Order matters in it (the first condition a
// resolver accepts wins), so objects keep their keys in order, which a Go map would lose.
type jsExports struct {
	target string      // a string
	null   bool        // null: the subpath is not exported
	items  []jsExports // an array: the first that resolves
	keys   []string    // an object: subpaths ("./x") or conditions ("import")
	vals   []jsExports
}

// parseJSExports reads an "exports" value; nil when there is none.
func parseJSExports(raw json.RawMessage) (*jsExports, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	var e jsExports
	if err := e.decode(dec, 0); err != nil {
		return nil, fmt.Errorf("exports: %w", err)
	}
	return &e, nil
}

func (e *jsExports) decode(dec *json.Decoder, depth int) error {
	if depth > 16 {
		return errors.New("nested too deep")
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok := tok.(type) {
	case nil:
		e.null = true
	case string:
		e.target = tok
	case json.Delim:
		for dec.More() {
			var v jsExports
			if tok == '{' {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				e.keys = append(e.keys, fmt.Sprint(k))
				if err := v.decode(dec, depth+1); err != nil {
					return err
				}
				e.vals = append(e.vals, v)
				continue
			}
			if err := v.decode(dec, depth+1); err != nil {
				return err
			}
			e.items = append(e.items, v)
		}
		if _, err := dec.Token(); err != nil && !errors.Is(err, io.EOF) {
			return err
		}
	default:
		e.null = true // numbers and booleans export nothing
	}
	return nil
}

// resolve maps a subpath ("." or "./x") to the target Node's resolver would pick under
// conds, following its PACKAGE_EXPORTS_RESOLVE: exact subpaths, then "*" patterns, the
// longest prefix first.
func (e *jsExports) resolve(sub string, conds []string) (string, bool) {
	if len(e.keys) == 0 || !strings.HasPrefix(e.keys[0], ".") {
		if sub != "." {
			return "", false
		}
		return e.pick(conds, "")
	}
	best, star := -1, ""
	for i, k := range e.keys {
		if k == sub {
			return e.vals[i].pick(conds, "")
		}
		prefix, suffix, wild := strings.Cut(k, "*")
		if wild && strings.HasPrefix(sub, prefix) && strings.HasSuffix(sub, suffix) && len(sub) >= len(prefix)+len(suffix) &&
			(best < 0 || len(prefix) > len(strings.Split(e.keys[best], "*")[0])) {
			best, star = i, sub[len(prefix):len(sub)-len(suffix)]
		}
	}
	if best < 0 {
		return "", false
	}
	return e.vals[best].pick(conds, star)
}

// pick follows conditions and fallbacks to a target.
func (e *jsExports) pick(conds []string, star string) (string, bool) {
	switch {
	case e.null:
		return "", false
	case e.target != "":
		return strings.ReplaceAll(e.target, "*", star), true
	case e.items != nil:
		for _, it := range e.items {
			if t, ok := it.pick(conds, star); ok {
				return t, true
			}
		}
	}
	for i, k := range e.keys {
		if k == "default" || slices.Contains(conds, k) {
			if t, ok := e.vals[i].pick(conds, star); ok {
				return t, true
			}
		}
	}
	return "", false
}
