package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/platform-dev/platform/tenant"
)

// transferConfig is how export and import reach the records: the store itself, or a running
// server's admin API (--server), which a project's admin key reaches without the server's
// files.
type transferConfig struct {
	storeConfig
	Server, Token string
}

func (c *transferConfig) settings() []setting {
	return append(c.storeConfig.settings(),
		stringSetting(&c.Server, "server", "", "", "apex URL of a running server: move the project through its admin API instead of the store"),
		stringSetting(&c.Token, "admin-token", "PLATFORM_ADMIN_TOKEN", "", "with --server: admin API token or operator key (operator or project:<id>:admin); empty: read <data>/admin-token"),
	)
}

func (c transferConfig) admin() applyConfig {
	return applyConfig{Server: c.Server, Token: c.Token, DataDir: c.DataDir}
}

// exportRemote copies the export of project that the server streams into w, and fails when
// the stream ends before its end line, as an import would.
func exportRemote(ctx context.Context, cfg transferConfig, project string, w io.Writer, progress *progress) error {
	resp, err := adminRequest(ctx, cfg.admin(), "export", http.MethodGet, "/admin/v1/projects/"+url.PathEscape(project)+"/export", nil, "")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	lines := bufio.NewScanner(resp.Body)
	lines.Buffer(make([]byte, 0, 64<<10), 64<<20)
	bw := bufio.NewWriterSize(w, 1<<20)
	var end *exportEnd
	for lines.Scan() {
		if bytes.HasPrefix(lines.Bytes(), []byte(`{"end":`)) {
			var l exportLine
			if err := json.Unmarshal(lines.Bytes(), &l); err != nil {
				return fmt.Errorf("export: read the end line: %w", err)
			}
			end = l.End
		}
		if _, err := bw.Write(append(lines.Bytes(), '\n')); err != nil {
			return fmt.Errorf("write export: %w", err)
		}
	}
	if err := lines.Err(); err != nil {
		return fmt.Errorf("export: read the answer: %w", err)
	}
	if end == nil {
		return fmt.Errorf("export: %w", tenant.ErrIncomplete)
	}
	for table, n := range end.Records {
		progress.add(table, n)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write export: %w", err)
	}
	return nil
}

// importRemote sends the export in r, as it is read, to the server, which imports it into the
// project its header names.
func importRemote(ctx context.Context, cfg transferConfig, r io.Reader, replace bool, progress *progress) error {
	br := bufio.NewReaderSize(r, 1<<20)
	first, err := br.ReadBytes('\n')
	if err != nil && err != io.EOF {
		return fmt.Errorf("read export: %w", err)
	}
	var h exportHeader
	if err := json.Unmarshal(first, &h); err != nil || h.Format != exportFormat {
		return fmt.Errorf("read export: the first line is not a %s header (%.80s)", exportFormat, first)
	}
	path := "/admin/v1/projects/" + url.PathEscape(h.Project) + "/import"
	if replace {
		path += "?replace=true"
	}
	resp, err := adminRequest(ctx, cfg.admin(), "import", http.MethodPost, path, io.MultiReader(bytes.NewReader(first), br), "application/jsonl")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var res tenant.ImportResult
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&res); err != nil {
		return fmt.Errorf("import: unexpected answer: %w", err)
	}
	for table, n := range res.Records {
		progress.add(table, n)
	}
	progress.done("project " + res.Project)
	return nil
}
