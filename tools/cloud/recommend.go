package cloud

import (
	"fmt"
	"math"
	"regexp"
	"strings"
)

// Recommendation is one optimisation with the declaration that shows it is needed.
type Recommendation struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	Resource string `json:"resource"`
	Evidence string `json:"evidence"` // file:line
	Detail   string `json:"detail"`
	Action   string `json:"action"`
	// MonthlySaving is set (with cost analysis) when the table prices both sides of the
	// change; SavingNote says why it is not.
	MonthlySaving *float64 `json:"monthlySaving,omitempty"`
	SavingNote    string   `json:"savingNote,omitempty"`
}

// Recommendation ids.
const (
	RecPreviousGeneration = "previous-generation"
	RecGP2Volume          = "gp2-volume"
	RecNoAutoscaling      = "missing-autoscaling"
	RecSingleReplica      = "single-replica-without-pdb"
	RecNoResources        = "missing-requests-limits"
	RecUnattached         = "idle-unattached"
	RecNoLifecycle        = "missing-lifecycle-rules"
)

// successors maps a previous-generation family to the current one of the same shape and the
// same or lower price.
var successors = map[string]string{
	"t1": "t3", "t2": "t3", "m1": "m5", "m3": "m5", "m4": "m5", "c1": "c5", "c3": "c5", "c4": "c5",
	"r3": "r5", "r4": "r5", "i2": "i3", "d2": "d3", "g2": "g4dn", "p2": "p3",
	"db.t2": "db.t3", "db.m3": "db.m5", "db.m4": "db.m5", "db.r3": "db.r5", "db.r4": "db.r5",
	"n1": "e2",
}

var familyRE = regexp.MustCompile(`^((?:db\.)?[a-z]+\d[a-z]*)([.-].+)$`)

// successor returns the current-generation equivalent of an instance, machine or VM size, and
// the family or series it belongs to.
func successor(class string) (next, family string, ok bool) {
	if strings.HasPrefix(class, "Standard_") {
		return azureSuccessor(class)
	}
	m := familyRE.FindStringSubmatch(class)
	if m == nil {
		return "", "", false
	}
	nf, ok := successors[m[1]]
	if !ok {
		return "", "", false
	}
	return nf + m[2], nf, true
}

// recommender derives recommendations for resources, knowing the whole inventory.
type recommender struct {
	all            []*Resource
	prices         *PriceTable
	fallbackRegion string
	cost           bool
	out            []Recommendation
}

func (rc *recommender) add(r *Resource, id, title, evidence, detail, action string, saving func() (float64, string)) {
	rec := Recommendation{ID: id, Title: title, Resource: r.Address, Evidence: evidence, Detail: detail, Action: action}
	if rc.cost && saving != nil {
		v, note := saving()
		if note == "" {
			v = math.Round(v*100) / 100
			rec.MonthlySaving = &v
		} else {
			rec.SavingNote = note
		}
	}
	rc.out = append(rc.out, rec)
}

func (rc *recommender) referencedBy(target *Resource, types ...string) bool {
	for _, o := range rc.all {
		if o == target {
			continue
		}
		for _, t := range types {
			if o.Type == t && (o.RefersTo(target.Address) || o.RefersTo(target.Name)) {
				return true
			}
		}
	}
	return false
}

func (rc *recommender) check(r *Resource) {
	switch r.Source {
	case SourceKubernetes:
		rc.kubernetes(r)
		return
	case SourceCompose:
		rc.compose(r)
		return
	}
	rc.generation(r)
	rc.gp2(r)
	rc.autoscaling(r)
	rc.idle(r)
	rc.lifecycle(r)
}

// sizeKeys are where declarations name an instance, machine or VM size.
var sizeKeys = [][]any{{"instance_type"}, {"InstanceType"}, {"instance_class"}, {"DBInstanceClass"}, {"machine_type"},
	{"size"}, {"vm_size"}, {"sku"}, {"default_node_pool", 0, "vm_size"}}

func (rc *recommender) generation(r *Resource) {
	for _, key := range sizeKeys {
		class := r.String(key...)
		next, family, ok := successor(class)
		if !ok {
			continue
		}
		action := fmt.Sprintf("Move to %s: same shape, newer hardware, same or lower price", next)
		if !rc.prices.exists(r, rc.fallbackRegion, next) {
			// n1-standard-1 has no e2-standard-1: name the family, never a type that does not exist.
			action = fmt.Sprintf("Move to the current %s family; %s has no same-named size there, so pick the size from the family's list", family, class)
		}
		rc.add(r, RecPreviousGeneration, "Previous-generation instance type", r.At(key...),
			fmt.Sprintf("%s uses %s, a previous-generation type", r.Address, class),
			action,
			func() (float64, string) {
				old, ok1 := rc.prices.hourly(r, rc.fallbackRegion, class)
				cur, ok2 := rc.prices.hourly(r, rc.fallbackRegion, next)
				if !ok1 || !ok2 {
					return 0, fmt.Sprintf("price of %s or %s unknown in this region", class, next)
				}
				if strings.Contains(r.Type, "launch") {
					return 0, "instance count is set by the group that uses the template"
				}
				n := float64(r.Count)
				if v, ok := r.Bool("multi_az"); ok && v {
					n *= 2
				}
				if r.Provider == "azurerm" {
					var why string
					if len(key) > 1 {
						n, why = nodeCount(r, key[:len(key)-1]...)
					} else {
						n, why = vmCount(r)
					}
					if why != "" {
						return 0, why
					}
					n *= float64(r.Count)
				}
				return (old - cur) * rc.prices.HoursPerMonth * n, ""
			})
	}
}

func (rc *recommender) gp2(r *Resource) {
	gp2Saving := func(size float64, sizeOK bool, database bool) func() (float64, string) {
		return func() (float64, string) {
			if !sizeOK {
				return 0, "volume size not declared"
			}
			a, ok1 := rc.prices.storage(r, rc.fallbackRegion, "gp2", database)
			b, ok2 := rc.prices.storage(r, rc.fallbackRegion, "gp3", database)
			if !ok1 || !ok2 {
				return 0, "gp2/gp3 prices unknown in this region"
			}
			return (a - b) * size * float64(r.Count), ""
		}
	}
	const title, action = "gp2 volume", "Change the volume type to gp3: 20% cheaper per GB with a 3,000 IOPS baseline regardless of size"
	switch r.Type {
	case "aws_ebs_volume", "AWS::EC2::Volume":
		key := "type"
		if r.Type == "AWS::EC2::Volume" {
			key = "VolumeType"
		}
		vt := r.String(key)
		if vt != "" && vt != "gp2" {
			return
		}
		detail := fmt.Sprintf("%s is a gp2 volume", r.Address)
		if vt == "" {
			detail = fmt.Sprintf("%s declares no volume type, so it is created as gp2", r.Address)
		}
		size, ok := numberOf(r, "size", "Size")
		rc.add(r, RecGP2Volume, title, r.At(key), detail, action, gp2Saving(size, ok, false))
	case "aws_db_instance":
		if r.String("storage_type") == "gp2" {
			size, ok := r.Number("allocated_storage")
			rc.add(r, RecGP2Volume, title, r.At("storage_type"), r.Address+" stores its data on gp2", action, gp2Saving(size, ok, true))
		}
	case "aws_instance", "aws_launch_template":
		for _, blk := range []string{"root_block_device", "ebs_block_device", "block_device_mappings"} {
			for i, b := range r.Blocks(blk) {
				vt, size := b["volume_type"], b["volume_size"]
				if ebs := objects(b["ebs"]); len(ebs) > 0 {
					vt, size = ebs[0]["volume_type"], ebs[0]["volume_size"]
				}
				if vt != "gp2" {
					continue
				}
				s, ok := toNumber(size)
				rc.add(r, RecGP2Volume, title, r.At(blk, i), fmt.Sprintf("%s has a gp2 %s", r.Address, blk), action, gp2Saving(s, ok, false))
			}
		}
	}
}

func (rc *recommender) autoscaling(r *Resource) {
	switch r.Type {
	case "aws_autoscaling_group":
		lo, ok1 := r.Number("min_size")
		hi, ok2 := r.Number("max_size")
		if ok1 && ok2 && lo == hi {
			rc.add(r, RecNoAutoscaling, "Autoscaling group of fixed size", r.At("max_size"),
				fmt.Sprintf("%s has min_size = max_size = %g, so it never scales with load", r.Address, lo),
				"Raise max_size and add a target-tracking aws_autoscaling_policy (e.g. 50% average CPU)", nil)
		}
	case "aws_instance":
		if r.Count >= 2 {
			rc.add(r, RecNoAutoscaling, "Fixed fleet of instances", r.At("count"),
				fmt.Sprintf("%s declares %d identical instances with count, which cannot grow or shrink with load or replace failed ones", r.Address, r.Count),
				"Use an aws_launch_template with an aws_autoscaling_group and a target-tracking policy", nil)
		}
	case "aws_ecs_service", "aws_dynamodb_table":
		if r.Type == "aws_dynamodb_table" && r.String("billing_mode") == "PAY_PER_REQUEST" {
			return
		}
		if !rc.referencedBy(r, "aws_appautoscaling_target") && !rc.namedByScalingTarget(r) {
			what := "desired_count is fixed"
			if r.Type == "aws_dynamodb_table" {
				what = "provisioned capacity is fixed"
			}
			rc.add(r, RecNoAutoscaling, "No application autoscaling", r.Location(),
				fmt.Sprintf("%s has no aws_appautoscaling_target: its %s", r.Address, what),
				"Add aws_appautoscaling_target and a target-tracking aws_appautoscaling_policy (or use on-demand capacity)", nil)
		}
	}
}

// namedByScalingTarget reports whether a scaling target names r in its resource_id literally.
func (rc *recommender) namedByScalingTarget(r *Resource) bool {
	name := r.String("name")
	if name == "" {
		return false
	}
	for _, o := range rc.all {
		if o.Type == "aws_appautoscaling_target" && strings.Contains(o.String("resource_id"), "/"+name) {
			return true
		}
	}
	return false
}

func (rc *recommender) idle(r *Resource) {
	var cond bool
	var detail, action string
	switch r.Type {
	case "aws_ebs_volume":
		cond = !rc.referencedBy(r, "aws_volume_attachment")
		detail = r.Address + " is not attached to any instance (no aws_volume_attachment refers to it)"
		action = "Attach it, snapshot it and delete it, or remove it: an unattached volume is billed in full"
	case "AWS::EC2::Volume":
		cond = !rc.referencedBy(r, "AWS::EC2::VolumeAttachment") && !rc.referencedBy(r, "AWS::EC2::Instance")
		detail = r.Address + " is not attached to any instance (no AWS::EC2::VolumeAttachment refers to it)"
		action = "Attach it, snapshot it and delete it, or remove it: an unattached volume is billed in full"
	case "aws_eip":
		cond = r.Get("instance") == nil && r.Get("network_interface") == nil &&
			!rc.referencedBy(r, "aws_eip_association", "aws_nat_gateway")
		detail = r.Address + " is associated with no instance, network interface or NAT gateway"
		action = "Release the address or associate it: every public IPv4 address is billed, used or not"
	case "AWS::EC2::EIP":
		cond = r.Get("InstanceId") == nil && !rc.referencedBy(r, "AWS::EC2::EIPAssociation", "AWS::EC2::NatGateway")
		detail = r.Address + " is associated with no instance or NAT gateway"
		action = "Release the address or associate it: every public IPv4 address is billed, used or not"
	}
	if !cond {
		return
	}
	rc.add(r, RecUnattached, "Idle or unattached resource", r.Location(), detail, action, func() (float64, string) {
		c := rc.prices.Estimate(r, rc.fallbackRegion, nil)
		if c.Monthly == nil {
			return 0, c.Note
		}
		return *c.Monthly, ""
	})
}

func (rc *recommender) lifecycle(r *Resource) {
	var missing bool
	switch r.Type {
	case "aws_s3_bucket":
		missing = len(r.Blocks("lifecycle_rule")) == 0 && !rc.referencedBy(r, "aws_s3_bucket_lifecycle_configuration")
	case "AWS::S3::Bucket":
		missing = r.Get("LifecycleConfiguration") == nil
	case "google_storage_bucket":
		missing = len(r.Blocks("lifecycle_rule")) == 0
	}
	if missing {
		rc.add(r, RecNoLifecycle, "Bucket without lifecycle rules", r.Location(),
			r.Address+" keeps every object (and every noncurrent version) in its first storage class forever",
			"Add lifecycle rules: move objects to an infrequent-access or archive class after 30-90 days, expire noncurrent versions and abort incomplete multipart uploads",
			func() (float64, string) { return 0, "usage-based: depends on the data stored" })
	}
}

// PodSpec returns the path of a Kubernetes workload's pod spec; ok is false for other kinds.
func PodSpec(r *Resource) ([]any, bool) {
	switch r.Type {
	case "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job":
		return []any{"spec", "template", "spec"}, true
	case "CronJob":
		return []any{"spec", "jobTemplate", "spec", "template", "spec"}, true
	case "Pod":
		return []any{"spec"}, true
	}
	return nil, false
}

func (rc *recommender) kubernetes(r *Resource) {
	spec, ok := PodSpec(r)
	if !ok {
		return
	}
	for _, kind := range []string{"containers", "initContainers"} {
		cp := append(append([]any{}, spec...), kind)
		for i, c := range r.Blocks(cp...) {
			var miss []string
			for _, k := range []string{"requests", "limits"} {
				if Lookup(c, "resources", k) == nil {
					miss = append(miss, k)
				}
			}
			if len(miss) == 0 {
				continue
			}
			name, _ := c["name"].(string)
			rc.add(r, RecNoResources, "Container without resource requests/limits", r.At(append(cp, i)...),
				fmt.Sprintf("container %q of %s has no resources.%s", name, r.Address, strings.Join(miss, " or resources.")),
				"Set resources.requests (what the scheduler reserves) and resources.limits (memory at least) from observed usage, so pods are packed and evicted predictably", nil)
		}
	}
	if r.Type != "Deployment" && r.Type != "StatefulSet" {
		return
	}
	// Stateful sets are usually databases and queues, which do not scale by adding pods.
	if r.Type == "Deployment" && !rc.hasHPA(r) {
		rc.add(r, RecNoAutoscaling, "Workload without a HorizontalPodAutoscaler", r.Location(),
			fmt.Sprintf("no HorizontalPodAutoscaler targets %s %s", r.Type, r.Name),
			"Add an autoscaling/v2 HorizontalPodAutoscaler with minReplicas/maxReplicas and a CPU or memory target", nil)
	}
	replicas, ok := r.Number("spec", "replicas")
	if !ok {
		replicas = 1
	}
	if replicas <= 1 && !rc.hasPDB(r) {
		ev := r.At("spec", "replicas")
		rc.add(r, RecSingleReplica, "Single replica without a PodDisruptionBudget", ev,
			fmt.Sprintf("%s runs %g replica and no PodDisruptionBudget selects it: a node drain takes it down", r.Address, replicas),
			"Run at least 2 replicas spread over nodes (topologySpreadConstraints) and add a PodDisruptionBudget with minAvailable: 1", nil)
	}
}

func (rc *recommender) hasHPA(r *Resource) bool {
	for _, o := range rc.all {
		if o.Type == "HorizontalPodAutoscaler" && o.String("spec", "scaleTargetRef", "name") == r.Name &&
			o.String("spec", "scaleTargetRef", "kind") == r.Type && namespaceOf(o) == namespaceOf(r) {
			return true
		}
	}
	return false
}

func namespaceOf(r *Resource) string {
	if ns := r.String("metadata", "namespace"); ns != "" {
		return ns
	}
	return "default"
}

// hasPDB reports whether a PodDisruptionBudget's matchLabels all appear on r's pod template.
func (rc *recommender) hasPDB(r *Resource) bool {
	labels, _ := r.Get("spec", "template", "metadata", "labels").(map[string]any)
	for _, o := range rc.all {
		if o.Type != "PodDisruptionBudget" || namespaceOf(o) != namespaceOf(r) {
			continue
		}
		sel, _ := o.Get("spec", "selector", "matchLabels").(map[string]any)
		if len(sel) == 0 {
			continue
		}
		all := true
		for k, v := range sel {
			if labels[k] != v {
				all = false
			}
		}
		if all {
			return true
		}
	}
	return false
}

func (rc *recommender) compose(r *Resource) {
	if r.Get("deploy", "resources", "limits") != nil || r.Get("mem_limit") != nil {
		return
	}
	rc.add(r, RecNoResources, "Service without resource limits", r.Location(),
		fmt.Sprintf("compose service %q sets neither deploy.resources.limits nor mem_limit", r.Name),
		"Set deploy.resources.limits (cpus, memory) so one service cannot starve the others on the host", nil)
}
