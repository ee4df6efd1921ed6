// Command ferretdb runs an embedded FerretDB (store.StartFerretDB: SQLite files in -dir, a
// free loopback port) until it is interrupted, and prints its MongoDB URI on the first line
// of standard output. bench/pocketbase.sh --mongo measures the platform's mongo backend
// against it where no MongoDB is installed.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/platform-dev/platform/store"
)

func main() {
	dir := flag.String("dir", "", "folder of FerretDB's SQLite files (created when missing)")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "ferretdb: -dir is required")
		os.Exit(2)
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	uri, stop, err := store.StartFerretDB(ctx, *dir, slog.New(slog.NewTextHandler(os.Stderr, nil)))
	if err != nil {
		fmt.Fprintln(os.Stderr, "ferretdb:", err)
		os.Exit(1)
	}
	fmt.Println(uri)
	<-ctx.Done()
	if err := stop(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "ferretdb:", err)
		os.Exit(1)
	}
}
