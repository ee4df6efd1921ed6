package testenv

import (
	"net/http/httptest"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3afero"
)

// S3Server serves an S3-compatible bucket named bucket from a folder, on loopback, for the
// test: gofakes3 with its file backend, over real HTTP. It sets the credentials the
// platform's S3 clients read from the environment, and answers the server's URL.
func S3Server(tb testing.TB, bucket string) string {
	tb.Helper()
	fs, err := s3afero.FsPath(tb.TempDir(), s3afero.FsPathCreateAll)
	if err != nil {
		tb.Fatal(err)
	}
	b, err := s3afero.MultiBucket(fs)
	if err != nil {
		tb.Fatal(err)
	}
	if err := b.CreateBucket(bucket); err != nil {
		tb.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(b).Server())
	tb.Cleanup(srv.Close)
	if t, ok := tb.(*testing.T); ok {
		t.Setenv("AWS_ACCESS_KEY_ID", "platform-test")
		t.Setenv("AWS_SECRET_ACCESS_KEY", "platform-test-secret")
	}
	return srv.URL
}
