package tenant

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/platform-dev/platform/store"
)

// DefaultMaxImportBytes bounds the body of an import through the admin API unless
// Options.MaxImportBytes says otherwise. The body is read as it arrives, never whole into
// memory; a larger export is imported with `platform import` on the server's store.
const DefaultMaxImportBytes = 1 << 30

// exportProject streams project :id as `platform export` writes it. An export that fails
// once the answer has begun ends without its end line, which an import refuses as cut.
func (r *Registry) exportProject(c echo.Context) error {
	id := c.Param("id")
	if err := ValidateID(id); err != nil {
		return WriteError(c, http.StatusBadRequest, CodeBadRequest, err.Error())
	}
	ctx := c.Request().Context()
	src, err := OpenSource(ctx, r.stores, id)
	switch {
	case errors.Is(err, store.ErrDeleted):
		return WriteError(c, http.StatusNotFound, CodeProjectNotFound, deletedHint(id))
	case errors.Is(err, store.ErrNotFound):
		return WriteError(c, http.StatusNotFound, CodeProjectNotFound, "project "+quote(id)+" does not exist")
	case err != nil:
		return r.internal(c, "export project", err)
	}
	res := c.Response()
	res.Header().Set(echo.HeaderContentType, "application/jsonl")
	res.Header().Set(echo.HeaderContentDisposition, `attachment; filename="`+id+`.jsonl"`)
	res.WriteHeader(http.StatusOK)
	if err := src.Export(ctx, res, nil); err != nil {
		r.opts.Logger.WarnContext(ctx, "export project: the answer is cut", "project", id, "err", err)
	}
	return nil
}

// importProject reads an export of project :id from the body into the project, as `platform
// import` does: all of it or, when the body is cut or refused, nothing. The export must be of
// the path's project, so that a project's key imports into its own project only.
func (r *Registry) importProject(c echo.Context) error {
	id := c.Param("id")
	if err := ValidateID(id); err != nil {
		return WriteError(c, http.StatusBadRequest, CodeBadRequest, err.Error())
	}
	req := c.Request()
	replace := req.URL.Query().Get("replace") == "true"
	who := appliedBy(req.Context())
	if who == "" {
		who = "admin API import"
	}
	var counts importCounts
	body := http.MaxBytesReader(c.Response(), req.Body, r.opts.MaxImportBytes)
	_, err := Import(req.Context(), r.stores, body, ImportOptions{Replace: replace, Project: id, Who: who, Progress: counts.add, Check: r.checkTables})
	what := "+ records imported"
	if replace {
		what = "~ records replaced by an import"
	}
	target := ""
	if err == nil {
		target = strconv.FormatInt(counts.total, 10) + " records"
	}
	noteChange(c, target, []string{what})
	var tooLarge *http.MaxBytesError
	var refused *ImportError
	var quota *QuotaError
	switch {
	case errors.As(err, &quota):
		return WriteError(c, http.StatusBadRequest, CodeQuotaExceeded, err.Error(), "quota", quota.Quota, "limit", quota.Limit)
	case errors.As(err, &tooLarge):
		return WriteError(c, http.StatusRequestEntityTooLarge, CodeBadRequest, fmt.Sprintf("the export is larger than %d bytes: import it with `platform import` on the server's store; nothing was imported", r.opts.MaxImportBytes))
	case errors.As(err, &refused) && refused.Conflict:
		return WriteError(c, http.StatusConflict, CodeConflict, err.Error())
	case errors.As(err, &refused):
		return WriteError(c, http.StatusBadRequest, CodeBadRequest, err.Error())
	case err != nil:
		return r.internal(c, "import project", err)
	}
	r.announce(req.Context(), id)
	r.opts.Logger.InfoContext(req.Context(), "project imported", "project", id, "records", counts.total, "replace", replace)
	return c.JSON(http.StatusOK, ImportResult{Project: id, Records: counts.tables})
}

// ImportResult answers an import: the records imported per table.
type ImportResult struct {
	Project string           `json:"project"`
	Records map[string]int64 `json:"records"`
}

// importCounts counts the records an import wrote.
type importCounts struct {
	total  int64
	tables map[string]int64
}

func (n *importCounts) add(table string, k int64) {
	if n.tables == nil {
		n.tables = map[string]int64{}
	}
	n.total += k
	n.tables[table] += k
}
