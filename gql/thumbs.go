package gql

import (
	"bytes"
	"context"
	"fmt"
	"image"
	_ "image/gif" // decoders of the images thumbnails are made of
	_ "image/jpeg"
	_ "image/png"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/disintegration/imaging"
	_ "golang.org/x/image/webp"

	"github.com/platform-dev/platform/store"
)

// thumbnail is the key of the thumbnail of the image meta, a file of the field f of t, at
// size (WxH, one the field declares), made and kept beside the image on first use; a message
// for the caller when it cannot be made of that file at that size.
func (a *API) thumbnail(ctx context.Context, t *table, f store.Field, meta store.FileMeta, size string) (string, string, error) {
	if !slices.Contains(f.File.Thumbs, size) {
		declared := "none"
		if len(f.File.Thumbs) > 0 {
			declared = strings.Join(f.File.Thumbs, ", ")
		}
		return "", fmt.Sprintf("thumb %q is not a size %s.%s declares (it declares %s)", size, t.def.Name, f.Name, declared), nil
	}
	key := thumbKey(meta.Key, size)
	if b, err := a.files.blobs.Open(ctx, key); err == nil {
		b.Close()
		return key, "", nil
	}
	src, err := a.files.blobs.Open(ctx, meta.Key)
	if err != nil {
		return "", "", err
	}
	defer src.Close()
	cfg, _, err := image.DecodeConfig(src)
	if err != nil {
		return "", fmt.Sprintf("a thumbnail is made of a JPEG, PNG, GIF or WebP image; this file (%s) is not one", meta.MimeType), nil
	}
	if px := int64(cfg.Width) * int64(cfg.Height); px > a.files.maxPixels {
		return "", fmt.Sprintf("the image is %d×%d pixels, more than the %d a thumbnail is made of", cfg.Width, cfg.Height, a.files.maxPixels), nil
	}
	if _, err := src.Seek(0, io.SeekStart); err != nil {
		return "", "", err
	}
	img, err := imaging.Decode(src, imaging.AutoOrientation(true))
	if err != nil {
		return "", fmt.Sprintf("the image cannot be decoded: %v", err), nil
	}
	ws, hs, _ := strings.Cut(size, "x")
	w, _ := strconv.Atoi(ws)
	h, _ := strconv.Atoi(hs)
	var thumb image.Image
	if w == 0 || h == 0 {
		thumb = imaging.Resize(img, w, h, imaging.Lanczos)
	} else {
		thumb = imaging.Fill(img, w, h, imaging.Center, imaging.Lanczos)
	}
	var buf bytes.Buffer
	if err := imaging.Encode(&buf, thumb, imaging.PNG); err != nil {
		return "", "", fmt.Errorf("encode thumbnail: %w", err)
	}
	if err := a.files.blobs.Put(ctx, key, &buf, int64(buf.Len())); err != nil {
		return "", "", err
	}
	return key, "", nil
}

// thumbKey is the key of the thumbnail of the file key at size.
func thumbKey(key, size string) string { return key + "_" + size }
