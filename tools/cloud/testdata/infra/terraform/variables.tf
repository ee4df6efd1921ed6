variable "region" {
  type    = string
  default = "eu-west-1"
}

variable "web_type" {
  type    = string
  default = "t3.small"
}
