package store

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// BackupS3 keeps backups in an S3-compatible bucket named by rawURL,
// http(s)://<endpoint>/<bucket>[/<prefix>] (path-style, so that MinIO, Ceph, Garage and AWS
// all work). The credentials come from the environment: AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY (or MINIO_ACCESS_KEY and MINIO_SECRET_KEY), and AWS_REGION when the
// service wants one.
func BackupS3(rawURL string) (BackupTarget, error) {
	c, bucket, prefix, err := s3Client(rawURL)
	if err != nil {
		return nil, err
	}
	return &s3Target{client: c, bucket: bucket, prefix: prefix}, nil
}

// s3Client is the client of the bucket rawURL names, with the bucket and the prefix ("" or
// ending in a slash) of the keys kept there.
func s3Client(rawURL string) (*minio.Client, string, string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, "", "", fmt.Errorf("S3 URL: %w", err)
	}
	if u.Scheme != "https" && u.Scheme != "http" || u.Host == "" {
		return nil, "", "", fmt.Errorf("S3 URL %q: want http(s)://<endpoint>/<bucket>[/<prefix>]", rawURL)
	}
	bucket, prefix, _ := strings.Cut(strings.Trim(u.Path, "/"), "/")
	if bucket == "" {
		return nil, "", "", fmt.Errorf("S3 URL %q names no bucket: want http(s)://<endpoint>/<bucket>[/<prefix>]", rawURL)
	}
	if prefix != "" {
		prefix += "/"
	}
	c, err := minio.New(u.Host, &minio.Options{
		Creds:        credentials.NewChainCredentials([]credentials.Provider{&credentials.EnvAWS{}, &credentials.EnvMinio{}}),
		Secure:       u.Scheme == "https",
		Region:       os.Getenv("AWS_REGION"),
		BucketLookup: minio.BucketLookupPath,
	})
	if err != nil {
		return nil, "", "", fmt.Errorf("S3 client for %s: %w", u.Host, err)
	}
	return c, bucket, prefix, nil
}

type s3Target struct {
	client *minio.Client
	bucket string
	prefix string
}

func (t *s3Target) String() string { return "s3://" + t.bucket + "/" + t.prefix }

func (t *s3Target) put(ctx context.Context, name, file string) error {
	// An object appears only when its upload completed, so a cut backup is never listed.
	_, err := t.client.FPutObject(ctx, t.bucket, t.prefix+name, file, minio.PutObjectOptions{ContentType: "application/octet-stream"})
	return err
}

func (t *s3Target) get(ctx context.Context, name, file string) error {
	return t.client.FGetObject(ctx, t.bucket, t.prefix+name, file, minio.GetObjectOptions{})
}

func (t *s3Target) list(ctx context.Context, prefix string) (map[string]int64, error) {
	out := map[string]int64{}
	for obj := range t.client.ListObjects(ctx, t.bucket, minio.ListObjectsOptions{Prefix: t.prefix + prefix, Recursive: true}) {
		if obj.Err != nil {
			return nil, obj.Err
		}
		out[strings.TrimPrefix(obj.Key, t.prefix)] = obj.Size
	}
	return out, nil
}

func (t *s3Target) remove(ctx context.Context, name string) error {
	return t.client.RemoveObject(ctx, t.bucket, t.prefix+name, minio.RemoveObjectOptions{})
}
