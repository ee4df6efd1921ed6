package security

import (
	"fmt"
	"strings"

	"github.com/platform-dev/platform/tools/cloud"
)

// Rules for data services, logging and encryption settings that Checkov checks and Trivy has
// no check for, in CloudFormation and in Terraform (or that Trivy's CloudFormation adapter
// reads only in part: KMS keys, DynamoDB global tables, a missing SSESpecification,
// AWS-managed key aliases, Redis AUTH). Each follows the semantics of the Checkov check it
// stands for, defaults included; a value that depends on something the file does not resolve
// (a parameter without default, Fn::If, a Terraform variable) is not judged.
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
// (nil when absent) is safe; wrong says what the resource then does. A path of one param
// step names an entry of the resource's parameter (or attribute) list.
type setting struct {
	rule  infraRule
	path  []any
	pass  func(v any) bool
	wrong string
}

// param is the name of a parameter of a parameter group, or of a load balancer attribute.
type param string

// dataSettings are the settings of this file that are one property, per resource type, in
// CloudFormation and, where Trivy has no check either, in Terraform.
var dataSettings = func() map[string][]setting {
	const (
		keepsNoAccessLog = "keeps no access logs"
		oldBackups       = "keeps automated backups for less than 7 days"
		noMonitoring     = "has no enhanced monitoring"
		noGlueConfig     = "names no security configuration"
		awsOwnedKey      = "is encrypted with an AWS-owned key"
		notebookKey      = "encrypts its storage volume with an AWS-managed key"
		domainKey        = "encrypts its EFS volume with an AWS-managed key"
		noIsolation      = "lets its containers reach the network"
		allowAll         = "lets any principal allowed on the ledger run every command on every table"
		deletable        = "can be deleted"
		noSSL            = "lets clients connect without SSL"
	)
	monitoring := oneOf("1", "5", "10", "15", "30", "60")
	return map[string][]setting{
		"AWS::ElasticLoadBalancing::LoadBalancer": {{ruleLBAccessLog, keys("AccessLoggingPolicy", "Enabled"), isTrue, keepsNoAccessLog}},
		"AWS::Logs::LogGroup":                     {{ruleLogRetention, keys("RetentionInDays"), isSet, "keeps its logs forever"}},
		// 0, Terraform's default, is "never expire".
		"aws_cloudwatch_log_group": {{ruleLogRetention, keys("retention_in_days"), atLeast(1, 0), "keeps its logs forever"}},
		"AWS::DocDB::DBClusterParameterGroup": {
			{ruleDocDBTLS, keys(param("tls")), not("disabled"), "lets clients connect without TLS"},
			{ruleDocDBAuditLog, keys(param("audit_logs")), auditLogs, "writes no audit log"},
		},
		"aws_docdb_cluster_parameter_group": {
			{ruleDocDBTLS, keys(param("tls")), not("disabled"), "lets clients connect without TLS"},
			{ruleDocDBAuditLog, keys(param("audit_logs")), auditLogs, "writes no audit log"},
		},
		"AWS::Redshift::ClusterParameterGroup": {{ruleRedshiftSSL, keys(param("require_ssl")), isTrue, noSSL}},
		"aws_redshift_parameter_group":         {{ruleRedshiftSSL, keys(param("require_ssl")), isTrue, noSSL}},
		"AWS::DocDB::DBCluster":                {{ruleBackupRetention, keys("BackupRetentionPeriod"), atLeast(7, 1), oldBackups}},
		"AWS::Neptune::DBCluster":              {{ruleBackupRetention, keys("BackupRetentionPeriod"), atLeast(7, 1), oldBackups}},
		"aws_docdb_cluster":                    {{ruleBackupRetention, keys("backup_retention_period"), atLeast(7, 1), oldBackups}},
		"aws_neptune_cluster":                  {{ruleBackupRetention, keys("backup_retention_period"), atLeast(7, 1), oldBackups}},
		"AWS::RDS::DBInstance":                 {{ruleEnhancedMonitoring, keys("MonitoringInterval"), monitoring, noMonitoring}},
		"aws_db_instance":                      {{ruleEnhancedMonitoring, keys("monitoring_interval"), monitoring, noMonitoring}},
		"aws_rds_cluster_instance":             {{ruleEnhancedMonitoring, keys("monitoring_interval"), monitoring, noMonitoring}},
		"AWS::Glue::Crawler":                   {{ruleGlueNoSecurityConfig, keys("CrawlerSecurityConfiguration"), isSet, noGlueConfig}},
		"AWS::Glue::DevEndpoint":               {{ruleGlueNoSecurityConfig, keys("SecurityConfiguration"), isSet, noGlueConfig}},
		"AWS::Glue::Job":                       {{ruleGlueNoSecurityConfig, keys("SecurityConfiguration"), isSet, noGlueConfig}},
		"aws_glue_crawler":                     {{ruleGlueNoSecurityConfig, keys("security_configuration"), isSet, noGlueConfig}},
		"aws_glue_dev_endpoint":                {{ruleGlueNoSecurityConfig, keys("security_configuration"), isSet, noGlueConfig}},
		"aws_glue_job":                         {{ruleGlueNoSecurityConfig, keys("security_configuration"), isSet, noGlueConfig}},
		"AWS::Timestream::Database":            {{ruleAWSManagedKey, keys("KmsKeyId"), isSet, awsOwnedKey}},
		"aws_timestreamwrite_database":         {{ruleAWSManagedKey, keys("kms_key_id"), isSet, awsOwnedKey}},
		"AWS::Backup::BackupVault":             {{ruleAWSManagedKey, keys("EncryptionKeyArn"), isSet, awsOwnedKey}},
		"aws_backup_vault":                     {{ruleAWSManagedKey, keys("kms_key_arn"), isSet, awsOwnedKey}},
		"AWS::Bedrock::Agent":                  {{ruleAWSManagedKey, keys("CustomerEncryptionKeyArn"), isSet, awsOwnedKey}},
		"aws_bedrockagent_agent":               {{ruleAWSManagedKey, keys("customer_encryption_key_arn"), isSet, awsOwnedKey}},
		"AWS::SageMaker::Domain":               {{ruleAWSManagedKey, keys("KmsKeyId"), isSet, domainKey}},
		"aws_sagemaker_domain":                 {{ruleAWSManagedKey, keys("kms_key_id"), isSet, domainKey}},
		"AWS::SageMaker::NotebookInstance":     {{ruleAWSManagedKey, keys("KmsKeyId"), isSet, notebookKey}},
		"aws_sagemaker_notebook_instance":      {{ruleAWSManagedKey, keys("kms_key_id"), isSet, notebookKey}},
		"AWS::SageMaker::DataQualityJobDefinition": {
			{ruleAWSManagedKey, keys("DataQualityJobOutputConfig", "KmsKeyId"), isSet, "encrypts its model artifacts with an AWS-managed key"},
			{ruleAWSManagedKey, keys("JobResources", "ClusterConfig", "VolumeKmsKeyId"), isSet, "encrypts its storage volumes with an AWS-managed key"},
			{ruleSageMakerTraffic, keys("NetworkConfig", "EnableInterContainerTrafficEncryption"), isTrue, "sends traffic between its instances unencrypted"},
		},
		"AWS::SageMaker::Model": {{ruleSageMakerIsolation, keys("EnableNetworkIsolation"), isTrue, noIsolation}},
		"aws_sagemaker_model":   {{ruleSageMakerIsolation, keys("enable_network_isolation"), isTrue, noIsolation}},
		"AWS::QLDB::Ledger": {
			{ruleQLDBPermissions, keys("PermissionsMode"), oneOf("STANDARD"), allowAll},
			{ruleDeletionProtection, keys("DeletionProtection"), isTrueOrAbsent, deletable},
		},
		"aws_qldb_ledger": {
			{ruleQLDBPermissions, keys("permissions_mode"), oneOf("STANDARD"), allowAll},
			{ruleDeletionProtection, keys("deletion_protection"), isTrueOrAbsent, deletable},
		},
		"AWS::SecretsManager::Secret": {{ruleAWSManagedKey, keys("KmsKeyId"), customerKey, "is encrypted with the AWS-managed key"}},
	}
}()

// keys is a path of property names and list indexes.
func keys(p ...any) []any { return p }

// value returns the setting's value on r and the path of the property that holds it.
func (s setting) value(r *cloud.Resource) (any, []any) {
	if name, ok := s.path[0].(param); ok {
		return parameter(r, string(name))
	}
	return r.Get(s.path...), s.path
}

// parameter returns the value a parameter group (or a load balancer's attribute list) gives
// name, and its path; nil and the list's path when it is not set.
func parameter(r *cloud.Resource, name string) (any, []any) {
	if m, ok := r.Get("Parameters").(map[string]any); ok { // DocumentDB's CloudFormation map
		return m[name], keys("Parameters", name)
	}
	list, nameKey, valueKey := "parameter", "name", "value" // Terraform's parameter blocks
	switch r.Type {
	case "AWS::ElasticLoadBalancingV2::LoadBalancer":
		list, nameKey, valueKey = "LoadBalancerAttributes", "Key", "Value"
	case "AWS::Redshift::ClusterParameterGroup":
		list, nameKey, valueKey = "Parameters", "ParameterName", "ParameterValue"
	}
	for i, p := range r.Blocks(list) {
		if p[nameKey] == name {
			return p[valueKey], keys(list, i, valueKey)
		}
	}
	return nil, keys(list)
}

// dataFindings applies the rules of this file to one resource.
func dataFindings(r *cloud.Resource) []Finding {
	out := settingFindings(r, dataSettings[r.Type])
	report := func(rule infraRule, at []any, msg string) {
		out = append(out, rule.finding(r, r.LineOf(at...), r.Address+" "+msg))
	}
	// cfn picks the CloudFormation path or the Terraform one, for the checks written once.
	cfn := func(cf, tf []any) []any {
		if r.Source == cloud.SourceCloudFormation {
			return cf
		}
		return tf
	}
	switch r.Type {
	case "AWS::ElasticLoadBalancingV2::LoadBalancer", "aws_lb", "aws_alb":
		// Gateway load balancers have no access logs to turn on.
		v, at := parameter(r, "access_logs.s3.enabled")
		if r.Source != cloud.SourceCloudFormation {
			at = keys("access_logs", 0, "enabled")
			v = r.Get(at...)
		}
		gateway := strings.EqualFold(r.String("Type"), "gateway") || r.String("load_balancer_type") == "gateway"
		if !gateway && !isTrue(v) && !unknown(v) && !unknown(r.Get("LoadBalancerAttributes")) {
			report(ruleLBAccessLog, at, fmt.Sprintf("keeps no access logs (access logs enabled: %s)", orUnset(fmt.Sprint(v))))
		}
	case "aws_elb":
		// The block's enabled defaults to true.
		if v := r.Get("access_logs", 0, "enabled"); r.Get("access_logs") == nil || (!isTrueOrAbsent(v) && !unknown(v)) {
			report(ruleLBAccessLog, keys("access_logs", 0, "enabled"), "keeps no access logs (no access_logs block, or enabled = false)")
		}
	case "AWS::Redshift::Cluster":
		// Checkov wants a BucketName; logs sent to CloudWatch instead are audit logs all the same.
		if !isSet(r.Get("LoggingProperties", "BucketName")) && !strings.EqualFold(r.String("LoggingProperties", "LogDestinationType"), "cloudwatch") {
			report(ruleRedshiftAuditLog, keys("LoggingProperties"), "writes no audit log (no LoggingProperties)")
		}
	case "AWS::RDS::DBInstance", "aws_db_instance":
		// Aurora replicates storage across zones whatever MultiAZ says.
		at := cfn(keys("MultiAZ"), keys("multi_az"))
		engine := r.String(cfn(keys("Engine"), keys("engine"))...)
		if v, _ := r.Bool(at...); !v && !unknown(r.Get(at...)) && !strings.Contains(strings.ToLower(engine), "aurora") {
			report(ruleMultiAZ, at, fmt.Sprintf("runs in a single availability zone (%s is not true)", at[0]))
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
	case "AWS::AppSync::GraphQLApi", "aws_appsync_graphql_api":
		role := cfn(keys("LogConfig", "CloudWatchLogsRoleArn"), keys("log_config", 0, "cloudwatch_logs_role_arn"))
		level := cfn(keys("LogConfig", "FieldLogLevel"), keys("log_config", 0, "field_log_level"))
		if !isSet(r.Get(role...)) {
			report(ruleAppSyncLogging, role, fmt.Sprintf("logs nothing to CloudWatch (no %s)", joinKeys(role)))
		} else if l := strings.ToUpper(r.String(level...)); (l == "" || l == "NONE") && !unknown(r.Get(level...)) {
			report(ruleAppSyncLogging, level, fmt.Sprintf("logs no resolver fields (field log level %s)", orUnset(l)))
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
		// Only symmetric encryption keys whose material KMS made rotate automatically; asymmetric
		// and HMAC keys, and imported or external key material, cannot.
		spec, origin := r.String("KeySpec"), r.String("Origin")
		if (spec == "" || spec == "SYMMETRIC_DEFAULT") && (origin == "" || origin == "AWS_KMS") && !isTrue(r.Get("EnableKeyRotation")) && !unknown(r.Get("EnableKeyRotation")) {
			report(ruleKeyRotation, keys("EnableKeyRotation"), "is never rotated (EnableKeyRotation is not true)")
		}
	case "AWS::SageMaker::NotebookInstance", "aws_sagemaker_notebook_instance":
		at := cfn(keys("InstanceMetadataServiceConfiguration", "MinimumInstanceMetadataServiceVersion"),
			keys("instance_metadata_service_configuration", 0, "minimum_instance_metadata_service_version"))
		if v := r.String(at...); v != "2" && !unknown(r.Get(at...)) {
			f := ruleIMDSv1.finding(r, r.LineOf(at...), fmt.Sprintf("%s accepts IMDSv1 (%s %s)", r.Address, at[len(at)-1], orUnset(v)))
			f.CIS = ""
			f.Remediation = "Require IMDSv2: InstanceMetadataServiceConfiguration.MinimumInstanceMetadataServiceVersion: \"2\" (minimum_instance_metadata_service_version = \"2\"), so that SSRF cannot read the notebook's credentials"
			out = append(out, f)
		}
	case "AWS::ElastiCache::ReplicationGroup", "aws_elasticache_replication_group":
		token, groups := cfn(keys("AuthToken"), keys("auth_token")), cfn(keys("UserGroupIds"), keys("user_group_ids"))
		if r.Get(token...) == nil && r.Get(groups...) == nil {
			report(ruleRedisAuth, cfn(keys("TransitEncryptionEnabled"), keys("transit_encryption_enabled")), fmt.Sprintf("accepts connections without authentication (no %s or %s)", token[0], groups[0]))
		}
	}
	return out
}

// settingFindings reports the settings r gets wrong; a value decided at deployment passes.
func settingFindings(r *cloud.Resource, settings []setting) []Finding {
	var out []Finding
	for _, s := range settings {
		if v, at := s.value(r); !unknown(v) && !s.pass(v) {
			out = append(out, s.finding(r, v, at))
		}
	}
	return out
}

func (s setting) finding(r *cloud.Resource, v any, at []any) Finding {
	name := joinKeys(s.path)
	state := "is not set"
	if v != nil {
		state = fmt.Sprintf("is %v", v)
	}
	return s.rule.finding(r, r.LineOf(at...), fmt.Sprintf("%s %s (%s %s)", r.Address, s.wrong, name, state))
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
