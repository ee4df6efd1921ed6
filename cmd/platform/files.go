package main

import (
	"path/filepath"

	"github.com/platform-dev/platform/gql"
	"github.com/platform-dev/platform/tenant"
)

// filesConfig is where the files of File fields are kept, their bounds, and the secret
// their signed URLs are derived from.
type filesConfig struct {
	S3URL              string
	Key                string
	MaxFile, MaxUpload int
	MaxCount           int
	MaxPixels          int
}

func (c *filesConfig) settings() []setting {
	return []setting{
		stringSetting(&c.S3URL, "files-s3-url", "PLATFORM_FILES_S3_URL", "", "S3-compatible bucket that keeps the files of File fields, http(s)://<endpoint>/<bucket>[/<prefix>] (credentials from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY); empty: <data>/files/<project>"),
		stringSetting(&c.Key, "files-key", "PLATFORM_FILES_KEY", "", "secret each project's key for signed file URLs is derived from; every replica needs the same. Empty: generated once and kept in <data>/files-key"),
		intSetting(&c.MaxFile, "files-max-size", "PLATFORM_FILES_MAX_SIZE", gql.DefaultMaxFileBytes, "largest file one upload may carry, in bytes, whatever a field allows (413 past it, before the rest is read)"),
		intSetting(&c.MaxUpload, "files-max-upload", "PLATFORM_FILES_MAX_UPLOAD", gql.DefaultMaxUploadBytes, "largest multipart GraphQL request body, in bytes (413 past it)"),
		intSetting(&c.MaxCount, "files-max-count", "PLATFORM_FILES_MAX_COUNT", gql.DefaultMaxUploadFiles, "files one multipart GraphQL request may carry (413 past it)"),
		intSetting(&c.MaxPixels, "files-max-pixels", "PLATFORM_FILES_MAX_PIXELS", gql.DefaultMaxImagePixels, "largest image, in pixels once decoded, a thumbnail is made of (400 past it: a small file can decode to gigabytes)"),
	}
}

// options are the registry's file options, with the signing secret loaded or made.
func (c filesConfig) options(dataDir string) (tenant.FileOptions, error) {
	key, _, err := loadSecret(c.Key, filepath.Join(dataDir, "files-key"), "files key")
	if err != nil {
		return tenant.FileOptions{}, err
	}
	return tenant.FileOptions{
		Key: []byte(key), MaxFileBytes: int64(c.MaxFile), MaxUploadBytes: int64(c.MaxUpload),
		MaxUploadFiles: c.MaxCount, MaxImagePixels: int64(c.MaxPixels),
	}, nil
}
