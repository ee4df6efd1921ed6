provider "aws" {
  region = "us-east-1"
}

resource "aws_db_instance" "orders" {
  engine            = "mysql"
  instance_class    = "db.t2.micro"
  allocated_storage = 20
  storage_type      = "gp2"
  storage_encrypted = true
}

resource "aws_security_group" "bastion" {
  ingress {
    from_port   = 22
    to_port     = 22
    protocol    = "tcp"
    cidr_blocks = ["0.0.0.0/0"]
  }
}
