provider "aws" {
  region = var.region
}

locals {
  name     = "shop"
  web_type = var.web_type
}

resource "aws_instance" "web" {
  count         = 2
  ami           = "ami-0123456789abcdef0"
  instance_type = local.web_type
  tags = {
    Name = "${local.name}-web"
  }
}

resource "aws_ebs_volume" "data" {
  availability_zone = "us-east-1a"
  size              = 100
}

resource "aws_ebs_volume" "logs" {
  availability_zone = "us-east-1a"
  size              = 50
  type              = "gp3"
  encrypted         = true
}

resource "aws_volume_attachment" "logs" {
  device_name = "/dev/sdf"
  volume_id   = aws_ebs_volume.logs.id
  instance_id = aws_instance.web[0].id
}

resource "aws_db_instance" "main" {
  engine            = "postgres"
  instance_class    = "db.m5.large"
  allocated_storage = 20
  storage_type      = "gp3"
  multi_az          = true
  storage_encrypted = true
}

resource "aws_s3_bucket" "assets" {
  bucket = "${local.name}-assets"
}

resource "aws_s3_bucket" "logs" {
  bucket = "${local.name}-logs"
}

resource "aws_s3_bucket_lifecycle_configuration" "logs" {
  bucket = aws_s3_bucket.logs.id
  rule {
    id     = "expire"
    status = "Enabled"
    expiration {
      days = 90
    }
  }
}

resource "aws_eip" "idle" {
  domain = "vpc"
}

resource "aws_lambda_function" "thumbs" {
  function_name = "thumbs"
  role          = "arn:aws:iam::123456789012:role/thumbs"
  runtime       = "python3.12"
  handler       = "main.handler"
  filename      = "thumbs.zip"
}
