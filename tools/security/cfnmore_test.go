package security_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/platform-dev/platform/internal/testenv"
)

// TestRulesForWhatTrivyDoesNotRead: the rules for the Checkov checks whose Trivy counterpart
// never sees the resource report the unsafe forms Checkov's tests do not show, and stay
// silent on the safe ones and on values decided at deployment.
func TestRulesForWhatTrivyDoesNotRead(t *testing.T) {
	dir := testenv.TempTree(t, map[string]string{"stack.yaml": `AWSTemplateFormatVersion: "2010-09-09"
Parameters:
  Public: {Type: String}
  Script: {Type: String}
  Behaviors: {Type: CommaDelimitedList}
Resources:
  Group:
    Type: AWS::EC2::SecurityGroup
    Properties:
      GroupDescription: web
      SecurityGroupIngress:
        - {Description: https, IpProtocol: tcp, FromPort: 443, ToPort: 443, CidrIp: 10.0.0.0/8}
        - {Description: "", IpProtocol: tcp, FromPort: 80, ToPort: 80, CidrIp: 10.0.0.0/8}
      SecurityGroupEgress:
        - Fn::If: [Open, {IpProtocol: "-1", CidrIp: 0.0.0.0/0}, !Ref AWS::NoValue]
  Described:
    Type: AWS::EC2::SecurityGroupEgress
    Properties: {GroupId: !Ref Group, Description: dns, IpProtocol: udp, FromPort: 53, ToPort: 53, CidrIp: 10.0.0.2/32}
  Joined:
    Type: AWS::EC2::Instance
    Properties:
      ImageId: ami-0abcdef1234567890
      UserData:
        Fn::Base64: !Join ["", ["#!/bin/bash\n", "export GITHUB_TOKEN=` + githubPAT + `\n", "export AWS_ACCESS_KEY_ID=` + awsKey + `\n", "export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"]]
  Encoded:
    Type: AWS::EC2::Instance
    Properties:
      ImageId: ami-0abcdef1234567890
      UserData: ` + base64.StdEncoding.EncodeToString([]byte("#!/bin/bash\nexport GITHUB_TOKEN="+githubPAT+"\nexport AWS_ACCESS_KEY_ID="+awsKey+"\n")) + `
  Harmless:
    Type: AWS::EC2::Instance
    Properties:
      ImageId: ami-0abcdef1234567890
      UserData: IyEvYmluL2Jhc2gKZWNobyBoZWxsbwo=
  FromParameter:
    Type: AWS::EC2::LaunchTemplate
    Properties:
      LaunchTemplateData:
        UserData: !Ref Script
  Redirected:
    Type: AWS::ElasticLoadBalancingV2::Listener
    Properties:
      LoadBalancerArn: arn:aws:elasticloadbalancing:us-east-1:123456789012:loadbalancer/app/web/1
      Port: 80
      Protocol: HTTP
      DefaultActions:
        - {Type: redirect, RedirectConfig: {Protocol: HTTPS, Port: "443", StatusCode: HTTP_301}}
  Plain:
    Type: AWS::ElasticLoadBalancingV2::Listener
    Properties:
      LoadBalancerArn: arn:aws:elasticloadbalancing:us-east-1:123456789012:loadbalancer/app/web/1
      Port: 8080
      Protocol: HTTP
      DefaultActions:
        - {Type: forward, TargetGroupArn: arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/web/2}
  Cdn:
    Type: AWS::CloudFront::Distribution
    Properties:
      DistributionConfig:
        Enabled: true
        DefaultCacheBehavior: {TargetOriginId: web, ViewerProtocolPolicy: allow-all}
        CacheBehaviors: !Ref Behaviors
  FromAccount:
    Type: AWS::Lambda::Permission
    Properties: {Action: lambda:InvokeFunction, FunctionName: fn, Principal: "123456789012"}
  FromBucket:
    Type: AWS::Lambda::Permission
    Properties: {Action: lambda:InvokeFunction, FunctionName: fn, Principal: s3.amazonaws.com, SourceAccount: "123456789012"}
  FromAnyTopic:
    Type: AWS::Lambda::Permission
    Properties: {Action: lambda:InvokeFunction, FunctionName: fn, Principal: sns.amazonaws.com}
  UserManaged:
    Type: AWS::IAM::ManagedPolicy
    Properties:
      PolicyDocument: {Version: "2012-10-17", Statement: [{Effect: Allow, Action: s3:GetObject, Resource: "arn:aws:s3:::docs/*"}]}
      Users: [alice]
  NoUsers:
    Type: AWS::IAM::Policy
    Properties:
      PolicyName: read
      PolicyDocument: {Version: "2012-10-17", Statement: [{Effect: Allow, Action: s3:GetObject, Resource: "arn:aws:s3:::docs/*"}]}
      Users: []
      Groups: [readers]
  Warehouse:
    Type: AWS::Redshift::Cluster
    Properties: {NodeType: ra3.xlplus, ClusterType: single-node, DBName: dw, MasterUsername: admin, ManageMasterPassword: true}
  WarehouseByParameter:
    Type: AWS::Redshift::Cluster
    Properties: {NodeType: ra3.xlplus, ClusterType: single-node, DBName: dw, MasterUsername: admin, ManageMasterPassword: true, PubliclyAccessible: !Ref Public}
  IAMAuth:
    Type: AWS::RDS::DBCluster
    Properties: {Engine: aurora-postgresql, ManageMasterUserPassword: true, StorageEncrypted: true, EnableIAMDatabaseAuthentication: true}
  PasswordOnly:
    Type: AWS::RDS::DBCluster
    Properties: {Engine: aurora-mysql, ManageMasterUserPassword: true, StorageEncrypted: true, EnableIAMDatabaseAuthentication: "false"}
`, "main.tf": `resource "aws_rds_cluster" "iam" {
  engine                              = "aurora-postgresql"
  storage_encrypted                   = true
  iam_database_authentication_enabled = true
}
resource "aws_rds_cluster" "password" {
  engine            = "aurora-postgresql"
  storage_encrypted = true
}
`})
	rep := assess(t, assessorOn(t, dir), `{"scope":"infrastructure"}`)
	rules := []string{"iac/sg-rule-without-description", "iac/secret-in-user-data", "iac/listener-plain-http", "iac/cloudfront-allows-http",
		"iac/lambda-permission-without-source", "iac/policy-attached-to-user", "iac/public-database", "iac/rds-cluster-without-iam-auth"}
	wantResourceFindings(t, rep, func(rule string) bool { return contains(rules, rule) }, []string{
		"iac/sg-rule-without-description stack.yaml:13 Group",
		"iac/secret-in-user-data stack.yaml:23 Joined",
		"iac/secret-in-user-data stack.yaml:29 Encoded",
		"iac/listener-plain-http stack.yaml:53 Plain",
		"iac/cloudfront-allows-http stack.yaml:61 Cdn",
		"iac/lambda-permission-without-source stack.yaml:71 FromAnyTopic",
		"iac/policy-attached-to-user stack.yaml:76 UserManaged",
		"iac/public-database stack.yaml:84 Warehouse",
		"iac/rds-cluster-without-iam-auth stack.yaml:95 PasswordOnly",
		"iac/rds-cluster-without-iam-auth main.tf:6 aws_rds_cluster.password",
	})
	leaked := false
	for _, f := range rep.Findings {
		// Written as text, the secrets gitleaks finds are the secret scan's, at their line; the
		// rule names the example key gitleaks passes. Encoded, it names each secret once, masked.
		switch {
		case f.RuleID == "iac/secret-in-user-data" && f.Resource == "Joined":
			if strings.Contains(f.Message, "ghp_") || strings.Contains(f.Message, "AKIA") || !strings.Contains(f.Message, "wJal") {
				t.Errorf("user data secrets: %s", f.Message)
			}
		case f.RuleID == "iac/secret-in-user-data":
			if strings.Count(f.Message, "AKIA") != 1 || !strings.Contains(f.Message, "ghp_") || strings.Contains(f.Message, awsKey) {
				t.Errorf("user data secrets: %s", f.Message)
			}
		case strings.HasPrefix(f.RuleID, "secret/") && f.Location == "stack.yaml:24":
			leaked = true
		}
		if f.RuleID == "iac/public-database" && f.Severity != "medium" {
			t.Errorf("a Redshift cluster relying on the default is %s, want medium", f.Severity)
		}
	}
	if !leaked {
		t.Error("the secrets written in user data are not reported where they are written")
	}
}
