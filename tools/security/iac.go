package security

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/platform-dev/platform/tools"

	lru "github.com/hashicorp/golang-lru/v2"
)

// IaCHelperName is the file name of the program that runs Trivy's IaC scanners
// (tools/security/trivyhelper), which `make build` puts beside the platform binary.
const IaCHelperName = "platform-iac"

// Limits of the IaC helper process.
const (
	// iacMemory is the helper's address-space limit: Trivy's checks take about 300 MB
	// compiled, a large Terraform tree a few hundred more; past this the helper dies alone.
	iacMemory = 3 << 30
	// iacSoftMemory is its GOMEMLIMIT, where its collector starts working hard.
	iacSoftMemory = "700MiB"
	// iacMaxBytes bounds the declarations one call sends to the helper.
	iacMaxBytes = 32 << 20
)

// iacFile is one declaration file for the helper, path relative to the assessed folder.
type iacFile struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// trivyFinding is one failed check as the helper reports it: the wire form of trivyhelper's
// Finding, written out on both sides because the modules share nothing but the protocol
// (importing either from the other would pull Trivy into the server or the server into it).
type trivyFinding struct {
	ID         string   `json:"id"`
	AVDID      string   `json:"avdId"`
	LongID     string   `json:"longId"`
	Severity   string   `json:"severity"`
	Title      string   `json:"title"`
	Message    string   `json:"message"`
	Resolution string   `json:"resolution"`
	File       string   `json:"file"`
	Line       int      `json:"line"`
	EndLine    int      `json:"endLine"`
	Resource   string   `json:"resource"`
	Source     string   `json:"source"`
	Links      []string `json:"links"`
}

type iacResponse struct {
	Findings []trivyFinding `json:"findings"`
	Error    string         `json:"error"`
}

// iacEngine runs the helper: one process, started on the first call and kept, one scan at a
// time (the checks are compiled once in it and shared). A helper that crashes, answers
// garbage or outlives a call's deadline is killed; the next call starts a new one. Results
// are cached by the content of every declaration file sent.
type iacEngine struct {
	path  string
	log   *slog.Logger
	slot  chan struct{} // held while a scan uses the process
	cache *lru.Cache[[sha256.Size]byte, []trivyFinding]

	// The fields below belong to whoever holds slot.
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	done   chan struct{} // closed when cmd has exited
	starts int
}

func newIaCEngine(path string, logger *slog.Logger) *iacEngine {
	cache, err := lru.New[[sha256.Size]byte, []trivyFinding](32)
	if err != nil {
		panic(err) // only for a size <= 0
	}
	return &iacEngine{path: path, log: logger, slot: make(chan struct{}, 1), cache: cache}
}

// FindIaCHelper looks for the helper beside the running executable, then on PATH; "" when
// there is none.
func FindIaCHelper() string {
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), IaCHelperName)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
	}
	if p, err := exec.LookPath(IaCHelperName); err == nil {
		return p
	}
	return ""
}

// scan runs Trivy's checks on files. cached reports a result from the cache.
func (e *iacEngine) scan(ctx context.Context, files []iacFile) (fs []trivyFinding, cached bool, err error) {
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	h := sha256.New()
	for _, f := range files {
		fmt.Fprintf(h, "%s\x00%d\x00%s", f.Path, len(f.Content), f.Content)
	}
	var key [sha256.Size]byte
	h.Sum(key[:0])
	if fs, ok := e.cache.Get(key); ok {
		return fs, true, nil
	}
	select {
	case e.slot <- struct{}{}:
	case <-ctx.Done():
		return nil, false, ctx.Err()
	}
	defer func() { <-e.slot }()
	if fs, ok := e.cache.Get(key); ok { // the call this one waited for scanned the same files
		return fs, true, nil
	}
	resp, err := e.roundTrip(ctx, files)
	if err != nil {
		return nil, false, err
	}
	if resp.Error != "" {
		// Some files did not parse; the findings of the others are still right.
		err = fmt.Errorf("trivy: %s", resp.Error)
	} else {
		e.cache.Add(key, resp.Findings)
	}
	return resp.Findings, false, err
}

// roundTrip sends one request to the helper, starting it when needed, and reads the answer.
// Whatever goes wrong leaves no process behind in an unknown state.
func (e *iacEngine) roundTrip(ctx context.Context, files []iacFile) (*iacResponse, error) {
	if e.cmd == nil {
		if err := e.start(); err != nil {
			return nil, err
		}
	}
	req, err := json.Marshal(struct {
		Files []iacFile `json:"files"`
	}{files})
	if err != nil {
		return nil, fmt.Errorf("encode IaC request: %w", err)
	}
	type result struct {
		line []byte
		err  error
	}
	got := make(chan result, 1)
	go func() {
		if _, err := e.stdin.Write(append(req, '\n')); err != nil {
			got <- result{err: err}
			return
		}
		line, err := e.stdout.ReadBytes('\n')
		got <- result{line, err}
	}()
	var r result
	select {
	case r = <-got:
	case <-ctx.Done():
		e.stop() // its answer would come late and out of step with the next request
		<-got
		return nil, ctx.Err()
	}
	if r.err != nil {
		e.stop()
		return nil, fmt.Errorf("IaC helper died (%w); it restarts on the next call", r.err)
	}
	var resp iacResponse
	if err := json.Unmarshal(r.line, &resp); err != nil {
		e.stop()
		return nil, fmt.Errorf("IaC helper answered %d bytes that are not a response: %w", len(r.line), err)
	}
	return &resp, nil
}

// start runs a new helper process.
func (e *iacEngine) start() error {
	cmd := exec.Command(e.path, "-max-memory", strconv.Itoa(iacMemory))
	cmd.Env = append(os.Environ(), "GOMEMLIMIT="+iacSoftMemory)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return fmt.Errorf("IaC helper: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("IaC helper: %w", err)
	}
	cmd.Stderr = &logWriter{log: e.log}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start IaC helper %s: %w", e.path, err)
	}
	e.starts++
	e.cmd, e.stdin, e.stdout, e.done = cmd, stdin, bufio.NewReaderSize(stdout, 1<<20), make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) {
		err := cmd.Wait()
		var exit *exec.ExitError
		if err != nil && !(errors.As(err, &exit) && !exit.Exited()) { // killed by stop: said already
			e.log.Warn("IaC helper exited", "err", err)
		}
		close(done)
	}(cmd, e.done)
	return nil
}

// stop kills the helper and waits for it; the caller holds slot.
func (e *iacEngine) stop() {
	if e.cmd == nil {
		return
	}
	_ = e.cmd.Process.Kill()
	select {
	case <-e.done:
	case <-time.After(5 * time.Second):
		e.log.Warn("IaC helper did not exit after kill", "pid", e.cmd.Process.Pid)
	}
	e.cmd, e.stdin, e.stdout = nil, nil, nil
}

// Close stops the helper.
func (e *iacEngine) Close() {
	e.slot <- struct{}{}
	defer func() { <-e.slot }()
	if e.cmd != nil {
		_ = e.stdin.Close() // the helper ends at the end of its input
		select {
		case <-e.done:
			e.cmd = nil
		case <-time.After(2 * time.Second):
			e.stop()
		}
	}
}

// logWriter passes the helper's stderr lines (Trivy's warnings) to the server's log.
type logWriter struct{ log *slog.Logger }

func (w *logWriter) Write(p []byte) (int, error) {
	for _, line := range bytes.Split(bytes.TrimSpace(p), []byte("\n")) {
		if len(line) > 0 {
			w.log.Debug("IaC helper", "msg", string(line))
		}
	}
	return len(p), nil
}

// trivyEquivalents are Trivy's checks that find what one of platform's own rules finds; a
// finding of ours next to one of these in the same file is the same problem reported twice.
// Rules absent here (wildcard IAM, secrets in manifests, ...) have no Trivy check.
var trivyEquivalents = map[string][]string{
	ruleOpenAdmin.id:        {"AWS-0107", "AWS-0104", "AZU-0047", "AZU-0050", "GCP-0027", "GCP-0030", "GCP-0029"},
	ruleOpenHTTP.id:         {"AWS-0107", "GCP-0027"},
	rulePublicBucket.id:     {"AWS-0092", "AWS-0086", "AWS-0087", "AWS-0091", "AWS-0093", "GCP-0001", "AZU-0007"},
	ruleUnencrypted.id:      {"AWS-0088", "AWS-0080", "AWS-0026", "AWS-0131", "AWS-0027", "AWS-0079", "AWS-0037", "AWS-0096"},
	rulePrivileged.id:       {"KSV-0017"},
	ruleRoot.id:             {"KSV-0012", "KSV-0020", "KSV-0105"},
	ruleHostPath.id:         {"KSV-0023"},
	ruleLatest.id:           {"KSV-0013"},
	ruleDockerSocket.id:     {"KSV-0006"},
	ruleHostNamespace.id:    {"KSV-0008", "KSV-0009", "KSV-0010"},
	ruleCapabilities.id:     {"KSV-0022", "KSV-0005"},
	ruleEscalation.id:       {"KSV-0001"},
	ruleClusterAdmin.id:     {"KSV-0111"},
	rulePublicDatabase.id:   {"AWS-0180", "AWS-0082"},
	ruleIMDSv1.id:           {"AWS-0028", "AWS-0130"},
	ruleOpenAPIMethod.id:    {"AWS-0004"},
	ruleAPIAccessLog.id:     {"AWS-0001", "AWS-0113", "AWS-0116"},
	ruleAPITracing.id:       {"AWS-0003", "AWS-0111"},
	ruleAPICache.id:         {"AWS-0190"},
	rulePublicIP.id:         {"AWS-0009"},
	ruleDefaultTLSPolicy.id: {"AWS-0047"},
	ruleAWSManagedKey.id:    {"AWS-0025", "AWS-0098"},
	ruleKeyRotation.id:      {"AWS-0065"},
	ruleNoPITR.id:           {"AWS-0024"},
	ruleSGDescription.id:    {"AWS-0124"},
	ruleUserDataSecret.id:   {"AWS-0029", "AWS-0129"},
	rulePlainListener.id:    {"AWS-0054"},
	ruleCloudFrontHTTP.id:   {"AWS-0012"},
	ruleLambdaSource.id:     {"AWS-0067"},
	ruleUserPolicy.id:       {"AWS-0143"},
	ruleDockerUser.id:       {"DS-0002"},
	ruleDockerAdd.id:        {"DS-0005"},
}

// trivyFindings converts the helper's findings and drops our own findings that say the same
// thing at the same place: Trivy's finding stays, naming ours in AlsoMatched.
func trivyFindings(own []Finding, tf []trivyFinding) (ours, theirs []Finding) {
	for _, t := range tf {
		line := max(t.Line, 1)
		theirs = append(theirs, Finding{
			RuleID: t.ID, Title: t.Title, Severity: t.Severity, Category: CategoryInfrastructure,
			File: t.File, Line: line, Location: fmt.Sprintf("%s:%d", t.File, line),
			Message: t.Message, Remediation: t.Resolution, Tool: "trivy", Resource: t.Resource,
		})
	}
	for _, f := range own {
		i := nearestEquivalent(f, tf)
		if i < 0 {
			ours = append(ours, f)
			continue
		}
		if !slices.Contains(theirs[i].AlsoMatched, f.RuleID) {
			theirs[i].AlsoMatched = append(theirs[i].AlsoMatched, f.RuleID)
		}
	}
	return ours, theirs
}

// nearestEquivalent returns the index of the Trivy finding that reports f's problem: an
// equivalent check in the same file, on the same resource when both name theirs, whose lines
// are nearest f's, within a few lines (Trivy points at a resource, a container or the
// offending value, ours at the attribute or the block); -1 when there is none.
func nearestEquivalent(f Finding, tf []trivyFinding) int {
	const near = 5
	eq := trivyEquivalents[f.RuleID]
	best, bestScore := -1, 2*near+2
	for i, t := range tf {
		if t.File != f.File || !slices.Contains(eq, t.ID) || (t.Resource != "" && f.Resource != "" && t.Resource != f.Resource) {
			continue // another check, or the same check on a resource declared nearby
		}
		dist := 0
		if end := max(t.EndLine, t.Line); f.Line < t.Line {
			dist = t.Line - f.Line
		} else if f.Line > end {
			dist = f.Line - end
		}
		score := 2 * dist // within the range, one that starts on f's line is nearer still
		if t.Line != f.Line {
			score++
		}
		if score < bestScore {
			best, bestScore = i, score
		}
	}
	return best
}

// trivy runs Trivy's checks on the declarations of a call and merges them with the findings
// so far (out), dropping ours that Trivy also found. Without the helper, or when it fails,
// out stays as it is and a note says why.
func (a *Assessor) trivy(ctx, work context.Context, files []iacFile, out []Finding) ([]Finding, []string) {
	if a.iac == nil {
		return out, []string{"Trivy's IaC checks did not run: " + IaCHelperName + " is not installed beside the server (make build); only platform's own infrastructure rules ran"}
	}
	if len(files) == 0 {
		return out, nil
	}
	tools.ReportProgress(ctx, 0, 0, fmt.Sprintf("running Trivy's checks on %d declaration files", len(files)))
	tf, _, err := a.iac.scan(work, files)
	var notes []string
	if err != nil {
		if work.Err() != nil {
			return out, nil // the caller flags the report truncated
		}
		notes = append(notes, err.Error())
		if len(tf) == 0 {
			return out, notes
		}
	}
	var infra, rest []Finding
	for _, f := range out {
		if f.Category == CategoryInfrastructure {
			infra = append(infra, f)
		} else {
			rest = append(rest, f)
		}
	}
	ours, theirs := trivyFindings(infra, tf)
	return append(append(rest, ours...), theirs...), notes
}

// chartFile reports whether rel may belong to a Helm chart: its Chart.yaml, values files,
// templates and helpers. The helper renders the folders that have a Chart.yaml and ignores
// the rest.
func chartFile(rel string) bool {
	base := path.Base(rel)
	ext := path.Ext(base)
	switch {
	case base == "Chart.yaml" || base == ".helmignore":
		return true
	case ext == ".tpl":
		return true
	case ext == ".yaml" || ext == ".yml" || ext == ".txt":
		return strings.HasPrefix(base, "values") || strings.Contains("/"+rel, "/templates/")
	}
	return false
}
