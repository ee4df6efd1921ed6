package security

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"regexp"
	"strings"

	"github.com/platform-dev/platform/tools/cloud"
	"github.com/zricethezav/gitleaks/v8/detect"
)

// infraRule describes a misconfiguration; the checks below report it per occurrence.
type infraRule struct {
	id, severity, cwe, cis, remediation, title string
}

var (
	ruleOpenAdmin = infraRule{"iac/ingress-open-admin-port", "high", "CWE-284", "CIS AWS Foundations 5.2 / CIS GCP 3.6-3.7",
		"Allow SSH/RDP only from known ranges (a bastion, VPN or corporate CIDR), or use SSM Session Manager / IAP instead of open ports", "Administration port open to the internet"}
	rulePublicBucket = infraRule{"iac/public-bucket", "high", "CWE-732", "CIS AWS Foundations 2.1.4 / CIS GCP 5.1",
		"Keep buckets private: enable all four S3 Block Public Access settings, drop public ACLs and allUsers bindings, and serve public content through a CDN with origin access control", "Publicly accessible storage bucket"}
	ruleUnencrypted = infraRule{"iac/unencrypted-storage", "medium", "CWE-311", "",
		"Enable encryption at rest (encrypted = true / storage_encrypted = true, with a customer-managed KMS key where required)", "Storage not encrypted at rest"}
	ruleWildcardIAM = infraRule{"iac/iam-wildcard", "high", "CWE-269", "CIS AWS Foundations 1.16",
		"Grant the specific actions on the specific resources the principal needs; never Action \"*\" on Resource \"*\"", "IAM policy with wildcard permissions"}
	rulePrivileged = infraRule{"iac/privileged-container", "high", "CWE-250", "CIS Kubernetes 5.2.2",
		"Remove privileged: true; grant the single capability needed (securityContext.capabilities.add) instead", "Privileged container"}
	ruleRoot = infraRule{"iac/container-runs-as-root", "medium", "CWE-250", "CIS Kubernetes 5.2.7",
		"Set securityContext.runAsNonRoot: true and a non-zero runAsUser, and build the image with a non-root USER", "Container may run as root"}
	ruleHostPath = infraRule{"iac/hostpath-volume", "high", "CWE-668", "CIS Kubernetes 5.2.12",
		"Use a PersistentVolumeClaim, emptyDir or projected volume instead of mounting the node's filesystem", "hostPath volume"}
	ruleLatest = infraRule{"iac/image-latest-tag", "medium", "CWE-494", "",
		"Pin images to a version tag and, better, a digest (image: repo/app:1.4.2@sha256:...) so that what runs is what was reviewed", "Floating image tag"}
	ruleSecretInManifest = infraRule{"iac/secret-in-manifest", "high", "CWE-798", "CIS Kubernetes 5.4.1",
		"Keep secret values out of the repository: reference a Secret (valueFrom.secretKeyRef) filled by a secret manager (External Secrets, Sealed Secrets, SOPS)", "Secret value in a manifest"}
	ruleDockerSocket = infraRule{"iac/docker-socket-mount", "critical", "CWE-250", "CIS Docker 5.31",
		"Do not mount /var/run/docker.sock into containers: it is root on the host", "Docker socket mounted into a container"}
)

func (r infraRule) finding(res *cloud.Resource, line int, msg string) Finding {
	return Finding{
		RuleID: r.id, Severity: r.severity, Category: CategoryInfrastructure, CWE: r.cwe, CIS: r.cis,
		File: res.File, Line: line, Location: fmt.Sprintf("%s:%d", res.File, line),
		Message: msg, Remediation: r.remediation, Tool: "platform", Title: r.title, Resource: res.Address,
	}
}

var adminPorts = []float64{22, 3389}

// infraFindings applies the misconfiguration rules to an inventory;
// d finds secrets in instance user data.
func infraFindings(ctx context.Context, inv *cloud.Inventory, d *detect.Detector) []Finding {
	var out []Finding
	for _, r := range inv.Resources {
		out = append(out, ingress(r)...)
		out = append(out, publicBucket(r)...)
		out = append(out, unencrypted(r)...)
		out = append(out, iam(r)...)
		out = append(out, containers(r, inv.ImagePins)...)
		out = append(out, explicitFindings(r)...)
		out = append(out, cloudFormationFindings(r)...)
		out = append(out, dataFindings(r)...)
		out = append(out, accessFindings(r)...)
		out = append(out, moreFindings(ctx, r, d)...)
	}
	return append(out, kubernetesSetFindings(inv)...)
}

// world reports whether v names the whole internet: a CIDR of length 0 (0.0.0.0/0, ::/0, in
// any spelling), or a list with one.
func world(v any) bool {
	for _, c := range asStrings(v) {
		if p, err := netip.ParsePrefix(c); err == nil && p.Bits() == 0 {
			return true
		}
	}
	return false
}

func asStrings(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// coversPort reports whether a port range (or all traffic) includes one of ports.
func coversPort(ports []float64, from, to any, protocol string) (bool, string) {
	if protocol == "-1" || protocol == "all" {
		return true, "all ports"
	}
	lo, ok1 := num(from)
	hi, ok2 := num(to)
	if !ok1 || !ok2 {
		return false, ""
	}
	for _, p := range ports {
		if lo <= p && p <= hi {
			return true, fmt.Sprintf("port %g", p)
		}
	}
	return false, ""
}

func num(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case string:
		var f float64
		_, err := fmt.Sscan(x, &f)
		return f, err == nil
	}
	return 0, false
}

// openIngress is an ingress rule open to the whole internet: its ports (or protocol, for
// all traffic) and line.
type openIngress struct {
	from, to any
	protocol string
	line     int
}

// worldIngress lists the ingress rules of r open to the whole internet.
func worldIngress(r *cloud.Resource) []openIngress {
	var out []openIngress
	switch r.Type {
	case "aws_security_group":
		for i, in := range r.Blocks("ingress") {
			if world(in["cidr_blocks"]) || world(in["ipv6_cidr_blocks"]) {
				out = append(out, openIngress{in["from_port"], in["to_port"], fmt.Sprint(in["protocol"]), r.LineOf("ingress", i)})
			}
		}
	case "aws_security_group_rule":
		if r.String("type") == "ingress" && (world(r.Get("cidr_blocks")) || world(r.Get("ipv6_cidr_blocks"))) {
			out = append(out, openIngress{r.Get("from_port"), r.Get("to_port"), r.String("protocol"), r.LineOf("cidr_blocks")})
		}
	case "aws_vpc_security_group_ingress_rule":
		if world(r.Get("cidr_ipv4")) || world(r.Get("cidr_ipv6")) {
			out = append(out, openIngress{r.Get("from_port"), r.Get("to_port"), r.String("ip_protocol"), r.LineOf("cidr_ipv4")})
		}
	case "AWS::EC2::SecurityGroup":
		for i, in := range r.Blocks("SecurityGroupIngress") {
			if world(in["CidrIp"]) || world(in["CidrIpv6"]) {
				out = append(out, openIngress{in["FromPort"], in["ToPort"], fmt.Sprint(in["IpProtocol"]), r.LineOf("SecurityGroupIngress", i)})
			}
		}
	case "AWS::EC2::SecurityGroupIngress":
		if world(r.Get("CidrIp")) || world(r.Get("CidrIpv6")) {
			out = append(out, openIngress{r.Get("FromPort"), r.Get("ToPort"), r.String("IpProtocol"), r.Line})
		}
	case "google_compute_firewall":
		if d := r.String("direction"); (d == "" || d == "INGRESS") && world(r.Get("source_ranges")) {
			for i, a := range r.Blocks("allow") {
				ports := asStrings(a["ports"])
				if len(ports) == 0 {
					out = append(out, openIngress{protocol: "all", line: r.LineOf("allow", i)})
				}
				for _, p := range ports {
					lo, hi, _ := strings.Cut(p, "-")
					if hi == "" {
						hi = lo
					}
					out = append(out, openIngress{lo, hi, "", r.LineOf("allow", i)})
				}
			}
		}
	}
	return out
}

func ingress(r *cloud.Resource) []Finding {
	var out []Finding
	for _, in := range worldIngress(r) {
		if ok, what := coversPort(adminPorts, in.from, in.to, in.protocol); ok {
			out = append(out, ruleOpenAdmin.finding(r, in.line, fmt.Sprintf("%s allows %s from the whole internet", r.Address, what)))
		}
	}
	return out
}

var publicACL = map[string]bool{"public-read": true, "public-read-write": true, "authenticated-read": true,
	"PublicRead": true, "PublicReadWrite": true, "AuthenticatedRead": true}

func publicBucket(r *cloud.Resource) []Finding {
	var out []Finding
	switch r.Type {
	case "aws_s3_bucket", "aws_s3_bucket_acl":
		if acl := r.String("acl"); publicACL[acl] {
			out = append(out, rulePublicBucket.finding(r, r.LineOf("acl"), fmt.Sprintf("%s grants the canned ACL %s", r.Address, acl)))
		}
	case "aws_s3_bucket_public_access_block":
		for _, k := range []string{"block_public_acls", "block_public_policy", "ignore_public_acls", "restrict_public_buckets"} {
			if v, ok := r.Bool(k); ok && !v {
				out = append(out, rulePublicBucket.finding(r, r.LineOf(k), fmt.Sprintf("%s turns %s off", r.Address, k)))
			}
		}
	case "AWS::S3::Bucket":
		if acl := r.String("AccessControl"); publicACL[acl] {
			out = append(out, rulePublicBucket.finding(r, r.LineOf("AccessControl"), fmt.Sprintf("%s grants the canned ACL %s", r.Address, acl)))
		}
		for _, k := range []string{"BlockPublicAcls", "BlockPublicPolicy", "IgnorePublicAcls", "RestrictPublicBuckets"} {
			if v, ok := r.Bool("PublicAccessBlockConfiguration", k); ok && !v {
				out = append(out, rulePublicBucket.finding(r, r.LineOf("PublicAccessBlockConfiguration", k), fmt.Sprintf("%s turns %s off", r.Address, k)))
			}
		}
	case "google_storage_bucket_iam_member", "google_storage_bucket_iam_binding":
		members := append(asStrings(r.Get("member")), asStrings(r.Get("members"))...)
		for _, m := range members {
			if m == "allUsers" || m == "allAuthenticatedUsers" {
				out = append(out, rulePublicBucket.finding(r, r.LineOf("member"), fmt.Sprintf("%s grants %s to %s", r.Address, r.String("role"), m)))
			}
		}
	}
	return out
}

func unencrypted(r *cloud.Resource) []Finding {
	check := func(key, what, cis string) []Finding {
		if v, ok := r.Bool(key); ok && v {
			return nil
		}
		f := ruleUnencrypted.finding(r, r.LineOf(key), fmt.Sprintf("%s %s is not encrypted at rest (%s is not true)", what, r.Address, key))
		f.CIS = cis
		return []Finding{f}
	}
	switch r.Type {
	case "aws_ebs_volume":
		return check("encrypted", "EBS volume", "CIS AWS Foundations 2.2.1")
	case "AWS::EC2::Volume":
		return check("Encrypted", "EBS volume", "CIS AWS Foundations 2.2.1")
	case "aws_db_instance", "aws_rds_cluster":
		return check("storage_encrypted", "database", "CIS AWS Foundations 2.3.1")
	case "AWS::RDS::DBInstance", "AWS::RDS::DBCluster":
		return check("StorageEncrypted", "database", "CIS AWS Foundations 2.3.1")
	}
	return nil
}

// policyDoc is one policy of a resource and the path of its attribute.
type policyDoc struct {
	doc  any
	path []any
}

// policyDocuments lists the identity policies a resource declares. A Terraform
// aws_iam_policy_document gives one document per statement block, in the JSON policy
// grammar.
func policyDocuments(r *cloud.Resource) []policyDoc {
	var docs []policyDoc
	add := func(v any, p ...any) { docs = append(docs, policyDoc{policyDocument(v), p}) }
	switch r.Type {
	case "aws_iam_policy", "aws_iam_role_policy", "aws_iam_user_policy", "aws_iam_group_policy":
		add(r.Get("policy"), "policy")
	case "AWS::IAM::Policy", "AWS::IAM::ManagedPolicy":
		add(r.Get("PolicyDocument"), "PolicyDocument")
	case "AWS::IAM::Role", "AWS::IAM::User", "AWS::IAM::Group":
		for i, p := range r.Blocks("Policies") {
			add(p["PolicyDocument"], "Policies", i, "PolicyDocument")
		}
	case "aws_iam_policy_document":
		for i, st := range r.Blocks("statement") {
			effect, _ := st["effect"].(string)
			if effect == "" {
				effect = "Allow"
			}
			add(map[string]any{"Statement": []any{map[string]any{"Effect": effect, "Action": st["actions"], "Resource": st["resources"], "Condition": st["condition"]}}}, "statement", i)
		}
	}
	return docs
}

// iam finds Allow statements with wildcard actions on all resources.
func iam(r *cloud.Resource) []Finding {
	docs := policyDocuments(r)
	var out []Finding
	for _, d := range docs {
		line := r.LineOf(d.path[:min(len(d.path), 2)]...) // the policy, or the entry of Policies
		for _, st := range statements(d.doc) {
			if eff, _ := st["Effect"].(string); eff != "Allow" {
				continue
			}
			actions, resources := asStrings(st["Action"]), asStrings(st["Resource"])
			allRes := contains(resources, "*")
			switch {
			case allRes && (contains(actions, "*") || contains(actions, "*:*")):
				f := ruleWildcardIAM.finding(r, line, fmt.Sprintf("%s allows every action on every resource (full administrator)", r.Address))
				f.Severity = "critical"
				out = append(out, f)
			case allRes && hasServiceWildcard(actions):
				f := ruleWildcardIAM.finding(r, line, fmt.Sprintf("%s allows all actions of a service (%s) on every resource", r.Address, strings.Join(actions, ", ")))
				f.CIS = ""
				out = append(out, f)
			}
		}
	}
	return out
}

// policyDocument decodes a policy written as a JSON string (Terraform's policy, a block
// scalar in CloudFormation); other values are already decoded.
func policyDocument(v any) any {
	if s, ok := v.(string); ok && !cloud.Unresolved(s) {
		var d any
		if json.Unmarshal([]byte(s), &d) == nil {
			return d
		}
	}
	return v
}

func statements(doc any) []map[string]any {
	st := cloud.Lookup(doc, "Statement")
	switch x := st.(type) {
	case map[string]any:
		return []map[string]any{x}
	case []any:
		var out []map[string]any
		for _, e := range x {
			if m, ok := e.(map[string]any); ok {
				out = append(out, m)
			}
		}
		return out
	}
	return nil
}

func hasServiceWildcard(actions []string) bool {
	for _, a := range actions {
		if strings.HasSuffix(a, ":*") {
			return true
		}
	}
	return false
}

var (
	secretName = regexp.MustCompile(`(?i)(passw(or)?d|secret|token|api_?key|private_?key|access_?key|credentials?)`)
	pinned     = regexp.MustCompile(`@sha256:[0-9a-f]{64}$`)
)

// imageLatest reports whether an image reference floats: no tag, or the latest tag.
func imageLatest(image string) bool {
	if image == "" || cloud.Unresolved(image) || strings.Contains(image, "${") || pinned.MatchString(image) {
		return false
	}
	name := image[strings.LastIndex(image, "/")+1:]
	tag := ""
	if i := strings.LastIndex(name, ":"); i >= 0 {
		tag = name[i+1:]
	}
	return tag == "" || tag == "latest"
}

// literalSecret reports whether an environment entry puts a secret value in the file.
func literalSecret(name string, value any) bool {
	s, ok := value.(string)
	return ok && secretName.MatchString(name) && strings.TrimSpace(s) != "" && !strings.Contains(s, "${") && !cloud.Unresolved(s)
}

func containers(r *cloud.Resource, pins map[string]string) []Finding {
	switch r.Source {
	case cloud.SourceCompose:
		return composeService(r)
	case cloud.SourceKubernetes:
	default:
		return nil
	}
	var out []Finding
	if r.Type == "Secret" {
		for _, k := range []string{"data", "stringData"} {
			if m, ok := r.Get(k).(map[string]any); ok && len(m) > 0 {
				out = append(out, ruleSecretInManifest.finding(r, r.LineOf(k),
					fmt.Sprintf("Secret %s keeps %d values in the manifest (%s)", r.Name, len(m), k)))
			}
		}
		return out
	}
	spec, ok := cloud.PodSpec(r)
	if !ok {
		return nil
	}
	at := func(p ...any) []any { return append(append([]any{}, spec...), p...) }
	podNonRoot, _ := r.Bool(at("securityContext", "runAsNonRoot")...)
	podUser, podUserSet := r.Number(at("securityContext", "runAsUser")...)
	for i, v := range r.Blocks(at("volumes")...) {
		if hp, ok := v["hostPath"].(map[string]any); ok {
			out = append(out, ruleHostPath.finding(r, r.LineOf(at("volumes", i)...),
				fmt.Sprintf("%s mounts the node path %v (volume %v)", r.Address, hp["path"], v["name"])))
		}
	}
	for _, kind := range []string{"containers", "initContainers"} {
		for i, c := range r.Blocks(at(kind)...) {
			name, _ := c["name"].(string)
			cp := at(kind, i)
			if priv, _ := cloud.Lookup(c, "securityContext", "privileged").(bool); priv {
				out = append(out, rulePrivileged.finding(r, r.LineOf(append(cp, "securityContext", "privileged")...),
					fmt.Sprintf("container %q of %s runs privileged", name, r.Address)))
			}
			nonRoot, set := cloud.Lookup(c, "securityContext", "runAsNonRoot").(bool)
			user, userSet := cloud.Lookup(c, "securityContext", "runAsUser").(float64)
			root := (userSet && user == 0) || (!userSet && podUserSet && podUser == 0) ||
				!((set && nonRoot) || (!set && podNonRoot) || (userSet && user > 0) || (!userSet && podUserSet && podUser > 0))
			if root {
				out = append(out, ruleRoot.finding(r, r.LineOf(cp...),
					fmt.Sprintf("container %q of %s may run as root (no runAsNonRoot: true or non-zero runAsUser)", name, r.Address)))
			}
			if img, _ := c["image"].(string); imageLatest(img) && pins[img] == "" {
				out = append(out, ruleLatest.finding(r, r.LineOf(append(cp, "image")...),
					fmt.Sprintf("container %q of %s uses the floating image %q", name, r.Address, img)))
			}
			for k, e := range objects(c["env"]) {
				n, _ := e["name"].(string)
				if literalSecret(n, e["value"]) {
					out = append(out, ruleSecretInManifest.finding(r, r.LineOf(append(cp, "env", k)...),
						fmt.Sprintf("container %q of %s sets %s to a literal value %s", name, r.Address, n, mask(fmt.Sprint(e["value"])))))
				}
			}
		}
	}
	return out
}

func objects(v any) []map[string]any {
	l, _ := v.([]any)
	var out []map[string]any
	for _, e := range l {
		if m, ok := e.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func composeService(r *cloud.Resource) []Finding {
	var out []Finding
	if v, ok := r.Bool("privileged"); ok && v {
		f := rulePrivileged.finding(r, r.LineOf("privileged"), fmt.Sprintf("compose service %q runs privileged", r.Name))
		f.CIS = "CIS Docker 5.4"
		out = append(out, f)
	}
	if img := r.String("image"); imageLatest(img) && r.Get("build") == nil {
		out = append(out, ruleLatest.finding(r, r.LineOf("image"), fmt.Sprintf("compose service %q uses the floating image %q", r.Name, img)))
	}
	for i, v := range asStrings(r.Get("volumes")) {
		if strings.HasPrefix(v, "/var/run/docker.sock") {
			out = append(out, ruleDockerSocket.finding(r, r.LineOf("volumes", i), fmt.Sprintf("compose service %q mounts the Docker socket", r.Name)))
		}
	}
	secret := ruleSecretInManifest
	secret.cis = ""
	switch env := r.Get("environment").(type) {
	case map[string]any:
		for k, v := range env {
			if literalSecret(k, v) {
				out = append(out, secret.finding(r, r.LineOf("environment", k),
					fmt.Sprintf("compose service %q sets %s to a literal value %s", r.Name, k, mask(fmt.Sprint(v)))))
			}
		}
	case []any:
		for i, e := range env {
			s, _ := e.(string)
			if k, v, ok := strings.Cut(s, "="); ok && literalSecret(k, v) {
				out = append(out, secret.finding(r, r.LineOf("environment", i),
					fmt.Sprintf("compose service %q sets %s to a literal value %s", r.Name, k, mask(v))))
			}
		}
	}
	return out
}
