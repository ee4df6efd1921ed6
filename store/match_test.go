package store_test

import (
	"strings"
	"testing"

	"github.com/platform-dev/platform/store"
)

// matched is names with the filter applied by Table.Match to every stored record instead
// of by the database, so that TestConformanceFilters holds Match to the backends' answers.
func matched(t *testing.T, recs *store.Records, f store.Filter) string {
	t.Helper()
	var b strings.Builder
	err := recs.Each(t.Context(), "items", store.Query{}, func(rec store.Record) (bool, error) {
		values, err := items.Values(rec)
		if err != nil {
			return false, err
		}
		if items.Match(f, values) {
			b.WriteString(values["name"].(string))
		}
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
