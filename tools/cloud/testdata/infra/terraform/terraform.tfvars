region   = "us-east-1"
web_type = "t2.medium"
