package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/platform-dev/platform/internal/testenv"
	"github.com/platform-dev/platform/store"
)

// notes is the table the backup cases write: a unique index, so that a restore must rebuild
// it, and a payload, so that a backup takes long enough for writes to land during it.
var notes = store.Table{
	Name: "notes",
	Fields: []store.Field{
		{Name: "writer", Type: store.FieldType{Scalar: store.Int}},
		{Name: "seq", Type: store.FieldType{Scalar: store.Int}},
		{Name: "key", Type: store.FieldType{Scalar: store.String}},
		{Name: "at", Type: store.FieldType{Scalar: store.DateTime}},
		{Name: "body", Type: store.FieldType{Scalar: store.String}},
	},
	Indexes: []store.Index{{Fields: []string{"key"}, Unique: true}},
}

// seedWriter is the writer number of the records written before the load.
const seedWriter = 99

// ack is a write the store acknowledged: the record it answered, and when.
type ack struct {
	writer, seq int
	record      map[string]any
	at          time.Time
}

// writeLoad inserts notes from writers goroutines until stop closes, each writer one record
// at a time, and answers every acknowledged write.
func writeLoad(t *testing.T, recs *store.Records, writers int, stop <-chan struct{}) func() []ack {
	var mu sync.Mutex
	var acks []ack
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for seq := 0; ; seq++ {
				select {
				case <-stop:
					return
				default:
				}
				var out []map[string]any
				err := recs.Insert(context.Background(), "notes", fmt.Sprintf("writer%d", w), []map[string]any{{
					"writer": int64(w), "seq": int64(seq), "key": fmt.Sprintf("w%d-%d", w, seq),
					"at": time.Now().UTC(), "body": strings.Repeat("x", 200),
				}}, &out)
				if err != nil {
					t.Errorf("writer %d: %v", w, err)
					return
				}
				mu.Lock()
				acks = append(acks, ack{writer: w, seq: seq, record: out[0], at: time.Now()})
				mu.Unlock()
			}
		})
	}
	return func() []ack {
		wg.Wait()
		return acks
	}
}

func allRecords(t *testing.T, recs *store.Records, table string) map[string]map[string]any {
	t.Helper()
	var list []map[string]any
	if err := recs.Find(t.Context(), table, store.Query{}, &list); err != nil {
		t.Fatal(err)
	}
	out := make(map[string]map[string]any, len(list))
	for _, r := range list {
		out[r["uid"].(string)] = r
	}
	return out
}

// TestConformanceBackupUnderLoad takes a backup while writers insert, restores it in place and
// under another id, and compares every record: each write acknowledged before the backup
// began is there as acknowledged, nothing is there that was not written, and on SQLite the
// backup is one snapshot (each writer's records are a prefix of what it wrote).
func TestConformanceBackupUnderLoad(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *store.Stores) {
		ctx := t.Context()
		if _, _, err := s.Projects().Put(ctx, "conf", `{"id":"conf","v":1}`, store.Applied{}); err != nil {
			t.Fatal(err)
		}
		recs, err := s.ProjectRecords(ctx, "conf", "", []store.Table{notes})
		if err != nil {
			t.Fatal(err)
		}
		if err := recs.Ensure(ctx); err != nil {
			t.Fatal(err)
		}
		target := store.BackupFolder(filepath.Join(t.TempDir(), "backups"))

		// Records from before the load, so that a backup takes long enough to overlap it.
		var seeded []ack
		for batch := range 4 {
			rows := make([]map[string]any, 500)
			for i := range rows {
				seq := batch*len(rows) + i
				rows[i] = map[string]any{"writer": int64(seedWriter), "seq": int64(seq), "key": fmt.Sprintf("seed-%d", seq), "body": strings.Repeat("s", 500)}
			}
			var out []map[string]any
			if err := recs.Insert(ctx, "notes", "seed", rows, &out); err != nil {
				t.Fatal(err)
			}
			for i, r := range out {
				seeded = append(seeded, ack{writer: seedWriter, seq: batch*len(rows) + i, record: r, at: time.Now()})
			}
		}
		stop := make(chan struct{})
		wait := writeLoad(t, recs, 3, stop)
		time.Sleep(300 * time.Millisecond) // some records before the first backup
		var b store.Backup
		var began, ended time.Time
		// Several backups, to list them; the last is the one restored.
		for range 3 {
			time.Sleep(100 * time.Millisecond)
			began = time.Now()
			if b, err = s.TakeBackup(ctx, target, "conf", ""); err != nil {
				close(stop)
				wait()
				t.Fatal(err)
			}
			ended = time.Now()
		}
		time.Sleep(100 * time.Millisecond)
		close(stop)
		acks := append(seeded, wait()...)
		if t.Failed() {
			return
		}
		during := 0
		for _, a := range acks {
			if a.at.After(began) && a.at.Before(ended) {
				during++
			}
		}
		t.Logf("%s backup of %d bytes; %d writes acknowledged in all, %d while the last backup ran", b.Format, b.Size, len(acks), during)
		if during == 0 {
			t.Fatal("no write was acknowledged while the backup ran: the case proves nothing")
		}
		list, err := s.ListBackups(ctx, target, "conf")
		if err != nil || len(list) != 3 || list[0] != b {
			t.Fatalf("backups: %+v, %v; want 3, the newest %+v", list, err, b)
		}

		byUID := map[string]ack{}
		for _, a := range acks {
			byUID[a.record["uid"].(string)] = a
		}
		check := func(t *testing.T, got map[string]map[string]any) {
			t.Helper()
			last := map[int]int{} // each writer's highest seq in the backup
			counts := map[int]int{}
			for uid, r := range got {
				a, ok := byUID[uid]
				if !ok {
					t.Fatalf("restored record %s was never acknowledged: %v", uid, r)
				}
				if !reflect.DeepEqual(r, a.record) {
					t.Fatalf("record %s restored as %v, acknowledged as %v", uid, r, a.record)
				}
				last[a.writer] = max(last[a.writer], a.seq)
				counts[a.writer]++
			}
			for _, a := range acks {
				if _, ok := got[a.record["uid"].(string)]; !ok && a.at.Before(b.At) {
					t.Fatalf("record %v acknowledged before the backup began (%s) is missing", a.record, b.At)
				}
			}
			if s.Backend == "sqlite" {
				for w, n := range counts {
					if n != last[w]+1 {
						t.Fatalf("writer %d: %d records restored but its last is seq %d: not one snapshot", w, n, last[w])
					}
				}
			}
			if len(got) == len(acks) {
				t.Fatalf("all %d writes restored, even those after the backup", len(acks))
			}
		}

		bf, err := s.OpenBackup(ctx, target, b)
		if err != nil {
			t.Fatal(err)
		}
		defer bf.Close()
		if bf.Document != `{"id":"conf","v":1}` || bf.Version != 1 {
			t.Fatalf("backup's document: %d %s", bf.Version, bf.Document)
		}
		// Under another id first: the project itself is untouched.
		if err := bf.Restore(ctx, "copy", "", []store.Table{notes}); err != nil {
			t.Fatal(err)
		}
		cp, err := s.ProjectRecords(ctx, "copy", "", []store.Table{notes})
		if err != nil {
			t.Fatal(err)
		}
		if err := cp.Ensure(ctx); err != nil {
			t.Fatal(err)
		}
		t.Run("as another id", func(t *testing.T) { check(t, allRecords(t, cp, "notes")) })
		if n, _ := recs.Count(ctx, "notes", store.All); n != int64(len(acks)) {
			t.Fatalf("the project holds %d records after a restore under another id, want %d", n, len(acks))
		}

		// In place, over a project that has since gained records and a table.
		other := store.Table{Name: "other"}
		withOther, err := s.ProjectRecords(ctx, "conf", "", []store.Table{notes, other})
		if err != nil {
			t.Fatal(err)
		}
		if err := withOther.Ensure(ctx); err != nil {
			t.Fatal(err)
		}
		if err := withOther.Insert(ctx, "other", "x", []map[string]any{{}}, nil); err != nil {
			t.Fatal(err)
		}
		if err := bf.Restore(ctx, "conf", "", []store.Table{notes}); err != nil {
			t.Fatal(err)
		}
		if err := recs.Ensure(ctx); err != nil {
			t.Fatal(err)
		}
		t.Run("in place", func(t *testing.T) { check(t, allRecords(t, recs, "notes")) })
		if tables, err := recs.StoredTables(ctx); err != nil || fmt.Sprint(tables) != "[notes]" {
			t.Fatalf("tables after the restore: %v, %v; want [notes]", tables, err)
		}
		// The unique index is back: a duplicate key is refused.
		if err := recs.Insert(ctx, "notes", "x", []map[string]any{{"key": "w0-0"}}, nil); err == nil {
			t.Fatal("a duplicate key was accepted after the restore")
		}
		// The restored project takes writes.
		if err := recs.Insert(ctx, "notes", "x", []map[string]any{{"key": "after"}}, nil); err != nil {
			t.Fatal(err)
		}
	})
}

// TestConformanceFailedRestoreKeepsRecords restores a damaged backup and finds the project's
// records as they were.
func TestConformanceFailedRestoreKeepsRecords(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *store.Stores) {
		ctx := t.Context()
		if _, _, err := s.Projects().Put(ctx, "conf", `{"id":"conf"}`, store.Applied{}); err != nil {
			t.Fatal(err)
		}
		recs, err := s.ProjectRecords(ctx, "conf", "", []store.Table{notes})
		if err != nil {
			t.Fatal(err)
		}
		if err := recs.Ensure(ctx); err != nil {
			t.Fatal(err)
		}
		insert := func(keys ...string) {
			for _, k := range keys {
				if err := recs.Insert(ctx, "notes", "x", []map[string]any{{"key": k, "body": strings.Repeat("y", 5000)}}, nil); err != nil {
					t.Fatal(err)
				}
			}
		}
		insert("a", "b", "c")
		dir := filepath.Join(t.TempDir(), "backups")
		target := store.BackupFolder(dir)
		b, err := s.TakeBackup(ctx, target, "conf", "")
		if err != nil {
			t.Fatal(err)
		}
		insert("d")
		want := allRecords(t, recs, "notes")

		// Cut the backup short, as a full disk or a lost connection would.
		file := filepath.Join(dir, filepath.FromSlash(b.Name))
		if err := os.Truncate(file, b.Size*2/3); err != nil {
			t.Fatal(err)
		}
		bf, err := s.OpenBackup(ctx, target, b)
		if err == nil {
			err = bf.Restore(ctx, "conf", "", []store.Table{notes})
			_ = bf.Close()
		}
		if err == nil {
			t.Fatal("a cut backup was restored")
		}
		t.Log(err)
		if got := allRecords(t, recs, "notes"); !reflect.DeepEqual(got, want) {
			t.Fatalf("after a failed restore: %d records, want the %d there were", len(got), len(want))
		}
		if tables, err := recs.StoredTables(ctx); err != nil || fmt.Sprint(tables) != "[notes]" {
			t.Fatalf("tables after a failed restore: %v, %v", tables, err)
		}
	})
}

// TestBackupS3 keeps backups in an S3-compatible bucket: taken, listed, restored, pruned.
func TestBackupS3(t *testing.T) {
	url := testenv.S3Server(t, "backups")
	s, err := store.Open(t.Context(), store.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	ctx := t.Context()
	if _, _, err := s.Projects().Put(ctx, "shop", `{"id":"shop"}`, store.Applied{}); err != nil {
		t.Fatal(err)
	}
	recs, err := s.ProjectRecords(ctx, "shop", "", []store.Table{notes})
	if err != nil {
		t.Fatal(err)
	}
	if err := recs.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	target, err := store.BackupS3(url + "/backups/platform/eu")
	if err != nil {
		t.Fatal(err)
	}
	var taken []store.Backup
	for i := range 3 {
		if err := recs.Insert(ctx, "notes", "x", []map[string]any{{"key": fmt.Sprint(i)}}, nil); err != nil {
			t.Fatal(err)
		}
		b, err := s.TakeBackup(ctx, target, "shop", "")
		if err != nil {
			t.Fatal(err)
		}
		taken = append(taken, b)
		time.Sleep(2 * time.Millisecond)
	}
	list, err := s.ListBackups(ctx, target, "shop")
	if err != nil || len(list) != 3 || list[0] != taken[2] || list[2] != taken[0] {
		t.Fatalf("backups in S3: %+v, %v; want %+v newest first", list, err, taken)
	}
	bf, err := s.OpenBackup(ctx, target, list[1])
	if err != nil {
		t.Fatal(err)
	}
	defer bf.Close()
	if err := bf.Restore(ctx, "shop", "", []store.Table{notes}); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, r := range allRecords(t, recs, "notes") {
		keys = append(keys, r["key"].(string))
	}
	if len(keys) != 2 {
		t.Fatalf("restored the second backup: keys %v, want 0 and 1", keys)
	}
	removed, err := s.PruneBackups(ctx, target, "shop", 1)
	if err != nil || len(removed) != 2 {
		t.Fatalf("prune to 1: removed %+v, %v", removed, err)
	}
	if list, err := s.ListBackups(ctx, target, "shop"); err != nil || len(list) != 1 || list[0] != taken[2] {
		t.Fatalf("after pruning: %+v, %v", list, err)
	}
	js, _ := json.Marshal(list[0])
	t.Logf("kept %s in %s", js, target)
}
