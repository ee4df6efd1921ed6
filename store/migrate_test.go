package store_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/platform-dev/platform/store"
)

func scalar(s store.Scalar) store.FieldType { return store.FieldType{Scalar: s} }

// TestConvert: what converts to what, losslessly, and what does not.
func TestConvert(t *testing.T) {
	list := func(s store.Scalar) store.FieldType { return store.FieldType{Scalar: s, List: true} }
	for _, tc := range []struct {
		raw  string
		to   store.FieldType
		want string // the converted value as the store writes it; "" when it does not convert
	}{
		{`3`, scalar(store.Float), `3`},
		{`3`, scalar(store.Int), `3`},
		{`3.5`, scalar(store.Int), ``},
		{`3e9`, scalar(store.Int), ``},
		{`3.0`, scalar(store.Int), `3`},
		{`1.5`, scalar(store.String), `"1.5"`},
		{`true`, scalar(store.String), `"true"`},
		{`{"a": [1, 2]}`, scalar(store.String), `"{\"a\":[1,2]}"`},
		{`[1,2]`, scalar(store.ID), `"[1,2]"`},
		{`"42"`, scalar(store.Int), `42`},
		{`"4.2"`, scalar(store.Int), ``},
		{`"4.25"`, scalar(store.Float), `4.25`},
		{`"NaN"`, scalar(store.Float), ``},
		{`"abc"`, scalar(store.Float), ``},
		{`"true"`, scalar(store.Boolean), `true`},
		{`"yes"`, scalar(store.Boolean), ``},
		{`1`, scalar(store.Boolean), ``},
		{`true`, scalar(store.Float), ``},
		{`"2026-01-02T03:04:05Z"`, scalar(store.DateTime), `"2026-01-02T03:04:05.000Z"`},
		{`"2026-01-02T03:04:05.0001Z"`, scalar(store.DateTime), ``},
		{`5`, scalar(store.DateTime), ``},
		{`{"a":1}`, scalar(store.JSON), `{"a":1}`},
		{`"x"`, scalar(store.JSON), `"x"`},
		{`[1,"2"]`, list(store.Int), `[1,2]`},
		{`[1,"x"]`, list(store.Int), ``},
		{`7`, list(store.Int), `[7]`},
		{`[1]`, scalar(store.Int), ``},
		{`null`, scalar(store.Int), `null`},
	} {
		v, ok := store.Convert(json.RawMessage(tc.raw), tc.to)
		got := ""
		if ok {
			got = encode(t, v)
		}
		if got != tc.want {
			t.Errorf("Convert(%s, %s) = %s (%v), want %s", tc.raw, tc.to, got, ok, tc.want)
		}
	}
}

func encode(t *testing.T, v any) string {
	t.Helper()
	if tm, ok := v.(time.Time); ok {
		v = tm.Format(store.TimeLayout)
	}
	recs := map[string]any{"v": v}
	b, err := json.Marshal(recs)
	if err != nil {
		t.Fatal(err)
	}
	var back struct{ V json.RawMessage }
	_ = json.Unmarshal(b, &back)
	return string(back.V)
}

// TestConformanceMigrate: the data checks of a definition change, and the change applied,
// on both backends: a conversion that every value allows rewrites them (and filters follow);
// one that some value refuses names it and changes nothing; a check alone (dry run) changes
// nothing; a required field is filled with its default, or names a record that lacks it; a
// dropped table's records are gone.
func TestConformanceMigrate(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *store.Stores) {
		ctx := t.Context()
		def := func(n store.FieldType, more ...store.Field) []store.Table {
			return []store.Table{{Name: "m", Fields: append([]store.Field{{Name: "n", Type: n}, {Name: "name", Type: scalar(store.String)}}, more...),
				Indexes: []store.Index{{Fields: []string{"n"}}}}}
		}
		open := func(tables []store.Table) *store.Records {
			recs, err := s.ProjectRecords(ctx, "mig", "", tables)
			if err != nil {
				t.Fatal(err)
			}
			if err := recs.Ensure(ctx); err != nil {
				t.Fatal(err)
			}
			return recs
		}
		v1 := open(def(scalar(store.Int)))
		if err := v1.Insert(ctx, "m", "o", []map[string]any{{"name": "a", "n": int64(1)}, {"name": "b", "n": int64(20)}, {"name": "c"}}, nil); err != nil {
			t.Fatal(err)
		}
		count := func(recs *store.Records, f store.Filter) int64 {
			t.Helper()
			n, err := recs.Count(ctx, "m", f)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}

		// Int -> String: a check rewrites nothing; applied, values and filters follow.
		v2 := open(def(scalar(store.String)))
		conv := []store.FieldChange{{Field: "n", Convert: true, Type: scalar(store.String)}}
		checks, err := v2.Migrate(ctx, "m", conv, false)
		if err != nil || checks[0].Rewrites != 2 || checks[0].Fails != 0 {
			t.Fatalf("check Int -> String: %+v %v", checks, err)
		}
		if n := count(v2, store.Compare("n", store.Eq, "20")); n != 0 {
			t.Fatalf("a check rewrote %d records", n)
		}
		if checks, err = v2.Migrate(ctx, "m", conv, true); err != nil || checks[0].Rewrites != 2 {
			t.Fatalf("apply Int -> String: %+v %v", checks, err)
		}
		if n := count(v2, store.Compare("n", store.Eq, "20")); n != 1 {
			t.Fatalf("after Int -> String, n = \"20\" counts %d", n)
		}
		var got []struct {
			N *string `json:"n"`
		}
		if err := v2.Find(ctx, "m", store.Query{Order: []store.Order{{Key: "n"}}}, &got); err != nil || len(got) != 3 || got[0].N != nil || *got[1].N != "1" || *got[2].N != "20" {
			t.Fatalf("ordered by n after Int -> String: %+v %v", got, err)
		}

		// String -> Boolean: refused, nothing changes; the example is a record's value.
		v3 := open(def(scalar(store.Boolean)))
		refuse := []store.FieldChange{{Field: "n", Convert: true, Type: scalar(store.Boolean)}}
		for _, apply := range []bool{false, true} {
			checks, err = v3.Migrate(ctx, "m", refuse, apply)
			if err != nil || checks[0].Fails != 2 || checks[0].Example == "" || (string(checks[0].Value) != `"1"` && string(checks[0].Value) != `"20"`) {
				t.Fatalf("String -> Boolean (apply %v): %+v %v", apply, checks, err)
			}
		}
		if n := count(v2, store.Compare("n", store.Eq, "20")); n != 1 {
			t.Fatalf("a refused change rewrote records: %d", n)
		}

		// A required field: without a default it names a record; with one it is written.
		v4 := open(def(scalar(store.String), store.Field{Name: "stock", Type: scalar(store.Int), Required: true}))
		checks, err = v4.Migrate(ctx, "m", []store.FieldChange{{Field: "stock", Require: true}}, true)
		if err != nil || checks[0].Fails != 3 || checks[0].Example == "" {
			t.Fatalf("required without a default: %+v %v", checks, err)
		}
		checks, err = v4.Migrate(ctx, "m", []store.FieldChange{{Field: "stock", Require: true, Default: 7.0}}, true)
		if err != nil || checks[0].Rewrites != 3 || checks[0].Fails != 0 {
			t.Fatalf("required with a default: %+v %v", checks, err)
		}
		if n := count(v4, store.Compare("stock", store.Eq, int64(7))); n != 3 {
			t.Fatalf("the default reached %d records, want 3", n)
		}

		// A dropped table comes back empty.
		if err := v4.DropTable(ctx, "m"); err != nil {
			t.Fatal(err)
		}
		if n := count(open(def(scalar(store.String))), store.All); n != 0 {
			t.Fatalf("a dropped table kept %d records", n)
		}
	})
}

// TestConformanceReadsAnyStoredType: a record whose values have other types than the
// definition says reads, every value converted where it converts and left out where not.
func TestConformanceReadsAnyStoredType(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *store.Stores) {
		ctx := t.Context()
		values := map[store.Scalar]any{
			store.String: "text", store.Int: int64(42), store.Float: 2.5, store.Boolean: true,
			store.ID: "42", store.DateTime: day(3), store.JSON: map[string]any{"k": "v"},
		}
		var fields []store.Field
		for _, sc := range store.Scalars {
			fields = append(fields, store.Field{Name: "f" + string(sc), Type: scalar(sc)})
		}
		stored, err := s.ProjectRecords(ctx, "any", "", []store.Table{{Name: "t", Fields: fields}})
		if err != nil {
			t.Fatal(err)
		}
		if err := stored.Ensure(ctx); err != nil {
			t.Fatal(err)
		}
		// Each field gets each other type's value.
		for _, v := range values {
			row := map[string]any{}
			for _, sc := range store.Scalars {
				row["f"+string(sc)] = v
			}
			if err := stored.Insert(ctx, "t", "o", []map[string]any{row}, nil); err != nil {
				t.Fatal(err)
			}
		}
		def := store.Table{Name: "t", Fields: fields}
		var n int
		err = stored.Each(ctx, "t", store.Query{}, func(rec store.Record) (bool, error) {
			n++
			if _, err := def.Values(rec); err != nil {
				t.Errorf("Values(%s): %v", rec, err)
			}
			fit, err := def.Fit(rec)
			if err != nil {
				t.Fatalf("Fit(%s): %v", rec, err)
			}
			var vals map[string]json.RawMessage
			_ = json.Unmarshal(fit, &vals)
			for _, f := range fields {
				if v, ok := vals[f.Name]; ok {
					if _, ok := store.Convert(v, f.Type); !ok {
						t.Errorf("Fit left %s = %s, not a %s", f.Name, v, f.Type)
					}
				}
			}
			return true, nil
		})
		if err != nil || n != len(values) {
			t.Fatalf("read %d records: %v", n, err)
		}
	})
}

// TestConformanceCheckUnique: the duplicates a unique index would refuse are found without
// building it; records without the field do not collide.
func TestConformanceCheckUnique(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *store.Stores) {
		ctx := t.Context()
		def := []store.Table{{Name: "u", Fields: []store.Field{{Name: "sku", Type: scalar(store.String)}, {Name: "x", Type: scalar(store.Int)}}}}
		recs, err := s.ProjectRecords(ctx, "uniq", "", def)
		if err != nil {
			t.Fatal(err)
		}
		if err := recs.Ensure(ctx); err != nil {
			t.Fatal(err)
		}
		if err := recs.Insert(ctx, "u", "o", []map[string]any{{"sku": "a"}, {"sku": "b"}, {"x": int64(1)}, {"x": int64(2)}}, nil); err != nil {
			t.Fatal(err)
		}
		unique := []store.Table{{Name: "u", Fields: def[0].Fields, Indexes: []store.Index{{Fields: []string{"sku"}, Unique: true}}}}
		checked, err := s.ProjectRecords(ctx, "uniq", "", unique)
		if err != nil {
			t.Fatal(err)
		}
		if err := checked.CheckUnique(ctx, "u"); err != nil {
			t.Fatalf("no duplicates: %v", err)
		}
		if err := recs.Insert(ctx, "u", "o", []map[string]any{{"sku": "a"}}, nil); err != nil {
			t.Fatal(err)
		}
		var ie *store.IndexError
		if err := checked.CheckUnique(ctx, "u"); !errors.As(err, &ie) || len(ie.Value) != 1 || ie.Value[0] != "a" {
			t.Fatalf("a duplicate sku: %v", err)
		}
	})
}
