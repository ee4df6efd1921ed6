package code

import (
	"context"
	"io"
	"log/slog"
	"testing"
)

// panickyParser stands for a grammar that crashes on some input.
type panickyParser struct{}

func (panickyParser) parse(context.Context, string, []byte) (*facts, error) {
	var names []string
	_ = names[65535] // the out-of-range index a tree-sitter error symbol once caused
	return nil, nil
}

// TestParserPanicIsContained: a parser that panics on a file turns into that file's parse
// error (counted as text) instead of ending the process from a watcher goroutine.
func TestParserPanicIsContained(t *testing.T) {
	a := &Analyzer{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	src := []byte("x = 1\ny = 2\n")
	j := job{fi: &fileInfo{Rel: "bad.py", Lang: "Python"}, src: src, key: cacheKey{kind: "Python"}}
	ps := parserSet{"Python": panickyParser{}}
	f, err := a.parseWith(context.Background(), ps, j)
	if err == nil || f != nil {
		t.Fatalf("parseWith = %v, %v; want the panic as an error", f, err)
	}
}
