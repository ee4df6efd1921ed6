package cloud_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/platform-dev/platform/tools/cloud"
)

// The shipped table is laid out as cmd/prices writes it, so that a refresh changes only the
// prices it changes, and reading and writing it loses nothing.
func TestShippedPriceTableIsWhatTheGeneratorWrites(t *testing.T) {
	src, err := os.ReadFile("prices.json")
	if err != nil {
		t.Fatal(err)
	}
	pt, err := cloud.ReadPriceTable(bytes.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	out, err := pt.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, src) {
		t.Errorf("prices.json is not as Encode writes it: run go run ./tools/cloud/cmd/prices (with no price file) to lay it out")
	}
	if len(pt.Verified) == 0 {
		t.Errorf("no region names the price files it was checked against")
	}
}
