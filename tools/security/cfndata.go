package security

import (
	"fmt"
	"strings"

	"github.com/platform-dev/platform/tools/cloud"
)

// Rules for data services, logging and encryption settings that Checkov checks on
// CloudFormation and Trivy has no check for (or reads only in part: KMS keys, DynamoDB global
// tables, a missing SSESpecification, AWS-managed key aliases, Redis AUTH). Each follows the
// semantics of the Checkov check it stands for, defaults included; a value that depends on
// something the template does not resolve (a parameter without default, Fn::If) is not judged.
var (
	ruleLBAccessLog = infraRule{"iac/lb-without-access-log", "medium", "CWE-778", "",
		"Turn access logs on (LoadBalancerAttributes access_logs.s3.enabled: \"true\" with access_logs.s3.bucket; AccessLoggingPolicy.Enabled: true for a classic ELB)", "Load balancer without access logs"}
	ruleLogRetention = infraRule{"iac/log-group-without-retention", "low", "CWE-779", "",
		"Set RetentionInDays (retention_in_days) to the period the logs are needed for: without it they are kept, and paid for, forever", "Log group without a retention period"}
	ruleRedshiftAuditLog = infraRule{"iac/redshift-without-audit-log", "medium", "CWE-778", "",
		"Set LoggingProperties (a BucketName, or LogDestinationType: cloudwatch) so that connections and user activity are logged", "Redshift cluster without audit logging"}
	ruleRedshiftSSL = infraRule{"iac/redshift-ssl-not-required", "medium", "CWE-319", "",
		"Add the parameter require_ssl = true to the cluster parameter group so that clients cannot connect in clear text", "Redshift parameter group does not require SSL"}
	ruleDocDBTLS = infraRule{"iac/docdb-tls-disabled", "high", "CWE-319", "",
		"Remove tls: disabled from the cluster parameter group (or set it to enabled)", "DocumentDB TLS disabled"}
	ruleDocDBAuditLog = infraRule{"iac/docdb-without-audit-log", "medium", "CWE-778", "",
		"Set the parameter audit_logs to enabled (or all, ddl, dml_read, dml_write) and export the audit log to CloudWatch", "DocumentDB without audit logs"}
	ruleBackupRetention = infraRule{"iac/short-backup-retention", "low", "CWE-693", "",
		"Set BackupRetentionPeriod (backup_retention_period) to 7 days or more; the default keeps 1 day of automated backups", "Database cluster keeps backups for less than 7 days"}
	ruleEnhancedMonitoring = infraRule{"iac/rds-without-enhanced-monitoring", "low", "CWE-778", "",
		"Set MonitoringInterval (monitoring_interval) to 1, 5, 10, 15, 30 or 60 seconds with a MonitoringRoleArn", "RDS instance without enhanced monitoring"}
	ruleMultiAZ = infraRule{"iac/rds-single-az", "low", "CWE-693", "",
		"Set MultiAZ: true (multi_az = true) so that a standby in another availability zone takes over when the primary's zone fails", "RDS instance in a single availability zone"}
	ruleGlueCatalog = infraRule{"iac/glue-catalog-unencrypted", "medium", "CWE-311", "",
		"Set EncryptionAtRest.CatalogEncryptionMode: SSE-KMS and ConnectionPasswordEncryption.ReturnConnectionPasswordEncrypted: true", "Glue Data Catalog not encrypted"}
	ruleGlueSecurityConfig = infraRule{"iac/glue-security-configuration-unencrypted", "medium", "CWE-311", "",
		"Encrypt all three outputs: CloudWatchEncryption (SSE-KMS), JobBookmarksEncryption (CSE-KMS) and S3Encryptions (SSE-S3 or SSE-KMS)", "Glue security configuration leaves data unencrypted"}
	ruleGlueNoSecurityConfig = infraRule{"iac/glue-without-security-configuration", "medium", "CWE-311", "",
		"Name a security configuration that encrypts S3, CloudWatch and job bookmark data (SecurityConfiguration, CrawlerSecurityConfiguration for a crawler)", "Glue component without a security configuration"}
	ruleAWSManagedKey = infraRule{"iac/aws-managed-key", "low", "CWE-311", "",
		"Encrypt with a customer-managed KMS key (its ARN in the resource's key property): AWS-owned and AWS-managed keys cannot be rotated, audited or revoked by you", "Encrypted without a customer-managed KMS key"}
	ruleQLDBPermissions = infraRule{"iac/qldb-allow-all", "medium", "CWE-732", "",
		"Set PermissionsMode: STANDARD so that IAM policies control access to each table and PartiQL command", "QLDB ledger in ALLOW_ALL permissions mode"}
	ruleDeletionProtection = infraRule{"iac/deletion-protection-disabled", "low", "CWE-693", "",
		"Remove DeletionProtection: false (protection is on by default) so that the ledger cannot be deleted by mistake", "Deletion protection turned off"}
	ruleSageMakerTraffic = infraRule{"iac/sagemaker-traffic-unencrypted", "medium", "CWE-319", "",
		"Set NetworkConfig.EnableInterContainerTrafficEncryption: true", "SageMaker job sends traffic between instances unencrypted"}
	ruleSageMakerIsolation = infraRule{"iac/sagemaker-model-network-access", "medium", "CWE-668", "",
		"Set EnableNetworkIsolation: true so that the model's containers make no outbound network calls", "SageMaker model container has network access"}
	ruleLog4j = infraRule{"iac/waf-without-log4j-rule", "high", "CWE-917", "",
		"Add the managed rule group AWSManagedRulesKnownBadInputsRuleSet with OverrideAction None and without excluding or counting its Log4JRCE rule", "WAF web ACL does not block Log4Shell (CVE-2021-44228)"}
	ruleAppSyncLogging = infraRule{"iac/appsync-without-logging", "medium", "CWE-778", "",
		"Set LogConfig with a CloudWatchLogsRoleArn and a FieldLogLevel of ERROR or ALL", "AppSync API without request or field logging"}
	ruleKeyRotation = infraRule{"iac/kms-key-without-rotation", "medium", "CWE-324", "CIS AWS Foundations 3.6",
		"Set EnableKeyRotation: true on symmetric encryption keys", "KMS key without automatic rotation"}
	ruleNoPITR = infraRule{"iac/no-point-in-time-recovery", "low", "CWE-693", "",
		"Set PointInTimeRecoverySpecification.PointInTimeRecoveryEnabled: true on every replica", "DynamoDB table without point-in-time recovery"}
	ruleRedisAuth = infraRule{"iac/redis-without-auth", "high", "CWE-306", "",
		"Require authentication: set an AuthToken (from Secrets Manager, with TransitEncryptionEnabled: true) or UserGroupIds for RBAC", "Redis replication group without authentication"}
)

// setting is a property a resource must set: pass reports whether the value found at path
// (nil when absent) is safe; wrong says what the resource then does.
type setting struct {
	rule  infraRule
	path  []any
	pass  func(v any) bool
	wrong string
}

// dataSettings are the settings of this file that are one property, per resource type.
var dataSettings = map[string][]setting{
	"AWS::ElasticLoadBalancing::LoadBalancer": {{ruleLBAccessLog, keys("AccessLoggingPolicy", "Enabled"), isTrue, "keeps no access logs"}},
	"AWS::Logs::LogGroup":                     {{ruleLogRetention, keys("RetentionInDays"), isSet, "keeps its logs forever"}},
	"AWS::DocDB::DBClusterParameterGroup": {
		{ruleDocDBTLS, keys("Parameters", "tls"), not("disabled"), "lets clients connect without TLS"},
		{ruleDocDBAuditLog, keys("Parameters", "audit_logs"), auditLogs, "writes no audit log"},
	},
	"AWS::DocDB::DBCluster":   {{ruleBackupRetention, keys("BackupRetentionPeriod"), atLeast(7, 1), "keeps automated backups for less than 7 days"}},
	"AWS::Neptune::DBCluster": {{ruleBackupRetention, keys("BackupRetentionPeriod"), atLeast(7, 1), "keeps automated backups for less than 7 days"}},
	"AWS::RDS::DBInstance": {
		{ruleEnhancedMonitoring, keys("MonitoringInterval"), oneOf("1", "5", "10", "15", "30", "60"), "has no enhanced monitoring"},
	},
	"AWS::Glue::Crawler":               {{ruleGlueNoSecurityConfig, keys("CrawlerSecurityConfiguration"), isSet, "names no security configuration"}},
	"AWS::Glue::DevEndpoint":           {{ruleGlueNoSecurityConfig, keys("SecurityConfiguration"), isSet, "names no security configuration"}},
	"AWS::Glue::Job":                   {{ruleGlueNoSecurityConfig, keys("SecurityConfiguration"), isSet, "names no security configuration"}},
	"AWS::Timestream::Database":        {{ruleAWSManagedKey, keys("KmsKeyId"), isSet, "is encrypted with an AWS-owned key"}},
	"AWS::Backup::BackupVault":         {{ruleAWSManagedKey, keys("EncryptionKeyArn"), isSet, "is encrypted with an AWS-owned key"}},
	"AWS::Bedrock::Agent":              {{ruleAWSManagedKey, keys("CustomerEncryptionKeyArn"), isSet, "is encrypted with an AWS-owned key"}},
	"AWS::SageMaker::Domain":           {{ruleAWSManagedKey, keys("KmsKeyId"), isSet, "encrypts its EFS volume with an AWS-managed key"}},
	"AWS::SageMaker::NotebookInstance": {{ruleAWSManagedKey, keys("KmsKeyId"), isSet, "encrypts its storage volume with an AWS-managed key"}},
	"AWS::SageMaker::DataQualityJobDefinition": {
		{ruleAWSManagedKey, keys("DataQualityJobOutputConfig", "KmsKeyId"), isSet, "encrypts its model artifacts with an AWS-managed key"},
		{ruleAWSManagedKey, keys("JobResources", "ClusterConfig", "VolumeKmsKeyId"), isSet, "encrypts its storage volumes with an AWS-managed key"},
		{ruleSageMakerTraffic, keys("NetworkConfig", "EnableInterContainerTrafficEncryption"), isTrue, "sends traffic between its instances unencrypted"},
	},
	"AWS::SageMaker::Model": {{ruleSageMakerIsolation, keys("EnableNetworkIsolation"), isTrue, "lets its containers reach the network"}},
	"AWS::QLDB::Ledger": {
		{ruleQLDBPermissions, keys("PermissionsMode"), oneOf("STANDARD"), "lets any principal allowed on the ledger run every command on every table"},
		{ruleDeletionProtection, keys("DeletionProtection"), isTrueOrAbsent, "can be deleted"},
	},
	"AWS::SecretsManager::Secret": {{ruleAWSManagedKey, keys("KmsKeyId"), customerKey, "is encrypted with the AWS-managed key"}},
}

// keys is a path of property names and list indexes.
func keys(p ...any) []any { return p }

// dataFindings applies the rules of this file to one resource.
func dataFindings(r *cloud.Resource) []Finding {
	if r.Source != cloud.SourceCloudFormation {
		return nil
	}
	var out []Finding
	for _, s := range dataSettings[r.Type] {
		if v := r.Get(s.path...); !unknown(v) && !s.pass(v) {
			out = append(out, s.finding(r, v))
		}
	}
	report := func(rule infraRule, at []any, msg string) {
		out = append(out, rule.finding(r, r.LineOf(at...), r.Address+" "+msg))
	}
	switch r.Type {
	case "AWS::ElasticLoadBalancingV2::LoadBalancer":
		// Gateway load balancers have no access logs to turn on.
		if !strings.EqualFold(r.String("Type"), "gateway") && !attributeOn(r.Get("LoadBalancerAttributes"), "Key", "Value", "access_logs.s3.enabled") {
			report(ruleLBAccessLog, keys("LoadBalancerAttributes"), "keeps no access logs (no LoadBalancerAttributes access_logs.s3.enabled: \"true\")")
		}
	case "AWS::Redshift::ClusterParameterGroup":
		if !attributeOn(r.Get("Parameters"), "ParameterName", "ParameterValue", "require_ssl") {
			report(ruleRedshiftSSL, keys("Parameters"), "lets clients connect without SSL (no parameter require_ssl = true)")
		}
	case "AWS::Redshift::Cluster":
		// Checkov wants a BucketName; logs sent to CloudWatch instead are audit logs all the same.
		if !isSet(r.Get("LoggingProperties", "BucketName")) && !strings.EqualFold(r.String("LoggingProperties", "LogDestinationType"), "cloudwatch") {
			report(ruleRedshiftAuditLog, keys("LoggingProperties"), "writes no audit log (no LoggingProperties)")
		}
	case "AWS::RDS::DBInstance":
		// Aurora replicates storage across zones whatever MultiAZ says.
		if v, _ := r.Bool("MultiAZ"); !v && !unknown(r.Get("MultiAZ")) && !strings.Contains(strings.ToLower(r.String("Engine")), "aurora") {
			report(ruleMultiAZ, keys("MultiAZ"), "runs in a single availability zone (MultiAZ is not true)")
		}
	case "AWS::Glue::DataCatalogEncryptionSettings":
		s := keys("DataCatalogEncryptionSettings")
		if m := r.String(append(s, "EncryptionAtRest", "CatalogEncryptionMode")...); m != "SSE-KMS" {
			report(ruleGlueCatalog, append(s, "EncryptionAtRest", "CatalogEncryptionMode"), fmt.Sprintf("stores the Data Catalog unencrypted (CatalogEncryptionMode %s)", orUnset(m)))
		} else if v, _ := r.Get(append(s, "ConnectionPasswordEncryption", "ReturnConnectionPasswordEncrypted")...).(bool); !v {
			report(ruleGlueCatalog, append(s, "ConnectionPasswordEncryption", "ReturnConnectionPasswordEncrypted"), "returns connection passwords unencrypted (ReturnConnectionPasswordEncrypted is not true)")
		}
	case "AWS::Glue::SecurityConfiguration":
		if off := glueUnencrypted(r.Get("EncryptionConfiguration")); len(off) > 0 {
			report(ruleGlueSecurityConfig, keys("EncryptionConfiguration", off[0]), "does not encrypt "+strings.Join(off, ", "))
		}
	case "AWS::WAFv2::WebACL":
		if why := log4jUnblocked(r.Blocks("Rules")); why != "" {
			report(ruleLog4j, keys("Rules"), why)
		}
	case "AWS::AppSync::GraphQLApi":
		if !isSet(r.Get("LogConfig", "CloudWatchLogsRoleArn")) {
			report(ruleAppSyncLogging, keys("LogConfig", "CloudWatchLogsRoleArn"), "logs nothing to CloudWatch (no LogConfig.CloudWatchLogsRoleArn)")
		} else if l := strings.ToUpper(r.String("LogConfig", "FieldLogLevel")); l == "" || l == "NONE" {
			report(ruleAppSyncLogging, keys("LogConfig", "FieldLogLevel"), fmt.Sprintf("logs no resolver fields (FieldLogLevel %s)", orUnset(l)))
		}
	case "AWS::DynamoDB::Table":
		if on, _ := r.Bool("SSESpecification", "SSEEnabled"); (!on && !unknown(r.Get("SSESpecification", "SSEEnabled"))) || !customerKey(r.Get("SSESpecification", "KMSMasterKeyId")) {
			report(ruleAWSManagedKey, keys("SSESpecification", "KMSMasterKeyId"), "is encrypted with an AWS-owned or AWS-managed key (no SSESpecification with SSEEnabled and a KMSMasterKeyId of yours)")
		}
	case "AWS::DynamoDB::GlobalTable":
		for i, rep := range r.Blocks("Replicas") {
			if v, _ := cloud.Lookup(rep, "PointInTimeRecoverySpecification", "PointInTimeRecoveryEnabled").(bool); !v {
				report(ruleNoPITR, keys("Replicas", i, "PointInTimeRecoverySpecification", "PointInTimeRecoveryEnabled"), fmt.Sprintf("replica %v has no point-in-time recovery", orUnset(fmt.Sprint(rep["Region"]))))
			}
		}
	case "AWS::KMS::Key":
		// Only symmetric encryption keys rotate automatically; asymmetric and HMAC keys cannot.
		if spec := r.String("KeySpec"); (spec == "" || spec == "SYMMETRIC_DEFAULT") && !isTrue(r.Get("EnableKeyRotation")) && !unknown(r.Get("EnableKeyRotation")) {
			report(ruleKeyRotation, keys("EnableKeyRotation"), "is never rotated (EnableKeyRotation is not true)")
		}
	case "AWS::SageMaker::NotebookInstance":
		at := keys("InstanceMetadataServiceConfiguration", "MinimumInstanceMetadataServiceVersion")
		if v := r.String(at...); v != "2" && !unknown(r.Get(at...)) {
			f := ruleIMDSv1.finding(r, r.LineOf(at...), fmt.Sprintf("%s accepts IMDSv1 (MinimumInstanceMetadataServiceVersion %s)", r.Address, orUnset(v)))
			f.CIS = ""
			f.Remediation = "Set InstanceMetadataServiceConfiguration.MinimumInstanceMetadataServiceVersion: \"2\" so that SSRF cannot read the notebook's credentials"
			out = append(out, f)
		}
	case "AWS::ElastiCache::ReplicationGroup":
		if r.Get("AuthToken") == nil && r.Get("UserGroupIds") == nil {
			report(ruleRedisAuth, keys("TransitEncryptionEnabled"), "accepts connections without authentication (no AuthToken or UserGroupIds)")
		}
	}
	return out
}

func (s setting) finding(r *cloud.Resource, v any) Finding {
	name := joinKeys(s.path)
	state := "is not set"
	if v != nil {
		state = fmt.Sprintf("is %v", v)
	}
	return s.rule.finding(r, r.LineOf(s.path...), fmt.Sprintf("%s %s (%s %s)", r.Address, s.wrong, name, state))
}

func joinKeys(p []any) string {
	parts := make([]string, len(p))
	for i, k := range p {
		parts[i] = fmt.Sprint(k)
	}
	return strings.Join(parts, ".")
}

func orUnset(s string) string {
	if s == "" || s == "<nil>" {
		return "not set"
	}
	return s
}

// unknown reports whether v is decided only at deployment: an intrinsic function the
// inventory could not resolve (a Ref to a parameter without default, Fn::If, Fn::ImportValue).
func unknown(v any) bool {
	if m, ok := v.(map[string]any); ok && len(m) == 1 {
		for k := range m {
			return k == "Ref" || strings.HasPrefix(k, "Fn::")
		}
	}
	return cloud.Unresolved(v)
}

func isSet(v any) bool {
	s, isString := v.(string)
	return v != nil && (!isString || s != "")
}

func isTrue(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case string:
		return strings.EqualFold(x, "true")
	}
	return false
}

func isTrueOrAbsent(v any) bool { return v == nil || isTrue(v) }

// not passes every value but bad, and an absent one.
func not(bad string) func(any) bool {
	return func(v any) bool { return !strings.EqualFold(fmt.Sprint(v), bad) }
}

// oneOf passes the values listed, compared as text (a number or its string).
func oneOf(good ...string) func(any) bool {
	return func(v any) bool {
		s := fmt.Sprint(v)
		if n, ok := v.(float64); ok {
			s = fmt.Sprint(int64(n))
		}
		return v != nil && contains(good, s)
	}
}

// atLeast passes numbers of floor or more; an absent value is def.
func atLeast(floor, def float64) func(any) bool {
	return func(v any) bool {
		if v == nil {
			return def >= floor
		}
		n, ok := num(v)
		return ok && n >= floor
	}
}

// auditLogs passes DocumentDB's audit_logs values that log something: enabled, all, or a
// list of event kinds (ddl, dml_read, dml_write).
func auditLogs(v any) bool {
	s, _ := v.(string)
	for _, kind := range strings.Split(s, ",") {
		if !contains([]string{"enabled", "all", "ddl", "dml_read", "dml_write"}, strings.TrimSpace(kind)) {
			return false
		}
	}
	return s != ""
}

// customerKey reports whether a key id names a key of the account's own, not an AWS-managed
// alias (aws/secretsmanager, alias/aws/dynamodb).
func customerKey(v any) bool {
	if unknown(v) {
		return true
	}
	s, _ := v.(string)
	return s != "" && !strings.Contains(s, "aws/")
}

// attributeOn reports whether a list of name/value pairs sets name to true.
func attributeOn(list any, nameKey, valueKey, name string) bool {
	l, _ := list.([]any)
	for _, e := range l {
		m, _ := e.(map[string]any)
		if m[nameKey] == name && (isTrue(m[valueKey]) || unknown(m[valueKey])) {
			return true
		}
	}
	return unknown(list)
}

// glueUnencrypted lists the outputs a Glue security configuration leaves unencrypted.
func glueUnencrypted(conf any) []string {
	var off []string
	for _, o := range []struct{ key, mode string }{
		{"CloudWatchEncryption", "CloudWatchEncryptionMode"},
		{"JobBookmarksEncryption", "JobBookmarksEncryptionMode"},
	} {
		if m, ok := cloud.Lookup(conf, o.key, o.mode).(string); !ok || strings.EqualFold(m, "DISABLED") {
			off = append(off, o.key)
		}
	}
	s3 := false
	for _, e := range objects(cloud.Lookup(conf, "S3Encryptions")) {
		if m, ok := e["S3EncryptionMode"].(string); ok && !strings.EqualFold(m, "DISABLED") {
			s3 = true
		}
	}
	if m, ok := cloud.Lookup(conf, "S3Encryptions").(map[string]any); ok {
		if mode, ok := m["S3EncryptionMode"].(string); ok && !strings.EqualFold(mode, "DISABLED") {
			s3 = true
		}
	}
	if !s3 {
		off = append(off, "S3Encryptions")
	}
	return off
}

// log4jUnblocked says why a web ACL's rules do not block Log4Shell: no rule with AWS's known
// bad inputs group, or one that counts instead of blocking (the group's override, or its
// Log4JRCE rule excluded or overridden to another action); "" when they block it.
func log4jUnblocked(rules []map[string]any) string {
	for _, rule := range rules {
		g, _ := cloud.Lookup(rule, "Statement", "ManagedRuleGroupStatement").(map[string]any)
		if g["Name"] != "AWSManagedRulesKnownBadInputsRuleSet" {
			continue
		}
		for _, ex := range objects(g["ExcludedRules"]) {
			if ex["Name"] == "Log4JRCE" {
				return "excludes the Log4JRCE rule from AWSManagedRulesKnownBadInputsRuleSet: it only counts Log4Shell requests"
			}
		}
		for _, o := range objects(g["RuleActionOverrides"]) {
			if act, _ := o["ActionToUse"].(map[string]any); o["Name"] == "Log4JRCE" && act["Block"] == nil {
				return "overrides the Log4JRCE rule of AWSManagedRulesKnownBadInputsRuleSet to an action other than Block"
			}
		}
		if o, _ := rule["OverrideAction"].(map[string]any); o != nil && o["None"] == nil {
			return "overrides the action of AWSManagedRulesKnownBadInputsRuleSet: its Log4Shell rule only counts"
		}
		return ""
	}
	return "has no rule with the managed group AWSManagedRulesKnownBadInputsRuleSet, whose Log4JRCE rule blocks Log4Shell (CVE-2021-44228)"
}
