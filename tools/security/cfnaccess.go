package security

import (
	_ "embed"
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/platform-dev/platform/tools/cloud"
)

// Rules for who and what can reach a resource that Checkov checks and Trivy does not: IAM
// policies judged by the access level of the actions they grant (cloudsplaining's analysis,
// which Checkov runs), secrets written into Lambda environments and Parameter Store, Lambda
// settings, and services left reachable from the internet. They read CloudFormation and, for
// the same resources, Terraform.
var (
	ruleIAMPermissions = infraRule{"iac/iam-permissions-management", "high", "CWE-269", "",
		"Grant IAM, S3 ACL/policy and other permissions-management actions only on the ARNs they must change, or under a Condition; never on Resource \"*\"", "IAM policy allows permissions management without constraints"}
	ruleIAMWrite = infraRule{"iac/iam-write-unconstrained", "medium", "CWE-732", "",
		"Name the ARNs the write actions may change in Resource (or add a Condition) instead of Resource \"*\"", "IAM policy allows write access without constraints"}
	ruleIAMCredentials = infraRule{"iac/iam-credentials-exposure", "high", "CWE-522", "",
		"Grant actions that return credentials (iam:CreateAccessKey, sts:AssumeRole, ...) only on named ARNs and under a Condition", "IAM policy allows credentials exposure"}
	ruleTrustsAccount = infraRule{"iac/role-trusts-account", "medium", "CWE-284", "",
		"Trust the roles or users that need the role (arn:aws:iam::<account>:role/<name>) instead of the account root, or add a Condition (aws:PrincipalArn, sts:ExternalId)", "Role can be assumed by any principal of an account"}
	ruleTemplateSecret = infraRule{"iac/secret-in-template", "high", "CWE-798", "",
		"Keep the value in Secrets Manager or an SSM SecureString and reference it ({{resolve:secretsmanager:...}}, or read it at run time); rotate the one in the template", "Secret value in a template"}
	ruleLambdaEnvKey = infraRule{"iac/lambda-env-without-cmk", "low", "CWE-311", "",
		"Set KmsKeyArn (kms_key_arn) to a customer-managed KMS key so that the function's environment variables are not encrypted with the AWS-managed key only", "Lambda environment variables not encrypted with a customer key"}
	ruleLambdaConcurrency = infraRule{"iac/lambda-without-concurrency-limit", "low", "CWE-770", "",
		"Set ReservedConcurrentExecutions (reserved_concurrent_executions) so that one function cannot take the account's whole concurrency", "Lambda function without a concurrency limit"}
	ruleLambdaDLQ = infraRule{"iac/lambda-without-dlq", "low", "CWE-755", "",
		"Set DeadLetterConfig.TargetArn (DeadLetterQueue in SAM, dead_letter_config in Terraform) to an SQS queue or SNS topic so that failed asynchronous invocations are kept", "Lambda function without a dead-letter queue"}
	ruleLambdaVPC = infraRule{"iac/lambda-outside-vpc", "low", "CWE-284", "",
		"Set VpcConfig (vpc_config) with private subnets and a security group so that the function's traffic stays in the VPC", "Lambda function not in a VPC"}
	ruleLambdaURLAuth = infraRule{"iac/lambda-url-without-auth", "high", "CWE-306", "",
		"Set AuthType: AWS_IAM (authorization_type = \"AWS_IAM\") on the function URL, or put the function behind API Gateway with an authorizer", "Lambda function URL callable without authentication"}
	ruleLambdaRuntime = infraRule{"iac/lambda-deprecated-runtime", "medium", "CWE-1104", "",
		"Move the function to a supported runtime (the successor named in the finding): a deprecated runtime gets no security patches", "Lambda function on a deprecated runtime"}
	ruleNodeGroupSSH = infraRule{"iac/eks-nodegroup-open-ssh", "high", "CWE-284", "",
		"Set RemoteAccess.SourceSecurityGroups (source_security_group_ids) with the key pair, or drop remote access and use SSM Session Manager: without it port 22 is open to 0.0.0.0/0", "EKS node group SSH open to the internet"}
	ruleEndpointAcceptance = infraRule{"iac/vpc-endpoint-service-auto-accept", "medium", "CWE-284", "",
		"Set AcceptanceRequired: true (acceptance_required = true) so that each endpoint connection to the service is accepted by hand", "VPC endpoint service accepts connections without review"}
	ruleTransferPublic = infraRule{"iac/transfer-server-public", "medium", "CWE-284", "",
		"Set EndpointType: VPC (endpoint_type = \"VPC\") and reach the server through the VPC; the default PUBLIC endpoint is on the internet", "Transfer Family server exposed publicly"}
	ruleMSKPublic = infraRule{"iac/msk-public-brokers", "high", "CWE-284", "",
		"Set BrokerNodeGroupInfo.ConnectivityInfo.PublicAccess.Type to DISABLED and reach the brokers from the VPC", "MSK brokers reachable from the internet"}
	ruleOpenHTTP = infraRule{"iac/ingress-open-http", "low", "CWE-284", "",
		"Serve the site over HTTPS through a load balancer or CloudFront and open port 80 only to it (its security group or prefix list), not to 0.0.0.0/0", "HTTP port open to the internet"}
	ruleCognitoGuests = infraRule{"iac/cognito-unauthenticated-identities", "medium", "CWE-306", "",
		"Set AllowUnauthenticatedIdentities: false (allow_unauthenticated_identities = false) unless guests must get AWS credentials, and then scope the unauthenticated role to the least it needs", "Cognito identity pool gives credentials to unauthenticated guests"}
)

// iamActionsText lists, per service, the IAM actions of each class the rules judge; see
// iamactions_gen.go for its origin.
//
//go:embed iamactions.txt
var iamActionsText string

// iamClasses maps service prefix and class (write, permissions, credentials, credentials*)
// to the actions.
var iamClasses = sync.OnceValue(func() map[string]map[string][]string {
	out := map[string]map[string][]string{}
	for _, line := range strings.Split(iamActionsText, "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if out[f[0]] == nil {
			out[f[0]] = map[string][]string{}
		}
		out[f[0]][f[1]] = f[2:]
	}
	return out
})

// matching returns the actions of class that the action patterns grant, as service:Action.
func matching(patterns []string, class string) []string {
	var out []string
	for svc, classes := range iamClasses() {
		if !slices.ContainsFunc(patterns, func(p string) bool { return p == "*" || strings.HasPrefix(strings.ToLower(p), svc+":") }) {
			continue
		}
		for _, a := range classes[class] {
			if grants(patterns, svc+":"+a) {
				out = append(out, svc+":"+a)
			}
		}
	}
	slices.Sort(out)
	return out
}

// grants reports whether one of the action patterns ("*", or a service prefix and a name with
// wildcards, in any case) grants action (service:Action). "*:*" names no service and grants
// nothing, as in policy_sentry.
func grants(patterns []string, action string) bool {
	svc, name, _ := strings.Cut(strings.ToLower(action), ":")
	for _, p := range patterns {
		p = strings.ToLower(p)
		ps, pa, _ := strings.Cut(p, ":")
		if ok, _ := path.Match(pa, name); p == "*" || (ps == svc && ok) {
			return true
		}
	}
	return false
}

// accessClasses are the classes of actions a statement may not allow on every resource
// without a Condition, with their rule; credentials* are those no resource can restrict,
// wrong whatever the Resource.
var accessClasses = []struct {
	class       string
	rule        infraRule
	anyResource bool
}{
	{"permissions", ruleIAMPermissions, false},
	{"write", ruleIAMWrite, false},
	{"credentials", ruleIAMCredentials, false},
	{"credentials*", ruleIAMCredentials, true},
}

// notCredentials are actions Checkov leaves out of its credentials-exposure check: an ECR
// login token is what every image pull needs.
var notCredentials = []string{"ecr:GetAuthorizationToken"}

// accessFindings applies the rules of this file to one resource.
func accessFindings(r *cloud.Resource) []Finding {
	out := append(policyAccessFindings(r), lambdaAndExposureFindings(r)...)
	for _, in := range worldIngress(r) {
		// Only a range that names its ports: all traffic is the admin-port rule's finding.
		if ok, _ := coversPort([]float64{80}, in.from, in.to, ""); ok {
			out = append(out, ruleOpenHTTP.finding(r, in.line, fmt.Sprintf("%s allows port 80 from the whole internet", r.Address)))
		}
	}
	return out
}

// policyAccessFindings applies cloudsplaining's analyses to every policy of r: per Allow
// statement without a Condition, the permissions-management, write and credential actions it
// grants on Resource "*" (with NotAction, every action it does not name; credentials: less
// those a Deny statement of the same policy takes back). A statement that the wildcard rule
// reports (every action, or all of a service) is left to it.
func policyAccessFindings(r *cloud.Resource) []Finding {
	var out []Finding
	for _, d := range policyDocuments(r) {
		sts := statements(d.doc)
		var denied []string
		for _, st := range sts {
			if eff, _ := st["Effect"].(string); eff == "Deny" {
				denied = append(denied, asStrings(st["Action"])...)
			}
		}
		for j, st := range sts {
			actions, resources := asStrings(st["Action"]), asStrings(st["Resource"])
			if eff, _ := st["Effect"].(string); eff != "Allow" || conditional(st) || wildcardStatement(actions, resources) {
				continue
			}
			key, not := "Action", asStrings(st["NotAction"])
			if st["Action"] == nil && not != nil {
				key = "NotAction"
			}
			reported := map[string]bool{}
			for _, c := range accessClasses {
				if reported[c.rule.id] || !(c.anyResource || contains(resources, "*")) {
					continue
				}
				var granted []string
				if key == "Action" {
					granted = matching(actions, c.class)
				} else if contains(resources, "*") {
					// Allow with NotAction grants every action it does not name.
					granted = slices.DeleteFunc(matching([]string{"*"}, c.class), func(a string) bool { return grants(not, a) })
				}
				if c.rule == ruleIAMCredentials {
					granted = slices.DeleteFunc(granted, func(a string) bool {
						return slices.Contains(notCredentials, a) || grants(denied, a)
					})
				}
				if len(granted) == 0 {
					continue
				}
				reported[c.rule.id] = true
				line := r.LineOf(append(slices.Clone(d.path), "Statement", j, key)...)
				out = append(out, c.rule.finding(r, line, fmt.Sprintf("%s allows %s on every resource without a condition", r.Address, listed(granted))))
			}
		}
	}
	return out
}

// conditional reports whether a statement has a non-empty Condition.
func conditional(st map[string]any) bool {
	switch c := st["Condition"].(type) {
	case nil:
		return false
	case map[string]any:
		return len(c) > 0
	case []any:
		return len(c) > 0
	}
	return true
}

// wildcardStatement reports whether the wildcard rule of infra.go reports a statement.
func wildcardStatement(actions, resources []string) bool {
	return contains(resources, "*") && (contains(actions, "*") || contains(actions, "*:*") || hasServiceWildcard(actions))
}

// listed names the first actions of a list and how many more there are.
func listed(actions []string) string {
	const shown = 3
	if len(actions) <= shown {
		return strings.Join(actions, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(actions[:shown], ", "), len(actions)-shown)
}

// accountRoot is an AWS principal that names a whole account: its id or its root user.
var accountRoot = regexp.MustCompile(`^(\d{12}|arn:aws:iam::\d{12}:root)$`)

// lambdaProperties names a function's properties per format, as paths.
var lambdaProperties = map[string]struct{ variables, key, concurrency, dlq, vpc, runtime []any }{
	"AWS::Lambda::Function":     {[]any{"Environment", "Variables"}, []any{"KmsKeyArn"}, []any{"ReservedConcurrentExecutions"}, []any{"DeadLetterConfig", "TargetArn"}, []any{"VpcConfig"}, []any{"Runtime"}},
	"AWS::Serverless::Function": {[]any{"Environment", "Variables"}, []any{"KmsKeyArn"}, []any{"ReservedConcurrentExecutions"}, []any{"DeadLetterQueue", "TargetArn"}, []any{"VpcConfig"}, []any{"Runtime"}},
	"aws_lambda_function":       {[]any{"environment", 0, "variables"}, []any{"kms_key_arn"}, []any{"reserved_concurrent_executions"}, []any{"dead_letter_config", 0, "target_arn"}, []any{"vpc_config"}, []any{"runtime"}},
}

// lambdaAndExposureFindings applies the rules of this file about single settings to r.
func lambdaAndExposureFindings(r *cloud.Resource) []Finding {
	var out []Finding
	add := func(rule infraRule, p []any, format string, args ...any) {
		out = append(out, rule.finding(r, r.LineOf(p...), r.Address+" "+fmt.Sprintf(format, args...)))
	}
	if p, ok := lambdaProperties[r.Type]; ok {
		vars, _ := r.Get(p.variables...).(map[string]any)
		for _, name := range slices.Sorted(maps.Keys(vars)) {
			v, ok := vars[name].(string)
			if ok && !strings.HasPrefix(v, "handler.") && !strings.HasPrefix(v, "git.") && hardcodedSecret(v, false) {
				add(ruleTemplateSecret, append(slices.Clone(p.variables), name), "sets the environment variable %s to a secret: %s", name, mask(v))
			}
		}
		if len(vars) > 0 && r.Get(p.key...) == nil {
			add(ruleLambdaEnvKey, p.variables[:1], "has environment variables and no %s", p.key[0])
		}
		if r.Get(p.concurrency...) == nil {
			add(ruleLambdaConcurrency, nil, "sets no %s", p.concurrency[0])
		}
		if r.Get(p.dlq...) == nil {
			add(ruleLambdaDLQ, p.dlq[:1], "has no dead-letter queue (%s)", p.dlq[0])
		}
		if r.Get(p.vpc...) == nil {
			add(ruleLambdaVPC, nil, "sets no %s: it runs outside the VPC", p.vpc[0])
		}
		if rt, ok := deprecatedRuntimes[r.String(p.runtime...)]; ok {
			add(ruleLambdaRuntime, p.runtime, "runs on %s, deprecated since %s (successor: %s)", r.String(p.runtime...), rt.deprecated, rt.successor)
		}
	}
	switch r.Type {
	case "AWS::IAM::Role", "aws_iam_role":
		key := principalPolicies[r.Type].key
		for j, st := range statements(policyDocument(r.Get(key))) {
			if eff, _ := st["Effect"].(string); eff != "Allow" || conditional(st) {
				continue
			}
			for _, p := range asStrings(cloud.Lookup(st["Principal"], "AWS")) {
				if accountRoot.MatchString(p) {
					add(ruleTrustsAccount, []any{key, "Statement", j, "Principal"}, "can be assumed by any principal of account %s that may call sts:AssumeRole (Principal %s, no Condition)", strings.TrimSuffix(strings.TrimPrefix(p, "arn:aws:iam::"), ":root"), p)
					break
				}
			}
		}
	case "AWS::SSM::Parameter", "aws_ssm_parameter":
		name, value := parameterKeys(r)
		n, v := r.String(name), r.String(value)
		if secretParameter.MatchString(n) && !testValue.MatchString(n) && !testValue.MatchString(v) && !strings.Contains(v, "${") && hardcodedSecret(v, true) {
			add(ruleTemplateSecret, []any{value}, "keeps a secret in parameter %s as plain text: %s", n, mask(v))
		}
	case "AWS::Lambda::Url":
		if r.String("AuthType") == "NONE" {
			add(ruleLambdaURLAuth, []any{"AuthType"}, "lets anyone call the function (AuthType: NONE)")
		}
	case "aws_lambda_function_url":
		if r.String("authorization_type") == "NONE" {
			add(ruleLambdaURLAuth, []any{"authorization_type"}, "lets anyone call the function (authorization_type = \"NONE\")")
		}
	case "AWS::EKS::Nodegroup":
		if r.Get("RemoteAccess", "Ec2SshKey") != nil && r.Get("RemoteAccess", "SourceSecurityGroups") == nil {
			add(ruleNodeGroupSSH, []any{"RemoteAccess"}, "allows SSH with a key pair and no SourceSecurityGroups: port 22 is open to 0.0.0.0/0")
		}
	case "aws_eks_node_group":
		if r.Get("remote_access", 0, "ec2_ssh_key") != nil && r.Get("remote_access", 0, "source_security_group_ids") == nil {
			add(ruleNodeGroupSSH, []any{"remote_access"}, "allows SSH with a key pair and no source_security_group_ids: port 22 is open to 0.0.0.0/0")
		}
	case "AWS::EC2::VPCEndpointService", "aws_vpc_endpoint_service":
		key := "AcceptanceRequired"
		if r.Source != cloud.SourceCloudFormation {
			key = "acceptance_required"
		}
		if v, _ := r.Bool(key); !v {
			add(ruleEndpointAcceptance, []any{key}, "accepts every endpoint connection without review (%s is not true)", key)
		}
	case "AWS::Transfer::Server", "aws_transfer_server":
		key := "EndpointType"
		if r.Source != cloud.SourceCloudFormation {
			key = "endpoint_type"
		}
		if t := r.String(key); t != "VPC" && t != "VPC_ENDPOINT" {
			add(ruleTransferPublic, []any{key}, "has a public endpoint (%s is %s)", key, orDefault(t, "PUBLIC, the default"))
		}
	case "AWS::MSK::Cluster":
		p := []any{"BrokerNodeGroupInfo", "ConnectivityInfo", "PublicAccess", "Type"}
		if r.String(p...) == "SERVICE_PROVIDED_EIPS" {
			add(ruleMSKPublic, p, "gives its brokers public IP addresses (PublicAccess.Type: SERVICE_PROVIDED_EIPS)")
		}
	case "aws_msk_cluster":
		p := []any{"broker_node_group_info", 0, "connectivity_info", 0, "public_access", 0, "type"}
		if r.String(p...) == "SERVICE_PROVIDED_EIPS" {
			add(ruleMSKPublic, p, "gives its brokers public IP addresses (public_access.type = \"SERVICE_PROVIDED_EIPS\")")
		}
	case "AWS::Cognito::IdentityPool":
		// A required property: a template without it does not say false.
		if v, ok := r.Bool("AllowUnauthenticatedIdentities"); !ok || v {
			add(ruleCognitoGuests, []any{"AllowUnauthenticatedIdentities"}, "gives AWS credentials to unauthenticated guests (AllowUnauthenticatedIdentities is not false)")
		}
	case "aws_cognito_identity_pool":
		if v, _ := r.Bool("allow_unauthenticated_identities"); v {
			add(ruleCognitoGuests, []any{"allow_unauthenticated_identities"}, "gives AWS credentials to unauthenticated guests (allow_unauthenticated_identities = true)")
		}
	}
	return out
}

func orDefault(s, empty string) string {
	if s == "" {
		return empty
	}
	return s
}

// parameterKeys names a parameter's name and value properties in r's format.
func parameterKeys(r *cloud.Resource) (name, value string) {
	if r.Source == cloud.SourceCloudFormation {
		return "Name", "Value"
	}
	return "name", "value"
}

// Checkov judges a parameter by its name and skips names and values that say they are
// examples.
var (
	secretParameter = regexp.MustCompile(`(?i)secret|api_?key`)
	testValue       = regexp.MustCompile(`(?i)test|example`)
)

// Values that Checkov's secret patterns (checkov/common/util/secrets.py, categories aws and
// general, and password for Parameter Store) call secrets. gitleaks' rules are not these:
// they require entropy and allow AWS's documented example keys, which Checkov's tests (and a
// reviewer) count as hard-coded keys all the same.
var (
	awsKeyID      = regexp.MustCompile(`(A3T[A-Z0-9]|AKIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|ASIA)[A-Z0-9]{16}`)
	base64Run     = regexp.MustCompile(`[A-Za-z0-9/+=]+`)
	awsKeyAssign  = regexp.MustCompile(`("|')?(AWS|aws|Aws)?_?(SECRET|secret|Secret)?_?(ACCESS|access|Access)?_?(KEY|key|Key)("|')?\s*(:|=>|=)\s*("|')?[A-Za-z0-9/+=]{40}("|')?`)
	privateKey    = regexp.MustCompile(`-----BEGIN (RSA |EC |DSA |OPENSSH |PGP )?PRIVATE KEY`)
	hashValue     = regexp.MustCompile(`(?i)^([a-f0-9]{32}|[a-f0-9]{40})$`)
	passwordValue = []*regexp.Regexp{
		regexp.MustCompile(`[A-Za-z0-9+/]{40,}={0,2}`), // base64
		regexp.MustCompile(`[0-9a-fA-F]{32,}`),         // a hash or key in hex
		regexp.MustCompile(`[A-Za-z0-9]{20,}`),         // a long random-looking token
	}
	strongPassword = regexp.MustCompile(`[A-Za-z\d@$!%*?&]{8,}`)
)

// hardcodedSecret reports whether a literal value is a secret by Checkov's patterns; password
// adds those of passwords and tokens, for values whose name says they are secret.
func hardcodedSecret(v string, password bool) bool {
	if v == "" || hashValue.MatchString(v) || cloud.Unresolved(v) {
		return false
	}
	if awsKeyID.MatchString(v) || awsKeyAssign.MatchString(v) || privateKey.MatchString(v) {
		return true
	}
	for _, run := range base64Run.FindAllString(v, -1) {
		if len(run) == 40 { // an AWS secret access key, not part of a longer string
			return true
		}
	}
	if !password {
		return false
	}
	for _, re := range passwordValue {
		if re.MatchString(v) {
			return true
		}
	}
	return strongPassword.MatchString(v) && strings.ContainsAny(v, "abcdefghijklmnopqrstuvwxyz") &&
		strings.ContainsAny(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") && strings.ContainsAny(v, "0123456789") && strings.ContainsAny(v, "@$!%*?&")
}

// lambdaRuntime is a runtime's end of support.
type lambdaRuntime struct{ deprecated, successor string }

// deprecatedRuntimes are AWS Lambda's runtimes deprecated on or before 2026-11-25, with the
// dates of the AWS Lambda Developer Guide's runtime page
// (https://docs.aws.amazon.com/lambda/latest/dg/lambda-runtimes.html) as cfn-lint records them
// in src/cfnlint/data/AdditionalSpecs/LmbdRuntimeLifecycle.json (github.com/aws-cloudformation/cfn-lint
// at 217397c, 2026-08-19, MIT-0). A fixed list, not the clock, so that a finding does not
// appear on its own; refresh it with its date.
var deprecatedRuntimes = map[string]lambdaRuntime{
	"nodejs": {"2016-08-30", "nodejs24.x"}, "dotnetcore2.0": {"2019-05-30", "dotnet10"},
	"dotnetcore1.0": {"2019-06-27", "dotnet10"}, "nodejs6.10": {"2019-08-12", "nodejs24.x"},
	"nodejs4.3": {"2020-03-05", "nodejs24.x"}, "nodejs4.3-edge": {"2020-03-05", "nodejs24.x"},
	"nodejs8.10": {"2020-03-06", "nodejs24.x"}, "python2.7": {"2021-07-15", "python3.14"},
	"nodejs10.x": {"2021-07-30", "nodejs24.x"}, "ruby2.5": {"2021-07-30", "ruby4.0"},
	"dotnetcore2.1": {"2022-01-05", "dotnet10"}, "python3.6": {"2022-07-18", "python3.14"},
	"nodejs12.x": {"2023-03-31", "nodejs24.x"}, "dotnetcore3.1": {"2023-04-03", "dotnet10"},
	"nodejs14.x": {"2023-12-04", "nodejs24.x"}, "python3.7": {"2023-12-04", "python3.14"},
	"ruby2.7": {"2023-12-07", "ruby4.0"}, "go1.x": {"2024-01-08", "provided.al2023"},
	"java8": {"2024-01-08", "java25"}, "provided": {"2024-01-08", "provided.al2023"},
	"dotnet7": {"2024-05-14", "dotnet10"}, "nodejs16.x": {"2024-06-12", "nodejs24.x"},
	"python3.8": {"2024-10-14", "python3.14"}, "dotnet6": {"2024-12-20", "dotnet10"},
	"nodejs18.x": {"2025-09-01", "nodejs24.x"}, "python3.9": {"2025-12-15", "python3.14"},
	"ruby3.2": {"2026-03-31", "ruby4.0"}, "nodejs20.x": {"2026-04-30", "nodejs24.x"},
	"provided.al2": {"2026-07-31", "provided.al2023"}, "python3.10": {"2026-10-31", "python3.14"},
	"dotnet8": {"2026-11-10", "dotnet10"}, "dotnet9": {"2026-11-10", "dotnet10"},
}
