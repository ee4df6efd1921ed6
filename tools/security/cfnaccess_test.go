package security_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/platform-dev/platform/internal/testenv"
)

// The access rules on Terraform, and the cases of CloudFormation that Checkov's test
// templates leave out: a Deny that takes credentials back, a Condition, NotAction, a
// SecurityGroupIngress resource, a role trusting an account under a Condition.
func TestAccessRules(t *testing.T) {
	dir := testenv.TempTree(t, map[string]string{"main.tf": `resource "aws_lambda_function" "open" {
  function_name = "open"
  role          = "arn:aws:iam::123456789012:role/lambda"
  runtime       = "python3.8"
  environment {
    variables = {
      AWS_ACCESS_KEY_ID = "AKIAIOSFODNN7EXAMPLE"
      STAGE             = "prod"
    }
  }
}

resource "aws_lambda_function" "fenced" {
  function_name                  = "fenced"
  role                           = "arn:aws:iam::123456789012:role/lambda"
  runtime                        = "python3.12"
  kms_key_arn                    = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
  reserved_concurrent_executions = 5
  dead_letter_config {
    target_arn = "arn:aws:sqs:us-east-1:123456789012:dlq"
  }
  vpc_config {
    subnet_ids         = ["subnet-1"]
    security_group_ids = ["sg-1"]
  }
  environment {
    variables = {
      STAGE = "prod"
    }
  }
}

resource "aws_lambda_function_url" "open" {
  function_name      = "open"
  authorization_type = "NONE"
}

resource "aws_ssm_parameter" "key" {
  name  = "/app/api_key"
  type  = "String"
  value = "akdfaksdfjkasdfjskafjdkfajsdfk345"
}

resource "aws_ssm_parameter" "sample" {
  name  = "/app/api_key_example"
  type  = "String"
  value = "akdfaksdfjkasdfjskafjdkfajsdfk345"
}

resource "aws_eks_node_group" "ssh" {
  cluster_name = "c"
  remote_access {
    ec2_ssh_key = "ops"
  }
}

resource "aws_vpc_endpoint_service" "auto" {
  acceptance_required = false
}

resource "aws_transfer_server" "public" {
}

resource "aws_msk_cluster" "public" {
  broker_node_group_info {
    connectivity_info {
      public_access {
        type = "SERVICE_PROVIDED_EIPS"
      }
    }
  }
}

resource "aws_cognito_identity_pool" "guests" {
  identity_pool_name               = "guests"
  allow_unauthenticated_identities = true
}

resource "aws_iam_policy" "deploy" {
  policy = <<EOF
{"Statement": [{"Effect": "Allow", "Action": ["s3:PutObject", "iam:PassRole"], "Resource": "*"}]}
EOF
}
`, "stack.yaml": `AWSTemplateFormatVersion: "2010-09-09"
Resources:
  Tokens:
    Type: AWS::IAM::Policy
    Properties:
      PolicyName: tokens
      PolicyDocument:
        Statement:
          - Effect: Allow
            Action: ["sts:GetSessionToken", "sts:AssumeRole"]
            Resource: "arn:aws:iam::123456789012:role/app"
          - Effect: Allow
            Action: "sts:Get*"
            Resource: "*"
          - Effect: Deny
            Action: "sts:GetSessionToken"
            Resource: "*"
  Conditional:
    Type: AWS::IAM::ManagedPolicy
    Properties:
      PolicyDocument:
        Statement:
          - Effect: Allow
            Action: "iam:CreateAccessKey"
            Resource: "*"
            Condition: {Bool: {"aws:MultiFactorAuthPresent": "true"}}
          - Effect: Allow
            NotAction: "iam:*"
            Resource: "*"
          - Effect: Allow
            Action: "*:*"
            Resource: "*"
  Web:
    Type: AWS::EC2::SecurityGroupIngress
    Properties:
      GroupId: sg-1
      IpProtocol: tcp
      FromPort: 0
      ToPort: 65535
      CidrIpv6: "0::0/0"
      Description: web
  CrossAccount:
    Type: AWS::IAM::Role
    Properties:
      AssumeRolePolicyDocument:
        Statement:
          - Effect: Allow
            Principal: {AWS: "123456789012"}
            Action: sts:AssumeRole
            Condition: {StringEquals: {"sts:ExternalId": "x"}}
          - Effect: Allow
            Principal: {AWS: "arn:aws:iam::210987654321:root"}
            Action: sts:AssumeRole
`})
	rep := assess(t, assessorOn(t, dir), `{"scope":"infrastructure"}`)
	wantResourceFindings(t, rep, func(rule string) bool {
		return strings.HasPrefix(rule, "iac/") && rule != "iac/iam-wildcard"
	}, []string{
		"iac/cognito-unauthenticated-identities main.tf:76 aws_cognito_identity_pool.guests",
		"iac/eks-nodegroup-open-ssh main.tf:52 aws_eks_node_group.ssh",
		"iac/iam-permissions-management main.tf:80 aws_iam_policy.deploy",
		"iac/iam-write-unconstrained main.tf:80 aws_iam_policy.deploy",
		"iac/lambda-deprecated-runtime main.tf:4 aws_lambda_function.open",
		"iac/lambda-env-without-cmk main.tf:5 aws_lambda_function.open",
		"iac/lambda-outside-vpc main.tf:1 aws_lambda_function.open",
		"iac/lambda-url-without-auth main.tf:35 aws_lambda_function_url.open",
		"iac/lambda-without-concurrency-limit main.tf:1 aws_lambda_function.open",
		"iac/lambda-without-dlq main.tf:1 aws_lambda_function.open",
		"iac/msk-public-brokers main.tf:68 aws_msk_cluster.public",
		"iac/secret-in-template main.tf:41 aws_ssm_parameter.key",
		"iac/secret-in-template main.tf:6 aws_lambda_function.open",
		"iac/transfer-server-public main.tf:61 aws_transfer_server.public",
		"iac/vpc-endpoint-service-auto-accept main.tf:58 aws_vpc_endpoint_service.auto",
		// The Deny takes sts:GetSessionToken back and sts:AssumeRole is granted on one role:
		// the second statement's sts:GetFederationToken is what exposes credentials.
		"iac/iam-credentials-exposure stack.yaml:13 Tokens",
		// The conditional statement passes; NotAction "iam:*" grants all the rest.
		"iac/iam-credentials-exposure stack.yaml:28 Conditional",
		"iac/iam-permissions-management stack.yaml:28 Conditional",
		"iac/iam-write-unconstrained stack.yaml:28 Conditional",
		// Ports 0-65535 from ::/0 written in full.
		"iac/ingress-open-admin-port stack.yaml:33 Web",
		"iac/ingress-open-http stack.yaml:33 Web",
		// The account trusted under a Condition passes.
		"iac/role-trusts-account stack.yaml:52 CrossAccount",
	})
}

// A key in a Lambda environment that gitleaks recognises too is one finding, gitleaks' (the
// more specific rule), and it still names the function the template declares.
func TestSecretInTemplateKeepsItsResource(t *testing.T) {
	dir := testenv.TempTree(t, map[string]string{"stack.yaml": `Resources:
  Fn:
    Type: AWS::Lambda::Function
    Properties:
      Environment:
        Variables:
          AWS_ACCESS_KEY_ID: ` + awsKey + `
`})
	rep := assess(t, assessorOn(t, dir), `{"scope":"both"}`)
	var got []string
	for _, f := range rep.Findings {
		if f.CWE == "CWE-798" {
			got = append(got, fmt.Sprintf("%s %s %s %v", f.RuleID, f.Location, f.Resource, f.AlsoMatched))
		}
	}
	want := []string{"secret/aws-access-token stack.yaml:7 Fn [iac/secret-in-template]"}
	if !slices.Equal(got, want) {
		t.Errorf("credential findings %q, want %q", got, want)
	}
}

// SAM's Globals apply to every function of the template, as SAM and Checkov apply them: a
// function that sets nothing itself is judged by what Globals set, and its own value wins.
func TestSAMGlobalsApply(t *testing.T) {
	dir := testenv.TempTree(t, map[string]string{"template.yaml": `Transform: AWS::Serverless-2016-10-31
Globals:
  Function:
    Runtime: python3.8
    ReservedConcurrentExecutions: 5
    KmsKeyArn: arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab
    DeadLetterQueue:
      Type: SQS
      TargetArn: arn:aws:sqs:us-east-1:123456789012:dlq
    VpcConfig:
      SubnetIds: [subnet-1]
      SecurityGroupIds: [sg-1]
Resources:
  Inherits:
    Type: AWS::Serverless::Function
    Properties:
      Handler: app.handler
      Environment:
        Variables:
          STAGE: prod
  Overrides:
    Type: AWS::Serverless::Function
    Properties:
      Handler: app.handler
      Runtime: python3.12
`})
	rep := assess(t, assessorOn(t, dir), `{"scope":"infrastructure"}`)
	wantResourceFindings(t, rep, func(rule string) bool { return strings.HasPrefix(rule, "iac/lambda-") }, []string{
		"iac/lambda-deprecated-runtime template.yaml:4 Inherits",
	})
}
