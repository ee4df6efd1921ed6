package security_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/platform-dev/platform/tools/security"
)

// BenchmarkAssessIaC assesses the pinned excerpts of testdata/iac (Terraform, Kubernetes,
// CloudFormation and a Helm chart) with scope infrastructure, Trivy's checks included. cold: a new
// assessor each time, so a new helper that compiles the checks; edited: one warm helper and
// one file edited before each call (no cache hit); warm: nothing changed (from the cache).
func BenchmarkAssessIaC(b *testing.B) {
	opts := security.Options{Scope: security.ScopeInfrastructure}
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			a := trivyAssessor(b, "testdata/iac", iacHelper)
			b.StartTimer()
			if _, err := a.Assess(context.Background(), opts); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			a.Close()
			b.StartTimer()
		}
	})
	b.Run("edited", func(b *testing.B) {
		dir := b.TempDir()
		if err := os.CopyFS(dir, os.DirFS("testdata/iac")); err != nil {
			b.Fatal(err)
		}
		a := trivyAssessor(b, dir, iacHelper)
		if _, err := a.Assess(context.Background(), opts); err != nil {
			b.Fatal(err)
		}
		edited := filepath.Join(dir, "terragoat", "aws", "s3.tf")
		orig, err := os.ReadFile(edited)
		if err != nil {
			b.Fatal(err)
		}
		i := 0
		for b.Loop() {
			i++
			if err := os.WriteFile(edited, fmt.Appendf(append([]byte{}, orig...), "\n# edit %d\n", i), 0o644); err != nil {
				b.Fatal(err)
			}
			if _, err := a.Assess(context.Background(), opts); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("warm", func(b *testing.B) {
		a := trivyAssessor(b, "testdata/iac", iacHelper)
		if _, err := a.Assess(context.Background(), opts); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := a.Assess(context.Background(), opts); err != nil {
				b.Fatal(err)
			}
		}
	})
}
