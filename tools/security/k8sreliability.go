package security

import (
	"fmt"
	"strings"

	"github.com/platform-dev/platform/tools/cloud"
)

// Rules that kube-score reports as critical and Trivy's checks do not cover: they look at how
// the objects of a set of manifests relate (a Service, NetworkPolicy or PodDisruptionBudget
// selecting a workload's pods) or at resources Trivy does not ask for.
var (
	ruleEphemeralRequest = infraRule{"iac/ephemeral-storage-request", "low", "CWE-770", "",
		"Set resources.requests.ephemeral-storage, so that the scheduler places the pod where its scratch space fits", "Container without an ephemeral-storage request"}
	ruleEphemeralLimit = infraRule{"iac/ephemeral-storage-limit", "low", "CWE-770", "",
		"Set resources.limits.ephemeral-storage, so that a container filling its node's disk is evicted alone", "Container without an ephemeral-storage limit"}
	ruleNoNetworkPolicy = infraRule{"iac/no-network-policy", "medium", "CWE-284", "CIS Kubernetes 5.3.2",
		"Add a NetworkPolicy in the workload's namespace whose podSelector matches its pods, allowing only the traffic it needs", "Pods not selected by any NetworkPolicy"}
	ruleNoDisruptionBudget = infraRule{"iac/no-pod-disruption-budget", "low", "CWE-400", "",
		"Add a PodDisruptionBudget whose selector matches the workload's pods, so that node drains keep enough replicas running", "Workload without a PodDisruptionBudget"}
	ruleNoReadinessProbe = infraRule{"iac/missing-readiness-probe", "low", "CWE-703", "",
		"Give the containers behind a Service a readinessProbe, so that traffic reaches a pod only once it can answer", "Service target without a readinessProbe"}
)

// k8sObject is a workload's pods as the selectors of other objects see them.
type k8sObject struct {
	namespace string
	labels    map[string]any
}

func namespaceOf(r *cloud.Resource) string {
	if ns := r.String("metadata", "namespace"); ns != "" {
		return ns
	}
	return "default"
}

// selects reports whether every label of selector has the same value in labels; an empty
// selector selects every pod of its namespace.
func selects(selector map[string]any, o k8sObject) bool {
	for k, v := range selector {
		if fmt.Sprint(o.labels[k]) != fmt.Sprint(v) {
			return false
		}
	}
	return true
}

// kubernetesSetFindings applies the rules of this file to the Kubernetes objects of inv.
func kubernetesSetFindings(inv *cloud.Inventory) []Finding {
	type selector struct {
		namespace string
		match     map[string]any
	}
	var services, policies, budgets []selector
	for _, r := range inv.Resources {
		if r.Source != cloud.SourceKubernetes {
			continue
		}
		ns := namespaceOf(r)
		switch r.Type {
		case "Service":
			// A Service without a selector has its endpoints managed by hand: it selects nothing.
			if m, ok := r.Get("spec", "selector").(map[string]any); ok && len(m) > 0 {
				services = append(services, selector{ns, m})
			}
		case "NetworkPolicy":
			m, _ := r.Get("spec", "podSelector", "matchLabels").(map[string]any)
			policies = append(policies, selector{ns, m})
		case "PodDisruptionBudget":
			m, _ := r.Get("spec", "selector", "matchLabels").(map[string]any)
			budgets = append(budgets, selector{ns, m})
		}
	}
	anySelects := func(sels []selector, o k8sObject) bool {
		for _, s := range sels {
			if s.namespace == o.namespace && selects(s.match, o) {
				return true
			}
		}
		return false
	}
	var out []Finding
	for _, r := range inv.Resources {
		if r.Source != cloud.SourceKubernetes {
			continue
		}
		spec, ok := cloud.PodSpec(r)
		if !ok {
			continue
		}
		labelsAt := append(append([]any{}, spec[:len(spec)-1]...), "metadata", "labels")
		labels, _ := r.Get(labelsAt...).(map[string]any)
		o := k8sObject{namespace: namespaceOf(r), labels: labels}
		at := func(p ...any) []any { return append(append([]any{}, spec...), p...) }
		if !anySelects(policies, o) {
			out = append(out, ruleNoNetworkPolicy.finding(r, r.Line, fmt.Sprintf("no NetworkPolicy selects the pods of %s", r.Address)))
		}
		if (r.Type == "Deployment" || r.Type == "StatefulSet") && !anySelects(budgets, o) {
			out = append(out, ruleNoDisruptionBudget.finding(r, r.Line, fmt.Sprintf("no PodDisruptionBudget selects the pods of %s", r.Address)))
		}
		containers := r.Blocks(at("containers")...)
		if anySelects(services, o) {
			for i, c := range containers {
				if c["readinessProbe"] == nil {
					name, _ := c["name"].(string)
					out = append(out, ruleNoReadinessProbe.finding(r, r.LineOf(at("containers", i)...),
						fmt.Sprintf("container %q of %s is behind a Service and has no readinessProbe", name, r.Address)))
					break // one per pod, as kube-score reports it
				}
			}
		}
		for i, c := range containers {
			name, _ := c["name"].(string)
			for k, rule := range map[string]infraRule{"requests": ruleEphemeralRequest, "limits": ruleEphemeralLimit} {
				if cloud.Lookup(c, "resources", k, "ephemeral-storage") == nil {
					out = append(out, rule.finding(r, r.LineOf(at("containers", i)...),
						fmt.Sprintf("container %q of %s sets no ephemeral-storage %s", name, r.Address, strings.TrimSuffix(k, "s"))))
				}
			}
		}
	}
	return out
}
