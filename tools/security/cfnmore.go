package security

import (
	"context"
	"encoding/base64"
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/platform-dev/platform/tools/cloud"
	"github.com/zricethezav/gitleaks/v8/detect"
)

// Rules for CloudFormation resources that Checkov checks and Trivy has a check for that never
// sees them: its CloudFormation adapter drops security group rules, Lambda permissions and
// listeners whose group, function or load balancer is not declared in the same template,
// reads no CloudFront cache behaviour but the default one, no Users of an AWS::IAM::Policy and
// no IAM authentication of a DB cluster, and scans user data still base64-encoded.
var (
	ruleClusterIAMAuth = infraRule{"iac/rds-cluster-without-iam-auth", "medium", "CWE-287", "",
		"Set EnableIAMDatabaseAuthentication: true (iam_database_authentication_enabled = true) so that clients connect with short-lived IAM tokens instead of a shared password", "RDS cluster without IAM database authentication"}
	ruleSGDescription = infraRule{"iac/sg-rule-without-description", "low", "CWE-1053", "",
		"Give every ingress and egress rule a Description saying what the traffic is for, so that a reviewer can tell which rules are still needed", "Security group rule without a description"}
	ruleUserDataSecret = infraRule{"iac/secret-in-user-data", "critical", "CWE-798", "",
		"Give the instance an IAM role (instance profile) instead of access keys, and read other secrets at boot from Secrets Manager or SSM Parameter Store: user data is readable by anyone who may describe the instance and from inside it through the metadata service", "Secret in EC2 user data"}
	rulePlainListener = infraRule{"iac/listener-plain-http", "medium", "CWE-319", "",
		"Listen on HTTPS (or TLS) with a TLS 1.2+ SslPolicy, or make the HTTP listener's default action a redirect to HTTPS", "Load balancer listener serves plain HTTP"}
	ruleCloudFrontHTTP = infraRule{"iac/cloudfront-allows-http", "medium", "CWE-319", "",
		"Set ViewerProtocolPolicy to redirect-to-https or https-only on the default and every other cache behavior", "CloudFront distribution serves plain HTTP"}
	ruleLambdaSource = infraRule{"iac/lambda-permission-without-source", "medium", "CWE-441", "",
		"Add SourceArn (the bucket, topic, rule or API that may invoke the function) or SourceAccount to a permission granted to an AWS service: without it any account's resource of that service can invoke the function", "Lambda permission for a service without SourceArn or SourceAccount"}
	ruleUserPolicy = infraRule{"iac/policy-attached-to-user", "low", "CWE-269", "CIS AWS Foundations 1.15",
		"Attach the policy to a group (Groups) or a role (Roles) and put the user in the group, so that permissions are granted and revoked in one place", "IAM policy attached directly to a user"}
)

// moreSettings are the settings of this file that are one property, per resource type.
// Trivy's check for IAM authentication reads DB instances only, in Terraform too.
var moreSettings = map[string][]setting{
	"AWS::RDS::DBCluster": {{ruleClusterIAMAuth, keys("EnableIAMDatabaseAuthentication"), isTrue, "lets clients in with the master password only"}},
	"aws_rds_cluster":     {{ruleClusterIAMAuth, keys("iam_database_authentication_enabled"), isTrue, "lets clients in with the master password only"}},
}

// awsKeyAssignment is an AWS access key id or secret access key given to the variable or
// setting the AWS SDKs and CLI read. gitleaks passes AWS's documented example keys
// (AKIAIOSFODNN7EXAMPLE); in user data a key of the right shape is a credential on its way
// to the instance whatever its value, and Trivy's and Checkov's detectors report it.
var awsKeyAssignment = regexp.MustCompile(`(?i)\baws_(?:access_key_id|secret_access_key)\s*[=:]\s*["']?((?-i:(?:AKIA|ASIA)[A-Z0-9]{16})|[A-Za-z0-9/+]{40})(?:["'\s;]|$)`)

// moreFindings applies the rules of this file to one resource; d finds secrets in user data.
func moreFindings(ctx context.Context, r *cloud.Resource, d *detect.Detector) []Finding {
	out := settingFindings(r, moreSettings[r.Type])
	if r.Source != cloud.SourceCloudFormation {
		return out
	}
	report := func(rule infraRule, at []any, msg string) {
		out = append(out, rule.finding(r, r.LineOf(at...), r.Address+" "+msg))
	}
	switch r.Type {
	case "AWS::EC2::SecurityGroup":
		for _, dir := range []string{"SecurityGroupIngress", "SecurityGroupEgress"} {
			for i, rule := range objects(r.Get(dir)) {
				if !unknown(rule) && !isSet(rule["Description"]) {
					report(ruleSGDescription, keys(dir, i), fmt.Sprintf("has a rule without Description (%s %d)", dir, i))
				}
			}
		}
	case "AWS::EC2::SecurityGroupIngress", "AWS::EC2::SecurityGroupEgress":
		if v := r.Get("Description"); !isSet(v) {
			report(ruleSGDescription, keys("Description"), "has no Description")
		}
	case "AWS::EC2::Instance", "AWS::EC2::LaunchTemplate":
		at := keys("UserData")
		if r.Type == "AWS::EC2::LaunchTemplate" {
			at = keys("LaunchTemplateData", "UserData")
		}
		if found := userDataSecrets(ctx, d, r.Get(at...)); len(found) > 0 {
			report(ruleUserDataSecret, at, "has secrets in its user data: "+strings.Join(found, ", "))
		}
	case "AWS::ElasticLoadBalancingV2::Listener":
		if strings.EqualFold(r.String("Protocol"), "HTTP") && !redirectsToHTTPS(r.Get("DefaultActions")) {
			report(rulePlainListener, keys("Protocol"), "serves HTTP and does not redirect it to HTTPS")
		}
	case "AWS::CloudFront::Distribution":
		conf := keys("DistributionConfig")
		behaviors := [][]any{append(conf, "DefaultCacheBehavior")}
		for i := range r.Blocks(append(conf, "CacheBehaviors")...) {
			behaviors = append(behaviors, append(conf, "CacheBehaviors", i))
		}
		for _, b := range behaviors {
			if at := append(b, "ViewerProtocolPolicy"); r.String(at...) == "allow-all" {
				report(ruleCloudFrontHTTP, at, fmt.Sprintf("serves HTTP (%s: allow-all)", joinKeys(at[1:])))
			}
		}
	case "AWS::Lambda::Permission":
		// Only a service principal (s3.amazonaws.com): an account or ARN is not a confused deputy.
		if p, _ := r.Get("Principal").(string); servicePrincipal(p) && !isSet(r.Get("SourceArn")) && !isSet(r.Get("SourceAccount")) {
			report(ruleLambdaSource, keys("Principal"), fmt.Sprintf("lets any %s resource of any account invoke the function (no SourceArn or SourceAccount)", p))
		}
	case "AWS::IAM::Policy", "AWS::IAM::ManagedPolicy":
		if u := r.Get("Users"); isSet(u) && !isEmptyList(u) {
			report(ruleUserPolicy, keys("Users"), "is attached directly to users")
		}
	}
	return out
}

// servicePrincipal reports whether p names an AWS service (events.amazonaws.com).
func servicePrincipal(p string) bool {
	parts := strings.Split(p, ".")
	return len(parts) >= 3 && parts[1] == "amazonaws" && parts[2] == "com"
}

func isEmptyList(v any) bool {
	l, ok := v.([]any)
	return ok && len(l) == 0
}

// redirectsToHTTPS reports whether a listener's default actions redirect to HTTPS; actions
// decided at deployment count as a redirect.
func redirectsToHTTPS(actions any) bool {
	if unknown(actions) {
		return true
	}
	l, _ := actions.([]any)
	for _, a := range l {
		if unknown(a) {
			return true
		}
		if p, _ := cloud.Lookup(a, "RedirectConfig", "Protocol").(string); strings.EqualFold(p, "HTTPS") {
			return true
		}
	}
	return false
}

// userDataSecrets returns, masked, the secrets in user data that no other finding reports:
// what gitleaks finds when the template holds the script base64-encoded (written as text,
// the secret scan of the file reports it at its line), and AWS keys assigned to the
// variables the SDKs read that gitleaks passes.
func userDataSecrets(ctx context.Context, d *detect.Detector, v any) []string {
	text, encoded := userDataText(v)
	if text == "" {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	//lint:ignore SA1019 DetectContext of gitleaks v8 takes only this type; v9 replaces both.
	for _, s := range d.DetectContext(ctx, detect.Fragment{Raw: text}) {
		if !seen[s.Secret] && encoded {
			out = append(out, mask(s.Secret))
		}
		seen[s.Secret] = true
	}
	for _, m := range awsKeyAssignment.FindAllStringSubmatch(text, -1) {
		if !seen[m[1]] {
			out = append(out, mask(m[1]))
		}
		seen[m[1]] = true
	}
	return out
}

// userDataText returns the script a UserData value holds, and whether the template holds it
// base64-encoded: a literal decoded from base64 when it is base64 of text, else the text of
// Fn::Base64, Fn::Sub and Fn::Join (their ${...} and references left as written).
func userDataText(v any) (text string, encoded bool) {
	if s, ok := v.(string); ok {
		b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
		if err == nil && utf8.Valid(b) && !strings.ContainsFunc(string(b), func(r rune) bool {
			return unicode.IsControl(r) && !unicode.IsSpace(r)
		}) {
			return string(b), true
		}
	}
	return script(v), false
}

// script returns the text of a value written as a string or built by Fn::Base64, Fn::Sub and
// Fn::Join.
func script(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []any:
		if len(x) > 0 {
			return script(x[0]) // Fn::Sub's [template, variables]
		}
	case map[string]any:
		if len(x) != 1 {
			return ""
		}
		if s, ok := x["Fn::Base64"]; ok {
			return script(s)
		}
		if s, ok := x["Fn::Sub"]; ok {
			return script(s)
		}
		if j, ok := x["Fn::Join"].([]any); ok && len(j) == 2 {
			sep, _ := j[0].(string)
			parts, _ := j[1].([]any)
			text := make([]string, len(parts))
			for i, p := range parts {
				text[i], _ = p.(string)
			}
			return strings.Join(text, sep)
		}
	}
	return ""
}
