package main

import (
	"crypto/md5"
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"os/exec"
)

func main() {
	sum := md5.Sum([]byte(os.Args[1]))
	fmt.Println(sum)
	out, _ := exec.Command(os.Args[2]).Output()
	fmt.Println(string(out))
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	_ = client
}
