package security

import (
	"fmt"
	"strings"

	"github.com/platform-dev/platform/tools/cloud"
)

// Rules for CloudFormation resources that Checkov checks and Trivy has a check for but does
// not evaluate on CloudFormation (its adapter reads these properties for Terraform only, or
// it judges only a TLS policy that is named).
var (
	ruleOpenAPIMethod = infraRule{"iac/api-method-without-auth", "high", "CWE-306", "",
		"Set AuthorizationType to AWS_IAM, COGNITO_USER_POOLS or CUSTOM (an authorizer), or require an API key, on every method that is not a CORS preflight", "API method callable without authorization"}
	ruleAPIAccessLog = infraRule{"iac/api-stage-without-access-log", "medium", "CWE-778", "",
		"Set AccessLogSetting (AccessLogSettings for HTTP APIs) with a CloudWatch Logs destination and format", "API stage without access logging"}
	ruleAPITracing = infraRule{"iac/api-stage-without-tracing", "low", "CWE-778", "",
		"Set TracingEnabled: true so that requests are traced through X-Ray", "API stage without X-Ray tracing"}
	ruleAPICache = infraRule{"iac/api-stage-without-cache", "low", "CWE-400", "",
		"Set CacheClusterEnabled: true (with a CacheClusterSize) so that repeated requests do not all reach the backend", "API stage without response caching"}
	ruleDefaultTLSPolicy = infraRule{"iac/listener-default-tls-policy", "medium", "CWE-326", "",
		"Set SslPolicy to a TLS 1.2+ policy (ELBSecurityPolicy-TLS13-1-2-2021-06, for instance): without one the listener gets ELBSecurityPolicy-2016-08, which accepts TLS 1.0 and 1.1", "Load balancer listener on the default TLS policy"}
	rulePublicIP = infraRule{"iac/instance-public-ip", "medium", "CWE-284", "",
		"Set AssociatePublicIpAddress: false and reach the instance through a load balancer, a bastion or SSM Session Manager", "Instance gets a public IP address"}
)

// stageSettings are the properties an API stage must set, per resource type: access log,
// tracing, cache. SAM's Serverless::Api is a REST API stage; its HttpApi has no cache.
var stageSettings = map[string][3]string{
	"AWS::ApiGateway::Stage":   {"AccessLogSetting", "TracingEnabled", "CacheClusterEnabled"},
	"AWS::Serverless::Api":     {"AccessLogSetting", "TracingEnabled", "CacheClusterEnabled"},
	"AWS::ApiGatewayV2::Stage": {"AccessLogSettings", "", ""},
	"AWS::Serverless::HttpApi": {"AccessLogSettings", "", ""},
}

// cloudFormationFindings applies the rules of this file to one resource.
func cloudFormationFindings(r *cloud.Resource) []Finding {
	if r.Source != cloud.SourceCloudFormation {
		return nil
	}
	var out []Finding
	if s, ok := stageSettings[r.Type]; ok {
		if r.Get(s[0]) == nil {
			out = append(out, ruleAPIAccessLog.finding(r, r.Line, fmt.Sprintf("%s has no %s: its requests are not logged", r.Address, s[0])))
		}
		for _, c := range []struct {
			key  string
			rule infraRule
		}{{s[1], ruleAPITracing}, {s[2], ruleAPICache}} {
			if v, _ := r.Bool(c.key); c.key != "" && !v {
				out = append(out, c.rule.finding(r, r.LineOf(c.key), fmt.Sprintf("%s does not set %s: true", r.Address, c.key)))
			}
		}
	}
	switch r.Type {
	case "AWS::ApiGateway::Method":
		auth := r.String("AuthorizationType")
		key, _ := r.Bool("ApiKeyRequired")
		if (auth == "" || strings.EqualFold(auth, "NONE")) && !key && !strings.EqualFold(r.String("HttpMethod"), "OPTIONS") {
			out = append(out, ruleOpenAPIMethod.finding(r, r.LineOf("AuthorizationType"), fmt.Sprintf("%s %s needs no authorization and no API key", r.Address, r.String("HttpMethod"))))
		}
	case "AWS::ElasticLoadBalancingV2::Listener":
		if p := strings.ToUpper(r.String("Protocol")); (p == "HTTPS" || p == "TLS") && r.Get("SslPolicy") == nil {
			out = append(out, ruleDefaultTLSPolicy.finding(r, r.LineOf("Protocol"), fmt.Sprintf("%s (%s) sets no SslPolicy: it accepts TLS 1.0 and 1.1", r.Address, p)))
		}
	case "AWS::EC2::Instance", "AWS::EC2::LaunchTemplate":
		path := []any{"NetworkInterfaces"}
		if r.Type == "AWS::EC2::LaunchTemplate" {
			path = []any{"LaunchTemplateData", "NetworkInterfaces"}
		}
		for i, ni := range r.Blocks(path...) {
			if v, _ := ni["AssociatePublicIpAddress"].(bool); v {
				out = append(out, rulePublicIP.finding(r, r.LineOf(append(path, i, "AssociatePublicIpAddress")...), fmt.Sprintf("%s associates a public IP address with network interface %d", r.Address, i)))
			}
		}
	}
	return out
}
