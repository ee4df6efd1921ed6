package security

import (
	"fmt"
	"strings"

	"github.com/platform-dev/platform/tools/cloud"
)

// Rules for configurations that are wrong as written (a flag set to the unsafe value), which
// tfsec, Checkov and kube-score report and the rules of infra.go did not cover.
var (
	ruleHostNamespace = infraRule{"iac/host-namespace", "high", "CWE-668", "CIS Kubernetes 5.2.3-5.2.5",
		"Remove hostNetwork, hostPID and hostIPC: a pod sharing the node's namespaces sees and reaches the node's processes and network", "Pod shares the node's namespaces"}
	ruleCapabilities = infraRule{"iac/dangerous-capabilities", "high", "CWE-250", "CIS Kubernetes 5.2.9",
		"Drop ALL capabilities and add back only the one the process needs (NET_BIND_SERVICE, for instance); never SYS_ADMIN, NET_ADMIN or ALL", "Container adds powerful Linux capabilities"}
	ruleEscalation = infraRule{"iac/privilege-escalation", "medium", "CWE-250", "CIS Kubernetes 5.2.6",
		"Set securityContext.allowPrivilegeEscalation: false", "Container allows privilege escalation"}
	ruleClusterAdmin = infraRule{"iac/cluster-admin-binding", "high", "CWE-269", "CIS Kubernetes 5.1.1",
		"Bind a Role or ClusterRole with the verbs and resources the subject needs; keep cluster-admin for break-glass accounts outside the repository", "Subject bound to cluster-admin"}
	rulePublicDatabase = infraRule{"iac/public-database", "high", "CWE-284", "CIS AWS Foundations 2.3.3",
		"Set publicly_accessible = false (PubliclyAccessible: false) and reach the database through the VPC, a bastion or a proxy", "Database reachable from the internet"}
	ruleAnyPrincipal = infraRule{"iac/any-principal", "critical", "CWE-284", "",
		"Name the accounts, roles or services the policy is for in its Principal; a principal of \"*\" needs a Condition (aws:PrincipalOrgID, aws:SourceAccount, sts:ExternalId)", "Policy grants any AWS principal"}
	ruleIMDSv1 = infraRule{"iac/imds-v1", "medium", "CWE-918", "CIS AWS Foundations 5.6",
		"Set metadata_options { http_tokens = \"required\" } (MetadataOptions.HttpTokens: required) so that SSRF cannot read the instance's credentials", "Instance metadata service v1 allowed"}
)

// dangerousCaps are capabilities that amount to root on the node or its network.
var dangerousCaps = map[string]bool{"ALL": true, "SYS_ADMIN": true, "NET_ADMIN": true, "SYS_PTRACE": true, "SYS_MODULE": true, "DAC_READ_SEARCH": true, "BPF": true}

// principalPolicies names, per resource type, the attribute holding the policy whose
// Principal decides who may use the resource, and what that use is.
var principalPolicies = map[string]struct{ key, use string }{
	"AWS::IAM::Role": {"AssumeRolePolicyDocument", "can be assumed by"},
	"aws_iam_role":   {"assume_role_policy", "can be assumed by"},
	"AWS::KMS::Key":  {"KeyPolicy", "grants the key to"},
	"aws_kms_key":    {"policy", "grants the key to"},
}

// explicitFindings applies the rules of this file to one resource.
func explicitFindings(r *cloud.Resource) []Finding {
	var out []Finding
	switch r.Type {
	case "aws_db_instance", "aws_rds_cluster_instance", "aws_redshift_cluster", "aws_dms_replication_instance",
		"AWS::RDS::DBInstance", "AWS::Redshift::Cluster":
		key := "publicly_accessible"
		if r.Source == cloud.SourceCloudFormation {
			key = "PubliclyAccessible"
		}
		if v, ok := r.Bool(key); ok && v {
			out = append(out, rulePublicDatabase.finding(r, r.LineOf(key), fmt.Sprintf("%s is publicly accessible", r.Address)))
		} else if !ok && r.Type == "AWS::Redshift::Cluster" && !unknown(r.Get(key)) {
			// Checkov fails a cluster that does not say: Redshift made new clusters private by
			// default only in January 2025 (Terraform's AWS provider before v5 made them
			// public), so what such a template deploys depends on when and with what.
			f := rulePublicDatabase.finding(r, r.LineOf(key), fmt.Sprintf("%s does not set PubliclyAccessible: false: Redshift made new clusters private by default only in January 2025", r.Address))
			f.Severity = "medium"
			out = append(out, f)
		}
	case "AWS::DMS::ReplicationInstance":
		// Unlike the others, a DMS replication instance is public unless the template says no.
		if v, ok := r.Bool("PubliclyAccessible"); !ok || v {
			out = append(out, rulePublicDatabase.finding(r, r.LineOf("PubliclyAccessible"), fmt.Sprintf("%s is publicly accessible (PubliclyAccessible is not false; AWS's default is true)", r.Address)))
		}
	case "aws_instance", "aws_launch_template":
		for i, m := range r.Blocks("metadata_options") {
			if t, _ := m["http_tokens"].(string); t == "optional" {
				out = append(out, ruleIMDSv1.finding(r, r.LineOf("metadata_options", i, "http_tokens"), fmt.Sprintf("%s accepts IMDSv1 (http_tokens = \"optional\")", r.Address)))
			}
		}
	case "AWS::EC2::LaunchTemplate":
		if t := r.String("LaunchTemplateData", "MetadataOptions", "HttpTokens"); t == "optional" {
			out = append(out, ruleIMDSv1.finding(r, r.LineOf("LaunchTemplateData", "MetadataOptions", "HttpTokens"), fmt.Sprintf("%s accepts IMDSv1 (HttpTokens: optional)", r.Address)))
		}
	case "ClusterRoleBinding", "RoleBinding":
		if r.Source == cloud.SourceKubernetes && r.String("roleRef", "name") == "cluster-admin" {
			out = append(out, ruleClusterAdmin.finding(r, r.LineOf("roleRef", "name"), fmt.Sprintf("%s binds its subjects to cluster-admin", r.Address)))
		}
	}
	if p, ok := principalPolicies[r.Type]; ok {
		for _, st := range statements(policyDocument(r.Get(p.key))) {
			if eff, _ := st["Effect"].(string); eff == "Allow" && st["Condition"] == nil && anyPrincipal(st["Principal"]) {
				out = append(out, ruleAnyPrincipal.finding(r, r.LineOf(p.key), fmt.Sprintf("%s %s any AWS principal (Principal \"*\" without a Condition)", r.Address, p.use)))
				break
			}
		}
	}
	if r.Source != cloud.SourceKubernetes {
		return out
	}
	spec, ok := cloud.PodSpec(r)
	if !ok {
		return out
	}
	at := func(p ...any) []any { return append(append([]any{}, spec...), p...) }
	for _, ns := range []string{"hostNetwork", "hostPID", "hostIPC"} {
		if v, ok := r.Bool(at(ns)...); ok && v {
			out = append(out, ruleHostNamespace.finding(r, r.LineOf(at(ns)...), fmt.Sprintf("%s sets %s: true", r.Address, ns)))
		}
	}
	for _, kind := range []string{"containers", "initContainers"} {
		for i, c := range r.Blocks(at(kind)...) {
			name, _ := c["name"].(string)
			cp := at(kind, i, "securityContext")
			if v, _ := cloud.Lookup(c, "securityContext", "allowPrivilegeEscalation").(bool); v {
				out = append(out, ruleEscalation.finding(r, r.LineOf(append(cp, "allowPrivilegeEscalation")...),
					fmt.Sprintf("container %q of %s sets allowPrivilegeEscalation: true", name, r.Address)))
			}
			added, _ := cloud.Lookup(c, "securityContext", "capabilities", "add").([]any)
			var bad []string
			for _, cp := range added {
				if s, ok := cp.(string); ok && dangerousCaps[strings.TrimPrefix(strings.ToUpper(s), "CAP_")] {
					bad = append(bad, s)
				}
			}
			if len(bad) > 0 {
				out = append(out, ruleCapabilities.finding(r, r.LineOf(append(cp, "capabilities", "add")...),
					fmt.Sprintf("container %q of %s adds %s", name, r.Address, strings.Join(bad, ", "))))
			}
		}
	}
	return out
}

// anyPrincipal reports whether a policy statement's Principal is everyone: "*" or {"AWS": "*"}.
func anyPrincipal(p any) bool {
	if contains(asStrings(p), "*") {
		return true
	}
	return contains(asStrings(cloud.Lookup(p, "AWS")), "*")
}
