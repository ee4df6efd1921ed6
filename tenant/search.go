package tenant

import (
	"fmt"

	"github.com/platform-dev/platform/store"
)

// SearchDoc is a table's full-text search as the project document writes it.
type SearchDoc struct {
	Fields  []string           `json:"fields"`
	Weights map[string]float64 `json:"weights,omitempty"`
}

// The weights a searched field may have: a hundredfold either way of the default 1 is more
// than any ranking needs.
const (
	minSearchWeight = 0.01
	maxSearchWeight = 100
)

// checkSearch reports searched fields that the table does not have or that are not String,
// fields named twice, and weights of fields not searched or out of range.
func checkSearch(tpath string, t TableDoc, types map[string]store.FieldType, de *DocumentError) {
	if t.Search == nil {
		return
	}
	spath := tpath + ".search"
	if len(t.Search.Fields) == 0 {
		de.add(spath+".fields", "name at least one String field to search")
	}
	seen := map[string]bool{}
	for i, f := range t.Search.Fields {
		fpath := fmt.Sprintf("%s.fields.%d", spath, i)
		ft, ok := types[f]
		switch {
		case !ok && t.Fields[f].Type == "":
			de.add(fpath, "the table has no field %q", f)
		case ok && (ft.List || ft.Scalar != store.String):
			de.add(fpath, "%q is of type %s: only String fields can be searched", f, ft)
		case seen[f]:
			de.add(fpath, "%q is named twice", f)
		}
		seen[f] = true
	}
	for _, f := range sortedKeys(t.Search.Weights) {
		w := t.Search.Weights[f]
		switch {
		case !seen[f]:
			de.add(spath+".weights."+f, "%q is not one of search.fields", f)
		case w < minSearchWeight || w > maxSearchWeight:
			de.add(spath+".weights."+f, "%g: a weight is from %g to %g", w, float64(minSearchWeight), float64(maxSearchWeight))
		}
	}
}

// store is the Search the store keeps, nil for none.
func (d *SearchDoc) store() *store.Search {
	if d == nil {
		return nil
	}
	s := &store.Search{}
	for _, f := range d.Fields {
		w, ok := d.Weights[f]
		if !ok {
			w = 1
		}
		s.Fields = append(s.Fields, store.SearchField{Name: f, Weight: w})
	}
	return s
}
