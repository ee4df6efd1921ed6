package gql

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"

	"github.com/platform-dev/platform/store"
)

// MaxBatch is the most records one createproducts call writes.
const MaxBatch = 1000

// batchNames are the names of a table's batch mutations: the table's name after the verb
// (createproducts, and createProducts in camelCase), or createManyX when the table's name is
// its type's and that spelling is the single record's mutation.
func batchNames(t Table) (create, update, del []string) {
	camel := capitalized(t.Name)
	spell := func(verb string) []string {
		if t.Name == t.TypeName {
			return []string{verb + "Many" + camel}
		}
		return dedupe(verb+t.Name, verb+camel)
	}
	return spell("create"), spell("update"), spell("delete")
}

// writeBatchMutations writes the batch mutations of t into the Mutation type. Their results
// are nullable, so that one that fails answers null and leaves the document's other
// mutations their data.
func writeBatchMutations(b *strings.Builder, t Table) {
	n := namesOf(t)
	create, update, del := batchNames(t)
	for _, name := range create {
		fmt.Fprintf(b, "  %q\n  %s(data: [%s!]!): [%s!]\n", fmt.Sprintf("Create up to %d %s at once, all or none: every one is checked before any is written.", MaxBatch, t.Name), name, n.input, n.typ)
	}
	for _, name := range update {
		fmt.Fprintf(b, "  %q\n  %s(where: %s!, data: %s!): Int\n", "Set the fields given in data of every one of the "+t.Name+" matching where that you may update; answers how many changed.", name, n.where, n.input)
	}
	for _, name := range del {
		fmt.Fprintf(b, "  %q\n  %s(where: %s!): Int\n", "Delete every one of the "+t.Name+" matching where that you may delete; answers how many.", name, n.where)
	}
}

// batchResolvers binds t's batch mutations with add.
func (a *API) batchResolvers(t *table, add func(name string, fn reflect.Value)) {
	ctxType, argsType := reflect.TypeFor[context.Context](), reflect.TypeFor[args]()
	create := a.resolver(reflect.FuncOf([]reflect.Type{ctxType, argsType}, []reflect.Type{reflect.PointerTo(t.recs), errorType}, false), noted(a, "create", t.createMany))
	update := reflect.ValueOf(guarded(a, noted(a, "update", t.updateMany)))
	del := reflect.ValueOf(guarded(a, noted(a, "delete", t.deleteMany)))
	creates, updates, dels := batchNames(t.def)
	for _, name := range creates {
		add(name, create)
	}
	for _, name := range updates {
		add(name, update)
	}
	for _, name := range dels {
		add(name, del)
	}
}

// createMany answers createproducts(data): every record is read and allowed by the create
// rule before the store writes them all in one call, all or none.
func (t *table) createMany(ctx context.Context, a args) (reflect.Value, error) {
	items, ok := a.Data.v.([]any)
	if !ok {
		items = asList(a.Data.v)
	}
	if len(items) > MaxBatch {
		return reflect.Value{}, userError(CodeBadUserInput, fmt.Sprintf("data: at most %d %s per call, got %d: send them in several calls", MaxBatch, t.def.Name, len(items)))
	}
	all := make([]map[string]any, len(items))
	for i, item := range items {
		set, err := t.checkCreate(ctx, args{Data: argValue{set: true, v: item}})
		if err == nil {
			err = t.noUploads(set)
		}
		if err != nil {
			return reflect.Value{}, atIndex(err, i)
		}
		all[i] = set
	}
	recs, raw, err := t.insert(ctx, all)
	if err != nil {
		return reflect.Value{}, err
	}
	b := budgetFrom(ctx)
	for _, r := range raw {
		if err := b.take(t, 1, int64(len(r)), 1); err != nil {
			return reflect.Value{}, err
		}
	}
	out := reflect.New(t.recs)
	out.Elem().Set(reflect.MakeSlice(t.recs, len(recs), len(recs)))
	for i, rec := range recs {
		out.Elem().Index(i).Set(rec)
	}
	return out, t.withRelations(ctx, "", elems(out.Elem())...)
}

// atIndex makes an error about data (data.name ..., or a rule's refusal) name the record of
// the batch it is about: data[500].name ....
func atIndex(err error, i int) error {
	var e *Error
	if !errors.As(err, &e) {
		return err
	}
	at := fmt.Sprintf("data[%d]", i)
	msg, ok := strings.CutPrefix(e.Message, "data")
	if !ok {
		msg = ": " + e.Message
	}
	return &Error{Code: e.Code, Message: at + msg, Extra: e.Extra}
}

// updateMany answers updateproducts(where, data): the records where selects that the update
// rule allows change, in one store call.
func (t *table) updateMany(ctx context.Context, a args) (*int32, error) {
	set, unset, data, err := t.input(a.Data, false)
	if err == nil {
		err = t.noUploads(set)
	}
	if err != nil {
		return nil, err
	}
	f, err := t.batchFilter(ctx, Update, a.Where, data)
	if err != nil {
		return nil, err
	}
	touched := t.touchedFiles(set, unset)
	before, err := t.beforeWhere(ctx, f, touched != nil)
	if err != nil {
		return nil, err
	}
	recs, err := t.records.UpdateWhere(ctx, t.def.Name, f, set, unset)
	if err != nil {
		return nil, t.conflict(err)
	}
	if before != nil {
		chs := make([]store.Change, 0, len(recs))
		for _, r := range recs {
			uid, err := t.uidOf(json.RawMessage(r))
			if err != nil {
				return nil, err
			}
			if touched != nil {
				t.dropFiles(ctx, t.replaced(before[uid], json.RawMessage(r), touched))
			}
			chs = append(chs, t.change(store.Updated, uid, json.RawMessage(r), before[uid]))
		}
		t.published(ctx, chs...)
	}
	return counted(len(recs)), nil
}

// counted is how many records a batch wrote, as the nullable Int it answers.
func counted(n int) *int32 {
	c := int32(min(n, math.MaxInt32))
	return &c
}

// deleteMany answers deleteproducts(where): the records where selects that the delete rule
// allows are removed, in one store call.
func (t *table) deleteMany(ctx context.Context, a args) (*int32, error) {
	f, err := t.batchFilter(ctx, Delete, a.Where, nil)
	if err != nil {
		return nil, err
	}
	before, err := t.beforeWhere(ctx, f, t.files != nil)
	if err != nil {
		return nil, err
	}
	uids, err := t.records.DeleteWhere(ctx, t.def.Name, f)
	if err != nil {
		return nil, err
	}
	if t.files != nil {
		for _, uid := range uids {
			t.dropFiles(ctx, t.fileKeys(before[uid], nil))
		}
	}
	if before != nil {
		chs := make([]store.Change, len(uids))
		for i, uid := range uids {
			chs[i] = t.change(store.Deleted, uid, nil, before[uid])
		}
		t.published(ctx, chs...)
	}
	return counted(len(uids)), nil
}

// batchFilter is the filter of the records a batch update or delete touches: where, ANDed
// with the rule's filter. When the rule must see each record, the records where and the
// filter select are read and the filter narrows to the uids of those it allows.
func (t *table) batchFilter(ctx context.Context, op Operation, where argValue, data map[string]any) (store.Filter, error) {
	f, err := t.filter(where)
	if err != nil {
		return store.None, err
	}
	g := guardFrom(ctx)
	if g == nil {
		return f, nil
	}
	access, check, err := g.Filter(t.def.Name, op)
	if errors.Is(err, ErrForbidden) {
		return store.None, userError(CodeForbidden, fmt.Sprintf("you may not %s %s", op, t.def.Name))
	}
	if err != nil {
		return store.None, fmt.Errorf("%s rule of %s: %w", op, t.def.Name, err)
	}
	f = store.And(f, access)
	if !check {
		return f, nil
	}
	var allowed []any
	err = t.records.Each(ctx, t.def.Name, store.Query{Filter: f}, func(rec store.Record) (bool, error) {
		ok, err := t.allowed(g, op, rec, data)
		if !ok || err != nil {
			return err == nil, err
		}
		var key struct {
			UID string `json:"uid"`
		}
		if err := json.Unmarshal(rec, &key); err != nil {
			return false, fmt.Errorf("decode %s record: %w", t.def.Name, err)
		}
		allowed = append(allowed, key.UID)
		return true, nil
	})
	if err != nil {
		return store.None, err
	}
	if len(allowed) == 0 {
		return store.None, nil
	}
	return store.And(f, store.Compare(store.KeyUID, store.In, allowed)), nil
}
