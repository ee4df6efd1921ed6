// Package deploy holds the container image and Kubernetes manifests of the service. Its tests
// keep them true to the code: every setting a manifest or the Dockerfile names must exist in
// `platform config-reference`, the probes must answer on a real `platform serve`, and the
// configuration reference in docs/operations.md must be the command's current output.
package deploy

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/platform-dev/platform/cmd/platform/platformtest"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// binary is the platform binary, built once for the whole test run.
var binary string

func TestMain(m *testing.M) { os.Exit(platformtest.Main(m, &binary)) }

// runtimeEnv are variables read by the Go runtime rather than by the service; manifests may
// set them although the configuration reference does not list them.
var runtimeEnv = []string{"GOMEMLIMIT", "GOMAXPROCS", "GOGC", "GODEBUG"}

type referenceEntry struct {
	Command, Flag, Env, Default, Help string
}

type reference []referenceEntry

func loadReference(t *testing.T) reference {
	t.Helper()
	out, err := exec.Command(binary, "config-reference", "--format", "json").Output()
	if err != nil {
		t.Fatalf("platform config-reference --format json: %v", err)
	}
	var ref reference
	if err := json.Unmarshal(out, &ref); err != nil {
		t.Fatalf("decode the configuration reference: %v", err)
	}
	if len(ref) == 0 {
		t.Fatal("the configuration reference is empty")
	}
	return ref
}

// env returns the entry of `serve` for an environment variable.
func (r reference) env(name string) (referenceEntry, bool) {
	i := slices.IndexFunc(r, func(e referenceEntry) bool { return e.Command == "serve" && e.Env == name })
	if i < 0 {
		return referenceEntry{}, false
	}
	return r[i], true
}

func (r reference) known(name string) bool {
	_, ok := r.env(name)
	return ok || slices.Contains(runtimeEnv, name)
}

// The parts of the rendered objects the checks read.
type (
	object struct {
		Kind     string                `json:"kind"`
		Metadata struct{ Name string } `json:"metadata"`
		Data     map[string]string     `json:"data"`
		Spec     json.RawMessage       `json:"spec"`
	}
	podSpec struct {
		Containers []container `json:"containers"`
	}
	container struct {
		Name    string   `json:"name"`
		Args    []string `json:"args"`
		Command []string `json:"command"`
		Ports   []struct {
			Name          string `json:"name"`
			ContainerPort int    `json:"containerPort"`
		} `json:"ports"`
		Env []struct {
			Name      string `json:"name"`
			Value     string `json:"value"`
			ValueFrom *struct {
				SecretKeyRef *struct {
					Name     string `json:"name"`
					Key      string `json:"key"`
					Optional bool   `json:"optional"`
				} `json:"secretKeyRef"`
			} `json:"valueFrom"`
		} `json:"env"`
		EnvFrom []struct {
			ConfigMapRef *struct{ Name string } `json:"configMapRef"`
		} `json:"envFrom"`
		ReadinessProbe *probe `json:"readinessProbe"`
		LivenessProbe  *probe `json:"livenessProbe"`
		StartupProbe   *probe `json:"startupProbe"`
	}
	probe struct {
		HTTPGet *struct {
			Path string `json:"path"`
			Port any    `json:"port"`
		} `json:"httpGet"`
	}
)

type rendered struct {
	name    string
	objects []object
}

func (r rendered) find(kind, name string) (object, bool) {
	for _, o := range r.objects {
		if o.Kind == kind && o.Metadata.Name == name {
			return o, true
		}
	}
	return object{}, false
}

// overlays renders every overlay with the kustomize library (the same release .ci/kubeconform.sh
// installs as a command).
func overlays(t *testing.T) []rendered {
	t.Helper()
	dirs, err := filepath.Glob("k8s/overlays/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no overlays under k8s/overlays (%v)", err)
	}
	var out []rendered
	for _, dir := range dirs {
		resMap, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
		if err != nil {
			t.Fatalf("kustomize build %s: %v", dir, err)
		}
		r := rendered{name: filepath.Base(dir)}
		for _, res := range resMap.Resources() {
			m, err := res.Map()
			if err != nil {
				t.Fatalf("%s: %v", dir, err)
			}
			raw, _ := json.Marshal(m)
			var o object
			if err := json.Unmarshal(raw, &o); err != nil {
				t.Fatalf("%s: decode %s: %v", dir, res.GetKind(), err)
			}
			r.objects = append(r.objects, o)
		}
		out = append(out, r)
	}
	return out
}

// planes are the Deployments of the service, one per role of `serve --role`, each behind
// its own Service of the same name.
var planes = []struct{ name, role string }{{"platform", "api"}, {"platform-mcp", "mcp"}}

// platformContainer returns the container that runs the service in the Deployment
// deployment, and the pod's annotations.
func platformContainer(t *testing.T, r rendered, deployment string) (container, map[string]string) {
	t.Helper()
	dep, ok := r.find("Deployment", deployment)
	if !ok {
		t.Fatalf("overlay %s renders no Deployment %s", r.name, deployment)
	}
	var spec struct {
		Template struct {
			Metadata struct {
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
			Spec podSpec `json:"spec"`
		} `json:"template"`
	}
	if err := json.Unmarshal(dep.Spec, &spec); err != nil {
		t.Fatal(err)
	}
	for _, c := range spec.Template.Spec.Containers {
		if c.Name == "platform" {
			return c, spec.Template.Metadata.Annotations
		}
	}
	t.Fatalf("overlay %s: Deployment %s has no container named platform", r.name, deployment)
	return container{}, nil
}

// settings returns every environment variable the container gets, with its value when the
// manifests give one (secrets are named, not resolved).
func settings(t *testing.T, r rendered, c container) map[string]string {
	t.Helper()
	env := map[string]string{}
	for _, from := range c.EnvFrom {
		if from.ConfigMapRef == nil {
			t.Errorf("overlay %s: envFrom other than a ConfigMap hides which variables it sets; use secretKeyRef for secrets", r.name)
			continue
		}
		cm, ok := r.find("ConfigMap", from.ConfigMapRef.Name)
		if !ok {
			t.Errorf("overlay %s: envFrom names ConfigMap %s, which the overlay does not render", r.name, from.ConfigMapRef.Name)
			continue
		}
		for k, v := range cm.Data {
			env[k] = v
		}
	}
	for _, e := range c.Env {
		env[e.Name] = e.Value
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			env[e.Name] = ""
		}
	}
	return env
}

// portName is the name of the container's port number port; "" when it has none.
func (c container) portName(port string) string {
	for _, p := range c.Ports {
		if fmt.Sprint(p.ContainerPort) == port {
			return p.Name
		}
	}
	return ""
}

func portOf(t *testing.T, addr string) string {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("listen address %q: %v", addr, err)
	}
	return port
}

// TestManifestsMatchReference fails when a manifest sets an environment variable the service
// does not read (a renamed setting), runs a subcommand that does not exist, or listens,
// probes or routes elsewhere than the service does.
func TestManifestsMatchReference(t *testing.T) {
	ref := loadReference(t)
	addr, ok := ref.env("PLATFORM_ADDR")
	if !ok {
		t.Fatal("the reference has no PLATFORM_ADDR")
	}
	for _, r := range overlays(t) {
		t.Run(r.name, func(t *testing.T) {
			for _, plane := range planes {
				checkPlane(t, r, ref, addr, plane.name, plane.role)
			}
			c, _ := platformContainer(t, r, "platform")
			env := settings(t, r, c)

			domain, ok := env["PLATFORM_DOMAIN"]
			if !ok {
				def, _ := ref.env("PLATFORM_DOMAIN")
				domain = def.Default
			}
			ing, ok := r.find("Ingress", "platform")
			if !ok {
				t.Fatal("no Ingress platform")
			}
			var ingSpec struct {
				Rules []struct {
					Host string
					HTTP struct {
						Paths []struct {
							Path    string
							Backend struct{ Service struct{ Name string } }
						}
					}
				} `json:"rules"`
				TLS []struct{ Hosts []string } `json:"tls"`
			}
			if err := json.Unmarshal(ing.Spec, &ingSpec); err != nil {
				t.Fatal(err)
			}
			// Each plane gets its own paths: /mcp on the apex host, everything else.
			mcpRouted := false
			for i, rule := range ingSpec.Rules {
				for _, p := range rule.HTTP.Paths {
					want := "platform"
					if p.Path == "/mcp" {
						want, mcpRouted = "platform-mcp", mcpRouted || i == 0
					}
					if p.Backend.Service.Name != want {
						t.Errorf("Ingress sends %s%s to Service %s, want %s", rule.Host, p.Path, p.Backend.Service.Name, want)
					}
				}
			}
			if !mcpRouted {
				t.Error("the Ingress does not route /mcp on the apex host to the mcp plane")
			}
			want := []string{domain, "*." + domain}
			var hosts []string
			for _, rule := range ingSpec.Rules {
				hosts = append(hosts, rule.Host)
			}
			if !slices.Equal(hosts, want) {
				t.Errorf("Ingress hosts %q, want %q (PLATFORM_DOMAIN and its wildcard)", hosts, want)
			}
			for _, tls := range ingSpec.TLS {
				if !slices.Equal(tls.Hosts, want) {
					t.Errorf("Ingress TLS hosts %q, want %q", tls.Hosts, want)
				}
			}
		})
	}
}

// checkPlane checks the Deployment of one role: its settings, subcommand, listen address,
// probes, Service and metrics.
func checkPlane(t *testing.T, r rendered, ref reference, addr referenceEntry, deployment, role string) {
	t.Helper()
	c, annotations := platformContainer(t, r, deployment)
	env := settings(t, r, c)
	if env["PLATFORM_ROLE"] != role {
		t.Errorf("Deployment %s: PLATFORM_ROLE %q, want %s", deployment, env["PLATFORM_ROLE"], role)
	}
	for name := range env {
		if !ref.known(name) {
			t.Errorf("the manifests set %s, which `platform config-reference` does not list", name)
		}
	}
	if len(c.Command) > 0 {
		t.Errorf("container command %q replaces the image's entrypoint (the platform binary)", c.Command)
	}
	if len(c.Args) == 0 || !slices.ContainsFunc(ref, func(e referenceEntry) bool { return e.Command == c.Args[0] }) {
		t.Errorf("container args %q: want a subcommand of the reference (serve)", c.Args)
	}

	port := portOf(t, addr.Default)
	if v, ok := env["PLATFORM_ADDR"]; ok {
		port = portOf(t, v)
	}
	portName := c.portName(port)
	if portName == "" {
		t.Fatalf("no containerPort is %s, the port the service listens on", port)
	}
	for _, p := range []struct {
		name, path string
		probe      *probe
	}{
		{"readinessProbe", "/readyz", c.ReadinessProbe},
		{"livenessProbe", "/healthz", c.LivenessProbe},
		{"startupProbe", "/healthz", c.StartupProbe},
	} {
		if p.probe == nil || p.probe.HTTPGet == nil {
			t.Errorf("%s: want an httpGet probe", p.name)
			continue
		}
		if p.probe.HTTPGet.Path != p.path {
			t.Errorf("%s path %q, want %q", p.name, p.probe.HTTPGet.Path, p.path)
		}
		if got := fmt.Sprint(p.probe.HTTPGet.Port); got != portName && got != port {
			t.Errorf("%s port %s, want %s (%s)", p.name, got, portName, port)
		}
	}

	svc, ok := r.find("Service", deployment)
	if !ok {
		t.Fatalf("no Service %s", deployment)
	}
	var svcSpec struct {
		Ports []struct {
			TargetPort any `json:"targetPort"`
		} `json:"ports"`
	}
	if err := json.Unmarshal(svc.Spec, &svcSpec); err != nil {
		t.Fatal(err)
	}
	for _, p := range svcSpec.Ports {
		if got := fmt.Sprint(p.TargetPort); got != portName && got != port {
			t.Errorf("Service targetPort %s, want %s (%s)", got, portName, port)
		}
	}

	checkMetrics(t, r, ref, c, env, annotations, svcSpec.Ports)
}

// checkMetrics: Prometheus must find the metrics listener where the annotations say, the
// NetworkPolicy must let it in, and the public Service must not expose it (it names projects).
func checkMetrics(t *testing.T, r rendered, ref reference, c container, env, annotations map[string]string, svcPorts []struct {
	TargetPort any `json:"targetPort"`
}) {
	t.Helper()
	addr, set := env["PLATFORM_METRICS_ADDR"]
	if !set {
		def, ok := ref.env("PLATFORM_METRICS_ADDR")
		if !ok {
			if annotations["prometheus.io/scrape"] == "true" {
				t.Error("the pods ask to be scraped, but the reference has no PLATFORM_METRICS_ADDR")
			}
			return
		}
		addr = def.Default
	}
	if annotations["prometheus.io/scrape"] != "true" {
		return
	}
	if addr == "" {
		t.Fatal("the pods ask to be scraped, but PLATFORM_METRICS_ADDR turns metrics off")
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("PLATFORM_METRICS_ADDR %q: %v", addr, err)
	}
	if ip := net.ParseIP(host); host == "localhost" || ip != nil && ip.IsLoopback() {
		t.Errorf("metrics listen on %s, loopback: Prometheus cannot scrape the pod", addr)
	}
	if got := annotations["prometheus.io/port"]; got != port {
		t.Errorf("annotation prometheus.io/port %q, want %s (PLATFORM_METRICS_ADDR)", got, port)
	}
	name := c.portName(port)
	if name == "" {
		t.Errorf("no containerPort is %s, the metrics port", port)
	}
	for _, p := range svcPorts {
		if got := fmt.Sprint(p.TargetPort); got == port || got == name {
			t.Errorf("the Service exposes the metrics port %s", got)
		}
	}
	np, ok := r.find("NetworkPolicy", "platform")
	if !ok {
		t.Fatal("no NetworkPolicy platform")
	}
	var npSpec struct {
		Ingress []struct {
			Ports []struct {
				Port any `json:"port"`
			} `json:"ports"`
		} `json:"ingress"`
	}
	if err := json.Unmarshal(np.Spec, &npSpec); err != nil {
		t.Fatal(err)
	}
	admitted := false
	for _, rule := range npSpec.Ingress {
		for _, p := range rule.Ports {
			if got := fmt.Sprint(p.Port); got == port || got == name {
				admitted = true
			}
		}
	}
	if !admitted {
		t.Errorf("the NetworkPolicy lets no one in on the metrics port %s", port)
	}
}

// TestSecretsExist checks that every secretKeyRef of an overlay that renders its own Secret
// (dev) points at a key of it; prod expects the operator's Secret (docs/operations.md).
func TestSecretsExist(t *testing.T) {
	for _, r := range overlays(t) {
		for _, plane := range planes {
			c, _ := platformContainer(t, r, plane.name)
			checkSecrets(t, r, c)
		}
	}
}

func checkSecrets(t *testing.T, r rendered, c container) {
	t.Helper()
	for _, e := range c.Env {
		if e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
			continue
		}
		ref := e.ValueFrom.SecretKeyRef
		sec, ok := r.find("Secret", ref.Name)
		if !ok {
			if r.name == "dev" {
				t.Errorf("overlay dev: %s names Secret %s, which the overlay does not render", e.Name, ref.Name)
			}
			continue
		}
		if _, ok := sec.Data[ref.Key]; !ok && !ref.Optional {
			t.Errorf("overlay %s: %s names key %s of Secret %s, which it lacks", r.name, e.Name, ref.Key, ref.Name)
		}
	}
}

// TestSettingsStartTheService starts `platform serve` with each overlay's settings (the
// stores, the listen address and the folders replaced by local ones) and asks the probes'
// paths: a value the service cannot parse, or a probe path it does not serve, fails.
func TestSettingsStartTheService(t *testing.T) {
	local := map[string]bool{"PLATFORM_ADDR": true, "PLATFORM_DATA": true, "MCP_WORKSPACE": true,
		"MONGODB_URI": true, "REDIS_URL": true, "PLATFORM_LOG_FORMAT": true, "PLATFORM_METRICS_ADDR": true}
	for _, r := range overlays(t) {
		for _, plane := range planes {
			t.Run(r.name+"/"+plane.role, func(t *testing.T) {
				startPlane(t, r, plane.name, local)
			})
		}
	}
}

// startPlane starts `platform serve` with the settings of the Deployment deployment (those
// in local left out) and asks its probes' paths and metrics.
func startPlane(t *testing.T, r rendered, deployment string, local map[string]bool) {
	t.Helper()
	c, annotations := platformContainer(t, r, deployment)
	environ := []string{"PLATFORM_LOG_FORMAT=text"}
	env := settings(t, r, c)
	for k, v := range env {
		if !local[k] {
			environ = append(environ, k+"="+v)
		}
	}
	environ = append(environ, "PLATFORM_METRICS_ADDR=127.0.0.1:0")
	scrape := annotations["prometheus.io/scrape"] == "true"
	srv := platformtest.Start(t, binary, "", environ...)
	domain := env["PLATFORM_DOMAIN"]
	if domain == "" {
		domain = "localhost"
	}
	for _, p := range []*probe{c.ReadinessProbe, c.LivenessProbe, c.StartupProbe} {
		if p == nil || p.HTTPGet == nil {
			continue // TestManifestsMatchReference reports it
		}
		get(t, srv.Addr, domain, p.HTTPGet.Path, "")
	}
	if scrape {
		if srv.MetricsAddr == "" {
			t.Fatal("the pods ask to be scraped, but serve started no metrics listener")
		}
		get(t, srv.MetricsAddr, "", annotations["prometheus.io/path"], "platform_http_requests_total")
	}
}

// get asks for a path and fails the test unless it answers 200 with want in its body.
func get(t *testing.T, addr, host, path, want string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
		t.Errorf("GET %s: %d, want 200 with %q:\n%.2000s", path, resp.StatusCode, want, body)
	}
}

// TestOperationsDocHasCurrentReference fails when docs/operations.md does not embed the
// output of `platform config-reference` between its markers.
func TestOperationsDocHasCurrentReference(t *testing.T) {
	const start, end = "<!-- config-reference:start -->", "<!-- config-reference:end -->"
	doc, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), start)
	embedded, _, ok2 := strings.Cut(rest, end)
	if !ok || !ok2 {
		t.Fatalf("docs/operations.md lacks the markers %s ... %s", start, end)
	}
	out, err := exec.Command(binary, "config-reference", "--format", "markdown").Output()
	if err != nil {
		t.Fatalf("platform config-reference: %v", err)
	}
	if strings.TrimSpace(embedded) != strings.TrimSpace(string(out)) {
		t.Errorf("docs/operations.md's configuration reference differs from `platform config-reference`; "+
			"paste its output between the markers.\nwant:\n%s", out)
	}
}

var envLine = regexp.MustCompile(`^(?:#\s*)?([A-Z][A-Z0-9_]*)=`)

// TestSystemdExample checks the one-machine example: the settings its environment file names
// (commented examples included) and the subcommand and flags of the unit's ExecStart.
func TestSystemdExample(t *testing.T) {
	ref := loadReference(t)
	env, err := os.ReadFile("systemd/platform.env.example")
	if err != nil {
		t.Fatal(err)
	}
	names := 0
	for line := range strings.Lines(string(env)) {
		if m := envLine.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			names++
			if !ref.known(m[1]) {
				t.Errorf("platform.env.example names %s, which `platform config-reference` does not list", m[1])
			}
		}
	}
	if names == 0 {
		t.Error("platform.env.example names no setting")
	}

	unit, err := os.ReadFile("systemd/platform.service")
	if err != nil {
		t.Fatal(err)
	}
	var exec []string
	for line := range strings.Lines(string(unit)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "ExecStart="); ok {
			exec = strings.Fields(v)
		}
	}
	if len(exec) < 2 {
		t.Fatalf("platform.service: ExecStart %q: want the binary and a subcommand", exec)
	}
	command := exec[1]
	for _, arg := range exec[2:] {
		if !strings.HasPrefix(arg, "--") {
			continue
		}
		flag, _, _ := strings.Cut(arg, "=")
		if !slices.ContainsFunc(ref, func(e referenceEntry) bool { return e.Command == command && e.Flag == flag }) {
			t.Errorf("platform.service runs `platform %s %s`, a flag the reference does not list", command, flag)
		}
	}
}

var metricName = regexp.MustCompile(`\bplatform_[a-z_]+[a-z]\b`)

// registeredMetrics returns the metric names the service's code registers: the string
// literals that look like platform metric names in its non-test Go files.
func registeredMetrics(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	literal := regexp.MustCompile(`"(platform_[a-z_]+)"`)
	err := filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != ".." || path == filepath.Join("..", "deploy")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range literal.FindAllStringSubmatch(string(b), -1) {
			names[m[1]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// metricFamily is the family a series name belongs to (histograms expose _bucket, _sum, _count).
func metricFamily(series string) string {
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if f, ok := strings.CutSuffix(series, suffix); ok {
			return f
		}
	}
	return series
}

// TestAlertRules checks the Prometheus rules: strict shape, metrics the service registers,
// and a runbook section in docs/operations.md for every alert.
func TestAlertRules(t *testing.T) {
	raw, err := os.ReadFile("prometheus/alerts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Groups []struct {
			Name  string `json:"name"`
			Rules []struct {
				Alert       string            `json:"alert"`
				Expr        string            `json:"expr"`
				For         string            `json:"for"`
				Labels      map[string]string `json:"labels"`
				Annotations map[string]string `json:"annotations"`
			} `json:"rules"`
		} `json:"groups"`
	}
	if err := yaml.UnmarshalStrict(raw, &file); err != nil {
		t.Fatalf("prometheus/alerts.yaml: %v", err)
	}
	doc, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	registered := registeredMetrics(t)
	alerts := 0
	for _, g := range file.Groups {
		for _, r := range g.Rules {
			alerts++
			if r.Alert == "" || strings.TrimSpace(r.Expr) == "" {
				t.Errorf("group %s: a rule without alert or expr", g.Name)
				continue
			}
			if _, err := time.ParseDuration(r.For); err != nil {
				t.Errorf("%s: for %q: %v", r.Alert, r.For, err)
			}
			for _, series := range metricName.FindAllString(r.Expr, -1) {
				if !registered[metricFamily(series)] {
					t.Errorf("%s uses %s, which the service does not register", r.Alert, series)
				}
			}
			if want := "docs/operations.md#" + strings.ToLower(r.Alert); r.Annotations["runbook"] != want {
				t.Errorf("%s: runbook annotation %q, want %q", r.Alert, r.Annotations["runbook"], want)
			}
			if !strings.Contains(string(doc), "\n### "+r.Alert+"\n") {
				t.Errorf("docs/operations.md has no runbook section \"### %s\"", r.Alert)
			}
		}
	}
	if alerts == 0 {
		t.Fatal("prometheus/alerts.yaml has no rules")
	}
	for _, series := range metricName.FindAllString(string(doc), -1) {
		if !registered[metricFamily(series)] {
			t.Errorf("docs/operations.md names the metric %s, which the service does not register", series)
		}
	}
}
