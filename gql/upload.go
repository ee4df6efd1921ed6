package gql

// Uploads: the GraphQL multipart request spec (github.com/jaydenseric/graphql-multipart-request-spec),
// which Apollo Upload and urql send, and the bytes of a PUT. Each file is streamed to a
// temporary file, bounded as it arrives, hashed and sniffed on the way; none is held in
// memory.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// maxMapBytes bounds the map part of a multipart request.
const maxMapBytes = 64 << 10

// csrfMessage answers a multipart request without a header a browser form cannot send.
const csrfMessage = "a multipart request must carry the header Apollo-Require-Preflight: true (or X-Apollo-Operation-Name): a page of another site can post a form without a preflight, but not with that header, so it proves the request is not a cross-site forgery"

// multipartRequest reads a multipart request into req: the operations part as a JSON body,
// the map part, then each file part, spooled and put into the variables at the paths the
// map names. The caller removes the spooled files (request.removeUploads).
func (a *API) multipartRequest(w http.ResponseWriter, r *http.Request, req *request) (int, string) {
	if a.files == nil {
		return http.StatusUnsupportedMediaType, "this project has no File field to upload to: send the body as application/json"
	}
	if header(r, "Apollo-Require-Preflight") == "" && header(r, "X-Apollo-Operation-Name") == "" {
		return http.StatusBadRequest, csrfMessage
	}
	r.Body = http.MaxBytesReader(w, r.Body, a.files.maxUpload)
	mr, err := r.MultipartReader()
	if err != nil {
		return http.StatusBadRequest, "read the multipart body: " + err.Error()
	}
	tooLarge := func(err error) (int, string) {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return http.StatusRequestEntityTooLarge, fmt.Sprintf("the body is larger than %d bytes", a.files.maxUpload)
		}
		return http.StatusBadRequest, "read the multipart body: " + err.Error()
	}
	next := func(want string, limit int64) ([]byte, int, string) {
		p, err := mr.NextPart()
		if err != nil {
			status, msg := tooLarge(err)
			return nil, status, msg
		}
		if p.FormName() != want {
			return nil, http.StatusBadRequest, fmt.Sprintf("the multipart body's parts must begin with operations and map, got %q where %s belongs", p.FormName(), want)
		}
		b, err := io.ReadAll(io.LimitReader(p, limit+1))
		if err != nil {
			status, msg := tooLarge(err)
			return nil, status, msg
		}
		if int64(len(b)) > limit {
			return nil, http.StatusRequestEntityTooLarge, fmt.Sprintf("the %s part is larger than %d bytes", want, limit)
		}
		return b, 0, ""
	}
	ops, status, msg := next("operations", a.cfg.MaxBodyBytes)
	if msg != "" {
		return status, msg
	}
	if err := json.Unmarshal(ops, req); err != nil {
		return http.StatusBadRequest, "the operations part is not a JSON object {\"query\": ..., \"variables\": {...}} (a batch of operations is not served): " + err.Error()
	}
	raw, status, msg := next("map", maxMapBytes)
	if msg != "" {
		return status, msg
	}
	var paths map[string][]string
	if err := json.Unmarshal(raw, &paths); err != nil {
		return http.StatusBadRequest, "the map part is not a JSON object of file part names to lists of paths such as [\"variables.file\"]: " + err.Error()
	}
	if len(paths) > a.files.maxFiles {
		return http.StatusRequestEntityTooLarge, fmt.Sprintf("the request carries %d files, more than the %d a request may", len(paths), a.files.maxFiles)
	}
	vars, msg := req.variables()
	if msg != "" {
		return http.StatusBadRequest, msg
	}
	if vars == nil {
		vars = map[string]any{}
	}
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return tooLarge(err)
		}
		name := p.FormName()
		at, ok := paths[name]
		if !ok {
			return http.StatusBadRequest, fmt.Sprintf("the file part %q is not named in map", name)
		}
		delete(paths, name)
		u, err := spool(p, p.FileName(), a.files.maxFile)
		if u != nil {
			req.uploads = append(req.uploads, u)
		}
		if err != nil {
			if errors.Is(err, errFileTooLarge) {
				return http.StatusRequestEntityTooLarge, fmt.Sprintf("the file part %q is larger than %d bytes, the most one file may have", name, a.files.maxFile)
			}
			return tooLarge(err)
		}
		for _, path := range at {
			if msg := setPath(vars, path, u); msg != "" {
				return http.StatusBadRequest, fmt.Sprintf("map.%s: %s", name, msg)
			}
		}
	}
	for name := range paths {
		return http.StatusBadRequest, fmt.Sprintf("map names the file part %q, which the body does not have", name)
	}
	req.vars, req.decoded = vars, true
	return 0, ""
}

var errFileTooLarge = errors.New("file too large")

// spool copies a file to a temporary file, up to limit bytes (errFileTooLarge past them),
// hashing it and sniffing its media type from its first bytes. The Upload it answers, even
// with an error, has a file to remove.
func spool(r io.Reader, filename string, limit int64) (*Upload, error) {
	f, err := os.CreateTemp("", "platform-upload-*")
	if err != nil {
		return nil, fmt.Errorf("spool upload: %w", err)
	}
	defer f.Close()
	u := &Upload{Filename: cleanName(filename), path: f.Name()}
	h := sha256.New()
	sniff := &sniffer{}
	n, err := io.Copy(io.MultiWriter(f, h, sniff), io.LimitReader(r, limit+1))
	if err != nil {
		return u, err
	}
	if n > limit {
		return u, errFileTooLarge
	}
	u.Size, u.SHA256 = n, hex.EncodeToString(h.Sum(nil))
	u.MimeType, _, _ = mime.ParseMediaType(http.DetectContentType(sniff.head))
	return u, nil
}

// sniffer keeps the first bytes written to it, as many as http.DetectContentType reads.
type sniffer struct{ head []byte }

func (s *sniffer) Write(p []byte) (int, error) {
	if room := 512 - len(s.head); room > 0 {
		s.head = append(s.head, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// cleanName is the last element of a client's file name, at most 255 bytes; "file" for none.
func cleanName(name string) string {
	name = filepath.Base(strings.ReplaceAll(name, "\\", "/"))
	if name == "." || name == "/" || name == "" {
		return "file"
	}
	if len(name) > 255 {
		name = strings.ToValidUTF8(name[:255], "")
	}
	return name
}

// setPath puts u into vars at path, "variables.<name>[.<key or index>...]"; a message when
// path does not lead to a place in the variables.
func setPath(vars map[string]any, path string, u *Upload) string {
	parts := strings.Split(path, ".")
	if len(parts) < 2 || parts[0] != "variables" {
		return fmt.Sprintf("the path %q does not start with variables.", path)
	}
	var parent any = vars
	for i, p := range parts[1:] {
		last := i == len(parts)-2
		switch c := parent.(type) {
		case map[string]any:
			if last {
				c[p] = u
				return ""
			}
			parent = c[p]
		case []any:
			j, err := strconv.Atoi(p)
			if err != nil || j < 0 || j >= len(c) {
				return fmt.Sprintf("the path %q names no element %q", path, p)
			}
			if last {
				c[j] = u
				return ""
			}
			parent = c[j]
		default:
			return fmt.Sprintf("the path %q leads through %s", path, describe(c))
		}
	}
	return ""
}

// removeUploads removes the files a request spooled.
func (req *request) removeUploads() {
	for _, u := range req.uploads {
		_ = os.Remove(u.path)
	}
}
