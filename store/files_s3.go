package store

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
)

// s3Files keep every project's files in one S3-compatible bucket, under <prefix><project>/.
type s3Files struct {
	client *minio.Client
	bucket string
	prefix string
}

// openS3Files opens the bucket rawURL names (see BackupS3 for its form and credentials).
func openS3Files(rawURL string) (*s3Files, error) {
	c, bucket, prefix, err := s3Client(rawURL)
	if err != nil {
		return nil, fmt.Errorf("files bucket: %w", err)
	}
	return &s3Files{client: c, bucket: bucket, prefix: prefix}, nil
}

func (f *s3Files) project(id string) Blobs { return s3Blobs{f: f, prefix: f.prefix + id + "/"} }

type s3Blobs struct {
	f      *s3Files
	prefix string
}

// Put uploads the object in one request of a known size: S3 shows an object only once its
// upload completed.
func (b s3Blobs) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	_, err := b.f.client.PutObject(ctx, b.f.bucket, b.prefix+key, r, size, minio.PutObjectOptions{ContentType: "application/octet-stream"})
	if err != nil {
		return fmt.Errorf("put file %s: %w", key, err)
	}
	return nil
}

type s3Blob struct {
	*minio.Object
	info minio.ObjectInfo
}

func (o s3Blob) Size() int64        { return o.info.Size }
func (o s3Blob) ModTime() time.Time { return o.info.LastModified }

func (b s3Blobs) Open(ctx context.Context, key string) (Blob, error) {
	obj, err := b.f.client.GetObject(ctx, b.f.bucket, b.prefix+key, minio.GetObjectOptions{})
	if err != nil {
		return nil, fmt.Errorf("open file %s: %w", key, err)
	}
	info, err := obj.Stat()
	if err != nil {
		obj.Close()
		if minio.ToErrorResponse(err).Code == minio.NoSuchKey {
			return nil, fmt.Errorf("open file %s: %w", key, ErrNoBlob)
		}
		return nil, fmt.Errorf("open file %s: %w", key, err)
	}
	return s3Blob{Object: obj, info: info}, nil
}

func (b s3Blobs) Delete(ctx context.Context, key string) error {
	if err := b.f.client.RemoveObject(ctx, b.f.bucket, b.prefix+key, minio.RemoveObjectOptions{}); err != nil {
		return fmt.Errorf("delete file %s: %w", key, err)
	}
	return nil
}

func (b s3Blobs) Walk(ctx context.Context, fn func(string, time.Time) error) error {
	for obj := range b.f.client.ListObjects(ctx, b.f.bucket, minio.ListObjectsOptions{Prefix: b.prefix, Recursive: true}) {
		if obj.Err != nil {
			return fmt.Errorf("list files: %w", obj.Err)
		}
		if err := fn(strings.TrimPrefix(obj.Key, b.prefix), obj.LastModified); err != nil {
			return err
		}
	}
	return nil
}

func (b s3Blobs) Usage(ctx context.Context) (int64, error) {
	var n int64
	for obj := range b.f.client.ListObjects(ctx, b.f.bucket, minio.ListObjectsOptions{Prefix: b.prefix, Recursive: true}) {
		if obj.Err != nil {
			return 0, fmt.Errorf("list files: %w", obj.Err)
		}
		n += obj.Size
	}
	return n, nil
}
