package cloud

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/platform-dev/platform/tools/workspace"
)

// settle is how long the watcher waits after a change before re-reading, so that an editor's
// write-rename-chmod sequence or a checkout of many files costs one refresh.
const settle = 300 * time.Millisecond

// watch starts watching the folders below the roots that a walk reaches (ignored and vendored
// folders are left out, which also keeps inotify watches few).
func (a *Analyzer) watch(ctx context.Context) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	dirs := map[string]bool{}
	for _, root := range a.ws.Roots() {
		dirs[root] = true
		err := a.ws.Walk(ctx, root, func(f workspace.File) error {
			if !f.Vendored {
				dirs[filepath.Dir(f.Path)] = true
			}
			return nil
		})
		if err != nil && !errors.Is(err, workspace.ErrFileLimit) {
			w.Close()
			return err
		}
	}
	for d := range dirs {
		if err := w.Add(d); err != nil {
			a.log.Warn("cloud watcher: cannot watch folder", "dir", d, "err", err)
		}
	}
	go a.loop(ctx, w)
	return nil
}

func (a *Analyzer) loop(ctx context.Context, w *fsnotify.Watcher) {
	defer w.Close()
	var timer *time.Timer
	var fire <-chan time.Time
	var last []byte
	for {
		select {
		case <-ctx.Done():
			if timer != nil {
				timer.Stop()
			}
			return
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			if ev.Has(fsnotify.Create) {
				if fi, err := os.Stat(ev.Name); err == nil && fi.IsDir() && !strings.HasPrefix(fi.Name(), ".") {
					a.addTree(w, ev.Name)
				}
			}
			if !declarationName(ev.Name) && !ev.Has(fsnotify.Create) && !ev.Has(fsnotify.Remove) && !ev.Has(fsnotify.Rename) {
				continue
			}
			if timer == nil {
				timer = time.NewTimer(settle)
			} else {
				timer.Reset(settle)
			}
			fire = timer.C
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			a.log.Warn("cloud watcher", "err", err)
		case <-fire:
			fire = nil
			rep, err := a.refresh(ctx)
			if err != nil {
				if ctx.Err() == nil {
					a.log.Warn("cloud watcher: refresh", "err", err)
				}
				continue
			}
			b, _ := json.Marshal(rep)
			if string(b) != string(last) {
				last = b
				if a.hub != nil {
					a.hub.Updated(URI)
				}
			}
		}
	}
}

// addTree watches a folder created after the start and the folders inside it.
func (a *Analyzer) addTree(w *fsnotify.Watcher, dir string) {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if _, _, ok := a.ws.Root(p); !ok || (p != dir && strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if err := w.Add(p); err != nil {
			a.log.Warn("cloud watcher: cannot watch folder", "dir", p, "err", err)
		}
		return nil
	})
}

// declarationName reports whether a file name may hold declarations this package reads.
func declarationName(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".tf", ".tfvars", ".json", ".yaml", ".yml", ".template":
		return true
	}
	return false
}
