package cloud_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/platform-dev/platform/tools/cloud"
	"github.com/platform-dev/platform/tools/workspace"
)

// BenchmarkAnalyzeTerraformCorpus analyses 100 generated Terraform modules of 50 resources
// (5,000 resources) with cost analysis.
func BenchmarkAnalyzeTerraformCorpus(b *testing.B) {
	dir := b.TempDir()
	for m := 0; m < 100; m++ {
		var tf strings.Builder
		fmt.Fprintf(&tf, "provider \"aws\" {\n  region = var.region\n}\n\nvariable \"region\" {\n  default = \"us-east-1\"\n}\n\n")
		for r := 0; r < 25; r++ {
			fmt.Fprintf(&tf, "resource \"aws_instance\" \"i%d\" {\n  instance_type = \"t2.medium\"\n  ami = \"ami-1\"\n}\n\n", r)
			fmt.Fprintf(&tf, "resource \"aws_ebs_volume\" \"v%d\" {\n  size = %d\n  availability_zone = \"us-east-1a\"\n}\n\n", r, 10+r)
		}
		sub := filepath.Join(dir, fmt.Sprintf("mod%03d", m))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sub, "main.tf"), []byte(tf.String()), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	ws, err := workspace.New(dir)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, err := cloud.New(ctx, ws, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		r, err := a.Analyze(context.Background(), cloud.Options{CostAnalysis: true})
		if err != nil {
			b.Fatal(err)
		}
		if r.Summary.Resources != 5000 {
			b.Fatalf("resources %d", r.Summary.Resources)
		}
	}
}

// BenchmarkPrices loads the embedded price table and derives its regions, as every new
// Analyzer does once.
func BenchmarkPrices(b *testing.B) {
	for b.Loop() {
		if _, err := cloud.Prices(); err != nil {
			b.Fatal(err)
		}
	}
}
