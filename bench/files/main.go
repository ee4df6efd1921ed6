// Command files measures file upload and download throughput against the platform (GraphQL
// multipart request to createDoc, then GET of the File's url) or PocketBase (multipart
// POST of a record with a file field, then GET /api/files/...): n files of size bytes, c at
// a time, and prints one line per direction: files/s, MB/s, p50 and p99.
//
// usage: go run ./bench/files -target platform|pocketbase -url BASE [-host HOST] [-token T] [-n 200] [-c 4] [-size 1048576]
package main

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"mime/multipart"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"
)

func main() {
	target := flag.String("target", "platform", "platform or pocketbase")
	base := flag.String("url", "", "the platform's GraphQL URL, or PocketBase's base URL")
	host := flag.String("host", "", "Host header (the platform's <project>.<domain>)")
	token := flag.String("token", "", "bearer token")
	n := flag.Int("n", 200, "files")
	c := flag.Int("c", 4, "requests at a time")
	size := flag.Int("size", 1<<20, "bytes per file")
	flag.Parse()
	payload := make([]byte, *size)
	_, _ = rand.Read(payload)
	up := upload(*target, *base, *host, *token, payload)
	urls := make([]string, *n)
	took := run(*n, *c, func(i int) {
		urls[i] = up()
	})
	report(*target, "upload", took, *n, *size)
	took = run(*n, *c, func(i int) {
		req, _ := http.NewRequest(http.MethodGet, urls[i], nil)
		req.Host = *host
		if *target == "platform" {
			req.Header.Set("Authorization", "Bearer "+*token)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			log.Fatal(err)
		}
		got, _ := io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || got != int64(*size) {
			log.Fatalf("GET %s: %d, %d bytes", urls[i], res.StatusCode, got)
		}
	})
	report(*target, "download", took, *n, *size)
}

// upload returns the function that uploads payload once and answers its download URL.
func upload(target, base, host, token string, payload []byte) func() string {
	return func() string {
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		url := base + "/api/collections/files/records"
		if target == "platform" {
			url = base
			_ = mw.WriteField("operations", `{"query":"mutation($f: Upload) { createDoc(data: {file: $f}) { file { url } } }","variables":{"f":null}}`)
			_ = mw.WriteField("map", `{"0":["variables.f"]}`)
			w, _ := mw.CreateFormFile("0", "bench.bin")
			_, _ = w.Write(payload)
		} else {
			w, _ := mw.CreateFormFile("file", "bench.bin")
			_, _ = w.Write(payload)
		}
		_ = mw.Close()
		req, _ := http.NewRequest(http.MethodPost, url, &body)
		req.Host = host
		req.Header.Set("Content-Type", mw.FormDataContentType())
		if target == "platform" {
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Apollo-Require-Preflight", "true")
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			log.Fatal(err)
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		if target == "platform" {
			var out struct {
				Data struct {
					CreateDoc struct{ File struct{ URL string } }
				}
			}
			if json.Unmarshal(raw, &out) != nil || out.Data.CreateDoc.File.URL == "" {
				log.Fatalf("upload: %d %s", res.StatusCode, raw)
			}
			return out.Data.CreateDoc.File.URL
		}
		var rec struct{ ID, File string }
		if json.Unmarshal(raw, &rec) != nil || rec.File == "" {
			log.Fatalf("upload: %d %s", res.StatusCode, raw)
		}
		return base + "/api/files/files/" + rec.ID + "/" + rec.File
	}
}

// run calls do(i) for i in [0, n), c at a time, and answers how long each took.
func run(n, c int, do func(int)) []time.Duration {
	took := make([]time.Duration, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range c {
		wg.Go(func() {
			for i := range next {
				t0 := time.Now()
				do(i)
				took[i] = time.Since(t0)
			}
		})
	}
	start := time.Now()
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	took = append(took, time.Since(start)) // the last entry is the wall time
	return took
}

func report(target, what string, took []time.Duration, n, size int) {
	wall := took[len(took)-1]
	lat := slices.Clone(took[:len(took)-1])
	slices.Sort(lat)
	p := func(q float64) time.Duration { return lat[min(len(lat)-1, int(q*float64(len(lat))))] }
	fmt.Fprintf(os.Stdout, "%-10s %-8s %7.1f files/s %7.1f MB/s  p50 %6.1f ms  p99 %6.1f ms\n", target, what,
		float64(n)/wall.Seconds(), float64(n*size)/wall.Seconds()/(1<<20), ms(p(0.5)), ms(p(0.99)))
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
